// The plugin guide's code is compiled: every ```cpp and ```cmake block of docs/plugin-guide.md is
// a verbatim excerpt of a file under examples/, which the SDK test (sdk_itest.cpp) builds
// out-of-tree against the installed SDK and whose tests it runs.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

namespace fs = std::filesystem;

namespace {

std::string slurp(const fs::path& f) {
  std::ifstream in(f);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

struct Block {
  std::string lang, text;
  int line = 0;
};

std::vector<Block> code_blocks(const std::string& md) {
  std::vector<Block> r;
  std::istringstream in(md);
  std::string line;
  Block* open = nullptr;
  int n = 0;
  while (std::getline(in, line)) {
    ++n;
    if (line.starts_with("```")) {
      if (open) {
        open = nullptr;
      } else {
        r.push_back({line.substr(3), "", n + 1});
        open = &r.back();
      }
      continue;
    }
    if (open) open->text += line + "\n";
  }
  return r;
}

TEST(PluginGuide, EveryCodeBlockIsCompiledFromExamples) {
  const fs::path src(GEMFLOW_SOURCE_DIR);
  std::vector<std::string> files;
  for (const auto& e : fs::recursive_directory_iterator(src / "examples"))
    if (e.is_regular_file()) files.push_back(slurp(e.path()));
  const auto blocks = code_blocks(slurp(src / "docs/plugin-guide.md"));
  int checked = 0;
  for (const Block& b : blocks) {
    if (b.lang != "cpp" && b.lang != "cmake") continue;  // sh: commands, not code
    ++checked;
    bool found = false;
    for (const auto& f : files) found = found || f.find(b.text) != std::string::npos;
    EXPECT_TRUE(found) << "docs/plugin-guide.md:" << b.line << ": this " << b.lang
                       << " block is not a verbatim excerpt of a file under examples/:\n"
                       << b.text;
  }
  EXPECT_GE(checked, 6);  // the node, the rule, the group, CUDA, the data type, the test, CMake
}

}  // namespace
