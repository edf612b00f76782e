// Cartesian restrained simulated annealing (see gemflow/distgeom/anneal.hpp).
#include "gemflow/distgeom/anneal.hpp"

#include <lbfgs.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <numbers>
#include <stdexcept>
#include <string>

#include "gemflow/distgeom/geometry.hpp"

namespace gemflow::distgeom {
namespace {

constexpr double kPi = std::numbers::pi;
constexpr double kMass = 100.0;              // amu, every atom
constexpr double kForceToAccel = 418.4;      // (kcal/mol/Å)/amu → Å/ps²
constexpr double kBoltzmann = 0.0019872041;  // kcal/mol/K
constexpr double kTau = 0.05;                // ps, Berendsen coupling time
constexpr double kNoeSwitch = 0.5;           // Å, NOE harmonic → linear
constexpr double kHbondR = 2.0;              // Å, repel radius sum of polar H to N/O
constexpr double kSkin = 1.5;                // Å, neighbour-list skin

bool is_h(const AtomInfo& a) { return a.element == "H" || a.element == "D"; }

double wrap(double a) {
  while (a > kPi) a -= 2 * kPi;
  while (a <= -kPi) a += 2 * kPi;
  return a;
}

// Torsion and its gradient (Blondel & Karplus, J. Comput. Chem. 17 (1996) 1132).
double torsion_grad(const double* a, const double* b, const double* c, const double* d, double* ga, double* gb,
                    double* gc, double* gd) {
  double f[3], g[3], h[3];
  for (int k = 0; k < 3; ++k) f[k] = a[k] - b[k], g[k] = b[k] - c[k], h[k] = d[k] - c[k];
  const double A[3] = {f[1] * g[2] - f[2] * g[1], f[2] * g[0] - f[0] * g[2], f[0] * g[1] - f[1] * g[0]};
  const double B[3] = {h[1] * g[2] - h[2] * g[1], h[2] * g[0] - h[0] * g[2], h[0] * g[1] - h[1] * g[0]};
  const double AA = A[0] * A[0] + A[1] * A[1] + A[2] * A[2], BB = B[0] * B[0] + B[1] * B[1] + B[2] * B[2];
  const double gn = std::sqrt(g[0] * g[0] + g[1] * g[1] + g[2] * g[2]);
  const double BxA[3] = {B[1] * A[2] - B[2] * A[1], B[2] * A[0] - B[0] * A[2], B[0] * A[1] - B[1] * A[0]};
  const double sinp = (BxA[0] * g[0] + BxA[1] * g[1] + BxA[2] * g[2]) / std::max(gn, 1e-12);
  const double cosp = A[0] * B[0] + A[1] * B[1] + A[2] * B[2];
  const double phi = std::atan2(sinp, cosp);
  if (ga && AA > 1e-16 && BB > 1e-16 && gn > 1e-12) {
    const double fg = f[0] * g[0] + f[1] * g[1] + f[2] * g[2], hg = h[0] * g[0] + h[1] * g[1] + h[2] * g[2];
    for (int k = 0; k < 3; ++k) {
      const double dA = -gn / AA * A[k], dD = gn / BB * B[k];
      ga[k] = dA;
      gd[k] = dD;
      gb[k] = -dA + fg / (AA * gn) * A[k] - hg / (BB * gn) * B[k];
      gc[k] = -dD - fg / (AA * gn) * A[k] + hg / (BB * gn) * B[k];
    }
  } else if (ga) {
    for (int k = 0; k < 3; ++k) ga[k] = gb[k] = gc[k] = gd[k] = 0;
  }
  return phi;
}

// Signed distance (rad) of angle a outside the counter-clockwise interval [lo, up]; 0 inside.
double outside(double a, double lo, double up) {
  const bool inside = lo <= up ? (a >= lo && a <= up) : (a >= lo || a <= up);
  if (inside) return 0.0;
  const double dl = wrap(a - lo), du = wrap(a - up);
  return std::abs(du) < std::abs(dl) ? du : dl;
}

double dist(std::span<const double> x, std::size_t i, std::size_t j) {
  const double a = x[3 * i] - x[3 * j], b = x[3 * i + 1] - x[3 * j + 1], c = x[3 * i + 2] - x[3 * j + 2];
  return std::sqrt(a * a + b * b + c * c);
}

// The NOE penalty f(x) and f'(x) for x = violation (Å).
void noe_penalty(double x, double& e, double& de) {
  if (x <= 0) {
    e = de = 0;
  } else if (x <= kNoeSwitch) {
    e = x * x;
    de = 2 * x;
  } else {
    e = kNoeSwitch * (2 * x - kNoeSwitch);
    de = 2 * kNoeSwitch;
  }
}

double repel_radius(const AnnealTerms& t, std::size_t i, std::size_t j) {
  if ((t.polar_h[i] && t.acceptor[j]) || (t.polar_h[j] && t.acceptor[i])) return kHbondR;
  return t.radius[i] + t.radius[j];
}

bool excluded(const AnnealTerms& t, std::size_t i, std::size_t j) {
  return std::binary_search(t.excluded[i].begin(), t.excluded[i].end(), j);
}

void build_neighbours(const AnnealTerms& t, std::span<const double> x, double scale,
                      std::vector<std::array<std::size_t, 2>>& out) {
  out.clear();
  double rmax = 0;
  for (double r : t.radius) rmax = std::max(rmax, r);
  const double cut = std::max(2 * rmax, kHbondR) * scale + kSkin, cut2 = cut * cut;
  for (std::size_t i = 0; i < t.n; ++i)
    for (std::size_t j = i + 1; j < t.n; ++j) {
      const double dx = x[3 * i] - x[3 * j];
      if (dx * dx > cut2) continue;
      const double dy = x[3 * i + 1] - x[3 * j + 1], dz = x[3 * i + 2] - x[3 * j + 2];
      if (dx * dx + dy * dy + dz * dz < cut2 && !excluded(t, i, j)) out.push_back({i, j});
    }
}

struct Minimiser {
  const AnnealTerms* t;
  AnnealWeights w;
  std::vector<std::array<std::size_t, 2>> nb;
  std::vector<double> built_at;
  void refresh(const double* x) {
    bool rebuild = built_at.empty();
    for (std::size_t k = 0; !rebuild && k < t->n; ++k) {
      const double dx = x[3 * k] - built_at[3 * k], dy = x[3 * k + 1] - built_at[3 * k + 1],
                   dz = x[3 * k + 2] - built_at[3 * k + 2];
      rebuild = dx * dx + dy * dy + dz * dz > 0.25 * kSkin * kSkin;
    }
    if (!rebuild) return;
    built_at.assign(x, x + 3 * t->n);
    build_neighbours(*t, built_at, w.rep_scale, nb);
  }
};

lbfgsfloatval_t min_eval(void* inst, const lbfgsfloatval_t* x, lbfgsfloatval_t* g, const int n, const lbfgsfloatval_t) {
  auto* m = static_cast<Minimiser*>(inst);
  m->refresh(x);
  const auto e = anneal_energy(*m->t, m->w, std::span<const double>(x, static_cast<std::size_t>(n)),
                               std::span<double>(g, static_cast<std::size_t>(n)), &m->nb);
  return e.total;
}

void minimise(const AnnealTerms& t, const AnnealWeights& w, std::vector<double>& x, std::size_t iterations) {
  if (iterations == 0) return;
  Minimiser m{&t, w, {}, {}};
  lbfgs_parameter_t p;
  lbfgs_parameter_init(&p);
  p.max_iterations = static_cast<int>(iterations);
  p.epsilon = 1e-6;
  p.max_linesearch = 40;
  lbfgsfloatval_t* buf = lbfgs_malloc(static_cast<int>(x.size()));
  if (!buf) throw std::bad_alloc();
  std::copy(x.begin(), x.end(), buf);
  lbfgsfloatval_t fx = 0;
  lbfgs(static_cast<int>(x.size()), buf, &fx, min_eval, nullptr, &m, &p);
  std::copy(buf, buf + x.size(), x.begin());
  lbfgs_free(buf);
}

// SplitMix64 (Steele, Lea & Flood 2014) and Box–Muller normals: the same stream everywhere.
struct Rng {
  std::uint64_t s;
  std::uint64_t next() {
    std::uint64_t z = (s += 0x9E3779B97F4A7C15ULL);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    return z ^ (z >> 31);
  }
  double uniform() { return (static_cast<double>(next() >> 11) + 0.5) * (1.0 / 9007199254740992.0); }
  double normal() { return std::sqrt(-2 * std::log(uniform())) * std::cos(2 * kPi * uniform()); }
};

double temperature(const std::vector<double>& v) {
  double ke = 0;
  for (double c : v) ke += c * c;
  return kMass * ke / (kForceToAccel * kBoltzmann * static_cast<double>(v.size()));
}

AnnealWeights blend(const AnnealWeights& a, const AnnealWeights& b, double f) {
  auto geo = [f](double x, double y) { return x > 0 && y > 0 ? x * std::pow(y / x, f) : x + (y - x) * f; };
  AnnealWeights w;
  w.bond = geo(a.bond, b.bond);
  w.angle = geo(a.angle, b.angle);
  w.chiral = geo(a.chiral, b.chiral);
  w.plane = geo(a.plane, b.plane);
  w.rep = geo(a.rep, b.rep);
  w.rep_scale = a.rep_scale + (b.rep_scale - a.rep_scale) * f;
  w.noe = geo(a.noe, b.noe);
  w.cdih = geo(a.cdih, b.cdih);
  w.rama = geo(a.rama, b.rama);
  w.sym = geo(a.sym, b.sym);
  return w;
}

// One chain of a homodimer: its residues in order, each with its name and its atoms by name.
struct ChainResidues {
  std::string chain;
  struct Residue {
    std::string name;
    int number;
    std::map<std::string, std::size_t> atoms;
  };
  std::vector<Residue> residues;
};

std::vector<ChainResidues> chains_of(std::span<const AtomInfo> atoms) {
  std::vector<ChainResidues> out;
  for (std::size_t i = 0; i < atoms.size(); ++i) {
    const auto& a = atoms[i];
    auto c = std::find_if(out.begin(), out.end(), [&](const ChainResidues& x) { return x.chain == a.chain; });
    if (c == out.end()) c = out.insert(out.end(), ChainResidues{a.chain, {}});
    if (c->residues.empty() || c->residues.back().number != a.residue_number || c->residues.back().name != a.residue)
      c->residues.push_back({a.residue, a.residue_number, {}});
    c->residues.back().atoms.emplace(a.name, i);
  }
  return out;
}

}  // namespace

std::vector<AnnealTerms::SymmetryPair> c2_symmetry_pairs(std::span<const AtomInfo> atoms,
                                                         std::span<const std::string> names) {
  static const std::string kCa[] = {"CA"};
  if (names.empty()) names = kCa;
  const auto chains = chains_of(atoms);
  if (chains.size() != 2) {
    std::string list;
    for (const auto& c : chains) list += (list.empty() ? "" : ", ") + ("'" + c.chain + "'");
    throw std::invalid_argument("symmetry c2 needs two identical chains; the molecule has " +
                                std::to_string(chains.size()) + (list.empty() ? "" : ": " + list));
  }
  const auto& A = chains[0];
  const auto& B = chains[1];
  const std::string which = "chains '" + A.chain + "' and '" + B.chain + "'";
  if (A.residues.size() != B.residues.size())
    throw std::invalid_argument("symmetry c2: " + which + " are not identical: " + std::to_string(A.residues.size()) +
                                " and " + std::to_string(B.residues.size()) + " residues");
  auto label = [](const ChainResidues& c, const ChainResidues::Residue& r) {
    return c.chain + ":" + std::to_string(r.number) + ":" + r.name;
  };
  // per position, the atoms of `names` in both chains
  std::vector<std::pair<std::size_t, std::size_t>> sites;
  for (std::size_t k = 0; k < A.residues.size(); ++k) {
    const auto& ra = A.residues[k];
    const auto& rb = B.residues[k];
    if (ra.name != rb.name)
      throw std::invalid_argument("symmetry c2: " + which + " are not identical: residue " + std::to_string(k + 1) +
                                  " of each is " + label(A, ra) + " and " + label(B, rb));
    for (const auto& nm : names) {
      const auto ia = ra.atoms.find(nm), ib = rb.atoms.find(nm);
      if ((ia == ra.atoms.end()) != (ib == rb.atoms.end()))
        throw std::invalid_argument("symmetry c2: " + which + " are not identical: atom " + nm + " of " +
                                    (ia == ra.atoms.end() ? label(B, rb) : label(A, ra)) + " has no counterpart in " +
                                    (ia == ra.atoms.end() ? label(A, ra) : label(B, rb)));
      if (ia != ra.atoms.end()) sites.emplace_back(ia->second, ib->second);
    }
  }
  std::vector<AnnealTerms::SymmetryPair> out;
  out.reserve(sites.size() * (sites.size() - (sites.empty() ? 0 : 1)));
  for (std::size_t i = 0; i < sites.size(); ++i)
    for (std::size_t j = i + 1; j < sites.size(); ++j) {
      const auto [ai, bi] = sites[i];
      const auto [aj, bj] = sites[j];
      out.push_back({ai, aj, bi, bj});  // NCS: d(A_i, A_j) = d(B_i, B_j)
      out.push_back({ai, bj, bi, aj});  // distance symmetry: d(A_i, B_j) = d(B_i, A_j)
    }
  return out;
}

std::string anneal_options_problem(const AnnealOptions& o) {
  auto num = [](double v) {
    std::string s = std::to_string(v);
    s.erase(s.find_last_not_of('0') + 1);
    if (!s.empty() && s.back() == '.') s.pop_back();
    return s;
  };
  if (!(std::isfinite(o.t_hot) && o.t_hot > 0)) return "t_hot = " + num(o.t_hot) + " K is not a positive temperature";
  if (!(std::isfinite(o.t_final) && o.t_final > 0))
    return "t_final = " + num(o.t_final) + " K is not a positive temperature";
  if (o.t_final > o.t_hot)
    return "t_final = " + num(o.t_final) + " K is above t_hot = " + num(o.t_hot) +
           " K: the cooling stages would heat the structure";
  if (!(std::isfinite(o.dt) && o.dt > 0)) return "time step " + num(o.dt) + " ps is not positive";
  return {};
}

std::vector<std::array<std::size_t, 2>> repel_pairs(const AnnealTerms& t, std::span<const double> x, double scale) {
  std::vector<std::array<std::size_t, 2>> out;
  build_neighbours(t, x, scale, out);
  return out;
}

AnnealEnergy md_steps(const AnnealTerms& t, const AnnealWeights& w, std::span<double> x, std::span<double> v,
                      const MdOptions& o) {
  const std::size_t n = t.n;
  if (x.size() != 3 * n || v.size() != 3 * n) throw std::invalid_argument("md_steps: coordinates are not n×3");
  std::vector<double> f(3 * n);
  std::vector<std::array<std::size_t, 2>> nb;
  const double h = o.dt, c = kForceToAccel / kMass;
  build_neighbours(t, x, w.rep_scale, nb);
  (void)anneal_energy(t, w, x, f, &nb);  // the forces; the energy is not needed here
  for (std::size_t s = 0; s < o.steps; ++s) {
    for (std::size_t k = 0; k < 3 * n; ++k) {
      v[k] -= 0.5 * h * c * f[k];
      x[k] += h * v[k];
    }
    if (o.rebuild_every && (s + 1) % o.rebuild_every == 0) build_neighbours(t, x, w.rep_scale, nb);
    (void)anneal_energy(t, w, x, f, &nb);
    for (std::size_t k = 0; k < 3 * n; ++k) v[k] -= 0.5 * h * c * f[k];
    const std::vector<double> vv(v.begin(), v.end());
    const double temp = temperature(vv);
    const double lambda = std::clamp(std::sqrt(1 + h / kTau * (o.t_bath / std::max(temp, 1e-6) - 1)), 0.8, 1.25);
    for (auto& q : v) q *= lambda;
  }
  return anneal_energy(t, w, x, {}, &nb);
}

std::vector<std::size_t> ensemble_order(std::span<const double> energy, std::span<const char> accepted,
                                        bool by_acceptance) {
  if (energy.size() != accepted.size())
    throw std::invalid_argument("ensemble_order: " + std::to_string(energy.size()) + " energies, " +
                                std::to_string(accepted.size()) + " acceptance flags");
  std::vector<std::size_t> order(energy.size());
  for (std::size_t k = 0; k < order.size(); ++k) order[k] = k;
  std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
    if (by_acceptance && (accepted[a] != 0) != (accepted[b] != 0)) return accepted[a] != 0;
    return energy[a] < energy[b];
  });
  return order;
}

