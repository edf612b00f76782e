// libFuzzer harness: what circlepack does with a mesh file before packing it — io's OFF/OBJ/PLY
// readers, then build_complex() (flowers, boundary, Euler characteristic) over the faces read.
// io's fuzz_support.hpp says what counts as a finding; PackError (bad combinatorics, named by
// face or vertex: the node prefixes the input port) is a clean refusal too.
#include <gemflow/circlepack/complex.hpp>

#include "../../io/fuzz/fuzz_support.hpp"
#include "gemflow/io/mesh_io.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace gemflow;
  for (io::MeshFormat f : {io::MeshFormat::off, io::MeshFormat::obj, io::MeshFormat::ply})
    io::fuzz::run(data, size, [f](std::string_view text) {
      const TriMesh m = io::parse_mesh(text, io::fuzz::kInputName, f);
      try {
        const circlepack::Complex c = circlepack::build_complex(m.vertices.size(), {m.faces.begin(), m.faces.end()});
        // every flower's petals name vertices of the complex
        for (circlepack::Index v = 0; v < c.n; ++v)
          for (std::uint32_t j = 0; j < c.petals(v); ++j)
            for (circlepack::Index w : c.petal(v, j))
              if (w >= c.n) std::abort();
        (void)c.edge_count();
      } catch (const circlepack::PackError&) {
      }
    });
  return 0;
}
