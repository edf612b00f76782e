// The io plugin: structures (PDB, mmCIF, VTP), NMR distance restraints (NEF, Xplor-NIH .tbl),
// dense matrices (Matrix Market, .npy, CSV), tables (JSON, CSV) and images (PNG).
#include <gemflow/plugin.hpp>

#include "register.hpp"

static void register_io(gemflow::PluginRegistrar& r) {
  gemflow::io::register_structure_nodes(r);
  gemflow::io::register_restraint_nodes(r);
  gemflow::io::register_matrix_nodes(r);
  gemflow::io::register_table_nodes(r);
  gemflow::io::register_molecule_nodes(r);
  gemflow::io::register_image_nodes(r);
}

GEMFLOW_PLUGIN_ENTRY(register_io)
