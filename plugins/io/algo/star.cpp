// STAR / CIF reader (see gemflow/io/star.hpp for the syntax handled).
#include "gemflow/io/star.hpp"

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <utility>
#include <vector>

#include "gemflow/io/errors.hpp"
#include "gemflow/io/limits.hpp"
#include "text.hpp"

namespace gemflow::io {

namespace {

std::string lower(std::string_view s) {
  std::string r(s);
  for (auto& c : r) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return r;
}

bool starts_with_ci(std::string_view s, std::string_view prefix) {
  if (s.size() < prefix.size()) return false;
  for (std::size_t i = 0; i < prefix.size(); ++i)
    if (std::tolower(static_cast<unsigned char>(s[i])) != prefix[i]) return false;
  return true;
}

struct Token {
  enum Kind { End, Word, Quoted, Text } kind = End;
  std::string text;
  int line = 0;
};

class Lexer {
 public:
  Lexer(std::string_view text, const std::string& path) : s_(text), path_(path) {}

  Token next() {
    for (;;) {
      // skip white space, tracking lines
      // The same white space as ends a word below: a '\v' or '\f' skipped by neither made an
      // empty word forever (fuzzing: 15 GB of empty values from one vertical tab).
      while (i_ < s_.size() && std::isspace(static_cast<unsigned char>(s_[i_]))) {
        if (s_[i_] == '\n') ++line_;
        ++i_;
      }
      if (i_ >= s_.size()) return {Token::End, {}, line_};
      char c = s_[i_];
      if (c == '#') {
        while (i_ < s_.size() && s_[i_] != '\n') ++i_;
        continue;
      }
      bool at_line_start = i_ == 0 || s_[i_ - 1] == '\n';
      if (c == ';' && at_line_start) return text_field();
      if (c == '\'' || c == '"') return quoted(c);
      std::size_t b = i_;
      while (i_ < s_.size() && !std::isspace(static_cast<unsigned char>(s_[i_]))) ++i_;
      return {Token::Word, std::string(s_.substr(b, i_ - b)), line_};
    }
  }

 private:
  Token quoted(char q) {
    int line = line_;
    std::size_t b = ++i_;
    while (i_ < s_.size() && s_[i_] != '\n') {
      if (s_[i_] == q && (i_ + 1 >= s_.size() || std::isspace(static_cast<unsigned char>(s_[i_ + 1])))) {
        Token t{Token::Quoted, std::string(s_.substr(b, i_ - b)), line};
        ++i_;
        return t;
      }
      ++i_;
    }
    throw ParseError(path_, line, std::string("unterminated quoted value (missing closing ") + q + ")");
  }
  Token text_field() {
    int line = line_;
    ++i_;  // the ';'
    std::size_t b = i_;
    for (;;) {
      std::size_t nl = s_.find('\n', i_);
      if (nl == std::string_view::npos)
        throw ParseError(path_, line, "unterminated text field (no closing line starting with ';')");
      ++line_;
      i_ = nl + 1;
      if (i_ < s_.size() && s_[i_] == ';') {
        std::string t(s_.substr(b, nl - b));
        if (!t.empty() && t.back() == '\r') t.pop_back();
        ++i_;
        return {Token::Text, std::move(t), line};
      }
    }
  }

