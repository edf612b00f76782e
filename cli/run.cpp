// `gemflow run` and `gemflow validate`.
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <condition_variable>
#include <csignal>
#include <cstdio>
#include <ctime>
#include <map>
#include <mutex>
#include <set>
#include <thread>

#include <fmt/format.h>
#include <spdlog/spdlog.h>
#include <nlohmann/json.hpp>

#include "commands.hpp"
#include "gemflow/atomic_file.hpp"
#include "gemflow/device.hpp"
#include "gemflow/executor.hpp"
#include "gemflow/workflow.hpp"
#include "reporter.hpp"

namespace gemflow::cli {
namespace fs = std::filesystem;

// ---- Cancellation: the handlers only store. -------------------------------------------------
// The first signal cancels the run. A second one, or 10 s after SIGTERM (a batch scheduler,
// `timeout`: a node stuck in a library never sees the cancellation), forces the exit: the ticker
// thread writes the summary (QA: a forced exit wrote none, so --json broke its "summary is
// last" promise) and exits with 3, without waiting for the running nodes. Should that thread not
// get to it within 2 s, the alarm exits.
namespace {
std::atomic<bool> g_cancel{false};
std::atomic<int> g_force{0};  // 0, 1: second signal, 2: SIGTERM deadline
static_assert(std::atomic<bool>::is_always_lock_free && std::atomic<int>::is_always_lock_free);

constexpr unsigned kTermGraceSeconds = 10;
constexpr unsigned kForceGraceSeconds = 2;

extern "C" void on_alarm(int) {
  int expected = 0;
  if (g_force.compare_exchange_strong(expected, 2)) {  // the SIGTERM deadline
    alarm(kForceGraceSeconds);
    return;
  }
  static const char msg[] = "gemflow: forced exit\n";  // the summary could not be written in time
  const ssize_t w = write(STDERR_FILENO, msg, sizeof msg - 1);
  (void)w;
  _exit(kExitCancelled);
}

// The sender of the first signal (kill(2): its pid; 0 from the terminal or the kernel) and when
// it came. `timeout` sends its signal to gemflow and then to its whole process group, so the
// same signal can arrive twice in a row: one request, not a second one that forces the exit.
std::atomic<pid_t> g_first_sender{0};
std::atomic<long long> g_first_ns{0};
static_assert(std::atomic<pid_t>::is_always_lock_free && std::atomic<long long>::is_always_lock_free);
constexpr long long kSameRequestNs = 500'000'000;

long long monotonic_ns() {
  timespec ts{};
  clock_gettime(CLOCK_MONOTONIC, &ts);  // async-signal-safe
  return static_cast<long long>(ts.tv_sec) * 1'000'000'000LL + ts.tv_nsec;
}

extern "C" void on_cancel_signal(int sig, siginfo_t* info, void*) {
  const bool from_process = info != nullptr && info->si_code == SI_USER && info->si_pid > 0;
  if (g_cancel.exchange(true)) {
    // The same process sending again within half a second: the same request. A Ctrl-C pressed
    // twice comes from the terminal (no sender pid) and always forces.
    if (from_process && info->si_pid == g_first_sender.load() && monotonic_ns() - g_first_ns.load() < kSameRequestNs)
      return;
    int expected = 0;
    if (g_force.compare_exchange_strong(expected, 1)) alarm(kForceGraceSeconds);
    return;
  }
  g_first_sender = from_process ? info->si_pid : 0;
  g_first_ns = monotonic_ns();
  if (sig == SIGTERM) alarm(kTermGraceSeconds);
}

void install_cancel_handlers() {
  struct sigaction sa {};
  sa.sa_sigaction = on_cancel_signal;
  sigemptyset(&sa.sa_mask);
  sa.sa_flags = SA_RESTART | SA_SIGINFO;
  sigaction(SIGINT, &sa, nullptr);
  sigaction(SIGTERM, &sa, nullptr);
  struct sigaction deadline {};
  deadline.sa_handler = on_alarm;
  sigemptyset(&deadline.sa_mask);
  sigaction(SIGALRM, &deadline, nullptr);
}

void print_diagnostic(Console& console, const Diagnostic& d) {
  std::string text = d.str();
  if (console.color()) text = (d.severity == Diagnostic::Severity::Error ? "\x1b[31m" : "\x1b[33m") + text + "\x1b[0m";
  console.line(text);
}

nlohmann::json diagnostic_json(const Diagnostic& d) {
  return {{"event", "diagnostic"},    {"severity", d.severity == Diagnostic::Severity::Error ? "error" : "warning"},
          {"file", d.where.file},     {"line", d.where.line},
          {"column", d.where.column}, {"node", d.node},
          {"param", d.param},         {"message", d.message},
          {"hint", d.hint},           {"text", d.str()}};
}

std::size_t error_count(const std::vector<Diagnostic>& ds) {
  return static_cast<std::size_t>(std::count_if(
      ds.begin(), ds.end(), [](const Diagnostic& d) { return d.severity == Diagnostic::Severity::Error; }));
}
bool has_error(const std::vector<Diagnostic>& ds) { return error_count(ds) > 0; }

/// "'name' invalid (N errors): nothing ran" on stdout, `run`'s verdict when nothing ran.
void print_nothing_ran(const std::string& name, const std::vector<Diagnostic>& ds) {
  const std::size_t errors = error_count(ds);
  fmt::print("\n'{}' invalid ({} error{}): nothing ran\n", name, errors, errors == 1 ? "" : "s");
  std::fflush(stdout);
}

/// Loads the file and applies --set; prints every diagnostic. nullopt when it is not runnable.
std::optional<Workflow> load_for_run(const fs::path& file, const std::vector<std::string>& sets,
                                     const Registry& registry, Console& console, std::vector<Diagnostic>& all) {
  all.clear();
  LoadResult lr = load_workflow(file, registry);
  // with overrides, parameter rules are checked on the values after them (an override may mend a
  // combination that the file has): validate() below reports what is still broken
  bool file_ok = lr.workflow.has_value();
  for (const auto& d : lr.diagnostics) {
    if (d.rule && !sets.empty()) continue;
    print_diagnostic(console, d);
    all.push_back(d);
    if (d.severity == Diagnostic::Severity::Error) file_ok = false;
  }
  if (!file_ok) return std::nullopt;
  Workflow wf = std::move(*lr.workflow);
  bool ok = true;
  for (const auto& s : sets) {
    if (auto d = apply_override(wf, s, registry)) {
      print_diagnostic(console, *d);
      all.push_back(*d);
      if (d->severity == Diagnostic::Severity::Error) ok = false;
    }
  }
  if (!ok) return std::nullopt;
  if (!sets.empty()) {
    // Overrides may change what validation sees; report only what is new.
    std::set<std::string> seen;
    for (const auto& d : all) seen.insert(d.str());
    for (const auto& d : validate(wf, registry)) {
      if (seen.contains(d.str())) continue;
      print_diagnostic(console, d);
      all.push_back(d);
      if (d.severity == Diagnostic::Severity::Error) ok = false;
    }
  }
  if (!ok) return std::nullopt;
  // every later step (reporting, --until, the run) sees the inner nodes as "sub/node"
  if (has_subworkflows(wf)) return flatten(wf, registry);
  return wf;
}

/// The workflow's name, else its file's stem.
std::string display_name(const Workflow& wf, const fs::path& file) {
  if (!wf.name.empty()) return wf.name;
  return file.empty() ? std::string("workflow") : file.stem().string();
}

std::string sanitize(std::string name) {
  for (char& c : name)
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_' || c == '.')) c = '_';
  if (name.empty() || name == "." || name == "..") name = "workflow";
  return name;
}

/// A path as the user would type it: relative to the cwd when below it, else absolute.
std::string display(const fs::path& p) {
  if (p.empty()) return "";
  std::error_code ec;
  const fs::path rel = fs::relative(p, fs::current_path(ec), ec);
  if (!ec && !rel.empty() && *rel.begin() != "..") return rel.string();
  return p.string();
}

/// `run`'s JSON lines on stdout (--json only), one object a line.
void emit_json_line(const RunArgs& args, const nlohmann::json& j) {
  if (!args.json) return;
  std::fputs((j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) + "\n").c_str(), stdout);
  std::fflush(stdout);
}

/// The end of a run that never started: the diagnostics and a summary with nothing run (--json);
/// returns `code`.
int fail_early(const RunArgs& args, const Console& console, int code, const std::vector<Diagnostic>& ds,
               const std::string& why) {
  for (const auto& d : ds) emit_json_line(args, diagnostic_json(d));
  // the keys of every summary (docs/cli.md), with nothing run
  emit_json_line(args, {{"event", "summary"},
                        {"workflow_file", args.workflow.string()},
                        {"ok", false},
                        {"exit_code", code},
                        {"cancelled", false},
                        {"seconds", console.elapsed()},
                        {"nodes", nlohmann::json::object()},
                        {"error", why}});
  return code;
}

/// The error of a --until that names no node of wf (with the nearest id as a hint).
std::optional<Diagnostic> check_until(const RunArgs& args, const Workflow& wf) {
  if (args.until.empty() || wf.find(args.until)) return std::nullopt;
  Diagnostic d;
  d.where.file = args.workflow.string();
  d.node = args.until;
  d.message = "--until names no node of the workflow";
  std::vector<std::string> ids;
  for (const auto& n : wf.nodes) ids.push_back(n.id);
  if (auto near = nearest_name(args.until, ids); !near.empty()) d.hint = fmt::format("did you mean '{}'?", near);
  return d;
}

/// The error of a --device that does not resolve (logged), else "". An explicit CUDA request for
/// a device that is absent is an error, never a silent fallback.
std::string check_device(const std::string& device) {
  if (device.empty()) return {};
  try {
    const auto req = DeviceRequest::parse(device);
    if (!req) throw Error("'" + device + "' is not a device (auto, cpu, cuda, cuda:N)");
    const Device d = resolve_device(*req);
    spdlog::debug("--device {} resolves to {}", device, d.str());
  } catch (const std::exception& e) {
    spdlog::error("--device {}: {}", device, e.what());
    return std::string("--device: ") + e.what();
  }
  return {};
}

/// `run`'s exit code for a run that started: invalid (the run's own checks), cancelled, a node
/// failed, or ok.
int exit_code_of(const RunResult& result) {
  bool any_failed = false;
  for (const auto& [id, nr] : result.nodes) any_failed |= nr.state == NodeState::Failed;
  int code = kExitOk;
  if (has_error(result.diagnostics)) code = kExitInvalid;
  else if (result.cancelled || g_cancel.load()) code = kExitCancelled;
  else if (any_failed) code = kExitNodeFailed;
  // the results are there, but not their record: not a success (the error was logged by the run)
  if (code == kExitOk && !result.provenance_error.empty()) code = kExitNodeFailed;
  return code;
}

/// The outputs that feed a link, as (node, port).
std::set<std::pair<std::string, std::string>> linked_outputs(const Workflow& wf) {
  std::set<std::pair<std::string, std::string>> consumed;
  for (const auto& l : wf.links) consumed.insert({l.from_node, l.from_port});
  return consumed;
}

/// What `run` reports about a run that ended, in its two forms (JSON, a table on stdout).
struct RunReport {
  const RunArgs& args;
  const Workflow& wf;
  const std::string& name;
  const RunOptions& opt;
  const RunResult& result;
  int code;
  double seconds;

