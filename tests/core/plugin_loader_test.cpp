// Plugin loader: every broken plugin is refused with its reason, before registration, and
// never hides or damages the good ones.
#include <cstdlib>
#include <filesystem>
#include <fstream>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "gemflow/plugin.hpp"
#include "gemflow/plugin_loader.hpp"

namespace fs = std::filesystem;
using ::testing::HasSubstr;

namespace gemflow {
namespace {

fs::path plugin(const std::string& c) { return fs::path(GEMFLOW_TEST_PLUGIN_DIR) / c / ("libgemflow_" + c + ".so"); }

// The probe's memory of failed plugins goes to $XDG_CACHE_HOME: a folder of this test process,
// never the user's (and a test never sees what another one remembered).
class PrivateCache : public ::testing::Environment {
 public:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("gemflow_loader_cache_" + std::to_string(::getpid()));
    fs::remove_all(dir_);
    ::setenv("XDG_CACHE_HOME", dir_.c_str(), 1);
  }
  void TearDown() override {
    std::error_code ec;
    fs::remove_all(dir_, ec);
  }

 private:
  fs::path dir_;
};
[[maybe_unused]] auto* const g_private_cache = ::testing::AddGlobalTestEnvironment(new PrivateCache);

TEST(PluginLoader, GoodPluginRegistersItsNodes) {
  Registry reg;
  PluginHost host(reg);
  const PluginRecord r = host.load(plugin("testnodes"));
  ASSERT_TRUE(r.loaded) << r.error;
  EXPECT_EQ(r.name, "test");
  EXPECT_EQ(r.version, "1.0.0");
  EXPECT_EQ(r.fingerprint, PluginHost::host_fingerprint());
  EXPECT_THAT(r.node_ids, ::testing::Contains("test.add"));
  EXPECT_EQ(r.node_ids.size(), 12u);
  const NodeEntry* add = reg.find_node("test.add");
  ASSERT_NE(add, nullptr);
  EXPECT_EQ(add->origin, plugin("testnodes").string());
  ASSERT_EQ(add->spec.inputs.size(), 2u);
  EXPECT_EQ(add->spec.inputs[0].type, "Matrix<f64>");
  // The factory builds working nodes.
  auto node = add->create();
  ASSERT_NE(node, nullptr);
  EXPECT_EQ(node->output_specs().at(0).name, "sum");
  ASSERT_EQ(host.records().size(), 1u);
}

TEST(PluginLoader, LoadingTheSameFileTwiceIsHarmless) {
  Registry reg;
  PluginHost host(reg);
  ASSERT_TRUE(host.load(plugin("testnodes")).loaded);
  const PluginRecord again = host.load(plugin("testnodes"));
  EXPECT_TRUE(again.loaded) << again.error;
  EXPECT_EQ(host.records().size(), 1u);
}

TEST(PluginLoader, WrongApiVersionIsRefusedBeforeRegistration) {
  Registry reg;
  PluginHost host(reg);
  const PluginRecord r = host.load(plugin("bad_api"));
  EXPECT_FALSE(r.loaded);
  EXPECT_THAT(r.error, HasSubstr("plugin API version 999"));
  EXPECT_THAT(r.error, HasSubstr("expects " + std::to_string(kPluginApiVersion)));
  EXPECT_EQ(r.name, "bad_api");
  EXPECT_EQ(r.file, plugin("bad_api"));
  EXPECT_TRUE(r.node_ids.empty());
}

TEST(PluginLoader, WrongFingerprintNamesTheDifferingField) {
  Registry reg;
  PluginHost host(reg);
  const PluginRecord r = host.load(plugin("bad_fingerprint"));
  EXPECT_FALSE(r.loaded);
  EXPECT_THAT(r.error, HasSubstr("sdk=0.0.0-other (host: sdk=" GEMFLOW_SDK_VERSION ")"));
  // The compiler field differs too but is informative only.
  EXPECT_THAT(r.error, ::testing::Not(HasSubstr("compiler")));
}

TEST(PluginLoader, ThrowingRegistrationLeavesNoNodeBehind) {
  Registry reg;
  PluginHost host(reg);
  const PluginRecord r = host.load(plugin("register_throws"));
  EXPECT_FALSE(r.loaded);
  EXPECT_THAT(r.error, HasSubstr("registration failed: cannot open the licence file"));
  EXPECT_EQ(reg.find_node("test_throws.first"), nullptr);
  EXPECT_TRUE(reg.node_ids().empty());
}

TEST(PluginLoader, DuplicateNodeIdNamesBothFilesAndKeepsTheFirst) {
  Registry reg;
  PluginHost host(reg);
  ASSERT_TRUE(host.load(plugin("testnodes")).loaded);
  const PluginRecord r = host.load(plugin("duplicate"));
  EXPECT_FALSE(r.loaded);
  EXPECT_THAT(r.error, HasSubstr("duplicate node id 'test.add'"));
  EXPECT_THAT(r.error, HasSubstr(plugin("testnodes").string()));
  EXPECT_THAT(r.error, HasSubstr(plugin("duplicate").string()));
  // Nothing of the refused plugin stays; the first owner still works.
  EXPECT_EQ(reg.find_node("test.dup_unique"), nullptr);
  EXPECT_EQ(reg.find_node("test.add")->origin, plugin("testnodes").string());
  EXPECT_EQ(reg.find_node("test.add")->spec.inputs.size(), 2u);
}

TEST(PluginLoader, MissingRegisterSymbol) {
  Registry reg;
  PluginHost host(reg);
  const PluginRecord r = host.load(plugin("no_register"));
  EXPECT_FALSE(r.loaded);
  EXPECT_THAT(r.error, HasSubstr("gemflow_plugin_register missing"));
  EXPECT_EQ(r.name, "no_register");
}

TEST(PluginLoader, GarbageFileIsNotALibrary) {
  Registry reg;
  PluginHost host(reg);
  const PluginRecord r = host.load(plugin("garbage"));
  EXPECT_FALSE(r.loaded);
  EXPECT_THAT(r.error, HasSubstr("not a loadable shared library"));
  EXPECT_TRUE(r.name.empty());
}

TEST(PluginLoader, MissingFile) {
  Registry reg;
  PluginHost host(reg);
  const PluginRecord r = host.load(fs::path(GEMFLOW_TEST_PLUGIN_DIR) / "nope" / "libgemflow_nope.so");
  EXPECT_FALSE(r.loaded);
  EXPECT_EQ(r.error, "no such file");
}

// One folder with every broken plugin and the good one: each is reported, the good one loads.
TEST(PluginLoader, BrokenPluginsNeverHideTheGoodOne) {
  const fs::path dir = fs::temp_directory_path() / ("gemflow_loader_test_" + std::to_string(::getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir);
  for (const char* c :
       {"bad_api", "bad_fingerprint", "register_throws", "no_register", "garbage", "abort_ctor", "testnodes"})
    fs::copy_file(plugin(c), dir / plugin(c).filename());
  std::ofstream(dir / "README.txt") << "not a plugin, not a .so: ignored\n";
  Registry reg;
  PluginHost host(reg);
  host.load_directory(dir);
  ASSERT_EQ(host.records().size(), 7u);  // sorted by file name
  int loaded = 0;
  for (const auto& r : host.records()) {
    EXPECT_EQ(r.file.parent_path(), fs::canonical(dir));
    if (r.loaded) {
      ++loaded;
      EXPECT_EQ(r.file.filename(), "libgemflow_testnodes.so");
    } else {
      EXPECT_FALSE(r.error.empty()) << r.file;
    }
  }
  EXPECT_EQ(loaded, 1);
  EXPECT_NE(reg.find_node("test.sleep"), nullptr);
  EXPECT_EQ(host.records().front().file.filename(), "libgemflow_abort_ctor.so");
  fs::remove_all(dir);
}

TEST(PluginLoader, AbortInLoadTimeCodeIsReportedNotFatal) {
  // Without the probe child, this test process would die here.
  Registry reg;
  PluginHost host(reg);
  const PluginRecord r = host.load(plugin("abort_ctor"));
  EXPECT_FALSE(r.loaded);
  EXPECT_EQ(r.error, "crashed while loading (signal 6, SIGABRT): abort_ctor: cannot initialise the licence server");
  EXPECT_TRUE(r.node_ids.empty());
  // The host goes on: the good plugin loads after it.
  EXPECT_TRUE(host.load(plugin("testnodes")).loaded);
  EXPECT_NE(reg.find_node("test.sleep"), nullptr);
}

TEST(PluginLoader, ProbeReportsRefusalsWithTheSameReasons) {
  // Refusals found in the child carry the plugin's name, version and the same text as before.
  Registry reg;
  PluginHost host(reg);
  const PluginRecord api = host.load(plugin("bad_api"));
  EXPECT_FALSE(api.loaded);
  EXPECT_THAT(api.error,
              HasSubstr("plugin API version 999, this Gemflow expects " + std::to_string(kPluginApiVersion)));
  EXPECT_EQ(api.name, "bad_api");
  const PluginRecord none = host.load(plugin("no_register"));
  EXPECT_EQ(none.error, "no register function (gemflow_plugin_register missing)");
}

TEST(PluginLoader, SearchPathOrder) {
  ::setenv("GEMFLOW_PLUGIN_PATH", "/tmp/gf_a::/tmp/gf_b", 1);
  const auto path = PluginHost::search_path({"/tmp/gf_c", "/tmp/gf_a"});
  ::unsetenv("GEMFLOW_PLUGIN_PATH");
  // <exe>/../lib/gemflow/plugins first, then the environment, then extra; duplicates once.
  // (the install's folder relative to the prefix may differ from the build's lib/gemflow/plugins)
  ASSERT_GE(path.size(), 4u);
  const fs::path exe = fs::read_symlink("/proc/self/exe");
  EXPECT_EQ(path[0].parent_path().parent_path().parent_path(), fs::weakly_canonical(exe.parent_path().parent_path()));
  const std::size_t n = path.size();
  EXPECT_EQ(path[n - 3], "/tmp/gf_a");
  EXPECT_EQ(path[n - 2], "/tmp/gf_b");
  EXPECT_EQ(path[n - 1], "/tmp/gf_c");
}

TEST(PluginLoader, LoadAllUsesTheEnvironment) {
  ::setenv("GEMFLOW_PLUGIN_PATH", (fs::path(GEMFLOW_TEST_PLUGIN_DIR) / "testnodes").c_str(), 1);
  Registry reg;
  PluginHost host(reg);
  host.load_all();
  ::unsetenv("GEMFLOW_PLUGIN_PATH");
  EXPECT_NE(reg.find_node("test.constant"), nullptr);
}

// A plugin that loads first (alphabetically) registered an id of another plugin's namespace, and
// the rightful owner was then refused as a duplicate: ids must carry their plugin's name.
TEST(PluginLoader, AnIdOutsideThePluginsNamespaceIsRefused) {
  const fs::path dir = fs::temp_directory_path() / ("gemflow_loader_squat_" + std::to_string(::getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir);
  for (const char* c : {"squatter", "testnodes"}) fs::copy_file(plugin(c), dir / plugin(c).filename());
  Registry reg;
  PluginHost host(reg);
  host.load_directory(dir);
  ASSERT_EQ(host.records().size(), 2u);
  const PluginRecord& squatter = host.records()[0];
  EXPECT_FALSE(squatter.loaded);
  EXPECT_EQ(squatter.error, "node id 'test.add' is outside the plugin's namespace: plugin 'squatter' (" +
                                (fs::canonical(dir) / "libgemflow_squatter.so").string() +
                                ") may register only ids 'squatter.*'");
  EXPECT_EQ(reg.find_node("squatter.own"), nullptr);  // nothing of a refused plugin stays
  const PluginRecord& owner = host.records()[1];
  EXPECT_TRUE(owner.loaded) << owner.error;
  EXPECT_EQ(owner.node_ids.size(), 12u);
  EXPECT_EQ(reg.find_node("test.add")->origin, (fs::canonical(dir) / "libgemflow_testnodes.so").string());
  fs::remove_all(dir);
}

// A plugin that hangs while loading cost its probe's timeout in every command: it is remembered
// as failed until the file changes.
TEST(PluginLoader, APluginThatHangsWhileLoadingIsRememberedUntilItChanges) {
  const fs::path dir = fs::temp_directory_path() / ("gemflow_loader_hang_" + std::to_string(::getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir);
  const fs::path file = dir / "libgemflow_hang_ctor.so";
  fs::copy_file(plugin("hang_ctor"), file);
  ::setenv("GEMFLOW_PLUGIN_PROBE_TIMEOUT", "0.3", 1);
  Registry reg;
  PluginHost host(reg);
  const PluginRecord first = host.load(file);
  EXPECT_FALSE(first.loaded);
  EXPECT_EQ(first.error,
            "did not finish loading within 0.3 s (its load-time code hangs): hang_ctor: waiting for the "
            "licence server");
  EXPECT_TRUE(first.remembered_in.empty());

  // another command (another host): not tried again
  Registry reg2;
  PluginHost again(reg2);
  const PluginRecord second = again.load(file);
  EXPECT_FALSE(second.loaded);
  EXPECT_THAT(second.error, ::testing::StartsWith(first.error + " (remembered from the probe of "));
  EXPECT_THAT(second.error, ::testing::EndsWith(": not tried again until the file changes)"));
  ASSERT_FALSE(second.remembered_in.empty());
  EXPECT_TRUE(
      second.remembered_in.string().starts_with(std::string(std::getenv("XDG_CACHE_HOME")) + "/gemflow/plugin-probe/"));

  // a changed file (rebuilt): probed again
  fs::last_write_time(file, fs::last_write_time(file) + std::chrono::seconds(5));
  Registry reg3;
  PluginHost changed(reg3);
  const PluginRecord third = changed.load(file);
  ::unsetenv("GEMFLOW_PLUGIN_PROBE_TIMEOUT");
  EXPECT_EQ(third.error, first.error);
  EXPECT_TRUE(third.remembered_in.empty());
  fs::remove_all(dir);
}

}  // namespace
}  // namespace gemflow

namespace gemflow {
namespace {

// A plugin whose probe passed is loaded without the child the next time, until the file changes
// or GEMFLOW_PLUGIN_PROBE=always asks for it.
TEST(PluginLoader, APassedProbeIsRememberedUntilTheFileChanges) {
  const fs::path dir = fs::temp_directory_path() / ("gemflow_probe_memory_" + std::to_string(::getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir / "cache");
  const fs::path lib = dir / "libgemflow_testnodes.so";
  fs::copy_file(fs::path(GEMFLOW_TEST_PLUGIN_DIR) / "testnodes" / "libgemflow_testnodes.so", lib);
  const char* old_cache = std::getenv("XDG_CACHE_HOME");
  const std::string saved = old_cache ? old_cache : "";
  ::setenv("XDG_CACHE_HOME", (dir / "cache").c_str(), 1);
  const auto load = [&] {
    Registry reg;
    PluginHost host(reg);
    return host.load(lib);
  };
  const PluginRecord first = load();
  ASSERT_TRUE(first.loaded) << first.error;
  EXPECT_TRUE(first.probed);
  const PluginRecord second = load();
  ASSERT_TRUE(second.loaded) << second.error;
  EXPECT_FALSE(second.probed);
  // A newer modification time: probed again.
  fs::last_write_time(lib, fs::last_write_time(lib) + std::chrono::seconds(5));
  EXPECT_TRUE(load().probed);
  EXPECT_FALSE(load().probed);
  ::setenv("GEMFLOW_PLUGIN_PROBE", "always", 1);
  EXPECT_TRUE(load().probed);
  ::unsetenv("GEMFLOW_PLUGIN_PROBE");
  if (old_cache) ::setenv("XDG_CACHE_HOME", saved.c_str(), 1);
  else ::unsetenv("XDG_CACHE_HOME");
  fs::remove_all(dir);
}

}  // namespace
}  // namespace gemflow
