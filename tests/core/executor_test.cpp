// Executor: order, parallel branches, failure isolation, cancellation, cache, until, atomic
// writes, provenance.
#include <atomic>
#include <chrono>
#include <fstream>
#include <mutex>
#include <regex>
#include <sstream>
#include <thread>

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <fmt/format.h>
#include <signal.h>
#include <sys/resource.h>
#include <unistd.h>

#include "gemflow/atomic_file.hpp"
#include "gemflow/config.hpp"
#include "gemflow/executor.hpp"
#include "gemflow/types.hpp"
#include "test_support.hpp"

namespace fs = std::filesystem;
using ::testing::HasSubstr;

namespace gemflow {
namespace {

using test::all;
using test::TempDir;

// Counts executions and measures concurrency; `rendezvous` waits (up to 20 s) until that many
// probes run at the same time, which proves branches overlap without timing anything.
struct ProbeStats {
  std::atomic<int> executions{0}, running{0}, max_running{0};
};
ProbeStats g_probe;

class Probe final : public Node {
 public:
  static NodeInfo info() { return {.id = "probe.count", .title = "Probe", .category = "Test"}; }
  Input<MatrixF64> in{this, "in", "Passed through", PortUse::Optional};
  Output<MatrixF64> out{this, "out", "in + 1, or 1"};
  Param<int> rendezvous{this, "rendezvous", 0, {.min = 0, .doc = "Wait until this many probes run"}};
  Param<int> salt{this, "salt", 0, {.doc = "Changes the key only"}};
  void execute(NodeContext& ctx) override {
    ++g_probe.executions;
    const int now = ++g_probe.running;
    int seen = g_probe.max_running.load();
    while (now > seen && !g_probe.max_running.compare_exchange_weak(seen, now)) {
    }
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
    while (*rendezvous > 0 && g_probe.max_running.load() < *rendezvous) {
      if (std::chrono::steady_clock::now() > deadline) {
        --g_probe.running;
        throw Error("the other probes never ran at the same time");
      }
      ctx.throw_if_cancelled();
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    --g_probe.running;
    out.set(MatrixF64(1, 1, in.connected() ? (*in)(0, 0) + 1 : 1.0));
  }
};

// Sets no output although its output is linked.
class Lazy final : public Node {
 public:
  static NodeInfo info() { return {.id = "probe.lazy", .title = "Lazy", .category = "Test"}; }
  Output<MatrixF64> out{this, "out", "never set"};
  void execute(NodeContext&) override {}
};

// Waits for the run to be cancelled, then stops with its own exception (not gemflow::Cancelled),
// as a plugin that wraps cancellation in its own error type does.
class Stubborn final : public Node {
 public:
  static NodeInfo info() { return {.id = "probe.stubborn", .title = "Stubborn", .category = "Test"}; }
  Output<MatrixF64> out{this, "out", "never set"};
  void execute(NodeContext& ctx) override {
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
    while (!ctx.cancelled()) {
      if (std::chrono::steady_clock::now() > deadline) throw Error("never cancelled");
      ctx.progress(0.5, "waiting");
      std::this_thread::sleep_for(std::chrono::milliseconds(2));
    }
    throw std::runtime_error("optimizer interrupted");
  }
};

// An allocation that fails inside the node (no memory check foresaw it).
class Greedy final : public Node {
 public:
  static NodeInfo info() { return {.id = "probe.greedy", .title = "Greedy", .category = "Test"}; }
  Output<MatrixF64> out{this, "out", "never set"};
  void execute(NodeContext&) override { throw std::bad_alloc(); }
};

// Works `ms` milliseconds, calling progress every `every` ms (0: never).
class Quiet final : public Node {
 public:
  static NodeInfo info() { return {.id = "probe.quiet", .title = "Quiet", .category = "Test"}; }
  Param<int> ms{this, "ms", 150, {.min = 0}};
  Param<int> every{this, "every", 0, {.min = 0}};
  void execute(NodeContext& ctx) override {
    const auto start = std::chrono::steady_clock::now();
    auto last = start;
    while (std::chrono::steady_clock::now() - start < std::chrono::milliseconds(*ms)) {
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
      if (*every > 0 && std::chrono::steady_clock::now() - last >= std::chrono::milliseconds(*every)) {
        last = std::chrono::steady_clock::now();
        ctx.progress(0.5);
      }
    }
  }
};

// Writes JSON only; its writer names the temporary file in its error, as io writers do.
class WriteJson final : public Node {
 public:
  static NodeInfo info() { return {.id = "probe.write_json", .title = "Write JSON", .category = "Test"}; }
  PathParam path{this, "path", PathParam::Mode::Write, "JSON file", "out.json", {".json"}};
  Param<bool> fail{this, "fail", false, {.doc = "Fail in the writer, naming the temporary file"}};
  void execute(NodeContext& ctx) override {
    ctx.write_file(*path, [&](const fs::path& tmp) {
      if (*fail) throw Error("cannot open " + tmp.string() + " for writing");
      std::ofstream(tmp) << "{}\n";
    });
  }
};

// Writes `bytes` bytes through the SDK's stream writer.
class WriteStream final : public Node {
 public:
  static NodeInfo info() { return {.id = "probe.write_stream", .title = "Write stream", .category = "Test"}; }
  PathParam path{this, "path", PathParam::Mode::Write, "File", "big.txt"};
  Param<int> bytes{this, "bytes", 1, {.min = 0, .doc = "How many bytes"}};
  void execute(NodeContext& ctx) override {
    ctx.write_file(*path, [&](std::ostream& out) {
      for (int i = 0; i < *bytes; ++i) out.put('x');
    });
  }
};

// Reads an optional file (PathParam with PortUse::Optional): its size, or -1 when not given.
class OptionalRead final : public Node {
 public:
  static NodeInfo info() { return {.id = "probe.optional_read", .title = "Optional read", .category = "Test"}; }
  Output<MatrixF64> size{this, "size", "the file's size in bytes, -1 without one"};
  PathParam path{this, "path", PathParam::Mode::Read, "An optional text file", PortUse::Optional, {".txt"}};
  void execute(NodeContext&) override {
    size.set(MatrixF64(1, 1, path.given() ? static_cast<double>(fs::file_size(*path)) : -1.0));
  }
};

// Publishes `passes` previews of its output, `pause_ms` apart, then the final value; `bad`
// previews a port that does not exist (1) or a value of the wrong type (2); `wanted` is 1 when
// the run wants previews (NodeContext::previews_wanted).
class Previewer final : public Node {
 public:
  static NodeInfo info() { return {.id = "probe.preview", .title = "Previewer", .category = "Test"}; }
  Output<MatrixF64> out{this, "out", "the pass count"};
  Param<int> passes{this, "passes", 3, {.min = 0, .doc = "Previews before the result"}};
  Param<int> pause_ms{this, "pause_ms", 0, {.min = 0, .doc = "Pause between previews"}};
  Output<MatrixF64> wanted{this, "wanted", "1 when the run wants previews"};
  Param<int> bad{this, "bad", 0, {.min = 0, .doc = "0 good, 1 unknown port, 2 wrong type"}};
  void execute(NodeContext& ctx) override {
    wanted.set(MatrixF64(1, 1, ctx.previews_wanted() ? 1.0 : 0.0));
    for (int i = 1; i <= *passes; ++i) {
      if (*bad == 1) ctx.preview("nope", Value::make(MatrixF64(1, 1, i)));
      if (*bad == 2) ctx.preview("out", Value::make(Table{}));
      ctx.preview("out", Value::make(MatrixF64(1, 1, i)));
      std::this_thread::sleep_for(std::chrono::milliseconds(*pause_ms));
    }
    out.set(MatrixF64(1, 1, *passes));
  }
};

const Registry& registry() {
  static const Registry reg = [] {
    Registry r = test::testnodes();
    r.add_node<Previewer>("executor_test");
    r.add_node<Probe>("executor_test");
    r.add_node<Lazy>("executor_test");
    r.add_node<Stubborn>("executor_test");
    r.add_node<WriteJson>("executor_test");
    r.add_node<Greedy>("executor_test");
    r.add_node<WriteStream>("executor_test");
    r.add_node<Quiet>("executor_test");
    r.add_node<OptionalRead>("executor_test");
    return r;
  }();
  return reg;
}

Workflow load(const TempDir& dir, const std::string& text, const std::string& name = "w.yaml") {
  const fs::path file = dir / name;
  fs::create_directories(file.parent_path());
  std::ofstream(file) << text;
  auto r = load_workflow(file, registry());
  EXPECT_TRUE(r.ok()) << all(r.diagnostics);
  return r.workflow ? *r.workflow : Workflow{};
}

/// Runs wf with the default options, writing into dir/out.
RunResult run_in(const TempDir& dir, const Workflow& wf) {
  RunOptions o;
  o.out_dir = dir / "out";
  return run_workflow(wf, registry(), o);
}

std::string read(const fs::path& f) {
  std::ifstream in(f, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

double scalar(const RunResult& r, const std::string& node, const std::string& port) {
  return (*r.nodes.at(node).outputs.at(port).as<MatrixF64>())(0, 0);
}

// Thread-safe event log.
struct Events {
  std::mutex m;
  std::vector<RunEvent> list;
  std::function<void(const RunEvent&)> handler() {
    return [this](const RunEvent& e) {
      std::lock_guard lock(m);
      list.push_back(e);
    };
  }
  // Index of the first state event (node, state), or -1.
  int index(const std::string& node, NodeState s) {
    std::lock_guard lock(m);
    for (std::size_t i = 0; i < list.size(); ++i)
      if (list[i].kind == RunEvent::Kind::State && list[i].node == node && list[i].state == s)
        return static_cast<int>(i);
    return -1;
  }
};

TEST(Executor, RunsInDependencyOrderWithValues) {
  TempDir dir;
  const Workflow wf = load(dir, R"(gemflow: 1
nodes:
  sum: {type: test.add}
  a: {type: test.constant, params: {value: 2}}
  b: {type: test.constant, params: {value: 0.25}}
  twice: {type: test.add}
links:
  - a.value -> sum.a
  - b.value -> sum.b
  - sum.sum -> twice.a
  - sum.sum -> twice.b
)");
  Events ev;
  RunOptions o;
  o.out_dir = dir / "out";
  o.on_event = ev.handler();
  o.jobs = 4;
  const RunResult r = run_workflow(wf, registry(), o);
  ASSERT_TRUE(r.ok()) << all(r.diagnostics);
  EXPECT_EQ(scalar(r, "sum", "sum"), 2.25);
  EXPECT_EQ(scalar(r, "twice", "sum"), 4.5);
  for (const auto& [id, n] : r.nodes) {
    EXPECT_EQ(n.state, NodeState::Done) << id;
    EXPECT_EQ(n.key.size(), 16u);
  }
  // A node starts only after all of its inputs are done.
  EXPECT_LT(ev.index("a", NodeState::Done), ev.index("sum", NodeState::Running));
  EXPECT_LT(ev.index("b", NodeState::Done), ev.index("sum", NodeState::Running));
  EXPECT_LT(ev.index("sum", NodeState::Done), ev.index("twice", NodeState::Running));
  EXPECT_GE(ev.index("twice", NodeState::Queued), 0);
  EXPECT_EQ(r.provenance, dir / "out" / "provenance.json");
}

TEST(Executor, PreviewsReachTheHandlerThrottledAndTyped) {
  TempDir dir;
  const Workflow wf = load(dir, R"(gemflow: 1
nodes:
  fast: {type: probe.preview, params: {passes: 50}}
  slow: {type: probe.preview, params: {passes: 3, pause_ms: 150}}
)");
  std::mutex m;
  std::map<std::string, std::vector<double>> seen;
  RunOptions o;
  o.out_dir = dir / "out";
  o.on_event = [&](const RunEvent& e) {
    if (e.kind != RunEvent::Kind::Preview) return;
    std::lock_guard lock(m);
    EXPECT_EQ(e.port, "out");
    seen[e.node].push_back((*e.value.as<MatrixF64>())(0, 0));
  };
  o.previews = true;
  const RunResult r = run_workflow(wf, registry(), o);
  ASSERT_TRUE(r.ok()) << all(r.diagnostics);
  EXPECT_EQ((*r.nodes.at("fast").outputs.at("wanted").as<MatrixF64>())(0, 0), 1.0);
  // 50 previews in well under 100 ms: the first one passes, the rest are dropped.
  EXPECT_EQ(seen["fast"], std::vector<double>{1.0});
  // 150 ms apart: every one passes, in order.
  EXPECT_EQ(seen["slow"], (std::vector<double>{1.0, 2.0, 3.0}));

  // Headless (the default, as `gemflow run`): nodes are told no one wants previews (a flame
  // render made a tone-mapped image per pass for nothing: 11x its time) and none is forwarded.
  seen.clear();
  RunOptions headless = o;
  headless.previews = false;
  headless.out_dir = dir / "out-headless";
  const RunResult h = run_workflow(wf, registry(), headless);
  ASSERT_TRUE(h.ok()) << all(h.diagnostics);
  EXPECT_EQ((*h.nodes.at("fast").outputs.at("wanted").as<MatrixF64>())(0, 0), 0.0);
  EXPECT_TRUE(seen.empty());

  for (const int bad : {1, 2}) {
    const Workflow w2 =
        load(dir, fmt::format("gemflow: 1\nnodes:\n  p: {{type: probe.preview, params: {{bad: {}}}}}\n", bad),
             fmt::format("bad{}.yaml", bad));
    RunOptions o2;
    o2.out_dir = dir / fmt::format("out{}", bad);
    const RunResult r2 = run_workflow(w2, registry(), o2);
    ASSERT_EQ(r2.nodes.at("p").state, NodeState::Failed);
    EXPECT_THAT(r2.nodes.at("p").error,
                HasSubstr(bad == 1 ? "'nope', which is not an output port" : "must be a Matrix<f64>, not Table"));
  }
}

TEST(Executor, IndependentBranchesOverlap) {
  TempDir dir;
  const Workflow wf = load(dir, R"(gemflow: 1
nodes:
  p1: {type: probe.count, params: {rendezvous: 3}}
  p2: {type: probe.count, params: {rendezvous: 3}}
  p3: {type: probe.count, params: {rendezvous: 3}}
)");
  g_probe.max_running = 0;
  RunOptions o;
  o.out_dir = dir / "out";
  o.jobs = 3;
  const RunResult r = run_workflow(wf, registry(), o);
  EXPECT_TRUE(r.ok()) << r.nodes.at("p1").error;
  EXPECT_EQ(g_probe.max_running.load(), 3);
}

TEST(Executor, JobsLimitsConcurrency) {
  TempDir dir;
  const Workflow wf = load(dir, R"(gemflow: 1
nodes:
  p1: {type: probe.count, params: {salt: 1}}
  p2: {type: probe.count, params: {salt: 2}}
  p3: {type: probe.count, params: {salt: 3}}
  p4: {type: probe.count, params: {salt: 4}}
)");
  g_probe.max_running = 0;
  RunOptions o;
  o.out_dir = dir / "out";
  o.jobs = 1;
  const RunResult r = run_workflow(wf, registry(), o);
  EXPECT_TRUE(r.ok());
  EXPECT_EQ(g_probe.max_running.load(), 1);
}

// The error convention: a node throws without its id; the executor names the node and its type
// once, in front of the message, which it keeps as it is.
TEST(Executor, FailureMessageNamesTheNodeAndTypeOnce) {
  TempDir dir;
  const Workflow wf = load(dir, R"(gemflow: 1
nodes:
  f: {type: test.fail, params: {message: "stuck at step 3"}}
  g: {type: test.fail, params: {message: "other.type: kept"}}
)");
  const RunResult r = run_in(dir, wf);
  EXPECT_EQ(r.nodes.at("f").error, "node 'f' (test.fail): stuck at step 3");
  EXPECT_EQ(r.nodes.at("g").error, "node 'g' (test.fail): other.type: kept");
}

// A bad_alloc is reported as out of memory, naming the node and the memory available now.
TEST(Executor, OutOfMemoryNamesTheNodeAndTheMemoryLeft) {
  TempDir dir;
  const Workflow wf = load(dir, "gemflow: 1\nnodes:\n  big: {type: probe.greedy}\n");
  const RunResult r = run_in(dir, wf);
  EXPECT_EQ(r.nodes.at("big").state, NodeState::Failed);
  const std::string& e = r.nodes.at("big").error;
  EXPECT_EQ(e.rfind("node 'big' (probe.greedy): out of memory (std::bad_alloc); ", 0), 0u) << e;
  EXPECT_NE(e.find(" GiB available now"), std::string::npos) << e;
}

TEST(Executor, FailureSkipsDownstreamOnlyAndOtherBranchesFinish) {
  TempDir dir;
  const Workflow wf = load(dir, R"(gemflow: 1
nodes:
  c: {type: test.constant, params: {value: 1}}
  f: {type: test.fail, params: {message: "no convergence after 12 iterations"}}
  after: {type: test.sleep, params: {seconds: 0}}
  after2: {type: test.add}
  other: {type: test.sleep, params: {seconds: 0.05}}
  other2: {type: probe.count}
links:
  - c.value -> f.in
  - f.out -> after.in
  - after.out -> after2.a
  - c.value -> after2.b
  - c.value -> other.in
  - other.out -> other2.in
)");
  RunOptions o;
  o.out_dir = dir / "out";
  o.jobs = 2;
  const RunResult r = run_workflow(wf, registry(), o);
  EXPECT_FALSE(r.ok());
  EXPECT_FALSE(r.cancelled);
  EXPECT_EQ(r.nodes.at("f").state, NodeState::Failed);
  EXPECT_EQ(r.nodes.at("f").error, "node 'f' (test.fail): no convergence after 12 iterations");
  EXPECT_EQ(r.nodes.at("after").state, NodeState::Skipped);
  EXPECT_EQ(r.nodes.at("after2").state, NodeState::Skipped);
  EXPECT_THAT(r.nodes.at("after").error, HasSubstr("upstream node 'f' failed"));
  EXPECT_EQ(r.nodes.at("c").state, NodeState::Done);
  EXPECT_EQ(r.nodes.at("other").state, NodeState::Done);
  EXPECT_EQ(r.nodes.at("other2").state, NodeState::Done);
  EXPECT_EQ(scalar(r, "other2", "out"), 2.0);
}

TEST(Executor, CancelStopsTheRunningNodeAndTheRest) {
  TempDir dir;
  const Workflow wf = load(dir, R"(gemflow: 1
nodes:
  long: {type: test.sleep, params: {seconds: 120}}
  after: {type: probe.count}
  later: {type: test.sleep, params: {seconds: 120}}
links:
  - long.out -> after.in
)");
  std::atomic<bool> cancel{false};
  RunOptions o;
  o.out_dir = dir / "out";
  o.jobs = 1;
  o.cancel = &cancel;
  o.on_event = [&](const RunEvent& e) {
    if (e.kind == RunEvent::Kind::Progress && e.node == "long") cancel = true;
  };
  const RunResult r = run_workflow(wf, registry(), o);
  EXPECT_TRUE(r.cancelled);
  EXPECT_FALSE(r.ok());
  EXPECT_EQ(r.nodes.at("long").state, NodeState::Cancelled);
  EXPECT_EQ(r.nodes.at("after").state, NodeState::Cancelled);
  EXPECT_EQ(r.nodes.at("later").state, NodeState::Cancelled);
  EXPECT_LT(r.nodes.at("long").seconds, 60.0);
  // The provenance record says so.
  const auto j = nlohmann::json::parse(read(r.provenance));
  EXPECT_EQ(j["cancelled"], true);
  EXPECT_EQ(j["nodes"]["long"]["state"], "cancelled");
}

TEST(Executor, ANodeThatStopsWithItsOwnErrorAfterCancelIsCancelled) {
  TempDir dir;
  const Workflow wf = load(dir, R"(gemflow: 1
nodes:
  opt: {type: probe.stubborn}
  after: {type: probe.count}
  after2: {type: probe.count}
links:
  - opt.out -> after.in
  - after.out -> after2.in
)");
  std::atomic<bool> cancel{false};
  Events ev;
  RunOptions o;
  o.out_dir = dir / "out";
  o.cancel = &cancel;
  o.on_event = [&, h = ev.handler()](const RunEvent& e) {
    h(e);
    if (e.kind == RunEvent::Kind::Progress && e.node == "opt") cancel = true;
  };
  const RunResult r = run_workflow(wf, registry(), o);
  EXPECT_TRUE(r.cancelled);
  EXPECT_EQ(r.nodes.at("opt").state, NodeState::Cancelled);
  EXPECT_EQ(r.nodes.at("opt").error, "cancelled");
  EXPECT_EQ(r.nodes.at("after").state, NodeState::Cancelled);  // not "skipped: upstream failed"
  EXPECT_EQ(r.nodes.at("after2").state, NodeState::Cancelled);
  EXPECT_GE(ev.index("opt", NodeState::Cancelled), 0);
  EXPECT_EQ(ev.index("opt", NodeState::Failed), -1);
  const auto j = nlohmann::json::parse(read(r.provenance));
  EXPECT_EQ(j["nodes"]["opt"]["state"], "cancelled");
  EXPECT_EQ(j["nodes"]["opt"]["log"][0],
            "info: stopped after the run was cancelled: node 'opt' (probe.stubborn): optimizer interrupted");
}

TEST(Executor, ProvenanceRecordsCommandLineJobsAndPlugins) {
  TempDir dir;
  const Workflow wf = load(dir, "gemflow: 1\nnodes:\n  c: {type: test.constant}\n");
  Registry reg;
  PluginHost host(reg);
  ASSERT_TRUE(host.load(fs::path(GEMFLOW_TEST_PLUGIN_DIR) / "testnodes" / "libgemflow_testnodes.so").loaded);
  RunOptions o;
  o.out_dir = dir / "out";
  o.jobs = 3;
  o.command_line = {"gemflow", "run", "w.yaml", "-j", "3"};
  o.plugins = &host.records();
  const RunResult r = run_workflow(wf, reg, o);
  ASSERT_TRUE(r.ok()) << all(r.diagnostics);
  const auto j = nlohmann::json::parse(read(r.provenance));
  EXPECT_EQ(j["command_line"], nlohmann::json({"gemflow", "run", "w.yaml", "-j", "3"}));
  EXPECT_EQ(j["jobs"]["requested"], 3);
  EXPECT_EQ(j["jobs"]["used"], 1);  // one node
  ASSERT_EQ(j["plugins"].size(), 1u);
  EXPECT_EQ(j["plugins"][0]["name"], "test");
  EXPECT_EQ(j["plugins"][0]["version"], "1.0.0");
  EXPECT_EQ(j["nodes"]["c"]["plugin_name"], "test");
  EXPECT_EQ(j["nodes"]["c"]["plugin_version"], "1.0.0");
}

// break-test: every log line went into provenance.json (200k lines, 6.5 MB); now the first 500
// and the last 500 of a node, and how many were left out between them.
TEST(Executor, ProvenanceKeepsTheFirstAndLastLogLines) {
  TempDir dir;
  const Workflow wf =
      load(dir, "gemflow: 1\nnodes:\n  p: {type: test.progress_spam, params: {calls: 0, log_lines: 2000}}\n");
  RunOptions o;
  o.out_dir = dir / "out";
  const RunResult r = run_workflow(wf, test::testnodes(), o);
  ASSERT_TRUE(r.ok()) << all(r.diagnostics);
  const auto log = nlohmann::json::parse(read(r.provenance))["nodes"]["p"]["log"];
  ASSERT_EQ(log.size(), 1001u);
  EXPECT_EQ(log[0], "info: line 0");
  EXPECT_EQ(log[499], "info: line 499");
  EXPECT_EQ(log[500], "(1000 lines left out)");
  EXPECT_EQ(log[501], "info: line 1500");
  EXPECT_EQ(log[1000], "info: line 1999");
}

// break-test: a node that finished without setting an output nothing links to was silent (one
// that something links to fails, naming the link); it is a warning in its log now.
TEST(Executor, AnUnsetOutputIsAWarning) {
  TempDir dir;
  const Workflow wf =
      load(dir, "gemflow: 1\nnodes:\n  p: {type: test.progress_spam, params: {calls: 0, set_output: false}}\n");
  RunOptions o;
  o.out_dir = dir / "out";
  std::vector<std::string> warnings;
  o.on_event = [&](const RunEvent& e) {
    if (e.kind == RunEvent::Kind::Log && e.level == LogLevel::Warning) warnings.push_back(e.node + ": " + e.message);
  };
  const RunResult r = run_workflow(wf, test::testnodes(), o);
  ASSERT_TRUE(r.ok()) << all(r.diagnostics);
  EXPECT_EQ(warnings, std::vector<std::string>{"p: output 'out' was not set"});
  const auto log = nlohmann::json::parse(read(r.provenance))["nodes"]["p"]["log"];
  EXPECT_EQ(log, nlohmann::json::array({"warning: output 'out' was not set"}));
  // linked, it is the node's error alone, not also a warning
  const Workflow linked =
      load(dir,
           "gemflow: 1\nnodes:\n  p: {type: test.progress_spam, params: {calls: 0, set_output: false}}\n"
           "  a: {type: test.add}\n  c: {type: test.constant}\nlinks:\n  - p.out -> a.a\n"
           "  - c.value -> a.b\n");
  warnings.clear();
  const RunResult f = run_workflow(linked, test::testnodes(), o);
  EXPECT_EQ(f.nodes.at("p").state, NodeState::Failed);
  EXPECT_THAT(f.nodes.at("p").error, HasSubstr("output 'out' was not set (it feeds a.a)"));
  EXPECT_TRUE(warnings.empty()) << ::testing::PrintToString(warnings);
}

TEST(Executor, CacheReusesUnchangedNodes) {
  TempDir dir;
  std::ofstream(dir / "in.txt") << "one\ntwo\n";
  Workflow wf = load(dir, R"(gemflow: 1
nodes:
  r: {type: test.read_text, params: {path: in.txt}}
  p1: {type: probe.count}
  p2: {type: probe.count}
  q: {type: probe.count}
links:
  - r.size -> p1.in
  - p1.out -> p2.in
)");
  ResultCache cache;
  RunOptions o;
  o.out_dir = dir / "out";
  o.cache = &cache;
  g_probe.executions = 0;
  const RunResult r1 = run_workflow(wf, registry(), o);
  ASSERT_TRUE(r1.ok());
  EXPECT_EQ(g_probe.executions.load(), 3);
  EXPECT_EQ(scalar(r1, "p2", "out"), 10.0);  // 8 bytes + 1 + 1

  const RunResult r2 = run_workflow(wf, registry(), o);
  ASSERT_TRUE(r2.ok());
  EXPECT_EQ(g_probe.executions.load(), 3);  // nothing re-ran
  for (const auto& [id, n] : r2.nodes) {
    EXPECT_EQ(n.state, NodeState::Cached) << id;
    EXPECT_EQ(n.key, r1.nodes.at(id).key) << id;
  }
  EXPECT_EQ(scalar(r2, "p2", "out"), 10.0);

  // A parameter change re-runs that node and what depends on it, nothing else.
  ASSERT_FALSE(apply_override(wf, "p1.salt=5", registry()));
  const RunResult r3 = run_workflow(wf, registry(), o);
  EXPECT_EQ(r3.nodes.at("r").state, NodeState::Cached);
  EXPECT_EQ(r3.nodes.at("p1").state, NodeState::Done);
  EXPECT_EQ(r3.nodes.at("p2").state, NodeState::Done);
  EXPECT_EQ(r3.nodes.at("q").state, NodeState::Cached);
  EXPECT_NE(r3.nodes.at("p2").key, r1.nodes.at("p2").key);
  EXPECT_EQ(g_probe.executions.load(), 5);

  // Changing the content of an input file changes the keys downstream of it.
  std::ofstream(dir / "in.txt") << "one\ntwo\nthree\n";
  const RunResult r4 = run_workflow(wf, registry(), o);
  EXPECT_EQ(r4.nodes.at("r").state, NodeState::Done);
  EXPECT_EQ(r4.nodes.at("p2").state, NodeState::Done);
  EXPECT_EQ(r4.nodes.at("q").state, NodeState::Cached);
  EXPECT_EQ(scalar(r4, "p2", "out"), 16.0);
}

// An optional input path behaves like any input path when given (resolved against the
// workflow's folder, its content in the cache key and the provenance record), and may be left
// empty.
TEST(Executor, AnOptionalPathParamIsAnInputFileWhenGivenAndNothingWhenEmpty) {
  const ParamSpec* spec = registry().find_node("probe.optional_read")->spec.param("path");
  ASSERT_NE(spec, nullptr);
  EXPECT_EQ(spec->kind, ParamKind::InputPath);
  EXPECT_FALSE(spec->required);
  EXPECT_EQ(std::get<std::string>(spec->default_value), "");
  EXPECT_EQ(spec->check(std::string()), std::nullopt);

  TempDir dir;
  const Workflow none = load(dir, "gemflow: 1\nnodes:\n  r: {type: probe.optional_read}\n");
  const RunResult r0 = run_in(dir, none);
  ASSERT_TRUE(r0.ok()) << all(r0.diagnostics);
  EXPECT_EQ(scalar(r0, "r", "size"), -1.0);

  const Workflow wf =
      load(dir, "gemflow: 1\nnodes:\n  r: {type: probe.optional_read, params: {path: in.txt}}\n", "sub/w.yaml");
  std::ofstream(dir / "sub" / "in.txt") << "abc";
  ResultCache cache;
  RunOptions o;
  o.out_dir = dir / "out";
  o.cache = &cache;
  const RunResult r1 = run_workflow(wf, registry(), o);
  ASSERT_TRUE(r1.ok()) << all(r1.diagnostics);
  EXPECT_EQ(scalar(r1, "r", "size"), 3.0);  // sub/in.txt, not ./in.txt
  const auto j = nlohmann::json::parse(read(dir / "out" / "provenance.json"));
  EXPECT_EQ(j["nodes"]["r"]["params"]["path"], (dir / "sub" / "in.txt").string());
  ASSERT_EQ(j["nodes"]["r"]["inputs"].size(), 1u);
  EXPECT_EQ(j["nodes"]["r"]["inputs"][0]["xxh3"], hash_file(dir / "sub" / "in.txt"));

  std::ofstream(dir / "sub" / "in.txt") << "abcde";  // same name, new content: not from the cache
  const RunResult r2 = run_workflow(wf, registry(), o);
  ASSERT_TRUE(r2.ok()) << all(r2.diagnostics);
  EXPECT_EQ(r2.nodes.at("r").state, NodeState::Done);
  EXPECT_NE(r2.nodes.at("r").key, r1.nodes.at("r").key);
  EXPECT_EQ(scalar(r2, "r", "size"), 5.0);
}

TEST(Executor, UntilRunsOnlyTheNodeAndItsAncestors) {
  TempDir dir;
  const Workflow wf = load(dir, R"(gemflow: 1
nodes:
  a: {type: test.constant, params: {value: 1}}
  b: {type: test.constant, params: {value: 2}}
  s: {type: test.add}
  after: {type: probe.count}
  unrelated: {type: probe.count}
links:
  - a.value -> s.a
  - b.value -> s.b
  - s.sum -> after.in
)");
  RunOptions o;
  o.out_dir = dir / "out";
  o.until = "s";
  const RunResult r = run_workflow(wf, registry(), o);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r.nodes.size(), 3u);
  EXPECT_TRUE(r.nodes.count("a") && r.nodes.count("b") && r.nodes.count("s"));
  EXPECT_EQ(scalar(r, "s", "sum"), 3.0);

  o.until = "aftr";
  const RunResult bad = run_workflow(wf, registry(), o);
  ASSERT_EQ(bad.diagnostics.size(), 1u);
  EXPECT_EQ(bad.diagnostics[0].hint, "did you mean 'after'?");
  EXPECT_TRUE(bad.nodes.empty());
}

TEST(Executor, ValidationErrorsRunNothing) {
  TempDir dir;
  auto lr = parse_workflow("gemflow: 1\nnodes:\n  s: {type: test.add}\n  p: {type: probe.count}\n", dir / "w.yaml",
                           registry());
  ASSERT_TRUE(lr.workflow);
  g_probe.executions = 0;
  const RunResult r = run_in(dir, *lr.workflow);
  EXPECT_EQ(r.diagnostics.size(), 2u) << all(r.diagnostics);
  EXPECT_TRUE(r.nodes.empty());
  EXPECT_EQ(g_probe.executions.load(), 0);
  EXPECT_FALSE(fs::exists(dir / "out" / "provenance.json"));
  EXPECT_TRUE(r.provenance.empty());
}

TEST(Executor, AtomicWriteNeverLeavesAPartialFile) {
  TempDir dir;
  fs::create_directories(dir / "out");
  std::ofstream(dir / "out" / "result.txt") << "previous result\n";
  const Workflow wf = load(dir, R"(gemflow: 1
nodes:
  c: {type: test.constant, params: {value: 1.5}}
  bad: {type: test.write_text, params: {path: result.txt, text: partial, fail_midway: true}}
  good: {type: test.write_text, params: {path: sub/good.txt, text: numbers}}
links:
  - c.value -> good.value
)");
  const RunResult r = run_in(dir, wf);
  EXPECT_EQ(r.nodes.at("bad").state, NodeState::Failed);
  EXPECT_THAT(r.nodes.at("bad").error, HasSubstr("failed midway through writing"));
  EXPECT_EQ(read(dir / "out" / "result.txt"), "previous result\n");  // untouched
  EXPECT_EQ(r.nodes.at("good").state, NodeState::Done);
  EXPECT_EQ(read(dir / "out" / "sub" / "good.txt"), "numbers\n1.5\n");
  // No temporary file anywhere.
  std::vector<std::string> files;
  for (const auto& e : fs::recursive_directory_iterator(dir / "out"))
    if (e.is_regular_file()) files.push_back(fs::relative(e.path(), dir / "out").string());
  std::sort(files.begin(), files.end());
  EXPECT_EQ(files, (std::vector<std::string>{".gemflow.lock", "provenance.json", "result.txt", "sub/good.txt"}));
}

TEST(Executor, RefusesToOverwriteAnInputOfTheRunBeforeRunning) {
  TempDir dir;
  std::ofstream(dir / "data.txt") << "precious\n";
  fs::create_directories(dir / "elsewhere");
  // The writer names the input through another path: found before any node runs.
  const Workflow wf = load(dir, R"(gemflow: 1
nodes:
  w: {type: test.write_text, params: {path: ../elsewhere/../data.txt, text: overwritten}}
  r: {type: test.read_text, params: {path: data.txt}}
)");
  RunOptions o;
  o.out_dir = dir / "out";
  o.jobs = 1;
  const RunResult r = run_workflow(wf, registry(), o);
  ASSERT_EQ(r.diagnostics.size(), 1u) << all(r.diagnostics);
  EXPECT_EQ(r.diagnostics[0].str(),
            fmt::format("{}:3:45: error: node 'w', parameter 'path': would overwrite {}: it is an input of this run "
                        "(read by node 'r', parameter 'path') (write to another file name)",
                        (dir / "w.yaml").string(), (dir / "data.txt").string()));
  EXPECT_TRUE(r.nodes.empty());
  EXPECT_FALSE(fs::exists(dir / "out"));
  EXPECT_EQ(read(dir / "data.txt"), "precious\n");

  // Through a symbolic link too.
  fs::create_directories(dir / "out");
  fs::create_symlink(dir / "data.txt", dir / "out" / "link.txt");
  const Workflow wf2 = load(dir, R"(gemflow: 1
nodes:
  r: {type: test.read_text, params: {path: data.txt}}
  w: {type: test.write_text, params: {path: link.txt, text: overwritten}}
)",
                            "w2.yaml");
  const RunResult r2 = run_workflow(wf2, registry(), o);
  ASSERT_EQ(r2.diagnostics.size(), 1u) << all(r2.diagnostics);
  EXPECT_THAT(r2.diagnostics[0].message, HasSubstr("read by node 'r'"));
  EXPECT_EQ(read(dir / "data.txt"), "precious\n");
}

TEST(Executor, TheWorkflowFileIsAnInputOfTheRun) {
  TempDir dir;
  RunOptions o;
  o.out_dir = dir.path();  // outputs beside the workflow file
  // A writer node aimed at the workflow file.
  const std::string text = "gemflow: 1\nnodes:\n  w: {type: test.write_text, params: {path: self.yaml}}\n";
  const Workflow wf = load(dir, text, "self.yaml");
  const RunResult r = run_workflow(wf, registry(), o);
  ASSERT_EQ(r.diagnostics.size(), 1u) << all(r.diagnostics);
  EXPECT_EQ(r.diagnostics[0].message,
            fmt::format("would overwrite {}: it is the workflow file of this run", (dir / "self.yaml").string()));
  EXPECT_TRUE(r.nodes.empty());
  EXPECT_EQ(read(dir / "self.yaml"), text);

  // A workflow file named provenance.json in the output folder: the record would replace it.
  const std::string text2 = "gemflow: 1\nnodes:\n  c: {type: test.constant}\n";
  const Workflow wf2 = load(dir, text2, "provenance.json");
  const RunResult r2 = run_workflow(wf2, registry(), o);
  ASSERT_EQ(r2.diagnostics.size(), 1u) << all(r2.diagnostics);
  EXPECT_EQ(r2.diagnostics[0].str(),
            fmt::format("{0}: error: the run's provenance record {0} would overwrite the workflow file of this run "
                        "(choose another output folder (--out))",
                        (dir / "provenance.json").string()));
  EXPECT_EQ(read(dir / "provenance.json"), text2);

  // Nor may a node write the provenance record, or two nodes one file.
  const Workflow wf3 = load(dir, R"(gemflow: 1
nodes:
  a: {type: test.write_text, params: {path: provenance.json}}
  b: {type: test.write_text, params: {path: x.txt}}
  c: {type: test.write_text, params: {path: ./x.txt}}
)",
                            "w3.yaml");
  const RunResult r3 = run_workflow(wf3, registry(), o);
  ASSERT_EQ(r3.diagnostics.size(), 2u) << all(r3.diagnostics);
  EXPECT_THAT(r3.diagnostics[0].str(), HasSubstr("w3.yaml:3:45: error: node 'a', parameter 'path': would overwrite"));
  EXPECT_THAT(r3.diagnostics[0].message, HasSubstr("the run writes its provenance record there"));
  EXPECT_THAT(r3.diagnostics[1].message, HasSubstr("which node 'b' (parameter 'path') writes too"));
}

TEST(Executor, OutputExtensionIsAValidationError) {
  TempDir dir;
  std::ofstream(dir / "w.yaml") << "gemflow: 1\nnodes:\n  j: {type: probe.write_json, params: {path: w.yaml}}\n";
  const auto lr = load_workflow(dir / "w.yaml", registry());
  EXPECT_FALSE(lr.ok());
  ASSERT_EQ(lr.diagnostics.size(), 1u) << all(lr.diagnostics);
  EXPECT_EQ(lr.diagnostics[0].str(), fmt::format("{}:3:46: error: node 'j', parameter 'path': 'w.yaml' has the "
                                                 "extension '.yaml'; this node writes .json",
                                                 (dir / "w.yaml").string()));
}

TEST(Executor, WriteErrorsNameTheRealFile) {
  TempDir dir;
  const Workflow wf = load(dir, "gemflow: 1\nnodes:\n  j: {type: probe.write_json, params: {fail: true}}\n");
  const RunResult r = run_in(dir, wf);
  EXPECT_EQ(r.nodes.at("j").state, NodeState::Failed);
  EXPECT_EQ(r.nodes.at("j").error, fmt::format("node 'j' (probe.write_json): cannot open {} for writing",
                                               (dir / "out" / "out.json").string()));
  for (const auto& f : fs::directory_iterator(dir / "out"))  // the record and the run's lock only
    EXPECT_TRUE(f.path().filename() == "provenance.json" || f.path().filename() == ".gemflow.lock")
        << "left behind: " << f.path();
}

// Runs `body` as user nobody when this process is root (root may write anywhere).
template <class F>
bool as_unprivileged(F body) {
  const bool root = ::geteuid() == 0;
  if (root && ::seteuid(65534) != 0) return false;
  body();
  if (root && ::seteuid(0) != 0) std::abort();
  return true;
}

TEST(Executor, UnwritableOutputFolderIsFoundBeforeRunning) {
  TempDir dir;
  const Workflow wf = load(dir, R"(gemflow: 1
nodes:
  s: {type: test.sleep, params: {seconds: 0}}
  w: {type: test.write_text, params: {path: sub/x.txt}}
)");
  const auto ro = fs::perms::owner_read | fs::perms::owner_exec | fs::perms::group_read | fs::perms::group_exec |
                  fs::perms::others_read | fs::perms::others_exec;
  fs::create_directories(dir / "ro");
  fs::permissions(dir / "ro", ro);
  RunOptions o;
  o.out_dir = dir / "ro";
  RunResult r;
  if (!as_unprivileged([&] { r = run_workflow(wf, registry(), o); })) GTEST_SKIP() << "cannot drop root";
  ASSERT_EQ(r.diagnostics.size(), 1u) << all(r.diagnostics);
  EXPECT_EQ(r.diagnostics[0].str(),
            fmt::format("error: cannot write to output folder {}: Permission denied", (dir / "ro").string()));
  EXPECT_TRUE(r.nodes.empty());

  // A writable output folder whose sub-folder is not: the node's error names the file and why.
  fs::create_directories(dir / "rw" / "sub");
  fs::permissions(dir / "rw", fs::perms::all);
  fs::permissions(dir / "rw" / "sub", ro);
  o.out_dir = dir / "rw";
  ASSERT_TRUE(as_unprivileged([&] { r = run_workflow(wf, registry(), o); }));
  EXPECT_TRUE(r.diagnostics.empty()) << all(r.diagnostics);
  EXPECT_EQ(r.nodes.at("w").error, fmt::format("node 'w' (test.write_text): cannot write {}: Permission denied",
                                               (dir / "rw" / "sub" / "x.txt").string()));
}

TEST(Executor, ProvenanceRecordsEverythingNeededToReproduce) {
  TempDir dir;
  const Workflow wf = load(dir, R"(gemflow: 1
name: prov
nodes:
  r: {type: test.read_text, params: {path: in.txt}}
  s: {type: test.sleep, params: {seconds: 0}}
  w: {type: test.write_text, params: {path: out.txt, text: hello}}
  d: {type: test.device}
  f: {type: test.fail}
links:
  - r.size -> s.in
  - s.out -> w.value
)",
                           "sub/w.yaml");
  std::ofstream(dir / "sub" / "in.txt") << "abc";
  RunOptions o;
  o.out_dir = dir / "out";
  o.device = "cpu";
  const RunResult r = run_workflow(wf, registry(), o);
  ASSERT_TRUE(r.diagnostics.empty()) << all(r.diagnostics);
  const auto j = nlohmann::json::parse(read(dir / "out" / "provenance.json"));
  EXPECT_EQ(j["gemflow"]["version"], GEMFLOW_SDK_VERSION);
  EXPECT_EQ(j["gemflow"]["fingerprint"], PluginHost::host_fingerprint());
  EXPECT_EQ(j["workflow"]["file"], (dir / "sub" / "w.yaml").string());
  EXPECT_EQ(j["workflow"]["xxh3"], hash_file(dir / "sub" / "w.yaml"));
  EXPECT_EQ(j["workflow"]["name"], "prov");
  EXPECT_TRUE(std::regex_match(j["date"].get<std::string>(), std::regex(R"(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ)")));
  EXPECT_FALSE(j["host"].get<std::string>().empty());
  EXPECT_EQ(j["device_override"], "cpu");
  const auto& jr = j["nodes"]["r"];
  EXPECT_EQ(jr["type"], "test.read_text");
  EXPECT_EQ(jr["version"], 1);
  EXPECT_EQ(jr["state"], "done");
  EXPECT_EQ(jr["params"]["path"], (dir / "sub" / "in.txt").string());  // resolved
  ASSERT_EQ(jr["inputs"].size(), 1u);                                  // param + add_input_file: once
  EXPECT_EQ(jr["inputs"][0]["xxh3"], hash_file(dir / "sub" / "in.txt"));
  EXPECT_EQ(jr["key"], r.nodes.at("r").key);
  EXPECT_EQ(j["nodes"]["s"]["records"]["slept_seconds"], 0.0);
  EXPECT_GE(j["nodes"]["s"]["seconds"].get<double>(), 0.0);
  const auto& jw = j["nodes"]["w"];
  EXPECT_EQ(jw["params"]["path"], (dir / "out" / "out.txt").string());
  ASSERT_EQ(jw["outputs"].size(), 1u);
  EXPECT_EQ(jw["outputs"][0]["file"], (dir / "out" / "out.txt").string());
  EXPECT_EQ(jw["outputs"][0]["xxh3"], hash_file(dir / "out" / "out.txt"));
  EXPECT_EQ(read(dir / "out" / "out.txt"), "hello\n3\n");
  EXPECT_EQ(j["nodes"]["d"]["records"]["device_used"], "cpu");
  EXPECT_EQ(j["nodes"]["f"]["state"], "failed");
  EXPECT_EQ(j["nodes"]["f"]["error"], "node 'f' (test.fail): intentional failure");
  EXPECT_THAT(j["workflow"]["effective"].get<std::string>(), HasSubstr("r: {type: test.read_text"));
}

TEST(Executor, DeviceOverrideReachesDeviceParams) {
  TempDir dir;
  const Workflow wf = load(dir, "gemflow: 1\nnodes:\n  d: {type: test.device, params: {device: auto}}\n");
  RunOptions o;
  o.out_dir = dir / "out";
  o.device = "cpu";
  RunResult r = run_workflow(wf, registry(), o);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(std::get<std::string>(r.nodes.at("d").outputs.at("table").as<Table>()->rows[0][0]), "cpu");
  o.device = "cuda:99";
  r = run_workflow(wf, registry(), o);
  EXPECT_EQ(r.nodes.at("d").state, NodeState::Failed);
  EXPECT_THAT(r.nodes.at("d").error, HasSubstr("cuda:99 requested"));
  // the message names the parameter and where the request came from (QA: it named neither)
  EXPECT_THAT(r.nodes.at("d").error, HasSubstr("parameter 'device' = cuda:99 (from --device)"));
  o.device = "gpu";
  r = run_workflow(wf, registry(), o);
  ASSERT_EQ(r.diagnostics.size(), 1u);
  EXPECT_THAT(r.diagnostics[0].message, HasSubstr("'gpu' is not a device"));
}

TEST(Executor, UnsetLinkedOutputFailsTheProducer) {
  TempDir dir;
  const Workflow wf = load(dir,
                           "gemflow: 1\nnodes:\n  l: {type: probe.lazy}\n  p: {type: probe.count}\n"
                           "links: [l.out -> p.in]\n");
  const RunResult r = run_in(dir, wf);
  EXPECT_EQ(r.nodes.at("l").state, NodeState::Failed);
  EXPECT_EQ(r.nodes.at("l").error, "node 'l' (probe.lazy): output 'out' was not set (it feeds p.in)");
  EXPECT_EQ(r.nodes.at("p").state, NodeState::Skipped);
}

TEST(Executor, HashFileIsXxh3) {
  TempDir dir;
  std::ofstream(dir / "empty");
  EXPECT_EQ(hash_file(dir / "empty"), "2d06800538d394c2");  // XXH3-64 of no bytes (xxHash spec)
  std::ofstream(dir / "a") << "a";
  std::ofstream(dir / "b") << "b";
  EXPECT_NE(hash_file(dir / "a"), hash_file(dir / "b"));
  EXPECT_THROW((void)hash_file(dir / "missing"), InputError);
}

std::string slurp_file(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

// Files of a folder whose name starts with `prefix` (temporary files left behind).
std::vector<std::string> files_starting(const fs::path& dir, const std::string& prefix) {
  std::vector<std::string> r;
  for (const auto& e : fs::directory_iterator(dir))
    if (e.path().filename().string().starts_with(prefix)) r.push_back(e.path().filename().string());
  return r;
}

// A full disk while a node writes (here the file size limit, EFBIG, which needs no root; a full
// disk is ENOSPC at the same place): the node fails with the file and the system's reason, the
// earlier file stays whole and no temporary file is left. (distgeom.report replaced a good
// report.json with an empty file and said done.)
TEST(Executor, AWriteErrorFailsTheNodeAndKeepsTheEarlierFile) {
  TempDir dir;
  fs::create_directories(dir / "out");
  std::ofstream(dir / "out" / "big.txt") << "good\n";
  const Workflow wf = load(dir, "gemflow: 1\nnodes:\n  w: {type: probe.write_stream, params: {bytes: 1000000}}\n");
  struct sigaction ignore {
  }, old_action{};
  ignore.sa_handler = SIG_IGN;
  sigaction(SIGXFSZ, &ignore, &old_action);
  rlimit saved{};
  getrlimit(RLIMIT_FSIZE, &saved);
  const rlimit small{1 << 16, saved.rlim_max};
  setrlimit(RLIMIT_FSIZE, &small);
  const RunResult r = run_in(dir, wf);
  setrlimit(RLIMIT_FSIZE, &saved);
  sigaction(SIGXFSZ, &old_action, nullptr);
  EXPECT_FALSE(r.ok());
  EXPECT_EQ(r.nodes.at("w").state, NodeState::Failed);
  EXPECT_EQ(r.nodes.at("w").error, fmt::format("node 'w' (probe.write_stream): cannot write {}: File too large",
                                               (dir / "out" / "big.txt").string()));
  EXPECT_EQ(slurp_file(dir / "out" / "big.txt"), "good\n");
  EXPECT_TRUE(files_starting(dir / "out", ".big.txt").empty());
}

TEST(Executor, TheStreamWriterWritesTheWholeFile) {
  TempDir dir;
  const Workflow wf = load(dir, "gemflow: 1\nnodes:\n  w: {type: probe.write_stream, params: {bytes: 300000}}\n");
  const RunResult r = run_in(dir, wf);
  ASSERT_TRUE(r.ok()) << r.nodes.at("w").error;
  EXPECT_EQ(slurp_file(dir / "out" / "big.txt"), std::string(300000, 'x'));
}

// The SDK's writer says why a write failed (it said "write failed").
TEST(AtomicFile, AFullDiskIsNamedWithTheFile) {
  if (::access("/dev/full", W_OK) != 0) GTEST_SKIP() << "no /dev/full";
  try {
    write_stream_to(
        "/dev/full", [](std::ostream& out) { out << std::string(200000, 'x'); }, "report.json");
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_STREQ(e.what(), "cannot write report.json: No space left on device");
  }
}

TEST(AtomicFile, AFailingWriterLeavesTheFileAsItWas) {
  TempDir dir;
  std::ofstream(dir / "a.json") << "{\"good\": true}\n";
  EXPECT_THROW(write_file_atomically(dir / "a.json",
                                     [](std::ostream& out) {
                                       out << "{\"half";
                                       throw Error("formatting failed");
                                     }),
               Error);
  EXPECT_EQ(slurp_file(dir / "a.json"), "{\"good\": true}\n");
  EXPECT_EQ(std::distance(fs::directory_iterator(dir.path()), fs::directory_iterator()), 1);
  write_file_atomically(dir / "a.json", "{}\n");
  EXPECT_EQ(slurp_file(dir / "a.json"), "{}\n");
  EXPECT_EQ(std::distance(fs::directory_iterator(dir.path()), fs::directory_iterator()), 1);
}

// A run whose provenance record could not be written is not a success, and says why.
TEST(Executor, AProvenanceRecordThatCannotBeWrittenFailsTheRun) {
  TempDir dir;
  const Workflow wf = load(dir, "gemflow: 1\nnodes:\n  c: {type: test.constant}\n");
  fs::create_directories(dir / "out" / "provenance.json" / "x");  // a folder where the record goes
  const RunResult r = run_in(dir, wf);
  EXPECT_EQ(r.nodes.at("c").state, NodeState::Done);
  EXPECT_TRUE(r.provenance.empty());
  EXPECT_EQ(r.provenance_error,
            fmt::format("cannot write {}: Is a directory", (dir / "out" / "provenance.json").string()));
  EXPECT_FALSE(r.ok());
}

// Two runs into one output folder mixed their files: the second is refused while the first runs.
TEST(Executor, ASecondRunIntoTheSameOutputFolderIsRefused) {
  TempDir dir;
  const Workflow slow = load(dir, "gemflow: 1\nnodes:\n  s: {type: test.sleep, params: {seconds: 30}}\n");
  const Workflow quick = load(dir, "gemflow: 1\nnodes:\n  c: {type: test.constant}\n", "q.yaml");
  std::atomic<bool> cancel{false}, running{false};
  RunOptions o;
  o.out_dir = dir / "out";
  o.cancel = &cancel;
  o.on_event = [&](const RunEvent& e) {
    if (e.kind == RunEvent::Kind::State && e.state == NodeState::Running) running = true;
  };
  RunResult first;
  std::thread t([&] { first = run_workflow(slow, registry(), o); });
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
  while (!running && std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  const RunResult second = run_in(dir, quick);
  cancel = true;
  t.join();
  ASSERT_TRUE(running);
  ASSERT_EQ(second.diagnostics.size(), 1u) << all(second.diagnostics);
  EXPECT_EQ(second.diagnostics[0].str(),
            fmt::format("{}: error: the output folder is in use by another run (pid {}; lock file {}) (wait for it "
                        "to end, or choose another output folder (--out))",
                        (dir / "out").string(), ::getpid(), (dir / "out" / ".gemflow.lock").string()));
  EXPECT_TRUE(second.nodes.empty());
  EXPECT_EQ(first.nodes.at("s").state, NodeState::Cancelled);
  // the first run has ended: the folder is free again
  const RunResult third = run_in(dir, quick);
  EXPECT_TRUE(third.ok()) << all(third.diagnostics);
}

// A node working longer than the threshold without a progress call is flagged in its log (the
// shipped workflows' tests run with GEMFLOW_CHECK_PROGRESS=1); one that reports is not.
TEST(Executor, ProgressCheckFlagsSilentNodes) {
  TempDir dir;
  const Workflow wf = load(dir,
                           "gemflow: 1\nnodes:\n  silent: {type: probe.quiet, params: {ms: 300}}\n"
                           "  talks: {type: probe.quiet, params: {ms: 300, every: 20}}\n");
  Events ev;
  RunOptions o;
  o.out_dir = dir / "out";
  o.on_event = ev.handler();
  o.progress_check_seconds = 0.15;
  const RunResult r = run_workflow(wf, registry(), o);
  ASSERT_TRUE(r.ok()) << all(r.diagnostics);
  std::map<std::string, std::string> warned;
  for (const auto& e : ev.list)
    if (e.kind == RunEvent::Kind::Log && e.message.find("reported no progress for") != std::string::npos)
      warned[e.node] = e.message;
  EXPECT_TRUE(warned.count("silent"));
  EXPECT_FALSE(warned.count("talks")) << warned["talks"];
  o.progress_check_seconds = 0;  // off: nothing said
  Events quiet;
  o.on_event = quiet.handler();
  ASSERT_TRUE(run_workflow(wf, registry(), o).ok());
  for (const auto& e : quiet.list) EXPECT_EQ(e.message.find("reported no progress"), std::string::npos);
}

// ---- Sub-workflows ----

// inner.yaml: x + y and (x + y) + (x + y), with a file read relative to the inner file and a
// file written relative to the output folder.
constexpr const char* kInner = R"(gemflow: 1
name: inner
description: Adds its two inputs.
nodes:
  add: {type: test.add}
  double: {type: test.add}
  read: {type: test.read_text, params: {path: data.txt}}
  write: {type: test.write_text, params: {path: sum.txt, text: inner}}
links:
  - add.sum -> double.a
  - add.sum -> double.b
  - add.sum -> write.value
inputs:
  x: add.a
  y: [add.b]
outputs:
  sum: add.sum
  twice: double.sum
  size: read.size
)";

TEST(SubWorkflow, RunsFlattenedWithPrefixedIdsPathsAndProvenance) {
  TempDir dir;
  fs::create_directories(dir / "lib");
  std::ofstream(dir / "lib" / "inner.yaml") << kInner;
  std::ofstream(dir / "lib" / "data.txt") << "12345";
  const Workflow wf = load(dir, R"(gemflow: 1
nodes:
  a: {type: test.constant, params: {value: 2}}
  b: {type: test.constant, params: {value: 0.5}}
  sub: {type: workflow, params: {path: lib/inner.yaml}}
  after: {type: test.add}
links:
  - a.value -> sub.x
  - b.value -> sub.y
  - sub.twice -> after.a
  - sub.sum -> after.b
)");
  ASSERT_EQ(wf.nodes.size(), 4u);
  ASSERT_TRUE(wf.nodes[2].sub);
  EXPECT_EQ(wf.nodes[2].sub->spec.inputs.size(), 2u);
  EXPECT_EQ(wf.nodes[2].sub->spec.outputs.size(), 3u);
  const RunResult r = run_in(dir, wf);
  ASSERT_TRUE(r.ok()) << all(r.diagnostics);
  EXPECT_EQ(scalar(r, "sub/add", "sum"), 2.5);
  EXPECT_EQ(scalar(r, "sub/double", "sum"), 5.0);
  EXPECT_EQ(scalar(r, "after", "sum"), 7.5);
  EXPECT_EQ(scalar(r, "sub/read", "size"), 5.0);             // read against lib/, the inner file's folder
  EXPECT_TRUE(fs::exists(dir / "out" / "sub" / "sum.txt"));  // written under OUT/sub/
  const auto prov = nlohmann::json::parse(read(dir / "out" / "provenance.json"));
  ASSERT_EQ(prov["workflow"]["included"].size(), 1u);
  EXPECT_EQ(prov["workflow"]["included"][0]["xxh3"], hash_file(dir / "lib" / "inner.yaml"));
}

TEST(SubWorkflow, OverridesAndSavingKeepTheReference) {
  TempDir dir;
  std::ofstream(dir / "inner.yaml") << kInner;
  std::ofstream(dir / "data.txt") << "1";
  Workflow wf = load(dir, R"(gemflow: 1
nodes:
  a: {type: test.constant, params: {value: 2}}
  sub: {type: workflow, params: {path: inner.yaml}}
links:
  - a.value -> sub.x
  - a.value -> sub.y
)");
  const Workflow before = wf;
  ASSERT_FALSE(apply_override(wf, "sub/write.text=changed", registry())) << "override into the inner file";
  EXPECT_EQ(std::get<std::string>(*wf.find("sub")->sub->workflow.find("write")->param("text")), "changed");
  EXPECT_EQ(std::get<std::string>(*before.find("sub")->sub->workflow.find("write")->param("text")), "inner")
      << "copies of the workflow do not see the override";
  const auto bad = apply_override(wf, "sub/nope.text=x", registry());
  ASSERT_TRUE(bad);
  EXPECT_EQ(bad->node, "sub/nope");
  // saving writes the node and its path, not the inner nodes
  const std::string yaml = to_yaml(wf);
  EXPECT_THAT(yaml, HasSubstr("sub: {type: workflow, params: {path: inner.yaml}}"));
  EXPECT_THAT(yaml, ::testing::Not(HasSubstr("sub/")));
  const auto again = parse_workflow(yaml, dir / "w2.yaml", registry());
  EXPECT_TRUE(again.ok()) << all(again.diagnostics);
}

TEST(SubWorkflow, InnerErrorsKeepTheirFileAndNameTheOuterNode) {
  TempDir dir;
  std::ofstream(dir / "inner.yaml") << "gemflow: 1\nnodes:\n  add: {type: test.add, params: {bogus: 1}}\n"
                                       "outputs: {sum: add.sum, nope: add.missing}\n";
  std::ofstream(dir / "w.yaml") << "gemflow: 1\nnodes:\n  sub: {type: workflow, params: {path: inner.yaml}}\n";
  const auto r = load_workflow(dir / "w.yaml", registry());
  EXPECT_FALSE(r.ok());
  const std::string text = all(r.diagnostics);
  EXPECT_THAT(text, HasSubstr("inner.yaml:3:"));
  EXPECT_THAT(text, HasSubstr("node 'sub/add', parameter 'bogus'"));
  EXPECT_THAT(text, HasSubstr("'test.add' has no output port 'missing'"));
  EXPECT_THAT(text, HasSubstr("w.yaml:3:"));  // and the outer node is marked
  EXPECT_THAT(text, HasSubstr("the sub-workflow"));
}

TEST(SubWorkflow, CyclesAndDepthAreRefusedWithTheChainOfFiles) {
  TempDir dir;
  std::ofstream(dir / "a.yaml") << "gemflow: 1\nnodes:\n  b: {type: workflow, params: {path: b.yaml}}\n";
  std::ofstream(dir / "b.yaml") << "gemflow: 1\nnodes:\n  a: {type: workflow, params: {path: a.yaml}}\n";
  std::ofstream(dir / "self.yaml") << "gemflow: 1\nnodes:\n  me: {type: workflow, params: {path: self.yaml}}\n";
  const auto r = load_workflow(dir / "a.yaml", registry());
  EXPECT_FALSE(r.ok());
  EXPECT_THAT(all(r.diagnostics), HasSubstr("sub-workflow cycle: a.yaml → b.yaml → a.yaml"));
  const auto self = load_workflow(dir / "self.yaml", registry());
  EXPECT_FALSE(self.ok());
  EXPECT_THAT(all(self.diagnostics), HasSubstr("sub-workflow cycle: self.yaml → self.yaml"));
  // a chain deeper than the limit (each file includes the next)
  for (int k = 0; k <= kMaxSubWorkflowDepth; ++k)
    std::ofstream(dir / fmt::format("d{}.yaml", k))
        << fmt::format("gemflow: 1\nnodes:\n  n: {{type: workflow, params: {{path: d{}.yaml}}}}\n", k + 1);
  std::ofstream(dir / fmt::format("d{}.yaml", kMaxSubWorkflowDepth + 1))
      << "gemflow: 1\nnodes:\n  c: {type: test.constant}\n";
  const auto deep = load_workflow(dir / "d0.yaml", registry());
  EXPECT_FALSE(deep.ok());
  EXPECT_THAT(all(deep.diagnostics), HasSubstr("nest deeper than"));
}

// A file used by K 'workflow' nodes is loaded K times, and K per level multiply: 120 nodes in
// a.yaml load b.yaml, whose 120 nodes load c.yaml (14 520 loads). One load reads at most
// kMaxSubWorkflowLoads files: the node past it is an error naming the limit, the load ends in
// bounded time, and a workflow within the limit loads whole.
TEST(SubWorkflow, LoadsOfOneWorkflowAreBounded) {
  TempDir dir;
  std::ofstream(dir / "c.yaml") << "gemflow: 1\nnodes:\n  k: {type: test.constant}\n";
  const auto fan = [&](const std::string& name, const std::string& inner, int k) {
    std::ofstream f(dir / name);
    f << "gemflow: 1\nnodes:\n";
    for (int i = 0; i < k; ++i) f << fmt::format("  w{}: {{type: workflow, params: {{path: {}}}}}\n", i, inner);
  };
  fan("b.yaml", "c.yaml", 120);
  fan("a.yaml", "b.yaml", 120);
  const auto big = load_workflow(dir / "a.yaml", registry());
  EXPECT_FALSE(big.ok());
  EXPECT_THAT(all(big.diagnostics), HasSubstr(fmt::format("has read {} sub-workflow files", kMaxSubWorkflowLoads)));
  fan("small.yaml", "b.yaml", 3);  // 3 + 360 loads
  const auto small = load_workflow(dir / "small.yaml", registry());
  EXPECT_TRUE(small.ok()) << all(small.diagnostics);
}

TEST(SubWorkflow, ExposedPortsAreChecked) {
  TempDir dir;
  std::ofstream(dir / "inner.yaml") << R"(gemflow: 1
nodes:
  c: {type: test.constant}
  add: {type: test.add}
links:
  - c.value -> add.a
inputs:
  x: add.a
  y: [add.b, nobody.in]
)";
  const auto r = load_workflow(dir / "inner.yaml", registry());
  const std::string text = all(r.diagnostics);
  EXPECT_THAT(text, HasSubstr("exposed input 'x' feeds add.a, which a link feeds already"));
  EXPECT_THAT(text, HasSubstr("exposed input 'y': no node 'nobody'"));
}

TEST(SubWorkflow, AnExposedRequiredInputCannotRunOnItsOwn) {
  TempDir dir;
  std::ofstream(dir / "data.txt") << "1";
  const Workflow wf = load(dir, kInner, "inner.yaml");
  const RunResult r = run_in(dir, wf);
  EXPECT_FALSE(r.ok());
  EXPECT_THAT(all(r.diagnostics), HasSubstr("only a workflow that includes this one"));
}

TEST(SubWorkflow, TheSameSubWorkflowTwiceSharesCachedWorkAcrossTheBoundary) {
  TempDir dir;
  std::ofstream(dir / "inner.yaml") << "gemflow: 1\nnodes:\n  p: {type: probe.count}\n"
                                       "outputs: {out: p.out}\n";
  const Workflow wf = load(dir, R"(gemflow: 1
nodes:
  one: {type: workflow, params: {path: inner.yaml}}
  two: {type: workflow, params: {path: inner.yaml}}
  sum: {type: test.add}
links:
  - one.out -> sum.a
  - two.out -> sum.b
)");
  ResultCache cache;
  RunOptions o;
  o.out_dir = dir / "out";
  o.cache = &cache;
  g_probe.executions = 0;
  const RunResult r = run_workflow(wf, registry(), o);
  ASSERT_TRUE(r.ok()) << all(r.diagnostics);
  EXPECT_EQ(scalar(r, "sum", "sum"), 2.0);
  const RunResult again = run_workflow(wf, registry(), o);
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(again.nodes.at("one/p").state, NodeState::Cached);
  EXPECT_EQ(again.nodes.at("sum").state, NodeState::Cached);
}

TEST(Executor, BypassedNodePassesItsInputThroughAndIsNeverTakenFromTheCache) {
  TempDir dir;
  auto text = [](const std::string& sum_extra) {
    return R"(gemflow: 1
nodes:
  a: {type: test.constant, params: {value: 2}}
  b: {type: test.constant, params: {value: 0.25}}
  sum: {type: test.add)" +
           sum_extra + R"(}
  twice: {type: test.add}
links:
  - a.value -> sum.a
  - b.value -> sum.b
  - sum.sum -> twice.a
  - sum.sum -> twice.b
)";
  };
  ResultCache cache;
  RunOptions o;
  o.out_dir = dir / "out";
  o.cache = &cache;
  const RunResult plain = run_workflow(load(dir, text("")), registry(), o);
  ASSERT_TRUE(plain.ok()) << all(plain.diagnostics);
  EXPECT_EQ(scalar(plain, "twice", "sum"), 4.5);
  // Bypassed: sum.sum is its first input of the same type (a = 2); neither sum nor twice may
  // come from the cache filled by the plain run.
  const Workflow wf = load(dir, text(", bypass: true"));
  ASSERT_TRUE(wf.find("sum")->bypass);
  const RunResult r = run_workflow(wf, registry(), o);
  ASSERT_TRUE(r.ok()) << all(r.diagnostics);
  EXPECT_EQ(scalar(r, "sum", "sum"), 2.0);
  EXPECT_EQ(scalar(r, "twice", "sum"), 4.0);
  EXPECT_EQ(r.nodes.at("sum").state, NodeState::Done);
  EXPECT_EQ(r.nodes.at("sum").why, "bypassed");
  EXPECT_EQ(r.nodes.at("twice").state, NodeState::Done);
  EXPECT_NE(r.nodes.at("sum").key, plain.nodes.at("sum").key);
}

TEST(Executor, BypassedNodeWithoutAMatchingInputFailsNamingThePort) {
  TempDir dir;
  const Workflow wf = load(dir, R"(gemflow: 1
nodes:
  a: {type: test.constant, params: {value: 2}, bypass: true}
  sum: {type: test.add}
links:
  - a.value -> sum.a
  - a.value -> sum.b
)");
  const RunResult r = run_in(dir, wf);
  EXPECT_FALSE(r.ok());
  EXPECT_EQ(r.nodes.at("a").state, NodeState::Failed);
  EXPECT_THAT(r.nodes.at("a").error, HasSubstr("bypassed but no input of type"));
  EXPECT_THAT(r.nodes.at("a").error, HasSubstr("'value'"));
  EXPECT_EQ(r.nodes.at("sum").state, NodeState::Skipped);
}

}  // namespace
}  // namespace gemflow
