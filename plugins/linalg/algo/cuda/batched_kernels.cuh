#pragma once
// Batched small Cholesky kernels (lower, column-major, matrix b at a + b·stride), used by
// cholesky_batched.cu, which picks one per precision and size from measurements on an H200
// (docs/performance.md). Needs sm_80 or newer (fp64 tensor-core MMA, __reduce_min_sync).
//  - potrf_batched_reg_kernel (n ≤ 8): one row per lane, columns by warp shuffles;
//  - potrf_batched_bcast_kernel (n ≤ 32): one row per thread, column j broadcast from a
//    triple-buffered column in shared memory (two doubles or four floats per load), one warp
//    sync per column;
//  - potrf_batched_dmma_kernel (n ≤ 64, fp64 arithmetic for fp32 and fp64 data): the matrix as
//    8×8 tiles in the accumulators of the tensor cores' m8n8k4 fp64 MMA, one warp per matrix;
//    pivots and the panel solve by shuffles, the trailing update (nearly all flops) by DMMA;
//  - potrf_batched_dmma_left_kernel (n ≤ 64): the same tiles and arithmetic (optionally fp32
//    pivots for fp32 data), left-looking: one block column in registers, the solved panels in
//    shared memory, the panel solved by rows.
// Arithmetic of step j (LAPACK dpotf2 up to rounding): L(j,j) = √p, L(r,j) = A(r,j)/L(j,j) with
// the reciprocal, A(r,c) −= t·A(c,j) with t = L(r,j)/L(j,j), so one FMA per update. The
// broadcast and DMMA kernels take both from one rsqrt (L(j,j) = p·rsqrt(p), within an ulp or
// two of the rounded √p): the correctly rounded sqrt and reciprocal cost more than the updates
// of a step at n ≤ 32 in fp64. Backward error stays within n·ε (tests), for n ≥ 9 where used.
// After a failed pivot the group keeps computing (no divergence at barriers); only the first
// failure is reported (LAPACK info) and the factor is then undefined, as documented. The info
// comes either from a test of each pivot or, where that measured faster (kNanInfo), from the
// first NaN on the diagonal of the result: L(j,j) = p·rsqrt(p) is NaN exactly when p ≤ 0, p is
// NaN or p = +Inf, and a failed pivot makes every later pivot NaN.
#include <cuda_runtime.h>

#include <cstdint>
#include <type_traits>
#include <utility>

#include "potrf_kernels.cuh"

#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ < 800
#error "the batched Cholesky kernels need sm_80 or newer (set CMAKE_CUDA_ARCHITECTURES to 80 or above)"
#endif

