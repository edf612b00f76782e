// The sweep model (gemflow/sweep.hpp): the value syntax, the checks made before anything runs,
// the expansion into points, the points' folder names, shards, the records of a sweep folder and
// the workflow's `sweep:` section.
#include <fstream>
#include <set>

#include <gtest/gtest.h>

#include "gemflow/sweep.hpp"
#include "gemflow/types.hpp"
#include "test_support.hpp"

namespace gemflow {
namespace {

using test::TempDir;
using test::testnodes;

// test.params: count Int [1, 10], scale Float [0, 2] Å, label String, mode Choice fast|exact,
// flag Bool, input InputPath.
const ParamSpec& spec(const std::string& name) {
  const ParamSpec* ps = testnodes().find_node("test.params")->spec.param(name);
  if (!ps) throw std::runtime_error("no parameter " + name);
  return *ps;
}

std::vector<ParamValue> values(std::string_view text, const std::string& param,
                               const std::filesystem::path& base = ".") {
  auto r = parse_sweep_values(text, spec(param), base);
  if (auto* why = std::get_if<std::string>(&r)) throw std::runtime_error(*why);
  return std::get<std::vector<ParamValue>>(r);
}

std::string error_of(std::string_view text, const std::string& param, std::size_t max = kSweepPointCeiling) {
  auto r = parse_sweep_values(text, spec(param), ".", max);
  return std::holds_alternative<std::string>(r) ? std::get<std::string>(r) : std::string("(no error)");
}

std::vector<std::string> texts(const std::vector<ParamValue>& vs) {
  std::vector<std::string> t;
  for (const auto& v : vs) t.push_back(format_param(v));
  return t;
}

using S = std::vector<std::string>;

TEST(SweepValues, ListsIntegerRangesAndEscapedCommas) {
  EXPECT_EQ(texts(values("fast,exact", "mode")), (S{"fast", "exact"}));
  EXPECT_EQ(texts(values(" 2 , 4 ,6", "count")), (S{"2", "4", "6"}));
  EXPECT_EQ(texts(values("3..6", "count")), (S{"3", "4", "5", "6"}));
  EXPECT_EQ(texts(values("1..2", "scale")), (S{"1.0", "2.0"}));  // a Float parameter takes integers as floats
  EXPECT_EQ(texts(values("a\\,b,c", "label")), (S{"a,b", "c"}));
  EXPECT_EQ(texts(values("solo", "label")), (S{"solo"}));
  // ranges are only read for numbers: elsewhere "a..b" and "C:/x" are plain values
  EXPECT_EQ(texts(values("a..b", "label")), (S{"a..b"}));
  EXPECT_EQ(texts(values("C:/x", "label")), (S{"C:/x"}));
}

TEST(SweepValues, FloatRangesByStepAndCountAreExactToTwelveDigits) {
  EXPECT_EQ(texts(values("0:1:0.1", "scale")),
            (S{"0.0", "0.1", "0.2", "0.3", "0.4", "0.5", "0.6", "0.7", "0.8", "0.9", "1.0"}));
  EXPECT_EQ(texts(values("0:1#5", "scale")), (S{"0.0", "0.25", "0.5", "0.75", "1.0"}));
  EXPECT_EQ(texts(values("1:0:-0.5", "scale")), (S{"1.0", "0.5", "0.0"}));
  EXPECT_EQ(texts(values("0.5:2#1", "scale")), (S{"0.5"}));
  // a step that does not land on STOP stops before it
  EXPECT_EQ(texts(values("0:1:0.3", "scale")), (S{"0.0", "0.3", "0.6", "0.9"}));
  // an Int parameter: integer steps and counts that give integers
  EXPECT_EQ(texts(values("1:10:3", "count")), (S{"1", "4", "7", "10"}));
  EXPECT_EQ(texts(values("1:9#5", "count")), (S{"1", "3", "5", "7", "9"}));
  EXPECT_NE(error_of("1:2#3", "count").find("1.5 is not an integer"), std::string::npos) << error_of("1:2#3", "count");
}

TEST(SweepValues, EmptyRangesAreRefusedWithTheReason) {
  EXPECT_NE(error_of("5..1", "count").find("empty range 5..1"), std::string::npos) << error_of("5..1", "count");
  EXPECT_NE(error_of("1:0:0.1", "scale").find("empty range"), std::string::npos);
  EXPECT_NE(error_of("0:1#0", "scale").find("empty range"), std::string::npos);
  EXPECT_NE(error_of("0:1:0", "scale").find("STEP of 0"), std::string::npos);
  EXPECT_NE(error_of("", "scale").find("no values"), std::string::npos);
  EXPECT_NE(error_of("a,,b", "label").find("empty value"), std::string::npos);
}

TEST(SweepValues, ValuesOutsideTheLimitsAreNamedWithTheLimit) {
  // count is an Int in [1, 10]; scale a Float in [0, 2] Å
  EXPECT_EQ(error_of("0..3", "count"), "0 is below the minimum 1");
  EXPECT_EQ(error_of("8..11", "count"), "11 is above the maximum 10");
  EXPECT_EQ(error_of("0:3:1", "scale"), "3.0 is above the maximum 2 Å");
  EXPECT_NE(error_of("fast,slow", "mode").find("'slow' is not one of: fast, exact"), std::string::npos);
  EXPECT_NE(error_of("1,x", "count").find("'x'"), std::string::npos);
  EXPECT_NE(error_of("1.5..3", "scale").find("not a range of integers"), std::string::npos);
}

TEST(SweepValues, AValueTwiceIsRefused) {
  // two equal values would make two points with one folder
  EXPECT_NE(error_of("1,2,1", "count").find("value 1 is given twice"), std::string::npos);
  EXPECT_NE(error_of("0.1,0.10", "scale").find("given twice"), std::string::npos);
}

TEST(SweepValues, HugeRangesAreRefusedBeforeTheyAreMade) {
  // 10^12 values would exhaust memory: the count is checked first
  EXPECT_NE(error_of("1..1000000000000", "count", 1000).find("1000000000000 values"), std::string::npos)
      << error_of("1..1000000000000", "count", 1000);
  EXPECT_NE(error_of("0:1:1e-12", "scale", 1000).find("values; a sweep may have at most 1000"), std::string::npos);
  EXPECT_NE(error_of("0:1#1000000000000", "scale", 1000).find("at most 1000"), std::string::npos);
}

TEST(SweepValues, ValuesFromAFileOneALine) {
  TempDir dir;
  {
    std::ofstream f(dir / "seeds.txt");
    f << "# seeds\n3\n\n 5 \n7\r\n";
  }
  EXPECT_EQ(texts(values("@seeds.txt", "count", dir.path())), (S{"3", "5", "7"}));
  {
    std::ofstream f(dir / "bad.txt");
    f << "3\n12\n";
  }
  auto r = parse_sweep_values("@bad.txt", spec("count"), dir.path());
  ASSERT_TRUE(std::holds_alternative<std::string>(r));
  EXPECT_NE(std::get<std::string>(r).find("bad.txt:2: 12 is above the maximum 10"), std::string::npos)
      << std::get<std::string>(r);
  { std::ofstream f(dir / "empty.txt"); }
  r = parse_sweep_values("@empty.txt", spec("count"), dir.path());
  ASSERT_TRUE(std::holds_alternative<std::string>(r));
  EXPECT_NE(std::get<std::string>(r).find("has no values"), std::string::npos);
  r = parse_sweep_values("@missing.txt", spec("count"), dir.path());
  ASSERT_TRUE(std::holds_alternative<std::string>(r));
  EXPECT_NE(std::get<std::string>(r).find("cannot read the value file"), std::string::npos);
  // input paths listed in a file are relative to the file
  {
    std::ofstream f(dir / "files.txt");
    f << "a.txt\nsub/b.txt\n";
  }
  EXPECT_EQ(texts(values("@files.txt", "input", dir.path())),
            (S{(dir / "a.txt").string(), (dir / "sub/b.txt").string()}));
}

Workflow params_workflow() {
  auto r = parse_workflow(R"(gemflow: 1
nodes:
  p: {type: test.params}
  q: {type: test.params}
  c: {type: test.constant}
  s: {type: test.sleep, params: {seconds: 0}}
links:
  - c.value -> s.in
)",
                          "w.yaml", testnodes());
  if (!r.ok()) throw std::runtime_error(test::all(r.diagnostics));
  return std::move(*r.workflow);
}

Diagnostic arg_error(const std::string& assignment) {
  const Workflow wf = params_workflow();
  auto r = parse_sweep_arg(assignment, wf, testnodes());
  if (!std::holds_alternative<Diagnostic>(r)) throw std::runtime_error("no error for " + assignment);
  return std::get<Diagnostic>(r);
}

TEST(SweepArg, UnknownNodeOrParameterIsNamedWithTheNearest) {
  Diagnostic d = arg_error("pp.count=1,2");
  EXPECT_EQ(d.node, "pp");
  EXPECT_EQ(d.message, "no such node in the workflow");
  EXPECT_EQ(d.hint, "did you mean 'p'?");
  EXPECT_EQ(d.where.file, "--sweep pp.count=1,2");
  d = arg_error("p.cont=1,2");
  EXPECT_EQ(d.param, "cont");
  EXPECT_EQ(d.message, "'test.params' has no parameter 'cont'");
  EXPECT_EQ(d.hint, "did you mean 'count'?");
  d = arg_error("p.count=0..2");
  EXPECT_EQ(d.node, "p");
  EXPECT_EQ(d.param, "count");
  EXPECT_EQ(d.message, "0 is below the minimum 1");
  EXPECT_EQ(arg_error("p.count").message, "expected node.param=VALUES");
}

TEST(SweepExpand, CartesianLastAxisFastestAndZip) {
  const Workflow wf = params_workflow();
  std::vector<SweepAxis> axes;
  for (const char* a : {"p.count=1,2", "q.mode=fast,exact", "c.value=0.5"})
    axes.push_back(std::get<SweepAxis>(parse_sweep_arg(a, wf, testnodes())));
  auto ex = expand_sweep(axes, false, false);
  ASSERT_TRUE(std::holds_alternative<Sweep>(ex)) << std::get<Diagnostic>(ex).str();
  const Sweep& s = std::get<Sweep>(ex);
  ASSERT_EQ(s.points.size(), 4u);
  S names;
  for (const auto& p : s.points) names.push_back(p.name);
  EXPECT_EQ(names, (S{"count=1__mode=fast__value=0.5", "count=1__mode=exact__value=0.5",
                      "count=2__mode=fast__value=0.5", "count=2__mode=exact__value=0.5"}));
  EXPECT_EQ(s.points[3].index, 3u);

  // zip: the k-th values together; lengths must agree
  std::vector<SweepAxis> two{std::get<SweepAxis>(parse_sweep_arg("p.count=1,2,3", wf, testnodes())),
                             std::get<SweepAxis>(parse_sweep_arg("q.count=4,5,6", wf, testnodes()))};
  auto z = expand_sweep(two, true, false);
  ASSERT_TRUE(std::holds_alternative<Sweep>(z));
  names.clear();
  for (const auto& p : std::get<Sweep>(z).points) names.push_back(p.name);
  // both are named 'count': node.param tells them apart
  EXPECT_EQ(names, (S{"p.count=1__q.count=4", "p.count=2__q.count=5", "p.count=3__q.count=6"}));
  two[1] = std::get<SweepAxis>(parse_sweep_arg("q.count=4,5", wf, testnodes()));
  auto bad = expand_sweep(two, true, false);
  ASSERT_TRUE(std::holds_alternative<Diagnostic>(bad));
  EXPECT_NE(std::get<Diagnostic>(bad).message.find("'p.count' has 3 values and 'q.count' has 2"), std::string::npos);
}

TEST(SweepExpand, PointLimitNeedsForceAndTheCeilingHolds) {
  const Workflow wf = params_workflow();
  std::vector<SweepAxis> axes{std::get<SweepAxis>(parse_sweep_arg("c.value=1..200", wf, testnodes())),
                              std::get<SweepAxis>(parse_sweep_arg("s.seconds=0:100#60", wf, testnodes()))};
  auto ex = expand_sweep(axes, false, false);  // 12 000 points
  ASSERT_TRUE(std::holds_alternative<Diagnostic>(ex));
  EXPECT_NE(std::get<Diagnostic>(ex).message.find("12000 points, more than the limit of 10000"), std::string::npos);
  EXPECT_EQ(std::get<Diagnostic>(ex).hint, "run them anyway with --force");
  auto forced = expand_sweep(axes, false, true);
  ASSERT_TRUE(std::holds_alternative<Sweep>(forced));
  EXPECT_EQ(std::get<Sweep>(forced).points.size(), 12000u);
  // 10^4 × 10^4 = 10^8 points: refused even when forced, before any point is made
  axes = {std::get<SweepAxis>(parse_sweep_arg("c.value=1..10000", wf, testnodes())),
          std::get<SweepAxis>(parse_sweep_arg("s.seconds=0:1#10000", wf, testnodes()))};
  ex = expand_sweep(axes, false, true);
  ASSERT_TRUE(std::holds_alternative<Diagnostic>(ex));
  EXPECT_NE(std::get<Diagnostic>(ex).message.find("no sweep may have more than 10000000"), std::string::npos);
  // the same parameter twice
  axes = {std::get<SweepAxis>(parse_sweep_arg("c.value=1,2", wf, testnodes())),
          std::get<SweepAxis>(parse_sweep_arg("c.value=3", wf, testnodes()))};
  ex = expand_sweep(axes, false, false);
  ASSERT_TRUE(std::holds_alternative<Diagnostic>(ex));
  EXPECT_EQ(std::get<Diagnostic>(ex).message, "'c.value' is swept twice");
}

TEST(SweepNames, StableSafeAndDistinct) {
  SweepAxis label{"p", "label", {}, {}};
  SweepAxis input{"p", "input", {}, {}};
  const auto name = [&](const SweepAxis& a, std::string v) {
    return sweep_point_name({a}, {ParamValue{std::move(v)}});
  };
  EXPECT_EQ(name(label, "plain-1.5"), "label=plain-1.5");
  // characters outside [A-Za-z0-9._+=-] are replaced, and the hash keeps values apart
  const std::string a = name(label, "a b"), b = name(label, "a_b"), c = name(label, "a/b");
  EXPECT_TRUE(a.starts_with("label=a_b~")) << a;
  EXPECT_EQ(b, "label=a_b");
  EXPECT_NE(a, b);
  EXPECT_NE(a, c);
  for (const auto& n : {a, c})
    EXPECT_EQ(n.find_first_not_of("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789._+=-~"),
              std::string::npos)
        << n;
  // a path: its file name and a hash of the whole path (two folders may hold one name)
  const std::string p1 = name(input, "/data/x/mesh.stl"), p2 = name(input, "/data/y/mesh.stl");
  EXPECT_TRUE(p1.starts_with("input=mesh.stl~")) << p1;
  EXPECT_NE(p1, p2);
  // no hidden folders, no "." or ".."
  EXPECT_TRUE(name(label, "..").starts_with("label=_..~"));
  // long values are cut, with the hash; the same value gives the same name every time
  const std::string long1 = name(label, std::string(300, 'x')), long2 = name(label, std::string(301, 'x'));
  EXPECT_LE(long1.size(), 60u);
  EXPECT_NE(long1, long2);
  EXPECT_EQ(long1, name(label, std::string(300, 'x')));
  // many long axes: the whole name stays under the file name limit
  std::vector<SweepAxis> many;
  std::vector<ParamValue> vs;
  for (int k = 0; k < 10; ++k) {
    many.push_back({"n" + std::to_string(k), "label", {}, {}});
    vs.emplace_back(std::string(50, 'a' + k));
  }
  EXPECT_LE(sweep_point_name(many, vs).size(), 200u);
  // numbers: their canonical text
  SweepAxis scale{"p", "scale", {}, {}};
  EXPECT_EQ(sweep_point_name({scale}, {ParamValue{0.30000000000000004}}), "scale=0.30000000000000004");
  EXPECT_EQ(sweep_point_name({scale}, {ParamValue{-1.5}}), "scale=-1.5");
}

TEST(SweepShard, ParsedFromTheCommandLine) {
  std::string why;
  auto s = parse_shard("2/8", &why);
  ASSERT_TRUE(s);
  EXPECT_EQ(s->index, 2u);
  EXPECT_EQ(s->count, 8u);
  EXPECT_TRUE(s->contains(10));
  EXPECT_FALSE(s->contains(11));
  EXPECT_FALSE(parse_shard("8/8", &why));
  EXPECT_NE(why.find("numbered from 0"), std::string::npos);
  EXPECT_FALSE(parse_shard("1/0", &why));
  EXPECT_FALSE(parse_shard("x", &why));
  EXPECT_FALSE(parse_shard("-1/4", &why));
}

TEST(SweepShard, FromSlurmAndMpiEnvironments) {
  std::map<std::string, std::string> env;
  const auto get = [&](const char* n) -> const char* {
    auto it = env.find(n);
    return it == env.end() ? nullptr : it->second.c_str();
  };
  std::string why;
  EXPECT_FALSE(shard_from_environment(&why, get));
  EXPECT_TRUE(why.empty());
  env = {{"SLURM_ARRAY_TASK_ID", "7"}, {"SLURM_ARRAY_TASK_COUNT", "4"}, {"SLURM_ARRAY_TASK_MIN", "5"}};
  auto s = shard_from_environment(&why, get);
  ASSERT_TRUE(s) << why;
  EXPECT_EQ(s->str(), "2/4");
  EXPECT_EQ(s->source, "SLURM_ARRAY_TASK_ID");
  env["SLURM_ARRAY_TASK_ID"] = "9";  // beyond the array: a non-contiguous --array
  EXPECT_FALSE(shard_from_environment(&why, get));
  EXPECT_NE(why.find("--array=0-3"), std::string::npos) << why;
  env = {{"SLURM_ARRAY_TASK_ID", "3"}};
  EXPECT_FALSE(shard_from_environment(&why, get));
  EXPECT_NE(why.find("SLURM_ARRAY_TASK_COUNT"), std::string::npos);
  env = {{"OMPI_COMM_WORLD_RANK", "1"}, {"OMPI_COMM_WORLD_SIZE", "2"}, {"PMI_RANK", "0"}, {"PMI_SIZE", "3"}};
  s = shard_from_environment(&why, get);
  ASSERT_TRUE(s);
  EXPECT_EQ(s->str(), "1/2");
  env = {{"PMI_RANK", "2"}, {"PMI_SIZE", "3"}};
  s = shard_from_environment(&why, get);
  ASSERT_TRUE(s);
  EXPECT_EQ(s->str(), "2/3");
  EXPECT_EQ(s->source, "PMI_RANK");
  env = {{"PMI_RANK", "3"}, {"PMI_SIZE", "3"}};
  EXPECT_FALSE(shard_from_environment(&why, get));
  EXPECT_NE(why.find("make no shard"), std::string::npos);
}

TEST(SweepShard, ShardsPartitionThePoints) {
  std::set<std::size_t> seen;
  for (std::size_t i = 0; i < 3; ++i) {
    const Shard s{i, 3, "--shard"};
    for (std::size_t p = 0; p < 100; ++p)
      if (s.contains(p)) {
        EXPECT_TRUE(seen.insert(p).second) << p;
      }
  }
  EXPECT_EQ(seen.size(), 100u);
}

TEST(SweepRecords, PointRecordAndTablesRoundTrip) {
  PointRecord r;
  r.name = "seed=3";
  r.index = 2;
  r.values = {{"dg.seed", "3"}};
  r.state = PointState::Failed;
  r.seconds = 1.25;
  r.error = "node 'dg': \"bad\", really";
  r.numbers = {{"rmsd", 1.5}, {"n", 3}};
  r.finished = "2026-01-01T00:00:00Z";
  const auto back = parse_point_record(point_record_json(r));
  ASSERT_TRUE(back);
  EXPECT_EQ(back->name, r.name);
  EXPECT_EQ(back->state, PointState::Failed);
  EXPECT_EQ(back->values, r.values);
  EXPECT_EQ(back->numbers, r.numbers);
  EXPECT_EQ(back->error, r.error);
  EXPECT_FALSE(parse_point_record("{\"point\": \"x\", \"state\": \"weird\"}"));
  EXPECT_FALSE(parse_point_record("not json"));

  PointRecord d = r;
  d.name = "seed=4";
  d.values = {{"dg.seed", "4"}};
  d.state = PointState::Done;
  d.error.clear();
  d.numbers = {{"rmsd", 0.5}, {"extra", 2}};
  const auto rows = parse_sweep_table(sweep_table_json({"dg.seed"}, {r, d}));
  ASSERT_TRUE(rows);
  ASSERT_EQ(rows->size(), 2u);
  EXPECT_EQ((*rows)[1].numbers, d.numbers);
  const std::string csv = sweep_table_csv({"dg.seed"}, {r, d});
  EXPECT_EQ(csv.substr(0, csv.find('\n')), "point,state,dg.seed,seconds,extra,n,rmsd,error");
  EXPECT_NE(csv.find("seed=3,failed,3,1.250,,3,1.5,\"node 'dg': \"\"bad\"\", really\"\n"), std::string::npos) << csv;
  EXPECT_NE(csv.find("seed=4,done,4,1.250,2,,0.5,\n"), std::string::npos) << csv;
}

TEST(SweepRecords, ReportNumbersFromTablesScalarsAndReportFiles) {
  TempDir dir;
  {
    std::ofstream f(dir / "report.json");
    f << R"({"rmsd": 1.25, "violations": {"count": 3, "worst": null}, "name": "x", "list": [1, 2]})";
  }
  {
    std::ofstream f(dir / "other.json");
    f << R"({"ignored": 1})";
  }
  Table metrics;
  metrics.columns = {"metric", "value"};
  metrics.rows = {
      {std::string("energy"), -2.5}, {std::string("label"), std::string("x")}, {std::string("iters"), std::int64_t{7}}};
  Table row;
  row.columns = {"residual", "algorithm"};
  row.rows = {{1e-16, std::string("lapack")}};
  Table not_report = row;
  std::map<std::string, std::map<std::string, Value>> outs{
      {"refine", {{"report", Value::make(metrics)}}},
      {"solve", {{"report", Value::make(row)}, {"stats", Value::make(not_report)}}},
      {"sum", {{"value", Value::make(MatrixF64(1, 1, 4.0))}, {"big", Value::make(MatrixF64(2, 2, 1.0))}}}};
  const auto nums = sweep_report_numbers(outs, {dir / "report.json", dir / "other.json"});
  const std::map<std::string, double> want{{"refine.energy", -2.5}, {"refine.iters", 7}, {"solve.residual", 1e-16},
                                           {"sum.value", 4.0},      {"rmsd", 1.25},      {"violations.count", 3}};
  EXPECT_EQ(nums, want);
  // io.write_table's {"columns", "rows"} form: the first row
  {
    std::ofstream f(dir / "report2.json");
    f << R"({"columns": ["a", "b"], "rows": [{"a": 1.5, "b": "x"}]})";
  }
  const auto two = sweep_report_numbers({}, {dir / "report.json", dir / "report2.json"});
  EXPECT_EQ(two.at("report2.a"), 1.5);
  EXPECT_EQ(two.at("report.rmsd"), 1.25);  // several report files: named by file

  // a user's report: spd_solve's report.json has "seconds", which made a second `seconds` column
  // in sweep.csv and hid the point's own; names of the table's columns take the file's name
  {
    std::ofstream f(dir / "report.json");
    f << R"({"seconds": 0.0001, "point": 2, "state": 3, "error": 4, "relative_residual": 1e-17})";
  }
  const auto clash = sweep_report_numbers({}, {dir / "report.json"});
  const std::map<std::string, double> renamed{{"report.seconds", 0.0001}, {"report.point", 2}, {"report.state", 3},
                                              {"report.error", 4},        {"relative_residual", 1e-17}};
  EXPECT_EQ(clash, renamed);
  PointRecord r;
  r.name = "p0";
  r.numbers = clash;
  const std::string csv = sweep_table_csv({}, {r});
  const std::string header = csv.substr(0, csv.find('\n'));
  EXPECT_EQ(header, "point,state,seconds,relative_residual,report.error,report.point,report.seconds,report.state,error");
}

TEST(SweepPlan, RoundTrip) {
  const Workflow wf = params_workflow();
  std::vector<SweepAxis> axes{std::get<SweepAxis>(parse_sweep_arg("p.count=1,2", wf, testnodes()))};
  const Sweep s = std::get<Sweep>(expand_sweep(axes, false, false));
  const auto plan = parse_sweep_plan(sweep_plan_json("/x/w.yaml", s));
  ASSERT_TRUE(plan);
  EXPECT_EQ(plan->workflow, "/x/w.yaml");
  EXPECT_EQ(plan->axes, (S{"p.count"}));
  ASSERT_EQ(plan->points.size(), 2u);
  EXPECT_EQ(plan->points[1].first, "count=2");
  EXPECT_EQ(plan->points[1].second, (std::vector<std::pair<std::string, std::string>>{{"p.count", "2"}}));
}

TEST(SweepSection, ReadCheckedAndWrittenBack) {
  const std::string text = R"(gemflow: 1
nodes:
  p: {type: test.params}
  c: {type: test.constant}
sweep:
  p.count: 1..3
  c.value: [0.5, 1.5, 2.5]
  zip: true
)";
  auto r = parse_workflow(text, "w.yaml", testnodes());
  ASSERT_TRUE(r.ok()) << test::all(r.diagnostics);
  const Workflow& wf = *r.workflow;
  ASSERT_EQ(wf.sweep.entries.size(), 2u);
  EXPECT_TRUE(wf.sweep.zip);
  EXPECT_EQ(wf.sweep.entries[0].where.line, 6);
  std::vector<SweepAxis> axes;
  EXPECT_TRUE(sweep_axes_of(wf, testnodes(), axes).empty());
  ASSERT_EQ(axes.size(), 2u);
  EXPECT_EQ(texts(axes[1].values), (S{"0.5", "1.5", "2.5"}));
  // canonical text keeps the section, and reads back the same
  const std::string yaml = to_yaml(wf);
  auto again = parse_workflow(yaml, "w.yaml", testnodes());
  ASSERT_TRUE(again.ok()) << yaml << test::all(again.diagnostics);
  EXPECT_EQ(to_yaml(*again.workflow), yaml);
  EXPECT_NE(yaml.find("sweep:\n  p.count: 1..3\n  c.value: [0.5, 1.5, 2.5]\n  zip: true\n"), std::string::npos) << yaml;

