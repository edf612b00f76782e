// Sweeps on a real scheduler and under MPI (CTest label slurm):
//
// - Slurm: a single-node cluster on this machine (Debian's slurm-wlm and munge): a generated
//   munge key and slurm.conf (this machine's hostname and CPU count, state, spool and logs under a
//   temporary folder), munged, slurmctld and slurmd started by the fixture and stopped after. A
//   16-point sweep goes in through `gemflow sweep submit` as a job array; every point must equal
//   the serial run's. One task's point is then killed while it runs (SIGKILL to the process that
//   holds the point's lock), `sweep status` must find it interrupted, and `sweep submit
//   --retry-failed` must run that point alone again.
// - MPI: `mpirun -n 2 --oversubscribe gemflow run --sweep ...` splits the points by rank.
//
// The tests skip, saying why, only when the daemons (or mpirun) cannot run here: the packages
// are missing (packaging/debian-packages.txt lists them), or the daemons need root and this is
// not root. A daemon that is there but fails is a test failure, with its log.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/file.h>
#include <sys/socket.h>

#include "sweep_test_support.hpp"

namespace gemflow::sweeptest {
namespace {

// c → s (sleeps: the window in which the test kills a point) → w writes out.txt; total = c + k
// is the point's key number.
constexpr const char* kWorkflow = R"(gemflow: 1
name: scaleout
nodes:
  c: {type: test.constant, params: {value: 1}}
  k: {type: test.constant, params: {value: 0.5}}
  s: {type: test.sleep, params: {seconds: 0.3}}
  total: {type: test.add}
  w: {type: test.write_text, params: {path: out.txt, text: point}}
links:
  - c.value -> s.in
  - s.out -> w.value
  - c.value -> total.a
  - k.value -> total.b
)";

std::string find_program(const std::string& name) {
  for (const char* dir : {"/usr/sbin", "/usr/bin", "/sbin", "/bin", "/usr/local/sbin", "/usr/local/bin"}) {
    const fs::path p = fs::path(dir) / name;
    if (access(p.c_str(), X_OK) == 0) return p.string();
  }
  return {};
}

int free_port() {
  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  a.sin_port = 0;
  socklen_t len = sizeof a;
  int port = 0;
  if (bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0 &&
      getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len) == 0)
    port = ntohs(a.sin_port);
  close(fd);
  return port;
}

std::string hostname() {
  char buf[256] = {};
  gethostname(buf, sizeof buf - 1);
  return buf;
}

/// The serial run's table and output files, and a sweep folder's, must agree point by point.
void expect_same_points(const fs::path& serial, const fs::path& other, std::size_t count) {
  const auto a = read_table(serial), b = read_table(other);
  ASSERT_EQ(a.size(), count);
  ASSERT_EQ(b.size(), count) << slurp(other / "sweep.csv");
  for (const auto& [name, p] : a) {
    ASSERT_TRUE(b.contains(name)) << name;
    EXPECT_EQ(p.state, "done") << name;
    EXPECT_EQ(b.at(name).state, "done") << name << ": " << b.at(name).error;
    EXPECT_EQ(b.at(name).values, p.values) << name;
    EXPECT_EQ(b.at(name).numbers, p.numbers) << name;
    EXPECT_FALSE(p.numbers.empty()) << name;
    EXPECT_EQ(slurp(other / "points" / name / "out.txt"), slurp(serial / "points" / name / "out.txt")) << name;
  }
}

