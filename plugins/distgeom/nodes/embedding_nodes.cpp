// Distance-geometry nodes from bounds to a refined structure: distgeom.bounds,
// bounds_from_structure, metrize, metric_matrix, embed, refine. Thin adapters over algo/.
#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdint>
#include <iomanip>
#include <limits>
#include <map>
#include <memory>
#include <set>
#include <span>
#include <sstream>
#include <string>

#include <gemflow/distgeom/bounds.hpp>
#include <gemflow/distgeom/embedding.hpp>
#include <gemflow/distgeom/geometry.hpp>
#include <gemflow/distgeom/metrize.hpp>
#include <gemflow/distgeom/refine.hpp>
#include <gemflow/distgeom/smoothing.hpp>
#include <gemflow/distgeom/trials.hpp>
#include <gemflow/node.hpp>
#if GEMFLOW_DISTGEOM_HAVE_CUDA
#include <gemflow/distgeom/embedding_cuda.hpp>
#endif
#include <gemflow/types.hpp>

#include "bounds_text.hpp"
#include "dg_convert.hpp"
#include "param_groups.hpp"
#include "register.hpp"

namespace gemflow::distgeom {
namespace {
using namespace nodes;

DistanceBounds to_bounds(const BoundsResult& b, const Structure& s) {
  DistanceBounds d;
  const std::size_t n = b.n;
  d.lower = Matrix<double>(n, n, b.lower);
  d.upper = Matrix<double>(n, n, b.upper);
  d.restraint = Matrix<int>(n, n, b.restraint);
  d.atom_index = b.atoms;
  for (auto i : b.atoms) d.labels.push_back(atom_label(s.atoms[i]));
  return d;
}

const char* reason_text(SkipReason r) {
  switch (r) {
    case SkipReason::Unresolved: return "atoms not found in the structure";
    case SkipReason::Hydrogen: return "involves a hydrogen dropped by 'hydrogens'";
    case SkipReason::Ambiguous: return "ambiguous";
    case SkipReason::SameAtom: return "both sides are the same atom";
  }
  return "";
}

// Resolves a node's `device`. `no_cuda` empty: the node has a CUDA path for its parameters, so
// DeviceParam::resolve decides (auto → cuda:0 when present, logged; an explicit cuda / cuda:N
// that is absent → DeviceError; device_used recorded), as distgeom.triangle_smoothing does.
// `no_cuda` = why these parameters have no CUDA path (it names the parameter): `auto` runs on the
// CPU and logs why; an explicit cuda / cuda:N (node or --device override) fails loudly with that
// reason, never a silent CPU fallback.
Device resolve_node_device(NodeContext& ctx, const DeviceParam& param, const std::string& no_cuda = {}) {
  if (no_cuda.empty()) return param.resolve(ctx);
  const std::string text = ctx.device_override().empty() ? param.requested() : ctx.device_override();
  const auto req = DeviceRequest::parse(text);
  if (req && req->kind == DeviceRequest::Kind::Cuda)
    throw DeviceError("device '" + text + "' requested, but " + no_cuda + "; use device: cpu or auto");
  if (req && req->kind == DeviceRequest::Kind::Auto)
    ctx.info("device auto: " + (cuda_device_count() > 0 ? no_cuda : std::string("no CUDA device")) + ", using cpu");
  ctx.record("device_used", std::string("cpu"));
  return Device{};
}

// A distance matrix must be finite, ≥ 0, zero on the diagonal and symmetric to a few ulps
// (|D_ij − D_ji| ≤ 8ε·max(D_ij, D_ji)); InputError naming the first offending entry (0-based).
void check_distances(const Matrix<double>& d) {
  const std::size_t n = d.rows();
  const auto where = [&](std::size_t i, std::size_t j) {
    std::ostringstream s;
    s << "input 'distances' (" << i << ", " << j << ") = " << d(i, j) << " Å";
    return s.str();
  };
  for (std::size_t i = 0; i < n; ++i)
    for (std::size_t j = 0; j < n; ++j) {
      const double v = d(i, j);
      if (!std::isfinite(v)) throw InputError(where(i, j) + " is not finite");
      if (v < 0) throw InputError(where(i, j) + " is negative");
      if (i == j && v != 0) throw InputError(where(i, j) + ": the diagonal of a distance matrix must be 0");
      if (j > i && std::abs(v - d(j, i)) > 8 * std::numeric_limits<double>::epsilon() * std::max(v, d(j, i))) {
        std::ostringstream s;
        s << where(i, j) << " but (" << j << ", " << i << ") = " << d(j, i) << " Å: not symmetric";
        throw InputError(s.str());
      }
    }
}

#if GEMFLOW_DISTGEOM_HAVE_CUDA
// Runs `f` (GPU work) and turns a CUDA failure into a DeviceError naming the node and device.
template <class F>
auto on_gpu(const Device& dev, F&& f) {
  try {
    return f();
  } catch (const cuda::CudaError& e) {
    throw DeviceError(dev.str() + ": " + e.what());
  }
}
#endif

// Elements without tabulated radii: a warning, once per node.
void warn_untabulated(NodeContext& ctx, const std::vector<AtomInfo>& infos) {
  std::vector<std::string> el;
  el.reserve(infos.size());
  for (const auto& a : infos) el.push_back(a.element);
  if (auto w = text::untabulated_radii_warning(el); !w.empty()) ctx.warn(w);
}

// Why method: eigen stays on the CPU (embedding_cuda.hpp explains the choice).
const std::string kEigenNoCuda =
    "parameter 'method' = eigen has no CUDA path (the top eigenpairs are a CPU Lanczos iteration; "
    "method: cholesky runs on the GPU)";

#if !GEMFLOW_DISTGEOM_HAVE_CUDA
[[noreturn]] void no_cuda_build(const Device& dev) {
  throw DeviceError("device " + dev.str() + " requested, but the distgeom plugin was built without CUDA");
}
#endif

// ---------------------------------------------------------------------------------------------
class BoundsNode final : public Node {
 public:
  enum class Hydrogens { All, Restrained, None };
  enum class BondSource { Perceive, Structure };
  static NodeInfo info() {
    return {.id = "distgeom.bounds",
            .version = 1,
            .title = "Distance bounds from restraints",
            .category = "Distance geometry",
            .doc =
                "Distance bounds (Å) for distance geometry from a reference model's covalent geometry and NMR "
                "distance restraints. The reference is either a deposited model or distgeom.topology's molecule "
                "built from the sequence (template geometry; then bonds: structure and free_proline_omega: true).\n"
                "Inputs: structure (the model `model` supplies covalent geometry only); restraints (atoms "
                "resolved against that structure).\n"
                "Output: bounds, n×n lower/upper with labels \"A:12:ALA:CA\", atom_index into the structure "
                "and the restraint id per pair.\n"
                "Rules: bonds perceived by distance (covalent radii, Cordero 2008); 1-2 and 1-3 pairs = model "
                "distance ± tolerance_12/13; all pairs inside a peptide plane (C, N and their bonded atoms: "
                "CA(i), O(i), CA(i+1), H(i+1)/CD(i+1)) = model ± tolerance_plane. No other distance is taken "
                "from the model. A restraint with one atom pair: upper = restraint upper + pseudo correction, "
                "lower = max(restraint lower, vdW floor). A restraint expanding to N > 1 pairs (pseudo-atoms, "
                "wildcards) bounds the r^-6 sum: each pair gets the valid bound (upper + correction)·N^(1/6) + "
                "group spreads, and distgeom.refine applies the exact sum. Ambiguous restraints (several "
                "alternatives) bound no single pair: they are left out of the bounds and applied by "
                "distgeom.refine (counted in the log and provenance). Other pairs: lower = vdW floor "
                "(Bondi 1964 radii sum × vdw_scale; × vdw_scale_14 three bonds apart; polar H to N/O: "
                "hbond_floor), upper = diameter.",
            .errors =
                "Skipped restraints (atoms not found, hydrogens dropped), restraints on covalently fixed pairs "
                "and restraints whose pairs other restraints bound too (intersected) are listed in warnings "
                "with their file:line (the first 5 and a count). Bounds that are not finite or beyond 1000 Å "
                "are an error naming the restraint; so is a set of restraints none of which applies.",
            .memory = "O(n²) on the host (lower, upper and restraint ids); no device memory.",
            .determinism = "Deterministic.",
            .references =
                "Covalent radii: Cordero et al., Dalton Trans. (2008) 2832; van der Waals radii: Bondi, "
                "J. Phys. Chem. 68 (1964) 441; r^-6 sums: Nilges, Proteins 17 (1993) 297."};
  }
  Input<Structure> structure{this, "structure", "Reference structure: covalent geometry of model `model`"};
  Input<RestraintSet> restraints{this, "restraints", "Distance restraints resolved against `structure`"};
  Output<DistanceBounds> bounds{this, "bounds", "Lower/upper bounds (Å), not yet triangle-smoothed"};
  Param<std::int64_t> model{this, "model", 1, {.min = 1, .doc = "Model (1-based) used for covalent geometry"}};
  Choice<Hydrogens> hydrogens{
      this,
      "hydrogens",
      Hydrogens::All,
      {{Hydrogens::All, "all"}, {Hydrogens::Restrained, "restrained"}, {Hydrogens::None, "none"}},
      {.doc = "Hydrogens kept: all; restrained (only H named by a restraint, plus amide H); "
              "none (restraints on H are then skipped)"}};
  Param<double> vdw_scale{this, "vdw_scale", 0.8, {.min = 0, .max = 1.5, .doc = "Lower bound = scale × vdW radii sum"}};
  Param<double> vdw_scale_14{
      this, "vdw_scale_14", 0.7, {.min = 0, .max = 1.5, .doc = "Scale for pairs three bonds apart"}};
  Param<double> hbond_floor{this, "hbond_floor", 1.5, {.min = 0, .unit = "Å", .doc = "Floor between polar H and N/O"}};
  Param<double> tolerance_12{this, "tolerance_12", 0.01, {.min = 0, .unit = "Å", .doc = "± on bonded distances"}};
  Param<double> tolerance_13{this, "tolerance_13", 0.02, {.min = 0, .unit = "Å", .doc = "± on 1-3 distances"}};
  Param<double> tolerance_plane{
      this, "tolerance_plane", 0.05, {.min = 0, .unit = "Å", .doc = "± on peptide-plane distances"}};
  Param<double> bond_tolerance{
      this, "bond_tolerance", 0.45, {.min = 0, .unit = "Å", .doc = "Bond if d < r_cov sum + this"}};
  Param<double> diameter{this,
                         "diameter",
                         0.0,
                         {.min = 0,
                          .unit = "Å",
                          .doc = "Upper bound of unrestrained pairs; 0 = extended chain length "
                                 "(3.8 Å per residue + 10 Å)"}};
  Choice<BondSource> bonds{this,
                           "bonds",
                           BondSource::Perceive,
                           {{BondSource::Perceive, "perceive"}, {BondSource::Structure, "structure"}},
                           {.doc = "perceive: bonds by distance in model `model`; structure: the structure's bond list "
                                   "(distgeom.topology's), required non-empty"}};
  Param<bool> free_proline_omega{this,
                                 "free_proline_omega",
                                 false,
                                 {.doc = "Leave the peptide planes before prolines out of the bounds (their 1-4 "
                                         "distances differ between cis and trans); use with a template model"}};

