// io.read_matrix.
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
            .doc = "Reads a dense matrix, format by extension. Matrix Market .mtx: coordinate or array; real, "
                   "integer or pattern (pattern entries are 1); general, symmetric or skew-symmetric (the stored "
                   "lower triangle is expanded to the full matrix); complex/hermitian are refused. NumPy .npy: "
                   "format 1.0/2.0/3.0, 2-D, dtype '<f8', '<f4', '<i8' or '<i4', C or Fortran order; other dtypes "
                   "and ranks are refused with the numpy call that converts them. CSV .csv: comma-separated "
                   "numbers, a first row of names is taken as a header, '#' lines skipped, ragged rows refused. "
                   "Values must be finite. Every malformed file is an error naming file:line (.npy: the byte "
                   "offset). Output: Matrix<f64>, row-major, the file's shape. Device memory: none (CPU). "
                   "Deterministic. Sources: NIST Matrix Market formats (Boisvert et al. 1996), numpy.lib.format, "
                   "RFC 4180."};
  }
  enum class Dup { Sum, Error };
  Output<Matrix<double>> matrix{this, "matrix", "The matrix, dense row-major, full (symmetric storage expanded)"};
  PathParam path{this, "path", PathParam::Mode::Read, "Matrix file: .mtx (Matrix Market), .npy (NumPy) or .csv", "",
                 {".mtx", ".npy", ".csv"}};
  Choice<Dup> duplicates{this, "duplicates", Dup::Sum, {{Dup::Sum, "sum"}, {Dup::Error, "error"}},
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
    try {
      Matrix<double> m = read_matrix(file.string(), o, &fi);
      std::string what = std::to_string(m.rows()) + "×" + std::to_string(m.cols()) + " from " +
                         file.filename().string() + " (" + fi.format;
      if (!fi.layout.empty()) what += " " + fi.layout;
      what += " " + fi.field + " " + fi.symmetry + ", " + std::to_string(fi.stored) + " stored entries";
      if (!fi.header.empty()) what += ", header row of " + std::to_string(fi.header.size()) + " names";
      ctx.info(what + ")");
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
    }
    ctx.progress(1.0);
  }
};

}  // namespace

void register_matrix_nodes(PluginRegistrar& r) { r.add_node<ReadMatrix>(); }

}  // namespace gemflow::io
