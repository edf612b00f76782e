#pragma once
// Binary serialisation of data values, for the lasting result cache (gemflow/disk_cache.hpp).
//
// A type opts in by specialising Serial<T> (the SDK's standard types do, in core/src/
// serialize.cpp; a plugin's own type may do the same next to its DataType<T>):
//
//   template <> struct Serial<MyType> {
//     static constexpr std::uint32_t version = 1;   // bump when the encoding changes
//     static void write(BinaryWriter& w, const MyType& v);
//     static MyType read(BinaryReader& r);          // throws SerialError on bad data
//   };
//
// Registry::add_type<T> records the pair when Serial<T> exists; a type without one is simply
// never written to the disk cache. The encoding is little-endian fixed-width integers and IEEE
// doubles, lengths as u64, strings as length + bytes: the files are a cache for one machine
// type, not an exchange format, so no byte-order or float-format conversion is done.
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <stdexcept>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include "gemflow/error.hpp"

namespace gemflow {

/// Malformed or truncated serialised data (a corrupt cache entry).
class SerialError : public Error {
 public:
  using Error::Error;
};

/// Appends values to a byte string.
class BinaryWriter {
 public:
  template <class T>
  requires std::is_arithmetic_v<T>
  void put(T v) {
    const auto at = buf_.size();
    buf_.resize(at + sizeof(T));
    std::memcpy(buf_.data() + at, &v, sizeof(T));
  }
  void size(std::size_t n) { put<std::uint64_t>(n); }
  void str(std::string_view s) {
    size(s.size());
    buf_.append(s);
  }
  /// A vector of arithmetic values or of arrays/structs of them (trivially copyable), as one block.
  template <class T>
  requires std::is_trivially_copyable_v<T>
  void block(const std::vector<T>& v) {
    size(v.size());
    const auto at = buf_.size();
    buf_.resize(at + v.size() * sizeof(T));
    if (!v.empty()) std::memcpy(buf_.data() + at, v.data(), v.size() * sizeof(T));
  }
  void strings(const std::vector<std::string>& v) {
    size(v.size());
    for (const auto& s : v) str(s);
  }
  [[nodiscard]] const std::string& bytes() const noexcept { return buf_; }
  [[nodiscard]] std::string take() noexcept { return std::move(buf_); }

 private:
  std::string buf_;
};

/// Reads what BinaryWriter wrote; every read is bounds-checked (SerialError names what was
/// being read), and counts are checked against the bytes left before anything is allocated.
class BinaryReader {
 public:
  explicit BinaryReader(std::string_view bytes) : p_(bytes.data()), end_(bytes.data() + bytes.size()) {}
  template <class T>
  requires std::is_arithmetic_v<T> T get(const char* what = "a value") {
    need(sizeof(T), what);
    T v;
    std::memcpy(&v, p_, sizeof(T));
    p_ += sizeof(T);
    return v;
  }
  /// A count of items of at least `min_item_bytes` each: refused when more than the bytes left.
  std::size_t size(const char* what = "a count", std::size_t min_item_bytes = 1) {
    const auto n = get<std::uint64_t>(what);
    if (min_item_bytes != 0 && n > left() / min_item_bytes)
      throw SerialError(std::string("corrupt data: ") + what + " of " + std::to_string(n) + " exceeds the " +
                        std::to_string(left()) + " bytes left");
    return static_cast<std::size_t>(n);
  }
  std::string str(const char* what = "a string") {
    const std::size_t n = size(what);
    std::string s(p_, n);
    p_ += n;
    return s;
  }
  template <class T>
  requires std::is_trivially_copyable_v<T> std::vector<T> block(const char* what = "an array") {
    const std::size_t n = size(what, sizeof(T));
    std::vector<T> v(n);
    if (n) std::memcpy(v.data(), p_, n * sizeof(T));
    p_ += n * sizeof(T);
    return v;
  }
  std::vector<std::string> strings(const char* what = "strings") {
    std::vector<std::string> v(size(what, 8));
    for (auto& s : v) s = str(what);
    return v;
  }
  [[nodiscard]] std::size_t left() const noexcept { return static_cast<std::size_t>(end_ - p_); }
  /// Throws unless everything was read (trailing bytes mean another encoding).
  void finish(const char* what) const {
    if (p_ != end_) throw SerialError(std::string("corrupt data: ") + std::to_string(left()) + " bytes after " + what);
  }

 private:
  void need(std::size_t n, const char* what) const {
    if (left() < n) throw SerialError(std::string("corrupt data: truncated in ") + what);
  }
  const char* p_;
  const char* end_;
};

/// Specialise for a type to make it cacheable on disk (see the file comment).
template <class T>
struct Serial;

template <class T>
concept SerialType = requires(BinaryWriter& w, BinaryReader& r, const T& v) {
  { Serial<T>::version } -> std::convertible_to<std::uint32_t>;
  Serial<T>::write(w, v);
  { Serial<T>::read(r) } -> std::same_as<T>;
};

// The SDK's standard types (core/src/serialize.cpp).
template <class T>
class Matrix;
struct DistanceBounds;
struct Structure;
struct RestraintSet;
struct Table;
struct MoleculeSet;
struct Image;
struct Signal;
struct Scores;
struct Segmentation;
struct TriMesh;
struct CirclePacking;

#define GEMFLOW_DECLARE_SERIAL(T, V)                \
  template <>                                       \
  struct Serial<T> {                                \
    static constexpr std::uint32_t version = V;     \
    static void write(BinaryWriter& w, const T& v); \
    static T read(BinaryReader& r);                 \
  }
GEMFLOW_DECLARE_SERIAL(Matrix<double>, 1);
GEMFLOW_DECLARE_SERIAL(Matrix<float>, 1);
GEMFLOW_DECLARE_SERIAL(DistanceBounds, 1);
GEMFLOW_DECLARE_SERIAL(Structure, 1);
GEMFLOW_DECLARE_SERIAL(RestraintSet, 2);
GEMFLOW_DECLARE_SERIAL(Table, 1);
GEMFLOW_DECLARE_SERIAL(MoleculeSet, 1);
GEMFLOW_DECLARE_SERIAL(Image, 1);
GEMFLOW_DECLARE_SERIAL(Signal, 2);
GEMFLOW_DECLARE_SERIAL(Scores, 1);
GEMFLOW_DECLARE_SERIAL(Segmentation, 1);
GEMFLOW_DECLARE_SERIAL(TriMesh, 2);  // 2: uv
GEMFLOW_DECLARE_SERIAL(CirclePacking, 1);
#undef GEMFLOW_DECLARE_SERIAL

}  // namespace gemflow
