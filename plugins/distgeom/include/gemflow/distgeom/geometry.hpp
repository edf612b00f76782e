#pragma once
// Small geometric kernels of distance geometry: superposition, RMSD, chiral volumes.
// Coordinates are row-major n×dim arrays in Å (x[i * dim + k]).
#include <array>
#include <cstddef>
#include <span>

namespace gemflow::distgeom {

/// Result of a least-squares rigid superposition of `mobile` onto `target`.
struct Superposition {
  double rmsd = 0.0;                      ///< Å, after the optimal rotation + translation
  std::array<double, 9> rotation{};       ///< row-major R, applied as y = R (x − c_mobile) + c_target
  std::array<double, 3> centre_mobile{};  ///< centroid of the mobile points, Å
  std::array<double, 3> centre_target{};  ///< centroid of the target points, Å
};

/// Kabsch superposition of two point sets of n 3D points (row-major n×3, Å): the proper
/// rotation (det R = +1, reflection excluded) and translation that minimise the RMSD.
/// Source: Kabsch, Acta Cryst. A32 (1976) 922 and A34 (1978) 827; SVD form with the sign
/// correction of the smallest singular value. Throws std::invalid_argument when the sizes
/// differ, are not a multiple of 3 or n == 0.
[[nodiscard]] Superposition kabsch(std::span<const double> mobile, std::span<const double> target);

/// RMSD after optimal superposition (kabsch(...).rmsd).
[[nodiscard]] double superposed_rmsd(std::span<const double> mobile, std::span<const double> target);

/// Applies a superposition to row-major n×3 points in place.
void apply(const Superposition& s, std::span<double> points);

/// Signed chiral volume (a − c)·((b − c) × (d − c)) of centre c and neighbours a, b, d (Å³).
/// Six times the signed tetrahedron volume; its sign is the handedness of the centre (only the
/// sign relative to a reference is meaningful). Crippen & Havel 1988, chirality constraints.
[[nodiscard]] double chiral_volume(const double* c, const double* a, const double* b, const double* d);

}  // namespace gemflow::distgeom
