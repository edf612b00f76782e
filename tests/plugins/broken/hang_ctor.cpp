// A plugin whose load-time code (a static constructor, run inside dlopen) never returns: the
// probe must give up after its timeout, and the file must be remembered as failed so that the
// next load does not wait again (until the file changes).
#include <unistd.h>

#include <cstdio>

#include <gemflow/plugin.hpp>

namespace {
struct HangAtLoad {
  HangAtLoad() {
    std::fputs("hang_ctor: waiting for the licence server\n", stderr);
    for (;;) ::sleep(1000);
  }
};
const HangAtLoad hang_at_load;

void register_nodes(gemflow::PluginRegistrar&) {}
}  // namespace

GEMFLOW_PLUGIN("hang_ctor", "1.0.0", register_nodes)
