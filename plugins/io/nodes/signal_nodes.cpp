// io.read_signal, io.write_segments.
#include <algorithm>

#include <gemflow/types.hpp>

#include "gemflow/io/signal_io.hpp"
#include "register.hpp"

namespace gemflow::io {
namespace {

class ReadSignal final : public Node {
 public:
  static NodeInfo info() {
    return {.id = "io.read_signal",
            .version = 1,
            .title = "Read signal",
            .category = "Input/Output",
            .doc =
                "Reads a sampled signal (T samples × D channels), format by extension: TCPD dataset JSON (.json: "
                "\"series\" entries with \"raw\" values, null = missing, several dimensions), CSV (.csv), TSV "
                "(.tsv) or text (.txt: whitespace- or comma-separated, one value per line for one channel), each "
                "with or without a header row of channel names, and NumPy .npy (2-D, T × D; 1-D: one channel). "
                "Missing values (null, "
                "empty, NA, NaN, ?) are marked in the signal's validity mask (models that honour it, such as the "
                "semicrf nodes, marginalise them out), filled by linear interpolation per channel for the others, "
                "and reported with their rows. "
                "A column of the text formats can be the time axis; otherwise the signal is regular (sample_rate).",
            .errors =
                "Every malformed file names file:line (the offending row or value; .npy: the byte offset): ragged "
                "rows, text in a numeric column, no data, a channel without any value, times that do not "
                "increase, n_obs/n_dim contradicting the data.",
            .memory = "The file's bytes and the signal (8 bytes per value) on the host; no device memory.",
            .determinism = "Deterministic.",
            .references = "TCPD (van den Burg & Williams, arXiv:2003.06222, 2020), RFC 4180, numpy.lib.format."};
  }
  Output<Signal> signal{this, "signal", "The signal, T × D; missing values masked and filled (see the log)"};
  PathParam path{this,
                 "path",
                 PathParam::Mode::Read,
                 "Signal file: .json (TCPD), .csv, .tsv, .txt or .npy",
                 "",
                 {".json", ".csv", ".tsv", ".txt", ".npy"}};
  Param<std::string> time_column{this,
                                 "time_column",
                                 "",
                                 {.doc = "Text formats: the column (header name or 1-based number) holding the time "
                                         "of each sample, s; empty: none (a regular signal)"}};
  Param<std::string> columns{this,
                             "columns",
                             "",
                             {.doc = "Text formats: the channels to read, comma-separated header names or 1-based "
                                     "column numbers (other columns, text ones too, are skipped); empty: all"}};
  Param<double> sample_rate{
      this,
      "sample_rate",
      1.0,
      {.min = 1e-300, .max = 1e300, .unit = "Hz", .doc = "Samples per second of a regular signal"}};

  void execute(NodeContext& ctx) override {
    const auto file = path.value();
    ctx.add_input_file(file);
    ReadSignalOptions o;
    o.time_column = *time_column;
    o.columns = *columns;
    o.cancel = [&ctx] { return ctx.cancelled(); };
    SignalFileInfo fi;
    Signal s;
    try {
      s = read_signal(file.string(), o, &fi);
    } catch (const ParseError& e) {
      throw to_input_error(e);
    } catch (const ReadCancelled&) {
      throw Cancelled();
    }
    if (s.times.empty()) s.sample_rate = *sample_rate;
    if (auto why = s.validate()) throw InputError(file.string() + ": " + *why);
    if (fi.missing > 0) {
      std::string rows;
      for (std::size_t i = 0; i < std::min<std::size_t>(fi.missing_rows.size(), 10); ++i) {
        const std::size_t t = fi.missing_rows[i];
        if (i) rows += ", ";
        rows += std::to_string(t);
        if (t < fi.lines.size()) rows += " (line " + std::to_string(fi.lines[t]) + ")";
      }
      if (fi.missing_rows.size() > 10) rows += ", ...";
      ctx.warn(file.filename().string() + ": " + std::to_string(fi.missing) + " missing values in " +
               std::to_string(fi.missing_rows.size()) +
               " samples masked (their placeholders filled by linear interpolation): samples " + rows);
    }
    ctx.info(std::to_string(s.length()) + " samples × " + std::to_string(s.dims()) + " channels from " +
             file.filename().string() + " (" + fi.format + (fi.header ? ", header row" : "") + ")");
    ctx.record("format", fi.format);
    ctx.record("missing_values", static_cast<std::int64_t>(fi.missing));
    signal.set(std::move(s));
  }
};

class WriteSegments final : public Node {
 public:
  static NodeInfo info() {
    return {.id = "io.write_segments",
            .version = 1,
            .title = "Write segments",
            .category = "Input/Output",
            .doc =
                "Writes a Segmentation, format by extension, atomically. .csv: a header row start,end,label,"
                "label_name,score (and start_time,end_time in seconds when the sample rate is known), one row per "
                "segment, [start, end) in samples. .json: {\"length\", \"sample_rate\", \"labels\", \"segments\": "
                "[{start, end, label, label_name, score}]}. Numbers in shortest round-trip text.",
            .errors = "An unknown extension; an invalid segmentation (the first broken segment).",
            .memory = "The file's text; no device memory.",
            .determinism = "Deterministic.",
            .references = "RFC 4180 (CSV), RFC 8259 (JSON)."};
  }
  Input<Segmentation> segmentation{this, "segmentation", "Segments to write"};
  PathParam path{
      this, "path",           PathParam::Mode::Write, "Output file: .csv or .json (relative: to the output folder)",
      "",   {".csv", ".json"}};

  void execute(NodeContext& ctx) override {
    const auto file = path.value();
    const Segmentation& s = *segmentation;
    if (auto why = s.validate()) throw InputError("input 'segmentation': " + *why);
    ctx.write_file(file, [&](std::ostream& out) {
      try {
        write_segments(out, s, file.string());
      } catch (const std::invalid_argument& e) {
        throw InputError(std::string("parameter 'path': ") + e.what());
      }
    });
    ctx.info("wrote " + file.string() + " (" + std::to_string(s.segments.size()) + " segments)");
  }
};

}  // namespace

void register_signal_nodes(PluginRegistrar& r) {
  r.add_node<ReadSignal>();
  r.add_node<WriteSegments>();
}

}  // namespace gemflow::io
