// Restraint readers other than NEF and Xplor/CNS (CYANA, NMR-STAR v3, AMBER &rst, wwPDB .mr
// bundles), format detection and the one entry point read_restraints().
#include <algorithm>
#include <cctype>
#include <cmath>
#include <map>
#include <sstream>

#include "gemflow/io/errors.hpp"
#include "gemflow/io/restraints_io.hpp"
#include "gemflow/io/star.hpp"
#include "restraints_common.hpp"
#include "text.hpp"

namespace gemflow::io {

namespace {

std::string upper(std::string_view s) {
  std::string r(s);
  for (auto& c : r) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return r;
}

std::string lower(std::string_view s) {
  std::string r(s);
  for (auto& c : r) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return r;
}

std::vector<std::string> fields(std::string_view line) {
  std::vector<std::string> f;
  std::size_t i = 0;
  while (i < line.size()) {
    while (i < line.size() && std::isspace(static_cast<unsigned char>(line[i]))) ++i;
    std::size_t b = i;
    while (i < line.size() && !std::isspace(static_cast<unsigned char>(line[i]))) ++i;
    if (i > b) f.emplace_back(line.substr(b, i - b));
  }
  return f;
}

/// The lines of `text` (without their '\n' or "\r\n").
std::vector<std::string_view> lines_of(std::string_view text) {
  std::vector<std::string_view> out;
  std::size_t b = 0;
  while (b <= text.size()) {
    std::size_t e = text.find('\n', b);
    if (e == std::string_view::npos) e = text.size();
    std::string_view l = text.substr(b, e - b);
    if (!l.empty() && l.back() == '\r') l.remove_suffix(1);
    out.push_back(l);
    if (e == text.size()) break;
    b = e + 1;
  }
  return out;
}

std::string_view trim(std::string_view s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
  return s;
}

bool all_alpha(const std::string& s) {
  return !s.empty() &&
         std::all_of(s.begin(), s.end(), [](char c) { return std::isalpha(static_cast<unsigned char>(c)) != 0; });
}

bool is_angle_name(const std::string& s) {
  const std::string u = upper(s);
  return u == "PHI" || u == "PSI" || u == "OMEGA" ||
         (u.size() == 4 && u.compare(0, 3, "CHI") == 0 && u[3] >= '1' && u[3] <= '5');
}

/// A CYANA distance line: n1 res1 atom1 n2 res2 atom2 value ...
bool cyana_distance_line(const std::vector<std::string>& f) {
  int i = 0;
  double d = 0;
  return f.size() >= 7 && detail::parse_int(f[0], i) && all_alpha(f[1]) && detail::parse_int(f[3], i) &&
         all_alpha(f[4]) && detail::parse_double(f[6], d);
}

/// A CYANA angle line: n res ANGLE lower upper ...
bool cyana_angle_line(const std::vector<std::string>& f) {
  int i = 0;
  double d = 0;
  return f.size() >= 5 && detail::parse_int(f[0], i) && all_alpha(f[1]) && is_angle_name(f[2]) &&
         detail::parse_double(f[3], d) && detail::parse_double(f[4], d);
}

/// A line without its comment (CYANA '#', Xplor '!').
std::string_view uncommented(std::string_view l, char mark) {
  const auto c = l.find(mark);
  return c == std::string_view::npos ? l : l.substr(0, c);
}

bool starts_with_word(std::string_view l, std::initializer_list<const char*> words) {
  const std::string f = lower(trim(l).substr(0, trim(l).find_first_of(" \t(")));
  for (const char* w : words)
    if (f == w) return true;
  return false;
}

// ---------------------------------------------------------------------------------------------
// CYANA

RestraintSet parse_cyana(std::string_view text, const std::string& path, CyanaKind kind, const CancelCheck& cancel) {
  std::string storage;
  text = detail::prepared_text(text, path, storage);
  if (kind == CyanaKind::Auto) {
    const std::string e = detail::lower_ext(path);
    kind = e == ".lol" ? CyanaKind::Lower : e == ".aco" ? CyanaKind::Angles : CyanaKind::Upper;
  }
  RestraintSet set;
  set.source = path;
  set.format = "xplor";  // CYANA names have no wildcards; pseudo-atoms (QB, MD ...) are resolved by name
  const auto lines = lines_of(text);
  std::size_t tick = 0;
  for (std::size_t k = 0; k < lines.size(); ++k) {
    detail::poll_cancel(cancel, tick);
    const int line = static_cast<int>(k) + 1;
    const auto f = fields(uncommented(lines[k], '#'));
    if (f.empty()) continue;
    if (kind == CyanaKind::Angles) {
      if (!cyana_angle_line(f))
        throw ParseError(path, line,
                         "expected a CYANA angle restraint 'residue-number residue-name angle lower upper' (angle "
                         "PHI, PSI, OMEGA or CHI1-CHI5), found '" +
                             std::string(trim(lines[k])) + "'");
      DihedralRestraint d;
      d.id = static_cast<int>(set.dihedrals.size()) + 1;
      d.origin = path + ":" + std::to_string(line);
      d.name = upper(f[2]);
      int n = 0;
      (void)detail::parse_int(f[0], n);
      const std::string res = upper(f[1]);
      if (!detail::named_dihedral_atoms(d.name, res, n, d.atoms))
        throw ParseError(path, line,
                         "angle " + d.name + " is not defined for residue " + res +
                             " (known: PHI, PSI, "
                             "OMEGA; CHI1-CHI5 of the standard amino acids that have them)");
      for (auto& a : d.atoms) a.line = line;
      double lo = 0, hi = 0;
      (void)detail::parse_double(f[3], lo);
      (void)detail::parse_double(f[4], hi);
      if (std::abs(lo) > 1e4 || std::abs(hi) > 1e4) throw ParseError(path, line, "angle limit beyond ±10000°");
      // CYANA writes intervals through ±180 as lower > upper (170 -170): the same arc.
      if (hi < lo) hi += 360.0;
      (void)detail::set_dihedral_interval(d, lo, hi);
      d.target = detail::wrap_degrees(lo + std::min(360.0, hi - lo) / 2);
      set.dihedrals.push_back(std::move(d));
      continue;
    }
    if (!cyana_distance_line(f))
      throw ParseError(path, line,
                       "expected a CYANA distance restraint 'residue-number residue-name atom residue-number "
                       "residue-name atom limit', found '" +
                           std::string(trim(lines[k])) + "'");
    DistanceRestraint r;
    r.id = static_cast<int>(set.restraints.size()) + 1;
    r.origin = path + ":" + std::to_string(line);
    DistanceRestraint::Alternative alt;
    for (int s = 0; s < 2; ++s) {
      AtomSelector& a = s == 0 ? alt.a : alt.b;
      const std::size_t o = static_cast<std::size_t>(3 * s);
      (void)detail::parse_int(f[o], a.residue_number);
      a.residue = upper(f[o + 1]);
      a.atom = f[o + 2];
      a.line = line;
    }
    double v = 0;
    (void)detail::parse_double(f[6], v);
    if (v <= 0 || v > 1e4)
      throw ParseError(path, line,
                       "distance limit " + f[6] + " Å is not in (0, 10000] (restraint " + std::to_string(r.id) + ")");
    if (kind == CyanaKind::Upper) {
      r.upper = v;
    } else {
      r.lower = v;
      r.upper = kNoUpperLimit;
    }
    r.alternatives.push_back(std::move(alt));
    set.restraints.push_back(std::move(r));
  }
  if (set.restraints.empty() && set.dihedrals.empty())
    throw ParseError(path, 0, "no CYANA restraint lines in the file");
  return set;
}

// ---------------------------------------------------------------------------------------------
// NMR-STAR v3

/// Columns naming atom k of a restraint loop. Residue numbers (with their chain) from the first
/// numbering a row gives: wwPDB's PDB_* (the deposited coordinates' numbering), the author's
/// Auth_*, the entity's Comp_index_ID. Atom names from PDB_atom_name, else Atom_ID (IUPAC, each
/// atom written out), else Auth_atom_ID (the author's, may hold wildcards). Residue names from
/// PDB_residue_name, else Comp_ID, else Auth_comp_ID.
struct StarAtomColumns {
  int chain[3], seq[3], atom[3], res[3];
};

StarAtomColumns star_atom_columns(const StarLoop& loop, const std::string& cat, int k) {
  const std::string n = std::to_string(k);
  auto c = [&](const std::string& tag) { return loop.column(lower(cat + "." + tag + "_" + n)); };
  return {{c("PDB_strand_ID"), c("Auth_asym_ID"), c("Entity_assembly_ID")},
          {c("PDB_residue_no"), c("Auth_seq_ID"), c("Comp_index_ID")},
          {c("PDB_atom_name"), c("Atom_ID"), c("Auth_atom_ID")},
          {c("PDB_residue_name"), c("Comp_ID"), c("Auth_comp_ID")}};
}

bool has_atom_columns(const StarAtomColumns& c) {
  return std::any_of(std::begin(c.seq), std::end(c.seq), [](int x) { return x >= 0; }) &&
         std::any_of(std::begin(c.atom), std::end(c.atom), [](int x) { return x >= 0; });
}

void star_atom(const StarLoop& loop, std::size_t r, const StarAtomColumns& c, int k, const std::string& path,
               AtomSelector& a) {
  auto value = [&](int col) -> const StarValue* {
    if (col < 0) return nullptr;
    const StarValue& v = loop.at(r, static_cast<std::size_t>(col));
    return v.is_null() ? nullptr : &v;
  };
  const StarValue *seq = nullptr, *atom = nullptr;
  for (int s = 0; s < 3 && !seq; ++s)
    if ((seq = value(c.seq[s]))) {
      if (const StarValue* ch = value(c.chain[s])) a.chain = ch->text;
    }
  for (int s = 0; s < 3 && !atom; ++s) atom = value(c.atom[s]);
  for (int s = 0; s < 3; ++s)
    if (const StarValue* v = value(c.res[s])) {
      a.residue = v->text;
      break;
    }
  if (!seq || !atom)
    throw ParseError(path, loop.at(r, 0).line,
                     "atom " + std::to_string(k) + " has no " + (seq ? "atom name" : "residue number") +
                         " (PDB_residue_no/Auth_seq_ID/Comp_index_ID, PDB_atom_name/Atom_ID/Auth_atom_ID)");
  if (!detail::parse_int(seq->text, a.residue_number))
    throw ParseError(path, seq->line,
                     "residue number '" + seq->text + "' of atom " + std::to_string(k) + " is not an integer");
  a.atom = atom->text;
  a.line = atom->line;
}

RestraintSet parse_nmrstar(std::string_view text, const std::string& path, const CancelCheck& cancel) {
  StarFile f = parse_star(text, path, cancel);
  std::size_t tick = 0, alternatives = 0;
  RestraintSet set;
  set.source = path;
  set.format = "xplor";  // IUPAC names; original-file wildcards ('HB*') in Auth columns are X-PLOR style
  std::size_t loops = 0;
  for (const auto& block : f.blocks)
    for (const auto& frame : block.frames)
      for (const auto& loop : frame.loops) {
        const bool dist = loop.has_category("_gen_dist_constraint");
        const bool tors = loop.has_category("_torsion_angle_constraint");
        if (!dist && !tors) continue;
        ++loops;
        const std::string cat = dist ? "_Gen_dist_constraint" : "_Torsion_angle_constraint";
        auto col = [&](const char* tag) { return loop.column(lower(cat + "." + tag)); };
        const int natoms = dist ? 2 : 4;
        std::vector<StarAtomColumns> atom_sets;
        std::vector<std::string> missing;
        if (col("ID") < 0) missing.emplace_back("ID");
        for (int k = 1; k <= natoms; ++k) {
          atom_sets.push_back(star_atom_columns(loop, cat, k));
          if (!has_atom_columns(atom_sets.back()))
            missing.push_back("Comp_index_ID_" + std::to_string(k) + "/Atom_ID_" + std::to_string(k));
        }
        const int c_lo = dist ? col("Distance_lower_bound_val") : col("Angle_lower_bound_val");
        const int c_hi = dist ? col("Distance_upper_bound_val") : col("Angle_upper_bound_val");
        const int c_t =
            dist ? col("Distance_val") >= 0 ? col("Distance_val") : col("Target_val") : col("Angle_target_val");
        const int c_u = dist ? col("Target_val_uncertainty") : col("Angle_target_val_err");
        if (c_hi < 0 && (c_t < 0 || c_u < 0))
          missing.emplace_back(dist ? "Distance_upper_bound_val" : "Angle_upper_bound_val");
        if (!missing.empty()) {
          std::string list;
          for (const auto& m : missing) list += (list.empty() ? "" : ", ") + m;
          throw ParseError(path, loop.line, cat + " loop has no " + list + " column" + (missing.size() > 1 ? "s" : ""));
        }
        const int c_id = col("ID"), c_comb = col("Combination_ID"), c_logic = col("Member_logic_code"),
                  c_w = col("Weight"), c_name = col("Torsion_angle_name");
        std::vector<detail::RestraintRow> rows;
        for (std::size_t r = 0; r < loop.rows(); ++r) {
          detail::poll_cancel(cancel, tick);
          auto get = [&](int c) -> const StarValue* {
            if (c < 0) return nullptr;
            const StarValue& v = loop.at(r, static_cast<std::size_t>(c));
            return v.is_null() ? nullptr : &v;
          };
          auto num = [&](const StarValue& v, const char* what) {
            double d = 0;
            if (!detail::parse_double(v.text, d))
              throw ParseError(path, v.line, std::string("bad ") + what + " '" + v.text + "' (expected a number)");
            return d;
          };
          const StarValue& idv = loop.at(r, static_cast<std::size_t>(c_id));
          detail::RestraintRow row;
          row.line = idv.line;
          if (idv.is_null() || !detail::parse_int(idv.text, row.id))
            throw ParseError(path, idv.line, "constraint ID '" + idv.text + "' is not an integer");
          if (const StarValue* v = get(c_comb)) row.combination = v->text;
          else if (const StarValue* l = get(c_logic); l && upper(l->text) == "AND") row.combination = "AND";
          const StarValue *lo = get(c_lo), *hi = get(c_hi), *t = get(c_t), *u = get(c_u);
          double weight = 1;
          if (const StarValue* v = get(c_w)) weight = num(*v, "Weight");
          if (weight < 0)
            throw ParseError(path, row.line, "constraint " + std::to_string(row.id) + ": negative weight");
          if (dist) {
            DistanceRestraint& d = row.distance;
            DistanceRestraint::Alternative alt;
            star_atom(loop, r, atom_sets[0], 1, path, alt.a);
            star_atom(loop, r, atom_sets[1], 2, path, alt.b);
            d.weight = weight;
            if (t) d.target = num(*t, "target distance");
            if (hi) d.upper = num(*hi, "Distance_upper_bound_val");
            else if (t && u) d.upper = d.target + num(*u, "Target_val_uncertainty");
            else throw ParseError(path, row.line, "constraint " + std::to_string(row.id) + " has no upper bound");
            if (lo) d.lower = num(*lo, "Distance_lower_bound_val");
            if (d.lower < 0 || d.upper < d.lower || d.upper > 1e4 || d.target < 0)
              throw ParseError(path, row.line,
                               "constraint " + std::to_string(row.id) + ": bounds [" + std::to_string(d.lower) + ", " +
                                   std::to_string(d.upper) + "] Å are no distance interval");
            d.alternatives.push_back(std::move(alt));
          } else {
            DihedralRestraint& d = row.dihedral;
            for (int k = 0; k < 4; ++k)
              star_atom(loop, r, atom_sets[static_cast<std::size_t>(k)], k + 1, path,
                        d.atoms[static_cast<std::size_t>(k)]);
            if (const StarValue* v = get(c_name)) d.name = v->text;
            d.weight = weight;
            double a = 0, b = 0;
            if (lo && hi) {
              a = num(*lo, "Angle_lower_bound_val");
              b = num(*hi, "Angle_upper_bound_val");
            } else if (t && u) {
              a = num(*t, "Angle_target_val") - num(*u, "Angle_target_val_err");
              b = num(*t, "Angle_target_val") + num(*u, "Angle_target_val_err");
            } else {
              throw ParseError(path, row.line,
                               "torsion constraint " + std::to_string(row.id) +
                                   " has no Angle_lower_bound_val and Angle_upper_bound_val");
            }
            if (std::abs(a) > 1e4 || std::abs(b) > 1e4)
              throw ParseError(path, row.line,
                               "torsion constraint " + std::to_string(row.id) + ": limit beyond ±10000°");
            if (b < a) b += 360.0;  // written through ±180 (170, -170)
            (void)detail::set_dihedral_interval(d, a, b);
            d.target = t ? detail::wrap_degrees(num(*t, "Angle_target_val"))
                         : detail::wrap_degrees(a + std::min(360.0, b - a) / 2);
          }
          rows.push_back(std::move(row));
        }
        if (dist) detail::combine_distance_rows(rows, path, set, alternatives);
        else detail::combine_dihedral_rows(rows, path, set);
      }
  if (loops == 0)
    throw ParseError(path, 0,
                     "the NMR-STAR file has no _Gen_dist_constraint or _Torsion_angle_constraint loop (no "
                     "distance or torsion restraints)");
  return set;
}

// ---------------------------------------------------------------------------------------------
// AMBER &rst namelists

RestraintSet parse_amber(std::string_view text, const std::string& path, const Structure* s,
                         const CancelCheck& cancel) {
  std::string storage;
  text = detail::prepared_text(text, path, storage);
  RestraintSet set;
  set.source = path;
  set.format = "xplor";
  std::size_t alternatives = 0;
  if (!s)
    throw ParseError(path, 0,
                     "AMBER &rst restraints name atoms by their number in the prmtop: connect the structure whose "
                     "atom order is the prmtop's (e.g. a PDB written by ambpdb or cpptraj from it)");
  // Tokens: words, '=' and ',' separated; '!' and '#' comments to the end of the line.
  struct Tok {
    std::string text;
    int line;
  };
  std::vector<Tok> toks;
  {
    int line = 1;
    std::size_t i = 0, tick = 0;
    while (i < text.size()) {
      const char c = text[i];
      if (c == '\n') {
        detail::poll_cancel(cancel, tick);
        ++line;
        ++i;
      } else if (c == '!' || c == '#') {
        while (i < text.size() && text[i] != '\n') ++i;
      } else if (std::isspace(static_cast<unsigned char>(c)) || c == ',') {
        ++i;
      } else if (c == '=') {
        toks.push_back({"=", line});
        ++i;
      } else {
        std::size_t b = i;
        while (i < text.size() && !std::isspace(static_cast<unsigned char>(text[i])) && text[i] != ',' &&
               text[i] != '=' && text[i] != '!')
          ++i;
        toks.push_back({lower(text.substr(b, i - b)), line});
      }
    }
  }
  // Values persist from one &rst to the next, as in AMBER (r1-r4, rk2, rk3).
  double r[5] = {0, 0, 0, 0, 0}, rk2 = 1;
  std::size_t p = 0, namelists = 0, tick = 0;
  auto atom_of = [&](long n, int line) -> AtomSelector {
    if (n < 1 || static_cast<std::size_t>(n) > s->atoms.size())
      throw ParseError(
          path, line,
          "atom number " + std::to_string(n) + " is not in the structure (1-" + std::to_string(s->atoms.size()) + ")");
    const Atom& a = s->atoms[static_cast<std::size_t>(n - 1)];
    return {a.chain, a.residue_number, a.residue, a.name, line};
  };
  while (p < toks.size()) {
    detail::poll_cancel(cancel, tick);
    if (toks[p].text != "&rst") {
      if (toks[p].text == "&wt" || toks[p].text == "&end" || toks[p].text == "/") {  // weight-change namelists
        ++p;
        while (p < toks.size() && toks[p].text != "&rst" && toks[p - 1].text != "&end" && toks[p - 1].text != "/") ++p;
        continue;
      }
      throw ParseError(path, toks[p].line, "unexpected '" + toks[p].text + "' outside an &rst namelist");
    }
    const int start = toks[p].line;
    ++p;
    ++namelists;
    std::vector<long> iat;
    std::vector<long> igr[2];
    while (p < toks.size() && toks[p].text != "&end" && toks[p].text != "/" && toks[p].text != "&rst") {
      const Tok& key = toks[p++];
      if (p >= toks.size() || toks[p].text != "=")
        throw ParseError(path, key.line,
                         "expected '=' after '" + key.text + "' in the &rst of line " + std::to_string(start));
      ++p;
      std::vector<std::string> vals;
      while (p < toks.size() && toks[p].text != "&end" && toks[p].text != "/" && toks[p].text != "&rst" &&
             !(p + 1 < toks.size() && toks[p + 1].text == "=")) {
        // "name(1)" style keys are taken as values of the key before: AMBER's iat(1)=... is rare
        vals.push_back(toks[p++].text);
      }
      auto number = [&](const std::string& v) {
        double d = 0;
        if (!detail::parse_double(v, d))
          throw ParseError(path, key.line, "bad value '" + v + "' for " + key.text + " (expected a number)");
        return d;
      };
      auto integers = [&](std::vector<long>& out) {
        for (const auto& v : vals) {
          int i = 0;
          if (!detail::parse_int(v, i)) throw ParseError(path, key.line, "bad atom number '" + v + "' in " + key.text);
          if (i != 0) out.push_back(i);  // trailing zeros end a list
        }
      };
      if (key.text == "iat") integers(iat);
      else if (key.text == "igr1") integers(igr[0]);
      else if (key.text == "igr2") integers(igr[1]);
      else if (key.text.size() == 2 && key.text[0] == 'r' && key.text[1] >= '1' && key.text[1] <= '4' && !vals.empty())
        r[key.text[1] - '0'] = number(vals.front());
      else if (key.text == "rk2" && !vals.empty()) rk2 = number(vals.front());
      // other keys (rk3, nstep1, ialtd, ir6, ifvari, ixpk, nxpk, rstwt ...) do not change the bounds
    }
    if (p < toks.size() && (toks[p].text == "&end" || toks[p].text == "/")) ++p;
    else throw ParseError(path, start, "the &rst namelist of this line is not closed by &end or '/'");
    if (iat.size() == 2) {
      DistanceRestraint d;
      d.id = static_cast<int>(set.restraints.size()) + 1;
      d.origin = path + ":" + std::to_string(start);
      d.lower = r[2];
      d.upper = r[3];
      d.weight = rk2;
      std::vector<AtomSelector> side[2];
      if (std::max<std::size_t>(igr[0].size(), 1) * std::max<std::size_t>(igr[1].size(), 1) > detail::kMaxGroupPairs)
        throw ParseError(path, start,
                         "groups igr1 × igr2 give " + std::to_string(igr[0].size() * igr[1].size()) +
                             " atom pairs (at most " + std::to_string(detail::kMaxGroupPairs) + ")");
      for (int k = 0; k < 2; ++k) {
        if (iat[static_cast<std::size_t>(k)] < 0) {  // a group: igr1 / igr2
          if (igr[k].empty())
            throw ParseError(path, start,
                             "iat " + std::to_string(iat[static_cast<std::size_t>(k)]) + " names a group, but igr" +
                                 std::to_string(k + 1) + " is empty");
          for (long n : igr[k]) side[k].push_back(atom_of(n, start));
        } else {
          side[k].push_back(atom_of(iat[static_cast<std::size_t>(k)], start));
        }
      }
      detail::count_alternatives(alternatives, side[0].size() * side[1].size(), path, start);
      for (const auto& a : side[0])
        for (const auto& b : side[1]) {
          detail::poll_cancel(cancel, tick);
          d.alternatives.push_back({a, b, {}, {}});
        }
      if (d.lower < 0 || d.upper < d.lower || d.upper > 1e4)
        throw ParseError(
            path, start,
            "distance bounds r2 = " + std::to_string(r[2]) + ", r3 = " + std::to_string(r[3]) + " are no interval");
      set.restraints.push_back(std::move(d));
    } else if (iat.size() == 4) {
      DihedralRestraint d;
      d.id = static_cast<int>(set.dihedrals.size()) + 1;
      d.origin = path + ":" + std::to_string(start);
      for (std::size_t k = 0; k < 4; ++k) d.atoms[k] = atom_of(iat[k], start);
      d.weight = rk2;
      double a = r[2], b = r[3];
      if (std::abs(a) > 1e4 || std::abs(b) > 1e4) throw ParseError(path, start, "angle beyond ±10000°");
      if (b < a) b += 360.0;
      (void)detail::set_dihedral_interval(d, a, b);
      d.target = detail::wrap_degrees(a + std::min(360.0, b - a) / 2);
      set.dihedrals.push_back(std::move(d));
    } else {
      throw ParseError(path, start,
                       "&rst with " + std::to_string(iat.size()) +
                           " atoms in iat: only distance (2) and torsion (4) "
                           "restraints are read (angles and generalized restraints are not)");
    }
  }
  if (namelists == 0) throw ParseError(path, 0, "no &rst namelist in the file");
  return set;
}

// ---------------------------------------------------------------------------------------------
// wwPDB .mr bundles

enum class LineKind { Blank, Header, Xplor, CyanaDistance, CyanaAngle, Amber, Table, Other };

LineKind classify(std::string_view raw) {
  const std::string_view l = trim(raw);
  if (l.empty() || l.front() == '!' || l.front() == '#') return LineKind::Blank;
  if (l.front() == '*') return LineKind::Header;
  if (l.front() == '(' || l.front() == ')' || l.front() == '{' || l.front() == '}') return LineKind::Xplor;
  if (starts_with_word(l, {"assign", "assi", "remarks", "rema", "set", "noe", "restraints", "dihedral", "dihe", "nass",
                           "nassign", "class", "end", "or", "scale", "ceiling", "averaging", "potential"}))
    return LineKind::Xplor;
  if (lower(l).rfind("&rst", 0) == 0 || lower(l).rfind("&end", 0) == 0) return LineKind::Amber;
  const auto f = fields(uncommented(l, '#'));
  if (cyana_angle_line(f)) return LineKind::CyanaAngle;
  if (cyana_distance_line(f)) return LineKind::CyanaDistance;
  // Numbers only: the end of a multi-line Xplor statement.
  double d = 0;
  if (!f.empty() && std::all_of(f.begin(), f.end(), [&](const std::string& x) { return detail::parse_double(x, d); }))
    return LineKind::Xplor;
  return LineKind::Other;
}

const char* kind_name(LineKind k) {
  switch (k) {
    case LineKind::Xplor: return "Xplor-NIH/CNS";
    case LineKind::CyanaDistance: return "CYANA distance";
    case LineKind::CyanaAngle: return "CYANA angle (.aco)";
    case LineKind::Amber: return "AMBER &rst";
    case LineKind::Header: return "header";
    case LineKind::Table: return "nomenclature mapping table";
    default: return "unknown";
  }
}

RestraintSet parse_mr(std::string_view text, const std::string& path, const Structure* s, MrReport* report,
                      const CancelCheck& cancel) {
  std::string storage;
  text = detail::prepared_text(text, path, storage);
  const auto lines = lines_of(text);
  // Sections: runs of lines of one kind (blank and comment lines join the section they are in).
  struct Section {
    LineKind kind;
    std::size_t first, last;  // 0-based line indices
  };
  std::vector<Section> sections;
  bool in_table = false, in_amber = false;
  std::size_t tick = 0;
  for (std::size_t k = 0; k < lines.size(); ++k) {
    detail::poll_cancel(cancel, tick);
    LineKind kind = classify(lines[k]);
    const std::string low = lower(lines[k]);
    // The wwPDB nomenclature mapping table ("Entry H atom name ... Submitted Coord H atom name") runs
    // until a restraint statement.
    if (low.find("atom name") != std::string::npos && low.find("entry") != std::string::npos) in_table = true;
    if (in_table) {
      if (kind == LineKind::Xplor && starts_with_word(lines[k], {"assign", "assi"})) in_table = false;
      else kind = LineKind::Table;
    }
    if (kind == LineKind::Amber) in_amber = lower(trim(lines[k])).rfind("&rst", 0) == 0;
    else if (in_amber && kind != LineKind::Blank) kind = LineKind::Amber;  // the namelist's body
    if (kind == LineKind::Blank) {
      if (!sections.empty()) sections.back().last = k;
      continue;
    }
    if (!sections.empty() && sections.back().kind == kind) sections.back().last = k;
    else sections.push_back({kind, k, k});
    if (kind == LineKind::Amber && (low.find("&end") != std::string::npos || trim(lines[k]) == "/")) in_amber = false;
  }
  RestraintSet set;
  set.source = path;
  set.format = "xplor";
  MrReport local;
  MrReport& rep = report ? *report : local;
  rep.sections.clear();
  // Each format is read once, from the text of all its sections with every other line left
  // empty (line numbers stay the bundle's; linear in the file however many sections it has).
  auto line_of_origin = [](const std::string& origin) {
    const auto c = origin.rfind(':');
    int v = 0;
    if (c != std::string::npos) (void)detail::parse_int(origin.substr(c + 1), v);
    return v;
  };
  std::vector<DistanceRestraint> distances;
  std::vector<DihedralRestraint> dihedrals;
  std::size_t alternatives = 0;  // over the formats of the bundle
  for (const LineKind kind : {LineKind::Xplor, LineKind::CyanaDistance, LineKind::CyanaAngle, LineKind::Amber}) {
    std::string part;
    bool any = false;
    std::string ranges;
    std::size_t next = 0, first_line = 0;  // lines copied so far; the kind's first line
    for (const auto& sec : sections) {
      if (sec.kind != kind) continue;
      if (!any) first_line = sec.first + 1;
      any = true;
      ranges += (ranges.empty() ? "" : ", ") + std::to_string(sec.first + 1) + "-" + std::to_string(sec.last + 1);
      part.append(sec.first - next, '\n');
      for (std::size_t k = sec.first; k <= sec.last; ++k) part.append(lines[k]).push_back('\n');
      next = sec.last + 1;
    }
    if (!any) continue;
    RestraintSet got;
    switch (kind) {
      case LineKind::Xplor: got = parse_xplor_restraints(part, path, true, cancel); break;
      case LineKind::CyanaDistance:
        // Upper (.upl) or lower (.lol) limits cannot be told from the lines: read as upper limits.
        got = parse_cyana(part, path, CyanaKind::Upper, cancel);
        got.warnings.push_back("CYANA distance limits read as upper limits (.upl)");
        break;
      case LineKind::CyanaAngle: got = parse_cyana(part, path, CyanaKind::Angles, cancel); break;
      default: got = parse_amber(part, path, s, cancel); break;
    }
    std::size_t got_alternatives = 0;
    for (const auto& r : got.restraints) got_alternatives += r.alternatives.size();
    detail::count_alternatives(alternatives, got_alternatives, path, first_line);
    for (auto& r : got.restraints) distances.push_back(std::move(r));
    for (auto& d : got.dihedrals) dihedrals.push_back(std::move(d));
    for (auto& w : got.warnings) set.warnings.push_back(std::string(kind_name(kind)) + " lines (" + ranges + "): " + w);
  }
  // File order, ids through the bundle.
  std::stable_sort(distances.begin(), distances.end(),
                   [&](const auto& x, const auto& y) { return line_of_origin(x.origin) < line_of_origin(y.origin); });
  std::stable_sort(dihedrals.begin(), dihedrals.end(),
                   [&](const auto& x, const auto& y) { return line_of_origin(x.origin) < line_of_origin(y.origin); });
  for (std::size_t k = 0; k < distances.size(); ++k) distances[k].id = static_cast<int>(k) + 1;
  for (std::size_t k = 0; k < dihedrals.size(); ++k) dihedrals[k].id = static_cast<int>(k) + 1;
  std::size_t di = 0, hi = 0;
  for (const auto& sec : sections) {
    MrSection out;
    out.first_line = static_cast<int>(sec.first) + 1;
    out.last_line = static_cast<int>(sec.last) + 1;
    out.format = kind_name(sec.kind);
    while (di < distances.size() && line_of_origin(distances[di].origin) <= out.last_line) ++di, ++out.distances;
    while (hi < dihedrals.size() && line_of_origin(dihedrals[hi].origin) <= out.last_line) ++hi, ++out.dihedrals;
    switch (sec.kind) {
      case LineKind::Header: out.skipped = "PDB header lines ('*'), no restraints"; break;
      case LineKind::Table: out.skipped = "wwPDB atom nomenclature mapping table, no restraints"; break;
      case LineKind::Other:
        out.skipped = "not a restraint format Gemflow reads (first line: '" +
                      std::string(trim(lines[sec.first])).substr(0, 60) + "')";
        break;
      default: break;
    }
    if (!out.skipped.empty() && sec.kind != LineKind::Header)
      set.warnings.push_back("lines " + std::to_string(out.first_line) + "-" + std::to_string(out.last_line) +
                             " skipped: " + out.skipped);
    rep.sections.push_back(std::move(out));
  }
  set.restraints = std::move(distances);
  set.dihedrals = std::move(dihedrals);
  if (set.restraints.empty() && set.dihedrals.empty())
    throw ParseError(path, 0, "the .mr file has no distance or dihedral restraint section Gemflow reads");
  return set;
}

}  // namespace

const char* restraint_format_name(RestraintFormat f) {
  switch (f) {
    case RestraintFormat::Nef: return "nef";
    case RestraintFormat::Xplor: return "xplor";
    case RestraintFormat::Cyana: return "cyana";
    case RestraintFormat::NmrStar: return "nmr-star";
    case RestraintFormat::Amber: return "amber";
    case RestraintFormat::Mr: return "mr";
    case RestraintFormat::Auto: break;
  }
  return "auto";
}

FormatDetection detect_restraint_format(std::string_view text_in, const std::string& path) {
  std::string storage;
  const std::string_view text = detail::prepared_text(text_in, path, storage);
  const std::string ext = detail::lower_ext(path);
  const auto lines = lines_of(text);
  int first = 0;  // first line with content
  bool star = false, amber = false, xplor = false, header = false, table = false;
  std::size_t cyana_dist = 0, cyana_angle = 0, other = 0;
  int first_other = 0;
  for (std::size_t k = 0; k < lines.size(); ++k) {
    const std::string_view l = trim(lines[k]);
    if (l.empty()) continue;
    if (first == 0 && l.front() != '#' && l.front() != '!') first = static_cast<int>(k) + 1;
    const std::string low = lower(l);
    if (low.rfind("data_", 0) == 0 || low.rfind("save_", 0) == 0 || low.rfind("loop_", 0) == 0) star = true;
    if (low.find("atom name") != std::string::npos && low.find("entry") != std::string::npos) table = true;
    if (table && !starts_with_word(l, {"assign", "assi"})) continue;  // the mapping table's rows
    switch (classify(lines[k])) {
      case LineKind::Xplor: xplor = xplor || starts_with_word(l, {"assign", "assi"}); break;
      case LineKind::Amber: amber = true; break;
      case LineKind::CyanaDistance: ++cyana_dist; break;
      case LineKind::CyanaAngle: ++cyana_angle; break;
      case LineKind::Header: header = header || k < 5; break;
      case LineKind::Other:
        if (other++ == 0) first_other = static_cast<int>(k) + 1;
        break;
      case LineKind::Blank:
      case LineKind::Table: break;
    }
  }
  if (first == 0) throw ParseError(path, 0, "the file is empty (no restraints)");
  if (star) {
    const std::string low = lower(text.substr(0, std::min<std::size_t>(text.size(), 50u << 20)));
    if (low.find("_nef_distance_restraint.") != std::string::npos ||
        low.find("_nef_dihedral_restraint.") != std::string::npos)
      return {RestraintFormat::Nef, "NEF: _nef_distance_restraint / _nef_dihedral_restraint loops"};
    if (low.find("_gen_dist_constraint.") != std::string::npos ||
        low.find("_torsion_angle_constraint.") != std::string::npos)
      return {RestraintFormat::NmrStar, "NMR-STAR v3: _Gen_dist_constraint / _Torsion_angle_constraint loops"};
    const bool shifts = low.find("chem_shift") != std::string::npos;
    throw ParseError(path, first,
                     std::string("a STAR file (NEF or NMR-STAR) without distance or dihedral restraint loops") +
                         (shifts ? " (it holds chemical shifts)" : "") +
                         ": no _nef_distance_restraint, _nef_dihedral_restraint, _Gen_dist_constraint or "
                         "_Torsion_angle_constraint loop");
  }
  const int kinds = (xplor ? 1 : 0) + (amber ? 1 : 0) + (cyana_dist + cyana_angle > 0 ? 1 : 0);
  if (ext == ".mr" || header || table || kinds > 1)
    return {RestraintFormat::Mr, std::string("wwPDB .mr bundle") + (header      ? ": '*' header lines"
                                                                    : table     ? ": wwPDB nomenclature table"
                                                                    : kinds > 1 ? ": sections of several formats"
                                                                                : ": .mr extension")};
  if (amber) return {RestraintFormat::Amber, "AMBER: &rst namelists"};
  if (xplor) return {RestraintFormat::Xplor, "Xplor-NIH/CNS: assign statements"};
  if (cyana_dist + cyana_angle > 0 && cyana_dist + cyana_angle >= other) {
    if (cyana_angle > 0 && cyana_dist == 0) return {RestraintFormat::Cyana, "CYANA angle restraints (.aco)"};
    return {RestraintFormat::Cyana,
            ext == ".lol" ? "CYANA lower distance limits (.lol)" : "CYANA upper distance limits (.upl)"};
  }
  throw ParseError(path, first_other > 0 ? first_other : first,
                   "unknown restraint format: this line is none of NEF, NMR-STAR v3, Xplor-NIH/CNS (.tbl), CYANA "
                   "(.upl/.lol/.aco), AMBER &rst or a wwPDB .mr bundle");
}

RestraintSet parse_cyana_restraints(std::string_view text, const std::string& path, CyanaKind kind,
                                    const CancelCheck& cancel) {
  return parse_cyana(text, path, kind, cancel);
}

RestraintSet parse_nmrstar_restraints(std::string_view text, const std::string& path, const CancelCheck& cancel) {
  return parse_nmrstar(text, path, cancel);
}

RestraintSet parse_amber_restraints(std::string_view text, const std::string& path, const Structure* structure,
                                    const CancelCheck& cancel) {
  return parse_amber(text, path, structure, cancel);
}

RestraintSet parse_mr_restraints(std::string_view text, const std::string& path, const Structure* structure,
                                 MrReport* report, const CancelCheck& cancel) {
  return parse_mr(text, path, structure, report, cancel);
}

RestraintSet parse_restraints(std::string_view text, const std::string& path, const RestraintReadOptions& o) {
  RestraintFormat f = o.format;
  if (f == RestraintFormat::Auto) f = detect_restraint_format(text, path).format;
  switch (f) {
    case RestraintFormat::Nef: return parse_nef_distance_restraints(text, path, o.cancel);
    case RestraintFormat::Xplor: return parse_xplor_restraints(text, path, false, o.cancel);
    case RestraintFormat::Cyana: return parse_cyana(text, path, o.cyana, o.cancel);
    case RestraintFormat::NmrStar: return parse_nmrstar(text, path, o.cancel);
    case RestraintFormat::Amber: return parse_amber(text, path, o.structure, o.cancel);
    case RestraintFormat::Mr: return parse_mr(text, path, o.structure, o.mr_report, o.cancel);
    case RestraintFormat::Auto: break;
  }
  throw ParseError(path, 0, "no restraint format");
}

RestraintSet read_restraints(const std::string& path, const RestraintReadOptions& options) {
  return parse_restraints(read_text_file(path), path, options);
}

RestraintSet read_distance_restraints(const std::string& path, RestraintFormat format) {
  RestraintReadOptions o;
  o.format = format;
  return read_restraints(path, o);
}

void merge_cyana_limits(RestraintSet& upl, const RestraintSet& lol) {
  std::map<std::string, std::size_t> by_pair;
  auto key = [](const AtomSelector& a, const AtomSelector& b) {
    std::string x = a.chain + ":" + std::to_string(a.residue_number) + ":" + upper(a.atom);
    std::string y = b.chain + ":" + std::to_string(b.residue_number) + ":" + upper(b.atom);
    return x < y ? x + "|" + y : y + "|" + x;
  };
  for (std::size_t i = 0; i < upl.restraints.size(); ++i) {
    const auto& r = upl.restraints[i];
    if (r.alternatives.size() == 1) by_pair.emplace(key(r.alternatives[0].a, r.alternatives[0].b), i);
  }
  std::size_t merged = 0, alone = 0;
  std::string example;
  for (const auto& l : lol.restraints) {
    if (l.alternatives.size() != 1) continue;
    const auto it = by_pair.find(key(l.alternatives[0].a, l.alternatives[0].b));
    if (it != by_pair.end() && upl.restraints[it->second].upper >= l.lower) {
      upl.restraints[it->second].lower = std::max(upl.restraints[it->second].lower, l.lower);
      ++merged;
      continue;
    }
    DistanceRestraint r = l;
    r.id = static_cast<int>(upl.restraints.size()) + 1;
    if (alone++ == 0) example = l.origin;
    upl.restraints.push_back(std::move(r));
  }
  upl.warnings.push_back(std::to_string(merged) + " lower limits of " + lol.source +
                         " merged into the upper-limit restraints of the same atom pairs");
  if (alone > 0)
    upl.warnings.push_back(std::to_string(alone) + " lower limits of " + lol.source +
                           " have no upper limit for their atom pair: kept with no upper limit (" +
                           std::to_string(static_cast<int>(kNoUpperLimit)) + " Å), e.g. " + example);
}

}  // namespace gemflow::io
