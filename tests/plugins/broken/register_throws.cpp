// A plugin whose registration throws after registering one node: the host must keep none of
// its nodes.
#include <stdexcept>

#include <gemflow/plugin.hpp>
#include <gemflow/types.hpp>

namespace {
class First final : public gemflow::Node {
 public:
  static gemflow::NodeInfo info() { return {.id = "test_throws.first", .title = "First", .category = "Test"}; }
  gemflow::Output<gemflow::MatrixF64> out{this, "out", "Nothing useful"};
  void execute(gemflow::NodeContext&) override {}
};
void register_nodes(gemflow::PluginRegistrar& r) {
  r.add_node<First>();
  throw std::runtime_error("cannot open the licence file");
}
}  // namespace

GEMFLOW_PLUGIN("register_throws", "1.0.0", register_nodes)
