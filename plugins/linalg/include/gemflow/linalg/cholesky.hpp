#pragma once
// Cholesky factorisations of dense symmetric matrices on the CPU (LAPACK through LAPACKE).
//
// Layout: every matrix is n×n, row-major, element (i, j) at a[i * n + j]. Only the lower
// triangle of the input is read. On return the lower triangle holds L and the strict upper
// triangle is set to zero, so the buffer *is* the row-major factor.
//
// Row-major lower L is column-major upper U = Lᵀ, so the routines call LAPACK's column-major
// 'U' variants on the caller's buffer directly (no transposed copy).
//
// Sources: LAPACK dpotrf/spotrf (Cholesky, blocked right-looking) and dpstrf (Cholesky with
// complete pivoting of a positive semidefinite matrix; Higham, "Analysis of the Cholesky
// decomposition of a semi-definite matrix", 1990; Lucas, LAPACK Working Note 161, 2004).
#include <cstddef>
#include <functional>
#include <span>
#include <vector>

namespace gemflow::linalg {

/// A = L Lᵀ in place (see the file comment for the layout).
/// Returns 0 on success, or k ≥ 1 when the leading minor of order k is not positive definite
/// (LAPACK's INFO): the factorisation stopped there and `a` holds a partial result.
/// Throws std::invalid_argument when a.size() != n*n.
[[nodiscard]] int cholesky(std::span<double> a, std::size_t n);
[[nodiscard]] int cholesky(std::span<float> a, std::size_t n);

/// Progress and cancellation of a long factorisation: called with the fraction of the flops
/// done (0 < f ≤ 1) every ~2·10⁹ flops or less; returning false stops it. It may also throw
/// (a node's throw_if_cancelled): the exception leaves the factorisation, `a` partly factored.
using FlopCallback = std::function<bool(double)>;
/// What the cancellable overloads return when the callback stopped them.
inline constexpr int kCholeskyStopped = -1;

/// cholesky(a, n) as a right-looking blocked factorisation over LAPACK and BLAS: dpotrf
/// (spotrf) on each `block`-wide diagonal block, TRSM on the rows below it, and the trailing
/// SYRK/GEMM update in column strips of at most ~2·10⁹ flops, with `on_flops` called after each
/// piece. The factor equals cholesky(a, n)'s up to rounding; unlike one dpotrf call, a large
/// factorisation can be stopped within a fraction of a second. Returns INFO (as above) or
/// kCholeskyStopped. Source: LAPACK dpotrf (the same algorithm, with the callback between steps).
[[nodiscard]] int cholesky(std::span<double> a, std::size_t n, const FlopCallback& on_flops, std::size_t block = 256);
[[nodiscard]] int cholesky(std::span<float> a, std::size_t n, const FlopCallback& on_flops, std::size_t block = 256);

/// Result of a pivoted Cholesky factorisation P ᵀ A P = L Lᵀ of a positive semidefinite A.
struct PivotedCholesky {
  /// Number of computed columns of L (numerical rank, capped by the requested rank limit).
  std::size_t rank = 0;
  /// permutation[k] = the original row/column of A chosen as the k-th pivot (0-based):
  /// (P ᵀ A P)(k, l) = A(permutation[k], permutation[l]).
  std::vector<std::size_t> permutation;
  /// True when the factorisation stopped before n columns because the largest remaining
  /// diagonal of the Schur complement fell to or below the tolerance (LAPACK INFO = 1).
  /// Stopping at the requested rank limit is not deficiency.
  bool rank_deficient = false;
  /// When rank < n: the largest remaining Schur-complement diagonal at the stop, i.e. the
  /// pivot that was refused (≤ tolerance when rank_deficient; the (rank+1)-th pivot otherwise).
  /// 0 when rank == n.
  double next_pivot = 0.0;
  /// The tolerance actually used (LAPACK's default when a negative one was asked for).
  double tolerance = 0.0;
};

/// Pivoted Cholesky (complete diagonal pivoting) of a symmetric positive semidefinite matrix,
/// in place: on return columns 0..rank-1 of the row-major buffer hold L (n × rank, lower
/// trapezoidal, rows in pivot order), every other entry is zero.
///
/// `max_rank` = 0 asks for the full numerical rank and calls LAPACK dpstrf (blocked, O(n³)).
/// 0 < max_rank < n stops after max_rank pivots: an O(n² · max_rank) outer-product loop that
/// performs exactly the steps of LAPACK's unblocked dpstf2 (largest remaining diagonal first,
/// lowest index on ties), used because the embedding needs only 3 or 4 columns of large n.
/// `tolerance` < 0 selects LAPACK's default n · ε · max(diag A); pivots ≤ tolerance stop the
/// factorisation, the first one too (dpstf2 tests its first pivot against 0 only: here, as on the
/// GPU and with a rank limit, max(diag A) ≤ tolerance gives rank 0). A symmetric indefinite
/// matrix is factored until its largest remaining diagonal is ≤ tolerance (the negative part is
/// then reported through next_pivot).
/// Throws std::invalid_argument when a.size() != n*n; std::runtime_error on LAPACK errors.
[[nodiscard]] PivotedCholesky pivoted_cholesky(std::span<double> a, std::size_t n, std::size_t max_rank = 0,
                                               double tolerance = -1.0);

/// Pivoted Cholesky with the pivots restricted to the rows i with candidates[i] != 0
/// (original indices; candidates.size() == n): at each step the candidate with the largest
/// remaining Schur-complement diagonal (lowest index on ties) is the pivot; every row is still
/// eliminated, so L (n × rank) gives the Nyström approximation A ≈ C W⁻¹ Cᵀ on the chosen
/// columns C (Williams & Seeger 2001; Harbrecht, Peters & Schneider, Appl. Numer. Math. 62
/// (2012) 428 for pivoted Cholesky as low-rank approximation). Same layout and result fields
/// as above; the pivots come first in `permutation`, the non-candidates after them.
/// Stops after max_rank pivots (0 = as many as there are candidates), or when the largest
/// candidate diagonal is ≤ tolerance (rank_deficient; next_pivot = that diagonal; −∞ when no
/// candidate is left). `tolerance` < 0: n · ε · max(diag A). Always the O(n² · rank) dpstf2-style
/// loop (no LAPACK call); with every row a candidate it equals the unrestricted partial path.
/// Throws std::invalid_argument when a.size() != n*n or candidates.size() != n.
[[nodiscard]] PivotedCholesky pivoted_cholesky_restricted(std::span<double> a, std::size_t n,
                                                          std::span<const unsigned char> candidates,
                                                          std::size_t max_rank = 0, double tolerance = -1.0);

}  // namespace gemflow::linalg
