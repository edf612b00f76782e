// Tests of the CPU Cholesky factorisations against brute-force reconstruction.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <vector>

#include <gemflow/linalg/cholesky.hpp>

namespace {
using gemflow::linalg::cholesky;
using gemflow::linalg::pivoted_cholesky;

// B Bᵀ + shift·I with B n×r, entries N(0,1); row-major n×n.
std::vector<double> gram(std::size_t n, std::size_t r, double shift, unsigned seed) {
  std::mt19937_64 rng(seed);
  std::normal_distribution<double> g;
  std::vector<double> b(n * r), a(n * n, 0.0);
  for (auto& x : b) x = g(rng);
  for (std::size_t i = 0; i < n; ++i)
    for (std::size_t j = 0; j < n; ++j) {
      double s = 0;
      for (std::size_t k = 0; k < r; ++k) s += b[i * r + k] * b[j * r + k];
      a[i * n + j] = s + (i == j ? shift : 0.0);
    }
  return a;
}

double frob(const std::vector<double>& a) {
  double s = 0;
  for (double x : a) s += x * x;
  return std::sqrt(s);
}

// ‖A − L Lᵀ‖_F / ‖A‖_F with L taken from the row-major lower triangle (k columns).
double residual(const std::vector<double>& a, const std::vector<double>& l, std::size_t n, std::size_t k,
                const std::vector<std::size_t>* perm = nullptr) {
  std::vector<double> d(n * n);
  for (std::size_t i = 0; i < n; ++i)
    for (std::size_t j = 0; j < n; ++j) {
      double s = 0;
      for (std::size_t c = 0; c < k; ++c) s += l[i * n + c] * l[j * n + c];
      const std::size_t pi = perm ? (*perm)[i] : i, pj = perm ? (*perm)[j] : j;
      d[i * n + j] = a[pi * n + pj] - s;
    }
  return frob(d) / frob(a);
}

TEST(Cholesky, ReconstructsSpdMatrices) {
  for (std::size_t n : {1u, 2u, 7u, 65u, 130u, 301u}) {
    auto a = gram(n, n, 0.5, static_cast<unsigned>(n));
    auto l = a;
    ASSERT_EQ(cholesky(l, n), 0) << n;
    for (std::size_t i = 0; i < n; ++i) {
      EXPECT_GT(l[i * n + i], 0.0);
      for (std::size_t j = i + 1; j < n; ++j) ASSERT_EQ(l[i * n + j], 0.0) << "upper not cleared";
    }
    EXPECT_LT(residual(a, l, n, n), 1e-14) << "n=" << n;
  }
}

TEST(Cholesky, KnownFactor) {
  // A = L Lᵀ with L = [[2,0,0],[1,3,0],[-1,2,1]].
  std::vector<double> a{4, 2, -2, 2, 10, 5, -2, 5, 6};
  ASSERT_EQ(cholesky(a, 3), 0);
  const std::vector<double> l{2, 0, 0, 1, 3, 0, -1, 2, 1};
  for (int i = 0; i < 9; ++i) EXPECT_NEAR(a[i], l[i], 1e-15) << i;
}

TEST(Cholesky, ReportsFailingLeadingMinor) {
  for (std::size_t k : {1u, 4u, 9u, 40u}) {
    const std::size_t n = 40;
    auto a = gram(n, n, 1.0, 7);
    // Make the Schur complement of the order-(k-1) block negative at k-1:
    // a(k-1,k-1) := s − 0.25 where s = a_kᵀ A11⁻¹ a_k (computed by factoring the block).
    double s = 0;
    if (k > 1) {
      const std::size_t m = k - 1;
      std::vector<double> b(m * m);
      for (std::size_t i = 0; i < m; ++i)
        for (std::size_t j = 0; j < m; ++j) b[i * m + j] = a[i * n + j];
      ASSERT_EQ(cholesky(b, m), 0);
      std::vector<double> y(m);  // L y = a_k
      for (std::size_t i = 0; i < m; ++i) {
        double t = a[(k - 1) * n + i];
        for (std::size_t j = 0; j < i; ++j) t -= b[i * m + j] * y[j];
        y[i] = t / b[i * m + i];
        s += y[i] * y[i];
      }
    }
    a[(k - 1) * n + (k - 1)] = s - 0.25;
    EXPECT_EQ(cholesky(a, n), static_cast<int>(k)) << "k=" << k;
  }
}

TEST(Cholesky, FloatMatchesDouble) {
  const std::size_t n = 50;
  auto a = gram(n, n, 1.0, 3);
  std::vector<float> af(a.begin(), a.end());
  ASSERT_EQ(cholesky(std::span<float>(af), n), 0);
  ASSERT_EQ(cholesky(a, n), 0);
  for (std::size_t i = 0; i < n * n; ++i) EXPECT_NEAR(af[i], a[i], 2e-4 * (1 + std::abs(a[i])));
}

// The cancellable blocked factorisation: LAPACK's factor to rounding, LAPACK's INFO, callbacks
// that rise to 1, and a stop that returns at once.
TEST(Cholesky, BlockedWithCallbackMatchesLapack) {
  for (std::size_t n : {1u, 7u, 100u, 333u})
    for (std::size_t block : {1u, 16u, 64u, 256u}) {
      const auto a = gram(n, n, 1.0, static_cast<unsigned>(n));
      auto ref = a;
      ASSERT_EQ(cholesky(ref, n), 0);
      auto l = a;
      std::vector<double> fractions;
      ASSERT_EQ(cholesky(
                    l, n,
                    [&](double f) {
                      fractions.push_back(f);
                      return true;
                    },
                    block),
                0);
      double diff = 0, big = 0;
      for (std::size_t i = 0; i < n * n; ++i) {
        diff = std::max(diff, std::abs(l[i] - ref[i]));
        big = std::max(big, std::abs(ref[i]));
      }
      EXPECT_LE(diff, 1e-13 * big) << "n=" << n << " block=" << block;
      EXPECT_LE(residual(a, l, n, n), 1e-14 * double(n)) << "n=" << n << " block=" << block;
      ASSERT_FALSE(fractions.empty());
      EXPECT_TRUE(std::is_sorted(fractions.begin(), fractions.end()));
      EXPECT_NEAR(fractions.back(), 1.0, 1e-12) << "n=" << n << " block=" << block;
      std::vector<float> lf(a.begin(), a.end()), rf(a.begin(), a.end());
      ASSERT_EQ(cholesky(std::span<float>(rf), n), 0);
      ASSERT_EQ(cholesky(std::span<float>(lf), n, {}, block), 0);
      // fp32: the two summation orders differ by about κ·ε; compare backward errors instead
      const std::vector<double> lfd(lf.begin(), lf.end()), rfd(rf.begin(), rf.end());
      const double beta = residual(a, lfd, n, n), beta_lapack = residual(a, rfd, n, n);
      EXPECT_LE(beta, 10.0 * std::max(beta_lapack, 0x1p-24 * double(n))) << "fp32 n=" << n << " block=" << block;
    }
  // not positive definite: LAPACK's leading minor, in any block
  auto bad = gram(40, 40, 1.0, 7);
  bad[9 * 40 + 9] = -1.0;
  auto bad_ref = bad;
  const int info = cholesky(bad_ref, 40);
  ASSERT_GT(info, 0);
  for (std::size_t block : {1u, 8u, 64u}) {
    auto b = bad;
    EXPECT_EQ(cholesky(b, 40, {}, block), info) << "block=" << block;
  }
  // stopped by the callback at its second call
  auto s = gram(200, 200, 1.0, 1);
  int calls = 0;
  EXPECT_EQ(cholesky(
                s, 200, [&](double) { return ++calls < 2; }, 32),
            gemflow::linalg::kCholeskyStopped);
  EXPECT_EQ(calls, 2);
}

TEST(Cholesky, RejectsWrongSize) {
  std::vector<double> a(5);
  EXPECT_THROW((void)cholesky(a, 2), std::invalid_argument);
  EXPECT_THROW((void)pivoted_cholesky(a, 2), std::invalid_argument);
}

TEST(PivotedCholesky, FindsRankOfPsdMatrix) {
  for (std::size_t n : {10u, 70u, 200u})
    for (std::size_t r : {1u, 3u, 4u, 9u}) {
      const auto a = gram(n, r, 0.0, static_cast<unsigned>(n + r));
      auto l = a;
      const auto res = pivoted_cholesky(l, n);
      EXPECT_EQ(res.rank, r) << "n=" << n;
      EXPECT_TRUE(res.rank_deficient);
      EXPECT_LE(res.next_pivot, res.tolerance);
      EXPECT_LT(residual(a, l, n, res.rank, &res.permutation), 1e-12) << "n=" << n << " r=" << r;
      // The permutation is a permutation.
      std::vector<int> seen(n, 0);
      for (auto p : res.permutation) ++seen.at(p);
      for (int s : seen) EXPECT_EQ(s, 1);
      // Pivots are non-increasing (complete pivoting).
      for (std::size_t k = 1; k < res.rank; ++k) EXPECT_LE(l[k * n + k], l[(k - 1) * n + (k - 1)] * (1 + 1e-12));
    }
}

TEST(PivotedCholesky, FullRankIsNotDeficient) {
  const std::size_t n = 90;
  const auto a = gram(n, n, 0.1, 11);
  auto l = a;
  const auto res = pivoted_cholesky(l, n);
  EXPECT_EQ(res.rank, n);
  EXPECT_FALSE(res.rank_deficient);
  EXPECT_EQ(res.next_pivot, 0.0);
  EXPECT_LT(residual(a, l, n, n, &res.permutation), 1e-13);
}

// Regression: a tolerance at or above the largest diagonal gave rank 1 through dpstrf (which tests
// its first pivot against 0 only) but rank 0 with a rank limit. Every pivot ≤ tolerance stops,
// the first too, on both paths; just below the largest diagonal both take the same pivots.
TEST(PivotedCholesky, EveryPivotMeetsTheToleranceWithOrWithoutARankLimit) {
  const std::size_t n = 50;
  const auto a = gram(n, 3, 0.0, 3);
  double dmax = 0.0;
  for (std::size_t i = 0; i < n; ++i) dmax = std::max(dmax, a[i * n + i]);
  for (double tol : {dmax, 1.5 * dmax, 1e300})
    for (std::size_t limit : {0u, 10u}) {
      auto l = a;
      const auto r = pivoted_cholesky(l, n, limit, tol);
      EXPECT_EQ(r.rank, 0u) << "tolerance " << tol << ", rank limit " << limit;
      EXPECT_TRUE(r.rank_deficient);
      EXPECT_EQ(r.next_pivot, dmax);
      EXPECT_EQ(r.tolerance, tol);
      ASSERT_EQ(r.permutation.size(), n);
      for (std::size_t i = 0; i < n; ++i) EXPECT_EQ(r.permutation[i], i);
      for (double v : l) EXPECT_EQ(v, 0.0);
    }
  std::vector<std::size_t> ranks;
  for (std::size_t limit : {0u, 10u}) {
    auto l = a;
    const auto r = pivoted_cholesky(l, n, limit, std::nextafter(dmax, 0.0));
    EXPECT_GE(r.rank, 1u);
    EXPECT_TRUE(r.rank_deficient);
    ranks.push_back(r.rank);
  }
  EXPECT_EQ(ranks[0], ranks[1]);
}

TEST(PivotedCholesky, RankLimitMatchesLeadingColumnsOfDpstrf) {
  const std::size_t n = 150;
  const auto a = gram(n, 20, 0.0, 5);
  auto full = a;
  const auto rf = pivoted_cholesky(full, n);
  ASSERT_EQ(rf.rank, 20u);
  for (std::size_t k : {1u, 3u, 4u, 12u}) {
    auto part = a;
    const auto rp = pivoted_cholesky(part, n, k);
    ASSERT_EQ(rp.rank, k);
    EXPECT_FALSE(rp.rank_deficient);
    for (std::size_t c = 0; c < k; ++c) EXPECT_EQ(rp.permutation[c], rf.permutation[c]) << "pivot " << c;
    // next_pivot is the (k+1)-th pivot of the full factorisation, squared.
    const double lkk = full[k * n + k];
    EXPECT_NEAR(rp.next_pivot, lkk * lkk, 1e-9 * lkk * lkk);
    for (std::size_t i = 0; i < n; ++i)
      for (std::size_t c = 0; c < n; ++c) {
        // Rows of the full factor are in its own permutation: compare by original row.
        if (c < k) {
          // row i of part ↔ original rp.permutation[i]; find it in rf.
          std::size_t j = 0;
          while (rf.permutation[j] != rp.permutation[i]) ++j;
          EXPECT_NEAR(part[i * n + c], full[j * n + c], 1e-10);
        } else {
          EXPECT_EQ(part[i * n + c], 0.0);
        }
      }
  }
}

TEST(PivotedCholesky, RankLimitedApproximationOfIndefiniteMatrix) {
  // A metric matrix with noise is indefinite; the rank-3 pivoted factor still exists and
  // stops at the limit without deficiency.
  const std::size_t n = 60;
  auto a = gram(n, 3, 0.0, 9);
  std::mt19937_64 rng(1);
  std::normal_distribution<double> g(0.0, 1e-3);
  for (std::size_t i = 0; i < n; ++i)
    for (std::size_t j = 0; j <= i; ++j) a[i * n + j] = a[j * n + i] = a[i * n + j] + g(rng);
  auto l = a;
  const auto res = pivoted_cholesky(l, n, 3, 0.0);
  EXPECT_EQ(res.rank, 3u);
  EXPECT_FALSE(res.rank_deficient);
  EXPECT_LT(residual(a, l, n, 3, &res.permutation), 5e-3);
}

}  // namespace

