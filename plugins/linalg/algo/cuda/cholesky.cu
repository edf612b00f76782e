// GPU Cholesky (lower, column-major): blocked, recursive, cuSOLVER, lookahead (with a tiled tail
// for fp64) and tiled paths, fp64 and fp32 (exact, TF32 or FP16 products). See
// gemflow/linalg/cholesky_cuda.hpp.
#include <cublas_v2.h>
#include <cuda.h>
#include <cudaTypedefs.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>
#include <cusolverDn.h>

#include <algorithm>
#include <climits>
#include <cstdio>
#include <exception>
#include <initializer_list>
#include <optional>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include <gemflow/cuda/nvtx.hpp>
#include <gemflow/cuda_smem.hpp>

#include "context.cuh"  // GpuCholesky::Impl; gemflow/cuda/ checks and buffers
#include "equilibrate.cuh"
#include "panel_kernels.cuh"
#include "potrf_kernels.cuh"
#include "tiled_kernels.cuh"

namespace gemflow::linalg::cuda::detail {
namespace {
/// The tensor map of the tiled kernel's tensor copies (kAsync): the n×n column-major fp64 matrix
/// at a (lda even, a 16-byte aligned), boxes of kTmaBoxRows × kTmaBoxCols, rows and columns ≥ n
/// read as zero. cuTensorMapEncodeTiled through the runtime's driver entry point (no link to
/// libcuda). Throws CudaError when the driver lacks it or refuses the layout.
CUtensorMap tiled_tensor_map(const double* a, std::int64_t n, std::int64_t lda) {
  static PFN_cuTensorMapEncodeTiled_v12000 encode = [] {
    void* fn = nullptr;
    cudaDriverEntryPointQueryResult found{};
    GF_CUDA_TRY(cudaGetDriverEntryPointByVersion("cuTensorMapEncodeTiled", &fn, 12000, cudaEnableDefault, &found));
    if (found != cudaDriverEntryPointSuccess || fn == nullptr)
      throw CudaError("the CUDA driver has no cuTensorMapEncodeTiled (the tiled Cholesky's tensor copies)");
    return reinterpret_cast<PFN_cuTensorMapEncodeTiled_v12000>(fn);
  }();
  CUtensorMap map{};
  const cuuint64_t dims[2] = {static_cast<cuuint64_t>(n), static_cast<cuuint64_t>(n)};
  const cuuint64_t strides[1] = {static_cast<cuuint64_t>(lda) * sizeof(double)};
  const cuuint32_t box[2] = {kTmaBoxRows, kTmaBoxCols}, steps[2] = {1, 1};
  const CUresult r = encode(&map, CU_TENSOR_MAP_DATA_TYPE_FLOAT64, 2, const_cast<double*>(a), dims, strides, box, steps,
                            CU_TENSOR_MAP_INTERLEAVE_NONE, CU_TENSOR_MAP_SWIZZLE_NONE,
                            CU_TENSOR_MAP_L2_PROMOTION_L2_256B, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
  if (r != CUDA_SUCCESS)
    throw CudaError("cuTensorMapEncodeTiled failed (" + std::to_string(static_cast<int>(r)) +
                    ") for the tiled Cholesky of n = " + std::to_string(n) + ", lda = " + std::to_string(lda));
  return map;
}
}  // namespace
}  // namespace gemflow::linalg::cuda::detail

namespace gemflow::linalg::cuda {
namespace detail {

void require_free_memory(std::size_t bytes, const std::string& what) {
  std::size_t free_b = 0, total_b = 0;
  GF_CUDA_TRY(cudaMemGetInfo(&free_b, &total_b));
  // keep 64 MiB for the libraries' own scratch
  const std::size_t margin = std::size_t{64} << 20;
  if (bytes + margin > free_b) {
    char buf[256];
    std::snprintf(buf, sizeof buf, "%s: needs %.2f GiB of device memory, %.2f GiB free of %.2f GiB", what.c_str(),
                  bytes / 1073741824.0, free_b / 1073741824.0, total_b / 1073741824.0);
    throw CudaError(buf);
  }
}

// ---- kernels ---------------------------------------------------------------------------

/// One-block leaf factorisation of the n×n (n ≤ NB) diagonal block at a (lda); folds a failure
/// into st->info as offset + k (first failure wins: leaves run in diagonal order).
template <class T, int NB, int TY>
__global__ void __launch_bounds__(32 * TY)
    potrf_leaf_kernel(T* a, std::int64_t lda, int n, std::int64_t offset, DeviceStatus* st) {
  extern __shared__ unsigned char smem_raw[];
  T* s = reinterpret_cast<T*>(smem_raw);
  load_lower<T, NB>(s, a, lda, n);
  const int fail = potrf_shared<T, NB, TY>(s, n);
  store_lower<T, NB>(a, lda, s, n);
  if (fail && threadIdx.x == 0 && threadIdx.y == 0 && st->info == 0) st->info = offset + fail;
}

/// After a cuSOLVER potrf of the nb×nb block at a: info = offset + min(devInfo, first diagonal
/// of L that is not a positive finite number) when no earlier failure was recorded.
template <class T>
__global__ void fold_info_kernel(const T* a, std::int64_t lda, int nb, std::int64_t offset, DeviceStatus* st) {
  __shared__ int first;
  if (threadIdx.x == 0) first = INT_MAX;
  __syncthreads();
  const int li = st->local_info;
  const int limit = li > 0 ? li - 1 : nb;
  for (int j = threadIdx.x; j < limit; j += blockDim.x)
    if (bad_pivot(a[j + j * lda])) atomicMin(&first, j + 1);
  __syncthreads();
  if (threadIdx.x == 0) {
    int cand = first;
    if (li > 0) cand = min(cand, li);
    if (cand != INT_MAX && st->info == 0) st->info = offset + cand;
  }
}

/// Flags the first column < info−1 (all columns when info = 0) of the lower triangle holding a
/// NaN/Inf. One warp per column. Run on the input (info = 0: every column) and on the factor
/// (the completed columns); a failing pivot itself is not inspected (cuSOLVER may leave
/// sqrt(negative) = NaN there).
template <class T>
__global__ void scan_nonfinite_kernel(const T* a, std::int64_t lda, std::int64_t n, DeviceStatus* st) {
  const long long info = st->info;
  const std::int64_t limit = info > 0 ? info - 1 : n;
  const std::int64_t warp = (blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x) / 32;
  const int lane = threadIdx.x % 32;
  const std::int64_t nwarps = static_cast<std::int64_t>(gridDim.x) * blockDim.x / 32;
  for (std::int64_t j = warp; j < limit; j += nwarps) {
    bool bad = false;
    for (std::int64_t i = j + lane; i < n; i += 32) bad |= !isfinite(a[i + j * lda]);
    if (__any_sync(0xffffffffu, bad) && lane == 0) atomicMin(&st->nonfinite_col, static_cast<long long>(j + 1));
  }
}

/// K-chunk of the 3×TF32 products: the tensor cores accumulate a chunk (truncating, not
/// rounding), cuBLAS then adds it to C in fp32. Unchunked, the hi·lo corrections drown in a
/// K = n/2 accumulation (β 77× spotrf's at n = 32k, H200); chunks of 512 keep β within a few
/// spotrf's (docs/performance.md).
constexpr std::int64_t kTf32x3Chunk = 512;

/// Splits the rows×k block a (lda) for a 3×TF32 product into dst (ld rows, 3k columns), chunk by
/// chunk of kTf32x3Chunk columns: chunk q (cq columns, from column q·C) occupies columns
/// 3·q·C … 3·q·C + 3·cq − 1 as [hi | hi | lo] (first operand) or [hi | lo | hi] (second),
/// hi = tf32(x) (round to nearest, ties away), lo = x − hi.
__global__ void split_tf32_kernel(const float* a, std::int64_t lda, std::int64_t rows, std::int64_t k, float* dst,
                                  bool first_operand) {
  const std::int64_t i = blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x;
  if (i >= rows) return;
  for (std::int64_t j = blockIdx.y * blockDim.y + threadIdx.y; j < k;
       j += static_cast<std::int64_t>(gridDim.y) * blockDim.y) {
    const float x = a[i + j * lda];
    unsigned int u;
    asm("cvt.rna.tf32.f32 %0, %1;" : "=r"(u) : "f"(x));
    const float hi = __uint_as_float(u);
    const float lo = x - hi;
    const std::int64_t q = j / kTf32x3Chunk, r = j - q * kTf32x3Chunk;
    const std::int64_t cq = min(kTf32x3Chunk, k - q * kTf32x3Chunk), base = 3 * q * kTf32x3Chunk;
    dst[i + (base + r) * rows] = hi;
    dst[i + (base + cq + r) * rows] = first_operand ? hi : lo;
    dst[i + (base + 2 * cq + r) * rows] = first_operand ? lo : hi;
  }
}

/// FP16 modes: lower triangle of a (n×n, lda): a_ij ← 2^(e_i + e_j)·a_ij (scale), or
/// l_ij ← 2^(−e_i)·l_ij (unscale: L = S⁻¹·Ls), e from equilibrate_exponents_kernel. Exact unless a
/// result leaves fp32's normal range.
__global__ void scale_lower_kernel(float* a, std::int64_t lda, std::int64_t n, const int* e, bool unscale) {
  const std::int64_t i = blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x;
  if (i >= n) return;
  const int ei = e[i];
  for (std::int64_t j = blockIdx.y; j <= i; j += gridDim.y)
    a[i + j * lda] = ldexpf(a[i + j * lda], unscale ? -ei : ei + e[j]);
}

/// c (lower triangle of the m×m block, ld ldc) += d (m×m, ld m), lower triangle only.
__global__ void add_lower_kernel(float* c, std::int64_t ldc, const float* d, std::int64_t m) {
  const std::int64_t i = blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x;
  if (i >= m) return;
  for (std::int64_t j = blockIdx.y; j <= i; j += gridDim.y) c[i + j * ldc] += d[i + j * m];
}

// ---- BLAS / LAPACK dispatch --------------------------------------------------------------

inline int as_int(std::int64_t v) { return static_cast<int>(v); }

template <class T>
struct Lib;

template <>
struct Lib<double> {
  static constexpr const char* name = "fp64";
  static cublasStatus_t trsm(cublasHandle_t h, int m, int k, const double* l, int ldl, double* b, int ldb) {
    const double one = 1.0;
    return cublasDtrsm(h, CUBLAS_SIDE_RIGHT, CUBLAS_FILL_MODE_LOWER, CUBLAS_OP_T, CUBLAS_DIAG_NON_UNIT, m, k, &one, l,
                       ldl, b, ldb);
  }
  static cublasStatus_t syrk(cublasHandle_t h, int m, int k, const double* a, int lda, double* c, int ldc) {
    const double minus_one = -1.0, one = 1.0;
    return cublasDsyrk(h, CUBLAS_FILL_MODE_LOWER, CUBLAS_OP_N, m, k, &minus_one, a, lda, &one, c, ldc);
  }
  static cublasStatus_t gemm_nt(cublasHandle_t h, int m, int n, int k, const double* a, int lda, const double* b,
                                int ldb, double* c, int ldc, bool overwrite = false) {
    const double minus_one = -1.0, one = overwrite ? 0.0 : 1.0;
    return cublasDgemm(h, CUBLAS_OP_N, CUBLAS_OP_T, m, n, k, &minus_one, a, lda, b, ldb, &one, c, ldc);
  }
  static cusolverStatus_t potrf_lwork(cusolverDnHandle_t h, int n, double* a, int lda, int* lw) {
    return cusolverDnDpotrf_bufferSize(h, CUBLAS_FILL_MODE_LOWER, n, a, lda, lw);
  }
  static cusolverStatus_t potrf(cusolverDnHandle_t h, int n, double* a, int lda, double* w, int lw, int* info) {
    return cusolverDnDpotrf(h, CUBLAS_FILL_MODE_LOWER, n, a, lda, w, lw, info);
  }
};

template <>
struct Lib<float> {
  static constexpr const char* name = "fp32";
  static cublasStatus_t trsm(cublasHandle_t h, int m, int k, const float* l, int ldl, float* b, int ldb) {
    const float one = 1.0f;
    return cublasStrsm(h, CUBLAS_SIDE_RIGHT, CUBLAS_FILL_MODE_LOWER, CUBLAS_OP_T, CUBLAS_DIAG_NON_UNIT, m, k, &one, l,
                       ldl, b, ldb);
  }
  static cublasStatus_t syrk(cublasHandle_t h, int m, int k, const float* a, int lda, float* c, int ldc) {
    const float minus_one = -1.0f, one = 1.0f;
    return cublasSsyrk(h, CUBLAS_FILL_MODE_LOWER, CUBLAS_OP_N, m, k, &minus_one, a, lda, &one, c, ldc);
  }
  static cublasStatus_t gemm_nt(cublasHandle_t h, int m, int n, int k, const float* a, int lda, const float* b, int ldb,
                                float* c, int ldc, bool overwrite = false) {
    const float minus_one = -1.0f, one = overwrite ? 0.0f : 1.0f;
    return cublasSgemm(h, CUBLAS_OP_N, CUBLAS_OP_T, m, n, k, &minus_one, a, lda, b, ldb, &one, c, ldc);
  }
  static cusolverStatus_t potrf_lwork(cusolverDnHandle_t h, int n, float* a, int lda, int* lw) {
    return cusolverDnSpotrf_bufferSize(h, CUBLAS_FILL_MODE_LOWER, n, a, lda, lw);
  }
  static cusolverStatus_t potrf(cusolverDnHandle_t h, int n, float* a, int lda, float* w, int lw, int* info) {
    return cusolverDnSpotrf(h, CUBLAS_FILL_MODE_LOWER, n, a, lda, w, lw, info);
  }
};

// Tuned defaults (docs/performance.md, "GPU Cholesky").
constexpr std::int64_t kDefaultBase = 512;
constexpr std::int64_t kDefaultTrsmBase = 1024;
constexpr std::int64_t kDefaultSyrkBase = 1024;
constexpr std::int64_t kTf32SyrkBase = 2048;    // 1×TF32 (H200, n = 16k and 32k: 2048 best of 512–4096)
constexpr std::int64_t kTf32x3SyrkBase = 4096;  // 3×TF32 (4096 best of 512–4096)
constexpr std::int64_t kTilesSyrkBase = 2048;   // fp64 tensor-core panels (16k: −3–4%; 24k–32k: −2–3%)
constexpr std::int64_t kDefaultBlock = 256;
constexpr std::int64_t kOwnLeafMax = 128;              // leaves ≤ this run in potrf_leaf_kernel
constexpr std::int64_t kDefaultLookaheadBlock = 2048;  // library panels: best nb from 2048 to 32768
/// fp64 and exact fp32 lookahead, by default (CholeskyOptions::panel_ctas = 0): CTAs of a panel
/// kernel that runs beside the bulk update while at least kPanelCapFrom columns remain (k > 0,
/// n − k ≥ kPanelCapFrom). Every CTA factors the 128×128
/// diagonal block itself (about 28 µs of latency-bound work) before its strips, so one CTA per
/// strip holds up to every SM for each sub-panel while the bulk's DGEMM waits. With 16 CTAs each
/// solves its strips in turn: a longer chain, which the long bulk updates of those steps hide.
/// Near the end the chain is critical, and all strips get a CTA again. Measured (H200, 16k–32k):
/// docs/performance.md, "Fewer panel CTAs beside the bulk, and the bulk update over two streams".
constexpr int kPanelCtasBesideBulk = 16;
constexpr std::int64_t kPanelCapFrom = 12288;
/// fp64 and exact fp32: the lookahead two panels deep (Factor::lookahead_depth2), the next block
/// column applied in kNextGroups column groups of the panel as they finish: the panel chain then
/// waits only for the last group's update. Two groups were faster than four or eight, and two
/// panels deep faster than one up to 24k (H200: docs/performance.md, "Fewer panel CTAs beside the
/// bulk, and the bulk update over two streams").
constexpr int kNextGroups = 2;
constexpr std::int64_t kLookaheadTiledTail = 5120;  // lookahead: CholeskyOptions::tiled_tail
/// 1×FP16: the tiled tail with FP16 tile updates takes the last 8192 columns, from the first column
/// when n ≤ 8192: faster than panels with a 5120 tail from 8k to 32k (H200, `--lookahead-sweep`:
/// docs/performance.md, "FP16 tile updates and flag polling in the tiled kernel")
constexpr std::int64_t kLookaheadTiledTailFp16 = 8192;

/// Default nb of the lookahead algorithm with tensor-core panels, the fastest of the H200 sweeps
/// per size, except 3×FP16 from 16384: 1536, slightly slower than 2048 but with a smaller backward
/// error (its accumulation over K = nb truncates). docs/performance.md, "Fp32 tiles and in-place
/// sub-panel updates" and "Speculative refinement steps and wider 1×FP16 panels".
inline std::int64_t default_tiles_block(std::int64_t n, Fp32Mode fp32_mode) {
  if (fp32_mode == Fp32Mode::fp16) return n < 6144 ? 1024 : n < 13312 ? 2048 : n < 20480 ? 3072 : 4096;
  if (fp32_mode != Fp32Mode::exact) return n < 12288 ? 1024 : (fp32_mode == Fp32Mode::fp16x3 ? 1536 : 2048);
  return n < 6144 ? 512 : (n < 12288 ? 1024 : (n < 16384 ? 1536 : 2048));
}

/// Points a cuSOLVER handle at `to` for a scope, back to `back` after it.
class SolverStreamGuard {
 public:
  SolverStreamGuard(cusolverDnHandle_t h, cudaStream_t to, cudaStream_t back) : h_(h), back_(back) {
    GF_CUSOLVER_TRY(cusolverDnSetStream(h_, to));
  }
  ~SolverStreamGuard() { (void)cusolverDnSetStream(h_, back_); }
  SolverStreamGuard(const SolverStreamGuard&) = delete;
  SolverStreamGuard& operator=(const SolverStreamGuard&) = delete;

