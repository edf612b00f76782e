// The semicrf nodes on shipped series: fit → emissions → decode / marginals → change points,
// evaluate, plot.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <utility>

#include <gemflow/testing.hpp>
#include <gemflow/types.hpp>

#include "gemflow/io/signal_io.hpp"
#include "model_type.hpp"
#include "register.hpp"

using namespace gemflow;
namespace gt = gemflow::testing;

namespace {

std::string sample(const std::string& rel) { return std::string(GEMFLOW_SOURCE_DIR) + "/sample_data/" + rel; }

const Registry& registry() {
  static Registry reg = [] {
    Registry r;
    PluginRegistrar p(r, "semicrf");
    semicrf::register_model_nodes(p);
    semicrf::register_decode_nodes(p);
    semicrf::register_report_nodes(p);
    semicrf::register_segment_nodes(p);
    return r;
  }();
  return reg;
}

/// A step signal: levels 0, 3, 1 (samples [0,40), [40,70), [70,100)) plus a small deterministic wiggle.
Signal steps() {
  Signal s;
  s.samples = Matrix<double>(100, 1);
  for (int t = 0; t < 100; ++t) s.samples(t, 0) = (t < 40 ? 0.0 : t < 70 ? 3.0 : 1.0) + 0.2 * std::sin(t * 2.1);
  s.channels = {"x"};
  s.units = {""};
  return s;
}

struct Chain {
  std::shared_ptr<const semicrf::CrfModel> model;
  std::shared_ptr<const Scores> scores;
  std::shared_ptr<const Segmentation> segmentation;
};

Chain fit_and_decode(const Signal& s, int labels, double penalty, const std::string& device = "cpu") {
  gt::RecordingContext ctx;
  auto fit = gt::make_node(registry(), "semicrf.fit");
  fit->set_input("signal", Value::make(s));
  fit->set_param("labels", labels);
  fit->set_param("segment_penalty", penalty);
  EXPECT_EQ(gt::error_of(*fit, ctx), "(no error)");
  Chain c;
  c.model = fit->output("model").as<semicrf::CrfModel>();
  auto em = gt::make_node(registry(), "semicrf.gaussian_emissions");
  em->set_input("signal", Value::make(s));
  em->set_input("model", fit->output("model"));
  EXPECT_EQ(gt::error_of(*em, ctx), "(no error)");
  c.scores = em->output("scores").as<Scores>();
  auto dec = gt::make_node(registry(), "semicrf.decode");
  dec->set_input("scores", em->output("scores"));
  dec->set_input("model", fit->output("model"));
  dec->set_param("device", device);
  EXPECT_EQ(gt::error_of(*dec, ctx), "(no error)");
  c.segmentation = dec->output("segmentation").as<Segmentation>();
  return c;
}

}  // namespace

TEST(SemicrfNodes, FitDecodeFindsTheSteps) {
  const auto c = fit_and_decode(steps(), 3, 10.0);
  ASSERT_TRUE(c.segmentation);
  ASSERT_EQ(c.segmentation->segments.size(), 3u);
  EXPECT_EQ(c.segmentation->segments[1].start, 40u);
  EXPECT_EQ(c.segmentation->segments[2].start, 70u);
  EXPECT_TRUE(c.segmentation->complete());
  EXPECT_FALSE(c.segmentation->validate().has_value());
  // the fitted levels are the steps' means
  EXPECT_NEAR(c.model->model.gaussians.mean[0], 0.0, 0.05);
  EXPECT_NEAR(c.model->model.gaussians.mean[2], 3.0, 0.05);
}

// A user's report: std_devs 1e-320 (a subnormal: out of the normal doubles' range) was "not a
// finite number". Numbers out of range say which end; text that is no number keeps its words.
TEST(SemicrfNodes, GivenNumbersOutOfRangeSayWhichEnd) {
  const auto error_for = [](const std::string& param, const std::string& text) {
    gt::RecordingContext ctx;
    auto em = gt::make_node(registry(), "semicrf.gaussian_emissions");
    em->set_input("signal", Value::make(steps()));
    em->set_param("labels", 2);
    em->set_param(param, text);
    return gt::error_of(*em, ctx);
  };
  const std::pair<std::string, std::string> cases[] = {
      {error_for("std_devs", "1, 1e-320"), "parameter 'std_devs': ' 1e-320' is too close to 0"},
      {error_for("means", "1e400, 0"), "parameter 'means': '1e400' is beyond the largest double"},
      {error_for("means", "1, x"), "parameter 'means': ' x' is not a finite number"},
      {error_for("means", "1, nan"), "parameter 'means': ' nan' is not a finite number"}};
  for (const auto& [error, expected] : cases) EXPECT_NE(error.find(expected), std::string::npos) << error;
}

