#pragma once
// Terminal output of the `gemflow` command: log lines on stderr and, on a terminal, a live block
// of progress lines kept below them and redrawn in place.
#include <chrono>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

#include <spdlog/logger.h>

namespace gemflow::cli {

/// Exit codes of the `gemflow` command (documented in `gemflow --help` and docs/cli.md).
enum ExitCode : int {
  kExitOk = 0,          ///< success
  kExitNodeFailed = 1,  ///< a node failed (other branches ran to the end)
  kExitInvalid = 2,     ///< invalid workflow, unknown node type, bad option or --set
  kExitCancelled = 3,   ///< cancelled by SIGINT/SIGTERM
};

/// Serialises everything written to stderr. On a terminal it keeps a "live" block of lines at
/// the bottom (the running nodes); line() prints above it, set_live() redraws it in place.
/// Thread-safe.
class Console {
 public:
  /// `live` enables the redrawn block (stderr is a terminal); `color` enables ANSI colours.
  Console(bool live, bool color);
  ~Console();
  Console(const Console&) = delete;
  Console& operator=(const Console&) = delete;

  [[nodiscard]] bool live() const noexcept { return live_; }
  [[nodiscard]] bool color() const noexcept { return color_; }
  /// Prints one line (no trailing newline needed) above the live block.
  void line(std::string_view text);
  /// Replaces the live block (terminal only; ignored otherwise). Lines are cut to the width.
  void set_live(std::vector<std::string> lines);
  /// Erases the live block (before the summary is printed).
  void clear_live();
  /// Starts the "[12.3s] " prefix of log lines, counted from now.
  void start_clock();
  [[nodiscard]] double elapsed() const;
  [[nodiscard]] bool clock_started() const noexcept { return clock_started_; }

 private:
  void erase_locked();
  void draw_locked();
  std::mutex mutex_;
  bool live_;
  bool color_;
  bool clock_started_ = false;
  std::chrono::steady_clock::time_point start_;
  std::vector<std::string> block_;
  int drawn_ = 0;  ///< lines of the block currently on screen
};

/// Makes spdlog's default logger write through `console` ("warning: ..." / "[1.2s] ...").
/// Level: debug when verbose, warn when quiet, else info.
void install_logger(Console& console, bool verbose, bool quiet);

/// Cuts `text` to at most `width` code points (UTF-8 aware).
[[nodiscard]] std::string fit(std::string_view text, std::size_t width);
/// Terminal width of stderr (80 when unknown).
[[nodiscard]] std::size_t terminal_width();

}  // namespace gemflow::cli
