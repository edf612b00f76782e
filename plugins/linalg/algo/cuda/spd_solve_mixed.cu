// Mixed-precision SPD solve: fp32 Cholesky (lookahead or recursive; exact, TF32 or FP16 products; the
// FP16 modes on S·A·S, equilibrated by powers of two as A is demoted), fp32 triangular
// solves, fp64 residuals and iterative refinement to fp64 backward error (LAPACK dsposv's scheme;
// Langou et al., SC 2006), fp64 cuSOLVER fallback. One right-hand side: launches gated on the
// device (refine_gate_kernel) take the host's round trips off the GPU's path.
#include <cublas_v2.h>
#include <cuda_runtime.h>
#include <cusolverDn.h>

#include <algorithm>
#include <cfloat>
#include <climits>
#include <cmath>
#include <cstddef>
#include <functional>
#include <stdexcept>
#include <string>
#include <vector>

#include <gemflow/cuda/nvtx.hpp>
#include <gemflow/cuda/timing.hpp>  // Event
#include <gemflow/cuda_smem.hpp>

#include "../componentwise_steps.hpp"
#include "../gmres_ir.hpp"
#include "../normwise.hpp"
#include "context.cuh"  // GpuCholesky::Impl; gemflow/cuda/ checks and buffers
#include "demote_kernels.cuh"
#include "equilibrate.cuh"
#include "symv_kernels.cuh"
#include "trsv_kernels.cuh"

