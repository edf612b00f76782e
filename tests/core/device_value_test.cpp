// Device-resident values (gemflow/device_copy.hpp) with a fake device copy, so that they run
// without a GPU: the lazy host copy, its transfer statistics, the executor's release of device
// copies, and the per-device concurrency limit (RunOptions::gpu_jobs).
#include <atomic>
#include <chrono>
#include <fstream>
#include <map>
#include <mutex>
#include <thread>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "gemflow/executor.hpp"
#include "gemflow/types.hpp"
#include "test_support.hpp"

namespace fs = std::filesystem;

namespace gemflow {
namespace {

using test::all;
using test::TempDir;

std::atomic<int> g_downloads{0};  // FakeCopy::download calls
std::atomic<int> g_alive{0};      // FakeCopy objects alive ("device memory" held)

// A "device" copy of a matrix kept in host memory, counting downloads and live copies.
class FakeCopy final : public DeviceCopyOf<MatrixF64> {
 public:
  explicit FakeCopy(MatrixF64 m, int device = 0, int failures = 0)
      : data_(std::move(m)), device_(device), failures_(failures) {
    ++g_alive;
  }
  ~FakeCopy() override { --g_alive; }
  Device device() const override { return {Device::Kind::Cuda, device_}; }
  std::size_t bytes() const override { return data_.size() * sizeof(double); }
  std::string summary() const override { return DataType<MatrixF64>::summary(data_); }
  std::shared_ptr<const MatrixF64> download() const override {
    ++g_downloads;
    // slow enough that concurrent readers would all download if the value did not serialise them
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
    if (failures_.load() > 0) {
      --failures_;
      throw Error("cudaMemcpy: an illegal memory access was encountered");
    }
    return std::make_shared<const MatrixF64>(data_);
  }
  const MatrixF64& device_data() const { return data_; }

