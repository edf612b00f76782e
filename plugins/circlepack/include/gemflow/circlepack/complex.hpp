#pragma once
// The combinatorics of a circle packing: a triangulated disk as flowers (each vertex's
// neighbours in counter-clockwise order), with optional ideal vertices (circles of infinite
// radius: straight lines in the Euclidean plane, horocycles in the hyperbolic one); the seed's
// lattices; the boundary conditions that turn a disk into a packing problem.
//
// Conventions: vertices 0-based 32-bit; faces counter-clockwise (TriMesh's convention), an
// oriented manifold. A vertex's flower lists its neighbours w₀ … w_k counter-clockwise: an
// interior vertex has k petals (faces) and k neighbours (closed: petal j is (w_j, w_{j+1 mod k})),
// a boundary vertex k petals and k + 1 neighbours (open fan, w₀ and w_k on the boundary).
// Angles in radians; radii in one arbitrary length unit (Euclidean) or hyperbolic length.
//
// Sources: K. Stephenson, "Introduction to Circle Packing" (Cambridge 2005), ch. 2–3 (flowers,
// angle sums, boundary conditions, maximal packings); Collins & Stephenson, Comput. Geom. 25
// (2003) 233–256 (the combinatorics CirclePack uses).
#include <array>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <stdexcept>
#include <string>
#include <vector>

namespace gemflow::circlepack {

using Index = std::uint32_t;
using Face = std::array<Index, 3>;

/// Invalid input of a circlepack algorithm (bad combinatorics, impossible boundary condition).
/// what() names the vertex, face or quantity and the reason.
class PackError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// Two ideal vertices a and b (straight lines) meeting at a corner of the region with interior
/// angle `angle` (radians, in (0, π)): the circle tangent to both sees them at angle π − angle.
struct IdealCorner {
  Index a, b;
  double angle;
};

/// Geometry of a packing problem.
enum class Geometry { euclidean, hyperbolic };

/// A triangulated disk as flowers (see the file comment). Built by build_complex().
struct Complex {
  std::size_t n = 0;
  std::vector<Face> faces;
  std::vector<std::uint8_t> boundary;  ///< 1: boundary vertex (open flower)
  std::vector<std::uint8_t> ideal;     ///< 1: infinite radius (line / horocycle); never updated
  std::vector<std::uint32_t> offset;   ///< n + 1: v's flower is flower[offset[v] .. offset[v+1])
  std::vector<Index> flower;           ///< neighbours, counter-clockwise
  /// Parallel to `flower`: the angle at v of petal j when both its neighbours are ideal (a corner
  /// between two lines: π − the corner's angle), NaN otherwise.
  std::vector<double> fixed_petal;

