#pragma once
// The semi-CRF on a CUDA device (plain C++ launcher header; kernels in algo/cuda/).
//
// The same model, contracts and results as the CPU reference (gemflow/semicrf/semicrf.hpp),
// with these differences:
//  - Transitions must not depend on the duration (C·C values): the GPU runs the factored
//    recurrence only (std::invalid_argument otherwise).
//  - Precision: the prefix sums S, the per-step shifts and log Z are fp64; α, β, in(·), the
//    exponentials and the per-step reductions are fp32, each value relative to its step's
//    fp64 shift (the max over labels), so their magnitude stays O(1) whatever T. Marginals and
//    gradients accumulate in fp64. Tested against the fp64 reference: |Δ log Z| ≤ 1e-5·|log Z|.
//  - Streaming as on the CPU: a K-slot ring of in(·) per sequence in global memory, checkpoints
//    every Δ ≈ √(T·K) steps; the backward pass recomputes α per block and keeps a 2K-slot β ring.
//  - Launch: one thread block per sequence of the batch (any lengths, no padding: each block
//    reads its own offset), the labels across the block's threads; a warp per label with lanes
//    over durations and previous labels when K > 8 or C ≥ 16, else a thread per label; Viterbi
//    with C ≤ 32 and K ≤ 256 in that mode keeps each lane's duration biases in registers.
//  - Several blocks per sequence: all three passes with K = 1, C ≤ 32 and fewer sequences than
//    SMs, where the model is an HMM and each sequence's steps split into chunks (32..256 steps)
//    whose C × C transfer matrices (log-sum-exp, or max-plus for Viterbi) are computed in
//    parallel and applied in order, giving α and β at the chunks' ends; then every chunk's
//    marginals and gradient sums, or its backpointers and traceback, in parallel
//    (algo/cuda/scan_plan.hpp; Hassan, Särkkä & García-Fernández, IEEE Trans. Signal Process. 69,
//    2021). For K > 1 the state between chunks is the K·C ring, and an exact chunk transfer costs
//    K·C times the sequential work: K > 1 runs one block per sequence (a batch of one sequence
//    uses one SM). The chunked results agree with the sequential kernels' within the tolerances
//    above, not bit for bit (a Viterbi tie between equal-scoring paths may resolve differently).
//  - Viterbi keeps one 32-bit backpointer per (t, c): the best duration k < 2²¹ and the label of
//    the segment before it (K ≥ 2²¹ is refused), so that the traceback follows one load per
//    segment; the segments' scores are computed afterwards, in parallel.
//  - Determinism: no atomics; every reduction has a fixed order, so reruns are bit-identical on
//    one device and build.
// Errors: CudaError (file, line, call, CUDA message); device memory checked with cudaMemGetInfo
// before allocating (CudaError naming the bytes needed and free).
#include <cstddef>
#include <memory>
#include <vector>

#include "gemflow/cuda/error.hpp"
#include "gemflow/cuda/stream.hpp"
#include "gemflow/semicrf/semicrf.hpp"

namespace gemflow::semicrf::cuda {

using CudaError = ::gemflow::cuda::CudaError;
using Stream = ::gemflow::cuda::Stream;

/// Usable CUDA devices (0 without a driver or device); never throws.
[[nodiscard]] int device_count() noexcept;

/// The batch and model on the device, for repeated runs (benchmarks) or one call (nodes). Every
/// method runs on `stream` and synchronises it before returning results to the host.
class Session {
 public:
  Session(const Model& m, const Batch& x, const Options& o, Stream stream);
  ~Session();
  Session(const Session&) = delete;
  Session& operator=(const Session&) = delete;

  /// Forward pass: log Z of every sequence (device-resident until log_z()).
  void forward();
  /// Forward and backward: marginals and gradients (device-resident until posteriors()).
  void forward_backward();
  /// Viterbi with backpointers on the device (until paths()).
  void viterbi();
  /// Waits for the stream.
  void synchronize();

  [[nodiscard]] std::vector<double> log_z();
  [[nodiscard]] Posteriors posteriors();
  [[nodiscard]] std::vector<Path> paths();
  /// Device bytes this session holds.
  [[nodiscard]] std::size_t device_bytes() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

/// One-call forms (upload, run, download).
[[nodiscard]] std::vector<double> log_partition(const Model& m, const Batch& x, const Options& o, Stream stream);
[[nodiscard]] Posteriors posteriors(const Model& m, const Batch& x, const Options& o, Stream stream);
[[nodiscard]] std::vector<Path> viterbi(const Model& m, const Batch& x, const Options& o, Stream stream);

}  // namespace gemflow::semicrf::cuda
