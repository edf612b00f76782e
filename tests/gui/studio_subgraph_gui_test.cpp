// Studio's sub-workflows and sweeps under a real (virtual) display: the `workflow` node in the
// palette and quick-add (a dropped wire too), opening a sub-workflow by double-click and its
// outer node following the saved inner file, collapsing a selection into a sub-workflow (one
// undo step, same result headless), and the sweep dialog (point count and checks before
// running, progress per point, cancel and resume, the table, a point's folder, the sweep:
// section). Run through tests/gui/run_gui_test.sh (xvfb-run -a). Screenshots go to
// <build>/studio-test/subgraph-*.png.
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <optional>
#include <string>

#include <gtest/gtest.h>

#include <QApplication>
#include <QLabel>
#include <QLineEdit>
#include <QMenu>
#include <QPlainTextEdit>
#include <QProgressBar>
#include <QSignalSpy>
#include <QTableWidget>
#include <QTest>
#include <QUrl>

#include <gemflow/executor.hpp>
#include <gemflow/plugin_loader.hpp>
#include <gemflow/types.hpp>

#include "app/main_window.hpp"
#include "editor/graph_scene.hpp"
#include "editor/graph_view.hpp"
#include "editor/inspector.hpp"
#include "editor/palette.hpp"
#include "editor/quick_add.hpp"
#include "editor/style.hpp"
#include "gui_test_support.hpp"
#include "model/graph_model.hpp"
#include "run/run_controller.hpp"
#include "run/sweep_dialog.hpp"
#include "viewers/viewer_panel.hpp"

namespace fs = std::filesystem;
namespace gs = gemflow::studio;

namespace {

const fs::path kOut = fs::path(GEMFLOW_BINARY_DIR) / "studio-test" / "subgraph";
const fs::path kPlugins = fs::path(GEMFLOW_BINARY_DIR) / "test-plugins" / "testnodes";

using gs::testing::link_texts;
using gs::testing::settle;

gemflow::Registry& registry() { return gs::testing::testnodes_registry(); }

fs::path write_file(const std::string& name, const std::string& text) {
  return gs::testing::write_file(kOut, name, text);
}

QAction* action(QMenu* m, const char* name) {
  for (QAction* a : m->actions())
    if (a->objectName() == QLatin1String(name)) return a;
  return nullptr;
}

/// a (1.5) and b (2) → sum; idle sleeps `seconds`.
const char* kChain = R"(gemflow: 1
name: subgraph-test
nodes:
  a: {type: test.constant, params: {value: 1.5}}
  b: {type: test.constant, params: {value: 2.0}}
  sum: {type: test.add}
  idle: {type: test.sleep, params: {seconds: 0}}
links:
  - a.value -> sum.a
  - b.value -> sum.b
editor:
  a: {pos: [0, 0]}
  b: {pos: [0, 150]}
  sum: {pos: [300, 60]}
  idle: {pos: [300, 330]}
)";

/// The value of `node`.`port` when the file runs headless (as `gemflow run`).
double run_headless(const fs::path& file, const std::string& node, const std::string& port) {
  auto lr = gemflow::load_workflow(file, registry());
  if (!lr.ok()) {
    for (const auto& d : lr.diagnostics) ADD_FAILURE() << d.str();
    return NAN;
  }
  gemflow::RunOptions opt;
  opt.out_dir = file.parent_path() / ("out-" + file.stem().string());
  opt.jobs = 1;
  const auto r = gemflow::run_workflow(*lr.workflow, registry(), opt);
  auto it = r.nodes.find(node);
  if (it == r.nodes.end() || !it->second.outputs.count(port)) {
    ADD_FAILURE() << node << "." << port << " not computed";
    return NAN;
  }
  return it->second.outputs.at(port).as<gemflow::MatrixF64>()->data()[0];
}

