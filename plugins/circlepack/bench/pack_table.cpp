// The seed's table, for every algorithm: the equilateral triangle of n = 10, 50, 100 layers
// (N = 55, 1275, 5050 circles, sides as lines), to ε = 1e-5 and 1e-8 in fp64 and 1e-3 in fp32;
// then generated disks of N ≈ 10⁵ and 10⁶ circles (random-flip hexagonal disks, boundary radii
// fixed at 1) to 1e-10. Prints a Markdown table: iterations, seconds, and the speed-up over plain
// serial Collins–Stephenson (cs_plain) run in the same process on the same problem.
//
// Usage: circlepack_bench_pack_table [--quick] [--big] [--huge] [--gpu-only] [--budget SECONDS]
//   --gpu-only: skip the CPU algorithms (the 10⁶ disk's CPU runs take minutes);
//   --quick: n = 10 and 50 only;  --big: also the 10⁵ disk;  --huge: also the 10⁶ disk;  --budget: wall-clock limit
//   per run (default 120 s); a run that hits it is reported with the error it reached, and a
//   speed-up against it as a lower bound ("> x").
// GPU rows appear when the plugin was built with CUDA and a device is present; gpu_newton runs
// twice: with its default CG (one kernel of one block up to GpuOptions::cg_single_block_max
// unknowns, labelled "CG in one block") and with the multi-kernel CG forced ("CG multi-kernel");
// a second table gives gpu_newton's time per phase (setup and upload, weights and CG, line search,
// error checks, download and host check).
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include <gemflow/circlepack/complex.hpp>
#include <gemflow/circlepack/pack.hpp>
#if GEMFLOW_CIRCLEPACK_HAVE_CUDA
#include <gemflow/circlepack/pack_cuda.hpp>
#endif

using namespace gemflow::circlepack;

namespace {

struct Row {
  std::string problem, algorithm, precision;
  double tol;
  std::size_t iterations;
  double seconds, error;
  bool converged;
  double baseline;  // cs_plain's seconds on the same problem (negative: it hit the budget)
  std::vector<std::pair<std::string, double>> phases;  // gpu_newton: where the time went
};

struct Runner {
  double budget;
  bool gpu_only = false;
  std::vector<Row> rows;

  void run(const std::string& name, const PackSetup& S, double tol, Precision pr, bool with_gpu) {
    double base = 0;
    bool base_done = false;
    auto record = [&](const std::string& algo, const PackResult& r) {
      if (algo == "cs_plain") base = r.converged ? r.seconds : -r.seconds, base_done = true;
      rows.push_back({name, algo, pr == Precision::fp64 ? "fp64" : "fp32", tol, r.iterations, r.seconds, r.error,
                      r.converged, base, r.phases});
      std::fprintf(stderr, "  %s %s %s %.0e: %zu its, %.4g s, error %.3g%s\n", name.c_str(), algo.c_str(),
                   rows.back().precision.c_str(), tol, r.iterations, r.seconds, r.error,
                   r.converged ? "" : " (budget)");
    };
    for (Algorithm a : {Algorithm::cs_plain, Algorithm::cs, Algorithm::newton}) {
      if (gpu_only) break;
      if (a == Algorithm::newton && (pr != Precision::fp64 || S.problem.geometry != Geometry::euclidean)) continue;
      PackOptions o;
      o.algorithm = a;
      o.precision = pr;
      o.tolerance = tol;
      o.history_every = 0;
      const auto t0 = std::chrono::steady_clock::now();
      o.monitor = [&](std::size_t, double) {
        return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count() < budget;
      };
      const PackResult r = pack(S.complex, S.problem, o);
      record(a == Algorithm::cs_plain ? "cs_plain" : a == Algorithm::cs ? "cs" : "newton", r);
    }
    (void)base_done;
#if GEMFLOW_CIRCLEPACK_HAVE_CUDA
    if (with_gpu && cuda::device_count() > 0)
      for (auto m : {cuda::GpuMethod::coloured_gs, cuda::GpuMethod::jacobi, cuda::GpuMethod::newton}) {
        if (m == cuda::GpuMethod::newton && (pr != Precision::fp64 || S.problem.geometry != Geometry::euclidean))
          continue;
        cuda::GpuOptions o;
        o.method = m;
        o.precision = pr;
        o.tolerance = tol;
        const auto t0 = std::chrono::steady_clock::now();
        o.monitor = [&](std::size_t, double) {
          return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count() < budget;
        };
        (void)cuda::pack_gpu(S.complex, S.problem, o);  // warm-up: context, module load
        const PackResult r = cuda::pack_gpu(S.complex, S.problem, o);
        record(m == cuda::GpuMethod::coloured_gs                                       ? "gpu_coloured_gs"
               : m == cuda::GpuMethod::jacobi                                          ? "gpu_jacobi"
               : o.cg_single_block_max > 0 && S.complex.n <= o.cg_single_block_max + 1 ? "gpu_newton (CG in one block)"
                                                                                       : "gpu_newton",
               r);
        if (m == cuda::GpuMethod::newton && o.cg_single_block_max > 0) {  // the multi-kernel CG, same problem
          o.cg_single_block_max = 0;
          const PackResult mk = cuda::pack_gpu(S.complex, S.problem, o);
          record("gpu_newton (CG multi-kernel)", mk);
          std::fprintf(stderr, "  %s gpu_newton: %zu CG iterations (one block or default) vs %zu (multi-kernel)\n",
                       name.c_str(), r.inner_iterations, mk.inner_iterations);
        }
      }
#else
    (void)with_gpu;
#endif
  }

