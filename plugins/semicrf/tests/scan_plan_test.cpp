// The host plan of the GPU's chunked K = 1 passes (algo/cuda/scan_plan.hpp), and their algebra
// checked on the CPU in fp64, chunk by chunk as the kernels go: log Z from the chunk transfer
// matrices applied in order, and from β at the chunks' ends each chunk's label marginals,
// boundary posteriors and gradient sums, against the reference for K = 1 (boundary scores,
// impossible samples and transitions, sequences of 0..2 samples).
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <random>
#include <string>
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

/// What the chunked kernels compute for sequence b (K = 1, no centring), in fp64: α(1, ·); per
/// chunk its transfer matrix (scan_chunk_kernel) and α at its start (scan_combine_kernel); β at
/// each chunk's end and position 0 (scan_beta_kernel); per chunk the label marginals, boundary
/// posteriors and gradient sums of its steps from α and β (scan_marginals_kernel), added in chunk
/// order (scan_gradients_kernel).
struct Chunked {
  double log_z = 0;
  std::vector<double> q, boundaries;  ///< T × C, T
  std::vector<double> gt, gd, gi;     ///< C × C, C, C
};

Chunked chunked(const sc::Model& m, const sc::Batch& x, std::size_t b, std::size_t offset,
                const std::vector<plan::ScanChunk>& chunks, const std::vector<long long>& first) {
  const std::size_t C = m.labels, T = x.lengths[b];
  Chunked out;
  out.q.assign(T * C, 0.0);
  out.boundaries.assign(T, 0.0);
  out.gt.assign(C * C, 0.0);
  out.gd.assign(C, 0.0);
  out.gi.assign(C, 0.0);
  if (T == 0) return out;
  auto e = [&](std::size_t t, std::size_t c) {  // segment [t − 1, t) of label c, no transition
    const std::size_t r = (offset + t - 1) * C + c;
    const double f = x.emissions[r];
    if (f == kNegInf) return kNegInf;
    return f + m.duration_bias[c] + (x.start_scores ? x.start_scores[r] : 0.0) + (x.end_scores ? x.end_scores[r] : 0.0);
  };
  auto step = [&](const std::vector<double>& a, std::size_t t) {  // α(t, ·) from α(t − 1, ·)
    std::vector<double> next(C), terms(C);
    for (std::size_t c = 0; c < C; ++c) {
      for (std::size_t cp = 0; cp < C; ++cp) terms[cp] = a[cp] + m.transitions[cp * C + c];
      next[c] = e(t, c) + lse(terms);
    }
    return next;
  };
  const long long j0 = first[b], j1 = first[b + 1];
  std::vector<std::vector<double>> P(j1 - j0), A(j1 - j0), Bend(j1 - j0);
  for (long long j = j0; j < j1; ++j) {
    const auto& ch = chunks[j];
    P[j - j0].resize(C * C);
    for (std::size_t i = 0; i < C; ++i) {
      std::vector<double> v(C);
      for (std::size_t c = 0; c < C; ++c) v[c] = m.transitions[i * C + c] + e(ch.first + 1, c);
      for (int t = ch.first + 2; t <= ch.last; ++t) v = step(v, t);
      for (std::size_t c = 0; c < C; ++c) P[j - j0][i * C + c] = v[c];
    }
  }
  std::vector<double> a1(C);
  for (std::size_t c = 0; c < C; ++c) a1[c] = (m.initial.empty() ? 0.0 : m.initial[c]) + e(1, c);
  std::vector<double> a = a1, terms(C);
  for (long long j = j0; j < j1; ++j) {
    A[j - j0] = a;
    std::vector<double> next(C);
    for (std::size_t c = 0; c < C; ++c) {
      for (std::size_t i = 0; i < C; ++i) terms[i] = a[i] + P[j - j0][i * C + c];
      next[c] = lse(terms);
    }
    a = next;
  }
  out.log_z = lse(a);
  const double z = out.log_z;
  if (z == kNegInf) return out;
  std::vector<double> beta(C, 0.0);
  for (long long j = j1 - 1; j >= j0; --j) {
    Bend[j - j0] = beta;
    std::vector<double> prev(C);
    for (std::size_t i = 0; i < C; ++i) {
      for (std::size_t c = 0; c < C; ++c) terms[c] = P[j - j0][i * C + c] + beta[c];
      prev[i] = lse(terms);
    }
    beta = prev;
  }
  auto prob = [&](double v) { return v == kNegInf ? 0.0 : std::exp(v - z); };
  for (std::size_t c = 0; c < C; ++c) {  // position 0
    out.gi[c] = out.gd[c] = out.q[c] = prob(a1[c] + beta[c]);
    out.boundaries[0] += out.q[c];
  }
  for (long long j = j0; j < j1; ++j) {
    const auto& ch = chunks[j];
    std::vector<std::vector<double>> al{A[j - j0]};
    for (int t = ch.first + 1; t <= ch.last; ++t) al.push_back(step(al.back(), t));
    std::vector<double> bt = Bend[j - j0], gt(C * C, 0.0), gd(C, 0.0);
    for (int t = ch.last; t > ch.first; --t) {
      const std::size_t r = t - ch.first;
      std::vector<double> prev(C);
      for (std::size_t cp = 0; cp < C; ++cp) {
        for (std::size_t c = 0; c < C; ++c) {
          terms[c] = m.transitions[cp * C + c] + e(t, c) + bt[c];
          gt[cp * C + c] += prob(al[r - 1][cp] + terms[c]);
        }
        prev[cp] = lse(terms);
      }
      for (std::size_t c = 0; c < C; ++c) {
        const double qv = prob(al[r][c] + bt[c]);
        out.q[(t - 1) * C + c] = qv;
        out.boundaries[t - 1] += qv;
        gd[c] += qv;
      }
      bt = prev;
    }
    for (std::size_t i = 0; i < C * C; ++i) out.gt[i] += gt[i];
    for (std::size_t c = 0; c < C; ++c) out.gd[c] += gd[c];
  }
  return out;
}