TEST(SemicrfNodes, MaskedValuesAreMarginalised) {
  // missing values whose placeholders would be a level of their own: masked, the chain ignores
  // them (their scores are 0) and finds the same steps
  Signal s = steps();
  s.valid.assign(100, 1);
  for (int t : {10, 11, 12, 55, 56, 90}) s.samples(t, 0) = 20.0, s.valid[t] = 0;
  const auto c = fit_and_decode(s, 3, 10.0);
  ASSERT_TRUE(c.segmentation);
  ASSERT_EQ(c.segmentation->segments.size(), 3u);
  EXPECT_EQ(c.segmentation->segments[1].start, 40u);
  EXPECT_EQ(c.segmentation->segments[2].start, 70u);
  EXPECT_NEAR(c.model->model.gaussians.mean[2], 3.0, 0.05);
  for (int t : {10, 11, 12, 55, 56, 90})
    for (std::size_t l = 0; l < 3; ++l) EXPECT_EQ(c.scores->scores(t, l), 0.0) << "sample " << t;
  EXPECT_NE(c.scores->scores(13, 0), 0.0);
}

TEST(SemicrfNodes, BayesSegmentsFindsTheStepsAndIgnoresSpikes) {
  // levels 0, 3, 1 with a spike and a masked value: the spike is an outlier (Hampel), the masked
  // value carries no likelihood, so the segments are the three steps; the boundary posterior is
  // high at the steps and low inside a segment
  Signal s = steps();
  s.samples(20, 0) = 15.0;
  s.valid.assign(100, 1);
  s.valid[85] = 0;
  s.samples(85, 0) = -40.0;
  gt::RecordingContext ctx;
  auto node = gt::make_node(registry(), "semicrf.bayes_segments");
  node->set_input("signal", Value::make(s));
  ASSERT_EQ(gt::error_of(*node, ctx), "(no error)");
  const auto seg = node->output("segmentation").as<Segmentation>();
  ASSERT_EQ(seg->segments.size(), 3u);
  EXPECT_EQ(seg->segments[1].start, 40u);
  EXPECT_EQ(seg->segments[2].start, 70u);
  EXPECT_EQ(seg->segments[2].end, 100u);
  const auto bnd = node->output("boundaries").as<Scores>();
  ASSERT_EQ(bnd->length(), 100u);
  EXPECT_GT(bnd->scores(40, 0), std::log(0.5));
  EXPECT_LT(bnd->scores(55, 0), std::log(0.01));
  EXPECT_NEAR(bnd->scores(0, 0), 0.0, 1e-12);  // a segment always starts at 0
  auto bad = gt::make_node(registry(), "semicrf.bayes_segments");
  bad->set_input("signal", Value::make(s));
  bad->set_param("max_duration", 5);
  bad->set_param("min_duration", 6);
  EXPECT_NE(gt::error_of(*bad, ctx).find("exceeds the longest segment K = 5"), std::string::npos);
}

TEST(SemicrfNodes, MinimumDurationRemovesShortSegments) {
  Signal s = steps();
  s.samples(20, 0) = 3.0;  // a one-sample spike at the level of the middle step
  s.samples(21, 0) = 3.0;
  const auto free = fit_and_decode(s, 3, 2.0);
  bool short_segment = false;
  for (const auto& g : free.segmentation->segments) short_segment |= g.end - g.start < 3;
  ASSERT_TRUE(short_segment);  // the spike is a segment of its own without the constraint
  gt::RecordingContext ctx;
  auto fit = gt::make_node(registry(), "semicrf.fit");
  fit->set_input("signal", Value::make(s));
  fit->set_param("labels", 3);
  fit->set_param("segment_penalty", 2.0);
  fit->set_param("min_duration", 3);
  ASSERT_EQ(gt::error_of(*fit, ctx), "(no error)");
  auto em = gt::make_node(registry(), "semicrf.gaussian_emissions");
  em->set_input("signal", Value::make(s));
  em->set_input("model", fit->output("model"));
  ASSERT_EQ(gt::error_of(*em, ctx), "(no error)");
  auto dec = gt::make_node(registry(), "semicrf.decode");
  dec->set_input("scores", em->output("scores"));
  dec->set_input("model", fit->output("model"));
  dec->set_param("device", std::string("cpu"));
  ASSERT_EQ(gt::error_of(*dec, ctx), "(no error)");
  for (const auto& g : dec->output("segmentation").as<Segmentation>()->segments) EXPECT_GE(g.end - g.start, 3u);
  fit->set_param("min_duration", 101);
  EXPECT_NE(gt::error_of(*fit, ctx).find("exceeds the longest segment"), std::string::npos);
}

