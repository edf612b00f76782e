// Sweeps: `gemflow run --sweep`, `gemflow sweep status|collect|submit` (docs/scale-out.md).
//
// A sweep folder (OUT):
//   sweep-plan.json            every point of the sweep (names and values), written before any runs
//   sweep.json, sweep.csv      the summary table (all points), rewritten atomically
//   shards/shard-I-of-N.*      the table of one shard's points (a sharded run writes its own)
//   points/NAME/               one point: its outputs, provenance.json, point.json (its record)
//   slurm/                     scripts written by `sweep submit`, logs/ of the tasks
// The folder is the only state: a point's state is read from its folder (point.json, and the
// executor's lock on points/NAME/.gemflow.lock while it runs), never from a scheduler.
#include <fcntl.h>
#include <spawn.h>
#include <sys/file.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <unordered_map>

#include <fmt/format.h>
#include <spdlog/spdlog.h>
#include <nlohmann/json.hpp>

#include "commands.hpp"
#include "gemflow/atomic_file.hpp"
#include "gemflow/disk_cache.hpp"
#include "gemflow/executor.hpp"
#include "gemflow/sweep.hpp"

extern char** environ;

namespace gemflow::cli {
namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

namespace {

constexpr const char* kPlanFile = "sweep-plan.json";
constexpr const char* kPointFile = "point.json";
constexpr const char* kSweepLock = ".sweep.lock";
// Slurm's default MaxArraySize is 1001 (indices 0-1000): one task per point up to this many.
constexpr std::size_t kDefaultMaxTasks = 1000;

fs::path points_dir(const fs::path& out) { return out / "points"; }

std::string read_text(const fs::path& file) {
  std::ifstream in(file, std::ios::binary);
  if (!in) return {};
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

std::string sanitize(std::string name) {
  for (char& c : name)
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_' || c == '.')) c = '_';
  if (name.empty() || name == "." || name == "..") name = "workflow";
  return name;
}

std::string display_name(const Workflow& wf, const fs::path& file) {
  if (!wf.name.empty()) return wf.name;
  return file.empty() ? std::string("workflow") : file.stem().string();
}

fs::path default_out(const RunArgs& args, const Workflow& wf) {
  return args.out ? fs::absolute(*args.out).lexically_normal()
                  : fs::absolute(fs::path("out") / sanitize(display_name(wf, args.workflow)));
}

void print_diag(Console& console, const Diagnostic& d) {
  std::string text = d.str();
  if (console.color()) text = (d.severity == Diagnostic::Severity::Error ? "\x1b[31m" : "\x1b[33m") + text + "\x1b[0m";
  console.line(text);
}

/// Writes `text` to a temporary file and renames it over `file`: readers never see half a file.
/// Not synced to disk (a sync costs milliseconds a point): a record lost in a crash reads as no
/// record, and the point counts as interrupted and runs again.
void write_record(const fs::path& file, const std::string& text) {
  const fs::path tmp = file.parent_path() / fmt::format(".{}.tmp{}", file.filename().string(), ::getpid());
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    out << text;
    out.flush();
    if (!out) throw Error(fmt::format("cannot write {}: {}", file.string(), std::strerror(errno)));
  }
  std::error_code ec;
  fs::rename(tmp, file, ec);
  if (ec) {
    fs::remove(tmp, ec);
    throw Error(fmt::format("cannot write {}: {}", file.string(), ec.message()));
  }
}

/// True while a run holds the point folder's lock (the executor's flock on .gemflow.lock).
bool folder_locked(const fs::path& dir) {
  const fs::path f = dir / ".gemflow.lock";
  const int fd = ::open(f.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return false;
  const bool locked = ::flock(fd, LOCK_SH | LOCK_NB) != 0 && errno == EWOULDBLOCK;
  ::close(fd);
  return locked;
}

/// A point's state from its folder. `values` and `index` come from the plan.
PointRecord read_point(const fs::path& out, const std::string& name, std::size_t index,
                       const std::vector<std::pair<std::string, std::string>>& values) {
  PointRecord r;
  const fs::path dir = points_dir(out) / name;
  std::error_code ec;
  if (fs::exists(dir / kPointFile, ec))
    if (auto rec = parse_point_record(read_text(dir / kPointFile))) r = std::move(*rec);
  r.name = name;
  r.index = index;
  r.values = values;
  const bool recorded = fs::exists(dir / kPointFile, ec) && !r.finished.empty();
  if (folder_locked(dir)) {
    r.state = PointState::Running;
  } else if (!recorded) {
    // a run began here (its lock file or crash journal) and left no record: it was killed
    if (fs::exists(dir / ".gemflow.lock", ec) || fs::exists(dir / ".gemflow-journal.jsonl", ec)) {
      r.state = PointState::Interrupted;
      r.error = "the run stopped before it finished (killed, or the machine went down)";
    } else {
      r.state = PointState::Pending;
    }
  }
  return r;
}

/// Why a point recorded as done does not count as done any more ("" when it still does): another
/// workflow or values, a provenance record or an output file missing or changed, an input changed.
class DoneCheck {
 public:
  std::string why_not(const fs::path& dir, const PointRecord& r, const std::string& workflow_hash) {
    if (r.workflow_hash != workflow_hash) return "the workflow or the point's values changed since it ran";
    const std::string text = read_text(dir / "provenance.json");
    if (text.empty()) return "its provenance.json is missing";
    nlohmann::json prov;
    try {
      prov = nlohmann::json::parse(text);
    } catch (const std::exception&) {
      return "its provenance.json is damaged";
    }
    if (!prov.contains("nodes") || !prov["nodes"].is_object()) return "its provenance.json has no nodes";
    for (const auto& [id, n] : prov["nodes"].items()) {
      for (const auto& f : n.value("outputs", nlohmann::json::array())) {
        const fs::path file = f.value("file", "");
        if (hash_or_missing(file, false) != f.value("xxh3", ""))
          return fmt::format("{} is missing or changed", file.string());
      }
      for (const auto& f : n.value("inputs", nlohmann::json::array())) {
        const fs::path file = f.value("file", "");
        if (hash_or_missing(file, true) != f.value("xxh3", "")) return fmt::format("input {} changed", file.string());
      }
    }
    return {};
  }

 private:
  // inputs are shared by the points: each hashed once per process
  std::string hash_or_missing(const fs::path& file, bool remember) {
    if (remember)
      if (auto it = inputs_.find(file.string()); it != inputs_.end()) return it->second;
    std::string h;
    try {
      h = hash_file(file);
    } catch (const std::exception&) {
      h = "missing";
    }
    if (remember) inputs_[file.string()] = h;
    return h;
  }
  std::unordered_map<std::string, std::string> inputs_;
};

/// An exclusive lock on OUT/.sweep.lock for the lifetime of the object (shards merging tables).
class SweepLock {
 public:
  explicit SweepLock(const fs::path& out) {
    fd_ = ::open((out / kSweepLock).c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
    if (fd_ >= 0) (void)::flock(fd_, LOCK_EX);
  }
  ~SweepLock() {
    if (fd_ >= 0) ::close(fd_);
  }
  SweepLock(const SweepLock&) = delete;
  SweepLock& operator=(const SweepLock&) = delete;

 private:
  int fd_ = -1;
};

void write_tables(const fs::path& stem, const std::vector<std::string>& axes, const std::vector<PointRecord>& rows) {
  write_file_atomically(fs::path(stem.string() + ".json"), sweep_table_json(axes, rows));
  write_file_atomically(fs::path(stem.string() + ".csv"), sweep_table_csv(axes, rows));
}

/// Every point of the plan as its folder says, else as a shard table says (a table copied from
/// elsewhere), else pending; written as OUT/sweep.json and sweep.csv under the sweep lock.
std::vector<PointRecord> merge_tables(const fs::path& out, const SweepPlan& plan) {
  SweepLock lock(out);
  std::unordered_map<std::string, PointRecord> from_shards;
  std::error_code ec;
  if (fs::is_directory(out / "shards", ec))
    for (const auto& e : fs::directory_iterator(out / "shards", ec))
      if (e.path().extension() == ".json")
        if (auto rows = parse_sweep_table(read_text(e.path())))
          for (auto& r : *rows)
            if (r.state == PointState::Done || r.state == PointState::Failed) from_shards[r.name] = std::move(r);
  std::vector<PointRecord> rows;
  rows.reserve(plan.points.size());
  for (std::size_t i = 0; i < plan.points.size(); ++i) {
    const auto& [name, values] = plan.points[i];
    PointRecord r = read_point(out, name, i, values);
    if (r.state == PointState::Pending)
      if (auto it = from_shards.find(name); it != from_shards.end()) {
        r = it->second;
        r.index = i;
      }
    rows.push_back(std::move(r));
  }
  write_tables(out / "sweep", plan.axes, rows);
  return rows;
}

std::optional<SweepPlan> read_plan(const fs::path& out, std::string& why) {
  const fs::path file = out / kPlanFile;
  std::error_code ec;
  if (!fs::exists(file, ec)) {
    why = fmt::format("{} is not a sweep folder (it has no {})", out.string(), kPlanFile);
    return std::nullopt;
  }
  auto plan = parse_sweep_plan(read_text(file));
  if (!plan) why = fmt::format("{} is damaged or not a sweep plan", file.string());
  return plan;
}

std::vector<std::string> axis_names(const Sweep& s) {
  std::vector<std::string> v;
  for (const auto& a : s.axes) v.push_back(a.target());
  return v;
}

std::vector<std::pair<std::string, std::string>> point_values(const Sweep& s, const SweepPoint& p) {
  std::vector<std::pair<std::string, std::string>> v;
  for (std::size_t k = 0; k < s.axes.size(); ++k) v.emplace_back(s.axes[k].target(), format_param(p.values[k]));
  return v;
}

/// Writes the plan unless the folder holds the same one; says so when it held another sweep.
void write_plan(const fs::path& out, const fs::path& workflow, const Sweep& sweep) {
  const std::string text = sweep_plan_json(workflow, sweep);
  std::string why;
  std::error_code ec;
  if (fs::exists(out / kPlanFile, ec)) {
    if (auto old = read_plan(out, why)) {
      const auto now = parse_sweep_plan(text);
      if (now && old->points == now->points && old->axes == now->axes && old->workflow == now->workflow) return;
      spdlog::warn("{} held another sweep ({} points of {}); its plan is replaced (the folders of its points stay)",
                   out.string(), old->points.size(), old->workflow.string());
    }
  }
  write_file_atomically(out / kPlanFile, text);
}

/// The sweep of a run: --sweep (which replaces the workflow's section) or the `sweep:` section.
std::optional<Sweep> build_sweep(const RunArgs& args, const Workflow& wf, const Registry& registry, Console& console,
                                 std::vector<Diagnostic>& errors) {
  std::vector<SweepAxis> axes;
  bool zip = args.zip;
  if (!args.sweeps.empty()) {
    if (!wf.sweep.empty()) spdlog::info("--sweep given: the workflow's own sweep: section is not used");
    for (const auto& s : args.sweeps) {
      auto a = parse_sweep_arg(s, wf, registry);
      if (auto* d = std::get_if<Diagnostic>(&a)) errors.push_back(std::move(*d));
      else axes.push_back(std::move(std::get<SweepAxis>(a)));
    }
  } else {
    errors = sweep_axes_of(wf, registry, axes);
    zip = zip || wf.sweep.zip;
  }
  if (errors.empty()) {
    auto ex = expand_sweep(std::move(axes), zip, args.force);
    if (auto* d = std::get_if<Diagnostic>(&ex)) {
      errors.push_back(std::move(*d));
    } else {
      Sweep sweep = std::move(std::get<Sweep>(ex));
      for (const auto& set : args.sets)  // --set of a swept parameter: the sweep's values win
        for (const auto& a : sweep.axes)
          if (set.starts_with(a.target() + "="))
            spdlog::warn("--set {}: the parameter is swept; each point takes its own value", set);
      return sweep;
    }
  }
  for (const auto& d : errors) print_diag(console, d);
  return std::nullopt;
}

/// The shard of this process: --shard, else the environment (Slurm array, MPI), else none.
std::optional<Shard> pick_shard(const std::string& given, bool& ok) {
  ok = true;
  std::string why;
  std::optional<Shard> s = given.empty() ? shard_from_environment(&why) : parse_shard(given, &why);
  if (!s && !why.empty()) {
    spdlog::error("{}", given.empty() ? why : "--shard " + why);
    ok = false;
  }
  return s;
}

/// Names listed in a --points file (one a line).
std::optional<std::set<std::string>> read_point_list(const fs::path& file) {
  std::ifstream in(file);
  if (!in) return std::nullopt;
  std::set<std::string> names;
  for (std::string line; std::getline(in, line);) {
    while (!line.empty() && (line.back() == '\r' || line.back() == ' ')) line.pop_back();
    if (!line.empty() && line[0] != '#') names.insert(line);
  }
  return names;
}

/// The outputs that feed no link, by node: where a point's key numbers come from.
std::map<std::string, std::map<std::string, Value>> result_outputs(const Workflow& wf, const RunResult& r) {
  std::set<std::pair<std::string, std::string>> linked;
  for (const auto& l : wf.links) linked.insert({l.from_node, l.from_port});
  std::map<std::string, std::map<std::string, Value>> out;
  for (const auto& [id, nr] : r.nodes)
    for (const auto& [port, v] : nr.outputs)
      if (!linked.contains({id, port})) out[id][port] = v;
  return out;
}

std::vector<fs::path> report_files(const fs::path& dir) {
  std::vector<fs::path> files;
  std::error_code ec;
  for (auto it = fs::recursive_directory_iterator(dir, ec); !ec && it != fs::recursive_directory_iterator();
       it.increment(ec)) {
    const std::string name = it->path().filename().string();
    if (it->is_regular_file(ec) && name.starts_with("report") && name.ends_with(".json")) files.push_back(it->path());
  }
  std::sort(files.begin(), files.end());
  return files;
}

/// The point's state and error from its run.
void judge(const Workflow& wf, const RunResult& res, PointRecord& rec) {
  rec.state = PointState::Done;
  if (!res.diagnostics.empty()) {
    rec.state = PointState::Failed;
    rec.error = res.diagnostics.front().str();
    return;
  }
  if (res.cancelled) {
    rec.state = PointState::Cancelled;
    rec.error = "cancelled";
    return;
  }
  for (const auto& n : wf.nodes)  // the first failure in file order
    if (auto it = res.nodes.find(n.id); it != res.nodes.end() && it->second.state == NodeState::Failed) {
      rec.state = PointState::Failed;
      rec.error = it->second.error;
      return;
    }
  if (!res.provenance_error.empty()) {
    rec.state = PointState::Failed;
    rec.error = "the provenance record was not written: " + res.provenance_error;
  }
}

void emit_json(const nlohmann::json& j) {
  std::fputs((j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) + "\n").c_str(), stdout);
  std::fflush(stdout);
}

std::string counts_text(const std::vector<PointRecord>& rows) {
  std::map<PointState, std::size_t> c;
  for (const auto& r : rows) ++c[r.state];
  std::string s;
  for (auto st : {PointState::Done, PointState::Failed, PointState::Interrupted, PointState::Cancelled,
                  PointState::Running, PointState::Pending})
    if (c[st]) s += fmt::format("{}{} {}", s.empty() ? "" : ", ", c[st], to_string(st));
  return s.empty() ? "no points" : s;
}

std::string shell_quote(const std::string& s) {
  if (!s.empty() && s.find_first_not_of("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-.,/=:+@%") ==
                        std::string::npos)
    return s;
  std::string r = "'";
  for (char c : s) r += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return r + "'";
}

/// The cache a sweep uses: --cache, else the default folder; none with --no-cache or
/// GEMFLOW_NO_CACHE=1 (as `gemflow run`). nullopt path: no cache.
std::optional<fs::path> cache_dir_of(const RunArgs& args) {
  const char* env = std::getenv("GEMFLOW_NO_CACHE");
  if (args.no_cache || (env && *env && std::string(env) != "0")) return std::nullopt;
  return args.cache ? fs::absolute(*args.cache) : DiskCache::default_dir();
}

}  // namespace

bool wants_sweep(const RunArgs& args, const Workflow& wf) {
  return !args.sweeps.empty() || (!args.no_sweep && !wf.sweep.empty());
}

std::vector<Diagnostic> sweep_section_diagnostics(const Workflow& wf, const Registry& registry) {
  if (wf.sweep.empty()) return {};
  std::vector<SweepAxis> axes;
  auto diags = sweep_axes_of(wf, registry, axes);
  if (diags.empty()) {
    auto ex = expand_sweep(std::move(axes), wf.sweep.zip, false);
    if (auto* d = std::get_if<Diagnostic>(&ex)) diags.push_back(std::move(*d));
  }
  return diags;
}

int run_sweep(const RunArgs& args, const GlobalOptions& g, Console& console, const PluginHost& host,
              const Registry& registry, const Workflow& wf, const std::atomic<bool>* cancel) {
  (void)g;
  const auto start = Clock::now();
  std::vector<Diagnostic> errors;
  auto sweep_opt = build_sweep(args, wf, registry, console, errors);
  if (!sweep_opt) {
    fmt::print("\n'{}' sweep invalid ({} error{}): nothing ran\n", display_name(wf, args.workflow), errors.size(),
               errors.size() == 1 ? "" : "s");
    return kExitInvalid;
  }
  const Sweep& sweep = *sweep_opt;
  const auto axes = axis_names(sweep);
  bool shard_ok = true;
  const std::optional<Shard> shard = pick_shard(args.shard, shard_ok);
  if (!shard_ok) return kExitInvalid;
  if (!args.until.empty() && !wf.find(args.until)) {
    spdlog::error("--until {}: no such node in the workflow", args.until);
    return kExitInvalid;
  }

  // The points of this process: those of --points (if given), then this shard's share of them.
  std::vector<const SweepPoint*> selected;
  if (args.points) {
    const auto names = read_point_list(*args.points);
    if (!names) {
      spdlog::error("--points {}: cannot read the file", args.points->string());
      return kExitInvalid;
    }
    std::set<std::string> known;
    for (const auto& p : sweep.points) {
      known.insert(p.name);
      if (names->contains(p.name)) selected.push_back(&p);
    }
    for (const auto& n : *names)
      if (!known.contains(n)) {
        spdlog::error("--points {}: '{}' is no point of this sweep", args.points->string(), n);
        return kExitInvalid;
      }
  } else {
    for (const auto& p : sweep.points) selected.push_back(&p);
  }
  std::vector<const SweepPoint*> mine;
  for (std::size_t k = 0; k < selected.size(); ++k)
    if (!shard || shard->contains(k)) mine.push_back(selected[k]);

  // Every point of this process checked before any runs: rules between a swept value and other
  // parameters, files the point would overwrite.
  const fs::path out = default_out(args, wf);
  {
    std::size_t bad = 0;
    for (const SweepPoint* p : mine) {
      Workflow pw = wf;
      apply_sweep_point(pw, sweep, *p);
      auto ds = validate(pw, registry);
      for (auto& d : check_run_paths(pw, registry, points_dir(out) / p->name)) ds.push_back(std::move(d));
      bool failed = false;
      for (const auto& d : ds) {
        if (d.severity != Diagnostic::Severity::Error) continue;
        failed = true;
        if (bad < 5) {
          Diagnostic e = d;
          e.message = fmt::format("point {}: {}", p->name, d.message);
          print_diag(console, e);
        }
      }
      bad += failed ? 1 : 0;
    }
    if (bad > 0) {
      fmt::print("\n'{}' sweep invalid: {} of its {} points cannot run{}; nothing ran\n",
                 display_name(wf, args.workflow), bad, mine.size(), bad > 5 ? " (the first 5 shown)" : "");
      return kExitInvalid;
    }
  }

  std::error_code ec;
  fs::create_directories(points_dir(out), ec);
  if (ec) {
    spdlog::error("cannot create the sweep folder {}: {}", points_dir(out).string(), ec.message());
    return kExitInvalid;
  }
  try {
    write_plan(out, args.workflow, sweep);
  } catch (const std::exception& e) {
    spdlog::error("{}", e.what());
    return kExitInvalid;
  }

  std::optional<DiskCache> disk_cache;
  if (const auto dir = cache_dir_of(args)) {
    try {
      disk_cache.emplace(*dir);
    } catch (const std::exception& e) {  // a cache is an optimisation: never a reason not to run
      spdlog::warn("no result cache: {}; the sweep goes on uncached", e.what());
    }
  }
  // The points of this process share results in memory too (with or without the disk cache):
  // after each point only the results of that point are kept, so that the next one finds every
  // upstream node it shares with it and memory holds one point's worth.
  auto session = std::make_unique<ResultCache>();

  // the table of every point of the plan as this process knows it; rows of its own points are
  // replaced as they finish
  std::vector<PointRecord> rows;
  rows.reserve(sweep.points.size());
  for (const auto& p : sweep.points) rows.push_back(read_point(out, p.name, p.index, point_values(sweep, p)));
  const fs::path table_stem =
      shard ? out / "shards" / fmt::format("shard-{}-of-{}", shard->index, shard->count) : out / "sweep";
  if (shard) fs::create_directories(out / "shards", ec);
  const auto write_own_table = [&] {
    try {
      if (shard) {
        std::vector<PointRecord> own;
        for (const SweepPoint* p : mine) own.push_back(rows[p->index]);
        write_tables(table_stem, axes, own);
      } else {
        SweepLock lock(out);
        write_tables(table_stem, axes, rows);
      }
    } catch (const std::exception& e) {
      spdlog::warn("the summary table was not written: {}", e.what());
    }
  };

  const std::string extra = fmt::format("device={}\nuntil={}", args.device, args.until);
  const std::string host_text = host_name();
  const std::string shard_text = shard ? shard->str() : std::string();
  const std::string name = display_name(wf, args.workflow);
  if (args.json)
    emit_json({{"event", "sweep_start"},
               {"workflow", name},
               {"workflow_file", args.workflow.string()},
               {"out_dir", out.string()},
               {"points", sweep.points.size()},
               {"this_process", mine.size()},
               {"shard", shard_text}});
  spdlog::info("sweep of '{}': {} point{}{} → {}", name, sweep.points.size(), sweep.points.size() == 1 ? "" : "s",
               shard ? fmt::format(", shard {} ({} from {}): {} of them", shard->str(), shard->source,
                                   shard->source == "--shard" ? "the command line" : "the environment", mine.size())
                     : std::string(),
               out.string());

  DoneCheck done_check;
  std::set<std::string> said;  // run warnings already shown
  std::size_t ran = 0, skipped_done = 0, skipped_failed = 0, busy = 0, position = 0;
  auto last_write = Clock::now() - std::chrono::hours(1);
  bool cancelled = false;
  for (const SweepPoint* p : mine) {
    ++position;
    if (cancel && cancel->load()) {
      cancelled = true;
      break;
    }
    Workflow pw = wf;
    apply_sweep_point(pw, sweep, *p);
    const std::string wf_hash = sweep_workflow_hash(pw, extra);
    const fs::path dir = points_dir(out) / p->name;
    PointRecord& row = rows[p->index];
    const std::string label = fmt::format("[{}/{}] {}", position, mine.size(), p->name);
    if (row.state == PointState::Running) {
      ++busy;
      spdlog::info("{}: running in another process; left to it", label);
      continue;
    }
    if (row.state == PointState::Done) {
      const std::string why = done_check.why_not(dir, row, wf_hash);
      if (why.empty()) {
        ++skipped_done;
        spdlog::debug("{}: done before", label);
        continue;
      }
      spdlog::info("{}: runs again: {}", label, why);
    }
    if (row.state == PointState::Failed && !args.retry_failed) {
      ++skipped_failed;
      spdlog::info("{}: failed before (--retry-failed runs it again)", label);
      continue;
    }
    // no record while it runs: a run that is killed leaves the point interrupted
    fs::create_directories(dir, ec);
    fs::remove(dir / kPointFile, ec);

    RunOptions opt;
    opt.out_dir = dir;
    opt.jobs = args.jobs;
    opt.gpu_jobs = args.gpu_jobs;
    opt.device = args.device;
    opt.until = args.until;
    opt.cancel = cancel;
    opt.command_line = args.command_line;
    opt.plugins = &host.records();
    opt.cache = session.get();
    opt.disk_cache = disk_cache ? &*disk_cache : nullptr;
    opt.on_event = [&](const RunEvent& e) {
      if (e.kind != RunEvent::Kind::Log || e.level < LogLevel::Warning) return;
      // a warning of the run itself (a result cache that cannot be written) once per sweep; the
      // nodes' own warnings are in each point's provenance record
      if (e.node.empty() && said.insert(e.message).second) spdlog::warn("{}", e.message);
      else spdlog::debug("{}: {}{}", p->name, e.node.empty() ? "" : e.node + ": ", e.message);
    };
    const auto t0 = Clock::now();
    RunResult res;
    PointRecord rec;
    try {
      res = run_workflow(pw, registry, opt);
      judge(pw, res, rec);
    } catch (const std::exception& e) {
      rec.state = PointState::Failed;
      rec.error = e.what();
    }
    ++ran;
    rec.name = p->name;
    rec.index = p->index;
    rec.values = point_values(sweep, *p);
    rec.seconds = std::chrono::duration<double>(Clock::now() - t0).count();
    rec.host = host_text;
    rec.shard = shard_text;
    rec.finished = utc_now();
    rec.workflow_hash = wf_hash;
    if (rec.state == PointState::Done) rec.numbers = sweep_report_numbers(result_outputs(pw, res), report_files(dir));
    // Another run of this point holding the folder: not this process's to record.
    const bool in_use =
        !res.diagnostics.empty() && res.diagnostics.front().message.find("in use by another run") != std::string::npos;
    if (in_use) {
      --ran;
      ++busy;
      spdlog::info("{}: running in another process; left to it", label);
      continue;
    }
    try {
      write_record(dir / kPointFile, point_record_json(rec));
    } catch (const std::exception& e) {
      spdlog::error("{}: {}", label, e.what());
    }
    if (rec.state == PointState::Done) spdlog::info("{}: done in {:.2f} s", label, rec.seconds);
    else if (rec.state == PointState::Failed) spdlog::warn("{}: failed: {}", label, rec.error);
    else spdlog::warn("{}: {}", label, to_string(rec.state));
    if (args.json) {
      auto j = nlohmann::json::parse(point_record_json(rec));
      j["event"] = "point";
      emit_json(j);
    }
    row = std::move(rec);
    if (Clock::now() - last_write > std::chrono::milliseconds(500)) {
      write_own_table();
      last_write = Clock::now();
    }
    // keep the results of this point only (see `session` above)
    auto next = std::make_unique<ResultCache>();
    for (const auto& [id, nr] : res.nodes)
      if (auto hit = session->find(nr.key)) next->store(nr.key, std::move(*hit));
    session = std::move(next);
    if (row.state == PointState::Cancelled || (cancel && cancel->load())) {
      cancelled = true;
      break;
    }
  }
  write_own_table();
  // The whole table, from every point's folder (other processes may have run points meanwhile):
  // the last shard to end writes it complete.
  std::vector<PointRecord> all = rows;
  {
    std::string why;
    if (auto plan = read_plan(out, why)) {
      try {
        all = merge_tables(out, *plan);
      } catch (const std::exception& e) {
        spdlog::warn("the summary table was not written: {}", e.what());
      }
    }
  }

  std::vector<PointRecord> own;
  for (const SweepPoint* p : mine) own.push_back(rows[p->index]);
  const bool any_failed = std::any_of(own.begin(), own.end(), [](const PointRecord& r) {
    return r.state == PointState::Failed || r.state == PointState::Interrupted;
  });
  const int code = cancelled ? kExitCancelled : any_failed ? kExitNodeFailed : kExitOk;
  const double seconds = std::chrono::duration<double>(Clock::now() - start).count();
  if (args.json) {
    std::map<std::string, std::size_t> counts;
    for (const auto& r : own) ++counts[to_string(r.state)];
    emit_json({{"event", "summary"},
               {"sweep", true},
               {"workflow", name},
               {"workflow_file", args.workflow.string()},
               {"ok", code == kExitOk},
               {"exit_code", code},
               {"cancelled", cancelled},
               {"seconds", seconds},
               {"out_dir", out.string()},
               {"shard", shard_text},
               {"ran", ran},
               {"already_done", skipped_done},
               {"points", counts},
               {"table", (out / "sweep.csv").string()}});
    return code;
  }
  fmt::print("\nSweep '{}' {} after {:.2f} s: {} point{}{}: {}\n", name,
             cancelled    ? "cancelled"
             : any_failed ? "finished with failures"
                          : "finished",
             seconds, own.size(), own.size() == 1 ? "" : "s", shard ? " (shard " + shard->str() + ")" : std::string(),
             counts_text(own));
  fmt::print("  ran {}, done before {}{}{}\n", ran, skipped_done,
             skipped_failed ? fmt::format(", failed before {} (--retry-failed runs them again)", skipped_failed)
                            : std::string(),
             busy ? fmt::format(", running elsewhere {}", busy) : std::string());
  std::size_t listed = 0;
  for (const auto& r : own)
    if (r.state == PointState::Failed || r.state == PointState::Interrupted) {
      if (++listed > 10) break;
      fmt::print("  {}  {}: {}\n", to_string(r.state), r.name, r.error);
    }
  if (shard) fmt::print("Whole sweep:   {}\n", counts_text(all));
  fmt::print("Sweep folder:  {}\nTable:         {}\n", out.string(), (out / "sweep.csv").string());
  std::fflush(stdout);
  return code;
}

// ---- gemflow sweep status | collect | submit ----

namespace {

int sweep_status(const SweepArgs& args) {
  const fs::path out = fs::absolute(args.target).lexically_normal();
  std::string why;
  const auto plan = read_plan(out, why);
  if (!plan) {
    spdlog::error("{}", why);
    return kExitInvalid;
  }
  std::vector<PointRecord> rows;
  for (std::size_t i = 0; i < plan->points.size(); ++i)
    rows.push_back(read_point(out, plan->points[i].first, i, plan->points[i].second));
  if (args.json) {
    auto j = nlohmann::json::parse(sweep_table_json(plan->axes, rows));
    j["event"] = "status";
    j["workflow"] = plan->workflow.string();
    j["out_dir"] = out.string();
    emit_json(j);
    return kExitOk;
  }
  fmt::print("Sweep of {} ({} point{}) in {}\n  {}\n", plan->workflow.string(), rows.size(),
             rows.size() == 1 ? "" : "s", out.string(), counts_text(rows));
  std::size_t listed = 0;
  for (const auto& r : rows) {
    if (r.state == PointState::Done || r.state == PointState::Pending) continue;
    if (++listed > 20) {
      fmt::print("  ... (see {})\n", (out / "sweep.csv").string());
      break;
    }
    fmt::print("  {:<11}  {}{}\n", to_string(r.state), r.name, r.error.empty() ? "" : ": " + r.error);
  }
  return kExitOk;
}

int sweep_collect(const SweepArgs& args) {
  const fs::path out = fs::absolute(args.target).lexically_normal();
  std::string why;
  const auto plan = read_plan(out, why);
  if (!plan) {
    spdlog::error("{}", why);
    return kExitInvalid;
  }
  std::vector<PointRecord> rows;
  try {
    rows = merge_tables(out, *plan);
  } catch (const std::exception& e) {
    spdlog::error("{}", e.what());
    return kExitInvalid;
  }
  fmt::print("{} point{}: {}\nTable: {}\n       {}\n", rows.size(), rows.size() == 1 ? "" : "s", counts_text(rows),
             (out / "sweep.csv").string(), (out / "sweep.json").string());
  return kExitOk;
}

/// The path of an executable found on PATH, or "".
std::string find_on_path(const std::string& name) {
  const char* path = std::getenv("PATH");
  std::stringstream ss(path ? path : "");
  for (std::string dir; std::getline(ss, dir, ':');) {
    if (dir.empty()) continue;
    const fs::path p = fs::path(dir) / name;
    if (::access(p.c_str(), X_OK) == 0) return p.string();
  }
  return {};
}

/// Runs argv, returns (exit status, stdout+stderr).
std::pair<int, std::string> run_capture(const std::vector<std::string>& argv_s) {
  int pipefd[2];
  if (::pipe2(pipefd, O_CLOEXEC) != 0) return {-1, "pipe failed"};
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_adddup2(&fa, pipefd[1], 1);
  posix_spawn_file_actions_adddup2(&fa, pipefd[1], 2);
  std::vector<char*> argv;
  std::vector<std::string> copy = argv_s;
  for (auto& a : copy) argv.push_back(a.data());
  argv.push_back(nullptr);
  pid_t pid = 0;
  const int rc = posix_spawnp(&pid, argv[0], &fa, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&fa);
  ::close(pipefd[1]);
  std::string text;
  if (rc == 0) {
    char buf[4096];
    for (ssize_t n; (n = ::read(pipefd[0], buf, sizeof buf)) != 0;) {
      if (n < 0) {
        if (errno == EINTR) continue;
        break;
      }
      text.append(buf, static_cast<std::size_t>(n));
    }
  }
  ::close(pipefd[0]);
  if (rc != 0) return {-1, std::strerror(rc)};
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  return {WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status), text};
}

std::string self_exe() {
  std::error_code ec;
  const fs::path p = fs::read_symlink("/proc/self/exe", ec);
  return ec ? std::string("gemflow") : p.string();
}

int sweep_submit(const SweepArgs& sa, const GlobalOptions& g, Console& console) {
  RunArgs args = sa.run;
  args.workflow = sa.target;
  Registry registry;
  PluginHost host(registry);
  load_plugins(host, g, true);
  LoadResult lr = load_workflow(args.workflow, registry);
  bool ok = lr.ok();
  for (const auto& d : lr.diagnostics)
    if (!(d.rule && !args.sets.empty())) print_diag(console, d);
  if (!lr.workflow) return kExitInvalid;
  Workflow wf = std::move(*lr.workflow);
  for (const auto& s : args.sets)
    if (auto d = apply_override(wf, s, registry)) {
      print_diag(console, *d);
      if (d->severity == Diagnostic::Severity::Error) ok = false;
    }
  if (!args.sets.empty()) {
    ok = true;
    for (const auto& d : validate(wf, registry))
      if (d.severity == Diagnostic::Severity::Error) {
        print_diag(console, d);
        ok = false;
      }
  }
  if (!ok) {
    fmt::print("{}: invalid; nothing submitted\n", args.workflow.string());
    return kExitInvalid;
  }
  if (args.sweeps.empty() && wf.sweep.empty()) {
    spdlog::error("nothing to sweep: give --sweep node.param=VALUES or a sweep: section in {}", args.workflow.string());
    return kExitInvalid;
  }
  std::vector<Diagnostic> errors;
  const auto sweep = build_sweep(args, wf, registry, console, errors);
  if (!sweep) {
    fmt::print("{}: the sweep is invalid; nothing submitted\n", args.workflow.string());
    return kExitInvalid;
  }
  const fs::path out = default_out(args, wf);
  const fs::path slurm_dir = out / "slurm";
  std::error_code ec;
  fs::create_directories(slurm_dir / "logs", ec);
  fs::create_directories(points_dir(out), ec);
  if (ec) {
    spdlog::error("cannot create {}: {}", slurm_dir.string(), ec.message());
    return kExitInvalid;
  }
  write_plan(out, args.workflow, *sweep);

  // The points the tasks run: all (done ones are skipped by the tasks), or with --retry-failed
  // those that failed, were interrupted or cancelled, listed in a file the tasks read.
  std::size_t count = sweep->points.size();
  std::string points_file;
  const std::string stamp = utc_now();
  std::string job = "gemflow-" + sanitize(display_name(wf, args.workflow));
  if (args.retry_failed) {
    std::string text;
    count = 0;
    for (const auto& p : sweep->points) {
      const auto r = read_point(out, p.name, p.index, point_values(*sweep, p));
      if (r.state == PointState::Failed || r.state == PointState::Interrupted || r.state == PointState::Cancelled) {
        text += p.name + "\n";
        ++count;
      }
    }
    if (count == 0) {
      fmt::print("No failed, interrupted or cancelled point in {}: nothing to submit\n", out.string());
      return kExitOk;
    }
    std::string when = stamp;
    std::erase_if(when, [](char c) { return c == '-' || c == ':'; });
    points_file = (slurm_dir / fmt::format("retry-{}.points", when)).string();
    write_file_atomically(points_file, text);
    job += "-retry";
  }
  const std::size_t tasks =
      std::min<std::size_t>(count, sa.tasks > 0 ? static_cast<std::size_t>(sa.tasks) : kDefaultMaxTasks);

  // The script: readable, self-contained (absolute paths), runnable again by hand with sbatch.
  std::string compact = stamp;
  std::erase_if(compact, [](char c) { return c == '-' || c == ':'; });
  const fs::path script = slurm_dir / fmt::format("{}-{}.sbatch", job, compact);
  std::string s = "#!/bin/bash\n";
  s += fmt::format("# Gemflow sweep of '{}' ({}): {} point{}{} in {} task{}.\n", display_name(wf, args.workflow),
                   fs::absolute(args.workflow).lexically_normal().string(), count, count == 1 ? "" : "s",
                   args.retry_failed ? " to retry" : "", tasks, tasks == 1 ? "" : "s");
  s += fmt::format("# Written by `gemflow sweep submit` on {}. Submit it again with:\n#   sbatch {}\n", stamp,
                   shell_quote(script.string()));
  s += "# Each array task runs one shard of the points: gemflow reads SLURM_ARRAY_TASK_ID and\n"
       "# SLURM_ARRAY_TASK_COUNT. Points already done are skipped, so a task can run again safely.\n";
  s += fmt::format("# Progress: gemflow sweep status {}    Summary: {}\n", shell_quote(out.string()),
                   (out / "sweep.csv").string());
  s += fmt::format("#SBATCH --job-name={}\n", job);
  s += fmt::format("#SBATCH --array=0-{}{}\n", tasks - 1, sa.array_max > 0 ? fmt::format("%{}", sa.array_max) : "");
  s += fmt::format("#SBATCH --cpus-per-task={}\n", std::max(1, sa.cpus));
  if (sa.gpus > 0) s += fmt::format("#SBATCH --gres=gpu:{}\n", sa.gpus);
  if (!sa.time.empty()) s += fmt::format("#SBATCH --time={}\n", sa.time);
  if (!sa.partition.empty()) s += fmt::format("#SBATCH --partition={}\n", sa.partition);
  if (!sa.account.empty()) s += fmt::format("#SBATCH --account={}\n", sa.account);
  if (!sa.qos.empty()) s += fmt::format("#SBATCH --qos={}\n", sa.qos);
  if (!sa.mem.empty()) s += fmt::format("#SBATCH --mem={}\n", sa.mem);
  s += fmt::format("#SBATCH --output={}\n", (slurm_dir / "logs" / "%x-%A_%a.log").string());
  s += fmt::format("#SBATCH --chdir={}\n", fs::current_path(ec).string());
  s += "set -euo pipefail\n";
  if (const char* pp = std::getenv("GEMFLOW_PLUGIN_PATH"); pp && *pp)
    s += fmt::format("export GEMFLOW_PLUGIN_PATH={}\n", shell_quote(pp));
  // one option a line
  std::vector<std::vector<std::string>> lines{{"exec", shell_quote(self_exe())}};
  for (const auto& p : g.plugin_paths)
    lines.front().insert(lines.front().end(), {"--plugin-path", shell_quote(fs::absolute(p).string())});
  lines.front().insert(lines.front().end(),
                       {"run", shell_quote(fs::absolute(args.workflow).lexically_normal().string())});
  const auto opt = [&](const std::string& name, const std::string& value = {}) {
    lines.push_back({name});
    if (!value.empty()) lines.back().push_back(shell_quote(value));
  };
  opt("--out", out.string());
  for (const auto& x : args.sweeps) opt("--sweep", x);
  if (args.zip) opt("--zip");
  if (args.force) opt("--force");
  for (const auto& x : args.sets) opt("--set", x);
  if (const auto dir = cache_dir_of(args)) opt("--cache", dir->string());
  else opt("--no-cache");
  if (!args.device.empty()) opt("--device", args.device);
  if (!args.until.empty()) opt("--until", args.until);
  opt("-j", std::to_string(std::max(1, sa.cpus)));
  if (!points_file.empty()) {
    opt("--points", points_file);
    opt("--retry-failed");
  }
  for (std::size_t k = 0; k < lines.size(); ++k) {
    std::string line;
    for (const auto& t : lines[k]) line += (line.empty() ? "" : " ") + t;
    s += (k ? "  " : "") + line + (k + 1 < lines.size() ? " \\\n" : "\n");
  }
  write_file_atomically(script, s);
  fs::permissions(script, fs::perms::owner_exec | fs::perms::group_exec, fs::perm_options::add, ec);

  if (sa.dry_run) {
    fmt::print("Wrote {} ({} task{}, {} point{}); not submitted (--dry-run)\n", script.string(), tasks,
               tasks == 1 ? "" : "s", count, count == 1 ? "" : "s");
    return kExitOk;
  }
  const std::string sbatch = find_on_path("sbatch");
  if (sbatch.empty()) {
    spdlog::error(
        "sbatch (Slurm) is not on PATH: install Slurm's client commands (Debian/Ubuntu package "
        "slurm-client; a whole single-machine Slurm: slurm-wlm), or submit {} where Slurm is",
        script.string());
    return kExitInvalid;
  }
  const auto [rc, text] = run_capture({sbatch, "--parsable", script.string()});
  std::string id = text;
  while (!id.empty() && (id.back() == '\n' || id.back() == '\r' || id.back() == ' ')) id.pop_back();
  if (const auto nl = id.rfind('\n'); nl != std::string::npos) id = id.substr(nl + 1);
  if (const auto semi = id.find(';'); semi != std::string::npos) id = id.substr(0, semi);
  if (rc != 0 || id.empty() || id.find_first_not_of("0123456789") != std::string::npos) {
    spdlog::error("sbatch {} failed (exit {}): {}", script.string(), rc, text);
    return kExitInvalid;
  }
  fmt::print(
      "Submitted job array {} ({} task{}, {} point{}{})\n  script: {}\n  logs:   {}\n  status: gemflow sweep "
      "status {}\n",
      id, tasks, tasks == 1 ? "" : "s", count, count == 1 ? "" : "s", args.retry_failed ? " to retry" : "",
      script.string(), (slurm_dir / "logs").string(), shell_quote(out.string()));
  return kExitOk;
}

}  // namespace

int sweep_command(const SweepArgs& args, const GlobalOptions& g, Console& console) {
  if (args.action == "status") return sweep_status(args);
  if (args.action == "collect") return sweep_collect(args);
  return sweep_submit(args, g, console);
}

}  // namespace gemflow::cli