  [[nodiscard]] std::uint32_t degree(Index v) const { return offset[v + 1] - offset[v]; }
  /// Number of faces at v.
  [[nodiscard]] std::uint32_t petals(Index v) const { return degree(v) - (boundary[v] ? 1u : 0u); }
  /// Petal j of v: its two neighbours (j < petals(v)).
  [[nodiscard]] std::array<Index, 2> petal(Index v, std::uint32_t j) const {
    const std::uint32_t o = offset[v], k = degree(v);
    return {flower[o + j], flower[o + (j + 1) % k]};
  }
  /// Number of (undirected) edges.
  [[nodiscard]] std::size_t edge_count() const;
};

/// Builds the flowers of `faces` over n vertices; `ideal` (empty or n entries) marks vertices of
/// infinite radius; `corners` gives the angle of each face with two ideal vertices (one entry
/// per such pair; in Euclidean geometry a face with two ideal vertices and no corner is an
/// error, in hyperbolic geometry two horocycles need none; a face of three ideal vertices is an
/// error).
/// Throws PackError naming the face or vertex when: an index ≥ n or repeated in a face; a
/// directed edge in two faces (flipped neighbour or > 2 faces on an edge); a vertex in no face
/// or whose faces form several fans (not a manifold vertex); the faces are not one connected
/// disk (Euler characteristic V − E + F and boundary-loop count named).
[[nodiscard]] Complex build_complex(std::size_t n, const std::vector<Face>& faces, std::vector<std::uint8_t> ideal = {},
                                    const std::vector<IdealCorner>& corners = {},
                                    Geometry geometry = Geometry::euclidean);

/// A planar lattice: vertex positions (unit spacing) and counter-clockwise faces.
struct Lattice {
  std::vector<std::array<double, 2>> points;
  std::vector<Face> faces;
};

/// The seed's triangle: `layers` rows of 1, 2, …, layers circles of the hexagonal lattice
/// (N = layers(layers+1)/2 vertices, (layers−1)² faces), row 0 at the top; unit spacing, so
/// equal circles of radius 1/2 pack the equilateral triangle. layers ≥ 2.
[[nodiscard]] Lattice triangle_lattice(std::size_t layers);
/// Vertices of triangle_lattice(layers): layers(layers+1)/2; throws PackError when it overflows
/// 32-bit indices (layers > 92680).
[[nodiscard]] std::size_t triangle_lattice_vertices(std::size_t layers);
/// The hexagonal disk of `rings` rings around a centre vertex: 1 + 3·rings·(rings+1) vertices,
/// 6·rings² faces. rings ≥ 1.
[[nodiscard]] Lattice hex_disk(std::size_t rings);
/// Vertices of hex_disk(rings); PackError beyond 32-bit indices.
[[nodiscard]] std::size_t hex_disk_vertices(std::size_t rings);
/// hex_disk(rings) with random edge flips (about one per vertex, seeded): an irregular
/// triangulation of the same disk, interior degrees 4 … 9 (a flip is skipped when it would
/// leave a vertex with fewer than 4 neighbours or more than 9). Not Delaunay: the points are
/// the lattice's; the combinatorics is what packing sees.
[[nodiscard]] Lattice random_disk(std::size_t rings, std::uint64_t seed);
/// Bytes a lattice of n vertices and f faces needs through packing and layout (all arrays),
/// for a memory check before building it.
[[nodiscard]] std::size_t packing_bytes(std::size_t n, std::size_t f);

/// Boundary conditions (Stephenson 2005, ch. 3 and 11).
enum class Boundary {
  fixed_radii,  ///< boundary radii fixed (Euclidean); interior angle sums 2π
  angle_sums,   ///< boundary angle sums: π on straight sides, π − 2π/k at k corners (Euclidean)
  lines,        ///< each side tangent to a straight line (ideal vertex); k corners, regular polygon
  maximal,      ///< hyperbolic: boundary circles horocycles, packing fills the unit disk
};

struct BoundarySpec {
  Boundary kind = Boundary::fixed_radii;
  /// fixed_radii: the boundary radius for every boundary vertex (when `radii` is empty).
  double radius = 1.0;
  /// fixed_radii: one radius per boundary vertex of the loop (in loop order), optional.
  std::vector<double> radii;
  /// fixed_radii: the boundary radii are the initial radii given to setup_problem.
  bool from_initial = false;
  /// angle_sums and lines: number of corners; 0 = auto (the boundary vertices of one face, when
  /// at least 3, else 4 evenly spaced).
  std::size_t corners = 0;
  /// angle_sums and lines: the interior angle at each corner (radians); 0 = the regular
  /// polygon's π − 2π/k. Gauss–Bonnet needs Σ over the boundary of (π − target) = 2π.
  double corner_angle = 0.0;
};

/// A packing problem on a complex: which labels are unknown and their targets.
///
/// Labels: Euclidean radius r (ideal: +inf); hyperbolic s-radius s = exp(−h) of hyperbolic
/// radius h (ideal: 0, a horocycle) — the variable in which the hyperbolic angle formula and
/// the horocycle limit are exact (Stephenson 2005, §3.3).
struct Problem {
  Geometry geometry = Geometry::euclidean;
  /// Per vertex: the angle-sum target of an unknown radius (radians), NaN for a fixed one.
  std::vector<double> target;
  /// Per vertex: the fixed label, or the initial one of an unknown.
  std::vector<double> labels;
  /// The complex's vertices [0, mesh_vertices) are the input's; those after are added ideal ones.
  std::size_t mesh_vertices = 0;
  [[nodiscard]] bool free(Index v) const { return !std::isnan(target[v]); }
};

/// A complex and its problem under a boundary condition.
struct PackSetup {
  Complex complex;
  Problem problem;
  std::vector<Index> corners;  ///< lines / angle_sums: the corner vertices, in loop order
};

/// Builds the complex of a disk triangulation (n vertices, faces) with boundary condition `bc`:
/// lines adds one ideal vertex per side (vertices n, n+1, …) and corner faces; maximal makes the
/// boundary vertices horocycles. Initial labels: 1 (Euclidean), s = 0.5 (hyperbolic), or
/// `initial` when given (n entries, Euclidean radii or hyperbolic s-radii).
/// Throws PackError: not a disk (see build_complex); fewer than 3 corners or corners that are
/// not boundary vertices; a corner angle outside (0, π); boundary targets that break Gauss–Bonnet
/// (the sum named); maximal or lines without an interior vertex; a fixed radius ≤ 0 or not
/// finite; a wrong number of radii.
[[nodiscard]] PackSetup setup_problem(std::size_t n, const std::vector<Face>& faces, const BoundarySpec& bc,
                                      const std::vector<double>& initial = {});

}  // namespace gemflow::circlepack
