#pragma once
// Small molecules with 3D coordinates and bonds (ligands, conformers), read from MDL SDF/MOL.
// MoleculeSet is an SDK data type (gemflow/types/molecules.hpp, DataType<MoleculeSet> in
// gemflow/types.hpp).
#include <string>
#include <string_view>

#include <gemflow/types.hpp>

#include "gemflow/io/limits.hpp"

namespace gemflow::io {

// The types are the SDK's (gemflow/types/molecules.hpp); these names keep io's code and its
// users unchanged.
using gemflow::Molecule;
using gemflow::MoleculeAtom;
using gemflow::MoleculeBond;
using gemflow::MoleculeSet;

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
