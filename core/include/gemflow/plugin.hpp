#pragma once
// Writing a plugin: one shared library, one entry point.
//
//   #include <gemflow/plugin.hpp>
//   static void register_nodes(gemflow::PluginRegistrar& r) { r.add_node<MyNode>(); }
//   GEMFLOW_PLUGIN_ENTRY(register_nodes)
//
// Build it with the CMake helper `gemflow_add_plugin(myplugin SOURCES plugin.cpp)` from
// find_package(Gemflow), which gives the plugin its name and version (the project's version, or
// VERSION) once, as GEMFLOW_PLUGIN_NAME and GEMFLOW_PLUGIN_VERSION. The host reads the API
// version and the build fingerprint first and calls the register function only when both match.
#include <string>

#include <boost/config.hpp>

#include "gemflow/config.hpp"
#include "gemflow/registry.hpp"

namespace gemflow {

/// Bumped on any incompatible change to the plugin interface or the SDK's data types.
inline constexpr int kPluginApiVersion = GEMFLOW_PLUGIN_API_VERSION;

/// What a plugin sees of the host's registry during registration.
class PluginRegistrar {
 public:
  PluginRegistrar(Registry& registry, std::string origin) : registry_(registry), origin_(std::move(origin)) {}
  template <NodeType N>
  void add_node() {
    registry_.add_node<N>(origin_);
  }
  template <class T>
  void add_type() {
    registry_.add_type<T>(origin_);
  }
  [[nodiscard]] const std::string& origin() const noexcept { return origin_; }

 private:
  Registry& registry_;
  std::string origin_;
};

}  // namespace gemflow

/// Build fingerprint of the translation unit that expands it: fields separated by ';'.
/// The host compares every field but "compiler" (informative only).
#define GEMFLOW_STRINGIFY_(x) #x
#define GEMFLOW_STRINGIFY(x) GEMFLOW_STRINGIFY_(x)
#if defined(_GLIBCXX_RELEASE)
#define GEMFLOW_STDLIB_ "libstdc++" GEMFLOW_STRINGIFY(_GLIBCXX_RELEASE) "/abi" GEMFLOW_STRINGIFY(_GLIBCXX_USE_CXX11_ABI)
#elif defined(_LIBCPP_VERSION)
#define GEMFLOW_STDLIB_ "libc++" GEMFLOW_STRINGIFY(_LIBCPP_VERSION)
#else
#define GEMFLOW_STDLIB_ "unknown"
#endif
#if defined(__clang__)
#define GEMFLOW_COMPILER_ "clang-" GEMFLOW_STRINGIFY(__clang_major__)
#elif defined(__GNUC__)
#define GEMFLOW_COMPILER_ "gcc-" GEMFLOW_STRINGIFY(__GNUC__)
#else
#define GEMFLOW_COMPILER_ "unknown"
#endif
#define GEMFLOW_BUILD_FINGERPRINT                                                                             \
  "sdk=" GEMFLOW_SDK_VERSION ";api=" GEMFLOW_STRINGIFY(GEMFLOW_PLUGIN_API_VERSION) ";stdlib=" GEMFLOW_STDLIB_ \
                                                                                   ";cuda=" GEMFLOW_SDK_CUDA  \
                                                                                   ";compiler=" GEMFLOW_COMPILER_

/// Defines the plugin's exported entry points. NAME and VERSION are string literals;
/// REGISTER is a function `void(gemflow::PluginRegistrar&)`. Prefer GEMFLOW_PLUGIN_ENTRY, which
/// takes both from the build; this form is for plugins built without gemflow_add_plugin.
#define GEMFLOW_PLUGIN(NAME, VERSION, REGISTER)                                                       \
  extern "C" BOOST_SYMBOL_EXPORT const int gemflow_plugin_api_version = GEMFLOW_PLUGIN_API_VERSION;   \
  extern "C" BOOST_SYMBOL_EXPORT const char gemflow_plugin_fingerprint[] = GEMFLOW_BUILD_FINGERPRINT; \
  extern "C" BOOST_SYMBOL_EXPORT const char gemflow_plugin_name[] = NAME;                             \
  extern "C" BOOST_SYMBOL_EXPORT const char gemflow_plugin_version[] = VERSION;                       \
  extern "C" BOOST_SYMBOL_EXPORT void gemflow_plugin_register(gemflow::PluginRegistrar& r) { REGISTER(r); }

/// GEMFLOW_PLUGIN with the name and version that gemflow_add_plugin (cmake/GemflowPlugin.cmake)
/// passes to the compiler, so that they are spelled once, in CMake.
#if defined(GEMFLOW_PLUGIN_NAME) && defined(GEMFLOW_PLUGIN_VERSION)
#define GEMFLOW_PLUGIN_ENTRY(REGISTER) GEMFLOW_PLUGIN(GEMFLOW_PLUGIN_NAME, GEMFLOW_PLUGIN_VERSION, REGISTER)
#else
#define GEMFLOW_PLUGIN_ENTRY(REGISTER)                                                              \
  static_assert(false,                                                                              \
                "GEMFLOW_PLUGIN_ENTRY needs GEMFLOW_PLUGIN_NAME and GEMFLOW_PLUGIN_VERSION: build " \
                "the plugin with gemflow_add_plugin() from find_package(Gemflow), or use "          \
                "GEMFLOW_PLUGIN(name, version, register)")
#endif