TEST(SemicrfNodes, FitHistoryNeverDecreases) {
  gt::RecordingContext ctx;
  auto fit = gt::make_node(registry(), "semicrf.fit");
  fit->set_input("signal", Value::make(io::read_signal(sample("sequences/tcpd/well_log.json"))));
  fit->set_param("labels", 4);
  fit->set_param("iterations", 8);
  ASSERT_EQ(gt::error_of(*fit, ctx), "(no error)");
  const auto h = fit->output("history").as<Table>();
  ASSERT_GE(h->rows.size(), 3u);
  for (std::size_t i = 1; i < h->rows.size(); ++i)
    EXPECT_GE(std::get<double>(h->rows[i][1]),
              std::get<double>(h->rows[i - 1][1]) - 1e-6 * std::abs(std::get<double>(h->rows[i][1])))
        << "iteration " << i;
}

// The fit reports each iteration (progress at least once a second of work) and stops when the
// run is cancelled between iterations.
TEST(SemicrfNodes, FitReportsEachIterationAndCancels) {
  const auto signal = Value::make(io::read_signal(sample("sequences/tcpd/well_log.json")));
  gt::RecordingContext ctx;
  auto fit = gt::make_node(registry(), "semicrf.fit");
  fit->set_input("signal", signal);
  fit->set_param("labels", 4);
  fit->set_param("iterations", 6);
  ASSERT_EQ(gt::error_of(*fit, ctx), "(no error)");
  const auto h = fit->output("history").as<Table>();
  EXPECT_GE(ctx.progress_calls(), h->rows.size()) << "one report per iteration, plus start and end";
  // Each iteration's objective once, in order, among the reports from within its passes.
  std::size_t objectives = 0;
  for (const auto& m : ctx.progress_messages())
    if (m.find(": objective") != std::string::npos) {
      EXPECT_EQ(m.find("iteration " + std::to_string(objectives) + ": objective"), 0u) << m;
      ++objectives;
    }
  EXPECT_EQ(objectives + 1, h->rows.size());  // the last one ends the fit (reported by the node's end)
  for (std::size_t i = 1; i < ctx.fractions().size(); ++i) EXPECT_LE(ctx.fractions()[i - 1], ctx.fractions()[i]) << i;
  gt::RecordingContext cancel;
  cancel.cancel_after_progress(3);
  auto again = gt::make_node(registry(), "semicrf.fit");
  again->set_input("signal", signal);
  again->set_param("labels", 4);
  again->set_param("iterations", 6);
  EXPECT_EQ(gt::error_of(*again, cancel), "cancelled");
  EXPECT_LE(cancel.progress_calls(), 4u) << "stopped at the first iteration after the cancel";
}

// A long signal's forward-backward pass takes seconds, so progress and cancellation must reach
// inside a pass (a 4050-sample signal: seconds per pass): the recurrences poll every 64
// positions.
TEST(SemicrfNodes, MarginalsAndDecodeReportProgressAndCancelWithinAPass) {
  Signal s;
  s.samples = Matrix<double>(600, 1);
  for (int t = 0; t < 600; ++t) s.samples(t, 0) = (t / 150) % 2 + 0.2 * std::sin(t * 2.1);
  s.channels = {"x"};
  s.units = {""};
  const auto c = fit_and_decode(s, 2, 5.0);
  for (const char* id : {"semicrf.marginals", "semicrf.decode"}) {
    const auto make = [&] {
      auto n = gt::make_node(registry(), id);
      n->set_input("scores", Value::make(*c.scores));
      n->set_input("model", Value::make(*c.model));
      n->set_param("device", std::string("cpu"));
      return n;
    };
    gt::RecordingContext ctx;
    auto n = make();
    ASSERT_EQ(gt::error_of(*n, ctx), "(no error)") << id;
    EXPECT_GE(ctx.progress_calls(), 9u) << id;  // 600 positions: a report every 64 of each pass
    for (std::size_t i = 1; i < ctx.fractions().size(); ++i)
      EXPECT_LE(ctx.fractions()[i - 1], ctx.fractions()[i]) << id;
    gt::RecordingContext cancel;
    cancel.cancel_after_progress(2);
    auto again = make();
    EXPECT_EQ(gt::error_of(*again, cancel), "cancelled") << id;
    EXPECT_EQ(cancel.progress_calls(), 2u) << id;
  }
}

