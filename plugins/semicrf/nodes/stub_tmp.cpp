#include "register.hpp"
namespace gemflow::semicrf {
void register_model_nodes(PluginRegistrar&) {}
void register_decode_nodes(PluginRegistrar&) {}
void register_report_nodes(PluginRegistrar&) {}
}
