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

/// Which groups of equivalent atoms the analysis treats as equivalent.
enum class EquivalentSwap {
  None,  ///< every name as assigned
  /// Phe/Tyr ring flips: HD1 ≡ HD2, HE1 ≡ HE2 (and CD1 ≡ CD2, CE1 ≡ CE2) — always equivalent:
  /// a selection naming one of them is widened to both (r⁻⁶ sum).
  Rings,
  /// Rings, and the prochiral groups floated, for restraints whose stereospecific assignment
  /// is not known: Val/Leu methyls (CG1/HG1x ↔ CG2/HG2x, CD1/HD1x ↔ CD2/HD2x), methylene
  /// protons (HA2/HA3 of Gly, HB2/HB3, HG2/HG3, HD2/HD3, HE2/HE3), Asn/Gln NH2 (HD21/HD22,
  /// HE21/HE22), Arg NH1/NH2 with their protons.
  RingsAndProchiral
};

/// A group of equivalent atoms: the swap maps atoms[k] ↔ partners[k].
struct EquivalentGroup {
  std::string label;  ///< "A:50:PHE ring", "A:33:VAL methyls", "A:14:SER HB2/HB3"
  std::vector<std::size_t> atoms, partners;
};

/// The equivalent groups of `atoms` (whole groups only: each pair present in both halves).
[[nodiscard]] std::vector<EquivalentGroup> equivalent_groups(std::span<const AtomInfo> atoms, EquivalentSwap swap);

struct RestraintViolation {
  std::size_t index = 0;   ///< into the restraints given
  double distance = 0.0;   ///< Å, (Σ over all expanded pairs of d⁻⁶)^(−1/6) after the swaps
  double upper = 0.0;      ///< Å, upper + correction
  double violation = 0.0;  ///< Å, max(0, distance − upper, and for one pair lower − distance)
};

struct ViolationResult {
  std::vector<RestraintViolation> restraints;  ///< evaluated restraints, in input order
  std::vector<std::size_t> skipped;            ///< indices: an atom without coordinates, or no pair
  std::vector<std::string> swapped;            ///< labels of the prochiral groups swapped
  std::size_t ring_expanded = 0;               ///< ring atoms added to selections (Rings)
};

/// Violations of `restraints` by the model `xyz`. Distances are r⁻⁶ sums over every expanded
/// pair of every alternative, as distgeom.refine applies them. Equivalent atoms, as the field
/// treats them:
///  - ring flips (Rings and RingsAndProchiral): Phe/Tyr HD1/HD2 and HE1/HE2 exchange fast, so
///    a restraint to one of them is an NOE to both: the selection is widened to both and the
///    distance is the r⁻⁶ sum (no pseudo-atom correction is added: the file's bound is kept);
///  - prochiral groups (RingsAndProchiral only): floating stereospecific assignment (Folmer et
///    al., J. Biomol. NMR 9, 245 (1997); CYANA's swapping of diastereotopic pairs): each group
///    is swapped when that lowers the sum of the violations of the restraints naming its
///    atoms, group after group in atom order, until no swap helps (at most 20 sweeps;
///    deterministic). A swap thus applies to all restraints of the group at once.
[[nodiscard]] ViolationResult restraint_violations(std::span<const AtomInfo> atoms, std::span<const double> xyz,
                                                   std::span<const PairRestraint> restraints, EquivalentSwap swap);

}  // namespace gemflow::distgeom