class SubgraphGui : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!registry().find_node("test.sleep")) GTEST_SKIP() << "testnodes plugin not built";
    w = std::make_unique<gs::MainWindow>(registry(), std::vector<gemflow::PluginRecord>{});
    w->set_prompt_enabled(false);
    w->url_opener = [this](const QUrl& u) {
      opened.push_back(u);
      return true;
    };
    w->resize(1400, 900);
    w->show();
    ASSERT_TRUE(QTest::qWaitForWindowExposed(w.get()));
    w->activateWindow();
    (void)QTest::qWaitForWindowActive(w.get(), 2000);
  }
  void TearDown() override {
    for (gs::MainWindow* x : std::vector<gs::MainWindow*>(gs::MainWindow::windows()))
      if (x != w.get()) x->close();
    settle();
    w.reset();
  }
  fs::path open_chain(const std::string& name) {
    const fs::path f = write_file(name, kChain);
    EXPECT_TRUE(w->open_file(QString::fromStdString(f.string()), true));
    settle();
    return f;
  }
  std::unique_ptr<gs::MainWindow> w;
  std::vector<QUrl> opened;
};

// ---- 40a: the workflow node in the palette and quick-add ----------------------------------

TEST_F(SubgraphGui, PaletteAndQuickAddOfferTheWorkflowNode) {
  w->new_file();
  settle();
  // quick-add entries (Tab, right-click) and the palette's search
  const auto entries = gs::node_type_entries(registry());
  std::vector<const gs::QuickAddEntry*> hits = gs::match_entries(entries, QStringLiteral("sub-workflow"));
  ASSERT_FALSE(hits.empty());
  EXPECT_EQ(hits.front()->key, QStringLiteral("workflow"));
  EXPECT_FALSE(gs::match_entries(entries, QStringLiteral("subgraph")).empty());  // found by its doc too
  w->palette().set_filter(QStringLiteral("sub-workflow"));
  EXPECT_EQ(w->palette().visible_count(), 1);

  // Tab, type, Return: a workflow node with no file yet, its `path` in the Inspector
  w->view().setFocus();
  QTest::keyClick(&w->view(), Qt::Key_Tab);
  gs::QuickAddPopup* popup = w->view().quick_add();
  ASSERT_NE(popup, nullptr);
  QTest::keyClicks(popup->search(), "sub-workflow");
  ASSERT_EQ(popup->shown_keys().value(0), QStringLiteral("workflow"));
  QTest::keyClick(popup->search(), Qt::Key_Return);
  settle();
  ASSERT_EQ(w->model().workflow().nodes.size(), 1u);
  const std::string id = w->model().workflow().nodes.front().id;
  EXPECT_EQ(w->model().workflow().nodes.front().type, "workflow");
  ASSERT_NE(w->scene().node_item(id), nullptr);
  EXPECT_TRUE(w->scene().node_item(id)->ports().empty());
  EXPECT_EQ(w->inspector().node(), id);

  // choosing the file gives the node the file's ports (its item is built again)
  const fs::path inner = write_file("quick_inner.yaml",
                                    "gemflow: 1\nnodes:\n  add: {type: test.add}\ninputs: {a: add.a, b: add.b}\n"
                                    "outputs: {sum: add.sum}\n");
  ASSERT_TRUE(w->model().set_param(id, "path", inner.string()).ok());
  settle();
  ASSERT_NE(w->scene().node_item(id), nullptr);
  EXPECT_EQ(w->scene().node_item(id)->ports().size(), 3u);
  EXPECT_NE(w->scene().node_item(id)->port("sum", true), nullptr);

  // a wire dropped in empty space: the filtered list offers it, the file is asked for and the
  // new node is linked through its first fitting input
  const std::string c = w->model().add_node("test.constant", {0, 300});
  settle();
  w->view().open_quick_add(QPointF(300, 300), w->view().viewport()->mapToGlobal(QPoint(200, 200)),
                           QString::fromStdString(c), QStringLiteral("value"), true);
  popup = w->view().quick_add();
  ASSERT_NE(popup, nullptr);
  EXPECT_TRUE(popup->shown_keys().contains(QStringLiteral("workflow")));
  EXPECT_TRUE(popup->shown_keys().contains(QStringLiteral("test.add")));
  w->file_chooser = [&](const QString&, const QString&, bool save) {
    EXPECT_FALSE(save);
    return QString::fromStdString(inner.string());
  };
  QTest::keyClicks(popup->search(), "sub-workflow");
  QTest::keyClick(popup->search(), Qt::Key_Return);
  settle();
  const auto links = link_texts(w->model());
  ASSERT_EQ(links.size(), 1u);
  EXPECT_EQ(links[0], c + ".value -> quick_inner.a");
}

