#include "gemflow/text_location.hpp"

#include <algorithm>

namespace gemflow {

int line_of_byte(std::string_view text, std::size_t byte) {
  const auto end = text.begin() + static_cast<std::ptrdiff_t>(std::min(byte, text.size()));
  return 1 + static_cast<int>(std::count(text.begin(), end, '\n'));
}

int line_of_quoted_token(std::string_view text, std::string_view message) {
  const auto close = message.rfind('\'');
  if (close == std::string_view::npos || close == 0) return 0;
  const auto open = message.rfind('\'', close - 1);
  if (open == std::string_view::npos || close == open + 1) return 0;
  const auto at = text.find(message.substr(open + 1, close - open - 1));
  return at == std::string_view::npos ? 0 : line_of_byte(text, at);
}

}  // namespace gemflow
