// libFuzzer harness: the mesh readers (OFF, OBJ, PLY ascii and binary) on the same input, and the
// topology report of whatever they read (see fuzz_support.hpp for what counts as a finding).
#include "fuzz_support.hpp"
#include "gemflow/io/mesh_io.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace gemflow::io;
  for (MeshFormat f : {MeshFormat::off, MeshFormat::obj, MeshFormat::ply})
    fuzz::run(data, size, [f](std::string_view text) {
      const auto m = parse_mesh(text, fuzz::kInputName, f);
      const auto t = mesh_topology(m);
      (void)t.disk_problems();
    });
  return 0;
}
