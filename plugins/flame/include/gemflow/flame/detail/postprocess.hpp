#pragma once
// CPU pieces of a render: one walker of the chaos game, the density-estimation kernels and the
// post-processing of a histogram into 8-bit RGBA (render.hpp describes the stages).
#include <cstdint>
#include <functional>
#include <vector>

#include "gemflow/flame/detail/prepare.hpp"
#include "gemflow/flame/detail/split_hist.hpp"

namespace gemflow::flame::detail {

/// One walker: random start in [-1, 1]², `fuse` unplotted iterations, then `iters` iterations
/// plotted into a histogram of split words (4 fixed-point channels per cell; detail/split_hist.hpp:
/// u32 low words `lo`, and `hi` counting their wraps), owned by the calling thread. Returns the
/// bad points met. The random stream is (seed, walker): the same walker gives the same points on
/// any thread.
template <class R>
std::uint64_t run_walker(const Prepared<R>& P, std::uint64_t seed, std::uint64_t walker, std::uint64_t iters,
                         unsigned* lo, unsigned* hi) {
  Pcg32 rng(seed, walker);
  R x = uniform01<R>(rng) * R(2) - R(1), y = uniform01<R>(rng) * R(2) - R(1), c = uniform01<R>(rng);
  std::uint64_t bad = 0;
  std::size_t row = 0;
  const std::size_t n = P.has_final ? P.xforms.size() - 1 : P.xforms.size();
  (void)n;
  const KXform<R>* xf = P.xforms.data();
  const std::uint16_t* table = P.table.data();
  const long long start = -static_cast<long long>(P.fuse);
  // Plots wait kLag samples in a ring after a prefetch of their cell: the random access to a
  // large histogram (33 MB of low words at 1080p) then overlaps the next iterations instead of
  // stalling. The high words are written only when a low word wraps.
  constexpr int kLag = 16;
  struct Pending {
    std::size_t cell;
    std::uint64_t add[4];
  };
  Pending ring[kLag];
  int head = 0, pending = 0;
  auto commit = [lo, hi](const Pending& p) {
    for (std::size_t k = 0; k < 4; ++k) {
      const auto a = static_cast<unsigned>(p.add[k]);
      unsigned& l = lo[p.cell + k];
      l += a;
      const unsigned carry = (l < a ? 1u : 0u) + static_cast<unsigned>(p.add[k] >> 32);
      if (carry) hi[p.cell + k] += carry;
    }
  };
  for (long long i = start; i < static_cast<long long>(iters); ++i) {
    const unsigned fn = table[row * kGrain + (rng.next() & (kGrain - 1))];
    R nx, ny, nc;
    if (!apply_xform(xf[fn], x, y, c, nx, ny, nc, rng)) {
      ++bad;
      x = uniform01<R>(rng) * R(2) - R(1);
      y = uniform01<R>(rng) * R(2) - R(1);
      continue;
    }
    x = nx;
    y = ny;
    c = nc;
    if (P.chaos) row = fn + 1;
    if (i < 0) continue;
    R vis = xf[fn].vis;
    if (vis == R(0)) continue;
    R px = x, py = y, pc = c;
    if (P.has_final && (P.final_opacity == R(1) || uniform01<R>(rng) < P.final_opacity)) {
      if (!apply_xform(P.xforms.back(), x, y, c, px, py, pc, rng)) continue;
    }
    int ix, iy;
    if (!to_cell(P.cam, px, py, ix, iy)) continue;
    R col[4];
    palette_color(P.palette.data(), P.step_mode, pc, col);
    Pending p;
    p.cell = (static_cast<std::size_t>(iy) * static_cast<std::size_t>(P.cam.width) + static_cast<std::size_t>(ix)) * 4;
    __builtin_prefetch(lo + p.cell, 1);
    for (int k = 0; k < 4; ++k) p.add[k] = to_fixed(col[k] * vis);
    if (pending == kLag) commit(ring[head]);
    else ++pending;
    ring[head] = p;
    head = (head + 1) % kLag;
  }
  for (int k = 0; k < pending; ++k) commit(ring[(head + kLag - pending + k) % kLag]);
  return bad;
}

/// Density-estimation kernels, index k = 1..kmax: gaussian discs of radius
/// max(de_min, de_max/k^curve) cells, normalised; coefs of kernel k at offsets[k], side
/// 2·radius[k] + 1.
struct DeKernels {
  explicit DeKernels(const PostParams& p);
  [[nodiscard]] int index(double n) const;
  int kmax = 0;
  std::vector<std::size_t> offsets;
  std::vector<int> radius;
  std::vector<double> coefs;
  /// Per kernel and row j = 0..2r (at offsets[k] / side): the half-width e of its non-zero
  /// taps (|i| ≤ e), or −1 for a row of zeros — the disc's extent, so the spread skips the
  /// corners of its square.
  std::vector<int> row_extent;
  std::vector<std::size_t> row_offsets;
};

/// Log density (+ density estimation), spatial filter and tone map of a histogram of
/// p.shape cells (4 values each; u64, or split words): width·height·4 bytes. Throws
/// RenderCancelled when `cancelled`.
std::vector<std::uint8_t> postprocess(const std::uint64_t* hist, const Flame& f, const PostParams& p,
                                      const std::function<bool()>& cancelled);
std::vector<std::uint8_t> postprocess(const SplitHistView& hist, const Flame& f, const PostParams& p,
                                      const std::function<bool()>& cancelled);

}  // namespace gemflow::flame::detail
