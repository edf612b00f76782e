// An example third-party plugin: one node, `example.scale`, that multiplies a matrix by a factor.
// Built out-of-tree against the installed SDK (see CMakeLists.txt).
#include <gemflow/plugin.hpp>
#include <gemflow/types.hpp>

namespace example {

/// Multiplies every element of a matrix by `factor`.
///
/// Inputs:  matrix (Matrix<f64>, any shape)
/// Outputs: scaled (Matrix<f64>, same shape): scaled(i, j) = factor · matrix(i, j)
/// Params:  factor (float, default 2, no unit)
/// Device memory: none (CPU only). Determinism: exact (one multiplication per element).
class Scale final : public gemflow::Node {
 public:
  static gemflow::NodeInfo info() {
    return {.id = "example.scale",
            .version = 1,
            .title = "Scale",
            .category = "Examples",
            .doc = "Multiplies every element of a matrix by a factor."};
  }
  gemflow::Input<gemflow::MatrixF64> matrix{this, "matrix", "Matrix to scale (any shape)"};
  gemflow::Output<gemflow::MatrixF64> scaled{this, "scaled", "factor · matrix, same shape"};
  gemflow::Param<double> factor{this, "factor", 2.0, {.doc = "Multiplier"}};

  void execute(gemflow::NodeContext& ctx) override {
    const gemflow::MatrixF64& m = *matrix;
    gemflow::MatrixF64 r(m.rows(), m.cols());
    for (std::size_t i = 0; i < m.size(); ++i) r.data()[i] = *factor * m.data()[i];
    ctx.record("elements", static_cast<std::int64_t>(m.size()));
    scaled.set(std::move(r));
  }
};

void register_nodes(gemflow::PluginRegistrar& r) { r.add_node<Scale>(); }

}  // namespace example

GEMFLOW_PLUGIN("example", "1.0.0", example::register_nodes)
