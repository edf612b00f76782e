#pragma once
// The pieces of a render shared by the CPU and CUDA paths (__host__ __device__): the compiled
// xform, one chaos-game step, the camera, palette lookup, the histogram's fixed point, log
// density and the tone map of one pixel. render.hpp documents the stages and their sources.
#include <math.h>
#include <cstdint>

#include "gemflow/flame/variations.hpp"

namespace gemflow::flame::detail {

/// Xform selection: one table of kGrain xform indices per row (row 0: by weight; row 1 + j:
/// after xform j, by weight·chaos[j][·]), as flam3's xform_distrib.
inline constexpr int kGrain = 16384;
/// Histogram fixed point: 2^24 units per unit of colour or opacity.
inline constexpr double kFixedOne = 16777216.0;
/// Bad point: NaN or a coordinate beyond ±1e10 (flam3's badvalue).
inline constexpr double kBadLimit = 1e10;

template <class R>
struct KXform {
  R coefs[6];
  R post[6];
  int has_post;
  R color, color_speed;
  R vis;       ///< adjusted opacity 10^(−log2(1/opacity)); 0: not plotted
  R pre_blur;  ///< weight of pre_blur (0: none)
  int need_xy, need_yx;
  int nvars;
  int var_id[kNumVariations];
  R var_w[kNumVariations];
  R param[kNumVarParams];
};

template <class R>
struct Camera {
  R cx, cy, cos_r, sin_r;
  R k;  ///< cells per flame unit: scale·2^zoom·ss
  R half_w, half_h;
  int width, height;  ///< histogram cells
};

/// One xform applied to (x, y, c): false when the result is a bad point (out unchanged then).
template <class R, class Rng>
GF_FLAME_HD inline bool apply_xform(const KXform<R>& xf, R x, R y, R c, R& ox, R& oy, R& oc, Rng& rng) {
  R tx = xf.coefs[0] * x + xf.coefs[2] * y + xf.coefs[4];
  R ty = xf.coefs[1] * x + xf.coefs[3] * y + xf.coefs[5];
  if (xf.pre_blur != R(0)) apply_pre_blur(xf.pre_blur, tx, ty, rng);
  VarPoint<R> q;
  q.tx = tx;
  q.ty = ty;
  q.sumsq = tx * tx + ty * ty;
  q.sqrt_ = sqrt(q.sumsq);
  q.atan_xy = xf.need_xy ? atan2(tx, ty) : R(0);
  q.atan_yx = xf.need_yx ? atan2(ty, tx) : R(0);
  q.coefs = xf.coefs;
  R px = 0, py = 0;
  for (int i = 0; i < xf.nvars; ++i) eval_variation(xf.var_id[i], xf.var_w[i], q, xf.param, px, py, rng);
  if (xf.has_post) {
    const R nx = xf.post[0] * px + xf.post[2] * py + xf.post[4];
    py = xf.post[1] * px + xf.post[3] * py + xf.post[5];
    px = nx;
  }
  const R lim = R(kBadLimit);
  if (!(px >= -lim && px <= lim && py >= -lim && py <= lim)) return false;  // NaN fails too
  ox = px;
  oy = py;
  oc = xf.color_speed * xf.color + (R(1) - xf.color_speed) * c;
  return true;
}

/// Histogram cell of a point, or false when it falls outside.
template <class R>
GF_FLAME_HD inline bool to_cell(const Camera<R>& cam, R x, R y, int& ix, int& iy) {
  const R dx = x - cam.cx, dy = y - cam.cy;
  const R u = (dx * cam.cos_r - dy * cam.sin_r) * cam.k + cam.half_w;
  const R v = (dx * cam.sin_r + dy * cam.cos_r) * cam.k + cam.half_h;
  if (!(u >= R(0) && v >= R(0) && u < R(cam.width) && v < R(cam.height))) return false;
  ix = static_cast<int>(u);
  iy = static_cast<int>(v);
  return ix < cam.width && iy < cam.height;
}

/// Palette colour (RGBA, premultiplied, [0, 1]) at colour coordinate c: linear interpolation
/// between neighbouring entries, or the entry itself in step mode (flam3's two palette modes).
template <class R>
GF_FLAME_HD inline void palette_color(const R* pal, int step_mode, R c, R out[4]) {
  const R f = c * R(256);
  int i0 = static_cast<int>(f);
  if (step_mode) {
    i0 = i0 < 0 ? 0 : (i0 > 255 ? 255 : i0);
    for (int k = 0; k < 4; ++k) out[k] = pal[i0 * 4 + k];
    return;
  }
  R frac;
  if (f < R(0)) {
    i0 = 0;
    frac = 0;
  } else if (i0 >= 255) {
    i0 = 254;
    frac = 1;
  } else {
    frac = f - R(i0);
  }
  for (int k = 0; k < 4; ++k) out[k] = pal[i0 * 4 + k] * (R(1) - frac) + pal[(i0 + 1) * 4 + k] * frac;
}

/// Fixed-point increment of one channel (v ∈ [0, 1]).
template <class R>
GF_FLAME_HD inline unsigned long long to_fixed(R v) {
  return static_cast<unsigned long long>(v * R(kFixedOne) + R(0.5));
}

/// Log-density value of one cell (flam3 units: colour channels and alpha up to ~255·brightness).
template <class U>
GF_FLAME_HD inline void log_density(const U h[4], double k1, double k2, double out[4]) {
  const double a = static_cast<double>(h[3]) / kFixedOne;
  if (a <= 0) {
    out[0] = out[1] = out[2] = out[3] = 0;
    return;
  }
  const double ls = k1 * log1p(a * k2) / a;
  for (int c = 0; c < 4; ++c) out[c] = static_cast<double>(h[c]) / kFixedOne * ls;
}

GF_FLAME_HD inline void rgb_to_hsv(const double rgb[3], double hsv[3]) {
  const double mx = fmax(rgb[0], fmax(rgb[1], rgb[2])), mn = fmin(rgb[0], fmin(rgb[1], rgb[2]));
  const double d = mx - mn;
  double h = 0, s = mx != 0 ? d / mx : 0;
  if (s != 0) {
    if (rgb[0] == mx) h = (rgb[1] - rgb[2]) / d;
    else if (rgb[1] == mx) h = 2 + (rgb[2] - rgb[0]) / d;
    else h = 4 + (rgb[0] - rgb[1]) / d;
    if (h < 0) h += 6;
  }
  hsv[0] = h;  // sextants, [0, 6)
  hsv[1] = s;
  hsv[2] = mx;
}

GF_FLAME_HD inline void hsv_to_rgb(const double hsv[3], double rgb[3]) {
  double h = fmod(hsv[0], 6.0);
  if (h < 0) h += 6;
  const double s = hsv[1], v = hsv[2];
  const int j = static_cast<int>(floor(h));
  const double f = h - j, p = v * (1 - s), q = v * (1 - s * f), t = v * (1 - s * (1 - f));
  double r = v, g = t, b = p;
  switch (j) {
    case 1:
      r = q;
      g = v;
      b = p;
      break;
    case 2:
      r = p;
      g = v;
      b = t;
      break;
    case 3:
      r = p;
      g = q;
      b = v;
      break;
    case 4:
      r = t;
      g = p;
      b = v;
      break;
    case 5:
      r = v;
      g = p;
      b = q;
      break;
    default: break;
  }
  rgb[0] = r;
  rgb[1] = g;
  rgb[2] = b;
}

struct ToneParams {
  double inv_gamma, linrange, vibrancy, highlight_power;
  double background[3];  ///< 0–255 scale
  /// flam3's transparency: no background under the flame, RGB divided by alpha (straight, not
  /// premultiplied) and alpha written; otherwise the background fills 1 − alpha and alpha is 255.
  int transparent;
};

/// Tone map of one value t (flam3 units: a filtered pixel, or with earlyclip one accumulator
/// cell) to RGB clamped to [0, 255] and alpha in [0, 1] (flam3's calc_alpha, calc_newrgb,
/// background or division by alpha, and its clamp).
GF_FLAME_HD inline void tone_values(const double t[4], const ToneParams& p, double out[4]) {
  const double white = 255.0;
  if (t[0] == 0 && t[1] == 0 && t[2] == 0 && t[3] == 0) {  // nothing plotted: the background
    for (int c = 0; c < 3; ++c) {
      const double b = p.transparent ? 0.0 : p.background[c];
      out[c] = b > 255 ? 255 : (b < 0 ? 0 : b);
    }
    out[3] = 0;
    return;
  }
  double alpha = 0, ls = 0;
  if (t[3] > 0) {
    const double d = t[3] / white;
    if (d < p.linrange) {
      const double frac = d / p.linrange;
      alpha = (1 - frac) * d * (pow(p.linrange, p.inv_gamma) / p.linrange) + frac * pow(d, p.inv_gamma);
    } else {
      alpha = pow(d, p.inv_gamma);
    }
    ls = p.vibrancy * 256.0 * alpha / d;
    alpha = alpha < 0 ? 0 : (alpha > 1 ? 1 : alpha);
  }
  double rgb[3] = {0, 0, 0};
  if (ls != 0 && (t[0] != 0 || t[1] != 0 || t[2] != 0)) {
    double maxa = -1, maxc = 0;
    for (int c = 0; c < 3; ++c) {
      const double a = ls * (t[c] / white);
      if (a > maxa) {
        maxa = a;
        maxc = t[c] / white;
      }
    }
    const double newls = 255.0 / maxc;
    if (maxa > 255 && p.highlight_power >= 0) {
      // Saturated: keep the hue, scale to the brightest channel, desaturate by (newls/ls)^power.
      const double ratio = pow(newls / ls, p.highlight_power);
      double c01[3], hsv[3];
      for (int c = 0; c < 3; ++c) c01[c] = newls * (t[c] / white) / 255.0;
      rgb_to_hsv(c01, hsv);
      hsv[1] *= ratio;
      hsv_to_rgb(hsv, c01);
      for (int c = 0; c < 3; ++c) rgb[c] = c01[c] * 255.0;
    } else {
      double adj = -p.highlight_power;
      if (adj > 1) adj = 1;
      if (maxa <= 255) adj = 1;
      for (int c = 0; c < 3; ++c) rgb[c] = ((1 - adj) * newls + adj * ls) * (t[c] / white);
    }
  }
  for (int c = 0; c < 3; ++c) {
    double a = rgb[c];
    if (p.vibrancy != 1) a += (1 - p.vibrancy) * 256.0 * pow(t[c] / white, p.inv_gamma);
    if (!p.transparent) a += (1 - alpha) * p.background[c];
    else a = alpha > 0 ? a / alpha : 0;
    out[c] = a > 255 ? 255 : (a < 0 ? 0 : a);
  }
  out[3] = alpha;
}

/// 8-bit RGBA of tone values as flam3-render writes them: RGB clamped and truncated; alpha
/// truncated from [0, 1]·255 when transparent, else 255.
GF_FLAME_HD inline void to_rgba8(const double v[4], const ToneParams& p, unsigned char out[4]) {
  for (int c = 0; c < 3; ++c) {
    const double a = v[c];
    out[c] = static_cast<unsigned char>(a > 255 ? 255 : (a < 0 ? 0 : a));
  }
  const double alpha = v[3] > 1 ? 1 : (v[3] < 0 ? 0 : v[3]);
  out[3] = p.transparent ? static_cast<unsigned char>(alpha * 255) : 255;
}

/// flam3's spatial filter kernels (filters.c), x in filter-support units.
GF_FLAME_HD inline double sinc(double x) {
  x *= 3.14159265358979323846;
  return x != 0 ? sin(x) / x : 1.0;
}
inline double filter_support(int shape) {
  constexpr double s[14] = {1.5, 1.0, 0.5, 1.0, 1.5, 2.0, 2.0, 1.0, 2.0, 1.0, 1.0, 3.0, 2.0, 1.5};
  return s[shape];
}
double filter_value(int shape, double x);

}  // namespace gemflow::flame::detail
