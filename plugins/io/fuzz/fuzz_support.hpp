#pragma once
// What the io readers' libFuzzer harnesses count as a clean refusal: an error derived from
// std::runtime_error (io::ParseError, gemflow::Error) whose text names the input. Anything
// else — another exception (std::out_of_range from an unchecked conversion, std::bad_alloc), a
// sanitizer report, a crash, a hang past libFuzzer's -timeout — is a finding.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <stdexcept>
#include <string>
#include <string_view>

// Readers may allocate what a file declares when its data can fill it: a valid 60-byte header of
// an all-zero 20000×20000 matrix is 3.2 GB dense. The harnesses cap Gemflow's checked allocations
// at 64 MiB (GEMFLOW_MEMORY_LIMIT; under ASan on a loaded machine filling 163 MB took over the
// 2 s -timeout), so such inputs are clean refusals (OutOfMemory) and only unchecked allocations
// count as findings.
extern "C" int LLVMFuzzerInitialize(int*, char***) {
  ::setenv("GEMFLOW_MEMORY_LIMIT", "64M", 1);
  return 0;
}

namespace gemflow::io::fuzz {

/// The name every harness gives its input; every error must contain it.
inline const std::string kInputName = "fuzz-input";

template <class F>
int run(const std::uint8_t* data, std::size_t size, F&& read) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  try {
    read(text);
  } catch (const std::runtime_error& e) {
    if (std::string_view(e.what()).find(kInputName) == std::string_view::npos) {
      std::fprintf(stderr, "error without the input's name: %s\n", e.what());
      std::abort();
    }
  }
  return 0;
}

}  // namespace gemflow::io::fuzz
