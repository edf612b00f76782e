// Mesh readers (OFF, OBJ, PLY ascii/binary), writers (OBJ, PLY, VTP) and the topology report.
#include "gemflow/io/mesh_io.hpp"

#include <algorithm>
#include <bit>
#include <charconv>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <limits>
#include <numeric>
#include <ostream>
#include <sstream>
#include <unordered_map>

#include "gemflow/io/errors.hpp"
#include "gemflow/io/star.hpp"  // read_text_file
#include "gemflow/memory.hpp"
#include "text.hpp"

namespace gemflow::io {
namespace {

using Index = TriMesh::Index;
constexpr std::size_t kMaxIndex = std::numeric_limits<Index>::max();

bool is_space(char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\v' || c == '\f'; }

/// Splits a line into white-space separated tokens.
std::vector<std::string_view> tokens(std::string_view line) {
  std::vector<std::string_view> t;
  std::size_t i = 0;
  while (i < line.size()) {
    while (i < line.size() && is_space(line[i])) ++i;
    const std::size_t b = i;
    while (i < line.size() && !is_space(line[i])) ++i;
    if (i > b) t.push_back(line.substr(b, i - b));
  }
  return t;
}

/// Lines of a text with their 1-based numbers.
class Lines {
 public:
  explicit Lines(std::string_view text) : text_(text) {}
  /// The next line (without its '\n' and trailing '\r'); false at the end.
  bool next(std::string_view& line) {
    if (pos_ >= text_.size()) return false;
    std::size_t e = text_.find('\n', pos_);
    if (e == std::string_view::npos) e = text_.size();
    line = text_.substr(pos_, e - pos_);
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    pos_ = e + 1;
    ++number_;
    return true;
  }
  [[nodiscard]] int number() const { return number_; }
  [[nodiscard]] std::size_t left() const { return pos_ >= text_.size() ? 0 : text_.size() - pos_; }

 private:
  std::string_view text_;
  std::size_t pos_ = 0;
  int number_ = 0;
};

std::string quoted(std::string_view t) {
  std::string s(t.substr(0, 40));
  if (t.size() > 40) s += "...";
  return "'" + s + "'";
}

double number(std::string_view t, const std::string& path, int line, const char* what) {
  double v = 0;
  const char* b = t.data();
  if (!t.empty() && t[0] == '+') ++b;
  const auto [p, ec] = std::from_chars(b, t.data() + t.size(), v);
  if (ec != std::errc() || p != t.data() + t.size())
    throw ParseError(path, line, std::string("expected a number for ") + what + ", got " + quoted(t));
  return v;
}

std::uint64_t count(std::string_view t, const std::string& path, int line, const char* what) {
  std::uint64_t v = 0;
  const auto [p, ec] = std::from_chars(t.data(), t.data() + t.size(), v);
  if (ec != std::errc() || p != t.data() + t.size())
    throw ParseError(path, line, std::string("expected a non-negative integer for ") + what + ", got " + quoted(t));
  return v;
}

void check_vertex(const std::array<double, 3>& p, std::size_t index, const std::string& path, int line) {
  for (int k = 0; k < 3; ++k)
    if (!std::isfinite(p[k]))
      throw ParseError(path, line,
                       "vertex " + std::to_string(index) + " has a non-finite coordinate (" +
                           (std::isnan(p[k]) ? std::string("NaN") : std::string("infinity")) + ")");
}

/// Checks the arrays of nv vertices and nf triangles against the available memory (from 256 MiB
/// on, as the matrix readers do), as a ParseError at the line announcing them.
void require_mesh_memory(std::uint64_t nv, std::uint64_t nf, const std::string& path, int line) {
  const std::uint64_t bytes = nv * sizeof(std::array<double, 3>) + nf * sizeof(std::array<Index, 3>);
  if (bytes < (std::uint64_t{256} << 20)) return;
  try {
    require_host_memory(static_cast<std::size_t>(bytes),
                        std::to_string(nv) + " vertices and " + std::to_string(nf) + " triangles of " + path);
  } catch (const OutOfMemory& e) {
    throw ParseError(path, line, e.what());
  }
}

/// Adds polygon `poly` as a fan of triangles.
void add_polygon(TriMesh& m, const std::vector<Index>& poly, MeshReadInfo& info) {
  for (std::size_t k = 1; k + 1 < poly.size(); ++k) m.faces.push_back({poly[0], poly[k], poly[k + 1]});
  if (poly.size() > 3) {
    ++info.polygons_triangulated;
    info.triangles_added += poly.size() - 3;
  }
}

void finish(TriMesh& m, MeshReadInfo& info, const std::string& path) {
  if (m.vertices.empty()) throw ParseError(path, 0, "the file holds no vertices");
  if (m.faces.empty()) throw ParseError(path, 0, "the file holds no faces");
  if (info.polygons_triangulated > 0)
    info.warnings.push_back(std::to_string(info.polygons_triangulated) +
                            " faces with more than 3 vertices (quads or polygons) were triangulated as fans from their "
                            "first vertex, adding " +
                            std::to_string(info.triangles_added) + " triangles");
}

// ---- OFF -------------------------------------------------------------------------------------

/// Strips a '#' comment.
std::string_view uncomment(std::string_view l) {
  const auto h = l.find('#');
  return h == std::string_view::npos ? l : l.substr(0, h);
}

TriMesh parse_off(std::string_view text, const std::string& path, MeshReadInfo& info, const CancelCheck& cancel) {
  Lines lines(text);
  std::string_view line;
  std::vector<std::string_view> t;
  auto next_tokens = [&]() {
    while (lines.next(line)) {
      t = tokens(uncomment(line));
      if (!t.empty()) return true;
    }
    return false;
  };
  if (!next_tokens()) throw ParseError(path, 0, "the file is empty");
  const auto kw = t[0].find("OFF");
  if (kw == std::string_view::npos)
    throw ParseError(path, lines.number(), "expected the OFF header keyword, got " + quoted(t[0]));
  if (t[0].find('4') != std::string_view::npos && t[0].find('4') < kw)
    throw ParseError(path, lines.number(), "4OFF (4D vertices) is not supported");
  std::vector<std::string_view> counts;
  if (kw + 3 < t[0].size()) counts.push_back(t[0].substr(kw + 3));  // "OFF8 6 12": counts glued to the keyword
  counts.insert(counts.end(), t.begin() + 1, t.end());
  if (counts.empty() && !next_tokens()) throw ParseError(path, lines.number(), "missing the vertex and face counts");
  if (counts.empty()) counts = t;
  const int count_line = lines.number();
  if (counts.size() < 2) throw ParseError(path, count_line, "expected 'vertices faces [edges]' counts");
  const std::uint64_t nv = count(counts[0], path, count_line, "the vertex count");
  const std::uint64_t nf = count(counts[1], path, count_line, "the face count");
  // Each vertex line takes at least 6 bytes ("0 0 0\n"), each face line 8 ("3 0 1 2\n").
  if (nv > lines.left() / 6 || nf > lines.left() / 8 || nv > kMaxIndex)
    throw ParseError(path, count_line,
                     "the header announces " + std::to_string(nv) + " vertices and " + std::to_string(nf) +
                         " faces, more than the " + std::to_string(lines.left()) + " bytes after it can hold");
  require_mesh_memory(nv, nf, path, count_line);
  TriMesh m;
  m.vertices.reserve(nv);
  std::size_t tick = 0;
  for (std::uint64_t i = 0; i < nv; ++i) {
    detail::poll_cancel(cancel, tick);
    if (!next_tokens())
      throw ParseError(path, lines.number(),
                       "the file ends after " + std::to_string(i) + " of " + std::to_string(nv) + " vertices");
    if (t.size() < 3)
      throw ParseError(
          path, lines.number(),
          "vertex " + std::to_string(i) + ": expected 3 coordinates, got " + std::to_string(t.size()) + " values");
    std::array<double, 3> p{};
    for (int k = 0; k < 3; ++k) p[k] = number(t[k], path, lines.number(), "a coordinate");
    check_vertex(p, i, path, lines.number());
    m.vertices.push_back(p);
  }
  std::vector<Index> poly;
  for (std::uint64_t f = 0; f < nf; ++f) {
    detail::poll_cancel(cancel, tick);
    if (!next_tokens())
      throw ParseError(path, lines.number(),
                       "the file ends after " + std::to_string(f) + " of " + std::to_string(nf) + " faces");
    const std::uint64_t k = count(t[0], path, lines.number(), "the face's vertex count");
    if (k < 3)
      throw ParseError(
          path, lines.number(),
          "face " + std::to_string(f) + " has " + std::to_string(k) + " vertices; a face needs at least 3");
    if (k > t.size() - 1)
      throw ParseError(path, lines.number(),
                       "face " + std::to_string(f) + " announces " + std::to_string(k) +
                           " vertices but the line holds " + std::to_string(t.size() - 1));
    poly.clear();
    for (std::uint64_t j = 0; j < k; ++j) {
      const std::uint64_t v = count(t[1 + j], path, lines.number(), "a vertex index");
      if (v >= nv)
        throw ParseError(path, lines.number(),
                         "face " + std::to_string(f) + " names vertex " + std::to_string(v) + ", but there are " +
                             std::to_string(nv) + " vertices (0-based)");
      poly.push_back(static_cast<Index>(v));
    }
    add_polygon(m, poly, info);  // trailing values (a colour) are ignored
  }
  info.encoding = "ascii";
  return m;
}

// ---- OBJ -------------------------------------------------------------------------------------

/// Per-vertex texture coordinates from OBJ's per-corner vt references: kept when every corner has
/// one and each vertex's corners agree on its (u, v); else dropped with a warning (seams, corners
/// without vt, or a vt index past the file's vt lines, its line named): the geometry stands.
void obj_uv(TriMesh& m, const std::vector<std::array<double, 2>>& vts,
            const std::vector<std::array<std::int64_t, 3>>& pairs, std::size_t without, int bad_line,
            MeshReadInfo& info) {
  for (const auto& [v, vt, line] : pairs)
    if (vt < 0 || static_cast<std::size_t>(vt) >= vts.size() || bad_line) {
      info.warnings.push_back("line " + std::to_string(bad_line ? bad_line : static_cast<int>(line)) +
                              ": a face names texture coordinate " + std::to_string(vt + 1) +
                              " (1-based), but the file has " + std::to_string(vts.size()) +
                              ": texture coordinates not read");
      return;
    }
  if (pairs.empty()) return;
  if (without > 0) {
    info.warnings.push_back(std::to_string(without) +
                            " face corners have no texture coordinate (v without /vt): texture coordinates not read");
    return;
  }
  constexpr double kNone = std::numeric_limits<double>::quiet_NaN();
  std::vector<std::array<double, 2>> uv(m.vertices.size(), {kNone, kNone});
  std::size_t seams = 0;
  std::int64_t first_seam = -1;
  for (const auto& [v, vt, line] : pairs) {
    auto& u = uv[static_cast<std::size_t>(v)];
    if (std::isnan(u[0])) {
      u = vts[static_cast<std::size_t>(vt)];
    } else if (u != vts[static_cast<std::size_t>(vt)]) {
      if (seams++ == 0) first_seam = v;
    }
  }
  if (seams > 0) {
    info.warnings.push_back("vertex " + std::to_string(first_seam) +
                            " (and others) has several texture coordinates (a seam): a TriMesh holds one per "
                            "vertex, so the texture coordinates were not read");
    return;
  }
  for (std::size_t v = 0; v < uv.size(); ++v)
    if (std::isnan(uv[v][0])) {
      info.warnings.push_back("vertex " + std::to_string(v) +
                              " is in no face and has no texture coordinate: texture coordinates not read");
      return;
    }
  m.uv = std::move(uv);
}

TriMesh parse_obj(std::string_view text, const std::string& path, MeshReadInfo& info, const CancelCheck& cancel) {
  Lines lines(text);
  std::string_view raw;
  TriMesh m;
  std::vector<Index> poly;
  std::vector<std::int64_t> refs;
  struct Pending {
    std::size_t first_face;  // the faces this polygon added start here
    int line;
    std::uint64_t max_index;
  };
  std::vector<Pending> forward;  // polygons naming vertices not yet defined (checked at the end)
  // texture coordinates: OBJ gives them per face corner (v/vt); a TriMesh holds them per vertex
  std::vector<std::array<double, 2>> vts;
  std::vector<std::int64_t> vt_of;                    // per vertex: its vt index (−1: none seen)
  std::vector<std::array<std::int64_t, 3>> vt_pairs;  // (vertex, vt, line) to check at the end
  std::size_t corners_without_vt = 0;
  int vt_bad_line = 0;  // a corner naming a vt that is not there
  std::string joined;
  std::size_t tick = 0;
  while (lines.next(raw)) {
    detail::poll_cancel(cancel, tick);
    const int line_no = lines.number();
    std::string_view line = raw;
    if (!line.empty() && line.back() == '\\') {  // '\' continues the statement on the next line
      joined.assign(line.substr(0, line.size() - 1));
      std::string_view more;
      while (lines.next(more)) {
        const bool cont = !more.empty() && more.back() == '\\';
        joined += ' ';
        joined.append(cont ? more.substr(0, more.size() - 1) : more);
        if (!cont) break;
      }
      line = joined;
    }
    const auto t = tokens(uncomment(line));
    if (t.empty()) continue;
    if (t[0] == "v") {
      if (t.size() < 4)
        throw ParseError(path, line_no,
                         "vertex " + std::to_string(m.vertices.size()) + ": expected 3 coordinates, got " +
                             std::to_string(t.size() - 1));
      if (m.vertices.size() >= kMaxIndex) throw ParseError(path, line_no, "more than 2³²−1 vertices");
      std::array<double, 3> p{};
      for (int k = 0; k < 3; ++k) p[k] = number(t[1 + k], path, line_no, "a coordinate");
      check_vertex(p, m.vertices.size(), path, line_no);
      m.vertices.push_back(p);
    } else if (t[0] == "vt") {
      if (t.size() < 2) throw ParseError(path, line_no, "texture coordinate with no value");
      const double u = number(t[1], path, line_no, "a texture coordinate");
      const double v = t.size() > 2 ? number(t[2], path, line_no, "a texture coordinate") : 0.0;
      if (!std::isfinite(u) || !std::isfinite(v))
        throw ParseError(path, line_no, "texture coordinate " + std::to_string(vts.size() + 1) + " is not finite");
      vts.push_back({u, v});
    } else if (t[0] == "f") {
      if (t.size() < 4)
        throw ParseError(path, line_no,
                         "face with " + std::to_string(t.size() - 1) + " vertices; a face needs at least 3");
      poly.clear();
      std::uint64_t max_index = 0;
      for (std::size_t j = 1; j < t.size(); ++j) {
        const auto ref = t[j].substr(0, t[j].find('/'));  // v, v/vt, v//vn, v/vt/vn
        std::int64_t v = 0;
        const auto [p, ec] = std::from_chars(ref.data(), ref.data() + ref.size(), v);
        if (ec != std::errc() || p != ref.data() + ref.size() || v == 0)
          throw ParseError(path, line_no,
                           "expected a vertex index (1-based, or negative: relative) in face entry " + quoted(t[j]));
        std::int64_t idx = v > 0 ? v - 1 : static_cast<std::int64_t>(m.vertices.size()) + v;
        if (idx < 0)
          throw ParseError(path, line_no,
                           "relative vertex index " + std::to_string(v) + " points before the first vertex (" +
                               std::to_string(m.vertices.size()) + " defined so far)");
        if (static_cast<std::uint64_t>(idx) >= kMaxIndex)
          throw ParseError(path, line_no, "vertex index " + std::to_string(v) + " is too large");
        max_index = std::max<std::uint64_t>(max_index, static_cast<std::uint64_t>(idx));
        poly.push_back(static_cast<Index>(idx));
        const auto slash = t[j].find('/');
        const auto vt_ref = slash == std::string_view::npos
                                ? std::string_view{}
                                : t[j].substr(slash + 1, t[j].find('/', slash + 1) - slash - 1);
        std::int64_t vt = 0;
        const auto [q, vec] = std::from_chars(vt_ref.data(), vt_ref.data() + vt_ref.size(), vt);
        if (vt_ref.empty() || vec != std::errc() || q != vt_ref.data() + vt_ref.size() || vt == 0) {
          ++corners_without_vt;
        } else {
          const std::int64_t at = vt > 0 ? vt - 1 : static_cast<std::int64_t>(vts.size()) + vt;
          if (at < 0 && vt_bad_line == 0) vt_bad_line = line_no;
          vt_pairs.push_back({idx, at, line_no});
        }
      }
      if (max_index >= m.vertices.size()) forward.push_back({m.faces.size(), line_no, max_index});
      add_polygon(m, poly, info);
    }
    // vt, vn, o, g, s, usemtl, mtllib, l, p ...: not geometry of the triangle mesh
  }
  for (const auto& f : forward)
    if (f.max_index >= m.vertices.size())
      throw ParseError(path, f.line,
                       "face names vertex " + std::to_string(f.max_index + 1) + " (1-based), but the file defines " +
                           std::to_string(m.vertices.size()) + " vertices");
  obj_uv(m, vts, vt_pairs, corners_without_vt, vt_bad_line, info);
  info.encoding = "ascii";
  return m;
}

// ---- PLY -------------------------------------------------------------------------------------

enum class PlyType { i8, u8, i16, u16, i32, u32, f32, f64 };

std::size_t size_of(PlyType t) {
  switch (t) {
    case PlyType::i8:
    case PlyType::u8: return 1;
    case PlyType::i16:
    case PlyType::u16: return 2;
    case PlyType::i32:
    case PlyType::u32:
    case PlyType::f32: return 4;
    case PlyType::f64: return 8;
  }
  return 1;
}

bool ply_type(std::string_view s, PlyType& t) {
  static const std::pair<const char*, PlyType> names[] = {
      {"char", PlyType::i8},   {"int8", PlyType::i8},     {"uchar", PlyType::u8},   {"uint8", PlyType::u8},
      {"short", PlyType::i16}, {"int16", PlyType::i16},   {"ushort", PlyType::u16}, {"uint16", PlyType::u16},
      {"int", PlyType::i32},   {"int32", PlyType::i32},   {"uint", PlyType::u32},   {"uint32", PlyType::u32},
      {"float", PlyType::f32}, {"float32", PlyType::f32}, {"double", PlyType::f64}, {"float64", PlyType::f64}};
  for (const auto& [n, v] : names)
    if (s == n) return t = v, true;
  return false;
}

struct PlyProperty {
  std::string name;
  bool list = false;
  PlyType count_type = PlyType::u8;
  PlyType type = PlyType::f32;
};

struct PlyElement {
  std::string name;
  std::uint64_t count = 0;
  int line = 0;
  std::vector<PlyProperty> props;
  [[nodiscard]] std::size_t min_bytes() const {
    std::size_t b = 0;
    for (const auto& p : props) b += p.list ? size_of(p.count_type) : size_of(p.type);
    return b;
  }
};

/// Reads binary values from the body.
class Binary {
 public:
  Binary(std::string_view data, std::size_t start, bool big, const std::string& path)
      : d_(data), pos_(start), big_(big), path_(path) {}
  double read(PlyType t, const std::string& where) {
    const std::size_t n = size_of(t);
    if (d_.size() - pos_ < n)
      throw ParseError(path_, 0, where + " (byte " + std::to_string(pos_) + "): the file ends (truncated)");
    unsigned char b[8];
    std::memcpy(b, d_.data() + pos_, n);
    pos_ += n;
    if (big_ != (std::endian::native == std::endian::big)) std::reverse(b, b + n);
    switch (t) {
      case PlyType::i8: {
        std::int8_t v;
        std::memcpy(&v, b, 1);
        return v;
      }
      case PlyType::u8: return b[0];
      case PlyType::i16: {
        std::int16_t v;
        std::memcpy(&v, b, 2);
        return v;
      }
      case PlyType::u16: {
        std::uint16_t v;
        std::memcpy(&v, b, 2);
        return v;
      }
      case PlyType::i32: {
        std::int32_t v;
        std::memcpy(&v, b, 4);
        return v;
      }
      case PlyType::u32: {
        std::uint32_t v;
        std::memcpy(&v, b, 4);
        return v;
      }
      case PlyType::f32: {
        float v;
        std::memcpy(&v, b, 4);
        return v;
      }
      case PlyType::f64: {
        double v;
        std::memcpy(&v, b, 8);
        return v;
      }
    }
    return 0;
  }
  [[nodiscard]] std::size_t pos() const { return pos_; }
  [[nodiscard]] std::size_t left() const { return d_.size() - pos_; }

 private:
  std::string_view d_;
  std::size_t pos_;
  bool big_;
  const std::string& path_;
};

bool integral(PlyType t) { return t != PlyType::f32 && t != PlyType::f64; }

/// A PLY file: the header, the counts checked against the bytes left, then the elements.
class PlyReader {
 public:
  PlyReader(std::string_view data, const std::string& path, MeshReadInfo& info, const CancelCheck& cancel)
      : data_(data), path_(path), info_(info), cancel_(cancel), lines_(data) {}

  TriMesh read() {
    header();
    check_counts();
    find_properties();
    require_mesh_memory(ve_->count, fe_ ? fe_->count : 0, path_, ve_->line);
    TriMesh m;
    m.vertices.reserve(ve_->count);
    if (iu_ >= 0) m.uv.reserve(ve_->count);
    Binary bin(data_, data_.size() - lines_.left(), format_ == "binary_big_endian", path_);
    for (const auto& e : elements_)
      for (std::uint64_t i = 0; i < e.count; ++i) {
        detail::poll_cancel(cancel_, tick_);
        element(e, i, bin, m);
      }
    return m;
  }

 private:
  void header() {
    std::string_view line;
    if (!lines_.next(line)) throw ParseError(path_, 0, "the file is empty");
    if (tokens(line).empty() || tokens(line)[0] != "ply")
      throw ParseError(path_, 1, "expected 'ply' as the first line");
    bool ended = false;
    while (!ended && lines_.next(line)) {
      const auto t = tokens(line);
      const int ln = lines_.number();
      if (t.empty() || t[0] == "comment" || t[0] == "obj_info") continue;
      if (t[0] == "format") {
        if (t.size() < 2) throw ParseError(path_, ln, "format line without a format");
        format_ = std::string(t[1]);
        if (format_ != "ascii" && format_ != "binary_little_endian" && format_ != "binary_big_endian")
          throw ParseError(path_, ln, "unknown PLY format " + quoted(t[1]));
      } else if (t[0] == "element") {
        if (t.size() != 3) throw ParseError(path_, ln, "expected 'element NAME COUNT'");
        check_name(t[1], "element", ln);
        elements_.push_back({std::string(t[1]), count(t[2], path_, ln, "the element count"), ln, {}});
      } else if (t[0] == "property") {
        property(t, ln);
      } else if (t[0] == "end_header") {
        ended = true;
      } else {
        throw ParseError(path_, ln, "unknown header line " + quoted(line));
      }
    }
    if (!ended) throw ParseError(path_, lines_.number(), "the header has no end_header line");
    if (format_.empty()) throw ParseError(path_, lines_.number(), "the header has no format line");
    info_.encoding = format_;
    ascii_ = format_ == "ascii";
  }

  /// PLY names are short identifiers; a long one would be copied into every entry's messages.
  void check_name(std::string_view name, const char* what, int ln) const {
    constexpr std::size_t kMaxName = 256;
    if (name.size() > kMaxName)
      throw ParseError(path_, ln,
                       std::string(what) + " name of " + std::to_string(name.size()) + " characters (at most " +
                           std::to_string(kMaxName) + ")");
  }

  void property(const std::vector<std::string_view>& t, int ln) {
    if (elements_.empty()) throw ParseError(path_, ln, "property before any element");
    check_name(t.back(), "property", ln);
    PlyProperty p;
    if (t.size() == 5 && t[1] == "list") {
      p.list = true;
      if (!ply_type(t[2], p.count_type) || !ply_type(t[3], p.type) || !integral(p.count_type))
        throw ParseError(path_, ln, "bad list property types " + quoted(t[2]) + " " + quoted(t[3]));
      p.name = std::string(t[4]);
    } else if (t.size() == 3) {
      if (!ply_type(t[1], p.type)) throw ParseError(path_, ln, "unknown property type " + quoted(t[1]));
      p.name = std::string(t[2]);
    } else {
      throw ParseError(path_, ln, "expected 'property TYPE NAME' or 'property list COUNT_TYPE TYPE NAME'");
    }
    elements_.back().props.push_back(std::move(p));
  }

  /// Every element's count against the bytes left after the header, before allocating anything.
  void check_counts() const {
    std::size_t left = lines_.left();
    for (const auto& e : elements_) {
      const std::size_t per =
          ascii_ ? 2 * std::max<std::size_t>(e.props.size(), 1) : std::max<std::size_t>(e.min_bytes(), 1);
      if (e.count > left / per)
        throw ParseError(path_, e.line,
                         "element " + e.name + " announces " + std::to_string(e.count) + " entries of at least " +
                             std::to_string(per) + " bytes, more than the " + std::to_string(lines_.left()) +
                             " bytes after the header hold");
      left -= e.count * per;
    }
  }

  void find_properties() {
    for (const auto& e : elements_) {
      if (e.name == "vertex") ve_ = &e;
      if (e.name == "face") fe_ = &e;
    }
    if (!ve_) throw ParseError(path_, 0, "the header declares no vertex element");
    if (ve_->count > kMaxIndex) throw ParseError(path_, ve_->line, "more than 2³²−1 vertices");
    for (std::size_t k = 0; k < ve_->props.size(); ++k) {
      const auto& p = ve_->props[k];
      if (p.list) continue;
      if (p.name == "x") ix_ = static_cast<int>(k);
      if (p.name == "y") iy_ = static_cast<int>(k);
      if (p.name == "z") iz_ = static_cast<int>(k);
      if (p.name == "u" || p.name == "s" || p.name == "texture_u" || p.name == "texture_s") iu_ = static_cast<int>(k);
      if (p.name == "v" || p.name == "t" || p.name == "texture_v" || p.name == "texture_t") iv_ = static_cast<int>(k);
    }
    if ((iu_ < 0) != (iv_ < 0))
      throw ParseError(path_, ve_->line, "the vertex element has one texture coordinate of two (u v, s t)");
    if (ix_ < 0 || iy_ < 0 || iz_ < 0)
      throw ParseError(path_, ve_->line, "the vertex element lacks property x, y or z");
    if (fe_)
      for (std::size_t k = 0; k < fe_->props.size(); ++k)
        if (fe_->props[k].list && (fe_->props[k].name == "vertex_indices" || fe_->props[k].name == "vertex_index"))
          ifl_ = static_cast<int>(k);
    if (fe_ && ifl_ < 0) throw ParseError(path_, fe_->line, "the face element lacks a list property vertex_indices");
  }

  /// Reads entry i of element e (its values from the line or the binary body) into m.
  void element(const PlyElement& e, std::uint64_t i, Binary& bin, TriMesh& m) {
    const bool is_v = &e == ve_, is_f = &e == fe_;
    const std::string where = "element " + e.name + " index " + std::to_string(i);
    std::vector<std::string_view> t;
    std::size_t ti = 0;
    int ln = 0;
    if (ascii_) {
      std::string_view line;
      do {
        if (!lines_.next(line))
          throw ParseError(path_, lines_.number(),
                           "the file ends at " + where + " (of " + std::to_string(e.count) + ")");
        t = tokens(line);
      } while (t.empty());
      ln = lines_.number();
    }
    auto next_value = [&](PlyType type) -> double {
      if (!ascii_) return bin.read(type, where);
      if (ti >= t.size()) throw ParseError(path_, ln, where + ": too few values on the line");
      return number(t[ti++], path_, ln, where.c_str());
    };
    std::array<double, 3> p{};
    std::array<double, 2> uv{};
    for (std::size_t k = 0; k < e.props.size(); ++k) {
      const auto& pr = e.props[k];
      if (!pr.list) {
        const double v = next_value(pr.type);
        if (is_v && static_cast<int>(k) == ix_) p[0] = v;
        if (is_v && static_cast<int>(k) == iy_) p[1] = v;
        if (is_v && static_cast<int>(k) == iz_) p[2] = v;
        if (is_v && static_cast<int>(k) == iu_) uv[0] = v;
        if (is_v && static_cast<int>(k) == iv_) uv[1] = v;
        continue;
      }
      const double c = next_value(pr.count_type);
      if (!(c >= 0) || c != std::floor(c)) throw ParseError(path_, ln, where + ": bad list length");
      const auto n = static_cast<std::uint64_t>(c);
      if (ascii_ ? n > t.size() - ti : n > bin.left() / size_of(pr.type))
        throw ParseError(path_, ln,
                         where + ": list of " + std::to_string(n) + " values runs past the " +
                             (ascii_ ? "line" : "end of the file (truncated)"));
      const bool face_list = is_f && static_cast<int>(k) == ifl_;
      poly_.clear();
      for (std::uint64_t j = 0; j < n; ++j) {
        const double v = next_value(pr.type);
        if (!face_list) continue;
        if (!(v >= 0) || v >= static_cast<double>(ve_->count) || v != std::floor(v))
          throw ParseError(path_, ln,
                           where + " names vertex " + std::to_string(v) + ", but there are " +
                               std::to_string(ve_->count) + " vertices (0-based)");
        poly_.push_back(static_cast<Index>(v));
      }
      if (!face_list) continue;
      if (n < 3)
        throw ParseError(path_, ln, where + " has " + std::to_string(n) + " vertices; a face needs at least 3");
      add_polygon(m, poly_, info_);
    }
    if (!is_v) return;
    for (int k = 0; k < 3; ++k)
      if (!std::isfinite(p[k]))
        throw ParseError(path_, ascii_ ? ln : 0,
                         "vertex " + std::to_string(i) + " has a non-finite coordinate" +
                             (ascii_ ? "" : " (byte " + std::to_string(bin.pos()) + ")"));
    m.vertices.push_back(p);
    if (iu_ < 0) return;
    if (!std::isfinite(uv[0]) || !std::isfinite(uv[1]))
      throw ParseError(path_, ascii_ ? ln : 0,
                       "vertex " + std::to_string(i) + " has a non-finite texture coordinate" +
                           (ascii_ ? "" : " (byte " + std::to_string(bin.pos()) + ")"));
    m.uv.push_back(uv);
  }

  std::string_view data_;
  const std::string& path_;
  MeshReadInfo& info_;
  const CancelCheck& cancel_;
  Lines lines_;
  std::string format_;
  bool ascii_ = false;
  std::vector<PlyElement> elements_;
  const PlyElement* ve_ = nullptr;
  const PlyElement* fe_ = nullptr;
  int ix_ = -1, iy_ = -1, iz_ = -1, iu_ = -1, iv_ = -1, ifl_ = -1;
  std::vector<Index> poly_;
  std::size_t tick_ = 0;
};

TriMesh parse_ply(std::string_view data, const std::string& path, MeshReadInfo& info, const CancelCheck& cancel) {
  return PlyReader(data, path, info, cancel).read();
}

std::string num(double v) {
  char buf[32];
  const auto [p, ec] = std::to_chars(buf, buf + sizeof buf, v);
  return std::string(buf, ec == std::errc() ? p : buf);
}

void check_uv(const TriMesh& m, const MeshUv& uv) {
  if (!uv.empty() && uv.size() != m.vertices.size())
    throw std::invalid_argument("texture coordinates: " + std::to_string(uv.size()) + " for " +
                                std::to_string(m.vertices.size()) + " vertices");
}

// Union–find for components and boundary loops.
struct Dsu {
  std::vector<Index> p;
  explicit Dsu(std::size_t n) : p(n) { std::iota(p.begin(), p.end(), Index{0}); }
  Index find(Index x) {
    while (p[x] != x) x = p[x] = p[p[x]];
    return x;
  }
  void unite(Index a, Index b) { p[find(a)] = find(b); }
};

}  // namespace

MeshFormat mesh_format_of(const std::string& path) {
  const auto e = detail::lower_ext(path);
  if (e == ".off") return MeshFormat::off;
  if (e == ".obj") return MeshFormat::obj;
  if (e == ".ply") return MeshFormat::ply;
  throw ParseError(path, 0, "unknown mesh format '" + e + "': expected .off, .obj or .ply");
}

TriMesh parse_mesh(std::string_view data, const std::string& path, MeshFormat format, MeshReadInfo* info,
                   const CancelCheck& cancel) {
  MeshReadInfo local;
  MeshReadInfo& in = info ? *info : local;
  in = MeshReadInfo{};
  in.format = format;
  if (data.empty()) throw ParseError(path, 0, "the file is empty");
  TriMesh m;
  std::string storage;
  if (format == MeshFormat::ply) {
    m = parse_ply(data, path, in, cancel);  // may be binary: no text preparation
  } else {
    const auto text = detail::prepared_text(data, path, storage);
    m = format == MeshFormat::off ? parse_off(text, path, in, cancel) : parse_obj(text, path, in, cancel);
  }
  finish(m, in, path);
  return m;
}

TriMesh read_mesh(const std::string& path, MeshReadInfo* info, const CancelCheck& cancel) {
  const MeshFormat f = mesh_format_of(path);
  std::error_code ec;
  const auto size = std::filesystem::file_size(path, ec);
  if (!ec && size >= (std::uintmax_t{256} << 20)) {
    try {
      require_host_memory(static_cast<std::size_t>(size), "reading " + path);
    } catch (const OutOfMemory& e) {
      throw ParseError(path, 0, e.what());
    }
  }
  return parse_mesh(read_text_file(path), path, f, info, cancel);
}

// ---- topology ----------------------------------------------------------------------------------

namespace {

/// mesh_topology()'s stages over one mesh.
class TopologyScan {
 public:
  explicit TopologyScan(const TriMesh& mesh)
      : m_(mesh),
        n_(mesh.vertices.size()),
        degree_(n_, 0),
        bad_face_(mesh.faces.size(), false),
        loops_(n_),
        comp_(n_),
        on_boundary_(n_, 0) {
    t_.vertices = n_;
    t_.faces = mesh.faces.size();
  }

