// End-to-end tests of sweeps: `gemflow run --sweep`, the `sweep:` section, shards, resume,
// --retry-failed and `gemflow sweep status|collect|submit`, on small workflows over the testnodes
// plugin (and the shipped spd_solve.yaml for report.json numbers).
#include "sweep_test_support.hpp"

namespace gemflow::sweeptest {
namespace {

// a + b → w (writes out.txt); total = a + b is a scalar result that feeds no link (a key number)
constexpr const char* kWorkflow = R"(gemflow: 1
name: tiny
nodes:
  a: {type: test.constant, params: {value: 1}}
  b: {type: test.constant, params: {value: 2}}
  add: {type: test.add}
  total: {type: test.add}
  w: {type: test.write_text, params: {path: out.txt, text: sum}}
links:
  - a.value -> add.a
  - b.value -> add.b
  - a.value -> total.a
  - b.value -> total.b
  - add.sum -> w.value
)";

class Sweep : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fresh_dir("sweep_cli");
    std::ofstream(dir_ / "w.yaml") << kWorkflow;
  }
  void TearDown() override {
    std::error_code ec;
    if (!HasFailure()) fs::remove_all(dir_, ec);
  }
  Result gemflow(std::vector<std::string> args, Options opt = {}) {
    args.insert(args.begin(), {"--plugin-path", GEMFLOW_TESTNODES_DIR});
    if (opt.cwd.empty()) opt.cwd = dir_;
    return run_gemflow(args, opt);
  }
  fs::path dir_;
};

TEST_F(Sweep, EveryPointHasItsFolderProvenanceAndARowOfTheTable) {
  auto r = gemflow({"run", "w.yaml", "--sweep", "a.value=1..3", "--sweep", "b.value=10,20", "--out", "o"});
  ASSERT_EQ(r.code, 0) << r.out << r.err;
  const auto table = read_table(dir_ / "o");
  ASSERT_EQ(table.size(), 6u);
  std::set<std::string> names;
  for (const auto& [name, p] : table) {
    names.insert(name);
    EXPECT_EQ(p.state, "done") << name;
    const double a = std::stod(p.values.at("a.value")), b = std::stod(p.values.at("b.value"));
    EXPECT_EQ(p.numbers.at("total.sum"), a + b) << name;  // the scalar result, per point
    const fs::path pd = dir_ / "o" / "points" / name;
    EXPECT_EQ(slurp(pd / "out.txt"), "sum\n" + number_text(a + b) + "\n") << name;
    const auto prov = nlohmann::json::parse(slurp(pd / "provenance.json"));
    EXPECT_EQ(prov["nodes"]["a"]["params"]["value"].get<double>(), a);
    EXPECT_EQ(prov["nodes"]["b"]["params"]["value"].get<double>(), b);
    EXPECT_TRUE(fs::exists(pd / "point.json"));
  }
  // stable names from the values, in cartesian order (the last parameter fastest)
  // both parameters are named 'value': node.param tells them apart
  EXPECT_EQ(names, (std::set<std::string>{"a.value=1.0__b.value=10.0", "a.value=1.0__b.value=20.0",
                                          "a.value=2.0__b.value=10.0", "a.value=2.0__b.value=20.0",
                                          "a.value=3.0__b.value=10.0", "a.value=3.0__b.value=20.0"}));
}

TEST_F(Sweep, ZipPairsTheValues) {
  auto r = gemflow({"run", "w.yaml", "--sweep", "a.value=1,2", "--sweep", "b.value=3", "--out", "o", "--zip"});
  // --zip of 2 and 1 values is refused before anything runs
  EXPECT_EQ(r.code, 2) << r.out << r.err;
  EXPECT_CONTAINS(r.err, "'a.value' has 2 values and 'b.value' has 1");
  EXPECT_FALSE(fs::exists(dir_ / "o"));
  r = gemflow({"run", "w.yaml", "--sweep", "a.value=1,2", "--sweep", "b.value=3,4", "--out", "o", "--zip"});
  ASSERT_EQ(r.code, 0) << r.out << r.err;
  EXPECT_TRUE(fs::is_directory(dir_ / "o/points/a.value=1.0__b.value=3.0")) << list(dir_ / "o/points");
  EXPECT_TRUE(fs::is_directory(dir_ / "o/points/a.value=2.0__b.value=4.0"));
  EXPECT_EQ(read_table(dir_ / "o").size(), 2u);
}

