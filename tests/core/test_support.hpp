#pragma once
// Shared helpers of the core tests.
#include <atomic>
#include <filesystem>
#include <string>

#include <gtest/gtest.h>

#include "gemflow/plugin_loader.hpp"
#include "gemflow/workflow.hpp"

namespace gemflow::test {

/// A registry holding the testnodes plugin (tests/plugins/testnodes).
inline const Registry& testnodes() {
  static const Registry* reg = [] {
    auto* r = new Registry();
    PluginHost host(*r);
    const PluginRecord rec =
        host.load(std::filesystem::path(GEMFLOW_TEST_PLUGIN_DIR) / "testnodes" / "libgemflow_testnodes.so");
    if (!rec.loaded) throw std::runtime_error("testnodes plugin: " + rec.error);
    return r;
  }();
  return *reg;
}

/// A fresh, empty temporary folder removed at destruction.
class TempDir {
 public:
  TempDir() {
    static std::atomic<int> counter{0};
    path_ = std::filesystem::temp_directory_path() /
            ("gemflow_core_test_" + std::to_string(::getpid()) + "_" + std::to_string(counter++));
    std::filesystem::remove_all(path_);
    std::filesystem::create_directories(path_);
  }
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  [[nodiscard]] const std::filesystem::path& path() const { return path_; }
  std::filesystem::path operator/(const std::string& s) const { return path_ / s; }

 private:
  std::filesystem::path path_;
};

/// All diagnostics as text, one per line (for failure messages).
inline std::string all(const std::vector<Diagnostic>& ds) {
  std::string s;
  for (const auto& d : ds) s += d.str() + "\n";
  return s;
}

}  // namespace gemflow::test
