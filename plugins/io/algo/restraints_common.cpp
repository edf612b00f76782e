// Helpers shared by the restraint readers (see restraints_common.hpp).
#include "restraints_common.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <map>
#include <set>
#include <sstream>
#include <unordered_map>

#include "gemflow/io/errors.hpp"

namespace gemflow::io::detail {

namespace {

std::string num(double v) {
  std::ostringstream s;
  s << v;
  return s.str();
}

/// The atom pair as a key that is the same for the pair read backwards.
std::string pair_key(const DistanceRestraint::Alternative& x) {
  std::string a = atom_key(x.a), b = atom_key(x.b);
  return a < b ? a + b : b + a;
}

/// The angle's atoms as a key that is the same for the quadruple read backwards.
std::string angle_key(const DihedralRestraint& d) {
  std::string f, b;
  for (int k = 0; k < 4; ++k) {
    f += atom_key(d.atoms[static_cast<std::size_t>(k)]) + "|";
    b += atom_key(d.atoms[static_cast<std::size_t>(3 - k)]) + "|";
  }
  return std::min(f, b);
}

/// OR terms of the rows of one restraint id (indices into rows), in file order: each row without
/// a combination id alone, the rows of one combination id together.
std::vector<std::vector<std::size_t>> terms_of(const std::vector<RestraintRow>& rows,
                                               const std::vector<std::size_t>& members) {
  std::vector<std::vector<std::size_t>> terms;
  std::map<std::string, std::size_t> by_comb;
  for (std::size_t i : members) {
    const std::string& c = rows[i].combination;
    if (c.empty()) {
      terms.push_back({i});
      continue;
    }
    auto [it, fresh] = by_comb.try_emplace(c, terms.size());
    if (fresh) terms.emplace_back();
    terms[it->second].push_back(i);
  }
  return terms;
}

/// Restraint ids in the order of their first row, with their rows.
std::vector<std::vector<std::size_t>> groups_of(const std::vector<RestraintRow>& rows) {
  std::vector<std::vector<std::size_t>> groups;
  std::map<int, std::size_t> by_id;
  for (std::size_t i = 0; i < rows.size(); ++i) {
    auto [it, fresh] = by_id.try_emplace(rows[i].id, groups.size());
    if (fresh) groups.emplace_back();
    groups[it->second].push_back(i);
  }
  return groups;
}

struct Tally {
  std::size_t count = 0;
  std::string example;
  void add(const std::string& e) {
    if (count++ == 0) example = e;
  }
};

}  // namespace

std::string atom_key(const AtomSelector& a) {
  return std::to_string(a.chain.size()) + ":" + a.chain + std::to_string(a.residue_number) + ":" +
         std::to_string(a.atom.size()) + ":" + a.atom;
}

bool parse_double(std::string_view text, double& out) {
  const char* b = text.data();
  const char* e = b + text.size();
  if (b != e && *b == '+') ++b;
  auto [p, ec] = std::from_chars(b, e, out);
  return b != e && ec == std::errc() && p == e && std::isfinite(out);
}

bool parse_int(std::string_view text, int& out) {
  const char* b = text.data();
  const char* e = b + text.size();
  if (b != e && *b == '+') ++b;
  auto [p, ec] = std::from_chars(b, e, out);
  return b != e && ec == std::errc() && p == e;
}

double wrap_degrees(double a) {
  double r = std::fmod(a + 180.0, 360.0);
  if (r < 0) r += 360.0;
  r -= 180.0;
  return r >= 180.0 ? r - 360.0 : r;
}

bool set_dihedral_interval(DihedralRestraint& r, double lo, double hi) {
  if (hi < lo) return false;
  if (hi - lo >= 360.0) {
    r.lower = -180.0;
    r.upper = 180.0;
    return true;
  }
  r.lower = wrap_degrees(lo);
  r.upper = wrap_degrees(hi);
  // [170, 190] wraps to [170, -170]: stored as is (upper < lower runs through ±180). An interval
  // that ends on +180 exactly wraps to -180: keep 180 so that it stays [x, 180].
  if (hi > lo && r.upper == -180.0 && r.lower > -180.0) r.upper = 180.0;
  return true;
}

void covering_arc(const std::vector<const DihedralRestraint*>& rs, double& lower, double& upper) {
  // Arcs as [start, start + length] with start in [0, 360).
  std::vector<std::pair<double, double>> arcs;
  for (const auto* r : rs) {
    double len = r->upper - r->lower;
    if (len < 0) len += 360.0;
    if (r->lower == -180.0 && r->upper == 180.0) len = 360.0;
    if (len >= 360.0) {
      lower = -180.0;
      upper = 180.0;
      return;
    }
    arcs.emplace_back(r->lower + 180.0, len);
  }
  std::sort(arcs.begin(), arcs.end());
  // Merge overlapping arcs (linear sweep, then the wrap between the last and the first).
  std::vector<std::pair<double, double>> merged;  // [start, end], end may exceed 360
  for (const auto& [s, len] : arcs) {
    if (!merged.empty() && s <= merged.back().second) merged.back().second = std::max(merged.back().second, s + len);
    else merged.emplace_back(s, s + len);
  }
  // The largest gap between consecutive pieces (circularly) is what the cover leaves out.
  double best_gap = -1;
  std::size_t after = 0;  // the piece that ends where the largest gap starts
  for (std::size_t i = 0; i < merged.size(); ++i) {
    const auto& next = merged[(i + 1) % merged.size()];
    const double next_start = i + 1 < merged.size() ? next.first : next.first + 360.0;
    const double gap = next_start - merged[i].second;
    if (gap > best_gap) {
      best_gap = gap;
      after = i;
    }
  }
  if (best_gap <= 0) {
    lower = -180.0;
    upper = 180.0;
    return;
  }
  const double start = merged[(after + 1) % merged.size()].first;  // the cover starts after the gap
  const double end = merged[after].second;                         // and ends where the gap starts
  lower = wrap_degrees(start - 180.0);
  upper = wrap_degrees(end - 180.0);
  if (upper == -180.0 && lower > -180.0) upper = 180.0;
}

void count_alternatives(std::size_t& total, std::size_t count, const std::string& path, std::size_t line) {
  if (count > kMaxTotalAlternatives - std::min(total, kMaxTotalAlternatives))
    throw ParseError(path, line,
                     "the file expands to more than " + std::to_string(kMaxTotalAlternatives) +
                         " atom-pair alternatives in all (its restraints' pairs, groups and AND/OR combinations)");
  total += count;
}

void combine_distance_rows(std::vector<RestraintRow>& rows, const std::string& path, RestraintSet& set,
                           std::size_t& total) {
  Tally widened, relaxed, and_split, repeated;
  for (const auto& members : groups_of(rows)) {
    const auto terms = terms_of(rows, members);
    std::size_t n = 0;
    for (const auto& t : terms) n = std::max(n, t.size());
    const bool several_and = n > 1 && terms.size() > 1;
    const RestraintRow& first = rows[members.front()];
    // n restraints of one row per term each: bounded before anything is built (10⁴ OR-ed terms
    // and one combination of 10⁴ rows would make 10⁸ alternatives out of 2·10⁴ rows).
    if (several_and && n * terms.size() > kMaxCombinedAlternatives)
      throw ParseError(path, first.line,
                       "restraint " + std::to_string(first.id) + " ORs " + std::to_string(terms.size()) +
                           " combinations of up to " + std::to_string(n) +
                           " AND-ed rows: " + std::to_string(n * terms.size()) + " alternatives in all (at most " +
                           std::to_string(kMaxCombinedAlternatives) + ")");
    if (several_and)
      relaxed.add("restraint " + std::to_string(first.id) + " (" + path + ":" + std::to_string(first.line) + ")");
    else if (n > 1)
      and_split.add("restraint " + std::to_string(first.id) + " (" + path + ":" + std::to_string(first.line) + ")");
    for (std::size_t i = 0; i < n; ++i) {
      DistanceRestraint r;
      bool started = false, differ = false;
      // pair → its alternative, so that finding a repeated pair stays O(1) however many rows
      // one restraint id has
      std::unordered_map<std::string, std::size_t> pairs;
      for (const auto& t : terms) {
        const RestraintRow& row = rows[t[std::min(i, t.size() - 1)]];
        const DistanceRestraint& d = row.distance;
        const auto& alt = d.alternatives.front();
        if (!started) {
          r = d;
          r.id = row.id;
          r.origin = path + ":" + std::to_string(row.line);
          for (std::size_t k = 0; k < r.alternatives.size(); ++k) pairs.try_emplace(pair_key(r.alternatives[k]), k);
          started = true;
          continue;
        }
        if (d.lower != r.lower || d.upper != r.upper || d.target != r.target || d.weight != r.weight) differ = true;
        r.lower = std::min(r.lower, d.lower);
        r.upper = std::max(r.upper, d.upper);
        r.weight = std::min(r.weight, d.weight);
        // A repeated pair would count twice in the r⁻⁶ sum (d_eff 2^(1/6) shorter): kept once.
        if (const auto [dup, fresh] = pairs.try_emplace(pair_key(alt), r.alternatives.size()); !fresh) {
          if (!several_and)
            repeated.add("line " + std::to_string(row.line) + " repeats line " +
                         std::to_string(r.alternatives[dup->second].a.line) + " (restraint " + std::to_string(row.id) +
                         ")");
          continue;
        }
        r.alternatives.push_back(alt);
      }
      if (differ) {
        r.target = 0.0;
        widened.add("restraint " + std::to_string(r.id) + " (" + r.origin + "): [" + num(r.lower) + ", " +
                    num(r.upper) + "] Å");
      }
      count_alternatives(total, r.alternatives.size(), path, first.line);
      set.restraints.push_back(std::move(r));
    }
  }
  if (repeated.count > 0)
    set.warnings.push_back(std::to_string(repeated.count) +
                           (repeated.count == 1
                                ? " row repeats an atom pair of its own restraint_id and was dropped"
                                : " rows repeat an atom pair of their own restraint_id and were dropped") +
                           " (it would count twice in the r^-6 sum), e.g. " + repeated.example);
  if (and_split.count > 0)
    set.warnings.push_back(std::to_string(and_split.count) +
                           " restraints are one combination of AND-ed rows (restraint_combination_id): each row "
                           "became a restraint of its own, e.g. " +
                           and_split.example);
  if (relaxed.count > 0)
    set.warnings.push_back(std::to_string(relaxed.count) +
                           " restraints OR several AND-ed combinations (restraint_combination_id), which one "
                           "distance restraint cannot hold: each was replaced by restraints that take one row of "
                           "every combination (implied by the original, but looser), e.g. " +
                           relaxed.example);
  if (widened.count > 0)
    set.warnings.push_back(std::to_string(widened.count) +
                           " restraints combine rows with different bounds (OR-ed rows of one restraint id): kept "
                           "as one ambiguous restraint with the widest bounds, e.g. " +
                           widened.example);
}

void combine_dihedral_rows(std::vector<RestraintRow>& rows, const std::string& path, RestraintSet& set) {
  Tally arcs, dropped, and_split;
  for (const auto& members : groups_of(rows)) {
    const auto terms = terms_of(rows, members);
    const RestraintRow& first = rows[members.front()];
    const std::string where =
        "restraint " + std::to_string(first.id) + " (" + path + ":" + std::to_string(first.line) + ")";
    // Angles in the order they first appear; the rows on each angle in term order, and how many
    // terms restrain it (memory linear in the rows: not a slot per term and angle).
    struct Angle {
      std::vector<const RestraintRow*> rows;
      std::size_t terms = 0, last_term = 0;
    };
    std::vector<std::string> order;
    std::map<std::string, Angle> on;
    for (std::size_t t = 0; t < terms.size(); ++t)
      for (std::size_t i : terms[t]) {
        const std::string k = angle_key(rows[i].dihedral);
        auto [it, fresh] = on.try_emplace(k);
        if (fresh) order.push_back(k);
        Angle& a = it->second;
        if (a.rows.empty() || a.last_term != t) ++a.terms;
        a.last_term = t;
        a.rows.push_back(&rows[i]);
      }
    if (terms.size() == 1 && terms.front().size() > 1) and_split.add(where);
    for (const auto& k : order) {
      const Angle& angle = on[k];
      if (angle.terms < terms.size()) {  // some term does not restrain this angle
        dropped.add(where);
        continue;
      }
      std::vector<const DihedralRestraint*> all;
      double weight = angle.rows.front()->dihedral.weight;
      for (const RestraintRow* r : angle.rows) {
        all.push_back(&r->dihedral);
        weight = std::min(weight, r->dihedral.weight);
      }
      const RestraintRow& row = *angle.rows.front();
      DihedralRestraint d = row.dihedral;
      d.id = row.id;
      d.origin = path + ":" + std::to_string(row.line);
      if (all.size() > 1) {
        covering_arc(all, d.lower, d.upper);
        d.weight = weight;
        bool same = true;
        for (const auto* x : all) same = same && x->lower == all[0]->lower && x->upper == all[0]->upper;
        if (!same) {
          double len = d.upper - d.lower;
          if (len < 0) len += 360.0;
          d.target = wrap_degrees(d.lower + len / 2);
          arcs.add(where + ": [" + num(d.lower) + ", " + num(d.upper) + "]°");
        }
      }
      set.dihedrals.push_back(std::move(d));
    }
  }
  if (and_split.count > 0)
    set.warnings.push_back(std::to_string(and_split.count) +
                           " dihedral restraints are one combination of AND-ed rows (restraint_combination_id): "
                           "each row became a restraint of its own, e.g. " +
                           and_split.example);
  if (arcs.count > 0)
    set.warnings.push_back(std::to_string(arcs.count) +
                           " dihedral restraints OR several intervals of one angle, which one dihedral restraint "
                           "cannot hold: kept as the smallest arc covering them (looser), e.g. " +
                           arcs.example);
  if (dropped.count > 0)
    set.warnings.push_back(std::to_string(dropped.count) +
                           " angles of OR-ed dihedral restraints are restrained by only some of the alternatives "
                           "(restraint_combination_id), which implies no bound on them: left out, e.g. " +
                           dropped.example);
}

bool named_dihedral_atoms(const std::string& name, const std::string& residue, int number,
                          std::array<AtomSelector, 4>& atoms) {
  auto set = [&](std::size_t k, int dres, const std::string& atom) {
    atoms[k].residue_number = number + dres;
    atoms[k].atom = atom;
    atoms[k].residue = dres == 0 ? residue : "";
  };
  if (name == "PHI") {
    set(0, -1, "C"), set(1, 0, "N"), set(2, 0, "CA"), set(3, 0, "C");
    return true;
  }
  if (name == "PSI") {
    set(0, 0, "N"), set(1, 0, "CA"), set(2, 0, "C"), set(3, 1, "N");
    return true;
  }
  if (name == "OMEGA") {
    set(0, 0, "CA"), set(1, 0, "C"), set(2, 1, "N"), set(3, 1, "CA");
    return true;
  }
  // Side chains: N, CA, CB, then the atoms that define χ1, χ2, ... (IUPAC-IUB 1970).
  static const std::map<std::string, std::vector<const char*>> chains = {
      {"ARG", {"N", "CA", "CB", "CG", "CD", "NE", "CZ", "NH1"}},
      {"ASN", {"N", "CA", "CB", "CG", "OD1"}},
      {"ASP", {"N", "CA", "CB", "CG", "OD1"}},
      {"CYS", {"N", "CA", "CB", "SG"}},
      {"GLN", {"N", "CA", "CB", "CG", "CD", "OE1"}},
      {"GLU", {"N", "CA", "CB", "CG", "CD", "OE1"}},
      {"HIS", {"N", "CA", "CB", "CG", "ND1"}},
      {"ILE", {"N", "CA", "CB", "CG1", "CD1"}},
      {"LEU", {"N", "CA", "CB", "CG", "CD1"}},
      {"LYS", {"N", "CA", "CB", "CG", "CD", "CE", "NZ"}},
      {"MET", {"N", "CA", "CB", "CG", "SD", "CE"}},
      {"PHE", {"N", "CA", "CB", "CG", "CD1"}},
      {"PRO", {"N", "CA", "CB", "CG", "CD"}},
      {"SER", {"N", "CA", "CB", "OG"}},
      {"THR", {"N", "CA", "CB", "OG1"}},
      {"TRP", {"N", "CA", "CB", "CG", "CD1"}},
      {"TYR", {"N", "CA", "CB", "CG", "CD1"}},
      {"VAL", {"N", "CA", "CB", "CG1"}}};
  if (name.size() != 4 || name.compare(0, 3, "CHI") != 0 || name[3] < '1' || name[3] > '5') return false;
  const auto it = chains.find(residue);
  if (it == chains.end()) return false;
  const std::size_t k = static_cast<std::size_t>(name[3] - '1');
  if (k + 4 > it->second.size()) return false;
  for (std::size_t j = 0; j < 4; ++j) set(j, 0, it->second[k + j]);
  return true;
}

}  // namespace gemflow::io::detail
