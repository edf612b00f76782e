// SPD solves on a CUDA GPU over GpuCholesky (see gemflow/linalg/spd_solve.hpp). Plain C++ on the
// CUDA runtime and cuBLAS host APIs; compiled only when the plugin has its CUDA library.
#include "gemflow/linalg/spd_solve.hpp"

#if defined(GEMFLOW_LINALG_HAVE_CUDA)

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <limits>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "gemflow/cuda/buffer.hpp"
#include "gemflow/cuda/cublas.hpp"  // GF_CUDA_TRY, GF_CUBLAS_TRY (cublas_v2.h, cuda_runtime.h)
#include "gemflow/linalg/cholesky_cuda.hpp"

namespace gemflow::linalg {
namespace {

/// Owns a stream, a cuBLAS handle and device buffers; frees them on every exit path.
struct GpuScope {
  cudaStream_t stream = nullptr;
  cublasHandle_t blas = nullptr;
  std::vector<::gemflow::cuda::DeviceBuffer<std::byte>> buffers;
  explicit GpuScope(int device) {
    GF_CUDA_TRY(cudaSetDevice(device));
    GF_CUDA_TRY(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
    GF_CUBLAS_TRY(cublasCreate(&blas));
    GF_CUBLAS_TRY(cublasSetStream(blas, stream));
  }
  ~GpuScope() {
    if (stream) GF_CUDA_TRY_NO_THROW(cudaStreamSynchronize(stream));
    buffers.clear();  // each frees without throwing
    if (blas) GF_CUDA_TRY_NO_THROW(cublasDestroy(blas));
    if (stream) GF_CUDA_TRY_NO_THROW(cudaStreamDestroy(stream));
  }
  GpuScope(const GpuScope&) = delete;
  GpuScope& operator=(const GpuScope&) = delete;
  template <class T>
  T* alloc(std::size_t count, const std::string& what) {
    std::size_t free_b = 0, total_b = 0;
    GF_CUDA_TRY(cudaMemGetInfo(&free_b, &total_b));
    const std::size_t bytes = std::max<std::size_t>(count, 1) * sizeof(T);
    if (bytes > free_b)
      throw cuda::CudaError("spd_solve_cuda: " + what + " needs " + std::to_string(bytes >> 20) +
                            " MiB, the device has " + std::to_string(free_b >> 20) + " MiB free");
    buffers.emplace_back(bytes);
    return reinterpret_cast<T*>(buffers.back().data());
  }
};

cuda::CholeskyAlgo to_cuda(SpdAlgorithm a) {
  switch (a) {
    case SpdAlgorithm::blocked: return cuda::CholeskyAlgo::blocked;
    case SpdAlgorithm::recursive: return cuda::CholeskyAlgo::recursive;
    case SpdAlgorithm::cusolver: return cuda::CholeskyAlgo::cusolver;
    case SpdAlgorithm::lookahead: return cuda::CholeskyAlgo::lookahead;
    case SpdAlgorithm::tiled: return cuda::CholeskyAlgo::tiled;
    case SpdAlgorithm::lapack: break;
  }
  throw std::invalid_argument(
      "spd_solve_cuda: algorithm lapack runs on the CPU (use blocked, recursive, cusolver, lookahead or tiled)");
}

const char* algo_name(SpdAlgorithm a) {
  switch (a) {
    case SpdAlgorithm::blocked: return "blocked";
    case SpdAlgorithm::recursive: return "recursive";
    case SpdAlgorithm::cusolver: return "cuSOLVER";
    case SpdAlgorithm::lookahead: return "lookahead";
    case SpdAlgorithm::tiled: return "tiled";
    case SpdAlgorithm::lapack: return "lapack";
  }
  return "?";
}

/// A on the device, column-major n×n in precision T: its lower triangle is the row-major lower
/// triangle of the input (mirrored, so the whole matrix is symmetric).
template <class T>
T* upload_symmetric(GpuScope& g, std::span<const double> a, std::size_t n) {
  std::vector<T> h(n * n);
  for (std::size_t j = 0; j < n; ++j)
    for (std::size_t i = 0; i < n; ++i) h[i + j * n] = static_cast<T>(i >= j ? a[i * n + j] : a[j * n + i]);
  T* da = g.alloc<T>(n * n, "A");
  GF_CUDA_TRY(cudaMemcpyAsync(da, h.data(), sizeof(T) * n * n, cudaMemcpyHostToDevice, g.stream));
  GF_CUDA_TRY(cudaStreamSynchronize(g.stream));  // h is freed on return
  return da;
}

/// Uploads A and factors it in place in precision T; returns the device factor and INFO.
template <class T>
std::pair<T*, int> upload_and_factor(GpuScope& g, cuda::GpuCholesky& chol, std::span<const double> a, std::size_t n,
                                     SpdAlgorithm algorithm, Fp32Products products) {
  T* da = upload_symmetric<T>(g, a, n);
  cuda::CholeskyOptions o;
  o.algo = to_cuda(algorithm);
  if (products) o.fp32_mode = *products;
  const auto status = chol.factor(da, static_cast<std::int64_t>(n), static_cast<std::int64_t>(n), o);
  return {da, status.ok() ? 0 : static_cast<int>(status.info)};
}

/// Column-major device matrix (n × cols, ld n) → row-major host n×n, zero beyond `cols` and
/// above the diagonal.
template <class T>
void download_lower(GpuScope& g, const T* dl, std::size_t n, std::size_t cols, std::span<double> l) {
  std::vector<T> h(n * cols);
  GF_CUDA_TRY(cudaMemcpyAsync(h.data(), dl, sizeof(T) * n * cols, cudaMemcpyDeviceToHost, g.stream));
  GF_CUDA_TRY(cudaStreamSynchronize(g.stream));
  for (std::size_t i = 0; i < n; ++i)
    for (std::size_t j = 0; j < n; ++j) l[i * n + j] = j <= i && j < cols ? static_cast<double>(h[i + j * n]) : 0.0;
}

void check_factor_args(std::size_t a_size, std::size_t n, std::size_t l_size, const char* what) {
  if (a_size != n * n || l_size != n * n)
    throw std::invalid_argument(std::string(what) + ": a and l must hold n·n = " + std::to_string(n * n) +
                                " values, got " + std::to_string(a_size) + " and " + std::to_string(l_size));
  if (n > static_cast<std::size_t>(std::numeric_limits<int>::max()))
    throw std::invalid_argument(std::string(what) + ": n exceeds cuBLAS's int range");
}

/// Factor + two triangular solves in precision T; returns INFO.
template <class T>
int factor_and_solve(GpuScope& g, cuda::GpuCholesky& chol, std::span<const double> a, std::size_t n,
                     std::span<const double> b, std::size_t k, std::span<double> x, SpdAlgorithm algorithm,
                     Fp32Products products) {
  std::vector<T> hb(n * k);
  for (std::size_t i = 0; i < n; ++i)
    for (std::size_t c = 0; c < k; ++c) hb[i + c * n] = static_cast<T>(b[i * k + c]);
  T* db = g.alloc<T>(n * k, "B");
  GF_CUDA_TRY(cudaMemcpyAsync(db, hb.data(), sizeof(T) * n * k, cudaMemcpyHostToDevice, g.stream));
  const auto [da, info] = upload_and_factor<T>(g, chol, a, n, algorithm, products);
  if (info != 0) return info;
  const int ni = static_cast<int>(n), ki = static_cast<int>(k);
  const T one = 1;
  // L y = b, then Lᵀ x = y.
  if constexpr (std::is_same_v<T, double>) {
    GF_CUBLAS_TRY(cublasDtrsm(g.blas, CUBLAS_SIDE_LEFT, CUBLAS_FILL_MODE_LOWER, CUBLAS_OP_N, CUBLAS_DIAG_NON_UNIT, ni,
                              ki, &one, da, ni, db, ni));
    GF_CUBLAS_TRY(cublasDtrsm(g.blas, CUBLAS_SIDE_LEFT, CUBLAS_FILL_MODE_LOWER, CUBLAS_OP_T, CUBLAS_DIAG_NON_UNIT, ni,
                              ki, &one, da, ni, db, ni));
  } else {
    GF_CUBLAS_TRY(cublasStrsm(g.blas, CUBLAS_SIDE_LEFT, CUBLAS_FILL_MODE_LOWER, CUBLAS_OP_N, CUBLAS_DIAG_NON_UNIT, ni,
                              ki, &one, da, ni, db, ni));
    GF_CUBLAS_TRY(cublasStrsm(g.blas, CUBLAS_SIDE_LEFT, CUBLAS_FILL_MODE_LOWER, CUBLAS_OP_T, CUBLAS_DIAG_NON_UNIT, ni,
                              ki, &one, da, ni, db, ni));
  }
  GF_CUDA_TRY(cudaMemcpyAsync(hb.data(), db, sizeof(T) * n * k, cudaMemcpyDeviceToHost, g.stream));
  GF_CUDA_TRY(cudaStreamSynchronize(g.stream));
  for (std::size_t i = 0; i < n; ++i)
    for (std::size_t c = 0; c < k; ++c) x[i * k + c] = static_cast<double>(hb[i + c * n]);
  return 0;
}

/// std::invalid_argument for products with precision fp64 (the modes are fp32 GEMMs).
void check_products(SolvePrecision precision, Fp32Products products, const char* what) {
  if (products && precision == SolvePrecision::fp64)
    throw std::invalid_argument(std::string(what) + ": fp32 products " + cuda::fp32_mode_name(*products) +
                                " apply to precision fp32 or mixed, not fp64");
}

}  // namespace

bool spd_solve_cuda_built() noexcept { return true; }

int cholesky_cuda(std::span<const double> a, std::size_t n, std::span<double> l, SolvePrecision precision,
                  SpdAlgorithm algorithm, int device, Fp32Products products) {
  check_factor_args(a.size(), n, l.size(), "cholesky_cuda");
  (void)to_cuda(algorithm);  // rejects lapack
  if (precision == SolvePrecision::mixed)
    throw std::invalid_argument("cholesky_cuda: precision mixed is a solve (refinement), not a factorisation");
  check_products(precision, products, "cholesky_cuda");
  if (n == 0) return 0;
  GpuScope g(device);
  cuda::GpuCholesky chol(g.stream);
  const auto run = [&]<class T>(T*) {
    const auto [dl, info] = upload_and_factor<T>(g, chol, a, n, algorithm, products);
    if (info == 0) download_lower(g, dl, n, n, l);
    return info;
  };
  return precision == SolvePrecision::fp64 ? run(static_cast<double*>(nullptr)) : run(static_cast<float*>(nullptr));
}

PivotedCholesky pivoted_cholesky_cuda(std::span<const double> a, std::size_t n, std::size_t max_rank, double tolerance,
                                      std::span<double> l, int device) {
  check_factor_args(a.size(), n, l.size(), "pivoted_cholesky_cuda");
  if (n == 0) return {};
  GpuScope g(device);
  cuda::GpuCholesky chol(g.stream);
  const double* da = upload_symmetric<double>(g, a, n);
  const std::size_t cols = max_rank > 0 ? std::min(max_rank, n) : n;
  double* dl = g.alloc<double>(n * cols, "L");
  PivotedCholesky r =
      chol.factor_pivoted(da, static_cast<std::int64_t>(n), static_cast<std::int64_t>(n),
                          static_cast<std::int64_t>(max_rank), tolerance, dl, static_cast<std::int64_t>(n));
  download_lower(g, dl, n, std::min(cols, r.rank), l);  // rows are in pivot order: L is trapezoidal
  return r;
}

SpdSolveResult spd_solve_cuda(std::span<const double> a, std::size_t n, std::span<const double> b, std::size_t nrhs,
                              std::span<double> x, SolvePrecision precision, SpdAlgorithm algorithm, int device,
                              const RefinementOptions& refinement, Fp32Products products) {
  if (a.size() != n * n || b.size() != n * nrhs || x.size() != n * nrhs)
    throw std::invalid_argument("spd_solve_cuda: sizes do not fit n = " + std::to_string(n) +
                                ", nrhs = " + std::to_string(nrhs));
  if (n > static_cast<std::size_t>(std::numeric_limits<int>::max()) ||
      nrhs > static_cast<std::size_t>(std::numeric_limits<int>::max()))
    throw std::invalid_argument("spd_solve_cuda: n or nrhs exceeds cuBLAS's int range");
  (void)to_cuda(algorithm);  // rejects lapack
  check_products(precision, products, "spd_solve_cuda");
  SpdSolveResult res;
  if (n == 0 || nrhs == 0) {
    res.converged = true;
    if (precision == SolvePrecision::mixed) res.componentwise_backward_error = 0.0;  // as the CPU's
    return res;
  }
  GpuScope g(device);
  cuda::GpuCholesky chol(g.stream);
  if (precision == SolvePrecision::fp64) {
    res.method = std::string("GPU ") + algo_name(algorithm) + " Cholesky (fp64) + cuBLAS dtrsm";
    res.info = factor_and_solve<double>(g, chol, a, n, b, nrhs, x, algorithm, products);
    return res;
  }
  if (precision == SolvePrecision::fp32) {
    res.method = std::string("GPU ") + algo_name(algorithm) + " Cholesky (fp32" +
                 (products ? std::string(", ") + cuda::fp32_mode_name(*products) + " products" : std::string()) +
                 ") + cuBLAS strsm";
    res.info = factor_and_solve<float>(g, chol, a, n, b, nrhs, x, algorithm, products);
    if (res.info == 0) detail::require_finite_fp32_solution(x);
    return res;
  }
  if (algorithm == SpdAlgorithm::blocked || algorithm == SpdAlgorithm::cusolver)
    throw std::invalid_argument(std::string("spd_solve_cuda: precision mixed uses GpuCholesky::solve_mixed, whose fp32 "
                                            "factor is the lookahead, the recursive or the tiled algorithm; "
                                            "algorithm ") +
                                algo_name(algorithm) + " is not available for it");
  std::vector<double> h(n * n), hb(n * nrhs);
  for (std::size_t j = 0; j < n; ++j)
    for (std::size_t i = 0; i < n; ++i) h[i + j * n] = i >= j ? a[i * n + j] : a[j * n + i];
  for (std::size_t i = 0; i < n; ++i)
    for (std::size_t c = 0; c < nrhs; ++c) hb[i + c * n] = b[i * nrhs + c];
  double* da = g.alloc<double>(n * n, "A");
  double* db = g.alloc<double>(n * nrhs, "B");
  double* dx = g.alloc<double>(n * nrhs, "X");
  GF_CUDA_TRY(cudaMemcpyAsync(da, h.data(), sizeof(double) * n * n, cudaMemcpyHostToDevice, g.stream));
  GF_CUDA_TRY(cudaMemcpyAsync(db, hb.data(), sizeof(double) * n * nrhs, cudaMemcpyHostToDevice, g.stream));
  cuda::MixedSolveOptions mo;
  mo.factor_algo = to_cuda(algorithm);
  if (algorithm == SpdAlgorithm::recursive) mo.factor_mode = cuda::Fp32Mode::tf32;  // FP16 modes: lookahead, tiled
  if (products) mo.factor_mode = *products;
  mo.max_iterations = refinement.max_iterations;
  mo.tolerance = refinement.tolerance;
  mo.fallback_fp64 = refinement.fallback_fp64;
  mo.gmres = refinement.gmres;
  mo.componentwise_threshold = refinement.componentwise_threshold;
  const auto n64 = static_cast<std::int64_t>(n), k64 = static_cast<std::int64_t>(nrhs);
  const cuda::MixedSolveResult m = chol.solve_mixed(da, n64, n64, db, n64, k64, dx, n64, mo);
  res.method =
      std::string("GPU GpuCholesky::solve_mixed (") + algo_name(algorithm) + " fp32 " +
      (!m.escalated ? std::string(cuda::fp32_mode_name(m.factor_mode)) + " factor"
       : m.escalation_step < 0
           ? std::string(cuda::fp32_mode_name(mo.factor_mode)) + " factor, escalation to " +
                 cuda::fp32_mode_name(m.factor_mode) + " failed"
           : std::string(cuda::fp32_mode_name(mo.factor_mode)) + " factor, then " +
                 cuda::fp32_mode_name(m.factor_mode) + " (escalated after " + std::to_string(m.escalation_step) +
                 (m.escalation_step == 1 ? " step)" : " steps)")) +
      ", fp64 refinement with " +
      (nrhs == 1 ? "our SYMV residuals and fp32 triangular solves)" : "cublasDsymm residuals and cublasStrsm solves)");
  GF_CUDA_TRY(cudaMemcpyAsync(hb.data(), dx, sizeof(double) * n * nrhs, cudaMemcpyDeviceToHost, g.stream));
  GF_CUDA_TRY(cudaStreamSynchronize(g.stream));
  for (std::size_t i = 0; i < n; ++i)
    for (std::size_t c = 0; c < nrhs; ++c) x[i * nrhs + c] = hb[i + c * n];
  res.info = static_cast<int>(m.status.info);
  res.fp32_info = static_cast<int>(m.fp32_status.info);
  res.backward_error = m.backward_error;
  res.iterations = m.iterations;
  res.converged = m.converged;
  res.used_fp64_fallback = m.used_fp64_fallback;
  res.gmres_steps = m.gmres_steps;
  res.gmres_iterations = m.gmres_iterations;
  res.tolerance = m.tolerance;
  res.componentwise_steps = m.componentwise_steps;
  res.componentwise_backward_error = m.componentwise_backward_error;
  if (m.used_fp64_fallback) res.method += " (fell back to cuSOLVER fp64 potrf + potrs)";
  return res;
}

}  // namespace gemflow::linalg

#endif  // GEMFLOW_LINALG_HAVE_CUDA
