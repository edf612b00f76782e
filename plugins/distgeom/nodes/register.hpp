#pragma once
#include <gemflow/plugin.hpp>

namespace gemflow::distgeom {
/// distgeom.triangle_smoothing (nodes/smoothing_nodes.cpp).
void register_smoothing_nodes(PluginRegistrar& r);
/// distgeom.bounds, bounds_from_structure, metrize, metric_matrix, embed, refine, compare
/// (nodes/embedding_nodes.cpp).
void register_embedding_nodes(PluginRegistrar& r);
/// distgeom.compare, distgeom.report (nodes/compare_nodes.cpp); called by register_embedding_nodes.
void register_compare_nodes(PluginRegistrar& r);
/// The BoundsBatch type, distgeom.bounds_from_molecules and
/// distgeom.smooth_batch (nodes/batch_nodes.cpp).
void register_batch_nodes(PluginRegistrar& r);
/// distgeom.topology, topology_from_residues (nodes/topology_nodes.cpp).
void register_topology_nodes(PluginRegistrar& r);
/// distgeom.anneal, distgeom.ensemble (nodes/anneal_nodes.cpp).
void register_anneal_nodes(PluginRegistrar& r);
}  // namespace gemflow::distgeom
