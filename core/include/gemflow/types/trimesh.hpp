#pragma once
// Triangle meshes: oriented surfaces (the input of circle packing, discrete geometry).
#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace gemflow {

/// A triangle mesh: n vertices (x, y, z, doubles, in the source's length unit, not converted),
/// m faces (three vertex indices each, 0-based), the boundary loops and, optionally, texture
/// coordinates: one (u, v) per vertex (unitless; a texture image spans [0, 1]², though any finite
/// value is kept), or none. Per vertex, not per face corner: a mesh whose texture has seams (one
/// vertex with several (u, v)) has no per-vertex UVs (io.read_mesh drops them with a warning).
///
/// Invariants (validate() returns the first one broken, naming the face, edge or vertex):
/// - coordinates finite; face indices < n; a face's three vertices distinct;
/// - every vertex belongs to a face;
/// - an oriented manifold: each edge belongs to one face (a boundary edge) or two faces that
///   traverse it in opposite directions (no edge shared by three faces, no face flipped against
///   its neighbour); no two faces with the same three vertices;
/// - `boundary` lists each boundary loop once, as the cycle of its vertices in the direction of
///   its faces' edges (for counter-clockwise faces, the mesh lies to the left of the loop: an
///   outer boundary runs counter-clockwise, a hole clockwise); its directed edges are exactly the
///   boundary edges, and no vertex appears twice among all loops (a vertex where two boundary
///   loops meet is not a manifold vertex). A closed surface has no loops. The loops' order and
///   starting vertices are free; boundary_loops() gives a canonical one.
/// - `uv` is empty or holds one finite (u, v) per vertex.
///
/// Indices are 32-bit (as device code indexes them): at most 2³² − 1 vertices.
struct TriMesh {
  using Index = std::uint32_t;
  std::vector<std::array<double, 3>> vertices;
  std::vector<std::array<Index, 3>> faces;
  std::vector<std::vector<Index>> boundary;
  std::vector<std::array<double, 2>> uv;  ///< texture coordinates per vertex, or empty

  [[nodiscard]] std::size_t vertex_count() const noexcept { return vertices.size(); }
  [[nodiscard]] bool has_uv() const noexcept { return !uv.empty(); }
  [[nodiscard]] std::size_t face_count() const noexcept { return faces.size(); }
  /// nullopt when the invariants above hold, else the first broken one.
  [[nodiscard]] std::optional<std::string> validate() const;
};

/// Whether the triangle (a, b, c) has zero area: its sides collinear to about 1e-12 (|u × w|² ≤
/// 1e-24·max(|u|², |w|²)², u = b − a, w = c − a), tested on the sides scaled to unit size so that
/// very large or very small coordinates neither overflow nor underflow into "zero area". A face
/// with a repeated vertex has zero area. What io.read_mesh calls a degenerate face and what a
/// flattening, which keeps each face's angles, refuses.
[[nodiscard]] bool zero_area(const std::array<double, 3>& a, const std::array<double, 3>& b,
                             const std::array<double, 3>& c);

/// The boundary loops of `faces` (n vertices) in TriMesh's convention, each starting at its
/// smallest vertex index, loops ordered by that vertex: what a reader stores in
/// TriMesh::boundary. Throws Error when the faces are not an oriented manifold (the reason as
/// TriMesh::validate gives it) or an index is ≥ n.
[[nodiscard]] std::vector<std::vector<TriMesh::Index>> boundary_loops(
    std::size_t n, const std::vector<std::array<TriMesh::Index, 3>>& faces);

}  // namespace gemflow
