#pragma once
// Rendering a flame: the chaos game into a histogram, density estimation, log-density tone
// mapping and the spatial filter, on the CPU (this header) or a CUDA device (render_cuda.hpp).
//
// Stages (Draves & Reckase §4–6 and flam3 3.1's rect.c, whose constants we keep so that images
// match flam3-render at equal settings):
// 1. Chaos game. quality·4^zoom·width·height samples (flam3's nsamples; supersampling does not
//    change it), in walkers of `kWalkerIterations` iterations, each starting at a random point of
//    [-1, 1]² with colour ∈ [0, 1) and running `fuse` unplotted iterations first. A point that
//    becomes NaN or leaves |x|, |y| ≤ 1e10 is a bad point: it is counted, replaced by a random
//    point of [-1, 1]² and not plotted (flam3 retries up to 5 times; we never plot it).
//    The camera maps flame space to histogram cells: rotation by `rotate` degrees about
//    `center`, scale·2^zoom·supersample cells per unit, plus the gutter.
// 2. Histogram. Per cell, Σ palette colour·opacity' (RGB) and Σ opacity' (the density), kept as
//    unsigned 64-bit fixed point with 2⁻²⁴ units: adds are exact and order-free, so the image
//    does not depend on the number of threads and a cell cannot saturate before 2⁴⁰ (10¹²)
//    samples. Both renderers store each u64 as split words (detail/split_hist.hpp: a u32 low
//    word that every plot writes, a u32 high word counting its wraps): the same sums in half
//    the memory the plotting touches.
// 3. Log density. Per cell of density a and colour sum c: value = c/a · k1·ln(1 + a·k2), and
//    alpha value k1·ln(1 + a·k2), k1 = brightness·268/256·255, k2 = ss²/(area·quality·4^zoom),
//    area = width·height/ppu² (flam3's k1, k2 in our units).
// 4. Density estimation (estimator_radius > 0): each cell's value is spread with a gaussian
//    disc of radius h = max(min·ss+1, (max·ss+1)/N^curve) cells, N = the density summed over the
//    cell's ss×ss neighbourhood (flam3's de_thread, our own code).
// 5. Spatial filter: the flame's `filter_shape` (radius `filter` output pixels), flam3's
//    kernel grid (filters.c), from the supersampled accumulator to output pixels.
// 6. Tone map per output pixel: alpha = the density through gamma with a linear ramp below
//    gamma_threshold; colour scaled by vibrancy·alpha/density, highlight_power (≥ 0: saturated
//    colours lose saturation instead of hue), (1 − vibrancy)·per-channel gamma, background under
//    1 − alpha; 8 bits per channel as flam3-render writes (its truncation), alpha 255.
//    Options as flam3-render's: `earlyclip` tone-maps and clamps each accumulator cell before
//    the filter (then the filter output is written as it is); `transparency` leaves out the
//    background, writes alpha (the tone-mapped density, ×255) and RGB divided by alpha.
//
// Determinism: the same flame, options and seed give the same bytes on the same device,
// whatever the number of threads (integer histogram, fixed walker → random stream mapping,
// density estimation in a fixed order).
#include <atomic>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "gemflow/flame/flame.hpp"

namespace gemflow::flame {

/// Iterations per walker (flam3's sub_batch_size default is 10000).
inline constexpr std::uint64_t kWalkerIterations = 10240;

struct RenderOptions {
  double quality = -1;       ///< samples per output pixel; < 0: the flame's `quality`
  int supersample = -1;      ///< histogram cells per pixel side; < 1: the flame's
  double quality_scale = 1;  ///< multiplies the quality (flam3-render's qs)
  std::uint64_t seed = 1;
  int threads = 0;  ///< CPU threads; 0: oneTBB's default; more than the machine's cores: that many
  int passes = 8;   ///< progressive passes: the samples are split in this many
  /// flam3-render's `earlyclip`: tone map and clamp each supersampled cell before the spatial
  /// filter (sharper highlights; the default filters first, then tone-maps each pixel).
  bool earlyclip = false;
  /// flam3-render's `transparency`: alpha is the tone-mapped density instead of 255, the
  /// background is left out and RGB is straight (divided by alpha), as flam3's PNG holds it.
  bool transparency = false;
  /// After each pass (fraction done, pass, passes); CPU: also at each 1/64 of a pass. May be empty.
  std::function<void(double, int, int)> progress;
  /// Polled about every 10 ms of work; true stops the render (Cancelled thrown).
  std::function<bool()> cancelled;
  /// Called after each pass but the last with the image so far (tone-mapped). May be empty.
  std::function<void(const struct RenderedImage&)> preview;
};

struct RenderedImage {
  std::size_t width = 0, height = 0;
  std::vector<std::uint8_t> rgba;  ///< width·height·4, row 0 at the top, straight alpha
  std::uint64_t iterations = 0;    ///< plotted-or-not iterations after fuse
  std::uint64_t bad_points = 0;
  double seconds_iterate = 0, seconds_post = 0;
  /// CUDA path only (0 elsewhere): seconds_post's phases — density (log density and density
  /// estimation) and filter + tone map in device time, the copy of the image to the host in host
  /// time; the rest of seconds_post is launch and synchronisation overhead.
  double seconds_post_density = 0, seconds_post_filter_tone = 0, seconds_post_copy = 0;
};

/// Thrown when options.cancelled() returned true.
class RenderCancelled : public std::runtime_error {
 public:
  RenderCancelled() : std::runtime_error("render cancelled") {}
};

/// Renders on the CPU with oneTBB (fp64 points). Throws FlameError on a flame that cannot be
/// rendered (its size over kMaxRenderBytes, no xform with weight > 0), RenderCancelled.
[[nodiscard]] RenderedImage render_cpu(const Flame& flame, const RenderOptions& options);

/// Host bytes render_cpu allocates for `flame` with these options: one histogram per thread plus
/// their sum (32 B per cell each), the accumulator (32 B per cell) and the image. For a memory
/// check before rendering (throws FlameError as apply_overrides does).
[[nodiscard]] std::size_t cpu_render_bytes(const Flame& flame, const RenderOptions& options);

/// The flame after the render options' overrides (quality, supersample) are applied.
[[nodiscard]] Flame apply_overrides(const Flame& flame, const RenderOptions& options);

/// Image statistics used by the tests and the documentation: PSNR (dB) of 8-bit RGB and the
/// mean SSIM of the luma (8×8 windows) after box-downsampling both images by `factor`.
struct ImageComparison {
  double psnr = 0, ssim = 0;
};
[[nodiscard]] ImageComparison compare_images(const std::vector<std::uint8_t>& a, const std::vector<std::uint8_t>& b,
                                             std::size_t width, std::size_t height, int channels_a, int channels_b,
                                             std::size_t factor);

}  // namespace gemflow::flame
