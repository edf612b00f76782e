#pragma once
// NMR distance restraints: NEF and Xplor-NIH/CNS .tbl readers, and resolution of their atom
// selections against a Structure (wildcards, pseudo-atoms, naming differences).
//
// Reading gives a gemflow::RestraintSet (gemflow/types/restraints.hpp) whose selectors hold
// the names as written in the file; resolve_restraints() fills atoms_a/atoms_b with atom
// indices of a Structure and sets DistanceRestraint::pseudo_correction.
#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "gemflow/types/restraints.hpp"
#include "gemflow/types/structure.hpp"

namespace gemflow::io {

/// Reads every `_nef_distance_restraint` loop of a NEF file (STAR syntax, gemflow/io/star.hpp;
/// NEF 1.1 specification, https://github.com/NMRExchangeFormat/NEF).
/// - Rows sharing a restraint_id form one ambiguous restraint, one Alternative per row, in
///   file order; their bounds must agree (ParseError otherwise).
/// - Required columns: restraint_id, chain_code_1/2, sequence_code_1/2, residue_name_1/2,
///   atom_name_1/2, and upper_limit, or else both target_value and target_value_uncertainty
///   (a warning says so). Optional: index, weight (1), lower_limit (0), target_value (0),
///   restraint_combination_id, lower/upper_linear_limit (ignored). Missing required columns
///   are all named in one ParseError at the line of the loop_ header.
/// - lower = lower_limit ('.' → 0), upper = upper_limit ('.' → target_value +
///   target_value_uncertainty; a row with neither is an error: a target alone is no upper
///   bound), target = target_value ('.' → 0), weight.
/// - sequence_code must start with an integer (an insertion code suffix such as "10A" is
///   ignored with a warning); atom names keep NEF wildcards (format "nef").
/// - restraint_combination_id is not interpreted (a warning counts the rows that set it).
/// Errors (file:line): missing columns, non-numeric bounds or sequence codes, a restraint
/// without an upper bound, no distance restraint loop at all.
[[nodiscard]] RestraintSet read_nef_distance_restraints(const std::string& path);
[[nodiscard]] RestraintSet parse_nef_distance_restraints(std::string_view text, const std::string& path);

/// Reads Xplor-NIH / CNS distance restraints (.tbl):
///   assign (sel) (sel) d dminus dplus [weight w] [or (sel) (sel)]...
/// lower = max(0, d - dminus), upper = d + dplus, target = d; ids are 1, 2, ... in file
/// order. `or` between selection pairs (before or after the numbers, ARIA style) adds
/// alternatives. Selections: `resid N` / `resid N:M`, `segid X`, `name X`, `resname X`
/// (4-letter abbreviations resi, segi, resn accepted), `and`, `or`, parentheses, `atom
/// SEGID RESID NAME`; values may be quoted, segids are trimmed ("   A" = "A"). An `or`
/// inside one selection (HADDOCK ambiguous interaction restraints) expands to one
/// Alternative per combination, which keeps the same set of atom pairs. Comments: `!` to
/// the end of the line, `{ ... }` (nested, multi-line). Control statements (noe, set, class,
/// nres=, averaging, potential, scale, ceiling, end ...) are skipped. Atom names keep Xplor
/// wildcards (format "xplor"). Errors (file:line): unbalanced parentheses, `not` or other
/// unsupported selection keywords, a selection without resid, fewer than three numbers
/// (a third selection, as in dihedral files, is named as such), unknown statements.
[[nodiscard]] RestraintSet read_xplor_distance_restraints(const std::string& path);
[[nodiscard]] RestraintSet parse_xplor_distance_restraints(std::string_view text, const std::string& path);

enum class RestraintFormat { Auto, Nef, Xplor };
/// Auto: .nef → NEF; .tbl, .xplor, .cns, .noe → Xplor; otherwise ParseError.
[[nodiscard]] RestraintSet read_distance_restraints(const std::string& path,
                                                    RestraintFormat format = RestraintFormat::Auto);

/// True when `name` matches `pattern` in a restraint-file dialect ("xplor" or "nef"):
///   xplor: `*` any string, `%` one character, `#` one or more digits, `+` one digit
///   nef:   `%` one or more digits, `*` any string, lower-case `x`/`y` (non-stereospecific
///          partner) one digit
/// Case-insensitive.
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
  /// Residue-number offset (structure = file + offset) under which the residue names of the
  /// file agree best with the structure (or, without disagreeing names, most atom selections
  /// are found), when that differs from ResolveOptions::residue_offset; else 0.
  int suggested_offset = 0;
};

/// Resolves every selector of `set` against `s` (restraints are matched by chain/segment,
/// residue number + options.residue_offset and atom name; an empty chain matches any chain; a
/// selector's chain matches Atom::chain or Atom::segment). First, every restraint's bounds
/// must be finite with 0 ≤ lower ≤ upper ≤ options.max_distance, and the residue names of the
/// file must agree with the structure (options.on_residue_mismatch); both ParseErrors name
/// the restraint's file:line. Per selector, in order:
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
/// finds more of them, that offset; or left out (Skip) and added to set.skipped, unless more
/// than options.max_skipped_fraction of the restraints (or all) would be left out, or another
/// residue_offset finds every selection (then the ones found here name wrong atoms).
/// The report's vocabulary (gemflow/types/restraints.hpp): "ambiguous" = more than one
/// assignment alternative; "group" = one alternative expanding to several atom pairs.
ResolveReport resolve_restraints(RestraintSet& set, const Structure& s, const ResolveOptions& options = {});

}  // namespace gemflow::io