  /// The --json summary event (docs/cli.md).
  nlohmann::json summary_json() const {
    const auto consumed = linked_outputs(wf);
    nlohmann::json nodes = nlohmann::json::object();
    for (const auto& n : wf.nodes) {
      auto it = result.nodes.find(n.id);
      if (it == result.nodes.end()) continue;
      const NodeResult& nr = it->second;
      nlohmann::json outs = nlohmann::json::object();
      for (const auto& [port, v] : nr.outputs)
        outs[port] = {{"type", v.type()}, {"summary", v.summary()}, {"linked", consumed.contains({n.id, port})}};
      nlohmann::json jn{{"type", n.type},
                        {"state", gemflow::to_string(nr.state)},
                        {"seconds", nr.seconds},
                        {"key", nr.key},
                        {"outputs", outs}};
      if (!nr.error.empty()) jn["error"] = nr.error;
      if (!nr.why.empty()) jn["why"] = nr.why;
      nodes[n.id] = jn;
    }
    nlohmann::json summary{{"event", "summary"},
                           {"workflow", name},
                           {"workflow_file", args.workflow.string()},
                           {"ok", code == kExitOk},
                           {"exit_code", code},
                           {"cancelled", code == kExitCancelled},
                           {"seconds", seconds},
                           {"out_dir", opt.out_dir.string()},
                           {"provenance", result.provenance.string()},
                           {"nodes", nodes}};
    if (!result.provenance_error.empty())
      summary["error"] = "the provenance record was not written: " + result.provenance_error;
    return summary;
  }

