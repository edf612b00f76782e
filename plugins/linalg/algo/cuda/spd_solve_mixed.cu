// Mixed-precision SPD solve: fp32 Cholesky (lookahead or recursive; exact, TF32 or FP16 products; the
// FP16 modes on S·A·S, equilibrated by powers of two as A is demoted), fp32 triangular
// solves, fp64 residuals and iterative refinement to fp64 backward error (LAPACK dsposv's scheme;
// Langou et al., SC 2006), fp64 cuSOLVER fallback.
#include <cublas_v2.h>
#include <cuda_runtime.h>
#include <cusolverDn.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include <gemflow/cuda_smem.hpp>

#include "context.cuh"
#include "cuda_check.cuh"
#include "demote_kernels.cuh"
#include "../gmres_ir.hpp"
#include "equilibrate.cuh"
#include "symv_kernels.cuh"
#include "trsv_kernels.cuh"

// Timeline hook (linalg_bench_cholesky_timeline --mixed defines it, as for cholesky.cu): an event
// on the solve's stream after each stage.
#ifndef GF_CHOL_TRACE
#define GF_CHOL_TRACE(stream, what, k) ((void)0)
#endif

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

/// Owned device allocation (memory checked first).
class DeviceBuffer {
 public:
  DeviceBuffer(std::size_t bytes, const std::string& what) {
    require_free_memory(bytes, what);
    GF_CUDA_TRY(cudaMalloc(&p_, std::max<std::size_t>(bytes, 1)));
  }
  ~DeviceBuffer() { GF_CUDA_TRY_NO_THROW(cudaFree(p_)); }
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
  template <class T>
  T* as(std::size_t byte_offset = 0) const {
    return DeviceSpan{p_}.as<T>(byte_offset);
  }

 private:
  void* p_ = nullptr;
};

/// rs = fp32(S·r) (S = diag(2^e); e = nullptr: S = I).
__global__ void demote_kernel(const double* r, std::int64_t ldr, std::int64_t n, std::int64_t nrhs, float* rs,
                              const int* e) {
  const std::int64_t i = blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x;
  if (i >= n) return;
  const int ei = e ? e[i] : 0;
  for (std::int64_t j = blockIdx.y; j < nrhs; j += gridDim.y)
    rs[i + j * n] = static_cast<float>(ldexp(r[i + j * ldr], ei));
}

/// x += S·ds in fp64 (S as in demote_kernel): A⁻¹ = S·(S·A·S)⁻¹·S.
__global__ void add_promoted_kernel(const float* ds, std::int64_t n, std::int64_t nrhs, double* x, std::int64_t ldx,
                                    const int* e) {
  const std::int64_t i = blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x;
  if (i >= n) return;
  const int ei = e ? e[i] : 0;
  for (std::int64_t j = blockIdx.y; j < nrhs; j += gridDim.y)
    x[i + j * ldx] += ldexp(static_cast<double>(ds[i + j * n]), ei);
}

