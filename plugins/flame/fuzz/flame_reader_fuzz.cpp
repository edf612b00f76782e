// libFuzzer harness: the flam3 XML reader and the writer's round trip (io's fuzz_support.hpp
// says what counts as a finding). No palette table: palette indices are refused by name.
#include "../../io/fuzz/fuzz_support.hpp"
#include "gemflow/flame/flame.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace gemflow;
  return io::fuzz::run(data, size, [](std::string_view bytes) {
    flame::ReadOptions o;
    o.source = io::fuzz::kInputName;
    o.strict = false;
    o.palettes = "/nonexistent/flam3-palettes.xml";
    const auto set = flame::parse_flames(bytes, o);
    for (const auto& f : set.flames) {
      // What we write we must read back.
      flame::ReadOptions again = o;
      again.strict = true;
      (void)flame::parse_flames(flame::write_flame(f), again);
    }
  });
}
