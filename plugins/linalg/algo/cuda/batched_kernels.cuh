#pragma once
// Batched small Cholesky kernels (lower, column-major, matrix b at a + b·stride), used by
// cholesky_batched.cu. Both keep one row of the matrix per thread in registers; they differ in
// how column j reaches the other rows at step j:
//  - potrf_batched_reg_kernel: warp shuffles (N ≤ 32 lanes per matrix);
//  - potrf_batched_bcast_kernel: a double-buffered column in shared memory, read back as
//    broadcasts (two doubles or four floats per load), one barrier per column. Fewer
//    instructions per update than shuffles (a 64-bit shuffle is two SHFL), and it spans two
//    warps, so it reaches n = 64.
// Arithmetic of step j (LAPACK dpotf2 up to rounding): L(j,j) = √p, L(r,j) = A(r,j)/L(j,j) with
// the reciprocal, A(r,c) −= t·A(c,j) with t = L(r,j)/L(j,j), so one FMA per update. The
// broadcast kernel takes both from one rsqrt (L(j,j) = p·rsqrt(p), within an ulp or two of the
// rounded √p): the correctly rounded sqrt and reciprocal cost more than the updates of a step
// at n ≤ 32 in fp64. Backward error stays within n·ε (tests), for n ≥ 9 where it is used.
// After a failed pivot the group keeps computing (no divergence at barriers); only the first
// failure is reported (LAPACK info) and the factor is then undefined, as documented.
#include <cuda_runtime.h>

#include <cstdint>
#include <type_traits>
#include <utility>

#include "potrf_kernels.cuh"

