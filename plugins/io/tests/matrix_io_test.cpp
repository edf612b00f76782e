// Matrix Market / .npy / CSV readers, the .npy writer and the io.read_matrix / io.write_table nodes.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <limits>
#include <map>
#include <sstream>

#include <nlohmann/json.hpp>

#include <gemflow/types.hpp>

#include <gemflow/testing.hpp>

#include "gemflow/io/errors.hpp"
#include "gemflow/io/matrix_io.hpp"
#include "gemflow/io/molecules.hpp"
#include "io_test_support.hpp"
#include "register.hpp"

using namespace gemflow;
using namespace gemflow::io;
using gemflow::io::testing::expect_error_at;
using gemflow::io::testing::sample;
using gemflow::io::testing::shared;
using gemflow::io::testing::write_temp;

namespace {

Matrix<double> mtx(const std::string& text, MatrixFileInfo* info = nullptr, ReadMatrixOptions o = {}) {
  return parse_matrix_market(text, "t.mtx", o, info);
}

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

/// A .npy file with any header text (for malformed cases); data appended raw.
std::string npy_bytes(int major, const std::string& dict, const std::string& data) {
  std::string header = dict;
  const std::size_t pre = major == 1 ? 10 : 12;
  header.append((64 - (pre + header.size() + 1) % 64) % 64, ' ');
  header += '\n';
  std::string out("\x93NUMPY", 6);
  out += static_cast<char>(major);
  out += '\0';
  const auto len = static_cast<std::uint32_t>(header.size());
  out += static_cast<char>(len & 0xFF);
  out += static_cast<char>((len >> 8) & 0xFF);
  if (major != 1) {
    out += static_cast<char>((len >> 16) & 0xFF);
    out += static_cast<char>(len >> 24);
  }
  return out + header + data;
}

template <class T>
std::string raw(const std::vector<T>& v) {
  return std::string(reinterpret_cast<const char*>(v.data()), v.size() * sizeof(T));
}

bool have_numpy() { return std::system("/usr/bin/python3 -c 'import numpy' >/dev/null 2>&1") == 0; }

}  // namespace

// ---- Matrix Market: sample data ------------------------------------------------------------

TEST(MatrixMarket, Bcsstk13FullSymmetricWithEveryEntryOfTheFile) {
  const std::string path = sample("spd/bcsstk13.mtx");
  MatrixFileInfo info;
  const auto m = read_matrix_market(path, {}, &info);
  ASSERT_EQ(m.rows(), 2003u);
  ASSERT_EQ(m.cols(), 2003u);
  EXPECT_EQ(info.layout, "coordinate");
  EXPECT_EQ(info.field, "real");
  EXPECT_EQ(info.symmetry, "symmetric");
  EXPECT_EQ(info.duplicates, 0u);

  // Oracle: an independent stream parse of the file text.
  std::istringstream in(read_file(path));
  std::string line;
  std::size_t rows = 0, cols = 0, nnz = 0, diag = 0, entries = 0;
  std::map<std::pair<std::size_t, std::size_t>, double> oracle;
  while (std::getline(in, line)) {
    if (line.empty() || line[0] == '%') continue;
    std::istringstream ls(line);
    if (rows == 0) {
      ls >> rows >> cols >> nnz;
      continue;
    }
    std::size_t i = 0, j = 0;
    std::string v;
    ls >> i >> j >> v;
    oracle[{i - 1, j - 1}] = std::strtod(v.c_str(), nullptr);
    diag += i == j;
    ++entries;
  }
  ASSERT_EQ(nnz, 42943u);  // the size line
  EXPECT_EQ(info.stored, nnz);
  EXPECT_EQ(entries, nnz);
  EXPECT_EQ(oracle.size(), nnz);  // no duplicates in the file
  for (const auto& [ij, v] : oracle) {
    ASSERT_EQ(m(ij.first, ij.second), v) << ij.first << "," << ij.second;
    ASSERT_EQ(m(ij.second, ij.first), v) << ij.first << "," << ij.second;
  }
  // Spot checks against the file text (1-based in the file).
  EXPECT_EQ(m(0, 0), 277281165.183);
  EXPECT_EQ(m(2, 0), -51131286.8839);
  EXPECT_EQ(m(0, 2), -51131286.8839);
  EXPECT_EQ(m(2002, 2001), -1.86264514923e-9);
  EXPECT_EQ(m(2001, 2002), -1.86264514923e-9);
  EXPECT_EQ(m(2002, 2002), 5552681.3139);

  // Full matrix: every stored off-diagonal entry twice, the diagonal once, nothing else.
  std::size_t nonzero = 0, explicit_zero = 0;
  for (double v : m.span()) nonzero += v != 0.0;
  for (const auto& [ij, v] : oracle) explicit_zero += (v == 0.0) * (ij.first == ij.second ? 1 : 2);
  EXPECT_EQ(nonzero + explicit_zero, 2 * nnz - diag);
  EXPECT_EQ(2 * nnz - diag, 83883u);  // the nnz of HB/bcsstk13 in the SuiteSparse collection
  EXPECT_TRUE(is_symmetric(m));
  // A stiffness matrix: positive diagonal (a necessary condition for SPD; eigen-free).
  for (std::size_t i = 0; i < 2003; ++i) ASSERT_GT(m(i, i), 0.0) << i;
}

TEST(MatrixMarket, Bus494FromSharedData) {
  if (shared("spd/494_bus.mtx").empty()) GTEST_SKIP() << "GEMFLOW_SHARED_DATA not set or absent";
  MatrixFileInfo info;
  const auto bus = read_matrix_market(shared("spd/494_bus.mtx"), {}, &info);
  EXPECT_EQ(bus.rows(), 494u);
  EXPECT_EQ(info.stored, 1080u);
  EXPECT_TRUE(is_symmetric(bus));
  EXPECT_EQ(bus(0, 0), 2220.874);
  EXPECT_EQ(bus(15, 0), -9.960159);
  EXPECT_EQ(bus(0, 15), -9.960159);
}

