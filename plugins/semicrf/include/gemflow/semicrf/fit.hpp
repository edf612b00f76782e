#pragma once
// Fitting a semi-CRF with Gaussian emissions (gemflow/semicrf/emissions.hpp) to signals.
//
// Unsupervised: expectation–maximisation on the signal itself (the Baum–Welch algorithm of a
// hidden semi-Markov model; Yu, "Hidden semi-Markov models", Artif. Intell. 174, 2010). E-step:
// posteriors() gives the label marginals q(u, c), the expected transition counts N[c', c]
// (∂ log Z/∂Tr) and the expected segment counts per duration D[k, c] (∂ log Z/∂B). M-step:
//   μ(c, d)  = Σ_u q(u, c) x(u, d) / Σ_u q(u, c)
//   σ²(c, d) = Σ_u q(u, c) (x(u, d) − μ(c, d))² / Σ_u q(u, c), floored at variance_floor·σ²_noise(d)
//   Tr[c', c] = log((N[c', c] + a) / Σ_c (N[c', c] + a))    over the entries that are finite
//   B[k, c]   = log((D[k, c] + a) / Σ_k (D[k, c] + a))        (only with fit_durations)
//   I[c]      = log((q_first(c) + a) / Σ (q_first + a))
// with a = pseudo_count. Entries that are −∞ stay −∞ (forbidden transitions stay forbidden).
// The objective Σ_b log Z_b (the log likelihood when the potentials are log-probabilities)
// never decreases from one iteration to the next up to the floors and pseudo-counts.
//
// Supervised: maximum likelihood of labelled segmentations, −Σ_b (score(gold_b) − log Z_b)
// + ½·l2·‖θ_crf‖² minimised with L-BFGS (liblbfgs; Nocedal, Math. Comp. 35, 1980) over the
// finite transitions, the duration biases (when fit_durations), the initial scores and the
// Gaussians (means and log-variances, when fit_emissions). The gradient is the gold counts minus
// the expected counts of posteriors(), chained through the Gaussian scores.
// Determinism: both are deterministic (fixed order of every sum).
#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "gemflow/semicrf/emissions.hpp"
#include "gemflow/semicrf/semicrf.hpp"

namespace gemflow::semicrf {

struct GaussianSemiCrf {
  Model crf;
  GaussianLabels gaussians;
};

struct FitStep {
  std::size_t iteration = 0;
  double objective = 0;  ///< EM: Σ log Z; supervised: the minimised negative log likelihood
  double change = 0;     ///< objective − previous objective
};

struct FitOptions {
  std::size_t iterations = 20;  ///< EM iterations / L-BFGS iterations
  double tolerance = 1e-7;      ///< stop when the objective changes by less than tolerance·|objective|
  bool fit_emissions = true;
  bool fit_variances = true;  ///< with fit_emissions: the variances too (else only the means)
  bool fit_transitions = true;
  bool fit_durations = false;
  bool fit_initial = false;
  double pseudo_count = 1e-2;    ///< EM: added to every expected count
  double variance_floor = 0.25;  ///< EM: σ² ≥ variance_floor · noise variance of the channel
  double l2 = 1e-3;              ///< supervised: weight of ½‖θ_crf‖²
  Options crf;                   ///< centring, recurrence, memory limit of the inner passes
  /// Called after each iteration with its step (progress reports); returning false stops the
  /// fit there (cancel), keeping the parameters reached.
  std::function<bool(const FitStep&)> on_step;
};

/// EM on B signals (concatenated rows of D channels, `lengths` samples each; `valid`: their
/// T·D validity flags, nullptr when all observed — missing values are marginalised in the
/// E-step and carry no weight in the M-step, emissions.hpp). Throws
/// std::invalid_argument when a sequence has log Z = −∞ (no_segmentation_message()).
std::vector<FitStep> fit_em(GaussianSemiCrf& m, const double* x, const std::vector<std::size_t>& lengths, std::size_t D,
                            const FitOptions& o, const std::uint8_t* valid = nullptr);

/// Supervised fit on B labelled signals: gold[b] is a complete segmentation of sequence b
/// (`valid` as for fit_em).
std::vector<FitStep> fit_supervised(GaussianSemiCrf& m, const double* x, const std::vector<std::size_t>& lengths,
                                    std::size_t D, const std::vector<std::vector<Segment>>& gold, const FitOptions& o,
                                    const std::uint8_t* valid = nullptr);

}  // namespace gemflow::semicrf