  /// The human summary on stdout: the verdict, a table of the nodes, the results that feed no
  /// link, the output folder and the provenance record. An invalid run: the verdict only.
  void print() const {
    std::map<NodeState, int> counts;
    for (const auto& [id, nr] : result.nodes) ++counts[nr.state];
    std::string tally;
    for (auto s : {NodeState::Done, NodeState::Cached, NodeState::Failed, NodeState::Skipped, NodeState::Cancelled,
                   NodeState::Idle, NodeState::Queued, NodeState::Running})
      if (counts[s] > 0) tally += fmt::format("{}{} {}", tally.empty() ? "" : ", ", counts[s], gemflow::to_string(s));
    const char* verdict = code == kExitOk           ? "finished"
                          : code == kExitCancelled  ? "cancelled"
                          : code == kExitNodeFailed ? "failed"
                                                    : "invalid";
    if (code == kExitInvalid) {  // nothing ran: no table
      print_nothing_ran(name, result.diagnostics);
      return;
    }
    fmt::print("\n'{}' {} after {:.2f} s: {}\n", name, verdict, seconds, tally.empty() ? "nothing ran" : tally);
    print_node_table();
    print_results();
    fmt::print("Output folder: {}\n", display(opt.out_dir));
    if (!result.provenance.empty()) fmt::print("Provenance:    {}\n", display(result.provenance));
    if (!result.provenance_error.empty()) fmt::print("Provenance:    not written ({})\n", result.provenance_error);
    std::fflush(stdout);
  }

