// distgeom.anneal and distgeom.ensemble: restrained simulated annealing of one structure, and an
// ensemble of embedded + annealed structures with its statistics.
#include <algorithm>
#include <atomic>
#include <cmath>
#include <map>
#include <mutex>
#include <numbers>
#include <set>
#include <sstream>
#include <thread>

#include <gemflow/distgeom/anneal.hpp>
#if GEMFLOW_DISTGEOM_HAVE_CUDA
#include <gemflow/distgeom/anneal_cuda.hpp>
#include <gemflow/distgeom/smoothing_cuda.hpp>  // CudaError
#endif
#include <gemflow/distgeom/geometry.hpp>
#include <gemflow/distgeom/trials.hpp>
#include <gemflow/distgeom/violations.hpp>
#include <gemflow/node.hpp>
#include <gemflow/types.hpp>

#include "dg_convert.hpp"
#include "param_groups.hpp"
#include "register.hpp"

namespace gemflow::distgeom {
namespace {
using namespace nodes;

// The annealing problem over `rows` (atoms of the topology, by index), with the topology's
// template model as covalent geometry and the restraints (resolved against the topology).
struct Problem {
  std::vector<std::size_t> rows;  // topology atom of each row
  std::vector<AtomInfo> infos;
  std::vector<PairRestraint> restraints;  // over rows
  AnnealTerms terms;
  std::size_t restraints_dropped = 0;
};

Problem make_problem(const Structure& topo, std::vector<std::size_t> rows, const RestraintSet* rs, bool cis_pro,
                     bool pseudo_corrections, const std::vector<std::string>& symmetry_names) {
  Problem p;
  p.rows = std::move(rows);
  if (topo.bonds.empty()) throw InputError("input 'topology' has no bond list: link distgeom.topology's structure");
  if (topo.models.empty()) throw InputError("input 'topology' has no model (template geometry)");
  std::vector<std::size_t> row_of(topo.atoms.size(), SIZE_MAX);
  for (std::size_t r = 0; r < p.rows.size(); ++r) row_of[p.rows[r]] = r;
  std::vector<double> ideal;
  for (auto i : p.rows) {
    const auto& a = topo.atoms[i];
    p.infos.push_back({a.element, a.name, a.residue, a.chain, a.residue_number});
    const auto& x = topo.models[0][i];
    ideal.insert(ideal.end(), {x[0], x[1], x[2]});
  }
  std::vector<std::array<std::size_t, 2>> bonds;
  for (auto [i, j] : topo.bonds)
    if (i < row_of.size() && j < row_of.size() && row_of[i] != SIZE_MAX && row_of[j] != SIZE_MAX)
      bonds.push_back({row_of[i], row_of[j]});
  std::vector<TorsionRestraint> dih;
  if (rs) {
    for (const auto& r : pair_restraints(*rs)) {
      PairRestraint m = r;
      bool ok = !m.alternatives.empty();
      for (auto& [sa, sb] : m.alternatives)
        for (auto* side : {&sa, &sb})
          for (auto& i : *side) {
            if (i >= row_of.size() || row_of[i] == SIZE_MAX) ok = false;
            else i = row_of[i];
          }
      if (ok) p.restraints.push_back(std::move(m));
      else ++p.restraints_dropped;
    }
    for (const auto& d : rs->dihedrals) {
      TorsionRestraint t;
      bool ok = true;
      for (int k = 0; k < 4; ++k) {
        const auto i = d.atom_index[k];
        if (i >= row_of.size() || row_of[i] == SIZE_MAX) ok = false;
        else t.atoms[k] = row_of[i];
      }
      t.lower = d.lower;
      t.upper = d.upper;
      t.weight = d.weight;
      t.id = d.id;
      if (ok) dih.push_back(t);
      else ++p.restraints_dropped;
    }
  }
  p.terms = anneal_terms(p.infos, ideal, bonds, p.restraints, dih, cis_pro, pseudo_corrections);
  if (!symmetry_names.empty()) {
    try {
      p.terms.symmetry = c2_symmetry_pairs(p.infos, symmetry_names);
    } catch (const std::invalid_argument& e) {
      throw InputError(std::string("parameter 'symmetry': ") + e.what());
    }
  }
  return p;
}

// Rows of `s`'s atoms in the topology (by chain, residue number, name); InputError naming the
// first atom the topology lacks.
std::vector<std::size_t> rows_in_topology(const Structure& s, const Structure& topo, const char* port) {
  const auto keys = atom_keys(topo);
  std::vector<std::size_t> rows;
  for (const auto& a : s.atoms) {
    auto it = keys.find(atom_key(a));
    if (it == keys.end())
      throw InputError(std::string("input '") + port + "' atom " + atom_label(a) +
                       " is not in the topology (not the same molecule?)");
    rows.push_back(it->second);
  }
  return rows;
}

struct AnnealParams : ParamGroup {
  explicit AnnealParams(Node* n)
      : ParamGroup(Renames{}),
        hot_steps{n, name("hot_steps"), 1500, {.doc = "MD steps at t_hot"}},
        cooling_stages{n, name("cooling_stages"), 30, {.min = 1, .doc = "Cooling stages, t_hot → t_final"}},
        steps_per_stage{n, name("steps_per_stage"), 200, {.doc = "MD steps per cooling stage"}},
        t_hot{n, name("t_hot"), 2000.0, {.min = 1, .max = 10000, .unit = "K", .doc = "Temperature of the hot stage"}},
        t_final{n, name("t_final"), 100.0, {.min = 1, .max = 10000, .unit = "K", .doc = "Last cooling temperature"}},
        time_step{n, name("time_step"), 0.002, {.min = 1e-5, .max = 0.01, .unit = "ps", .doc = "MD time step"}},
        minimise_iterations{n,
                            name("minimise_iterations"),
                            500,
                            {.doc = "L-BFGS iterations before (regularisation) and after the dynamics"}},
        cis_proline{n, name("cis_proline"), true, {.doc = "X-Pro peptide bonds may be cis or trans"}},
        ramachandran{n,
                     name("ramachandran"),
                     50.0,
                     {.min = 0,
                      .max = 10000,
                      .unit = "kcal/mol/rad²",
                      .doc = "Final weight of the Ramachandran term (flat-bottom φ/ψ boxes αR, β/PPII, αL for "
                             "non-Gly residues); the hot stage uses 1/25 of it; 0 = off"}},
        pseudo_corrections{n,
                           name("pseudo_corrections"),
                           false,
                           {.doc = "NOE bounds + pseudo-atom corrections (Wüthrich) on top of the r^-6 sums; "
                                   "false = the file's bounds on the r^-6 sums (Xplor-NIH sum averaging)"}},
        symmetry{n,
                 name("symmetry"),
                 Symmetry::None,
                 {{Symmetry::None, "none"}, {Symmetry::C2, "c2"}},
                 {.doc = "c2: a homodimer of two identical chains, kept C2-symmetric by the distance-difference "
                         "terms k (d(A_i,A_j) − d(B_i,B_j))² (NCS: identical chains) and k (d(A_i,B_j) − "
                         "d(B_i,A_j))² (distance symmetry, Nilges 1993) over every two atoms of symmetry_atoms; "
                         "refused when the chains differ; none: chains annealed independently"}},
        symmetry_weight{n,
                        name("symmetry_weight"),
                        100.0,
                        {.min = 0,
                         .max = 10000,
                         .unit = "kcal/mol/Å²",
                         .doc = "symmetry c2: final weight k of the symmetry terms; the hot stage uses 1/10 of it"}},
        symmetry_atoms{n,
                       name("symmetry_atoms"),
                       SymmetryAtoms::Ca,
                       {{SymmetryAtoms::Ca, "ca"}, {SymmetryAtoms::Backbone, "backbone"}},
                       {.doc = "symmetry c2: the atoms whose pairs the terms cover: ca = every two Cα atoms; "
                               "backbone = every two of N, CA, C (9 times the pairs: the peptide planes and Hα "
                               "follow too)"}} {
    done();
  }
  enum class Symmetry { None, C2 };
  enum class SymmetryAtoms { Ca, Backbone };
  Param<std::size_t> hot_steps, cooling_stages, steps_per_stage;
  Param<double> t_hot, t_final, time_step;
  Param<std::size_t> minimise_iterations;
  Param<bool> cis_proline;
  Param<double> ramachandran;
  Param<bool> pseudo_corrections;
  Choice<Symmetry> symmetry;
  Param<double> symmetry_weight;
  Choice<SymmetryAtoms> symmetry_atoms;
  [[nodiscard]] bool c2() const { return symmetry.value() == Symmetry::C2; }
  /// The atom names of the symmetry pairs; empty without symmetry.
  [[nodiscard]] std::vector<std::string> symmetry_names() const {
    if (!c2()) return {};
    if (symmetry_atoms.value() == SymmetryAtoms::Backbone) return {"N", "CA", "C"};
    return {"CA"};
  }
  [[nodiscard]] AnnealOptions options(std::uint64_t seed) const {
    AnnealOptions o;
    o.seed = seed;
    o.hot_steps = hot_steps.value();
    o.cooling_stages = cooling_stages.value();
    o.steps_per_stage = steps_per_stage.value();
    o.t_hot = t_hot.value();
    o.t_final = t_final.value();
    o.dt = time_step.value();
    o.minimise_iterations = minimise_iterations.value();
    o.final.rama = ramachandran.value();
    o.hot.rama = ramachandran.value() / 25;
    if (c2()) {
      o.final.sym = symmetry_weight.value();
      o.hot.sym = symmetry_weight.value() / 10;
    }
    return o;
  }
  /// The schedule as anneal() takes it, or InputError naming the parameters (execute() without
  /// workflow validation meets the same rule).
  [[nodiscard]] AnnealOptions checked_options(std::uint64_t seed) const {
    AnnealOptions o = options(seed);
    if (const auto why = anneal_options_problem(o); !why.empty()) throw InputError("parameters: " + why);
    return o;
  }
};

// The annealing parameters' rules, checked when a workflow is validated: a cooling from t_hot
// down to t_final, and a symmetry weight only where a symmetry term uses it.
std::vector<ParamRule> anneal_rules() {
  return {{.param = "t_final",
           .other = "t_hot",
           .why = "the cooling stages go from t_hot down to t_final; a t_final above t_hot would heat",
           .compare = ParamCompare::LessEqual},
          {.param = "symmetry_weight",
           .other = "symmetry",
           .other_value = std::string("c2"),
           .why = "the weight is that of the c2 symmetry term; without it the weight has no effect"},
          {.param = "symmetry_atoms",
           .other = "symmetry",
           .other_value = std::string("c2"),
           .why = "the atoms are those of the c2 symmetry term; without it they have no effect"}};
}

const char* kForceFieldDoc =
    "Force field (kcal/mol): bonds 1000 (d − d₀)², angles as 1-3 distances 500 (d − d₀)², chiral and planar centre "
    "volumes 100 (V − V₀)², planarity torsions 300 (1 − cos(φ − φ₀)) over bonds between planar centres (X-Pro ω "
    "two-fold with cis_proline), all from the topology's template model; Xplor-NIH-style quartic repel k (s²R² − "
    "d²)² (Bondi radii, polar H to N/O 2.0 Å), hot 0.1 at s 0.9 → 4 at s 0.85; NOE flat-bottom on the r^-6 sum "
    "over every expanded pair (harmonic to 0.5 Å, then linear; the file's bounds, plus pseudo-atom corrections "
    "with pseudo_corrections), 30 kcal/mol/Å² throughout; dihedral restraints flat-bottom 10 → 200 "
    "kcal/mol/rad²; Ramachandran term for non-Gly residues: k min over the boxes αR, β/PPII, αL (Lovell et al. "
    "2003 favoured regions as coarse boxes, those of the ensemble's report) of (Δφ² + Δψ² + o²), Δ the "
    "distance outside the box, o = 60° for αL (allowed, not favoured: no pull across φ = 0), ramachandran/25 → "
    "ramachandran kcal/mol/rad²; with symmetry c2 (homodimers) the distance differences k (d(A_i,A_j) − "
    "d(B_i,B_j))² and k (d(A_i,B_j) − d(B_i,A_j))² over every two Cα atoms i < j (symmetry_atoms: backbone: N, CA, C; "
    "NCS and "
    "distance symmetry, Nilges 1993), symmetry_weight/10 → symmetry_weight (10 → 100) kcal/mol/Å². Schedule (t_final ≤ "
    "t_hot): L-BFGS regularisation, hot_steps at t_hot, cooling_stages × steps_per_stage with the temperature linear "
    "and the force constants geometric to their final values, "
    "L-BFGS minimisation. Velocity Verlet, masses 100 amu, Berendsen thermostat (τ 0.05 ps).";

Structure rows_structure(const Structure& topo, const std::vector<std::size_t>& rows,
                         const std::vector<std::vector<double>>& models, const char* title) {
  Structure out;
  out.title = title;
  std::vector<std::size_t> row_of(topo.atoms.size(), SIZE_MAX);
  for (std::size_t r = 0; r < rows.size(); ++r) {
    out.atoms.push_back(topo.atoms[rows[r]]);
    out.atoms.back().serial = static_cast<int>(r + 1);
    row_of[rows[r]] = r;
  }
  for (const auto& m : models) {
    out.models.emplace_back();
    for (std::size_t r = 0; r < rows.size(); ++r) out.models.back().push_back({m[3 * r], m[3 * r + 1], m[3 * r + 2]});
  }
  for (auto [i, j] : topo.bonds)
    if (row_of[i] != SIZE_MAX && row_of[j] != SIZE_MAX) out.bonds.push_back({row_of[i], row_of[j]});
  return out;
}

// ---------------------------------------------------------------------------------------------
class AnnealNode final : public Node {
 public:
  static NodeInfo info() {
    return {.id = "distgeom.anneal",
            .version = 1,
            .title = "Simulated annealing (restrained MD)",
            .category = "Distance geometry",
            .doc = std::string("Cartesian restrained simulated annealing of one structure (e.g. a DG structure from "
                               "distgeom.embed_and_refine) against distance and dihedral restraints.\n"
                               "Inputs: structure (start: its atoms must be topology atoms), topology "
                               "(distgeom.topology: bonds and template geometry), restraints (optional, resolved "
                               "against the topology).\nOutputs: structure (annealed, the start's atoms), report "
                               "(Table metric/value: energy terms, noe_violations_gt_0_5A, noe_max_violation_A, "
                               "cdih_violations_gt_5deg, md_steps).\nDevice: cpu (default) | auto | cuda | "
                               "cuda:N. On CUDA the MD stages run on the device (the batch path of "
                               "distgeom.ensemble with one structure: per-term kernels, repel pair list built on "
                               "the device, anneal_cuda.hpp), the L-BFGS minimisations on the host. One structure "
                               "leaves most of the GPU idle: the device pays off for ensembles "
                               "(distgeom.ensemble), where every structure anneals in one batch.\n") +
                   kForceFieldDoc,
            .errors =
                "A start atom missing from the topology; a topology without bonds; a non-finite energy "
                "(names the stage); t_final above t_hot (a parameter rule); symmetry c2 when the molecule is "
                "not two identical chains (names the chains and the first difference); device cuda absent or "
                "the plugin built without CUDA (DeviceError, never a silent CPU run).",
            .memory = "O(n) terms plus the repel neighbour list (about 30 pairs per atom); on cuda the same on "
                      "the device.",
            .determinism = "CPU: the same inputs and seed give the same coordinates (one thread). cuda: the device "
                           "sums forces in a varying order, and the annealing amplifies rounding (its long L-BFGS "
                           "minimisations most: on the CPU, moving one start coordinate by 1e-12 Å can end in "
                           "another local minimum), so runs differ from each other and from the CPU (not in "
                           "quality).",
            .references =
                "Nilges, Clore & Gronenborn, FEBS Lett. 229 (1988) 317; Schwieters et al., J. Magn. Reson. "
                "160 (2003) 65 (Xplor-NIH); Berendsen et al., J. Chem. Phys. 81 (1984) 3684; Nilges, Proteins 17 "
                "(1993) 297 (symmetric dimers: distance symmetry).",
            .stochastic = true,
            .rules = anneal_rules()};
  }
  Input<Structure> structure{this, "structure", "Starting coordinates (model 1)"};
  Input<Structure> topology{this, "topology", "distgeom.topology's molecule (bonds, template geometry)"};
  Input<RestraintSet> restraints{this, "restraints", "Restraints resolved against the topology", PortUse::Optional};
  Output<Structure> annealed{this, "structure", "Annealed structure (one model)"};
  Output<Table> report{this, "report", "Energy terms and violations (metric, value)"};
  AnnealParams annealing{this};
  SeedParam seed{this, "Seed of the initial velocities"};
  DeviceParam device{this, "cpu"};

