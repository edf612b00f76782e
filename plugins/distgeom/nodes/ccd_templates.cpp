// Residue templates from CCD mmCIF entries (ccd_templates.hpp).
#include "ccd_templates.hpp"

#include <cctype>
#include <charconv>
#include <optional>
#include <utility>
#include <vector>

#include <gemflow/io/errors.hpp>
#include <gemflow/io/star.hpp>

namespace gemflow::distgeom::nodes {

// Generated at configure time from data/ccd/*.cif (plugins/distgeom/CMakeLists.txt).
const std::vector<std::pair<const char*, const char*>>& ccd_entries();

namespace {

// The table holding `tag`: a loop, or the category's items outside a loop (one row, as the CCD
// writes a one-atom entry such as an ion); nullopt when neither has it.
std::optional<io::StarLoop> find_table(const io::StarFile& f, std::string_view tag) {
  const std::string category(tag.substr(0, tag.find('.') + 1));
  auto from_items = [&](const io::StarFrame& fr) -> std::optional<io::StarLoop> {
    if (!fr.item(tag)) return std::nullopt;
    io::StarLoop l;
    for (const auto& [t, v] : fr.items)
      if (t.starts_with(category)) {
        l.tags.push_back(t);
        l.values.push_back(v);
      }
    l.line = l.values.front().line;
    return l;
  };
  for (const auto& b : f.blocks) {
    for (const auto& l : b.global.loops)
      if (l.column(tag) >= 0) return l;
    if (auto l = from_items(b.global)) return l;
    for (const auto& fr : b.frames) {
      for (const auto& l : fr.loops)
        if (l.column(tag) >= 0) return l;
      if (auto l = from_items(fr)) return l;
    }
  }
  return std::nullopt;
}

int column(const io::StarLoop& l, std::string_view tag, const std::string& source) {
  const int c = l.column(tag);
  if (c < 0) throw io::ParseError(source, l.line, "loop without column " + std::string(tag));
  return c;
}

double number(const io::StarValue& v, const std::string& source) {
  double x = 0;
  const auto* end = v.text.data() + v.text.size();
  const auto r = std::from_chars(v.text.data(), end, x);
  if (r.ec != std::errc() || r.ptr != end) throw io::ParseError(source, v.line, "'" + v.text + "' is not a number");
  return x;
}

}  // namespace

ResidueTemplate parse_ccd_entry(std::string_view text, const std::string& source) {
  const io::StarFile f = io::parse_star(text, source);
  ResidueTemplate t;
  if (!f.blocks.empty()) {
    t.id = f.blocks.front().name;
    if (const auto* type = f.blocks.front().global.item("_chem_comp.type")) t.type = type->text;
    for (auto& ch : t.type) ch = static_cast<char>(std::toupper(static_cast<unsigned char>(ch)));
  }
  const auto atoms = find_table(f, "_chem_comp_atom.atom_id");
  if (!atoms) throw io::ParseError(source, 0, "no _chem_comp_atom.atom_id (loop or item)");
  const io::StarLoop& al = *atoms;
  const int c_id = column(al, "_chem_comp_atom.atom_id", source),
            c_el = column(al, "_chem_comp_atom.type_symbol", source),
            c_leave = column(al, "_chem_comp_atom.pdbx_leaving_atom_flag", source),
            c_x = column(al, "_chem_comp_atom.pdbx_model_cartn_x_ideal", source),
            c_y = column(al, "_chem_comp_atom.pdbx_model_cartn_y_ideal", source),
            c_z = column(al, "_chem_comp_atom.pdbx_model_cartn_z_ideal", source);
  for (std::size_t r = 0; r < al.rows(); ++r) {
    TemplateAtom a;
    a.name = al.at(r, c_id).text;
    a.element = al.at(r, c_el).text;
    for (auto& ch : a.element) ch = static_cast<char>(std::toupper(static_cast<unsigned char>(ch)));
    a.leaving = al.at(r, c_leave).text == "Y";
    a.xyz = {number(al.at(r, c_x), source), number(al.at(r, c_y), source), number(al.at(r, c_z), source)};
    t.atoms.push_back(std::move(a));
  }
  const auto bonds = find_table(f, "_chem_comp_bond.atom_id_1");
  // a one-atom entry (an ion) has no bond table
  if (!bonds && t.atoms.size() == 1) return t;
  if (!bonds) throw io::ParseError(source, 0, "no _chem_comp_bond.atom_id_1 (loop or item)");
  const io::StarLoop& bl = *bonds;
  const int c1 = column(bl, "_chem_comp_bond.atom_id_1", source), c2 = column(bl, "_chem_comp_bond.atom_id_2", source);
  for (std::size_t r = 0; r < bl.rows(); ++r) {
    const std::size_t i = t.find(bl.at(r, c1).text), j = t.find(bl.at(r, c2).text);
    if (i == t.atoms.size() || j == t.atoms.size())
      throw io::ParseError(
          source, bl.at(r, c1).line,
          "bond " + bl.at(r, c1).text + "-" + bl.at(r, c2).text + " names an atom not in _chem_comp_atom");
    t.bonds.push_back({i, j});
  }
  return t;
}

const std::map<std::string, ResidueTemplate>& standard_templates() {
  static const std::map<std::string, ResidueTemplate> m = [] {
    std::map<std::string, ResidueTemplate> out;
    for (const auto& [id, text] : ccd_entries()) {
      auto t = parse_ccd_entry(text, std::string("plugins/distgeom/data/ccd/") + id + ".cif");
      t.id = id;
      out.emplace(id, std::move(t));
    }
    return out;
  }();
  return m;
}

std::string three_letter(char one) {
  switch (std::toupper(static_cast<unsigned char>(one))) {
    case 'A': return "ALA";
    case 'R': return "ARG";
    case 'N': return "ASN";
    case 'D': return "ASP";
    case 'C': return "CYS";
    case 'Q': return "GLN";
    case 'E': return "GLU";
    case 'G': return "GLY";
    case 'H': return "HIS";
    case 'I': return "ILE";
    case 'L': return "LEU";
    case 'K': return "LYS";
    case 'M': return "MET";
    case 'F': return "PHE";
    case 'P': return "PRO";
    case 'S': return "SER";
    case 'T': return "THR";
    case 'W': return "TRP";
    case 'Y': return "TYR";
    case 'V': return "VAL";
    default: return {};
  }
}

}  // namespace gemflow::distgeom::nodes
