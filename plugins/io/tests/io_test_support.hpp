#pragma once
// Helpers of the io tests: temp files, sample and shared data paths. Node tests use
// gemflow::testing::RecordingContext (gemflow/testing.hpp).
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

namespace gemflow::io::testing {

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
