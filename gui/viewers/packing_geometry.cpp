#include "viewers/packing_geometry.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numbers>

namespace gemflow::studio {

std::vector<double> angle_sums(const std::vector<double>& radii,
                               const std::vector<std::array<TriMesh::Index, 3>>& faces) {
  std::vector<double> sum(radii.size(), 0.0);
  for (const auto& f : faces) {
    if (f[0] >= radii.size() || f[1] >= radii.size() || f[2] >= radii.size()) continue;
    for (int k = 0; k < 3; ++k) {
      const double r = radii[f[k]], a = radii[f[(k + 1) % 3]], b = radii[f[(k + 2) % 3]];
      // Sides: r+a and r+b meet at v; a+b is opposite.
      const double ra = r + a, rb = r + b, ab = a + b;
      const double c = (ra * ra + rb * rb - ab * ab) / (2 * ra * rb);
      sum[f[k]] += std::acos(std::clamp(c, -1.0, 1.0));
    }
  }
  return sum;
}

std::vector<double> angle_errors(const CirclePacking& p) {
  const std::vector<double> sum = angle_sums(p.radii, p.faces);
  std::vector<bool> used(p.size(), false);
  for (const auto& f : p.faces)
    for (auto v : f)
      if (v < used.size()) used[v] = true;
  std::vector<double> err(p.size(), std::numeric_limits<double>::quiet_NaN());
  for (std::size_t v = 0; v < p.size(); ++v)
    if (used[v] && !(v < p.boundary.size() && p.boundary[v])) err[v] = std::abs(sum[v] - 2 * std::numbers::pi);
  return err;
}

std::vector<double> tangency_errors(const CirclePacking& p) {
  std::vector<double> err(p.size(), std::numeric_limits<double>::quiet_NaN());
  auto edge = [&](std::size_t i, std::size_t j) {
    if (i >= p.size() || j >= p.size() || i >= p.centres.size() || j >= p.centres.size()) return;
    const double dx = p.centres[i][0] - p.centres[j][0], dy = p.centres[i][1] - p.centres[j][1];
    const double s = p.radii[i] + p.radii[j];
    const double e = std::abs(std::hypot(dx, dy) - s) / s;
    for (std::size_t v : {i, j}) err[v] = std::isnan(err[v]) ? e : std::max(err[v], e);
  };
  // Every interior edge is seen from its two faces: the max does not mind.
  for (const auto& f : p.faces)
    for (int k = 0; k < 3; ++k) edge(f[k], f[(k + 1) % 3]);
  return err;
}

}  // namespace gemflow::studio
