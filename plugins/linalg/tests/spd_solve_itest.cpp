// End to end: `gemflow run workflows/spd_solve.yaml` (io.read_matrix → linalg.spd_solve →
// io.write_table) on sample_data/spd, checked through report.json.
//
// Needs the targets gemflow, gemflow_plugin_io and gemflow_plugin_linalg built in the same build
// folder (the build-tree gemflow loads <build>/lib/gemflow/plugins); a missing one fails the test
// with the command to build it, it is not skipped.
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include <nlohmann/json.hpp>

#include <gemflow/device.hpp>

namespace {
namespace fs = std::filesystem;

constexpr double kU = 0x1p-53;
const std::string kSource = GEMFLOW_SOURCE_DIR;
const std::string kExe = std::string(GEMFLOW_BINARY_DIR) + "/bin/gemflow";
const std::string kWorkflow = kSource + "/workflows/spd_solve.yaml";

struct RunResult {
  int code = -1;
  std::string output;  ///< stdout and stderr
  nlohmann::json report;
};

std::string quote(const std::string& s) { return "'" + s + "'"; }

/// Runs `gemflow run spd_solve.yaml ARGS --out <fresh dir>` and reads report.json if written.
RunResult run_workflow(const std::string& name, const std::string& args) {
  const fs::path out = fs::temp_directory_path() / "gemflow_spd_solve_itest" / name;
  fs::remove_all(out);
  const std::string cmd = "env -u GEMFLOW_PLUGIN_PATH NO_COLOR=1 " + quote(kExe) + " run " + quote(kWorkflow) + " " +
                          args + " --out " + quote(out.string()) + " 2>&1";
  RunResult r;
  FILE* p = popen(cmd.c_str(), "r");
  if (!p) throw std::runtime_error("popen failed: " + cmd);
  char buf[4096];
  while (std::fgets(buf, sizeof buf, p)) r.output += buf;
  const int status = pclose(p);
  r.code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  std::ifstream in(out / "report.json");
  if (in) r.report = nlohmann::json::parse(in);
  return r;
}

void require_built() {
  ASSERT_TRUE(fs::exists(kExe)) << kExe << " missing: cmake --build <build> --target gemflow";
  for (const char* p : {"io", "linalg"}) {
    bool found = false;
    for (const auto& e : fs::directory_iterator(GEMFLOW_PLUGIN_BUILD_DIR))
      found |= e.path().filename().string().find(std::string("gemflow_") + p) != std::string::npos;
    ASSERT_TRUE(found) << "plugin " << p << " missing in " << GEMFLOW_PLUGIN_BUILD_DIR
                       << ": cmake --build <build> --target gemflow_plugin_" << p;
  }
}

}  // namespace

// bcsstk13: n = 2003, κ₂ ≈ 1.1e10 (PROVENANCE.md). The relative residual ρ = ‖b − A x‖∞ /
// (‖A‖∞ ‖x‖∞) is a normwise backward error: for Cholesky it is bounded by c(n)·u independently
// of κ (Higham 2002, Thm 10.4 with 7.x: worst case c(n) ≈ 3n², about 1e-9 here; in practice
// errors grow like √n to n, and LAPACK dsposv accepts √n·u ≈ 5e-15). 1e-12 ≈ 4.5·n·u is a bound
// a backward-stable fp64 solve must meet on this matrix, while an fp32 solve (ρ ≈ 1e-8, checked
// below) or an unstable method fails it. Only the forward error grows with κ: ≈ κ·(ρ + u).
TEST(SpdSolveWorkflow, Bcsstk13OnTheCpu) {
  require_built();
  const RunResult r = run_workflow("cpu", "--device cpu");
  ASSERT_EQ(r.code, 0) << r.output;
  ASSERT_TRUE(r.report.contains("rows")) << r.output;
  const auto& row = r.report["rows"].at(0);
  EXPECT_EQ(row["n"], 2003);
  EXPECT_EQ(row["device"], "cpu");
  EXPECT_EQ(row["algorithm"], "lapack");
  EXPECT_EQ(row["precision"], "fp64");
  const double rho = row["relative_residual"].get<double>();
  const double fwd = row["forward_error"].get<double>();
  EXPECT_GT(rho, 0.0);
  EXPECT_LT(rho, 1e-12) << r.output;
  // First-order forward bound κ₂·n·u ≈ 2.4e-3 (‖·‖∞ of x − 1 with ‖1‖∞ = 1).
  EXPECT_LT(fwd, 1.1e10 * 2003 * kU) << r.output;
  std::cout << "bcsstk13 cpu: relative_residual " << rho << ", forward_error " << fwd << ", "
            << row["seconds"].get<double>() << " s\n";
}

