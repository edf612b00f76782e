// semicrf.evaluate, semicrf.plot.
#include <cmath>
#include <fstream>
#include <sstream>

#include <nlohmann/json.hpp>

#include "gemflow/text_location.hpp"

#include "gemflow/semicrf/metrics.hpp"
#include "gemflow/semicrf/plot.hpp"
#include "model_type.hpp"
#include "register.hpp"

namespace gemflow::semicrf {
namespace {

struct Truth {
  std::vector<ChangePoints> annotators;
  std::string source;  ///< "tcpd" or "tssb"
};

/// The annotations of `series` in a TCPD annotations.json ({series: {annotator: [cps]}}) or a
/// TSSB desc.txt (lines "name,window_size,cp1,cp2,...").
Truth read_truth(const std::filesystem::path& file, const std::string& series) {
  std::ifstream in(file, std::ios::binary);
  if (!in) throw InputError(file.string() + ": cannot open the file");
  std::ostringstream ss;
  ss << in.rdbuf();
  const std::string text = ss.str();
  Truth t;
  if (file.extension() == ".json") {
    t.source = "tcpd";
    nlohmann::json j;
    try {
      j = nlohmann::json::parse(text);
    } catch (const nlohmann::json::parse_error& e) {
      throw InputError(SourceLocation{file.string(), line_of_byte(text, e.byte > 0 ? e.byte - 1 : 0), 0},
                       std::string("JSON syntax: ") + e.what());
    } catch (const nlohmann::json::exception& e) {  // out_of_range 406: a number beyond double's range
      throw InputError(SourceLocation{file.string(), line_of_quoted_token(text, e.what()), 0},
                       std::string("JSON value: ") + e.what());
    }
    if (!j.is_object() || !j.contains(series) || !j[series].is_object())
      throw InputError(file.string() + ": no annotations of series '" + series +
                       "' (an object of annotator → change points)");
    for (const auto& [who, cps] : j[series].items()) {
      if (!cps.is_array())
        throw InputError(file.string() + ": annotator " + who + " of '" + series + "' is not a list");
      ChangePoints v;
      for (const auto& c : cps) {
        if (!c.is_number_integer())
          throw InputError(file.string() + ": annotator " + who + " of '" + series + "': " + c.dump() +
                           " is not an index");
        v.push_back(c.get<long long>());
      }
      t.annotators.push_back(std::move(v));
    }
    if (t.annotators.empty()) throw InputError(file.string() + ": series '" + series + "' has no annotator");
    return t;
  }
  t.source = "tssb";
  std::istringstream lines(text);
  std::string line;
  int n = 0;
  while (std::getline(lines, line)) {
    ++n;
    if (!line.empty() && line.back() == '\r') line.pop_back();
    std::istringstream fields(line);
    std::string name;
    if (!std::getline(fields, name, ',') || name != series) continue;
    std::string f;
    ChangePoints cps;
    std::getline(fields, f, ',');  // window size
    while (std::getline(fields, f, ',')) {
      try {
        std::size_t used = 0;
        cps.push_back(std::stoll(f, &used));
        if (used != f.size()) throw std::invalid_argument(f);
      } catch (const std::exception&) {
        throw InputError(SourceLocation{file.string(), n, 0}, "change point '" + f + "' is not an integer");
      }
    }
    t.annotators.push_back(std::move(cps));
    return t;
  }
  throw InputError(file.string() + ": no line for series '" + series + "' (expected 'name,window_size,cp1,...')");
}

ChangePoints change_points_of(const Segmentation& s, bool merge) {
  ChangePoints cps;
  for (std::size_t i = 1; i < s.segments.size(); ++i) {
    if (merge && s.segments[i].label == s.segments[i - 1].label && s.segments[i].start == s.segments[i - 1].end)
      continue;
    cps.push_back(static_cast<long long>(s.segments[i].start));
  }
  return cps;
}

class Evaluate final : public Node {
 public:
  static NodeInfo info() {
    return {.id = "semicrf.evaluate",
            .version = 1,
            .title = "Evaluate change points",
            .category = "Segmentation",
            .doc =
                "Scores the change points of a segmentation against annotations, as the Turing Change Point "
                "Detection benchmark does (TCPD annotations.json: F1 with a margin, every annotator's points "
                "combined as its metrics.py does — precision against the union, recall averaged over annotators, "
                "0 added to every set — and the segmentation covering averaged over annotators) or with TSSB's "
                "covering (desc.txt: one annotator). One row per call; with the input 'previous' the row is "
                "appended to that table, so that a chain of evaluations makes one benchmark table.",
            .errors =
                "A file without the series; malformed JSON (file:line); an annotated change point outside the "
                "segmentation's samples (the annotations of another signal); an invalid segmentation.",
            .memory = "The annotation file's text and one table row.",
            .determinism = "Deterministic.",
            .references =
                "van den Burg & Williams, arXiv:2003.06222 (2020), TCPDBench analysis/scripts/metrics.py; "
                "Arbeláez et al., TPAMI 33 (2011), eq. 8; Ermshaus et al., ClaSP (2023), TSSB."};
  }
  Input<Segmentation> segmentation{this, "segmentation", "Predicted segments"};
  Input<Table> previous{this, "previous", "Rows to append to (optional)", PortUse::Optional};
  Output<Table> table{this, "table", "series, source, n_obs, change_points, f1, precision, recall, cover, annotators"};
  PathParam annotations{this, "annotations",    PathParam::Mode::Read, "TCPD annotations.json or TSSB desc.txt",
                        "",   {".json", ".txt"}};
  Param<std::string> series{this, "series", "", {.doc = "The series' name in the annotation file"}};
  Param<int> margin{this, "margin", 5, {.min = 0, .unit = "samples", .doc = "F1: largest distance of a true positive"}};
  Param<bool> merge_same_label{
      this, "merge_same_label", true, {.doc = "Boundaries between segments of one label are not change points"}};

