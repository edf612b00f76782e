#pragma once
// Reading dense matrices: Matrix Market (.mtx), NumPy (.npy) and CSV (.csv); writing .npy.
//
// Every reader returns a dense, row-major gemflow::Matrix<double> (gemflow/types/matrix.hpp),
// symmetric storage expanded to the full matrix. Errors are ParseError (gemflow/io/errors.hpp)
// with file:line for the text formats; for .npy the line is 0 and the message starts with
// "byte N:" (offset from the start of the file). Values must be finite: NaN or Inf is an error
// naming where it is (a solver would fail on it later, far from the file).
//
// Sources:
//  - Matrix Market: Boisvert, Pozo & Remington, "The Matrix Market Exchange Formats: Initial
//    Design", NIST IR 5935, 1996 (https://math.nist.gov/MatrixMarket/formats.html); reference
//    reader mmio.c.
//  - NumPy: "A Simple File Format for NumPy Arrays", NEP 1 and numpy.lib.format (versions
//    1.0, 2.0, 3.0).
//  - CSV: RFC 4180 (comma-separated, one record per line).
#include <cstddef>
#include <iosfwd>
#include <string>
#include <string_view>
#include <vector>

#include "gemflow/io/limits.hpp"
#include "gemflow/types/matrix.hpp"

