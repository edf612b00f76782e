// io.read_mesh, io.write_mesh.
#include <string>

#include <gemflow/types.hpp>

#include "gemflow/io/mesh_io.hpp"
#include "register.hpp"

namespace gemflow::io {
namespace {

class ReadMesh final : public Node {
 public:
  enum class Require { disk, manifold, any };
  static NodeInfo info() {
    return {.id = "io.read_mesh",
            .version = 1,
            .title = "Read mesh",
            .category = "Input/Output",
            .doc =
                "Reads a triangle mesh from OFF, OBJ or PLY (ASCII or binary), format by extension, and checks its "
                "topology. Quads and larger polygons are triangulated as fans from their first vertex, with a "
                "warning giving their count. Texture coordinates are read into the mesh's per-vertex UVs: OBJ vt "
                "(when every face corner has one and each vertex's corners agree; a texture with seams is "
                "dropped with a warning), PLY vertex properties u v / s t / texture_u texture_v; OFF has "
                "none. Normals and colours are not read. `require` "
                "sets the check: disk (one component, one boundary loop, Euler characteristic 1, an oriented "
                "manifold: what circle packing and flattening need), manifold (an oriented manifold without "
                "degenerate, duplicate or unreferenced elements), any (only the file's syntax; boundary loops "
                "are then left empty when the mesh is not a manifold).",
            .errors =
                "Syntax (file:line, or for binary PLY the element, index and byte offset): a bad number, a count "
                "larger than the file can hold (refused before allocating), a face naming a missing vertex, "
                "fewer than 3 vertices in a face, a truncated file, NaN or infinite coordinates (vertex named), "
                "an empty file or no faces. Topology (file named): not a disk (components, Euler characteristic "
                "and boundary-loop count), non-manifold edges and vertices, inconsistently oriented edges, "
                "degenerate (repeated vertex or zero area) and duplicate faces, unreferenced vertices, each "
                "with up to 10 indices (0-based) and the total count.",
            .memory =
                "The file's bytes plus 24 bytes a vertex and 12 a triangle; the topology check about 100 bytes "
                "a face.",
            .determinism = "Deterministic.",
            .references =
                "Geomview OFF; Wavefront OBJ (Advanced Visualizer manual, appendix B1); Turk, The PLY polygon "
                "file format (1994)."};
  }
  Output<TriMesh> mesh{this, "mesh", "The triangle mesh (0-based indices, boundary loops filled in)"};
  PathParam path{this, "path", PathParam::Mode::Read, "Mesh file (.off, .obj, .ply)", "", {".off", ".obj", ".ply"}};
  Choice<Require> require{this,
                          "require",
                          Require::manifold,
                          {{Require::disk, "disk"}, {Require::manifold, "manifold"}, {Require::any, "any"}},
                          {.doc = "Topology to insist on (see the node doc)"}};

