// Invariants of the mesh types: TriMesh and CirclePacking (an oriented manifold triangulation).
#include <algorithm>
#include <cmath>
#include <cstdint>

#include <fmt/format.h>

#include "gemflow/error.hpp"
#include "gemflow/types.hpp"

namespace gemflow {

namespace {
using Index = TriMesh::Index;
using Faces = std::vector<std::array<Index, 3>>;
constexpr std::int64_t kNone = -1;

/// A face seen from one of its vertices v: the face (v, a, c) counter-clockwise, so that it holds
/// the directed edges v→a and c→v.
struct Corner {
  Index a, c;
  std::size_t face;
};

/// Checks that `faces` over n vertices are an oriented manifold in which every vertex lies on a
/// face (TriMesh's invariants but the coordinates and the loops). On success fills `next`:
/// next[a] = b for each boundary edge a→b (an edge of one face only), kNone for other vertices.
/// Each vertex's corners are sorted in a compressed table: every check is a search in a short
/// list (no hash table), and the first defect reported is the one a scan of the faces in order
/// meets first.
std::optional<std::string> check_triangulation(std::size_t n, const Faces& faces, std::vector<std::int64_t>& next) {
  std::vector<std::size_t> offset(n + 1, 0);
  for (std::size_t f = 0; f < faces.size(); ++f) {
    const auto& t = faces[f];
    for (const Index v : t)
      if (v >= n)
        return fmt::format("face {} ({}, {}, {}) names vertex {}, but there are {} vertices", f, t[0], t[1], t[2], v,
                           n);
    if (t[0] == t[1] || t[1] == t[2] || t[0] == t[2])
      return fmt::format("face {} ({}, {}, {}) repeats a vertex", f, t[0], t[1], t[2]);
    for (const Index v : t) ++offset[v + 1];
  }
  for (std::size_t v = 0; v < n; ++v)
    if (offset[v + 1] == 0) return fmt::format("vertex {} is in no face", v);
  for (std::size_t v = 0; v < n; ++v) offset[v + 1] += offset[v];
  std::vector<Corner> corner(offset[n]);
  {
    std::vector<std::size_t> at(offset.begin(), offset.end() - 1);
    for (std::size_t f = 0; f < faces.size(); ++f)
      for (int k = 0; k < 3; ++k) {
        const auto& t = faces[f];
        corner[at[t[k]]++] = {t[(k + 1) % 3], t[(k + 2) % 3], f};
      }
  }
  auto begin = [&](std::size_t v) { return corner.begin() + static_cast<std::ptrdiff_t>(offset[v]); };
  auto end = [&](std::size_t v) { return corner.begin() + static_cast<std::ptrdiff_t>(offset[v + 1]); };
  for (std::size_t v = 0; v < n; ++v)
    std::sort(begin(v), end(v),
              [](const Corner& x, const Corner& y) { return x.a != y.a ? x.a < y.a : x.face < y.face; });
  // v's corner leaving along v→a, or nullptr
  auto leaving = [&](std::size_t v, Index a) -> const Corner* {
    const auto it = std::lower_bound(begin(v), end(v), a, [](const Corner& x, Index y) { return x.a < y; });
    return it != end(v) && it->a == a ? &*it : nullptr;
  };

  // Each directed edge once: two faces on one side of an edge, or three faces on it. Reported: the
  // pair whose later face (then its corner) comes first.
  {
    std::size_t bf = SIZE_MAX, bk = 0, first = 0;
    Index ba = 0, bb = 0;
    for (std::size_t v = 0; v < n; ++v)
      for (auto it = begin(v); it + 1 < end(v); ++it) {
        if (it->a != (it + 1)->a) continue;
        const std::size_t f = (it + 1)->face;
        const auto& t = faces[f];
        const std::size_t k = t[0] == v ? 0 : t[1] == v ? 1 : 2;
        if (f < bf || (f == bf && k < bk)) bf = f, bk = k, first = it->face, ba = static_cast<Index>(v), bb = it->a;
      }
    if (bf != SIZE_MAX)
      return fmt::format(
          "faces {} and {} both run along edge {}→{}: a face is flipped against its neighbour, or "
          "the edge has more than two faces",
          first, bf, ba, bb);
  }
  // With the directed edges unique, two faces on the same three vertices are opposite ones (a closed
  // two-triangle pocket): refused as degenerate. The face opposite (a, b, c) holds b→a and c.
  for (std::size_t f = 0; f < faces.size(); ++f) {
    const auto& t = faces[f];
    const Corner* o = leaving(t[1], t[0]);
    if (o && o->c == t[2] && o->face < f) {
      auto u = t;
      std::sort(u.begin(), u.end());
      return fmt::format("faces {} and {} have the same vertices ({}, {}, {})", o->face, f, u[0], u[1], u[2]);
    }
  }

  // Each vertex's link (the edges opposite it, a→c for its face (v, a, c)) is one path or one cycle:
  // else its faces form separate fans and it is not a manifold vertex.
  std::vector<Index> targets;
  for (std::size_t v = 0; v < n; ++v) {
    targets.clear();
    for (auto it = begin(v); it != end(v); ++it) targets.push_back(it->c);
    std::sort(targets.begin(), targets.end());
    std::size_t starts = 0;
    Index start = begin(v)->a;
    for (auto it = begin(v); it != end(v); ++it)
      if (!std::binary_search(targets.begin(), targets.end(), it->a)) ++starts, start = it->a;
    const std::size_t size = offset[v + 1] - offset[v];
    std::size_t walked = 0;
    for (Index at = start;;) {
      const Corner* c = leaving(v, at);
      if (!c) break;
      at = c->c;
      if (++walked == size || at == start) break;
    }
    if (starts > 1 || walked != size)
      return fmt::format("vertex {} is not a manifold vertex: its faces form separate fans", v);
  }

  next.assign(n, kNone);
  for (std::size_t v = 0; v < n; ++v)
    for (auto it = begin(v); it != end(v); ++it)
      if (!leaving(it->a, static_cast<Index>(v))) next[v] = it->a;  // one per vertex: its link is one path
  return std::nullopt;
}

std::vector<std::vector<Index>> loops_of(const std::vector<std::int64_t>& next) {
  std::vector<std::vector<Index>> loops;
  std::vector<bool> seen(next.size(), false);
  for (std::size_t v = 0; v < next.size(); ++v) {
    if (next[v] == kNone || seen[v]) continue;
    auto& loop = loops.emplace_back();
    for (auto at = static_cast<Index>(v); !seen[at]; at = static_cast<Index>(next[at])) {
      seen[at] = true;
      loop.push_back(at);
    }
  }
  return loops;
}
}  // namespace

bool zero_area(const std::array<double, 3>& a, const std::array<double, 3>& b, const std::array<double, 3>& c) {
  double u[3] = {b[0] - a[0], b[1] - a[1], b[2] - a[2]};
  double w[3] = {c[0] - a[0], c[1] - a[1], c[2] - a[2]};
  double scale = 0;
  for (int k = 0; k < 3; ++k) scale = std::max({scale, std::abs(u[k]), std::abs(w[k])});
  if (scale > 0 && std::isfinite(scale))
    for (int k = 0; k < 3; ++k) u[k] /= scale, w[k] /= scale;
  const double x[3] = {u[1] * w[2] - u[2] * w[1], u[2] * w[0] - u[0] * w[2], u[0] * w[1] - u[1] * w[0]};
  const double cross2 = x[0] * x[0] + x[1] * x[1] + x[2] * x[2];
  const double l2 = std::max(u[0] * u[0] + u[1] * u[1] + u[2] * u[2], w[0] * w[0] + w[1] * w[1] + w[2] * w[2]);
  return !(cross2 > 1e-24 * l2 * l2);
}

std::vector<std::vector<Index>> boundary_loops(std::size_t n, const Faces& faces) {
  std::vector<std::int64_t> next;
  if (auto why = check_triangulation(n, faces, next)) throw Error("boundary loops: " + *why);
  return loops_of(next);
}

std::optional<std::string> TriMesh::validate() const {
  if (vertices.size() > std::size_t{UINT32_MAX})
    return fmt::format("{} vertices: at most {} can be indexed", vertices.size(), UINT32_MAX);
  for (std::size_t v = 0; v < vertices.size(); ++v)
    for (const double x : vertices[v])
      if (!std::isfinite(x))
        return fmt::format("vertex {} ({}, {}, {}) is not finite", v, vertices[v][0], vertices[v][1], vertices[v][2]);
  if (!uv.empty() && uv.size() != vertices.size())
    return fmt::format("uv holds {} texture coordinates for {} vertices (one per vertex, or none)", uv.size(),
                       vertices.size());
  for (std::size_t v = 0; v < uv.size(); ++v)
    if (!std::isfinite(uv[v][0]) || !std::isfinite(uv[v][1]))
      return fmt::format("uv of vertex {} ({}, {}) is not finite", v, uv[v][0], uv[v][1]);
  std::vector<std::int64_t> next;
  if (auto why = check_triangulation(vertices.size(), faces, next)) return why;
  // The loops: only boundary edges, no vertex twice, and as many edges as there are boundary edges.
  std::vector<bool> in_loop(vertices.size(), false);
  std::size_t loop_edges = 0;
  for (std::size_t k = 0; k < boundary.size(); ++k) {
    const auto& loop = boundary[k];
    if (loop.empty()) return fmt::format("boundary loop {} is empty", k);
    for (const Index a : loop)
      if (a >= vertices.size())
        return fmt::format("boundary loop {} names vertex {}, but there are {} vertices", k, a, vertices.size());
    for (std::size_t i = 0; i < loop.size(); ++i) {
      const Index a = loop[i], b = loop[(i + 1) % loop.size()];
      if (in_loop[a]) return fmt::format("boundary loop {}: vertex {} appears twice among the loops", k, a);
      in_loop[a] = true;
      if (next[a] != std::int64_t{b})
        return next[a] == kNone
                   ? fmt::format("boundary loop {}: vertex {} is not on the boundary", k, a)
                   : fmt::format(
                         "boundary loop {}: {}→{} is not a boundary edge (the boundary runs {}→{}, along its "
                         "faces' edges)",
                         k, a, b, a, next[a]);
      ++loop_edges;
    }
  }
  const auto boundary_edges =
      static_cast<std::size_t>(std::count_if(next.begin(), next.end(), [](auto b) { return b != kNone; }));
  if (loop_edges != boundary_edges) {
    for (std::size_t v = 0; v < next.size(); ++v)
      if (next[v] != kNone && !in_loop[v])
        return fmt::format("boundary edge {}→{} is in no boundary loop ({} boundary edges, {} in the loops)", v,
                           next[v], boundary_edges, loop_edges);
  }
  return std::nullopt;
}

double CirclePacking::tangency_error() const {
  double worst = 0.0;
  for (const auto& t : faces)
    for (int k = 0; k < 3; ++k) {
      const Index i = t[k], j = t[(k + 1) % 3];
      if (i >= radii.size() || j >= radii.size() || i >= centres.size() || j >= centres.size()) continue;
      const double d = std::hypot(centres[i][0] - centres[j][0], centres[i][1] - centres[j][1]);
      const double sum = radii[i] + radii[j];
      worst = std::max(worst, std::abs(d - sum) / sum);
    }
  return worst;
}

std::optional<std::string> CirclePacking::validate() const {
  const std::size_t n = radii.size();
  if (n > std::size_t{UINT32_MAX}) return fmt::format("{} circles: at most {} can be indexed", n, UINT32_MAX);
  if (centres.size() != n) return fmt::format("{} centres for {} radii", centres.size(), n);
  if (boundary.size() != n) return fmt::format("{} boundary flags for {} circles", boundary.size(), n);
  for (std::size_t i = 0; i < n; ++i) {
    if (!std::isfinite(radii[i]) || radii[i] <= 0.0)
      return fmt::format("circle {}: radius {} is not positive", i, radii[i]);
    if (!std::isfinite(centres[i][0]) || !std::isfinite(centres[i][1]))
      return fmt::format("circle {}: centre ({}, {}) is not finite", i, centres[i][0], centres[i][1]);
    if (boundary[i] > 1) return fmt::format("circle {}: boundary flag {} is neither 0 nor 1", i, int{boundary[i]});
    if (geometry == Geometry::Hyperbolic) {
      const double reach = std::hypot(centres[i][0], centres[i][1]) + radii[i];
      if (reach > 1.0 + 1e-9)
        return fmt::format("circle {} (centre ({}, {}), radius {}) leaves the unit disc (reaches {})", i, centres[i][0],
                           centres[i][1], radii[i], reach);
    }
  }
  std::vector<std::int64_t> next;
  if (auto why = check_triangulation(n, faces, next)) return "triangulation: " + *why;
  for (std::size_t i = 0; i < n; ++i)
    if ((boundary[i] != 0) != (next[i] != kNone))
      return fmt::format("circle {}: boundary flag {}, but vertex {} is {} the triangulation's boundary", i,
                         int{boundary[i]}, i, next[i] != kNone ? "on" : "not on");
  return std::nullopt;
}

}  // namespace gemflow
