#pragma once
// Driving a node in a unit test without the executor (header-only; see docs/plugin-guide.md,
// "Testing a node").
//
//   gemflow::testing::RecordingContext ctx;
//   ctx.cancel_after_progress(5);                  // optional
//   node->set_input("bounds", gemflow::Value::make(bounds));
//   EXPECT_EQ(gemflow::testing::error_of(*node, ctx), "(no error)");
//   EXPECT_EQ(std::get<std::string>(ctx.records().at("device_used")), "cpu");
//
// RecordingContext records everything the node reports (progress, log lines, provenance
// records, files read and written) and lets the test set what the executor would set (node id,
// output folder, --device override) and when the run is cancelled. Thread-safe for the node's
// own use, like the executor's context; read the recordings after execute() returns.
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <random>
#include <stdexcept>
#include <string>
#include <string_view>
#include <system_error>
#include <utility>
#include <vector>

#include <unistd.h>

#include "gemflow/error.hpp"
#include "gemflow/node.hpp"
#include "gemflow/param.hpp"
#include "gemflow/plugin_loader.hpp"
#include "gemflow/registry.hpp"

namespace gemflow::testing {

/// One log() call.
struct LogLine {
  LogLevel level;
  std::string text;
  bool operator==(const LogLine&) const = default;
};

/// A folder of this test process's own under the system temp folder (`gemflow-tests-<pid>`),
/// made on the first call and removed with its contents when the process exits. For files a test
/// writes outside a node (a RecordingContext has its own output folder): a test must not rely on
/// a folder that another test or an earlier run made, and parallel test processes (ctest -j) must
/// not share one. Throws std::filesystem::filesystem_error when the folder cannot be made.
inline const std::filesystem::path& process_temp_dir() {
  struct Folder {
    std::filesystem::path path =
        std::filesystem::temp_directory_path() / ("gemflow-tests-" + std::to_string(::getpid()));
    Folder() { std::filesystem::create_directories(path); }
    Folder(const Folder&) = delete;
    Folder& operator=(const Folder&) = delete;
    ~Folder() {
      std::error_code ec;
      std::filesystem::remove_all(path, ec);
    }
  };
  static const Folder folder;
  return folder.path;
}

/// A NodeContext that records; see the file comment.
class RecordingContext final : public NodeContext {
 public:
  /// Output folder: a fresh, empty folder under the system temp folder, removed (with its
  /// contents) when the context is destroyed. set_output_dir() replaces it (kept on disk).
  RecordingContext() {
    std::random_device rd;
    for (int attempt = 0; attempt < 100 && owned_dir_.empty(); ++attempt) {
      auto p = std::filesystem::temp_directory_path() /
               ("gemflow-test-" + std::to_string((std::uint64_t{rd()} << 32) ^ rd()));
      std::error_code ec;
      if (std::filesystem::create_directory(p, ec)) owned_dir_ = p;
    }
    if (owned_dir_.empty()) throw Error("RecordingContext: cannot create a temporary output folder");
    out_ = owned_dir_;
  }
  RecordingContext(const RecordingContext&) = delete;
  RecordingContext& operator=(const RecordingContext&) = delete;
  ~RecordingContext() override {
    std::error_code ec;
    if (!owned_dir_.empty()) std::filesystem::remove_all(owned_dir_, ec);
  }

  // ---- settings ----
  RecordingContext& set_node_id(std::string id) {
    id_ = std::move(id);
    return *this;
  }
  /// Relative paths given to write_file() resolve against this folder (created if absent).
  RecordingContext& set_output_dir(std::filesystem::path dir) {
    std::filesystem::create_directories(dir);
    out_ = std::move(dir);
    return *this;
  }
  /// The run's --device override ("" = none, the default): "cpu", "cuda", "cuda:1" ...
  RecordingContext& set_device_override(std::string device) {
    device_ = std::move(device);
    return *this;
  }
  /// cancelled() turns true once `n` progress() calls were made (n = 0: from the start).
  RecordingContext& cancel_after_progress(std::size_t n) {
    std::lock_guard lock(m_);
    cancel_rule_ = [this, n] { return fractions_.size() >= n; };  // called under m_
    return *this;
  }
  /// cancelled() reads `flag` (e.g. set from another thread); the flag must outlive the run.
  RecordingContext& cancel_on(const std::atomic<bool>& flag) {
    std::lock_guard lock(m_);
    cancel_rule_ = [&flag] { return flag.load(); };
    return *this;
  }
  /// cancelled() returns `rule()` (called with the context's lock held: do not call back
  /// into the context from it).
  RecordingContext& cancel_when(std::function<bool()> rule) {
    std::lock_guard lock(m_);
    cancel_rule_ = std::move(rule);
    return *this;
  }

