// Resolution of restraint atom selections against a Structure.
#include <algorithm>
#include <cctype>
#include <map>
#include <set>
#include <unordered_map>

#include "gemflow/io/errors.hpp"
#include "gemflow/io/restraints_io.hpp"

namespace gemflow::io {

namespace {

char up(char c) { return static_cast<char>(std::toupper(static_cast<unsigned char>(c))); }
bool digit(char c) { return std::isdigit(static_cast<unsigned char>(c)) != 0; }

bool match_xplor(std::string_view p, std::string_view n) {
  if (p.empty()) return n.empty();
  char c = p[0];
  if (c == '*') {
    for (std::size_t k = 0; k <= n.size(); ++k)
      if (match_xplor(p.substr(1), n.substr(k))) return true;
    return false;
  }
  if (c == '#') {  // one or more digits
    for (std::size_t k = 1; k <= n.size() && digit(n[k - 1]); ++k)
      if (match_xplor(p.substr(1), n.substr(k))) return true;
    return false;
  }
  if (n.empty()) return false;
  if (c == '%') return match_xplor(p.substr(1), n.substr(1));
  if (c == '+') return digit(n[0]) && match_xplor(p.substr(1), n.substr(1));
  return up(c) == up(n[0]) && match_xplor(p.substr(1), n.substr(1));
}

bool match_nef(std::string_view p, std::string_view n) {
  if (p.empty()) return n.empty();
  char c = p[0];
  if (c == '*') {
    for (std::size_t k = 0; k <= n.size(); ++k)
      if (match_nef(p.substr(1), n.substr(k))) return true;
    return false;
  }
  if (c == '%') {
    for (std::size_t k = 1; k <= n.size() && digit(n[k - 1]); ++k)
      if (match_nef(p.substr(1), n.substr(k))) return true;
    return false;
  }
  if (n.empty()) return false;
  if (c == 'x' || c == 'y') return digit(n[0]) && match_nef(p.substr(1), n.substr(1));
  return up(c) == up(n[0]) && match_nef(p.substr(1), n.substr(1));
}

std::string upper(std::string s) {
  for (auto& c : s) c = up(c);
  return s;
}

struct Counter {
  std::size_t count = 0;
  std::vector<std::string> examples;
  void add(std::string example, std::size_t max) {
    ++count;
    if (examples.size() < max) examples.push_back(std::move(example));
  }
  [[nodiscard]] std::string joined() const {
    std::string s;
    for (const auto& e : examples) s += (s.empty() ? "" : "; ") + e;
    return s;
  }
};

std::string where(const RestraintSet& set, const AtomSelector& sel, const DistanceRestraint& r) {
  return (sel.line > 0 ? set.source + ":" + std::to_string(sel.line) : r.origin) + " (restraint " +
         std::to_string(r.id) + ")";
}

}  // namespace

bool atom_name_matches(std::string_view pattern, std::string_view name, std::string_view dialect) {
  return dialect == "nef" ? match_nef(pattern, name) : match_xplor(pattern, name);
}

double pseudo_atom_correction(const std::string& residue, const std::vector<std::string>& names_in) {
  if (names_in.size() <= 1) return 0.0;
  std::vector<std::string> names;
  for (const auto& n : names_in) names.push_back(upper(n));
  std::sort(names.begin(), names.end());
  for (const auto& n : names)
    if (n.size() < 2 || n[0] != 'H') return -1.0;  // groups of hydrogens only
  const std::string res = upper(residue);
  const bool aromatic = res == "PHE" || res == "TYR";
  auto stem = [](const std::string& n) { return n.substr(0, n.size() - 1); };
  auto same_stem = [&](std::size_t b, std::size_t e) {
    for (std::size_t i = b; i < e; ++i)
      if (stem(names[i]) != stem(names[b]) || !digit(names[i].back())) return false;
    return true;
  };
  if ((names.size() == 2 || names.size() == 3) && same_stem(0, names.size())) {
    const std::string st = stem(names[0]);
    if (aromatic && names.size() == 2 && (st == "HD" || st == "HE")) return 2.0;  // ring QD / QE
    return 1.0;                                                                    // CH2, NH2, CH3, NH3+
  }
  if (names.size() == 6 && same_stem(0, 3) && same_stem(3, 6)) {
    const std::string s1 = stem(names[0]), s2 = stem(names[3]);
    if (s1.size() == 3 && s2.size() == 3 && s1.substr(0, 2) == s2.substr(0, 2) && s1 != s2) return 2.4;  // QQG, QQD
  }
  if (aromatic && names.size() >= 4) {
    static const std::set<std::string> ring = {"HD1", "HD2", "HE1", "HE2", "HZ", "HH"};
    if (std::all_of(names.begin(), names.end(), [](const std::string& n) { return ring.count(n) > 0; })) return 2.4;
  }
  return -1.0;
}

ResolveReport resolve_restraints(RestraintSet& set, const Structure& s, const ResolveOptions& options) {
  const std::size_t mx = options.max_examples;
  const std::string dialect = set.format.empty() ? "xplor" : set.format;
  std::unordered_map<int, std::vector<std::size_t>> by_residue;
  for (std::size_t i = 0; i < s.atoms.size(); ++i) by_residue[s.atoms[i].residue_number].push_back(i);

  Counter renamed, pseudo_names, wildcards, name_mismatch, unknown, no_correction, corrected, ambiguous;
  std::set<std::tuple<std::string, int, std::string>> file_residues;  // for the offset suggestion
  ResolveReport report;
  report.restraints_in = set.restraints.size();

  auto candidates_of = [&](const AtomSelector& sel) {
    std::vector<std::size_t> out;
    auto it = by_residue.find(sel.residue_number);
    if (it == by_residue.end()) return out;
    for (std::size_t i : it->second) {
      const Atom& a = s.atoms[i];
      if (sel.chain.empty() || a.chain == sel.chain || a.segment == sel.chain) out.push_back(i);
    }
    return out;
  };
  auto pick = [&](const std::vector<std::size_t>& cand, auto&& pred) {
    std::vector<std::size_t> out;
    for (std::size_t i : cand)
      if (pred(s.atoms[i].name)) out.push_back(i);
    return out;
  };

  // Returns the atoms of one selector; empty when it cannot be found (message in `why`).
  auto resolve = [&](const AtomSelector& sel, const DistanceRestraint& r, std::string& why) {
    std::vector<std::size_t> cand = candidates_of(sel);
    const std::string label = (sel.chain.empty() ? "" : sel.chain + " ") + std::to_string(sel.residue_number);
    if (cand.empty()) {
      why = "residue " + label + (sel.residue.empty() ? "" : " " + sel.residue) + " not found in the structure";
      return cand;
    }
    const std::string& resname = s.atoms[cand[0]].residue;
    if (!sel.residue.empty()) {
      file_residues.emplace(sel.chain, sel.residue_number, upper(sel.residue));
      if (upper(sel.residue) != upper(resname))
        name_mismatch.add(where(set, sel, r) + ": residue " + label + " is " + sel.residue + " in the file, " + resname +
                              " in the structure",
                          mx);
    }
    const std::string atom = upper(sel.atom);
    auto found = pick(cand, [&](const std::string& n) { return atom_name_matches(sel.atom, n, dialect); });
    if (!found.empty()) {
      if (found.size() > 1) wildcards.add(label + " " + sel.atom + " → " + std::to_string(found.size()) + " atoms", mx);
      return found;
    }
    // Synonyms.
    if (atom == "H" || atom == "HN") {
      const std::string other = atom == "H" ? "HN" : "H";
      found = pick(cand, [&](const std::string& n) { return upper(n) == other; });
      if (found.empty())
        found = pick(cand, [&](const std::string& n) {
          std::string u = upper(n);
          return u == "H1" || u == "H2" || u == "H3";
        });
      if (!found.empty()) {
        renamed.add(label + " " + sel.atom + " → " + s.atoms[found[0]].name + (found.size() > 1 ? ",..." : ""), mx);
        return found;
      }
    }
    // Old X-PLOR methylene names (HB1/HB2 for IUPAC HB3/HB2, BMRB nomenclature table):
    // X1 → X3 when the residue has X2 and X3 but no X1.
    if (atom.size() >= 3 && atom.back() == '1' && atom.find_first_of("*%#+") == std::string::npos) {
      const std::string st = atom.substr(0, atom.size() - 1);
      auto has = [&](const std::string& n) {
        return !pick(cand, [&](const std::string& x) { return upper(x) == n; }).empty();
      };
      if (has(st + "2") && has(st + "3")) {
        found = pick(cand, [&](const std::string& x) { return upper(x) == st + "3"; });
        renamed.add(label + " " + sel.atom + " → " + st + "3 (old X-PLOR methylene name)", mx);
        return found;
      }
    }
    // Pseudo-atoms (Q..., M...), only for names without wildcards.
    if (atom.size() >= 2 && (atom[0] == 'Q' || atom[0] == 'M') && atom.find_first_of("*%#+") == std::string::npos) {
      if (atom == "QR") {
        found = pick(cand, [](const std::string& n) {
          std::string u = upper(n);
          return u == "HD1" || u == "HD2" || u == "HE1" || u == "HE2" || u == "HZ";
        });
      } else if (atom.size() == 3 && atom[0] == 'Q' && atom[1] == 'Q') {
        const char x = atom[2];
        found = pick(cand, [&](const std::string& n) {
          std::string u = upper(n);
          return u.size() == 4 && u[0] == 'H' && u[1] == x && digit(u[2]) && digit(u[3]);
        });
      } else {
        const std::string pat = "H" + atom.substr(1) + "#";
        found = pick(cand, [&](const std::string& n) { return match_xplor(pat, n); });
      }
      if (!found.empty()) {
        pseudo_names.add(label + " " + sel.atom + " → " + std::to_string(found.size()) + " atoms", mx);
        return found;
      }
    }
    std::string have;
    for (std::size_t i : cand) have += (have.empty() ? "" : " ") + s.atoms[i].name;
    why = "atom '" + sel.atom + "' not found in residue " + label + " " + resname + " of the structure (it has: " +
          have + ")";
    return found;
  };

  std::vector<DistanceRestraint> kept;
  kept.reserve(set.restraints.size());
  for (auto& r : set.restraints) {
    bool ok = true;
    std::set<std::size_t> side_a, side_b;
    for (auto& alt : r.alternatives) {
      for (int k = 0; k < 2 && ok; ++k) {
        const AtomSelector& sel = k == 0 ? alt.a : alt.b;
        std::string why;
        auto atoms = resolve(sel, r, why);
        if (atoms.empty()) {
          if (options.on_unknown_atom == UnknownAtomPolicy::Error)
            throw ParseError(set.source, sel.line > 0 ? sel.line : 0,
                             "restraint " + std::to_string(r.id) + ": " + why +
                                 " (set on_unknown_atom: skip to leave such restraints out)");
          unknown.add(where(set, sel, r) + ": " + why, mx);
          ok = false;
          break;
        }
        (k == 0 ? alt.atoms_a : alt.atoms_b) = atoms;
        (k == 0 ? side_a : side_b).insert(atoms.begin(), atoms.end());
      }
      if (!ok) break;
    }
    if (!ok) continue;
    auto side_correction = [&](const std::set<std::size_t>& side) {
      if (side.size() <= 1) return 0.0;
      std::vector<std::string> names;
      const Atom& first = s.atoms[*side.begin()];
      for (std::size_t i : side) {
        const Atom& a = s.atoms[i];
        if (a.residue_number != first.residue_number || a.chain != first.chain) return -1.0;
        names.push_back(a.name);
      }
      return pseudo_atom_correction(first.residue, names);
    };
    double ca = side_correction(side_a), cb = side_correction(side_b);
    if (ca < 0 || cb < 0) no_correction.add(r.origin + " (restraint " + std::to_string(r.id) + ")", mx);
    r.pseudo_correction = std::max(0.0, ca) + std::max(0.0, cb);
    if (r.pseudo_correction > 0)
      corrected.add("restraint " + std::to_string(r.id) + ": +" + std::to_string(r.pseudo_correction).substr(0, 4) + " Å", mx);
    if (side_a.size() > 1 || side_b.size() > 1 || r.alternatives.size() > 1)
      ambiguous.add("restraint " + std::to_string(r.id), mx);
    for (const auto& alt : r.alternatives) report.atom_pairs += alt.atoms_a.size() * alt.atoms_b.size();
    kept.push_back(std::move(r));
  }
  set.restraints = std::move(kept);
  report.restraints_out = set.restraints.size();
  report.skipped = unknown.count;

  // Residue numbering offset suggestion.
  if (name_mismatch.count > 0) {
    std::map<std::pair<std::string, int>, std::string> structure_res;
    for (const auto& a : s.atoms) {
      structure_res.emplace(std::make_pair(a.chain, a.residue_number), upper(a.residue));
      if (!a.segment.empty()) structure_res.emplace(std::make_pair(a.segment, a.residue_number), upper(a.residue));
    }
    auto agree = [&](int off) {
      std::size_t n = 0;
      for (const auto& [chain, num, name] : file_residues) {
        auto it = structure_res.find({chain, num + off});
        if (it == structure_res.end() && chain.empty())
          for (const auto& [key, v] : structure_res)
            if (key.second == num + off) { it = structure_res.find(key); break; }
        n += it != structure_res.end() && it->second == name;
      }
      return n;
    };
    std::size_t best = agree(0);
    for (int off = -100; off <= 100; ++off)
      if (off != 0 && agree(off) > best) {
        best = agree(off);
        report.suggested_offset = off;
      }
  }

  auto item = [&](const std::string& what, const Counter& c) {
    report.items.push_back({what, c.count, c.joined()});
  };
  report.items.push_back({"restraints read", report.restraints_in, ""});
  report.items.push_back({"restraints resolved", report.restraints_out, ""});
  report.items.push_back({"expanded atom pairs", report.atom_pairs, ""});
  item("ambiguous restraints (several atoms or alternatives)", ambiguous);
  item("restraints with a pseudo-atom correction", corrected);
  item("restraints with multi-atom selections and no pseudo-atom correction", no_correction);
  item("wildcard names expanded", wildcards);
  item("pseudo-atom names expanded (Q/M names)", pseudo_names);
  item("atom names translated (H/HN, N-terminal H1-3)", renamed);
  item("residue names differing between file and structure", name_mismatch);
  item("restraints skipped: atom or residue not found", unknown);
  if (report.suggested_offset != 0)
    report.items.push_back({"suggested residue-number offset (structure = file + offset)",
                            static_cast<std::size_t>(std::abs(report.suggested_offset)),
                            "offset " + std::to_string(report.suggested_offset) +
                                " makes the most residue names agree"});

  if (name_mismatch.count > 0)
    set.warnings.push_back(std::to_string(name_mismatch.count) +
                           " selections name a residue that differs from the structure, e.g. " +
                           name_mismatch.joined() +
                           (report.suggested_offset != 0
                                ? " — residue numbers may be offset by " + std::to_string(report.suggested_offset)
                                : ""));
  if (unknown.count > 0)
    set.warnings.push_back(std::to_string(unknown.count) + " restraints skipped (atom or residue not found), e.g. " +
                           unknown.joined());
  if (no_correction.count > 0)
    set.warnings.push_back(std::to_string(no_correction.count) +
                           " restraints have multi-atom selections that are no standard pseudo-atom group (no "
                           "correction applied), e.g. " + no_correction.joined());
  if (renamed.count > 0)
    set.warnings.push_back(std::to_string(renamed.count) + " atom names translated, e.g. " + renamed.joined());
  return report;
}

}  // namespace gemflow::io