TEST(MatrixMarket, IndefiniteArraySymmetric) {
  MatrixFileInfo info;
  // 4×4 array symmetric: the lower triangle column by column.
  const auto a = read_matrix(sample("spd/not_spd/full_symmetric_array_indefinite.mtx"), {}, &info);
  ASSERT_EQ(a.rows(), 4u);
  EXPECT_EQ(info.layout, "array");
  EXPECT_EQ(info.stored, 10u);
  const double lower[] = {10.762188911437988, 18.18952178955078, 28.239410400390625, 22.269603729248047,
                          7.084949970245361,  18.75064468383789, 19.203340530395508, 7.289100170135498,
                          19.899736404418945, 3.9635860919952393};
  std::size_t k = 0;
  for (std::size_t j = 0; j < 4; ++j)
    for (std::size_t i = j; i < 4; ++i, ++k) {
      EXPECT_EQ(a(i, j), lower[k]);
      EXPECT_EQ(a(j, i), lower[k]);
    }
  // Indefinite: the 2×2 leading minor is negative (10.76·7.08 − 18.19² < 0).
  EXPECT_LT(a(0, 0) * a(1, 1) - a(0, 1) * a(1, 0), 0.0);
}

TEST(MatrixMarket, SampleMalformedFile) {
  // "array pattern symmetric" is an invalid combination: refused on the banner line.
  expect_error_at([] { (void)read_matrix(sample("spd/malformed/mangled_format.mtx")); }, 1,
                  {"mangled_format.mtx:1:", "'array pattern'"});
}

TEST(MatrixMarket, SharedMalformedAndEdgeCases) {
  if (shared("spd/malformed/bad_header.mtx").empty()) GTEST_SKIP() << "GEMFLOW_SHARED_DATA not set or absent";
  expect_error_at([] { (void)read_matrix(shared("spd/malformed/bad_header.mtx")); }, 1, {"symmetry 'bogus'"});
  expect_error_at([] { (void)read_matrix(shared("spd/malformed/bad_matrix_type.mtx")); }, 1, {"complex"});
  expect_error_at([] { (void)read_matrix(shared("spd/malformed/mangled1.mtx")); }, 1, {"object 'mangled'"});
  expect_error_at([] { (void)read_matrix(shared("spd/malformed/bad_dimensions.mtx")); }, 3, {"missing size line"});
  expect_error_at([] { (void)read_matrix(shared("spd/not_spd/c_complex_hermitian.mtx")); }, 1, {"complex"});
  // A zero dimension is refused at the size line (issue 34: such matrices read as empty, which no
  // node can use); a valid file with no entries is all zeros.
  expect_error_at([] { (void)read_matrix(shared("spd/malformed/3by0.mtx")); }, 2, {"a 3×0 matrix has no entries"});
  auto e = read_matrix(shared("spd/malformed/empty_3x4.mtx"));
  EXPECT_EQ(e.rows(), 3u);
  EXPECT_EQ(e.cols(), 4u);
  for (double v : e.span()) EXPECT_EQ(v, 0.0);
  // pattern symmetric: ones at the stored positions and their mirrors.
  MatrixFileInfo info;
  auto p = read_matrix(shared("spd/not_spd/can___24_pattern.mtx"), {}, &info);
  EXPECT_EQ(p.rows(), 24u);
  EXPECT_EQ(info.field, "pattern");
  EXPECT_TRUE(is_symmetric(p));
  for (double v : p.span()) EXPECT_TRUE(v == 0.0 || v == 1.0);
  // general storage: symmetric or not, as the values say.
  EXPECT_FALSE(is_symmetric(read_matrix(shared("spd/not_spd/west0067_unsymmetric.mtx"))));
  EXPECT_TRUE(is_symmetric(read_matrix(shared("spd/pts5ldd03_spd_stored_as_general.mtx"))));
}

// ---- Matrix Market: every rule on small texts ------------------------------------------------

TEST(MatrixMarket, CoordinateGeneralSkewPatternInteger) {
  auto g = mtx("%%MatrixMarket matrix coordinate real general\n% c\n\n2 3 3\n1 3 1.5\n2 1 -2e-3\n2 2 1.0D+02\n");
  ASSERT_EQ(g.rows(), 2u);
  ASSERT_EQ(g.cols(), 3u);
  EXPECT_EQ(g(0, 2), 1.5);
  EXPECT_EQ(g(1, 0), -2e-3);
  EXPECT_EQ(g(1, 1), 100.0);
  EXPECT_EQ(g(0, 0), 0.0);
  auto s = mtx("%%MatrixMarket matrix coordinate real skew-symmetric\n3 3 2\n2 1 4\n3 2 -1\n");
  EXPECT_EQ(s(1, 0), 4.0);
  EXPECT_EQ(s(0, 1), -4.0);
  EXPECT_EQ(s(2, 1), -1.0);
  EXPECT_EQ(s(1, 2), 1.0);
  EXPECT_EQ(s(0, 0), 0.0);
  auto p = mtx("%%MATRIXMARKET Matrix Coordinate Pattern General\r\n2 2 2\r\n1 2\r\n2 2\r\n");
  EXPECT_EQ(p(0, 1), 1.0);
  EXPECT_EQ(p(1, 1), 1.0);
  EXPECT_EQ(p(0, 0), 0.0);
  auto i = mtx("%%MatrixMarket matrix coordinate integer symmetric\n2 2 2\n1 1 7\n2 1 -3\n");
  EXPECT_EQ(i(0, 1), -3.0);
  EXPECT_EQ(i(1, 0), -3.0);
  EXPECT_EQ(i(0, 0), 7.0);
}