namespace gemflow::io {

/// What to do with a coordinate entry given twice in a Matrix Market file.
enum class DuplicateEntries {
  sum,    ///< add them (finite-element assembly convention; scipy.io.mmread, SuiteSparse)
  error,  ///< ParseError naming both lines
};

struct ReadMatrixOptions {
  DuplicateEntries duplicates = DuplicateEntries::sum;
  CancelCheck cancel;  ///< polled every 4096 lines of .mtx and .csv files (ReadCancelled)
};

/// What a reader found besides the values (for logs and provenance).
struct MatrixFileInfo {
  std::string format;               ///< "mtx", "npy" or "csv"
  std::string layout;               ///< mtx: "coordinate"/"array"; npy: "C"/"Fortran"; csv: ""
  std::string field;                ///< mtx: "real"/"integer"/"pattern"; npy: the descr ("<f8"); csv: "real"
  std::string symmetry;             ///< mtx: "general"/"symmetric"/"skew-symmetric"; else "general"
  std::size_t stored = 0;           ///< entries stored in the file (mtx coordinate: the size line's NNZ)
  std::size_t duplicates = 0;       ///< mtx coordinate entries summed into an earlier one
  std::vector<std::string> header;  ///< csv: column names of a header row (empty when none)
  int header_line = 0;              ///< csv: the header row's line (1-based; 0 when none)
};

/// Reads a Matrix Market file, "%%MatrixMarket matrix <format> <field> <symmetry>" (banner
/// tokens case-insensitive), format coordinate | array, field real | integer | pattern
/// (pattern: value 1), symmetry general | symmetric | skew-symmetric.
/// - Comment lines ('%') and blank lines may appear anywhere after the banner; CRLF is fine.
/// - Size line: "M N NNZ" (coordinate) or "M N" (array), positive integers (a matrix with a
///   zero dimension is an error: no node takes one); symmetric and skew-symmetric need M == N.
///   NNZ counts stored entries, duplicates included; with duplicates: error it must be at
///   most M·N (general), n(n+1)/2 (symmetric), n(n−1)/2 (skew-symmetric).
/// - Coordinate entries "i j [value]", 1-based, exactly NNZ of them, one per line. Symmetric
///   files store the lower triangle only (i ≥ j; skew-symmetric: i > j) as the format says;
///   an entry above the diagonal is an error (mirroring it would double-count a file that
///   stores both triangles). Each entry (i, j) is also written at (j, i) (negated for
///   skew-symmetric). Duplicates: see ReadMatrixOptions (default: summed and counted).
/// - Array entries: one value per line, column-major; general: M·N values; symmetric: the
///   lower triangle column by column, n(n+1)/2 values; skew-symmetric: the strict lower
///   triangle, n(n−1)/2 values.
/// - Numbers: C syntax; Fortran 'D' exponents (1.0D+03) are accepted. Integer fields must hold
///   integers.
/// Memory: nothing is allocated before the file shows that it holds the entries it announces
/// (coordinate entries are read first, the dense matrix allocated after; an array's values
/// must fit the bytes left), and every large allocation is checked against the available
/// memory (a ParseError at the size line when it cannot fit).
/// Errors (file:line): missing or malformed banner (object other than "matrix", unknown
/// format/field/symmetry, complex or hermitian: unsupported, array + pattern, pattern +
/// skew-symmetric), missing or malformed size line, an entry with the wrong number of fields,
/// a bad number, an index out of range, an entry on the wrong side of the diagonal, too few or
/// too many entries.
[[nodiscard]] Matrix<double> read_matrix_market(const std::string& path, const ReadMatrixOptions& options = {},
                                                MatrixFileInfo* info = nullptr);
/// Same from text in memory; `path` names it in errors.
[[nodiscard]] Matrix<double> parse_matrix_market(std::string_view text, const std::string& path,
                                                 const ReadMatrixOptions& options = {}, MatrixFileInfo* info = nullptr);

/// Reads a NumPy .npy file: format version 1.0, 2.0 or 3.0 (header length u16 or u32, little
/// endian), a 2-D array (shape (rows, cols), both at least 1), dtype '<f8', '<f4', '<i8' or
/// '<i4' ('|'/'=' byte-order marks are not accepted for these), C or Fortran order.
/// Values are converted to double ('<i8' values beyond ±2⁵³ are an error: not exact).
/// Errors ("byte N: ..."): bad magic, unsupported version, malformed header dictionary,
/// missing keys, other dtypes (big-endian, bool, complex, structured, object: the message
/// says how to convert), shapes of another rank or with a zero dimension, a data block
/// shorter or longer than rows·cols·itemsize, a non-finite value (its byte offset and (row, col)).
/// `cancel` is polled every 4096 values (ReadCancelled).
[[nodiscard]] Matrix<double> read_npy(const std::string& path, MatrixFileInfo* info = nullptr,
                                      const CancelCheck& cancel = {});
/// `vector_as_column`: a 1-D array (shape (n,)) is read as an n×1 matrix (a signal's one channel)
/// instead of being refused.
[[nodiscard]] Matrix<double> parse_npy(std::string_view bytes, const std::string& path, MatrixFileInfo* info = nullptr,
                                       const CancelCheck& cancel = {}, bool vector_as_column = false);

/// The writers refuse a matrix with a zero dimension (std::invalid_argument): the readers would
/// refuse the file.
/// Writes `m` as .npy version 1.0, '<f8', C order (readable by numpy.load).
void write_npy(std::ostream& out, const Matrix<double>& m);

/// Writes `m` as CSV: one row per line, values separated by ',', each the shortest text that
/// reads back to the same double (std::to_chars); no header. Read back exactly by read_csv.
void write_csv(std::ostream& out, const Matrix<double>& m);

/// Writes `m` as a Matrix Market array file, "%%MatrixMarket matrix array real general", the
/// size line "M N", then the values column by column (the format's order), shortest round-trip
/// text. Read back exactly by read_matrix_market.
void write_matrix_market(std::ostream& out, const Matrix<double>& m);

/// The format of a path by its extension (.mtx, .npy, .csv; case-insensitive): write_npy,
/// write_csv or write_matrix_market on `out`. The values must be finite (the readers refuse
/// NaN/Inf): std::invalid_argument naming the first one otherwise, or an unknown extension.
void write_matrix(std::ostream& out, const Matrix<double>& m, const std::string& path);

/// Reads a CSV file of numbers: fields separated by ',', optional spaces/tabs around them,
/// one row per line (LF or CRLF), a leading UTF-8 BOM ignored. Blank lines and lines whose
/// first character is '#' (numpy.savetxt headers) are skipped. The first remaining row is a
/// header when none of its fields is a number (names kept in MatrixFileInfo::header, double
/// quotes removed); a row mixing names and numbers is an error. Every data row must have as
/// many fields as the first one (ragged rows are errors naming both lines), every field must
/// be a number (empty fields too are errors). A file without data rows is an error.
/// `cancel` is polled every 4096 lines (ReadCancelled).
[[nodiscard]] Matrix<double> read_csv(const std::string& path, MatrixFileInfo* info = nullptr,
                                      const CancelCheck& cancel = {});
[[nodiscard]] Matrix<double> parse_csv(std::string_view text, const std::string& path, MatrixFileInfo* info = nullptr,
                                       const CancelCheck& cancel = {});

/// Matrix file formats known by extension (case-insensitive).
enum class MatrixFormat { MatrixMarket, Npy, Csv };
/// .mtx → MatrixMarket, .npy → Npy, .csv → Csv; ParseError naming the extension otherwise.
[[nodiscard]] MatrixFormat matrix_format_from_path(const std::string& path);

/// Reads .mtx, .npy or .csv by extension.
[[nodiscard]] Matrix<double> read_matrix(const std::string& path, const ReadMatrixOptions& options = {},
                                         MatrixFileInfo* info = nullptr);

/// True when m is square and m(i, j) == m(j, i) exactly for every i, j.
[[nodiscard]] bool is_symmetric(const Matrix<double>& m);

}  // namespace gemflow::io
