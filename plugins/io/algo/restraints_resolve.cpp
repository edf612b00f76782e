// Resolution of restraint atom selections against a Structure.
#include <algorithm>
#include <cctype>
#include <cmath>
#include <limits>
#include <map>
#include <set>
#include <sstream>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "gemflow/io/errors.hpp"
#include "gemflow/io/nomenclature.hpp"
#include "gemflow/io/restraints_io.hpp"

namespace gemflow::io {

namespace {

char up(char c) { return static_cast<char>(std::toupper(static_cast<unsigned char>(c))); }
bool digit(char c) { return std::isdigit(static_cast<unsigned char>(c)) != 0; }

/// What one pattern character of a restraint file's atom name matches.
enum class Wild { any_run, digit_run, any_one, digit, literal };

/// Whether the whole name n matches the whole pattern p, case-insensitively; kind(c) says what a
/// pattern character matches (any_run: zero or more characters, digit_run: one or more digits).
/// Dynamic programming over (pattern suffix, name suffix), one row at a time: O(|p|·|n|) time and
/// O(|n|) memory, where trying every split at each '*' took exponential time in the stars.
template <class Kind>
bool wildcard_match(std::string_view p, std::string_view n, Kind kind) {
  const std::size_t m = n.size();
  std::vector<char> next(m + 1, 0), cur(m + 1, 0);  // next[j]: p[i + 1..] matches n[j..]
  next[m] = 1;                                      // the empty pattern matches the empty name
  for (std::size_t i = p.size(); i-- > 0;) {
    const Wild w = kind(p[i]);
    for (std::size_t j = m + 1; j-- > 0;) {
      const bool more = j < m;
      switch (w) {
        case Wild::any_run: cur[j] = next[j] || (more && cur[j + 1]); break;
        case Wild::digit_run: cur[j] = more && digit(n[j]) && (next[j + 1] || cur[j + 1]); break;
        case Wild::any_one: cur[j] = more && next[j + 1]; break;
        case Wild::digit: cur[j] = more && digit(n[j]) && next[j + 1]; break;
        case Wild::literal: cur[j] = more && up(p[i]) == up(n[j]) && next[j + 1]; break;
      }
    }
    std::swap(cur, next);
  }
  return next[0] != 0;
}

/// XPLOR/CNS atom-name wildcards: * any characters, # one or more digits, % one character, + one
/// digit.
bool match_xplor(std::string_view p, std::string_view n) {
  return wildcard_match(p, n, [](char c) {
    switch (c) {
      case '*': return Wild::any_run;
      case '#': return Wild::digit_run;
      case '%': return Wild::any_one;
      case '+': return Wild::digit;
      default: return Wild::literal;
    }
  });
}

/// NEF atom-name wildcards: * any characters, % one or more digits, x and y one digit.
bool match_nef(std::string_view p, std::string_view n) {
  return wildcard_match(p, n, [](char c) {
    switch (c) {
      case '*': return Wild::any_run;
      case '%': return Wild::digit_run;
      case 'x':
      case 'y': return Wild::digit;
      default: return Wild::literal;
    }
  });
}

std::string upper(std::string s) {
  for (auto& c : s) c = up(c);
  return s;
}

bool has_wildcard(const std::string& atom) { return atom.find_first_of("*%#+") != std::string::npos; }

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
    if (count > examples.size()) s += " (and " + std::to_string(count - examples.size()) + " more)";
    return s;
  }
};

int line_of(const DistanceRestraint& r) {
  const auto c = r.origin.rfind(':');
  if (c == std::string::npos) return 0;
  int v = 0;
  for (std::size_t k = c + 1; k < r.origin.size() && digit(r.origin[k]) && v < 100000000; ++k)
    v = v * 10 + (r.origin[k] - '0');
  return v;
}

int dihedral_line(const DihedralRestraint& d) {
  const auto c = d.origin.rfind(':');
  if (c == std::string::npos) return 0;
  int v = 0;
  for (std::size_t k = c + 1; k < d.origin.size() && digit(d.origin[k]) && v < 100000000; ++k)
    v = v * 10 + (d.origin[k] - '0');
  return v;
}

std::string where(const RestraintSet& set, const AtomSelector& sel, const DistanceRestraint& r) {
  return (sel.line > 0 ? set.source + ":" + std::to_string(sel.line) : r.origin) + " (restraint " +
         std::to_string(r.id) + ")";
}

std::string signed_text(int v) { return (v > 0 ? "+" : "") + std::to_string(v); }

// What one selector resolved to.
struct Found {
  enum class Kind { Direct, Translated, Pseudo, NotFound };
  Kind kind = Kind::NotFound;
  std::vector<std::size_t> atoms;
  std::string note;              // translation or pseudo-atom rule applied; why, when not found
  bool several_methyls = false;  // an M name covering more than one methyl group (Leu MD)
};