TEST(MatrixMarket, ArrayGeneralColumnMajorAndSkew) {
  auto g = mtx("%%MatrixMarket matrix array real general\n2 3\n1\n2\n3\n4\n5\n6\n");
  EXPECT_EQ(g(0, 0), 1.0);
  EXPECT_EQ(g(1, 0), 2.0);
  EXPECT_EQ(g(0, 1), 3.0);
  EXPECT_EQ(g(1, 2), 6.0);
  auto s = mtx("%%MatrixMarket matrix array real skew-symmetric\n3 3\n1\n2\n3\n");
  EXPECT_EQ(s(1, 0), 1.0);
  EXPECT_EQ(s(2, 0), 2.0);
  EXPECT_EQ(s(2, 1), 3.0);
  EXPECT_EQ(s(0, 2), -2.0);
  EXPECT_EQ(s(1, 1), 0.0);
}

TEST(MatrixMarket, DuplicatesSummedOrRefused) {
  const std::string t = "%%MatrixMarket matrix coordinate real symmetric\n2 2 3\n2 1 1.5\n1 1 1\n2 1 0.25\n";
  MatrixFileInfo info;
  auto m = mtx(t, &info);
  EXPECT_EQ(m(1, 0), 1.75);
  EXPECT_EQ(m(0, 1), 1.75);
  EXPECT_EQ(info.duplicates, 1u);
  expect_error_at([&] { (void)mtx(t, nullptr, {.duplicates = DuplicateEntries::error}); }, 5,
                  {"entry (2, 1) was already given on line 3"});
}

TEST(MatrixMarket, MalformedTextsNameTheLine) {
  const std::string b = "%%MatrixMarket matrix coordinate real general\n";
  expect_error_at([] { (void)mtx(""); }, 0, {"empty file"});
  expect_error_at([] { (void)mtx("3 3 1\n1 1 1\n"); }, 1, {"not a Matrix Market file"});
  expect_error_at([] { (void)mtx("%%MatrixMarket matrix coordinate real\n"); }, 1, {"5 words"});
  expect_error_at([] { (void)mtx("%%MatrixMarket vector coordinate real general\n"); }, 1, {"object 'vector'"});
  expect_error_at([] { (void)mtx("%%MatrixMarket matrix dense real general\n"); }, 1, {"format 'dense'"});
  expect_error_at([] { (void)mtx("%%MatrixMarket matrix array real hermitian\n"); }, 1, {"hermitian"});
  expect_error_at([] { (void)mtx("%%MatrixMarket matrix coordinate pattern skew-symmetric\n"); }, 1,
                  {"pattern skew-symmetric"});
  expect_error_at([&] { (void)mtx(b + "% only comments\n"); }, 2, {"missing size line"});
  expect_error_at([&] { (void)mtx(b + "2 2\n"); }, 2, {"'M N NNZ'", "got 2"});
  expect_error_at([&] { (void)mtx(b + "2 -2 1\n"); }, 2, {"'-2' is not a non-negative integer"});
  expect_error_at([] { (void)mtx("%%MatrixMarket matrix coordinate real symmetric\n2 3 1\n"); }, 2, {"must be square"});
  expect_error_at(
      [] {
        (void)mtx("%%MatrixMarket matrix coordinate real symmetric\n2 2 4\n", nullptr,
                  {.duplicates = DuplicateEntries::error});
      },
      2, {"NNZ = 4 exceeds the 3 entries", "duplicates: error"});
  expect_error_at([&] { (void)mtx(b + "2 2 2\n1 1 1\n"); }, 3, {"ends after 1 of the 2 entries"});
  expect_error_at([&] { (void)mtx(b + "2 2 1\n1 1 1\n% x\n2 2 2\n"); }, 5, {"more entries than NNZ = 1"});
  expect_error_at([&] { (void)mtx(b + "2 2 2\n1 1 1\n3 1 2\n"); }, 4, {"(3, 1) is outside the 2×2"});
  expect_error_at([&] { (void)mtx(b + "2 2 1\n0 1 2\n"); }, 3, {"(0, 1) is outside"});
  expect_error_at([&] { (void)mtx(b + "2 2 1\n1 1\n"); }, 3, {"'i j value'", "got 2"});
  expect_error_at([&] { (void)mtx(b + "2 2 1\n1 1 abc\n"); }, 3, {"'abc' is not a number"});
  expect_error_at([&] { (void)mtx(b + "2 2 1\n1 1 nan\n"); }, 3, {"not a finite number"});
  expect_error_at([&] { (void)mtx(b + "2 2 1\n1 1 1e999\n"); }, 3, {"not a finite number"});
  expect_error_at([&] { (void)mtx(b + "2 2 1\n1.5 1 1\n"); }, 3, {"positive integers"});
  expect_error_at([] { (void)mtx("%%MatrixMarket matrix coordinate integer general\n1 1 1\n1 1 1.5\n"); }, 3,
                  {"not an integer"});
  expect_error_at([] { (void)mtx("%%MatrixMarket matrix coordinate integer general\n1 1 1\n1 1 -9007199254740993\n"); },
                  3, {"beyond ±2^53"});
  expect_error_at([] { (void)mtx("%%MatrixMarket matrix coordinate real symmetric\n2 2 1\n1 2 5\n"); }, 3,
                  {"above the diagonal"});
  expect_error_at([] { (void)mtx("%%MatrixMarket matrix coordinate real skew-symmetric\n2 2 1\n1 1 5\n"); }, 3,
                  {"not strictly below"});
  expect_error_at([] { (void)mtx("%%MatrixMarket matrix array real general\n2 2\n1\n2\n3\n"); }, 5,
                  {"ends after 3 of the 4 values"});
  expect_error_at([] { (void)mtx("%%MatrixMarket matrix array real symmetric\n2 2\n1\n2\n3\n4\n"); }, 6,
                  {"more values than the 3"});
  expect_error_at([] { (void)mtx("%%MatrixMarket matrix array real general\n1 2\n1 2\n"); }, 3, {"one value per line"});
}

