#pragma once
// Panel factorisation on the fp64 tensor cores: one launch factors a kb×kb diagonal block
// (kb ≤ 128) and solves the m rows of the panel below it (L21 = A21·L11⁻ᵀ). The lookahead
// algorithm's critical path is a chain of these (cholesky.cu, Factor::panel_tiles); cuSOLVER potrf
// spends about 0.42 µs per column on this chain on an H200 (potrf(128) 52 µs, a 128-wide TRSM
// ≥ 37 µs), which bounds every blocked algorithm built on it (docs/performance.md).
//
// Algorithm (every CTA, 16 warps): the diagonal block in shared memory as 8×8 tiles, warp i
// owning tile row i. Right-looking over tile columns with one barrier each: in phase k every warp
// i > k applies column k − 1 to its tiles (m8n8k4 DMMA), solves L_ik = A_ik·L_kk⁻ᵀ (two DMMAs
// with the inverted diagonal tile), applies column k to its own diagonal tile, and warp k + 1,
// whose diagonal tile is then complete, factors it in registers (scalar dpotf2, every lane
// redundantly) and inverts it (forward substitution, one column per lane). Shared memory then
// holds L with the inverted diagonal tiles, which is all a triangular solve needs: every CTA
// factored the block itself (so none waits for another), the last one to have read it writes it
// back, and each solves 128-row strips of the panel, left-looking per 8-row strip,
// X_k = (B_k − Σ_{m<k} X_m·L_kmᵀ)·L_kk⁻ᵀ, the strip in registers. Arithmetic in fp64 for fp32 and
// fp64 data (fp32 is read, factored in fp64 and rounded once), except the 8×8 tiles' pivots and
// inverses in the one-product modes (1×FP16, 1×TF32: fp32, factor_invert_tile_fp32). The caller's
// sub-panel update GEMM has already been applied in place. TRSM through inverted diagonal
// blocks: Du Croz & Higham, "Stability of methods for matrix inversion", IMA J. Numer. Anal. 12
// (1992); as in MAGMA's trsm with inverted diagonal blocks (Haidar et al., 2015).
//
// fp32 data: each CTA prefetches its strip into L2 while it factors the block; every CTA prefetches
// the next sub-panel's columns of its strips for that sub-panel's update GEMM. The FP16 modes'
// fp16 copies of the solved rows are written here too (HalfCopy).
//
// Cost on an H200 (docs/performance.md): about 35 µs for a 128 block, 46 µs with any panel up
// to 16k rows, 60 µs at 32k (cuSOLVER potrf(128) + cuBLAS TRSM: 50–258 µs); the critical path is
// the chain of 16 tile factors (≈ 1.1k cycles each on the fast pivot path, 1.6k on the safe one),
// the per-phase update/solve/barrier (≈ 1k cycles) and the load of the block (≈ 6k cycles,
// global memory). The stages' times in the 1×FP16 lookahead (`--panel-trace`) are in
// docs/performance.md ("Panel kernel stages").
//
// A NaN/Inf in the input can reach the earlier columns of its 8-column tile (0·Inf in the DMMA
// with the inverted tile's zeros); the caller reports it as non-finite (CholeskyStatus).
//
// Pivot failure at column j of the block (p ≤ 0, NaN or +Inf): info = offset + j + 1 through
// st->info (first failure wins); columns < j of the block and their panel rows are still
// complete (LAPACK's contract), the rest is undefined.
//
// Non-finite values: every value this kernel stores into L is tested (the first such column goes
// into st->stored_nonfinite_col: flag_nonfinite), and so is a failing pivot (report_failure). This
// replaces a scan of A and of L around the factorisation (two passes over the lower triangle).
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <cstdint>
#include <type_traits>

#include "context.cuh"
#include "potrf_kernels.cuh"

