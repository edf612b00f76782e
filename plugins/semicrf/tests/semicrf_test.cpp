// The CPU fp64 reference against enumeration, finite differences and itself (gemflow/semicrf/semicrf.hpp).
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <random>
#include <vector>

#include "gemflow/semicrf/semicrf.hpp"

namespace sc = gemflow::semicrf;

namespace {

constexpr double kNegInf = -std::numeric_limits<double>::infinity();

struct Case {
  sc::Model model;
  std::vector<double> f, ps, pe;
  sc::Batch batch;
};

/// Random scores of B sequences (lengths given), C labels, K durations; duration-dependent
/// transitions when `dd`.
Case random_case(std::vector<std::size_t> lengths, std::size_t C, std::size_t K, bool dd, std::uint64_t seed,
                 bool boundaries = false) {
  std::mt19937_64 g(seed);
  std::normal_distribution<double> n(0.0, 1.0);
  Case c;
  c.model = sc::Model::zeros(C, K);
  c.model.transitions.resize(dd ? K * C * C : C * C);
  for (auto& v : c.model.transitions) v = n(g);
  for (auto& v : c.model.duration_bias) v = n(g);
  c.model.initial.resize(C);
  for (auto& v : c.model.initial) v = n(g);
  std::size_t total = 0;
  for (auto t : lengths) total += t;
  c.f.resize(total * C);
  for (auto& v : c.f) v = 2.0 * n(g) + 1.5;
  c.batch.lengths = std::move(lengths);
  if (boundaries) {
    c.ps.resize(total * C);
    c.pe.resize(total * C);
    for (auto& v : c.ps) v = 0.5 * n(g);
    for (auto& v : c.pe) v = 0.5 * n(g);
    c.batch.start_scores = c.ps.data();
    c.batch.end_scores = c.pe.data();
  }
  c.batch.emissions = c.f.data();
  return c;
}

/// `segments`: compare the best segmentation too (not where models tie by symmetry).
void expect_matches_brute_force(Case& c, const sc::Options& o, bool segments = true) {
  const auto post = sc::posteriors(c.model, c.batch, o);
  const auto paths = sc::viterbi(c.model, c.batch, o);
  const auto off = c.batch.offsets();
  const std::size_t C = c.model.labels;
  std::vector<double> gd(c.model.duration_bias.size(), 0.0), gt(c.model.transitions.size(), 0.0);
  for (std::size_t b = 0; b < c.batch.lengths.size(); ++b) {
    const auto bf = sc::brute_force(c.model, c.batch, b, o);
    EXPECT_NEAR(post.log_z[b], bf.log_z, 1e-10 * std::max(1.0, std::abs(bf.log_z))) << "sequence " << b;
    for (std::size_t u = 0; u < c.batch.lengths[b]; ++u) {
      EXPECT_NEAR(post.boundaries[off[b] + u], bf.boundaries[u], 1e-10) << "b " << b << " u " << u;
      for (std::size_t l = 0; l < C; ++l)
        EXPECT_NEAR(post.label_marginals[(off[b] + u) * C + l], bf.label_marginals[u * C + l], 1e-10);
    }
    for (std::size_t i = 0; i < gd.size(); ++i) gd[i] += bf.grad_duration[i];
    for (std::size_t i = 0; i < gt.size(); ++i) gt[i] += bf.grad_transitions[i];
    EXPECT_NEAR(paths[b].score, bf.best.score, 1e-10);
    EXPECT_NEAR(sc::path_score(c.model, c.batch, b, paths[b].segments, o), paths[b].score, 1e-10);
    // the path's own score proves it optimal; the segments themselves are compared where no
    // tie is structural (two adjacent segments of one label can swap durations at equal score)
    bool adjacent_same = false;
    for (std::size_t i = 1; i < bf.best.segments.size(); ++i)
      adjacent_same |= bf.best.segments[i].label == bf.best.segments[i - 1].label;
    if (!segments || adjacent_same) continue;
    ASSERT_EQ(paths[b].segments.size(), bf.best.segments.size()) << "sequence " << b;
    for (std::size_t i = 0; i < paths[b].segments.size(); ++i) {
      EXPECT_EQ(paths[b].segments[i].start, bf.best.segments[i].start);
      EXPECT_EQ(paths[b].segments[i].end, bf.best.segments[i].end);
      EXPECT_EQ(paths[b].segments[i].label, bf.best.segments[i].label);
      EXPECT_NEAR(paths[b].segments[i].score, bf.best.segments[i].score, 1e-10);
    }
  }
  for (std::size_t i = 0; i < gd.size(); ++i) EXPECT_NEAR(post.grad_duration[i], gd[i], 1e-10) << "B " << i;
  for (std::size_t i = 0; i < gt.size(); ++i) EXPECT_NEAR(post.grad_transitions[i], gt[i], 1e-10) << "Tr " << i;
}

}  // namespace

