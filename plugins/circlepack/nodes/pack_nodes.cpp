// circlepack.pack, circlepack.layout, circlepack.flatten, circlepack.draw: node adapters over
// gemflow/circlepack/{complex,pack,layout}.hpp.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <numbers>
#include <optional>
#include <string>
#include <vector>

#include <fmt/format.h>

#include <gemflow/circlepack/complex.hpp>
#include <gemflow/circlepack/layout.hpp>
#include <gemflow/circlepack/pack.hpp>
#include <gemflow/circlepack/pack_cuda.hpp>
#include <gemflow/memory.hpp>
#include <gemflow/node.hpp>
#include <gemflow/types.hpp>

#include "convert.hpp"
#include "register.hpp"

#if defined(GEMFLOW_CIRCLEPACK_HAVE_CUDA)
#include <gemflow/cuda/error.hpp>
#endif

namespace gemflow::circlepack {
namespace {

enum class AlgoChoice { automatic, cs, cs_plain, newton, gpu_coloured_gs, gpu_jacobi, gpu_newton };

const char* name_of(AlgoChoice a) {
  switch (a) {
    case AlgoChoice::automatic: return "auto";
    case AlgoChoice::cs: return "cs";
    case AlgoChoice::cs_plain: return "cs_plain";
    case AlgoChoice::newton: return "newton";
    case AlgoChoice::gpu_coloured_gs: return "gpu_coloured_gs";
    case AlgoChoice::gpu_jacobi: return "gpu_jacobi";
    case AlgoChoice::gpu_newton: return "gpu_newton";
  }
  return "?";
}

/// Everything a solve produced.
struct Solved {
  PackSetup setup;
  PackResult result;
  Layout layout;
  AlgoChoice used = AlgoChoice::cs;
};

struct SolveRequest {
  BoundarySpec bc;
  AlgoChoice algorithm = AlgoChoice::automatic;
  Precision precision = Precision::fp64;
  double tolerance = 1e-10;
  std::size_t max_iterations = 1'000'000;
  Normalisation normalisation = Normalisation::unit_disk;
  std::vector<double> initial;
  /// What sets the fixed radii's scale, for an error when the packing at that scale does not fit
  /// a double (see rescale), and what to do instead.
  std::string scale_source = "parameter 'boundary_radius'";
  std::string scale_hint = " (normalisation unit_disk does not depend on it)";
  /// The length in which the fixed radii are given: the layout is multiplied by it.
  double unit = 1;
};

CirclePacking to_packing(const Layout& layout, Geometry g, const TriMesh& mesh) {
  CirclePacking cp;
  const std::size_t n = mesh.vertices.size();
  cp.geometry = g == Geometry::hyperbolic ? CirclePacking::Geometry::Hyperbolic : CirclePacking::Geometry::Euclidean;
  cp.radii.assign(layout.radii.begin(), layout.radii.begin() + static_cast<std::ptrdiff_t>(n));
  cp.centres.assign(layout.centres.begin(), layout.centres.begin() + static_cast<std::ptrdiff_t>(n));
  cp.faces = mesh.faces;
  cp.boundary.assign(n, 0);
  for (const auto& loop : boundary_loops(n, mesh.faces))
    for (auto v : loop) cp.boundary[v] = 1;
  return cp;
}

/// The scale at which a fixed-radii problem is solved: its largest fixed radius (1 otherwise, and
/// for radii that are not all positive and finite, which setup_problem refuses by vertex).
double fixed_radius_scale(const SolveRequest& req) {
  if (req.bc.kind != Boundary::fixed_radii) return 1;
  const std::vector<double>& radii = req.bc.from_initial    ? req.initial
                                     : req.bc.radii.empty() ? std::vector<double>{req.bc.radius}
                                                            : req.bc.radii;
  double largest = 0;
  for (const double r : radii) {
    if (!(r > 0) || !std::isfinite(r)) return 1;
    largest = std::max(largest, r);
  }
  return largest > 0 ? largest : 1;
}

/// A layout (normalisation none) of the problem solved at unit scale, at the scale asked for.
/// When a radius or centre would leave the normal doubles, returns the error (naming what set the
/// scale and the range of scales that this packing fits) and leaves `y` as it is.
std::optional<std::string> rescale(Layout& y, double scale, const SolveRequest& req) {
  if (scale == 1) return std::nullopt;
  double least = INFINITY, extent = 0;
  for (std::size_t v = 0; v < y.radii.size(); ++v) {
    if (!std::isfinite(y.radii[v])) continue;  // a line
    least = std::min(least, y.radii[v]);
    extent = std::max({extent, y.radii[v] + std::abs(y.centres[v][0]), y.radii[v] + std::abs(y.centres[v][1])});
  }
  const double lo = std::numeric_limits<double>::min() / least, hi = std::numeric_limits<double>::max() / extent;
  if (!(scale >= lo && scale <= hi))
    return fmt::format(
        "{} = {:.3g}: the packing's smallest radius is {:.3g} times it and its extent {:.3g} times it, which leaves "
        "the normal doubles (about 2.2e-308 to 1.8e308); for this mesh it must be within [{:.3g}, {:.3g}]{}",
        req.scale_source, scale, least, extent, lo, hi, req.scale_hint);
  for (double& r : y.radii) r *= scale;
  for (auto& c : y.centres) c = {c[0] * scale, c[1] * scale};
  for (auto& l : y.lines) l[2] *= scale;
  return std::nullopt;
}

/// The power of two nearest below the largest extent of `xyz`'s bounding box (1 for a point or a
/// box that is not finite, which the packing then refuses by vertex).
double extent_unit(const std::vector<std::array<double, 3>>& xyz) {
  double extent = 0;
  for (int k = 0; k < 3; ++k) {
    double lo = INFINITY, hi = -INFINITY;
    for (const auto& p : xyz) {
      lo = std::min(lo, p[k]);
      hi = std::max(hi, p[k]);
    }
    if (hi > lo) extent = std::max(extent, hi - lo);
  }
  return extent > 0 && std::isfinite(extent) ? std::ldexp(1.0, std::ilogb(extent)) : 1.0;
}

/// Packs and lays out `mesh` under `req`; the device decides auto's algorithm (newton, on the GPU
/// or the CPU, for Euclidean fp64; else coloured Gauss–Seidel on the GPU, cs on the CPU). A GPU algorithm on a CPU
/// device is an error (no silent fallback).
Solved solve(NodeContext& ctx, const TriMesh& mesh, const SolveRequest& req, const Device& dev) {
  Solved s;
  require_host_memory(packing_bytes(mesh.vertices.size(), mesh.faces.size()),
                      fmt::format("packing {} circles", mesh.vertices.size()));
  // Fixed radii: the problem is scale-invariant (radii c·r solve it for fixed radii c·R), so it is
  // solved with the largest fixed radius 1 and the layout scaled back. Solved at their own scale,
  // radii such as 1e-300 or 1e300 against unknowns starting at 1 underflow or overflow in the angle
  // sums and Newton's weights.
  const double scale = fixed_radius_scale(req);
  s.setup = with_input("mesh", [&] {
    if (scale == 1) return setup_problem(mesh.vertices.size(), faces_of(mesh), req.bc, req.initial);
    BoundarySpec bc = req.bc;
    std::vector<double> initial = req.initial;
    bc.radius /= scale;
    for (double& r : bc.radii) r /= scale;
    if (bc.from_initial)
      for (double& r : initial) r /= scale;
    return setup_problem(mesh.vertices.size(), faces_of(mesh), bc, initial);
  });
  const Problem& p = s.setup.problem;
  AlgoChoice a = req.algorithm;
  if (a == AlgoChoice::automatic) {
    const bool newton = p.geometry == Geometry::euclidean && req.precision == Precision::fp64;
    if (dev.is_cuda()) a = newton ? AlgoChoice::gpu_newton : AlgoChoice::gpu_coloured_gs;
    else a = newton ? AlgoChoice::newton : AlgoChoice::cs;
    ctx.info(std::string("algorithm auto: using ") + name_of(a) + " on " + dev.str());
  }
  const bool gpu = a == AlgoChoice::gpu_coloured_gs || a == AlgoChoice::gpu_jacobi || a == AlgoChoice::gpu_newton;
  if (gpu && !dev.is_cuda())
    throw DeviceError(std::string("parameter 'algorithm' = ") + name_of(a) +
                      " needs a CUDA device, but the device is " + dev.str());
  if (!gpu && dev.is_cuda() && req.algorithm != AlgoChoice::automatic)
    throw InputError(std::string("parameter 'algorithm' = ") + name_of(a) + " runs on the CPU, but the device is " +
                     dev.str() + " (use gpu_newton, gpu_coloured_gs or gpu_jacobi, or device: cpu)");
  const bool any_newton = a == AlgoChoice::newton || a == AlgoChoice::gpu_newton;
  if (any_newton && p.geometry != Geometry::euclidean)
    throw InputError(std::string("parameter 'algorithm' = ") + name_of(a) +
                     " solves Euclidean packings only; boundary maximal needs cs, gpu_coloured_gs or gpu_jacobi");
  if (any_newton && req.precision != Precision::fp64)
    throw InputError(std::string("parameter 'algorithm' = ") + name_of(a) +
                     " runs in fp64 only; use precision fp64 or cs");
  s.used = a;
  const double log_start = std::log10(std::max(angle_error(s.setup.complex, p, p.labels), req.tolerance * 10));
  const double log_end = std::log10(req.tolerance);
  auto monitor = [&](std::size_t it, double err) {
    const double f = std::clamp((log_start - std::log10(std::max(err, 1e-300))) / (log_start - log_end), 0.0, 0.99);
    ctx.progress(0.9 * f, fmt::format("iteration {}: angle error {:.3g}", it, err));
    return !ctx.cancelled();
  };
  if (gpu) {
#if defined(GEMFLOW_CIRCLEPACK_HAVE_CUDA)
    cuda::GpuOptions o;
    o.method = a == AlgoChoice::gpu_jacobi   ? cuda::GpuMethod::jacobi
               : a == AlgoChoice::gpu_newton ? cuda::GpuMethod::newton
                                             : cuda::GpuMethod::coloured_gs;
    o.precision = req.precision;
    o.tolerance = req.tolerance;
    o.max_iterations = req.max_iterations;
    o.device = dev.index;
    o.monitor = monitor;
    try {
      s.result = cuda::pack_gpu(s.setup.complex, p, o);
    } catch (const gemflow::cuda::CudaError& e) {
      throw DeviceError(dev.str() + ": " + e.what());
    }
#else
    throw DeviceError(std::string(name_of(a)) + ": this build of the circlepack plugin has no CUDA support");
#endif
  } else {
    PackOptions o;
    o.algorithm = a == AlgoChoice::newton     ? Algorithm::newton
                  : a == AlgoChoice::cs_plain ? Algorithm::cs_plain
                                              : Algorithm::cs;
    o.precision = req.precision;
    o.tolerance = req.tolerance;
    o.max_iterations = req.max_iterations;
    o.monitor = monitor;
    o.history_every = 1;
    // the packing as it converges, laid out, for Studio (made only when shown); a layout of
    // half-converged radii may fail or not close up: then nothing is shown
    if (mesh.vertices.size() <= 200'000 && ctx.previews_wanted())
      o.preview = [&](const std::vector<double>& labels) {
        try {
          LayoutOptions lo;
          lo.normalisation = req.normalisation;
          Layout Y = layout(s.setup.complex, p.geometry, labels, lo);
          if (req.normalisation == Normalisation::none && rescale(Y, scale * req.unit, req)) return;
          CirclePacking cp = to_packing(Y, p.geometry, mesh);
          if (!cp.validate()) ctx.preview("packing", Value::make(std::move(cp)));
        } catch (const PackError&) {
        }
      };
    s.result = with_input("mesh", [&] { return pack(s.setup.complex, p, o); });
  }
  if (s.result.cancelled) throw Cancelled();
  if (!s.result.converged)
    ctx.warn(fmt::format("{} did not reach the tolerance {:.3g} in {} iterations: angle error {:.3g}{}", name_of(a),
                         req.tolerance, s.result.iterations, s.result.error,
                         s.result.stagnated
                             ? fmt::format(" (stopped: the error fell by less than 1 % in {} iterations; "
                                           "the precision cannot go lower)",
                                           kStagnationSweeps)
                             : ""));
  ctx.progress(0.92, "layout");
  LayoutOptions lo;
  lo.normalisation = req.normalisation;
  s.layout = with_input("mesh", [&] { return layout(s.setup.complex, p.geometry, s.result.labels, lo); });
  if (req.normalisation == Normalisation::none)
    if (auto why = rescale(s.layout, scale * req.unit, req)) throw InputError(*why);
  ctx.record("algorithm_used", name_of(a));
  ctx.record("iterations", static_cast<std::int64_t>(s.result.iterations));
  ctx.record("angle_error", s.result.error);
  return s;
}

Table history_table(const PackResult& r) {
  Table t;
  t.columns = {"iteration", "angle_error"};
  for (std::size_t i = 0; i < r.history_iteration.size(); ++i)
    t.rows.push_back({static_cast<std::int64_t>(r.history_iteration[i]), r.history_error[i]});
  return t;
}

Report solve_report(const Solved& s, const SolveRequest& req) {
  Report r;
  r.add("algorithm", name_of(s.used))
      .add("precision", req.precision == Precision::fp64 ? "fp64" : "fp32")
      .add("circles", s.setup.problem.mesh_vertices)
      .add("iterations", s.result.iterations)
      .add("angle_error", s.result.error)
      .add("tolerance", req.tolerance)
      .add("converged", s.result.converged ? "yes" : "no")
      .add("supersteps", s.result.supersteps)
      .add("cg_iterations", s.result.inner_iterations)
      .add("pack_seconds", s.result.seconds)
      .add("closing_error", s.layout.closing_error)
      .add("line_error", s.layout.line_error);
  return r;
}

constexpr double kDeg = std::numbers::pi / 180;

#define CIRCLEPACK_BOUNDARY_PARAMS                                                                                  \
  Param<double> boundary_radius{                                                                                    \
      this, "boundary_radius", 1.0, {.min = 0, .doc = "fixed_radii: the radius of every boundary circle (> 0)"}};   \
  Param<std::int64_t> corners{this,                                                                                 \
                              "corners",                                                                            \
                              0,                                                                                    \
                              {.min = 0,                                                                            \
                               .doc = "angle_sums, lines: corner count; 0 = auto (boundary vertices of one "        \
                                      "face when there are ≥ 3, else 4 evenly spaced)"}};                           \
  Param<double> corner_angle{this,                                                                                  \
                             "corner_angle",                                                                        \
                             0.0,                                                                                   \
                             {.min = 0,                                                                             \
                              .max = 180,                                                                           \
                              .unit = "deg",                                                                        \
                              .doc = "angle_sums, lines: interior angle at each corner; 0 = the regular polygon's " \
                                     "180 − 360/corners (Gauss–Bonnet: Σ(180 − angle) must be 360)"}};

// Gauss–Bonnet for a polygon of k corners of interior angle A (degrees), straight sides between:
// k·(180 − A) = 360. A corner_angle other than 0 must therefore be the one `corners` implies, or,
// with corners automatic, one that some corner count k ≥ 3 allows. The run checks the same
// within 1e-9 rad; here in degrees.
ParamRule corner_angle_rule() {
  return {.param = "corner_angle",
          .other = "corners",
          .why =
              "a corner_angle other than 0 must be 180 − 360/corners, so that the corners turn by 360 in all "
              "(Gauss–Bonnet); with corners 0 (automatic), 180 − 360/k for a whole k ≥ 3",
          .holds = [](const std::function<const ParamValue&(const std::string&)>& value_of) {
            const auto& bc = value_of("boundary");
            if (bc != ParamValue(std::string("angle_sums")) && bc != ParamValue(std::string("lines"))) return true;
            const double a = param_number(value_of("corner_angle")).value_or(0);
            const double k = param_number(value_of("corners")).value_or(0);
            if (a == 0) return true;
            constexpr double eps = 1e-9 * 180 / std::numbers::pi;
            if (k > 0) return std::abs(k * (180 - a) - 360) <= eps;
            if (!(a < 180)) return false;
            const double implied = 360 / (180 - a);
            return implied >= 3 - 1e-9 && std::abs(implied - std::round(implied)) * (180 - a) <= eps;
          }};
}

// The least tolerance fp32 can reach: angle sums near 2π from radii of relative precision 2⁻²⁴,
// summed over a vertex's petals, are not known closer than about 1e-6 rad.
constexpr double kFp32ToleranceFloor = 1e-6;

class PackNode final : public Node {
 public:
  enum class Bc { fixed_radii, angle_sums, lines, maximal };
  static NodeInfo info() {
    return {.id = "circlepack.pack",
            .version = 1,
            .title = "Circle packing",
            .category = "Circle packing",
            .doc =
                "Finds the radii of circles, one per vertex of a triangulated disk, tangent along its edges, with "
                "the boundary condition chosen, then lays them out (breadth first from a face at the deepest "
                "vertex) and normalises the picture.\n"
                "Boundary conditions: fixed_radii (boundary radii given, interior angle sums 2π); angle_sums "
                "(boundary angle sums π on straight sides and the corner angle at `corners` corners); lines (the "
                "seed's triangle: each side tangent to one straight line, a circle of infinite radius handled "
                "exactly by the limit of the angle formula; corners meeting at `corner_angle`); maximal "
                "(hyperbolic: boundary circles are horocycles, the packing fills the unit disk).\n"
                "Algorithms: cs (Collins–Stephenson Gauss–Seidel with super-steps), cs_plain (without them, the "
                "seed's iteration), newton (Newton on the convex log-radius functional; Euclidean, fp64), "
                "gpu_coloured_gs, gpu_jacobi and gpu_newton (CUDA; gpu_newton: Newton with matrix-free Jacobi-"
                "preconditioned conjugate gradients), auto (newton where it applies — Euclidean, fp64 — on the "
                "device chosen, else gpu_coloured_gs on a CUDA device and cs on the CPU; the choice is logged).\n"
                "Outputs: packing (the mesh's circles; lines are not circles and are not in it), history "
                "(iteration, angle_error: max |θ − target| in radians after each iteration; cs's figure is the "
                "one seen during the sweep), report (metric, value). While a CPU algorithm runs, the packing is "
                "previewed (laid out) after its first iteration and then every 0.2 s, up to 2·10⁵ circles.",
            .errors =
                "The mesh not a disk (components, Euler characteristic and boundary loops named), a non-manifold "
                "vertex or flipped face (indices named); boundary targets contradicting Gauss–Bonnet (the sum "
                "named); fewer than 3 corners, or more than the boundary's vertices; maximal with an ear (a face "
                "of three boundary vertices, named); a GPU algorithm without a CUDA device; newton with maximal or "
                "fp32; with normalisation none, a boundary_radius at which the packing's radii or centres leave "
                "the doubles (the range that fits the mesh named; fixed radii are solved at scale 1 and scaled "
                "back, exactly); a corner_angle that the corners do not allow (Gauss–Bonnet) and an fp32 tolerance "
                "below 1e-6 rad, at validation. Not "
                "reaching the tolerance within max_iterations is a warning, and the report says converged: no; "
                "cs and cs_plain stop early, with that warning, when the error falls by less than 1 % in 1000 "
                "sweeps (the precision's floor).",
            .memory =
                "About 200 bytes per circle on the host (newton: plus the sparse Cholesky factor, O(n log n) for "
                "planar meshes); GPU: see gemflow/circlepack/pack_cuda.hpp.",
            .determinism = "Deterministic on the CPU; the GPU algorithms are deterministic for a given device.",
            .references =
                "Collins & Stephenson, Comput. Geom. 25 (2003) 233–256; Colin de Verdière, Invent. Math. 104 "
                "(1991) 655–669; Bobenko & Springborn, Trans. AMS 356 (2004) 659–689; Orick, Stephenson & "
                "Collins, Comput. Geom. 64 (2017) 13–34 (GOPack); Stephenson, Introduction to Circle "
                "Packing (Cambridge 2005).",
            .rules = {corner_angle_rule(),
                      {.param = "tolerance",
                       .when = {std::string("fp32")},
                       .other_value = kFp32ToleranceFloor,
                       .why = "fp32 radii hold about 7 significant digits: their angle sums are not known "
                              "closer than about 1e-6 rad, so the iteration would run to max_iterations; use "
                              "precision fp64 for a smaller tolerance",
                       .compare = ParamCompare::GreaterEqual,
                       .if_param = "precision"}}};
  }
  Input<TriMesh> mesh{this, "mesh", "Triangulated disk (its coordinates are not used)"};
  Output<CirclePacking> packing{this, "packing", "Radii and centres of the mesh's circles"};
  Output<Table> history{this, "history", "Convergence: iteration, angle_error (rad)"};
  Output<Table> report{this, "report", "metric, value: algorithm, iterations, angle_error, closing_error ..."};
  Choice<AlgoChoice> algorithm{this,
                               "algorithm",
                               AlgoChoice::automatic,
                               {{AlgoChoice::automatic, "auto"},
                                {AlgoChoice::cs, "cs"},
                                {AlgoChoice::cs_plain, "cs_plain"},
                                {AlgoChoice::newton, "newton"},
                                {AlgoChoice::gpu_coloured_gs, "gpu_coloured_gs"},
                                {AlgoChoice::gpu_jacobi, "gpu_jacobi"},
                                {AlgoChoice::gpu_newton, "gpu_newton"}},
                               {.doc = "Packing algorithm (see the node doc)"}};
  Choice<Precision> precision{this,
                              "precision",
                              Precision::fp64,
                              {{Precision::fp64, "fp64"}, {Precision::fp32, "fp32"}},
                              {.doc = "Arithmetic of the iteration (newton: fp64 only)"}};
  Param<double> tolerance{
      this, "tolerance", 1e-10, {.min = 1e-15, .unit = "rad", .doc = "Stop when max |angle sum − target| is below it"}};
  Param<std::int64_t> max_iterations{
      this, "max_iterations", 1'000'000, {.min = 1, .doc = "Sweeps (cs) or steps (newton)"}};
  Choice<Bc> boundary{this,
                      "boundary",
                      Bc::fixed_radii,
                      {{Bc::fixed_radii, "fixed_radii"},
                       {Bc::angle_sums, "angle_sums"},
                       {Bc::lines, "lines"},
                       {Bc::maximal, "maximal"}},
                      {.doc = "Boundary condition (see the node doc)"}};
  CIRCLEPACK_BOUNDARY_PARAMS
  Choice<Normalisation> normalisation{
      this,
      "normalisation",
      Normalisation::unit_disk,
      {{Normalisation::unit_disk, "unit_disk"}, {Normalisation::none, "none"}, {Normalisation::polygon, "polygon"}},
      {.doc = "unit_disk: every circle inside the unit disk, touching it; none: the "
              "seed vertex at the origin; polygon (lines): side 1 from (−½, 0) to (½, 0)"}};
  enum class Start { uniform, varied };
  Choice<Start> start{this,
                      "start",
                      Start::uniform,
                      {{Start::uniform, "uniform"}, {Start::varied, "varied"}},
                      {.doc = "Initial radii of the unknowns: uniform (1; hyperbolic s-radius ½), or varied "
                              "(1 + ½·(v mod 3); hyperbolic ¼ + ¼·(v mod 3)): a non-uniform start, since the uniform "
                              "one already solves the lattices"}};
  DeviceParam device{this, "cpu"};

  void execute(NodeContext& ctx) override {
    const auto m = mesh.get();
    if (auto why = m->validate()) throw InputError("input 'mesh': " + *why);
    check_parameters();
    check_corners(*m);
    SolveRequest req;
    if (start.value() == Start::varied) {
      req.initial.resize(m->vertices.size());
      const bool hyp = boundary.value() == Bc::maximal;
      for (std::size_t v = 0; v < req.initial.size(); ++v)
        req.initial[v] = hyp ? 0.25 + 0.25 * static_cast<double>(v % 3) : 1.0 + 0.5 * static_cast<double>(v % 3);
    }
    req.bc.kind = static_cast<Boundary>(boundary.value());
    req.bc.radius = boundary_radius.value();
    req.bc.corners = static_cast<std::size_t>(corners.value());
    req.bc.corner_angle = corner_angle.value() * kDeg;
    req.algorithm = algorithm.value();
    req.precision = precision.value();
    req.tolerance = tolerance.value();
    req.max_iterations = static_cast<std::size_t>(max_iterations.value());
    req.normalisation = normalisation.value();
    const Device dev = device.resolve(ctx);
    const Solved s = solve(ctx, *m, req, dev);
    packing.set(to_packing(s.layout, s.setup.problem.geometry, *m));
    history.set(history_table(s.result));
    report.set(solve_report(s, req).table());
    ctx.info(fmt::format("{} circles packed by {} in {} iterations, angle error {:.3g}, closing error {:.3g}",
                         m->vertices.size(), name_of(s.used), s.result.iterations, s.result.error,
                         s.layout.closing_error));
    ctx.progress(1.0);
  }

 private:
  // Values wrong whatever the mesh, named as parameters: the packing code can only say "input 'mesh'".
  void check_parameters() const {
    const Bc bc = boundary.value();
    const bool polygon = bc == Bc::angle_sums || bc == Bc::lines;
    if (bc == Bc::fixed_radii && !(boundary_radius.value() > 0))
      throw InputError(fmt::format("parameter 'boundary_radius' = {}: boundary fixed_radii needs a radius > 0",
                                   boundary_radius.value()));
    if (polygon && corners.value() > 0 && corners.value() < 3)
      throw InputError(
          fmt::format("parameter 'corners' = {}: a polygon needs at least 3 corners (0: automatic)", corners.value()));
    if (polygon && corner_angle.value() >= 180)
      throw InputError(
          fmt::format("parameter 'corner_angle' = {} deg: a corner's interior angle must be below 180 "
                      "(0: the regular polygon's)",
                      corner_angle.value()));
    if (normalisation.value() == Normalisation::polygon && bc != Bc::lines)
      throw InputError("parameter 'normalisation' = polygon needs boundary lines (side 1 is one of the lines)");
  }
  // More corners than boundary vertices is the parameter's fault for this mesh: named as such
  // (the packing code can only say "input 'mesh'").
  void check_corners(const TriMesh& m) const {
    const Bc bc = boundary.value();
    if ((bc != Bc::angle_sums && bc != Bc::lines) || corners.value() <= 0) return;
    std::size_t most = 0;
    for (const auto& loop : boundary_loops(m.vertices.size(), m.faces)) most = std::max(most, loop.size());
    if (static_cast<std::uint64_t>(corners.value()) > most)
      throw InputError(
          fmt::format("parameter 'corners' = {}: the mesh's boundary has only {} vertices", corners.value(), most));
  }
};

class LayoutNode final : public Node {
 public:
  static NodeInfo info() {
    return {.id = "circlepack.layout",
            .version = 1,
            .title = "Circle layout",
            .category = "Circle packing",
            .doc =
                "Places the circles of a Euclidean packing from their radii: the seed face's first circle at the "
                "origin and its second on the x axis, then breadth first, each circle tangent to two placed "
                "neighbours; reports how well the last circles close up (closing_error: max over edges of "
                "|‖c_i − c_j‖ − (r_i + r_j)|/(r_i + r_j)) and normalises.",
            .errors =
                "A hyperbolic packing (circlepack.pack lays those out itself); a seed face out of range; a "
                "packing whose faces are not a disk.",
            .memory = "About 100 bytes per circle.",
            .determinism = "Deterministic.",
            .references = "Collins & Stephenson 2003, §5; Stephenson 2005, §6.1."};
  }
  Input<CirclePacking> in{this, "packing", "Euclidean packing (radii are used, centres recomputed)"};
  Output<CirclePacking> out{this, "packing", "The packing with new centres (and radii scaled by the normalisation)"};
  Output<Table> report{this, "report", "metric, value: closing_error, seed_face"};
  Param<std::int64_t> seed_face{
      this, "seed_face", -1, {.min = -1, .doc = "Face to start from; −1: at the deepest vertex"}};
  Choice<Normalisation> normalisation{
      this,
      "normalisation",
      Normalisation::unit_disk,
      {{Normalisation::unit_disk, "unit_disk"}, {Normalisation::none, "none"}},
      {.doc = "unit_disk: every circle inside the unit disk, touching it; none: as placed"}};

  void execute(NodeContext& ctx) override {
    const auto p = in.get();
    if (auto why = p->validate()) throw InputError("input 'packing': " + *why);
    if (p->geometry != CirclePacking::Geometry::Euclidean)
      throw InputError("input 'packing' is hyperbolic: circlepack.pack lays out maximal packings itself");
    LayoutOptions lo;
    lo.seed_face = seed_face.value();
    lo.normalisation = normalisation.value();
    const Layout L = with_input("packing", [&] {
      const Complex K = build_complex(p->size(), std::vector<Face>(p->faces.begin(), p->faces.end()));
      return layout(K, Geometry::euclidean, p->radii, lo);
    });
    CirclePacking r = *p;
    r.centres = L.centres;
    r.radii = L.radii;
    out.set(std::move(r));
    report.set(Report().add("closing_error", L.closing_error).add("seed_face", L.seed_face).table());
    ctx.info(fmt::format("layout from face {}: closing error {:.3g}", L.seed_face, L.closing_error));
  }
};

/// A conformal flattening keeps each face's angles, which a face of zero area (gemflow::zero_area,
/// io.read_mesh's test) does not have: a mesh read with `require: any` once flattened such faces
/// into flipped triangles with an infinite conformal distortion, and exit 0.
void refuse_zero_area_faces(const std::vector<std::array<double, 3>>& xyz,
                            const std::vector<std::array<Index, 3>>& faces) {
  std::vector<std::size_t> bad;
  for (std::size_t f = 0; f < faces.size(); ++f)
    if (zero_area(xyz[faces[f][0]], xyz[faces[f][1]], xyz[faces[f][2]])) bad.push_back(f);
  if (bad.empty()) return;
  std::string list;
  for (std::size_t i = 0; i < std::min<std::size_t>(bad.size(), 10); ++i) list += (i ? ", " : "") + std::to_string(bad[i]);
  if (bad.size() > 10) list += ", …";
  throw InputError("input 'mesh': " + std::to_string(bad.size()) + " face(s) of zero area (0-based: " + list +
                   "): a flattening keeps each face's angles, which these do not have (io.read_mesh with require: "
                   "disk or manifold refuses them)");
}

class FlattenNode final : public Node {
 public:
  enum class Bc { geometry, maximal };
  static NodeInfo info() {
    return {.id = "circlepack.flatten",
            .version = 1,
            .title = "Conformal flattening",
            .category = "Circle packing",
            .doc =
                "Flattens a disk-type 3D mesh by circle packing (Thurston's discrete conformal map): packs the "
                "mesh's triangulation, lays it out, and gives each vertex its circle's centre as planar "
                "coordinates (UVs): `mesh` is the input with those texture coordinates (io.write_mesh writes "
                "them), `flat` the planar mesh (u, v, 0), with the same UVs. Boundary: geometry (boundary radii from "
                "the mesh's own edge lengths, each "
                "vertex's mean incircle tangent length: the flat mesh keeps the boundary's scale; a planar mesh "
                "that is a tangency carrier comes back unchanged up to a similarity) or maximal (the unit disk). "
                "Initial radii from the mesh's edge lengths. Reports angle, conformal (σ₁/σ₂) and area distortion "
                "per face against the 3D mesh. A tangency packing sees only the combinatorics: a mesh of very "
                "uneven triangles flattens with large area distortion (the report says how much).",
            .errors =
                "The mesh not a disk (components, Euler characteristic, boundary loops named), non-manifold "
                "or flipped (indices named); faces of zero area (indices named: they have no angles to keep); "
                "maximal with an ear (a face of three boundary vertices).",
            .memory = "About 400 bytes per vertex (the mesh is copied once more, with its UVs, into `mesh`).",
            .determinism = "Deterministic.",
            .references =
                "Thurston (1985); Rodin & Sullivan, J. Diff. Geom. 26 (1987) 349–360; Hurdal & Stephenson, "
                "NeuroImage 23 (2004) S119–S128; Collins & Stephenson 2003."};
  }
  Input<TriMesh> mesh{this, "mesh", "Disk-type 3D mesh"};
  Output<TriMesh> textured{this, "mesh", "The input mesh with texture coordinates (u, v) from the flattening"};
  Output<TriMesh> flat{this, "flat", "The flattening: same faces, vertex (u, v, 0), the same UVs"};
  Output<CirclePacking> packing{this, "packing", "The packing laid out"};
  Output<Table> report{this, "report", "metric, value: packing and distortion statistics"};
  Choice<Bc> boundary{this,
                      "boundary",
                      Bc::geometry,
                      {{Bc::geometry, "geometry"}, {Bc::maximal, "maximal"}},
                      {.doc = "geometry: boundary radii from the mesh's edge lengths; maximal: unit disk"}};
  Choice<AlgoChoice> algorithm{
      this,
      "algorithm",
      AlgoChoice::automatic,
      {{AlgoChoice::automatic, "auto"}, {AlgoChoice::cs, "cs"}, {AlgoChoice::newton, "newton"}},
      {.doc = "auto: newton (geometry), cs (maximal)"}};
  Param<double> tolerance{this, "tolerance", 1e-10, {.min = 1e-15, .unit = "rad", .doc = "Angle-sum tolerance"}};
  Param<std::int64_t> max_iterations{this, "max_iterations", 200000, {.min = 1, .doc = "Iterations at most"}};

  void execute(NodeContext& ctx) override {
    const auto m = mesh.get();
    if (auto why = m->validate()) throw InputError("input 'mesh': " + *why);
    // A flattening is similar whatever the mesh's size: it is computed on the mesh scaled by a
    // power of two (exact) to an extent of about 1, so that the squared lengths and areas of a
    // mesh at 1e-200 or 1e200 neither underflow nor overflow, and the UVs are scaled back.
    const double unit = extent_unit(m->vertices);
    std::vector<std::array<double, 3>> xyz = m->vertices;
    for (auto& p : xyz) p = {p[0] / unit, p[1] / unit, p[2] / unit};
    refuse_zero_area_faces(xyz, m->faces);
    // the packing's unknowns are the interior vertices: a mesh with none (a single triangle) has
    // nothing to flatten, whichever boundary mode (the setup's message named the internal one)
    std::size_t on_boundary = 0;
    for (const auto& loop : m->boundary) on_boundary += loop.size();
    if (on_boundary == m->vertices.size())
      throw InputError("input 'mesh': all " + std::to_string(on_boundary) +
                       " vertices are on the boundary: a flattening by circle packing needs an interior vertex");
    SolveRequest req;
    req.unit = unit;
    const std::vector<double> tr = tangent_radii(xyz, faces_of(*m));
    if (boundary.value() == Bc::geometry) {
      req.bc.kind = Boundary::fixed_radii;
      req.bc.from_initial = true;
      req.initial = tr;
      req.normalisation = Normalisation::none;
      req.scale_source = "input 'mesh': its largest boundary radius (from the edge lengths)";
      req.scale_hint = " (scale the mesh, or use boundary maximal)";
    } else {
      req.bc.kind = Boundary::maximal;
      req.normalisation = Normalisation::unit_disk;
    }
    req.algorithm = algorithm.value();
    req.tolerance = tolerance.value();
    req.max_iterations = static_cast<std::size_t>(max_iterations.value());
    Device cpu;
    Solved s = solve(ctx, *m, req, cpu);
    TriMesh f;
    f.faces = m->faces;
    f.boundary = m->boundary;
    std::vector<std::array<double, 2>> uv(m->vertices.size()), uv_unit(m->vertices.size());
    for (std::size_t v = 0; v < m->vertices.size(); ++v) {
      uv[v] = s.layout.centres[v];
      uv_unit[v] = {uv[v][0] / req.unit, uv[v][1] / req.unit};
      f.vertices.push_back({uv[v][0], uv[v][1], 0.0});
    }
    f.uv = uv;
    TriMesh t = *m;
    t.uv = uv;
    const Distortion d = distortion(xyz, uv_unit, faces_of(*m));
    Report r = solve_report(s, req);
    r.add("angle_distortion_mean_deg", d.angle_mean_deg)
        .add("angle_distortion_max_deg", d.angle_max_deg)
        .add("conformal_distortion_mean", d.conformal_mean)
        .add("conformal_distortion_max", d.conformal_max)
        .add("area_log_distortion_mean_abs", d.area_log_mean_abs)
        .add("area_log_distortion_max_abs", d.area_log_max_abs)
        .add("flipped_faces", d.flipped_faces)
        .add("vertices", m->vertices.size())
        .add("faces", m->faces.size());
    flat.set(std::move(f));
    textured.set(std::move(t));
    packing.set(to_packing(s.layout, s.setup.problem.geometry, *m));
    report.set(r.table());
    if (d.flipped_faces > 0) ctx.warn(fmt::format("{} faces are flipped in the flattening", d.flipped_faces));
    ctx.info(
        fmt::format("flattened {} vertices: angle distortion mean {:.3g}°, max {:.3g}°; conformal σ₁/σ₂ mean {:.4g}",
                    m->vertices.size(), d.angle_mean_deg, d.angle_max_deg, d.conformal_mean));
    ctx.progress(1.0);
  }
};

class DrawNode final : public Node {
 public:
  static NodeInfo info() {
    return {.id = "circlepack.draw",
            .version = 1,
            .title = "Draw packing",
            .category = "Circle packing",
            .doc =
                "Rasterises a packing: circles filled by colour (log radius, or the angle-sum error |θ − 2π| of "
                "interior circles recomputed from the radii), the triangulation's edges from centre to centre in "
                "grey, black outlines; hyperbolic packings with the unit circle. Anti-aliased, white background, "
                "RGBA8 (sRGB); write it with io.write_image.",
            .errors = "An invalid packing (its validate() reason).",
            .memory = "width·height·4 bytes.",
            .determinism = "Deterministic."};
  }
  enum class ColourBy { radius, angle_error, none };
  Input<CirclePacking> in{this, "packing", "Packing with centres"};
  Output<Image> image{this, "image", "The drawing (RGBA8)"};
  Param<std::int64_t> width{this, "width", 800, {.min = 16, .max = 16384, .unit = "px", .doc = "Image width"}};
  Param<std::int64_t> height{this, "height", 800, {.min = 16, .max = 16384, .unit = "px", .doc = "Image height"}};
  Choice<ColourBy> colour_by{
      this,
      "colour_by",
      ColourBy::radius,
      {{ColourBy::radius, "radius"}, {ColourBy::angle_error, "angle_error"}, {ColourBy::none, "none"}},
      {.doc = "Fill colour: log radius, angle error of interior circles, or none"}};
  Param<bool> edges{this, "edges", true, {.doc = "Draw the triangulation's edges"}};

  void execute(NodeContext& ctx) override {
    const auto p = in.get();
    if (auto why = p->validate()) throw InputError("input 'packing': " + *why);
    std::vector<double> values(p->size(), std::numeric_limits<double>::quiet_NaN());
    if (colour_by.value() == ColourBy::radius) {
      for (std::size_t v = 0; v < p->size(); ++v) values[v] = std::log(p->radii[v]);
    } else if (colour_by.value() == ColourBy::angle_error && p->geometry == CirclePacking::Geometry::Euclidean) {
      const Complex K = with_input(
          "packing", [&] { return build_complex(p->size(), std::vector<Face>(p->faces.begin(), p->faces.end())); });
      const auto th = angle_sums(K, Geometry::euclidean, p->radii);
      for (std::size_t v = 0; v < p->size(); ++v)
        if (!K.boundary[v]) values[v] = std::abs(th[v] - 2 * std::numbers::pi);
    }
    DrawOptions o;
    o.width = static_cast<std::size_t>(width.value());
    o.height = static_cast<std::size_t>(height.value());
    o.edges = edges.value();
    o.colouring = colour_by.value() == ColourBy::none ? Colouring::none : Colouring::radius;
    Image img(o.width, o.height, Image::Format::RGBA8);
    const Raster r = draw(p->centres, p->radii, std::vector<Face>(p->faces.begin(), p->faces.end()), values,
                          p->geometry == CirclePacking::Geometry::Hyperbolic, o);
    img.u8 = r.rgba;
    image.set(std::move(img));
    ctx.progress(1.0);
  }
};

}  // namespace

void register_pack_nodes(PluginRegistrar& r) {
  r.add_node<PackNode>();
  r.add_node<LayoutNode>();
  r.add_node<FlattenNode>();
  r.add_node<DrawNode>();
}

}  // namespace gemflow::circlepack