// semicrf.Model had no disk encoding, so semicrf.fit (most of a segmentation's time) ran again
// on every run. It round-trips through the registry's encoding; damaged sizes are refused.
TEST(SemicrfNodes, ModelRoundTripsThroughTheCacheEncoding) {
  const auto c = fit_and_decode(steps(), 3, 10.0);
  const TypeInfo* t = registry().find_type("semicrf.Model");
  ASSERT_NE(t, nullptr);
  ASSERT_TRUE(t->save && t->load);
  BinaryWriter w;
  t->save(Value::make(*c.model), w);
  BinaryReader r(w.bytes());
  const Value back = t->load(r);
  r.finish("model");
  const auto& a = *c.model;
  const auto& b = *back.as<semicrf::CrfModel>();
  EXPECT_EQ(b.model.crf.labels, 3u);
  EXPECT_EQ(b.model.crf.max_duration, a.model.crf.max_duration);
  EXPECT_EQ(b.model.crf.transitions, a.model.crf.transitions);
  EXPECT_EQ(b.model.crf.duration_bias, a.model.crf.duration_bias);
  EXPECT_EQ(b.model.crf.initial, a.model.crf.initial);
  EXPECT_EQ(b.model.gaussians.mean, a.model.gaussians.mean);
  EXPECT_EQ(b.model.gaussians.variance, a.model.gaussians.variance);
  EXPECT_EQ(b.model.gaussians.outlier, a.model.gaussians.outlier);
  EXPECT_EQ(b.centring, a.centring);
  EXPECT_EQ(b.labels, a.labels);
  // The same model decodes the same segmentation.
  gt::RecordingContext ctx;
  auto dec = gt::make_node(registry(), "semicrf.decode");
  dec->set_input("scores", Value::make(*c.scores));
  dec->set_input("model", back);
  dec->set_param("device", std::string("cpu"));
  ASSERT_EQ(gt::error_of(*dec, ctx), "(no error)");
  EXPECT_EQ(dec->output("segmentation").as<Segmentation>()->segments, c.segmentation->segments);

  semicrf::CrfModel broken = a;
  broken.model.crf.duration_bias.pop_back();  // K·C − 1 biases
  BinaryWriter wb;
  t->save(Value::make(broken), wb);
  BinaryReader rb(wb.bytes());
  EXPECT_THROW((void)t->load(rb), SerialError);
}

TEST(SemicrfNodes, SupervisedFitNeedsLabels) {
  gt::RecordingContext ctx;
  auto fit = gt::make_node(registry(), "semicrf.fit");
  fit->set_input("signal", Value::make(steps()));
  fit->set_param("mode", std::string("supervised"));
  EXPECT_NE(gt::error_of(*fit, ctx).find("needs the input 'labels'"), std::string::npos);
  // labels that the estimated start (levels sorted: 0, 1, 3) gets wrong: L-BFGS moves the
  // Gaussians until the labelled segmentation is the likely one
  Segmentation g;
  g.length = 100;
  g.labels = {"a", "b", "c"};
  g.segments = {{0, 40, 1, 0}, {40, 70, 0, 0}, {70, 100, 2, 0}};
  auto sup = gt::make_node(registry(), "semicrf.fit");
  sup->set_input("signal", Value::make(steps()));
  sup->set_input("labels", Value::make(g));
  sup->set_param("mode", std::string("supervised"));
  sup->set_param("labels", 3);
  ASSERT_EQ(gt::error_of(*sup, ctx), "(no error)");
  const auto h = sup->output("history").as<Table>();
  ASSERT_GE(h->rows.size(), 2u);
  EXPECT_GT(std::get<double>(h->rows.front()[1]), 100.0);
  EXPECT_LT(std::get<double>(h->rows.back()[1]), 1.0);
  const auto m = sup->output("model").as<semicrf::CrfModel>();
  // label 1 now models [0, 40) (level 0) and label 0 [40, 70) (level 3): the means swapped sides
  // (maximum likelihood of the labels stops once they are certain, not at the sample means)
  EXPECT_LT(m->model.gaussians.mean[1], 0.5);
  EXPECT_GT(m->model.gaussians.mean[0], 2.5);
}