// ---- 40b: open a sub-workflow, save it, the outer node follows ----------------------------

TEST_F(SubgraphGui, DoubleClickOpensTheInnerFileAndSavingItRefreshesTheOuterNode) {
  const fs::path inner = write_file("open_inner.yaml", R"(gemflow: 1
name: inner
nodes:
  c: {type: test.constant, params: {value: 3}}
  add: {type: test.add}
inputs: {x: add.a}
outputs: {total: add.sum}
links:
  - c.value -> add.b
)");
  const fs::path outer = write_file("open_outer.yaml", R"(gemflow: 1
name: outer
nodes:
  k: {type: test.constant, params: {value: 1}}
  part: {type: workflow, params: {path: open_inner.yaml}}
links:
  - k.value -> part.x
editor:
  k: {pos: [0, 0]}
  part: {pos: [300, 0]}
)");
  ASSERT_TRUE(w->open_file(QString::fromStdString(outer.string()), true));
  settle();
  gs::NodeItem* item = w->scene().node_item("part");
  ASSERT_NE(item, nullptr);
  ASSERT_NE(item->port("total", true), nullptr);
  // its menu offers to open and expand it
  {
    std::unique_ptr<QMenu> menu(w->scene().make_node_menu("part"));
    EXPECT_NE(action(menu.get(), "open_subworkflow"), nullptr);
    EXPECT_NE(action(menu.get(), "expand_subworkflow"), nullptr);
    std::unique_ptr<QMenu> plain(w->scene().make_node_menu("k"));
    EXPECT_EQ(action(plain.get(), "open_subworkflow"), nullptr);
    EXPECT_NE(action(plain.get(), "collapse_subworkflow"), nullptr);
  }
  // double-click on the node's title
  w->view().centerOn(item);
  settle();
  const QPoint at = w->view().mapFromScene(item->mapToScene(QPointF(40, 10)));
  const std::size_t before = gs::MainWindow::windows().size();
  QTest::mouseDClick(w->view().viewport(), Qt::LeftButton, {}, at);
  settle();
  ASSERT_EQ(gs::MainWindow::windows().size(), before + 1);
  gs::MainWindow* iw = gs::MainWindow::windows().back();
  EXPECT_EQ(fs::weakly_canonical(iw->model().workflow().file), fs::weakly_canonical(inner));
  EXPECT_EQ(iw->parent_workflow_window(), w.get());
  EXPECT_EQ(w->open_subworkflow("part"), iw);  // opened once: raised again
  EXPECT_EQ(gs::MainWindow::windows().size(), before + 1);

  // renaming an exposed node inside keeps the port; renaming the workflow retitles the node
  ASSERT_EQ(iw->model().rename_node("add", "adder"), "");
  iw->model().set_name("renamed inner");
  ASSERT_TRUE(iw->save());
  settle();
  ASSERT_NE(w->model().spec_of("part"), nullptr);
  EXPECT_EQ(w->model().spec_of("part")->info.title, "renamed inner");
  EXPECT_EQ(w->model().spec_of("part")->outputs.at(0).name, "total");
  EXPECT_FALSE(w->model().modified());  // a refresh is not an edit
  EXPECT_TRUE(w->log_text().contains(QStringLiteral("sub-workflow node(s) part reloaded")));

  // the output's node deleted inside: the outer node loses that port once saved
  iw->model().remove_nodes({"adder"});
  ASSERT_TRUE(iw->save());
  settle();
  item = w->scene().node_item("part");
  ASSERT_NE(item, nullptr);
  EXPECT_EQ(item->port("total", true), nullptr);
}

// ---- 40c: collapse a selection, one undo step, same result headless -------------------------

