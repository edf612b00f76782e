// Breadth-first layout (Euclidean and Poincaré disc), normalisation, distortion statistics.
#include "gemflow/circlepack/layout.hpp"

#include <algorithm>
#include <cmath>
#include <complex>
#include <limits>
#include <numbers>
#include <queue>
#include <string>

#include "angles.hpp"

namespace gemflow::circlepack {
namespace {

using C = std::complex<double>;
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

/// The vertex farthest (in edges) from the boundary and the ideal vertices, among finite ones.
Index deepest(const Complex& K) {
  std::vector<std::int64_t> depth(K.n, -1);
  std::queue<Index> q;
  for (std::size_t v = 0; v < K.n; ++v)
    if (K.boundary[v] || K.ideal[v]) depth[v] = 0, q.push(static_cast<Index>(v));
  while (!q.empty()) {
    const Index v = q.front();
    q.pop();
    for (std::uint32_t j = K.offset[v]; j < K.offset[v + 1]; ++j)
      if (depth[K.flower[j]] < 0) depth[K.flower[j]] = depth[v] + 1, q.push(K.flower[j]);
  }
  Index best = 0;
  std::int64_t bd = -1;
  for (std::size_t v = 0; v < K.n; ++v)
    if (!K.ideal[v] && depth[v] > bd) bd = depth[v], best = static_cast<Index>(v);
  return best;
}

/// Circumcircle of three points.
void circle_through(C a, C b, C c, C& centre, double& radius) {
  const C ab = b - a, ac = c - a;
  const double d = 2 * (ab.real() * ac.imag() - ab.imag() * ac.real());
  const double nb = std::norm(ab), nc = std::norm(ac);
  centre = a + C((ac.imag() * nb - ab.imag() * nc) / d, (ab.real() * nc - ac.real() * nb) / d);
  radius = std::abs(a - centre);
}

/// layout()'s stages, sharing the result and the placed flags.
class Layouter {
 public:
  Layouter(const Complex& K, Geometry g, const std::vector<double>& labels, const LayoutOptions& o)
      : K_(K), g_(g), lab_(labels), o_(o), placed_(K.n, 0), parent_(K.n, 0) {
    if (labels.size() != K.n)
      throw PackError("layout: " + std::to_string(labels.size()) + " labels for " + std::to_string(K.n) + " vertices");
    L_.centres.assign(K.n, {kNaN, kNaN});
    L_.radii.assign(K.n, std::numeric_limits<double>::infinity());
  }

  Layout run() {
    const Face sf = seed_face();
    if (g_ == Geometry::euclidean) place_euclidean(sf);
    else place_hyperbolic(sf);
    for (std::size_t v = 0; v < K_.n; ++v)
      if (!placed_[v] && !(g_ == Geometry::euclidean && K_.ideal[v]))
        throw PackError("layout: vertex " + std::to_string(v) + " cannot be reached through faces of finite circles");
    if (g_ == Geometry::euclidean) fit_lines();
    normalise();
    measure();
    return std::move(L_);
  }

 private:
  [[nodiscard]] C centre(Index v) const { return {L_.centres[v][0], L_.centres[v][1]}; }

  /// The seed face, rotated so that its first vertex is the deepest (auto) or not a horocycle.
  Face seed_face() {
    std::size_t seed = 0;
    if (o_.seed_face >= 0) {
      seed = static_cast<std::size_t>(o_.seed_face);
      if (seed >= K_.faces.size())
        throw PackError("seed face " + std::to_string(seed) + " is out of range (" + std::to_string(K_.faces.size()) +
                        " faces)");
    } else {
      const Index a = deepest(K_);
      bool found = false;
      for (std::size_t f = 0; f < K_.faces.size() && !found; ++f) {
        const auto& t = K_.faces[f];
        if ((t[0] == a || t[1] == a || t[2] == a) && !K_.ideal[t[0]] && !K_.ideal[t[1]] && !K_.ideal[t[2]])
          seed = f, found = true;
      }
      if (!found)
        throw PackError("layout: vertex " + std::to_string(a) + " has no face of finite circles to start from");
    }
    Face sf = K_.faces[seed];
    if (o_.seed_face < 0) {  // the deepest vertex first: at the origin
      const Index a = deepest(K_);
      for (int k = 0; k < 3 && sf[0] != a; ++k) sf = {sf[1], sf[2], sf[0]};
    }
    if (g_ == Geometry::hyperbolic) {  // the first vertex must not be a horocycle
      for (int k = 0; k < 3 && K_.ideal[sf[0]]; ++k) sf = {sf[1], sf[2], sf[0]};
    } else if (K_.ideal[sf[0]] || K_.ideal[sf[1]] || K_.ideal[sf[2]]) {
      throw PackError("seed face " + std::to_string(seed) + " has an ideal vertex (a line)");
    }
    L_.seed_face = seed;
    return sf;
  }

