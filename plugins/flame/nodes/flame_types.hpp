#pragma once
// The flame plugin's data types on the wires: one Flame, or every flame of a file (FlameSet).
#include <string>
#include <string_view>

#include <gemflow/data.hpp>

#include "gemflow/flame/flame.hpp"

namespace gemflow {

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
           std::to_string(f.width) + "×" + std::to_string(f.height) + ", quality " + std::to_string(f.quality);
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

}  // namespace gemflow
