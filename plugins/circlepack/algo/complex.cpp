// Flowers of a triangulated disk, the seed's lattices and the boundary conditions.
#include "gemflow/circlepack/complex.hpp"

#include <algorithm>
#include <map>
#include <numbers>
#include <queue>
#include <random>
#include <string>
#include <unordered_map>
#include <utility>

namespace gemflow::circlepack {
namespace {

constexpr double kPi = std::numbers::pi;
std::uint64_t key(Index a, Index b) { return (std::uint64_t{a} << 32) | b; }
std::string s(std::size_t v) { return std::to_string(v); }
std::string face_text(std::size_t f, const Face& t) {
  return "face " + s(f) + " (" + s(t[0]) + ", " + s(t[1]) + ", " + s(t[2]) + ")";
}

/// The boundary loop of a disk complex, from its smallest boundary vertex, in the direction of
/// the faces' boundary edges (the disk to its left).
std::vector<Index> boundary_loop(const Complex& K) {
  std::vector<Index> loop;
  Index start = 0;
  while (start < K.n && !K.boundary[start]) ++start;
  if (start == K.n) return loop;
  Index at = start;
  do {
    loop.push_back(at);
    at = K.flower[K.offset[at]];  // the boundary edge at→w₀ of at's first face
  } while (at != start && loop.size() <= K.n);
  return loop;
}

}  // namespace

std::size_t Complex::edge_count() const { return flower.size() / 2; }

namespace {

/// A face (v, from, to) seen from v: its petal from → to.
struct Petal {
  Index from, to;
  std::size_t face;
};

/// Checks the faces' indices; returns each vertex's petals, grouped by vertex (offset, n + 1
/// entries) and sorted by `from`. Throws PackError (naming the faces) when a directed edge is
/// in two faces: the pair a scan of the faces in order meets first.
std::vector<Petal> petals_of(std::size_t n, const std::vector<Face>& faces, const std::vector<std::uint8_t>& ideal,
                             std::vector<std::uint32_t>& offset) {
  offset.assign(n + 1, 0);
  for (std::size_t f = 0; f < faces.size(); ++f) {
    const auto& t = faces[f];
    for (Index v : t)
      if (v >= n) throw PackError(face_text(f, t) + " names vertex " + s(v) + ", but there are " + s(n) + " vertices");
    if (t[0] == t[1] || t[1] == t[2] || t[0] == t[2]) throw PackError(face_text(f, t) + " repeats a vertex");
    if (ideal[t[0]] + ideal[t[1]] + ideal[t[2]] == 3) throw PackError(face_text(f, t) + " has three ideal vertices");
    for (Index v : t) ++offset[v + 1];
  }
  if (3 * faces.size() > std::numeric_limits<std::uint32_t>::max()) throw PackError("more than 2³²−1 petals");
  for (std::size_t v = 0; v < n; ++v)
    if (offset[v + 1] == 0) throw PackError("vertex " + s(v) + " is in no face");
  for (std::size_t v = 0; v < n; ++v) offset[v + 1] += offset[v];
  std::vector<Petal> pet(offset[n]);
  {
    std::vector<std::uint32_t> at(offset.begin(), offset.end() - 1);
    for (std::size_t f = 0; f < faces.size(); ++f)
      for (int k = 0; k < 3; ++k) pet[at[faces[f][k]]++] = {faces[f][(k + 1) % 3], faces[f][(k + 2) % 3], f};
  }
  std::size_t bad = SIZE_MAX, bad_k = 0, first = 0;
  Index ba = 0, bb = 0;
  for (std::size_t v = 0; v < n; ++v) {
    const auto b = pet.begin() + offset[v], e = pet.begin() + offset[v + 1];
    std::sort(b, e,
              [](const Petal& x, const Petal& y) { return x.from != y.from ? x.from < y.from : x.face < y.face; });
    for (auto it = b; it + 1 < e; ++it) {  // v→from twice
      if (it->from != (it + 1)->from) continue;
      const std::size_t f = (it + 1)->face;
      const std::size_t k = faces[f][0] == v ? 0 : faces[f][1] == v ? 1 : 2;
      if (f < bad || (f == bad && k < bad_k))
        bad = f, bad_k = k, first = it->face, ba = static_cast<Index>(v), bb = it->from;
    }
  }
  if (bad != SIZE_MAX)
    throw PackError("faces " + s(first) + " and " + s(bad) + " both run along edge " + s(ba) + "→" + s(bb) +
                    ": a face flipped against its neighbour, or more than two faces on the edge");
  return pet;
}

/// Appends v's flower, from its petals sorted by `from`, to K; sets K.boundary[v].
void add_flower(Complex& K, std::size_t v, const Petal* b, const Petal* e, std::vector<Index>& tos) {
  const auto k = static_cast<std::size_t>(e - b);
  // the start: a 'from' neighbour that is no petal's 'to' (boundary), else the first
  tos.clear();
  for (const auto* p = b; p != e; ++p) tos.push_back(p->to);
  std::sort(tos.begin(), tos.end());
  std::size_t starts = 0;
  Index start = b->from;
  for (const auto* p = b; p != e; ++p)
    if (!std::binary_search(tos.begin(), tos.end(), p->from)) ++starts, start = p->from;
  const bool open = starts > 0;
  K.boundary[v] = open ? 1 : 0;
  K.flower.push_back(start);
  std::size_t walked = 0;  // petals followed from the start
  bool closed_up = false;
  for (Index at = start; walked < k;) {
    const auto* it = std::lower_bound(b, e, at, [](const Petal& p, Index x) { return p.from < x; });
    if (it == e || it->from != at) break;
    at = it->to;
    ++walked;
    if (at == start) {
      closed_up = true;
      break;
    }
    K.flower.push_back(at);
  }
  if (starts > 1 || walked != k || closed_up == open)
    throw PackError("vertex " + s(v) + " is not a manifold vertex: its " + s(k) + " faces form separate fans");
}

/// Connected components of the flowers' graph.
std::size_t components_of(const Complex& K) {
  std::vector<std::uint8_t> seen(K.n, 0);
  std::queue<Index> q;
  std::size_t components = 0;
  for (std::size_t r = 0; r < K.n; ++r) {
    if (seen[r]) continue;
    ++components;
    q.push(static_cast<Index>(r));
    seen[r] = 1;
    while (!q.empty()) {
      const Index v = q.front();
      q.pop();
      for (std::uint32_t j = K.offset[v]; j < K.offset[v + 1]; ++j)
        if (!seen[K.flower[j]]) seen[K.flower[j]] = 1, q.push(K.flower[j]);
    }
  }
  return components;
}

/// PackError unless K is one component with one boundary loop and Euler characteristic 1.
void require_disk(const Complex& K) {
  const std::size_t components = components_of(K);
  std::size_t loops = 0;
  std::vector<std::uint8_t> on(K.n, 0);
  for (std::size_t v = 0; v < K.n; ++v) {
    if (!K.boundary[v] || on[v]) continue;
    ++loops;
    for (Index at = static_cast<Index>(v); !on[at]; at = K.flower[K.offset[at]]) on[at] = 1;
  }
  const auto euler =
      static_cast<long long>(K.n) - static_cast<long long>(K.edge_count()) + static_cast<long long>(K.faces.size());
  if (components == 1 && loops == 1 && euler == 1) return;
  std::string m = "not a disk: " + s(components) + " component" + (components == 1 ? "" : "s") +
                  ", Euler characteristic " + std::to_string(euler) + " and " + s(loops) + " boundary loop" +
                  (loops == 1 ? "" : "s") + " (a disk has 1, 1 and 1)";
  if (components == 1 && loops == 0) m += ": a closed surface";
  if (components == 1 && loops > 1) m += ": a surface with " + s(loops - 1) + " holes";
  throw PackError(m);
}

/// The fixed angles of petals between two ideal vertices (corners between lines).
void set_fixed_petals(Complex& K, const std::vector<IdealCorner>& corners, Geometry geometry) {
  K.fixed_petal.assign(K.flower.size(), std::numeric_limits<double>::quiet_NaN());
  std::map<std::pair<Index, Index>, double> corner_angle;
  for (const auto& c : corners) {
    if (!(c.angle > 0 && c.angle < kPi))
      throw PackError("corner between ideal vertices " + s(c.a) + " and " + s(c.b) + ": angle " +
                      std::to_string(c.angle) + " is outside (0, π)");
    corner_angle[{std::min(c.a, c.b), std::max(c.a, c.b)}] = c.angle;
  }
  for (std::size_t v = 0; v < K.n; ++v) {
    if (K.ideal[v]) continue;
    const auto iv = static_cast<Index>(v);
    for (std::uint32_t j = 0; j < K.petals(iv); ++j) {
      const auto [a, b] = K.petal(iv, j);
      if (!K.ideal[a] || !K.ideal[b]) continue;
      const auto it = corner_angle.find({std::min(a, b), std::max(a, b)});
      if (it == corner_angle.end() && geometry == Geometry::hyperbolic) continue;  // two horocycles: the formula holds
      if (it == corner_angle.end())
        throw PackError("vertex " + s(v) + " lies between ideal vertices " + s(a) + " and " + s(b) +
                        ", whose corner angle is not given");
      K.fixed_petal[K.offset[v] + j] = kPi - it->second;
    }
  }
}

}  // namespace

Complex build_complex(std::size_t n, const std::vector<Face>& faces, std::vector<std::uint8_t> ideal,
                      const std::vector<IdealCorner>& corners, Geometry geometry) {
  if (n == 0 || faces.empty()) throw PackError("the triangulation is empty");
  if (n > std::numeric_limits<Index>::max()) throw PackError("more than 2³²−1 vertices");
  if (!ideal.empty() && ideal.size() != n)
    throw PackError("ideal flags: " + s(ideal.size()) + " for " + s(n) + " vertices");
  if (ideal.empty()) ideal.assign(n, 0);
  std::vector<std::uint32_t> poff;
  const std::vector<Petal> pet = petals_of(n, faces, ideal, poff);
  Complex K;
  K.n = n;
  K.faces = faces;
  K.ideal = std::move(ideal);
  K.boundary.assign(n, 0);
  K.offset.assign(n + 1, 0);
  K.flower.reserve(poff[n] + n);
  std::vector<Index> tos;
  for (std::size_t v = 0; v < n; ++v) {
    add_flower(K, v, pet.data() + poff[v], pet.data() + poff[v + 1], tos);
    K.offset[v + 1] = static_cast<std::uint32_t>(K.flower.size());
  }
  require_disk(K);
  set_fixed_petals(K, corners, geometry);
  return K;
}

std::size_t triangle_lattice_vertices(std::size_t layers) {
  if (layers > 92680) throw PackError("a triangle of " + s(layers) + " layers has more than 2³²−1 circles");
  return layers * (layers + 1) / 2;
}

Lattice triangle_lattice(std::size_t layers) {
  if (layers < 2) throw PackError("a triangle lattice needs at least 2 layers, got " + s(layers));
  const std::size_t n = triangle_lattice_vertices(layers);
  Lattice L;
  L.points.reserve(n);
  const double h = std::sqrt(3.0) / 2;
  for (std::size_t i = 0; i < layers; ++i)
    for (std::size_t j = 0; j <= i; ++j)
      L.points.push_back({static_cast<double>(j) - 0.5 * static_cast<double>(i), -h * static_cast<double>(i)});
  auto id = [](std::size_t i, std::size_t j) { return static_cast<Index>(i * (i + 1) / 2 + j); };
  L.faces.reserve((layers - 1) * (layers - 1));
  for (std::size_t i = 0; i + 1 < layers; ++i)
    for (std::size_t j = 0; j <= i; ++j) {
      L.faces.push_back({id(i, j), id(i + 1, j), id(i + 1, j + 1)});
      if (j < i) L.faces.push_back({id(i, j), id(i + 1, j + 1), id(i, j + 1)});
    }
  return L;
}

std::size_t hex_disk_vertices(std::size_t rings) {
  if (rings > 37000) throw PackError("a hexagonal disk of " + s(rings) + " rings has more than 2³²−1 circles");
  return 1 + 3 * rings * (rings + 1);
}

Lattice hex_disk(std::size_t rings) {
  if (rings < 1) throw PackError("a hexagonal disk needs at least 1 ring, got 0");
  const std::size_t n = hex_disk_vertices(rings);
  const auto R = static_cast<long long>(rings);
  Lattice L;
  L.points.reserve(n);
  std::unordered_map<std::uint64_t, Index> id;
  id.reserve(n);
  auto inside = [R](long long q, long long r) {
    return std::max({std::llabs(q), std::llabs(r), std::llabs(q + r)}) <= R;
  };
  auto k = [](long long q, long long r) {
    return (static_cast<std::uint64_t>(q + (1 << 20)) << 32) | static_cast<std::uint64_t>(r + (1 << 20));
  };
  const double h = std::sqrt(3.0) / 2;
  // rings outward from the centre, so vertex 0 is the centre
  for (long long ring = 0; ring <= R; ++ring)
    for (long long r = -ring; r <= ring; ++r)
      for (long long q = -ring; q <= ring; ++q)
        if (inside(q, r) && std::max({std::llabs(q), std::llabs(r), std::llabs(q + r)}) == ring) {
          id[k(q, r)] = static_cast<Index>(L.points.size());
          L.points.push_back({static_cast<double>(q) + 0.5 * static_cast<double>(r), h * static_cast<double>(r)});
        }
  L.faces.reserve(6 * rings * rings);
  for (long long r = -R; r <= R; ++r)
    for (long long q = -R; q <= R; ++q) {
      if (!inside(q, r)) continue;
      if (inside(q + 1, r) && inside(q, r + 1)) L.faces.push_back({id[k(q, r)], id[k(q + 1, r)], id[k(q, r + 1)]});
      if (inside(q, r + 1) && inside(q - 1, r + 1))
        L.faces.push_back({id[k(q, r)], id[k(q, r + 1)], id[k(q - 1, r + 1)]});
    }
  return L;
}

Lattice random_disk(std::size_t rings, std::uint64_t seed) {
  Lattice L = hex_disk(rings);
  const std::size_t n = L.points.size();
  const Complex K0 = build_complex(n, L.faces);
  std::vector<std::uint32_t> deg(n);
  for (std::size_t v = 0; v < n; ++v) deg[v] = K0.degree(static_cast<Index>(v));
  const std::vector<std::uint8_t> bnd = K0.boundary;
  std::unordered_map<std::uint64_t, std::size_t> face_of;  // directed edge → face
  face_of.reserve(3 * L.faces.size());
  for (std::size_t f = 0; f < L.faces.size(); ++f)
    for (int k = 0; k < 3; ++k) face_of[key(L.faces[f][k], L.faces[f][(k + 1) % 3])] = f;
  auto third = [](const Face& t, Index a, Index b) {
    for (Index v : t)
      if (v != a && v != b) return v;
    return t[0];
  };
  auto ccw = [&](Index a, Index b, Index c) {
    const auto& p = L.points[a];
    const auto& q = L.points[b];
    const auto& r = L.points[c];
    return (q[0] - p[0]) * (r[1] - p[1]) - (q[1] - p[1]) * (r[0] - p[0]) > 1e-9;
  };
  // mt19937_64's output is fixed by the standard, the distributions' are not: plain modulo keeps
  // the disk of a seed the same with every standard library (the bias is negligible here)
  std::mt19937_64 rng(seed);
  for (std::size_t attempt = 0; attempt < 3 * n; ++attempt) {
    const std::size_t f = static_cast<std::size_t>(rng() % L.faces.size());
    const auto e = static_cast<int>(rng() % 3);
    const Index a = L.faces[f][e], b = L.faces[f][(e + 1) % 3];
    if (bnd[a] || bnd[b]) continue;  // flip only edges between interior vertices
    const auto it = face_of.find(key(b, a));
    if (it == face_of.end()) continue;
    const std::size_t g = it->second;
    const Index c = third(L.faces[f], a, b), d = third(L.faces[g], a, b);
    if (deg[a] <= 4 || deg[b] <= 4 || deg[c] >= 9 || deg[d] >= 9) continue;
    if (face_of.contains(key(c, d)) || face_of.contains(key(d, c))) continue;
    if (!ccw(a, d, c) || !ccw(d, b, c)) continue;  // the quadrilateral a, d, b, c must be convex
    for (int k = 0; k < 3; ++k) {
      face_of.erase(key(L.faces[f][k], L.faces[f][(k + 1) % 3]));
      face_of.erase(key(L.faces[g][k], L.faces[g][(k + 1) % 3]));
    }
    L.faces[f] = {a, d, c};
    L.faces[g] = {d, b, c};
    for (std::size_t h : {f, g})
      for (int k = 0; k < 3; ++k) face_of[key(L.faces[h][k], L.faces[h][(k + 1) % 3])] = h;
    --deg[a], --deg[b], ++deg[c], ++deg[d];
  }
  return L;
}

std::size_t packing_bytes(std::size_t n, std::size_t f) {
  // flowers (≈ 6f entries × 12 bytes), per-vertex labels, targets, centres, colours (≈ 96 bytes),
  // the faces twice and the mesh's coordinates; with overflow checks.
  constexpr std::size_t per_vertex = 160, per_face = 100;
  if (n > std::numeric_limits<std::size_t>::max() / 2 / per_vertex ||
      f > std::numeric_limits<std::size_t>::max() / 2 / per_face)
    return std::numeric_limits<std::size_t>::max();
  return n * per_vertex + f * per_face;
}

namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

/// setup_problem's stages: one method per boundary condition, sharing the base complex and loop.
class ProblemBuilder {
 public:
  ProblemBuilder(std::size_t n, const std::vector<Face>& faces, const BoundarySpec& bc,
                 const std::vector<double>& initial)
      : n_(n), faces_(faces), bc_(bc), initial_(initial), base_(build_complex(n, faces)), loop_(boundary_loop(base_)) {
    if (!initial.empty() && initial.size() != n)
      throw PackError("initial radii: " + s(initial.size()) + " for " + s(n) + " vertices");
  }

