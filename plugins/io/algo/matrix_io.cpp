// Dense matrix readers: Matrix Market, NumPy .npy, CSV (see gemflow/io/matrix_io.hpp).
#include "gemflow/io/matrix_io.hpp"

#include <algorithm>
#include <bit>
#include <cctype>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <limits>
#include <new>
#include <ostream>
#include <stdexcept>
#include <unordered_map>

#include "gemflow/io/errors.hpp"
#include "gemflow/io/limits.hpp"
#include "gemflow/io/star.hpp"  // read_text_file
#include "text.hpp"

namespace gemflow::io {
namespace {

// ---- text helpers ---------------------------------------------------------------------------

/// Lines of a text (detail::prepared_text: no lone '\r'), 1-based numbers, '\r' before '\n'
/// removed.
class Lines {
 public:
  explicit Lines(std::string_view text) : text_(text) {}
  bool next(std::string_view& line) {
    if (pos_ >= text_.size()) return false;
    std::size_t end = text_.find('\n', pos_);
    if (end == std::string_view::npos) end = text_.size();
    line = text_.substr(pos_, end - pos_);
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    pos_ = end + 1;
    ++number_;
    return true;
  }
  [[nodiscard]] int number() const noexcept { return number_; }
  /// Bytes after the current line.
  [[nodiscard]] std::size_t remaining() const noexcept { return pos_ < text_.size() ? text_.size() - pos_ : 0; }

