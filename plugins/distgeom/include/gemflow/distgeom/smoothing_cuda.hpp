#pragma once
// Triangle-inequality bound smoothing on a CUDA device (plain C++ launcher header).
//
// Problem. n atoms, lower and upper distance bounds L, U (Å): two full, symmetric n×n
// row-major arrays, element (i, j) at [i * n + j], zero diagonal, 0 ≤ L ≤ U. Smoothing
// replaces them by the tight triangle closure (Dress & Havel, "Shortest-path problems and
// molecule conformation", Discrete Appl. Math. 19, 1988; Crippen & Havel, "Distance Geometry
// and Molecular Conformation", 1988, ch. 5):
//   U*(i,j) = shortest path i→j with edge lengths U                          (all paths)
//   L*(i,j) = max over pairs (a,b) of  L(a,b) − U*(i,a) − U*(b,j)            (a = b allowed)
// i.e. shortest paths on the doubled graph V ∪ V′ (edges i→j and i′→j′ of length U(i,j),
// crossing edges i→j′ of length −L(i,j), d(i,j′) = −L*(i,j)). The doubled graph has no
// negative cycle, so L*, U* are well defined even when the bounds are inconsistent
// (L*(i,j) > U*(i,j) for some pair); the diagonal L*(i,i) becomes > 0 exactly then.
//
// Algorithm. Floyd–Warshall on the doubled graph, pivots k and k′ together. One pivot step:
//   L′(k,x) = max(L(k,x), L(k,k) − U(k,x))                 (pivot k acting on row/column k)
//   U(i,j) ← min(U(i,j), U(i,k) + U(k,j))
//   L(i,j) ← max(L(i,j), L′(i,k) − U(k,j), L′(k,j) − U(i,k))
// (L′ = L while the bounds are consistent, since then L(k,k) = 0.) The single-matrix path is
// the blocked closure of Venkataraman, Sahni & Mukhopadhyaya (J. Exp. Algorithmics 8, 2003):
// per block of B pivots, (1) the diagonal B×B tile is closed per pivot in registers, (2) the
// pivot row of tiles is multiplied by that closure, (3) every other tile of the upper
// triangle gets C ⊕= A ⊗ B from the pivot row in shared memory and 8×8 (or 4×4) register
// tiles; symmetry halves phase 3, the lower triangle is mirrored at the end. B = 128 (fp32)
// or 64 (fp64 and small fp32 inputs). The batched path runs the pivot steps above per matrix,
// in pivot order, one thread block per matrix.
//
// Rounding. Same operations as the CPU reference (add, min, max) but, in the blocked path,
// grouped differently: each result is a path sum of at most 2n terms, so fp64 agrees with
// an fp64 per-pivot reference within 6·n·2⁻⁵³·max(U) and fp32 within 6·n·2⁻²⁴·max(U) (plus
// input rounding to fp32). Inputs that are multiples of 2⁻⁸ below 2¹⁴ give bit-identical
// results on every path and precision (all sums exact). The batched path performs the pivot
// steps of smooth_bounds_reference() in its order: on consistent bounds its fp64 results are
// bit-identical to the reference. (max(U) = the largest finite input bound.)
// Results are deterministic (no atomics in the closure).
//
// Errors. Every CUDA call is checked: CudaError carries the call text, the CUDA error string
// and file:line. Input is validated on the device before any smoothing kernel is launched:
// InvalidBounds names the first offending pair in row-major order and the reason. Device
// memory is checked (cudaMemGetInfo) before allocating: CudaError says n, bytes needed and
// bytes free.
//
// Streams. Every function takes the stream explicitly (`Stream` is cudaStream_t; nullptr is
// the legacy default stream). Device-pointer functions are stream-ordered and asynchronous
// except where a result is returned to the host (validation, consistency check, chunked
// cancellation points).
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <stdexcept>
#include <string>
#include <vector>

#include "gemflow/cuda/error.hpp"
#include "gemflow/cuda/stream.hpp"
#include "gemflow/distgeom/smoothing.hpp"