// ---- NumPy .npy ------------------------------------------------------------------------------

TEST(Npy, WriterRoundTripIsBitExact) {
  Matrix<double> m(3, 4);
  for (std::size_t i = 0; i < 3; ++i)
    for (std::size_t j = 0; j < 4; ++j)
      m(i, j) = std::ldexp(1.0, static_cast<int>(i)) / 3.0 - static_cast<double>(j) * 1e-300;
  std::ostringstream os;
  write_npy(os, m);
  const std::string bytes = os.str();
  EXPECT_EQ((bytes.size() - 3 * 4 * 8) % 64, 0u);  // header padded to 64 bytes
  MatrixFileInfo info;
  const auto r = parse_npy(bytes, "m.npy", &info);
  ASSERT_EQ(r.rows(), 3u);
  ASSERT_EQ(r.cols(), 4u);
  EXPECT_EQ(info.field, "<f8");
  EXPECT_EQ(std::memcmp(r.data(), m.data(), 12 * sizeof(double)), 0);
}

TEST(Npy, DtypesOrdersAndVersions) {
  // v2 header, '<f4', Fortran order: file order is column by column.
  const std::vector<float> f = {1, 2, 3, 4, 5, 6};  // 2×3 column-major
  auto a = parse_npy(npy_bytes(2, "{'descr': '<f4', 'fortran_order': True, 'shape': (2, 3), }", raw(f)), "a.npy");
  EXPECT_EQ(a(0, 0), 1.0);
  EXPECT_EQ(a(1, 0), 2.0);
  EXPECT_EQ(a(0, 1), 3.0);
  EXPECT_EQ(a(1, 2), 6.0);
  const std::vector<std::int64_t> i8 = {-5, 7, 9007199254740992LL};
  auto b =
      parse_npy(npy_bytes(1, "{\"descr\": \"<i8\", \"fortran_order\": False, \"shape\": (1, 3)}", raw(i8)), "b.npy");
  EXPECT_EQ(b(0, 0), -5.0);
  EXPECT_EQ(b(0, 2), 9007199254740992.0);
  const std::vector<std::int32_t> i4 = {1, -2, 3, -4};
  auto c = parse_npy(npy_bytes(3, "{'shape': (4, 1), 'fortran_order': False, 'descr': '<i4'}", raw(i4)), "c.npy");
  EXPECT_EQ(c.rows(), 4u);
  EXPECT_EQ(c(3, 0), -4.0);
  EXPECT_THROW(
      (void)parse_npy(npy_bytes(1, "{'descr': '<f8', 'fortran_order': False, 'shape': (0, 5), }", ""), "e.npy"),
      ParseError);  // no elements (issue 34)
}

TEST(Npy, MalformedFilesNameTheByteOffset) {
  auto expect_npy_error = [](const std::string& bytes, std::initializer_list<std::string> parts) {
    try {
      (void)parse_npy(bytes, "x.npy");
      ADD_FAILURE() << "no ParseError, expected " << *parts.begin();
    } catch (const ParseError& e) {
      EXPECT_EQ(e.line(), 0);
      for (const auto& p : parts) EXPECT_NE(std::string(e.what()).find(p), std::string::npos) << e.what();
    }
  };
  const std::vector<double> d6(6, 1.0);
  const std::string ok = "{'descr': '<f8', 'fortran_order': False, 'shape': (2, 3), }";
  expect_npy_error("PK\x03\x04 not npy", {"x.npy: byte 0: not a .npy file"});
  expect_npy_error(std::string("\x93NUMPY\x04\x00\x10\x00", 10) + "{}",
                   {"byte 6: unsupported .npy format version 4.0"});
  {
    std::string t = npy_bytes(1, ok, raw(d6));
    t[8] = '\xff';
    t[9] = '\x7f';
    expect_npy_error(t, {"byte 8: header length 32767 runs past the end"});
  }
  // Data block at byte 128 (10 + 59-character dictionary + padding + '\n'); truncated, trailing.
  std::string full = npy_bytes(1, ok, raw(d6));
  ASSERT_EQ(full.size(), 128u + 48u);
  expect_npy_error(full.substr(0, full.size() - 8), {"byte 128: data block has 40 bytes", "needs 48"});
  expect_npy_error(full + "xx", {"byte 176: 2 unexpected byte(s)"});
  expect_npy_error(npy_bytes(1, "{'descr': '>f8', 'fortran_order': False, 'shape': (2, 3), }", raw(d6)),
                   {"byte 10:", "big-endian", "a.astype('<f8')"});
  expect_npy_error(npy_bytes(1, "{'descr': '<c16', 'fortran_order': False, 'shape': (2, 3), }", raw(d6)),
                   {"dtype '<c16' is not supported"});
  expect_npy_error(npy_bytes(1, "{'descr': '|b1', 'fortran_order': False, 'shape': (2, 3), }", raw(d6)),
                   {"dtype '|b1' is not supported"});
  expect_npy_error(npy_bytes(1, "{'descr': [('a', '<f8')], 'fortran_order': False, 'shape': (2,), }", raw(d6)),
                   {"byte 20: structured dtype"});
  expect_npy_error(npy_bytes(1, "{'descr': '<f8', 'fortran_order': False, 'shape': (6,), }", raw(d6)),
                   {"shape (6,) has 1 dimension(s)", "reshape(-1, 1)"});
  expect_npy_error(npy_bytes(1, "{'descr': '<f8', 'fortran_order': False, 'shape': (1, 2, 3), }", raw(d6)),
                   {"shape (1, 2, 3) has 3 dimension(s)"});
  expect_npy_error(npy_bytes(1, "{'descr': '<f8', 'shape': (2, 3), }", raw(d6)), {"no 'fortran_order' key"});
  expect_npy_error(npy_bytes(1, "{'descr': '<f8', 'fortran_order': Maybe, 'shape': (2, 3), }", raw(d6)),
                   {"byte 44: 'fortran_order' must be True or False"});
  expect_npy_error(npy_bytes(1, "{'descr': '<f8', 'fortran_order': False, 'shape': (2, 3), 'x': 1}", raw(d6)),
                   {"unexpected header key 'x'"});
  std::vector<double> nan6 = d6;
  nan6[4] = std::nan("");
  expect_npy_error(npy_bytes(1, ok, raw(nan6)), {"byte 160: non-finite value at (1, 1)"});
  const std::vector<std::int64_t> big = {9007199254740993LL};
  expect_npy_error(npy_bytes(1, "{'descr': '<i8', 'fortran_order': False, 'shape': (1, 1), }", raw(big)),
                   {"beyond ±2^53"});
}