TEST_F(SubgraphGui, CollapseSelectionIntoASubworkflowAndBack) {
  const fs::path file = open_chain("collapse.yaml");
  const std::string before = w->model().to_yaml();
  const double expected = run_headless(file, "sum", "sum");
  EXPECT_DOUBLE_EQ(expected, 3.5);

  const fs::path sub = kOut / "parts" / "consts";  // no extension typed: .yaml is added
  fs::remove_all(kOut / "parts");
  fs::create_directories(kOut / "parts");
  w->file_chooser = [&](const QString&, const QString& suggestion, bool save) {
    EXPECT_TRUE(save);
    EXPECT_TRUE(suggestion.endsWith(QStringLiteral(".yaml")));
    return QString::fromStdString(sub.string());
  };
  w->scene().select_nodes({"a", "b"});
  {
    std::unique_ptr<QMenu> menu(w->scene().make_node_menu("b"));
    QAction* collapse = action(menu.get(), "collapse_subworkflow");
    ASSERT_NE(collapse, nullptr);
    collapse->trigger();
  }
  settle();
  const gemflow::NodeInstance* n = w->model().workflow().find("consts");
  ASSERT_NE(n, nullptr);
  EXPECT_EQ(n->type, "workflow");
  EXPECT_EQ(std::get<std::string>(*n->param("path")), "parts/consts.yaml");
  EXPECT_EQ(link_texts(w->model()), (std::vector<std::string>{"consts.value -> sum.a", "consts.value_2 -> sum.b"}));
  EXPECT_EQ(w->scene().selected_node_ids(), std::vector<std::string>{"consts"});
  gs::NodeItem* item = w->scene().node_item("consts");
  ASSERT_NE(item, nullptr);
  EXPECT_NE(item->port("value", true), nullptr);
  EXPECT_NE(item->port("value_2", true), nullptr);
  EXPECT_EQ(w->scene().wires().size(), 2u);
  EXPECT_TRUE(w->scene().problems().empty());
  // the file written: both constants, an output per value read outside
  auto lr = gemflow::load_workflow(kOut / "parts" / "consts.yaml", registry());
  ASSERT_TRUE(lr.ok());
  EXPECT_EQ(lr.workflow->nodes.size(), 2u);
  EXPECT_TRUE(lr.workflow->inputs.empty());
  ASSERT_EQ(lr.workflow->outputs.size(), 2u);
  EXPECT_EQ(lr.workflow->outputs[0].targets.at(0), (std::pair<std::string, std::string>{"a", "value"}));
  EXPECT_EQ(lr.workflow->outputs[1].targets.at(0), (std::pair<std::string, std::string>{"b", "value"}));
  w->grab().save(QString::fromStdString((kOut / "subgraph-collapsed.png").string()));

  // Ctrl+Z: one step back to the original text; Ctrl+Shift+Z collapses again
  w->view().setFocus();
  QTest::keyClick(&w->view(), Qt::Key_Z, Qt::ControlModifier);
  settle();
  EXPECT_EQ(w->model().to_yaml(), before);
  QTest::keyClick(&w->view(), Qt::Key_Z, Qt::ControlModifier | Qt::ShiftModifier);
  settle();
  ASSERT_NE(w->model().workflow().find("consts"), nullptr);

  // saved and run headless as `gemflow run` does: the same sum
  ASSERT_TRUE(w->save());
  EXPECT_DOUBLE_EQ(run_headless(file, "sum", "sum"), expected);
  // run in Studio: the sub-workflow node shows its inner nodes' state and its exposed outputs
  {
    QSignalSpy spy(&w->runs(), &gs::RunController::finished);
    w->run(false);
    ASSERT_TRUE(spy.wait(60000));
    settle();
    EXPECT_EQ(w->scene().node_item("consts")->state(), gemflow::NodeState::Done);
    const auto outs = w->runs().outputs("consts");
    ASSERT_EQ(outs.size(), 2u);
    EXPECT_DOUBLE_EQ(outs.at("value").as<gemflow::MatrixF64>()->data()[0], 1.5);
    EXPECT_DOUBLE_EQ(outs.at("value_2").as<gemflow::MatrixF64>()->data()[0], 2.0);
    EXPECT_DOUBLE_EQ(w->runs().outputs("sum").at("sum").as<gemflow::MatrixF64>()->data()[0], expected);
  }

  // Expand (its menu): the inner nodes come back with prefixed ids, wired as before
  {
    std::unique_ptr<QMenu> menu(w->scene().make_node_menu("consts"));
    QAction* expand = action(menu.get(), "expand_subworkflow");
    ASSERT_NE(expand, nullptr);
    expand->trigger();
  }
  settle();
  EXPECT_EQ(w->model().workflow().find("consts"), nullptr);
  EXPECT_EQ(link_texts(w->model()), (std::vector<std::string>{"consts_a.value -> sum.a", "consts_b.value -> sum.b"}));
  EXPECT_TRUE(w->scene().problems().empty());
  ASSERT_TRUE(w->save());
  EXPECT_DOUBLE_EQ(run_headless(file, "sum", "sum"), expected);
}