 private:
  cusolverDnHandle_t h_;
  cudaStream_t back_;
};

/// When the lookahead throws part-way (a CUDA or cuBLAS error), makes the caller's stream wait for
/// the work already queued on the lookahead's streams (no-throw), so that nothing after the call
/// on that stream, such as the next use of the workspace, runs beside it.
class JoinOnThrow {
 public:
  JoinOnThrow(cudaStream_t to, std::initializer_list<std::pair<cudaEvent_t, cudaStream_t>> from)
      : to_(to), from_(from), uncaught_(std::uncaught_exceptions()) {}
  ~JoinOnThrow() {
    if (std::uncaught_exceptions() <= uncaught_) return;
    for (const auto& [e, st] : from_)
      if (cudaEventRecord(e, st) == cudaSuccess) (void)cudaStreamWaitEvent(to_, e, 0);
  }
  JoinOnThrow(const JoinOnThrow&) = delete;
  JoinOnThrow& operator=(const JoinOnThrow&) = delete;

 private:
  cudaStream_t to_;
  std::vector<std::pair<cudaEvent_t, cudaStream_t>> from_;
  int uncaught_;
};

/// Sets the math mode of cuBLAS handles for a scope (Fp32Mode::tf32: cuBLAS's fp32 GEMMs and TRSMs
/// may use the TF32 tensor cores; SSYRK has no such path), back to the default after it.
class BlasMathGuard {
 public:
  BlasMathGuard(std::initializer_list<cublasHandle_t> hs, cublasMath_t mode) {
    h_.reserve(hs.size());  // push_back below cannot throw
    try {
      for (cublasHandle_t h : hs) {
        if (!h) continue;
        GF_CUBLAS_TRY(cublasSetMathMode(h, mode));
        h_.push_back(h);
      }
    } catch (...) {  // no destructor runs: put back the handles already switched
      reset();
      throw;
    }
  }
  ~BlasMathGuard() { reset(); }
  BlasMathGuard(const BlasMathGuard&) = delete;
  BlasMathGuard& operator=(const BlasMathGuard&) = delete;

