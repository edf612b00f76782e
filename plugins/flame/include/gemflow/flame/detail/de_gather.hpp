#pragma once
// Density estimation as a gather (the CUDA path's form; render_cuda.hpp): the per-cell source
// pass and the per-block tile load and per-cell sum, as host/device functions so that a CPU
// test can run the kernel's exact indexing block by block against the scatter.
//
// Source pass: cell (x, y) gets its log-density value (4 doubles) and its kernel index k
// (0: spreads nothing — empty, or within ss − 1 cells of the edge, as the CPU scatter).
// Tile: a block of kDeTile² output cells whose origin is (bx·kDeTile, by·kDeTile) loads the
// (kDeTile + 2R)² cells around it (R: the largest kernel radius) into sv (4 doubles per cell)
// and sk (per cell: k and its kernel's radius packed, de_pack; 0 for no source), so that the
// sum reads a source's radius from the tile, not from the kernel table; each thread then sums, for its cell, the
// kernels of the loaded sources at its offset from them, visiting only offsets within tile_r, the largest radius
// present in the tile (a farther source reaches nothing there). Fixed order: deterministic.
#include <cmath>
#include <cstddef>

#include "gemflow/flame/detail/core.hpp"

namespace gemflow::flame::detail {

inline constexpr int kDeTile = 16;
/// sk packing: k in the low kDeKBits bits (DeKernels caps kmax at 200000 < 2^18), the radius
/// above (a radius whose tile fits in shared memory is far below 2^13).
inline constexpr int kDeKBits = 18;
inline constexpr int kDeKMask = (1 << kDeKBits) - 1;
GF_FLAME_HD inline int de_pack(int k, int r) { return k ? (r << kDeKBits) | k : 0; }

/// Cells of a tile side for kernel radius R.
GF_FLAME_HD inline int de_tile_side(int R) { return kDeTile + 2 * R; }

/// Source pass for one cell; returns k and writes val[0..3] when k > 0. `hist` is indexed as a
/// u64 histogram, hist[cell·4 + channel]: a pointer, or a SplitHistView (detail/split_hist.hpp).
template <class H>
GF_FLAME_HD inline int de_source(const H& hist, int hw, int hh, int ss, double k1, double k2, int kmax, int x, int y,
                                 double val[4]) {
  const std::size_t base = (static_cast<std::size_t>(y) * hw + x) * 4;
  if (x < ss - 1 || x >= hw - (ss - 1) || y < ss - 1 || y >= hh - (ss - 1) || hist[base + 3] == 0) return 0;
  const unsigned long long h[4] = {hist[base], hist[base + 1], hist[base + 2], hist[base + 3]};
  const int half = ss / 2;
  double n = 0;
  for (int j = -half; j <= half; ++j)
    for (int i = -half; i <= half; ++i) {
      const int yy = y + j, xx = x + i;
      if (yy < 0 || xx < 0 || yy >= hh || xx >= hw) continue;
      n += static_cast<double>(hist[(static_cast<std::size_t>(yy) * hw + xx) * 4 + 3]) / kFixedOne;
    }
  if (ss % 2 == 0) n *= (ss / (ss + 1.0)) * (ss / (ss + 1.0));
  log_density(h, k1, k2, val);
  const double kd = n <= 1 ? 1.0 : ceil(n);
  return kd >= kmax ? kmax : static_cast<int>(kd);
}

/// Tile load by thread `tid` of `nthreads` of block (bx, by): its share of sv/sk. Returns the
/// largest radius among the non-empty sources it loaded (−1: none).
GF_FLAME_HD inline int de_tile_load(const double* val, const int* kidx, const int* radius, int hw, int hh, int R,
                                    int bx, int by, int tid, int nthreads, double* sv, int* sk) {
  const int S = de_tile_side(R);
  const int x0 = bx * kDeTile - R, y0 = by * kDeTile - R;
  int my_r = -1;
  for (int t = tid; t < S * S; t += nthreads) {
    const int gx = x0 + t % S, gy = y0 + t / S;
    int k = 0;
    if (gx >= 0 && gy >= 0 && gx < hw && gy < hh) {
      const std::size_t c = static_cast<std::size_t>(gy) * hw + gx;
      k = kidx[c];
      if (k) {
        for (int q = 0; q < 4; ++q) sv[t * 4 + q] = val[c * 4 + q];
        if (radius[k] > my_r) my_r = radius[k];
        k = de_pack(k, radius[k]);
      }
    }
    sk[t] = k;
  }
  return my_r;
}

/// The sum for the cell at (tx, ty) within its tile, given the loaded tile and tile_r.
template <class Off>
GF_FLAME_HD inline void de_tile_sum(const double* sv, const int* sk, int R, int tile_r, const double* coefs,
                                    const Off* offsets, int tx, int ty, double out[4]) {
  const int S = de_tile_side(R);
  out[0] = out[1] = out[2] = out[3] = 0;
  const int reach = tile_r < R ? tile_r : R;
  const int lo = R - reach, hi = R + reach;  // rows of sources within reach
  for (int sy = lo; sy <= hi; ++sy) {
    const int row = (ty + sy) * S + tx;
    const int dy = R - sy;  // this cell's offset from the source
    // Sources farther than reach + 1 reach nothing (below): the row's span within that disc.
    const int lim = (reach + 1) * (reach + 1) - dy * dy;
    int e = static_cast<int>(sqrt(static_cast<double>(lim)));
    while (e * e > lim) --e;
    while ((e + 1) * (e + 1) <= lim) ++e;
    if (e > reach) e = reach;
    for (int sx = R - e; sx <= R + e; ++sx) {
      const int packed = sk[row + sx];
      if (!packed) continue;
      const int k = packed & kDeKMask, r = packed >> kDeKBits, dx = R - sx;
      // Beyond the square of side 2r + 1, or beyond its disc of radius r + 1 (every tap there is
      // exactly 0, as DeKernels makes them): nothing to add, and skipping 0 leaves the sum alone.
      if (dx > r || dx < -r || dy > r || dy < -r || dx * dx + dy * dy > (r + 1) * (r + 1)) continue;
      const double w = coefs[offsets[k] + static_cast<std::size_t>((dy + r) * (2 * r + 1) + (dx + r))];
      const double* v = sv + static_cast<std::size_t>(row + sx) * 4;
      for (int q = 0; q < 4; ++q) out[q] += w * v[q];
    }
  }
}

}  // namespace gemflow::flame::detail