namespace gemflow::linalg::cuda {
namespace detail {

/// Typed views into device memory at byte offsets.
struct DeviceSpan {
  void* p;
  template <class T>
  T* as(std::size_t byte_offset = 0) const {
    return reinterpret_cast<T*>(static_cast<char*>(p) + byte_offset);
  }
};

using ByteBuffer = ::gemflow::cuda::DeviceBuffer<std::byte>;

/// `bytes` (at least one) of device memory after a free-memory check.
ByteBuffer checked_buffer(std::size_t bytes, const std::string& what) {
  require_free_memory(bytes, what);
  return ByteBuffer(std::max<std::size_t>(bytes, 1));
}

/// ce[j] = max_i (ilogb(r_ij) + e_i) − t over the finite nonzero entries of column j (S = diag(2^e);
/// e = nullptr: S = I), 0 when there is none: the exponent of the column's largest entry of S·r,
/// without forming S·r (it may pass the double range), less the target t = ⌊ilogb(*anorm)/2⌋
/// (anorm = nullptr: t = 0). The demoted column then peaks near 2^t ≈ √‖A‖ (the FP16 modes' S·A·S
/// has a unit diagonal: 1), so that L y = r stays near 1 and the correction near κ, whatever the
/// scale of A. One block of kColExpThreads per column. Nothing when skip ≠ nullptr and *skip ≠ 0.
/// cmax, masks ≠ nullptr (the componentwise steps' bands): cmax[j] = that largest exponent, and bit
/// b of masks[j] set when some entry lies in band b = min(63, (cmax[j] − its exponent) /
/// kSolveBandBits) (normwise.hpp).
constexpr int kColExpThreads = 1024;
__global__ void __launch_bounds__(kColExpThreads)
    column_exponent_kernel(const double* r, std::int64_t ldr, std::int64_t n, std::int64_t nrhs, const int* e,
                           const double* anorm, int* ce, const unsigned* skip, int* cmax = nullptr,
                           unsigned long long* masks = nullptr) {
  if (skip && *skip) return;
  const int target = anorm && *anorm > 0 && isfinite(*anorm) ? ilogb(*anorm) / 2 : 0;
  __shared__ int warp_max[kColExpThreads / 32];
  for (std::int64_t j = blockIdx.x; j < nrhs; j += gridDim.x) {
    int m = INT_MIN;
    for (std::int64_t i = threadIdx.x; i < n; i += kColExpThreads) {
      const double v = r[i + j * ldr];
      if (v != 0.0 && isfinite(v)) m = max(m, ilogb(v) + (e ? e[i] : 0));
    }
    for (int o = 16; o > 0; o >>= 1) m = max(m, __shfl_down_sync(0xffffffffu, m, o));
    if (threadIdx.x % 32 == 0) warp_max[threadIdx.x / 32] = m;
    __syncthreads();
    if (threadIdx.x < 32) {
      m = warp_max[threadIdx.x];
      for (int o = 16; o > 0; o >>= 1) m = max(m, __shfl_down_sync(0xffffffffu, m, o));
      if (threadIdx.x == 0) {
        ce[j] = m == INT_MIN ? 0 : m - target;
        warp_max[0] = m;  // for the bands below
      }
    }
    __syncthreads();
    if (masks) {
      __shared__ unsigned long long mask;
      const int top = warp_max[0];
      if (threadIdx.x == 0) mask = 0;
      __syncthreads();
      unsigned long long mine = 0;
      for (std::int64_t i = threadIdx.x; i < n; i += kColExpThreads) {
        const double v = r[i + j * ldr];
        if (v != 0.0 && isfinite(v))
          mine |= 1ull << min(63, (top - (ilogb(v) + (e ? e[i] : 0))) / ::gemflow::linalg::detail::kSolveBandBits);
      }
      if (mine) atomicOr(&mask, mine);
      __syncthreads();
      if (threadIdx.x == 0) {
        masks[j] = mask;
        cmax[j] = top;
      }
    }
    __syncthreads();
  }
}

/// rs = fp32(2^−ce_j·S·r) (S = diag(2^e); e = nullptr: S = I; ce from column_exponent_kernel),
/// so that neither a huge nor a tiny right-hand side or residual leaves fp32's range. band ≥ 0
/// (cmax from column_exponent_kernel): only the entries of that band (others 0). Scaled by 2^shift
/// more (add_promoted_kernel takes the same shift). Nothing when skip ≠ nullptr and *skip ≠ 0.
__global__ void demote_kernel(const double* r, std::int64_t ldr, std::int64_t n, std::int64_t nrhs, float* rs,
                              const int* e, const int* ce, const unsigned* skip, int band = -1,
                              const int* cmax = nullptr, int shift = 0) {
  const std::int64_t i = blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x;
  if (i >= n || (skip && *skip)) return;
  const int ei = e ? e[i] : 0;
  constexpr int w = ::gemflow::linalg::detail::kSolveBandBits;
  for (std::int64_t j = blockIdx.y; j < nrhs; j += gridDim.y) {
    double v = r[i + j * ldr];
    if (band >= 0 && v != 0.0 && isfinite(v) && min(63, (cmax[j] - (ilogb(v) + ei)) / w) != band) v = 0.0;
    rs[i + j * n] = static_cast<float>(ldexp(v, ei - ce[j] + shift));
  }
}

/// x += 2^ce_j·S·ds in fp64 (S, ce as in demote_kernel): A⁻¹ = S·(S·A·S)⁻¹·S; `set`: x = 2^ce_j·S·ds.
/// Scaled back by 2^−shift more (demote_kernel's shift). Nothing when skip ≠ nullptr and *skip ≠ 0.
__global__ void add_promoted_kernel(const float* ds, std::int64_t n, std::int64_t nrhs, double* x, std::int64_t ldx,
                                    const int* e, const int* ce, bool set, const unsigned* skip, int shift = 0) {
  const std::int64_t i = blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x;
  if (i >= n || (skip && *skip)) return;
  const int ei = e ? e[i] : 0;
  for (std::int64_t j = blockIdx.y; j < nrhs; j += gridDim.y) {
    const double d = ldexp(static_cast<double>(ds[i + j * n]), ei + ce[j] - shift);
    x[i + j * ldx] = set ? d : x[i + j * ldx] + d;
  }
}

/// The refinement's scale of b (as on the CPU, spd_solve.cpp): k[j] = −600 − ilogb(m_j) for a
/// column whose largest entry m_j = cmax[j] lies below 2⁻⁶⁰⁰, else 0; cmax[j] becomes m_j·2^k[j].
/// (b − A·x of such a column lies near double's smallest numbers, where its rounding hid
/// fp32-level errors: QA, A of 1e-100 and b of 3e-320.) One thread per column.
__global__ void tiny_column_exponent_kernel(double* cmax, std::int64_t nrhs, int* k) {
  const std::int64_t j = blockIdx.x * std::int64_t(blockDim.x) + threadIdx.x;
  if (j >= nrhs) return;
  const double m = cmax[j];
  k[j] = m > 0 && m < 0x1p-600 ? -600 - ilogb(m) : 0;
  cmax[j] = ldexp(m, k[j]);
}

/// dst(i, j) = src(i, j)·2^(sign·k[j]) (n × nrhs; dst may be src).
__global__ void scale_columns_kernel(const double* src, std::int64_t lds, double* dst, std::int64_t ldd, std::int64_t n,
                                     std::int64_t nrhs, const int* k, int sign) {
  const std::int64_t i = blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x;
  if (i >= n) return;
  for (std::int64_t j = blockIdx.y; j < nrhs; j += gridDim.y) dst[i + j * ldd] = ldexp(src[i + j * lds], sign * k[j]);
}

/// *flag = 1 when some of the `count` floats at v is not finite (flag zeroed before).
__global__ void nonfinite_kernel(const float* v, std::int64_t count, unsigned* flag) {
  for (std::int64_t i = blockIdx.x * std::int64_t(blockDim.x) + threadIdx.x; i < count;
       i += std::int64_t(gridDim.x) * blockDim.x)
    if (!isfinite(v[i])) *flag = 1;
}

/// *out = max(*out, max_ij ω̂_ij) (omega_bound_entry, as the bits of the double; out zeroed
/// before) for residuals r, right-hand sides b and iterates x (n × nrhs each), A's diagonal from a.
__global__ void __launch_bounds__(256)
    omega_bound_kernel(const double* r, std::int64_t ldr, const double* b, std::int64_t ldb, const double* x,
                       std::int64_t ldx, const double* a, std::int64_t lda, std::int64_t n, std::int64_t nrhs,
                       unsigned long long* out) {
  unsigned long long m = 0;
  for (std::int64_t j = blockIdx.y; j < nrhs; j += gridDim.y)
    for (std::int64_t i = blockIdx.x * std::int64_t(blockDim.x) + threadIdx.x; i < n;
         i += std::int64_t(gridDim.x) * blockDim.x) {
      const double w = omega_bound_entry(fabs(r[i + j * ldr]), b[i + j * ldb], a[i + i * lda], x[i + j * ldx]);
      m = max(m, static_cast<unsigned long long>(__double_as_longlong(fabs(w))));
    }
  for (int o = 16; o > 0; o >>= 1) m = max(m, __shfl_down_sync(0xffffffffu, m, o));
  if (threadIdx.x % 32 == 0 && m) atomicMax(out, m);
}

/// The one-right-hand-side solve's device scalars, copied back to the host in one piece.
struct RefineScalars {
  int overflow;  ///< entries of S·A·S beyond fp32 (demote_norm_kernel)
  double anorm;  ///< ‖A‖∞
  double bmax;   ///< ‖b‖∞
  /// ‖r‖∞, ‖x‖∞ and ω (componentwise backward error) of the last residual, as the doubles' bits
  /// (symv_lower's maxes)
  unsigned long long rmax, xmax, wmax;
  /// [0]: the first step, launched behind the factor, was skipped (the factor failed); [1]: the
  /// speculative next step was skipped
  unsigned skip[2];
  unsigned band_nonfinite;  ///< a banded step's fp32 correction overflowed (nonfinite_kernel)
  unsigned pad;
};

/// η = ‖r‖∞ / (‖A‖∞·‖x‖∞ + ‖b‖∞) for one column (solve_mixed's backward error; ∞ when x is not
/// finite), without the product that overflows (normwise.hpp). The same on host and device.
__host__ __device__ inline double backward_error_of(double rmax, double xmax, double anorm, double bmax) {
  if (!(xmax <= DBL_MAX)) return INFINITY;
  return ::gemflow::linalg::detail::normwise_backward_error(rmax, anorm, xmax, bmax);
}

/// The gates of solve_mixed's speculative launches (one thread). first: skip[0] = the fp32 factor
/// failed (status), A overflowed fp32 or ‖A‖∞ is not finite: solve_mixed's own test of the factor.
/// Otherwise skip[1] = !(tol < η < thresh) (or skip[0], after_first): the next step is a plain
/// solve with this factor only then, as the host decides.
__global__ void refine_gate_kernel(const DeviceStatus* st, RefineScalars* sc, bool first, bool after_first, double tol,
                                   double thresh) {
  if (first) {
    sc->skip[0] = st->info != 0 || st->nonfinite_col != LLONG_MAX || st->stored_nonfinite_col != LLONG_MAX ||
                  sc->overflow != 0 || !(sc->anorm <= DBL_MAX);
    return;
  }
  const double eta = backward_error_of(__longlong_as_double(static_cast<long long>(sc->rmax)),
                                       __longlong_as_double(static_cast<long long>(sc->xmax)), sc->anorm, sc->bmax);
  sc->skip[1] = (after_first && sc->skip[0]) || !(eta > tol && eta < thresh);
}

/// out[j] = max_i |m(i, j)|, j < cols (NaN propagates), as the bits of the double; out zeroed
/// before. Blocks over rows (grid.x) and columns (grid.y, strided). Non-negative doubles order as
/// their bit patterns, and |NaN| (sign cleared) lies above +Inf, so a 64-bit atomicMax on the bits
/// is the maximum, NaN included, whatever the order. (Blocks over rows, not one block per column:
/// its chain of loads per thread was slow at large n.)
__global__ void __launch_bounds__(256)
    colmax_kernel(const double* m, std::int64_t ld, std::int64_t n, std::int64_t cols, unsigned long long* out) {
  for (std::int64_t j = blockIdx.y; j < cols; j += gridDim.y) {
    unsigned long long x = 0;
    for (std::int64_t i = blockIdx.x * std::int64_t(blockDim.x) + threadIdx.x; i < n;
         i += std::int64_t(gridDim.x) * blockDim.x)
      x = max(x, static_cast<unsigned long long>(__double_as_longlong(fabs(m[i + j * ld]))));
    for (int o = 16; o > 0; o >>= 1) x = max(x, __shfl_down_sync(0xffffffffu, x, o));
    if (threadIdx.x % 32 == 0 && x) atomicMax(out + j, x);
  }
}

/// out[j] = max_i |m(i, j)|, j < cols (colmax_kernel), as doubles at `out`, on stream s.
inline void colmax(const double* m, std::int64_t ld, std::int64_t n, std::int64_t cols, double* out, cudaStream_t s) {
  GF_CUDA_TRY(cudaMemsetAsync(out, 0, sizeof(double) * static_cast<std::size_t>(cols), s));
  const auto blocks = static_cast<unsigned>(std::clamp<std::int64_t>((n + 255) / 256, 1, 128));
  const auto ycols = static_cast<unsigned>(std::clamp<std::int64_t>(cols, 1, 65535));
  colmax_kernel<<<dim3(blocks, ycols), 256, 0, s>>>(m, ld, n, cols, reinterpret_cast<unsigned long long*>(out));
  GF_CUDA_CHECK_LAUNCH();
}

inline dim3 grid2(std::int64_t n, std::int64_t cols) {
  return dim3(static_cast<unsigned>((n + 255) / 256), static_cast<unsigned>(std::clamp<std::int64_t>(cols, 1, 1024)));
}

/// FGMRES operations (gmres_ir.hpp) on device vectors for one correction equation A d = r of
/// GMRES-IR: A fp64 (lower triangle, symv_lower), V (n × (m+1)) and Z = M⁻¹V (n × m) fp64,
/// classical Gram–Schmidt twice (CGS2) by cublasDgemv, M⁻¹ = `solve32` (the fp32 factor).
struct DeviceFgmres {
  cublasHandle_t blas;
  cudaStream_t s;
  const double* a;
  std::int64_t lda, n;
  int m;
  const double* r;          // the right-hand side (a column of the residual)
  double* x;                // the column of x that d is added to
  double *V, *Z, *w, *hd;   // hd: 2·(m+1) device doubles
  double* symv_work;        // symv_workspace_doubles(n)
  std::vector<double>& h2;  // 2·(m+1) host doubles
  const std::function<void(const double*, double*)>& solve32;