  MeshTopology run() {
    faces();
    duplicates();
    edges();
    vertices();
    totals();
    return t_;
  }

 private:
  template <class V, class Item>
  static void list(V& v, std::size_t& count, Item item) {
    if (v.size() < MeshTopology::kMaxListed) v.push_back(item);
    ++count;
  }

  /// Degenerate faces (an index out of range or repeated: left out of the rest; zero area) and
  /// unreferenced vertices.
  void faces() {
    for (std::size_t f = 0; f < m_.faces.size(); ++f) {
      const auto& tri = m_.faces[f];
      bool out_of_range = false;
      for (Index v : tri) out_of_range = out_of_range || v >= n_;
      if (out_of_range || tri[0] == tri[1] || tri[1] == tri[2] || tri[0] == tri[2]) {
        list(t_.degenerate_faces, t_.degenerate_count, f);
        bad_face_[f] = true;
        continue;
      }
      for (Index v : tri) ++degree_[v];
      if (zero_area(m_.vertices[tri[0]], m_.vertices[tri[1]], m_.vertices[tri[2]]))
        list(t_.degenerate_faces, t_.degenerate_count, f);
    }
    for (std::size_t v = 0; v < n_; ++v)
      if (degree_[v] == 0) list(t_.unreferenced, t_.unreferenced_count, static_cast<Index>(v));
  }

