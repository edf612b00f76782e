#include "gemflow/executor.hpp"
#include "gemflow/memory.hpp"

#include <dlfcn.h>
#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <deque>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <optional>
#include <random>
#include <set>
#include <thread>
#include <unordered_map>
#include <unordered_set>

#include <fmt/format.h>
#include <xxhash.h>
#include <nlohmann/json.hpp>

#include "gemflow/atomic_file.hpp"
#include "gemflow/config.hpp"
#include "gemflow/device.hpp"
#include "gemflow/plugin_loader.hpp"
#include "gemflow/types.hpp"

namespace gemflow {

namespace fs = std::filesystem;
using json = nlohmann::json;

const char* to_string(NodeState s) noexcept {
  switch (s) {
    case NodeState::Idle: return "idle";
    case NodeState::Queued: return "queued";
    case NodeState::Running: return "running";
    case NodeState::Done: return "done";
    case NodeState::Cached: return "cached";
    case NodeState::Failed: return "failed";
    case NodeState::Cancelled: return "cancelled";
    case NodeState::Skipped: return "skipped";
  }
  return "?";
}

std::optional<std::map<std::string, Value>> ResultCache::find(const std::string& key) const {
  std::lock_guard lock(mutex_);
  auto it = entries_.find(key);
  if (it == entries_.end()) return std::nullopt;
  return it->second;
}
void ResultCache::store(const std::string& key, std::map<std::string, Value> outputs) {
  std::lock_guard lock(mutex_);
  entries_[key] = std::move(outputs);
}
void ResultCache::clear() {
  std::lock_guard lock(mutex_);
  entries_.clear();
}

bool RunResult::ok() const {
  if (!diagnostics.empty() || cancelled || !provenance_error.empty()) return false;
  return std::none_of(nodes.begin(), nodes.end(), [](const auto& kv) {
    return kv.second.state == NodeState::Failed || kv.second.state == NodeState::Cancelled;
  });
}

namespace {

std::string hex64(XXH64_hash_t h) { return fmt::format("{:016x}", static_cast<std::uint64_t>(h)); }

std::string hash_text(const std::string& s) { return hex64(XXH3_64bits(s.data(), s.size())); }

// The code that computes a node's outputs, for its key: the content hash of the plugin file that
// registered it (of core's own library for core nodes), so that a rebuilt or upgraded plugin
// never gets results cached from the old one when a node's version number was not raised.
// Hashed once per file, size and modification time in a process (a sweep keys many runs).
std::string code_hash(const std::string& origin) {
  fs::path file = origin;
  if (origin == "core") {
    Dl_info info{};
    if (dladdr(reinterpret_cast<void*>(&hash_file), &info) == 0 || !info.dli_fname) return "core " GEMFLOW_SDK_VERSION;
    file = info.dli_fname;
  }
  std::error_code ec;
  const auto size = fs::file_size(file, ec);
  if (ec) return "unknown";  // a test registry's nodes: no file behind them
  const auto mtime = fs::last_write_time(file, ec);
  if (ec) return "unknown";
  struct Seen {
    std::uintmax_t size;
    fs::file_time_type mtime;
    std::string hash;
  };
  static std::mutex mutex;
  static std::unordered_map<std::string, Seen> seen;
  std::lock_guard lock(mutex);
  if (auto it = seen.find(file.string()); it != seen.end() && it->second.size == size && it->second.mtime == mtime)
    return it->second.hash;
  std::string h;
  try {
    h = hash_file(file);
  } catch (const Error&) {
    return "unknown";
  }
  seen[file.string()] = Seen{size, mtime, h};
  return h;
}

json to_json(const ParamValue& v) {
  return std::visit([](const auto& x) { return json(x); }, v);
}

// Same file? Existing files by identity (links, "..", bind mounts), others by canonical path.
bool same_file(const fs::path& a, const fs::path& b) {
  std::error_code ec;
  if (fs::exists(a, ec) && fs::exists(b, ec)) {
    const bool eq = fs::equivalent(a, b, ec);
    if (!ec) return eq;
  }
  return fs::weakly_canonical(a, ec) == fs::weakly_canonical(b, ec);
}

// What same_file() compares, as a key: existing files by device and inode (links, "..", bind
// mounts), others by canonical path.
std::string file_key(const fs::path& p) {
  struct stat st {};
  if (::stat(p.c_str(), &st) == 0) return fmt::format("@{}:{}", st.st_dev, st.st_ino);
  std::error_code ec;
  const fs::path c = fs::weakly_canonical(p, ec);
  return ec ? p.lexically_normal().string() : c.string();
}

struct FileRecord {
  fs::path file;
  std::string hash;
};

// Everything about one node of the run.
struct NodeRun {
  const NodeInstance* inst = nullptr;
  const NodeEntry* entry = nullptr;
  std::size_t order = 0;                                   // position in the dependency order
  std::vector<std::pair<std::string, ParamValue>> params;  // resolved, every spec param
  std::vector<std::size_t> succ;                           // downstream nodes (indices)
  struct In {
    std::string port;
    std::size_t from;
    std::string from_port;
  };
  std::vector<In> inputs;
  std::size_t pending = 0;  // upstream nodes not finished yet
  bool finished = false;
  int gpu = -1;                    // CUDA device the node is scheduled on (-1: none)
  std::size_t consumers_left = 0;  // downstream nodes yet to finish (then device copies go)
  std::unique_ptr<TransferLog> transfers = std::make_unique<TransferLog>();
  NodeResult result;
  std::string key_text;       // what result.key hashes (explain_key_change compares two of them)
  std::string last_key_text;  // the same of the last run of this workflow ("" when unknown)
  // Written by the node's context (its own threads): guarded by `mutex`.
  std::unique_ptr<std::mutex> mutex = std::make_unique<std::mutex>();
  std::vector<FileRecord> input_files, output_files;
  // The first `key_files` of input_files are the node's input path parameters, whose content is
  // in its key; the rest it recorded while running (add_input_file).
  std::size_t key_files = 0;
  std::string reads_key;     // where the files it read while running are listed (find_reads)
  bool reads_known = false;  // that list was found, and is in the key
  std::map<std::string, ParamValue> records;
  // The node's log lines for the provenance record: the first kLogHead, then the last kLogTail
  // (a node logging 200k lines made a 6.5 MB provenance.json); the console still gets every line.
  static constexpr std::size_t kLogHead = 500, kLogTail = 500;
  std::vector<std::string> log;
  std::deque<std::string> log_tail;
  std::size_t log_dropped = 0;
  void add_log(std::string line) {
    if (log.size() < kLogHead) {
      log.push_back(std::move(line));
      return;
    }
    log_tail.push_back(std::move(line));
    if (log_tail.size() > kLogTail) {
      log_tail.pop_front();
      ++log_dropped;
    }
  }
};

class Run;

class Context final : public NodeContext {
 public:
  Context(Run& run, NodeRun& node) : run_(run), node_(node) {}
  const std::string& node_id() const override { return node_.inst->id; }
  void progress(double fraction, std::string_view message) override;
  bool cancelled() const override;
  void log(LogLevel level, std::string_view message) override;
  const fs::path& output_dir() const override;
  void add_input_file(const fs::path& file) override;
  using NodeContext::write_file;  // the stream overload
  void write_file(const fs::path& file, const std::function<void(const fs::path& tmp)>& write) override;
  void record(std::string_view key, const ParamValue& value) override;
  const std::string& device_override() const override;
  void record_transfer(Transfer direction, std::size_t bytes, double seconds) override {
    node_.transfers->add(direction, bytes, seconds);
  }
  void preview(std::string_view port, Value value) override;
  bool previews_wanted() const override;
  /// The longest stretch without a progress call so far, the end of the work included (s).
  double longest_silence() const {
    const auto now = std::chrono::steady_clock::now();
    return std::max(max_silence_, std::chrono::duration<double>(now - last_call_).count());
  }

 private:
  Run& run_;
  NodeRun& node_;
  std::chrono::steady_clock::time_point last_call_ = std::chrono::steady_clock::now();
  double max_silence_ = 0.0;
  std::chrono::steady_clock::time_point last_progress_{};
  std::chrono::steady_clock::time_point last_preview_{};
  double last_fraction_ = -1.0;
  std::string last_message_;
};

class Run {
 public:
  Run(const Workflow& wf, const Registry& registry, const RunOptions& options)
      : wf_(wf), registry_(registry), opt_(options) {}
  Run(const Run&) = delete;
  Run& operator=(const Run&) = delete;
  ~Run() {
    if (lock_fd_ >= 0) ::close(lock_fd_);  // releases the output folder
  }

  RunResult execute();