  double nrm2(const double* v) const {
    double out = 0;
    GF_CUBLAS_TRY(cublasDnrm2(blas, int(n), v, 1, &out));  // host result: synchronises
    return out;
  }
  /// dst = src / d (d > 0, finite): 1/d overflows for d below 2⁻¹⁰²⁴, and ∞·0 = NaN then (QA:
  /// b of 1e-310), so such a d goes through 2⁶⁰⁰ first (gmres_ir.hpp: divide_scale)
  void set_divided(double* dst, const double* src, double d) const {
    GF_CUBLAS_TRY(cublasDcopy(blas, int(n), src, 1, dst, 1));
    for (const double f : linalg::detail::divide_scale(d))
      if (f != 1.0) GF_CUBLAS_TRY(cublasDscal(blas, int(n), &f, dst, 1));
  }
  double start() {
    const double beta = nrm2(r);
    if (beta > 0 && std::isfinite(beta)) set_divided(V, r, beta);
    return beta;
  }
  void precondition(int j) { solve32(V + j * n, Z + j * n); }
  double arnoldi(int j, double* h) {
    const double one = 1.0, zero = 0.0, minus_one = -1.0;
    symv_lower(a, lda, n, Z + j * n, nullptr, w, symv_work, s);
    GF_CUDA_CHECK_LAUNCH();
    for (int pass = 0; pass < 2; ++pass) {
      double* hp = hd + pass * (m + 1);
      GF_CUBLAS_TRY(cublasDgemv(blas, CUBLAS_OP_T, int(n), j + 1, &one, V, int(n), w, 1, &zero, hp, 1));
      GF_CUBLAS_TRY(cublasDgemv(blas, CUBLAS_OP_N, int(n), j + 1, &minus_one, V, int(n), hp, 1, &one, w, 1));
    }
    GF_CUDA_TRY(cudaMemcpyAsync(h2.data(), hd, sizeof(double) * h2.size(), cudaMemcpyDeviceToHost, s));
    const double hn = nrm2(w);
    GF_CUDA_TRY(cudaStreamSynchronize(s));
    for (int i = 0; i <= j; ++i) h[i] = h2[std::size_t(i)] + h2[std::size_t(m + 1 + i)];
    if (hn > 0 && std::isfinite(hn) && j + 1 < m) set_divided(V + (j + 1) * n, w, hn);
    return hn;
  }
  void correct(const double* y, int k) {
    const double one = 1.0;
    GF_CUDA_TRY(cudaMemcpyAsync(hd, y, sizeof(double) * std::size_t(k), cudaMemcpyHostToDevice, s));
    GF_CUBLAS_TRY(cublasDgemv(blas, CUBLAS_OP_N, int(n), k, &one, Z, int(n), hd, 1, &one, x, 1));
    GF_CUDA_TRY(cudaStreamSynchronize(s));  // y is host memory the caller frees
  }
};

}  // namespace detail

// Declared in cholesky.cu.
namespace detail {
template <class T>
CholeskyStatus factor_impl(GpuCholesky::Impl& ctx, T* a, std::int64_t n, std::int64_t lda, CholeskyOptions opt,
                           bool equilibrated, bool scan);
template <class T>
void factor_enqueue(GpuCholesky::Impl& ctx, T* a, std::int64_t n, std::int64_t lda, CholeskyOptions opt,
                    bool equilibrated, bool scan);
CholeskyStatus status_of(const DeviceStatus& st);

/// One call of GpuCholesky::solve_mixed (arguments checked, n, nrhs > 0): the solve's shared state
/// (the workspace's pieces, the host's copies of the norms, the stage counters) as members and
/// each stage as a method, in the order run() calls them. Launches go to ctx.stream in the order
/// of the single function this replaces.
class MixedSolver {
 public:
  MixedSolver(GpuCholesky::Impl& ctx, const double* a, std::int64_t n, std::int64_t lda, const double* b,
              std::int64_t ldb, std::int64_t nrhs, double* x, std::int64_t ldx, const MixedSolveOptions& options,
              MixedSolveResult& res)
      : ctx_(ctx),
        s_(ctx.stream),
        a_(a),
        n_(n),
        lda_(lda),
        b_(b),
        ldb_(ldb),
        nrhs_(nrhs),
        x_(x),
        ldx_(ldx),
        options_(options),
        res_(res),
        nn_(static_cast<std::size_t>(n)),
        nr_(static_cast<std::size_t>(nrhs)),
        ldas_((n + 3) / 4 * 4),
        parts_((nn_ + kNormTile - 1) / kNormTile),
        fast_(nrhs == 1),
        nblk_((nn_ + kTrsvB - 1) / kTrsvB),
        scaled_(is_fp16_mode(options.factor_mode)),
        tiled_(options.factor_algo == CholeskyAlgo::tiled),
        may_escalate_(options.escalate &&
                      (options.factor_mode == Fp32Mode::tf32 || options.factor_mode == Fp32Mode::fp16)),
        escalated_mode_(options.factor_mode == Fp32Mode::fp16 ? Fp32Mode::fp16x3 : Fp32Mode::tf32x3),
        gmres_m_(static_cast<int>(std::min<std::int64_t>(linalg::detail::kGmresIterations, n))),
        solve32_col_fn_([this](const double* v, double* z) { solve32_col(v, z); }) {}

  void run() {
    allocate();
    demote_and_norms();
    if (fast_) {
      GF_CUDA_TRY(gemflow::cuda::allow_dynamic_smem(trsv_kernel<false>, trsv_smem_bytes(false)));
      GF_CUDA_TRY(gemflow::cuda::allow_dynamic_smem(trsv_kernel<true>, trsv_smem_bytes(true)));
    }
    if (first_factor()) {
      refine();
      componentwise();
      // the last residual may have queued a next step's solve (gated off on the device when not
      // wanted): the stream is idle again when this returns, and the workspace may be freed
      GF_CUDA_TRY(cudaStreamSynchronize(s_));
    }
    res_.status = res_.fp32_status;
    // the fp32 factor is not scanned: a non-finite factor shows as a non-finite last iterate
    if (!res_.converged && !res_.backward_error.empty() && !std::isfinite(res_.backward_error.back()))
      res_.status.non_finite = true;
    if (res_.converged || !options_.fallback_fp64) {
      // x is the scaled solution only where an fp32 step wrote it: without one, x stays the
      // caller's (the scale of a tiny b would change it)
      if (!res_.backward_error.empty()) unscale_x();
      return;
    }
    fallback_fp64();
  }

 private:
  /// The workspace (ctx.solve_workspace, kept between calls) cut into the solve's arrays, and the
  /// page-locked scalars.
  void allocate() {
    // the fp32 copy's leading dimension ldas_ is a multiple of 4: the transposed triangular solve
    // reads its columns 16 bytes at a time
    const std::size_t nn = nn_, nr = nr_;
    const std::size_t as_b = align_up(sizeof(float) * std::size_t(ldas_) * nn),
                      xs_b = align_up(sizeof(float) * nn * nr), r_b = align_up(sizeof(double) * nn * nr),
                      v_b = align_up(sizeof(double) * std::max(nn, 2 * nr));
    const std::size_t p_b = align_up(sizeof(double) * parts_ * nn);
    // one right-hand side: our triangular solves (inverted diagonal blocks, tickets, tagged values)
    // and launches gated on the device (RefineScalars)
    const std::size_t inv_b = fast_ ? align_up(sizeof(float) * 2 * nblk_ * kTrsvB * kTrsvB) : 0,
                      flag_b = fast_ ? align_up(sizeof(unsigned) * 2) + align_up(sizeof(unsigned long long) * nn) : 0;
    // FP16 modes: the equilibration exponents (A is demoted as S·A·S, vectors as S·r)
    const std::size_t e_b = scaled_ ? align_up(sizeof(int) * nn) : 0;
    const std::size_t sym_b = align_up(sizeof(double) * std::size_t(symv_workspace_doubles(n_)));
    const std::size_t w_b = align_up(sizeof(double) * nn);  // the residual of ω's own SYMV pass
    const std::size_t ce_b = align_up(sizeof(int) * nr);    // the demoted columns' exponents
    // the componentwise steps' bands: each column's largest exponent and its bands' mask
    const std::size_t band_b = align_up(sizeof(int) * nr) + align_up(sizeof(unsigned long long) * nr);
    // b scaled by 2^k per column (tiny_column_exponent_kernel), and k
    const std::size_t bs_b = align_up(sizeof(double) * nn * nr) + align_up(sizeof(int) * nr);
    const DeviceSpan buf{ctx_.solve_workspace(
        as_b + xs_b + r_b + v_b + 256 + 2 * p_b + inv_b + flag_b + e_b + sym_b + ce_b + w_b + band_b + bs_b,
        what_ + " (n = " + std::to_string(n_) + ")")};
    as_ = buf.as<float>();
    xs_ = buf.as<float>(as_b);
    r_ = buf.as<double>(as_b + xs_b);
    vec_ = buf.as<double>(as_b + xs_b + r_b);
    sc_ = buf.as<RefineScalars>(as_b + xs_b + r_b + v_b);
    rowpart_ = buf.as<double>(as_b + xs_b + r_b + v_b + 256);
    colpart_ = buf.as<double>(as_b + xs_b + r_b + v_b + 256 + p_b);
    inv_ = buf.as<float>(as_b + xs_b + r_b + v_b + 256 + 2 * p_b);
    tickets_ = buf.as<unsigned>(as_b + xs_b + r_b + v_b + 256 + 2 * p_b + inv_b);
    pub_ = buf.as<unsigned long long>(as_b + xs_b + r_b + v_b + 256 + 2 * p_b + inv_b +
                                      align_up(sizeof(unsigned) * 2));  // tagged values
    exps_ = scaled_ ? buf.as<int>(as_b + xs_b + r_b + v_b + 256 + 2 * p_b + inv_b + flag_b) : nullptr;
    symv_work_ = buf.as<double>(as_b + xs_b + r_b + v_b + 256 + 2 * p_b + inv_b + flag_b + e_b);
    cexps_ = buf.as<int>(as_b + xs_b + r_b + v_b + 256 + 2 * p_b + inv_b + flag_b + e_b + sym_b);
    const std::size_t band_at = as_b + xs_b + r_b + v_b + 256 + 2 * p_b + inv_b + flag_b + e_b + sym_b + ce_b;
    wscratch_ = buf.as<double>(band_at);
    cmax_ = buf.as<int>(band_at + w_b);
    band_masks_ = buf.as<unsigned long long>(band_at + w_b + align_up(sizeof(int) * nr));
    bs_ = buf.as<double>(band_at + w_b + band_b);
    bexp_ = buf.as<int>(band_at + w_b + band_b + align_up(sizeof(double) * nn * nr));
    static_assert(sizeof(RefineScalars) <= 256 && sizeof(RefineScalars) % 8 == 0);
    hsc_ = static_cast<RefineScalars*>(ctx_.host_pinned(sizeof(RefineScalars) + sizeof(DeviceStatus)));
    hst_ = reinterpret_cast<DeviceStatus*>(hsc_ + 1);  // the factor's status words
    bmax_.assign(nr, 0.0);
    rmax_.assign(nr, 0.0);
    xmax_.assign(nr, 0.0);
  }