// Resolves selectors against one structure; every stage a method, the state members.
class Resolver {
 public:
  Resolver(const RestraintSet& set, const Structure& s)
      : set_(set), s_(s), dialect_(set.format.empty() ? "xplor" : set.format) {
    std::map<std::string, std::pair<int, int>> span;  // chain → first, last residue number
    for (std::size_t i = 0; i < s.atoms.size(); ++i) {
      const Atom& a = s.atoms[i];
      by_residue_[a.residue_number].push_back(i);
      auto [it, fresh] = span.try_emplace(a.chain, a.residue_number, a.residue_number);
      if (!fresh) {
        it->second.first = std::min(it->second.first, a.residue_number);
        it->second.second = std::max(it->second.second, a.residue_number);
      }
      min_res_ = std::min(min_res_, a.residue_number);
      max_res_ = std::max(max_res_, a.residue_number);
    }
    for (const auto& [chain, fl] : span) {
      n_terminal_.emplace(chain, fl.first);
      c_terminal_.emplace(chain, fl.second);
    }
  }

  // The atoms of residue (chain, number) of the structure (chain "" = any chain).
  [[nodiscard]] std::vector<std::size_t> residue_atoms(const std::string& chain, int number) const {
    std::vector<std::size_t> out;
    auto it = by_residue_.find(number);
    if (it == by_residue_.end()) return out;
    for (std::size_t i : it->second) {
      const Atom& a = s_.atoms[i];
      if (chain.empty() || a.chain == chain || a.segment == chain) out.push_back(i);
    }
    return out;
  }

  [[nodiscard]] static std::string label(const AtomSelector& sel, int number) {
    return (sel.chain.empty() ? "" : sel.chain + " ") + std::to_string(number);
  }

  // One selector under a residue-number offset (structure = file + offset). Pure.
  [[nodiscard]] Found resolve(const AtomSelector& sel, int offset) const {
    Found f;
    const int number = sel.residue_number + offset;
    const std::vector<std::size_t> cand = residue_atoms(sel.chain, number);
    if (cand.empty()) {
      f.note = "residue " + label(sel, number) + (sel.residue.empty() ? "" : " " + sel.residue) +
               " not found in the structure";
      return f;
    }
    f.atoms = pick(cand, [&](const std::string& n) { return atom_name_matches(sel.atom, n, dialect_); });
    if (!f.atoms.empty()) {
      f.kind = Found::Kind::Direct;
      return f;
    }
    if (translate(sel, cand, f) || pseudo_atom(sel, cand, f)) return f;
    std::string have;
    for (std::size_t i : cand) have += (have.empty() ? "" : " ") + s_.atoms[i].name;
    f.note = "atom '" + sel.atom + "' not found in residue " + label(sel, number) + " " + s_.atoms[cand[0]].residue +
             " of the structure (it has: " + have + ")";
    return f;
  }

  // Residue-number offset (structure = file + offset) under which most distinct selectors
  // resolve, when that is more than at `current`; `current` otherwise. Counts in *best_count.
  // `only_chain`: only that chain's selectors (nullptr: all).
  [[nodiscard]] int offset_by_atoms(int current, std::size_t* best_count, std::size_t* total,
                                    const std::string* only_chain = nullptr) const {
    std::set<std::tuple<std::string, int, std::string>> unique;
    int fmin = std::numeric_limits<int>::max(), fmax = std::numeric_limits<int>::min();
    for (const auto& r : set_.restraints)
      for (const auto& alt : r.alternatives)
        for (const AtomSelector* sel : {&alt.a, &alt.b}) {
          if (only_chain && sel->chain != *only_chain) continue;
          unique.emplace(sel->chain, sel->residue_number, sel->atom);
          fmin = std::min(fmin, sel->residue_number);
          fmax = std::max(fmax, sel->residue_number);
        }
    std::vector<AtomSelector> sels;
    for (const auto& [c, n, a] : unique) sels.push_back({c, n, "", a, 0});
    auto count = [&](int off) {
      std::size_t k = 0;
      for (const auto& sel : sels) k += resolve(sel, off).kind != Found::Kind::NotFound;
      return k;
    };
    *total = sels.size();
    int best = current;
    *best_count = count(current);
    if (sels.empty() || by_residue_.empty()) return best;
    // Offsets that overlap the file's residue numbers with the structure's, at most ±1000.
    const long lo = std::max<long>(-1000, static_cast<long>(min_res_) - fmax);
    const long hi = std::min<long>(1000, static_cast<long>(max_res_) - fmin);
    for (long off = lo; off <= hi; ++off) {
      if (off == current) continue;
      const std::size_t k = count(static_cast<int>(off));
      if (k > *best_count) {
        *best_count = k;
        best = static_cast<int>(off);
      }
    }
    return best;
  }

