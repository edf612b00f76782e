#pragma once
// Loading plugins with Boost.DLL. A plugin that fails to load is recorded with its file and
// the reason; it never stops the others.
#include <filesystem>
#include <string>
#include <vector>

#include "gemflow/registry.hpp"

namespace gemflow {

struct PluginRecord {
  std::filesystem::path file;
  std::string name;  ///< from the plugin ("" when unreadable)
  std::string version;
  std::string fingerprint;
  bool loaded = false;
  std::string error;                  ///< why it was refused ("" when loaded)
  std::vector<std::string> node_ids;  ///< nodes it registered
  /// Set when the file was not tried because an earlier probe found its load-time code crashing
  /// or hanging (and the file has not changed since): the record of that failure.
  std::filesystem::path remembered_in;
  /// The probe's child ran for this file in this load (false: probing is off, or an earlier
  /// probe of the unchanged file passed and was remembered).
  bool probed = false;
};

/// Loads plugins into a Registry. Libraries stay loaded for the life of the process (values
/// created by a plugin may outlive any host object), so there is no unload.
class PluginHost {
 public:
  explicit PluginHost(Registry& registry) : registry_(registry) {}

  /// Loads one file: checks it is a shared library exporting the Gemflow entry points, that
  /// its API version and fingerprint match the host, then calls its register function.
  /// These checks run first in a forked child process (one fork per file), so that a library
  /// whose load-time code aborts, crashes or exits is refused ("crashed while loading (signal
  /// 6, SIGABRT)") instead of ending the host; it is then never opened in the host. The
  /// environment variable GEMFLOW_PLUGIN_PROBE=0 skips the child (faster, not crash-safe).
  /// A file whose child crashed, exited or hung (GEMFLOW_PLUGIN_PROBE_TIMEOUT seconds, default
  /// 60) is remembered as failed in $XDG_CACHE_HOME/gemflow/plugin-probe (~/.cache/gemflow/...)
  /// and not tried again until its size or modification time changes. A file that passed is
  /// remembered too (with its content hash and the host's fingerprint) and then loaded without
  /// the child while nothing of that changes: a command starts in about 0.1 s instead of 0.1 s
  /// per plugin more. GEMFLOW_PLUGIN_PROBE=always probes every file regardless.
  /// Node ids must start with the plugin's name and a dot ("io.read_structure" of plugin "io"):
  /// a plugin registering any other id is refused, whatever the load order.
  /// Failures (not a library, missing symbol, version/fingerprint mismatch, exception in
  /// registration, duplicate node id) are returned in the record and nodes registered before
  /// a failure are kept only when registration completed.
  PluginRecord load(const std::filesystem::path& file);
  /// Loads every `*.so` in a folder (sorted by name). A missing folder is not an error.
  void load_directory(const std::filesystem::path& dir);
  /// Search path: the install's plugin folder (next to the executable: ../lib/gemflow/plugins),
  /// then each entry of GEMFLOW_PLUGIN_PATH (':'-separated), then `extra`.
  [[nodiscard]] static std::vector<std::filesystem::path> search_path(
      const std::vector<std::filesystem::path>& extra = {});
  /// Loads every folder of search_path(extra).
  void load_all(const std::vector<std::filesystem::path>& extra = {});

  [[nodiscard]] const std::vector<PluginRecord>& records() const noexcept { return records_; }
  /// The host's own fingerprint, for `gemflow plugins --doctor`.
  [[nodiscard]] static std::string host_fingerprint();

 private:
  Registry& registry_;
  std::vector<PluginRecord> records_;
};

}  // namespace gemflow
