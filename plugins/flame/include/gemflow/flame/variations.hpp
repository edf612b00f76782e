#pragma once
// flam3's 99 variations, in flam3's index order, for the CPU (fp64) and the GPU (fp32).
//
// Each variation V maps the pre-affine image (tx, ty) of the point to a point; an xform sums
// weight·V over its variations. Formulas: Draves & Reckase, "The Fractal Flame Algorithm",
// appendix (variations 0–48: linear … cross), and flam3 3.1's documented definitions
// (variations.c) for the rest, with its conventions:
//   r² = tx² + ty²,  r = √r²,  θ = atan2(tx, ty) (the paper's arctan(x/y)),  φ = atan2(ty, tx),
//   sin-like ratio tx/r and cos-like ratio ty/r (the paper's "sin θ", "cos θ"),
//   ε = 1e-10 where the paper adds it to avoid a division by zero,
//   Ω, Λ, Ψ: uniform random numbers (random bit, [0,1), ...) drawn from the caller's generator.
// waves, popcorn, rings and fan read the xform's pre-affine coefficients (b, c, e, f of
// flame.hpp's order); 39 variations read parameters (kVarParams: 109 in all, flam3's defaults).
// pre_blur acts on (tx, ty) before the others (apply it first; eval_variation ignores it).
// The code is our own; only the formulas follow flam3.
//
// Header-only and __host__ __device__: the same source is compiled for both, R = double on the
// CPU reference, R = float on the GPU. Random numbers: `Rng` has `unsigned next()` (32 bits);
// uniform01<R>(rng) uses its top 24 bits, so that fp32 and fp64 evaluation draw the same values.
#include <math.h>
#include <array>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#if defined(__CUDACC__)
#define GF_FLAME_HD __host__ __device__
#else
#define GF_FLAME_HD
#endif

