// The io plugin: structures (PDB, mmCIF, VTP) and NMR distance restraints (NEF, Xplor-NIH .tbl).
#include <gemflow/plugin.hpp>

#include "register.hpp"

static void register_io(gemflow::PluginRegistrar& r) {
  gemflow::io::register_structure_nodes(r);
  gemflow::io::register_restraint_nodes(r);
}

GEMFLOW_PLUGIN("io", "0.1.0", register_io)