  // ---- used by Context ----
  void emit(const RunEvent& e) {
    if (!opt_.on_event) return;
    std::lock_guard lock(event_mutex_);
    try {
      opt_.on_event(e);
    } catch (...) {  // a failing observer must not break the run
    }
  }
  bool cancelled() const { return opt_.cancel && opt_.cancel->load(std::memory_order_relaxed); }
  bool previews() const { return opt_.previews && opt_.on_event; }
  const fs::path& out_dir() const { return out_dir_; }
  const std::string& device() const { return opt_.device; }
  const fs::path& base_dir() const { return base_dir_; }

  // Registers a file read by `reader`; returns its hash.
  std::string note_read(const fs::path& file, const std::string& reader) {
    note_input(file, fmt::format("an input of this run (read by node '{}')", reader));
    return hash_or_missing(file);
  }
  // Registers a file that nothing may overwrite; `what` says why ("the workflow file of this run").
  void note_input(const fs::path& file, std::string what) {
    std::lock_guard lock(files_mutex_);
    reads_.emplace_back(file, std::move(what));
  }
  // Throws InputError when `file` is an input of the run, the provenance record or was
  // written by another node.
  void claim_write(const fs::path& file, const std::string& writer) {
    std::lock_guard lock(files_mutex_);
    for (const auto& [r, what] : reads_)
      if (same_file(file, r)) throw InputError(fmt::format("refusing to overwrite {}: it is {}", file.string(), what));
    if (opt_.write_provenance && same_file(file, out_dir_ / "provenance.json"))
      throw InputError(fmt::format("refusing to write {}: the run writes its provenance record there", file.string()));
    for (const auto& [w, other] : writes_)
      if (other != writer && same_file(file, w))
        throw InputError(
            fmt::format("refusing to overwrite {}: node '{}' already wrote it in this run", file.string(), other));
    writes_.emplace_back(file, writer);
  }
  static std::string hash_or_missing(const fs::path& file) {
    try {
      return hash_file(file);
    } catch (const Error&) {
      return "missing";
    }
  }

 private:
  bool prepare(RunResult& r);
  std::optional<Diagnostic> lock_out_dir();
  void compute_keys();
  void worker();
  [[nodiscard]] int scheduled_gpu(const NodeRun& n) const;
  void release_device_copies(std::size_t i);
  void run_node(std::size_t i);
  void finish(std::size_t i, NodeState state, std::vector<RunEvent>& events);
  void write_provenance(RunResult& r);
  void warn_stale_outputs();
  // The files a node wrote travel with its cached outputs as a Table under this key (file
  // relative to the output folder when inside it, and its xxh3): a cached writer counts only
  // while every file it wrote is still there with those bytes, in this run's output folder.
  // So do the files it read that its key does not cover (add_input_file: a palette table found
  // through an environment variable, a side file), as "READ:" and their absolute path: the
  // result counts only while each still has those bytes.
  static constexpr const char* kFilesKey = ".files";
  static constexpr std::string_view kReadPrefix = "READ:";
  Value files_value(const NodeRun& n) const {
    Table t;
    t.columns = {"file", "xxh3"};
    std::lock_guard lock(*n.mutex);
    for (const auto& f : n.output_files) {
      const fs::path rel = f.file.lexically_relative(out_dir_);
      const bool inside = !rel.empty() && *rel.begin() != "..";
      t.rows.push_back({inside ? "OUT/" + rel.generic_string() : f.file.string(), f.hash});
    }
    for (std::size_t k = n.key_files; k < n.input_files.size(); ++k)
      t.rows.push_back({std::string(kReadPrefix) + n.input_files[k].file.string(), n.input_files[k].hash});
    return Value::make(std::move(t));
  }
  // The list of files a node read while running (file, xxh3 when first listed), under
  // NodeRun::reads_key in the caches; see compute_keys.
  static constexpr const char* kReadsKey = "reads";
  std::optional<Table> find_reads(const std::string& key) const {
    std::optional<std::map<std::string, Value>> hit;
    if (opt_.cache) hit = opt_.cache->find(key);
    if (!hit && opt_.disk_cache) hit = opt_.disk_cache->find(key, registry_);
    if (!hit) return std::nullopt;
    const auto it = hit->find(kReadsKey);
    if (it == hit->end() || it->second.type() != DataType<Table>::name) return std::nullopt;
    return *it->second.as<Table>();
  }
  void store_reads(const NodeRun& n) const {
    std::lock_guard lock(*n.mutex);
    if (n.reads_known || n.input_files.size() == n.key_files) return;
    Table t;
    t.columns = {"file", "xxh3"};
    for (std::size_t k = n.key_files; k < n.input_files.size(); ++k)
      t.rows.push_back({n.input_files[k].file.string(), n.input_files[k].hash});
    std::map<std::string, Value> entry{{kReadsKey, Value::make(std::move(t))}};
    if (opt_.cache) opt_.cache->store(n.reads_key, entry);
    if (opt_.disk_cache) (void)opt_.disk_cache->store(n.reads_key, entry, registry_);
  }
  // Takes the files record out of a cache hit; nullopt when every file it names is as recorded,
  // else why the hit does not count.
  std::optional<std::string> files_changed(const NodeRun& n, std::map<std::string, Value>& hit) const {
    const bool writes = std::any_of(n.params.begin(), n.params.end(), [&](const auto& p) {
      const ParamSpec* ps = n.entry->spec.param(p.first);
      return ps && ps->kind == ParamKind::OutputPath && !std::get<std::string>(p.second).empty();
    });
    const std::string wrote = "a file it wrote is missing or was changed since";
    const auto it = hit.find(kFilesKey);
    if (it == hit.end()) return writes ? std::optional(wrote) : std::nullopt;
    const Value files = it->second;
    hit.erase(it);
    if (files.type() != DataType<Table>::name) return wrote;
    for (const auto& row : files.as<Table>()->rows) {
      if (row.size() != 2) return wrote;
      const auto* name = std::get_if<std::string>(&row[0]);
      const auto* hash = std::get_if<std::string>(&row[1]);
      if (!name || !hash) return wrote;
      if (name->starts_with(kReadPrefix)) {
        const fs::path file = name->substr(kReadPrefix.size());
        if (hash_or_missing(file) != *hash) return fmt::format("the file it read, {}, changed since", file.string());
        continue;
      }
      const fs::path file = name->starts_with("OUT/") ? out_dir_ / name->substr(4) : fs::path(*name);
      if (hash_or_missing(file) != *hash) return wrote;
    }
    return std::nullopt;
  }
  // The crash journal (OUT/.gemflow-journal.jsonl): one fsync'd line per finished node, removed
  // when the provenance record is written; found at the start of a run, it tells of a run that
  // died.
  void open_journal();
  void journal(const NodeRun& n);
  void close_journal(bool remove);