namespace gemflow::distgeom::cuda {

using Stream = ::gemflow::cuda::Stream;  ///< cudaStream_t

enum class Precision { fp32, fp64 };

/// A CUDA runtime failure (or too little device memory): the SDK's one CUDA error. For a failed
/// call what() is "file:line: call: error" (gemflow/cuda/error.hpp).
using CudaError = ::gemflow::cuda::CudaError;

/// Bounds rejected by validation before any smoothing kernel ran. `defect` is what the CPU
/// check_bounds() reports for the same input (same pair, kind and values; its message() gives
/// the CPU path's text); `matrix` is the index in a batch (0 for one matrix).
class InvalidBounds : public std::invalid_argument {
 public:
  InvalidBounds(const std::string& message, std::size_t matrix, const BoundsDefect& defect)
      : std::invalid_argument(message), matrix(matrix), defect(defect) {}
  std::size_t matrix;
  BoundsDefect defect;
};

/// Outcome of a consistency check after smoothing (see check_consistency_device).
struct ConsistencyReport {
  bool consistent = true;
  /// First pair i < j in row-major order with L*(i,j) > U*(i,j) + tolerance (when !consistent).
  std::size_t first_i = 0, first_j = 0;
  double first_lower = 0.0, first_upper = 0.0;  ///< L*, U* there (Å)
  std::size_t inconsistent_pairs = 0;           ///< number of such pairs i < j
};

/// Cancellation and progress for long closures. The closure is enqueued in chunks of pivot
/// blocks (about `chunk_ms` of device work each, at most two chunks in flight); between
/// chunks `cancelled()` is polled and `progress(fraction)` called, on the calling thread.
struct Control {
  std::function<bool()> cancelled;
  std::function<void(double)> progress;
  double chunk_ms = 25.0;
  /// Pivot block size B of the blocked path: 0 chooses (fp32: 128 from n ≥ 3072, else 64;
  /// fp64: 64). 64 and 128 (fp32 only) may be forced, e.g. by tests.
  int block = 0;
};

/// Number of usable CUDA devices; 0 when there is no driver or device. Never throws.
[[nodiscard]] int device_count() noexcept;

/// Device bytes the host-memory entry points allocate for `batch` matrices of n atoms.
[[nodiscard]] std::size_t device_bytes_needed(std::size_t n, std::size_t batch, Precision precision) noexcept;

/// Throws CudaError "triangle smoothing (n = …) needs B bytes of device memory, cuda:D has F
/// free of T" when `bytes` exceeds the free memory of the current device (cudaMemGetInfo).
void require_device_memory(std::size_t n, std::size_t bytes);

// ---- device memory, one matrix (lower, upper: n*n elements on the current device) ------------

/// The checks of check_bounds() (smoothing.hpp) on the device, same order and result: first
/// NaN / negative / infinite lower bound in row-major order, then nonzero diagonal, asymmetry,
/// L > U + tolerance. +∞ upper bounds are allowed. Throws InvalidBounds; synchronizes `stream`.
void validate_bounds_device(const float* lower, const float* upper, std::size_t n, double tolerance, Stream stream);
void validate_bounds_device(const double* lower, const double* upper, std::size_t n, double tolerance, Stream stream);

/// Tight closure in place (blocked Floyd–Warshall, see the file comment). Does not validate:
/// call validate_bounds_device first. Returns false when control.cancelled() stopped it
/// (bounds then hold a partial closure). n = 0 is a no-op.
bool smooth_bounds_device(float* lower, float* upper, std::size_t n, Stream stream, const Control& control = {});
bool smooth_bounds_device(double* lower, double* upper, std::size_t n, Stream stream, const Control& control = {});

/// First pair i < j (row-major) with L > U + tolerance (compared in fp64), and how many: the
/// same pair and count as SmoothingReport of the CPU path. Synchronizes `stream`.
[[nodiscard]] ConsistencyReport check_consistency_device(const float* lower, const float* upper, std::size_t n,
                                                         double tolerance, Stream stream);
[[nodiscard]] ConsistencyReport check_consistency_device(const double* lower, const double* upper, std::size_t n,
                                                         double tolerance, Stream stream);

// ---- device memory, a batch of `batch` matrices of equal n ≤ 512, stored one after another --

/// Largest n accepted by the batched functions.
inline constexpr std::size_t max_batched_n = 512;

/// How a batch is closed.
///  - PerBlock: one thread block per matrix, all of its pivots in one launch: the matrix in
///    registers (n ≤ 64; fp32 n ≤ 128), else in shared memory when both fit (fp32 n ≤ ~165),
///    else streamed through global memory (slow: every pivot rereads the matrix).
///  - Blocked: the blocked closure of the single-matrix path (64-wide pivot blocks: diagonal
///    tile, pivot row, min-plus tile products; Katz & Kider 2008, Venkataraman et al. 2003)
///    with the batch as a grid dimension: ⌈n/64⌉ pivot blocks × 3 launches for the whole batch,
///    register-tiled products, the matrices in global memory (L2 between launches).
///  - Auto: batched_method_for(n, precision).
enum class BatchedMethod { Auto, PerBlock, Blocked };

/// What Auto picks: PerBlock for fp32 n ≤ 64 and fp64 n ≤ 80, Blocked above (the crossovers
/// measured on an H100: docs/performance.md).
[[nodiscard]] BatchedMethod batched_method_for(std::size_t n, Precision precision) noexcept;
[[nodiscard]] const char* to_string(BatchedMethod m) noexcept;

/// Validation of every matrix (InvalidBounds names the first bad matrix and element).
void validate_bounds_batched_device(const float* lower, const float* upper, std::size_t n, std::size_t batch,
                                    double tolerance, Stream stream);
void validate_bounds_batched_device(const double* lower, const double* upper, std::size_t n, std::size_t batch,
                                    double tolerance, Stream stream);

/// Closure of every matrix (see BatchedMethod). Asynchronous. Throws std::invalid_argument when
/// n > max_batched_n.
void smooth_bounds_batched_device(float* lower, float* upper, std::size_t n, std::size_t batch, Stream stream,
                                  BatchedMethod method = BatchedMethod::Auto);
void smooth_bounds_batched_device(double* lower, double* upper, std::size_t n, std::size_t batch, Stream stream,
                                  BatchedMethod method = BatchedMethod::Auto);

/// One report per matrix. Synchronizes `stream`.
[[nodiscard]] std::vector<ConsistencyReport> check_consistency_batched_device(const float* lower, const float* upper,
                                                                              std::size_t n, std::size_t batch,
                                                                              double tolerance, Stream stream);
[[nodiscard]] std::vector<ConsistencyReport> check_consistency_batched_device(const double* lower, const double* upper,
                                                                              std::size_t n, std::size_t batch,
                                                                              double tolerance, Stream stream);

// ---- host memory (what a node calls) --------------------------------------------------------

struct HostOptions {
  int device = 0;                                 ///< CUDA ordinal
  Precision precision = Precision::fp64;          ///< arithmetic on the device
  double tolerance = kDefaultSmoothingTolerance;  ///< Å, validation and consistency check
  Control control;
};

/// Result of the host-memory entry points.
struct SmoothingResult {
  bool cancelled = false;  ///< bounds left unchanged when true
  ConsistencyReport consistency;
};

/// Copies lower/upper (n*n each, host, double) to device `options.device`, validates,
/// smooths, checks consistency and copies the closure back (in place), all on `stream`
/// (which must belong to that device; nullptr = default stream). fp32 converts on the device.
/// Throws std::invalid_argument (sizes), InvalidBounds, CudaError (incl. too little memory).
SmoothingResult smooth_bounds_cuda(std::span<double> lower, std::span<double> upper, std::size_t n, Stream stream,
                                   const HostOptions& options);

/// Smoothed bounds kept in device memory: lower and upper, n×n fp64 row-major each (Å), on one
/// device, owned (freed by the destructor, with that device made current). Complete when handed
/// out (the producing stream was synchronised): read it on any stream of its device. Const
/// members are thread-safe. Move-only; default-constructed: empty (n() = 0).
class DeviceBounds {
 public:
  DeviceBounds();
  ~DeviceBounds();
  DeviceBounds(DeviceBounds&&) noexcept;
  DeviceBounds& operator=(DeviceBounds&&) noexcept;
  DeviceBounds(const DeviceBounds&) = delete;
  DeviceBounds& operator=(const DeviceBounds&) = delete;