  PackSetup build() {
    switch (bc_.kind) {
      case Boundary::fixed_radii: fixed_radii(); break;
      case Boundary::angle_sums: angle_sums(); break;
      case Boundary::lines: lines(); break;
      case Boundary::maximal: maximal(); break;
    }
    S_.problem.mesh_vertices = n_;
    for (std::size_t v = 0; v < S_.problem.labels.size(); ++v)
      if (S_.problem.geometry == Geometry::euclidean && !S_.complex.ideal[v] &&
          !(S_.problem.labels[v] > 0 && std::isfinite(S_.problem.labels[v])))
        throw PackError("radius of vertex " + s(v) + " is " + std::to_string(S_.problem.labels[v]) +
                        "; must be finite and > 0");
    return std::move(S_);
  }

 private:
  double init(std::size_t v, double dflt) const { return initial_.empty() ? dflt : initial_[v]; }

  std::vector<Index> pick_corners() const {
    std::vector<Index> c;
    if (bc_.corners == 0) {
      for (Index v : loop_)
        if (base_.petals(v) == 1) c.push_back(v);
      if (c.size() >= 3) return c;
      c.clear();
    }
    const std::size_t k = bc_.corners == 0 ? 4 : bc_.corners;
    if (k < 3) throw PackError(s(k) + " corners: a polygon needs at least 3");
    if (k > loop_.size())
      throw PackError(s(k) + " corners, but the boundary has only " + s(loop_.size()) + " vertices");
    c.reserve(k);
    for (std::size_t i = 0; i < k; ++i) c.push_back(loop_[i * loop_.size() / k]);
    return c;
  }

