// Workflow YAML: diagnostics (location, node, parameter, hint), canonical round trip,
// overrides, graph checks.
#include <algorithm>
#include <fstream>

#include <fmt/format.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "gemflow/workflow.hpp"
#include "gemflow/workflow_limits.hpp"
#include "test_support.hpp"

namespace gemflow {
namespace {

using test::all;
using test::testnodes;
using ::testing::HasSubstr;

LoadResult parse(const std::string& text) { return parse_workflow(text, "w.yaml", testnodes()); }

// The one diagnostic of a result (fails the test when there is not exactly one error).
Diagnostic only_error(const LoadResult& r) {
  std::vector<Diagnostic> errors;
  for (const auto& d : r.diagnostics)
    if (d.severity == Diagnostic::Severity::Error) errors.push_back(d);
  EXPECT_EQ(errors.size(), 1u) << all(r.diagnostics);
  return errors.empty() ? Diagnostic{} : errors.front();
}

// QA: a node without a type got two errors on one line, and a YAML merge key was reported as a
// parameter named '<<'.
TEST(Workflow, MissingTypeIsOneErrorAndMergeKeysAreNamed) {
  const auto d = only_error(parse("gemflow: 1\nnodes:\n  a: {params: {value: 2}}\n"));
  EXPECT_EQ(d.message, "no 'type:' given");
  EXPECT_EQ(d.where.str(), "w.yaml:3:3");
  const auto m =
      only_error(parse("gemflow: 1\nnodes:\n  a: {type: test.constant, params: &p {value: 2}}\n"
                       "  b: {type: test.constant, params: {<<: *p}}\n"));
  EXPECT_THAT(m.message, HasSubstr("YAML merge keys ('<<: *anchor') are not supported"));
  EXPECT_EQ(m.node, "b");
}

TEST(Workflow, LoadsAGoodFile) {
  const auto r = parse(R"(gemflow: 1
name: sum
description: adds two numbers
nodes:
  a: {type: test.constant, params: {value: 2}}
  b: {type: test.constant, params: {value: 0.5}}
  sum: {type: test.add}
links:
  - a.value -> sum.a
  - b.value->sum.b
editor: {a: {pos: [10, -20.5]}}
)");
  ASSERT_TRUE(r.ok()) << all(r.diagnostics);
  EXPECT_TRUE(r.diagnostics.empty()) << all(r.diagnostics);
  const Workflow& wf = *r.workflow;
  EXPECT_EQ(wf.name, "sum");
  EXPECT_EQ(wf.description, "adds two numbers");
  ASSERT_EQ(wf.nodes.size(), 3u);
  EXPECT_EQ(wf.nodes[0].id, "a");
  EXPECT_EQ(wf.nodes[0].type_version, 1);  // filled from the registry
  ASSERT_NE(wf.nodes[0].param("value"), nullptr);
  EXPECT_EQ(std::get<double>(*wf.nodes[0].param("value")), 2.0);  // integer literal → float
  EXPECT_EQ(wf.nodes[0].param_where.at("value").str(), "w.yaml:5:44");
  EXPECT_EQ(wf.nodes[0].where.str(), "w.yaml:5:3");
  ASSERT_EQ(wf.links.size(), 2u);
  EXPECT_EQ(wf.links[1].str(), "b.value -> sum.b");
  EXPECT_EQ(wf.links[1].where.str(), "w.yaml:10:5");
  ASSERT_TRUE(wf.nodes[0].pos.has_value());
  EXPECT_EQ((*wf.nodes[0].pos)[1], -20.5);
  EXPECT_FALSE(wf.nodes[1].pos.has_value());
  EXPECT_EQ(topological_order(wf), (std::vector<std::string>{"a", "b", "sum"}));
}

TEST(Workflow, TypoInNodeTypeSuggestsTheNearest) {
  const auto d = only_error(parse("gemflow: 1\nnodes:\n  c: {type: test.constnt}\n"));
  EXPECT_EQ(d.str(),
            "w.yaml:3:13: error: node 'c': unknown node type 'test.constnt' "
            "(did you mean 'test.constant'?)");
  EXPECT_EQ(d.where.line, 3);
  EXPECT_EQ(d.where.column, 13);
}

// QA: `mode: ~` said only "'' is not one of: ..."
TEST(Workflow, NullValueSaysSo) {
  const auto d = only_error(parse("gemflow: 1\nnodes:\n  p: {type: test.params, params: {mode: ~}}\n"));
  EXPECT_EQ(d.param, "mode");
  EXPECT_THAT(d.str(), HasSubstr("parameter 'mode': no value (empty, ~ or null): '' is not one of: fast, exact"));
}

TEST(Workflow, UnknownParameterSuggestsTheNearest) {
  const auto d = only_error(parse("gemflow: 1\nnodes:\n  c: {type: test.constant, params: {valeu: 3}}\n"));
  EXPECT_EQ(d.node, "c");
  EXPECT_EQ(d.param, "valeu");
  EXPECT_EQ(d.hint, "did you mean 'value'?");
  EXPECT_EQ(d.str(),
            "w.yaml:3:37: error: node 'c', parameter 'valeu': 'test.constant' has no parameter "
            "'valeu' (did you mean 'value'?)");
}

TEST(Workflow, ValueOutOfRangeNamesLimitAndUnit) {
  const auto r = parse(
      "gemflow: 1\nnodes:\n  p:\n    type: test.params\n    params:\n      scale: 2.5\n"
      "      count: 0\n      mode: exakt\n      flag: maybe\n      device: gpu\n");
  ASSERT_EQ(r.diagnostics.size(), 5u) << all(r.diagnostics);
  // Sorted by position.
  EXPECT_EQ(r.diagnostics[0].str(), "w.yaml:6:14: error: node 'p', parameter 'scale': 2.5 is above the maximum 2 Å");
  EXPECT_EQ(r.diagnostics[1].str(), "w.yaml:7:14: error: node 'p', parameter 'count': 0 is below the minimum 1");
  EXPECT_EQ(r.diagnostics[2].str(),
            "w.yaml:8:13: error: node 'p', parameter 'mode': 'exakt' is not one of: "
            "fast, exact (did you mean 'exact'?)");
  EXPECT_EQ(r.diagnostics[3].str(),
            "w.yaml:9:13: error: node 'p', parameter 'flag': expected true or false "
            "(or yes/no, on/off), got 'maybe'");
  EXPECT_THAT(r.diagnostics[4].str(), HasSubstr("w.yaml:10:15: error: node 'p', parameter 'device': 'gpu' is not "
                                                "a device"));
  // 'gpu' is nearest to 'cpu' by spelling, but means CUDA (QA finding): the hint says so.
  EXPECT_THAT(r.diagnostics[4].str(), HasSubstr("(a GPU is 'cuda' or 'cuda:N')"));
  EXPECT_THAT(r.diagnostics[4].str(), Not(HasSubstr("did you mean 'cpu'")));
  EXPECT_FALSE(r.ok());
  EXPECT_TRUE(r.workflow.has_value());
}

TEST(Workflow, IntegerParameterRejectsAFraction) {
  const auto d = only_error(parse("gemflow: 1\nnodes:\n  p: {type: test.params, params: {count: 2.5}}\n"));
  EXPECT_EQ(d.message, "expected an integer, got '2.5'");
}

TEST(Workflow, MissingLinkEndpoints) {
  const auto r = parse(R"(gemflow: 1
nodes:
  a: {type: test.constant}
  s: {type: test.add}
links:
  - a.value -> s.a
  - a.valu -> s.b
  - nosuch.value -> s.b
)");
  // The bad links name s.b: "not connected" would be a second error about the same mistake.
  ASSERT_EQ(r.diagnostics.size(), 2u) << all(r.diagnostics);
  EXPECT_EQ(r.diagnostics[0].str(),
            "w.yaml:7:5: error: node 'a', port 'valu': link 'a.valu -> s.b': 'test.constant' has no output port "
            "'valu' (outputs: value) (did you mean 'value'?)");
  EXPECT_EQ(r.diagnostics[1].str(), "w.yaml:8:5: error: link 'nosuch.value -> s.b': no node 'nosuch'");
}

TEST(Workflow, UnknownNodeTypeGivesOneErrorNotACascade) {
  // s.b is fed by a node of unknown type, s.a by a link whose output port cannot be checked.
  const auto r = parse(R"(gemflow: 1
nodes:
  a: {type: test.constnt}
  s: {type: test.add}
links:
  - a.value -> s.a
  - a.anything -> s.b
)");
  const auto d = only_error(r);
  EXPECT_EQ(d.str(),
            "w.yaml:3:13: error: node 'a': unknown node type 'test.constnt' (did you mean "
            "'test.constant'?)");
}

TEST(Workflow, MisspelledLinksKeyIsReportedAloneAndFirst) {
  const auto r = parse(R"(gemflow: 1
nodes:
  a: {type: test.constant}
  s1: {type: test.add}
  s2: {type: test.add}
  w: {type: test.write_text, params: {path: x.txt, bogus: 1}}
linkz:
  - a.value -> s1.a
)");
  ASSERT_EQ(r.diagnostics.size(), 2u) << all(r.diagnostics);
  EXPECT_EQ(r.diagnostics[0].str(),
            "w.yaml:7:1: error: unknown top-level key 'linkz' (expected: gemflow, name, description, nodes, links, "
            "inputs, outputs, sweep, editor, annotations); without 'links:' no input is connected (those errors are "
            "not listed) "
            "(did you mean 'links'?)");
  EXPECT_THAT(r.diagnostics[1].str(), HasSubstr("w.yaml:6:52: error: node 'w', parameter 'bogus'"));
}

TEST(Workflow, UnconnectedInputsAreCapped) {
  std::string text = "gemflow: 1\nnodes:\n";
  for (int i = 0; i < 10; ++i) text += "  s" + std::to_string(i) + ": {type: test.add}\n";
  const auto r = parse(text);
  // 20 unconnected inputs: 8 listed, then one line for the other 12.
  ASSERT_EQ(r.diagnostics.size(), 9u) << all(r.diagnostics);
  EXPECT_EQ(r.diagnostics[0].str(),
            "w.yaml:3:3: error: node 's0', port 'a': required input (Matrix<f64>) is not "
            "connected");
  EXPECT_EQ(r.diagnostics[8].str(),
            "w.yaml:6:3: error: 12 more required inputs are not connected (is 'links:' "
            "complete?)");
}

TEST(Workflow, BinaryFileIsNotText) {
  using namespace std::string_literals;
  const auto nul = only_error(parse("gemflow: 1\nna\0me: x\n"s));
  EXPECT_EQ(nul.str(), "w.yaml:2:3: error: not a text file (byte 0x00 at offset 13)");
  const auto latin1 = only_error(parse("gemflow: 1\nname: caf\xe9\n"));
  EXPECT_EQ(latin1.str(), "w.yaml:2:10: error: not a text file (byte 0xe9 at offset 20: not UTF-8)");
  // Valid UTF-8 is text.
  EXPECT_TRUE(parse("gemflow: 1\nname: \"2 Å\"\nnodes: {a: {type: test.constant}}\n").ok());
}

TEST(Workflow, EchoedTextIsEscaped) {
  EXPECT_EQ(printable("a\x01"
                      "b\tc\x97 Å\x7f"),
            "a\\x01b\\x09c\\x97 Å\\x7f");
  // yaml-cpp quotes the offending character in its message: it must not reach the terminal raw.
  const auto d = only_error(parse("gemflow: 1\nname: \"a\\\x01\"\nnodes: {}\n"));
  const std::string s = d.str();
  EXPECT_TRUE(std::all_of(s.begin(), s.end(), [](char c) { return static_cast<unsigned char>(c) >= 0x20; })) << s;
  EXPECT_THAT(s, HasSubstr("\\x01"));
}

TEST(Workflow, EmptyNodesIsAWarning) {
  const auto r = parse("gemflow: 1\nnodes: {}\n");
  EXPECT_TRUE(r.ok());
  ASSERT_EQ(r.diagnostics.size(), 1u) << all(r.diagnostics);
  EXPECT_EQ(r.diagnostics[0].str(), "w.yaml: warning: the workflow has no nodes");
}

TEST(Workflow, UnclosedBraceIsLocatedAtTheBrace) {
  const auto d = only_error(parse("gemflow: 1\nnodes:\n  a: {type: test.constant\n  b: {type: test.constant}\n"));
  EXPECT_EQ(d.where.line, 3);
  EXPECT_EQ(d.where.column, 6);
  EXPECT_THAT(d.message, HasSubstr("YAML syntax error: this '{' is never closed"));
}

TEST(Workflow, NodeIdRuleIsStatedAsEnforced) {
  const auto d = only_error(parse("gemflow: 1\nnodes:\n  1a: {type: test.constant}\n"));
  EXPECT_EQ(d.message,
            "invalid node id: use letters, digits, '_' and '-', starting with a letter or '_', at most 128 characters");
  EXPECT_TRUE(parse("gemflow: 1\nnodes:\n  _a: {type: test.constant}\n").ok());
  // Ids go into messages: a link from a node of a 10⁶-character id, then 10⁴ more links into the
  // same input, quoted the long link in each of their diagnostics (10 GB of text). The id is
  // refused, and named by its first 128 characters.
  const std::string id(128, 'a');
  EXPECT_TRUE(parse("gemflow: 1\nnodes:\n  " + id + ": {type: test.constant}\n").ok());
  const auto too_long = only_error(parse("gemflow: 1\nnodes:\n  " + id + "b: {type: test.constant}\n"));
  EXPECT_THAT(too_long.message, HasSubstr("at most 128 characters"));
  EXPECT_EQ(too_long.node, id + "...");
  const auto port = only_error(parse("gemflow: 1\nnodes:\n  a: {type: test.constant}\ninputs:\n  " +
                                     std::string(200, 'p') + ": a.value\n"));
  EXPECT_THAT(port.message, HasSubstr("invalid input name '" + std::string(128, 'p') + "...'"));
}

TEST(Workflow, LinkTypeMismatchAndDoubleFeed) {
  const auto r = parse(R"(gemflow: 1
nodes:
  r: {type: test.read_text, params: {path: x.txt}}
  a: {type: test.constant}
  s: {type: test.add}
links:
  - r.lines -> s.a
  - a.value -> s.b
  - a.value -> s.b
)");
  ASSERT_EQ(r.diagnostics.size(), 2u) << all(r.diagnostics);
  EXPECT_EQ(r.diagnostics[0].str(),
            "w.yaml:7:5: error: node 's', port 'a': link 'r.lines -> s.a': output type "
            "Table does not fit input type Matrix<f64>");
  EXPECT_EQ(r.diagnostics[1].str(),
            "w.yaml:9:5: error: node 's', port 'b': input already fed by 'a.value -> s.b' "
            "(line 8); an input takes one link");
}

TEST(Workflow, RequiredParameterMissing) {
  const auto d = only_error(parse("gemflow: 1\nnodes:\n  r: {type: test.read_text}\n"));
  EXPECT_EQ(d.param, "path");
  EXPECT_THAT(d.str(), HasSubstr("w.yaml:3:3: error: node 'r', parameter 'path': required input path parameter "
                                 "is not set"));
}

TEST(Workflow, CycleIsNamedNodeByNode) {
  const auto r = parse(R"(gemflow: 1
nodes:
  start: {type: test.constant}
  s1: {type: test.sleep}
  s2: {type: test.sleep}
  s3: {type: test.sleep}
  s4: {type: test.add}
links:
  - s2.out -> s3.in
  - s3.out -> s1.in
  - s1.out -> s2.in
  - start.value -> s4.a
  - s3.out -> s4.b
)");
  const auto d = only_error(r);
  EXPECT_EQ(d.message, "the workflow has a cycle: s1 -> s2 -> s3 -> s1");
  // Located at the link that closes it: the last of the cycle's links in the file.
  EXPECT_EQ(d.str(),
            "w.yaml:11:5: error: the workflow has a cycle: s1 -> s2 -> s3 -> s1 (the link "
            "'s1.out -> s2.in' closes it)");
  EXPECT_THROW((void)topological_order(*r.workflow), Error);
  const auto self = only_error(parse("gemflow: 1\nnodes:\n  s: {type: test.sleep}\nlinks: [s.out -> s.in]\n"));
  EXPECT_EQ(self.message, "the workflow has a cycle: s -> s");
}

TEST(Workflow, YamlSyntaxErrorHasParserPosition) {
  const auto r = parse("gemflow: 1\nnodes:\n  a: {type: test.sleep, params: {seconds: [1, 2}}\n");
  EXPECT_FALSE(r.workflow.has_value());
  const auto d = only_error(r);
  EXPECT_EQ(d.str(), "w.yaml:3:48: error: YAML syntax error: illegal flow end");
}

TEST(Workflow, NewerFormatIsRefusedClearly) {
  const auto r = parse("gemflow: 2\nnodes:\n  a: {type: test.future_node, params: {x: 1}}\n");
  EXPECT_FALSE(r.workflow.has_value());
  const auto d = only_error(r);
  EXPECT_EQ(d.str(), "w.yaml:1:10: error: written by a newer Gemflow (format 2); this one reads format 1");
}

TEST(Workflow, MissingFormatVersion) {
  const auto d = only_error(parse("nodes:\n  a: {type: test.constant}\n"));
  EXPECT_EQ(d.str(), "w.yaml:1:1: error: missing format version: start the file with 'gemflow: 1'");
}

TEST(Workflow, UnknownKeysAreErrorsWithHints) {
  const auto r = parse("gemflow: 1\nnodes:\n  a: {type: test.constant, parms: {value: 1}}\nlink: []\n");
  ASSERT_EQ(r.diagnostics.size(), 2u) << all(r.diagnostics);
  // Structural errors first: they explain the others.
  EXPECT_EQ(r.diagnostics[0].str(),
            "w.yaml:4:1: error: unknown top-level key 'link' (expected: gemflow, name, "
            "description, nodes, links, inputs, outputs, sweep, editor, annotations); without 'links:' no "
            "input is connected (those errors are not listed) (did you mean 'links'?)");
  EXPECT_EQ(r.diagnostics[1].str(),
            "w.yaml:3:28: error: node 'a': unknown node key 'parms' (expected: type, "
            "version, params, bypass) (did you mean 'params'?)");
  const auto e = only_error(parse("gemflow: 1\nnodes:\n  a: {type: test.constant}\neditor: {a: {pso: [0, 0]}}\n"));
  EXPECT_EQ(e.hint, "did you mean 'pos'?");
}

TEST(Workflow, DuplicateKeysAreErrors) {
  const auto d = only_error(parse("gemflow: 1\nnodes:\n  a: {type: test.constant}\n  a: {type: test.sleep}\n"));
  EXPECT_EQ(d.str(), "w.yaml:4:3: error: node id 'a' given twice");
}

TEST(Workflow, NewerNodeVersionIsAnError) {
  const auto d = only_error(parse("gemflow: 1\nnodes:\n  a: {type: test.constant, version: 7}\n"));
  EXPECT_THAT(d.message, HasSubstr("saved with version 7 of 'test.constant', but the installed plugin has version 1"));
  const auto r = parse("gemflow: 1\nnodes:\n  p: {type: test.params, version: 1}\n");
  ASSERT_EQ(r.diagnostics.size(), 1u);
  EXPECT_EQ(r.diagnostics[0].severity, Diagnostic::Severity::Warning);
  EXPECT_TRUE(r.ok());
}

TEST(Workflow, IoErrorBecomesADiagnostic) {
  const auto r = load_workflow("/nonexistent/w.yaml", testnodes());
  EXPECT_FALSE(r.ok());
  ASSERT_EQ(r.diagnostics.size(), 1u);
  EXPECT_EQ(r.diagnostics[0].str(), "/nonexistent/w.yaml: error: no such file");
}

constexpr const char* kEveryKind = R"(gemflow: 1
name: every-kind
description: "Every parameter kind: quoted, with a line\nbreak"
nodes:
  p: {type: test.params, version: 2, params: {flag: true, count: 7, scale: 1e-09, label: "Å and \"quotes\", commas: too", mode: exact, input: ../data/my file.txt, output: sub/out.txt, device: "cuda:0"}}
  q: {type: test.params, version: 2, params: {label: "true", scale: 2.0, input: "", count: -0}}
  c: {type: test.constant, version: 1, params: {value: -0.1}}
  s: {type: test.sleep, version: 1}
links:
  - c.value -> s.in
editor:
  p: {pos: [0, 0]}
  s: {pos: [12.5, -3]}
)";

TEST(Workflow, RoundTripIsStableForEveryParameterKind) {
  const auto r1 = parse(kEveryKind);
  ASSERT_TRUE(r1.workflow) << all(r1.diagnostics);
  // q.input is a required path set to "": an error, but the model is complete.
  const std::string t1 = to_yaml(*r1.workflow);
  const auto r2 = parse(t1);
  ASSERT_TRUE(r2.workflow) << all(r2.diagnostics) << t1;
  const std::string t2 = to_yaml(*r2.workflow);
  EXPECT_EQ(t1, t2);
  // The canonical text of this file is the file itself but for "count: -0".
  std::string expected = kEveryKind;
  expected.replace(expected.find("count: -0"), 9, "count: 0");
  EXPECT_EQ(t1, expected);
  // Values survive with their types.
  const NodeInstance& p = r2.workflow->nodes[0];
  EXPECT_EQ(std::get<bool>(*p.param("flag")), true);
  EXPECT_EQ(std::get<std::int64_t>(*p.param("count")), 7);
  EXPECT_EQ(std::get<double>(*p.param("scale")), 1e-9);
  EXPECT_EQ(std::get<std::string>(*p.param("label")), "Å and \"quotes\", commas: too");
  EXPECT_EQ(std::get<std::string>(*p.param("input")), "../data/my file.txt");
  EXPECT_EQ(std::get<std::string>(*p.param("device")), "cuda:0");
  EXPECT_EQ(r2.workflow->description, "Every parameter kind: quoted, with a line\nbreak");
  EXPECT_EQ(std::get<std::string>(*r2.workflow->nodes[1].param("label")), "true");
  EXPECT_EQ(std::get<double>(*r2.workflow->nodes[2].param("value")), -0.1);
  EXPECT_EQ((*r2.workflow->nodes[3].pos)[0], 12.5);
}

TEST(Workflow, SaveIsAtomicAndReloads) {
  test::TempDir dir;
  auto r = parse(kEveryKind);
  ASSERT_TRUE(r.workflow);
  const auto file = dir / "w.yaml";
  std::ofstream(file) << "old content\n";
  save_workflow(*r.workflow, file);
  std::size_t entries = 0;
  for ([[maybe_unused]] const auto& e : std::filesystem::directory_iterator(dir.path())) ++entries;
  EXPECT_EQ(entries, 1u);  // no temporary file left behind
  const auto back = load_workflow(file, testnodes());
  ASSERT_TRUE(back.workflow);
  EXPECT_EQ(to_yaml(*back.workflow), to_yaml(*r.workflow));
  EXPECT_EQ(back.workflow->file, file);
  EXPECT_EQ(back.workflow->base_dir(), dir.path());
  EXPECT_THROW(save_workflow(*r.workflow, "/nonexistent/dir/w.yaml"), Error);
}

TEST(Workflow, ApplyOverride) {
  auto r = parse("gemflow: 1\nnodes:\n  p: {type: test.params, params: {count: 2}}\n  c: {type: test.constant}\n");
  ASSERT_TRUE(r.ok()) << all(r.diagnostics);
  Workflow& wf = *r.workflow;
  EXPECT_FALSE(apply_override(wf, "p.count=9", testnodes()));
  EXPECT_EQ(std::get<std::int64_t>(*wf.find("p")->param("count")), 9);
  EXPECT_FALSE(apply_override(wf, "c.value=-1.5", testnodes()));
  EXPECT_EQ(std::get<double>(*wf.find("c")->param("value")), -1.5);
  EXPECT_FALSE(apply_override(wf, "p.input=data/x.txt", testnodes()));
  EXPECT_EQ(std::get<std::string>(*wf.find("p")->param("input")),
            (std::filesystem::current_path() / "data/x.txt").string());
  EXPECT_FALSE(apply_override(wf, "p.label=a=b", testnodes()));  // first '=' splits
  EXPECT_EQ(std::get<std::string>(*wf.find("p")->param("label")), "a=b");

  const std::string before = to_yaml(wf);
  auto d = apply_override(wf, "p.count=11", testnodes());
  ASSERT_TRUE(d);
  EXPECT_EQ(d->str(), "--set p.count=11: error: node 'p', parameter 'count': 11 is above the maximum 10");
  d = apply_override(wf, "p.cont=3", testnodes());
  ASSERT_TRUE(d);
  EXPECT_EQ(d->hint, "did you mean 'count'?");
  d = apply_override(wf, "pp.count=3", testnodes());
  ASSERT_TRUE(d);
  EXPECT_EQ(d->hint, "did you mean 'p'?");
  d = apply_override(wf, "p.mode=exakt", testnodes());
  ASSERT_TRUE(d);
  EXPECT_EQ(d->hint, "did you mean 'exact'?");
  EXPECT_TRUE(apply_override(wf, "p.count", testnodes()));
  EXPECT_TRUE(apply_override(wf, "count=3", testnodes()));
  EXPECT_EQ(to_yaml(wf), before);  // failed overrides change nothing
}

TEST(Workflow, ValidateAModelBuiltInCode) {
  Workflow wf;
  NodeInstance a;
  a.id = "a";
  a.type = "test.constant";
  a.params.emplace_back("value", std::int64_t{3});  // integer for a float: accepted
  NodeInstance s;
  s.id = "s";
  s.type = "test.add";
  wf.nodes = {a, s};
  wf.links.push_back({"a", "value", "s", "a", {}});
  auto ds = validate(wf, testnodes());
  ASSERT_EQ(ds.size(), 1u) << all(ds);
  EXPECT_EQ(ds[0].str(), "error: node 's', port 'b': required input (Matrix<f64>) is not connected");
  wf.links.push_back({"a", "value", "s", "b", {}});
  EXPECT_TRUE(validate(wf, testnodes()).empty());
  wf.nodes.push_back(a);
  ds = validate(wf, testnodes());
  ASSERT_EQ(ds.size(), 1u) << all(ds);
  EXPECT_EQ(ds[0].message, "node id used twice");
}

TEST(Workflow, TopologicalOrderIsStable) {
  const auto r = parse(R"(gemflow: 1
nodes:
  sum: {type: test.add}
  z: {type: test.constant}
  y: {type: test.constant}
  late: {type: test.sleep}
links:
  - sum.sum -> late.in
  - z.value -> sum.a
  - y.value -> sum.b
)");
  ASSERT_TRUE(r.ok()) << all(r.diagnostics);
  EXPECT_EQ(topological_order(*r.workflow), (std::vector<std::string>{"z", "y", "sum", "late"}));
}
// Every map of the file (top level, nodes, node keys, parameters, editor) is read through the
// loader's key iteration; under the asan preset a reference to yaml-cpp's temporary iterator
// proxy was a stack-use-after-scope on every load. The values read must be the file's.
TEST(Workflow, EveryMapOfTheFileIsReadWhole) {
  const auto r = parse(R"(gemflow: 1
name: maps
nodes:
  a: {type: test.constant, version: 1, params: {value: 2}}
  p: {type: test.params, params: {count: 3, label: x}}
  s: {type: test.add}
links:
  - a.value -> s.a
  - a.value -> s.b
editor: {a: {pos: [1, 2]}, s: {pos: [3, 4]}}
)");
  ASSERT_TRUE(r.ok()) << all(r.diagnostics);
  const Workflow& wf = *r.workflow;
  ASSERT_EQ(wf.nodes.size(), 3u);
  EXPECT_EQ(wf.nodes[0].id, "a");
  EXPECT_EQ(wf.nodes[1].id, "p");
  EXPECT_EQ(std::get<std::int64_t>(*wf.nodes[1].param("count")), 3);
  EXPECT_EQ(std::get<std::string>(*wf.nodes[1].param("label")), "x");
  ASSERT_TRUE(wf.nodes[2].pos);
  EXPECT_EQ((*wf.nodes[2].pos)[1], 4.0);
}

// A 2.1M-entry `editor:` printed one warning per entry (and grew past 4.9 GB): diagnostics of one
// kind are listed ten times, then summed up in one line at the last one listed.
TEST(Workflow, DiagnosticsOfOneKindAreBounded) {
  std::string text = "gemflow: 1\nnodes:\n  a: {type: test.constant}\neditor:\n";
  for (int i = 0; i < 5000; ++i) text += "  ghost" + std::to_string(i) + ": {pos: [0, 0]}\n";
  const auto r = parse(text);
  ASSERT_TRUE(r.ok()) << all(r.diagnostics);
  ASSERT_EQ(r.diagnostics.size(), 11u) << all(r.diagnostics);
  for (std::size_t i = 0; i < 10; ++i) {
    EXPECT_EQ(r.diagnostics[i].message, "editor layout for a node that does not exist (ignored)");
    EXPECT_EQ(r.diagnostics[i].node, "ghost" + std::to_string(i));
  }
  EXPECT_EQ(r.diagnostics[10].str(),
            "w.yaml:14:3: warning: 4990 more warnings of this kind, not listed: editor "
            "layout for a node that does not exist (ignored)");

  // errors too, each kind on its own: links to missing nodes and unknown node types
  text = "gemflow: 1\nnodes:\n  a: {type: test.constant}\n";
  for (int i = 0; i < 30; ++i) text += "  t" + std::to_string(i) + ": {type: test.nope}\n";
  text += "links:\n";
  for (int i = 0; i < 40; ++i) text += "  - a.value -> missing" + std::to_string(i) + ".a\n";
  const auto e = parse(text);
  std::size_t links = 0, types = 0;
  std::vector<std::string> summaries;
  for (const auto& d : e.diagnostics) {
    links += d.message.starts_with("link ");
    types += d.message.starts_with("unknown node type");
    if (d.message.find("not listed") != std::string::npos) summaries.push_back(d.message);
  }
  EXPECT_EQ(links, 10u) << all(e.diagnostics);
  EXPECT_EQ(types, 10u) << all(e.diagnostics);
  EXPECT_THAT(summaries,
              ::testing::UnorderedElementsAre(
                  "20 more errors of this kind, not listed: unknown node type 'test.nope'",
                  "30 more errors of this kind, not listed: link 'a.value -> missing9.a': no node 'missing9'"));
}

}  // namespace
}  // namespace gemflow

