#pragma once
// Triangle meshes: reading OFF, OBJ and PLY (ASCII and binary) into gemflow::TriMesh, writing
// OBJ (with texture coordinates), PLY and VTK XML PolyData (.vtp); the topology report that
// decides whether a mesh is a disk.
//
// Own readers rather than Debian's OpenMesh (libopenmesh-dev): OpenMesh's readers report a
// failure as a bool and a message on its log stream, without the file's line or the element's
// index, they allocate what a header announces before checking that the file can hold it (a
// 30-byte PLY header announcing 10⁹ vertices reserves gigabytes), and they repair non-manifold
// input silently (dropping faces) where we must name the offending indices. The formats are
// small; the readers below check every count against the bytes left before allocating, name
// file:line (ASCII) or the element and its index with the byte offset (binary PLY) in every
// error, and leave topology to mesh_topology(), which names the indices.
//
// Sources: OFF — Geomview's OFF file format (geomview.org/docs/html/OFF.html); OBJ — Wavefront
// Advanced Visualizer manual, appendix B1 (polygonal geometry: v, vt, f with v/vt/vn forms,
// negative relative indices, '\' line continuation); PLY — Turk, "The PLY polygon file format"
// (1994; Paul Bourke's copy, paulbourke.net/dataformats/ply); VTK XML PolyData — "VTK File
// Formats", VTK User's Guide 11th ed., section 19.3.
#include <array>
#include <cstddef>
#include <cstdint>
#include <iosfwd>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "gemflow/io/limits.hpp"
#include "gemflow/types/trimesh.hpp"

namespace gemflow::io {

enum class MeshFormat { off, obj, ply };

/// What a reader did besides reading: the caller logs the warnings.
struct MeshReadInfo {
  MeshFormat format = MeshFormat::off;
  std::string encoding;                   ///< "ascii", "binary_little_endian", "binary_big_endian"
  std::size_t polygons_triangulated = 0;  ///< faces with more than 3 vertices, fanned from their first
  std::size_t triangles_added = 0;        ///< triangles those fans added beyond one per polygon
  std::vector<std::string> warnings;
};

/// The format of `path` by extension (.off, .obj, .ply, case-insensitive); ParseError otherwise.
[[nodiscard]] MeshFormat mesh_format_of(const std::string& path);

/// Reads a mesh file (format by extension). Faces with k > 3 vertices (quads, polygons) are
/// triangulated as a fan from their first vertex, exact for convex polygons, and counted in
/// `info` with a warning (a non-convex polygon's fan may fold: the topology is right, the
/// geometry of those triangles not). Vertex coordinates must be finite (NaN and Inf are errors
/// naming the vertex). Texture coordinates go to TriMesh::uv, one per vertex: OBJ `vt` through
/// the faces' v/vt references, kept when every face corner has one and the corners of each vertex
/// agree (else dropped with a warning: a texture with seams has no per-vertex form; corners
/// without vt; a vt index past the file's vt lines); PLY vertex properties u v, s t, texture_u texture_v or
/// texture_s texture_t (finite, else an error naming the vertex); OFF has no texture coordinates.
/// Normals, colours and other properties are skipped.
/// TriMesh::boundary is left empty (mesh_topology computes the loops).
/// Errors (ParseError): file:line for OFF, OBJ and ASCII PLY; for binary PLY line 0 and
/// "element E index I (byte B)". Counts larger than the bytes left could hold are refused at
/// the header before anything is allocated; a face naming a vertex that does not exist; a face
/// with fewer than 3 vertices; an empty file or a file without faces.
[[nodiscard]] TriMesh read_mesh(const std::string& path, MeshReadInfo* info = nullptr, const CancelCheck& cancel = {});
/// Same from bytes in memory; `path` names it in errors.
[[nodiscard]] TriMesh parse_mesh(std::string_view data, const std::string& path, MeshFormat format,
                                 MeshReadInfo* info = nullptr, const CancelCheck& cancel = {});

/// Topology of a face list over n vertices, every defect with its indices (at most
/// kMaxListed of each kind are listed; the counts are complete).
struct MeshTopology {
  static constexpr std::size_t kMaxListed = 10;
  std::size_t vertices = 0, faces = 0, edges = 0;
  std::size_t components = 0;                ///< connected components of the faces (unreferenced vertices not counted)
  std::int64_t euler = 0;                    ///< V − E + F over the referenced vertices
  std::size_t boundary_loops = 0;            ///< loops of boundary edges (edges of one face); 0 when not a manifold
  std::vector<TriMesh::Index> unreferenced;  ///< vertices in no face
  std::size_t unreferenced_count = 0;
  std::vector<std::size_t> degenerate_faces;  ///< a repeated vertex, or zero area (collinear)
  std::size_t degenerate_count = 0;
  std::vector<std::pair<std::size_t, std::size_t>> duplicate_faces;  ///< same three vertices
  std::size_t duplicate_count = 0;
  std::vector<std::pair<TriMesh::Index, TriMesh::Index>> nonmanifold_edges;  ///< edges with > 2 faces
  std::size_t nonmanifold_edge_count = 0;
  std::vector<std::pair<TriMesh::Index, TriMesh::Index>> flipped_edges;  ///< two faces, same direction
  std::size_t flipped_edge_count = 0;
  std::vector<TriMesh::Index> nonmanifold_vertices;  ///< faces around it form several fans
  std::size_t nonmanifold_vertex_count = 0;

  /// An oriented manifold without degenerate, duplicate or unreferenced elements.
  [[nodiscard]] bool clean() const;
  /// clean(), one component, one boundary loop, χ = 1.
  [[nodiscard]] bool disk() const;
  /// "" when disk(), else every reason, each with its indices or counts, e.g. "not a disk: Euler
  /// characteristic 2 and 0 boundary loops (a disk has 1 and 1): a closed surface".
  [[nodiscard]] std::string disk_problems() const;
  /// "" when clean(), else the reasons.
  [[nodiscard]] std::string manifold_problems() const;
};

/// Topology of `mesh` (its coordinates are used only for zero-area faces).
[[nodiscard]] MeshTopology mesh_topology(const TriMesh& mesh);

/// Texture coordinates for the writers: one (u, v) per vertex, or empty. Each writer writes
/// `uv` when given, else the mesh's own TriMesh::uv when it has them (std::invalid_argument when
/// the count is not the vertex count). There is no OFF writer (OFF has no texture coordinates).
using MeshUv = std::vector<std::array<double, 2>>;

/// OBJ: "v x y z", "vt u v" (when uv is given, one per vertex), "f a/a b/b c/c" (1-based).
/// Coordinates in shortest round-trip text.
void write_obj(std::ostream& out, const TriMesh& mesh, const MeshUv& uv = {});
/// PLY, ASCII or binary little-endian: vertex x y z (double) [+ s t (double) with uv], face
/// list uchar int vertex_indices.
void write_ply(std::ostream& out, const TriMesh& mesh, bool binary, const MeshUv& uv = {});
/// VTK XML PolyData (ASCII data arrays): Points (Float64), Polys, and a "uv" point-data array
/// (TCoords) when given.
void write_vtp(std::ostream& out, const TriMesh& mesh, const MeshUv& uv = {});

}  // namespace gemflow::io