TEST(SemicrfNodes, MarginalsAndChangePoints) {
  const auto c = fit_and_decode(steps(), 3, 10.0);
  gt::RecordingContext ctx;
  auto mar = gt::make_node(registry(), "semicrf.marginals");
  mar->set_input("scores", Value::make(*c.scores));
  mar->set_input("model", Value::make(*c.model));
  mar->set_param("device", std::string("cpu"));
  ASSERT_EQ(gt::error_of(*mar, ctx), "(no error)");
  const auto lab = mar->output("labels").as<Scores>();
  const auto bnd = mar->output("boundaries").as<Scores>();
  for (std::size_t t = 0; t < 100; ++t) {
    double s = 0;
    for (std::size_t l = 0; l < 3; ++l) s += std::exp(lab->scores(t, l));
    EXPECT_NEAR(s, 1.0, 1e-9);
  }
  EXPECT_GT(std::exp(bnd->scores(40, 0)), 0.5);  // the boundary posterior peaks at the steps
  EXPECT_LT(std::exp(bnd->scores(20, 0)), 1e-3);
  auto cp = gt::make_node(registry(), "semicrf.change_points");
  cp->set_input("segmentation", Value::make(*c.segmentation));
  ASSERT_EQ(gt::error_of(*cp, ctx), "(no error)");
  const auto t = cp->output("table").as<Table>();
  ASSERT_EQ(t->rows.size(), 2u);
  EXPECT_EQ(std::get<std::int64_t>(t->rows[0][0]), 40);
}

TEST(SemicrfNodes, EvaluateAppendsRows) {
  gt::RecordingContext ctx;
  Segmentation none;  // bank: one segment, no change point
  none.length = 581;
  none.labels = {"a"};
  none.segments = {{0, 581, 0, 0}};
  auto ev = gt::make_node(registry(), "semicrf.evaluate");
  ev->set_input("segmentation", Value::make(none));
  ev->set_param("annotations", sample("sequences/tcpd/annotations.json"));
  ev->set_param("series", std::string("bank"));
  ASSERT_EQ(gt::error_of(*ev, ctx), "(no error)");
  Segmentation three;  // run_log with change points 60, 100, 200 (metrics_test.cpp works it by hand)
  three.length = 376;
  three.labels = {"a", "b"};
  three.segments = {{0, 60, 0, 0}, {60, 100, 1, 0}, {100, 200, 0, 0}, {200, 376, 1, 0}};
  auto ev2 = gt::make_node(registry(), "semicrf.evaluate");
  ev2->set_input("segmentation", Value::make(three));
  ev2->set_input("previous", ev->output("table"));
  ev2->set_param("annotations", sample("sequences/tcpd/annotations.json"));
  ev2->set_param("series", std::string("run_log"));
  ASSERT_EQ(gt::error_of(*ev2, ctx), "(no error)");
  const auto t = ev2->output("table").as<Table>();
  ASSERT_EQ(t->rows.size(), 2u);
  EXPECT_EQ(std::get<double>(t->rows[0][t->column("f1")]), 1.0);
  EXPECT_EQ(std::get<double>(t->rows[0][t->column("cover")]), 1.0);
  EXPECT_NEAR(std::get<double>(t->rows[1][t->column("f1")]), 41.0 / 58.0, 1e-15);
  EXPECT_EQ(std::get<std::string>(t->rows[1][t->column("change_points")]), "60 100 200");
  // TSSB: one annotator from desc.txt
  Segmentation ecg;
  ecg.length = 2400;
  ecg.labels = {"a", "b"};
  ecg.segments = {{0, 744, 0, 0}, {744, 2400, 1, 0}};
  auto ev3 = gt::make_node(registry(), "semicrf.evaluate");
  ev3->set_input("segmentation", Value::make(ecg));
  ev3->set_param("annotations", sample("sequences/tssb/desc.txt"));
  ev3->set_param("series", std::string("ECG200"));
  ASSERT_EQ(gt::error_of(*ev3, ctx), "(no error)");
  EXPECT_EQ(std::get<double>(ev3->output("table").as<Table>()->rows[0][7]), 1.0);
  auto bad = gt::make_node(registry(), "semicrf.evaluate");
  bad->set_input("segmentation", Value::make(none));
  bad->set_param("annotations", sample("sequences/tcpd/annotations.json"));
  bad->set_param("series", std::string("nonexistent"));
  EXPECT_NE(gt::error_of(*bad, ctx).find("no annotations of series 'nonexistent'"), std::string::npos);
  // A JSON number beyond double's range is a located error, not an escaped library exception
  // (found by fuzzing the signal reader, which parses the same JSON); so is bad syntax.
  const auto dir = std::filesystem::temp_directory_path() / "gemflow_semicrf_nodes_test";
  std::filesystem::create_directories(dir);
  const std::pair<const char*, const char*> cases[] = {
      {"{\"s\": {\"a\": [1,\n2,\n5e521]}}", "overflow.json:3: JSON value"},
      {"{\"s\": {\"a\": [1,\n-1e400]}}", "overflow.json:2: JSON value"},
      {"{\"s\": {\"a\": [1,\n2,,]}}", "overflow.json:2: JSON syntax"}};
  for (const auto& [text, expected] : cases) {
    std::ofstream(dir / "overflow.json") << text;
    auto j = gt::make_node(registry(), "semicrf.evaluate");
    j->set_input("segmentation", Value::make(none));
    j->set_param("annotations", (dir / "overflow.json").string());
    j->set_param("series", std::string("s"));
    const auto e = gt::error_of(*j, ctx);
    EXPECT_NE(e.find(expected), std::string::npos) << text << " → " << e;
  }
}

