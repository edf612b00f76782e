#pragma once
// Gaussian emission scores of a signal: one diagonal Gaussian per label.
//
// A signal x of T samples and D channels (row-major T × D). Label c has means μ(c, d) and
// variances σ²(c, d) (same unit as x, and its square). The emission score is the log density
//   f(t, c) = Σ_d −½·log(2π·σ²(c, d)) − (x(t, d) − μ(c, d))² / (2·σ²(c, d))
// (natural log; a segment's emission potential is the sum over its samples, which makes the
// semi-CRF a hidden semi-Markov model when transitions and durations are log-probabilities:
// Murphy, "Hidden semi-Markov models", 2002; Yu, Artif. Intell. 174, 2010).
//
// With an outlier probability ε > 0 the score is that of a mixture with a uniform density over
// the signal's range R_d of each channel (max − min), robust to isolated spikes:
//   f(t, c) = log((1 − ε)·Π_d N(x(t, d); μ, σ²) + ε·Π_d 1/R_d)
//
// Estimation (deterministic: no random initialisation):
//   quantiles  μ(c, d) = the (c + ½)/C quantile of channel d (sorted levels: label 0 lowest);
//   kmeans     Lloyd's k-means from the quantile levels (at most 100 iterations; distances in units
//              of each channel's noise standard deviation, below), labels sorted
//              by the mean of channel 0.
// Variance:
//   noise      the same for every label: the noise variance of each channel estimated from
//              first differences, (1.4826 · median |x(t+1) − x(t)| / √2)² — robust to the level
//              changes themselves (Hampel's MAD; the difference-based estimate of Fryzlewicz 2014);
//   cluster    each label's own variance around its mean (samples nearest to it), never below
//              the noise variance.
// Missing values: `valid` (nullptr: all observed) holds T·D flags in the layout of x (1
// observed, 0 missing; Signal::valid). A missing value is marginalised: both densities integrate
// to 1 over it (the uniform one over the range), so its channel drops from the product and a
// sample with no observed channel scores f(t, c) = 0 under every label. The estimates use the
// observed values only (noise: differences between consecutive observed values of a channel).
// Errors: std::invalid_argument for T = 0, D = 0, C = 0 or C > T, non-finite samples, given
// parameters of the wrong size or variances ≤ 0, a channel with no observed value.
#include <cstddef>
#include <cstdint>
#include <functional>
#include <vector>

namespace gemflow::semicrf {

struct GaussianLabels {
  std::size_t labels = 0;        ///< C
  std::size_t dims = 0;          ///< D
  std::vector<double> mean;      ///< C × D
  std::vector<double> variance;  ///< C × D, > 0
  double outlier = 0.0;          ///< ε ∈ [0, 1): probability of a sample from the uniform outlier density
};

enum class LevelEstimate { quantiles, kmeans };
enum class VarianceEstimate { noise, cluster };

/// The scores f(t, c) of the header's formula, T × C row-major.
[[nodiscard]] std::vector<double> gaussian_scores(const double* x, std::size_t T, std::size_t D,
                                                  const GaussianLabels& g, const std::uint8_t* valid = nullptr);

/// Per-channel noise variance from first differences (the `noise` estimate); a floor of
/// 1e-12·(1 + mean square of the channel) keeps it positive on constant signals.
[[nodiscard]] std::vector<double> noise_variance(const double* x, std::size_t T, std::size_t D,
                                                 const std::uint8_t* valid = nullptr);

/// The signal in robust standard units per channel: (x − median_d) / (1.4826 · MAD_d) over the
/// observed values (Hampel's MAD); a channel whose MAD is 0 (mostly constant) is divided by its
/// noise standard deviation instead (noise_variance). Missing values keep their placeholder,
/// transformed alike. One scale per series, so that one set of parameters fits series of any unit.
[[nodiscard]] std::vector<double> standardise(const double* x, std::size_t T, std::size_t D,
                                              const std::uint8_t* valid = nullptr);

/// Isolated outliers marked missing (a Hampel identifier: Hampel, JASA 69, 1974; Pearson, IEEE
/// Trans. Control Syst. Technol. 10, 2002): x(t, d) is an outlier when |x(t, d) − m(t, d)| >
/// threshold · 1.4826 · MAD_d, where m is the running median of the channel's observed values in
/// [t − half_window, t + half_window] and MAD_d the median of all |x − m| of the channel (one
/// scale per channel rather than per window: a flat, quantised stretch has a window MAD of 0).
/// Returns T·D validity flags: `valid`'s (all 1 when nullptr) with the outliers set to 0. A
/// channel whose MAD is 0 gets no outliers. O(T·D·log w) time for the window w = 2·half_window + 1
/// (a running median kept in two ordered halves), whatever half_window is. `poll`, when set, is
/// called with the fraction done every few milliseconds of work; it may throw to stop the call
/// (cancel).
[[nodiscard]] std::vector<std::uint8_t> hampel_outliers(const double* x, std::size_t T, std::size_t D,
                                                        std::size_t half_window, double threshold,
                                                        const std::uint8_t* valid = nullptr,
                                                        const std::function<void(double)>& poll = {});

/// Means and variances of C labels estimated from the signal (the header's `levels` and
/// `variance`). Time: O(T·D·log T) for the quantiles, then per k-means pass O(T·log C) with one
/// channel and O(T·C·D) with several. `poll`, when set, is called with the fraction done (of at most 102
/// passes) every few milliseconds of work; it may throw to stop the call (cancel).
[[nodiscard]] GaussianLabels estimate_gaussians(const double* x, std::size_t T, std::size_t D, std::size_t C,
                                                LevelEstimate levels, VarianceEstimate variance,
                                                const std::uint8_t* valid = nullptr,
                                                const std::function<void(double)>& poll = {});

}  // namespace gemflow::semicrf