TEST(Npy, FilesWrittenAndReadByNumpy) {
  if (!have_numpy()) GTEST_SKIP() << "/usr/bin/python3 with numpy not available";
  const auto dir = std::filesystem::temp_directory_path() / "gemflow_io_npy";
  std::filesystem::create_directories(dir);
  const std::string d = dir.string();
  // numpy writes: random f8 (C), f4 (Fortran), i8, i4 (version 2.0 header), plus the exact values as text
  // (repr round-trips), and reads back a file written by write_npy.
  Matrix<double> mine(2, 3);
  for (std::size_t k = 0; k < 6; ++k) mine.span()[k] = 0.1 * static_cast<double>(k) - 1.0 / 3.0;
  {
    std::ofstream out(d + "/mine.npy", std::ios::binary);
    write_npy(out, mine);
  }
  const std::string script =
      "import numpy as np, numpy.lib.format as f\n"
      "d='" +
      d +
      "'\n"
      "rng=np.random.default_rng(7)\n"
      "a=rng.standard_normal((5,7))*1e3\n"
      "np.save(d+'/f8.npy',a)\n"
      "open(d+'/f8.txt','w').write('\\n'.join(repr(float(v)) for v in a.ravel()))\n"
      "b=np.asfortranarray(a.astype('<f4'))\n"
      "np.save(d+'/f4F.npy',b)\n"
      "open(d+'/f4F.txt','w').write('\\n'.join(repr(float(v)) for v in b.ravel()))\n"
      "np.save(d+'/i8.npy',np.arange(-6,6,dtype='<i8').reshape(3,4))\n"
      "with open(d+'/i4v2.npy','wb') as fh: f.write_array(fh,np.arange(12,dtype='<i4').reshape(4,3),version=(2,0))\n"
      "np.save(d+'/vec.npy',np.ones(3))\n"
      "m=np.load(d+'/mine.npy')\n"
      "ref=np.arange(6).reshape(2,3)*0.1-1.0/3.0\n"
      "open(d+'/mine.ok','w').write(str(m.shape==(2,3) and m.dtype==np.float64 and bool((m==ref).all())))\n";
  { std::ofstream(d + "/make.py") << script; }
  ASSERT_EQ(std::system(("/usr/bin/python3 " + d + "/make.py").c_str()), 0);
  auto text_values = [](const std::string& p) {
    std::ifstream in(p);
    std::vector<double> v;
    std::string s;
    while (in >> s) v.push_back(std::strtod(s.c_str(), nullptr));
    return v;
  };
  const auto f8 = read_matrix(d + "/f8.npy");
  const auto f8v = text_values(d + "/f8.txt");
  ASSERT_EQ(f8.rows(), 5u);
  ASSERT_EQ(f8.cols(), 7u);
  for (std::size_t k = 0; k < 35; ++k) EXPECT_EQ(f8.span()[k], f8v[k]);
  MatrixFileInfo info;
  const auto f4 = read_matrix(d + "/f4F.npy", {}, &info);
  EXPECT_EQ(info.layout, "Fortran");
  EXPECT_EQ(info.field, "<f4");
  const auto f4v = text_values(d + "/f4F.txt");  // ravel() is C order
  for (std::size_t k = 0; k < 35; ++k) EXPECT_EQ(f4.span()[k], f4v[k]);
  const auto i8 = read_matrix(d + "/i8.npy");
  EXPECT_EQ(i8(0, 0), -6.0);
  EXPECT_EQ(i8(2, 3), 5.0);
  const auto i4 = read_matrix(d + "/i4v2.npy");
  EXPECT_EQ(i4(3, 2), 11.0);
  EXPECT_EQ(i4(1, 0), 3.0);
  expect_error_at([&] { (void)read_matrix(d + "/vec.npy"); }, 0, {"shape (3,) has 1 dimension(s)"});
  std::ifstream ok(d + "/mine.ok");
  std::string verdict;
  ok >> verdict;
  EXPECT_EQ(verdict, "True") << "numpy.load of write_npy's file";
}

// ---- CSV -------------------------------------------------------------------------------------

