#pragma once
// Triangle-inequality bound smoothing on the CPU: the tight triangle closure of a distance
// bounds matrix.
//
// Layout: `lower` and `upper` are full symmetric n×n row-major arrays (element (i, j) at
// [i * n + j]), Å, zero diagonal. Smoothing works in place.
//
// What is computed (Dress & Havel, "Shortest-path problems and molecular conformation",
// Discrete Appl. Math. 19 (1988) 129-144). Build the directed "doubled graph" on 2n vertices
// i (left copy) and i' (right copy): arcs i→j and i'→j' of weight U_ij, arcs i→j' of weight
// −L_ij, no arc from the right copy back to the left. Let D be its shortest-path distances.
// Then the smoothed bounds are
//     U'_ij = D(i, j)              (shortest path of upper bounds)
//     L'_ij = −D(i, j') = max_{a,b} (L_ab − U'_ai − U'_bj)
// i.e. the largest lower bound and smallest upper bound implied by the triangle inequality:
// the fixed point of U'_ij = min_k(U'_ik + U'_kj), L'_ij = max(L_ij, max_k(L'_ik − U'_kj),
// max_k(L'_jk − U'_ki)). A left→right path crosses exactly once, so the graph has no cycle
// through a negative arc: D exists for any non-negative input, consistent or not.
// The bounds are consistent iff L'_ij ≤ U'_ij for all pairs, iff no input L_ab exceeds the
// shortest upper-bound path from a to b.
//
// Per-k form (Crippen & Havel, "Distance Geometry and Molecular Conformation", 1988): for
// k = 0..n-1, with the row/column k values from before step k,
//     U_ij ← min(U_ij, U_ik + U_kj)
//     L_ij ← max(L_ij, L_kj − U_ik, l_ik − U_kj),   l_ik = max(L_ik, L_kk − U_ik).
// This is Floyd-Warshall on the doubled graph with the pivots k then k': pivot k contributes
// the path i→k→j' (U_ik − L_kj), pivot k' the paths i→k'→j' and i→k→k'→j' (l_ik). It is
// therefore exact for any input. For consistent bounds L_kk = 0, so l_ik = L_ik and the
// update is Crippen & Havel's with BOTH lower-bound candidates, L_ik − U_kj and L_jk − U_ki.
// RDKit's DistGeom::triangleSmoothBounds (rdkit Code/DistGeom/TriangleSmooth.cpp, used by
// Code/GraphMol/DistGeomHelpers/BoundsMatrixBuilder.cpp) visits only i < j, tries the second
// candidate only in an `else if` when the first did not raise L_ij, and returns false at the
// first L > U it meets, leaving a partly smoothed matrix. The `else if` loses nothing while the
// pairs (i,k), (k,j) are consistent: both candidates > L_ij ≥ 0 would need
// L_ik > U_kj ≥ L_kj = L_jk > U_ik ≥ L_ik. So on consistent bounds RDKit also reaches the
// closure (up to rounding; bench/smoothing_cpu.cpp counts the differences), and we differ on
// inconsistent ones: we always finish the closure and explain the contradiction.
//
// Floating point: every value is a sum of input bounds (no multiplications), so with inputs
// whose sums are exact (e.g. multiples of 2^-10 below 2^20 in fp64) every algorithm here
// returns the exact closure bit for bit. Otherwise the result of a path sum of m terms is
// within m·u·Σ|terms| of it (u = unit roundoff), and the blocked and reference results agree
// to that bound.
#include <cstddef>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <vector>

