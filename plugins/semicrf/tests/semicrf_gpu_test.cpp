// The CUDA semi-CRF against the CPU fp64 reference (gemflow/semicrf/semicrf_cuda.hpp).
// Label gpu: every test skips with a message when no CUDA device is present.
// Tolerances: log Z relative 1e-5 (the bound for the fp32 exponentials; the potentials
// are fp64), marginals and gradients 1e-4 absolute (sums of fp64-exponentiated probabilities over
// fp32-summed normalisers), Viterbi scores 1e-9 relative (fp64 adds only).
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "gemflow/semicrf/emissions.hpp"
#include "gemflow/semicrf/semicrf.hpp"

#if GEMFLOW_SEMICRF_HAVE_CUDA
#include "gemflow/semicrf/semicrf_cuda.hpp"

namespace sc = gemflow::semicrf;

namespace {

constexpr double kNegInf = -std::numeric_limits<double>::infinity();

struct Case {
  sc::Model model;
  std::vector<double> f, ps, pe;
  sc::Batch batch;
};

Case random_case(std::vector<std::size_t> lengths, std::size_t C, std::size_t K, std::uint64_t seed, double scale = 1.0,
                 bool boundaries = false) {
  std::mt19937_64 g(seed);
  std::normal_distribution<double> n(0.0, 1.0);
  Case c;
  c.model = sc::Model::zeros(C, K);
  for (auto& v : c.model.transitions) v = n(g);
  for (auto& v : c.model.duration_bias) v = n(g) - 1.0;
  c.model.initial.resize(C);
  for (auto& v : c.model.initial) v = n(g);
  std::size_t total = 0;
  for (auto t : lengths) total += t;
  c.f.resize(total * C);
  for (auto& v : c.f) v = scale * n(g);
  c.batch.lengths = std::move(lengths);
  c.batch.emissions = c.f.data();
  if (boundaries) {
    c.ps.resize(total * C);
    c.pe.resize(total * C);
    for (auto& v : c.ps) v = 0.3 * n(g);
    for (auto& v : c.pe) v = 0.3 * n(g);
    c.batch.start_scores = c.ps.data();
    c.batch.end_scores = c.pe.data();
  }
  return c;
}

bool have_device() { return sc::cuda::device_count() > 0; }

void expect_posteriors_match(const Case& c, const sc::Options& o, double tol = 1e-4) {
  const auto cpu = sc::posteriors(c.model, c.batch, o);
  const auto gpu = sc::cuda::posteriors(c.model, c.batch, o, nullptr);
  ASSERT_EQ(gpu.log_z.size(), cpu.log_z.size());
  for (std::size_t b = 0; b < cpu.log_z.size(); ++b) {
    if (cpu.log_z[b] == kNegInf) {
      EXPECT_EQ(gpu.log_z[b], kNegInf) << "sequence " << b;
      continue;
    }
    EXPECT_NEAR(gpu.log_z[b], cpu.log_z[b], 1e-5 * std::max(1.0, std::abs(cpu.log_z[b]))) << "sequence " << b;
  }
  for (std::size_t i = 0; i < cpu.label_marginals.size(); ++i) {
    ASSERT_NEAR(gpu.label_marginals[i], cpu.label_marginals[i], tol) << "marginal " << i;
    ASSERT_NEAR(gpu.grad_emissions[i], cpu.grad_emissions[i], tol) << "emission gradient " << i;
  }
  for (std::size_t i = 0; i < cpu.boundaries.size(); ++i) ASSERT_NEAR(gpu.boundaries[i], cpu.boundaries[i], tol) << i;
  const double n = double(c.batch.total_length());
  for (std::size_t i = 0; i < cpu.grad_duration.size(); ++i)
    EXPECT_NEAR(gpu.grad_duration[i], cpu.grad_duration[i], tol * std::max(1.0, n / 100)) << "B " << i;
  for (std::size_t i = 0; i < cpu.grad_transitions.size(); ++i)
    EXPECT_NEAR(gpu.grad_transitions[i], cpu.grad_transitions[i], tol * std::max(1.0, n / 100)) << "Tr " << i;
  for (std::size_t i = 0; i < cpu.grad_initial.size(); ++i) EXPECT_NEAR(gpu.grad_initial[i], cpu.grad_initial[i], tol);
}

void expect_viterbi_matches(const Case& c, const sc::Options& o) {
  const auto cpu = sc::viterbi(c.model, c.batch, o);
  const auto gpu = sc::cuda::viterbi(c.model, c.batch, o, nullptr);
  ASSERT_EQ(gpu.size(), cpu.size());
  for (std::size_t b = 0; b < cpu.size(); ++b) {
    if (cpu[b].score == kNegInf) {
      EXPECT_EQ(gpu[b].score, kNegInf);
      EXPECT_TRUE(gpu[b].segments.empty());
      continue;
    }
    EXPECT_NEAR(gpu[b].score, cpu[b].score, 1e-9 * std::max(1.0, std::abs(cpu[b].score))) << "sequence " << b;
    // the GPU path is optimal under the reference's own scoring
    EXPECT_NEAR(sc::path_score(c.model, c.batch, b, gpu[b].segments, o), cpu[b].score,
                1e-9 * std::max(1.0, std::abs(cpu[b].score)));
    double sum = 0;
    for (const auto& s : gpu[b].segments) sum += s.score;
    EXPECT_NEAR(sum, gpu[b].score, 1e-8 * std::max(1.0, std::abs(cpu[b].score)));
  }
}

}  // namespace

