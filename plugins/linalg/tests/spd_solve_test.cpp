// SPD solves on the CPU (fp64, fp32, mixed) and the linalg.spd_solve node with a fake context.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <random>
#include <regex>

#include <gemflow/device.hpp>
#include <gemflow/linalg/spd_solve.hpp>
#include <gemflow/node.hpp>
#include <gemflow/plugin.hpp>
#include <gemflow/testing.hpp>
#include <gemflow/types.hpp>

#include "../algo/normwise.hpp"
#include "register.hpp"

using namespace gemflow;
using namespace gemflow::linalg;

namespace {

constexpr double kU = 0x1p-53;  // unit roundoff of fp64

/// A = Q diag(d) Qᵀ with log-uniform d in [1, cond] (Q from Householder reflections of random
/// vectors), row-major, exactly symmetrised.
std::vector<double> spd_with_condition(std::size_t n, double cond, unsigned seed) {
  std::mt19937_64 rng(seed);
  std::normal_distribution<double> g;
  std::vector<double> a(n * n, 0.0);
  for (std::size_t i = 0; i < n; ++i)
    a[i * n + i] = std::pow(cond, n > 1 ? static_cast<double>(i) / static_cast<double>(n - 1) : 0.0);
  for (int r = 0; r < 3; ++r) {  // A ← H A H, H = I − 2 v vᵀ / vᵀv
    std::vector<double> v(n), av(n, 0.0);
    double vv = 0.0;
    for (auto& x : v) {
      x = g(rng);
      vv += x * x;
    }
    for (std::size_t i = 0; i < n; ++i)
      for (std::size_t j = 0; j < n; ++j) av[i] += a[i * n + j] * v[j];
    double vav = 0.0;
    for (std::size_t i = 0; i < n; ++i) vav += v[i] * av[i];
    for (std::size_t i = 0; i < n; ++i)
      for (std::size_t j = 0; j < n; ++j)
        a[i * n + j] += -2.0 / vv * (v[i] * av[j] + av[i] * v[j]) + 4.0 * vav / (vv * vv) * v[i] * v[j];
  }
  for (std::size_t i = 0; i < n; ++i)
    for (std::size_t j = 0; j < i; ++j) a[j * n + i] = a[i * n + j];
  return a;
}

std::vector<double> random_vec(std::size_t n, unsigned seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  std::vector<double> v(n);
  for (auto& x : v) x = u(rng);
  return v;
}

/// Brute-force ρ = max_c ‖b − A x‖∞ / (‖A‖∞ ‖x‖∞) in long double (full A, row-major).
double brute_rho(const std::vector<double>& a, std::size_t n, const std::vector<double>& b,
                 const std::vector<double>& x, std::size_t k) {
  long double anorm = 0;
  for (std::size_t i = 0; i < n; ++i) {
    long double s = 0;
    for (std::size_t j = 0; j < n; ++j) s += std::fabs(static_cast<long double>(a[i * n + j]));
    anorm = std::max(anorm, s);
  }
  long double rho = 0;
  for (std::size_t c = 0; c < k; ++c) {
    long double rn = 0, xn = 0;
    for (std::size_t i = 0; i < n; ++i) {
      long double s = b[i * k + c];
      for (std::size_t j = 0; j < n; ++j) s -= static_cast<long double>(a[i * n + j]) * x[j * k + c];
      rn = std::max(rn, std::fabs(s));
      xn = std::max(xn, std::fabs(static_cast<long double>(x[i * k + c])));
    }
    rho = std::max(rho, rn / (anorm * xn));
  }
  return static_cast<double>(rho);
}

std::unique_ptr<Node> make_solve_node() {
  static Registry reg;
  static bool once = [] {
    PluginRegistrar r(reg, "linalg-test");
    register_solve_nodes(r);
    return true;
  }();
  (void)once;
  return gemflow::testing::make_node(reg, "linalg.spd_solve");
}

const Table::Cell& cell(const Table& t, const std::string& col) {
  const int c = t.column(col);
  EXPECT_GE(c, 0) << col;
  return t.rows.at(0).at(static_cast<std::size_t>(c));
}

}  // namespace

// ---- algorithms --------------------------------------------------------------------------------

TEST(SpdSolveCpu, Fp64IsBackwardStableAndMatchesABruteForceResidual) {
  for (std::size_t n : {1u, 7u, 61u, 200u}) {
    const auto a = spd_with_condition(n, 1e8, 11 + static_cast<unsigned>(n));
    const std::size_t k = 3;
    const auto b = random_vec(n * k, 5);
    std::vector<double> x(n * k, std::nan(""));
    const auto r = spd_solve_cpu(a, n, b, k, x, SolvePrecision::fp64);
    ASSERT_EQ(r.info, 0);
    const auto norms = residual_norms(a, n, b, k, x);
    const double rho = brute_rho(a, n, b, x, k);
    // ρ is a backward error: O(u) whatever κ = 1e8; the bound n·u is the realistic form of
    // Higham's γ_{3n+1}-type bounds (rounding errors grow like √n to n in practice).
    EXPECT_LT(rho, static_cast<double>(n) * kU + kU) << "n = " << n;
    // residual_norms computes r in fp64: agrees with the long-double residual to O(n·u·|A||x|).
    EXPECT_NEAR(norms.relative_residual, rho, 4.0 * static_cast<double>(n) * kU) << n;
    EXPECT_LE(norms.backward_error, norms.relative_residual);
  }
}

TEST(SpdSolveCpu, Fp32ResidualIsSinglePrecisionLevel) {
  const std::size_t n = 150;
  const auto a = spd_with_condition(n, 1e3, 3);
  const auto b = random_vec(n, 4);
  std::vector<double> x(n);
  const auto r = spd_solve_cpu(a, n, b, 1, x, SolvePrecision::fp32);
  ASSERT_EQ(r.info, 0);
  const double rho = brute_rho(a, n, b, x, 1);
  const double u32 = 0x1p-24;
  EXPECT_LT(rho, static_cast<double>(n) * u32);
  EXPECT_GT(rho, 1e3 * kU);  // visibly single precision: tells fp32 from fp64
}

TEST(SpdSolveCpu, MixedRefinesToFp64BackwardErrorWithHistory) {
  const std::size_t n = 180;
  const auto a = spd_with_condition(n, 1e4, 8);
  const auto b = random_vec(n * 2, 9);
  std::vector<double> x(n * 2), x64(n * 2);
  const auto r = spd_solve_cpu(a, n, b, 2, x, SolvePrecision::mixed);
  ASSERT_EQ(r.info, 0);
  EXPECT_EQ(r.fp32_info, 0);
  EXPECT_TRUE(r.converged);
  EXPECT_FALSE(r.used_fp64_fallback);
  EXPECT_DOUBLE_EQ(r.tolerance, std::sqrt(static_cast<double>(n)) * kU);
  ASSERT_EQ(r.backward_error.size(), static_cast<std::size_t>(r.iterations) + 1);
  EXPECT_GT(r.backward_error.front(), 1e-10);  // the fp32 solve alone
  EXPECT_LE(r.backward_error.back(), r.tolerance);
  EXPECT_GE(r.iterations, 1);
  EXPECT_LE(r.iterations, 6);  // κ·u32 ≈ 6e-4: each step gains ≈ 3 digits
  // Same accuracy as the fp64 solve: forward difference within κ·n·u.
  ASSERT_EQ(spd_solve_cpu(a, n, b, 2, x64, SolvePrecision::fp64).info, 0);
  double diff = 0, xn = 0;
  for (std::size_t i = 0; i < x.size(); ++i) {
    diff = std::max(diff, std::abs(x[i] - x64[i]));
    xn = std::max(xn, std::abs(x64[i]));
  }
  EXPECT_LT(diff / xn, 1e4 * static_cast<double>(n) * kU);
}