  /// The corner angle for k corners, checked against Gauss–Bonnet.
  double corner_angle(std::size_t k) const {
    const double a = bc_.corner_angle > 0 ? bc_.corner_angle : kPi - 2 * kPi / static_cast<double>(k);
    if (!(a > 0 && a < kPi)) throw PackError("corner angle " + std::to_string(a) + " rad is outside (0, π)");
    const double turning = static_cast<double>(k) * (kPi - a);
    if (std::abs(turning - 2 * kPi) > 1e-9)
      throw PackError("boundary targets contradict Gauss–Bonnet: Σ(π − A_v) over the " + s(loop_.size()) +
                      " boundary vertices is " + std::to_string(turning) + " (" + s(k) + " corners of " +
                      std::to_string(a * 180 / kPi) +
                      "°, sides 180°); a Euclidean disk needs 2π = " + std::to_string(2 * kPi));
    return a;
  }

  void euclidean_base() {
    S_.complex = std::move(base_);
    S_.problem.target.assign(n_, 2 * kPi);
    S_.problem.labels.resize(n_);
    for (std::size_t v = 0; v < n_; ++v) S_.problem.labels[v] = init(v, 1.0);
  }

  void fixed_radii() {
    if (!bc_.radii.empty() && bc_.radii.size() != loop_.size())
      throw PackError("fixed radii: " + s(bc_.radii.size()) + " given for " + s(loop_.size()) + " boundary vertices");
    euclidean_base();
    for (std::size_t i = 0; i < loop_.size(); ++i) {
      const double r = bc_.from_initial && !initial_.empty() ? initial_[loop_[i]]
                       : bc_.radii.empty()                   ? bc_.radius
                                                             : bc_.radii[i];
      if (!(r > 0) || !std::isfinite(r))
        throw PackError("fixed radius of boundary vertex " + s(loop_[i]) + " is " + std::to_string(r) +
                        "; must be finite and > 0");
      S_.problem.target[loop_[i]] = kNaN;
      S_.problem.labels[loop_[i]] = r;
    }
    if (loop_.size() == n_)
      throw PackError("fixed boundary radii: the triangulation has no interior vertex to solve for");
  }