/// A single-node Slurm cluster for the test suite's lifetime.
class SlurmCluster {
 public:
  /// Starts it; "" when running, else why it cannot run here (the test skips with it).
  std::string start() {
    for (const char* p : {"munged", "slurmctld", "slurmd", "sbatch", "scontrol", "sinfo", "squeue"})
      if (find_program(p).empty())
        return std::string("Slurm cannot run here: ") + p +
               " is not installed (Debian packages slurm-wlm and munge, listed in packaging/debian-packages.txt)";
    if (geteuid() != 0) return "Slurm cannot run here: the test cluster runs munged, slurmctld and slurmd as root";
    dir_ = fresh_dir("gemflow_slurm");
    for (const char* d : {"munge", "state", "spool", "log"}) fs::create_directories(dir_ / d);
    {
      std::ofstream key(dir_ / "munge" / "munge.key", std::ios::binary);
      std::ifstream rnd("/dev/urandom", std::ios::binary);
      std::vector<char> buf(1024);
      rnd.read(buf.data(), static_cast<std::streamsize>(buf.size()));
      key.write(buf.data(), static_cast<std::streamsize>(buf.size()));
    }
    fs::permissions(dir_ / "munge" / "munge.key", fs::perms::owner_read, fs::perm_options::replace);
    fs::permissions(dir_ / "munge", fs::perms::owner_all, fs::perm_options::replace);
    const std::string host = hostname();
    const long cpus = sysconf(_SC_NPROCESSORS_ONLN);
    const std::string d = dir_.string();
    std::ofstream(dir_ / "slurm.conf") << "# gemflow test cluster (tests/cli/scaleout_test.cpp)\n"
                                       << "ClusterName=gemflowtest\n"
                                       << "SlurmctldHost=" << host << "(127.0.0.1)\n"
                                       << "SlurmUser=root\nSlurmdUser=root\n"
                                       << "SlurmctldPort=" << free_port() << "\nSlurmdPort=" << free_port() << "\n"
                                       << "AuthType=auth/munge\nCredType=cred/munge\n"
                                       << "AuthInfo=socket=" << d << "/munge/munge.socket\n"
                                       << "StateSaveLocation=" << d << "/state\nSlurmdSpoolDir=" << d << "/spool\n"
                                       << "SlurmctldPidFile=" << d << "/slurmctld.pid\nSlurmdPidFile=" << d
                                       << "/slurmd.pid\n"
                                       << "SlurmctldLogFile=" << d << "/log/slurmctld.log\nSlurmdLogFile=" << d
                                       << "/log/slurmd.log\n"
                                       << "ProctrackType=proctrack/linuxproc\nTaskPlugin=task/none\n"
                                       << "SelectType=select/cons_tres\nSelectTypeParameters=CR_CPU\n"
                                       << "SchedulerType=sched/builtin\nReturnToService=2\nMpiDefault=none\n"
                                       << "JobAcctGatherType=jobacct_gather/none\n"
                                       << "AccountingStorageType=accounting_storage/none\nJobCompType=jobcomp/none\n"
                                       << "MinJobAge=600\nKillWait=2\n"
                                       << "NodeName=" << host << " NodeAddr=127.0.0.1 CPUs=" << cpus
                                       << " State=UNKNOWN\n"
                                       << "PartitionName=test Nodes=" << host
                                       << " Default=YES MaxTime=INFINITE State=UP\n";
    env_ = {"SLURM_CONF=" + d + "/slurm.conf"};
    Options o;
    o.env = env_;
    o.timeout = 20;
    auto r = run_process({find_program("munged"), "--force", "--socket=" + d + "/munge/munge.socket",
                          "--key-file=" + d + "/munge/munge.key", "--log-file=" + d + "/log/munged.log",
                          "--pid-file=" + d + "/munge/munged.pid", "--seed-file=" + d + "/munge/munged.seed"},
                         o);
    if (r.code != 0) return "munged cannot start here: " + r.err + slurp(dir_ / "log/munged.log");
    started_ = true;
    r = run_process({find_program("slurmctld"), "-i"}, o);
    if (r.code != 0) return "slurmctld cannot start here: " + r.err + slurp(dir_ / "log/slurmctld.log");
    r = run_process({find_program("slurmd")}, o);
    if (r.code != 0) return "slurmd cannot start here: " + r.err + slurp(dir_ / "log/slurmd.log");
    return {};
  }

  /// Waits until the node takes jobs; false (with the logs in `why`) after 30 s.
  bool wait_idle(std::string& why) {
    const auto t0 = Clock::now();
    while (Clock::now() - t0 < std::chrono::seconds(30)) {
      const auto r = run("sinfo", {"-h", "-o", "%t"});
      if (r.out.starts_with("idle")) return true;
      std::this_thread::sleep_for(std::chrono::milliseconds(200));
    }
    why = "the Slurm node did not become idle within 30 s\n--- slurmctld.log\n" + slurp(dir_ / "log/slurmctld.log") +
          "\n--- slurmd.log\n" + slurp(dir_ / "log/slurmd.log");
    return false;
  }

  Result run(const std::string& program, std::vector<std::string> args, Options o = {}) const {
    args.insert(args.begin(), find_program(program));
    o.env.insert(o.env.end(), env_.begin(), env_.end());
    return run_process(args, o);
  }

  /// Waits until no task of `job` is queued or running.
  bool wait_job(const std::string& job, double seconds) const {
    const auto t0 = Clock::now();
    while (std::chrono::duration<double>(Clock::now() - t0).count() < seconds) {
      const auto r = run("squeue", {"-h", "-j", job, "-o", "%i %t"});
      if (r.code == 0 && r.out.find_first_not_of(" \n") == std::string::npos) return true;
      std::this_thread::sleep_for(std::chrono::milliseconds(200));
    }
    return false;
  }

