#pragma once
// A small STAR / CIF reader, enough for mmCIF coordinate files and NEF (NMR Exchange Format).
//
// Syntax (CIF 1.1 / STAR as used by NEF 1.1, https://github.com/NMRExchangeFormat/NEF):
//   data_NAME            a data block (NEF and mmCIF files hold one; several are accepted)
//   save_NAME ... save_  a save frame (NEF); items and loops outside frames belong to the block
//   _tag value           an item; the value may be on the next line
//   loop_ _t1 _t2 ... v v v ...  [stop_]   a table, values row-major
//   'a b' "a b"          quoted values; a quote ends only when followed by white space
//   ;text ... \n;        a multi-line text field (the lines between the two ';' lines)
//   # comment            from '#' at the start of a token to the end of the line
//   .  ?                 unquoted: "inapplicable" / "unknown" (StarValue::is_null())
// Tags and reserved words are matched case-insensitively (tags are stored lower case).
#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "gemflow/io/limits.hpp"

namespace gemflow::io {

/// One value with the line it was read from.
struct StarValue {
  std::string text;
  int line = 0;
  bool quoted = false;  ///< quoted or text field: '.' and '?' are then literal
  /// Unquoted '.' or '?'.
  [[nodiscard]] bool is_null() const noexcept { return !quoted && (text == "." || text == "?"); }
};

/// A loop_: tags (lower case) and values row-major; values.size() is a multiple of tags.size().
struct StarLoop {
  std::vector<std::string> tags;
  std::vector<StarValue> values;
  int line = 0;  ///< line of the loop_ keyword
  [[nodiscard]] std::size_t rows() const noexcept { return tags.empty() ? 0 : values.size() / tags.size(); }
  /// Column of a tag (exact, lower case, e.g. "_atom_site.cartn_x"); -1 when absent.
  [[nodiscard]] int column(std::string_view tag) const noexcept;
  [[nodiscard]] const StarValue& at(std::size_t row, std::size_t col) const { return values[row * tags.size() + col]; }
  /// True when any tag starts with `category` + "." (e.g. "_nef_distance_restraint").
  [[nodiscard]] bool has_category(std::string_view category) const noexcept;
};

/// A save frame (or the block's own items and loops outside any frame; then name is "").
struct StarFrame {
  std::string name;  ///< text after "save_"
  int line = 0;
  std::vector<std::pair<std::string, StarValue>> items;  ///< tag (lower case), value
  std::vector<StarLoop> loops;
  [[nodiscard]] const StarValue* item(std::string_view tag) const noexcept;
};

struct StarBlock {
  std::string name;  ///< text after "data_"
  int line = 0;
  StarFrame global;  ///< items and loops outside save frames
  std::vector<StarFrame> frames;
};

struct StarFile {
  std::string path;
  std::vector<StarBlock> blocks;
};

/// Parses STAR/CIF text. `path` only names the source in errors.
/// Throws ParseError (file:line) for: an unterminated quote or text field, a value without a
/// tag, a loop whose value count is not a multiple of its tag count, a loop without tags,
/// an unterminated or nested save frame, content before the first data_ block.
/// `cancel` is polled every 4096 tokens (ReadCancelled).
[[nodiscard]] StarFile parse_star(std::string_view text, const std::string& path, const CancelCheck& cancel = {});
/// Reads and parses a file; ParseError when it cannot be read.
[[nodiscard]] StarFile read_star_file(const std::string& path, const CancelCheck& cancel = {});

/// Reads a whole file into a string; ParseError (file, line 0) when it cannot be opened or is a
/// folder. Every reader of the io plugin goes through it.
[[nodiscard]] std::string read_text_file(const std::string& path);

}  // namespace gemflow::io
