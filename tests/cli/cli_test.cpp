// End-to-end tests of the `gemflow` command. Each test writes a small workflow over the testnodes
// plugin into a fresh folder, runs the built executable as a subprocess (stdout and stderr
// captured, optional signals) and checks the exit code, the messages and the files written.
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iterator>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "gemflow/device.hpp"

extern char** environ;

namespace {
namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

struct Result {
  int code = -1;  ///< exit status, or 128 + signal
  std::string out, err;
  double seconds = 0.0;  ///< wall time of the child
};

struct Options {
  fs::path cwd;
  double timeout = 60.0;
  bool stderr_tty = false;  ///< stderr on a pseudo-terminal (progress bar mode)
  /// RLIMIT_AS of the child (`ulimit -v`) in bytes, 0: inherited; with it, the BLAS thread
  /// variables (OPENBLAS_NUM_THREADS, GOTO_NUM_THREADS, OMP_NUM_THREADS) are left out
  std::size_t address_limit = 0;
  /// Extra environment entries "NAME=value" (replacing inherited ones).
  std::vector<std::string> env;
  /// Called whenever new output arrived; may signal the child. Return nothing.
  std::function<void(pid_t, const std::string& out, const std::string& err)> on_output;
};

/// Runs `gemflow args...` with stdout/stderr captured (posix_spawn + pipes + poll).
Result run_gemflow(const std::vector<std::string>& args, const Options& opt = {}) {
  int out_pipe[2], err_pipe[2];
  if (pipe2(out_pipe, O_CLOEXEC) != 0) throw std::runtime_error("pipe");
  if (opt.stderr_tty) {
    // Master side read like a pipe; the child's stderr is the slave.
    const int master = posix_openpt(O_RDWR | O_NOCTTY | O_CLOEXEC);
    if (master < 0 || grantpt(master) != 0 || unlockpt(master) != 0) throw std::runtime_error("posix_openpt");
    const int slave = open(ptsname(master), O_RDWR | O_NOCTTY | O_CLOEXEC);
    if (slave < 0) throw std::runtime_error("pty slave");
    err_pipe[0] = master;
    err_pipe[1] = slave;
  } else if (pipe2(err_pipe, O_CLOEXEC) != 0) {
    throw std::runtime_error("pipe");
  }
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_adddup2(&fa, out_pipe[1], 1);
  posix_spawn_file_actions_adddup2(&fa, err_pipe[1], 2);
  if (!opt.cwd.empty()) posix_spawn_file_actions_addchdir_np(&fa, opt.cwd.c_str());

  std::vector<std::string> argv_s{GEMFLOW_EXE};
  argv_s.insert(argv_s.end(), args.begin(), args.end());
  std::vector<char*> argv;
  for (auto& a : argv_s) argv.push_back(a.data());
  argv.push_back(nullptr);
  // Hermetic environment: no user plugin folders, no colours.
  std::vector<std::string> env_s;
  for (char** e = environ; *e; ++e) {
    std::string v = *e;
    if (v.starts_with("GEMFLOW_PLUGIN_PATH=") || v.starts_with("NO_COLOR=") || v.starts_with("TERM=") ||
        v.starts_with("XDG_CACHE_HOME=") || v.starts_with("GEMFLOW_NO_CACHE=") || v.starts_with("GEMFLOW_CACHE_DIR="))
      continue;
    if (opt.address_limit && (v.starts_with("OPENBLAS_NUM_THREADS=") || v.starts_with("GOTO_NUM_THREADS=") ||
                              v.starts_with("OMP_NUM_THREADS=")))
      continue;
    env_s.push_back(v);
  }
  env_s.push_back("NO_COLOR=1");
  if (opt.stderr_tty) env_s.push_back("TERM=xterm");
  // the plugin probe's memory of failed plugins: this test process's own, never the user's
  env_s.push_back("XDG_CACHE_HOME=" +
                  (fs::temp_directory_path() / ("gemflow_cli_test_cache_" + std::to_string(getpid()))).string());
  // every run computes unless a test asks for the result cache (GEMFLOW_NO_CACHE=0 in opt.env)
  env_s.push_back("GEMFLOW_NO_CACHE=1");
  for (const auto& e : opt.env) {
    const std::string key = e.substr(0, e.find('=') + 1);
    std::erase_if(env_s, [&](const std::string& v) { return v.starts_with(key); });
    env_s.push_back(e);
  }
  std::vector<char*> envp;
  for (auto& e : env_s) envp.push_back(e.data());
  envp.push_back(nullptr);

  pid_t pid = 0;
  const auto start = Clock::now();
  rlimit saved{};
  if (opt.address_limit) {  // the child inherits it; this process gets its own back at once
    getrlimit(RLIMIT_AS, &saved);
    const rlimit lim{static_cast<rlim_t>(opt.address_limit), saved.rlim_max};
    setrlimit(RLIMIT_AS, &lim);
  }
  const int rc = posix_spawn(&pid, GEMFLOW_EXE, &fa, nullptr, argv.data(), envp.data());
  if (opt.address_limit) setrlimit(RLIMIT_AS, &saved);
  posix_spawn_file_actions_destroy(&fa);
  close(out_pipe[1]);
  close(err_pipe[1]);
  if (rc != 0) throw std::runtime_error(std::string("posix_spawn: ") + std::strerror(rc));

  Result r;
  pollfd fds[2] = {{out_pipe[0], POLLIN, 0}, {err_pipe[0], POLLIN, 0}};
  int open_fds = 2;
  bool killed = false;
  while (open_fds > 0) {
    const double elapsed = std::chrono::duration<double>(Clock::now() - start).count();
    if (elapsed > opt.timeout && !killed) {
      kill(pid, SIGKILL);
      killed = true;
    }
    if (poll(fds, 2, 50) < 0 && errno != EINTR) break;
    bool got = false;
    for (int i = 0; i < 2; ++i) {
      if (fds[i].fd < 0 || !(fds[i].revents & (POLLIN | POLLHUP | POLLERR))) continue;
      char buf[4096];
      const ssize_t n = read(fds[i].fd, buf, sizeof buf);
      if (n > 0) {
        (i == 0 ? r.out : r.err).append(buf, static_cast<std::size_t>(n));
        got = true;
      } else {
        close(fds[i].fd);
        fds[i].fd = -1;
        --open_fds;
      }
    }
    if (opt.on_output && (got || open_fds > 0)) opt.on_output(pid, r.out, r.err);
  }
  int status = 0;
  waitpid(pid, &status, 0);
  r.seconds = std::chrono::duration<double>(Clock::now() - start).count();
  r.code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  return r;
}

std::string slurp(const fs::path& p) {
  std::ifstream f(p, std::ios::binary);
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

std::vector<nlohmann::json> json_lines(const std::string& out) {
  std::vector<nlohmann::json> v;
  std::istringstream is(out);
  for (std::string line; std::getline(is, line);) v.push_back(nlohmann::json::parse(line));  // throws if not JSON
  return v;
}

/// Options whose callback sends `sig` once node 's' shows its first progress on stderr
/// (plain mode: "s: 0%"); `sent` and `at` say whether and when.
/// Sends `sig` once the --json output has a progress event of node s.
Options signal_on_json_progress(int sig, bool& sent, Clock::time_point& at, double timeout) {
  Options opt;
  opt.timeout = timeout;
  opt.on_output = [sig, &sent, &at](pid_t pid, const std::string& out, const std::string&) {
    if (!sent && out.find("\"event\":\"progress\"") != std::string::npos &&
        out.find("\"node\":\"s\"") != std::string::npos) {
      kill(pid, sig);
      at = Clock::now();
      sent = true;
    }
  };
  return opt;
}

Options signal_when_s_starts(int sig, bool& sent, Clock::time_point& at, double timeout) {
  Options opt;
  opt.timeout = timeout;
  opt.on_output = [sig, &sent, &at](pid_t pid, const std::string&, const std::string& err) {
    if (!sent && err.find("s: 0%") != std::string::npos) {
      kill(pid, sig);
      at = Clock::now();
      sent = true;
    }
  };
  return opt;
}

class Cli : public ::testing::Test {
 protected:
  void SetUp() override {
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    dir_ = fs::temp_directory_path() / ("gemflow_cli_" + std::string(info->name()) + "_" + std::to_string(getpid()));
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override {
    if (!HasFailure()) fs::remove_all(dir_);
  }
  fs::path write(const std::string& name, const std::string& text) {
    const fs::path p = dir_ / name;
    std::ofstream(p, std::ios::binary) << text;
    return p;
  }
  /// `gemflow ARGS... --plugin-path <testnodes>`
  Result gemflow(std::vector<std::string> args, Options opt = {}) {
    args.push_back("--plugin-path");
    args.push_back(GEMFLOW_TESTNODES_DIR);
    if (opt.cwd.empty()) opt.cwd = dir_;
    if (std::none_of(opt.env.begin(), opt.env.end(),
                     [](const std::string& e) { return e.starts_with("XDG_CACHE_HOME="); }))
      opt.env.push_back("XDG_CACHE_HOME=" + (dir_ / "xdg-cache").string());
    return run_gemflow(args, opt);
  }
  fs::path dir_;
};

// a=2, b=3 → add → write "sum\n5\n" to result.txt
const char* kSum = R"(gemflow: 1
name: sum
nodes:
  a: {type: test.constant, params: {value: 2}}
  b: {type: test.constant, params: {value: 3}}
  add: {type: test.add}
  write: {type: test.write_text, params: {path: result.txt, text: sum}}
links:
  - a.value -> add.a
  - b.value -> add.b
  - add.sum -> write.value
)";

#define EXPECT_CONTAINS(haystack, needle) \
  EXPECT_NE((haystack).find(needle), std::string::npos) << "expected to find: " << (needle) << "\nin:\n" << (haystack)

// ---- basics ------------------------------------------------------------------------------

TEST_F(Cli, VersionAndHelp) {
  auto v = run_gemflow({"--version"});
  EXPECT_EQ(v.code, 0) << v.err;
  EXPECT_CONTAINS(v.out, "gemflow 0.");
  EXPECT_CONTAINS(v.out, "sdk=");
  auto h = run_gemflow({"--help"});
  EXPECT_EQ(h.code, 0) << h.err;
  EXPECT_CONTAINS(h.out, "Exit codes:");
  EXPECT_CONTAINS(h.out, "3  cancelled");
}

TEST_F(Cli, UsageErrorsExit2) {
  const auto wf = write("w.yaml", kSum);
  EXPECT_EQ(run_gemflow({}).code, 2);
  EXPECT_EQ(run_gemflow({"frobnicate"}).code, 2);
  EXPECT_EQ(gemflow({"run"}).code, 2);  // missing file
  EXPECT_EQ(gemflow({"run", wf.string(), "--no-such-option"}).code, 2);
  EXPECT_EQ(gemflow({"run", wf.string(), "-j", "-1"}).code, 2);
  auto d = gemflow({"run", wf.string(), "--device", "gpu"});
  EXPECT_EQ(d.code, 2);
  EXPECT_CONTAINS(d.err, "cuda:N");
  auto missing = gemflow({"run", (dir_ / "nope.yaml").string()});
  EXPECT_EQ(missing.code, 2);
  EXPECT_CONTAINS(missing.err, "nope.yaml");
}

// ---- running -----------------------------------------------------------------------------

TEST_F(Cli, RunWritesOutputsAndProvenance) {
  const auto wf = write("w.yaml", kSum);
  auto r = gemflow({"run", wf.string(), "--out", (dir_ / "o").string()});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(slurp(dir_ / "o" / "result.txt"), "sum\n5\n");
  EXPECT_TRUE(fs::exists(dir_ / "o" / "provenance.json"));
  // Summary: per-node state and where things are.
  EXPECT_CONTAINS(r.out, "finished");
  EXPECT_TRUE(std::regex_search(r.out, std::regex(R"(\n  add +test\.add +done +\d+\.\d\d)"))) << r.out;
  EXPECT_CONTAINS(r.out, "provenance.json");
  // Plain (non-terminal) log lines with the elapsed time.
  EXPECT_TRUE(std::regex_search(r.err, std::regex(R"(\[\d+\.\ds\] add: done)"))) << r.err;
}

TEST_F(Cli, DefaultOutputFolderIsOutSlashName) {
  write("w.yaml", kSum);
  auto r = gemflow({"run", "w.yaml"});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(slurp(dir_ / "out" / "sum" / "result.txt"), "sum\n5\n");
  EXPECT_CONTAINS(r.out, "out/sum");
}

TEST_F(Cli, SetOverridesAParameter) {
  const auto wf = write("w.yaml", kSum);
  auto r = gemflow({"run", wf.string(), "--out", "o", "--set", "a.value=10", "--set", "write.text=total"});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(slurp(dir_ / "o" / "result.txt"), "total\n13\n");
  // The file is unchanged.
  EXPECT_EQ(slurp(wf), kSum);
}

TEST_F(Cli, BadSetExits2WithoutRunning) {
  const auto wf = write("w.yaml", kSum);
  for (const char* bad : {"a.value=abc", "nosuch.value=1", "a.valeu=1", "a.value", "a=1"}) {
    auto r = gemflow({"run", wf.string(), "--out", "o", "--set", bad});
    EXPECT_EQ(r.code, 2) << bad << "\n" << r.err;
    EXPECT_CONTAINS(r.err, "error");
    EXPECT_FALSE(fs::exists(dir_ / "o" / "result.txt")) << bad;
  }
  auto typo = gemflow({"run", wf.string(), "--set", "a.valeu=1"});
  EXPECT_CONTAINS(typo.err, "did you mean 'value'");
}

TEST_F(Cli, FailedNodeExits1AndOtherBranchesFinish) {
  const auto wf = write("w.yaml", R"(gemflow: 1
name: partial
nodes:
  c: {type: test.constant, params: {value: 7}}
  bad: {type: test.fail, params: {message: the detector is on fire}}
  after: {type: test.write_text, params: {path: never.txt}}
  good: {type: test.write_text, params: {path: good.txt, text: ok}}
links:
  - c.value -> bad.in
  - bad.out -> after.value
  - c.value -> good.value
)");
  auto r = gemflow({"run", wf.string(), "--out", "o", "-j", "1"});
  EXPECT_EQ(r.code, 1) << r.err;
  EXPECT_CONTAINS(r.err, "the detector is on fire");
  EXPECT_CONTAINS(r.err, "bad");
  EXPECT_EQ(slurp(dir_ / "o" / "good.txt"), "ok\n7\n");
  EXPECT_FALSE(fs::exists(dir_ / "o" / "never.txt"));
  EXPECT_TRUE(std::regex_search(r.out, std::regex(R"(\n  bad +test\.fail +failed)"))) << r.out;
  EXPECT_TRUE(std::regex_search(r.out, std::regex(R"(\n  after +test\.write_text +skipped)"))) << r.out;
}

// QA: a failed re-run left the previous run's report where the skipped node would have written
// it, with no word: it looked like this run's result. It stays (results are not deleted), and the
// run says, in the console and the provenance record, that it is from an earlier run.
TEST_F(Cli, AFailedRerunNamesTheOutputsLeftFromAnEarlierRun) {
  const auto ok = write("ok.yaml",
                        "gemflow: 1\nnodes:\n  c: {type: test.constant, params: {value: 7}}\n"
                        "  w: {type: test.write_text, params: {path: report.txt, text: first}}\n"
                        "links:\n  - c.value -> w.value\n");
  ASSERT_EQ(gemflow({"run", ok.string(), "--out", "o"}).code, 0);
  const auto bad = write("bad.yaml",
                         "gemflow: 1\nnodes:\n  f: {type: test.fail, params: {message: no beam}}\n"
                         "  w: {type: test.write_text, params: {path: report.txt, text: second}}\n"
                         "links:\n  - f.out -> w.value\n");
  auto r = gemflow({"run", bad.string(), "--out", "o"});
  EXPECT_EQ(r.code, 1) << r.err;
  const std::string report = (dir_ / "o" / "report.txt").string();
  EXPECT_CONTAINS(r.err, report + " (parameter 'path') is from an earlier run: this node did not run this time");
  EXPECT_EQ(slurp(dir_ / "o" / "report.txt"), "first\n7\n");  // kept
  EXPECT_CONTAINS(slurp(dir_ / "o" / "provenance.json"), "is from an earlier run");
  // a successful run says nothing of the kind
  auto again = gemflow({"run", ok.string(), "--out", "o"});
  EXPECT_EQ(again.code, 0) << again.err;
  EXPECT_EQ(again.err.find("earlier run"), std::string::npos) << again.err;
  // QA: a folder where the output would go fails the writer; it is no earlier output
  std::filesystem::create_directories(dir_ / "d" / "report.txt");
  auto folder = gemflow({"run", ok.string(), "--out", "d"});
  EXPECT_EQ(folder.code, 1) << folder.err;
  EXPECT_EQ(folder.err.find("earlier run"), std::string::npos) << folder.err;
  // a user's report: a gallery (file names of its own) and a writer of one of them in one run;
  // the node refused was told the other's file was from an earlier run
  const fs::path flames = fs::path(GEMFLOW_SOURCE_DIR) / "sample_data" / "flames" / "gemflow_samples.flame";
  const auto both = write("both.yaml", "gemflow: 1\nnodes:\n  read: {type: flame.read, params: {path: " +
                                           flames.string() +
                                           "}}\n"
                                           "  all: {type: flame.render_all, params: {device: cpu, prefix: g_, quality: 1}}\n"
                                           // slower than the gallery: the writer comes second
                                           "  one: {type: flame.render, params: {device: cpu, quality: 60}}\n"
                                           "  img: {type: io.write_image, params: {path: g_001.png}}\n"
                                           "links:\n  - read.flames -> all.flames\n  - read.flame -> one.flame\n"
                                           "  - one.image -> img.image\n");
  auto clash = gemflow({"run", both.string(), "--out", "b"});
  EXPECT_EQ(clash.code, 1) << clash.err;
  // the usual order (the writer second) is the one of the report; the other fails the gallery,
  // which has no path parameter to warn about: the assertions hold either way
  EXPECT_CONTAINS(clash.err, "already wrote it in this run");
  EXPECT_EQ(clash.err.find("earlier run"), std::string::npos) << clash.err;
}

// Parameter rules: a workflow error at the parameter's line before anything runs; with --set the
// rules are checked on the values after the overrides (an override mends the file's combination,
// and an override that breaks one is named) (QA).
TEST_F(Cli, ParameterRulesAreCheckedAfterTheOverrides) {
  const auto bad = write("rank.yaml", "gemflow: 1\nnodes:\n  r:\n    type: test.rules\n    params: {rank: 2}\n");
  auto v = gemflow({"validate", bad.string()});
  EXPECT_EQ(v.code, 2) << v.err;
  EXPECT_CONTAINS(v.err,
                  "rank.yaml:5:20: error: node 'r', parameter 'rank': rank = 2 needs 'pivoted: true' (only "
                  "pivoted stops early)");
  auto run = gemflow({"run", bad.string(), "--out", "o1"});
  EXPECT_EQ(run.code, 2) << run.err;
  EXPECT_FALSE(std::filesystem::exists(dir_ / "o1"));
  auto mended = gemflow({"validate", bad.string(), "--set", "r.pivoted=true"});
  EXPECT_EQ(mended.code, 0) << mended.err;
  EXPECT_EQ(mended.err.find("needs"), std::string::npos) << mended.err;
  const auto good =
      write("ok.yaml", "gemflow: 1\nnodes:\n  r:\n    type: test.rules\n    params: {pivoted: true, rank: 2}\n");
  auto broken = gemflow({"validate", good.string(), "--set", "r.pivoted=false"});
  EXPECT_EQ(broken.code, 2) << broken.err;
  EXPECT_CONTAINS(broken.err,
                  "--set r.pivoted=false: error: node 'r', parameter 'pivoted': rank = 2 needs 'pivoted: "
                  "true'");
  auto doc = gemflow({"nodes", "test.rules"});
  EXPECT_CONTAINS(doc.out,
                  "Rules (checked before a run):\n  rank other than 0 needs 'pivoted: true' (only pivoted "
                  "stops early)\n  rank must be at most limit (a limit)\n");
  // a comparison rule is checked before the run too, at the parameter's line
  const auto over = write("over.yaml",
                          "gemflow: 1\nnodes:\n  r:\n    type: test.rules\n    params:\n"
                          "      pivoted: true\n      rank: 5\n      limit: 4\n");
  auto o = gemflow({"validate", over.string()});
  EXPECT_EQ(o.code, 2) << o.err;
  EXPECT_CONTAINS(o.err,
                  "over.yaml:7:13: error: node 'r', parameter 'rank': rank = 5 must be at most limit = 4 (a "
                  "limit)");
}

// NodeInfo's structured documentation: each field under its heading in `gemflow nodes ID`, and in
// the JSON catalogue
TEST_F(Cli, NodesShowsTheStructuredDocumentation) {
  auto doc = gemflow({"nodes", "test.rules"});
  ASSERT_EQ(doc.code, 0) << doc.err;
  EXPECT_CONTAINS(doc.out, "\nErrors:\n  None of its own: the rules are checked before a run.\n");
  EXPECT_CONTAINS(doc.out, "\nMemory:\n  One 1×1 matrix.\n");
  EXPECT_CONTAINS(doc.out, "\nDeterminism:\n  Deterministic.\n");
  EXPECT_CONTAINS(doc.out, "\nReferences:\n  The Gemflow test suite.\n");
  // a node without them shows no empty heading
  auto plain = gemflow({"nodes", "test.add"});
  EXPECT_EQ(plain.out.find("\nErrors:"), std::string::npos) << plain.out;
  auto json = gemflow({"nodes", "test.rules", "--json"});
  ASSERT_EQ(json.code, 0) << json.err;
  EXPECT_CONTAINS(json.out, "\"determinism\": \"Deterministic.\"");
  EXPECT_CONTAINS(json.out, "\"compare\": \"<=\"");
}

TEST_F(Cli, UntilRunsOnlyTheNeededNodes) {
  const auto wf = write("w.yaml", kSum);
  auto r = gemflow({"run", wf.string(), "--out", "o", "--until", "add", "--json"});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_FALSE(fs::exists(dir_ / "o" / "result.txt"));
  const auto lines = json_lines(r.out);
  const auto& nodes = lines.back()["nodes"];
  EXPECT_EQ(nodes["add"]["state"], "done");
  EXPECT_TRUE(!nodes.contains("write") || nodes["write"]["state"] != "done") << nodes.dump();
  EXPECT_EQ(nodes["add"]["outputs"]["sum"]["type"], "Matrix<f64>") << nodes.dump();

  auto bad = gemflow({"run", wf.string(), "--until", "addd"});
  EXPECT_EQ(bad.code, 2);
  EXPECT_CONTAINS(bad.err, "did you mean 'add'");
}

TEST_F(Cli, DeviceCudaWithoutADeviceExits2) {
  if (gemflow::cuda_device_count() > 0) GTEST_SKIP() << "a CUDA device is present";
  const auto wf = write("w.yaml", "gemflow: 1\nname: dev\nnodes:\n  d: {type: test.device}\n");
  auto r = gemflow({"run", wf.string(), "--out", "o", "--device", "cuda:0"});
  EXPECT_EQ(r.code, 2) << r.err;
  EXPECT_CONTAINS(r.err, "cuda");
  auto cpu = gemflow({"run", wf.string(), "--out", "o", "--device", "cpu", "--json"});
  ASSERT_EQ(cpu.code, 0) << cpu.err;
  EXPECT_EQ(json_lines(cpu.out).back()["nodes"]["d"]["outputs"]["table"]["type"], "Table");
  // the provenance's parameters are the ones used: the override, not the workflow's "auto" (QA)
  const auto prov = nlohmann::json::parse(slurp(dir_ / "o" / "provenance.json"));
  EXPECT_EQ(prov["nodes"]["d"]["params"]["device"], "cpu") << prov.dump();
  EXPECT_EQ(prov["device_override"], "cpu");
}

// QA: `validate` said "valid" for `device: cuda` on a machine without a GPU; the run read its
// inputs and failed only at that node. Now both warn up front with the parameter's file:line;
// --device replaces every device parameter, so it silences the warning.
TEST_F(Cli, DeviceCudaInTheWorkflowWithoutADeviceWarns) {
  if (gemflow::cuda_device_count() > 0) GTEST_SKIP() << "a CUDA device is present";
  const auto wf = write("dc.yaml", "gemflow: 1\nname: dc\nnodes:\n  d: {type: test.device, params: {device: cuda}}\n");
  const std::string warning =
      wf.string() + ":4:43: warning: node 'd', parameter 'device': device 'cuda' requested, but ";
  auto v = gemflow({"validate", wf.string()});
  EXPECT_EQ(v.code, 0) << v.err;
  EXPECT_CONTAINS(v.err, warning);
  EXPECT_CONTAINS(v.err, "the node will fail when it runs");
  EXPECT_CONTAINS(v.out, "valid");
  auto r = gemflow({"run", wf.string(), "--out", (dir_ / "o").string()});
  EXPECT_EQ(r.code, 1) << r.err;
  EXPECT_CONTAINS(r.err, "device 'cuda' requested, but");
  auto cpu = gemflow({"run", wf.string(), "--out", (dir_ / "o2").string(), "--device", "cpu"});
  EXPECT_EQ(cpu.code, 0) << cpu.err;
  EXPECT_EQ(cpu.err.find("requested, but"), std::string::npos) << cpu.err;
}

// ---- invalid workflows: exit 2, file:line, hints -----------------------------------------

TEST_F(Cli, TypoInNodeTypeNamesFileLineAndHint) {
  const auto wf = write("w.yaml", R"(gemflow: 1
name: typo
nodes:
  a: {type: test.constant}
  s: {type: test.ad}
)");
  auto r = gemflow({"run", wf.string(), "--out", "o"});
  EXPECT_EQ(r.code, 2);
  EXPECT_CONTAINS(r.err, "w.yaml:5:");
  EXPECT_CONTAINS(r.err, "error:");
  EXPECT_CONTAINS(r.err, "did you mean 'test.add'");
  EXPECT_FALSE(fs::exists(dir_ / "o" / "provenance.json"));
  auto v = gemflow({"validate", wf.string()});
  EXPECT_EQ(v.code, 2);
  EXPECT_CONTAINS(v.err, "w.yaml:5:");
}

TEST_F(Cli, MissingRequiredLink) {
  const auto wf = write("w.yaml", R"(gemflow: 1
name: missing
nodes:
  a: {type: test.constant}
  add: {type: test.add}
links:
  - a.value -> add.a
)");
  auto r = gemflow({"validate", wf.string()});
  EXPECT_EQ(r.code, 2);
  EXPECT_CONTAINS(r.err, "w.yaml");
  EXPECT_CONTAINS(r.err, "'add'");
  EXPECT_CONTAINS(r.err, "'b'");
  EXPECT_EQ(gemflow({"run", wf.string(), "--out", "o"}).code, 2);
}

TEST_F(Cli, CycleIsNamedNodeByNode) {
  const auto wf = write("w.yaml", R"(gemflow: 1
name: cycle
nodes:
  s1: {type: test.sleep, params: {seconds: 0}}
  s2: {type: test.sleep, params: {seconds: 0}}
links:
  - s1.out -> s2.in
  - s2.out -> s1.in
)");
  auto r = gemflow({"run", wf.string(), "--out", "o"});
  EXPECT_EQ(r.code, 2);
  EXPECT_CONTAINS(r.err, "cycle");
  EXPECT_TRUE(r.err.find("s1 -> s2 -> s1") != std::string::npos || r.err.find("s2 -> s1 -> s2") != std::string::npos)
      << r.err;
}

TEST_F(Cli, ParameterOutOfRange) {
  const auto wf = write("w.yaml", R"(gemflow: 1
name: range
nodes:
  p:
    type: test.params
    params: {count: 11, scale: 0.5}
)");
  auto r = gemflow({"run", wf.string(), "--out", "o"});
  EXPECT_EQ(r.code, 2);
  EXPECT_CONTAINS(r.err, "w.yaml:6:");
  EXPECT_CONTAINS(r.err, "'count'");
  EXPECT_CONTAINS(r.err, "maximum 10");
  // The same limits apply to --set (the file itself must be valid).
  const auto good = write("good.yaml", "gemflow: 1\nname: range\nnodes:\n  p: {type: test.params}\n");
  auto over = gemflow({"run", good.string(), "--out", "o", "--set", "p.count=11"});
  EXPECT_EQ(over.code, 2);
  EXPECT_CONTAINS(over.err, "maximum 10");
  auto scale = gemflow({"run", good.string(), "--out", "o", "--set", "p.scale=2.5"});
  EXPECT_EQ(scale.code, 2);
  EXPECT_CONTAINS(scale.err, "maximum 2 Å");
  auto ok = gemflow({"run", good.string(), "--out", "o", "--set", "p.count=10", "--json"});
  ASSERT_EQ(ok.code, 0) << ok.err;
}

TEST_F(Cli, YamlSyntaxError) {
  const auto wf = write("w.yaml", "gemflow: 1\nname: broken\nnodes:\n  a: {type: test.constant\n  b: [\n");
  auto r = gemflow({"validate", wf.string()});
  EXPECT_EQ(r.code, 2);
  EXPECT_TRUE(std::regex_search(r.err, std::regex(R"(w\.yaml:\d+:\d+: error)"))) << r.err;
}

TEST_F(Cli, ValidateOk) {
  const auto wf = write("w.yaml", kSum);
  auto r = gemflow({"validate", wf.string()});
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_CONTAINS(r.out, "valid");
  EXPECT_CONTAINS(r.out, "4 nodes, 3 links");
  EXPECT_FALSE(fs::exists(dir_ / "out"));  // validate runs nothing
}

// ---- machine output and cancellation ------------------------------------------------------

TEST_F(Cli, JsonEmitsOneObjectPerLineAndASummary) {
  const auto wf = write("w.yaml", R"(gemflow: 1
name: json
nodes:
  c: {type: test.constant, params: {value: 1.5}}
  s: {type: test.sleep, params: {seconds: 0.3}}
  w: {type: test.write_text, params: {path: out.txt}}
links:
  - c.value -> s.in
  - s.out -> w.value
)");
  auto r = gemflow({"run", wf.string(), "--out", "o", "--json"});
  ASSERT_EQ(r.code, 0) << r.err;
  std::vector<nlohmann::json> lines;
  ASSERT_NO_THROW(lines = json_lines(r.out)) << r.out;
  ASSERT_GE(lines.size(), 4u);
  int states = 0, progress = 0;
  for (const auto& j : lines) {
    ASSERT_TRUE(j.is_object());
    ASSERT_TRUE(j.contains("event"));
    if (j["event"] == "state") ++states;
    if (j["event"] == "progress") {
      ++progress;
      EXPECT_EQ(j["node"], "s");
      EXPECT_GE(j["progress"].get<double>(), 0.0);
      EXPECT_LE(j["progress"].get<double>(), 1.0);
    }
  }
  EXPECT_GE(states, 6);  // at least running + done for each of the 3 nodes
  EXPECT_GE(progress, 1);
  const auto& sum = lines.back();
  EXPECT_EQ(sum["event"], "summary");
  EXPECT_EQ(sum["exit_code"], 0);
  EXPECT_EQ(sum["ok"], true);
  EXPECT_EQ(sum["nodes"]["s"]["state"], "done");
  EXPECT_GE(sum["nodes"]["s"]["seconds"].get<double>(), 0.29);
  EXPECT_EQ(slurp(dir_ / "o" / "out.txt"), "\n1.5\n");
  EXPECT_TRUE(fs::exists(sum["provenance"].get<std::string>()));
}

TEST_F(Cli, JsonReportsDiagnostics) {
  const auto wf = write("w.yaml", "gemflow: 1\nname: j\nnodes:\n  a: {type: test.constnt}\n");
  auto r = gemflow({"run", wf.string(), "--json"});
  EXPECT_EQ(r.code, 2);
  const auto lines = json_lines(r.out);
  ASSERT_GE(lines.size(), 2u);
  EXPECT_EQ(lines.front()["event"], "diagnostic");
  EXPECT_EQ(lines.front()["line"], 4);
  EXPECT_EQ(lines.back()["event"], "summary");
  EXPECT_EQ(lines.back()["exit_code"], 2);
  // QA: the same keys as every summary (docs/cli.md)
  EXPECT_EQ(lines.back()["cancelled"], false);
  EXPECT_TRUE(lines.back()["seconds"].is_number());
  EXPECT_TRUE(lines.back()["nodes"].is_object() && lines.back()["nodes"].empty());
}

TEST_F(Cli, SigintCancelsWithinASecondAndExits3) {
  const auto wf = write("w.yaml", R"(gemflow: 1
name: slow
nodes:
  s: {type: test.sleep, params: {seconds: 60}}
  w: {type: test.write_text, params: {path: never.txt}}
links:
  - s.out -> w.value
)");
  Clock::time_point signalled{};
  bool sent = false;
  Options opt;
  opt.timeout = 30;
  opt.on_output = [&](pid_t pid, const std::string& out, const std::string&) {
    if (sent) return;
    std::istringstream is(out);
    for (std::string line; std::getline(is, line);) {
      auto j = nlohmann::json::parse(line, nullptr, false);
      if (j.is_object() && j.value("event", "") == "progress" && j.value("node", "") == "s") {
        kill(pid, SIGINT);
        signalled = Clock::now();
        sent = true;
        return;
      }
    }
  };
  auto r = gemflow({"run", wf.string(), "--out", "o", "--json"}, opt);
  const double after = std::chrono::duration<double>(Clock::now() - signalled).count();
  ASSERT_TRUE(sent) << r.out << r.err;
  EXPECT_EQ(r.code, 3) << r.err;
  EXPECT_LT(after, 1.0);
  const auto lines = json_lines(r.out);
  EXPECT_EQ(lines.back()["event"], "summary");
  EXPECT_EQ(lines.back()["cancelled"], true);
  EXPECT_EQ(lines.back()["nodes"]["s"]["state"], "cancelled");
  EXPECT_FALSE(fs::exists(dir_ / "o" / "never.txt"));
}

TEST_F(Cli, SigtermCancelsToo) {
  const auto wf = write("w.yaml", "gemflow: 1\nname: slow\nnodes:\n  s: {type: test.sleep, params: {seconds: 60}}\n");
  bool sent = false;
  Clock::time_point signalled{};
  auto r = gemflow({"run", wf.string(), "--out", "o"}, signal_when_s_starts(SIGTERM, sent, signalled, 30));
  ASSERT_TRUE(sent) << r.err;
  EXPECT_EQ(r.code, 3) << r.err;
  EXPECT_CONTAINS(r.out, "cancelled");
}

// QA: a node stuck in a library (OpenBLAS under `ulimit -v`) never sees the cancellation, and a
// single SIGTERM (a scheduler, `timeout`) left gemflow running for good. It now exits 10 s later,
// and (second QA) still ends --json with the summary: the node's last state and what it did not
// wait for, without a provenance record.
TEST_F(Cli, SigtermEndsARunWhoseNodeDoesNotStop) {
  const auto wf = write("w.yaml",
                        "gemflow: 1\nname: stuck\nnodes:\n"
                        "  s: {type: test.sleep, params: {seconds: 60, cooperative: false}}\n");
  Clock::time_point signalled{};
  bool sent = false;
  auto r = gemflow({"run", wf.string(), "--out", "o", "--json"}, signal_on_json_progress(SIGTERM, sent, signalled, 40));
  const double after = std::chrono::duration<double>(Clock::now() - signalled).count();
  ASSERT_TRUE(sent) << r.err;
  EXPECT_EQ(r.code, 3) << r.err;
  EXPECT_GE(after, 9.0);
  EXPECT_LT(after, 15.0);
  EXPECT_CONTAINS(r.err, "still running 10 s after SIGTERM: exited without waiting for s; no provenance record");
  const auto lines = json_lines(r.out);
  ASSERT_FALSE(lines.empty()) << r.out;
  EXPECT_EQ(lines.back()["event"], "summary");
  EXPECT_EQ(lines.back()["exit_code"], 3);
  EXPECT_EQ(lines.back()["cancelled"], true);
  EXPECT_EQ(lines.back()["nodes"]["s"]["state"], "running");
  EXPECT_CONTAINS(lines.back()["error"].get<std::string>(), "without waiting for s");
  EXPECT_FALSE(fs::exists(dir_ / "o" / "provenance.json"));
}

// QA: a second Ctrl-C exited at once with nothing on stdout; it now prints the summary first.
TEST_F(Cli, SecondSigintForcesTheExitWithASummary) {
  const auto wf = write("w.yaml",
                        "gemflow: 1\nname: stuck\nnodes:\n"
                        "  s: {type: test.sleep, params: {seconds: 60, cooperative: false}}\n");
  Clock::time_point signalled{};
  bool sent = false;
  Options opt = signal_on_json_progress(SIGINT, sent, signalled, 30);
  bool second = false;
  const auto first = opt.on_output;
  opt.on_output = [&](pid_t pid, const std::string& out, const std::string& err) {
    first(pid, out, err);
    // Later than half a second: the same process signalling again sooner is the same request.
    if (sent && !second && out.find("\"cancelling\"") != std::string::npos &&
        Clock::now() - signalled > std::chrono::milliseconds(600)) {
      kill(pid, SIGINT);
      second = true;
    }
  };
  auto r = gemflow({"run", wf.string(), "--out", "o", "--json"}, opt);
  const double after = std::chrono::duration<double>(Clock::now() - signalled).count();
  ASSERT_TRUE(second) << r.out << r.err;
  EXPECT_EQ(r.code, 3) << r.err;
  EXPECT_LT(after, 3.0);
  const auto lines = json_lines(r.out);
  ASSERT_FALSE(lines.empty());
  EXPECT_EQ(lines.back()["event"], "summary");
  EXPECT_EQ(lines.back()["nodes"]["s"]["state"], "running");
  EXPECT_CONTAINS(lines.back()["error"].get<std::string>(), "a second signal: exited without waiting for s");
}

// `timeout` sends its signal to gemflow and again to its process group: a repeat from the same
// sender within half a second is the same request, not a second one that forces the exit (no
// provenance record, the node not waited for).
TEST_F(Cli, TheSameSignalTwiceFromOneProcessIsOneRequest) {
  const auto wf = write("w.yaml",
                        "gemflow: 1\nname: twice\nnodes:\n"
                        "  s: {type: test.sleep, params: {seconds: 1.5, cooperative: false}}\n");
  Clock::time_point signalled{};
  bool sent = false;
  Options opt = signal_on_json_progress(SIGTERM, sent, signalled, 30);
  bool second = false;
  const auto first = opt.on_output;
  opt.on_output = [&](pid_t pid, const std::string& out, const std::string& err) {
    first(pid, out, err);
    if (sent && !second && out.find("\"cancelling\"") != std::string::npos) {
      kill(pid, SIGTERM);
      second = true;
    }
  };
  auto r = gemflow({"run", wf.string(), "--out", "o", "--json"}, opt);
  ASSERT_TRUE(second) << r.out << r.err;
  EXPECT_EQ(r.code, 3) << r.err;
  EXPECT_EQ(r.err.find("a second signal"), std::string::npos) << r.err;
  const auto lines = json_lines(r.out);
  ASSERT_FALSE(lines.empty());
  EXPECT_EQ(lines.back()["event"], "summary");
  EXPECT_EQ(lines.back()["cancelled"], true);
  EXPECT_TRUE(fs::exists(dir_ / "o" / "provenance.json"));  // the run waited for its node
}

// QA: a node that reports progress with a new message on every call (5 million calls) gave one
// JSON line per call. Now about 20 per second per node, a new message at most every 5 ms; NaN
// progress is 0.
TEST_F(Cli, JsonProgressIsThrottled) {
  const auto wf = write("w.yaml", "gemflow: 1\nnodes:\n  p: {type: test.progress_spam, params: {calls: 2000000}}\n");
  const auto t0 = Clock::now();
  auto r = gemflow({"run", wf.string(), "--out", "o", "--json"});
  const double seconds = std::chrono::duration<double>(Clock::now() - t0).count();
  ASSERT_EQ(r.code, 0) << r.err;
  std::size_t progress = 0;
  double first = -1;
  for (const auto& j : json_lines(r.out))
    if (j["event"] == "progress") {
      if (progress++ == 0) first = j["progress"].get<double>();
    }
  EXPECT_EQ(first, 0.0);
  EXPECT_GE(progress, 1u);
  EXPECT_LE(static_cast<double>(progress), 200.0 * seconds + 20.0) << progress << " events in " << seconds << " s";
}

// QA: a workflow whose files clash (two nodes write one file) printed "running ..." and, with
// --json, a summary with the keys of a run and no error; now it is refused as invalid up front,
// in the same form as any invalid workflow.
TEST_F(Cli, ClashingOutputsAreAnInvalidWorkflowUpFront) {
  const auto wf = write("w.yaml", R"(gemflow: 1
name: clash
nodes:
  c: {type: test.constant, params: {value: 1}}
  a: {type: test.write_text, params: {path: same.txt}}
  b: {type: test.write_text, params: {path: same.txt}}
links:
  - c.value -> a.value
  - c.value -> b.value
)");
  auto r = gemflow({"run", wf.string(), "--out", "o", "--json"});
  EXPECT_EQ(r.code, 2) << r.err;
  EXPECT_EQ(r.err.find("running 'clash'"), std::string::npos) << r.err;
  const auto lines = json_lines(r.out);
  ASSERT_FALSE(lines.empty()) << r.out;
  EXPECT_EQ(lines.front()["event"], "diagnostic") << r.out;
  EXPECT_EQ(lines.back()["event"], "summary");
  EXPECT_EQ(lines.back()["error"], "invalid workflow");
  EXPECT_TRUE(lines.back()["nodes"].is_object() && lines.back()["nodes"].empty());
  auto text = gemflow({"run", wf.string(), "--out", "o"});
  EXPECT_EQ(text.code, 2);
  EXPECT_EQ(text.err.find("running 'clash'"), std::string::npos) << text.err;
}

TEST_F(Cli, ProgressBarOnATerminal) {
  const auto wf = write("w.yaml", R"(gemflow: 1
name: bar
nodes:
  s: {type: test.sleep, params: {seconds: 0.6}}
  t: {type: test.sleep, params: {seconds: 0.4}}
)");
  Options opt;
  opt.stderr_tty = true;
  auto r = gemflow({"run", wf.string(), "--out", "o", "-j", "2"}, opt);
  ASSERT_EQ(r.code, 0) << r.err;
  // The live block: a header, one bar line per running node, redrawn in place (cursor up, clear).
  EXPECT_CONTAINS(r.err, "bar  ");
  EXPECT_CONTAINS(r.err, "2 running");
  EXPECT_TRUE(std::regex_search(r.err, std::regex(R"(  s +\[=+>? *\] +\d+%.*sleeping)"))) << r.err;
  EXPECT_TRUE(std::regex_search(r.err, std::regex(R"(\x1b\[[23]A\r\x1b\[J)"))) << r.err;
  EXPECT_CONTAINS(r.err, "s: done in");
  // Not on a terminal: no escape sequences at all.
  auto plain = gemflow({"run", wf.string(), "--out", "o"});
  ASSERT_EQ(plain.code, 0) << plain.err;
  EXPECT_EQ(plain.err.find('\x1b'), std::string::npos) << plain.err;
  EXPECT_TRUE(std::regex_search(plain.err, std::regex(R"(\[\d+\.\ds\] s: \d+% sleeping)"))) << plain.err;
}

// ---- catalogue: nodes and plugins ---------------------------------------------------------

TEST_F(Cli, NodesListsByCategoryAndDocumentsOne) {
  auto r = gemflow({"nodes"});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_TRUE(std::regex_search(r.out, std::regex(R"((^|\n)Test\n)"))) << r.out;
  EXPECT_TRUE(std::regex_search(r.out, std::regex(R"(\n  test\.sleep +Sleep)"))) << r.out;

  // An unknown command is named, with the nearest one (QA: CLI11 said "A subcommand is required").
  auto typo = gemflow({"vaildate", "w.yaml"});
  EXPECT_EQ(typo.code, 2);
  EXPECT_CONTAINS(typo.err, "unknown command 'vaildate' (did you mean 'validate'?)");
  auto bogus = gemflow({"--bogus"});
  EXPECT_EQ(bogus.code, 2);
  EXPECT_CONTAINS(bogus.err, "unknown option '--bogus'");
  // QA: an empty --out or --until was taken as not given
  const auto any = write("any.yaml", "gemflow: 1\nnodes:\n  s: {type: test.sleep, params: {seconds: 0}}\n");
  for (const char* opt : {"--out", "--until"}) {
    auto empty = gemflow({"run", any.string(), opt, ""});
    EXPECT_EQ(empty.code, 2) << opt << ": " << empty.err;
    EXPECT_CONTAINS(empty.err, "must not be empty");
  }

  auto one = gemflow({"nodes", "test.sleep"});
  ASSERT_EQ(one.code, 0) << one.err;
  EXPECT_CONTAINS(one.out, "test.sleep");
  EXPECT_CONTAINS(one.out, "seconds (float, s)  default 1.0  range [0, 3600] s");
  EXPECT_CONTAINS(one.out, "How long");
  EXPECT_CONTAINS(one.out, "in: Matrix<f64> (optional)");
  EXPECT_CONTAINS(one.out, "out: Matrix<f64>");

  auto p = gemflow({"nodes", "test.params"});
  ASSERT_EQ(p.code, 0) << p.err;
  EXPECT_CONTAINS(p.out, "choices: fast | exact");
  EXPECT_CONTAINS(p.out, "range [1, 10]");
  EXPECT_CONTAINS(p.out, "scale (float, Å)");
  auto dev = gemflow({"nodes", "test.device"});
  ASSERT_EQ(dev.code, 0) << dev.err;
  EXPECT_CONTAINS(dev.out, "In a workflow:\n  device: {type: test.device, params: {device: auto");

  auto js = gemflow({"nodes", "test.params", "--json"});
  ASSERT_EQ(js.code, 0) << js.err;
  const auto j = nlohmann::json::parse(js.out);
  EXPECT_EQ(j["id"], "test.params");
  EXPECT_EQ(j["params"].size(), 8u);
}

TEST_F(Cli, UnknownNodeTypeHintsAndExits2) {
  auto r = gemflow({"nodes", "test.slep"});
  EXPECT_EQ(r.code, 2);
  EXPECT_CONTAINS(r.err, "unknown node type 'test.slep'");
  EXPECT_CONTAINS(r.err, "did you mean 'test.sleep'");
}

TEST_F(Cli, GarbagePluginDoesNotStopNodes) {
  fs::create_directories(dir_ / "junk");
  write("junk/libgemflow_junk.so", "this is not an ELF file\n");
  auto r = gemflow({"nodes", "--plugin-path", (dir_ / "junk").string(), "--plugin-path", GEMFLOW_BAD_API_DIR});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_CONTAINS(r.out, "test.sleep");
  EXPECT_TRUE(std::regex_search(r.err, std::regex(R"(warning: plugin .*libgemflow_junk\.so: not loaded: .+)")))
      << r.err;
  EXPECT_TRUE(std::regex_search(r.err, std::regex(R"(warning: plugin .*libgemflow_bad_api\.so: not loaded: .+)")))
      << r.err;

  auto p = gemflow({"plugins", "--plugin-path", (dir_ / "junk").string()});
  ASSERT_EQ(p.code, 0) << p.err;
  EXPECT_TRUE(std::regex_search(p.out, std::regex(R"(loaded +test 1\.0\.0 .*\(12 nodes\))"))) << p.out;
  EXPECT_TRUE(std::regex_search(p.out, std::regex(R"(FAILED +.*libgemflow_junk\.so: .+)"))) << p.out;
}

TEST_F(Cli, PluginsDoctor) {
  auto r = gemflow(
      {"plugins", "--doctor", "--plugin-path", GEMFLOW_BAD_API_DIR, "--plugin-path", (dir_ / "absent").string()});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_CONTAINS(r.out, "Host fingerprint: sdk=");
  EXPECT_CONTAINS(r.out, "CUDA:");
  EXPECT_CONTAINS(r.out, "Plugin search path");
  EXPECT_CONTAINS(r.out, GEMFLOW_TESTNODES_DIR);
  EXPECT_CONTAINS(r.out, "Hints:");
  EXPECT_CONTAINS(r.out, "libgemflow_bad_api.so");
  EXPECT_CONTAINS(r.out, "does not exist");
}

// ---- QA findings -------------------------------------------------------------------------

TEST_F(Cli, PluginThatAbortsWhileLoadingIsSkipped) {
  const fs::path abort_dir = fs::path(GEMFLOW_TESTNODES_DIR).parent_path() / "abort_ctor";
  auto r = gemflow({"nodes", "--plugin-path", abort_dir.string()});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_CONTAINS(r.out, "test.sleep");
  EXPECT_TRUE(std::regex_search(
      r.err, std::regex(R"(warning: plugin .*libgemflow_abort_ctor\.so: not loaded: crashed while loading \(signal 6, )"
                        R"(SIGABRT\): abort_ctor: cannot initialise the licence server)")))
      << r.err;

  // A library that is not a plugin (the core library) and the crashing one, with matching hints.
  fs::create_directories(dir_ / "plug");
  fs::copy_file(fs::path(GEMFLOW_EXE).parent_path().parent_path() / "lib" / "libgemflow_core.so",
                dir_ / "plug" / "libnotaplugin.so");
  auto d =
      gemflow({"plugins", "--doctor", "--plugin-path", abort_dir.string(), "--plugin-path", (dir_ / "plug").string()});
  ASSERT_EQ(d.code, 0) << d.err;
  EXPECT_CONTAINS(d.out,
                  "- libnotaplugin.so is not a Gemflow plugin (it exports no Gemflow entry points): remove it "
                  "from the plugin folder");
  EXPECT_CONTAINS(d.out,
                  "- libgemflow_abort_ctor.so fails in its own load-time code (crashed while loading (signal 6, "
                  "SIGABRT)");
  EXPECT_EQ(d.out.find("was built for another plugin API"), std::string::npos) << d.out;
}

TEST_F(Cli, SigintWhileANodeRunsReportsCancelledNotFailed) {
  const auto wf = write("w.yaml", R"(gemflow: 1
name: slow
nodes:
  s: {type: test.sleep, params: {seconds: 60}}
  w: {type: test.write_text, params: {path: never.txt}}
links:
  - s.out -> w.value
)");
  bool sent = false;
  Options opt;
  opt.timeout = 30;
  opt.on_output = [&](pid_t pid, const std::string& out, const std::string&) {
    if (!sent && out.find(R"("event":"progress")") != std::string::npos) {
      kill(pid, SIGINT);
      sent = true;
    }
  };
  auto r = gemflow({"run", wf.string(), "--out", "o", "--json"}, opt);
  ASSERT_TRUE(sent) << r.out << r.err;
  EXPECT_EQ(r.code, 3) << r.err;
  const auto lines = json_lines(r.out);
  int cancelling = -1, s_cancelled = -1, w_cancelled = -1;
  for (int i = 0; i < static_cast<int>(lines.size()); ++i) {
    const auto& j = lines[static_cast<std::size_t>(i)];
    if (j["event"] == "cancelling" && cancelling < 0) cancelling = i;
    if (j["event"] == "state" && j["state"] == "cancelled" && j["node"] == "s") s_cancelled = i;
    if (j["event"] == "state" && j["state"] == "cancelled" && j["node"] == "w") w_cancelled = i;
    EXPECT_NE(j.value("state", ""), "failed") << j.dump();
    EXPECT_NE(j.value("state", ""), "skipped") << j.dump();
  }
  ASSERT_GE(cancelling, 0) << r.out;
  EXPECT_GT(s_cancelled, cancelling) << r.out;
  EXPECT_GT(w_cancelled, cancelling) << r.out;
  EXPECT_EQ(lines.back()["nodes"]["w"]["state"], "cancelled");
  const auto prov = nlohmann::json::parse(slurp(dir_ / "o" / "provenance.json"));
  EXPECT_EQ(prov["nodes"]["s"]["state"], "cancelled");
  EXPECT_EQ(prov["nodes"]["w"]["state"], "cancelled");
}

// QA: under `ulimit -v 1200000` gemflow hung for good in OpenBLAS (a thread that cannot map its
// 128 MiB buffer spins, and SIGTERM went unanswered): its threads are now fitted to the limit.
TEST_F(Cli, AddressSpaceLimitDoesNotHangOpenBlas) {
#if defined(__SANITIZE_ADDRESS__)
  GTEST_SKIP() << "AddressSanitizer reserves terabytes of address space: no ulimit -v can apply to this build";
#endif
  Options o;
  o.address_limit = std::size_t{1200000} * 1024;
  o.timeout = 60.0;
  auto r = gemflow({"plugins"}, o);
  EXPECT_EQ(r.code, 0) << r.out << r.err;
  EXPECT_CONTAINS(r.out, "plugin files loaded");
}

// QA: `validate` said "valid" for a workflow whose input file is missing; now it warns with the
// parameter's file:line (still valid: a run --until another node does not need the file), and
// `run` warns before any node runs, then the reading node fails with the reason.
TEST_F(Cli, MissingInputFileWarnsAtValidationAndBeforeTheRun) {
  const auto wf = write("missing.yaml", "gemflow: 1\nnodes:\n  r: {type: test.read_text, params: {path: nope.txt}}\n");
  auto v = gemflow({"validate", wf.string()});
  EXPECT_EQ(v.code, 0) << v.err;
  EXPECT_CONTAINS(v.err, wf.string() + ":3:44: warning: node 'r', parameter 'path': file not found: " +
                             (dir_ / "nope.txt").string());
  EXPECT_CONTAINS(v.out, "valid");
  auto r = gemflow({"run", wf.string(), "--out", (dir_ / "o").string()});
  EXPECT_EQ(r.code, 1) << r.err;
  EXPECT_CONTAINS(r.err, "file not found: " + (dir_ / "nope.txt").string());
  EXPECT_CONTAINS(v.err, "relative paths start from the workflow's folder");
  // an absolute path gets no hint about relative ones (QA)
  const auto abs =
      write("abs.yaml",
            "gemflow: 1\nnodes:\n  r: {type: test.read_text, params: {path: " + (dir_ / "gone.txt").string() + "}}\n");
  auto va = gemflow({"validate", abs.string()});
  EXPECT_EQ(va.code, 0) << va.err;
  EXPECT_CONTAINS(va.err, "file not found: " + (dir_ / "gone.txt").string());
  EXPECT_EQ(va.err.find("relative paths"), std::string::npos) << va.err;
}

// QA: a missing file given with --set (made absolute against the current folder) was hinted
// at as relative to the workflow's folder, and the run's log line said "warning" twice.
TEST_F(Cli, MissingSetPathHintsAtTheCurrentFolder) {
  fs::create_directories(dir_ / "wf");
  const auto wf = write("wf/missing.yaml", "gemflow: 1\nnodes:\n  r: {type: test.read_text, params: {path: a.txt}}\n");
  fs::create_directories(dir_ / "elsewhere");
  Options o;
  o.cwd = dir_ / "elsewhere";
  auto r = gemflow({"run", wf.string(), "--out", (dir_ / "o").string(), "--set", "r.path=nope.txt"}, o);
  EXPECT_EQ(r.code, 1) << r.err;
  const std::string expect =
      "--set r.path=nope.txt: parameter 'path': file not found: " + (dir_ / "elsewhere" / "nope.txt").string() +
      " (a relative path given with --set starts from the current folder)";
  EXPECT_CONTAINS(r.err, expect);
  EXPECT_EQ(r.err.find("workflow's folder"), std::string::npos) << r.err;
  const auto line_start = r.err.rfind('\n', r.err.find(expect)) + 1;
  const std::string line = r.err.substr(line_start, r.err.find('\n', line_start) - line_start);
  EXPECT_EQ(line.find("warning"), line.rfind("warning")) << "said twice: " << line;
  // an absolute path given with --set gets no hint about relative ones (QA)
  const std::string gone = (dir_ / "gone.txt").string();
  auto a = gemflow({"validate", wf.string(), "--set", "r.path=" + gone}, o);
  EXPECT_EQ(a.code, 0) << a.err;
  EXPECT_CONTAINS(a.err, "file not found: " + gone);
  EXPECT_EQ(a.err.find("relative path"), std::string::npos) << a.err;
}

// QA: a folder given as the workflow was reported as "1:1: empty workflow file".
TEST_F(Cli, AFolderIsNotAWorkflowFile) {
  fs::create_directories(dir_ / "wf.yaml");
  for (const char* cmd : {"validate", "run"}) {
    auto r = gemflow({cmd, (dir_ / "wf.yaml").string()});
    EXPECT_EQ(r.code, 2) << cmd << ": " << r.err;
    EXPECT_CONTAINS(r.err, (dir_ / "wf.yaml").string() + ": error: is a folder, not a workflow file");
  }
  // an input parameter naming a folder is found at validation too, not only when the node runs
  const auto wf =
      write("folder_input.yaml", "gemflow: 1\nnodes:\n  r: {type: test.read_text, params: {path: wf.yaml}}\n");
  auto v = gemflow({"validate", wf.string()});
  EXPECT_EQ(v.code, 0) << v.err;
  EXPECT_CONTAINS(v.err,
                  "warning: node 'r', parameter 'path': " + (dir_ / "wf.yaml").string() + " is a folder, not a file");
}

// QA: a named pipe as an input hung the run for good (the provenance hash read the pipe, then the
// node's second open waited for a writer; Ctrl-C could not end it). Pipes, devices and sockets
// are refused before anything runs, naming the node, the parameter and the kind of file.
TEST_F(Cli, ANamedPipeOrDeviceIsNotAnInput) {
  const fs::path fifo = dir_ / "p.txt";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0644), 0) << std::strerror(errno);
  const auto wf = write("fifo.yaml", "gemflow: 1\nnodes:\n  r: {type: test.read_text, params: {path: p.txt}}\n");
  for (const char* cmd : {"validate", "run"}) {
    auto r = cmd == std::string("run") ? gemflow({cmd, wf.string(), "--out", (dir_ / "out").string()})
                                       : gemflow({cmd, wf.string()});
    EXPECT_EQ(r.code, 2) << cmd << ": " << r.err;
    EXPECT_CONTAINS(r.err, "error: node 'r', parameter 'path': " + fifo.string() + " is a named pipe (FIFO)");
    EXPECT_CONTAINS(r.err, "copy it to a regular file first");
  }
  auto d = gemflow({"validate", wf.string(), "--set", "r.path=/dev/null"});
  EXPECT_EQ(d.code, 2) << d.err;
  EXPECT_CONTAINS(d.err, "/dev/null is a character device");
}

