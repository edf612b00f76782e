// A plugin built for another plugin API version: the host must refuse it before registration.
#include <stdexcept>

#include <gemflow/plugin.hpp>

extern "C" BOOST_SYMBOL_EXPORT const int gemflow_plugin_api_version = 999;
extern "C" BOOST_SYMBOL_EXPORT const char gemflow_plugin_fingerprint[] = GEMFLOW_BUILD_FINGERPRINT;
extern "C" BOOST_SYMBOL_EXPORT const char gemflow_plugin_name[] = "bad_api";
extern "C" BOOST_SYMBOL_EXPORT const char gemflow_plugin_version[] = "1.0.0";
extern "C" BOOST_SYMBOL_EXPORT void gemflow_plugin_register(gemflow::PluginRegistrar&) {
  throw std::logic_error("bad_api: register must never be called");
}