  // Residue-number offset under which most residue names of the file agree with the
  // structure (canonical names); `current` when none does better. Counts in *agree.
  [[nodiscard]] int offset_by_names(int current, std::size_t* agree, std::size_t* total,
                                    const std::string* only_chain = nullptr) const {
    std::set<std::tuple<std::string, int, std::string>> named;
    for (const auto& r : set_.restraints)
      for (const auto& alt : r.alternatives)
        for (const AtomSelector* sel : {&alt.a, &alt.b})
          if (!sel->residue.empty() && (!only_chain || sel->chain == *only_chain))
            named.emplace(sel->chain, sel->residue_number, canonical_residue(sel->residue));
    auto count = [&](int off) {
      std::size_t n = 0;
      for (const auto& [chain, num, name] : named) {
        const auto atoms = residue_atoms(chain, num + off);
        n += !atoms.empty() && canonical_residue(s_.atoms[atoms[0]].residue) == name;
      }
      return n;
    };
    *total = named.size();
    int best = current;
    *agree = count(current);
    if (named.empty()) return best;
    int fmin = std::numeric_limits<int>::max(), fmax = std::numeric_limits<int>::min();
    for (const auto& t : named) {
      fmin = std::min(fmin, std::get<1>(t));
      fmax = std::max(fmax, std::get<1>(t));
    }
    const long lo = std::max<long>(-1000, static_cast<long>(min_res_) - fmax);
    const long hi = std::min<long>(1000, static_cast<long>(max_res_) - fmin);
    for (long off = lo; off <= hi; ++off) {
      if (off == current) continue;
      const std::size_t k = count(static_cast<int>(off));
      if (k > *agree) {
        *agree = k;
        best = static_cast<int>(off);
      }
    }
    return best;
  }

  // The chains the file's distance restraints name (as written; "" for none), sorted.
  [[nodiscard]] std::vector<std::string> file_chains() const {
    std::set<std::string> c;
    for (const auto& r : set_.restraints)
      for (const auto& alt : r.alternatives)
        for (const AtomSelector* sel : {&alt.a, &alt.b}) c.insert(sel->chain);
    return {c.begin(), c.end()};
  }

  // The residue name of the structure at a selector (empty when the residue is absent).
  [[nodiscard]] std::string structure_residue(const AtomSelector& sel, int offset) const {
    const auto atoms = residue_atoms(sel.chain, sel.residue_number + offset);
    return atoms.empty() ? std::string() : s_.atoms[atoms[0]].residue;
  }

 private:
  template <class Pred>
  [[nodiscard]] std::vector<std::size_t> pick(const std::vector<std::size_t>& cand, Pred&& pred) const {
    std::vector<std::size_t> out;
    for (std::size_t i : cand)
      if (pred(s_.atoms[i].name)) out.push_back(i);
    return out;
  }
  [[nodiscard]] std::vector<std::size_t> named(const std::vector<std::size_t>& cand, const std::string& name) const {
    return pick(cand, [&](const std::string& n) { return upper(n) == name; });
  }

  [[nodiscard]] bool row_in_scope(const NomenclatureRow& row, const Atom& a) const {
    if (!row_applies(row, canonical_residue(a.residue))) return false;
    const auto& ends = row.scope == NomenclatureRow::Scope::NTerminus ? n_terminal_ : c_terminal_;
    if (row.scope == NomenclatureRow::Scope::Any) return true;
    auto it = ends.find(a.chain);
    return it != ends.end() && it->second == a.residue_number;
  }