TEST(Csv, HeaderDetectionCommentsQuotesAndLineEndings) {
  MatrixFileInfo info;
  auto a = parse_csv("\xEF\xBB\xBF# made by numpy.savetxt\r\n\"x\", \"y, z\",w\r\n1, 2.5,-3e2\r\n\r\n4,5,6\r\n",
                     "a.csv", &info);
  ASSERT_EQ(a.rows(), 2u);
  ASSERT_EQ(a.cols(), 3u);
  EXPECT_EQ(a(0, 1), 2.5);
  EXPECT_EQ(a(0, 2), -300.0);
  EXPECT_EQ(a(1, 0), 4.0);
  ASSERT_EQ(info.header.size(), 3u);
  EXPECT_EQ(info.header[1], "y, z");
  auto b = parse_csv("1,2\n3,4", "b.csv", &info);
  EXPECT_TRUE(info.header.empty());
  EXPECT_EQ(b(1, 1), 4.0);
}

// QA: values below the double range (1e-330, 2.4e-324) were refused as "not a finite number";
// they round to a signed zero, as numpy and scipy read them. Above the range stays an error.
TEST(Csv, UnderflowRoundsToZeroAndOverflowIsRefused) {
  auto a = parse_csv("1e-330,-2.4e-324\n1e-320,1e-5000\n-7E-400,4.9e-324\n", "u.csv");
  ASSERT_EQ(a.rows(), 3u);
  EXPECT_EQ(a(0, 0), 0.0);
  EXPECT_FALSE(std::signbit(a(0, 0)));
  EXPECT_EQ(a(0, 1), 0.0);
  EXPECT_TRUE(std::signbit(a(0, 1)));
  EXPECT_EQ(a(1, 0), 1e-320);  // subnormal: in range, read as before
  EXPECT_EQ(a(1, 1), 0.0);
  EXPECT_TRUE(std::signbit(a(2, 0)));
  EXPECT_EQ(a(2, 1), std::numeric_limits<double>::denorm_min());
  expect_error_at([] { (void)parse_csv("1,2\n3,1e400\n", "o.csv"); }, 2, {"'1e400' is not a finite number"});
  expect_error_at([] { (void)parse_csv("1,2\n3,-1e5000\n", "o.csv"); }, 2, {"not a finite number"});
  const std::string b = "%%MatrixMarket matrix coordinate real general\n";
  const auto m = mtx(b + "2 2 2\n1 1 1e-330\n2 2 1.5D-400\n");
  EXPECT_EQ(m(0, 0), 0.0);
  EXPECT_EQ(m(1, 1), 0.0);
  expect_error_at([&] { (void)mtx(b + "2 2 1\n1 1 -1e309\n"); }, 3, {"not a finite number"});
}

// QA: classic Mac OS line endings (CR only) were read as one line; UTF-16 text was blamed on
// its first field; a quoted field with a line break said only "unterminated".
TEST(Csv, CrOnlyLineEndingsUtf16AndQuotedLineBreaks) {
  auto a = parse_csv("x,y\r1,2\r3,4\r", "mac.csv");
  ASSERT_EQ(a.rows(), 2u);
  EXPECT_EQ(a(1, 1), 4.0);
  const auto m = mtx("%%MatrixMarket matrix array real general\r2 1\r5\r6\r");
  EXPECT_EQ(m(1, 0), 6.0);
  const std::string le(
      "\xFF\xFE"
      "1\0,\0"
      "2\0\n\0",
      10);
  expect_error_at([&] { (void)parse_csv(le, "w.csv"); }, 1, {"UTF-16 (byte-order mark FF FE)", "UTF-8"});
  const std::string bare(
      "1\0,\0"
      "2\0\n\0"
      "3\0,\0"
      "4\0\n\0",
      16);
  expect_error_at([&] { (void)parse_csv(bare, "w.csv"); }, 1, {"UTF-16 (little-endian"});
  expect_error_at([&] { (void)mtx(le); }, 1, {"UTF-16"});
  expect_error_at([] { (void)parse_csv("\"4\n\",1,0\n", "q.csv"); }, 1, {"must end on its own line"});
}

// Quoting: a quote opens a field only where the field so far is blank; what follows a closed
// quote is kept; a field of 100 000 spaces then a letter and 50 000 quotes is split in one pass
// (each quote re-scanned the field's leading spaces: time in spaces × quotes).
TEST(Csv, QuotesOpenOnlyBlankFieldsInOnePass) {
  EXPECT_EQ(parse_csv("a,b\n  \"1\" , 2\n", "q.csv")(0, 0), 1.0);
  expect_error_at([] { (void)parse_csv("a,b\n1,x\"2\"\n", "q.csv"); }, 2, {"field 2 'x\"2\"' is not a number"});
  const std::string field = std::string(100000, ' ') + "a" + std::string(50000, '"');
  expect_error_at([&] { (void)parse_csv("a,b\n1," + field + "\n", "q.csv"); }, 2, {"field 2 'a"});
}

