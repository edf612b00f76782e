#pragma once
// One-block Cholesky of a leaf in shared memory (the recursive and blocked algorithms' own leaves)
// and the pivot test that the batched kernels share.
// Column-major, lower, LAPACK dpotf2 arithmetic (right-looking, column scaled by 1/ljj).
#include <cuda_runtime.h>

#include <cstdint>

#include "context.cuh"

namespace gemflow::linalg::cuda::detail {

template <class T>
__device__ __forceinline__ bool bad_pivot(T d) {
  return !(d > T(0)) || isinf(d);  // ≤ 0, NaN or +Inf
}

/// D += A·B on the fp64 tensor cores (sm_80+): m8n8k4, lane l = 4r + q holds A(r, q), B(q, r)
/// and D(r, 2q), D(r, 2q + 1).
__device__ __forceinline__ void dmma_m8n8k4(double2& d, double a, double b) {
  asm volatile("mma.sync.aligned.m8n8k4.row.col.f64.f64.f64.f64 {%0,%1}, {%2}, {%3}, {%0,%1};"
               : "+d"(d.x), "+d"(d.y)
               : "d"(a), "d"(b));
}

/// D += A·B on the fp64 tensor cores, m16n8k8 (sm_90+; twice the rate of m8n8k4 on an H200,
/// docs/performance.md). g = lane / 4, t = lane % 4: a0..a3 = A(g, t), A(g + 8, t), A(g, t + 4),
/// A(g + 8, t + 4); b0, b1 = B(t, g), B(t + 4, g); d = D(g, 2t), D(g, 2t + 1), D(g + 8, 2t),
/// D(g + 8, 2t + 1). On sm_80 the same product as four m8n8k4.
__device__ __forceinline__ void dmma_m16n8k8(double (&d)[4], double a0, double a1, double a2, double a3, double b0,
                                             double b1) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("mma.sync.aligned.m16n8k8.row.col.f64.f64.f64.f64 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};"
               : "+d"(d[0]), "+d"(d[1]), "+d"(d[2]), "+d"(d[3])
               : "d"(a0), "d"(a1), "d"(a2), "d"(a3), "d"(b0), "d"(b1));
#else
  double2 top = make_double2(d[0], d[1]), bot = make_double2(d[2], d[3]);
  dmma_m8n8k4(top, a0, b0);
  dmma_m8n8k4(top, a2, b1);
  dmma_m8n8k4(bot, a1, b0);
  dmma_m8n8k4(bot, a3, b1);
  d[0] = top.x, d[1] = top.y, d[2] = bot.x, d[3] = bot.y;
#endif
}

/// Factors the n×n lower triangle (n ≤ NB) held in shared memory s (ld = NB + 1) in place.
/// Block of 32 × TY threads. Returns 0 or the 1-based failing pivot (uniform over the block).
/// One barrier per column: column j is scaled lazily during step j+1 (nobody reads it again).
template <class T, int NB, int TY>
__device__ int potrf_shared(T* s, int n) {
  constexpr int LD = NB + 1;
  const int tx = threadIdx.x, ty = threadIdx.y;
  int fail = 0;
  T prev_inv = T(0), prev_ljj = T(0);
  for (int j = 0; j < n; ++j) {
    const T p = s[j + j * LD];
    if (bad_pivot(p)) {
      fail = j + 1;
      break;
    }
    const T ljj = sqrt(p);
    const T inv = T(1) / ljj;
    // finish column j-1 (scaled by its own 1/ljj): nobody reads it any more.
    if (j > 0 && ty == 0) {
      for (int r = j + tx; r < n; r += 32) s[r + (j - 1) * LD] *= prev_inv;
      if (tx == 0) s[(j - 1) + (j - 1) * LD] = prev_ljj;
    }
    // trailing update A(r, c) -= l(r) l(c), j < c ≤ r < n
    for (int c = j + 1 + ty; c < n; c += TY) {
      const T lc = s[c + j * LD] * inv;
      for (int r = c + ((tx - (c - j - 1)) % 32 + 32) % 32; r < n; r += 32) {
        s[r + c * LD] -= (s[r + j * LD] * inv) * lc;
      }
    }
    prev_inv = inv;
    prev_ljj = ljj;
    __syncthreads();
  }
  // finish the last column that completed
  const int last = fail ? fail - 2 : n - 1;
  if (last >= 0 && ty == 0) {
    for (int r = last + 1 + tx; r < n; r += 32) s[r + last * LD] *= prev_inv;
    if (tx == 0) s[last + last * LD] = prev_ljj;
  }
  __syncthreads();
  return fail;
}

/// Copies the lower triangle of the n×n column-major matrix a (lda) into s (ld NB+1).
template <class T, int NB>
__device__ void load_lower(T* s, const T* a, std::int64_t lda, int n) {
  const int tid = threadIdx.x + threadIdx.y * blockDim.x, nt = blockDim.x * blockDim.y;
  for (int c = 0; c < n; ++c)
    for (int r = c + tid; r < n; r += nt) s[r + c * (NB + 1)] = a[r + c * lda];
  __syncthreads();
}

template <class T, int NB>
__device__ void store_lower(T* a, std::int64_t lda, const T* s, int n) {
  const int tid = threadIdx.x + threadIdx.y * blockDim.x, nt = blockDim.x * blockDim.y;
  for (int c = 0; c < n; ++c)
    for (int r = c + tid; r < n; r += nt) a[r + c * lda] = s[r + c * (NB + 1)];
}

template <class T, int NB>
constexpr std::size_t shared_bytes() {
  return sizeof(T) * static_cast<std::size_t>(NB) * (NB + 1);
}

}  // namespace gemflow::linalg::cuda::detail
