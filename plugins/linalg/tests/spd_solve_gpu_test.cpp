// spd_solve_cuda against the CPU LAPACK solve (skips without a CUDA device).
#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include <gemflow/linalg/cholesky.hpp>
#include <gemflow/linalg/spd_solve.hpp>

using namespace gemflow::linalg;

namespace {

constexpr double kU = 0x1p-53;

/// Random SPD: R Rᵀ/n + shift·I with R uniform(−1, 1) (κ of order 10 for shift 1), row-major.
std::vector<double> random_spd(std::size_t n, unsigned seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  std::vector<double> r(n * n), a(n * n, 0.0);
  for (auto& v : r) v = u(rng);
  for (std::size_t i = 0; i < n; ++i)
    for (std::size_t j = 0; j <= i; ++j) {
      double s = 0;
      for (std::size_t k = 0; k < n; ++k) s += r[i * n + k] * r[j * n + k];
      a[i * n + j] = a[j * n + i] = s / static_cast<double>(n) + (i == j ? 1.0 : 0.0);
    }
  return a;
}

bool have_gpu() {
  return spd_solve_cuda_built() && [] {
    try {
      std::vector<double> a{1}, b{1}, x{0};
      (void)spd_solve_cuda(a, 1, b, 1, x, SolvePrecision::fp64, SpdAlgorithm::cusolver, 0);
      return true;
    } catch (const std::exception&) {
      return false;
    }
  }();
}

}  // namespace

TEST(SpdSolveGpu, MatchesLapackForEveryAlgorithmAndPrecision) {
  if (!have_gpu()) GTEST_SKIP() << "no CUDA device (or built without CUDA)";
  for (std::size_t n : {1u, 37u, 300u, 1029u}) {
    const auto a = random_spd(n, static_cast<unsigned>(n));
    const std::size_t k = 3;
    std::vector<double> b(n * k);
    std::mt19937_64 rng(99);
    std::uniform_real_distribution<double> u(-1, 1);
    for (auto& v : b) v = u(rng);
    std::vector<double> ref(n * k);
    ASSERT_EQ(spd_solve_cpu(a, n, b, k, ref, SolvePrecision::fp64).info, 0);
    for (auto algo : {SpdAlgorithm::blocked, SpdAlgorithm::recursive, SpdAlgorithm::cusolver, SpdAlgorithm::lookahead,
                      SpdAlgorithm::tiled}) {
      for (auto prec : {SolvePrecision::fp64, SolvePrecision::fp32, SolvePrecision::mixed}) {
        if (prec == SolvePrecision::mixed && (algo == SpdAlgorithm::blocked || algo == SpdAlgorithm::cusolver)) {
          std::vector<double> x(n * k);
          EXPECT_THROW((void)spd_solve_cuda(a, n, b, k, x, prec, algo, 0), std::invalid_argument);
          continue;
        }
        std::vector<double> x(n * k, std::nan(""));  // poisoned
        const auto r = spd_solve_cuda(a, n, b, k, x, prec, algo, 0);
        ASSERT_EQ(r.info, 0) << r.method;
        const auto norms = residual_norms(a, n, b, k, x);
        ASSERT_TRUE(std::isfinite(norms.relative_residual)) << r.method << " n = " << n;
        const double bound = (prec == SolvePrecision::fp32 ? 0x1p-24 : kU) * 4.0 * static_cast<double>(n);
        EXPECT_LT(norms.relative_residual, bound) << r.method << " n = " << n;
        double diff = 0, xn = 0;
        for (std::size_t i = 0; i < x.size(); ++i) {
          diff = std::max(diff, std::abs(x[i] - ref[i]));
          xn = std::max(xn, std::abs(ref[i]));
        }
        EXPECT_LT(diff / xn, 100.0 * bound) << r.method << " n = " << n;  // κ ≈ 10
        if (prec == SolvePrecision::mixed) {
          EXPECT_TRUE(r.converged) << "n = " << n;
          EXPECT_FALSE(r.used_fp64_fallback);
          EXPECT_FALSE(r.backward_error.empty());
        }
      }
    }
  }
}