  void print_node_table() const {
    std::size_t wid = 4, wtype = 4;
    for (const auto& n : wf.nodes) {
      wid = std::max(wid, n.id.size());
      wtype = std::max(wtype, n.type.size());
    }
    fmt::print("  {:<{}}  {:<{}}  {:<9}  {:>8}\n", "node", wid, "type", wtype, "state", "seconds");
    for (const auto& n : wf.nodes) {
      auto it = result.nodes.find(n.id);
      if (it == result.nodes.end()) continue;
      const NodeResult& nr = it->second;
      fmt::print("  {:<{}}  {:<{}}  {:<9}  {:>8.2f}{}\n", n.id, wid, n.type, wtype, gemflow::to_string(nr.state),
                 nr.seconds, nr.error.empty() ? "" : "  " + strip_node_prefix(n.id, nr.error));
    }
  }

  /// --explain: why each node ran or came from the cache.
  void print_explanations() const {
    fmt::print("Why:\n");
    if (!opt.disk_cache) fmt::print("  (no result cache: every node ran)\n");
    for (const auto& n : wf.nodes) {
      auto it = result.nodes.find(n.id);
      if (it == result.nodes.end()) continue;
      const NodeResult& nr = it->second;
      std::string why = nr.why;
      if (nr.state == NodeState::Skipped || nr.state == NodeState::Cancelled) why = gemflow::to_string(nr.state);
      if (why.empty()) continue;
      fmt::print("  {}: {}{}\n", n.id, nr.state == NodeState::Cached ? "" : "ran: ", why);
    }
  }

  /// The outputs that feed no link ("Results:").
  void print_results() const {
    const auto consumed = linked_outputs(wf);
    bool header = false;
    for (const auto& n : wf.nodes) {
      auto it = result.nodes.find(n.id);
      if (it == result.nodes.end()) continue;
      for (const auto& [port, v] : it->second.outputs) {
        if (consumed.contains({n.id, port}) || v.empty()) continue;
        if (!header) fmt::print("Results:\n");
        header = true;
        fmt::print("  {}.{}  {}: {}\n", n.id, port, v.type(), v.summary());
      }
    }
  }
};

/// A run in progress with its display: the reporter fed by the run's events, a ticker thread that
/// redraws it and notices Ctrl-C, and the forced exit of a second signal (install_cancel_handlers).
class LiveRun {
 public:
  LiveRun(const RunArgs& args, Console& console, const Workflow& wf, const std::string& name, RunOptions& opt,
          Reporter::Mode mode, const std::vector<Diagnostic>& printed_diags)
      : args_(args), console_(console), wf_(wf), name_(name), opt_(opt), reporter_(mode, console, wf) {
    // Warnings already printed by load_for_run() come again from the run's own validation.
    for (const auto& d : printed_diags) printed_.insert(d.log_str());  // as the run logs them (Run::prepare)
    opt_.on_event = [this](const RunEvent& e) {
      announce_cancel();
      if (e.kind == RunEvent::Kind::Log && e.node.empty() && printed_.contains(e.message)) return;
      reporter_.on_event(e);
    };
  }

