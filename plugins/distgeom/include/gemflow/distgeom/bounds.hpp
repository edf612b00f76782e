#pragma once
// Distance bounds for distance geometry: covalent geometry perceived from a reference model,
// NMR distance restraints, van der Waals floors and a molecule-diameter ceiling.
//
// Plain data in, plain data out (no Gemflow types): atoms are AtomInfo, coordinates row-major
// n×3 in Å, bounds n×n row-major in Å.
#include <array>
#include <cstddef>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace gemflow::distgeom {

/// What the algorithms need to know of an atom.
struct AtomInfo {
  std::string element;  ///< upper case ("C", "H", "SE")
  std::string name;     ///< PDB name ("CA", "HB2")
  std::string residue;  ///< residue name ("ALA")
  std::string chain;
  int residue_number = 0;
};

/// Covalent radius (Å) of an element; Cordero et al., Dalton Trans. (2008) 2832, Table 2
/// (C sp3). Unknown elements get 0.77 Å.
[[nodiscard]] double covalent_radius(const std::string& element);
/// Van der Waals radius (Å) of an element; Bondi, J. Phys. Chem. 68 (1964) 441 (H 1.20 as in
/// Bondi; unknown elements 1.70 Å).
[[nodiscard]] double vdw_radius(const std::string& element);
/// The radius lookups ignore case ("Ca", "CA": calcium; the readers give elements in capitals,
/// as PDB does).
/// Whether both radius tables above hold `element` (false: the defaults, carbon's, are used).
[[nodiscard]] bool has_tabulated_radii(const std::string& element);
/// An element symbol as chemists write it, for labels and messages: "CA" → "Ca", "c" → "C".
[[nodiscard]] std::string element_symbol(std::string_view element);
/// The elements of `elements` without tabulated radii, sorted and unique (for a warning).
[[nodiscard]] std::vector<std::string> untabulated_elements(std::span<const std::string> elements);

/// Covalent structure perceived from one model.
struct Topology {
  std::vector<std::array<std::size_t, 2>> bonds;     ///< i < j
  std::vector<std::vector<std::size_t>> neighbours;  ///< bonded atoms of each atom
  /// Peptide planes: for each peptide bond C(i)–N(i+1), the atoms whose mutual distances the
  /// planar trans/cis amide fixes: C, N, their bonded atoms (CA(i), O(i), CA(i+1), H(i+1) or
  /// CD(i+1) for proline).
  std::vector<std::vector<std::size_t>> planes;
  /// Tetrahedral centres (atoms with exactly 4 bonded atoms) and planar sp2 centres (3 bonded
  /// atoms): centre + first three neighbours (ascending index).
  std::vector<std::array<std::size_t, 4>> centres;
};

/// Bonds by distance: i–j bonded when 0.4 Å < d < r_cov(i) + r_cov(j) + tolerance; a hydrogen
/// keeps only its nearest partner. O(n) with a cell grid. Source: the usual distance criterion
/// (e.g. Open Babel's ConnectTheDots, which uses 0.45 Å).
[[nodiscard]] Topology perceive_topology(std::span<const AtomInfo> atoms, std::span<const double> xyz,
                                         double bond_tolerance = 0.45);

/// Topology from known bonds (e.g. distgeom.topology's) instead of perceiving them by distance:
/// neighbours, peptide planes and centres as perceive_topology. Duplicate bonds are merged;
/// an index ≥ atoms.size() or a bond of an atom to itself throws std::invalid_argument.
[[nodiscard]] Topology topology_from_bonds(std::span<const AtomInfo> atoms,
                                           std::span<const std::array<std::size_t, 2>> bonds);

/// One restraint over atom indices: `alternatives` of (side A atoms, side B atoms); a side may
/// hold several atoms (pseudo-atom / wildcard expansion). Distances in Å.
struct PairRestraint {
  int id = 0;
  std::vector<std::pair<std::vector<std::size_t>, std::vector<std::size_t>>> alternatives;
  double lower = 0.0, upper = 0.0, correction = 0.0;
};

/// Hydrogens kept in the bounds.
enum class HydrogenPolicy {
  All,         ///< every hydrogen of the model
  Restrained,  ///< only hydrogens named by a restraint (and polar H of the backbone, "H")
  None         ///< heavy atoms only; restraints on hydrogens are then skipped (counted)
};

struct BoundsOptions {
  double bond_tolerance = 0.45;   ///< Å, bond perception (see perceive_topology)
  double tolerance_12 = 0.01;     ///< Å, ± around model distances of bonded pairs
  double tolerance_13 = 0.02;     ///< Å, ± around model distances of pairs bonded to a common atom
  double tolerance_plane = 0.05;  ///< Å, ± around model distances within a peptide plane
  double vdw_scale = 0.8;         ///< lower bound = scale × (r_vdw(i) + r_vdw(j)) for other pairs
  double vdw_scale_14 = 0.7;      ///< the same for pairs three bonds apart (torsion-dependent)
  /// Å, floor between a hydrogen bonded to N/O and an N/O atom (hydrogen bonds reach ~1.6 Å,
  /// below the vdW sum): min(vdW floor, hbond_floor).
  double hbond_floor = 1.5;
  double diameter = 0.0;  ///< Å, upper bound of unrestrained pairs; 0 = auto (see below)
  HydrogenPolicy hydrogens = HydrogenPolicy::All;
  /// Known bonds over the input atoms (indices into `atoms`); empty = perceive them by distance.
  std::vector<std::array<std::size_t, 2>> bonds;
  /// Leave out the peptide planes C(i)–N(i+1) whose residue i+1 is a proline: their 1-4
  /// distances (CA–CA, O–CD, ...) differ between cis and trans, so a template model built trans
  /// must not fix them (the planarity itself is then distgeom.anneal's).
  bool free_proline_omega = false;
};