  void execute(NodeContext& ctx) override {
    const auto& s = *structure;
    const auto xyz = model_xyz(s, model.value());
    BoundsOptions o;
    if (bonds.value() == BondSource::Structure) {
      if (s.bonds.empty())
        throw InputError(
            "parameter 'bonds' = structure, but the structure has no bond list (link distgeom.topology's "
            "structure, or use bonds: perceive)");
      o.bonds = s.bonds;
    }
    o.free_proline_omega = free_proline_omega.value();
    o.hydrogens = hydrogens.value() == Hydrogens::All    ? HydrogenPolicy::All
                  : hydrogens.value() == Hydrogens::None ? HydrogenPolicy::None
                                                         : HydrogenPolicy::Restrained;
    o.vdw_scale = vdw_scale.value();
    o.vdw_scale_14 = vdw_scale_14.value();
    o.hbond_floor = hbond_floor.value();
    o.tolerance_12 = tolerance_12.value();
    o.tolerance_13 = tolerance_13.value();
    o.tolerance_plane = tolerance_plane.value();
    o.bond_tolerance = bond_tolerance.value();
    o.diameter = diameter.value();
    const auto infos = atom_infos(s);
    warn_untabulated(ctx, infos);
    const RestraintSet& set = *restraints;
    // Bounds the solvers cannot use are refused here, at the restraint's origin, not later without one.
    for (const auto& r : set.restraints)
      if (!std::isfinite(r.lower) || !std::isfinite(r.upper) || !std::isfinite(r.pseudo_correction) || r.lower < 0 ||
          r.upper > 1000.0)
        throw InputError(r.origin + ": restraint " + std::to_string(r.id) + " has bounds [" + std::to_string(r.lower) +
                         ", " + std::to_string(r.upper) + "] Å: not finite, negative or beyond 1000 Å");
    const auto rs = pair_restraints(set);
    BoundsResult b;
    try {
      b = restraint_bounds(infos, xyz, rs, o);
    } catch (const std::runtime_error& e) {
      throw InputError(e.what());
    }
    // QA: with the restraints not resolved against a structure every one was skipped and the run
    // went on to a structure from covalent geometry alone, exit 0
    const std::size_t unresolved = static_cast<std::size_t>(std::count_if(
        b.skipped.begin(), b.skipped.end(), [](const auto& k) { return k.second == SkipReason::Unresolved; }));
    if (!b.skipped.empty() && unresolved == b.skipped.size() && b.restraints_used == 0 && b.grouped.empty() &&
        b.ambiguous.empty())
      throw InputError("none of the " + std::to_string(b.skipped.size()) +
                       " restraints names atoms of the structure (all skipped: atoms not found): resolve them "
                       "against it, e.g. link the structure into the restraints reader (read.structure -> "
                       "restraints.structure), and check that chain and residue numbering match");
    ctx.info("bounds: " + std::to_string(b.n) + " atoms, " + std::to_string(b.covalent_pairs) + " covalent pairs, " +
             std::to_string(b.restraints_used) + " restraints used (" + std::to_string(b.grouped.size()) +
             " group: a pseudo-atom or wildcard with several atom pairs, " + std::to_string(b.ambiguous.size()) +
             " ambiguous: several assignment alternatives → refine), " + std::to_string(b.skipped.size()) +
             " skipped, diameter " + std::to_string(b.diameter) + " Å");
    if (!b.skipped.empty()) {
      // each named by its file:line, as the other warnings of the node (a user's self-restraint
      // was "1 (both sides are the same atom)", no location)
      std::map<int, std::string> where;
      for (const auto& r : set.restraints) where.emplace(r.id, r.origin);
      std::ostringstream m;
      m << b.skipped.size() << " restraint(s) skipped:";
      for (std::size_t k = 0; k < b.skipped.size() && k < 20; ++k) {
        const auto it = where.find(b.skipped[k].first);
        m << (k ? "; " : " ") << (it != where.end() && !it->second.empty() ? it->second + " " : std::string())
          << "(restraint " << b.skipped[k].first << ", " << reason_text(b.skipped[k].second) << ")";
      }
      if (b.skipped.size() > 20) m << " ...";
      ctx.warn(m.str());
    }
    const auto origin = [&](std::size_t k) {
      const auto& r = set.restraints[k];
      return r.origin + " (restraint " + std::to_string(r.id) + ")";
    };
    constexpr std::size_t kListed = 5;
    const auto more = [&](std::size_t total) {
      return total > kListed ? " (and " + std::to_string(total - kListed) + " more)" : std::string();
    };
    if (!b.covalent_conflicts.empty()) {
      std::string list;
      for (std::size_t k = 0; k < b.covalent_conflicts.size() && k < kListed; ++k)
        list += (k ? "; " : "") + origin(b.covalent_conflicts[k]);
      ctx.warn(std::to_string(b.covalent_conflicts.size()) +
               " restraint(s) name covalently fixed pairs (bonded, 1-3 or peptide-plane); the covalent distance "
               "was kept: " +
               list + more(b.covalent_conflicts.size()));
    }
    if (!b.intersected.empty()) {
      std::string list;
      for (std::size_t k = 0; k < b.intersected.size() && k < kListed; ++k)
        list += (k ? "; " : "") + origin(b.intersected[k].first) + " with " + origin(b.intersected[k].second);
      ctx.warn(std::to_string(b.intersected.size()) +
               " restraint(s) bound atom pairs that earlier restraints bound too (duplicates or overlaps); the "
               "bounds were intersected: " +
               list + more(b.intersected.size()));
    }
    ctx.record("restraints_intersected", static_cast<std::int64_t>(b.intersected.size()));
    ctx.record("restraints_covalent_conflicts", static_cast<std::int64_t>(b.covalent_conflicts.size()));
    ctx.record("atoms", static_cast<std::int64_t>(b.n));
    ctx.record("restraints_used", static_cast<std::int64_t>(b.restraints_used));
    ctx.record("restraints_skipped", static_cast<std::int64_t>(b.skipped.size()));
    ctx.record("restraints_ambiguous", static_cast<std::int64_t>(b.ambiguous.size()));
    ctx.record("restraints_grouped", static_cast<std::int64_t>(b.grouped.size()));
    ctx.record("diameter", b.diameter);
    bounds.set(to_bounds(b, s));
  }
};

// ---------------------------------------------------------------------------------------------
class BoundsFromStructureNode final : public Node {
 public:
  static NodeInfo info() {
    return {.id = "distgeom.bounds_from_structure",
            .version = 1,
            .title = "Distance bounds from a structure",
            .category = "Distance geometry",
            .doc =
                "Bounds from the distances of one model, for reconstruction tests: every pair nearer than "
                "`cutoff` gets [d − tolerance, d + tolerance]; every other pair the diameter as upper bound "
                "and, as lower bound, cutoff − tolerance (`unlisted_lower: cutoff`: knowing every pair under "
                "the cutoff also says every other pair is not under it) or the vdW floor (`vdw`: Bondi radii × "
                "vdw_scale, at most the cutoff).\n"
                "Input: structure. Output: bounds (labels, atom_index).",
            .errors =
                "A model number beyond the structure's models; a tolerance not below the cutoff with "
                "unlisted_lower: cutoff (a parameter rule, reported before a run).",
            .memory = "O(n²) on the host; no device memory.",
            .determinism = "Deterministic.",
            .references = "van der Waals radii: Bondi, J. Phys. Chem. 68 (1964) 441.",
            .rules = {{.param = "tolerance",
                       .when = {std::string("cutoff")},
                       .other = "cutoff",
                       .why = "'unlisted_lower: cutoff' gives every pair beyond the cutoff the lower bound cutoff − "
                              "tolerance",
                       .compare = ParamCompare::Less,
                       .if_param = "unlisted_lower"}}};
  }
  Input<Structure> structure{this, "structure", "Structure whose model supplies the distances"};
  Output<DistanceBounds> bounds{this, "bounds", "Lower/upper bounds (Å)"};
  Param<std::int64_t> model{this, "model", 1, {.min = 1, .doc = "Model (1-based)"}};
  Param<double> cutoff{this, "cutoff", 5.0, {.min = 0, .unit = "Å", .doc = "Pairs nearer than this are known"}};
  Param<double> tolerance{this, "tolerance", 0.05, {.min = 0, .unit = "Å", .doc = "± around known distances"}};
  Param<bool> hydrogens{this, "hydrogens", false, {.doc = "Keep hydrogens (false: heavy atoms only)"}};
  Choice<UnlistedLower> unlisted_lower{this,
                                       "unlisted_lower",
                                       UnlistedLower::Cutoff,
                                       {{UnlistedLower::Cutoff, "cutoff"}, {UnlistedLower::Vdw, "vdw"}},
                                       {.doc = "Lower bound of pairs at or beyond the cutoff: cutoff = cutoff − "
                                               "tolerance; vdw = the vdW floor only"}};
  Param<double> vdw_scale{this, "vdw_scale", 0.8, {.min = 0, .max = 1.5, .doc = "Floor = scale × vdW radii sum"}};
  Param<double> diameter{this, "diameter", 0.0, {.min = 0, .unit = "Å", .doc = "0 = extended chain length"}};