namespace gemflow {
namespace {

// A workflow saved at version 1 of test.migrated (renamed parameter and output, an old choice
// value, a length in mm) loads at version 3 with one note per step, and runs.
TEST(Migration, AnOldWorkflowLoadsMigratedWithANotePerStep) {
  test::TempDir dir;
  std::ofstream(dir / "old.yaml") << R"(gemflow: 1
nodes:
  m: {type: test.migrated, version: 1, params: {scale_factor: 2.5, mode: fast, tolerance: 4}}
  s: {type: test.add}
links:
  - m.out -> s.a
  - m.out -> s.b
)";
  const LoadResult r = load_workflow(dir / "old.yaml", test::testnodes());
  ASSERT_TRUE(r.ok()) << test::all(r.diagnostics);
  EXPECT_EQ(r.migrated, 1u);
  std::vector<std::string> notes;
  for (const auto& d : r.diagnostics) notes.push_back(d.message);
  EXPECT_THAT(notes, ::testing::ElementsAre(
                         "migrated from version 1 to 2 of 'test.migrated': parameter 'scale_factor' is now 'factor'",
                         "migrated from version 1 to 2 of 'test.migrated': output 'out' is now 'value'",
                         "migrated from version 2 to 3 of 'test.migrated': parameter 'mode': 'fast' is now 'quick'",
                         "migrated from version 2 to 3 of 'test.migrated': parameter 'tolerance' changed unit "
                         "(mm → m): the saved value is multiplied by 0.001"));
  EXPECT_EQ(r.diagnostics[0].where.line, 3);
  const NodeInstance* m = r.workflow->find("m");
  ASSERT_NE(m, nullptr);
  EXPECT_EQ(m->type_version, 3);
  EXPECT_EQ(std::get<double>(*m->param("factor")), 2.5);
  EXPECT_EQ(std::get<std::string>(*m->param("mode")), "quick");
  EXPECT_DOUBLE_EQ(std::get<double>(*m->param("tolerance")), 0.004);
  EXPECT_EQ(r.workflow->links[0].from_port, "value");
  // Saved, it is a current workflow: no notes on the next load.
  save_workflow(*r.workflow, dir / "new.yaml");
  const LoadResult again = load_workflow(dir / "new.yaml", test::testnodes());
  ASSERT_TRUE(again.ok()) << test::all(again.diagnostics);
  EXPECT_EQ(again.migrated, 0u);
  EXPECT_TRUE(again.diagnostics.empty()) << test::all(again.diagnostics);
}

TEST(Migration, ABadValueFoundAfterTheMigrationIsLocated) {
  test::TempDir dir;
  std::ofstream(dir / "bad.yaml")
      << "gemflow: 1\nnodes:\n  m: {type: test.migrated, version: 2, params: {mode: slow}}\n";
  const LoadResult r = load_workflow(dir / "bad.yaml", test::testnodes());
  EXPECT_FALSE(r.ok());
  bool found = false;
  for (const auto& d : r.diagnostics)
    if (d.severity == Diagnostic::Severity::Error && d.param == "mode") {
      found = true;
      EXPECT_EQ(d.where.line, 3);
      EXPECT_THAT(d.message, ::testing::HasSubstr("slow"));
    }
  EXPECT_TRUE(found) << test::all(r.diagnostics);
}

// ---- Saving keeps what people wrote ----

constexpr const char* kHandWritten = R"(# NMR-like chain, written by hand
gemflow: 1
name: hand
nodes:
  # the source
  a: {type: test.constant, params: {value: 1e-3}}   # small on purpose
  b:
    type: test.constant
    params:
      value: 2.50   # keep this spelling
  sum: {type: test.add}

links:
  - a.value -> sum.a   # first
  - b.value -> sum.b
editor:
  a: {pos: [0, 0]}
)";