  Reporter& reporter() { return reporter_; }

  /// run_workflow() with the ticker running; an exception from it (the run could not start) into
  /// `run_error`.
  RunResult run(const Registry& registry, std::string& run_error) {
    console_.start_clock();
    if (args_.json)
      reporter_.emit_json({{"event", "start"},
                           {"workflow", name_},
                           {"workflow_file", args_.workflow.string()},
                           {"out_dir", opt_.out_dir.string()},
                           {"nodes", wf_.nodes.size()}});
    else
      spdlog::info("running '{}' ({} node{}) → {}", name_, wf_.nodes.size(), wf_.nodes.size() == 1 ? "" : "s",
                   display(opt_.out_dir));

    // Ticker: redraws the progress block and notices the first Ctrl-C.
    std::mutex tick_mutex;
    std::condition_variable tick_cv;
    bool stop = false;
    std::thread ticker([&] {
      std::unique_lock lock(tick_mutex);
      while (!tick_cv.wait_for(lock, std::chrono::milliseconds(50), [&] { return stop; })) {
        announce_cancel();
        if (g_force.load()) force_exit();
        reporter_.tick();
      }
    });

    RunResult result;
    try {
      result = run_workflow(wf_, registry, opt_);
    } catch (const std::exception& e) {
      run_error = e.what();
    }
    {
      std::lock_guard lock(tick_mutex);
      stop = true;
    }
    tick_cv.notify_all();
    ticker.join();
    announce_cancel();  // a Ctrl-C in the last moments of the run
    console_.clear_live();
    return result;
  }

 private:
  /// The first Ctrl-C is announced once ("cancelling"), before any event that follows from it, by
  /// whichever thread sees it first: the ticker, an event of the run, or the end of the run.
  void announce_cancel() {
    if (!g_cancel.load() || announced_.exchange(true)) return;
    if (args_.json) reporter_.emit_json({{"event", "cancelling"}, {"t", console_.elapsed()}});
    spdlog::warn("cancelling: waiting for the running nodes to stop (a second Ctrl-C or SIGTERM forces the exit)");
  }

  /// A forced exit (see install_cancel_handlers): the summary from the states last reported, then
  /// exit 3 without waiting for the nodes; no provenance record (the run has not ended).
  [[noreturn]] void force_exit() {
    const int why = g_force.load();
    std::vector<std::string> running;
    nlohmann::json nodes = nlohmann::json::object();
    for (const auto& [id, st] : reporter_.states()) {
      if (st == NodeState::Running) running.push_back(id);
      const NodeInstance* inst = wf_.find(id);
      nodes[id] = {{"type", inst ? inst->type : std::string()}, {"state", gemflow::to_string(st)}};
    }
    std::string waiting;
    for (const auto& id : running) waiting += (waiting.empty() ? "" : ", ") + id;
    const std::string what = fmt::format("{}: exited without waiting for {}; no provenance record",
                                         why == 2 ? "still running 10 s after SIGTERM" : "a second signal",
                                         waiting.empty() ? std::string("the run to end") : waiting);
    console_.clear_live();
    spdlog::error("{}", what);
    if (args_.json) {
      reporter_.emit_json({{"event", "summary"},
                           {"workflow", name_},
                           {"workflow_file", args_.workflow.string()},
                           {"ok", false},
                           {"exit_code", kExitCancelled},
                           {"cancelled", true},
                           {"seconds", console_.elapsed()},
                           {"out_dir", opt_.out_dir.string()},
                           {"provenance", ""},
                           {"nodes", nodes},
                           {"error", what}});
    } else {
      fmt::print("\n'{}' cancelled after {:.2f} s: forced exit, no provenance record\n", name_, console_.elapsed());
    }
    std::fflush(stdout);
    std::fflush(stderr);
    _exit(kExitCancelled);
  }

