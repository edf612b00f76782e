// The shipped segmentation workflows, run through `gemflow run`: segment_signal.yaml's outputs
// and report, tcpd_benchmark.yaml's table (docs/semicrf.md quotes these numbers).
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "progress_check.hpp"

namespace fs = std::filesystem;

namespace {

/// Runs `gemflow run WORKFLOW --out OUT` and returns OUT (empty on failure, with the log).
fs::path run(const std::string& workflow, const std::string& tag) {
  const fs::path out = fs::temp_directory_path() / ("gemflow_semicrf_workflows_" + tag);
  fs::remove_all(out);
  const fs::path log = out.string() + ".log";
  const std::string cmd = std::string(gemflow::test::kCheckProgress) + "\"" + GEMFLOW_EXE + "\" run \"" +
                          GEMFLOW_SOURCE_DIR + "/workflows/" + workflow + "\" --out \"" + out.string() + "\" > \"" +
                          log.string() + "\" 2>&1";
  if (std::system(cmd.c_str()) != 0) {
    std::ifstream in(log);
    ADD_FAILURE() << cmd << " failed:\n" << in.rdbuf();
    return {};
  }
  gemflow::test::expect_progress_reported(log);
  return out;
}

/// Rows of a CSV file without quoted commas, split at commas (header first).
std::vector<std::vector<std::string>> csv(const fs::path& p) {
  std::ifstream in(p);
  std::vector<std::vector<std::string>> rows;
  std::string line;
  while (std::getline(in, line)) {
    std::vector<std::string> f;
    std::stringstream ss(line);
    std::string cell;
    while (std::getline(ss, cell, ',')) f.push_back(cell);
    rows.push_back(f);
  }
  return rows;
}

std::string text(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

}  // namespace

TEST(SegmentSignalWorkflow, SegmentsTheWellLog) {
  const fs::path out = run("segment_signal.yaml", "seg");
  ASSERT_FALSE(out.empty());
  const auto report = csv(out / "report.csv");
  ASSERT_EQ(report.size(), 2u);
  ASSERT_EQ(report[0][4], "f1");
  // TCPDBench scores of the decoded change points against the five annotators
  EXPECT_GE(std::stod(report[1][4]), 0.81);  // F1
  EXPECT_GE(std::stod(report[1][7]), 0.79);  // cover
  const auto segs = csv(out / "segments.csv");
  ASSERT_GE(segs.size(), 10u);
  EXPECT_EQ(segs[0][0], "start");
  EXPECT_EQ(segs[1][0], "0");
  EXPECT_EQ(segs.back()[1], "675");  // the segments cover the whole log
  // every annotated big step (179, 255, 343, 402) is a change point
  const auto cps = csv(out / "change_points.csv");
  for (const char* step : {"179", "255", "343", "402"}) {
    bool found = false;
    for (const auto& r : cps) found |= !r.empty() && r[0] == step;
    EXPECT_TRUE(found) << "no change point at " << step;
  }
  const std::string png = text(out / "segments.png");
  ASSERT_GE(png.size(), 1000u);
  EXPECT_EQ(png.substr(1, 3), "PNG");
  const auto hist = csv(out / "fit_history.csv");
  EXPECT_GE(hist.size(), 3u);
}

TEST(TcpdBenchmarkWorkflow, OneTableForEveryShippedSeries) {
  const fs::path out = run("tcpd_benchmark.yaml", "tcpd");
  ASSERT_FALSE(out.empty());
  const auto t = csv(out / "benchmark.csv");
  ASSERT_EQ(t.size(), 4u);
  EXPECT_EQ(t[0], (std::vector<std::string>{"series", "source", "n_obs", "change_points", "f1", "precision", "recall",
                                            "cover", "annotators"}));
  EXPECT_EQ(t[1][0], "well_log");
  EXPECT_EQ(t[2][0], "bank");
  EXPECT_EQ(t[3][0], "run_log");
  // the numbers docs/semicrf.md reports for this parameter set (semicrf.bayes_segments)
  EXPECT_EQ(t[1][3], "4 179 255 281 311 343 402 432 464");
  EXPECT_NEAR(std::stod(t[1][4]), 0.8771, 5e-4);
  EXPECT_NEAR(std::stod(t[1][7]), 0.8392, 5e-4);
  EXPECT_EQ(t[2][2], "581");
  EXPECT_EQ(t[2][3], "");  // bank: no change point, as every annotator says
  EXPECT_EQ(std::stod(t[2][4]), 1.0);
  EXPECT_EQ(std::stod(t[2][7]), 1.0);
  EXPECT_NEAR(std::stod(t[3][4]), 0.9437, 5e-4);
  EXPECT_NEAR(std::stod(t[3][7]), 0.7619, 5e-4);
}
