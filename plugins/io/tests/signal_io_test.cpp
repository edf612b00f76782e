// The signal reader (TCPD JSON, CSV/TSV/text, NPY), the segments writer and their nodes.
#include <gtest/gtest.h>

#include <cmath>
#include <sstream>

#include <gemflow/testing.hpp>
#include <gemflow/types.hpp>

#include "gemflow/io/errors.hpp"
#include "gemflow/io/matrix_io.hpp"
#include "gemflow/io/signal_io.hpp"
#include "io_test_support.hpp"
#include "register.hpp"

using namespace gemflow;
using namespace gemflow::io;
using gemflow::io::testing::sample;
using gemflow::io::testing::write_temp;

namespace {
std::string parse_error(std::string_view text, const std::string& name, ReadSignalOptions o = {}) {
  try {
    (void)parse_signal(text, name, o);
  } catch (const ParseError& e) {
    return e.what();
  }
  return "(no ParseError)";
}
}  // namespace

TEST(SignalIo, TcpdWellLog) {
  SignalFileInfo fi;
  const Signal s = read_signal(sample("sequences/tcpd/well_log.json"), {}, &fi);
  EXPECT_EQ(fi.format, "tcpd-json");
  EXPECT_EQ(fi.name, "well_log");
  ASSERT_EQ(s.length(), 675u);
  ASSERT_EQ(s.dims(), 1u);
  EXPECT_EQ(s.channels[0], "V1");
  EXPECT_EQ(s.samples(0, 0), 133530.6);  // the file's first value (line 690)
  EXPECT_EQ(fi.lines.at(0), 690);
  EXPECT_EQ(fi.missing, 0u);
  EXPECT_FALSE(s.validate().has_value());
  ASSERT_EQ(fi.lines.size(), 675u);
}

TEST(SignalIo, TcpdSeveralDimensions) {
  const Signal s = read_signal(sample("sequences/tcpd/run_log.json"));
  EXPECT_EQ(s.length(), 376u);
  ASSERT_EQ(s.dims(), 2u);
  EXPECT_EQ(s.channels[0], "Pace");
  EXPECT_EQ(s.channels[1], "Distance");
}

TEST(SignalIo, TcpdNullIsMissingAndFilled) {
  const std::string text = R"({"name": "x", "n_obs": 5, "n_dim": 2,
  "series": [
    {"label": "a", "raw": [1.0, null, 3.0, null, null]},
    {"label": "b", "raw": [null, 10, 20, 30, 40]}
  ]})";
  SignalFileInfo fi;
  const Signal s = parse_signal(text, "x.json", {}, &fi);
  ASSERT_EQ(s.length(), 5u);
  EXPECT_EQ(s.samples(1, 0), 2.0);   // interpolated
  EXPECT_EQ(s.samples(3, 0), 3.0);   // after the last observed value: that value
  EXPECT_EQ(s.samples(0, 1), 10.0);  // before the first: the first
  EXPECT_EQ(fi.missing, 4u);
  EXPECT_EQ(fi.missing_rows, (std::vector<std::size_t>{0, 1, 3, 4}));
  EXPECT_EQ(fi.lines[2], 3);  // value 2 of series 0 is on line 3
  // the mask marks exactly the null entries, channel by channel (row-major T × D)
  EXPECT_EQ(s.valid, (std::vector<std::uint8_t>{1, 0, 0, 1, 1, 1, 0, 1, 0, 1}));
  EXPECT_FALSE(s.observed(1, 0));
  EXPECT_TRUE(s.observed(1, 1));
  EXPECT_EQ(s.missing(), 4u);
  EXPECT_EQ(s.validate(), std::nullopt);
}

TEST(SignalIo, NothingMissingLeavesTheMaskEmpty) {
  const Signal s = parse_signal("v\n1\n2\n", "x.csv");
  EXPECT_TRUE(s.valid.empty());
  EXPECT_TRUE(s.observed(1, 0));
}

TEST(SignalIo, TcpdErrorsNameTheLine) {
  EXPECT_CONTAINS(parse_error("{\"series\": [{\"raw\": [1, \"x\", 3]}]}", "b.json"),
                  "b.json:1: value 1 of series 'V1'");
  EXPECT_CONTAINS(parse_error("{\n\"series\": [\n{\"raw\": [1,\n2,\n\"bad\"]}]}", "b.json"), "b.json:5:");
  EXPECT_CONTAINS(parse_error("{\"n_obs\": 4,\n\"series\": [{\"raw\": [1, 2]}]}", "b.json"), "b.json:1: n_obs is 4");
  EXPECT_CONTAINS(parse_error("{\"series\": [{\"raw\": [1, 2]},\n{\"raw\": [1]}]}", "b.json"), "series 1 has 1 values");
  EXPECT_CONTAINS(parse_error("{\"series\": [{\"raw\": [null, null]}]}", "b.json"), "has no value");
  EXPECT_CONTAINS(parse_error("{\"series\": [1, 2", "b.json"), "b.json:1: JSON syntax");
  // Numbers beyond double's range: nlohmann::json throws out_of_range (not parse_error), which
  // escaped the reader (a fuzzing finding, regressions/signal/number_overflow.json).
  EXPECT_CONTAINS(parse_error("{\n\"series\": [{\"raw\": [1,\n5e521]}]}", "b.json"), "b.json:3: JSON value");
  EXPECT_CONTAINS(parse_error("{\"series\": [{\"raw\": [-1e400, 2]}]}", "b.json"), "b.json:1: JSON value");
}

