// Scaffold: nodes are added here as they land.
#include "register.hpp"

namespace gemflow::distgeom {
void register_smoothing_nodes(PluginRegistrar& /*r*/) {}
}  // namespace gemflow::distgeom
