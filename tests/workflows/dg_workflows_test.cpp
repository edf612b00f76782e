// The shipped distance-geometry workflows, run through `gemflow run`, meet their acceptance
// numbers (docs/nmr-structure.md) and are reproducible from their seed.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

#include <nlohmann/json.hpp>

#include "progress_check.hpp"

namespace fs = std::filesystem;

namespace {

// Runs `gemflow run WORKFLOW --out OUT ARGS` and returns report.json (fails the test on a
// non-zero exit, printing the log).
nlohmann::json run(const std::string& workflow, const std::string& tag, const std::string& args = "") {
  const fs::path out = fs::temp_directory_path() / ("gemflow_dg_workflows_" + tag);
  fs::remove_all(out);
  const fs::path log = fs::temp_directory_path() / ("gemflow_dg_workflows_" + tag + ".log");
  const std::string cmd = std::string(gemflow::test::kCheckProgress) + "\"" + GEMFLOW_EXE + "\" run \"" + GEMFLOW_SOURCE_DIR + "/workflows/" + workflow +
                          "\" --out \"" + out.string() + "\" " + args + " > \"" + log.string() + "\" 2>&1";
  const int rc = std::system(cmd.c_str());
  if (rc != 0) {
    std::ifstream in(log);
    std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    ADD_FAILURE() << cmd << " exited with " << rc << ":\n" << text;
    return {};
  }
  gemflow::test::expect_progress_reported(log);
  std::ifstream in(out / "report.json");
  EXPECT_TRUE(in) << "no report.json in " << out;
  return nlohmann::json::parse(in);
}

TEST(NmrStructureWorkflow, MeetsAcceptanceAndIsReproducible) {
  const auto r = run("nmr_structure.yaml", "nmr1");
  ASSERT_FALSE(r.is_null());
  const double used = r.at("restraints_used").get<double>();
  EXPECT_EQ(r.at("restraints_used").get<int>(), 841);
  EXPECT_EQ(r.at("restraints_skipped").get<int>(), 0);
  EXPECT_EQ(r.at("residue_count").get<int>(), 96);
  EXPECT_GE(r.at("ordered_residue_count").get<double>(), 0.6 * 96);
  EXPECT_LE(r.at("backbone_rmsd_A").get<double>(), 4.0);
  EXPECT_LT(r.at("violations_gt_0_5A").get<double>(), 0.05 * used);
  EXPECT_EQ(r.at("chiral_wrong").get<int>(), 0);
  // Same seed, same numbers, whatever the number of threads running the trials.
  const auto again = run("nmr_structure.yaml", "nmr2", "--set dg.threads=1");
  EXPECT_EQ(again, r);
  // Another seed is another structure of the same quality.
  const auto other = run("nmr_structure.yaml", "nmr3", "--set dg.seed=5");
  ASSERT_FALSE(other.is_null());
  EXPECT_NE(other.at("backbone_rmsd_A"), r.at("backbone_rmsd_A"));
  EXPECT_LE(other.at("backbone_rmsd_A").get<double>(), 4.0);
  EXPECT_LT(other.at("violations_gt_0_5A").get<double>(), 0.05 * used);
}

// Whole-chain heavy-atom RMSD ≤ 1.0 Å for the shipped seed and for other seeds (robustness of
// the best-of-4 trials, not seed luck).
TEST(ReconstructWorkflow, RecoversModelOneFromShortDistances) {
  for (const char* seed : {"1", "2", "3", "7"}) {
    SCOPED_TRACE(std::string("seed ") + seed);
    const auto r = run("reconstruct_from_structure.yaml", std::string("rec") + seed, std::string("--set dg.seed=") + seed);
    ASSERT_FALSE(r.is_null());
    EXPECT_LE(r.at("heavy_rmsd_A").get<double>(), 1.0);
    EXPECT_EQ(r.at("ordered_residue_count").get<int>(), 96);  // the whole chain
    EXPECT_EQ(r.at("residue_count").get<int>(), 96);
    EXPECT_EQ(r.at("heavy_atoms").get<int>(), 759);
    EXPECT_EQ(r.at("chiral_wrong").get<int>(), 0);
    EXPECT_EQ(r.at("lower_violations_gt_0_5A").get<int>() + r.at("upper_violations_gt_0_5A").get<int>(), 0);
  }
}

}  // namespace