  /// Duplicate faces (same three vertices, any order): each listed with the first face before it
  /// on the same vertices, in the order of the later face. Sorted, not hashed (10⁵ faces in
  /// milliseconds).
  void duplicates() {
    struct Sorted {
      std::array<Index, 3> v;
      std::size_t face;
    };
    std::vector<Sorted> all;
    all.reserve(m_.faces.size());
    for (std::size_t f = 0; f < m_.faces.size(); ++f) {
      if (bad_face_[f]) continue;
      auto s = m_.faces[f];
      std::sort(s.begin(), s.end());
      all.push_back({s, f});
    }
    std::sort(all.begin(), all.end(),
              [](const Sorted& x, const Sorted& y) { return x.v != y.v ? x.v < y.v : x.face < y.face; });
    std::vector<std::pair<std::size_t, std::size_t>> pairs;
    for (std::size_t i = 0, j = 0; i < all.size(); i = j) {
      for (j = i + 1; j < all.size() && all[j].v == all[i].v; ++j) pairs.emplace_back(all[i].face, all[j].face);
    }
    std::sort(pairs.begin(), pairs.end(), [](const auto& x, const auto& y) { return x.second < y.second; });
    for (const auto& p : pairs) list(t_.duplicate_faces, t_.duplicate_count, p);
  }

