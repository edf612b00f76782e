// PDB reader and writer (wwPDB format v3.3 fixed columns).
#include <charconv>
#include <cmath>
#include <cstdio>
#include <map>
#include <ostream>
#include <set>
#include <sstream>
#include <stdexcept>
#include <unordered_map>
#include <vector>

#include "gemflow/io/limits.hpp"
#include "gemflow/io/star.hpp"
#include "structure_builder.hpp"
#include "text.hpp"

namespace gemflow::io {

using detail::RawAtom;
using detail::StructureBuilder;
using detail::trim;
using detail::upper;

namespace {

/// Columns [first, last] (1-based, inclusive) of a line; shorter lines give what is there.
std::string_view cols(std::string_view line, std::size_t first, std::size_t last) {
  if (line.size() < first) return {};
  return line.substr(first - 1, std::min(last, line.size()) - first + 1);
}

bool parse_double(std::string_view field, double& out) {
  std::string t = trim(field);
  if (t.empty()) return false;
  const char* b = t.data();
  if (*b == '+') ++b;
  auto [p, ec] = std::from_chars(b, t.data() + t.size(), out);
  return ec == std::errc() && p == t.data() + t.size() && std::isfinite(out);
}

bool parse_int(std::string_view field, int& out) {
  std::string t = trim(field);
  if (t.empty()) return false;
  const char* b = t.data();
  if (*b == '+') ++b;
  auto [p, ec] = std::from_chars(b, t.data() + t.size(), out);
  return ec == std::errc() && p == t.data() + t.size();
}

}  // namespace

Structure parse_pdb(std::string_view text, const std::string& path, const ReadStructureOptions& options,
                    std::vector<std::string>* warnings) {
  if (options.model < 0) throw ParseError(path, 0, "model must be >= 0 (0 = all models)");
  std::string storage;  // QA: CR-only line endings read as one line: 1 atom of 40
  text = detail::prepared_text(text, path, storage);
  StructureBuilder builder(path);
  std::string title, header_id;
  bool file_has_models = false, in_model = false, atoms_before_models = false;
  int model_line = 0, first_atom_line = 0;
  struct Conect {
    int line;
    int from;
    std::vector<int> to;
  };
  std::vector<Conect> conects;

  std::size_t pos = 0, tick = 0;
  int lineno = 0;
  while (pos < text.size()) {
    detail::poll_cancel(options.cancel, tick);
    std::size_t nl = text.find('\n', pos);
    std::string_view line = text.substr(pos, nl == std::string_view::npos ? std::string_view::npos : nl - pos);
    pos = nl == std::string_view::npos ? text.size() : nl + 1;
    ++lineno;
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    std::string rec = trim(cols(line, 1, 6));
    if (rec == "ATOM" || rec == "HETATM") {
      if (file_has_models && !in_model)
        throw ParseError(path, lineno, rec + " record outside MODEL/ENDMDL (the file has MODEL records)");
      if (!builder.has_models()) {
        builder.begin_model(1, 0);
        atoms_before_models = true;
        first_atom_line = lineno;
      }
      if (line.size() < 54)
        throw ParseError(
            path, lineno,
            rec + " record has " + std::to_string(line.size()) + " columns; the coordinates need columns 31-54");
      RawAtom a;
      a.line = lineno;
      a.atom.hetero = rec == "HETATM";
      if (!parse_int(cols(line, 7, 11), a.atom.serial)) a.atom.serial = -1;  // hex or ***** serials
      std::string name4(cols(line, 13, 16));
      a.atom.name = trim(name4);
      if (a.atom.name.empty()) throw ParseError(path, lineno, "empty atom name (columns 13-16)");
      a.altloc = trim(cols(line, 17, 17));
      a.atom.residue = trim(cols(line, 18, 21));
      a.atom.chain = trim(cols(line, 22, 22));
      if (!parse_int(cols(line, 23, 26), a.atom.residue_number))
        throw ParseError(path, lineno, "bad residue number '" + std::string(cols(line, 23, 26)) + "' (columns 23-26)");
      a.atom.insertion = trim(cols(line, 27, 27));
      static const char* axis[3] = {"x", "y", "z"};
      for (int c = 0; c < 3; ++c) {
        std::size_t first = 31 + 8 * static_cast<std::size_t>(c);
        if (!parse_double(cols(line, first, first + 7), a.xyz[static_cast<std::size_t>(c)]))
          throw ParseError(path, lineno,
                           std::string("bad ") + axis[c] + " coordinate '" + std::string(cols(line, first, first + 7)) +
                               "' (columns " + std::to_string(first) + "-" + std::to_string(first + 7) + ")");
        if (std::fabs(a.xyz[static_cast<std::size_t>(c)]) > kMaxAbsCoordinate)  // "1e300" fits 8 columns
          throw ParseError(path, lineno,
                           std::string(axis[c]) + " coordinate '" + trim(cols(line, first, first + 7)) + "' (columns " +
                               std::to_string(first) + "-" + std::to_string(first + 7) +
                               ") is beyond the ±1e6 Å that a coordinate may have");
      }
      std::string occ = trim(cols(line, 55, 60)), b = trim(cols(line, 61, 66));
      if (!occ.empty() && !parse_double(occ, a.atom.occupancy))
        throw ParseError(path, lineno, "bad occupancy '" + occ + "' (columns 55-60)");
      if (!b.empty() && !parse_double(b, a.atom.b_factor))
        throw ParseError(path, lineno, "bad B-factor '" + b + "' (columns 61-66)");
      a.atom.segment = trim(cols(line, 73, 76));
      std::string el = upper(trim(cols(line, 77, 78)));
      bool alpha = !el.empty();
      for (char ch : el) alpha = alpha && std::isalpha(static_cast<unsigned char>(ch));
      a.atom.element = alpha ? el : detail::infer_element(a.atom.name, name4.size() == 4 ? name4 : "", a.atom.hetero);
      builder.add(std::move(a));
    } else if (rec == "MODEL") {
      if (in_model)
        throw ParseError(path, lineno,
                         "MODEL inside the model opened at line " + std::to_string(model_line) + " (missing ENDMDL)");
      if (atoms_before_models) throw ParseError(path, first_atom_line, "atom records before the first MODEL record");
      int serial = 0;
      std::string field = trim(line.size() > 6 ? line.substr(6) : std::string_view{});
      if (!parse_int(field, serial)) throw ParseError(path, lineno, "bad MODEL serial number '" + field + "'");
      builder.begin_model(serial, lineno);
      file_has_models = in_model = true;
      model_line = lineno;
    } else if (rec == "ENDMDL") {
      if (!in_model) throw ParseError(path, lineno, "ENDMDL without MODEL");
      in_model = false;
    } else if (rec == "CONECT") {
      Conect c{lineno, 0, {}};
      if (!parse_int(cols(line, 7, 11), c.from))
        throw ParseError(path, lineno, "bad CONECT serial '" + std::string(cols(line, 7, 11)) + "' (columns 7-11)");
      for (std::size_t f = 12; f <= 27; f += 5) {
        std::string field = trim(cols(line, f, f + 4));
        if (field.empty()) continue;
        int to = 0;
        if (!parse_int(field, to))
          throw ParseError(
              path, lineno,
              "bad CONECT serial '" + field + "' (columns " + std::to_string(f) + "-" + std::to_string(f + 4) + ")");
        c.to.push_back(to);
      }
      conects.push_back(std::move(c));
    } else if (rec == "TITLE") {
      std::string t = trim(cols(line, 11, 80));
      if (!t.empty()) title += (title.empty() ? "" : " ") + t;
    } else if (rec == "HEADER") {
      header_id = trim(cols(line, 63, 66));
    } else if (rec == "END") {
      break;
    }
  }
  if (in_model && warnings) warnings->push_back("MODEL of line " + std::to_string(model_line) + " has no ENDMDL");

  std::vector<int> serials;
  Structure s = builder.finish(options, warnings, &serials);
  s.title = !title.empty() ? title : header_id;
  if (!conects.empty()) {
    std::unordered_map<int, std::size_t> index;
    for (std::size_t i = 0; i < serials.size(); ++i)
      if (serials[i] >= 0) index.emplace(serials[i], i);
    std::set<std::array<std::size_t, 2>> bonds;
    std::size_t unknown = 0;
    int example_line = 0, example_serial = 0;
    for (const auto& c : conects) {
      auto from = index.find(c.from);
      for (int to : c.to) {
        auto t = index.find(to);
        if (from == index.end() || t == index.end()) {
          if (unknown++ == 0) {
            example_line = c.line;
            example_serial = from == index.end() ? c.from : to;
          }
          continue;
        }
        if (from->second == t->second) continue;
        bonds.insert({std::min(from->second, t->second), std::max(from->second, t->second)});
      }
    }
    s.bonds.assign(bonds.begin(), bonds.end());
    if (unknown > 0 && warnings)
      warnings->push_back(std::to_string(unknown) + " CONECT bond(s) name atoms that were not kept, e.g. serial " +
                          std::to_string(example_serial) + " at line " + std::to_string(example_line));
  }
  return s;
}

Structure read_pdb(const std::string& path, const ReadStructureOptions& options, std::vector<std::string>* warnings) {
  return parse_pdb(read_text_file(path), path, options, warnings);
}

namespace {

std::string pdb_atom_name(const Atom& a) {
  const std::string& n = a.name;
  if (n.size() >= 4) return n.substr(0, 4);
  // One-letter element whose name starts with that letter: the name starts in column 14.
  if (a.element.size() <= 1 && !n.empty() && std::isalpha(static_cast<unsigned char>(n[0])))
    return " " + n + std::string(3 - n.size(), ' ');
  return n + std::string(4 - n.size(), ' ');
}

/// "atom 12 'CA' of ALA A 7" for writer errors.
std::string atom_label(const Structure& s, std::size_t i) {
  const Atom& a = s.atoms[i];
  return "atom " + std::to_string(i + 1) + " '" + a.name + "' of " + a.residue + " " + a.chain +
         (a.chain.empty() ? "" : " ") + std::to_string(a.residue_number) + a.insertion;
}

std::string shown(double v) {
  char b[32];
  std::snprintf(b, sizeof b, "%.10g", v);
  return b;
}

/// Refuses what PDB's fixed columns cannot hold: written anyway, a wide number shifts the
/// columns after it and a long line merges with the next record.
void check_fits(const Structure& s) {
  if (s.atoms.size() > 99999)
    throw std::invalid_argument("PDB holds at most 99999 atoms (structure has " + std::to_string(s.atoms.size()) +
                                "); write .cif instead");
  for (std::size_t i = 0; i < s.atoms.size(); ++i) {
    const Atom& a = s.atoms[i];
    if (a.residue_number < -999 || a.residue_number > 9999)
      throw std::invalid_argument("residue number " + std::to_string(a.residue_number) +
                                  " does not fit PDB columns 23-26; write .cif instead");
    if (a.chain.size() > 1)
      throw std::invalid_argument("chain id '" + a.chain + "' is longer than one character; write .cif instead");
    if (a.residue.size() > 4 || a.name.size() > 4 || a.segment.size() > 4 || a.insertion.size() > 1 ||
        a.element.size() > 2)
      throw std::invalid_argument("atom '" + a.name + "' of residue '" + a.residue +
                                  "' has a field too long for PDB columns; write .cif instead");
    for (const std::string* f : {&a.name, &a.residue, &a.chain, &a.insertion, &a.segment, &a.element})
      for (const char c : *f)
        if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f)
          throw std::invalid_argument(atom_label(s, i) +
                                      " has a control character in a name field, which "
                                      "would break the PDB line");
    // %6.2f in columns 55-60 and 61-66
    if (!(a.occupancy > -99.995 && a.occupancy < 999.995))
      throw std::invalid_argument(atom_label(s, i) + ": occupancy " + shown(a.occupancy) +
                                  " does not fit PDB columns 55-60 (-99.99..999.99); write .cif instead");
    if (!(a.b_factor > -99.995 && a.b_factor < 999.995))
      throw std::invalid_argument(atom_label(s, i) + ": B-factor " + shown(a.b_factor) +
                                  " does not fit PDB columns 61-66 (-99.99..999.99); write .cif instead");
  }
  for (std::size_t m = 0; m < s.models.size(); ++m)
    for (std::size_t i = 0; i < s.models[m].size() && i < s.atoms.size(); ++i)
      for (int c = 0; c < 3; ++c) {
        const double v = s.models[m][i][static_cast<std::size_t>(c)];
        if (!(v > -999.9995 && v < 9999.9995))
          throw std::invalid_argument(
              atom_label(s, i) + (s.models.size() > 1 ? " in model " + std::to_string(m + 1) : "") + ": " + "xyz"[c] +
              " coordinate " + shown(v) +
              " does not fit PDB columns 31-54 (%8.3f: -999.999..9999.999); write .cif instead");
      }
}

}  // namespace

