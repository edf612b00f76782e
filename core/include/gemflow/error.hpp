#pragma once
// Errors raised by Gemflow and its plugins.
#include <stdexcept>
#include <string>

namespace gemflow {

/// Where in a text file something went wrong (1-based line and column; 0 = unknown).
struct SourceLocation {
  std::string file;
  int line = 0;
  int column = 0;
  /// "file:line:col", "file:line" or "file" depending on what is known.
  [[nodiscard]] std::string str() const;
};

/// Base class of every error Gemflow raises on purpose. `what()` is the full, user-facing text.
class Error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// Malformed or inconsistent input data (a file, a port value). Carries the file location when
/// there is one; `what()` then starts with "file:line:col: ".
class InputError : public Error {
 public:
  explicit InputError(const std::string& message) : Error(message) {}
  InputError(SourceLocation where, const std::string& message);
  [[nodiscard]] const SourceLocation& where() const noexcept { return where_; }

 private:
  SourceLocation where_;
};

/// A requested device or resource cannot be used (no CUDA device, out of memory ...).
class DeviceError : public Error {
 public:
  using Error::Error;
};

/// Thrown by NodeContext::throw_if_cancelled(); the executor reports the node as cancelled.
class Cancelled : public Error {
 public:
  Cancelled() : Error("cancelled") {}
};

}  // namespace gemflow