  [[nodiscard]] const std::vector<std::string>& env() const { return env_; }
  [[nodiscard]] std::string logs() const {
    return "--- slurmctld.log\n" + slurp(dir_ / "log/slurmctld.log") + "\n--- slurmd.log\n" +
           slurp(dir_ / "log/slurmd.log");
  }

  void stop() {
    if (!started_) return;
    (void)run("scontrol", {"shutdown"});
    for (const char* pid_file : {"slurmctld.pid", "slurmd.pid", "munge/munged.pid"}) {
      const std::string text = slurp(dir_ / pid_file);
      const pid_t pid = text.empty() ? 0 : static_cast<pid_t>(std::stol(text));
      if (pid <= 0) continue;
      // scontrol shutdown ends the Slurm daemons; munged (and a daemon that did not stop) get SIGTERM
      for (int k = 0; k < 50 && kill(pid, 0) == 0; ++k) {
        if (k == 10 || std::string(pid_file) == "munge/munged.pid") kill(pid, SIGTERM);
        std::this_thread::sleep_for(std::chrono::milliseconds(100));
      }
      if (kill(pid, 0) == 0) kill(pid, SIGKILL);
    }
    started_ = false;
    std::error_code ec;
    fs::remove_all(dir_, ec);
  }
  ~SlurmCluster() { stop(); }

 private:
  fs::path dir_;
  std::vector<std::string> env_;
  bool started_ = false;
};

class Scaleout : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fresh_dir("gemflow_scaleout");
    std::ofstream(dir_ / "w.yaml") << kWorkflow;
  }
  void TearDown() override {
    std::error_code ec;
    if (!HasFailure()) fs::remove_all(dir_, ec);
  }
  std::vector<std::string> gemflow_args(std::vector<std::string> args) const {
    args.insert(args.begin(), {GEMFLOW_EXE, "--plugin-path", GEMFLOW_TESTNODES_DIR});
    return args;
  }
  fs::path dir_;
};

/// The pid in a point's lock file while a run holds the lock; 0 otherwise.
pid_t running_point(const fs::path& points, std::string& name) {
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(points, ec)) {
    const fs::path lock = e.path() / ".gemflow.lock";
    const int fd = open(lock.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) continue;
    const bool held = flock(fd, LOCK_SH | LOCK_NB) != 0;
    close(fd);
    if (!held) continue;
    const std::string text = slurp(lock);
    if (text.empty()) continue;
    name = e.path().filename().string();
    return static_cast<pid_t>(std::stol(text));
  }
  return 0;
}