// ---- 41: the sweep dialog ------------------------------------------------------------------

class SweepGui : public SubgraphGui {
 protected:
  gs::SweepDialog* dialog(const std::string& file) {
    open_chain(file);
    w->scene().select_nodes({"a"});
    gs::SweepDialog* d = w->open_sweep_dialog();
    EXPECT_NE(d, nullptr);
    if (!d) return nullptr;
    d->set_program(QStringLiteral(GEMFLOW_CLI_PATH));
    d->set_plugin_dirs({kPlugins});
    fs::remove_all(d->out_dir());
    return d;
  }
  bool run_and_wait(gs::SweepDialog* d) {
    QSignalSpy spy(d, &gs::SweepDialog::finished);
    if (!d->start()) return false;
    return spy.wait(90000);
  }
};

TEST_F(SweepGui, PointCountAndChecksBeforeRunning) {
  gs::SweepDialog* d = dialog("sweep_checks.yaml");
  ASSERT_NE(d, nullptr);
  // one row for the selected node, its first parameter, values to give
  ASSERT_EQ(d->axes_table()->rowCount(), 1);
  EXPECT_EQ(d->axes_table()->item(0, 0)->text(), QStringLiteral("a.value"));
  EXPECT_FALSE(d->check().ok());
  d->axes_table()->item(0, 1)->setText(QStringLiteral("1..3"));
  EXPECT_EQ(d->check().points, 3u);
  EXPECT_TRUE(d->summary()->text().contains(QStringLiteral("3 point")));
  EXPECT_EQ(d->points_table()->rowCount(), 3);
  d->add_axis(QStringLiteral("b.value"), QStringLiteral("0:1:0.5"));
  EXPECT_EQ(d->check().points, 9u);  // every combination
  d->set_zip(true);
  EXPECT_EQ(d->check().points, 3u);
  d->set_zip(false);
  // problems named before anything runs
  d->add_axis(QStringLiteral("a.nope"), QStringLiteral("1"));
  EXPECT_TRUE(d->check().error.contains(QStringLiteral("nope"))) << d->check().error.toStdString();
  EXPECT_TRUE(d->summary()->text().contains(QStringLiteral("nope")));
  d->axes_table()->removeRow(2);
  d->add_axis(QStringLiteral("idle.seconds"), QStringLiteral("5..1"));
  EXPECT_TRUE(d->check().error.contains(QStringLiteral("empty range"))) << d->check().error.toStdString();
  d->axes_table()->removeRow(2);
  d->axes_table()->item(1, 1)->setText(QStringLiteral("0:1#5000"));
  EXPECT_TRUE(d->check().error.contains(QStringLiteral("10000"))) << d->check().error.toStdString();
  d->set_force(true);
  EXPECT_EQ(d->check().points, 15000u);
  d->set_force(false);
  d->axes_table()->removeRow(1);
  EXPECT_EQ(d->sweep_args(), std::vector<std::string>{"a.value=1..3"});
  // a value that breaks a rule between parameters: named with its point before running
  const std::string ruled = w->model().add_node("test.rules", {0, 500});
  d->add_axis(QString::fromStdString(ruled + ".rank"), QStringLiteral("0,1"));
  EXPECT_TRUE(d->check().error.startsWith(QStringLiteral("point value=1.0__rank=1: ")))
      << d->check().error.toStdString();
  EXPECT_TRUE(d->check().error.contains(QStringLiteral("pivoted"))) << d->check().error.toStdString();
  d->axes_table()->removeRow(1);
  w->model().undo_stack()->undo();
  EXPECT_EQ(d->check().points, 3u);
  // saved into the workflow's sweep: section, undoably
  d->save_to_workflow();
  EXPECT_NE(w->model().to_yaml().find("sweep:\n  a.value: 1..3\n"), std::string::npos) << w->model().to_yaml();
  w->model().undo_stack()->undo();
  EXPECT_TRUE(w->model().workflow().sweep.empty());
}