TEST(SpdSolveCpu, MixedFallsBackWhenFp32CannotFactor) {
  // κ = 1e12 ≫ 1/u32: the fp32 factor breaks down or refinement cannot converge.
  const std::size_t n = 60;
  const auto a = spd_with_condition(n, 1e12, 21);
  const auto b = random_vec(n, 22);
  std::vector<double> x(n);
  const auto r = spd_solve_cpu(a, n, b, 1, x, SolvePrecision::mixed);
  ASSERT_EQ(r.info, 0);
  EXPECT_TRUE(r.used_fp64_fallback);
  EXPECT_TRUE(r.fp32_info != 0 || !r.converged);
  EXPECT_LT(brute_rho(a, n, b, x, 1), static_cast<double>(n) * kU);
  // Without the fallback the failure is reported, not hidden.
  RefinementOptions no_fb;
  no_fb.fallback_fp64 = false;
  const auto r2 = spd_solve_cpu(a, n, b, 1, x, SolvePrecision::mixed, no_fb);
  EXPECT_FALSE(r2.used_fp64_fallback);
  EXPECT_TRUE(r2.info != 0 || !r2.converged);
}

// GMRES-IR: where refinement with the fp32 factor stagnates or crawls (κ = 3e8: κ·u32 ≈ 18),
// FGMRES preconditioned by the same factor reaches fp64 backward error in a few steps without the
// fp64 fallback. Whether classic refinement reaches the tolerance before its 30-step limit depends
// on the BLAS's rounding: it stagnated to the limit where this test was written, and crept under the
// tolerance at step 28 with OpenBLAS on an AMD EPYC; either way it takes far more steps.
TEST(SpdSolveCpu, MixedGmresIrConvergesBeyondClassicRefinement) {
  const std::size_t n = 200, k = 2;
  const auto a = spd_with_condition(n, 3e8, 31);
  const auto b = random_vec(n * k, 32);
  std::vector<double> x(n * k), x64(n * k);
  RefinementOptions classic;
  classic.gmres = false;
  const auto c = spd_solve_cpu(a, n, b, k, x, SolvePrecision::mixed, classic);
  ASSERT_EQ(c.fp32_info, 0);  // spotrf succeeds: a fallback below is the refinement's failure
  EXPECT_EQ(c.gmres_steps, 0);
  if (c.converged) {
    EXPECT_FALSE(c.used_fp64_fallback);
    EXPECT_GE(c.iterations, 20) << "classic refinement at κ·u32 ≈ 18 converged fast";
  } else {
    EXPECT_TRUE(c.used_fp64_fallback);
    EXPECT_EQ(c.iterations, classic.max_iterations);
  }

  const auto r = spd_solve_cpu(a, n, b, k, x, SolvePrecision::mixed);
  ASSERT_EQ(r.info, 0);
  EXPECT_TRUE(r.converged);
  EXPECT_FALSE(r.used_fp64_fallback);
  EXPECT_GE(r.gmres_steps, 1);
  EXPECT_LE(r.gmres_steps, 3);
  EXPECT_GE(r.gmres_iterations, r.gmres_steps);
  EXPECT_LE(r.gmres_iterations, r.gmres_steps * static_cast<int>(k) * 50);
  EXPECT_LE(r.iterations, 8);
  ASSERT_EQ(r.backward_error.size(), static_cast<std::size_t>(r.iterations) + 1);
  EXPECT_LE(r.backward_error.back(), r.tolerance);
  EXPECT_LT(brute_rho(a, n, b, x, k), static_cast<double>(n) * kU);
  // the fp64 solve's answer, to the conditioning (κ·n·u)
  ASSERT_EQ(spd_solve_cpu(a, n, b, k, x64, SolvePrecision::fp64).info, 0);
  double diff = 0, xn = 0;
  for (std::size_t i = 0; i < x.size(); ++i) {
    diff = std::max(diff, std::abs(x[i] - x64[i]));
    xn = std::max(xn, std::abs(x64[i]));
  }
  EXPECT_LT(diff / xn, 3e8 * static_cast<double>(n) * kU);
}

TEST(SpdSolveCpu, IndefiniteReportsTheFailingMinor) {
  // Leading minors 2, −1: the second fails.
  const std::vector<double> a = {2, 0, 0, 0, -1, 0, 0, 0, 3};
  const std::vector<double> b = {1, 1, 1};
  std::vector<double> x(3);
  EXPECT_EQ(spd_solve_cpu(a, 3, b, 1, x, SolvePrecision::fp64).info, 2);
  EXPECT_EQ(spd_solve_cpu(a, 3, b, 1, x, SolvePrecision::fp32).info, 2);
  const auto m = spd_solve_cpu(a, 3, b, 1, x, SolvePrecision::mixed);
  EXPECT_EQ(m.fp32_info, 2);
  EXPECT_TRUE(m.used_fp64_fallback);
  EXPECT_EQ(m.info, 2);
  EXPECT_THROW((void)spd_solve_cpu(a, 2, b, 1, x, SolvePrecision::fp64), std::invalid_argument);
}

// Regression (QA): an fp32 solve that overflowed (x = ±inf) reported success with ρ = 0: the
// residual b − A x held NaN (0·inf), which std::max dropped, and r/‖x‖ = r/∞ = 0.
TEST(SpdSolveCpu, OverflowingSinglePrecisionSolveIsNeverSuccess) {
  // A = 1e-20·I, b = 1e20·(1, 2, 3): x = 1e40·(1, 2, 3), beyond fp32 (3.4e38), fine in fp64
  const std::vector<double> a{1e-20, 0, 0, 0, 1e-20, 0, 0, 0, 1e-20}, b{1e20, 2e20, 3e20};
  std::vector<double> x(3);
  EXPECT_THROW((void)spd_solve_cpu(a, 3, b, 1, x, SolvePrecision::fp32), std::runtime_error);
  // mixed factors the equilibrated S·A·S = I here (S = 2^74·I, exact): no subnormal fp32 pivots
  // (before equilibration: "not converged" → fp64 fallback), fp64 accuracy by refinement
  const std::vector<double> t{1e-45, 0, 0, 0, 1e-45, 0, 0, 0, 1e-45}, bt{8, 18, 10};
  const auto r = spd_solve_cpu(t, 3, bt, 1, x, SolvePrecision::mixed);
  EXPECT_EQ(r.info, 0);
  EXPECT_FALSE(r.used_fp64_fallback);
  EXPECT_TRUE(r.converged);
  for (std::size_t i = 0; i < 3; ++i) EXPECT_NEAR(x[i] / (bt[i] * 1e45), 1.0, 1e-14) << i;
  // entries beyond fp32 even after equilibration (only a matrix that is not SPD has them): no
  // fp32 factor, and the fp64 fallback reports the failing minor
  const std::vector<double> h{1, 1e39, 1e39, 1}, bh{1, 1};
  std::vector<double> xh(2);
  const auto rh = spd_solve_cpu(h, 2, bh, 1, xh, SolvePrecision::mixed);
  EXPECT_NE(rh.fp32_info, 0);
  EXPECT_TRUE(rh.used_fp64_fallback);
  EXPECT_EQ(rh.info, 2);
  // the measures of a non-finite solution are infinite, never 0
  const std::vector<double> xinf{std::numeric_limits<double>::infinity(), 1, 1};
  const auto nr = residual_norms(a, 3, b, 1, xinf);
  EXPECT_FALSE(nr.relative_residual <= 1.0) << nr.relative_residual;
  EXPECT_FALSE(nr.backward_error <= 1.0) << nr.backward_error;
}

