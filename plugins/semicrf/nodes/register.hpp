#pragma once
#include <gemflow/plugin.hpp>

namespace gemflow::semicrf {
/// semicrf.gaussian_emissions, semicrf.fit (nodes/model_nodes.cpp).
void register_model_nodes(PluginRegistrar& r);
/// semicrf.decode, semicrf.marginals, semicrf.change_points (nodes/decode_nodes.cpp).
void register_decode_nodes(PluginRegistrar& r);
/// semicrf.evaluate, semicrf.plot (nodes/report_nodes.cpp).
void register_report_nodes(PluginRegistrar& r);
/// semicrf.bayes_segments (nodes/segment_nodes.cpp).
void register_segment_nodes(PluginRegistrar& r);
}  // namespace gemflow::semicrf