TEST(Workflow, SavingAnUnchangedWorkflowGivesTheFileBack) {
  const auto r = parse(kHandWritten);
  ASSERT_TRUE(r.ok()) << all(r.diagnostics);
  EXPECT_EQ(to_yaml_preserving(*r.workflow), kHandWritten);
  // a copy that was changed and changed back is unchanged too
  Workflow wf = *r.workflow;
  ASSERT_FALSE(apply_override(wf, "a.value=7", testnodes()));
  ASSERT_FALSE(apply_override(wf, "a.value=0.001", testnodes()));
  EXPECT_EQ(to_yaml_preserving(wf), kHandWritten);
}

TEST(Workflow, SavingKeepsABypassAndGroupsThatChanged) {
  // Bypass: the node's entry is rewritten, the comments elsewhere stay.
  Workflow wf = *parse(kHandWritten).workflow;
  wf.find("sum")->bypass = true;
  std::string want = kHandWritten;
  want.replace(want.find("  sum: {type: test.add}"), 23, "  sum: {type: test.add, version: 1, bypass: true}");
  EXPECT_EQ(to_yaml_preserving(wf), want);
  EXPECT_TRUE(parse(to_yaml_preserving(wf)).workflow->find("sum")->bypass);
  // Back off: the original text.
  wf.find("sum")->bypass = false;
  EXPECT_EQ(to_yaml_preserving(wf), kHandWritten);
  // A group or note added: never lost (the canonical text when it cannot be patched in).
  wf.groups.push_back({"Inputs", "#4a6fa5", {"a", "b"}});
  wf.notes.push_back({"hello", {0, -50}, 200});
  const auto back = parse(to_yaml_preserving(wf));
  ASSERT_TRUE(back.ok()) << all(back.diagnostics);
  ASSERT_EQ(back.workflow->groups.size(), 1u);
  EXPECT_EQ(back.workflow->groups[0].nodes, (std::vector<std::string>{"a", "b"}));
  ASSERT_EQ(back.workflow->notes.size(), 1u);
  EXPECT_EQ(back.workflow->notes[0].text, "hello");
}

