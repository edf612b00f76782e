#pragma once
#include <gemflow/plugin.hpp>

namespace gemflow::linalg {
/// linalg.cholesky (nodes/cholesky_node.cpp).
void register_cholesky_nodes(PluginRegistrar& r);
}  // namespace gemflow::linalg
