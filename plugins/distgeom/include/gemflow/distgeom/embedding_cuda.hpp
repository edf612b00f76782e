#pragma once
// Metric matrix and Cholesky embedding on a CUDA device (plain C++ launcher header; the stream
// is the opaque distgeom::cuda::Stream of smoothing_cuda.hpp).
//
// What runs where. metric_matrix (O(n²)) and the pivoted Cholesky factorisation (O(n²·k), k =
// embed_cholesky_columns(): 3-4 for the embedding) run on the device; the n×k factor comes back
// and embed_from_pivoted_cholesky() (embedding.hpp: the k×k eigenproblem of LᵀL, X = L V_dim,
// centring) runs on the host, the same code as the CPU embed(). The eigen method (top eigenpairs
// of G) has no device path: on the CPU it is a Lanczos iteration (Spectra) of O(n²) per step, a
// dense device eigensolver (cuSOLVER syevdx) would be O(n³) and its eigenvector signs differ from
// Spectra's, so it would neither be faster for the sizes of a protein nor give the CPU's answer.
//
// Rounding. The metric-matrix kernels perform the CPU metric_matrix()'s operations in its order
// (row sums sequential over j, the total sequential over rows, no fused multiply-add), so on
// IEEE fp64 hosts without FMA contraction (x86-64 default flags) the result is bit-identical;
// in any case |ΔG| ≤ 4·n·ε·max(D²). The factorisation is linalg::cuda::GpuCholesky::
// factor_pivoted (restricted when pivot candidates are given): the steps of the CPU
// linalg::pivoted_cholesky(_restricted) with the same pivot rule and stopping rule, unfused
// arithmetic. Hence embed_cuda() = embed() (Cholesky) to rounding, usually bit for bit; the one
// exception is cholesky_rank ≥ n, where the CPU calls LAPACK dpstrf (blocked) and the results
// agree to rounding only.
//
// Layout. Host matrices are row-major n×n (element (i, j) at [i·n + j], Å or Å²) like
// embedding.hpp. Device matrices name their layout (MatrixLayout).
//
// Errors. std::invalid_argument for sizes (the messages of embed() / metric_matrix()),
// std::runtime_error for too few positive pivots (embed()'s message), CudaError (smoothing_cuda.hpp)
// for every failed CUDA call and for too little device memory (checked with cudaMemGetInfo
// before allocating; the message gives n, bytes needed and free). Non-finite distances give a
// CudaError from the factorisation naming the first row whose diagonal is NaN/Inf.
//
// Threads. A GpuEmbedder is bound to one device and one stream and is not thread-safe: use one
// per host thread (distgeom.embed_and_refine creates one per worker thread).
//
// Source: Crippen & Havel, "Distance Geometry and Molecular Conformation" (1988), ch. 6.
#include <cstddef>
#include <memory>
#include <span>

#include "gemflow/distgeom/embedding.hpp"
#include "gemflow/distgeom/smoothing_cuda.hpp"  // Stream, CudaError, device_count()

namespace gemflow::distgeom::cuda {

enum class MatrixLayout {
  row_major,  ///< element (i, j) at [i·n + j]
  col_major,  ///< element (i, j) at [i + j·n] (cuBLAS/LAPACK; what GpuCholesky reads)
};

/// Metric matrix G (n×n, Å²) of distances d (n×n, row-major, Å) on the device, the formula and
/// order of operations of metric_matrix() (embedding.hpp): G(i, j) computed from d[i·n + j],
/// stored in `layout`. `work`: n + 1 doubles of device scratch. Asynchronous on `stream`.
/// d, g, work: DEVICE pointers of the current device; g must not alias d. n = 0 is a no-op.
void metric_matrix_device(const double* d, std::size_t n, double* g, MatrixLayout layout, double* work, Stream stream);

/// Metric matrix and Cholesky embedding on one device (see the file comment).
class GpuEmbedder {
 public:
  /// Binds to CUDA device `device` (made current on the calling thread by every call) and to
  /// `stream` (which must belong to that device; nullptr = the legacy default stream). Device
  /// buffers grow on demand and are kept between calls.
  GpuEmbedder(int device, Stream stream);
  /// Same, on a stream of its own (created non-blocking on `device`, destroyed with the object):
  /// what a node or a worker thread uses.
  explicit GpuEmbedder(int device);
  ~GpuEmbedder();
  GpuEmbedder(const GpuEmbedder&) = delete;
  GpuEmbedder& operator=(const GpuEmbedder&) = delete;

  /// metric_matrix() (embedding.hpp) on the device: d, g host n×n row-major. Synchronises.
  void metric_matrix(std::span<const double> d, std::size_t n, std::span<double> g);

  /// embed() (embedding.hpp) with EmbedMethod::Cholesky of a host metric matrix g (n×n,
  /// row-major; only its lower triangle is read, like the CPU path). Same arguments, result and
  /// errors. Synchronises.
  [[nodiscard]] EmbedResult embed(std::span<const double> g, std::size_t n, std::size_t dim,
                                  std::size_t cholesky_rank = 0, std::span<const unsigned char> pivot_candidates = {});

  /// metric_matrix() then embed() (Cholesky) of host distances d (n×n, row-major, Å); G stays
  /// on the device. Equals embed(metric_matrix(d)) of the CPU to rounding. Synchronises.
  [[nodiscard]] EmbedResult embed_distances(std::span<const double> d, std::size_t n, std::size_t dim,
                                            std::size_t cholesky_rank = 0,
                                            std::span<const unsigned char> pivot_candidates = {});

  [[nodiscard]] int device() const noexcept;
  /// Device bytes held now (buffers and the factorisation workspace).
  [[nodiscard]] std::size_t device_bytes() const noexcept;

  struct Impl;

 private:
  std::unique_ptr<Impl> impl_;
};

}  // namespace gemflow::distgeom::cuda