  /// fp32 copy of A and ‖A‖∞ in one pass, then ‖b_j‖∞; b scaled by 2^k per tiny column: from here
  /// on the refinement and the fallback solve b·2^k, and x is unscaled on return (unscale_x).
  void demote_and_norms() {
    const gemflow::cuda::NvtxRange range("demote, norms");
    GF_CUDA_TRY(cudaMemsetAsync(sc_, 0, sizeof(RefineScalars), s_));
    if (scaled_) {
      equilibrate_exponents_kernel<double><<<unsigned((n_ + 255) / 256), 256, 0, s_>>>(a_, lda_, n_, exps_);
      GF_CUDA_CHECK_LAUNCH();
    }
    demote_a();
    sum_parts_kernel<<<unsigned((n_ + kSumPartsK - 1) / kSumPartsK), kSumPartsK * kSumPartsSegs, 0, s_>>>(
        rowpart_, colpart_, n_, std::int64_t(parts_), vec_);
    GF_CUDA_CHECK_LAUNCH();
    colmax(vec_, n_, n_, 1, &sc_->anorm, s_);                    // ‖A‖∞: the largest row sum
    colmax(b_, ldb_, n_, nrhs_, fast_ ? &sc_->bmax : vec_, s_);  // ‖b_j‖∞
    tiny_column_exponent_kernel<<<unsigned((nrhs_ + 127) / 128), 128, 0, s_>>>(fast_ ? &sc_->bmax : vec_, nrhs_, bexp_);
    GF_CUDA_CHECK_LAUNCH();
    scale_columns_kernel<<<grid2(n_, nrhs_), 256, 0, s_>>>(b_, ldb_, bs_, n_, n_, nrhs_, bexp_, 1);
    GF_CUDA_CHECK_LAUNCH();
    b_ = bs_;
    ldb_ = n_;
    ctx_.step_done(s_, "demote, norms", 0);
  }

  /// `as` = fp32(S·A·S) and ‖A‖∞'s partial sums, the overflow count into the scalars.
  void demote_a() {
    demote_norm_kernel<<<dim3(unsigned(parts_), unsigned(parts_)), dim3(kNormTile, 2), 0, s_>>>(
        a_, lda_, n_, as_, ldas_, exps_, &sc_->overflow, rowpart_, colpart_);
    GF_CUDA_CHECK_LAUNCH();
  }

  void unscale_x() {
    scale_columns_kernel<<<grid2(n_, nrhs_), 256, 0, s_>>>(x_, ldx_, x_, ldx_, n_, nrhs_, bexp_, -1);
    GF_CUDA_CHECK_LAUNCH();
    GF_CUDA_TRY(cudaStreamSynchronize(s_));
  }

  /// fp32 factor of the fp32 copy `as` (overwritten), in `mode`; false when it is not SPD there.
  /// `async`: only enqueued, the status left on the device (false returned).
  bool factor32(Fp32Mode mode, bool async) {
    const gemflow::cuda::NvtxRange range("fp32 factor");
    CholeskyOptions fo;
    // the tiled kernel has one product only: an escalation to 3×FP16 takes the lookahead
    fo.algo = tiled_ && mode == Fp32Mode::fp16x3 ? CholeskyAlgo::lookahead : options_.factor_algo;
    fo.fp32_mode = mode;
    fo.panel = options_.factor_panel;
    res_.factor_mode = mode;
    if (async) {
      factor_enqueue<float>(ctx_, as_, n_, ldas_, fo, /*equilibrated=*/scaled_, /*scan=*/false);
      ctx_.step_done(s_, "fp32 factor", 0);
      return false;
    }
    res_.fp32_status = factor_impl<float>(ctx_, as_, n_, ldas_, fo, /*equilibrated=*/scaled_, /*scan=*/false);
    ctx_.step_done(s_, "fp32 factor", 0);
    return res_.fp32_status.ok();
  }

  /// The inverted diagonal blocks of the triangular solves (gate: see refine_gate_kernel).
  void invert_blocks(const unsigned* gate) {
    if (!fast_) return;
    const gemflow::cuda::NvtxRange range("inverted blocks");
    GF_CUDA_TRY(gemflow::cuda::allow_dynamic_smem(trsv_invert_diag_kernel, trsv_invert_smem_bytes()));
    trsv_invert_diag_kernel<<<unsigned(nblk_), kTrsvB, trsv_invert_smem_bytes(), s_>>>(as_, ldas_, n_, inv_, gate);
    GF_CUDA_CHECK_LAUNCH();
    ctx_.step_done(s_, "inverted blocks", 0);
  }

  /// A three-product factor of A (3×TF32, 3×FP16) in place of the one-product one.
  bool escalate_factor() {
    res_.escalated = true;
    const int step = static_cast<int>(res_.backward_error.size());
    demote_a();
    const bool ok = factor32(escalated_mode_, false);
    if (ok) res_.escalation_step = step;
    return ok;
  }

  /// L y = v, Lᵀ d = y in place in xs (one right-hand side: trsv_kernels.cuh).
  void trsv_pair(const unsigned* gate) {
    GF_CUDA_TRY(cudaMemsetAsync(tickets_, 0, sizeof(unsigned) * 2, s_));
    GF_CUDA_TRY(cudaMemsetAsync(pub_, 0, sizeof(unsigned long long) * nn_, s_));  // no word tagged 1 or 2
    trsv_kernel<false><<<unsigned(nblk_), kTrsvThreads, trsv_smem_bytes(false), s_>>>(
        as_, ldas_, n_, inv_, xs_, tickets_, pub_, 1u, gate, nullptr);
    GF_CUDA_CHECK_LAUNCH();
    trsv_kernel<true><<<unsigned(nblk_), kTrsvThreads, trsv_smem_bytes(true), s_>>>(
        as_, ldas_, n_, inv_, xs_, tickets_ + 1, pub_, 2u, gate, nullptr);
    GF_CUDA_CHECK_LAUNCH();
  }

