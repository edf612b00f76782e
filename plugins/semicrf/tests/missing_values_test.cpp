// Missing values (a signal's validity mask) in the Gaussian emissions, the estimates and the fit
// (gemflow/semicrf/emissions.hpp, fit.hpp).
//
// Oracle: a missing value x_m is marginalised when Z(observed) = ∫ Z(observed, x_m) dx_m, i.e.
// Σ over segmentations of the integral of the segmentation's weight. The tests enumerate every
// segmentation (brute_force) at each node of a quadrature grid over the missing values and
// integrate; the masked scores must give the same log Z. The integrand is a sum of Gaussians in
// x_m (σ ≥ 0.8), for which the trapezoid rule with step h has a relative error ~exp(−2π²σ²/h²)
// (Poisson summation): below 1e-12 at the steps used; the grids reach 8σ past every mean.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <functional>
#include <numbers>
#include <random>
#include <string>
#include <vector>

#include "gemflow/semicrf/emissions.hpp"
#include "gemflow/semicrf/fit.hpp"
#include "gemflow/semicrf/semicrf.hpp"

namespace sc = gemflow::semicrf;

namespace {

sc::Model small_model(std::size_t C, std::size_t K, std::uint64_t seed) {
  std::mt19937_64 g(seed);
  std::normal_distribution<double> n(0.0, 0.7);
  sc::Model m = sc::Model::zeros(C, K);
  for (auto& v : m.transitions) v = n(g);
  for (auto& v : m.duration_bias) v = n(g) - 0.5;
  m.initial.resize(C);
  for (auto& v : m.initial) v = n(g);
  return m;
}

double log_z_of(const sc::Model& m, const std::vector<double>& f, std::size_t T) {
  sc::Batch b;
  b.emissions = f.data();
  b.lengths = {T};
  return sc::brute_force(m, b, 0).log_z;
}

/// log ∫ exp(g(v)) dv over [−a, a]^dims by the trapezoid rule with step h (log-sum-exp).
double log_integral(const std::function<double(const std::vector<double>&)>& g, std::size_t dims, double a, double h) {
  const int n = static_cast<int>(std::lround(2 * a / h));
  std::vector<double> logs;
  std::vector<int> idx(dims, 0);
  while (true) {
    std::vector<double> v(dims);
    double w = 0;  // log of the trapezoid weight
    for (std::size_t d = 0; d < dims; ++d) {
      v[d] = -a + h * idx[d];
      w += std::log(idx[d] == 0 || idx[d] == n ? h / 2 : h);
    }
    logs.push_back(g(v) + w);
    std::size_t d = 0;
    while (d < dims && ++idx[d] > n) idx[d++] = 0;
    if (d == dims) break;
  }
  double mx = -INFINITY;
  for (double l : logs) mx = std::max(mx, l);
  double s = 0;
  for (double l : logs) s += std::exp(l - mx);
  return mx + std::log(s);
}

}  // namespace

TEST(MissingValues, OneMissingSampleIsIntegratedOut) {
  const std::size_t T = 6, C = 2, K = 3;
  std::vector<double> x = {0.3, -1.2, 1e6, 2.4, 1.9, -0.4};  // sample 2 missing: its placeholder is irrelevant
  const std::vector<std::uint8_t> valid = {1, 1, 0, 1, 1, 1};
  const sc::GaussianLabels gl{C, 1, {-1.0, 2.0}, {0.64, 2.25}};
  const sc::Model m = small_model(C, K, 7);
  const auto f = sc::gaussian_scores(x.data(), T, 1, gl, valid.data());
  EXPECT_EQ(f[2 * C + 0], 0.0);
  EXPECT_EQ(f[2 * C + 1], 0.0);
  const double masked = log_z_of(m, f, T);
  const double oracle = log_integral(
      [&](const std::vector<double>& v) {
        auto y = x;
        y[2] = v[0];
        return log_z_of(m, sc::gaussian_scores(y.data(), T, 1, gl), T);
      },
      1, 20.0, 0.2);
  EXPECT_NEAR(masked, oracle, 1e-10 * std::abs(oracle));
  // and the streaming forward pass agrees with the enumeration on the masked scores
  sc::Batch b;
  b.emissions = f.data();
  b.lengths = {T};
  EXPECT_NEAR(sc::log_partition(m, b)[0], masked, 1e-12 * std::abs(masked));
}

