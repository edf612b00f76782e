// testnodes: small nodes for engine, loader and CLI tests. Their ids and ports are stable;
// other tests depend on them.
//
//   test.constant   param value (float)            → value: Matrix<f64> 1×1
//   test.add        a, b: Matrix<f64>              → sum: Matrix<f64> (element-wise a + b)
//   test.fail       in (optional), params message, how → out; always throws `message` (how: throw), or
//                   kills the process with SIGSEGV (segfault) or abort() (abort), as a crashing library would
//   test.sleep      in (optional), params seconds, cooperative → out (= in, else 1×1 zero);
//                   reports progress and (cooperative) checks cancellation every 10 ms
//   test.write_text value (optional), params path (output path), text, fail_midway
//                   writes "text\n" then the value's elements one per line, atomically
//   test.read_text  param path (input path)        → lines: Table (column "line"),
//                                                     size: Matrix<f64> 1×1 (bytes)
//   test.read_side  param file (a string, not a path parameter) → size: Matrix<f64> 1×1 (bytes);
//                   records the file with add_input_file, as a node reading a file found at run
//                   time does (a table named by an environment variable)
//   test.params     one parameter of every kind    → table: Table (columns name, value; the
//                                                     values as the node received them)
//   test.device     param device                   → table: Table (column "device": used)
//   test.rules      params pivoted, rank, limit; the rules "rank needs pivoted", "rank ≤ limit" → value: 1×1 (the
//                   rank); every structured doc field (errors, memory, determinism, references)
//   test.migrated   version 3, params factor, mode (quick|exact), tolerance → value: 1×1 (factor);
//                   migrations: 1→2 scale_factor renamed factor, output out renamed value;
//                   2→3 mode 'fast' renamed 'quick', tolerance from mm to m
#include <charconv>
#include <chrono>
#include <csignal>
#include <cstdint>
#include <cstdlib>
#include <exception>
#include <fstream>
#include <limits>
#include <sstream>
#include <string>
#include <thread>

#include <gemflow/plugin.hpp>
#include <gemflow/types.hpp>

namespace gemflow::testnodes {
namespace {

using Mat = MatrixF64;

std::string number_text(double x) {
  char buf[64];
  auto r = std::to_chars(buf, buf + sizeof buf, x);
  return std::string(buf, r.ptr);
}

class Constant final : public Node {
 public:
  static NodeInfo info() {
    return {.id = "test.constant",
            .version = 1,
            .title = "Constant",
            .category = "Test",
            .doc = "Outputs a 1×1 matrix holding `value`."};
  }
  Output<Mat> out{this, "value", "1×1 matrix holding the parameter"};
  Param<double> value{this, "value", 0.0, {.doc = "The number to output"}};
  void execute(NodeContext&) override { out.set(Mat(1, 1, *value)); }
};

class Add final : public Node {
 public:
  static NodeInfo info() {
    return {.id = "test.add",
            .version = 1,
            .title = "Add",
            .category = "Test",
            .doc = "Element-wise sum of two matrices of the same shape."};
  }
  Input<Mat> a{this, "a", "First term"};
  Input<Mat> b{this, "b", "Second term, same shape as a"};
  Output<Mat> sum{this, "sum", "a + b"};
  void execute(NodeContext&) override {
    const Mat& x = *a;
    const Mat& y = *b;
    if (x.rows() != y.rows() || x.cols() != y.cols())
      throw Error("shapes differ: " + std::to_string(x.rows()) + "×" + std::to_string(x.cols()) + " and " +
                  std::to_string(y.rows()) + "×" + std::to_string(y.cols()));
    Mat r(x.rows(), x.cols());
    for (std::size_t i = 0; i < r.size(); ++i) r.data()[i] = x.data()[i] + y.data()[i];
    sum.set(std::move(r));
  }
};

class Fail final : public Node {
 public:
  static NodeInfo info() {
    return {.id = "test.fail",
            .version = 1,
            .title = "Fail",
            .category = "Test",
            .doc = "Always throws gemflow::Error(message), or crashes the process (`how`)."};
  }
  enum class How { Throw, Segfault, Abort };
  Input<Mat> in{this, "in", "Ignored", PortUse::Optional};
  Output<Mat> out{this, "out", "Never set"};
  Param<std::string> message{this, "message", "intentional failure", {.doc = "The error text"}};
  Choice<How> how{this,
                  "how",
                  How::Throw,
                  {{How::Throw, "throw"}, {How::Segfault, "segfault"}, {How::Abort, "abort"}},
                  {.doc = "throw: the error `message`; segfault, abort: the process dies (SIGSEGV, SIGABRT)"}};
  void execute(NodeContext&) override {
    if (*how == How::Segfault) std::raise(SIGSEGV);
    if (*how == How::Abort) std::abort();
    throw Error(*message);
  }
};

class Sleep final : public Node {
 public:
  static NodeInfo info() {
    return {.id = "test.sleep",
            .version = 1,
            .title = "Sleep",
            .category = "Test",
            .doc =
                "Waits `seconds`, reporting progress and checking cancellation every 10 ms, i.e. the way "
                "long nodes should. Used by the cancellation tests."};
  }
  Input<Mat> in{this, "in", "Passed through", PortUse::Optional};
  Output<Mat> out{this, "out", "The input, else a 1×1 zero"};
  Param<double> seconds{this, "seconds", 1.0, {.min = 0.0, .max = 3600.0, .unit = "s", .doc = "How long"}};
  Param<bool> cooperative{
      this, "cooperative", true, {.doc = "false: never checks cancellation (a node stuck in a library)"}};
  Param<bool> on_worker{this,
                        "on_worker",
                        false,
                        {.doc = "Wait (and check cancellation) on a thread of its own while the calling "
                                "thread only joins it, as parallel nodes do"}};
  void execute(NodeContext& ctx) override {
    if (*on_worker) {
      std::exception_ptr failure;
      std::thread worker([&] {
        try {
          wait(ctx);
        } catch (...) {
          failure = std::current_exception();
        }
      });
      worker.join();
      if (failure) std::rethrow_exception(failure);
    } else {
      wait(ctx);
    }
    ctx.progress(1.0);
    ctx.record("slept_seconds", *seconds);
    if (in.connected()) out.set(in.get());
    else out.set(Mat(1, 1, 0.0));
  }

