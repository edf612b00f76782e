#pragma once
// Small molecules with 3D coordinates and bonds (ligands, conformers), read from MDL SDF/MOL.
//
// MoleculeSet travels on wires as a data type of its own (DataType<MoleculeSet> below). The
// header is self-contained (plain structs + an inline summary) so that every plugin that uses
// the type (io registers it; distgeom reads it) compiles the same definition.
#include <array>
#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include <gemflow/data.hpp>

#include "gemflow/io/limits.hpp"

namespace gemflow::io {

/// One atom of a molecule: element symbol as written in the file's atom block, normalised to
/// upper case ("C", "CL", "BR"), position in Å, formal charge (from the V2000 atom-block charge
/// field, `M  CHG`, or V3000 `CHG=`; 0 when absent).
struct MoleculeAtom {
  std::string element;
  std::array<double, 3> xyz{0, 0, 0};
  int charge = 0;
};

/// A bond between atoms a < b (0-based) with the MDL bond type: 1 single, 2 double, 3 triple,
/// 4 aromatic, 5-8 query types (kept as written; V3000 9/10 coordination/hydrogen bonds too).
struct MoleculeBond {
  std::size_t a = 0, b = 0;
  int order = 1;
};

/// One record: the header line 1 as name, its atoms and bonds.
struct Molecule {
  std::string name;
  std::vector<MoleculeAtom> atoms;
  std::vector<MoleculeBond> bonds;
  std::string source;  ///< "file:line" of the record's first line
  /// True when every z coordinate is 0 (a 2D depiction; dimension code "2D" or flat input).
  [[nodiscard]] bool flat() const noexcept {
    for (const auto& a : atoms)
      if (a.xyz[2] != 0.0) return false;
    return true;
  }
};

/// The records of one or more files, in file order.
struct MoleculeSet {
  std::vector<Molecule> molecules;
  [[nodiscard]] std::size_t size() const noexcept { return molecules.size(); }
};

/// Reads every record of an MDL SD file (.sdf, .sd) or molfile (.mol): CTfile formats
/// (BIOVIA, "CTfile Formats", 2020), connection tables V2000 and V3000, records separated by
/// `$$$$` (a .mol file without it is one record).
/// - Header: line 1 is the name (trimmed); lines 2-3 are skipped. Counts line: V2000 fixed
///   columns aaa (1-3) atoms, bbb (4-6) bonds, version in columns 35-39 ("V2000" or blank =
///   V2000, "V3000").
/// - V2000 atom lines: x, y, z in columns 1-10, 11-20, 21-30 (Å), symbol 32-34, charge code
///   37-39 (0 none, 1 +3, 2 +2, 3 +1, 4 doublet radical → 0, 5 −1, 6 −2, 7 −3; optional).
///   Bond lines: atoms 1-3, 4-6 (1-based), type 7-9. Properties: `M  CHG` replaces every
///   atom-block charge of the record (as the format says); other `M  ` lines are skipped;
///   `M  END` ends the connection table and is required.
/// - V3000: `M  V30` lines (a trailing '-' continues a line), COUNTS na nb, ATOM block
///   "index type x y z aamap [CHG=c ...]", BOND block "index type a1 a2 [...]" (atom ids
///   mapped through the ATOM block's indices), other blocks skipped; then `M  END`.
/// - Data items (`> <field>` ... blank line) after `M  END` are skipped up to `$$$$`.
/// Errors (ParseError, file:line of the offending line): a count line that is not numbers,
/// a record that ends (`$$$$` or end of file) before its atoms, bonds or `M  END`, a
/// coordinate or index that is not a number, a bond to an atom outside 1..n or to itself, an
/// empty element symbol, V3000 blocks whose size differs from COUNTS, a coordinate beyond
/// ±kMaxAbsCoordinate (gemflow/io/limits.hpp), a charge outside -15..15, no record at all.
/// `cancel` is polled between records (ReadCancelled when it returns true).
[[nodiscard]] MoleculeSet read_sdf(const std::string& path, const CancelCheck& cancel = {});
/// Same from text in memory; `path` names it in errors.
[[nodiscard]] MoleculeSet parse_sdf(std::string_view text, const std::string& path, const CancelCheck& cancel = {});

}  // namespace gemflow::io

namespace gemflow {

template <>
struct DataType<io::MoleculeSet> {
  static constexpr std::string_view name = "MoleculeSet";
  static constexpr std::string_view doc =
      "Small molecules: per record a name, atoms (element, 3D coordinates Å, formal charge) and bonds "
      "with MDL bond orders";
  static std::string summary(const io::MoleculeSet& s) {
    std::size_t atoms = 0, bonds = 0;
    for (const auto& m : s.molecules) atoms += m.atoms.size(), bonds += m.bonds.size();
    return std::to_string(s.size()) + " molecule(s), " + std::to_string(atoms) + " atoms, " +
           std::to_string(bonds) + " bonds";
  }
};

}  // namespace gemflow