  /// The angle at u of its petal j (between flower[j] and flower[j+1]).
  [[nodiscard]] double petal_angle(Index u, std::uint32_t j) const {
    const std::uint32_t o = K_.offset[u], k = K_.degree(u);
    const double fixed = K_.fixed_petal[o + j];
    if (!std::isnan(fixed)) return fixed;
    return detail::face_angle(g_, lab_[u], lab_[K_.flower[o + j]], lab_[K_.flower[o + (j + 1) % k]]);
  }

  /// Breadth first: each pivot u places its unplaced neighbours at the directions accumulated,
  /// petal angle by petal angle, from its direction to its parent (the circle it was placed
  /// from), forward then backward around its flower. Positions enter only through the parent, so
  /// placement errors add up along the tree; taking the direction from any placed neighbour's
  /// position instead compounded them through every path (closing error 2e-3 at 129 rings of an
  /// irregular disk). `direction(u, p)`: p's direction from u; `place(u, x, dir)`.
  template <class Direction, class Place>
  void sweep(std::queue<Index>& q, const Direction& direction, const Place& place) {
    while (!q.empty()) {
      const Index u = q.front();
      q.pop();
      const std::uint32_t o = K_.offset[u], k = K_.degree(u), p = K_.petals(u);
      std::uint32_t j0 = 0;
      while (j0 < k && K_.flower[o + j0] != parent_[u]) ++j0;
      const double d0 = direction(u, parent_[u]);
      double d = d0;
      const bool closed = !K_.boundary[u];
      for (std::uint32_t step = 0; step < p; ++step) {  // forward: petal j joins flower[j] to flower[j+1]
        const std::uint32_t j = (j0 + step) % k;
        if (!closed && j0 + step >= p) break;
        d += petal_angle(u, j);
        const Index x = K_.flower[o + (j + 1) % k];
        if (!placed_[x]) place(u, x, d);
      }
      d = d0;
      for (std::uint32_t step = 1; step < k; ++step) {  // backward: petal j − 1 joins flower[j−1] to flower[j]
        if (!closed && step > j0) break;
        const std::uint32_t j = (j0 + k - step) % k;
        d -= petal_angle(u, j);
        const Index x = K_.flower[o + j];
        if (!placed_[x]) place(u, x, d);
      }
    }
  }

  void place_euclidean(const Face& sf) {
    std::queue<Index> q;
    auto put = [&](Index v, C c, Index from) {
      L_.centres[v] = {c.real(), c.imag()};
      L_.radii[v] = lab_[v];
      placed_[v] = 1;
      parent_[v] = from;
      q.push(v);
    };
    const Index a = sf[0], b = sf[1];
    put(a, C(0, 0), b);
    put(b, C(lab_[a] + lab_[b], 0), a);
    sweep(
        q, [&](Index u, Index p) { return std::arg(centre(p) - centre(u)); },
        [&](Index u, Index x, double dir) {
          if (!K_.ideal[x]) put(x, centre(u) + std::polar(lab_[u] + lab_[x], dir), u);
        });
  }

  /// Euclidean circle of interior v from its hyperbolic centre z and radius h.
  void euclid_of(Index v) {
    const double d = 2 * std::atanh(std::min(std::abs(z_[v]), 1 - 1e-16));
    const C dir = std::abs(z_[v]) > 0 ? z_[v] / std::abs(z_[v]) : C(1, 0);
    const double lo = std::tanh((d - h_[v]) / 2), hi = std::tanh((d + h_[v]) / 2);
    const C c = dir * ((lo + hi) / 2);
    L_.centres[v] = {c.real(), c.imag()};
    L_.radii[v] = (hi - lo) / 2;
  }

  static C to_frame(C a, C x) { return (x - a) / (1.0 - std::conj(a) * x); }
  static C from_frame(C a, C x) { return (x + a) / (1.0 + std::conj(a) * x); }

