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

}  // namespace

Layout layout(const Complex& K, Geometry g, const std::vector<double>& labels, const LayoutOptions& o) {
  if (labels.size() != K.n)
    throw PackError("layout: " + std::to_string(labels.size()) + " labels for " + std::to_string(K.n) + " vertices");
  Layout L;
  L.centres.assign(K.n, {kNaN, kNaN});
  L.radii.assign(K.n, std::numeric_limits<double>::infinity());
  // seed face
  std::size_t seed = 0;
  if (o.seed_face >= 0) {
    seed = static_cast<std::size_t>(o.seed_face);
    if (seed >= K.faces.size())
      throw PackError("seed face " + std::to_string(seed) + " is out of range (" + std::to_string(K.faces.size()) +
                      " faces)");
  } else {
    const Index a = deepest(K);
    bool found = false;
    for (std::size_t f = 0; f < K.faces.size() && !found; ++f) {
      const auto& t = K.faces[f];
      if ((t[0] == a || t[1] == a || t[2] == a) && !K.ideal[t[0]] && !K.ideal[t[1]] && !K.ideal[t[2]])
        seed = f, found = true;
    }
    if (!found) throw PackError("layout: vertex " + std::to_string(a) + " has no face of finite circles to start from");
  }
  Face sf = K.faces[seed];
  if (o.seed_face < 0) {  // the deepest vertex first: at the origin
    const Index a = deepest(K);
    for (int k = 0; k < 3 && sf[0] != a; ++k) sf = {sf[1], sf[2], sf[0]};
  }
  if (g == Geometry::hyperbolic) {  // rotate so the first vertex is not a horocycle
    for (int k = 0; k < 3 && K.ideal[sf[0]]; ++k) sf = {sf[1], sf[2], sf[0]};
  } else if (K.ideal[sf[0]] || K.ideal[sf[1]] || K.ideal[sf[2]]) {
    throw PackError("seed face " + std::to_string(seed) + " has an ideal vertex (a line)");
  }
  L.seed_face = seed;

  std::vector<std::uint8_t> placed(K.n, 0);
  std::queue<Index> q;
  std::size_t placed_count = 0;

  if (g == Geometry::euclidean) {
    auto put = [&](Index v, C c) {
      L.centres[v] = {c.real(), c.imag()};
      L.radii[v] = labels[v];
      placed[v] = 1;
      ++placed_count;
      q.push(v);
    };
    const Index a = sf[0], b = sf[1], c = sf[2];
    put(a, C(0, 0));
    put(b, C(labels[a] + labels[b], 0));
    const double al = detail::face_angle(g, labels[a], labels[b], labels[c]);
    put(c, std::polar(labels[a] + labels[c], al));
    while (!q.empty()) {
      const Index u = q.front();
      q.pop();
      const std::uint32_t off = K.offset[u], k = K.degree(u), p = K.petals(u);
      const C cu(L.centres[u][0], L.centres[u][1]);
      for (int pass = 0; pass < 2; ++pass)  // forward, then backward around the flower
        for (std::uint32_t jj = 0; jj < p; ++jj) {
          const std::uint32_t j = pass == 0 ? jj : p - 1 - jj;
          const Index v = K.flower[off + j], w = K.flower[off + (j + 1) % k];
          if (K.ideal[v] || K.ideal[w]) continue;
          if (placed[v] && !placed[w]) {  // w to the left of u→v
            const C cv(L.centres[v][0], L.centres[v][1]);
            const double al2 = detail::face_angle(g, labels[u], labels[v], labels[w]);
            put(w, cu + (labels[u] + labels[w]) * (cv - cu) / std::abs(cv - cu) * std::polar(1.0, al2));
          } else if (placed[w] && !placed[v]) {  // v to the right of u→w
            const C cw(L.centres[w][0], L.centres[w][1]);
            const double al2 = detail::face_angle(g, labels[u], labels[v], labels[w]);
            put(v, cu + (labels[u] + labels[v]) * (cw - cu) / std::abs(cw - cu) * std::polar(1.0, -al2));
          }
        }
    }
  } else {
    // hyperbolic: interior circles by hyperbolic centre z and radius h; horocycles by their
    // Euclidean circle and tangency point p on the unit circle
    std::vector<C> z(K.n, C(kNaN, kNaN));
    std::vector<double> h(K.n, std::numeric_limits<double>::infinity());
    for (std::size_t v = 0; v < K.n; ++v)
      if (!K.ideal[v]) h[v] = -std::log(labels[v]);
    std::vector<C> tangency(K.n, C(kNaN, kNaN));
    auto to_frame = [](C a, C x) { return (x - a) / (1.0 - std::conj(a) * x); };
    auto from_frame = [](C a, C x) { return (x + a) / (1.0 + std::conj(a) * x); };
    auto euclid_of = [&](Index v) {  // Euclidean circle of interior v from z, h
      const double d = 2 * std::atanh(std::min(std::abs(z[v]), 1 - 1e-16));
      const C dir = std::abs(z[v]) > 0 ? z[v] / std::abs(z[v]) : C(1, 0);
      const double lo = std::tanh((d - h[v]) / 2), hi = std::tanh((d + h[v]) / 2);
      const C c = dir * ((lo + hi) / 2);
      L.centres[v] = {c.real(), c.imag()};
      L.radii[v] = (hi - lo) / 2;
    };
    // place w at direction phi in the frame of interior pivot u
    auto place = [&](Index u, Index w, double phi) {
      if (!K.ideal[w]) {
        z[w] = from_frame(z[u], std::polar(std::tanh((h[u] + h[w]) / 2), phi));
        euclid_of(w);
      } else {
        const double rho = std::tanh(h[u] / 2);
        const C cc = std::polar((1 + rho) / 2, phi);
        const double rr = (1 - rho) / 2;
        C centre;
        double radius;
        circle_through(from_frame(z[u], cc + rr), from_frame(z[u], cc + rr * std::polar(1.0, 2.0943951023931957)),
                       from_frame(z[u], cc + rr * std::polar(1.0, 4.1887902047863905)), centre, radius);
        L.centres[w] = {centre.real(), centre.imag()};
        L.radii[w] = radius;
        tangency[w] = from_frame(z[u], std::polar(1.0, phi));
      }
      placed[w] = 1;
      ++placed_count;
      if (!K.ideal[w]) q.push(w);
    };
    auto direction = [&](Index u, Index v) {  // of v seen from interior u, in u's frame
      return std::arg(to_frame(z[u], K.ideal[v] ? tangency[v] : z[v]));
    };
    const Index a = sf[0], b = sf[1], c = sf[2];
    z[a] = C(0, 0);
    euclid_of(a);
    placed[a] = 1;
    ++placed_count;
    q.push(a);
    place(a, b, 0.0);
    place(a, c, detail::face_angle(g, labels[a], labels[b], labels[c]));
    while (!q.empty()) {
      const Index u = q.front();
      q.pop();
      const std::uint32_t off = K.offset[u], k = K.degree(u), p = K.petals(u);
      for (int pass = 0; pass < 2; ++pass)
        for (std::uint32_t jj = 0; jj < p; ++jj) {
          const std::uint32_t j = pass == 0 ? jj : p - 1 - jj;
          const Index v = K.flower[off + j], w = K.flower[off + (j + 1) % k];
          if (placed[v] && !placed[w])
            place(u, w, direction(u, v) + detail::face_angle(g, labels[u], labels[v], labels[w]));
          else if (placed[w] && !placed[v])
            place(u, v, direction(u, w) - detail::face_angle(g, labels[u], labels[v], labels[w]));
        }
    }
  }
  for (std::size_t v = 0; v < K.n; ++v)
    if (!placed[v] && !(g == Geometry::euclidean && K.ideal[v]))
      throw PackError("layout: vertex " + std::to_string(v) + " cannot be reached through faces of finite circles");

  // lines (Euclidean ideal vertices): the common tangent of the first and last finite neighbours
  double cx = 0, cy = 0;
  std::size_t nf = 0;
  for (std::size_t v = 0; v < K.n; ++v)
    if (!K.ideal[v]) cx += L.centres[v][0], cy += L.centres[v][1], ++nf;
  cx /= static_cast<double>(std::max<std::size_t>(nf, 1));
  cy /= static_cast<double>(std::max<std::size_t>(nf, 1));
  std::vector<std::int64_t> line_of(K.n, -1);
  if (g == Geometry::euclidean)
    for (std::size_t v = 0; v < K.n; ++v) {
      if (!K.ideal[v]) continue;
      Index first = 0, last = 0;
      bool any = false;
      for (std::uint32_t j = K.offset[v]; j < K.offset[v + 1]; ++j) {
        const Index w = K.flower[j];
        if (K.ideal[w]) continue;
        if (!any) first = w, any = true;
        last = w;
      }
      if (!any || first == last) continue;
      const C c1(L.centres[first][0], L.centres[first][1]), c2(L.centres[last][0], L.centres[last][1]);
      const double r1 = labels[first], r2 = labels[last];
      const double D = std::abs(c2 - c1);
      const C u = (c2 - c1) / D, perp = u * C(0, 1);
      const double cphi = std::clamp((r1 - r2) / D, -1.0, 1.0), sphi = std::sqrt(1 - cphi * cphi);
      C n = cphi * u + sphi * perp;
      double d = n.real() * c1.real() + n.imag() * c1.imag() + r1;
      if (n.real() * cx + n.imag() * cy > d) {
        n = cphi * u - sphi * perp;
        d = n.real() * c1.real() + n.imag() * c1.imag() + r1;
      }
      line_of[v] = static_cast<std::int64_t>(L.lines.size());
      L.lines.push_back({n.real(), n.imag(), d});
    }

  // normalisation
  auto transform = [&](C shift, C mul) {  // x ↦ (x + shift)·mul
    for (std::size_t v = 0; v < K.n; ++v) {
      if (K.ideal[v] && g == Geometry::euclidean) continue;
      const C c = (C(L.centres[v][0], L.centres[v][1]) + shift) * mul;
      L.centres[v] = {c.real(), c.imag()};
      L.radii[v] *= std::abs(mul);
    }
    for (auto& ln : L.lines) {
      // a·x + b·y = c under x' = (x + s)·m: normal rotates by arg m, offset scales by |m|
      const C nrm = C(ln[0], ln[1]) * (mul / std::abs(mul));
      const double c0 = ln[2] + ln[0] * shift.real() + ln[1] * shift.imag();
      ln = {nrm.real(), nrm.imag(), c0 * std::abs(mul)};
    }
  };
  if (o.normalisation == Normalisation::unit_disk && g == Geometry::euclidean) {
    double x0 = 1e300, x1 = -1e300, y0 = 1e300, y1 = -1e300;
    for (std::size_t v = 0; v < K.n; ++v) {
      if (K.ideal[v]) continue;
      x0 = std::min(x0, L.centres[v][0] - L.radii[v]);
      x1 = std::max(x1, L.centres[v][0] + L.radii[v]);
      y0 = std::min(y0, L.centres[v][1] - L.radii[v]);
      y1 = std::max(y1, L.centres[v][1] + L.radii[v]);
    }
    const C mid((x0 + x1) / 2, (y0 + y1) / 2);
    double reach = 0;
    for (std::size_t v = 0; v < K.n; ++v)
      if (!K.ideal[v]) reach = std::max(reach, std::abs(C(L.centres[v][0], L.centres[v][1]) - mid) + L.radii[v]);
    transform(-mid, C(1 / reach, 0));
  } else if (o.normalisation == Normalisation::polygon) {
    if (L.lines.size() < 3) throw PackError("normalisation polygon needs a packing with lines (boundary: lines)");
    auto meet = [](const std::array<double, 3>& l1, const std::array<double, 3>& l2) {
      const double det = l1[0] * l2[1] - l1[1] * l2[0];
      return C((l1[2] * l2[1] - l1[1] * l2[2]) / det, (l1[0] * l2[2] - l1[2] * l2[0]) / det);
    };
    const std::size_t k = L.lines.size();
    const C left = meet(L.lines[0], L.lines[1 % k]), right = meet(L.lines[1 % k], L.lines[2 % k]);
    // map left → −½, right → ½
    const C mul = C(1, 0) / (right - left);
    transform(-(left + right) / 2.0, mul);
  }

  // closing error and line error
  for (std::size_t v = 0; v < K.n; ++v) {
    if (K.ideal[v]) continue;
    for (std::uint32_t j = K.offset[v]; j < K.offset[v + 1]; ++j) {
      const Index w = K.flower[j];
      if (w <= v && !K.ideal[w]) continue;
      if (K.ideal[w]) {
        if (g != Geometry::euclidean || line_of[w] < 0) continue;
        const auto& ln = L.lines[static_cast<std::size_t>(line_of[w])];
        const double dist = ln[2] - (ln[0] * L.centres[v][0] + ln[1] * L.centres[v][1]);
        L.line_error = std::max(L.line_error, std::abs(dist - L.radii[v]) / L.radii[v]);
        continue;
      }
      const double d = std::hypot(L.centres[v][0] - L.centres[w][0], L.centres[v][1] - L.centres[w][1]);
      const double sum = L.radii[v] + L.radii[w];
      const double e = std::abs(d - sum) / sum;
      if (!(e <= L.closing_error)) L.closing_error = e;
    }
  }
  return L;
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
