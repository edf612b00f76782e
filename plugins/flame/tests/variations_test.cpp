// The variations: the paper's closed forms (and the complex functions flam3 names) written
// independently here, at random points; and every one of the 99 in fp32 against fp64.
#include <gtest/gtest.h>

#include <cmath>
#include <complex>
#include <functional>
#include <map>
#include <random>
#include <set>

#include "gemflow/flame/detail/core.hpp"
#include "gemflow/flame/flame.hpp"

namespace gemflow::flame {
namespace {

using C = std::complex<double>;

template <class R>
std::pair<R, R> eval(int v, R w, R x, R y, const R* P, const R* coefs, std::uint64_t seed) {
  VarPoint<R> q;
  q.tx = x;
  q.ty = y;
  q.sumsq = x * x + y * y;
  q.sqrt_ = std::sqrt(q.sumsq);
  q.atan_xy = std::atan2(x, y);
  q.atan_yx = std::atan2(y, x);
  q.coefs = coefs;
  R px = 0, py = 0;
  Pcg32 rng(seed, 3);
  eval_variation(v, w, q, P, px, py, rng);
  return {px, py};
}

// Draves & Reckase, appendix: θ = arctan(x/y), r = √(x²+y²), with flam3's ε = 1e-10 where it
// guards a division; complex functions for the trigonometric family (flam3's coth is the
// conjugate of coth z: its definition).
std::map<int, std::function<C(double, double)>> references() {
  const double pi = 3.14159265358979323846;
  std::map<int, std::function<C(double, double)>> m;
  auto th = [](double x, double y) { return std::atan2(x, y); };
  auto rr = [](double x, double y) { return std::hypot(x, y); };
  m[kVar_linear] = [](double x, double y) { return C(x, y); };
  m[kVar_sinusoidal] = [](double x, double y) { return C(std::sin(x), std::sin(y)); };
  const double eps = 1e-10;
  m[kVar_spherical] = [=](double x, double y) { return C(x, y) / (x * x + y * y + eps); };
  m[kVar_swirl] = [](double x, double y) {
    const double r2 = x * x + y * y;
    return C(x * std::sin(r2) - y * std::cos(r2), x * std::cos(r2) + y * std::sin(r2));
  };
  m[kVar_horseshoe] = [=](double x, double y) { return C((x - y) * (x + y), 2 * x * y) / (rr(x, y) + eps); };
  m[kVar_polar] = [=](double x, double y) { return C(th(x, y) / pi, rr(x, y) - 1); };
  m[kVar_handkerchief] = [=](double x, double y) {
    const double t = th(x, y), r = rr(x, y);
    return r * C(std::sin(t + r), std::cos(t - r));
  };
  m[kVar_heart] = [=](double x, double y) {
    const double t = th(x, y), r = rr(x, y);
    return r * C(std::sin(t * r), -std::cos(t * r));
  };
  m[kVar_disc] = [=](double x, double y) {
    const double t = th(x, y), r = rr(x, y);
    return t / pi * C(std::sin(pi * r), std::cos(pi * r));
  };
  m[kVar_spiral] = [=](double x, double y) {
    const double t = th(x, y), r = rr(x, y);
    return C(std::cos(t) + std::sin(r + eps), std::sin(t) - std::cos(r + eps)) / (r + eps);
  };
  m[kVar_hyperbolic] = [=](double x, double y) {
    const double t = th(x, y), r = rr(x, y);
    return C(std::sin(t) / (r + eps), (r + eps) * std::cos(t));
  };
  m[kVar_diamond] = [=](double x, double y) {
    const double t = th(x, y), r = rr(x, y);
    return C(std::sin(t) * std::cos(r), std::cos(t) * std::sin(r));
  };
  m[kVar_ex] = [=](double x, double y) {
    const double t = th(x, y), r = rr(x, y);
    const double p0 = std::sin(t + r), p1 = std::cos(t - r);
    return r * C(std::pow(p0, 3) + std::pow(p1, 3), std::pow(p0, 3) - std::pow(p1, 3));
  };
  m[kVar_bent] = [](double x, double y) { return C(x >= 0 ? x : 2 * x, y >= 0 ? y : y / 2); };
  m[kVar_fisheye] = [=](double x, double y) { return 2 / (rr(x, y) + 1) * C(y, x); };
  m[kVar_exponential] = [=](double x, double y) { return std::exp(x - 1) * C(std::cos(pi * y), std::sin(pi * y)); };
  m[kVar_power] = [=](double x, double y) {
    const double t = th(x, y), r = rr(x, y);
    return std::pow(r, std::sin(t)) * C(std::cos(t), std::sin(t));
  };
  m[kVar_cosine] = [=](double x, double y) {
    return C(std::cos(pi * x) * std::cosh(y), -std::sin(pi * x) * std::sinh(y));
  };
  m[kVar_eyefish] = [=](double x, double y) { return 2 / (rr(x, y) + 1) * C(x, y); };
  m[kVar_bubble] = [=](double x, double y) { return 4 / (x * x + y * y + 4) * C(x, y); };
  m[kVar_cylinder] = [](double x, double y) { return C(std::sin(x), y); };
  m[kVar_tangent] = [](double x, double y) { return C(std::sin(x) / std::cos(y), std::tan(y)); };
  m[kVar_cross] = [=](double x, double y) { return C(x, y) / std::sqrt(std::pow(x * x - y * y, 2) + eps); };
  m[kVar_exp] = [](double x, double y) { return std::exp(C(x, y)); };
  m[kVar_log] = [](double x, double y) { return std::log(C(x, y)); };
  m[kVar_sin] = [](double x, double y) { return std::sin(C(x, y)); };
  m[kVar_cos] = [](double x, double y) { return std::cos(C(x, y)); };
  m[kVar_tan] = [](double x, double y) { return std::tan(C(x, y)); };
  m[kVar_sec] = [](double x, double y) { return 1.0 / std::cos(C(x, y)); };
  m[kVar_csc] = [](double x, double y) { return 1.0 / std::sin(C(x, y)); };
  m[kVar_cot] = [](double x, double y) { return 1.0 / std::tan(C(x, y)); };
  m[kVar_sinh] = [](double x, double y) { return std::sinh(C(x, y)); };
  m[kVar_cosh] = [](double x, double y) { return std::cosh(C(x, y)); };
  m[kVar_tanh] = [](double x, double y) { return std::tanh(C(x, y)); };
  m[kVar_sech] = [](double x, double y) { return 1.0 / std::cosh(C(x, y)); };
  m[kVar_csch] = [](double x, double y) { return 1.0 / std::sinh(C(x, y)); };
  m[kVar_coth] = [](double x, double y) { return std::conj(1.0 / std::tanh(C(x, y))); };
  return m;
}

TEST(Variations, ClosedFormsOfThePaperAndComplexFunctions) {
  const auto refs = references();
  EXPECT_EQ(refs.size(), 37u);
  const auto params = default_var_params();
  const double coefs[6] = {1, 0, 0, 1, 0, 0};
  std::mt19937_64 gen(35);
  std::uniform_real_distribution<double> u(-1.5, 1.5);
  for (const auto& [v, ref] : refs) {
    SCOPED_TRACE(kVariationNames[v]);
    for (int k = 0; k < 200; ++k) {
      const double x = u(gen), y = u(gen), w = 0.5 + 0.5 * u(gen);
      const auto [px, py] = eval<double>(v, w, x, y, params.data(), coefs, 1);
      const C e = w * ref(x, y);
      const double tol = 1e-9 * (1 + std::abs(e));
      EXPECT_NEAR(px, e.real(), tol) << "at (" << x << ", " << y << ")";
      EXPECT_NEAR(py, e.imag(), tol) << "at (" << x << ", " << y << ")";
    }
  }
}

TEST(Variations, AffineReadersUseTheXformCoefficients) {
  const auto params = default_var_params();
  const double c[6] = {1, 0, 0.3, -0.2, 0.7, 0.4};  // a b c d e f: waves reads c, d, e, f
  const double x = 0.3, y = -0.6;
  auto [wx, wy] = eval<double>(kVar_waves, 1.0, x, y, params.data(), c, 1);
  EXPECT_NEAR(wx, x + 0.3 * std::sin(y / (0.7 * 0.7 + 1e-10)), 1e-12);
  EXPECT_NEAR(wy, y + -0.2 * std::sin(x / (0.4 * 0.4 + 1e-10)), 1e-12);
  auto [px, py] = eval<double>(kVar_popcorn, 1.0, x, y, params.data(), c, 1);
  EXPECT_NEAR(px, x + 0.7 * std::sin(std::tan(3 * y)), 1e-12);
  EXPECT_NEAR(py, y + 0.4 * std::sin(std::tan(3 * x)), 1e-12);
  // rings: dx = e² + ε, r' = fmod(r + dx, 2dx) − dx + r(1 − dx), along (cos θ, sin θ)·r'.
  const double r = std::hypot(x, y), dx = 0.49 + 1e-10;
  const double rp = std::fmod(r + dx, 2 * dx) - dx + r * (1 - dx);
  auto [rx, ry] = eval<double>(kVar_rings, 1.0, x, y, params.data(), c, 1);
  EXPECT_NEAR(rx, rp * y / r, 1e-12);
  EXPECT_NEAR(ry, rp * x / r, 1e-12);
}

// fp32 (the GPU's precision) against fp64 on the same random draws, every variation, random
// parameters around flam3's defaults. Tolerance: 2e-3·(1 + |v|) at 95 % of the points at least
// (the rest lie within fp32 rounding of a discontinuity: fmod, floor, branch on a sign).
TEST(Variations, EveryVariationInFp32AgreesWithFp64) {
  std::mt19937_64 gen(99);
  std::uniform_real_distribution<double> u(-1.5, 1.5), pert(-0.5, 0.5);
  int tested = 0;
  for (int v = 0; v < kNumVariations; ++v) {
    if (v == kVar_pre_blur) continue;  // acts on (tx, ty): below
    SCOPED_TRACE(kVariationNames[v]);
    int ok = 0, total = 0;
    for (int k = 0; k < 400; ++k) {
      double Pd[kNumVarParams];
      float Pf[kNumVarParams];
      for (int p = 0; p < kNumVarParams; ++p) {
        Pd[p] = static_cast<double>(static_cast<float>(kVarParams[p].default_value + pert(gen)));
        Pf[p] = static_cast<float>(Pd[p]);
      }
      double cd[6];
      float cf[6];
      for (int i = 0; i < 6; ++i) cf[i] = static_cast<float>(u(gen)), cd[i] = cf[i];
      const float x = static_cast<float>(u(gen)), y = static_cast<float>(u(gen)),
                  w = static_cast<float>(0.5 + 0.5 * u(gen));
      const auto [dx, dy] = eval<double>(v, w, x, y, Pd, cd, static_cast<std::uint64_t>(k));
      const auto [fx, fy] = eval<float>(v, w, x, y, Pf, cf, static_cast<std::uint64_t>(k));
      if (!std::isfinite(dx) || !std::isfinite(dy) || std::fabs(dx) > 1e6 || std::fabs(dy) > 1e6) continue;
      ++total;
      if (std::fabs(fx - dx) <= 2e-3 * (1 + std::fabs(dx)) && std::fabs(fy - dy) <= 2e-3 * (1 + std::fabs(dy))) ++ok;
    }
    ASSERT_GT(total, 100) << "too few finite points";
    EXPECT_GE(ok, total * 95 / 100) << ok << " of " << total;
    ++tested;
  }
  EXPECT_EQ(tested, kNumVariations - 1);
  // pre_blur moves (tx, ty) by a radial jitter of at most 2·weight.
  for (int k = 0; k < 100; ++k) {
    double tx = 0.25, ty = -0.5;
    float fx = 0.25f, fy = -0.5f;
    Pcg32 a(static_cast<std::uint64_t>(k), 1), b(static_cast<std::uint64_t>(k), 1);
    apply_pre_blur(0.3, tx, ty, a);
    apply_pre_blur(0.3f, fx, fy, b);
    EXPECT_LE(std::hypot(tx - 0.25, ty + 0.5), 0.6 + 1e-12);
    EXPECT_NEAR(fx, tx, 1e-5);
    EXPECT_NEAR(fy, ty, 1e-5);
  }
}

TEST(Variations, NamesAndParametersFollowFlam3) {
  EXPECT_EQ(variation_index("linear"), 0);
  EXPECT_EQ(variation_index("julian"), 32);
  EXPECT_EQ(variation_index("pre_blur"), 67);
  EXPECT_EQ(variation_index("mobius"), 98);
  EXPECT_EQ(variation_index("linear3D"), -1);
  std::set<int> with_params;
  for (const auto& p : kVarParams) with_params.insert(p.variation);
  EXPECT_EQ(with_params.size(), 39u);
  EXPECT_EQ(var_param_index("oscope_frequency"), var_param_index("oscilloscope_frequency"));
  EXPECT_DOUBLE_EQ(default_var_params()[kP_pie_slices], 6);
  EXPECT_DOUBLE_EQ(default_var_params()[kP_julian_dist], 1);
}

}  // namespace
}  // namespace gemflow::flame
