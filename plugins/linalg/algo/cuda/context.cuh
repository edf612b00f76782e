#pragma once
// GpuCholesky::Impl: handles, stream, device status words and the growing workspace.
#include <cublas_v2.h>
#include <cuda_runtime.h>
#include <cusolverDn.h>

#include <climits>
#include <cstddef>  // std::byte
#include <cstdint>
#include <string>
#include <vector>

#include <gemflow/cuda/buffer.hpp>
#include <gemflow/cuda/check.hpp>
#include <gemflow/cuda/cublas.hpp>
#include <gemflow/cuda/cusolver.hpp>
#include <gemflow/linalg/cholesky_cuda.hpp>

namespace gemflow::linalg::cuda::detail {

/// Device-side status of one factorisation (written by kernels, read back once at the end).
struct DeviceStatus {
  long long info;  ///< first failing leading minor (1-based), 0 = none yet
  long long
      nonfinite_col;  ///< the scans: 1 + first column of A or of L's completed part holding a NaN/Inf, LLONG_MAX = none
  /// our panel and tiled kernels: 1 + first column they stored a NaN/Inf into, LLONG_MAX = none
  /// (the undefined region after a failed pivot included: status_of counts columns < info − 1)
  long long stored_nonfinite_col;
  int local_info;             ///< devInfo of the last cuSOLVER call
  unsigned int panel_loaded;  ///< potrf_panel_kernel: CTAs that have read the diagonal block (reset by CTA 0)
  int failed_nonfinite;       ///< the failing pivot that set info was NaN or ±Inf (report_failure)
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
  ::gemflow::cuda::DeviceBuffer<detail::DeviceStatus> status;  // one
  ::gemflow::cuda::DeviceBuffer<std::byte> ws;                 // factorisation scratch
  ::gemflow::cuda::DeviceBuffer<std::byte>
      solve_ws;  // solve_mixed: the fp32 copy of A and its vectors, kept for the next call
  ::gemflow::cuda::PinnedBuffer<std::byte> pinned;  // solve_mixed: page-locked host scalars (asynchronous copies back)
  /// Streams, handles and events of CholeskyAlgo::lookahead, created on first use.
  struct Lookahead {
    cudaStream_t crit = nullptr, bulk = nullptr, bulk2 = nullptr, next = nullptr, ahead = nullptr;
    cublasHandle_t blas_crit = nullptr, blas_bulk = nullptr, blas_bulk2 = nullptr, blas_next = nullptr,
                   blas_ahead = nullptr;
    cudaEvent_t start = nullptr, panel = nullptr, bulk_done = nullptr, crit_done = nullptr, fork = nullptr,
                join = nullptr, next_done = nullptr, ahead_done = nullptr;
    static constexpr int kGroups = 8;  ///< most column groups of a panel (lookahead depth 2)
    cudaEvent_t group[kGroups] = {};
  } la;
  /// CholeskyAlgo::tiled: the task order (tile (i, j) per task, host copy) for tile_order_tt tile rows.
  std::vector<int2> tile_order;
  std::int64_t tile_order_tt = 0;
  double tile_order_slope = -1.0;
  /// Its device copy, uploaded when the order changes (a copy from pageable memory on every call
  /// sat before the kernel on the stream).
  ::gemflow::cuda::DeviceBuffer<std::byte> tile_order_dev;
  bool tile_order_dev_current = false;
  /// Benchmarks' instruments and experiments (GpuCholesky::set_probe); nullptr in production.
  const CholeskyProbe* probe = nullptr;
  /// The default probe: the library's own choices.
  [[nodiscard]] const CholeskyProbe& knobs() const noexcept {
    static const CholeskyProbe defaults;
    return probe ? *probe : defaults;
  }
  /// The probe's on_step after a step enqueued on `s` (nothing without a probe).
  void step_done(cudaStream_t s, const char* what, std::int64_t column) const {
    if (probe && probe->on_step) probe->on_step(s, what, column);
  }

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
  /// The tiled task order (tiled_task_order(tt, slope)) on the device, enqueued on `stream`.
  const int2* tile_order_on_device(std::int64_t tt, double slope);
  /// Resets the status words on the stream (info = 0, no NaN/Inf seen).
  void reset_status();
  /// Copies the status back (synchronises the stream).
  detail::DeviceStatus read_status();
};

}  // namespace gemflow::linalg::cuda