RamaRegion rama_region(const std::string& residue, double phi, double psi) {
  if (residue == "GLY") return RamaRegion::Favoured;  // every region is accessible to glycine
  auto in = [](double a, double lo, double up) { return lo <= up ? (a >= lo && a <= up) : (a >= lo || a <= up); };
  auto box = [&](const RamaBox& b) { return in(phi, b.phi_lower, b.phi_upper) && in(psi, b.psi_lower, b.psi_upper); };
  if (box(kRamaBoxes[0]) || box(kRamaBoxes[1])) return RamaRegion::Favoured;
  if (phi < 0 || box(kRamaBoxes[2])) return RamaRegion::Allowed;
  return RamaRegion::Outlier;
}

double torsion_angle(const double* a, const double* b, const double* c, const double* d) {
  return torsion_grad(a, b, c, d, nullptr, nullptr, nullptr, nullptr);
}

AnnealTerms anneal_terms(std::span<const AtomInfo> atoms, std::span<const double> ideal,
                         std::span<const std::array<std::size_t, 2>> bonds, std::span<const PairRestraint> restraints,
                         std::span<const TorsionRestraint> dihedrals, bool cis_proline, bool pseudo_corrections) {
  const std::size_t n = atoms.size();
  if (ideal.size() != 3 * n) throw std::invalid_argument("anneal_terms: template coordinates are not n×3");
  AnnealTerms t;
  t.n = n;
  const Topology topo = topology_from_bonds(atoms, bonds);
  for (auto [i, j] : topo.bonds) t.bonds.push_back({i, j, dist(ideal, i, j)});
  t.excluded.assign(n, {});
  for (auto [i, j] : topo.bonds) t.excluded[i].push_back(j), t.excluded[j].push_back(i);
  for (std::size_t c = 0; c < n; ++c) {
    const auto& nb = topo.neighbours[c];
    for (std::size_t p = 0; p < nb.size(); ++p)
      for (std::size_t q = p + 1; q < nb.size(); ++q) {
        t.angles.push_back({nb[p], nb[q], dist(ideal, nb[p], nb[q])});
        t.excluded[nb[p]].push_back(nb[q]);
        t.excluded[nb[q]].push_back(nb[p]);
      }
  }
  for (auto& e : t.excluded) {
    std::sort(e.begin(), e.end());
    e.erase(std::unique(e.begin(), e.end()), e.end());
  }
  std::vector<char> planar(n, 0);
  for (const auto& c : topo.centres) {
    const double v = chiral_volume(&ideal[3 * c[0]], &ideal[3 * c[1]], &ideal[3 * c[2]], &ideal[3 * c[3]]);
    t.chirals.push_back({c[0], c[1], c[2], c[3], v});
    if (topo.neighbours[c[0]].size() == 3 && std::abs(v) < 0.3) planar[c[0]] = 1;
    // A tetrahedral centre's volume over three of its neighbours leaves the fourth (a Cα's Hα)
    // held by bond and angle terms alone, which admit a strained minimum with it on the wrong
    // side (Hα–N 1.77 Å for 2.1); a second volume over the fourth fixes its side too.
    if (topo.neighbours[c[0]].size() == 4) {
      const std::size_t d = topo.neighbours[c[0]][3];
      t.chirals.push_back(
          {c[0], c[1], c[2], d, chiral_volume(&ideal[3 * c[0]], &ideal[3 * c[1]], &ideal[3 * c[2]], &ideal[3 * d])});
    }
  }
  for (auto [b, c] : topo.bonds) {
    if (!planar[b] || !planar[c]) continue;
    std::size_t a = n, d = n;
    for (auto k : topo.neighbours[b])
      if (k != c) {
        a = k;
        break;
      }
    for (auto k : topo.neighbours[c])
      if (k != b) {
        d = k;
        break;
      }
    if (a == n || d == n) continue;
    const double phi = torsion_angle(&ideal[3 * a], &ideal[3 * b], &ideal[3 * c], &ideal[3 * d]);
    const double phi0 = std::abs(phi) < kPi / 2 ? 0.0 : kPi;
    const bool xpro =
        cis_proline && atoms[b].residue_number != atoms[c].residue_number &&
        ((atoms[c].name == "N" && atoms[c].residue == "PRO") || (atoms[b].name == "N" && atoms[b].residue == "PRO"));
    t.planes.push_back({a, b, c, d, phi0, xpro});
  }
  t.radius.resize(n);
  t.polar_h.assign(n, 0);
  t.acceptor.assign(n, 0);
  for (std::size_t i = 0; i < n; ++i) {
    t.radius[i] = vdw_radius(atoms[i].element);
    t.acceptor[i] = atoms[i].element == "N" || atoms[i].element == "O";
    if (is_h(atoms[i]))
      for (auto k : topo.neighbours[i])
        if (atoms[k].element == "N" || atoms[k].element == "O") t.polar_h[i] = 1;
  }
  for (const auto& r : restraints) {
    AnnealTerms::Noe e{r.id, {}, r.lower, r.upper + (pseudo_corrections ? r.correction : 0.0), false};
    bool ok = !r.alternatives.empty();
    for (const auto& [sa, sb] : r.alternatives)
      for (auto i : sa)
        for (auto j : sb) {
          if (i >= n || j >= n) ok = false;
          else if (i != j) e.pairs.push_back({i, j});
        }
    if (!ok || e.pairs.empty()) continue;
    e.single = e.pairs.size() == 1;
    t.noes.push_back(std::move(e));
  }
  for (std::size_t ca = 0; ca < n; ++ca) {
    if (atoms[ca].name != "CA" || atoms[ca].residue == "GLY") continue;
    auto same = [&](std::size_t k, const char* name) {
      return atoms[k].name == name && atoms[k].residue_number == atoms[ca].residue_number &&
             atoms[k].chain == atoms[ca].chain;
    };
    std::size_t bn = n, bc = n, cp = n, nn = n;
    for (auto k : topo.neighbours[ca]) {
      if (same(k, "N")) bn = k;
      if (same(k, "C")) bc = k;
    }
    if (bn == n || bc == n) continue;
    for (auto k : topo.neighbours[bn])
      if (atoms[k].name == "C" && !same(k, "C")) cp = k;
    for (auto k : topo.neighbours[bc])
      if (atoms[k].name == "N" && !same(k, "N")) nn = k;
    if (cp != n && nn != n) t.ramas.push_back({cp, bn, ca, bc, nn});
  }
  for (const auto& d : dihedrals) {
    if (*std::max_element(d.atoms.begin(), d.atoms.end()) >= n)
      throw std::invalid_argument("anneal_terms: dihedral restraint " + std::to_string(d.id) +
                                  " names an atom out of range");
    t.dihedrals.push_back(d);
  }
  return t;
}