// The GPU mixed solve near the double range (b = 1e308·1, ‖A‖∞ = 5), the CPU solve's regression
// test: η = r/(‖A‖∞·‖x‖∞ + ‖b‖∞) with an overflowing product is 0, which would end the refinement
// after the fp32 solve. The GPU demotes b to fp32 unscaled, so its first solve may overflow and
// fall back to fp64; either way x is fp64-accurate and no step claims η = 0.
TEST(SpdSolveGpu, MixedNearTheDoubleRangeNeverClaimsZeroError) {
  if (!have_gpu()) GTEST_SKIP() << "no CUDA device (or built without CUDA)";
  const std::vector<double> a = {4, 1, 0, 1, 3, 1, 0, 1, 2};
  const std::vector<double> b(3, 1e308);
  std::vector<double> x64(3);
  ASSERT_EQ(spd_solve_cpu(a, 3, b, 1, x64, SolvePrecision::fp64).info, 0);
  for (auto algo : {SpdAlgorithm::lookahead, SpdAlgorithm::tiled, SpdAlgorithm::recursive}) {
    std::vector<double> x(3);
    const auto r = spd_solve_cuda(a, 3, b, 1, x, SolvePrecision::mixed, algo, 0);
    ASSERT_EQ(r.info, 0) << r.method;
    EXPECT_TRUE(r.converged || r.used_fp64_fallback) << r.method;
    if (!r.backward_error.empty()) {
      EXPECT_FALSE(r.backward_error.front() <= 1e-12) << r.method << ": η of the fp32 solution, not 0";
    }
    for (std::size_t i = 0; i < 3; ++i) EXPECT_NEAR(x[i] / x64[i], 1.0, 1e-15) << r.method << ' ' << i;
  }
}

TEST(SpdSolveGpu, IndefiniteMinorAndBadAlgorithm) {
  if (!have_gpu()) GTEST_SKIP() << "no CUDA device (or built without CUDA)";
  const std::vector<double> a = {2, 1, 0, 1, -1, 0, 0, 0, 3}, b = {1, 1, 1};
  std::vector<double> x(3);
  for (auto algo : {SpdAlgorithm::blocked, SpdAlgorithm::recursive, SpdAlgorithm::cusolver, SpdAlgorithm::lookahead,
                    SpdAlgorithm::tiled})
    EXPECT_EQ(spd_solve_cuda(a, 3, b, 1, x, SolvePrecision::fp64, algo, 0).info, 2);
  EXPECT_THROW((void)spd_solve_cuda(a, 3, b, 1, x, SolvePrecision::fp64, SpdAlgorithm::lapack, 0),
               std::invalid_argument);
}

