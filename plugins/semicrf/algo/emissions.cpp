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

double quantile(std::vector<double> v, double p) {
  std::sort(v.begin(), v.end());
  const double pos = p * double(v.size() - 1);
  const std::size_t i = static_cast<std::size_t>(pos);
  const double w = pos - double(i);
  return i + 1 < v.size() ? v[i] * (1 - w) + v[i + 1] * w : v[i];
}

}  // namespace

std::vector<double> gaussian_scores(const double* x, std::size_t T, std::size_t D, const GaussianLabels& g) {
  check_signal(x, T, D);
  const std::size_t C = g.labels;
  if (g.dims != D)
    throw std::invalid_argument("the Gaussians have " + std::to_string(g.dims) + " channels, the signal " +
                                std::to_string(D));
  if (C == 0 || g.mean.size() != C * D || g.variance.size() != C * D)
    throw std::invalid_argument("the Gaussians need C·D = " + std::to_string(C * D) + " means and variances");
  std::vector<double> norm(C, 0.0);
  for (std::size_t c = 0; c < C; ++c)
    for (std::size_t d = 0; d < D; ++d) {
      const double v = g.variance[c * D + d];
      if (!(v > 0) || !std::isfinite(v))
        throw std::invalid_argument("variance of label " + std::to_string(c) + ", channel " + std::to_string(d) +
                                    " is " + std::to_string(v) + " (must be positive and finite)");
      norm[c] -= 0.5 * std::log(2 * std::numbers::pi * v);
    }
  if (!(g.outlier >= 0.0 && g.outlier < 1.0))
    throw std::invalid_argument("outlier probability " + std::to_string(g.outlier) + " is outside [0, 1)");
  // log density of the uniform outlier model: −Σ_d log R_d (a constant signal: R_d = 1)
  double log_uniform = 0;
  for (std::size_t d = 0; d < D && g.outlier > 0; ++d) {
    double lo = x[d], hi = x[d];
    for (std::size_t t = 0; t < T; ++t) lo = std::min(lo, x[t * D + d]), hi = std::max(hi, x[t * D + d]);
    log_uniform -= std::log(hi > lo ? hi - lo : 1.0);
  }
  const double a = g.outlier > 0 ? std::log1p(-g.outlier) : 0.0,
               b = g.outlier > 0 ? std::log(g.outlier) + log_uniform : 0.0;
  std::vector<double> f(T * C);
  for (std::size_t t = 0; t < T; ++t)
    for (std::size_t c = 0; c < C; ++c) {
      double s = norm[c];
      for (std::size_t d = 0; d < D; ++d) {
        const double r = x[t * D + d] - g.mean[c * D + d];
        s -= r * r / (2 * g.variance[c * D + d]);
      }
      if (g.outlier > 0) {  // log((1 − ε) e^s + ε/ΠR) without overflow
        const double u = a + s, m = std::max(u, b);
        s = m + std::log(std::exp(u - m) + std::exp(b - m));
      }
      f[t * C + c] = s;
    }
  return f;
}

std::vector<double> noise_variance(const double* x, std::size_t T, std::size_t D) {
  check_signal(x, T, D);
  std::vector<double> out(D);
  for (std::size_t d = 0; d < D; ++d) {
    double ms = 0;
    for (std::size_t t = 0; t < T; ++t) ms += x[t * D + d] * x[t * D + d] / double(T);
    double v = 0;
    if (T > 1) {
      std::vector<double> diff(T - 1);
      for (std::size_t t = 0; t + 1 < T; ++t) diff[t] = std::abs(x[(t + 1) * D + d] - x[t * D + d]);
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

GaussianLabels estimate_gaussians(const double* x, std::size_t T, std::size_t D, std::size_t C, LevelEstimate levels,
                                  VarianceEstimate variance) {
  check_signal(x, T, D);
  if (C == 0 || C > T)
    throw std::invalid_argument(std::to_string(C) + " labels for " + std::to_string(T) + " samples (need 1 ≤ C ≤ T)");
  GaussianLabels g{C, D, std::vector<double>(C * D), std::vector<double>(C * D)};
  for (std::size_t d = 0; d < D; ++d) {
    std::vector<double> v(T);
    for (std::size_t t = 0; t < T; ++t) v[t] = x[t * D + d];
    for (std::size_t c = 0; c < C; ++c) g.mean[c * D + d] = quantile(v, (double(c) + 0.5) / double(C));
  }
  // distances in units of each channel's noise, so that channels of other units weigh alike
  const auto noise = noise_variance(x, T, D);
  std::vector<std::size_t> assign(T, 0);
  auto nearest = [&] {
    bool changed = false;
    for (std::size_t t = 0; t < T; ++t) {
      std::size_t best = 0;
      double bd = INFINITY;
      for (std::size_t c = 0; c < C; ++c) {
        double s = 0;
        for (std::size_t d = 0; d < D; ++d) s += std::pow(x[t * D + d] - g.mean[c * D + d], 2) / noise[d];
        if (s < bd) bd = s, best = c;
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
      std::vector<std::size_t> n(C, 0);
      for (std::size_t t = 0; t < T; ++t) {
        ++n[assign[t]];
        for (std::size_t d = 0; d < D; ++d) sum[assign[t] * D + d] += x[t * D + d];
      }
      for (std::size_t c = 0; c < C; ++c)
        if (n[c] > 0)
          for (std::size_t d = 0; d < D; ++d) g.mean[c * D + d] = sum[c * D + d] / double(n[c]);
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
    std::vector<std::size_t> n(C, 0);
    for (std::size_t t = 0; t < T; ++t) {
      ++n[assign[t]];
      for (std::size_t d = 0; d < D; ++d)
        ss[assign[t] * D + d] += std::pow(x[t * D + d] - g.mean[assign[t] * D + d], 2);
    }
    for (std::size_t c = 0; c < C; ++c)
      for (std::size_t d = 0; d < D; ++d)
        if (n[c] > 1) g.variance[c * D + d] = std::max(noise[d], ss[c * D + d] / double(n[c] - 1));
  }
  return g;
}

}  // namespace gemflow::semicrf
