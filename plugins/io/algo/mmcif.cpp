// mmCIF _atom_site reader and writer, VTP writer, format dispatch.
#include <cctype>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <ostream>
#include <stdexcept>

#include "gemflow/io/limits.hpp"
#include "gemflow/io/star.hpp"
#include "structure_builder.hpp"
#include "text.hpp"

namespace gemflow::io {

using detail::RawAtom;
using detail::StructureBuilder;
using detail::upper;

namespace {

const StarLoop* find_atom_site(const StarBlock& b) {
  for (const auto& l : b.global.loops)
    if (l.has_category("_atom_site")) return &l;
  for (const auto& f : b.frames)
    for (const auto& l : f.loops)
      if (l.has_category("_atom_site")) return &l;
  return nullptr;
}

double to_double(const StarValue& v, const std::string& path, const char* what) {
  double d = 0;
  const char* b = v.text.data();
  const char* e = b + v.text.size();
  if (b != e && *b == '+') ++b;
  auto [p, ec] = std::from_chars(b, e, d);
  if (ec != std::errc() || p != e || v.is_null() || !std::isfinite(d))
    throw ParseError(path, v.line, std::string("bad ") + what + " '" + v.text + "'");
  return d;
}

double to_coordinate(const StarValue& v, const std::string& path, const char* what) {
  const double d = to_double(v, path, what);
  if (std::fabs(d) > kMaxAbsCoordinate)
    throw ParseError(path, v.line,
                     std::string(what) + " " + v.text + " is beyond the ±1e6 Å that a coordinate may have");
  return d;
}

int to_int(const StarValue& v, const std::string& path, const char* what) {
  int d = 0;
  const char* b = v.text.data();
  const char* e = b + v.text.size();
  if (b != e && *b == '+') ++b;
  auto [p, ec] = std::from_chars(b, e, d);
  if (ec != std::errc() || p != e || v.is_null())
    throw ParseError(path, v.line, std::string("bad ") + what + " '" + v.text + "'");
  return d;
}

}  // namespace

Structure parse_mmcif(std::string_view text, const std::string& path, const ReadStructureOptions& options,
                      std::vector<std::string>* warnings) {
  if (options.model < 0) throw ParseError(path, 0, "model must be >= 0 (0 = all models)");
  StarFile f = parse_star(text, path, options.cancel);
  const StarLoop* loop = find_atom_site(f.blocks.front());
  if (!loop)
    throw ParseError(path, f.blocks.front().line,
                     "no _atom_site loop in data block '" + f.blocks.front().name + "' (the block starting here)");
  auto col = [&](const char* tag) { return loop->column(std::string("_atom_site.") + tag); };
  const int cx = col("cartn_x"), cy = col("cartn_y"), cz = col("cartn_z");
  if (cx < 0 || cy < 0 || cz < 0)
    throw ParseError(path, loop->line, "_atom_site loop has no Cartn_x/Cartn_y/Cartn_z columns");
  const int auth_atom = col("auth_atom_id"), label_atom = col("label_atom_id");
  if (auth_atom < 0 && label_atom < 0)
    throw ParseError(path, loop->line, "_atom_site loop has neither auth_atom_id nor label_atom_id");
  const int auth_comp = col("auth_comp_id"), label_comp = col("label_comp_id");
  const int auth_seq = col("auth_seq_id"), label_seq = col("label_seq_id");
  const int auth_asym = col("auth_asym_id"), label_asym = col("label_asym_id");
  const int type_symbol = col("type_symbol"), alt = col("label_alt_id"), ins = col("pdbx_pdb_ins_code");
  const int model_num = col("pdbx_pdb_model_num"), group = col("group_pdb"), id = col("id");
  const int occ = col("occupancy"), bfac = col("b_iso_or_equiv");

  auto get = [&](std::size_t r, int c) -> const StarValue* {
    if (c < 0) return nullptr;
    const StarValue& v = loop->at(r, static_cast<std::size_t>(c));
    return v.is_null() ? nullptr : &v;
  };
  auto pick = [&](std::size_t r, int auth, int label) -> const StarValue* {
    const StarValue* v = get(r, auth);
    return v ? v : get(r, label);
  };

  StructureBuilder builder(path);
  int current_model = 0;
  bool started = false;
  if (loop->rows() == 0) throw ParseError(path, loop->line, "the _atom_site loop has no rows (no atoms)");
  std::size_t tick = 0;
  for (std::size_t r = 0; r < loop->rows(); ++r) {
    detail::poll_cancel(options.cancel, tick);
    const int line = loop->at(r, 0).line;
    int m = 1;
    if (const StarValue* v = get(r, model_num)) m = to_int(*v, path, "pdbx_PDB_model_num");
    if (!started || m != current_model) {
      builder.begin_model(m, line);
      current_model = m;
      started = true;
    }
    RawAtom a;
    a.line = line;
    const StarValue* name = pick(r, auth_atom, label_atom);
    if (!name) throw ParseError(path, line, "atom without a name (auth_atom_id and label_atom_id are '?' or '.')");
    a.atom.name = name->text;
    if (const StarValue* v = pick(r, auth_comp, label_comp)) a.atom.residue = v->text;
    if (const StarValue* v = pick(r, auth_seq, label_seq)) a.atom.residue_number = to_int(*v, path, "residue number");
    if (const StarValue* v = pick(r, auth_asym, label_asym)) a.atom.chain = v->text;
    if (const StarValue* v = get(r, ins)) a.atom.insertion = v->text;
    if (const StarValue* v = get(r, alt)) a.altloc = v->text;
    if (const StarValue* v = get(r, group)) a.atom.hetero = upper(v->text) == "HETATM";
    if (const StarValue* v = get(r, id)) {
      int serial = 0;
      auto [p, ec] = std::from_chars(v->text.data(), v->text.data() + v->text.size(), serial);
      a.atom.serial = ec == std::errc() && p == v->text.data() + v->text.size() ? serial : -1;
    }
    if (const StarValue* v = get(r, occ)) a.atom.occupancy = to_double(*v, path, "occupancy");
    if (const StarValue* v = get(r, bfac)) a.atom.b_factor = to_double(*v, path, "B_iso_or_equiv");
    a.xyz = {to_coordinate(loop->at(r, static_cast<std::size_t>(cx)), path, "Cartn_x"),
             to_coordinate(loop->at(r, static_cast<std::size_t>(cy)), path, "Cartn_y"),
             to_coordinate(loop->at(r, static_cast<std::size_t>(cz)), path, "Cartn_z")};
    const StarValue* el = get(r, type_symbol);
    a.atom.element = el ? upper(el->text) : detail::infer_element(a.atom.name, "", a.atom.hetero);
    builder.add(std::move(a));
  }
  Structure s = builder.finish(options, warnings);
  // the entry's title (as RCSB writes it), else the block's name
  const StarValue* title = f.blocks.front().global.item("_struct.title");
  s.title = title && !title->is_null() ? title->text : f.blocks.front().name;
  return s;
}

Structure read_mmcif(const std::string& path, const ReadStructureOptions& options, std::vector<std::string>* warnings) {
  return parse_mmcif(read_text_file(path), path, options, warnings);
}

namespace {

std::string cif_value(const std::string& v) {
  if (v.empty()) return ".";
  if (v.find_first_of("\n\r") != std::string::npos)  // a quoted value ends at the line's end
    throw std::invalid_argument("value <" + v + "> holds a line break, which a quoted CIF value cannot");
  bool needs = v == "." || v == "?";
  const char first = v[0];
  if (first == '_' || first == '#' || first == '$' || first == '\'' || first == '"' || first == ';' || first == '[' ||
      first == ']')
    needs = true;
  for (char c : v)
    if (std::isspace(static_cast<unsigned char>(c))) needs = true;
  std::string low = v;
  for (auto& c : low) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  for (const char* w : {"data_", "loop_", "save_", "stop_", "global_"})
    if (low.rfind(w, 0) == 0) needs = true;
  if (!needs) return v;
  if (v.find("\" ") == std::string::npos && v.back() != '"') return "\"" + v + "\"";
  if (v.find("' ") == std::string::npos && v.back() != '\'') return "'" + v + "'";
  throw std::invalid_argument("value <" + v + "> cannot be quoted in CIF 1.1");
}

/// printf's %.<decimals>f of a finite value, as wide as it needs (a fixed buffer cut 1e200).
std::string fixed(double v, int decimals) {
  const int n = std::snprintf(nullptr, 0, "%.*f", decimals, v);
  std::string r(static_cast<std::size_t>(n), '\0');
  std::snprintf(r.data(), r.size() + 1, "%.*f", decimals, v);
  return r;
}

std::string atom_label(const Structure& s, std::size_t i) {
  const Atom& a = s.atoms[i];
  return "atom " + std::to_string(i + 1) + " '" + a.name + "' of " + a.residue + " " + a.chain +
         (a.chain.empty() ? "" : " ") + std::to_string(a.residue_number) + a.insertion;
}

}  // namespace

void write_mmcif(std::ostream& out, const Structure& s, const std::string& block_name) {
  for (const auto& m : s.models)
    if (m.size() != s.atoms.size())
      throw std::invalid_argument("a model has " + std::to_string(m.size()) + " positions for " +
                                  std::to_string(s.atoms.size()) + " atoms");
  // What read_mmcif would refuse is refused here, naming the atom: finite values, coordinates
  // within ±kMaxAbsCoordinate.
  for (std::size_t i = 0; i < s.atoms.size(); ++i) {
    const Atom& a = s.atoms[i];
    if (!std::isfinite(a.occupancy) || !std::isfinite(a.b_factor))
      throw std::invalid_argument(atom_label(s, i) + ": occupancy or B-factor is not a finite number");
    for (std::size_t m = 0; m < s.models.size(); ++m)
      for (double c : s.models[m][i])
        if (!(std::fabs(c) <= kMaxAbsCoordinate))
          throw std::invalid_argument(
              atom_label(s, i) + (s.models.size() > 1 ? " in model " + std::to_string(m + 1) : "") + ": coordinate " +
              fixed(c, 3) + " is not within ±1e6 Å (no reader would take it)");
  }
  std::string name = block_name.empty() ? "gemflow" : block_name;
  for (auto& c : name)
    if (std::isspace(static_cast<unsigned char>(c))) c = '_';
  out << "data_" << name << "\n#\n";
  if (!s.title.empty()) {  // one line; a semicolon text field when quotes cannot hold it
    std::string t = s.title;
    for (auto& c : t)
      if (c == '\n' || c == '\r') c = ' ';
    std::string quoted;
    try {
      quoted = cif_value(t);
    } catch (const std::invalid_argument&) {
      quoted = "\n;" + t + "\n;";
    }
    out << "_struct.title " << quoted << "\n#\n";
  }
  out << "loop_\n";
  for (const char* t :
       {"group_PDB", "id", "type_symbol", "label_atom_id", "label_alt_id", "label_comp_id", "label_asym_id",
        "label_seq_id", "pdbx_PDB_ins_code", "Cartn_x", "Cartn_y", "Cartn_z", "occupancy", "B_iso_or_equiv",
        "auth_seq_id", "auth_comp_id", "auth_asym_id", "auth_atom_id", "pdbx_PDB_model_num"})
    out << "_atom_site." << t << '\n';
  std::size_t serial = 0;
  for (std::size_t m = 0; m < s.models.size(); ++m) {
    for (std::size_t i = 0; i < s.atoms.size(); ++i) {
      const Atom& a = s.atoms[i];
      const Vec3& p = s.models[m][i];
      std::string name_v = cif_value(a.name), comp = cif_value(a.residue), chain = cif_value(a.chain);
      out << (a.hetero ? "HETATM " : "ATOM ") << ++serial << ' ' << cif_value(a.element) << ' ' << name_v << " . "
          << comp << ' ' << chain << " . " << (a.insertion.empty() ? "?" : cif_value(a.insertion)) << ' '
          << fixed(p[0], 3) << ' ' << fixed(p[1], 3) << ' ' << fixed(p[2], 3) << ' ' << fixed(a.occupancy, 2) << ' '
          << fixed(a.b_factor, 2) << ' ' << a.residue_number << ' ' << comp << ' ' << chain << ' ' << name_v << ' '
          << (m + 1) << '\n';
    }
  }
  out << "#\n";
}

void write_vtp(std::ostream& out, const Structure& s, std::size_t model) {
  if (model >= s.models.size())
    throw std::invalid_argument("model index " + std::to_string(model) + " out of range (structure has " +
                                std::to_string(s.models.size()) + " models)");
  const auto& x = s.models[model];
  if (x.size() != s.atoms.size()) throw std::invalid_argument("model size differs from the atom count");
  auto bonds = s.bonds.empty() ? bonds_by_distance(s, model) : s.bonds;
  const std::size_t n = s.atoms.size();
  out << "<?xml version=\"1.0\"?>\n"
         "<VTKFile type=\"PolyData\" version=\"0.1\" byte_order=\"LittleEndian\">\n"
         "  <PolyData>\n"
      << "    <Piece NumberOfPoints=\"" << n << "\" NumberOfVerts=\"" << n << "\" NumberOfLines=\"" << bonds.size()
      << "\" NumberOfStrips=\"0\" NumberOfPolys=\"0\">\n";
  out << "      <PointData Scalars=\"element\">\n"
         "        <DataArray type=\"Int32\" Name=\"element\" format=\"ascii\">\n";
  for (const auto& a : s.atoms) out << "          " << atomic_number(a.element) << '\n';
  out << "        </DataArray>\n"
         "        <DataArray type=\"Int32\" Name=\"residue_number\" format=\"ascii\">\n";
  for (const auto& a : s.atoms) out << "          " << a.residue_number << '\n';
  out << "        </DataArray>\n"
         "        <DataArray type=\"Float64\" Name=\"b_factor\" format=\"ascii\">\n";
  for (const auto& a : s.atoms) out << "          " << fixed(a.b_factor, 3) << '\n';
  out << "        </DataArray>\n"
         "      </PointData>\n"
         "      <Points>\n"
         "        <DataArray type=\"Float64\" NumberOfComponents=\"3\" format=\"ascii\">\n";
  for (const auto& p : x)
    out << "          " << fixed(p[0], 6) << ' ' << fixed(p[1], 6) << ' ' << fixed(p[2], 6) << '\n';
  out << "        </DataArray>\n"
         "      </Points>\n"
         "      <Verts>\n"
         "        <DataArray type=\"Int64\" Name=\"connectivity\" format=\"ascii\">\n";
  for (std::size_t i = 0; i < n; ++i) out << "          " << i << '\n';
  out << "        </DataArray>\n"
         "        <DataArray type=\"Int64\" Name=\"offsets\" format=\"ascii\">\n";
  for (std::size_t i = 0; i < n; ++i) out << "          " << i + 1 << '\n';
  out << "        </DataArray>\n"
         "      </Verts>\n"
         "      <Lines>\n"
         "        <DataArray type=\"Int64\" Name=\"connectivity\" format=\"ascii\">\n";
  for (const auto& b : bonds) {
    if (b[0] >= n || b[1] >= n) throw std::invalid_argument("bond names atom index out of range");
    out << "          " << b[0] << ' ' << b[1] << '\n';
  }
  out << "        </DataArray>\n"
         "        <DataArray type=\"Int64\" Name=\"offsets\" format=\"ascii\">\n";
  for (std::size_t i = 0; i < bonds.size(); ++i) out << "          " << 2 * (i + 1) << '\n';
  out << "        </DataArray>\n"
         "      </Lines>\n"
         "    </Piece>\n"
         "  </PolyData>\n"
         "</VTKFile>\n";
}

StructureFormat structure_format_from_path(const std::string& path) {
  std::string e = detail::lower_ext(path);
  if (e == ".pdb" || e == ".ent") return StructureFormat::Pdb;
  if (e == ".cif" || e == ".mmcif") return StructureFormat::Mmcif;
  if (e == ".vtp") return StructureFormat::Vtp;
  throw ParseError(path, 0,
                   "unknown structure format '" + (e.empty() ? std::string("(no extension)") : e) +
                       "'; expected .pdb, .ent, .cif, .mmcif or .vtp");
}

Structure read_structure(const std::string& path, const ReadStructureOptions& options,
                         std::vector<std::string>* warnings) {
  switch (structure_format_from_path(path)) {
    case StructureFormat::Pdb: return read_pdb(path, options, warnings);
    case StructureFormat::Mmcif: return read_mmcif(path, options, warnings);
    case StructureFormat::Vtp: break;
  }
  throw ParseError(path, 0, ".vtp files are written, not read; read .pdb or .cif");
}

void write_structure(const std::string& path, const Structure& s) {
  StructureFormat f = structure_format_from_path(path);
  std::ofstream out(path, std::ios::binary);
  if (!out) throw std::runtime_error(path + ": cannot open for writing");
  switch (f) {
    case StructureFormat::Pdb: write_pdb(out, s); break;
    case StructureFormat::Mmcif: write_mmcif(out, s); break;
    case StructureFormat::Vtp: write_vtp(out, s); break;
  }
  out.flush();
  if (!out) throw std::runtime_error(path + ": write failed");
}

}  // namespace gemflow::io