TEST_F(Sweep, BadSweepsAreRefusedBeforeAnythingRuns) {
  struct Case {
    std::vector<std::string> args;
    std::string message;
  };
  const std::vector<Case> cases{
      {{"--sweep", "aa.value=1,2"},
       "--sweep aa.value=1,2: error: node 'aa': no such node in the workflow (did you mean 'a'?)"},
      {{"--sweep", "a.vale=1,2"}, "'test.constant' has no parameter 'vale' (did you mean 'value'?)"},
      {{"--sweep", "a.value=5..1"}, "empty range 5..1"},
      {{"--sweep", "w.text=a,,b"}, "has an empty value"},
      {{"--sweep", "a.value=1..101", "--sweep", "b.value=1..100"}, "10100 points, more than the limit of 10000"},
      // a value outside the parameter's limits, named with the limit (test.sleep: seconds in [0, 3600])
      {{"--set", "w.text=x", "--sweep", "add.a=1"}, "has no parameter 'a'"},
  };
  for (const auto& c : cases) {
    std::vector<std::string> args{"run", "w.yaml", "--out", "o"};
    args.insert(args.end(), c.args.begin(), c.args.end());
    auto r = gemflow(args);
    EXPECT_EQ(r.code, 2) << c.message << "\n" << r.err;
    EXPECT_CONTAINS(r.err, c.message);
    EXPECT_CONTAINS(r.out, "nothing ran");
    EXPECT_FALSE(fs::exists(dir_ / "o")) << c.message;
  }
  std::ofstream(dir_ / "s.yaml") << "gemflow: 1\nnodes:\n  s: {type: test.sleep, params: {seconds: 0}}\n";
  auto r = gemflow({"run", "s.yaml", "--out", "o", "--sweep", "s.seconds=0,3601"});
  EXPECT_EQ(r.code, 2);
  EXPECT_CONTAINS(r.err, "node 's', parameter 'seconds': 3601.0 is above the maximum 3600 s");
}

TEST_F(Sweep, FailedPointsDoNotStopTheOthersResumeAndRetryFailed) {
  // r reads a file: y.txt is missing at first, so that point fails
  std::ofstream(dir_ / "r.yaml") << R"(gemflow: 1
name: reader
nodes:
  r: {type: test.read_text, params: {path: x.txt}}
  w: {type: test.write_text, params: {path: copy.txt}}
links:
  - r.size -> w.value
)";
  std::ofstream(dir_ / "x.txt") << "12345";
  std::ofstream(dir_ / "z.txt") << "1";
  const std::vector<std::string> args{"run", "r.yaml", "--out", "o", "--sweep", "r.path=x.txt,y.txt,z.txt"};
  auto r = gemflow(args);
  EXPECT_EQ(r.code, 1) << r.out << r.err;
  auto t = read_table(dir_ / "o");
  ASSERT_EQ(t.size(), 3u);
  std::string x, y, z;
  for (const auto& [name, p] : t) (name.starts_with("path=x.txt") ? x : name.starts_with("path=y.txt") ? y : z) = name;
  EXPECT_EQ(t[x].state, "done");
  EXPECT_EQ(t[y].state, "failed");
  EXPECT_CONTAINS(t[y].error, "y.txt");
  EXPECT_EQ(t[z].state, "done");  // after the failed one
  EXPECT_EQ(slurp(dir_ / "o/points" / x / "copy.txt"), "\n5\n");

  // status reads the folder
  auto st = gemflow({"sweep", "status", "o"});
  EXPECT_EQ(st.code, 0);
  EXPECT_CONTAINS(st.out, "2 done, 1 failed");
  EXPECT_CONTAINS(st.out, "failed       " + y);

  // again: nothing runs (done points skipped, the failed one left failed without --retry-failed)
  const auto stamp = fs::last_write_time(dir_ / "o/points" / x / "provenance.json");
  r = gemflow(args);
  EXPECT_EQ(r.code, 1);
  EXPECT_CONTAINS(r.out, "ran 0, done before 2, failed before 1 (--retry-failed runs them again)");
  EXPECT_EQ(fs::last_write_time(dir_ / "o/points" / x / "provenance.json"), stamp);

  // the file appears: --retry-failed runs only that point
  std::ofstream(dir_ / "y.txt") << "abc";
  r = gemflow({"run", "r.yaml", "--out", "o", "--sweep", "r.path=x.txt,y.txt,z.txt", "--retry-failed"});
  EXPECT_EQ(r.code, 0) << r.out << r.err;
  EXPECT_CONTAINS(r.out, "ran 1, done before 2");
  t = read_table(dir_ / "o");
  EXPECT_EQ(t[y].state, "done");
  EXPECT_EQ(slurp(dir_ / "o/points" / y / "copy.txt"), "\n3\n");
  EXPECT_EQ(fs::last_write_time(dir_ / "o/points" / x / "provenance.json"), stamp);

  // a done point whose output changed is not done any more; an input that changed neither
  std::ofstream(dir_ / "o/points" / x / "copy.txt") << "tampered";
  std::ofstream(dir_ / "z.txt") << "22";
  r = gemflow(args);
  EXPECT_EQ(r.code, 0) << r.out << r.err;
  EXPECT_CONTAINS(r.out, "ran 2, done before 1");
  EXPECT_CONTAINS(r.err, "copy.txt is missing or changed");
  EXPECT_CONTAINS(r.err, "input " + (dir_ / "z.txt").string() + " changed");
  EXPECT_EQ(slurp(dir_ / "o/points" / x / "copy.txt"), "\n5\n");
  EXPECT_EQ(slurp(dir_ / "o/points" / z / "copy.txt"), "\n2\n");
}

