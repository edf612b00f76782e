// Development driver: 2KPU from the sequence + NEF restraints, DG trials then simulated
// annealing; prints backbone RMSD to the deposited model 1 (residues 9-92), violations and times.
// Usage: distgeom_bench_anneal_2kpu [structures] [seed]; environment: HOT, STAGES, PER, MIN,
// THOT (annealing schedule), NOE_HOT, NOE (final NOE weight), REP_HOT, FIRST (first trial).
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <string>
#include <tuple>

#include <gemflow/distgeom/anneal.hpp>
#include <gemflow/distgeom/bounds.hpp>
#include <gemflow/distgeom/geometry.hpp>
#include <gemflow/distgeom/smoothing.hpp>
#include <gemflow/distgeom/topology.hpp>
#include <gemflow/distgeom/trials.hpp>
#include <gemflow/distgeom/violations.hpp>
#include <gemflow/io/restraints_io.hpp>
#include <gemflow/io/structure_io.hpp>

#include "ccd_templates.hpp"

using namespace gemflow;
using namespace gemflow::distgeom;

namespace {
double env(const char* k, double d) {
  const char* v = std::getenv(k);
  return v ? std::atof(v) : d;
}
}  // namespace

int main(int argc, char** argv) {
  const std::size_t N = argc > 1 ? std::strtoul(argv[1], nullptr, 10) : 1;
  const std::uint64_t seed = argc > 2 ? std::strtoull(argv[2], nullptr, 10) : 1;
  const std::string dir = std::string(GEMFLOW_SOURCE_DIR) + "/sample_data/2kpu/";
  const Structure dep = io::read_pdb(dir + "2kpu.pdb");
  ChainSequence c{"A", {}};
  for (const auto& a : dep.atoms)
    if (c.residues.empty() || c.residues.back().number != a.residue_number)
      c.residues.push_back(SequenceResidue{a.residue, a.residue_number, {}});
  const auto topo = build_topology({c}, nodes::standard_templates());
  Structure ts;
  ts.models.emplace_back();
  for (std::size_t i = 0; i < topo.atoms.size(); ++i) {
    Atom a;
    a.name = topo.atoms[i].name;
    a.element = topo.atoms[i].element;
    a.residue = topo.atoms[i].residue;
    a.residue_number = topo.atoms[i].residue_number;
    a.chain = topo.atoms[i].chain;
    ts.atoms.push_back(a);
    ts.models[0].push_back({topo.xyz[3 * i], topo.xyz[3 * i + 1], topo.xyz[3 * i + 2]});
  }
  RestraintSet rs = io::read_nef_distance_restraints(dir + "DhR29B_2kpu.nef");
  io::resolve_restraints(rs, ts);
  std::vector<PairRestraint> pr;
  for (const auto& r : rs.restraints) {
    PairRestraint p{r.id, {}, r.lower, r.upper, r.pseudo_correction};
    for (const auto& alt : r.alternatives) p.alternatives.push_back({alt.atoms_a, alt.atoms_b});
    pr.push_back(std::move(p));
  }
  BoundsOptions bo;
  bo.bonds = topo.bonds;
  bo.free_proline_omega = true;
  const auto b = restraint_bounds(topo.atoms, topo.xyz, pr, bo);
  std::vector<double> lo = b.lower, up = b.upper;
  smooth_bounds(lo, up, b.n);
  std::vector<ChiralTerm> chir;
  for (const auto& ct : b.topology.centres)
    chir.push_back(
        {ct[0], ct[1], ct[2], ct[3],
         chiral_volume(&topo.xyz[3 * ct[0]], &topo.xyz[3 * ct[1]], &topo.xyz[3 * ct[2]], &topo.xyz[3 * ct[3]])});
  std::vector<AmbiguousTerm> sums;
  for (const auto& p : pr) {
    AmbiguousTerm a{p.id, {}, p.upper + p.correction};
    for (const auto& [sa, sb] : p.alternatives)
      for (auto i : sa)
        for (auto j : sb) a.pairs.push_back({i, j});
    if (a.pairs.size() > 1) sums.push_back(std::move(a));
  }
  std::vector<ChiralCheck> hands;
  std::map<std::tuple<int, std::string>, std::size_t> at;
  for (std::size_t i = 0; i < topo.atoms.size(); ++i) at[{topo.atoms[i].residue_number, topo.atoms[i].name}] = i;
  for (std::size_t i = 0; i < topo.atoms.size(); ++i)
    if (topo.atoms[i].name == "CA" && at.count({topo.atoms[i].residue_number, "CB"})) {
      const int r = topo.atoms[i].residue_number;
      const std::size_t n = at[{r, "N"}], cc = at[{r, "C"}], cb = at[{r, "CB"}];
      hands.push_back(
          {i, n, cc, cb,
           chiral_volume(&topo.xyz[3 * i], &topo.xyz[3 * n], &topo.xyz[3 * cc], &topo.xyz[3 * cb]) > 0 ? 1 : -1});
    }
  TrialProblem tp;
  tp.n = b.n;
  tp.smoothed_lower = lo;
  tp.smoothed_upper = up;
  tp.lower = b.lower;
  tp.upper = b.upper;
  tp.chirals = chir;
  tp.ambiguous = sums;
  tp.handedness = hands;
  // PHI_NEG=1: every non-Gly residue's φ restrained to [−180°, 0°] (a knowledge-based term)
  std::vector<TorsionRestraint> dih;
  if (env("PHI_NEG", 0) > 0)
    for (std::size_t i = 0; i < topo.atoms.size(); ++i) {
      const auto& x = topo.atoms[i];
      if (x.name != "CA" || x.residue == "GLY" || !at.count({x.residue_number - 1, "C"})) continue;
      TorsionRestraint d;
      d.atoms = {at[{x.residue_number - 1, "C"}], at[{x.residue_number, "N"}], i, at[{x.residue_number, "C"}]};
      d.lower = -180;
      d.upper = 0;
      dih.push_back(d);
    }
  const auto terms = anneal_terms(topo.atoms, topo.xyz, topo.bonds, pr, dih);
  AnnealOptions ao;
  ao.hot_steps = static_cast<std::size_t>(env("HOT", static_cast<double>(ao.hot_steps)));
  ao.cooling_stages = static_cast<std::size_t>(env("STAGES", static_cast<double>(ao.cooling_stages)));
  ao.steps_per_stage = static_cast<std::size_t>(env("PER", static_cast<double>(ao.steps_per_stage)));
  ao.minimise_iterations = static_cast<std::size_t>(env("MIN", static_cast<double>(ao.minimise_iterations)));
  ao.t_hot = env("THOT", ao.t_hot);
  ao.hot.noe = env("NOE_HOT", ao.hot.noe);
  ao.final.noe = env("NOE", ao.final.noe);
  ao.hot.rep = env("REP_HOT", ao.hot.rep);
  ao.final.rep_scale = env("REP_SCALE", ao.final.rep_scale);
  ao.hot.rep_scale = env("REP_SCALE_HOT", ao.hot.rep_scale);
  std::vector<double> a, r;
  std::vector<std::size_t> bb;
  for (std::size_t i = 0; i < topo.atoms.size(); ++i) {
    const auto& x = topo.atoms[i];
    if (x.residue_number < 9 || x.residue_number > 92 || (x.name != "N" && x.name != "CA" && x.name != "C")) continue;
    bb.push_back(i);
    const auto& p = dep.models[0][at.count({x.residue_number, x.name}) ? 0 : 0];
    (void)p;
  }
  std::map<std::tuple<int, std::string>, std::size_t> dep_at;
  for (std::size_t i = 0; i < dep.atoms.size(); ++i) dep_at[{dep.atoms[i].residue_number, dep.atoms[i].name}] = i;
  for (auto i : bb) {
    const auto& p = dep.models[0][dep_at.at({topo.atoms[i].residue_number, topo.atoms[i].name})];
    r.insert(r.end(), {p[0], p[1], p[2]});
  }
  auto rmsd = [&](const std::vector<double>& x) {
    std::vector<double> q;
    for (auto i : bb) q.insert(q.end(), {x[3 * i], x[3 * i + 1], x[3 * i + 2]});
    return superposed_rmsd(q, r);
  };
  auto viol = [&](const std::vector<double>& x) {
    const auto v = restraint_violations(topo.atoms, x, pr, EquivalentSwap::Rings);
    std::size_t k = 0;
    for (const auto& rv : v.restraints) k += rv.violation > 0.5;
    return k;
  };
  for (std::size_t k = static_cast<std::size_t>(env("FIRST", 0)); k < static_cast<std::size_t>(env("FIRST", 0)) + N;
       ++k) {
    TrialOptions to;
    to.pivot_fraction = 0.25;
    to.threads = 1;
    to.seed = seed;
    to.first_trial = k;
    const auto t0 = std::chrono::steady_clock::now();
    const auto tr = run_trials(tp, to);
    const auto t1 = std::chrono::steady_clock::now();
    ao.seed = seed + k;
    const auto an = anneal(terms, tr.refined.coords, ao);
    const auto t2 = std::chrono::steady_clock::now();
    std::printf(
        "structure %zu: DG %.2f Å %zu viol (%.1f s) -> SA %.2f Å %zu viol, E %.1f (noe %.1f rep %.1f) (%.1f s)\n", k,
        rmsd(tr.refined.coords), viol(tr.refined.coords), std::chrono::duration<double>(t1 - t0).count(),
        rmsd(an.coords), viol(an.coords), an.energy.total, an.energy.noe, an.energy.rep,
        std::chrono::duration<double>(t2 - t1).count());
  }
}