// QA: diag(1e30, 1e-30) with b = A·1 gave x = (1, 0) in mixed precision (normwise converged, but
// worse than precision fp32's (1, 1)): the fp32 solve scaled b by 1e30, and 1e-60 underflowed.
// The mixed solve factors and solves the equilibrated S·A·S now (equilibration.hpp).
TEST(SpdSolveCpu, MixedEquilibratesABadlyScaledMatrix) {
  // x = S·y with S·A·S = I and y = S⁻¹·1 spanning a factor s: within fp32's range up to s ≈ 1e37,
  // and then every component as accurate as precision fp32's (normwise refinement stops at once:
  // η is far below its tolerance)
  for (double s : {1e20, 1e30, 1e36}) {
    const std::vector<double> a{s, 0, 0, 1 / s}, b{s, 1 / s};
    std::vector<double> x(2), x32(2);
    const auto r = spd_solve_cpu(a, 2, b, 1, x, SolvePrecision::mixed);
    ASSERT_EQ(r.info, 0) << s;
    EXPECT_TRUE(r.converged) << s;
    EXPECT_FALSE(r.used_fp64_fallback) << s;
    ASSERT_EQ(spd_solve_cpu(a, 2, b, 1, x32, SolvePrecision::fp32).info, 0) << s;
    for (std::size_t i = 0; i < 2; ++i) {
      EXPECT_NEAR(x[i], 1.0, 0x1p-22) << s << ' ' << i;
      EXPECT_LE(std::abs(x[i] - 1.0), std::max(std::abs(x32[i] - 1.0), 0x1p-23)) << s << ' ' << i;
    }
  }
  // a full matrix with row scales over 60 orders of magnitude: A = D·C·D, C well conditioned
  const std::size_t n = 40;
  const auto c = spd_with_condition(n, 10.0, 5);
  std::vector<double> a(n * n), d(n), xt(n, 1.0), b(n, 0.0), x(n);
  for (std::size_t i = 0; i < n; ++i) d[i] = std::pow(10.0, -30.0 + 60.0 * static_cast<double>(i) / (n - 1));
  for (std::size_t i = 0; i < n; ++i)
    for (std::size_t j = 0; j < n; ++j) a[i * n + j] = d[i] * c[i * n + j] * d[j];
  for (std::size_t i = 0; i < n; ++i) xt[i] = 1.0 / d[i];  // x = D⁻¹·1, b = D·C·1
  for (std::size_t i = 0; i < n; ++i) {
    long double s = 0;
    for (std::size_t j = 0; j < n; ++j) s += static_cast<long double>(a[i * n + j]) * xt[j];
    b[i] = static_cast<double>(s);
  }
  RefinementOptions to_tolerance;
  to_tolerance.componentwise_threshold = 0.0;
  const auto r = spd_solve_cpu(a, n, b, 1, x, SolvePrecision::mixed, to_tolerance);
  ASSERT_EQ(r.info, 0);
  EXPECT_TRUE(r.converged);
  EXPECT_FALSE(r.used_fp64_fallback);
  // every component to fp64's level: the normwise η stopped the refinement at once (then at
  // fp32's level, κ(C)·u32 ≈ 1e-6), the componentwise ω goes on (ω ≤ tolerance, and the forward
  // error of each component within cond(C)·n·ω); without equilibration the components below 1e-38
  // of the largest were 0
  EXPECT_GE(r.componentwise_steps, 1);
  EXPECT_LE(r.componentwise_backward_error, r.tolerance);
  for (std::size_t i = 0; i < n; ++i) EXPECT_NEAR(x[i] * d[i], 1.0, 1e-12) << i;
  RefinementOptions normwise_only;
  normwise_only.componentwise_threshold = 1.0;
  std::vector<double> xn(n);
  const auto rn = spd_solve_cpu(a, n, b, 1, xn, SolvePrecision::mixed, normwise_only);
  EXPECT_EQ(rn.componentwise_steps, 0);
  EXPECT_GT(rn.componentwise_backward_error, 1e-10);
  double worst = 0;
  for (std::size_t i = 0; i < n; ++i) worst = std::max(worst, std::abs(xn[i] * d[i] - 1.0));
  EXPECT_GT(worst, 1e-9) << "η alone leaves the small components at fp32's accuracy";
  EXPECT_LT(worst, 1e-5);
}