  void angle_sums() {
    S_.corners = pick_corners();
    const double a = corner_angle(S_.corners.size());
    euclidean_base();
    for (Index v : loop_) S_.problem.target[v] = kPi;
    for (Index v : S_.corners) S_.problem.target[v] = a;
    for (Index v : loop_)
      if (S_.problem.target[v] >= static_cast<double>(S_.complex.petals(v)) * kPi)
        throw PackError("boundary vertex " + s(v) + " has " + s(S_.complex.petals(v)) + " face" +
                        (S_.complex.petals(v) == 1 ? "" : "s") + ": its angle sum cannot reach the target " +
                        std::to_string(S_.problem.target[v]) + " rad (each face's angle is below π)");
  }

  /// One ideal vertex (line) per side, side i from corner i to corner i+1 along the loop, line
  /// n + i; faces (y, x, line) on its boundary edges x→y, and (corner, previous line, line).
  void lines() {
    S_.corners = pick_corners();
    const double a = corner_angle(S_.corners.size());
    const std::size_t k = S_.corners.size();
    std::vector<std::size_t> pos(n_, SIZE_MAX);
    for (std::size_t i = 0; i < loop_.size(); ++i) pos[loop_[i]] = i;
    std::sort(S_.corners.begin(), S_.corners.end(), [&](Index x, Index y) { return pos[x] < pos[y]; });
    std::vector<Face> all = faces_;
    std::vector<std::uint8_t> ideal(n_ + k, 0);
    std::vector<IdealCorner> ic;
    for (std::size_t i = 0; i < k; ++i) {
      ideal[n_ + i] = 1;
      const auto line = static_cast<Index>(n_ + i);
      const std::size_t from = pos[S_.corners[i]],
                        to = i + 1 < k ? pos[S_.corners[i + 1]] : pos[S_.corners[0]] + loop_.size();
      for (std::size_t p = from; p < to; ++p)
        all.push_back({loop_[(p + 1) % loop_.size()], loop_[p % loop_.size()], line});
      const auto prev = static_cast<Index>(n_ + (i + k - 1) % k);
      all.push_back({S_.corners[i], prev, line});
      ic.push_back({prev, line, a});
    }
    S_.complex = build_complex(n_ + k, all, ideal, ic);
    S_.problem.target.assign(n_ + k, 2 * kPi);
    S_.problem.labels.assign(n_ + k, std::numeric_limits<double>::infinity());
    for (std::size_t v = 0; v < n_; ++v) S_.problem.labels[v] = init(v, 1.0);
    for (std::size_t i = 0; i < k; ++i) S_.problem.target[n_ + i] = kNaN;
  }