  /// L·Lᵀ·d = xs in place for the first `cols` columns of xs: one right-hand side, our solves;
  /// more, cuBLAS STRSM.
  void fp32_solve(std::int64_t cols, const unsigned* gate) {
    if (fast_) {
      trsv_pair(gate);
      return;
    }
    const float one = 1.0f;
    GF_CUBLAS_TRY(cublasStrsm(ctx_.blas, CUBLAS_SIDE_LEFT, CUBLAS_FILL_MODE_LOWER, CUBLAS_OP_N, CUBLAS_DIAG_NON_UNIT,
                              int(n_), int(cols), &one, as_, int(ldas_), xs_, int(n_)));
    GF_CUBLAS_TRY(cublasStrsm(ctx_.blas, CUBLAS_SIDE_LEFT, CUBLAS_FILL_MODE_LOWER, CUBLAS_OP_T, CUBLAS_DIAG_NON_UNIT,
                              int(n_), int(cols), &one, as_, int(ldas_), xs_, int(n_)));
  }

  /// xs = fp32(S·v scaled by a power of two per column): the start of a refinement step, for the
  /// correction of v (cexps keep the columns' scales for add_promoted).
  void demote(const double* v, std::int64_t ldv, std::int64_t cols, const unsigned* gate) {
    column_exponent_kernel<<<unsigned(std::min<std::int64_t>(cols, 65535)), kColExpThreads, 0, s_>>>(
        v, ldv, n_, cols, exps_, scaled_ ? nullptr : &sc_->anorm, cexps_, gate);
    GF_CUDA_CHECK_LAUNCH();
    demote_kernel<<<grid2(n_, cols), 256, 0, s_>>>(v, ldv, n_, cols, xs_, exps_, cexps_, gate);
    GF_CUDA_CHECK_LAUNCH();
  }

  /// x += the fp32 solve of A d = r by exponent bands of each column of S·r (kSolveBandBits), one
  /// solve per band present in some column, so that no entry flushes to 0 (the componentwise steps).
  void banded_step() {
    column_exponent_kernel<<<unsigned(std::min<std::int64_t>(nrhs_, 65535)), kColExpThreads, 0, s_>>>(
        r_, n_, n_, nrhs_, exps_, scaled_ ? nullptr : &sc_->anorm, cexps_, nullptr, cmax_, band_masks_);
    GF_CUDA_CHECK_LAUNCH();
    std::vector<unsigned long long> masks(nr_);
    GF_CUDA_TRY(
        cudaMemcpyAsync(masks.data(), band_masks_, sizeof(unsigned long long) * nr_, cudaMemcpyDeviceToHost, s_));
    GF_CUDA_TRY(cudaStreamSynchronize(s_));
    unsigned long long any = 0;
    for (const auto m_ : masks) any |= m_;
    const std::int64_t count = n_ * nrhs_;
    for (int band = 0; band < 64; ++band) {
      if (!(any >> band & 1)) continue;
      // each band peaks near 2^t (column_exponent_kernel); where its correction overflows fp32 (the
      // modes without equilibration: A = diag(1e30, 1e-30), t = 49, gave 5e44), again 2^64 lower
      for (int lower = 0; lower < 4; ++lower) {
        const int shift = linalg::detail::kSolveBandBits * band - 64 * lower;
        demote_kernel<<<grid2(n_, nrhs_), 256, 0, s_>>>(r_, n_, n_, nrhs_, xs_, exps_, cexps_, nullptr, band, cmax_,
                                                        shift);
        GF_CUDA_CHECK_LAUNCH();
        fp32_solve(nrhs_, nullptr);
        GF_CUDA_TRY(cudaMemsetAsync(&sc_->band_nonfinite, 0, sizeof(unsigned), s_));
        nonfinite_kernel<<<unsigned(std::clamp<std::int64_t>((count + 255) / 256, 1, 1024)), 256, 0, s_>>>(
            xs_, count, &sc_->band_nonfinite);
        GF_CUDA_CHECK_LAUNCH();
        GF_CUDA_TRY(
            cudaMemcpyAsync(&hsc_->band_nonfinite, &sc_->band_nonfinite, sizeof(unsigned), cudaMemcpyDeviceToHost, s_));
        GF_CUDA_TRY(cudaStreamSynchronize(s_));
        if (hsc_->band_nonfinite) continue;
        add_promoted_kernel<<<grid2(n_, nrhs_), 256, 0, s_>>>(xs_, n_, nrhs_, x_, ldx_, exps_, cexps_, /*set=*/false,
                                                              nullptr, shift);
        GF_CUDA_CHECK_LAUNCH();
        break;
      }
    }
  }

  /// The correction of v into xs: demotion and the fp32 solve.
  void solve_step(const double* v, std::int64_t ldv, const unsigned* gate) {
    const gemflow::cuda::NvtxRange range("solve step");
    demote(v, ldv, nrhs_, gate);
    ctx_.step_done(s_, "start of step", 0);
    fp32_solve(nrhs_, gate);
    ctx_.step_done(s_, "solve pair", 0);
  }

  /// The exact ω's |A|·|x| partials (allocated on first use: most solves need only the bound) and
  /// its scale 2^−s, so that |A|·|x| + |b| stays within double (symv_lower), from ‖A‖∞ and the
  /// last known ‖x‖∞ and ‖b‖∞ (x changes little once η has converged).
  void omega_setup() {
    if (abs_buf_.empty()) {
      abs_buf_ =
          checked_buffer(sizeof(double) * std::size_t(symv_abs_workspace_doubles(n_)), what_ + " |A|·|x| partials");
      abs_work_ = DeviceSpan{abs_buf_.data()}.as<double>();
    }
    int e = INT_MIN;
    for (std::size_t j = 0; j < nr_; ++j) {
      if (anorm_ > 0 && xmax_[j] > 0 && std::isfinite(xmax_[j]))
        e = std::max(e, std::ilogb(anorm_) + std::ilogb(xmax_[j]));
      if (bmax_[j] > 0 && std::isfinite(bmax_[j])) e = std::max(e, std::ilogb(bmax_[j]));
    }
    omega_sc_ = e > 1016 ? std::ldexp(1.0, 1016 - e) : 1.0;
  }

  /// r = b − A x and η = max_j ‖r_j‖∞ / (‖A‖∞‖x_j‖∞ + ‖b_j‖∞), waited for on the host. One
  /// right-hand side: the norms come from the SYMV, one copy of page-locked scalars brings them
  /// back, and when `thresh` is not NaN the next step's solve (refine_gate_kernel) is launched
  /// before the host waits, so that its kernels run while the host decides; spec_ran_ says whether
  /// it ran. gate: the residual's own; after_first: this is the first step, launched behind the
  /// factor (its status words come back too). One right-hand side: the SYMV also gives ω's bound ω̂
  /// (symv_kernels.cuh), or ω itself with `exact` (wmax_exact_).
  double residual_and_eta(double thresh, const unsigned* gate, bool after_first, bool exact = false) {
    const gemflow::cuda::NvtxRange range("residual, eta");
    spec_ran_ = false;
    if (fast_) {
      GF_CUDA_TRY(cudaMemsetAsync(&sc_->rmax, 0, 3 * sizeof(unsigned long long), s_));
      if (exact) omega_setup();
      symv_lower(a_, lda_, n_, x_, b_, r_, symv_work_, s_, &sc_->rmax, gate,
                 exact ? SymvOmega::exact : SymvOmega::bound, abs_work_, omega_sc_);
      wmax_exact_ = exact;
      GF_CUDA_CHECK_LAUNCH();
      ctx_.step_done(s_, "symv", 0);
      const bool spec = !std::isnan(thresh);
      if (spec) {
        refine_gate_kernel<<<1, 1, 0, s_>>>(ctx_.status.data(), sc_, false, after_first, res_.tolerance, thresh);
        GF_CUDA_CHECK_LAUNCH();
      }
      GF_CUDA_TRY(cudaMemcpyAsync(hsc_, sc_, sizeof(RefineScalars), cudaMemcpyDeviceToHost, s_));
      if (after_first)  // the factor's status words, read with the first step's results
        GF_CUDA_TRY(cudaMemcpyAsync(hst_, ctx_.status.data(), sizeof(DeviceStatus), cudaMemcpyDeviceToHost, s_));
      GF_CUDA_TRY(cudaEventRecord(copied_.get(), s_));
      if (spec) solve_step(r_, n_, &sc_->skip[1]);
      GF_CUDA_TRY(cudaEventSynchronize(copied_.get()));
      ctx_.step_done(s_, "eta, sync", 0);
      spec_ran_ = spec && hsc_->skip[1] == 0;
      rmax_[0] = __builtin_bit_cast(double, hsc_->rmax);
      xmax_[0] = __builtin_bit_cast(double, hsc_->xmax);
      anorm_ = hsc_->anorm;  // the same every step; on the host from the first step's copy on
      bmax_[0] = hsc_->bmax;
    } else {
      GF_CUDA_TRY(cudaMemcpy2DAsync(r_, sizeof(double) * nn_, b_, sizeof(double) * ldb_, sizeof(double) * nn_, nr_,
                                    cudaMemcpyDeviceToDevice, s_));
      const double minus_one = -1.0, one = 1.0;
      GF_CUBLAS_TRY(cublasDsymm(ctx_.blas, CUBLAS_SIDE_LEFT, CUBLAS_FILL_MODE_LOWER, int(n_), int(nrhs_), &minus_one,
                                a_, int(lda_), x_, int(ldx_), &one, r_, int(n_)));
      colmax(r_, n_, n_, nrhs_, vec_, s_);
      colmax(x_, ldx_, n_, nrhs_, vec_ + nrhs_, s_);
      GF_CUDA_TRY(cudaMemcpyAsync(rmax_.data(), vec_, sizeof(double) * nr_, cudaMemcpyDeviceToHost, s_));
      GF_CUDA_TRY(cudaMemcpyAsync(xmax_.data(), vec_ + nrhs_, sizeof(double) * nr_, cudaMemcpyDeviceToHost, s_));
      GF_CUDA_TRY(cudaStreamSynchronize(s_));
      ctx_.step_done(s_, "eta, sync", 0);
    }
    double eta = 0.0;
    for (std::size_t j = 0; j < nr_; ++j) {
      // an overflowed fp32 solve (x not finite) is not converged, whatever r/∞ would say
      const double e = backward_error_of(rmax_[j], xmax_[j], anorm_, bmax_[j]);
      eta = (e != e || e > eta) ? e : eta;
    }
    return eta;
  }

