#pragma once
// Helpers of the io tests: temp files, sample and shared data paths, expected parse errors. Node
// tests use gemflow::testing::RecordingContext (gemflow/testing.hpp).
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <initializer_list>
#include <sstream>
#include <string>

#include "gemflow/io/errors.hpp"
#include "gemflow/io/structure_io.hpp"

/// EXPECT that `text` contains `part` (printing the text when not).
#define EXPECT_CONTAINS(text, part) EXPECT_NE(std::string(text).find(part), std::string::npos) << (text)

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

/// Model 1 of the deposited 2KPU structure (sample_data), read once.
inline const Structure& model1() {
  static const Structure s = read_pdb(sample("2kpu/2kpu.pdb"), {.model = 1});
  return s;
}

/// The text of the ParseError that `f` throws, or "(no ParseError)".
template <class F>
std::string error_of(F&& f) {
  try {
    f();
  } catch (const ParseError& e) {
    return e.what();
  }
  return "(no ParseError)";
}

/// The bytes of a file.
inline std::string slurp(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  std::ostringstream s;
  s << f.rdbuf();
  return s.str();
}

/// Expects `f` to throw ParseError whose what() contains every string of `parts`.
template <class F>
void expect_parse_error(F&& f, std::initializer_list<std::string> parts) {
  try {
    f();
    ADD_FAILURE() << "no ParseError thrown";
  } catch (const ParseError& e) {
    for (const auto& p : parts) EXPECT_NE(std::string(e.what()).find(p), std::string::npos) << e.what();
  }
}

/// Expects `f` to throw ParseError on `line` whose message contains every string of `parts`.
template <class F>
void expect_error_at(F&& f, int line, std::initializer_list<std::string> parts) {
  try {
    f();
    ADD_FAILURE() << "no ParseError thrown (expected line " << line << ")";
  } catch (const ParseError& e) {
    EXPECT_EQ(e.line(), line) << e.what();
    for (const auto& p : parts) EXPECT_NE(std::string(e.what()).find(p), std::string::npos) << e.what();
  }
}

}  // namespace gemflow::io::testing