TEST_F(Scaleout, SlurmJobArrayEqualsTheSerialRunAndRetryFailedRerunsAKilledPoint) {
  SlurmCluster slurm;
  const std::string why = slurm.start();
  if (!why.empty()) GTEST_SKIP() << why;
  std::string not_idle;
  ASSERT_TRUE(slurm.wait_idle(not_idle)) << not_idle;

  const std::vector<std::string> sweep{"--sweep", "c.value=1..8", "--sweep", "k.value=0.25,0.5"};  // 16 points
  auto with = [&](std::vector<std::string> head) {
    head.insert(head.end(), sweep.begin(), sweep.end());
    return gemflow_args(head);
  };
  Options here;
  here.cwd = dir_;
  auto serial = run_process(with({"run", "w.yaml", "--out", "serial"}), here);
  ASSERT_EQ(serial.code, 0) << serial.err;

  // the tasks share a result cache on the (here: local) shared file system
  Options submit_opt = here;
  submit_opt.env = slurm.env();
  submit_opt.env.push_back("GEMFLOW_NO_CACHE=0");
  const std::string cache = (dir_ / "cache").string();
  auto sub = run_process(with({"sweep", "submit", "w.yaml", "--out", "array", "--cache", cache, "--time", "5:00"}),
                         submit_opt);
  ASSERT_EQ(sub.code, 0) << sub.out << sub.err;
  const auto at = sub.out.find("Submitted job array ");
  ASSERT_NE(at, std::string::npos) << sub.out;
  const std::string job = sub.out.substr(at + 20, sub.out.find(' ', at + 20) - at - 20);
  EXPECT_CONTAINS(sub.out, "(16 tasks, 16 points)");

  // kill one task's point while it runs: SIGKILL to the gemflow process holding its lock
  std::string killed_point;
  pid_t killed_pid = 0;
  const auto t0 = Clock::now();
  while (!killed_pid && Clock::now() - t0 < std::chrono::seconds(40)) {
    if (const pid_t pid = running_point(dir_ / "array" / "points", killed_point)) {
      if (kill(pid, SIGKILL) == 0) killed_pid = pid;
    } else {
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
  }
  ASSERT_NE(killed_pid, 0) << "no point was seen running\n" << slurm.logs();
  ASSERT_TRUE(slurm.wait_job(job, 50)) << "job " << job << " did not end\n" << slurm.logs();

  Options plain = here;
  auto st = run_process(gemflow_args({"sweep", "status", "array"}), plain);
  EXPECT_EQ(st.code, 0);
  EXPECT_CONTAINS(st.out, "15 done, 1 interrupted");
  EXPECT_CONTAINS(st.out, "interrupted  " + killed_point);
  // every log of the tasks is there
  std::size_t logs = 0;
  for (const auto& e : fs::directory_iterator(dir_ / "array/slurm/logs"))
    logs += e.path().extension() == ".log" ? 1 : 0;
  EXPECT_EQ(logs, 16u);

  auto retry = run_process(with({"sweep", "submit", "w.yaml", "--out", "array", "--cache", cache, "--retry-failed"}),
                           submit_opt);
  ASSERT_EQ(retry.code, 0) << retry.out << retry.err;
  EXPECT_CONTAINS(retry.out, "(1 task, 1 point to retry)");
  const auto at2 = retry.out.find("Submitted job array ");
  ASSERT_NE(at2, std::string::npos) << retry.out;
  const std::string job2 = retry.out.substr(at2 + 20, retry.out.find(' ', at2 + 20) - at2 - 20);
  ASSERT_TRUE(slurm.wait_job(job2, 30)) << slurm.logs();
  st = run_process(gemflow_args({"sweep", "status", "array"}), plain);
  EXPECT_CONTAINS(st.out, "16 done");
  // only the killed point ran again
  const auto point = nlohmann::json::parse(slurp(dir_ / "array/points" / killed_point / "point.json"));
  EXPECT_EQ(point["state"], "done");
  auto coll = run_process(gemflow_args({"sweep", "collect", "array"}), plain);
  ASSERT_EQ(coll.code, 0);
  expect_same_points(dir_ / "serial", dir_ / "array", 16);
}

TEST_F(Scaleout, MpiRanksSplitTheSweep) {
  const std::string mpirun = find_program("mpirun");
  if (mpirun.empty()) GTEST_SKIP() << "mpirun cannot run here: Open MPI is not installed (Debian package openmpi-bin)";
  Options here;
  here.cwd = dir_;
  // under the test's own timeout; each rank runs 4 of the 8 points of 0.3 s
  here.timeout = 45;
  const std::vector<std::string> sweep{"--sweep", "c.value=1..8"};
  auto serial_args = gemflow_args({"run", "w.yaml", "--out", "serial", "--set", "s.seconds=0"});
  serial_args.insert(serial_args.end(), sweep.begin(), sweep.end());
  ASSERT_EQ(run_process(serial_args, here).code, 0);

  std::vector<std::string> args{mpirun, "-n", "2", "--oversubscribe"};
  if (geteuid() == 0) args.push_back("--allow-run-as-root");
  for (const auto& a : gemflow_args({"run", "w.yaml", "--out", "mpi", "--set", "s.seconds=0"})) args.push_back(a);
  args.insert(args.end(), sweep.begin(), sweep.end());
  // Open MPI as root in a container: no rsh agent and no shared-memory checks needed on one node
  here.env = {"OMPI_MCA_plm_rsh_agent=", "OMPI_ALLOW_RUN_AS_ROOT=1", "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1",
              "OMPI_MCA_btl_vader_single_copy_mechanism=none"};
  const auto r = run_process(args, here);
  ASSERT_EQ(r.code, 0) << r.out << r.err;
  // each rank ran its own half, named by Open MPI's variables
  EXPECT_CONTAINS(r.err, "shard 0/2 (OMPI_COMM_WORLD_RANK from the environment): 4 of them");
  EXPECT_CONTAINS(r.err, "shard 1/2 (OMPI_COMM_WORLD_RANK from the environment): 4 of them");
  EXPECT_TRUE(fs::exists(dir_ / "mpi/shards/shard-0-of-2.json"));
  EXPECT_TRUE(fs::exists(dir_ / "mpi/shards/shard-1-of-2.json"));
  // the last rank to end wrote the whole table
  expect_same_points(dir_ / "serial", dir_ / "mpi", 8);
}

}  // namespace
}  // namespace gemflow::sweeptest
