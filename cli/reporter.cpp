#include "reporter.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include <fmt/format.h>
#include <spdlog/spdlog.h>

namespace gemflow::cli {

std::string strip_node_prefix(const std::string& node, const std::string& message) {
  const std::string prefix = "node '" + node + "'";
  if (!message.starts_with(prefix)) return message;
  std::size_t i = prefix.size();
  if (i < message.size() && message[i] == ' ' && i + 1 < message.size() && message[i + 1] == '(') {
    const std::size_t close = message.find(')', i);
    if (close != std::string::npos) i = close + 1;
  }
  if (message.compare(i, 2, ": ") == 0) return message.substr(i + 2);
  return message;
}

const char* level_name(LogLevel l) {
  switch (l) {
    case LogLevel::Debug: return "debug";
    case LogLevel::Info: return "info";
    case LogLevel::Warning: return "warning";
    case LogLevel::Error: return "error";
  }
  return "info";
}

Reporter::Reporter(Mode mode, Console& console, const Workflow& wf)
    : mode_(mode), console_(console), name_(wf.name.empty() && !wf.file.empty() ? wf.file.stem().string() : wf.name) {
  for (const auto& n : wf.nodes) {
    order_.push_back(n.id);
    types_[n.id] = n.type;
    id_width_ = std::max(id_width_, n.id.size());
  }
}

void Reporter::emit_json(const nlohmann::json& j) {
  const std::string text = j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  std::lock_guard lock(json_mutex_);
  std::fwrite(text.data(), 1, text.size(), stdout);
  std::fputc('\n', stdout);
  std::fflush(stdout);
}

namespace {
spdlog::level::level_enum to_spdlog(LogLevel l) {
  switch (l) {
    case LogLevel::Debug: return spdlog::level::debug;
    case LogLevel::Info: return spdlog::level::info;
    case LogLevel::Warning: return spdlog::level::warn;
    case LogLevel::Error: return spdlog::level::err;
  }
  return spdlog::level::info;
}

std::string bar(double fraction, int width) {
  const double f = std::clamp(fraction, 0.0, 1.0);
  const int filled = static_cast<int>(std::floor(f * width));
  std::string s(static_cast<std::size_t>(filled), '=');
  if (filled < width) {
    s += '>';
    s.append(static_cast<std::size_t>(width - filled - 1), ' ');
  }
  return s;
}
}  // namespace

std::vector<std::pair<std::string, NodeState>> Reporter::states() const {
  std::lock_guard lock(mutex_);
  std::vector<std::pair<std::string, NodeState>> out;
  for (const auto& id : order_) {
    auto it = nodes_.find(id);
    out.emplace_back(id, it == nodes_.end() ? NodeState::Idle : it->second.state);
  }
  return out;
}

void Reporter::on_event(const RunEvent& e) {
  if (e.kind == RunEvent::Kind::Preview) return;  // pictures for Studio; a console has no use for them
  const double t = console_.elapsed();
  if (mode_ == Mode::Json) {
    if (e.kind == RunEvent::Kind::State) {  // for states()
      std::lock_guard lock(mutex_);
      nodes_[e.node].state = e.state;
    }
    nlohmann::json j{{"t", std::round(t * 1000.0) / 1000.0}, {"node", e.node}};
    switch (e.kind) {
      case RunEvent::Kind::State:
        j["event"] = "state";
        j["state"] = gemflow::to_string(e.state);
        if (!e.message.empty()) j["message"] = e.message;
        break;
      case RunEvent::Kind::Progress:
        j["event"] = "progress";
        j["progress"] = e.progress;
        j["message"] = e.message;
        break;
      case RunEvent::Kind::Log:
        j["event"] = "log";
        j["level"] = level_name(e.level);
        j["message"] = e.message;
        break;
      case RunEvent::Kind::Preview: return;
    }
    emit_json(j);
    return;
  }

  if (e.kind == RunEvent::Kind::Log) {
    if (e.node.empty()) spdlog::log(to_spdlog(e.level), "{}", e.message);  // about the run, not a node
    else spdlog::log(to_spdlog(e.level), "{}: {}", e.node, e.message);
    return;
  }

  std::vector<std::string> live;
  std::string progress_line;
  NodeView snapshot;
  {
    std::lock_guard lock(mutex_);
    NodeView& v = nodes_[e.node];
    if (e.kind == RunEvent::Kind::Progress) {
      v.progress = e.progress;
      if (!e.message.empty()) v.message = e.message;
      if (mode_ == Mode::Plain)
        if (auto line = v.plain.report(t, e.node, e.progress, v.message)) progress_line = std::move(*line);
    } else {
      if (e.state == NodeState::Running) {
        v.started = t;
        v.progress = -1.0;
        v.message.clear();
      }
      v.state = e.state;
    }
    snapshot = v;
    if (mode_ == Mode::Terminal && e.kind == RunEvent::Kind::State) live = live_lines_locked();
  }
  if (!progress_line.empty()) spdlog::info("{}", progress_line);
  // Progress is redrawn by tick() (every 50 ms), however often nodes report it.
  if (mode_ == Mode::Terminal && e.kind == RunEvent::Kind::State) console_.set_live(std::move(live));
  if (e.kind == RunEvent::Kind::State) state_line(e.node, snapshot, e);
}

void Reporter::state_line(const std::string& node, const NodeView& v, const RunEvent& e) {
  const double seconds = console_.elapsed() - v.started;
  switch (e.state) {
    case NodeState::Running:
      if (mode_ == Mode::Plain) spdlog::info("{}: running ({})", node, types_[node]);
      else spdlog::debug("{}: running ({})", node, types_[node]);
      break;
    case NodeState::Done: spdlog::info("{}: done in {:.2f} s", node, seconds); break;
    case NodeState::Cached: spdlog::info("{}: cached", node); break;
    case NodeState::Failed:
      spdlog::error("{}: failed: {}", node, e.message.empty() ? "(no message)" : strip_node_prefix(node, e.message));
      break;
    case NodeState::Skipped: {
      // A consequence of the failure reported just before (and listed in the summary): info,
      // so that -q shows the cause only.
      const std::string why = strip_node_prefix(node, e.message);
      if (why.empty()) spdlog::info("{}: skipped (an input was not produced)", node);
      else if (why.starts_with("skipped")) spdlog::info("{}: {}", node, why);
      else spdlog::info("{}: skipped: {}", node, why);
      break;
    }
    case NodeState::Cancelled: spdlog::info("{}: cancelled", node); break;
    case NodeState::Idle:
    case NodeState::Queued: break;
  }
}

std::vector<std::string> Reporter::live_lines_locked() const {
  const double t = console_.elapsed();
  std::size_t finished = 0, running = 0;
  for (const auto& [id, v] : nodes_) {
    if (v.state == NodeState::Running) ++running;
    if (v.state == NodeState::Done || v.state == NodeState::Cached || v.state == NodeState::Failed ||
        v.state == NodeState::Skipped || v.state == NodeState::Cancelled)
      ++finished;
  }
  std::vector<std::string> lines;
  if (running == 0) return lines;
  lines.push_back(
      fmt::format("{}  {:.1f}s  {}/{} nodes finished, {} running", name_, t, finished, order_.size(), running));
  for (const auto& id : order_) {
    auto it = nodes_.find(id);
    if (it == nodes_.end() || it->second.state != NodeState::Running) continue;
    const NodeView& v = it->second;
    const std::string pct = v.progress < 0 ? "    " : fmt::format("{:3.0f}%", 100.0 * std::clamp(v.progress, 0.0, 1.0));
    lines.push_back(fmt::format("  {:<{}}  [{}] {}  {:5.1f}s  {}", id, id_width_,
                                bar(v.progress < 0 ? 0.0 : v.progress, 24), pct, t - v.started, v.message));
  }
  return lines;
}

void Reporter::tick() {
  if (mode_ != Mode::Terminal) return;
  std::vector<std::string> live;
  {
    std::lock_guard lock(mutex_);
    live = live_lines_locked();
  }
  console_.set_live(std::move(live));
}

}  // namespace gemflow::cli
