#pragma once
// NMR restraints: readers of NEF, Xplor-NIH/CNS .tbl, CYANA .upl/.lol/.aco, NMR-STAR v3, AMBER
// &rst and wwPDB .mr bundles (distance and dihedral restraints), format detection by content,
// and resolution of their atom selections against a Structure (wildcards, pseudo-atoms, naming
// differences).
//
// Reading gives a gemflow::RestraintSet (gemflow/types/restraints.hpp) whose selectors hold
// the names as written in the file; resolve_restraints() fills atoms_a/atoms_b (distances) and
// atom_index (dihedrals) with atom indices of a Structure and sets
// DistanceRestraint::pseudo_correction. Every reader's errors are ParseError naming file:line.
// Every reader polls its `cancel` (gemflow/io/limits.hpp) every 4096 lines, rows or statements
// and throws ReadCancelled when it returns true.
#include <cstddef>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "gemflow/io/limits.hpp"
#include "gemflow/types/restraints.hpp"
#include "gemflow/types/structure.hpp"

namespace gemflow::io {

/// Reads every `_nef_distance_restraint` and `_nef_dihedral_restraint` loop of a NEF file (STAR
/// syntax, gemflow/io/star.hpp; NEF 1.1 specification, https://github.com/NMRExchangeFormat/NEF,
/// and its Commented_Example_v1_1.nef for the logic of restraint and combination ids).
/// - Rows sharing a restraint_id are OR-ed (one ambiguous restraint, one Alternative per row, in
///   file order); rows that also share a restraint_combination_id are AND-ed first. How that
///   logic becomes DistanceRestraint / DihedralRestraint (exact where it can be, else an implied,
///   looser restraint with a warning): detail::combine_distance_rows / combine_dihedral_rows
///   (algo/restraints_common.hpp). OR-ed rows of one restraint with different bounds (allowed by
///   NEF v1.1) keep the widest bounds, with a warning.
/// - Distance loops. Required columns: restraint_id, chain_code_1/2, sequence_code_1/2,
///   residue_name_1/2, atom_name_1/2, and upper_limit, or else both target_value and
///   target_value_uncertainty (a warning says so). Optional: index, weight (1), lower_limit (0),
///   target_value (0), restraint_combination_id, lower/upper_linear_limit (ignored). Missing
///   required columns are all named in one ParseError at the line of the loop_ header.
///   lower = lower_limit ('.' → 0), upper = upper_limit ('.' → target_value +
///   target_value_uncertainty; a row with neither is an error: a target alone is no upper
///   bound), target = target_value ('.' → 0), weight.
/// - Dihedral loops: the four atoms (chain_code_1..4, sequence_code_1..4, residue_name_1..4,
///   atom_name_1..4); lower_limit/upper_limit in degrees (an interval through ±180 written either
///   way: 170 to 190, or 170 to -170 with lower > upper) or else target_value ±
///   target_value_uncertainty; weight, name (PHI, PSI ...); *_linear_limit ignored.
/// - sequence_code must start with an integer (an insertion code suffix such as "10A" is
///   ignored with a warning); atom names keep NEF wildcards (format "nef").
/// Errors (file:line): missing columns, non-numeric bounds or sequence codes, a restraint
/// without an upper bound (distances) or interval (dihedrals), no restraint loop at all.
[[nodiscard]] RestraintSet read_nef_distance_restraints(const std::string& path);
[[nodiscard]] RestraintSet parse_nef_distance_restraints(std::string_view text, const std::string& path,
                                                         const CancelCheck& cancel = {});

/// Reads Xplor-NIH / CNS distance and dihedral restraints (.tbl):
///   assign (sel) (sel) d dminus dplus [weight w] [or (sel) (sel)]...      distance
///   assign (sel) (sel) (sel) (sel) k angle range [exponent]                dihedral (CDIH)
/// Distances: lower = max(0, d - dminus), upper = d + dplus, target = d; ids are 1, 2, ... in
/// file order. `or` between selection pairs (before or after the numbers, ARIA style) adds
/// alternatives. Dihedrals: the interval angle ± range (degrees; range ≥ 180 is the whole
/// circle), target = angle, weight = k; each selection must name one atom of one residue (ids
/// 1, 2, ... of their own). Selections: `resid N` / `resid N:M`, `segid X`, `name X`, `resname
/// X` (4-letter abbreviations resi, segi, resn accepted), `and`, `or`, parentheses, `atom
/// SEGID RESID NAME`; values may be quoted, segids are trimmed ("   A" = "A"). An `or`
/// inside one selection (HADDOCK ambiguous interaction restraints) expands to one
/// Alternative per combination, which keeps the same set of atom pairs. Comments: `!` to
/// the end of the line, `{ ... }` (nested, multi-line), `remarks` lines. Control statements
/// (noe, restraints dihedral, set, class, nres=, nassign=, averaging, potential, scale,
/// ceiling, end ...) are skipped. Atom names keep Xplor wildcards (format "xplor"). Errors
/// (file:line): unbalanced parentheses, `not` or other unsupported selection keywords, a
/// selection without resid, fewer numbers than the restraint needs, an `assign` with other
/// than 2 or 4 selections (named: 5 = carbon shifts, 6 = RDC ...; with skip_other_statements,
/// as in .mr bundles, skipped and counted in a warning), unknown statements, no restraint.
/// The *_distance_* names are kept for existing callers: they read dihedrals too.
[[nodiscard]] RestraintSet read_xplor_distance_restraints(const std::string& path);
[[nodiscard]] RestraintSet parse_xplor_distance_restraints(std::string_view text, const std::string& path,
                                                           const CancelCheck& cancel = {});
[[nodiscard]] RestraintSet parse_xplor_restraints(std::string_view text, const std::string& path,
                                                  bool skip_other_statements, const CancelCheck& cancel = {});

/// Upper limit (Å) of a restraint read from a lower limit alone (a CYANA .lol line without a .upl
/// partner): no upper bound in practice, below ResolveOptions::max_distance.
inline constexpr double kNoUpperLimit = 999.0;

enum class CyanaKind { Auto, Upper, Lower, Angles };
/// Reads CYANA (DYANA/DIANA) restraint lists, one restraint per line, `#` comments:
///   .upl / .lol:  res-number res-name atom res-number res-name atom limit [anything]
///   .aco:         res-number res-name angle lower upper [anything]   (PHI, PSI, OMEGA,
///                 CHI1-CHI5; degrees; lower > upper runs through ±180)
/// Upper limits give lower 0; lower limits give upper kNoUpperLimit (merge_cyana_limits pairs
/// them with a .upl). Angle atoms: detail::named_dihedral_atoms (IUPAC-IUB 1970 definitions).
/// Atom names stay CYANA's (pseudo-atoms QA, QB, QG, QD, QE, QQD, QR, MD ...; HN) and are
/// mapped by resolve_restraints (nomenclature table and pseudo-atom rules). Kind Auto: by
/// extension (.lol lower, .aco angles, else upper). No chains (CYANA numbers residues
/// through). Not read: ambiguous restraints over several lines (each line is a restraint).
/// Errors (file:line): a line of another layout, an unknown angle, a limit not in (0, 10⁴] Å.
[[nodiscard]] RestraintSet parse_cyana_restraints(std::string_view text, const std::string& path,
                                                  CyanaKind kind = CyanaKind::Auto, const CancelCheck& cancel = {});
/// Merges lower limits (.lol) into the upper-limit restraints (.upl) of the same single atom pair
/// (either order): lower = the .lol value. A lower limit without a partner is appended as a
/// restraint of its own (upper kNoUpperLimit). Both counts go to upl.warnings.
void merge_cyana_limits(RestraintSet& upl, const RestraintSet& lol);

/// Reads NMR-STAR v3 restraint loops: _Gen_dist_constraint (distances) and
/// _Torsion_angle_constraint (dihedrals), in any save frame. Rows sharing ID are combined as in
/// NEF: Combination_ID AND-s rows (so does Member_logic_code AND without a Combination_ID), the
/// rest are OR-ed alternatives. Atoms: per row, the first of three column sets that gives a
/// residue number and an atom name — PDB_strand_ID/PDB_residue_no/PDB_residue_name/
/// PDB_atom_name (wwPDB remediated files: the deposited coordinates' numbering),
/// Auth_asym_ID/Auth_seq_ID/Auth_comp_ID/Auth_atom_ID (the author's),
/// Entity_assembly_ID/Comp_index_ID/Comp_ID/Atom_ID. Bounds: Distance_lower_bound_val (0),
/// Distance_upper_bound_val (or Distance_val/Target_val + Target_val_uncertainty), Weight;
/// Angle_lower_bound_val/Angle_upper_bound_val (or Angle_target_val ± Angle_target_val_err),
/// Torsion_angle_name. Not read: RDC, J-coupling, chemical-shift and other loops; NMR-STAR 2.1.
/// Errors (file:line): missing columns, bad numbers, no restraint loop at all.
[[nodiscard]] RestraintSet parse_nmrstar_restraints(std::string_view text, const std::string& path,
                                                    const CancelCheck& cancel = {});

/// Reads AMBER restraint files (&rst namelists, as makeDIST_RST / makeANG_RST write them): iat =
/// two atoms (distance: lower r2, upper r3 Å, weight rk2) or four (torsion: r2..r3 degrees); iat
/// < 0 takes the group igr1 / igr2 (every atom pair of the groups an alternative). r1-r4 and rk2
/// persist from one namelist to the next, as in AMBER; `&end` or `/` closes one; `!`/`#`
/// comments. AMBER names atoms by their number in the prmtop: `structure` must list the atoms in
/// the prmtop's order (a PDB written by ambpdb or cpptraj from it); atom n is
/// structure->atoms[n-1], whose chain, residue number, residue and name become the selector.
/// Not read: angle (3 atoms) and generalized-coordinate restraints (errors naming the line).
/// Errors (file:line): no structure, an atom number outside it, unclosed namelists, bad numbers.
[[nodiscard]] RestraintSet parse_amber_restraints(std::string_view text, const std::string& path,
                                                  const Structure* structure, const CancelCheck& cancel = {});

/// One section of a wwPDB .mr bundle, as parse_mr_restraints split it.
struct MrSection {
  int first_line = 0, last_line = 0;
  std::string format;  ///< "Xplor-NIH/CNS", "CYANA distance", "header", ...
  std::size_t distances = 0, dihedrals = 0;
  std::string skipped;  ///< why the section was not read ("" when read)
};
struct MrReport {
  std::vector<MrSection> sections;
};
/// Reads a wwPDB .mr restraint bundle (an NMR entry's restraint files as deposited, one after
/// the other, under '*'-prefixed PDB header lines). The file is split into sections by content
/// — runs of lines of one format: Xplor-NIH/CNS statements, CYANA distance lines, CYANA angle
/// lines, AMBER &rst namelists, the wwPDB nomenclature mapping table ("Entry H atom name ...
/// Submitted Coord H atom name"), other text — and each section is read by its reader at its own
/// line numbers (all sections of one format in one pass, the other lines left empty). In Xplor
/// sections, `assign` statements of other kinds (5 selections: carbon shifts; 6: RDC ...) are
/// skipped and counted. Skipped sections and statements are listed in `report` and in warnings
/// ("lines a-b skipped: why"). CYANA distance sections are read as upper limits (the bundle does
/// not say .upl or .lol). Restraints are in file order, ids renumbered through the bundle
/// (distances 1.., dihedrals 1..); origins keep the bundle's line numbers. A section that its
/// reader refuses is an error (file:line), not skipped.
[[nodiscard]] RestraintSet parse_mr_restraints(std::string_view text, const std::string& path,
                                               const Structure* structure = nullptr, MrReport* report = nullptr,
                                               const CancelCheck& cancel = {});

enum class RestraintFormat { Auto, Nef, Xplor, Cyana, NmrStar, Amber, Mr };
/// "nef", "xplor", "cyana", "nmr-star", "amber", "mr" ("auto").
[[nodiscard]] const char* restraint_format_name(RestraintFormat f);

struct FormatDetection {
  RestraintFormat format = RestraintFormat::Auto;
  std::string reason;  ///< what identified it ("NEF: _nef_distance_restraint ... loops")
};
/// The restraint format of a file, by content (the extension only tells .upl/.lol/.aco apart and
/// makes .mr a bundle): STAR syntax with _nef_distance/_nef_dihedral_restraint loops → NEF, with
/// _Gen_dist_constraint/_Torsion_angle_constraint → NMR-STAR; '*' header lines, the wwPDB
/// nomenclature table or lines of several formats → Mr; &rst → AMBER; `assign` → Xplor; CYANA
/// lines → CYANA. ParseError (file:line) for an empty file, a STAR file without restraint loops
/// (e.g. chemical shifts only) and text of no known format (at the first line that fits none).
[[nodiscard]] FormatDetection detect_restraint_format(std::string_view text, const std::string& path);

struct RestraintReadOptions {
  RestraintFormat format = RestraintFormat::Auto;  ///< Auto: detect_restraint_format
  CyanaKind cyana = CyanaKind::Auto;
  const Structure* structure = nullptr;  ///< AMBER &rst (atom numbers); other formats ignore it
  MrReport* mr_report = nullptr;         ///< filled for .mr bundles when not null
  CancelCheck cancel;                    ///< polled while reading (ReadCancelled)
};
/// Reads a restraint file of any format above.
[[nodiscard]] RestraintSet parse_restraints(std::string_view text, const std::string& path,
                                            const RestraintReadOptions& options = {});
[[nodiscard]] RestraintSet read_restraints(const std::string& path, const RestraintReadOptions& options = {});
/// read_restraints with a format (kept for existing callers; it reads dihedrals too).
[[nodiscard]] RestraintSet read_distance_restraints(const std::string& path,
                                                    RestraintFormat format = RestraintFormat::Auto);

/// True when `name` matches `pattern` in a restraint-file dialect ("xplor" or "nef"):
///   xplor: `*` any string, `%` one character, `#` one or more digits, `+` one digit
///   nef:   `%` one or more digits, `*` any string, lower-case `x`/`y` (non-stereospecific
///          partner) one digit
/// Case-insensitive. O(|pattern|·|name|) time whatever the wildcards (dynamic programming).
[[nodiscard]] bool atom_name_matches(std::string_view pattern, std::string_view name, std::string_view dialect);

/// Pseudo-atom correction (Å) for a group of atoms of one residue that a selection expanded
/// to, after Wüthrich, Billeter & Braun, J. Mol. Biol. 169, 949-961 (1983) (also Wüthrich,
/// "NMR of Proteins and Nucleic Acids", 1986, ch. 7):
///   1 atom                                           0.0
///   2-3 H with a common name stem (CH2, NH2, CH3, NH3+: HB2/HB3, HG21-23, HD21/HD22)  1.0
///   Phe/Tyr ring pair HD1/HD2 or HE1/HE2 (QD, QE)  2.0
///   Val/Leu both methyls (6 H: HG1x+HG2x, HD1x+HD2x; QQG, QQD)  2.4
///   Phe/Tyr all ring H (4-5 H; QR)                 2.4
///   anything else (e.g. whole residues)            0.0, reported as "no correction"
/// `names` are the Structure atom names, `residue` the residue name. Returns -1 for the
/// "anything else" case so that callers can report it.
[[nodiscard]] double pseudo_atom_correction(const std::string& residue, const std::vector<std::string>& names);

enum class UnknownAtomPolicy { Error, Skip };
enum class ResidueMismatchPolicy { Error, Warn };

struct ResolveOptions {
  /// Error: an atom that cannot be found is a ParseError naming the restraint's file:line.
  /// Skip: the restraint (all its alternatives) is left out, counted (ResolveReport::skipped,
  /// RestraintSet::skipped) and reported — but never more than max_skipped_fraction of them.
  UnknownAtomPolicy on_unknown_atom = UnknownAtomPolicy::Error;
  /// Skip may leave out at most this fraction of the restraints (more, or all of them, is a
  /// ParseError listing counts and examples): when more than half do not match, the file
  /// belongs to another numbering or molecule, and a structure from the rest would be wrong.
  double max_skipped_fraction = 0.5;
  /// Error: a residue name of the file that differs from the structure's residue at that
  /// number (after residue_offset; protonation/force-field variants such as HIE, CYX, NALA
  /// count as their standard residue) is a ParseError naming file:line, with the count, a few
  /// examples and the residue_offset under which the names agree (when there is one).
  /// Warn: counted, reported and resolved anyway.
  ResidueMismatchPolicy on_residue_mismatch = ResidueMismatchPolicy::Error;
  /// Added to every residue number of the file before matching: structure = file + offset.
  int residue_offset = 0;
  /// Per chain of the file (a selector's chain or segid as written): replaces residue_offset
  /// for that chain's selectors. For chains numbered apart, e.g. a dimer deposited with chain B
  /// numbered 91-161 against a molecule numbered 20-90 in both chains: {{"B", -71}}.
  std::map<std::string, int> chain_offsets;
  /// Å; an upper bound beyond this (or a non-finite bound) is a ParseError at the restraint.
  double max_distance = 1000.0;
  std::size_t max_examples = 3;  ///< examples listed per issue in the report
};

/// What resolution did, item by item (counts and a few examples), for the report table.
struct ResolveReport {
  struct Item {
    std::string what;
    std::size_t count = 0;
    std::string examples;  ///< "; "-separated, at most ResolveOptions::max_examples
  };
  std::vector<Item> items;
  std::size_t restraints_in = 0, restraints_out = 0, skipped = 0, atom_pairs = 0;
  /// Dihedral restraints before and after resolution, and those left out (on_unknown_atom: skip;
  /// also added to RestraintSet::skipped, not to `skipped`).
  std::size_t dihedrals_in = 0, dihedrals_out = 0, dihedrals_skipped = 0;
  /// Residue-number offset (structure = file + offset) under which the residue names of the
  /// file agree best with the structure (or, without disagreeing names, most atom selections
  /// are found), when that differs from ResolveOptions::residue_offset; else 0.
  int suggested_offset = 0;
  /// When the file names several chains and their best offsets differ (or differ from the ones
  /// set): the offset per chain, as ResolveOptions::chain_offsets; else empty.
  std::map<std::string, int> suggested_chain_offsets;
};

/// Resolves every selector of `set` against `s` (restraints are matched by chain/segment,
/// residue number + options.residue_offset (or the chain's options.chain_offsets) and atom name; an empty chain matches
/// any chain; a selector's chain matches Atom::chain or Atom::segment). First, every restraint's bounds must be finite
/// with 0 ≤ lower ≤ upper ≤ options.max_distance, and the residue names of the file must agree with the structure
/// (options.on_residue_mismatch); both ParseErrors name the restraint's file:line. Per selector, in order:
///  1. the name as a wildcard pattern (atom_name_matches, dialect set.format);
///  2. the nomenclature table (gemflow/io/nomenclature.hpp): a name (or pattern) of any
///     convention — IUPAC/NEF, PDB, X-PLOR/CNS, CYANA, AMBER — maps to the name the structure
///     uses (H ↔ HN; N-terminal H1-H3 ↔ HT1-HT3, H#/HT# included; C-terminal O/OXT ↔ OT1/OT2
///     ↔ O'/O''; Ile CD1/HD11-13 ↔ CD/HD1-3); the amide H (H, HN) of an N-terminal residue
///     → its NH3+ protons; PDB v2 names (1HG1 → HG11; methylene 1HB/2HB → HB2/HB3); old
///     X-PLOR methylene names: X1 → X3 when the residue has X2 and X3 but no X1 (HB1/HB2 of
///     X-PLOR/ARIA = IUPAC HB3/HB2, BMRB nomenclature table);
///  3. pseudo-atoms: Q<x> → H<x> + digits (QA, QB, QG, QG1, QD2, QE, QZ ...), M<x> (methyl,
///     CYANA) → the methyl groups (three H on one stem) among H<x> + digits (Ile MG = HG2x;
///     Leu MD / Val MG cover both methyls: kept as QQD / QQG and listed in a warning),
///     QQ<x> → both methyls (HG1x+HG2x, HD1x+HD2x), QR → ring H (HD1, HD2, HE1, HE2, HZ).
/// Fills atoms_a/atoms_b, sets pseudo_correction = corr(A) + corr(B), where A (B) is the union
/// of the atoms of side a (b) over all alternatives (so explicit `or` lists and wildcards give
/// the same value), and appends the issues to set.warnings. Selectors that cannot be found:
/// ParseError (on_unknown_atom Error), listing how many and, when another residue_offset
/// finds more of them, that offset (per chain, as chain_offsets, when the file's chains need
/// different ones); or left out (Skip) and added to set.skipped, unless more
/// than options.max_skipped_fraction of the restraints (or all) would be left out, or another
/// residue_offset finds every selection (then the ones found here name wrong atoms).
/// Dihedral restraints: each of the four selectors is resolved the same way and must give exactly
/// one atom (DihedralRestraint::atom_index); residue names are checked with the distances'; one
/// that is not found or gives several atoms follows on_unknown_atom (an error at its line, or the
/// restraint left out, at most max_skipped_fraction of the dihedrals). Intervals outside
/// [-180, 180]° are a ParseError.
/// The report's vocabulary (gemflow/types/restraints.hpp): "ambiguous" = more than one
/// assignment alternative; "group" = one alternative expanding to several atom pairs.
ResolveReport resolve_restraints(RestraintSet& set, const Structure& s, const ResolveOptions& options = {});

}  // namespace gemflow::io
