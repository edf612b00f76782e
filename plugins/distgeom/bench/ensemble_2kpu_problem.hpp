#pragma once
// 2KPU's ensemble problem as distgeom.ensemble builds it in workflows/nmr_structure.yaml: the
// molecule from the sequence (CCD templates), the NEF distance and dihedral restraints, bounds
// from the template geometry (free X-Pro ω), triangle smoothing on the CPU, the DG trial
// problem and the annealing terms (NOE bounds without pseudo-atom corrections, the node's
// default). Also the deposited model 1 and the backbone atoms of the ordered residues (≥ 3
// restraints to residues ≥ 5 apart), for the accuracy of a result.
#include <cstdlib>
#include <map>
#include <set>
#include <string>
#include <tuple>
#include <vector>

#include <gemflow/distgeom/anneal.hpp>
#include <gemflow/distgeom/bounds.hpp>
#include <gemflow/distgeom/geometry.hpp>
#include <gemflow/distgeom/smoothing.hpp>
#include <gemflow/distgeom/topology.hpp>
#include <gemflow/distgeom/trials.hpp>
#include <gemflow/io/restraints_io.hpp>
#include <gemflow/io/structure_io.hpp>

#include "ccd_templates.hpp"

namespace gemflow::distgeom::bench {

struct Problem2kpu {
  MolecularTopology topo;
  std::vector<PairRestraint> restraints;
  std::vector<double> lower, upper, smoothed_lower, smoothed_upper;
  std::vector<ChiralTerm> chirals;
  std::vector<AmbiguousTerm> sums;
  std::vector<ChiralCheck> hands;
  std::vector<TorsionRestraint> dihedrals;  ///< the NEF dihedral restraints
  AnnealTerms terms;
  std::set<int> ordered;              ///< residue numbers of the ordered region
  std::vector<std::size_t> backbone;  ///< N, CA, C of the ordered residues
  std::vector<double> reference;      ///< the deposited model 1 at `backbone`
  std::vector<double> deposited;      ///< the deposited model 1, every atom (n×3, Å)