TEST(SemiCrf, FactoredMatchesBruteForce) {
  for (std::uint64_t seed = 1; seed <= 4; ++seed) {
    auto c = random_case({6, 1, 7, 4}, 3, 3, false, seed);
    sc::Options o;
    o.checkpoint_interval = seed;  // 1..4: blocks of every size, checkpoints inside and at K
    expect_matches_brute_force(c, o);
  }
}

TEST(SemiCrf, GeneralMatchesBruteForce) {
  for (std::uint64_t seed = 1; seed <= 3; ++seed) {
    auto c = random_case({7, 5}, 2, 4, true, seed + 10, true);
    sc::Options o;
    o.checkpoint_interval = seed + 1;
    expect_matches_brute_force(c, o);
  }
}

TEST(SemiCrf, KLargerThanTAndOneLabel) {
  auto c = random_case({3, 2}, 1, 9, false, 5);
  expect_matches_brute_force(c, {}, false);   // one label: [0,1)[1,3) and [0,2)[2,3) tie
  auto d = random_case({1}, 3, 1, false, 6);  // T = 1, K = 1
  expect_matches_brute_force(d, {});
}

TEST(SemiCrf, FactoredEqualsGeneral) {
  auto c = random_case({40, 33}, 4, 6, false, 7, true);
  sc::Options f, g;
  f.recurrence = sc::Recurrence::factored;
  g.recurrence = sc::Recurrence::general;
  const auto pf = sc::posteriors(c.model, c.batch, f), pg = sc::posteriors(c.model, c.batch, g);
  for (std::size_t b = 0; b < 2; ++b) EXPECT_NEAR(pf.log_z[b], pg.log_z[b], 1e-11 * std::abs(pf.log_z[b]));
  for (std::size_t i = 0; i < pf.label_marginals.size(); ++i)
    EXPECT_NEAR(pf.label_marginals[i], pg.label_marginals[i], 1e-11);
  for (std::size_t i = 0; i < pf.grad_transitions.size(); ++i)
    EXPECT_NEAR(pf.grad_transitions[i], pg.grad_transitions[i], 1e-10);
  const auto vf = sc::viterbi(c.model, c.batch, f), vg = sc::viterbi(c.model, c.batch, g);
  for (std::size_t b = 0; b < 2; ++b) EXPECT_NEAR(vf[b].score, vg[b].score, 1e-10);
}

TEST(SemiCrf, MarginalsSumToOne) {
  auto c = random_case({200, 57}, 5, 12, false, 8);
  const auto p = sc::posteriors(c.model, c.batch);
  for (std::size_t u = 0; u < 257; ++u) {
    double s = 0;
    for (std::size_t l = 0; l < 5; ++l) s += p.label_marginals[u * 5 + l];
    EXPECT_NEAR(s, 1.0, 1e-12) << "position " << u;
  }
  EXPECT_NEAR(p.boundaries[0], 1.0, 1e-11);
  EXPECT_NEAR(p.boundaries[200], 1.0, 1e-11);
  double segs = 0;  // expected number of segments = Σ of duration-bias gradients = Σ boundaries
  for (double v : p.grad_duration) segs += v;
  double bsum = 0;
  for (double v : p.boundaries) bsum += v;
  EXPECT_NEAR(segs, bsum, 1e-9);
}

