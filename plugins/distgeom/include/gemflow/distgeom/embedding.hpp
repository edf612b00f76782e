#pragma once
// Embedding: from a (metrized) distance matrix to coordinates.
//
// Source: Crippen & Havel, "Distance Geometry and Molecular Conformation" (1988), ch. 6:
// the metric matrix about the centroid, G = X Xᵀ, and its rank-dim factorisation.
// All matrices are row-major; n×n distance and metric matrices, n×dim coordinates, Å.
#include <cstddef>
#include <span>
#include <string>
#include <vector>

#include "gemflow/linalg/cholesky.hpp"  // PivotedCholesky (embed_from_pivoted_cholesky)

namespace gemflow::distgeom {

/// Metric matrix about the centroid from distances d (n×n, Å, symmetric):
///   D_i0² = (1/n) Σ_j D_ij² − (1/n²) Σ_{j<k} D_jk²,   G_ij = (D_i0² + D_j0² − D_ij²) / 2   (Å²).
/// For distances of real points G = X Xᵀ with X centred. Writes g (n×n). O(n²).
/// Throws std::invalid_argument on size mismatch.
void metric_matrix(std::span<const double> d, std::size_t n, std::span<double> g);

enum class EmbedMethod {
  /// Pivoted Cholesky G ≈ L Lᵀ stopped at rank k = cholesky_rank (0 = dim; LAPACK dpstf2
  /// steps, O(n² k)), then the best rank-dim approximation of L Lᵀ from the k×k eigenproblem
  /// of LᵀL (X = L V_dim). k = dim is the classical embedding on dim pivot atoms: exact for a
  /// rank-dim G. For metrized (noisy, indefinite) G the Schur complement turns indefinite
  /// after a few pivots, and complete pivoting picks the least determined atoms (disordered
  /// termini); pivot_candidates from tight_atoms() fix the latter. Measured on 2KPU
  /// (docs/nmr-structure.md): 3.2-4.4 Å backbone after 4 trials with restricted pivots, against
  /// 4.5-6.5 Å single trials with unrestricted ones and ~3.1 Å with Eigen.
  Cholesky,
  Eigen  ///< the dim largest eigenpairs of G (Spectra, Lanczos), X = V Λ^{1/2}
};

struct EmbedResult {
  std::vector<double> coords;  ///< n×dim, row-major, Å, centred
  std::size_t dim = 0;
  /// The dim largest eigenvalues (Å²) of L Lᵀ (Cholesky) or of G (Eigen).
  std::vector<double> spectrum;
  /// The (dim+1)-th eigenvalue when computed (else the next Cholesky pivot or 0).
  /// Compared with spectrum[dim-1] it says how far G is from rank dim.
  double next = 0.0;
  /// Cholesky only: the columns of the pivoted factor (fewer than asked when a pivot ≤ 0 stopped
  /// it) and the pivot that stopped it or would have come next (Å²; 0 when rank = n).
  std::size_t rank = 0;
  double next_pivot = 0.0;
};

/// Coordinates X (n×dim) with G ≈ X Xᵀ. dim is 3 or 4 (4D embedding before refinement).
/// Cholesky: see EmbedMethod::Cholesky (rows returned to atom order). Eigen: best rank-dim
/// approximation in the Frobenius norm (Eckart–Young) restricted to non-negative eigenvalues.
/// `pivot_candidates` (Cholesky only; empty = every atom): n flags, pivots are chosen only
/// among the flagged atoms (linalg::pivoted_cholesky_restricted), e.g. from tight_atoms().
/// Throws std::runtime_error when fewer than dim positive pivots/eigenvalues exist (the
/// message says which and their values), std::invalid_argument on bad sizes.
[[nodiscard]] EmbedResult embed(std::span<const double> g, std::size_t n, std::size_t dim, EmbedMethod method,
                                std::size_t cholesky_rank = 0, std::span<const unsigned char> pivot_candidates = {});

/// Columns k of the pivoted Cholesky factor that embed() asks for: min(n, max(dim, cholesky_rank))
/// with cholesky_rank = 0 meaning dim. The GPU path (embedding_cuda.hpp) uses the same k.
[[nodiscard]] std::size_t embed_cholesky_columns(std::size_t n, std::size_t dim, std::size_t cholesky_rank) noexcept;

/// The second half of the Cholesky embedding, shared by embed() and the GPU path: from the
/// pivoted factor P ᵀ G P ≈ L Lᵀ (result `f`, L of n rows in pivot order, element (row, c) at
/// l[row · row_stride + c · col_stride] for c < f.rank; row-major n×n: (n, 1), column-major with
/// leading dimension ld: (1, ld)) to coordinates: the k×k eigenproblem LᵀL = V Σ Vᵀ (Eigen,
/// k = f.rank), X = L V_dim, rows returned to atom order, centred; spectrum and next as embed().
/// Throws std::runtime_error when f.rank < dim (embed()'s message), std::invalid_argument when
/// f.permutation is not of size n.
[[nodiscard]] EmbedResult embed_from_pivoted_cholesky(const linalg::PivotedCholesky& f, const double* l,
                                                      std::size_t row_stride, std::size_t col_stride, std::size_t n,
                                                      std::size_t dim);

/// Pivot candidates for the Cholesky embedding: the atoms whose (smoothed) bounds are tightest.
/// Score of atom i = mean over j of (U_ij − L_ij) (Å); the ceil(fraction · n) atoms with the
/// lowest score (at least min(n, 5), ties by index) get flag 1. Why: complete pivoting on G
/// picks the atoms farthest from the centroid, which after random metrization are the atoms
/// whose distances are least determined (disordered termini: wide bounds draw long distances),
/// and a rank-k Cholesky embedding places every atom from its k metrized distances to those
/// pivots. Restricting the pivots to well-determined atoms keeps the complete-pivoting rule
/// (largest Schur-complement diagonal, i.e. well spread) among atoms whose rows carry
/// information. fraction ≥ 1 flags every atom. Measured on 2KPU: docs/nmr-structure.md.
/// Throws std::invalid_argument on sizes or fraction ≤ 0.
[[nodiscard]] std::vector<unsigned char> tight_atoms(std::span<const double> lower, std::span<const double> upper,
                                                     std::size_t n, double fraction);

/// A tetrahedral centre for the chirality check: atom indices of the centre and three
/// neighbours, and the reference sign (+1 or −1) of chiral_volume(centre, a, b, c).
struct ChiralCheck {
  std::size_t centre = 0, a = 0, b = 0, c = 0;
  int sign = 1;
};

/// Counts how many centres of `coords` (n×dim, first three coordinates used) have the
/// reference handedness; when fewer than half do, mirrors the embedding (x → −x) and returns
/// true. `correct_after` receives the number of correct centres after the (possible) flip.
bool fix_chirality(std::span<double> coords, std::size_t dim, std::span<const ChiralCheck> centres,
                   std::size_t* correct_after = nullptr);

}  // namespace gemflow::distgeom
