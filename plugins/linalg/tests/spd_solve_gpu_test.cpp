// spd_solve_cuda against the CPU LAPACK solve (skips without a CUDA device).
#include <gtest/gtest.h>

#include <cmath>
#include <random>

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

bool have_gpu() { return spd_solve_cuda_built() && [] {
  try {
    std::vector<double> a{1}, b{1}, x{0};
    (void)spd_solve_cuda(a, 1, b, 1, x, SolvePrecision::fp64, SpdAlgorithm::cusolver, 0);
    return true;
  } catch (const std::exception&) {
    return false;
  }
}(); }

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
    for (auto algo : {SpdAlgorithm::blocked, SpdAlgorithm::recursive, SpdAlgorithm::cusolver, SpdAlgorithm::lookahead}) {
      for (auto prec : {SolvePrecision::fp64, SolvePrecision::fp32, SolvePrecision::mixed}) {
        if (prec == SolvePrecision::mixed && algo != SpdAlgorithm::recursive && algo != SpdAlgorithm::lookahead) {
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

TEST(SpdSolveGpu, IndefiniteMinorAndBadAlgorithm) {
  if (!have_gpu()) GTEST_SKIP() << "no CUDA device (or built without CUDA)";
  const std::vector<double> a = {2, 1, 0, 1, -1, 0, 0, 0, 3}, b = {1, 1, 1};
  std::vector<double> x(3);
  for (auto algo : {SpdAlgorithm::blocked, SpdAlgorithm::recursive, SpdAlgorithm::cusolver, SpdAlgorithm::lookahead})
    EXPECT_EQ(spd_solve_cuda(a, 3, b, 1, x, SolvePrecision::fp64, algo, 0).info, 2);
  EXPECT_THROW((void)spd_solve_cuda(a, 3, b, 1, x, SolvePrecision::fp64, SpdAlgorithm::lapack, 0),
               std::invalid_argument);
}
