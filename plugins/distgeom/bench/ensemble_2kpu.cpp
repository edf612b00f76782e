// Benchmark: distgeom.ensemble's work on 2KPU (ensemble_2kpu_problem.hpp: the workflow's
// problem), phase by phase, on the CPU and on a CUDA device, every path from the same DG starts
// (computed once: trial k of seed 1, eigen embedding, as the workflow). Rows:
//  - cpu: anneal() per structure in host threads (as the node with device cpu), timed as its
//    parts: anneal_prepare (L-BFGS regularisation), the MD stages, anneal_finish (L-BFGS);
//  - cuda, host lists (baseline): cuda::anneal_batch with the earlier algorithm's host work:
//    repel pair lists built on the host every 20 steps (a round trip each), the L-BFGS
//    minimisations one structure at a time;
//  - cuda: cuda::anneal_batch as the node runs it (lists on the device, L-BFGS in threads).
// Columns: seconds per phase (starts: the DG trials of all structures in host threads, shared by
// every row), the total, the speed-up of the total against the baseline row and against the cpu
// row, and the ensemble's quality (mean final energy, accepted structures: no distance restraint
// violated by > 0.5 Å as the ensemble counts them and no dihedral by > 5°, mean backbone RMSD
// to the deposited model 1 over the ordered residues): the paths agree in distribution, not
// structure by structure (chaotic MD, other summation order).
// Usage: distgeom_bench_ensemble_2kpu [structures 20] [cpu structures: default all, 0 = no cpu
// row] [device 0]. Environment: THREADS (host threads, default all), BASELINE=0 (no baseline
// row), HOT, STAGES, PER, MIN (a shorter schedule for a quick check).
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <string>
#include <thread>
#include <vector>

#include <gemflow/distgeom/violations.hpp>

#include "ensemble_2kpu_problem.hpp"
#if GEMFLOW_DISTGEOM_HAVE_CUDA
#include <gemflow/distgeom/anneal_cuda.hpp>
#include <gemflow/distgeom/smoothing_cuda.hpp>
#endif

using namespace gemflow::distgeom;
using clk = std::chrono::steady_clock;

namespace {

double secs(clk::time_point a) { return std::chrono::duration<double>(clk::now() - a).count(); }

double env(const char* k, double d) {
  const char* v = std::getenv(k);
  return v ? std::atof(v) : d;
}

void parallel(std::size_t count, unsigned threads, const std::function<void(std::size_t)>& f) {
  std::atomic<std::size_t> next{0};
  std::vector<std::thread> pool;
  for (unsigned t = 0; t < std::min<std::size_t>(threads, count); ++t)
    pool.emplace_back([&] {
      for (std::size_t k = next.fetch_add(1); k < count; k = next.fetch_add(1)) f(k);
    });
  for (auto& t : pool) t.join();
}

struct Row {
  std::string path;
  std::size_t structures = 0;
  double prepare = 0, md = 0, finish = 0;
  std::vector<AnnealResult> results;
};

}  // namespace

