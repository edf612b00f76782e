#pragma once
// Kernels of the CUDA triangle smoothing (see gemflow/distgeom/smoothing_cuda.hpp for the
// algorithm). Layers: tuning policy → tile workers → kernels; host dispatch in smoothing_cuda.cu.
//
// Element pair semantics: a bound pair (U, L) at (i, j) is the doubled-graph element
// (U, −L); its "product" along i→k→j is U(i,k)+U(k,j) for U and the two crossing
// candidates L(i,k)−U(k,j), L(k,j)−U(i,k) for L. Out-of-range elements are padded with the
// neutral pair U = +∞, L = 0 (they never win a min/max and never produce NaN, since every
// valid L is finite).
#include <cuda_runtime.h>
#include <math_constants.h>

#include <cstddef>
#include <cstdint>

namespace gemflow::distgeom::cuda::detail {

using idx_t = long long;  // wide enough for n² and batch·n² offsets

template <class T>
__device__ __forceinline__ T pos_inf();
template <>
__device__ __forceinline__ float pos_inf<float>() {
  return CUDART_INF_F;
}
template <>
__device__ __forceinline__ double pos_inf<double>() {
  return CUDART_INF;
}

__device__ __forceinline__ float vmin(float a, float b) { return fminf(a, b); }
__device__ __forceinline__ float vmax(float a, float b) { return fmaxf(a, b); }
// fp64 min/max. sm_90 has no DMNMX: fmin/fmax compile to DSETP.MIN/MAX + selects with NaN
// handling, which bounds the fp64 closure. NaN never reaches a kernel (validated first), so a
// plain compare-select (DSETP + 2 FSEL) is exact and 1.34× faster at n = 8192 (fp64 add+min
// ceiling 2.64 → 7.39 T pairs/s; bit-pattern integer compares: 4.08; docs/performance.md).
// On ties the first operand (the accumulator) is kept.
__device__ __forceinline__ double vmin(double a, double b) { return b < a ? b : a; }
__device__ __forceinline__ double vmax(double a, double b) { return b > a ? b : a; }

/// Four consecutive elements from 16-byte-aligned shared memory.
__device__ __forceinline__ void load4(const float* p, float (&v)[4]) {
  const float4 x = *reinterpret_cast<const float4*>(p);
  v[0] = x.x;
  v[1] = x.y;
  v[2] = x.z;
  v[3] = x.w;
}
__device__ __forceinline__ void load4(const double* p, double (&v)[4]) {
  const double2 x = reinterpret_cast<const double2*>(p)[0];
  const double2 y = reinterpret_cast<const double2*>(p)[1];
  v[0] = x.x;
  v[1] = x.y;
  v[2] = y.x;
  v[3] = y.y;
}

// ---------------------------------------------------------------------------------------
// Register closure: one thread block closes one m×m matrix (m ≤ 4·TD) pivot by pivot.
// Thread (ty, tx) of TD×TD owns the 4×4 elements rows 4ty.., cols 4tx.. in registers.
// Per pivot k the owners of row k publish it to a double-buffered shared row (by symmetry
// it is also column k), one barrier, every thread updates its 16 elements.
// Used for phase 1 of the blocked closure (the diagonal tile) and for small batched matrices.
// ---------------------------------------------------------------------------------------
template <class T, int TD>
struct RegClosure {
  static constexpr int kThreads = TD * TD;
  static constexpr int kMax = 4 * TD;

