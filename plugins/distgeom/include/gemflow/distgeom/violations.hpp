#pragma once
// Restraint violations of a model, with equivalent atoms (ring flips, unassigned prochiral
// groups) swapped as structure-calculation programs do.
//
// Plain data in, plain data out: atoms are AtomInfo, coordinates row-major n×3 in Å (NaN rows
// for atoms the model lacks), restraints PairRestraint over the same atom indices.
#include <cstddef>
#include <span>
#include <string>
#include <vector>

#include "gemflow/distgeom/bounds.hpp"

namespace gemflow::distgeom {

/// Which groups of equivalent atoms the analysis may swap.
enum class EquivalentSwap {
  None,   ///< every name as assigned
  Rings,  ///< Phe/Tyr ring flips: (CD1, HD1, CE1, HE1) ↔ (CD2, HD2, CE2, HE2) — always equivalent
  /// Rings and the prochiral groups, for restraints whose stereospecific assignment is not
  /// known: Val/Leu methyls (CG1/HG1x ↔ CG2/HG2x, CD1/HD1x ↔ CD2/HD2x), methylene protons
  /// (HA2/HA3 of Gly, HB2/HB3, HG2/HG3, HD2/HD3, HE2/HE3), Asn/Gln NH2 (HD21/HD22,
  /// HE21/HE22), Arg NH1/NH2 with their protons.
  RingsAndProchiral
};

/// A group of equivalent atoms: the swap maps atoms[k] ↔ partners[k].
struct EquivalentGroup {
  std::string label;  ///< "A:50:PHE ring"
  std::vector<std::size_t> atoms, partners;
};

/// The equivalent groups of `atoms` (whole groups only: each pair present in both halves).
[[nodiscard]] std::vector<EquivalentGroup> equivalent_groups(std::span<const AtomInfo> atoms, EquivalentSwap swap);

struct RestraintViolation {
  std::size_t index = 0;  ///< into the restraints given
  double distance = 0.0;  ///< Å, (Σ over all expanded pairs of d⁻⁶)^(−1/6) after the swaps
  double upper = 0.0;     ///< Å, upper + correction
  double violation = 0.0; ///< Å, max(0, distance − upper, and for one pair lower − distance)
};

struct ViolationResult {
  std::vector<RestraintViolation> restraints;  ///< evaluated restraints, in input order
  std::vector<std::size_t> skipped;            ///< indices: an atom without coordinates, or no pair
  std::vector<std::string> swapped;            ///< labels of the groups swapped
};

/// Violations of `restraints` by the model `xyz`. Distances are r⁻⁶ sums over every expanded
/// pair of every alternative, as distgeom.refine applies them. Equivalent groups are then
/// assigned as in floating stereospecific assignment (Folmer et al., J. Biomol. NMR 9, 245
/// (1997); CYANA's swapping of diastereotopic pairs, Güntert, Prog. NMR Spectrosc. 43, 105
/// (2003)): each group is swapped when that lowers the sum of the violations of the restraints
/// naming its atoms, group after group, until no swap helps (at most 20 sweeps; deterministic,
/// groups in atom order). A ring proton named alone (HD1 where the ring flips) is thus measured
/// to the nearer of its two equivalent positions, consistently for all restraints of the ring.
[[nodiscard]] ViolationResult restraint_violations(std::span<const AtomInfo> atoms, std::span<const double> xyz,
                                                   std::span<const PairRestraint> restraints, EquivalentSwap swap);

}  // namespace gemflow::distgeom