 private:
  std::string_view text_;
  std::size_t pos_ = 0;
  int number_ = 0;
};

bool is_space(char c) { return c == ' ' || c == '\t' || c == '\v' || c == '\f'; }

std::string_view trim(std::string_view s) {
  while (!s.empty() && is_space(s.front())) s.remove_prefix(1);
  while (!s.empty() && is_space(s.back())) s.remove_suffix(1);
  return s;
}

std::vector<std::string_view> split_ws(std::string_view s) {
  std::vector<std::string_view> out;
  std::size_t i = 0;
  while (i < s.size()) {
    while (i < s.size() && is_space(s[i])) ++i;
    const std::size_t b = i;
    while (i < s.size() && !is_space(s[i])) ++i;
    if (i > b) out.push_back(s.substr(b, i - b));
  }
  return out;
}

std::string lower(std::string_view s) {
  std::string r(s);
  for (char& c : r) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return r;
}

std::string show(std::string_view s) {
  constexpr std::size_t kMax = 40;
  std::string t(s.substr(0, kMax));
  if (s.size() > kMax) t += "...";
  return "'" + t + "'";
}

enum class Number { ok, bad, non_finite };

/// A decimal floating-point number (C syntax, optional '+', Fortran 'D' exponent).
Number parse_real(std::string_view t, double& out) {
  if (t.empty()) return Number::bad;
  std::string buf;
  if (t.find_first_of("dD") != std::string_view::npos) {
    buf.assign(t);
    for (char& c : buf)
      if (c == 'd' || c == 'D') c = 'e';
    t = buf;
  }
  const char* b = t.data();
  const char* e = t.data() + t.size();
  if (*b == '+' && ++b != e && (*b == '-' || *b == '+')) return Number::bad;
  auto [p, ec] = std::from_chars(b, e, out);
  if (p != e) return Number::bad;
  if (ec == std::errc::result_out_of_range) {
    // beyond the double range: too large is not finite; too small (e.g. 1e-330) rounds to a
    // signed zero, as numpy and scipy read it (from_chars, not strtod: no locale)
    long double w = 0;
    const auto [q, wec] = std::from_chars(b, e, w);
    bool tiny = false;
    if (wec == std::errc() && q == e) {
      tiny = std::fabs(w) < 1.0L;
    } else {  // beyond long double's range too: the exponent's sign decides
      const std::string_view u(b, static_cast<std::size_t>(e - b));
      const std::size_t x = u.find_first_of("eE");
      tiny = x != std::string_view::npos && x + 1 < u.size() && u[x + 1] == '-';
    }
    if (!tiny) return Number::non_finite;
    out = *b == '-' ? -0.0 : 0.0;
    return Number::ok;
  }
  if (ec != std::errc()) return Number::bad;
  return std::isfinite(out) ? Number::ok : Number::non_finite;
}

bool parse_int64(std::string_view t, std::int64_t& out) {
  if (t.empty()) return false;
  const char* b = t.data();
  const char* e = t.data() + t.size();
  if (*b == '+') ++b;
  auto [p, ec] = std::from_chars(b, e, out);
  return ec == std::errc() && p == e;
}

bool parse_size(std::string_view t, std::size_t& out) {
  if (t.empty() || t.front() == '-') return false;
  const char* b = t.data();
  if (*b == '+') ++b;
  auto [p, ec] = std::from_chars(b, t.data() + t.size(), out);
  return ec == std::errc() && p == t.data() + t.size();
}

constexpr std::int64_t kExactInt = std::int64_t{1} << 53;  // integers up to 2^53 are exact doubles

/// ParseError for a matrix with a zero dimension: no node computes anything from one, and a
/// 10¹²×0 one was accepted and then made the writer loop over its rows.
void refuse_empty(std::size_t rows, std::size_t cols, const std::string& path, int line,
                  const std::string& prefix = "") {
  if (rows == 0 || cols == 0)
    throw ParseError(path, line,
                     prefix + "a " + std::to_string(rows) + "×" + std::to_string(cols) +
                         " matrix has no entries; an empty matrix is not accepted as input");
}

/// ParseError when rows·cols doubles overflow the address space.
void check_dense_size(std::size_t rows, std::size_t cols, const std::string& path, int line) {
  if (cols != 0 && rows > std::numeric_limits<std::size_t>::max() / sizeof(double) / cols)
    throw ParseError(path, line,
                     std::to_string(rows) + "×" + std::to_string(cols) + " is too large for a dense matrix");
}

/// Checks `bytes` of a working allocation against the available memory (as Matrix does for
/// its own, from 256 MiB on), as a ParseError at `line`.
void require_memory(std::size_t bytes, const std::string& what, const std::string& path, int line) {
  if (bytes < (std::size_t{256} << 20)) return;
  try {
    require_host_memory(bytes, what);
  } catch (const OutOfMemory& e) {
    throw ParseError(path, line, e.what());
  }
}

/// rows·cols as a dense allocation; ParseError when it overflows or cannot be allocated.
Matrix<double> allocate(std::size_t rows, std::size_t cols, const std::string& path, int line) {
  check_dense_size(rows, cols, path, line);
  try {
    return Matrix<double>(rows, cols, 0.0);
  } catch (const OutOfMemory& e) {  // the Matrix's own check against the available memory
    throw ParseError(path, line, e.what());
  } catch (const std::bad_alloc&) {
    const double gib = static_cast<double>(rows) * static_cast<double>(cols) * 8.0 / (1024.0 * 1024.0 * 1024.0);
    throw ParseError(path, line,
                     std::to_string(rows) + "×" + std::to_string(cols) + " dense matrix needs " + std::to_string(gib) +
                         " GiB: not enough memory");
  }
}

// ---- Matrix Market ---------------------------------------------------------------------------

enum class MmFormat { coordinate, array };
enum class MmField { real, integer, pattern };
enum class MmSymmetry { general, symmetric, skew };

const char* kBannerForm =
    "'%%MatrixMarket matrix <coordinate|array> <real|integer|pattern> "
    "<general|symmetric|skew-symmetric>'";

}  // namespace

Matrix<double> parse_matrix_market(std::string_view text, const std::string& path, const ReadMatrixOptions& options,
                                   MatrixFileInfo* info) {
  std::string storage;
  text = detail::prepared_text(text, path, storage);
  Lines lines(text);
  std::string_view line;
  if (!lines.next(line)) throw ParseError(path, 0, "empty file (expected the banner " + std::string(kBannerForm) + ")");

  // Banner.
  const auto banner = split_ws(line);
  if (banner.empty() || lower(banner[0]) != "%%matrixmarket")
    throw ParseError(path, 1,
                     "not a Matrix Market file: the first line must be the banner " + std::string(kBannerForm) +
                         ", got " + show(line));
  if (banner.size() != 5)
    throw ParseError(
        path, 1, "the banner must have 5 words " + std::string(kBannerForm) + ", got " + std::to_string(banner.size()));
  const std::string object = lower(banner[1]), fmt = lower(banner[2]), field = lower(banner[3]), sym = lower(banner[4]);
  if (object != "matrix")
    throw ParseError(path, 1, "banner object " + show(banner[1]) + " is not supported (expected 'matrix')");
  MmFormat format;
  if (fmt == "coordinate") format = MmFormat::coordinate;
  else if (fmt == "array") format = MmFormat::array;
  else throw ParseError(path, 1, "banner format " + show(banner[2]) + " is not 'coordinate' or 'array'");
  MmField fld;
  if (field == "real" || field == "double") fld = MmField::real;
  else if (field == "integer") fld = MmField::integer;
  else if (field == "pattern") fld = MmField::pattern;
  else if (field == "complex")
    throw ParseError(path, 1, "complex matrices are not supported (field 'complex'; Matrix<f64> is real)");
  else throw ParseError(path, 1, "banner field " + show(banner[3]) + " is not 'real', 'integer' or 'pattern'");
  MmSymmetry symmetry;
  if (sym == "general") symmetry = MmSymmetry::general;
  else if (sym == "symmetric") symmetry = MmSymmetry::symmetric;
  else if (sym == "skew-symmetric") symmetry = MmSymmetry::skew;
  else if (sym == "hermitian")
    throw ParseError(path, 1, "symmetry 'hermitian' applies to complex matrices only (not supported)");
  else
    throw ParseError(path, 1,
                     "banner symmetry " + show(banner[4]) + " is not 'general', 'symmetric' or 'skew-symmetric'");
  if (format == MmFormat::array && fld == MmField::pattern)
    throw ParseError(path, 1, "'array pattern' is not a valid Matrix Market combination (pattern needs 'coordinate')");
  if (fld == MmField::pattern && symmetry == MmSymmetry::skew)
    throw ParseError(path, 1, "'pattern skew-symmetric' is not a valid Matrix Market combination");

  // Size line (after comments and blank lines).
  bool have_size = false;
  while (lines.next(line)) {
    const auto t = trim(line);
    if (t.empty() || t.front() == '%') continue;
    have_size = true;
    break;
  }
  const std::string size_form = format == MmFormat::coordinate ? "'M N NNZ'" : "'M N'";
  if (!have_size)
    throw ParseError(path, lines.number(),
                     "missing size line " + size_form + ": the file ends after the banner/comments");
  const int size_line = lines.number();
  const auto st = split_ws(line);
  const std::size_t want = format == MmFormat::coordinate ? 3 : 2;
  if (st.size() != want)
    throw ParseError(path, size_line,
                     "size line must be " + size_form + " (" + std::to_string(want) + " integers), got " +
                         std::to_string(st.size()) + " field(s): " + show(line));
  std::size_t rows = 0, cols = 0, nnz = 0;
  for (std::size_t k = 0; k < want; ++k) {
    std::size_t& v = k == 0 ? rows : k == 1 ? cols : nnz;
    if (!parse_size(st[k], v))
      throw ParseError(path, size_line, "size line: " + show(st[k]) + " is not a non-negative integer");
  }
  if (symmetry != MmSymmetry::general && rows != cols)
    throw ParseError(
        path, size_line,
        "a " + sym + " matrix must be square, the size line says " + std::to_string(rows) + "×" + std::to_string(cols));
  refuse_empty(rows, cols, path, size_line, "size line: ");
  // Nothing is allocated before the file shows that it holds the entries it announces (a 60-byte
  // header of 20000×20000 took 3.4 GB): coordinate entries are read first (bounded by the file's
  // size), the dense matrix allocated after; an array is allocated only when the bytes left can
  // hold its values.
  check_dense_size(rows, cols, path, size_line);
  const std::size_t n = rows;
  std::size_t capacity = rows * cols;  // entries the storage can hold
  if (symmetry == MmSymmetry::symmetric) capacity = n * (n + 1) / 2;
  if (symmetry == MmSymmetry::skew) capacity = n * (n - 1) / 2;
  if (format == MmFormat::array) nnz = capacity;
  else if (nnz > capacity && options.duplicates == DuplicateEntries::error)
    throw ParseError(path, size_line,
                     "NNZ = " + std::to_string(nnz) + " exceeds the " + std::to_string(capacity) + " entries a " +
                         std::to_string(rows) + "×" + std::to_string(cols) + " " + sym +
                         " matrix can store without duplicates (duplicates: error)");
  // Entries that the rest of the file can hold at most: "i j v\n" is 6 bytes, "i j\n" 4, "v\n" 2
  // (the last line may lack its '\n').
  const std::size_t min_entry = format == MmFormat::array ? 2 : fld == MmField::pattern ? 4 : 6;
  const std::size_t can_hold = (lines.remaining() + 1) / min_entry;

  auto value_of = [&](std::string_view tok, int ln) -> double {
    if (fld == MmField::integer) {
      std::int64_t v = 0;
      if (!parse_int64(tok, v)) throw ParseError(path, ln, show(tok) + " is not an integer (field 'integer')");
      if (v > kExactInt || v < -kExactInt)
        throw ParseError(path, ln, show(tok) + " is beyond ±2^53 and not exact as a double");
      return static_cast<double>(v);
    }
    double v = 0.0;
    switch (parse_real(tok, v)) {
      case Number::ok: return v;
      case Number::non_finite: throw ParseError(path, ln, show(tok) + " is not a finite number");
      case Number::bad: break;
    }
    throw ParseError(path, ln, show(tok) + " is not a number");
  };

  std::size_t tick = 0;
  std::size_t count = 0, duplicates = 0;
  auto too_few = [&]() {
    return ParseError(path, lines.number(),
                      "the file ends after " + std::to_string(count) + " of the " + std::to_string(nnz) +
                          (format == MmFormat::coordinate ? " entries" : " values") + " the size line (line " +
                          std::to_string(size_line) + ") announces");
  };
  Matrix<double> m;
  if (format == MmFormat::coordinate) {
    struct Entry {
      std::size_t i, j;
      double v;
    };
    std::vector<Entry> entries;
    const std::size_t expect = std::min(nnz, can_hold);
    require_memory(expect * sizeof(Entry), "the " + std::to_string(nnz) + " entries of " + path, path, size_line);
    entries.reserve(expect);
    const bool sum = options.duplicates == DuplicateEntries::sum;
    std::unordered_map<std::size_t, int> first_line;
    if (!sum) {
      require_memory(expect * 48, "the duplicate check of " + std::to_string(nnz) + " entries", path, size_line);
      first_line.reserve(expect);
    }
    const std::size_t fields = fld == MmField::pattern ? 2 : 3;
    const std::string entry_form = fld == MmField::pattern ? "'i j'" : "'i j value'";
    while (lines.next(line)) {
      detail::poll_cancel(options.cancel, tick);
      const auto t = trim(line);
      if (t.empty() || t.front() == '%') continue;
      const int ln = lines.number();
      if (count == nnz)
        throw ParseError(path, ln,
                         "more entries than NNZ = " + std::to_string(nnz) + " of the size line (line " +
                             std::to_string(size_line) + ")");
      const auto tok = split_ws(t);
      if (tok.size() != fields)
        throw ParseError(path, ln,
                         "entry must be " + entry_form + " (" + std::to_string(fields) + " fields for '" + field +
                             "'), got " + std::to_string(tok.size()) + ": " + show(t));
      std::size_t i = 0, j = 0;
      if (!parse_size(tok[0], i) || !parse_size(tok[1], j))
        throw ParseError(path, ln, "row and column indices must be positive integers, got " + show(t));
      if (i < 1 || i > rows || j < 1 || j > cols)
        throw ParseError(path, ln,
                         "index (" + std::to_string(i) + ", " + std::to_string(j) + ") is outside the " +
                             std::to_string(rows) + "×" + std::to_string(cols) + " matrix (indices are 1-based)");
      if (symmetry == MmSymmetry::symmetric && i < j)
        throw ParseError(path, ln,
                         "entry (" + std::to_string(i) + ", " + std::to_string(j) +
                             ") is above the diagonal: a symmetric Matrix Market file stores the lower "
                             "triangle only (i >= j)");
      if (symmetry == MmSymmetry::skew && i <= j)
        throw ParseError(path, ln,
                         "entry (" + std::to_string(i) + ", " + std::to_string(j) +
                             ") is not strictly below the diagonal: a skew-symmetric file stores i > j only");
      const double v = fld == MmField::pattern ? 1.0 : value_of(tok[2], ln);
      --i;
      --j;
      if (!sum) {
        if (auto [it, inserted] = first_line.emplace(i * cols + j, ln); !inserted)
          throw ParseError(path, ln,
                           "entry (" + std::to_string(i + 1) + ", " + std::to_string(j + 1) +
                               ") was already given on line " + std::to_string(it->second) +
                               " (duplicates: error; use 'sum' to add them)");
      }
      entries.push_back({i, j, v});
      ++count;
    }
    if (count < nnz) throw too_few();
    m = allocate(rows, cols, path, size_line);
    std::vector<bool> seen;  // one bit per element: 1/64 of the matrix itself
    if (sum) {
      require_memory(rows / 8 * cols,
                     "the duplicate check of a " + std::to_string(rows) + "×" + std::to_string(cols) + " matrix", path,
                     size_line);
      seen.assign(rows * cols, false);
    }
    for (const Entry& e : entries) {  // file order: duplicates add up as they did while reading
      if (sum) {
        const std::size_t key = e.i * cols + e.j;
        if (seen[key]) ++duplicates;
        seen[key] = true;
      }
      m(e.i, e.j) += e.v;
      if (e.i != e.j && symmetry == MmSymmetry::symmetric) m(e.j, e.i) += e.v;
      if (symmetry == MmSymmetry::skew) m(e.j, e.i) -= e.v;
    }
  } else {
    // Column-major; symmetric: rows j..n-1 of column j; skew: rows j+1..n-1. The values are
    // still read (and checked) when the rest of the file cannot hold them, to say where it ends.
    const bool fits = nnz <= can_hold;
    if (fits) m = allocate(rows, cols, path, size_line);
    std::size_t r = 0, c = 0;
    auto first_row = [&](std::size_t col) {
      return symmetry == MmSymmetry::general ? 0 : symmetry == MmSymmetry::symmetric ? col : col + 1;
    };
    r = first_row(0);
    while (lines.next(line)) {
      detail::poll_cancel(options.cancel, tick);
      const auto t = trim(line);
      if (t.empty() || t.front() == '%') continue;
      const int ln = lines.number();
      if (count == nnz)
        throw ParseError(path, ln,
                         "more values than the " + std::to_string(nnz) + " a " + std::to_string(rows) + "×" +
                             std::to_string(cols) + " " + sym + " array holds (size line " + std::to_string(size_line) +
                             ")");
      const auto tok = split_ws(t);
      if (tok.size() != 1)
        throw ParseError(
            path, ln, "array format has one value per line, got " + std::to_string(tok.size()) + " fields: " + show(t));
      const double v = value_of(tok[0], ln);
      while (r >= rows) {  // next column (skips columns with no stored rows)
        ++c;
        r = first_row(c);
      }
      if (fits) {
        m(r, c) = v;
        if (r != c && symmetry == MmSymmetry::symmetric) m(c, r) = v;
        if (symmetry == MmSymmetry::skew) m(c, r) = -v;
      }
      ++r;
      ++count;
    }
    if (count < nnz) throw too_few();
  }
  if (info) {
    *info = MatrixFileInfo{};
    info->format = "mtx";
    info->layout = fmt;
    info->field = field == "double" ? "real" : field;
    info->symmetry = sym;
    info->stored = nnz;
    info->duplicates = duplicates;
  }
  return m;
}

Matrix<double> read_matrix_market(const std::string& path, const ReadMatrixOptions& options, MatrixFileInfo* info) {
  return parse_matrix_market(read_text_file(path), path, options, info);
}

// ---- writers -----------------------------------------------------------------------------------

namespace {
/// The readers refuse matrices with a zero dimension; writing one would give a file that reads
/// back as an error (and a 10¹²×0 one looped over its rows).
void require_entries(const Matrix<double>& m) {
  if (m.rows() == 0 || m.cols() == 0)
    throw std::invalid_argument("a " + std::to_string(m.rows()) + "×" + std::to_string(m.cols()) +
                                " matrix has no entries; no matrix reader accepts an empty matrix");
}

/// Shortest text that reads back to the same double.
void put_number(std::ostream& out, double v) {
  char buf[32];
  const auto [p, ec] = std::to_chars(buf, buf + sizeof buf, v);
  out.write(buf, ec == std::errc() ? p - buf : 0);
}
}  // namespace

void write_csv(std::ostream& out, const Matrix<double>& m) {
  require_entries(m);
  for (std::size_t i = 0; i < m.rows(); ++i) {
    for (std::size_t j = 0; j < m.cols(); ++j) {
      if (j) out.put(',');
      put_number(out, m(i, j));
    }
    out.put('\n');
  }
}

void write_matrix_market(std::ostream& out, const Matrix<double>& m) {
  require_entries(m);
  out << "%%MatrixMarket matrix array real general\n% written by Gemflow\n" << m.rows() << ' ' << m.cols() << '\n';
  for (std::size_t j = 0; j < m.cols(); ++j)
    for (std::size_t i = 0; i < m.rows(); ++i) {
      put_number(out, m(i, j));
      out.put('\n');
    }
}

void write_matrix(std::ostream& out, const Matrix<double>& m, const std::string& path) {
  const MatrixFormat format = matrix_format_from_path(path);  // ParseError for an unknown extension
  require_entries(m);
  for (std::size_t i = 0; i < m.rows(); ++i)
    for (std::size_t j = 0; j < m.cols(); ++j)
      if (!std::isfinite(m(i, j)))
        throw std::invalid_argument("the matrix has a NaN or infinity at (" + std::to_string(i) + ", " +
                                    std::to_string(j) + ") (0-based), which no reader of " + path + " would accept");
  switch (format) {
    case MatrixFormat::MatrixMarket: write_matrix_market(out, m); break;
    case MatrixFormat::Npy: write_npy(out, m); break;
    case MatrixFormat::Csv: write_csv(out, m); break;
  }
}

// ---- NumPy .npy ------------------------------------------------------------------------------

namespace {

/// Parser of the header dictionary, a Python literal such as
/// {'descr': '<f8', 'fortran_order': False, 'shape': (3, 4), }.
class NpyHeader {
 public:
  NpyHeader(std::string_view text, std::size_t offset, const std::string& path)
      : t_(text), base_(offset), path_(path) {}