TEST(MissingValues, MissingChannelsOfTwoChannelSamples) {
  // sample 1: channel 1 missing; sample 3: both channels missing (a 3-D integral over the
  // missing values: v0 = x(1, 1), v1 = x(3, 0), v2 = x(3, 1))
  const std::size_t T = 5, D = 2, C = 2, K = 2;
  std::vector<double> x = {0.1, 0.5, -0.8, 7.0, 1.7, 2.2, 3.0, 3.0, 1.1, 1.9};
  const std::vector<std::uint8_t> valid = {1, 1, 1, 0, 1, 1, 0, 0, 1, 1};
  const sc::GaussianLabels gl{C, D, {-0.5, 0.0, 1.5, 2.0}, {0.81, 1.0, 1.0, 1.44}};
  const sc::Model m = small_model(C, K, 11);
  const auto f = sc::gaussian_scores(x.data(), T, D, gl, valid.data());
  EXPECT_EQ(f[3 * C + 0], 0.0);
  EXPECT_EQ(f[3 * C + 1], 0.0);
  // sample 1 keeps channel 0's log density only
  const double l2pi = std::log(2 * std::numbers::pi);
  EXPECT_NEAR(f[1 * C + 0], -0.5 * (l2pi + std::log(0.81)) - 0.09 / (2 * 0.81), 1e-14);
  const double masked = log_z_of(m, f, T);
  const double oracle = log_integral(
      [&](const std::vector<double>& v) {
        auto y = x;
        y[1 * D + 1] = v[0];
        y[3 * D + 0] = v[1];
        y[3 * D + 1] = v[2];
        return log_z_of(m, sc::gaussian_scores(y.data(), T, D, gl), T);
      },
      3, 12.0, 0.75);
  EXPECT_NEAR(masked, oracle, 1e-9 * std::abs(oracle));
}

TEST(MissingValues, OutlierMixtureDropsMissingChannelsToo) {
  // with ε > 0 the uniform part is over the range of the observed values; a missing channel
  // drops from both parts, a sample without any observed channel scores 0
  const double x[] = {0.0, 5.0, 0.2, 100.0, 1.0, -3.0};  // T = 3, D = 2; x(1, 1) = 100 missing
  const std::vector<std::uint8_t> valid = {1, 1, 1, 0, 0, 0};
  sc::GaussianLabels g{1, 2, {0.0, 1.0}, {1.0, 4.0}};
  g.outlier = 0.1;
  const auto f = sc::gaussian_scores(x, 3, 2, g, valid.data());
  const double n0 = -0.5 * std::log(2 * std::numbers::pi) - 0.02;  // channel 0 at 0.2 (range 0..0.2)
  EXPECT_NEAR(f[1], std::log(0.9 * std::exp(n0) + 0.1 / 0.2), 1e-12);
  EXPECT_EQ(f[2], 0.0);
}

TEST(MissingValues, EstimatesUseTheObservedValuesOnly) {
  // one channel: the masked estimate equals the estimate on the signal without the missing rows
  std::vector<double> x, kept;
  std::vector<std::uint8_t> valid;
  for (int t = 0; t < 120; ++t) {
    const bool miss = t % 7 == 3 || (t >= 50 && t < 58);
    const double v = (t < 60 ? 1.0 : 4.0) + 0.2 * std::sin(t * 1.7);
    x.push_back(miss ? -1e3 : v);  // placeholders far off: they must not count
    valid.push_back(miss ? 0 : 1);
    if (!miss) kept.push_back(v);
  }
  for (auto variance : {sc::VarianceEstimate::noise, sc::VarianceEstimate::cluster}) {
    const auto a = sc::estimate_gaussians(x.data(), x.size(), 1, 3, sc::LevelEstimate::kmeans, variance, valid.data());
    const auto b = sc::estimate_gaussians(kept.data(), kept.size(), 1, 3, sc::LevelEstimate::kmeans, variance);
    EXPECT_EQ(a.mean, b.mean);
    EXPECT_EQ(a.variance, b.variance);
  }
  EXPECT_EQ(sc::noise_variance(x.data(), x.size(), 1, valid.data()), sc::noise_variance(kept.data(), kept.size(), 1));
  const std::vector<std::uint8_t> none(x.size(), 0);
  EXPECT_THROW((void)sc::estimate_gaussians(x.data(), x.size(), 1, 2, sc::LevelEstimate::quantiles,
                                            sc::VarianceEstimate::noise, none.data()),
               std::invalid_argument);
}