  void print() const {
    std::printf("| problem | algorithm | precision | ε | iterations | seconds | final error | vs cs_plain |\n");
    std::printf("|---|---|---|---|---:|---:|---:|---:|\n");
    for (const auto& r : rows) {
      char ratio[64];
      if (r.algorithm == "cs_plain") std::snprintf(ratio, sizeof ratio, "1 (baseline)");
      else if (!r.converged) std::snprintf(ratio, sizeof ratio, "— (budget)");
      else if (r.baseline == 0) std::snprintf(ratio, sizeof ratio, "— (no CPU run)");
      else if (r.baseline < 0) std::snprintf(ratio, sizeof ratio, "> %.3g×", -r.baseline / r.seconds);
      else std::snprintf(ratio, sizeof ratio, "%.3g×", r.baseline / r.seconds);
      std::printf("| %s | %s | %s | %.0e | %zu%s | %.4g | %.2g | %s |\n", r.problem.c_str(), r.algorithm.c_str(),
                  r.precision.c_str(), r.tol, r.iterations, r.converged ? "" : " (stopped)", r.seconds, r.error, ratio);
    }
    bool any = false;  // gpu_newton's phases (each ends at a host synchronisation)
    for (const auto& r : rows) {
      if (r.phases.empty()) continue;
      if (!any) {
        std::printf("\n| problem | algorithm | ε | seconds |");
        for (const auto& [phase, s] : r.phases) std::printf(" %s |", phase.c_str());
        std::printf("\n|---|---|---|---:|");
        for (std::size_t k = 0; k < r.phases.size(); ++k) std::printf("---:|");
        std::printf("\n");
        any = true;
      }
      std::printf("| %s | %s | %.0e | %.4g |", r.problem.c_str(), r.algorithm.c_str(), r.tol, r.seconds);
      for (const auto& [phase, s] : r.phases) std::printf(" %.4g |", s);
      std::printf("\n");
    }
  }
};

PackSetup triangle(std::size_t layers) {
  const Lattice L = triangle_lattice(layers);
  BoundarySpec bc;
  bc.kind = Boundary::lines;
  std::vector<double> start(L.points.size());
  for (std::size_t v = 0; v < start.size(); ++v) start[v] = 1.0 + 0.5 * static_cast<double>(v % 3);
  return setup_problem(L.points.size(), L.faces, bc, start);
}

}  // namespace

int main(int argc, char** argv) {
  bool quick = false, big = false, huge = false, gpu_only = false;
  double budget = 120;
  for (int i = 1; i < argc; ++i) {
    if (!std::strcmp(argv[i], "--quick")) quick = true;
    else if (!std::strcmp(argv[i], "--big")) big = true;
    else if (!std::strcmp(argv[i], "--huge")) big = huge = true;
    else if (!std::strcmp(argv[i], "--gpu-only")) gpu_only = true;
    else if (!std::strcmp(argv[i], "--budget") && i + 1 < argc) budget = std::atof(argv[++i]);
    else {
      std::fprintf(stderr, "usage: %s [--quick] [--big] [--huge] [--gpu-only] [--budget SECONDS]\n", argv[0]);
      return 2;
    }
  }
  Runner R{budget, gpu_only, {}};
  std::vector<std::size_t> layers = {10, 50};
  if (!quick) layers.push_back(100);
  for (std::size_t n : layers) {
    const PackSetup S = triangle(n);
    const std::string name = "triangle n=" + std::to_string(n) + " (N=" + std::to_string(n * (n + 1) / 2) + ")";
    R.run(name, S, 1e-5, Precision::fp64, true);
    R.run(name, S, 1e-8, Precision::fp64, true);
    R.run(name, S, 1e-3, Precision::fp32, true);
  }
  if (big)
    for (std::size_t rings : {182u, 577u}) {  // 99 919 and 1 000 519 circles
      if (rings == 577 && !huge) continue;
      const Lattice L = random_disk(rings, 1);
      BoundarySpec bc;
      const PackSetup S = setup_problem(L.points.size(), L.faces, bc);
      R.run("random disk N=" + std::to_string(L.points.size()), S, 1e-10, Precision::fp64, true);
    }
  R.print();
  return 0;
}
