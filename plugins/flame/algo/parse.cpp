// flam3 XML reader (pugixml): every <flame> element of a document, the attributes that change a
// still image, xforms, palettes. Semantics: flam3 3.1 parser.c; the code is our own.
#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdlib>
#include <fstream>
#include <map>
#include <mutex>
#include <set>
#include <sstream>
#include <string_view>
#include <unordered_set>

#include <pugixml.hpp>

#include "gemflow/flame/detail/core.hpp"
#include "gemflow/flame/flame.hpp"

namespace gemflow::flame {
namespace {

/// The shortest decimal that reads back as x ("1e+06", "0.5").
std::string shortest(double x) {
  char buf[32];
  const auto r = std::to_chars(buf, buf + sizeof buf, x);
  return std::string(buf, r.ptr);
}

// Palettes longer than flam3's 256 entries are resampled (Fractorium writes up to 65536).
constexpr std::size_t kMaxPaletteColours = 65536;

// Xform attributes that are not variations: flam3's, and those Apophysis, Fractorium and
// JWildfire write that do not change a flam3 render.
const std::set<std::string, std::less<>> kXformNonVariation = {
    "weight",          "color",   "color_speed", "symmetry",  "opacity",   "coefs",    "post",
    "chaos",           "name",    "animate",     "var_color", "var_order", "plotmode", "motion_frequency",
    "motion_function", "visible", "enabled"};

std::string_view trim(std::string_view s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
  return s;
}

std::optional<double> to_number(std::string_view s) {
  s = trim(s);
  if (!s.empty() && s.front() == '+') s.remove_prefix(1);
  if (s.empty()) return std::nullopt;
  double v = 0;
  const auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || p != s.data() + s.size()) return std::nullopt;
  return v;
}

std::vector<std::string_view> split_ws(std::string_view s) {
  std::vector<std::string_view> out;
  std::size_t i = 0;
  while (i < s.size()) {
    while (i < s.size() && std::isspace(static_cast<unsigned char>(s[i]))) ++i;
    const std::size_t b = i;
    while (i < s.size() && !std::isspace(static_cast<unsigned char>(s[i]))) ++i;
    if (i > b) out.push_back(s.substr(b, i - b));
  }
  return out;
}

int hex_value(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

/// Context of the element being read, for messages.
class Reader {
 public:
  Reader(std::string_view text, const ReadOptions& o) : text_(text), opt_(o) {
    for (std::size_t i = 0; i < text.size(); ++i)
      if (text[i] == '\n') newlines_.push_back(i);
  }

  std::size_t line_of(const pugi::xml_node& n) const {
    const auto off = n.offset_debug();
    if (off < 0) return 0;
    return static_cast<std::size_t>(
               std::upper_bound(newlines_.begin(), newlines_.end(), static_cast<std::size_t>(off)) -
               newlines_.begin()) +
           1;
  }

  std::string where(std::size_t line) const {
    std::string s = opt_.source + ":" + std::to_string(line) + ": ";
    if (flame_)
      s += "flame " + (flame_->name.empty() ? std::string() : "'" + flame_->name + "' ") + "(#" +
           std::to_string(flame_->index) + "): ";
    return s;
  }

  [[noreturn]] void fail(std::size_t line, const std::string& what) const { throw FlameError(where(line) + what); }

  double number(const pugi::xml_attribute& a, std::size_t line) const {
    const auto v = to_number(a.value());
    if (!v) fail(line, "attribute '" + std::string(a.name()) + "' = '" + a.value() + "' is not a number");
    if (!std::isfinite(*v)) fail(line, "attribute '" + std::string(a.name()) + "' = '" + a.value() + "' is not finite");
    return *v;
  }

  std::vector<double> numbers(const pugi::xml_attribute& a, std::size_t line, std::size_t min_count,
                              std::size_t max_count) const {
    std::vector<double> out;
    for (auto tok : split_ws(a.value())) {
      const auto v = to_number(tok);
      if (!v)
        fail(line, "attribute '" + std::string(a.name()) + "' = '" + a.value() + "': '" + std::string(tok) +
                       "' is not a number");
      if (!std::isfinite(*v))
        fail(line, "attribute '" + std::string(a.name()) + "' = '" + a.value() + "' is not finite");
      out.push_back(*v);
    }
    if (out.size() < min_count || out.size() > max_count)
      fail(line, "attribute '" + std::string(a.name()) + "' = '" + a.value() + "' has " + std::to_string(out.size()) +
                     " numbers, expected " +
                     (min_count == max_count ? std::to_string(min_count)
                                             : std::to_string(min_count) + " to " + std::to_string(max_count)));
    return out;
  }

  Affine affine(const pugi::xml_attribute& a, std::size_t line) const {
    const auto v = numbers(a, line, 6, 6);
    Affine r;
    std::copy(v.begin(), v.end(), r.begin());
    return r;
  }

  Xform xform(const pugi::xml_node& n, bool is_final, std::vector<std::string>& unknown) {
    const std::size_t line = line_of(n);
    Xform x;
    x.line = line;
    if (is_final) x.color_speed = 0;  // flam3: a final xform does not move the colour unless asked
    // the element's attribute names, for the owner test of unknown parameters below (a set, so
    // that the test stays linear in the attributes)
    std::unordered_set<std::string_view> names;
    for (auto a : n.attributes()) names.emplace(a.name());
    for (auto a : n.attributes()) {
      const std::string_view name = a.name();
      if (name == "weight") {
        x.weight = number(a, line);
        if (x.weight < 0) fail(line, "xform attribute 'weight' = " + std::string(a.value()) + " is negative");
      } else if (name == "color") {
        x.color = numbers(a, line, 1, 2)[0];  // the old two-number form keeps the first
      } else if (name == "color_speed") {
        x.color_speed = number(a, line);
      } else if (name == "symmetry") {
        x.color_speed = (1.0 - number(a, line)) / 2.0;
      } else if (name == "opacity") {
        x.opacity = number(a, line);
        if (x.opacity < 0 || x.opacity > 1)
          fail(line, "xform attribute 'opacity' = " + std::string(a.value()) + " is outside [0, 1]");
      } else if (name == "coefs") {
        x.coefs = affine(a, line);
      } else if (name == "post") {
        x.post = affine(a, line);
      } else if (name == "chaos") {
        x.chaos = numbers(a, line, 0, 100000);
        for (double c : x.chaos)
          if (c < 0) fail(line, "xform attribute 'chaos': negative entry " + std::to_string(c));
      } else if (const int v = variation_index(name); v >= 0) {
        x.var[static_cast<std::size_t>(v)] = number(a, line);
      } else if (const int p = var_param_index(name); p >= 0) {
        x.param[static_cast<std::size_t>(p)] = number(a, line);
      } else if (!kXformNonVariation.contains(name)) {
        // An unknown attribute with a non-zero number is an unknown variation unless another
        // attribute of the element names its owner ("julia3D" for "julia3D_power").
        const auto num = to_number(a.value());
        if (!num || *num == 0) continue;
        // owners are variation names (tens of characters): longer prefixes are not looked up, so
        // that a long name of many '_' does not hash prefix after prefix
        constexpr std::size_t kMaxOwner = 128;
        bool is_param = false;
        for (std::size_t k = name.find('_'); k != std::string_view::npos && k <= kMaxOwner && !is_param;
             k = name.find('_', k + 1))
          is_param = names.contains(name.substr(0, k));
        if (!is_param) unknown.emplace_back(name);
      }
    }
    if (x.color < 0 || x.color > 1)
      fail(line, "xform attribute 'color' = " + std::to_string(x.color) + " is outside [0, 1]");
    return x;
  }

  /// `count` colours of `bytes` bytes (the first `skip` ignored) as hex digits. More than 256
  /// colours (Fractorium writes 512 and more) are resampled linearly to flam3's 256.
  Palette hex_palette(std::string_view hex, std::size_t count, std::size_t bytes, std::size_t skip, std::size_t line,
                      const std::string& what) const {
    std::vector<int> digits;
    for (char c : hex) {
      if (std::isspace(static_cast<unsigned char>(c))) continue;
      const int h = hex_value(c);
      if (h < 0) fail(line, what + ": '" + std::string(1, c) + "' is not a hexadecimal digit");
      digits.push_back(h);
    }
    if (count == 0 || count > kMaxPaletteColours)
      fail(line, what + ": count " + std::to_string(count) + " is not in 1.." + std::to_string(kMaxPaletteColours));
    if (digits.size() < count * bytes * 2)
      fail(line, what + ": " + std::to_string(digits.size()) + " hexadecimal digits for " + std::to_string(count) +
                     " colours of " + std::to_string(bytes) + " bytes (" + std::to_string(count * bytes * 2) +
                     " needed)");
    std::vector<std::array<double, 4>> cols(count);
    for (std::size_t i = 0; i < count; ++i) {
      double c[4] = {0, 0, 0, 255};
      for (std::size_t k = 0; k < bytes - skip; ++k) {
        const std::size_t d = (i * bytes + skip + k) * 2;
        c[k] = digits[d] * 16 + digits[d + 1];
      }
      const double a = c[3] / 255.0;
      cols[i] = {a * c[0] / 255.0, a * c[1] / 255.0, a * c[2] / 255.0, a};
    }
    Palette p{};  // entries past a short palette's count stay transparent black, as in flam3
    if (count <= 256) {
      for (std::size_t i = 0; i < count; ++i) p[i] = cols[i];
    } else {
      for (std::size_t i = 0; i < 256; ++i) {
        const double pos = static_cast<double>(i) * static_cast<double>(count - 1) / 255.0;
        const std::size_t i0 = std::min(static_cast<std::size_t>(pos), count - 2);
        const double t = pos - static_cast<double>(i0);
        for (std::size_t k = 0; k < 4; ++k) p[i][k] = cols[i0][k] * (1 - t) + cols[i0 + 1][k] * t;
      }
    }
    return p;
  }

  Flame flame(const pugi::xml_node& n, std::size_t index, std::vector<std::string>& dropped) {
    Flame f;
    f.index = index;
    f.line = line_of(n);
    f.source = opt_.source;
    f.name = n.attribute("name").value();
    flame_ = &f;
    flame_attributes(n, f);
    std::vector<std::pair<std::string, std::size_t>> unknown;  // variation, line
    const bool have_palette = flame_children(n, f, unknown);
    flame_checks(f, have_palette, unknown, dropped);
    flame_ = nullptr;
    return f;
  }

  /// The <flame> element's own attributes.
  void flame_attributes(const pugi::xml_node& n, Flame& f) const {
    const std::size_t line = f.line;
    auto check_positive = [&](const pugi::xml_attribute& a, double v) {
      if (!(v > 0)) fail(line, "attribute '" + std::string(a.name()) + "' = '" + a.value() + "' must be > 0");
    };
    for (auto a : n.attributes()) {
      const std::string_view name = a.name();
      if (name == "size") {
        const auto v = numbers(a, line, 2, 2);
        if (v[0] < 1 || v[1] < 1 || v[0] != std::floor(v[0]) || v[1] != std::floor(v[1]) || v[0] > 1e6 || v[1] > 1e6)
          fail(line, "attribute 'size' = '" + std::string(a.value()) + "': width and height must be whole numbers ≥ 1");
        f.width = static_cast<std::size_t>(v[0]);
        f.height = static_cast<std::size_t>(v[1]);
      } else if (name == "center") {
        const auto v = numbers(a, line, 2, 2);
        f.center = {v[0], v[1]};
      } else if (name == "scale") {
        f.scale = number(a, line);
        check_positive(a, f.scale);
      } else if (name == "rotate") {
        f.rotate = number(a, line);
      } else if (name == "zoom") {
        f.zoom = number(a, line);
        if (std::fabs(f.zoom) > 20)
          fail(line, "attribute 'zoom' = " + std::string(a.value()) + " is outside [-20, 20]");
      } else if (name == "supersample" || name == "oversample") {
        const double v = number(a, line);
        if (v < 1 || v > 16 || v != std::floor(v))
          fail(line, "attribute '" + std::string(name) + "' = '" + a.value() + "' must be a whole number in 1..16");
        f.supersample = static_cast<int>(v);
      } else if (name == "quality") {
        f.quality = number(a, line);
        check_positive(a, f.quality);
      } else if (name == "filter") {
        f.filter = number(a, line);
        if (f.filter < 0) fail(line, "attribute 'filter' = " + std::string(a.value()) + " is negative");
      } else if (name == "filter_shape") {
        bool found = false;
        for (int s = 0; s < 14; ++s)
          if (name_of(static_cast<FilterShape>(s)) == a.value())
            f.filter_shape = static_cast<FilterShape>(s), found = true;
        if (!found)
          fail(line, "attribute 'filter_shape' = '" + std::string(a.value()) + "' is not one of flam3's filters");
      } else if (name == "brightness") {
        f.brightness = number(a, line);
        check_positive(a, f.brightness);
      } else if (name == "gamma") {
        f.gamma = number(a, line);
        check_positive(a, f.gamma);
      } else if (name == "gamma_threshold") {
        f.gamma_threshold = number(a, line);  // 0: no linear ramp
        if (f.gamma_threshold < 0)
          fail(line, "attribute 'gamma_threshold' = " + std::string(a.value()) + " is negative");
      } else if (name == "vibrancy") {
        f.vibrancy = number(a, line);
      } else if (name == "highlight_power") {
        f.highlight_power = number(a, line);
      } else if (name == "background") {
        const auto v = numbers(a, line, 3, 3);
        f.background = {v[0], v[1], v[2]};
      } else if (name == "estimator_radius") {
        f.estimator_radius = number(a, line);
        if (f.estimator_radius < 0 || f.estimator_radius > 64)
          fail(line, "attribute 'estimator_radius' = " + std::string(a.value()) + " is outside [0, 64]");
      } else if (name == "estimator_minimum") {
        f.estimator_minimum = number(a, line);
        if (f.estimator_minimum < 0) fail(line, "attribute 'estimator_minimum' is negative");
      } else if (name == "estimator_curve") {
        f.estimator_curve = number(a, line);
        check_positive(a, f.estimator_curve);
      } else if (name == "fuse") {
        const double v = number(a, line);
        if (v < 0 || v > 10000) fail(line, "attribute 'fuse' = " + std::string(a.value()) + " is outside [0, 10000]");
        f.fuse = static_cast<int>(v);
      } else if (name == "palette") {
        const double v = number(a, line);
        if (v != std::floor(v))
          fail(line, "attribute 'palette' = '" + std::string(a.value()) + "' is not a whole number");
        f.palette_index = v < 0 ? -1 : static_cast<int>(std::min(v, 1e9));
      } else if (name == "palette_mode") {
        const std::string_view m = a.value();
        if (m == "step") f.palette_mode = PaletteMode::Step;
        else if (m == "linear") f.palette_mode = PaletteMode::Linear;
        else fail(line, "attribute 'palette_mode' = '" + std::string(m) + "' is not 'step' or 'linear'");
      } else if (name == "hue") {
        f.hue = std::fmod(number(a, line), 1.0);
      }
    }
    if (f.estimator_radius > 0 && f.estimator_minimum > f.estimator_radius)
      fail(line, "attribute 'estimator_minimum' = " + std::to_string(f.estimator_minimum) +
                     " exceeds 'estimator_radius' = " + std::to_string(f.estimator_radius));
  }

  /// Xforms and palette elements; true when a palette was given inline.
  bool flame_children(const pugi::xml_node& n, Flame& f, std::vector<std::pair<std::string, std::size_t>>& unknown) {
    bool have_palette = false;
    for (auto c : n.children()) {
      if (opt_.cancelled && opt_.cancelled()) throw ReadCancelled();
      const std::string_view tag = c.name();
      const std::size_t cl = line_of(c);
      if (tag == "xform" || tag == "finalxform") {
        std::vector<std::string> u;
        Xform x = xform(c, tag == "finalxform", u);
        for (auto& s : u) unknown.emplace_back(s, cl);
        if (tag == "finalxform") {
          if (f.final_xform) fail(cl, "a second <finalxform>");
          f.final_xform = std::move(x);
        } else {
          if (f.xforms.size() == kMaxXforms)
            fail(cl, "more than " + std::to_string(kMaxXforms) + " <xform> elements in one flame");
          f.xforms.push_back(std::move(x));
        }
      } else if (tag == "palette") {
        if (c.attribute("index0") || c.attribute("index1") || c.attribute("hue0"))
          fail(cl, "<palette> with index0/index1/hue0/hue1/blend (flam3's oldest palette form) is not supported");
        std::size_t count = 256;
        if (auto a = c.attribute("count")) {
          const double v = number(a, cl);
          if (v < 1 || v > kMaxPaletteColours || v != std::floor(v))
            fail(cl, "<palette> attribute 'count' = '" + std::string(a.value()) + "' is not in 1.." +
                         std::to_string(kMaxPaletteColours));
          count = static_cast<std::size_t>(v);
        }
        std::size_t bytes = 3;
        if (auto a = c.attribute("format")) {
          const std::string_view fmt = a.value();
          if (fmt == "RGBA") bytes = 4;
          else if (fmt != "RGB")
            fail(cl, "<palette> attribute 'format' = '" + std::string(fmt) + "' is not RGB or RGBA");
        }
        f.palette = hex_palette(c.text().get(), count, bytes, 0, cl, "<palette>");
        have_palette = true;
      } else if (tag == "colors") {
        const double v = c.attribute("count") ? number(c.attribute("count"), cl) : 256;
        if (v < 1 || v > 256 || v != std::floor(v)) fail(cl, "<colors> attribute 'count' is not in 1..256");
        f.palette = hex_palette(c.attribute("data").value(), static_cast<std::size_t>(v), 4, 1, cl, "<colors data>");
        have_palette = true;
      } else if (tag == "color") {
        const auto ia = c.attribute("index");
        if (!ia) fail(cl, "<color> without 'index'");
        const double idx = number(ia, cl);
        if (idx < 0 || idx > 255 || idx != std::floor(idx))
          fail(cl, "<color> attribute 'index' = '" + std::string(ia.value()) + "' is not in 0..255");
        double rgba[4] = {0, 0, 0, 255};
        if (auto a = c.attribute("rgb")) {
          const auto v = numbers(a, cl, 3, 3);
          std::copy(v.begin(), v.end(), rgba);
        } else if (auto a2 = c.attribute("rgba")) {
          const auto v = numbers(a2, cl, 4, 4);
          std::copy(v.begin(), v.end(), rgba);
        } else {
          fail(cl, "<color> without 'rgb' or 'rgba'");
        }
        if (auto a = c.attribute("a")) rgba[3] = number(a, cl);
        for (double v : rgba)
          if (v < 0 || v > 255) fail(cl, "<color> component " + std::to_string(v) + " is outside [0, 255]");
        const double al = rgba[3] / 255.0;
        f.palette[static_cast<std::size_t>(idx)] = {al * rgba[0] / 255.0, al * rgba[1] / 255.0, al * rgba[2] / 255.0,
                                                    al};
        have_palette = true;
      }
    }

    return have_palette;
  }

  /// Unknown variations, weights, xaos rows, the palette table, memory.
  void flame_checks(Flame& f, bool have_palette, const std::vector<std::pair<std::string, std::size_t>>& unknown,
                    std::vector<std::string>& dropped) const {
    const std::size_t line = f.line;
    if (!unknown.empty()) {
      std::string list;
      std::set<std::string> seen;
      for (auto& [v, l] : unknown)
        if (seen.insert(v).second) list += (list.empty() ? "" : ", ") + v + " (line " + std::to_string(l) + ")";
      if (opt_.strict)
        fail(line, "unknown variation(s) " + list +
                       " (not among flam3's 99; read with strict: false to render without them)");
      dropped.push_back(where(line) + "dropped unknown variation(s) " + list);
    }

    if (f.xforms.empty()) fail(line, "no <xform>");
    double total = 0;
    for (auto& x : f.xforms) total += x.weight;
    if (!(total > 0)) fail(line, "the xforms' total weight is 0");
    // Xaos rows: entries past the xform count are ignored (Fractorium pads its rows); a row
    // whose weighted total is 0 would trap the point, so it is read as no xaos (plain weights).
    for (std::size_t i = 0; i < f.xforms.size(); ++i) {
      auto& ch = f.xforms[i].chaos;
      if (ch.size() > f.xforms.size()) ch.resize(f.xforms.size());
      double s = 0;
      for (std::size_t j = 0; j < f.xforms.size(); ++j) s += (j < ch.size() ? ch[j] : 1.0) * f.xforms[j].weight;
      if (!(s > 0)) ch.clear();
      for (double c : ch)
        if (c != 1) f.has_chaos = true;
    }
    if (f.palette_index >= 0) {
      if (have_palette) {
        // An inline palette wins (flam3 reads both; the later one is kept, and files carry the
        // index only as a record of where the colours came from).
      } else {
        const auto table = find_palette_table(opt_.palettes);
        if (!table)
          fail(line, "attribute 'palette' = " + std::to_string(f.palette_index) +
                         " needs the standard palette table flam3-palettes.xml: none found (set the node's 'palettes' "
                         "parameter or FLAM3_PALETTES, or install Debian's flam3-palette package)");
        try {
          f.palette = palette_from_table(*table, f.palette_index, f.hue);
        } catch (const FlameError& e) {
          fail(line, "attribute 'palette' = " + std::to_string(f.palette_index) + ": " + e.what());
        }
        have_palette = true;
      }
    }
    if (!have_palette) fail(line, "no palette (no <palette>, <color> list or palette index)");

    // Memory, before anything is allocated for a render.
    const HistogramShape s = histogram_shape(f);
    const double bytes = static_cast<double>(s.width) * static_cast<double>(s.height) * 64.0;
    if (bytes > static_cast<double>(kMaxRenderBytes)) {
      // the histogram is the image (× supersample) plus a border for the filter and the density
      // estimator: name the attribute that made it large (a user's filter="1e6" was reported as size)
      std::string cause = "attribute 'size' = " + std::to_string(f.width) + " × " + std::to_string(f.height) +
                          " (supersample " + std::to_string(f.supersample) + ")";
      if (2 * s.gutter > std::max(f.width, f.height) * static_cast<std::size_t>(f.supersample))
        cause = s.de_offset > 0 ? "attribute 'estimator_radius' = " + shortest(f.estimator_radius)
                                : "attribute 'filter' = " + shortest(f.filter);
      fail(line, cause + " needs " + std::to_string(static_cast<long long>(bytes / 1048576)) +
                     " MiB of histogram (" + std::to_string(s.width) + " × " + std::to_string(s.height) +
                     " cells, a border of " + std::to_string(s.gutter) + " for the filter and density estimation), over the " +
                     std::to_string(kMaxRenderBytes >> 20) + " MiB limit");
    }
  }

  static std::string_view name_of(FilterShape s) { return filter_shape_name(s); }

 private:
  std::string_view text_;
  const ReadOptions& opt_;
  std::vector<std::size_t> newlines_;
  const Flame* flame_ = nullptr;
};

/// The <flame> elements under `root` in document order, not looking inside a flame. A walk with
/// a stack of its own: the nesting depth is the file's, and a deep file must not overflow the
/// call stack.
void collect_flames(const pugi::xml_node& root, std::vector<pugi::xml_node>& out) {
  std::vector<pugi::xml_node> resume;  // per open element: the sibling to go on with after it
  pugi::xml_node c = root.first_child();
  while (c || !resume.empty()) {
    if (!c) {
      c = resume.back();
      resume.pop_back();
      continue;
    }
    const pugi::xml_node next = c.next_sibling();
    if (c.type() == pugi::node_element) {
      if (std::string_view(c.name()) == "flame") {
        out.push_back(c);
      } else if (c.first_child()) {
        resume.push_back(next);
        c = c.first_child();
        continue;
      }
    }
    c = next;
  }
}

}  // namespace

std::string_view filter_shape_name(FilterShape s) {
  static constexpr std::string_view names[] = {"gaussian", "hermite",  "box",      "triangle", "bell",
                                               "bspline",  "mitchell", "blackman", "catrom",   "hanning",
                                               "hamming",  "lanczos3", "lanczos2", "quadratic"};
  return names[static_cast<int>(s)];
}

HistogramShape histogram_shape(const Flame& f) {
  HistogramShape s;
  const int ss = f.supersample;
  const double support = detail::filter_support(static_cast<int>(f.filter_shape));
  const double fw = 2.0 * support * ss * f.filter;
  int fwidth = static_cast<int>(fw) + 1;
  if ((fwidth ^ ss) & 1) ++fwidth;  // same parity as ss: the kernel centres on the pixel
  s.filter_width = static_cast<std::size_t>(fwidth);
  int gutter = (fwidth - ss) / 2;
  int de = 0;
  if (f.estimator_radius > 0) de = static_cast<int>(std::ceil(f.estimator_radius)) * ss + (ss - 1);
  if (de > gutter) {
    s.de_offset = static_cast<std::size_t>(de - gutter);
    gutter = de;
  }
  s.gutter = static_cast<std::size_t>(gutter);
  s.width = f.width * static_cast<std::size_t>(ss) + 2 * s.gutter;
  s.height = f.height * static_cast<std::size_t>(ss) + 2 * s.gutter;
  return s;
}

std::optional<std::filesystem::path> find_palette_table(const std::filesystem::path& explicit_path) {
  namespace fs = std::filesystem;
  std::error_code ec;
  if (!explicit_path.empty())
    return fs::is_regular_file(explicit_path, ec) ? std::optional(explicit_path) : std::nullopt;
  if (const char* env = std::getenv("FLAM3_PALETTES"); env && *env && fs::is_regular_file(env, ec))
    return fs::path(env);
  const fs::path debian = "/usr/share/flam3/flam3-palettes.xml";
  if (fs::is_regular_file(debian, ec)) return debian;
  return std::nullopt;
}

Palette palette_from_table(const std::filesystem::path& table, int index, double hue) {
  // Parsed once per table file (1.5 MB), kept for the process: keyed by name, size and
  // modification time, so that a table edited while the process runs (Studio) is read again.
  static std::mutex mutex;
  static std::map<std::string, std::vector<std::string>> cache;
  std::vector<std::string>* entries = nullptr;
  {
    std::error_code ec;
    const auto size = std::filesystem::file_size(table, ec);
    const auto mtime = std::filesystem::last_write_time(table, ec).time_since_epoch().count();
    const std::string key = table.string() + '\n' + std::to_string(size) + '\n' + std::to_string(mtime);
    std::lock_guard lock(mutex);
    auto it = cache.find(key);
    if (it == cache.end()) {
      pugi::xml_document doc;
      const auto r = doc.load_file(table.c_str());
      if (!r) throw FlameError("palette table " + table.string() + ": " + r.description());
      std::vector<std::string> e;
      for (auto p : doc.child("palettes").children("palette")) {
        const int n = p.attribute("number").as_int(-1);
        if (n < 0) continue;
        if (static_cast<std::size_t>(n) >= e.size()) e.resize(static_cast<std::size_t>(n) + 1);
        e[static_cast<std::size_t>(n)] = p.attribute("data").value();
      }
      it = cache.emplace(key, std::move(e)).first;
    }
    entries = &it->second;
  }
  if (index < 0 || static_cast<std::size_t>(index) >= entries->size() ||
      (*entries)[static_cast<std::size_t>(index)].empty())
    throw FlameError("index " + std::to_string(index) + " is not in the palette table " + table.string() + " (0.." +
                     std::to_string(entries->empty() ? 0 : entries->size() - 1) + ")");
  ReadOptions o;
  o.source = table.string();
  Reader r("", o);
  Palette p =
      r.hex_palette((*entries)[static_cast<std::size_t>(index)], 256, 4, 1, 0, "palette " + std::to_string(index));
  if (hue != 0)
    for (auto& c : p) {
      double rgb[3] = {c[0], c[1], c[2]}, hsv[3];
      detail::rgb_to_hsv(rgb, hsv);
      hsv[0] += hue * 6.0;
      detail::hsv_to_rgb(hsv, rgb);
      c = {rgb[0], rgb[1], rgb[2], c[3]};
    }
  return p;
}

FlameSet parse_flames(std::string_view text, const ReadOptions& options) {
  if (text.size() >= 3 && static_cast<unsigned char>(text[0]) == 0xEF && static_cast<unsigned char>(text[1]) == 0xBB &&
      static_cast<unsigned char>(text[2]) == 0xBF)
    text.remove_prefix(3);
  if (trim(text).empty()) throw FlameError(options.source + ":1: the file is empty");
  pugi::xml_document doc;
  // Without parse_eol, offsets (line numbers) stay those of the text; CR is whitespace to us.
  const unsigned flags = pugi::parse_default & ~pugi::parse_eol;
  const auto res = doc.load_buffer(text.data(), text.size(), flags, pugi::encoding_utf8);
  Reader reader(text, options);
  if (!res) {
    std::size_t line = 1;
    for (std::ptrdiff_t i = 0; i < res.offset && static_cast<std::size_t>(i) < text.size(); ++i)
      if (text[static_cast<std::size_t>(i)] == '\n') ++line;
    throw FlameError(options.source + ":" + std::to_string(line) + ": not valid XML: " + res.description());
  }
  std::vector<pugi::xml_node> nodes;
  collect_flames(doc, nodes);
  if (nodes.empty()) throw FlameError(options.source + ":1: no <flame> element");
  FlameSet set;
  set.source = options.source;
  for (std::size_t i = 0; i < nodes.size(); ++i) {
    if (options.cancelled && options.cancelled()) throw ReadCancelled();
    set.flames.push_back(reader.flame(nodes[i], i, set.dropped));
  }
  return set;
}

FlameSet read_flames(const std::filesystem::path& file, ReadOptions options) {
  std::ifstream in(file, std::ios::binary);
  if (!in) throw FlameError(file.string() + ": cannot open the file");
  std::ostringstream ss;
  ss << in.rdbuf();
  if (in.bad()) throw FlameError(file.string() + ": read error");
  if (options.source == "<memory>") options.source = file.string();
  return parse_flames(ss.str(), options);
}

std::string write_flame(const Flame& f) {
  auto num = [](double v) {
    char buf[32];
    const auto [p, ec] = std::to_chars(buf, buf + sizeof buf, v);
    return std::string(buf, p);
  };
  auto aff = [&](const Affine& a) {
    std::string s;
    for (std::size_t i = 0; i < 6; ++i) {
      if (i) s += ' ';
      s += num(a[i]);
    }
    return s;
  };
  auto esc = [](const std::string& s) {
    std::string r;
    for (char c : s) {
      if (c == '&') r += "&amp;";
      else if (c == '<') r += "&lt;";
      else if (c == '"') r += "&quot;";
      else r += c;
    }
    return r;
  };
  std::ostringstream o;
  o << "<flame name=\"" << esc(f.name) << "\" size=\"" << f.width << " " << f.height << "\" center=\""
    << num(f.center[0]) << " " << num(f.center[1]) << "\" scale=\"" << num(f.scale) << "\" rotate=\"" << num(f.rotate)
    << "\" zoom=\"" << num(f.zoom) << "\" supersample=\"" << f.supersample << "\" quality=\"" << num(f.quality)
    << "\" filter=\"" << num(f.filter) << "\" filter_shape=\"" << filter_shape_name(f.filter_shape)
    << "\" brightness=\"" << num(f.brightness) << "\" gamma=\"" << num(f.gamma) << "\" gamma_threshold=\""
    << num(f.gamma_threshold) << "\" vibrancy=\"" << num(f.vibrancy) << "\" highlight_power=\""
    << num(f.highlight_power) << "\" background=\"" << num(f.background[0]) << " " << num(f.background[1]) << " "
    << num(f.background[2]) << "\" estimator_radius=\"" << num(f.estimator_radius) << "\" estimator_minimum=\""
    << num(f.estimator_minimum) << "\" estimator_curve=\"" << num(f.estimator_curve) << "\" fuse=\"" << f.fuse
    << "\" palette_mode=\"" << (f.palette_mode == PaletteMode::Step ? "step" : "linear") << "\">\n";
  auto xf = [&](const Xform& x, const char* tag) {
    o << "  <" << tag << " weight=\"" << num(x.weight) << "\" color=\"" << num(x.color) << "\" color_speed=\""
      << num(x.color_speed) << "\" opacity=\"" << num(x.opacity) << "\" coefs=\"" << aff(x.coefs) << "\"";
    if (x.has_post()) o << " post=\"" << aff(x.post) << "\"";
    for (int v = 0; v < kNumVariations; ++v)
      if (x.var[static_cast<std::size_t>(v)] != 0)
        o << " " << kVariationNames[v] << "=\"" << num(x.var[static_cast<std::size_t>(v)]) << "\"";
    for (int p = 0; p < kNumVarParams; ++p)
      if (x.var[static_cast<std::size_t>(kVarParams[p].variation)] != 0)
        o << " " << kVarParams[p].name << "=\"" << num(x.param[static_cast<std::size_t>(p)]) << "\"";
    if (!x.chaos.empty()) {
      o << " chaos=\"";
      for (std::size_t i = 0; i < x.chaos.size(); ++i) o << (i ? " " : "") << num(x.chaos[i]);
      o << "\"";
    }
    o << "/>\n";
  };
  for (const auto& x : f.xforms) xf(x, "xform");
  if (f.final_xform) xf(*f.final_xform, "finalxform");
  // Palette as 8-bit RGBA hex of the straight (un-premultiplied) colours.
  o << "  <palette count=\"256\" format=\"RGBA\">\n";
  static const char* hex = "0123456789ABCDEF";
  for (std::size_t i = 0; i < 256; ++i) {
    const auto& c = f.palette[i];
    const double a = c[3];
    const double ch[4] = {a > 0 ? c[0] / a : 0, a > 0 ? c[1] / a : 0, a > 0 ? c[2] / a : 0, a};
    if (i % 8 == 0) o << "    ";
    for (double v : ch) {
      const int b = static_cast<int>(std::lround(std::clamp(v, 0.0, 1.0) * 255.0));
      o << hex[b >> 4] << hex[b & 15];
    }
    if (i % 8 == 7) o << "\n";
  }
  o << "  </palette>\n</flame>\n";
  return o.str();
}

}  // namespace gemflow::flame
