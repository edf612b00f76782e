// distgeom.bounds_from_molecules and distgeom.smooth_batch: bounds and triangle smoothing of many
// small molecules (ligands, conformer generation) at once.
#include <algorithm>
#include <array>
#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

#include <gemflow/distgeom/batch.hpp>
#include <gemflow/distgeom/bounds.hpp>
#include <gemflow/distgeom/molecule_bounds.hpp>
#include <gemflow/distgeom/smoothing.hpp>
#include <gemflow/node.hpp>
#include <gemflow/types.hpp>

#include "bounds_text.hpp"
#include "register.hpp"

#if defined(GEMFLOW_DISTGEOM_HAVE_CUDA)
#include <gemflow/distgeom/smoothing_cuda.hpp>
#endif

namespace gemflow::distgeom {
namespace {
using namespace text;

/// "molecule 3 'TYR - Ideal conformer'"
std::string molecule_text(const BoundsBatch& b, std::size_t k) {
  const std::size_t src = k < b.source.size() ? b.source[k] : k;
  const std::string name = k < b.names.size() ? b.names[k] : "";
  return "molecule " + std::to_string(src) + (name.empty() ? "" : " '" + name + "'");
}

class BoundsFromMolecules final : public Node {
 public:
  static NodeInfo info() {
    return {.id = "distgeom.bounds_from_molecules",
            .version = 1,
            .title = "Bounds from molecules",
            .category = "Distance geometry",
            .doc =
                "Basic distance bounds of every molecule from its 3D coordinates and bonds: the standard "
                "RDKit-style, ETKDG-free bounds (RDKit BoundsMatrixBuilder setTopolBounds) with the "
                "conformer's own geometry in place of UFF ideal values. 1-2 pairs: 3D bond length ± "
                "bond_tolerance; 1-3 pairs: the distance from the two 3D bond lengths and the 3D angle "
                "(law of cosines) ± angle_tolerance; every other pair (1-4 included; RDKit uses torsion "
                "bounds there): lower = vdw_scale × (r_vdw(i) + r_vdw(j)) (Bondi radii), upper = max_upper "
                "(the diameter ceiling; smoothing tightens it along bonds).\n"
                "Inputs: molecules (MoleculeSet, 3D coordinates in Å).\n"
                "Outputs: bounds (BoundsBatch: one DistanceBounds per molecule, atoms labelled element + "
                "1-based atom number, e.g. 'O12').",
            .errors =
                "A bond to a missing atom names the molecule. A molecule of two or more atoms with only 2D "
                "coordinates (every z = 0: a drawing, whose lengths are not Å) is an error naming its file:line "
                "and name: bounds from a drawing would be wrong; give 3D coordinates (a 3D SDF, or a conformer "
                "generated first). Elements are those of the file's element column (calcium 'Ca' is not an "
                "alpha carbon); an element without tabulated radii is named in one warning.",
            .memory = "2·n² doubles per molecule (host); no device memory.",
            .determinism = "Deterministic.",
            .references =
                "RDKit Code/GraphMol/DistGeomHelpers/BoundsMatrixBuilder.cpp (DIST12_DELTA 0.01 Å, "
                "DIST13_TOL 0.04 Å, VDW_SCALE_15 0.7, MAX_UPPER 1000 Å); Havel, Kuntz & Crippen, Bull. "
                "Math. Biol. 45 (1983) 665; Bondi, J. Phys. Chem. 68 (1964) 441."};
  }
  Input<MoleculeSet> molecules{this, "molecules", "Molecules with 3D coordinates (Å) and bonds"};
  Output<BoundsBatch> bounds{this, "bounds", "One bounds matrix per molecule (Å)"};
  Param<double> bond_tolerance{this,
                               "bond_tolerance",
                               0.01,
                               {.min = 0.0, .max = 1.0, .unit = "Å", .doc = "± around 3D bond lengths (1-2 pairs)"}};
  Param<double> angle_tolerance{
      this,
      "angle_tolerance",
      0.04,
      {.min = 0.0, .max = 1.0, .unit = "Å", .doc = "± around 1-3 distances (from the 3D bond lengths and angle)"}};
  Param<double> vdw_scale{
      this, "vdw_scale", 0.7, {.min = 0.0, .max = 1.0, .doc = "Lower bound of other pairs = scale × sum of vdW radii"}};
  Param<double> max_upper{
      this, "max_upper", 1000.0, {.min = 1.0, .unit = "Å", .doc = "Upper bound of pairs neither 1-2 nor 1-3"}};

