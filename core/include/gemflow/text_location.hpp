#pragma once
// Lines of errors in a text, for readers whose parser reports a byte offset or quotes the
// offending text (nlohmann::json), so that every error names its file and line.
#include <cstddef>
#include <string_view>

namespace gemflow {

/// 1-based line of `text` that holds byte offset `byte` (offsets past the end count as the last
/// line): for parsers that report byte offsets, such as nlohmann::json's parse_error::byte.
[[nodiscard]] int line_of_byte(std::string_view text, std::size_t byte);

/// 1-based line of the first occurrence in `text` of the last '…'-quoted token of `message`, 0
/// when there is none: locates errors whose message quotes the offending text but gives no
/// offset, such as nlohmann::json's out_of_range 406 ("number overflow parsing '5e521'").
[[nodiscard]] int line_of_quoted_token(std::string_view text, std::string_view message);

}  // namespace gemflow