  void maximal() {
    std::vector<std::uint8_t> ideal(n_, 0);
    for (Index v : loop_) ideal[v] = 1;
    if (loop_.size() == n_) throw PackError("maximal packing: the triangulation has no interior vertex");
    for (std::size_t f = 0; f < faces_.size(); ++f)
      if (ideal[faces_[f][0]] && ideal[faces_[f][1]] && ideal[faces_[f][2]])
        throw PackError("maximal packing: " + face_text(f, faces_[f]) +
                        " has all three vertices on the boundary (an ear): three horocycles have no interior circle "
                        "to be placed from; use boundary fixed_radii or angle_sums");
    S_.complex = build_complex(n_, faces_, ideal, {}, Geometry::hyperbolic);
    S_.problem.geometry = Geometry::hyperbolic;
    S_.problem.target.assign(n_, 2 * kPi);
    S_.problem.labels.resize(n_);
    for (std::size_t v = 0; v < n_; ++v) {
      S_.problem.labels[v] = ideal[v] ? 0.0 : init(v, 0.5);
      if (ideal[v]) S_.problem.target[v] = kNaN;
      if (!ideal[v] && !(S_.problem.labels[v] > 0 && S_.problem.labels[v] < 1))
        throw PackError("initial s-radius of vertex " + s(v) + " must be in (0, 1)");
    }
  }

  std::size_t n_;
  const std::vector<Face>& faces_;
  const BoundarySpec& bc_;
  const std::vector<double>& initial_;
  Complex base_;
  std::vector<Index> loop_;
  PackSetup S_;
};

}  // namespace

PackSetup setup_problem(std::size_t n, const std::vector<Face>& faces, const BoundarySpec& bc,
                        const std::vector<double>& initial) {
  return ProblemBuilder(n, faces, bc, initial).build();
}

}  // namespace gemflow::circlepack