TEST(SemiCrf, GradientsMatchFiniteDifferences) {
  for (auto mode : {sc::Centring::none, sc::Centring::mean, sc::Centring::reconstruct}) {
    auto c = random_case({9, 6}, 3, 4, false, 9);
    sc::Options o;
    o.centring = mode;
    const auto p = sc::posteriors(c.model, c.batch, o);
    auto total = [&] {
      double s = 0;
      for (double z : sc::log_partition(c.model, c.batch, o)) s += z;
      return s;
    };
    const double h = 1e-6;
    auto check = [&](double& v, double analytic, const char* what, std::size_t i) {
      const double keep = v;
      v = keep + h;
      const double up = total();
      v = keep - h;
      const double down = total();
      v = keep;
      EXPECT_NEAR((up - down) / (2 * h), analytic, 1e-6) << what << " " << i << " centring " << int(mode);
    };
    for (std::size_t i = 0; i < c.f.size(); ++i) check(c.f[i], p.grad_emissions[i], "f", i);
    for (std::size_t i = 0; i < c.model.transitions.size(); ++i)
      check(c.model.transitions[i], p.grad_transitions[i], "Tr", i);
    for (std::size_t i = 0; i < c.model.duration_bias.size(); ++i)
      check(c.model.duration_bias[i], p.grad_duration[i], "B", i);
    for (std::size_t i = 0; i < c.model.initial.size(); ++i) check(c.model.initial[i], p.grad_initial[i], "I", i);
  }
}

TEST(SemiCrf, CentringModes) {
  auto c = random_case({30}, 3, 5, false, 11);
  for (auto& v : c.f) v += 1000.0;  // large offsets: centring keeps the prefix sums small
  sc::Options none, mean, rec;
  mean.centring = sc::Centring::mean;
  rec.centring = sc::Centring::reconstruct;
  const double zn = sc::log_partition(c.model, c.batch, none)[0];
  const double zr = sc::log_partition(c.model, c.batch, rec)[0];
  const double zm = sc::log_partition(c.model, c.batch, mean)[0];
  EXPECT_NEAR(zr, zn, 1e-12 * std::abs(zn));  // reconstruct: the same distribution
  // mean: every segmentation loses Σ_u ν_{label(u)}, so log Z drops by about T·1000
  EXPECT_LT(zm, zn - 29 * 1000.0);
  const auto pn = sc::posteriors(c.model, c.batch, none), pr = sc::posteriors(c.model, c.batch, rec);
  for (std::size_t i = 0; i < pn.label_marginals.size(); ++i)
    EXPECT_NEAR(pn.label_marginals[i], pr.label_marginals[i], 1e-9);
  // mean with equal label means is the same model shifted by a constant: same posteriors
  auto d = random_case({25}, 2, 4, false, 12);
  double m0 = 0, m1 = 0;
  for (std::size_t u = 0; u < 25; ++u) m0 += d.f[u * 2], m1 += d.f[u * 2 + 1];
  for (std::size_t u = 0; u < 25; ++u) d.f[u * 2 + 1] += (m0 - m1) / 25;
  const auto qn = sc::posteriors(d.model, d.batch, none), qm = sc::posteriors(d.model, d.batch, mean);
  for (std::size_t i = 0; i < qn.label_marginals.size(); ++i)
    EXPECT_NEAR(qn.label_marginals[i], qm.label_marginals[i], 1e-9);
}

