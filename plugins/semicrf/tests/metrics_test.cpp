// TCPDBench F1 / covering and TSSB covering (gemflow/semicrf/metrics.hpp), Gaussian emissions and plots.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <numbers>
#include <stdexcept>
#include <vector>

#include "gemflow/semicrf/emissions.hpp"
#include "gemflow/semicrf/metrics.hpp"
#include "gemflow/semicrf/plot.hpp"

namespace sc = gemflow::semicrf;
using CP = sc::ChangePoints;

// The examples of TCPDBench's metrics.py docstrings (values computed by its authors).
TEST(Metrics, TruePositivesAsMetricsPy) {
  EXPECT_EQ(sc::true_positives({1, 10, 20, 23}, {3, 8, 20}, 5), (CP{1, 10, 20}));
  EXPECT_EQ(sc::true_positives({1, 10, 20, 23}, {1, 3, 8, 20}, 5), (CP{1, 10, 20}));
  EXPECT_EQ(sc::true_positives({1, 10, 20, 23}, {1, 3, 5, 8, 20}, 5), (CP{1, 10, 20}));
  EXPECT_TRUE(sc::true_positives({}, {1, 2, 3}, 5).empty());
  EXPECT_TRUE(sc::true_positives({1, 2, 3}, {}, 5).empty());
}

TEST(Metrics, FMeasureAsMetricsPy) {
  EXPECT_DOUBLE_EQ(sc::f_measure({{10, 20}, {11, 20}, {10}, {0, 5}}, {10, 20}).f1, 1.0);
  EXPECT_DOUBLE_EQ(sc::f_measure({{}, {10}, {50}}, {10}).f1, 0.9090909090909091);
  EXPECT_DOUBLE_EQ(sc::f_measure({{}, {10}, {50}}, {}).f1, 0.8);
}

TEST(Metrics, CoveringAsMetricsPy) {
  EXPECT_DOUBLE_EQ(sc::covering({{10, 20}, {10}, {0, 5}}, {10, 20}, 45), 0.7962962962962963);
  EXPECT_DOUBLE_EQ(sc::covering({{}, {10}, {40}}, {10}, 45), 0.7954144620811286);
  EXPECT_DOUBLE_EQ(sc::covering({{}, {10}, {40}}, {}, 45), 0.8189300411522634);
}

// run_log (sample_data/sequences/tcpd, 376 samples), its five annotators from annotations.json,
// predictions {60, 100, 200}. Worked by hand: X = {0, 60, 100, 200}; against the union every
// prediction matches (0, 60, 96 ↔ 100, 204 ↔ 200): P = 1. Recall: annotators 6, 7, 8 match
// 4 of their 9 points, annotator 10 4 of 10 (its 2 finds 0 already used), annotator 12 (no
// change point) 1 of 1: R = (3·4/9 + 4/10 + 1)/5 = 41/75; F1 = 2PR/(P + R) = 41/58.
// Covering by annotator 12 alone: its one segment [0, 376) best overlaps [200, 376): 176/376.
TEST(Metrics, RunLogByHand) {
  const std::vector<CP> ann = {{60, 96, 114, 174, 204, 240, 258, 317},
                               {60, 96, 114, 177, 204, 240, 258, 317},
                               {60, 96, 114, 174, 204, 240, 258, 317},
                               {2, 60, 96, 114, 174, 204, 240, 258, 317},
                               {}};
  const auto f = sc::f_measure(ann, {60, 100, 200});
  EXPECT_DOUBLE_EQ(f.precision, 1.0);
  EXPECT_NEAR(f.recall, 41.0 / 75.0, 1e-15);
  EXPECT_NEAR(f.f1, 41.0 / 58.0, 1e-15);
  EXPECT_NEAR(sc::covering({{}}, {60, 100, 200}, 376), 176.0 / 376.0, 1e-15);
  // bank: no annotator marked a change, so "no change point" is perfect and one is not
  const std::vector<CP> bank(5);
  EXPECT_DOUBLE_EQ(sc::f_measure(bank, {}).f1, 1.0);
  EXPECT_DOUBLE_EQ(sc::covering(bank, {}, 581), 1.0);
  EXPECT_NEAR(sc::f_measure(bank, {300}).f1, 2.0 / 3.0, 1e-15);  // P = 1/2, R = 1
}