  void execute(NodeContext& ctx) override {
    const Segmentation& s = *segmentation;
    if (auto why = s.validate()) throw InputError("input 'segmentation': " + *why);
    if ((*series).empty()) throw InputError("parameter 'series' is empty: name the series in the annotation file");
    const auto file = annotations.value();
    ctx.add_input_file(file);
    const Truth truth = read_truth(file, *series);
    // Annotations of another series, or of a longer signal, would be scored without complaint.
    for (const auto& cps : truth.annotators)
      for (long long c : cps)
        if (c < 0 || c >= static_cast<long long>(s.length))
          throw InputError(file.string() + ": series '" + *series + "': the annotated change point " +
                           std::to_string(c) + " is outside the segmentation's " + std::to_string(s.length) +
                           " samples: are these the annotations of the signal segmented?");
    const ChangePoints cps = change_points_of(s, *merge_same_label);
    const F1Score f = f_measure(truth.annotators, cps, *margin);
    const double cover = covering(truth.annotators, cps, s.length);
    Table t;
    if (previous.connected()) t = *previous;
    const std::vector<std::string> cols = {"series",    "source", "n_obs", "change_points", "f1",
                                           "precision", "recall", "cover", "annotators"};
    if (t.columns.empty()) t.columns = cols;
    else if (t.columns != cols)
      throw InputError("input 'previous' has other columns than an evaluation table (its first: '" + t.columns[0] +
                       "')");
    std::string cp_text;
    for (std::size_t i = 0; i < cps.size(); ++i) {  // piece by piece: GCC 12's -Wrestrict false positive
      if (i) cp_text += ' ';
      cp_text += std::to_string(cps[i]);
    }
    t.rows.push_back({*series, truth.source, static_cast<std::int64_t>(s.length), cp_text, f.f1, f.precision, f.recall,
                      cover, static_cast<std::int64_t>(truth.annotators.size())});
    ctx.record("f1", f.f1);
    ctx.record("cover", cover);
    ctx.info(*series + ": F1 " + std::to_string(f.f1) + ", cover " + std::to_string(cover) + " (" +
             std::to_string(cps.size()) + " change points)");
    table.set(std::move(t));
  }
};

class Plot final : public Node {
 public:
  static NodeInfo info() {
    return {.id = "semicrf.plot",
            .version = 1,
            .title = "Plot segments",
            .category = "Segmentation",
            .doc =
                "Draws the signal over its segments (each tinted with its label's colour, boundaries as lines) and, "
                "when given, the boundary posterior beneath, into an RGBA8 image (write it with io.write_image). "
                "Every pixel column shows the range of its samples, so long signals keep their spikes.",
            .errors =
                "A segmentation of another length than the signal; boundaries of another length; a size "
                "outside 32..16384.",
            .memory = "width·height·4 bytes.",
            .determinism = "Deterministic.",
            .references = "Colours: Tableau 10."};
  }
  Input<Signal> signal{this, "signal", "The signal"};
  Input<Segmentation> segmentation{this, "segmentation", "Its segments"};
  Input<Scores> boundaries{this, "boundaries", "log P(boundary), T × 1 (semicrf.marginals)", PortUse::Optional};
  Output<Image> image{this, "image", "The plot, RGBA8"};
  Param<int> width{this, "width", 1200, {.min = 32, .max = 16384, .unit = "px", .doc = "Image width"}};
  Param<int> height{this, "height", 400, {.min = 32, .max = 16384, .unit = "px", .doc = "Image height"}};

  void execute(NodeContext& ctx) override {
    const Signal& s = *signal;
    const Segmentation& g = *segmentation;
    if (auto why = g.validate()) throw InputError("input 'segmentation': " + *why);
    if (g.length != s.length())
      throw InputError("input 'segmentation' covers " + std::to_string(g.length) + " samples, the signal has " +
                       std::to_string(s.length()));
    PlotInput in;
    in.signal = s.samples.data();
    in.length = s.length();
    in.dims = s.dims();
    for (const auto& seg : g.segments) in.segments.push_back({seg.start, seg.end, seg.label, seg.score});
    std::vector<double> prob;
    if (boundaries.connected()) {
      const Scores& b = *boundaries;
      if (b.length() != s.length() || b.classes() != 1)
        throw InputError("input 'boundaries' is " + std::to_string(b.length()) + " × " + std::to_string(b.classes()) +
                         ", expected " + std::to_string(s.length()) + " × 1");
      for (std::size_t t = 0; t < b.length(); ++t) prob.push_back(std::exp(b.scores(t, 0)));
      in.boundaries = prob.data();
    }
    in.width = static_cast<std::size_t>(*width);
    in.height = static_cast<std::size_t>(*height);
    Raster r = run_algo([&] { return plot_segmentation(in); });
    Image img(r.width, r.height, Image::Format::RGBA8);
    img.u8 = std::move(r.rgba);
    ctx.info(std::to_string(img.width) + "×" + std::to_string(img.height) + " plot of " +
             std::to_string(g.segments.size()) + " segments");
    image.set(std::move(img));
  }
};

}  // namespace

void register_report_nodes(PluginRegistrar& r) {
  r.add_node<Evaluate>();
  r.add_node<Plot>();
}

}  // namespace gemflow::semicrf