TEST(SpdSolveWorkflow, TheBoundSeparatesFp32FromFp64) {
  require_built();
  // A 300×300 SPD matrix as Matrix Market text: tridiag(−1, 4, −1), κ < 3 (Gershgorin: [2, 6]).
  const fs::path dir = fs::temp_directory_path() / "gemflow_spd_solve_itest";
  fs::create_directories(dir);
  const std::string tri = (dir / "tridiag300.mtx").string();
  {
    std::ofstream f(tri);
    f << "%%MatrixMarket matrix coordinate real symmetric\n300 300 599\n";
    for (int i = 1; i <= 300; ++i) {
      f << i << " " << i << " 4\n";
      if (i < 300) f << i + 1 << " " << i << " -1\n";
    }
  }
  const RunResult r =
      run_workflow("fp32", "--device cpu --set " + quote("read.path=" + tri) + " --set solve.precision=fp32");
  ASSERT_EQ(r.code, 0) << r.output;
  const double rho32 = r.report["rows"].at(0)["relative_residual"].get<double>();
  EXPECT_GT(rho32, 1e-12) << "an fp32 solve must not pass the fp64 bound";
  EXPECT_LT(rho32, 300 * 0x1p-24);
  const RunResult m =
      run_workflow("mixed", "--device cpu --set " + quote("read.path=" + tri) + " --set solve.precision=mixed");
  ASSERT_EQ(m.code, 0) << m.output;
  EXPECT_LT(m.report["rows"].at(0)["relative_residual"].get<double>(), 1e-12) << m.output;
}

TEST(SpdSolveWorkflow, IndefiniteMatrixFailsNamingTheMinor) {
  require_built();
  const std::string indef = kSource + "/sample_data/spd/not_spd/full_symmetric_array_indefinite.mtx";
  const RunResult r = run_workflow("indefinite", "--device cpu --set " + quote("read.path=" + indef));
  EXPECT_EQ(r.code, 1) << r.output;  // a node failed
  EXPECT_NE(r.output.find("not positive definite: the leading minor of order 2"), std::string::npos) << r.output;
  EXPECT_TRUE(r.report.is_null()) << "no report for a failed solve";
}

TEST(SpdSolveWorkflow, MalformedMatrixFileNamesFileAndLine) {
  require_built();
  const std::string bad = kSource + "/sample_data/spd/malformed/mangled_format.mtx";
  const RunResult r = run_workflow("malformed", "--device cpu --set " + quote("read.path=" + bad));
  EXPECT_EQ(r.code, 1) << r.output;
  EXPECT_NE(r.output.find("mangled_format.mtx:1"), std::string::npos) << r.output;
}

TEST(SpdSolveWorkflow, CudaNeverFallsBackSilently) {
  require_built();
  if (gemflow::cuda_device_count() == 0) {
    const RunResult r = run_workflow("cuda_missing", "--device cuda");
    EXPECT_EQ(r.code, 2) << r.output;  // docs/cli.md: an absent CUDA device for --device is exit 2
    EXPECT_TRUE(r.report.is_null());
    EXPECT_NE(r.output.find("cuda"), std::string::npos) << r.output;
    return;
  }
  const RunResult r = run_workflow("cuda", "--device cuda");
  ASSERT_EQ(r.code, 0) << r.output;
  const auto& row = r.report["rows"].at(0);
  EXPECT_EQ(row["device"], "cuda:0");
  EXPECT_EQ(row["algorithm"], "tiled");  // auto: fp64, n = 2003 is below every card's crossover
  EXPECT_LT(row["relative_residual"].get<double>(), 1e-12) << r.output;
  std::cout << "bcsstk13 cuda: relative_residual " << row["relative_residual"].get<double>() << ", forward_error "
            << row["forward_error"].get<double>() << ", " << row["seconds"].get<double>() << " s\n";
}
