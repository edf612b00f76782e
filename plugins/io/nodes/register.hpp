#pragma once
#include <gemflow/error.hpp>
#include <gemflow/plugin.hpp>
#include <gemflow/workflow.hpp>  // printable

#include <map>
#include <string>

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
/// io.read_mesh, io.write_mesh (nodes/mesh_nodes.cpp).
void register_mesh_nodes(PluginRegistrar& r);
/// The MoleculeSet type and io.read_molecules (nodes/molecule_nodes.cpp).
void register_molecule_nodes(PluginRegistrar& r);
/// io.read_image, io.write_image (nodes/image_nodes.cpp).
void register_image_nodes(PluginRegistrar& r);
/// io.read_signal, io.write_segments (nodes/signal_nodes.cpp).
void register_signal_nodes(PluginRegistrar& r);

/// Per-chain residue-number offsets of a node parameter: "A:0, B:-71" → {A: 0, B: -71} (chain as
/// the file writes it, colon, signed integer within ±100000; entries separated by commas or
/// blanks; "" → none). InputError naming the parameter and the entry otherwise.
std::map<std::string, int> parse_chain_offsets(const std::string& text, const std::string& param);

/// The core error for a ParseError of the io algorithms (same file and line); control bytes the
/// message quotes from the file are written as \xNN (a NUL cut what() short).
inline InputError to_input_error(const ParseError& e) {
  return InputError(SourceLocation{e.file(), e.line(), 0}, printable(e.message()));
}
}  // namespace gemflow::io
