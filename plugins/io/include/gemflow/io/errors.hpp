#pragma once
// The one error type of the io algorithms (algo/ knows nothing of Gemflow core; the node
// adapters turn it into gemflow::InputError with the same file and line).
#include <stdexcept>
#include <string>

namespace gemflow::io {

/// Malformed or inconsistent input. what() is "file:line: message" (or "file: message" when
/// line is 0), ready to show to the user.
class ParseError : public std::runtime_error {
 public:
  ParseError(std::string file, int line, std::string message)
      : std::runtime_error(format(file, line, message)),
        file_(std::move(file)),
        line_(line),
        message_(std::move(message)) {}
  [[nodiscard]] const std::string& file() const noexcept { return file_; }
  [[nodiscard]] int line() const noexcept { return line_; }
  /// The message without the "file:line: " prefix.
  [[nodiscard]] const std::string& message() const noexcept { return message_; }

 private:
  static std::string format(const std::string& f, int line, const std::string& m) {
    return line > 0 ? f + ":" + std::to_string(line) + ": " + m : f + ": " + m;
  }
  std::string file_;
  int line_;
  std::string message_;
};

}  // namespace gemflow::io
