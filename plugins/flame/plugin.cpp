// The flame plugin: fractal flames (flam3 files) rendered on the CPU and on CUDA devices.
#include <gemflow/plugin.hpp>

#include "register.hpp"

static void register_flame(gemflow::PluginRegistrar& r) { gemflow::flame::register_flame_nodes(r); }

GEMFLOW_PLUGIN_ENTRY(register_flame)