  void execute(NodeContext& ctx) override {
    const auto file = path.value();
    ctx.add_input_file(file);
    TriMesh m;
    MeshReadInfo info;
    try {
      m = read_mesh(file.string(), &info, [&ctx] { return ctx.cancelled(); });
    } catch (const ParseError& e) {
      throw to_input_error(e);
    } catch (const ReadCancelled&) {
      throw Cancelled();
    }
    for (const auto& w : info.warnings) ctx.warn(file.filename().string() + ": " + w);
    ctx.progress(0.7, "checking the topology");
    const MeshTopology t = mesh_topology(m);
    const std::string where = file.string() + ": ";
    if (require.value() == Require::disk && !t.disk()) throw InputError(where + t.disk_problems());
    if (require.value() == Require::manifold && !t.clean()) throw InputError(where + t.manifold_problems());
    // The loops whenever the faces form a triangulation: a zero-area face is geometry, not
    // topology, so a later node can use or refuse the mesh for its own reason (a mesh of
    // `require: any` with a needle face once reached circlepack without loops, whose error then
    // blamed a boundary edge).
    if (t.clean()) {
      m.boundary = boundary_loops(m.vertices.size(), m.faces);
    } else {
      try {
        m.boundary = boundary_loops(m.vertices.size(), m.faces);
      } catch (const Error&) {  // not a triangulation: TriMesh::validate names why for its users
      }
    }
    ctx.record("vertices", static_cast<std::int64_t>(m.vertices.size()));
    ctx.record("faces", static_cast<std::int64_t>(m.faces.size()));
    ctx.record("euler_characteristic", t.euler);
    ctx.record("boundary_loops", static_cast<std::int64_t>(t.boundary_loops));
    ctx.info(file.filename().string() + ": " + DataType<TriMesh>::summary(m) + ", Euler characteristic " +
             std::to_string(t.euler) + ", " + std::to_string(t.components) + " component(s)");
    mesh.set(std::move(m));
  }
};

class WriteMesh final : public Node {
 public:
  static NodeInfo info() {
    return {.id = "io.write_mesh",
            .version = 1,
            .title = "Write mesh",
            .category = "Input/Output",
            .doc =
                "Writes a triangle mesh, format by extension, atomically: .obj (texture coordinates as 'vt', "
                "faces v/vt), .ply (ASCII or binary little-endian, doubles; texture coordinates as vertex "
                "properties s, t), .vtp (VTK XML PolyData, ASCII, texture coordinates as the TCoords array). The "
                "texture coordinates are the mesh's own UVs (circlepack.flatten's `mesh` output has them), or, "
                "when `uv` is connected, the x and y of the `uv` mesh's vertices (it must have as many vertices). "
                "OFF is not written: it has no texture coordinates.",
            .errors =
                "An unknown extension; a uv mesh with another vertex count; a file that cannot be written (the "
                "system's reason); nothing is left behind.",
            .memory = "The text or bytes written are streamed.",
            .determinism = "Deterministic: the same mesh gives the same file (shortest round-trip numbers).",
            .references = "Wavefront OBJ; Turk, The PLY polygon file format; VTK file formats (XML PolyData)."};
  }
  Input<TriMesh> mesh{this, "mesh", "Mesh to write"};
  Input<TriMesh> uv{this, "uv", "Texture coordinates instead of the mesh's own: its vertices' x, y (same vertex count)",
                    PortUse::Optional};
  PathParam path{this, "path", PathParam::Mode::Write, "Output file (.obj, .ply, .vtp)", "", {".obj", ".ply", ".vtp"}};
  Param<bool> binary{this, "binary", false, {.doc = ".ply: binary little-endian instead of ASCII"}};

  void execute(NodeContext& ctx) override {
    const auto file = path.value();
    const auto m = mesh.get();
    MeshUv coords;
    if (uv.connected()) {
      const auto u = uv.get();
      if (u->vertices.size() != m->vertices.size())
        throw InputError("input 'uv' has " + std::to_string(u->vertices.size()) + " vertices, input 'mesh' " +
                         std::to_string(m->vertices.size()));
      coords.reserve(u->vertices.size());
      for (const auto& p : u->vertices) coords.push_back({p[0], p[1]});
    }
    std::string ext = file.extension().string();
    for (char& c : ext) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    if (ext != ".obj" && ext != ".ply" && ext != ".vtp")
      throw InputError("parameter 'path': unknown mesh format '" + ext + "' (expected .obj, .ply or .vtp)");
    ctx.write_file(file, [&](std::ostream& out) {
      if (ext == ".obj") write_obj(out, *m, coords);
      else if (ext == ".ply") write_ply(out, *m, binary.value(), coords);
      else write_vtp(out, *m, coords);
    });
  }
};

}  // namespace

void register_mesh_nodes(PluginRegistrar& r) {
  r.add_node<ReadMesh>();
  r.add_node<WriteMesh>();
}

}  // namespace gemflow::io