TEST_F(Cli, WritingTheWorkflowFileIsInvalidBeforeAnythingRuns) {
  // An absolute path: the same file whatever the output folder (validate assumes the default).
  const std::string text =
      "gemflow: 1\nnodes:\n  s: {type: test.sleep, params: {seconds: 0}}\n"
      "  w: {type: test.write_text, params: {path: " +
      (dir_ / "self.yaml").string() + "}}\n";
  const auto wf = write("self.yaml", text);
  auto v = gemflow({"validate", wf.string()});
  EXPECT_EQ(v.code, 2) << v.err;
  EXPECT_CONTAINS(v.err, wf.string() + ":4:45: error: node 'w', parameter 'path': would overwrite " + wf.string() +
                             ": it is the workflow file of this run (write to another file name)");
  auto r = gemflow({"run", wf.string(), "--out", dir_.string()});
  EXPECT_EQ(r.code, 2) << r.err;
  EXPECT_CONTAINS(r.err, "it is the workflow file of this run");
  EXPECT_EQ(r.out.find("node  "), std::string::npos) << "no summary table after an invalid workflow:\n" << r.out;
  EXPECT_CONTAINS(r.out, "'self' invalid (1 error): nothing ran");
  EXPECT_EQ(slurp(wf), text);

  // provenance.json as the workflow, run into its own folder.
  const std::string text2 = "gemflow: 1\nnodes:\n  c: {type: test.constant}\n";
  const auto pj = write("provenance.json", text2);
  auto p = gemflow({"run", pj.string(), "--out", dir_.string()});
  EXPECT_EQ(p.code, 2) << p.err;
  EXPECT_CONTAINS(p.err, "would overwrite the workflow file of this run");
  EXPECT_EQ(slurp(pj), text2);
}