  // errors at the entry's line, naming node and parameter
  auto bad = parse_workflow("gemflow: 1\nnodes:\n  p: {type: test.params}\nsweep:\n  p.count: 0..2\n  p.cont: 1\n",
                            "w.yaml", testnodes());
  ASSERT_TRUE(bad.ok()) << test::all(bad.diagnostics);  // the loader checks only the form
  axes.clear();
  const auto ds = sweep_axes_of(*bad.workflow, testnodes(), axes);
  ASSERT_EQ(ds.size(), 2u) << test::all(ds);
  EXPECT_EQ(ds[0].str(), "w.yaml:5:3: error: node 'p', parameter 'count': 0 is below the minimum 1");
  EXPECT_EQ(ds[1].where.line, 6);
  EXPECT_EQ(ds[1].hint, "did you mean 'count'?");
  auto form = parse_workflow("gemflow: 1\nnodes:\n  p: {type: test.params}\nsweep:\n  count: 1\n  zip: maybe\n",
                             "w.yaml", testnodes());
  EXPECT_FALSE(form.ok());
  EXPECT_NE(test::all(form.diagnostics).find("w.yaml:5:3: error: sweep key 'count' is not node.param"),
            std::string::npos)
      << test::all(form.diagnostics);
  EXPECT_NE(test::all(form.diagnostics).find("'zip' must be true or false"), std::string::npos);
}

