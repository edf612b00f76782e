// libFuzzer harness: the AMBER &rst restraint reader, against a structure of 40 atoms (see fuzz_support.hpp for
// what counts as a finding).
#include "fuzz_support.hpp"
#include "gemflow/io/restraints_io.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace gemflow::io;
  static const gemflow::Structure s = [] {
    gemflow::Structure st;
    // std::string sources: assigning short literals trips a false -Wrestrict of GCC 12
    const std::string names[4] = {"N", "CA", "C", "H"}, ala = "ALA", chain = "A";
    for (int i = 0; i < 40; ++i) {
      gemflow::Atom a;
      a.name = names[i % 4];
      a.residue = ala;
      a.residue_number = i / 4 + 1;
      a.chain = chain;
      st.atoms.push_back(a);
    }
    st.models.assign(1, std::vector<gemflow::Vec3>(st.atoms.size(), gemflow::Vec3{0, 0, 0}));
    return st;
  }();
  return fuzz::run(data, size, [](std::string_view text) { (void)parse_amber_restraints(text, fuzz::kInputName, &s); });
}
