#pragma once
// The mixed solve's pass over A before its fp32 factor (spd_solve_mixed.cu): the fp32 copy of the
// lower triangle (the FP16 modes: of S·A·S) and ‖A‖∞ in one read of A, deterministic (no atomics
// on the sums). Memory-bound: the lower triangle is read once in fp64 and written once in fp32.
#include <cuda_runtime.h>

#include <cfloat>
#include <cstdint>

namespace gemflow::linalg::cuda::detail {

constexpr int kNormTile = 128;  ///< demote_norm_kernel: rows and columns per block
constexpr int kNormBatch = 8;   ///< columns per thread whose loads are in flight at once

/// One step of warp_transpose_sum: lanes with bit W set keep columns k + W and send columns k.
template <int W>
__device__ __forceinline__ void transpose_sum_step(double (&s)[kNormBatch], int lane) {
  const bool upper = lane & W;
#pragma unroll
  for (int k = 0; k < W; ++k) {
    const double send = upper ? s[k] : s[k + W], keep = upper ? s[k + W] : s[k];
    s[k] = keep + __shfl_xor_sync(0xffffffffu, send, W);
  }
}

/// s[k] (k < 8, one column each) summed over the warp's 32 lanes; lane l gets column l % 8's sum:
/// the four groups of eight lanes first, then the transposing butterfly. 23 shuffles for 8
/// columns, where one reduction per column takes 40.
__device__ __forceinline__ double warp_transpose_sum(double (&s)[kNormBatch], int lane) {
#pragma unroll
  for (int k = 0; k < kNormBatch; ++k) s[k] += __shfl_xor_sync(0xffffffffu, s[k], 16);
#pragma unroll
  for (int k = 0; k < kNormBatch; ++k) s[k] += __shfl_xor_sync(0xffffffffu, s[k], 8);
  transpose_sum_step<4>(s, lane);
  transpose_sum_step<2>(s, lane);
  transpose_sum_step<1>(s, lane);
  return s[0];
}

/// One pass over the lower triangle of A, one 128×128 tile per block (128 threads over rows × 2
/// over columns, thread (x, y) reading row i0 + x, columns j0 + y + 2t): as (ld ldas) = fp32(A) on
/// and below the diagonal (e ≠ nullptr: fp32(S·A·S), S = diag(2^e), the FP16 modes'
/// equilibration), `overflow` counts finite entries of as beyond the fp32 range, and partial
/// absolute row sums of the symmetric A (unscaled): rowpart[by·n + i] = Σ |a_ij| over the tile's
/// j ≤ i, colpart[bx·n + j] = Σ |a_ij| over the tile's i > j (the upper half of row j, by
/// symmetry); zero where a tile has none. Each thread has kNormBatch loads in flight; the column
/// sums of a warp come from warp_transpose_sum.
__global__ void __launch_bounds__(256, 4)
    demote_norm_kernel(const double* a, std::int64_t lda, std::int64_t n, float* as, std::int64_t ldas, const int* e,
                       int* overflow, double* rowpart, double* colpart) {
  __shared__ double s_col[4][kNormTile];  // per warp of rows, the column sums
  __shared__ double s_row[kNormTile];
  const int x = threadIdx.x, y = threadIdx.y, lane = x % 32, w = x / 32;
  const std::int64_t i0 = std::int64_t(blockIdx.x) * kNormTile, j0 = std::int64_t(blockIdx.y) * kNormTile;
  const std::int64_t i = i0 + x;
  if (j0 > i0 + kNormTile - 1) {  // above the diagonal: nothing to read
    if (y == 0 && i < n) rowpart[blockIdx.y * n + i] = 0.0;
    if (y == 0 && j0 + x < n) colpart[blockIdx.x * n + j0 + x] = 0.0;
    return;
  }
  const int ei = e && i < n ? e[i] : 0;
  double row = 0.0;
  int big = 0;
#pragma unroll 1
  for (int b = 0; b < kNormTile / 2 / kNormBatch; ++b) {
    double v[kNormBatch];
#pragma unroll
    for (int t = 0; t < kNormBatch; ++t) {
      const std::int64_t j = j0 + y + 2 * (b * kNormBatch + t);
      v[t] = i < n && j <= i ? a[i + j * lda] : 0.0;
    }
#pragma unroll
    for (int t = 0; t < kNormBatch; ++t) {
      const std::int64_t j = j0 + y + 2 * (b * kNormBatch + t);
      if (i < n && j <= i) {
        const double sv = e ? ldexp(v[t], ei + e[j]) : v[t];
        big += fabs(sv) > static_cast<double>(FLT_MAX) && isfinite(sv);
        as[i + j * ldas] = static_cast<float>(sv);
      }
      v[t] = fabs(v[t]);
      row += v[t];
      if (j == i) v[t] = 0.0;  // the diagonal is in the row sum only
    }
    const double c = warp_transpose_sum(v, lane);
    if (lane < kNormBatch) s_col[w][y + 2 * (b * kNormBatch + lane)] = c;
  }
  if (y == 1) s_row[x] = row;
  if (big) atomicAdd(overflow, big);
  __syncthreads();
  if (y == 0) {
    if (i < n) rowpart[blockIdx.y * n + i] = row + s_row[x];
    if (j0 + x < n) colpart[blockIdx.x * n + j0 + x] = s_col[0][x] + s_col[1][x] + s_col[2][x] + s_col[3][x];
  }
}

constexpr int kSumPartsK = 32;    ///< sum_parts_kernel: row sums per CTA (one warp's coalesced run)
constexpr int kSumPartsSegs = 8;  ///< sum_parts_kernel: warps that share one row sum's parts

/// rowsum[i] = Σ_g rowpart[g·n + i] + colpart[g·n + i] over the `parts` tile rows/columns. CTA of
/// kSumPartsK·kSumPartsSegs threads: warp s takes parts s, s + kSumPartsSegs, … of kSumPartsK
/// consecutive rows, and the segments are added in a fixed order (deterministic). One thread per
/// row gave 64 CTAs at n = 16k, half the GPU idle (as symv_sum_kernel).
__global__ void __launch_bounds__(kSumPartsK* kSumPartsSegs)
    sum_parts_kernel(const double* rowpart, const double* colpart, std::int64_t n, std::int64_t parts, double* rowsum) {
  __shared__ double seg_sum[kSumPartsSegs][kSumPartsK];
  const int lane = threadIdx.x % kSumPartsK, seg = threadIdx.x / kSumPartsK;
  const std::int64_t i = std::int64_t(blockIdx.x) * kSumPartsK + lane;
  double s = 0.0;
  if (i < n)
    for (std::int64_t g = seg; g < parts; g += kSumPartsSegs) s += rowpart[g * n + i] + colpart[g * n + i];
  seg_sum[seg][lane] = s;
  __syncthreads();
  if (seg == 0 && i < n) {
    double sum = 0.0;
#pragma unroll
    for (int k = 0; k < kSumPartsSegs; ++k) sum += seg_sum[k][lane];
    rowsum[i] = sum;
  }
}

}  // namespace gemflow::linalg::cuda::detail
