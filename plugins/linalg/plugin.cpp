// The linalg plugin: dense factorisations.
#include <gemflow/plugin.hpp>

#include "register.hpp"

static void register_linalg(gemflow::PluginRegistrar& r) {
  gemflow::linalg::register_cholesky_nodes(r);
  gemflow::linalg::register_solve_nodes(r);
}

GEMFLOW_PLUGIN_ENTRY(register_linalg)