  const RunArgs& args_;
  Console& console_;
  const Workflow& wf_;
  const std::string& name_;
  RunOptions& opt_;
  Reporter reporter_;
  std::atomic<bool> announced_{false};
  std::set<std::string> printed_;
};

}  // namespace

int validate_command(const ValidateArgs& args, const GlobalOptions& g, Console& console) {
  Registry registry;
  PluginHost host(registry);
  load_plugins(host, g, true);
  std::vector<Diagnostic> all;
  auto wf = load_for_run(args.workflow, args.sets, registry, console, all);
  const auto invalid = [&](const std::vector<Diagnostic>& ds) {
    const std::size_t errors = error_count(ds);
    fmt::print("{}: invalid ({} error{})\n", args.workflow.string(), errors, errors == 1 ? "" : "s");
    return kExitInvalid;
  };
  if (!wf) return invalid(all);
  // Paths checked against the default output folder (`gemflow run` without --out).
  const fs::path out = fs::absolute(fs::path("out") / sanitize(display_name(*wf, args.workflow)));
  auto path_diags = check_run_paths(*wf, registry, out);
  for (auto& d : sweep_section_diagnostics(*wf, registry)) path_diags.push_back(std::move(d));
  for (auto& d : check_run_devices(*wf, registry, "")) path_diags.push_back(std::move(d));
  std::vector<std::string> notes;  // what the nodes will read in their input files
  for (auto& d : check_input_contents(*wf, registry, &notes)) path_diags.push_back(std::move(d));
  for (const auto& d : path_diags) print_diagnostic(console, d);
  if (has_error(path_diags)) return invalid(path_diags);
  for (const auto& n : notes) fmt::print("{}\n", n);
  fmt::print("{}: valid ('{}', {} node{}, {} link{})\n", args.workflow.string(), display_name(*wf, args.workflow),
             wf->nodes.size(), wf->nodes.size() == 1 ? "" : "s", wf->links.size(), wf->links.size() == 1 ? "" : "s");
  return kExitOk;
}

int upgrade_command(const UpgradeArgs& args, const GlobalOptions& g, Console& console) {
  Registry registry;
  PluginHost host(registry);
  load_plugins(host, g, true);
  const LoadResult r = load_workflow(args.workflow, registry);
  for (const auto& d : r.diagnostics) print_diagnostic(console, d);
  if (!r.ok()) {
    const std::size_t errors = error_count(r.diagnostics);
    fmt::print("{}: invalid ({} error{}); not changed\n", args.workflow.string(), errors, errors == 1 ? "" : "s");
    return kExitInvalid;
  }
  if (r.migrated == 0) {
    fmt::print("{}: every node is at its current version; not changed\n", args.workflow.string());
    return kExitOk;
  }
  // The original is kept beside it (W.yaml.bak, or .bak.2 … when that exists).
  fs::path backup = args.workflow.string() + ".bak";
  for (int k = 2; fs::exists(backup); ++k) backup = args.workflow.string() + ".bak." + std::to_string(k);
  std::error_code ec;
  fs::copy_file(args.workflow, backup, ec);
  if (ec) {
    spdlog::error("cannot keep the original as {}: {}; not changed", backup.string(), ec.message());
    return kExitInvalid;
  }
  save_workflow(*r.workflow, args.workflow);
  fmt::print("{}: upgraded ({} node{}); only the migrated nodes were rewritten, the original is {}\n",
             args.workflow.string(), r.migrated, r.migrated == 1 ? "" : "s", backup.string());
  return kExitOk;
}

