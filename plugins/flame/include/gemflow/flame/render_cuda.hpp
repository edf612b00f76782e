#pragma once
// Rendering a flame on a CUDA device (plain C++ launcher header; algo/cuda/render_cuda.cu).
//
// Chaos game. Many independent walkers, fp32 points, one random stream per walker (PCG32,
// (seed, walker)), `fuse` unplotted iterations at the start of each walker, iterations launched
// in batches (about 50 ms each) so that cancel is honoured and progress reported.
// - basic: one walker per thread; every iteration each thread draws its xform from the
//   selection table (flam3's distribution, xaos rows included), so threads of a warp take
//   different branches of the variation switch.
// - divergence_free: per iteration, xform slots are assigned to threads in contiguous runs
//   proportional to the weights (a warp runs one xform), and the points are permuted between
//   threads by a random bijection (x ↦ (a·x + b) mod N, a odd, N a power of two) each
//   iteration, so that a point's next xform is random with the flame's weights; without xaos
//   only (a flame with xaos falls back to basic, and the log says so).
//   Schied, Hanika, Dammertz & Lensch, "Divergence-free parallel chaos game for fractal flame
//   rendering"; the issue's description.
// - auto: divergence_free from kAutoDivergenceFreeXforms xforms on (no xaos), else basic. The
//   threshold is a first guess until flame_bench_render measures the crossover on a device.
// Histogram: 4 channels of u64 fixed point per cell (2⁻²⁴ units), added by atomics: exact and
// order-free, so the same seed gives the same bytes on the same device, and no cell saturates.
// Stored by default as plain u64 cells, one atomic per lane and channel. Two other layouts give
// the same sums, so the same image bit for bit: split words (detail/split_hist.hpp: a u32 low
// word per channel, 16 B per cell, 33 MB at 1080p, within an H100's 50 MB L2, and a u32 high word
// in another array, incremented when atomicAdd's returned old value shows that the low word
// wrapped) with warp-aggregated adds (lanes plotting into one cell add first, one lane makes the
// atomics), and u64 cells with the aggregation alone. Measured on an H100 (docs/performance.md,
// "Fractal flames"), both are slower on typical flames (0.51–0.79× of plain u64: the
// labeled_partition and the returned-value atomics cost more than the L2 fit gives) and much
// faster only where the samples pile onto a few cells (a point attractor: 27×); so they are
// options, not the default. A flame whose palette · opacity could exceed 4 (a warp's sum could
// pass 2³²) keeps plain u64 cells whatever is asked.
// Post-processing on the device: log density, density estimation, spatial filter and tone map
// (fp64), the same formulas as the CPU path (detail/core.hpp). Density estimation gathers: a
// first pass gives each cell its log-density value and kernel index, a second sums, for each
// cell, its neighbours' kernels at its offset from them (16×16 cells per block, their
// neighbourhood of the largest radius in shared memory: (16 + 2R)² × 36 B, 42 KB for the default
// estimator at ss 1, 97 KB at ss 2) in a fixed order, so it is deterministic without atomics.
// detail/de_gather.hpp holds the kernels' per-thread code, which a CPU test runs block by block
// against a plain scatter. Where that tile exceeds the device's shared memory per block, it
// scatters instead (u64
// fixed-point atomics, 2⁻³² units, also deterministic). The image comes back through
// page-locked memory.
//
// Errors: CudaError (call, error string, file:line); FlameError for a flame that cannot be
// rendered; RenderCancelled. Device memory is checked (cudaMemGetInfo) before allocating.
#include <cstdint>
#include <string>
#include <vector>

#include "gemflow/cuda/error.hpp"
#include "gemflow/flame/render.hpp"

namespace gemflow::flame::cuda {

using CudaError = ::gemflow::cuda::CudaError;

enum class Variant { Basic, DivergenceFree, Auto };
inline constexpr std::size_t kAutoDivergenceFreeXforms = 5;

/// U64: plain u64 atomics per lane (the default, fastest on typical flames); Split32: split words
/// with warp-aggregated adds; U64Aggregated: u64 cells with the warp-aggregated adds (for flames
/// whose samples concentrate on few cells). Same image in every layout.
enum class Histogram { Split32, U64, U64Aggregated };

struct CudaRenderOptions {
  Variant variant = Variant::Auto;
  int device = 0;
  std::uint64_t walkers = 0;  ///< 0: 64 per SM × 1024
  /// Device time aimed at between host synchronisations (where cancel is checked), seconds:
  /// the number of launches between them adapts to it. It never changes the image (launches
  /// cover a fixed number of steps), only the cancel latency.
  double sync_seconds = 0.05;
  /// Test hook: density estimation by the atomic scatter even where the shared-memory gather
  /// fits (the gather is the default; the scatter remains for very large estimator radii).
  bool de_scatter = false;
  /// U64 (the default), Split32 or U64Aggregated (U64 where the flame does not allow aggregation,
  /// see above). Same image in every layout.
  Histogram histogram = Histogram::U64;
  /// Test hooks: the final histogram as u64 values (cells · 4, row-major, RGBA), and the layout
  /// actually used.
  std::vector<std::uint64_t>* histogram_out = nullptr;
  Histogram* histogram_used = nullptr;
};

/// The variant actually used for `flame`: divergence_free needs a flame without xaos.
[[nodiscard]] inline Variant resolve_variant(const Flame& flame, Variant requested) {
  if (flame.has_chaos) return Variant::Basic;
  if (requested == Variant::Auto)
    return flame.xforms.size() >= kAutoDivergenceFreeXforms ? Variant::DivergenceFree : Variant::Basic;
  return requested;
}
[[nodiscard]] inline const char* variant_name(Variant v) {
  return v == Variant::Basic ? "basic" : v == Variant::DivergenceFree ? "divergence_free" : "auto";
}

/// Renders on device `c.device`. `used` receives the variant run.
[[nodiscard]] RenderedImage render_cuda(const Flame& flame, const RenderOptions& options, const CudaRenderOptions& c,
                                        Variant* used = nullptr);

/// Test hook: eval_variation in fp32 on the device, one (variation, point) per entry: ids[i],
/// points_and_weights = x0 y0 x1 y1 ... then the n weights, params = n × kNumVarParams, coefs =
/// n × 6, seeds[i] the random stream (Pcg32(seeds[i], 3), as the CPU tests use). Returns px, py.
[[nodiscard]] std::vector<float> eval_variations_device(const std::vector<int>& ids,
                                                        const std::vector<float>& points_and_weights,
                                                        const std::vector<float>& params,
                                                        const std::vector<float>& coefs,
                                                        const std::vector<unsigned long long>& seeds);

}  // namespace gemflow::flame::cuda
