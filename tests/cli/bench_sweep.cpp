// Benchmarks of sweeps (docs/performance.md), run through the built `gemflow`:
//
// 1. Per-point overhead: a sweep of N points (default 1000) of a one-node workflow (test.constant,
//    microseconds of work), wall time minus the start-up of a 1-point sweep, over N; then the
//    same sweep again (every point done: the resume check alone). Goal: <= 20 ms a point.
// 2. Shared upstream work: S seeds (default 100) of the NMR embedding (workflows/nmr_structure.yaml,
//    `dg.seed`), against one run's upstream (read, restraints, bounds, smooth) plus S times one
//    run's per-point part (dg, compare, writers, report), both from the node times of single runs.
//    Goal: sweep <= 1.2 x (upstream + S x per-point).
//
//   gemflow_bench_sweep [--points N] [--seeds S] [--set node.param=value ...] [--skip-nmr] [--skip-overhead]
// (--set applies to the NMR runs, e.g. --set dg.trials=1 --set dg.max_iterations=300).
#include <sys/resource.h>

#include <cstdio>

#include "sweep_test_support.hpp"

using namespace gemflow::sweeptest;

namespace {

double seconds_since(Clock::time_point t0) { return std::chrono::duration<double>(Clock::now() - t0).count(); }

/// CPU seconds (user + system) of the children that ended so far.
double children_cpu() {
  rusage u{};
  getrusage(RUSAGE_CHILDREN, &u);
  return static_cast<double>(u.ru_utime.tv_sec + u.ru_stime.tv_sec) +
         1e-6 * static_cast<double>(u.ru_utime.tv_usec + u.ru_stime.tv_usec);
}

Result gemflow(std::vector<std::string> args, const fs::path& cwd, std::vector<std::string> env = {}) {
  args.insert(args.begin(), {GEMFLOW_EXE, "--plugin-path", GEMFLOW_TESTNODES_DIR, "-q"});
  Options o;
  o.cwd = cwd;
  o.timeout = 3600;
  o.env = std::move(env);
  return run_process(args, o);
}

double node_seconds(const nlohmann::json& prov, const std::vector<std::string>& nodes) {
  double s = 0;
  for (const auto& n : nodes)
    if (prov["nodes"].contains(n)) s += prov["nodes"][n].value("seconds", 0.0);
  return s;
}

void overhead(int points, const fs::path& dir) {
  std::ofstream(dir / "t.yaml") << "gemflow: 1\nname: trivial\nnodes:\n  a: {type: test.constant}\n";
  double c0 = children_cpu();
  auto r1 = gemflow({"run", "t.yaml", "--out", "one", "--sweep", "a.value=1"}, dir);
  if (r1.code != 0) throw std::runtime_error("1-point sweep failed: " + r1.err);
  const double cpu1 = children_cpu() - c0;
  const std::string range = "a.value=1.." + std::to_string(points);
  c0 = children_cpu();
  auto r = gemflow({"run", "t.yaml", "--out", "many", "--sweep", range}, dir);
  if (r.code != 0) throw std::runtime_error("sweep failed: " + r.err);
  const double cpu = children_cpu() - c0;
  c0 = children_cpu();
  auto again = gemflow({"run", "t.yaml", "--out", "many", "--sweep", range}, dir);
  if (again.code != 0) throw std::runtime_error("resumed sweep failed: " + again.err);
  const double cpu_again = children_cpu() - c0;
  const auto table = read_table(dir / "many");
  std::size_t done = 0;
  for (const auto& [n, p] : table) done += p.state == "done";
  std::printf("\n### Per-point overhead (%d points of a one-node workflow)\n\n", points);
  std::printf(
      "| run | wall s | CPU s (user+sys) | per point ms, wall | per point ms, CPU | goal ms |\n"
      "|---|---:|---:|---:|---:|---:|\n");
  std::printf("| 1-point sweep (start-up) | %.3f | %.3f | | | |\n", r1.seconds, cpu1);
  std::printf("| %d points, first run | %.3f | %.3f | %.2f | %.2f | 20 |\n", points, r.seconds, cpu,
              1000.0 * (r.seconds - r1.seconds) / points, 1000.0 * (cpu - cpu1) / points);
  std::printf("| %d points, all done (resume) | %.3f | %.3f | %.2f | %.2f | |\n", points, again.seconds, cpu_again,
              1000.0 * (again.seconds - r1.seconds) / points, 1000.0 * (cpu_again - cpu1) / points);
  std::printf("\n%zu of %d points done.\n", done, points);
}

void nmr(int seeds, const std::vector<std::string>& sets, const fs::path& dir) {
  const fs::path wf = fs::path(GEMFLOW_SOURCE_DIR) / "workflows" / "nmr_structure.yaml";
  std::vector<std::string> base{"run", wf.string(), "--device", "cpu"};
  for (const auto& s : sets) base.insert(base.end(), {"--set", s});
  const std::vector<std::string> upstream{"read", "restraints", "bounds", "smooth"};
  const std::vector<std::string> per_point{"dg", "compare", "write_pdb", "write_vtp", "report"};
  // CPU seconds of gemflow runs (not inflated by waiting for a busy CPU): the upstream part alone
  // (--until smooth), one whole run, the sweep
  auto up_only = base;
  up_only.insert(up_only.end(), {"--out", (dir / "upstream").string(), "--until", "smooth"});
  double c0 = children_cpu();
  if (auto u = gemflow(up_only, dir); u.code != 0) throw std::runtime_error("upstream run failed: " + u.err);
  const double cpu_up = children_cpu() - c0;
  // one run: the node times of its upstream part and of its per-point part
  auto one = base;
  one.insert(one.end(), {"--out", (dir / "single").string()});
  c0 = children_cpu();
  auto r = gemflow(one, dir);
  if (r.code != 0) throw std::runtime_error("single NMR run failed: " + r.err);
  const double cpu_one = children_cpu() - c0, cpu_point = cpu_one - cpu_up;
  const auto prov = nlohmann::json::parse(slurp(dir / "single" / "provenance.json"));
  const double up = node_seconds(prov, upstream), point = node_seconds(prov, per_point);
  // the start-up of gemflow (plugins) is paid once by the sweep: measured by a run of nothing
  auto sweep = base;
  sweep.insert(sweep.end(), {"--out", (dir / "sweep").string(), "--sweep", "dg.seed=1.." + std::to_string(seeds)});
  const auto t0 = Clock::now();
  c0 = children_cpu();
  auto s = gemflow(sweep, dir);
  const double total = seconds_since(t0), cpu_sweep = children_cpu() - c0;
  if (s.code != 0) throw std::runtime_error("NMR sweep failed: " + s.err);
  std::size_t upstream_runs = 0;
  double in_sweep = 0;  // node seconds of every point: what the load made of the nodes
  for (const auto& [name, p] : read_table(dir / "sweep")) {
    const auto pp = nlohmann::json::parse(slurp(dir / "sweep" / "points" / name / "provenance.json"));
    upstream_runs += pp["nodes"]["bounds"]["state"] == "done";
    for (const auto& [id, n] : pp["nodes"].items()) in_sweep += n.value("seconds", 0.0);
  }
  const double goal = 1.2 * (up + seeds * point);
  std::printf("\n### %d NMR embedding seeds sharing the upstream nodes\n\n", seeds);
  std::printf("| quantity | s |\n|---|---:|\n");
  std::printf("| one run: upstream nodes (read, restraints, bounds, smooth) | %.3f |\n", up);
  std::printf("| one run: per-point nodes (dg, compare, writers, report) | %.3f |\n", point);
  std::printf("| upstream + %d x per-point | %.3f |\n", seeds, up + seeds * point);
  std::printf("| the sweep of %d seeds, wall (with gemflow's start-up) | %.3f |\n", seeds, total);
  std::printf("| goal: 1.2 x (upstream + %d x per-point) | %.3f |\n", seeds, goal);
  std::printf("| node seconds of all points of the sweep (their provenance) | %.3f |\n", in_sweep);
  std::printf("| the sweep's wall minus its node seconds (start-up, sweep machinery) | %.3f |\n", total - in_sweep);
  std::printf(
      "\nRatio sweep / (upstream + %d x per-point), wall: %.3f (goal <= 1.2); bounds computed in %zu of %d "
      "points.\n",
      seeds, total / (up + seeds * point), upstream_runs, seeds);
  std::printf(
      "\nCPU seconds (user + system, whole processes with start-up): upstream run (--until smooth) %.3f, "
      "one whole run %.3f, so per point %.3f; the sweep %.3f against upstream + %d x per point = %.3f: "
      "ratio %.3f (goal <= 1.2).\n",
      cpu_up, cpu_one, cpu_point, cpu_sweep, seeds, cpu_up + seeds * cpu_point,
      cpu_sweep / (cpu_up + seeds * cpu_point));
}

}  // namespace

int main(int argc, char** argv) {
  int points = 1000, seeds = 100;
  bool skip_nmr = false, skip_overhead = false;
  std::vector<std::string> sets;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--points" && i + 1 < argc) points = std::stoi(argv[++i]);
    else if (a == "--seeds" && i + 1 < argc) seeds = std::stoi(argv[++i]);
    else if (a == "--set" && i + 1 < argc) sets.emplace_back(argv[++i]);
    else if (a == "--skip-nmr") skip_nmr = true;
    else if (a == "--skip-overhead") skip_overhead = true;
    else {
      std::fprintf(stderr,
                   "usage: %s [--points N] [--seeds S] [--set node.param=value]... [--skip-nmr] [--skip-overhead]\n",
                   argv[0]);
      return 2;
    }
  }
  const fs::path dir = fresh_dir("gemflow_bench_sweep");
  try {
    if (!skip_overhead) overhead(points, dir);
    if (!skip_nmr) nmr(seeds, sets, dir);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "%s\n", e.what());
    return 1;
  }
  std::error_code ec;
  fs::remove_all(dir, ec);
  return 0;
}
