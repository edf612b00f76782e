// Gaussian emission scores and their estimation (gemflow/semicrf/emissions.hpp).
#include "gemflow/semicrf/emissions.hpp"

#include <algorithm>
#include <cmath>
#include <functional>
#include <numbers>
#include <set>
#include <stdexcept>
#include <string>

namespace gemflow::semicrf {

namespace {

void check_signal(const double* x, std::size_t T, std::size_t D) {
  if (T == 0) throw std::invalid_argument("the signal has no samples");
  if (D == 0) throw std::invalid_argument("the signal has no channels");
  for (std::size_t t = 0; t < T; ++t)
    for (std::size_t d = 0; d < D; ++d)
      if (!std::isfinite(x[t * D + d]))
        throw std::invalid_argument("sample " + std::to_string(t) + " of channel " + std::to_string(d) +
                                    " is not finite");
}

bool observed(const std::uint8_t* valid, std::size_t t, std::size_t D, std::size_t d) {
  return valid == nullptr || valid[t * D + d] != 0;
}

/// The p quantile of sorted values, interpolated between the two nearest ranks.
double quantile_sorted(const std::vector<double>& v, double p) {
  const double pos = p * double(v.size() - 1);
  const std::size_t i = static_cast<std::size_t>(pos);
  const double w = pos - double(i);
  return i + 1 < v.size() ? v[i] * (1 - w) + v[i + 1] * w : v[i];
}

double quantile(std::vector<double> v, double p) {
  std::sort(v.begin(), v.end());
  return quantile_sorted(v, p);
}

/// The median of a sliding window, O(log w) per added or removed value: the lower half in `lo`
/// (one more than `hi` when the count is odd), every value of `lo` ≤ every value of `hi`. The
/// median is the one of quantile_sorted(·, 0.5), bit for bit.
class SlidingMedian {
 public:
  void add(double v) {
    if (lo_.empty() || v <= *lo_.rbegin())
      lo_.insert(v);
    else
      hi_.insert(v);
    balance();
  }
  /// v must be in the window.
  void remove(double v) {
    if (v <= *lo_.rbegin())
      lo_.erase(lo_.find(v));
    else
      hi_.erase(hi_.find(v));
    balance();
  }
  [[nodiscard]] double median() const {
    const double a = *lo_.rbegin();
    return lo_.size() > hi_.size() ? a : a * 0.5 + *hi_.begin() * 0.5;
  }