  /// Places w at direction phi in the frame of the interior pivot u (u's hyperbolic centre at 0).
  void place_hyperbolic_at(Index u, Index w, double phi, std::queue<Index>& q) {
    if (!K_.ideal[w]) {
      z_[w] = from_frame(z_[u], std::polar(std::tanh((h_[u] + h_[w]) / 2), phi));
      euclid_of(w);
      q.push(w);
    } else {  // a horocycle tangent to u's circle, of Euclidean radius ρ in u's frame
      const double rho = std::tanh(h_[u] / 2);
      const C cc = std::polar((1 + rho) / 2, phi);
      const double rr = (1 - rho) / 2;
      C c;
      double radius = 0;
      circle_through(from_frame(z_[u], cc + rr), from_frame(z_[u], cc + rr * std::polar(1.0, 2.0943951023931957)),
                     from_frame(z_[u], cc + rr * std::polar(1.0, 4.1887902047863905)), c, radius);
      L_.centres[w] = {c.real(), c.imag()};
      L_.radii[w] = radius;
      tangency_[w] = from_frame(z_[u], std::polar(1.0, phi));
    }
    placed_[w] = 1;
    parent_[w] = u;
  }

  void place_hyperbolic(const Face& sf) {
    z_.assign(K_.n, C(kNaN, kNaN));
    tangency_.assign(K_.n, C(kNaN, kNaN));
    h_.assign(K_.n, std::numeric_limits<double>::infinity());
    for (std::size_t v = 0; v < K_.n; ++v)
      if (!K_.ideal[v]) h_[v] = -std::log(lab_[v]);
    std::queue<Index> q;
    const Index a = sf[0], b = sf[1];
    z_[a] = C(0, 0);
    euclid_of(a);
    placed_[a] = 1;
    parent_[a] = b;
    q.push(a);
    place_hyperbolic_at(a, b, 0.0, q);
    sweep(
        q, [&](Index u, Index p) { return std::arg(to_frame(z_[u], K_.ideal[p] ? tangency_[p] : z_[p])); },
        [&](Index u, Index x, double dir) { place_hyperbolic_at(u, x, dir, q); });
  }

  /// Lines (Euclidean ideal vertices): the common tangent of the first and last finite neighbours,
  /// on the side away from the circles' centroid.
  void fit_lines() {
    double cx = 0, cy = 0;
    std::size_t nf = 0;
    for (std::size_t v = 0; v < K_.n; ++v)
      if (!K_.ideal[v]) cx += L_.centres[v][0], cy += L_.centres[v][1], ++nf;
    const C mid(cx / static_cast<double>(std::max<std::size_t>(nf, 1)),
                cy / static_cast<double>(std::max<std::size_t>(nf, 1)));
    line_of_.assign(K_.n, -1);
    for (std::size_t v = 0; v < K_.n; ++v) {
      if (!K_.ideal[v]) continue;
      Index first = 0, last = 0;
      bool any = false;
      for (std::uint32_t j = K_.offset[v]; j < K_.offset[v + 1]; ++j) {
        const Index w = K_.flower[j];
        if (K_.ideal[w]) continue;
        if (!any) first = w, any = true;
        last = w;
      }
      if (!any || first == last) continue;
      const C c1 = centre(first), c2 = centre(last);
      const double r1 = lab_[first], r2 = lab_[last], D = std::abs(c2 - c1);
      const C u = (c2 - c1) / D, perp = u * C(0, 1);
      const double cphi = std::clamp((r1 - r2) / D, -1.0, 1.0), sphi = std::sqrt(1 - cphi * cphi);
      C n = cphi * u + sphi * perp;
      double d = n.real() * c1.real() + n.imag() * c1.imag() + r1;
      if (n.real() * mid.real() + n.imag() * mid.imag() > d) {
        n = cphi * u - sphi * perp;
        d = n.real() * c1.real() + n.imag() * c1.imag() + r1;
      }
      line_of_[v] = static_cast<std::int64_t>(L_.lines.size());
      L_.lines.push_back({n.real(), n.imag(), d});
    }
  }

  /// x ↦ (x + shift)·mul on the circles and the lines.
  void transform(C shift, C mul) {
    for (std::size_t v = 0; v < K_.n; ++v) {
      if (K_.ideal[v] && g_ == Geometry::euclidean) continue;
      const C c = (centre(static_cast<Index>(v)) + shift) * mul;
      L_.centres[v] = {c.real(), c.imag()};
      L_.radii[v] *= std::abs(mul);
    }
    for (auto& ln : L_.lines) {  // the normal rotates by arg mul, the offset scales by |mul|
      const C nrm = C(ln[0], ln[1]) * (mul / std::abs(mul));
      const double c0 = ln[2] + ln[0] * shift.real() + ln[1] * shift.imag();
      ln = {nrm.real(), nrm.imag(), c0 * std::abs(mul)};
    }
  }

