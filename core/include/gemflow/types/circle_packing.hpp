#pragma once
// Circle packings: one circle per vertex of a triangulation, tangent along its edges.
#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "gemflow/types/trimesh.hpp"

namespace gemflow {

/// A circle packing of a triangulation with n vertices: circle i has centre `centres[i]` and
/// radius `radii[i]`, and circles i and j are meant to be tangent when i–j is an edge of
/// `faces` (the triangulation, TriMesh's convention: 0-based, counter-clockwise, an oriented
/// manifold). `boundary[i]` is 1 when vertex i lies on the triangulation's boundary, else 0.
///
/// Geometry: Euclidean — centres and radii in the plane, in one arbitrary length unit (the
/// layout's; a packing is defined up to similarity). Hyperbolic — the Poincaré disc model, with
/// centres and radii the Euclidean ones of the circles drawn in the unit disc, every circle
/// inside the closed unit disc (boundary circles of a maximal packing touch the unit circle:
/// horocycles).
///
/// Invariants (validate()): radii, centres and boundary have n entries; radii finite and > 0;
/// centres finite; face indices < n and distinct within a face; boundary values 0 or 1;
/// hyperbolic circles inside the unit disc (|c| + r ≤ 1, to 1e-9). Tangency is a numerical
/// property of a solution, not an invariant: tangency_error() measures it.
struct CirclePacking {
  enum class Geometry { Euclidean, Hyperbolic };
  using Index = TriMesh::Index;

  Geometry geometry = Geometry::Euclidean;
  std::vector<double> radii;
  std::vector<std::array<double, 2>> centres;
  std::vector<std::array<Index, 3>> faces;
  std::vector<std::uint8_t> boundary;

  [[nodiscard]] std::size_t size() const noexcept { return radii.size(); }
  /// The largest |‖c_i − c_j‖ − (r_i + r_j)| / (r_i + r_j) over the edges of `faces` (Euclidean
  /// distances; in the disc model a tangency in the hyperbolic plane is one in the drawing too);
  /// 0 without faces.
  [[nodiscard]] double tangency_error() const;
  /// nullopt when the invariants above hold, else the first broken one.
  [[nodiscard]] std::optional<std::string> validate() const;
};

}  // namespace gemflow
