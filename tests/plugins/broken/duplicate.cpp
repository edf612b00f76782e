// A second plugin named "test" that registers a node id already owned by testnodes ("test.add"),
// after one node of its own: the host must refuse the plugin, name both files and keep none of
// its nodes.
#include <gemflow/plugin.hpp>
#include <gemflow/types.hpp>

namespace {
class Unique final : public gemflow::Node {
 public:
  static gemflow::NodeInfo info() { return {.id = "test.dup_unique", .title = "Unique", .category = "Test"}; }
  gemflow::Output<gemflow::MatrixF64> out{this, "out", "Nothing useful"};
  void execute(gemflow::NodeContext&) override {}
};
class Add final : public gemflow::Node {
 public:
  static gemflow::NodeInfo info() { return {.id = "test.add", .title = "Add (duplicate)", .category = "Test"}; }
  gemflow::Output<gemflow::MatrixF64> sum{this, "sum", "Nothing useful"};
  void execute(gemflow::NodeContext&) override {}
};
void register_nodes(gemflow::PluginRegistrar& r) {
  r.add_node<Unique>();
  r.add_node<Add>();
}
}  // namespace

GEMFLOW_PLUGIN("test", "1.0.0", register_nodes)
