#pragma once
// Semi-Markov conditional random field: log partition, posteriors, gradients and Viterbi on the
// CPU in fp64 (the reference the GPU path is tested against).
//
// Model (Sarawagi & Cohen, "Semi-Markov Conditional Random Fields for Information Extraction",
// NIPS 2004; the streaming scheme follows Flash-SemiCRF, github biobenkj/flash-semicrf, our own
// code). A sequence of T samples is cut into segments [s, t) of duration k = t − s ∈ 1..K, each
// with one of C labels. Inputs, all natural-log potentials (higher is more likely):
//   f(u, c)          emission score of label c at sample u           T × C   (−∞: impossible)
//   Tr[c', c]        transition from the previous segment's label c'  C × C
//                    or Tr[k, c', c] when it depends on the new segment's duration (K × C × C)
//   B[k, c]          duration bias of a segment of duration k, label c (K × C, row k−1)
//   I[c]             score of label c for the first segment           C (optional: 0)
//   Ps(u, c), Pe(u, c)  optional boundary scores: a segment of label c starts at u / ends at u
//                    (its last sample is u)                           T × C each
// Centring (Options::centring) replaces f by f̄ = f − ν with ν_c = mean over the finite f(·, c):
//   none         ν = 0: the model as given.
//   mean         the model sees f̄: each segment loses ν_c·k, which favours labels whose mean
//                score is low and changes the distribution (what Flash-SemiCRF does).
//   reconstruct  f̄ inside the prefix sums, ν_c·k added back to each segment: the same
//                distribution as `none`, with prefix sums of centred (small) numbers.
// Prefix sums S[t, c] = Σ_{u<t} f̄(u, c) are the only emission data the recurrences read
// (with a count of −∞ entries, so that a segment covering an impossible sample is −∞ rather
// than ∞ − ∞). The potential of a segment [t−k, t) of label c after label c' is
//   ψ(t, k, c, c') = S[t, c] − S[t−k, c] + r·ν_c·k + B[k, c] + Tr[(k,) c', c]
//                    + Ps(t−k, c) + Pe(t−1, c) [+ G(t−k, t, c)]   (r = 1 for reconstruct, else 0)
// where G is an optional segment-level score (Batch::segment_score, CPU only).
// with I[c] instead of Tr for the first segment (t − k = 0). log Z = log Σ over segmentations
// of exp(Σ ψ). A sequence of length 0 has one (empty) segmentation: log Z = 0. log Z = −∞ means
// that no segmentation is allowed (every path crosses a −∞ score): see no_segmentation_message().
//
// Recurrences (α: segments ending at t; β: the rest of the sequence after a boundary at t):
//   in(s, c)  = I[c] (s = 0), else log Σ_{c'} exp(α(s, c') + Tr[c', c])          (C² per step)
//   α(t, c)   = log Σ_{k ≤ min(K,t)} exp(in(t−k, c) + ψ₀(t, k, c))                (K·C per step)
// where ψ₀ is ψ without the transition: the factored recurrence, T·(C² + K·C), used when Tr
// does not depend on k. The general recurrence (Tr[k, c', c]) sums over k and c' together,
// T·K·C². log Z = log Σ_c exp(α(T, c)).
// Streaming: the forward pass keeps a ring of K slots (in(·) or α(·)) and a checkpoint of the
// ring every Δ ≈ √(T·K) steps; the backward pass recomputes α block by block from the
// checkpoints and runs β with a ring of 2K slots (t reads β[t+1..t+K] and writes β[t]).
// Working memory per sequence: O(K·C + (T/Δ)·K·C + Δ·C) besides the prefix sums (T·C).
//
// Posteriors: p(s, k, c) = exp(in(s, c) + ψ₀(s+k, k, c) + β(s+k, c) − log Z) is the probability
// of the segment [s, s+k) with label c. Label marginals q(u, c) = Σ of p over segments covering
// u; boundary marginals b(s) = probability that a segment starts at s (b(0) = 1). Gradients of
// log Z: ∂/∂f(u, c) = q(u, c) (centring `mean`: q(u, c) − mean over finite u' of q(u', c)),
// ∂/∂B[k, c] = Σ_s p(s, k, c), ∂/∂Tr[c', c] = expected number of c' → c transitions (per k for
// duration-dependent transitions), ∂/∂I[c] = probability that the first segment has label c.
// Batch gradients are sums over sequences, reduced in sequence order (deterministic).
//
// Viterbi: the same recurrences with max; backpointers kept compactly (the best duration per
// (t, c) as uint16/uint32 and, factored, the best previous label per (s, c)), traceback from
// the best final label. Ties go to the smallest duration, then the smallest previous label.
//
// Errors: std::invalid_argument naming the inconsistent size or value (NaN or +∞ scores,
// lengths that do not add up, K = 0, C = 0); MemoryError (before allocating) when the working
// memory would exceed Options::memory_limit, naming the bytes and the shape.
#include <cstddef>
#include <cstdint>
#include <functional>
#include <limits>
#include <stdexcept>
#include <string>
#include <vector>

namespace gemflow::semicrf {

enum class Centring { none, mean, reconstruct };
enum class Recurrence { automatic, factored, general };

/// Parameters shared by every sequence of a batch.
struct Model {
  std::size_t labels = 0;        ///< C ≥ 1
  std::size_t max_duration = 0;  ///< K ≥ 1 (samples)
  /// C·C values Tr[c', c] at [c'·C + c], or K·C·C values Tr[k, c', c] at [((k−1)·C + c')·C + c].
  std::vector<double> transitions;
  std::vector<double> duration_bias;  ///< K·C values B[k, c] at [(k−1)·C + c]
  std::vector<double> initial;        ///< C values I[c], or empty (0)