// QA: A = diag(1e200, 1e-200), b = A·1 gave x = (1, 0): S·b = (1e100, 1e-100) spans more than
// fp32's range, its second entry flushed to 0 in the first solve, and η = 1e-200 / 2e200 = 0
// stopped the refinement. The componentwise ω (= 1 there) goes on. The class: systems whose
// equilibrated right-hand side spans more than fp32's range, here block-diagonal with blocks
// 1e±150 apart, solved by every fp32 solve of the CPU.
TEST(SpdSolveCpu, MixedRefinesComponentwiseBeyondTheNormwiseStop) {
  {
    const std::vector<double> a{1e200, 0, 0, 1e-200}, b{1e200, 1e-200};
    std::vector<double> x(2);
    const auto r = spd_solve_cpu(a, 2, b, 1, x, SolvePrecision::mixed);
    ASSERT_EQ(r.info, 0);
    EXPECT_TRUE(r.converged);
    EXPECT_FALSE(r.used_fp64_fallback);
    EXPECT_GE(r.componentwise_steps, 1);
    EXPECT_LE(r.componentwise_backward_error, r.tolerance);
    EXPECT_NEAR(x[0], 1.0, 4 * kU);
    EXPECT_NEAR(x[1], 1.0, 4 * kU);
  }
  const std::size_t h = 6, n = 2 * h;
  const auto c1 = spd_with_condition(h, 50.0, 11), c2 = spd_with_condition(h, 50.0, 12);
  std::vector<double> a(n * n, 0.0), b(n * 2, 0.0);
  for (std::size_t i = 0; i < h; ++i)
    for (std::size_t j = 0; j < h; ++j) {
      a[i * n + j] = 1e150 * c1[i * h + j];
      a[(h + i) * n + h + j] = 1e-150 * c2[i * h + j];
    }
  for (std::size_t i = 0; i < n; ++i) {  // column 0: b = A·1; column 1: b = A·(i + 1)
    long double s0 = 0, s1 = 0;
    for (std::size_t j = 0; j < n; ++j) {
      s0 += static_cast<long double>(a[i * n + j]);
      s1 += static_cast<long double>(a[i * n + j]) * static_cast<long double>(j + 1);
    }
    b[i * 2] = static_cast<double>(s0);
    b[i * 2 + 1] = static_cast<double>(s1);
  }
  std::vector<double> x(n * 2), x64(n * 2);
  const auto r = spd_solve_cpu(a, n, b, 2, x, SolvePrecision::mixed);
  ASSERT_EQ(r.info, 0);
  EXPECT_TRUE(r.converged);
  EXPECT_FALSE(r.used_fp64_fallback);
  EXPECT_GE(r.componentwise_steps, 1);
  EXPECT_LE(r.componentwise_backward_error, r.tolerance);
  ASSERT_EQ(r.backward_error.size(), static_cast<std::size_t>(r.iterations) + 1);
  ASSERT_EQ(spd_solve_cpu(a, n, b, 2, x64, SolvePrecision::fp64).info, 0);
  for (std::size_t i = 0; i < n; ++i) {
    EXPECT_NEAR(x[i * 2], 1.0, 1e-13) << i;
    EXPECT_NEAR(x[i * 2 + 1] / static_cast<double>(i + 1), 1.0, 1e-13) << i;
    EXPECT_NEAR(x64[i * 2], 1.0, 1e-13) << i;  // fp64 is as good: the target
  }
  const auto norms = residual_norms(a, n, b, 2, x);
  EXPECT_LE(norms.componentwise_backward_error, r.tolerance);
  EXPECT_NEAR(norms.componentwise_backward_error, r.componentwise_backward_error,
              1e-3 * r.componentwise_backward_error + 1e-300);
}

// QA, each a mixed solve that reported convergence with an fp32-level or wrong x:
// - η = 0 near the top of the double range: ‖A‖ + ‖b‖/‖x‖ overflowed (diag(1e308, 1), b = A·1);
// - ω = NaN when |A|·|x| + |b| overflowed, so no step ran (A = I, b = (1e308, 1e-308));
// - the iteration budget spent before the ω steps (max_iterations 2);
// - ω steps that stall (blocks 1e±150 apart of κ 1e8, where η needed GMRES-IR).
// Each now ends at x as accurate as fp64's, converged or through the fp64 fallback.
TEST(SpdSolveCpu, MixedNeverAcceptsAnXThatLostComponents) {
  struct Case {
    std::string name;
    std::size_t n;
    std::vector<double> a, b, x;  // x: the exact solution
    RefinementOptions ro;
    double tol;  // max |x_i − x*_i| / |x*_i|
  };
  std::vector<Case> cases;
  cases.push_back({"diag(1e308, 1)", 2, {1e308, 0, 0, 1}, {1e308, 1}, {1, 1}, {}, 4 * kU});
  cases.push_back({"3x3 of 1e308",
                   3,
                   {1e308, 1e307, 0, 1e307, 1e308, 1e307, 0, 1e307, 1e308},
                   {1.1e308, 1.2e308, 1.1e308},
                   {},
                   {},
                   1e-14});
  cases.push_back({"I, b = (1e308, 1e-308)", 2, {1, 0, 0, 1}, {1e308, 1e-308}, {1e308, 1e-308}, {}, 4 * kU});
  cases.push_back(
      {"diag(1e300, 1e-300), b = (1e308, 1e-300)", 2, {1e300, 0, 0, 1e-300}, {1e308, 1e-300}, {1e8, 1}, {}, 4 * kU});
  RefinementOptions two;
  two.max_iterations = 2;
  cases.push_back(
      {"diag(1e200, 1e-200), max_iterations 2", 2, {1e200, 0, 0, 1e-200}, {1e200, 1e-200}, {1, 1}, two, 4 * kU});
  {
    const std::size_t h = 20, n = 2 * h;
    const auto c1 = spd_with_condition(h, 1e8, 61), c2 = spd_with_condition(h, 1e8, 62);
    std::vector<double> a(n * n, 0.0);
    for (std::size_t i = 0; i < h; ++i)
      for (std::size_t j = 0; j < h; ++j) {
        a[i * n + j] = 1e150 * c1[i * h + j];
        a[(h + i) * n + h + j] = 1e-150 * c2[i * h + j];
      }
    RefinementOptions full;
    full.componentwise_threshold = 0.0;
    cases.push_back({"blocks 1e±150 of κ 1e8, threshold 0", n, a, {}, {}, full, 0.0});
  }
  for (auto& cs : cases) {
    const std::size_t n = cs.n;
    if (cs.b.empty()) {  // b = A·1 in long double
      cs.b.resize(n);
      for (std::size_t i = 0; i < n; ++i) {
        long double t = 0;
        for (std::size_t j = 0; j < n; ++j) t += static_cast<long double>(cs.a[i * n + j]);
        cs.b[i] = static_cast<double>(t);
      }
    }
    std::vector<double> x(n), x64(n);
    const auto r = spd_solve_cpu(cs.a, n, cs.b, 1, x, SolvePrecision::mixed, cs.ro);
    ASSERT_EQ(r.info, 0) << cs.name;
    EXPECT_TRUE(r.converged || r.used_fp64_fallback) << cs.name;
    ASSERT_EQ(spd_solve_cpu(cs.a, n, cs.b, 1, x64, SolvePrecision::fp64).info, 0) << cs.name;
    if (cs.x.empty()) {  // no exact x: as accurate as fp64's, against x* = 1
      double e = 0, e64 = 0;
      for (std::size_t i = 0; i < n; ++i) {
        e = std::max(e, std::abs(x[i] - 1.0));
        e64 = std::max(e64, std::abs(x64[i] - 1.0));
      }
      EXPECT_LE(e, 10 * e64 + 1e-15) << cs.name << ": fp64's error " << e64;
      continue;
    }
    for (std::size_t i = 0; i < n; ++i) EXPECT_NEAR(x[i] / cs.x[i], 1.0, cs.tol) << cs.name << ", x" << i;
  }
  // A second QA round, against the fp64 solve:
  // - GMRES-IR divided by a residual norm below 2⁻¹⁰²² (1/β = ∞, ∞·0 = NaN): spotrs refused the
  //   right-hand side (an error), or GMRES-IR stalled and fell back;
  // - b − A·x near double's smallest numbers rounded to 0: η = ω = 0 and an x 4e-8 off;
  // - ‖A‖∞ beyond double made η NaN, read as 0: converged with an fp32-level x.
  struct Versus {
    std::string name;
    std::size_t n;
    std::vector<double> a, b;
    double tol;  // |x / x_fp64 − 1|: both within about κ·u of x*
  };
  const std::vector<Versus> versus{
      {"GMRES-IR at 1e-300 (κ ≈ 8e5)",
       3,
       {0.635472, 0.481297, 0, 0.481297, 0.364528, 0, 0, 0, 1},
       {1.116769e-300, 8.45825e-301, 1e-300},
       1e-9},
      {"b of 3e-320", 2, {2e-100, 1e-100, 1e-100, 2e-100}, {3e-320, 3e-320}, 1e-14},
      {"row sums beyond double", 2, {1.5e308, 1e308, 1e308, 1.5e308}, {1e300, 2e300}, 1e-14}};
  for (const auto& v : versus) {
    std::vector<double> x(v.n), x64(v.n);
    SpdSolveResult r;
    ASSERT_NO_THROW(r = spd_solve_cpu(v.a, v.n, v.b, 1, x, SolvePrecision::mixed)) << v.name;
    ASSERT_EQ(r.info, 0) << v.name;
    EXPECT_TRUE(r.converged) << v.name;
    ASSERT_EQ(spd_solve_cpu(v.a, v.n, v.b, 1, x64, SolvePrecision::fp64).info, 0) << v.name;
    for (std::size_t i = 0; i < v.n; ++i) EXPECT_NEAR(x[i] / x64[i], 1.0, v.tol) << v.name << ", x" << i;
  }
  // the formula: ‖A‖ + ‖b‖/‖x‖ = 2e308 overflows; η = 1 / 2e308, not 0
  EXPECT_NEAR(linalg::detail::normwise_backward_error(1.0, 1e308, 1.0, 1e308), 5e-309, 1e-312);
  EXPECT_NEAR(linalg::detail::normwise_relative_residual(1e300, 1e10, 1e-10), 1e300, 1e287);  // ‖r‖/‖x‖ = ∞
  EXPECT_TRUE(
      std::isnan(linalg::detail::normwise_backward_error(1.0, std::numeric_limits<double>::infinity(), 1.0, 1.0)));
}