AnnealEnergy anneal_energy(const AnnealTerms& t, const AnnealWeights& w, std::span<const double> x,
                           std::span<double> grad, const std::vector<std::array<std::size_t, 2>>* neighbours) {
  AnnealEnergy e;
  const bool g = !grad.empty();
  if (g) std::fill(grad.begin(), grad.end(), 0.0);
  auto pair_term = [&](std::size_t i, std::size_t j, double d, double dEdd) {
    if (!g || d <= 0) return;
    for (int k = 0; k < 3; ++k) {
      const double c = dEdd * (x[3 * i + k] - x[3 * j + k]) / d;
      grad[3 * i + k] += c;
      grad[3 * j + k] -= c;
    }
  };
  for (const auto& b : t.bonds) {
    const double d = dist(x, b.i, b.j), r = d - b.d0;
    e.bond += w.bond * r * r;
    pair_term(b.i, b.j, d, 2 * w.bond * r);
  }
  for (const auto& b : t.angles) {
    const double d = dist(x, b.i, b.j), r = d - b.d0;
    e.angle += w.angle * r * r;
    pair_term(b.i, b.j, d, 2 * w.angle * r);
  }
  for (const auto& c : t.chirals) {
    const double* C = &x[3 * c.c];
    double A[3], B[3], D[3];
    for (int k = 0; k < 3; ++k)
      A[k] = x[3 * c.a + k] - C[k], B[k] = x[3 * c.b + k] - C[k], D[k] = x[3 * c.d + k] - C[k];
    const double BxD[3] = {B[1] * D[2] - B[2] * D[1], B[2] * D[0] - B[0] * D[2], B[0] * D[1] - B[1] * D[0]};
    const double v = A[0] * BxD[0] + A[1] * BxD[1] + A[2] * BxD[2], r = v - c.v0;
    e.chiral += w.chiral * r * r;
    if (g) {
      const double f = 2 * w.chiral * r;
      const double DxA[3] = {D[1] * A[2] - D[2] * A[1], D[2] * A[0] - D[0] * A[2], D[0] * A[1] - D[1] * A[0]};
      const double AxB[3] = {A[1] * B[2] - A[2] * B[1], A[2] * B[0] - A[0] * B[2], A[0] * B[1] - A[1] * B[0]};
      for (int k = 0; k < 3; ++k) {
        grad[3 * c.a + k] += f * BxD[k];
        grad[3 * c.b + k] += f * DxA[k];
        grad[3 * c.d + k] += f * AxB[k];
        grad[3 * c.c + k] -= f * (BxD[k] + DxA[k] + AxB[k]);
      }
    }
  }
  auto torsion_term = [&](std::size_t i, std::size_t j, std::size_t k, std::size_t l, auto&& energy) {
    double ga[3], gb[3], gc[3], gd[3];
    const double phi = torsion_grad(&x[3 * i], &x[3 * j], &x[3 * k], &x[3 * l], g ? ga : nullptr, gb, gc, gd);
    double dE = 0;
    const double en = energy(phi, dE);
    if (g)
      for (int q = 0; q < 3; ++q) {
        grad[3 * i + q] += dE * ga[q];
        grad[3 * j + q] += dE * gb[q];
        grad[3 * k + q] += dE * gc[q];
        grad[3 * l + q] += dE * gd[q];
      }
    return en;
  };
  for (const auto& p : t.planes)
    e.plane += torsion_term(p.i, p.j, p.k, p.l, [&](double phi, double& dE) {
      if (p.two_fold) {
        dE = w.plane * std::sin(2 * phi) / 2;
        return w.plane * (1 - std::cos(2 * phi)) / 4;
      }
      dE = w.plane * std::sin(phi - p.phi0);
      return w.plane * (1 - std::cos(phi - p.phi0));
    });
  for (const auto& r : t.dihedrals) {
    const double lo = r.lower * kPi / 180, up = r.upper * kPi / 180;
    e.cdih += torsion_term(r.atoms[0], r.atoms[1], r.atoms[2], r.atoms[3], [&](double phi, double& dE) {
      const double dl = wrap(phi - lo), du = wrap(phi - up);
      const bool inside = lo <= up ? (phi >= lo && phi <= up) : (phi >= lo || phi <= up);
      if (inside) {
        dE = 0;
        return 0.0;
      }
      const double delta = std::abs(du) < std::abs(dl) ? du : dl;
      dE = 2 * w.cdih * r.weight * delta;
      return w.cdih * r.weight * delta * delta;
    });
  }
  if (w.rama > 0) {
    constexpr double rad = kPi / 180;
    for (const auto& r : t.ramas) {
      double gp[4][3], gs[4][3];
      const double phi =
          torsion_grad(&x[3 * r.c_prev], &x[3 * r.n], &x[3 * r.ca], &x[3 * r.c], gp[0], gp[1], gp[2], gp[3]);
      const double psi =
          torsion_grad(&x[3 * r.n], &x[3 * r.ca], &x[3 * r.c], &x[3 * r.n_next], gs[0], gs[1], gs[2], gs[3]);
      double best = std::numeric_limits<double>::infinity(), dphi = 0, dpsi = 0;
      for (const auto& b : kRamaBoxes) {
        const double a = outside(phi, b.phi_lower * rad, b.phi_upper * rad),
                     c = outside(psi, b.psi_lower * rad, b.psi_upper * rad), o = b.offset * rad;
        if (a * a + c * c + o * o < best) best = a * a + c * c + o * o, dphi = a, dpsi = c;
      }
      if (best == 0) continue;
      e.rama += w.rama * best;
      if (!g) continue;
      const std::size_t ip[4] = {r.c_prev, r.n, r.ca, r.c}, is[4] = {r.n, r.ca, r.c, r.n_next};
      for (int a = 0; a < 4; ++a)
        for (int q = 0; q < 3; ++q) {
          grad[3 * ip[a] + q] += 2 * w.rama * dphi * gp[a][q];
          grad[3 * is[a] + q] += 2 * w.rama * dpsi * gs[a][q];
        }
    }
  }
  auto repel = [&](std::size_t i, std::size_t j) {
    const double R = w.rep_scale * repel_radius(t, i, j);
    const double dx = x[3 * i] - x[3 * j], dy = x[3 * i + 1] - x[3 * j + 1], dz = x[3 * i + 2] - x[3 * j + 2];
    const double d2 = dx * dx + dy * dy + dz * dz, s = R * R - d2;
    if (s <= 0) return;
    e.rep += w.rep * s * s;
    if (g) {
      const double f = -4 * w.rep * s;  // dE/d(d²) · 2
      grad[3 * i] += f * dx, grad[3 * i + 1] += f * dy, grad[3 * i + 2] += f * dz;
      grad[3 * j] -= f * dx, grad[3 * j + 1] -= f * dy, grad[3 * j + 2] -= f * dz;
    }
  };
  if (w.rep > 0) {
    if (neighbours) {
      for (auto [i, j] : *neighbours) repel(i, j);
    } else {
      for (std::size_t i = 0; i < t.n; ++i)
        for (std::size_t j = i + 1; j < t.n; ++j)
          if (!excluded(t, i, j)) repel(i, j);
    }
  }
  for (const auto& r : t.noes) {
    double s = 0;
    for (auto [i, j] : r.pairs) {
      const double d = std::max(dist(x, i, j), 1e-3);
      s += std::pow(d, -6.0);
    }
    const double deff = std::pow(s, -1.0 / 6.0);
    double pen = 0, dpen = 0, sign = 1;
    if (deff > r.upper) {
      noe_penalty(deff - r.upper, pen, dpen);
    } else if (r.single && deff < r.lower) {
      noe_penalty(r.lower - deff, pen, dpen);
      sign = -1;
    }
    if (pen == 0) continue;
    e.noe += w.noe * pen;
    if (!g) continue;
    // ∂d_eff/∂d_p = d_eff⁷ d_p⁻⁷
    const double deff7 = std::pow(deff, 7.0);
    for (auto [i, j] : r.pairs) {
      const double d = std::max(dist(x, i, j), 1e-3);
      pair_term(i, j, d, sign * w.noe * dpen * deff7 * std::pow(d, -7.0));
    }
  }
  if (w.sym > 0)
    for (const auto& p : t.symmetry) {
      const double d1 = dist(x, p.a, p.b), d2 = dist(x, p.c, p.d), r = d1 - d2;
      e.sym += w.sym * r * r;
      pair_term(p.a, p.b, d1, 2 * w.sym * r);
      pair_term(p.c, p.d, d2, -2 * w.sym * r);
    }
  e.total = e.bond + e.angle + e.chiral + e.plane + e.rep + e.noe + e.cdih + e.rama + e.sym;
  return e;
}