TEST(Workflow, AChangedValueIsReplacedInPlace) {
  Workflow wf = *parse(kHandWritten).workflow;
  ASSERT_FALSE(apply_override(wf, "a.value=0.5", testnodes()));
  ASSERT_FALSE(apply_override(wf, "b.value=3", testnodes()));
  std::string want = kHandWritten;
  want.replace(want.find("1e-3"), 4, "0.5");
  want.replace(want.find("2.50"), 4, "3.0");
  EXPECT_EQ(to_yaml_preserving(wf), want);
  const auto back = parse(to_yaml_preserving(wf));
  ASSERT_TRUE(back.ok());
  EXPECT_EQ(std::get<double>(*back.workflow->find("b")->param("value")), 3.0);
}

TEST(Workflow, AddedRemovedAndMovedThingsTouchOnlyTheirLines) {
  Workflow wf = *parse(kHandWritten).workflow;
  // a new node and link, the first link removed, a node moved in the editor
  NodeInstance c;
  c.id = "c";
  c.type = "test.constant";
  c.type_version = 1;
  c.set_param("value", 4.0);
  wf.nodes.push_back(c);
  wf.links.erase(wf.links.begin());
  wf.links.push_back({"c", "value", "sum", "a", {}});
  wf.find("sum")->pos = std::array<double, 2>{10, 20};
  const std::string text = to_yaml_preserving(wf);
  EXPECT_THAT(text, HasSubstr("# NMR-like chain, written by hand\n"));
  EXPECT_THAT(text, HasSubstr("value: 1e-3}}   # small on purpose\n"));
  EXPECT_THAT(text, HasSubstr("      value: 2.50   # keep this spelling\n"));
  EXPECT_THAT(text,
              HasSubstr("  sum: {type: test.add}\n  c: {type: test.constant, version: 1, params: {value: 4.0}}\n"));
  EXPECT_THAT(text, ::testing::Not(HasSubstr("# first")));
  EXPECT_THAT(text, HasSubstr("  - b.value -> sum.b\n  - c.value -> sum.a\n"));
  EXPECT_THAT(text, HasSubstr("editor:\n  a: {pos: [0, 0]}\n  sum: {pos: [10, 20]}\n"));
  const auto back = parse(text);
  ASSERT_TRUE(back.ok()) << all(back.diagnostics) << text;
  EXPECT_EQ(to_yaml(*back.workflow), to_yaml(wf));
  // a removed node takes its lines (a block-style one all of them) but not the comments between
  wf.nodes.erase(wf.nodes.begin() + 1);  // b
  wf.links.erase(wf.links.begin());      // b.value -> sum.b
  const std::string without_b = to_yaml_preserving(wf);
  EXPECT_THAT(without_b, ::testing::Not(HasSubstr("keep this spelling")));
  EXPECT_THAT(without_b, HasSubstr("  # the source\n"));
  const auto back2 = parse(without_b);
  ASSERT_TRUE(back2.workflow) << without_b;
  EXPECT_EQ(to_yaml(*back2.workflow), to_yaml(wf));
}

