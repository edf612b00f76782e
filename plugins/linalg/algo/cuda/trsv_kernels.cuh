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
// Each tile row's 32 products are summed in fp32, everything else in fp64; the inverse is
// computed in fp64 and rounded to fp32. The block step's latency is the solve's: hence no
// fp32→fp64 conversion per product, the tiles next to the diagonal copied at the start, two far
// tiles at a time and the inverse in registers (docs/performance.md, "The mixed solve's
// triangular solves, measured and rebuilt").
// Sources: Liu, Li, Hou & Vinter, "A synchronization-free algorithm for parallel sparse triangular
// solves", Euro-Par 2016 (the synchronisation-free scheme, here for dense blocks and with the
// value itself as the flag); TRSV through
// inverted diagonal blocks as in MAGMA's trsv (Du Croz & Higham, IMA J. Numer. Anal. 12 (1992)).
#include <cuda_runtime.h>

#include <cstdint>

#include "sync.cuh"

namespace gemflow::linalg::cuda::detail {

/// Stamps per solve position of trsv_kernel's kTrace (linalg_bench_solve_kernels --trsv).
constexpr int kTrsvTraceSlots = 5;

constexpr int kTrsvB = 128;     ///< rows per block
constexpr int kTrsvGroups = 4;  ///< column groups of a block (threads = kTrsvB·groups)
constexpr int kTrsvThreads = kTrsvB * kTrsvGroups;
constexpr int kTrsvCols = kTrsvB / kTrsvGroups;  ///< columns of a tile per thread

constexpr int kTrsvAhead = 2;  ///< tiles next to the diagonal copied to shared memory at the start
/// Dynamic shared memory of trsv_kernel<transpose>: kTrsvAhead tiles of kTrsvCols floats per
/// thread, and for the transposed solve one more (each warp's staging of its coalesced loads).
constexpr std::size_t trsv_smem_bytes(bool transpose) {
  return sizeof(float) * (kTrsvAhead + (transpose ? 1 : 0)) * kTrsvCols * kTrsvThreads;
}
// the inverse kernel's 32×32 sub-blocks: the lower triangle of a 128-row block is 10 of them,
// each column-major with ld 33 (conflict-free by rows and by columns) in fp64
constexpr int kInvSub = 32;
constexpr int kInvNs = kTrsvB / kInvSub;
constexpr int kInvLd = kInvSub + 1;
constexpr int kInvBlocks = kInvNs * (kInvNs + 1) / 2;
constexpr int kInvBlockSize = kInvSub * kInvLd;
__device__ __forceinline__ int inv_sub(int bi, int bj) { return (bi * (bi + 1) / 2 + bj) * kInvBlockSize; }

/// Dynamic shared memory of trsv_invert_diag_kernel: the block's lower triangle and its inverse,
/// both as 10 fp64 sub-blocks.
constexpr std::size_t trsv_invert_smem_bytes() { return sizeof(double) * 2 * kInvBlocks * kInvBlockSize; }

/// inv (2·nblk blocks of kTrsvB² floats) = the inverses of the diagonal blocks of L (n×n, ld ldl),
/// column-major (ld kTrsvB), then the same inverses transposed (for the transposed solve's
/// coalesced loads); the last block is padded with the identity. One CTA of kTrsvB threads per
/// block, in fp64, rounded to fp32 at the store. Blocked by 32 (the 2×2 block inverse applied
/// twice: X_ij = −X_ii·Σ_{j ≤ k < i} L_ik·X_kj): warp w inverts the diagonal sub-block w by
/// substitution (lane = column, the column in registers, L broadcast from shared memory), then
/// the sub-diagonals one after the other, sub-block (w + d, w) by warp w. The first version (one
/// thread per column, forward substitution down all 128 rows) took 130 µs per block; with 32
/// loads in flight and the diagonal's reciprocals off the substitution chain a launch takes 35 µs
/// at n = 16k, 70 at 32k (H200; 41 and 86 before).
/// Does nothing when skip ≠ nullptr and *skip ≠ 0 (a speculative launch whose factor failed).
__global__ void __launch_bounds__(kTrsvB)
    trsv_invert_diag_kernel(const float* l, std::int64_t ldl, std::int64_t n, float* inv, const unsigned* skip) {
  if (skip && *skip) return;
  extern __shared__ double trsv_inv_smem[];
  double* ls = trsv_inv_smem;                               // L_bb's sub-blocks
  double* xs = trsv_inv_smem + kInvBlocks * kInvBlockSize;  // the inverse's
  const int t = threadIdx.x, w = t / 32, lane = t % 32;
  const std::int64_t r0 = std::int64_t(blockIdx.x) * kTrsvB;
  const int rows = static_cast<int>(n - r0 < kTrsvB ? n - r0 : kTrsvB);
  // L_bb by columns (thread t = row t: coalesced), 32 loads in flight; identity past `rows`
  for (int k0 = 0; k0 < kTrsvB; k0 += 32) {
    float v[32];
#pragma unroll
    for (int u = 0; u < 32; ++u) {
      const int k = k0 + u;
      v[u] = (k <= t && t < rows && k < rows) ? l[(r0 + t) + (r0 + k) * ldl] : (t == k ? 1.0f : 0.0f);
    }
#pragma unroll
    for (int u = 0; u < 32; ++u) {
      const int k = k0 + u;
      if (k / kInvSub <= w) ls[inv_sub(w, k / kInvSub) + (k % kInvSub) * kInvLd + lane] = k <= t ? v[u] : 0.0;
    }
  }
  __syncthreads();
  {  // X_ww = L_ww⁻¹: column `lane` by substitution, L(r, k) read by all lanes at once
    const double* d = ls + inv_sub(w, w);
    double x[kInvSub], rd[kInvSub];  // rd: the reciprocals of the diagonal, off the chain
#pragma unroll
    for (int r = 0; r < kInvSub; ++r) rd[r] = 1.0 / d[r * kInvLd + r];
#pragma unroll
    for (int r = 0; r < kInvSub; ++r) {
      double s0 = r == lane ? 1.0 : 0.0, s1 = 0.0;
#pragma unroll
      for (int k = 0; k < r; ++k) {
        if (k % 2 == 0) s0 -= d[k * kInvLd + r] * x[k];
        else s1 -= d[k * kInvLd + r] * x[k];
      }
      x[r] = (s0 + s1) * rd[r];
    }
    double* xo = xs + inv_sub(w, w) + lane * kInvLd;
#pragma unroll
    for (int r = 0; r < kInvSub; ++r) xo[r] = x[r];
  }
  __syncthreads();
  for (int dd = 1; dd < kInvNs; ++dd) {  // sub-diagonal dd: X_ij, i = j + dd, by warp j
    const int bj = w, bi = w + dd;
    if (bi < kInvNs) {
      double tc[kInvSub];  // column `lane` of Σ_k L_ik·X_kj
#pragma unroll
      for (int r = 0; r < kInvSub; ++r) tc[r] = 0.0;
      for (int bk = bj; bk < bi; ++bk) {
        const double* la = ls + inv_sub(bi, bk);
        const double* xb = xs + inv_sub(bk, bj) + lane * kInvLd;
#pragma unroll 2
        for (int k = 0; k < kInvSub; ++k) {
          const double b = xb[k];
#pragma unroll
          for (int r = 0; r < kInvSub; ++r) tc[r] += la[k * kInvLd + r] * b;
        }
      }
      const double* xd = xs + inv_sub(bi, bi);  // X_ii, lower triangular
      double* xo = xs + inv_sub(bi, bj) + lane * kInvLd;
#pragma unroll
      for (int r = 0; r < kInvSub; ++r) {
        double s0 = 0.0, s1 = 0.0;
#pragma unroll
        for (int k = 0; k <= r; ++k) {
          if (k % 2 == 0) s0 -= xd[k * kInvLd + r] * tc[k];
          else s1 -= xd[k * kInvLd + r] * tc[k];
        }
        xo[r] = s0 + s1;
      }
    }
    __syncthreads();
  }
  // out: column-major (thread t = row t, coalesced), then the transposed copy (thread t = column t)
  const std::int64_t nblk = (n + kTrsvB - 1) / kTrsvB;
  float* out = inv + std::int64_t(blockIdx.x) * kTrsvB * kTrsvB;
  float* out_t = inv + (nblk + blockIdx.x) * kTrsvB * kTrsvB;
  const auto x_at = [&](int r, int c) {
    return r >= c ? xs[inv_sub(r / kInvSub, c / kInvSub) + (c % kInvSub) * kInvLd + r % kInvSub] : 0.0;
  };
  for (int c = 0; c < kTrsvB; ++c) out[t + c * kTrsvB] = static_cast<float>(x_at(t, c));
  for (int r = 0; r < kTrsvB; ++r) out_t[t + r * kTrsvB] = static_cast<float>(x_at(r, t));
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
/// with its inverted diagonal blocks inv (trsv_invert_diag_kernel's 2·nblk blocks). Grid: nblk =
/// ⌈n / kTrsvB⌉ CTAs of kTrsvThreads, trsv_smem_bytes(transpose) of dynamic shared memory;
/// *ticket must be 0 at launch, and pub (n words) must hold no word tagged `epoch` (the forward and
/// the transposed solve of a pair take different epochs; zero pub before each pair).
///
/// CTA for block b (in solve order p = 0, 1, …): thread (i, g), i < kTrsvB, g < kTrsvGroups, owns
/// entry i of the block and the 32 indices g·32 … g·32 + 31 of every earlier block j in solve
/// order: forward, row i of L_bj against y_j's slice; transposed, column r0 + i of L at rows
/// jB + g·32 … (128 contiguous bytes) against x_j's slice.
/// - Tiles far from the diagonal: loaded into registers two at a time, both slices' words polled
///   together (a CTA that starts behind catches up at twice the rate). The transposed solve loads
///   them coalesced, 16 bytes at a time when ldl % 4 = 0, and hands each lane its column through
///   the warp's 4 KiB of shared memory.
/// - The kTrsvAhead tiles next to the diagonal (the ones the chain waits for): copied to shared
///   memory by cp.async at the start. When a block's values are published every later CTA loads
///   its tile against them at once, and the next CTA's tile used to wait its turn for bandwidth.
/// - Each warp polls its slice's 32 tagged words, shares them through its own 32 floats of shared
///   memory (no CTA barrier) and sums its 32 products in fp32 (four chains) into an fp64 sum.
/// - Then z = b_b − Σ (the 4 groups summed in fp64, each warp for its own slice) and
///   y_b = L_bb⁻¹·z, the inverse's 32 entries per thread loaded into registers once the far tiles
///   are done (the transposed solve from the transposed copy: coalesced): two CTA barriers
///   between one block's values and the next.
/// No fp32→fp64 conversion per product: they run at a quarter of the DFMA rate on sm_90 and were a
/// third of the first version's chain step.
/// skip ≠ nullptr and *skip ≠ 0: every CTA returns at once (a speculative solve not wanted).
/// kTrace (benchmarks only; `trace` unused otherwise): thread 0 writes the global timer (ns) into
/// trace[pos·kTrsvTraceSlots + slot] at solve position pos: when it has the last block's values (0),
/// after the sums' barrier (1), after the inverse's barrier (2), after its publish (3), and when it
/// starts waiting for the last block (4).
template <bool kTranspose, bool kTrace = false>
__global__ void __launch_bounds__(kTrsvThreads)
    trsv_kernel(const float* l, std::int64_t ldl, std::int64_t n, const float* inv, float* x, unsigned* ticket,
                unsigned long long* pub, unsigned epoch, const unsigned* skip, unsigned long long* trace) {
  if (skip && *skip) return;
  extern __shared__ __align__(16) float4 trsv_tiles[];          // [(slot·8 + q)·threads + t]
  __shared__ double red[2][kTrsvGroups * kTrsvB];               // the groups' sums, then the inverse's
  __shared__ __align__(16) float slice[kTrsvThreads / 32][64];  // per warp: y_j's slice(s), then z's
  __shared__ float rhs_s[kTrsvThreads / 32][32];                // per warp: b's slice
  __shared__ int s_pos;
  const int t = threadIdx.x;
  const int nblk = static_cast<int>((n + kTrsvB - 1) / kTrsvB);
  if (t == 0) s_pos = static_cast<int>(atomicAdd(ticket, 1u));
  __syncthreads();
  const int pos = s_pos;  // this block's place in the solve order
  const auto stamp = [&]([[maybe_unused]] int slot) {
    if constexpr (kTrace) {
      unsigned long long now;
      asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(now));
      trace[pos * kTrsvTraceSlots + slot] = now;
    }
  };
  const int b = kTranspose ? nblk - 1 - pos : pos;  // its block row
  const std::int64_t r0 = std::int64_t(b) * kTrsvB;
  const int rows = static_cast<int>(n - r0 < kTrsvB ? n - r0 : kTrsvB);
  const int i = t % kTrsvB, g = t / kTrsvB, lane = t % 32;
  float* ws = slice[t / 32];
  const bool mine = i < rows;
  // vector loads along a column of L need 16-byte alignment of every column start
  const bool vec = (ldl % 4 == 0) && (reinterpret_cast<std::uintptr_t>(l) % 16 == 0);
  const auto block_of = [&](int pp) { return kTranspose ? nblk - 1 - pp : pp; };
  // this thread's 32 values of tile pp (solve order) into shared-memory slot `slot` by cp.async:
  // forward L(r0 + i, c0 + k), coalesced over i (c0 + 31 < r0 ≤ n); transposed L(c0 + k, r0 + i),
  // 32 contiguous floats of column r0 + i (rows ≥ n zero-filled)
  const auto copy_tile = [&](int pp, int slot) {
    const std::int64_t c0 = std::int64_t(block_of(pp)) * kTrsvB + g * kTrsvCols;
    float4* dst = trsv_tiles + slot * (kTrsvCols / 4) * kTrsvThreads + t;
    if constexpr (!kTranspose) {
      const float* lp = l + (r0 + (mine ? i : 0)) + c0 * ldl;
#pragma unroll
      for (int k = 0; k < kTrsvCols; ++k)
        cp_async4(reinterpret_cast<float*>(dst + (k / 4) * kTrsvThreads) + k % 4, lp + k * ldl, mine ? 4 : 0);
    } else {
      const float* lp = l + c0 + (r0 + (mine ? i : 0)) * ldl;
      if (vec && c0 + kTrsvCols <= n) {
#pragma unroll
        for (int q = 0; q < kTrsvCols / 4; ++q) cp_async16(dst + q * kTrsvThreads, lp + 4 * q, mine ? 16 : 0);
      } else {
#pragma unroll
        for (int k = 0; k < kTrsvCols; ++k)
          cp_async4(reinterpret_cast<float*>(dst + (k / 4) * kTrsvThreads) + k % 4, mine && c0 + k < n ? lp + k : lp,
                    mine && c0 + k < n ? 4 : 0);
      }
    }
  };
  const auto read_slot = [&](int slot, float(&lv)[kTrsvCols]) {  // each thread reads only what it copied
    const float4* src = trsv_tiles + slot * (kTrsvCols / 4) * kTrsvThreads + t;
#pragma unroll
    for (int q = 0; q < kTrsvCols / 4; ++q) {
      const float4 v = src[q * kTrsvThreads];
      lv[4 * q] = v.x;
      lv[4 * q + 1] = v.y;
      lv[4 * q + 2] = v.z;
      lv[4 * q + 3] = v.w;
    }
  };
  const auto load_tile = [&](int pp, float(&lv)[kTrsvCols]) {  // the same values, into registers
    const std::int64_t c0 = std::int64_t(block_of(pp)) * kTrsvB + g * kTrsvCols;
    if constexpr (!kTranspose) {
      const float* lp = l + (r0 + (mine ? i : 0)) + c0 * ldl;
#pragma unroll
      for (int k = 0; k < kTrsvCols; ++k) lv[k] = mine ? lp[k * ldl] : 0.0f;
    } else if (vec && c0 + kTrsvCols <= n) {
      // coalesced: load q brings the 128 bytes of 4 of the warp's 32 columns (column q·4 + lane/8,
      // rows 4·(lane % 8) …); restage() hands each lane its own column
      const int cl = (t / 32 % (kTrsvB / 32)) * 32 + lane / 8;  // the warp's first columns
#pragma unroll
      for (int q = 0; q < kTrsvCols / 4; ++q) {
        const int col = cl + 4 * q;
        const float4 v =
            col < rows ? reinterpret_cast<const float4*>(l + c0 + (r0 + col) * ldl)[lane % 8] : make_float4(0, 0, 0, 0);
        lv[4 * q] = v.x;
        lv[4 * q + 1] = v.y;
        lv[4 * q + 2] = v.z;
        lv[4 * q + 3] = v.w;
      }
    } else {
      const float* lp = l + c0 + (r0 + (mine ? i : 0)) * ldl;
#pragma unroll
      for (int k = 0; k < kTrsvCols; ++k) lv[k] = (mine && c0 + k < n) ? lp[k] : 0.0f;
    }
  };
  // the transposed solve's coalesced tile (load_tile, 16-byte path) to each lane's own column,
  // through the warp's 4 KiB of shared memory (16-byte units XOR-swizzled: conflict-free both ways)
  const auto restage = [&](int pp, float(&lv)[kTrsvCols]) {
    if constexpr (kTranspose) {
      const std::int64_t c0 = std::int64_t(block_of(pp)) * kTrsvB + g * kTrsvCols;
      if (!(vec && c0 + kTrsvCols <= n)) return;
      float4* st = trsv_tiles + kTrsvAhead * (kTrsvCols / 4) * kTrsvThreads + (t / 32) * (kTrsvCols * 32 / 4);
      const int f = lane % 8;
#pragma unroll
      for (int q = 0; q < kTrsvCols / 4; ++q) {
        const int col = lane / 8 + 4 * q;  // within the warp's 32
        st[col * 8 + (f ^ (col % 8))] = make_float4(lv[4 * q], lv[4 * q + 1], lv[4 * q + 2], lv[4 * q + 3]);
      }
      __syncwarp();
#pragma unroll
      for (int q = 0; q < kTrsvCols / 4; ++q) {
        const float4 v = st[lane * 8 + (q ^ (lane % 8))];
        lv[4 * q] = v.x;
        lv[4 * q + 1] = v.y;
        lv[4 * q + 2] = v.z;
        lv[4 * q + 3] = v.w;
      }
      __syncwarp();
    }
  };
  // 32 products of a thread's tile values with a 32-float slice (broadcast) in four fp32 chains
  const auto dot32 = [&](const float(&lv)[kTrsvCols], const float* ys) {
    float s[4] = {0.0f, 0.0f, 0.0f, 0.0f};
#pragma unroll
    for (int q = 0; q < kTrsvCols / 4; ++q) {
      const float4 y = reinterpret_cast<const float4*>(ys)[q];
      s[0] = fmaf(lv[4 * q], y.x, s[0]);
      s[1] = fmaf(lv[4 * q + 1], y.y, s[1]);
      s[2] = fmaf(lv[4 * q + 2], y.z, s[2]);
      s[3] = fmaf(lv[4 * q + 3], y.w, s[3]);
    }
    return (s[0] + s[1]) + (s[2] + s[3]);
  };
  // the kTrsvAhead tiles next to the diagonal (the chain waits for them), copied at the start
  const int near = pos < kTrsvAhead ? pos : kTrsvAhead;
  for (int sl = 0; sl < near; ++sl) copy_tile(pos - 1 - sl, sl);
  const int zi = g * kTrsvCols + lane;  // this lane's entry of z's slice
  // b's slice too, in the same group: a plain load was issued only where it is used, after the
  // last wait (at 128 registers), an L2 round trip on the chain
  cp_async4(&rhs_s[t / 32][lane], x + r0 + (zi < rows ? zi : 0), zi < rows ? 4 : 0);
  cp_async_commit();
  double acc = 0.0;
  // tile pp's products, its values in cur: wait for the block's values (the warp's slice), sum
  const auto take = [&](int pp, const float(&cur)[kTrsvCols]) {
    const unsigned sleep_ns = pos - pp > 2 ? kTrsvFarSleepNs : 0u;
    const std::int64_t w = std::int64_t(block_of(pp)) * kTrsvB + zi;
    ws[lane] = w < n ? read_tagged(pub + w, epoch, sleep_ns) : 0.0f;
    __syncwarp();
    acc += static_cast<double>(dot32(cur, ws));
    __syncwarp();  // the slice is read before the next tile's values overwrite it
  };
  const int far = pos - near;  // tiles loaded into registers as the CTA gets to them
  int pp = 0;
#pragma unroll 1
  for (; pp + 1 < far; pp += 2) {  // two at a time: twice the loads in flight for a CTA catching up
    float c0[kTrsvCols], c1[kTrsvCols];
    load_tile(pp, c0);
    load_tile(pp + 1, c1);
    const std::int64_t w0 = std::int64_t(block_of(pp)) * kTrsvB + zi;
    const std::int64_t w1 = std::int64_t(block_of(pp + 1)) * kTrsvB + zi;
    unsigned long long a0 = static_cast<unsigned long long>(epoch) << 32, a1 = a0;  // beyond n: 0.0f
    for (;;) {                                                                      // both words in flight at once
      if (w0 < n) asm volatile("ld.relaxed.gpu.global.b64 %0, [%1];" : "=l"(a0) : "l"(pub + w0) : "memory");
      if (w1 < n) asm volatile("ld.relaxed.gpu.global.b64 %0, [%1];" : "=l"(a1) : "l"(pub + w1) : "memory");
      if (static_cast<unsigned>(a0 >> 32) == epoch && static_cast<unsigned>(a1 >> 32) == epoch) break;
      __nanosleep(kTrsvFarSleepNs);  // far from its turn: pos − pp > 3
    }
    restage(pp, c0);
    restage(pp + 1, c1);
    ws[lane] = __uint_as_float(static_cast<unsigned>(a0));
    ws[32 + lane] = __uint_as_float(static_cast<unsigned>(a1));
    __syncwarp();
    acc += static_cast<double>(dot32(c0, ws));
    acc += static_cast<double>(dot32(c1, ws + 32));
    __syncwarp();
  }
#pragma unroll 1
  for (; pp < far; ++pp) {
    float cur[kTrsvCols];
    load_tile(pp, cur);  // in flight during the wait
    restage(pp, cur);
    take(pp, cur);
  }
  // the inverse's entries of this thread, loaded now that the far tiles' registers are free, in
  // flight during the last waits, coalesced over i: forward inv(i, g·32 + k), transposed
  // inv(g·32 + k, i) from the transposed copy
  float iv[kTrsvCols];
  {
    const float* ip = inv + (std::int64_t(kTranspose ? nblk : 0) + b) * kTrsvB * kTrsvB;
#pragma unroll
    for (int k = 0; k < kTrsvCols; ++k) iv[k] = ip[i + (g * kTrsvCols + k) * kTrsvB];
  }
  cp_async_wait<0>();
#pragma unroll 1
  for (; pp < pos; ++pp) {  // the tiles next to the diagonal, from shared memory
    float cur[kTrsvCols];
    read_slot(pos - 1 - pp, cur);
    if (t == 0 && pp == pos - 1) stamp(4);
    take(pp, cur);
  }
  if (t == 0) stamp(0);
  red[0][g * kTrsvB + i] = acc;
  __syncthreads();
  if (t == 0) stamp(1);
  // z's slice, by each warp for itself: b − the four groups' sums
  double z = rhs_s[t / 32][lane];
#pragma unroll
  for (int q = 0; q < kTrsvGroups; ++q) z -= red[0][q * kTrsvB + zi];
  ws[lane] = zi < rows ? static_cast<float>(z) : 0.0f;
  __syncwarp();
  red[1][g * kTrsvB + i] = static_cast<double>(dot32(iv, ws));  // group g's part of (L_bb⁻¹ z)(i)
  __syncthreads();
  if (t == 0) stamp(2);
  if (g == 0 && mine) {
    double y = 0.0;
#pragma unroll
    for (int q = 0; q < kTrsvGroups; ++q) y += red[1][q * kTrsvB + i];
    publish_tagged(pub + r0 + i, static_cast<float>(y), epoch);
    x[r0 + i] = static_cast<float>(y);
    if (t == 0) stamp(3);
  }
}

}  // namespace gemflow::linalg::cuda::detail