// fp32_products: each mode's factor against LAPACK spotrf's (3×: fp32 accuracy; 1×: about 2⁻¹¹
// relative), its fp32 solve, and the mixed solve started from it; modes the algorithm cannot run
// and any mode with fp64 are argument errors.
TEST(SpdSolveGpu, Fp32ProductModes) {
  if (!have_gpu()) GTEST_SKIP() << "no CUDA device (or built without CUDA)";
  using M = cuda::Fp32Mode;
  const std::size_t n = 700, k = 2;
  const auto a = random_spd(n, 17);
  std::vector<float> ref32(a.begin(), a.end());
  ASSERT_EQ(cholesky(std::span<float>(ref32), n), 0);
  std::vector<double> b(n * k);
  std::mt19937_64 rng(5);
  std::uniform_real_distribution<double> u(-1, 1);
  for (auto& v : b) v = u(rng);
  for (M mode : {M::exact, M::tf32x3, M::tf32, M::fp16x3, M::fp16}) {
    const bool one = mode == M::tf32 || mode == M::fp16;
    const std::string ctx = cuda::fp32_mode_name(mode);
    std::vector<double> l(n * n, std::nan(""));
    ASSERT_EQ(cholesky_cuda(a, n, l, SolvePrecision::fp32, SpdAlgorithm::lookahead, 0, mode), 0) << ctx;
    double num = 0, den = 0;
    for (std::size_t i = 0; i < n; ++i)
      for (std::size_t j = 0; j <= i; ++j) {
        const double e = l[i * n + j] - static_cast<double>(ref32[i * n + j]);
        num += e * e;
        den += static_cast<double>(ref32[i * n + j]) * ref32[i * n + j];
      }
    EXPECT_LE(std::sqrt(num / den), one ? 4 * 0x1p-11 : 100 * static_cast<double>(n) * 0x1p-24) << ctx;
    std::vector<double> x(n * k);
    const auto r32 = spd_solve_cuda(a, n, b, k, x, SolvePrecision::fp32, SpdAlgorithm::lookahead, 0, {}, mode);
    ASSERT_EQ(r32.info, 0) << ctx;
    EXPECT_NE(r32.method.find(ctx), std::string::npos) << r32.method;
    EXPECT_LT(residual_norms(a, n, b, k, x).relative_residual, (one ? 0x1p-11 : 4.0 * n * 0x1p-24)) << ctx;
    const auto rm = spd_solve_cuda(a, n, b, k, x, SolvePrecision::mixed, SpdAlgorithm::lookahead, 0, {}, mode);
    EXPECT_TRUE(rm.converged) << ctx;
    EXPECT_FALSE(rm.used_fp64_fallback) << ctx;
    EXPECT_NE(rm.method.find(ctx), std::string::npos) << rm.method;
    EXPECT_LT(residual_norms(a, n, b, k, x).backward_error, rm.tolerance) << ctx;
    // the tiled kernel takes 1×FP16 (FP16 tile updates), no other tensor-core mode; 3×FP16 needs the
    // lookahead
    if (mode == M::fp16) {
      std::vector<double> lt(n * n, std::nan(""));
      ASSERT_EQ(cholesky_cuda(a, n, lt, SolvePrecision::fp32, SpdAlgorithm::tiled, 0, mode), 0) << ctx;
      double tnum = 0;
      for (std::size_t i = 0; i < n; ++i)
        for (std::size_t j = 0; j <= i; ++j) {
          const double e = lt[i * n + j] - static_cast<double>(ref32[i * n + j]);
          tnum += e * e;
        }
      EXPECT_LE(std::sqrt(tnum / den), 4 * 0x1p-11) << ctx << " tiled";
      const auto rt = spd_solve_cuda(a, n, b, k, x, SolvePrecision::mixed, SpdAlgorithm::tiled, 0, {}, mode);
      EXPECT_TRUE(rt.converged) << ctx << " tiled mixed";
      EXPECT_FALSE(rt.used_fp64_fallback) << ctx << " tiled mixed";
      EXPECT_LT(residual_norms(a, n, b, k, x).backward_error, rt.tolerance) << ctx << " tiled mixed";
    } else if (mode != M::exact) {
      EXPECT_THROW((void)cholesky_cuda(a, n, l, SolvePrecision::fp32, SpdAlgorithm::tiled, 0, mode),
                   std::invalid_argument)
          << ctx;
    }
    if (cuda::is_fp16_mode(mode)) {
      EXPECT_THROW((void)cholesky_cuda(a, n, l, SolvePrecision::fp32, SpdAlgorithm::recursive, 0, mode),
                   std::invalid_argument)
          << ctx;
    }
    EXPECT_THROW((void)cholesky_cuda(a, n, l, SolvePrecision::fp64, SpdAlgorithm::lookahead, 0, mode),
                 std::invalid_argument)
        << ctx;
  }
}