  [[nodiscard]] bool duration_dependent() const noexcept {
    return transitions.size() == max_duration * labels * labels && max_duration > 1;
  }
  /// A model of C labels and K durations with every potential 0.
  static Model zeros(std::size_t labels, std::size_t max_duration);
};

/// An optional segment-level term G(b, s, t, c) added to ψ of every segment [s, t) of label c in
/// sequence b (sample indices within the sequence): any function of the whole segment, which is
/// what a semi-CRF allows beyond per-sample scores (Sarawagi & Cohen 2004), e.g. the marginal
/// likelihood of the segment's samples under an unknown level (segment_models.hpp). It must
/// return a finite value or −∞ (impossible). CPU only: the GPU path refuses a batch that has one.
/// Gradients are with respect to the other potentials (G has no parameters here).
class SegmentScore {
 public:
  virtual ~SegmentScore() = default;
  [[nodiscard]] virtual double score(std::size_t b, std::size_t start, std::size_t end, std::size_t c) const = 0;
};

/// B sequences, concatenated: sequence b occupies rows [offset(b), offset(b) + lengths[b]) of
/// the (Σ lengths) × C row-major arrays. Pointers are not owned.
struct Batch {
  const double* emissions = nullptr;            ///< f, Σ T_b × C
  std::vector<std::size_t> lengths;             ///< T_b
  const double* start_scores = nullptr;         ///< Ps, same shape, or nullptr
  const double* end_scores = nullptr;           ///< Pe, same shape, or nullptr
  const SegmentScore* segment_score = nullptr;  ///< G, added to ψ, or nullptr

  [[nodiscard]] std::size_t total_length() const noexcept;
  [[nodiscard]] std::vector<std::size_t> offsets() const;  ///< B + 1 row offsets
};

struct Options {
  Centring centring = Centring::none;
  Recurrence recurrence = Recurrence::automatic;  ///< general: also for C × C transitions
  std::size_t checkpoint_interval = 0;            ///< Δ; 0: ⌈√(T·K)⌉
  std::size_t memory_limit = 0;                   ///< bytes of working memory allowed; 0: unchecked
  /// CPU recurrences: called every 64 positions of a pass (forward, backward, Viterbi) with the
  /// fraction of that pass done, for progress and cancellation: it may throw to stop the call.
  /// Empty: none.
  std::function<void(double)> poll;
};

/// The working memory a call would need exceeds Options::memory_limit.
class MemoryError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// "no segmentation is allowed: every segmentation of sequence b (T samples) has a −∞ score
/// (...)": the message for log Z = −∞.
[[nodiscard]] std::string no_segmentation_message(std::size_t b, std::size_t length);

/// log Z of each sequence (−∞: no segmentation allowed).
[[nodiscard]] std::vector<double> log_partition(const Model& m, const Batch& x, const Options& o = {});

/// Posterior marginals and gradients of Σ_b log Z_b.
struct Posteriors {
  std::vector<double> log_z;             ///< B
  std::vector<double> label_marginals;   ///< Σ T_b × C: q(u, c)
  std::vector<double> boundaries;        ///< Σ T_b: b(s), probability that a segment starts at s
  std::vector<double> grad_emissions;    ///< Σ T_b × C: ∂ Σ log Z / ∂f
  std::vector<double> grad_transitions;  ///< the shape of Model::transitions
  std::vector<double> grad_duration;     ///< K × C
  std::vector<double> grad_initial;      ///< C
};
/// Sequences with log Z = −∞ get zero marginals and contribute nothing to the gradients.
[[nodiscard]] Posteriors posteriors(const Model& m, const Batch& x, const Options& o = {});

struct Segment {
  std::size_t start = 0, end = 0, label = 0;
  double score = 0.0;  ///< ψ of the segment (its emission, duration, transition/initial and boundary terms)
};
struct Path {
  double score = -std::numeric_limits<double>::infinity();  ///< Σ ψ; −∞: no segmentation allowed
  std::vector<Segment> segments;
};
/// The highest-scoring segmentation of each sequence.
[[nodiscard]] std::vector<Path> viterbi(const Model& m, const Batch& x, const Options& o = {});

/// Score Σ ψ of a given segmentation of sequence b (−∞ when it crosses an impossible score).
[[nodiscard]] double path_score(const Model& m, const Batch& x, std::size_t b, const std::vector<Segment>& segs,
                                const Options& o = {});

/// Oracles by enumeration of every segmentation (tiny T: throws std::invalid_argument past
/// 10⁶ segmentations): log Z, the best path, and the exact posteriors of log_partition.
struct BruteForce {
  double log_z = 0;
  Path best;
  std::vector<double> label_marginals;   ///< T × C
  std::vector<double> boundaries;        ///< T
  std::vector<double> grad_duration;     ///< K × C
  std::vector<double> grad_transitions;  ///< the shape of Model::transitions
};
[[nodiscard]] BruteForce brute_force(const Model& m, const Batch& x, std::size_t b, const Options& o = {});

/// Bytes of working memory posteriors() needs for one sequence of length T (Options applied).
[[nodiscard]] std::size_t working_bytes(const Model& m, std::size_t length, const Options& o);

}  // namespace gemflow::semicrf
