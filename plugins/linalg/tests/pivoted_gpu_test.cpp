// GPU pivoted Cholesky with restricted pivots (GpuCholesky::factor_pivoted with `allowed`,
// gemflow/linalg/cholesky_cuda.hpp) against the CPU gemflow::linalg::pivoted_cholesky_restricted.
// Skips without a CUDA device.
//
// Both perform the dpstf2 steps with the same pivot rule (largest remaining diagonal among the
// allowed rows, lowest position on ties) and unfused arithmetic in the same order, so the pivot
// sequence, rank, rank_deficient flag and tolerance must be EQUAL, and L agrees within
//   max |L_gpu − L_cpu| ≤ 64 · ε · max |L_cpu|            (in practice 0: bit-identical)
// and next_pivot within 64 · ε · max diag A. The inputs include exact ties (duplicated atoms, small
// integer Gram matrices), rank-deficient matrices, too few candidates, explicit tolerances, and
// padded leading dimensions; the strict upper triangle of A is NaN (must not be read) and the
// padding rows of L are poisoned (must come back untouched).
// Each test prints "GEMFLOW_TEST_SEED=<seed>"; set that variable to reproduce a run.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include <gemflow/linalg/cholesky.hpp>

#if GEMFLOW_LINALG_HAVE_CUDA
#include <cuda_runtime.h>

#include <gemflow/linalg/cholesky_cuda.hpp>

#include "gpu_test_support.hpp"

namespace {
namespace gc = gemflow::linalg::cuda;
constexpr double kEps = std::numeric_limits<double>::epsilon();
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr double kPoison = -7.77e77;

using gemflow::linalg::testing::Dev;
using gemflow::linalg::testing::test_seed;

/// Symmetric PSD n×n (row-major = column-major) A = X Xᵀ + shift·I, X n×r. `integer`: X entries in
/// {−2..2} (A integer: many exact diagonal ties). `dup`: rows of X copied from earlier rows with
/// this probability (duplicated atoms: exact ties in every Schur complement).
std::vector<double> gram(std::int64_t n, std::int64_t r, bool integer, double dup, std::mt19937_64& rng,
                         double shift = 0.0) {
  std::normal_distribution<double> g(0.0, 1.0);
  std::uniform_int_distribution<int> small(-2, 2);
  std::uniform_real_distribution<double> u(0.0, 1.0);
  std::vector<double> x(static_cast<std::size_t>(n * r));
  for (std::int64_t i = 0; i < n; ++i) {
    if (i > 0 && u(rng) < dup) {
      const auto src = static_cast<std::int64_t>(u(rng) * double(i));
      for (std::int64_t k = 0; k < r; ++k) x[i * r + k] = x[src * r + k];
      continue;
    }
    for (std::int64_t k = 0; k < r; ++k) x[i * r + k] = integer ? small(rng) : g(rng);
  }
  std::vector<double> a(static_cast<std::size_t>(n * n));
  for (std::int64_t i = 0; i < n; ++i)
    for (std::int64_t j = 0; j <= i; ++j) {
      double s = 0;
      for (std::int64_t k = 0; k < r; ++k) s += x[i * r + k] * x[j * r + k];
      a[i * n + j] = a[j * n + i] = i == j ? s + shift : s;
    }
  return a;
}

std::vector<unsigned char> random_flags(std::int64_t n, double p, std::mt19937_64& rng) {
  std::uniform_real_distribution<double> u(0.0, 1.0);
  std::vector<unsigned char> f(static_cast<std::size_t>(n));
  for (auto& v : f) v = u(rng) < p ? 1 : 0;
  return f;
}

struct Case {
  std::string name;
  std::vector<double> a;  // symmetric n×n
  std::int64_t n = 0;
  std::vector<unsigned char> allowed;
  std::int64_t max_rank = 0;
  double tolerance = -1.0;
};

class GpuPivotedRestricted : public ::testing::Test {
 protected:
  void SetUp() override {
    if (gc::device_count() == 0) GTEST_SKIP() << "no CUDA device: GPU restricted pivoted Cholesky tests skipped";
    seed_ = test_seed();
    std::printf("[   SEED   ] GEMFLOW_TEST_SEED=%llu\n", static_cast<unsigned long long>(seed_));
    rng_.seed(seed_);
  }

