#pragma once
// Protein atom and residue nomenclature across the conventions that restraint files and
// structures use: IUPAC (= BMRB and NEF), PDB format v3, X-PLOR/CNS/Xplor-NIH (CHARMM topology),
// CYANA and AMBER, plus the old PDB v2 names.
//
// Sources:
//  - Markley, Bax, Arata, Hilbers, Kaptein, Sykes, Wright & Wüthrich, "Recommendations for the
//    presentation of NMR structures of proteins and nucleic acids", Pure Appl. Chem. 70,
//    117-142 (1998) (IUPAC-IUBMB-IUPAB): H, H1-H3 (NH3+), O'/O'' (COO-), HB2/HB3, Ile CD1/HD11.
//  - BMRB atom nomenclature table (https://bmrb.io/ref_info/atom_nom.tbl): the X-PLOR column
//    (HN, HT1-HT3, OT1/OT2, Ile CD/HD1-HD3, methylene X1/X2 for IUPAC X3/X2).
//  - wwPDB format v3.0 remediation (2007): IUPAC names except the C-terminal OXT/HXT; v2
//    names with a leading digit (1HB, 2HG1) map to v3 by moving the digit (methylene pairs
//    1HB/2HB → HB2/HB3).
//  - CHARMM22 protein topology (top_all22_prot.rtf; Xplor-NIH protein.top): HN, HT1-3, OT1/OT2.
//  - AMBER ff14SB libraries: IUPAC names, N-terminal H1-H3, C-terminal OXT; residue variants
//    HID/HIE/HIP, CYX/CYM, ASH, GLH, LYN and terminal residues NALA/CALA...; CHARMM HSD/HSE/HSP.
#include <string>
#include <string_view>
#include <vector>

namespace gemflow::io {

/// One row of the nomenclature table: the names one atom has in each convention ("" when the
/// convention has no other name than IUPAC's). `residues` is "*" (any amino acid) or a
/// space-separated list of residue names; `scope` says where the row applies.
struct NomenclatureRow {
  enum class Scope { Any, NTerminus, CTerminus };
  const char* residues;
  Scope scope;
  const char* iupac;
  const char* pdb;
  const char* xplor;
  const char* cyana;
  const char* amber;
  const char* other;  ///< further aliases (GROMACS OC1/OC2, the IUPAC ASCII spelling O1 ...)
};

/// The whole table (static storage).
[[nodiscard]] const std::vector<NomenclatureRow>& nomenclature_table();

/// The names of a row, without duplicates or empty ones.
[[nodiscard]] std::vector<std::string> row_names(const NomenclatureRow& row);

/// Whether the row applies to residue `residue` (upper case, canonical: see canonical_residue).
[[nodiscard]] bool row_applies(const NomenclatureRow& row, std::string_view residue);

/// The standard residue name of a force-field or protonation variant: HID/HIE/HIP/HSD/HSE/HSP
/// → HIS, CYX/CYM → CYS, ASH → ASP, GLH → GLU, LYN → LYS, NALA/CALA (AMBER termini) → ALA ...;
/// any other name upper-cased and unchanged.
[[nodiscard]] std::string canonical_residue(std::string_view residue);

/// The IUPAC/PDB v3 name of an old PDB v2 atom name with a leading digit ("1HB" → "HB1",
/// "2HG1" → "HG12"); "" when `name` does not start with a digit. The caller resolves the
/// methylene shift (v2 1HB/2HB = v3 HB2/HB3) against the atoms present.
[[nodiscard]] std::string pdb_v2_to_v3(std::string_view name);

}  // namespace gemflow::io
