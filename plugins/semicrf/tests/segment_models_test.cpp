// Segment-level scores in the recurrences and the Normal-Gamma segment model
// (gemflow/semicrf/semicrf.hpp SegmentScore, gemflow/semicrf/segment_models.hpp).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <numbers>
#include <random>
#include <stdexcept>
#include <utility>
#include <vector>

#include "gemflow/semicrf/emissions.hpp"
#include "gemflow/semicrf/segment_models.hpp"
#include "gemflow/semicrf/semicrf.hpp"

namespace sc = gemflow::semicrf;

namespace {

/// log of the Student-t posterior predictive of x after the values `seen` (Murphy 2007, eq. 100):
/// t_{2αₙ}(x | μₙ, βₙ(κₙ + 1)/(αₙκₙ)) — the chain rule of these gives the marginal likelihood by
/// another route than the closed form.
double log_predictive(double x, const std::vector<double>& seen, const sc::NormalGammaPrior& p) {
  const double n = double(seen.size());
  double mean = 0, ss = 0;
  for (double v : seen) mean += v / std::max(n, 1.0);
  for (double v : seen) ss += (v - mean) * (v - mean);
  const double kn = p.kappa + n, an = p.alpha + n / 2, mn = (p.kappa * p.mean + n * mean) / kn;
  const double bn = p.beta + ss / 2 + p.kappa * n * (mean - p.mean) * (mean - p.mean) / (2 * kn);
  const double nu = 2 * an, scale2 = bn * (kn + 1) / (an * kn), z = (x - mn) * (x - mn) / scale2;
  return std::lgamma((nu + 1) / 2) - std::lgamma(nu / 2) - 0.5 * std::log(nu * std::numbers::pi * scale2) -
         (nu + 1) / 2 * std::log1p(z / nu);
}

/// A segment score depending on the whole segment (its length and where it starts), for the
/// recurrences' tests.
class Wiggle final : public sc::SegmentScore {
 public:
  double score(std::size_t b, std::size_t s, std::size_t t, std::size_t c) const override {
    return 0.3 * std::sin(1.7 * double(s) + 0.9 * double(t) * double(t)) - 0.2 * double(c) + 0.1 * double(b);
  }
};

}  // namespace

TEST(SegmentModels, NormalGammaIsTheProductOfPredictives) {
  const std::vector<double> x = {1.2, 0.7, 1.9, 1.4, -0.3, 0.8, 5.0, 4.4};
  const sc::NormalGammaPrior p{0.5, 0.3, 1.5, 0.8};
  const sc::NormalGammaSegments g(x.data(), {x.size()}, 1, {p});
  for (auto [s, t] : {std::pair<std::size_t, std::size_t>{0, 1}, {0, 8}, {2, 6}, {5, 8}}) {
    double chain = 0;
    std::vector<double> seen;
    for (std::size_t u = s; u < t; ++u) chain += log_predictive(x[u], seen, p), seen.push_back(x[u]);
    EXPECT_NEAR(g.score(0, s, t, 0), chain, 1e-11 * std::max(1.0, std::abs(chain))) << s << ".." << t;
  }
  // channels add; missing values are left out; a segment without observed values scores 0
  const std::vector<double> x2 = {1.2, 10.0, 0.7, 11.0, 1.9, 9.0};
  const std::vector<std::uint8_t> valid = {1, 1, 0, 1, 1, 0};
  const sc::NormalGammaSegments h(x2.data(), {3}, 2, {p, {10.0, 1.0, 2.0, 1.0}}, valid.data());
  const double c0 = log_predictive(1.2, {}, p) + log_predictive(1.9, {1.2}, p);
  const sc::NormalGammaPrior p1{10.0, 1.0, 2.0, 1.0};
  const double c1 = log_predictive(10.0, {}, p1) + log_predictive(11.0, {10.0}, p1);
  EXPECT_NEAR(h.score(0, 0, 3, 0), c0 + c1, 1e-11 * std::abs(c0 + c1));
  const std::vector<std::uint8_t> none = {0, 0, 1, 1, 1, 1};
  const sc::NormalGammaSegments e(x2.data(), {3}, 2, {p}, none.data());
  EXPECT_EQ(e.score(0, 0, 1, 0), 0.0);
  EXPECT_THROW(sc::NormalGammaSegments(x.data(), {x.size()}, 1, {{0, 0, 1, 1}}), std::invalid_argument);
  EXPECT_THROW(sc::NormalGammaSegments(x.data(), {4}, 2, {p, p, p}), std::invalid_argument);
}