  std::string_view s_;
  const std::string& path_;
  std::size_t i_ = 0;
  int line_ = 1;
};

bool is_reserved(const Token& t) {
  if (t.kind != Token::Word) return false;
  return starts_with_ci(t.text, "data_") || starts_with_ci(t.text, "save_") || starts_with_ci(t.text, "loop_") ||
         starts_with_ci(t.text, "stop_") || starts_with_ci(t.text, "global_");
}
bool is_tag(const Token& t) { return t.kind == Token::Word && !t.text.empty() && t.text[0] == '_'; }
StarValue to_value(const Token& t) { return {t.text, t.line, t.kind != Token::Word}; }

}  // namespace

int StarLoop::column(std::string_view tag) const noexcept {
  for (std::size_t i = 0; i < tags.size(); ++i)
    if (tags[i] == tag) return static_cast<int>(i);
  return -1;
}

bool StarLoop::has_category(std::string_view category) const noexcept {
  for (const auto& t : tags)
    if (t.size() > category.size() && t.compare(0, category.size(), category) == 0 && t[category.size()] == '.')
      return true;
  return false;
}

const StarValue* StarFrame::item(std::string_view tag) const noexcept {
  for (const auto& [t, v] : items)
    if (t == tag) return &v;
  return nullptr;
}

StarFile parse_star(std::string_view text, const std::string& path, const CancelCheck& cancel) {
  std::string storage;  // a UTF-8 byte-order mark was a "value without a tag" (QA)
  text = detail::prepared_text(text, path, storage);
  StarFile file;
  file.path = path;
  Lexer lex(text, path);
  StarBlock* block = nullptr;
  StarFrame* frame = nullptr;
  bool in_save = false;
  int save_line = 0;
  Token t = lex.next();
  std::size_t tick = 0;
  auto need_block = [&](const Token& tok) {
    if (!block) throw ParseError(path, tok.line, "'" + tok.text + "' before the first data_ block");
  };
  while (t.kind != Token::End) {
    detail::poll_cancel(cancel, tick);
    if (t.kind == Token::Word && starts_with_ci(t.text, "data_")) {
      if (in_save) throw ParseError(path, save_line, "save frame opened here is not closed (missing save_)");
      file.blocks.push_back({t.text.substr(5), t.line, {}, {}});
      block = &file.blocks.back();
      frame = &block->global;
      t = lex.next();
    } else if (t.kind == Token::Word && starts_with_ci(t.text, "save_")) {
      need_block(t);
      std::string name = t.text.substr(5);
      if (name.empty()) {
        if (!in_save) throw ParseError(path, t.line, "save_ closes a save frame, but none is open");
        in_save = false;
        frame = &block->global;
      } else {
        if (in_save)
          throw ParseError(path, t.line,
                           "save frame 'save_" + name + "' opened inside the frame opened at line " +
                               std::to_string(save_line) + " (missing save_)");
        block->frames.push_back({name, t.line, {}, {}});
        frame = &block->frames.back();
        in_save = true;
        save_line = t.line;
      }
      t = lex.next();
    } else if (t.kind == Token::Word && starts_with_ci(t.text, "loop_")) {
      need_block(t);
      StarLoop loop;
      loop.line = t.line;
      t = lex.next();
      while (is_tag(t)) {
        loop.tags.push_back(lower(t.text));
        t = lex.next();
      }
      if (loop.tags.empty()) throw ParseError(path, loop.line, "loop_ without tags");
      int last_line = loop.line;
      std::vector<std::pair<int, std::size_t>> per_line;  // (line, values starting on it), in order
      while (t.kind != Token::End && !is_tag(t) && !is_reserved(t)) {
        detail::poll_cancel(cancel, tick);
        last_line = t.line;
        if (per_line.empty() || per_line.back().first != t.line) per_line.emplace_back(t.line, 0);
        ++per_line.back().second;
        loop.values.push_back(to_value(t));
        t = lex.next();
      }
      if (loop.values.size() % loop.tags.size() != 0) {
        std::size_t n = loop.values.size(), k = loop.tags.size();
        // Rows laid out one per line (the usual layout): the first line that is not a whole row is
        // the one at fault (QA: a row missing a value was reported at the end of the loop).
        std::size_t whole = 0;
        while (whole < per_line.size() && per_line[whole].second == k) ++whole;
        if (whole >= 2 && whole < per_line.size() && per_line[whole].second < k)
          throw ParseError(path, per_line[whole].first,
                           "row " + std::to_string(whole + 1) + " of the loop_ of line " + std::to_string(loop.line) +
                               " (" + loop.tags.front() + " ...) has " + std::to_string(per_line[whole].second) +
                               " of " + std::to_string(k) + " values (the rows before it are one per line)");
        throw ParseError(path, last_line,
                         "loop_ of line " + std::to_string(loop.line) + " (" + loop.tags.front() + " ...) has " +
                             std::to_string(n) + " values for " + std::to_string(k) + " columns: the last row has " +
                             std::to_string(n % k) + " of " + std::to_string(k) + " values");
      }
      if (t.kind == Token::Word && starts_with_ci(t.text, "stop_")) t = lex.next();
      frame->loops.push_back(std::move(loop));
    } else if (is_tag(t)) {
      need_block(t);
      Token tag = t;
      t = lex.next();
      if (t.kind == Token::End || is_tag(t) || is_reserved(t))
        throw ParseError(path, tag.line, "tag " + tag.text + " has no value");
      frame->items.emplace_back(lower(tag.text), to_value(t));
      t = lex.next();
    } else if (t.kind == Token::Word && starts_with_ci(t.text, "stop_")) {
      t = lex.next();  // a stray stop_ is harmless
    } else if (t.kind == Token::Word && starts_with_ci(t.text, "global_")) {
      throw ParseError(path, t.line, "global_ blocks are not supported");
    } else {
      throw ParseError(path, t.line, "value '" + t.text + "' without a tag");
    }
  }
  if (in_save) throw ParseError(path, save_line, "save frame opened here is not closed (missing save_)");
  if (file.blocks.empty()) throw ParseError(path, 0, "no data_ block in the file (not a STAR/CIF file?)");
  return file;
}

std::string read_text_file(const std::string& path) {
  // A folder opens like a file on Linux and reads as empty, which each parser would misreport.
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec)) throw ParseError(path, 0, "is a folder, not a file");
  std::ifstream in(path, std::ios::binary);
  if (!in) throw ParseError(path, 0, std::string("cannot open file: ") + std::strerror(errno));
  std::ostringstream ss;
  ss << in.rdbuf();
  if (in.bad()) throw ParseError(path, 0, "read error");
  return std::move(ss).str();
}

StarFile read_star_file(const std::string& path, const CancelCheck& cancel) {
  return parse_star(read_text_file(path), path, cancel);
}

}  // namespace gemflow::io