  [[nodiscard]] int device() const noexcept;
  [[nodiscard]] std::size_t n() const noexcept;
  /// Device pointers (n*n elements each); nullptr when empty.
  [[nodiscard]] const double* lower() const noexcept;
  [[nodiscard]] const double* upper() const noexcept;
  /// Copies both arrays to host memory (n*n elements each): synchronous (cudaMemcpy with the
  /// device made current). Throws std::invalid_argument (sizes), CudaError.
  void download(std::span<double> lower, std::span<double> upper) const;

  struct Impl;
  explicit DeviceBounds(std::unique_ptr<Impl> impl);

 private:
  std::unique_ptr<Impl> impl_;
};

/// What smooth_bounds_cuda_resident() gives.
struct ResidentSmoothing {
  SmoothingResult result;         ///< cancelled, consistency: as smooth_bounds_cuda()
  std::size_t changed_pairs = 0;  ///< pairs i < j whose lower or upper bound the closure changed
  DeviceBounds bounds;            ///< the closure in fp64 (empty when cancelled)
  std::size_t upload_bytes = 0;   ///< host → device bytes copied (the input)
  double upload_seconds = 0.0;    ///< and the time they took
};

/// smooth_bounds_cuda() with the closure left on the device (for a device-resident value):
/// the same validation, the same kernels on the same data, hence the same closure bit for bit
/// and the same consistency report; the changed pairs are counted on the device. `lower`/`upper`
/// (host, n*n each) are only read. Synchronises `stream` before it returns.
/// Device memory: device_bytes_needed(n, 1, precision) + 2·n²·8 bytes (the input is kept in fp64
/// to count the changed pairs; for fp32 those arrays then receive the fp64 closure).
ResidentSmoothing smooth_bounds_cuda_resident(std::span<const double> lower, std::span<const double> upper,
                                              std::size_t n, Stream stream, const HostOptions& options);

/// Same for `batch` matrices of n ≤ max_batched_n atoms stored one after another.
/// Cancellation is polled between launches of at most ~chunk_ms of work.
std::vector<ConsistencyReport> smooth_bounds_batched_cuda(std::span<double> lower, std::span<double> upper,
                                                          std::size_t n, std::size_t batch, Stream stream,
                                                          const HostOptions& options, bool* cancelled = nullptr);

}  // namespace gemflow::distgeom::cuda
