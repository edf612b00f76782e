// distgeom.triangle_smoothing: node adapter over gemflow/distgeom/smoothing.hpp.
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

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

#if defined(GEMFLOW_DISTGEOM_HAVE_CUDA)
// Smoothed bounds left on the GPU by distgeom.triangle_smoothing (a device-resident value): the
// arrays stay on the device, labels, atom indices and restraint ids (host data, small) are kept
// here; download() builds the DistanceBounds when a CPU consumer asks for it.
class DeviceSmoothedBounds final : public DeviceCopyOf<DistanceBounds> {
 public:
  DeviceSmoothedBounds(cuda::DeviceBounds arrays, const DistanceBounds& input)
      : arrays_(std::move(arrays)), labels_(input.labels), atom_index_(input.atom_index), restraint_(input.restraint) {}
  Device device() const override { return {Device::Kind::Cuda, arrays_.device()}; }
  std::size_t bytes() const override { return 2 * arrays_.n() * arrays_.n() * sizeof(double); }
  std::string summary() const override { return "bounds for " + std::to_string(arrays_.n()) + " atoms"; }
  std::shared_ptr<const DistanceBounds> download() const override {
    auto b = std::make_shared<DistanceBounds>();
    b->lower = Matrix<double>(arrays_.n(), arrays_.n());
    b->upper = Matrix<double>(arrays_.n(), arrays_.n());
    try {
      arrays_.download(b->lower.span(), b->upper.span());
    } catch (const cuda::CudaError& e) {
      throw DeviceError("cannot copy the smoothed bounds from " + device().str() + " to the host: " + e.what());
    }
    b->labels = labels_;
    b->atom_index = atom_index_;
    b->restraint = restraint_;
    return b;
  }
  /// The closure on the device (n×n fp64 row-major lower and upper, Å).
  const cuda::DeviceBounds& arrays() const { return arrays_; }

 private:
  cuda::DeviceBounds arrays_;
  std::vector<std::string> labels_;
  std::vector<std::size_t> atom_index_;
  Matrix<int> restraint_;
};
#endif

class TriangleSmoothing final : public Node {
 public:
  enum class Algorithm { Blocked, Reference };
  enum class Precision { Fp64, Fp32 };

  static NodeInfo info() {
    return {.id = "distgeom.triangle_smoothing",
            .version = 1,
            .title = "Triangle smoothing",
            .category = "Distance geometry",
            .doc =
                "Tightens distance bounds to their triangle-inequality closure: the smallest upper and "
                "largest lower bounds implied by all triangles (shortest paths on the Dress-Havel doubled "
                "graph).\n"
                "Inputs: bounds, DistanceBounds (Å, symmetric, zero diagonal, 0 ≤ L ≤ U; U = +inf allowed).\n"
                "Outputs: bounds, the smoothed DistanceBounds; labels, atom_index and restraint ids are "
                "copied from the input (ids describe the input bounds).\n"
                "Parameters: algorithm (blocked: tiled parallel Floyd-Warshall; reference: O(n³) per-k "
                "loop in fp64), tolerance (Å) for the L > U checks, precision (fp64 or fp32 arithmetic for "
                "blocked and cuda), threads (0 = all cores), device (cuda runs the GPU closure of "
                "smoothing_cuda.hpp, same result to rounding; algorithm and threads are then unused; the "
                "result stays on the GPU as a device-resident value, copied to the host when a CPU node "
                "reads it, and the copies are counted in provenance.json's transfers).",
            .errors =
                "Invalid input names the atom pair and values; inconsistent bounds name the first pair with "
                "L' > U' + tolerance and the chain of input bounds (with restraint ids) whose upper bounds sum "
                "to less than a lower bound.",
            .memory =
                "CPU 2·n² extra values (cuda: 4·n² doubles of device memory while it runs, 2·n² kept with "
                "the result).",
            .determinism =
                "Deterministic, independent of threads; blocked and reference agree bit for bit when all "
                "sums of input bounds are exact, else to rounding.",
            .references =
                "Dress & Havel, Discrete Appl. Math. 19 (1988) 129-144; Crippen & Havel 1988; Venkataraman, "
                "Sahni & Mukhopadhyaya, J. Exp. Algorithmics 8 (2003)."};
  }

