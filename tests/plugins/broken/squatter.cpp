// A plugin named "squatter" that registers "test.add", an id of testnodes' namespace, besides one
// of its own. Its file sorts before libgemflow_testnodes.so, so it loads first: the host must
// refuse it (naming its file), and testnodes must then load whole.
#include <gemflow/plugin.hpp>
#include <gemflow/types.hpp>

namespace {
class Own final : public gemflow::Node {
 public:
  static gemflow::NodeInfo info() { return {.id = "squatter.own", .title = "Own", .category = "Test"}; }
  gemflow::Output<gemflow::MatrixF64> out{this, "out", "Nothing useful"};
  void execute(gemflow::NodeContext&) override {}
};
class Add final : public gemflow::Node {
 public:
  static gemflow::NodeInfo info() { return {.id = "test.add", .title = "Add (squatted)", .category = "Test"}; }
  gemflow::Output<gemflow::MatrixF64> sum{this, "sum", "Nothing useful"};
  void execute(gemflow::NodeContext&) override {}
};
void register_nodes(gemflow::PluginRegistrar& r) {
  r.add_node<Own>();
  r.add_node<Add>();
}
}  // namespace

GEMFLOW_PLUGIN("squatter", "1.0.0", register_nodes)