TEST(GpuSemiCrf, SmallBatchesOfVariableLengthsMatchTheReference) {
  if (!have_device()) GTEST_SKIP() << "no CUDA device: GPU semi-CRF tests skipped";
  // K ≤ 8: a thread per label; K > 8: a warp per label with lanes over durations
  for (std::size_t K : {1, 3, 8, 9, 40}) {
    SCOPED_TRACE("K = " + std::to_string(K));
    auto c = random_case({37, 1, 120, 5, 64}, 5, K, 100 + K, 1.0, K == 9);
    sc::Options o;
    o.checkpoint_interval = K == 40 ? 7 : 0;
    expect_posteriors_match(c, o);
    expect_viterbi_matches(c, o);
  }
}

TEST(GpuSemiCrf, CentringModesAndImpossibleScores) {
  if (!have_device()) GTEST_SKIP() << "no CUDA device";
  for (auto mode : {sc::Centring::none, sc::Centring::mean, sc::Centring::reconstruct}) {
    auto c = random_case({80, 33}, 4, 12, 7, 3.0);
    for (std::size_t i = 5; i < c.f.size(); i += 17) c.f[i] = kNegInf;
    sc::Options o;
    o.centring = mode;
    expect_posteriors_match(c, o);
    expect_viterbi_matches(c, o);
  }
  auto d = random_case({20, 30}, 3, 5, 8);
  for (std::size_t i = 0; i < 20 * 3; ++i) d.f[i] = kNegInf;  // sequence 0: no segmentation allowed
  expect_posteriors_match(d, {});
  expect_viterbi_matches(d, {});
}

TEST(GpuSemiCrf, MaskedSamplesMatchTheReference) {
  if (!have_device()) GTEST_SKIP() << "no CUDA device";
  // Gaussian scores of a signal whose missing values (an all-masked prefix, scattered samples,
  // a masked run) score 0 under every label: the GPU must agree with the fp64 reference there
  const std::size_t T = 900, C = 4, K = 30;
  std::vector<double> x(T);
  std::vector<std::uint8_t> valid(T, 1);
  for (std::size_t t = 0; t < T; ++t) {
    x[t] = double((t / 150) % 4) + 0.2 * std::sin(double(t) * 1.3);
    if (t < 40 || t % 13 == 5 || (t >= 400 && t < 470)) valid[t] = 0, x[t] = 1e3;
  }
  const auto g =
      sc::estimate_gaussians(x.data(), T, 1, C, sc::LevelEstimate::kmeans, sc::VarianceEstimate::noise, valid.data());
  Case c = random_case({T}, C, K, 21);
  c.f = sc::gaussian_scores(x.data(), T, 1, g, valid.data());
  c.batch.emissions = c.f.data();
  for (auto& v : c.model.duration_bias) v = -8.0;
  for (auto mode : {sc::Centring::none, sc::Centring::reconstruct}) {
    sc::Options o;
    o.centring = mode;
    expect_posteriors_match(c, o);
    expect_viterbi_matches(c, o);
  }
}

TEST(GpuSemiCrf, LongSequenceRelativeErrorOfLogZ) {
  if (!have_device()) GTEST_SKIP() << "no CUDA device";
  // T = 10⁵: |log Z| ~ 10⁵; the bound is relative 1e-5
  auto c = random_case({100000}, 6, 30, 9, 2.0);
  const double cpu = sc::log_partition(c.model, c.batch)[0];
  const double gpu = sc::cuda::log_partition(c.model, c.batch, {}, nullptr)[0];
  EXPECT_NEAR(gpu, cpu, 1e-5 * std::abs(cpu));
  expect_viterbi_matches(c, {});
}

