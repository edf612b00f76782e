// Invariants of the mesh types: TriMesh and CirclePacking (an oriented manifold triangulation).
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <unordered_map>
#include <unordered_set>

#include <fmt/format.h>

#include "gemflow/error.hpp"
#include "gemflow/types.hpp"

namespace gemflow {

namespace {
using Index = TriMesh::Index;
using Faces = std::vector<std::array<Index, 3>>;
constexpr std::int64_t kNone = -1;

std::uint64_t edge_key(Index a, Index b) { return (std::uint64_t{a} << 32) | b; }

/// Checks that `faces` over n vertices are an oriented manifold in which every vertex lies on a
/// face (TriMesh's invariants but the coordinates and the loops). On success fills `next`:
/// next[a] = b for each boundary edge a→b (an edge of one face only), kNone for other vertices.
std::optional<std::string> check_triangulation(std::size_t n, const Faces& faces, std::vector<std::int64_t>& next) {
  std::vector<std::size_t> degree(n, 0);
  for (std::size_t f = 0; f < faces.size(); ++f) {
    const auto& t = faces[f];
    for (const Index v : t)
      if (v >= n) return fmt::format("face {} ({}, {}, {}) names vertex {}, but there are {} vertices", f, t[0], t[1], t[2], v, n);
    if (t[0] == t[1] || t[1] == t[2] || t[0] == t[2])
      return fmt::format("face {} ({}, {}, {}) repeats a vertex", f, t[0], t[1], t[2]);
    for (const Index v : t) ++degree[v];
  }
  for (std::size_t v = 0; v < n; ++v)
    if (degree[v] == 0) return fmt::format("vertex {} is in no face", v);

  // Each directed edge once: two faces on one side of an edge, or three faces on it.
  std::unordered_map<std::uint64_t, std::size_t> directed;
  directed.reserve(3 * faces.size());
  for (std::size_t f = 0; f < faces.size(); ++f) {
    const auto& t = faces[f];
    for (int k = 0; k < 3; ++k) {
      const Index a = t[k], b = t[(k + 1) % 3];
      if (const auto [it, fresh] = directed.emplace(edge_key(a, b), f); !fresh)
        return fmt::format("faces {} and {} both run along edge {}→{}: a face is flipped against its neighbour, or "
                           "the edge has more than two faces",
                           it->second, f, a, b);
    }
  }
  {
    // With the directed edges unique, two faces on the same three vertices are opposite ones (a closed
    // two-triangle pocket): refused as degenerate. Candidates share the sorted triple's first edge.
    std::unordered_map<std::uint64_t, std::vector<std::size_t>> by_edge;
    for (std::size_t f = 0; f < faces.size(); ++f) {
      auto t = faces[f];
      std::sort(t.begin(), t.end());
      auto& list = by_edge[edge_key(t[0], t[1])];
      for (const std::size_t g : list) {
        auto u = faces[g];
        std::sort(u.begin(), u.end());
        if (u == t) return fmt::format("faces {} and {} have the same vertices ({}, {}, {})", g, f, t[0], t[1], t[2]);
      }
      list.push_back(f);
    }
  }

  // Each vertex's link (the edges opposite it, a→c for its face (v, a, c)) is one path or one cycle:
  // else its faces form separate fans and it is not a manifold vertex.
  std::vector<std::vector<std::pair<Index, Index>>> link(n);
  for (const auto& t : faces)
    for (int k = 0; k < 3; ++k) link[t[k]].emplace_back(t[(k + 1) % 3], t[(k + 2) % 3]);
  for (std::size_t v = 0; v < n; ++v) {
    auto& l = link[v];
    std::sort(l.begin(), l.end());
    std::unordered_set<Index> targets;
    for (const auto& [a, c] : l) targets.insert(c);
    std::size_t starts = 0;
    Index start = l.front().first;
    for (const auto& [a, c] : l)
      if (!targets.contains(a)) ++starts, start = a;
    std::size_t walked = 0;
    for (Index at = start;;) {
      const auto it = std::lower_bound(l.begin(), l.end(), std::pair<Index, Index>{at, 0});
      if (it == l.end() || it->first != at) break;
      at = it->second;
      if (++walked == l.size() || at == start) break;
    }
    if (starts > 1 || walked != l.size())
      return fmt::format("vertex {} is not a manifold vertex: its faces form separate fans", v);
  }

  next.assign(n, kNone);
  for (const auto& [key, f] : directed) {
    const auto a = static_cast<Index>(key >> 32), b = static_cast<Index>(key & 0xffffffffu);
    if (!directed.contains(edge_key(b, a))) next[a] = b;  // one per vertex: its link is one path
  }
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
                   : fmt::format("boundary loop {}: {}→{} is not a boundary edge (the boundary runs {}→{}, along its "
                                 "faces' edges)",
                                 k, a, b, a, next[a]);
      ++loop_edges;
    }
  }
  const auto boundary_edges = static_cast<std::size_t>(std::count_if(next.begin(), next.end(), [](auto b) { return b != kNone; }));
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
    if (!std::isfinite(radii[i]) || radii[i] <= 0.0) return fmt::format("circle {}: radius {} is not positive", i, radii[i]);
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