AnnealResult anneal(const AnnealTerms& t, std::span<const double> start, const AnnealOptions& o,
                    const std::function<bool(double)>& progress) {
  const std::size_t n = t.n;
  if (start.size() != 3 * n) throw std::invalid_argument("anneal: starting coordinates are not n×3");
  if (const auto why = anneal_options_problem(o); !why.empty()) throw std::invalid_argument("anneal: " + why);
  for (double c : start)
    if (!std::isfinite(c)) throw std::invalid_argument("anneal: a starting coordinate is not finite");
  AnnealResult res;
  std::vector<double> x(start.begin(), start.end()), v, f(3 * n);
  anneal_prepare(t, o, x, v);
  std::vector<std::array<std::size_t, 2>> nb;
  std::vector<double> built_at;
  const std::size_t total_steps = o.hot_steps + o.cooling_stages * o.steps_per_stage;
  auto run = [&](const AnnealWeights& w, double t_bath, std::size_t steps, const char* stage) {
    built_at.clear();
    auto forces = [&] {
      bool rebuild = built_at.empty();
      for (std::size_t k = 0; !rebuild && k < n; ++k) {
        const double dx = x[3 * k] - built_at[3 * k], dy = x[3 * k + 1] - built_at[3 * k + 1],
                     dz = x[3 * k + 2] - built_at[3 * k + 2];
        rebuild = dx * dx + dy * dy + dz * dz > 0.25 * kSkin * kSkin;
      }
      if (rebuild) {
        built_at = x;
        build_neighbours(t, x, w.rep_scale, nb);
      }
      const auto en = anneal_energy(t, w, x, f, &nb);
      if (!std::isfinite(en.total))
        throw std::runtime_error(std::string("anneal: the energy is not finite in the ") + stage + " stage");
    };
    forces();
    const double h = o.dt, c = kForceToAccel / kMass;
    for (std::size_t s = 0; s < steps; ++s) {
      for (std::size_t k = 0; k < 3 * n; ++k) {
        v[k] -= 0.5 * h * c * f[k];
        x[k] += h * v[k];
      }
      forces();
      for (std::size_t k = 0; k < 3 * n; ++k) v[k] -= 0.5 * h * c * f[k];
      const double temp = temperature(v);
      const double lambda = std::clamp(std::sqrt(1 + h / kTau * (t_bath / std::max(temp, 1e-6) - 1)), 0.8, 1.25);
      for (auto& q : v) q *= lambda;
      ++res.steps;
      if (progress && res.steps % 50 == 0 &&
          !progress(static_cast<double>(res.steps) / static_cast<double>(std::max<std::size_t>(total_steps, 1))))
        throw std::runtime_error("cancelled");
    }
  };
  for (const auto& st : anneal_stages(o)) run(st.weights, st.temperature, st.steps, st.hot ? "hot" : "cooling");
  const std::size_t steps = res.steps;
  res = anneal_finish(t, o, std::move(x));
  res.steps = steps;
  return res;
}

