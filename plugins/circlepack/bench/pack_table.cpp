// The seed's table, for every algorithm: the equilateral triangle of n = 10, 50, 100 layers
// (N = 55, 1275, 5050 circles, sides as lines), to ε = 1e-5 and 1e-8 in fp64 and 1e-3 in fp32;
// then generated disks of N ≈ 10⁵ and 10⁶ circles (random-flip hexagonal disks, boundary radii
// fixed at 1) to 1e-10. Prints a Markdown table: iterations, seconds, and the speed-up over plain
// serial Collins–Stephenson (cs_plain) run in the same process on the same problem.
//
// Usage: circlepack_bench_pack_table [--quick] [--big] [--huge] [--gpu-only] [--budget SECONDS]
//        circlepack_bench_pack_table --goals | --cutover
//   --gpu-only: skip the CPU algorithms (the 10⁶ disk's CPU runs take minutes);
//   --quick: n = 10 and 50 only;  --big: also the 10⁵ disk;  --huge: also the 10⁶ disk;  --budget: wall-clock limit
//   per run (default 120 s); a run that hits it is reported with the error it reached, and a
//   speed-up against it as a lower bound ("> x").
// GPU rows appear when the plugin was built with CUDA and a device is present; gpu_newton runs
// twice: with its default CG (one kernel of one block up to GpuOptions::cg_single_block_max
// unknowns, labelled "CG in one block") and with the multi-kernel CG forced ("CG multi-kernel");
// a second table gives gpu_newton's time per phase (setup and upload, weights and CG, line search,
// error checks, download and host check).
//
// --goals: the speed goals only, one short run (needs a CUDA device): the seed's N = 5050
//   triangle to 1e-8 in fp64 (goal ≤ 5 ms on the GPU, ≤ 50 ms on the CPU), gpu_newton with each CG
//   path, best and median of 10 runs after a warm-up, against CPU newton and cs_plain; then the
//   N ≈ 10⁶ disk to 1e-10 (goal ≤ 1 s end to end: upload, solve, download and the host's fp64
//   check), best of 2 (the context is warm from the first problem), with the phase table.
// --cutover: gpu_newton to 1e-10 on random disks of N ≈ 10³ … 10⁵ with the CG forced into one
//   block and forced multi-kernel (best of 3 after a warm-up each): the table gives both times and
//   their ratio per size, and the smallest measured size from which multi-kernel wins — the value
//   for GpuOptions::cg_single_block_max.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
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

#if GEMFLOW_CIRCLEPACK_HAVE_CUDA
PackSetup disk(std::size_t rings) {
  const Lattice L = random_disk(rings, 1);
  return setup_problem(L.points.size(), L.faces, BoundarySpec{});
}

/// gpu_newton `runs` times (after one warm-up run when `warm_up`); the runs' seconds, sorted, and
/// the last result.
std::vector<double> time_gpu(const PackSetup& S, double tol, std::size_t single_max, int runs, PackResult& last,
                             bool warm_up = true) {
  cuda::GpuOptions o;
  o.method = cuda::GpuMethod::newton;
  o.tolerance = tol;
  o.cg_single_block_max = single_max;
  if (warm_up) (void)cuda::pack_gpu(S.complex, S.problem, o);
  std::vector<double> t;
  for (int k = 0; k < runs; ++k) {
    last = cuda::pack_gpu(S.complex, S.problem, o);
    t.push_back(last.seconds);
  }
  std::sort(t.begin(), t.end());
  return t;
}

void print_phases(const char* label, const PackResult& r) {
  std::printf("| %s | %.4g |", label, r.seconds);
  for (const auto& [phase, s] : r.phases) std::printf(" %s %.4g |", phase.c_str(), s);
  std::printf("\n");
}

