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
  const std::string cmd = std::string(gemflow::test::kCheckProgress) + "\"" + GEMFLOW_EXE + "\" run \"" +
                          GEMFLOW_SOURCE_DIR + "/workflows/" + workflow + "\" --out \"" + out.string() + "\" " + args +
                          " > \"" + log.string() + "\" 2>&1";
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

// From the NEF file alone (sequence + restraints) to an ensemble; the deposited model 1 is only
// the reference of the comparison. Numbers measured: docs/nmr-structure.md.
TEST(NmrStructureWorkflow, MeetsAcceptanceAndIsReproducible) {
  const auto r = run("nmr_structure.yaml", "nmr1");
  ASSERT_FALSE(r.is_null());
  const double used = r.at("restraints_used").get<double>();
  EXPECT_EQ(r.at("restraints_used").get<int>(), 841);
  EXPECT_EQ(r.at("restraints_skipped").get<int>(), 0);
  EXPECT_EQ(r.at("restraints_left_out").get<int>(), 0);
  EXPECT_EQ(r.at("residue_count").get<int>(), 96);
  EXPECT_GE(r.at("ordered_residue_count").get<double>(), 0.6 * 96);
  EXPECT_EQ(r.at("kept").get<int>(), 2);
  EXPECT_EQ(r.at("failed").get<int>(), 0);
  // model 1 (lowest energy) against the deposited model 1, and the ensemble's statistics
  // (measured on the 2-core VM: 1.58 Å, mean 1.52 Å, precision 0.59 Å, 0 violations, 100 %
  // favoured/allowed, 102 clashes per model)
  EXPECT_LE(r.at("backbone_rmsd_A").get<double>(), 2.0);
  EXPECT_LE(r.at("backbone_rmsd_to_reference_mean_A").get<double>(), 2.0);
  EXPECT_LE(r.at("precision_backbone_A").get<double>(), 1.0);
  EXPECT_LT(r.at("violations_gt_0_5A").get<double>(), 0.01 * used);
  EXPECT_LE(r.at("violations_gt_0_5A_per_model").get<double>(), 1.0);
  EXPECT_EQ(r.at("calpha_handedness_correct_fraction").get<double>(), 1.0);
  EXPECT_GE(r.at("ramachandran_favoured_or_allowed_fraction").get<double>(), 0.95);
  EXPECT_LE(r.at("clashes_per_model").get<double>(), 250.0);
  // Same seed, same numbers, whatever the number of threads computing the structures.
  const auto again = run("nmr_structure.yaml", "nmr2", "--set ensemble.threads=1");
  EXPECT_EQ(again, r);
}

// Whole-chain heavy-atom RMSD ≤ 1.0 Å for the shipped seed and for other seeds (robustness of
// the best-of-4 trials, not seed luck).
TEST(ReconstructWorkflow, RecoversModelOneFromShortDistances) {
  for (const char* seed : {"1", "2", "3", "7"}) {
    SCOPED_TRACE(std::string("seed ") + seed);
    const auto r =
        run("reconstruct_from_structure.yaml", std::string("rec") + seed, std::string("--set dg.seed=") + seed);
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