/// The chunked Viterbi of sequence b (K = 1) as its kernels go: max-plus chunk matrices
/// (scan_chunk_kernel<true>), α at each chunk's start and the best final label
/// (scan_combine_kernel<true>), per chunk its backpointers and the map from its end label to its
/// start label (scan_viterbi_chunk_kernel), the maps linked in reverse chunk order
/// (scan_viterbi_link_kernel), each chunk's segments from its end label
/// (scan_viterbi_segments_kernel). Returns the path's score and its segments.
sc::Path chunked_viterbi(const sc::Model& m, const sc::Batch& x, std::size_t b, std::size_t offset,
                         const std::vector<plan::ScanChunk>& chunks, const std::vector<long long>& first) {
  const std::size_t C = m.labels, T = x.lengths[b];
  sc::Path out;
  if (T == 0) {
    out.score = 0.0;
    return out;
  }
  auto e = [&](std::size_t t, std::size_t c) {
    const std::size_t r = (offset + t - 1) * C + c;
    const double f = x.emissions[r];
    if (f == kNegInf) return kNegInf;
    return f + m.duration_bias[c] + (x.start_scores ? x.start_scores[r] : 0.0) + (x.end_scores ? x.end_scores[r] : 0.0);
  };
  auto maxof = [](const std::vector<double>& v, std::size_t& arg) {
    double best = kNegInf;
    arg = 0;
    for (std::size_t i = 0; i < v.size(); ++i)
      if (v[i] > best) best = v[i], arg = i;
    return best;
  };
  const long long j0 = first[b], j1 = first[b + 1];
  std::vector<double> a(C), terms(C);
  for (std::size_t c = 0; c < C; ++c) a[c] = (m.initial.empty() ? 0.0 : m.initial[c]) + e(1, c);
  std::vector<std::vector<double>> A;
  for (long long j = j0; j < j1; ++j) {
    const auto& ch = chunks[j];
    std::vector<double> P(C * C);
    for (std::size_t i = 0; i < C; ++i) {
      std::vector<double> v(C);
      for (std::size_t c = 0; c < C; ++c) v[c] = m.transitions[i * C + c] + e(ch.first + 1, c);
      for (int t = ch.first + 2; t <= ch.last; ++t) {
        std::vector<double> nv(C);
        std::size_t arg = 0;
        for (std::size_t c = 0; c < C; ++c) {
          for (std::size_t cp = 0; cp < C; ++cp) terms[cp] = v[cp] + m.transitions[cp * C + c];
          const double mx = maxof(terms, arg);
          nv[c] = mx == kNegInf || e(t, c) == kNegInf ? kNegInf : e(t, c) + mx;
        }
        v = nv;
      }
      for (std::size_t c = 0; c < C; ++c) P[i * C + c] = v[c];
    }
    A.push_back(a);
    std::vector<double> next(C);
    std::size_t arg = 0;
    for (std::size_t c = 0; c < C; ++c) {
      for (std::size_t i = 0; i < C; ++i) terms[i] = a[i] + P[i * C + c];
      next[c] = maxof(terms, arg);
    }
    a = next;
  }
  std::size_t lab = 0;
  out.score = maxof(a, lab);
  if (out.score == kNegInf) return out;
  // per chunk: backpointers (row t − first − 1 for step t) and the end-to-start label map
  std::vector<std::vector<std::size_t>> bp(j1 - j0), map(j1 - j0);
  for (long long j = j0; j < j1; ++j) {
    const auto& ch = chunks[j];
    std::vector<double> v = A[j - j0];
    for (int t = ch.first + 1; t <= ch.last; ++t) {
      std::vector<double> nv(C);
      for (std::size_t c = 0; c < C; ++c) {
        for (std::size_t cp = 0; cp < C; ++cp) terms[cp] = v[cp] + m.transitions[cp * C + c];
        std::size_t arg = 0;
        const double mx = maxof(terms, arg);
        nv[c] = mx == kNegInf || e(t, c) == kNegInf ? kNegInf : e(t, c) + mx;
        bp[j - j0].push_back(mx == kNegInf ? 0 : arg);
      }
      v = nv;
    }
    for (std::size_t c = 0; c < C; ++c) {
      std::size_t l = c;
      for (int t = ch.last; t > ch.first; --t) l = bp[j - j0][(t - ch.first - 1) * C + l];
      map[j - j0].push_back(l);
    }
  }
  std::vector<std::size_t> end_label(j1 - j0);
  for (long long j = j1 - 1; j >= j0; --j) {
    end_label[j - j0] = lab;
    lab = map[j - j0][lab];
  }
  out.segments.assign(T, {});
  out.segments[0] = {0, 1, lab, 0.0};
  for (long long j = j0; j < j1; ++j) {
    const auto& ch = chunks[j];
    std::size_t l = end_label[j - j0];
    for (int t = ch.last; t > ch.first; --t) {
      out.segments[t - 1] = {std::size_t(t - 1), std::size_t(t), l, 0.0};
      l = bp[j - j0][(t - ch.first - 1) * C + l];
    }
  }
  return out;
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

TEST(ScanPlan, ChunkedPassesEqualTheReferenceForKOne) {
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
  const auto ref = sc::posteriors(m, x);
  for (std::size_t L : {1, 3, 32}) {
    SCOPED_TRACE("chunks of " + std::to_string(L));
    std::vector<long long> first;
    const auto chunks = plan::scan_chunks(lengths, L, first);
    std::vector<double> gt(C * C, 0.0), gd(C, 0.0), gi(C, 0.0);
    std::size_t offset = 0;
    for (std::size_t b = 0; b < lengths.size(); ++b) {
      const auto r = chunked(m, x, b, offset, chunks, first);
      EXPECT_NEAR(r.log_z, ref.log_z[b], 1e-9 * std::max(1.0, std::abs(ref.log_z[b]))) << "sequence " << b;
      for (std::size_t i = 0; i < r.q.size(); ++i)
        ASSERT_NEAR(r.q[i], ref.label_marginals[offset * C + i], 1e-9) << "sequence " << b << ", entry " << i;
      for (std::size_t u = 0; u < lengths[b]; ++u)
        ASSERT_NEAR(r.boundaries[u], ref.boundaries[offset + u], 1e-9) << "sequence " << b << ", position " << u;
      for (std::size_t i = 0; i < C * C; ++i) gt[i] += r.gt[i];
      for (std::size_t c = 0; c < C; ++c) gd[c] += r.gd[c], gi[c] += r.gi[c];
      offset += lengths[b];
    }
    for (std::size_t i = 0; i < C * C; ++i) EXPECT_NEAR(gt[i], ref.grad_transitions[i], 1e-9) << "Tr " << i;
    for (std::size_t c = 0; c < C; ++c) {
      EXPECT_NEAR(gd[c], ref.grad_duration[c], 1e-9) << "B " << c;
      EXPECT_NEAR(gi[c], ref.grad_initial[c], 1e-9) << "I " << c;
    }
  }
}

TEST(ScanPlan, ChunkedViterbiFindsTheReferencesBestPathForKOne) {
  std::mt19937_64 g(6);
  std::normal_distribution<double> n(0.0, 1.0);
  const std::size_t C = 5;
  const std::vector<std::size_t> lengths{0, 1, 2, 41, 130, 9};
  std::size_t total = 0;
  for (auto T : lengths) total += T;
  sc::Model m = sc::Model::zeros(C, 1);
  for (auto& v : m.transitions) v = n(g);
  for (auto& v : m.duration_bias) v = n(g) - 1.0;
  m.initial.resize(C);
  for (auto& v : m.initial) v = n(g);
  m.transitions[2 * C + 3] = kNegInf;
  std::vector<double> f(total * C), ps(total * C);
  for (auto& v : f) v = 2.0 * n(g);
  for (auto& v : ps) v = 0.3 * n(g);
  for (std::size_t i = 4; i < f.size(); i += 17) f[i] = kNegInf;
  for (std::size_t i = (total - 9) * C; i < total * C; ++i) f[i] = kNegInf;  // the last: no segmentation
  sc::Batch x;
  x.emissions = f.data();
  x.start_scores = ps.data();
  x.lengths = lengths;
  const auto ref = sc::viterbi(m, x);
  for (std::size_t L : {1, 3, 32}) {
    SCOPED_TRACE("chunks of " + std::to_string(L));
    std::vector<long long> first;
    const auto chunks = plan::scan_chunks(lengths, L, first);
    std::size_t offset = 0;
    for (std::size_t b = 0; b < lengths.size(); ++b) {
      const auto r = chunked_viterbi(m, x, b, offset, chunks, first);
      offset += lengths[b];
      if (ref[b].score == kNegInf) {
        EXPECT_EQ(r.score, kNegInf) << "sequence " << b;
        EXPECT_TRUE(r.segments.empty());
        continue;
      }
      const double tol = 1e-9 * std::max(1.0, std::abs(ref[b].score));
      EXPECT_NEAR(r.score, ref[b].score, tol) << "sequence " << b;
      // the traced path is a segmentation of [0, T) whose own score is the best score
      ASSERT_EQ(r.segments.size(), lengths[b]) << "sequence " << b;
      EXPECT_NEAR(sc::path_score(m, x, b, r.segments), ref[b].score, tol) << "sequence " << b;
      for (std::size_t u = 0; u < lengths[b]; ++u) EXPECT_EQ(r.segments[u].label, ref[b].segments[u].label) << u;
    }
  }
}
