// Triangle smoothing: reference == doubled-graph oracle == blocked on fresh random bounds,
// fp32 within its rounding bound, inconsistency reports with verified paths, input checks,
// cancellation, and the distgeom.triangle_smoothing node.
//
// Fresh inputs: the seed comes from std::random_device unless GEMFLOW_TEST_SEED is set; every
// failing assertion prints it (SCOPED_TRACE).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <limits>
#include <map>
#include <memory>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#include <gemflow/device.hpp>
#include <gemflow/distgeom/smoothing.hpp>
#include <gemflow/node.hpp>
#include <gemflow/plugin.hpp>
#include <gemflow/registry.hpp>
#include <gemflow/testing.hpp>
#include <gemflow/types.hpp>

#include "register.hpp"

namespace gd = gemflow::distgeom;

namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

std::uint64_t fresh_seed() {
  if (const char* s = std::getenv("GEMFLOW_TEST_SEED")) return std::strtoull(s, nullptr, 10);
  return (std::uint64_t{std::random_device{}()} << 32) ^ std::random_device{}();
}

struct Bounds {
  std::size_t n = 0;
  std::vector<double> lower, upper;
  std::vector<double> truth;  ///< true distances for metric bounds, else empty
};

double quantise_down(double v, bool dyadic) { return dyadic ? std::floor(v * 1024.0) / 1024.0 : v; }
double quantise_up(double v, bool dyadic) { return dyadic ? std::ceil(v * 1024.0) / 1024.0 : v; }

/// Random points in a box at protein-like density → true distances → randomly loosened bounds:
/// near pairs (d < 6 Å) get L = d(1 − 0.25 r), U = d(1 + 0.25 r'); far pairs a van der Waals
/// lower bound min(d, 3.2) and U = 999 Å or +inf. Consistent by construction. `dyadic` rounds
/// outward to multiples of 2^-10 so that every path sum is exact in fp64.
Bounds metric_bounds(std::size_t n, std::uint64_t seed, bool dyadic) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> uni(0.0, 1.0);
  const double side = 4.0 * std::cbrt(static_cast<double>(std::max<std::size_t>(n, 1)));
  std::vector<double> x(3 * n);
  for (double& v : x) v = side * uni(rng);
  Bounds b{n, std::vector<double>(n * n, 0.0), std::vector<double>(n * n, 0.0), std::vector<double>(n * n, 0.0)};
  for (std::size_t i = 0; i < n; ++i)
    for (std::size_t j = i + 1; j < n; ++j) {
      const double d = std::hypot(x[3 * i] - x[3 * j], x[3 * i + 1] - x[3 * j + 1], x[3 * i + 2] - x[3 * j + 2]);
      double l, u;
      if (d < 6.0) {
        l = quantise_down(d * (1.0 - 0.25 * uni(rng)), dyadic);
        u = quantise_up(d * (1.0 + 0.25 * uni(rng)), dyadic);
      } else {
        l = quantise_down(std::min(d, 3.2), dyadic);
        u = uni(rng) < 0.1 ? kInf : 999.0;
      }
      b.lower[i * n + j] = b.lower[j * n + i] = l;
      b.upper[i * n + j] = b.upper[j * n + i] = u;
      b.truth[i * n + j] = b.truth[j * n + i] = d;
    }
  return b;
}

/// Random non-metric bounds: U uniform in [1, 20] Å (10 % +inf), L uniform in [0, lmax].
/// With lmax large these are usually inconsistent; the closure is defined all the same.
Bounds nonmetric_bounds(std::size_t n, std::uint64_t seed, bool dyadic, double lmax) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> uni(0.0, 1.0);
  Bounds b{n, std::vector<double>(n * n, 0.0), std::vector<double>(n * n, 0.0), {}};
  for (std::size_t i = 0; i < n; ++i)
    for (std::size_t j = i + 1; j < n; ++j) {
      const double u = uni(rng) < 0.1 ? kInf : quantise_up(1.0 + 19.0 * uni(rng), dyadic);
      const double l = std::min(quantise_down(lmax * uni(rng), dyadic), u);
      b.lower[i * n + j] = b.lower[j * n + i] = l;
      b.upper[i * n + j] = b.upper[j * n + i] = u;
    }
  return b;
}

/// Largest finite |bound| (the scale of the rounding bounds).
double scale_of(const Bounds& b) {
  double s = 1.0;
  for (std::size_t k = 0; k < b.lower.size(); ++k) {
    s = std::max(s, b.lower[k]);
    if (std::isfinite(b.upper[k])) s = std::max(s, b.upper[k]);
  }
  return s;
}

struct Closure {
  std::vector<double> lower, upper;
  gd::SmoothingReport report;
};

