// Replays inputs through a libFuzzer harness without libFuzzer: the regression inputs that once
// crashed or hung a reader, and the seed corpus, run in the normal build under CTest.
//
//   fuzz_replay_<name> [FILE|DIR]... [--list FILE_OF_PATHS]
//
// A harness reports a finding by crashing (an uncaught exception, a sanitizer report, abort), as
// under libFuzzer, so this driver only feeds inputs and reports the slowest one. Exit 0 when every
// input ran, 2 on a usage error (a missing argument path) or when there is no input at all (a
// replay of nothing would pass whatever the harness does).
#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size);
extern "C" __attribute__((weak)) int LLVMFuzzerInitialize(int* argc, char*** argv);

namespace fs = std::filesystem;

namespace {

void collect(const fs::path& p, std::vector<fs::path>& out) {
  if (fs::is_directory(p)) {
    for (const auto& e : fs::recursive_directory_iterator(p))
      if (e.is_regular_file() && e.path().filename().string().front() != '.') out.push_back(e.path());
  } else {
    out.push_back(p);
  }
}

}  // namespace

int main(int argc, char** argv) {
  if (LLVMFuzzerInitialize) LLVMFuzzerInitialize(&argc, &argv);
  std::vector<fs::path> inputs;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "--list" && i + 1 < argc) {
      std::ifstream list(argv[++i]);
      for (std::string line; std::getline(list, line);)
        if (!line.empty() && fs::exists(line)) collect(line, inputs);
      continue;
    }
    if (!fs::exists(a)) {
      std::fprintf(stderr, "fuzz_replay: %s does not exist\n", a.c_str());
      return 2;
    }
    collect(a, inputs);
  }
  if (inputs.empty()) {
    std::fprintf(stderr, "fuzz_replay: no input to replay (no regression input, and no seed file found)\n");
    return 2;
  }
  std::sort(inputs.begin(), inputs.end());
  double slowest = 0;
  fs::path slowest_input;
  for (const auto& p : inputs) {
    std::ifstream in(p, std::ios::binary);
    std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    std::fprintf(stderr, "fuzz_replay: %s\n", p.string().c_str());
    auto t0 = std::chrono::steady_clock::now();
    LLVMFuzzerTestOneInput(reinterpret_cast<const std::uint8_t*>(bytes.data()), bytes.size());
    double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    if (s > slowest) slowest = s, slowest_input = p;
  }
  std::printf("fuzz_replay: %zu inputs, slowest %.3f s (%s)\n", inputs.size(), slowest,
              slowest_input.filename().string().c_str());
  return 0;
}
