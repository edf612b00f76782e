// io.read_restraints (added with the restraint readers).
#include "register.hpp"

namespace gemflow::io {
void register_restraint_nodes(PluginRegistrar& /*r*/) {}
}  // namespace gemflow::io
