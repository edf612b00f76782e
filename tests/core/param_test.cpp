// ParamSpec::parse / check and format_param: the one validation path for every parameter.
#include <cmath>
#include <limits>

#include <gtest/gtest.h>

#include "gemflow/param.hpp"

namespace gemflow {
namespace {

// Initialised, not assigned: `s.name = "p"` trips GCC 12's -Wrestrict false positive at -O3.
ParamSpec spec(ParamKind k) { return ParamSpec{.name = "p", .kind = k}; }

template <class T>
T parsed(const ParamSpec& s, const std::string& text) {
  auto r = s.parse(text);
  EXPECT_TRUE(std::holds_alternative<ParamValue>(r)) << text << ": " << std::get<std::string>(r);
  return std::get<T>(std::get<ParamValue>(r));
}
std::string parse_error(const ParamSpec& s, const std::string& text) {
  auto r = s.parse(text);
  EXPECT_TRUE(std::holds_alternative<std::string>(r)) << text;
  return std::holds_alternative<std::string>(r) ? std::get<std::string>(r) : std::string();
}

TEST(Param, Bool) {
  const auto s = spec(ParamKind::Bool);
  EXPECT_TRUE(parsed<bool>(s, "true"));
  EXPECT_FALSE(parsed<bool>(s, "false"));
  EXPECT_TRUE(parsed<bool>(s, "yes"));
  // every YAML 1.1 boolean word in its three casings (break-test: yes and True were read, Yes,
  // TRUE and off's capitalised forms were refused)
  for (const char* t : {"true", "True", "TRUE", "yes", "Yes", "YES", "on", "On", "ON", "y", "Y"})
    EXPECT_TRUE(parsed<bool>(s, t)) << t;
  for (const char* t : {"false", "False", "FALSE", "no", "No", "NO", "off", "Off", "OFF", "n", "N"})
    EXPECT_FALSE(parsed<bool>(s, t)) << t;
  EXPECT_EQ(parse_error(s, "1"), "expected true or false (or yes/no, on/off), got '1'");
  EXPECT_EQ(parse_error(s, "tRUE"), "expected true or false (or yes/no, on/off), got 'tRUE'");
  EXPECT_FALSE(s.check(true));
  EXPECT_EQ(*s.check(std::int64_t{1}), "expected true or false");
}

TEST(Param, IntWithLimits) {
  auto s = spec(ParamKind::Int);
  s.min = -2;
  s.max = 10;
  EXPECT_EQ(parsed<std::int64_t>(s, "-2"), -2);
  EXPECT_EQ(parsed<std::int64_t>(s, "9223372036854775807"), std::numeric_limits<std::int64_t>::max());
  EXPECT_EQ(parse_error(s, "2.5"), "expected an integer, got '2.5'");
  // QA: out of range is said as such (a seed of 2^63 read as "expected an integer")
  EXPECT_EQ(parse_error(s, "9223372036854775808"),
            "9223372036854775808 is outside the range of a 64-bit integer [-2^63, 2^63 - 1]");
  EXPECT_EQ(parse_error(s, "-9223372036854775809"),
            "-9223372036854775809 is outside the range of a 64-bit integer [-2^63, 2^63 - 1]");
  EXPECT_EQ(parse_error(s, ""), "expected an integer, got ''");
  EXPECT_FALSE(s.check(std::int64_t{10}));
  EXPECT_EQ(*s.check(std::int64_t{11}), "11 is above the maximum 10");
  EXPECT_EQ(*s.check(std::int64_t{-3}), "-3 is below the minimum -2");
  EXPECT_EQ(*s.check(2.0), "expected an integer");
}

TEST(Param, FloatWithLimitsAndUnit) {
  auto s = spec(ParamKind::Float);
  s.min = 0;
  s.max = 2.5;
  s.unit = "Å";
  EXPECT_EQ(parsed<double>(s, "1e-3"), 1e-3);
  EXPECT_EQ(parsed<double>(s, "2"), 2.0);  // integer text is a float here
  EXPECT_EQ(parse_error(s, "abc"), "expected a number, got 'abc'");
  EXPECT_EQ(parse_error(s, "1.5 Å"), "expected a number, got '1.5 Å'");
  EXPECT_EQ(parse_error(s, "nan"), "expected a number, got 'nan'");
  EXPECT_EQ(parse_error(s, "inf"), "expected a number, got 'inf'");
  EXPECT_FALSE(s.check(2.5));
  EXPECT_FALSE(s.check(std::int64_t{2}));  // integers accepted for floats
  EXPECT_EQ(*s.check(2.6), "2.6 is above the maximum 2.5 Å");
  EXPECT_EQ(*s.check(-0.001), "-0.001 is below the minimum 0 Å");
  EXPECT_EQ(*s.check(std::numeric_limits<double>::quiet_NaN()), "expected a finite number");
  EXPECT_EQ(*s.check(std::string("1")), "expected a number");
}

TEST(Param, ChoiceDevicePathString) {
  auto c = spec(ParamKind::Choice);
  c.choices = {"cholesky", "eigen"};
  EXPECT_FALSE(c.check(std::string("eigen")));
  EXPECT_EQ(*c.check(std::string("lu")), "'lu' is not one of: cholesky, eigen");
  const auto d = spec(ParamKind::Device);
  for (const char* ok : {"auto", "cpu", "cuda", "cuda:0", "cuda:12"}) EXPECT_FALSE(d.check(std::string(ok))) << ok;
  for (const char* bad : {"gpu", "cuda:", "cuda:-1", "cuda:x", "CPU", ""})
    EXPECT_TRUE(d.check(std::string(bad))) << bad;
  auto p = spec(ParamKind::InputPath);
  p.required = true;
  EXPECT_EQ(*p.check(std::string()), "a path is required");
  EXPECT_FALSE(p.check(std::string("a b/c.pdb")));
  EXPECT_EQ(*spec(ParamKind::OutputPath).check(std::int64_t{3}), "expected a path");
  EXPECT_FALSE(spec(ParamKind::String).check(std::string()));
  EXPECT_EQ(parsed<std::string>(spec(ParamKind::String), " spaced "), " spaced ");
}

TEST(Param, PathExtensionsAreChecked) {
  auto out = spec(ParamKind::OutputPath);
  out.extensions = {".json", ".csv"};
  EXPECT_FALSE(out.check(std::string("report.json")));
  EXPECT_FALSE(out.check(std::string("sub.dir/REPORT.CSV")));  // case-insensitive
  EXPECT_FALSE(out.check(std::string()));                      // not required: empty is fine
  EXPECT_EQ(*out.check(std::string("/a/w.yaml")), "'w.yaml' has the extension '.yaml'; this node writes .json or .csv");
  EXPECT_EQ(*out.check(std::string("out.d/report")), "'report' has no file extension; this node writes .json or .csv");
  EXPECT_EQ(*out.check(std::string(".json")), "'.json' has no file extension; this node writes .json or .csv");
  EXPECT_EQ(*out.check(std::string("results/")),
            "'results/' names a folder (it ends in '/'); this node writes a file: .json or .csv");
  auto in = spec(ParamKind::InputPath);
  in.extensions = {".pdb", ".cif", ".tar.gz"};
  EXPECT_FALSE(in.check(std::string("x.tar.gz")));
  EXPECT_EQ(*in.check(std::string("x.gz")), "'x.gz' has the extension '.gz'; this node reads .pdb, .cif or .tar.gz");
}

TEST(Param, FormatRoundTrips) {
  const auto f = spec(ParamKind::Float);
  for (double x : {0.0, -0.1, 1.0, 1e-9, 6.02214076e23, 0.1 + 0.2, 1.0 / 3.0, -1e300}) {
    const std::string t = format_param(x);
    EXPECT_EQ(parsed<double>(f, t), x) << t;
    EXPECT_NE(t.find_first_of(".e"), std::string::npos) << t;  // reads back as a float
  }
  EXPECT_EQ(format_param(2.0), "2.0");
  EXPECT_EQ(format_param(std::int64_t{-7}), "-7");
  EXPECT_EQ(format_param(true), "true");
  EXPECT_EQ(format_param(std::string("x y")), "x y");
  EXPECT_STREQ(to_string(ParamKind::OutputPath), "output path");
}

}  // namespace
}  // namespace gemflow
