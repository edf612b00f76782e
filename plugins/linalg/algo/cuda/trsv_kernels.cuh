#pragma once
// Triangular solves with one right-hand side for the mixed-precision refinement: L y = b and
// Lᵀ x = y with the fp32 Cholesky factor L (lower, column-major). cuBLAS STRSV takes about
// 1.06 ms at n = 16384 and 1.9–2.3 ms at 32768 on an H200 (docs/performance.md), while reading L
// once at memory speed would take about 0.15 / 0.6 ms: its block-by-block chain is the cost.
//
// Algorithm: blocks of kTrsvB rows, one CTA per block row, synchronisation-free (no grid-wide
// barrier): a CTA takes the next block in solve order from an atomic ticket, so it only waits for
// blocks held by CTAs that are already running (no deadlock whatever the residency), accumulates
// its products with the published blocks as a counter of published blocks grows (acquire/release
// at GPU scope; blocks publish in order, each needing the one before), and finishes with a GEMV
// by the inverted diagonal block, computed once per factor by trsv_invert_diag_kernel. Sums in fp64
// (the transposed solve: per-thread partial sums in fp32), inverse in fp64 rounded to fp32.
// Sources: Liu, Li, Hou & Vinter, "A synchronization-free algorithm for parallel sparse triangular
// solves", Euro-Par 2016 (the flag scheme, here for dense blocks); TRSV through
// inverted diagonal blocks as in MAGMA's trsv (Du Croz & Higham, IMA J. Numer. Anal. 12 (1992)).
#include <cuda_runtime.h>

#include <cstdint>
#include <type_traits>

#include "sync.cuh"

