#pragma once
// Running a workflow: validation, dependency order, parallel independent branches, progress,
// cooperative cancellation, per-node errors, a content-hashed result cache and provenance.
#include <atomic>
#include <chrono>
#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "gemflow/data.hpp"
#include "gemflow/disk_cache.hpp"
#include "gemflow/plugin_loader.hpp"
#include "gemflow/registry.hpp"
#include "gemflow/workflow.hpp"

namespace gemflow {

enum class NodeState { Idle, Queued, Running, Done, Cached, Failed, Cancelled, Skipped };
[[nodiscard]] const char* to_string(NodeState s) noexcept;

/// An event reported while running (from worker threads; handlers must be thread-safe).
struct RunEvent {
  enum class Kind { State, Progress, Log, Preview };
  Kind kind = Kind::State;
  std::string node;
  NodeState state = NodeState::Idle;
  double progress = 0.0;  ///< [0, 1] for Progress
  LogLevel level = LogLevel::Info;
  std::string message;  ///< progress message, log line or error text
  std::string port;     ///< Preview: the output port the value is an intermediate of
  Value value;          ///< Preview: the intermediate value (shared, never copied)
};

/// Results of earlier runs keyed by the node key (hash of type + version, parameters and the
/// keys of its inputs). Shared between runs in a Studio session; thread-safe.
class ResultCache {
 public:
  [[nodiscard]] std::optional<std::map<std::string, Value>> find(const std::string& key) const;
  void store(const std::string& key, std::map<std::string, Value> outputs);
  void clear();

 private:
  mutable std::mutex mutex_;
  std::map<std::string, std::map<std::string, Value>> entries_;
};

struct RunOptions {
  std::filesystem::path out_dir;  ///< created if missing; default "<cwd>/out/<name>"
  int jobs = 0;                   ///< parallel nodes; 0 = hardware threads
  /// Nodes running at once on one CUDA device (a node's device is its `device` parameter or
  /// the run's `device`, `auto` counting as cuda:0 when a device is present); 0 = no limit.
  /// One by default: a node then has the device to itself (its memory checks hold, parallel
  /// branches do not slow each other down or run out of device memory together).
  int gpu_jobs = 1;
  std::string device;  ///< overrides every `device` param when not ""
  /// Called from worker threads, one call at a time (never concurrently); keep it short. A
  /// node's final state is reported before any node depending on it starts.
  std::function<void(const RunEvent&)> on_event;
  const std::atomic<bool>* cancel = nullptr;  ///< set to true to cancel
  std::string until;                          ///< run only this node and what it depends on
  ResultCache* cache = nullptr;               ///< reuse results whose key is unchanged
  /// The lasting cache (gemflow/disk_cache.hpp): looked up after `cache`, filled after each node
  /// that ran; nullptr: none. A write that fails (read-only, full disk) warns once and the run
  /// goes on uncached.
  DiskCache* disk_cache = nullptr;
  bool write_provenance = true;           ///< write out_dir/provenance.json
  /// Forward the nodes' previews to on_event (Studio shows them). Off (headless): nodes are told
  /// that no one wants them (NodeContext::previews_wanted) and skip making them.
  bool previews = false;
  std::vector<std::string> command_line;  ///< recorded in provenance (e.g. argv of `gemflow run`)
  /// Plugins of the host (name, version, file), recorded in provenance; nullptr: not recorded.
  const std::vector<PluginRecord>* plugins = nullptr;
  /// When > 0: a node that went longer than this many seconds of its work without calling
  /// NodeContext::progress gets a warning in its log ("reported no progress for 1.4 s"). The
  /// default comes from GEMFLOW_CHECK_PROGRESS (seconds; unset: off); the tests of the shipped
  /// workflows set it to 1 so that a node without progress reports fails them.
  double progress_check_seconds = progress_check_from_env();
  static double progress_check_from_env();
};

struct NodeResult {
  NodeState state = NodeState::Idle;
  std::string error;  ///< failure text (for Failed)
  double seconds = 0.0;
  std::string key;  ///< content hash (hex)
  std::map<std::string, Value> outputs;
  /// Why the node ran or did not, for `--explain`: "from the cache", "parameter trials 4 → 8",
  /// "not in the cache", "first run of this node" ... (with a disk cache: compared with the key
  /// of the last run of the same workflow file).
  std::string why;
};

struct RunResult {
  std::map<std::string, NodeResult> nodes;
  std::vector<Diagnostic> diagnostics;  ///< validation errors (nothing ran when non-empty)
  bool cancelled = false;
  std::filesystem::path provenance;  ///< written file ("" when not written)
  /// Why the provenance record could not be written ("cannot write OUT/provenance.json: No
  /// space left on device"); "" when it was written or not asked for.
  std::string provenance_error;
  /// no diagnostics, not cancelled, no node failed, the provenance record written (when asked)
  [[nodiscard]] bool ok() const;
};

/// Validates then runs `wf`. Never throws for node failures: a node that throws is Failed
/// with its message, nodes downstream of it are Skipped, other branches finish. A node that
/// throws anything once the run was cancelled is Cancelled, and so is everything downstream.
/// Before any node runs, check_run_paths() and a test write into the output folder turn files
/// that cannot or must not be written into diagnostics.
[[nodiscard]] RunResult run_workflow(const Workflow& wf, const Registry& registry, const RunOptions& options);

/// The checks of the run's files that need the output folder (`out_dir`, relative to the
/// cwd), with file:line of the parameter. Errors: an output path (resolved) that is an input of
/// the run (the workflow file, an InputPath of any node), `provenance.json` of the folder, or
/// written by two nodes; provenance.json overwriting an input. Warnings: an input file that
/// does not exist (its node will fail; a run --until another node does not need it).
[[nodiscard]] std::vector<Diagnostic> check_run_paths(const Workflow& wf, const Registry& registry,
                                                      const std::filesystem::path& out_dir);

/// Content checks of the input files that exist (ParamSpec::inspect of InputPath parameters, in
/// node order): an error with the parameter's file:line for a file its node cannot read (the
/// message is the inspector's, naming the input's file:line), and for a file it can read one line
/// in `notes` ("node 'r', parameter 'path': restraint format nef ..."). Used by `gemflow
/// validate`; a run finds the same when the node reads the file.
[[nodiscard]] std::vector<Diagnostic> check_input_contents(const Workflow& wf, const Registry& registry,
                                                           std::vector<std::string>* notes = nullptr);

/// Warnings for `device` parameters that ask for a CUDA device this machine lacks (none present,
/// too few, or Gemflow built without CUDA), with file:line of the parameter: such a node fails
/// when it runs. Nothing when `device_override` (RunOptions::device, --device) is set: it
/// replaces every device parameter and is checked on its own.
[[nodiscard]] std::vector<Diagnostic> check_run_devices(const Workflow& wf, const Registry& registry,
                                                        std::string_view device_override);

/// Hex xxh3-64 of a file's bytes (provenance input hashes).
[[nodiscard]] std::string hash_file(const std::filesystem::path& file);

/// The current UTC time as ISO 8601 ("2026-12-06T10:56:35Z"), as provenance records write it.
[[nodiscard]] std::string utc_now();
/// This machine's host name ("unknown" when it cannot be read), as provenance records write it.
[[nodiscard]] std::string host_name();

}  // namespace gemflow