// η ≤ √n·u can leave ω 10–100× above the fp64 solve's (n = 300: ω = 3.9e-14 at κ = 17, where
// fp64 gives 4.2e-16). With componentwise_threshold 0 the steps bring it to fp64's level, and cost
// nothing when ω is there already; the default threshold (2⁻¹²) adds no step to these.
TEST(SpdSolveCpu, MixedReachesTheFp64SolvesComponentwiseBackwardError) {
  const std::size_t n = 300;
  double worst_default = 0;  // the largest ω / ω(fp64) with the default threshold
  int steps = 0;
  for (const double cond : {17.0, 1e3, 1e5, 1e6})
    for (const unsigned seed : {21u, 5u, 9u}) {
      const auto a = spd_with_condition(n, cond, seed);
      const auto b = random_vec(n, seed + 1);
      std::vector<double> x(n), x64(n), xn(n);
      RefinementOptions to_tolerance;
      to_tolerance.componentwise_threshold = 0.0;
      const auto r = spd_solve_cpu(a, n, b, 1, x, SolvePrecision::mixed, to_tolerance);
      ASSERT_EQ(r.info, 0) << cond;
      EXPECT_TRUE(r.converged) << cond;
      ASSERT_EQ(spd_solve_cpu(a, n, b, 1, x64, SolvePrecision::fp64).info, 0);
      const double w64 = residual_norms(a, n, b, 1, x64).componentwise_backward_error;
      const double w = residual_norms(a, n, b, 1, x).componentwise_backward_error;
      EXPECT_EQ(w, r.componentwise_backward_error) << cond << ' ' << seed;
      EXPECT_LE(w, r.tolerance) << cond << ' ' << seed;
      EXPECT_LE(w, 4 * w64) << cond << ' ' << seed;
      steps += r.componentwise_steps;
      const auto rn = spd_solve_cpu(a, n, b, 1, xn, SolvePrecision::mixed);  // the default threshold
      EXPECT_EQ(rn.componentwise_steps, 0);
      EXPECT_EQ(rn.iterations, r.iterations - r.componentwise_steps) << cond << ' ' << seed;
      worst_default = std::max(worst_default, residual_norms(a, n, b, 1, xn).componentwise_backward_error / w64);
    }
  EXPECT_GT(worst_default, 10.0) << "the default stop leaves ω far above fp64's in some of these";
  EXPECT_GE(steps, 1);
  EXPECT_LE(steps, 12);  // at most one per system here
}

// QA: ‖A‖∞ beyond the double range made ρ = r/∞ = 0; A·x beyond it made ρ NaN. Both are
// recomputed in long double.
TEST(SpdSolveCpu, NormsNearTheDoubleRangeStayMeaningful) {
  const double big = 1.5e308, off = 1e308;
  const std::vector<double> a = {big, 0, off, big};  // ‖A‖∞ = 2.5e308 overflows double
  const std::vector<double> x = {1, -1};
  const double ax1 = off - big;  // −5e307, exact in double
  const std::vector<double> b = {big - off, ax1 + 1e292};
  const auto r = residual_norms(a, 2, b, 1, x);
  const long double rn = std::fabs(static_cast<long double>(b[1]) - (static_cast<long double>(off) - big));
  const double rho = static_cast<double>(rn / (2.5e308L * 1.0L));
  EXPECT_GT(r.relative_residual, 0.0);
  EXPECT_NEAR(r.relative_residual, rho, 1e-6 * rho);
  EXPECT_TRUE(std::isinf(r.a_norm_inf));
  // finite ‖A‖∞ but A·x beyond the range: r = 1e308 − 1e309 = −9e308
  const std::vector<double> d = {1e308, 0, 0, 1e308}, xd = {10, 10}, bd = {1e308, 1e308};
  const auto rd = residual_norms(d, 2, bd, 1, xd);
  EXPECT_NEAR(rd.relative_residual, 0.9, 1e-12);
  EXPECT_NEAR(rd.backward_error, 9e308L / (1e309L + 1e308L), 1e-12);
  EXPECT_TRUE(std::isinf(rd.residual_inf));
  EXPECT_NEAR(rd.componentwise_backward_error, 9.0 / 11.0, 1e-12);  // 9e308 / (1e309 + 1e308)
  // ‖A‖∞ and A·x finite, |A|·|x| = 2e308 beyond double: ω in long double, not r/∞ = 0
  const std::vector<double> c = {1e300, -1e300, -1e300, 1e300}, xc = {1e8, 1e8}, bc = {1, 1};
  const auto rc = residual_norms(c, 2, bc, 1, xc);
  EXPECT_EQ(rc.residual_inf, 1.0);
  EXPECT_NEAR(rc.componentwise_backward_error, 5e-309, 1e-312);  // 1 / (2e308 + 1), subnormal
  // the other end: b − A·x below double's normal range read 0 (QA: A of 1e-100, b of 3e-320); ρ,
  // η and ω come from b and x scaled alike by a power of two, ‖r‖∞ is scaled back
  const std::vector<double> t = {2e-100, 1e-100, 1e-100, 2e-100}, bt = {3e-320, 3e-320};
  const double x0 = 3e-320 / 3e-100;                     // A·(x0, x0) = b up to rounding
  const std::vector<double> xt = {x0 * (1 + 1e-7), x0};  // the first component 1e-7 off
  const auto rt = residual_norms(t, 2, bt, 1, xt);
  EXPECT_GT(rt.backward_error, 1e-8);
  EXPECT_LT(rt.backward_error, 1e-7);
  EXPECT_GT(rt.componentwise_backward_error, 1e-8);
  EXPECT_GT(rt.relative_residual, 1e-8);
  EXPECT_LE(rt.residual_inf, 1e-320);  // r itself lies below double's normal range
}

