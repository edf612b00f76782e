// The host plan of the GPU's chunked K = 1 forward pass (algo/cuda/scan_plan.hpp), and its algebra
// checked on the CPU: log Z from chunk transfer matrices applied in order equals the fp64
// reference's log Z for K = 1 (boundary scores, impossible samples, sequences of 0..2 samples).
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <random>
#include <vector>

#include "../algo/cuda/scan_plan.hpp"
#include "gemflow/semicrf/semicrf.hpp"

namespace sc = gemflow::semicrf;
namespace plan = gemflow::semicrf::cuda::detail;

namespace {

constexpr double kNegInf = -std::numeric_limits<double>::infinity();

double lse(const std::vector<double>& v) {
  double m = kNegInf;
  for (double x : v) m = std::max(m, x);
  if (m == kNegInf) return kNegInf;
  double s = 0;
  for (double x : v) s += std::exp(x - m);
  return m + std::log(s);
}

/// log Z of sequence b (K = 1, no centring) the way the GPU's chunk kernels compute it, in fp64:
/// α(1, ·), then for each chunk of the plan its transfer matrix (the log-semiring product of
/// M_t[c', c] = Tr[c', c] + e(t, c)), applied to α in chunk order.
double chunked_log_z(const sc::Model& m, const sc::Batch& x, std::size_t b, std::size_t offset,
                     const std::vector<plan::ScanChunk>& chunks, const std::vector<long long>& first) {
  const std::size_t C = m.labels, T = x.lengths[b];
  if (T == 0) return 0.0;
  auto e = [&](std::size_t t, std::size_t c) {  // segment [t − 1, t) of label c, no transition
    const std::size_t r = (offset + t - 1) * C + c;
    const double f = x.emissions[r];
    if (f == kNegInf) return kNegInf;
    return f + m.duration_bias[c] + (x.start_scores ? x.start_scores[r] : 0.0) + (x.end_scores ? x.end_scores[r] : 0.0);
  };
  std::vector<double> a(C);
  for (std::size_t c = 0; c < C; ++c) a[c] = (m.initial.empty() ? 0.0 : m.initial[c]) + e(1, c);
  for (long long j = first[b]; j < first[b + 1]; ++j) {
    const auto& ch = chunks[j];
    std::vector<double> P(C * C);
    for (std::size_t i = 0; i < C; ++i) {
      std::vector<double> v(C);
      for (std::size_t c = 0; c < C; ++c) v[c] = m.transitions[i * C + c] + e(ch.first + 1, c);
      for (int t = ch.first + 2; t <= ch.last; ++t) {
        std::vector<double> w(C), terms(C);
        for (std::size_t c = 0; c < C; ++c) {
          for (std::size_t cp = 0; cp < C; ++cp) terms[cp] = v[cp] + m.transitions[cp * C + c];
          w[c] = e(t, c) + lse(terms);
        }
        v = w;
      }
      for (std::size_t c = 0; c < C; ++c) P[i * C + c] = v[c];
    }
    std::vector<double> next(C), terms(C);
    for (std::size_t c = 0; c < C; ++c) {
      for (std::size_t i = 0; i < C; ++i) terms[i] = a[i] + P[i * C + c];
      next[c] = lse(terms);
    }
    a = next;
  }
  return lse(a);
}

}  // namespace

TEST(ScanPlan, RunsOnlyForKOneFewSequencesAndAtMost32Labels) {
  const std::vector<std::size_t> one{100000};
  EXPECT_EQ(plan::scan_chunk_length(one, 1, 24, 132), 190u);  // ⌈99 999 / 528⌉
  EXPECT_EQ(plan::scan_chunk_length(one, 2, 24, 132), 0u);    // K > 1: sequential
  EXPECT_EQ(plan::scan_chunk_length(one, 1, 33, 132), 0u);    // a lane per label
  EXPECT_EQ(plan::scan_chunk_length(one, 1, 0, 132), 0u);
  EXPECT_EQ(plan::scan_chunk_length(one, 1, 32, 0), 0u);
  EXPECT_EQ(plan::scan_chunk_length(std::vector<std::size_t>(132, 1000), 1, 24, 132), 0u);  // the batch fills the GPU
  EXPECT_EQ(plan::scan_chunk_length(std::vector<std::size_t>(131, 1000), 1, 24, 132), 248u);
  EXPECT_EQ(plan::scan_chunk_length({1000}, 1, 24, 132), 32u);    // at least 32 steps
  EXPECT_EQ(plan::scan_chunk_length({0, 1, 1}, 1, 24, 132), 0u);  // no step to chunk
}

