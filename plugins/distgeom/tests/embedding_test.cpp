// Unit tests of the distance-geometry chain: metric matrix, embedding, superposition,
// chirality, metrization, refinement, bounds.
#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <vector>

#include <gemflow/distgeom/bounds.hpp>
#include <gemflow/distgeom/embedding.hpp>
#include <gemflow/distgeom/geometry.hpp>
#include <gemflow/distgeom/metrize.hpp>
#include <gemflow/distgeom/refine.hpp>
#include <gemflow/distgeom/smoothing.hpp>

namespace {
using namespace gemflow::distgeom;

std::vector<double> random_points(std::size_t n, double box, unsigned seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> u(-box, box);
  std::vector<double> x(3 * n);
  for (auto& v : x) v = u(rng);
  return x;
}

std::vector<double> distances(const std::vector<double>& x, std::size_t n) {
  std::vector<double> d(n * n);
  for (std::size_t i = 0; i < n; ++i)
    for (std::size_t j = 0; j < n; ++j) {
      double s = 0;
      for (int k = 0; k < 3; ++k) s += (x[3 * i + k] - x[3 * j + k]) * (x[3 * i + k] - x[3 * j + k]);
      d[i * n + j] = std::sqrt(s);
    }
  return d;
}

std::vector<double> mirrored(std::vector<double> x) {
  for (std::size_t k = 0; k < x.size(); k += 3) x[k] = -x[k];
  return x;
}

// RMSD up to rigid motion and reflection.
double rmsd_up_to_mirror(const std::vector<double>& a, const std::vector<double>& b) {
  return std::min(superposed_rmsd(a, b), superposed_rmsd(mirrored(a), b));
}

TEST(MetricMatrix, ReproducesGramMatrixOfCentredPoints) {
  const std::size_t n = 40;
  auto x = random_points(n, 10.0, 1);
  for (int k = 0; k < 3; ++k) {
    double m = 0;
    for (std::size_t i = 0; i < n; ++i) m += x[3 * i + k];
    for (std::size_t i = 0; i < n; ++i) x[3 * i + k] -= m / n;
  }
  std::vector<double> g(n * n);
  metric_matrix(distances(x, n), n, g);
  for (std::size_t i = 0; i < n; ++i)
    for (std::size_t j = 0; j < n; ++j) {
      const double ref = x[3 * i] * x[3 * j] + x[3 * i + 1] * x[3 * j + 1] + x[3 * i + 2] * x[3 * j + 2];
      ASSERT_NEAR(g[i * n + j], ref, 1e-9) << i << "," << j;
    }
}

TEST(Embed, ExactDistancesGiveTheSamePoints) {
  for (std::size_t n : {12u, 50u, 150u})  // dense eigen path (n <= 64) and Spectra path
    for (auto method : {EmbedMethod::Cholesky, EmbedMethod::Eigen}) {
      const auto x = random_points(n, 15.0, static_cast<unsigned>(n));
      std::vector<double> g(n * n);
      metric_matrix(distances(x, n), n, g);
      const auto e = embed(g, n, 3, method);
      ASSERT_EQ(e.coords.size(), 3 * n);
      EXPECT_LT(rmsd_up_to_mirror(e.coords, x), 1e-6) << "n=" << n << " method=" << int(method);
      EXPECT_LT(std::abs(e.next), 1e-6 * e.spectrum[0]);  // rank 3
    }
}

TEST(Embed, FourDimensionsOfThreeDimensionalPointsHaveANullFourthAxis) {
  const std::size_t n = 30;
  const auto x = random_points(n, 8.0, 3);
  std::vector<double> g(n * n);
  metric_matrix(distances(x, n), n, g);
  const auto e = embed(g, n, 4, EmbedMethod::Eigen);
  EXPECT_LT(std::abs(e.spectrum[3]), 1e-9 * e.spectrum[0]);
  std::vector<double> first3;
  for (std::size_t i = 0; i < n; ++i) {
    EXPECT_LT(std::abs(e.coords[4 * i + 3]), 1e-5);
    first3.insert(first3.end(), {e.coords[4 * i], e.coords[4 * i + 1], e.coords[4 * i + 2]});
  }
  EXPECT_LT(rmsd_up_to_mirror(first3, x), 1e-6);
  // Two points do not span 3 dimensions: a clear error, not garbage.
  std::vector<double> two{0, 1, 1, 0};
  EXPECT_THROW((void)embed(two, 2, 3, EmbedMethod::Cholesky), std::invalid_argument);
  std::vector<double> flat(16, 0.0);
  EXPECT_THROW((void)embed(flat, 4, 3, EmbedMethod::Cholesky), std::runtime_error);
}

TEST(Kabsch, RecoversAKnownRotationAndTranslation) {
  const std::size_t n = 25;
  const auto x = random_points(n, 5.0, 4);
  const double a = 0.7, c = std::cos(a), s = std::sin(a);
  const double r[9] = {c, -s, 0, s, c, 0, 0, 0, 1};  // about z, then tilt below
  const double t[9] = {1, 0, 0, 0, std::cos(0.3), -std::sin(0.3), 0, std::sin(0.3), std::cos(0.3)};
  std::vector<double> y(3 * n);
  for (std::size_t i = 0; i < n; ++i)
    for (int k = 0; k < 3; ++k) {
      double v = 0;
      for (int m = 0; m < 3; ++m) {
        double w = 0;
        for (int q = 0; q < 3; ++q) w += r[3 * m + q] * x[3 * i + q];
        v += t[3 * k + m] * w;
      }
      y[3 * i + k] = v + (k == 0 ? 3.0 : k == 1 ? -1.0 : 2.5);
    }
  const auto sp = kabsch(x, y);
  EXPECT_LT(sp.rmsd, 1e-12);
  for (int k = 0; k < 3; ++k)
    for (int m = 0; m < 3; ++m) {
      double tr = 0;
      for (int q = 0; q < 3; ++q) tr += t[3 * k + q] * r[3 * q + m];
      EXPECT_NEAR(sp.rotation[3 * k + m], tr, 1e-12);
    }
  auto moved = x;
  gemflow::distgeom::apply(sp, moved);
  for (std::size_t i = 0; i < 3 * n; ++i) EXPECT_NEAR(moved[i], y[i], 1e-10);
  // A reflection is not a rotation: the mirror image does not superpose.
  EXPECT_GT(superposed_rmsd(mirrored(x), y), 1.0);
}

TEST(Chirality, MirroredEmbeddingIsFlippedBack) {
  // Ten tetrahedral centres with reference handedness +1.
  std::vector<double> x;
  std::vector<ChiralCheck> c;
  for (std::size_t k = 0; k < 10; ++k) {
    const double o = 5.0 * static_cast<double>(k);
    const double p[4][3] = {{o, 0, 0}, {o + 1, 0, 0}, {o, 1, 0}, {o, 0, 1}};
    for (auto& q : p) x.insert(x.end(), {q[0], q[1], q[2]});
    c.push_back({4 * k, 4 * k + 1, 4 * k + 2, 4 * k + 3, 1});
  }
  ASSERT_GT(chiral_volume(&x[0], &x[3], &x[6], &x[9]), 0.0);
  auto same = x;
  std::size_t ok = 0;
  EXPECT_FALSE(fix_chirality(same, 3, c, &ok));
  EXPECT_EQ(ok, 10u);
  EXPECT_EQ(same, x);
  auto m = mirrored(x);
  EXPECT_TRUE(fix_chirality(m, 3, c, &ok));
  EXPECT_EQ(ok, 10u);
  for (std::size_t k = 0; k < 10; ++k)
    EXPECT_GT(chiral_volume(&m[12 * k], &m[12 * k + 3], &m[12 * k + 6], &m[12 * k + 9]), 0.0);
}

struct Bounds {
  std::vector<double> lower, upper;
};
// Bounds of a random "molecule": pairs under the cutoff ± tol, others [1.0, 100].
Bounds cutoff_bounds(const std::vector<double>& x, std::size_t n, double cutoff, double tol) {
  const auto d = distances(x, n);
  Bounds b{std::vector<double>(n * n, 0.0), std::vector<double>(n * n, 0.0)};
  for (std::size_t i = 0; i < n; ++i)
    for (std::size_t j = 0; j < n; ++j) {
      if (i == j) continue;
      const double v = d[i * n + j];
      b.lower[i * n + j] = v < cutoff ? v - tol : std::min(1.0, v);
      b.upper[i * n + j] = v < cutoff ? v + tol : 100.0;
    }
  return b;
}

// Largest violation (Å) of the bounds by 3D coordinates (O(n²) oracle).
double max_bound_violation(const std::vector<double>& c, std::size_t n, const Bounds& b) {
  const auto d = distances(c, n);
  double m = 0;
  for (std::size_t i = 0; i < n; ++i)
    for (std::size_t j = 0; j < n; ++j)
      if (i != j) m = std::max({m, d[i * n + j] - b.upper[i * n + j], b.lower[i * n + j] - d[i * n + j]});
  return m;
}

TEST(Metrize, DrawsInsideTheBoundsDeterministically) {
  const std::size_t n = 60;
  const auto x = random_points(n, 6.0, 5);
  auto b = cutoff_bounds(x, n, 5.0, 0.3);
  ASSERT_TRUE(smooth_bounds(b.lower, b.upper, n).consistent);
  MetrizeOptions o;
  o.seed = 42;
  const auto d1 = metrize(b.lower, b.upper, n, o);
  const auto d2 = metrize(b.lower, b.upper, n, o);
  EXPECT_EQ(d1, d2);
  o.seed = 43;
  EXPECT_NE(metrize(b.lower, b.upper, n, o), d1);
  for (std::size_t i = 0; i < n; ++i)
    for (std::size_t j = 0; j < n; ++j) {
      EXPECT_EQ(d1[i * n + j], d1[j * n + i]);
      EXPECT_GE(d1[i * n + j], b.lower[i * n + j]);
      EXPECT_LE(d1[i * n + j], b.upper[i * n + j]);
    }
}

TEST(Metrize, PartialKeepsTrianglesThroughMetrizedAtoms) {
  const std::size_t n = 50;
  const auto x = random_points(n, 6.0, 6);
  auto b = cutoff_bounds(x, n, 4.0, 0.5);
  ASSERT_TRUE(smooth_bounds(b.lower, b.upper, n).consistent);
  MetrizeOptions o;
  o.method = MetrizeMethod::Partial;
  o.atoms = n;  // full metrization on a small problem
  int calls = 0;
  const auto d = metrize(b.lower, b.upper, n, o, [&](std::span<double> l, std::span<double> u, std::size_t m) {
    ++calls;
    ASSERT_TRUE(smooth_bounds(l, u, m).consistent);
  });
  EXPECT_EQ(calls, static_cast<int>(n));
  std::size_t broken = 0;
  for (std::size_t i = 0; i < n; ++i)
    for (std::size_t j = 0; j < n; ++j)
      for (std::size_t k = 0; k < n; ++k)
        if (d[i * n + j] > d[i * n + k] + d[k * n + j] + 1e-9) ++broken;
  EXPECT_EQ(broken, 0u);                                                       // fully metrized: a metric
  EXPECT_THROW((void)metrize(b.lower, b.upper, n, o), std::invalid_argument);  // no smoother
}

TEST(Refine, RemovesViolationsOfPerturbedCoordinates) {
  const std::size_t n = 80;
  const auto x = random_points(n, 7.0, 7);
  const auto b = cutoff_bounds(x, n, 6.0, 0.01);
  std::mt19937_64 rng(8);
  std::normal_distribution<double> noise(0.0, 1.0);
  auto start = x;
  for (auto& v : start) v += noise(rng);
  RefineOptions o;
  o.max_iterations = 4000;
  const double before = dg_error(start, n, b.lower, b.upper, {}, {}, o);
  const auto r = refine(start, n, 3, b.lower, b.upper, {}, {}, o);
  EXPECT_GT(before, 1.0);
  EXPECT_LT(r.error, 1e-6 * before);
  EXPECT_EQ(r.upper_violations + r.lower_violations, 0u);
  EXPECT_LT(max_bound_violation(r.coords, n, b), 1e-3);
}

TEST(Refine, SqueezesFourDimensionsAndHonoursChirality) {
  const std::size_t n = 40;
  const auto x = random_points(n, 5.0, 9);
  const auto b = cutoff_bounds(x, n, 5.0, 0.05);
  std::vector<ChiralTerm> chir;
  for (std::size_t c = 0; c + 3 < n; c += 4)
    chir.push_back({c, c + 1, c + 2, c + 3, chiral_volume(&x[3 * c], &x[3 * c + 3], &x[3 * c + 6], &x[3 * c + 9])});
  // Start from the points lifted into 4D with noise.
  std::mt19937_64 rng(10);
  std::normal_distribution<double> noise(0.0, 0.5);
  std::vector<double> s4;
  const auto& m = x;
  for (std::size_t i = 0; i < n; ++i)
    s4.insert(s4.end(),
              {m[3 * i] + noise(rng), m[3 * i + 1] + noise(rng), m[3 * i + 2] + noise(rng), 2.0 * noise(rng)});
  RefineOptions o;
  o.max_iterations = 6000;
  const auto r = refine(s4, n, 4, b.lower, b.upper, chir, {}, o);
  EXPECT_EQ(r.upper_violations + r.lower_violations, 0u);
  EXPECT_EQ(r.chiral_wrong, 0u);
  EXPECT_LT(max_bound_violation(r.coords, n, b), 1e-3);
  // The right hand, not the mirror (the distances alone cannot tell them apart).
  EXPECT_LT(superposed_rmsd(r.coords, x), superposed_rmsd(mirrored(r.coords), x) / 5);
}

TEST(Refine, SumRestraintPullsTheNearestPairIn) {
  // Two atoms fixed 10 Å apart along x; atoms 2 and 3 start far; an r^-6 restraint over the
  // pairs (0,2), (0,3) with upper 3 Å must bring at least one of them within reach.
  const std::size_t n = 4;
  std::vector<double> x{0, 0, 0, 10, 0, 0, 0, 12, 0, 0, -12, 0};
  std::vector<double> lo(n * n, 0.0), up(n * n, 50.0);
  for (std::size_t i = 0; i < n; ++i) up[i * n + i] = 0;
  lo[1] = lo[4] = 9.99;
  up[1] = up[4] = 10.01;
  std::vector<AmbiguousTerm> amb{{7, {{0, 2}, {0, 3}}, 3.0}};
  RefineOptions o;
  const auto r = refine(x, n, 3, lo, up, {}, amb, o);
  auto d = [&](std::size_t i, std::size_t j) {
    double s = 0;
    for (int k = 0; k < 3; ++k) s += std::pow(r.coords[3 * i + k] - r.coords[3 * j + k], 2);
    return std::sqrt(s);
  };
  const double deff = std::pow(std::pow(d(0, 2), -6) + std::pow(d(0, 3), -6), -1.0 / 6.0);
  EXPECT_LE(deff, 3.0 + 1e-3);
  EXPECT_NEAR(d(0, 1), 10.0, 0.02);
}

TEST(Bounds, CovalentGeometryOfAWaterDimerAndRestraints) {
  // Two waters: O–H bonds and the H–O–H angle come from the model; one restraint between
  // the oxygens, one over a pseudo-atom group (both H of water 2).
  std::vector<AtomInfo> atoms{{"O", "O", "HOH", "A", 1}, {"H", "H1", "HOH", "A", 1}, {"H", "H2", "HOH", "A", 1},
                              {"O", "O", "HOH", "A", 2}, {"H", "H1", "HOH", "A", 2}, {"H", "H2", "HOH", "A", 2}};
  std::vector<double> x{0, 0, 0, 0.957, 0, 0, -0.24, 0.927, 0, 2.9, 0, 0, 3.3, 0.8, 0.3, 3.3, -0.8, 0.3};
  std::vector<PairRestraint> rs{
      {1, {{{0}, {3}}}, 2.5, 3.2, 0.0}, {2, {{{0}, {4, 5}}}, 1.8, 3.0, 0.5}, {3, {{{0}, {99}}}, 1.8, 3.0, 0.0}};
  BoundsOptions o;
  o.diameter = 20.0;
  const auto b = restraint_bounds(atoms, x, rs, o);
  ASSERT_EQ(b.n, 6u);
  EXPECT_EQ(b.topology.bonds.size(), 4u);
  EXPECT_EQ(b.covalent_pairs, 6u);  // 4 bonds + 2 H–H angles
  EXPECT_NEAR(b.lower[0 * 6 + 1], 0.957 - 0.01, 1e-12);
  EXPECT_NEAR(b.upper[0 * 6 + 1], 0.957 + 0.01, 1e-12);
  EXPECT_NEAR(b.upper[0 * 6 + 3], 3.2, 1e-12);
  EXPECT_NEAR(b.lower[0 * 6 + 3], 2.5, 1e-12);  // restraint lower above the vdW floor 2.44
  EXPECT_EQ(b.restraint[0 * 6 + 3], 1);
  // Group: (3.0 + 0.5) · 2^(1/6) + spread(H1,H2 of water 2 = 1.6 Å).
  EXPECT_NEAR(b.upper[0 * 6 + 4], 3.5 * std::pow(2.0, 1.0 / 6.0) + 1.6, 1e-9);
  EXPECT_EQ(b.grouped, std::vector<int>{2});
  ASSERT_EQ(b.skipped.size(), 1u);
  EXPECT_EQ(b.skipped[0].first, 3);
  EXPECT_EQ(b.restraints_used, 2u);
  // Unrestrained, non-covalent pair: vdW floor (H–H 0.8 · 2.4) and the diameter.
  EXPECT_NEAR(b.lower[1 * 6 + 4], 0.8 * 2.4, 1e-12);
  EXPECT_EQ(b.upper[1 * 6 + 4], 20.0);
  // Dropping hydrogens skips the group restraint.
  o.hydrogens = HydrogenPolicy::None;
  const auto h = restraint_bounds(atoms, x, rs, o);
  EXPECT_EQ(h.n, 2u);
  EXPECT_EQ(h.restraints_used, 1u);
  EXPECT_EQ(h.skipped.size(), 2u);
}

}  // namespace
