#pragma once
// The sub-commands of `gemflow`. Each returns the process exit code (see ExitCode).
#include <atomic>
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "console.hpp"
#include "gemflow/plugin_loader.hpp"
#include "gemflow/registry.hpp"
#include "gemflow/workflow.hpp"

namespace gemflow::cli {

struct GlobalOptions {
  std::vector<std::filesystem::path> plugin_paths;  ///< --plugin-path, in order
  bool verbose = false;
  bool quiet = false;
};

struct RunArgs {
  std::filesystem::path workflow;
  std::vector<std::string> sets;  ///< "node.param=value"
  std::optional<std::filesystem::path> out;
  std::string device;  ///< "" = each node's own `device`
  int jobs = 0;
  int gpu_jobs = 1;  ///< nodes at once per CUDA device (RunOptions::gpu_jobs)
  bool json = false;
  std::string until;
  std::vector<std::string> command_line;  ///< argv, recorded in provenance
  /// --cache DIR (default: DiskCache::default_dir()); --no-cache or GEMFLOW_NO_CACHE=1: none.
  std::optional<std::filesystem::path> cache;
  bool no_cache = false;
  bool explain = false;  ///< print why each node ran or came from the cache
  // Sweeps (cli/sweep.cpp, docs/scale-out.md)
  std::vector<std::string> sweeps;              ///< --sweep "node.param=VALUES"
  bool zip = false;                             ///< --zip: pair the values instead of every combination
  std::string shard;                            ///< --shard I/N ("" = from the environment, else all)
  bool retry_failed = false;                    ///< --retry-failed: failed points run again
  bool force = false;                           ///< --force: more points than kSweepPointLimit
  bool no_sweep = false;                        ///< --no-sweep: ignore the workflow's `sweep:` section
  std::optional<std::filesystem::path> points;  ///< --points FILE: only these point names
};

/// `gemflow sweep status|collect DIR` and `gemflow sweep submit W.yaml ...`.
struct SweepArgs {
  std::string action;            ///< status | collect | submit
  std::filesystem::path target;  ///< DIR (status, collect) or W.yaml (submit)
  RunArgs run;                   ///< submit: the sweep and the run options of each task
  bool slurm = true;             ///< submit: the scheduler (Slurm, the only one)
  std::string partition, time, account, qos;
  int cpus = 1, gpus = 0, tasks = 0, array_max = 0;
  std::string mem;
  bool dry_run = false;  ///< submit: write the script, do not call sbatch
  bool json = false;     ///< status: JSON on stdout
};

struct UpgradeArgs {
  std::filesystem::path workflow;
};

struct FmtArgs {
  std::vector<std::filesystem::path> workflows;
  bool check = false;  ///< only say which files are not in canonical form (exit 1 when any)
};

struct CacheArgs {
  std::string action;  ///< info | prune | clear
  std::optional<std::filesystem::path> dir;
  std::string max_size;  ///< prune: "5G", "500M", bytes
};

struct ValidateArgs {
  std::filesystem::path workflow;
  std::vector<std::string> sets;
};

struct NodesArgs {
  std::string type;  ///< "" = list all
  bool json = false;
  /// Write the node reference (one Markdown page per node type and README.md) into this folder.
  std::optional<std::filesystem::path> markdown;
};

struct PluginsArgs {
  bool doctor = false;
  bool rescan = false;  ///< GEMFLOW_PLUGIN_PROBE=always for this command
};

int run_command(const RunArgs& args, const GlobalOptions& g, Console& console);
int validate_command(const ValidateArgs& args, const GlobalOptions& g, Console& console);
int nodes_command(const NodesArgs& args, const GlobalOptions& g, Console& console);
int plugins_command(const PluginsArgs& args, const GlobalOptions& g, Console& console);
int cache_command(const CacheArgs& args);
int upgrade_command(const UpgradeArgs& args, const GlobalOptions& g, Console& console);
int fmt_command(const FmtArgs& args, const GlobalOptions& g, Console& console);
int sweep_command(const SweepArgs& args, const GlobalOptions& g, Console& console);

/// Whether `gemflow run` runs a sweep: --sweep given, or the workflow has a `sweep:` section and
/// --no-sweep was not given.
[[nodiscard]] bool wants_sweep(const RunArgs& args, const Workflow& wf);
/// `gemflow run` of a sweep, called by run_command once the workflow (with --set) is loaded;
/// `cancel` is set by Ctrl-C / SIGTERM.
int run_sweep(const RunArgs& args, const GlobalOptions& g, Console& console, const PluginHost& host,
              const Registry& registry, const Workflow& wf, const std::atomic<bool>* cancel);
/// The sweep's diagnostics of a workflow's `sweep:` section (for `gemflow validate`).
[[nodiscard]] std::vector<Diagnostic> sweep_section_diagnostics(const Workflow& wf, const Registry& registry);

/// "5G", "500M", "64K", "1024" → bytes; nullopt when it is not such a size.
[[nodiscard]] std::optional<std::uint64_t> parse_size(const std::string& text);

/// Loads the plugins of the search path plus `g.plugin_paths` into `registry`; with `warn`, every
/// plugin that failed becomes a warning line on stderr naming the file and the reason.
void load_plugins(PluginHost& host, const GlobalOptions& g, bool warn);

}  // namespace gemflow::cli
