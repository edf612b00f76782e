#pragma once
// Multi-start distance geometry: several seeded metrize → metric matrix → embed → refine
// trials, the one with the lowest DG error kept.
//
// Each trial is the single chain of the separate nodes (distgeom.metrize, metric_matrix,
// embed, refine) with its own metrization seed: trial 0 uses `seed` itself, trial t > 0 uses
// trial_seed(seed, t). The choice uses only the DG error of the refined structure (bounds,
// chiral volumes, r⁻⁶ sums): never a reference structure. Trials run in parallel threads;
// every trial is deterministic and independent, and ties go to the lower trial index, so the
// result does not depend on the number of threads. Sources: Havel, Prog. Biophys. Mol. Biol. 56
// (1991) 43 (DG-II: many embeddings, ranked by the error function).
#include <cstddef>
#include <cstdint>
#include <functional>
#include <span>
#include <string>
#include <vector>

#include "gemflow/distgeom/embedding.hpp"
#include "gemflow/distgeom/metrize.hpp"
#include "gemflow/distgeom/refine.hpp"

namespace gemflow::distgeom {

struct TrialOptions {
  std::size_t trials = 1;  ///< ≥ 1
  std::uint64_t seed = 1;  ///< base seed: trial t uses trial_seed(seed, first_trial + t)
  /// Index of the first trial run: seed S with first_trial = t and trials = 1 repeats trial t of
  /// a run with seed S exactly (a trial depends only on its seed and the problem).
  std::size_t first_trial = 0;
  MetrizeOptions metrize;  ///< method and atoms (its seed is replaced per trial)
  std::size_t dim = 4;     ///< embedding dimension, 3 or 4
  EmbedMethod method = EmbedMethod::Cholesky;
  std::size_t cholesky_rank = 0;  ///< see embed()
  double pivot_fraction = 1.0;    ///< Cholesky pivot candidates: tight_atoms(smoothed, fraction)
  RefineOptions refine;
  bool mirror_trial = true;  ///< also refine the mirror image of each embedding
  unsigned threads = 0;      ///< parallel trials; 0 = hardware threads (capped at trials)
  /// Refine the two hands (mirror_trial) in two threads: the same result as one after the
  /// other, sooner when cores would idle (fewer trials in flight than cores).
  bool parallel_hands = false;
};

/// What one trial gave (the coordinates only for the kept trial).
struct TrialSummary {
  std::size_t index = 0;  ///< first_trial + position in the run
  std::uint64_t seed = 0;
  /// Empty, or why the trial was dropped: it threw (e.g. too few positive pivots for the
  /// embedding) or diverged (a bound violated by more than the largest upper bound, or a
  /// non-finite DG error). Its numbers are then NaN / 0.
  std::string failure;
  double error = 0.0;             ///< DG error of the refined structure (the kept hand)
  double error_other_hand = 0.0;  ///< DG error of the other hand (NaN without mirror trial)
  bool mirror_won = false;        ///< the mirror image refined to the lower error
  std::size_t iterations = 0;
  std::size_t upper_violations = 0, lower_violations = 0;
  double max_violation = 0.0;
  std::size_t chiral_wrong = 0;
  std::size_t chirality_correct = 0;  ///< reference-handed centres after fix_chirality
  std::vector<double> spectrum;       ///< EmbedResult::spectrum
};

struct TrialsResult {
  std::vector<TrialSummary> trials;  ///< in trial order, failed ones included
  std::size_t best = 0;              ///< position in `trials` of the kept trial (lowest DG error, not failed)
  RefineResult refined;              ///< the kept trial's refinement (coords n×3, Å)
};

/// Metrization seed of trial t: `seed` for t = 0, else SplitMix64(seed + t·0x9E3779B97F4A7C15)
/// (Steele, Lea & Flood, OOPSLA 2014): distinct, well-mixed streams for neighbouring seeds.
[[nodiscard]] std::uint64_t trial_seed(std::uint64_t seed, std::size_t t);

/// A trial's metric matrix + embedding, replacing metric_matrix() then embed() (e.g. on a GPU:
/// cuda::GpuEmbedder::embed_distances, embedding_cuda.hpp). Arguments: the trial's distances
/// (n×n, Å) and embed()'s; the contract is embed()'s on metric_matrix(distances).
using TrialEmbedder =
    std::function<EmbedResult(std::span<const double> distances, std::size_t n, std::size_t dim, EmbedMethod method,
                              std::size_t cholesky_rank, std::span<const unsigned char> pivot_candidates)>;

/// Inputs that stay the same over the trials. Bounds are full symmetric n×n arrays (Å).
struct TrialProblem {
  std::size_t n = 0;
  std::span<const double> smoothed_lower, smoothed_upper;  ///< triangle-smoothed (metrization, pivots)
  std::span<const double> lower, upper;                    ///< as built (refinement; see refine())
  std::span<const ChiralCheck> handedness;                 ///< fix_chirality after embedding (may be empty)
  std::span<const ChiralTerm> chirals;
  std::span<const AmbiguousTerm> ambiguous;
  /// Partial metrization: re-smooths a trial's bounds (called from worker threads, one call per
  /// trial at a time; must be thread-safe and deterministic). Required for MetrizeMethod::Partial.
  Resmoother resmooth;
  /// Optional: called once on each worker thread, before its first trial; the embedder it
  /// returns serves every trial of that thread (so it may hold per-thread state: a stream, device
  /// buffers). Empty, or returning an empty function: metric_matrix() + embed() on the CPU.
  /// Its exceptions fail the trial like embed()'s.
  std::function<TrialEmbedder()> make_embedder;
};

/// Runs the trials (see the file comment). `progress(fraction)` is called from the calling
/// thread only, about every 50 ms; returning false cancels: the workers stop within one
/// refinement callback (10 L-BFGS iterations) and run_trials throws std::runtime_error("cancelled").
/// A trial that fails (e.g. an embedding with too few positive pivots) or diverges is kept in
/// the result with its reason (TrialSummary::failure) and not chosen; only when every trial
/// fails does run_trials throw std::runtime_error with the first reason, prefixed by
/// "every trial failed; trial t (seed s): ". Throws std::invalid_argument on sizes or
/// trials == 0.
[[nodiscard]] TrialsResult run_trials(const TrialProblem& problem, const TrialOptions& options,
                                      const std::function<bool(double)>& progress = {});

}  // namespace gemflow::distgeom