  // ---- recordings (read after execute() returns) ----
  /// Every progress fraction, in call order.
  [[nodiscard]] const std::vector<double>& fractions() const { return fractions_; }
  /// The message of every progress() call (parallel to fractions()).
  [[nodiscard]] const std::vector<std::string>& progress_messages() const { return progress_messages_; }
  [[nodiscard]] std::size_t progress_calls() const {
    std::lock_guard lock(m_);
    return fractions_.size();
  }
  /// How many times cancelled() was called (throw_if_cancelled() included).
  [[nodiscard]] std::size_t cancel_checks() const { return cancel_checks_.load(); }
  [[nodiscard]] const std::vector<LogLine>& logs() const { return logs_; }
  /// The texts of the log lines of one level, in order.
  [[nodiscard]] std::vector<std::string> messages(LogLevel level) const {
    std::lock_guard lock(m_);
    std::vector<std::string> out;
    for (const auto& l : logs_)
      if (l.level == level) out.push_back(l.text);
    return out;
  }
  [[nodiscard]] std::vector<std::string> warnings() const { return messages(LogLevel::Warning); }
  [[nodiscard]] std::vector<std::string> infos() const { return messages(LogLevel::Info); }
  /// record() calls; a key recorded twice keeps the last value.
  [[nodiscard]] const std::map<std::string, ParamValue>& records() const { return records_; }
  /// add_input_file() calls, in order.
  [[nodiscard]] const std::vector<std::filesystem::path>& input_files() const { return inputs_; }
  /// Files written through write_file() (absolute or as resolved against output_dir()).
  [[nodiscard]] const std::vector<std::filesystem::path>& written_files() const { return written_; }

  // ---- NodeContext ----
  [[nodiscard]] const std::string& node_id() const override { return id_; }
  void progress(double fraction, std::string_view message = {}) override {
    std::lock_guard lock(m_);
    fractions_.push_back(fraction);
    progress_messages_.emplace_back(message);
  }
  [[nodiscard]] bool cancelled() const override {
    ++cancel_checks_;
    std::lock_guard lock(m_);
    return cancel_rule_ && cancel_rule_();
  }
  void log(LogLevel level, std::string_view message) override {
    std::lock_guard lock(m_);
    logs_.push_back({level, std::string(message)});
  }
  [[nodiscard]] const std::filesystem::path& output_dir() const override { return out_; }
  void add_input_file(const std::filesystem::path& file) override {
    std::lock_guard lock(m_);
    inputs_.push_back(file);
  }
  /// Like the executor: `write` fills a temporary file in the target's folder, renamed over
  /// the target when `write` returns (removed when it throws); refuses (InputError) a target
  /// recorded by add_input_file(); a relative `file` resolves against output_dir().
  using NodeContext::write_file;  // the stream overload
  void write_file(const std::filesystem::path& file,
                  const std::function<void(const std::filesystem::path& tmp)>& write) override {
    namespace fs = std::filesystem;
    const fs::path abs = (file.is_relative() ? out_ / file : file).lexically_normal();
    {
      std::lock_guard lock(m_);
      for (const auto& in : inputs_)
        if (fs::path(in).lexically_normal() == abs)
          throw InputError("refusing to overwrite " + abs.string() + ": it is an input of this run");
    }
    if (!abs.parent_path().empty()) fs::create_directories(abs.parent_path());
    static std::atomic<unsigned> counter{0};
    std::string name = ".";  // appended, not a chain of + (GCC 12's -Wrestrict false positive)
    name.append(abs.filename().string()).append(".tmp").append(std::to_string(counter++));
    const fs::path tmp = abs.parent_path() / name;
    std::error_code ec;
    try {
      write(tmp);
      if (!fs::exists(tmp)) throw Error("writing " + abs.string() + " produced no file");
      fs::rename(tmp, abs);
    } catch (...) {
      fs::remove(tmp, ec);
      throw;
    }
    std::lock_guard lock(m_);
    written_.push_back(abs);
  }
  void record(std::string_view key, const ParamValue& value) override {
    std::lock_guard lock(m_);
    records_[std::string(key)] = value;
  }
  [[nodiscard]] const std::string& device_override() const override { return device_; }
  /// Records every preview (no throttling); read them with previews().
  void preview(std::string_view port, Value value) override {
    std::lock_guard lock(m_);
    previews_.push_back({std::string(port), std::move(value)});
  }
  struct Preview {
    std::string port;
    Value value;
  };
  /// Every preview() call, in order.
  [[nodiscard]] const std::vector<Preview>& previews() const { return previews_; }
  /// What previews_wanted() answers: true (as in Studio) unless set otherwise.
  void set_previews_wanted(bool on) { previews_wanted_ = on; }
  [[nodiscard]] bool previews_wanted() const override { return previews_wanted_; }