Closure run_reference(const Bounds& b) {
  Closure c{b.lower, b.upper, {}};
  c.report = gd::smooth_bounds_reference(std::span<double>(c.lower), std::span<double>(c.upper), b.n);
  return c;
}
Closure run_blocked(const Bounds& b, std::size_t tile, unsigned threads) {
  Closure c{b.lower, b.upper, {}};
  gd::SmoothingOptions o;
  o.tile = tile;
  o.threads = threads;
  c.report = gd::smooth_bounds(std::span<double>(c.lower), std::span<double>(c.upper), b.n, o);
  return c;
}
Closure run_oracle(const Bounds& b) {
  Closure c{b.lower, b.upper, {}};
  gd::smooth_bounds_doubled_graph_oracle(std::span<double>(c.lower), std::span<double>(c.upper), b.n);
  return c;
}

/// Bitwise equality of two closures, reporting the first differing element.
::testing::AssertionResult same(const std::vector<double>& a, const std::vector<double>& b, std::size_t n,
                                const char* what) {
  for (std::size_t k = 0; k < a.size(); ++k)
    if (!(a[k] == b[k]))
      return ::testing::AssertionFailure()
             << what << " differ at (" << k / n << ", " << k % n << "): " << a[k] << " vs " << b[k];
  return ::testing::AssertionSuccess();
}
::testing::AssertionResult near(const std::vector<double>& a, const std::vector<double>& b, std::size_t n, double tol,
                                const char* what) {
  for (std::size_t k = 0; k < a.size(); ++k) {
    if (a[k] == b[k]) continue;  // also equal infinities
    if (!(std::abs(a[k] - b[k]) <= tol))
      return ::testing::AssertionFailure() << what << " differ at (" << k / n << ", " << k % n << "): " << a[k]
                                           << " vs " << b[k] << " (tolerance " << tol << ")";
  }
  return ::testing::AssertionSuccess();
}

const std::size_t kSizes[] = {1, 2, 3, 5, 17, 64, 65, 127, 300};

}  // namespace

// ---- the closure itself ----------------------------------------------------------------------

TEST(Smoothing, HandComputedThreeAtoms) {
  // U01 = 1, U12 = 1, U02 = 5 → U'02 = 2; L02 = 1.5, L12 = 0 → L'01 = L02 − U21 = 0.5.
  std::vector<double> L = {0, 0, 1.5, 0, 0, 0, 1.5, 0, 0};
  std::vector<double> U = {0, 1, 5, 1, 0, 1, 5, 1, 0};
  const auto r = gd::smooth_bounds(std::span<double>(L), std::span<double>(U), 3);
  EXPECT_TRUE(r.consistent);
  EXPECT_EQ(U, (std::vector<double>{0, 1, 2, 1, 0, 1, 2, 1, 0}));
  EXPECT_EQ(L, (std::vector<double>{0, 0.5, 1.5, 0.5, 0, 0.5, 1.5, 0.5, 0}));
  EXPECT_EQ(r.changed_pairs, 3u);  // (0,1): L; (0,2): U; (1,2): L = L02 − U01 = 0.5
}

TEST(Smoothing, PerKFormEqualsDoubledGraphBitForBitOnExactSums) {
  // The per-k form (pivots k, k') and the blocked closure compute the doubled-graph shortest
  // paths; with dyadic inputs every sum is exact, so all three must agree bit for bit.
  const std::uint64_t seed = fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  for (std::size_t n : kSizes) {
    for (int kind = 0; kind < 2; ++kind) {
      SCOPED_TRACE("n " + std::to_string(n) + (kind ? " non-metric" : " metric"));
      const Bounds b = kind ? nonmetric_bounds(n, seed + n, true, 8.0) : metric_bounds(n, seed + n, true);
      const Closure ref = run_reference(b);
      const Closure orc = run_oracle(b);
      EXPECT_TRUE(same(ref.upper, orc.upper, n, "reference/oracle U"));
      EXPECT_TRUE(same(ref.lower, orc.lower, n, "reference/oracle L"));
      for (std::size_t tile : {32, 64}) {
        const Closure blk = run_blocked(b, tile, 2);
        EXPECT_TRUE(same(blk.upper, ref.upper, n, "blocked/reference U")) << "tile " << tile;
        EXPECT_TRUE(same(blk.lower, ref.lower, n, "blocked/reference L")) << "tile " << tile;
        EXPECT_EQ(blk.report.consistent, ref.report.consistent);
        EXPECT_EQ(blk.report.i, ref.report.i);
        EXPECT_EQ(blk.report.j, ref.report.j);
        EXPECT_EQ(blk.report.inconsistent_pairs, ref.report.inconsistent_pairs);
        EXPECT_EQ(blk.report.changed_pairs, ref.report.changed_pairs);
      }
      if (kind == 0) {
        // Realisable bounds stay consistent and keep the true distances inside [L', U'].
        EXPECT_TRUE(ref.report.consistent);
        for (std::size_t k = 0; k < n * n; ++k) {
          ASSERT_LE(ref.lower[k], b.truth[k]) << "at " << k / n << "," << k % n;
          ASSERT_GE(ref.upper[k], b.truth[k]) << "at " << k / n << "," << k % n;
        }
      }
    }
  }
}

