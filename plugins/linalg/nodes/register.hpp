#pragma once
#include <gemflow/plugin.hpp>

namespace gemflow::linalg {
/// linalg.cholesky (nodes/cholesky_node.cpp).
void register_cholesky_nodes(PluginRegistrar& r);
/// linalg.spd_solve (nodes/solve_nodes.cpp).
void register_solve_nodes(PluginRegistrar& r);
}  // namespace gemflow::linalg
