#pragma once
// RGBA raster image: rendered or loaded pictures (fractal flames, plots, textures).
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace gemflow {

/// A width × height RGBA image in one of two pixel formats.
///
/// Layout (both formats): row-major, top-left origin (row 0 is the top row, as in PNG and on
/// screen), four interleaved channels R, G, B, A per pixel; channel c of pixel (x, y) is at
/// `(y * width + x) * 4 + c` in `f32` or `u8`, whichever the format uses (the other is empty).
///
/// - `RGBA32F` (linear float): linear-light values with sRGB/Rec. 709 primaries, alpha in
///   [0, 1], colour **premultiplied** by alpha (so images add, scale and composite linearly: what
///   a renderer accumulates). Colour may exceed 1 (high dynamic range before tone mapping) but
///   is finite and not negative.
/// - `RGBA8` (8-bit): the sRGB transfer curve (IEC 61966-2-1), **straight** (not premultiplied)
///   alpha, 255 = opaque: what PNG and screens hold, written and shown without conversion.
///
/// A new image is transparent black. `validate()` checks the storage size and, for RGBA32F, the
/// value ranges above.
struct Image {
  enum class Format { RGBA32F, RGBA8 };

  std::size_t width = 0;
  std::size_t height = 0;
  Format format = Format::RGBA32F;
  std::vector<float> f32;        ///< RGBA32F: width·height·4 values; empty for RGBA8
  std::vector<std::uint8_t> u8;  ///< RGBA8: width·height·4 values; empty for RGBA32F

  Image() = default;
  /// A transparent black image. Throws OutOfMemory naming the size when width·height·4 values
  /// overflow or (from 256 MiB on) exceed the available memory.
  Image(std::size_t width, std::size_t height, Format format);

  [[nodiscard]] std::size_t pixels() const noexcept { return width * height; }
  /// Index of channel 0 of pixel (x, y) in f32 or u8.
  [[nodiscard]] std::size_t index(std::size_t x, std::size_t y) const noexcept { return (y * width + x) * 4; }

  /// nullopt when the invariants above hold, else the first broken one ("pixel (3, 0): alpha
  /// 1.5 is outside [0, 1]").
  [[nodiscard]] std::optional<std::string> validate() const;
};

}  // namespace gemflow