TEST(ScanPlan, ChunksCoverEveryStepOnceInOrder) {
  const std::vector<std::size_t> lengths{0, 1, 2, 33, 34, 65, 100};
  std::vector<long long> first;
  const auto chunks = plan::scan_chunks(lengths, 32, first);
  ASSERT_EQ(first.size(), lengths.size() + 1);
  EXPECT_EQ(first[0], 0);
  EXPECT_EQ(first.back(), static_cast<long long>(chunks.size()));
  for (std::size_t b = 0; b < lengths.size(); ++b) {
    // steps 2..T, each in exactly one chunk of at most 32 steps, chunks in order
    int next = 1;
    for (long long j = first[b]; j < first[b + 1]; ++j) {
      EXPECT_EQ(chunks[j].b, static_cast<int>(b));
      EXPECT_EQ(chunks[j].first, next);
      EXPECT_GT(chunks[j].last, chunks[j].first);
      EXPECT_LE(chunks[j].last - chunks[j].first, 32);
      next = chunks[j].last;
    }
    EXPECT_EQ(next, std::max(1, static_cast<int>(lengths[b]))) << "sequence " << b;
  }
  EXPECT_EQ(first[1] - first[0], 0);  // T = 0
  EXPECT_EQ(first[2] - first[1], 0);  // T = 1
  EXPECT_EQ(first[3] - first[2], 1);  // T = 2: step 2
  EXPECT_EQ(first[5] - first[4], 2);  // T = 34: steps 2..33, 34
}

TEST(ScanPlan, ChunkedLogZEqualsTheReferenceForKOne) {
  std::mt19937_64 g(5);
  std::normal_distribution<double> n(0.0, 1.0);
  const std::size_t C = 4;
  const std::vector<std::size_t> lengths{0, 1, 2, 40, 97};
  std::size_t total = 0;
  for (auto T : lengths) total += T;
  sc::Model m = sc::Model::zeros(C, 1);
  for (auto& v : m.transitions) v = n(g);
  for (auto& v : m.duration_bias) v = n(g) - 1.0;
  m.initial.resize(C);
  for (auto& v : m.initial) v = n(g);
  m.transitions[1 * C + 2] = kNegInf;  // an impossible transition
  std::vector<double> f(total * C), ps(total * C), pe(total * C);
  for (auto& v : f) v = 2.0 * n(g);
  for (auto& v : ps) v = 0.3 * n(g);
  for (auto& v : pe) v = 0.3 * n(g);
  for (std::size_t i = 7; i < f.size(); i += 23) f[i] = kNegInf;  // impossible samples of one label
  sc::Batch x;
  x.emissions = f.data();
  x.start_scores = ps.data();
  x.end_scores = pe.data();
  x.lengths = lengths;
  const auto ref = sc::log_partition(m, x);
  for (std::size_t L : {1, 3, 32}) {
    std::vector<long long> first;
    const auto chunks = plan::scan_chunks(lengths, L, first);
    std::size_t offset = 0;
    for (std::size_t b = 0; b < lengths.size(); ++b) {
      const double z = chunked_log_z(m, x, b, offset, chunks, first);
      EXPECT_NEAR(z, ref[b], 1e-9 * std::max(1.0, std::abs(ref[b]))) << "sequence " << b << ", chunks of " << L;
      offset += lengths[b];
    }
  }
}