namespace gemflow::linalg::cuda::detail {

constexpr int kPanelNb = 128;  ///< largest diagonal block of one launch
constexpr int kPanelTiles = kPanelNb / 8;
constexpr int kPanelWarps = 16;  ///< one tile row (8 rows) per warp
constexpr int kPanelThreads = 32 * kPanelWarps;
constexpr int kPanelStrip = 8 * kPanelWarps;  ///< panel rows per CTA pass
constexpr int kPanelLd = kPanelNb + 4;        ///< shared row stride in doubles (conflict-free fragments)

constexpr std::size_t panel_smem_bytes() {
  return sizeof(double) * (static_cast<std::size_t>(kPanelNb) * kPanelLd + kPanelTiles * 64) + 16;
}

/// fp16(x) rounded to nearest, saturated to ±65504 (NaN stays NaN): an overflowing entry of a
/// non-SPD input must not turn into Inf and then NaN in rows that do not fail.
__device__ __forceinline__ __half fp16_sat(float x) {
  return __float2half_rn(fabsf(x) > 65504.0f ? copysignf(65504.0f, x) : x);
}

/// FP16 modes (fp32 data): the panel kernel also writes each finished entry x of the rows below
/// the diagonal block into the panel's fp16 copies, which the later updates' products read (the
/// diagonal block itself is not copied: no product reads it). h (ld ldh, at the sub-panel's
/// diagonal element): hi = fp16(x). pq (3×FP16, else nullptr; at the sub-panel's first row and
/// column 2·c₀ of P, c₀ its first column in the panel): lo' = fp16((x − hi)·2¹¹) into
/// P = [hi_0 | lo'_0 | hi_1 | lo'_1 …] and Q = [lo'_0 | hi_0 | …] (Q at pq + q_off, blocks of jb
/// columns), so that one K = 2k product P·Qᵀ sums both corrections (Ootomo & Yokota's FP16 split).
struct HalfCopy {
  __half* h = nullptr;  ///< nullptr: no copy
  __half* pq = nullptr;
  std::int64_t q_off = 0, ldh = 0;
  int jb = 0;
};

/// Entry (i, j) of the sub-panel, x as stored in fp32, into the copies of c.
__device__ __forceinline__ void store_half(const HalfCopy& c, std::int64_t i, int j, float x) {
  const __half hi = fp16_sat(x);
  c.h[i + j * c.ldh] = hi;
  if (c.pq) {
    const __half lo = fp16_sat((x - __half2float(hi)) * 2048.0f);
    __half* p = c.pq + i;
    p[j * c.ldh] = hi;
    p[(c.jb + j) * c.ldh] = lo;
    p[c.q_off + j * c.ldh] = lo;
    p[c.q_off + (c.jb + j) * c.ldh] = hi;
  }
}

/// Strip sidx of a panel (rows kb + 128·sidx …, `cols` columns of a) into L2: one
/// prefetch per 128-byte line, spread over the CTA's threads. The strip's loads come after the
/// block's factor, so they then hit L2 instead of waiting on memory (H200, 1×FP16 at n = 16384:
/// the strip phase 26.4 → 23.5 µs; for fp64 strips it gained nothing and spilled more, so fp32
/// only). Every precision prefetches the next sub-panel's columns after its strips, for that
/// sub-panel's in-place update GEMM.
template <class T>
__device__ __forceinline__ void prefetch_strip_l2(const T* a, std::int64_t lda, int kb, int cols, std::int64_t m,
                                                  std::int64_t sidx, int tid) {
  constexpr int kPerLine = 128 / sizeof(T);
  constexpr int kLines = (kPanelStrip + kPerLine - 1) / kPerLine;  // lines per column of the strip
  const std::int64_t r0 = kb + sidx * kPanelStrip;
  const std::int64_t r1 = kb + (m < (sidx + 1) * kPanelStrip ? m : (sidx + 1) * kPanelStrip);
  for (int e = tid; e < cols * kLines; e += kPanelThreads) {
    const int c = e / kLines, l = e % kLines;
    const std::int64_t row = r0 + std::int64_t(l) * kPerLine;
    if (row >= r1) continue;
    const T* p = a + row + c * lda;
    asm volatile("prefetch.global.L2 [%0];" ::"l"(p));
  }
}

/// Element e (0 … 128² − 1) of the diagonal block handled by thread e % kPanelThreads in round
/// e / kPanelThreads: each warp instruction covers an 8×4 block (lane l: row 8·bi + l % 8, column
/// 4·bj + l / 8), i.e. four 64-byte column pieces in global memory and no shared-memory bank
/// conflict beyond the two wavefronts of a 64-bit access (32 rows of one column: 8-way).
__device__ __forceinline__ void panel_element(int e, int& i, int& j) {
  const int b = e >> 5, l = e & 31;
  i = 8 * (b & (kPanelTiles - 1)) + (l & 7);
  j = 4 * (b / kPanelTiles) + (l >> 3);
}

/// The accumulator tile acc (lane 4r + q: (r, 2q), (r, 2q + 1)) as the A operand of two
/// m8n8k4 steps: a0 = acc(r, q), a1 = acc(r, 4 + q).
__device__ __forceinline__ void acc_to_operand(const double2 acc, int r, int q, double& a0, double& a1) {
  const int s0 = 4 * r + (q >> 1), s1 = s0 + 2;
  const double x0 = __shfl_sync(0xffffffffu, acc.x, s0), y0 = __shfl_sync(0xffffffffu, acc.y, s0);
  const double x1 = __shfl_sync(0xffffffffu, acc.x, s1), y1 = __shfl_sync(0xffffffffu, acc.y, s1);
  a0 = (q & 1) ? y0 : x0;
  a1 = (q & 1) ? y1 : x1;
}

/// Added to a failing pivot's 1-based index (factor_invert_tile, factor_block_phases) when that
/// pivot is NaN or ±Inf rather than a finite p ≤ 0; fail_column() takes it off again.
constexpr int kFailNonFinite = 1 << 20;
__device__ __forceinline__ int fail_column(int fail) { return fail & (kFailNonFinite - 1); }

/// Records that a NaN/Inf was stored into column `col` (0-based, of the whole matrix): the first
/// column wins.
__device__ __forceinline__ void flag_nonfinite(DeviceStatus* st, std::int64_t col) {
  atomicMin(&st->stored_nonfinite_col, static_cast<long long>(col + 1));
}

/// The rare path of the kernels' store tests: the first non-finite value among the n values at
/// p, p + stride, …, which are the columns col0, col0 + 1, … of the matrix, into flag_nonfinite.
/// Out of line, so that the tests in the solves hold one predicate and no more registers.
template <class T>
__device__ __noinline__ void flag_first_nonfinite(DeviceStatus* st, const T* p, std::int64_t stride, int n,
                                                  std::int64_t col0) {
  for (int c = 0; c < n; ++c)
    if (!isfinite(p[c * stride])) {
      flag_nonfinite(st, col0 + c);
      return;
    }
}

/// What a failing pivot (factor_block_phases' return value, 0 = none) means for the status: info
/// = offset + its column (the first failure wins) and, when that pivot was NaN/Inf,
/// failed_nonfinite. One thread calls it.
__device__ __forceinline__ void report_failure(DeviceStatus* st, std::int64_t offset, int fail) {
  if (!fail || st->info != 0) return;
  const unsigned long long col = static_cast<unsigned long long>(offset + fail_column(fail));  // 1-based
  if (atomicCAS(reinterpret_cast<unsigned long long*>(&st->info), 0ull, col) == 0ull && (fail & kFailNonFinite))
    st->failed_nonfinite = 1;
}

/// 1/√d for a positive finite d (pivots that fail are replaced by 1 before; subnormal d too), within about an ulp:
/// the hardware approximation refined by one third-order Newton step. With CUDA's rsqrt the tile
/// factor took 2044 cycles, with this and branch-free pivot tests 1700 (H200, one warp, microbenchmark).
__device__ __forceinline__ double rsqrt_refined(double d) {
  // the approximation flushes subnormal operands: scale those by 2^128 first (exact), and y by 2^64
  const bool tiny = d < 2.2250738585072014e-308;
  double y;
  asm("rsqrt.approx.ftz.f64 %0, %1;" : "=d"(y) : "d"(tiny ? d * 0x1p128 : d));
  y = tiny ? y * 0x1p64 : y;
  const double r = fma(-d * y, y, 1.0);  // 1 − d·y²
  return fma(y * r, fma(0.375, r, 0.5), y);
}

/// fma in the precision of S (double or float).
template <class S>
__device__ __forceinline__ S fma_in(S a, S b, S c) {
  if constexpr (std::is_same_v<S, float>) return fmaf(a, b, c);
  else return fma(a, b, c);
}

/// Step j of an 8×8 tile's factor in registers (scalar dpotf2; S = double or float): column j
/// below the diagonal scaled by s_j = 1 / L(j, j), then the trailing lower triangle −= that column
/// times its transpose. j must be a constant after unrolling.
template <class S>
__device__ __forceinline__ void tile_eliminate(S (&t)[8][8], int j, S sj) {
#pragma unroll
  for (int i = j + 1; i < 8; ++i) t[i][j] *= sj;
#pragma unroll
  for (int c = j + 1; c < 8; ++c)
#pragma unroll
    for (int i = c; i < 8; ++i) t[i][c] = fma_in(-t[i][j], t[c][j], t[i][c]);
}

/// Column c = lane of L⁻¹ for the factored tile t (s_i = 1 / L(i, i)) by forward substitution:
/// v_i = −s_i Σ_{c ≤ m < i} L(i, m) v_m, v_c = s_c; zero above the diagonal (and for lanes ≥ 8).
template <class S>
__device__ __forceinline__ void tile_inverse_column(const S (&t)[8][8], const S (&s)[8], int lane, S (&v)[8]) {
  S acc[8];
#pragma unroll
  for (int i = 0; i < 8; ++i) acc[i] = i == lane ? S(-1) : S(0);
#pragma unroll
  for (int i = 0; i < 8; ++i) {
    v[i] = -acc[i] * s[i];
#pragma unroll
    for (int r = i + 1; r < 8; ++r) acc[r] = fma_in(t[r][i], v[i], acc[r]);
  }
}

/// Factors the 8×8 diagonal tile held (lower part) in shared memory at t0 (row stride Ld):
/// every lane runs the pivots in registers (scalar dpotf2: the chain of eight rsqrt is the
/// critical path), lane 0 writes L_kk to ldiag (8×8 row-major, zero above: set by the caller)
/// with the pivots p_j on its diagonal (L(j, j) = √p_j, correctly rounded as dpotf2's, is taken
/// by the write-back, off the chain), lanes 0–7 column `lane` of L_kk⁻¹ over t0 (forward
/// substitution, zeros above the diagonal).
/// Returns 0 or the 1-based failing pivot within the tile (+ kFailNonFinite when it is NaN/±Inf);
/// from a failure on, pivots are taken as 1 so that the values stay finite (the undefined region).
///
/// kFastPath: the pivot chain carries no test (1/√d: the approximation and one Newton step, 50
/// cycles on an H200 against 84 with the tests and the subnormal rescue); a tile with any pivot
/// that is not a normal positive finite number (≤ 0, NaN, +Inf, subnormal) is factored again on
/// the safe path (kFastPath = false). One tile: 1.08k against 1.59k cycles
/// (linalg_bench_tile_factor, docs/performance.md).
template <int Ld, bool kFastPath>
__device__ __forceinline__ int factor_invert_tile(double* t0, double* ldiag, int lane);

/// The safe path out of line (a call on the rare path keeps the fast path's registers free).
template <int Ld>
__device__ __noinline__ int factor_invert_tile_safe(double* t0, double* ldiag, int lane) {
  return factor_invert_tile<Ld, false>(t0, ldiag, lane);
}

template <int Ld = kPanelLd, bool kFastPath = true>
__device__ __forceinline__ int factor_invert_tile(double* t0, double* ldiag, int lane) {
  double t[8][8];
#pragma unroll
  for (int i = 0; i < 8; ++i)
#pragma unroll
    for (int j = 0; j <= i; ++j) t[i][j] = t0[i * Ld + j];
  int fail = 0;
  double s[8];  // s[j] = 1 / L(j, j)
  bool exceptional = false;
#pragma unroll
  for (int j = 0; j < 8; ++j) {
    double d = t[j][j];
    if constexpr (kFastPath) {
      exceptional |= !(d >= 2.2250738585072014e-308 && d <= 1.7976931348623157e308);
      double y;
      asm("rsqrt.approx.ftz.f64 %0, %1;" : "=d"(y) : "d"(d));
      const double r = fma(-d * y, y, 1.0);
      s[j] = fma(y * r, fma(0.375, r, 0.5), y);
    } else {
      fail = (fail == 0) & bad_pivot(d) ? j + 1 + (isfinite(d) ? 0 : kFailNonFinite) : fail;
      d = fail ? 1.0 : d;
      t[j][j] = d;
      s[j] = rsqrt_refined(d);
    }
    tile_eliminate(t, j, s[j]);
  }
  if constexpr (kFastPath) {
    if (exceptional) return factor_invert_tile_safe<Ld>(t0, ldiag, lane);  // uniform: every lane has the same values
  }
  double v[8];  // column lane of the inverse
  tile_inverse_column(t, s, lane, v);
  __syncwarp();
  if (lane == 0) {
#pragma unroll
    for (int i = 0; i < 8; ++i)
#pragma unroll
      for (int j = 0; j <= i; ++j) ldiag[i * 8 + j] = t[i][j];
  }
  if (lane < 8) {
#pragma unroll
    for (int i = 0; i < 8; ++i) t0[i * Ld + lane] = v[i];
  }
  return fail;
}

/// factor_invert_tile with the pivots and the inverse in fp32 arithmetic (same inputs, outputs and
/// layout, results rounded back to fp64), for the modes whose products round to 11 bits anyway
/// (1×FP16, 1×TF32): FFMA and the fp32 rsqrt approximation halve the pivot chain's latency (H200:
/// docs/performance.md, "Fp32 tiles and in-place sub-panel updates"). 1/√d is rsqrt.approx.f32 (relative error below
/// 2⁻²²); L and L⁻¹ then agree with fp64's to a few fp32 ulps, far below the 2⁻¹¹ of those products. Any pivot outside
/// [2⁻¹⁰⁰, 2¹⁰⁰] (not positive, NaN, Inf, or far from fp32's comfortable range) or any non-finite inverse entry sends
/// the whole tile to the fp64 safe path, so failures, their pivot index and the undefined region are the fp64 path's
/// exactly.
template <int Ld>
__device__ __forceinline__ int factor_invert_tile_fp32(double* t0, double* ldiag, int lane) {
  // fp64↔fp32 conversions run at a quarter of the FMA rate: each lane converts one pair of the
  // tile (row lane / 4, columns 2·(lane % 4) + 0, 1), and the values travel by 32-bit shuffles
  const int pr = lane >> 2, pc = 2 * (lane & 3);
  const double2 mine = *reinterpret_cast<const double2*>(t0 + pr * Ld + pc);
  const float mx = static_cast<float>(mine.x), my = static_cast<float>(mine.y);
  float t[8][8];
#pragma unroll
  for (int i = 0; i < 8; ++i)
#pragma unroll
    for (int j = 0; j <= i; ++j) t[i][j] = __shfl_sync(0xffffffffu, (j & 1) ? my : mx, 4 * i + (j >> 1));
  float s[8];  // s[j] = 1 / L(j, j)
  bool exceptional = false;
#pragma unroll
  for (int j = 0; j < 8; ++j) {
    const float d = t[j][j];
    exceptional |= !(d >= 0x1p-100f && d <= 0x1p100f);
    asm("rsqrt.approx.ftz.f32 %0, %1;" : "=f"(s[j]) : "f"(d));
    tile_eliminate(t, j, s[j]);
  }
  float v[8];  // column lane of the inverse
  tile_inverse_column(t, s, lane, v);
  bool finite = true;
#pragma unroll
  for (int i = 0; i < 8; ++i) finite &= fabsf(v[i]) <= 3.4028234e38f;
  // uniform: the pivots are every lane's; a column of the inverse is one lane's
  if (__any_sync(0xffffffffu, exceptional || !finite)) return factor_invert_tile_safe<Ld>(t0, ldiag, lane);
  // back to fp64 through ldiag's 512 bytes as scratch: L row-major (zero above) in the first
  // half, the inverse column-major in the second; then each lane converts its pair
  float* sl = reinterpret_cast<float*>(ldiag);
  float* sv = sl + 64;
  if (lane == 0) {
#pragma unroll
    for (int i = 0; i < 8; ++i)
#pragma unroll
      for (int j = 0; j < 8; j += 4)
        *reinterpret_cast<float4*>(sl + 8 * i + j) = make_float4(
            t[i][j], j + 1 <= i ? t[i][j + 1] : 0.0f, j + 2 <= i ? t[i][j + 2] : 0.0f, j + 3 <= i ? t[i][j + 3] : 0.0f);
  }
  if (lane < 8) {
    *reinterpret_cast<float4*>(sv + 8 * lane) = make_float4(v[0], v[1], v[2], v[3]);
    *reinterpret_cast<float4*>(sv + 8 * lane + 4) = make_float4(v[4], v[5], v[6], v[7]);
  }
  __syncwarp();
  const float2 lp = *reinterpret_cast<const float2*>(sl + 8 * pr + pc);
  const float v0 = sv[8 * pc + pr], v1 = sv[8 * (pc + 1) + pr];
  __syncwarp();
  *reinterpret_cast<double2*>(ldiag + 8 * pr + pc) = make_double2(lp.x, lp.y);
  *reinterpret_cast<double2*>(t0 + pr * Ld + pc) = make_double2(v0, v1);
  return 0;
}

/// Elements (i, j) and (i, j + 1) of a factored block at p for the write-back: a diagonal element
/// holds the pivot p_j (factor_invert_tile), stored as L(j, j) = √p_j, correctly rounded.
__device__ __forceinline__ double2 diagonal_root(const double* p, int i, int j) {
  double2 x = *reinterpret_cast<const double2*>(p);
  if (i == j) x.x = sqrt(x.x);
  if (i == j + 1) x.y = sqrt(x.y);
  return x;
}

/// Factors the 8·nt × 8·nt block held (lower part) in shared memory at ls (row stride Ld) in place,
/// warp w owning tile row w (warps ≥ nt idle). Right-looking over tile columns with one barrier
/// each: in phase k every warp w > k applies column k − 1 to its tiles (m8n8k4 DMMA), solves
/// L_wk = A_wk·L_kk⁻ᵀ with the inverted diagonal tile, applies column k to its own diagonal tile,
/// and warp k + 1, whose diagonal tile is then complete, factors it in registers and inverts it
/// (factor_invert_tile). Afterwards ls holds L with the inverted 8×8 diagonal tiles (what a
/// triangular solve needs) and ldiag the diagonal tiles of L with the pivots on their diagonal
/// (the write-back stores √, diagonal_root). Preconditions (after a barrier):
/// ldiag zero, s_fail[0] = s_fail[1] = 0. Returns 0 or the failing pivot (1-based within the
/// block, + kFailNonFinite when it is NaN/±Inf: report_failure); nt_done = the tile columns that
/// are usable (all, or up to the failing one, whose columns before the failure are complete). Every thread of the CTA
/// must call it. kFp32Tiles: the 8×8 tiles by factor_invert_tile_fp32 (the 11-bit product modes).
template <int Ld, bool kFastPath = true, bool kFp32Tiles = false>
__device__ __forceinline__ int factor_block_phases(double* ls, double* ldiag, int* s_fail, int nt, int warp, int lane,
                                                   int& nt_done) {
  const int r = lane >> 2, q = lane & 3;
  const auto tile = [&](double* t0, double* ld) {
    if constexpr (kFp32Tiles) return factor_invert_tile_fp32<Ld>(t0, ld, lane);
    else return factor_invert_tile<Ld, kFastPath>(t0, ld, lane);
  };
  nt_done = nt;
  if (warp == 0) {
    const int f = tile(ls, ldiag);
    if (f && lane == 0) s_fail[0] = f;
  }
  __syncthreads();
  double lp0 = 0.0, lp1 = 0.0;  // −L_{w,k−1} as an A operand
  int fail = 0;
  for (int k = 0; k < nt; ++k) {
    fail = s_fail[k & 1];  // the factor of tile k
    if (warp > k && warp < nt) {
      double* roww = ls + (8 * warp + r) * Ld + 2 * q;
      if (k > 0) {  // column k − 1 into tiles (w, j), k ≤ j < w, two independent tiles at a time
        const double* b = ls + r * Ld + 8 * (k - 1) + q;
        int j = k;
        for (; j + 1 < warp; j += 2) {
          double2* t0 = reinterpret_cast<double2*>(roww + 8 * j);
          double2 x0 = t0[0], x1 = t0[4];
          const double* b0 = b + 8 * j * Ld;
          const double* b1 = b0 + 8 * Ld;
          const double c00 = b0[0], c01 = b0[4], c10 = b1[0], c11 = b1[4];
          dmma_m8n8k4(x0, lp0, c00);
          dmma_m8n8k4(x1, lp0, c10);
          dmma_m8n8k4(x0, lp1, c01);
          dmma_m8n8k4(x1, lp1, c11);
          t0[0] = x0;
          t0[4] = x1;
        }
        if (j < warp) {
          double2* t0 = reinterpret_cast<double2*>(roww + 8 * j);
          double2 x0 = t0[0];
          const double* b0 = b + 8 * j * Ld;
          dmma_m8n8k4(x0, lp0, b0[0]);
          dmma_m8n8k4(x0, lp1, b0[4]);
          t0[0] = x0;
        }
      }
      double2* tk = reinterpret_cast<double2*>(roww + 8 * k);
      double a0, a1;
      acc_to_operand(*tk, r, q, a0, a1);
      const double* inv = ls + (8 * k + r) * Ld + 8 * k + q;  // B(q, r) = L_kk⁻¹(r, q)
      double2 x = make_double2(0.0, 0.0);
      dmma_m8n8k4(x, a0, inv[0]);
      dmma_m8n8k4(x, a1, inv[4]);
      *tk = x;
      acc_to_operand(x, r, q, a0, a1);  // L_wk(r, q), L_wk(r, 4 + q): also the B operand of L_wkᵀ
      lp0 = -a0;
      lp1 = -a1;
      if (!fail) {
        double2* tw = reinterpret_cast<double2*>(roww + 8 * warp);
        double2 acc = *tw;
        dmma_m8n8k4(acc, lp0, a0);
        dmma_m8n8k4(acc, lp1, a1);
        *tw = acc;
        if (warp == k + 1) {
          __syncwarp();
          const int f = tile(ls + 8 * warp * Ld + 8 * warp, ldiag + 64 * warp);
          if (f && lane == 0) s_fail[(k + 1) & 1] = 8 * warp + f;
        }
      }
    }
    __syncthreads();
    if (fail) {
      nt_done = k + 1;  // the failing tile column: its leading columns are complete
      break;
    }
  }
  return fail;
}

/// One warp's 8 rows of X = B·L⁻ᵀ against a block factored by factor_block_phases (ls, row stride
/// Ld: L with inverted 8×8 diagonal tiles), left-looking over the 8-column tiles k < nt:
/// X_k = (B_k − Σ_{m<k} X_m·L_kmᵀ)·L_kk⁻ᵀ (m8n8k4 DMMA; TRSM through inverted diagonal blocks,
/// Du Croz & Higham 1992). load_b(k) returns B_k and store_x(k, x) takes X_k, both as lane
/// (r, q) = (lane / 4, lane % 4) holding (r, 2q) and (r, 2q + 1) of the 8×8 tile; B tiles are
/// loaded kAhead tiles ahead. kFull (nt = kTiles): no per-tile guards, so the compiler can
/// overlap the tiles. Shared by the panel kernel's strips and the tiled kernel's tiles.
template <int Ld, int kTiles, int kAhead, bool kFull, class LoadB, class StoreX>
__device__ __forceinline__ void solve_rows(const double* ls, int nt, int r, int q, const LoadB& load_b,
                                           const StoreX& store_x) {
  double2 t[kTiles];  // B tiles, then −X tiles in operand layout (.x: columns q, .y: 4 + q)
#pragma unroll
  for (int k = 0; k <= kAhead && k < kTiles; ++k) t[k] = load_b(k);
#pragma unroll
  for (int k = 0; k < kTiles; ++k) {
    if (k + kAhead + 1 < kTiles) t[k + kAhead + 1] = load_b(k + kAhead + 1);
    if (kFull || k < nt) {
      double2 acc = t[k], acc2 = make_double2(0.0, 0.0);
      const double* bk = ls + (8 * k + r) * Ld + q;
#pragma unroll
      for (int mm = 0; mm < k; ++mm) {
        dmma_m8n8k4((mm & 1) ? acc2 : acc, t[mm].x, bk[8 * mm]);
        dmma_m8n8k4((mm & 1) ? acc2 : acc, t[mm].y, bk[8 * mm + 4]);
      }
      acc.x += acc2.x;
      acc.y += acc2.y;
      double a0, a1;
      acc_to_operand(acc, r, q, a0, a1);
      double2 x = make_double2(0.0, 0.0);
      dmma_m8n8k4(x, a0, bk[8 * k]);
      dmma_m8n8k4(x, a1, bk[8 * k + 4]);
      store_x(k, x);
      acc_to_operand(x, r, q, a0, a1);
      t[k] = make_double2(-a0, -a1);
    }
  }
}

/// The strict upper triangles of the diagonal blocks of sub-panels 1, 2, … of a panel b columns
/// wide at a (ld lda), which their in-place update GEMMs write over: save (before the panel) copies
/// them to upper, sub-panel s's at upper + s·kPanelNb² (ld kPanelNb), !save (after it) back.
/// Grid: one CTA per sub-panel s ≥ 1 (blockIdx.x = s − 1), any block size.
template <class T>
__global__ void copy_upper_kernel(T* a, std::int64_t lda, std::int64_t b, T* upper, bool save) {
  const std::int64_t s = blockIdx.x + 1, c0 = s * kPanelNb;
  const int kb = static_cast<int>(b - c0 < kPanelNb ? b - c0 : kPanelNb);
  T* d = a + c0 + c0 * lda;
  T* u = upper + s * kPanelNb * kPanelNb;
  for (int e = static_cast<int>(threadIdx.x); e < kb * kb; e += static_cast<int>(blockDim.x)) {
    const int i = e % kb, j = e / kb;
    if (i >= j) continue;
    if (save) u[i + j * kPanelNb] = d[i + j * lda];
    else d[i + j * lda] = u[i + j * kPanelNb];
  }
}

/// a: the diagonal block (kb×kb, ld lda) with the m panel rows below it; offset: its global
/// column (for info); only the block's lower triangle is read (the caller's update GEMM may have
/// written over the strict upper one: copy_upper_kernel). next_kb > 0: the width of the next
/// sub-panel, whose columns of the strips go into L2 for its update GEMM.
/// copy (fp32 only): the FP16 modes' copy of the solved rows (HalfCopy). kFp32Tiles (fp32 data
/// in 1×FP16 or 1×TF32 mode): the block's 8×8 tiles factored in fp32 (factor_invert_tile_fp32).
/// Grid: G ≥ 1 CTAs of kPanelThreads (at most one per SM: more would queue a second wave, each CTA
/// factoring the block again), panel_smem_bytes() dynamic shared memory; CTA c solves strips c,
/// c + G, … of kPanelStrip rows; st->panel_loaded must be 0 at launch.
template <class T, bool kFp32Tiles = false>
__global__ void __launch_bounds__(kPanelThreads, 1)
    potrf_panel_kernel(T* a, std::int64_t lda, int kb, std::int64_t m, std::int64_t offset, DeviceStatus* st,
                       HalfCopy copy, int next_kb) {
  extern __shared__ __align__(16) unsigned char panel_smem_raw[];
  double* ls = reinterpret_cast<double*>(panel_smem_raw);  // ls[row * kPanelLd + col]
  double* ldiag = ls + kPanelNb * kPanelLd;                // kPanelTiles × 64
  // failing pivot (1-based, 0 = none) of the tile factored in phase k − 1, at s_fail[k & 1]: two
  // slots, so that the factor of phase k never overwrites what a slower warp has yet to read
  int* s_fail = reinterpret_cast<int*>(ldiag + kPanelTiles * 64);
  int* s_writer = s_fail + 2;  // this CTA writes the block back
  const int tid = static_cast<int>(threadIdx.x), warp = tid / 32, lane = tid % 32;
  const int r = lane >> 2, q = lane & 3;

  // load the lower triangle (identity beyond kb, zero above), all 32 loads per thread in flight
  // at once, held as T until they are stored
  {
    constexpr int kPer = kPanelNb * kPanelNb / kPanelThreads;
    T v[kPer];
#pragma unroll
    for (int u = 0; u < kPer; ++u) {
      int i, j;
      panel_element(tid + u * kPanelThreads, i, j);
      v[u] = i < kb && j <= i ? a[i + j * lda] : T(i == j ? 1 : 0);
    }
#pragma unroll
    for (int u = 0; u < kPer; ++u) {
      int i, j;
      panel_element(tid + u * kPanelThreads, i, j);
      ls[i * kPanelLd + j] = static_cast<double>(v[u]);
    }
  }
  // fp32: this CTA's first strip into L2 while the block is factored
  const std::int64_t strips = (m + kPanelStrip - 1) / kPanelStrip;
  if constexpr (std::is_same_v<T, float>) {
    if (blockIdx.x < strips) prefetch_strip_l2(a, lda, kb, kb, m, blockIdx.x, tid);
  }
  for (int e = tid; e < kPanelTiles * 64; e += kPanelThreads) ldiag[e] = 0.0;  // upper parts stay 0
  if (tid < 2) s_fail[tid] = 0;
  __syncthreads();
  // The last CTA to have read the block writes L over it (every CTA computes the same L), so none
  // overwrites what another has yet to read, and none waits; it also resets the counter for the
  // next launch on this stream (every CTA has counted by then).
  if (tid == 0) {
    const bool last = atomicAdd(&st->panel_loaded, 1u) == gridDim.x - 1;
    if (last) st->panel_loaded = 0;
    *s_writer = last;
  }

  // Right-looking over tile columns, accumulators in shared memory, one barrier per column.
  // Phase k: warp w > k applies column k − 1 to its tiles (w, k … w − 1) (that column of the other
  // tile rows became visible at the last barrier), solves L_wk = A_wk·L_kk⁻ᵀ, applies column k to
  // its own diagonal tile, and warp k + 1, whose diagonal tile is then complete, factors it.
  const int nt = (kb + 7) / 8;
  int nt_done = nt;  // tile columns whose L (and inverted diagonal tile) are usable
  const int fail = factor_block_phases<kPanelLd, true, kFp32Tiles>(ls, ldiag, s_fail, nt, warp, lane, nt_done);
  if (*s_writer) {  // tile by tile: 136 tiles over 16 warps, each store four 64-byte pieces
    if (tid == 0) report_failure(st, offset, fail);
    for (int t = warp; t < kPanelTiles * (kPanelTiles + 1) / 2; t += kPanelWarps) {
      int ti = static_cast<int>((sqrtf(8.0f * static_cast<float>(t) + 1.0f) - 1.0f) * 0.5f);
      while ((ti + 1) * (ti + 2) / 2 <= t) ++ti;
      while (ti * (ti + 1) / 2 > t) --ti;
      const int tj = t - ti * (ti + 1) / 2;  // tile (ti, tj), tj ≤ ti
      if (tj >= nt_done) continue;
      const int i = 8 * ti + r, j = 8 * tj + 2 * q;
      const double2 x = diagonal_root(ti == tj ? ldiag + 64 * ti + 8 * r + 2 * q : ls + i * kPanelLd + j, i, j);
      const T x0 = static_cast<T>(x.x), x1 = static_cast<T>(x.y);
      const bool v0 = i < kb && j <= i, v1 = i < kb && j + 1 <= i;  // j ≤ i < kb
      if (v0) a[i + j * lda] = x0;
      if (v1) a[i + (j + 1) * lda] = x1;
      if ((v0 && !isfinite(x0)) || (v1 && !isfinite(x1)))
        flag_nonfinite(st, offset + j + (v0 && !isfinite(x0) ? 0 : 1));
    }
  }

  // solve the panel strips: warp w owns rows 8w … 8w + 7 of the strip
  for (std::int64_t sidx = blockIdx.x; sidx < strips; sidx += gridDim.x) {
    if constexpr (std::is_same_v<T, float>) {  // and the next one while this one is solved
      if (sidx + gridDim.x < strips) prefetch_strip_l2(a, lda, kb, kb, m, sidx + gridDim.x, tid);
    }
    const std::int64_t row = kb + sidx * kPanelStrip + 8 * warp + r;
    const bool rvalid = row < kb + m;
    T* arow = a + (rvalid ? row : 0);
    bool bad = false;  // a stored value is NaN/Inf
    // kFull (kb = 128, no failure): no per-tile guards, so the compiler can overlap the tiles
    const auto solve = [&](auto full) {
      constexpr bool kFull = decltype(full)::value;
      const auto load_b = [&](int k) {
        const int c = 8 * k + 2 * q;
        const bool v0 = rvalid && (kFull || c < kb), v1 = rvalid && (kFull || c + 1 < kb);
        return make_double2(v0 ? static_cast<double>(arow[c * lda]) : 0.0,
                            v1 ? static_cast<double>(arow[(c + 1) * lda]) : 0.0);
      };
      const auto store_x = [&](int k, double2 x) {
        const int c = 8 * k + 2 * q;
        const T x0 = static_cast<T>(x.x), x1 = static_cast<T>(x.y);
        if (rvalid && (kFull || c < kb)) arow[c * lda] = x0;
        if (rvalid && (kFull || c + 1 < kb)) arow[(c + 1) * lda] = x1;
        bad |= !(isfinite(x0) && isfinite(x1));  // no guard: beyond kb and below the panel, x is 0
        if constexpr (std::is_same_v<T, float>) {
          if (copy.h && !copy.pq) {  // 1×FP16: hi as the value is stored (no spill: 22.7 against 26.4 µs)
            if (rvalid && (kFull || c < kb)) copy.h[row + c * copy.ldh] = fp16_sat(x0);
            if (rvalid && (kFull || c + 1 < kb)) copy.h[row + (c + 1) * copy.ldh] = fp16_sat(x1);
          }
        }
      };
      // B tiles k + 1 … k + 4 are in flight while tile k is solved (all 16 at once spill)
      solve_rows<kPanelLd, kPanelTiles, 4, kFull>(ls, nt_done, r, q, load_b, store_x);
    };
    if (kb == kPanelNb && nt_done == kPanelTiles) solve(std::true_type{});
    else solve(std::false_type{});
    if (bad && rvalid) flag_first_nonfinite(st, arow, lda, 8 * nt_done < kb ? 8 * nt_done : kb, offset);
    if constexpr (std::is_same_v<T, float>) {
      // 3×FP16: the copies from what this thread has just stored (in the solve, they spilled)
      if (copy.h && copy.pq && rvalid) {
#pragma unroll 4
        for (int c = 2 * q; c < kb; c += 8) {
          const float x0 = arow[c * lda];
          store_half(copy, row, c, x0);
          if (c + 1 < kb) store_half(copy, row, c + 1, arow[(c + 1) * lda]);
        }
      }
    }
  }
  // the next sub-panel's columns of this CTA's strips, which its update GEMM reads and writes in place
  if (next_kb > 0) {
    for (std::int64_t sidx = blockIdx.x; sidx < strips; sidx += gridDim.x)
      prefetch_strip_l2(a + kb * lda, lda, kb, next_kb, m, sidx, tid);
  }
}

}  // namespace gemflow::linalg::cuda::detail