TEST_F(SweepGui, RunsThePointsShowsTheTableAndResumes) {
  gs::SweepDialog* d = dialog("sweep_run.yaml");
  ASSERT_NE(d, nullptr);
  d->axes_table()->item(0, 1)->setText(QStringLiteral("1,2,3"));
  std::vector<std::pair<QString, QString>> events;
  QObject::connect(d, &gs::SweepDialog::point_finished, d,
                   [&](const QString& name, const QString& state) { events.emplace_back(name, state); });
  ASSERT_TRUE(run_and_wait(d)) << d->log()->toPlainText().toStdString();
  EXPECT_EQ(events.size(), 3u) << d->log()->toPlainText().toStdString();
  // points named from their values (a Float parameter: "value=1.0")
  for (const char* p : {"value=1.0", "value=2.0", "value=3.0"})
    EXPECT_EQ(d->state_of(QLatin1String(p)), QStringLiteral("done")) << p;
  EXPECT_EQ(d->progress()->value(), 3);
  EXPECT_TRUE(fs::exists(d->out_dir() / "sweep.csv"));
  // the table's report numbers: each point computed sum = value + 2, shown in its row
  {
    std::ifstream in(d->out_dir() / "sweep.json");
    const auto rows = gemflow::parse_sweep_table(std::string(std::istreambuf_iterator<char>(in), {}));
    ASSERT_TRUE(rows);
    ASSERT_EQ(rows->size(), 3u);
    for (std::size_t k = 0; k < 3; ++k)
      EXPECT_DOUBLE_EQ((*rows)[k].numbers.at("sum.sum"), static_cast<double>(k) + 3.0);
    int col = -1;
    for (int c = 0; c < d->points_table()->columnCount(); ++c)
      if (d->points_table()->horizontalHeaderItem(c)->text() == QStringLiteral("sum.sum")) col = c;
    ASSERT_GE(col, 0);
    EXPECT_EQ(d->points_table()->item(1, col)->text(), QStringLiteral("4"));
  }
  // each point ran with its value: sum = value + 2
  for (int v = 1; v <= 3; ++v) {
    const fs::path point = d->out_dir() / "points" / ("value=" + std::to_string(v) + ".0");
    EXPECT_TRUE(fs::exists(point / "provenance.json")) << point;
    std::ifstream in(point / "point.json");
    const auto rec = gemflow::parse_point_record(std::string(std::istreambuf_iterator<char>(in), {}));
    ASSERT_TRUE(rec) << point;
    EXPECT_EQ(rec->state, gemflow::PointState::Done);
    ASSERT_EQ(rec->values.size(), 1u);
    EXPECT_EQ(rec->values[0].first, "a.value");
    EXPECT_DOUBLE_EQ(std::stod(rec->values[0].second), v);
  }
  // a row opens its folder
  d->open_point(1);
  ASSERT_FALSE(opened.empty());
  EXPECT_EQ(fs::path(opened.back().toLocalFile().toStdString()), d->out_dir() / "points" / "value=2.0");
  // a finished point in the viewers: point 2's sum (2 + 2), not the document's (1.5 + 2) nor
  // another point's; without a result cache its nodes are computed again
  w->viewers().follow("sum");
  {
    QSignalSpy ran(&w->runs(), &gs::RunController::finished);
    ASSERT_TRUE(d->show_point(1)) << d->log()->toPlainText().toStdString();
    ASSERT_TRUE(ran.wait(30000));
  }
  settle();
  EXPECT_EQ(w->runs().shown_point(), QStringLiteral("value=2.0"));
  ASSERT_FALSE(w->viewers().shown_value().empty());
  EXPECT_DOUBLE_EQ(w->viewers().shown_value().as<gemflow::MatrixF64>()->data()[0], 4.0);
  EXPECT_TRUE(w->viewers().status().contains(QStringLiteral("value=2.0"))) << w->viewers().status().toStdString();
  EXPECT_EQ(std::get<double>(*w->model().param_value("a", "value")), 1.5);  // the document is unchanged
  // a normal run shows the document's own values again, without the point's name
  {
    QSignalSpy ran(&w->runs(), &gs::RunController::finished);
    ASSERT_TRUE(w->runs().start(w->model().workflow()));
    ASSERT_TRUE(ran.wait(30000));
  }
  w->viewers().refresh();
  EXPECT_TRUE(w->runs().shown_point().isEmpty());
  EXPECT_DOUBLE_EQ(w->viewers().shown_value().as<gemflow::MatrixF64>()->data()[0], 3.5);
  EXPECT_FALSE(w->viewers().status().contains(QStringLiteral("value=")));
  d->grab().save(QString::fromStdString((kOut / "subgraph-sweep.png").string()));

  // run again: nothing to do, every point is kept ("cached")
  events.clear();
  ASSERT_TRUE(run_and_wait(d));
  EXPECT_TRUE(events.empty());
  for (const char* p : {"value=1.0", "value=2.0", "value=3.0"})
    EXPECT_EQ(d->state_of(QLatin1String(p)), QStringLiteral("cached")) << p;
}

