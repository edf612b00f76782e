// libFuzzer harness: the AMBER &rst restraint reader, against a structure of 40 atoms (see fuzz_support.hpp for
// what counts as a finding).
#include "fuzz_support.hpp"
#include "gemflow/io/restraints_io.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace gemflow::io;
  static const gemflow::Structure s = [] {
    gemflow::Structure st;
    for (int i = 0; i < 40; ++i) {
      gemflow::Atom a;
      a.name = i % 4 == 0 ? "N" : i % 4 == 1 ? "CA" : i % 4 == 2 ? "C" : "H";
      a.residue = "ALA";
      a.residue_number = i / 4 + 1;
      a.chain = "A";
      st.atoms.push_back(a);
    }
    st.models.assign(1, std::vector<gemflow::Vec3>(st.atoms.size(), gemflow::Vec3{0, 0, 0}));
    return st;
  }();
  return fuzz::run(data, size, [](std::string_view text) { (void)parse_amber_restraints(text, fuzz::kInputName, &s); });
}
