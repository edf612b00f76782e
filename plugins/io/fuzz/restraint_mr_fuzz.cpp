// libFuzzer harness: wwPDB .mr bundles and restraint format detection, then the reader it picks (see
// fuzz_support.hpp for what counts as a finding).
#include "fuzz_support.hpp"
#include "gemflow/io/errors.hpp"
#include "gemflow/io/restraints_io.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace gemflow::io;
  return fuzz::run(data, size, [](std::string_view text) {
    try {
      MrReport rep;
      (void)parse_mr_restraints(text, fuzz::kInputName, nullptr, &rep);
    } catch (const ParseError& e) {
      if (std::string_view(e.what()).find(fuzz::kInputName) == std::string_view::npos) throw;
    }
    (void)parse_restraints(text, fuzz::kInputName);
  });
}
