#pragma once
// Fractal flames: the flam3 genome (what a <flame> element of a .flam3/.flame file holds) and
// the reader of flam3 XML.
//
// Model. A flame is a set of xforms F_i with weights w_i. The chaos game iterates a point
// (x, y) and a colour coordinate c ∈ [0, 1]: choose xform i with probability w_i / Σw (or, with
// xaos, w_i·chaos[prev][i] / Σ_j w_j·chaos[prev][j]), then
//   (tx, ty) = A_i(x, y)            A_i: the pre affine, coefs "a b c d e f":
//                                   tx = a·x + c·y + e,  ty = b·x + d·y + f   (flam3's c[3][2])
//   (x', y') = P_i( Σ_v w_iv · V_v(tx, ty) )   V_v: variations (variations.hpp), P_i: the post
//                                   affine ("post", identity when absent), same layout as A_i
//   c' = s_i·c_i + (1 − s_i)·c      s_i = color_speed (or (1 − symmetry)/2), c_i = color
// then plots (the final xform applied to a copy of the point when there is one) into the
// histogram with the palette colour at c' and weight opacity' = 10^(−log2(1/opacity)) (flam3's
// adjust_percentage). Draves & Reckase, "The Fractal Flame Algorithm" (2003, rev. 2008), §2–4;
// flam3 3.1 (flam3.c, variations.c, parser.c) for the attribute semantics.
//
// Units. Flame space: the plane of the iterated points (dimensionless). Camera: `center` (flame
// space), `scale` = pixels per flame unit at zoom 0, `zoom` (log2: scale·2^zoom, and the sample
// density·4^zoom), `rotate` (degrees, about the centre). `size` in output pixels. `quality` =
// samples per output pixel (flam3's sample_density). Colours: palette entries RGB in [0, 1]
// (the file's 0–255 / 00–FF divided by 255), alpha in [0, 1], premultiplied as flam3 does for
// `rgba` colours. `background` RGB in [0, 1]. `gamma`, `brightness`, `vibrancy`,
// `highlight_power`, `gamma_threshold` as in flam3 (render.hpp says where each one acts).
#include <array>
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "gemflow/flame/variations.hpp"