  Input<DistanceBounds> in{this, "bounds", "Bounds to smooth (Å)"};
  Output<DistanceBounds> out{this, "bounds", "Triangle-closed bounds (Å)"};
  Choice<Algorithm> algorithm{this,
                              "algorithm",
                              Algorithm::Blocked,
                              {{Algorithm::Blocked, "blocked"}, {Algorithm::Reference, "reference"}},
                              {.doc = "blocked: cache-tiled, multi-threaded, SIMD; reference: simple O(n³) "
                                      "per-k loop accumulated in fp64 (slow; for checking)"}};
  Param<double> tolerance{
      this,
      "tolerance",
      kDefaultSmoothingTolerance,
      {.min = 0.0, .unit = "Å", .doc = "A pair is inconsistent when L > U + tolerance (input and result)"}};
  DeviceParam device{this, "auto"};
  Choice<Precision> precision{this,
                              "precision",
                              Precision::Fp64,
                              {{Precision::Fp64, "fp64"}, {Precision::Fp32, "fp32"}},
                              {.doc = "Arithmetic of the blocked and CUDA closures; fp32 is about twice as fast, "
                                      "relative rounding ~1e-7 per path sum (the reference is always fp64)"}};
  Param<std::int64_t> threads{
      this, "threads", 0, {.min = 0, .max = 1024, .doc = "CPU threads for blocked; 0 = all cores"}};

  void execute(NodeContext& ctx) override {
    const auto src = in.get();
    const DistanceBounds& b = *src;
    const std::size_t n = b.size();
    if (b.lower.rows() != n || b.lower.cols() != n || b.upper.rows() != n || b.upper.cols() != n)
      throw InputError("input 'bounds': lower is " + std::to_string(b.lower.rows()) + "×" +
                       std::to_string(b.lower.cols()) + " and upper " + std::to_string(b.upper.rows()) + "×" +
                       std::to_string(b.upper.cols()) + ", expected both n×n");
    if (!b.labels.empty() && b.labels.size() != n)
      throw InputError("input 'bounds' has " + std::to_string(b.labels.size()) + " labels for " + std::to_string(n) +
                       " atoms");
    const double tol = tolerance.value();
    if (auto d = check_bounds(b.lower.span(), b.upper.span(), n, tol))
      throw InputError("input 'bounds': " + defect_text(b, *d));

    const Device dev = device.resolve(ctx);
    DistanceBounds result;  // the CPU closure (the CUDA one stays on the device)
    if (!dev.is_cuda()) result = b;
    const CancelFn cb = [&ctx](double f) {
      ctx.progress(f, "triangle smoothing");
      return ctx.cancelled();
    };
    SmoothingReport rep;
    const bool fp32 = precision.value() == Precision::Fp32;
    if (dev.is_cuda()) {
      rep = run_cuda(ctx, dev, src, tol, fp32);
    } else if (algorithm.value() == Algorithm::Reference) {
      rep = smooth_bounds_reference(result.lower.span(), result.upper.span(), n, cb, tol);
    } else {
      SmoothingOptions o;
      o.threads = static_cast<unsigned>(threads.value());
      o.tolerance = tol;
      o.progress = cb;
      if (fp32) {
        std::vector<float> lo(b.lower.span().begin(), b.lower.span().end());
        std::vector<float> up(b.upper.span().begin(), b.upper.span().end());
        rep = smooth_bounds(std::span<float>(lo), std::span<float>(up), n, o);
        if (!rep.cancelled) {
          std::copy(lo.begin(), lo.end(), result.lower.data());
          std::copy(up.begin(), up.end(), result.upper.data());
        }
      } else {
        rep = smooth_bounds(result.lower.span(), result.upper.span(), n, o);
      }
    }
    if (rep.cancelled) throw Cancelled();
    const bool reference = algorithm.value() == Algorithm::Reference && !dev.is_cuda();
    ctx.record("algorithm", dev.is_cuda() ? "cuda" : reference ? "reference" : "blocked");
    ctx.record("precision", reference ? "fp64" : (fp32 ? "fp32" : "fp64"));
    ctx.record("changed_pairs", static_cast<std::int64_t>(rep.changed_pairs));
    if (!rep.consistent) throw Error("inconsistent bounds after smoothing: " + inconsistency_text(b, rep));
    ctx.info("triangle smoothing: " + std::to_string(rep.changed_pairs) + " of " +
             std::to_string(n * (n > 0 ? n - 1 : 0) / 2) + " pairs tightened");
    ctx.progress(1.0);
    if (!dev.is_cuda()) out.set(std::move(result));  // run_cuda set the device-resident result
  }