std::vector<AnnealStage> anneal_stages(const AnnealOptions& o) {
  if (const auto why = anneal_options_problem(o); !why.empty()) throw std::invalid_argument("anneal: " + why);
  std::vector<AnnealStage> out{{o.hot, o.t_hot, o.hot_steps, true}};
  for (std::size_t st = 0; st < o.cooling_stages; ++st) {
    const double fr = o.cooling_stages > 1 ? static_cast<double>(st + 1) / static_cast<double>(o.cooling_stages) : 1.0;
    out.push_back({blend(o.hot, o.final, fr), o.t_hot + (o.t_final - o.t_hot) * fr, o.steps_per_stage, false});
  }
  return out;
}

void anneal_prepare(const AnnealTerms& t, const AnnealOptions& o, std::vector<double>& x, std::vector<double>& v) {
  if (x.size() != 3 * t.n) throw std::invalid_argument("anneal: starting coordinates are not n×3");
  // regularisation: covalent geometry first, with the hot stage's soft restraints
  minimise(t, o.hot, x, o.minimise_iterations);
  Rng rng{o.seed};
  v.assign(3 * t.n, 0.0);
  const double sigma = std::sqrt(kBoltzmann * o.t_hot * kForceToAccel / kMass);
  for (auto& c : v) c = sigma * rng.normal();
}