  std::string descr;
  bool fortran = false;
  std::vector<std::size_t> shape;

  void parse() {
    bool have_descr = false, have_order = false, have_shape = false;
    ws();
    expect('{');
    while (true) {
      ws();
      if (peek() == '}') {
        ++i_;
        break;
      }
      const std::size_t key_at = i_;
      const std::string key = string_literal();
      ws();
      expect(':');
      ws();
      if (key == "descr") {
        if (peek() == '[')
          fail(i_, "structured dtype (a list in 'descr') is not supported; save a plain numeric 2-D array");
        descr = string_literal();
        have_descr = true;
      } else if (key == "fortran_order") {
        fortran = boolean();
        have_order = true;
      } else if (key == "shape") {
        shape = tuple();
        have_shape = true;
      } else {
        fail(key_at, "unexpected header key '" + key + "' (expected 'descr', 'fortran_order', 'shape')");
      }
      ws();
      if (peek() == ',') {
        ++i_;
        continue;
      }
      ws();
      expect('}');
      break;
    }
    ws();
    if (i_ != t_.size()) fail(i_, "unexpected text after the header dictionary");
    if (!have_descr) fail(0, "header has no 'descr' key");
    if (!have_order) fail(0, "header has no 'fortran_order' key");
    if (!have_shape) fail(0, "header has no 'shape' key");
  }

