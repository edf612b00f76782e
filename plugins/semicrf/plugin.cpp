// The semicrf plugin: semi-Markov CRF segmentation of signals.
#include <gemflow/plugin.hpp>

#include "register.hpp"

static void register_semicrf(gemflow::PluginRegistrar& r) {
  gemflow::semicrf::register_model_nodes(r);
  gemflow::semicrf::register_decode_nodes(r);
  gemflow::semicrf::register_report_nodes(r);
  gemflow::semicrf::register_segment_nodes(r);
}

GEMFLOW_PLUGIN_ENTRY(register_semicrf)