TEST(Smoothing, ResultIsTriangleClosedAndAFixedPoint) {
  const std::uint64_t seed = fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  const std::size_t n = 65;
  const Bounds b = metric_bounds(n, seed, true);
  const Closure c = run_blocked(b, 32, 2);
  ASSERT_TRUE(c.report.consistent);
  std::size_t tight_u = 0;
  for (std::size_t i = 0; i < n; ++i)
    for (std::size_t j = 0; j < n; ++j) {
      for (std::size_t k = 0; k < n; ++k) {
        ASSERT_LE(c.upper[i * n + j], c.upper[i * n + k] + c.upper[k * n + j]);
        ASSERT_GE(c.lower[i * n + j], c.lower[i * n + k] - c.upper[k * n + j]);
        ASSERT_GE(c.lower[i * n + j], c.lower[j * n + k] - c.upper[k * n + i]);
      }
      tight_u += c.upper[i * n + j] < b.upper[i * n + j];
    }
  EXPECT_GT(tight_u, 0u) << "the test bounds should be tightened somewhere";
  // Smoothing the closure changes nothing.
  Bounds again{n, c.lower, c.upper, {}};
  const Closure twice = run_blocked(again, 64, 1);
  EXPECT_TRUE(same(twice.upper, c.upper, n, "U"));
  EXPECT_TRUE(same(twice.lower, c.lower, n, "L"));
  EXPECT_EQ(twice.report.changed_pairs, 0u);
}

TEST(Smoothing, BlockedMatchesReferenceWithinRoundingOnArbitraryReals) {
  // Each result is a sum of at most 2n input bounds, evaluated in a different order by each
  // algorithm: both are within (2n)·u·Σ|terms| of the exact value, Σ|terms| ≤ 2·scale for the
  // values that decide the result, so they agree within 8·n·u·scale (u = 2^-53).
  const std::uint64_t seed = fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  for (std::size_t n : kSizes) {
    for (int kind = 0; kind < 2; ++kind) {
      SCOPED_TRACE("n " + std::to_string(n) + (kind ? " non-metric" : " metric"));
      const Bounds b = kind ? nonmetric_bounds(n, seed ^ n, false, 3.0) : metric_bounds(n, seed ^ n, false);
      const double tol = 8.0 * static_cast<double>(n) * 0x1p-53 * scale_of(b);
      const Closure ref = run_reference(b);
      const Closure orc = run_oracle(b);
      EXPECT_TRUE(near(orc.upper, ref.upper, n, tol, "oracle/reference U"));
      EXPECT_TRUE(near(orc.lower, ref.lower, n, tol, "oracle/reference L"));
      for (unsigned threads : {1u, 3u}) {
        const Closure blk = run_blocked(b, 64, threads);
        EXPECT_TRUE(near(blk.upper, ref.upper, n, tol, "blocked/reference U"));
        EXPECT_TRUE(near(blk.lower, ref.lower, n, tol, "blocked/reference L"));
      }
    }
  }
}

TEST(Smoothing, BlockedIsIndependentOfThreadCount) {
  const std::uint64_t seed = fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  const Bounds b = nonmetric_bounds(300, seed, false, 3.0);
  const Closure one = run_blocked(b, 32, 1);
  for (unsigned threads : {2u, 3u, 7u}) {
    const Closure many = run_blocked(b, 32, threads);
    EXPECT_TRUE(same(many.upper, one.upper, b.n, "U")) << threads << " threads";
    EXPECT_TRUE(same(many.lower, one.lower, b.n, "L")) << threads << " threads";
  }
}

TEST(Smoothing, Fp32WithinItsRoundingBound) {
  // fp32: inputs rounded once (relative 2^-24) and path sums of ≤ 2n terms in fp32, so
  // |fp32 − fp64| ≤ (2n + 1)·2^-24·2·scale ≤ 8·n·2^-24·scale for n ≥ 1 (as above with u = 2^-24).
  const std::uint64_t seed = fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  for (std::size_t n : kSizes) {
    SCOPED_TRACE("n " + std::to_string(n));
    const Bounds b = metric_bounds(n, seed + 7 * n, false);
    const Closure ref = run_reference(b);
    std::vector<float> lf(b.lower.begin(), b.lower.end()), uf(b.upper.begin(), b.upper.end());
    gd::SmoothingOptions o;
    o.tile = 32;
    const auto r = gd::smooth_bounds(std::span<float>(lf), std::span<float>(uf), n, o);
    EXPECT_TRUE(r.consistent);
    const double tol = 8.0 * static_cast<double>(n) * 0x1p-24 * scale_of(b);
    EXPECT_TRUE(near(std::vector<double>(uf.begin(), uf.end()), ref.upper, n, tol, "fp32/fp64 U"));
    EXPECT_TRUE(near(std::vector<double>(lf.begin(), lf.end()), ref.lower, n, tol, "fp32/fp64 L"));
    // The fp32 reference accumulates in fp64 and rounds once.
    std::vector<float> lr(b.lower.begin(), b.lower.end()), ur(b.upper.begin(), b.upper.end());
    (void)gd::smooth_bounds_reference(std::span<float>(lr), std::span<float>(ur), n);
    EXPECT_TRUE(near(std::vector<double>(ur.begin(), ur.end()), ref.upper, n, tol, "fp32 ref/fp64 U"));
  }
}

