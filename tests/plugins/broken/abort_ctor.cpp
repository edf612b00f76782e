// A plugin whose load-time code (a static constructor, run inside dlopen) calls abort(): the
// host must survive it and report the file as "crashed while loading (signal 6, SIGABRT)".
#include <cstdio>
#include <cstdlib>

#include <gemflow/plugin.hpp>

namespace {
struct AbortAtLoad {
  AbortAtLoad() {
    std::fputs("abort_ctor: cannot initialise the licence server\n", stderr);
    std::abort();
  }
};
const AbortAtLoad abort_at_load;

void register_nodes(gemflow::PluginRegistrar&) {}
}  // namespace

GEMFLOW_PLUGIN("abort_ctor", "1.0.0", register_nodes)