 private:
  // The CUDA path (algo/cuda/smoothing_cuda.hpp): the same checks and the same error text as the
  // CPU, the offending path explained on the CPU from the input bounds. The closure stays on the
  // device: the output is a device-resident value (DeviceSmoothedBounds) unless it is
  // inconsistent (the node fails) or cancelled. Until that library is built
  // (GEMFLOW_DISTGEOM_HAVE_CUDA), a clear DeviceError.
  SmoothingReport run_cuda(NodeContext& ctx, const Device& dev, const std::shared_ptr<const DistanceBounds>& src,
                           double tol, bool fp32) {
#if defined(GEMFLOW_DISTGEOM_HAVE_CUDA)
    const DistanceBounds& in_bounds = *src;
    const std::size_t n = in_bounds.size();
    cuda::HostOptions o;
    o.device = dev.index;
    o.precision = fp32 ? cuda::Precision::fp32 : cuda::Precision::fp64;
    o.tolerance = tol;
    o.control.cancelled = [&ctx] { return ctx.cancelled(); };
    o.control.progress = [&ctx](double f) { ctx.progress(f, "triangle smoothing (cuda)"); };
    cuda::ResidentSmoothing r;
    try {
      r = cuda::smooth_bounds_cuda_resident(in_bounds.lower.span(), in_bounds.upper.span(), n, nullptr, o);
    } catch (const cuda::CudaError& e) {
      throw DeviceError(dev.str() + ": " + e.what());
    }
    if (r.upload_bytes > 0) ctx.record_transfer(Transfer::ToDevice, r.upload_bytes, r.upload_seconds);
    SmoothingReport rep;
    rep.cancelled = r.result.cancelled;
    if (rep.cancelled) return rep;
    rep.consistent = r.result.consistency.consistent;
    rep.i = r.result.consistency.first_i;
    rep.j = r.result.consistency.first_j;
    rep.lower = r.result.consistency.first_lower;
    rep.upper = r.result.consistency.first_upper;
    rep.inconsistent_pairs = r.result.consistency.inconsistent_pairs;
    rep.changed_pairs = r.changed_pairs;
    if (!rep.consistent)
      rep.path = explain_inconsistency(in_bounds.lower.span(), in_bounds.upper.span(), n, rep.i, rep.j);
    else if (n == 0) out.set(in_bounds);  // nothing on the device
    else out.set_device(std::make_shared<const DeviceSmoothedBounds>(std::move(r.bounds), in_bounds));
    return rep;
#else
    (void)ctx, (void)src, (void)tol, (void)fp32;
    throw DeviceError("CUDA smoothing not built yet (device " + dev.str() + "); set 'device: cpu'");
#endif
  }
};

}  // namespace

void register_smoothing_nodes(PluginRegistrar& r) { r.add_node<TriangleSmoothing>(); }

}  // namespace gemflow::distgeom
