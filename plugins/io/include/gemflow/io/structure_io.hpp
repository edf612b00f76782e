#pragma once
// Reading and writing molecular structures: PDB, mmCIF (PDBx), VTK XML PolyData (.vtp).
//
// All readers return a gemflow::Structure (gemflow/types/structure.hpp): one atom list shared
// by every model, coordinates in Å, models[m][i] the position of atoms[i] in model m.
// Errors are ParseError with file:line (gemflow/io/errors.hpp).
//
// Alternate locations (both formats): per residue (chain, number, insertion code) the FIRST
// alternate-location id met in the file is kept, with every atom that has no altloc; atoms of
// other altloc ids are dropped (counted in `warnings`). This keeps each residue consistent,
// also for microheterogeneity (two residue types at one position, e.g. SER A/B vs PRO C),
// which "highest occupancy per atom" would mix. The same choice as biotite's altloc="first".
#include <cstddef>
#include <iosfwd>
#include <string>
#include <vector>

#include "gemflow/io/limits.hpp"
#include "gemflow/types/structure.hpp"

namespace gemflow::io {

struct ReadStructureOptions {
  /// 0 = every model; N >= 1 = only the model with serial N (PDB MODEL N / mmCIF
  /// pdbx_PDB_model_num N); a file without models has the single model 1.
  int model = 0;
  /// Polled every 4096 lines or values (ReadCancelled when it returns true).
  CancelCheck cancel;
};

/// Reads a PDB file (wwPDB format v3.3: ATOM/HETATM, MODEL/ENDMDL, CONECT, TITLE/HEADER).
/// - Fixed columns: name 13-16, altLoc 17, resName 18-20(21), chain 22, resSeq 23-26,
///   iCode 27, x/y/z 31-54, occupancy 55-60, B 61-66, segid 73-76, element 77-78.
///   Lines may end after the z coordinate (occupancy 1, B 0, element inferred).
/// - Element: columns 77-78 when present, else inferred from the name: a name starting in
///   column 14 (column 13 blank or a digit, e.g. " CA ", "1HB ") gives the letter in column
///   14; a name starting in column 13 gives a two-letter element when the record is HETATM
///   and the two letters form an element (e.g. "FE", "ZN"), else its first letter ("HG11"
///   of an ATOM record is H).
/// - Ensembles: every model must list the same atoms in the same order (name, residue,
///   number, insertion, chain), checked atom by atom; the first difference is an error
///   naming the model and line.
/// - CONECT records become Structure::bonds (each pair once); serials not in the kept atoms
///   (e.g. a dropped altloc) are counted in `warnings`.
/// Errors: bad numbers (coordinates, residue number) name the columns, a coordinate beyond
/// ±kMaxAbsCoordinate (gemflow/io/limits.hpp) is refused; nested MODEL, ENDMDL
/// without MODEL, atoms outside MODEL in a file with models, a requested model that is
/// absent, no atoms at all.
/// `warnings` (optional) receives short notes on what was dropped (altlocs, CONECT).
[[nodiscard]] Structure read_pdb(const std::string& path, const ReadStructureOptions& options = {},
                                 std::vector<std::string>* warnings = nullptr);
/// Same from text in memory; `path` names it in errors.
[[nodiscard]] Structure parse_pdb(std::string_view text, const std::string& path,
                                  const ReadStructureOptions& options = {},
                                  std::vector<std::string>* warnings = nullptr);

/// Reads the _atom_site loop of an mmCIF (PDBx) file (first data block).
/// Numbering: the author fields are used by default, as in PDB files and NMR restraint files:
/// auth_atom_id, auth_comp_id, auth_seq_id, auth_asym_id; each falls back to its label_*
/// field when the author column is absent or '?'/'.' (label_seq_id '.' of waters → 0).
/// Also read: type_symbol (element, else inferred from the atom name), label_alt_id
/// (see the altloc rule above), pdbx_PDB_ins_code, pdbx_PDB_model_num (models; 1 when
/// absent), group_PDB (HETATM), id (serial), occupancy, B_iso_or_equiv. Quoted names
/// ("O5'", 'C1"') are unquoted. Title: _struct.title, else the data block's name.
/// Errors (file:line of the offending value): no _atom_site loop, missing Cartn_x/y/z or atom
/// name columns, a non-numeric coordinate or residue number, a coordinate beyond
/// ±kMaxAbsCoordinate, inconsistent models.
[[nodiscard]] Structure read_mmcif(const std::string& path, const ReadStructureOptions& options = {},
                                   std::vector<std::string>* warnings = nullptr);
[[nodiscard]] Structure parse_mmcif(std::string_view text, const std::string& path,
                                    const ReadStructureOptions& options = {},
                                    std::vector<std::string>* warnings = nullptr);

/// Structure file formats known by extension (case-insensitive).
enum class StructureFormat { Pdb, Mmcif, Vtp };
/// .pdb/.ent → Pdb, .cif/.mmcif → Mmcif, .vtp → Vtp; ParseError naming the extension otherwise.
[[nodiscard]] StructureFormat structure_format_from_path(const std::string& path);

/// Reads .pdb/.ent or .cif/.mmcif by extension.
[[nodiscard]] Structure read_structure(const std::string& path, const ReadStructureOptions& options = {},
                                       std::vector<std::string>* warnings = nullptr);

/// Writes PDB: MODEL/ENDMDL around each model when there is more than one, TER after each
/// chain, CONECT for Structure::bonds, END. Atom names are aligned by the PDB rule (a
/// one-letter element name starts in column 14). Coordinates %8.3f; serials renumbered 1..n
/// (CONECT uses the new serials). What the fixed columns cannot hold is refused with
/// std::invalid_argument naming the atom and the value (never a shifted or merged line):
/// coordinates outside -999.999..9999.999, occupancy or B-factor outside -99.99..999.99,
/// residue numbers outside -999..9999, names longer than their columns, control characters,
/// more than 99999 atoms.
void write_pdb(std::ostream& out, const Structure& s);
/// Writes mmCIF: one data block named block_name (blanks become '_'), the title as
/// _struct.title (read back by read_mmcif), an _atom_site loop (auth_* and label_* ids, model
/// numbers 1..M), coordinates %.3f, occupancy and B %.2f, each as wide as it needs. Values
/// with spaces or quotes are quoted. Refused (std::invalid_argument naming the atom): what
/// read_mmcif would refuse, i.e. non-finite values, coordinates beyond ±kMaxAbsCoordinate, and
/// names holding a line break. Bonds are not
/// written (mmCIF keeps standard connectivity in the chemical component dictionary).
void write_mmcif(std::ostream& out, const Structure& s, const std::string& block_name = "gemflow");
/// Writes VTK XML PolyData (ASCII, version 0.1): Points = the atoms of `model` (0-based
/// index into models), Verts = one vertex per atom, Lines = Structure::bonds (when empty,
/// bonds are perceived with bonds_by_distance), PointData: "element" (atomic number, Int32),
/// "residue_number" (Int32), "b_factor" (Float64). ParaView / vtkXMLPolyDataReader read it.
void write_vtp(std::ostream& out, const Structure& s, std::size_t model = 0);

/// Writes by extension (.pdb/.ent, .cif/.mmcif, .vtp) to `path`.
void write_structure(const std::string& path, const Structure& s);

/// Atomic number of an element symbol (case-insensitive, "H" → 1, "SE" → 34); 0 unknown.
[[nodiscard]] int atomic_number(std::string_view element) noexcept;
/// Covalent radius in Å (Cordero et al., Dalton Trans. 2008, 2832); 1.5 for unknown elements.
[[nodiscard]] double covalent_radius(std::string_view element) noexcept;
/// Bonds from geometry of model `model`: pairs closer than r_a + r_b + tolerance Å (and
/// farther than 0.4 Å), the rule of OpenBabel/RasMol; grid hashing, O(n). Pairs i < j, sorted.
[[nodiscard]] std::vector<std::array<std::size_t, 2>> bonds_by_distance(const Structure& s, std::size_t model = 0,
                                                                        double tolerance = 0.45);

}  // namespace gemflow::io
