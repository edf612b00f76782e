// libFuzzer harness: the CYANA .upl/.lol/.aco restraint reader (see fuzz_support.hpp for what counts as a
// finding).
#include "fuzz_support.hpp"
#include "gemflow/io/errors.hpp"
#include "gemflow/io/restraints_io.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace gemflow::io;
  return fuzz::run(data, size, [](std::string_view text) {
    for (CyanaKind k : {CyanaKind::Upper, CyanaKind::Lower}) {
      try {
        (void)parse_cyana_restraints(text, fuzz::kInputName, k);
      } catch (const ParseError& e) {
        if (std::string_view(e.what()).find(fuzz::kInputName) == std::string_view::npos) throw;
      }
    }
    (void)parse_cyana_restraints(text, fuzz::kInputName, CyanaKind::Angles);
  });
}
