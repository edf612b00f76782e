// Restraint violations with equivalent-atom swaps (see gemflow/distgeom/violations.hpp).
#include "gemflow/distgeom/violations.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <numeric>
#include <stdexcept>
#include <utility>

namespace gemflow::distgeom {
namespace {

using Pairs = std::vector<std::pair<const char*, const char*>>;

// Swaps per residue: (residue names, group suffix, atom pairs).
struct GroupDef {
  const char* residues;  // space-separated
  const char* what;
  Pairs pairs;
  bool prochiral;
};

const std::vector<GroupDef>& group_defs() {
  static const std::vector<GroupDef> d = {
      {"PHE TYR", "ring", {{"CD1", "CD2"}, {"CE1", "CE2"}, {"HD1", "HD2"}, {"HE1", "HE2"}}, false},
      {"VAL", "methyls", {{"CG1", "CG2"}, {"HG11", "HG21"}, {"HG12", "HG22"}, {"HG13", "HG23"}}, true},
      {"LEU", "methyls", {{"CD1", "CD2"}, {"HD11", "HD21"}, {"HD12", "HD22"}, {"HD13", "HD23"}}, true},
      {"GLY", "HA2/HA3", {{"HA2", "HA3"}}, true},
      {"SER CYS ASP ASN GLU GLN HIS LYS ARG MET PHE TYR TRP LEU PRO", "HB2/HB3", {{"HB2", "HB3"}}, true},
      {"GLU GLN LYS ARG MET PRO", "HG2/HG3", {{"HG2", "HG3"}}, true},
      {"ILE", "HG12/HG13", {{"HG12", "HG13"}}, true},
      {"LYS ARG PRO", "HD2/HD3", {{"HD2", "HD3"}}, true},
      {"LYS", "HE2/HE3", {{"HE2", "HE3"}}, true},
      {"ASN", "HD21/HD22", {{"HD21", "HD22"}}, true},
      {"GLN", "HE21/HE22", {{"HE21", "HE22"}}, true},
      {"ARG", "NH1/NH2", {{"NH1", "NH2"}, {"HH11", "HH21"}, {"HH12", "HH22"}}, true},
  };
  return d;
}

bool listed(const char* list, const std::string& name) {
  const std::string l = std::string(" ") + list + " ";
  return l.find(" " + name + " ") != std::string::npos;
}

}  // namespace

std::vector<EquivalentGroup> equivalent_groups(std::span<const AtomInfo> atoms, EquivalentSwap swap) {
  std::vector<EquivalentGroup> out;
  if (swap == EquivalentSwap::None) return out;
  std::map<std::tuple<std::string, int, std::string>, std::map<std::string, std::size_t>> residues;
  std::vector<std::tuple<std::string, int, std::string>> order;
  for (std::size_t i = 0; i < atoms.size(); ++i) {
    const auto key = std::make_tuple(atoms[i].chain, atoms[i].residue_number, atoms[i].residue);
    auto [it, fresh] = residues.try_emplace(key);
    if (fresh) order.push_back(key);
    it->second.emplace(atoms[i].name, i);
  }
  for (const auto& key : order) {
    const auto& names = residues[key];
    for (const auto& def : group_defs()) {
      if (def.prochiral && swap != EquivalentSwap::RingsAndProchiral) continue;
      if (!listed(def.residues, std::get<2>(key))) continue;
      EquivalentGroup g;
      g.label = std::get<0>(key) + ":" + std::to_string(std::get<1>(key)) + ":" + std::get<2>(key) + " " + def.what;
      for (const auto& [a, b] : def.pairs) {
        auto ia = names.find(a), ib = names.find(b);
        if (ia == names.end() || ib == names.end()) continue;
        g.atoms.push_back(ia->second);
        g.partners.push_back(ib->second);
      }
      // Heavy atoms may be absent in a hydrogen-only selection; the protons decide.
      if (!g.atoms.empty()) out.push_back(std::move(g));
    }
  }
  return out;
}

ViolationResult restraint_violations(std::span<const AtomInfo> atoms, std::span<const double> xyz,
                                     std::span<const PairRestraint> restraints_in, EquivalentSwap swap) {
  const std::size_t n = atoms.size();
  if (xyz.size() != 3 * n) throw std::invalid_argument("restraint_violations: coordinates are not n×3");
  ViolationResult res;
  // Ring flips: a proton (or carbon) named alone stands for both equivalent positions; the
  // NOE of a fast-flipping ring is the r^-6 sum over both.
  std::vector<PairRestraint> restraints(restraints_in.begin(), restraints_in.end());
  std::vector<EquivalentGroup> groups;
  {
    std::vector<std::size_t> ring_partner(n, n);
    for (auto& g : equivalent_groups(atoms, swap)) {
      if (g.label.size() >= 5 && g.label.compare(g.label.size() - 5, 5, " ring") == 0) {
        for (std::size_t m = 0; m < g.atoms.size(); ++m) {
          ring_partner[g.atoms[m]] = g.partners[m];
          ring_partner[g.partners[m]] = g.atoms[m];
        }
      } else {
        groups.push_back(std::move(g));
      }
    }
    for (auto& r : restraints)
      for (auto& [sa, sb] : r.alternatives)
        for (auto* side : {&sa, &sb}) {
          const std::size_t before = side->size();
          for (std::size_t m = 0; m < before; ++m) {
            const std::size_t i = (*side)[m];
            if (i < n && ring_partner[i] < n && std::find(side->begin(), side->end(), ring_partner[i]) == side->end()) {
              side->push_back(ring_partner[i]);
              ++res.ring_expanded;
            }
          }
        }
  }
  // Restraints that can be evaluated.
  std::vector<std::size_t> usable;
  for (std::size_t k = 0; k < restraints.size(); ++k) {
    const auto& r = restraints[k];
    bool ok = !r.alternatives.empty();
    std::size_t pairs = 0;
    for (const auto& [sa, sb] : r.alternatives) {
      if (sa.empty() || sb.empty()) ok = false;
      for (const auto* side : {&sa, &sb})
        for (auto i : *side)
          if (i >= n || !std::isfinite(xyz[3 * i]) || !std::isfinite(xyz[3 * i + 1]) || !std::isfinite(xyz[3 * i + 2]))
            ok = false;
      for (auto ia : sa)
        for (auto ib : sb) pairs += ia != ib;
    }
    if (ok && pairs > 0) usable.push_back(k);
    else res.skipped.push_back(k);
  }
  // perm[i]: the atom whose position atom i takes under the current swaps.
  std::vector<std::size_t> perm(n);
  std::iota(perm.begin(), perm.end(), std::size_t{0});
  auto distance = [&](const PairRestraint& r) {
    double sum = 0;
    for (const auto& [sa, sb] : r.alternatives)
      for (auto ia : sa)
        for (auto ib : sb) {
          if (ia == ib) continue;
          const std::size_t p = perm[ia], q = perm[ib];
          const double dx = xyz[3 * p] - xyz[3 * q], dy = xyz[3 * p + 1] - xyz[3 * q + 1],
                       dz = xyz[3 * p + 2] - xyz[3 * q + 2];
          const double s = dx * dx + dy * dy + dz * dz;
          sum += 1.0 / (s * s * s);
        }
    return std::pow(sum, -1.0 / 6.0);
  };
  auto violation = [&](const PairRestraint& r, double d) {
    std::size_t pairs = 0;
    for (const auto& [sa, sb] : r.alternatives) pairs += sa.size() * sb.size();
    double v = std::max(0.0, d - (r.upper + r.correction));
    if (pairs == 1) v = std::max(v, r.lower - d);
    return v;
  };
  // Floating assignment of the prochiral groups.
  std::vector<std::vector<std::size_t>> touching(groups.size());
  {
    std::vector<std::vector<std::size_t>> group_of(n);
    for (std::size_t g = 0; g < groups.size(); ++g) {
      for (auto i : groups[g].atoms) group_of[i].push_back(g);
      for (auto i : groups[g].partners) group_of[i].push_back(g);
    }
    for (auto k : usable) {
      std::vector<std::size_t> gs;
      for (const auto& [sa, sb] : restraints[k].alternatives)
        for (const auto* side : {&sa, &sb})
          for (auto i : *side) gs.insert(gs.end(), group_of[i].begin(), group_of[i].end());
      std::sort(gs.begin(), gs.end());
      gs.erase(std::unique(gs.begin(), gs.end()), gs.end());
      for (auto g : gs) touching[g].push_back(k);
    }
  }
  std::vector<char> swapped(groups.size(), 0);
  auto toggle = [&](std::size_t g) {
    for (std::size_t m = 0; m < groups[g].atoms.size(); ++m)
      std::swap(perm[groups[g].atoms[m]], perm[groups[g].partners[m]]);
    swapped[g] ^= 1;
  };
  auto cost = [&](std::size_t g) {
    double c = 0;
    for (auto k : touching[g]) c += violation(restraints[k], distance(restraints[k]));
    return c;
  };
  for (int sweep = 0; sweep < 20; ++sweep) {
    bool changed = false;
    for (std::size_t g = 0; g < groups.size(); ++g) {
      if (touching[g].empty()) continue;
      const double before = cost(g);
      toggle(g);
      // A swap must lower the violations by more than rounding: no flip-flopping on ties.
      if (cost(g) < before - 1e-9) changed = true;
      else toggle(g);
    }
    if (!changed) break;
  }
  for (std::size_t g = 0; g < groups.size(); ++g)
    if (swapped[g]) res.swapped.push_back(groups[g].label);
  for (auto k : usable) {
    const auto& r = restraints[k];
    const double d = distance(r);
    res.restraints.push_back({k, d, r.upper + r.correction, violation(r, d)});
  }
  return res;
}

}  // namespace gemflow::distgeom
