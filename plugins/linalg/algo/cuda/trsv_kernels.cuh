#pragma once
// Triangular solves with one right-hand side for the mixed-precision refinement: L y = b and
// Lᵀ x = y with the fp32 Cholesky factor L (lower, column-major). cuBLAS STRSV takes about
// 1.06 ms at n = 16384 and 1.9–2.3 ms at 32768 on an H200 (docs/performance.md), while reading L
// once at memory speed would take about 0.15 / 0.6 ms: its block-by-block chain is the cost.
//
// Algorithm: blocks of kTrsvB rows, one CTA per block row, synchronisation-free (no grid-wide
// barrier): a CTA takes the next block in solve order from an atomic ticket, so it only waits for
// blocks held by CTAs that are already running (no deadlock whatever the residency), accumulates
// its products with each earlier block as soon as that block's values are published, and finishes
// with a GEMV by the inverted diagonal block, computed once per factor by trsv_invert_diag_kernel.
// Values are published as tagged 64-bit words (the value and the solve's epoch in one store), so
// a reader polls the data itself: no flag, no fence (a published-blocks counter with release /
// acquire cost 5.5 µs per block at n = 16k, the tagged words 3.9 µs; H200, docs/performance.md).
// Sums in fp64 (the transposed solve: per-thread partial sums in fp32), inverse in fp64 rounded
// to fp32.
// Sources: Liu, Li, Hou & Vinter, "A synchronization-free algorithm for parallel sparse triangular
// solves", Euro-Par 2016 (the synchronisation-free scheme, here for dense blocks and with the
// value itself as the flag); TRSV through
// inverted diagonal blocks as in MAGMA's trsv (Du Croz & Higham, IMA J. Numer. Anal. 12 (1992)).
#include <cuda_runtime.h>

#include <cstdint>
#include <type_traits>

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

/// A solved value published with its solve's tag: the 64-bit word (epoch << 32 | bits), one
/// single-copy-atomic store, so a reader needs no flag and no fence: it polls the word itself
/// (relaxed, at GPU scope: from L2, never a stale L1 line) until the tag is its epoch, sleeping
/// sleep_ns between polls (0: spin).
__device__ __forceinline__ void publish_tagged(unsigned long long* p, float v, unsigned epoch) {
  const unsigned long long w = (static_cast<unsigned long long>(epoch) << 32) | __float_as_uint(v);
  asm volatile("st.relaxed.gpu.global.b64 [%0], %1;" ::"l"(p), "l"(w) : "memory");
}
__device__ __forceinline__ float read_tagged(const unsigned long long* p, unsigned epoch, unsigned sleep_ns) {
  unsigned long long w;
  for (;;) {
    asm volatile("ld.relaxed.gpu.global.b64 %0, [%1];" : "=l"(w) : "l"(p) : "memory");
    if (static_cast<unsigned>(w >> 32) == epoch) break;
    if (sleep_ns) __nanosleep(sleep_ns);
  }
  return __uint_as_float(static_cast<unsigned>(w));
}

/// Polls of a CTA that is more than two blocks away from its turn sleep this long between reads:
/// it can lag without delaying the chain, and leaves L2 to the CTA that is next (H200, n = 16k:
/// 0 / 64 / 256 / 1024 ns gave 1.017 / 1.010 / 1.009 / 1.032 ms per solve pair).
constexpr unsigned kTrsvFarSleepNs = 256;