  /// Faces per undirected edge and their directions: non-manifold and flipped edges; the
  /// boundary edges joined into loops. The face edges are sorted by their undirected key.
  void edges() {
    struct Use {
      std::uint64_t key;  // min << 32 | max
      bool forward;       // used as min→max
    };
    std::vector<Use> uses;
    uses.reserve(3 * m_.faces.size());
    for (std::size_t f = 0; f < m_.faces.size(); ++f) {
      if (bad_face_[f]) continue;
      const auto& tri = m_.faces[f];
      for (int k = 0; k < 3; ++k) {
        const Index a = tri[k], b = tri[(k + 1) % 3];
        uses.push_back({(std::uint64_t{std::min(a, b)} << 32) | std::max(a, b), a < b});
      }
    }
    std::sort(uses.begin(), uses.end(), [](const Use& x, const Use& y) { return x.key < y.key; });
    for (std::size_t i = 0, j = 0; i < uses.size(); i = j) {
      const std::uint64_t key = uses[i].key;
      std::uint32_t faces = 0, forward = 0;
      for (j = i; j < uses.size() && uses[j].key == key; ++j) ++faces, forward += uses[j].forward ? 1 : 0;
      ++t_.edges;
      const auto a = static_cast<Index>(key >> 32), b = static_cast<Index>(key & 0xffffffffu);
      if (faces > 2) list(t_.nonmanifold_edges, t_.nonmanifold_edge_count, std::pair{a, b});
      if (faces == 2 && forward != 1) list(t_.flipped_edges, t_.flipped_edge_count, std::pair{a, b});
      if (faces == 1) {
        loops_.unite(a, b);
        on_boundary_[a] = on_boundary_[b] = 1;
      }
    }
  }