  /// Runs the GPU (lda = n + 3, ldl = n + 5, upper triangle NaN, L poisoned) and the CPU on `c`
  /// and compares everything. Returns the GPU result.
  gemflow::linalg::PivotedCholesky check(const Case& c, gc::GpuCholesky& chol) {
    gemflow::linalg::PivotedCholesky g;
    compare(c, chol, g);
    return g;
  }

  void compare(const Case& c, gc::GpuCholesky& chol, gemflow::linalg::PivotedCholesky& g) {
    const std::int64_t n = c.n, lda = n + 3, ldl = n + 5;
    const std::int64_t kcols = c.max_rank == 0 ? n : std::min(c.max_rank, n);
    const std::string ctx = c.name + " (n=" + std::to_string(n) + ", max_rank=" + std::to_string(c.max_rank) +
                            ", seed " + std::to_string(seed_) + ")";
    std::vector<double> ha(static_cast<std::size_t>(lda * n), kNaN);
    for (std::int64_t j = 0; j < n; ++j)
      for (std::int64_t i = j; i < n; ++i) ha[i + j * lda] = c.a[i * n + j];
    Dev<double> ad(ha.size()), ld(static_cast<std::size_t>(ldl * kcols));
    Dev<unsigned char> fd(c.allowed.size());
    ad.put(ha);
    ld.put(std::vector<double>(ld.n, kPoison));
    fd.put(c.allowed);
    g = chol.factor_pivoted(ad.p, n, lda, c.max_rank, c.tolerance, ld.p, ldl, fd.p);
    const auto l = ld.get();

    auto cpu = c.a;
    const auto r = gemflow::linalg::pivoted_cholesky_restricted(cpu, std::size_t(n), c.allowed, std::size_t(c.max_rank),
                                                                c.tolerance);
    EXPECT_EQ(g.rank, r.rank) << ctx;
    EXPECT_EQ(g.rank_deficient, r.rank_deficient) << ctx;
    EXPECT_EQ(g.tolerance, r.tolerance) << ctx;
    EXPECT_EQ(g.permutation, r.permutation) << ctx << ": pivot sequence differs";
    double dmax = 0;
    for (std::int64_t i = 0; i < n; ++i) dmax = std::max(dmax, std::abs(c.a[i * n + i]));
    if (std::isinf(r.next_pivot)) EXPECT_EQ(g.next_pivot, r.next_pivot) << ctx;
    else EXPECT_LE(std::abs(g.next_pivot - r.next_pivot), 64 * kEps * dmax) << ctx << ": next_pivot";
    // the pivots are allowed rows
    for (std::size_t k = 0; k < g.rank; ++k) EXPECT_NE(c.allowed[g.permutation[k]], 0) << ctx << " pivot " << k;
    double maxl = 0, diff = 0;
    std::size_t same = 0, total = 0;
    for (std::int64_t k = 0; k < kcols; ++k)
      for (std::int64_t i = 0; i < ldl; ++i) {
        const double gv = l[i + k * ldl];
        if (i >= n) {
          ASSERT_EQ(gv, kPoison) << ctx << ": padding row " << i << " of L column " << k << " written";
          continue;
        }
        ASSERT_FALSE(std::isnan(gv) || gv == kPoison) << ctx << ": L(" << i << ", " << k << ") not written";
        const double cv = std::size_t(k) < r.rank ? cpu[i * n + k] : 0.0;
        if (std::size_t(k) >= g.rank) {
          ASSERT_EQ(gv, 0.0) << ctx << ": column " << k << " ≥ rank not zero";
        }
        maxl = std::max(maxl, std::abs(cv));
        diff = std::max(diff, std::abs(gv - cv));
        same += gv == cv;
        ++total;
      }
    EXPECT_LE(diff, 64 * kEps * maxl) << ctx << ": L differs from the CPU steps";
    if (std::getenv("GEMFLOW_TEST_VERBOSE"))
      std::printf("  %-40s rank %zu, max|ΔL| = %.3g (bound %.3g), %zu/%zu entries bit-identical\n", ctx.c_str(), g.rank,
                  diff, 64 * kEps * maxl, same, total);
  }