TEST(Smoothing, Fp32BitExactOnCoarseDyadicBounds) {
  // Multiples of 2^-6 below 64 Å: sums of ≤ 600 such values need ≤ 22 bits, exact in fp32.
  const std::uint64_t seed = fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  const std::size_t n = 127;
  Bounds b = nonmetric_bounds(n, seed, false, 6.0);
  for (double& v : b.lower) v = std::floor(v * 64.0) / 64.0;
  for (double& v : b.upper) v = std::isfinite(v) ? std::ceil(v * 64.0) / 64.0 : v;
  const Closure ref = run_reference(b);
  std::vector<float> lf(b.lower.begin(), b.lower.end()), uf(b.upper.begin(), b.upper.end());
  gd::SmoothingOptions o;
  o.tile = 64;
  (void)gd::smooth_bounds(std::span<float>(lf), std::span<float>(uf), n, o);
  EXPECT_TRUE(same(std::vector<double>(uf.begin(), uf.end()), ref.upper, n, "U"));
  EXPECT_TRUE(same(std::vector<double>(lf.begin(), lf.end()), ref.lower, n, "L"));
}

// ---- inconsistent bounds ------------------------------------------------------------------

namespace {

/// Verifies a report against the oracle closure and the input: the first pair i < j with
/// L' > U' + tol, and a path whose input bounds really imply the contradiction.
void expect_explained(const Bounds& in, const gd::SmoothingReport& r, double tol) {
  const std::size_t n = in.n;
  const Closure orc = run_oracle(in);
  std::size_t fi = n, fj = n, count = 0;
  for (std::size_t i = 0; i < n; ++i)
    for (std::size_t j = i + 1; j < n; ++j)
      if (orc.lower[i * n + j] > orc.upper[i * n + j] + tol) {
        if (fi == n) fi = i, fj = j;
        ++count;
      }
  ASSERT_LT(fi, n) << "test input should be inconsistent";
  ASSERT_FALSE(r.consistent);
  EXPECT_EQ(r.i, fi);
  EXPECT_EQ(r.j, fj);
  EXPECT_EQ(r.inconsistent_pairs, count);
  EXPECT_EQ(r.lower, orc.lower[fi * n + fj]);
  EXPECT_EQ(r.upper, orc.upper[fi * n + fj]);
  ASSERT_TRUE(r.path.has_value());
  const gd::InconsistencyPath& p = *r.path;
  EXPECT_EQ(p.i, fi);
  EXPECT_EQ(p.j, fj);
  ASSERT_GE(p.atoms.size(), 2u);
  ASSERT_EQ(p.upper.size(), p.atoms.size() - 1);
  EXPECT_EQ(p.atoms[p.pos_i], fi);
  EXPECT_EQ(p.atoms[p.pos_j], fj);
  EXPECT_LE(p.pos_i, p.pos_j);
  // The arithmetic of the contradiction, from the input bounds only.
  EXPECT_EQ(p.lower, in.lower[p.a() * n + p.b()]);
  double sum = 0;
  for (std::size_t s = 0; s + 1 < p.atoms.size(); ++s) {
    EXPECT_EQ(p.upper[s], in.upper[p.atoms[s] * n + p.atoms[s + 1]]) << "step " << s;
    sum += p.upper[s];
  }
  EXPECT_EQ(sum, p.upper_sum);
  EXPECT_GT(p.lower - sum, tol) << "the path must prove L > sum of U";
  // It is the witness of the closure: excess = L'_ij − U'_ij (exact for dyadic inputs).
  EXPECT_EQ(p.excess(), r.lower - r.upper);
}

}  // namespace

TEST(Smoothing, InconsistencyThreeAtomsHandComputed) {
  // U01 = U12 = 1 but L02 = 3: L'01 = L02 − U21 = 2 > U01 = 1 is the first pair.
  std::vector<double> L = {0, 0, 3, 0, 0, 0, 3, 0, 0};
  std::vector<double> U = {0, 1, 9, 1, 0, 1, 9, 1, 0};
  const Bounds in{3, L, U, {}};
  for (int algo = 0; algo < 2; ++algo) {
    std::vector<double> l = L, u = U;
    const auto r = algo ? gd::smooth_bounds(std::span<double>(l), std::span<double>(u), 3)
                        : gd::smooth_bounds_reference(std::span<double>(l), std::span<double>(u), 3);
    expect_explained(in, r, gd::kDefaultSmoothingTolerance);
    EXPECT_EQ(r.i, 0u);
    EXPECT_EQ(r.j, 1u);
    EXPECT_EQ(r.lower, 2.0);
    EXPECT_EQ(r.upper, 1.0);
    EXPECT_EQ(r.inconsistent_pairs, 3u);
    EXPECT_EQ(r.path->atoms, (std::vector<std::size_t>{0, 1, 2}));
    EXPECT_EQ(r.path->lower, 3.0);
    EXPECT_EQ(r.path->upper_sum, 2.0);
  }
}