  /// ω = max_j max_i |r_j|_i / (|A|·|x_j| + |b_j|)_i of the current x (normwise.hpp): from the last
  /// residual's SYMV when it was exact, else one SYMV pass per column (its r into scratch).
  double omega_now() {
    if (!(fast_ && wmax_exact_)) {
      omega_setup();
      GF_CUDA_TRY(cudaMemsetAsync(&sc_->rmax, 0, 3 * sizeof(unsigned long long), s_));
      for (std::int64_t c = 0; c < nrhs_; ++c)
        symv_lower(a_, lda_, n_, x_ + c * ldx_, b_ + c * ldb_, wscratch_, symv_work_, s_, &sc_->rmax, nullptr,
                   SymvOmega::exact, abs_work_, omega_sc_);
      GF_CUDA_CHECK_LAUNCH();
      GF_CUDA_TRY(cudaMemcpyAsync(&hsc_->wmax, &sc_->wmax, sizeof(unsigned long long), cudaMemcpyDeviceToHost, s_));
      GF_CUDA_TRY(cudaStreamSynchronize(s_));
    }
    return __builtin_bit_cast(double, hsc_->wmax);
  }

  /// M⁻¹ with the fp32 factor, one column: z = S·(S·A·S)⁻¹·S·v (xs's first column as scratch).
  void solve32_col(const double* v, double* z) {
    demote(v, n_, 1, nullptr);
    fp32_solve(1, nullptr);
    add_promoted_kernel<<<grid2(n_, 1), 256, 0, s_>>>(xs_, n_, 1, z, n_, exps_, cexps_, /*set=*/true, nullptr);
    GF_CUDA_CHECK_LAUNCH();
  }

  /// GMRES-IR (gmres_ir.hpp): x_c += FGMRES solution of A d = r_c for every column, Krylov vectors
  /// V (n × (m+1)) and Z = M⁻¹V (n × m) in fp64, allocated on first use.
  void gmres_step() {
    const int m = gmres_m_;
    const std::size_t nn = nn_;
    const std::size_t vz_b = align_up(sizeof(double) * nn * std::size_t(2 * m + 2));
    if (krylov_.empty()) krylov_ = checked_buffer(vz_b + sizeof(double) * 2 * (m + 1), what_ + " GMRES-IR vectors");
    double* V = DeviceSpan{krylov_.data()}.as<double>();
    double* Z = V + nn * std::size_t(m + 1);
    double* w = Z + nn * std::size_t(m);
    double* hd = DeviceSpan{krylov_.data()}.as<double>(vz_b);
    std::vector<double> h2(2 * std::size_t(m + 1));
    for (std::int64_t c = 0; c < nrhs_; ++c) {
      DeviceFgmres ops{ctx_.blas, s_, a_, lda_, n_,         m,  r_ + c * nn,    x_ + c * ldx_,
                       V,         Z,  w,  hd,   symv_work_, h2, solve32_col_fn_};
      res_.gmres_iterations += linalg::detail::fgmres(ops, m, linalg::detail::kGmresRelTol);
    }
  }

  /// The threshold under which η makes the next step a plain solve with this factor (refine()'s
  /// tests: above the tolerance, finite, not stalled, not too slow for GMRES-IR), for the step `it`
  /// and stage_after = stage_steps_ after it; NaN when the next step is never one (the iteration
  /// limit, an escalation or GMRES-IR due anyway).
  double next_plain_threshold(int it, int stage_after) const {
    if (!fast_ || gmres_ || it >= options_.max_iterations) return NAN;
    const bool final_factor = !may_escalate_ || res_.factor_mode != options_.factor_mode;
    if (!final_factor && stage_after > MixedSolveOptions::kEscalateSteps) return NAN;
    const double prev = res_.backward_error.empty() ? INFINITY : res_.backward_error.back();
    double thresh = stage_after > 1 ? prev : INFINITY;
    if (options_.gmres && final_factor) {
      if (stage_after > linalg::detail::kIrStepsBeforeGmres) return NAN;
      if (stage_after > 1) thresh = 0.5 * prev;
    }
    return thresh;
  }

  /// x = 0, r = b.
  void restart_from_zero() {
    GF_CUDA_TRY(cudaMemset2DAsync(x_, sizeof(double) * ldx_, 0, sizeof(double) * nn_, nr_, s_));
    GF_CUDA_TRY(cudaMemcpy2DAsync(r_, sizeof(double) * nn_, b_, sizeof(double) * ldb_, sizeof(double) * nn_, nr_,
                                  cudaMemcpyDeviceToDevice, s_));
  }

  /// The fp32 factor, right behind the demotion, before ‖A‖∞ and the overflow count reach the
  /// host. A NaN or Inf in A (its lower triangle) makes ‖A‖∞ non-finite, and an entry beyond fp32
  /// overflows the copy: the fp32 result is then discarded, with no escalation (the fp32 factor is
  /// not scanned), and the fp64 fallback reports it. One right-hand side: the first step (x = the
  /// first iterate, its residual and η) and the next step's solve are launched behind the factor,
  /// gated on the device by the same test, and the host waits once, for all of it. True when the
  /// refinement goes on with an fp32 factor.
  bool first_factor() {
    const Fp32Mode mode_before = res_.factor_mode;
    bool fp32_ok = false;
    if (fast_) {
      factor32(options_.factor_mode, true);
      refine_gate_kernel<<<1, 1, 0, s_>>>(ctx_.status.data(), sc_, true, false, 0.0, 0.0);
      GF_CUDA_CHECK_LAUNCH();
      const unsigned* gate = &sc_->skip[0];
      invert_blocks(gate);
      solve_step(b_, ldb_, gate);
      add_promoted_kernel<<<grid2(n_, 1), 256, 0, s_>>>(xs_, n_, 1, x_, ldx_, exps_, cexps_, /*set=*/true, gate);
      GF_CUDA_CHECK_LAUNCH();
      eta0_ = residual_and_eta(next_plain_threshold(0, 1), gate, true);
      res_.fp32_status = status_of(*hst_);
      fp32_ok = res_.fp32_status.ok();
      n_overflow_ = hsc_->overflow;
      first_done_ = fp32_ok && hsc_->skip[0] == 0 && n_overflow_ == 0 && std::isfinite(anorm_);
    } else {
      fp32_ok = factor32(options_.factor_mode, false);
      GF_CUDA_TRY(cudaMemcpyAsync(&n_overflow_, &sc_->overflow, sizeof(int), cudaMemcpyDeviceToHost, s_));
      GF_CUDA_TRY(cudaMemcpyAsync(&anorm_, &sc_->anorm, sizeof(double), cudaMemcpyDeviceToHost, s_));
      GF_CUDA_TRY(cudaMemcpyAsync(bmax_.data(), vec_, sizeof(double) * nr_, cudaMemcpyDeviceToHost, s_));
      GF_CUDA_TRY(cudaStreamSynchronize(s_));
    }
    if (n_overflow_ != 0 || !std::isfinite(anorm_)) {
      fp32_ok = false;
      res_.fp32_status = CholeskyStatus{};
      res_.fp32_status.non_finite = !std::isfinite(anorm_);
      res_.factor_mode = mode_before;
    } else if (!fp32_ok && may_escalate_) {
      fp32_ok = escalate_factor();
    }
    return fp32_ok;
  }