namespace gemflow::linalg::cuda::detail {

/// Row `row` of the lower triangle of an n×n column-major matrix into r[0..N) (zeros elsewhere).
template <class T, int N>
__device__ __forceinline__ void load_row(T (&r)[N], const T* A, std::int64_t lda, int row, int n, bool valid) {
#pragma unroll
  for (int c = 0; c < N; ++c) r[c] = (valid && c <= row && c < n) ? A[row + c * lda] : T(0);
}

/// Matrix m of a batch (matrix b at a + b·stride) for a thread that holds row `row` of it: the
/// matrix (a thread past the batch reads matrix 0 and stores nothing), whether m is in the batch,
/// and whether the row is inside the matrix.
template <class T>
struct BatchRow {
  T* A;
  bool mvalid, valid;
};
template <class T>
__device__ __forceinline__ BatchRow<T> batch_row(T* a, std::int64_t m, std::int64_t batch, std::int64_t stride, int row,
                                                 int n) {
  const bool mvalid = m < batch;
  return {a + (mvalid ? m : 0) * stride, mvalid, mvalid && row < n};
}

/// The inverse of load_row: only the lower-triangle entries (c ≤ row < n) are written.
template <class T, int N>
__device__ __forceinline__ void store_row(T* A, std::int64_t lda, const T (&r)[N], int row, int n, bool valid) {
#pragma unroll
  for (int c = 0; c < N; ++c)
    if (valid && c <= row && c < n) A[row + c * lda] = r[c];
}

/// n ≤ N ≤ 32: N lanes per matrix, lane `row` holds row `row` of the lower triangle in
/// registers; columns are broadcast with width-N shuffles (no barriers, no shared memory).
template <class T, int N>
__global__ void __launch_bounds__(128)
    potrf_batched_reg_kernel(T* a, int n, std::int64_t lda, std::int64_t stride, std::int64_t batch, int* info) {
  const int row = static_cast<int>(threadIdx.x % N);
  const std::int64_t m = (static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x) / N;
  const auto [A, mvalid, valid] = batch_row(a, m, batch, stride, row, n);
  T r[N];
  load_row<T, N>(r, A, lda, row, n, valid);
  int fail = 0;
#pragma unroll
  for (int j = 0; j < N; ++j) {
    if (j < n) {
      const T p = __shfl_sync(0xffffffffu, r[j], j, N);
      if (!fail && bad_pivot(p)) fail = j + 1;
      const T ljj = sqrt(p), inv = T(1) / ljj;
      if (row == j) r[j] = ljj;
      else if (row > j) r[j] *= inv;
#pragma unroll
      for (int c = j + 1; c < N; ++c) {
        if (c < n) {
          const T lcj = __shfl_sync(0xffffffffu, r[j], c, N);
          if (row >= c) r[c] -= r[j] * lcj;
        }
      }
    }
  }
  store_row<T, N>(A, lda, r, row, n, valid);
  if (mvalid && row == 0) info[m] = fail;
}

/// f(std::integral_constant<int, i>{}) for i = 0 … K−1, unrolled at compile time.
template <int K, class F, int... I>
__device__ __forceinline__ void gemflow_unroll_for_impl(F&& f, std::integer_sequence<int, I...>) {
  (f(std::integral_constant<int, I>{}), ...);
}
template <int K, class F>
__device__ __forceinline__ void gemflow_unroll_for(F&& f) {
  gemflow_unroll_for_impl<K>(f, std::make_integer_sequence<int, K>{});
}

__device__ __forceinline__ void load16(const double* p, double (&v)[2]) {
  const double2 x = *reinterpret_cast<const double2*>(p);
  v[0] = x.x;
  v[1] = x.y;
}
__device__ __forceinline__ void load16(const float* p, float (&v)[4]) {
  const float4 x = *reinterpret_cast<const float4*>(p);
  v[0] = x.x;
  v[1] = x.y;
  v[2] = x.z;
  v[3] = x.w;
}

/// "No failing pivot" in the min-reductions of the kNanInfo kernels.
constexpr unsigned kNoFailure = 0xffffffffu;

/// Threads per matrix of the broadcast kernel: N rounded up to 16 or 32.
template <int N>
__host__ __device__ constexpr int bcast_group() {
  static_assert(N <= 32, "the broadcast kernel holds at most 32 rows");
  return N <= 16 ? 16 : 32;
}

/// The broadcast kernel's factor of one group's matrix held by rows in r (thread `row` holds row
/// `row`), columns exchanged through cols (three buffers of G). Pivot of column j from its raw
/// diagonal p: L(j,j) = √p as p·(1/√p), own L(row,j), and t = L(row,j)/L(j,j), the multiplier of
/// the raw column in the updates of step j. kFast (fp64): 1/√p without tests or subnormal rescue
/// on the chain (rsqrt.approx and one Newton step: 50 against 68 cycles for CUDA's rsqrt on an
/// H200); `exceptional` is set when a pivot is not a normal positive finite number, and the caller
/// then factors the matrix again on the safe path (kFast = false, which also tests pivots unless
/// kNanInfo). Every thread of the warp must call it (warp syncs).
template <class T, int N, bool kNanInfo, bool kFast>
__device__ __forceinline__ void bcast_factor_rows(T (&r)[N], T (*cols)[bcast_group<N>()], int row, int n, int& fail,
                                                  bool& exceptional) {
  constexpr int V = 16 / sizeof(T);  // elements per 16-byte broadcast load
  static_assert(N % V == 0, "rows of whole 16-byte pieces (the update loop reads and writes r[] by V)");
  const auto sync = [] { __syncwarp(); };
  const auto pivot = [&](auto jc, T p) -> T {
    constexpr int j = decltype(jc)::value;
    T inv;
    if constexpr (kFast) {
      static_assert(sizeof(T) == 8, "the fast pivot path is fp64");
      exceptional |= !(p >= 2.2250738585072014e-308 && p <= 1.7976931348623157e308);
      double y;
      asm("rsqrt.approx.ftz.f64 %0, %1;" : "=d"(y) : "d"(p));
      const double e = fma(-p * y, y, 1.0);
      inv = fma(y * e, fma(0.375, e, 0.5), y);
    } else {
      if constexpr (!kNanInfo) {
        if (!fail && bad_pivot(p)) fail = j + 1;
      }
      inv = rsqrt(p);  // one reciprocal square root (≤ 1 ulp fp64, 2 fp32)
    }
    const T ljj = p * inv;
    const T lr = r[j] * inv;
    r[j] = row == j ? ljj : lr;
    return lr * inv;
  };
  cols[0][row] = r[0];
  sync();
  T t = pivot(std::integral_constant<int, 0>{}, cols[0][0]);
  gemflow_unroll_for<N>([&](auto jc) {
    constexpr int j = decltype(jc)::value;
    if (j >= n) return;
    const T* buf = cols[j % 3];
    T tn = T(0);
    if constexpr (j + 1 < N) {
      if (j + 1 < n) {
        r[j + 1] -= t * buf[j + 1];
        T* next = cols[(j + 1) % 3];
        next[row] = r[j + 1];
        sync();
        tn = pivot(std::integral_constant<int, j + 1>{}, next[j + 1]);
      }
    }
#pragma unroll
    for (int c0 = (j + 2) / V * V; c0 < N; c0 += V) {
      T v[V];
      load16(buf + c0, v);
#pragma unroll
      for (int q = 0; q < V; ++q)
        if (c0 + q >= j + 2) r[c0 + q] -= t * v[q];
    }
    t = tn;
  });
}

/// The info of a factored group: `fail` from the pivot tests, or (kNanInfo) the first NaN on the
/// diagonal of the result, minimum over the group (L(j,j) = p·rsqrt(p) is NaN exactly when p ≤ 0,
/// p is NaN or p = +Inf, and a failed pivot makes every later pivot NaN).
template <class T, int N, bool kNanInfo>
__device__ __forceinline__ int bcast_info(const T (&r)[N], int row, int n, int fail) {
  if constexpr (kNanInfo) {
    constexpr int G = bcast_group<N>();
    T diag = T(0);
    gemflow_unroll_for<N>([&](auto jc) {
      if (row == decltype(jc)::value) diag = r[decltype(jc)::value];
    });
    unsigned first = (row < n && isnan(diag)) ? unsigned(row + 1) : kNoFailure;
    const unsigned mask = G == 32 ? 0xffffffffu : (((1u << G) - 1u) << (threadIdx.x % 32 / G * G));
    first = __reduce_min_sync(mask, first);
    return first == kNoFailure ? 0 : static_cast<int>(first);
  } else {
    return fail;
  }
}

/// The safe path out of line (rare: a pivot that is not a normal positive finite number): load,
/// factor (kFast = false), store; returns the info.
template <class T, int N, bool kNanInfo>
__device__ __noinline__ int bcast_factor_safe(T* A, std::int64_t lda, int row, int n, bool valid,
                                              T (*cols)[bcast_group<N>()]) {
  T r[N];
  load_row<T, N>(r, A, lda, row, n, valid);
  int fail = 0;
  bool exceptional = false;
  bcast_factor_rows<T, N, kNanInfo, false>(r, cols, row, n, fail, exceptional);
  store_row<T, N>(A, lda, r, row, n, valid);
  return bcast_info<T, N, kNanInfo>(r, row, n, fail);
}

/// n ≤ N ≤ 32, 128 threads per block, G = bcast_group<N>() threads per matrix (128/G matrices
/// per block, within one warp). Thread `row` of a group holds row `row` of its matrix in
/// registers, all N columns: entries above the diagonal are updated too (never stored), which
/// keeps the update loop free of predicates. Software-pipelined: at step j column j+1 is
/// updated and published first, so the reciprocal square root of pivot j+1 overlaps the rest
/// of step j's updates. Three column buffers: a thread may still read column j while another
/// writes column j+1, and column j+2 is only written after everyone passed the sync of j+1.
/// kFast (fp64): the fast pivot path (bcast_factor_rows); a warp with an exceptional pivot factors
/// its matrices again on the safe path, which stores and reports them.
/// MINB: minimum resident blocks per multiprocessor (__launch_bounds__), i.e. a register cap.
template <class T, int N, int MINB = 1, bool kNanInfo = false, bool kFast = false>
__global__ void __launch_bounds__(128, MINB)
    potrf_batched_bcast_kernel(T* a, int n, std::int64_t lda, std::int64_t stride, std::int64_t batch, int* info) {
  constexpr int G = bcast_group<N>();
  constexpr int kGroups = 128 / G;
  __shared__ __align__(16) T col[kGroups][3][G];
  const int group = static_cast<int>(threadIdx.x) / G, row = static_cast<int>(threadIdx.x) % G;
  const std::int64_t m = static_cast<std::int64_t>(blockIdx.x) * kGroups + group;
  const auto [A, mvalid, valid] = batch_row(a, m, batch, stride, row, n);
  T r[N];
  load_row<T, N>(r, A, lda, row, n, valid);
  int fail = 0;
  bool exceptional = false;
  bcast_factor_rows<T, N, kNanInfo, kFast>(r, col[group], row, n, fail, exceptional);
  if constexpr (kFast) {
    if (__any_sync(0xffffffffu, exceptional)) {  // warp-uniform: the syncs take the whole warp
      __syncwarp();                              // the column buffers are reused
      fail = bcast_factor_safe<T, N, kNanInfo>(A, lda, row, n, valid, col[group]);
      if (mvalid && row == 0) info[m] = fail;
      return;
    }
  }
  store_row<T, N>(A, lda, r, row, n, valid);
  fail = bcast_info<T, N, kNanInfo>(r, row, n, fail);
  if (mvalid && row == 0) info[m] = fail;
}

/// n ≤ 8·NT ≤ 64, WPB warps per block, one warp per matrix, arithmetic in fp64 (T = float: the
/// matrix is read as fp32, factored in fp64 and rounded to fp32 once). The lower triangle lives in
/// NT(NT+1)/2 tiles of 8×8, each in the accumulator fragment of an m8n8k4 DMMA (lane l: row l/4,
/// columns 2(l%4) and 2(l%4)+1 of the tile); the matrix is padded to 8·NT with the identity.
/// Block column k: 8 pivots on the diagonal tile, each also solving the panel tiles below it
/// (right-looking within the block column, one shuffle per tile and pivot; the arithmetic of the
/// broadcast kernel); the panel goes through shared memory (two buffers, so one warp sync per
/// block column) into operand layout (A(l/4, l%4) of a tile is also the B operand of its
/// transpose), and the trailing tiles get A_ij −= L_ik·L_jkᵀ as two DMMAs per tile, block column
/// k+1 first. Tiles are loaded negated and each block column turns positive when its turn comes,
/// so that the DMMA's D = A·B + C adds the product to the negated trailing tiles (rounding is
/// symmetric, so the values are those of the subtraction). Registers grow as NT²: 72 (NT = 3) to
/// 246 (NT = 8) per thread on sm_90. kWhole: n = 8·NT, loads and stores without bounds tests (a
/// kernel that tests per tile whether it is whole ran slower at every n); otherwise only the last
/// tile row and column test against n (the others are inside the matrix for every n the kernel
/// takes, 8(NT−1) < n). kStop (not kWhole): the last block column's pivots stop at n (those of
/// the padding change nothing that is stored); chosen per size in cholesky_batched.cu. The info
/// comes from a test of each pivot.
template <class T, int NT, int WPB, bool kWhole, bool kStop = false>
__global__ void __launch_bounds__(32 * WPB)
    potrf_batched_dmma_kernel(T* a, int n, std::int64_t lda, std::int64_t stride, std::int64_t batch, int* info) {
  // (Statement order matters here: equivalent rewrites of this kernel took up to 28 more
  // registers, or spilled, and ran up to 25% slower.)
  static_assert(NT >= 2 && NT <= 8, "8·NT ≤ 64");
  constexpr int kTiles = NT * (NT + 1) / 2;
  constexpr int LD = 8 + 2;  // padded tile row (doubles)
  __shared__ __align__(16) double panel_smem[WPB][2][NT - 1][8][LD];
  const int warp = static_cast<int>(threadIdx.x) / 32, lane = static_cast<int>(threadIdx.x) % 32;
  const int r = lane >> 2, q = lane & 3;
  const std::int64_t m = static_cast<std::int64_t>(blockIdx.x) * WPB + warp;
  const bool mvalid = m < batch;
  T* A = a + (mvalid ? m : 0) * stride;  // a warp past the batch reads matrix 0, stores nothing
  double2 t[kTiles];                     // tile (i, j), j ≤ i, at i(i+1)/2 + j
#pragma unroll
  for (int i = 0; i < NT; ++i)
#pragma unroll
    for (int j = 0; j <= i; ++j) {
      const int row = 8 * i + r, c0 = 8 * j + 2 * q;
      double v[2];
      if constexpr (kWhole) {  // n = 8·NT: no bounds per element (2× at n = 64)
#pragma unroll
        for (int e = 0; e < 2; ++e)
          v[e] = (i > j || c0 + e <= row) ? -static_cast<double>(A[row + (c0 + e) * lda]) : 0.0;
      } else {
#pragma unroll
        for (int e = 0; e < 2; ++e) {
          const int col = c0 + e;
          // only the last tile row and column can leave the matrix (8(NT − 1) < n)
          const bool in = (i < NT - 1 || row < n) && (j < NT - 1 || col < n) && (i > j || col <= row);
          if (i < NT - 1 && i > j) {
            v[e] = -static_cast<double>(A[row + col * lda]);
            continue;
          }
          const double x = static_cast<double>(A[in ? row + col * lda : 0]);  // unconditional: no branches
          v[e] = in ? -x : (row == col ? -1.0 : 0.0);                         // negated (see above)
        }
      }
      t[i * (i + 1) / 2 + j] = make_double2(v[0], v[1]);
    }
  int fail = 0;
  // −A_ij += L_ik·L_jkᵀ for the block columns j in [jlo, jhi)
  const auto update = [&](int k, const double(&f0)[NT], const double(&f1)[NT], int jlo, int jhi) {
#pragma unroll
    for (int j = k + 1; j < NT; ++j) {
      if (j < jlo || j >= jhi) continue;
#pragma unroll
      for (int i = j; i < NT; ++i) {
        dmma_m8n8k4(t[i * (i + 1) / 2 + j], f0[i], f0[j]);
        dmma_m8n8k4(t[i * (i + 1) / 2 + j], f1[i], f1[j]);
      }
    }
  };
#pragma unroll
  for (int k = 0; k < NT; ++k) {
#pragma unroll
    for (int i = k; i < NT; ++i) {  // block column k back to its sign
      double2& x = t[i * (i + 1) / 2 + k];
      x.x = -x.x;
      x.y = -x.y;
    }
#pragma unroll
    for (int p = 0; p < 8; ++p) {
      if constexpr (kStop) {
        if (k == NT - 1 && 8 * k + p >= n) break;
      }
      const double2& D = t[k * (k + 1) / 2 + k];
      const double dv = (p & 1) ? D.y : D.x;  // column p of the diagonal tile, this lane's row
      const double d = __shfl_sync(0xffffffffu, dv, 4 * p + (p >> 1));
      if (!fail && bad_pivot(d)) fail = 8 * k + p + 1;
      const double inv = rsqrt(d);
      const double lc0 = __shfl_sync(0xffffffffu, dv, 8 * q + (p >> 1)) * inv;      // L(2q, p)
      const double lc1 = __shfl_sync(0xffffffffu, dv, 8 * q + 4 + (p >> 1)) * inv;  // L(2q+1, p)
      const int c0 = 2 * q, c1 = 2 * q + 1;
#pragma unroll
      for (int i = k; i < NT; ++i) {
        double2& x = t[i * (i + 1) / 2 + k];
        const double lr = __shfl_sync(0xffffffffu, (p & 1) ? x.y : x.x, 4 * r + (p >> 1)) * inv;  // L(row, p)
        if (c0 > p) x.x -= lr * lc0;
        else if (c0 == p) x.x = lr;
        if (c1 > p) x.y -= lr * lc1;
        else if (c1 == p) x.y = lr;
      }
    }
    if (k + 1 < NT) {
      double f0[NT], f1[NT];  // L_ik in operand layout: columns q and q + 4 of row r
      // buffer k % 2: its last readers (step k − 2) have passed step k − 1's warp sync
      double(*panel)[8][LD] = panel_smem[warp][k & 1];
#pragma unroll
      for (int i = k + 1; i < NT; ++i)
        *reinterpret_cast<double2*>(&panel[i - k - 1][r][2 * q]) = t[i * (i + 1) / 2 + k];
      __syncwarp();
#pragma unroll
      for (int i = k + 1; i < NT; ++i) {
        f0[i] = panel[i - k - 1][r][q];
        f1[i] = panel[i - k - 1][r][q + 4];
      }
      update(k, f0, f1, k + 1, k + 2);  // block column k + 1 first: the next pivots need it
      update(k, f0, f1, k + 2, NT);
    }
  }
#pragma unroll
  for (int i = 0; i < NT; ++i)
#pragma unroll
    for (int j = 0; j <= i; ++j) {
      const int row = 8 * i + r, c0 = 8 * j + 2 * q;
      const double2 x = t[i * (i + 1) / 2 + j];
      if constexpr (kWhole) {
        if (mvalid && (i > j || c0 <= row)) A[row + c0 * lda] = static_cast<T>(x.x);
        if (mvalid && (i > j || c0 + 1 <= row)) A[row + (c0 + 1) * lda] = static_cast<T>(x.y);
      } else {
        const bool rin = i < NT - 1 || row < n;
        const bool in0 = rin && (j < NT - 1 || c0 < n) && (i > j || c0 <= row);
        const bool in1 = rin && (j < NT - 1 || c0 + 1 < n) && (i > j || c0 + 1 <= row);
        if (mvalid && in0) A[row + c0 * lda] = static_cast<T>(x.x);
        if (mvalid && in1) A[row + (c0 + 1) * lda] = static_cast<T>(x.y);
      }
    }
  if (mvalid && lane == 0) info[m] = fail;
}

/// n ≤ 8·NT ≤ 64, one warp per matrix, left-looking over block columns: the tiles, pivots and
/// arithmetic of potrf_batched_dmma_kernel (fp64 arithmetic, 8×8 tiles in DMMA accumulators,
/// negated until their turn, identity padding), but only block column k lives in registers at
/// step k, so registers do not grow as NT² (fp64 NT = 8: 168 under a 12-block cap, 28–88 bytes
/// spilled, against 255; NT = 6: 120–126 against 160) and more matrices run per SM.
/// Step k: block column k, loaded during step k − 1 and kept as loaded until now (a negation or
/// conversion right after the load would wait for it), gets −A_ik += Σ_j L_ij·L_kjᵀ over the
/// earlier panels j < k, two DMMAs per tile and panel with both operands from shared memory, in
/// the order of the right-looking kernel's updates (so the same values); then 8 pivots by
/// shuffles on the diagonal tile; then the panel solved by rows against L_kkᵀ (lane (r, q) solves
/// row r of panel tiles k+1+q and k+5+q in its registers, the same operations in the same order as
/// per-pivot updates) and stored to the matrix and, in operand layout, to shared memory for the
/// later steps (NT(NT−1)/2 tiles per warp). Info: the first NaN on the diagonal of L (see the top
/// of this file). kWhole and kStop as in potrf_batched_dmma_kernel; kMinBlocks: __launch_bounds__
/// minimum blocks per SM (a register cap). P: the pivots' precision (the diagonal tile's 8 pivot
/// steps; float only for fp32 data: 4 shuffles instead of 8 per pivot and rsqrtf, fp32 accuracy
/// like spotrf's instead of one rounding of an fp64 factor; the row solves and DMMAs stay fp64).
/// kRowPairs: the row solve in dot form, x_c = (x_c − Σ_{p<c} x_p·L(c,p))·(1/L(c,c)), reading row
/// c of L_kk as 16-byte pairs (24 shared loads per row instead of 36); each x_c takes the same
/// operations in the same order as in the column form, so the values are the same. kSwizzle: the
/// panels' columns permuted per row in shared memory against bank conflicts (see ptile below).
/// kInvDiag (with kRowPairs): the shared copy of L_kk holds 1/L(c,c) (the pivots' rsqrt, as used)
/// on its diagonal, so the dot-form row solve reads only 16-byte pairs (20 loads per row instead of
/// 24) and the reciprocals are not stored pivot by pivot. The same values. (A column form reading
/// L_kkᵀ by pairs lost or tied at every size: docs/performance.md.) kPersist: each warp factors
/// matrices m, m + gridDim.x·WPB, … (the launch sized to the resident warps) and loads the next
/// matrix's block column 0 during its last step, so that the latency of a matrix's first loads is
/// hidden. The same values.
template <class T, int NT, int WPB, bool kWhole, bool kStop = false, int kMinBlocks = 1, class P = double,
          bool kRowPairs = false, bool kSwizzle = false, bool kInvDiag = false, bool kPersist = false>
__global__ void __launch_bounds__(32 * WPB, kMinBlocks)
    potrf_batched_dmma_left_kernel(T* a, int n, std::int64_t lda, std::int64_t stride, std::int64_t batch, int* info) {
  static_assert(NT >= 2 && NT <= 8, "8·NT ≤ 64");
  static_assert(!kInvDiag || kRowPairs, "the reciprocals on the diagonal are read by the dot-form row solve");
  constexpr int LD = 8;           // tile row (doubles)
  constexpr int TS = 8 * LD + 2;  // tile (doubles): 528 bytes, so that four tiles' rows are conflict-free
  constexpr int kPanelTiles = NT * (NT - 1) / 2;
  __shared__ __align__(16) double panel_smem[WPB][kPanelTiles * TS];
  __shared__ __align__(16) double diag_smem[WPB][8][LD];  // L_kk
  __shared__ double dinv_smem[WPB][kInvDiag ? 1 : 8];
  const int warp = static_cast<int>(threadIdx.x) / 32, lane = static_cast<int>(threadIdx.x) % 32;
  const int r = lane >> 2, q = lane & 3;
  std::int64_t m = static_cast<std::int64_t>(blockIdx.x) * WPB + warp;
  bool mvalid = m < batch;
  T* A = a + (mvalid ? m : 0) * stride;  // a warp past the batch reads matrix 0, stores nothing
  // panel tile (i, j), i > j: row rr at ptile(i, j) + rr·LD, column c of row rr at c ^ sw(rr).
  // kSwizzle: sw(rr) = 4 for rows 2, 3, 6, 7 (else 0), so that the DMMA operand reads (8 bytes,
  // lane (r, q) at row r, column q or q + 4) take two wavefronts instead of four (rows r and r + 2
  // no longer share banks); the 16-byte pairs of the row solve and of the stores stay pairs, in
  // four wavefronts as before. The same values; faster or slower by size (cholesky_batched.cu).
  const auto ptile = [&](int i, int j) { return &panel_smem[warp][(j * (2 * NT - j - 1) / 2 + (i - j - 1)) * TS]; };
  const int sw = kSwizzle && (r & 2) ? 4 : 0;  // for this lane's row r
  // Tile (i, j) of A: this lane's two entries as loaded (raw, so that nothing waits for the
  // loads before the tile is used), then negated with the padding by the identity (as
  // potrf_batched_dmma_kernel).
  using T2 = std::conditional_t<sizeof(T) == 8, double2, float2>;
  const auto inside = [&](int i, int j, int e) {
    const int row = 8 * i + r, col = 8 * j + 2 * q + e;
    if constexpr (kWhole) return i > j || col <= row;
    return (i < NT - 1 || row < n) && (j < NT - 1 || col < n) && (i > j || col <= row);
  };
  const auto load_raw = [&](const T* src, int i, int j) {
    const int row = 8 * i + r, c0 = 8 * j + 2 * q;
    T v[2];
#pragma unroll
    for (int e = 0; e < 2; ++e) {
      if (kWhole || (i < NT - 1 && i > j)) v[e] = (kWhole && !inside(i, j, e)) ? T(0) : src[row + (c0 + e) * lda];
      else  // unconditional, no branches: outside, an entry of the same block column (not yet written)
        v[e] = src[min(row, n - 1) + min(c0 + e, n - 1) * lda];
    }
    T2 x;
    x.x = v[0];
    x.y = v[1];
    return x;
  };
  const auto prep = [&](T2 x, int i, int j) {
    const int row = 8 * i + r, c0 = 8 * j + 2 * q;
    const double v0 = static_cast<double>(x.x), v1 = static_cast<double>(x.y);
    return make_double2(inside(i, j, 0) ? -v0 : (!kWhole && row == c0 ? -1.0 : 0.0),
                        inside(i, j, 1) ? -v1 : (!kWhole && row == c0 + 1 ? -1.0 : 0.0));
  };
  T2 nx[NT];  // the next block column as loaded
#pragma unroll
  for (int i = 0; i < NT; ++i) nx[i] = load_raw(A, i, 0);
  const std::int64_t mstep = kPersist ? static_cast<std::int64_t>(gridDim.x) * WPB : 0;
  for (;;) {
    const bool has_next = kPersist && m + mstep < batch;  // kPersist: this warp's next matrix
    const T* An = has_next ? a + (m + mstep) * stride : A;
    double2 c[NT];  // block column k (tiles i ≥ k)
#pragma unroll
    for (int i = 0; i < NT; ++i) c[i] = prep(nx[i], i, 0);
    unsigned first = kNoFailure;
#pragma unroll
    for (int k = 0; k < NT; ++k) {
      if (k + 1 < NT) {
#pragma unroll
        for (int i = k + 1; i < NT; ++i) nx[i] = load_raw(A, i, k + 1);
      } else if (has_next) {
#pragma unroll
        for (int i = 0; i < NT; ++i) nx[i] = load_raw(An, i, 0);
      }
      // −A_ik += Σ_j L_ij·L_kjᵀ over the earlier panels j < k
#pragma unroll
      for (int j = 0; j < k; ++j) {
        const double* pk = ptile(k, j) + r * LD;
        const double b0 = pk[q ^ sw], b1 = pk[(q + 4) ^ sw];
#pragma unroll
        for (int i = k; i < NT; ++i) {
          const double* pi = ptile(i, j) + r * LD;
          dmma_m8n8k4(c[i], pi[q ^ sw], b0);
          dmma_m8n8k4(c[i], pi[(q + 4) ^ sw], b1);
        }
      }
#pragma unroll
      for (int i = k; i < NT; ++i) {
        c[i].x = -c[i].x;
        c[i].y = -c[i].y;
      }
      P x0 = static_cast<P>(c[k].x), x1 = static_cast<P>(c[k].y);  // the diagonal tile in the pivots' precision
      P rinv = P(1);                                               // kInvDiag: 1/L(r, r) for this lane's row r
#pragma unroll
      for (int p = 0; p < 8; ++p) {
        if constexpr (kStop) {
          if (k == NT - 1 && 8 * k + p >= n) break;
        }
        const P dv = (p & 1) ? x1 : x0;  // column p of the diagonal tile, this lane's row
        const P d = __shfl_sync(0xffffffffu, dv, 4 * p + (p >> 1));
        P inv;
        if constexpr (sizeof(P) == 8) inv = rsqrt(d);
        else inv = rsqrtf(d);
        if constexpr (kInvDiag) {
          if (r == p) rinv = inv;
        } else {
          if (lane == 0) dinv_smem[warp][p] = inv;
        }
        const P lc0 = __shfl_sync(0xffffffffu, dv, 8 * q + (p >> 1)) * inv;      // L(2q, p)
        const P lc1 = __shfl_sync(0xffffffffu, dv, 8 * q + 4 + (p >> 1)) * inv;  // L(2q+1, p)
        const P lr = __shfl_sync(0xffffffffu, dv, 4 * r + (p >> 1)) * inv;       // L(r, p)
        const int c0 = 2 * q, c1 = 2 * q + 1;
        if (c0 > p) x0 -= lr * lc0;
        else if (c0 == p) x0 = lr;
        if (c1 > p) x1 -= lr * lc1;
        else if (c1 == p) x1 = lr;
      }
      c[k] = make_double2(x0, x1);
      if (k + 1 < NT) {  // the panel, solved by rows (see above)
#pragma unroll
        for (int i = k + 1; i < NT; ++i) *reinterpret_cast<double2*>(ptile(i, k) + r * LD + ((2 * q) ^ sw)) = c[i];
        if constexpr (!kInvDiag) {
          *reinterpret_cast<double2*>(&diag_smem[warp][r][2 * q]) = c[k];
        } else {
          double2 v = c[k];
          if (r == 2 * q) v.x = static_cast<double>(rinv);
          if (r == 2 * q + 1) v.y = static_cast<double>(rinv);
          *reinterpret_cast<double2*>(&diag_smem[warp][r][2 * q]) = v;
        }
        __syncwarp();
#pragma unroll
        for (int rho = 0; rho < 2; ++rho) {
          if (rho == 1 && NT - k - 1 <= 4) break;
          const int ii = k + 1 + q + 4 * rho;
          if (ii < NT) {
            double* row = ptile(ii, k) + r * LD;
            double x[8];
#pragma unroll
            for (int cc = 0; cc < 8; cc += 2) {
              const double2 y = *reinterpret_cast<const double2*>(row + (cc ^ sw));
              x[cc] = y.x;
              x[cc + 1] = y.y;
            }
            if constexpr (kInvDiag) {
#pragma unroll
              for (int cc = 0; cc < 8; ++cc) {
                double dinv = 0.0;
#pragma unroll
                for (int pp = 0; pp <= cc; pp += 2) {
                  const double2 l = *reinterpret_cast<const double2*>(&diag_smem[warp][cc][pp]);  // L(cc, pp..pp+1)
                  if (pp < cc) x[cc] -= x[pp] * l.x;
                  else dinv = l.x;
                  if (pp + 1 < cc) x[cc] -= x[pp + 1] * l.y;
                  else if (pp + 1 == cc) dinv = l.y;
                }
                x[cc] *= dinv;
              }
            } else if constexpr (kRowPairs) {
#pragma unroll
              for (int cc = 0; cc < 8; ++cc) {
#pragma unroll
                for (int pp = 0; pp < cc; pp += 2) {
                  const double2 l = *reinterpret_cast<const double2*>(&diag_smem[warp][cc][pp]);  // L(cc, pp..pp+1)
                  x[cc] -= x[pp] * l.x;
                  if (pp + 1 < cc) x[cc] -= x[pp + 1] * l.y;
                }
                x[cc] *= dinv_smem[warp][cc];
              }
            } else {
#pragma unroll
              for (int pp = 0; pp < 8; ++pp) {
                x[pp] *= dinv_smem[warp][pp];
#pragma unroll
                for (int cc = pp + 1; cc < 8; ++cc) x[cc] -= x[pp] * diag_smem[warp][cc][pp];
              }
            }
#pragma unroll
            for (int cc = 0; cc < 8; cc += 2)
              *reinterpret_cast<double2*>(row + (cc ^ sw)) = make_double2(x[cc], x[cc + 1]);
            const int grow = 8 * ii + r;
            if (mvalid && (kWhole || ii < NT - 1 || grow < n)) {
#pragma unroll
              for (int cc = 0; cc < 8; ++cc) A[grow + (8 * k + cc) * lda] = static_cast<T>(x[cc]);
            }
          }
        }
        __syncwarp();
      }
      {  // the diagonal tile
        const int row = 8 * k + r, c0 = 8 * k + 2 * q;
        const double2 x = c[k];
        const bool last = k == NT - 1 && !kWhole;
        const bool in0 = (!last || (row < n && c0 < n)) && c0 <= row;
        const bool in1 = (!last || (row < n && c0 + 1 < n)) && c0 + 1 <= row;
        if (mvalid && in0) A[row + c0 * lda] = static_cast<T>(x.x);
        if (mvalid && in1) A[row + (c0 + 1) * lda] = static_cast<T>(x.y);
        // the first NaN on the diagonal (the steps come in order)
        if (first == kNoFailure && r == 2 * q && row < n && isnan(x.x)) first = row + 1;
        if (first == kNoFailure && r == 2 * q + 1 && row < n && isnan(x.y)) first = row + 1;
      }
      if (k + 1 < NT) {
#pragma unroll
        for (int i = k + 1; i < NT; ++i) c[i] = prep(nx[i], i, k + 1);
      }
    }
    first = __reduce_min_sync(0xffffffffu, first);
    if (mvalid && lane == 0) info[m] = first == kNoFailure ? 0 : static_cast<int>(first);
    if (!has_next) break;
    __syncwarp();  // the shared panels are written again
    m += mstep;
    A = a + m * stride;
    mvalid = true;
  }
}

}  // namespace gemflow::linalg::cuda::detail