  [[nodiscard]] TrialProblem trial_problem() const {
    TrialProblem tp;
    tp.n = topo.atoms.size();
    tp.smoothed_lower = smoothed_lower;
    tp.smoothed_upper = smoothed_upper;
    tp.lower = lower;
    tp.upper = upper;
    tp.chirals = chirals;
    tp.ambiguous = sums;
    tp.handedness = hands;
    return tp;
  }
  /// Backbone RMSD (Å) of `x` (n×3) to the deposited model 1 over the ordered residues.
  [[nodiscard]] double rmsd(const std::vector<double>& x) const {
    std::vector<double> q;
    for (auto i : backbone) q.insert(q.end(), {x[3 * i], x[3 * i + 1], x[3 * i + 2]});
    return superposed_rmsd(q, reference);
  }
};

/// `dir`: sample_data/2kpu (2kpu.pdb, DhR29B_2kpu.nef).
inline Problem2kpu load_2kpu(const std::string& dir) {
  Problem2kpu p;
  const Structure dep = io::read_pdb(dir + "/2kpu.pdb");
  ChainSequence c{"A", {}};
  for (const auto& a : dep.atoms)
    if (c.residues.empty() || c.residues.back().number != a.residue_number)
      c.residues.push_back(SequenceResidue{a.residue, a.residue_number, {}});
  p.topo = build_topology({c}, nodes::standard_templates());
  const auto& topo = p.topo;
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
  RestraintSet rs = io::read_nef_distance_restraints(dir + "/DhR29B_2kpu.nef");
  io::resolve_restraints(rs, ts);
  for (const auto& r : rs.restraints) {
    PairRestraint q{r.id, {}, r.lower, r.upper, r.pseudo_correction};
    for (const auto& alt : r.alternatives) q.alternatives.push_back({alt.atoms_a, alt.atoms_b});
    p.restraints.push_back(std::move(q));
  }
  BoundsOptions bo;
  bo.bonds = topo.bonds;
  bo.free_proline_omega = true;
  const auto b = restraint_bounds(topo.atoms, topo.xyz, p.restraints, bo);
  p.lower = b.lower;
  p.upper = b.upper;
  p.smoothed_lower = b.lower;
  p.smoothed_upper = b.upper;
  smooth_bounds(p.smoothed_lower, p.smoothed_upper, b.n);
  for (const auto& ct : b.topology.centres)
    p.chirals.push_back(
        {ct[0], ct[1], ct[2], ct[3],
         chiral_volume(&topo.xyz[3 * ct[0]], &topo.xyz[3 * ct[1]], &topo.xyz[3 * ct[2]], &topo.xyz[3 * ct[3]])});
  for (const auto& q : p.restraints) {
    AmbiguousTerm a{q.id, {}, q.upper + q.correction};
    for (const auto& [sa, sb] : q.alternatives)
      for (auto i : sa)
        for (auto j : sb) a.pairs.push_back({i, j});
    if (a.pairs.size() > 1) p.sums.push_back(std::move(a));
  }
  std::map<std::tuple<int, std::string>, std::size_t> at;
  for (std::size_t i = 0; i < topo.atoms.size(); ++i) at[{topo.atoms[i].residue_number, topo.atoms[i].name}] = i;
  for (std::size_t i = 0; i < topo.atoms.size(); ++i)
    if (topo.atoms[i].name == "CA" && at.count({topo.atoms[i].residue_number, "CB"})) {
      const int r = topo.atoms[i].residue_number;
      const std::size_t n = at[{r, "N"}], cc = at[{r, "C"}], cb = at[{r, "CB"}];
      p.hands.push_back(
          {i, n, cc, cb,
           chiral_volume(&topo.xyz[3 * i], &topo.xyz[3 * n], &topo.xyz[3 * cc], &topo.xyz[3 * cb]) > 0 ? 1 : -1});
    }
  auto& dih = p.dihedrals;
  for (const auto& d : rs.dihedrals) {
    TorsionRestraint t;
    t.atoms = d.atom_index;
    t.lower = d.lower;
    t.upper = d.upper;
    t.weight = d.weight;
    t.id = d.id;
    dih.push_back(t);
  }
  p.terms = anneal_terms(topo.atoms, topo.xyz, topo.bonds, p.restraints, dih, true, false);
  auto& ordered = p.ordered;
  {
    std::map<int, int> count;
    for (const auto& q : p.restraints) {
      std::set<int> touched;
      for (const auto& [sa, sb] : q.alternatives)
        for (auto ia : sa)
          for (auto ib : sb) {
            const int ra = topo.atoms[ia].residue_number, rb = topo.atoms[ib].residue_number;
            if (std::abs(ra - rb) < 5) continue;
            touched.insert(ra);
            touched.insert(rb);
          }
      for (int k : touched) ++count[k];
    }
    for (auto [k, cnt] : count)
      if (cnt >= 3) ordered.insert(k);
  }
  std::map<std::tuple<int, std::string>, std::size_t> dep_at;
  for (std::size_t i = 0; i < dep.atoms.size(); ++i) dep_at[{dep.atoms[i].residue_number, dep.atoms[i].name}] = i;
  for (std::size_t i = 0; i < topo.atoms.size(); ++i) {
    const auto& a = topo.atoms[i];
    if (!ordered.count(a.residue_number) || (a.name != "N" && a.name != "CA" && a.name != "C")) continue;
    p.backbone.push_back(i);
    const auto& x = dep.models[0][dep_at.at({a.residue_number, a.name})];
    p.reference.insert(p.reference.end(), {x[0], x[1], x[2]});
  }
  for (const auto& a : topo.atoms) {
    const auto& x = dep.models[0][dep_at.at({a.residue_number, a.name})];
    p.deposited.insert(p.deposited.end(), {x[0], x[1], x[2]});
  }
  return p;
}

}  // namespace gemflow::distgeom::bench
