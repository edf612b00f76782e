// A small rasteriser of circle packings: filled circles, triangulation edges, outlines.
#include <algorithm>
#include <cmath>
#include <limits>
#include <numbers>

#include "gemflow/circlepack/layout.hpp"

namespace gemflow::circlepack {
namespace {

struct Rgb {
  double r, g, b;
};

/// A viridis-like ramp (5 stops of matplotlib's viridis, linearly interpolated in sRGB).
Rgb ramp(double t) {
  static constexpr Rgb stops[] = {{68, 1, 84}, {59, 82, 139}, {33, 145, 140}, {94, 201, 98}, {253, 231, 37}};
  t = std::clamp(t, 0.0, 1.0) * 4;
  const int i = std::min(static_cast<int>(t), 3);
  const double f = t - i;
  return {stops[i].r + f * (stops[i + 1].r - stops[i].r), stops[i].g + f * (stops[i + 1].g - stops[i].g),
          stops[i].b + f * (stops[i + 1].b - stops[i].b)};
}

class Canvas {
 public:
  Canvas(Raster& r) : r_(r) {}
  void blend(long x, long y, Rgb c, double a) {
    if (x < 0 || y < 0 || x >= static_cast<long>(r_.width) || y >= static_cast<long>(r_.height) || a <= 0) return;
    auto* p = &r_.rgba[(static_cast<std::size_t>(y) * r_.width + static_cast<std::size_t>(x)) * 4];
    a = std::min(a, 1.0);
    p[0] = static_cast<std::uint8_t>(std::lround(p[0] * (1 - a) + c.r * a));
    p[1] = static_cast<std::uint8_t>(std::lround(p[1] * (1 - a) + c.g * a));
    p[2] = static_cast<std::uint8_t>(std::lround(p[2] * (1 - a) + c.b * a));
  }
  /// Anti-aliased disc (fill) and ring (outline, 1 px).
  void circle(double cx, double cy, double rad, const Rgb* fill, const Rgb* line) {
    const long x0 = static_cast<long>(std::floor(cx - rad - 1)), x1 = static_cast<long>(std::ceil(cx + rad + 1));
    const long y0 = static_cast<long>(std::floor(cy - rad - 1)), y1 = static_cast<long>(std::ceil(cy + rad + 1));
    for (long y = std::max(y0, 0L); y <= std::min(y1, static_cast<long>(r_.height) - 1); ++y)
      for (long x = std::max(x0, 0L); x <= std::min(x1, static_cast<long>(r_.width) - 1); ++x) {
        const double d = std::hypot(x + 0.5 - cx, y + 0.5 - cy);
        if (fill) blend(x, y, *fill, std::clamp(rad - d + 0.5, 0.0, 1.0));
        if (line) blend(x, y, *line, std::clamp(1.0 - std::abs(d - rad), 0.0, 1.0));
      }
  }
  void line(double xa, double ya, double xb, double yb, Rgb c, double a) {
    const double len = std::hypot(xb - xa, yb - ya);
    const auto steps = static_cast<long>(std::ceil(len * 1.5)) + 1;
    if (steps > 100000) return;
    for (long i = 0; i <= steps; ++i) {
      const double t = static_cast<double>(i) / static_cast<double>(steps);
      blend(std::lround(xa + t * (xb - xa) - 0.5), std::lround(ya + t * (yb - ya) - 0.5), c, a);
    }
  }

 private:
  Raster& r_;
};

}  // namespace

Raster draw(const std::vector<std::array<double, 2>>& centres, const std::vector<double>& radii,
            const std::vector<Face>& faces, const std::vector<double>& values, bool unit_circle, const DrawOptions& o) {
  Raster r;
  r.width = o.width;
  r.height = o.height;
  r.rgba.assign(o.width * o.height * 4, 255);
  double x0 = 1e300, x1 = -1e300, y0 = 1e300, y1 = -1e300;
  auto finite = [&](std::size_t v) {
    return std::isfinite(radii[v]) && std::isfinite(centres[v][0]) && std::isfinite(centres[v][1]);
  };
  for (std::size_t v = 0; v < centres.size(); ++v) {
    if (!finite(v)) continue;
    x0 = std::min(x0, centres[v][0] - radii[v]);
    x1 = std::max(x1, centres[v][0] + radii[v]);
    y0 = std::min(y0, centres[v][1] - radii[v]);
    y1 = std::max(y1, centres[v][1] + radii[v]);
  }
  if (unit_circle) x0 = std::min(x0, -1.0), x1 = std::max(x1, 1.0), y0 = std::min(y0, -1.0), y1 = std::max(y1, 1.0);
  if (!(x1 > x0) || !(y1 > y0)) return r;
  const double usable = 1 - 2 * o.margin;
  const double scale =
      std::min(static_cast<double>(o.width) * usable / (x1 - x0), static_cast<double>(o.height) * usable / (y1 - y0));
  const double ox = static_cast<double>(o.width) / 2 - scale * (x0 + x1) / 2;
  const double oy = static_cast<double>(o.height) / 2 + scale * (y0 + y1) / 2;
  auto px = [&](double x) { return ox + scale * x; };
  auto py = [&](double y) { return oy - scale * y; };
  double vmin = std::numeric_limits<double>::infinity(), vmax = -vmin;
  for (std::size_t v = 0; v < values.size() && v < centres.size(); ++v)
    if (finite(v) && std::isfinite(values[v])) vmin = std::min(vmin, values[v]), vmax = std::max(vmax, values[v]);
  if (vmax - vmin <= 1e-9 * std::max(1.0, std::abs(vmax))) vmin = vmax;  // equal up to rounding: one colour
  Canvas cv(r);
  const Rgb black{0, 0, 0}, grey{150, 150, 150}, pale{225, 225, 235};
  if (unit_circle) cv.circle(px(0), py(0), scale, nullptr, &black);
  for (std::size_t v = 0; v < centres.size(); ++v) {
    if (!finite(v)) continue;
    Rgb c = pale;
    if (o.colouring != Colouring::none && v < values.size() && std::isfinite(values[v]))
      c = ramp(vmax > vmin ? (values[v] - vmin) / (vmax - vmin) : 0.5);
    cv.circle(px(centres[v][0]), py(centres[v][1]), scale * radii[v], &c, nullptr);
  }
  if (o.edges)
    for (const auto& t : faces)
      for (int k = 0; k < 3; ++k) {
        const Index a = t[k], b = t[(k + 1) % 3];
        if (a < b && a < centres.size() && b < centres.size() && finite(a) && finite(b))
          cv.line(px(centres[a][0]), py(centres[a][1]), px(centres[b][0]), py(centres[b][1]), grey, 0.8);
      }
  for (std::size_t v = 0; v < centres.size(); ++v)
    if (finite(v)) cv.circle(px(centres[v][0]), py(centres[v][1]), scale * radii[v], nullptr, &black);
  return r;
}

}  // namespace gemflow::circlepack