  [[noreturn]] void fail(std::size_t at, const std::string& msg) const {
    throw ParseError(path_, 0, "byte " + std::to_string(base_ + at) + ": " + msg);
  }

 private:
  char peek() const { return i_ < t_.size() ? t_[i_] : '\0'; }
  void ws() {
    while (i_ < t_.size() && (t_[i_] == ' ' || t_[i_] == '\n' || t_[i_] == '\t' || t_[i_] == '\r')) ++i_;
  }
  void expect(char c) {
    if (peek() != c)
      fail(i_, std::string("malformed header dictionary: expected '") + c + "', got " +
                   (i_ < t_.size() ? "'" + std::string(1, t_[i_]) + "'" : "the end of the header"));
    ++i_;
  }
  std::string string_literal() {
    const char q = peek();
    if (q != '\'' && q != '"') fail(i_, "malformed header dictionary: expected a quoted string");
    const std::size_t start = ++i_;
    while (i_ < t_.size() && t_[i_] != q) ++i_;
    if (i_ >= t_.size()) fail(start - 1, "malformed header dictionary: unterminated string");
    return std::string(t_.substr(start, i_++ - start));
  }
  bool boolean() {
    if (t_.substr(i_, 4) == "True") {
      i_ += 4;
      return true;
    }
    if (t_.substr(i_, 5) == "False") {
      i_ += 5;
      return false;
    }
    fail(i_, "'fortran_order' must be True or False");
  }
  std::vector<std::size_t> tuple() {
    std::vector<std::size_t> v;
    expect('(');
    while (true) {
      ws();
      if (peek() == ')') {
        ++i_;
        return v;
      }
      const std::size_t b = i_;
      while (i_ < t_.size() && std::isdigit(static_cast<unsigned char>(t_[i_]))) ++i_;
      if (i_ == b) fail(b, "'shape' must be a tuple of non-negative integers");
      std::size_t x = 0;
      if (!parse_size(t_.substr(b, i_ - b), x)) fail(b, "shape value out of range");
      while (i_ < t_.size() && (t_[i_] == 'L' || t_[i_] == 'l')) ++i_;  // Python 2 longs
      v.push_back(x);
      ws();
      if (peek() == ',') ++i_;
      else if (peek() != ')') fail(i_, "'shape' must be a tuple of non-negative integers");
    }
  }

