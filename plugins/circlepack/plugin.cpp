// The circlepack plugin: circle packings of triangulated disks, layout, flattening, drawing.
#include <gemflow/plugin.hpp>

#include "register.hpp"

static void register_circlepack(gemflow::PluginRegistrar& r) {
  gemflow::circlepack::register_lattice_nodes(r);
  gemflow::circlepack::register_pack_nodes(r);
}

GEMFLOW_PLUGIN_ENTRY(register_circlepack)
