// One of two plugins that define the data type "test.Shape" with different layouts (this one:
// one double). Loaded after the other, the host must refuse it and name both files.
#include <gemflow/plugin.hpp>
#include <gemflow/types.hpp>

namespace layout_test {
struct Shape {
  double x = 0;
};
}  // namespace layout_test

template <>
struct gemflow::DataType<layout_test::Shape> {
  static constexpr std::string_view name = "test.Shape";
  static constexpr std::string_view doc = "A shape (one double)";
  static std::string summary(const layout_test::Shape&) { return "shape"; }
};

namespace {
class MakeShape final : public gemflow::Node {
 public:
  static gemflow::NodeInfo info() { return {.id = "shape_a.make", .title = "Make shape", .category = "Test"}; }
  gemflow::Output<layout_test::Shape> out{this, "shape", "A shape"};
  void execute(gemflow::NodeContext&) override { out.set(layout_test::Shape{}); }
};
void register_nodes(gemflow::PluginRegistrar& r) {
  r.add_type<layout_test::Shape>();
  r.add_node<MakeShape>();
}
}  // namespace

GEMFLOW_PLUGIN("shape_a", "1.0.0", register_nodes)
