#pragma once
// The shipped workflows run with GEMFLOW_CHECK_PROGRESS set: a node that works longer than that
// without a progress report gets a warning in the log (gemflow/executor.hpp), which fails the test.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>

namespace gemflow::test {

/// Prefix of a `gemflow run` command line. 2 s rather than the 1 s asked of nodes: the tests
/// share two cores with other tests, which stretches a node's wall time.
inline const char* const kCheckProgress = "GEMFLOW_CHECK_PROGRESS=2 ";

/// Fails the test when the run's log has a node that reported no progress for too long.
inline void expect_progress_reported(const std::filesystem::path& log) {
  std::ifstream in(log);
  const std::string text((std::istreambuf_iterator<char>(in)), {});
  for (std::size_t at = text.find("reported no progress for"); at != std::string::npos;
       at = text.find("reported no progress for", at + 1)) {
    const auto b = text.rfind('\n', at);
    const auto e = text.find('\n', at);
    ADD_FAILURE() << "a node without progress reports: "
                  << text.substr(b == std::string::npos ? 0 : b + 1, e == std::string::npos ? e : e - b - 1);
  }
}

}  // namespace gemflow::test