  const Workflow& wf_;
  const Registry& registry_;
  const RunOptions& opt_;
  fs::path out_dir_, base_dir_;
  std::string started_;
  std::deque<NodeRun> nodes_;  // deque: stable addresses
  std::mutex mutex_;
  std::condition_variable cv_;
  std::set<std::pair<std::size_t, std::size_t>> ready_;  // (order, index)
  std::size_t finished_ = 0;
  std::mutex event_mutex_, files_mutex_;
  std::vector<std::pair<fs::path, std::string>> reads_;   // file, what it is ("an input of ...")
  std::vector<std::pair<fs::path, std::string>> writes_;  // file, writer node
  unsigned jobs_used_ = 0;
  // The per-device limit (RunOptions::gpu_jobs): nodes running per CUDA device, and ready nodes
  // waiting for one of them to finish (moved back to ready_ one at a time).
  std::map<int, int> gpu_running_;
  std::map<int, std::set<std::pair<std::size_t, std::size_t>>> gpu_waiting_;
  int lock_fd_ = -1;  // holds the lock on out_dir_/.gemflow.lock for the whole run
  int journal_fd_ = -1;
  std::mutex journal_mutex_;
  std::atomic<bool> disk_cache_warned_{false};
};

// ---- Context ----

void Context::progress(double fraction, std::string_view message) {
  fraction = std::isnan(fraction) ? 0.0 : std::clamp(fraction, 0.0, 1.0);  // NaN: a node's 0/0
  const auto now = std::chrono::steady_clock::now();
  max_silence_ = std::max(max_silence_, std::chrono::duration<double>(now - last_call_).count());
  last_call_ = now;
  // Throttle (every mode, --json included): about 20 events per second; a new message, a jump of
  // 10% or the first 1.0 sooner, but a new message at most every 5 ms (QA: a message per call,
  // 5 million calls, gave 5 million JSON lines).
  const bool same = message == last_message_;
  const auto since = now - last_progress_;
  const bool finished = fraction >= 1.0 && last_fraction_ < 1.0;
  if (!finished && since < std::chrono::milliseconds(50) &&
      (same ? std::abs(fraction - last_fraction_) < 0.1 : since < std::chrono::milliseconds(5)))
    return;
  last_progress_ = now;
  last_fraction_ = fraction;
  last_message_ = std::string(message);
  RunEvent e;
  e.kind = RunEvent::Kind::Progress;
  e.node = node_.inst->id;
  e.state = NodeState::Running;
  e.progress = fraction;
  e.message = std::string(message);
  run_.emit(e);
}

bool Context::cancelled() const { return run_.cancelled(); }

bool Context::previews_wanted() const { return run_.previews(); }

void Context::preview(std::string_view port, Value value) {
  const PortSpec* spec = node_.entry->spec.output(port);
  if (!spec) throw Error(fmt::format("node '{}': preview of '{}', which is not an output port", node_.inst->id, port));
  if (value.empty() || value.type() != spec->type)
    throw Error(fmt::format("node '{}': preview of output '{}' must be a {}, not {}", node_.inst->id, port, spec->type,
                            value.empty() ? "empty value" : value.type()));
  if (!run_.previews()) return;
  // Studio redraws on each one: ten a second look live without flooding the event queue.
  const auto now = std::chrono::steady_clock::now();
  if (now - last_preview_ < std::chrono::milliseconds(100)) return;
  last_preview_ = now;
  RunEvent e;
  e.kind = RunEvent::Kind::Preview;
  e.node = node_.inst->id;
  e.state = NodeState::Running;
  e.port = std::string(port);
  e.value = std::move(value);
  run_.emit(e);
}

void Context::log(LogLevel level, std::string_view message) {
  {
    std::lock_guard lock(*node_.mutex);
    static const char* names[] = {"debug", "info", "warning", "error"};
    node_.add_log(fmt::format("{}: {}", names[static_cast<int>(level)], message));
  }
  RunEvent e;
  e.kind = RunEvent::Kind::Log;
  e.node = node_.inst->id;
  e.state = NodeState::Running;
  e.level = level;
  e.message = std::string(message);
  run_.emit(e);
}

const fs::path& Context::output_dir() const { return run_.out_dir(); }

void Context::add_input_file(const fs::path& file) {
  const fs::path abs = (file.is_relative() ? run_.base_dir() / file : file).lexically_normal();
  {
    std::lock_guard lock(*node_.mutex);
    for (const auto& f : node_.input_files)
      if (f.file == abs) return;
  }
  const std::string h = run_.note_read(abs, node_.inst->id);
  std::lock_guard lock(*node_.mutex);
  node_.input_files.push_back({abs, h});
}

void Context::write_file(const fs::path& file, const std::function<void(const fs::path& tmp)>& write) {
  const fs::path abs = (file.is_relative() ? run_.out_dir() / file : file).lexically_normal();
  run_.claim_write(abs, node_.inst->id);
  std::error_code ec;
  if (!abs.parent_path().empty()) fs::create_directories(abs.parent_path(), ec);
  if (ec) throw Error(fmt::format("cannot create the folder of {}: {}", abs.string(), ec.message()));
  static std::atomic<unsigned> counter{0};
  const fs::path tmp = abs.parent_path() / fmt::format(".{}.tmp{}-{}", abs.filename().string(), ::getpid(), counter++);
  // The temporary file is created here, so that a folder that cannot be written is reported
  // with the file the user asked for and the system's reason, whatever the node's writer does.
  const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) throw Error(fmt::format("cannot write {}: {}", abs.string(), std::strerror(errno)));
  ::close(fd);
  // Messages of the writer name the temporary file: name the real one instead.
  auto renamed = [&](std::string text) {
    const std::string t = tmp.string();
    for (auto p = text.find(t); p != std::string::npos; p = text.find(t, p + abs.string().size()))
      text.replace(p, t.size(), abs.string());
    return text;
  };
  try {
    write(tmp);
    if (!fs::exists(tmp)) throw Error(fmt::format("writing {} produced no file", abs.string()));
    sync_written_file(tmp, abs);  // a delayed write error (EIO, ENOSPC) fails the node, not the file
    fs::rename(tmp, abs, ec);
    if (ec) throw Error(fmt::format("cannot write {}: {}", abs.string(), ec.message()));
  } catch (const Cancelled&) {
    fs::remove(tmp, ec);
    throw;
  } catch (const InputError& e) {
    fs::remove(tmp, ec);
    if (std::string(e.what()).find(tmp.string()) == std::string::npos) throw;
    throw InputError(renamed(e.what()));
  } catch (const std::exception& e) {
    fs::remove(tmp, ec);
    if (std::string(e.what()).find(tmp.string()) == std::string::npos) throw;
    throw Error(renamed(e.what()));
  } catch (...) {
    fs::remove(tmp, ec);
    throw;
  }
  const std::string h = Run::hash_or_missing(abs);
  std::lock_guard lock(*node_.mutex);
  node_.output_files.push_back({abs, h});
}

void Context::record(std::string_view key, const ParamValue& value) {
  std::lock_guard lock(*node_.mutex);
  node_.records[std::string(key)] = value;
}

const std::string& Context::device_override() const { return run_.device(); }

// ---- Run ----

bool Run::prepare(RunResult& r) {
  // errors stop the run before it starts; warnings are logged and the run goes on
  const auto sort_out = [&](std::vector<Diagnostic> ds) {
    for (auto& d : ds) {
      if (d.severity == Diagnostic::Severity::Error) {
        r.diagnostics.push_back(std::move(d));
      } else {
        RunEvent e;
        e.kind = RunEvent::Kind::Log;
        e.node = d.node;
        e.level = LogLevel::Warning;
        e.message = d.log_str();  // the log line names the severity and the node
        emit(e);
      }
    }
  };
  sort_out(validate(wf_, registry_));
  if (!opt_.device.empty() && !DeviceRequest::parse(opt_.device)) {
    Diagnostic d;
    d.message = fmt::format("device '{}' is not a device (auto, cpu, cuda, cuda:N)", opt_.device);
    r.diagnostics.push_back(std::move(d));
  }
  if (!opt_.until.empty() && !wf_.find(opt_.until)) {
    Diagnostic d;
    d.node = opt_.until;
    d.message = "no such node to run until";
    std::vector<std::string> ids;
    for (const auto& n : wf_.nodes) ids.push_back(n.id);
    if (auto near = nearest_name(opt_.until, ids); !near.empty()) d.hint = fmt::format("did you mean '{}'?", near);
    r.diagnostics.push_back(std::move(d));
  }
  if (!r.diagnostics.empty()) return false;

  base_dir_ = wf_.base_dir();
  if (!opt_.out_dir.empty()) {
    out_dir_ = fs::absolute(opt_.out_dir).lexically_normal();
  } else {
    std::string name = wf_.name;
    if (name.empty()) name = wf_.file.empty() ? "workflow" : wf_.file.stem().string();
    out_dir_ = fs::current_path() / "out" / name;
  }
  // Files that must not be written, known before anything runs.
  sort_out(check_run_paths(wf_, registry_, out_dir_));
  sort_out(check_run_devices(wf_, registry_, opt_.device));
  if (!r.diagnostics.empty()) return false;
  std::error_code ec;
  fs::create_directories(out_dir_, ec);
  if (ec || !fs::is_directory(out_dir_)) {
    Diagnostic d;
    d.where.file = out_dir_.string();
    d.message = fmt::format("cannot create the output folder: {}", ec ? ec.message() : "not a folder");
    r.diagnostics.push_back(std::move(d));
    return false;
  }
  // A folder we cannot write into is found now, not after hours of compute.
  {
    const fs::path probe = out_dir_ / fmt::format(".gemflow-write-test-{}", ::getpid());
    const int fd = ::open(probe.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0) {
      Diagnostic d;
      d.message = fmt::format("cannot write to output folder {}: {}", out_dir_.string(), std::strerror(errno));
      r.diagnostics.push_back(std::move(d));
      return false;
    }
    ::close(fd);
    fs::remove(probe, ec);
  }
  if (auto d = lock_out_dir()) {
    r.diagnostics.push_back(std::move(*d));
    return false;
  }
  if (!wf_.file.empty()) note_input(fs::absolute(wf_.file).lexically_normal(), "the workflow file of this run");

  // Nodes of this run: all, or `until` and its ancestors; in dependency order.
  // (maps, not scans of every node or link per node: a workflow of 100 000 nodes)
  const std::vector<std::string> order = topological_order(wf_);
  std::unordered_map<std::string_view, const NodeInstance*> inst;  // the first of a duplicate id, as find()
  for (const auto& n : wf_.nodes) inst.emplace(n.id, &n);
  std::unordered_set<std::string_view> wanted;
  if (opt_.until.empty()) {
    wanted.insert(order.begin(), order.end());
  } else {
    std::unordered_map<std::string_view, std::vector<std::string_view>> from;  // node → its upstream nodes
    for (const auto& l : wf_.links) from[l.to_node].push_back(l.from_node);
    std::vector<std::string_view> stack{opt_.until};
    while (!stack.empty()) {
      const std::string_view id = stack.back();
      stack.pop_back();
      if (!wanted.insert(id).second) continue;
      if (const auto it = from.find(id); it != from.end())
        stack.insert(stack.end(), it->second.begin(), it->second.end());
    }
  }
  std::unordered_map<std::string_view, std::size_t> index;
  for (const auto& id : order) {
    if (!wanted.count(id)) continue;
    NodeRun n;
    n.inst = inst.at(id);
    n.entry = registry_.find_node(n.inst->type);
    n.order = nodes_.size();
    index[n.inst->id] = nodes_.size();
    nodes_.push_back(std::move(n));
  }
  std::set<std::pair<std::size_t, std::size_t>> edges;
  for (const auto& l : wf_.links) {
    auto a = index.find(l.from_node), b = index.find(l.to_node);
    if (a == index.end() || b == index.end()) continue;
    NodeRun& to = nodes_[b->second];
    to.inputs.push_back({l.to_port, a->second, l.from_port});
    if (edges.emplace(a->second, b->second).second) {
      nodes_[a->second].succ.push_back(b->second);
      ++to.pending;
    }
  }
  // Resolved parameters: every parameter of the spec, paths made absolute.
  for (auto& n : nodes_) {
    for (const auto& ps : n.entry->spec.params) {
      const ParamValue* given = n.inst->param(ps.name);
      ParamValue v = given ? *given : ps.default_value;
      if (ps.kind == ParamKind::Float && std::holds_alternative<std::int64_t>(v))
        v = static_cast<double>(std::get<std::int64_t>(v));
      if ((ps.kind == ParamKind::InputPath || ps.kind == ParamKind::OutputPath) && !std::get<std::string>(v).empty()) {
        const fs::path p = std::get<std::string>(v);
        if (p.is_relative())
          v = ((ps.kind == ParamKind::InputPath ? base_dir_ : out_dir_) / p).lexically_normal().string();
      }
      n.params.emplace_back(ps.name, std::move(v));
    }
    n.gpu = scheduled_gpu(n);
    n.consumers_left = n.succ.size();
  }
  return true;
}

// The CUDA device of a node for the per-device limit: its first device parameter, or the run's
// --device, `auto` as resolve_device() takes it; -1 for the CPU (or a value validate() refuses).
int Run::scheduled_gpu(const NodeRun& n) const {
  for (std::size_t k = 0; k < n.params.size(); ++k) {
    if (n.entry->spec.params[k].kind != ParamKind::Device) continue;
    const ParamValue& v = n.params[k].second;
    const std::string text = !opt_.device.empty()                     ? opt_.device
                             : std::holds_alternative<std::string>(v) ? std::get<std::string>(v)
                                                                      : std::string();
    const auto req = DeviceRequest::parse(text);
    if (!req || req->kind == DeviceRequest::Kind::Cpu) return -1;
    if (req->kind == DeviceRequest::Kind::Cuda) return req->index;
    return cuda_device_count() > 0 ? 0 : -1;
  }
  return -1;
}

// Makes the host copies of node i's device-resident outputs and drops their device copies, once
// no node of the run needs them on the device (its consumers finished, or the run ended): device
// memory then holds only what running nodes use, and results, caches and viewers hold host values.
// The downloads count in node i's transfers. Never called with mutex_ held (they take time).
void Run::release_device_copies(std::size_t i) {
  NodeRun& n = nodes_[i];
  for (const auto& [port, v] : n.result.outputs) {
    try {
      v.release_device_copy(n.transfers.get());
    } catch (const std::exception& e) {
      RunEvent ev;
      ev.kind = RunEvent::Kind::Log;
      ev.node = n.inst->id;
      ev.state = n.result.state;
      ev.level = LogLevel::Warning;
      ev.message = fmt::format("output '{}' stays on the device only: its host copy failed: {}", port, e.what());
      {
        std::lock_guard lock(*n.mutex);
        n.add_log("warning: " + ev.message);
      }
      emit(ev);
    }
  }
}

// Two runs writing one folder would mix their files and the provenance record would describe
// either: the run holds an exclusive lock on OUT/.gemflow.lock (flock: released by the system
// when the process ends, however it ends), and a second run into a locked folder is refused.
// The file stays (removing it would let two runs lock two different files); it holds the pid.
std::optional<Diagnostic> Run::lock_out_dir() {
  const fs::path file = out_dir_ / ".gemflow.lock";
  Diagnostic d;
  d.where.file = out_dir_.string();
  const int fd = ::open(file.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  if (fd < 0) {
    d.message = fmt::format("cannot create the lock file {}: {}", file.string(), std::strerror(errno));
    return d;
  }
  if (::flock(fd, LOCK_EX | LOCK_NB) != 0) {
    const int err = errno;
    std::string holder;
    char buf[64] = {};
    if (const ssize_t n = ::pread(fd, buf, sizeof buf - 1, 0); n > 0) {
      holder.assign(buf, static_cast<std::size_t>(n));
      holder.erase(holder.find_last_not_of(" \n") + 1);
    }
    ::close(fd);
    if (err == EWOULDBLOCK) {
      d.message = fmt::format("the output folder is in use by another run ({}lock file {})",
                              holder.empty() ? "" : fmt::format("pid {}; ", holder), file.string());
      d.hint = "wait for it to end, or choose another output folder (--out)";
    } else {
      d.message = fmt::format("cannot lock the output folder ({}): {}", file.string(), std::strerror(err));
    }
    return d;
  }
  const std::string pid = fmt::format("{}\n", ::getpid());
  if (::ftruncate(fd, 0) == 0) (void)!::pwrite(fd, pid.data(), pid.size(), 0);
  lock_fd_ = fd;
  return std::nullopt;
}

void Run::compute_keys() {
  for (auto& n : nodes_) {
    std::string s = fmt::format("type={}\nversion={}\ncode={}\n", n.entry->spec.info.id, n.entry->spec.info.version,
                                code_hash(n.entry->origin));
    if (n.inst->bypass) s += "bypass\n";  // what flows downstream is not the node's result
    for (std::size_t k = 0; k < n.params.size(); ++k) {
      const ParamSpec& ps = n.entry->spec.params[k];
      const auto& [name, v] = n.params[k];
      std::string text = format_param(v);
      if (ps.kind == ParamKind::Device && !opt_.device.empty()) text = opt_.device;
      // No folder in the key: a run from another folder or into another --out is the same
      // computation. An input file counts by its name and content; an output by its place in
      // the output folder.
      if (ps.kind == ParamKind::InputPath && !std::get<std::string>(v).empty())
        text = fs::path(std::get<std::string>(v)).filename().string();
      if (ps.kind == ParamKind::OutputPath && !std::get<std::string>(v).empty()) {
        const fs::path rel = fs::path(std::get<std::string>(v)).lexically_relative(out_dir_);
        if (!rel.empty() && *rel.begin() != "..") text = "OUT/" + rel.generic_string();
      }
      s += fmt::format("param {}={}\n", name, text);
      if (ps.kind == ParamKind::InputPath && !std::get<std::string>(v).empty()) {
        const std::string h = note_read(std::get<std::string>(v), n.inst->id);
        s += fmt::format("file {}={}\n", name, h);
        n.input_files.push_back({std::get<std::string>(v), h});
      }
    }
    // Files the node read while running in an earlier run (add_input_file: a table found through
    // an environment variable) are not in its parameters. Their list is kept in the cache with
    // each file's hash at that time; a file whose bytes differ from those now is in the key, so
    // that the node and everything downstream run again (and the same bytes find that result).
    n.reads_key = hash_text("reads\n" + s);
    if (const auto reads = find_reads(n.reads_key)) {
      n.reads_known = true;
      for (const auto& row : reads->rows) {
        if (row.size() != 2) continue;
        const auto* file = std::get_if<std::string>(&row[0]);
        const auto* then = std::get_if<std::string>(&row[1]);
        if (!file || !then) continue;
        const std::string now = note_read(*file, n.inst->id);
        if (now != *then) s += fmt::format("read {}={}\n", *file, now);
        n.input_files.push_back({*file, now});
      }
    }
    n.key_files = n.input_files.size();
    auto inputs = n.inputs;
    std::sort(inputs.begin(), inputs.end(), [](const auto& a, const auto& b) { return a.port < b.port; });
    for (const auto& in : inputs)
      s += fmt::format("input {}={}:{}\n", in.port, nodes_[in.from].result.key, in.from_port);
    n.result.key = hash_text(s);
    n.key_text = std::move(s);
  }
}

void Run::finish(std::size_t first, NodeState first_state, std::vector<RunEvent>& events) {
  // Called with mutex_ held. A failure skips (a cancellation cancels) everything downstream:
  // a work list, not recursion, so that a long chain cannot overflow the stack.
  std::vector<std::pair<std::size_t, NodeState>> todo{{first, first_state}};
  while (!todo.empty()) {
    const auto [i, state] = todo.back();
    todo.pop_back();
    NodeRun& n = nodes_[i];
    if (n.finished) continue;
    n.finished = true;
    n.result.state = state;
    ++finished_;
    RunEvent e;
    e.kind = RunEvent::Kind::State;
    e.node = n.inst->id;
    e.state = state;
    e.message = n.result.error;
    e.progress = state == NodeState::Done || state == NodeState::Cached ? 1.0 : 0.0;
    events.push_back(e);
    const bool ok = state == NodeState::Done || state == NodeState::Cached;
    // reversed: the work list is a stack, so the first successor is finished first
    for (auto it = n.succ.rbegin(); it != n.succ.rend(); ++it) {
      const std::size_t s = *it;
      NodeRun& d = nodes_[s];
      if (d.finished) continue;
      if (ok) {
        if (--d.pending == 0) ready_.emplace(d.order, s);
      } else if (state == NodeState::Cancelled) {
        d.result.error.clear();
        todo.emplace_back(s, NodeState::Cancelled);
      } else {
        d.result.error = fmt::format("skipped: upstream node '{}' {}", n.inst->id,
                                     state == NodeState::Failed ? "failed" : "did not run");
        todo.emplace_back(s, NodeState::Skipped);
      }
    }
  }
}

void Run::run_node(std::size_t i) {
  NodeRun& n = nodes_[i];
  const std::string label = fmt::format("node '{}' ({})", n.inst->id, n.inst->type);
  // Inputs (upstream nodes are finished; their results no longer change).
  std::vector<std::pair<std::string, Value>> inputs;
  for (const auto& in : n.inputs) {
    const auto& outs = nodes_[in.from].result.outputs;
    auto it = outs.find(in.from_port);
    inputs.emplace_back(in.port, it == outs.end() ? Value() : it->second);
  }
  const auto t0 = std::chrono::steady_clock::now();
  NodeState state = NodeState::Done;
  std::string error;
  std::map<std::string, Value> outputs;

  // Bypassed: each output passes on the first input of its type (by port order); nothing runs
  // or is cached. An output with no such input stays unset (the check below names it).
  if (n.inst->bypass) {
    for (const auto& o : n.entry->spec.outputs)
      for (const auto& in : n.entry->spec.inputs)
        if (in.type == o.type) {
          auto it = std::find_if(inputs.begin(), inputs.end(), [&](const auto& p) { return p.first == in.name; });
          if (it != inputs.end() && !it->second.empty()) {
            outputs.emplace(o.name, it->second);
            break;
          }
        }
    n.result.why = "bypassed";
    for (std::size_t s : n.succ)
      for (const auto& in : nodes_[s].inputs)
        if (in.from == i && !outputs.count(in.from_port)) {
          state = NodeState::Failed;
          error =
              fmt::format("{} is bypassed but no input of type {} passes to its output '{}' (it feeds {}.{})", label,
                          n.entry->spec.output(in.from_port) ? n.entry->spec.output(in.from_port)->type : "?",
                          in.from_port, nodes_[s].inst->id, in.port);
        }
    if (state == NodeState::Failed) outputs.clear();
  }
  // Cache: same key, and every output file still present.
  bool cached = false;
  if (opt_.cache && !n.inst->bypass) {
    if (auto hit = opt_.cache->find(n.result.key)) {
      cached = !files_changed(n, *hit);
      if (cached) outputs = std::move(*hit);
    }
  }
  std::string cache_miss;
  if (!cached && !n.inst->bypass && opt_.disk_cache) {
    if (auto hit = opt_.disk_cache->find(n.result.key, registry_, &cache_miss)) {
      auto entry = *hit;  // with its files record, for the session cache
      const auto changed = files_changed(n, *hit);
      cached = !changed;
      if (cached) {
        outputs = std::move(*hit);
        if (opt_.cache) opt_.cache->store(n.result.key, std::move(entry));
      } else {
        cache_miss = *changed;
      }
    }
  }
  if (cached) {
    state = NodeState::Cached;
    n.result.why = "from the cache";
  } else if (!n.inst->bypass) {
    if (n.last_key_text.empty()) n.result.why = opt_.disk_cache ? "first run of this node (" + cache_miss + ")" : "";
    else if (n.last_key_text != n.key_text) n.result.why = explain_key_change(n.last_key_text, n.key_text);
    else n.result.why = cache_miss.empty() ? "not in the cache" : cache_miss;
    RunEvent e;
    e.kind = RunEvent::Kind::State;
    e.node = n.inst->id;
    e.state = NodeState::Running;
    emit(e);
    try {
      std::unique_ptr<Node> node = n.entry->create();
      if (!node) throw Error("the node factory returned nothing");
      for (const auto& [name, v] : n.params) node->set_param(name, v);
      node->set_transfer_log(n.transfers.get());
      for (auto& [port, v] : inputs) {
        if (v.empty()) throw Error(fmt::format("input '{}' has no value", port));
        node->set_input(port, std::move(v));
      }
      Context ctx(*this, n);
      node->execute(ctx);
      if (opt_.progress_check_seconds > 0 && ctx.longest_silence() > opt_.progress_check_seconds)
        ctx.warn(
            fmt::format("reported no progress for {:.1f} s (nodes report progress at least every {:g} s of "
                        "work: NodeContext::progress)",
                        ctx.longest_silence(), opt_.progress_check_seconds));
      for (const auto& o : n.entry->spec.outputs) {
        const Value& v = node->output(o.name);
        if (!v.empty()) outputs.emplace(o.name, v);
      }
      // Outputs that feed a node of this run must be set.
      for (std::size_t s : n.succ)
        for (const auto& in : nodes_[s].inputs)
          if (in.from == i && !outputs.count(in.from_port))
            throw Error(
                fmt::format("output '{}' was not set (it feeds {}.{})", in.from_port, nodes_[s].inst->id, in.port));
      // the others: a warning in the node's log (break-test: silent before)
      for (const auto& o : n.entry->spec.outputs)
        if (!outputs.count(o.name)) ctx.warn(fmt::format("output '{}' was not set", o.name));
      store_reads(n);
      auto entry = outputs;
      entry.emplace(kFilesKey, files_value(n));
      if (opt_.cache) opt_.cache->store(n.result.key, entry);
      if (opt_.disk_cache) {
        std::string why_not;
        if (!opt_.disk_cache->store(n.result.key, entry, registry_, &why_not)) {
          ctx.log(LogLevel::Debug, "not cached on disk: " + why_not);
          // A folder that cannot be written is said once per run, not once per node.
          if (why_not.starts_with("cannot") && !disk_cache_warned_.exchange(true)) {
            RunEvent ev;
            ev.kind = RunEvent::Kind::Log;
            ev.level = LogLevel::Warning;
            ev.message = fmt::format("the result cache in {} cannot be written ({}); the run goes on uncached",
                                     opt_.disk_cache->dir().string(), why_not);
            emit(ev);
          }
        }
      }
    } catch (const Cancelled&) {
      state = NodeState::Cancelled;
      error = "cancelled";
    } catch (const std::bad_alloc& ex) {  // an allocation the memory checks did not foresee
      state = NodeState::Failed;
      const auto avail = available_host_memory();
      error = fmt::format(
          "{}: out of memory ({}){}{}", label, ex.what(),
          avail ? fmt::format("; {:.2f} GiB available now", static_cast<double>(*avail) / (1u << 30)) : std::string(),
          address_limit_note());
    } catch (const std::exception& ex) {
      state = NodeState::Failed;
      // The convention: a node throws without its id or type, which the label adds here, once.
      error = fmt::format("{}: {}", label, ex.what());
    } catch (...) {
      state = NodeState::Failed;
      error = fmt::format("{}: unknown exception", label);
    }
    // Whatever a node throws once the run is cancelled is how it stopped, not a failure (a
    // plugin may wrap the cancellation in its own exception). Its text goes to the node's log.
    if (state == NodeState::Failed && cancelled()) {
      std::lock_guard lock(*n.mutex);
      n.add_log(fmt::format("info: stopped after the run was cancelled: {}", error));
      state = NodeState::Cancelled;
      error = "cancelled";
    }
  }
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  std::vector<RunEvent> events;
  std::vector<std::size_t> release;  // nodes whose consumers have all finished now
  {
    std::lock_guard lock(mutex_);
    n.result.seconds = seconds;
    n.result.error = error;
    n.result.outputs = std::move(outputs);
    finish(i, state, events);
    journal(n);
    // Emitted before any dependent can start, so observers see "done" before "running".
    for (const auto& e : events) emit(e);
    if (n.consumers_left == 0) release.push_back(i);
    std::unordered_set<std::size_t> upstream;
    for (const auto& in : n.inputs)
      if (upstream.insert(in.from).second && --nodes_[in.from].consumers_left == 0) release.push_back(in.from);
  }
  cv_.notify_all();
  for (std::size_t k : release) release_device_copies(k);
}

void Run::worker() {
  std::unique_lock lock(mutex_);
  for (;;) {
    cv_.wait(lock, [&] { return !ready_.empty() || finished_ == nodes_.size(); });
    if (ready_.empty()) return;  // everything finished
    const std::size_t i = ready_.begin()->second;
    ready_.erase(ready_.begin());
    if (cancelled()) {
      std::vector<RunEvent> events;
      nodes_[i].result.error = "cancelled before it started";
      finish(i, NodeState::Cancelled, events);
      for (const auto& e : events) emit(e);
      for (auto& [gpu, waiting] : gpu_waiting_) {  // they are cancelled too, not left waiting
        ready_.insert(waiting.begin(), waiting.end());
        waiting.clear();
      }
      cv_.notify_all();
      continue;
    }
    // At most gpu_jobs nodes per device: a node finding its device full waits for one of them
    // (which moves it back to ready_ when it ends), so the workers go on with other nodes.
    const int gpu = opt_.gpu_jobs > 0 ? nodes_[i].gpu : -1;
    if (gpu >= 0) {
      if (gpu_running_[gpu] >= opt_.gpu_jobs) {
        gpu_waiting_[gpu].emplace(nodes_[i].order, i);
        continue;
      }
      ++gpu_running_[gpu];
    }
    lock.unlock();
    run_node(i);
    lock.lock();
    if (gpu >= 0) {
      --gpu_running_[gpu];
      if (auto& waiting = gpu_waiting_[gpu]; !waiting.empty()) {
        ready_.insert(waiting.extract(waiting.begin()));
        cv_.notify_all();
      }
    }
  }
}

void Run::write_provenance(RunResult& r) {
  json j;
  j["gemflow"] = {{"version", GEMFLOW_SDK_VERSION},
                  {"fingerprint", PluginHost::host_fingerprint()},
                  {"built_with_cuda", built_with_cuda()},
                  {"cuda_devices", cuda_device_count()}};
  json w = {{"name", wf_.name}, {"format", wf_.format}};
  if (!wf_.file.empty()) {
    const fs::path f = fs::absolute(wf_.file).lexically_normal();
    w["file"] = f.string();
    w["xxh3"] = hash_or_missing(f);
  } else {
    w["file"] = nullptr;
  }
  w["effective"] = to_yaml(wf_);  // after --set overrides, sub-workflows flattened
  if (!wf_.included.empty()) {
    json inc = json::array();
    for (const auto& f : wf_.included)
      inc.push_back({{"file", fs::absolute(f.file).lexically_normal().string()}, {"xxh3", f.xxh3}});
    w["included"] = inc;
  }
  j["workflow"] = w;
  j["date"] = started_;
  j["finished"] = utc_now();
  j["host"] = host_name();
  j["command_line"] = opt_.command_line;
  j["jobs"] = {{"requested", opt_.jobs}, {"used", jobs_used_}, {"per_gpu", opt_.gpu_jobs}};
  json plugins = json::array();
  if (opt_.plugins)
    for (const auto& p : *opt_.plugins)
      if (p.loaded)
        plugins.push_back(
            {{"name", p.name}, {"version", p.version}, {"file", p.file.string()}, {"fingerprint", p.fingerprint}});
  j["plugins"] = plugins;
  j["device_override"] = opt_.device;
  j["until"] = opt_.until;
  j["output_dir"] = out_dir_.string();
  j["cancelled"] = r.cancelled;
  json nodes = json::object();
  for (const auto& n : nodes_) {
    json jn;
    jn["type"] = n.inst->type;
    jn["version"] = n.entry->spec.info.version;
    jn["plugin"] = n.entry->origin;
    if (opt_.plugins)
      for (const auto& p : *opt_.plugins)
        if (p.loaded && p.file.string() == n.entry->origin) {
          jn["plugin_name"] = p.name;
          jn["plugin_version"] = p.version;
        }
    json params = json::object();
    for (const auto& [k, v] : n.params) {  // --device replaced every device parameter (QA: it said "auto")
      const ParamSpec* ps = n.entry->spec.param(k);
      params[k] = ps && ps->kind == ParamKind::Device && !opt_.device.empty() ? json(opt_.device) : to_json(v);
    }
    jn["params"] = params;
    for (const auto& ps : n.entry->spec.params)  // the seed of a stochastic node (SeedParam)
      if (ps.seed) jn["seed"] = params[ps.name];
    jn["state"] = to_string(n.result.state);
    jn["seconds"] = n.result.seconds;
    if (const TransferStats t = n.transfers->stats(); !t.empty())  // host↔device copies (device_copy.hpp)
      jn["transfers"] = {
          {"to_device", {{"bytes", t.to_device_bytes}, {"count", t.to_device_count}, {"seconds", t.to_device_seconds}}},
          {"to_host", {{"bytes", t.to_host_bytes}, {"count", t.to_host_count}, {"seconds", t.to_host_seconds}}}};
    jn["key"] = n.result.key;
    if (!n.result.why.empty()) jn["why"] = n.result.why;
    json rec = json::object();
    for (const auto& [k, v] : n.records) rec[k] = to_json(v);
    jn["records"] = rec;
    auto files = [](const std::vector<FileRecord>& fsv) {
      json a = json::array();
      for (const auto& f : fsv) a.push_back({{"file", f.file.string()}, {"xxh3", f.hash}});
      return a;
    };
    jn["inputs"] = files(n.input_files);
    jn["outputs"] = files(n.output_files);
    if (!n.result.error.empty()) jn["error"] = n.result.error;
    if (!n.log.empty()) {
      json log = n.log;
      if (n.log_dropped > 0) log.push_back(fmt::format("({} lines left out)", n.log_dropped));
      for (const auto& l : n.log_tail) log.push_back(l);
      jn["log"] = log;
    }
    nodes[n.inst->id] = jn;
  }
  j["nodes"] = nodes;
  const fs::path file = out_dir_ / "provenance.json";
  {
    std::lock_guard lock(files_mutex_);
    for (const auto& [in, what] : reads_)
      if (same_file(file, in)) throw InputError(fmt::format("refusing to overwrite {}: it is {}", file.string(), what));
  }
  write_file_atomically(file, j.dump(2) + "\n");
  r.provenance = file;
}

// A node that did not finish leaves an earlier run's files where it would have written: say so,
// in the console and the provenance record (QA: a failed re-run left the previous report.json,
// which looked like this run's). Nothing is deleted: those results may still be wanted.
void Run::warn_stale_outputs() {
  for (auto& n : nodes_) {
    const NodeState st = n.result.state;
    if (st != NodeState::Failed && st != NodeState::Skipped && st != NodeState::Cancelled) continue;
    for (std::size_t k = 0; k < n.params.size(); ++k) {
      if (n.entry->spec.params[k].kind != ParamKind::OutputPath) continue;
      const auto& p = std::get<std::string>(n.params[k].second);
      std::error_code ec;
      // a file only: a folder at that path (the node's error said so) is no earlier output
      if (p.empty() || !fs::is_regular_file(p, ec)) continue;
      // written in this run by another node (the collision this node's error names): not earlier
      if (std::any_of(writes_.begin(), writes_.end(), [&](const auto& w) { return same_file(p, w.first); })) continue;
      RunEvent e;
      e.kind = RunEvent::Kind::Log;
      e.node = n.inst->id;
      e.state = st;
      e.level = LogLevel::Warning;
      e.message = fmt::format("{} (parameter '{}') is from an earlier run: this node {} this time", p,
                              n.params[k].first, st == NodeState::Failed ? "failed" : "did not run");
      n.add_log("warning: " + e.message);
      emit(e);
    }
  }
}

void Run::open_journal() {
  const fs::path file = out_dir_ / ".gemflow-journal.jsonl";
  std::error_code ec;
  if (fs::exists(file, ec)) {
    // A run into this folder died (crash, kill, power loss) after these nodes finished.
    std::ifstream in(file);
    std::vector<std::string> done;
    for (std::string line; std::getline(in, line);) {
      try {
        const json j = json::parse(line);
        if (j.value("state", "") == "done" || j.value("state", "") == "cached") done.push_back(j.value("node", "?"));
      } catch (const std::exception&) {  // the line being written when it died
      }
    }
    std::string names;
    for (std::size_t k = 0; k < done.size() && k < 10; ++k) names += (k ? ", " : "") + done[k];
    if (done.size() > 10) names += fmt::format(" and {} more", done.size() - 10);
    RunEvent ev;
    ev.kind = RunEvent::Kind::Log;
    ev.level = LogLevel::Warning;
    ev.message = fmt::format(
        "the last run into {} stopped before it finished ({} node{} had finished{}{}); {}", out_dir_.string(),
        done.size(), done.size() == 1 ? "" : "s", done.empty() ? "" : ": ", names,
        opt_.disk_cache ? "their results are taken from the result cache" : "without a result cache they run again");
    emit(ev);
  }
  journal_fd_ = ::open(file.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_APPEND | O_CLOEXEC, 0644);
  // Without a journal the run still runs; only a crash would lose more.
}

void Run::journal(const NodeRun& n) {
  if (journal_fd_ < 0) return;
  const std::string line = json{{"node", n.inst->id},
                                {"state", to_string(n.result.state)},
                                {"key", n.result.key},
                                {"seconds", n.result.seconds}}
                               .dump() +
                           "\n";
  std::lock_guard lock(journal_mutex_);
  if (::write(journal_fd_, line.data(), line.size()) == static_cast<ssize_t>(line.size()))
    (void)::fdatasync(journal_fd_);
}

void Run::close_journal(bool remove) {
  if (journal_fd_ < 0) return;
  ::close(journal_fd_);
  journal_fd_ = -1;
  std::error_code ec;
  if (remove) fs::remove(out_dir_ / ".gemflow-journal.jsonl", ec);
}

RunResult Run::execute() {
  RunResult r;
  started_ = utc_now();
  if (!prepare(r)) return r;
  compute_keys();
  // The last run of the same workflow file (--explain); a workflow built in code has none.
  const std::string scope = wf_.file.empty() ? std::string() : fs::absolute(wf_.file).lexically_normal().string();
  if (opt_.disk_cache && !scope.empty()) {
    const auto last = opt_.disk_cache->last_key_texts(scope);
    for (auto& n : nodes_)
      if (auto it = last.find(n.inst->id); it != last.end()) n.last_key_text = it->second;
  }
  open_journal();

  for (const auto& n : nodes_) {
    RunEvent e;
    e.kind = RunEvent::Kind::State;
    e.node = n.inst->id;
    e.state = NodeState::Queued;
    emit(e);
  }
  for (std::size_t i = 0; i < nodes_.size(); ++i)
    if (nodes_[i].pending == 0) ready_.emplace(nodes_[i].order, i);

  unsigned jobs = opt_.jobs > 0 ? static_cast<unsigned>(opt_.jobs) : std::max(1u, std::thread::hardware_concurrency());
  jobs = std::max<unsigned>(1, std::min<unsigned>(jobs, static_cast<unsigned>(nodes_.size())));
  jobs_used_ = jobs;
  {
    std::vector<std::jthread> pool;
    for (unsigned k = 0; k < jobs && !nodes_.empty(); ++k) pool.emplace_back([this] { worker(); });
  }
  // device copies of nodes whose consumers did not all run (failed, skipped, cancelled)
  for (std::size_t i = 0; i < nodes_.size(); ++i)
    if (nodes_[i].consumers_left > 0) release_device_copies(i);

  warn_stale_outputs();
  for (auto& n : nodes_) {
    if (n.result.state == NodeState::Cancelled) r.cancelled = true;
    r.nodes[n.inst->id] = n.result;
  }
  if (cancelled()) r.cancelled = true;
  if (opt_.disk_cache && !scope.empty()) {
    auto texts = opt_.disk_cache->last_key_texts(scope);
    for (const auto& n : nodes_)
      if (n.result.state == NodeState::Done || n.result.state == NodeState::Cached) texts[n.inst->id] = n.key_text;
    opt_.disk_cache->remember_key_texts(scope, texts);
  }
  bool recorded = !opt_.write_provenance;
  if (opt_.write_provenance) {
    try {
      write_provenance(r);
      recorded = true;
    } catch (const std::exception& e) {
      r.provenance.clear();
      r.provenance_error = e.what();
      RunEvent ev;
      ev.kind = RunEvent::Kind::Log;
      ev.level = LogLevel::Error;
      ev.message = fmt::format("the provenance record was not written: {}", e.what());
      emit(ev);
    }
  }
  close_journal(recorded);  // kept when the provenance record is missing: it is the only record
  return r;
}

}  // namespace

namespace {

/// file:line of a node's parameter value; the node's, then the workflow file's, when not known.
SourceLocation param_location(const Workflow& wf, const NodeInstance& n, const std::string& param) {
  if (auto it = n.param_where.find(param); it != n.param_where.end()) return it->second;
  return n.where.file.empty() && n.where.line == 0 ? SourceLocation{wf.file.string(), 0, 0} : n.where;
}

}  // namespace

std::vector<Diagnostic> check_run_paths(const Workflow& wf, const Registry& registry, const fs::path& out_dir_in) {
  const fs::path out_dir = fs::absolute(out_dir_in).lexically_normal();
  const fs::path base = wf.base_dir();
  struct File {
    fs::path path;
    std::string what;  // "the workflow file of this run", "read by node 'a' (parameter 'path')"
    const NodeInstance* node = nullptr;
    std::string param;
    bool given = false;     // set in the workflow (a default may name an optional file)
    bool relative = false;  // as written
  };
  auto where = [&](const File& f) {
    return f.node ? param_location(wf, *f.node, f.param) : SourceLocation{wf.file.string(), 0, 0};
  };
  std::vector<File> inputs, outputs;
  if (!wf.file.empty()) inputs.push_back({fs::absolute(wf.file).lexically_normal(), "the workflow file of this run"});
  for (const auto& n : wf.nodes) {
    const NodeEntry* e = registry.find_node(n.type);
    if (!e) continue;  // reported by validate()
    for (const auto& ps : e->spec.params) {
      if (ps.kind != ParamKind::InputPath && ps.kind != ParamKind::OutputPath) continue;
      const ParamValue* given = n.param(ps.name);
      const ParamValue& v = given ? *given : ps.default_value;
      if (!std::holds_alternative<std::string>(v) || std::get<std::string>(v).empty()) continue;
      fs::path p = std::get<std::string>(v);
      const bool relative = p.is_relative();
      if (relative) p = (ps.kind == ParamKind::InputPath ? base : out_dir) / p;
      p = p.lexically_normal();
      if (ps.kind == ParamKind::InputPath)
        inputs.push_back({p, fmt::format("an input of this run (read by node '{}', parameter '{}')", n.id, ps.name), &n,
                          ps.name, given != nullptr, relative});
      else outputs.push_back({p, "", &n, ps.name});
    }
  }
  std::vector<Diagnostic> diags;
  auto report = [&](Diagnostic::Severity severity, const File& f, std::string message, std::string hint) {
    Diagnostic d;
    d.severity = severity;
    d.where = where(f);
    d.node = f.node ? f.node->id : "";
    d.param = f.param;
    d.message = std::move(message);
    d.hint = std::move(hint);
    diags.push_back(std::move(d));
  };
  auto error = [&](const File& f, std::string message, std::string hint = {}) {
    report(Diagnostic::Severity::Error, f, std::move(message), std::move(hint));
  };
  const fs::path provenance = out_dir / "provenance.json";
  // each file compared by its key, not with every other file (a workflow of 100 000 nodes)
  std::unordered_map<std::string, const File*> input_by_key, output_by_key;  // the first with that key
  for (const auto& in : inputs) input_by_key.emplace(file_key(in.path), &in);
  const std::string provenance_key = file_key(provenance);
  for (const File& o : outputs) {
    const std::string key = file_key(o.path);
    const auto [earlier, first] = output_by_key.emplace(key, &o);
    if (const auto in = input_by_key.find(key); in != input_by_key.end())
      error(o, fmt::format("would overwrite {}: it is {}", o.path.string(), in->second->what),
            "write to another file name");
    else if (key == provenance_key)
      error(o, fmt::format("would overwrite {}: the run writes its provenance record there", o.path.string()),
            "write to another file name");
    else if (!first)
      error(o, fmt::format("writes {}, which node '{}' (parameter '{}') writes too", o.path.string(),
                           earlier->second->node->id, earlier->second->param));
  }
  for (const auto& in : inputs)
    if (same_file(provenance, in.path)) {
      error(in, fmt::format("the run's provenance record {} would overwrite {}", provenance.string(), in.what),
            "choose another output folder (--out)");
    }
  // A missing input is found now, not when its node runs (a warning: a run --until another
  // node does not need it; the reading node fails with the reason)
  for (const auto& in : inputs) {
    std::error_code ec;
    if (in.node && in.given && fs::is_directory(in.path, ec)) {
      report(Diagnostic::Severity::Warning, in, fmt::format("{} is a folder, not a file", in.path.string()), "");
      continue;
    }
    // A named pipe, device or socket: the run reads every input twice (its hash for the
    // provenance record, then the node), and a pipe's second open waits forever (QA: a FIFO hung
    // the run; Ctrl-C could not end it)
    if (const auto st = fs::status(in.path, ec);
        in.node && in.given && !ec && fs::exists(st) && !fs::is_regular_file(st) && !fs::is_directory(st)) {
      const char* kind = fs::is_fifo(st)             ? "a named pipe (FIFO)"
                         : fs::is_character_file(st) ? "a character device"
                         : fs::is_block_file(st)     ? "a block device"
                         : fs::is_socket(st)         ? "a socket"
                                                     : "not a regular file";
      error(in,
            fmt::format("{} is {}: a run reads each input twice (for the provenance record's hash, then in the "
                        "node)",
                        in.path.string(), kind),
            "copy it to a regular file first");
      continue;
    }
    if (!in.node || !in.given || fs::exists(in.path, ec)) continue;
    // --set made a relative path absolute against the current folder (apply_override); the
    // location names the assignment as given ("--set r.path=a.txt")
    const std::string& loc = where(in).file;
    const std::size_t eq = loc.find('=');
    const bool from_set =
        loc.starts_with("--set ") && eq != std::string::npos && fs::path(loc.substr(eq + 1)).is_relative();
    const bool set_absolute = loc.starts_with("--set ") && !from_set;
    // (QA: the hint on relative paths also came with absolute ones)
    report(Diagnostic::Severity::Warning, in, fmt::format("file not found: {}", in.path.string()),
           from_set ? "a relative path given with --set starts from the current folder"
           : in.relative && !set_absolute
               ? fmt::format("relative paths start from the workflow's folder {}", base.string())
               : std::string());
  }
  return diags;
}

std::vector<Diagnostic> check_input_contents(const Workflow& wf, const Registry& registry,
                                             std::vector<std::string>* notes) {
  std::vector<Diagnostic> diags;
  const fs::path base = wf.base_dir();
  for (const auto& n : wf.nodes) {
    const NodeEntry* e = registry.find_node(n.type);
    if (!e) continue;  // reported by validate()
    for (const auto& ps : e->spec.params) {
      if (ps.kind != ParamKind::InputPath || !ps.inspect) continue;
      const ParamValue* given = n.param(ps.name);
      const ParamValue& v = given ? *given : ps.default_value;
      if (!std::holds_alternative<std::string>(v) || std::get<std::string>(v).empty()) continue;
      fs::path p = std::get<std::string>(v);
      if (p.is_relative()) p = base / p;
      p = p.lexically_normal();
      std::error_code ec;
      if (!fs::is_regular_file(p, ec)) continue;  // missing or not a file: check_run_paths says so
      try {
        const auto param = [&](const std::string& name) -> const ParamValue* {
          if (const ParamValue* pv = n.param(name)) return pv;
          for (const auto& other : e->spec.params)
            if (other.name == name) return &other.default_value;
          return nullptr;
        };
        const std::string what = ps.inspect(p.string(), param);
        if (notes && !what.empty()) notes->push_back(fmt::format("node '{}', parameter '{}': {}", n.id, ps.name, what));
      } catch (const std::exception& ex) {
        Diagnostic d;
        d.severity = Diagnostic::Severity::Error;
        d.where = param_location(wf, n, ps.name);
        d.node = n.id;
        d.param = ps.name;
        d.message = fmt::format("the node cannot read this file: {}", ex.what());
        diags.push_back(std::move(d));
      }
    }
  }
  return diags;
}

std::vector<Diagnostic> check_run_devices(const Workflow& wf, const Registry& registry,
                                          std::string_view device_override) {
  std::vector<Diagnostic> diags;
  if (!device_override.empty()) return diags;
  std::optional<int> count;  // CUDA is asked only when a node wants it
  for (const auto& n : wf.nodes) {
    const NodeEntry* e = registry.find_node(n.type);
    if (!e) continue;  // reported by validate()
    for (const auto& ps : e->spec.params) {
      if (ps.kind != ParamKind::Device) continue;
      const ParamValue* given = n.param(ps.name);
      const ParamValue& v = given ? *given : ps.default_value;
      if (!std::holds_alternative<std::string>(v)) continue;
      const std::string& text = std::get<std::string>(v);
      const auto req = DeviceRequest::parse(text);
      if (!req || req->kind != DeviceRequest::Kind::Cuda) continue;  // a bad value is validate()'s
      std::string why;
      if (!built_with_cuda()) {
        why = "this Gemflow was built without CUDA";
      } else {
        if (!count) count = cuda_device_count();
        if (req->index < *count) continue;
        why = *count == 0 ? "no CUDA device is present" : fmt::format("{} CUDA device(s) are present", *count);
      }
      Diagnostic d;
      d.severity = Diagnostic::Severity::Warning;
      d.where = param_location(wf, n, ps.name);
      d.node = n.id;
      d.param = ps.name;
      d.message = fmt::format("device '{}' requested, but {}: the node will fail when it runs", text, why);
      d.hint = "use device auto (a GPU when there is one, else the CPU) or cpu, or run with --device";
      diags.push_back(std::move(d));
    }
  }
  return diags;
}

double RunOptions::progress_check_from_env() {
  const char* v = std::getenv("GEMFLOW_CHECK_PROGRESS");
  if (!v || !*v) return 0.0;
  char* end = nullptr;
  const double s = std::strtod(v, &end);
  return end != v && std::isfinite(s) && s > 0 ? s : 0.0;
}

std::string utc_now() {
  const std::time_t t = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

std::string host_name() {
  char buf[256] = {};
  if (::gethostname(buf, sizeof buf - 1) != 0) return "unknown";
  return buf;
}

RunResult run_workflow(const Workflow& wf, const Registry& registry, const RunOptions& options) {
  RunResult refused;
  // A top-level workflow must feed its own nodes: exposed inputs are fed only from outside.
  for (const auto& x : wf.inputs)
    for (const auto& [nid, port] : x.targets) {
      const NodeInstance* n = wf.find(nid);
      const NodeSpec* spec = n ? node_spec(*n, registry) : nullptr;
      const PortSpec* p = spec ? spec->input(port) : nullptr;
      if (!p || p->optional) continue;
      Diagnostic d;
      d.where = x.where;
      d.node = nid;
      d.param = port;
      d.is_port = true;
      d.message = fmt::format(
          "input '{}' of this workflow feeds {}.{}, and only a workflow that includes this one "
          "(a 'workflow' node) can feed it",
          x.name, nid, port);
      refused.diagnostics.push_back(std::move(d));
    }
  if (!refused.diagnostics.empty()) return refused;
  if (!has_subworkflows(wf)) {
    Run run(wf, registry, options);
    return run.execute();
  }
  Workflow flat;
  try {
    flat = flatten(wf, registry);
  } catch (const Error& e) {
    Diagnostic d;
    d.where.file = wf.file.string();
    d.message = e.what();
    refused.diagnostics.push_back(std::move(d));
    return refused;
  }
  Run run(flat, registry, options);
  return run.execute();
}

std::string hash_file(const fs::path& file) {
  std::ifstream in(file, std::ios::binary);
  if (!in) throw InputError(fmt::format("cannot read {}", file.string()));
  XXH3_state_t* st = XXH3_createState();
  if (!st) throw Error("out of memory");
  XXH3_64bits_reset(st);
  std::vector<char> buf(1 << 20);
  while (in) {
    in.read(buf.data(), static_cast<std::streamsize>(buf.size()));
    const auto got = in.gcount();
    if (got > 0) XXH3_64bits_update(st, buf.data(), static_cast<std::size_t>(got));
  }
  const bool bad = in.bad();
  const XXH64_hash_t h = XXH3_64bits_digest(st);
  XXH3_freeState(st);
  if (bad) throw InputError(fmt::format("error reading {}", file.string()));
  return hex64(h);
}

}  // namespace gemflow
