#pragma once
// When plain output (a pipe, a log file) prints a running node's progress line.
#include <algorithm>
#include <cmath>
#include <optional>
#include <string>

#include <fmt/format.h>

namespace gemflow::cli {

/// Decides, report by report, which progress lines of one node plain output prints: a line when
/// the progress crosses a 10 % step (at most one a second), and a heartbeat when the line would
/// say something new (its message or its percent) after 10 s without a line, so that a node
/// that advances slowly or reports coarse steps is not silent for minutes. Not thread-safe (the
/// reporter holds its lock).
class PlainProgressThrottle {
 public:
  static constexpr double kMinGap = 1.0;      ///< seconds between two step lines of a node
  static constexpr double kHeartbeat = 10.0;  ///< seconds of silence before a changed line is printed

  /// A progress report at `t` seconds: the line to print now ("smooth: 40% triangle closure"),
  /// or nothing. `progress` is clamped to [0, 1]; `message` is the node's current message.
  [[nodiscard]] std::optional<std::string> report(double t, const std::string& node, double progress,
                                                  const std::string& message) {
    const double p = std::clamp(progress, 0.0, 1.0);
    const int bucket = static_cast<int>(std::floor(p * 10.0));
    std::string line = fmt::format("{}: {:.0f}%{}{}", node, 100.0 * p, message.empty() ? "" : " ", message);
    const bool step = t - last_line_ >= kMinGap && bucket != last_bucket_;
    const bool heartbeat = t - last_line_ >= kHeartbeat && line != last_text_;
    if (!step && !heartbeat) return std::nullopt;
    last_line_ = t;
    last_bucket_ = bucket;
    last_text_ = line;
    return line;
  }

 private:
  double last_line_ = -1e9;  ///< time of the last line printed
  int last_bucket_ = -1;     ///< its 10 % step
  std::string last_text_;    ///< its text
};

}  // namespace gemflow::cli