TEST(Csv, MalformedRowsNameTheLine) {
  expect_error_at([] { (void)parse_csv("a,b\n1,2\n3\n", "r.csv"); }, 3, {"r.csv:3:", "1 field(s), line 1 has 2"});
  expect_error_at([] { (void)parse_csv("1,2\n3,4,5\n", "r.csv"); }, 2, {"3 field(s)", "ragged"});
  expect_error_at([] { (void)parse_csv("\n1,x,3\n", "r.csv"); }, 2, {"field 2 'x' is not a number", "header row"});
  expect_error_at([] { (void)parse_csv("1,2\n3,abc\n", "r.csv"); }, 2, {"field 2 'abc' is not a number"});
  expect_error_at([] { (void)parse_csv("1,2\n3,\n", "r.csv"); }, 2, {"field 2 is empty"});
  expect_error_at([] { (void)parse_csv("1,2\n3,inf\n", "r.csv"); }, 2, {"not a finite number"});
  // QA: numbers separated by spaces (numpy.savetxt's default) or semicolons were taken as a
  // one-field header row ("no data rows after the header") or blamed on the next line
  expect_error_at([] { (void)parse_csv("4.000000000000000000e+00 1.000000000000000000e+00\n", "s.csv"); }, 1,
                  {"field 1 '4.000000000000000000e+00 1.0000000000000...' holds numbers separated by spaces: "
                   "CSV fields are separated by commas"});
  expect_error_at([] { (void)parse_csv("4;1\n1;3\n", "s.csv"); }, 1, {"separated by semicolons"});
  expect_error_at([] { (void)parse_csv("a,b\n1\t2,3\n", "s.csv"); }, 2,
                  {"field 1 '1\t2' is not a number (it holds numbers separated by tabs"});
  EXPECT_EQ(parse_csv("x y,z\n1,2\n", "names.csv").rows(), 1u);  // names with spaces are still a header
  expect_error_at([] { (void)parse_csv("a,b\n# nothing\n", "r.csv"); }, 2, {"no data rows after the header"});
  expect_error_at([] { (void)parse_csv("", "r.csv"); }, 0, {"no data rows"});
  expect_error_at([] { (void)parse_csv("\"a,b\n", "r.csv"); }, 1, {"unterminated quoted field"});
}

TEST(MatrixFiles, FormatByExtension) {
  EXPECT_EQ(matrix_format_from_path("/x/A.MTX"), MatrixFormat::MatrixMarket);
  EXPECT_EQ(matrix_format_from_path("a.npy"), MatrixFormat::Npy);
  EXPECT_EQ(matrix_format_from_path("a.csv"), MatrixFormat::Csv);
  expect_error_at([] { (void)matrix_format_from_path("a.rsa"); }, 0, {"unknown matrix file extension '.rsa'"});
  expect_error_at([] { (void)read_matrix("/nonexistent/a.mtx"); }, 0, {"cannot open file: No such file or directory"});
}

// QA: a folder named like a matrix file read as an empty file ("empty file", "the magic string
// is missing", "no data rows"); every reader now says what it is.
TEST(MatrixFiles, FolderNamedLikeAMatrixFileIsRefusedAsAFolder) {
  const auto dir = std::filesystem::temp_directory_path() / "gemflow_io_folders";
  for (const char* name : {"d.mtx", "d.npy", "d.csv"}) {
    std::filesystem::create_directories(dir / name);
    const std::string path = (dir / name).string();
    expect_error_at([&] { (void)read_matrix(path); }, 0, {path, "is a folder, not a file"});
  }
  std::filesystem::create_directories(dir / "m.sdf");
  expect_error_at([&] { (void)read_sdf((dir / "m.sdf").string()); }, 0, {"is a folder, not a file"});
}

// ---- nodes -------------------------------------------------------------------------------------

TEST(MatrixNodes, ReadMatrixAndWriteTable) {
  gemflow::Registry reg;
  gemflow::PluginRegistrar r(reg, "io-test");
  register_matrix_nodes(r);
  register_table_nodes(r);
  gemflow::testing::RecordingContext ctx;
  auto reader = gemflow::testing::make_node(reg, "io.read_matrix");
  reader->set_param("path", sample("spd/not_spd/full_symmetric_array_indefinite.mtx"));
  reader->execute(ctx);
  auto m = reader->output("matrix").as<Matrix<double>>();
  EXPECT_EQ(m->rows(), 4u);
  EXPECT_EQ((*m)(0, 3), 22.269603729248047);
  EXPECT_EQ(ctx.input_files().size(), 1u);

  // Errors become InputError with the same file:line.
  auto bad = gemflow::testing::make_node(reg, "io.read_matrix");
  bad->set_param("path", write_temp("dup.mtx", "%%MatrixMarket matrix coordinate real general\n2 2 2\n1 1 1\n1 1 2\n"));
  bad->set_param("duplicates", std::string("error"));
  try {
    bad->execute(ctx);
    ADD_FAILURE() << "no error";
  } catch (const InputError& e) {
    EXPECT_EQ(e.where().line, 4);
    EXPECT_NE(std::string(e.what()).find("already given on line 3"), std::string::npos) << e.what();
  }
  // QA: a NUL in the quoted line ended what() there; it is written as \x00 and the rest follows
  auto nul = gemflow::testing::make_node(reg, "io.read_matrix");
  const std::string nul_text =
      std::string("%%MatrixMarket matrix coordinate real general\n2 2 2\n1 1 4\n") + std::string("9\0x 2", 5) + "\n";
  nul->set_param("path", write_temp("nul.mtx", nul_text));
  const std::string nul_error = gemflow::testing::error_of(*nul, ctx);
  EXPECT_NE(nul_error.find("nul.mtx:4: "), std::string::npos) << nul_error;
  EXPECT_NE(nul_error.find("9\\x00x 2'"), std::string::npos) << nul_error;

  // QA: a one-column CSV whose first value is mistyped ("1.O") reads that row as a header: the
  // matrix is 2×1 and a warning names the field; a real header ("energy") gets none
  struct HeaderCase {
    std::string text;
    std::size_t rows;
    bool warned;
  };
  for (const HeaderCase& c : {HeaderCase{"1.O\n2\n3\n", 2, true}, HeaderCase{"energy\n2\n3\n", 2, false},
                              HeaderCase{"\n-2.5e3x\n1\n", 1, true}, HeaderCase{"1H,13C,15N\n1,2,3\n", 1, false},
                              HeaderCase{"1H\n2\n", 1, false}, HeaderCase{"2theta\n2\n", 1, false},
                              HeaderCase{"1O\n2\n", 1, true}, HeaderCase{"x2,b\n1,2\n", 1, false}}) {
    gemflow::testing::RecordingContext hctx;
    auto h = gemflow::testing::make_node(reg, "io.read_matrix");
    h->set_param("path", write_temp("header.csv", c.text));
    h->execute(hctx);
    EXPECT_EQ(h->output("matrix").as<Matrix<double>>()->rows(), c.rows) << c.text;
    ASSERT_EQ(hctx.warnings().size(), c.warned ? 1u : 0u) << c.text;
    if (c.warned) {
      EXPECT_NE(hctx.warnings()[0].find(c.text[0] == '\n' ? "header.csv:2: the first row was read as a header row"
                                                          : "header.csv:1: the first row was read as a header row"),
                std::string::npos)
          << hctx.warnings()[0];
    }
  }

  Table t;
  t.columns = {"name", "value", "count"};
  t.rows.push_back({std::string("a, \"quoted\""), 0.1, std::int64_t{3}});
  t.rows.push_back({std::string("b"), std::nan(""), std::int64_t{-1}});
  const auto dir = std::filesystem::temp_directory_path() / "gemflow_io_tables";
  std::filesystem::create_directories(dir);
  for (const char* name : {"t.json", "t.csv"}) {
    auto w = gemflow::testing::make_node(reg, "io.write_table");
    w->set_input("table", Value::make<Table>(t));
    w->set_param("path", (dir / name).string());
    w->execute(ctx);
  }
  const auto j = nlohmann::json::parse(read_file((dir / "t.json").string()));
  EXPECT_EQ(j["columns"], nlohmann::json({"name", "value", "count"}));
  EXPECT_EQ(j["rows"][0]["name"], "a, \"quoted\"");
  EXPECT_EQ(j["rows"][0]["value"].get<double>(), 0.1);
  EXPECT_EQ(j["rows"][0]["count"].get<std::int64_t>(), 3);
  EXPECT_TRUE(j["rows"][1]["value"].is_null());
  EXPECT_EQ(read_file((dir / "t.csv").string()), "name,value,count\n\"a, \"\"quoted\"\"\",0.1,3\nb,nan,-1\n");

  auto w = gemflow::testing::make_node(reg, "io.write_table");
  w->set_input("table", Value::make<Table>(t));
  w->set_param("path", (dir / "t.txt").string());
  EXPECT_THROW(w->execute(ctx), InputError);
}