/// out[j] = max_i |m(i, j)|, j < cols (NaN propagates), as the bits of the double; out zeroed
/// before. Blocks over rows (grid.x) and columns (grid.y, strided). Non-negative doubles order as
/// their bit patterns, and |NaN| (sign cleared) lies above +Inf, so a 64-bit atomicMax on the bits
/// is the maximum, NaN included, whatever the order. (One block per column took about 15 µs at
/// n = 16k: a chain of 64 loads per thread.)
__global__ void __launch_bounds__(256) colmax_kernel(const double* m, std::int64_t ld, std::int64_t n,
                                                     std::int64_t cols, unsigned long long* out) {
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
  const double* r;  // the right-hand side (a column of the residual)
  double* x;        // the column of x that d is added to
  double *V, *Z, *w, *hd;  // hd: 2·(m+1) device doubles
  double* symv_work;       // symv_workspace_doubles(n)
  std::vector<double>& h2;  // 2·(m+1) host doubles
  const std::function<void(const double*, double*)>& solve32;

  double nrm2(const double* v) const {
    double out = 0;
    GF_CUBLAS_TRY(cublasDnrm2(blas, int(n), v, 1, &out));  // host result: synchronises
    return out;
  }
  void set_scaled(double* dst, const double* src, double f) const {
    GF_CUBLAS_TRY(cublasDcopy(blas, int(n), src, 1, dst, 1));
    GF_CUBLAS_TRY(cublasDscal(blas, int(n), &f, dst, 1));
  }
  double start() {
    const double beta = nrm2(r);
    if (beta > 0 && std::isfinite(beta)) set_scaled(V, r, 1.0 / beta);
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
    if (hn > 0 && std::isfinite(hn) && j + 1 < m) set_scaled(V + (j + 1) * n, w, 1.0 / hn);
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
}

MixedSolveResult GpuCholesky::solve_mixed(const double* a, std::int64_t n, std::int64_t lda, const double* b,
                                          std::int64_t ldb, std::int64_t nrhs, double* x, std::int64_t ldx,
                                          const MixedSolveOptions& options) {
  using namespace detail;
  const std::string what = "GpuCholesky::solve_mixed";
  if (n < 0 || nrhs < 0)
    throw std::invalid_argument(what + ": n = " + std::to_string(n) + ", nrhs = " + std::to_string(nrhs) + " must be ≥ 0");
  MixedSolveResult res;
  res.tolerance = options.tolerance >= 0 ? options.tolerance : std::sqrt(static_cast<double>(n)) * std::ldexp(1.0, -53);
  if (n == 0 || nrhs == 0) {
    res.converged = true;
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
    throw std::invalid_argument(what + ": factor_mode " + fp32_mode_name(options.factor_mode) +
                                " needs factor_algo = " + algos_running_mode(options.factor_mode) +
                                (options.factor_algo == CholeskyAlgo::recursive ? " (recursive: use tf32 or tf32x3)"
                                                                                : ""));
  if (is_fp16_mode(options.factor_mode) && options.factor_algo == CholeskyAlgo::lookahead &&
      options.factor_panel == PanelAlgo::library)
    throw std::invalid_argument(what + ": factor_mode " + fp32_mode_name(options.factor_mode) +
                                " needs factor_algo = lookahead with tensor-core panels, not library panels");
  auto& ctx = *impl_;
  const cudaStream_t s = ctx.stream;
  const std::size_t nn = static_cast<std::size_t>(n), nr = static_cast<std::size_t>(nrhs);
  // the fp32 copy's leading dimension, a multiple of 4: the transposed triangular solve reads its
  // columns 16 bytes at a time
  const std::int64_t ldas = (n + 3) / 4 * 4;
  const std::size_t as_b = align_up(sizeof(float) * std::size_t(ldas) * nn), xs_b = align_up(sizeof(float) * nn * nr),
                    r_b = align_up(sizeof(double) * nn * nr), v_b = align_up(sizeof(double) * std::max(nn, 2 * nr));
  const std::size_t parts = (nn + kNormTile - 1) / kNormTile, p_b = align_up(sizeof(double) * parts * nn);
  // one right-hand side: our triangular solves (inverted diagonal blocks, tickets, tagged values)
  const std::size_t nblk = (nn + kTrsvB - 1) / kTrsvB;
  const std::size_t inv_b = nrhs == 1 ? align_up(sizeof(float) * 2 * nblk * kTrsvB * kTrsvB) : 0,
                    flag_b = nrhs == 1 ? align_up(sizeof(unsigned) * 2) + align_up(sizeof(unsigned long long) * nn) : 0;
  // FP16 modes: the equilibration exponents (A is demoted as S·A·S, vectors as S·r)
  const bool scaled = is_fp16_mode(options.factor_mode);
  const std::size_t e_b = scaled ? align_up(sizeof(int) * nn) : 0;
  const std::size_t sym_b = align_up(sizeof(double) * std::size_t(symv_workspace_doubles(n)));
  const DeviceSpan buf{ctx.solve_workspace(as_b + xs_b + r_b + v_b + 256 + 2 * p_b + inv_b + flag_b + e_b + sym_b,
                                           what + " (n = " + std::to_string(n) + ")")};
  float* as = buf.as<float>();
  float* xs = buf.as<float>(as_b);
  double* r = buf.as<double>(as_b + xs_b);
  double* vec = buf.as<double>(as_b + xs_b + r_b);
  int* overflow = buf.as<int>(as_b + xs_b + r_b + v_b);
  double* rowpart = buf.as<double>(as_b + xs_b + r_b + v_b + 256);
  double* colpart = buf.as<double>(as_b + xs_b + r_b + v_b + 256 + p_b);
  float* inv = buf.as<float>(as_b + xs_b + r_b + v_b + 256 + 2 * p_b);
  auto* tickets = buf.as<unsigned>(as_b + xs_b + r_b + v_b + 256 + 2 * p_b + inv_b);
  auto* pub = buf.as<unsigned long long>(as_b + xs_b + r_b + v_b + 256 + 2 * p_b + inv_b +
                                         align_up(sizeof(unsigned) * 2));  // tagged values
  int* exps = scaled ? buf.as<int>(as_b + xs_b + r_b + v_b + 256 + 2 * p_b + inv_b + flag_b) : nullptr;
  double* symv_work = buf.as<double>(as_b + xs_b + r_b + v_b + 256 + 2 * p_b + inv_b + flag_b + e_b);

  // fp32 copy of A and ‖A‖∞ in one pass, then ‖b_j‖∞
  GF_CUDA_TRY(cudaMemsetAsync(overflow, 0, sizeof(int), s));
  if (scaled) {
    equilibrate_exponents_kernel<double><<<unsigned((n + 255) / 256), 256, 0, s>>>(a, lda, n, exps);
    GF_CUDA_CHECK_LAUNCH();
  }
  demote_norm_kernel<<<dim3(unsigned(parts), unsigned(parts)), dim3(kNormTile, 2), 0, s>>>(a, lda, n, as, ldas,
                                                                                          exps, overflow, rowpart,
                                                                                          colpart);
  GF_CUDA_CHECK_LAUNCH();
  sum_parts_kernel<<<unsigned((n + kSumPartsK - 1) / kSumPartsK), kSumPartsK * kSumPartsSegs, 0, s>>>(
      rowpart, colpart, n, std::int64_t(parts), vec);
  GF_CUDA_CHECK_LAUNCH();
  double* anorm_d = buf.as<double>(as_b + xs_b + r_b + v_b + 8);  // beside `overflow`
  colmax(vec, n, n, 1, anorm_d, s);                                 // ‖A‖∞: the largest row sum
  colmax(b, ldb, n, nrhs, vec, s);                                  // ‖b_j‖∞
  GF_CHOL_TRACE(s, "demote, norms", 0);
  std::vector<double> bmax(nr), rmax(nr), xmax(nr);
  double anorm = 0.0;
  int n_overflow = 0;

  // fp32 factor of the fp32 copy `as` (overwritten), in `mode`; false when it is not SPD there
  const auto factor32 = [&](Fp32Mode mode) {
    CholeskyOptions fo;
    // the tiled kernel has one product only: an escalation to 3×FP16 takes the lookahead
    fo.algo = tiled && mode == Fp32Mode::fp16x3 ? CholeskyAlgo::lookahead : options.factor_algo;
    fo.fp32_mode = mode;
    fo.panel = options.factor_panel;
    res.factor_mode = mode;
    res.fp32_status = factor_impl<float>(ctx, as, n, ldas, fo, /*equilibrated=*/scaled, /*scan=*/false);
    GF_CHOL_TRACE(s, "fp32 factor", 0);
    return res.fp32_status.ok();
  };
  const auto invert_blocks = [&]() {  // the inverted diagonal blocks of the triangular solves
    if (nrhs != 1) return;
    GF_CUDA_TRY(gemflow::cuda::allow_dynamic_smem(trsv_invert_diag_kernel, trsv_invert_smem_bytes()));
    trsv_invert_diag_kernel<<<unsigned(nblk), kTrsvB, trsv_invert_smem_bytes(), s>>>(as, ldas, n, inv);
    GF_CUDA_CHECK_LAUNCH();
    GF_CHOL_TRACE(s, "inverted blocks", 0);
  };
  // one product (1×TF32, 1×FP16) escalates to three (3×TF32, 3×FP16)
  const bool may_escalate =
      options.escalate && (options.factor_mode == Fp32Mode::tf32 || options.factor_mode == Fp32Mode::fp16);
  const Fp32Mode escalated_mode = options.factor_mode == Fp32Mode::fp16 ? Fp32Mode::fp16x3 : Fp32Mode::tf32x3;
  const auto escalate_factor = [&]() {  // a three-product factor of A in place of the one-product one
    res.escalated = true;
    demote_norm_kernel<<<dim3(unsigned(parts), unsigned(parts)), dim3(kNormTile, 2), 0, s>>>(a, lda, n, as, ldas,
                                                                                            exps, overflow, rowpart,
                                                                                            colpart);
    GF_CUDA_CHECK_LAUNCH();
    return factor32(escalated_mode);
  };
  // The fp32 factor goes right behind the demotion, before ‖A‖∞ and the overflow count reach the
  // host (no host round trip between the two); factor_impl waits for its own status, and then
  // those are one small copy away. A NaN or Inf in A (its lower triangle) makes ‖A‖∞ non-finite,
  // and an entry beyond fp32 overflows the copy: the fp32 result is then discarded, with no
  // escalation (the fp32 factor is not scanned), and the fp64 fallback reports it.
  const Fp32Mode mode_before = res.factor_mode;
  bool fp32_ok = factor32(options.factor_mode);
  GF_CUDA_TRY(cudaMemcpyAsync(&n_overflow, overflow, sizeof(int), cudaMemcpyDeviceToHost, s));
  GF_CUDA_TRY(cudaMemcpyAsync(&anorm, anorm_d, sizeof(double), cudaMemcpyDeviceToHost, s));
  GF_CUDA_TRY(cudaMemcpyAsync(bmax.data(), vec, sizeof(double) * nr, cudaMemcpyDeviceToHost, s));
  GF_CUDA_TRY(cudaStreamSynchronize(s));
  if (n_overflow != 0 || !std::isfinite(anorm)) {
    fp32_ok = false;
    res.fp32_status = CholeskyStatus{};
    res.fp32_status.non_finite = !std::isfinite(anorm);
    res.factor_mode = mode_before;
  } else if (!fp32_ok && may_escalate) {
    fp32_ok = escalate_factor();
  }
  if (fp32_ok) invert_blocks();

  const auto residual_and_eta = [&]() -> double {
    if (nrhs == 1) {  // SYMV: one memory-bound pass over the lower triangle (symv_kernels.cuh)
      symv_lower(a, lda, n, x, b, r, symv_work, s);
      GF_CUDA_CHECK_LAUNCH();
      GF_CHOL_TRACE(s, "symv", 0);
    } else {
      GF_CUDA_TRY(cudaMemcpy2DAsync(r, sizeof(double) * nn, b, sizeof(double) * ldb, sizeof(double) * nn, nr,
                                    cudaMemcpyDeviceToDevice, s));
      const double minus_one = -1.0, one = 1.0;
      GF_CUBLAS_TRY(cublasDsymm(ctx.blas, CUBLAS_SIDE_LEFT, CUBLAS_FILL_MODE_LOWER, int(n), int(nrhs), &minus_one, a,
                                int(lda), x, int(ldx), &one, r, int(n)));
    }
    colmax(r, n, n, nrhs, vec, s);
    colmax(x, ldx, n, nrhs, vec + nrhs, s);
    GF_CUDA_TRY(cudaMemcpyAsync(rmax.data(), vec, sizeof(double) * nr, cudaMemcpyDeviceToHost, s));
    GF_CUDA_TRY(cudaMemcpyAsync(xmax.data(), vec + nrhs, sizeof(double) * nr, cudaMemcpyDeviceToHost, s));
    GF_CUDA_TRY(cudaStreamSynchronize(s));
    GF_CHOL_TRACE(s, "eta, sync", 0);
    double eta = 0.0;
    for (std::size_t j = 0; j < nr; ++j) {
      const double den = anorm * xmax[j] + bmax[j];
      // an overflowed fp32 solve (x not finite) is not converged, whatever r/∞ would say
      const double e = !std::isfinite(xmax[j]) ? INFINITY : den > 0 ? rmax[j] / den : (rmax[j] > 0 ? INFINITY : 0.0);
      eta = (e != e || e > eta) ? e : eta;
    }
    return eta;
  };

  // L y = v, Lᵀ d = y in place in xs (one right-hand side: trsv_kernels.cuh)
  const auto trsv_pair = [&]() {
    GF_CUDA_TRY(cudaMemsetAsync(tickets, 0, sizeof(unsigned) * 2, s));
    GF_CUDA_TRY(cudaMemsetAsync(pub, 0, sizeof(unsigned long long) * nn, s));  // no word tagged 1 or 2
    trsv_kernel<false><<<unsigned(nblk), kTrsvThreads, trsv_smem_bytes(false), s>>>(as, ldas, n, inv, xs, tickets,
                                                                                      pub, 1u);
    GF_CUDA_CHECK_LAUNCH();
    trsv_kernel<true><<<unsigned(nblk), kTrsvThreads, trsv_smem_bytes(true), s>>>(as, ldas, n, inv, xs, tickets + 1,
                                                                                    pub, 2u);
    GF_CUDA_CHECK_LAUNCH();
  };
  // L·Lᵀ·d = xs in place for the first `cols` columns of xs: one right-hand side, our solves; more,
  // cuBLAS STRSM
  const auto fp32_solve = [&](std::int64_t cols) {
    if (nrhs == 1) {
      trsv_pair();
      return;
    }
    const float one = 1.0f;
    GF_CUBLAS_TRY(cublasStrsm(ctx.blas, CUBLAS_SIDE_LEFT, CUBLAS_FILL_MODE_LOWER, CUBLAS_OP_N, CUBLAS_DIAG_NON_UNIT,
                              int(n), int(cols), &one, as, int(ldas), xs, int(n)));
    GF_CUBLAS_TRY(cublasStrsm(ctx.blas, CUBLAS_SIDE_LEFT, CUBLAS_FILL_MODE_LOWER, CUBLAS_OP_T, CUBLAS_DIAG_NON_UNIT,
                              int(n), int(cols), &one, as, int(ldas), xs, int(n)));
  };
  // M⁻¹ with the fp32 factor, one column: z = S·(S·A·S)⁻¹·S·v (xs's first column as scratch)
  const std::function<void(const double*, double*)> solve32_col = [&](const double* v, double* z) {
    demote_kernel<<<grid2(n, 1), 256, 0, s>>>(v, n, n, 1, xs, exps);
    GF_CUDA_CHECK_LAUNCH();
    fp32_solve(1);
    GF_CUDA_TRY(cudaMemsetAsync(z, 0, sizeof(double) * nn, s));
    add_promoted_kernel<<<grid2(n, 1), 256, 0, s>>>(xs, n, 1, z, n, exps);
    GF_CUDA_CHECK_LAUNCH();
  };

  // GMRES-IR (gmres_ir.hpp): x_c += FGMRES solution of A d = r_c for every column, Krylov
  // vectors V (n × (m+1)) and Z = M⁻¹V (n × m) in fp64, allocated on first use
  std::unique_ptr<DeviceBuffer> krylov;
  const int m = static_cast<int>(std::min<std::int64_t>(linalg::detail::kGmresIterations, n));
  const auto gmres_step = [&]() {
    const std::size_t vz_b = align_up(sizeof(double) * nn * std::size_t(2 * m + 2));
    if (!krylov) krylov = std::make_unique<DeviceBuffer>(vz_b + sizeof(double) * 2 * (m + 1), what + " GMRES-IR vectors");
    double* V = krylov->as<double>();
    double* Z = V + nn * std::size_t(m + 1);
    double* w = Z + nn * std::size_t(m);
    double* hd = krylov->as<double>(vz_b);
    std::vector<double> h2(2 * std::size_t(m + 1));
    for (std::int64_t c = 0; c < nrhs; ++c) {
      DeviceFgmres ops{ctx.blas, s, a, lda, n, m, r + c * nn, x + c * ldx, V, Z, w, hd, symv_work, h2, solve32_col};
      res.gmres_iterations += linalg::detail::fgmres(ops, m, linalg::detail::kGmresRelTol);
    }
  };

  if (fp32_ok) {
    // x = 0, r = b; then x += solve32(r), r = b − A x until η ≤ tol
    GF_CUDA_TRY(cudaMemset2DAsync(x, sizeof(double) * ldx, 0, sizeof(double) * nn, nr, s));
    GF_CUDA_TRY(cudaMemcpy2DAsync(r, sizeof(double) * nn, b, sizeof(double) * ldb, sizeof(double) * nn, nr,
                                  cudaMemcpyDeviceToDevice, s));
    if (nrhs == 1) {
      GF_CUDA_TRY(gemflow::cuda::allow_dynamic_smem(trsv_kernel<false>, trsv_smem_bytes(false)));
      GF_CUDA_TRY(gemflow::cuda::allow_dynamic_smem(trsv_kernel<true>, trsv_smem_bytes(true)));
    }
    int stage_steps = 0;  // solves with the current factor (or GMRES-IR steps)
    bool gmres = false;   // the GMRES-IR stage
    for (int it = 0;; ++it) {
      if (gmres) {
        gmres_step();
        ++res.gmres_steps;
      } else {
        demote_kernel<<<grid2(n, nrhs), 256, 0, s>>>(r, n, n, nrhs, xs, exps);
        GF_CUDA_CHECK_LAUNCH();
        GF_CHOL_TRACE(s, "start of step", 0);
        fp32_solve(nrhs);
        GF_CHOL_TRACE(s, "solve pair", 0);
        add_promoted_kernel<<<grid2(n, nrhs), 256, 0, s>>>(xs, n, nrhs, x, ldx, exps);
        GF_CUDA_CHECK_LAUNCH();
      }
      const double eta = residual_and_eta();
      const double prev = res.backward_error.empty() ? INFINITY : res.backward_error.back();
      res.backward_error.push_back(eta);
      res.iterations = it;
      ++stage_steps;
      if (eta <= res.tolerance) {
        res.converged = true;
        break;
      }
      // stop (or escalate) on a non-finite iterate (η = ∞ for an overflowed x, NaN), on no
      // progress, or at the iteration limit
      const bool bad = !std::isfinite(eta);
      const bool stalled = bad || (stage_steps > 1 && !(eta < prev));
      if (it >= options.max_iterations) break;
      if (res.factor_mode == options.factor_mode && may_escalate &&
          (stalled || stage_steps > MixedSolveOptions::kEscalateSteps)) {
        if (!escalate_factor()) break;
        if (bad) {  // restart from x = 0 rather than from a non-finite iterate
          GF_CUDA_TRY(cudaMemset2DAsync(x, sizeof(double) * ldx, 0, sizeof(double) * nn, nr, s));
          GF_CUDA_TRY(cudaMemcpy2DAsync(r, sizeof(double) * nn, b, sizeof(double) * ldb, sizeof(double) * nn, nr,
                                        cudaMemcpyDeviceToDevice, s));
        }
        stage_steps = 0;
        continue;
      }
      if (bad || (gmres && !(eta < prev))) break;
      const bool final_factor = !may_escalate || res.factor_mode != options.factor_mode;
      if (!gmres && options.gmres && final_factor && linalg::detail::refinement_too_slow(stage_steps, eta, prev)) {
        gmres = true;
        stage_steps = 0;
        continue;
      }
      if (stalled) break;
    }
  }
  res.status = res.fp32_status;
  // the fp32 factor is not scanned: a non-finite factor shows as a non-finite last iterate
  if (!res.converged && !res.backward_error.empty() && !std::isfinite(res.backward_error.back()))
    res.status.non_finite = true;
  if (res.converged) return res;
  if (!options.fallback_fp64) return res;

  // fp64 fallback: cuSOLVER potrf + potrs on a copy of A
  res.used_fp64_fallback = true;
  int lwork = 0;
  DeviceBuffer a64(align_up(sizeof(double) * nn * nn) + 256, what + " fp64 fallback (n = " + std::to_string(n) + ")");
  double* af = a64.as<double>();
  int* dinfo = a64.as<int>(align_up(sizeof(double) * nn * nn));
  GF_CUDA_TRY(cudaMemcpy2DAsync(af, sizeof(double) * nn, a, sizeof(double) * lda, sizeof(double) * nn, nn,
                                cudaMemcpyDeviceToDevice, s));
  GF_CUSOLVER_TRY(cusolverDnDpotrf_bufferSize(ctx.solver, CUBLAS_FILL_MODE_LOWER, int(n), af, int(n), &lwork));
  auto* work = static_cast<double*>(ctx.workspace(sizeof(double) * std::max(lwork, 1), what + " fp64 fallback"));
  GF_CUSOLVER_TRY(cusolverDnDpotrf(ctx.solver, CUBLAS_FILL_MODE_LOWER, int(n), af, int(n), work, lwork, dinfo));
  int info = 0;
  GF_CUDA_TRY(cudaMemcpyAsync(&info, dinfo, sizeof(int), cudaMemcpyDeviceToHost, s));
  GF_CUDA_TRY(cudaStreamSynchronize(s));
  res.status = CholeskyStatus{};
  res.status.info = info;
  if (info != 0) return res;
  GF_CUDA_TRY(cudaMemcpy2DAsync(x, sizeof(double) * ldx, b, sizeof(double) * ldb, sizeof(double) * nn, nr,
                                cudaMemcpyDeviceToDevice, s));
  GF_CUSOLVER_TRY(cusolverDnDpotrs(ctx.solver, CUBLAS_FILL_MODE_LOWER, int(n), int(nrhs), af, int(n), x, int(ldx), dinfo));
  const double eta = residual_and_eta();
  if (!std::isfinite(eta)) res.status.non_finite = true;
  res.backward_error.push_back(eta);
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
  const DeviceBuffer buf(bytes, what + " (n = " + std::to_string(n) + ")");
  auto* inv = buf.as<float>();
  auto* tickets = buf.as<unsigned>(inv_b);
  auto* pub = buf.as<unsigned long long>(inv_b + 256);
  GF_CUDA_TRY(gemflow::cuda::allow_dynamic_smem(trsv_invert_diag_kernel, trsv_invert_smem_bytes()));
  GF_CUDA_TRY(gemflow::cuda::allow_dynamic_smem(trsv_kernel<false>, trsv_smem_bytes(false)));
  GF_CUDA_TRY(gemflow::cuda::allow_dynamic_smem(trsv_kernel<true>, trsv_smem_bytes(true)));
  trsv_invert_diag_kernel<<<unsigned(nblk), kTrsvB, trsv_invert_smem_bytes(), s>>>(l, ldl, n, inv);
  GF_CUDA_CHECK_LAUNCH();
  GF_CUDA_TRY(cudaMemsetAsync(tickets, 0, sizeof(unsigned) * 2, s));
  GF_CUDA_TRY(cudaMemsetAsync(pub, 0, sizeof(unsigned long long) * std::size_t(n), s));
  trsv_kernel<false><<<unsigned(nblk), kTrsvThreads, trsv_smem_bytes(false), s>>>(l, ldl, n, inv, x, tickets, pub,
                                                                                    1u);
  GF_CUDA_CHECK_LAUNCH();
  trsv_kernel<true><<<unsigned(nblk), kTrsvThreads, trsv_smem_bytes(true), s>>>(l, ldl, n, inv, x, tickets + 1, pub,
                                                                                  2u);
  GF_CUDA_CHECK_LAUNCH();
  GF_CUDA_TRY(cudaStreamSynchronize(s));  // before buf is freed
}

}  // namespace gemflow::linalg::cuda
