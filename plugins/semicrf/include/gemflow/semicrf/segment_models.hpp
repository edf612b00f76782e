#pragma once
// Segment-level scores (gemflow/semicrf/semicrf.hpp, SegmentScore): a segment's samples scored
// together, under parameters of their own.
//
// NormalGammaSegments: each segment has its own unknown mean μ_d and variance σ²_d per channel,
// with the conjugate Normal-Gamma prior
//   σ⁻² ~ Gamma(α₀, rate β₀),   μ | σ² ~ N(m₀, σ²/κ₀),
// integrated out: G(s, t) = Σ_d log p(x_s..x_{t−1}, channel d) over the observed values, with
// n observed values, mean x̄ and scatter SS = Σ (x − x̄)²:
//   κₙ = κ₀ + n,  αₙ = α₀ + n/2,  βₙ = β₀ + SS/2 + κ₀ n (x̄ − m₀)² / (2κₙ)
//   log p = log Γ(αₙ) − log Γ(α₀) + α₀ log β₀ − αₙ log βₙ + ½ log(κ₀/κₙ) − (n/2) log(2π)
// (Murphy, "Conjugate Bayesian analysis of the Gaussian distribution", 2007, §8; the segment
// likelihood of Fearnhead, "Exact and efficient Bayesian inference for multiple changepoint
// problems", Stat. Comput. 16, 2006, and of BOCPD, Adams & MacKay, arXiv:0710.3742, 2007). With
// one label, self-transitions 0 and a duration bias −λ per segment, the Viterbi path is the
// MAP segmentation of that product-partition model (a change costs λ nats) and log Z its
// evidence. Every label shares the prior (the label does not enter G).
// Missing values (validity flags, nullptr: all observed) are left out of n, x̄ and SS: the
// marginal likelihood of the observed values. A segment with no observed value scores 0.
// Cost: O(1) per segment from prefix sums of the count, Σx and Σx² per channel (centred on the
// channel's mean first, so that the differences of prefix sums keep their precision).
// Errors: std::invalid_argument for sizes that disagree, non-finite samples, α₀, β₀ or κ₀ ≤ 0.
#include <cstddef>
#include <cstdint>
#include <vector>

#include "gemflow/semicrf/semicrf.hpp"

namespace gemflow::semicrf {

struct NormalGammaPrior {
  double mean = 0.0;   ///< m₀ (units of the signal)
  double kappa = 0.1;  ///< κ₀ > 0: prior weight of m₀ in samples
  double alpha = 1.0;  ///< α₀ > 0: shape of the precision
  double beta = 1.0;   ///< β₀ > 0: rate of the precision (units of the signal, squared)
};

class NormalGammaSegments final : public SegmentScore {
 public:
  /// x: B concatenated signals of D channels (row-major, Σ lengths × D); `prior` has one entry
  /// per channel (or one for all).
  NormalGammaSegments(const double* x, const std::vector<std::size_t>& lengths, std::size_t D,
                      std::vector<NormalGammaPrior> prior, const std::uint8_t* valid = nullptr);
  [[nodiscard]] double score(std::size_t b, std::size_t start, std::size_t end, std::size_t c) const override;

 private:
  std::size_t D_;
  std::vector<std::size_t> offset_;  ///< row offset of each sequence in the prefix arrays (T_b + 1 rows each)
  std::vector<NormalGammaPrior> prior_;
  std::vector<double> centre_;       ///< D: the mean of each channel's observed values
  std::vector<double> n_, s1_, s2_;  ///< prefix count, Σ(x − centre), Σ(x − centre)², per channel
  std::vector<double> const_;        ///< D: −log Γ(α₀) + α₀ log β₀ per channel
};

}  // namespace gemflow::semicrf
