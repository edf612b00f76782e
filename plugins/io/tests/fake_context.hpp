#pragma once
// A minimal NodeContext for node tests without the executor.
#include <filesystem>
#include <fstream>
#include <functional>
#include <string>
#include <vector>

#include <gemflow/node.hpp>

namespace gemflow::io::testing {

class FakeContext final : public NodeContext {
 public:
  explicit FakeContext(std::filesystem::path out = std::filesystem::temp_directory_path())
      : out_(std::move(out)) {}
  const std::string& node_id() const override { return id_; }
  void progress(double, std::string_view) override {}
  bool cancelled() const override { return false; }
  void log(LogLevel level, std::string_view m) override {
    (level == LogLevel::Warning ? warnings : infos).emplace_back(m);
  }
  const std::filesystem::path& output_dir() const override { return out_; }
  void add_input_file(const std::filesystem::path& f) override { inputs.push_back(f); }
  void write_file(const std::filesystem::path& file,
                  const std::function<void(const std::filesystem::path&)>& write) override {
    auto tmp = file;
    tmp += ".tmp";
    write(tmp);
    std::filesystem::rename(tmp, file);
    written.push_back(file);
  }
  void record(std::string_view, const ParamValue&) override {}
  const std::string& device_override() const override { return none_; }

  std::vector<std::string> infos, warnings;
  std::vector<std::filesystem::path> inputs, written;

 private:
  std::string id_ = "test_node", none_;
  std::filesystem::path out_;
};

/// Writes `text` to a fresh file in the temp folder and returns its path.
inline std::string write_temp(const std::string& name, const std::string& text) {
  auto dir = std::filesystem::temp_directory_path() / "gemflow_io_tests";
  std::filesystem::create_directories(dir);
  auto p = dir / name;
  std::ofstream(p, std::ios::binary) << text;
  return p.string();
}

/// Path of a sample_data file.
inline std::string sample(const std::string& rel) { return std::string(GEMFLOW_SOURCE_DIR) + "/sample_data/" + rel; }

/// Path of a shared/data file, or "" when GEMFLOW_SHARED_DATA is unset or the file is absent.
inline std::string shared(const std::string& rel) {
  const char* root = std::getenv("GEMFLOW_SHARED_DATA");
  if (!root || !*root) return "";
  auto p = std::filesystem::path(root) / rel;
  return std::filesystem::exists(p) ? p.string() : "";
}

}  // namespace gemflow::io::testing
