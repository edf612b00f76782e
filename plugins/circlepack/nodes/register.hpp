#pragma once
#include <gemflow/plugin.hpp>

namespace gemflow::circlepack {
/// circlepack.triangle_lattice, circlepack.disk_lattice (nodes/lattice_nodes.cpp).
void register_lattice_nodes(PluginRegistrar& r);
/// circlepack.pack, layout, flatten, draw (nodes/pack_nodes.cpp).
void register_pack_nodes(PluginRegistrar& r);
}  // namespace gemflow::circlepack