  // The nomenclature table, PDB v2 names and the old X-PLOR methylene names.
  bool translate(const AtomSelector& sel, const std::vector<std::size_t>& cand, Found& f) const {
    const Atom& res = s_.atoms[cand[0]];
    const std::string atom = upper(sel.atom);
    const auto& table = nomenclature_table();
    std::vector<std::string> to;
    auto take = [&](const std::vector<std::size_t>& atoms) {
      for (std::size_t i : atoms)
        if (std::find(f.atoms.begin(), f.atoms.end(), i) == f.atoms.end()) {
          f.atoms.push_back(i);
          to.push_back(s_.atoms[i].name);
        }
    };
    // 1. Rows whose names the selection matches, mapped to the row's name present here.
    bool amide_h = false;
    for (const auto& row : table) {
      if (!row_in_scope(row, res)) continue;
      const auto names = row_names(row);
      const bool matches = std::any_of(names.begin(), names.end(),
                                       [&](const std::string& n) { return atom_name_matches(sel.atom, n, dialect_); });
      if (!matches) continue;
      if (std::string(row.iupac) == "H") amide_h = true;
      for (const auto& n : names) take(named(cand, n));
    }
    // 2. The amide H of an N-terminal residue is its NH3+ group (H1-H3 or HT1-HT3).
    if (f.atoms.empty() && amide_h)
      for (const auto& row : table)
        if (row.scope == NomenclatureRow::Scope::NTerminus && row_in_scope(row, res))
          for (const auto& n : row_names(row)) take(named(cand, n));
    if (!f.atoms.empty()) {
      f.kind = Found::Kind::Translated;
      f.note = "nomenclature table";
    }
    // 3. PDB v2 names: 1HG1 → HG11; methylene 1HB/2HB → HB2/HB3 when there is no HB1.
    if (f.atoms.empty() && !has_wildcard(atom)) {
      const std::string v3 = pdb_v2_to_v3(atom);
      if (!v3.empty()) {
        const std::string stem = v3.substr(0, v3.size() - 1);
        const char d = v3.back();
        if ((d == '1' || d == '2') && named(cand, stem + "1").empty() && !named(cand, stem + "2").empty() &&
            !named(cand, stem + "3").empty())
          take(named(cand, stem + static_cast<char>(d + 1)));
        else take(named(cand, v3));
        if (!f.atoms.empty()) {
          f.kind = Found::Kind::Translated;
          f.note = "PDB v2 name";
        }
      }
    }
    // 4. Old X-PLOR methylene names (HB1/HB2 for IUPAC HB3/HB2, BMRB nomenclature table):
    //    X1 → X3 when the residue has X2 and X3 but no X1.
    if (f.atoms.empty() && atom.size() >= 3 && atom.back() == '1' && !has_wildcard(atom)) {
      const std::string st = atom.substr(0, atom.size() - 1);
      if (!named(cand, st + "2").empty() && !named(cand, st + "3").empty()) {
        take(named(cand, st + "3"));
        f.kind = Found::Kind::Translated;
        f.note = "old X-PLOR methylene name";
      }
    }
    if (f.atoms.empty()) return false;
    std::string list;
    for (const auto& n : to) list += (list.empty() ? "" : ",") + n;
    f.note = sel.atom + " → " + list + " (" + f.note + ")";
    return true;
  }

  // Pseudo-atoms (Q..., M...), only for names without wildcards.
  bool pseudo_atom(const AtomSelector& sel, const std::vector<std::size_t>& cand, Found& f) const {
    const std::string atom = upper(sel.atom);
    if (atom.size() < 2 || (atom[0] != 'Q' && atom[0] != 'M') || has_wildcard(atom)) return false;
    if (atom == "QR") {
      f.atoms = pick(cand, [](const std::string& n) {
        const std::string u = upper(n);
        return u == "HD1" || u == "HD2" || u == "HE1" || u == "HE2" || u == "HZ";
      });
    } else if (atom.size() == 3 && atom[0] == 'Q' && atom[1] == 'Q') {
      const char x = atom[2];
      f.atoms = pick(cand, [&](const std::string& n) {
        const std::string u = upper(n);
        return u.size() == 4 && u[0] == 'H' && u[1] == x && digit(u[2]) && digit(u[3]);
      });
    } else {
      const std::string pat = "H" + atom.substr(1) + "#";
      f.atoms = pick(cand, [&](const std::string& n) { return match_xplor(pat, n); });
      if (atom[0] == 'M') {
        // A methyl (CYANA M names): only groups of three H on one stem (HG21-HG23), so that
        // Ile MG is HG2x, not HG12/HG13 too. Leu MD / Val MG name both methyls: kept, and
        // reported (it is QQD / QQG, not one methyl).
        std::map<std::string, std::vector<std::size_t>> stems;
        for (std::size_t i : f.atoms) {
          const std::string u = upper(s_.atoms[i].name);
          stems[u.substr(0, u.size() - 1)].push_back(i);
        }
        f.atoms.clear();
        std::size_t methyls = 0;
        for (const auto& [stem, atoms] : stems)
          if (atoms.size() == 3) {
            f.atoms.insert(f.atoms.end(), atoms.begin(), atoms.end());
            ++methyls;
          }
        std::sort(f.atoms.begin(), f.atoms.end());
        f.several_methyls = methyls > 1;
      }
    }
    if (f.atoms.empty()) return false;
    f.kind = Found::Kind::Pseudo;
    std::string list;
    for (std::size_t i : f.atoms) list += (list.empty() ? "" : ",") + s_.atoms[i].name;
    f.note = sel.atom + " → " + list;
    return true;
  }