  void execute(NodeContext& ctx) override {
    const auto& s = *structure;
    const auto xyz = model_xyz(s, model.value());
    StructureBoundsOptions o;
    o.cutoff = cutoff.value();
    o.tolerance = tolerance.value();
    o.hydrogens = hydrogens.value();
    o.vdw_scale = vdw_scale.value();
    o.diameter = diameter.value();
    o.unlisted_lower = unlisted_lower.value();
    if (o.unlisted_lower == UnlistedLower::Cutoff && o.tolerance >= o.cutoff)
      throw InputError("parameter 'tolerance' = " + std::to_string(o.tolerance) + " Å is not below 'cutoff' = " +
                       std::to_string(o.cutoff) + " Å, so 'unlisted_lower: cutoff' gives no lower bound");
    const auto infos = atom_infos(s);
    warn_untabulated(ctx, infos);
    const auto b = structure_bounds(infos, xyz, o);
    ctx.info(std::to_string(b.n) + " atoms, " + std::to_string(b.covalent_pairs) + " pairs under " +
             std::to_string(o.cutoff) + " Å");
    ctx.record("known_pairs", static_cast<std::int64_t>(b.covalent_pairs));
    bounds.set(to_bounds(b, s));
  }
};

// ---------------------------------------------------------------------------------------------
class MetrizeNode final : public Node {
 public:
  static NodeInfo info() {
    return {.id = "distgeom.metrize",
            .version = 1,
            .title = "Metrize (random distances)",
            .category = "Distance geometry",
            .doc =
                "Draws a distance matrix inside triangle-smoothed bounds.\n"
                "Input: bounds (smoothed). Output: distances, n×n Matrix<f64> (Å).\n"
                "Methods: none = each pair uniform in [L, U], O(n²) (milliseconds); partial = the distances of "
                "`atoms` random atoms are drawn one by one, each pick tightening the triangles through its "
                "atom, and the whole matrix is re-smoothed after each atom (triangle smoothing, O(n³) per "
                "atom: about 1-2 s per atom for n = 1500 on 2 CPU cores); the rest as for none. Full "
                "metrization (re-smoothing after every pick) would be O(n⁵) and is not offered.",
            .errors = "Re-smoothing after a pick that finds inconsistent bounds names the atom pair.",
            .memory = "The n×n distances and a copy of the bounds (host); no device memory (CPU).",
            .determinism = "The same seed gives the same matrix on every platform.",
            .references =
                "Havel, Kuntz & Crippen, Bull. Math. Biol. 45 (1983) 665; Havel, Biopolymers 29 (1990) 1565 "
                "(partial metrization).",
            .stochastic = true};
  }
  Input<DistanceBounds> bounds{this, "bounds", "Triangle-smoothed bounds"};
  Output<Matrix<double>> distances{this, "distances", "Distances (Å), n×n, symmetric"};
  MetrizeParams metrization{this};  // method, atoms
  SeedParam seed{this};