/// Solves L y = b (transpose = false) or Lᵀ y = b (true) in place in x (n floats), L lower (ld ldl)
/// with its inverted diagonal blocks inv. Grid: nblk = ⌈n / kTrsvB⌉ CTAs of kTrsvThreads,
/// trsv_smem_bytes() dynamic shared memory; *ticket must be 0 at launch, and pub (n words) must
/// hold no word tagged `epoch` (the forward and the transposed solve of a pair take different
/// epochs; zero pub before each pair).
///
/// CTA for block b (in solve order p = 0, 1, …): takes the tiles of the blocks before it in solve
/// order one by one, each as soon as that block's values are published (tagged words in pub: one
/// word per lane, shared across the warp by shuffles in the forward solve), the tile's loads in
/// flight during the wait; then z = b_b − the sums, y_b = L_bb⁻¹·z, published by its 128 tagged
/// stores. Between one block's values and the next only that wait, the last tile's products, two
/// reductions and the GEMV with L_bb⁻¹ lie on the critical path: no flag with a fence.
template <bool kTranspose>
__global__ void __launch_bounds__(kTrsvThreads) trsv_kernel(const float* l, std::int64_t ldl, std::int64_t n,
                                                            const float* inv, float* x, unsigned* ticket,
                                                            unsigned long long* pub, unsigned epoch) {
  extern __shared__ __align__(16) unsigned char trsv_smem_raw[];
  float* inv_s = reinterpret_cast<float*>(trsv_smem_raw);  // (r, c) at c·kTrsvInvLd + r
  double* red = reinterpret_cast<double*>(inv_s + kTrsvB * kTrsvInvLd);  // kTrsvGroups × kTrsvB
  double* z = red + kTrsvGroups * kTrsvB;                                 // kTrsvB
  __shared__ int s_pos;
  const int t = threadIdx.x;
  const int nblk = static_cast<int>((n + kTrsvB - 1) / kTrsvB);
  if (t == 0) s_pos = static_cast<int>(atomicAdd(ticket, 1u));
  __syncthreads();
  const int pos = s_pos;                             // this block's place in the solve order
  const int b = kTranspose ? nblk - 1 - pos : pos;  // its block row
  const std::int64_t r0 = std::int64_t(b) * kTrsvB;
  const int rows = static_cast<int>(n - r0 < kTrsvB ? n - r0 : kTrsvB);
  const int r = t % kTrsvB, g = t / kTrsvB, lane = t % 32;
  // tile p' (p' < pos in solve order) is block j = p' (forward) or nblk − 1 − p' (transpose):
  // forward: row r0 + r of L against columns jB + g·C … of y_j; transpose: row jB + r of L against
  // columns r0 + g·C … (its transpose's row), times the single y_j(r)
  const auto block_of = [&](int pp) { return kTranspose ? nblk - 1 - pp : pp; };
  const auto load_tile = [&](int pp, float (&lv)[kTrsvCols]) {
    bool valid;
    const float* lp;
    if constexpr (!kTranspose) {
      valid = r < rows;
      lp = l + (r0 + (valid ? r : 0)) + (std::int64_t(pp) * kTrsvB + g * kTrsvCols) * ldl;
    } else {
      const std::int64_t row = std::int64_t(block_of(pp)) * kTrsvB + r;
      valid = row < n;
      lp = l + (valid ? row : 0) + (r0 + g * kTrsvCols) * ldl;
    }
#pragma unroll
    for (int c = 0; c < kTrsvCols; ++c)
      lv[c] = (valid && (!kTranspose || g * kTrsvCols + c < rows)) ? lp[c * ldl] : 0.0f;
  };
  // forward: four fp64 sums per thread (independent chains: the last tile's 32 products are on the
  // critical path); transpose: kTrsvCols fp32 partial sums (fp64 would spill)
  using Acc = std::conditional_t<kTranspose, float, double>;
  constexpr int kAcc = kTranspose ? kTrsvCols : 4;
  Acc acc[kAcc];
#pragma unroll
  for (int c = 0; c < kAcc; ++c) acc[c] = 0;
  const double rhs = (g == 0 && r < rows) ? static_cast<double>(x[r0 + r]) : 0.0;  // before any wait
  for (int e = t; e < kTrsvB * kTrsvB; e += kTrsvThreads) {  // the inverse, off the critical path
    const int rr = e % kTrsvB, cc = e / kTrsvB;
    inv_s[cc * kTrsvInvLd + rr] = inv[std::int64_t(b) * kTrsvB * kTrsvB + e];
  }
#pragma unroll 1
  for (int pp = 0; pp < pos; ++pp) {
    float cur[kTrsvCols];
    load_tile(pp, cur);  // in flight during the wait
    const unsigned sleep_ns = pos - pp > 2 ? kTrsvFarSleepNs : 0u;
    const std::int64_t base = std::int64_t(block_of(pp)) * kTrsvB;
    if constexpr (!kTranspose) {
      const std::int64_t row = base + g * kTrsvCols + lane;
      const float v = row < n ? read_tagged(pub + row, epoch, sleep_ns) : 0.0f;
#pragma unroll
      for (int c = 0; c < kTrsvCols; ++c) acc[c % 4] += static_cast<double>(cur[c]) * __shfl_sync(0xffffffffu, v, c);
    } else {
      const std::int64_t row = base + r;
      const float v = row < n ? read_tagged(pub + row, epoch, sleep_ns) : 0.0f;
#pragma unroll
      for (int c = 0; c < kTrsvCols; ++c) acc[c] = fmaf(cur[c], v, acc[c]);
    }
  }
  __syncthreads();  // inv_s complete
  // z = b_b − (the sums): forward, the 4 column groups of row r; transpose, the 128 rows of
  // column g·C + c (shuffles within each warp, then the 4 warps of the group)
  if constexpr (!kTranspose) {
    red[g * kTrsvB + r] = (acc[0] + acc[1]) + (acc[2] + acc[3]);
  } else {
    const int wr = r / 32;
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
  double y[4] = {};  // four independent chains, as above
#pragma unroll
  for (int c = 0; c < kTrsvCols; ++c) {
    const int cc = g * kTrsvCols + c;
    y[c % 4] += static_cast<double>(kTranspose ? inv_s[r * kTrsvInvLd + cc] : inv_s[cc * kTrsvInvLd + r]) * z[cc];
  }
  red[g * kTrsvB + r] = (y[0] + y[1]) + (y[2] + y[3]);  // red was last read before the barrier above
  __syncthreads();
  if (g == 0 && r < rows) {
    double s = 0.0;
#pragma unroll
    for (int q = 0; q < kTrsvGroups; ++q) s += red[q * kTrsvB + r];
    publish_tagged(pub + r0 + r, static_cast<float>(s), epoch);
    x[r0 + r] = static_cast<float>(s);
  }
}

}  // namespace gemflow::linalg::cuda::detail