namespace gemflow::distgeom {

/// Default tolerance of the L' > U' check, Å. Above fp32 rounding of path sums for
/// molecules up to a few hundred Å; far below any physically meaningful bound.
inline constexpr double kDefaultSmoothingTolerance = 1e-4;

/// Progress and cancellation: called with the completed fraction in [0, 1]; return true to
/// cancel. Always called from the thread that called the smoothing function.
using CancelFn = std::function<bool(double fraction)>;

/// Options of smooth_bounds().
struct SmoothingOptions {
  /// Tile edge (atoms): 0 = automatic (64), else a multiple of 32 up to 1024 (the widest SIMD
  /// column strip); std::invalid_argument otherwise. Any n works: the tiled copy is padded
  /// with unconnected atoms (U = +inf, L = 0).
  std::size_t tile = 0;
  /// Worker threads including the caller: 0 = std::thread::hardware_concurrency().
  unsigned threads = 0;
  /// Å: a pair is inconsistent when L'_ij > U'_ij + tolerance; input with L > U + tolerance
  /// is rejected. Must be ≥ 0.
  double tolerance = kDefaultSmoothingTolerance;
  /// Progress / cancel callback: called with 0 once the O(n²) input checks and copy are done,
  /// then after every block step and about every 20 ms of work (cancellation takes effect
  /// within one tile: well under a millisecond at tile 64), and with 1 at the end.
  CancelFn progress;
};

/// A defect of input bounds found by check_bounds().
struct BoundsDefect {
  enum class Kind {
    Size,             ///< lower.size() or upper.size() != n*n
    NotANumber,       ///< L_ij or U_ij is NaN
    Negative,         ///< L_ij < 0 or U_ij < 0
    InfiniteLower,    ///< L_ij is infinite (U_ij = +inf is allowed: "no upper bound")
    NonzeroDiagonal,  ///< L_ii or U_ii != 0
    NotSymmetric,     ///< L_ij != L_ji or U_ij != U_ji
    LowerAboveUpper,  ///< L_ij > U_ij + tolerance
  };
  Kind kind = Kind::Size;
  std::size_t i = 0, j = 0;           ///< the first offending pair in row-major order
  double lower = 0, upper = 0;        ///< L_ij, U_ij
  double lower_ji = 0, upper_ji = 0;  ///< L_ji, U_ji (for NotSymmetric)
  /// "bounds (3, 7): lower 2.5 Å > upper 1.5 Å" and the like, with 0-based indices.
  [[nodiscard]] std::string message() const;
};

/// Checks the input contract above (sizes first, then per pair in row-major order: NaN,
/// negative, infinite lower, diagonal, symmetry, L > U + tolerance). nullopt when valid.
[[nodiscard]] std::optional<BoundsDefect> check_bounds(std::span<const double> lower, std::span<const double> upper,
                                                       std::size_t n, double tolerance = kDefaultSmoothingTolerance);
[[nodiscard]] std::optional<BoundsDefect> check_bounds(std::span<const float> lower, std::span<const float> upper,
                                                       std::size_t n, double tolerance = kDefaultSmoothingTolerance);

/// Why a pair is inconsistent: an input lower bound L_ab that exceeds the sum of input upper
/// bounds along a chain of atoms a → … → i → … → j → … → b. The chain is the shortest path
/// from i to j' in the doubled graph (i ⇝ a, arc a→b', b' ⇝ j') together with the shortest
/// upper-bound path i ⇝ j, so excess() = L'_ij − U'_ij of the exact closure.
struct InconsistencyPath {
  std::size_t i = 0, j = 0;          ///< the pair explained
  std::vector<std::size_t> atoms;    ///< a = atoms.front(), …, i, …, j, …, b = atoms.back()
  std::vector<double> upper;         ///< upper[s] = U_in(atoms[s], atoms[s+1]), Å
  double lower = 0;                  ///< L_in(a, b), Å
  double upper_sum = 0;              ///< Σ upper, summed in fp64, Å
  std::size_t pos_i = 0, pos_j = 0;  ///< atoms[pos_i] == i, atoms[pos_j] == j
  [[nodiscard]] std::size_t a() const { return atoms.front(); }
  [[nodiscard]] std::size_t b() const { return atoms.back(); }
  /// L_ab − Σ U along the chain (Å): > 0 proves the input bounds contradictory.
  [[nodiscard]] double excess() const { return lower - upper_sum; }
};

/// Explains the pair (i, j) from the ORIGINAL (unsmoothed, valid) input bounds: two dense
/// O(n²) Dijkstra searches of the upper-bound graph (from i and from j, predecessors kept,
/// lowest index on ties) and an O(n²) scan for the arc a→b' that realises D(i, j'). Exact
/// for any pair; excess() ≤ 0 means the pair is not inconsistent. fp64 internally.
/// Throws std::invalid_argument on sizes or i, j ≥ n.
[[nodiscard]] InconsistencyPath explain_inconsistency(std::span<const double> lower_in,
                                                      std::span<const double> upper_in, std::size_t n, std::size_t i,
                                                      std::size_t j);
[[nodiscard]] InconsistencyPath explain_inconsistency(std::span<const float> lower_in, std::span<const float> upper_in,
                                                      std::size_t n, std::size_t i, std::size_t j);

/// Outcome of a smoothing run.
struct SmoothingReport {
  bool consistent = true;  ///< no pair with L'_ij > U'_ij + tolerance
  bool cancelled = false;  ///< stopped by the callback: the arrays are left untouched
  /// When !consistent: the first pair i < j in row-major order with L'_ij > U'_ij + tolerance
  /// and its smoothed values (Å). (L'_ii > 0 on the diagonal always comes with such a pair:
  /// L'_ii = L_ab − U'_ai − U'_bi > 0 gives L'_ab ≥ L_ab > U'_ab.)
  std::size_t i = 0, j = 0;
  double lower = 0, upper = 0;
  std::size_t inconsistent_pairs = 0;     ///< unordered pairs i < j with L'_ij > U'_ij + tol
  std::optional<InconsistencyPath> path;  ///< explain_inconsistency(input, i, j)
  std::size_t changed_pairs = 0;          ///< unordered pairs i < j whose L or U changed
};

/// Reference smoothing: the per-k form above, O(n³), rows of step k snapshot before the step,
/// accumulated in fp64 (float input is widened, smoothed in fp64 and rounded once). Single
/// threaded. `cancel` is called once per k. Throws std::invalid_argument (message from
/// BoundsDefect) on invalid input; on success the arrays hold the closure (also when
/// inconsistent: the report says so).
SmoothingReport smooth_bounds_reference(std::span<double> lower, std::span<double> upper, std::size_t n,
                                        const CancelFn& cancel = {}, double tolerance = kDefaultSmoothingTolerance);
SmoothingReport smooth_bounds_reference(std::span<float> lower, std::span<float> upper, std::size_t n,
                                        const CancelFn& cancel = {}, double tolerance = kDefaultSmoothingTolerance);

/// Fast smoothing: blocked Floyd-Warshall on the doubled graph (Venkataraman, Sahni &
/// Mukhopadhyaya, "A blocked all-pairs shortest-paths algorithm", J. Exp. Algorithmics 8,
/// 2003). For each block K of `tile` atoms (pivots k, k' for k in K): (1) the diagonal tile,
/// (2) the tiles of block row and column K, (3) all other tiles, in parallel over tiles on
/// `threads` std::threads; U and L of a tile are updated together so the lower-bound update
/// sees the same pivot values as the upper. Every state is symmetric, so only tiles (I, J)
/// with I ≤ J are computed and (J, I) is stored as their transpose. Phase 3 is a min-plus
/// product with register-blocked, branch-free SIMD inner loops (GCC/Clang vector
/// extensions; x86-64-v4 / v3 / baseline versions chosen at run time).
/// Computes in T (fp32 input stays fp32). Same errors and result as the reference up to
/// rounding (bit-identical on exactly representable sums). Deterministic: the result does not
/// depend on `threads` (the result is exactly symmetric; the reference's may differ from
/// symmetry by rounding on inconsistent bounds). Extra memory: two padded tile-major copies
/// (2·n² elements). On cancellation the arrays are left untouched. Throws
/// std::invalid_argument on invalid input, tile or tolerance; rethrows what `progress` throws.
SmoothingReport smooth_bounds(std::span<double> lower, std::span<double> upper, std::size_t n,
                              const SmoothingOptions& options = {});
SmoothingReport smooth_bounds(std::span<float> lower, std::span<float> upper, std::size_t n,
                              const SmoothingOptions& options = {});

/// The SIMD kernels smooth_bounds() runs on this CPU: "x86-64-v4", "x86-64-v3" or "baseline".
[[nodiscard]] const char* smoothing_simd_target();

/// Oracle for tests (small n): Floyd-Warshall on the explicit 2n-vertex doubled graph, fp64,
/// O(8 n³). Writes U' and L' into the arrays; no validation beyond sizes.
void smooth_bounds_doubled_graph_oracle(std::span<double> lower, std::span<double> upper, std::size_t n);

}  // namespace gemflow::distgeom
