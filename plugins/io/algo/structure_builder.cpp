#include "structure_builder.hpp"

#include <algorithm>
#include <cctype>
#include <set>

namespace gemflow::io::detail {

std::string upper(std::string s) {
  for (auto& c : s) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return s;
}

std::string trim(std::string_view s) {
  std::size_t b = 0, e = s.size();
  while (b < e && std::isspace(static_cast<unsigned char>(s[b]))) ++b;
  while (e > b && std::isspace(static_cast<unsigned char>(s[e - 1]))) --e;
  return std::string(s.substr(b, e - b));
}

std::string infer_element(const std::string& name, const std::string& pdb_name4, bool hetero) {
  std::string letters;
  if (pdb_name4.size() == 4) {
    char c0 = pdb_name4[0], c1 = pdb_name4[1];
    if (c0 == ' ' || std::isdigit(static_cast<unsigned char>(c0))) {
      if (std::isalpha(static_cast<unsigned char>(c1))) return std::string(1, static_cast<char>(std::toupper(c1)));
    } else if (std::isalpha(static_cast<unsigned char>(c0))) {
      std::string two = upper(std::string{c0, c1});
      if (hetero && std::isalpha(static_cast<unsigned char>(c1)) && atomic_number(two) > 0) return two;
      return std::string(1, static_cast<char>(std::toupper(c0)));
    }
  }
  for (char c : name)
    if (std::isalpha(static_cast<unsigned char>(c))) letters += static_cast<char>(std::toupper(c));
  if (letters.empty()) return "";
  if (hetero && letters.size() >= 2 && atomic_number(letters.substr(0, 2)) > 0 &&
      atomic_number(letters.substr(0, 1)) == 0)
    return letters.substr(0, 2);
  if (hetero && letters.size() == 2 && atomic_number(letters) > 0) return letters;
  return letters.substr(0, 1);
}

void StructureBuilder::begin_model(int serial, int line) {
  // a map, not a scan of the models so far: files of many models stay linear
  const auto [it, fresh] = model_lines_.try_emplace(serial, line);
  if (!fresh && line > 0)
    throw ParseError(path_, line,
                     "model " + std::to_string(serial) + " appears twice (first at line " +
                         std::to_string(it->second) + ")");
  models_.push_back({serial, line, {}});
}

namespace {
using ResidueKey = std::tuple<std::string, int, std::string>;
std::string describe(const Atom& a) {
  return "'" + a.name + "' of " + a.residue + " " + a.chain + (a.chain.empty() ? "" : " ") +
         std::to_string(a.residue_number) + a.insertion;
}
bool same_identity(const Atom& a, const Atom& b) {
  return a.name == b.name && a.residue == b.residue && a.residue_number == b.residue_number &&
         a.insertion == b.insertion && a.chain == b.chain;
}
}  // namespace

Structure StructureBuilder::finish(const ReadStructureOptions& options, std::vector<std::string>* warnings,
                                   std::vector<int>* kept_serials) {
  if (models_.empty() || std::all_of(models_.begin(), models_.end(), [](const Model& m) { return m.atoms.empty(); }))
    throw ParseError(path_, 0, "no atoms found in the file (no ATOM/HETATM records or _atom_site rows)");
  // Altloc selection, per model.
  std::size_t dropped_alt = 0;
  std::string alt_example;
  for (auto& m : models_) {
    std::map<ResidueKey, std::string> chosen;
    std::vector<RawAtom> kept;
    kept.reserve(m.atoms.size());
    for (auto& a : m.atoms) {
      if (a.altloc.empty()) {
        kept.push_back(std::move(a));
        continue;
      }
      ResidueKey key{a.atom.chain, a.atom.residue_number, a.atom.insertion};
      auto [it, inserted] = chosen.emplace(key, a.altloc);
      if (it->second == a.altloc) {
        kept.push_back(std::move(a));
      } else {
        ++dropped_alt;
        if (alt_example.empty())
          alt_example = "line " + std::to_string(a.line) + ": altloc " + a.altloc + " of " + describe(a.atom) +
                        " (kept altloc " + it->second + ")";
      }
    }
    m.atoms = std::move(kept);
  }
  if (dropped_alt > 0 && warnings)
    warnings->push_back(std::to_string(dropped_alt) + " atom records of non-first alternate locations dropped, e.g. " +
                        alt_example);
  // Duplicate records of one atom (QA: kept silently; identical ones become zero-distance pairs)
  if (warnings) {
    std::map<std::tuple<std::string, int, std::string, std::string>, int> seen;
    std::size_t dups = 0;
    std::string example;
    for (const auto& a : models_.front().atoms) {
      auto [it, inserted] =
          seen.emplace(std::tuple{a.atom.chain, a.atom.residue_number, a.atom.insertion, a.atom.name}, a.line);
      if (inserted) continue;
      if (dups++ == 0)
        example = "line " + std::to_string(a.line) + " repeats " + describe(a.atom) + " of line " +
                  std::to_string(it->second);
    }
    if (dups > 0)
      warnings->push_back(std::to_string(dups) + " duplicate atom record(s) (same chain, residue and name), e.g. " +
                          example + "; both are kept");
  }
  // Model consistency.
  const Model& first = models_.front();
  for (std::size_t k = 1; k < models_.size(); ++k) {
    const Model& m = models_[k];
    std::size_t n = std::min(m.atoms.size(), first.atoms.size());
    for (std::size_t i = 0; i < n; ++i) {
      if (!same_identity(m.atoms[i].atom, first.atoms[i].atom))
        throw ParseError(path_, m.atoms[i].line,
                         "model " + std::to_string(m.serial) + " atom " + std::to_string(i + 1) + " is " +
                             describe(m.atoms[i].atom) + " but model " + std::to_string(first.serial) + " has " +
                             describe(first.atoms[i].atom) + " (line " + std::to_string(first.atoms[i].line) +
                             "); every model must list the same atoms in the same order");
    }
    if (m.atoms.size() != first.atoms.size())
      throw ParseError(path_, m.line,
                       "model " + std::to_string(m.serial) + " has " + std::to_string(m.atoms.size()) +
                           " atoms but model " + std::to_string(first.serial) + " has " +
                           std::to_string(first.atoms.size()));
  }
  // Model selection.
  std::vector<const Model*> use;
  if (options.model == 0) {
    for (const auto& m : models_) use.push_back(&m);
  } else {
    for (const auto& m : models_)
      if (m.serial == options.model) use.push_back(&m);
    if (use.empty()) {
      std::string have;
      for (const auto& m : models_) have += (have.empty() ? "" : ", ") + std::to_string(m.serial);
      throw ParseError(path_, 0,
                       "model " + std::to_string(options.model) + " requested, but the file has model(s) " + have);
    }
  }
  Structure s;
  s.atoms.reserve(first.atoms.size());
  for (const auto& a : use.front()->atoms) {
    s.atoms.push_back(a.atom);
    if (kept_serials) kept_serials->push_back(a.atom.serial);
  }
  for (const Model* m : use) {
    std::vector<Vec3> xyz;
    xyz.reserve(m->atoms.size());
    for (const auto& a : m->atoms) xyz.push_back(a.xyz);
    s.models.push_back(std::move(xyz));
  }
  return s;
}

}  // namespace gemflow::io::detail