  void normalise() {
    if (o_.normalisation == Normalisation::unit_disk && g_ == Geometry::euclidean) {
      double x0 = 1e300, x1 = -1e300, y0 = 1e300, y1 = -1e300;
      for (std::size_t v = 0; v < K_.n; ++v) {
        if (K_.ideal[v]) continue;
        x0 = std::min(x0, L_.centres[v][0] - L_.radii[v]);
        x1 = std::max(x1, L_.centres[v][0] + L_.radii[v]);
        y0 = std::min(y0, L_.centres[v][1] - L_.radii[v]);
        y1 = std::max(y1, L_.centres[v][1] + L_.radii[v]);
      }
      const C mid((x0 + x1) / 2, (y0 + y1) / 2);
      double reach = 0;
      for (std::size_t v = 0; v < K_.n; ++v)
        if (!K_.ideal[v]) reach = std::max(reach, std::abs(centre(static_cast<Index>(v)) - mid) + L_.radii[v]);
      transform(-mid, C(1 / reach, 0));
    } else if (o_.normalisation == Normalisation::polygon) {
      if (L_.lines.size() < 3) throw PackError("normalisation polygon needs a packing with lines (boundary: lines)");
      auto meet = [](const std::array<double, 3>& l1, const std::array<double, 3>& l2) {
        const double det = l1[0] * l2[1] - l1[1] * l2[0];
        return C((l1[2] * l2[1] - l1[1] * l2[2]) / det, (l1[0] * l2[2] - l1[2] * l2[0]) / det);
      };
      const std::size_t k = L_.lines.size();
      const C left = meet(L_.lines[0], L_.lines[1 % k]), right = meet(L_.lines[1 % k], L_.lines[2 % k]);
      transform(-(left + right) / 2.0, C(1, 0) / (right - left));  // left → −½, right → ½
    }
  }

  /// closing_error over edges of finite circles; line_error over circles tangent to a line.
  void measure() {
    for (std::size_t v = 0; v < K_.n; ++v) {
      if (K_.ideal[v]) continue;
      for (std::uint32_t j = K_.offset[v]; j < K_.offset[v + 1]; ++j) {
        const Index w = K_.flower[j];
        if (K_.ideal[w]) {
          if (g_ != Geometry::euclidean || line_of_[w] < 0) continue;
          const auto& ln = L_.lines[static_cast<std::size_t>(line_of_[w])];
          const double dist = ln[2] - (ln[0] * L_.centres[v][0] + ln[1] * L_.centres[v][1]);
          L_.line_error = std::max(L_.line_error, std::abs(dist - L_.radii[v]) / L_.radii[v]);
          continue;
        }
        if (w <= v) continue;
        const double d = std::hypot(L_.centres[v][0] - L_.centres[w][0], L_.centres[v][1] - L_.centres[w][1]);
        const double sum = L_.radii[v] + L_.radii[w];
        const double e = std::abs(d - sum) / sum;
        if (!(e <= L_.closing_error)) L_.closing_error = e;
      }
    }
  }

