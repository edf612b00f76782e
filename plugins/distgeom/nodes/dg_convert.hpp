#pragma once
// Conversions between Gemflow data types and the plain inputs of distgeom/algo.
#include <cstddef>
#include <map>
#include <string>
#include <tuple>
#include <vector>

#include <gemflow/distgeom/bounds.hpp>
#include <gemflow/distgeom/refine.hpp>
#include <gemflow/error.hpp>
#include <gemflow/types.hpp>

namespace gemflow::distgeom::nodes {

/// "A:12:ALA:CA".
inline std::string atom_label(const Atom& a) {
  return a.chain + ":" + std::to_string(a.residue_number) + a.insertion + ":" + a.residue + ":" + a.name;
}

inline std::vector<AtomInfo> atom_infos(const Structure& s) {
  std::vector<AtomInfo> out;
  out.reserve(s.atoms.size());
  for (const auto& a : s.atoms) out.push_back({a.element, a.name, a.residue, a.chain, a.residue_number});
  return out;
}

/// Coordinates of model `model` (1-based), n×3 row-major. Throws InputError naming the
/// parameter `param` that chose the model.
inline std::vector<double> model_xyz(const Structure& s, long model, const char* param = "model") {
  if (model < 1 || static_cast<std::size_t>(model) > s.models.size())
    throw InputError(std::string("parameter '") + param + "' = " + std::to_string(model) + " but the structure has " +
                     std::to_string(s.models.size()) + " model(s)");
  const auto& m = s.models[static_cast<std::size_t>(model - 1)];
  std::vector<double> x;
  x.reserve(3 * m.size());
  for (const auto& p : m) x.insert(x.end(), {p[0], p[1], p[2]});
  return x;
}

/// Restraints over the structure's atom indices (as resolved by the reader).
inline std::vector<PairRestraint> pair_restraints(const RestraintSet& rs) {
  std::vector<PairRestraint> out;
  out.reserve(rs.restraints.size());
  for (const auto& r : rs.restraints) {
    PairRestraint p;
    p.id = r.id;
    p.lower = r.lower;
    p.upper = r.upper;
    p.correction = r.pseudo_correction;
    for (const auto& alt : r.alternatives) p.alternatives.push_back({alt.atoms_a, alt.atoms_b});
    out.push_back(std::move(p));
  }
  return out;
}

/// Key of an atom for matching across structures: chain, residue number + insertion, name.
using AtomKey = std::tuple<std::string, int, std::string, std::string>;
inline AtomKey atom_key(const Atom& a) { return {a.chain, a.residue_number, a.insertion, a.name}; }

inline std::map<AtomKey, std::size_t> atom_keys(const Structure& s) {
  std::map<AtomKey, std::size_t> m;
  for (std::size_t i = 0; i < s.atoms.size(); ++i) m.emplace(atom_key(s.atoms[i]), i);
  return m;
}

/// r^-6 sum terms of every restraint that expands to more than one atom pair (pseudo-atoms,
/// wildcards, ambiguous alternatives), mapped to bounds rows through `row_of` (structure atom
/// index → row; SIZE_MAX when absent: the restraint is then left out and counted in *skipped).
inline std::vector<AmbiguousTerm> sum_terms(const RestraintSet& rs, const std::vector<std::size_t>& row_of,
                                            std::size_t* skipped) {
  std::vector<AmbiguousTerm> out;
  for (const auto& r : rs.restraints) {
    AmbiguousTerm t;
    t.id = r.id;
    t.upper = r.upper + r.pseudo_correction;
    bool ok = !r.alternatives.empty();
    for (const auto& alt : r.alternatives) {
      if (alt.atoms_a.empty() || alt.atoms_b.empty()) ok = false;
      for (auto ia : alt.atoms_a)
        for (auto ib : alt.atoms_b) {
          if (ia >= row_of.size() || ib >= row_of.size() || row_of[ia] == SIZE_MAX || row_of[ib] == SIZE_MAX) {
            ok = false;
            continue;
          }
          if (ia != ib) t.pairs.push_back({row_of[ia], row_of[ib]});
        }
    }
    if (!ok) {
      if (skipped) ++*skipped;
      continue;
    }
    if (t.pairs.size() > 1) out.push_back(std::move(t));
  }
  return out;
}

}  // namespace gemflow::distgeom::nodes