  void execute(NodeContext& ctx) override {
    const auto& b = *bounds;
    const std::size_t n = b.size();
    MetrizeOptions o = metrization.options();
    o.seed = seed.value();
    Resmoother resmooth = [&](std::span<double> lo, std::span<double> up, std::size_t m) {
      SmoothingOptions so;
      so.progress = [&](double) { return ctx.cancelled(); };
      const auto rep = smooth_bounds(lo, up, m, so);
      if (rep.cancelled) throw Cancelled();
      if (!rep.consistent)
        throw Error("re-smoothing after a pick found inconsistent bounds at (" + b.labels.at(rep.i) + ", " +
                    b.labels.at(rep.j) + ")");
    };
    std::vector<double> d;
    try {
      d = metrize(b.lower.span(), b.upper.span(), n, o, resmooth, [&](double f) {
        ctx.progress(f);
        return !ctx.cancelled();
      });
    } catch (const std::runtime_error& e) {
      if (ctx.cancelled()) throw Cancelled();
      throw InputError(e.what());
    }
    distances.set(Matrix<double>(n, n, std::move(d)));
  }
};

// ---------------------------------------------------------------------------------------------
class MetricMatrixNode final : public Node {
 public:
  static NodeInfo info() {
    return {.id = "distgeom.metric_matrix",
            .version = 1,
            .title = "Metric matrix",
            .category = "Distance geometry",
            .doc =
                "Crippen–Havel metric matrix about the centroid: G_ij = (D_i0² + D_j0² − D_ij²)/2 with "
                "D_i0² = (1/n)Σ_j D_ij² − (1/n²)Σ_{j<k} D_jk² (Crippen & Havel 1988, ch. 6).\n"
                "Input: distances (n×n, Å). Output: metric (n×n, Å²); G = X Xᵀ for real centred points.\n"
                "Device: auto | cpu | cuda | cuda:N (auto takes cuda:0 when present and logs it). CUDA "
                "(embedding_cuda.hpp) performs the CPU's operations in its order: the same matrix, bit for "
                "bit on x86-64.",
            .errors =
                "Distances that are not a distance matrix (named entry); squared distances beyond the double "
                "range. A warning for distances whose squares underflow.",
            .memory = "Host: the n×n result. Device (cuda): 2 n² + n doubles.",
            .determinism = "Deterministic; CPU and CUDA give the same matrix bit for bit on x86-64.",
            .references = "Crippen & Havel, Distance Geometry and Molecular Conformation (1988), ch. 6."};
  }
  Input<Matrix<double>> distances{this, "distances", "Distance matrix (Å), n×n"};
  Output<Matrix<double>> metric{this, "metric", "Metric matrix (Å²), n×n"};
  DeviceParam device{this, "auto"};
  void execute(NodeContext& ctx) override {
    const Device dev = resolve_node_device(ctx, device);
    const auto& d = *distances;
    if (d.rows() != d.cols())
      throw InputError("input 'distances' is " + std::to_string(d.rows()) + "×" + std::to_string(d.cols()) +
                       ", not square");
    check_distances(d);
    Matrix<double> g(d.rows(), d.rows());
    if (dev.is_cuda()) {
#if GEMFLOW_DISTGEOM_HAVE_CUDA
      on_gpu(dev, [&] {
        cuda::GpuEmbedder gpu(dev.index);
        gpu.metric_matrix(d.span(), d.rows(), g.span());
        return 0;
      });
#else
      no_cuda_build(dev);
#endif
    } else {
      metric_matrix(d.span(), d.rows(), g.span());
    }
    // finite distances whose squares (or their sums) pass the double range: an error here, not
    // NaN/Inf for the next node to find (QA: distances of 1e160 Å gave "done")
    for (std::size_t i = 0; i < g.rows(); ++i)
      for (std::size_t j = 0; j < g.cols(); ++j)
        if (!std::isfinite(g(i, j))) {
          double dmax = 0.0;
          for (double v : d.span()) dmax = std::max(dmax, v);
          std::ostringstream m;
          m << "the squared distances overflow double precision (the largest distance is " << dmax
            << " Å; their squares and sums must stay below 1.8e308), so G(" << i << ", " << j << ") is not finite";
          throw InputError(m.str());
        }
    // and distances whose squares underflow to 0 (below about 1.5e-154 Å) lose them (QA)
    for (std::size_t i = 0; i < d.rows(); ++i)
      for (std::size_t j = 0; j < i; ++j)
        if (d(i, j) != 0 && d(i, j) * d(i, j) < std::numeric_limits<double>::min()) {
          std::ostringstream w;
          w << "input 'distances' has D(" << i << ", " << j << ") = " << d(i, j)
            << " Å, whose square is below the double range: the metric matrix loses it (scale the distances)";
          ctx.warn(w.str());
          i = d.rows();
          break;
        }
    metric.set(std::move(g));
  }
};

// CA centres (N, C, CB around CA) of the bounds atoms with the handedness of the reference.
std::vector<ChiralCheck> ca_centres(const DistanceBounds& b, const Structure& s, const std::vector<double>& xyz) {
  std::map<std::tuple<std::string, int, std::string, std::string>, std::size_t> row;
  for (std::size_t r = 0; r < b.atom_index.size(); ++r) {
    const auto& a = s.atoms.at(b.atom_index[r]);
    row[{a.chain, a.residue_number, a.insertion, a.name}] = r;
  }
  std::vector<ChiralCheck> out;
  for (std::size_t r = 0; r < b.atom_index.size(); ++r) {
    const auto& a = s.atoms[b.atom_index[r]];
    if (a.name != "CA") continue;
    auto f = [&](const char* nm) {
      auto it = row.find({a.chain, a.residue_number, a.insertion, nm});
      return it == row.end() ? SIZE_MAX : it->second;
    };
    const std::size_t n = f("N"), c = f("C"), cb = f("CB");
    if (n == SIZE_MAX || c == SIZE_MAX || cb == SIZE_MAX) continue;
    auto p = [&](std::size_t rr) { return &xyz[3 * b.atom_index[rr]]; };
    const double v = chiral_volume(p(r), p(n), p(c), p(cb));
    out.push_back({r, n, c, cb, v > 0 ? 1 : -1});
  }
  return out;
}

void check_bounds_structure(const DistanceBounds& b, const Structure& s) {
  for (auto i : b.atom_index)
    if (i >= s.atoms.size())
      throw InputError("the bounds refer to atom " + std::to_string(i) + " but the structure has " +
                       std::to_string(s.atoms.size()) + " atoms (not the same structure?)");
}

// What the refinement needs beside the bounds: covalent centres of the bounds atoms with the
// reference's volumes, and r^-6 sum terms of the restraints (nullptr: none).
struct RefineInputs {
  Topology topology;
  std::vector<ChiralTerm> chirals;
  std::vector<AmbiguousTerm> sums;
  std::size_t skipped = 0;
};

RefineInputs refine_inputs(const DistanceBounds& b, const Structure& s, const std::vector<double>& xyz,
                           const RestraintSet* restraints) {
  RefineInputs in;
  std::vector<AtomInfo> infos;
  std::vector<double> sub;
  for (auto i : b.atom_index) {
    const auto& a = s.atoms[i];
    infos.push_back({a.element, a.name, a.residue, a.chain, a.residue_number});
    sub.insert(sub.end(), {xyz[3 * i], xyz[3 * i + 1], xyz[3 * i + 2]});
  }
  in.topology = perceive_topology(infos, sub);
  for (const auto& c : in.topology.centres)
    in.chirals.push_back(
        {c[0], c[1], c[2], c[3], chiral_volume(&sub[3 * c[0]], &sub[3 * c[1]], &sub[3 * c[2]], &sub[3 * c[3]])});
  if (restraints) {
    std::vector<std::size_t> row_of(s.atoms.size(), SIZE_MAX);
    for (std::size_t r = 0; r < b.atom_index.size(); ++r) row_of[b.atom_index[r]] = r;
    in.sums = sum_terms(*restraints, row_of, &in.skipped);
  }
  return in;
}

// The bounds' atoms (records from `s`) at `coords` (n×3, Å), one model, bonds of `topo`.
Structure refined_structure(const DistanceBounds& b, const Structure& s, const std::vector<double>& coords,
                            const Topology& topo, const char* title) {
  Structure out;
  out.title = title;
  out.models.emplace_back();
  for (std::size_t r = 0; r < b.atom_index.size(); ++r) {
    out.atoms.push_back(s.atoms[b.atom_index[r]]);
    out.models[0].push_back({coords[3 * r], coords[3 * r + 1], coords[3 * r + 2]});
  }
  for (auto [i, j] : topo.bonds) out.bonds.push_back({i, j});
  return out;
}

Table refine_table(const RefineResult& best, std::size_t sums, std::size_t skipped) {
  Table t{{"metric", "value"}, {}};
  t.rows.push_back({std::string("dg_error"), best.error});
  t.rows.push_back({std::string("iterations"), static_cast<std::int64_t>(best.iterations)});
  t.rows.push_back({std::string("upper_violations_gt_0_5A"), static_cast<std::int64_t>(best.upper_violations)});
  t.rows.push_back({std::string("lower_violations_gt_0_5A"), static_cast<std::int64_t>(best.lower_violations)});
  t.rows.push_back({std::string("max_bound_violation_A"), best.max_violation});
  t.rows.push_back({std::string("chiral_wrong"), static_cast<std::int64_t>(best.chiral_wrong)});
  t.rows.push_back({std::string("sum_restraints"), static_cast<std::int64_t>(sums)});
  t.rows.push_back({std::string("sum_restraints_skipped"), static_cast<std::int64_t>(skipped)});
  return t;
}

/// A refined structure that still violates bounds by more than 0.5 Å is not a solution of them
/// (QA: embed_and_refine with rank 20 kept a trial with 24,360 upper violations and said
/// nothing); a well-refined 2KPU model has none (largest 0.44 Å).
void warn_violations(NodeContext& ctx, const RefineResult& r) {
  if (r.upper_violations + r.lower_violations == 0) return;
  std::ostringstream w;
  w << "the refined structure still violates " << r.upper_violations << " upper and " << r.lower_violations
    << " lower bounds by more than 0.5 Å (largest " << r.max_violation << " Å, DG error " << r.error << " after "
    << r.iterations
    << " iterations): it does not satisfy its bounds; more max_iterations or trials, "
       "or a better embedding (rank 0, method eigen), may help";
  ctx.warn(w.str());
}

// ---------------------------------------------------------------------------------------------
// `rank` and `pivot_fraction` belong to the pivoted Cholesky embedding: method eigen would ignore
// them (the rules of distgeom.embed and distgeom.embed_and_refine)
std::vector<ParamRule> cholesky_only_rules() {
  return {{.param = "rank",
           .other = "method",
           .other_value = std::string("eigen"),
           .must = false,
           .why = "rank is the pivoted Cholesky factor's; eigen takes the top eigenpairs"},
          {.param = "pivot_fraction",
           .other = "method",
           .other_value = std::string("eigen"),
           .must = false,
           .why = "the pivots are the Cholesky factor's; eigen has none"}};
}

class EmbedNode final : public Node {
 public:
  static NodeInfo info() {
    return {.id = "distgeom.embed",
            .version = 1,
            .title = "Embed (metric matrix → coordinates)",
            .category = "Distance geometry",
            .doc =
                "Coordinates X (n×dimensions) with G ≈ X Xᵀ.\n"
                "Inputs: metric (n×n, Å²); bounds (for atom identities); structure (optional: reference "
                "model whose Cα centres (N, C, CB around CA; L-amino acids) fix the handedness: when fewer "
                "than half of the embedded centres have the reference sign, the embedding is mirrored).\n"
                "Output: coordinates, Matrix<f64> n×dimensions (Å, centred).\n"
                "Methods: cholesky = pivoted Cholesky of G (linalg, LAPACK dpstf2 steps) to `rank` columns, "
                "then the best rank-`dimensions` approximation of L Lᵀ (rank = dimensions is the classical "
                "embedding on pivot atoms); pivots are restricted to the `pivot_fraction` of atoms with the "
                "tightest bounds (mean U − L over their row of `bounds`: wire the smoothed bounds), the "
                "largest remaining diagonal first among them; eigen = the top eigenpairs (Spectra Lanczos).\n"
                "Device: auto | cpu | cuda | cuda:N. cholesky on CUDA: the pivoted Cholesky (restricted "
                "pivots included) runs on the GPU (linalg GpuCholesky::factor_pivoted, the CPU's pivot and "
                "stopping rules and arithmetic), the k×k eigenproblem and the handedness on the CPU: the "
                "same coordinates to rounding. eigen has no CUDA path: auto runs it on the CPU and logs "
                "why, cuda fails (parameter 'method').",
            .errors =
                "A metric whose size differs from the bounds'; too few positive pivots (names pivot_fraction "
                "when it restricted them); a connected structure without any residue with N, CA, C and CB "
                "among the bounds atoms; rank or pivot_fraction with method eigen (parameter rules, reported "
                "before a run). Warnings: a metric that is not symmetric (the lower triangle is used) or has a "
                "negative diagonal; a pivoted factor that stopped at a negative pivot before `rank` columns; "
                "coordinates whose largest distance exceeds 5× the metric matrix's (recorded as span_ratio: "
                "small pivots of a metric that is not positive semidefinite amplify it).",
            .memory = "Host: the n×n metric and the n×dimensions result. Device (cuda): 2 n² + n·rank doubles.",
            .determinism = "Deterministic; CPU and CUDA agree to rounding.",
            .references = "Crippen & Havel 1988; pivoted Cholesky: LAPACK dpstf2, Higham 1990; Lanczos: Spectra.",
            .rules = cholesky_only_rules()};
  }
  Input<Matrix<double>> metric{this, "metric", "Metric matrix (Å²)"};
  Input<DistanceBounds> bounds{this, "bounds", "Bounds whose atoms the rows are"};
  Input<Structure> structure{this, "structure", "Reference for Cα handedness", PortUse::Optional};
  Output<Matrix<double>> coordinates{this, "coordinates", "Embedded coordinates (Å), n×dimensions"};
  EmbedParams embedding{this};  // method, dimensions, rank, pivot_fraction
  Param<std::int64_t> model{this, "model", 1, {.min = 1, .doc = "Reference model for handedness"}};
  DeviceParam device{this, "auto"};