  /// x += solve32(r), r = b − A x until η ≤ tol (or escalation, GMRES-IR, a stall, the limit).
  void refine() {
    if (!first_done_) {  // x = 0, r = b; the inverted blocks of this factor
      invert_blocks(nullptr);
      restart_from_zero();
    }
    bool solved = first_done_ && spec_ran_;  // xs holds the correction of the current r (speculative)
    for (int it = 0;; ++it) {
      const bool have = solved;
      solved = false;
      double eta = 0.0;
      if (it == 0 && first_done_) {
        eta = eta0_;
      } else {
        if (gmres_) {
          gmres_step();
          ++res_.gmres_steps;
        } else {
          if (!have) solve_step(r_, n_, nullptr);
          add_promoted_kernel<<<grid2(n_, nrhs_), 256, 0, s_>>>(xs_, n_, nrhs_, x_, ldx_, exps_, cexps_,
                                                                /*set=*/false, nullptr);
          GF_CUDA_CHECK_LAUNCH();
        }
        eta = residual_and_eta(next_plain_threshold(it, stage_steps_ + 1), nullptr, false);
      }
      const double prev = res_.backward_error.empty() ? INFINITY : res_.backward_error.back();
      res_.backward_error.push_back(eta);
      res_.iterations = it;
      ++stage_steps_;
      if (eta <= res_.tolerance) {
        res_.converged = true;
        break;
      }
      // stop (or escalate) on a non-finite iterate (η = ∞ for an overflowed x, NaN), on no
      // progress, or at the iteration limit
      const bool bad = !std::isfinite(eta);
      const bool stalled = bad || (stage_steps_ > 1 && !(eta < prev));
      if (it >= options_.max_iterations) break;
      if (res_.factor_mode == options_.factor_mode && may_escalate_ &&
          (stalled || stage_steps_ > MixedSolveOptions::kEscalateSteps)) {
        if (!escalate_factor()) break;
        invert_blocks(nullptr);
        if (bad) restart_from_zero();  // rather than from a non-finite iterate
        stage_steps_ = 0;
        continue;
      }
      if (bad || (gmres_ && !(eta < prev))) break;
      const bool final_factor = !may_escalate_ || res_.factor_mode != options_.factor_mode;
      if (!gmres_ && options_.gmres && final_factor && linalg::detail::refinement_too_slow(stage_steps_, eta, prev)) {
        gmres_ = true;
        stage_steps_ = 0;
        continue;
      }
      if (stalled) break;
      solved = spec_ran_;  // a plain next step: its solve may already have run
    }
  }

  /// η converged: above MixedSolveOptions::componentwise_threshold, banded steps while they lower
  /// ω toward the tolerance, each undone when it does not. ω itself only when its bound ω̂ (the
  /// last residual's SYMV; more right-hand sides: omega_bound_kernel) exceeds the threshold. (The
  /// last residual's gated next step, if queued, was skipped: η ≤ tol.)
  void componentwise() {
    // ω ≤ 1 always: a threshold ≥ 1 needs neither ω nor its bound
    const bool wanted = res_.converged && options_.componentwise_threshold < 1.0;
    double bound = 0.0;
    if (wanted && fast_) {
      bound = __builtin_bit_cast(double, hsc_->wmax);  // the last residual's SYMV
    } else if (wanted) {                               // from the last residual (cublasDsymm), b and x, entry by entry
      GF_CUDA_TRY(cudaMemsetAsync(&sc_->wmax, 0, sizeof(unsigned long long), s_));
      omega_bound_kernel<<<grid2(n_, nrhs_), 256, 0, s_>>>(r_, n_, b_, ldb_, x_, ldx_, a_, lda_, n_, nrhs_, &sc_->wmax);
      GF_CUDA_CHECK_LAUNCH();
      GF_CUDA_TRY(cudaMemcpyAsync(&hsc_->wmax, &sc_->wmax, sizeof(unsigned long long), cudaMemcpyDeviceToHost, s_));
      GF_CUDA_TRY(cudaStreamSynchronize(s_));
      bound = __builtin_bit_cast(double, hsc_->wmax);
    }
    if (!wanted || bound <= options_.componentwise_threshold) return;
    ByteBuffer kept;
    const auto copy_x = [&](bool save) {
      if (kept.empty()) kept = checked_buffer(sizeof(double) * nn_ * nr_, what_ + " componentwise steps");
      double* xk = DeviceSpan{kept.data()}.as<double>();
      GF_CUDA_TRY(cudaMemcpy2DAsync(save ? xk : x_, sizeof(double) * (save ? nn_ : std::size_t(ldx_)), save ? x_ : xk,
                                    sizeof(double) * (save ? std::size_t(ldx_) : nn_), sizeof(double) * nn_, nr_,
                                    cudaMemcpyDeviceToDevice, s_));
    };
    // ω still above the threshold and the tolerance after the steps (the budget spent, stalled
    // steps, or ω = ∞): not converged, the fp64 fallback (as the CPU)
    res_.componentwise_backward_error = linalg::detail::componentwise_steps(
        [&] { copy_x(true); }, [&] { banded_step(); },
        [&] { return residual_and_eta(NAN, nullptr, false, /*exact=*/true); }, [&] { return omega_now(); },
        [&] { copy_x(false); }, omega_now(), options_.componentwise_threshold, res_.tolerance, options_.max_iterations,
        res_.iterations, res_.componentwise_steps, res_.backward_error, res_.converged);
  }

  /// fp64 fallback: cuSOLVER potrf + potrs on a copy of A.
  void fallback_fp64() {
    const std::size_t nn = nn_;
    res_.used_fp64_fallback = true;
    int lwork = 0;
    ByteBuffer a64 = checked_buffer(align_up(sizeof(double) * nn * nn) + 256,
                                    what_ + " fp64 fallback (n = " + std::to_string(n_) + ")");
    double* af = DeviceSpan{a64.data()}.as<double>();
    int* dinfo = DeviceSpan{a64.data()}.as<int>(align_up(sizeof(double) * nn * nn));
    GF_CUDA_TRY(cudaMemcpy2DAsync(af, sizeof(double) * nn, a_, sizeof(double) * lda_, sizeof(double) * nn, nn,
                                  cudaMemcpyDeviceToDevice, s_));
    GF_CUSOLVER_TRY(cusolverDnDpotrf_bufferSize(ctx_.solver, CUBLAS_FILL_MODE_LOWER, int(n_), af, int(n_), &lwork));
    auto* work = static_cast<double*>(ctx_.workspace(sizeof(double) * std::max(lwork, 1), what_ + " fp64 fallback"));
    GF_CUSOLVER_TRY(cusolverDnDpotrf(ctx_.solver, CUBLAS_FILL_MODE_LOWER, int(n_), af, int(n_), work, lwork, dinfo));
    int info = 0;
    GF_CUDA_TRY(cudaMemcpyAsync(&info, dinfo, sizeof(int), cudaMemcpyDeviceToHost, s_));
    GF_CUDA_TRY(cudaStreamSynchronize(s_));
    res_.status = CholeskyStatus{};
    res_.status.info = info;
    if (info != 0) return;
    GF_CUDA_TRY(cudaMemcpy2DAsync(x_, sizeof(double) * ldx_, b_, sizeof(double) * ldb_, sizeof(double) * nn, nr_,
                                  cudaMemcpyDeviceToDevice, s_));
    GF_CUSOLVER_TRY(
        cusolverDnDpotrs(ctx_.solver, CUBLAS_FILL_MODE_LOWER, int(n_), int(nrhs_), af, int(n_), x_, int(ldx_), dinfo));
    const double eta = residual_and_eta(NAN, nullptr, false);
    if (!std::isfinite(eta)) res_.status.non_finite = true;
    res_.backward_error.push_back(eta);
    unscale_x();
  }

