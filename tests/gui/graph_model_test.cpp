// GraphModel: undo/redo restores the exact workflow text, links are refused with a reason and
// leave the model unchanged, paste remaps ids, shipped workflows round-trip. No display needed.
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

#include <gtest/gtest.h>

#include <gemflow/plugin_loader.hpp>
#include <gemflow/types.hpp>

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
  void execute(gemflow::NodeContext&) override {}
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
      {"const", "value", "bounds", "bounds", "types differ: const.value gives Matrix<f64>, bounds.bounds takes DistanceBounds"},
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
  EXPECT_EQ(links, (std::vector<std::string>{"const.value -> total.a", "const_2.value -> total.b", "total.sum -> add_2.a"}));
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

}  // namespace