  __device__ static void run(T* __restrict__ lower, T* __restrict__ upper, idx_t ld, int m) {
    __shared__ __align__(16) T row_u[2][kMax];
    __shared__ __align__(16) T row_l[2][kMax];
    const int tx = threadIdx.x % TD, ty = threadIdx.x / TD;
    const int i0 = 4 * ty, j0 = 4 * tx;
    T u[4][4], l[4][4];
#pragma unroll
    for (int a = 0; a < 4; ++a)
#pragma unroll
      for (int b = 0; b < 4; ++b) {
        const int i = i0 + a, j = j0 + b;
        if (i < m && j < m) {
          u[a][b] = upper[i * ld + j];
          l[a][b] = lower[i * ld + j];
        } else {
          u[a][b] = pos_inf<T>();
          l[a][b] = T(0);
        }
      }
    if (ty == 0) {
#pragma unroll
      for (int b = 0; b < 4; ++b) {
        row_u[0][j0 + b] = u[0][b];
        row_l[0][j0 + b] = l[0][b];
      }
    }
    for (int k = 0; k < m; ++k) {
      __syncthreads();
      const T* ru_s = row_u[k & 1];
      const T* rl_s = row_l[k & 1];
      const T lkk = rl_s[k];
      T cu[4], cl[4], ru[4], rl[4];
      load4(ru_s + j0, cu);
      load4(rl_s + j0, cl);
      load4(ru_s + i0, ru);
      load4(rl_s + i0, rl);
#pragma unroll
      for (int b = 0; b < 4; ++b) {
        cl[b] = vmax(cl[b], lkk - cu[b]);  // pivot k acting on row k (L′)
        rl[b] = vmax(rl[b], lkk - ru[b]);
      }
#pragma unroll
      for (int a = 0; a < 4; ++a)
#pragma unroll
        for (int b = 0; b < 4; ++b) {
          u[a][b] = vmin(u[a][b], ru[a] + cu[b]);
          l[a][b] = vmax(l[a][b], vmax(rl[a] - cu[b], cl[b] - ru[a]));
        }
      const int next = k + 1;
      if (next < m && (next >> 2) == ty) {
        const int a = next & 3;  // select with constant indices: keeps u, l in registers
#pragma unroll
        for (int b = 0; b < 4; ++b) {
          row_u[next & 1][j0 + b] = a == 0 ? u[0][b] : a == 1 ? u[1][b] : a == 2 ? u[2][b] : u[3][b];
          row_l[next & 1][j0 + b] = a == 0 ? l[0][b] : a == 1 ? l[1][b] : a == 2 ? l[2][b] : l[3][b];
        }
      }
    }
#pragma unroll
    for (int a = 0; a < 4; ++a)
#pragma unroll
      for (int b = 0; b < 4; ++b) {
        const int i = i0 + a, j = j0 + b;
        if (i < m && j < m) {
          upper[i * ld + j] = u[a][b];
          lower[i * ld + j] = l[a][b];
        }
      }
  }
};

/// grid.x = number of matrices; matrix b starts at b·stride.
template <class T, int TD>
__global__ void __launch_bounds__(TD* TD) reg_closure_kernel(T* lower, T* upper, idx_t ld, int m, idx_t stride) {
  const idx_t off = static_cast<idx_t>(blockIdx.x) * stride;
  RegClosure<T, TD>::run(lower + off, upper + off, ld, m);
}

// ---------------------------------------------------------------------------------------
// Streaming closure for batched matrices too large for registers: one block per matrix,
// the matrix in shared memory (kInShared) or in global memory; pivot row staged per step.
// ---------------------------------------------------------------------------------------
template <class T, bool kInShared>
__global__ void __launch_bounds__(512) stream_closure_kernel(T* lower_all, T* upper_all, int n) {
  extern __shared__ __align__(16) unsigned char smem_raw[];
  T* sm = reinterpret_cast<T*>(smem_raw);
  const idx_t nn = static_cast<idx_t>(n) * n;
  T* lower_g = lower_all + static_cast<idx_t>(blockIdx.x) * nn;
  T* upper_g = upper_all + static_cast<idx_t>(blockIdx.x) * nn;
  T* ru = sm;
  T* rl = sm + n;
  T* lw = lower_g;
  T* uw = upper_g;
  if constexpr (kInShared) {
    lw = sm + 2 * n;
    uw = lw + nn;
    for (idx_t e = threadIdx.x; e < nn; e += blockDim.x) {
      lw[e] = lower_g[e];
      uw[e] = upper_g[e];
    }
  }
  const int lane = threadIdx.x % 32, warp = threadIdx.x / 32, nwarps = blockDim.x / 32;
  for (int k = 0; k < n; ++k) {
    __syncthreads();  // previous step's writes done, previous row no longer read
    const T lkk = lw[static_cast<idx_t>(k) * n + k];
    for (int j = threadIdx.x; j < n; j += blockDim.x) {
      const T uk = uw[static_cast<idx_t>(k) * n + j];
      ru[j] = uk;
      rl[j] = vmax(lw[static_cast<idx_t>(k) * n + j], lkk - uk);
    }
    __syncthreads();
    for (int i = warp; i < n; i += nwarps) {
      const T rui = ru[i], rli = rl[i];
      for (int j = lane; j < n; j += 32) {
        const idx_t e = static_cast<idx_t>(i) * n + j;
        const T ruj = ru[j], rlj = rl[j];
        uw[e] = vmin(uw[e], rui + ruj);
        lw[e] = vmax(lw[e], vmax(rli - ruj, rlj - rui));
      }
    }
  }
  if constexpr (kInShared) {
    __syncthreads();
    for (idx_t e = threadIdx.x; e < nn; e += blockDim.x) {
      lower_g[e] = lw[e];
      upper_g[e] = uw[e];
    }
  }
}

// ---------------------------------------------------------------------------------------
// Tile product, phases 2 and 3 of the blocked closure (pivot block K of size TB).
//   C ← C ⊕ A ⊗ B over the TB pivots of block K:
//     U_C(i,j) = min(U_C, min_k U_A(k,i) + U_B(k,j))
//     L_C(i,j) = max(L_C, max_k L_A(k,i) − U_B(k,j), max_k L_B(k,j) − U_A(k,i))
//   A(k,i) and B(k,j) are rows k of the pivot row panel (symmetry: A(i,k) = A(k,i)).
//   Phase 2: C = B = tile (K, J), J ≠ K (read from (J, K) transposed when J < K, written to
//            both), A = the closed diagonal tile (K, K).
//   Phase 3: C = tile (I, J), I ≤ J, I, J ≠ K, of the upper triangle; A = (K, I), B = (K, J).
// 256 threads as 16×16; each thread owns R×R elements, rows 4ty + a + 64s, cols 4tx + b + 64s.
// Pivots are staged KC at a time in padded shared memory [KC][TB + PAD].
// ---------------------------------------------------------------------------------------
template <class T, int TB_>
struct ProductPolicy {
  static constexpr int TB = TB_;
  static constexpr int kThreads = 256;
  static constexpr int TD = 16;
  static constexpr int R = TB / TD;  // 8 (TB 128) or 4 (TB 64)
  static constexpr int KC = 32;      // pivots per stage, synchronous staging (phase 2)
  static constexpr int KCA = 16;     // pivots per stage, cp.async double buffer (phase 3)
  static_assert(2 * KCA == KC, "both stagings use the same shared memory");
  static constexpr int PAD = 16 / sizeof(T);
  static constexpr int LDS = TB + PAD;  // shared row stride (elements), 16-byte multiple
  static constexpr std::size_t smem_bytes = 4ull * KC * LDS * sizeof(T);
  static constexpr int kMinBlocks = (sizeof(T) == 8 || R == 4) ? 2 : 1;
  static constexpr int kUnroll = sizeof(T) == 8 ? 1 : 4;  // fp64: stay within 128 registers
  static_assert(R == 4 || R == 8, "4x4 or 8x8 register tiles");
};

/// Asynchronous 4- or 8-byte copy global → shared; src_bytes = 0 writes zero (src not read).
template <class T>
__device__ __forceinline__ void cp_async(T* dst, const T* src, bool valid) {
  const unsigned d = static_cast<unsigned>(__cvta_generic_to_shared(dst));
  const int n = valid ? static_cast<int>(sizeof(T)) : 0;
  if constexpr (sizeof(T) == 4)
    asm volatile("cp.async.ca.shared.global [%0], [%1], 4, %2;\n" ::"r"(d), "l"(src), "r"(n));
  else asm volatile("cp.async.ca.shared.global [%0], [%1], 8, %2;\n" ::"r"(d), "l"(src), "r"(n));
}
__device__ __forceinline__ void cp_async_commit() { asm volatile("cp.async.commit_group;\n" ::); }
__device__ __forceinline__ void cp_async_wait_one() { asm volatile("cp.async.wait_group 1;\n" ::); }

/// Stages pivots [kc, kc + KCA) of the row panel, columns c0.. c0+TB, into (su, sl) [KCA][LDS]
/// asynchronously. Columns ≥ n are zero-filled (they only feed outputs that are not stored);
/// pivots ≥ kcount get the neutral pair (+∞, 0) by ordinary stores.
template <class P, class T>
__device__ __forceinline__ void stage_async(T* su, T* sl, const T* __restrict__ upper, const T* __restrict__ lower,
                                            idx_t ldn, int n, int k0, int kc, int kcount, int c0) {
  constexpr int TB = P::TB, LDS = P::LDS;
#pragma unroll 1  // cp.async does not wait: a rolled loop costs no latency and few registers
  for (int it = 0; it < P::KCA * TB / P::kThreads; ++it) {
    const int e = it * P::kThreads + threadIdx.x;
    const int kk = e / TB, c = e % TB;
    T* du = su + kk * LDS + c;
    T* dl = sl + kk * LDS + c;
    if (kc + kk < kcount) {
      const bool ok = c0 + c < n;
      const idx_t g = ok ? (k0 + kc + kk) * ldn + c0 + c : 0;
      cp_async(du, upper + g, ok);
      cp_async(dl, lower + g, ok);
    } else {
      *du = pos_inf<T>();
      *dl = T(0);
    }
  }
}

__device__ __forceinline__ void decode_upper_tile(idx_t p, int& I, int& J) {
  // p = J(J+1)/2 + I, 0 ≤ I ≤ J
  int j = static_cast<int>((sqrt(8.0 * static_cast<double>(p) + 1.0) - 1.0) * 0.5);
  while (static_cast<idx_t>(j) * (j + 1) / 2 > p) --j;
  while (static_cast<idx_t>(j + 1) * (j + 2) / 2 <= p) ++j;
  J = j;
  I = static_cast<int>(p - static_cast<idx_t>(j) * (j + 1) / 2);
}

template <class P, class T, bool kPhase2>
__global__ void __launch_bounds__(P::kThreads, P::kMinBlocks)
    tile_product_kernel(T* __restrict__ lower, T* __restrict__ upper, int n, int K, idx_t stride) {
  constexpr int TB = P::TB, R = P::R, KC = P::KC, LDS = P::LDS, NS = R / 4;
  lower += static_cast<idx_t>(blockIdx.y) * stride;  // matrix blockIdx.y of a batch
  upper += static_cast<idx_t>(blockIdx.y) * stride;
  extern __shared__ __align__(16) unsigned char smem_raw[];
  T* a_u = reinterpret_cast<T*>(smem_raw);
  T* a_l = a_u + KC * LDS;
  T* b_u = a_l + KC * LDS;
  T* b_l = b_u + KC * LDS;

  int I, J;
  if constexpr (kPhase2) {
    I = K;
    J = blockIdx.x;
    if (J == K) return;
  } else {
    decode_upper_tile(blockIdx.x, I, J);
    if (I == K || J == K) return;
  }
  const idx_t ldn = n;
  const int k0 = K * TB, i0 = I * TB, j0 = J * TB;
  const bool b_transposed = kPhase2 && J < K;  // tile (K, J) lives in (J, K)
  const int tx = threadIdx.x % P::TD, ty = threadIdx.x / P::TD;

  auto row_of = [&](int a, int s) { return 4 * ty + a + 64 * s; };
  auto col_of = [&](int b, int s) { return 4 * tx + b + 64 * s; };

  T u[R][R], l[R][R];
#pragma unroll
  for (int s = 0; s < NS; ++s)
#pragma unroll
    for (int a = 0; a < 4; ++a)
#pragma unroll
      for (int t = 0; t < NS; ++t)
#pragma unroll
        for (int b = 0; b < 4; ++b) {
          const int gi = i0 + row_of(a, s), gj = j0 + col_of(b, t);
          T uv = pos_inf<T>(), lv = T(0);
          if (gi < n && gj < n) {
            const idx_t e = b_transposed ? gj * ldn + gi : gi * ldn + gj;
            uv = upper[e];
            lv = lower[e];
          }
          u[4 * s + a][4 * t + b] = uv;
          l[4 * s + a][4 * t + b] = lv;
        }

  const int kcount = min(TB, n - k0);
  // C ⊕= A ⊗ B over `count` staged pivots at (su_a, sl_a, su_b, sl_b), row stride LDS.
  auto multiply = [&](const T* sa_u, const T* sa_l, const T* sb_u, const T* sb_l, int count) {
#pragma unroll P::kUnroll
    for (int kk = 0; kk < count; ++kk) {
      T au[R], al[R], bu[R], bl[R];
#pragma unroll
      for (int s = 0; s < NS; ++s) {
        T v[4];
        load4(sa_u + kk * LDS + 4 * ty + 64 * s, v);
#pragma unroll
        for (int a = 0; a < 4; ++a) au[4 * s + a] = v[a];
        load4(sa_l + kk * LDS + 4 * ty + 64 * s, v);
#pragma unroll
        for (int a = 0; a < 4; ++a) al[4 * s + a] = v[a];
        load4(sb_u + kk * LDS + 4 * tx + 64 * s, v);
#pragma unroll
        for (int a = 0; a < 4; ++a) bu[4 * s + a] = v[a];
        load4(sb_l + kk * LDS + 4 * tx + 64 * s, v);
#pragma unroll
        for (int a = 0; a < 4; ++a) bl[4 * s + a] = v[a];
      }
#pragma unroll
      for (int a = 0; a < R; ++a)
#pragma unroll
        for (int b = 0; b < R; ++b) {
          u[a][b] = vmin(u[a][b], au[a] + bu[b]);
          l[a][b] = vmax(l[a][b], al[a] - bu[b]);
          l[a][b] = vmax(l[a][b], bl[b] - au[a]);
        }
    }
  };

  if constexpr (!kPhase2) {
    // Phase 3: double-buffered cp.async pipeline, KCA pivots per stage; stage s in
    // [a_u a_l b_u b_l] + s * 4 * KCA * LDS.
    constexpr int KCA = P::KCA, STAGE = 4 * KCA * LDS;
    const int chunks = (kcount + KCA - 1) / KCA;
    T* base = a_u;
    stage_async<P>(base, base + KCA * LDS, upper, lower, ldn, n, k0, 0, kcount, i0);
    stage_async<P>(base + 2 * KCA * LDS, base + 3 * KCA * LDS, upper, lower, ldn, n, k0, 0, kcount, j0);
    cp_async_commit();
    for (int c = 0; c < chunks; ++c) {
      if (c + 1 < chunks) {
        T* nb = base + ((c + 1) & 1) * STAGE;
        stage_async<P>(nb, nb + KCA * LDS, upper, lower, ldn, n, k0, (c + 1) * KCA, kcount, i0);
        stage_async<P>(nb + 2 * KCA * LDS, nb + 3 * KCA * LDS, upper, lower, ldn, n, k0, (c + 1) * KCA, kcount, j0);
      }
      cp_async_commit();
      cp_async_wait_one();  // all but the newest group done: stage c has landed
      __syncthreads();
      const T* cb = base + (c & 1) * STAGE;
      multiply(cb, cb + KCA * LDS, cb + 2 * KCA * LDS, cb + 3 * KCA * LDS, KCA);
      __syncthreads();  // stage c & 1 is refilled in iteration c + 1
    }
  } else {
    for (int kc = 0; kc < kcount; kc += KC) {
      __syncthreads();
      // Rows k (pivots) of a panel, columns x of the tile starting at g0: D(k0 + kc + k, g0 + x),
      // or D(g0 + x, k0 + kc + k) when transposed; +∞ / 0 past the end.
      const auto stage = [&](T* du, T* dl, int g0, bool transposed) {
        for (int e = threadIdx.x; e < KC * TB; e += P::kThreads) {
          const int kk = transposed ? e % KC : e / TB, x = transposed ? e / KC : e % TB;
          const int gk = k0 + kc + kk, gx = g0 + x;
          T uv = pos_inf<T>(), lv = T(0);
          if (kc + kk < kcount && gx < n) {
            const idx_t at = transposed ? gx * ldn + gk : gk * ldn + gx;
            uv = upper[at];
            lv = lower[at];
          }
          du[kk * LDS + x] = uv;
          dl[kk * LDS + x] = lv;
        }
      };
      stage(a_u, a_l, i0, false);  // A(k, i) = D(k0 + k, i0 + i)
      if (b_transposed) stage(b_u, b_l, j0, true);
      else stage(b_u, b_l, j0, false);
      __syncthreads();
      multiply(a_u, a_l, b_u, b_l, KC);
    }
  }

#pragma unroll
  for (int s = 0; s < NS; ++s)
#pragma unroll
    for (int a = 0; a < 4; ++a)
#pragma unroll
      for (int t = 0; t < NS; ++t)
#pragma unroll
        for (int b = 0; b < 4; ++b) {
          const int gi = i0 + row_of(a, s), gj = j0 + col_of(b, t);
          if (gi < n && gj < n) {
            const T uv = u[4 * s + a][4 * t + b], lv = l[4 * s + a][4 * t + b];
            upper[gi * ldn + gj] = uv;
            lower[gi * ldn + gj] = lv;
            if (b_transposed) {
              upper[gj * ldn + gi] = uv;
              lower[gj * ldn + gi] = lv;
            }
          }
        }
}

// ---------------------------------------------------------------------------------------
// Lower triangle ← upper triangle (32×32 tiles through shared memory), both matrices.
// ---------------------------------------------------------------------------------------
template <class T>
__global__ void mirror_upper_kernel(T* lower, T* upper, int n, idx_t stride) {
  __shared__ T tu[32][33];
  __shared__ T tl[32][33];
  lower += static_cast<idx_t>(blockIdx.z) * stride;  // matrix blockIdx.z of a batch
  upper += static_cast<idx_t>(blockIdx.z) * stride;
  const int bx = blockIdx.x, by = blockIdx.y;  // destination tile: rows by, cols bx
  if (bx > by) return;
  const idx_t ldn = n;
  const int tx = threadIdx.x, ty0 = threadIdx.y;  // 32 × 8 threads
  for (int ty = ty0; ty < 32; ty += 8) {          // source tile rows bx, cols by
    const int si = bx * 32 + ty, sj = by * 32 + tx;
    if (si < n && sj < n) {
      tu[ty][tx] = upper[si * ldn + sj];
      tl[ty][tx] = lower[si * ldn + sj];
    }
  }
  __syncthreads();
  for (int ty = ty0; ty < 32; ty += 8) {
    const int di = by * 32 + ty, dj = bx * 32 + tx;
    if (di < n && dj < n && di > dj) {
      upper[di * ldn + dj] = tu[tx][ty];
      lower[di * ldn + dj] = tl[tx][ty];
    }
  }
}

// ---------------------------------------------------------------------------------------
// Validation and consistency check (first offending element by atomicMin on its index).
// ---------------------------------------------------------------------------------------
// Key of a defect: (pass << 62) | (element << 3) | kind. Pass 0 = value defects, pass 1 =
// structural ones, as in the CPU check_bounds(); the smallest key is the reported defect.
enum : unsigned { kBadNaN = 0, kBadNegative, kBadInfLower, kBadDiagonal, kBadAsymmetric, kBadLowerAboveUpper };

template <class T>
__global__ void validate_kernel(const T* lower, const T* upper, idx_t n, idx_t total, double tol,
                                unsigned long long* first) {
  const idx_t nn = n * n;
  for (idx_t e = blockIdx.x * static_cast<idx_t>(blockDim.x) + threadIdx.x; e < total;
       e += static_cast<idx_t>(gridDim.x) * blockDim.x) {
    const idx_t b = e / nn, r = e - b * nn, i = r / n, j = r - i * n;
    const T lv = lower[e], uv = upper[e];
    unsigned kind = 8;
    if (isnan(lv) || isnan(uv)) kind = kBadNaN;
    else if (lv < T(0) || uv < T(0)) kind = kBadNegative;
    else if (isinf(lv)) kind = kBadInfLower;
    if (kind == 8) {
      const idx_t et = b * nn + j * n + i;
      if (i == j) {
        if (lv != T(0) || uv != T(0)) kind = kBadDiagonal;
      } else if (lv != lower[et] || uv != upper[et]) {
        kind = kBadAsymmetric;
      } else if (static_cast<double>(lv) > static_cast<double>(uv) + tol) {
        kind = kBadLowerAboveUpper;
      }
    }
    if (kind != 8) {
      const unsigned long long pass = kind >= kBadDiagonal ? 1ull : 0ull;
      atomicMin(first, (pass << 62) | (static_cast<unsigned long long>(e) << 3) | kind);
    }
  }
}

/// Per matrix b: first[b] = min row-major index i·n+j (i < j) with L > U + tol, count[b].
template <class T>
__global__ void consistency_kernel(const T* lower, const T* upper, idx_t n, idx_t total, double tol,
                                   unsigned long long* first, unsigned long long* count) {
  const idx_t nn = n * n;
  idx_t cur_b = -1;
  unsigned long long my_first = ~0ull, my_count = 0;
  for (idx_t e = blockIdx.x * static_cast<idx_t>(blockDim.x) + threadIdx.x; e < total;
       e += static_cast<idx_t>(gridDim.x) * blockDim.x) {
    const idx_t b = e / nn, r = e - b * nn, i = r / n, j = r - i * n;
    if (j <= i) continue;
    if (static_cast<double>(lower[e]) > static_cast<double>(upper[e]) + tol) {
      if (b != cur_b) {
        if (my_count) {
          atomicMin(first + cur_b, my_first);
          atomicAdd(count + cur_b, my_count);
        }
        cur_b = b;
        my_first = ~0ull;
        my_count = 0;
      }
      my_first = min(my_first, static_cast<unsigned long long>(r));
      ++my_count;
    }
  }
  if (my_count) {
    atomicMin(first + cur_b, my_first);
    atomicAdd(count + cur_b, my_count);
  }
}

/// values[2b], values[2b+1] = L, U at first[b] (when count[b] > 0).
template <class T>
__global__ void gather_first_kernel(const T* lower, const T* upper, idx_t n, idx_t batch,
                                    const unsigned long long* first, const unsigned long long* count, double* values) {
  for (idx_t b = blockIdx.x * static_cast<idx_t>(blockDim.x) + threadIdx.x; b < batch;
       b += static_cast<idx_t>(gridDim.x) * blockDim.x) {
    if (count[b] == 0) continue;
    const idx_t e = b * n * n + static_cast<idx_t>(first[b]);
    values[2 * b] = static_cast<double>(lower[e]);
    values[2 * b + 1] = static_cast<double>(upper[e]);
  }
}

template <class To, class From>
__global__ void convert_kernel(To* dst, const From* src, idx_t count) {
  for (idx_t e = blockIdx.x * static_cast<idx_t>(blockDim.x) + threadIdx.x; e < count;
       e += static_cast<idx_t>(gridDim.x) * blockDim.x)
    dst[e] = static_cast<To>(src[e]);
}

}  // namespace gemflow::distgeom::cuda::detail
