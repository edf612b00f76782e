#pragma once
// y = A·x for a symmetric A stored in its lower triangle (fp64, column-major), one vector: the
// residuals and the FGMRES products of the mixed solve. cuBLAS DSYMV reads the triangle at about
// 2 TB/s on an H200 (0.52 ms at n = 16384) and 3 TB/s at 8192 (0.089 ms); this at 3.5 (0.31 ms)
// and 3.1 (0.087 ms), 3.7 TB/s at 32k (`linalg_bench_cholesky_timeline --passes`; a copy moves
// 4.2). It reads every stored tile once and is
// deterministic (no atomics): pass 1, one CTA per 64×64 tile (I, J) of the lower triangle, writes
// A_IJ·x_J into p (row J of partials) and, off the diagonal, A_IJᵀ·x_I into q (row I); pass 2
// sums each y_k's partials in a fixed order. Workspace: symv_workspace_doubles(n). For the
// componentwise backward error ω = max_k |r_k| / (|A|·|x| + |b|)_k (normwise.hpp) of a residual,
// SymvOmega::exact sums |A|·|x| in the same pass (partials pa, qa in a workspace of their own:
// symv_abs_workspace_doubles; +0.02 ms at n = 16384), SymvOmega::bound takes
// ω̂ = max_k |r_k| / max(|b_k|, |a_kk·x_k|) ≥ ω from the diagonal alone (n loads).
#include <cuda_runtime.h>

#include <cstdint>

#include "../normwise.hpp"