 private:
  void balance() {
    if (lo_.size() > hi_.size() + 1) {
      hi_.insert(*lo_.rbegin());
      lo_.erase(std::prev(lo_.end()));
    } else if (hi_.size() > lo_.size()) {
      lo_.insert(*hi_.begin());
      hi_.erase(hi_.begin());
    }
  }
  std::multiset<double> lo_, hi_;
};

/// Calls `poll` with the fraction done at the first unit of work and then after every `stride`
/// units (a few milliseconds of work), when there is a poll.
struct Ticker {
  const std::function<void(double)>& poll;
  std::size_t stride;
  std::size_t work = 0, next = 0;
  void operator()(std::size_t units, double fraction) {
    if (!poll) return;
    if (work >= next) poll(std::min(1.0, fraction)), next = work + stride;
    work += units;
  }
};

}  // namespace

std::vector<double> gaussian_scores(const double* x, std::size_t T, std::size_t D, const GaussianLabels& g,
                                    const std::uint8_t* valid) {
  check_signal(x, T, D);
  const std::size_t C = g.labels;
  if (g.dims != D)
    throw std::invalid_argument("the Gaussians have " + std::to_string(g.dims) + " channels, the signal " +
                                std::to_string(D));
  if (C == 0 || g.mean.size() != C * D || g.variance.size() != C * D)
    throw std::invalid_argument("the Gaussians need C·D = " + std::to_string(C * D) + " means and variances");
  std::vector<double> norm(C * D);  // −½ log(2πσ²) per label and channel
  for (std::size_t c = 0; c < C; ++c)
    for (std::size_t d = 0; d < D; ++d) {
      const double v = g.variance[c * D + d];
      if (!(v > 0) || !std::isfinite(v))
        throw std::invalid_argument("variance of label " + std::to_string(c) + ", channel " + std::to_string(d) +
                                    " is " + std::to_string(v) + " (must be positive and finite)");
      norm[c * D + d] = -0.5 * std::log(2 * std::numbers::pi * v);
    }
  if (!(g.outlier >= 0.0 && g.outlier < 1.0))
    throw std::invalid_argument("outlier probability " + std::to_string(g.outlier) + " is outside [0, 1)");
  // log density of the uniform outlier model per channel: −log R_d over the observed values (a
  // constant channel: R_d = 1)
  std::vector<double> log_uniform(D, 0.0);
  for (std::size_t d = 0; d < D && g.outlier > 0; ++d) {
    double lo = INFINITY, hi = -INFINITY;
    for (std::size_t t = 0; t < T; ++t)
      if (observed(valid, t, D, d)) lo = std::min(lo, x[t * D + d]), hi = std::max(hi, x[t * D + d]);
    log_uniform[d] = -std::log(hi > lo ? hi - lo : 1.0);
  }
  const double a = g.outlier > 0 ? std::log1p(-g.outlier) : 0.0, log_eps = g.outlier > 0 ? std::log(g.outlier) : 0.0;
  std::vector<double> f(T * C);
  for (std::size_t t = 0; t < T; ++t) {
    // a missing channel is integrated out: both densities integrate to 1 over it, so it drops
    // from the product; a sample with no observed channel scores 0 under every label
    double b = log_eps;
    std::size_t seen = 0;
    for (std::size_t d = 0; d < D; ++d)
      if (observed(valid, t, D, d)) b += log_uniform[d], ++seen;
    for (std::size_t c = 0; c < C; ++c) {
      if (seen == 0) {
        f[t * C + c] = 0.0;
        continue;
      }
      double s = 0;
      for (std::size_t d = 0; d < D; ++d) {
        if (!observed(valid, t, D, d)) continue;
        const double r = x[t * D + d] - g.mean[c * D + d];
        s += norm[c * D + d] - r * r / (2 * g.variance[c * D + d]);
      }
      if (g.outlier > 0) {  // log((1 − ε) e^s + ε/ΠR) without overflow
        const double u = a + s, m = std::max(u, b);
        s = m + std::log(std::exp(u - m) + std::exp(b - m));
      }
      f[t * C + c] = s;
    }
  }
  return f;
}

std::vector<double> noise_variance(const double* x, std::size_t T, std::size_t D, const std::uint8_t* valid) {
  check_signal(x, T, D);
  std::vector<double> out(D);
  for (std::size_t d = 0; d < D; ++d) {
    // differences between consecutive observed values (a missing value is skipped, not filled)
    double ms = 0;
    std::size_t n = 0, last = T;
    std::vector<double> diff;
    for (std::size_t t = 0; t < T; ++t) {
      if (!observed(valid, t, D, d)) continue;
      ms += x[t * D + d] * x[t * D + d];
      ++n;
      if (last != T) diff.push_back(std::abs(x[t * D + d] - x[last * D + d]));
      last = t;
    }
    ms = n > 0 ? ms / double(n) : 0.0;
    double v = 0;
    if (!diff.empty()) {
      const double mad = quantile(diff, 0.5);
      v = std::pow(1.4826 * mad / std::numbers::sqrt2, 2);
      if (v == 0) {  // more than half the differences are 0 (quantised data): use their mean square
        double s = 0;
        for (double a : diff) s += a * a;
        v = s / double(diff.size()) / 2;
      }
    }
    out[d] = std::max(v, 1e-12 * (1 + ms));
  }
  return out;
}

std::vector<double> standardise(const double* x, std::size_t T, std::size_t D, const std::uint8_t* valid) {
  check_signal(x, T, D);
  const auto noise = noise_variance(x, T, D, valid);
  std::vector<double> out(x, x + T * D);
  for (std::size_t d = 0; d < D; ++d) {
    std::vector<double> v;
    for (std::size_t t = 0; t < T; ++t)
      if (observed(valid, t, D, d)) v.push_back(x[t * D + d]);
    if (v.empty()) continue;
    const double med = quantile(v, 0.5);
    for (auto& a : v) a = std::abs(a - med);
    double scale = 1.4826 * quantile(v, 0.5);
    if (!(scale > 0)) scale = std::sqrt(noise[d]);
    for (std::size_t t = 0; t < T; ++t) out[t * D + d] = (x[t * D + d] - med) / scale;
  }
  return out;
}

std::vector<std::uint8_t> hampel_outliers(const double* x, std::size_t T, std::size_t D, std::size_t half_window,
                                          double threshold, const std::uint8_t* valid,
                                          const std::function<void(double)>& poll) {
  check_signal(x, T, D);
  if (!(threshold > 0)) throw std::invalid_argument("the Hampel threshold must be positive");
  std::vector<std::uint8_t> out(T * D);
  for (std::size_t i = 0; i < T * D; ++i) out[i] = valid == nullptr || valid[i] != 0 ? 1 : 0;
  Ticker tick{poll, std::size_t{1} << 16};
  for (std::size_t d = 0; d < D; ++d) {
    std::vector<double> r(T, 0.0), all;
    // the window of t is [t − w, t + w] ∩ [0, T): moving to t adds t + w and drops t − w − 1
    SlidingMedian window;
    const std::size_t w = std::min(half_window, T);
    for (std::size_t u = 0; u < std::min(T, w); ++u)
      if (observed(valid, u, D, d)) window.add(x[u * D + d]);
    for (std::size_t t = 0; t < T; ++t) {
      tick(1, (double(d) * double(T) + double(t)) / (double(T) * double(D)));
      if (t + w < T && observed(valid, t + w, D, d)) window.add(x[(t + w) * D + d]);
      if (t > w && observed(valid, t - w - 1, D, d)) window.remove(x[(t - w - 1) * D + d]);
      if (!observed(valid, t, D, d)) continue;
      r[t] = std::abs(x[t * D + d] - window.median());
      all.push_back(r[t]);
    }
    if (all.empty()) continue;
    const double scale = 1.4826 * quantile(all, 0.5);
    if (!(scale > 0)) continue;
    for (std::size_t t = 0; t < T; ++t)
      if (observed(valid, t, D, d) && r[t] > threshold * scale) out[t * D + d] = 0;
  }
  return out;
}

GaussianLabels estimate_gaussians(const double* x, std::size_t T, std::size_t D, std::size_t C, LevelEstimate levels,
                                  VarianceEstimate variance, const std::uint8_t* valid,
                                  const std::function<void(double)>& poll) {
  check_signal(x, T, D);
  if (C == 0 || C > T)
    throw std::invalid_argument(std::to_string(C) + " labels for " + std::to_string(T) + " samples (need 1 ≤ C ≤ T)");
  GaussianLabels g{C, D, std::vector<double>(C * D), std::vector<double>(C * D)};
  for (std::size_t d = 0; d < D; ++d) {
    std::vector<double> v;
    for (std::size_t t = 0; t < T; ++t)
      if (observed(valid, t, D, d)) v.push_back(x[t * D + d]);
    if (v.empty()) throw std::invalid_argument("channel " + std::to_string(d) + " has no observed value");
    std::sort(v.begin(), v.end());
    for (std::size_t c = 0; c < C; ++c) g.mean[c * D + d] = quantile_sorted(v, (double(c) + 0.5) / double(C));
  }
  // distances in units of each channel's noise, so that channels of other units weigh alike;
  // a sample with no observed channel is assigned to no label (kNone)
  const auto noise = noise_variance(x, T, D, valid);
  constexpr std::size_t kNone = static_cast<std::size_t>(-1);
  std::vector<std::size_t> assign(T, kNone);
  // One channel: the nearest mean by bisection of the distinct means, O(log C) a sample instead
  // of O(C). Its label is the scan's over all C (ties to the lowest label): the distance is
  // monotone in |x − μ|, so the nearest lie next to x in the order, and a distinct mean stands
  // for the lowest label that has it.
  std::vector<double> level;       // the distinct means, ascending
  std::vector<std::size_t> lowest;  // the lowest label of each
  const auto distinct_means = [&] {
    std::vector<std::size_t> order(C);
    for (std::size_t c = 0; c < C; ++c) order[c] = c;
    std::sort(order.begin(), order.end(), [&](auto a, auto b) { return std::pair{g.mean[a], a} < std::pair{g.mean[b], b}; });
    level.clear(), lowest.clear();
    for (std::size_t c : order)
      if (level.empty() || g.mean[c] != level.back()) level.push_back(g.mean[c]), lowest.push_back(c);
  };
  const auto nearest_1d = [&](double xv) {
    const auto dist = [&](std::size_t k) { return std::pow(xv - level[k], 2) / noise[0]; };
    const std::size_t j = static_cast<std::size_t>(std::lower_bound(level.begin(), level.end(), xv) - level.begin());
    double bd = INFINITY;
    if (j > 0) bd = dist(j - 1);
    if (j < level.size()) bd = std::min(bd, dist(j));
    std::size_t best = kNone;
    for (std::size_t k = j; k > 0 && dist(k - 1) == bd; --k) best = std::min(best, lowest[k - 1]);
    for (std::size_t k = j; k < level.size() && dist(k) == bd; ++k) best = std::min(best, lowest[k]);
    return best;
  };
  Ticker tick{poll, std::size_t{1} << 18};
  std::size_t pass = 0;
  const double passes = levels == LevelEstimate::kmeans ? 102 : 1;
  auto nearest = [&] {
    if (D == 1) distinct_means();
    bool changed = false;
    for (std::size_t t = 0; t < T; ++t) {
      tick(D == 1 ? 1 : C * D, (double(pass) + double(t) / double(T)) / passes);
      std::size_t best = kNone;
      if (D == 1) {
        if (observed(valid, t, D, 0)) best = nearest_1d(x[t]);
      } else {
        double bd = INFINITY;
        for (std::size_t c = 0; c < C; ++c) {
          double s = 0;
          bool any = false;
          for (std::size_t d = 0; d < D; ++d)
            if (observed(valid, t, D, d)) s += std::pow(x[t * D + d] - g.mean[c * D + d], 2) / noise[d], any = true;
          if (any && s < bd) bd = s, best = c;
        }
      }
      changed |= assign[t] != best;
      assign[t] = best;
    }
    ++pass;
    return changed;
  };
  nearest();
  if (levels == LevelEstimate::kmeans) {
    for (int it = 0; it < 100; ++it) {
      std::vector<double> sum(C * D, 0.0);
      std::vector<std::size_t> n(C * D, 0);
      for (std::size_t t = 0; t < T; ++t) {
        if (assign[t] == kNone) continue;
        for (std::size_t d = 0; d < D; ++d)
          if (observed(valid, t, D, d)) sum[assign[t] * D + d] += x[t * D + d], ++n[assign[t] * D + d];
      }
      for (std::size_t i = 0; i < C * D; ++i)
        if (n[i] > 0) g.mean[i] = sum[i] / double(n[i]);
      if (!nearest()) break;
    }
    // labels ordered by the level of channel 0 (stable: ties keep their order)
    std::vector<std::size_t> order(C);
    for (std::size_t c = 0; c < C; ++c) order[c] = c;
    std::stable_sort(order.begin(), order.end(), [&](auto a, auto b) { return g.mean[a * D] < g.mean[b * D]; });
    std::vector<double> m(C * D);
    for (std::size_t c = 0; c < C; ++c)
      for (std::size_t d = 0; d < D; ++d) m[c * D + d] = g.mean[order[c] * D + d];
    g.mean = m;
    nearest();
  }
  for (std::size_t c = 0; c < C; ++c)
    for (std::size_t d = 0; d < D; ++d) g.variance[c * D + d] = noise[d];
  if (variance == VarianceEstimate::cluster) {
    std::vector<double> ss(C * D, 0.0);
    std::vector<std::size_t> n(C * D, 0);
    for (std::size_t t = 0; t < T; ++t) {
      if (assign[t] == kNone) continue;
      for (std::size_t d = 0; d < D; ++d)
        if (observed(valid, t, D, d))
          ss[assign[t] * D + d] += std::pow(x[t * D + d] - g.mean[assign[t] * D + d], 2), ++n[assign[t] * D + d];
    }
    for (std::size_t i = 0; i < C * D; ++i)
      if (n[i] > 1) g.variance[i] = std::max(noise[i % D], ss[i] / double(n[i] - 1));
  }
  return g;
}

}  // namespace gemflow::semicrf