// More labels than samples was refused as "8 labels for 3 samples (need 1 ≤ C ≤ T)", naming no
// parameter; both nodes that estimate Gaussians from the signal name it now.
TEST(SemicrfNodes, MoreLabelsThanSamplesNamesTheParameter) {
  Signal three;
  three.samples = Matrix<double>(3, 1);
  for (int t = 0; t < 3; ++t) three.samples(t, 0) = t;
  three.channels = {"x"};
  three.units = {""};
  for (const char* id : {"semicrf.fit", "semicrf.gaussian_emissions"}) {
    for (int labels : {3, 4}) {
      gt::RecordingContext ctx;
      auto n = gt::make_node(registry(), id);
      n->set_input("signal", Value::make(three));
      n->set_param("labels", labels);
      const std::string e = gt::error_of(*n, ctx);
      if (labels == 3) {
        EXPECT_EQ(e, "(no error)") << id;
      } else {
        EXPECT_NE(e.find("parameter 'labels' = 4 is more than the signal's 3 samples"), std::string::npos)
            << id << ": " << e;
      }
    }
  }
}

// A segmentation shorter than the annotated series (another signal, or a shortened one) was
// scored against it without complaint (exit 0, a meaningless F1 and Cover).
TEST(SemicrfNodes, EvaluateRefusesAnnotationsBeyondTheSignal) {
  const auto evaluate = [](std::size_t length) {
    Segmentation one;  // run_log's annotations end at 317
    one.length = length;
    one.labels = {"a"};
    one.segments = {{0, length, 0, 0}};
    gt::RecordingContext ctx;
    auto ev = gt::make_node(registry(), "semicrf.evaluate");
    ev->set_input("segmentation", Value::make(one));
    ev->set_param("annotations", sample("sequences/tcpd/annotations.json"));
    ev->set_param("series", std::string("run_log"));
    return gt::error_of(*ev, ctx);
  };
  EXPECT_EQ(evaluate(318), "(no error)");
  const std::string e = evaluate(317);
  EXPECT_NE(e.find("annotations.json: series 'run_log': the annotated change point 317 is outside the "
                   "segmentation's 317 samples"),
            std::string::npos)
      << e;
  const std::string short_one = evaluate(10);
  EXPECT_NE(short_one.find("outside the segmentation's 10 samples"), std::string::npos) << short_one;
}