// The componentwise steps on the GPU (spd_solve.cpp has the CPU's): systems whose right-hand side
// (equilibrated, in the FP16 modes) spans more than fp32's range, where η alone stopped with a
// component at 0, and a full matrix with row scales over many decades, where η alone left the
// small components at fp32's accuracy; every fp32 mode, one right-hand side (our SYMV's ω) and two
// (a SYMV pass per column). The other modes do not equilibrate: their A must fit fp32.
TEST(SpdSolveGpu, MixedRefinesComponentwiseBeyondTheNormwiseStop) {
  if (!have_gpu()) GTEST_SKIP() << "no CUDA device (or built without CUDA)";
  using M = cuda::Fp32Mode;
  struct Case {
    std::string name;
    std::size_t n;
    std::vector<double> a, d;  // x* = (i + 1)^c / d_i for column c
    double tol;                // max |x_i·d_i / (i + 1)^c − 1|
    double threshold;          // componentwise_threshold (ω of η's stop: 1 for the diagonal ones)
  };
  const auto blocks = [](double scale) {
    const std::size_t h = 6, n = 2 * h;
    const auto c1 = random_spd(h, 11), c2 = random_spd(h, 12);
    std::vector<double> a(n * n, 0.0);
    for (std::size_t i = 0; i < h; ++i)
      for (std::size_t j = 0; j < h; ++j) {
        a[i * n + j] = scale * c1[i * h + j];
        a[(h + i) * n + h + j] = c2[i * h + j] / scale;
      }
    return a;
  };
  const auto dcd = [](std::size_t n, double decades, std::vector<double>& d) {
    const auto c = random_spd(n, 5);
    std::vector<double> a(n * n);
    d.resize(n);
    for (std::size_t i = 0; i < n; ++i) d[i] = std::pow(10.0, decades * (static_cast<double>(i) / (n - 1) - 0.5));
    for (std::size_t i = 0; i < n; ++i)
      for (std::size_t j = 0; j < n; ++j) a[i * n + j] = d[i] * c[i * n + j] * d[j];
    return a;
  };
  std::vector<double> d60, d18;
  const std::vector<Case> equilibrated{
      {"diag(1e200, 1e-200)", 2, {1e200, 0, 0, 1e-200}, {1, 1}, 4 * kU, 0x1p-12},
      {"blocks 1e±150", 12, blocks(1e150), std::vector<double>(12, 1.0), 1e-13, 0x1p-12},
      {"D·C·D over 60 decades", 40, dcd(40, 60.0, d60), d60, 1e-12, 0.0}};
  // (blocks 1e±30 lose nothing there: A within fp32 needs no band)
  const std::vector<Case> plain{{"diag(1e30, 1e-30)", 2, {1e30, 0, 0, 1e-30}, {1, 1}, 4 * kU, 0x1p-12},
                                {"D·C·D over 18 decades", 40, dcd(40, 18.0, d18), d18, 1e-12, 0.0}};
  for (M mode : {M::exact, M::tf32x3, M::tf32, M::fp16x3, M::fp16})
    for (const auto& cs : cuda::is_fp16_mode(mode) ? equilibrated : plain) {
      const std::size_t n = cs.n;
      for (const std::size_t k : {std::size_t{1}, std::size_t{2}}) {
        std::vector<double> b(n * k);
        for (std::size_t i = 0; i < n; ++i)
          for (std::size_t c = 0; c < k; ++c) {
            long double s = 0;
            for (std::size_t j = 0; j < n; ++j)
              s += static_cast<long double>(cs.a[i * n + j]) * (std::pow(static_cast<double>(j + 1), c) / cs.d[j]);
            b[i * k + c] = static_cast<double>(s);
          }
        const std::string ctx = cs.name + ", " + cuda::fp32_mode_name(mode) + ", nrhs " + std::to_string(k);
        RefinementOptions ro;
        ro.componentwise_threshold = cs.threshold;
        std::vector<double> x(n * k);
        const auto r = spd_solve_cuda(cs.a, n, b, k, x, SolvePrecision::mixed, SpdAlgorithm::lookahead, 0, ro, mode);
        ASSERT_EQ(r.info, 0) << ctx;
        EXPECT_TRUE(r.converged) << ctx;
        EXPECT_FALSE(r.used_fp64_fallback) << ctx;
        EXPECT_GE(r.componentwise_steps, 1) << ctx;
        EXPECT_LE(r.componentwise_backward_error, r.tolerance) << ctx;
        EXPECT_LE(residual_norms(cs.a, n, b, k, x).componentwise_backward_error, r.tolerance) << ctx;
        ASSERT_EQ(r.backward_error.size(), static_cast<std::size_t>(r.iterations) + 1) << ctx;
        for (std::size_t i = 0; i < n; ++i)
          for (std::size_t c = 0; c < k; ++c)
            EXPECT_NEAR(x[i * k + c] * cs.d[i] / std::pow(static_cast<double>(i + 1), c), 1.0, cs.tol)
                << ctx << ", x(" << i << ", " << c << ")";
        RefinementOptions normwise_only;
        normwise_only.componentwise_threshold = 1.0;
        const auto rn =
            spd_solve_cuda(cs.a, n, b, k, x, SolvePrecision::mixed, SpdAlgorithm::lookahead, 0, normwise_only, mode);
        EXPECT_FALSE(rn.used_fp64_fallback) << ctx;
        EXPECT_EQ(rn.componentwise_steps, 0) << ctx;
        EXPECT_GT(residual_norms(cs.a, n, b, k, x).componentwise_backward_error, 1e3 * r.tolerance)
            << ctx << ": η alone stops with some component wrong";
      }
    }
}