/// The molecule-diameter bound used for diameter = 0: the length of the fully extended chain,
/// 3.8 Å per residue (Cα–Cα of a trans peptide), plus 10 Å for side chains. It never cuts a
/// real conformation (compact-globule estimates such as 2√(5/3)·2.2 N^0.38 Å are violated by
/// disordered termini: 2KPU model 1 spans 72.5 Å, the globule estimate is 32 Å); the useful
/// upper bounds of unrestrained pairs come from triangle smoothing along the chain.
[[nodiscard]] double auto_diameter(std::size_t residues);

/// Why a restraint did not become bounds.
enum class SkipReason { Unresolved, Hydrogen, Ambiguous, SameAtom };

struct BoundsResult {
  std::vector<std::size_t> atoms;                   ///< selected input atoms, ascending: bounds row i ↔ atoms[i]
  std::size_t n = 0;                                ///< atoms.size()
  std::vector<double> lower, upper;                 ///< n×n, Å
  std::vector<int> restraint;                       ///< n×n restraint id that set the pair, −1 when none
  Topology topology;                                ///< over the selected atoms' indices (0..n-1)
  double diameter = 0.0;                            ///< the diameter bound used, Å
  std::size_t covalent_pairs = 0;                   ///< pairs fixed by covalent geometry
  std::size_t restraints_used = 0;                  ///< restraints that set at least one pair
  std::vector<std::pair<int, SkipReason>> skipped;  ///< restraint id and reason
  /// Ambiguous restraints (several alternatives): kept out of the bounds and passed to the
  /// refinement as r^-6 sums; atom indices mapped to bounds rows.
  std::vector<PairRestraint> ambiguous;
  /// Restraints with one alternative but several expanded atom pairs (pseudo-atoms,
  /// wildcards): their pairs got the loose valid bound described in restraint_bounds; the
  /// refinement applies the exact r^-6 sum.
  std::vector<int> grouped;
  /// Restraints whose pairs were already fixed by covalent geometry: the covalent value is kept
  /// (they are counted as used; indices into the restraints given, for the caller's warning).
  std::vector<std::size_t> covalent_conflicts;
  /// Restraints that bound an atom pair an earlier restraint had bounded (duplicates, or a
  /// group restraint over a pair restrained alone): the bounds are intersected. One entry
  /// (index, earlier index) per pair of restraints, indices into the restraints given.
  std::vector<std::pair<std::size_t, std::size_t>> intersected;
};

/// Bounds for the atoms of `atoms` (model coordinates `xyz`, n×3 Å) and `restraints`.
///  - covalent: 1-2 and 1-3 pairs = model distance ± tolerance_12 / _13; all pairs within a
///    peptide plane = model ± tolerance_plane. No other distance is taken from the model.
///  - restraints with one alternative and one atom pair: upper = restraint upper + correction,
///    lower = max(vdW floor, restraint lower) (the intersection when several restraints hit a
///    pair, listed in BoundsResult::intersected).
///  - restraints with one alternative expanding to N > 1 atom pairs (pseudo-atoms): the
///    restraint bounds the r^-6 sum d_eff = (Σ d⁻⁶)^(−1/6) ≤ U' = upper + correction, hence the
///    nearest pair d_min ≤ U' N^(1/6); every expanded pair gets the valid upper bound
///    U' N^(1/6) + spread(A) + spread(B) (spread = largest model distance inside a group, a
///    covalent quantity) and the vdW floor (see BoundsResult::grouped).
///  - ambiguous restraints: see BoundsResult::ambiguous.
///  - every other pair: lower = vdW floor, upper = diameter.
/// Throws std::invalid_argument on inconsistent sizes, std::runtime_error naming the
/// restraint when one is impossible (lower > upper after intersection) with its atoms.
[[nodiscard]] BoundsResult restraint_bounds(std::span<const AtomInfo> atoms, std::span<const double> xyz,
                                            std::span<const PairRestraint> restraints, const BoundsOptions& options);

/// Lower bound of the pairs that bounds_from_structure does not list (model distance ≥ cutoff).
enum class UnlistedLower {
  /// cutoff − tolerance: "every pair under the cutoff is known to ± tolerance" also says that
  /// every other pair is at least the cutoff (within the same tolerance).
  Cutoff,
  Vdw  ///< the vdW floor only (vdw_scale × radii sum, at most the cutoff): ignores that knowledge
};

/// Bounds from a full structure (reconstruction tests): every pair with model distance
/// d < cutoff gets [max(0, d − tolerance), d + tolerance]; every other pair gets the lower
/// bound chosen by `unlisted_lower` and the diameter (0 = auto_diameter) as upper bound.
struct StructureBoundsOptions {
  UnlistedLower unlisted_lower = UnlistedLower::Cutoff;
  double cutoff = 5.0;      ///< Å
  double tolerance = 0.05;  ///< Å
  double vdw_scale = 0.8;
  double diameter = 0.0;   ///< Å, 0 = auto_diameter(residue count)
  bool hydrogens = false;  ///< keep hydrogens
};
[[nodiscard]] BoundsResult structure_bounds(std::span<const AtomInfo> atoms, std::span<const double> xyz,
                                            const StructureBoundsOptions& options);

}  // namespace gemflow::distgeom
