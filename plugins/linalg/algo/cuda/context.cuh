#pragma once
// GpuCholesky::Impl: handles, stream, device status words and the growing workspace.
#include <cublas_v2.h>
#include <cuda_runtime.h>
#include <cusolverDn.h>

#include <climits>
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "cuda_check.cuh"

namespace gemflow::linalg::cuda::detail {

/// Device-side status of one factorisation (written by kernels, read back once at the end).
struct DeviceStatus {
  long long info;           ///< first failing leading minor (1-based), 0 = none yet
  long long nonfinite_col;  ///< 1 + first column holding a NaN/Inf, LLONG_MAX = none
  int local_info;           ///< devInfo of the last cuSOLVER call
  unsigned int panel_loaded;  ///< potrf_panel_kernel: CTAs that have read the diagonal block (reset by CTA 0)
};

inline constexpr std::size_t align_up(std::size_t bytes, std::size_t a = 256) { return (bytes + a - 1) / a * a; }

/// Throws CudaError when `bytes` more device bytes are not free.
void require_free_memory(std::size_t bytes, const std::string& what);

}  // namespace gemflow::linalg::cuda::detail

namespace gemflow::linalg::cuda {

struct GpuCholesky::Impl {
  cudaStream_t stream = nullptr;
  int device = 0;
  cublasHandle_t blas = nullptr;
  cusolverDnHandle_t solver = nullptr;
  detail::DeviceStatus* status = nullptr;  // device
  void* ws = nullptr;  // factorisation scratch
  std::size_t ws_bytes = 0;
  void* solve_ws = nullptr;  // solve_mixed: the fp32 copy of A and its vectors, kept for the next call
  std::size_t solve_ws_bytes = 0;
  void* pinned = nullptr;  // solve_mixed: page-locked host scalars (asynchronous copies back)
  std::size_t pinned_bytes = 0;
  /// Streams, handles and events of CholeskyAlgo::lookahead, created on first use.
  struct Lookahead {
    cudaStream_t crit = nullptr, bulk = nullptr;
    cublasHandle_t blas_crit = nullptr, blas_bulk = nullptr;
    cudaEvent_t start = nullptr, panel = nullptr, bulk_done = nullptr, crit_done = nullptr;
  } la;
  /// CholeskyAlgo::tiled: the task order (tile (i, j) per task, host copy) for tile_order_tt tile rows.
  std::vector<int2> tile_order;
  std::int64_t tile_order_tt = 0;
  double tile_order_slope = -1.0;

  explicit Impl(cudaStream_t s);
  ~Impl();
  void release() noexcept;
  Lookahead& lookahead_streams();
  void release_lookahead() noexcept;
  /// A workspace of at least `bytes` (contents undefined); grows after a memory check.
  void* workspace(std::size_t bytes, const std::string& what);
  /// The same for solve_mixed's buffers (a separate allocation: the factorisation inside the
  /// solve uses workspace()). Kept between calls: cudaMalloc + cudaFree of the fp32 copy of A
  /// cost 1.3 ms at n = 16384 and 4.5 ms at 32768 on an H200.
  void* solve_workspace(std::size_t bytes, const std::string& what);
  /// Page-locked host memory of at least `bytes` (contents undefined), kept between calls: a copy
  /// from the device into pageable memory returns only once it is done, so work queued behind it
  /// could not overlap the host's wait.
  void* host_pinned(std::size_t bytes);
  /// Resets the status words on the stream (info = 0, nonfinite_col = none).
  void reset_status();
  /// Copies the status back (synchronises the stream).
  detail::DeviceStatus read_status();
};

}  // namespace gemflow::linalg::cuda