TEST_F(Sweep, AKilledPointIsInterruptedAndRunsAgain) {
  std::ofstream(dir_ / "s.yaml") << R"(gemflow: 1
name: sleeper
nodes:
  c: {type: test.constant}
  s: {type: test.sleep, params: {seconds: 20}}
links:
  - c.value -> s.in
)";
  Options opt;
  opt.timeout = 30;
  bool killed = false;
  opt.on_output = [&](pid_t pid, const std::string&, const std::string& err) {
    // killed while the first point sleeps
    if (!killed && err.find("sweep of 'sleeper'") != std::string::npos) {
      std::this_thread::sleep_for(std::chrono::milliseconds(500));
      kill(pid, SIGKILL);
      killed = true;
    }
  };
  auto r = gemflow({"run", "s.yaml", "--out", "o", "--sweep", "c.value=1,2"}, opt);
  ASSERT_TRUE(killed) << r.err;
  EXPECT_EQ(r.code, 128 + SIGKILL);
  auto st = gemflow({"sweep", "status", "o"});
  EXPECT_EQ(st.code, 0);
  EXPECT_CONTAINS(st.out, "1 interrupted, 1 pending");
  EXPECT_CONTAINS(st.out, "interrupted  value=1.0: the run stopped before it finished");
  auto coll = gemflow({"sweep", "collect", "o"});
  EXPECT_EQ(coll.code, 0);
  EXPECT_CONTAINS(coll.out, "1 interrupted, 1 pending");
  EXPECT_EQ(read_table(dir_ / "o")["value=1.0"].state, "interrupted");
  // an interrupted point never finished: a plain re-run runs it
  r = gemflow({"run", "s.yaml", "--out", "o", "--sweep", "c.value=1,2", "--set", "s.seconds=0"});
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_CONTAINS(r.out, "ran 2, done before 0");
  EXPECT_EQ(read_table(dir_ / "o")["value=1.0"].state, "done");
}

TEST_F(Sweep, ShardsAndCollectGiveTheSerialTable) {
  const std::vector<std::string> sweep{"--sweep", "a.value=1..4", "--sweep", "b.value=0.5:1.5:0.5"};
  auto with = [&](std::vector<std::string> head) {
    head.insert(head.end(), sweep.begin(), sweep.end());
    return head;
  };
  ASSERT_EQ(gemflow(with({"run", "w.yaml", "--out", "serial"})).code, 0);
  // three shards: two from --shard, one from a Slurm array's environment
  ASSERT_EQ(gemflow(with({"run", "w.yaml", "--out", "sharded", "--shard", "0/3"})).code, 0);
  Options slurm;
  slurm.env = {"SLURM_ARRAY_TASK_ID=12", "SLURM_ARRAY_TASK_MIN=10", "SLURM_ARRAY_TASK_COUNT=3"};
  auto r = gemflow(with({"run", "w.yaml", "--out", "sharded"}), slurm);
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_CONTAINS(r.err, "shard 2/3 (SLURM_ARRAY_TASK_ID from the environment): 4 of them");
  EXPECT_CONTAINS(r.out, "Whole sweep:   8 done, 4 pending");
  ASSERT_EQ(gemflow(with({"run", "w.yaml", "--out", "sharded", "--shard", "1/3"})).code, 0);
  EXPECT_TRUE(fs::exists(dir_ / "sharded/shards/shard-1-of-3.json"));
  ASSERT_EQ(gemflow({"sweep", "collect", "sharded"}).code, 0);
  const auto a = read_table(dir_ / "serial"), b = read_table(dir_ / "sharded");
  ASSERT_EQ(a.size(), 12u);
  ASSERT_EQ(b.size(), 12u);
  for (const auto& [name, p] : a) {
    ASSERT_TRUE(b.contains(name)) << name;
    EXPECT_EQ(b.at(name).state, "done");
    EXPECT_EQ(b.at(name).values, p.values);
    EXPECT_EQ(b.at(name).numbers, p.numbers);
    EXPECT_EQ(slurp(dir_ / "sharded/points" / name / "out.txt"), slurp(dir_ / "serial/points" / name / "out.txt"));
  }
  // a shard outside the range is refused
  r = gemflow(with({"run", "w.yaml", "--out", "sharded", "--shard", "3/3"}));
  EXPECT_EQ(r.code, 2);
  EXPECT_CONTAINS(r.err, "numbered from 0");
}

