// TCPDBench F1 and covering (gemflow/semicrf/metrics.hpp).
#include "gemflow/semicrf/metrics.hpp"

#include <algorithm>
#include <set>
#include <stdexcept>
#include <utility>

namespace gemflow::semicrf {

namespace {
std::set<long long> with_zero(const ChangePoints& v) {
  std::set<long long> s(v.begin(), v.end());
  s.insert(0);
  return s;
}

/// Intervals [start, end) of the partition of [0, n) by the change points.
std::vector<std::pair<long long, long long>> partition(const ChangePoints& cps, std::size_t n) {
  std::set<long long> s;
  for (long long c : cps)
    if (c > 0 && c < static_cast<long long>(n)) s.insert(c);
  std::vector<std::pair<long long, long long>> out;
  long long start = 0;
  for (long long c : s) out.emplace_back(start, c), start = c;
  out.emplace_back(start, static_cast<long long>(n));
  return out;
}
}  // namespace

ChangePoints true_positives(const ChangePoints& truth, const ChangePoints& predictions, long long margin) {
  std::set<long long> x(predictions.begin(), predictions.end());
  ChangePoints tp;
  for (long long tau : std::set<long long>(truth.begin(), truth.end())) {
    auto best = x.end();
    long long bd = 0;
    for (auto it = x.lower_bound(tau - margin); it != x.end() && *it <= tau + margin; ++it) {
      const long long d = *it > tau ? *it - tau : tau - *it;
      if (best == x.end() || d < bd) best = it, bd = d;
    }
    if (best == x.end()) continue;
    tp.push_back(tau);
    x.erase(best);
  }
  return tp;
}

F1Score f_measure(const std::vector<ChangePoints>& annotations, const ChangePoints& predictions, long long margin,
                  double alpha) {
  if (annotations.empty()) throw std::invalid_argument("F1 needs at least one annotator");
  const auto x = with_zero(predictions);
  std::set<long long> all;
  std::vector<std::set<long long>> tk;
  for (const auto& a : annotations) {
    tk.push_back(with_zero(a));
    all.insert(tk.back().begin(), tk.back().end());
  }
  F1Score r;
  const ChangePoints xs(x.begin(), x.end());
  auto count_tp = [&](const std::set<long long>& t) {
    return double(true_positives(ChangePoints(t.begin(), t.end()), xs, margin).size());
  };
  r.precision = count_tp(all) / double(x.size());
  double rec = 0;
  for (const auto& t : tk) rec += count_tp(t) / double(t.size());
  r.recall = rec / double(tk.size());
  const double den = alpha * r.recall + (1 - alpha) * r.precision;
  r.f1 = den > 0 ? r.precision * r.recall / den : 0.0;
  return r;
}

double covering(const std::vector<ChangePoints>& annotations, const ChangePoints& predictions, std::size_t n_obs) {
  if (annotations.empty()) throw std::invalid_argument("covering needs at least one annotator");
  if (n_obs == 0) throw std::invalid_argument("covering of an empty series");
  const auto pred = partition(predictions, n_obs);
  double total = 0;
  for (const auto& a : annotations) {
    double c = 0;
    for (const auto& [s, e] : partition(a, n_obs)) {
      double best = 0;
      for (const auto& [ps, pe] : pred) {
        const long long inter = std::min(e, pe) - std::max(s, ps);
        if (inter <= 0) continue;
        const long long uni = std::max(e, pe) - std::min(s, ps);
        best = std::max(best, double(inter) / double(uni));
      }
      c += double(e - s) * best;
    }
    total += c / double(n_obs);
  }
  return total / double(annotations.size());
}

}  // namespace gemflow::semicrf