// QA: with b = 1e308·1 and ‖A‖∞ = 5, ‖A‖∞·‖x‖∞ ≈ 2.2e308 overflowed, so η = r/∞ = 0: the mixed
// solve stopped after the fp32 solve claiming convergence (x accurate to fp32 only), and ρ was 0.
// Every measure now divides instead (normwise.hpp).
TEST(SpdSolveCpu, MeasuresNearTheDoubleRangeNeverClaimZeroError) {
  const std::vector<double> a = {4, 1, 0, 1, 3, 1, 0, 1, 2};
  const std::vector<double> b(3, 1e308);
  std::vector<double> x64(3), xm(3), x32(3);
  ASSERT_EQ(spd_solve_cpu(a, 3, b, 1, x64, SolvePrecision::fp64).info, 0);
  const auto r = spd_solve_cpu(a, 3, b, 1, xm, SolvePrecision::mixed);
  ASSERT_EQ(r.info, 0);
  EXPECT_TRUE(r.converged);
  EXPECT_FALSE(r.used_fp64_fallback);
  ASSERT_GE(r.backward_error.size(), 2u) << "the fp32 solve alone does not reach the fp64 tolerance";
  EXPECT_GT(r.backward_error.front(), 1e-12) << "η of the fp32 solution (about 1e-8), not 0";
  EXPECT_LE(r.backward_error.back(), r.tolerance);
  for (std::size_t i = 0; i < 3; ++i) EXPECT_NEAR(xm[i] / x64[i], 1.0, 1e-15) << i;
  // the report's ρ and η of a solution off by 1e-7 relative in one entry: of that order, not 0
  // (b itself is beyond fp32: precision fp32 refuses this system)
  std::vector<double> xp = x64;
  xp[0] *= 1.0 + 1e-7;
  const auto np = residual_norms(a, 3, b, 1, xp);
  EXPECT_GT(np.relative_residual, 1e-8);
  EXPECT_LT(np.relative_residual, 1e-6);
  EXPECT_GT(np.backward_error, 1e-8);
  EXPECT_THROW((void)spd_solve_cpu(a, 3, b, 1, x32, SolvePrecision::fp32), std::runtime_error);
  // the formulas alone: ‖r‖ = 1e300, ‖A‖ = 10, ‖x‖ = ‖b‖ = 1e308 (‖A‖·‖x‖ = 1e309 overflows)
  EXPECT_NEAR(linalg::detail::normwise_backward_error(1e300, 10.0, 1e308, 1e308), 1e-8 / 11, 1e-23);
  EXPECT_NEAR(linalg::detail::normwise_relative_residual(1e300, 10.0, 1e308), 1e-9, 1e-24);
  EXPECT_EQ(linalg::detail::normwise_backward_error(0.0, 10.0, 0.0, 0.0), 0.0);
  EXPECT_EQ(linalg::detail::normwise_backward_error(2.0, 10.0, 0.0, 4.0), 0.5);  // x = 0: r = b
  EXPECT_TRUE(std::isinf(linalg::detail::normwise_relative_residual(2.0, 10.0, 0.0)));
  EXPECT_TRUE(std::isnan(linalg::detail::normwise_backward_error(std::nan(""), 10.0, 1.0, 1.0)));
}

TEST(SpdSolveCpu, NormsOfTheSymmetricLowerTriangle) {
  // Only the lower triangle is read: the upper one holds garbage here.
  const std::vector<double> a = {4, 99, 99, -1, 5, 99, 2, 0.5, 6};
  EXPECT_EQ(symmetric_norm_inf(a, 3), 8.5);  // rows: 4+1+2, 1+5+0.5, 2+0.5+6
  const std::vector<double> x = {1, 1, 1}, b = {5, 4, 8.5};
  const auto r = residual_norms(a, 3, b, 1, x);  // A·1 = (5, 4.5, 8.5): r = (0, −0.5, 0)
  EXPECT_EQ(r.residual_inf, 0.5);
  EXPECT_DOUBLE_EQ(r.relative_residual, 0.5 / 8.5);
  EXPECT_DOUBLE_EQ(r.backward_error, 0.5 / (8.5 + 8.5));
  // ω: row 1's |A|·|x| + |b| = 1 + 5 + 0.5 + 4; the other rows' r is 0
  EXPECT_DOUBLE_EQ(r.componentwise_backward_error, 0.5 / 10.5);
}

// ---- node --------------------------------------------------------------------------------------

TEST(SpdSolveNode, KnownSolutionReportOnCpu) {
  const std::size_t n = 90;
  const auto av = spd_with_condition(n, 1e6, 31);
  auto node = make_solve_node();
  node->set_input("matrix", Value::make(Matrix<double>(n, n, av)));
  node->set_param("device", std::string("cpu"));
  gemflow::testing::RecordingContext ctx;
  node->execute(ctx);
  const auto x = node->output("solution").as<Matrix<double>>();
  const auto t = node->output("report").as<Table>();
  ASSERT_EQ(x->rows(), n);
  ASSERT_EQ(t->rows.size(), 1u);
  EXPECT_EQ(std::get<std::string>(cell(*t, "algorithm")), "lapack");
  EXPECT_EQ(std::get<std::string>(cell(*t, "device")), "cpu");
  EXPECT_EQ(std::get<std::string>(cell(*t, "precision")), "fp64");
  EXPECT_EQ(std::get<std::string>(cell(*t, "refinement")), "none");
  const double rho = std::get<double>(cell(*t, "relative_residual"));
  const double fwd = std::get<double>(cell(*t, "forward_error"));
  EXPECT_LT(rho, static_cast<double>(n) * kU);
  double maxdev = 0;
  for (double v : x->span()) maxdev = std::max(maxdev, std::abs(v - 1.0));
  EXPECT_EQ(fwd, maxdev);
  EXPECT_LT(fwd, 1e6 * static_cast<double>(n) * kU);  // κ·n·u
  EXPECT_GE(std::get<double>(cell(*t, "seconds")), 0.0);
  EXPECT_EQ(std::get<std::string>(ctx.records().at("device_used")), "cpu");
}

