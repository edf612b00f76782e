// Gaussian emission scores and their estimation (gemflow/semicrf/emissions.hpp).
#include "gemflow/semicrf/emissions.hpp"

#include <algorithm>
#include <cmath>
#include <numbers>
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

double quantile(std::vector<double> v, double p) {
  std::sort(v.begin(), v.end());
  const double pos = p * double(v.size() - 1);
  const std::size_t i = static_cast<std::size_t>(pos);
  const double w = pos - double(i);
  return i + 1 < v.size() ? v[i] * (1 - w) + v[i + 1] * w : v[i];
}

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
                                          double threshold, const std::uint8_t* valid) {
  check_signal(x, T, D);
  if (!(threshold > 0)) throw std::invalid_argument("the Hampel threshold must be positive");
  std::vector<std::uint8_t> out(T * D);
  for (std::size_t i = 0; i < T * D; ++i) out[i] = valid == nullptr || valid[i] != 0 ? 1 : 0;
  for (std::size_t d = 0; d < D; ++d) {
    std::vector<double> r(T, 0.0), all, window;
    for (std::size_t t = 0; t < T; ++t) {
      if (!observed(valid, t, D, d)) continue;
      window.clear();
      for (std::size_t u = t > half_window ? t - half_window : 0; u < std::min(T, t + half_window + 1); ++u)
        if (observed(valid, u, D, d)) window.push_back(x[u * D + d]);
      r[t] = std::abs(x[t * D + d] - quantile(window, 0.5));
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
                                  VarianceEstimate variance, const std::uint8_t* valid) {
  check_signal(x, T, D);
  if (C == 0 || C > T)
    throw std::invalid_argument(std::to_string(C) + " labels for " + std::to_string(T) + " samples (need 1 ≤ C ≤ T)");
  GaussianLabels g{C, D, std::vector<double>(C * D), std::vector<double>(C * D)};
  for (std::size_t d = 0; d < D; ++d) {
    std::vector<double> v;
    for (std::size_t t = 0; t < T; ++t)
      if (observed(valid, t, D, d)) v.push_back(x[t * D + d]);
    if (v.empty()) throw std::invalid_argument("channel " + std::to_string(d) + " has no observed value");
    for (std::size_t c = 0; c < C; ++c) g.mean[c * D + d] = quantile(v, (double(c) + 0.5) / double(C));
  }
  // distances in units of each channel's noise, so that channels of other units weigh alike;
  // a sample with no observed channel is assigned to no label (kNone)
  const auto noise = noise_variance(x, T, D, valid);
  constexpr std::size_t kNone = static_cast<std::size_t>(-1);
  std::vector<std::size_t> assign(T, kNone);
  auto nearest = [&] {
    bool changed = false;
    for (std::size_t t = 0; t < T; ++t) {
      std::size_t best = kNone;
      double bd = INFINITY;
      for (std::size_t c = 0; c < C; ++c) {
        double s = 0;
        bool any = false;
        for (std::size_t d = 0; d < D; ++d)
          if (observed(valid, t, D, d)) s += std::pow(x[t * D + d] - g.mean[c * D + d], 2) / noise[d], any = true;
        if (any && s < bd) bd = s, best = c;
      }
      changed |= assign[t] != best;
      assign[t] = best;
    }
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