 private:
  std::vector<Preview> previews_;
  bool previews_wanted_ = true;
  mutable std::mutex m_;
  std::string id_ = "test_node";
  std::filesystem::path out_, owned_dir_;
  std::string device_;
  std::function<bool()> cancel_rule_;
  mutable std::atomic<std::size_t> cancel_checks_{0};
  std::vector<double> fractions_;
  std::vector<std::string> progress_messages_;
  std::vector<LogLine> logs_;
  std::map<std::string, ParamValue> records_;
  std::vector<std::filesystem::path> inputs_, written_;
};

/// The registry of a host that loaded the plugin file `plugin` as `gemflow` does (the probe, the
/// API version and fingerprint checks, registration on a scratch registry), once per file for the
/// whole test program. Throws std::runtime_error with the loader's reason when the plugin is
/// refused. A test built by gemflow_add_plugin_test() (cmake/GemflowPlugin.cmake) gets its plugin's
/// file as GEMFLOW_TEST_PLUGIN_FILE, the default:
///
///   auto node = gemflow::testing::make_node(gemflow::testing::plugin_registry(), "example.scale");
inline const Registry& plugin_registry(const std::filesystem::path& plugin
#ifdef GEMFLOW_TEST_PLUGIN_FILE
                                       = GEMFLOW_TEST_PLUGIN_FILE
#endif
) {
  struct Loaded {
    Registry registry;
    PluginHost host{registry};
  };
  static std::mutex m;
  static std::map<std::filesystem::path, std::unique_ptr<Loaded>> loaded;  // the libraries stay loaded anyway
  std::lock_guard lock(m);
  auto& l = loaded[plugin];
  if (!l) {
    auto fresh = std::make_unique<Loaded>();
    const PluginRecord rec = fresh->host.load(plugin);
    if (!rec.loaded) throw std::runtime_error("plugin " + plugin.string() + " was refused: " + rec.error);
    l = std::move(fresh);
  }
  return l->registry;
}

/// A fresh node of type `id` from `registry` (what the executor does per workflow node).
/// Throws std::logic_error naming `id` when no plugin registered that type.
inline std::unique_ptr<Node> make_node(const Registry& registry, std::string_view id) {
  const NodeEntry* e = registry.find_node(id);
  if (e == nullptr) throw std::logic_error("node type '" + std::string(id) + "' is not registered");
  return e->create();
}

/// Runs `node.execute(ctx)` and returns the what() of the exception it throws (any
/// std::exception, gemflow::Cancelled included), or "(no error)".
inline std::string error_of(Node& node, NodeContext& ctx) {
  try {
    node.execute(ctx);
  } catch (const std::exception& e) {
    return e.what();
  }
  return "(no error)";
}

}  // namespace gemflow::testing