  void execute(NodeContext& ctx) override {
    const bool cholesky = embedding.cholesky();
    const Device dev = resolve_node_device(ctx, device, cholesky ? std::string() : kEigenNoCuda);
    const auto& g = *metric;
    const auto& b = *bounds;
    const std::size_t n = g.rows();
    if (g.cols() != n || b.size() != n)
      throw InputError("metric is " + std::to_string(g.rows()) + "×" + std::to_string(g.cols()) +
                       " but the bounds have " + std::to_string(b.size()) + " atoms");
    check_metric(ctx, g);
    const auto dim = embedding.dimensions.value();
    const std::size_t rank = embedding.rank.value();
    const double pivot_fraction = embedding.pivot_fraction.value();
    const auto pivots = cholesky && pivot_fraction < 1.0
                            ? tight_atoms(b.lower.span(), b.upper.span(), n, pivot_fraction)
                            : std::vector<unsigned char>{};
    EmbedResult e;
    try {
      if (dev.is_cuda()) {
#if GEMFLOW_DISTGEOM_HAVE_CUDA
        e = on_gpu(dev, [&] {
          cuda::GpuEmbedder gpu(dev.index);
          return gpu.embed(g.span(), n, dim, rank, pivots);
        });
#else
        no_cuda_build(dev);
#endif
      } else {
        e = embed(g.span(), n, dim, embedding.embed_method(), rank, pivots);
      }
    } catch (const DeviceError&) {
      throw;
    } catch (const std::runtime_error& err) {
      std::string m = err.what();
      const auto allowed = std::count(pivots.begin(), pivots.end(), static_cast<unsigned char>(1));
      if (!pivots.empty() && static_cast<std::size_t>(allowed) < n && m.find("positive pivots") != std::string::npos) {
        std::ostringstream h;
        h << " among the " << allowed << " atoms that parameter 'pivot_fraction' = " << pivot_fraction
          << " allows as pivots; a larger pivot_fraction may find more";
        m += h.str();
      }
      throw InputError(m);
    }
    double dmax = 0.0;
    for (std::size_t i = 0; i < n; ++i) dmax = std::max(dmax, std::abs(g(i, i)));
    if (cholesky)
      warn_unreliable_factor(ctx, e, embed_cholesky_columns(n, dim, rank),
                             static_cast<double>(n) * std::numeric_limits<double>::epsilon() * dmax);
    const double span = span_ratio(g, e.coords, dim);
    ctx.record("span_ratio", span);
    if (span > kSpanWarn) {
      std::ostringstream w;
      w.precision(3);
      w << "the embedded coordinates are unreliable: their largest distance is " << span
        << "× the largest distance of the metric matrix";
      if (cholesky)
        w << "; the factor's small pivots amplify the part of the metric matrix that is not positive semidefinite. "
          << (e.rank > dim ? "Use a smaller 'rank' (0 = dimensions) or method eigen" : "Method eigen keeps it");
      else w << ", which is far from positive semidefinite";
      ctx.warn(w.str());
    }
    std::ostringstream m;
    m << "spectrum";
    for (double v : e.spectrum) m << " " << v;
    m << " (next " << e.next << ") Å²; largest distance " << std::fixed << std::setprecision(2) << span
      << "× the metric matrix's";
    if (structure.connected()) {
      const auto& s = *structure;
      check_bounds_structure(b, s);
      const auto xyz = model_xyz(s, model.value());
      const auto centres = ca_centres(b, s, xyz);
      if (centres.empty())
        throw InputError(
            "input 'structure' is connected to fix the handedness, but no residue has "
            "all of N, CA, C and CB among the bounds atoms (" +
            std::to_string(n) + " atoms); keep these atoms in the bounds or leave 'structure' unconnected");
      std::size_t ok = 0;
      const bool flipped = fix_chirality(e.coords, dim, centres, &ok);
      m << "; Cα handedness " << ok << "/" << centres.size() << (flipped ? " after mirroring" : "");
      ctx.record("mirrored", flipped);
    }
    ctx.info(m.str());
    coordinates.set(Matrix<double>(n, dim, std::move(e.coords)));
  }

