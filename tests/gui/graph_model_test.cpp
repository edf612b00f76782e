// GraphModel: undo/redo restores the exact workflow text, links are refused with a reason and
// leave the model unchanged, paste remaps ids, shipped workflows round-trip. No display needed.
#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <string>

#include <gtest/gtest.h>

#include <gemflow/executor.hpp>
#include <gemflow/plugin_loader.hpp>
#include <gemflow/types.hpp>
#include <gemflow/workflow_limits.hpp>

#include "model/graph_model.hpp"

namespace gs = gemflow::studio;
using gemflow::Matrix;

namespace {

enum class Method { Fast, Exact };

struct Const final : gemflow::Node {
  static gemflow::NodeInfo info() { return {.id = "t.const", .title = "Constant", .category = "Test"}; }
  gemflow::Output<Matrix<double>> value{this, "value", "The constant"};
  gemflow::Param<double> x{this, "x", 1.0, {.min = -10, .max = 10, .unit = "Å", .doc = "value"}};
  gemflow::Param<int> rows{this, "rows", 1, {.min = 1, .max = 100}};
  gemflow::Choice<Method> method{this, "method", Method::Fast, {{Method::Fast, "fast"}, {Method::Exact, "exact"}}};
  void execute(gemflow::NodeContext&) override { value.set(Matrix<double>(1, 1, *x)); }
};

struct Add final : gemflow::Node {
  static gemflow::NodeInfo info() { return {.id = "t.add", .title = "Add", .category = "Test"}; }
  gemflow::Input<Matrix<double>> a{this, "a", "left"};
  gemflow::Input<Matrix<double>> b{this, "b", "right"};
  gemflow::Output<Matrix<double>> sum{this, "sum", "a + b"};
  void execute(gemflow::NodeContext&) override { sum.set(Matrix<double>(1, 1, (*a)(0, 0) + (*b)(0, 0))); }
};

struct Bounds final : gemflow::Node {
  static gemflow::NodeInfo info() { return {.id = "t.bounds", .title = "Bounds", .category = "Test"}; }
  gemflow::Input<gemflow::DistanceBounds> bounds{this, "bounds", "bounds"};
  gemflow::Output<gemflow::Structure> structure{this, "structure", "coords"};
  void execute(gemflow::NodeContext&) override {}
};

class GraphModelTest : public ::testing::Test {
 protected:
  GraphModelTest() {
    reg.add_node<Const>("test");
    reg.add_node<Add>("test");
    reg.add_node<Bounds>("test");
  }
  gemflow::Registry reg;
  gs::GraphModel m{reg};