namespace gemflow::flame {

/// A flame file or flame that cannot be used. what() names the file, line, flame and attribute:
/// "f.flame:12: flame 'spiral' (#2): attribute 'gamma' = 'abc' is not a number".
class FlameError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// A 2×3 affine map in flam3's coefficient order (a b c d e f): x' = a·x + c·y + e,
/// y' = b·x + d·y + f.
using Affine = std::array<double, 6>;
inline constexpr Affine kIdentity{1, 0, 0, 1, 0, 0};

struct Xform {
  double weight = 0;                         ///< selection weight ("weight"; flam3's density), ≥ 0
  double color = 0;                          ///< colour coordinate c_i ∈ [0, 1]
  double color_speed = 0.5;                  ///< s_i ("color_speed", or (1 − symmetry)/2)
  double opacity = 1;                        ///< [0, 1]; 0: the xform's points are not plotted
  Affine coefs = kIdentity;                  ///< pre affine
  Affine post = kIdentity;                   ///< post affine
  std::array<double, kNumVariations> var{};  ///< variation weights, flam3's index order
  std::array<double, kNumVarParams> param = default_var_params();  ///< variation parameters
  std::vector<double> chaos;  ///< xaos row: multiplier of each xform's weight after this one (empty: all 1)
  std::size_t line = 0;       ///< line of the <xform> element (1-based; 0 when built in code)
  [[nodiscard]] bool has_post() const { return post != kIdentity; }
  bool operator==(const Xform&) const = default;
};

/// 256 palette entries, RGBA in [0, 1] (RGB premultiplied by A, as flam3 does).
using Palette = std::array<std::array<double, 4>, 256>;

enum class PaletteMode { Linear, Step };
/// Spatial filter kernels: flam3's list (filters.c); support in filter radii.
enum class FilterShape {
  Gaussian,
  Hermite,
  Box,
  Triangle,
  Bell,
  BSpline,
  Mitchell,
  Blackman,
  Catrom,
  Hanning,
  Hamming,
  Lanczos3,
  Lanczos2,
  Quadratic
};
[[nodiscard]] std::string_view filter_shape_name(FilterShape s);

struct Flame {
  std::string name;                       ///< "name" attribute ("" when absent)
  std::size_t index = 0;                  ///< position in its file (0-based, document order)
  std::size_t line = 0;                   ///< line of the <flame> element
  std::string source;                     ///< the file it came from (for messages)
  std::size_t width = 100, height = 100;  ///< "size", output pixels
  std::array<double, 2> center{0, 0};
  double scale = 50;  ///< pixels per unit at zoom 0 ("scale"; flam3's pixels_per_unit)
  double rotate = 0;  ///< degrees
  double zoom = 0;
  int supersample = 1;  ///< "supersample" or "oversample": histogram cells per pixel side
  double quality = 1;   ///< samples per output pixel ("quality")
  double filter = 0.5;  ///< spatial filter radius in output pixels ("filter")
  FilterShape filter_shape = FilterShape::Gaussian;
  double brightness = 4, gamma = 4, gamma_threshold = 0.01, vibrancy = 1;
  double highlight_power = -1;  ///< < 0: flam3's older clipping; ≥ 0: hue-preserving highlights
  std::array<double, 3> background{0, 0, 0};
  double estimator_radius = 9, estimator_minimum = 0, estimator_curve = 0.4;  ///< density estimation
  int fuse = 15;  ///< iterations before plotting, per walker ("fuse"; flam3's 15)
  PaletteMode palette_mode = PaletteMode::Linear;
  double hue = 0;          ///< hue rotation (turns) of an indexed palette
  int palette_index = -1;  ///< "palette" attribute (standard table index), -1: none
  Palette palette{};       ///< resolved palette (inline, <color> list or the table entry)
  std::vector<Xform> xforms;
  std::optional<Xform> final_xform;
  bool has_chaos = false;  ///< any xform has a chaos row different from all 1
  bool operator==(const Flame&) const = default;
};

/// What the reader does with variations flam3 does not know (Apophysis / Fractorium plugins).
struct ReadOptions {
  bool strict = true;               ///< true: an error listing them; false: drop and report
  std::filesystem::path palettes;   ///< flam3-palettes.xml ("" : FLAM3_PALETTES, then Debian's)
  std::string source = "<memory>";  ///< file name used in messages
  /// Polled before each flame and each of its xforms and palettes; when it returns true the
  /// reader throws ReadCancelled. Empty: never stops. (The XML itself is parsed in one pass.)
  std::function<bool()> cancelled;
};

/// Thrown when ReadOptions::cancelled returned true.
class ReadCancelled : public std::runtime_error {
 public:
  ReadCancelled() : std::runtime_error("reading cancelled") {}
};

/// A flame file: every <flame> element in document order.
struct FlameSet {
  std::vector<Flame> flames;
  /// With strict = false: "flame 'x' (#3) line 12: dropped variation(s) julia3D, linear3D" per
  /// flame that lost variations or attributes.
  std::vector<std::string> dropped;
  std::string source;
};

/// Parses flam3 XML text: every <flame> element wherever it is (bare, inside <flames>,
/// <sequence>, <test> or any other wrapper). A UTF-8 BOM and CRLF line ends are accepted.
/// Throws FlameError (file, line, flame, attribute) on the bad inputs listed in docs/flames.md:
/// empty or non-XML text, no <flame>, no xforms, zero total weight, non-finite numbers,
/// missing palette, palette index out of range or without a palette table, a size of 0 or one
/// whose histogram would exceed the memory limit, unknown variations (strict).
[[nodiscard]] FlameSet parse_flames(std::string_view text, const ReadOptions& options = {});
/// Reads a file (FlameError naming it when it cannot be read) and parses it.
[[nodiscard]] FlameSet read_flames(const std::filesystem::path& file, ReadOptions options = {});

/// Where the standard palette table is looked for: `explicit_path` when not empty, then
/// $FLAM3_PALETTES, then /usr/share/flam3/flam3-palettes.xml (Debian's flam3-palette package).
/// nullopt when none exists.
[[nodiscard]] std::optional<std::filesystem::path> find_palette_table(const std::filesystem::path& explicit_path);
/// Entry `index` of a flam3-palettes.xml table, hue-rotated by `hue` turns (flam3's HSV
/// rotation). Throws FlameError naming the table when the entry is missing.
[[nodiscard]] Palette palette_from_table(const std::filesystem::path& table, int index, double hue);

/// flam3 XML of one flame (every attribute the reader reads; inline 8-bit RGBA hex palette).
/// parse_flames of the result gives the same Flame: numbers are printed with round-trip
/// precision, palette entries to the nearest 1/255 (exact for palettes read from files).
[[nodiscard]] std::string write_flame(const Flame& flame);

/// Histogram cells of a render: (width·ss + 2·gutter) × (height·ss + 2·gutter); gutter from the
/// spatial filter and the density estimator (render.hpp).
struct HistogramShape {
  std::size_t width = 0, height = 0, gutter = 0, filter_width = 0, de_offset = 0;
};
[[nodiscard]] HistogramShape histogram_shape(const Flame& f);

/// Memory limit checked before allocating a render (bytes of histogram + accumulator).
inline constexpr std::uint64_t kMaxRenderBytes = 24ull << 30;

/// Most <xform> elements of one flame (the final xform apart): flam3 files hold tens (52 at most
/// in the shared collection). The render's selection tables hold (xforms + 1) × kGrain 16-bit
/// xform indices (32 MiB at the limit), and the xaos checks are quadratic in the count; more is
/// a FlameError at the flame's line.
inline constexpr std::size_t kMaxXforms = 1024;

}  // namespace gemflow::flame