  void execute(NodeContext& ctx) override {
    const Device dev = device.resolve(ctx);
#if !GEMFLOW_DISTGEOM_HAVE_CUDA
    if (dev.is_cuda())
      throw DeviceError("device " + dev.str() + " requested, but the distgeom plugin was built without CUDA");
#endif
    const Structure& s = *structure;
    const Structure& topo = *topology;
    if (s.models.empty()) throw InputError("input 'structure' has no model");
    const auto rows = rows_in_topology(s, topo, "structure");
    const AnnealOptions options = annealing.checked_options(seed.value());
    const Problem p =
        make_problem(topo, rows, restraints.connected() ? restraints.get().get() : nullptr,
                     annealing.cis_proline.value(), annealing.pseudo_corrections.value(), annealing.symmetry_names());
    if (p.restraints_dropped)
      ctx.warn(std::to_string(p.restraints_dropped) + " restraint(s) name atoms the structure lacks; left out");
    const auto start = model_xyz(s, 1);
    AnnealResult r;
    const auto progress = [&](double f) {
      ctx.progress(f, "annealing");
      return !ctx.cancelled();
    };
    try {
      if (dev.is_cuda()) {
#if GEMFLOW_DISTGEOM_HAVE_CUDA
        ctx.info("annealing on " + dev.str());
        cuda::AnnealBatchOptions bo;
        bo.progress = progress;
        try {
          r = std::move(cuda::anneal_batch(p.terms, {start}, {options.seed}, options, dev.index, bo).front());
        } catch (const cuda::CudaError& e) {
          throw DeviceError(dev.str() + ": " + e.what());
        }
#endif
      } else {
        r = anneal(p.terms, start, options, progress);
      }
    } catch (const Error&) {
      throw;  // DeviceError stays a device error
    } catch (const std::runtime_error& e) {
      if (ctx.cancelled()) throw Cancelled();
      throw Error(e.what());
    }
    Table t{{"metric", "value"}, {}};
    const auto& e = r.energy;
    for (const auto& [k, v] : std::vector<std::pair<const char*, double>>{{"energy_total", e.total},
                                                                          {"energy_bond", e.bond},
                                                                          {"energy_angle", e.angle},
                                                                          {"energy_chiral", e.chiral},
                                                                          {"energy_plane", e.plane},
                                                                          {"energy_repel", e.rep},
                                                                          {"energy_noe", e.noe},
                                                                          {"energy_cdih", e.cdih},
                                                                          {"energy_rama", e.rama},
                                                                          {"energy_symmetry", e.sym},
                                                                          {"noe_max_violation_A", r.noe_max}})
      t.rows.push_back({std::string(k), v});
    t.rows.push_back({std::string("noe_violations_gt_0_5A"), static_cast<std::int64_t>(r.noe_violations)});
    t.rows.push_back({std::string("cdih_violations_gt_5deg"), static_cast<std::int64_t>(r.cdih_violations)});
    t.rows.push_back({std::string("md_steps"), static_cast<std::int64_t>(r.steps)});
    ctx.info("annealed: E " + std::to_string(e.total) + " kcal/mol, NOE " + std::to_string(e.noe) + ", " +
             std::to_string(r.noe_violations) + " NOE violations > 0.5 Å (max " + std::to_string(r.noe_max) + " Å)");
    ctx.record("energy", e.total);
    annealed.set(rows_structure(topo, rows, {r.coords}, "distgeom.anneal"));
    report.set(std::move(t));
  }
};

// ---------------------------------------------------------------------------------------------
class EnsembleNode final : public Node {
 public:
  static NodeInfo info() {
    return {.id = "distgeom.ensemble",
            .version = 1,
            .title = "NMR ensemble (DG + simulated annealing)",
            .category = "Distance geometry",
            .doc = std::string(
                       "Computes `structures` structures, each one trial of distgeom.embed_and_refine (its own "
                       "seed: metrize → metric matrix → 4D embedding → DG refinement, mirror trial) followed "
                       "by distgeom.anneal (seeded per structure), keeps the `keep` lowest final energies "
                       "(`selection: accepted`, the default: the structures without restraint violations "
                       "first), superimposes them on the backbone (N, CA, C) of the ordered residues (residues with "
                       "≥ 3 restraints to residues ≥ 5 apart; with fewer than 3 such atoms every residue's "
                       "backbone, then every atom, with a warning) and reports: precision (mean backbone RMSD to "
                       "the mean structure), accuracy against `reference` model 1 when connected (mean and "
                       "best backbone RMSD over the ordered residues), per-residue RMSF (backbone), "
                       "restraint violations (r^-6 sums, ring flips as distgeom.compare), Ramachandran "
                       "regions, clashes, Cα handedness.\n"
                       "Ramachandran (ordered residues with φ and ψ): favoured = αR (−160 ≤ φ ≤ −20, −120 ≤ "
                       "ψ ≤ 50) or β/PPII (−180 ≤ φ ≤ −40, ψ ≥ 90 or ψ ≤ −150), and glycine anywhere; "
                       "allowed = the rest of φ < 0, or αL (20 ≤ φ ≤ 110, −30 ≤ ψ ≤ 100); outlier otherwise. A "
                       "coarse box classification after Ramachandran & Sasisekharan (1968) regions, not "
                       "MolProbity's density contours. Clash: two atoms more than three bonds apart (polar H "
                       "to N/O excepted) closer than their Bondi radii sum − 0.4 Å (MolProbity's 0.4 Å "
                       "overlap criterion).\nDevice: cpu (default) | auto | cuda | cuda:N. On CUDA the DG "
                       "trials stay on the CPU (threads), and all structures are annealed at once: the MD "
                       "stages batched on the device (per-term kernels, repel pair lists built on the device, "
                       "anneal_cuda.hpp), the L-BFGS minimisations on the host (`threads` structures at "
                       "once).\nOutputs: structure (the kept models, best first), report (Table "
                       "metric/value), rmsf (Table chain, residue, name, rmsf_A), models (Table: model, seed "
                       "trial, energy, noe_violations, max_violation_A, rmsd_to_reference_A, accepted, "
                       "cdih_violations_gt_5deg).\n") +
                   kForceFieldDoc,
            .errors =
                "As distgeom.embed_and_refine and distgeom.anneal (t_final above t_hot, symmetry c2 without two "
                "identical chains); a structure whose embedding or annealing "
                "fails is logged and left out; the node fails when fewer than `keep` succeed.",
            .memory =
                "Host: about 5 n² doubles per running structure (the embedding), the kept models. Device "
                "(cuda): the terms, 3 doubles × 3 n per structure and the repel pair lists.",
            .determinism =
                "CPU: the same seed gives the same ensemble whatever the number of threads. cuda: the "
                "device sums forces in a varying order, and the MD amplifies rounding: runs differ "
                "structure by structure (not in quality).",
            .references =
                "Nilges, Clore & Gronenborn 1988; Schwieters et al. 2003 (Xplor-NIH); Nilges 1993 (symmetric "
                "dimers); Havel 1991 (DG); "
                "Kabsch 1976; Ramachandran & Sasisekharan, Adv. Protein Chem. 23 (1968) 283; Word et "
                "al., J. Mol. Biol. 285 (1999) 1735 (clash overlap 0.4 Å).",
            .stochastic = true,
            .rules = [] {
              auto r = anneal_rules();
              r.insert(r.begin(), {.param = "keep",
                                   .other = "structures",
                                   .why = "the kept structures are among those computed",
                                   .compare = ParamCompare::LessEqual});
              return r;
            }()};
  }
  Input<DistanceBounds> bounds{this, "bounds", "Bounds as built (before smoothing), over topology atoms"};
  Input<DistanceBounds> smoothed{this, "smoothed", "Triangle-smoothed bounds"};
  Input<Structure> topology{this, "topology", "distgeom.topology's molecule (the bounds' structure)"};
  Input<RestraintSet> restraints{this, "restraints", "Restraints resolved against the topology"};
  Input<Structure> reference{this, "reference", "Deposited structure for accuracy (model 1)", PortUse::Optional};
  Output<Structure> ensemble{this, "structure", "The kept models, best first (see selection)"};
  Output<Table> report{this, "report", "Ensemble statistics (metric, value)"};
  Output<Table> rmsf{this, "rmsf", "Per-residue backbone RMSF"};
  Output<Table> model_table{this, "models", "One row per kept model"};
  Param<std::size_t> structures{this, "structures", 20, {.min = 1, .max = 1000, .doc = "Structures computed"}};
  Param<std::size_t> keep{this, "keep", 10, {.min = 1, .max = 1000, .doc = "Lowest-energy structures kept"}};
  enum class Selection { Accepted, Energy };
  Choice<Selection> selection{
      this,
      "selection",
      Selection::Accepted,
      {{Selection::Accepted, "accepted"}, {Selection::Energy, "energy"}},
      {.doc = "Which structures are kept: accepted = the lowest energies among the structures that violate "
              "no distance restraint by more than 0.5 Å (as the report counts them: r^-6 sums, pseudo-atom "
              "corrections, ring flips) and no dihedral restraint by more than 5° (\"low energy, few "
              "restraint violations\", as NMR ensembles are deposited), filled up by the lowest energies "
              "of the others (warned) when fewer are accepted; energy = the lowest energies alone"}};
  SeedParam seed{this, "Seed: structure k uses trial k of this seed (embedding) and seed + k (annealing)"};
  EmbedParams embedding{this};
  RefineParams refinement{this};
  /// The parameter within its range that may have caused a structure's failure, named (a user's
  /// pivot_fraction 0.02 and time_step 0.01 failed every structure with messages that named neither).
  std::string failure_hint(const std::string& what) const {
    std::ostringstream h;
    if (what.find("positive pivots") != std::string::npos && embedding.pivot_fraction.value() < 1)
      h << " (parameter 'pivot_fraction' = " << embedding.pivot_fraction.value()
        << " allows only that fraction of the atoms as pivots: a larger one may find more)";
    else if (what.find("energy is not finite") != std::string::npos)
      h << " (parameter 'time_step' = " << annealing.time_step.value()
        << " ps: a smaller time step keeps the dynamics stable)";
    return h.str();
  }
  AnnealParams annealing{this};
  Param<std::int64_t> threads{this, "threads", 0, {.min = 0, .max = 1024, .doc = "Parallel structures; 0 = all cores"}};
  DeviceParam device{this, "cpu"};

