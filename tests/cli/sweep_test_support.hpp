#pragma once
// Helpers of the sweep tests (sweep_cli_test.cpp, scaleout_test.cpp): run the built `gemflow`
// as a subprocess with its output captured, read a sweep folder's table.
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

extern char** environ;

namespace gemflow::sweeptest {
namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

#define EXPECT_CONTAINS(haystack, needle) \
  EXPECT_NE((haystack).find(needle), std::string::npos) << "expected to find: " << (needle) << "\nin:\n" << (haystack)

struct Result {
  int code = -1;  ///< exit status, or 128 + signal
  std::string out, err;
  double seconds = 0.0;
};

struct Options {
  fs::path cwd;
  double timeout = 60.0;
  std::vector<std::string> env;  ///< "NAME=value", replacing inherited ones
  /// Called whenever output arrived (may signal the child).
  std::function<void(pid_t, const std::string& out, const std::string& err)> on_output;
};

/// The environment of a child: inherited, but hermetic (no user plugin folders, no colours, the
/// test's own cache home, no result cache unless asked), then `extra`.
inline std::vector<std::string> child_env(const std::vector<std::string>& extra) {
  std::vector<std::string> env;
  for (char** e = environ; *e; ++e) {
    const std::string v = *e;
    if (v.starts_with("GEMFLOW_PLUGIN_PATH=") || v.starts_with("NO_COLOR=") || v.starts_with("TERM=") ||
        v.starts_with("XDG_CACHE_HOME=") || v.starts_with("GEMFLOW_NO_CACHE=") || v.starts_with("GEMFLOW_CACHE_DIR=") ||
        v.starts_with("SLURM_") || v.starts_with("OMPI_") || v.starts_with("PMI_"))
      continue;
    env.push_back(v);
  }
  env.push_back("NO_COLOR=1");
  env.push_back("XDG_CACHE_HOME=" +
                (fs::temp_directory_path() / ("gemflow_sweep_test_cache_" + std::to_string(getpid()))).string());
  env.push_back("GEMFLOW_NO_CACHE=1");
  for (const auto& e : extra) {
    const std::string key = e.substr(0, e.find('=') + 1);
    std::erase_if(env, [&](const std::string& v) { return v.starts_with(key); });
    env.push_back(e);
  }
  return env;
}

/// Runs `argv` (argv[0] found on PATH when not a path) with stdout and stderr captured.
inline Result run_process(const std::vector<std::string>& args, const Options& opt = {}) {
  int out_pipe[2], err_pipe[2];
  if (pipe2(out_pipe, O_CLOEXEC) != 0 || pipe2(err_pipe, O_CLOEXEC) != 0) throw std::runtime_error("pipe");
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_adddup2(&fa, out_pipe[1], 1);
  posix_spawn_file_actions_adddup2(&fa, err_pipe[1], 2);
  if (!opt.cwd.empty()) posix_spawn_file_actions_addchdir_np(&fa, opt.cwd.c_str());
  std::vector<std::string> argv_s = args;
  std::vector<char*> argv;
  for (auto& a : argv_s) argv.push_back(a.data());
  argv.push_back(nullptr);
  std::vector<std::string> env_s = child_env(opt.env);
  std::vector<char*> envp;
  for (auto& e : env_s) envp.push_back(e.data());
  envp.push_back(nullptr);
  // posix_spawnp searches the PATH of this process; the child gets env_s
  pid_t pid = 0;
  const auto start = Clock::now();
  const int rc = posix_spawnp(&pid, argv[0], &fa, nullptr, argv.data(), envp.data());
  posix_spawn_file_actions_destroy(&fa);
  close(out_pipe[1]);
  close(err_pipe[1]);
  if (rc != 0) {
    close(out_pipe[0]);
    close(err_pipe[0]);
    throw std::runtime_error("cannot start " + args.front() + ": " + std::strerror(rc));
  }
  Result r;
  pollfd fds[2] = {{out_pipe[0], POLLIN, 0}, {err_pipe[0], POLLIN, 0}};
  int open_fds = 2;
  bool killed = false;
  while (open_fds > 0) {
    if (!killed && std::chrono::duration<double>(Clock::now() - start).count() > opt.timeout) {
      kill(pid, SIGKILL);
      killed = true;
    }
    if (poll(fds, 2, 50) < 0 && errno != EINTR) break;
    for (int i = 0; i < 2; ++i) {
      if (fds[i].fd < 0 || !(fds[i].revents & (POLLIN | POLLHUP | POLLERR))) continue;
      char buf[4096];
      const ssize_t n = read(fds[i].fd, buf, sizeof buf);
      if (n > 0) {
        (i == 0 ? r.out : r.err).append(buf, static_cast<std::size_t>(n));
      } else {
        close(fds[i].fd);
        fds[i].fd = -1;
        --open_fds;
      }
    }
    if (opt.on_output) opt.on_output(pid, r.out, r.err);
  }
  int status = 0;
  waitpid(pid, &status, 0);
  r.seconds = std::chrono::duration<double>(Clock::now() - start).count();
  r.code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  return r;
}

inline Result run_gemflow(std::vector<std::string> args, const Options& opt = {}) {
  args.insert(args.begin(), GEMFLOW_EXE);
  return run_process(args, opt);
}

inline std::string slurp(const fs::path& p) {
  std::ifstream f(p, std::ios::binary);
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

/// The names in a folder, for failure messages.
inline std::string list(const fs::path& dir) {
  std::string s;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(dir, ec)) s += e.path().filename().string() + "\n";
  return s;
}

inline fs::path fresh_dir(const std::string& stem) {
  static int counter = 0;
  const fs::path d =
      fs::temp_directory_path() / (stem + "_" + std::to_string(getpid()) + "_" + std::to_string(counter++));
  fs::remove_all(d);
  fs::create_directories(d);
  return d;
}

/// The text test.write_text writes for a number (std::to_chars: shortest).
inline std::string number_text(double x) {
  std::ostringstream s;
  s.precision(17);
  s << x;
  return s.str();
}

struct Row {
  std::string state, error;
  std::map<std::string, std::string> values;
  std::map<std::string, double> numbers;
};

/// OUT/sweep.json by point name.
inline std::map<std::string, Row> read_table(const fs::path& out) {
  std::map<std::string, Row> rows;
  const auto j = nlohmann::json::parse(slurp(out / "sweep.json"));
  for (const auto& p : j.at("points")) {
    Row r;
    r.state = p.at("state");
    r.error = p.value("error", "");
    for (const auto& [k, v] : p.at("values").items()) r.values[k] = v;
    for (const auto& [k, v] : p.at("numbers").items()) r.numbers[k] = v;
    rows[p.at("point")] = r;
  }
  return rows;
}

}  // namespace gemflow::sweeptest
