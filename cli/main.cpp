// gemflow: run, validate and inspect Gemflow workflows without the GUI.
#include <unistd.h>

#include <cstdlib>
#include <iostream>

#include <fmt/format.h>
#include <spdlog/spdlog.h>
#include <CLI/CLI.hpp>

#include "commands.hpp"
#include "console.hpp"
#include "gemflow/config.hpp"
#include "gemflow/device.hpp"
#include "gemflow/memory.hpp"
#include "gemflow/registry.hpp"

namespace {

constexpr const char* kEpilog = R"(
Exit codes:
  0  success
  1  a node failed (independent branches still ran to the end), or the provenance
     record could not be written
  2  invalid workflow, unknown node type, bad usage (options, --set, --device), or the
     output folder is in use by another run
  3  cancelled by Ctrl-C or SIGTERM (a second one forces the exit)
  128+N  killed by signal N (139: a node crashed the process)

Environment:
  GEMFLOW_PLUGIN_PATH  extra plugin folders, ':'-separated (searched after the install's
                       plugin folder, before --plugin-path)
  NO_COLOR             no colours on the terminal
  GEMFLOW_PLUGIN_PROBE 0: load plugins without first trying each in a child process (the
                       child keeps a plugin that crashes while loading from ending gemflow)
  GEMFLOW_PLUGIN_PROBE_TIMEOUT  seconds a plugin may take to load in that child (default 60);
                       a plugin that crashes or hangs there is remembered as failed in
                       $XDG_CACHE_HOME/gemflow (default ~/.cache/gemflow) until the file changes

Documentation: docs/cli.md)";

/// The sweep options of `run` and `sweep submit` (docs/scale-out.md).
void add_sweep_options(CLI::App* cmd, gemflow::cli::RunArgs& run, std::string& points_file) {
  cmd->add_option("--sweep", run.sweeps,
                  "Run once per value: node.param=a,b,c | A..B | START:STOP:STEP | START:STOP#COUNT | @file "
                  "(repeatable: every combination)")
      ->type_name("NODE.PARAM=VALUES")
      ->allow_extra_args(false);
  cmd->add_flag("--zip", run.zip, "Pair the k-th values of the swept parameters instead of every combination");
  cmd->add_option("--shard", run.shard,
                  "Run part I of N of the points (0-based; default: from SLURM_ARRAY_TASK_ID, Open MPI or PMI "
                  "ranks)")
      ->type_name("I/N");
  cmd->add_flag("--retry-failed", run.retry_failed, "Run the points that failed before again");
  cmd->add_flag("--force", run.force, "Allow a sweep of more than 10000 points");
  cmd->add_option("--points", points_file, "Run only the points named in FILE (one a line)")->type_name("FILE");
}

}  // namespace