 private:
  void reset() noexcept {
    for (cublasHandle_t h : h_) (void)cublasSetMathMode(h, CUBLAS_DEFAULT_MATH);
    h_.clear();
  }
  std::vector<cublasHandle_t> h_;  // as many as given (a fixed array of 3 overflowed with the lookahead's 4)
};

inline std::int64_t round_up8(std::int64_t v) { return (v + 7) / 8 * 8; }

/// Split point of a recursion: about n/2, rounded up to a multiple of 128 (32 for small n).
inline std::int64_t split_point(std::int64_t n) {
  std::int64_t h = n / 2;
  const std::int64_t q = n >= 512 ? 128 : (n >= 64 ? 32 : 1);
  h = (h + q - 1) / q * q;
  return std::clamp<std::int64_t>(h, 1, n - 1);
}

template <class T>
void launch_leaf(T* a, std::int64_t lda, std::int64_t n, std::int64_t offset, DeviceStatus* st, cudaStream_t s) {
  if (n <= 32) {
    potrf_leaf_kernel<T, 32, 8><<<1, dim3(32, 8), shared_bytes<T, 32>(), s>>>(a, lda, int(n), offset, st);
  } else if (n <= 64) {
    potrf_leaf_kernel<T, 64, 16><<<1, dim3(32, 16), shared_bytes<T, 64>(), s>>>(a, lda, int(n), offset, st);
  } else {
    potrf_leaf_kernel<T, 128, 32><<<1, dim3(32, 32), shared_bytes<T, 128>(), s>>>(a, lda, int(n), offset, st);
  }
  GF_CUDA_CHECK_LAUNCH();
}

template <class T>
void enable_leaf_smem() {
  GF_CUDA_TRY(gemflow::cuda::allow_dynamic_smem(potrf_leaf_kernel<T, 128, 32>, shared_bytes<T, 128>()));
  GF_CUDA_TRY(gemflow::cuda::allow_dynamic_smem(potrf_leaf_kernel<T, 64, 16>, shared_bytes<T, 64>()));
}

/// potrf_panel_kernel over the kb×kb block at d (ld lda) and the m rows below it: one CTA per
/// 128-row strip, at most one per SM of `device` (a CTA beyond them would wait for a second wave).
/// fp32_tiles (fp32 data only): the diagonal block's 8×8 tiles factored in fp32 arithmetic.
/// next_kb: the next sub-panel's width (0: none), whose columns the kernel prefetches into L2.
template <class T>
void launch_panel(T* d, std::int64_t lda, std::int64_t kb, std::int64_t m, std::int64_t offset, DeviceStatus* st,
                  cudaStream_t s, int device, HalfCopy copy = {}, bool fp32_tiles = false, std::int64_t next_kb = 0,
                  int max_ctas = 0) {
  int sms = 0;
  GF_CUDA_TRY(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
  if (max_ctas > 0) sms = std::min(sms, max_ctas);
  const std::int64_t strips = (m + kPanelStrip - 1) / kPanelStrip;
  const unsigned grid = unsigned(std::clamp<std::int64_t>(strips, 1, std::max(sms, 1)));
  const auto launch = [&](auto kernel) {
    GF_CUDA_TRY(gemflow::cuda::allow_dynamic_smem(kernel, panel_smem_bytes()));
    kernel<<<grid, kPanelThreads, panel_smem_bytes(), s>>>(d, lda, int(kb), m, offset, st, copy, int(next_kb));
    GF_CUDA_CHECK_LAUNCH();
  };
  if constexpr (std::is_same_v<T, float>) {
    if (fp32_tiles) return launch(potrf_panel_kernel<T, true>);
  }
  launch(potrf_panel_kernel<T, false>);
}

/// One factorisation: the algorithms over a fixed matrix, options and workspace.
template <class T>
struct Factor {
  GpuCholesky::Impl& ctx;
  T* a;
  std::int64_t lda;
  CholeskyOptions opt;
  T* lwork_ptr = nullptr;  // cuSOLVER workspace
  int lwork = 0;
  float* split = nullptr;    // 3×TF32 operands
  float* square = nullptr;   // TF32 modes: syrk_base² scratch for the SYRK leaves
  T* panel_upper = nullptr;  // tensor-core panels: the diagonal blocks' upper triangles (copy_upper_kernel)
  // FP16 modes: panels in fp16, two buffers alternating (the bulk update of panel k reads one
  // while panel k + 1 is written to the other), and the current panel: its first row and column
  // `off`, leading dimension, width; 3×FP16: hi in columns [0, cols), P in [cols, 3·cols), Q in
  // [3·cols, 5·cols) (HalfCopy)
  __half* half_bufs[2] = {};
  struct HalfPanel {
    __half* p = nullptr;
    std::int64_t off = 0, ld = 0, cols = 0;
  } hp;
  cudaStream_t stream = nullptr;  // where this object enqueues (cuSOLVER: ctx.solver's stream)
  cublasHandle_t blas = nullptr;

  T* at(std::int64_t i, std::int64_t j) const { return a + i + j * lda; }

  /// The lookahead's cap on the CTAs of panel k's kernels (CholeskyOptions::panel_ctas; 0: none).
  int panel_cap(std::int64_t k, std::int64_t n) const {
    if (k == 0 || opt.panel_ctas < 0) return 0;
    if (opt.panel_ctas > 0) return int(std::min<std::int64_t>(opt.panel_ctas, INT_MAX));
    bool exact = true;
    if constexpr (std::is_same_v<T, float>) exact = opt.fp32_mode == Fp32Mode::exact;
    const CholeskyProbe& p = ctx.knobs();
    const std::int64_t from = p.panel_cap_from < 0 ? kPanelCapFrom : p.panel_cap_from;
    return exact && n - k >= from ? (p.panel_cap < 0 ? kPanelCtasBesideBulk : p.panel_cap) : 0;
  }

  /// This factorisation enqueued on stream s through handle h (the lookahead's streams).
  Factor on(cudaStream_t s, cublasHandle_t h) const {
    Factor f = *this;
    f.stream = s;
    f.blas = h;
    return f;
  }

  void leaf(std::int64_t off, std::int64_t n, bool force_cusolver = false) {
    if (n <= kOwnLeafMax && !force_cusolver) {
      launch_leaf<T>(at(off, off), lda, n, off, ctx.status.data(), stream);
      return;
    }
    GF_CUSOLVER_TRY(Lib<T>::potrf(ctx.solver, as_int(n), at(off, off), as_int(lda), lwork_ptr, lwork,
                                  &ctx.status.data()->local_info));
    fold_info_kernel<T><<<1, 256, 0, stream>>>(at(off, off), lda, as_int(n), off, ctx.status.data());
    GF_CUDA_CHECK_LAUNCH();
  }

  // C (m×n, ldc) −= A (m×k, lda_) · B (n×k, ldb)ᵀ; overwrite: C = −A·Bᵀ
  void gemm_nt(std::int64_t m, std::int64_t n, std::int64_t k, const T* A, std::int64_t lda_, const T* B,
               std::int64_t ldb, T* C, std::int64_t ldc, bool overwrite = false) {
    if constexpr (std::is_same_v<T, float>) {
      if (is_fp16_mode(opt.fp32_mode)) {
        gemm_nt_fp16(m, n, k, A, B, C, ldc, overwrite);
        return;
      }
      if (opt.fp32_mode != Fp32Mode::exact) {
        const float minus_one = -1.0f, one = 1.0f, zero = 0.0f;
        if (opt.fp32_mode == Fp32Mode::tf32) {
          GF_CUBLAS_TRY(cublasGemmEx(blas, CUBLAS_OP_N, CUBLAS_OP_T, as_int(m), as_int(n), as_int(k), &minus_one, A,
                                     CUDA_R_32F, as_int(lda_), B, CUDA_R_32F, as_int(ldb), overwrite ? &zero : &one, C,
                                     CUDA_R_32F, as_int(ldc), CUBLAS_COMPUTE_32F_FAST_TF32, CUBLAS_GEMM_DEFAULT));
          return;
        }
        float* xa = split;
        float* xb = split + m * 3 * k;
        const dim3 blk(128, 4);
        const auto gy = [&](std::int64_t kk) { return unsigned(std::min<std::int64_t>((kk + 3) / 4, 4096)); };
        split_tf32_kernel<<<dim3(unsigned((m + 127) / 128), gy(k)), blk, 0, stream>>>(A, lda_, m, k, xa, true);
        GF_CUDA_CHECK_LAUNCH();
        split_tf32_kernel<<<dim3(unsigned((n + 127) / 128), gy(k)), blk, 0, stream>>>(B, ldb, n, k, xb, false);
        GF_CUDA_CHECK_LAUNCH();
        for (std::int64_t q0 = 0; q0 < k; q0 += kTf32x3Chunk) {
          const std::int64_t cq = std::min(kTf32x3Chunk, k - q0);
          GF_CUBLAS_TRY(cublasGemmEx(blas, CUBLAS_OP_N, CUBLAS_OP_T, as_int(m), as_int(n), as_int(3 * cq), &minus_one,
                                     xa + 3 * q0 * m, CUDA_R_32F, as_int(m), xb + 3 * q0 * n, CUDA_R_32F, as_int(n),
                                     (overwrite && q0 == 0) ? &zero : &one, C, CUDA_R_32F, as_int(ldc),
                                     CUBLAS_COMPUTE_32F_FAST_TF32, CUBLAS_GEMM_DEFAULT));
        }
        return;
      }
    }
    GF_CUBLAS_TRY(Lib<T>::gemm_nt(blas, as_int(m), as_int(n), as_int(k), A, as_int(lda_), B, as_int(ldb), C,
                                  as_int(ldc), overwrite));
  }

  // FP16 modes: the row of the current panel hp that the operand p starts at (p in its first column).
  std::int64_t half_row(const T* p) const {
    const std::int64_t d = p - at(hp.off, hp.off), i = d % lda;
    if (d / lda != 0) throw std::logic_error("GpuCholesky: an FP16 product not from the panel's first column");
    return i;
  }

  // FP16 modes: C (m×n, ldc) −= A·Bᵀ, A and B the first k columns of the current panel (k a whole
  // number of sub-panels), from its fp16 copies; fp32 accumulation. 3×FP16 first adds the
  // 2⁻¹¹-scaled corrections, both in one K = 2k product P·Qᵀ with its own accumulator, then the
  // hi·hiᵀ term.
  void gemm_nt_fp16(std::int64_t m, std::int64_t n, std::int64_t k, const T* A, const T* B, T* C, std::int64_t ldc,
                    bool overwrite) {
    const std::int64_t ia = half_row(A), ib = half_row(B);
    const __half* ha = hp.p + ia;
    const __half* hb = hp.p + ib;
    const int ld = as_int(hp.ld);
    const float minus_one = -1.0f, one = 1.0f, zero = 0.0f, corr = -1.0f / 2048.0f;
    const auto gemm = [&](std::int64_t kk, const float* alpha, const __half* x, const __half* y, const float* beta) {
      GF_CUBLAS_TRY(cublasGemmEx(blas, CUBLAS_OP_N, CUBLAS_OP_T, as_int(m), as_int(n), as_int(kk), alpha, x, CUDA_R_16F,
                                 ld, y, CUDA_R_16F, ld, beta, C, CUDA_R_32F, as_int(ldc), CUBLAS_COMPUTE_32F,
                                 CUBLAS_GEMM_DEFAULT));
    };
    const float* beta = overwrite ? &zero : &one;
    if (opt.fp32_mode == Fp32Mode::fp16x3) {
      const __half* p = hp.p + hp.cols * hp.ld;
      const __half* q = p + 2 * hp.cols * hp.ld;
      gemm(2 * k, &corr, p + ia, q + ib, beta);  // Σ_s hi_s·lo'_sᵀ + lo'_s·hi_sᵀ
      beta = &one;
    }
    gemm(k, &minus_one, ha, hb, beta);
  }

  // fp32 TF32 modes: C (m×m lower, ld lda) −= A (m×k, ld lda) Aᵀ as the full square on the tensor
  // cores into the scratch `square`, then its lower triangle into C, so the strict upper triangle
  // of the matrix stays untouched. cuBLAS SSYRK stays on the fp32 pipes even in TF32 math mode and
  // is slow at these shapes (H200: m = 512, k = 2048 in 200 µs, a TF32 GEMM of the square in
  // 27 µs; about 1/3 of the 1×TF32 factor's time at 32k).
  void syrk_square(std::int64_t m, std::int64_t k, const float* A, float* C) {
    gemm_nt(m, m, k, A, lda, A, lda, square, m, true);
    const dim3 grid(unsigned((m + 255) / 256), unsigned(std::min<std::int64_t>(m, 512)));
    add_lower_kernel<<<grid, 256, 0, stream>>>(C, lda, square, m);
    GF_CUDA_CHECK_LAUNCH();
  }

  // B (m×k, ldb) ← B · L⁻ᵀ, L the k×k lower triangle at l (ld lda)
  void trsm(std::int64_t m, std::int64_t k, const T* l, T* b, std::int64_t ldb) {
    if (k <= opt.trsm_base) {
      GF_CUBLAS_TRY(Lib<T>::trsm(blas, as_int(m), as_int(k), l, as_int(lda), b, as_int(ldb)));
      return;
    }
    const std::int64_t k1 = split_point(k), k2 = k - k1;
    trsm(m, k1, l, b, ldb);
    // B2 −= X1 · L21ᵀ
    gemm_nt(m, k2, k1, b, ldb, l + k1, lda, b + k1 * ldb, ldb);
    trsm(m, k2, l + k1 + k1 * lda, b + k1 * ldb, ldb);
  }

  // C (m×m lower, ld lda) −= A (m×k, ld lda) Aᵀ
  void syrk(std::int64_t m, std::int64_t k, const T* A, T* C) {
    if (m <= opt.syrk_base) {
      if constexpr (std::is_same_v<T, float>) {
        if (opt.fp32_mode != Fp32Mode::exact) {
          syrk_square(m, k, A, C);
          return;
        }
      }
      GF_CUBLAS_TRY(Lib<T>::syrk(blas, as_int(m), as_int(k), A, as_int(lda), C, as_int(lda)));
      return;
    }
    const std::int64_t m1 = split_point(m), m2 = m - m1;
    syrk(m1, k, A, C);
    gemm_nt(m2, m1, k, A + m1, lda, A, lda, C + m1, lda);
    syrk(m2, k, A + m1, C + m1 + m1 * lda);
  }

  /// Columns off … off + b − 1 (rows off … off + b + rest − 1), every earlier column already
  /// applied: left-looking over sub-panels of kPanelNb columns (PanelAlgo::tiles).
  /// max_ctas > 0: at most that many CTAs per panel kernel (kPanelCtasBesideBulk).
  /// groups (lookahead depth 2): after every `subs_per_group` sub-panels (and the last), an event
  /// of groups->events in turn is recorded on the stream: those columns of L are final.
  struct PanelGroups {
    cudaEvent_t* events = nullptr;
    int subs_per_group = 0;
  };
  void panel_tiles(std::int64_t off, std::int64_t b, std::int64_t rest, int max_ctas = 0,
                   const PanelGroups* groups = nullptr) {
    bool fp16 = false;
    if constexpr (std::is_same_v<T, float>) fp16 = is_fp16_mode(opt.fp32_mode);
    if (fp16) hp = {half_bufs[(off / opt.block) % 2], off, round_up8(b + rest), b};
    // the diagonal blocks' strict upper triangles, which the update GEMMs below write over: saved
    // here, put back after the last sub-panel (nothing reads them in between)
    const auto subs = (b + kPanelNb - 1) / kPanelNb;
    const auto copy_upper = [&](bool save) {
      copy_upper_kernel<T><<<unsigned(subs - 1), 256, 0, stream>>>(at(off, off), lda, b, panel_upper, save);
      GF_CUDA_CHECK_LAUNCH();
    };
    if (subs > 1) copy_upper(true);
    for (std::int64_t j = 0; j < b; j += kPanelNb) {
      const std::int64_t jb = std::min<std::int64_t>(kPanelNb, b - j), below = rest + b - j - jb;
      T* d = at(off + j, off + j);
      if (j > 0) {
        // the sub-panel's update by the panel's finished columns, A −= A₀·A₀ᵀ over all its jb + below
        // rows, in one GEMM in place (the diagonal block's strict upper triangle too). Plain
        // cuBLAS: fp64 DGEMM; fp32 exact SGEMM in exact and 3×TF32 modes (thin, on the critical
        // path), the TF32 tensor cores in 1×TF32 mode through the handle's math mode. FP16 modes:
        // from the panel's fp16 copy. (Into a scratch that the kernel added as it read, H200:
        // 5.6 µs more per 1×FP16 sub-panel at 16k.)
        if (fp16) gemm_nt(jb + below, jb, j, at(off + j, off), lda, at(off + j, off), lda, d, lda);
        else
          GF_CUBLAS_TRY(Lib<T>::gemm_nt(blas, as_int(jb + below), as_int(jb), as_int(j), at(off + j, off), as_int(lda),
                                        at(off + j, off), as_int(lda), d, as_int(lda), false));
      }
      ctx.step_done(stream, "sub-update", off + j);
      HalfCopy copy;  // FP16 modes: the kernel writes the solved rows' fp16 copy (none read the last one)
      if (fp16 && (rest > 0 || j + jb < b)) {
        copy.h = hp.p + j + j * hp.ld;
        if (opt.fp32_mode == Fp32Mode::fp16x3) copy.pq = hp.p + (hp.cols + 2 * j) * hp.ld + j;
        copy.q_off = 2 * hp.cols * hp.ld;
        copy.ldh = hp.ld;
        copy.jb = static_cast<int>(jb);
      }
      // one-product modes (11-bit products): the block's 8×8 tiles in fp32 arithmetic, a shorter chain
      const bool fp32_tiles = opt.fp32_mode == Fp32Mode::fp16 || opt.fp32_mode == Fp32Mode::tf32;
      launch_panel<T>(d, lda, jb, below, off + j, ctx.status.data(), stream, ctx.device, copy, fp32_tiles,
                      std::min<std::int64_t>(kPanelNb, b - j - jb), max_ctas);
      ctx.step_done(stream, "sub-panel", off + j);
      const std::int64_t sub = j / kPanelNb;
      if (groups && ((sub + 1) % groups->subs_per_group == 0 || j + jb >= b))
        GF_CUDA_TRY(cudaEventRecord(groups->events[sub / groups->subs_per_group], stream));
    }
    if (subs > 1) copy_upper(false);
  }

  void recursive(std::int64_t off, std::int64_t n) {
    if (n <= opt.base) {
      leaf(off, n);
      return;
    }
    const std::int64_t n1 = split_point(n), n2 = n - n1;
    recursive(off, n1);
    trsm(n2, n1, at(off, off), at(off + n1, off), lda);
    syrk(n2, n1, at(off + n1, off), at(off + n1, off + n1));
    recursive(off + n1, n2);
  }

  void blocked(std::int64_t n) {
    const std::int64_t nb = opt.block;
    for (std::int64_t j = 0; j < n; j += nb) {
      const std::int64_t b = std::min(nb, n - j), rest = n - j - b;
      leaf(j, b);
      if (rest == 0) break;
      GF_CUBLAS_TRY(Lib<T>::trsm(blas, as_int(rest), as_int(b), at(j, j), as_int(lda), at(j + b, j), as_int(lda)));
      GF_CUBLAS_TRY(
          Lib<T>::syrk(blas, as_int(rest), as_int(b), at(j + b, j), as_int(lda), at(j + b, j + b), as_int(lda)));
    }
  }

  /// Right-looking blocked factorisation with lookahead one panel deep, over two streams of
  /// ctx.lookahead(): `crit` (high priority) factors panel k (PanelAlgo::tiles: panel_tiles;
  /// library: diagonal block by the recursive algorithm with base opt.base, by default one
  /// cuSOLVER potrf, then the recursive TRSM), then updates the next block column; `bulk` (low priority) updates
  /// the rest of the trailing matrix meanwhile, so the latency-bound diagonal work hides behind
  /// the large GEMMs. `bulk_split`, `bulk_square`: the 3×TF32 operand buffer and the SYRK-leaf
  /// scratch of the bulk stream. fp64 and exact fp32 with tensor-core panels take lookahead_depth2.
  void lookahead(std::int64_t n, float* bulk_split, float* bulk_square, int* tail_state = nullptr,
                 double* tail_forms = nullptr, __half* tail_half = nullptr) {
    const gemflow::cuda::NvtxRange range("cholesky lookahead", n);
    const CholeskyProbe& knobs = ctx.knobs();
    auto& la = ctx.lookahead_streams();
    Factor crit = on(la.crit, la.blas_crit);
    Factor bulk = knobs.serial ? on(la.crit, la.blas_crit) : on(la.bulk, la.blas_bulk);
    bulk.split = bulk_split;
    bulk.square = bulk_square;
    Factor bulk2 = on(la.bulk2, la.blas_bulk2);  // fp64 only: no scratch of its own
    SolverStreamGuard guard(ctx.solver, la.crit, stream);
    const JoinOnThrow join{stream, {{la.crit_done, la.crit}, {la.bulk_done, la.bulk}, {la.join, la.bulk2}}};
    GF_CUDA_TRY(cudaEventRecord(la.start, stream));
    GF_CUDA_TRY(cudaStreamWaitEvent(la.crit, la.start, 0));
    GF_CUDA_TRY(cudaStreamWaitEvent(la.bulk, la.start, 0));
    const std::int64_t nb = opt.block;
    bool bulk_pending = false;
    std::int64_t tail = -1;  // where the tiled kernel takes over (opt.tiled_tail)
    for (std::int64_t k = 0; k < n; k += nb) {
      // 1×FP16 (tail_half): the tiled kernel with FP16 tile updates beats a first panel too
      if ((k > 0 || tail_half) && opt.tiled_tail > 0 && n - k <= opt.tiled_tail) {
        tail = k;
        break;
      }
      const std::int64_t b = std::min(nb, n - k), rest = n - k - b;
      {
        const gemflow::cuda::NvtxRange step("panel", k);
        if (opt.panel == PanelAlgo::tiles) {
          crit.panel_tiles(k, b, rest, panel_cap(k, n));
          bulk.hp = crit.hp;  // FP16 modes: the panel's fp16 copy
          if (rest == 0) break;
        } else {
          crit.recursive(k, b);
          if (rest == 0) break;
          crit.trsm(rest, b, at(k, k), at(k + b, k), lda);
        }
      }
      ctx.step_done(la.crit, "panel", k);
      GF_CUDA_TRY(cudaEventRecord(la.panel, la.crit));
      // next block column: its columns were last written by the bulk update of step k − 1
      if (bulk_pending) GF_CUDA_TRY(cudaStreamWaitEvent(la.crit, la.bulk_done, 0));
      const std::int64_t nxt = std::min(nb, rest), far = rest - nxt;
      {
        const gemflow::cuda::NvtxRange step("next column", k);
        crit.syrk(nxt, b, at(k + b, k), at(k + b, k + b));
        if (far > 0) crit.gemm_nt(far, nxt, b, at(k + b + nxt, k), lda, at(k + b, k), lda, at(k + b + nxt, k + b), lda);
      }
      if (far > 0) {
        GF_CUDA_TRY(cudaStreamWaitEvent(la.bulk, la.panel, 0));
        ctx.step_done(la.crit, "next column", k);
        ctx.step_done(la.bulk, "bulk start", k);
        {
          const gemflow::cuda::NvtxRange step("bulk", k);
          if (knobs.bulk) bulk_update(bulk, bulk2, far, b, at(k + b + nxt, k), at(k + b + nxt, k + b + nxt));
        }
        ctx.step_done(la.bulk, "bulk", k);
        GF_CUDA_TRY(cudaEventRecord(la.bulk_done, la.bulk));
        bulk_pending = true;
      }
    }
    GF_CUDA_TRY(cudaEventRecord(la.crit_done, la.crit));
    GF_CUDA_TRY(cudaEventRecord(la.bulk_done, la.bulk));
    GF_CUDA_TRY(cudaStreamWaitEvent(stream, la.crit_done, 0));
    GF_CUDA_TRY(cudaStreamWaitEvent(stream, la.bulk_done, 0));
    if (tail >= 0) {  // every update from the panels before `tail` has reached the trailing matrix
      Factor rest = *this;
      rest.a = at(tail, tail);
      {
        const gemflow::cuda::NvtxRange step("tiled tail", tail);
        rest.tiled(n - tail, tail_state, tail_forms, tail, tail_half);
      }
      ctx.step_done(stream, "tiled tail", tail);
    }
  }

  /// The lookahead two panels deep (fp64 and exact fp32 with tensor-core panels; the panel cap
  /// applies to both here). At step s (panel s on `crit`): `next` applies panel s to
  /// block column s + 1 group by group as the panel's sub-panels finish (PanelGroups), so that
  /// only the last group's update sits between panel s and panel s + 1; `ahead` applies panel s
  /// to block column s + 2 once the bulk update of step s − 1 is done; the bulk streams apply it
  /// to the block columns from s + 3 on.
  void lookahead_depth2(std::int64_t n, int* tail_state, double* tail_forms) {
    const gemflow::cuda::NvtxRange range("cholesky lookahead depth 2", n);
    const CholeskyProbe& knobs = ctx.knobs();
    const int next_groups = knobs.next_groups > 0 ? knobs.next_groups : kNextGroups;
    auto& la = ctx.lookahead_streams();
    Factor crit = on(la.crit, la.blas_crit), nx = on(la.next, la.blas_next), d2 = on(la.ahead, la.blas_ahead);
    Factor bulk = on(la.bulk, la.blas_bulk), bulk2 = on(la.bulk2, la.blas_bulk2);
    const JoinOnThrow join{stream,
                           {{la.crit_done, la.crit},
                            {la.next_done, la.next},
                            {la.ahead_done, la.ahead},
                            {la.bulk_done, la.bulk},
                            {la.join, la.bulk2}}};
    GF_CUDA_TRY(cudaEventRecord(la.start, stream));
    for (cudaStream_t st : {la.crit, la.next, la.ahead, la.bulk, la.bulk2})
      GF_CUDA_TRY(cudaStreamWaitEvent(st, la.start, 0));
    const std::int64_t nb = opt.block;
    const int subs_per_group =
        int(std::max<std::int64_t>(1, ((nb + kPanelNb - 1) / kPanelNb + next_groups - 1) / next_groups));
    if ((nb + kPanelNb - 1) / kPanelNb > std::int64_t{subs_per_group} * GpuCholesky::Impl::Lookahead::kGroups)
      throw std::logic_error("GpuCholesky: more column groups than lookahead events");
    const PanelGroups groups{la.group, subs_per_group};
    const std::int64_t group_cols = std::int64_t{subs_per_group} * kPanelNb;
    bool bulk_pending = false, ahead_pending = false, next_pending = false;
    std::int64_t tail = -1;
    for (std::int64_t k = 0; k < n; k += nb) {
      if (k > 0 && opt.tiled_tail > 0 && n - k <= opt.tiled_tail) {
        tail = k;
        break;
      }
      const std::int64_t b = std::min(nb, n - k), rest = n - k - b;
      if (next_pending) GF_CUDA_TRY(cudaStreamWaitEvent(la.crit, la.next_done, 0));  // block column k complete
      {
        const gemflow::cuda::NvtxRange step("panel", k);
        crit.panel_tiles(k, b, rest, panel_cap(k, n), &groups);
      }
      ctx.step_done(la.crit, "panel", k);
      GF_CUDA_TRY(cudaEventRecord(la.panel, la.crit));
      if (rest == 0) break;
      const std::int64_t nxt = std::min(nb, rest), nxt2 = std::min(nb, rest - nxt), far = rest - nxt - nxt2;
      // block column k + b: the updates by earlier panels arrived with `ahead`'s last step
      if (ahead_pending) GF_CUDA_TRY(cudaStreamWaitEvent(la.next, la.ahead_done, 0));
      {
        const gemflow::cuda::NvtxRange step("next column", k);
        for (std::int64_t g0 = 0, g = 0; g0 < b; g0 += group_cols, ++g) {
          const std::int64_t kg = std::min(group_cols, b - g0);
          GF_CUDA_TRY(cudaStreamWaitEvent(la.next, la.group[g], 0));
          nx.syrk(nxt, kg, at(k + b, k + g0), at(k + b, k + b));
          if (rest > nxt)
            nx.gemm_nt(rest - nxt, nxt, kg, at(k + b + nxt, k + g0), lda, at(k + b, k + g0), lda,
                       at(k + b + nxt, k + b), lda);
        }
      }
      ctx.step_done(la.next, "next column", k);
      GF_CUDA_TRY(cudaEventRecord(la.next_done, la.next));
      next_pending = true;
      if (nxt2 > 0) {  // block column k + b + nxt: last written by the bulk update of the previous step
        GF_CUDA_TRY(cudaStreamWaitEvent(la.ahead, la.panel, 0));
        if (bulk_pending) GF_CUDA_TRY(cudaStreamWaitEvent(la.ahead, la.bulk_done, 0));
        {
          const gemflow::cuda::NvtxRange step("ahead column", k);
          d2.syrk(nxt2, b, at(k + b + nxt, k), at(k + b + nxt, k + b + nxt));
          if (far > 0)
            d2.gemm_nt(far, nxt2, b, at(k + b + nxt + nxt2, k), lda, at(k + b + nxt, k), lda,
                       at(k + b + nxt + nxt2, k + b + nxt), lda);
        }
        ctx.step_done(la.ahead, "ahead column", k);
        GF_CUDA_TRY(cudaEventRecord(la.ahead_done, la.ahead));
        ahead_pending = true;
      }
      if (far > 0) {
        GF_CUDA_TRY(cudaStreamWaitEvent(la.bulk, la.panel, 0));
        ctx.step_done(la.bulk, "bulk start", k);
        const std::int64_t r0 = k + b + nxt + nxt2;
        {
          const gemflow::cuda::NvtxRange step("bulk", k);
          if (knobs.bulk) bulk_update(bulk, bulk2, far, b, at(r0, k), at(r0, r0));
        }
        ctx.step_done(la.bulk, "bulk", k);
        GF_CUDA_TRY(cudaEventRecord(la.bulk_done, la.bulk));
        bulk_pending = true;
      }
    }
    for (const auto& [done, st] : {std::pair{la.crit_done, la.crit}, std::pair{la.next_done, la.next},
                                   std::pair{la.ahead_done, la.ahead}, std::pair{la.bulk_done, la.bulk}}) {
      GF_CUDA_TRY(cudaEventRecord(done, st));
      GF_CUDA_TRY(cudaStreamWaitEvent(stream, done, 0));
    }
    if (tail >= 0) {
      Factor rest = *this;
      rest.a = at(tail, tail);
      {
        const gemflow::cuda::NvtxRange step("tiled tail", tail);
        rest.tiled(n - tail, tail_state, tail_forms, tail);
      }
      ctx.step_done(stream, "tiled tail", tail);
    }
  }

  /// C (far×far lower) −= L (far×b) Lᵀ on bulk's stream. fp64: the recursion's first split over
  /// the two low-priority streams, the lower-right SYRK on bulk2's beside the rectangle's GEMM and
  /// then the upper-left SYRK, so that the last wave of one stream's launches overlaps the other's
  /// work (balanced halves, the GEMM against both SYRKs, were slower; H200: docs/performance.md,
  /// "Fewer panel CTAs beside the bulk, and the bulk update over two streams").
  void bulk_update(Factor& bulk, Factor& bulk2, std::int64_t far, std::int64_t b, const T* l, T* c) {
    auto& la = ctx.lookahead_streams();
    const CholeskyProbe& knobs = ctx.knobs();
    if (std::is_same_v<T, double> && knobs.bulk_split && !knobs.serial && far > opt.syrk_base) {
      const std::int64_t m1 = split_point(far), m2 = far - m1;
      GF_CUDA_TRY(cudaEventRecord(la.fork, bulk.stream));
      GF_CUDA_TRY(cudaStreamWaitEvent(bulk2.stream, la.fork, 0));
      bulk2.syrk(m2, b, l + m1, c + m1 + m1 * lda);
      bulk.gemm_nt(m2, m1, b, l + m1, lda, l, lda, c + m1, lda);
      bulk.syrk(m1, b, l, c);
      GF_CUDA_TRY(cudaEventRecord(la.join, bulk2.stream));
      GF_CUDA_TRY(cudaStreamWaitEvent(bulk.stream, la.join, 0));
    } else {
      bulk.syrk(far, b, l, c);
    }
  }

  /// The whole factorisation in one persistent launch of potrf_tiled_kernel (tiled_kernels.cuh):
  /// `state` (tiled_state_ints ints, zeroed here), the task order (ctx.tile_order_on_device) and
  /// `forms` (the factored diagonal tiles).
  /// `offset`: this matrix is the trailing one from row/column `offset` of a larger one (info).
  /// `hl` (fp32 data, 1×FP16 only, else nullptr): tiled_task_count(⌈n/64⌉) packed fp16 tiles, the
  /// operands of the FP16 updates (potrf_tiled_kernel's kHalf).
  void tiled(std::int64_t n, int* state, double* forms, std::int64_t offset = 0, __half* hl = nullptr) {
    const std::int64_t tt = (n + kTileNb - 1) / kTileNb;
    const CholeskyProbe& knobs = ctx.knobs();
    const int2* order = ctx.tile_order_on_device(tt, knobs.tiled_slope > 0 ? knobs.tiled_slope : kTiledSlope);
    const std::int64_t tasks = tiled_task_count(tt);
    GF_CUDA_TRY(cudaMemsetAsync(state, 0, sizeof(int) * static_cast<std::size_t>(tiled_state_ints(tt)), stream));
    // the tensor-copy pipeline needs an sm_90 device and a 16-byte aligned matrix and column
    // stride: fp64, lda even; otherwise the register-staged updates
    int cc_major = 0;
    GF_CUDA_TRY(cudaDeviceGetAttribute(&cc_major, cudaDevAttrComputeCapabilityMajor, ctx.device));
    const bool async = std::is_same_v<T, double> && knobs.tiled_async && cc_major >= 9 && lda % 2 == 0 &&
                       reinterpret_cast<std::uintptr_t>(a) % 16 == 0;
    CUtensorMap amap{};
    if constexpr (std::is_same_v<T, double>)
      if (async) amap = tiled_tensor_map(a, n, lda);
    const auto launch = [&](auto kernel) {
      GF_CUDA_TRY(gemflow::cuda::allow_dynamic_smem(kernel, tiled_smem_bytes()));
      int sms = 0, per_sm = 0;
      GF_CUDA_TRY(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, ctx.device));
      GF_CUDA_TRY(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kernel, kTileThreads, tiled_smem_bytes()));
      std::int64_t cap = std::int64_t{std::max(sms, 1)} * std::max(per_sm, 1);
      if (opt.tiled_ctas > 0) cap = std::min(cap, opt.tiled_ctas);
      const unsigned grid = unsigned(std::clamp<std::int64_t>(tasks, 1, cap));
      kernel<<<grid, kTileThreads, tiled_smem_bytes(), stream>>>(a, lda, n, tt, state, order, forms, ctx.status.data(),
                                                                 offset, hl, amap, knobs.tiled_trace);
    };
    // the traced kernels (CholeskyProbe::tiled_trace) only where the timeline bench uses them
    const bool traced = knobs.tiled_trace != nullptr;
    if constexpr (std::is_same_v<T, double>) {
      if (traced) {
        if (async) launch(potrf_tiled_kernel<T, true, false, true>);
        else launch(potrf_tiled_kernel<T, false, false, true>);
      } else if (async) {
        launch(potrf_tiled_kernel<T, true>);
      } else {
        launch(potrf_tiled_kernel<T, false>);
      }
    } else {
      if (traced && !hl)
        throw std::invalid_argument("GpuCholesky::factor: CholeskyProbe::tiled_trace needs fp64 or fp32_mode fp16");
      if (traced) launch(potrf_tiled_kernel<T, false, true, true>);
      else if (hl) launch(potrf_tiled_kernel<T, false, true>);
      else launch(potrf_tiled_kernel<T, false>);
    }
    GF_CUDA_CHECK_LAUNCH();
  }
};

/// `equilibrated`: FP16 modes only, the caller has already scaled A (solve_mixed does it as it
/// demotes A to fp32) and takes S back out itself: no scaling passes here, L is Ls.
/// `scan`: look for NaN/Inf (CholeskyStatus::non_finite): passes over A and the factor where
/// cuSOLVER or cuBLAS writes L, our kernels' own tests otherwise.
/// solve_mixed leaves them out (two passes over the fp32 matrix, 0.3 ms at n = 16k on an H200):
/// it has checked ‖A‖∞ for finiteness, and a non-finite factor makes its iterate non-finite, which
/// it treats as a failed factor.
/// factor_enqueue only enqueues the factorisation on ctx.stream (the status words reset, then
/// updated on the device: read them with ctx.read_status() or a copy of ctx.status); factor_impl
/// also waits for the status and returns it.
template <class T>
void factor_enqueue(GpuCholesky::Impl& ctx, T* a, std::int64_t n, std::int64_t lda, CholeskyOptions opt,
                    bool equilibrated, bool scan) {
  if (n < 0) throw std::invalid_argument("GpuCholesky::factor: n = " + std::to_string(n) + " < 0");
  if (lda < std::max<std::int64_t>(1, n))
    throw std::invalid_argument("GpuCholesky::factor: lda = " + std::to_string(lda) +
                                " < max(1, n = " + std::to_string(n) + ")");
  if (n > INT_MAX || lda > INT_MAX)
    throw std::invalid_argument("GpuCholesky::factor: n or lda exceeds cuBLAS's int range");
  if (n == 0) return;
  if (a == nullptr) throw std::invalid_argument("GpuCholesky::factor: null matrix pointer");
  const Fp32Mode mode = std::is_same_v<T, float> ? opt.fp32_mode : Fp32Mode::exact;  // fp64 ignores fp32_mode
  if (!algo_runs_mode(opt.algo, mode))
    throw std::invalid_argument(std::string("GpuCholesky::factor: fp32_mode ") + fp32_mode_name(mode) +
                                " needs algo = " + algos_running_mode(mode));
  // tensor-core panels everywhere (exact fp32 too since the tiled tail: H200 1.03–1.24× spotrf at
  // 8k–32k against 0.87–0.90× with cuSOLVER's spotrf panels)
  if (opt.panel == PanelAlgo::automatic) opt.panel = PanelAlgo::tiles;
  if (opt.block <= 0)
    opt.block = opt.algo != CholeskyAlgo::lookahead ? kDefaultBlock
                : opt.panel == PanelAlgo::tiles     ? default_tiles_block(n, mode)
                                                    : kDefaultLookaheadBlock;
  if (opt.base <= 0) opt.base = opt.algo == CholeskyAlgo::lookahead ? opt.block : kDefaultBase;
  if (opt.tiled_ctas < 0)
    throw std::invalid_argument("GpuCholesky::factor: tiled_ctas = " + std::to_string(opt.tiled_ctas) + " < 0");
  if (std::is_same_v<T, float> && ctx.probe && ctx.probe->tiled_trace && mode != Fp32Mode::fp16 &&
      (opt.algo == CholeskyAlgo::tiled || opt.algo == CholeskyAlgo::lookahead))
    throw std::invalid_argument(std::string("GpuCholesky::factor: CholeskyProbe::tiled_trace needs fp64 or fp32_mode "
                                            "fp16, not ") +
                                fp32_mode_name(mode));
  if (opt.tiled_tail == 0)  // measured for every precision and mode
    opt.tiled_tail = mode == Fp32Mode::fp16 ? kLookaheadTiledTailFp16 : kLookaheadTiledTail;
  if (opt.trsm_base <= 0) opt.trsm_base = kDefaultTrsmBase;
  if (opt.syrk_base <= 0) {  // TF32/FP16 modes: leaves are tensor-core squares (syrk_square), larger is better
    if (mode != Fp32Mode::exact)
      opt.syrk_base = mode == Fp32Mode::tf32 || mode == Fp32Mode::fp16 ? kTf32SyrkBase : kTf32x3SyrkBase;
    else if (opt.algo == CholeskyAlgo::lookahead && opt.panel == PanelAlgo::tiles) opt.syrk_base = kTilesSyrkBase;
    else opt.syrk_base = kDefaultSyrkBase;
  }
  const bool fp16 = is_fp16_mode(mode);
  if (fp16 && opt.algo == CholeskyAlgo::lookahead && opt.panel != PanelAlgo::tiles)
    throw std::invalid_argument(std::string("GpuCholesky::factor: fp32_mode ") + fp32_mode_name(mode) +
                                " needs algo = lookahead with tensor-core panels (panel = tiles)" +
                                (mode == Fp32Mode::fp16 ? " or tiled" : ""));
  enable_leaf_smem<T>();
  const gemflow::cuda::NvtxRange range(std::is_same_v<T, double> ? "cholesky factor fp64" : "cholesky factor fp32", n);

  // workspace: cuSOLVER potrf work for the largest cuSOLVER leaf, then the 3×TF32 operands
  std::int64_t largest_leaf = 0;
  switch (opt.algo) {
    case CholeskyAlgo::recursive: largest_leaf = std::min(n, opt.base); break;
    case CholeskyAlgo::blocked: largest_leaf = std::min(n, opt.block); break;
    case CholeskyAlgo::cusolver: largest_leaf = n; break;
    case CholeskyAlgo::lookahead:
      largest_leaf = opt.panel == PanelAlgo::tiles ? 0 : std::min({n, opt.block, opt.base});
      break;
    case CholeskyAlgo::tiled: break;
  }
  int lwork = 0;
  const bool need_solver = opt.algo == CholeskyAlgo::cusolver || largest_leaf > kOwnLeafMax;
  if (need_solver) GF_CUSOLVER_TRY(Lib<T>::potrf_lwork(ctx.solver, as_int(largest_leaf), a, as_int(lda), &lwork));
  std::size_t split_floats = 0;
  const bool two_streams = opt.algo == CholeskyAlgo::lookahead;
  // 3×TF32 GEMMs run once n exceeds the largest piece factored without them: one panel (lookahead
  // with tensor-core panels, whose own sub-panel updates are plain cuBLAS) or a recursive leaf
  const std::int64_t gemm_free = !two_streams                    ? opt.base
                                 : opt.panel == PanelAlgo::tiles ? opt.block
                                                                 : std::min(opt.block, opt.base);
  std::size_t square_floats = 0;  // per stream: SYRK leaves of the TF32 modes
  const auto streams = static_cast<std::size_t>(two_streams ? 2 : 1);
  const auto leaf = static_cast<std::size_t>(std::min(n, opt.syrk_base));
  if (mode != Fp32Mode::exact) square_floats = leaf * leaf;
  // tensor-core panels: the saved upper triangles of one panel's diagonal blocks (panel stream)
  const std::size_t panel_upper_bytes =
      two_streams && opt.panel == PanelAlgo::tiles && n > kPanelNb
          ? align_up(sizeof(T) * static_cast<std::size_t>((std::min(n, opt.block) + kPanelNb - 1) / kPanelNb) *
                     kPanelNb * kPanelNb)
          : 0;
  if (mode != Fp32Mode::exact && n > gemm_free) {
    if (mode == Fp32Mode::tf32x3) {
      // per stream, the largest GEMM: (m + n)·3k ≤ 3·n·kmax, and a SYRK leaf's 2·leaf·3·kmax,
      // kmax = nb (lookahead) or split_point(n)
      const auto kmax = static_cast<std::size_t>(two_streams ? std::min(n, opt.block) : split_point(n));
      split_floats = streams * 3 * kmax * std::max(static_cast<std::size_t>(n), 2 * leaf);
    }
  }
  // tiled (or the lookahead's tiled tail): task counter, flags, the factored diagonal tiles and the
  // updated sub-diagonal tiles
  const std::int64_t tiled_n = opt.algo == CholeskyAlgo::tiled                             ? n
                               : opt.algo == CholeskyAlgo::lookahead && opt.tiled_tail > 0 ? std::min(n, opt.tiled_tail)
                                                                                           : 0;
  const std::int64_t tiles = (tiled_n + kTileNb - 1) / kTileNb;
  const std::size_t tiled_state_bytes =
      tiles > 0 ? align_up(sizeof(int) * static_cast<std::size_t>(tiled_state_ints(tiles))) : 0;
  const std::size_t tiled_forms_bytes =
      tiles > 0 ? align_up(sizeof(double) * 2 * static_cast<std::size_t>(tiles) * kTileNb * kTileLd) : 0;
  // 1×FP16 in the tiled kernel (or the tail): the packed fp16 copies of its tiles
  const std::size_t tile_half_bytes =
      mode == Fp32Mode::fp16 && tiles > 0
          ? align_up(sizeof(__half) * static_cast<std::size_t>(tiled_task_count(tiles)) * kHalfTile)
          : 0;
  // FP16 modes: two panel copies (hi; 3×FP16: hi, P and Q) and the equilibration exponents
  const std::size_t half_bytes =
      fp16 && opt.algo == CholeskyAlgo::lookahead
          ? align_up(sizeof(__half) * static_cast<std::size_t>(round_up8(n)) * static_cast<std::size_t>(opt.block) *
                     (mode == Fp32Mode::fp16x3 ? 5 : 1))
          : 0;
  const std::size_t exp_bytes = fp16 && !equilibrated ? align_up(sizeof(int) * static_cast<std::size_t>(n)) : 0;
  const std::size_t lwork_bytes = align_up(sizeof(T) * static_cast<std::size_t>(lwork));
  const std::size_t split_bytes = align_up(sizeof(float) * split_floats);
  const std::size_t square_bytes = align_up(sizeof(float) * streams * square_floats);
  char* ws = static_cast<char*>(
      ctx.workspace(lwork_bytes + split_bytes + square_bytes + panel_upper_bytes + tiled_state_bytes +
                        tiled_forms_bytes + 2 * half_bytes + exp_bytes + tile_half_bytes,
                    std::string("GpuCholesky::factor (") + Lib<T>::name + ", n = " + std::to_string(n) + ")"));
  Factor<T> f{ctx, a, lda, opt};
  f.lwork_ptr = reinterpret_cast<T*>(ws);
  f.lwork = lwork;
  f.split = reinterpret_cast<float*>(ws + lwork_bytes);
  f.square = reinterpret_cast<float*>(ws + lwork_bytes + split_bytes);
  f.panel_upper = panel_upper_bytes ? reinterpret_cast<T*>(ws + lwork_bytes + split_bytes + square_bytes) : nullptr;
  f.stream = ctx.stream;
  f.blas = ctx.blas;
  char* const half_ws =
      ws + lwork_bytes + split_bytes + square_bytes + panel_upper_bytes + tiled_state_bytes + tiled_forms_bytes;
  int* const exps = fp16 && !equilibrated ? reinterpret_cast<int*>(half_ws + 2 * half_bytes) : nullptr;
  __half* const tile_half = tile_half_bytes ? reinterpret_cast<__half*>(half_ws + 2 * half_bytes + exp_bytes) : nullptr;
  if (fp16) {
    f.half_bufs[0] = reinterpret_cast<__half*>(half_ws);
    f.half_bufs[1] = reinterpret_cast<__half*>(half_ws + half_bytes);
  }

  // 1×TF32 accepts TF32 rounding everywhere: cuBLAS's TRSM leaves (library panels) and the
  // sub-panel updates of tensor-core panels then run on the tensor cores too, not the fp32 pipes
  std::optional<BlasMathGuard> tf32_math;
  if (mode == Fp32Mode::tf32) {
    if (two_streams) {
      auto& la = ctx.lookahead_streams();
      // (bulk2, next and ahead run fp64 or exact fp32 only)
      tf32_math.emplace(std::initializer_list<cublasHandle_t>{ctx.blas, la.blas_crit, la.blas_bulk},
                        CUBLAS_TF32_TENSOR_OP_MATH);
    } else {
      tf32_math.emplace(std::initializer_list<cublasHandle_t>{ctx.blas}, CUBLAS_TF32_TENSOR_OP_MATH);
    }
  }
  ctx.reset_status();
  const std::int64_t warps = std::min<std::int64_t>(n, 132 * 64);
  const unsigned scan_blocks = unsigned((warps * 32 + 255) / 256);
  // Our panel and tiled kernels write every value of L and test it, and test a failing pivot
  // (panel_kernels.cuh); the scans are for L written by cuSOLVER or cuBLAS, or scaled afterwards.
  // (H200, fp64: the two scans took 0.14 ms of 5.2 at n = 8k and 2.2 of 235 at 32k.)
  if (scan && !exps &&
      (opt.algo == CholeskyAlgo::tiled || (opt.algo == CholeskyAlgo::lookahead && opt.panel == PanelAlgo::tiles)))
    scan = false;
  if (scan) {
    scan_nonfinite_kernel<T><<<scan_blocks, 256, 0, ctx.stream>>>(a, lda, n, ctx.status.data());  // the input
    GF_CUDA_CHECK_LAUNCH();
  }
  const dim3 scale_grid(unsigned((n + 255) / 256), unsigned(std::min<std::int64_t>(n, 1024)));
  if constexpr (std::is_same_v<T, float>) {
    if (exps) {  // A ← S·A·S, S = diag(2^e)
      equilibrate_exponents_kernel<float><<<unsigned((n + 255) / 256), 256, 0, ctx.stream>>>(a, lda, n, exps);
      GF_CUDA_CHECK_LAUNCH();
      scale_lower_kernel<<<scale_grid, 256, 0, ctx.stream>>>(a, lda, n, exps, false);
      GF_CUDA_CHECK_LAUNCH();
    }
  }
  switch (opt.algo) {
    case CholeskyAlgo::recursive: f.recursive(0, n); break;
    case CholeskyAlgo::blocked: f.blocked(n); break;
    // n = 1 is √a11: cusolverDn<t>potrf returns it up to 2 ulps below the correctly rounded
    // value (CUDA 13.0, H200), which breaks the n·ε backward-error bound; our leaf rounds correctly.
    case CholeskyAlgo::cusolver: f.leaf(0, n, /*force_cusolver=*/n > 1); break;
    case CholeskyAlgo::lookahead: {
      char* tw = ws + lwork_bytes + split_bytes + square_bytes + panel_upper_bytes;
      // fp64 and exact fp32 (the FP16 modes were 2–3% slower two panels deep: docs/performance.md)
      if (mode == Fp32Mode::exact && ctx.knobs().depth2 && !ctx.knobs().serial && opt.panel == PanelAlgo::tiles)
        f.lookahead_depth2(n, reinterpret_cast<int*>(tw), reinterpret_cast<double*>(tw + tiled_state_bytes));
      else
        f.lookahead(n, f.split + split_floats / 2, f.square + square_floats, reinterpret_cast<int*>(tw),
                    reinterpret_cast<double*>(tw + tiled_state_bytes), tile_half);
      break;
    }
    case CholeskyAlgo::tiled: {
      char* tw = ws + lwork_bytes + split_bytes + square_bytes + panel_upper_bytes;
      f.tiled(n, reinterpret_cast<int*>(tw), reinterpret_cast<double*>(tw + tiled_state_bytes), 0, tile_half);
      break;
    }
  }
  if constexpr (std::is_same_v<T, float>) {
    if (exps) {  // L = S⁻¹·Ls
      scale_lower_kernel<<<scale_grid, 256, 0, ctx.stream>>>(a, lda, n, exps, true);
      GF_CUDA_CHECK_LAUNCH();
    }
  }
  if (scan) {
    scan_nonfinite_kernel<T><<<scan_blocks, 256, 0, ctx.stream>>>(a, lda, n, ctx.status.data());  // the factor
    GF_CUDA_CHECK_LAUNCH();
  }
}

/// The status words as a CholeskyStatus (a NaN/Inf column is the info when no minor failed).
CholeskyStatus status_of(const DeviceStatus& st) {
  CholeskyStatus out;
  out.info = st.info;
  // our kernels' stores count in L's completed columns (< info − 1) only
  const bool stored = st.stored_nonfinite_col != LLONG_MAX && (st.info == 0 || st.stored_nonfinite_col < st.info);
  if (st.nonfinite_col != LLONG_MAX || stored || st.failed_nonfinite) {
    out.non_finite = true;
    if (out.info == 0) out.info = std::min(st.nonfinite_col, st.stored_nonfinite_col);
  }
  return out;
}

template <class T>
CholeskyStatus factor_impl(GpuCholesky::Impl& ctx, T* a, std::int64_t n, std::int64_t lda, CholeskyOptions opt,
                           bool equilibrated, bool scan) {
  factor_enqueue<T>(ctx, a, n, lda, opt, equilibrated, scan);
  if (n == 0) return {};
  return status_of(ctx.read_status());
}

template void factor_enqueue<float>(GpuCholesky::Impl&, float*, std::int64_t, std::int64_t, CholeskyOptions, bool,
                                    bool);
template CholeskyStatus factor_impl<double>(GpuCholesky::Impl&, double*, std::int64_t, std::int64_t, CholeskyOptions,
                                            bool, bool);
template CholeskyStatus factor_impl<float>(GpuCholesky::Impl&, float*, std::int64_t, std::int64_t, CholeskyOptions,
                                           bool, bool);

}  // namespace detail

// ---- Impl --------------------------------------------------------------------------------

GpuCholesky::Impl::Impl(cudaStream_t s) : stream(s) {
  try {
    GF_CUDA_TRY(cudaGetDevice(&device));
    GF_CUBLAS_TRY(cublasCreate(&blas));
    GF_CUBLAS_TRY(cublasSetStream(blas, stream));
    GF_CUSOLVER_TRY(cusolverDnCreate(&solver));
    GF_CUSOLVER_TRY(cusolverDnSetStream(solver, stream));
    status.allocate(1);
  } catch (...) {
    release();
    throw;
  }
}

GpuCholesky::Impl::~Impl() { release(); }

GpuCholesky::Impl::Lookahead& GpuCholesky::Impl::lookahead_streams() {
  if (la.crit) return la;
  try {
    int least = 0, greatest = 0;
    GF_CUDA_TRY(cudaDeviceGetStreamPriorityRange(&least, &greatest));
    GF_CUDA_TRY(cudaStreamCreateWithPriority(&la.crit, cudaStreamNonBlocking, greatest));
    GF_CUDA_TRY(cudaStreamCreateWithPriority(&la.bulk, cudaStreamNonBlocking, least));
    GF_CUDA_TRY(cudaStreamCreateWithPriority(&la.bulk2, cudaStreamNonBlocking, least));
    // lookahead depth 2: the next block column and the one after it between the two (greatest is
    // the lowest number; the panels' priority was 2–4% slower at 16k–24k)
    const int medium = std::min(least, greatest + 1);
    GF_CUDA_TRY(cudaStreamCreateWithPriority(&la.next, cudaStreamNonBlocking, medium));
    GF_CUDA_TRY(cudaStreamCreateWithPriority(&la.ahead, cudaStreamNonBlocking, medium));
    const std::pair<cublasHandle_t*, cudaStream_t> handles[] = {{&la.blas_crit, la.crit},
                                                                {&la.blas_bulk, la.bulk},
                                                                {&la.blas_bulk2, la.bulk2},
                                                                {&la.blas_next, la.next},
                                                                {&la.blas_ahead, la.ahead}};
    for (const auto& [h, st] : handles) {
      GF_CUBLAS_TRY(cublasCreate(h));
      GF_CUBLAS_TRY(cublasSetStream(*h, st));
    }
    for (cudaEvent_t* e :
         {&la.start, &la.panel, &la.bulk_done, &la.crit_done, &la.fork, &la.join, &la.next_done, &la.ahead_done})
      GF_CUDA_TRY(cudaEventCreateWithFlags(e, cudaEventDisableTiming));
    for (cudaEvent_t& e : la.group) GF_CUDA_TRY(cudaEventCreateWithFlags(&e, cudaEventDisableTiming));
  } catch (...) {
    release_lookahead();
    throw;
  }
  return la;
}

void GpuCholesky::Impl::release_lookahead() noexcept {
  for (cudaEvent_t* e :
       {&la.start, &la.panel, &la.bulk_done, &la.crit_done, &la.fork, &la.join, &la.next_done, &la.ahead_done})
    if (*e) GF_CUDA_TRY_NO_THROW(cudaEventDestroy(*e));
  for (cudaEvent_t e : la.group)
    if (e) GF_CUDA_TRY_NO_THROW(cudaEventDestroy(e));
  for (cublasHandle_t h : {la.blas_crit, la.blas_bulk, la.blas_bulk2, la.blas_next, la.blas_ahead})
    if (h) GF_CUDA_TRY_NO_THROW(cublasDestroy(h));
  for (cudaStream_t st : {la.crit, la.bulk, la.bulk2, la.next, la.ahead})
    if (st) GF_CUDA_TRY_NO_THROW(cudaStreamDestroy(st));
  la = {};
}

void GpuCholesky::Impl::release() noexcept {
  release_lookahead();
  ws.reset();
  solve_ws.reset();
  pinned.reset();
  tile_order_dev.reset();
  tile_order_dev_current = false;
  status.reset();
  if (solver) GF_CUDA_TRY_NO_THROW(cusolverDnDestroy(solver));
  if (blas) GF_CUDA_TRY_NO_THROW(cublasDestroy(blas));
  solver = nullptr;
  blas = nullptr;
}

namespace {
/// Grows `buffer` to at least `bytes` once the stream is idle (nothing still uses the old
/// allocation); the old contents are lost. Device memory after a free-memory check, or page-locked
/// host memory.
template <class Buffer>
void* grow_buffer(Buffer& buffer, std::size_t bytes, const std::string& what, cudaStream_t stream) {
  if (bytes <= buffer.size()) return buffer.data();
  if constexpr (std::is_same_v<Buffer, ::gemflow::cuda::DeviceBuffer<std::byte>>)
    detail::require_free_memory(bytes - buffer.size(), what);
  GF_CUDA_TRY(cudaStreamSynchronize(stream));
  buffer.allocate(bytes);  // frees the old allocation first
  return buffer.data();
}
}  // namespace

void* GpuCholesky::Impl::workspace(std::size_t bytes, const std::string& what) {
  return grow_buffer(ws, bytes, what, stream);
}

const int2* GpuCholesky::Impl::tile_order_on_device(std::int64_t tt, double slope) {
  if (tile_order_tt != tt || tile_order_slope != slope) {
    tile_order = detail::tiled_task_order(tt, slope);
    tile_order_tt = tt;
    tile_order_slope = slope;
    tile_order_dev_current = false;
  }
  if (!tile_order_dev_current) {
    const std::size_t bytes = sizeof(int2) * tile_order.size();
    grow_buffer(tile_order_dev, bytes, "the tiled task order", stream);
    GF_CUDA_TRY(cudaMemcpyAsync(tile_order_dev.data(), tile_order.data(), bytes, cudaMemcpyHostToDevice, stream));
    tile_order_dev_current = true;
  }
  return reinterpret_cast<const int2*>(tile_order_dev.data());
}

void* GpuCholesky::Impl::solve_workspace(std::size_t bytes, const std::string& what) {
  return grow_buffer(solve_ws, bytes, what, stream);
}

void* GpuCholesky::Impl::host_pinned(std::size_t bytes) {
  return grow_buffer(pinned, bytes, "page-locked scalars", stream);
}

void GpuCholesky::Impl::reset_status() {
  static const detail::DeviceStatus init{0, LLONG_MAX, LLONG_MAX, 0, 0, 0};
  GF_CUDA_TRY(cudaMemcpyAsync(status.data(), &init, sizeof init, cudaMemcpyHostToDevice, stream));
}

detail::DeviceStatus GpuCholesky::Impl::read_status() {
  detail::DeviceStatus st{};
  GF_CUDA_TRY(cudaMemcpyAsync(&st, status.data(), sizeof st, cudaMemcpyDeviceToHost, stream));
  GF_CUDA_TRY(cudaStreamSynchronize(stream));
  return st;
}

// ---- public ------------------------------------------------------------------------------

DeviceTraits device_traits(int device) {
  DeviceTraits d;
  int clock_khz = 0, bus_bits = 0;
  GF_CUDA_TRY(cudaDeviceGetAttribute(&d.cc_major, cudaDevAttrComputeCapabilityMajor, device));
  GF_CUDA_TRY(cudaDeviceGetAttribute(&d.cc_minor, cudaDevAttrComputeCapabilityMinor, device));
  GF_CUDA_TRY(cudaDeviceGetAttribute(&d.sms, cudaDevAttrMultiProcessorCount, device));
  GF_CUDA_TRY(cudaDeviceGetAttribute(&clock_khz, cudaDevAttrMemoryClockRate, device));
  GF_CUDA_TRY(cudaDeviceGetAttribute(&bus_bits, cudaDevAttrGlobalMemoryBusWidth, device));
  d.bandwidth_gbs = 2.0 * clock_khz * 1e3 * (bus_bits / 8.0) / 1e9;  // double data rate
  return d;
}

int device_count() noexcept {
  int n = 0;
  if (cudaGetDeviceCount(&n) != cudaSuccess) {
    (void)cudaGetLastError();
    return 0;
  }
  return n;
}

std::string CholeskyStatus::message() const {
  if (info == 0) return "ok";
  std::string m = "leading minor of order " + std::to_string(info) + " is not positive definite";
  if (non_finite) m += " (NaN/Inf in the matrix or its factor)";
  return m;
}

GpuCholesky::GpuCholesky(Stream stream) : impl_(std::make_unique<Impl>(static_cast<cudaStream_t>(stream))) {}
GpuCholesky::~GpuCholesky() = default;

CholeskyStatus GpuCholesky::factor(double* a, std::int64_t n, std::int64_t lda, const CholeskyOptions& options) {
  return detail::factor_impl<double>(*impl_, a, n, lda, options, false, true);
}
CholeskyStatus GpuCholesky::factor(float* a, std::int64_t n, std::int64_t lda, const CholeskyOptions& options) {
  return detail::factor_impl<float>(*impl_, a, n, lda, options, false, true);
}

Stream GpuCholesky::stream() const noexcept { return impl_->stream; }
void GpuCholesky::set_probe(const CholeskyProbe* probe) noexcept { impl_->probe = probe; }
std::size_t GpuCholesky::workspace_bytes() const noexcept { return impl_->ws.size() + impl_->solve_ws.size(); }

}  // namespace gemflow::linalg::cuda