int goals() {
  const PackSetup S = triangle(100);
  std::printf("## gpu_newton goals (fp64)\n\n");
  std::printf("| problem | ε | path | best s | median s | iterations | CG iterations | error | goal |\n");
  std::printf("|---|---|---|---:|---:|---:|---:|---:|---|\n");
  PackOptions co;
  co.algorithm = Algorithm::newton;
  co.tolerance = 1e-8;
  co.history_every = 0;
  (void)pack(S.complex, S.problem, co);
  std::vector<double> cpu;
  PackResult cr;
  for (int k = 0; k < 5; ++k) cr = pack(S.complex, S.problem, co), cpu.push_back(cr.seconds);
  std::sort(cpu.begin(), cpu.end());
  std::printf("| triangle N=5050 | 1e-08 | CPU newton | %.4g | %.4g | %zu | %zu | %.2g | ≤ 0.05 s: %s |\n", cpu[0],
              cpu[2], cr.iterations, cr.inner_iterations, cr.error, cpu[2] <= 0.05 && cr.converged ? "met" : "missed");
  PackResult last[2];
  const std::size_t paths[2] = {SIZE_MAX, 0};
  const char* names[2] = {"GPU CG in one block", "GPU CG multi-kernel"};
  for (int k = 0; k < 2; ++k) {
    const auto t = time_gpu(S, 1e-8, paths[k], 10, last[k]);
    std::printf("| triangle N=5050 | 1e-08 | %s | %.4g | %.4g | %zu | %zu | %.2g | ≤ 0.005 s: %s |\n", names[k], t[0],
                t[5], last[k].iterations, last[k].inner_iterations, last[k].error,
                t[5] <= 0.005 && last[k].converged ? "met" : "missed");
  }
  const PackSetup B = disk(577);  // 1 000 519 circles, boundary radii 1
  PackResult big;
  const auto tb = time_gpu(B, 1e-10, cuda::GpuOptions{}.cg_single_block_max, 2, big, false);
  std::printf(
      "| random disk N=%zu | 1e-10 | GPU default (multi-kernel) | %.4g | %.4g | %zu | %zu | %.2g | ≤ 1 s: %s |\n",
      B.complex.n, tb[0], tb[1], big.iterations, big.inner_iterations, big.error,
      tb[0] <= 1 && big.converged ? "met" : "missed");
  std::printf("\nSeconds per phase (last run of each):\n\n");
  print_phases("N=5050, one block", last[0]);
  print_phases("N=5050, multi-kernel", last[1]);
  print_phases("N=10^6", big);
  return 0;
}

int cutover() {
  std::printf("## gpu_newton CG paths by size (fp64, ε = 1e-10, random disks, boundary radii fixed)\n\n");
  std::printf("| N | unknowns | one block s | multi-kernel s | multi/one | CG its (one block) | CG its (multi) |\n");
  std::printf("|---:|---:|---:|---:|---:|---:|---:|\n");
  std::size_t cut = 0;
  for (std::size_t rings : {18u, 31u, 57u, 81u, 104u, 129u, 182u}) {  // N ≈ 1e3, 3e3, 1e4, 2e4, 3.3e4, 5e4, 1e5
    const PackSetup S = disk(rings);
    std::size_t unknowns = 0;
    for (std::size_t v = 0; v < S.complex.n; ++v) unknowns += S.problem.free(static_cast<Index>(v)) ? 1 : 0;
    PackResult one, multi;
    const auto t1 = time_gpu(S, 1e-10, SIZE_MAX, 3, one);
    const auto tm = time_gpu(S, 1e-10, 0, 3, multi);
    if (!one.converged || !multi.converged)
      std::fprintf(stderr, "N=%zu: not converged (one block error %.3g, multi-kernel %.3g)\n", S.complex.n, one.error,
                   multi.error);
    if (tm[0] < t1[0] && cut == 0) cut = unknowns;
    if (tm[0] >= t1[0]) cut = 0;  // the cut-over is where multi-kernel stays faster
    std::printf("| %zu | %zu | %.4g | %.4g | %.3g | %zu | %zu |\n", S.complex.n, unknowns, t1[0], tm[0], tm[0] / t1[0],
                one.inner_iterations, multi.inner_iterations);
    std::fflush(stdout);
  }
  if (cut) std::printf("\nmulti-kernel is faster from %zu unknowns on (measured sizes)\n", cut);
  else std::printf("\none block is faster at every measured size\n");
  return 0;
}
#endif

}  // namespace

int main(int argc, char** argv) {
  if (argc == 2 && (!std::strcmp(argv[1], "--goals") || !std::strcmp(argv[1], "--cutover"))) {
#if GEMFLOW_CIRCLEPACK_HAVE_CUDA
    if (cuda::device_count() == 0) {
      std::fprintf(stderr, "%s needs a CUDA device; none found\n", argv[1]);
      return 1;
    }
    return !std::strcmp(argv[1], "--goals") ? goals() : cutover();
#else
    std::fprintf(stderr, "%s needs Gemflow built with CUDA\n", argv[1]);
    return 1;
#endif
  }
  bool quick = false, big = false, huge = false, gpu_only = false;
  double budget = 120;
  for (int i = 1; i < argc; ++i) {
    if (!std::strcmp(argv[i], "--quick")) quick = true;
    else if (!std::strcmp(argv[i], "--big")) big = true;
    else if (!std::strcmp(argv[i], "--huge")) big = huge = true;
    else if (!std::strcmp(argv[i], "--gpu-only")) gpu_only = true;
    else if (!std::strcmp(argv[i], "--budget") && i + 1 < argc) budget = std::atof(argv[++i]);
    else {
      std::fprintf(stderr,
                   "usage: %s [--quick] [--big] [--huge] [--gpu-only] [--budget SECONDS]\n"
                   "       %s --goals | --cutover\n",
                   argv[0], argv[0]);
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