 private:
  MatrixF64 data_;
  int device_;
  mutable std::atomic<int> failures_;
};

// Another plugin's device copy of the same type.
class OtherCopy final : public DeviceCopyOf<MatrixF64> {
 public:
  Device device() const override { return {Device::Kind::Cuda, 0}; }
  std::size_t bytes() const override { return 0; }
  std::string summary() const override { return "other"; }
  std::shared_ptr<const MatrixF64> download() const override { return std::make_shared<const MatrixF64>(); }
};

MatrixF64 ramp(std::size_t rows, std::size_t cols) {
  MatrixF64 m(rows, cols);
  for (std::size_t k = 0; k < m.size(); ++k) m.data()[k] = 0.5 * static_cast<double>(k);
  return m;
}

struct Reset {
  Reset() {
    g_downloads = 0;
    g_alive = 0;
  }
};

// ---- Value: the lazy host copy ----------------------------------------------------------------

TEST(DeviceValue, HostCopyIsMadeOnFirstReadOnly) {
  Reset reset;
  const Value v = Value::on_device<MatrixF64>(std::make_shared<const FakeCopy>(ramp(3, 4)));
  EXPECT_FALSE(v.empty());
  EXPECT_EQ(v.type(), "Matrix<f64>");
  EXPECT_FALSE(v.has_host_copy());
  ASSERT_NE(v.device_copy(), nullptr);
  EXPECT_EQ(v.device_copy()->device().str(), "cuda:0");
  // the summary comes from the device copy: no download
  EXPECT_EQ(v.summary(), DataType<MatrixF64>::summary(ramp(3, 4)) + " (on cuda:0)");
  EXPECT_EQ(g_downloads.load(), 0);

  TransferLog log;
  const auto m = v.as<MatrixF64>(&log);
  EXPECT_EQ(g_downloads.load(), 1);
  ASSERT_EQ(m->rows(), 3u);
  EXPECT_EQ((*m)(2, 3), 5.5);
  EXPECT_TRUE(v.has_host_copy());
  EXPECT_EQ(v.summary(), DataType<MatrixF64>::summary(ramp(3, 4)));
  const TransferStats t = log.stats();
  EXPECT_EQ(t.to_host_bytes, 12u * sizeof(double));
  EXPECT_EQ(t.to_host_count, 1u);
  EXPECT_GT(t.to_host_seconds, 0.0);
  EXPECT_EQ(t.to_device_count, 0u);

  // copies of the value share the host copy: no second download, the same object
  const Value copy = v;
  EXPECT_EQ(copy.as<MatrixF64>(&log).get(), m.get());
  EXPECT_EQ(g_downloads.load(), 1);
  EXPECT_EQ(log.stats().to_host_count, 1u);
  // the device copy is still there for GPU consumers
  EXPECT_NE(copy.device_copy_as<FakeCopy>(), nullptr);
}

TEST(DeviceValue, ConcurrentReadersDownloadOnce) {
  Reset reset;
  const Value v = Value::on_device<MatrixF64>(std::make_shared<const FakeCopy>(ramp(10, 10)));
  TransferLog log;
  std::vector<const MatrixF64*> seen(8);
  {
    std::vector<std::jthread> readers;
    for (std::size_t k = 0; k < seen.size(); ++k)
      readers.emplace_back([&, k] { seen[k] = v.as<MatrixF64>(&log).get(); });
  }
  EXPECT_EQ(g_downloads.load(), 1);
  EXPECT_EQ(log.stats().to_host_count, 1u);
  for (const auto* p : seen) EXPECT_EQ(p, seen[0]);
}

TEST(DeviceValue, AFailedDownloadThrowsAndIsTriedAgain) {
  Reset reset;
  const Value v = Value::on_device<MatrixF64>(std::make_shared<const FakeCopy>(ramp(2, 2), 1, /*failures=*/1));
  TransferLog log;
  try {
    (void)v.as<MatrixF64>(&log);
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_STREQ(e.what(), "cudaMemcpy: an illegal memory access was encountered");
  }
  EXPECT_FALSE(v.has_host_copy());
  EXPECT_EQ(log.stats().to_host_count, 0u);  // nothing arrived
  EXPECT_EQ((*v.as<MatrixF64>(&log))(1, 1), 1.5);
  EXPECT_EQ(g_downloads.load(), 2);
  EXPECT_EQ(log.stats().to_host_count, 1u);
}

TEST(DeviceValue, ReleaseKeepsTheHostCopyAndFreesTheDeviceCopyWhenUnused) {
  Reset reset;
  Value v = Value::on_device<MatrixF64>(std::make_shared<const FakeCopy>(ramp(2, 3)));
  auto held = v.device_copy_as<FakeCopy>();  // a consumer still reading it
  TransferLog log;
  EXPECT_TRUE(v.release_device_copy(&log));
  EXPECT_EQ(g_downloads.load(), 1);
  EXPECT_EQ(log.stats().to_host_bytes, 6u * sizeof(double));
  EXPECT_EQ(v.device_copy(), nullptr);
  EXPECT_TRUE(v.has_host_copy());
  EXPECT_EQ(g_alive.load(), 1);  // the consumer's reference keeps it
  held.reset();
  EXPECT_EQ(g_alive.load(), 0);
  EXPECT_FALSE(v.release_device_copy(&log));  // once
  EXPECT_EQ((*v.as<MatrixF64>())(1, 2), 2.5);
  EXPECT_EQ(g_downloads.load(), 1);
  // a host value has nothing to release
  EXPECT_FALSE(Value::make(ramp(1, 1)).release_device_copy());
}

TEST(DeviceValue, TypesAreCheckedAsForHostValues) {
  Reset reset;
  const Value v = Value::on_device<MatrixF64>(std::make_shared<const FakeCopy>(ramp(1, 1)));
  EXPECT_THROW((void)v.as<MatrixF32>(), Error);
  EXPECT_EQ(g_downloads.load(), 0);
  EXPECT_EQ(v.device_copy_as<OtherCopy>(), nullptr);  // another plugin's class: read the host copy
  EXPECT_THROW((void)Value::on_device<MatrixF64>(nullptr), Error);
  // a producer that has the host copy already hands it over: never downloaded
  const Value both = Value::on_device<MatrixF64>(std::make_shared<const FakeCopy>(ramp(1, 2)),
                                                 std::make_shared<const MatrixF64>(ramp(1, 2)));
  EXPECT_TRUE(both.has_host_copy());
  EXPECT_EQ((*both.as<MatrixF64>())(0, 1), 0.5);
  EXPECT_EQ(g_downloads.load(), 0);
}

// ---- the executor: transfers in provenance, release of device copies -------------------------

// Uploads a ramp to the fake device and outputs it device-resident.
class Upload final : public Node {
 public:
  static NodeInfo info() { return {.id = "fake.upload", .title = "Upload", .category = "Test"}; }
  Output<MatrixF64> out{this, "out", "rows×cols ramp, on the device"};
  Param<int> rows{this, "rows", 4, {.min = 1}};
  Param<int> cols{this, "cols", 5, {.min = 1}};
  DeviceParam device{this, "cuda:0"};
  void execute(NodeContext& ctx) override {
    MatrixF64 m = ramp(static_cast<std::size_t>(*rows), static_cast<std::size_t>(*cols));
    ctx.record_transfer(Transfer::ToDevice, m.size() * sizeof(double), 0.001);
    out.set_device(std::make_shared<const FakeCopy>(std::move(m)));
  }
};

// A GPU consumer: reads the device copy when there is one (no download), else the host copy.
class GpuScale final : public Node {
 public:
  static NodeInfo info() { return {.id = "fake.gpu_scale", .title = "Scale on the GPU", .category = "Test"}; }
  Input<MatrixF64> in{this, "in", "Matrix"};
  Output<MatrixF64> out{this, "out", "2 · in, on the device"};
  Output<MatrixF64> used{this, "used_device", "1 when the input was read on the device"};
  DeviceParam device{this, "cuda:0"};
  void execute(NodeContext&) override {
    const auto d = in.device<FakeCopy>();
    MatrixF64 m = d ? d->device_data() : *in;
    for (double& x : m.span()) x *= 2;
    out.set_device(std::make_shared<const FakeCopy>(std::move(m)));
    used.set(MatrixF64(1, 1, d ? 1.0 : 0.0));
  }
};

const Registry& registry() {
  static const Registry reg = [] {
    Registry r = test::testnodes();
    r.add_node<Upload>("device_value_test");
    r.add_node<GpuScale>("device_value_test");
    return r;
  }();
  return reg;
}

Workflow load(const TempDir& dir, const std::string& text) {
  const fs::path file = dir / "w.yaml";
  std::ofstream(file) << text;
  auto r = load_workflow(file, registry());
  EXPECT_TRUE(r.ok()) << all(r.diagnostics);
  return r.workflow ? *r.workflow : Workflow{};
}

nlohmann::json provenance(const RunResult& r) {
  std::ifstream in(r.provenance);
  return nlohmann::json::parse(in);
}

TEST(DeviceValueRun, ChainedGpuNodesSkipTheHostAndCpuConsumersDownloadOnce) {
  Reset reset;
  TempDir dir;
  // up → gpu (device copy, no download); up → add (a CPU node: reads the host copy); two inputs of
  // `add` read the same value: one download
  const Workflow wf = load(dir, R"(gemflow: 1
nodes:
  up: {type: fake.upload, params: {rows: 3, cols: 7}}
  gpu: {type: fake.gpu_scale}
  add: {type: test.add}
links:
  - up.out -> gpu.in
  - up.out -> add.a
  - up.out -> add.b
)");
  RunOptions o;
  o.out_dir = dir / "out";
  o.jobs = 1;  // gpu, then add: the order of the downloads is known
  const RunResult r = run_workflow(wf, registry(), o);
  ASSERT_TRUE(r.ok()) << all(r.diagnostics) << r.nodes.at("gpu").error << r.nodes.at("add").error;
  EXPECT_EQ((*r.nodes.at("gpu").outputs.at("used_device").as<MatrixF64>())(0, 0), 1.0);
  EXPECT_EQ((*r.nodes.at("add").outputs.at("sum").as<MatrixF64>())(2, 6), 2 * 10.0);
  const auto& gpu_out = r.nodes.at("gpu").outputs.at("out");
  EXPECT_EQ((*gpu_out.as<MatrixF64>())(2, 6), 2 * 10.0);

  const auto j = provenance(r);
  const auto& nodes = j.at("nodes");
  const std::uint64_t bytes = 21 * sizeof(double);
  EXPECT_EQ(nodes.at("up").at("transfers").at("to_device").at("bytes"), bytes);
  EXPECT_EQ(nodes.at("up").at("transfers").at("to_device").at("count"), 1);
  EXPECT_EQ(nodes.at("up").at("transfers").at("to_host").at("count"), 0);  // `add` downloaded it
  EXPECT_EQ(nodes.at("add").at("transfers").at("to_host").at("bytes"), bytes);
  EXPECT_EQ(nodes.at("add").at("transfers").at("to_host").at("count"), 1);
  // gpu's result was consumed by nobody: its host copy was made when it finished (its transfer;
  // the same bytes once: gpu read its input on the device)
  EXPECT_EQ(nodes.at("gpu").at("transfers").at("to_host").at("bytes"), bytes);
  EXPECT_EQ(g_downloads.load(), 2);
  EXPECT_EQ(j.at("jobs").at("per_gpu"), 1);
}

TEST(DeviceValueRun, DeviceCopiesAreFreedOnceTheirConsumersFinished) {
  Reset reset;
  TempDir dir;
  const Workflow wf = load(dir, R"(gemflow: 1
nodes:
  up: {type: fake.upload}
  g1: {type: fake.gpu_scale}
  g2: {type: fake.gpu_scale}
links:
  - up.out -> g1.in
  - g1.out -> g2.in
)");
  RunOptions o;
  o.out_dir = dir / "out";
  const RunResult r = run_workflow(wf, registry(), o);
  ASSERT_TRUE(r.ok()) << r.nodes.at("g1").error << r.nodes.at("g2").error;
  EXPECT_EQ(g_alive.load(), 0);  // no device memory left held by the results
  for (const char* id : {"up", "g1", "g2"}) {
    const Value& v = r.nodes.at(id).outputs.at("out");
    EXPECT_EQ(v.device_copy(), nullptr) << id;
    EXPECT_TRUE(v.has_host_copy()) << id;
  }
  EXPECT_EQ((*r.nodes.at("g2").outputs.at("out").as<MatrixF64>())(3, 4), 4 * 9.5);
  EXPECT_EQ((*r.nodes.at("g2").outputs.at("used_device").as<MatrixF64>())(0, 0), 1.0);
  // each intermediate was downloaded once, when it was no longer needed on the device
  const auto nodes = provenance(r).at("nodes");
  for (const char* id : {"up", "g1", "g2"}) EXPECT_EQ(nodes.at(id).at("transfers").at("to_host").at("count"), 1) << id;
}

TEST(DeviceValueRun, AValueWhoseConsumerFailedIsStillDownloadedAtTheEnd) {
  Reset reset;
  TempDir dir;
  const Workflow wf = load(dir, R"(gemflow: 1
nodes:
  up: {type: fake.upload}
  bad: {type: test.fail, params: {message: boom}}
  gpu: {type: fake.gpu_scale}
links:
  - up.out -> bad.in
  - bad.out -> gpu.in
)");
  RunOptions o;
  o.out_dir = dir / "out";
  const RunResult r = run_workflow(wf, registry(), o);
  EXPECT_EQ(r.nodes.at("bad").state, NodeState::Failed);
  EXPECT_EQ(r.nodes.at("gpu").state, NodeState::Skipped);
  EXPECT_EQ(g_alive.load(), 0);
  EXPECT_TRUE(r.nodes.at("up").outputs.at("out").has_host_copy());
}

// ---- the per-device limit ---------------------------------------------------------------------

// Counts how many probes run at once, in all and per requested device.
struct DeviceProbeStats {
  std::mutex m;
  int running = 0, max_running = 0;
  std::map<std::string, int> on, max_on;
  void reset() {
    std::lock_guard lock(m);
    running = max_running = 0;
    on.clear();
    max_on.clear();
  }
};
DeviceProbeStats g_dev;

class DeviceProbe final : public Node {
 public:
  static NodeInfo info() { return {.id = "probe.device", .title = "Device probe", .category = "Test"}; }
  Input<MatrixF64> in{this, "in", "Ignored", PortUse::Optional};
  Output<MatrixF64> out{this, "out", "1×1 zero"};
  DeviceParam device{this, "cuda:0"};
  Param<int> rendezvous{this, "rendezvous", 0, {.min = 0, .doc = "Wait until this many probes run at once"}};
  Param<int> salt{this, "salt", 0, {.doc = "Changes the key only"}};
  void execute(NodeContext& ctx) override {
    // the device as scheduled (the node does not resolve it: there is no GPU in the tests)
    const std::string dev = ctx.device_override().empty() ? device.requested() : ctx.device_override();
    {
      std::lock_guard lock(g_dev.m);
      g_dev.max_running = std::max(g_dev.max_running, ++g_dev.running);
      g_dev.max_on[dev] = std::max(g_dev.max_on[dev], ++g_dev.on[dev]);
    }
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
    bool met = *rendezvous == 0;
    while (!met) {
      {
        std::lock_guard lock(g_dev.m);
        met = g_dev.max_running >= *rendezvous;
      }
      if (!met && std::chrono::steady_clock::now() > deadline) break;
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    if (*rendezvous == 0) std::this_thread::sleep_for(std::chrono::milliseconds(5));  // a chance to overlap
    {
      std::lock_guard lock(g_dev.m);
      --g_dev.running;
      --g_dev.on[dev];
    }
    if (!met) throw Error("the other probes never ran at the same time");
    out.set(MatrixF64(1, 1, 0.0));
  }
};

const Registry& probe_registry() {
  static const Registry reg = [] {
    Registry r = registry();
    r.add_node<DeviceProbe>("device_value_test");
    return r;
  }();
  return reg;
}

RunResult run_probes(const TempDir& dir, const std::string& text, int gpu_jobs, const std::string& device = "") {
  const fs::path file = dir / "p.yaml";
  std::ofstream(file) << text;
  auto loaded = load_workflow(file, probe_registry());
  EXPECT_TRUE(loaded.ok()) << all(loaded.diagnostics);
  g_dev.reset();
  RunOptions o;
  o.out_dir = dir / "out";
  o.jobs = 8;
  o.gpu_jobs = gpu_jobs;
  o.device = device;
  return run_workflow(*loaded.workflow, probe_registry(), o);
}

std::string errors(const RunResult& r) {
  std::string s = all(r.diagnostics);
  for (const auto& [id, n] : r.nodes)
    if (!n.error.empty()) s += id + ": " + n.error + "\n";
  return s;
}

const char* kSixOnCuda0 = R"(gemflow: 1
nodes:
  a: {type: probe.device, params: {salt: 1}}
  b: {type: probe.device, params: {salt: 2}}
  c: {type: probe.device, params: {salt: 3}}
  d: {type: probe.device, params: {salt: 4}}
  e: {type: probe.device, params: {salt: 5}}
  f: {type: probe.device, params: {salt: 6}}
)";

TEST(GpuJobs, OneNodeAtATimePerDeviceByDefault) {
  TempDir dir;
  RunOptions defaults;
  EXPECT_EQ(defaults.gpu_jobs, 1);
  const RunResult r = run_probes(dir, kSixOnCuda0, 1);
  ASSERT_TRUE(r.ok()) << errors(r);
  EXPECT_EQ(g_dev.max_on.at("cuda:0"), 1);
}

TEST(GpuJobs, TheLimitIsTheMostThatRunAtOnce) {
  TempDir dir;
  // rendezvous 2: two probes must meet (proves the limit lets two run), and never three
  std::string text = kSixOnCuda0;
  for (std::size_t p = text.find("salt"); p != std::string::npos; p = text.find("salt", p + 20))
    text.insert(p, "rendezvous: 2, ");
  const RunResult r = run_probes(dir, text, 2);
  ASSERT_TRUE(r.ok()) << errors(r);
  EXPECT_EQ(g_dev.max_on.at("cuda:0"), 2);
}

TEST(GpuJobs, ZeroMeansNoLimit) {
  TempDir dir;
  const RunResult r = run_probes(dir, R"(gemflow: 1
nodes:
  a: {type: probe.device, params: {rendezvous: 3, salt: 1}}
  b: {type: probe.device, params: {rendezvous: 3, salt: 2}}
  c: {type: probe.device, params: {rendezvous: 3, salt: 3}}
)",
                                 0);
  ASSERT_TRUE(r.ok()) << errors(r);
  EXPECT_EQ(g_dev.max_on.at("cuda:0"), 3);
}

TEST(GpuJobs, OtherDevicesAndCpuNodesAreNotHeldBack) {
  TempDir dir;
  // one node per device and two CPU nodes all meet, under a limit of 1 per device
  const RunResult r = run_probes(dir, R"(gemflow: 1
nodes:
  g0: {type: probe.device, params: {device: "cuda:0", rendezvous: 4}}
  g1: {type: probe.device, params: {device: "cuda:1", rendezvous: 4}}
  c1: {type: probe.device, params: {device: cpu, rendezvous: 4, salt: 1}}
  c2: {type: probe.device, params: {device: cpu, rendezvous: 4, salt: 2}}
  later0: {type: probe.device, params: {device: "cuda:0"}}
  later1: {type: probe.device, params: {device: "cuda:1"}}
)",
                                 1);
  ASSERT_TRUE(r.ok()) << errors(r);
  EXPECT_EQ(g_dev.max_on.at("cuda:0"), 1);
  EXPECT_EQ(g_dev.max_on.at("cuda:1"), 1);
  EXPECT_EQ(g_dev.max_on.at("cpu"), 2);
}

