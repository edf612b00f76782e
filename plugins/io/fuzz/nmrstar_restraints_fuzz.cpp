// libFuzzer harness: the NMR-STAR v3 restraint loop reader (see fuzz_support.hpp for what counts as a finding).
#include "fuzz_support.hpp"
#include "gemflow/io/restraints_io.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace gemflow::io;
  return fuzz::run(data, size, [](std::string_view text) { (void)parse_nmrstar_restraints(text, fuzz::kInputName); });
}