// A well-scaled system: with one right-hand side the SYMV's bound ω̂ ≥ ω stays within the default
// threshold, so ω takes no pass of its own (NaN in the result) and no step is added; threshold 0
// computes ω and refines it to the tolerance.
TEST(SpdSolveGpu, MixedBoundsOmegaWithoutAPassOfItsOwn) {
  if (!have_gpu()) GTEST_SKIP() << "no CUDA device (or built without CUDA)";
  const std::size_t n = 500;
  const auto a = random_spd(n, 23);
  std::vector<double> b(n), x(n), xf(n);
  std::mt19937_64 rng(24);
  std::uniform_real_distribution<double> u(-1, 1);
  for (auto& v : b) v = u(rng);
  const auto r = spd_solve_cuda(a, n, b, 1, x, SolvePrecision::mixed, SpdAlgorithm::lookahead, 0);
  ASSERT_EQ(r.info, 0);
  EXPECT_TRUE(r.converged);
  EXPECT_EQ(r.componentwise_steps, 0);
  EXPECT_TRUE(std::isnan(r.componentwise_backward_error));
  EXPECT_LT(residual_norms(a, n, b, 1, x).componentwise_backward_error, 0x1p-12);
  RefinementOptions full;
  full.componentwise_threshold = 0.0;
  const auto rf = spd_solve_cuda(a, n, b, 1, xf, SolvePrecision::mixed, SpdAlgorithm::lookahead, 0, full);
  ASSERT_EQ(rf.info, 0);
  EXPECT_TRUE(rf.converged);
  EXPECT_LE(rf.componentwise_backward_error, rf.tolerance);
  EXPECT_LE(residual_norms(a, n, b, 1, xf).componentwise_backward_error, rf.tolerance);
  EXPECT_EQ(rf.iterations, r.iterations + rf.componentwise_steps);
  // the bound never hides an ω above the threshold: b = column 0 of A (x* = e₀, so ω comes from
  // rows with a small |b_i|), a threshold a quarter of the ω that η alone leaves; one right-hand
  // side (the SYMV's bound) and two (the entrywise bound kernel)
  std::vector<double> b0(n);
  for (std::size_t i = 0; i < n; ++i) b0[i] = a[i * n];
  RefinementOptions off;
  off.componentwise_threshold = 1.0;
  ASSERT_TRUE(spd_solve_cuda(a, n, b0, 1, x, SolvePrecision::mixed, SpdAlgorithm::lookahead, 0, off).converged);
  const double w0 = residual_norms(a, n, b0, 1, x).componentwise_backward_error;
  ASSERT_GT(w0, 4 * std::sqrt(static_cast<double>(n)) * kU) << "η alone leaves ω above the tolerance here";
  RefinementOptions quarter;
  quarter.componentwise_threshold = w0 / 4;
  for (const std::size_t k : {std::size_t{1}, std::size_t{2}}) {
    std::vector<double> bk(n * k), xk(n * k);
    for (std::size_t i = 0; i < n; ++i)
      for (std::size_t c = 0; c < k; ++c) bk[i * k + c] = b0[i];
    const auto rq = spd_solve_cuda(a, n, bk, k, xk, SolvePrecision::mixed, SpdAlgorithm::lookahead, 0, quarter);
    EXPECT_TRUE(rq.converged) << "nrhs " << k;
    EXPECT_GE(rq.componentwise_steps, 1) << "nrhs " << k;
    EXPECT_LE(rq.componentwise_backward_error, quarter.componentwise_threshold) << "nrhs " << k;
  }
}

