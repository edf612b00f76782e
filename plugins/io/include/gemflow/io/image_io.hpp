#pragma once
// Reading and writing PNG images (libpng).
//
// Colour: PNG files hold sRGB-encoded samples with straight alpha (W3C PNG 3rd ed., §12; the
// sRGB chunk is written). gemflow::Image's RGBA32F holds linear, premultiplied light, its RGBA8
// holds sRGB with straight alpha (gemflow/types/image.hpp), so:
//  - writing RGBA8 at 8 bits copies the samples; every other case converts: linear → sRGB with
//    the IEC 61966-2-1 curve after dividing colour by alpha, values above 1 clip to white
//    (tone-map first: a renderer's RGBA32F may exceed 1);
//  - reading an 8-bit file gives RGBA8 (exact); a 16-bit file gives RGBA32F, linear and
//    premultiplied (decoded with the sRGB curve: 16 bits of precision are kept).
// Files are taken as sRGB whatever gAMA/iCCP chunks they carry (what browsers do for untagged
// images and what every writer of our formats means).
// Grey, palette and RGB files are expanded to RGBA (opaque alpha where the file has none).
//
// Sources: W3C "Portable Network Graphics (PNG) Specification (Third Edition)"; libpng
// manual (libpng-manual.txt); IEC 61966-2-1:1999 sRGB curve.
#include <cstdint>
#include <filesystem>
#include <string>

#include "gemflow/io/limits.hpp"
#include "gemflow/types/image.hpp"

namespace gemflow::io {

/// Largest width or height read or written (the PNG format allows 2³¹ − 1; libpng's own
/// default limit is 10⁶). Larger files are refused with the size named before any pixel memory
/// is taken.
inline constexpr std::uint32_t kMaxImageSide = 65536;

/// Bits per sample of a written PNG.
enum class PngDepth { Eight = 8, Sixteen = 16 };

/// Writes `image` to `file` as an RGBA PNG of `depth` bits per sample with an sRGB chunk
/// (conversion above). `name` names the file in errors (the real file may be a temporary).
/// Throws ParseError(name, 0, ...) when the image is empty or invalid (Image::validate: NaN,
/// negative or non-finite colour, alpha outside [0, 1]) or larger than kMaxImageSide. A file that
/// cannot be written (a full disk) throws std::runtime_error "cannot write NAME: <the system's
/// reason>": not a ParseError, since nothing is wrong with the image.
void write_png(const std::filesystem::path& file, const Image& image, PngDepth depth, const std::string& name);

/// Reads a PNG file (any colour type and bit depth). Throws ParseError naming the file when it
/// is not a PNG, is truncated or corrupt (libpng's message), is wider or taller than
/// kMaxImageSide, or its pixels would not fit in memory (Image's constructor: OutOfMemory-like
/// ParseError with the size). `cancel` is polled before decoding.
[[nodiscard]] Image read_png(const std::filesystem::path& file, const CancelCheck& cancel = {});

/// The same from memory (`name` names it in errors); what the fuzz harness calls.
[[nodiscard]] Image read_png_memory(const void* data, std::size_t size, const std::string& name);

/// IEC 61966-2-1 transfer functions on [0, 1] (clamped).
[[nodiscard]] double srgb_encode(double linear) noexcept;
[[nodiscard]] double srgb_decode(double encoded) noexcept;

}  // namespace gemflow::io