  void execute(NodeContext& ctx) override {
    const auto in = molecules.get();
    MoleculeBoundsOptions o;
    o.tolerance_12 = bond_tolerance.value();
    o.tolerance_13 = angle_tolerance.value();
    o.vdw_scale = vdw_scale.value();
    o.max_upper = max_upper.value();
    BoundsBatch out;
    std::size_t p12 = 0, p13 = 0;
    std::vector<std::string> untabulated;  // elements given carbon's radii, for one warning
    const std::size_t count = in->molecules.size();
    for (std::size_t k = 0; k < count; ++k) {
      if (k % 64 == 0) {
        ctx.throw_if_cancelled();
        ctx.progress(static_cast<double>(k) / static_cast<double>(count), "bounds");
      }
      const Molecule& m = in->molecules[k];
      const std::size_t n = m.atoms.size();
      const std::string what = "molecule " + std::to_string(k) + " '" + m.name + "' (" + m.source + ")";
      if (m.flat() && n > 1)
        throw InputError(what +
                         " has only 2D coordinates (every z = 0): a drawing, not Å; bounds need 3D "
                         "coordinates (a 3D SDF, or a conformer generated first)");
      std::vector<std::string> el(n);
      std::vector<double> xyz(3 * n);
      for (std::size_t i = 0; i < n; ++i) {
        el[i] = m.atoms[i].element;
        if (!has_tabulated_radii(el[i])) untabulated.push_back(el[i]);
        for (int c = 0; c < 3; ++c)
          xyz[3 * i + static_cast<std::size_t>(c)] = m.atoms[i].xyz[static_cast<std::size_t>(c)];
      }
      std::vector<std::array<std::size_t, 2>> bonds;
      bonds.reserve(m.bonds.size());
      for (const auto& b : m.bonds) bonds.push_back({b.a, b.b});
      MoleculeBounds mb;
      try {
        mb = molecule_bounds(el, xyz, bonds, o);
      } catch (const std::invalid_argument& e) {
        throw InputError(what + ": " + e.what());
      }
      p12 += mb.pairs_12;
      p13 += mb.pairs_13;
      DistanceBounds d;
      d.lower = Matrix<double>(n, n);
      d.upper = Matrix<double>(n, n);
      std::copy(mb.lower.begin(), mb.lower.end(), d.lower.data());
      std::copy(mb.upper.begin(), mb.upper.end(), d.upper.data());
      d.labels.resize(n);
      d.atom_index.resize(n);
      for (std::size_t i = 0; i < n; ++i) {
        d.labels[i] = element_symbol(m.atoms[i].element) + std::to_string(i + 1);
        d.atom_index[i] = i;
      }
      out.bounds.push_back(std::move(d));
      out.names.push_back(m.name);
      out.source.push_back(k);
    }
    if (auto w = text::untabulated_radii_warning(untabulated); !w.empty()) ctx.warn(w);
    ctx.info("bounds of " + std::to_string(count) + " molecule(s): " + std::to_string(p12) + " 1-2 and " +
             std::to_string(p13) + " 1-3 pairs from the 3D geometry");
    ctx.record("pairs_12", static_cast<std::int64_t>(p12));
    ctx.record("pairs_13", static_cast<std::int64_t>(p13));
    bounds.set(std::move(out));
    ctx.progress(1.0);
  }
};

class SmoothBatch final : public Node {
 public:
  enum class Precision { Fp64, Fp32 };
  enum class OnInconsistent { Error, Skip };

