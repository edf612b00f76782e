#pragma once
// Quantities the circle-packing viewer colours by (no display, no VTK): angle sums and errors
// from the radii, tangency errors from the layout.
#include <array>
#include <cstddef>
#include <vector>

#include <gemflow/types/circle_packing.hpp>
#include <gemflow/types/trimesh.hpp>

namespace gemflow::studio {

/// θ(v): the sum over the faces at v of the angle at v of the triangle of centres whose sides
/// are r_v + r_a, r_v + r_b, r_a + r_b (law of cosines). Radii are the drawn (Euclidean) ones,
/// which makes it right for a hyperbolic packing drawn in the disc too: tangent circles in the
/// drawing close up around an interior vertex exactly when θ = 2π.
[[nodiscard]] std::vector<double> angle_sums(const std::vector<double>& radii,
                                             const std::vector<std::array<TriMesh::Index, 3>>& faces);

/// |θ(v) − 2π| at interior vertices; NaN at boundary vertices (their target angle depends on the
/// boundary condition, which a packing does not record) and at vertices of no face.
[[nodiscard]] std::vector<double> angle_errors(const CirclePacking& p);

/// Per circle: the largest |‖c_i − c_j‖ − (r_i + r_j)| / (r_i + r_j) over its edges (the
/// per-circle form of CirclePacking::tangency_error); NaN for a circle of no edge.
[[nodiscard]] std::vector<double> tangency_errors(const CirclePacking& p);

/// The UVs of a mesh (TriMesh::uv, one (u, v) per vertex: read_mesh's texture coordinates or
/// circlepack.flatten's), or nullptr when it has none.
[[nodiscard]] inline const std::vector<std::array<double, 2>>* mesh_uvs(const TriMesh& m) {
  return !m.uv.empty() && m.uv.size() == m.vertices.size() ? &m.uv : nullptr;
}

}  // namespace gemflow::studio