AnnealResult anneal_finish(const AnnealTerms& t, const AnnealOptions& o, std::vector<double> x) {
  AnnealResult res;
  minimise(t, o.final, x, o.minimise_iterations);
  res.energy = anneal_energy(t, o.final, x, {}, nullptr);
  if (!std::isfinite(res.energy.total)) throw std::runtime_error("anneal: the final energy is not finite");
  for (const auto& r : t.noes) {
    double s = 0;
    for (auto [i, j] : r.pairs) s += std::pow(std::max(dist(x, i, j), 1e-3), -6.0);
    const double deff = std::pow(s, -1.0 / 6.0);
    const double viol = std::max(deff - r.upper, r.single ? r.lower - deff : 0.0);
    res.noe_max = std::max(res.noe_max, viol);
    res.noe_violations += viol > 0.5;
  }
  for (const auto& r : t.dihedrals) {
    const double phi = torsion_angle(&x[3 * r.atoms[0]], &x[3 * r.atoms[1]], &x[3 * r.atoms[2]], &x[3 * r.atoms[3]]);
    const double lo = r.lower * kPi / 180, up = r.upper * kPi / 180;
    const bool inside = lo <= up ? (phi >= lo && phi <= up) : (phi >= lo || phi <= up);
    if (!inside && std::min(std::abs(wrap(phi - lo)), std::abs(wrap(phi - up))) > 5 * kPi / 180) ++res.cdih_violations;
  }
  res.coords = std::move(x);
  return res;
}

}  // namespace gemflow::distgeom