  /// c1, c2 → add; add.sum → add2.a
  void build_chain() {
    ASSERT_EQ(m.add_node("t.const", {0, 0}), "const");
    ASSERT_EQ(m.add_node("t.const", {0, 100}), "const_2");
    ASSERT_EQ(m.add_node("t.add", {200, 50}), "add");
    ASSERT_EQ(m.add_node("t.add", {400, 50}), "add_2");
    ASSERT_TRUE(m.connect("const", "value", "add", "a").ok());
    ASSERT_TRUE(m.connect("const_2", "value", "add", "b").ok());
    ASSERT_TRUE(m.connect("add", "sum", "add_2", "a").ok());
  }
};

TEST_F(GraphModelTest, UndoRedoRestoresExactText) {
  std::vector<std::string> texts{m.to_yaml()};
  build_chain();
  // 4 add_node + 3 connect = 7 steps so far; record every state.
  texts.clear();
  for (int i = m.undo_stack()->count(); i >= 0; --i) {
    m.undo_stack()->setIndex(i);
    texts.insert(texts.begin(), m.to_yaml());
  }
  ASSERT_EQ(texts.size(), 8u);
  m.undo_stack()->setIndex(7);
  ASSERT_TRUE(m.set_param("const", "x", 2.5).ok());
  ASSERT_TRUE(m.set_param_text("const", "method", "exact").ok());
  m.move_nodes({{"add", {210, 60}}, {"add_2", {410, 60}}});
  m.remove_nodes({"add"});
  EXPECT_EQ(m.workflow().links.size(), 0u);  // its three links went with it
  m.duplicate({"const"});
  const std::string last = m.to_yaml();
  const int n = m.undo_stack()->count();
  std::vector<std::string> all;
  for (int i = 0; i <= n; ++i) {
    m.undo_stack()->setIndex(i);
    all.push_back(m.to_yaml());
  }
  for (int i = 0; i <= 7; ++i) EXPECT_EQ(all[i], texts[i]) << "state " << i;
  // Walk back down and up again: every state is identical text.
  for (int i = n; i >= 0; --i) {
    m.undo_stack()->setIndex(i);
    EXPECT_EQ(m.to_yaml(), all[i]) << "undo to " << i;
  }
  m.undo_stack()->setIndex(n);
  EXPECT_EQ(m.to_yaml(), last);
  // Removing "add" restores its links at their old positions on undo.
  m.undo_stack()->setIndex(n - 1);  // before the duplicate
  EXPECT_EQ(m.workflow().nodes.size(), 3u);
  m.undo_stack()->setIndex(n - 2);  // before the delete
  EXPECT_EQ(m.workflow().nodes.size(), 4u);
  ASSERT_EQ(m.workflow().links.size(), 3u);
  EXPECT_EQ(m.workflow().links[0].str(), "const.value -> add.a");
  EXPECT_EQ(m.workflow().links[2].str(), "add.sum -> add_2.a");
}

TEST_F(GraphModelTest, MovesMergeIntoOneStep) {
  m.add_node("t.const", {0, 0});
  const int before = m.undo_stack()->count();
  for (int i = 1; i <= 20; ++i) m.move_nodes({{"const", {double(i), double(2 * i)}}});
  EXPECT_EQ(m.undo_stack()->count(), before + 1);
  EXPECT_EQ(*m.workflow().find("const")->pos, (gs::Pos{20, 40}));
  m.undo_stack()->undo();
  EXPECT_EQ(*m.workflow().find("const")->pos, (gs::Pos{0, 0}));
}

TEST_F(GraphModelTest, InvalidParamsNeverReachTheModel) {
  m.add_node("t.const", {0, 0});
  const std::string text = m.to_yaml();
  const int steps = m.undo_stack()->count();
  auto e = m.set_param("const", "x", 12.0);
  EXPECT_NE(e.error.find("above the maximum 10"), std::string::npos) << e.error;
  e = m.set_param_text("const", "rows", "abc");
  EXPECT_NE(e.error.find("expected an integer"), std::string::npos) << e.error;
  e = m.set_param_text("const", "rows", "0");
  EXPECT_NE(e.error.find("below the minimum 1"), std::string::npos) << e.error;
  e = m.set_param_text("const", "method", "slow");
  EXPECT_NE(e.error.find("not one of: fast, exact"), std::string::npos) << e.error;
  e = m.set_param("const", "rowz", std::int64_t{3});
  EXPECT_NE(e.error.find("did you mean 'rows'"), std::string::npos) << e.error;
  EXPECT_EQ(m.to_yaml(), text);
  EXPECT_EQ(m.undo_stack()->count(), steps);
  // An integer typed into a float parameter is stored as a float.
  ASSERT_TRUE(m.set_param_text("const", "x", "3").ok());
  EXPECT_EQ(*m.param_value("const", "x"), gemflow::ParamValue{3.0});
  // Editing the same parameter again merges into one undo step.
  ASSERT_TRUE(m.set_param_text("const", "x", "4").ok());
  EXPECT_EQ(m.undo_stack()->count(), steps + 1);
  m.undo_stack()->undo();
  EXPECT_EQ(m.to_yaml(), text);
}

TEST_F(GraphModelTest, RefusedLinksLeaveTheModelUnchanged) {
  build_chain();
  m.add_node("t.bounds", {0, 300});
  const std::string text = m.to_yaml();
  const int steps = m.undo_stack()->count();
  struct Case {
    const char *fn, *fp, *tn, *tp, *reason;
  } cases[] = {
      {"const", "value", "bounds", "bounds",
       "types differ: const.value gives Matrix<f64>, bounds.bounds takes DistanceBounds"},
      {"add", "a", "add_2", "b", "'add.a' is an input"},
      {"const", "value", "const_2", "value", "'const_2.value' is an output"},
      {"const", "value", "add", "a", "input add.a is already connected to const.value"},
      {"const", "nope", "add_2", "b", "node 'const' has no output 'nope'"},
      {"ghost", "value", "add_2", "b", "no node 'ghost'"},
      {"add_2", "sum", "add", "b", "input add.b is already connected"},
      {"add_2", "sum", "add_2", "b", "a node cannot feed itself"},
  };
  for (const auto& c : cases) {
    auto r = m.connect(c.fn, c.fp, c.tn, c.tp);
    EXPECT_FALSE(r.ok()) << c.reason;
    EXPECT_NE(r.reason.find(c.reason), std::string::npos) << "got: " << r.reason;
    EXPECT_EQ(m.to_yaml(), text);
    EXPECT_EQ(m.undo_stack()->count(), steps);
  }
  // A cycle: free add.b then try add_2.sum -> add.b (add -> add_2 -> add).
  ASSERT_TRUE(m.disconnect(m.workflow().links[1]));
  const std::string freed = m.to_yaml();
  auto r = m.connect("add_2", "sum", "add", "b");
  EXPECT_EQ(r.reason, "would close the cycle add_2 -> add -> add_2");
  EXPECT_EQ(m.to_yaml(), freed);
}

TEST_F(GraphModelTest, PasteRemapsIdsAndLinks) {
  build_chain();
  const std::string snippet = m.copy({"const", "add", "const_2"});
  ASSERT_FALSE(snippet.empty());
  const std::string before = m.to_yaml();
  std::string err;
  auto ids = m.paste(snippet, {500, 0}, &err);
  ASSERT_TRUE(err.empty()) << err;
  ASSERT_EQ(ids.size(), 3u);
  EXPECT_EQ(ids[0], "const_3");
  EXPECT_EQ(ids[1], "const_4");
  EXPECT_EQ(ids[2], "add_3");
  // The two internal links follow the new ids; the link to add_2 (not copied) does not.
  const auto& links = m.workflow().links;
  ASSERT_EQ(links.size(), 5u);
  EXPECT_EQ(links[3].str(), "const_3.value -> add_3.a");
  EXPECT_EQ(links[4].str(), "const_4.value -> add_3.b");
  EXPECT_EQ(*m.workflow().find("add_3")->pos, (gs::Pos{700, 50}));
  m.undo_stack()->undo();  // one step
  EXPECT_EQ(m.to_yaml(), before);
  // Garbage is refused with a reason and changes nothing.
  auto none = m.paste("nodes: [1, 2", {0, 0}, &err);
  EXPECT_TRUE(none.empty());
  EXPECT_FALSE(err.empty());
  EXPECT_EQ(m.to_yaml(), before);
}

TEST_F(GraphModelTest, RenameNodeCarriesLinksAndUndoes) {
  build_chain();
  const std::string before = m.to_yaml();
  std::vector<std::pair<std::string, std::string>> renamed;
  QObject::connect(&m, &gs::GraphModel::node_renamed,
                   [&](const QString& a, const QString& b) { renamed.emplace_back(a.toStdString(), b.toStdString()); });
  ASSERT_EQ(m.rename_node("add", "total"), "");
  ASSERT_EQ(renamed.size(), 1u);
  EXPECT_EQ(renamed[0], std::make_pair(std::string("add"), std::string("total")));
  EXPECT_EQ(m.workflow().find("add"), nullptr);
  ASSERT_NE(m.workflow().find("total"), nullptr);
  std::vector<std::string> links;
  for (const auto& l : m.workflow().links) links.push_back(l.str());
  EXPECT_EQ(links,
            (std::vector<std::string>{"const.value -> total.a", "const_2.value -> total.b", "total.sum -> add_2.a"}));
  // Position, type and file order are kept: only the id changes in the text.
  std::string expected = before;
  for (std::size_t at = 0; (at = expected.find("add:", at)) != std::string::npos;) {
    if (at == 0 || expected[at - 1] == ' ') expected.replace(at, 3, "total");
    at += 3;
  }
  for (const char* l : {"add.sum", "add.a", "add.b"}) {
    const std::string from = l, to = "total" + from.substr(3);
    for (std::size_t at = 0; (at = expected.find(from, at)) != std::string::npos; at += to.size())
      if (at == 0 || expected[at - 1] == ' ') expected.replace(at, from.size(), to);
  }
  EXPECT_EQ(m.to_yaml(), expected);
  m.undo_stack()->undo();
  EXPECT_EQ(m.to_yaml(), before);
  m.undo_stack()->redo();
  EXPECT_EQ(m.to_yaml(), expected);
  // Refused: the format's id rule and uniqueness; the model does not change.
  const std::string now = m.to_yaml();
  const int steps = m.undo_stack()->count();
  EXPECT_NE(m.rename_node("total", "2fast").find("invalid node id"), std::string::npos);
  EXPECT_NE(m.rename_node("total", "a.b").find("invalid node id"), std::string::npos);
  EXPECT_NE(m.rename_node("total", "").find("empty"), std::string::npos);
  EXPECT_NE(m.rename_node("total", "const").find("already exists"), std::string::npos);
  EXPECT_NE(m.rename_node("nope", "x").find("no node"), std::string::npos);
  EXPECT_EQ(m.rename_node("total", "total"), "");  // no-op, no undo step
  EXPECT_EQ(m.to_yaml(), now);
  EXPECT_EQ(m.undo_stack()->count(), steps);
  // What the loader accepts, the model accepts.
  EXPECT_EQ(m.rename_node("total", "_sum-2"), "");
}

TEST_F(GraphModelTest, NameAndDescriptionAreUndoable) {
  const std::string before = m.to_yaml();
  m.set_name("my-flow");
  m.set_description("Adds two constants.");
  EXPECT_EQ(m.workflow().name, "my-flow");
  EXPECT_NE(m.to_yaml().find("description: Adds two constants."), std::string::npos) << m.to_yaml();
  EXPECT_TRUE(m.modified());
  m.undo_stack()->undo();
  EXPECT_EQ(m.workflow().description, "");
  m.undo_stack()->undo();
  EXPECT_EQ(m.to_yaml(), before);
  EXPECT_FALSE(m.modified());
}

TEST_F(GraphModelTest, SaveAndLoadKeepLayout) {
  build_chain();
  ASSERT_TRUE(m.connect("const", "value", "add_2", "b").ok());
  ASSERT_TRUE(m.set_param("const", "x", -2.0).ok());
  const auto dir = std::filesystem::path(GEMFLOW_BINARY_DIR) / "gui_test_tmp";
  std::filesystem::create_directories(dir);
  const auto file = dir / "chain.yaml";
  m.save(file);
  EXPECT_FALSE(m.modified());
  gs::GraphModel m2{reg};
  auto diags = m2.load(file);
  for (const auto& d : diags) EXPECT_NE(d.severity, gemflow::Diagnostic::Severity::Error) << d.str();
  EXPECT_EQ(m2.to_yaml(), m.to_yaml());
  EXPECT_EQ(*m2.workflow().find("add_2")->pos, (gs::Pos{400, 50}));
  EXPECT_FALSE(m2.modified());
}

// Every shipped workflow loads (with the in-tree plugins) and saves to the same text, and an
// edit followed by undo gives that text back.
TEST_F(GraphModelTest, InsertIntoALinkIsOneStepAndRefusedWhenTypesDiffer) {
  build_chain();
  const std::string mid = m.add_node("t.add", {300, 200});
  const std::string with_mid = m.to_yaml();
  gemflow::Link l;
  l.from_node = "add";
  l.from_port = "sum";
  l.to_node = "add_2";
  l.to_port = "a";
  ASSERT_TRUE(m.insert_into_link(l, mid).ok());
  EXPECT_EQ(m.link_into(mid, "a")->from_node, "add");
  EXPECT_EQ(m.link_into("add_2", "a")->from_node, mid);
  m.undo_stack()->undo();
  EXPECT_EQ(m.to_yaml(), with_mid);
  // A node without a Matrix input and output: refused, nothing changes.
  const std::string b = m.add_node("t.bounds", {300, 300});
  const std::string with_b = m.to_yaml();
  EXPECT_NE(m.insert_into_link(l, b).reason.find("no free input and output of type Matrix<f64>"), std::string::npos);
  EXPECT_EQ(m.to_yaml(), with_b);
}

TEST_F(GraphModelTest, AddNodeLinkedTakesTheInputsPlaceInOneStep) {
  build_chain();
  const std::string before = m.to_yaml();
  // From an output: the new node's first Matrix input.
  const std::string a = m.add_node_linked("t.add", {600, 0}, "add_2", "sum", true);
  ASSERT_FALSE(a.empty());
  EXPECT_EQ(m.link_into(a, "a")->from_node, "add_2");
  // Into a connected input: the old link is replaced.
  const std::string c = m.add_node_linked("t.const", {100, 300}, "add", "a", false);
  EXPECT_EQ(m.link_into("add", "a")->from_node, c);
  // No compatible port: nothing.
  EXPECT_EQ(m.add_node_linked("t.bounds", {0, 0}, "add", "sum", true), "");
  m.undo_stack()->undo();
  m.undo_stack()->undo();
  EXPECT_EQ(m.to_yaml(), before);
  EXPECT_EQ(m.compatible_types("Matrix<f64>", true), std::vector<std::string>{"t.add"});
}

TEST_F(GraphModelTest, BypassGroupsAndNotesAreUndoableAndFollowNodes) {
  build_chain();
  const std::string before = m.to_yaml();
  m.set_bypass({"add", "add_2"}, true);
  EXPECT_TRUE(m.workflow().find("add")->bypass);
  EXPECT_NE(m.to_yaml().find("add_2: {type: t.add, version: 1, bypass: true}"), std::string::npos) << m.to_yaml();
  m.undo_stack()->undo();  // both, one step
  EXPECT_EQ(m.to_yaml(), before);
  m.add_group({"const", "const_2"}, "Inputs");
  m.add_group({"const_2", "add"}, "Middle");  // const_2 leaves the first group
  ASSERT_EQ(m.workflow().groups.size(), 2u);
  EXPECT_EQ(m.workflow().groups[0].nodes, std::vector<std::string>{"const"});
  m.add_note("hi", {5, 5});
  m.remove_nodes({"const"});  // the first group goes with its last member, in the same step
  EXPECT_EQ(m.workflow().groups.size(), 1u);
  m.undo_stack()->undo();
  EXPECT_EQ(m.workflow().groups.size(), 2u);
  EXPECT_EQ(m.rename_node("add", "plus"), "");
  EXPECT_EQ(m.workflow().groups[1].nodes, (std::vector<std::string>{"const_2", "plus"}));
  while (m.undo_stack()->canUndo() && m.to_yaml() != before) m.undo_stack()->undo();
  EXPECT_EQ(m.to_yaml(), before);
  EXPECT_TRUE(m.workflow().groups.empty());
  EXPECT_TRUE(m.workflow().notes.empty());
}

TEST(LayeredLayout, SourcesLeftNoOverlapAndCrossingsRemoved) {
  // Two sources feeding two sinks crosswise in file order: the layout uncrosses them.
  gemflow::Workflow wf;
  for (const char* id : {"s1", "s2", "t1", "t2"}) wf.nodes.push_back({.id = id, .type = "x"});
  auto link = [&](const char* a, const char* b) {
    gemflow::Link l;
    l.from_node = a;
    l.from_port = "o";
    l.to_node = b;
    l.to_port = "i";
    wf.links.push_back(l);
  };
  link("s1", "t2");
  link("s2", "t1");
  std::map<std::string, gs::Pos> file_order{{"s1", {0, 0}}, {"s2", {0, 100}}, {"t1", {300, 0}}, {"t2", {300, 100}}};
  EXPECT_EQ(gs::count_crossings(wf, file_order), 1u);
  const auto pos = gs::layered_layout(
      wf, [](const std::string&) { return 80.0; }, 190);
  EXPECT_EQ(gs::count_crossings(wf, pos), 0u);
  EXPECT_LT(pos.at("s1")[0], pos.at("t1")[0]);
  EXPECT_EQ(pos.at("s1")[0], pos.at("s2")[0]);
  EXPECT_GE(std::abs(pos.at("s1")[1] - pos.at("s2")[1]), 80.0);  // stacked, not overlapping
}

TEST(ShippedWorkflows, RoundTrip) {
  namespace fs = std::filesystem;
  const fs::path dir = fs::path(GEMFLOW_SOURCE_DIR) / "workflows";
  std::vector<fs::path> files;
  if (fs::is_directory(dir))
    for (const auto& e : fs::directory_iterator(dir))
      if (e.path().extension() == ".yaml") files.push_back(e.path());
  if (files.empty()) GTEST_SKIP() << "no workflows/*.yaml yet";
  gemflow::Registry reg;
  gemflow::PluginHost host(reg);
  host.load_directory(GEMFLOW_PLUGIN_BUILD_DIR);
  for (const auto& f : files) {
    SCOPED_TRACE(f.string());
    gs::GraphModel m{reg};
    auto diags = m.load(f);
    ASSERT_FALSE(m.workflow().nodes.empty()) << (diags.empty() ? "" : diags.front().str());
    const std::string text = m.to_yaml();
    auto again = gemflow::parse_workflow(text, f, reg);
    ASSERT_TRUE(again.workflow);
    EXPECT_EQ(gemflow::to_yaml(*again.workflow), text);
    const auto& first = m.workflow().nodes.front();
    m.move_nodes({{first.id, {12345, 678}}});
    m.remove_nodes({first.id});
    m.undo_stack()->setIndex(0);
    EXPECT_EQ(m.to_yaml(), text);
  }
}

// A sub-workflow node shows the ports its inner file exposes; pointing it at another file
// changes them, and undo brings the first ones back.
TEST_F(GraphModelTest, SubWorkflowNodesHaveTheInnerFilesPorts) {
  namespace fs = std::filesystem;
  const fs::path dir = fs::temp_directory_path() / ("gemflow_gm_sub_" + std::to_string(::getpid()));
  fs::create_directories(dir);
  std::ofstream(dir / "one.yaml") << "gemflow: 1\nnodes:\n  add: {type: t.add}\ninputs: {left: add.a, right: add.b}\n"
                                     "outputs: {sum: add.sum}\n";
  std::ofstream(dir / "two.yaml") << "gemflow: 1\nnodes:\n  c: {type: t.const}\noutputs: {value: c.value}\n";
  std::ofstream(dir / "w.yaml") << "gemflow: 1\nnodes:\n  sub: {type: workflow, params: {path: one.yaml}}\n";
  const auto diags = m.load(dir / "w.yaml");
  const gemflow::NodeSpec* s = m.spec_of("sub");
  ASSERT_NE(s, nullptr);
  ASSERT_EQ(s->inputs.size(), 2u);
  EXPECT_EQ(s->inputs[0].type, "Matrix<f64>");
  EXPECT_EQ(s->outputs.at(0).name, "sum");
  ASSERT_TRUE(m.set_param("sub", "path", std::string("two.yaml")).ok());
  ASSERT_NE(m.spec_of("sub"), nullptr);
  EXPECT_TRUE(m.spec_of("sub")->inputs.empty());
  EXPECT_EQ(m.spec_of("sub")->outputs.at(0).name, "value");
  m.undo_stack()->undo();
  EXPECT_EQ(m.spec_of("sub")->inputs.size(), 2u);
  fs::remove_all(dir);
}

// ---- sub-workflows: collapse, expand, reload ----------------------------------------------

namespace {
namespace fs = std::filesystem;

fs::path fresh_dir(const std::string& name) {
  const fs::path dir = fs::temp_directory_path() / ("gemflow_gm_" + name + "_" + std::to_string(::getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir);
  return dir;
}

std::string slurp(const fs::path& f) {
  std::ifstream in(f);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

/// c1 (1.5) and c2 (2) → add; add.sum and c3 (4) → total: total.sum = 7.5.
const char* kSumChain = R"(gemflow: 1
name: chain
nodes:
  c1: {type: t.const, params: {x: 1.5}}
  c2: {type: t.const, params: {x: 2}}
  add: {type: t.add}
  c3: {type: t.const, params: {x: 4}}
  total: {type: t.add}
links:
  - c1.value -> add.a
  - c2.value -> add.b
  - add.sum -> total.a
  - c3.value -> total.b
editor:
  c1: {pos: [0, 0]}
  c2: {pos: [0, 100]}
  add: {pos: [200, 50]}
  c3: {pos: [200, 200]}
  total: {pos: [400, 100]}
)";

/// The value of total.sum when `wf` runs headless (sub-workflows flattened by the executor).
double run_total(const gemflow::Workflow& wf, const gemflow::Registry& reg, const fs::path& out) {
  gemflow::RunOptions opt;
  opt.out_dir = out;
  opt.jobs = 1;
  const gemflow::RunResult r = gemflow::run_workflow(wf, reg, opt);
  for (const auto& d : r.diagnostics) ADD_FAILURE() << d.str();
  auto it = r.nodes.find("total");
  if (it == r.nodes.end() || !it->second.outputs.count("sum")) {
    ADD_FAILURE() << "total did not run";
    return NAN;
  }
  return (*it->second.outputs.at("sum").as<Matrix<double>>())(0, 0);
}
}  // namespace

// Collapsing c2 and add: the inner file exposes the link from c1 as an input and add.sum as an
// output, the outer graph has one workflow node wired the same way, the whole is one undo step,
// and the collapsed workflow runs headless to the same result as the original.
TEST_F(GraphModelTest, CollapseWritesTheSubworkflowAndRunsTheSame) {
  const fs::path dir = fresh_dir("collapse");
  std::ofstream(dir / "w.yaml") << kSumChain;
  m.load(dir / "w.yaml");
  const std::string before = m.to_yaml();
  const double expected = run_total(m.workflow(), reg, dir / "out0");
  EXPECT_DOUBLE_EQ(expected, 7.5);

  const int steps = m.undo_stack()->count();
  const auto r = m.collapse_to_subworkflow({"add", "c2"}, dir / "parts" / "adder.yaml");
  ASSERT_TRUE(r.ok()) << r.error;
  ASSERT_EQ(r.nodes, std::vector<std::string>{"adder"});
  EXPECT_EQ(m.undo_stack()->count(), steps + 1);  // one step

  // The inner file: the two nodes, their link, the boundary as inputs/outputs.
  const std::string inner = slurp(dir / "parts" / "adder.yaml");
  gemflow::LoadResult lr = gemflow::load_workflow(dir / "parts" / "adder.yaml", reg);
  ASSERT_TRUE(lr.ok()) << inner;
  const gemflow::Workflow& iw = *lr.workflow;
  ASSERT_EQ(iw.nodes.size(), 2u);
  EXPECT_EQ(iw.nodes[0].id, "c2");
  EXPECT_EQ(iw.nodes[1].id, "add");
  ASSERT_EQ(iw.links.size(), 1u);
  EXPECT_EQ(iw.links[0].str(), "c2.value -> add.b");
  ASSERT_EQ(iw.inputs.size(), 1u);
  EXPECT_EQ(iw.inputs[0].name, "a");
  EXPECT_EQ(iw.inputs[0].targets, (std::vector<std::pair<std::string, std::string>>{{"add", "a"}}));
  ASSERT_EQ(iw.outputs.size(), 1u);
  EXPECT_EQ(iw.outputs[0].name, "sum");
  EXPECT_EQ(iw.outputs[0].targets, (std::vector<std::pair<std::string, std::string>>{{"add", "sum"}}));

  // The outer graph: the node runs the file by a relative path, wired through its ports.
  const gemflow::NodeInstance* n = m.workflow().find("adder");
  ASSERT_NE(n, nullptr);
  EXPECT_EQ(n->type, "workflow");
  EXPECT_EQ(std::get<std::string>(*n->param("path")), "parts/adder.yaml");
  EXPECT_EQ(m.workflow().find("add"), nullptr);
  EXPECT_EQ(m.workflow().find("c2"), nullptr);
  std::vector<std::string> links;
  for (const auto& l : m.workflow().links) links.push_back(l.str());
  EXPECT_EQ(links, (std::vector<std::string>{"c3.value -> total.b", "c1.value -> adder.a", "adder.sum -> total.a"}));
  EXPECT_TRUE(m.problems().empty());
  EXPECT_DOUBLE_EQ(run_total(m.workflow(), reg, dir / "out1"), expected);

  // Saved and loaded again (as `gemflow run` would): same result.
  m.save(dir / "w.yaml");
  gemflow::LoadResult again = gemflow::load_workflow(dir / "w.yaml", reg);
  ASSERT_TRUE(again.ok());
  EXPECT_DOUBLE_EQ(run_total(*again.workflow, reg, dir / "out2"), expected);

  // One undo brings the original back exactly; redo collapses again.
  m.undo_stack()->undo();
  EXPECT_EQ(m.to_yaml(), before);
  m.undo_stack()->redo();
  EXPECT_NE(m.workflow().find("adder"), nullptr);
  fs::remove_all(dir);
}

// One outside output feeding two selected inputs becomes one exposed input; an inner output read
// by two outside nodes one exposed output; the names stay unique.
TEST_F(GraphModelTest, CollapseSharesExposedPortsPerSource) {
  const fs::path dir = fresh_dir("collapse2");
  std::ofstream(dir / "w.yaml") << R"(gemflow: 1
nodes:
  c: {type: t.const}
  x: {type: t.add}
  y: {type: t.add}
  u: {type: t.add}
links:
  - c.value -> x.a
  - c.value -> x.b
  - x.sum -> y.a
  - c.value -> y.b
  - y.sum -> u.a
  - y.sum -> u.b
)";
  m.load(dir / "w.yaml");
  const auto r = m.collapse_to_subworkflow({"x", "y"}, dir / "xy.yaml");
  ASSERT_TRUE(r.ok()) << r.error;
  gemflow::LoadResult lr = gemflow::load_workflow(dir / "xy.yaml", reg);
  ASSERT_TRUE(lr.ok());
  ASSERT_EQ(lr.workflow->inputs.size(), 1u);
  EXPECT_EQ(lr.workflow->inputs[0].targets.size(), 3u);  // x.a, x.b, y.b
  ASSERT_EQ(lr.workflow->outputs.size(), 1u);
  std::vector<std::string> links;
  for (const auto& l : m.workflow().links) links.push_back(l.str());
  EXPECT_EQ(links, (std::vector<std::string>{"c.value -> xy.a", "xy.sum -> u.a", "xy.sum -> u.b"}));
  EXPECT_TRUE(m.problems().empty());
  fs::remove_all(dir);
}

// A selection with an outside node between two of its nodes would give a node feeding itself:
// refused with the path, nothing written, the model unchanged.
TEST_F(GraphModelTest, CollapseRefusesASelectionThatWouldFeedItself) {
  const fs::path dir = fresh_dir("collapse_cycle");
  std::ofstream(dir / "w.yaml") << R"(gemflow: 1
nodes:
  c: {type: t.const}
  x: {type: t.add}
  y: {type: t.add}
  z: {type: t.add}
links:
  - c.value -> x.a
  - c.value -> x.b
  - x.sum -> y.a
  - c.value -> y.b
  - y.sum -> z.a
  - c.value -> z.b
)";
  m.load(dir / "w.yaml");
  const std::string before = m.to_yaml();
  const auto r = m.collapse_to_subworkflow({"x", "z"}, dir / "xz.yaml");
  EXPECT_FALSE(r.ok());
  EXPECT_NE(r.error.find("x -> y -> z"), std::string::npos) << r.error;
  EXPECT_NE(r.error.find("select y too"), std::string::npos) << r.error;
  EXPECT_FALSE(fs::exists(dir / "xz.yaml"));
  EXPECT_EQ(m.to_yaml(), before);
  EXPECT_EQ(m.undo_stack()->count(), 0);
  // with y selected too it works
  EXPECT_TRUE(m.collapse_to_subworkflow({"x", "y", "z"}, dir / "xyz.yaml").ok());
  EXPECT_TRUE(m.problems().empty());
  fs::remove_all(dir);
}