// io.write_matrix: every format reads back to the same doubles (shortest round-trip text);
// NaN/Inf and unknown extensions are errors naming the input / the parameter.
TEST(MatrixNodes, WriteMatrixRoundTripsEveryFormat) {
  gemflow::Registry reg;
  gemflow::PluginRegistrar r(reg, "io-test");
  register_matrix_nodes(r);
  gemflow::testing::RecordingContext ctx;
  const Matrix<double> m(2, 3, {0.1, -1e-300, 1e300, 3.0, -2.5, 1.0 / 3.0});
  const auto dir = std::filesystem::temp_directory_path() / "gemflow_io_matrices";
  std::filesystem::create_directories(dir);
  for (const char* name : {"m.npy", "m.csv", "m.mtx"}) {
    auto w = gemflow::testing::make_node(reg, "io.write_matrix");
    w->set_input("matrix", Value::make<Matrix<double>>(m));
    w->set_param("path", (dir / name).string());
    w->execute(ctx);
    const Matrix<double> back = read_matrix((dir / name).string());
    ASSERT_EQ(back.rows(), 2u) << name;
    ASSERT_EQ(back.cols(), 3u) << name;
    for (std::size_t i = 0; i < 2; ++i)
      for (std::size_t j = 0; j < 3; ++j) EXPECT_EQ(back(i, j), m(i, j)) << name << " (" << i << "," << j << ")";
  }
  EXPECT_EQ(read_file((dir / "m.mtx").string()),
            "%%MatrixMarket matrix array real general\n% written by Gemflow\n2 3\n0.1\n3\n-1e-300\n-2.5\n1e+300\n"
            "0.3333333333333333\n");
  auto nan = gemflow::testing::make_node(reg, "io.write_matrix");
  nan->set_input("matrix", Value::make<Matrix<double>>(Matrix<double>(1, 2, {1.0, std::nan("")})));
  nan->set_param("path", (dir / "nan.csv").string());
  try {
    nan->execute(ctx);
    ADD_FAILURE() << "no error";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("input 'matrix': the matrix has a NaN or infinity at (0, 1)"),
              std::string::npos)
        << e.what();
  }
  EXPECT_FALSE(std::filesystem::exists(dir / "nan.csv"));  // nothing half-written
  // The readers refuse every empty matrix, so no format writes one (a file no reader accepts)
  for (const auto& [rows, cols] : {std::pair<std::size_t, std::size_t>{0, 0}, {3, 0}})
    for (const char* name : {"empty.csv", "empty.npy", "empty.mtx"}) {
      std::filesystem::remove(dir / name);
      auto empty = gemflow::testing::make_node(reg, "io.write_matrix");
      empty->set_input("matrix", Value::make<Matrix<double>>(Matrix<double>(rows, cols)));
      empty->set_param("path", (dir / name).string());
      const std::string e = gemflow::testing::error_of(*empty, ctx);
      EXPECT_NE(
          e.find("input 'matrix': a " + std::to_string(rows) + "×" + std::to_string(cols) + " matrix has no entries"),
          std::string::npos)
          << name << ": " << e;
      EXPECT_FALSE(std::filesystem::exists(dir / name));
    }
  auto ext = gemflow::testing::make_node(reg, "io.write_matrix");
  ext->set_input("matrix", Value::make<Matrix<double>>(m));
  ext->set_param("path", (dir / "m.txt").string());
  try {
    ext->execute(ctx);
    ADD_FAILURE() << "no error";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("parameter 'path'"), std::string::npos) << e.what();
  }
}
