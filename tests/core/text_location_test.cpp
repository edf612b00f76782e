// Locating errors in text: line_of_byte and line_of_quoted_token (gemflow/text_location.hpp).
#include <gtest/gtest.h>

#include <string_view>

#include <gemflow/text_location.hpp>

namespace {

TEST(TextLocation, LineOfByte) {
  constexpr std::string_view text = "ab\ncd\n\nef";
  EXPECT_EQ(gemflow::line_of_byte(text, 0), 1);
  EXPECT_EQ(gemflow::line_of_byte(text, 2), 1);  // the newline ends line 1
  EXPECT_EQ(gemflow::line_of_byte(text, 3), 2);
  EXPECT_EQ(gemflow::line_of_byte(text, 6), 3);
  EXPECT_EQ(gemflow::line_of_byte(text, 7), 4);
  EXPECT_EQ(gemflow::line_of_byte(text, 1000), 4);  // past the end: the last line
  EXPECT_EQ(gemflow::line_of_byte("", 5), 1);
}

TEST(TextLocation, LineOfQuotedToken) {
  constexpr std::string_view text = "{\"a\": [1,\n2,\n5e521]}\n";
  EXPECT_EQ(gemflow::line_of_quoted_token(text, "[json.exception.out_of_range.406] number overflow parsing '5e521'"),
            3);
  EXPECT_EQ(gemflow::line_of_quoted_token(text, "parsing '2,'"), 2);
  // the last quoted token counts
  EXPECT_EQ(gemflow::line_of_quoted_token(text, "'1,' then '5e521'"), 3);
  EXPECT_EQ(gemflow::line_of_quoted_token(text, "no token"), 0);
  EXPECT_EQ(gemflow::line_of_quoted_token(text, "an empty '' token"), 0);
  EXPECT_EQ(gemflow::line_of_quoted_token(text, "one quote ' only"), 0);
  EXPECT_EQ(gemflow::line_of_quoted_token(text, "absent '7e999'"), 0);
}

}  // namespace