namespace gemflow::linalg::cuda::detail {

/// Row `row` of the lower triangle of an n×n column-major matrix into r[0..N) (zeros elsewhere).
template <class T, int N>
__device__ __forceinline__ void load_row(T (&r)[N], const T* A, std::int64_t lda, int row, int n, bool valid) {
#pragma unroll
  for (int c = 0; c < N; ++c) r[c] = (valid && c <= row && c < n) ? A[row + c * lda] : T(0);
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
__global__ void __launch_bounds__(128) potrf_batched_reg_kernel(T* a, int n, std::int64_t lda, std::int64_t stride,
                                                                std::int64_t batch, int* info) {
  const int row = static_cast<int>(threadIdx.x % N);
  const std::int64_t m = (static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x) / N;
  const bool mvalid = m < batch;
  const bool valid = mvalid && row < n;
  T* A = a + (mvalid ? m : 0) * stride;
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

/// Threads per matrix of the broadcast kernel: N rounded up to 16, 32 or 64.
template <int N>
__host__ __device__ constexpr int bcast_group() {
  return N <= 16 ? 16 : (N <= 32 ? 32 : 64);
}

/// n ≤ N ≤ 64, 128 threads per block, G = bcast_group<N>() threads per matrix (128/G matrices
/// per block). Thread `row` of a group holds row `row` of its matrix in registers, all N
/// columns: entries above the diagonal are updated too (never stored), which keeps the
/// update loop free of predicates; a warp skips the columns right of its last row.
/// Software-pipelined: at step j column j+1 is updated and published first, so the reciprocal
/// square root of pivot j+1 overlaps the rest of step j's updates. Three column buffers: a thread may still read column j while another writes
/// column j+1, and column j+2 is only written after everyone passed the barrier of j+1.
template <class T, int N>
__global__ void __launch_bounds__(128) potrf_batched_bcast_kernel(T* a, int n, std::int64_t lda,
                                                                  std::int64_t stride, std::int64_t batch,
                                                                  int* info) {
  constexpr int G = bcast_group<N>();
  constexpr int kGroups = 128 / G;
  constexpr int V = 16 / sizeof(T);  // elements per 16-byte broadcast load
  __shared__ __align__(16) T col[kGroups][3][G];
  const int group = static_cast<int>(threadIdx.x) / G, row = static_cast<int>(threadIdx.x) % G;
  const std::int64_t m = static_cast<std::int64_t>(blockIdx.x) * kGroups + group;
  const bool mvalid = m < batch;
  const bool valid = mvalid && row < n;
  T* A = a + (mvalid ? m : 0) * stride;
  T r[N];
  load_row<T, N>(r, A, lda, row, n, valid);
  const auto sync = [&] {
    if constexpr (G <= 32) {
      __syncwarp();
    } else {
      asm volatile("bar.sync %0, %1;" ::"r"(1 + group), "r"(G) : "memory");
    }
  };
  const int warp_last = (row / 32) * 32 + 31;  // last row held by this thread's warp
  int fail = 0;
  // Pivot of column j from its raw diagonal p: L(j,j) = √p, own L(row,j), returns
  // t = L(row,j)/L(j,j), the multiplier of the raw column in the updates of step j.
  const auto pivot = [&](auto jc, T p) -> T {
    constexpr int j = decltype(jc)::value;
    if (!fail && bad_pivot(p)) fail = j + 1;
    const T inv = rsqrt(p), ljj = p * inv;  // one reciprocal square root (≤ 1 ulp fp64, 2 fp32)
    const T lr = r[j] * inv;
    r[j] = row == j ? ljj : lr;
    return lr * inv;
  };
  col[group][0][row] = r[0];
  sync();
  T t = pivot(std::integral_constant<int, 0>{}, col[group][0][0]);
  gemflow_unroll_for<N>([&](auto jc) {
    constexpr int j = decltype(jc)::value;
    if (j >= n) return;
    const T* buf = col[group][j % 3];
    T tn = T(0);
    if constexpr (j + 1 < N) {
      if (j + 1 < n) {
        r[j + 1] -= t * buf[j + 1];
        T* next = col[group][(j + 1) % 3];
        next[row] = r[j + 1];
        sync();
        tn = pivot(std::integral_constant<int, j + 1>{}, next[j + 1]);
      }
    }
#pragma unroll
    for (int c0 = (j + 2) / V * V; c0 < N; c0 += V) {
      if (c0 > warp_last) break;  // warp-uniform: no row of this warp needs column c0 or later
      T v[V];
      load16(buf + c0, v);
#pragma unroll
      for (int q = 0; q < V; ++q)
        if (c0 + q >= j + 2) r[c0 + q] -= t * v[q];
    }
    t = tn;
  });
  store_row<T, N>(A, lda, r, row, n, valid);
  if (mvalid && row == 0) info[m] = fail;
}

/// 32 < n ≤ N ≤ 64: one warp per matrix (4 per block), lane l holds row l (columns < 32, all a
/// row above 32 needs) and row l + 32 (N columns) in registers: half the threads of
/// potrf_batched_bcast_kernel for the same rows, so more matrices fit on an SM, each broadcast
/// load feeds two rows and the barrier is a warp sync. Same arithmetic and pipelining.
template <class T, int N>
__global__ void __launch_bounds__(128) potrf_batched_bcast2_kernel(T* a, int n, std::int64_t lda,
                                                                   std::int64_t stride, std::int64_t batch,
                                                                   int* info) {
  static_assert(N > 32 && N <= 64, "two rows per lane: 32 < N ≤ 64");
  constexpr int V = 16 / sizeof(T);
  __shared__ __align__(16) T col[4][3][64];
  const int group = static_cast<int>(threadIdx.x) / 32, lane = static_cast<int>(threadIdx.x) % 32;
  const std::int64_t m = static_cast<std::int64_t>(blockIdx.x) * 4 + group;
  const bool mvalid = m < batch;
  T* A = a + (mvalid ? m : 0) * stride;
  T ra[32], rb[N];  // rows lane and lane + 32
  load_row<T, 32>(ra, A, lda, lane, n, mvalid && lane < n);
  load_row<T, N>(rb, A, lda, lane + 32, n, mvalid && lane + 32 < n);
  int fail = 0;
  T ta = T(0), tb = T(0);  // multipliers of the current column for rows lane and lane + 32
  const auto pivot = [&](auto jc, T p, T& na, T& nb) {
    constexpr int j = decltype(jc)::value;
    if (!fail && bad_pivot(p)) fail = j + 1;
    const T inv = rsqrt(p), ljj = p * inv;
    na = T(0);
    if constexpr (j < 32) {
      const T la = ra[j] * inv;
      ra[j] = lane == j ? ljj : la;
      na = la * inv;
    }
    const T lb = rb[j] * inv;
    rb[j] = lane + 32 == j ? ljj : lb;
    nb = lb * inv;
  };
  const auto publish = [&](auto jc, T* buf) {
    constexpr int j = decltype(jc)::value;
    if constexpr (j < 32) buf[lane] = ra[j];
    buf[lane + 32] = rb[j];
  };
  publish(std::integral_constant<int, 0>{}, col[group][0]);
  __syncwarp();
  pivot(std::integral_constant<int, 0>{}, col[group][0][0], ta, tb);
  gemflow_unroll_for<N>([&](auto jc) {
    constexpr int j = decltype(jc)::value;
    if (j >= n) return;
    const T* buf = col[group][j % 3];
    T na = T(0), nb = T(0);
    if constexpr (j + 1 < N) {
      if (j + 1 < n) {
        if constexpr (j + 1 < 32) ra[j + 1] -= ta * buf[j + 1];
        rb[j + 1] -= tb * buf[j + 1];
        T* next = col[group][(j + 1) % 3];
        publish(std::integral_constant<int, j + 1>{}, next);
        __syncwarp();
        pivot(std::integral_constant<int, j + 1>{}, next[j + 1], na, nb);
      }
    }
#pragma unroll
    for (int c0 = (j + 2) / V * V; c0 < N; c0 += V) {
      T v[V];
      load16(buf + c0, v);
#pragma unroll
      for (int q = 0; q < V; ++q) {
        const int c = c0 + q;
        if (c < j + 2) continue;
        if (j < 32 && c < 32) ra[c < 32 ? c : 0] -= ta * v[q];
        rb[c] -= tb * v[q];
      }
    }
    ta = na;
    tb = nb;
  });
  store_row<T, 32>(A, lda, ra, lane, n, mvalid && lane < n);
  store_row<T, N>(A, lda, rb, lane + 32, n, mvalid && lane + 32 < n);
  if (mvalid && lane == 0) info[m] = fail;
}

}  // namespace gemflow::linalg::cuda::detail