  const Complex& K_;
  Geometry g_;
  const std::vector<double>& lab_;
  const LayoutOptions& o_;
  Layout L_;
  std::vector<std::uint8_t> placed_;
  std::vector<Index> parent_;  // the circle each was placed from (the seed's two: each other)
  std::vector<C> z_, tangency_;
  std::vector<double> h_;
  std::vector<std::int64_t> line_of_;
};

}  // namespace

Layout layout(const Complex& K, Geometry g, const std::vector<double>& labels, const LayoutOptions& o) {
  return Layouter(K, g, labels, o).run();
}

Distortion distortion(const std::vector<std::array<double, 3>>& xyz, const std::vector<std::array<double, 2>>& uv,
                      const std::vector<Face>& faces) {
  Distortion d;
  if (faces.empty()) return d;
  double total3 = 0, total2 = 0;
  std::vector<double> a3(faces.size()), a2(faces.size());
  auto sub3 = [](const std::array<double, 3>& p, const std::array<double, 3>& q) {
    return std::array<double, 3>{p[0] - q[0], p[1] - q[1], p[2] - q[2]};
  };
  auto dot3 = [](const std::array<double, 3>& p, const std::array<double, 3>& q) {
    return p[0] * q[0] + p[1] * q[1] + p[2] * q[2];
  };
  for (std::size_t f = 0; f < faces.size(); ++f) {
    const auto& t = faces[f];
    const auto e1 = sub3(xyz[t[1]], xyz[t[0]]), e2 = sub3(xyz[t[2]], xyz[t[0]]);
    const std::array<double, 3> cr{e1[1] * e2[2] - e1[2] * e2[1], e1[2] * e2[0] - e1[0] * e2[2],
                                   e1[0] * e2[1] - e1[1] * e2[0]};
    a3[f] = 0.5 * std::sqrt(dot3(cr, cr));
    const double u1 = uv[t[1]][0] - uv[t[0]][0], v1 = uv[t[1]][1] - uv[t[0]][1];
    const double u2 = uv[t[2]][0] - uv[t[0]][0], v2 = uv[t[2]][1] - uv[t[0]][1];
    a2[f] = 0.5 * (u1 * v2 - v1 * u2);
    if (a2[f] <= 0) ++d.flipped_faces;
    total3 += a3[f];
    total2 += std::abs(a2[f]);
    // angles
    for (int k = 0; k < 3; ++k) {
      const Index i = t[k], j = t[(k + 1) % 3], l = t[(k + 2) % 3];
      const auto p = sub3(xyz[j], xyz[i]), q = sub3(xyz[l], xyz[i]);
      const double ang3 =
          std::atan2(std::sqrt(std::max(0.0, dot3(p, p) * dot3(q, q) - dot3(p, q) * dot3(p, q))), dot3(p, q));
      const double pu = uv[j][0] - uv[i][0], pv = uv[j][1] - uv[i][1], qu = uv[l][0] - uv[i][0],
                   qv = uv[l][1] - uv[i][1];
      const double ang2 = std::atan2(std::abs(pu * qv - pv * qu), pu * qu + pv * qv);
      const double e = std::abs(ang2 - ang3) * 180 / std::numbers::pi;
      d.angle_mean_deg += e;
      d.angle_max_deg = std::max(d.angle_max_deg, e);
    }
    // singular values of the map from the 3D triangle (in its own orthonormal frame) to 2D
    const double l1 = std::sqrt(dot3(e1, e1));
    const std::array<double, 3> ex{e1[0] / l1, e1[1] / l1, e1[2] / l1};
    const double x2 = dot3(e2, ex);
    const double y2 = 2 * a3[f] / l1;
    // J maps (l1, 0) → (u1, v1) and (x2, y2) → (u2, v2)
    const double j11 = u1 / l1, j21 = v1 / l1;
    const double j12 = (u2 - j11 * x2) / y2, j22 = (v2 - j21 * x2) / y2;
    // singular values without cancellation: σ₁,₂ = Q ± R (Blinn, "Consider the lowly 2×2 matrix")
    const double E = (j11 + j22) / 2, F = (j11 - j22) / 2, G = (j21 + j12) / 2, H = (j21 - j12) / 2;
    const double Q = std::hypot(E, H), R = std::hypot(F, G);
    const double s1 = Q + R, s2 = std::abs(Q - R);
    const double ratio = s2 > 0 ? s1 / s2 : std::numeric_limits<double>::infinity();
    d.conformal_mean += ratio;
    d.conformal_max = std::max(d.conformal_max, ratio);
  }
  const double nf = static_cast<double>(faces.size());
  d.angle_mean_deg /= 3 * nf;
  d.conformal_mean /= nf;
  for (std::size_t f = 0; f < faces.size(); ++f) {
    const double la = std::log((std::abs(a2[f]) / total2) / (a3[f] / total3));
    d.area_log_mean_abs += std::abs(la);
    d.area_log_max_abs = std::max(d.area_log_max_abs, std::abs(la));
  }
  d.area_log_mean_abs /= nf;
  return d;
}

std::vector<double> tangent_radii(const std::vector<std::array<double, 3>>& xyz, const std::vector<Face>& faces) {
  std::vector<double> sum(xyz.size(), 0.0);
  std::vector<std::uint32_t> cnt(xyz.size(), 0);
  auto len = [&](Index a, Index b) {
    return std::sqrt((xyz[a][0] - xyz[b][0]) * (xyz[a][0] - xyz[b][0]) +
                     (xyz[a][1] - xyz[b][1]) * (xyz[a][1] - xyz[b][1]) +
                     (xyz[a][2] - xyz[b][2]) * (xyz[a][2] - xyz[b][2]));
  };
  for (const auto& t : faces)
    for (int k = 0; k < 3; ++k) {
      const Index i = t[k], j = t[(k + 1) % 3], l = t[(k + 2) % 3];
      sum[i] += 0.5 * (len(i, j) + len(i, l) - len(j, l));
      ++cnt[i];
    }
  std::vector<double> r(xyz.size());
  for (std::size_t v = 0; v < xyz.size(); ++v) r[v] = cnt[v] ? std::max(sum[v] / cnt[v], 1e-300) : 1.0;
  return r;
}

}  // namespace gemflow::circlepack
