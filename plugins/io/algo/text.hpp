#pragma once
// Text helpers shared by the io readers (internal to the plugin's algo library).
#include <algorithm>
#include <cctype>
#include <cstddef>
#include <string>
#include <string_view>

#include "gemflow/io/errors.hpp"

namespace gemflow::io::detail {

/// The extension of the file name in `path`, lower case with its dot (".ply"); "" when none.
inline std::string lower_ext(const std::string& path) {
  const auto dot = path.find_last_of('.');
  const auto slash = path.find_last_of('/');
  if (dot == std::string::npos || (slash != std::string::npos && dot < slash)) return "";
  std::string e = path.substr(dot);
  for (char& c : e) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return e;
}

/// Refuses text in UTF-16 or UTF-32 by name (a byte-order mark, or ASCII with a NUL in every other
/// byte): read as bytes it would be blamed on its first field, tag or record. Then drops a UTF-8
/// byte-order mark. Returns the text to parse.
inline std::string_view checked_text(std::string_view text, const std::string& path) {
  const auto byte = [&](std::size_t i) { return i < text.size() ? static_cast<unsigned char>(text[i]) : 0x100u; };
  const char* what = nullptr;
  if (byte(0) == 0xFF && byte(1) == 0xFE)
    what = byte(2) == 0 && byte(3) == 0 ? "UTF-32 (byte-order mark FF FE 00 00)" : "UTF-16 (byte-order mark FF FE)";
  else if (byte(0) == 0xFE && byte(1) == 0xFF) what = "UTF-16 (byte-order mark FE FF)";
  else if (byte(0) == 0 && byte(1) == 0 && byte(2) == 0xFE && byte(3) == 0xFF)
    what = "UTF-32 (byte-order mark 00 00 FE FF)";
  else if (text.size() >= 4) {
    const std::size_t m = std::min<std::size_t>(text.size(), 64) & ~std::size_t{1};
    bool le = true, be = true;
    for (std::size_t i = 0; i < m; i += 2) {
      le = le && byte(i) != 0 && byte(i + 1) == 0;
      be = be && byte(i) == 0 && byte(i + 1) != 0;
    }
    if (le || be) what = le ? "UTF-16 (little-endian, no byte-order mark)" : "UTF-16 (big-endian, no byte-order mark)";
  }
  if (what) throw ParseError(path, 1, std::string("the file is ") + what + ": save it as UTF-8 or ASCII text");
  if (byte(0) == 0xEF && byte(1) == 0xBB && byte(2) == 0xBF) text.remove_prefix(3);  // UTF-8 byte-order mark
  return text;
}

/// checked_text, then the line breaks of classic Mac OS (a lone '\r') turned into '\n', in a
/// copy held by `storage` (only when there are any), so that line-based readers count lines
/// and end comments there. "\r\n" stays.
inline std::string_view prepared_text(std::string_view text, const std::string& path, std::string& storage) {
  text = checked_text(text, path);
  bool lone = false;
  for (std::size_t i = text.find('\r'); i != std::string_view::npos && !lone; i = text.find('\r', i + 1))
    lone = i + 1 >= text.size() || text[i + 1] != '\n';
  if (!lone) return text;
  storage.assign(text);
  for (std::size_t i = 0; i < storage.size(); ++i)
    if (storage[i] == '\r' && (i + 1 >= storage.size() || storage[i + 1] != '\n')) storage[i] = '\n';
  return storage;
}

}  // namespace gemflow::io::detail
