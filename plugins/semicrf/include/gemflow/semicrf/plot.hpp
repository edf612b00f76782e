#pragma once
// A headless plot of a segmented signal: our own small rasteriser (no drawing library).
//
// Layout (pixels, origin top-left): a frame of `margin` pixels; the signal panel above, the
// boundary-posterior panel (when given) below it, `posterior_fraction` of the inner height.
// Signal panel: each segment's span tinted with its label's colour (Tableau 10 palette, cycled;
// 30 % over white), a dark vertical line at each segment start after the first, each channel
// drawn in its own colour over [min, max] of all channels (plus 5 % headroom): every pixel
// column covers samples [⌊x·T/W⌋, ⌊(x+1)·T/W⌋) and shows their vertical range, joined to the
// next column, so T ≫ W loses no spike. Posterior panel: per column the largest boundary
// probability of its samples as a bar from the panel's bottom (0) to its top (1).
// Output: RGBA8, straight alpha (opaque), sRGB values (what PNG holds).
#include <cstddef>
#include <cstdint>
#include <vector>

#include "gemflow/semicrf/semicrf.hpp"

namespace gemflow::semicrf {

struct PlotInput {
  const double* signal = nullptr;      ///< T × D row-major
  std::size_t length = 0;              ///< T ≥ 1
  std::size_t dims = 0;                ///< D ≥ 1
  std::vector<Segment> segments;       ///< sorted, within [0, T)
  const double* boundaries = nullptr;  ///< T probabilities, or nullptr (no posterior panel)
  std::size_t width = 1200, height = 400;
  std::size_t margin = 8;
  double posterior_fraction = 0.25;
};

struct Raster {
  std::size_t width = 0, height = 0;
  std::vector<std::uint8_t> rgba;  ///< width·height·4
};

/// Throws std::invalid_argument for an empty signal, a size below 32×32 or above 16384×16384,
/// or non-finite samples.
[[nodiscard]] Raster plot_segmentation(const PlotInput& in);

}  // namespace gemflow::semicrf
