#pragma once
#include <gemflow/error.hpp>
#include <gemflow/plugin.hpp>
#include <gemflow/workflow.hpp>  // printable

#include "gemflow/io/errors.hpp"

namespace gemflow::io {
/// io.read_structure, io.write_structure (nodes/structure_nodes.cpp).
void register_structure_nodes(PluginRegistrar& r);
/// io.read_restraints (nodes/restraint_nodes.cpp).
void register_restraint_nodes(PluginRegistrar& r);
/// io.read_matrix, io.write_matrix (nodes/matrix_nodes.cpp).
void register_matrix_nodes(PluginRegistrar& r);
/// io.write_table (nodes/table_nodes.cpp).
void register_table_nodes(PluginRegistrar& r);
/// The MoleculeSet type and io.read_molecules (nodes/molecule_nodes.cpp).
void register_molecule_nodes(PluginRegistrar& r);
/// io.read_image, io.write_image (nodes/image_nodes.cpp).
void register_image_nodes(PluginRegistrar& r);

/// The core error for a ParseError of the io algorithms (same file and line); control bytes the
/// message quotes from the file are written as \xNN (a NUL cut what() short).
inline InputError to_input_error(const ParseError& e) {
  return InputError(SourceLocation{e.file(), e.line(), 0}, printable(e.message()));
}
}  // namespace gemflow::io