TEST(SegmentModels, SegmentScoresEnterEveryRecurrence) {
  // forward, posteriors and Viterbi with a segment score against enumeration, two sequences
  std::mt19937_64 rng(5);
  std::normal_distribution<double> n(0.0, 1.0);
  const std::size_t C = 2, K = 3;
  sc::Model m = sc::Model::zeros(C, K);
  for (auto& v : m.transitions) v = n(rng);
  for (auto& v : m.duration_bias) v = n(rng);
  std::vector<double> f(11 * C);
  for (auto& v : f) v = n(rng);
  const Wiggle w;
  sc::Batch x;
  x.emissions = f.data();
  x.lengths = {5, 6};
  x.segment_score = &w;
  const auto lz = sc::log_partition(m, x);
  const auto post = sc::posteriors(m, x);
  const auto best = sc::viterbi(m, x);
  for (std::size_t b = 0; b < 2; ++b) {
    const auto bf = sc::brute_force(m, x, b);
    EXPECT_NEAR(lz[b], bf.log_z, 1e-12 * std::abs(bf.log_z));
    EXPECT_NEAR(post.log_z[b], bf.log_z, 1e-12 * std::abs(bf.log_z));
    EXPECT_NEAR(best[b].score, bf.best.score, 1e-12 * std::abs(bf.best.score));
    EXPECT_NEAR(sc::path_score(m, x, b, best[b].segments), best[b].score, 1e-12 * std::abs(best[b].score));
    const std::size_t off = b == 0 ? 0 : 5;
    for (std::size_t i = 0; i < x.lengths[b] * C; ++i)
      EXPECT_NEAR(post.label_marginals[off * C + i], bf.label_marginals[i], 1e-12);
  }
  // and the enumeration sees the score: without it log Z differs
  sc::Batch plain = x;
  plain.segment_score = nullptr;
  EXPECT_GT(std::abs(sc::log_partition(m, plain)[0] - lz[0]), 1e-3);
}

TEST(SegmentModels, MapSegmentationOfAMeanAndVarianceChange) {
  // one label, self-transitions 0, a cost per segment: the Viterbi path of the Normal-Gamma
  // model cuts at the changes of mean (t = 60) and of variance (t = 130)
  std::mt19937_64 rng(3);
  std::normal_distribution<double> n(0.0, 1.0);
  std::vector<double> x;
  for (int t = 0; t < 200; ++t) x.push_back(t < 60 ? n(rng) : t < 130 ? 4 + n(rng) : 4 + 5 * n(rng));
  const sc::NormalGammaSegments g(x.data(), {x.size()}, 1, {{0.0, 0.01, 1.0, 1.0}});
  sc::Model m = sc::Model::zeros(1, x.size());
  for (auto& v : m.duration_bias) v = -3 * std::log(200.0);
  const std::vector<double> f(x.size(), 0.0);
  sc::Batch b;
  b.emissions = f.data();
  b.lengths = {x.size()};
  b.segment_score = &g;
  const auto p = sc::viterbi(m, b)[0];
  ASSERT_EQ(p.segments.size(), 3u);
  EXPECT_NEAR(double(p.segments[1].start), 60.0, 2.0);
  EXPECT_NEAR(double(p.segments[2].start), 130.0, 5.0);
}

TEST(SegmentModels, HampelMarksSpikesNotSteps) {
  // a step (level 0 → 10 at t = 30), two isolated spikes, a missing value kept missing
  std::vector<double> x;
  for (int t = 0; t < 60; ++t) x.push_back((t < 30 ? 0.0 : 10.0) + 0.3 * std::sin(t * 2.3));
  x[12] = 8.0;
  x[45] = -5.0;
  std::vector<std::uint8_t> valid(60, 1);
  valid[50] = 0;
  const auto v = sc::hampel_outliers(x.data(), 60, 1, 5, 5.0, valid.data());
  std::vector<std::size_t> flagged;
  for (std::size_t t = 0; t < 60; ++t)
    if (!v[t]) flagged.push_back(t);
  EXPECT_EQ(flagged, (std::vector<std::size_t>{12, 45, 50}));
  const std::vector<double> flat(20, 1.0);  // MAD 0: nothing is an outlier
  const auto w = sc::hampel_outliers(flat.data(), 20, 1, 3, 5.0);
  EXPECT_EQ(w, std::vector<std::uint8_t>(20, 1));
}