  const std::string what_ = "GpuCholesky::solve_mixed";
  GpuCholesky::Impl& ctx_;
  const cudaStream_t s_;
  const double* const a_;
  const std::int64_t n_, lda_;
  const double* b_;  // b·2^k (bs_) after demote_and_norms
  std::int64_t ldb_;
  const std::int64_t nrhs_;
  double* const x_;
  const std::int64_t ldx_;
  const MixedSolveOptions& options_;
  MixedSolveResult& res_;
  const std::size_t nn_, nr_;
  const std::int64_t ldas_;  // the fp32 copy's leading dimension
  const std::size_t parts_;  // ‖A‖∞'s partial sums per row
  const bool fast_;          // one right-hand side: our triangular solves, launches gated on the device
  const std::size_t nblk_;   // the triangular solves' diagonal blocks
  const bool scaled_;        // FP16 modes: A demoted as S·A·S, vectors as S·r
  const bool tiled_;
  const bool may_escalate_;  // one product (1×TF32, 1×FP16) escalates to three (3×TF32, 3×FP16)
  const Fp32Mode escalated_mode_;
  const int gmres_m_;  // GMRES-IR's Krylov dimension

  // the workspace's pieces (allocate())
  float *as_ = nullptr, *xs_ = nullptr, *inv_ = nullptr;
  double *r_ = nullptr, *vec_ = nullptr, *rowpart_ = nullptr, *colpart_ = nullptr, *symv_work_ = nullptr,
         *wscratch_ = nullptr, *bs_ = nullptr;
  RefineScalars* sc_ = nullptr;
  unsigned* tickets_ = nullptr;
  unsigned long long *pub_ = nullptr, *band_masks_ = nullptr;
  int *exps_ = nullptr, *cexps_ = nullptr, *cmax_ = nullptr, *bexp_ = nullptr;
  RefineScalars* hsc_ = nullptr;   // page-locked
  DeviceStatus* hst_ = nullptr;    // page-locked: the factor's status words
  ::gemflow::cuda::Event copied_;  // the scalars are on the host

  // the host's copies of the norms
  std::vector<double> bmax_, rmax_, xmax_;
  double anorm_ = 0.0;
  int n_overflow_ = 0;

  ByteBuffer abs_buf_;  // omega_setup()
  double* abs_work_ = nullptr;
  double omega_sc_ = 1.0;
  bool spec_ran_ = false, wmax_exact_ = false;  // residual_and_eta()
  ByteBuffer krylov_;                           // gmres_step()
  const std::function<void(const double*, double*)> solve32_col_fn_;

  bool first_done_ = false;  // x and r hold the first step's iterate and residual, eta0_ its η
  double eta0_ = 0.0;
  int stage_steps_ = 0;  // solves with the current factor (or GMRES-IR steps)
  bool gmres_ = false;   // the GMRES-IR stage
};
}  // namespace detail

MixedSolveResult GpuCholesky::solve_mixed(const double* a, std::int64_t n, std::int64_t lda, const double* b,
                                          std::int64_t ldb, std::int64_t nrhs, double* x, std::int64_t ldx,
                                          const MixedSolveOptions& options) {
  using namespace detail;
  const std::string what = "GpuCholesky::solve_mixed";
  const gemflow::cuda::NvtxRange range("cholesky solve_mixed", n);
  if (n < 0 || nrhs < 0)
    throw std::invalid_argument(what + ": n = " + std::to_string(n) + ", nrhs = " + std::to_string(nrhs) +
                                " must be ≥ 0");
  MixedSolveResult res;
  res.tolerance = options.tolerance >= 0 ? options.tolerance : std::sqrt(static_cast<double>(n)) * std::ldexp(1.0, -53);
  if (n == 0 || nrhs == 0) {
    res.converged = true;
    res.componentwise_backward_error = 0.0;
    return res;
  }
  if (lda < n || ldb < n || ldx < n)
    throw std::invalid_argument(what + ": lda, ldb and ldx must be ≥ n = " + std::to_string(n));
  if (n > INT_MAX || nrhs > INT_MAX) throw std::invalid_argument(what + ": n or nrhs exceeds cuBLAS's int range");
  if (a == nullptr || b == nullptr || x == nullptr) throw std::invalid_argument(what + ": null pointer");
  const bool tiled = options.factor_algo == CholeskyAlgo::tiled;
  if (options.factor_algo != CholeskyAlgo::lookahead && options.factor_algo != CholeskyAlgo::recursive && !tiled)
    throw std::invalid_argument(what + ": options.factor_algo must be lookahead, recursive or tiled");
  if (!algo_runs_mode(options.factor_algo, options.factor_mode))
    throw std::invalid_argument(
        what + ": factor_mode " + fp32_mode_name(options.factor_mode) +
        " needs factor_algo = " + algos_running_mode(options.factor_mode) +
        (options.factor_algo == CholeskyAlgo::recursive ? " (recursive: use tf32 or tf32x3)" : ""));
  if (is_fp16_mode(options.factor_mode) && options.factor_algo == CholeskyAlgo::lookahead &&
      options.factor_panel == PanelAlgo::library)
    throw std::invalid_argument(what + ": factor_mode " + fp32_mode_name(options.factor_mode) +
                                " needs factor_algo = lookahead with tensor-core panels, not library panels");
  MixedSolver(*impl_, a, n, lda, b, ldb, nrhs, x, ldx, options, res).run();
  return res;
}

// for tests (cholesky_cuda.hpp): the kernels of solve_mixed's one-right-hand-side solves
void triangular_solve_pair(const float* l, std::int64_t ldl, std::int64_t n, float* x, Stream stream) {
  using namespace detail;
  const std::string what = "triangular_solve_pair";
  if (n < 0 || ldl < std::max<std::int64_t>(1, n))
    throw std::invalid_argument(what + ": n = " + std::to_string(n) + " and ldl = " + std::to_string(ldl) +
                                " need 0 ≤ n ≤ ldl");
  if (n == 0) return;
  if (l == nullptr || x == nullptr) throw std::invalid_argument(what + ": null pointer");
  const auto s = static_cast<cudaStream_t>(stream);
  const std::int64_t nblk = (n + kTrsvB - 1) / kTrsvB;
  const std::size_t inv_b = sizeof(float) * 2 * std::size_t(nblk) * kTrsvB * kTrsvB;
  const std::size_t bytes = inv_b + 256 + sizeof(unsigned long long) * std::size_t(n);
  ByteBuffer buf = checked_buffer(bytes, what + " (n = " + std::to_string(n) + ")");
  const DeviceSpan span{buf.data()};
  auto* inv = span.as<float>();
  auto* tickets = span.as<unsigned>(inv_b);
  auto* pub = span.as<unsigned long long>(inv_b + 256);
  GF_CUDA_TRY(gemflow::cuda::allow_dynamic_smem(trsv_invert_diag_kernel, trsv_invert_smem_bytes()));
  GF_CUDA_TRY(gemflow::cuda::allow_dynamic_smem(trsv_kernel<false>, trsv_smem_bytes(false)));
  GF_CUDA_TRY(gemflow::cuda::allow_dynamic_smem(trsv_kernel<true>, trsv_smem_bytes(true)));
  trsv_invert_diag_kernel<<<unsigned(nblk), kTrsvB, trsv_invert_smem_bytes(), s>>>(l, ldl, n, inv, nullptr);
  GF_CUDA_CHECK_LAUNCH();
  GF_CUDA_TRY(cudaMemsetAsync(tickets, 0, sizeof(unsigned) * 2, s));
  GF_CUDA_TRY(cudaMemsetAsync(pub, 0, sizeof(unsigned long long) * std::size_t(n), s));
  trsv_kernel<false><<<unsigned(nblk), kTrsvThreads, trsv_smem_bytes(false), s>>>(l, ldl, n, inv, x, tickets, pub, 1u,
                                                                                  nullptr, nullptr);
  GF_CUDA_CHECK_LAUNCH();
  trsv_kernel<true><<<unsigned(nblk), kTrsvThreads, trsv_smem_bytes(true), s>>>(l, ldl, n, inv, x, tickets + 1, pub, 2u,
                                                                                nullptr, nullptr);
  GF_CUDA_CHECK_LAUNCH();
  GF_CUDA_TRY(cudaStreamSynchronize(s));  // before buf is freed
}

}  // namespace gemflow::linalg::cuda