/// With the lasting result cache (as `gemflow run` uses by default): a point's nodes come from
/// the entries the sweep stored, none is computed again.
class SweepCacheGui : public SweepGui {
 protected:
  void SetUp() override {
    const char* off = std::getenv("GEMFLOW_NO_CACHE");
    if (off) no_cache_ = off;
    cache_ = kOut / "sweep-cache";
    fs::remove_all(cache_);
    ::unsetenv("GEMFLOW_NO_CACHE");
    ::setenv("GEMFLOW_CACHE_DIR", cache_.c_str(), 1);
    SweepGui::SetUp();
  }
  void TearDown() override {
    SweepGui::TearDown();
    ::unsetenv("GEMFLOW_CACHE_DIR");
    if (no_cache_) ::setenv("GEMFLOW_NO_CACHE", no_cache_->c_str(), 1);
  }
  fs::path cache_;
  std::optional<std::string> no_cache_;
};

TEST_F(SweepCacheGui, AFinishedPointShowsInTheViewersFromTheCache) {
  gs::SweepDialog* d = dialog("sweep_show.yaml");
  ASSERT_NE(d, nullptr);
  d->axes_table()->item(0, 1)->setText(QStringLiteral("1,2,3"));
  ASSERT_TRUE(run_and_wait(d)) << d->log()->toPlainText().toStdString();
  ASSERT_EQ(d->state_of(QStringLiteral("value=2.0")), QStringLiteral("done")) << d->log()->toPlainText().toStdString();
  w->viewers().follow("sum");
  // double-click on point 2's row (the first run since the file was opened: the lasting cache
  // is used, as for any first run of a document)
  {
    QSignalSpy ran(&w->runs(), &gs::RunController::finished);
    Q_EMIT d->points_table()->cellDoubleClicked(1, 0);
    ASSERT_TRUE(ran.wait(30000)) << d->log()->toPlainText().toStdString();
  }
  settle();
  for (const char* n : {"a", "b", "sum"})
    EXPECT_EQ(w->runs().results().at(n).state, gemflow::NodeState::Cached)
        << n << ": " << w->runs().results().at(n).why;
  ASSERT_FALSE(w->viewers().shown_value().empty());
  EXPECT_DOUBLE_EQ(w->viewers().shown_value().as<gemflow::MatrixF64>()->data()[0], 4.0);
  EXPECT_TRUE(w->viewers().status().contains(QStringLiteral("sweep point value=2.0")))
      << w->viewers().status().toStdString();
  EXPECT_TRUE(opened.empty());  // a finished point's double-click shows it, no folder opened
  // then point 3
  {
    QSignalSpy ran(&w->runs(), &gs::RunController::finished);
    ASSERT_TRUE(d->show_point(2));
    ASSERT_TRUE(ran.wait(30000));
  }
  settle();
  EXPECT_EQ(w->runs().results().at("sum").state, gemflow::NodeState::Cached);
  EXPECT_DOUBLE_EQ(w->viewers().shown_value().as<gemflow::MatrixF64>()->data()[0], 5.0);
  EXPECT_TRUE(w->viewers().status().contains(QStringLiteral("value=3.0")));
  // a point not run yet (values typed since) is not shown, and the log says why
  d->axes_table()->item(0, 1)->setText(QStringLiteral("7"));
  EXPECT_FALSE(d->show_point(0));
  EXPECT_TRUE(d->log()->toPlainText().contains(QStringLiteral("only a finished point")));
}

