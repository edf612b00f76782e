// Protein nomenclature table (sources in gemflow/io/nomenclature.hpp).
#include "gemflow/io/nomenclature.hpp"

#include <algorithm>
#include <cctype>
#include <map>

namespace gemflow::io {

namespace {

std::string upper(std::string_view s) {
  std::string o(s);
  for (auto& c : o) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return o;
}

}  // namespace

const std::vector<NomenclatureRow>& nomenclature_table() {
  using S = NomenclatureRow::Scope;
  // residues, scope, IUPAC, PDB v3, X-PLOR/CNS/Xplor-NIH, CYANA, AMBER, other
  static const std::vector<NomenclatureRow> t = {
      // Amide proton.
      {"*", S::Any, "H", "H", "HN", "H", "H", ""},
      // N-terminal NH3+ (proline: H2/H3 on N, X-PLOR HT1/HT2).
      {"*", S::NTerminus, "H1", "H1", "HT1", "H1", "H1", ""},
      {"*", S::NTerminus, "H2", "H2", "HT2", "H2", "H2", ""},
      {"*", S::NTerminus, "H3", "H3", "HT3", "H3", "H3", ""},
      // C-terminal carboxylate: IUPAC O'/O''; PDB and AMBER O/OXT; CHARMM/X-PLOR OT1/OT2.
      {"*", S::CTerminus, "O'", "O", "OT1", "O", "O", "OC1"},
      {"*", S::CTerminus, "O''", "OXT", "OT2", "OXT", "OXT", "OC2"},
      // Isoleucine delta methyl: CHARMM/X-PLOR CD, HD1-HD3.
      {"ILE", S::Any, "CD1", "CD1", "CD", "CD1", "CD1", ""},
      {"ILE", S::Any, "HD11", "HD11", "HD1", "HD11", "HD11", ""},
      {"ILE", S::Any, "HD12", "HD12", "HD2", "HD12", "HD12", ""},
      {"ILE", S::Any, "HD13", "HD13", "HD3", "HD13", "HD13", ""},
  };
  return t;
}

std::vector<std::string> row_names(const NomenclatureRow& row) {
  std::vector<std::string> out;
  for (const char* n : {row.iupac, row.pdb, row.xplor, row.cyana, row.amber, row.other})
    if (n && *n && std::find(out.begin(), out.end(), n) == out.end()) out.emplace_back(n);
  return out;
}

bool row_applies(const NomenclatureRow& row, std::string_view residue) {
  const std::string_view list = row.residues;
  if (list == "*") return true;
  std::size_t b = 0;
  while (b < list.size()) {
    std::size_t e = list.find(' ', b);
    if (e == std::string_view::npos) e = list.size();
    if (list.substr(b, e - b) == residue) return true;
    b = e + 1;
  }
  return false;
}

std::string canonical_residue(std::string_view residue) {
  static const std::map<std::string, std::string> variants = {
      {"HID", "HIS"}, {"HIE", "HIS"}, {"HIP", "HIS"}, {"HSD", "HIS"}, {"HSE", "HIS"}, {"HSP", "HIS"},
      {"CYX", "CYS"}, {"CYM", "CYS"}, {"ASH", "ASP"}, {"GLH", "GLU"}, {"LYN", "LYS"}};
  static const std::vector<std::string> standard = {"ALA", "ARG", "ASN", "ASP", "CYS", "GLN", "GLU",
                                                    "GLY", "HIS", "ILE", "LEU", "LYS", "MET", "PHE",
                                                    "PRO", "SER", "THR", "TRP", "TYR", "VAL"};
  std::string r = upper(residue);
  // AMBER terminal residues: N/C + a standard or variant name (NALA, CHIE).
  if (r.size() == 4 && (r[0] == 'N' || r[0] == 'C')) {
    const std::string rest = r.substr(1);
    if (variants.count(rest) || std::find(standard.begin(), standard.end(), rest) != standard.end()) r = rest;
  }
  if (auto it = variants.find(r); it != variants.end()) return it->second;
  return r;
}

std::string pdb_v2_to_v3(std::string_view name) {
  if (name.size() < 2 || !std::isdigit(static_cast<unsigned char>(name[0]))) return "";
  return upper(name.substr(1)) + name[0];
}

}  // namespace gemflow::io