TEST(SweepPoint, AppliedToACopyAndSweptNodesFollowTheLinks) {
  Workflow wf = params_workflow();
  std::vector<SweepAxis> axes{std::get<SweepAxis>(parse_sweep_arg("c.value=1,2", wf, testnodes()))};
  const Sweep s = std::get<Sweep>(expand_sweep(axes, false, false));
  Workflow pw = wf;
  apply_sweep_point(pw, s, s.points[1]);
  EXPECT_EQ(format_param(*pw.find("c")->param("value")), "2.0");
  EXPECT_EQ(wf.find("c")->param("value"), nullptr);
  EXPECT_NE(sweep_workflow_hash(pw), sweep_workflow_hash(wf));
  EXPECT_NE(sweep_workflow_hash(pw, "device=cpu"), sweep_workflow_hash(pw, "device=cuda"));
  // c feeds s: both depend on the swept value; p and q do not
  EXPECT_EQ(swept_nodes(wf, s.axes), (S{"c", "s"}));
}

}  // namespace
}  // namespace gemflow

namespace gemflow {
namespace {

// Saving keeps unedited sections as written; an edited sweep: section must be written anew, not
// left as it was loaded.
TEST(SweepSection, AnEditedSectionIsSaved) {
  TempDir dir;
  const auto file = dir / "w.yaml";
  {
    std::ofstream f(file);
    f << "gemflow: 1\nnodes:\n  p: {type: test.params}  # a comment\nsweep:\n  p.count: 1..3\n";
  }
  auto r = load_workflow(file, testnodes());
  ASSERT_TRUE(r.ok()) << test::all(r.diagnostics);
  Workflow wf = *r.workflow;
  save_workflow(wf, file);  // unchanged: the text stays, comment included
  std::ifstream in(file);
  const std::string same{std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
  EXPECT_NE(same.find("p.count: 1..3"), std::string::npos) << same;
  wf.sweep.entries[0].text = "4..6";
  wf.sweep.zip = true;
  save_workflow(wf, file);
  auto back = load_workflow(file, testnodes());
  ASSERT_TRUE(back.ok()) << test::all(back.diagnostics);
  ASSERT_EQ(back.workflow->sweep.entries.size(), 1u);
  EXPECT_EQ(back.workflow->sweep.entries[0].text, "4..6");
  EXPECT_TRUE(back.workflow->sweep.zip);
}

}  // namespace
}  // namespace gemflow