TEST(SpdSolveNode, GivenRhsMixedPrecisionReportsHistory) {
  const std::size_t n = 40;
  auto node = make_solve_node();
  node->set_input("matrix", Value::make(Matrix<double>(n, n, spd_with_condition(n, 1e3, 41))));
  node->set_input("rhs", Value::make(Matrix<double>(n, 2, random_vec(2 * n, 42))));
  node->set_param("device", std::string("cpu"));
  node->set_param("precision", std::string("mixed"));
  gemflow::testing::RecordingContext ctx;
  node->execute(ctx);
  const auto t = node->output("report").as<Table>();
  EXPECT_TRUE(std::isnan(std::get<double>(cell(*t, "forward_error"))));
  EXPECT_EQ(std::get<std::int64_t>(cell(*t, "nrhs")), 2);
  EXPECT_NE(std::get<std::string>(cell(*t, "refinement")).find("converged"), std::string::npos);
  const auto iters = std::get<std::int64_t>(cell(*t, "iterations"));
  const auto history = std::get<std::string>(cell(*t, "backward_error_history"));
  EXPECT_EQ(static_cast<std::int64_t>(std::count(history.begin(), history.end(), ' ')), iters);
  EXPECT_LT(std::get<double>(cell(*t, "relative_residual")), static_cast<double>(n) * kU);
  EXPECT_LE(std::get<double>(cell(*t, "componentwise_backward_error")), std::sqrt(static_cast<double>(n)) * kU);
}

// The report's ω, and the refinement text when componentwise steps ran (diag(1e200, 1e-200): η
// stops at x = (1, 0), ω = 1 then).
TEST(SpdSolveNode, ReportsTheComponentwiseBackwardErrorAndItsSteps) {
  auto node = make_solve_node();
  node->set_input("matrix", Value::make(Matrix<double>(2, 2, std::vector<double>{1e200, 0, 0, 1e-200})));
  node->set_param("device", std::string("cpu"));
  node->set_param("precision", std::string("mixed"));
  gemflow::testing::RecordingContext ctx;
  node->execute(ctx);
  const auto t = node->output("report").as<Table>();
  EXPECT_LE(std::get<double>(cell(*t, "forward_error")), 4 * kU);
  EXPECT_LE(std::get<double>(cell(*t, "componentwise_backward_error")), std::sqrt(2.0) * kU);
  const auto refinement = std::get<std::string>(cell(*t, "refinement"));
  // the steps for η and those for ω after it add up to `iterations` (QA: "in 3 step(s), 3 more for
  // ω" with 3 iterations counted them twice)
  EXPECT_EQ(refinement.rfind("converged to η ≤ ", 0), 0u) << refinement;
  std::smatch m;
  ASSERT_TRUE(std::regex_search(refinement, m, std::regex(" in ([0-9]+) step\\(s\\), then ([0-9]+) for ω = ")))
      << refinement;
  EXPECT_GE(std::stoi(m[2]), 1);
  EXPECT_EQ(std::stoi(m[1]) + std::stoi(m[2]), std::get<std::int64_t>(cell(*t, "iterations"))) << refinement;
  EXPECT_LE(std::get<double>(ctx.records().at("componentwise_backward_error")), std::sqrt(2.0) * kU);
  // the budget spent before ω came down: the fp64 fallback, and the text says why (QA: x = (1, 0)
  // reported as converged)
  auto spent = make_solve_node();
  spent->set_input("matrix", Value::make(Matrix<double>(2, 2, std::vector<double>{1e200, 0, 0, 1e-200})));
  spent->set_param("device", std::string("cpu"));
  spent->set_param("precision", std::string("mixed"));
  spent->set_param("max_iterations", std::int64_t{2});
  gemflow::testing::RecordingContext ctx2;
  spent->execute(ctx2);
  const auto t2 = spent->output("report").as<Table>();
  EXPECT_LE(std::get<double>(cell(*t2, "forward_error")), 4 * kU);
  const auto text = std::get<std::string>(cell(*t2, "refinement"));
  EXPECT_NE(text.find("stayed above componentwise_threshold = 2.441e-04: fp64 fallback"), std::string::npos) << text;
}

// QA: the symmetry test was entrywise only, so rounding noise next to a zero (1e-300 against 0)
// or a tiny entry beside a large diagonal was refused; it now also measures against √(a_ii·a_jj).
TEST(SpdSolveNode, AsymmetryBelowTheDiagonalScaleIsRoundingNoise) {
  for (const auto& a : {Matrix<double>(2, 2, std::vector<double>{1, 0, 1e-300, 1}),
                        Matrix<double>(2, 2, std::vector<double>{1e6, 1.0001e-10, 1e-10, 1})}) {
    auto node = make_solve_node();
    node->set_input("matrix", Value::make(a));
    node->set_param("device", std::string("cpu"));
    gemflow::testing::RecordingContext ctx;
    ASSERT_NO_THROW(node->execute(ctx)) << a(1, 0) << " vs " << a(0, 1);
    const auto x = node->output("solution").as<Matrix<double>>();
    // b = A·1 from the lower triangle: the solution is 1 to rounding
    EXPECT_NEAR((*x)(0, 0), 1.0, 1e-12);
    EXPECT_NEAR((*x)(1, 0), 1.0, 1e-12);
  }
}

// QA: an SPD matrix whose A·1 overflows, and a solve whose solution overflows, finished "done"
// with an infinite X, ρ = ∞ (null in JSON) and a forward error of 0.
TEST(SpdSolveNode, OverflowingRightHandSideOrSolutionFails) {
  auto run = [](const Matrix<double>& a, const Matrix<double>* rhs) -> std::string {
    auto node = make_solve_node();
    node->set_input("matrix", Value::make(a));
    if (rhs) node->set_input("rhs", Value::make(*rhs));
    node->set_param("device", std::string("cpu"));
    gemflow::testing::RecordingContext ctx;
    try {
      node->execute(ctx);
    } catch (const InputError& e) {
      return e.what();
    }
    return "";
  };
  const Matrix<double> big(2, 2, std::vector<double>{1.5e308, 1e308, 1e308, 1.5e308});
  EXPECT_NE(run(big, nullptr).find("b = A·1 overflows double precision in row 0"), std::string::npos)
      << run(big, nullptr);
  const Matrix<double> tiny(2, 2, std::vector<double>{1e-300, 0, 0, 1e-300}),
      b(2, 1, std::vector<double>{1e300, 1e300});
  const std::string e = run(tiny, &b);
  EXPECT_NE(e.find("the solution overflows double precision: X(0, 0) = NaN (max |A| = 1.000e-300, max |B| = "
                   "1.000e+300); scale A or B"),
            std::string::npos)
      << e;
  // the same matrix with a right-hand side it can solve: done, finite ρ
  const Matrix<double> fine(2, 1, std::vector<double>{1e-290, 2e-290});
  EXPECT_EQ(run(tiny, &fine), "");
}

// QA: precision fp32 with entries below fp32's normal range ran silently (ρ = 2.8e-6); it says
// which entry and what to use instead, and precision mixed (equilibrated) needs no such word.
TEST(SpdSolveNode, Fp32WarnsOfEntriesBelowItsNormalRange) {
  const Matrix<double> a(2, 2, std::vector<double>{4e-40, 0, 0, 3e-40});
  for (const char* prec : {"fp32", "mixed"}) {
    auto node = make_solve_node();
    node->set_input("matrix", Value::make(a));
    node->set_param("device", std::string("cpu"));
    node->set_param("precision", std::string(prec));
    gemflow::testing::RecordingContext ctx;
    node->execute(ctx);
    std::string all;
    for (const auto& w : ctx.warnings()) all += w + "\n";
    const bool warned = all.find("A(0, 0) = 4.000e-40 is below single precision's normal range") != std::string::npos;
    EXPECT_EQ(warned, std::string(prec) == "fp32") << prec << ":\n" << all;
  }
}