TEST_F(Sweep, PointsShareUpstreamWorkInProcessAndThroughTheCache) {
  // s (0.4 s) does not depend on the swept value: computed once for all points
  std::ofstream(dir_ / "u.yaml") << R"(gemflow: 1
name: upstream
nodes:
  s: {type: test.sleep, params: {seconds: 0.4}}
  c: {type: test.constant}
  add: {type: test.add}
links:
  - s.out -> add.a
  - c.value -> add.b
)";
  auto r = gemflow({"run", "u.yaml", "--out", "o", "--sweep", "c.value=1..4"});
  ASSERT_EQ(r.code, 0) << r.err;
  int computed = 0;
  for (const auto& [name, p] : read_table(dir_ / "o")) {
    const auto prov = nlohmann::json::parse(slurp(dir_ / "o/points" / name / "provenance.json"));
    computed += prov["nodes"]["s"]["state"] == "done";
    EXPECT_EQ(prov["nodes"]["add"]["state"], "done");
  }
  EXPECT_EQ(computed, 1);  // without a disk cache (GEMFLOW_NO_CACHE=1): shared in memory

  // two shards in two processes share s through the disk cache
  Options cached;
  cached.env = {"GEMFLOW_NO_CACHE=0"};
  const std::string cache = (dir_ / "cache").string();
  ASSERT_EQ(
      gemflow({"run", "u.yaml", "--out", "p", "--sweep", "c.value=1..4", "--shard", "0/2", "--cache", cache}, cached)
          .code,
      0);
  ASSERT_EQ(
      gemflow({"run", "u.yaml", "--out", "p", "--sweep", "c.value=1..4", "--shard", "1/2", "--cache", cache}, cached)
          .code,
      0);
  computed = 0;
  for (const auto& [name, p] : read_table(dir_ / "p")) {
    const auto prov = nlohmann::json::parse(slurp(dir_ / "p/points" / name / "provenance.json"));
    computed += prov["nodes"]["s"]["state"] == "done";
  }
  EXPECT_EQ(computed, 1);
}

TEST_F(Sweep, TheSweepSectionOfTheWorkflowFile) {
  std::ofstream(dir_ / "sw.yaml") << kWorkflow << "sweep:\n  a.value: [1, 2]\n  b.value: 5..7\n";
  auto v = gemflow({"validate", "sw.yaml"});
  EXPECT_EQ(v.code, 0) << v.out << v.err;
  auto r = gemflow({"run", "sw.yaml", "--out", "o"});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(read_table(dir_ / "o").size(), 6u);
  // --no-sweep: one run, into the folder itself
  r = gemflow({"run", "sw.yaml", "--out", "single", "--no-sweep"});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(slurp(dir_ / "single/out.txt"), "sum\n3\n");
  // --sweep replaces the section
  r = gemflow({"run", "sw.yaml", "--out", "other", "--sweep", "a.value=9"});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(read_table(dir_ / "other").size(), 1u);
  // errors of the section name the file and line, for validate and run alike
  std::ofstream(dir_ / "bad.yaml") << kWorkflow << "sweep:\n  a.value: [1, 2]\n  w.nope: 1..3\n";
  v = gemflow({"validate", "bad.yaml"});
  EXPECT_EQ(v.code, 2);
  EXPECT_CONTAINS(v.err, "bad.yaml:17:3: error: node 'w', parameter 'nope': 'test.write_text' has no parameter 'nope'");
  r = gemflow({"run", "bad.yaml", "--out", "o2"});
  EXPECT_EQ(r.code, 2);
  EXPECT_CONTAINS(r.err, "bad.yaml:17:3");
}

