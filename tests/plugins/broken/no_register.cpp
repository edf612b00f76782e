// A plugin exporting every Gemflow entry point but the register function.
#include <gemflow/plugin.hpp>

extern "C" BOOST_SYMBOL_EXPORT const int gemflow_plugin_api_version = GEMFLOW_PLUGIN_API_VERSION;
extern "C" BOOST_SYMBOL_EXPORT const char gemflow_plugin_fingerprint[] = GEMFLOW_BUILD_FINGERPRINT;
extern "C" BOOST_SYMBOL_EXPORT const char gemflow_plugin_name[] = "no_register";
extern "C" BOOST_SYMBOL_EXPORT const char gemflow_plugin_version[] = "1.0.0";