TEST(SemicrfNodes, PlotMakesAnImage) {
  const auto c = fit_and_decode(steps(), 3, 10.0);
  gt::RecordingContext ctx;
  auto plot = gt::make_node(registry(), "semicrf.plot");
  plot->set_input("signal", Value::make(steps()));
  plot->set_input("segmentation", Value::make(*c.segmentation));
  plot->set_param("width", 300);
  plot->set_param("height", 100);
  ASSERT_EQ(gt::error_of(*plot, ctx), "(no error)");
  const auto img = plot->output("image").as<Image>();
  EXPECT_EQ(img->width, 300u);
  EXPECT_EQ(img->format, Image::Format::RGBA8);
  EXPECT_FALSE(img->validate().has_value());
}

TEST(SemicrfNodes, NoSegmentationIsAllowedIsAnError) {
  const auto c = fit_and_decode(steps(), 3, 10.0);
  Scores s = *c.scores;
  for (std::size_t i = 0; i < s.scores.size(); ++i) s.scores.data()[i] = -INFINITY;
  gt::RecordingContext ctx;
  auto dec = gt::make_node(registry(), "semicrf.decode");
  dec->set_input("scores", Value::make(s));
  dec->set_input("model", Value::make(*c.model));
  dec->set_param("device", std::string("cpu"));
  EXPECT_NE(gt::error_of(*dec, ctx).find("no segmentation is allowed"), std::string::npos);
  Scores nan = *c.scores;
  nan.scores(5, 1) = NAN;
  dec->set_input("scores", Value::make(nan));
  EXPECT_NE(gt::error_of(*dec, ctx).find("input 'scores'"), std::string::npos);
}

// docs/semicrf.md's one-parameter-set rows for the two TCPD series that are not redistributable
// (nile: GPL-2; quality_control_1: no licence), read from shared/data when present.
TEST(SemicrfNodes, TcpdSeriesOutsideSampleData) {
  const char* root = std::getenv("GEMFLOW_SHARED_DATA");
  const std::string dir = root && *root ? std::string(root) + "/sequences/tcpd/" : "";
  if (dir.empty() || !std::filesystem::exists(dir + "nile.json"))
    GTEST_SKIP() << "GEMFLOW_SHARED_DATA/sequences/tcpd absent";
  struct Expect {
    const char* series;
    double f1, cover;
  };
  for (const Expect& e : {Expect{"nile", 1.0, 0.888}, Expect{"quality_control_1", 1.0, 0.996}}) {
    SCOPED_TRACE(e.series);
    const Signal s = io::read_signal(dir + e.series + ".json");
    gt::RecordingContext ctx;
    auto fit = gt::make_node(registry(), "semicrf.fit");
    fit->set_input("signal", Value::make(s));
    fit->set_param("labels", 8);
    fit->set_param("segment_penalty", 6.0);
    fit->set_param("penalty_unit", std::string("log_length"));
    fit->set_param("iterations", 10);
    fit->set_param("fit_transitions", false);
    ASSERT_EQ(gt::error_of(*fit, ctx), "(no error)");
    auto em = gt::make_node(registry(), "semicrf.gaussian_emissions");
    em->set_input("signal", Value::make(s));
    em->set_input("model", fit->output("model"));
    ASSERT_EQ(gt::error_of(*em, ctx), "(no error)");
    auto dec = gt::make_node(registry(), "semicrf.decode");
    dec->set_input("scores", em->output("scores"));
    dec->set_input("model", fit->output("model"));
    dec->set_param("device", std::string("cpu"));
    ASSERT_EQ(gt::error_of(*dec, ctx), "(no error)");
    auto ev = gt::make_node(registry(), "semicrf.evaluate");
    ev->set_input("segmentation", dec->output("segmentation"));
    ev->set_param("annotations", dir + "annotations.json");
    ev->set_param("series", std::string(e.series));
    ASSERT_EQ(gt::error_of(*ev, ctx), "(no error)");
    const auto t = ev->output("table").as<Table>();
    EXPECT_NEAR(std::get<double>(t->rows[0][t->column("f1")]), e.f1, 5e-4);
    EXPECT_NEAR(std::get<double>(t->rows[0][t->column("cover")]), e.cover, 5e-4);
  }
}