TEST_F(Cli, EmptyWorkflowWarnsAndNamesTheFile) {
  const auto wf = write("nonodes.yaml", "gemflow: 1\nnodes: {}\n");
  auto r = gemflow({"run", wf.string(), "--out", "o"});
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_CONTAINS(r.err, "warning: the workflow has no nodes");
  EXPECT_EQ(r.err.find("no nodes", r.err.find("no nodes") + 1), std::string::npos) << "warned twice:\n" << r.err;
  EXPECT_CONTAINS(r.err, "running 'nonodes' (0 nodes)");
  EXPECT_CONTAINS(r.out, "'nonodes' finished");
}

TEST_F(Cli, QuietShowsTheFailureButNotTheSkippedNodes) {
  const auto wf = write("w.yaml", R"(gemflow: 1
nodes:
  bad: {type: test.fail, params: {message: the detector is on fire}}
  a1: {type: test.write_text, params: {path: a1.txt}}
  a2: {type: test.write_text, params: {path: a2.txt}}
links:
  - bad.out -> a1.value
  - bad.out -> a2.value
)");
  auto r = gemflow({"run", wf.string(), "--out", "o", "-q"});
  EXPECT_EQ(r.code, 1) << r.err;
  EXPECT_CONTAINS(r.err, "the detector is on fire");
  EXPECT_EQ(r.err.find("skipped"), std::string::npos) << r.err;
  EXPECT_TRUE(std::regex_search(r.out, std::regex(R"(\n  a1 +test\.write_text +skipped)"))) << r.out;
}