  static NodeInfo info() {
    return {.id = "distgeom.smooth_batch",
            .version = 1,
            .title = "Triangle smoothing (batch)",
            .category = "Distance geometry",
            .doc =
                "Triangle smoothing of every bounds matrix of a batch (the closure of "
                "distgeom.triangle_smoothing, per molecule). CPU: smooth_bounds per molecule, molecules "
                "in parallel on 'threads' workers. CUDA: all molecules with n ≤ 256 in ONE batched launch "
                "(padded to the largest such n with unconnected atoms, which changes no bound), larger "
                "ones one by one.\n"
                "Inputs: bounds (BoundsBatch, Å).\n"
                "Outputs: bounds (BoundsBatch, smoothed; with on_inconsistent = skip only the consistent "
                "molecules, 'source' keeps their input index); report (Table: molecule, name, atoms, pairs, "
                "tightened, status).\n"
                "Parameters: device, precision (fp64 | fp32), tolerance (Å, L > U + tolerance is "
                "inconsistent), on_inconsistent (error: the first inconsistent molecule fails the node; "
                "skip: it is dropped, counted and logged), threads (CPU workers, 0 = all cores).",
            .errors =
                "Invalid input bounds and inconsistent molecules name the molecule (index and name), the atom "
                "pair and the chain of input bounds that contradicts a lower bound.",
            .memory = "CPU 2·n² values per worker; CUDA 2·B·N² values (B molecules padded to N atoms).",
            .determinism =
                "Deterministic on every device; CUDA fp64 equals the per-k reference closure bit for bit "
                "on consistent bounds, CPU blocked to rounding.",
            .references = "Dress & Havel, Discrete Appl. Math. 19 (1988) 129-144; Crippen & Havel 1988."};
  }

  Input<BoundsBatch> in{this, "bounds", "Bounds of the molecules (Å)"};
  Output<BoundsBatch> out{this, "bounds", "Triangle-closed bounds (Å)"};
  Output<Table> report{this, "report", "Per molecule: molecule, name, atoms, pairs, tightened, status"};
  DeviceParam device{this, "auto"};
  Choice<Precision> precision{this,
                              "precision",
                              Precision::Fp64,
                              {{Precision::Fp64, "fp64"}, {Precision::Fp32, "fp32"}},
                              {.doc = "Arithmetic of the closure (fp32: rounding ~1e-7 relative per path sum)"}};
  Param<double> tolerance{this,
                          "tolerance",
                          kDefaultSmoothingTolerance,
                          {.min = 0.0, .unit = "Å", .doc = "A pair is inconsistent when L > U + tolerance"}};
  Choice<OnInconsistent> on_inconsistent{
      this,
      "on_inconsistent",
      OnInconsistent::Error,
      {{OnInconsistent::Error, "error"}, {OnInconsistent::Skip, "skip"}},
      {.doc = "error: an inconsistent molecule fails the node naming it; skip: drop it (counted and logged)"}};
  Param<std::int64_t> threads{this, "threads", 0, {.min = 0, .max = 1024, .doc = "CPU workers; 0 = all cores"}};