TEST_F(SweepGui, CancelStopsTheSweepAndRunResumesIt) {
  gs::SweepDialog* d = dialog("sweep_cancel.yaml");
  ASSERT_NE(d, nullptr);
  d->axes_table()->item(0, 0)->setText(QStringLiteral("idle.seconds"));
  d->axes_table()->item(0, 1)->setText(QStringLiteral("0.05,30,0.06"));
  QSignalSpy done(d, &gs::SweepDialog::finished);
  QSignalSpy first(d, &gs::SweepDialog::point_finished);
  ASSERT_TRUE(d->start());
  ASSERT_TRUE(first.wait(60000)) << d->log()->toPlainText().toStdString();  // the short one
  EXPECT_TRUE(d->running());
  QTest::qWait(300);  // into the 30 s point
  d->cancel();
  ASSERT_TRUE(done.wait(30000));
  EXPECT_EQ(done.at(0).at(0).toInt(), 3);  // the command's "cancelled"
  EXPECT_EQ(d->state_of(QStringLiteral("seconds=0.05")), QStringLiteral("done"));
  EXPECT_EQ(d->state_of(QStringLiteral("seconds=30.0")), QStringLiteral("cancelled"));
  EXPECT_EQ(d->state_of(QStringLiteral("seconds=0.06")), QStringLiteral("pending"));
  // resume with a short value in place of the long one: the done point is kept
  d->axes_table()->item(0, 1)->setText(QStringLiteral("0.05,0.07,0.06"));
  ASSERT_TRUE(run_and_wait(d)) << d->log()->toPlainText().toStdString();
  EXPECT_EQ(d->state_of(QStringLiteral("seconds=0.05")), QStringLiteral("cached"));
  EXPECT_EQ(d->state_of(QStringLiteral("seconds=0.07")), QStringLiteral("done"));
  EXPECT_EQ(d->state_of(QStringLiteral("seconds=0.06")), QStringLiteral("done"));
}

}  // namespace

int main(int argc, char** argv) {
  ::testing::InitGoogleTest(&argc, argv);
  char tmpl[] = "/tmp/gemflow-studio-subgraph-XXXXXX";
  const char* home = mkdtemp(tmpl);
  if (!home) return 1;
  const std::string h = home;
  setenv("XDG_CONFIG_HOME", (h + "/config").c_str(), 1);
  setenv("XDG_CACHE_HOME", (h + "/cache").c_str(), 1);
  QApplication app(argc, argv);
  QApplication::setStyle(QStringLiteral("Fusion"));
  QApplication::setOrganizationName(QStringLiteral("GemflowTest"));
  QApplication::setApplicationName(QStringLiteral("studio_subgraph_gui_test"));
  const int rc = RUN_ALL_TESTS();
  std::error_code ec;
  fs::remove_all(h, ec);
  return rc;
}
