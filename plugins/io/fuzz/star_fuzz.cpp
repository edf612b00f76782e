// libFuzzer harness: the STAR (NEF, NMR-STAR, CIF syntax) tokenizer and parser (see fuzz_support.hpp for what counts as
// a finding).
#include "fuzz_support.hpp"
#include "gemflow/io/star.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace gemflow::io;
  return fuzz::run(data, size, [](std::string_view text) { (void)parse_star(text, fuzz::kInputName); });
}