// Expanding the collapsed node puts the inner nodes back with prefixed ids, wired as before, and
// the result runs to the same value.
TEST_F(GraphModelTest, ExpandInlinesTheInnerNodes) {
  const fs::path dir = fresh_dir("expand");
  std::ofstream(dir / "w.yaml") << kSumChain;
  m.load(dir / "w.yaml");
  ASSERT_TRUE(m.collapse_to_subworkflow({"add", "c2"}, dir / "adder.yaml").ok());
  const std::string collapsed = m.to_yaml();
  const auto r = m.expand_subworkflow("adder");
  ASSERT_TRUE(r.ok()) << r.error;
  EXPECT_EQ(r.nodes, (std::vector<std::string>{"adder_c2", "adder_add"}));
  EXPECT_EQ(m.workflow().find("adder"), nullptr);
  std::vector<std::string> links;
  for (const auto& l : m.workflow().links) links.push_back(l.str());
  EXPECT_EQ(links, (std::vector<std::string>{"c3.value -> total.b", "adder_c2.value -> adder_add.b",
                                             "c1.value -> adder_add.a", "adder_add.sum -> total.a"}));
  EXPECT_TRUE(m.problems().empty());
  EXPECT_DOUBLE_EQ(run_total(m.workflow(), reg, dir / "out"), 7.5);
  m.undo_stack()->undo();
  EXPECT_EQ(m.to_yaml(), collapsed);
  EXPECT_FALSE(m.expand_subworkflow("total").ok());  // not a sub-workflow node
  fs::remove_all(dir);
}