TEST(SpdSolveNode, ErrorsAreLoudAndSpecific) {
  auto expect_error = [](auto&& setup, const std::string& part, const std::string& override_device = "") {
    auto node = make_solve_node();
    setup(*node);
    gemflow::testing::RecordingContext ctx;
    ctx.set_device_override(override_device);
    try {
      node->execute(ctx);
      ADD_FAILURE() << "no error (expected '" << part << "')";
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find(part), std::string::npos) << e.what();
    }
  };
  const Matrix<double> indef(3, 3, std::vector<double>{2, 1, 0, 1, -1, 0, 0, 0, 3});
  expect_error(
      [&](Node& n) {
        n.set_input("matrix", Value::make(indef));
        n.set_param("device", std::string("cpu"));
      },
      "not positive definite: the leading minor of order 2");
  expect_error([&](Node& n) { n.set_input("matrix", Value::make(indef)); }, "leading minor of order 2", "cpu");
  expect_error([](Node& n) { n.set_input("matrix", Value::make(Matrix<double>(2, 3))); }, "must be square");
  expect_error(
      [](Node& n) {
        n.set_input("matrix", Value::make(Matrix<double>(2, 2, std::vector<double>{1, 2, 3, 4})));
      },
      "not symmetric: A(1, 0) = 3 but A(0, 1) = 2");
  // the diagonal scale counts: 1e-4 against 0 beside unit diagonals is an asymmetry, not rounding
  expect_error(
      [](Node& n) {
        n.set_input("matrix", Value::make(Matrix<double>(2, 2, std::vector<double>{1, 0, 1e-4, 1})));
      },
      "not symmetric: A(1, 0) = 0.0001 but A(0, 1) = 0");
  expect_error(
      [&](Node& n) {
        n.set_input("matrix", Value::make(Matrix<double>(2, 2, std::vector<double>{2, 1, 1, 2})));
        n.set_param("precision", std::string("mixed"));
        n.set_param("fp32_products", std::string("1xFP16"));
      },
      "parameter 'fp32_products' = 1xFP16 runs on the CUDA tensor cores", "cpu");
  expect_error(
      [&](Node& n) {
        n.set_input("matrix", Value::make(Matrix<double>(2, 2, std::vector<double>{2, 1, 1, 2})));
        n.set_param("fp32_products", std::string("exact"));
      },
      "parameter 'fp32_products' = exact applies to precision fp32 or mixed, not fp64", "cpu");
  // QA: tolerance 0 ran every refinement step and then fell back to fp64
  for (double tol : {0.0, 1e-17}) {
    expect_error(
        [tol](Node& n) {
          n.set_input("matrix", Value::make(Matrix<double>(2, 2, std::vector<double>{2, 1, 1, 2})));
          n.set_param("precision", std::string("mixed"));
          n.set_param("tolerance", tol);
        },
        "cannot be met: the backward error of an fp64 solution is about 2⁻⁵³", "cpu");
  }
  expect_error(
      [](Node& n) {
        n.set_input("matrix", Value::make(Matrix<double>(2, 2, std::vector<double>{1, 0, 0, std::nan("")})));
      },
      "NaN or infinity at (1, 1)");
  expect_error(
      [](Node& n) {
        n.set_input("matrix", Value::make(Matrix<double>(2, 2, std::vector<double>{1, 0, 0, 1})));
        n.set_input("rhs", Value::make(Matrix<double>(3, 1)));
      },
      "'rhs' has 3 rows");
  // fp32 out of range: overflow and underflow are named as such, with the precisions that work.
  for (auto [v, part] : std::vector<std::pair<double, std::string>>{
           {1e300, "entries of A overflow single precision (|a| > 3.4e38): use precision fp64 or mixed"},
           {1e-320,
            "A(0, 0) = 9.99989e-321 underflows single precision (|a| < 1.2e-38): use precision fp64 or mixed"}}) {
    auto node = make_solve_node();
    node->set_input("matrix", Value::make(Matrix<double>(1, 1, std::vector<double>{v})));
    node->set_param("device", std::string("cpu"));
    node->set_param("precision", std::string("fp32"));
    gemflow::testing::RecordingContext ctx;
    EXPECT_NE(gemflow::testing::error_of(*node, ctx).find(part), std::string::npos)
        << gemflow::testing::error_of(*node, ctx);
  }
  // QA: precision mixed with an algorithm it can never use is refused before the device is looked at
  // (on a machine without a GPU, the missing device used to be the only error)
  for (const char* dev : {"cpu", "cuda", "auto"})
    for (const char* algo : {"blocked", "cusolver"})
      expect_error(
          [&](Node& n) {
            n.set_input("matrix", Value::make(Matrix<double>(2, 2, std::vector<double>{2, 1, 1, 2})));
            n.set_param("precision", std::string("mixed"));
            n.set_param("algorithm", std::string(algo));
            n.set_param("device", std::string(dev));
          },
          std::string("parameter 'algorithm' = ") + algo + " cannot run precision mixed");
  // tiled runs the mixed solve on CUDA (1×FP16 tile updates): on the CPU it is the device that is wrong
  expect_error(
      [&](Node& n) {
        n.set_input("matrix", Value::make(Matrix<double>(2, 2, std::vector<double>{2, 1, 1, 2})));
        n.set_param("precision", std::string("mixed"));
        n.set_param("algorithm", std::string("tiled"));
        n.set_param("device", std::string("cpu"));
      },
      "algorithm 'tiled' runs on a CUDA GPU, but the device is 'cpu'");
  // A GPU algorithm on the CPU, lapack on CUDA: refused, never rerouted.
  const Matrix<double> eye(2, 2, std::vector<double>{1, 0, 0, 1});
  expect_error(
      [&](Node& n) {
        n.set_input("matrix", Value::make(eye));
        n.set_param("algorithm", std::string("recursive"));
        n.set_param("device", std::string("cpu"));
      },
      "algorithm 'recursive' runs on a CUDA GPU, but the device is 'cpu'");
  expect_error(
      [&](Node& n) {  // the error says where the device came from when it is the run's --device
        n.set_input("matrix", Value::make(eye));
        n.set_param("algorithm", std::string("tiled"));
      },
      "algorithm 'tiled' runs on a CUDA GPU, but the device is 'cpu' (from --device)", "cpu");
  expect_error(
      [&](Node& n) {
        n.set_input("matrix", Value::make(eye));
        n.set_param("algorithm", std::string("lapack"));
        n.set_param("device", std::string("cuda"));
      },
      "lapack runs on the CPU, but the device is 'cuda'");
  if (cuda_device_count() == 0) {
    expect_error(
        [&](Node& n) {
          n.set_input("matrix", Value::make(eye));
          n.set_param("device", std::string("cuda"));
        },
        "cuda");
    expect_error(
        [&](Node& n) {
          n.set_input("matrix", Value::make(eye));
          n.set_param("algorithm", std::string("cusolver"));
        },
        "device auto resolved to cpu (no CUDA device found)");
  }
}