TEST(GpuSemiCrf, RingsInGlobalMemoryForLargeKC) {
  if (!have_device()) GTEST_SKIP() << "no CUDA device";
  auto c = random_case({700, 300}, 40, 600, 10);  // K·C·8 = 192 KB: rings in global memory
  expect_posteriors_match(c, {});
  expect_viterbi_matches(c, {});
}

TEST(GpuSemiCrf, ViterbiAtTheWarpKernelsLimits) {
  if (!have_device()) GTEST_SKIP() << "no CUDA device";
  // the warp-per-label Viterbi takes C ≤ 32 and K ≤ 256 in the lanes mode (K > 8 or C ≥ 16;
  // durations in registers); its edges and the first shapes past them (the general kernels), with
  // sequences shorter than K, of one sample, boundary scores and impossible samples
  for (auto [C, K] :
       {std::pair<std::size_t, std::size_t>{32, 256}, {1, 100}, {32, 257}, {33, 40}, {2, 9}, {24, 1}, {16, 4}}) {
    SCOPED_TRACE("C = " + std::to_string(C) + ", K = " + std::to_string(K));
    auto c = random_case({300, 1, 90, 600}, C, K, 40 + K + C, 1.0, true);
    for (std::size_t i = 11; i < c.f.size(); i += 97) c.f[i] = kNegInf;
    expect_viterbi_matches(c, {});
    // small K with many labels also runs the lanes mode in the forward and backward kernels
    if (K <= 8) expect_posteriors_match(c, {});
  }
}

TEST(GpuSemiCrf, ChunkedPassesForKOneMatchTheReference) {
  if (!have_device()) GTEST_SKIP() << "no CUDA device";
  // K = 1 with fewer sequences than SMs: log Z, marginals, gradients and Viterbi by chunk transfer
  // matrices (scan_plan.hpp); C = 33 runs the sequential kernels. Against the fp64 reference, with boundary
  // scores, impossible samples and transitions, every centring mode, sequences of 0, 1 and 2
  // samples, one of 3001 (several chunks) and one with no segmentation.
  for (std::size_t C : {1, 5, 24, 32, 33}) {
    for (auto mode : {sc::Centring::none, sc::Centring::mean, sc::Centring::reconstruct}) {
      SCOPED_TRACE("C = " + std::to_string(C) + ", centring " + std::to_string(int(mode)));
      auto c = random_case({0, 1, 2, 257, 3001, 40}, C, 1, 60 + C, 2.0, true);
      if (C > 1) {  // one impossible label at some samples (with C = 1 a whole sequence would be)
        for (std::size_t i = 13; i < c.f.size(); i += 29) c.f[i] = kNegInf;
        c.model.transitions[1] = kNegInf;
      }
      const std::size_t last = c.f.size() - 40 * C;  // the last sequence: every sample impossible
      for (std::size_t i = last; i < c.f.size(); ++i) c.f[i] = kNegInf;
      sc::Options o;
      o.centring = mode;
      const auto cpu = sc::log_partition(c.model, c.batch, o);
      const auto gpu = sc::cuda::log_partition(c.model, c.batch, o, nullptr);
      ASSERT_EQ(gpu.size(), cpu.size());
      EXPECT_EQ(gpu[0], 0.0);
      EXPECT_EQ(gpu[5], kNegInf);
      for (std::size_t b = 0; b + 1 < cpu.size(); ++b) {
        ASSERT_NE(cpu[b], kNegInf) << "sequence " << b;
        EXPECT_NEAR(gpu[b], cpu[b], 1e-5 * std::max(1.0, std::abs(cpu[b]))) << "sequence " << b;
      }
      expect_posteriors_match(c, o);
      expect_viterbi_matches(c, o);
    }
  }
}

TEST(GpuSemiCrf, ChunkedPassesOfOneLongSequence) {
  if (!have_device()) GTEST_SKIP() << "no CUDA device";
  // the goal's shape, B = 1, T = 10⁵, K = 1, C = 24: |log Z| ~ 10⁵, relative bound 1e-5; two runs
  // bit-identical (fixed chunks, fixed order of every sum); marginals and gradients
  auto c = random_case({100000}, 24, 1, 61, 2.0);
  const double cpu = sc::log_partition(c.model, c.batch)[0];
  const double gpu = sc::cuda::log_partition(c.model, c.batch, {}, nullptr)[0];
  EXPECT_NEAR(gpu, cpu, 1e-5 * std::abs(cpu));
  EXPECT_EQ(sc::cuda::log_partition(c.model, c.batch, {}, nullptr)[0], gpu);
  expect_posteriors_match(c, {});
  // Viterbi of the same sequence: 10⁵ one-sample segments, traced per chunk
  expect_viterbi_matches(c, {});
}

