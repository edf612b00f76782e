#pragma once
// example.Histogram: the example plugin's own data type (docs/plugin-guide.md, "Data types"),
// cacheable on disk through its binary encoding ("Caching a type on disk").
#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include <gemflow/data.hpp>
#include <gemflow/serialize.hpp>

namespace example {
struct Histogram {
  double low = 0, high = 1;         // the range the bins cover, low < high
  std::vector<std::size_t> counts;  // equal bins over [low, high]
};
}  // namespace example

template <>
struct gemflow::DataType<example::Histogram> {
  static constexpr std::string_view name = "example.Histogram";  // the name on wires and in Studio
  static constexpr std::string_view doc = "Counts of values in equal bins over [low, high]";
  static constexpr int version = 1;                          // optional (1); bump when the layout or meaning changes
  static std::string summary(const example::Histogram& h) {  // one line, without the type name
    return std::to_string(h.counts.size()) + " bins";
  }
};

template <>
struct gemflow::Serial<example::Histogram> {
  static constexpr std::uint32_t version = 1;  // bump when the encoding changes
  static void write(gemflow::BinaryWriter& w, const example::Histogram& h) {
    w.put(h.low);
    w.put(h.high);
    w.block(h.counts);  // a vector of plain values, in one block
  }
  static example::Histogram read(gemflow::BinaryReader& r) {  // throws SerialError on bad data
    example::Histogram h;
    h.low = r.get<double>("low");
    h.high = r.get<double>("high");
    h.counts = r.block<std::size_t>("counts");
    return h;
  }
};