TEST_F(Cli, BinaryWorkflowIsNotEchoedRaw) {
  std::string bytes = "gemflow: 1\nname: \"";
  bytes += std::string(
      "\x7f"
      "ELF\x02\x01\x01\0\0\0",
      10);
  const auto wf = write("binary.yaml", bytes);
  auto r = gemflow({"validate", wf.string()});
  EXPECT_EQ(r.code, 2) << r.err;
  EXPECT_CONTAINS(r.err, wf.string() + ":2:15: error: not a text file (byte 0x00 at offset 25)");
  for (char c : r.err) ASSERT_TRUE(c == '\n' || static_cast<unsigned char>(c) >= 0x20) << r.err;
}

TEST_F(Cli, GpuJobsReachesTheRunAndItsProvenance) {
  const auto wf = write("w.yaml", kSum);
  auto r = gemflow({"run", wf.string(), "--out", "o", "--gpu-jobs", "3"});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(nlohmann::json::parse(slurp(dir_ / "o" / "provenance.json"))["jobs"]["per_gpu"], 3);
  r = gemflow({"run", wf.string(), "--out", "o2"});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(nlohmann::json::parse(slurp(dir_ / "o2" / "provenance.json"))["jobs"]["per_gpu"], 1);  // default
  EXPECT_EQ(gemflow({"run", wf.string(), "--out", "o3", "--gpu-jobs", "-1"}).code, 2);
  r = gemflow({"run", wf.string(), "--out", "o3", "--gpu-jobs", "two"});
  EXPECT_EQ(r.code, 2) << r.err;
  EXPECT_CONTAINS(r.err, "--gpu-jobs");
}

