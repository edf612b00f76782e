// Pivoted (rank-revealing) Cholesky of a PSD matrix, stopping after r pivots: the steps of
// LAPACK dpstf2 in left-looking order, one thread block. Each step: argmax of the remaining
// diagonal (lowest position on ties), swap, one column of L, diagonal downdate. Products and
// differences are not fused (__dmul_rn/__dsub_rn) and ljj divides, so the arithmetic is the
// CPU reference's (gemflow::linalg::pivoted_cholesky) operation for operation.
// Restricted variant (`allowed` flags by original row): the argmax runs over the allowed rows
// only, as in gemflow::linalg::pivoted_cholesky_restricted; every row is still eliminated.
#include <cuda_runtime.h>

#include <cfloat>
#include <climits>
#include <cmath>
#include <limits>
#include <stdexcept>
#include <string>
#include <vector>

#include "context.cuh"  // GpuCholesky::Impl; gemflow/cuda/ checks and buffers

namespace gemflow::linalg::cuda {
namespace detail {

struct PivotedOut {
  long long rank;
  long long nonfinite_pos;  // −1 = none, else the position whose remaining diagonal is NaN/Inf
  int rank_deficient;
  int pad;
  double next_pivot;
  double tolerance;
};
// The host copies the struct back whole (compute-sanitizer initcheck checks every byte of the
// copy): no implicit padding.
static_assert(sizeof(PivotedOut) == 2 * sizeof(long long) + 2 * sizeof(int) + 2 * sizeof(double));

constexpr int kPivThreads = 1024;

struct ArgMax {
  double v;
  long long i;
};

__device__ __forceinline__ ArgMax better(ArgMax a, ArgMax b) {
  // larger value wins, lower position on ties
  if (b.v > a.v || (b.v == a.v && b.i < a.i)) return b;
  return a;
}

__device__ ArgMax block_argmax(ArgMax x, ArgMax* scratch) {
  for (int o = 16; o > 0; o >>= 1) {
    ArgMax y{__shfl_down_sync(0xffffffffu, x.v, o), __shfl_down_sync(0xffffffffu, x.i, o)};
    x = better(x, y);
  }
  const int lane = threadIdx.x % 32, w = threadIdx.x / 32;
  if (lane == 0) scratch[w] = x;
  __syncthreads();
  if (w == 0) {
    x = lane < int(blockDim.x / 32) ? scratch[lane] : ArgMax{-INFINITY, LLONG_MAX};
    for (int o = 16; o > 0; o >>= 1) {
      ArgMax y{__shfl_down_sync(0xffffffffu, x.v, o), __shfl_down_sync(0xffffffffu, x.i, o)};
      x = better(x, y);
    }
    if (lane == 0) scratch[32] = x;
  }
  __syncthreads();
  const ArgMax r = scratch[32];
  __syncthreads();
  return r;
}

__device__ __forceinline__ double sym_at(const double* a, std::int64_t lda, long long r, long long c) {
  return r >= c ? a[r + c * lda] : a[c + r * lda];
}

// `allowed` (nullptr = every row): pivots only among rows r (original index) with allowed[r] != 0.
// kmax: pivots at most; kcols: columns of l (≥ kmax), those ≥ rank are zeroed. kmax < 0: the
// number of allowed rows (counted here; pivoted_cholesky_restricted's max_rank = 0).
__global__ void __launch_bounds__(kPivThreads)
    pivoted_kernel(const double* a, std::int64_t lda, std::int64_t n, std::int64_t kmax, std::int64_t kcols,
                   double tol_in, double* l, std::int64_t ldl, double* d, long long* perm, const unsigned char* allowed,
                   PivotedOut* out) {
  __shared__ ArgMax scratch[33];
  __shared__ int s_nonfinite;
  __shared__ long long s_count;
  const int tid = threadIdx.x, nt = blockDim.x;
  if (tid == 0) {
    s_nonfinite = 0;
    s_count = 0;
  }
  __syncthreads();
  ArgMax loc{-INFINITY, LLONG_MAX};
  long long cnt = 0;
  for (std::int64_t i = tid; i < n; i += nt) {
    d[i] = a[i + i * lda];
    perm[i] = i;
    loc = better(loc, ArgMax{d[i], i});
    if (allowed != nullptr && allowed[i] != 0) ++cnt;
  }
  if (cnt) atomicAdd(reinterpret_cast<unsigned long long*>(&s_count), static_cast<unsigned long long>(cnt));
  __syncthreads();
  const ArgMax dmax0 = block_argmax(loc, scratch);  // (syncs: s_count is complete)
  const double tol = tol_in < 0 ? static_cast<double>(n) * DBL_EPSILON * dmax0.v : tol_in;
  if (kmax < 0) kmax = s_count;
  std::int64_t j = 0;
  bool deficient = false;
  double next = 0.0;
  for (; j < kmax; ++j) {
    ArgMax best{-INFINITY, LLONG_MAX};
    for (std::int64_t i = j + tid; i < n; i += nt) {
      const double v = d[i];
      if (!isfinite(v)) atomicMax(&s_nonfinite, 1);
      if (allowed == nullptr || allowed[perm[i]] != 0) best = better(best, ArgMax{v, i});
    }
    __syncthreads();
    if (s_nonfinite) break;
    best = block_argmax(best, scratch);
    if (best.i == LLONG_MAX) {  // no allowed row left (restricted only)
      deficient = true;
      next = -INFINITY;
      break;
    }
    const double ajj = best.v;
    const long long p = best.i;
    if (!(ajj > tol)) {
      deficient = true;
      next = ajj;
      break;
    }
    if (p != j) {
      for (std::int64_t c = tid; c < j; c += nt) {
        const double t = l[j + c * ldl];
        l[j + c * ldl] = l[p + c * ldl];
        l[p + c * ldl] = t;
      }
      if (tid == 0) {
        const long long t = perm[j];
        perm[j] = perm[p];
        perm[p] = t;
        const double td = d[j];
        d[j] = d[p];
        d[p] = td;
      }
    }
    __syncthreads();
    const double ljj = sqrt(ajj);
    const long long pj = perm[j];
    for (std::int64_t i = tid; i <= j; i += nt) l[i + j * ldl] = i == j ? ljj : 0.0;
    for (std::int64_t i = j + 1 + tid; i < n; i += nt) {
      double acc = sym_at(a, lda, perm[i], pj);
      for (std::int64_t c = 0; c < j; ++c) acc = __dsub_rn(acc, __dmul_rn(l[i + c * ldl], l[j + c * ldl]));
      const double lij = acc / ljj;
      l[i + j * ldl] = lij;
      d[i] = __dsub_rn(d[i], __dmul_rn(lij, lij));
    }
    __syncthreads();
  }
  // columns rank..kcols−1 of l are zero
  for (std::int64_t c = j; c < kcols; ++c)
    for (std::int64_t i = tid; i < n; i += nt) l[i + c * ldl] = 0.0;
  long long nonfinite_pos = -1;
  if (s_nonfinite) {
    ArgMax first{-INFINITY, LLONG_MAX};
    for (std::int64_t i = j + tid; i < n; i += nt)
      if (!isfinite(d[i]) && i < first.i) first = ArgMax{0.0, i};
    __syncthreads();
    nonfinite_pos = block_argmax(first, scratch).i;
  }
  if (!deficient && j < n && !s_nonfinite) {
    ArgMax m{-INFINITY, LLONG_MAX};
    for (std::int64_t i = j + tid; i < n; i += nt)
      if (allowed == nullptr || allowed[perm[i]] != 0) m = better(m, ArgMax{d[i], i});
    __syncthreads();
    m = block_argmax(m, scratch);
    next = m.v;
  }
  // One store of the whole struct, padding included: the host copies all of it back.
  if (tid == 0) *out = PivotedOut{j, nonfinite_pos, deficient ? 1 : 0, 0, next, tol};
}

}  // namespace detail

PivotedCholesky GpuCholesky::factor_pivoted(const double* a, std::int64_t n, std::int64_t lda, std::int64_t max_rank,
                                            double tolerance, double* l, std::int64_t ldl) {
  return factor_pivoted(a, n, lda, max_rank, tolerance, l, ldl, nullptr);
}

PivotedCholesky GpuCholesky::factor_pivoted(const double* a, std::int64_t n, std::int64_t lda, std::int64_t max_rank,
                                            double tolerance, double* l, std::int64_t ldl,
                                            const unsigned char* allowed) {
  const std::string what = allowed ? "GpuCholesky::factor_pivoted (restricted)" : "GpuCholesky::factor_pivoted";
  if (n < 0) throw std::invalid_argument(what + ": n = " + std::to_string(n) + " < 0");
  if (max_rank < 0) throw std::invalid_argument(what + ": max_rank = " + std::to_string(max_rank) + " < 0");
  PivotedCholesky r;
  if (n == 0) return r;
  if (lda < n || ldl < n)
    throw std::invalid_argument(what + ": lda = " + std::to_string(lda) + " and ldl = " + std::to_string(ldl) +
                                " must be ≥ n = " + std::to_string(n));
  if (a == nullptr || l == nullptr) throw std::invalid_argument(what + ": null pointer");
  const std::int64_t kcols = max_rank == 0 ? n : std::min(max_rank, n);
  // Restricted with max_rank = 0: as many pivots as allowed rows (counted by the kernel).
  const std::int64_t kmax = allowed != nullptr && max_rank == 0 ? -1 : kcols;
  auto& ctx = *impl_;
  const std::size_t d_bytes = detail::align_up(sizeof(double) * n), p_bytes = detail::align_up(sizeof(long long) * n);
  char* ws = static_cast<char*>(ctx.workspace(d_bytes + p_bytes + sizeof(detail::PivotedOut), what));
  auto* d = reinterpret_cast<double*>(ws);
  auto* perm = reinterpret_cast<long long*>(ws + d_bytes);
  auto* out = reinterpret_cast<detail::PivotedOut*>(ws + d_bytes + p_bytes);
  detail::pivoted_kernel<<<1, detail::kPivThreads, 0, ctx.stream>>>(a, lda, n, kmax, kcols, tolerance, l, ldl, d, perm,
                                                                    allowed, out);
  GF_CUDA_CHECK_LAUNCH();
  detail::PivotedOut o{};
  std::vector<long long> p(static_cast<std::size_t>(n));
  GF_CUDA_TRY(cudaMemcpyAsync(&o, out, sizeof o, cudaMemcpyDeviceToHost, ctx.stream));
  GF_CUDA_TRY(cudaMemcpyAsync(p.data(), perm, sizeof(long long) * p.size(), cudaMemcpyDeviceToHost, ctx.stream));
  GF_CUDA_TRY(cudaStreamSynchronize(ctx.stream));
  if (o.nonfinite_pos >= 0)
    throw CudaError(what + ": the remaining diagonal of original row " + std::to_string(p[o.nonfinite_pos]) +
                    " is NaN/Inf after " + std::to_string(o.rank) + " pivots (NaN/Inf in the input matrix?)");
  r.rank = static_cast<std::size_t>(o.rank);
  r.rank_deficient = o.rank_deficient != 0;
  r.next_pivot = r.rank < static_cast<std::size_t>(n) ? o.next_pivot : 0.0;
  r.tolerance = o.tolerance;
  r.permutation.assign(p.begin(), p.end());
  return r;
}

}  // namespace gemflow::linalg::cuda