// ---- pivots restricted to candidate rows (Nyström on the chosen columns) --------------------

TEST(PivotedCholeskyRestricted, AllCandidatesEqualsUnrestrictedPartialSteps) {
  const std::size_t n = 37;
  const auto a = gram(n, 6, 0.0, 21);
  for (std::size_t k : {1u, 4u, 6u}) {
    auto l1 = a, l2 = a;
    const auto r1 = pivoted_cholesky(l1, n, k, 0.0);
    const std::vector<unsigned char> all(n, 1);
    const auto r2 = gemflow::linalg::pivoted_cholesky_restricted(l2, n, all, k, 0.0);
    EXPECT_EQ(r1.rank, r2.rank);
    EXPECT_EQ(r1.permutation, r2.permutation);
    EXPECT_EQ(l1, l2) << "k = " << k;  // the same operations in the same order
  }
}

TEST(PivotedCholeskyRestricted, PivotsOnlyAmongCandidatesAndReconstructsLowRank) {
  // Rank-3 PSD matrix: any 3 independent columns give the exact Nyström reconstruction.
  const std::size_t n = 50, r = 3;
  const auto a = gram(n, r, 0.0, 5);
  std::vector<unsigned char> cand(n, 0);
  for (std::size_t i = 10; i < 20; ++i) cand[i] = 1;
  auto l = a;
  const auto res = gemflow::linalg::pivoted_cholesky_restricted(l, n, cand, 0, 1e-9);
  ASSERT_EQ(res.rank, r);
  EXPECT_TRUE(res.rank_deficient);
  for (std::size_t k = 0; k < res.rank; ++k) EXPECT_TRUE(cand[res.permutation[k]]) << "pivot " << k;
  // Greedy rule: the first pivot is the candidate with the largest diagonal (lowest index on ties).
  std::size_t best = 10;
  for (std::size_t i = 10; i < 20; ++i)
    if (a[i * n + i] > a[best * n + best]) best = i;
  EXPECT_EQ(res.permutation[0], best);
  EXPECT_LT(residual(a, l, n, res.rank, &res.permutation), 1e-12);
}

TEST(PivotedCholeskyRestricted, RejectsWrongSizesAndStopsWithoutCandidates) {
  std::vector<double> a{4, 1, 1, 3};
  const std::vector<unsigned char> three(3, 1);
  EXPECT_THROW((void)gemflow::linalg::pivoted_cholesky_restricted(a, 2, three), std::invalid_argument);
  const std::vector<unsigned char> none(2, 0);
  const auto r = gemflow::linalg::pivoted_cholesky_restricted(a, 2, none);
  EXPECT_EQ(r.rank, 0u);
  for (double v : a) EXPECT_EQ(v, 0.0);
}
