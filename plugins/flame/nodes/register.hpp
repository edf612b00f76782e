#pragma once
#include <gemflow/plugin.hpp>

namespace gemflow::flame {
/// The Flame and FlameSet types, flame.read, flame.list, flame.render, flame.render_all
/// (nodes/flame_nodes.cpp).
void register_flame_nodes(PluginRegistrar& r);
}  // namespace gemflow::flame
