#pragma once
// The lasting result cache of `gemflow run` (and Studio across sessions): node outputs stored
// on disk under the node's key, so that a second identical run, or another run sharing the
// upstream part of a workflow, takes them instead of recomputing.
//
// - Content-addressed: the key is the executor's node key (node type and version, parameters,
//   the content hash of input files, the keys of upstream nodes), never a path of the
//   workflow or the output folder.
// - Entries are single files written to a temporary name, fsync'd and renamed, so concurrent
//   runs sharing a folder (two shells, Slurm tasks on a shared file system) never see half an
//   entry; each stores an XXH3 hash of its body, checked on every read (a corrupt entry is
//   removed and counts as a miss).
// - A value is stored only when its type has a binary encoding (Serial<T>, gemflow/serialize.hpp)
//   with the layout and version the host registered; otherwise the node is not cached on disk.
// - Size limit with least-recently-used pruning (a read touches the entry's modification time).
// - Failures to write (read-only folder, full disk) never fail a run: store() returns false and
//   says why, and the caller warns once and goes on uncached.
#include <cstdint>
#include <filesystem>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "gemflow/data.hpp"

namespace gemflow {

class Registry;

class DiskCache {
 public:
  /// Default size limit: 10 GiB.
  static constexpr std::uint64_t kDefaultMaxBytes = std::uint64_t{10} << 30;

  /// Opens the cache in `dir` (created when missing). Throws Error naming the folder and the
  /// system's reason when it cannot be created.
  explicit DiskCache(std::filesystem::path dir, std::uint64_t max_bytes = kDefaultMaxBytes);

  /// The per-user default: $GEMFLOW_CACHE_DIR when set, else $XDG_CACHE_HOME/gemflow/results,
  /// else ~/.cache/gemflow/results.
  [[nodiscard]] static std::filesystem::path default_dir();

  [[nodiscard]] const std::filesystem::path& dir() const noexcept { return dir_; }
  [[nodiscard]] std::uint64_t max_bytes() const noexcept { return max_bytes_; }

  /// The outputs stored under `key`, or nullopt with the reason in `why` ("not in the cache",
  /// "corrupt entry (removed): ...", "type 'X' changed since the entry was written"). A hit
  /// touches the entry (LRU).
  std::optional<std::map<std::string, Value>> find(const std::string& key, const Registry& registry,
                                                   std::string* why = nullptr) const;

  /// Stores `outputs` under `key`, replacing any entry; prunes to the size limit afterwards.
  /// Returns false with the reason in `why` when an output's type has no binary encoding, when
  /// one entry would exceed a quarter of the size limit, or when the write fails (the system's
  /// reason; nothing is left behind).
  bool store(const std::string& key, const std::map<std::string, Value>& outputs, const Registry& registry,
             std::string* why = nullptr);

  struct Stats {
    std::size_t entries = 0;
    std::uint64_t bytes = 0;
  };
  [[nodiscard]] Stats stats() const;
  /// Removes least-recently-used entries until the cache holds at most `max_bytes`; returns
  /// how many were removed. Also removes temporary files left by writers that died.
  std::size_t prune(std::uint64_t max_bytes);
  /// Removes every entry and record (the folder stays).
  void clear();

  /// What `--explain` compares: the key text of each node of the last run of a workflow
  /// (`scope`: the workflow file's absolute path), written after a run, read before the next.
  [[nodiscard]] std::map<std::string, std::string> last_key_texts(const std::string& scope) const;
  void remember_key_texts(const std::string& scope, const std::map<std::string, std::string>& texts);

 private:
  [[nodiscard]] std::filesystem::path entry_path(const std::string& key) const;
  std::filesystem::path dir_;
  std::uint64_t max_bytes_;
  mutable std::mutex mutex_;
  std::optional<std::uint64_t> approx_bytes_;  // bytes in the folder, as far as this process knows
};

/// Why a node ran, from the key texts of this run and the last (DiskCache::last_key_texts):
/// "parameter trials 4 → 8", "input bounds changed", "node version 1 → 2", "file of parameter
/// path changed"; several reasons are joined by "; ". "" when the texts are equal.
[[nodiscard]] std::string explain_key_change(const std::string& before, const std::string& now);

}  // namespace gemflow