/// hampel_outliers by its definition: each window's median by sorting (the oracle of the
/// running median).
std::vector<std::uint8_t> hampel_by_sorting(const std::vector<double>& x, std::size_t T, std::size_t D, std::size_t w,
                                            double threshold, const std::vector<std::uint8_t>& valid) {
  const auto median = [](std::vector<double> v) {
    std::sort(v.begin(), v.end());
    const std::size_t n = v.size();
    return n % 2 ? v[n / 2] : v[n / 2 - 1] * 0.5 + v[n / 2] * 0.5;
  };
  std::vector<std::uint8_t> out(valid);
  for (std::size_t d = 0; d < D; ++d) {
    std::vector<double> r(T, 0.0), all;
    for (std::size_t t = 0; t < T; ++t) {
      if (!valid[t * D + d]) continue;
      std::vector<double> win;
      for (std::size_t u = t > w ? t - w : 0; u < std::min(T, t + w + 1); ++u)
        if (valid[u * D + d]) win.push_back(x[u * D + d]);
      r[t] = std::abs(x[t * D + d] - median(win));
      all.push_back(r[t]);
    }
    if (all.empty()) continue;
    const double scale = 1.4826 * median(all);
    if (!(scale > 0)) continue;
    for (std::size_t t = 0; t < T; ++t)
      if (valid[t * D + d] && r[t] > threshold * scale) out[t * D + d] = 0;
  }
  return out;
}

// Regression (a user's report): the running median copied and sorted every window, O(T·w), so a
// half window of 10⁵ (the parameter's maximum) on 2·10⁵ samples ran for about half an hour and
// could not be cancelled. It is a running median now, the same flags as the definition's on
// windows from 0 to beyond the signal, with ties (quantised values) and missing values.
TEST(SegmentModels, HampelRunningMedianMatchesTheDefinition) {
  std::mt19937 rng(11);
  std::uniform_real_distribution<double> u(-1, 1);
  const std::size_t T = 300, D = 2;
  std::vector<double> x(T * D);
  std::vector<std::uint8_t> valid(T * D, 1);
  for (std::size_t t = 0; t < T; ++t) {
    x[t * D] = (t / 70 % 2 ? 4.0 : 0.0) + u(rng) + (t % 37 == 0 ? 9.0 : 0.0);
    x[t * D + 1] = std::round(3 * u(rng));  // quantised: many equal values in every window
    if (t % 23 == 5) valid[t * D + (t % 2)] = 0;
  }
  for (std::size_t w : {0, 1, 2, 5, 50, 299, 300, 100000})
    for (double threshold : {1.0, 3.0}) {
      const auto want = hampel_by_sorting(x, T, D, w, threshold, valid);
      EXPECT_EQ(sc::hampel_outliers(x.data(), T, D, w, threshold, valid.data()), want) << "window " << w;
    }
  // the scale is the cost: 2·10⁵ samples with the largest window take a fraction of a second
  std::vector<double> big(200000);
  for (std::size_t t = 0; t < big.size(); ++t) big[t] = u(rng);
  std::size_t polls = 0;
  const auto flags = sc::hampel_outliers(big.data(), big.size(), 1, 100000, 5.0, nullptr, [&](double f) {
    EXPECT_GE(f, 0.0);
    EXPECT_LE(f, 1.0);
    ++polls;
  });
  EXPECT_EQ(flags.size(), big.size());
  EXPECT_GE(polls, 3u) << "polled every 65536 samples";
  // a poll that throws stops the call (the node's cancel)
  EXPECT_THROW((void)sc::hampel_outliers(big.data(), big.size(), 1, 1000, 5.0, nullptr,
                                         [](double) { throw std::runtime_error("cancelled"); }),
               std::runtime_error);
}

TEST(SegmentModels, StandardiseByMedianAndMad) {
  // channel 0: median 3, |x − 3| = {2, 1, 0, 1, 97} → MAD 1; channel 1 constant but one value:
  // MAD 0, so the noise standard deviation is the scale
  const std::vector<double> x = {1, 5, 2, 5, 3, 5, 4, 5, 100, 6};
  const auto z = sc::standardise(x.data(), 5, 2);
  EXPECT_NEAR(z[0], -2.0 / 1.4826, 1e-14);
  EXPECT_NEAR(z[8], 97.0 / 1.4826, 1e-12);
  const double sd = std::sqrt(sc::noise_variance(x.data(), 5, 2)[1]);
  EXPECT_NEAR(z[9], 1.0 / sd, 1e-12);
  EXPECT_EQ(z[1], 0.0);
}