int fmt_command(const FmtArgs& args, const GlobalOptions& g, Console& console) {
  Registry registry;
  PluginHost host(registry);
  load_plugins(host, g, true);
  int rc = kExitOk;
  for (const auto& file : args.workflows) {
    const LoadResult r = load_workflow(file, registry);
    if (!r.ok()) {
      for (const auto& d : r.diagnostics) print_diagnostic(console, d);
      fmt::print("{}: invalid; not formatted\n", file.string());
      rc = kExitInvalid;
      continue;
    }
    const std::string canonical = to_yaml(*r.workflow);
    if (r.workflow->source && r.workflow->source->text == canonical) continue;
    if (args.check) {
      fmt::print("{}: not in canonical form\n", file.string());
      if (rc == kExitOk) rc = 1;
      continue;
    }
    write_file_atomically(file, canonical);
    fmt::print("{}: formatted\n", file.string());
  }
  return rc;
}

int run_command(const RunArgs& args, const GlobalOptions& g, Console& console) {
  const Reporter::Mode mode = args.json        ? Reporter::Mode::Json
                              : console.live() ? Reporter::Mode::Terminal
                                               : Reporter::Mode::Plain;
  install_cancel_handlers();  // a Ctrl-C while plugins load cancels the run before it starts
  Registry registry;
  PluginHost host(registry);
  load_plugins(host, g, true);

  std::vector<Diagnostic> diags;
  auto wf_opt = load_for_run(args.workflow, args.sets, registry, console, diags);
  if (!wf_opt) return fail_early(args, console, kExitInvalid, diags, "invalid workflow");
  const Workflow& wf = *wf_opt;
  if (wants_sweep(args, wf)) return run_sweep(args, g, console, host, registry, wf, &g_cancel);
  if (const auto d = check_until(args, wf)) {
    print_diagnostic(console, *d);
    return fail_early(args, console, kExitInvalid, {*d}, "unknown --until node");
  }
  if (const std::string why = check_device(args.device); !why.empty())
    return fail_early(args, console, kExitInvalid, {}, why);

  RunOptions opt;
  const std::string name = display_name(wf, args.workflow);
  opt.out_dir = args.out ? fs::absolute(*args.out) : fs::absolute(fs::path("out") / sanitize(name));
  opt.jobs = args.jobs;
  opt.gpu_jobs = args.gpu_jobs;
  opt.device = args.device;
  opt.until = args.until;
  opt.cancel = &g_cancel;
  opt.command_line = args.command_line;
  opt.plugins = &host.records();
  std::optional<DiskCache> disk_cache;
  const char* no_cache_env = std::getenv("GEMFLOW_NO_CACHE");
  if (!args.no_cache && !(no_cache_env && *no_cache_env && std::string(no_cache_env) != "0")) {
    const fs::path dir = args.cache ? fs::absolute(*args.cache) : DiskCache::default_dir();
    try {
      disk_cache.emplace(dir);
      opt.disk_cache = &*disk_cache;
    } catch (const std::exception& e) {  // a cache is an optimisation: never a reason not to run
      spdlog::warn("no result cache: {}; the run goes on uncached", e.what());
    }
  }

  {  // files the run must not write, found before "running" (as `validate` finds them)
    const auto pre = check_run_paths(wf, registry, opt.out_dir);
    if (has_error(pre)) {
      for (const auto& d : pre) print_diagnostic(console, d);
      if (!args.json) print_nothing_ran(name, pre);
      return fail_early(args, console, kExitInvalid, pre, "invalid workflow");
    }
  }

  LiveRun live(args, console, wf, name, opt, mode, diags);
  std::string run_error;
  const RunResult result = live.run(registry, run_error);
  const double seconds = console.elapsed();
  if (!run_error.empty()) {
    spdlog::error("the run could not start: {}", run_error);
    return fail_early(args, console, kExitInvalid, {}, run_error);
  }
  for (const auto& d : result.diagnostics) print_diagnostic(console, d);

  const int code = exit_code_of(result);
  // found by the run's own checks (an output folder it cannot create or write): the summary of an
  // invalid workflow, as above (QA: it had the keys of a run and no error)
  if (args.json && code == kExitInvalid)
    return fail_early(args, console, kExitInvalid, result.diagnostics, "invalid workflow");
  const RunReport report{args, wf, name, opt, result, code, seconds};
  if (args.json) {
    for (const auto& d : result.diagnostics) live.reporter().emit_json(diagnostic_json(d));
    live.reporter().emit_json(report.summary_json());
  } else {
    report.print();
    if (args.explain) report.print_explanations();
  }
  return code;
}

}  // namespace gemflow::cli