namespace gemflow::flame {

enum Variation : int {
  kVar_linear = 0,
  kVar_sinusoidal = 1,
  kVar_spherical = 2,
  kVar_swirl = 3,
  kVar_horseshoe = 4,
  kVar_polar = 5,
  kVar_handkerchief = 6,
  kVar_heart = 7,
  kVar_disc = 8,
  kVar_spiral = 9,
  kVar_hyperbolic = 10,
  kVar_diamond = 11,
  kVar_ex = 12,
  kVar_julia = 13,
  kVar_bent = 14,
  kVar_waves = 15,
  kVar_fisheye = 16,
  kVar_popcorn = 17,
  kVar_exponential = 18,
  kVar_power = 19,
  kVar_cosine = 20,
  kVar_rings = 21,
  kVar_fan = 22,
  kVar_blob = 23,
  kVar_pdj = 24,
  kVar_fan2 = 25,
  kVar_rings2 = 26,
  kVar_eyefish = 27,
  kVar_bubble = 28,
  kVar_cylinder = 29,
  kVar_perspective = 30,
  kVar_noise = 31,
  kVar_julian = 32,
  kVar_juliascope = 33,
  kVar_blur = 34,
  kVar_gaussian_blur = 35,
  kVar_radial_blur = 36,
  kVar_pie = 37,
  kVar_ngon = 38,
  kVar_curl = 39,
  kVar_rectangles = 40,
  kVar_arch = 41,
  kVar_tangent = 42,
  kVar_square = 43,
  kVar_rays = 44,
  kVar_blade = 45,
  kVar_secant2 = 46,
  kVar_twintrian = 47,
  kVar_cross = 48,
  kVar_disc2 = 49,
  kVar_super_shape = 50,
  kVar_flower = 51,
  kVar_conic = 52,
  kVar_parabola = 53,
  kVar_bent2 = 54,
  kVar_bipolar = 55,
  kVar_boarders = 56,
  kVar_butterfly = 57,
  kVar_cell = 58,
  kVar_cpow = 59,
  kVar_curve = 60,
  kVar_edisc = 61,
  kVar_elliptic = 62,
  kVar_escher = 63,
  kVar_foci = 64,
  kVar_lazysusan = 65,
  kVar_loonie = 66,
  kVar_pre_blur = 67,
  kVar_modulus = 68,
  kVar_oscilloscope = 69,
  kVar_polar2 = 70,
  kVar_popcorn2 = 71,
  kVar_scry = 72,
  kVar_separation = 73,
  kVar_split = 74,
  kVar_splits = 75,
  kVar_stripes = 76,
  kVar_wedge = 77,
  kVar_wedge_julia = 78,
  kVar_wedge_sph = 79,
  kVar_whorl = 80,
  kVar_waves2 = 81,
  kVar_exp = 82,
  kVar_log = 83,
  kVar_sin = 84,
  kVar_cos = 85,
  kVar_tan = 86,
  kVar_sec = 87,
  kVar_csc = 88,
  kVar_cot = 89,
  kVar_sinh = 90,
  kVar_cosh = 91,
  kVar_tanh = 92,
  kVar_sech = 93,
  kVar_csch = 94,
  kVar_coth = 95,
  kVar_auger = 96,
  kVar_flux = 97,
  kVar_mobius = 98,
  kNumVariations = 99
};

/// flam3's variation names, in flam3's index order (variations.c flam3_variation_names).
inline constexpr const char* kVariationNames[kNumVariations] = {
    "linear",        "sinusoidal",  "spherical",   "swirl",      "horseshoe",   "polar",      "handkerchief",
    "heart",         "disc",        "spiral",      "hyperbolic", "diamond",     "ex",         "julia",
    "bent",          "waves",       "fisheye",     "popcorn",    "exponential", "power",      "cosine",
    "rings",         "fan",         "blob",        "pdj",        "fan2",        "rings2",     "eyefish",
    "bubble",        "cylinder",    "perspective", "noise",      "julian",      "juliascope", "blur",
    "gaussian_blur", "radial_blur", "pie",         "ngon",       "curl",        "rectangles", "arch",
    "tangent",       "square",      "rays",        "blade",      "secant2",     "twintrian",  "cross",
    "disc2",         "super_shape", "flower",      "conic",      "parabola",    "bent2",      "bipolar",
    "boarders",      "butterfly",   "cell",        "cpow",       "curve",       "edisc",      "elliptic",
    "escher",        "foci",        "lazysusan",   "loonie",     "pre_blur",    "modulus",    "oscilloscope",
    "polar2",        "popcorn2",    "scry",        "separation", "split",       "splits",     "stripes",
    "wedge",         "wedge_julia", "wedge_sph",   "whorl",      "waves2",      "exp",        "log",
    "sin",           "cos",         "tan",         "sec",        "csc",         "cot",        "sinh",
    "cosh",          "tanh",        "sech",        "csch",       "coth",        "auger",      "flux",
    "mobius",
};

/// Parameters of the 39 variations that take them (109 in all), slots of Xform::param.
enum VarParam : int {
  kP_blob_low = 0,
  kP_blob_high = 1,
  kP_blob_waves = 2,
  kP_pdj_a = 3,
  kP_pdj_b = 4,
  kP_pdj_c = 5,
  kP_pdj_d = 6,
  kP_fan2_x = 7,
  kP_fan2_y = 8,
  kP_rings2_val = 9,
  kP_perspective_angle = 10,
  kP_perspective_dist = 11,
  kP_julian_power = 12,
  kP_julian_dist = 13,
  kP_juliascope_power = 14,
  kP_juliascope_dist = 15,
  kP_radial_blur_angle = 16,
  kP_pie_slices = 17,
  kP_pie_rotation = 18,
  kP_pie_thickness = 19,
  kP_ngon_sides = 20,
  kP_ngon_power = 21,
  kP_ngon_circle = 22,
  kP_ngon_corners = 23,
  kP_curl_c1 = 24,
  kP_curl_c2 = 25,
  kP_rectangles_x = 26,
  kP_rectangles_y = 27,
  kP_disc2_rot = 28,
  kP_disc2_twist = 29,
  kP_super_shape_rnd = 30,
  kP_super_shape_m = 31,
  kP_super_shape_n1 = 32,
  kP_super_shape_n2 = 33,
  kP_super_shape_n3 = 34,
  kP_super_shape_holes = 35,
  kP_flower_petals = 36,
  kP_flower_holes = 37,
  kP_conic_eccentricity = 38,
  kP_conic_holes = 39,
  kP_parabola_height = 40,
  kP_parabola_width = 41,
  kP_bent2_x = 42,
  kP_bent2_y = 43,
  kP_bipolar_shift = 44,
  kP_cell_size = 45,
  kP_cpow_r = 46,
  kP_cpow_i = 47,
  kP_cpow_power = 48,
  kP_curve_xamp = 49,
  kP_curve_yamp = 50,
  kP_curve_xlength = 51,
  kP_curve_ylength = 52,
  kP_escher_beta = 53,
  kP_lazysusan_spin = 54,
  kP_lazysusan_space = 55,
  kP_lazysusan_twist = 56,
  kP_lazysusan_x = 57,
  kP_lazysusan_y = 58,
  kP_modulus_x = 59,
  kP_modulus_y = 60,
  kP_oscilloscope_separation = 61,
  kP_oscilloscope_frequency = 62,
  kP_oscilloscope_amplitude = 63,
  kP_oscilloscope_damping = 64,
  kP_popcorn2_x = 65,
  kP_popcorn2_y = 66,
  kP_popcorn2_c = 67,
  kP_separation_x = 68,
  kP_separation_xinside = 69,
  kP_separation_y = 70,
  kP_separation_yinside = 71,
  kP_split_xsize = 72,
  kP_split_ysize = 73,
  kP_splits_x = 74,
  kP_splits_y = 75,
  kP_stripes_space = 76,
  kP_stripes_warp = 77,
  kP_wedge_angle = 78,
  kP_wedge_hole = 79,
  kP_wedge_count = 80,
  kP_wedge_swirl = 81,
  kP_wedge_julia_angle = 82,
  kP_wedge_julia_count = 83,
  kP_wedge_julia_power = 84,
  kP_wedge_julia_dist = 85,
  kP_wedge_sph_angle = 86,
  kP_wedge_sph_count = 87,
  kP_wedge_sph_hole = 88,
  kP_wedge_sph_swirl = 89,
  kP_whorl_inside = 90,
  kP_whorl_outside = 91,
  kP_waves2_freqx = 92,
  kP_waves2_scalex = 93,
  kP_waves2_freqy = 94,
  kP_waves2_scaley = 95,
  kP_auger_sym = 96,
  kP_auger_weight = 97,
  kP_auger_freq = 98,
  kP_auger_scale = 99,
  kP_flux_spread = 100,
  kP_mobius_re_a = 101,
  kP_mobius_im_a = 102,
  kP_mobius_re_b = 103,
  kP_mobius_im_b = 104,
  kP_mobius_re_c = 105,
  kP_mobius_im_c = 106,
  kP_mobius_re_d = 107,
  kP_mobius_im_d = 108,
  kNumVarParams = 109
};

struct VarParamInfo {
  const char* name;      ///< XML attribute of the <xform>
  int variation;         ///< the variation it belongs to
  double default_value;  ///< flam3's default (initialize_xforms)
};
inline constexpr VarParamInfo kVarParams[kNumVarParams] = {
    {"blob_low", 23, 0},
    {"blob_high", 23, 1},
    {"blob_waves", 23, 1},
    {"pdj_a", 24, 0},
    {"pdj_b", 24, 0},
    {"pdj_c", 24, 0},
    {"pdj_d", 24, 0},
    {"fan2_x", 25, 0},
    {"fan2_y", 25, 0},
    {"rings2_val", 26, 0},
    {"perspective_angle", 30, 0},
    {"perspective_dist", 30, 0},
    {"julian_power", 32, 1},
    {"julian_dist", 32, 1},
    {"juliascope_power", 33, 1},
    {"juliascope_dist", 33, 1},
    {"radial_blur_angle", 36, 0},
    {"pie_slices", 37, 6},
    {"pie_rotation", 37, 0},
    {"pie_thickness", 37, 0.5},
    {"ngon_sides", 38, 5},
    {"ngon_power", 38, 3},
    {"ngon_circle", 38, 1},
    {"ngon_corners", 38, 2},
    {"curl_c1", 39, 1},
    {"curl_c2", 39, 0},
    {"rectangles_x", 40, 1},
    {"rectangles_y", 40, 1},
    {"disc2_rot", 49, 0},
    {"disc2_twist", 49, 0},
    {"super_shape_rnd", 50, 0},
    {"super_shape_m", 50, 0},
    {"super_shape_n1", 50, 1},
    {"super_shape_n2", 50, 1},
    {"super_shape_n3", 50, 1},
    {"super_shape_holes", 50, 0},
    {"flower_petals", 51, 0},
    {"flower_holes", 51, 0},
    {"conic_eccentricity", 52, 1},
    {"conic_holes", 52, 0},
    {"parabola_height", 53, 0},
    {"parabola_width", 53, 0},
    {"bent2_x", 54, 1},
    {"bent2_y", 54, 1},
    {"bipolar_shift", 55, 0},
    {"cell_size", 58, 1},
    {"cpow_r", 59, 1},
    {"cpow_i", 59, 0},
    {"cpow_power", 59, 1},
    {"curve_xamp", 60, 0},
    {"curve_yamp", 60, 0},
    {"curve_xlength", 60, 1},
    {"curve_ylength", 60, 1},
    {"escher_beta", 63, 0},
    {"lazysusan_spin", 65, 0},
    {"lazysusan_space", 65, 0},
    {"lazysusan_twist", 65, 0},
    {"lazysusan_x", 65, 0},
    {"lazysusan_y", 65, 0},
    {"modulus_x", 68, 0},
    {"modulus_y", 68, 0},
    {"oscilloscope_separation", 69, 1},
    {"oscilloscope_frequency", 69, 3.14159265358979323846},
    {"oscilloscope_amplitude", 69, 1},
    {"oscilloscope_damping", 69, 0},
    {"popcorn2_x", 71, 0},
    {"popcorn2_y", 71, 0},
    {"popcorn2_c", 71, 0},
    {"separation_x", 73, 0},
    {"separation_xinside", 73, 0},
    {"separation_y", 73, 0},
    {"separation_yinside", 73, 0},
    {"split_xsize", 74, 0},
    {"split_ysize", 74, 0},
    {"splits_x", 75, 0},
    {"splits_y", 75, 0},
    {"stripes_space", 76, 0},
    {"stripes_warp", 76, 0},
    {"wedge_angle", 77, 0},
    {"wedge_hole", 77, 0},
    {"wedge_count", 77, 1},
    {"wedge_swirl", 77, 0},
    {"wedge_julia_angle", 78, 0},
    {"wedge_julia_count", 78, 1},
    {"wedge_julia_power", 78, 1},
    {"wedge_julia_dist", 78, 0},
    {"wedge_sph_angle", 79, 0},
    {"wedge_sph_count", 79, 1},
    {"wedge_sph_hole", 79, 0},
    {"wedge_sph_swirl", 79, 0},
    {"whorl_inside", 80, 0},
    {"whorl_outside", 80, 0},
    {"waves2_freqx", 81, 0},
    {"waves2_scalex", 81, 0},
    {"waves2_freqy", 81, 0},
    {"waves2_scaley", 81, 0},
    {"auger_sym", 96, 0},
    {"auger_weight", 96, 0.5},
    {"auger_freq", 96, 1},
    {"auger_scale", 96, 1},
    {"flux_spread", 97, 0},
    {"mobius_re_a", 98, 0},
    {"mobius_im_a", 98, 0},
    {"mobius_re_b", 98, 0},
    {"mobius_im_b", 98, 0},
    {"mobius_re_c", 98, 0},
    {"mobius_im_c", 98, 0},
    {"mobius_re_d", 98, 0},
    {"mobius_im_d", 98, 0},
};

/// Defaults of every parameter, in slot order.
[[nodiscard]] constexpr std::array<double, kNumVarParams> default_var_params() {
  std::array<double, kNumVarParams> a{};
  for (int i = 0; i < kNumVarParams; ++i) a[static_cast<std::size_t>(i)] = kVarParams[i].default_value;
  return a;
}

/// Index of a variation name, or -1.
[[nodiscard]] inline int variation_index(std::string_view name) {
  for (int i = 0; i < kNumVariations; ++i)
    if (name == kVariationNames[i]) return i;
  return -1;
}
/// Index of a parameter name (flam3's aliases oscope_* accepted), or -1.
[[nodiscard]] inline int var_param_index(std::string_view name) {
  std::string_view n = name;
  std::string alias;
  if (n.substr(0, 7) == "oscope_") {
    alias = "oscilloscope_" + std::string(n.substr(7));
    n = alias;
  }
  for (int i = 0; i < kNumVarParams; ++i)
    if (n == kVarParams[i].name) return i;
  return -1;
}

/// Small counter-free generator (PCG32, O'Neill 2014): 64-bit state, 32-bit output.
struct Pcg32 {
  std::uint64_t state = 0x853c49e6748fea9bull;
  std::uint64_t inc = 0xda3e39cb94b95bdbull;
  GF_FLAME_HD Pcg32() {}
  GF_FLAME_HD Pcg32(std::uint64_t seed, std::uint64_t stream) {
    state = 0;
    inc = (stream << 1u) | 1u;
    next();
    state += seed;
    next();
  }
  GF_FLAME_HD unsigned next() {
    const std::uint64_t old = state;
    state = old * 6364136223846793005ull + inc;
    const auto xorshifted = static_cast<std::uint32_t>(((old >> 18u) ^ old) >> 27u);
    const auto rot = static_cast<std::uint32_t>(old >> 59u);
    return (xorshifted >> rot) | (xorshifted << ((32u - rot) & 31u));
  }
};

/// Uniform in [0, 1) with 24 random bits (exact in fp32 and fp64).
template <class R, class Rng>
GF_FLAME_HD inline R uniform01(Rng& rng) {
  return static_cast<R>(rng.next() >> 8) * static_cast<R>(1.0 / 16777216.0);
}

/// What eval_variation needs besides (tx, ty): the precomputed polar quantities and the
/// xform's pre-affine coefficients.
template <class R>
struct VarPoint {
  R tx, ty;
  R sumsq, sqrt_;  ///< r², r
  R atan_xy;       ///< θ = atan2(tx, ty) (only when needs_atan_xy)
  R atan_yx;       ///< φ = atan2(ty, tx) (only when needs_atan_yx)
  const R* coefs;  ///< the xform's pre affine a b c d e f
};

[[nodiscard]] GF_FLAME_HD constexpr bool needs_atan_xy(int v) {
  return v == kVar_polar || v == kVar_handkerchief || v == kVar_heart || v == kVar_disc || v == kVar_ex ||
         v == kVar_julia || v == kVar_fan || v == kVar_blob || v == kVar_fan2 || v == kVar_disc2 || v == kVar_polar2;
}
[[nodiscard]] GF_FLAME_HD constexpr bool needs_atan_yx(int v) {
  return v == kVar_julian || v == kVar_juliascope || v == kVar_radial_blur || v == kVar_ngon || v == kVar_super_shape ||
         v == kVar_flower || v == kVar_conic || v == kVar_cpow || v == kVar_escher || v == kVar_wedge ||
         v == kVar_wedge_julia || v == kVar_wedge_sph || v == kVar_whorl || v == kVar_log;
}

/// Moves (tx, ty) by pre_blur of weight w: a gaussian-like radial jitter (sum of four uniforms).
template <class R, class Rng>
GF_FLAME_HD inline void apply_pre_blur(R w, R& tx, R& ty, Rng& rng) {
  const R g = w * (uniform01<R>(rng) + uniform01<R>(rng) + uniform01<R>(rng) + uniform01<R>(rng) - R(2));
  const R a = uniform01<R>(rng) * R(2 * 3.14159265358979323846);
  tx += g * cos(a);
  ty += g * sin(a);
}

/// Variations kVar_linear … kVar_exponential (eval_variation dispatches by index range).
template <class R, class Rng>
GF_FLAME_HD inline void eval_variation_group0(int v, R w, const VarPoint<R>& q, const R* P, R& px, R& py, Rng& rng) {
  [[maybe_unused]] const R pi = R(3.14159265358979323846);
  [[maybe_unused]] const R eps = R(1e-10);
  [[maybe_unused]] const R tx = q.tx, ty = q.ty, r2 = q.sumsq, r = q.sqrt_;
  // "sin θ" and "cos θ" of the paper: x/r and y/r (NaN at the origin, as in flam3).
  [[maybe_unused]] const R sa = tx / r, ca = ty / r;
  (void)P, (void)rng;  // not every group reads parameters or random numbers
  switch (v) {
    case kVar_linear:
      px += w * tx;
      py += w * ty;
      break;
    case kVar_sinusoidal:
      px += w * sin(tx);
      py += w * sin(ty);
      break;
    case kVar_spherical: {
      const R k = w / (r2 + eps);
      px += k * tx;
      py += k * ty;
    } break;
    case kVar_swirl: {
      const R s = sin(r2), c = cos(r2);
      px += w * (s * tx - c * ty);
      py += w * (c * tx + s * ty);
    } break;
    case kVar_horseshoe: {
      const R k = w / (r + eps);
      px += k * (tx - ty) * (tx + ty);
      py += k * R(2) * tx * ty;
    } break;
    case kVar_polar:
      px += w * q.atan_xy / pi;
      py += w * (r - R(1));
      break;
    case kVar_handkerchief:
      px += w * r * sin(q.atan_xy + r);
      py += w * r * cos(q.atan_xy - r);
      break;
    case kVar_heart: {
      const R a = r * q.atan_xy;
      px += w * r * sin(a);
      py -= w * r * cos(a);
    } break;
    case kVar_disc: {
      const R a = q.atan_xy / pi, s = pi * r;
      px += w * sin(s) * a;
      py += w * cos(s) * a;
    } break;
    case kVar_spiral: {
      const R rr = r + eps;
      px += w / rr * (ca + sin(rr));
      py += w / rr * (sa - cos(rr));
    } break;
    case kVar_hyperbolic: {
      const R rr = r + eps;
      px += w * sa / rr;
      py += w * ca * rr;
    } break;
    case kVar_diamond:
      px += w * sa * cos(r);
      py += w * ca * sin(r);
      break;
    case kVar_ex: {
      const R n0 = sin(q.atan_xy + r), n1 = cos(q.atan_xy - r);
      const R m0 = n0 * n0 * n0 * r, m1 = n1 * n1 * n1 * r;
      px += w * (m0 + m1);
      py += w * (m0 - m1);
    } break;
    case kVar_julia: {
      R a = R(0.5) * q.atan_xy;
      if (rng.next() & 1u) a += pi;
      const R k = w * sqrt(r);
      px += k * cos(a);
      py += k * sin(a);
    } break;
    case kVar_bent:
      px += w * (tx < R(0) ? R(2) * tx : tx);
      py += w * (ty < R(0) ? ty / R(2) : ty);
      break;
    case kVar_waves: {
      const R b = q.coefs[2], d = q.coefs[3], e = q.coefs[4], f = q.coefs[5];
      px += w * (tx + b * sin(ty / (e * e + eps)));
      py += w * (ty + d * sin(tx / (f * f + eps)));
    } break;
    case kVar_fisheye: {
      const R k = R(2) * w / (r + R(1));
      px += k * ty;
      py += k * tx;
    } break;
    case kVar_popcorn: {
      px += w * (tx + q.coefs[4] * sin(tan(R(3) * ty)));
      py += w * (ty + q.coefs[5] * sin(tan(R(3) * tx)));
    } break;
    case kVar_exponential: {
      const R k = w * exp(tx - R(1)), a = pi * ty;
      px += k * cos(a);
      py += k * sin(a);
    } break;
    default: break;
  }
}

/// Variations kVar_power … kVar_blur (eval_variation dispatches by index range).
template <class R, class Rng>
GF_FLAME_HD inline void eval_variation_group1(int v, R w, const VarPoint<R>& q, const R* P, R& px, R& py, Rng& rng) {
  [[maybe_unused]] const R pi = R(3.14159265358979323846);
  [[maybe_unused]] const R eps = R(1e-10);
  [[maybe_unused]] const R tx = q.tx, ty = q.ty, r2 = q.sumsq, r = q.sqrt_;
  // "sin θ" and "cos θ" of the paper: x/r and y/r (NaN at the origin, as in flam3).
  [[maybe_unused]] const R sa = tx / r, ca = ty / r;
  (void)P, (void)rng;  // not every group reads parameters or random numbers
  switch (v) {
    case kVar_power: {
      const R k = w * pow(r, sa);
      px += k * ca;
      py += k * sa;
    } break;
    case kVar_cosine: {
      const R a = pi * tx;
      px += w * cos(a) * cosh(ty);
      py -= w * sin(a) * sinh(ty);
    } break;
    case kVar_rings: {
      const R e = q.coefs[4], dx = e * e + eps;
      const R k = w * (fmod(r + dx, R(2) * dx) - dx + r * (R(1) - dx));
      px += k * ca;
      py += k * sa;
    } break;
    case kVar_fan: {
      const R e = q.coefs[4], f = q.coefs[5];
      const R t = pi * (e * e + eps), h = R(0.5) * t;
      R a = q.atan_xy;
      a += (fmod(a + f, t) > h) ? -h : h;
      px += w * r * cos(a);
      py += w * r * sin(a);
    } break;
    case kVar_blob: {
      const R lo = P[kP_blob_low], hi = P[kP_blob_high], waves = P[kP_blob_waves];
      const R k = r * (lo + (hi - lo) * (R(0.5) + R(0.5) * sin(waves * q.atan_xy)));
      px += w * sa * k;
      py += w * ca * k;
    } break;
    case kVar_pdj:
      px += w * (sin(P[kP_pdj_a] * ty) - cos(P[kP_pdj_b] * tx));
      py += w * (sin(P[kP_pdj_c] * tx) - cos(P[kP_pdj_d] * ty));
      break;
    case kVar_fan2: {
      const R fy = P[kP_fan2_y], fx = P[kP_fan2_x];
      const R t = pi * (fx * fx + eps), h = R(0.5) * t;
      R a = q.atan_xy;
      const R u = a + fy - t * static_cast<R>(static_cast<long long>((a + fy) / t));
      a = u > h ? a - h : a + h;
      px += w * r * sin(a);
      py += w * r * cos(a);
    } break;
    case kVar_rings2: {
      const R val = P[kP_rings2_val], dx = val * val + eps;
      const R k = r - R(2) * dx * static_cast<R>(static_cast<long long>((r + dx) / (R(2) * dx))) + r * (R(1) - dx);
      px += w * sa * k;
      py += w * ca * k;
    } break;
    case kVar_eyefish: {
      const R k = R(2) * w / (r + R(1));
      px += k * tx;
      py += k * ty;
    } break;
    case kVar_bubble: {
      const R k = w / (R(0.25) * r2 + R(1));
      px += k * tx;
      py += k * ty;
    } break;
    case kVar_cylinder:
      px += w * sin(tx);
      py += w * ty;
      break;
    case kVar_perspective: {
      const R ang = P[kP_perspective_angle] * pi / R(2), dist = P[kP_perspective_dist];
      const R t = R(1) / (dist - ty * sin(ang));
      px += w * dist * tx * t;
      py += w * dist * cos(ang) * ty * t;
    } break;
    case kVar_noise: {
      const R a = uniform01<R>(rng) * R(2) * pi, k = w * uniform01<R>(rng);
      px += tx * k * cos(a);
      py += ty * k * sin(a);
    } break;
    case kVar_julian: {
      const R power = P[kP_julian_power], rn = fabs(power), cn = P[kP_julian_dist] / power / R(2);
      const R t = trunc(rn * uniform01<R>(rng));
      const R a = (q.atan_yx + R(2) * pi * t) / power, k = w * pow(r2, cn);
      px += k * cos(a);
      py += k * sin(a);
    } break;
    case kVar_juliascope: {
      const R power = P[kP_juliascope_power], rn = fabs(power), cn = P[kP_juliascope_dist] / power / R(2);
      const long long t = static_cast<long long>(trunc(rn * uniform01<R>(rng)));
      const R a = ((t & 1) == 0 ? R(2) * pi * R(t) + q.atan_yx : R(2) * pi * R(t) - q.atan_yx) / power;
      const R k = w * pow(r2, cn);
      px += k * cos(a);
      py += k * sin(a);
    } break;
    case kVar_blur: {
      const R a = uniform01<R>(rng) * R(2) * pi, k = w * uniform01<R>(rng);
      px += k * cos(a);
      py += k * sin(a);
    } break;
    default: break;
  }
}

/// Variations kVar_gaussian_blur … kVar_cross (eval_variation dispatches by index range).
template <class R, class Rng>
GF_FLAME_HD inline void eval_variation_group2(int v, R w, const VarPoint<R>& q, const R* P, R& px, R& py, Rng& rng) {
  [[maybe_unused]] const R pi = R(3.14159265358979323846);
  [[maybe_unused]] const R eps = R(1e-10);
  [[maybe_unused]] const R tx = q.tx, ty = q.ty, r2 = q.sumsq, r = q.sqrt_;
  // "sin θ" and "cos θ" of the paper: x/r and y/r (NaN at the origin, as in flam3).
  [[maybe_unused]] const R sa = tx / r, ca = ty / r;
  (void)P, (void)rng;  // not every group reads parameters or random numbers
  switch (v) {
    case kVar_gaussian_blur: {
      const R a = uniform01<R>(rng) * R(2) * pi;
      const R k = w * (uniform01<R>(rng) + uniform01<R>(rng) + uniform01<R>(rng) + uniform01<R>(rng) - R(2));
      px += k * cos(a);
      py += k * sin(a);
    } break;
    case kVar_radial_blur: {
      const R ang = P[kP_radial_blur_angle] * pi / R(2), spin = sin(ang), zoom = cos(ang);
      const R g = w * (uniform01<R>(rng) + uniform01<R>(rng) + uniform01<R>(rng) + uniform01<R>(rng) - R(2));
      const R a = q.atan_yx + spin * g, rz = zoom * g - R(1);
      px += r * cos(a) + rz * tx;
      py += r * sin(a) + rz * ty;
    } break;
    case kVar_pie: {
      const R slices = P[kP_pie_slices];
      const R sl = static_cast<R>(static_cast<int>(uniform01<R>(rng) * slices + R(0.5)));
      const R a = P[kP_pie_rotation] + R(2) * pi * (sl + uniform01<R>(rng) * P[kP_pie_thickness]) / slices;
      const R k = w * uniform01<R>(rng);
      px += k * cos(a);
      py += k * sin(a);
    } break;
    case kVar_ngon: {
      const R rf = pow(r2, P[kP_ngon_power] / R(2)), b = R(2) * pi / P[kP_ngon_sides];
      R phi = q.atan_yx - b * floor(q.atan_yx / b);
      if (phi > b / R(2)) phi -= b;
      const R amp = (P[kP_ngon_corners] * (R(1) / (cos(phi) + eps) - R(1)) + P[kP_ngon_circle]) / (rf + eps);
      px += w * tx * amp;
      py += w * ty * amp;
    } break;
    case kVar_curl: {
      const R c1 = P[kP_curl_c1], c2 = P[kP_curl_c2];
      const R re = R(1) + c1 * tx + c2 * (tx * tx - ty * ty), im = c1 * ty + R(2) * c2 * tx * ty;
      const R k = w / (re * re + im * im);
      px += (tx * re + ty * im) * k;
      py += (ty * re - tx * im) * k;
    } break;
    case kVar_rectangles: {
      const R rx = P[kP_rectangles_x], ry = P[kP_rectangles_y];
      px += w * (rx == R(0) ? tx : (R(2) * floor(tx / rx) + R(1)) * rx - tx);
      py += w * (ry == R(0) ? ty : (R(2) * floor(ty / ry) + R(1)) * ry - ty);
    } break;
    case kVar_arch: {  // flam3 uses the weight inside the angle too
      const R a = uniform01<R>(rng) * w * pi, s = sin(a), c = cos(a);
      px += w * s;
      py += w * s * s / c;
    } break;
    case kVar_tangent:
      px += w * sin(tx) / cos(ty);
      py += w * tan(ty);
      break;
    case kVar_square:
      px += w * (uniform01<R>(rng) - R(0.5));
      py += w * (uniform01<R>(rng) - R(0.5));
      break;
    case kVar_rays: {
      const R a = w * uniform01<R>(rng) * pi, k = w * tan(a) * (w / (r2 + eps));
      px += k * cos(tx);
      py += k * sin(ty);
    } break;
    case kVar_blade: {
      const R a = uniform01<R>(rng) * w * r, s = sin(a), c = cos(a);
      px += w * tx * (c + s);
      py += w * tx * (c - s);
    } break;
    case kVar_secant2: {
      const R c = cos(w * r);
      px += w * tx;
      py += w * (R(1) / c + (c < R(0) ? R(1) : R(-1)));
    } break;
    case kVar_twintrian: {
      const R a = uniform01<R>(rng) * w * r, s = sin(a), c = cos(a);
      R d = log10(s * s) + c;
      if (d != d || d > R(1e10) || d < R(-1e10)) d = R(-30);
      px += w * tx * d;
      py += w * tx * (d - s * pi);
    } break;
    case kVar_cross: {
      const R s = tx * tx - ty * ty, k = w * sqrt(R(1) / (s * s + eps));
      px += tx * k;
      py += ty * k;
    } break;
    default: break;
  }
}

/// Variations kVar_disc2 … kVar_cpow (eval_variation dispatches by index range).
template <class R, class Rng>
GF_FLAME_HD inline void eval_variation_group3(int v, R w, const VarPoint<R>& q, const R* P, R& px, R& py, Rng& rng) {
  [[maybe_unused]] const R pi = R(3.14159265358979323846);
  [[maybe_unused]] const R eps = R(1e-10);
  [[maybe_unused]] const R tx = q.tx, ty = q.ty, r2 = q.sumsq, r = q.sqrt_;
  // "sin θ" and "cos θ" of the paper: x/r and y/r (NaN at the origin, as in flam3).
  [[maybe_unused]] const R sa = tx / r, ca = ty / r;
  (void)P, (void)rng;  // not every group reads parameters or random numbers
  switch (v) {
    case kVar_disc2: {
      const R twist = P[kP_disc2_twist];
      R sadd = sin(twist), cadd = cos(twist) - R(1);
      if (twist > R(2) * pi) {
        const R k = R(1) + twist - R(2) * pi;
        cadd *= k;
        sadd *= k;
      }
      if (twist < -R(2) * pi) {
        const R k = R(1) + twist + R(2) * pi;
        cadd *= k;
        sadd *= k;
      }
      const R t = P[kP_disc2_rot] * pi * (tx + ty), k = w * q.atan_xy / pi;
      px += (sin(t) + cadd) * k;
      py += (cos(t) + sadd) * k;
    } break;
    case kVar_super_shape: {
      const R th = P[kP_super_shape_m] / R(4) * q.atan_yx + pi / R(4);
      const R t1 = pow(fabs(cos(th)), P[kP_super_shape_n2]), t2 = pow(fabs(sin(th)), P[kP_super_shape_n3]);
      const R rnd = P[kP_super_shape_rnd];
      const R k = w * ((rnd * uniform01<R>(rng) + (R(1) - rnd) * r) - P[kP_super_shape_holes]) *
                  pow(t1 + t2, R(-1) / P[kP_super_shape_n1]) / r;
      px += k * tx;
      py += k * ty;
    } break;
    case kVar_flower: {
      const R k = w * (uniform01<R>(rng) - P[kP_flower_holes]) * cos(P[kP_flower_petals] * q.atan_yx) / r;
      px += k * tx;
      py += k * ty;
    } break;
    case kVar_conic: {
      const R e = P[kP_conic_eccentricity];
      const R k = w * (uniform01<R>(rng) - P[kP_conic_holes]) * e / (R(1) + e * (tx / r)) / r;
      px += k * tx;
      py += k * ty;
    } break;
    case kVar_parabola: {
      const R s = sin(r), c = cos(r);
      px += P[kP_parabola_height] * w * s * s * uniform01<R>(rng);
      py += P[kP_parabola_width] * w * c * uniform01<R>(rng);
    } break;
    case kVar_bent2:
      px += w * (tx < R(0) ? tx * P[kP_bent2_x] : tx);
      py += w * (ty < R(0) ? ty * P[kP_bent2_y] : ty);
      break;
    case kVar_bipolar: {
      const R t = r2 + R(1), x2 = R(2) * tx, hp = pi / R(2);
      R y = R(0.5) * atan2(R(2) * ty, r2 - R(1)) - hp * P[kP_bipolar_shift];
      if (y > hp) y = -hp + fmod(y + hp, pi);
      else if (y < -hp) y = hp - fmod(hp - y, pi);
      px += w * R(0.25) * (R(2) / pi) * log((t + x2) / (t - x2));
      py += w * (R(2) / pi) * y;
    } break;
    case kVar_boarders: {
      const R rx = rint(tx), ry = rint(ty), ox = tx - rx, oy = ty - ry;
      if (uniform01<R>(rng) >= R(0.75)) {
        px += w * (ox * R(0.5) + rx);
        py += w * (oy * R(0.5) + ry);
      } else if (fabs(ox) >= fabs(oy)) {
        const R s = ox >= R(0) ? R(0.25) : R(-0.25);
        px += w * (ox * R(0.5) + rx + s);
        py += w * (oy * R(0.5) + ry + s * oy / ox);
      } else {
        const R s = oy >= R(0) ? R(0.25) : R(-0.25);
        py += w * (oy * R(0.5) + ry + s);
        px += w * (ox * R(0.5) + rx + ox / oy * s);
      }
    } break;
    case kVar_butterfly: {
      const R y2 = R(2) * ty,
              k = w * R(1.3029400317411197908970256609023) * sqrt(fabs(ty * tx) / (eps + tx * tx + y2 * y2));
      px += k * tx;
      py += k * y2;
    } break;
    case kVar_cell: {
      const R size = P[kP_cell_size], inv = R(1) / size;
      long long x = static_cast<long long>(floor(tx * inv)), y = static_cast<long long>(floor(ty * inv));
      const R dx = tx - R(x) * size, dy = ty - R(y) * size;
      x = x >= 0 ? 2 * x : -(2 * x + 1);
      y = y >= 0 ? 2 * y : -(2 * y + 1);
      px += w * (dx + R(x) * size);
      py -= w * (dy + R(y) * size);
    } break;
    case kVar_cpow: {
      const R power = P[kP_cpow_power], lnr = R(0.5) * log(r2);
      const R va = R(2) * pi / power, vc = P[kP_cpow_r] / power, vd = P[kP_cpow_i] / power;
      const R a = vc * q.atan_yx + vd * lnr + va * floor(power * uniform01<R>(rng));
      const R m = w * exp(vc * lnr - vd * q.atan_yx);
      px += m * cos(a);
      py += m * sin(a);
    } break;
    default: break;
  }
}

/// Variations kVar_curve … kVar_scry (eval_variation dispatches by index range).
template <class R, class Rng>
GF_FLAME_HD inline void eval_variation_group4(int v, R w, const VarPoint<R>& q, const R* P, R& px, R& py, Rng& rng) {
  [[maybe_unused]] const R pi = R(3.14159265358979323846);
  [[maybe_unused]] const R eps = R(1e-10);
  [[maybe_unused]] const R tx = q.tx, ty = q.ty, r2 = q.sumsq, r = q.sqrt_;
  // "sin θ" and "cos θ" of the paper: x/r and y/r (NaN at the origin, as in flam3).
  [[maybe_unused]] const R sa = tx / r, ca = ty / r;
  (void)P, (void)rng;  // not every group reads parameters or random numbers
  switch (v) {
    case kVar_curve: {
      R xl = P[kP_curve_xlength] * P[kP_curve_xlength], yl = P[kP_curve_ylength] * P[kP_curve_ylength];
      if (xl < R(1e-20)) xl = R(1e-20);
      if (yl < R(1e-20)) yl = R(1e-20);
      px += w * (tx + P[kP_curve_xamp] * exp(-ty * ty / xl));
      py += w * (ty + P[kP_curve_yamp] * exp(-tx * tx / yl));
    } break;
    case kVar_edisc: {
      const R t = r2 + R(1), t2 = R(2) * tx;
      const R xmax = (sqrt(t + t2) + sqrt(t - t2)) * R(0.5);
      const R a1 = log(xmax + sqrt(xmax - R(1))), a2 = -acos(tx / xmax);
      const R k = w / R(11.57034632);
      R sv = sin(a1);
      if (ty > R(0)) sv = -sv;
      px += k * cosh(a2) * cos(a1);
      py += k * sinh(a2) * sv;
    } break;
    case kVar_elliptic: {
      const R t = r2 + R(1), x2 = R(2) * tx;
      const R xmax = R(0.5) * (sqrt(t + x2) + sqrt(t - x2)), a = tx / xmax;
      R b = R(1) - a * a, ss = xmax - R(1);
      b = b < R(0) ? R(0) : sqrt(b);
      ss = ss < R(0) ? R(0) : sqrt(ss);
      const R k = w / (pi / R(2));
      px += k * atan2(a, b);
      py += (ty > R(0) ? k : -k) * log(xmax + ss);
    } break;
    case kVar_escher: {
      const R beta = P[kP_escher_beta], vc = R(0.5) * (R(1) + cos(beta)), vd = R(0.5) * sin(beta);
      const R lnr = R(0.5) * log(r2), m = w * exp(vc * lnr - vd * q.atan_yx), n = vc * q.atan_yx + vd * lnr;
      px += m * cos(n);
      py += m * sin(n);
    } break;
    case kVar_foci: {
      const R ex = exp(tx) * R(0.5), enx = R(0.25) / ex, k = w / (ex + enx - cos(ty));
      px += k * (ex - enx);
      py += k * sin(ty);
    } break;
    case kVar_lazysusan: {
      const R lx = P[kP_lazysusan_x], ly = P[kP_lazysusan_y];
      const R x = tx - lx, y = ty + ly, rr = sqrt(x * x + y * y);
      if (rr < w) {
        const R a = atan2(y, x) + P[kP_lazysusan_spin] + P[kP_lazysusan_twist] * (w - rr), k = w * rr;
        px += k * cos(a) + lx;
        py += k * sin(a) - ly;
      } else {
        const R k = w * (R(1) + P[kP_lazysusan_space] / rr);
        px += k * x + lx;
        py += k * y - ly;
      }
    } break;
    case kVar_loonie: {
      const R w2 = w * w;
      if (r2 < w2) {
        const R k = w * sqrt(w2 / r2 - R(1));
        px += k * tx;
        py += k * ty;
      } else {
        px += w * tx;
        py += w * ty;
      }
    } break;
    case kVar_pre_blur: break;  // applied to (tx, ty) before the sum: apply_pre_blur
    case kVar_modulus: {
      const R mx = P[kP_modulus_x], my = P[kP_modulus_y];
      if (tx > mx) px += w * (-mx + fmod(tx + mx, R(2) * mx));
      else if (tx < -mx) px += w * (mx - fmod(mx - tx, R(2) * mx));
      else px += w * tx;
      if (ty > my) py += w * (-my + fmod(ty + my, R(2) * my));
      else if (ty < -my) py += w * (my - fmod(my - ty, R(2) * my));
      else py += w * ty;
    } break;
    case kVar_oscilloscope: {
      const R f = R(2) * pi * P[kP_oscilloscope_frequency], damp = P[kP_oscilloscope_damping];
      const R amp = P[kP_oscilloscope_amplitude], sep = P[kP_oscilloscope_separation];
      const R t = (damp == R(0) ? amp : amp * exp(-fabs(tx) * damp)) * cos(f * tx) + sep;
      px += w * tx;
      py += (fabs(ty) <= t ? -w : w) * ty;
    } break;
    case kVar_polar2: {
      const R k = w / pi;
      px += k * q.atan_xy;
      py += k / R(2) * log(r2);
    } break;
    case kVar_popcorn2: {
      const R c = P[kP_popcorn2_c];
      px += w * (tx + P[kP_popcorn2_x] * sin(tan(ty * c)));
      py += w * (ty + P[kP_popcorn2_y] * sin(tan(tx * c)));
    } break;
    case kVar_scry: {
      const R k = R(1) / (r * (r2 + R(1) / (w + eps)));
      px += tx * k;
      py += ty * k;
    } break;
    default: break;
  }
}

/// Variations kVar_separation … kVar_csc (eval_variation dispatches by index range).
template <class R, class Rng>
GF_FLAME_HD inline void eval_variation_group5(int v, R w, const VarPoint<R>& q, const R* P, R& px, R& py, Rng& rng) {
  [[maybe_unused]] const R pi = R(3.14159265358979323846);
  [[maybe_unused]] const R eps = R(1e-10);
  [[maybe_unused]] const R tx = q.tx, ty = q.ty, r2 = q.sumsq, r = q.sqrt_;
  // "sin θ" and "cos θ" of the paper: x/r and y/r (NaN at the origin, as in flam3).
  [[maybe_unused]] const R sa = tx / r, ca = ty / r;
  (void)P, (void)rng;  // not every group reads parameters or random numbers
  switch (v) {
    case kVar_separation: {
      const R sx = P[kP_separation_x], sy = P[kP_separation_y];
      const R xi = P[kP_separation_xinside], yi = P[kP_separation_yinside];
      if (tx > R(0)) px += w * (sqrt(tx * tx + sx * sx) - tx * xi);
      else px -= w * (sqrt(tx * tx + sx * sx) + tx * xi);
      if (ty > R(0)) py += w * (sqrt(ty * ty + sy * sy) - ty * yi);
      else py -= w * (sqrt(ty * ty + sy * sy) + ty * yi);
    } break;
    case kVar_split:
      py += (cos(tx * P[kP_split_xsize] * pi) >= R(0) ? w : -w) * ty;
      px += (cos(ty * P[kP_split_ysize] * pi) >= R(0) ? w : -w) * tx;
      break;
    case kVar_splits:
      px += w * (tx >= R(0) ? tx + P[kP_splits_x] : tx - P[kP_splits_x]);
      py += w * (ty >= R(0) ? ty + P[kP_splits_y] : ty - P[kP_splits_y]);
      break;
    case kVar_stripes: {
      const R rx = floor(tx + R(0.5)), ox = tx - rx;
      px += w * (ox * (R(1) - P[kP_stripes_space]) + rx);
      py += w * (ty + ox * ox * P[kP_stripes_warp]);
    } break;
    case kVar_wedge: {
      const R count = P[kP_wedge_count], angle = P[kP_wedge_angle];
      R a = q.atan_yx + P[kP_wedge_swirl] * r;
      const R c = floor((count * a + pi) / pi * R(0.5));
      a = a * (R(1) - angle * count / pi * R(0.5)) + c * angle;
      const R k = w * (r + P[kP_wedge_hole]);
      px += k * cos(a);
      py += k * sin(a);
    } break;
    case kVar_wedge_julia: {
      const R power = P[kP_wedge_julia_power], count = P[kP_wedge_julia_count], angle = P[kP_wedge_julia_angle];
      const R cn = P[kP_wedge_julia_dist] / power / R(2), rn = fabs(power);
      const R cf = R(1) - angle * count / pi * R(0.5);
      const R k = w * pow(r2, cn);
      const R t = static_cast<R>(static_cast<int>(rn * uniform01<R>(rng)));
      R a = (q.atan_yx + R(2) * pi * t) / power;
      const R c = floor((count * a + pi) / pi * R(0.5));
      a = a * cf + c * angle;
      px += k * cos(a);
      py += k * sin(a);
    } break;
    case kVar_wedge_sph: {
      const R count = P[kP_wedge_sph_count], angle = P[kP_wedge_sph_angle];
      const R ir = R(1) / (r + eps);
      R a = q.atan_yx + P[kP_wedge_sph_swirl] * ir;
      const R c = floor((count * a + pi) / pi * R(0.5));
      a = a * (R(1) - angle * count / pi * R(0.5)) + c * angle;
      const R k = w * (ir + P[kP_wedge_sph_hole]);
      px += k * cos(a);
      py += k * sin(a);
    } break;
    case kVar_whorl: {
      const R a = q.atan_yx + (r < w ? P[kP_whorl_inside] : P[kP_whorl_outside]) / (w - r);
      px += w * r * cos(a);
      py += w * r * sin(a);
    } break;
    case kVar_waves2:
      px += w * (tx + P[kP_waves2_scalex] * sin(ty * P[kP_waves2_freqx]));
      py += w * (ty + P[kP_waves2_scaley] * sin(tx * P[kP_waves2_freqy]));
      break;
    case kVar_exp: {
      const R e = exp(tx);
      px += w * e * cos(ty);
      py += w * e * sin(ty);
    } break;
    case kVar_log:
      px += w * R(0.5) * log(r2);
      py += w * q.atan_yx;
      break;
    case kVar_sin:
      px += w * sin(tx) * cosh(ty);
      py += w * cos(tx) * sinh(ty);
      break;
    case kVar_cos:
      px += w * cos(tx) * cosh(ty);
      py -= w * sin(tx) * sinh(ty);
      break;
    case kVar_tan: {
      const R d = R(1) / (cos(R(2) * tx) + cosh(R(2) * ty));
      px += w * d * sin(R(2) * tx);
      py += w * d * sinh(R(2) * ty);
    } break;
    case kVar_sec: {
      const R d = R(2) / (cos(R(2) * tx) + cosh(R(2) * ty));
      px += w * d * cos(tx) * cosh(ty);
      py += w * d * sin(tx) * sinh(ty);
    } break;
    case kVar_csc: {
      const R d = R(2) / (cosh(R(2) * ty) - cos(R(2) * tx));
      px += w * d * sin(tx) * cosh(ty);
      py -= w * d * cos(tx) * sinh(ty);
    } break;
    default: break;
  }
}

/// Variations kVar_cot … kVar_mobius (eval_variation dispatches by index range).
template <class R, class Rng>
GF_FLAME_HD inline void eval_variation_group6(int v, R w, const VarPoint<R>& q, const R* P, R& px, R& py, Rng& rng) {
  [[maybe_unused]] const R pi = R(3.14159265358979323846);
  [[maybe_unused]] const R eps = R(1e-10);
  [[maybe_unused]] const R tx = q.tx, ty = q.ty, r2 = q.sumsq, r = q.sqrt_;
  // "sin θ" and "cos θ" of the paper: x/r and y/r (NaN at the origin, as in flam3).
  [[maybe_unused]] const R sa = tx / r, ca = ty / r;
  (void)P, (void)rng;  // not every group reads parameters or random numbers
  switch (v) {
    case kVar_cot: {
      const R d = R(1) / (cosh(R(2) * ty) - cos(R(2) * tx));
      px += w * d * sin(R(2) * tx);
      py -= w * d * sinh(R(2) * ty);
    } break;
    case kVar_sinh:
      px += w * sinh(tx) * cos(ty);
      py += w * cosh(tx) * sin(ty);
      break;
    case kVar_cosh:
      px += w * cosh(tx) * cos(ty);
      py += w * sinh(tx) * sin(ty);
      break;
    case kVar_tanh: {
      const R d = R(1) / (cos(R(2) * ty) + cosh(R(2) * tx));
      px += w * d * sinh(R(2) * tx);
      py += w * d * sin(R(2) * ty);
    } break;
    case kVar_sech: {
      const R d = R(2) / (cos(R(2) * ty) + cosh(R(2) * tx));
      px += w * d * cos(ty) * cosh(tx);
      py -= w * d * sin(ty) * sinh(tx);
    } break;
    case kVar_csch: {
      const R d = R(2) / (cosh(R(2) * tx) - cos(R(2) * ty));
      px += w * d * sinh(tx) * cos(ty);
      py -= w * d * cosh(tx) * sin(ty);
    } break;
    case kVar_coth: {
      const R d = R(1) / (cosh(R(2) * tx) - cos(R(2) * ty));
      px += w * d * sinh(R(2) * tx);
      py += w * d * sin(R(2) * ty);
    } break;
    case kVar_auger: {
      const R f = P[kP_auger_freq], aw = P[kP_auger_weight], sc = P[kP_auger_scale];
      const R s = sin(f * tx), t = sin(f * ty);
      const R dy = ty + aw * (sc * s / R(2) + fabs(ty) * s);
      const R dx = tx + aw * (sc * t / R(2) + fabs(tx) * t);
      px += w * (tx + P[kP_auger_sym] * (dx - tx));
      py += w * dy;
    } break;
    case kVar_flux: {
      const R xp = tx + w, xm = tx - w;
      const R k = w * (R(2) + P[kP_flux_spread]) * sqrt(sqrt(ty * ty + xp * xp) / sqrt(ty * ty + xm * xm));
      const R a = (atan2(ty, xm) - atan2(ty, xp)) * R(0.5);
      px += k * cos(a);
      py += k * sin(a);
    } break;
    case kVar_mobius: {
      const R ura = P[kP_mobius_re_a] * tx - P[kP_mobius_im_a] * ty + P[kP_mobius_re_b];
      const R uia = P[kP_mobius_re_a] * ty + P[kP_mobius_im_a] * tx + P[kP_mobius_im_b];
      const R vr = P[kP_mobius_re_c] * tx - P[kP_mobius_im_c] * ty + P[kP_mobius_re_d];
      const R vi = P[kP_mobius_re_c] * ty + P[kP_mobius_im_c] * tx + P[kP_mobius_im_d];
      const R k = w / (vr * vr + vi * vi);
      px += k * (ura * vr + uia * vi);
      py += k * (uia * vr - ura * vi);
    } break;
    default: break;
  }
}

/// Adds w·V_v(tx, ty) to (px, py). P: the xform's kNumVarParams parameters.
template <class R, class Rng>
GF_FLAME_HD inline void eval_variation(int v, R w, const VarPoint<R>& q, const R* P, R& px, R& py, Rng& rng) {
  if (v < kVar_power) eval_variation_group0(v, w, q, P, px, py, rng);
  else if (v < kVar_gaussian_blur) eval_variation_group1(v, w, q, P, px, py, rng);
  else if (v < kVar_disc2) eval_variation_group2(v, w, q, P, px, py, rng);
  else if (v < kVar_curve) eval_variation_group3(v, w, q, P, px, py, rng);
  else if (v < kVar_separation) eval_variation_group4(v, w, q, P, px, py, rng);
  else if (v < kVar_cot) eval_variation_group5(v, w, q, P, px, py, rng);
  else eval_variation_group6(v, w, q, P, px, py, rng);
}

}  // namespace gemflow::flame
