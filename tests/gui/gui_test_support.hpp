// Helpers shared by the Studio GUI tests: the test-node registry, files under a test folder, one
// turn of the event loop, and a graph's links as text.
#pragma once

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <QCoreApplication>
#include <QEvent>

#include <gemflow/plugin_loader.hpp>
#include <gemflow/registry.hpp>

#include "model/graph_model.hpp"

namespace gemflow::studio::testing {

/// The registry of the test plugin `testnodes` (build/test-plugins/testnodes), loaded once.
inline Registry& testnodes_registry() {
  static Registry reg;
  static bool loaded = false;
  if (!loaded) {
    PluginHost host(reg);
    host.load_directory(std::filesystem::path(GEMFLOW_BINARY_DIR) / "test-plugins" / "testnodes");
    loaded = true;
  }
  return reg;
}

/// Writes `text` to dir/name (creating dir) and returns the path.
inline std::filesystem::path write_file(const std::filesystem::path& dir, const std::string& name,
                                        const std::string& text) {
  std::filesystem::create_directories(dir);
  const std::filesystem::path f = dir / name;
  std::ofstream(f) << text;
  return f;
}

/// Turns the event loop once and deletes what was scheduled for deletion (the Inspector's old
/// pages), so that findChild sees only what is shown.
inline void settle() {
  QCoreApplication::processEvents();
  QCoreApplication::sendPostedEvents(nullptr, QEvent::DeferredDelete);
}

/// The workflow's links as "from.port -> to.port" text, in order.
inline std::vector<std::string> link_texts(const GraphModel& m) {
  std::vector<std::string> r;
  for (const auto& l : m.workflow().links) r.push_back(l.str());
  return r;
}

}  // namespace gemflow::studio::testing