int main(int argc, char** argv) {
  using namespace gemflow::cli;
  // before any plugin loads OpenBLAS: under `ulimit -v` its threads must fit (else it hangs)
  (void)gemflow::fit_blas_threads_to_address_limit();

  CLI::App app{"Gemflow: run, validate and inspect plugin-based scientific workflows.", "gemflow"};
  app.footer(kEpilog);
  app.fallthrough();  // global options may come after the sub-command
  app.require_subcommand(1);
  app.set_version_flag(
      "--version",
      fmt::format("gemflow {}\n{}\nCUDA: {}", GEMFLOW_SDK_VERSION, gemflow::PluginHost::host_fingerprint(),
                  gemflow::built_with_cuda() ? "built with CUDA " GEMFLOW_SDK_CUDA : "not in this build"),
      "Print the version and build fingerprint, then exit");

  GlobalOptions g;
  std::vector<std::string> plugin_paths;
  app.add_option("--plugin-path", plugin_paths, "Also load the plugins of this folder (repeatable)")
      ->type_name("DIR")
      ->allow_extra_args(false);
  app.add_flag("-v,--verbose", g.verbose, "Debug logging");
  app.add_flag("-q,--quiet", g.quiet, "Only warnings and errors on stderr");

  // run
  RunArgs run;
  std::string out_dir;
  auto* run_cmd = app.add_subcommand("run", "Validate, then run a workflow");
  run_cmd->add_option("workflow", run.workflow, "Workflow file (YAML)")->required()->type_name("W.yaml");
  run_cmd->add_option("--set", run.sets, "Override a parameter: node.param=value (repeatable)")
      ->type_name("NODE.PARAM=VALUE")
      ->allow_extra_args(false);
  // QA: --out '' and --until '' were taken as "not given"
  const CLI::Validator non_empty(
      [](std::string& v) { return v.empty() ? std::string("must not be empty") : std::string(); }, "", "NONEMPTY");
  run_cmd->add_option("--out", out_dir, "Output folder (default: ./out/<workflow name>)")
      ->type_name("DIR")
      ->check(non_empty);
  run_cmd->add_option("--device", run.device, "Device for every node with a `device` parameter")
      ->type_name("cpu|auto|cuda|cuda:N")
      ->check(
          [](const std::string& s) -> std::string {
            return gemflow::DeviceRequest::parse(s) ? "" : "expected cpu, auto, cuda or cuda:N, got '" + s + "'";
          },
          "");
  const auto count_check = [](const std::string& s) -> std::string {
    return !s.empty() && s.find_first_not_of("0123456789") == std::string::npos
               ? ""
               : "expected a count >= 0, got '" + s + "'";
  };
  run_cmd->add_option("-j,--jobs", run.jobs, "Nodes run in parallel (0: one per hardware thread)")
      ->check(count_check, "")
      ->type_name("N");
  run_cmd->add_option("--gpu-jobs", run.gpu_jobs, "Nodes run at once on one CUDA device (0: no limit)")
      ->check(count_check, "")
      ->type_name("N")
      ->capture_default_str();
  run_cmd->add_flag("--json", run.json, "One JSON object per event on stdout, then a summary object");
  run_cmd->add_option("--until", run.until, "Run only NODE and what it depends on")
      ->type_name("NODE")
      ->check(non_empty);
  std::string cache_dir;
  auto* cache_opt = run_cmd
                        ->add_option("--cache", cache_dir,
                                     "Result cache folder (default: ~/.cache/gemflow/results, or $GEMFLOW_CACHE_DIR)")
                        ->type_name("DIR")
                        ->check(non_empty);
  run_cmd->add_flag("--no-cache", run.no_cache, "Neither read nor write the result cache (also GEMFLOW_NO_CACHE=1)")
      ->excludes(cache_opt);
  run_cmd->add_flag("--explain", run.explain, "Say why each node ran, or that it came from the cache");
  std::string points_file;
  add_sweep_options(run_cmd, run, points_file);
  run_cmd->add_flag("--no-sweep", run.no_sweep, "Run once: ignore the workflow's sweep: section");

  // validate
  ValidateArgs val;
  auto* val_cmd = app.add_subcommand("validate", "Check a workflow without running it");
  val_cmd->add_option("workflow", val.workflow, "Workflow file (YAML)")->required()->type_name("W.yaml");
  val_cmd->add_option("--set", val.sets, "Override a parameter: node.param=value (repeatable)")
      ->type_name("NODE.PARAM=VALUE")
      ->allow_extra_args(false);

  // nodes
  NodesArgs nodes;
  auto* nodes_cmd = app.add_subcommand("nodes", "List node types by category, or document one");
  nodes_cmd->add_option("type", nodes.type, "Node type id (or a plugin prefix such as 'distgeom')")->type_name("TYPE");
  nodes_cmd->add_flag("--json", nodes.json, "Print the specs as JSON");
  std::string markdown_dir;
  nodes_cmd
      ->add_option("--markdown", markdown_dir,
                   "Write the node reference into DIR: one Markdown page per node type and README.md (docs/nodes)")
      ->type_name("DIR")
      ->check(non_empty);

  // upgrade
  UpgradeArgs upgrade;
  auto* upgrade_cmd = app.add_subcommand(
      "upgrade", "Rewrite a workflow at the current node versions (migrations applied; the original kept as .bak)");
  upgrade_cmd->add_option("workflow", upgrade.workflow, "Workflow file (YAML)")->required()->type_name("W.yaml");

  // fmt
  FmtArgs fmt_args;
  auto* fmt_cmd = app.add_subcommand(
      "fmt", "Rewrite workflows in canonical form (one line per node, canonical numbers; comments are dropped)");
  fmt_cmd->add_option("workflows", fmt_args.workflows, "Workflow files (YAML)")->required()->type_name("W.yaml");
  fmt_cmd->add_flag("--check", fmt_args.check, "Change nothing; list the files that are not canonical (exit 1)");

  // cache
  CacheArgs cache;
  std::string cache_cmd_dir;
  auto* cache_cmd = app.add_subcommand("cache", "Show, prune or clear the result cache of `gemflow run`");
  cache_cmd->add_option("action", cache.action, "info, prune or clear")
      ->required()
      ->check(CLI::IsMember({"info", "prune", "clear"}));
  cache_cmd->add_option("--cache", cache_cmd_dir, "The cache folder (default: as `gemflow run`)")->type_name("DIR");
  cache_cmd->add_option("--max-size", cache.max_size, "prune: keep at most this much (e.g. 5G, 500M)")
      ->type_name("SIZE");

  // sweep
  SweepArgs sweep;
  std::string sweep_out, sweep_cache, sweep_points;
  auto* sweep_cmd = app.add_subcommand("sweep", "Sweep folders: status, collect the tables, submit to Slurm");
  sweep_cmd->require_subcommand(1);
  auto* sweep_status_cmd = sweep_cmd->add_subcommand("status", "Done, failed, interrupted and pending points of DIR");
  sweep_status_cmd->add_option("dir", sweep.target, "Sweep folder (the --out of the sweep)")
      ->required()
      ->type_name("DIR");
  sweep_status_cmd->add_flag("--json", sweep.json, "The table as JSON on stdout");
  auto* sweep_collect_cmd =
      sweep_cmd->add_subcommand("collect", "Merge the shards' tables of DIR into DIR/sweep.csv and sweep.json");
  sweep_collect_cmd->add_option("dir", sweep.target, "Sweep folder")->required()->type_name("DIR");
  auto* submit_cmd = sweep_cmd->add_subcommand(
      "submit", "Write an sbatch script (a job array, one shard a task) for a sweep and submit it");
  submit_cmd->add_option("workflow", sweep.target, "Workflow file (YAML)")->required()->type_name("W.yaml");
  submit_cmd->add_option("--set", sweep.run.sets, "Override a parameter: node.param=value (repeatable)")
      ->type_name("NODE.PARAM=VALUE")
      ->allow_extra_args(false);
  submit_cmd->add_option("--out", sweep_out, "Sweep folder (default: ./out/<workflow name>)")
      ->type_name("DIR")
      ->check(non_empty);
  auto* submit_cache = submit_cmd->add_option("--cache", sweep_cache, "Result cache folder shared by the tasks")
                           ->type_name("DIR")
                           ->check(non_empty);
  submit_cmd->add_flag("--no-cache", sweep.run.no_cache, "The tasks share no result cache")->excludes(submit_cache);
  submit_cmd->add_option("--device", sweep.run.device, "Device for every node with a `device` parameter")
      ->type_name("cpu|auto|cuda|cuda:N");
  submit_cmd->add_option("--until", sweep.run.until, "Run only NODE and what it depends on")->type_name("NODE");
  add_sweep_options(submit_cmd, sweep.run, sweep_points);
  submit_cmd->add_flag("--slurm", sweep.slurm, "Submit to Slurm (the default and only scheduler)");
  submit_cmd->add_option("--partition", sweep.partition, "Slurm partition")->type_name("P");
  submit_cmd->add_option("--time", sweep.time, "Time limit of each task (Slurm's format, e.g. 1:00:00)")
      ->type_name("T");
  submit_cmd->add_option("--cpus", sweep.cpus, "CPUs of each task (also gemflow -j)")
      ->type_name("C")
      ->check(CLI::PositiveNumber);
  submit_cmd->add_option("--gpus", sweep.gpus, "GPUs of each task (--gres=gpu:G)")
      ->type_name("G")
      ->check(CLI::NonNegativeNumber);
  submit_cmd->add_option("--mem", sweep.mem, "Memory of each task (Slurm's format, e.g. 8G)")->type_name("M");
  submit_cmd->add_option("--account", sweep.account, "Slurm account")->type_name("A");
  submit_cmd->add_option("--qos", sweep.qos, "Slurm quality of service")->type_name("Q");
  submit_cmd->add_option("--tasks", sweep.tasks, "Array tasks (default: one per point, at most 1000)")
      ->type_name("N")
      ->check(CLI::PositiveNumber);
  submit_cmd->add_option("--array-max", sweep.array_max, "At most M tasks running at once (--array=...%M)")
      ->type_name("M")
      ->check(CLI::PositiveNumber);
  submit_cmd->add_flag("--dry-run", sweep.dry_run, "Write the script, do not submit it");

  // plugins
  PluginsArgs plugins;
  auto* plugins_cmd = app.add_subcommand("plugins", "Show each plugin file: loaded, or why not");
  plugins_cmd->add_flag("--rescan", plugins.rescan,
                        "Probe every plugin file again, even those whose earlier probe passed");
  plugins_cmd->add_flag("--doctor", plugins.doctor,
                        "Also show the host fingerprint, search path, CUDA devices and hints");

  if (argc <= 1) {
    std::cout << app.help();
    return kExitInvalid;
  }
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    // `gemflow frobnicate`: name the unknown command instead of CLI11's "A subcommand is required".
    const auto rest = app.remaining();
    if (app.get_subcommands().empty() && !rest.empty() && !rest.front().empty() && rest.front()[0] != '-') {
      const std::vector<std::string> commands{"run",   "validate", "nodes", "plugins",
                                              "cache", "upgrade",  "fmt",   "sweep"};
      const std::string near = gemflow::nearest_name(rest.front(), commands);
      std::cerr << "gemflow: unknown command '" << rest.front() << "'"
                << (near.empty() ? std::string() : " (did you mean '" + near + "'?)")
                << "; commands: run, validate, nodes, plugins, cache, upgrade, fmt, sweep (see gemflow --help)\n";
      return kExitInvalid;
    }
    if (app.get_subcommands().empty() && !rest.empty() && rest.front().rfind("--", 0) == 0) {
      std::cerr << "gemflow: unknown option '" << rest.front() << "' (see gemflow --help)\n";
      return kExitInvalid;
    }
    const int rc = app.exit(e);
    return rc == 0 ? kExitOk : kExitInvalid;
  }
  for (const auto& p : plugin_paths) g.plugin_paths.emplace_back(p);
  if (!out_dir.empty()) run.out = out_dir;
  if (!cache_dir.empty()) run.cache = cache_dir;
  if (!cache_cmd_dir.empty()) cache.dir = cache_cmd_dir;
  if (!markdown_dir.empty()) nodes.markdown = markdown_dir;
  if (!points_file.empty()) run.points = points_file;
  if (!sweep_out.empty()) sweep.run.out = sweep_out;
  if (!sweep_cache.empty()) sweep.run.cache = sweep_cache;
  if (!sweep_points.empty()) sweep.run.points = sweep_points;
  if (*sweep_status_cmd) sweep.action = "status";
  else if (*sweep_collect_cmd) sweep.action = "collect";
  else if (*submit_cmd) sweep.action = "submit";
  run.command_line.assign(argv, argv + argc);

  const bool tty = isatty(STDERR_FILENO) != 0;
  const char* term = std::getenv("TERM");
  const bool dumb = term == nullptr || std::string(term) == "dumb";
  const bool color = tty && !dumb && std::getenv("NO_COLOR") == nullptr;
  // The live progress block only for `run` on a real terminal, not with --json or --quiet.
  static Console console(tty && !dumb && !g.quiet && !run.json && *run_cmd, color);
  install_logger(console, g.verbose, g.quiet);

  int rc = kExitInvalid;
  try {
    if (*run_cmd) rc = run_command(run, g, console);
    else if (*val_cmd) rc = validate_command(val, g, console);
    else if (*nodes_cmd) rc = nodes_command(nodes, g, console);
    else if (*plugins_cmd) rc = plugins_command(plugins, g, console);
    else if (*cache_cmd) rc = cache_command(cache);
    else if (*upgrade_cmd) rc = upgrade_command(upgrade, g, console);
    else if (*fmt_cmd) rc = fmt_command(fmt_args, g, console);
    else if (*sweep_cmd) rc = sweep_command(sweep, g, console);
  } catch (const std::exception& e) {
    spdlog::error("{}", e.what());
    rc = kExitInvalid;
  }
  std::fflush(stdout);
  spdlog::shutdown();
  return rc;
}