// Ids Studio makes (a prefix and the inner id, a number suffix) stay within the loader's
// kMaxIdLength, so that the saved file loads back with every node; renaming to a longer id is
// refused with the rule.
TEST_F(GraphModelTest, GeneratedIdsStayWithinTheLengthTheLoaderReads) {
  const fs::path dir = fresh_dir("longids");
  std::ofstream(dir / "w.yaml") << kSumChain;
  m.load(dir / "w.yaml");
  ASSERT_TRUE(m.collapse_to_subworkflow({"add", "c2"}, dir / "adder.yaml").ok());
  const std::string long_id(gemflow::kMaxIdLength, 'a');
  ASSERT_EQ(m.rename_node("adder", long_id), "");
  const auto r = m.expand_subworkflow(long_id);
  ASSERT_TRUE(r.ok()) << r.error;
  ASSERT_EQ(r.nodes.size(), 2u);
  EXPECT_NE(r.nodes[0], r.nodes[1]);
  for (const auto& id : r.nodes) EXPECT_LE(id.size(), gemflow::kMaxIdLength) << id;
  const auto back = gemflow::parse_workflow(m.to_yaml(), dir / "w.yaml", reg);
  EXPECT_TRUE(back.ok());
  EXPECT_EQ(back.workflow->nodes.size(), m.workflow().nodes.size());
  EXPECT_NE(m.rename_node(r.nodes[0], long_id + "b").find("at most 128 characters"), std::string::npos);
  fs::remove_all(dir);
}

