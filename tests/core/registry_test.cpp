// Registry: node specs from declarations, duplicate and malformed registrations, nearest_name.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cctype>
#include <cstdint>
#include <map>
#include <random>
#include <string>

#include "gemflow/registry.hpp"
#include "gemflow/types.hpp"
#include "gemflow/workflow.hpp"

namespace gemflow {
namespace {

using ::testing::HasSubstr;

class Smooth final : public Node {
 public:
  enum class Method { Floyd, Dijkstra };
  static NodeInfo info() {
    return {.id = "reg.smooth", .version = 3, .title = "Smooth", .category = "Test", .doc = "Smooths"};
  }
  Input<DistanceBounds> bounds{this, "bounds", "Bounds to smooth"};
  Input<Structure> ref{this, "reference", "Optional reference", PortUse::Optional};
  Output<DistanceBounds> smoothed{this, "smoothed", "Triangle-closed bounds"};
  Param<double> tol{this, "tolerance", 1e-9, {.min = 0, .unit = "Å", .doc = "Tolerance"}};
  Param<int> iters{this, "iterations", 100, {.min = 1, .max = 1000, .doc = "Iterations"}};
  Choice<Method> method{this,
                        "method",
                        Method::Dijkstra,
                        {{Method::Floyd, "floyd"}, {Method::Dijkstra, "dijkstra"}},
                        {.doc = "Algorithm"}};
  PathParam file{this, "log", PathParam::Mode::Write, "Log file", "smooth.log"};
  DeviceParam device{this};
  void execute(NodeContext&) override {}
};

struct Unregistered {};
}  // namespace
template <>
struct DataType<Unregistered> {
  static constexpr std::string_view name = "Unregistered";
  static constexpr std::string_view doc = "";
  static std::string summary(const Unregistered&) { return ""; }
};
namespace {

class BadPort final : public Node {
 public:
  static NodeInfo info() { return {.id = "reg.bad_port"}; }
  Input<Unregistered> in{this, "in", "?"};
  void execute(NodeContext&) override {}
};
class BadDefault final : public Node {
 public:
  static NodeInfo info() { return {.id = "reg.bad_default"}; }
  Param<double> x{this, "x", 5.0, {.max = 1.0}};
  void execute(NodeContext&) override {}
};
class TwiceParam final : public Node {
 public:
  static NodeInfo info() { return {.id = "reg.twice"}; }
  Param<double> a{this, "a", 0.0};
  Param<int> b{this, "a", 0};
  void execute(NodeContext&) override {}
};
class NoNamespace final : public Node {
 public:
  static NodeInfo info() { return {.id = "smooth"}; }
  void execute(NodeContext&) override {}
};

class FloatParam final : public Node {
 public:
  static NodeInfo info() { return {.id = "reg.float"}; }
  Param<float> f{this, "f", 0.1f};
  void execute(NodeContext&) override {}
};

class ThrowingCtor final : public Node {
 public:
  static NodeInfo info() { return {.id = "reg.throwing"}; }
  ThrowingCtor() { throw std::runtime_error("no licence file"); }
  void execute(NodeContext&) override {}
};

// Rules between parameters (NodeInfo::rules): a limit needs the mode that has one; fast refuses
// a tolerance.
class Ruled final : public Node {
 public:
  static NodeInfo info() {
    return {.id = "reg.ruled",
            .rules = {{.param = "limit", .other = "pivoted", .other_value = true, .why = "only pivoted stops early"},
                      {.param = "method",
                       .when = {std::string("fast")},
                       .other = "tolerance",
                       .other_value = 0.0,
                       .must = true,
                       .why = "fast has no tolerance"}}};
  }
  Param<bool> pivoted{this, "pivoted", false};
  Param<int> limit{this, "limit", 0, {.min = 0}};
  Param<double> tolerance{this, "tolerance", 0.0, {.min = 0}};
  Choice<Smooth::Method> method{
      this, "method", Smooth::Method::Dijkstra, {{Smooth::Method::Floyd, "fast"}, {Smooth::Method::Dijkstra, "exact"}}};
  void execute(NodeContext&) override {}
};
class BadRule final : public Node {
 public:
  static NodeInfo info() {
    return {.id = "reg.bad_rule", .rules = {{.param = "x", .other = "y", .other_value = true}}};
  }
  Param<double> x{this, "x", 0.0};
  void execute(NodeContext&) override {}
};
class DefaultsBreakRule final : public Node {
 public:
  static NodeInfo info() {
    return {.id = "reg.defaults_break_rule",
            .rules = {{.param = "b", .when = {std::int64_t{1}}, .other = "a", .other_value = true}}};
  }
  Param<bool> a{this, "a", false};
  Param<int> b{this, "b", 1};
  void execute(NodeContext&) override {}
};
class BadRuleValue final : public Node {
 public:
  static NodeInfo info() {
    return {.id = "reg.bad_rule_value", .rules = {{.param = "x", .when = {5.0}, .other = "x", .other_value = 0.0}}};
  }
  Param<double> x{this, "x", 0.0, {.max = 1.0}};
  void execute(NodeContext&) override {}
};

// Integer types narrower than YAML's 64 bits imply their own limits: a Param<std::size_t> must
// not take -1 from a workflow and run with 2⁶⁴ − 1.
class Unsigned final : public Node {
 public:
  static NodeInfo info() { return {.id = "reg.unsigned"}; }
  Param<std::size_t> count{this, "count", 4, {.doc = "How many"}};
  Param<unsigned> small{this, "small", 1, {.min = 1, .max = 10}};
  Param<int> narrow{this, "narrow", 0};
  Param<std::int64_t> wide{this, "wide", 0};
  void execute(NodeContext&) override {}
};
class UnsignedNegativeMin final : public Node {
 public:
  static NodeInfo info() { return {.id = "reg.unsigned_negative_min"}; }
  Param<std::uint32_t> n{this, "n", 0, {.min = -1}};
  void execute(NodeContext&) override {}
};

TEST(Registry, UnsignedParametersImplyMinimumZero) {
  Registry r;
  r.add_node<Unsigned>("x.so");
  const NodeSpec& s = r.find_node("reg.unsigned")->spec;
  EXPECT_EQ(s.param("count")->min, 0.0);
  EXPECT_FALSE(s.param("count")->max.has_value());  // 2⁶⁴ − 1 is beyond what YAML's int64 holds anyway
  EXPECT_EQ(s.param("small")->min, 1.0);            // a declared limit inside the type's range is kept
  EXPECT_EQ(s.param("small")->max, 10.0);
  EXPECT_EQ(s.param("narrow")->min, -2147483648.0);
  EXPECT_EQ(s.param("narrow")->max, 2147483647.0);
  EXPECT_FALSE(s.param("wide")->min.has_value());
  const auto errors = [&](const std::string& params) {
    const auto res =
        parse_workflow("gemflow: 1\nnodes:\n  u:\n    type: reg.unsigned\n    params:\n" + params, "w.yaml", r);
    std::vector<std::string> e;
    for (const auto& d : res.diagnostics)
      if (d.severity == Diagnostic::Severity::Error) e.push_back(d.str());
    return e;
  };
  EXPECT_THAT(errors("      count: -1\n"),
              ::testing::ElementsAre("w.yaml:6:14: error: node 'u', parameter 'count': -1 is below the minimum 0"));
  EXPECT_THAT(errors("      narrow: 3000000000\n"),
              ::testing::ElementsAre(HasSubstr("is above the maximum 2147483647")));
  EXPECT_TRUE(errors("      count: 0\n      narrow: -5\n").empty());
  // a declared minimum below the type's least value is a declaration error naming the node type
  EXPECT_THAT([&] { r.add_node<UnsignedNegativeMin>("x.so"); },
              ::testing::ThrowsMessage<Error>(HasSubstr(
                  "node type 'reg.unsigned_negative_min': its constructor threw: parameter 'n': minimum -1.0 is below "
                  "0.0, the least value of its integer type")));
}

// Parameter and port names are YAML keys, link ends (node.port) and --set targets: identifiers.
class BadParamName final : public Node {
 public:
  static NodeInfo info() { return {.id = "reg.bad_param_name"}; }
  Param<double> x{this, "Max-Iter", 0.0};
  void execute(NodeContext&) override {}
};
class BadPortName final : public Node {
 public:
  static NodeInfo info() { return {.id = "reg.bad_port_name"}; }
  Output<Matrix<double>> out{this, "2out", "?"};
  void execute(NodeContext&) override {}
};
class EmptyParamName final : public Node {
 public:
  static NodeInfo info() { return {.id = "reg.empty_param_name"}; }
  Param<bool> x{this, "", false};
  void execute(NodeContext&) override {}
};

TEST(Registry, NamesMustBeIdentifiers) {
  Registry r;
  EXPECT_THAT([&] { r.add_node<BadParamName>("x.so"); },
              ::testing::ThrowsMessage<Error>(::testing::StrEq(
                  "node 'reg.bad_param_name': parameter name 'Max-Iter' is not an identifier: use lower-case letters, "
                  "digits and '_', not starting with a digit ([a-z_][a-z0-9_]*)")));
  EXPECT_THAT(
      [&] { r.add_node<BadPortName>("x.so"); },
      ::testing::ThrowsMessage<Error>(HasSubstr("node 'reg.bad_port_name': port name '2out' is not an identifier")));
  EXPECT_THAT([&] { r.add_node<EmptyParamName>("x.so"); },
              ::testing::ThrowsMessage<Error>(HasSubstr("parameter name '' is not an identifier")));
  EXPECT_TRUE(r.node_ids().empty());
  r.add_node<Smooth>("x.so");  // reference, iterations, log, device, _underscores: fine
}

// Comparison rules (ParamRule::compare): between two numeric parameters, or with a constant; an
// optional condition on a third parameter; a sentinel range that the rule leaves alone.
class Compared final : public Node {
 public:
  static NodeInfo info() {
    return {.id = "reg.compared",
            .rules = {{.param = "low", .other = "high", .why = "a range", .compare = ParamCompare::Less},
                      {.param = "tolerance",
                       .other_value = 1e-16,
                       .why = "fp64",
                       .compare = ParamCompare::GreaterEqual,
                       .unless_below = 0.0},
                      {.param = "steps",
                       .when = {std::string("fast")},
                       .other = "limit",
                       .compare = ParamCompare::LessEqual,
                       .if_param = "mode"}}};
  }
  Param<double> low{this, "low", 0.0};
  Param<double> high{this, "high", 1.0};
  Param<double> tolerance{this, "tolerance", -1.0};
  Param<int> steps{this, "steps", 1};
  Param<int> limit{this, "limit", 10};
  Choice<Smooth::Method> mode{
      this, "mode", Smooth::Method::Dijkstra, {{Smooth::Method::Floyd, "fast"}, {Smooth::Method::Dijkstra, "exact"}}};
  void execute(NodeContext&) override {}
};
class CompareText final : public Node {
 public:
  static NodeInfo info() {
    return {.id = "reg.compare_text", .rules = {{.param = "name", .other_value = 1.0, .compare = ParamCompare::Less}}};
  }
  Param<std::string> name{this, "name", "a"};
  void execute(NodeContext&) override {}
};

TEST(Registry, ComparisonRulesAreWorkflowErrorsAtTheParameter) {
  Registry r;
  r.add_node<Compared>("x.so");
  const auto errors = [&](const std::string& params) {
    const auto res =
        parse_workflow("gemflow: 1\nnodes:\n  c:\n    type: reg.compared\n    params:\n" + params, "w.yaml", r);
    std::vector<std::string> e;
    for (const auto& d : res.diagnostics)
      if (d.severity == Diagnostic::Severity::Error) e.push_back(d.str());
    return e;
  };
  EXPECT_TRUE(errors("      low: 0.5\n").empty());
  EXPECT_THAT(errors("      high: 2\n      low: 2\n"),
              ::testing::ElementsAre("w.yaml:7:12: error: node 'c', parameter 'low': low = 2.0 must be below high = "
                                     "2.0 (a range)"));
  EXPECT_THAT(
      errors("      tolerance: 1e-20\n"),
      ::testing::ElementsAre(HasSubstr("parameter 'tolerance': tolerance = 1e-20 must be at least 1e-16 (fp64)")));
  EXPECT_TRUE(errors("      tolerance: -5\n").empty());  // below unless_below: the sentinel
  EXPECT_TRUE(errors("      tolerance: 1e-16\n").empty());
  // the condition: only with mode fast
  EXPECT_TRUE(errors("      steps: 20\n").empty());
  EXPECT_THAT(
      errors("      steps: 20\n      mode: fast\n"),
      ::testing::ElementsAre(HasSubstr("parameter 'steps': steps = 20 must be at most limit = 10 when mode is fast")));
  EXPECT_TRUE(errors("      steps: 20\n      limit: 20\n      mode: fast\n").empty());
  // what cannot be compared is refused at registration
  EXPECT_THAT([&] { r.add_node<CompareText>("x.so"); },
              ::testing::ThrowsMessage<Error>(HasSubstr("compares parameter 'name', which is not a number (string)")));
}

// Relation rules (ParamRule::holds): a formula between parameters that the other forms cannot
// state, reported at the parameter with both values and the rule in words.
class Related final : public Node {
 public:
  static NodeInfo info() {
    return {.id = "reg.related",
            .rules = {{.param = "angle",
                       .other = "sides",
                       .why = "angle must be 0 or 180 − 360/sides",
                       .holds = [](const std::function<const ParamValue&(const std::string&)>& value_of) {
                         const double a = *param_number(value_of("angle"));
                         return a == 0 || a == 180 - 360 / *param_number(value_of("sides"));
                       }}}};
  }
  Param<double> angle{this, "angle", 0.0};
  Param<int> sides{this, "sides", 4};
  void execute(NodeContext&) override {}
};
class RelatedWithoutWhy final : public Node {
 public:
  static NodeInfo info() {
    return {.id = "reg.related_without_why", .rules = {{.param = "angle", .holds = [](const auto&) { return true; }}}};
  }
  Param<double> angle{this, "angle", 0.0};
  void execute(NodeContext&) override {}
};

TEST(Registry, RelationRulesAreWorkflowErrorsNamingBothParameters) {
  Registry r;
  r.add_node<Related>("x.so");
  const auto errors = [&](const std::string& params) {
    const auto res =
        parse_workflow("gemflow: 1\nnodes:\n  c:\n    type: reg.related\n    params:\n" + params, "w.yaml", r);
    std::vector<std::string> e;
    for (const auto& d : res.diagnostics)
      if (d.severity == Diagnostic::Severity::Error) e.push_back(d.str());
    return e;
  };
  EXPECT_TRUE(errors("      angle: 90\n").empty());
  EXPECT_TRUE(errors("      angle: 60\n      sides: 3\n").empty());
  EXPECT_THAT(errors("      sides: 3\n      angle: 90\n"),
              ::testing::ElementsAre("w.yaml:7:14: error: node 'c', parameter 'angle': angle = 90.0 does not fit "
                                     "sides = 3 (angle must be 0 or 180 − 360/sides)"));
  EXPECT_THAT([&] { r.add_node<RelatedWithoutWhy>("x.so"); },
              ::testing::ThrowsMessage<Error>(HasSubstr("a relation rule on parameter 'angle' must say what it")));
}

// A parameter group: one declaration shared by several node types, with renames.
struct StepParams : ParamGroup {
  explicit StepParams(Node* n, Renames r = {})
      : ParamGroup(std::move(r)), iterations{n, name("iterations"), 10, {.min = 1}}, scale{n, name("scale"), 1.0} {
    done();
  }
  Param<std::size_t> iterations;
  Param<double> scale;
};
class Grouped final : public Node {
 public:
  static NodeInfo info() { return {.id = "reg.grouped"}; }
  Param<bool> first{this, "first", false};
  StepParams step{this, {{"iterations", "step_iterations"}}};
  void execute(NodeContext&) override {}
};
class BadRename final : public Node {
 public:
  static NodeInfo info() { return {.id = "reg.bad_rename"}; }
  StepParams step{this, {{"iteration", "n"}}};
  void execute(NodeContext&) override {}
};

TEST(Registry, ParameterGroupsDeclareTheirParametersOnTheNode) {
  Registry r;
  r.add_node<Grouped>("x.so");
  const NodeSpec& s = r.find_node("reg.grouped")->spec;
  ASSERT_EQ(s.params.size(), 3u);
  EXPECT_EQ(s.params[0].name, "first");
  EXPECT_EQ(s.params[1].name, "step_iterations");
  EXPECT_EQ(s.params[1].min, 1.0);
  EXPECT_EQ(s.params[2].name, "scale");
  auto node = r.find_node("reg.grouped")->create();
  node->set_param("step_iterations", std::int64_t{7});
  EXPECT_EQ(static_cast<Grouped&>(*node).step.iterations.value(), 7u);
  EXPECT_THAT([&] { r.add_node<BadRename>("x.so"); },
              ::testing::ThrowsMessage<Error>(::testing::StrEq(
                  "node type 'reg.bad_rename': its constructor threw: parameter group: a rename names 'iteration', "
                  "which is not a parameter of the group")));
}

TEST(Registry, ParameterRulesAreChecked) {
  Registry r;
  r.add_node<Ruled>("x.so");
  const NodeSpec& spec = r.find_node("reg.ruled")->spec;
  std::map<std::string, ParamValue> v;
  const auto value_of = [&](const std::string& name) -> const ParamValue& {
    auto it = v.find(name);
    return it != v.end() ? it->second : spec.param(name)->default_value;
  };
  EXPECT_TRUE(spec.broken_rules(value_of).empty());  // the defaults keep every rule
  v["limit"] = std::int64_t{3};
  ASSERT_EQ(spec.broken_rules(value_of).size(), 1u);
  EXPECT_EQ(rule_message(*spec.broken_rules(value_of)[0], v["limit"]),
            "limit = 3 needs 'pivoted: true' (only pivoted stops early)");
  v["pivoted"] = true;
  EXPECT_TRUE(spec.broken_rules(value_of).empty());
  v["method"] = std::string("fast");
  v["tolerance"] = 0.5;
  ASSERT_EQ(spec.broken_rules(value_of).size(), 1u);
  EXPECT_EQ(spec.broken_rules(value_of)[0]->param, "method");
  v["method"] = std::string("exact");  // the rule holds for 'fast' only
  EXPECT_TRUE(spec.broken_rules(value_of).empty());
  // an integer for a Float parameter (ParamSpec::check accepts it; a workflow built in code) is
  // the double it means (review: 0 != 0.0 as variants)
  v["method"] = std::string("fast");
  v["tolerance"] = std::int64_t{0};
  EXPECT_TRUE(spec.broken_rules(value_of).empty());
  v["tolerance"] = std::int64_t{1};
  EXPECT_EQ(spec.broken_rules(value_of).size(), 1u);
}

// QA: parameter combinations wrong on every device passed `gemflow validate` and failed the run
// with no file position. A broken rule is a workflow error at the first of its two parameters
// that the file sets; it is not checked while a value itself is invalid.
TEST(Registry, BrokenRulesAreWorkflowErrorsAtTheParameter) {
  Registry r;
  r.add_node<Ruled>("x.so");
  const auto errors = [&](const std::string& params) {
    const auto res =
        parse_workflow("gemflow: 1\nnodes:\n  a:\n    type: reg.ruled\n    params:\n" + params, "w.yaml", r);
    std::vector<std::string> e;
    for (const auto& d : res.diagnostics)
      if (d.severity == Diagnostic::Severity::Error) e.push_back(d.str());
    return e;
  };
  EXPECT_THAT(errors("      limit: 3\n"),
              ::testing::ElementsAre("w.yaml:6:14: error: node 'a', parameter 'limit': limit = 3 needs 'pivoted: "
                                     "true' (only pivoted stops early)"));
  EXPECT_TRUE(errors("      limit: 3\n      pivoted: true\n").empty());
  // the rule's parameter is not set in the file: the other one's position
  EXPECT_THAT(errors("      tolerance: 0.5\n      pivoted: true\n      method: fast\n"),
              ::testing::ElementsAre(HasSubstr("w.yaml:8:15: error: node 'a', parameter 'method': method = fast "
                                               "needs 'tolerance: 0.0' (fast has no tolerance)")));
  EXPECT_THAT(errors("      limit: -1\n"), ::testing::ElementsAre(HasSubstr("-1 is below the minimum 0")));
}

TEST(Registry, SpecIsGeneratedFromDeclarations) {
  Registry r;
  r.add_node<Smooth>("libgemflow_reg.so");
  const NodeEntry* e = r.find_node("reg.smooth");
  ASSERT_NE(e, nullptr);
  const NodeSpec& s = e->spec;
  EXPECT_EQ(s.info.version, 3);
  ASSERT_EQ(s.inputs.size(), 2u);
  EXPECT_EQ(s.inputs[0].type, "DistanceBounds");
  EXPECT_FALSE(s.inputs[0].optional);
  EXPECT_TRUE(s.inputs[1].optional);
  EXPECT_EQ(s.output("smoothed")->type, "DistanceBounds");
  ASSERT_EQ(s.params.size(), 5u);
  EXPECT_EQ(s.param("tolerance")->unit, "Å");
  EXPECT_EQ(s.param("iterations")->kind, ParamKind::Int);
  EXPECT_EQ(std::get<std::string>(s.param("method")->default_value), "dijkstra");
  EXPECT_EQ(s.param("method")->choices, (std::vector<std::string>{"floyd", "dijkstra"}));
  EXPECT_EQ(s.param("log")->kind, ParamKind::OutputPath);
  EXPECT_FALSE(s.param("log")->required);
  EXPECT_EQ(s.param("device")->kind, ParamKind::Device);
  EXPECT_EQ(e->origin, "libgemflow_reg.so");
  EXPECT_EQ(r.node_ids(), (std::vector<std::string>{"reg.smooth"}));
  EXPECT_NE(r.find_type("Matrix<f64>"), nullptr);
}

TEST(Registry, DuplicateNodeIdNamesBothOrigins) {
  Registry r;
  r.add_node<Smooth>("a.so");
  try {
    r.add_node<Smooth>("b.so");
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_STREQ(e.what(), "duplicate node id 'reg.smooth': registered by a.so and by b.so");
  }
}

TEST(Registry, MalformedSpecsAreRefused) {
  Registry r;
  EXPECT_THAT([&] { r.add_node<BadPort>("x.so"); },
              ::testing::ThrowsMessage<Error>(HasSubstr("port 'in' has unregistered type 'Unregistered': register it "
                                                        "before the node, with `r.add_type<T>()`")));
  EXPECT_THAT([&] { r.add_node<BadDefault>("x.so"); },
              ::testing::ThrowsMessage<Error>(HasSubstr("default of parameter 'x' is invalid: 5.0 is above")));
  EXPECT_THAT([&] { r.add_node<TwiceParam>("x.so"); },
              ::testing::ThrowsMessage<Error>(HasSubstr("parameter name 'a' declared twice")));
  EXPECT_THAT([&] { r.add_node<NoNamespace>("x.so"); }, ::testing::ThrowsMessage<Error>(HasSubstr("not namespaced")));
  // parameter rules that name a missing parameter or an invalid value, or that the defaults break
  EXPECT_THAT([&] { r.add_node<BadRule>("x.so"); },
              ::testing::ThrowsMessage<Error>(HasSubstr("a parameter rule names 'y', which is not a parameter")));
  EXPECT_THAT([&] { r.add_node<BadRuleValue>("x.so"); },
              ::testing::ThrowsMessage<Error>(HasSubstr("a rule on parameter 'x' names an invalid value: 5")));
  EXPECT_THAT(
      [&] { r.add_node<DefaultsBreakRule>("x.so"); },
      ::testing::ThrowsMessage<Error>(HasSubstr("its parameter defaults break its own rule: b = 1 needs 'a: true'")));
  // break-test: the plugin's load failure said "registration failed: no licence file" alone
  EXPECT_THAT([&] { r.add_node<ThrowingCtor>("x.so"); },
              ::testing::ThrowsMessage<Error>(
                  ::testing::StrEq("node type 'reg.throwing': its constructor threw: no licence file")));
  EXPECT_TRUE(r.node_ids().empty());
}

// break-test: a Param<float> default of 0.1f was shown (gemflow nodes, Studio, saved files) as
// 0.10000000149011612; it is 0.1, and reads back as 0.1f
TEST(Registry, FloatDefaultsAreTheirShortestDecimal) {
  Registry r;
  r.add_node<FloatParam>("x.so");
  const ParamValue& d = r.find_node("reg.float")->spec.param("f")->default_value;
  EXPECT_EQ(std::get<double>(d), 0.1);
  EXPECT_EQ(format_param(d), "0.1");
  FloatParam n;
  EXPECT_EQ(*n.f, 0.1f);
  n.set_param("f", 0.1);
  EXPECT_EQ(*n.f, 0.1f);
}

// break-test: set_param("iterations", 1.5) was accepted and execute() then failed with
// "std::get: wrong index for variant"; a value of the wrong kind is refused, naming the parameter.
TEST(Registry, SetParamChecksTheKind) {
  Smooth n;
  EXPECT_THAT([&] { n.set_param("iterations", 1.5); },
              ::testing::ThrowsMessage<Error>(::testing::StrEq("parameter 'iterations' takes int values, not 1.5")));
  EXPECT_THAT([&] { n.set_param("tolerance", std::string("x")); },
              ::testing::ThrowsMessage<Error>(HasSubstr("parameter 'tolerance' takes float values")));
  EXPECT_THAT([&] { n.set_param("method", true); },
              ::testing::ThrowsMessage<Error>(HasSubstr("parameter 'method' takes choice values, not true")));
  n.set_param("iterations", std::int64_t{7});
  n.set_param("tolerance", std::int64_t{2});  // an integer for a float: accepted
  n.set_param("method", std::string("floyd"));
}

// A name is one type: registered again with the same layout it is a no-op (the first origin
// stays); with another layout it is refused (types_test.cpp, TypeLayout).
TEST(Registry, DataTypeFromTwoOrigins) {
  Registry r;
  EXPECT_NO_THROW(r.add_type<Table>("core"));
  EXPECT_NO_THROW(r.add_type<Table>("other.so"));
  EXPECT_EQ(r.find_type("Table")->origin, "core");
  TypeInfo other = *r.find_type("Table");
  other.origin = "other.so";
  other.layout.version = 2;
  EXPECT_THAT([&] { r.add_type(other); },
              ::testing::ThrowsMessage<Error>(HasSubstr("data type 'Table' is defined differently by core")));
}

TEST(NearestName, SuggestsCloseNamesOnly) {
  const std::vector<std::string> ids = {"distgeom.embed", "distgeom.triangle_smoothing", "io.read_structure"};
  EXPECT_EQ(nearest_name("distgeom.embd", ids), "distgeom.embed");
  EXPECT_EQ(nearest_name("DistGeom.Embed", ids), "distgeom.embed");  // case-insensitive
  EXPECT_EQ(nearest_name("io.read_structur", ids), "io.read_structure");
  EXPECT_EQ(nearest_name("triangle", ids), "");  // too far from everything
  EXPECT_EQ(nearest_name("x", {}), "");
  EXPECT_EQ(nearest_name("cont", {"count", "scale"}), "count");
  EXPECT_EQ(nearest_name("zzzz", {"count", "scale"}), "");
}

// The pruned search (length gap, smallest row entry) gives what a full edit distance to every
// candidate gives, first best on ties; and a 10⁵-character name against 2000 candidates is
// answered without |name| × Σ|candidate| steps (a fuzzer's workflow took seconds of hints).
TEST(NearestName, PrunedSearchEqualsTheFullOneAndLongNamesAreCheap) {
  const auto full = [](std::string_view name, const std::vector<std::string>& cands) {
    std::string best;
    std::size_t best_d = SIZE_MAX;
    for (const auto& c : cands) {
      std::vector<std::size_t> prev(c.size() + 1), cur(c.size() + 1);
      for (std::size_t j = 0; j <= c.size(); ++j) prev[j] = j;
      for (std::size_t i = 1; i <= name.size(); ++i) {
        cur[0] = i;
        for (std::size_t j = 1; j <= c.size(); ++j)
          cur[j] = std::min({prev[j] + 1, cur[j - 1] + 1,
                             prev[j - 1] + (std::tolower(name[i - 1]) == std::tolower(c[j - 1]) ? 0 : 1)});
        std::swap(prev, cur);
      }
      if (prev[c.size()] < best_d) best_d = prev[c.size()], best = c;
    }
    return best_d <= std::max<std::size_t>(2, std::max(name.size(), best.size()) / 3) ? best : std::string();
  };
  std::mt19937 rng(7);
  const auto word = [&](std::size_t len) {
    std::string w;
    for (std::size_t k = 0; k < len; ++k) w += "abcde_."[rng() % 7];
    return w;
  };
  for (int t = 0; t < 300; ++t) {
    std::vector<std::string> cands;
    for (int c = 0; c < 12; ++c) cands.push_back(word(1 + rng() % 14));
    const std::string name = rng() % 2 ? word(1 + rng() % 14) : cands[rng() % cands.size()] + word(rng() % 3);
    EXPECT_EQ(nearest_name(name, cands), full(name, cands)) << "'" << name << "'";
  }
  std::vector<std::string> many;
  for (int c = 0; c < 2000; ++c) many.push_back("node_" + std::to_string(c));
  EXPECT_EQ(nearest_name(std::string(100000, 'x'), many), "");
  EXPECT_EQ(nearest_name("node_1999x", many), "node_1999");
}

}  // namespace
}  // namespace gemflow
