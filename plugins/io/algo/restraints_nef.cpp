// NEF restraint reader: distance and dihedral restraint lists.
#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <map>
#include <string>
#include <vector>

#include "gemflow/io/errors.hpp"
#include "gemflow/io/restraints_io.hpp"
#include "gemflow/io/star.hpp"
#include "restraints_common.hpp"

namespace gemflow::io {

namespace {

double number(const StarValue& v, const std::string& path, const std::string& what) {
  double d = 0;
  const char* b = v.text.data();
  const char* e = b + v.text.size();
  if (b != e && *b == '+') ++b;
  auto [p, ec] = std::from_chars(b, e, d);
  if (ec != std::errc() || p != e || !std::isfinite(d))
    throw ParseError(path, v.line, "bad " + what + " '" + v.text + "' (expected a number)");
  return d;
}

/// An integer column: the whole value must be an int ("2.9" was read as 2 and merged into
/// restraint 2).
int integer(const StarValue& v, const std::string& path, const std::string& what) {
  int i = 0;
  const char* b = v.text.data();
  const char* e = b + v.text.size();
  if (b != e && *b == '+') ++b;
  auto [p, ec] = std::from_chars(b, e, i);
  if (ec == std::errc::result_out_of_range)
    throw ParseError(path, v.line, what + " '" + v.text + "' is out of range (at most 2147483647 in magnitude)");
  if (ec != std::errc() || p != e || b == e)
    throw ParseError(path, v.line, "bad " + what + " '" + v.text + "' (expected an integer)");
  return i;
}

}  // namespace

namespace {

/// Reads atom `k` (1-based) of row `r` of a NEF restraint loop into `sel`; counts insertion codes.
struct AtomColumns {
  std::size_t chain, seq, res, atom;
};

void read_atom(const StarLoop& loop, std::size_t r, const AtomColumns& c, int k, const std::string& path,
               AtomSelector& sel, std::size_t& insertion_codes, std::string& insertion_example) {
  const std::string n = std::to_string(k);
  const StarValue& seq = loop.at(r, c.seq);
  if (seq.is_null()) throw ParseError(path, seq.line, "sequence_code_" + n + " is missing");
  const char* b = seq.text.data();
  const char* e = b + seq.text.size();
  if (b != e && *b == '+') ++b;
  auto [p, ec] = std::from_chars(b, e, sel.residue_number);
  if (ec == std::errc::result_out_of_range)
    throw ParseError(path, seq.line, "sequence_code_" + n + " '" + seq.text + "' is out of range");
  if (ec != std::errc())
    throw ParseError(path, seq.line, "sequence_code_" + n + " '" + seq.text + "' is not a residue number");
  // Only letters may follow the number (an insertion code, "10A"): "2.9" or "10-11" is no residue
  // number.
  if (!std::all_of(p, e, [](char ch) { return std::isalpha(static_cast<unsigned char>(ch)) != 0; }))
    throw ParseError(path, seq.line,
                     "sequence_code_" + n + " '" + seq.text +
                         "' is not a residue number (an integer, optionally followed by an insertion code)");
  if (p != e && insertion_codes++ == 0) insertion_example = "line " + std::to_string(seq.line) + ": " + seq.text;
  if (const StarValue& v = loop.at(r, c.chain); !v.is_null()) sel.chain = v.text;
  if (const StarValue& v = loop.at(r, c.res); !v.is_null()) sel.residue = v.text;
  const StarValue& atom = loop.at(r, c.atom);
  if (atom.is_null()) throw ParseError(path, atom.line, "atom_name_" + n + " is missing");
  sel.atom = atom.text;
  sel.line = atom.line;
}

std::string joined_list(const std::vector<std::string>& missing) {
  std::string list;
  for (std::size_t k = 0; k < missing.size(); ++k) {
    if (k > 0) list += k + 1 == missing.size() ? " and " : ", ";
    list += missing[k];
  }
  return list;
}

/// The dihedral rows of one _nef_dihedral_restraint loop.
void read_dihedral_loop(const StarLoop& loop, const std::string& path, std::vector<detail::RestraintRow>& rows,
                        std::size_t& insertion_codes, std::string& insertion_example, const CancelCheck& cancel,
                        std::size_t& tick) {
  const std::string cat = "_nef_dihedral_restraint.";
  auto opt = [&](const std::string& tag) { return loop.column(cat + tag); };
  std::vector<std::string> missing;
  for (const char* tag : {"restraint_id"})
    if (opt(tag) < 0) missing.emplace_back(tag);
  for (int k = 1; k <= 4; ++k)
    for (const char* f : {"chain_code_", "sequence_code_", "residue_name_", "atom_name_"})
      if (opt(f + std::to_string(k)) < 0) missing.push_back(f + std::to_string(k));
  const bool limits = opt("lower_limit") >= 0 && opt("upper_limit") >= 0;
  const bool target = opt("target_value") >= 0 && opt("target_value_uncertainty") >= 0;
  if (!limits && !target)
    missing.emplace_back("lower_limit/upper_limit (or target_value with target_value_uncertainty)");
  if (!missing.empty())
    throw ParseError(
        path, loop.line,
        "_nef_dihedral_restraint loop has no " + joined_list(missing) + " column" + (missing.size() > 1 ? "s" : ""));
  AtomColumns cols[4];
  for (int k = 0; k < 4; ++k) {
    const std::string n = std::to_string(k + 1);
    cols[k] = {static_cast<std::size_t>(opt("chain_code_" + n)), static_cast<std::size_t>(opt("sequence_code_" + n)),
               static_cast<std::size_t>(opt("residue_name_" + n)), static_cast<std::size_t>(opt("atom_name_" + n))};
  }
  const int c_id = opt("restraint_id"), c_comb = opt("restraint_combination_id"), c_lo = opt("lower_limit"),
            c_hi = opt("upper_limit"), c_t = opt("target_value"), c_u = opt("target_value_uncertainty"),
            c_w = opt("weight"), c_name = opt("name");
  for (std::size_t r = 0; r < loop.rows(); ++r) {
    detail::poll_cancel(cancel, tick);
    auto get = [&](int c) -> const StarValue* {
      if (c < 0) return nullptr;
      const StarValue& v = loop.at(r, static_cast<std::size_t>(c));
      return v.is_null() ? nullptr : &v;
    };
    const StarValue& idv = loop.at(r, static_cast<std::size_t>(c_id));
    const int line = idv.line;
    if (idv.is_null()) throw ParseError(path, line, "restraint_id is missing ('.' or '?')");
    detail::RestraintRow row;
    row.id = integer(idv, path, "restraint_id");
    row.line = line;
    if (const StarValue* v = get(c_comb)) row.combination = v->text;
    DihedralRestraint& d = row.dihedral;
    for (int k = 0; k < 4; ++k)
      read_atom(loop, r, cols[k], k + 1, path, d.atoms[static_cast<std::size_t>(k)], insertion_codes,
                insertion_example);
    if (const StarValue* v = get(c_name)) d.name = v->text;
    if (const StarValue* v = get(c_w)) d.weight = number(*v, path, "weight");
    if (d.weight < 0)
      throw ParseError(path, line,
                       "restraint " + std::to_string(row.id) + ": weight " + std::to_string(d.weight) + " is negative");
    const StarValue *lo = get(c_lo), *hi = get(c_hi), *t = get(c_t), *u = get(c_u);
    double a = 0, b = 0;
    if (lo && hi) {
      a = number(*lo, path, "lower_limit");
      b = number(*hi, path, "upper_limit");
    } else if (t && u) {
      const double tv = number(*t, path, "target_value"), uv = number(*u, path, "target_value_uncertainty");
      if (uv < 0)
        throw ParseError(path, line, "restraint " + std::to_string(row.id) + ": target_value_uncertainty is negative");
      a = tv - uv;
      b = tv + uv;
    } else {
      throw ParseError(path, line,
                       "dihedral restraint " + std::to_string(row.id) +
                           " has no interval: give lower_limit and upper_limit, or target_value and "
                           "target_value_uncertainty");
    }
    if (std::abs(a) > 1e4 || std::abs(b) > 1e4)
      throw ParseError(path, line, "dihedral restraint " + std::to_string(row.id) + ": limit beyond ±10000°");
    // Limits through ±180 come either way: 170 to 190, or wrapped, 170 to -170 (lower > upper).
    if (b < a) b += 360.0;
    (void)detail::set_dihedral_interval(d, a, b);
    d.target = t ? detail::wrap_degrees(number(*t, path, "target_value"))
                 : detail::wrap_degrees(a + std::min(360.0, b - a) / 2);
    rows.push_back(std::move(row));
  }
}

}  // namespace

RestraintSet parse_nef_distance_restraints(std::string_view text, const std::string& path, const CancelCheck& cancel) {
  StarFile f = parse_star(text, path, cancel);
  std::size_t tick = 0, alternatives = 0;
  RestraintSet set;
  set.source = path;
  set.format = "nef";
  std::size_t insertion_codes = 0, dihedral_loops = 0, other_lists = 0;
  std::string other_example;
  std::string insertion_example;
  bool found = false;
  for (const auto& block : f.blocks) {
    for (const auto& frame : block.frames) {
      for (const auto& loop : frame.loops) {
        if (loop.has_category("_nef_dihedral_restraint")) {
          std::vector<detail::RestraintRow> rows;
          read_dihedral_loop(loop, path, rows, insertion_codes, insertion_example, cancel, tick);
          detail::combine_dihedral_rows(rows, path, set);
          ++dihedral_loops;
          continue;
        }
        if (!loop.has_category("_nef_distance_restraint")) {
          // Other restraint lists (RDC ...): not read, and said so.
          const std::string& tag = loop.tags.front();
          const std::string cat = tag.substr(0, tag.find('.'));
          if (cat.size() > 10 && cat.compare(cat.size() - 10, 10, "_restraint") == 0 && other_lists++ == 0)
            other_example = cat + " (line " + std::to_string(loop.line) + ")";
          continue;
        }
        found = true;
        auto opt = [&](const char* tag) { return loop.column(std::string("_nef_distance_restraint.") + tag); };
        // Required columns: the ids and the two atoms. An upper bound needs upper_limit, or else
        // target_value with target_value_uncertainty. All missing ones are named at once, at the
        // line of the loop_ header. Optional: index, restraint_combination_id, weight (1),
        // lower_limit (0), target_value (0), *_linear_limit (ignored).
        {
          std::vector<std::string> missing;
          for (const char* tag : {"restraint_id", "chain_code_1", "sequence_code_1", "residue_name_1", "atom_name_1",
                                  "chain_code_2", "sequence_code_2", "residue_name_2", "atom_name_2"})
            if (opt(tag) < 0) missing.emplace_back(tag);
          if (opt("upper_limit") < 0 && (opt("target_value") < 0 || opt("target_value_uncertainty") < 0))
            missing.emplace_back(opt("target_value") < 0
                                     ? "upper_limit"
                                     : "upper_limit (or target_value_uncertainty, to use target_value + "
                                       "target_value_uncertainty)");
          if (!missing.empty())
            throw ParseError(path, loop.line,
                             "_nef_distance_restraint loop has no " + joined_list(missing) + " column" +
                                 (missing.size() > 1 ? "s" : ""));
        }
        auto need = [&](const char* tag) { return static_cast<std::size_t>(opt(tag)); };
        const std::size_t c_id = need("restraint_id");
        const AtomColumns cols[2] = {
            {need("chain_code_1"), need("sequence_code_1"), need("residue_name_1"), need("atom_name_1")},
            {need("chain_code_2"), need("sequence_code_2"), need("residue_name_2"), need("atom_name_2")}};
        const int c_lower = opt("lower_limit"), c_upper = opt("upper_limit"), c_target = opt("target_value");
        const int c_unc = opt("target_value_uncertainty"), c_weight = opt("weight");
        const int c_comb = opt("restraint_combination_id");
        if (c_upper < 0)
          set.warnings.push_back("line " + std::to_string(loop.line) +
                                 ": the _nef_distance_restraint loop has no upper_limit column: upper bounds are "
                                 "target_value + target_value_uncertainty");
        std::vector<detail::RestraintRow> rows;
        for (std::size_t r = 0; r < loop.rows(); ++r) {
          detail::poll_cancel(cancel, tick);
          const StarValue& idv = loop.at(r, c_id);
          const int line = idv.line;
          auto get = [&](int c) -> const StarValue* {
            if (c < 0) return nullptr;
            const StarValue& v = loop.at(r, static_cast<std::size_t>(c));
            return v.is_null() ? nullptr : &v;
          };
          if (idv.is_null()) throw ParseError(path, line, "restraint_id is missing ('.' or '?')");
          const int id = integer(idv, path, "restraint_id");
          detail::RestraintRow row;
          row.id = id;
          row.line = line;
          if (const StarValue* v = get(c_comb)) row.combination = v->text;
          DistanceRestraint::Alternative alt;
          read_atom(loop, r, cols[0], 1, path, alt.a, insertion_codes, insertion_example);
          read_atom(loop, r, cols[1], 2, path, alt.b, insertion_codes, insertion_example);
          double lower = 0, upper = 0, target = 0, weight = 1;
          if (const StarValue* v = get(c_lower)) lower = number(*v, path, "lower_limit");
          if (const StarValue* v = get(c_target)) target = number(*v, path, "target_value");
          if (const StarValue* v = get(c_upper)) {
            upper = number(*v, path, "upper_limit");
          } else if (get(c_target) && get(c_unc)) {
            upper = target + number(*get(c_unc), path, "target_value_uncertainty");
          } else {
            // A target alone is no upper bound: using it as one would be far too tight.
            throw ParseError(
                path, line,
                "restraint " + std::to_string(id) + " has no upper bound: " +
                    (c_upper < 0
                         ? std::string("the loop (line ") + std::to_string(loop.line) + ") has no upper_limit column"
                         : std::string("upper_limit is '.'")) +
                    (get(c_target) ? ", and no target_value_uncertainty is given" : ", and no target_value is given"));
          }
          if (const StarValue* v = get(c_weight)) weight = number(*v, path, "weight");
          if (!std::isfinite(upper))  // target + uncertainty beyond the double range
            throw ParseError(path, line,
                             "restraint " + std::to_string(id) +
                                 ": target_value + "
                                 "target_value_uncertainty is not a finite number");
          // Negative limits passed here and failed later, in smoothing, without a file:line.
          for (const auto& [value, name] : {std::pair{lower, "lower_limit"}, std::pair{upper, "upper_limit"},
                                            std::pair{target, "target_value"}, std::pair{weight, "weight"}})
            if (value < 0)
              throw ParseError(path, line,
                               "restraint " + std::to_string(id) + ": " + name + " " + std::to_string(value) +
                                   " is negative (distances in Å, weights ≥ 0)");
          if (upper < lower)
            throw ParseError(path, line,
                             "restraint " + std::to_string(id) + ": upper_limit " + std::to_string(upper) +
                                 " is below lower_limit " + std::to_string(lower));
          DistanceRestraint& dr = row.distance;
          dr.lower = lower;
          dr.upper = upper;
          dr.target = target;
          dr.weight = weight;
          dr.alternatives.push_back(std::move(alt));
          rows.push_back(std::move(row));
        }
        detail::combine_distance_rows(rows, path, set, alternatives);
      }
    }
  }
  if (!found && dihedral_loops == 0)
    throw ParseError(path, 0,
                     "the file has no _nef_distance_restraint or _nef_dihedral_restraint loop (no "
                     "distance or dihedral restraint list in any save frame)");
  // the same atom pairs and bounds under another restraint_id: kept (the bound holds once either
  // way), but most likely a copy-and-paste slip
  {
    std::map<std::string, int> seen;
    std::size_t copies = 0;
    std::string example;
    for (const auto& r : set.restraints) {
      detail::poll_cancel(cancel, tick);
      std::vector<std::string> pairs;
      for (const auto& alt : r.alternatives) {
        std::string x = detail::atom_key(alt.a), y = detail::atom_key(alt.b);
        if (y < x) std::swap(x, y);
        pairs.push_back(x + "|" + y);
      }
      std::sort(pairs.begin(), pairs.end());
      std::string key = std::to_string(r.lower) + " " + std::to_string(r.upper) + " " + std::to_string(r.target);
      for (const auto& p : pairs) key += "\n" + p;
      const auto [it, fresh] = seen.emplace(key, r.id);
      if (!fresh && copies++ == 0)
        example =
            "restraint " + std::to_string(r.id) + " (" + r.origin + ") repeats restraint " + std::to_string(it->second);
    }
    if (copies > 0)
      set.warnings.push_back(std::to_string(copies) + (copies == 1 ? " restraint repeats" : " restraints repeat") +
                             " the atom pairs and bounds of an earlier restraint under another restraint_id (kept), "
                             "e.g. " +
                             example);
  }
  if (other_lists > 0)
    set.warnings.push_back(std::to_string(other_lists) +
                           " restraint lists other than distance and dihedral lists are not read, e.g. " +
                           other_example);
  if (insertion_codes > 0)
    set.warnings.push_back(std::to_string(insertion_codes) +
                           " sequence codes carry a suffix (insertion code) that is ignored, e.g. " +
                           insertion_example);
  return set;
}

RestraintSet read_nef_distance_restraints(const std::string& path) {
  return parse_nef_distance_restraints(read_text_file(path), path);
}

}  // namespace gemflow::io