// The CPU's MixedNeverAcceptsAnXThatLostComponents on the GPU (default 1×FP16 lookahead; one and
// two right-hand sides): η near the top of the double range, ω whose |A|·|x| + |b| overflows
// double (the GPU's ω is ∞ there: not measurable, so the fp64 fallback), the budget spent before
// the ω steps.
TEST(SpdSolveGpu, MixedNeverAcceptsAnXThatLostComponents) {
  if (!have_gpu()) GTEST_SKIP() << "no CUDA device (or built without CUDA)";
  struct Case {
    std::string name;
    std::vector<double> a, b, x;  // 2×2
    int max_iterations;
  };
  const std::vector<Case> cases{
      {"diag(1e308, 1)", {1e308, 0, 0, 1}, {1e308, 1}, {1, 1}, 30},
      {"I, b = (1e308, 1e-308)", {1, 0, 0, 1}, {1e308, 1e-308}, {1e308, 1e-308}, 30},
      {"diag(1e300, 1e-300), b = (1e308, 1e-300)", {1e300, 0, 0, 1e-300}, {1e308, 1e-300}, {1e8, 1}, 30},
      {"diag(1e200, 1e-200), max_iterations 2", {1e200, 0, 0, 1e-200}, {1e200, 1e-200}, {1, 1}, 2}};
  for (const auto& cs : cases)
    for (const std::size_t k : {std::size_t{1}, std::size_t{2}}) {
      const std::string ctx = cs.name + ", nrhs " + std::to_string(k);
      std::vector<double> b(2 * k), x(2 * k);
      for (std::size_t i = 0; i < 2; ++i)
        for (std::size_t c = 0; c < k; ++c) b[i * k + c] = cs.b[i];
      RefinementOptions ro;
      ro.max_iterations = cs.max_iterations;
      const auto r = spd_solve_cuda(cs.a, 2, b, k, x, SolvePrecision::mixed, SpdAlgorithm::lookahead, 0, ro);
      ASSERT_EQ(r.info, 0) << ctx;
      EXPECT_TRUE(r.converged || r.used_fp64_fallback) << ctx;
      for (std::size_t i = 0; i < 2; ++i)
        for (std::size_t c = 0; c < k; ++c)
          EXPECT_NEAR(x[i * k + c] / cs.x[i], 1.0, 4 * kU) << ctx << ", x(" << i << ", " << c << ")";
    }
  // the CPU's second QA round, against the CPU fp64 solve (GMRES-IR at a residual near 1e-300,
  // b − A·x near double's smallest numbers, ‖A‖∞ beyond double)
  struct Versus {
    std::string name;
    std::size_t n;
    std::vector<double> a, b;
    double tol;
  };
  const std::vector<Versus> versus{
      {"GMRES-IR at 1e-300 (κ ≈ 8e5)",
       3,
       {0.635472, 0.481297, 0, 0.481297, 0.364528, 0, 0, 0, 1},
       {1.116769e-300, 8.45825e-301, 1e-300},
       1e-9},
      {"b of 3e-320", 2, {2e-100, 1e-100, 1e-100, 2e-100}, {3e-320, 3e-320}, 1e-14},
      {"row sums beyond double", 2, {1.5e308, 1e308, 1e308, 1.5e308}, {1e300, 2e300}, 1e-14}};
  for (const auto& v : versus)
    for (const cuda::Fp32Mode mode : {cuda::Fp32Mode::fp16, cuda::Fp32Mode::exact}) {
      const std::string ctx = v.name + ", " + cuda::fp32_mode_name(mode);
      std::vector<double> x(v.n), x64(v.n);
      SpdSolveResult r;
      ASSERT_NO_THROW(
          r = spd_solve_cuda(v.a, v.n, v.b, 1, x, SolvePrecision::mixed, SpdAlgorithm::lookahead, 0, {}, mode))
          << ctx;
      ASSERT_EQ(r.info, 0) << ctx;
      EXPECT_TRUE(r.converged || r.used_fp64_fallback) << ctx;
      ASSERT_EQ(spd_solve_cpu(v.a, v.n, v.b, 1, x64, SolvePrecision::fp64).info, 0) << ctx;
      for (std::size_t i = 0; i < v.n; ++i) EXPECT_NEAR(x[i] / x64[i], 1.0, v.tol) << ctx << ", x" << i;
    }
}

