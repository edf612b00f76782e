// circlepack.triangle_lattice and circlepack.disk_lattice: generated triangulated disks.
#include <cmath>
#include <cstdint>
#include <limits>
#include <string>

#include <fmt/format.h>

#include <gemflow/circlepack/complex.hpp>
#include <gemflow/memory.hpp>
#include <gemflow/node.hpp>
#include <gemflow/types.hpp>

#include "convert.hpp"
#include "register.hpp"

namespace gemflow::circlepack {
namespace {

/// Refuses a lattice of n circles and f faces before building it: beyond 32-bit indices, or
/// more than the available memory (the size named either way).
void check_size(long double n, long double f, const std::string& what) {
  const long double bytes = n * 160.0L + f * 100.0L + n * 24.0L + f * 12.0L;
  const std::string size = fmt::format("{} has {:.4g} circles and {:.4g} faces, about {:.3g} GiB through packing", what,
                                       static_cast<double>(n), static_cast<double>(f),
                                       static_cast<double>(bytes / (1024.0L * 1024.0L * 1024.0L)));
  if (n > static_cast<long double>(std::numeric_limits<std::uint32_t>::max()))
    throw InputError(size + ": more than 2³²−1 circles (32-bit indices)");
  try {
    require_host_memory(static_cast<std::size_t>(bytes), what);
  } catch (const OutOfMemory& e) {
    throw OutOfMemory(size + ": " + e.what());
  }
}

TriMesh to_mesh(const Lattice& L) {
  TriMesh m;
  m.vertices.reserve(L.points.size());
  for (const auto& p : L.points) m.vertices.push_back({p[0], p[1], 0.0});
  m.faces.assign(L.faces.begin(), L.faces.end());
  m.boundary = boundary_loops(m.vertices.size(), m.faces);
  return m;
}

class TriangleLattice final : public Node {
 public:
  static NodeInfo info() {
    return {.id = "circlepack.triangle_lattice",
            .version = 1,
            .title = "Triangle lattice",
            .category = "Circle packing",
            .doc =
                "The seed's triangle: `layers` rows of 1, 2, …, layers vertices of the hexagonal lattice "
                "(N = layers(layers+1)/2 circles, (layers−1)² faces, counter-clockwise), row 0 at the top, unit "
                "spacing in the plane z = 0. Its boundary has three corners (the vertices of one face): "
                "circlepack.pack with boundary `lines` makes its three sides straight lines.",
            .errors =
                "layers < 2; a lattice beyond 2³²−1 circles or the available memory, refused before anything "
                "is built (the circle count and bytes named).",
            .memory = "About 200 bytes per circle through packing and layout.",
            .determinism = "Deterministic.",
            .references = "Collins & Stephenson, Comput. Geom. 25 (2003) 233–256 (the hexagonal lattice packings)."};
  }
  Output<TriMesh> mesh{this, "mesh", "The triangulated triangle (z = 0)"};
  Param<std::int64_t> layers{this, "layers", 10, {.min = 2, .doc = "Rows of circles (N = layers(layers+1)/2)"}};

  void execute(NodeContext& ctx) override {
    const auto L = layers.value();
    if (L < 2)
      throw InputError("parameter 'layers': a triangle lattice needs at least 2 layers, got " + std::to_string(L));
    const long double n = static_cast<long double>(L) * static_cast<long double>(L + 1) / 2;
    check_size(n, static_cast<long double>(L - 1) * static_cast<long double>(L - 1),
               "parameter 'layers' = " + std::to_string(L) + ": the triangle lattice");
    ctx.progress(0.1, "building the lattice");
    mesh.set(to_mesh(triangle_lattice(static_cast<std::size_t>(L))));
    ctx.record("circles", static_cast<std::int64_t>(n));
  }
};

class DiskLattice final : public Node {
 public:
  enum class Kind { hexagonal, random };
  static NodeInfo info() {
    return {.id = "circlepack.disk_lattice",
            .version = 1,
            .title = "Disk lattice",
            .category = "Circle packing",
            .doc =
                "A triangulated disk for scale tests: `hexagonal` is the hexagonal lattice within `rings` rings of "
                "a centre vertex (1 + 3·rings·(rings+1) vertices, 6·rings² faces, vertex 0 the centre); `random` is "
                "the same with about one random edge flip per vertex between interior vertices (degrees 4–9, "
                "planar: a flip is kept only when its quadrilateral is convex), an irregular combinatorics. The "
                "random disk is not a Delaunay triangulation of random points.",
            .errors =
                "rings < 1; a disk beyond 2³²−1 vertices or the available memory, refused before anything is "
                "built (the size named).",
            .memory = "About 200 bytes per circle through packing and layout.",
            .determinism = "hexagonal: deterministic; random: the same seed gives the same disk.",
            .references = "Stephenson, Introduction to Circle Packing (2005), ch. 2."};
  }
  Output<TriMesh> mesh{this, "mesh", "The triangulated disk (z = 0)"};
  Choice<Kind> kind{this,
                    "kind",
                    Kind::hexagonal,
                    {{Kind::hexagonal, "hexagonal"}, {Kind::random, "random"}},
                    {.doc = "hexagonal lattice, or with random edge flips"}};
  Param<std::int64_t> rings{this, "rings", 10, {.min = 1, .doc = "Rings around the centre vertex"}};
  SeedParam seed{this, "Seed of the random flips (kind random)"};

  void execute(NodeContext& ctx) override {
    const auto R = rings.value();
    if (R < 1) throw InputError("parameter 'rings': a disk needs at least 1 ring, got " + std::to_string(R));
    const long double n = 1 + 3.0L * static_cast<long double>(R) * static_cast<long double>(R + 1);
    check_size(n, 6.0L * static_cast<long double>(R) * static_cast<long double>(R),
               "parameter 'rings' = " + std::to_string(R) + ": the disk");
    ctx.progress(0.1, "building the disk");
    const auto r = static_cast<std::size_t>(R);
    mesh.set(to_mesh(kind.value() == Kind::hexagonal ? hex_disk(r) : random_disk(r, seed.value())));
    ctx.record("circles", static_cast<std::int64_t>(n));
  }
};

}  // namespace

void register_lattice_nodes(PluginRegistrar& r) {
  r.add_node<TriangleLattice>();
  r.add_node<DiskLattice>();
}

}  // namespace gemflow::circlepack