namespace gemflow::linalg::cuda::detail {

constexpr int kSymvT = 64;           ///< tile order
constexpr int kSymvLd = kSymvT + 1;  ///< shared row stride (conflict-free columns)
constexpr int kSymvThreads = 2 * kSymvT;

constexpr std::int64_t symv_tiles(std::int64_t n) { return (n + kSymvT - 1) / kSymvT; }
/// What symv_lower measures of ω besides y (maxes[2]).
enum class SymvOmega { none, bound, exact };

/// p and q: tiles × n doubles each.
constexpr std::int64_t symv_workspace_doubles(std::int64_t n) { return 2 * symv_tiles(n) * n; }
/// SymvOmega::exact's pa and qa: tiles × n doubles each.
constexpr std::int64_t symv_abs_workspace_doubles(std::int64_t n) { return symv_workspace_doubles(n); }

/// ω̂_k = |r_k| / max(|b_k|, |a_kk·x_k|) ≥ ω_k for one entry (ry = |r_k|), by divisions only: a
/// product that overflows would make it 0, and a quotient that underflows first is taken in the
/// other order. ∞ when x_k is not finite or both divisors are 0; NaN with a NaN r_k.
__host__ __device__ inline double omega_bound_entry(double ry, double bk, double akk, double xk) {
  if (!isfinite(xk)) return INFINITY;
  if (ry == 0.0) return 0.0;
  double q = ry / fabs(akk) / fabs(xk);
  if (q == 0.0) q = ry / fabs(xk) / fabs(akk);
  return fmin(ry / fabs(bk), q);
}

/// Pass 1: one CTA per tile (I, J), J ≤ I, of the lower triangle (blockIdx.x = I·(I + 1)/2 + J);
/// threads 0 … 63 form the row sums of the tile, 64 … 127 its column sums (A_IJᵀ·x_I), from shared
/// memory. Each thread has its 32 loads of A in flight at once. kAbs: the same sums of |A|·|x|·sc
/// (sc a power of two, so that they stay within double) into pa and qa. Does nothing when
/// skip ≠ nullptr and *skip ≠ 0.
template <bool kAbs>
__global__ void __launch_bounds__(kSymvThreads)
    symv_tiles_kernel(const double* a, std::int64_t lda, std::int64_t n, const double* x, double* p, double* q,
                      double* pa, double* qa, const unsigned* skip, double sc = 1.0) {
  if (skip && *skip) return;
  const std::int64_t bt = blockIdx.x;
  std::int64_t I = static_cast<std::int64_t>((sqrt(8.0 * static_cast<double>(bt) + 1.0) - 1.0) * 0.5);
  while ((I + 1) * (I + 2) / 2 <= bt) ++I;
  while (I * (I + 1) / 2 > bt) --I;
  const std::int64_t J = bt - I * (I + 1) / 2;
  __shared__ double s[kSymvT * kSymvLd];  // A(i, c) at i·kSymvLd + c
  __shared__ double xi[kSymvT], xj[kSymvT];
  __shared__ double axi[kAbs ? kSymvT : 1], axj[kAbs ? kSymvT : 1];  // |x|·sc
  const int t = threadIdx.x;
  const std::int64_t i0 = I * kSymvT, j0 = J * kSymvT;
  {
    const int i = t % kSymvT, h = t / kSymvT;  // row i, columns h, h + 2, … (coalesced over i)
    const bool row_ok = i0 + i < n;
    double v[kSymvT / 2];
#pragma unroll
    for (int u = 0; u < kSymvT / 2; ++u) {
      const int c = h + 2 * u;
      const bool ok = row_ok && j0 + c < n && (I != J || c <= i);
      v[u] = ok ? a[(i0 + i) + (j0 + c) * lda] : 0.0;
    }
#pragma unroll
    for (int u = 0; u < kSymvT / 2; ++u) s[i * kSymvLd + h + 2 * u] = v[u];
    if (h == 0) {
      xi[i] = row_ok ? x[i0 + i] : 0.0;
      if constexpr (kAbs) axi[i] = fabs(xi[i]) * sc;
    } else {
      xj[i] = j0 + i < n ? x[j0 + i] : 0.0;
      if constexpr (kAbs) axj[i] = fabs(xj[i]) * sc;
    }
  }
  __syncthreads();
  const int k = t % kSymvT;
  double sum[4] = {}, asum[4] = {};  // four independent chains, summed in a fixed order
  if (t < kSymvT) {                  // row k: Σ_c A(k, c)·x_J(c); on the diagonal tile the upper half is A(c, k)
    if (I != J) {
#pragma unroll 16
      for (int c = 0; c < kSymvT; ++c) {
        const double v = s[k * kSymvLd + c];
        sum[c % 4] += v * xj[c];
        if constexpr (kAbs) asum[c % 4] += fabs(v) * axj[c];
      }
    } else {
#pragma unroll 16
      for (int c = 0; c < kSymvT; ++c) {
        const double v = c <= k ? s[k * kSymvLd + c] : s[c * kSymvLd + k];
        sum[c % 4] += v * xj[c];
        if constexpr (kAbs) asum[c % 4] += fabs(v) * axj[c];
      }
    }
    if (i0 + k < n) {
      p[J * n + i0 + k] = (sum[0] + sum[1]) + (sum[2] + sum[3]);
      if constexpr (kAbs) pa[J * n + i0 + k] = (asum[0] + asum[1]) + (asum[2] + asum[3]);
    }
  } else if (I != J) {  // column k: Σ_i A(i, k)·x_I(i)
#pragma unroll 16
    for (int i = 0; i < kSymvT; ++i) {
      const double v = s[i * kSymvLd + k];
      sum[i % 4] += v * xi[i];
      if constexpr (kAbs) asum[i % 4] += fabs(v) * axi[i];
    }
    if (j0 + k < n) {
      q[I * n + j0 + k] = (sum[0] + sum[1]) + (sum[2] + sum[3]);
      if constexpr (kAbs) qa[I * n + j0 + k] = (asum[0] + asum[1]) + (asum[2] + asum[3]);
    }
  }
}

constexpr int kSymvSumK = 32;    ///< pass 2: entries of y per CTA (one warp's coalesced run)
constexpr int kSymvSumSegs = 8;  ///< pass 2: threads that share one entry's partials

/// Pass 2: y_k = Σ_{J ≤ K} p[J][k] + Σ_{I > K} q[I][k] (K = k's tile); y = b − A·x when b ≠
/// nullptr (the residual), else A·x. CTA of kSymvSumK·kSymvSumSegs threads: warp s sums the
/// partials of tiles s, s + kSymvSumSegs, … of kSymvSumK consecutive entries (coalesced), then
/// the segments are added in a fixed order, so the result is deterministic. One thread per entry
/// left half the GPU idle at n = 16k (64 CTAs): 0.047 ms of the SYMV's 0.40. maxes ≠ nullptr:
/// maxes[0] = max(maxes[0], max_k |y_k|) and maxes[1] the same for x, as the bits of the doubles
/// (colmax_kernel's ordering: NaN above +Inf). kAbs (b and maxes given): maxes[2] the same for
/// ω_k = |y_k|·sc / (Σ partials of |A|·|x|·sc + |b_k|·sc) (0 when y_k = 0; ∞ when the sum is ∞:
/// x not finite, or sc too large, never 0). Otherwise, with diag ≠ nullptr (A, leading dimension
/// lda; b and maxes given): maxes[2] for ω̂_k ≥ ω_k (omega_bound_entry). Does nothing when
/// skip ≠ nullptr and *skip ≠ 0.
template <bool kAbs>
__global__ void __launch_bounds__(kSymvSumK* kSymvSumSegs)
    symv_sum_kernel(std::int64_t n, const double* p, const double* q, const double* pa, const double* qa,
                    const double* b, double* y, const double* x, unsigned long long* maxes, const unsigned* skip,
                    const double* diag = nullptr, std::int64_t lda = 0, double sc = 1.0) {
  if (skip && *skip) return;
  __shared__ double part[kSymvSumSegs][kSymvSumK];
  __shared__ double apart[kAbs ? kSymvSumSegs : 1][kSymvSumK];
  const int lane = threadIdx.x % kSymvSumK, seg = threadIdx.x / kSymvSumK;
  const std::int64_t k = std::int64_t(blockIdx.x) * kSymvSumK + lane;
  double s[2] = {}, sa[2] = {};
  if (k < n) {
    const std::int64_t K = k / kSymvT, nt = symv_tiles(n);
    int u = 0;
    for (std::int64_t T = seg; T < nt; T += kSymvSumSegs, u ^= 1) {
      s[u] += T <= K ? p[T * n + k] : q[T * n + k];
      if constexpr (kAbs) sa[u] += T <= K ? pa[T * n + k] : qa[T * n + k];
    }
  }
  part[seg][lane] = s[0] + s[1];
  if constexpr (kAbs) apart[seg][lane] = sa[0] + sa[1];
  __syncthreads();
  if (seg != 0) return;
  unsigned long long ymax = 0, xmax = 0, wmax = 0;
  if (k < n) {
    double sum = 0.0, asum = 0.0;
#pragma unroll
    for (int g = 0; g < kSymvSumSegs; ++g) {
      sum += part[g][lane];
      if constexpr (kAbs) asum += apart[g][lane];
    }
    const double bk = b ? b[k] : 0.0;  // read before y (which may alias b) is written
    const double yk = b ? bk - sum : sum;
    y[k] = yk;
    ymax = static_cast<unsigned long long>(__double_as_longlong(fabs(yk)));
    if (maxes) xmax = static_cast<unsigned long long>(__double_as_longlong(fabs(x[k])));
    if constexpr (kAbs) {
      const double ry = fabs(yk) * sc, den = asum + fabs(bk) * sc;
      const double w = ry == 0.0 ? 0.0 : isinf(den) ? INFINITY : ry / den;
      wmax = static_cast<unsigned long long>(__double_as_longlong(fabs(w)));
    } else if (diag && b && maxes) {
      const double w = omega_bound_entry(fabs(yk), bk, diag[k + k * lda], x[k]);
      wmax = static_cast<unsigned long long>(__double_as_longlong(fabs(w)));
    }
  }
  if (!maxes) return;
  for (int o = 16; o > 0; o >>= 1) {
    ymax = max(ymax, __shfl_down_sync(0xffffffffu, ymax, o));
    xmax = max(xmax, __shfl_down_sync(0xffffffffu, xmax, o));
    wmax = max(wmax, __shfl_down_sync(0xffffffffu, wmax, o));
  }
  if (lane == 0) {
    atomicMax(maxes, ymax);
    atomicMax(maxes + 1, xmax);
    if (kAbs || diag) atomicMax(maxes + 2, wmax);
  }
}

/// y = A·x (b = nullptr) or y = b − A·x; work: symv_workspace_doubles(n) doubles. y may alias b,
/// not x. maxes ≠ nullptr (2 words, 3 with an omega, zeroed before): max |y|, max |x| and (b
/// given) ω or its bound ω̂, as in symv_sum_kernel; SymvOmega::exact needs abs_work
/// (symv_abs_workspace_doubles(n)) and a power of two sc that keeps (|A|·|x| + |b|)·sc within
/// double (ω is the same for any sc). skip ≠ nullptr: nothing is done when *skip ≠ 0 at the time
/// the kernels run. Asynchronous on `stream`.
inline void symv_lower(const double* a, std::int64_t lda, std::int64_t n, const double* x, const double* b, double* y,
                       double* work, cudaStream_t stream, unsigned long long* maxes = nullptr,
                       const unsigned* skip = nullptr, SymvOmega omega = SymvOmega::none, double* abs_work = nullptr,
                       double sc = 1.0) {
  if (n == 0) return;
  const std::int64_t nt = symv_tiles(n);
  double* p = work;
  double* q = work + nt * n;
  const auto tiles = static_cast<unsigned>(nt * (nt + 1) / 2);
  const auto sums = static_cast<unsigned>((n + kSymvSumK - 1) / kSymvSumK);
  if (omega == SymvOmega::exact && b && maxes && abs_work) {
    double* pa = abs_work;
    double* qa = abs_work + nt * n;
    symv_tiles_kernel<true><<<tiles, kSymvThreads, 0, stream>>>(a, lda, n, x, p, q, pa, qa, skip, sc);
    symv_sum_kernel<true>
        <<<sums, kSymvSumK * kSymvSumSegs, 0, stream>>>(n, p, q, pa, qa, b, y, x, maxes, skip, nullptr, 0, sc);
    return;
  }
  symv_tiles_kernel<false><<<tiles, kSymvThreads, 0, stream>>>(a, lda, n, x, p, q, nullptr, nullptr, skip);
  const bool bound = omega == SymvOmega::bound && b && maxes;
  symv_sum_kernel<false><<<sums, kSymvSumK * kSymvSumSegs, 0, stream>>>(n, p, q, nullptr, nullptr, b, y, x, maxes, skip,
                                                                        bound ? a : nullptr, lda);
}

}  // namespace gemflow::linalg::cuda::detail
