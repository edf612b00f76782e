// The shipped circle-packing workflows (workflows/pack_triangle.yaml, flatten_mesh.yaml), run
// through `gemflow run`: report.json's numbers, the PNG and mesh files they write.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

#include <nlohmann/json.hpp>

#include "progress_check.hpp"

namespace fs = std::filesystem;

namespace {

// Runs `gemflow run WORKFLOW --out OUT ARGS`; returns report.json's rows as {metric: value}
// (fails the test on a non-zero exit, printing the log).
nlohmann::json run(const std::string& workflow, const fs::path& out, const std::string& args = "") {
  fs::remove_all(out);
  const fs::path log = out.string() + ".log";
  const std::string cmd = std::string(gemflow::test::kCheckProgress) + "\"" + GEMFLOW_EXE + "\" run \"" +
                          GEMFLOW_SOURCE_DIR + "/workflows/" + workflow + "\" --out \"" + out.string() + "\" " + args +
                          " > \"" + log.string() + "\" 2>&1";
  if (const int rc = std::system(cmd.c_str()); rc != 0) {
    std::ifstream in(log);
    ADD_FAILURE() << cmd << " exited with " << rc << ":\n" << std::string(std::istreambuf_iterator<char>(in), {});
    return {};
  }
  gemflow::test::expect_progress_reported(log);
  std::ifstream in(out / "report.json");
  const auto j = nlohmann::json::parse(in);
  nlohmann::json r = nlohmann::json::object();
  for (const auto& row : j.at("rows")) r[row.at("metric").get<std::string>()] = row.at("value");
  return r;
}

bool is_png(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  char sig[8] = {};
  in.read(sig, 8);
  return in && std::string(sig, 8) == "\x89PNG\r\n\x1a\n" && fs::file_size(p) > 1000;
}

TEST(PackTriangleWorkflow, PacksTheSeedsTriangleAndDrawsIt) {
  const fs::path out = fs::temp_directory_path() / "gemflow_cp_pack_triangle";
  const auto r = run("pack_triangle.yaml", out);
  ASSERT_FALSE(r.is_null());
  EXPECT_EQ(r.at("circles").get<int>(), 55);
  EXPECT_EQ(r.at("algorithm").get<std::string>(), "newton");
  EXPECT_EQ(r.at("converged").get<std::string>(), "yes");
  EXPECT_LT(r.at("angle_error").get<double>(), 1e-8);
  EXPECT_LE(r.at("iterations").get<int>(), 6);
  EXPECT_GE(r.at("iterations").get<int>(), 1);
  EXPECT_LT(r.at("closing_error").get<double>(), 1e-8);
  EXPECT_LT(r.at("line_error").get<double>(), 1e-8);
  EXPECT_TRUE(is_png(out / "triangle.png"));
  EXPECT_TRUE(fs::exists(out / "history.csv"));
  // the seed's plain Collins–Stephenson iteration
  const auto cs = run("pack_triangle.yaml", out.string() + "_cs", "--set pack.algorithm=cs_plain");
  ASSERT_FALSE(cs.is_null());
  EXPECT_EQ(cs.at("iterations").get<int>(), 161);
  EXPECT_LT(cs.at("angle_error").get<double>(), 1e-8);
}

TEST(FlattenMeshWorkflow, FlattensTheSampleMesh) {
  const fs::path out = fs::temp_directory_path() / "gemflow_cp_flatten";
  const auto r = run("flatten_mesh.yaml", out);
  ASSERT_FALSE(r.is_null());
  EXPECT_EQ(r.at("vertices").get<int>(), 217);
  EXPECT_LT(r.at("angle_error").get<double>(), 1e-10);
  EXPECT_EQ(r.at("flipped_faces").get<int>(), 0);
  EXPECT_LT(r.at("closing_error").get<double>(), 1e-10);
  EXPECT_LT(r.at("conformal_distortion_mean").get<double>(), 1.5);
  EXPECT_TRUE(is_png(out / "packing.png"));
  std::ifstream obj(out / "flattened.obj");
  const std::string text((std::istreambuf_iterator<char>(obj)), {});
  EXPECT_NE(text.find("\nvt "), std::string::npos);
  EXPECT_NE(text.find("\nf 1/1 "), std::string::npos);
}

TEST(FlattenMeshWorkflow, FlattensARealMeshAndRefusesAClosedOne) {
  const char* root = std::getenv("GEMFLOW_SHARED_DATA");
  const fs::path camel = root ? fs::path(root) / "meshes/disk/libigl_camelhead.off" : fs::path();
  if (!root || !fs::exists(camel)) GTEST_SKIP() << "GEMFLOW_SHARED_DATA meshes absent";
  const fs::path out = fs::temp_directory_path() / "gemflow_cp_flatten_camel";
  const auto r = run("flatten_mesh.yaml", out, "--set read.path=" + camel.string());
  ASSERT_FALSE(r.is_null());
  EXPECT_EQ(r.at("vertices").get<int>(), 11381);
  EXPECT_EQ(r.at("converged").get<std::string>(), "yes");
  EXPECT_EQ(r.at("flipped_faces").get<int>(), 0);
  EXPECT_LT(r.at("closing_error").get<double>(), 1e-8);
  // a closed mesh: one clear error naming the file, nothing written
  const fs::path bunny = fs::path(root) / "meshes/closed/libigl_bunny.off";
  const fs::path out2 = fs::temp_directory_path() / "gemflow_cp_flatten_bunny";
  fs::remove_all(out2);
  const fs::path log = out2.string() + ".log";
  const std::string cmd = std::string(gemflow::test::kCheckProgress) + "\"" + GEMFLOW_EXE + "\" run \"" +
                          GEMFLOW_SOURCE_DIR + "/workflows/flatten_mesh.yaml\" --out \"" + out2.string() +
                          "\" --set read.path=" + bunny.string() + " > \"" + log.string() + "\" 2>&1";
  EXPECT_NE(std::system(cmd.c_str()), 0);
  std::ifstream in(log);
  const std::string text((std::istreambuf_iterator<char>(in)), {});
  EXPECT_NE(text.find("libigl_bunny.off: not a disk: 1 component, Euler characteristic 2 and 0 boundary loops"),
            std::string::npos)
      << text;
  EXPECT_FALSE(fs::exists(out2 / "flattened.obj"));
  EXPECT_FALSE(fs::exists(out2 / "report.json"));
}

}  // namespace
