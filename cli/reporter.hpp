#pragma once
// How `gemflow run` shows a run: a redrawn progress block on a terminal, plain lines otherwise,
// or one JSON object per event on stdout (--json).
#include <chrono>
#include <map>
#include <mutex>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "console.hpp"
#include "gemflow/executor.hpp"
#include "gemflow/workflow.hpp"
#include "progress_throttle.hpp"

namespace gemflow::cli {

class Reporter {
 public:
  enum class Mode {
    Terminal,  ///< live block: one line per running node (bar, percent, message), redrawn
    Plain,     ///< "[12.3s] smooth: 40% triangle closure", throttled
    Json,      ///< one JSON object per line on stdout
  };
  Reporter(Mode mode, Console& console, const Workflow& wf);

  /// RunOptions::on_event; called from worker threads.
  void on_event(const RunEvent& e);
  /// Called every ~100 ms by the ticker thread: redraws the live block (elapsed times).
  void tick();
  /// Writes one JSON object as a line on stdout (Json mode; thread-safe).
  void emit_json(const nlohmann::json& j);
  /// The nodes as last reported (any mode): id → state, for a summary written without the run's
  /// result (a forced exit), in file order.
  [[nodiscard]] std::vector<std::pair<std::string, NodeState>> states() const;

  [[nodiscard]] Mode mode() const noexcept { return mode_; }

 private:
  struct NodeView {
    NodeState state = NodeState::Idle;
    double progress = -1.0;  ///< < 0: none reported yet
    std::string message;
    double started = 0.0;         ///< console clock when it started running
    PlainProgressThrottle plain;  ///< which progress reports Plain mode prints
  };
  [[nodiscard]] std::vector<std::string> live_lines_locked() const;
  void state_line(const std::string& node, const NodeView& v, const RunEvent& e);

  Mode mode_;
  Console& console_;
  std::string name_;
  std::vector<std::string> order_;  ///< node ids in file order
  std::map<std::string, std::string> types_;
  std::size_t id_width_ = 4;
  mutable std::mutex mutex_;
  std::map<std::string, NodeView> nodes_;
  std::mutex json_mutex_;
};

/// `message` without a leading "node 'ID' (type): " (the id is printed beside it already).
[[nodiscard]] std::string strip_node_prefix(const std::string& node, const std::string& message);
/// "info", "warning", ...
[[nodiscard]] const char* level_name(LogLevel l);

}  // namespace gemflow::cli
