// libFuzzer harness: the PNG reader (see fuzz_support.hpp for what counts as a finding).
#include "fuzz_support.hpp"
#include "gemflow/io/image_io.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace gemflow::io;
  return fuzz::run(data, size,
                   [](std::string_view bytes) { (void)read_png_memory(bytes.data(), bytes.size(), fuzz::kInputName); });
}