// A workflow node added without a file has no ports and its `path` parameter; choosing the file
// gives it the file's ports. Saving the inner file elsewhere and reloading refreshes them
// without an undo step.
TEST_F(GraphModelTest, NewSubworkflowNodeTakesItsPortsFromTheChosenFile) {
  const fs::path dir = fresh_dir("newsub");
  std::ofstream(dir / "inner.yaml") << "gemflow: 1\nnodes:\n  c: {type: t.const}\noutputs: {value: c.value}\n";
  std::ofstream(dir / "w.yaml") << "gemflow: 1\nnodes: {}\n";
  m.load(dir / "w.yaml");
  const std::string id = m.add_node("workflow", {10, 10});
  ASSERT_EQ(id, "subworkflow");
  const gemflow::NodeSpec* s = m.spec_of(id);
  ASSERT_NE(s, nullptr);
  EXPECT_TRUE(s->inputs.empty());
  EXPECT_TRUE(s->outputs.empty());
  ASSERT_NE(s->param("path"), nullptr);
  EXPECT_EQ(s->param("path")->kind, gemflow::ParamKind::InputPath);
  ASSERT_TRUE(m.set_param(id, "path", std::string("inner.yaml")).ok());
  ASSERT_EQ(m.spec_of(id)->outputs.size(), 1u);
  EXPECT_EQ(m.subworkflow_file(id), (dir / "inner.yaml").lexically_normal());

  // the inner file gains an input
  std::ofstream(dir / "inner.yaml") << "gemflow: 1\nnodes:\n  add: {type: t.add}\ninputs: {a: add.a, b: add.b}\n"
                                       "outputs: {sum: add.sum}\n";
  const int steps = m.undo_stack()->count();
  EXPECT_EQ(m.reload_subworkflows(dir / "inner.yaml"), std::vector<std::string>{id});
  EXPECT_EQ(m.spec_of(id)->inputs.size(), 2u);
  EXPECT_EQ(m.spec_of(id)->outputs.at(0).name, "sum");
  EXPECT_EQ(m.undo_stack()->count(), steps);
  EXPECT_TRUE(m.reload_subworkflows(dir / "w.yaml").empty());  // no node runs that file

  // linked from a port: the sub-workflow's first fitting input
  ASSERT_EQ(m.add_node("t.const", {0, 0}), "const");
  const std::string linked = m.add_node_linked("workflow", {200, 0}, "const", "value", true, "inner.yaml");
  ASSERT_FALSE(linked.empty());
  ASSERT_NE(m.link_into(linked, "a"), nullptr);
  EXPECT_EQ(m.link_into(linked, "a")->from_node, "const");
  fs::remove_all(dir);
}