 private:
  /// Warnings for a metric matrix that cannot be X Xᵀ: not symmetric (the lower triangle is
  /// used), or a negative diagonal (G_ii = |x_i|²).
  static void check_metric(NodeContext& ctx, const Matrix<double>& g) {
    const std::size_t n = g.rows();
    constexpr double eps = std::numeric_limits<double>::epsilon();
    for (std::size_t i = 0; i < n; ++i)
      for (std::size_t j = 0; j < i; ++j) {
        const double x = g(i, j), y = g(j, i);
        const double scale = std::max(std::abs(x) + std::abs(y), std::sqrt(std::abs(g(i, i) * g(j, j))));
        if (std::abs(x - y) > 4.0 * eps * scale) {
          std::ostringstream w;
          w.precision(17);
          w << "input 'metric' is not symmetric: G(" << i << ", " << j << ") = " << x << " but G(" << j << ", " << i
            << ") = " << y << " (0-based); the lower triangle is used";
          ctx.warn(w.str());
          i = n;
          break;
        }
      }
    // below −(rounding): an atom at the centroid gets −1.8e-15 from metric_matrix's sums (QA)
    double dmax = 0.0;
    for (std::size_t i = 0; i < n; ++i) dmax = std::max(dmax, std::abs(g(i, i)));
    const double rounding = 4.0 * static_cast<double>(n) * eps * dmax;
    for (std::size_t i = 0; i < n; ++i)
      if (g(i, i) < -rounding) {
        std::ostringstream w;
        w << "input 'metric' has G(" << i << ", " << i << ") = " << g(i, i)
          << " Å² < 0 on its diagonal, where the metric matrix of points holds |x_i|² ≥ 0: its distances do not "
             "fit in Euclidean space (metrized distances can do that), or it is not a metric matrix";
        ctx.warn(w.str());
        break;
      }
  }
  /// The pivoted Cholesky embedding of a G that is not positive semidefinite (metrized distances
  /// that do not fit in Euclidean space): a warning when the factor stopped at a negative pivot
  /// short of the k columns asked for. For any method, the embedding's largest distance against
  /// the largest distance of G (d_ij² = G_ii + G_jj − 2 G_ij) is recorded and logged ("span"), and
  /// a warning comes beyond kSpanWarn: small pivots of an indefinite Schur complement amplify it
  /// (QA: 2KPU bounds of 8 Å, rank 20: 3549 Å against 123 Å; rank = dimensions: about 3×;
  /// eigen: 1.1×).
  static constexpr double kSpanWarn = 5.0;
  static double span_ratio(const Matrix<double>& g, const std::vector<double>& x, std::size_t dim) {
    const std::size_t n = g.rows();
    double din = 0.0, dout = 0.0;
    for (std::size_t i = 0; i < n; ++i)
      for (std::size_t j = 0; j < i; ++j) {
        din = std::max(din, g(i, i) + g(j, j) - 2.0 * g(i, j));
        double s = 0.0;
        for (std::size_t c = 0; c < dim; ++c) {
          const double dc = x[i * dim + c] - x[j * dim + c];
          s += dc * dc;
        }
        dout = std::max(dout, s);
      }
    return din > 0 ? std::sqrt(dout / din) : 1.0;
  }
  static void warn_unreliable_factor(NodeContext& ctx, const EmbedResult& e, std::size_t asked, double rounding) {
    ctx.record("cholesky_rank", static_cast<std::int64_t>(e.rank));
    if (e.rank < asked && e.next_pivot < -rounding) {
      std::ostringstream w;
      w << "the pivoted Cholesky factor stopped at " << e.rank << " of the " << asked << " columns asked for: the next "
        << "pivot is " << e.next_pivot << " Å² < 0, so the metric matrix is not positive semidefinite (the "
        << "distances do not fit in Euclidean space)";
      ctx.warn(w.str());
    }
  }
};

// ---------------------------------------------------------------------------------------------
class RefineNode final : public Node {
 public:
  static NodeInfo info() {
    return {.id = "distgeom.refine",
            .version = 1,
            .title = "Refine (DG error, L-BFGS)",
            .category = "Distance geometry",
            .doc =
                "Minimises the distance-geometry error (Crippen & Havel 1988; Havel 1991): "
                "Σ (d²/U² − 1)² over d > U, Σ (2L²/(L² + d²) − 1)² over d < L, w_chiral Σ (V − V₀)² over "
                "the tetrahedral and planar centres of the reference model (V₀ its volumes: covalent "
                "stereochemistry, incl. L-Cα), and r^-6 sums (Nilges 1993) for every restraint that expands "
                "to several atom pairs (pseudo-atoms, wildcards, ambiguous). L-BFGS (liblbfgs); a 4D input is "
                "squeezed to 3D by a rising penalty on the 4th coordinate.\n"
                "Inputs: coordinates (n×3 or n×4), bounds (unsmoothed: explicit pairs are those below the "
                "diameter), structure (reference: atom records and centres), restraints (optional).\n"
                "Outputs: structure (the bounds' atoms, one model), report (Table: metric, value).\n"
                "`mirror_trial`: also refines the mirror image and keeps the lower error (the handedness of "
                "a metrized embedding is close to random; the error decides, not the reference).\n"
                "Warns when the refined structure still violates bounds by more than 0.5 Å.",
            .errors =
                "Coordinates that are not n×3 or n×4 for the bounds' n atoms; bounds that refer to atoms the "
                "structure does not have; a model number beyond the structure's models.",
            .memory = "A few n×n arrays of the bounds and the pair lists (host); no device memory (CPU).",
            .determinism = "Deterministic.",
            .references =
                "Crippen & Havel 1988; Havel 1991; r^-6 sums: Nilges, Proteins 17 (1993) 297; L-BFGS: "
                "liblbfgs (Nocedal 1980)."};
  }
  Input<Matrix<double>> coordinates{this, "coordinates", "Embedded coordinates (Å), n×3 or n×4"};
  Input<DistanceBounds> bounds{this, "bounds", "Bounds (as built, before smoothing)"};
  Input<Structure> structure{this, "structure", "Reference structure: atom records and chiral centres"};
  Input<RestraintSet> restraints{this, "restraints", "Restraints for the r^-6 sum terms", PortUse::Optional};
  Output<Structure> refined{this, "structure", "Refined structure (bounds atoms, one model)"};
  Output<Table> report{this, "report", "Final error and violation counts"};
  RefineParams refinement{this};  // max_iterations, w_chiral, mirror_trial
  Param<std::int64_t> model{this, "model", 1, {.min = 1, .doc = "Reference model for chiral volumes"}};