TEST(Emissions, GaussianScoresAreLogDensities) {
  const double x[] = {0.0, 1.0, 2.0, -1.0};  // T = 2, D = 2
  sc::GaussianLabels g{2, 2, {0.0, 1.0, 2.0, -1.0}, {1.0, 4.0, 0.25, 1.0}};
  const auto f = sc::gaussian_scores(x, 2, 2, g);
  const double l2pi = std::log(2 * std::numbers::pi);
  EXPECT_NEAR(f[0], -0.5 * l2pi - 0.5 * (l2pi + std::log(4.0)), 1e-15);  // t 0, label 0: at the means
  EXPECT_NEAR(f[1], -0.5 * (l2pi + std::log(0.25)) - 4.0 / 0.5 - 0.5 * l2pi - 2.0, 1e-14);  // t 0, label 1
  EXPECT_THROW((void)sc::gaussian_scores(x, 2, 1, g), std::invalid_argument);
}

TEST(Emissions, OutlierMixtureBoundsTheCostOfASpike) {
  const double x[] = {0.0, 0.1, 100.0, -0.1};  // T = 4, D = 1, range R = 100.1
  sc::GaussianLabels g{1, 1, {0.0}, {0.01}};
  const auto plain = sc::gaussian_scores(x, 4, 1, g);
  g.outlier = 0.01;
  const auto robust = sc::gaussian_scores(x, 4, 1, g);
  const double n2 = -0.5 * std::log(2 * std::numbers::pi * 0.01) - 100.0 * 100.0 / 0.02;
  EXPECT_NEAR(plain[2], n2, 1e-9);
  // log(0.99·N + 0.01/R): the spike costs about log(0.01/100.1) instead of −5·10⁵
  EXPECT_NEAR(robust[2], std::log(0.99 * std::exp(n2) + 0.01 / 100.1), 1e-12);
  EXPECT_NEAR(robust[0], std::log(0.99 * std::exp(plain[0]) + 0.01 / 100.1), 1e-12);
  g.outlier = 1.0;
  EXPECT_THROW((void)sc::gaussian_scores(x, 4, 1, g), std::invalid_argument);
}

TEST(Emissions, EstimatesLevelsOfAStepSignal) {
  std::vector<double> x;
  for (int t = 0; t < 100; ++t) x.push_back((t < 50 ? 1.0 : 5.0) + 0.1 * std::sin(t * 1.3));
  const auto g = sc::estimate_gaussians(x.data(), 100, 1, 2, sc::LevelEstimate::kmeans, sc::VarianceEstimate::noise);
  EXPECT_NEAR(g.mean[0], 1.0, 0.02);
  EXPECT_NEAR(g.mean[1], 5.0, 0.02);
  // the noise level from first differences ignores the one jump: about 0.1²·(variance of the sine's steps)
  EXPECT_LT(g.variance[0], 0.05);
  EXPECT_GT(g.variance[0], 1e-4);
  EXPECT_THROW(
      (void)sc::estimate_gaussians(x.data(), 100, 1, 101, sc::LevelEstimate::kmeans, sc::VarianceEstimate::noise),
      std::invalid_argument);
}