// 40 000 series of one value, one per line: every value's line found in one pass over the text
// (each series counted the newlines from the file's start: time in series × file size).
TEST(SignalIo, TcpdManySeriesLinesInOnePass) {
  const int d = 40000;
  std::string text = "{\"series\": [\n";
  for (int k = 0; k < d; ++k) text += std::string(k ? ",\n" : "") + "{\"raw\": [" + std::to_string(k) + "]}";
  SignalFileInfo fi;
  const Signal s = parse_signal(text + "\n]}", "m.json", {}, &fi);
  ASSERT_EQ(s.dims(), std::size_t(d));
  EXPECT_EQ(s.samples(0, d - 1), double(d - 1));
  EXPECT_EQ(fi.lines.at(0), 2);
  EXPECT_CONTAINS(parse_error(text + ",\n{\"raw\": [\"bad\"]}\n]}", "m.json"),
                  "m.json:" + std::to_string(d + 2) + ": value 0 of series");
}

TEST(SignalIo, CsvWithAndWithoutHeader) {
  SignalFileInfo fi;
  Signal s = parse_signal("t,a,b\n0,1,2\n1,NA,4\n2,5,6\n", "x.csv", {.time_column = "t"}, &fi);
  EXPECT_TRUE(fi.header);
  ASSERT_EQ(s.dims(), 2u);
  EXPECT_EQ(s.channels, (std::vector<std::string>{"a", "b"}));
  EXPECT_EQ(s.times, (std::vector<double>{0, 1, 2}));
  EXPECT_EQ(s.samples(1, 0), 3.0);
  EXPECT_EQ(s.valid, (std::vector<std::uint8_t>{1, 1, 0, 1, 1, 1}));  // NA: missing; the time column is no channel
  s = parse_signal("1,2\n3,4\n", "x.csv", {}, &fi);
  EXPECT_FALSE(fi.header);
  EXPECT_EQ(s.samples(1, 1), 4.0);
  s = parse_signal("a\tb\n1\t2\n\t4\n", "x.tsv", {}, &fi);
  EXPECT_EQ(s.samples(1, 0), 1.0);  // empty field: missing, filled from the last value
  EXPECT_EQ(fi.format, "tsv");
}

TEST(SignalIo, ColumnsSkipTextColumns) {
  const std::string text =
      "\"Clone\",\"Chromosome\",\"Position\",\"A\",\"B\"\n\"GS1\",1,0,NA,0.5\n\"RP11\",1,468,0.25,0.75\n";
  EXPECT_CONTAINS(parse_error(text, "c.csv"), "c.csv:2: field 1 'GS1' is not a number");
  SignalFileInfo fi;
  const Signal s = parse_signal(text, "c.csv", {.time_column = "Position", .columns = "A, 5"}, &fi);
  EXPECT_EQ(s.channels, (std::vector<std::string>{"A", "B"}));
  EXPECT_EQ(s.times, (std::vector<double>{0, 468}));
  EXPECT_EQ(s.samples(0, 0), 0.25);  // NA filled from the next observed value
  EXPECT_EQ(s.samples(1, 1), 0.75);
  EXPECT_EQ(fi.missing, 1u);
  EXPECT_CONTAINS(parse_error(text, "c.csv", {.columns = "Z"}), "c.csv:1: column 'Z' is neither a header name");
}

// The Coriell aCGH profile (GPL, shared/data only): 2271 clones, text clone names, NA values.
TEST(SignalIo, CoriellCopyNumberProfile) {
  const std::string path = gemflow::io::testing::shared("sequences/dnacopy/coriell_DNAcopy.csv");
  if (path.empty()) GTEST_SKIP() << "GEMFLOW_SHARED_DATA/sequences/dnacopy/coriell_DNAcopy.csv absent";
  SignalFileInfo fi;
  const Signal s = read_signal(path, {.columns = "Coriell.05296,Coriell.13330"}, &fi);
  EXPECT_EQ(s.length(), 2271u);
  EXPECT_EQ(s.dims(), 2u);
  EXPECT_EQ(fi.missing, 353u);  // the file's NA values: 159 in Coriell.05296, 194 in Coriell.13330
  EXPECT_EQ(s.missing(), 353u);
  EXPECT_FALSE(s.validate().has_value());
}