TEST(SemiCrf, ImpossibleScoresGiveMinusInfinity) {
  auto c = random_case({5}, 2, 3, false, 13);
  for (auto& v : c.f) v = kNegInf;
  EXPECT_EQ(sc::log_partition(c.model, c.batch)[0], kNegInf);
  const auto p = sc::posteriors(c.model, c.batch);
  EXPECT_EQ(p.log_z[0], kNegInf);
  for (double v : p.label_marginals) EXPECT_EQ(v, 0.0);  // not NaN
  EXPECT_EQ(sc::viterbi(c.model, c.batch)[0].score, kNegInf);
  EXPECT_TRUE(sc::viterbi(c.model, c.batch)[0].segments.empty());
  EXPECT_NE(sc::no_segmentation_message(0, 5).find("no segmentation is allowed"), std::string::npos);
  // an impossible transition pattern: label 0 only at the start, label 1 only at the end, 0 → 1 forbidden, K = 2 < T
  auto d = random_case({6}, 2, 2, false, 14);
  for (std::size_t u = 0; u < 6; ++u) d.f[u * 2 + (u < 3 ? 1 : 0)] = kNegInf;
  d.model.transitions = {0.0, kNegInf, 0.0, 0.0};
  EXPECT_EQ(sc::log_partition(d.model, d.batch)[0], kNegInf);
  EXPECT_EQ(sc::brute_force(d.model, d.batch, 0).log_z, kNegInf);
  // one impossible sample among possible ones: no NaN, the brute force agrees
  auto e = random_case({6}, 2, 3, false, 15);
  e.f[2 * 2 + 0] = kNegInf;
  expect_matches_brute_force(e, {});
}

TEST(SemiCrf, BatchSequencesDoNotLeak) {
  auto c = random_case({17, 3, 29}, 3, 5, false, 16);
  const auto all = sc::posteriors(c.model, c.batch);
  const auto off = c.batch.offsets();
  for (std::size_t b = 0; b < 3; ++b) {
    sc::Batch one;
    one.emissions = c.f.data() + off[b] * 3;
    one.lengths = {c.batch.lengths[b]};
    const auto p = sc::posteriors(c.model, one);
    EXPECT_EQ(p.log_z[0], all.log_z[b]);
    for (std::size_t i = 0; i < p.label_marginals.size(); ++i)
      EXPECT_EQ(p.label_marginals[i], all.label_marginals[off[b] * 3 + i]);
  }
}

TEST(SemiCrf, RerunsAreBitIdentical) {
  auto c = random_case({300, 100}, 4, 20, false, 17);
  const auto a = sc::posteriors(c.model, c.batch), b = sc::posteriors(c.model, c.batch);
  EXPECT_EQ(a.log_z, b.log_z);
  EXPECT_EQ(a.label_marginals, b.label_marginals);
  EXPECT_EQ(a.grad_transitions, b.grad_transitions);
  EXPECT_EQ(a.grad_duration, b.grad_duration);
  // the checkpoint interval changes only the work, not the numbers
  sc::Options o;
  o.checkpoint_interval = 7;
  const auto d = sc::posteriors(c.model, c.batch, o);
  EXPECT_EQ(a.log_z, d.log_z);
  EXPECT_EQ(a.label_marginals, d.label_marginals);
}

TEST(SemiCrf, BadInputs) {
  auto c = random_case({4}, 2, 2, false, 18);
  c.f[3] = std::nan("");
  EXPECT_THROW((void)sc::log_partition(c.model, c.batch), std::invalid_argument);
  try {
    (void)sc::log_partition(c.model, c.batch);
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("sample 1, label 1 is NaN"), std::string::npos) << e.what();
  }
  c.f[3] = 0;
  auto m = c.model;
  m.max_duration = 0;
  EXPECT_THROW((void)sc::log_partition(m, c.batch), std::invalid_argument);
  m = c.model;
  m.duration_bias.pop_back();
  EXPECT_THROW((void)sc::log_partition(m, c.batch), std::invalid_argument);
  m = c.model;
  m.transitions[0] = std::numeric_limits<double>::infinity();
  EXPECT_THROW((void)sc::log_partition(m, c.batch), std::invalid_argument);
  // T = 0: the empty segmentation
  sc::Batch empty;
  empty.lengths = {0};
  EXPECT_EQ(sc::log_partition(c.model, empty)[0], 0.0);
  // memory checked before allocating, naming the size
  sc::Options o;
  o.memory_limit = 1000;
  auto big = random_case({100}, 4, 50, false, 19);
  try {
    (void)sc::posteriors(big.model, big.batch, o);
    FAIL() << "no MemoryError";
  } catch (const sc::MemoryError& e) {
    EXPECT_NE(std::string(e.what()).find("K = 50"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("1000 available"), std::string::npos) << e.what();
  }
}
