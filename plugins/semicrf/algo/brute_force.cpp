// Enumeration of every segmentation: the oracle of the tests (gemflow/semicrf/semicrf.hpp).
#include <cmath>
#include <functional>
#include <limits>

#include "gemflow/semicrf/semicrf.hpp"
#include "sequence.hpp"

namespace gemflow::semicrf {

BruteForce brute_force(const Model& m, const Batch& x, std::size_t b, const Options& o) {
  detail::validate(m, x);
  const auto off = x.offsets();
  const detail::Sequence q(m, x, b, off[b], o);
  const std::size_t C = q.C, K = q.K, T = q.T;
  // number of labelled segmentations: n(t) = Σ_k C·n(t−k)
  std::vector<double> count(T + 1, 0.0);
  count[0] = 1;
  for (std::size_t t = 1; t <= T; ++t)
    for (std::size_t k = 1; k <= std::min(K, t); ++k) count[t] += double(C) * count[t - k];
  if (count[T] > 1e6)
    throw std::invalid_argument("brute force over " + std::to_string(count[T]) + " segmentations refused (limit 10⁶)");

  BruteForce r;
  r.label_marginals.assign(T * C, 0.0);
  r.boundaries.assign(T, 0.0);
  r.grad_duration.assign(K * C, 0.0);
  r.grad_transitions.assign(m.transitions.size(), 0.0);
  std::vector<Segment> segs;
  std::vector<std::pair<double, std::vector<Segment>>> all;
  std::function<void(std::size_t, double)> walk = [&](std::size_t s, double score) {
    if (s == T) {
      all.emplace_back(score, segs);
      return;
    }
    for (std::size_t k = 1; k <= std::min(K, T - s); ++k)
      for (std::size_t c = 0; c < C; ++c) {
        const double tr = segs.empty() ? q.init(c) : q.trans(k, segs.back().label, c);
        const double psi = q.psi0(s + k, k, c) + tr;
        segs.push_back({s, s + k, c, psi});
        walk(s + k, score + psi);
        segs.pop_back();
      }
  };
  walk(0, 0.0);
  detail::LogSum z;
  for (const auto& [score, ss] : all) z.add(score);
  r.log_z = T == 0 ? 0.0 : z.value();
  for (const auto& [score, ss] : all) {
    if (score > r.best.score) r.best = {score, ss};
    if (score == -std::numeric_limits<double>::infinity()) continue;
    const double p = std::exp(score - r.log_z);
    for (std::size_t i = 0; i < ss.size(); ++i) {
      const auto& g = ss[i];
      const std::size_t k = g.end - g.start;
      for (std::size_t u = g.start; u < g.end; ++u) r.label_marginals[u * C + g.label] += p;
      r.boundaries[g.start] += p;
      r.grad_duration[(k - 1) * C + g.label] += p;
      if (i > 0) {
        const std::size_t cp = ss[i - 1].label;
        if (m.transitions.size() == C * C) r.grad_transitions[cp * C + g.label] += p;
        else r.grad_transitions[((k - 1) * C + cp) * C + g.label] += p;
      }
    }
  }
  return r;
}

}  // namespace gemflow::semicrf