  void execute(NodeContext& ctx) override {
    const auto& x = *coordinates;
    const auto& b = *bounds;
    const auto& s = *structure;
    const std::size_t n = b.size();
    if (x.rows() != n || (x.cols() != 3 && x.cols() != 4))
      throw InputError("coordinates are " + std::to_string(x.rows()) + "×" + std::to_string(x.cols()) + ", expected " +
                       std::to_string(n) + "×3 or ×4");
    check_bounds_structure(b, s);
    const auto xyz = model_xyz(s, model.value());
    const auto in = refine_inputs(b, s, xyz, restraints.connected() ? restraints.get().get() : nullptr);
    const auto& chir = in.chirals;
    const auto& sums = in.sums;
    const auto& topo = in.topology;
    const std::size_t skipped = in.skipped;
    const RefineOptions o = refinement.options();
    const int trials = refinement.mirror_trial.value() ? 2 : 1;
    RefineResult best;
    bool have = false;
    for (int t = 0; t < trials; ++t) {
      auto start = std::vector<double>(x.span().begin(), x.span().end());
      if (t == 1)
        for (std::size_t k = 0; k < start.size(); k += x.cols()) start[k] = -start[k];
      RefineResult res;
      try {
        res = refine(start, n, x.cols(), b.lower.span(), b.upper.span(), chir, sums, o,
                     [&](double f, const std::string& msg) {
                       ctx.progress((t + f) / trials, msg);
                       return !ctx.cancelled();
                     });
      } catch (const std::runtime_error&) {
        if (ctx.cancelled()) throw Cancelled();
        throw;
      }
      ctx.info(std::string(t ? "mirror" : "embedding") + ": DG error " + std::to_string(res.error) + " after " +
               std::to_string(res.iterations) + " iterations");
      if (!have || res.error < best.error) best = std::move(res);
      have = true;
    }
    warn_violations(ctx, best);
    Table t = refine_table(best, sums.size(), skipped);
    ctx.record("dg_error", best.error);
    ctx.record("iterations", static_cast<std::int64_t>(best.iterations));
    refined.set(refined_structure(b, s, best.coords, topo, "distgeom.refine"));
    report.set(std::move(t));
  }
};

// ---------------------------------------------------------------------------------------------
class EmbedAndRefineNode final : public Node {
 public:
  static NodeInfo info() {
    return {.id = "distgeom.embed_and_refine",
            .version = 1,
            .title = "Embed and refine (best of N trials)",
            .category = "Distance geometry",
            .doc =
                "Multi-start distance geometry: `trials` independent runs of the chain distgeom.metrize → "
                "metric_matrix → embed → refine, each with its own metrization seed (trial 0: `seed`; trial "
                "t: SplitMix64(seed + t·φ·2⁶⁴)), and keeps the trial whose refined structure has the lowest "
                "DG error (bounds, chiral volumes, r^-6 sums: never a reference structure). Trial 0 gives "
                "exactly what the separate nodes give with the same seed and parameters; seed S with "
                "first_trial t and trials 1 repeats trial t of a run with seed S.\n"
                "Failed trials: a trial whose embedding fails (too few positive pivots) or whose refinement "
                "diverges (a bound violated by more than the largest upper bound, or a non-finite DG error) "
                "is logged as a warning and left out; the node fails only when every trial fails.\n"
                "Inputs: bounds (as built: refinement), smoothed (triangle-smoothed: metrization and Cholesky "
                "pivot choice), structure (reference model: atom records, covalent chiral volumes, Cα "
                "handedness), restraints (optional: r^-6 sums).\n"
                "Outputs: structure (the kept trial, bounds atoms, one model); report (Table metric/value: "
                "distgeom.refine's metrics of the kept trial + trials, failed_trials, best_trial, best_seed "
                "(unsigned 64-bit, as decimal text)); trials (Table: trial, seed (text), dg_error, "
                "dg_error_other_hand, mirror_won, iterations, violations, kept, failure).\n"
                "Parameters of the steps as on the separate nodes (metrize, metrize_atoms, method, "
                "dimensions, rank, pivot_fraction, max_iterations, w_chiral, mirror_trial).\n"
                "Threads: trials run in parallel (`threads`, 0 = all cores); partial metrization re-smooths "
                "single-threaded inside a trial. Cancellation is checked every ~20 ms.\n"
                "Device: auto | cpu | cuda | cuda:N. On CUDA each trial's metric matrix and pivoted "
                "Cholesky embedding run on the GPU (one stream and buffer set per worker thread, as "
                "distgeom.metric_matrix and distgeom.embed: the same embedding to rounding); metrization, "
                "the k×k eigenproblem and the refinement stay on the CPU. method: eigen has no CUDA path "
                "(auto: CPU with a log line; cuda fails naming 'method').\n"
                "Warns when the kept structure still violates bounds by more than 0.5 Å.",
            .errors =
                "Bounds and smoothed bounds over different atoms; the node fails only when every trial fails "
                "(naming the reasons), or with a DeviceError naming the device when a CUDA call fails.",
            .memory =
                "Host: about 5 n² doubles per running trial. Device (cuda): about 2 n² + n·rank doubles per "
                "worker thread.",
            .determinism =
                "The same seed gives the same result whatever the number of threads (trials are "
                "independent; ties go to the lower trial index).",
            .references =
                "Havel, Kuntz & Crippen 1983; Crippen & Havel 1988; SplitMix64: Steele, Lea & Flood, "
                "OOPSLA 2014.",
            .stochastic = true,
            .rules = cholesky_only_rules()};
  }
  Input<DistanceBounds> bounds{this, "bounds", "Bounds as built (before smoothing): refinement"};
  Input<DistanceBounds> smoothed{this, "smoothed", "Triangle-smoothed bounds: metrization and pivot choice"};
  Input<Structure> structure{this, "structure", "Reference structure: atom records, chiral centres, Cα handedness"};
  Input<RestraintSet> restraints{this, "restraints", "Restraints for the r^-6 sum terms", PortUse::Optional};
  Output<Structure> refined{this, "structure", "Refined structure of the kept trial (bounds atoms, one model)"};
  Output<Table> report{this, "report", "Metrics of the kept trial (metric, value)"};
  Output<Table> trial_table{this, "trials", "One row per trial"};
  Param<std::int64_t> trials{this, "trials", 4, {.min = 1, .max = 1000, .doc = "Number of trials"}};
  SeedParam seed{this, "Metrization seed of trial 0"};
  Param<std::int64_t> first_trial{this,
                                  "first_trial",
                                  0,
                                  {.min = 0,
                                   .doc = "Index of the first trial run (their seeds derive from `seed` and the "
                                          "index): seed S, first_trial t, trials 1 repeats trial t of a run with "
                                          "seed S exactly"}};
  // the parameters of distgeom.metrize, embed and refine, under their names there (metrize's
  // method and atoms are metrize and metrize_atoms here)
  MetrizeParams metrization{this, {{"method", "metrize"}, {"atoms", "metrize_atoms"}}};
  EmbedParams embedding{this};
  RefineParams refinement{this};
  Param<std::int64_t> threads{this, "threads", 0, {.min = 0, .max = 1024, .doc = "Parallel trials; 0 = all cores"}};
  Param<std::int64_t> model{this, "model", 1, {.min = 1, .doc = "Reference model (chiral volumes, handedness)"}};
  DeviceParam device{this, "auto"};

