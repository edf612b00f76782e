#pragma once
// Geometry helpers of the structure viewer (no display, no VTK): element radii and colours,
// bond perception by distance, Kabsch superposition.
#include <array>
#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include <gemflow/types/structure.hpp>

namespace gemflow::studio {

/// Covalent radius (Å) of an element symbol (Cordero et al. 2008, Dalton Trans. 2832);
/// 0.76 (carbon) for unknown symbols.
[[nodiscard]] double covalent_radius(const std::string& element);
/// Jmol/CPK colour of an element, RGB in [0, 1]; pink for unknown symbols.
[[nodiscard]] std::array<double, 3> element_color(const std::string& element);

/// Bonds by distance: atoms i, j are bonded when 0.4 Å < d(i,j) <= r_i + r_j + tolerance
/// (covalent radii; the usual rule of Open Babel/Jmol). Grid hashing: O(n) for molecules.
/// Pairs are (i < j), sorted. `coords` has one row per atom.
[[nodiscard]] std::vector<std::array<std::size_t, 2>> perceive_bonds(const std::vector<Atom>& atoms,
                                                                     const std::vector<Vec3>& coords,
                                                                     double tolerance = 0.45);

/// Result of a least-squares superposition of `mobile` onto `target`.
struct Superposition {
  std::array<std::array<double, 3>, 3> rotation{};  ///< proper rotation (det +1)
  Vec3 translation{};                               ///< x' = R (x) + t
  double rmsd = 0.0;                                ///< Å, over the pairs used
  std::size_t pairs = 0;
  [[nodiscard]] Vec3 apply(const Vec3& x) const;
};
/// Kabsch (1976, Acta Cryst. A32:922) via SVD of the covariance, with the reflection fix.
/// `pairs[k] = {index in mobile, index in target}`. nullopt for fewer than 3 pairs.
[[nodiscard]] std::optional<Superposition> kabsch(const std::vector<Vec3>& mobile, const std::vector<Vec3>& target,
                                                  const std::vector<std::array<std::size_t, 2>>& pairs);
/// Atom pairs of two structures: by index when the atom lists are identical in size and
/// names, else by (chain, residue number, atom name).
[[nodiscard]] std::vector<std::array<std::size_t, 2>> match_atoms(const Structure& mobile, const Structure& target);

/// Backbone traces for drawing: the Cα atoms (name "CA", not hetero) of each chain in file
/// order, split where two consecutive Cα are more than `max_gap` Å apart (a chain break).
/// Traces of fewer than 2 atoms are dropped. Indices into `atoms`.
[[nodiscard]] std::vector<std::vector<std::size_t>> backbone_traces(const std::vector<Atom>& atoms,
                                                                    const std::vector<Vec3>& coords,
                                                                    double max_gap = 4.3);

/// Principal axes of a point cloud: centroid, unit axes by decreasing variance (a
/// right-handed frame) and the largest |projection| of a point on each axis (Å).
struct PrincipalAxes {
  Vec3 centre{};
  std::array<Vec3, 3> axis{};
  std::array<double, 3> half_extent{};
};
[[nodiscard]] PrincipalAxes principal_axes(const std::vector<Vec3>& coords);

/// Rainbow colour (blue → green → red) for t in [0, 1], RGB in [0, 1]: N- to C-terminus.
[[nodiscard]] std::array<double, 3> rainbow(double t);

}  // namespace gemflow::studio