TEST(Smoothing, PathThroughBothCopiesOfThePivotNeedsTheLkkTerm) {
  // Atoms 0..4, U = 1 from atom 4 to each of 0..3, U = 100 elsewhere, L_23 = 10 (else 0).
  // The closure's L'_01 = L_23 − U'_02 − U'_31 = 10 − 2 − 2 = 6 needs the doubled-graph path
  // 0→4→2→3'→4'→1', which visits both copies of the last pivot 4; per-k with only the two
  // Crippen-Havel candidates gives L'_01 = 0 after one sweep. l_ik = max(L_ik, L_kk − U_ik)
  // carries it (L_44 = 8 before step 4).
  const std::size_t n = 5;
  Bounds b{n, std::vector<double>(n * n, 0.0), std::vector<double>(n * n, 100.0), {}};
  for (std::size_t i = 0; i < n; ++i) b.upper[i * n + i] = 0;
  for (std::size_t i = 0; i < 4; ++i) b.upper[i * n + 4] = b.upper[4 * n + i] = 1;
  b.lower[2 * n + 3] = b.lower[3 * n + 2] = 10;
  const Closure orc = run_oracle(b), ref = run_reference(b);
  EXPECT_EQ(orc.lower[0 * n + 1], 6.0);
  EXPECT_TRUE(same(ref.lower, orc.lower, n, "reference/oracle L"));
  EXPECT_TRUE(same(ref.upper, orc.upper, n, "reference/oracle U"));
  for (std::size_t tile : {32, 64}) {
    const Closure blk = run_blocked(b, tile, 2);
    EXPECT_TRUE(same(blk.lower, orc.lower, n, "blocked/oracle L"));
    EXPECT_TRUE(same(blk.upper, orc.upper, n, "blocked/oracle U"));
  }
  expect_explained(b, ref.report, gd::kDefaultSmoothingTolerance);
  // The same structure spread over several tiles (atom 4 → 99, the others interleaved).
  const std::size_t m = 100;
  const std::size_t map[5] = {0, 40, 70, 35, 99};
  Bounds big{m, std::vector<double>(m * m, 0.0), std::vector<double>(m * m, 100.0), {}};
  for (std::size_t i = 0; i < m; ++i) big.upper[i * m + i] = 0;
  for (std::size_t i = 0; i < n; ++i)
    for (std::size_t j = 0; j < n; ++j) {
      big.lower[map[i] * m + map[j]] = b.lower[i * n + j];
      big.upper[map[i] * m + map[j]] = b.upper[i * n + j];
    }
  const Closure borc = run_oracle(big);
  EXPECT_EQ(borc.lower[map[0] * m + map[1]], 6.0);
  const Closure bref = run_reference(big);
  EXPECT_TRUE(same(bref.lower, borc.lower, m, "reference/oracle L"));
  const Closure bblk = run_blocked(big, 32, 2);
  EXPECT_TRUE(same(bblk.lower, borc.lower, m, "blocked/oracle L"));
  EXPECT_TRUE(same(bblk.upper, borc.upper, m, "blocked/oracle U"));
}

TEST(Smoothing, InjectedContradictionIsFoundAndExplained) {
  const std::uint64_t seed = fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  std::mt19937_64 rng(seed);
  for (std::size_t n : {17, 65, 127}) {
    SCOPED_TRACE("n " + std::to_string(n));
    Bounds b = metric_bounds(n, seed + n, true);
    const Closure ok = run_reference(b);
    ASSERT_TRUE(ok.report.consistent);
    // A pair whose upper bound smoothing tightened by ≥ 1 Å: raise its lower bound to 1 Å
    // above the smoothed upper bound (still ≤ its own upper bound, so the input is valid).
    std::vector<std::size_t> candidates;
    for (std::size_t k = 0; k < n * n; ++k)
      if (k / n < k % n && ok.upper[k] + 1.0 <= b.upper[k]) candidates.push_back(k);
    ASSERT_FALSE(candidates.empty());
    const std::size_t k = candidates[std::uniform_int_distribution<std::size_t>(0, candidates.size() - 1)(rng)];
    const std::size_t a = k / n, c = k % n;
    b.lower[a * n + c] = b.lower[c * n + a] = ok.upper[k] + 1.0;
    const Closure ref = run_reference(b);
    expect_explained(b, ref.report, gd::kDefaultSmoothingTolerance);
    const Closure blk = run_blocked(b, 32, 2);
    expect_explained(b, blk.report, gd::kDefaultSmoothingTolerance);
    EXPECT_TRUE(same(blk.lower, ref.lower, n, "L")) << "the closure is defined for inconsistent bounds too";
    EXPECT_TRUE(same(blk.upper, ref.upper, n, "U"));
  }
}

TEST(Smoothing, RandomNonMetricInconsistencyExplained) {
  const std::uint64_t seed = fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  const Bounds b = nonmetric_bounds(64, seed, true, 12.0);
  const Closure blk = run_blocked(b, 32, 2);
  expect_explained(b, blk.report, gd::kDefaultSmoothingTolerance);
}