TEST(MissingValues, EmIgnoresPlaceholders) {
  // two levels with a run of missing values inside the high one: EM's levels come from the
  // observed values, whatever the placeholders hold
  std::vector<double> x;
  std::vector<std::uint8_t> valid;
  for (int t = 0; t < 80; ++t) {
    const bool miss = t >= 45 && t < 55;
    x.push_back(miss ? 50.0 : (t < 40 ? 0.0 : 3.0) + 0.1 * std::sin(t * 2.1));
    valid.push_back(miss ? 0 : 1);
  }
  sc::GaussianSemiCrf m;
  m.crf = sc::Model::zeros(2, 80);
  m.crf.transitions = {-INFINITY, 0.0, 0.0, -INFINITY};
  for (auto& v : m.crf.duration_bias) v = -10.0;
  m.gaussians =
      sc::estimate_gaussians(x.data(), 80, 1, 2, sc::LevelEstimate::kmeans, sc::VarianceEstimate::noise, valid.data());
  sc::FitOptions o;
  o.iterations = 5;
  const auto hist = sc::fit_em(m, x.data(), {80}, 1, o, valid.data());
  ASSERT_GE(hist.size(), 2u);
  EXPECT_NEAR(m.gaussians.mean[0], 0.0, 0.05);
  EXPECT_NEAR(m.gaussians.mean[1], 3.0, 0.05);
  for (std::size_t i = 1; i < hist.size(); ++i) EXPECT_GE(hist[i].objective, hist[i - 1].objective - 1e-9);
  sc::Batch b;
  const auto f = sc::gaussian_scores(x.data(), 80, 1, m.gaussians, valid.data());
  b.emissions = f.data();
  b.lengths = {80};
  const auto path = sc::viterbi(m.crf, b)[0];
  ASSERT_EQ(path.segments.size(), 2u);
  EXPECT_EQ(path.segments[0].end, 40u);
}

// Regression (a user's report): fitting 4096 labels to 10⁶ samples failed in the allocation of
// the emission scores (std::bad_alloc, 32 GB) before the recurrences' memory check could name the
// sizes. Both fits now check the scores' memory first, with the labels in the message.
TEST(MissingValues, FitsCheckTheScoresMemoryBeforeAllocating) {
  std::vector<double> x(80);
  for (int t = 0; t < 80; ++t) x[t] = (t < 40 ? 0.0 : 3.0) + 0.1 * std::sin(t * 2.1);
  sc::GaussianSemiCrf m;
  m.crf = sc::Model::zeros(4, 10);
  m.gaussians = sc::estimate_gaussians(x.data(), 80, 1, 4, sc::LevelEstimate::quantiles, sc::VarianceEstimate::noise);
  sc::FitOptions o;
  o.crf.memory_limit = 80 * 4 * 8;  // one copy of the scores: the fit needs two
  const auto expect_refused = [&](auto&& call, const char* what) {
    try {
      call();
      ADD_FAILURE() << what << ": no MemoryError";
    } catch (const sc::MemoryError& e) {
      EXPECT_NE(std::string(e.what()).find("80 samples × C = 4 labels"), std::string::npos) << what << ": " << e.what();
    }
  };
  expect_refused([&] { (void)sc::fit_em(m, x.data(), {80}, 1, o); }, "EM");
  const std::vector<std::vector<sc::Segment>> gold = {{{0, 40, 0, 0.0}, {40, 80, 3, 0.0}}};
  expect_refused([&] { (void)sc::fit_supervised(m, x.data(), {80}, 1, gold, o); }, "supervised");
  o.crf.memory_limit = 0;  // unchecked: the same fit runs
  EXPECT_FALSE(sc::fit_em(m, x.data(), {80}, 1, o).empty());
}