TEST_F(Cli, ProvenanceRecordsTheCommandLineJobsAndPlugins) {
  const auto wf = write("w.yaml", kSum);
  auto r = gemflow({"run", wf.string(), "--out", "o", "-j", "2"});
  ASSERT_EQ(r.code, 0) << r.err;
  const auto j = nlohmann::json::parse(slurp(dir_ / "o" / "provenance.json"));
  ASSERT_GE(j["command_line"].size(), 6u);
  EXPECT_EQ(j["command_line"][1], "run");
  EXPECT_EQ(j["command_line"][2], wf.string());
  EXPECT_EQ(j["jobs"]["requested"], 2);
  EXPECT_EQ(j["jobs"]["used"], 2);
  bool testnodes = false;
  for (const auto& p : j["plugins"]) testnodes |= p["name"] == "test" && p["version"] == "1.0.0";
  EXPECT_TRUE(testnodes) << j["plugins"].dump();
  EXPECT_EQ(j["nodes"]["add"]["plugin_name"], "test");
}

TEST_F(Cli, NodesSplitsSentencesAndWraps) {
  auto r = gemflow({"nodes"});
  ASSERT_EQ(r.code, 0) << r.err;
  // The brief is the first sentence: "i.e." does not end it, "should." does.
  const std::string unwrapped = std::regex_replace(r.out, std::regex("\n +"), " ");
  EXPECT_CONTAINS(unwrapped, "checking cancellation every 10 ms, i.e. the way long nodes should. test.write_text");
  EXPECT_EQ(r.out.find("Used by the cancellation tests"), std::string::npos) << r.out;
  auto one = gemflow({"nodes", "test.write_text"});
  ASSERT_EQ(one.code, 0) << one.err;
  // The plugin is named by its file, not its path: a deep build or install folder must not
  // break the layout (regression: a long clone path made this line 105 columns).
  EXPECT_CONTAINS(one.out, "Plugin: libgemflow_testnodes.so\n");
  for (const auto* out : {&r.out, &one.out}) {
    std::istringstream is(*out);
    for (std::string line; std::getline(is, line);) {
      std::size_t cols = 0;
      for (char c : line) cols += (static_cast<unsigned char>(c) & 0xC0) != 0x80;
      EXPECT_LE(cols, 100u) << line;
    }
  }
  // Continuation lines of a list entry are indented under the text.
  EXPECT_TRUE(std::regex_search(r.out, std::regex(R"(\n  test\.sleep +Sleep — Waits[^\n]*\n {10,}\S)"))) << r.out;
}