namespace gemflow::linalg::cuda::detail {

constexpr int kTrsvB = 128;                 ///< rows per block
constexpr int kTrsvGroups = 4;              ///< column groups of a block (threads = kTrsvB·groups)
constexpr int kTrsvThreads = kTrsvB * kTrsvGroups;
constexpr int kTrsvCols = kTrsvB / kTrsvGroups;  ///< columns of a tile per thread
constexpr int kTrsvInvLd = kTrsvB + 1;      ///< shared row stride of the inverse (conflict-free both ways)

constexpr std::size_t trsv_smem_bytes() {
  return sizeof(float) * kTrsvB * kTrsvInvLd + sizeof(double) * (kTrsvGroups + 1) * kTrsvB + 16;
}
constexpr std::size_t trsv_invert_smem_bytes() { return sizeof(float) * 2 * kTrsvB * kTrsvInvLd; }

/// inv (nblk blocks of kTrsvB² floats, column-major, ld kTrsvB) = the inverses of the diagonal
/// blocks of L (n×n, ld ldl); the last block is padded with the identity. One CTA of kTrsvB
/// threads per block; thread c computes column c by forward substitution in fp64.
__global__ void __launch_bounds__(kTrsvB) trsv_invert_diag_kernel(const float* l, std::int64_t ldl, std::int64_t n,
                                                                   float* inv) {
  extern __shared__ float trsv_inv_smem[];
  float* ls = trsv_inv_smem;                     // L_bb(r, k) at r·kTrsvInvLd + k
  float* xs = trsv_inv_smem + kTrsvB * kTrsvInvLd;  // X(k, c) at k·kTrsvInvLd + c
  const int c = threadIdx.x;
  const std::int64_t r0 = std::int64_t(blockIdx.x) * kTrsvB;
  const int rows = static_cast<int>(n - r0 < kTrsvB ? n - r0 : kTrsvB);
  for (int k = 0; k < kTrsvB; ++k) {  // column k of the block: coalesced over c (rows)
    const int r = c;
    float v = r == k ? 1.0f : 0.0f;
    if (r < rows && k < rows && r >= k) v = l[(r0 + r) + (r0 + k) * ldl];
    ls[r * kTrsvInvLd + k] = v;
  }
  __syncthreads();
  for (int r = 0; r < kTrsvB; ++r) {
    double s = r == c ? 1.0 : 0.0;
    if (r > c)
      for (int k = c; k < r; ++k) s -= static_cast<double>(ls[r * kTrsvInvLd + k]) * xs[k * kTrsvInvLd + c];
    const float x = r < c ? 0.0f : static_cast<float>(s / static_cast<double>(ls[r * kTrsvInvLd + r]));
    xs[r * kTrsvInvLd + c] = x;
    inv[std::int64_t(blockIdx.x) * kTrsvB * kTrsvB + r + std::int64_t(c) * kTrsvB] = x;
  }
}

/// Solves L y = b (transpose = false) or Lᵀ y = b (true) in place in x (n floats), L lower (ld ldl)
/// with its inverted diagonal blocks inv. Grid: nblk = ⌈n / kTrsvB⌉ CTAs of kTrsvThreads,
/// trsv_smem_bytes() dynamic shared memory; progress[0] (blocks published, in solve order) and
/// progress[1] (the ticket) must be 0 at launch.
///
/// CTA for block b (in solve order p = 0, 1, …): the tiles of published blocks are taken in
/// batches without polling (the loads of a batch pipeline), the counter is polled only when the
/// CTA has caught up, the tile of the block published last is loaded before that wait, and the
/// block is published by one release store after a barrier.
template <bool kTranspose>
__global__ void __launch_bounds__(kTrsvThreads) trsv_kernel(const float* l, std::int64_t ldl, std::int64_t n,
                                                            const float* inv, float* x, unsigned* progress) {
  extern __shared__ __align__(16) unsigned char trsv_smem_raw[];
  float* inv_s = reinterpret_cast<float*>(trsv_smem_raw);  // (r, c) at c·kTrsvInvLd + r
  double* red = reinterpret_cast<double*>(inv_s + kTrsvB * kTrsvInvLd);  // kTrsvGroups × kTrsvB
  double* z = red + kTrsvGroups * kTrsvB;                                 // kTrsvB
  __shared__ int s_pos, s_ready;
  const int t = threadIdx.x;
  const int nblk = static_cast<int>((n + kTrsvB - 1) / kTrsvB);
  if (t == 0) s_pos = static_cast<int>(atomicAdd(progress + 1, 1u));
  __syncthreads();
  const int pos = s_pos;                             // this block's place in the solve order
  const int b = kTranspose ? nblk - 1 - pos : pos;  // its block row
  const std::int64_t r0 = std::int64_t(b) * kTrsvB;
  const int rows = static_cast<int>(n - r0 < kTrsvB ? n - r0 : kTrsvB);
  const int r = t % kTrsvB, g = t / kTrsvB;  // tile row r, column group g
  // tile p' (p' < pos in solve order) is block j = p' (forward) or nblk − 1 − p' (transpose):
  // forward: row r0 + r of L against columns jB + g·C … of y_j; transpose: row jB + r of L against
  // columns r0 + g·C … (its transpose's row), times the single x_j(r)
  const auto tile_ptr = [&](int pp, bool& valid) -> const float* {
    if constexpr (!kTranspose) {
      valid = r < rows;
      return l + (r0 + (valid ? r : 0)) + (std::int64_t(pp) * kTrsvB + g * kTrsvCols) * ldl;
    } else {
      const std::int64_t row = std::int64_t(nblk - 1 - pp) * kTrsvB + r;
      valid = row < n;
      return l + (valid ? row : 0) + (r0 + g * kTrsvCols) * ldl;
    }
  };
  const auto load_tile = [&](int pp, float (&lv)[kTrsvCols]) {
    bool valid;
    const float* lp = tile_ptr(pp, valid);
#pragma unroll
    for (int c = 0; c < kTrsvCols; ++c)
      lv[c] = (valid && (!kTranspose || g * kTrsvCols + c < rows)) ? lp[c * ldl] : 0.0f;
  };
  // forward: one fp64 sum per thread; transpose: kTrsvCols fp32 partial sums (fp64 would spill)
  using Acc = std::conditional_t<kTranspose, float, double>;
  Acc acc[kTranspose ? kTrsvCols : 1];
#pragma unroll
  for (int c = 0; c < (kTranspose ? kTrsvCols : 1); ++c) acc[c] = 0;
  const auto apply = [&](int pp, const float (&lv)[kTrsvCols]) {
    if constexpr (!kTranspose) {
      const float* xj = x + std::int64_t(pp) * kTrsvB + g * kTrsvCols;
#pragma unroll
      for (int c = 0; c < kTrsvCols; ++c) acc[0] += static_cast<double>(lv[c]) * __ldcg(xj + c);
    } else {
      const std::int64_t row = std::int64_t(nblk - 1 - pp) * kTrsvB + r;
      const float xj = row < n ? __ldcg(x + row) : 0.0f;
#pragma unroll
      for (int c = 0; c < kTrsvCols; ++c) acc[c] = fmaf(lv[c], xj, acc[c]);
    }
  };
  const double rhs = (g == 0 && r < rows) ? static_cast<double>(x[r0 + r]) : 0.0;  // before any wait
  if (pos > 0) {
    float last[kTrsvCols];  // the tile of the block just before this one: on the critical path
    load_tile(pos - 1, last);
    for (int e = t; e < kTrsvB * kTrsvB; e += kTrsvThreads) {  // the inverse, off the critical path
      const int rr = e % kTrsvB, cc = e / kTrsvB;
      inv_s[cc * kTrsvInvLd + rr] = inv[std::int64_t(b) * kTrsvB * kTrsvB + e];
    }
    // thread 0 polls (one request per CTA, not one per warp, on the line every CTA watches) and
    // the barrier passes its acquire on to the other threads
    const auto wait_for = [&](int at_least) {
      __syncthreads();  // s_ready of the previous round has been read by every thread
      if (t == 0) {
        int v = static_cast<int>(ld_acquire(progress));
        while (v < at_least) v = static_cast<int>(ld_acquire(progress));
        s_ready = v;
      }
      __syncthreads();
      return s_ready;
    };
    int pp = 0;
    while (pp < pos - 1) {  // batches of published tiles, polling only when caught up
      const int ready = wait_for(pp + 1);
      const int stop = ready < pos - 1 ? ready : pos - 1;
#pragma unroll 1
      for (; pp < stop; ++pp) {
        float lv[kTrsvCols];
        load_tile(pp, lv);
        apply(pp, lv);
      }
    }
    wait_for(pos);
    apply(pos - 1, last);
  } else {
    for (int e = t; e < kTrsvB * kTrsvB; e += kTrsvThreads) {
      const int rr = e % kTrsvB, cc = e / kTrsvB;
      inv_s[cc * kTrsvInvLd + rr] = inv[std::int64_t(b) * kTrsvB * kTrsvB + e];
    }
  }
  // z = b_b − (the sums): forward, the 4 column groups of row r; transpose, the 128 rows of
  // column g·C + c (shuffles within each warp, then the 4 warps of the group)
  if constexpr (!kTranspose) {
    red[g * kTrsvB + r] = acc[0];
  } else {
    const int lane = t % 32, wr = r / 32;
#pragma unroll
    for (int c = 0; c < kTrsvCols; ++c) {
      double v = static_cast<double>(acc[c]);
      for (int o = 16; o > 0; o >>= 1) v += __shfl_down_sync(0xffffffffu, v, o);
      if (lane == 0) red[wr * kTrsvB + g * kTrsvCols + c] = v;
    }
  }
  __syncthreads();
  if (g == 0) {
    double s = 0.0;
#pragma unroll
    for (int q = 0; q < kTrsvGroups; ++q) s += red[q * kTrsvB + r];
    z[r] = r < rows ? rhs - s : 0.0;
  }
  __syncthreads();
  // forward y_b(r) = Σ_c inv(r, c)·z(c); transpose x_b(r) = Σ_c inv(c, r)·z(c); c in group g
  double y = 0.0;
#pragma unroll 8
  for (int c = g * kTrsvCols; c < (g + 1) * kTrsvCols; ++c)
    y += static_cast<double>(kTranspose ? inv_s[r * kTrsvInvLd + c] : inv_s[c * kTrsvInvLd + r]) * z[c];
  red[g * kTrsvB + r] = y;  // red was last read before the barrier above
  __syncthreads();
  if (g == 0 && r < rows) {
    double s = 0.0;
#pragma unroll
    for (int q = 0; q < kTrsvGroups; ++q) s += red[q * kTrsvB + r];
    x[r0 + r] = static_cast<float>(s);
  }
  __syncthreads();
  // the barrier orders the block's stores before thread 0's release store (cumulative at GPU
  // scope), as in CUTLASS's GenericBarrier::arrive_inc
  if (t == 0) st_release(progress, static_cast<unsigned>(pos + 1));
}

}  // namespace gemflow::linalg::cuda::detail