// Renaming a node of a workflow used as a sub-workflow: the ports it exposes follow the node
// (the file stays valid), and undo renames them back.
TEST_F(GraphModelTest, RenamingANodeKeepsTheExposedPorts) {
  const fs::path dir = fresh_dir("rename_exposed");
  std::ofstream(dir / "inner.yaml") << "gemflow: 1\nnodes:\n  add: {type: t.add}\ninputs: {x: [add.a, add.b]}\n"
                                       "outputs: {total: add.sum}\n";
  m.load(dir / "inner.yaml");
  ASSERT_EQ(m.rename_node("add", "adder"), "");
  using Targets = std::vector<std::pair<std::string, std::string>>;
  EXPECT_EQ(m.workflow().inputs.at(0).targets, (Targets{{"adder", "a"}, {"adder", "b"}}));
  EXPECT_EQ(m.workflow().outputs.at(0).targets, (Targets{{"adder", "sum"}}));
  EXPECT_TRUE(m.problems().empty());
  m.save(dir / "inner.yaml");
  EXPECT_TRUE(gemflow::load_workflow(dir / "inner.yaml", reg).ok()) << slurp(dir / "inner.yaml");
  m.undo_stack()->undo();
  EXPECT_EQ(m.workflow().outputs.at(0).targets, (Targets{{"add", "sum"}}));
  fs::remove_all(dir);
}