TEST(Smoothing, ExplainOnConsistentPairHasNoExcess) {
  const Bounds b = metric_bounds(30, 11, true);
  const auto p =
      gd::explain_inconsistency(std::span<const double>(b.lower), std::span<const double>(b.upper), b.n, 3, 17);
  EXPECT_LE(p.excess(), 0.0);
  EXPECT_THROW(
      (void)gd::explain_inconsistency(std::span<const double>(b.lower), std::span<const double>(b.upper), b.n, 3, 30),
      std::invalid_argument);
}

// ---- input checks -------------------------------------------------------------------------

namespace {
std::string smoothing_error(std::vector<double> L, std::vector<double> U, std::size_t n, bool blocked) {
  try {
    if (blocked) (void)gd::smooth_bounds(std::span<double>(L), std::span<double>(U), n);
    else (void)gd::smooth_bounds_reference(std::span<double>(L), std::span<double>(U), n);
  } catch (const std::invalid_argument& e) {
    return e.what();
  }
  return "(no error)";
}
}  // namespace

TEST(Smoothing, InvalidInputIsRejectedNamingThePair) {
  const std::vector<double> L = {0, 1, 1, 1, 0, 1, 1, 1, 0};
  const std::vector<double> U = {0, 2, 2, 2, 0, 2, 2, 2, 0};
  const double nan = std::numeric_limits<double>::quiet_NaN();
  for (bool blocked : {false, true}) {
    SCOPED_TRACE(blocked ? "blocked" : "reference");
    auto l = L, u = U;
    l[5] = l[7] = nan;
    EXPECT_EQ(smoothing_error(l, u, 3, blocked), "bounds (1, 2): NaN (lower nan Å, upper 2 Å)");
    l = L, u = U;
    u[1] = u[3] = -2;
    EXPECT_EQ(smoothing_error(l, u, 3, blocked), "bounds (0, 1): negative bound (lower 1 Å, upper -2 Å)");
    l = L, u = U;
    l[2] = l[6] = kInf;
    u[2] = u[6] = kInf;
    EXPECT_EQ(smoothing_error(l, u, 3, blocked), "bounds (0, 2): infinite lower bound (upper inf Å)");
    l = L, u = U;
    u[4] = 0.5;
    EXPECT_EQ(smoothing_error(l, u, 3, blocked), "bounds (1, 1): diagonal must be 0 (lower 0 Å, upper 0.5 Å)");
    l = L, u = U;
    l[7] = 1.5;
    EXPECT_EQ(smoothing_error(l, u, 3, blocked),
              "bounds (1, 2): not symmetric: lower 1 / 1.5 Å, upper 2 / 2 Å at (1, 2) / (2, 1)");
    l = L, u = U;
    l[5] = l[7] = 2.5;
    EXPECT_EQ(smoothing_error(l, u, 3, blocked), "bounds (1, 2): lower bound 2.5 Å > upper bound 2 Å");
    l = L, u = U;
    l[5] = l[7] = 2.0 + 0.5 * gd::kDefaultSmoothingTolerance;  // within tolerance: accepted
    EXPECT_EQ(smoothing_error(l, u, 3, blocked), "(no error)");
    EXPECT_EQ(smoothing_error(L, U, 2, blocked), "bounds: lower has 9 and upper 9 elements, expected n*n with n = 2");
  }
  // Upper bounds may be +inf ("no bound").
  auto u = U;
  u[1] = u[3] = kInf;
  EXPECT_EQ(smoothing_error(L, u, 3, true), "(no error)");
  std::vector<double> l0 = L, u0 = U;
  gd::SmoothingOptions o;
  o.tile = 48;
  EXPECT_THROW((void)gd::smooth_bounds(std::span<double>(l0), std::span<double>(u0), 3, o), std::invalid_argument);
  o.tile = 0;
  o.tolerance = -1;
  EXPECT_THROW((void)gd::smooth_bounds(std::span<double>(l0), std::span<double>(u0), 3, o), std::invalid_argument);
}

TEST(Smoothing, EmptyAndSingleAtom) {
  std::vector<double> l, u;
  EXPECT_TRUE(gd::smooth_bounds(std::span<double>(l), std::span<double>(u), 0).consistent);
  l = {0};
  u = {0};
  EXPECT_TRUE(gd::smooth_bounds(std::span<double>(l), std::span<double>(u), 1).consistent);
  EXPECT_TRUE(gd::smooth_bounds_reference(std::span<double>(l), std::span<double>(u), 1).consistent);
}

// ---- progress and cancellation --------------------------------------------------------------

TEST(Smoothing, ProgressIsReportedEveryBlockStepAndEndsAtOne) {
  const Bounds b = metric_bounds(200, 5, false);  // 7 blocks of 32
  std::vector<double> l = b.lower, u = b.upper, seen;
  gd::SmoothingOptions o;
  o.tile = 32;
  o.threads = 2;
  o.progress = [&](double f) {
    seen.push_back(f);
    return false;
  };
  const auto r = gd::smooth_bounds(std::span<double>(l), std::span<double>(u), b.n, o);
  EXPECT_FALSE(r.cancelled);
  ASSERT_GE(seen.size(), 1u + 7u + 1u);  // start, every block step, end
  EXPECT_TRUE(std::is_sorted(seen.begin(), seen.end()));
  EXPECT_EQ(seen.front(), 0.0);
  EXPECT_GT(seen[1], 0.0);
  EXPECT_EQ(seen.back(), 1.0);
}

