#include "gemflow/error.hpp"

namespace gemflow {

std::string SourceLocation::str() const {
  // Appended piece by piece: `":" + std::to_string(n)` trips GCC 12's -Wrestrict (a false
  // positive in std::string's operator+).
  std::string s = file;
  if (line > 0) {
    s += ':';
    s += std::to_string(line);
    if (column > 0) {
      s += ':';
      s += std::to_string(column);
    }
  }
  return s;
}

InputError::InputError(SourceLocation where, const std::string& message)
    : Error(where.file.empty() ? message : where.str() + ": " + message), where_(std::move(where)) {}

}  // namespace gemflow