// Regression (a user's report): the levels' estimate sorted the channel once per label and scanned
// every label for every sample, so 4096 labels on 10⁶ samples ran for minutes and ignored
// cancel. One channel now finds the nearest level by bisection. Oracle: the scan over all labels,
// which a second channel of zeros selects without changing any distance (its noise floor divides
// 0); the same levels and variances bit for bit, with ties between equal levels (quantised values,
// more labels than distinct values) and missing samples.
TEST(Emissions, OneChannelBisectionMatchesTheScanOverAllLabels) {
  const std::size_t T = 2000;
  std::vector<double> x(T), x2(2 * T);
  std::vector<std::uint8_t> valid(T, 1), valid2(2 * T, 1);
  for (std::size_t t = 0; t < T; ++t) {
    x[t] = std::round(4 * std::sin(double(t) * 0.01) + 1.5 * std::sin(double(t) * 1.7));  // 12 distinct values
    x2[2 * t] = x[t];
    if (t % 97 == 3) valid[t] = 0, valid2[2 * t] = 0;
  }
  for (auto levels : {sc::LevelEstimate::quantiles, sc::LevelEstimate::kmeans})
    for (auto variance : {sc::VarianceEstimate::noise, sc::VarianceEstimate::cluster})
      for (std::size_t C : {1, 2, 5, 12, 40}) {
        const auto a = sc::estimate_gaussians(x.data(), T, 1, C, levels, variance, valid.data());
        const auto b = sc::estimate_gaussians(x2.data(), T, 2, C, levels, variance, valid2.data());
        for (std::size_t c = 0; c < C; ++c) {
          EXPECT_EQ(a.mean[c], b.mean[c * 2]) << C << " labels, label " << c;
          EXPECT_EQ(a.variance[c], b.variance[c * 2]) << C << " labels, label " << c;
        }
      }
  // 4096 labels on 2·10⁵ samples, polled, and a poll that throws stops it (cancel)
  std::vector<double> big(200000);
  for (std::size_t t = 0; t < big.size(); ++t) big[t] = std::sin(double(t) * 1e-3) + 0.1 * std::sin(double(t) * 2.9);
  std::size_t polls = 0;
  const auto g = sc::estimate_gaussians(big.data(), big.size(), 1, 4096, sc::LevelEstimate::kmeans,
                                        sc::VarianceEstimate::noise, nullptr, [&](double f) {
                                          EXPECT_GE(f, 0.0);
                                          EXPECT_LE(f, 1.0);
                                          ++polls;
                                        });
  EXPECT_TRUE(std::is_sorted(g.mean.begin(), g.mean.end()));
  EXPECT_GE(polls, 4u);
  EXPECT_THROW((void)sc::estimate_gaussians(big.data(), big.size(), 1, 4096, sc::LevelEstimate::kmeans,
                                            sc::VarianceEstimate::noise, nullptr,
                                            [](double) { throw std::runtime_error("cancelled"); }),
               std::runtime_error);
}

TEST(Plot, DrawsSegmentsSignalAndPosterior) {
  std::vector<double> x(200), b(200, 0.0);
  for (int t = 0; t < 200; ++t) x[t] = t < 100 ? 0.0 : 1.0;
  b[100] = 1.0;
  sc::PlotInput in;
  in.signal = x.data();
  in.length = 200;
  in.dims = 1;
  in.segments = {{0, 100, 0, 0}, {100, 200, 1, 0}};
  in.boundaries = b.data();
  in.width = 216;  // 200 columns inside the 8-pixel margins: one sample per column
  in.height = 120;
  const auto r = sc::plot_segmentation(in);
  ASSERT_EQ(r.rgba.size(), 216u * 120u * 4u);
  auto px = [&](std::size_t col, std::size_t row) { return &r.rgba[(row * 216 + col) * 4]; };
  // segment tints: label 0 blue-ish (Tableau blue at 30 % over white), label 1 orange-ish
  EXPECT_EQ(px(20, 20)[0], 188);  // 255·0.7 + 31·0.3 = 187.8
  EXPECT_EQ(px(180, 20)[0], 255);
  EXPECT_EQ(px(180, 20)[2], 183);                                     // 255·0.7 + 14·0.3
  for (std::size_t y = 0; y < 120; ++y) EXPECT_EQ(px(0, y)[3], 255);  // opaque everywhere
  // the posterior bar at the boundary column reaches the panel's top; its neighbours are empty
  bool bar = false;
  for (std::size_t y = 90; y < 110; ++y) bar |= px(108, y)[0] == 31 && px(108, y)[2] == 180;
  EXPECT_TRUE(bar);
  EXPECT_EQ(px(60, 105)[0], 255);
  in.width = 8;
  EXPECT_THROW((void)sc::plot_segmentation(in), std::invalid_argument);
}