  /// Components, and non-manifold vertices (the faces around a vertex forming several fans: its
  /// link, the edges opposite it, not connected).
  void vertices() {
    std::vector<std::size_t> off(n_ + 1, 0);
    for (std::size_t f = 0; f < m_.faces.size(); ++f)
      if (!bad_face_[f])
        for (Index v : m_.faces[f]) ++off[v + 1];
    std::partial_sum(off.begin(), off.end(), off.begin());
    std::vector<std::size_t> inc(off[n_]);
    {
      std::vector<std::size_t> at(off.begin(), off.end() - 1);
      for (std::size_t f = 0; f < m_.faces.size(); ++f)
        if (!bad_face_[f])
          for (Index v : m_.faces[f]) inc[at[v]++] = f;
    }
    for (std::size_t v = 0; v < n_; ++v)
      if (off[v] != off[v + 1] && fans(static_cast<Index>(v), inc.data() + off[v], inc.data() + off[v + 1]) > 1)
        list(t_.nonmanifold_vertices, t_.nonmanifold_vertex_count, static_cast<Index>(v));
  }

  /// The number of fans of faces [b, e) around v (joining v's component with its neighbours').
  std::size_t fans(Index v, const std::size_t* b, const std::size_t* e) {
    local_v_.clear();
    local_p_.clear();
    // not clear() (nor = {}, which clears): it zeroes every bucket of the last hub, at every call
    if (!local_ix_.empty()) decltype(local_ix_)().swap(local_ix_);
    // v's neighbours, numbered as met: a scan while there are few (the usual degree), a hash map
    // past that (a polygon of n vertices fanned from one corner gives it degree n − 2)
    constexpr std::size_t kScan = 32;
    auto id = [&](Index x) {
      if (local_v_.size() <= kScan) {
        for (std::size_t i = 0; i < local_v_.size(); ++i)
          if (local_v_[i] == x) return static_cast<Index>(i);
      } else {
        if (local_ix_.empty())
          for (std::size_t i = 0; i < local_v_.size(); ++i) local_ix_.emplace(local_v_[i], static_cast<Index>(i));
        if (const auto it = local_ix_.find(x); it != local_ix_.end()) return it->second;
      }
      const auto i = static_cast<Index>(local_v_.size());
      local_v_.push_back(x);
      local_p_.push_back(i);
      if (!local_ix_.empty()) local_ix_.emplace(x, i);
      return i;
    };
    auto find = [&](Index x) {
      while (local_p_[x] != x) x = local_p_[x] = local_p_[local_p_[x]];
      return x;
    };
    for (const std::size_t* f = b; f != e; ++f) {
      const auto& tri = m_.faces[*f];
      Index others[2] = {0, 0};
      int k = 0;
      for (Index w : tri)
        if (w != v) others[k++] = w;
      comp_.unite(v, others[0]);
      comp_.unite(v, others[1]);
      const Index x = id(others[0]), y = id(others[1]);
      local_p_[find(x)] = find(y);
    }
    std::size_t count = 0;
    for (std::size_t i = 0; i < local_v_.size(); ++i)
      if (find(static_cast<Index>(i)) == i) ++count;
    return count;
  }

