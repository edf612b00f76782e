// Distance bounds from covalent geometry, restraints and vdW radii (see gemflow/distgeom/bounds.hpp).
#include "gemflow/distgeom/bounds.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <limits>
#include <map>
#include <set>
#include <sstream>
#include <stdexcept>
#include <utility>

namespace gemflow::distgeom {
namespace {

constexpr std::size_t kNone = std::numeric_limits<std::size_t>::max();

double dist(std::span<const double> x, std::size_t i, std::size_t j) {
  const double a = x[3 * i] - x[3 * j], b = x[3 * i + 1] - x[3 * j + 1], c = x[3 * i + 2] - x[3 * j + 2];
  return std::sqrt(a * a + b * b + c * c);
}

bool is_h(const AtomInfo& a) { return a.element == "H" || a.element == "D"; }
bool acceptor(const AtomInfo& a) { return a.element == "N" || a.element == "O"; }

std::size_t residue_count(std::span<const AtomInfo> atoms, std::span<const std::size_t> sel) {
  std::set<std::pair<std::string, int>> r;
  for (auto i : sel) r.insert({atoms[i].chain, atoms[i].residue_number});
  return r.size();
}

// Graph distance class of each pair: 1 (bonded), 2 (1-3), 3 (1-4), 0 otherwise; n×n bytes.
std::vector<unsigned char> bond_separation(const Topology& t, std::size_t n) {
  std::vector<unsigned char> sep(n * n, 0);
  auto mark = [&](std::size_t a, std::size_t b, unsigned char s) {
    if (a == b) return;
    unsigned char& v = sep[a * n + b];
    if (v == 0 || s < v) v = sep[b * n + a] = s;
  };
  for (auto [a, b] : t.bonds) mark(a, b, 1);
  for (std::size_t c = 0; c < n; ++c)
    for (auto a : t.neighbours[c])
      for (auto b : t.neighbours[c]) mark(a, b, 2);
  for (auto [b, c] : t.bonds)
    for (auto a : t.neighbours[b])
      for (auto d : t.neighbours[c])
        if (a != c && d != b) mark(a, d, 3);
  return sep;
}

// Cordero et al. 2008 (covalent) and Bondi 1964 (van der Waals), Å; the same elements in both.
// The alkali and alkaline-earth ions of salts (Li, Na, K, Mg, Ca), which Bondi does not list:
// van der Waals radii of Mantina et al., J. Phys. Chem. A 113 (2009) 5806, Table 12.
const std::map<std::string, double>& covalent_table() {
  static const std::map<std::string, double> r{{"H", 0.31},  {"D", 0.31}, {"C", 0.76},  {"N", 0.71},  {"O", 0.66},
                                               {"S", 1.05},  {"P", 1.07}, {"SE", 1.20}, {"F", 0.57},  {"CL", 1.02},
                                               {"BR", 1.20}, {"I", 1.39}, {"LI", 1.28}, {"NA", 1.66}, {"K", 2.03},
                                               {"MG", 1.41}, {"CA", 1.76}};
  return r;
}
const std::map<std::string, double>& vdw_table() {
  static const std::map<std::string, double> r{{"H", 1.20},  {"D", 1.20}, {"C", 1.70},  {"N", 1.55},  {"O", 1.52},
                                               {"S", 1.80},  {"P", 1.80}, {"SE", 1.90}, {"F", 1.47},  {"CL", 1.75},
                                               {"BR", 1.85}, {"I", 1.98}, {"LI", 1.81}, {"NA", 2.27}, {"K", 2.75},
                                               {"MG", 1.73}, {"CA", 2.31}};
  return r;
}

std::string upper(std::string_view s) {
  std::string r(s);
  for (auto& c : r) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return r;
}

}  // namespace

double covalent_radius(const std::string& e) {
  auto it = covalent_table().find(upper(e));
  return it == covalent_table().end() ? 0.77 : it->second;
}

double vdw_radius(const std::string& e) {
  auto it = vdw_table().find(upper(e));
  return it == vdw_table().end() ? 1.70 : it->second;
}

bool has_tabulated_radii(const std::string& e) {
  return covalent_table().count(upper(e)) && vdw_table().count(upper(e));
}

std::string element_symbol(std::string_view element) {
  std::string r(element);
  for (std::size_t i = 0; i < r.size(); ++i)
    r[i] = static_cast<char>(i == 0 ? std::toupper(static_cast<unsigned char>(r[i]))
                                    : std::tolower(static_cast<unsigned char>(r[i])));
  return r;
}

std::vector<std::string> untabulated_elements(std::span<const std::string> elements) {
  std::set<std::string> out;
  for (const auto& e : elements)
    if (!has_tabulated_radii(e)) out.insert(e.empty() ? std::string("(none)") : e);
  return {out.begin(), out.end()};
}

double auto_diameter(std::size_t residues) {
  return 3.8 * static_cast<double>(std::max<std::size_t>(residues, 1)) + 10.0;
}

namespace {
// Neighbours, peptide planes and centres of a topology whose bonds are set (sorted, unique).
Topology finish_topology(std::span<const AtomInfo> atoms, Topology t) {
  const std::size_t n = atoms.size();
  for (auto [i, j] : t.bonds) {
    t.neighbours[i].push_back(j);
    t.neighbours[j].push_back(i);
  }
  for (auto& nb : t.neighbours) std::sort(nb.begin(), nb.end());
  for (auto [i, j] : t.bonds) {
    std::size_t c = i, nn = j;
    if (atoms[c].name != "C") std::swap(c, nn);
    if (atoms[c].name != "C" || atoms[nn].name != "N") continue;
    if (atoms[c].chain == atoms[nn].chain && atoms[c].residue_number == atoms[nn].residue_number) continue;
    std::vector<std::size_t> plane{c, nn};
    for (auto a : t.neighbours[c]) plane.push_back(a);
    for (auto a : t.neighbours[nn]) plane.push_back(a);
    std::sort(plane.begin(), plane.end());
    plane.erase(std::unique(plane.begin(), plane.end()), plane.end());
    t.planes.push_back(std::move(plane));
  }
  for (std::size_t c = 0; c < n; ++c)
    if (t.neighbours[c].size() == 3 || t.neighbours[c].size() == 4)
      t.centres.push_back({c, t.neighbours[c][0], t.neighbours[c][1], t.neighbours[c][2]});
  return t;
}
}  // namespace

Topology perceive_topology(std::span<const AtomInfo> atoms, std::span<const double> xyz, double tol) {
  const std::size_t n = atoms.size();
  if (xyz.size() != 3 * n) throw std::invalid_argument("perceive_topology: coordinates are not n×3");
  Topology t;
  t.neighbours.assign(n, {});
  // Candidate bonds (O(n²) with an early exit on |dx|; n is a few thousand).
  std::vector<std::pair<double, std::array<std::size_t, 2>>> cand;
  for (std::size_t i = 0; i < n; ++i) {
    const double ri = covalent_radius(atoms[i].element);
    for (std::size_t j = i + 1; j < n; ++j) {
      const double cut = ri + covalent_radius(atoms[j].element) + tol;
      if (std::abs(xyz[3 * i] - xyz[3 * j]) > cut) continue;
      if (is_h(atoms[i]) && is_h(atoms[j])) continue;
      const double d = dist(xyz, i, j);
      if (d > 0.4 && d < cut) cand.push_back({d, {i, j}});
    }
  }
  std::sort(cand.begin(), cand.end());
  std::vector<char> h_bonded(n, 0);
  for (const auto& [d, p] : cand) {
    const auto [i, j] = p;
    if ((is_h(atoms[i]) && h_bonded[i]) || (is_h(atoms[j]) && h_bonded[j])) continue;
    if (is_h(atoms[i])) h_bonded[i] = 1;
    if (is_h(atoms[j])) h_bonded[j] = 1;
    t.bonds.push_back({i, j});
  }
  std::sort(t.bonds.begin(), t.bonds.end());
  return finish_topology(atoms, std::move(t));
}

Topology topology_from_bonds(std::span<const AtomInfo> atoms, std::span<const std::array<std::size_t, 2>> bonds) {
  Topology t;
  t.neighbours.assign(atoms.size(), {});
  for (auto [i, j] : bonds) {
    if (i >= atoms.size() || j >= atoms.size() || i == j)
      throw std::invalid_argument("topology_from_bonds: bond " + std::to_string(i) + "-" + std::to_string(j) + " for " +
                                  std::to_string(atoms.size()) + " atoms");
    t.bonds.push_back({std::min(i, j), std::max(i, j)});
  }
  std::sort(t.bonds.begin(), t.bonds.end());
  t.bonds.erase(std::unique(t.bonds.begin(), t.bonds.end()), t.bonds.end());
  return finish_topology(atoms, std::move(t));
}

BoundsResult restraint_bounds(std::span<const AtomInfo> atoms, std::span<const double> xyz,
                              std::span<const PairRestraint> restraints, const BoundsOptions& o) {
  const std::size_t total = atoms.size();
  if (xyz.size() != 3 * total) throw std::invalid_argument("restraint_bounds: coordinates are not n×3");
  // ---- atom selection
  std::vector<char> keep(total, 1);
  if (o.hydrogens != HydrogenPolicy::All) {
    for (std::size_t i = 0; i < total; ++i)
      if (is_h(atoms[i])) keep[i] = (o.hydrogens == HydrogenPolicy::Restrained && atoms[i].name == "H");
    if (o.hydrogens == HydrogenPolicy::Restrained)
      for (const auto& r : restraints)
        for (const auto& [sa, sb] : r.alternatives) {
          for (auto i : sa)
            if (i < total) keep[i] = 1;
          for (auto i : sb)
            if (i < total) keep[i] = 1;
        }
  }
  BoundsResult b;
  std::vector<std::size_t> map(total, kNone);
  for (std::size_t i = 0; i < total; ++i)
    if (keep[i]) {
      map[i] = b.atoms.size();
      b.atoms.push_back(i);
    }
  const std::size_t n = b.n = b.atoms.size();
  std::vector<AtomInfo> sel_atoms;
  std::vector<double> x;
  for (auto i : b.atoms) {
    sel_atoms.push_back(atoms[i]);
    x.insert(x.end(), {xyz[3 * i], xyz[3 * i + 1], xyz[3 * i + 2]});
  }
  if (o.bonds.empty()) {
    b.topology = perceive_topology(sel_atoms, x, o.bond_tolerance);
  } else {
    std::vector<std::array<std::size_t, 2>> kept;
    for (auto [i, j] : o.bonds) {
      if (i >= total || j >= total)
        throw std::invalid_argument("restraint_bounds: bond " + std::to_string(i) + "-" + std::to_string(j) + " for " +
                                    std::to_string(total) + " atoms");
      if (map[i] != kNone && map[j] != kNone) kept.push_back({map[i], map[j]});
    }
    b.topology = topology_from_bonds(sel_atoms, kept);
  }
  if (o.free_proline_omega)
    std::erase_if(b.topology.planes, [&](const std::vector<std::size_t>& p) {
      return std::any_of(p.begin(), p.end(), [&](std::size_t a) {
        return sel_atoms[a].name == "N" && sel_atoms[a].residue == "PRO" &&
               std::any_of(p.begin(), p.end(), [&](std::size_t c) {
                 return sel_atoms[c].name == "C" && sel_atoms[c].residue_number != sel_atoms[a].residue_number;
               });
      });
    });
  b.diameter = o.diameter > 0 ? o.diameter : auto_diameter(residue_count(atoms, b.atoms));
  const auto sep = bond_separation(b.topology, n);

  // ---- floors and ceiling
  b.lower.assign(n * n, 0.0);
  b.upper.assign(n * n, b.diameter);
  b.restraint.assign(n * n, -1);
  std::vector<double> vdw(n * n, 0.0);
  // Hydrogens bonded to N or O can approach acceptors (N, O) to hydrogen-bond distance.
  std::vector<char> polar_h(n, 0);
  for (std::size_t i = 0; i < n; ++i)
    if (is_h(sel_atoms[i]))
      for (auto k : b.topology.neighbours[i])
        if (acceptor(sel_atoms[k])) polar_h[i] = 1;
  for (std::size_t i = 0; i < n; ++i) {
    b.upper[i * n + i] = 0.0;
    for (std::size_t j = i + 1; j < n; ++j) {
      const double s = sep[i * n + j] == 3 ? o.vdw_scale_14 : o.vdw_scale;
      double f = s * (vdw_radius(sel_atoms[i].element) + vdw_radius(sel_atoms[j].element));
      if ((polar_h[i] && acceptor(sel_atoms[j])) || (polar_h[j] && acceptor(sel_atoms[i])))
        f = std::min(f, o.hbond_floor);
      vdw[i * n + j] = vdw[j * n + i] = f;
      b.lower[i * n + j] = b.lower[j * n + i] = f;
    }
  }
  // ---- covalent geometry
  std::vector<char> fixed(n * n, 0);
  auto fix = [&](std::size_t i, std::size_t j, double t) {
    if (i == j || fixed[i * n + j]) return;
    const double d = dist(x, i, j);
    b.lower[i * n + j] = b.lower[j * n + i] = std::max(0.0, d - t);
    b.upper[i * n + j] = b.upper[j * n + i] = d + t;
    fixed[i * n + j] = fixed[j * n + i] = 1;
    ++b.covalent_pairs;
  };
  for (std::size_t i = 0; i < n; ++i)
    for (std::size_t j = i + 1; j < n; ++j)
      if (sep[i * n + j] == 1) fix(i, j, o.tolerance_12);
  for (std::size_t i = 0; i < n; ++i)
    for (std::size_t j = i + 1; j < n; ++j)
      if (sep[i * n + j] == 2) fix(i, j, o.tolerance_13);
  for (const auto& p : b.topology.planes)
    for (std::size_t a = 0; a < p.size(); ++a)
      for (std::size_t c = a + 1; c < p.size(); ++c) fix(p[a], p[c], o.tolerance_plane);

  // ---- restraints
  std::vector<char> from_restraint(n * n, 0);
  std::vector<std::size_t> owner(n * n, kNone);  // index of the restraint that last bounded a pair
  std::set<std::pair<std::size_t, std::size_t>> intersected;
  for (std::size_t k = 0; k < restraints.size(); ++k) {
    const auto& r = restraints[k];
    bool unresolved = r.alternatives.empty();
    bool dropped_h = false;
    for (const auto& [sa, sb] : r.alternatives) {
      if (sa.empty() || sb.empty()) unresolved = true;
      for (const auto* side : {&sa, &sb})
        for (auto i : *side) {
          if (i >= total) unresolved = true;
          else if (map[i] == kNone) dropped_h = true;
        }
    }
    if (unresolved) {
      b.skipped.push_back({r.id, SkipReason::Unresolved});
      continue;
    }
    if (dropped_h) {
      b.skipped.push_back({r.id, SkipReason::Hydrogen});
      continue;
    }
    if (r.alternatives.size() > 1) {
      PairRestraint m = r;
      for (auto& [sa, sb] : m.alternatives) {
        for (auto& i : sa) i = map[i];
        for (auto& i : sb) i = map[i];
      }
      b.ambiguous.push_back(std::move(m));
      ++b.restraints_used;
      continue;
    }
    const auto& [sa, sb] = r.alternatives.front();
    // Several expanded pairs (pseudo-atom / wildcard): the restraint bounds the r^-6 sum,
    // d_eff ≤ U' (U' = upper + correction), which bounds no single pair by U'. Valid per-pair
    // bound: the nearest pair has d_min ≤ U' · N^(1/6) (N pairs), and any other pair is
    // within the spread of each group (largest model distance inside the group, covalent)
    // of it. The exact r^-6 term is applied by the refinement.
    std::size_t npairs = 0;
    for (auto ia : sa)
      for (auto ib : sb) npairs += map[ia] != map[ib];
    const bool group = npairs > 1;
    auto spread = [&](const std::vector<std::size_t>& side) {
      double m = 0;
      for (auto i : side)
        for (auto j : side) m = std::max(m, dist(x, map[i], map[j]));
      return m;
    };
    const double u_restraint = r.upper + r.correction;
    const double u_pair =
        group ? u_restraint * std::pow(static_cast<double>(npairs), 1.0 / 6.0) + spread(sa) + spread(sb) : u_restraint;
    if (group) b.grouped.push_back(r.id);
    bool any = false, conflict = false;
    for (auto ia : sa)
      for (auto ib : sb) {
        const std::size_t i = map[ia], j = map[ib];
        if (i == j) continue;
        if (fixed[i * n + j]) {
          conflict = true;
          continue;
        }
        const double floor = std::min(vdw[i * n + j], u_pair);
        const double r_lower = group ? 0.0 : r.lower;
        double lo = b.lower[i * n + j], up = b.upper[i * n + j];
        if (from_restraint[i * n + j]) {
          up = std::min(up, u_pair);
          lo = std::max(lo, r_lower);
          if (owner[i * n + j] != k && intersected.emplace(k, owner[i * n + j]).second)
            b.intersected.emplace_back(k, owner[i * n + j]);
        } else {
          up = u_pair;
          lo = std::max(r_lower, floor);
        }
        if (lo > up) {
          std::ostringstream m;
          m << "restraint " << r.id << " on " << sel_atoms[i].chain << ":" << sel_atoms[i].residue_number << ":"
            << sel_atoms[i].name << " – " << sel_atoms[j].chain << ":" << sel_atoms[j].residue_number << ":"
            << sel_atoms[j].name << " leaves no distance: lower " << lo << " Å > upper " << up
            << " Å (intersected with restraint " << b.restraint[i * n + j] << ")";
          throw std::runtime_error(m.str());
        }
        b.lower[i * n + j] = b.lower[j * n + i] = lo;
        b.upper[i * n + j] = b.upper[j * n + i] = up;
        b.restraint[i * n + j] = b.restraint[j * n + i] = r.id;
        from_restraint[i * n + j] = from_restraint[j * n + i] = 1;
        owner[i * n + j] = owner[j * n + i] = k;
        any = true;
      }
    if (conflict) b.covalent_conflicts.push_back(k);
    if (any || conflict) ++b.restraints_used;
    else b.skipped.push_back({r.id, SkipReason::SameAtom});
  }
  return b;
}

BoundsResult structure_bounds(std::span<const AtomInfo> atoms, std::span<const double> xyz,
                              const StructureBoundsOptions& o) {
  const std::size_t total = atoms.size();
  if (xyz.size() != 3 * total) throw std::invalid_argument("structure_bounds: coordinates are not n×3");
  BoundsResult b;
  for (std::size_t i = 0; i < total; ++i)
    if (o.hydrogens || !is_h(atoms[i])) b.atoms.push_back(i);
  const std::size_t n = b.n = b.atoms.size();
  std::vector<AtomInfo> sel_atoms;
  std::vector<double> x;
  for (auto i : b.atoms) {
    sel_atoms.push_back(atoms[i]);
    x.insert(x.end(), {xyz[3 * i], xyz[3 * i + 1], xyz[3 * i + 2]});
  }
  b.topology = perceive_topology(sel_atoms, x);
  b.diameter = o.diameter > 0 ? o.diameter : auto_diameter(residue_count(atoms, b.atoms));
  b.lower.assign(n * n, 0.0);
  b.upper.assign(n * n, b.diameter);
  b.restraint.assign(n * n, -1);
  for (std::size_t i = 0; i < n; ++i) {
    b.upper[i * n + i] = 0.0;
    for (std::size_t j = i + 1; j < n; ++j) {
      const double d = dist(x, i, j);
      double lo, up;
      if (d < o.cutoff) {
        lo = std::max(0.0, d - o.tolerance);
        up = d + o.tolerance;
        ++b.covalent_pairs;
      } else {
        const double vdw =
            std::min(o.cutoff, o.vdw_scale * (vdw_radius(sel_atoms[i].element) + vdw_radius(sel_atoms[j].element)));
        lo = o.unlisted_lower == UnlistedLower::Cutoff ? std::max(vdw, o.cutoff - o.tolerance) : vdw;
        up = std::max(b.diameter, d);  // never cut a real distance
      }
      b.lower[i * n + j] = b.lower[j * n + i] = lo;
      b.upper[i * n + j] = b.upper[j * n + i] = up;
    }
  }
  return b;
}

}  // namespace gemflow::distgeom
