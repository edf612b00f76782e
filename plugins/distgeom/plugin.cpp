// The distgeom plugin: distance geometry from bounds to refined structures.
#include <gemflow/plugin.hpp>

#include "register.hpp"

static void register_distgeom(gemflow::PluginRegistrar& r) {
  gemflow::distgeom::register_smoothing_nodes(r);
  gemflow::distgeom::register_embedding_nodes(r);
  gemflow::distgeom::register_batch_nodes(r);
  gemflow::distgeom::register_topology_nodes(r);
  gemflow::distgeom::register_anneal_nodes(r);
}

GEMFLOW_PLUGIN_ENTRY(register_distgeom)