TEST(SignalIo, OneValuePerLine) {
  SignalFileInfo fi;
  const Signal s = read_signal(sample("sequences/welllog_full_4050.txt"), {}, &fi);
  EXPECT_EQ(s.length(), 4050u);
  EXPECT_EQ(s.dims(), 1u);
  EXPECT_EQ(fi.format, "text");
  const Signal e = read_signal(sample("sequences/tssb/TwoLeadECG.txt"));
  EXPECT_NEAR(e.samples(0, 0), -0.071385, 0);
}

// np.save of a 1-D signal (the usual shape of one channel) was refused: "a matrix needs exactly 2"
// dimensions. A signal reads it as one channel; a matrix still refuses it.
TEST(SignalIo, OneDimensionalNpyIsOneChannel) {
  const double values[3] = {1.5, -2.0, 4.25};
  std::string header = "{'descr': '<f8', 'fortran_order': False, 'shape': (3,), }";
  header.append((64 - (10 + header.size() + 1) % 64) % 64, ' ');
  header += '\n';
  std::string bytes("\x93NUMPY\x01\x00", 8);
  bytes += static_cast<char>(header.size() & 0xff);
  bytes += static_cast<char>(header.size() >> 8);
  bytes += header;
  bytes.append(reinterpret_cast<const char*>(values), sizeof values);
  SignalFileInfo fi;
  const Signal s = parse_signal(bytes, "one.npy", {}, &fi);
  ASSERT_EQ(s.length(), 3u);
  ASSERT_EQ(s.dims(), 1u);
  EXPECT_EQ(fi.format, "npy");
  for (int t = 0; t < 3; ++t) EXPECT_EQ(s.samples(t, 0), values[t]);
  EXPECT_THROW((void)parse_npy(bytes, "one.npy"), ParseError);
}

TEST(SignalIo, TextErrorsNameTheLine) {
  EXPECT_CONTAINS(parse_error("1,2\n3\n", "r.csv"), "r.csv:2: row has 1 fields, the row of line 1 has 2");
  EXPECT_CONTAINS(parse_error("# c\n1\n2x\n", "r.txt"), "r.txt:3: field 1 '2x' is not a number");
  EXPECT_CONTAINS(parse_error("t,v\n1,2\n1,3\n", "r.csv", {.time_column = "t"}), "r.csv:3: time 1");
  EXPECT_CONTAINS(parse_error("t,v\n1,2\n", "r.csv", {.time_column = "z"}), "time column 'z'");
  EXPECT_CONTAINS(parse_error("a,b\n", "r.csv"), "no data rows");
  EXPECT_CONTAINS(parse_error("1\n", "r.wav"), "unknown signal file extension '.wav'");
}

TEST(SignalIo, WriteSegments) {
  Segmentation s;
  s.length = 10;
  s.labels = {"low", "hi,gh"};
  s.segments = {{0, 4, 0, -1.5}, {4, 10, 1, 2.25}};
  s.sample_rate = 2;
  std::ostringstream csv, json;
  write_segments(csv, s, "a.csv");
  EXPECT_EQ(csv.str(),
            "start,end,label,label_name,score,start_time,end_time\n0,4,0,low,-1.5,0,2\n4,10,1,\"hi,gh\",2.25,2,5\n");
  write_segments(json, s, "a.JSON");
  EXPECT_CONTAINS(json.str(), "\"label_name\": \"hi,gh\"");
  std::ostringstream bad;
  EXPECT_THROW(write_segments(bad, s, "a.txt"), std::invalid_argument);
}

TEST(SignalIo, ReadSignalNodeWarnsAboutMissingValues) {
  gemflow::Registry reg;
  gemflow::PluginRegistrar r(reg, "io-test");
  register_signal_nodes(r);
  auto node = gemflow::testing::make_node(reg, "io.read_signal");
  node->set_param("path", write_temp("missing.csv", "v\n1\n\n3\nNaN\n5\n"));
  gemflow::testing::RecordingContext ctx;
  EXPECT_EQ(gemflow::testing::error_of(*node, ctx), "(no error)");
  const auto s = node->output("signal").as<Signal>();
  EXPECT_EQ(s->samples(1, 0), 3.0);  // blank lines are skipped, not missing
  EXPECT_EQ(s->samples(2, 0), 4.0);
  EXPECT_EQ(s->valid, (std::vector<std::uint8_t>{1, 1, 0, 1}));
  ASSERT_EQ(ctx.warnings().size(), 1u);
  EXPECT_CONTAINS(ctx.warnings()[0],
                  "1 missing values in 1 samples masked (their placeholders filled by linear interpolation): "
                  "samples 2 (line 5)");
}