  std::string_view t_;
  std::size_t i_ = 0;
  std::size_t base_;
  const std::string& path_;
};

/// Python's repr of a shape tuple: (), (5,), (3, 4).
std::string shape_str(const std::vector<std::size_t>& s) {
  std::string r = "(";
  for (std::size_t k = 0; k < s.size(); ++k) r += (k ? ", " : "") + std::to_string(s[k]);
  return r + (s.size() == 1 ? ",)" : ")");
}

template <class T>
T load_le(const char* p) {
  T v;
  std::memcpy(&v, p, sizeof v);
  if constexpr (std::endian::native == std::endian::big) {
    auto* b = reinterpret_cast<unsigned char*>(&v);
    std::reverse(b, b + sizeof v);
  }
  return v;
}

}  // namespace

Matrix<double> parse_npy(std::string_view bytes, const std::string& path, MatrixFileInfo* info,
                         const CancelCheck& cancel, bool vector_as_column) {
  auto fail = [&](std::size_t at, const std::string& msg) -> ParseError {
    return ParseError(path, 0, "byte " + std::to_string(at) + ": " + msg);
  };
  static constexpr char kMagic[] = "\x93NUMPY";
  if (bytes.size() < 6 || bytes.substr(0, 6) != std::string_view(kMagic, 6))
    throw fail(0, "not a .npy file (the magic string \\x93NUMPY is missing)");
  if (bytes.size() < 10) throw fail(bytes.size(), "file ends inside the .npy preamble");
  const int major = static_cast<unsigned char>(bytes[6]), minor = static_cast<unsigned char>(bytes[7]);
  std::size_t header_len = 0, header_at = 0;
  if (major == 1) {
    header_len = load_le<std::uint16_t>(bytes.data() + 8);
    header_at = 10;
  } else if (major == 2 || major == 3) {
    if (bytes.size() < 12) throw fail(bytes.size(), "file ends inside the .npy preamble");
    header_len = load_le<std::uint32_t>(bytes.data() + 8);
    header_at = 12;
  } else {
    throw fail(6, "unsupported .npy format version " + std::to_string(major) + "." + std::to_string(minor) +
                      " (supported: 1.0, 2.0, 3.0)");
  }
  if (header_at + header_len > bytes.size())
    throw fail(8, "header length " + std::to_string(header_len) + " runs past the end of the file (" +
                      std::to_string(bytes.size()) + " bytes)");
  NpyHeader h(bytes.substr(header_at, header_len), header_at, path);
  h.parse();

  std::size_t itemsize = 0;
  enum class Kind { f8, f4, i8, i4 } kind{};
  if (h.descr == "<f8") kind = Kind::f8, itemsize = 8;
  else if (h.descr == "<f4") kind = Kind::f4, itemsize = 4;
  else if (h.descr == "<i8") kind = Kind::i8, itemsize = 8;
  else if (h.descr == "<i4") kind = Kind::i4, itemsize = 4;
  else if (!h.descr.empty() && h.descr[0] == '>')
    h.fail(0, "dtype '" + h.descr + "' is big-endian (not supported); convert with numpy: a.astype('<" +
                  h.descr.substr(1) + "')");
  else
    h.fail(0, "dtype '" + h.descr +
                  "' is not supported (supported: '<f8', '<f4', '<i8', '<i4'); convert with numpy: "
                  "a.astype('<f8')");
  if (vector_as_column && h.shape.size() == 1) h.shape.push_back(1);  // (n,) is n×1, in C or Fortran order
  if (h.shape.size() != 2) {
    std::string hint = h.shape.size() == 1 ? "; save a.reshape(-1, 1) for a column or a.reshape(1, -1) for a row" : "";
    h.fail(0, "shape " + shape_str(h.shape) + " has " + std::to_string(h.shape.size()) +
                  " dimension(s); a matrix needs exactly 2" + hint);
  }
  const std::size_t rows = h.shape[0], cols = h.shape[1];
  if (rows == 0 || cols == 0)
    h.fail(0, "shape " + shape_str(h.shape) + " has no elements; an empty matrix is not accepted as input");
  const std::size_t data_at = header_at + header_len;
  if (cols != 0 && rows > std::numeric_limits<std::size_t>::max() / itemsize / cols)
    throw fail(header_at, "shape " + shape_str(h.shape) + " is too large");
  const std::size_t expected = rows * cols * itemsize, actual = bytes.size() - data_at;
  if (actual < expected)
    throw fail(data_at, "data block has " + std::to_string(actual) + " bytes, shape " + shape_str(h.shape) + " of '" +
                            h.descr + "' needs " + std::to_string(expected) + " (file truncated?)");
  if (actual > expected)
    throw fail(data_at + expected, std::to_string(actual - expected) + " unexpected byte(s) after the " +
                                       std::to_string(expected) + "-byte data block of shape " + shape_str(h.shape));
  Matrix<double> m = allocate(rows, cols, path, 0);
  const char* p = bytes.data() + data_at;
  const std::size_t count = rows * cols;
  std::size_t tick = 0;
  for (std::size_t k = 0; k < count; ++k) {
    detail::poll_cancel(cancel, tick);
    const char* q = p + k * itemsize;
    double v = 0.0;
    switch (kind) {
      case Kind::f8: v = load_le<double>(q); break;
      case Kind::f4: v = static_cast<double>(load_le<float>(q)); break;
      case Kind::i4: v = static_cast<double>(load_le<std::int32_t>(q)); break;
      case Kind::i8: {
        const auto x = load_le<std::int64_t>(q);
        v = static_cast<double>(x);
        if (x > kExactInt || x < -kExactInt)
          throw fail(data_at + k * itemsize,
                     "value " + std::to_string(x) + " is beyond ±2^53 and not exact as a double");
        break;
      }
    }
    const std::size_t r = h.fortran ? k % rows : k / cols, c = h.fortran ? k / rows : k % cols;
    if (!std::isfinite(v))
      throw fail(data_at + k * itemsize,
                 "non-finite value at (" + std::to_string(r) + ", " + std::to_string(c) + ") (0-based row, column)");
    m(r, c) = v;
  }
  if (info) {
    *info = MatrixFileInfo{};
    info->format = "npy";
    info->layout = h.fortran ? "Fortran" : "C";
    info->field = h.descr;
    info->symmetry = "general";
    info->stored = count;
  }
  return m;
}

Matrix<double> read_npy(const std::string& path, MatrixFileInfo* info, const CancelCheck& cancel) {
  return parse_npy(read_text_file(path), path, info, cancel);
}

void write_npy(std::ostream& out, const Matrix<double>& m) {
  require_entries(m);
  std::string dict = "{'descr': '<f8', 'fortran_order': False, 'shape': (" + std::to_string(m.rows()) + ", " +
                     std::to_string(m.cols()) + "), }";
  // Pad with spaces so that magic (6) + version (2) + length (2) + header is a multiple of 64.
  std::size_t total = 10 + dict.size() + 1;
  dict.append((64 - total % 64) % 64, ' ');
  dict += '\n';
  out.write("\x93NUMPY\x01\x00", 8);
  const auto len = static_cast<std::uint16_t>(dict.size());
  const char le[2] = {static_cast<char>(len & 0xFF), static_cast<char>(len >> 8)};
  out.write(le, 2);
  out.write(dict.data(), static_cast<std::streamsize>(dict.size()));
  for (double v : m.span()) {
    char b[8];
    std::memcpy(b, &v, 8);
    if constexpr (std::endian::native == std::endian::big) std::reverse(b, b + 8);
    out.write(b, 8);
  }
}

// ---- CSV -------------------------------------------------------------------------------------

namespace {

/// Splits one CSV record (RFC 4180 quoting: "a, b" and "" inside quotes); fields trimmed.
std::vector<std::string> split_csv(std::string_view line, const std::string& path, int ln) {
  std::vector<std::string> out;
  std::string cur;
  bool in_quotes = false, was_quoted = false;
  bool blank = true;  // trim(cur).empty(), kept as cur grows (not a scan of cur at every quote)
  for (std::size_t i = 0; i < line.size(); ++i) {
    const char c = line[i];
    if (in_quotes) {
      if (c == '"') {
        if (i + 1 < line.size() && line[i + 1] == '"') {
          cur += '"';
          blank = false;
          ++i;
        } else {
          in_quotes = false;
        }
      } else {
        cur += c;
        blank = blank && is_space(c);
      }
    } else if (c == '"' && blank) {
      in_quotes = was_quoted = true;
      cur.clear();
    } else if (c == ',') {
      out.push_back(was_quoted ? cur : std::string(trim(cur)));
      cur.clear();
      blank = true;
      was_quoted = false;
    } else if (!(was_quoted && is_space(c))) {
      cur += c;
      blank = blank && is_space(c);
    }
  }
  if (in_quotes)
    throw ParseError(path, ln,
                     "unterminated quoted field: a quoted field must end on its own line (line breaks inside "
                     "quotes are not read in a numeric table)");
  out.push_back(was_quoted ? cur : std::string(trim(cur)));
  return out;
}

/// A field holding two or more numbers separated by spaces, tabs or semicolons (a file written
/// with another separator, e.g. numpy.savetxt's default): how to name that separator, else "".
std::string other_separator(std::string_view field) {
  const auto at = field.find_first_of(" \t;");
  if (at == std::string_view::npos) return "";
  const char sep = field[at];
  std::size_t parts = 0;
  for (std::size_t i = 0; i <= field.size();) {
    const std::size_t j = std::min(field.find(sep, i), field.size());
    const auto piece = trim(field.substr(i, j - i));
    double v = 0;
    if (!piece.empty()) {  // runs of spaces count as one separator
      if (parse_real(piece, v) == Number::bad) return "";
      ++parts;
    }
    i = j + 1;
  }
  if (parts < 2) return "";
  return sep == ' ' ? "spaces" : sep == '\t' ? "tabs" : "semicolons";
}

}  // namespace

Matrix<double> parse_csv(std::string_view text, const std::string& path, MatrixFileInfo* info,
                         const CancelCheck& cancel) {
  std::string storage;
  text = detail::prepared_text(text, path, storage);
  Lines lines(text);
  std::string_view line;
  std::vector<std::string> header;
  int header_line = 0;
  std::vector<double> values;
  std::size_t cols = 0, rows = 0;
  int first_line = 0;
  std::size_t tick = 0;
  while (lines.next(line)) {
    detail::poll_cancel(cancel, tick);
    const auto t = trim(line);
    if (t.empty() || t.front() == '#') continue;
    const int ln = lines.number();
    const auto fields = split_csv(t, path, ln);
    std::vector<double> row(fields.size());
    std::vector<Number> kinds(fields.size());
    for (std::size_t k = 0; k < fields.size(); ++k) kinds[k] = parse_real(fields[k], row[k]);
    if (first_line == 0) {
      first_line = ln;
      cols = fields.size();
      const bool any_number = std::any_of(kinds.begin(), kinds.end(), [](Number n) { return n != Number::bad; });
      const bool all_number = std::all_of(kinds.begin(), kinds.end(), [](Number n) { return n != Number::bad; });
      if (!any_number) {  // a header row
        for (std::size_t k = 0; k < fields.size(); ++k) {
          if (fields[k].empty()) throw ParseError(path, ln, "header field " + std::to_string(k + 1) + " is empty");
          if (const auto sep = other_separator(fields[k]); !sep.empty())
            throw ParseError(path, ln,
                             "field " + std::to_string(k + 1) + " " + show(fields[k]) +
                                 " holds numbers "
                                 "separated by " +
                                 sep + ": CSV fields are separated by commas");
        }
        header = fields;
        header_line = ln;
        continue;
      }
      if (!all_number) {
        std::size_t k = 0;
        while (kinds[k] != Number::bad) ++k;
        throw ParseError(path, ln,
                         "field " + std::to_string(k + 1) + " " + show(fields[k]) +
                             " is not a number, but other fields of this first row are: a header row "
                             "must hold names only, a data row numbers only");
      }
    }
    if (fields.size() != cols)
      throw ParseError(path, ln,
                       "row has " + std::to_string(fields.size()) + " field(s), line " + std::to_string(first_line) +
                           " has " + std::to_string(cols) + " (ragged rows are not a matrix)");
    for (std::size_t k = 0; k < fields.size(); ++k) {
      if (kinds[k] == Number::non_finite)
        throw ParseError(path, ln,
                         "field " + std::to_string(k + 1) + " " + show(fields[k]) + " is not a finite number");
      if (kinds[k] == Number::bad) {
        const auto sep = other_separator(fields[k]);
        const std::string why = fields[k].empty() ? std::string("is empty") : show(fields[k]) + " is not a number";
        throw ParseError(
            path, ln,
            "field " + std::to_string(k + 1) + " " + why +
                (sep.empty() ? ""
                             : " (it holds numbers separated by " + sep + ": CSV fields are separated by commas)"));
      }
    }
    values.insert(values.end(), row.begin(), row.end());
    ++rows;
  }
  if (rows == 0)
    throw ParseError(
        path, lines.number(),
        header.empty() ? "no data rows (the file is empty or all comments)" : "no data rows after the header");
  if (info) {
    *info = MatrixFileInfo{};
    info->format = "csv";
    info->field = "real";
    info->symmetry = "general";
    info->stored = values.size();
    info->header = header;
    info->header_line = header_line;
  }
  return Matrix<double>(rows, cols, std::move(values));
}

Matrix<double> read_csv(const std::string& path, MatrixFileInfo* info, const CancelCheck& cancel) {
  return parse_csv(read_text_file(path), path, info, cancel);
}

// ---- dispatch ----------------------------------------------------------------------------------

MatrixFormat matrix_format_from_path(const std::string& path) {
  const std::string ext = lower(std::filesystem::path(path).extension().string());
  if (ext == ".mtx") return MatrixFormat::MatrixMarket;
  if (ext == ".npy") return MatrixFormat::Npy;
  if (ext == ".csv") return MatrixFormat::Csv;
  throw ParseError(path, 0, "unknown matrix file extension '" + ext + "' (expected .mtx, .npy or .csv)");
}

Matrix<double> read_matrix(const std::string& path, const ReadMatrixOptions& options, MatrixFileInfo* info) {
  switch (matrix_format_from_path(path)) {
    case MatrixFormat::MatrixMarket: return read_matrix_market(path, options, info);
    case MatrixFormat::Npy: return read_npy(path, info, options.cancel);
    case MatrixFormat::Csv: return read_csv(path, info, options.cancel);
  }
  throw ParseError(path, 0, "unknown matrix format");
}

bool is_symmetric(const Matrix<double>& m) {
  if (m.rows() != m.cols()) return false;
  for (std::size_t i = 0; i < m.rows(); ++i)
    for (std::size_t j = 0; j < i; ++j)
      if (m(i, j) != m(j, i)) return false;
  return true;
}

}  // namespace gemflow::io