int main(int argc, char** argv) {
  const std::size_t N = argc > 1 ? std::strtoul(argv[1], nullptr, 10) : 20;
  const std::size_t K = std::min(N, argc > 2 ? std::strtoul(argv[2], nullptr, 10) : N);
  const int device = argc > 3 ? std::atoi(argv[3]) : 0;
  const unsigned threads = static_cast<unsigned>(env("THREADS", std::max(1u, std::thread::hardware_concurrency())));
  const auto p = bench::load_2kpu(std::string(GEMFLOW_SOURCE_DIR) + "/sample_data/2kpu");
  const auto& t = p.terms;
  AnnealOptions ao;  // the node's defaults (ramachandran 50, hot 1/25 of it)
  ao.final.rama = 50.0;
  ao.hot.rama = 2.0;
  ao.hot_steps = static_cast<std::size_t>(env("HOT", static_cast<double>(ao.hot_steps)));
  ao.cooling_stages = static_cast<std::size_t>(env("STAGES", static_cast<double>(ao.cooling_stages)));
  ao.steps_per_stage = static_cast<std::size_t>(env("PER", static_cast<double>(ao.steps_per_stage)));
  ao.minimise_iterations = static_cast<std::size_t>(env("MIN", static_cast<double>(ao.minimise_iterations)));
  std::printf(
      "2KPU: %zu atoms, %zu distance and %zu dihedral restraints; %zu structures, %zu MD steps each, %u "
      "host threads\n",
      t.n, t.noes.size(), t.dihedrals.size(), N, ao.hot_steps + ao.cooling_stages * ao.steps_per_stage, threads);
  std::fflush(stdout);

  // DG starts as distgeom.ensemble: trial k of seed 1, annealing seed trial_seed(2, k)
  const std::uint64_t seed = 1;
  const auto tp = p.trial_problem();
  std::vector<std::vector<double>> starts(N);
  std::vector<std::uint64_t> seeds(N);
  auto t0 = clk::now();
  parallel(N, threads, [&](std::size_t k) {
    TrialOptions o;
    o.trials = 1;
    o.first_trial = k;
    o.seed = seed;
    o.dim = 4;
    o.method = EmbedMethod::Eigen;
    o.pivot_fraction = 0.25;
    o.threads = 1;
    o.parallel_hands = true;  // as the node
    starts[k] = run_trials(tp, o).refined.coords;
    seeds[k] = trial_seed(seed + 1, k);
  });
  const double t_starts = secs(t0);
  std::printf("starts: %.2f s\n", t_starts);
  std::fflush(stdout);

  std::vector<Row> rows;
  if (K > 0) {  // anneal() = anneal_prepare + the stages + anneal_finish, timed apart
    Row r{"cpu (" + std::to_string(threads) + " threads)", K, 0, 0, 0, std::vector<AnnealResult>(K)};
    t0 = clk::now();
    std::vector<std::vector<double>> prepared(K);
    parallel(K, threads, [&](std::size_t k) {
      AnnealOptions o = ao;
      o.seed = seeds[k];
      std::vector<double> x = starts[k], v;
      anneal_prepare(t, o, x, v);
      prepared[k] = std::move(x);
    });
    r.prepare = secs(t0);
    t0 = clk::now();
    parallel(K, threads, [&](std::size_t k) {
      AnnealOptions o = ao;
      o.seed = seeds[k];
      o.minimise_iterations = 0;  // the same velocities and stages, no minimisation
      r.results[k] = anneal(t, prepared[k], o);
    });
    r.md = secs(t0);
    t0 = clk::now();
    parallel(K, threads, [&](std::size_t k) {
      const auto steps = r.results[k].steps;
      r.results[k] = anneal_finish(t, ao, r.results[k].coords);
      r.results[k].steps = steps;
    });
    r.finish = secs(t0);
    rows.push_back(std::move(r));
    std::printf("%s done\n", rows.back().path.c_str());
    std::fflush(stdout);
  }
#if GEMFLOW_DISTGEOM_HAVE_CUDA
  if (cuda::device_count() > device) {
    for (const bool baseline : {true, false}) {
      if (baseline && env("BASELINE", 1) == 0) continue;
      cuda::AnnealBatchTimes times;
      cuda::AnnealBatchOptions bo;
      bo.threads = baseline ? 1 : threads;
      bo.host_pair_lists = baseline;
      bo.times = &times;
      Row r{baseline ? "cuda, host lists (baseline)" : "cuda", N, 0, 0, 0, {}};
      r.results = cuda::anneal_batch(t, starts, seeds, ao, device, bo);
      r.prepare = times.prepare, r.md = times.md, r.finish = times.finish;
      rows.push_back(std::move(r));
      std::printf("%s done\n", rows.back().path.c_str());
      std::fflush(stdout);
    }
  } else {
    std::printf("no CUDA device %d: cuda rows skipped\n", device);
  }
#else
  std::printf("built without CUDA: cuda rows skipped\n");
#endif

  double base_total = 0, cpu_total = 0;
  for (const auto& r : rows) {
    const double total = t_starts + r.prepare + r.md + r.finish;
    if (r.path.rfind("cuda, host lists", 0) == 0) base_total = total;
    if (r.path.rfind("cpu", 0) == 0 && r.structures == N) cpu_total = total;
  }
  std::printf("\n%-28s %6s %8s %9s %8s %9s %8s %9s %7s %10s %9s %10s\n", "path", "struct", "starts_s", "prepare_s",
              "md_s", "finish_s", "total_s", "vs_base", "vs_cpu", "E_mean", "accepted", "rmsd_mean");
  for (const auto& r : rows) {
    const double total = t_starts + r.prepare + r.md + r.finish;
    double e = 0, rmsd = 0;
    std::size_t acc = 0;
    for (const auto& a : r.results) {
      const auto v = restraint_violations(p.topo.atoms, a.coords, p.restraints, EquivalentSwap::Rings);
      const auto nv = static_cast<std::size_t>(std::count_if(
          v.restraints.begin(), v.restraints.end(), [](const RestraintViolation& x) { return x.violation > 0.5; }));
      acc += accepted(a, nv);
      e += a.energy.total / static_cast<double>(r.results.size());
      rmsd += p.rmsd(a.coords) / static_cast<double>(r.results.size());
    }
    auto ratio = [&](double ref) {
      return ref > 0 ? std::to_string(ref / total).substr(0, 5) + "x" : std::string("-");
    };
    std::printf("%-28s %6zu %8.2f %9.2f %8.2f %9.2f %8.2f %9s %7s %10.1f %5zu/%-3zu %10.2f\n", r.path.c_str(),
                r.structures, t_starts, r.prepare, r.md, r.finish, total, ratio(base_total).c_str(),
                ratio(cpu_total).c_str(), e, acc, r.results.size(), rmsd);
  }
  const double steps = static_cast<double>(ao.hot_steps + ao.cooling_stages * ao.steps_per_stage);
  for (const auto& r : rows)  // the cpu row's threads each run one structure at a time
    std::printf("%-28s MD %.1f us per step of all %zu structures\n", r.path.c_str(), r.md / steps * 1e6, r.structures);
  return 0;
}