  std::uint64_t seed_ = 0;
  std::mt19937_64 rng_;
};

TEST_F(GpuPivotedRestricted, RandomPsdMatchesCpuPivotSequenceAndFactor) {
  gc::GpuCholesky chol(nullptr);
  for (std::int64_t n : {1, 2, 7, 33, 100, 257, 1031}) {
    const auto a = gram(n, 12, false, 0.0, rng_, 0.5);  // full rank
    for (double frac : {1.0, 0.5, 0.25, 0.05}) {
      auto allowed = random_flags(n, frac, rng_);
      allowed[static_cast<std::size_t>(n / 2)] = 1;  // at least one candidate
      for (std::int64_t max_rank : {std::int64_t{3}, std::int64_t{4}, std::int64_t{12}, std::int64_t{0}}) {
        if (max_rank == 0 && n > 300) continue;  // CPU O(n²·count): keep the test short
        Case c{"full rank frac=" + std::to_string(frac), a, n, allowed, max_rank};
        const auto g = check(c, chol);
        const std::size_t count = std::size_t(std::count(allowed.begin(), allowed.end(), 1));
        const std::size_t want = max_rank == 0 ? count : std::min<std::size_t>({std::size_t(max_rank), count});
        EXPECT_EQ(g.rank, want) << "n=" << n << " max_rank=" << max_rank;
      }
    }
  }
}

TEST_F(GpuPivotedRestricted, ExactTiesGoToTheLowestPosition) {
  gc::GpuCholesky chol(nullptr);
  for (std::int64_t n : {5, 40, 129, 600}) {
    for (int rep = 0; rep < 3; ++rep) {
      // integer Gram matrices: equal diagonals at the first step; duplicated rows: equal
      // Schur-complement diagonals at every step (the second copy must lose every tie)
      const auto a_int = gram(n, 6, true, 0.0, rng_);
      const auto a_dup = gram(n, 8, false, 0.4, rng_);
      const auto a_both = gram(n, 5, true, 0.3, rng_);
      for (const auto* a : {&a_int, &a_dup, &a_both}) {
        for (double frac : {1.0, 0.5}) {
          auto allowed = random_flags(n, frac, rng_);
          allowed[0] = 1;
          Case c{"ties", *a, n, allowed, 4};
          check(c, chol);
          c.max_rank = 0;
          check(c, chol);
        }
      }
    }
  }
  // a hand-made tie: diag (2, 5, 5, 5, 1), rows 1..3 independent; allowed = {0, 2, 3, 4}:
  // the first pivot is row 2 (lowest allowed position among the 5s), then row 3
  Case c{"hand tie", std::vector<double>(25, 0.0), 5, {1, 0, 1, 1, 1}, 2};
  const double d[5] = {2, 5, 5, 5, 1};
  for (int i = 0; i < 5; ++i) c.a[i * 5 + i] = d[i];
  const auto g = check(c, chol);
  ASSERT_EQ(g.rank, 2u);
  EXPECT_EQ(g.permutation[0], 2u);
  EXPECT_EQ(g.permutation[1], 3u);
  EXPECT_EQ(g.next_pivot, 2.0);  // the largest allowed remaining diagonal (row 0), row 1 is not allowed
}

TEST_F(GpuPivotedRestricted, RankDeficientStopsLikeTheCpu) {
  gc::GpuCholesky chol(nullptr);
  for (std::int64_t n : {9, 64, 301, 1500}) {
    for (std::int64_t true_rank : {std::int64_t{1}, std::int64_t{3}, std::int64_t{4}}) {
      const auto a = gram(n, true_rank, false, 0.1, rng_);
      auto allowed = random_flags(n, 0.3, rng_);
      for (std::int64_t i = 0; i < 8 && i < n; ++i) allowed[std::size_t(i * (n / 8))] = 1;
      Case c{"rank " + std::to_string(true_rank), a, n, allowed, 6};
      const auto g = check(c, chol);
      EXPECT_EQ(g.rank, std::size_t(true_rank)) << "n=" << n;
      EXPECT_TRUE(g.rank_deficient) << "n=" << n;
      // an explicit tolerance between the pivots
      c.name = "explicit tolerance";
      c.tolerance = 0.5 * a[std::size_t(g.permutation[0] * n + g.permutation[0])];
      check(c, chol);
    }
  }
}

TEST_F(GpuPivotedRestricted, TooFewCandidatesIsRankDeficientWithMinusInfinity) {
  gc::GpuCholesky chol(nullptr);
  const std::int64_t n = 50;
  const auto a = gram(n, 10, false, 0.0, rng_, 0.5);
  std::vector<unsigned char> two(n, 0);
  two[7] = two[31] = 1;
  const auto g = check({"two candidates", a, n, two, 4}, chol);
  EXPECT_EQ(g.rank, 2u);
  EXPECT_TRUE(g.rank_deficient);
  EXPECT_EQ(g.next_pivot, -std::numeric_limits<double>::infinity());
  const auto z = check({"no candidate", a, n, std::vector<unsigned char>(n, 0), 0}, chol);
  EXPECT_EQ(z.rank, 0u);
  EXPECT_FALSE(z.rank_deficient);
  EXPECT_EQ(z.next_pivot, -std::numeric_limits<double>::infinity());
  // exactly the candidates, max_rank = 0: not deficient; no allowed row left → next = −∞
  const auto e = check({"all candidates used", a, n, two, 0}, chol);
  EXPECT_EQ(e.rank, 2u);
  EXPECT_FALSE(e.rank_deficient);
}

TEST_F(GpuPivotedRestricted, EveryRowAllowedEqualsTheUnrestrictedPath) {
  gc::GpuCholesky chol(nullptr);
  for (std::int64_t n : {3, 77, 1000}) {
    const auto a = gram(n, 10, false, 0.2, rng_, 0.25);  // full rank, duplicated rows (ties)
    const std::int64_t k = 4, cols = std::min(k, n);  // l: n × min(max_rank, n)
    Dev<double> ad(a.size()), l1(static_cast<std::size_t>(n * cols)), l2(static_cast<std::size_t>(n * cols));
    Dev<unsigned char> fd(static_cast<std::size_t>(n));
    ad.put(a);
    fd.put(std::vector<unsigned char>(n, 1));
    const auto g1 = chol.factor_pivoted(ad.p, n, n, k, -1.0, l1.p, n);
    const auto g2 = chol.factor_pivoted(ad.p, n, n, k, -1.0, l2.p, n, fd.p);
    EXPECT_EQ(g1.permutation, g2.permutation) << n;
    EXPECT_EQ(g1.rank, g2.rank) << n;
    EXPECT_EQ(g1.next_pivot, g2.next_pivot) << n;
    EXPECT_EQ(l1.get(), l2.get()) << n << ": all-allowed must be bit-identical to nullptr";
  }
}

TEST_F(GpuPivotedRestricted, NonFiniteDiagonalIsAnErrorEvenOutsideTheCandidates) {
  gc::GpuCholesky chol(nullptr);
  const std::int64_t n = 20;
  auto a = gram(n, 5, false, 0.0, rng_, 1.0);
  a[13 * n + 13] = kNaN;
  std::vector<unsigned char> allowed(n, 1);
  allowed[13] = 0;
  Dev<double> ad(a.size()), ld(static_cast<std::size_t>(n * 4));
  Dev<unsigned char> fd(allowed.size());
  ad.put(a);
  fd.put(allowed);
  try {
    (void)chol.factor_pivoted(ad.p, n, n, 4, -1.0, ld.p, n, fd.p);
    FAIL() << "no error for a NaN diagonal";
  } catch (const gc::CudaError& e) {
    EXPECT_NE(std::string(e.what()).find("original row 13"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("restricted"), std::string::npos) << e.what();
  }
}

}  // namespace

#else
TEST(GpuPivotedRestricted, BuiltWithoutCuda) {
  GTEST_SKIP() << "Gemflow was built without CUDA: GPU Cholesky not built";
}
#endif