 private:
  void wait(NodeContext& ctx) const {
    using clock = std::chrono::steady_clock;
    const auto start = clock::now();
    const auto total = std::chrono::duration<double>(*seconds);
    for (;;) {
      if (*cooperative) ctx.throw_if_cancelled();
      const auto done = std::chrono::duration<double>(clock::now() - start);
      if (done >= total) break;
      ctx.progress(total.count() > 0 ? done / total : 1.0, "sleeping");
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
  }
};

class ProgressSpam final : public Node {
 public:
  static NodeInfo info() {
    return {.id = "test.progress_spam",
            .version = 1,
            .title = "Progress spam",
            .category = "Test",
            .doc =
                "Calls ctx.progress `calls` times as fast as it can, a new message each time, after one "
                "call with NaN, then logs `log_lines` info lines. Used by the progress throttle and the "
                "provenance log tests."};
  }
  Output<Mat> out{this, "out", "A 1×1 zero"};
  Param<std::int64_t> calls{this, "calls", 1000, {.min = 0, .max = 100000000, .doc = "How many calls"}};
  Param<std::int64_t> log_lines{this, "log_lines", 0, {.min = 0, .max = 10000000, .doc = "Info lines to log"}};
  Param<bool> set_output{this, "set_output", true, {.doc = "false: leaves `out` unset"}};
  void execute(NodeContext& ctx) override {
    ctx.progress(std::numeric_limits<double>::quiet_NaN(), "nan");
    for (std::int64_t i = 0; i < *calls; ++i)
      ctx.progress(static_cast<double>(i) / static_cast<double>(*calls), "step " + std::to_string(i));
    for (std::int64_t i = 0; i < *log_lines; ++i) ctx.info("line " + std::to_string(i));
    if (*set_output) out.set(Mat(1, 1, 0.0));
  }
};

class WriteText final : public Node {
 public:
  static NodeInfo info() {
    return {.id = "test.write_text",
            .version = 1,
            .title = "Write text",
            .category = "Test",
            .doc =
                "Writes `text` and a newline, then the input's elements one per line, atomically "
                "through NodeContext::write_file."};
  }
  Input<Mat> value{this, "value", "Numbers to write", PortUse::Optional};
  PathParam path{this, "path", PathParam::Mode::Write, "File to write (relative: to the output folder)"};
  Param<std::string> text{this, "text", "", {.doc = "First line"}};
  Param<bool> fail_midway{
      this, "fail_midway", false, {.doc = "Throw after writing part of the file (tests atomic writes)"}};
  void execute(NodeContext& ctx) override {
    ctx.write_file(*path, [&](const std::filesystem::path& tmp) {
      std::ofstream f(tmp, std::ios::binary);
      f << *text << '\n';
      if (*fail_midway) {
        f.flush();
        throw Error("failed midway through writing " + path.value().string());
      }
      if (value.connected())
        for (double x : value.get()->span()) f << number_text(x) << '\n';
      if (!f) throw Error("cannot write " + tmp.string());
    });
  }
};

class ReadText final : public Node {
 public:
  static NodeInfo info() {
    return {.id = "test.read_text",
            .version = 1,
            .title = "Read text",
            .category = "Test",
            .doc = "Reads a text file: its lines as a table and its size in bytes."};
  }
  PathParam path{this, "path", PathParam::Mode::Read, "File to read (relative: to the workflow file)"};
  Output<Table> lines{this, "lines", "Column 'line': one row per line"};
  Output<Mat> size{this, "size", "1×1: the file size in bytes"};
  void execute(NodeContext& ctx) override {
    const auto file = *path;
    ctx.add_input_file(file);
    std::ifstream f(file, std::ios::binary);
    if (!f) throw InputError("cannot open " + file.string());
    std::stringstream ss;
    ss << f.rdbuf();
    const std::string content = ss.str();
    Table t;
    t.columns = {"line"};
    std::istringstream is(content);
    for (std::string line; std::getline(is, line);) t.rows.push_back({Table::Cell{line}});
    lines.set(std::move(t));
    size.set(Mat(1, 1, static_cast<double>(content.size())));
  }
};

class Params final : public Node {
 public:
  enum class Mode { Fast, Exact };
  static NodeInfo info() {
    return {.id = "test.params",
            .version = 2,
            .title = "Every parameter kind",
            .category = "Test",
            .doc = "Outputs the values of its parameters as received (paths resolved)."};
  }
  Output<Table> table{this, "table", "Columns name, value"};
  Param<bool> flag{this, "flag", false, {.doc = "A bool"}};
  Param<int> count{this, "count", 3, {.min = 1, .max = 10, .doc = "An int in [1, 10]"}};
  Param<double> scale{this, "scale", 0.5, {.min = 0.0, .max = 2.0, .unit = "Å", .doc = "A float in [0, 2] Å"}};
  Param<std::string> label{this, "label", "none", {.doc = "Free text"}};
  Choice<Mode> mode{this, "mode", Mode::Fast, {{Mode::Fast, "fast"}, {Mode::Exact, "exact"}}, {.doc = "A choice"}};
  PathParam input{this, "input", PathParam::Mode::Read, "An input path (optional here)", "none.txt"};
  PathParam output{this, "output", PathParam::Mode::Write, "An output path", "params.txt"};
  DeviceParam device{this};
  void execute(NodeContext&) override {
    Table t;
    t.columns = {"name", "value"};
    auto row = [&](const char* n, Table::Cell v) { t.rows.push_back({Table::Cell{std::string(n)}, std::move(v)}); };
    row("flag", std::int64_t{*flag ? 1 : 0});
    row("count", std::int64_t{*count});
    row("scale", *scale);
    row("label", *label);
    row("mode", std::string(*mode == Mode::Fast ? "fast" : "exact"));
    row("input", input.value().string());
    row("output", output.value().string());
    row("device", device.requested());
    table.set(std::move(t));
  }
};

class DeviceNode final : public Node {
 public:
  static NodeInfo info() {
    return {.id = "test.device",
            .version = 1,
            .title = "Device",
            .category = "Test",
            .doc = "Resolves its device parameter (with the run's override) and outputs the choice."};
  }
  Output<Table> table{this, "table", "Column 'device': the device used (cpu, cuda:N)"};
  DeviceParam device{this};
  void execute(NodeContext& ctx) override {
    const Device d = device.resolve(ctx);
    Table t;
    t.columns = {"device"};
    t.rows.push_back({Table::Cell{d.str()}});
    table.set(std::move(t));
  }
};

// A parameter rule (NodeInfo::rules): a rank limit needs pivoting.
class Ruled final : public Node {
 public:
  static NodeInfo info() {
    return {.id = "test.rules",
            .version = 1,
            .title = "Rules",
            .category = "Test",
            .doc = "Outputs its rank; a rank other than 0 needs pivoted: true (a rule).",
            .errors = "None of its own: the rules are checked before a run.",
            .memory = "One 1×1 matrix.",
            .determinism = "Deterministic.",
            .references = "The Gemflow test suite.",
            .rules = {{.param = "rank", .other = "pivoted", .other_value = true, .why = "only pivoted stops early"},
                      {.param = "rank", .other = "limit", .why = "a limit", .compare = ParamCompare::LessEqual}}};
  }
  Output<Mat> value{this, "value", "1×1: the rank"};
  Param<bool> pivoted{this, "pivoted", false, {.doc = "Pivoting"}};
  Param<int> rank{this, "rank", 0, {.min = 0, .doc = "Rank limit (pivoted only)"}};
  Param<int> limit{this, "limit", 100, {.min = 0, .doc = "Largest rank"}};
  void execute(NodeContext&) override { value.set(Mat(1, 1, static_cast<double>(*rank))); }
};

// A node type at its third version, with the migration steps from the first two.
class Migrated final : public Node {
 public:
  static NodeInfo info() {
    return {
        .id = "test.migrated",
        .version = 3,
        .title = "Migrated",
        .category = "Test",
        .doc = "Outputs `factor`; its parameters and output were renamed over three versions.",
        .migrations = {migrate::rename_param(1, "scale_factor", "factor"), migrate::rename_output(1, "out", "value"),
                       migrate::rename_choice(2, "mode", "fast", "quick"),
                       migrate::scale_param(2, "tolerance", 1e-3, "mm → m")}};
  }
  Output<Mat> value{this, "value", "1×1 matrix holding factor"};
  Param<double> factor{this, "factor", 1.0, {.doc = "The number"}};
  enum class Mode { Quick, Exact };
  Choice<Mode> mode{this, "mode", Mode::Quick, {{Mode::Quick, "quick"}, {Mode::Exact, "exact"}}, {.doc = "A choice"}};
  Param<double> tolerance{this, "tolerance", 1e-6, {.min = 0.0, .unit = "m", .doc = "A length"}};
  void execute(NodeContext& ctx) override {
    ctx.record("tolerance", *tolerance);
    ctx.record("mode", std::string(*mode == Mode::Quick ? "quick" : "exact"));
    value.set(Mat(1, 1, *factor));
  }
};

class ReadSide final : public Node {
 public:
  static NodeInfo info() {
    return {.id = "test.read_side",
            .version = 1,
            .title = "Read side file",
            .category = "Test",
            .doc = "Reads a file named by a string parameter, found at run time: its size in bytes."};
  }
  Param<std::string> file{this, "file", "", {.doc = "Absolute path of the file (a string: not in the key by content)"}};
  Output<Mat> size{this, "size", "1×1: the file size in bytes"};
  void execute(NodeContext& ctx) override {
    const std::filesystem::path f = *file;
    ctx.add_input_file(f);
    std::error_code ec;
    const auto bytes = std::filesystem::file_size(f, ec);
    if (ec) throw InputError("cannot read " + f.string() + ": " + ec.message());
    size.set(Mat(1, 1, static_cast<double>(bytes)));
  }
};

void register_nodes(PluginRegistrar& r) {
  r.add_node<Constant>();
  r.add_node<Add>();
  r.add_node<Fail>();
  r.add_node<Sleep>();
  r.add_node<ProgressSpam>();
  r.add_node<WriteText>();
  r.add_node<ReadText>();
  r.add_node<Params>();
  r.add_node<DeviceNode>();
  r.add_node<Ruled>();
  r.add_node<Migrated>();
  r.add_node<ReadSide>();
}

}  // namespace
}  // namespace gemflow::testnodes

GEMFLOW_PLUGIN("test", "1.0.0", gemflow::testnodes::register_nodes)  // its node ids are test.*
