// io.read_matrix, io.write_matrix.
#include <algorithm>
#include <cstdlib>
#include <fstream>

#include <gemflow/types.hpp>

#include "gemflow/io/matrix_io.hpp"
#include "register.hpp"

namespace gemflow::io {
namespace {

class ReadMatrix final : public Node {
 public:
  static NodeInfo info() {
    return {.id = "io.read_matrix",
            .version = 1,
            .title = "Read matrix",
            .category = "Input/Output",
            .doc =
                "Reads a dense matrix, format by extension. Matrix Market .mtx: coordinate or array; real, "
                "integer or pattern (pattern entries are 1); general, symmetric or skew-symmetric (the stored "
                "lower triangle is expanded to the full matrix); complex/hermitian are refused. NumPy .npy: "
                "format 1.0/2.0/3.0, 2-D, dtype '<f8', '<f4', '<i8' or '<i4', C or Fortran order; other dtypes "
                "and ranks are refused with the numpy call that converts them. CSV .csv: comma-separated "
                "numbers, a first row of names is taken as a header, '#' lines skipped, ragged rows refused. "
                "Output: Matrix<f64>, row-major, the file's shape.",
            .errors =
                "Every malformed file names file:line (.npy: the byte offset). Values must be finite; a matrix "
                "with a zero dimension is refused.",
            .memory = "The matrix on the host (8 bytes per entry); no device memory.",
            .determinism = "Deterministic.",
            .references = "NIST Matrix Market formats (Boisvert et al. 1996), numpy.lib.format, RFC 4180."};
  }
  enum class Dup { Sum, Error };
  Output<Matrix<double>> matrix{this, "matrix", "The matrix, dense row-major, full (symmetric storage expanded)"};
  PathParam path{this,
                 "path",
                 PathParam::Mode::Read,
                 "Matrix file: .mtx (Matrix Market), .npy (NumPy) or .csv",
                 "",
                 {".mtx", ".npy", ".csv"}};
  Choice<Dup> duplicates{this,
                         "duplicates",
                         Dup::Sum,
                         {{Dup::Sum, "sum"}, {Dup::Error, "error"}},
                         {.doc = "Matrix Market coordinate entries given twice: sum (add them, as finite-element "
                                 "assembly and scipy.io.mmread do; the count is logged) or error (naming both "
                                 "lines)"}};

  void execute(NodeContext& ctx) override {
    const auto file = path.value();
    ctx.add_input_file(file);
    ctx.progress(0.0, "reading " + file.filename().string());
    MatrixFileInfo fi;
    ReadMatrixOptions o;
    o.duplicates = *duplicates == Dup::Sum ? DuplicateEntries::sum : DuplicateEntries::error;
    o.cancel = [&ctx] { return ctx.cancelled(); };
    try {
      Matrix<double> m = read_matrix(file.string(), o, &fi);
      std::string what = std::to_string(m.rows()) + "×" + std::to_string(m.cols()) + " from " +
                         file.filename().string() + " (" + fi.format;
      if (!fi.layout.empty()) what += " " + fi.layout;
      what += " " + fi.field + " " + fi.symmetry + ", " + std::to_string(fi.stored) + " stored entries";
      if (!fi.header.empty()) what += ", header row of " + std::to_string(fi.header.size()) + " names";
      else if (fi.format == "csv") what += ", no header row (the first row is numbers)";
      ctx.info(what + ")");
      // one column: a header name that looks like a mistyped number is more likely the first data
      // row (QA: "1.O" took the first row out of the matrix with only the info line above): a
      // number with a decimal point or an exponent and then text, or digits and one letter that
      // looks like a digit (1O, 2l). With more columns a mistyped value sits beside numbers, which
      // is an error; names such as 1H, 13C, 2theta are headers.
      if (fi.header.size() == 1) {
        const std::string& f = fi.header[0];
        char* end = nullptr;
        (void)std::strtod(f.c_str(), &end);
        const std::string number(f.c_str(), static_cast<const char*>(end)), rest(end);
        const bool digits = std::any_of(number.begin(), number.end(), [](char c) { return c >= '0' && c <= '9'; });
        const bool point = number.find_first_of(".eE") != std::string::npos;
        const bool lookalike = rest.size() == 1 && std::string("OoIl").find(rest[0]) != std::string::npos;
        if (digits && (point || lookalike))
          ctx.warn(file.filename().string() + ":" + std::to_string(fi.header_line) +
                   ": the first row was read as "
                   "a header row (it is not a number), but '" +
                   fi.header[0] +
                   "' starts like one: if that row is "
                   "data, fix it; it is not in the matrix");
      }
      if (fi.duplicates > 0)
        ctx.warn(file.filename().string() + ": " + std::to_string(fi.duplicates) +
                 " duplicate coordinate entries were summed (duplicates: sum)");
      ctx.record("format", fi.format);
      ctx.record("stored_entries", static_cast<std::int64_t>(fi.stored));
      ctx.record("duplicates_summed", static_cast<std::int64_t>(fi.duplicates));
      ctx.record("symmetric", is_symmetric(m));
      matrix.set(std::move(m));
    } catch (const ParseError& e) {
      throw to_input_error(e);
    } catch (const ReadCancelled&) {
      throw Cancelled();
    }
    ctx.progress(1.0);
  }
};

class WriteMatrix final : public Node {
 public:
  static NodeInfo info() {
    return {.id = "io.write_matrix",
            .version = 1,
            .title = "Write matrix",
            .category = "Input/Output",
            .doc =
                "Writes a Matrix<f64> (a factor, a solution) to a file, format by extension, atomically. "
                ".npy: version 1.0, '<f8', C order (numpy.load). .csv: one row per line, comma-separated, no "
                "header. .mtx: Matrix Market array real general, values column by column. Numbers are the "
                "shortest text that reads back to the same double, so io.read_matrix (or numpy, scipy.io.mmread) "
                "reads the same values.",
            .errors =
                "NaN or infinity in the matrix, or a zero dimension (no reader would take the file); an unknown "
                "extension.",
            .memory = "The file's text; no device memory.",
            .determinism = "Deterministic.",
            .references = "numpy.lib.format, RFC 4180, NIST Matrix Market formats."};
  }
  Input<Matrix<double>> matrix{this, "matrix", "The matrix to write"};
  PathParam path{this,
                 "path",
                 PathParam::Mode::Write,
                 "Output file: .npy, .csv or .mtx (relative: to the run's output folder)",
                 "",
                 {".npy", ".csv", ".mtx"}};

  void execute(NodeContext& ctx) override {
    const auto file = path.value();
    const Matrix<double>& m = *matrix;
    ctx.write_file(file, [&](std::ostream& out) {
      try {
        write_matrix(out, m, file.string());
      } catch (const ParseError& e) {  // the extension
        throw InputError("parameter 'path': " + printable(e.message()));
      } catch (const std::invalid_argument& e) {
        throw InputError(std::string("input 'matrix': ") + e.what());
      }
    });
    ctx.info("wrote " + file.string() + " (" + std::to_string(m.rows()) + "×" + std::to_string(m.cols()) + ")");
  }
};

}  // namespace

void register_matrix_nodes(PluginRegistrar& r) {
  r.add_node<ReadMatrix>();
  r.add_node<WriteMatrix>();
}

}  // namespace gemflow::io
