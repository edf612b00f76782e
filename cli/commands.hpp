#pragma once
// The sub-commands of `gemflow`. Each returns the process exit code (see ExitCode).
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "console.hpp"
#include "gemflow/plugin_loader.hpp"
#include "gemflow/registry.hpp"

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
  std::string device;             ///< "" = each node's own `device`
  int jobs = 0;
  int gpu_jobs = 1;  ///< nodes at once per CUDA device (RunOptions::gpu_jobs)
  bool json = false;
  std::string until;
  std::vector<std::string> command_line;  ///< argv, recorded in provenance
};

struct ValidateArgs {
  std::filesystem::path workflow;
  std::vector<std::string> sets;
};

struct NodesArgs {
  std::string type;  ///< "" = list all
  bool json = false;
};

struct PluginsArgs {
  bool doctor = false;
};

int run_command(const RunArgs& args, const GlobalOptions& g, Console& console);
int validate_command(const ValidateArgs& args, const GlobalOptions& g, Console& console);
int nodes_command(const NodesArgs& args, const GlobalOptions& g, Console& console);
int plugins_command(const PluginsArgs& args, const GlobalOptions& g, Console& console);

/// Loads the plugins of the search path plus `g.plugin_paths` into `registry`; with `warn`, every
/// plugin that failed becomes a warning line on stderr naming the file and the reason.
void load_plugins(PluginHost& host, const GlobalOptions& g, bool warn);

}  // namespace gemflow::cli