  /// Component and loop counts, the Euler characteristic (faces refused by index do not count;
  /// zero-area ones do).
  void totals() {
    std::vector<bool> root_seen(n_, false);
    std::size_t referenced = 0;
    for (std::size_t v = 0; v < n_; ++v) {
      if (degree_[v] == 0) continue;
      ++referenced;
      const Index r = comp_.find(static_cast<Index>(v));
      if (!root_seen[r]) root_seen[r] = true, ++t_.components;
    }
    std::size_t index_bad = 0;
    for (bool b : bad_face_) index_bad += b;
    t_.euler = static_cast<std::int64_t>(referenced) - static_cast<std::int64_t>(t_.edges) +
               static_cast<std::int64_t>(t_.faces - index_bad);
    if (t_.nonmanifold_edge_count != 0 || t_.nonmanifold_vertex_count != 0) return;
    std::fill(root_seen.begin(), root_seen.end(), false);
    for (std::size_t v = 0; v < n_; ++v) {
      if (!on_boundary_[v]) continue;
      const Index r = loops_.find(static_cast<Index>(v));
      if (!root_seen[r]) root_seen[r] = true, ++t_.boundary_loops;
    }
  }

  const TriMesh& m_;
  std::size_t n_;
  MeshTopology t_;
  std::vector<std::uint32_t> degree_;
  std::vector<bool> bad_face_;
  Dsu loops_, comp_;
  std::vector<std::uint8_t> on_boundary_;
  std::vector<Index> local_v_, local_p_;
  std::unordered_map<Index, Index> local_ix_;  // local_v_ → its number, once local_v_ is long
};

}  // namespace

MeshTopology mesh_topology(const TriMesh& mesh) { return TopologyScan(mesh).run(); }

bool MeshTopology::clean() const {
  return unreferenced_count == 0 && degenerate_count == 0 && duplicate_count == 0 && nonmanifold_edge_count == 0 &&
         flipped_edge_count == 0 && nonmanifold_vertex_count == 0;
}

bool MeshTopology::disk() const { return clean() && components == 1 && boundary_loops == 1 && euler == 1; }

std::string MeshTopology::manifold_problems() const {
  std::vector<std::string> r;
  auto more = [](std::size_t listed, std::size_t count) {
    return count > listed ? " and " + std::to_string(count - listed) + " more" : std::string();
  };
  auto idx = [](const auto& v) {
    std::string s;
    for (const auto& x : v) {
      if (!s.empty()) s += ", ";
      if constexpr (std::is_same_v<std::decay_t<decltype(x)>, std::pair<Index, Index>>)
        s += std::to_string(x.first) + "–" + std::to_string(x.second);
      else if constexpr (std::is_same_v<std::decay_t<decltype(x)>, std::pair<std::size_t, std::size_t>>)
        s += std::to_string(x.first) + " = " + std::to_string(x.second);
      else s += std::to_string(x);
    }
    return s;
  };
  if (nonmanifold_edge_count)
    r.push_back(std::to_string(nonmanifold_edge_count) + " non-manifold edges (more than two faces): " +
                idx(nonmanifold_edges) + more(nonmanifold_edges.size(), nonmanifold_edge_count));
  if (nonmanifold_vertex_count)
    r.push_back(std::to_string(nonmanifold_vertex_count) + " non-manifold vertices (faces in several fans): " +
                idx(nonmanifold_vertices) + more(nonmanifold_vertices.size(), nonmanifold_vertex_count));
  if (flipped_edge_count)
    r.push_back(std::to_string(flipped_edge_count) +
                " edges whose two faces run the same way (inconsistent orientation): " + idx(flipped_edges) +
                more(flipped_edges.size(), flipped_edge_count));
  if (degenerate_count)
    r.push_back(std::to_string(degenerate_count) + " degenerate faces (repeated vertex or zero area), 0-based: " +
                idx(degenerate_faces) + more(degenerate_faces.size(), degenerate_count));
  if (duplicate_count)
    r.push_back(std::to_string(duplicate_count) + " duplicate faces (same vertices), pairs: " + idx(duplicate_faces) +
                more(duplicate_faces.size(), duplicate_count));
  if (unreferenced_count)
    r.push_back(std::to_string(unreferenced_count) + " unreferenced vertices (in no face), 0-based: " +
                idx(unreferenced) + more(unreferenced.size(), unreferenced_count));
  std::string s;
  for (const auto& x : r) s += (s.empty() ? "" : "; ") + x;
  return s;
}

std::string MeshTopology::disk_problems() const {
  if (disk()) return "";
  std::string s = manifold_problems();
  if (components != 1 || boundary_loops != 1 || euler != 1) {
    std::string what = "not a disk: " + std::to_string(components) + " component" + (components == 1 ? "" : "s") +
                       ", Euler characteristic " + std::to_string(euler) + " and " + std::to_string(boundary_loops) +
                       " boundary loop" + (boundary_loops == 1 ? "" : "s") + " (a disk has 1, 1 and 1)";
    if (components == 1 && boundary_loops == 0 && euler % 2 == 0 && euler <= 2)
      what += ": a closed surface of genus " + std::to_string((2 - euler) / 2);
    else if (components == 1 && boundary_loops > 1)
      what += ": a surface with " + std::to_string(boundary_loops - 1) + " holes";
    s += (s.empty() ? "" : "; ") + what;
  }
  return s;
}

// ---- writers -----------------------------------------------------------------------------------

void write_obj(std::ostream& out, const TriMesh& m, const MeshUv& given) {
  const MeshUv& uv = given.empty() ? m.uv : given;
  check_uv(m, uv);
  out << "# written by gemflow\n";
  for (const auto& p : m.vertices) out << "v " << num(p[0]) << ' ' << num(p[1]) << ' ' << num(p[2]) << '\n';
  for (const auto& t : uv) out << "vt " << num(t[0]) << ' ' << num(t[1]) << '\n';
  for (const auto& f : m.faces) {
    out << 'f';
    for (Index v : f) {
      out << ' ' << v + 1;
      if (!uv.empty()) out << '/' << v + 1;
    }
    out << '\n';
  }
}

void write_ply(std::ostream& out, const TriMesh& m, bool binary, const MeshUv& given) {
  const MeshUv& uv = given.empty() ? m.uv : given;
  check_uv(m, uv);
  out << "ply\nformat " << (binary ? "binary_little_endian" : "ascii") << " 1.0\ncomment written by gemflow\n"
      << "element vertex " << m.vertices.size() << "\nproperty double x\nproperty double y\nproperty double z\n";
  if (!uv.empty()) out << "property double s\nproperty double t\n";
  out << "element face " << m.faces.size() << "\nproperty list uchar int vertex_indices\nend_header\n";
  auto put = [&](auto v) {
    if constexpr (std::endian::native == std::endian::big) {
      unsigned char b[sizeof v];
      std::memcpy(b, &v, sizeof v);
      std::reverse(b, b + sizeof v);
      out.write(reinterpret_cast<const char*>(b), sizeof v);
    } else {
      out.write(reinterpret_cast<const char*>(&v), sizeof v);
    }
  };
  for (std::size_t i = 0; i < m.vertices.size(); ++i) {
    const auto& p = m.vertices[i];
    if (binary) {
      put(p[0]), put(p[1]), put(p[2]);
      if (!uv.empty()) put(uv[i][0]), put(uv[i][1]);
    } else {
      out << num(p[0]) << ' ' << num(p[1]) << ' ' << num(p[2]);
      if (!uv.empty()) out << ' ' << num(uv[i][0]) << ' ' << num(uv[i][1]);
      out << '\n';
    }
  }
  for (const auto& f : m.faces) {
    if (binary) {
      put(std::uint8_t{3});
      for (Index v : f) put(static_cast<std::int32_t>(v));
    } else {
      out << "3 " << f[0] << ' ' << f[1] << ' ' << f[2] << '\n';
    }
  }
}

void write_vtp(std::ostream& out, const TriMesh& m, const MeshUv& given) {
  const MeshUv& uv = given.empty() ? m.uv : given;
  check_uv(m, uv);
  out << "<?xml version=\"1.0\"?>\n<VTKFile type=\"PolyData\" version=\"1.0\" byte_order=\"LittleEndian\">\n"
      << "  <PolyData>\n    <Piece NumberOfPoints=\"" << m.vertices.size() << "\" NumberOfPolys=\"" << m.faces.size()
      << "\">\n";
  if (!uv.empty()) {
    out << "      <PointData TCoords=\"uv\">\n        <DataArray type=\"Float64\" Name=\"uv\" "
           "NumberOfComponents=\"2\" format=\"ascii\">\n";
    for (const auto& t : uv) out << "          " << num(t[0]) << ' ' << num(t[1]) << '\n';
    out << "        </DataArray>\n      </PointData>\n";
  }
  out << "      <Points>\n        <DataArray type=\"Float64\" NumberOfComponents=\"3\" format=\"ascii\">\n";
  for (const auto& p : m.vertices) out << "          " << num(p[0]) << ' ' << num(p[1]) << ' ' << num(p[2]) << '\n';
  out << "        </DataArray>\n      </Points>\n      <Polys>\n"
      << "        <DataArray type=\"Int64\" Name=\"connectivity\" format=\"ascii\">\n";
  for (const auto& f : m.faces) out << "          " << f[0] << ' ' << f[1] << ' ' << f[2] << '\n';
  out << "        </DataArray>\n        <DataArray type=\"Int64\" Name=\"offsets\" format=\"ascii\">\n";
  for (std::size_t i = 0; i < m.faces.size(); ++i) out << "          " << 3 * (i + 1) << '\n';
  out << "        </DataArray>\n      </Polys>\n    </Piece>\n  </PolyData>\n</VTKFile>\n";
}

}  // namespace gemflow::io
