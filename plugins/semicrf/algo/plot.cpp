// Segmented-signal plots (gemflow/semicrf/plot.hpp).
#include "gemflow/semicrf/plot.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <stdexcept>
#include <string>

namespace gemflow::semicrf {

namespace {

using Rgb = std::array<std::uint8_t, 3>;
// Tableau 10
constexpr std::array<Rgb, 10> kPalette{{{31, 119, 180},
                                        {255, 127, 14},
                                        {44, 160, 44},
                                        {214, 39, 40},
                                        {148, 103, 189},
                                        {140, 86, 75},
                                        {227, 119, 194},
                                        {127, 127, 127},
                                        {188, 189, 34},
                                        {23, 190, 207}}};
constexpr std::array<Rgb, 4> kLines{{{20, 20, 20}, {31, 119, 180}, {214, 39, 40}, {44, 160, 44}}};

class Canvas {
 public:
  Canvas(std::size_t w, std::size_t h) : r_{w, h, std::vector<std::uint8_t>(w * h * 4, 255)} {}
  void put(long x, long y, Rgb c) {
    if (x < 0 || y < 0 || x >= long(r_.width) || y >= long(r_.height)) return;
    auto* p = &r_.rgba[(std::size_t(y) * r_.width + std::size_t(x)) * 4];
    p[0] = c[0], p[1] = c[1], p[2] = c[2], p[3] = 255;
  }
  void vline(long x, long y0, long y1, Rgb c) {
    if (y0 > y1) std::swap(y0, y1);
    for (long y = y0; y <= y1; ++y) put(x, y, c);
  }
  void hline(long x0, long x1, long y, Rgb c) {
    for (long x = x0; x <= x1; ++x) put(x, y, c);
  }
  void fill(long x0, long y0, long x1, long y1, Rgb c) {
    for (long y = y0; y <= y1; ++y) hline(x0, x1, y, c);
  }
  Raster take() { return std::move(r_); }

 private:
  Raster r_;
};

Rgb tint(Rgb c, double a) {
  Rgb r;
  for (int i = 0; i < 3; ++i) r[i] = static_cast<std::uint8_t>(std::lround(255.0 * (1 - a) + c[i] * a));
  return r;
}

}  // namespace

Raster plot_segmentation(const PlotInput& in) {
  const std::size_t T = in.length, D = in.dims;
  if (T == 0 || D == 0 || in.signal == nullptr) throw std::invalid_argument("nothing to plot: the signal is empty");
  if (in.width < 32 || in.height < 32 || in.width > 16384 || in.height > 16384)
    throw std::invalid_argument("plot size " + std::to_string(in.width) + "×" + std::to_string(in.height) +
                                " is outside 32..16384 pixels");
  double lo = INFINITY, hi = -INFINITY;
  for (std::size_t i = 0; i < T * D; ++i) {
    if (!std::isfinite(in.signal[i])) throw std::invalid_argument("sample " + std::to_string(i / D) + " is not finite");
    lo = std::min(lo, in.signal[i]);
    hi = std::max(hi, in.signal[i]);
  }
  if (hi - lo < 1e-300) hi = lo + 1, lo -= 1;
  const double pad = 0.05 * (hi - lo);
  lo -= pad, hi += pad;

  Canvas cv(in.width, in.height);
  const long m = static_cast<long>(std::min(in.margin, std::min(in.width, in.height) / 4));
  const long x0 = m, x1 = long(in.width) - 1 - m;
  const long W = x1 - x0 + 1;
  const long inner = long(in.height) - 2 * m;
  const long ph = in.boundaries ? std::max<long>(8, long(double(inner) * in.posterior_fraction)) : 0;
  const long sy0 = m, sy1 = m + inner - 1 - (ph ? ph + m / 2 + 1 : 0);
  const long py0 = sy1 + m / 2 + 2, py1 = m + inner - 1;
  auto col_of = [&](std::size_t t) { return x0 + long(double(t) * double(W) / double(T)); };
  auto y_of = [&](double v) { return sy1 - long(std::lround((v - lo) / (hi - lo) * double(sy1 - sy0))); };

  for (const auto& s : in.segments) {
    if (s.start >= T) continue;
    const long a = col_of(s.start), b = std::max(a, col_of(std::min(s.end, T)) - 1);
    cv.fill(a, sy0, b, sy1, tint(kPalette[s.label % kPalette.size()], 0.3));
    if (s.start > 0) cv.vline(a, sy0, sy1, {60, 60, 60});
  }
  for (std::size_t d = 0; d < D; ++d) {
    long prev_y = -1;
    for (long x = 0; x < W; ++x) {
      const std::size_t t0 = std::size_t(double(x) * double(T) / double(W));
      const std::size_t t1 = std::max(t0 + 1, std::size_t(double(x + 1) * double(T) / double(W)));
      if (t0 >= T) break;
      double mn = INFINITY, mx = -INFINITY;
      for (std::size_t t = t0; t < std::min(t1, T); ++t)
        mn = std::min(mn, in.signal[t * D + d]), mx = std::max(mx, in.signal[t * D + d]);
      long ya = y_of(mx), yb = y_of(mn);
      const long first = y_of(in.signal[t0 * D + d]);
      if (prev_y >= 0) ya = std::min(ya, std::min(prev_y, first)), yb = std::max(yb, std::max(prev_y, first));
      cv.vline(x0 + x, ya, yb, kLines[d % kLines.size()]);
      prev_y = y_of(in.signal[(std::min(t1, T) - 1) * D + d]);
    }
  }
  auto frame = [&](long ya, long yb) {
    cv.hline(x0, x1, ya, {150, 150, 150});
    cv.hline(x0, x1, yb, {150, 150, 150});
    cv.vline(x0, ya, yb, {150, 150, 150});
    cv.vline(x1, ya, yb, {150, 150, 150});
  };
  frame(sy0, sy1);
  if (in.boundaries) {
    for (long x = 0; x < W; ++x) {
      const std::size_t t0 = std::size_t(double(x) * double(T) / double(W));
      const std::size_t t1 = std::max(t0 + 1, std::size_t(double(x + 1) * double(T) / double(W)));
      double p = 0;
      for (std::size_t t = std::max<std::size_t>(t0, 1); t < std::min(t1, T); ++t) p = std::max(p, in.boundaries[t]);
      if (p > 0)
        cv.vline(x0 + x, py1 - long(std::lround(std::clamp(p, 0.0, 1.0) * double(py1 - py0))), py1, {31, 119, 180});
    }
    frame(py0, py1);
  }
  return cv.take();
}

}  // namespace gemflow::semicrf
