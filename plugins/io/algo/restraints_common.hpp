#pragma once
// Helpers shared by the restraint readers (internal to the io plugin's algo library): numbers,
// dihedral intervals, and the NEF / NMR-STAR logic of rows that share a restraint id.
#include <array>
#include <string>
#include <string_view>
#include <vector>

#include "gemflow/types/restraints.hpp"

namespace gemflow::io::detail {

/// Parses all of `text` as a finite double ("+1.5" accepted); false otherwise.
[[nodiscard]] bool parse_double(std::string_view text, double& out);
/// Parses all of `text` as an int; false otherwise (out of range included).
[[nodiscard]] bool parse_int(std::string_view text, int& out);

/// `a` wrapped into [-180, 180).
[[nodiscard]] double wrap_degrees(double a);

/// Sets r.lower/upper from an interval [lo, hi] in degrees as written in a file (any turn; hi
/// may exceed 180 or lo go below -180): both wrapped into [-180, 180), the interval running from
/// lower counter-clockwise to upper; hi - lo ≥ 360 is the whole circle (-180, 180). Returns
/// false when hi < lo (an empty interval as written).
[[nodiscard]] bool set_dihedral_interval(DihedralRestraint& r, double lo, double hi);

/// The atom a restraint row names (chain, residue number, atom name; residue names may be left
/// out) as a key equal exactly when those three are: each name is prefixed by its length, so
/// that no name's characters (':' included) can make two atoms collide.
std::string atom_key(const AtomSelector& a);

/// The smallest arc (lower, upper, wrapped as in DihedralRestraint) that holds every interval of
/// `rs`: their union when it is one arc, else the union plus the smallest gaps between its
/// pieces. Used where a file ORs several intervals of one angle (one DihedralRestraint holds one).
void covering_arc(const std::vector<const DihedralRestraint*>& rs, double& lower, double& upper);

/// Largest number of atom-pair alternatives that the combination logic of one restraint id may
/// produce (combine_distance_rows): more is a ParseError at the restraint's first row.
inline constexpr std::size_t kMaxCombinedAlternatives = 100000;
/// Largest number of atom pairs of one AMBER group restraint (|igr1| × |igr2|).
inline constexpr std::size_t kMaxGroupPairs = 10000;
/// Largest number of atom-pair alternatives one file may expand to over all its restraints: the
/// per-restraint caps above alone let a file of a few hundred bytes per restraint build 10⁴ or
/// 10⁵ alternatives each, thousands of times its size in memory.
inline constexpr std::size_t kMaxTotalAlternatives = 200000;

/// Adds `count` alternatives to a file's running `total`; a ParseError at (path, line) when the
/// file passes kMaxTotalAlternatives.
void count_alternatives(std::size_t& total, std::size_t count, const std::string& path, std::size_t line);

/// One row of a NEF or NMR-STAR restraint loop, before rows are combined into restraints.
struct RestraintRow {
  int id = 0;               ///< restraint id (rows sharing it are combined)
  std::string combination;  ///< combination id ("" when none): rows sharing it are ANDed
  int line = 0;
  DistanceRestraint distance;  ///< one alternative (distance rows)
  DihedralRestraint dihedral;  ///< dihedral rows
};

/// Combines the rows of one loop (file order) into restraints, after the NEF specification (v1.1,
/// Commented_Example_v1_1.nef; NMR-STAR Combination_ID the same way): rows sharing a restraint id
/// are OR-ed, except rows that also share a restraint_combination_id, which are AND-ed first.
/// - Distances: one OR term per row without a combination id and one per combination. One term
///   of k rows gives k restraints (exact); m terms of one row each give one ambiguous restraint of
///   m alternatives (exact when their bounds agree); otherwise restraint i takes row i (or the
///   term's last) of every term: each such restraint is implied by the original (its satisfying
///   term satisfies all of them), a relaxation reported in `warnings`. Rows combined into one
///   restraint with different bounds keep the widest (lowest lower, highest upper, lowest weight),
///   also reported.
/// - Dihedrals (one angle per DihedralRestraint, no alternatives): for every angle (the same
///   four atoms, in either order) that every OR term restrains, one restraint whose interval is
///   the smallest arc covering the terms' intervals (exact for one term, or one angle with one
///   interval); an angle that only some terms restrain implies nothing and is left out (counted
///   in `warnings`).
/// Restraint ids, origins ("path:line" of the first row used) and warnings are set here.
/// total: the file's running count of alternatives (count_alternatives), over all its loops.
void combine_distance_rows(std::vector<RestraintRow>& rows, const std::string& path, RestraintSet& set,
                           std::size_t& total);
void combine_dihedral_rows(std::vector<RestraintRow>& rows, const std::string& path, RestraintSet& set);

/// The four atoms of a named backbone or side-chain dihedral angle of residue `number` (name
/// PHI, PSI, OMEGA, CHI1..CHI5, upper case) of an amino acid `residue` (three letters), after
/// IUPAC-IUB 1970 (Biochemistry 9, 3471): φ C(i-1)-N-CA-C, ψ N-CA-C-N(i+1), ω CA-C-N(i+1)-CA(i+1),
/// χ1 N-CA-CB-?G, ... False when the angle is not defined for the residue.
[[nodiscard]] bool named_dihedral_atoms(const std::string& name, const std::string& residue, int number,
                                        std::array<AtomSelector, 4>& atoms);

}  // namespace gemflow::io::detail
