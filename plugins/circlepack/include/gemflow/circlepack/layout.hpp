#pragma once
// Layout of a packing (centres from radii), its normalisation, conformal-distortion statistics
// of a flattening, and a small rasteriser of packings.
//
// Layout (Stephenson 2005, §6.1; Collins & Stephenson 2003, §5): the seed face's first vertex at
// the origin, its second on the positive x axis; then breadth-first, each vertex placed from a
// placed neighbour u and the placed vertex v before (or after) it in u's flower: at distance
// r_u + r_w from u, at the face angle from v's direction (law of cosines, half-angle form).
// Every face is used once to place at most one vertex, so the other edges measure how well the
// packing closes up: closing_error = max over edges of |‖c_i − c_j‖ − (r_i + r_j)|/(r_i + r_j).
// Hyperbolic (maximal) packings are laid out in the Poincaré disc with disc automorphisms
// z ↦ (z − a)/(1 − āz) that move the pivot circle's hyperbolic centre to 0, where a neighbour
// at hyperbolic distance d lies at Euclidean |z| = tanh(d/2) and a horocycle tangent to the
// pivot circle of Euclidean radius ρ is the circle of centre (1+ρ)/2·e^{iφ}, radius (1−ρ)/2; the
// circles drawn are the Euclidean images (CirclePacking's disc model).
#include <array>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "gemflow/circlepack/complex.hpp"

namespace gemflow::circlepack {

enum class Normalisation {
  none,       ///< as placed (seed vertex at the origin)
  unit_disk,  ///< Euclidean: translate and scale so that every circle lies in the unit disk,
              ///< touching it (centre: the circles' bounding-box centre); hyperbolic: as placed
  polygon,    ///< lines: side 1 (its corners) mapped to (−½, 0)–(½, 0), the region above it
};

struct LayoutOptions {
  /// Seed face index; −1: a face (of finite vertices) at the vertex deepest inside the complex
  /// (largest combinatorial distance from the boundary and the ideal vertices).
  std::int64_t seed_face = -1;
  Normalisation normalisation = Normalisation::unit_disk;
};

struct Layout {
  std::vector<std::array<double, 2>> centres;  ///< per vertex (ideal vertices: NaN)
  std::vector<double> radii;                   ///< Euclidean radii as drawn (ideal: +inf)
  std::size_t seed_face = 0;
  double closing_error = 0;  ///< over edges between finite vertices, relative (see file comment)
  /// Lines: per ideal vertex (a, b, c) with a·x + b·y = c, (a, b) the outward unit normal (the
  /// circles on the side a·x + b·y < c); fitted to its first and last tangent circles.
  std::vector<std::array<double, 3>> lines;
  double line_error = 0;  ///< max over circles tangent to a line of |dist − r|/r (0 without lines)
};

/// Lays out `labels` (Euclidean radii or hyperbolic s-radii, per pack()) on `K`. Throws
/// PackError: a seed face out of range or with an ideal vertex; a vertex that cannot be reached
/// through faces of finite circles (named); normalisation polygon without lines.
[[nodiscard]] Layout layout(const Complex& K, Geometry g, const std::vector<double>& labels, const LayoutOptions& o);

/// Conformal and area distortion of a flattening: per face, the 3D triangle against the planar
/// one. Angle distortion: |angle₂D − angle₃D| over the face corners (degrees). Conformal
/// distortion: the ratio σ₁/σ₂ ≥ 1 of the singular values of the affine map 3D → 2D (1:
/// conformal). Area distortion: log of (area₂D/total₂D)/(area₃D/total₃D) (0: area-preserving).
struct Distortion {
  double angle_mean_deg = 0, angle_max_deg = 0;
  double conformal_mean = 0, conformal_max = 0;
  double area_log_mean_abs = 0, area_log_max_abs = 0;
  std::size_t flipped_faces = 0;  ///< planar faces with clockwise orientation
};
[[nodiscard]] Distortion distortion(const std::vector<std::array<double, 3>>& xyz,
                                    const std::vector<std::array<double, 2>>& uv, const std::vector<Face>& faces);

/// Radii of a planar tangency carrier: per vertex, the average over its faces of
/// (l_vw + l_vx − l_wx)/2 (the tangent lengths of each face's incircle), from 3D or 2D edge
/// lengths; exact when the mesh is the carrier of a tangency packing.
[[nodiscard]] std::vector<double> tangent_radii(const std::vector<std::array<double, 3>>& xyz,
                                                const std::vector<Face>& faces);

/// An sRGB 8-bit RGBA raster (row 0 at the top).
struct Raster {
  std::size_t width = 0, height = 0;
  std::vector<std::uint8_t> rgba;
};
enum class Colouring { radius, angle_error, none };
struct DrawOptions {
  std::size_t width = 800, height = 800;
  Colouring colouring = Colouring::radius;
  bool edges = true;     ///< the triangulation (centre to centre) in grey
  double margin = 0.03;  ///< fraction of the image kept free around the circles
};
/// Draws circles (filled by colour, black outlines) over a white background; `values` are the
/// per-circle quantities coloured (log radius or angle error), NaN to skip a circle. Colours: a
/// blue–yellow ramp (viridis-like) over the values' range. `unit_circle`: draw the unit circle
/// (hyperbolic packings).
[[nodiscard]] Raster draw(const std::vector<std::array<double, 2>>& centres, const std::vector<double>& radii,
                          const std::vector<Face>& faces, const std::vector<double>& values, bool unit_circle,
                          const DrawOptions& o);

}  // namespace gemflow::circlepack