TEST(GpuJobs, TheRunsDeviceOverrideDecides) {
  TempDir dir;
  // --device cuda:0 puts the CPU-declared nodes on cuda:0 too: one at a time
  const RunResult r = run_probes(dir, R"(gemflow: 1
nodes:
  a: {type: probe.device, params: {device: cpu, salt: 1}}
  b: {type: probe.device, params: {device: cpu, salt: 2}}
  c: {type: probe.device, params: {device: cpu, salt: 3}}
)",
                                 1, "cuda:0");
  // --device cuda:0 without a GPU is refused before running (the CLI's check); the executor only
  // warns, so the probes ran
  EXPECT_EQ(g_dev.max_on.at("cuda:0"), 1) << errors(r);
}

TEST(GpuJobs, WaitingNodesAreCancelledWithTheRun) {
  TempDir dir;
  std::atomic<bool> cancel{false};
  const fs::path file = dir / "c.yaml";
  std::ofstream(file) << R"(gemflow: 1
nodes:
  a: {type: probe.device, params: {salt: 1}}
  b: {type: probe.device, params: {salt: 2}}
  c: {type: probe.device, params: {salt: 3}}
  d: {type: probe.device, params: {salt: 4}}
)";
  auto loaded = load_workflow(file, probe_registry());
  ASSERT_TRUE(loaded.ok());
  g_dev.reset();
  RunOptions o;
  o.out_dir = dir / "out";
  o.jobs = 4;
  o.cancel = &cancel;
  o.on_event = [&](const RunEvent& e) {  // cancel as soon as the first node finished
    if (e.kind == RunEvent::Kind::State && e.state == NodeState::Done) cancel = true;
  };
  const RunResult r = run_workflow(*loaded.workflow, probe_registry(), o);  // must return
  EXPECT_TRUE(r.cancelled);
  int cancelled = 0;
  for (const auto& [id, n] : r.nodes) {
    EXPECT_TRUE(n.state == NodeState::Done || n.state == NodeState::Cancelled) << id << to_string(n.state);
    cancelled += n.state == NodeState::Cancelled;
  }
  EXPECT_GE(cancelled, 1);
}

}  // namespace
}  // namespace gemflow
