#pragma once
// Basic distance bounds of a small molecule from one 3D conformer and its bonds, and batched
// triangle smoothing of many such matrices (CPU in parallel over molecules, or CUDA in one
// batched launch). Plain data in and out (no Gemflow types).
//
// The bounds are the basic (ETKDG-free) bounds of RDKit's distance-geometry embedder
// (rdkit Code/GraphMol/DistGeomHelpers/BoundsMatrixBuilder.cpp: setTopolBounds with
// DIST12_DELTA = 0.01 Å, DIST13_TOL = 0.04 Å, VDW_SCALE_15 = 0.7, MAX_UPPER = 1000 Å), with
// the ideal UFF bond lengths and angles replaced by those of the given conformer:
//  - 1-2 (bonded) pairs: d ± tolerance_12, d the 3D bond length;
//  - 1-3 pairs (both bonded to a common atom, not bonded to each other): d ± tolerance_13,
//    d = √(a² + b² − 2ab cos θ) from the two 3D bond lengths a, b and the 3D angle θ at the
//    common atom, i.e. the 3D distance of the pair;
//  - every other pair: lower = vdw_scale × (r_vdw(i) + r_vdw(j)) (Bondi radii, vdw_radius()
//    of bounds.hpp), upper = max_upper (the molecule-diameter ceiling; smoothing tightens it
//    to the shortest chain of bond and 1-3 upper bounds for connected atoms).
// Unlike RDKit, 1-4 pairs get the vdW floor too (RDKit bounds them by cis/trans torsion
// distances), and there are no 1-5 or ring-specific rules. Bounds that the conformer itself
// violates (a 1-4+ pair closer than the vdW floor) make the set inconsistent; smoothing then
// names the pair.
#include <array>
#include <cstddef>
#include <span>
#include <string>
#include <vector>

#include "gemflow/distgeom/smoothing.hpp"

namespace gemflow::distgeom {

struct MoleculeBoundsOptions {
  double tolerance_12 = 0.01;  ///< Å, ± around 3D bond lengths (RDKit DIST12_DELTA)
  double tolerance_13 = 0.04;  ///< Å, ± around 1-3 distances (RDKit DIST13_TOL)
  double vdw_scale = 0.7;      ///< lower bound of other pairs = scale × vdW radii sum (VDW_SCALE_15)
  double max_upper = 1000.0;   ///< Å, upper bound of other pairs (RDKit MAX_UPPER)
};

/// Bounds of one molecule: n×n row-major lower/upper (Å), symmetric, zero diagonal.
struct MoleculeBounds {
  std::size_t n = 0;
  std::vector<double> lower, upper;
  std::size_t pairs_12 = 0, pairs_13 = 0;  ///< unordered pairs set by each rule
};

/// `elements` upper case ("C", "CL"); `xyz` n×3 row-major, Å; `bonds` 0-based atom pairs.
/// Throws std::invalid_argument on sizes, a bond index ≥ n, a bond of an atom to itself,
/// negative tolerances or scale, or max_upper below a vdW floor.
[[nodiscard]] MoleculeBounds molecule_bounds(std::span<const std::string> elements, std::span<const double> xyz,
                                             std::span<const std::array<std::size_t, 2>> bonds,
                                             const MoleculeBoundsOptions& options = {});

/// One matrix of a batch (host memory, n×n each, smoothed in place).
struct BatchMatrix {
  std::span<double> lower, upper;
  std::size_t n = 0;
};

struct BatchSmoothingOptions {
  bool cuda = false;                              ///< run on a CUDA device (needs GEMFLOW_DISTGEOM_HAVE_CUDA)
  int device = 0;                                 ///< CUDA ordinal
  bool fp32 = false;                              ///< arithmetic precision (fp64 otherwise)
  double tolerance = kDefaultSmoothingTolerance;  ///< Å, the L' > U' + tolerance check
  unsigned threads = 0;                           ///< CPU: worker threads over molecules, 0 = hardware_concurrency()
  /// Progress / cancellation: called with the completed fraction (by molecules) from the
  /// calling thread; return true to cancel.
  CancelFn progress;
};

struct BatchSmoothingResult {
  std::vector<SmoothingReport> reports;  ///< one per matrix, as smooth_bounds() reports it
  bool cancelled = false;                ///< stopped early: some matrices may be smoothed, others not
  std::size_t batched = 0;               ///< CUDA: matrices smoothed in the one batched launch
  std::size_t padded_n = 0;              ///< CUDA: the common size they were padded to
  std::size_t one_by_one = 0;            ///< CUDA: matrices with n > 256 smoothed one at a time
};

/// Triangle smoothing (smoothing.hpp) of every matrix, each exactly as its own smoothing run.
///  - CPU: smooth_bounds() per matrix with one thread, matrices spread over `threads` workers
///    (deterministic: the result of a matrix does not depend on threads or order).
///  - CUDA: every matrix with 1 ≤ n ≤ 256 is padded to the largest such
///    n with unconnected atoms (L = 0, U = +∞, which adds no path, so the closure of the real
///    atoms is unchanged) and all are smoothed in ONE batched launch
///    (cuda::smooth_bounds_batched_cuda); larger matrices go through cuda::smooth_bounds_cuda
///    one by one. Padding costs O(N³) per matrix for the largest N: a batch mixing n = 10 and
///    n = 250 pays 250³ for each. fp64 results: padded n ≤ 64 equal smooth_bounds_reference()
///    bit for bit on consistent bounds (the per-block kernel's pivot order); above, the blocked
///    batched closure (cuda::BatchedMethod) is within 6·n·2⁻⁵³·max(U) of it; fp32 to rounding.
/// Reports: consistency, the first inconsistent pair, the pair count and changed_pairs as the
/// CPU path; for an inconsistent matrix `path` explains it (explain_inconsistency() of the
/// input). Inputs must be valid (check_bounds()): std::invalid_argument otherwise (CPU), or
/// cuda::InvalidBounds / cuda::CudaError on the device; std::runtime_error when cuda is asked
/// for but not built.
[[nodiscard]] BatchSmoothingResult smooth_bounds_batch(std::span<const BatchMatrix> matrices,
                                                       const BatchSmoothingOptions& options = {});

}  // namespace gemflow::distgeom