TEST(Smoothing, CancelLeavesTheBoundsUntouched) {
  const Bounds b = metric_bounds(300, 6, false);
  for (bool blocked : {true, false}) {
    SCOPED_TRACE(blocked ? "blocked" : "reference");
    std::vector<double> l = b.lower, u = b.upper;
    int calls = 0;
    gd::SmoothingReport r;
    auto cancel_at_third = [&](double) { return ++calls == 3; };
    if (blocked) {
      gd::SmoothingOptions o;
      o.tile = 32;
      o.threads = 2;
      o.progress = cancel_at_third;
      r = gd::smooth_bounds(std::span<double>(l), std::span<double>(u), b.n, o);
    } else {
      r = gd::smooth_bounds_reference(std::span<double>(l), std::span<double>(u), b.n, cancel_at_third);
    }
    EXPECT_TRUE(r.cancelled);
    EXPECT_EQ(calls, 3) << "no callback after the cancelling one";
    EXPECT_EQ(l, b.lower);
    EXPECT_EQ(u, b.upper);
  }
}

TEST(Smoothing, ThrowingCallbackPropagatesWithoutDeadlock) {
  const Bounds b = metric_bounds(150, 8, false);
  std::vector<double> l = b.lower, u = b.upper;
  gd::SmoothingOptions o;
  o.tile = 32;
  o.threads = 3;
  int calls = 0;  // throw from inside the worker loop, not from the first call
  o.progress = [&](double) -> bool {
    if (++calls == 3) throw std::runtime_error("callback failed");
    return false;
  };
  EXPECT_THROW((void)gd::smooth_bounds(std::span<double>(l), std::span<double>(u), b.n, o), std::runtime_error);
  EXPECT_EQ(calls, 3);
  EXPECT_EQ(l, b.lower);
}

// ---- the node ---------------------------------------------------------------------------

namespace {

struct NodeFixture {
  gemflow::Registry registry;
  std::unique_ptr<gemflow::Node> node;
  NodeFixture() {
    gemflow::PluginRegistrar r(registry, "distgeom-test");
    gd::register_smoothing_nodes(r);
    const auto* e = registry.find_node("distgeom.triangle_smoothing");
    if (!e) throw std::logic_error("distgeom.triangle_smoothing not registered");
    node = e->create();
  }
};

gemflow::DistanceBounds to_distance_bounds(const Bounds& b) {
  gemflow::DistanceBounds d;
  d.lower = gemflow::Matrix<double>(b.n, b.n, b.lower);
  d.upper = gemflow::Matrix<double>(b.n, b.n, b.upper);
  for (std::size_t i = 0; i < b.n; ++i) {
    d.labels.push_back("A:" + std::to_string(i + 1) + ":ALA:CA");
    d.atom_index.push_back(i);
  }
  d.restraint = gemflow::Matrix<int>(b.n, b.n, -1);
  return d;
}

}  // namespace

TEST(SmoothingNode, SpecDeclaresPortsAndParameters) {
  NodeFixture f;
  const auto* e = f.registry.find_node("distgeom.triangle_smoothing");
  ASSERT_NE(e, nullptr);
  ASSERT_NE(e->spec.input("bounds"), nullptr);
  EXPECT_EQ(e->spec.input("bounds")->type, "DistanceBounds");
  ASSERT_NE(e->spec.output("bounds"), nullptr);
  const auto* algo = e->spec.param("algorithm");
  ASSERT_NE(algo, nullptr);
  EXPECT_EQ(algo->choices, (std::vector<std::string>{"blocked", "reference"}));
  EXPECT_EQ(std::get<std::string>(algo->default_value), "blocked");
  ASSERT_NE(e->spec.param("tolerance"), nullptr);
  EXPECT_EQ(e->spec.param("tolerance")->unit, "Å");
  ASSERT_NE(e->spec.param("device"), nullptr);
  EXPECT_EQ(e->spec.param("device")->kind, gemflow::ParamKind::Device);
  ASSERT_NE(e->spec.param("precision"), nullptr);
  EXPECT_EQ(e->spec.param("precision")->choices, (std::vector<std::string>{"fp64", "fp32"}));
}