// A sub-workflow chosen before the first save has an absolute path; the first save makes it
// relative to the new file and the node keeps its ports (the path is read against the new
// file's folder, not the current one). Saving elsewhere later keeps them too.
TEST_F(GraphModelTest, FirstSaveKeepsASubworkflowsPorts) {
  const fs::path dir = fresh_dir("firstsave");
  fs::create_directories(dir / "sub");
  fs::create_directories(dir / "elsewhere");
  std::ofstream(dir / "sub" / "inner.yaml") << "gemflow: 1\nnodes:\n  c: {type: t.const}\noutputs: {value: c.value}\n";
  const std::string id = m.add_subworkflow((dir / "sub" / "inner.yaml").string(), {0, 0});
  ASSERT_EQ(m.spec_of(id)->outputs.size(), 1u);
  m.save(dir / "w.yaml");
  EXPECT_EQ(std::get<std::string>(*m.workflow().find(id)->param("path")), "sub/inner.yaml");
  ASSERT_NE(m.spec_of(id), nullptr);
  EXPECT_EQ(m.spec_of(id)->outputs.size(), 1u);
  m.save(dir / "elsewhere" / "w.yaml");
  EXPECT_EQ(std::get<std::string>(*m.workflow().find(id)->param("path")), "../sub/inner.yaml");
  EXPECT_EQ(m.spec_of(id)->outputs.size(), 1u);
  EXPECT_TRUE(gemflow::load_workflow(dir / "elsewhere" / "w.yaml", reg).ok());
  fs::remove_all(dir);
}

TEST_F(GraphModelTest, SweepSectionIsUndoableAndSaved) {
  build_chain();
  gemflow::WorkflowSweep ws;
  ws.entries.push_back({"const.x", "1..3", {}, false, {}});
  ws.zip = false;
  m.set_sweep(ws);
  EXPECT_NE(m.to_yaml().find("sweep:\n  const.x: 1..3\n"), std::string::npos) << m.to_yaml();
  m.undo_stack()->undo();
  EXPECT_EQ(m.to_yaml().find("sweep:"), std::string::npos);
  m.undo_stack()->redo();
  EXPECT_EQ(m.workflow().sweep.entries.size(), 1u);
}

}  // namespace