  const RestraintSet& set_;
  const Structure& s_;
  std::string dialect_;
  std::unordered_map<int, std::vector<std::size_t>> by_residue_;
  std::map<std::string, int> n_terminal_, c_terminal_;  // chain → residue number
  int min_res_ = std::numeric_limits<int>::max(), max_res_ = std::numeric_limits<int>::min();
};

// Bounds that no structure can satisfy or that are no distance at all: ParseError at the
// restraint's line.
void check_bounds(const RestraintSet& set, const ResolveOptions& o) {
  for (const auto& r : set.restraints) {
    auto fail = [&](const std::string& why) {
      throw ParseError(set.source, line_of(r), "restraint " + std::to_string(r.id) + ": " + why);
    };
    auto num = [](double v) {
      std::ostringstream m;
      m << v;
      return m.str();
    };
    for (const auto& [what, v] : {std::pair{"lower bound", r.lower}, std::pair{"upper bound", r.upper},
                                  std::pair{"target distance", r.target}, std::pair{"weight", r.weight}})
      if (!std::isfinite(v)) fail(std::string(what) + " " + num(v) + " is not a finite number");
    if (r.lower < 0) fail("lower bound " + num(r.lower) + " Å is negative");
    if (r.upper <= 0) fail("upper bound " + num(r.upper) + " Å is not positive");
    if (r.lower > r.upper) fail("lower bound " + num(r.lower) + " Å exceeds the upper bound " + num(r.upper) + " Å");
    if (r.upper > o.max_distance)
      fail("upper bound " + num(r.upper) + " Å is beyond " + num(o.max_distance) +
           " Å, no distance inside a molecule (ResolveOptions::max_distance)");
  }
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
    return 1.0;                                                                   // CH2, NH2, CH3, NH3+
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
  const int offset = options.residue_offset;
  auto off = [&](const AtomSelector& sel) {
    auto it = options.chain_offsets.find(sel.chain);
    return it == options.chain_offsets.end() ? offset : it->second;
  };
  check_bounds(set, options);
  const Resolver resolver(set, s);
  ResolveReport report;
  report.restraints_in = set.restraints.size();
  std::string offset_text = offset != 0 ? " (with residue_offset " + signed_text(offset) : "";
  for (const auto& [c, o] : options.chain_offsets)
    offset_text += (offset_text.empty() ? " (with chain " : ", chain ") + c + " offset " + signed_text(o);
  if (!offset_text.empty()) offset_text += ")";
  // Chains numbered apart (a dimer's chain B from 91 against 20 in the structure): the best
  // offset per chain, as a hint, when the file has several chains and they need different ones
  // (or other ones than set).
  auto chain_hint = [&](bool by_names) {
    const auto chains = resolver.file_chains();
    if (chains.size() < 2) return std::string();
    std::map<std::string, int> best;
    bool differs = false;
    for (const auto& c : chains) {
      AtomSelector probe;
      probe.chain = c;
      const int current = off(probe);
      std::size_t found = 0, total = 0;
      const int b = by_names ? resolver.offset_by_names(current, &found, &total, &c)
                             : resolver.offset_by_atoms(current, &found, &total, &c);
      best[c] = b;
      differs = differs || b != current;
    }
    std::set<int> values;
    for (const auto& [c, b] : best) values.insert(b);
    if (!differs || values.size() < 2) return std::string();
    report.suggested_chain_offsets = best;
    std::string text;
    for (const auto& [c, b] : best) text += (text.empty() ? "" : ", ") + c + ":" + std::to_string(b);
    return "; per chain (structure residue = file residue + offset), chain_offsets: \"" + text + "\"";
  };

  // ---- residue names: the file's against the structure's, before any atom is looked up
  Counter name_mismatch;
  int first_mismatch_line = 0;
  for (const auto& r : set.restraints)
    for (const auto& alt : r.alternatives)
      for (const AtomSelector* sel : {&alt.a, &alt.b}) {
        if (sel->residue.empty()) continue;
        const std::string here = resolver.structure_residue(*sel, off(*sel));
        if (here.empty() || canonical_residue(sel->residue) == canonical_residue(here)) continue;
        if (name_mismatch.count == 0) first_mismatch_line = sel->line > 0 ? sel->line : line_of(r);
        name_mismatch.add(
            where(set, *sel, r) + ": residue " + Resolver::label(*sel, sel->residue_number) + " is " + sel->residue +
                " in the file, " + here + " in the structure" +
                (off(*sel) != 0 ? " (residue " + std::to_string(sel->residue_number + off(*sel)) + ")" : ""),
            mx);
      }
  for (const auto& d : set.dihedrals)
    for (const AtomSelector& sel : d.atoms) {
      if (sel.residue.empty()) continue;
      const std::string here = resolver.structure_residue(sel, off(sel));
      if (here.empty() || canonical_residue(sel.residue) == canonical_residue(here)) continue;
      if (name_mismatch.count == 0) first_mismatch_line = sel.line > 0 ? sel.line : dihedral_line(d);
      name_mismatch.add((sel.line > 0 ? set.source + ":" + std::to_string(sel.line) : d.origin) +
                            " (dihedral restraint " + std::to_string(d.id) + "): residue " +
                            Resolver::label(sel, sel.residue_number) + " is " + sel.residue + " in the file, " + here +
                            " in the structure",
                        mx);
    }
  std::string offset_hint;
  if (name_mismatch.count > 0) {
    std::size_t agree = 0, total = 0;
    const int best = resolver.offset_by_names(offset, &agree, &total);
    if (best != offset) {
      report.suggested_offset = best;
      offset_hint = "; with residue_offset: " + std::to_string(best) + " (structure residue = file residue " +
                    signed_text(best) + ") " + std::to_string(agree) + " of the " + std::to_string(total) +
                    " residue names of the file agree";
    }
    const std::string per_chain = chain_hint(true);
    offset_hint += per_chain;
    if (options.on_residue_mismatch == ResidueMismatchPolicy::Error)
      throw ParseError(
          set.source, first_mismatch_line,
          std::to_string(name_mismatch.count) + " atom selections name a residue that differs from the structure" +
              offset_text + ": " + name_mismatch.joined() + offset_hint +
              (best != offset || !per_chain.empty() ? "" : "; the restraints may belong to another molecule") +
              " (on_residue_mismatch: warn resolves them anyway)");
  }

  // ---- atoms
  Counter renamed, pseudo_names, wildcards, unknown, no_correction, corrected, ambiguous, group, methyl_pairs;
  std::vector<DistanceRestraint> kept;
  kept.reserve(set.restraints.size());
  int first_unknown_line = 0;
  std::string first_unknown;
  for (auto& r : set.restraints) {
    bool ok = true;
    std::set<std::size_t> side_a, side_b;
    for (auto& alt : r.alternatives) {
      for (int k = 0; k < 2 && ok; ++k) {
        const AtomSelector& sel = k == 0 ? alt.a : alt.b;
        const std::string lbl = Resolver::label(sel, sel.residue_number + off(sel));
        Found f = resolver.resolve(sel, off(sel));
        switch (f.kind) {
          case Found::Kind::NotFound:
            if (unknown.count == 0) {
              first_unknown_line = sel.line > 0 ? sel.line : line_of(r);
              first_unknown = "restraint " + std::to_string(r.id) + ": " + f.note;
            }
            unknown.add(where(set, sel, r) + ": " + f.note, mx);
            ok = false;
            break;
          case Found::Kind::Direct:
            if (f.atoms.size() > 1)
              wildcards.add(lbl + " " + sel.atom + " → " + std::to_string(f.atoms.size()) + " atoms", mx);
            break;
          case Found::Kind::Translated: renamed.add(lbl + " " + f.note, mx); break;
          case Found::Kind::Pseudo:
            pseudo_names.add(lbl + " " + f.note, mx);
            if (f.several_methyls)
              methyl_pairs.add(where(set, sel, r) + ": " + lbl + " " + f.note + " (both methyls, as QQ" +
                                   upper(sel.atom).substr(1, 1) + ")",
                               mx);
            break;
        }
        if (!ok) break;
        (k == 0 ? alt.atoms_a : alt.atoms_b) = f.atoms;
        (k == 0 ? side_a : side_b).insert(f.atoms.begin(), f.atoms.end());
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
      corrected.add(
          "restraint " + std::to_string(r.id) + ": +" + std::to_string(r.pseudo_correction).substr(0, 4) + " Å", mx);
    if (is_ambiguous(r)) ambiguous.add(r.origin + " (restraint " + std::to_string(r.id) + ")", mx);
    else if (is_group(r)) group.add(r.origin + " (restraint " + std::to_string(r.id) + ")", mx);
    for (const auto& alt : r.alternatives) report.atom_pairs += alt.atoms_a.size() * alt.atoms_b.size();
    kept.push_back(std::move(r));
  }

  // ---- restraints that could not be resolved: an error, or skipped within limits
  if (unknown.count > 0) {
    std::string hint;
    std::size_t best_count = 0, total = 0;
    const int best = resolver.offset_by_atoms(offset, &best_count, &total);
    // Another numbering under which every selection is found: the file is offset, and the
    // restraints that do resolve here name the wrong atoms (H, HA exist in most residues).
    const bool offset_fits_all = best != offset && best_count == total;
    if (best != offset) {
      if (report.suggested_offset == 0) report.suggested_offset = best;
      hint = "; with residue_offset: " + std::to_string(best) + " " + std::to_string(best_count) + " of the " +
             std::to_string(total) + " distinct atom selections are found";
    }
    hint += offset_hint.empty() ? chain_hint(false) : offset_hint;
    if (options.on_unknown_atom == UnknownAtomPolicy::Error)
      throw ParseError(set.source, first_unknown_line,
                       first_unknown + offset_text +
                           (unknown.count > 1 ? " (" + std::to_string(unknown.count - 1) +
                                                    " more restraints name atoms "
                                                    "not found)"
                                              : std::string()) +
                           hint + " (on_unknown_atom: skip leaves such restraints out)");
    const double limit = options.max_skipped_fraction * static_cast<double>(report.restraints_in);
    if (offset_fits_all)
      throw ParseError(set.source, first_unknown_line,
                       "on_unknown_atom: skip would leave out " + std::to_string(unknown.count) + " of the " +
                           std::to_string(report.restraints_in) + " restraints" + offset_text +
                           ", but under another residue numbering every atom selection is found: the restraints "
                           "that resolve here would name wrong atoms. Set residue_offset: " +
                           std::to_string(best) + " (" + unknown.joined() + ")" + offset_hint);
    if (static_cast<double>(unknown.count) > limit || kept.empty())
      throw ParseError(set.source, first_unknown_line,
                       "on_unknown_atom: skip would leave out " + std::to_string(unknown.count) + " of the " +
                           std::to_string(report.restraints_in) + " restraints" + offset_text + " (more than " +
                           std::to_string(static_cast<int>(std::lround(options.max_skipped_fraction * 100))) +
                           " %: these restraints do not match the structure): " + unknown.joined() + hint);
  }

  set.restraints = std::move(kept);
  report.restraints_out = set.restraints.size();
  report.skipped = unknown.count;
  set.skipped += unknown.count;

  // ---- dihedrals: each selection must name exactly one atom
  Counter dihedral_unknown, dihedral_renamed;
  int first_dihedral_unknown_line = 0;
  std::string first_dihedral_unknown;
  report.dihedrals_in = set.dihedrals.size();
  {
    std::vector<DihedralRestraint> kept_d;
    kept_d.reserve(set.dihedrals.size());
    for (auto& d : set.dihedrals) {
      if (!std::isfinite(d.lower) || !std::isfinite(d.upper) || !std::isfinite(d.weight) || d.lower < -180.0 ||
          d.upper > 180.0 || d.weight < 0)
        throw ParseError(set.source, dihedral_line(d),
                         "dihedral restraint " + std::to_string(d.id) + ": interval [" + std::to_string(d.lower) +
                             ", " + std::to_string(d.upper) + "]° or weight " + std::to_string(d.weight) +
                             " out of range ([-180, 180] degrees, weight ≥ 0)");
      bool ok = true;
      for (std::size_t k = 0; k < 4 && ok; ++k) {
        const AtomSelector& sel = d.atoms[k];
        const std::string where_d = (sel.line > 0 ? set.source + ":" + std::to_string(sel.line) : d.origin) +
                                    " (dihedral restraint " + std::to_string(d.id) + ")";
        Found f = resolver.resolve(sel, off(sel));
        std::string why;
        if (f.kind == Found::Kind::NotFound) {
          why = f.note;
        } else if (f.atoms.size() != 1) {
          std::string names;
          for (std::size_t i : f.atoms) names += (names.empty() ? "" : ",") + s.atoms[i].name;
          why = "atom '" + sel.atom + "' of residue " + Resolver::label(sel, sel.residue_number + off(sel)) +
                " matches " + std::to_string(f.atoms.size()) + " atoms (" + names + "): a dihedral needs one";
        }
        if (!why.empty()) {
          if (dihedral_unknown.count == 0) {
            first_dihedral_unknown_line = sel.line > 0 ? sel.line : dihedral_line(d);
            first_dihedral_unknown = "dihedral restraint " + std::to_string(d.id) + ": " + why;
          }
          dihedral_unknown.add(where_d + ": " + why, mx);
          ok = false;
          break;
        }
        if (f.kind == Found::Kind::Translated || f.kind == Found::Kind::Pseudo)
          dihedral_renamed.add(Resolver::label(sel, sel.residue_number + off(sel)) + " " + f.note, mx);
        d.atom_index[k] = f.atoms.front();
      }
      if (ok) kept_d.push_back(d);  // a copy: an error below leaves the set as it was
    }
    if (dihedral_unknown.count > 0) {
      if (options.on_unknown_atom == UnknownAtomPolicy::Error)
        throw ParseError(set.source, first_dihedral_unknown_line,
                         first_dihedral_unknown + offset_text +
                             (dihedral_unknown.count > 1 ? " (" + std::to_string(dihedral_unknown.count - 1) +
                                                               " more dihedral restraints name atoms not found)"
                                                         : std::string()) +
                             " (on_unknown_atom: skip leaves such restraints out)");
      if (static_cast<double>(dihedral_unknown.count) >
              options.max_skipped_fraction * static_cast<double>(report.dihedrals_in) ||
          kept_d.empty())
        throw ParseError(set.source, first_dihedral_unknown_line,
                         "on_unknown_atom: skip would leave out " + std::to_string(dihedral_unknown.count) +
                             " of the " + std::to_string(report.dihedrals_in) + " dihedral restraints" + offset_text +
                             " (more than " +
                             std::to_string(static_cast<int>(std::lround(options.max_skipped_fraction * 100))) +
                             " %: these restraints do not match the structure): " + dihedral_unknown.joined());
    }
    set.dihedrals = std::move(kept_d);
    report.dihedrals_out = set.dihedrals.size();
    report.dihedrals_skipped = dihedral_unknown.count;
    set.skipped += dihedral_unknown.count;
  }

  auto item = [&](const std::string& what, const Counter& c) { report.items.push_back({what, c.count, c.joined()}); };
  report.items.push_back({"restraints read", report.restraints_in, ""});
  report.items.push_back({"restraints resolved", report.restraints_out, ""});
  report.items.push_back({"expanded atom pairs", report.atom_pairs, ""});
  item("ambiguous restraints (more than one assignment alternative)", ambiguous);
  item("group restraints (one assignment; a pseudo-atom or wildcard gives several atom pairs)", group);
  item("restraints with a pseudo-atom correction", corrected);
  item("restraints with multi-atom selections and no pseudo-atom correction", no_correction);
  item("wildcard names expanded", wildcards);
  item("pseudo-atom names expanded (Q/M names)", pseudo_names);
  item("methyl pseudo-atoms naming both methyls (Leu MD, Val MG)", methyl_pairs);
  item("atom names translated (nomenclature table)", renamed);
  item("residue names differing between file and structure", name_mismatch);
  item("restraints skipped: atom or residue not found", unknown);
  if (report.dihedrals_in > 0) {
    report.items.push_back({"dihedral restraints read", report.dihedrals_in, ""});
    report.items.push_back({"dihedral restraints resolved", report.dihedrals_out, ""});
    item("dihedral atom names translated (nomenclature table, pseudo-atoms)", dihedral_renamed);
    item("dihedral restraints skipped: atom not found or not one atom", dihedral_unknown);
  }
  if (report.suggested_offset != 0)
    report.items.push_back({"suggested residue-number offset (structure = file + offset)",
                            static_cast<std::size_t>(std::abs(report.suggested_offset)),
                            "residue_offset: " + std::to_string(report.suggested_offset)});
  if (!report.suggested_chain_offsets.empty()) {
    std::string text;
    for (const auto& [c, b] : report.suggested_chain_offsets)
      text += (text.empty() ? "" : ", ") + c + ":" + std::to_string(b);
    report.items.push_back({"suggested residue-number offsets per chain (structure = file + offset)",
                            report.suggested_chain_offsets.size(), "chain_offsets: \"" + text + "\""});
  }

  if (name_mismatch.count > 0)
    set.warnings.push_back(std::to_string(name_mismatch.count) +
                           " selections name a residue that differs from the structure, e.g. " +
                           name_mismatch.joined() +
                           (report.suggested_offset != offset && report.suggested_offset != 0
                                ? " — residue numbers may be offset by " + std::to_string(report.suggested_offset)
                                : ""));
  if (unknown.count > 0)
    set.warnings.push_back(std::to_string(unknown.count) + " restraints skipped (atom or residue not found), e.g. " +
                           unknown.joined());
  if (dihedral_unknown.count > 0)
    set.warnings.push_back(std::to_string(dihedral_unknown.count) +
                           " dihedral restraints skipped (atom not found or not one atom), e.g. " +
                           dihedral_unknown.joined());
  if (no_correction.count > 0)
    set.warnings.push_back(std::to_string(no_correction.count) +
                           " restraints have multi-atom selections that are no standard pseudo-atom group (no "
                           "correction applied), e.g. " +
                           no_correction.joined());
  if (methyl_pairs.count > 0)
    set.warnings.push_back(std::to_string(methyl_pairs.count) +
                           " methyl pseudo-atom names cover both methyls of the residue (treated as QQD/QQG, "
                           "correction 2.4 Å): " +
                           methyl_pairs.joined());
  if (renamed.count > 0)
    set.warnings.push_back(std::to_string(renamed.count) + " atom names translated, e.g. " + renamed.joined());
  return report;
}

}  // namespace gemflow::io