TEST(Workflow, EditsThatCannotBePlacedGiveTheCanonicalText) {
  // a flow-style nodes map, then a reordering of nodes
  Workflow flow = *parse("gemflow: 1\nnodes: {a: {type: test.constant}, b: {type: test.constant}}  # x\n").workflow;
  flow.nodes.erase(flow.nodes.begin());
  EXPECT_EQ(to_yaml_preserving(flow), to_yaml(flow));
  Workflow wf = *parse(kHandWritten).workflow;
  std::swap(wf.nodes[0], wf.nodes[1]);
  EXPECT_EQ(to_yaml_preserving(wf), to_yaml(wf));
}

TEST(Workflow, BypassAndAnnotationsRoundTrip) {
  const std::string text = R"(gemflow: 1
name: annotated
nodes:
  a: {type: test.constant, version: 1, params: {value: 2.0}}
  sum: {type: test.add, version: 1, bypass: true}
links:
  - a.value -> sum.a
  - a.value -> sum.b
editor:
  a: {pos: [0, 0]}
annotations:
  groups:
    - {title: Inputs and sum, color: "#4a6fa5", nodes: [a, sum]}
  notes:
    - {text: "first line\nsecond: line", pos: [10, -80.5], width: 240}
)";
  const auto r = parse(text);
  ASSERT_TRUE(r.ok()) << all(r.diagnostics);
  const Workflow& wf = *r.workflow;
  EXPECT_FALSE(wf.find("a")->bypass);
  EXPECT_TRUE(wf.find("sum")->bypass);
  ASSERT_EQ(wf.groups.size(), 1u);
  EXPECT_EQ(wf.groups[0].title, "Inputs and sum");
  EXPECT_EQ(wf.groups[0].color, "#4a6fa5");
  EXPECT_EQ(wf.groups[0].nodes, (std::vector<std::string>{"a", "sum"}));
  ASSERT_EQ(wf.notes.size(), 1u);
  EXPECT_EQ(wf.notes[0].text, "first line\nsecond: line");
  EXPECT_EQ(wf.notes[0].pos[1], -80.5);
  EXPECT_EQ(to_yaml(wf), text);  // canonical text is stable
}