// The factor alone (the linalg.cholesky node's GPU path) against the CPU factor.
TEST(CholeskyCuda, FactorsMatchTheCpuFactor) {
  if (!have_gpu()) GTEST_SKIP() << "no CUDA device (or built without CUDA)";
  for (std::size_t n : {1u, 37u, 300u}) {
    const auto a = random_spd(n, static_cast<unsigned>(n) + 5);
    std::vector<double> ref = a;
    ASSERT_EQ(cholesky(ref, n), 0);
    std::vector<float> ref32(a.begin(), a.end());
    ASSERT_EQ(cholesky(std::span<float>(ref32), n), 0);
    for (auto algo : {SpdAlgorithm::blocked, SpdAlgorithm::recursive, SpdAlgorithm::cusolver, SpdAlgorithm::lookahead,
                      SpdAlgorithm::tiled})
      for (auto prec : {SolvePrecision::fp64, SolvePrecision::fp32}) {
        std::vector<double> l(n * n, std::nan(""));
        ASSERT_EQ(cholesky_cuda(a, n, l, prec, algo, 0), 0);
        const double tol = prec == SolvePrecision::fp64 ? 64 * kU * static_cast<double>(n) : 1e-5;
        for (std::size_t i = 0; i < n; ++i)
          for (std::size_t j = 0; j < n; ++j) {
            const double want = prec == SolvePrecision::fp64 ? ref[i * n + j] : static_cast<double>(ref32[i * n + j]);
            if (j > i) {
              ASSERT_EQ(l[i * n + j], 0.0) << "above the diagonal, n = " << n;
            } else {
              ASSERT_NEAR(l[i * n + j], want, tol) << "n = " << n << " (" << i << ", " << j << ")";
            }
          }
      }
  }
  const std::vector<double> indefinite = {2, 1, 0, 1, -1, 0, 0, 0, 3};
  std::vector<double> l(9);
  EXPECT_EQ(cholesky_cuda(indefinite, 3, l, SolvePrecision::fp64, SpdAlgorithm::lookahead, 0), 2);
  EXPECT_THROW((void)cholesky_cuda(indefinite, 3, l, SolvePrecision::mixed, SpdAlgorithm::lookahead, 0),
               std::invalid_argument);
}

TEST(CholeskyCuda, PivotedMatchesTheCpuSteps) {
  if (!have_gpu()) GTEST_SKIP() << "no CUDA device (or built without CUDA)";
  // rank-3 PSD 50×50: B Bᵀ, B 50×3
  const std::size_t n = 50, r = 3;
  std::mt19937_64 rng(11);
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  std::vector<double> b(n * r), a(n * n);
  for (auto& v : b) v = u(rng);
  for (std::size_t i = 0; i < n; ++i)
    for (std::size_t j = 0; j < n; ++j) {
      double s = 0;
      for (std::size_t k = 0; k < r; ++k) s += b[i * r + k] * b[j * r + k];
      a[i * n + j] = s;
    }
  for (std::size_t max_rank : {std::size_t{2}, std::size_t{0}}) {
    std::vector<double> cpu = a, gpu(n * n, std::nan(""));
    const auto rc = pivoted_cholesky(cpu, n, max_rank, -1.0);
    const auto rg = pivoted_cholesky_cuda(a, n, max_rank, -1.0, gpu, 0);
    ASSERT_EQ(rg.rank, rc.rank) << "max_rank " << max_rank;
    EXPECT_EQ(rg.permutation, rc.permutation) << "max_rank " << max_rank;
    for (std::size_t i = 0; i < n * n; ++i)
      ASSERT_NEAR(gpu[i], cpu[i], 1e-12) << "max_rank " << max_rank << " at " << i;
  }
}
