#include "console.hpp"

#include <sys/ioctl.h>
#include <unistd.h>

#include <cstdio>

#include <fmt/format.h>
#include <spdlog/sinks/base_sink.h>
#include <spdlog/spdlog.h>

namespace gemflow::cli {

std::size_t terminal_width() {
  winsize ws{};
  if (ioctl(STDERR_FILENO, TIOCGWINSZ, &ws) == 0 && ws.ws_col > 0) return ws.ws_col;
  return 80;
}

std::string fit(std::string_view text, std::size_t width) {
  std::size_t points = 0;
  for (std::size_t i = 0; i < text.size(); ++i) {
    const auto c = static_cast<unsigned char>(text[i]);
    if ((c & 0xC0) == 0x80) continue;  // continuation byte
    if (points == width) return std::string(text.substr(0, i));
    ++points;
  }
  return std::string(text);
}

Console::Console(bool live, bool color) : live_(live), color_(color) {}

Console::~Console() { clear_live(); }

void Console::start_clock() {
  std::lock_guard lock(mutex_);
  start_ = std::chrono::steady_clock::now();
  clock_started_ = true;
}

double Console::elapsed() const {
  if (!clock_started_) return 0.0;
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
}

void Console::erase_locked() {
  if (drawn_ > 0) std::fprintf(stderr, "\x1b[%dA\r\x1b[J", drawn_);
  drawn_ = 0;
}

void Console::draw_locked() {
  const std::size_t width = terminal_width();
  for (const auto& l : block_) {
    const std::string cut = fit(l, width > 1 ? width - 1 : width);
    std::fwrite(cut.data(), 1, cut.size(), stderr);
    std::fputc('\n', stderr);
  }
  drawn_ = static_cast<int>(block_.size());
}

void Console::line(std::string_view text) {
  std::lock_guard lock(mutex_);
  erase_locked();
  std::fwrite(text.data(), 1, text.size(), stderr);
  if (text.empty() || text.back() != '\n') std::fputc('\n', stderr);
  if (live_) draw_locked();
  std::fflush(stderr);
}

void Console::set_live(std::vector<std::string> lines) {
  if (!live_) return;
  std::lock_guard lock(mutex_);
  erase_locked();
  block_ = std::move(lines);
  draw_locked();
  std::fflush(stderr);
}

void Console::clear_live() {
  std::lock_guard lock(mutex_);
  erase_locked();
  block_.clear();
  std::fflush(stderr);
}

namespace {

/// spdlog sink writing through the Console: "[12.3s] warning: message" (time once a run started).
class ConsoleSink final : public spdlog::sinks::base_sink<std::mutex> {
 public:
  explicit ConsoleSink(Console& console) : console_(console) {}

 protected:
  void sink_it_(const spdlog::details::log_msg& msg) override {
    std::string out;
    if (console_.clock_started()) out += fmt::format("[{:.1f}s] ", console_.elapsed());
    const char* color = nullptr;
    switch (msg.level) {
      case spdlog::level::trace:
      case spdlog::level::debug: out += "debug: "; break;
      case spdlog::level::warn:
        out += "warning: ";
        color = "\x1b[33m";
        break;
      case spdlog::level::err:
      case spdlog::level::critical:
        out += "error: ";
        color = "\x1b[31m";
        break;
      default: break;
    }
    out.append(msg.payload.data(), msg.payload.size());
    if (color && console_.color()) out = color + out + "\x1b[0m";
    console_.line(out);
  }
  void flush_() override { std::fflush(stderr); }

 private:
  Console& console_;
};

}  // namespace

void install_logger(Console& console, bool verbose, bool quiet) {
  auto logger = std::make_shared<spdlog::logger>("gemflow", std::make_shared<ConsoleSink>(console));
  logger->set_level(verbose ? spdlog::level::debug : quiet ? spdlog::level::warn : spdlog::level::info);
  logger->flush_on(spdlog::level::trace);
  spdlog::set_default_logger(std::move(logger));
}

}  // namespace gemflow::cli