void write_pdb(std::ostream& out, const Structure& s) {
  check_fits(s);
  for (const auto& m : s.models)
    if (m.size() != s.atoms.size())
      throw std::invalid_argument("a model has " + std::to_string(m.size()) + " positions for " +
                                  std::to_string(s.atoms.size()) + " atoms");
  char buf[128];
  // TITLE: columns 11-80, continuations numbered in 9-10 with a blank in 11 (PDB format 3.3),
  // wrapped between words: the reader joins the lines with one space, so a title read back and
  // written again is the same (cut every 70 characters, a word split in two came back as two).
  // Runs of blanks become one; only a word longer than a line is cut.
  std::istringstream words(s.title);
  std::vector<std::string> lines;
  for (std::string w; words >> w;) {
    const std::size_t room = lines.size() <= 1 ? 70 : 69;  // first line: 70 columns
    if (!lines.empty() && lines.back().size() + 1 + w.size() <= room) {
      lines.back() += " " + w;
      continue;
    }
    for (std::size_t limit = lines.empty() ? 70 : 69; w.size() > limit; limit = 69) {
      lines.push_back(w.substr(0, limit));
      w = w.substr(limit);
    }
    lines.push_back(w);
  }
  for (std::size_t k = 0; k < lines.size() && k < 99; ++k) {
    if (k == 0) std::snprintf(buf, sizeof buf, "TITLE     %-70s\n", lines[k].c_str());
    else std::snprintf(buf, sizeof buf, "TITLE   %2zu %-69s\n", k + 1, lines[k].c_str());
    out << buf;
  }
  const bool multi = s.models.size() > 1;
  for (std::size_t m = 0; m < s.models.size(); ++m) {
    if (multi) {
      std::snprintf(buf, sizeof buf, "MODEL     %4zu\n", m + 1);
      out << buf;
    }
    int serial = 0;
    for (std::size_t i = 0; i < s.atoms.size(); ++i) {
      const Atom& a = s.atoms[i];
      const Vec3& p = s.models[m][i];
      std::snprintf(buf, sizeof buf, "%-6s%5d %-4s %-4s%1s%4d%1s   %8.3f%8.3f%8.3f%6.2f%6.2f      %-4s%2s\n",
                    a.hetero ? "HETATM" : "ATOM", ++serial, pdb_atom_name(a).c_str(), a.residue.c_str(),
                    a.chain.c_str(), a.residue_number, a.insertion.c_str(), p[0], p[1], p[2], a.occupancy, a.b_factor,
                    a.segment.c_str(), a.element.c_str());
      out << buf;
      bool chain_ends = i + 1 == s.atoms.size() || s.atoms[i + 1].chain != a.chain;
      if (chain_ends && !a.hetero) {
        std::snprintf(buf, sizeof buf, "TER   %5d      %-4s%1s%4d%1s\n", ++serial, a.residue.c_str(), a.chain.c_str(),
                      a.residue_number, a.insertion.c_str());
        out << buf;
      }
    }
    if (multi) out << "ENDMDL\n";
  }
  if (!s.bonds.empty()) {
    // Serials of the first model (TER records take a serial too).
    std::vector<int> serial(s.atoms.size());
    int k = 0;
    for (std::size_t i = 0; i < s.atoms.size(); ++i) {
      serial[i] = ++k;
      bool chain_ends = i + 1 == s.atoms.size() || s.atoms[i + 1].chain != s.atoms[i].chain;
      if (chain_ends && !s.atoms[i].hetero) ++k;
    }
    std::map<std::size_t, std::vector<std::size_t>> adj;
    for (const auto& b : s.bonds) {
      if (b[0] >= s.atoms.size() || b[1] >= s.atoms.size())
        throw std::invalid_argument("bond names atom index out of range");
      adj[b[0]].push_back(b[1]);
      adj[b[1]].push_back(b[0]);
    }
    for (const auto& [i, nb] : adj) {
      for (std::size_t f = 0; f < nb.size(); f += 4) {
        std::string line = "CONECT";
        std::snprintf(buf, sizeof buf, "%5d", serial[i]);
        line += buf;
        for (std::size_t j = f; j < std::min(nb.size(), f + 4); ++j) {
          std::snprintf(buf, sizeof buf, "%5d", serial[nb[j]]);
          line += buf;
        }
        out << line << '\n';
      }
    }
  }
  out << "END\n";
}

}  // namespace gemflow::io
