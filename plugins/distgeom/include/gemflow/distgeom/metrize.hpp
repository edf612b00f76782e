#pragma once
// Metrization: drawing a distance matrix inside smoothed bounds.
//
// Source: Havel, Kuntz & Crippen, Bull. Math. Biol. 45 (1983) 665 (random metrization);
// Havel, Biopolymers 29 (1990) 1565 (partial metrization). Full metrization re-smooths after
// every one of the n(n−1)/2 picks, O(n⁵) overall; this module offers two cheaper variants.
#include <cstddef>
#include <cstdint>
#include <functional>
#include <span>
#include <vector>

namespace gemflow::distgeom {

enum class MetrizeMethod {
  /// Every pair uniform in [L, U] of the (already smoothed) bounds, independently. O(n²).
  /// The result generally violates triangle inequalities; the embedding and refinement cope.
  None,
  /// `atoms` atoms in random order: each one's n−1 distances are drawn one at a time in random
  /// order, each pick tightening the bounds of the triangles through that atom (O(n) per
  /// pick), then the whole matrix is re-smoothed with the caller's smoother (O(n³) per atom);
  /// the remaining pairs are then drawn as for None. Cost O(atoms · n³) + O(n²).
  Partial
};

struct MetrizeOptions {
  MetrizeMethod method = MetrizeMethod::None;
  std::size_t atoms = 4;   ///< Partial: how many atoms' distances are fixed (clamped to n)
  std::uint64_t seed = 1;  ///< same seed → same matrix on every platform (own uniform draw)
};

/// Re-smooths full symmetric n×n lower/upper arrays in place (triangle inequality closure);
/// throws when they are inconsistent. The distgeom nodes pass smooth_bounds.
using Resmoother = std::function<void(std::span<double> lower, std::span<double> upper, std::size_t n)>;
/// Progress in [0, 1]; returns false to cancel (metrize then throws std::runtime_error("cancelled")).
using Progress = std::function<bool(double fraction)>;

/// Distances (n×n, row-major, symmetric, zero diagonal, Å) with L_ij ≤ d_ij ≤ U_ij.
/// `lower`/`upper` are full symmetric n×n arrays of smoothed bounds. Partial needs `resmooth`
/// (std::invalid_argument when empty). Draws use mt19937_64 and 53-bit fractions.
[[nodiscard]] std::vector<double> metrize(std::span<const double> lower, std::span<const double> upper, std::size_t n,
                                          const MetrizeOptions& options, const Resmoother& resmooth = {},
                                          const Progress& progress = {});

}  // namespace gemflow::distgeom