TEST(GpuSemiCrf, WarpForwardAgreesWithTheCheckpointedForward) {
  if (!have_device()) GTEST_SKIP() << "no CUDA device";
  // log_partition runs the warp-per-label forward for C ≤ 32, K ≤ 256 in the lanes mode; the
  // forward-backward pass runs forward_kernel with checkpoints. Same terms in the same order: equal
  // to rounding (1e-12 relative), and both within 1e-5 of the fp64 reference. Edges of the warp
  // kernel and the first shapes past them, with boundary scores, impossible samples, reconstruct.
  for (auto [C, K] : {std::pair<std::size_t, std::size_t>{24, 100}, {32, 256}, {32, 257}, {33, 40}, {5, 9}, {16, 2}}) {
    SCOPED_TRACE("C = " + std::to_string(C) + ", K = " + std::to_string(K));
    auto c = random_case({400, 1, 0, 77, 1200}, C, K, 70 + K + C, 1.5, true);
    for (std::size_t i = 11; i < c.f.size(); i += 97) c.f[i] = kNegInf;
    sc::Options o;
    o.centring = sc::Centring::reconstruct;
    const auto cpu = sc::log_partition(c.model, c.batch, o);
    const auto fwd = sc::cuda::log_partition(c.model, c.batch, o, nullptr);
    const auto fb = sc::cuda::posteriors(c.model, c.batch, o, nullptr).log_z;
    for (std::size_t b = 0; b < cpu.size(); ++b) {
      const double tol = std::max(1.0, std::abs(cpu[b]));
      EXPECT_NEAR(fwd[b], fb[b], 1e-12 * tol) << "sequence " << b;
      EXPECT_NEAR(fwd[b], cpu[b], 1e-5 * tol) << "sequence " << b;
    }
  }
}

TEST(GpuSemiCrf, RefusesDurationsBeyondThePackedBackpointer) {
  // a backpointer packs k < 2²¹ with the previous label: K = 2²¹ is refused before any device work
  auto c = random_case({10}, 1, 1, 62);
  c.model = sc::Model::zeros(1, std::size_t(1) << 21);
  try {
    (void)sc::cuda::viterbi(c.model, c.batch, {}, nullptr);
    FAIL() << "K = 2²¹ accepted";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("K < 2²¹"), std::string::npos) << e.what();
  }
}

TEST(GpuSemiCrf, RefusesSegmentScores) {
  // segment-level scores are CPU only: refused before anything touches the device
  struct Zero final : sc::SegmentScore {
    double score(std::size_t, std::size_t, std::size_t, std::size_t) const override { return 0.0; }
  } zero;
  auto c = random_case({10}, 2, 3, 1);
  c.batch.segment_score = &zero;
  EXPECT_THROW((void)sc::cuda::viterbi(c.model, c.batch, {}, nullptr), std::invalid_argument);
}

TEST(GpuSemiCrf, RerunsAreBitIdentical) {
  if (!have_device()) GTEST_SKIP() << "no CUDA device";
  auto c = random_case({500, 250, 1000}, 8, 50, 11);
  const auto a = sc::cuda::posteriors(c.model, c.batch, {}, nullptr);
  const auto b = sc::cuda::posteriors(c.model, c.batch, {}, nullptr);
  EXPECT_EQ(a.log_z, b.log_z);
  EXPECT_EQ(a.label_marginals, b.label_marginals);
  EXPECT_EQ(a.grad_duration, b.grad_duration);
  EXPECT_EQ(a.grad_transitions, b.grad_transitions);
}

TEST(GpuSemiCrf, RefusesDurationDependentTransitions) {
  if (!have_device()) GTEST_SKIP() << "no CUDA device";
  auto c = random_case({10}, 2, 3, 12);
  c.model.transitions.assign(3 * 2 * 2, 0.0);
  EXPECT_THROW((void)sc::cuda::log_partition(c.model, c.batch, {}, nullptr), std::invalid_argument);
}

#else
TEST(GpuSemiCrf, NotBuilt) { GTEST_SKIP() << "Gemflow was built without CUDA"; }
#endif
