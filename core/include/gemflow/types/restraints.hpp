#pragma once
// Distance restraints (NOE and others), as read from NEF or Xplor-NIH .tbl files.
#include <array>
#include <cstddef>
#include <limits>
#include <string>
#include <vector>

#include "gemflow/types/structure.hpp"

namespace gemflow {

/// One atom selection of a restraint, as written in the file: chain/segment, residue number,
/// residue name and an atom name that may contain wildcards or pseudo-atom names.
struct AtomSelector {
  std::string chain;
  int residue_number = 0;
  std::string residue;  ///< may be empty when the file does not say
  std::string atom;     ///< as in the file, e.g. "HB%", "HG1#", "QB", "H*"
  int line = 0;         ///< line of this selection in the file (0 when unknown)
};

/// One distance restraint. Ambiguous restraints (several alternative atom pairs, from `or`
/// in .tbl or repeated ids in NEF) hold one entry per alternative in `pairs`; the distance
/// applies to the r^-6 sum (or the minimum) over all expanded atom pairs.
/// `atoms_a[k]`/`atoms_b[k]` are the Structure atom indices a selection expanded to
/// (empty when no structure was given to resolve against).
struct DistanceRestraint {
  int id = 0;          ///< restraint id from the file (NEF restraint_id, or running index)
  std::string origin;  ///< "file:line" of the restraint's first line
  struct Alternative {
    AtomSelector a, b;
    std::vector<std::size_t> atoms_a, atoms_b;
  };
  std::vector<Alternative> alternatives;
  double lower = 0.0;   ///< Å
  double upper = 0.0;   ///< Å
  double target = 0.0;  ///< Å (0 when not given)
  double weight = 1.0;
  /// Å to add to `upper` when the restraint is applied to pseudo-atoms (group centres) instead
  /// of the expanded atoms (Wüthrich, Billeter & Braun 1983); `upper` is the file's value.
  double pseudo_correction = 0.0;
};

/// One dihedral (torsion) restraint on four atoms, e.g. a backbone φ/ψ from TALOS or J couplings.
/// Angles are in degrees in [-180, 180); the allowed interval runs from `lower` counter-clockwise
/// to `upper` and wraps through ±180 when `upper < lower` (CYANA .aco, NEF and NMR-STAR give the
/// limits, Xplor-NIH's `assign ... k centre range exp` gives centre ± range). The energy is a
/// flat-bottom harmonic outside the interval (Xplor-NIH CDIH term).
struct DihedralRestraint {
  int id = 0;                         ///< restraint id from the file (or running index)
  std::string origin;                 ///< "file:line"
  std::string name;                   ///< "PHI", "PSI", "CHI1", ... when the file names it; empty otherwise
  std::array<AtomSelector, 4> atoms;  ///< as written in the file (or derived from `name`)
  /// Structure atom indices of the four selections; `unresolved` until resolved against a
  /// structure.
  std::array<std::size_t, 4> atom_index{unresolved, unresolved, unresolved, unresolved};
  double lower = -180.0;  ///< degrees
  double upper = 180.0;   ///< degrees
  double target = 0.0;    ///< degrees (centre of the interval when the file gives none)
  double weight = 1.0;    ///< relative force constant (Xplor-NIH's k, 1 when not given)
  static constexpr std::size_t unresolved = std::numeric_limits<std::size_t>::max();
};

/// A set of restraints plus the report of how they matched a structure.
struct RestraintSet {
  std::string source;  ///< file they were read from
  std::string format;  ///< "nef" or "xplor": the wildcard dialect of AtomSelector::atom
  std::vector<DistanceRestraint> restraints;
  /// Dihedral restraints (NEF dihedral lists, .aco, Xplor-NIH/CNS dihedral .tbl, NMR-STAR torsion
  /// loops); empty when the file has none.
  std::vector<DihedralRestraint> dihedrals;
  std::vector<std::string> warnings;  ///< mismatches found while resolving (counts, examples)
  /// Restraints read from the file but left out while resolving (on_unknown_atom: skip): they
  /// are not in `restraints`, and reports add them to the restraints they could not evaluate.
  std::size_t skipped = 0;
};

/// The one meaning of "ambiguous" in Gemflow's reports and logs: a restraint with more than one
/// assignment alternative (`or` in .tbl, rows sharing a NEF restraint_id). A restraint with one
/// alternative whose selections expand to several atom pairs (pseudo-atom, wildcard, group) is
/// a "group" restraint, not an ambiguous one.
inline bool is_ambiguous(const DistanceRestraint& r) { return r.alternatives.size() > 1; }
/// One alternative, resolved to more than one atom pair (see is_ambiguous).
inline bool is_group(const DistanceRestraint& r) {
  return r.alternatives.size() == 1 && r.alternatives[0].atoms_a.size() * r.alternatives[0].atoms_b.size() > 1;
}

}  // namespace gemflow