TEST(Workflow, BadBypassAndAnnotationsAreErrorsWithTheirLine) {
  const auto bad = parse(R"(gemflow: 1
nodes:
  a: {type: test.constant, bypass: perhaps}
annotations:
  groups:
    - {title: x, nodes: [a, ghost]}
  notes:
    - {text: hi, pos: [1]}
)");
  const std::string d = all(bad.diagnostics);
  EXPECT_NE(d.find("w.yaml:3:36: error: node 'a': 'bypass' must be true or false"), std::string::npos) << d;
  EXPECT_NE(d.find("w.yaml:6:29: warning: node 'ghost': group member that does not exist"), std::string::npos) << d;
  EXPECT_NE(d.find("w.yaml:8:7: error: bad note entry"), std::string::npos) << d;
}

// 20 000 nodes, one group naming each of them and 20 000 that do not exist, and an exposed input
// with 20 000 targets of missing nodes: the members are looked up in a set, and the "did you
// mean" hint (an edit distance to every node id) is computed only for the diagnostics listed,
// so the load stays linear (the unlisted hints alone were 4·10⁸ edit distances).
TEST(Workflow, ManyGroupMembersAndExposedTargetsLoadInLinearTime) {
  const int n = 20000;
  std::string text = "gemflow: 1\nnodes:\n";
  for (int i = 0; i < n; ++i) text += fmt::format("  n{}: {{type: test.constant}}\n", i);
  text += "inputs:\n  x: [";
  for (int i = 0; i < n; ++i) text += fmt::format("{}ghost{}.in", i ? ", " : "", i);
  text += "]\nannotations:\n  groups:\n    - {title: all, nodes: [";
  for (int i = 0; i < 2 * n; ++i) text += fmt::format("{}{}{}", i ? ", " : "", i < n ? "n" : "nobody", i);
  text += "]}\n";
  const auto r = parse(text);
  ASSERT_EQ(r.workflow ? r.workflow->groups.size() : 0u, 1u);
  EXPECT_EQ(r.workflow->groups[0].nodes.size(), std::size_t(n));
  const std::string d = all(r.diagnostics);
  EXPECT_NE(d.find("exposed input 'x': no node 'ghost0'"), std::string::npos) << d.substr(0, 2000);
  EXPECT_NE(d.find("more errors of this kind, not listed"), std::string::npos) << d.substr(0, 2000);
  EXPECT_NE(d.find("group member that does not exist"), std::string::npos) << d.substr(0, 2000);
}

}  // namespace
// yaml-cpp builds a whole document before any check (a 2M-entry `editor:` section took 6 GB):
// oversized sections and files are refused on the text, at the line that passes the limit,
// whatever the style (block or flow) and whichever section.
TEST(Workflow, OversizedSectionsAreRefusedBeforeParsing) {
  const std::string head = "gemflow: 1\nnodes:\n  a: {type: test.constant}\n";  // 3 lines
  const std::size_t n = kMaxSectionEntries + 1;
  std::string block = head + "editor:\n";
  for (std::size_t i = 0; i < n + 100; ++i) block += "  n" + std::to_string(i) + ":\n    pos: [0, 0]\n";
  // the (limit + 1)th entry: line 4 is 'editor:', entry k (0-based) at line 5 + 2k
  const int at = 5 + 2 * static_cast<int>(kMaxSectionEntries);
  EXPECT_EQ(only_error(parse(block)).str(),
            fmt::format("w.yaml:{}:1: error: the 'editor:' section (line 4) has more than {} entries: not read "
                        "(split the workflow into sub-workflows (a 'workflow' node runs another file))",
                        at, kMaxSectionEntries));
  // one flow collection on the key's line
  std::string flow = head + "links: [";
  for (std::size_t i = 0; i < n; ++i) flow += "a.value -> b.x, ";
  flow += "a.value -> b.x]\n";
  EXPECT_THAT(only_error(parse(flow)).str(),
              HasSubstr("w.yaml:4:1: error: the 'links:' section (line 4) has more than"));
  // a sequence at the key's own indentation
  std::string seq = head + "links:\n";
  for (std::size_t i = 0; i < n; ++i) seq += "- a.value -> b.x\n";
  EXPECT_THAT(only_error(parse(seq)).str(), HasSubstr("the 'links:' section (line 4) has more than"));
  // the whole file: one node of many parameters, no section over its limit
  std::string lines = head + "  b:\n    type: test.constant\n    params:\n";
  for (std::size_t i = 0; i < kMaxWorkflowEntries; ++i) lines += "      p: 1\n";
  EXPECT_THAT(only_error(parse(lines)).str(),
              HasSubstr(fmt::format("error: the file has more than {} YAML entries", kMaxWorkflowEntries)));
  // commas in quotes and comments are not flow items; the limits leave ordinary files alone
  EXPECT_TRUE(parse(head + "description: 'a, b, c' # d, e\neditor: {a: {pos: [1, 2]}}\n").ok());
}

}  // namespace gemflow
