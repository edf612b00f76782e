#pragma once
// Host side of a render, shared by the CPU and CUDA paths: the flame compiled into the
// kernels' form (detail/core.hpp), the sample count, the log-density constants, the spatial
// filter and the density-estimation kernels.
#include <cmath>
#include <cstdint>
#include <vector>

#include "gemflow/flame/detail/core.hpp"
#include "gemflow/flame/flame.hpp"

namespace gemflow::flame::detail {

template <class R>
KXform<R> compile_xform(const Xform& x) {
  KXform<R> k{};
  for (int i = 0; i < 6; ++i) {
    k.coefs[i] = static_cast<R>(x.coefs[static_cast<std::size_t>(i)]);
    k.post[i] = static_cast<R>(x.post[static_cast<std::size_t>(i)]);
  }
  k.has_post = x.has_post() ? 1 : 0;
  k.color = static_cast<R>(x.color);
  k.color_speed = static_cast<R>(x.color_speed);
  // flam3's adjust_percentage: opacity o plots with weight 10^(−log2(1/o)).
  k.vis = x.opacity == 0 ? R(0) : static_cast<R>(std::pow(10.0, -std::log(1.0 / x.opacity) / std::log(2.0)));
  k.pre_blur = static_cast<R>(x.var[kVar_pre_blur]);
  for (int v = 0; v < kNumVariations; ++v) {
    const double w = x.var[static_cast<std::size_t>(v)];
    if (w == 0 || v == kVar_pre_blur) continue;
    k.var_id[k.nvars] = v;
    k.var_w[k.nvars] = static_cast<R>(w);
    ++k.nvars;
    if (needs_atan_xy(v)) k.need_xy = 1;
    if (needs_atan_yx(v)) k.need_yx = 1;
  }
  for (int p = 0; p < kNumVarParams; ++p) k.param[p] = static_cast<R>(x.param[static_cast<std::size_t>(p)]);
  return k;
}

/// Selection tables: row 0 by weight, row 1 + j after xform j (only when the flame has xaos).
inline std::vector<std::uint16_t> selection_table(const Flame& f) {
  const std::size_t n = f.xforms.size();
  const std::size_t rows = f.has_chaos ? n + 1 : 1;
  std::vector<std::uint16_t> t(rows * kGrain);
  for (std::size_t r = 0; r < rows; ++r) {
    std::vector<double> w(n);
    for (std::size_t j = 0; j < n; ++j) {
      const auto& ch = r == 0 ? std::vector<double>{} : f.xforms[r - 1].chaos;
      w[j] = f.xforms[j].weight * (j < ch.size() ? ch[j] : 1.0);
    }
    double total = 0;
    for (double v : w) total += v;
    double cum = 0;
    std::size_t j = 0;
    for (int g = 0; g < kGrain; ++g) {
      const double target = (g + 0.5) / kGrain * total;
      while (j + 1 < n && (cum + w[j] <= target || w[j] == 0)) cum += w[j++];
      std::size_t pick = j;
      while (pick > 0 && w[pick] == 0) --pick;  // never a weight-0 xform (rounding at the end)
      t[r * kGrain + static_cast<std::size_t>(g)] = static_cast<std::uint16_t>(pick);
    }
  }
  return t;
}

struct PostParams {
  HistogramShape shape;
  int ss = 1;
  double k1 = 0, k2 = 0;
  std::vector<double> filter;  ///< filter_width², row-major, normalised
  ToneParams tone{};
  bool de = false;
  double de_max = 0, de_min = 0, de_curve = 0.4;  ///< radii in cells (flam3's comp_max/min_radius)
  /// flam3's earlyclip: tone map (and clamp) every accumulator cell before the spatial filter,
  /// instead of the filtered pixel.
  bool earlyclip = false;
};

/// Output settings that flam3 takes from the renderer, not the genome (flam3-render's
/// `earlyclip` and `transparency`).
struct OutputOptions {
  bool earlyclip = false;
  bool transparent = false;
};

template <class R>
struct Prepared {
  std::vector<KXform<R>> xforms;  ///< the final xform last when there is one
  bool has_final = false;
  R final_opacity = 1;
  std::vector<std::uint16_t> table;
  bool chaos = false;
  std::vector<R> palette;  ///< 256 × RGBA
  int step_mode = 0;
  Camera<R> cam{};
  std::uint64_t samples = 0;
  int fuse = 15;
  PostParams post;
};

inline PostParams post_params(const Flame& f, OutputOptions out = {}) {
  PostParams p;
  p.earlyclip = out.earlyclip;
  p.tone.transparent = out.transparent ? 1 : 0;
  p.shape = histogram_shape(f);
  p.ss = f.supersample;
  const double ppu = f.scale * std::pow(2.0, f.zoom);
  const double density = f.quality * std::pow(4.0, f.zoom);
  const double area = static_cast<double>(f.width) * static_cast<double>(f.height) / (ppu * ppu);
  p.k1 = f.brightness * 268.0 / 256.0 * 255.0;
  p.k2 = static_cast<double>(f.supersample * f.supersample) / (area * density);
  // Spatial filter (flam3 filters.c's grid): fw = 2·support·ss·radius cells.
  const int shape = static_cast<int>(f.filter_shape);
  const double support = filter_support(shape);
  const double fw = 2.0 * support * f.supersample * f.filter;
  const int n = static_cast<int>(p.shape.filter_width);
  const double adjust = fw > 0 ? support * n / fw : 1.0;
  p.filter.resize(static_cast<std::size_t>(n) * static_cast<std::size_t>(n));
  double sum = 0;
  for (int j = 0; j < n; ++j)
    for (int i = 0; i < n; ++i) {
      const double x = ((2.0 * i + 1.0) / n - 1.0) * adjust, y = ((2.0 * j + 1.0) / n - 1.0) * adjust;
      const double v = filter_value(shape, x) * filter_value(shape, y);
      p.filter[static_cast<std::size_t>(j) * static_cast<std::size_t>(n) + static_cast<std::size_t>(i)] = v;
      sum += v;
    }
  if (sum == 0)
    throw FlameError(f.source + ":" + std::to_string(f.line) + ": attribute 'filter' = " + std::to_string(f.filter) +
                     " gives an empty spatial filter");
  for (double& v : p.filter) v /= sum;
  p.tone.inv_gamma = 1.0 / f.gamma;
  p.tone.linrange = f.gamma_threshold;
  p.tone.vibrancy = f.vibrancy;
  p.tone.highlight_power = f.highlight_power;
  for (int c = 0; c < 3; ++c) p.tone.background[c] = f.background[static_cast<std::size_t>(c)] * 256.0;
  p.de = f.estimator_radius > 0 && f.estimator_radius > f.estimator_minimum;
  p.de_max = f.estimator_radius * f.supersample + 1;
  p.de_min = f.estimator_minimum * f.supersample + 1;
  p.de_curve = f.estimator_curve;
  return p;
}

template <class R>
Prepared<R> prepare(const Flame& f, OutputOptions out = {}) {
  Prepared<R> p;
  for (const auto& x : f.xforms) p.xforms.push_back(compile_xform<R>(x));
  if (f.final_xform) {
    p.xforms.push_back(compile_xform<R>(*f.final_xform));
    p.has_final = true;
    p.final_opacity = static_cast<R>(f.final_xform->opacity);
  }
  p.table = selection_table(f);
  p.chaos = f.has_chaos;
  p.palette.resize(1024);
  for (std::size_t i = 0; i < 256; ++i)
    for (std::size_t c = 0; c < 4; ++c) p.palette[i * 4 + c] = static_cast<R>(f.palette[i][c]);
  p.step_mode = f.palette_mode == PaletteMode::Step ? 1 : 0;
  p.post = post_params(f, out);
  const double ppu = f.scale * std::pow(2.0, f.zoom);
  const double rot = f.rotate * 3.14159265358979323846 / 180.0;
  p.cam.cx = static_cast<R>(f.center[0]);
  p.cam.cy = static_cast<R>(f.center[1]);
  p.cam.cos_r = static_cast<R>(std::cos(rot));
  p.cam.sin_r = static_cast<R>(std::sin(rot));
  p.cam.k = static_cast<R>(ppu * f.supersample);
  p.cam.width = static_cast<int>(p.post.shape.width);
  p.cam.height = static_cast<int>(p.post.shape.height);
  p.cam.half_w = static_cast<R>(p.post.shape.width / 2.0);
  p.cam.half_h = static_cast<R>(p.post.shape.height / 2.0);
  p.samples = static_cast<std::uint64_t>(f.quality * std::pow(4.0, f.zoom) * static_cast<double>(f.width) *
                                         static_cast<double>(f.height));
  p.fuse = f.fuse;
  return p;
}

/// The kernel index of a neighbourhood density: ⌈n⌉, at least 1.
inline double de_index(double n) { return n <= 1 ? 1.0 : std::ceil(n); }

/// Density-estimation kernel radius (cells) for a neighbourhood density n (flam3's de_thread
/// index: width = max / N^curve, N = ⌈n⌉ up to 100, then continuous; never below min).
inline double de_width(const PostParams& p, double n) {
  const double h = p.de_max / std::pow(de_index(n), p.de_curve);
  return h < p.de_min ? p.de_min : h;
}

}  // namespace gemflow::flame::detail