TEST(SmoothingNode, SmoothsLikeTheAlgorithmOnEveryPath) {
  const std::uint64_t seed = fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  const Bounds b = metric_bounds(90, seed, true);
  const Closure ref = run_reference(b);
  for (const char* algorithm : {"blocked", "reference"})
    for (const char* precision : {"fp64", "fp32"}) {
      SCOPED_TRACE(std::string(algorithm) + " " + precision);
      NodeFixture f;
      gemflow::testing::RecordingContext ctx;
      f.node->set_input("bounds", gemflow::Value::make(to_distance_bounds(b)));
      f.node->set_param("algorithm", std::string(algorithm));
      f.node->set_param("precision", std::string(precision));
      f.node->set_param("device", std::string("cpu"));
      ASSERT_EQ(gemflow::testing::error_of(*f.node, ctx), "(no error)");
      const auto out = f.node->output("bounds").as<gemflow::DistanceBounds>();
      ASSERT_EQ(out->size(), b.n);
      EXPECT_EQ(out->labels[7], "A:8:ALA:CA");
      const std::vector<double> lo(out->lower.span().begin(), out->lower.span().end());
      const std::vector<double> up(out->upper.span().begin(), out->upper.span().end());
      if (std::string(precision) == "fp64" || std::string(algorithm) == "reference") {
        EXPECT_TRUE(same(lo, ref.lower, b.n, "L"));
        EXPECT_TRUE(same(up, ref.upper, b.n, "U"));
      } else {
        const double tol = 8.0 * static_cast<double>(b.n) * 0x1p-24 * scale_of(b);
        EXPECT_TRUE(near(lo, ref.lower, b.n, tol, "L"));
        EXPECT_TRUE(near(up, ref.upper, b.n, tol, "U"));
      }
      ASSERT_FALSE(ctx.fractions().empty());
      EXPECT_EQ(ctx.fractions().back(), 1.0);
      EXPECT_EQ(std::get<std::int64_t>(ctx.records().at("changed_pairs")),
                static_cast<std::int64_t>(ref.report.changed_pairs));
      EXPECT_EQ(std::get<std::string>(ctx.records().at("device_used")), "cpu");
    }
}

TEST(SmoothingNode, InconsistencyNamesAtomsPathAndRestraints) {
  // A:1 -[U 1]- A:2 -[U 1]- A:3 with L(A:1, A:3) = 3 Å from restraint 117, U(A:1, A:2) from 12.
  Bounds b{3, {0, 0, 3, 0, 0, 0, 3, 0, 0}, {0, 1, 9, 1, 0, 1, 9, 1, 0}, {}};
  auto d = to_distance_bounds(b);
  d.restraint(0, 2) = d.restraint(2, 0) = 117;
  d.restraint(0, 1) = d.restraint(1, 0) = 12;
  NodeFixture f;
  gemflow::testing::RecordingContext ctx;
  f.node->set_input("bounds", gemflow::Value::make(std::move(d)));
  f.node->set_param("device", std::string("cpu"));
  EXPECT_EQ(gemflow::testing::error_of(*f.node, ctx),
            "inconsistent bounds after smoothing: L(A:1:ALA:CA, A:2:ALA:CA)=2 Å > "
            "U=1 Å; path: A:1:ALA:CA -[U 1, restraint 12]- A:2:ALA:CA -[U 1]- A:3:ALA:CA; its upper bounds "
            "sum to 2 Å, but L(A:1:ALA:CA, A:3:ALA:CA) = 3 Å, restraint 117 (excess 1 Å); 3 pair(s) inconsistent");
}

TEST(SmoothingNode, InvalidInputNamesTheAtoms) {
  Bounds b{3, {0, 1, 1, 1, 0, 2.5, 1, 2.5, 0}, {0, 2, 2, 2, 0, 2, 2, 2, 0}, {}};
  auto d = to_distance_bounds(b);
  d.restraint(1, 2) = d.restraint(2, 1) = 40;
  NodeFixture f;
  gemflow::testing::RecordingContext ctx;
  f.node->set_input("bounds", gemflow::Value::make(std::move(d)));
  f.node->set_param("device", std::string("cpu"));
  EXPECT_EQ(gemflow::testing::error_of(*f.node, ctx),
            "input 'bounds': L(A:2:ALA:CA, A:3:ALA:CA) = 2.5 Å > U = 2 Å, restraint 40");
}

TEST(SmoothingNode, CudaDeviceIsAClearDeviceError) {
#if defined(GEMFLOW_DISTGEOM_HAVE_CUDA)
  if (gemflow::cuda_device_count() > 0) GTEST_SKIP() << "a CUDA device is present: covered by the GPU tests";
#endif
  NodeFixture f;
  gemflow::testing::RecordingContext ctx;
  f.node->set_input("bounds", gemflow::Value::make(to_distance_bounds(metric_bounds(4, 1, true))));
  f.node->set_param("device", std::string("cuda"));
  EXPECT_THROW(f.node->execute(ctx), gemflow::DeviceError);
}

TEST(SmoothingNode, CancelThrowsCancelled) {
  NodeFixture f;
  gemflow::testing::RecordingContext ctx;
  ctx.cancel_after_progress(2);  // cancelled once more than one progress call was made
  f.node->set_input("bounds", gemflow::Value::make(to_distance_bounds(metric_bounds(200, 2, false))));
  f.node->set_param("device", std::string("cpu"));
  EXPECT_THROW(f.node->execute(ctx), gemflow::Cancelled);
  EXPECT_TRUE(f.node->output("bounds").empty());
}
