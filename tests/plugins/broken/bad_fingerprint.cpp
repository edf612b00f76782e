// A plugin whose fingerprint names another SDK version: refused before registration.
#include <stdexcept>

#include <gemflow/plugin.hpp>

extern "C" BOOST_SYMBOL_EXPORT const int gemflow_plugin_api_version = GEMFLOW_PLUGIN_API_VERSION;
extern "C" BOOST_SYMBOL_EXPORT const char gemflow_plugin_fingerprint[] = "sdk=0.0.0-other;api=" GEMFLOW_STRINGIFY(
    GEMFLOW_PLUGIN_API_VERSION) ";stdlib=" GEMFLOW_STDLIB_ ";cuda=" GEMFLOW_SDK_CUDA ";compiler=some-other-compiler";
extern "C" BOOST_SYMBOL_EXPORT const char gemflow_plugin_name[] = "bad_fingerprint";
extern "C" BOOST_SYMBOL_EXPORT const char gemflow_plugin_version[] = "1.0.0";
extern "C" BOOST_SYMBOL_EXPORT void gemflow_plugin_register(gemflow::PluginRegistrar&) {
  throw std::logic_error("bad_fingerprint: register must never be called");
}
