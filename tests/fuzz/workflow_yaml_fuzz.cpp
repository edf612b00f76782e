// libFuzzer harness of the workflow loader: YAML text → parse_workflow (syntax, keys, node types,
// parameters, links) → validate, with the in-tree plugins' node types registered so that
// parameters and ports are checked as in `gemflow validate`. parse_workflow never throws for bad
// content: any exception, crash, sanitizer report or hang is a finding. Valid workflows are also
// saved and read back (to_yaml must give text that loads to the same graph).
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "gemflow/plugin_loader.hpp"
#include "gemflow/registry.hpp"
#include "gemflow/workflow.hpp"

namespace {

const gemflow::Registry& registry() {
  static const gemflow::Registry* reg = [] {
    ::setenv("GEMFLOW_PLUGIN_PROBE", "0", 1);  // no fork per plugin inside the fuzzer
    auto* r = new gemflow::Registry();
    gemflow::PluginHost host(*r);
    host.load_directory(GEMFLOW_FUZZ_PLUGIN_DIR);
    return r;
  }();
  return *reg;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  auto r = gemflow::parse_workflow(text, "fuzz-input.yaml", registry());
  for (const auto& d : r.diagnostics)
    if (d.str().find("fuzz-input.yaml") == std::string::npos) {
      std::fprintf(stderr, "diagnostic without the file's name: %s\n", d.str().c_str());
      std::abort();
    }
  if (r.ok()) {
    const std::string saved = gemflow::to_yaml(*r.workflow);
    auto back = gemflow::parse_workflow(saved, "fuzz-input.yaml", registry());
    if (!back.ok() || gemflow::to_yaml(*back.workflow) != saved) {
      std::fprintf(stderr, "saved workflow does not load back the same:\n%s\n", saved.c_str());
      std::abort();
    }
  }
  return 0;
}
