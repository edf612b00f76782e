// An example third-party plugin, built out-of-tree against the installed SDK (see CMakeLists.txt):
// example.scale multiplies a matrix by a factor, example.clip clips it to a range (a parameter
// group and a rule between parameters), example.histogram counts its values into a plugin data
// type, example.Histogram. docs/plugin-guide.md shows these pieces; its test compiles them from here.
#include <algorithm>
#include <cstddef>
#include <string>
#include <utility>
#include <vector>

#include <gemflow/plugin.hpp>
#include <gemflow/types.hpp>

#include "histogram.hpp"

namespace example {

class Scale final : public gemflow::Node {
 public:
  static gemflow::NodeInfo info() {
    return {.id = "example.scale",
            .version = 1,
            .title = "Scale",
            .category = "Examples",
            .doc = "Multiplies every element of a matrix by a factor.",
            .errors = "None: every finite factor is valid.",
            .memory = "One matrix of the input's shape (host); no device memory.",
            .determinism = "Exact: one multiplication per element."};
  }
  gemflow::Input<gemflow::MatrixF64> matrix{this, "matrix", "Matrix to scale (any shape)"};
  gemflow::Output<gemflow::MatrixF64> scaled{this, "scaled", "factor · matrix, same shape"};
  gemflow::Param<double> factor{this, "factor", 2.0, {.min = -1e6, .max = 1e6, .doc = "Multiplier"}};

  void execute(gemflow::NodeContext& ctx) override {
    const gemflow::MatrixF64& m = *matrix;
    gemflow::MatrixF64 r(m.rows(), m.cols());
    for (std::size_t i = 0; i < m.size(); ++i) r.data()[i] = *factor * m.data()[i];
    ctx.record("elements", static_cast<std::int64_t>(m.size()));
    scaled.set(std::move(r));
  }
};

/// The parameters `low` and `high` of a value range, declared by every node that takes one.
struct RangeParams : gemflow::ParamGroup {
  explicit RangeParams(gemflow::Node* n, Renames r = {})
      : ParamGroup(std::move(r)),
        low{n, name("low"), 0.0, {.doc = "Smallest value kept"}},
        high{n, name("high"), 1.0, {.doc = "Largest value kept"}} {
    done();
  }
  gemflow::Param<double> low;
  gemflow::Param<double> high;
};

class Clip final : public gemflow::Node {
 public:
  static gemflow::NodeInfo info() {
    return {
        .id = "example.clip",
        .version = 1,
        .title = "Clip",
        .category = "Examples",
        .doc = "Clips every element of a matrix to [low, high].",
        .rules = {{.param = "low", .other = "high", .why = "an empty range", .compare = gemflow::ParamCompare::Less}}};
  }
  gemflow::Input<gemflow::MatrixF64> matrix{this, "matrix", "Matrix to clip"};
  gemflow::Output<gemflow::MatrixF64> clipped{this, "clipped", "The matrix, each element in [low, high]"};
  RangeParams range{this};  // the parameters low and high

  void execute(gemflow::NodeContext&) override {
    // the rule keeps workflows from getting here; a test that sets parameters directly can
    if (!(*range.low < *range.high))
      throw gemflow::InputError("parameter 'low' = " + std::to_string(*range.low) + " is not below 'high' = " +
                                std::to_string(*range.high));  // no node id: the executor adds it
    gemflow::MatrixF64 r = *matrix;
    for (double& v : r.span()) v = std::clamp(v, *range.low, *range.high);
    clipped.set(std::move(r));
  }
};

class MakeHistogram final : public gemflow::Node {
 public:
  static gemflow::NodeInfo info() {
    return {.id = "example.histogram",
            .version = 1,
            .title = "Histogram",
            .category = "Examples",
            .doc = "Counts the elements of a matrix into equal bins over [low, high].",
            .rules = {{.param = "low", .other = "high", .compare = gemflow::ParamCompare::Less}}};
  }
  gemflow::Input<gemflow::MatrixF64> matrix{this, "matrix", "Values to count"};
  gemflow::Output<Histogram> histogram{this, "histogram", "Counts per bin"};
  gemflow::Param<std::size_t> bins{this, "bins", 10, {.min = 1, .doc = "Number of bins"}};
  RangeParams range{this};

  void execute(gemflow::NodeContext&) override {
    const double lo = *range.low, hi = *range.high;
    if (!(lo < hi)) throw gemflow::InputError("parameter 'low' is not below 'high'");
    Histogram h{lo, hi, std::vector<std::size_t>(*bins, 0)};
    for (double v : (*matrix).span())
      if (v >= lo && v <= hi)
        ++h.counts[std::min(*bins - 1, static_cast<std::size_t>((v - lo) / (hi - lo) * static_cast<double>(*bins)))];
    histogram.set(std::move(h));
  }
};

void register_nodes(gemflow::PluginRegistrar& r) {
  r.add_type<Histogram>();  // before the nodes whose ports carry it
  r.add_node<Scale>();
  r.add_node<Clip>();
  r.add_node<MakeHistogram>();
}

}  // namespace example

GEMFLOW_PLUGIN_ENTRY(example::register_nodes)  // name and version: gemflow_add_plugin in CMakeLists.txt