  void execute(NodeContext& ctx) override {
    const Device dev = device.resolve(ctx);
#if !GEMFLOW_DISTGEOM_HAVE_CUDA
    if (dev.is_cuda())
      throw DeviceError("device " + dev.str() + " requested, but the distgeom plugin was built without CUDA");
#endif
    const bool gpu = dev.is_cuda();
    const auto& b = *bounds;
    const auto& sm = *smoothed;
    const Structure& topo = *topology;
    const RestraintSet& rs = *restraints;
    const std::size_t n = b.size(), N = structures.value(), M = keep.value();
    if (M > N)
      throw InputError("parameter 'keep' = " + std::to_string(M) + " exceeds 'structures' = " + std::to_string(N));
    if (sm.atom_index != b.atom_index) throw InputError("inputs 'bounds' and 'smoothed' are not over the same atoms");
    for (auto i : b.atom_index)
      if (i >= topo.atoms.size())
        throw InputError("the bounds name atom " + std::to_string(i) + " beyond the topology");
    const std::vector<std::size_t> rows(b.atom_index.begin(), b.atom_index.end());
    const AnnealOptions base = annealing.checked_options(seed.value());
    const Problem p = make_problem(topo, rows, &rs, annealing.cis_proline.value(), annealing.pseudo_corrections.value(),
                                   annealing.symmetry_names());
    // DG inputs as distgeom.embed_and_refine builds them, from the topology's template model
    const auto xyz = model_xyz(topo, 1);
    std::vector<double> sub;
    for (auto i : rows) sub.insert(sub.end(), {xyz[3 * i], xyz[3 * i + 1], xyz[3 * i + 2]});
    std::vector<std::array<std::size_t, 2>> rb;
    {
      std::vector<std::size_t> row_of(topo.atoms.size(), SIZE_MAX);
      for (std::size_t r = 0; r < rows.size(); ++r) row_of[rows[r]] = r;
      for (auto [i, j] : topo.bonds)
        if (row_of[i] != SIZE_MAX && row_of[j] != SIZE_MAX) rb.push_back({row_of[i], row_of[j]});
    }
    const Topology dgtopo = topology_from_bonds(p.infos, rb);
    std::vector<ChiralTerm> chirals;
    for (const auto& c : dgtopo.centres)
      chirals.push_back(
          {c[0], c[1], c[2], c[3], chiral_volume(&sub[3 * c[0]], &sub[3 * c[1]], &sub[3 * c[2]], &sub[3 * c[3]])});
    std::vector<std::size_t> row_of_topo(topo.atoms.size(), SIZE_MAX);
    for (std::size_t r = 0; r < rows.size(); ++r) row_of_topo[rows[r]] = r;
    std::size_t sum_skipped = 0;
    const auto sums = sum_terms(rs, row_of_topo, &sum_skipped);
    std::vector<ChiralCheck> hands;
    std::map<std::tuple<std::string, int, std::string>, std::size_t> at;
    for (std::size_t r = 0; r < rows.size(); ++r)
      at[{p.infos[r].chain, p.infos[r].residue_number, p.infos[r].name}] = r;
    for (std::size_t r = 0; r < rows.size(); ++r) {
      if (p.infos[r].name != "CA") continue;
      auto f = [&](const char* nm) {
        auto it = at.find({p.infos[r].chain, p.infos[r].residue_number, nm});
        return it == at.end() ? SIZE_MAX : it->second;
      };
      const std::size_t nn = f("N"), cc = f("C"), cb = f("CB");
      if (nn == SIZE_MAX || cc == SIZE_MAX || cb == SIZE_MAX) continue;
      const double v = chiral_volume(&sub[3 * r], &sub[3 * nn], &sub[3 * cc], &sub[3 * cb]);
      hands.push_back({r, nn, cc, cb, v > 0 ? 1 : -1});
    }
    TrialProblem tp;
    tp.n = n;
    tp.smoothed_lower = sm.lower.span();
    tp.smoothed_upper = sm.upper.span();
    tp.lower = b.lower.span();
    tp.upper = b.upper.span();
    tp.handedness = hands;
    tp.chirals = chirals;
    tp.ambiguous = sums;

    struct Done {
      bool ok = false;
      std::string failure;
      AnnealResult r;
      std::vector<double> start;  // gpu: the DG structure, annealed in one batch afterwards
    };
    std::vector<Done> done(N);
    std::atomic<std::size_t> next{0}, finished{0};
    std::atomic<bool> stop{false};
    auto work = [&] {
      while (!stop.load()) {
        const std::size_t k = next.fetch_add(1);
        if (k >= N) break;
        try {
          TrialOptions o;
          o.trials = 1;
          o.first_trial = k;
          o.seed = seed.value();
          o.dim = embedding.dimensions.value();
          o.method = embedding.embed_method();
          o.cholesky_rank = embedding.rank.value();
          o.pivot_fraction = embedding.pivot_fraction.value();
          o.refine = refinement.options();
          o.mirror_trial = refinement.mirror_trial.value();
          o.parallel_hands = true;  // the last structures would leave cores idle
          o.threads = 1;
          const auto tr = run_trials(tp, o, [&](double) { return !stop.load(); });
          AnnealOptions ao = base;
          ao.seed = trial_seed(seed.value() + 1, k);
          if (gpu) done[k].start = tr.refined.coords;
          else done[k].r = anneal(p.terms, tr.refined.coords, ao, [&](double) { return !stop.load(); });
          done[k].ok = true;
        } catch (const std::exception& e) {
          done[k].failure = e.what() + failure_hint(e.what());
        }
        ++finished;
      }
    };
    unsigned nt = threads.value() > 0 ? static_cast<unsigned>(threads.value())
                                      : std::max(1u, std::thread::hardware_concurrency());
    nt = static_cast<unsigned>(std::min<std::size_t>(nt, N));
    std::vector<std::thread> pool;
    for (unsigned i = 0; i < nt; ++i) pool.emplace_back(work);
    while (finished.load() < N) {
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
      ctx.progress(static_cast<double>(finished.load()) / static_cast<double>(N), "structures");
      if (ctx.cancelled()) stop = true;
      if (stop.load() && next.load() >= N) break;
      if (stop.load()) next.store(N);
    }
    for (auto& t : pool) t.join();
    if (ctx.cancelled()) throw Cancelled();
    if (gpu) {
#if GEMFLOW_DISTGEOM_HAVE_CUDA
      std::vector<std::vector<double>> starts;
      std::vector<std::uint64_t> seeds;
      std::vector<std::size_t> which;
      for (std::size_t k = 0; k < N; ++k)
        if (done[k].ok) {
          starts.push_back(done[k].start);
          seeds.push_back(trial_seed(seed.value() + 1, k));
          which.push_back(k);
        }
      ctx.info("annealing " + std::to_string(starts.size()) + " structures in one batch on " + dev.str());
      cuda::AnnealBatchOptions bo;
      bo.threads = static_cast<unsigned>(threads.value());
      bo.progress = [&](double f) {
        ctx.progress(f, "annealing");
        return !ctx.cancelled();
      };
      try {
        auto rs2 = cuda::anneal_batch(p.terms, starts, seeds, base, dev.index, bo);
        for (std::size_t q = 0; q < which.size(); ++q) done[which[q]].r = std::move(rs2[q]);
      } catch (const cuda::CudaError& e) {
        throw DeviceError(dev.str() + ": " + e.what());
      } catch (const std::runtime_error& e) {
        if (ctx.cancelled()) throw Cancelled();
        throw Error(e.what());
      }
#endif
    }
    std::vector<std::size_t> ok;
    for (std::size_t k = 0; k < N; ++k) {
      if (done[k].ok) ok.push_back(k);
      else ctx.warn("structure " + std::to_string(k) + " failed, left out: " + done[k].failure);
    }
    if (ok.size() < M)
      throw Error("only " + std::to_string(ok.size()) + " of " + std::to_string(N) + " structures succeeded, " +
                  std::to_string(M) + " asked to keep");
    // A structure annealed into a local minimum that leaves a restraint violated (a residue
    // trapped near φ = 0, a strand out of register) can still have a low energy; accepted ones
    // come first, as NMR ensembles are selected ("low energy, few restraint violations").
    // Violations as the ensemble reports them (r^-6 sums with pseudo-atom corrections, ring flips).
    const bool by_acceptance = *selection == Selection::Accepted;
    std::size_t n_accepted = 0;
    std::vector<char> accepted_of(N, 0);
    {
      std::vector<double> energy;
      std::vector<char> acc;
      for (auto k : ok) {
        const auto v = restraint_violations(p.infos, done[k].r.coords, p.restraints, EquivalentSwap::Rings);
        const auto nv = static_cast<std::size_t>(std::count_if(
            v.restraints.begin(), v.restraints.end(), [](const RestraintViolation& x) { return x.violation > 0.5; }));
        accepted_of[k] = accepted(done[k].r, nv) ? 1 : 0;
        energy.push_back(done[k].r.energy.total);
        acc.push_back(accepted_of[k]);
        n_accepted += acc.back();
      }
      std::vector<std::size_t> sorted;
      for (auto q : ensemble_order(energy, acc, by_acceptance)) sorted.push_back(ok[q]);
      ok = std::move(sorted);
    }
    if (by_acceptance && n_accepted < M)
      ctx.warn(std::to_string(n_accepted) + " of " + std::to_string(ok.size()) +
               " structures are accepted (no distance restraint violated by > 0.5 Å, no dihedral by > 5°); " +
               std::to_string(M - n_accepted) + " of the " + std::to_string(M) +
               " kept are not: compute more structures");
    ok.resize(M);

    // ordered residues and backbone rows
    std::set<std::pair<std::string, int>> ordered;
    {
      std::map<std::pair<std::string, int>, int> count;
      for (const auto& r : p.restraints) {
        std::set<std::pair<std::string, int>> touched;
        for (const auto& [sa, sb] : r.alternatives)
          for (auto ia : sa)
            for (auto ib : sb) {
              const auto& A = p.infos[ia];
              const auto& B = p.infos[ib];
              if (A.chain == B.chain && std::abs(A.residue_number - B.residue_number) < 5) continue;
              touched.insert({A.chain, A.residue_number});
              touched.insert({B.chain, B.residue_number});
            }
        for (const auto& k : touched) ++count[k];
      }
      for (const auto& [k, c] : count)
        if (c >= 3) ordered.insert(k);
    }
    // The superposition's atoms: the ordered residues' backbone; with fewer than 3 of those (no
    // long-range restraints, a peptide, a ligand) every residue's backbone, then every atom, with a
    // warning. The structures are kept whatever: a user's run computed them all and then failed
    // here, losing them.
    const auto backbone = [&](std::size_t r) {
      return p.infos[r].name == "N" || p.infos[r].name == "CA" || p.infos[r].name == "C";
    };
    std::vector<std::size_t> bb;
    for (std::size_t r = 0; r < n; ++r)
      if (backbone(r) && ordered.count({p.infos[r].chain, p.infos[r].residue_number})) bb.push_back(r);
    if (bb.size() < 3) {
      bb.clear();
      for (std::size_t r = 0; r < n; ++r)
        if (backbone(r)) bb.push_back(r);
      std::string on = "every residue's backbone (" + std::to_string(bb.size()) + " atoms)";
      if (bb.size() < 3) {
        bb.resize(n);
        for (std::size_t r = 0; r < n; ++r) bb[r] = r;
        on = "every atom (" + std::to_string(n) + ")";
      }
      ctx.warn("no residue is ordered (3 or more restraints to residues 5 or more apart): the superposition, the "
               "precision and the RMSD to the reference use " + on);
    }
    const bool superpose = bb.size() >= 3;
    auto pick = [&](const std::vector<double>& x) {
      std::vector<double> o;
      for (auto r : bb) o.insert(o.end(), {x[3 * r], x[3 * r + 1], x[3 * r + 2]});
      return o;
    };
    std::vector<std::vector<double>> models;
    for (auto k : ok) models.push_back(done[k].r.coords);
    // superimpose on model 0, mean, then on the mean (twice)
    std::vector<double> mean = pick(models[0]);
    for (int it = 0; it < 3 && superpose; ++it) {
      for (auto& m : models) {
        const auto s = kabsch(pick(m), mean);
        distgeom::apply(s, m);
      }
      std::fill(mean.begin(), mean.end(), 0.0);
      for (const auto& m : models) {
        const auto q = pick(m);
        for (std::size_t k = 0; k < q.size(); ++k) mean[k] += q[k] / static_cast<double>(models.size());
      }
    }
    // fewer than 3 atoms in all: no superposition, no precision
    double precision = superpose ? 0.0 : std::numeric_limits<double>::quiet_NaN();
    for (const auto& m : models) {
      if (!superpose) break;
      const auto q = pick(m);
      double s = 0;
      for (std::size_t k = 0; k < q.size(); ++k) s += (q[k] - mean[k]) * (q[k] - mean[k]);
      precision += std::sqrt(s / static_cast<double>(bb.size())) / static_cast<double>(models.size());
    }
    // RMSF per residue (backbone atoms, all residues, after the superposition)
    Table rt{{"chain", "residue", "name", "rmsf_A"}, {}};
    {
      std::map<std::pair<std::string, int>, std::pair<double, int>> acc;
      std::map<std::pair<std::string, int>, std::string> names;
      for (std::size_t r = 0; r < n; ++r) {
        if (p.infos[r].name != "N" && p.infos[r].name != "CA" && p.infos[r].name != "C") continue;
        double mx[3] = {0, 0, 0};
        for (const auto& m : models)
          for (int c = 0; c < 3; ++c) mx[c] += m[3 * r + c] / static_cast<double>(models.size());
        auto& a = acc[{p.infos[r].chain, p.infos[r].residue_number}];
        names[{p.infos[r].chain, p.infos[r].residue_number}] = p.infos[r].residue;
        for (const auto& m : models)
          for (int c = 0; c < 3; ++c) a.first += (m[3 * r + c] - mx[c]) * (m[3 * r + c] - mx[c]);
        a.second += static_cast<int>(models.size());
      }
      for (const auto& [k, v] : acc)
        rt.rows.push_back({k.first, static_cast<std::int64_t>(k.second), names[k], std::sqrt(v.first / v.second)});
    }
    // accuracy
    std::vector<double> acc_rmsd(models.size(), std::numeric_limits<double>::quiet_NaN());
    if (reference.connected()) {
      const Structure& ref = *reference;
      const auto keys = atom_keys(ref);
      std::vector<double> mref, rref;
      std::vector<std::size_t> use;
      for (auto r : bb) {
        auto it = keys.find(atom_key(topo.atoms[rows[r]]));
        if (it == keys.end() || ref.models.empty()) continue;
        use.push_back(r);
        const auto& x = ref.models[0][it->second];
        rref.insert(rref.end(), {x[0], x[1], x[2]});
      }
      if (use.size() >= 3)
        for (std::size_t m = 0; m < models.size(); ++m) {
          std::vector<double> q;
          for (auto r : use) q.insert(q.end(), {models[m][3 * r], models[m][3 * r + 1], models[m][3 * r + 2]});
          acc_rmsd[m] = superposed_rmsd(q, rref);
        }
    }
    // violations, Ramachandran, clashes, Cα handedness
    Table mt{{"model", "structure", "energy", "noe_violations_gt_0_5A", "max_violation_A", "rmsd_to_reference_A",
              "accepted", "cdih_violations_gt_5deg"},
             {}};
    std::size_t viol_total = 0, cdih_total = 0, rama_fav = 0, rama_allowed = 0, rama_n = 0, clashes = 0, ca_ok = 0,
                ca_n = 0;
    double viol_max = 0;
    const auto bond_sep = [&] {
      std::vector<std::set<std::size_t>> near(n);
      for (std::size_t i = 0; i < n; ++i) {
        near[i].insert(i);
        for (auto a : dgtopo.neighbours[i]) {
          near[i].insert(a);
          for (auto b2 : dgtopo.neighbours[a]) {
            near[i].insert(b2);
            for (auto c : dgtopo.neighbours[b2]) near[i].insert(c);
          }
        }
      }
      return near;
    }();
    for (std::size_t m = 0; m < models.size(); ++m) {
      const auto& x = models[m];
      const auto v = restraint_violations(p.infos, x, p.restraints, EquivalentSwap::Rings);
      std::size_t nv = 0;
      double vmax = 0;
      for (const auto& rv : v.restraints) {
        nv += rv.violation > 0.5;
        vmax = std::max(vmax, rv.violation);
      }
      viol_total += nv;
      viol_max = std::max(viol_max, vmax);
      for (const auto& [key, r] : at) {
        (void)r;
        if (std::get<2>(key) != "CA" || !ordered.count({std::get<0>(key), std::get<1>(key)})) continue;
        // Named copies, not a structured binding: clang 14 (the fuzz preset) cannot capture one.
        const auto& ch = std::get<0>(key);
        const auto num = std::get<1>(key);
        auto f = [&](int rn, const char* a) {
          auto it = at.find({ch, rn, a});
          return it == at.end() ? SIZE_MAX : it->second;
        };
        const std::size_t cp = f(num - 1, "C"), nn = f(num, "N"), ca = f(num, "CA"), cc = f(num, "C"),
                          nx = f(num + 1, "N");
        if (cp == SIZE_MAX || nn == SIZE_MAX || cc == SIZE_MAX || nx == SIZE_MAX) continue;
        const double deg = 180.0 / std::numbers::pi;
        const double phi = torsion_angle(&x[3 * cp], &x[3 * nn], &x[3 * ca], &x[3 * cc]) * deg;
        const double psi = torsion_angle(&x[3 * nn], &x[3 * ca], &x[3 * cc], &x[3 * nx]) * deg;
        const auto reg = rama_region(p.infos[ca].residue, phi, psi);
        ++rama_n;
        rama_fav += reg == RamaRegion::Favoured;
        rama_allowed += reg == RamaRegion::Allowed;
      }
      for (std::size_t i = 0; i < n; ++i)
        for (std::size_t j = i + 1; j < n; ++j) {
          const double R = vdw_radius(p.infos[i].element) + vdw_radius(p.infos[j].element) - 0.4;
          const double dx = x[3 * i] - x[3 * j];
          if (dx * dx >= R * R) continue;
          const double d2 = dx * dx + (x[3 * i + 1] - x[3 * j + 1]) * (x[3 * i + 1] - x[3 * j + 1]) +
                            (x[3 * i + 2] - x[3 * j + 2]) * (x[3 * i + 2] - x[3 * j + 2]);
          if (d2 >= R * R || bond_sep[i].count(j)) continue;
          if ((p.terms.polar_h[i] && p.terms.acceptor[j]) || (p.terms.polar_h[j] && p.terms.acceptor[i])) continue;
          ++clashes;
        }
      for (const auto& h : hands) {
        ++ca_n;
        const double vol = chiral_volume(&x[3 * h.centre], &x[3 * h.a], &x[3 * h.b], &x[3 * h.c]);
        ca_ok += (vol > 0 ? 1 : -1) == h.sign;
      }
      const auto& d = done[ok[m]].r;
      mt.rows.push_back({static_cast<std::int64_t>(m + 1), static_cast<std::int64_t>(ok[m]), d.energy.total,
                         static_cast<std::int64_t>(nv), vmax, acc_rmsd[m],
                         static_cast<std::int64_t>(accepted_of[ok[m]]), static_cast<std::int64_t>(d.cdih_violations)});
      cdih_total += d.cdih_violations;
    }
    const double nm = static_cast<double>(models.size());
    Table t{{"metric", "value"}, {}};
    auto add = [&](const char* k, Table::Cell v) { t.rows.push_back({std::string(k), std::move(v)}); };
    add("structures", static_cast<std::int64_t>(N));
    add("kept", static_cast<std::int64_t>(M));
    add("failed",
        static_cast<std::int64_t>(N - std::count_if(done.begin(), done.end(), [](const Done& d) { return d.ok; })));
    add("accepted", static_cast<std::int64_t>(n_accepted));
    add("ensemble_ordered_residue_count", static_cast<std::int64_t>(ordered.size()));
    add("precision_backbone_A", precision);
    double acc_mean = 0, acc_best = std::numeric_limits<double>::infinity();
    for (double a : acc_rmsd) acc_mean += a / nm, acc_best = std::min(acc_best, a);
    add("backbone_rmsd_to_reference_mean_A", acc_mean);
    add("backbone_rmsd_to_reference_best_A",
        reference.connected() ? acc_best : std::numeric_limits<double>::quiet_NaN());
    add("violations_gt_0_5A_per_model", static_cast<double>(viol_total) / nm);
    add("ensemble_max_violation_A", viol_max);
    add("cdih_violations_gt_5deg_per_model", static_cast<double>(cdih_total) / nm);
    add("ramachandran_favoured_fraction", rama_n ? static_cast<double>(rama_fav) / static_cast<double>(rama_n) : 0.0);
    add("ramachandran_favoured_or_allowed_fraction",
        rama_n ? static_cast<double>(rama_fav + rama_allowed) / static_cast<double>(rama_n) : 0.0);
    add("clashes_per_model", static_cast<double>(clashes) / nm);
    add("calpha_handedness_correct_fraction", ca_n ? static_cast<double>(ca_ok) / static_cast<double>(ca_n) : 1.0);
    add("energy_lowest", done[ok.front()].r.energy.total);
    add("restraints_left_out", static_cast<std::int64_t>(p.restraints_dropped));
    std::ostringstream m;
    m.precision(3);
    m << M << " of " << N << " structures kept: precision " << precision << " Å";
    if (reference.connected()) m << ", backbone RMSD to reference " << acc_mean << " Å (best " << acc_best << ")";
    m << ", " << static_cast<double>(viol_total) / nm << " violations > 0.5 Å per model";
    ctx.info(m.str());
    ctx.record("precision_backbone_A", precision);
    if (reference.connected()) ctx.record("backbone_rmsd_to_reference_mean_A", acc_mean);
    ensemble.set(rows_structure(topo, rows, models, "distgeom.ensemble"));
    report.set(std::move(t));
    rmsf.set(std::move(rt));
    model_table.set(std::move(mt));
  }
};

}  // namespace

void register_anneal_nodes(PluginRegistrar& r) {
  r.add_node<AnnealNode>();
  r.add_node<EnsembleNode>();
}

}  // namespace gemflow::distgeom
