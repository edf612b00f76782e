#pragma once
// Geometry helpers of the structure viewer (no display, no VTK): element radii and colours,
// bond perception by distance, Kabsch superposition, ensemble superposition and RMSF.
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

/// A residue of a Structure: (chain, author residue number, insertion code).
struct ResidueId {
  std::string chain;
  int number = 0;
  std::string insertion;
  auto operator<=>(const ResidueId&) const = default;
};

/// An NMR ensemble superimposed for display, with its per-residue backbone RMSF.
struct EnsembleSuperposition {
  /// The models of the structure, every atom moved by its model's rigid fit: models[m][i] for
  /// atoms[i] (the input's shape). Empty when there is no backbone to fit on.
  std::vector<std::vector<Vec3>> models;
  /// Residues with backbone atoms (N, CA, C of non-hetero atoms), in order of first appearance.
  std::vector<ResidueId> residues;
  /// Å, one per entry of `residues`: sqrt of the mean over models and the residue's backbone
  /// atoms of |x − x̄|², x̄ the atom's mean position over the superposed models.
  std::vector<double> residue_rmsf;
  /// Å, one per atom: its residue's RMSF; NaN for atoms of residues without backbone atoms
  /// (hetero groups, waters).
  std::vector<double> atom_rmsf;
  /// Indices into `residues` of the core the final fit used (the well-defined part).
  std::vector<std::size_t> core;
  /// Å: mean over models of the backbone RMSD to the mean structure over the core.
  double rmsd_to_mean = 0.0;
  [[nodiscard]] bool empty() const { return residues.empty(); }
};
/// Superimposes the models of `s` for display and computes the backbone RMSF per residue.
/// Pass 1: every model is fitted (Kabsch) onto model 1 over all backbone atoms, giving a mean
/// structure and a first RMSF. Pass 2: the core is the residues whose RMSF is at most the median
/// (the ordered part of an NMR ensemble; all residues when that leaves fewer than 3 atoms);
/// every model is fitted onto the mean over the core backbone atoms and the mean recomputed,
/// `iterations` times (iterative superposition on the mean), then the final RMSF over all
/// residues. The RMSF is defined as distgeom.ensemble's `rmsf` table (per residue, over N, CA
/// and C and all models); the fitted set differs: the ensemble fits its restraint-defined
/// ordered residues, which a Structure does not carry. Fitting on the core keeps disordered
/// termini from tilting the ordered part. One model: RMSF 0. No backbone atoms: empty().
[[nodiscard]] EnsembleSuperposition superpose_ensemble(const Structure& s, int iterations = 3);

/// RMSF colour on a fixed absolute scale, so that ensembles compare by colour: blue at 0 Å,
/// white at 1 Å, red at 2 Å and above (linear between), RGB in [0, 1]; grey for NaN. The
/// ordered regions of NMR ensembles fluctuate below 1 Å (blue to white); disordered loops and
/// termini reach several Å (red).
[[nodiscard]] std::array<double, 3> rmsf_color(double rmsf);

/// Rainbow colour (blue → green → red) for t in [0, 1], RGB in [0, 1]: N- to C-terminus.
[[nodiscard]] std::array<double, 3> rainbow(double t);

}  // namespace gemflow::studio