// Every shipped workflow validates with the in-tree plugins (the install's plugin folder).
TEST(ShippedWorkflows, Validate) {
  const fs::path dir = fs::path(GEMFLOW_SOURCE_DIR) / "workflows";
  std::vector<fs::path> files;
  if (fs::is_directory(dir))
    for (const auto& e : fs::directory_iterator(dir))
      if (e.path().extension() == ".yaml") files.push_back(e.path());
  if (files.empty()) GTEST_SKIP() << "no workflows/*.yaml yet";
  for (const auto& f : files) {
    auto r = run_gemflow({"validate", f.string()});
    EXPECT_EQ(r.code, 0) << f << "\n" << r.err;
  }
}

// `validate` reads each restraint file a workflow names (io.read_restraints): it says which format
// the file is and what it holds, and fails naming the file and line where the file cannot be
// read — it said "valid" for a chemical-shift file and for text of no known format.
TEST(RestraintFiles, ValidateSaysTheFormatOrWhereTheFileCannotBeRead) {
  const fs::path dir = fs::temp_directory_path() / ("gemflow_validate_restraints_" + std::to_string(getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir);
  const auto workflow = [&](const std::string& name, const fs::path& file, const std::string& extra = "") {
    const fs::path p = dir / name;
    std::ofstream(p) << "gemflow: 1\nname: r\nnodes:\n  r: {type: io.read_restraints, params: {path: '" +
                            file.string() + "'" + extra + "}}\n";
    return p.string();
  };
  const fs::path nef = fs::path(GEMFLOW_SOURCE_DIR) / "sample_data" / "2kpu" / "DhR29B_2kpu.nef";
  const auto ok = run_gemflow({"validate", workflow("ok.yaml", nef)});
  EXPECT_EQ(ok.code, 0) << ok.err;
  EXPECT_CONTAINS(ok.out,
                  "node 'r', parameter 'path': restraint format nef (NEF: _nef_distance_restraint / "
                  "_nef_dihedral_restraint loops): 841 distance and 66 dihedral restraints");
  EXPECT_CONTAINS(ok.out, ": valid");

  std::ofstream(dir / "shifts.str")
      << "# shifts only\n\ndata_x\nsave_s\nloop_\n_Atom_chem_shift.Val\n1.0\nstop_\nsave_\n";
  const auto shifts = run_gemflow({"validate", workflow("s.yaml", dir / "shifts.str")});
  EXPECT_EQ(shifts.code, 2) << shifts.err;
  EXPECT_CONTAINS(shifts.err, "error: node 'r', parameter 'path': the node cannot read this file: " +
                                  (dir / "shifts.str").string() +
                                  ":3: a STAR file (NEF or NMR-STAR) without distance or dihedral restraint loops (it "
                                  "holds chemical shifts)");
  EXPECT_CONTAINS(shifts.out, "invalid");

  std::ofstream(dir / "u.txt") << "\nthese are no restraints\n";
  const auto unknown = run_gemflow({"validate", workflow("u.yaml", dir / "u.txt")});
  EXPECT_EQ(unknown.code, 2) << unknown.err;
  EXPECT_CONTAINS(unknown.err, (dir / "u.txt").string() + ":2: unknown restraint format");

  std::ofstream(dir / "x.tbl") << "assign (resid 1 and name HA) (resid 2 and name HA) 3.0 0.1\n";
  const auto broken = run_gemflow({"validate", workflow("x.yaml", dir / "x.tbl")});
  EXPECT_EQ(broken.code, 2) << broken.err;
  EXPECT_CONTAINS(broken.err, (dir / "x.tbl").string() + ":1: expected dplus");

  // The format parameter is what the node will use: the NEF file read as Xplor fails.
  const auto forced = run_gemflow({"validate", workflow("f.yaml", nef, ", format: xplor")});
  EXPECT_EQ(forced.code, 2) << forced.err;
  EXPECT_CONTAINS(forced.err, "DhR29B_2kpu.nef:1: unexpected 'data_PDBStat_converted_file': expected 'assign'");
  fs::remove_all(dir);
}

// The example of docs/workflow-format.md validates with the in-tree plugins, from a workflows/
// folder beside sample_data/ as its relative input path expects (break-test: it used test nodes
// that users do not have).
TEST(ShippedWorkflows, FormatDocumentationExample) {
  std::ifstream in(fs::path(GEMFLOW_SOURCE_DIR) / "docs" / "workflow-format.md");
  const std::string doc{std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
  const auto begin = doc.find("```yaml\n");
  ASSERT_NE(begin, std::string::npos);
  const auto end = doc.find("```", begin + 8);
  const fs::path dir = fs::temp_directory_path() / ("gemflow_doc_example_" + std::to_string(getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir / "workflows");
  fs::create_directory_symlink(fs::path(GEMFLOW_SOURCE_DIR) / "sample_data", dir / "sample_data");
  std::ofstream(dir / "workflows" / "example.yaml") << doc.substr(begin + 8, end - begin - 8);
  auto r = run_gemflow({"validate", (dir / "workflows" / "example.yaml").string()});
  fs::remove_all(dir);
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_CONTAINS(r.out, "valid ('spd-solve', 3 nodes, 2 links)");
  EXPECT_EQ(r.err.find("warning"), std::string::npos) << r.err;  // the input file is found
}

// ---- reliability (issue 34) ----------------------------------------------------------------

// Two runs into one output folder mixed their files, and provenance.json could describe either:
// the second is refused (exit 2) while the first runs.
TEST_F(Cli, ASecondRunIntoABusyOutputFolderIsRefused) {
  const auto slow =
      write("slow.yaml", "gemflow: 1\nname: slow\nnodes:\n  s: {type: test.sleep, params: {seconds: 60}}\n");
  const auto sum = write("sum.yaml", kSum);
  Result second;
  bool ran = false;
  Options opt;
  opt.timeout = 30;
  opt.on_output = [&](pid_t pid, const std::string& out, const std::string&) {
    if (!ran && out.find(R"("event":"progress")") != std::string::npos) {
      ran = true;
      second = gemflow({"run", sum.string(), "--out", "o"});
      kill(pid, SIGINT);
    }
  };
  const auto first = gemflow({"run", slow.string(), "--out", "o", "--json"}, opt);
  ASSERT_TRUE(ran) << first.out << first.err;
  EXPECT_EQ(second.code, 2) << second.out << second.err;
  EXPECT_CONTAINS(second.err, (dir_ / "o").string() + ": error: the output folder is in use by another run (pid ");
  EXPECT_CONTAINS(second.err, "(wait for it to end, or choose another output folder (--out))");
  EXPECT_FALSE(fs::exists(dir_ / "o" / "result.txt"));
  EXPECT_EQ(first.code, 3) << first.err;
  const auto prov = nlohmann::json::parse(slurp(dir_ / "o" / "provenance.json"));
  EXPECT_TRUE(prov["nodes"].contains("s")) << prov.dump();
  EXPECT_FALSE(prov["nodes"].contains("add")) << prov.dump();
  // once the first has ended, the folder can be used again
  EXPECT_EQ(gemflow({"run", sum.string(), "--out", "o"}).code, 0);
  EXPECT_EQ(slurp(dir_ / "o" / "result.txt"), "sum\n5\n");
}

// A run whose provenance record could not be written exited 0.
TEST_F(Cli, ARunWhoseProvenanceCannotBeWrittenFails) {
  const auto wf = write("w.yaml", kSum);
  fs::create_directories(dir_ / "o" / "provenance.json" / "x");  // a folder where the record goes
  const std::string why = "cannot write " + (dir_ / "o" / "provenance.json").string() + ": Is a directory";
  auto r = gemflow({"run", wf.string(), "--out", "o"});
  EXPECT_EQ(r.code, 1) << r.out << r.err;
  EXPECT_CONTAINS(r.err, "the provenance record was not written: " + why);
  EXPECT_CONTAINS(r.out, "Provenance:    not written (" + why + ")");
  EXPECT_EQ(slurp(dir_ / "o" / "result.txt"), "sum\n5\n");  // the results are there
  auto j = gemflow({"run", wf.string(), "--out", "o", "--json"});
  EXPECT_EQ(j.code, 1) << j.err;
  const auto summary = json_lines(j.out).back();
  EXPECT_EQ(summary["event"], "summary");
  EXPECT_EQ(summary["ok"], false);
  EXPECT_EQ(summary["exit_code"], 1);
  EXPECT_EQ(summary["error"], "the provenance record was not written: " + why);
}

}  // namespace

// A user's report: a CYANA .aco that appeared beside the .upl after a cached run was ignored (the
// cache answered with the restraints of before, exit 0). The companions looked for are in the
// key, absent ones too.
TEST_F(Cli, ACompanionFileThatAppearsLaterRunsTheReaderAgain) {
  const fs::path upl = dir_ / "r.upl";
  {
    std::ofstream(upl) << "   19 ASN  HN     20 THR  HN      3.50\n";
  }
  const auto wf = write("c.yaml", "gemflow: 1\nnodes:\n  r: {type: io.read_restraints, params: {path: " + upl.string() +
                                      "}}\n");
  Options opt;
  opt.env = {"GEMFLOW_NO_CACHE=0"};
  auto first = gemflow({"run", wf.string(), "--out", "o1", "--cache", "cache"}, opt);
  ASSERT_EQ(first.code, 0) << first.err;
  EXPECT_CONTAINS(first.out, "RestraintSet: 1 restraints\n");
  {
    std::ofstream(dir_ / "r.aco") << "   19 ASN  PHI   -147.7  -87.7\n";
  }
  auto second = gemflow({"run", wf.string(), "--out", "o2", "--cache", "cache", "--explain"}, opt);
  ASSERT_EQ(second.code, 0) << second.err;
  EXPECT_CONTAINS(second.out, "r.aco, changed");
  EXPECT_CONTAINS(second.out, "RestraintSet: 1 distance and 1 dihedral restraints");
}

// The lasting result cache: a second run into another folder takes every node from the cache
// (the writer runs again: its file is not in the new folder), and --explain says why.
TEST_F(Cli, ASecondRunComesFromTheResultCacheAndExplainSaysWhy) {
  const auto wf = write("w.yaml", kSum);
  Options opt;
  opt.env = {"GEMFLOW_NO_CACHE=0"};
  auto first = gemflow({"run", wf.string(), "--out", "o1", "--cache", "cache", "--explain"}, opt);
  ASSERT_EQ(first.code, 0) << first.out << first.err;
  EXPECT_CONTAINS(first.out, "Why:\n  a: ran: first run of this node (not in the cache)\n");

  auto second = gemflow({"run", wf.string(), "--out", "o2", "--cache", "cache", "--json"}, opt);
  ASSERT_EQ(second.code, 0) << second.err;
  const auto summary = json_lines(second.out).back();
  for (const char* id : {"a", "b", "add"}) {
    EXPECT_EQ(summary["nodes"][id]["state"], "cached") << id;
    EXPECT_EQ(summary["nodes"][id]["why"], "from the cache") << id;
  }
  EXPECT_EQ(summary["nodes"]["write"]["state"], "done");
  EXPECT_EQ(summary["nodes"]["write"]["why"], "a file it wrote is missing or was changed since");
  EXPECT_EQ(slurp(dir_ / "o2" / "result.txt"), "sum\n5\n");

  auto third = gemflow({"run", wf.string(), "--out", "o3", "--cache", "cache", "--set", "a.value=4", "--explain"}, opt);
  ASSERT_EQ(third.code, 0) << third.err;
  EXPECT_CONTAINS(third.out, "  a: ran: parameter value 2.0 → 4.0\n  b: from the cache\n  add: ran: input a changed\n");
  EXPECT_EQ(slurp(dir_ / "o3" / "result.txt"), "sum\n7\n");

  auto info = gemflow({"cache", "info", "--cache", "cache"}, opt);
  EXPECT_EQ(info.code, 0) << info.err;
  EXPECT_CONTAINS(info.out, "entries");
  EXPECT_EQ(gemflow({"cache", "clear", "--cache", "cache"}, opt).code, 0);
  auto none = gemflow({"run", wf.string(), "--out", "o4", "--cache", "cache", "--json"}, opt);
  EXPECT_EQ(json_lines(none.out).back()["nodes"]["add"]["state"], "done");
  // --no-cache neither reads nor writes
  auto off = gemflow({"run", wf.string(), "--out", "o5", "--no-cache", "--json"}, opt);
  EXPECT_EQ(json_lines(off.out).back()["nodes"]["add"]["state"], "done");
  EXPECT_EQ(gemflow({"cache", "prune", "--cache", "cache", "--max-size", "ten"}, opt).code, 2);
}

// A run killed with SIGKILL (no chance to clean up) leaves its journal; the next run says so and
// takes the nodes that had finished from the cache.
TEST_F(Cli, AKilledRunIsReportedAndItsFinishedNodesAreNotRecomputed) {
  const auto wf = write("w.yaml", R"(gemflow: 1
name: killed
nodes:
  a: {type: test.constant, params: {value: 2}}
  s: {type: test.sleep, params: {seconds: 60}}
links:
  - a.value -> s.in
)");
  Options opt;
  opt.env = {"GEMFLOW_NO_CACHE=0"};
  opt.timeout = 30;
  bool killed = false;
  opt.on_output = [&](pid_t pid, const std::string& out, const std::string&) {
    if (!killed && out.find(R"("event":"progress")") != std::string::npos &&
        out.find(R"("node":"s")") != std::string::npos) {
      killed = true;
      kill(pid, SIGKILL);
    }
  };
  auto first = gemflow({"run", wf.string(), "--out", "o", "--cache", "cache", "--json"}, opt);
  ASSERT_TRUE(killed) << first.out << first.err;
  EXPECT_EQ(first.code, 128 + SIGKILL);
  EXPECT_TRUE(fs::exists(dir_ / "o" / ".gemflow-journal.jsonl"));
  EXPECT_FALSE(fs::exists(dir_ / "o" / "provenance.json"));

  opt.on_output = nullptr;
  auto second = gemflow({"run", wf.string(), "--out", "o", "--cache", "cache", "--set", "s.seconds=0", "--json"}, opt);
  ASSERT_EQ(second.code, 0) << second.err;
  EXPECT_CONTAINS(second.out, "the last run into " + (dir_ / "o").string() +
                                  " stopped before it finished (1 node had finished: a); their results are taken "
                                  "from the result cache");
  EXPECT_EQ(json_lines(second.out).back()["nodes"]["a"]["state"], "cached");
  EXPECT_FALSE(fs::exists(dir_ / "o" / ".gemflow-journal.jsonl"));
}

// A node that crashes the whole process (a segfault or an abort inside a library) loses nothing
// that had finished: the journal names it and the next run takes it from the cache.
TEST_F(Cli, ANodeThatCrashesTheProcessLosesNothingAlreadyComputed) {
  const auto wf = write("w.yaml", R"(gemflow: 1
name: crash
nodes:
  a: {type: test.constant, params: {value: 2}}
  f: {type: test.fail}
links:
  - a.value -> f.in
)");
  Options opt;
  opt.env = {"GEMFLOW_NO_CACHE=0"};
  opt.timeout = 30;
  for (const std::string how : {"segfault", "abort"}) {
    SCOPED_TRACE(how);
    const std::string out = "o_" + how, cache = "cache_" + how;
    auto first = gemflow({"run", wf.string(), "--out", out, "--cache", cache, "--set", "f.how=" + how, "--json"}, opt);
    // Under AddressSanitizer (abort_on_error) a segfault ends in abort() too.
    EXPECT_TRUE(first.code == 128 + SIGSEGV || first.code == 128 + SIGABRT) << first.code << first.err;
    EXPECT_TRUE(fs::exists(dir_ / out / ".gemflow-journal.jsonl"));
    EXPECT_FALSE(fs::exists(dir_ / out / "provenance.json"));

    auto second = gemflow({"run", wf.string(), "--out", out, "--cache", cache, "--json"}, opt);
    EXPECT_EQ(second.code, 1) << second.err;
    EXPECT_CONTAINS(second.out, "the last run into " + (dir_ / out).string() +
                                    " stopped before it finished (1 node had finished: a); their results are taken "
                                    "from the result cache");
    EXPECT_EQ(json_lines(second.out).back()["nodes"]["a"]["state"], "cached");
    EXPECT_EQ(json_lines(second.out).back()["nodes"]["f"]["error"], "node 'f' (test.fail): intentional failure");
    EXPECT_TRUE(fs::exists(dir_ / out / "provenance.json"));
  }
}

// `gemflow upgrade` rewrites an old workflow at the current versions and keeps the original.
TEST_F(Cli, UpgradeMigratesAnOldWorkflowAndKeepsTheOriginal) {
  const std::string old =
      "gemflow: 1\nnodes:\n  m: {type: test.migrated, version: 1, params: {scale_factor: 2, tolerance: 5}}\n";
  const auto wf = write("old.yaml", old);
  auto r = gemflow({"upgrade", wf.string()});
  ASSERT_EQ(r.code, 0) << r.out << r.err;
  EXPECT_CONTAINS(r.err, "migrated from version 1 to 2 of 'test.migrated': parameter 'scale_factor' is now 'factor'");
  EXPECT_CONTAINS(r.out, "upgraded (1 node)");
  EXPECT_EQ(r.err.find("'mode'"), std::string::npos) << "no note for a parameter the node does not set";
  EXPECT_EQ(slurp(dir_ / "old.yaml.bak"), old);
  const std::string now = slurp(wf);
  EXPECT_CONTAINS(now, "version: 3");
  EXPECT_CONTAINS(now, "factor: 2");
  EXPECT_CONTAINS(now, "tolerance: 0.005");
  auto again = gemflow({"upgrade", wf.string()});
  EXPECT_EQ(again.code, 0);
  EXPECT_CONTAINS(again.out, "every node is at its current version; not changed");
  auto run = gemflow({"run", wf.string(), "--out", "o", "--json"});
  EXPECT_EQ(run.code, 0) << run.err;
}

// A hand-written file keeps its comments and spelling through `gemflow upgrade`: only the
// migrated node's line changes. `gemflow fmt` writes the canonical form on request.
TEST_F(Cli, UpgradeKeepsCommentsAndFmtFormats) {
  const std::string old =
      "# my analysis\ngemflow: 1\nnodes:\n  c: {type: test.constant, params: {value: 1e-3}}  # tiny\n"
      "  m: {type: test.migrated, version: 1, params: {scale_factor: 2, tolerance: 5}}\n";
  const auto wf = write("old.yaml", old);
  auto r = gemflow({"upgrade", wf.string()});
  ASSERT_EQ(r.code, 0) << r.out << r.err;
  const std::string now = slurp(wf);
  EXPECT_CONTAINS(now,
                  "# my analysis\ngemflow: 1\nnodes:\n  c: {type: test.constant, params: {value: 1e-3}}  # tiny\n");
  EXPECT_CONTAINS(now, "  m: {type: test.migrated, version: 3, params: {factor: 2");
  auto check = gemflow({"fmt", "--check", wf.string()});
  EXPECT_EQ(check.code, 1);
  EXPECT_CONTAINS(check.out, "not in canonical form");
  EXPECT_EQ(slurp(wf), now) << "--check changes nothing";
  auto f = gemflow({"fmt", wf.string()});
  ASSERT_EQ(f.code, 0) << f.err;
  EXPECT_CONTAINS(slurp(wf), "  c: {type: test.constant, version: 1, params: {value: 0.001}}\n");
  EXPECT_EQ(gemflow({"fmt", "--check", wf.string()}).code, 0);
  const auto bad = write("bad.yaml", "gemflow: 1\nnodes:\n  x: {type: test.nope}\n");
  EXPECT_EQ(gemflow({"fmt", bad.string()}).code, 2);
  EXPECT_EQ(slurp(bad), "gemflow: 1\nnodes:\n  x: {type: test.nope}\n");
}

// A sub-workflow runs from the command line: inner nodes as "sub/node" in the summary, --set
// and --until reach them, its output files go under OUT/sub/.
TEST_F(Cli, SubWorkflowsRunWithPrefixedNodes) {
  fs::create_directories(dir_ / "lib");
  write("lib/inner.yaml",
        "gemflow: 1\nnodes:\n  add: {type: test.add}\n  w: {type: test.write_text, params: {path: s.txt, text: hi}}\n"
        "links:\n  - add.sum -> w.value\ninputs: {x: [add.a, add.b]}\noutputs: {sum: add.sum}\n");
  const auto wf = write("outer.yaml",
                        "gemflow: 1\nnodes:\n  c: {type: test.constant, params: {value: 2}}\n"
                        "  sub: {type: workflow, params: {path: lib/inner.yaml}}\n  last: {type: test.add}\n"
                        "links:\n  - c.value -> sub.x\n  - sub.sum -> last.a\n  - sub.sum -> last.b\n");
  auto r = gemflow({"run", wf.string(), "--out", "o", "--json", "--set", "sub/w.text=changed"});
  ASSERT_EQ(r.code, 0) << r.out << r.err;
  const auto summary = json_lines(r.out).back();
  EXPECT_EQ(summary["nodes"]["sub/add"]["state"], "done");
  EXPECT_EQ(summary["nodes"]["last"]["state"], "done");
  EXPECT_CONTAINS(slurp(dir_ / "o" / "sub" / "s.txt"), "changed");
  auto until = gemflow({"run", wf.string(), "--out", "o2", "--json", "--until", "sub/add"});
  ASSERT_EQ(until.code, 0) << until.err;
  EXPECT_FALSE(json_lines(until.out).back()["nodes"].contains("last"));
  write("lib/inner.yaml", "gemflow: 1\nnodes:\n  add: {type: test.add, params: {nope: 1}}\noutputs: {sum: add.sum}\n");
  auto bad = gemflow({"validate", wf.string()});
  EXPECT_EQ(bad.code, 2);
  EXPECT_CONTAINS(bad.err + bad.out, "inner.yaml:3:");
  EXPECT_CONTAINS(bad.err + bad.out, "node 'sub/add', parameter 'nope'");
}

// A cached writer whose file was overwritten by a run with other values must write it again:
// taken from the cache, it would leave the other run's result in place (a wrong answer, exit 0).
TEST_F(Cli, ACachedWriterRewritesAFileAnotherRunChanged) {
  const auto wf = write("w.yaml", kSum);
  Options opt;
  opt.env = {"GEMFLOW_NO_CACHE=0"};
  ASSERT_EQ(gemflow({"run", wf.string(), "--out", "o", "--cache", "cache"}, opt).code, 0);
  EXPECT_EQ(slurp(dir_ / "o" / "result.txt"), "sum\n5\n");
  ASSERT_EQ(gemflow({"run", wf.string(), "--out", "o", "--cache", "cache", "--set", "a.value=4"}, opt).code, 0);
  EXPECT_EQ(slurp(dir_ / "o" / "result.txt"), "sum\n7\n");
  auto back = gemflow({"run", wf.string(), "--out", "o", "--cache", "cache", "--json"}, opt);
  ASSERT_EQ(back.code, 0) << back.err;
  EXPECT_EQ(slurp(dir_ / "o" / "result.txt"), "sum\n5\n");
  const auto summary = json_lines(back.out).back();
  EXPECT_EQ(summary["nodes"]["add"]["state"], "cached");
  EXPECT_EQ(summary["nodes"]["write"]["state"], "done");
  // Unchanged since: the writer too comes from the cache.
  auto again = gemflow({"run", wf.string(), "--out", "o", "--cache", "cache", "--json"}, opt);
  EXPECT_EQ(json_lines(again.out).back()["nodes"]["write"]["state"], "cached");
  EXPECT_EQ(slurp(dir_ / "o" / "result.txt"), "sum\n5\n");
}
