#pragma once
// The flame plugin's data types on the wires: one Flame, or every flame of a file (FlameSet).
#include <charconv>
#include <string>
#include <string_view>

#include <gemflow/data.hpp>
#include <gemflow/serialize.hpp>

#include "gemflow/flame/flame.hpp"

namespace gemflow {

namespace flame::detail {
/// A number as a person writes it: the shortest text that reads back the same ("40", "0.25"),
/// or with `decimals` fixed decimals ("1.50").
inline std::string plain_number(double x, int decimals = -1) {
  char buf[64];
  const auto r = decimals < 0 ? std::to_chars(buf, buf + sizeof buf, x)
                              : std::to_chars(buf, buf + sizeof buf, x, std::chars_format::fixed, decimals);
  return r.ec == std::errc() ? std::string(buf, r.ptr) : std::to_string(x);
}
}  // namespace flame::detail

template <>
struct DataType<flame::Flame> {
  static constexpr std::string_view name = "flame.Flame";
  static constexpr std::string_view doc =
      "One fractal flame (flam3 genome): camera, render settings, xforms with variations, 256-entry palette "
      "(gemflow/flame/flame.hpp)";
  static std::string summary(const flame::Flame& f) {
    std::size_t vars = 0;
    for (const auto& x : f.xforms)
      for (double w : x.var) vars += w != 0;
    return (f.name.empty() ? std::string("flame") : "'" + f.name + "'") + ", " + std::to_string(f.xforms.size()) +
           " xforms" + (f.final_xform ? " + final" : "") + ", " + std::to_string(vars) + " variation terms, " +
           std::to_string(f.width) + "×" + std::to_string(f.height) + ", quality " +
           flame::detail::plain_number(f.quality);
  }
};

template <>
struct DataType<flame::FlameSet> {
  static constexpr std::string_view name = "flame.FlameSet";
  static constexpr std::string_view doc = "Every flame of a flam3 file, in document order";
  static std::string summary(const flame::FlameSet& s) {
    return std::to_string(s.flames.size()) + " flame(s)" +
           (s.dropped.empty() ? "" : ", " + std::to_string(s.dropped.size()) + " with dropped variations");
  }
};

namespace flame::detail {

template <class A>
void put_all(BinaryWriter& w, const A& a) {
  for (double v : a) w.put(v);
}
template <class A>
void get_all(BinaryReader& r, A& a, const char* what) {
  for (double& v : a) v = r.get<double>(what);
}

inline void write_xform(BinaryWriter& w, const Xform& x) {
  w.put(x.weight);
  w.put(x.color);
  w.put(x.color_speed);
  w.put(x.opacity);
  put_all(w, x.coefs);
  put_all(w, x.post);
  w.size(x.var.size());
  put_all(w, x.var);
  w.size(x.param.size());
  put_all(w, x.param);
  w.block(x.chaos);
  w.size(x.line);
}

inline Xform read_xform(BinaryReader& r) {
  Xform x;
  x.weight = r.get<double>("xform weight");
  x.color = r.get<double>("xform color");
  x.color_speed = r.get<double>("xform color_speed");
  x.opacity = r.get<double>("xform opacity");
  get_all(r, x.coefs, "xform coefs");
  get_all(r, x.post, "xform post");
  // The variation and parameter tables are fixed by this build: other counts are another encoding.
  if (r.size("variation count", 0) != x.var.size())
    throw SerialError("corrupt data: flame xform with another number of variations than this build's " +
                      std::to_string(x.var.size()));
  get_all(r, x.var, "xform variations");
  if (r.size("parameter count", 0) != x.param.size())
    throw SerialError("corrupt data: flame xform with another number of variation parameters than this build's " +
                      std::to_string(x.param.size()));
  get_all(r, x.param, "xform parameters");
  x.chaos = r.block<double>("xform chaos");
  x.line = r.size("xform line", 0);
  return x;
}

}  // namespace flame::detail

/// Disk-cache encoding of a flame: every field of flame::Flame in declaration order, doubles
/// as they are (the round trip is exact). Version 1.
template <>
struct Serial<flame::Flame> {
  static constexpr std::uint32_t version = 1;
  static void write(BinaryWriter& w, const flame::Flame& f) {
    using namespace flame::detail;
    w.str(f.name);
    w.size(f.index);
    w.size(f.line);
    w.str(f.source);
    w.size(f.width);
    w.size(f.height);
    put_all(w, f.center);
    for (double v : {f.scale, f.rotate, f.zoom}) w.put(v);
    w.put<std::int32_t>(f.supersample);
    w.put(f.quality);
    w.put(f.filter);
    w.put<std::uint8_t>(static_cast<std::uint8_t>(f.filter_shape));
    for (double v : {f.brightness, f.gamma, f.gamma_threshold, f.vibrancy, f.highlight_power}) w.put(v);
    put_all(w, f.background);
    for (double v : {f.estimator_radius, f.estimator_minimum, f.estimator_curve}) w.put(v);
    w.put<std::int32_t>(f.fuse);
    w.put<std::uint8_t>(static_cast<std::uint8_t>(f.palette_mode));
    w.put(f.hue);
    w.put<std::int32_t>(f.palette_index);
    for (const auto& e : f.palette) put_all(w, e);
    w.size(f.xforms.size());
    for (const auto& x : f.xforms) write_xform(w, x);
    w.put<std::uint8_t>(f.final_xform ? 1 : 0);
    if (f.final_xform) write_xform(w, *f.final_xform);
    w.put<std::uint8_t>(f.has_chaos ? 1 : 0);
  }
  static flame::Flame read(BinaryReader& r) {
    using namespace flame::detail;
    flame::Flame f;
    f.name = r.str("flame name");
    f.index = r.size("flame index", 0);
    f.line = r.size("flame line", 0);
    f.source = r.str("flame source");
    f.width = r.size("flame width", 0);
    f.height = r.size("flame height", 0);
    get_all(r, f.center, "flame center");
    f.scale = r.get<double>("flame scale");
    f.rotate = r.get<double>("flame rotate");
    f.zoom = r.get<double>("flame zoom");
    f.supersample = r.get<std::int32_t>("flame supersample");
    f.quality = r.get<double>("flame quality");
    f.filter = r.get<double>("flame filter");
    const auto shape = r.get<std::uint8_t>("flame filter_shape");
    if (shape > static_cast<std::uint8_t>(flame::FilterShape::Quadratic))
      throw SerialError("corrupt data: flame filter shape " + std::to_string(shape) + " out of range");
    f.filter_shape = static_cast<flame::FilterShape>(shape);
    for (double* v : {&f.brightness, &f.gamma, &f.gamma_threshold, &f.vibrancy, &f.highlight_power})
      *v = r.get<double>("flame tone settings");
    get_all(r, f.background, "flame background");
    for (double* v : {&f.estimator_radius, &f.estimator_minimum, &f.estimator_curve})
      *v = r.get<double>("flame estimator settings");
    f.fuse = r.get<std::int32_t>("flame fuse");
    const auto mode = r.get<std::uint8_t>("flame palette_mode");
    if (mode > static_cast<std::uint8_t>(flame::PaletteMode::Step))
      throw SerialError("corrupt data: flame palette mode " + std::to_string(mode) + " out of range");
    f.palette_mode = static_cast<flame::PaletteMode>(mode);
    f.hue = r.get<double>("flame hue");
    f.palette_index = r.get<std::int32_t>("flame palette index");
    for (auto& e : f.palette) get_all(r, e, "flame palette");
    // An xform takes more than 1 KB: the count is checked against the bytes left.
    f.xforms.resize(r.size("flame xforms", 8 * (4 + 12 + flame::kNumVariations + flame::kNumVarParams)));
    for (auto& x : f.xforms) x = read_xform(r);
    if (r.get<std::uint8_t>("flame final xform flag")) f.final_xform = read_xform(r);
    f.has_chaos = r.get<std::uint8_t>("flame xaos flag") != 0;
    return f;
  }
};

/// Disk-cache encoding of a flame file: its flames (Serial<flame::Flame>), dropped-variation
/// notes and source. Version 1.
template <>
struct Serial<flame::FlameSet> {
  static constexpr std::uint32_t version = 1;
  static void write(BinaryWriter& w, const flame::FlameSet& s) {
    w.size(s.flames.size());
    for (const auto& f : s.flames) Serial<flame::Flame>::write(w, f);
    w.strings(s.dropped);
    w.str(s.source);
  }
  static flame::FlameSet read(BinaryReader& r) {
    flame::FlameSet s;
    s.flames.resize(r.size("flames", 8 * 1024));
    for (auto& f : s.flames) f = Serial<flame::Flame>::read(r);
    s.dropped = r.strings("dropped variations");
    s.source = r.str("flame file name");
    return s;
  }
};

}  // namespace gemflow
