// The installed SDK builds a third-party plugin out-of-tree, and the host loads and runs it.
#include <cstdlib>
#include <filesystem>
#include <fstream>

#include <gtest/gtest.h>

#include "gemflow/executor.hpp"
#include "gemflow/plugin_loader.hpp"
#include "gemflow/types.hpp"

namespace fs = std::filesystem;

namespace gemflow {
namespace {

int sh(const std::string& cmd, const fs::path& log) {
  const std::string full = cmd + " >" + log.string() + " 2>&1";
  return std::system(full.c_str());
}
std::string slurp(const fs::path& f) {
  std::ifstream in(f);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}
std::string q(const fs::path& p) { return "'" + p.string() + "'"; }

TEST(Sdk, InstalledSdkBuildsAndLoadsAnExternalPlugin) {
  const fs::path work = fs::path(GEMFLOW_BINARY_DIR) / "sdk-test";
  const fs::path prefix = work / "prefix", build = work / "example-build", prefix2 = work / "plugin-prefix";
  fs::remove_all(work);
  fs::create_directories(work);
  const std::string cmake = q(GEMFLOW_CMAKE_COMMAND);

  // 1. Install the SDK component only.
  ASSERT_EQ(sh(cmake + " --install " + q(GEMFLOW_BINARY_DIR) + " --prefix " + q(prefix) + " --component sdk",
               work / "install.log"),
            0)
      << slurp(work / "install.log");
  for (const char* f : {"include/gemflow/plugin.hpp", "include/gemflow/config.hpp", "include/gemflow/types/matrix.hpp",
                        "lib/cmake/Gemflow/GemflowConfig.cmake", "lib/cmake/Gemflow/GemflowPlugin.cmake",
                        "lib/cmake/Gemflow/GemflowConfigVersion.cmake"})
    EXPECT_TRUE(fs::exists(prefix / f)) << f;
  EXPECT_TRUE(fs::is_directory(prefix / "lib/gemflow/plugins"));

  // 2. Configure and build the example against it, out of tree.
  ASSERT_EQ(sh(cmake + " -S " + q(fs::path(GEMFLOW_SOURCE_DIR) / "examples/external_plugin") + " -B " + q(build) +
                   " -G " + q(GEMFLOW_CMAKE_GENERATOR) +
                   " -DCMAKE_BUILD_TYPE=Release -DCMAKE_EXPORT_COMPILE_COMMANDS=ON -DCMAKE_CXX_COMPILER=" +
                   q(GEMFLOW_CXX_COMPILER) + " -DCMAKE_PREFIX_PATH=" + q(prefix),
               work / "configure.log"),
            0)
      << slurp(work / "configure.log");
  ASSERT_EQ(sh(cmake + " --build " + q(build), work / "build.log"), 0) << slurp(work / "build.log");
  const fs::path so = build / "libgemflow_example.so";
  ASSERT_TRUE(fs::exists(so));
  // The plugin guide's snippets are compiled from there (guide_snippets_test.cpp checks that they are
  // there): the CUDA one too when a CUDA compiler was found.
  if (slurp(build / "CMakeCache.txt").find("CMAKE_CUDA_COMPILER:FILEPATH=/") != std::string::npos) {
    EXPECT_NE(slurp(work / "build.log").find("scale.cu"), std::string::npos) << slurp(work / "build.log");
  }

  // 2b. Its tests, wired by gemflow_add_plugin_test(), load the built plugin and pass.
  const fs::path ctest = fs::path(GEMFLOW_CMAKE_COMMAND).parent_path() / "ctest";
  ASSERT_EQ(sh(q(ctest) + " --test-dir " + q(build) + " --output-on-failure", work / "ctest.log"), 0)
      << slurp(work / "ctest.log");
  EXPECT_NE(slurp(work / "ctest.log").find("100% tests passed, 0 tests failed out of 4"), std::string::npos)
      << slurp(work / "ctest.log");
  // It compiled against the installed headers, not the source tree.
  EXPECT_NE(slurp(build / "compile_commands.json").find(prefix.string()), std::string::npos)
      << "(compile_commands.json absent or without the prefix)";

  // 3. The host accepts it (API version and fingerprint match) and runs its node.
  Registry reg;
  PluginHost host(reg);
  const PluginRecord rec = host.load(so);
  ASSERT_TRUE(rec.loaded) << rec.error;
  EXPECT_EQ(rec.name, "example");
  EXPECT_EQ(rec.version, "1.0.0");  // from project(VERSION) through gemflow_add_plugin, not spelled in plugin.cpp
  EXPECT_EQ(rec.fingerprint, PluginHost::host_fingerprint());
  const NodeEntry* e = reg.find_node("example.scale");
  ASSERT_NE(e, nullptr);
  EXPECT_EQ(e->spec.info.doc, "Multiplies every element of a matrix by a factor.");
  EXPECT_EQ(e->spec.param("factor")->doc, "Multiplier");
  EXPECT_EQ(e->spec.info.determinism, "Exact: one multiplication per element.");
  ASSERT_NE(reg.find_type("example.Histogram"), nullptr);
  ASSERT_NE(reg.find_node("example.clip"), nullptr);
  ASSERT_TRUE(host.load(fs::path(GEMFLOW_TEST_PLUGIN_DIR) / "testnodes" / "libgemflow_testnodes.so").loaded);

  auto lr = parse_workflow(
      "gemflow: 1\nnodes:\n  c: {type: test.constant, params: {value: 1.25}}\n"
      "  s: {type: example.scale, params: {factor: -4}}\nlinks: [c.value -> s.matrix]\n",
      work / "w.yaml", reg);
  ASSERT_TRUE(lr.ok());
  RunOptions o;
  o.out_dir = work / "out";
  const RunResult r = run_workflow(*lr.workflow, reg, o);
  ASSERT_TRUE(r.ok()) << (r.nodes.count("s") ? r.nodes.at("s").error : "");
  EXPECT_EQ((*r.nodes.at("s").outputs.at("scaled").as<MatrixF64>())(0, 0), -5.0);
  // the example's rule (low < high) is a validation error at the parameter's line
  auto bad = parse_workflow("gemflow: 1\nnodes:\n  k:\n    type: example.clip\n    params: {low: 3, high: 2}\n",
                            work / "bad.yaml", reg);
  bool found = false;
  for (const auto& d : bad.diagnostics)
    found = found || d.str().find(
                         "bad.yaml:5:19: error: node 'k', parameter 'low': low = 3.0 must be below high = "
                         "2.0 (an empty range)") != std::string::npos;
  EXPECT_TRUE(found);

  // 4. Installing the plugin puts it in <prefix>/lib/gemflow/plugins.
  ASSERT_EQ(sh(cmake + " --install " + q(build) + " --prefix " + q(prefix2), work / "install2.log"), 0)
      << slurp(work / "install2.log");
  EXPECT_TRUE(fs::exists(prefix2 / "lib/gemflow/plugins/libgemflow_example.so"));
}

}  // namespace
}  // namespace gemflow