TEST_F(Sweep, SubmitWritesAReadableScriptAndNamesThePackageWithoutSbatch) {
  auto r = gemflow({"sweep", "submit", "w.yaml", "--sweep", "a.value=1..6", "--out", "o", "--partition", "short",
                    "--time", "0:10:00", "--cpus", "2", "--gpus", "1", "--array-max", "3", "--no-cache", "--dry-run"});
  ASSERT_EQ(r.code, 0) << r.err;
  const auto scripts = list(dir_ / "o/slurm");
  fs::path script;
  for (const auto& e : fs::directory_iterator(dir_ / "o/slurm"))
    if (e.path().extension() == ".sbatch") script = e.path();
  ASSERT_FALSE(script.empty()) << scripts;
  const std::string s = slurp(script);
  for (const char* want :
       {"#!/bin/bash\n", "#SBATCH --job-name=gemflow-tiny\n", "#SBATCH --array=0-5%3\n", "#SBATCH --cpus-per-task=2\n",
        "#SBATCH --gres=gpu:1\n", "#SBATCH --time=0:10:00\n", "#SBATCH --partition=short\n",
        "\n  --sweep a.value=1..6 \\\n", "\n  --no-cache \\\n", "\n  -j 2\n", "slurm/logs/%x-%A_%a.log\n"})
    EXPECT_CONTAINS(s, want);
  EXPECT_TRUE(fs::exists(dir_ / "o/sweep-plan.json"));
  // the script runs with bash -n (syntax)
  EXPECT_EQ(std::system(("bash -n '" + script.string() + "'").c_str()), 0) << s;

  Options no_slurm;
  no_slurm.env = {"PATH=/nonexistent"};
  r = gemflow({"sweep", "submit", "w.yaml", "--sweep", "a.value=1..6", "--out", "o"}, no_slurm);
  EXPECT_EQ(r.code, 2);
  EXPECT_CONTAINS(r.err, "sbatch (Slurm) is not on PATH");
  EXPECT_CONTAINS(r.err, "slurm-client");
  EXPECT_CONTAINS(r.err, "slurm-wlm");

  // --retry-failed with nothing failed submits nothing
  r = gemflow({"sweep", "submit", "w.yaml", "--sweep", "a.value=1..6", "--out", "o", "--retry-failed"}, no_slurm);
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_CONTAINS(r.out, "nothing to submit");
}

TEST_F(Sweep, JsonEventsAndTheSummary) {
  auto r = gemflow({"run", "w.yaml", "--out", "o", "--sweep", "a.value=1,2", "--json"});
  ASSERT_EQ(r.code, 0) << r.err;
  std::vector<nlohmann::json> events;
  std::istringstream is(r.out);
  for (std::string line; std::getline(is, line);) events.push_back(nlohmann::json::parse(line));
  ASSERT_EQ(events.size(), 4u) << r.out;
  EXPECT_EQ(events[0]["event"], "sweep_start");
  EXPECT_EQ(events[1]["event"], "point");
  EXPECT_EQ(events[1]["state"], "done");
  EXPECT_EQ(events[1]["numbers"]["total.sum"], 3.0);
  EXPECT_EQ(events[3]["event"], "summary");
  EXPECT_EQ(events[3]["ok"], true);
  EXPECT_EQ(events[3]["points"]["done"], 2);
}

// report.json numbers of a shipped workflow: spd_solve's residuals per point
TEST_F(Sweep, ShippedWorkflowReportNumbers) {
  const fs::path wf = fs::path(GEMFLOW_SOURCE_DIR) / "workflows" / "spd_solve.yaml";
  Options opt;
  opt.cwd = dir_;
  Result r = run_gemflow({"run", wf.string(), "--out", (dir_ / "spd").string(), "--device", "cpu", "--sweep",
                          "solve.precision=fp64,mixed"},
                         opt);
  ASSERT_EQ(r.code, 0) << r.out << r.err;
  const auto t = read_table(dir_ / "spd");
  ASSERT_EQ(t.size(), 2u);
  for (const auto& [name, p] : t) {
    ASSERT_TRUE(p.numbers.contains("relative_residual")) << name << ": " << slurp(dir_ / "spd/sweep.json");
    EXPECT_LT(p.numbers.at("relative_residual"), 1e-14);
  }
}

}  // namespace
}  // namespace gemflow::sweeptest