  void execute(NodeContext& ctx) override {
    const Device dev = resolve_node_device(ctx, device, embedding.cholesky() ? std::string() : kEigenNoCuda);
    const auto& b = *bounds;
    const auto& sm = *smoothed;
    const auto& s = *structure;
    const std::size_t n = b.size();
    if (sm.size() != n || sm.atom_index != b.atom_index)
      throw InputError("inputs 'bounds' (" + std::to_string(n) + " atoms) and 'smoothed' (" +
                       std::to_string(sm.size()) + " atoms) are not over the same atoms");
    check_bounds_structure(b, s);
    const auto xyz = model_xyz(s, model.value());
    const auto in = refine_inputs(b, s, xyz, restraints.connected() ? restraints.get().get() : nullptr);
    const auto hands = ca_centres(b, s, xyz);
    if (hands.empty())
      ctx.warn(
          "no residue has all of N, CA, C and CB among the bounds atoms: the hand of each embedding "
          "is left as it comes (the mirror trial still picks the lower DG error)");

    TrialOptions o;
    o.trials = static_cast<std::size_t>(trials.value());
    o.seed = seed.value();
    o.first_trial = static_cast<std::size_t>(first_trial.value());
    o.metrize = metrization.options();
    o.dim = embedding.dimensions.value();
    o.method = embedding.embed_method();
    o.cholesky_rank = embedding.rank.value();
    o.pivot_fraction = embedding.pivot_fraction.value();
    o.refine = refinement.options();
    o.mirror_trial = refinement.mirror_trial.value();
    o.threads = static_cast<unsigned>(threads.value());

    std::atomic<bool> stop{false};
    TrialProblem p;
    p.n = n;
    p.smoothed_lower = sm.lower.span();
    p.smoothed_upper = sm.upper.span();
    p.lower = b.lower.span();
    p.upper = b.upper.span();
    p.handedness = hands;
    p.chirals = in.chirals;
    p.ambiguous = in.sums;
    p.resmooth = [&stop, &sm](std::span<double> lo, std::span<double> up, std::size_t m) {
      SmoothingOptions so;
      so.threads = 1;  // the trials are the parallelism; one thread keeps every trial deterministic
      so.progress = [&stop](double) { return stop.load(std::memory_order_relaxed); };
      const auto rep = smooth_bounds(lo, up, m, so);
      if (rep.cancelled) throw std::runtime_error("cancelled");
      if (!rep.consistent)
        throw std::runtime_error("re-smoothing after a metrization pick found inconsistent bounds at (" +
                                 sm.labels.at(rep.i) + ", " + sm.labels.at(rep.j) + ")");
    };
    std::atomic<bool> gpu_failed{false};  // a CUDA error inside a trial is a DeviceError, not an InputError
    if (dev.is_cuda()) {
#if GEMFLOW_DISTGEOM_HAVE_CUDA
      const int index = dev.index;
      p.make_embedder = [index, &gpu_failed]() -> TrialEmbedder {
        std::shared_ptr<cuda::GpuEmbedder> gpu;
        try {
          gpu = std::make_shared<cuda::GpuEmbedder>(index);  // this worker's stream and buffers
        } catch (const cuda::CudaError&) {
          gpu_failed.store(true);
          throw;
        }
        return [gpu, &gpu_failed](std::span<const double> d, std::size_t m, std::size_t dim, EmbedMethod,
                                  std::size_t rank_k, std::span<const unsigned char> cand) {
          try {
            return gpu->embed_distances(d, m, dim, rank_k, cand);
          } catch (const cuda::CudaError&) {
            gpu_failed.store(true);
            throw;
          }
        };
      };
      ctx.info("metric matrix and pivoted Cholesky of every trial on " + dev.str() +
               "; metrization, eigenproblem (k×k) and refinement on the CPU");
#else
      no_cuda_build(dev);
#endif
    }
    TrialsResult r;
    try {
      r = run_trials(p, o, [&](double f) {
        ctx.progress(f, "trials");
        if (ctx.cancelled()) stop.store(true);
        return !ctx.cancelled();
      });
    } catch (const std::runtime_error& e) {
      if (ctx.cancelled()) throw Cancelled();
      if (gpu_failed.load()) throw DeviceError(dev.str() + ": " + e.what());
      const bool pivots = std::string_view(e.what()).find("positive pivots") != std::string_view::npos;
      throw InputError(e.what() +
                       (pivots && o.method == EmbedMethod::Cholesky
                            ? std::string("; method eigen embeds from the largest eigenvalues and needs no positive "
                                          "pivots")
                            : std::string()));
    }
    // Seeds are unsigned 64-bit: written as decimal text, exact (an int64 cell wrapped them).
    Table tt{{"trial", "seed", "dg_error", "dg_error_other_hand", "mirror_won", "iterations",
              "upper_violations_gt_0_5A", "lower_violations_gt_0_5A", "kept", "failure"},
             {}};
    std::size_t failed = 0;
    for (std::size_t t = 0; t < r.trials.size(); ++t) {
      const auto& x = r.trials[t];
      const std::string label = "trial " + std::to_string(x.index) + " (seed " + std::to_string(x.seed) + ")";
      tt.rows.push_back({static_cast<std::int64_t>(x.index), std::to_string(x.seed), x.error, x.error_other_hand,
                         static_cast<std::int64_t>(x.mirror_won), static_cast<std::int64_t>(x.iterations),
                         static_cast<std::int64_t>(x.upper_violations), static_cast<std::int64_t>(x.lower_violations),
                         static_cast<std::int64_t>(t == r.best), x.failure});
      if (!x.failure.empty()) {
        ++failed;
        if (gpu_failed.load()) throw DeviceError(dev.str() + ": " + label + ": " + x.failure);
        ctx.warn(label + " failed, left out: " + x.failure);
        continue;
      }
      ctx.info(label + ": DG error " + std::to_string(x.error) + (x.mirror_won ? " (mirror image)" : "") +
               (t == r.best ? "  <- kept" : ""));
    }
    const auto& kept = r.trials[r.best];
    warn_violations(ctx, r.refined);
    Table t = refine_table(r.refined, in.sums.size(), in.skipped);
    t.rows.push_back({std::string("trials"), static_cast<std::int64_t>(r.trials.size())});
    t.rows.push_back({std::string("failed_trials"), static_cast<std::int64_t>(failed)});
    t.rows.push_back({std::string("best_trial"), static_cast<std::int64_t>(kept.index)});
    t.rows.push_back({std::string("best_seed"), std::to_string(kept.seed)});
    ctx.record("dg_error", r.refined.error);
    ctx.record("best_trial", static_cast<std::int64_t>(kept.index));
    ctx.record("best_seed", std::to_string(kept.seed));
    refined.set(refined_structure(b, s, r.refined.coords, in.topology, "distgeom.embed_and_refine"));
    report.set(std::move(t));
    trial_table.set(std::move(tt));
  }
};

}  // namespace

void register_embedding_nodes(PluginRegistrar& r) {
  r.add_node<BoundsNode>();
  r.add_node<BoundsFromStructureNode>();
  r.add_node<MetrizeNode>();
  r.add_node<MetricMatrixNode>();
  r.add_node<EmbedNode>();
  r.add_node<RefineNode>();
  r.add_node<EmbedAndRefineNode>();
  register_compare_nodes(r);
}

}  // namespace gemflow::distgeom