  void execute(NodeContext& ctx) override {
    const auto src = in.get();
    const BoundsBatch& b = *src;
    const double tol = tolerance.value();
    if (b.names.size() != b.size())
      throw InputError("input 'bounds' has " + std::to_string(b.names.size()) + " names for " +
                       std::to_string(b.size()) + " matrices");
    for (std::size_t k = 0; k < b.size(); ++k) {
      const DistanceBounds& d = b.bounds[k];
      const std::size_t n = d.size();
      if (d.lower.cols() != n || d.upper.rows() != n || d.upper.cols() != n)
        throw InputError(molecule_text(b, k) + ": lower and upper are not both n×n");
      if (auto defect = check_bounds(d.lower.span(), d.upper.span(), n, tol))
        throw InputError(molecule_text(b, k) + ": invalid bounds: " + defect->message() + " (atoms " +
                         label(d, defect->i) + ", " + label(d, defect->j) + ")");
    }
    const Device dev = device.resolve(ctx);
    BoundsBatch result = b;
    std::vector<BatchMatrix> ms;
    ms.reserve(result.size());
    for (auto& d : result.bounds) ms.push_back({d.lower.span(), d.upper.span(), d.size()});
    BatchSmoothingOptions o;
    o.cuda = dev.is_cuda();
    o.device = dev.index;
    o.fp32 = precision.value() == Precision::Fp32;
    o.tolerance = tol;
    o.threads = static_cast<unsigned>(threads.value());
    o.progress = [&ctx](double f) {
      ctx.progress(f, "triangle smoothing (batch)");
      return ctx.cancelled();
    };
    BatchSmoothingResult r;
    try {
      r = smooth_bounds_batch(ms, o);
#if defined(GEMFLOW_DISTGEOM_HAVE_CUDA)
    } catch (const cuda::CudaError& e) {
      throw DeviceError(dev.str() + ": " + e.what());
#endif
    } catch (const std::runtime_error& e) {
      if (o.cuda) throw DeviceError(dev.str() + ": " + e.what());
      throw;
    }
    if (r.cancelled) throw Cancelled();

    Table t;
    t.columns = {"molecule", "name", "atoms", "pairs", "tightened", "status"};
    BoundsBatch kept;
    std::size_t skipped = 0, tightened = 0;
    for (std::size_t k = 0; k < result.size(); ++k) {
      const SmoothingReport& rep = r.reports[k];
      const std::size_t n = result.bounds[k].size();
      const std::size_t src_index = k < b.source.size() ? b.source[k] : k;
      std::string status = "ok";
      if (!rep.consistent) {
        const std::string why =
            molecule_text(b, k) + ": inconsistent bounds after smoothing: " + inconsistency_text(b.bounds[k], rep);
        if (on_inconsistent.value() == OnInconsistent::Error) throw Error(why);
        ctx.warn("skipped " + why);
        status = "inconsistent (skipped)";
        ++skipped;
      } else {
        kept.bounds.push_back(std::move(result.bounds[k]));
        kept.names.push_back(result.names[k]);
        kept.source.push_back(src_index);
        tightened += rep.changed_pairs;
      }
      t.rows.push_back({static_cast<std::int64_t>(src_index), result.names[k], static_cast<std::int64_t>(n),
                        static_cast<std::int64_t>(n * (n > 0 ? n - 1 : 0) / 2),
                        static_cast<std::int64_t>(rep.changed_pairs), status});
    }
    ctx.record("algorithm", o.cuda ? "cuda-batched" : "cpu-blocked");
    ctx.record("precision", o.fp32 ? "fp32" : "fp64");
    ctx.record("molecules", static_cast<std::int64_t>(b.size()));
    ctx.record("skipped", static_cast<std::int64_t>(skipped));
    ctx.record("pairs_tightened", static_cast<std::int64_t>(tightened));
    if (o.cuda) {
      ctx.record("cuda_batched", static_cast<std::int64_t>(r.batched));
      ctx.record("cuda_padded_n", static_cast<std::int64_t>(r.padded_n));
      ctx.record("cuda_one_by_one", static_cast<std::int64_t>(r.one_by_one));
    }
    ctx.info("smoothed " + std::to_string(b.size()) + " molecule(s) on " + dev.str() + ": " +
             std::to_string(tightened) + " pairs tightened" +
             (skipped ? ", " + std::to_string(skipped) + " inconsistent molecule(s) skipped" : std::string()) +
             (o.cuda ? "; " + std::to_string(r.batched) + " in one batched launch (padded to n = " +
                           std::to_string(r.padded_n) + "), " + std::to_string(r.one_by_one) + " one by one"
                     : std::string()));
    out.set(std::move(kept));
    report.set(std::move(t));
    ctx.progress(1.0);
  }
};

}  // namespace

void register_batch_nodes(PluginRegistrar& r) {
  r.add_type<BoundsBatch>();
  r.add_node<BoundsFromMolecules>();
  r.add_node<SmoothBatch>();
}

}  // namespace gemflow::distgeom
