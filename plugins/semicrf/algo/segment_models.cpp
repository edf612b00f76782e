// Segment-level scores (gemflow/semicrf/segment_models.hpp).
#include "gemflow/semicrf/segment_models.hpp"

#include <algorithm>
#include <cmath>
#include <numbers>
#include <stdexcept>
#include <string>

namespace gemflow::semicrf {

NormalGammaSegments::NormalGammaSegments(const double* x, const std::vector<std::size_t>& lengths, std::size_t D,
                                         std::vector<NormalGammaPrior> prior, const std::uint8_t* valid)
    : D_(D), prior_(std::move(prior)) {
  if (D == 0) throw std::invalid_argument("the signal has no channels");
  if (prior_.size() == 1) prior_.assign(D, prior_[0]);
  if (prior_.size() != D)
    throw std::invalid_argument(std::to_string(prior_.size()) + " Normal-Gamma priors for " + std::to_string(D) +
                                " channels (give one, or one per channel)");
  for (std::size_t d = 0; d < D; ++d) {
    const auto& p = prior_[d];
    if (!(p.kappa > 0 && p.alpha > 0 && p.beta > 0) || !std::isfinite(p.kappa) || !std::isfinite(p.alpha) ||
        !std::isfinite(p.beta) || !std::isfinite(p.mean))
      throw std::invalid_argument("Normal-Gamma prior of channel " + std::to_string(d) +
                                  ": κ₀, α₀, β₀ must be positive and finite and m₀ finite");
    const_.push_back(-std::lgamma(p.alpha) + p.alpha * std::log(p.beta));
  }
  std::size_t total = 0;
  for (auto t : lengths) total += t;
  auto seen = [&](std::size_t u, std::size_t d) { return valid == nullptr || valid[u * D + d] != 0; };
  centre_.assign(D, 0.0);
  for (std::size_t d = 0; d < D; ++d) {
    double s = 0;
    std::size_t n = 0;
    for (std::size_t u = 0; u < total; ++u) {
      if (!std::isfinite(x[u * D + d]))
        throw std::invalid_argument("sample " + std::to_string(u) + " of channel " + std::to_string(d) +
                                    " is not finite");
      if (seen(u, d)) s += x[u * D + d], ++n;
    }
    centre_[d] = n ? s / double(n) : 0.0;
  }
  const std::size_t rows = total + lengths.size();
  n_.assign(rows * D, 0.0);
  s1_.assign(rows * D, 0.0);
  s2_.assign(rows * D, 0.0);
  std::size_t row = 0, u = 0;
  for (auto T : lengths) {
    offset_.push_back(row);
    for (std::size_t i = 0; i < T; ++i, ++u, ++row)
      for (std::size_t d = 0; d < D; ++d) {
        const std::size_t a = row * D + d, b = a + D;
        const bool ok = seen(u, d);
        const double v = ok ? x[u * D + d] - centre_[d] : 0.0;
        n_[b] = n_[a] + (ok ? 1.0 : 0.0);
        s1_[b] = s1_[a] + v;
        s2_[b] = s2_[a] + v * v;
      }
    ++row;
  }
}

double NormalGammaSegments::score(std::size_t b, std::size_t start, std::size_t end, std::size_t) const {
  const std::size_t r0 = (offset_[b] + start) * D_, r1 = (offset_[b] + end) * D_;
  double g = 0;
  for (std::size_t d = 0; d < D_; ++d) {
    const double n = n_[r1 + d] - n_[r0 + d];
    if (n == 0) continue;
    const auto& p = prior_[d];
    const double s1 = s1_[r1 + d] - s1_[r0 + d], s2 = s2_[r1 + d] - s2_[r0 + d];
    const double mean = s1 / n;  // centred units
    const double ss = std::max(s2 - s1 * mean, 0.0);
    const double kn = p.kappa + n, an = p.alpha + n / 2;
    const double dm = mean - (p.mean - centre_[d]);
    const double bn = p.beta + ss / 2 + p.kappa * n * dm * dm / (2 * kn);
    g += const_[d] + std::lgamma(an) - an * std::log(bn) + 0.5 * std::log(p.kappa / kn) -
         n / 2 * std::log(2 * std::numbers::pi);
  }
  return g;
}

}  // namespace gemflow::semicrf
