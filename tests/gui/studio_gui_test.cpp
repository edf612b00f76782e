// Studio under a real (virtual) display: open a workflow, edit it with the mouse, run it on
// the worker thread, check every node's final state, re-run from the session cache, open the
// 3D viewer on a real structure, save a screenshot and check it is not blank.
// Run through tests/gui/run_gui_test.sh (xvfb-run -a).
#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <set>
#include <string>

#include <gtest/gtest.h>

#include <QApplication>
#include <QDockWidget>
#include <QDoubleSpinBox>
#include <QImage>
#include <QSettings>
#include <QSignalSpy>
#include <QStandardPaths>
#include <QTest>
#include <QToolButton>

#include <gemflow/plugin_loader.hpp>
#include <gemflow/types.hpp>

#include "app/main_window.hpp"
#include "editor/graph_scene.hpp"
#include "editor/graph_view.hpp"
#include "editor/inspector.hpp"
#include "editor/palette.hpp"
#include "model/graph_model.hpp"
#include "run/run_controller.hpp"
#include "viewers/structure_viewer.hpp"
#include "viewers/viewer_panel.hpp"
#include "viewers/vtk_view.hpp"

namespace fs = std::filesystem;
namespace gs = gemflow::studio;
using gemflow::NodeState;

namespace {

const fs::path kOut = fs::path(GEMFLOW_BINARY_DIR) / "studio-test";

gemflow::Registry& registry() {
  static gemflow::Registry reg;
  static bool loaded = false;
  if (!loaded) {
    gemflow::PluginHost host(reg);
    host.load_directory(fs::path(GEMFLOW_BINARY_DIR) / "test-plugins" / "testnodes");
    host.load_directory(GEMFLOW_PLUGIN_BUILD_DIR);
    // Another plugin being half-built must not fail Studio's test; the parts that need a
    // plugin skip with a message when its nodes are missing.
    for (const auto& r : host.records())
      if (!r.loaded) std::cerr << "note: plugin " << r.file << " not loaded: " << r.error << "\n";
    loaded = true;
  }
  return reg;
}

fs::path write_file(const std::string& name, const std::string& text) {
  fs::create_directories(kOut);
  const fs::path f = kOut / name;
  std::ofstream(f) << text;
  return f;
}

/// Runs and waits (the event loop keeps turning: events arrive as queued calls).
bool run_and_wait(gs::MainWindow& w, bool selected = false) {
  QSignalSpy spy(&w.runs(), &gs::RunController::finished);
  w.run(selected);
  if (!spy.wait(120000)) return false;
  QCoreApplication::processEvents();
  return true;
}

std::map<std::string, NodeState> states(gs::MainWindow& w) {
  std::map<std::string, NodeState> r;
  for (auto* n : w.scene().node_items()) r[n->id()] = n->state();
  return r;
}

QPoint port_pos(gs::MainWindow& w, const std::string& node, const std::string& port, bool output) {
  auto* n = w.scene().node_item(node);
  EXPECT_NE(n, nullptr) << node;
  auto* p = n ? n->port(port, output) : nullptr;
  EXPECT_NE(p, nullptr) << node << "." << port;
  return p ? w.view().mapFromScene(p->anchor()) : QPoint();
}

/// Drags with the real mouse (press, moves, release) on the editor's viewport.
void mouse_drag(gs::MainWindow& w, QPoint from, QPoint to) {
  QWidget* vp = w.view().viewport();
  QTest::mousePress(vp, Qt::LeftButton, {}, from);
  for (int i = 1; i <= 8; ++i) {
    const QPoint p = from + (to - from) * i / 8;
    QMouseEvent move(QEvent::MouseMove, p, vp->mapToGlobal(p), Qt::NoButton, Qt::LeftButton, Qt::NoModifier);
    QApplication::sendEvent(vp, &move);
  }
  QTest::mouseRelease(vp, Qt::LeftButton, {}, to);
}

const char* kSumWorkflow = R"(gemflow: 1
name: studio-gui-test
nodes:
  a: {type: test.constant, params: {value: 1.5}}
  b: {type: test.constant, params: {value: 2.0}}
  sum: {type: test.add}
  slow: {type: test.sleep, params: {seconds: 0.4}}
  table: {type: test.read_text, params: {path: lines.txt}}
links:
  - a.value -> sum.a
  - b.value -> sum.b
editor:
  a: {pos: [0, 0]}
  b: {pos: [0, 150]}
  sum: {pos: [300, 60]}
  slow: {pos: [600, 60]}
  table: {pos: [300, 300]}
)";

class StudioGui : public ::testing::Test {
 protected:
  void SetUp() override {
    w = std::make_unique<gs::MainWindow>(registry(), std::vector<gemflow::PluginRecord>{});
    w->set_prompt_enabled(false);
    w->runs().set_out_dir(kOut / "runs");
    w->show();
    ASSERT_TRUE(QTest::qWaitForWindowExposed(w.get()));
  }
  void TearDown() override { w.reset(); }
  std::unique_ptr<gs::MainWindow> w;
};

TEST_F(StudioGui, EditRunAndCache) {
  if (!registry().find_node("test.sleep")) GTEST_SKIP() << "testnodes plugin not built";
  write_file("lines.txt", "first\nsecond\n");
  ASSERT_TRUE(w->open_file(QString::fromStdString(write_file("sum.yaml", kSumWorkflow).string()), true));
  EXPECT_EQ(w->scene().node_items().size(), 5u);
  EXPECT_EQ(w->scene().wires().size(), 2u);
  w->view().resetTransform();
  w->view().centerOn(350, 150);
  QCoreApplication::processEvents();

  // Drag with the mouse: sum.sum -> slow.in is accepted.
  mouse_drag(*w, port_pos(*w, "sum", "sum", true), port_pos(*w, "slow", "in", false));
  ASSERT_EQ(w->model().workflow().links.size(), 3u) << w->scene().last_refusal().toStdString();
  EXPECT_EQ(w->model().workflow().links[2].str(), "sum.sum -> slow.in");
  EXPECT_EQ(w->scene().wires().size(), 3u);
  // table.lines (Table) -> a free input of another type is refused, with the reason, and the
  // workflow text does not change. First free slow.in's sibling: use a fresh add node.
  const std::string add2 = w->model().add_node("test.add", {600, 300});
  QCoreApplication::processEvents();
  const std::string before = w->model().to_yaml();
  mouse_drag(*w, port_pos(*w, "table", "lines", true), port_pos(*w, add2, "a", false));
  EXPECT_EQ(w->model().to_yaml(), before);
  EXPECT_NE(w->scene().last_refusal().indexOf(QStringLiteral("types differ")), -1)
      << w->scene().last_refusal().toStdString();
  w->model().undo_stack()->undo();  // the extra add node
  QCoreApplication::processEvents();

  // Inspector: an out-of-range value typed into a spin box is never applied.
  w->scene().select_nodes({"slow"});
  QCoreApplication::processEvents();
  ASSERT_EQ(w->inspector().node(), "slow");
  auto* spin = qobject_cast<QDoubleSpinBox*>(w->inspector().editor("seconds"));
  ASSERT_NE(spin, nullptr);
  const std::string before_edit = w->model().to_yaml();
  spin->setFocus();
  spin->selectAll();
  QTest::keyClicks(spin, "99999");
  QTest::keyClick(spin, Qt::Key_Return);
  EXPECT_EQ(w->model().to_yaml(), before_edit);
  EXPECT_NE(spin->toolTip().indexOf(QStringLiteral("above the maximum")), -1) << spin->toolTip().toStdString();

  // Run everything: every node ends done.
  ASSERT_TRUE(run_and_wait(*w));
  for (const auto& [id, st] : states(*w)) EXPECT_EQ(st, NodeState::Done) << id;
  auto sum = w->runs().outputs("sum");
  ASSERT_TRUE(sum.count("sum"));
  EXPECT_DOUBLE_EQ(sum["sum"].as<gemflow::MatrixF64>()->data()[0], 3.5);
  // The viewer follows the selected node: a Table.
  w->scene().select_nodes({"table"});
  QCoreApplication::processEvents();
  EXPECT_EQ(w->viewers().kind(), gs::ViewerPanel::Kind::Table);

  // Re-run: nothing changed, everything comes from the session cache.
  ASSERT_TRUE(run_and_wait(*w));
  for (const auto& [id, st] : states(*w)) EXPECT_EQ(st, NodeState::Cached) << id;
  // Change b: b, sum and slow re-run; a and table stay cached.
  ASSERT_TRUE(w->model().set_param("b", "value", 4.0).ok());
  QCoreApplication::processEvents();
  EXPECT_EQ(w->scene().node_item("sum")->state(), NodeState::Idle);
  ASSERT_TRUE(run_and_wait(*w));
  auto st = states(*w);
  EXPECT_EQ(st["a"], NodeState::Cached);
  EXPECT_EQ(st["table"], NodeState::Cached);
  EXPECT_EQ(st["b"], NodeState::Done);
  EXPECT_EQ(st["sum"], NodeState::Done);
  EXPECT_EQ(st["slow"], NodeState::Done);
  EXPECT_DOUBLE_EQ(w->runs().outputs("sum")["sum"].as<gemflow::MatrixF64>()->data()[0], 5.5);

  w->scene().select_nodes({"sum"});
  QCoreApplication::processEvents();
  w->grab().save(QString::fromStdString((kOut / "editor_window.png").string()));

  // Run up to a selected node: only it and what it needs.
  ASSERT_TRUE(w->model().set_param("a", "value", -1.0).ok());
  w->scene().select_nodes({"sum"});
  ASSERT_TRUE(run_and_wait(*w, true));
  st = states(*w);
  EXPECT_EQ(st["sum"], NodeState::Done);
  EXPECT_EQ(st["slow"], NodeState::Idle);
}

TEST_F(StudioGui, CancelStopsTheRun) {
  if (!registry().find_node("test.sleep")) GTEST_SKIP() << "testnodes plugin not built";
  const auto f = write_file("sleep.yaml", "gemflow: 1\nname: studio-cancel\nnodes:\n  nap: {type: test.sleep, params: {seconds: 30}}\n");
  ASSERT_TRUE(w->open_file(QString::fromStdString(f.string()), true));
  // No editor section: the node gets a layout position, which is not an edit.
  EXPECT_TRUE(w->model().workflow().find("nap")->pos.has_value());
  EXPECT_FALSE(w->model().modified());
  QSignalSpy done(&w->runs(), &gs::RunController::finished);
  QSignalSpy progress(&w->runs(), &gs::RunController::node_state);
  w->run();
  // The UI thread stays free while the node runs: progress events keep arriving.
  QTest::qWait(600);
  EXPECT_TRUE(w->runs().running());
  EXPECT_GT(progress.count(), 3);
  EXPECT_EQ(w->scene().node_item("nap")->state(), NodeState::Running);
  w->cancel_run();
  ASSERT_TRUE(done.wait(10000));
  EXPECT_TRUE(done.front().at(1).toBool());  // cancelled
  EXPECT_NE(w->scene().node_item("nap")->state(), NodeState::Done);
}

// The 3D viewer on a real structure: io.read_structure on 2KPU model 1.
TEST_F(StudioGui, StructureViewerScreenshot) {
  if (!registry().find_node("io.read_structure")) GTEST_SKIP() << "io plugin not built";
  const fs::path pdb = fs::path(GEMFLOW_SOURCE_DIR) / "sample_data" / "2kpu" / "2kpu.pdb";
  // Oracle: ATOM/HETATM records of the first MODEL in the file.
  std::size_t expected = 0;
  {
    std::ifstream in(pdb);
    for (std::string line; std::getline(in, line);) {
      if (line.rfind("ENDMDL", 0) == 0) break;
      if (line.rfind("ATOM  ", 0) == 0 || line.rfind("HETATM", 0) == 0) ++expected;
    }
  }
  ASSERT_GT(expected, 100u);
  const auto f = write_file("structure.yaml", "gemflow: 1\nname: studio-structure\nnodes:\n  read: {type: io.read_structure, params: {path: " +
                                                   pdb.string() + ", model: 1}}\n  all: {type: io.read_structure, params: {path: " +
                                                   pdb.string() + "}}\n");
  ASSERT_TRUE(w->open_file(QString::fromStdString(f.string()), true));
  ASSERT_TRUE(run_and_wait(*w));
  for (const auto& [id, st] : states(*w)) EXPECT_EQ(st, NodeState::Done) << id << ": " << w->log_text().toStdString();
  w->scene().select_nodes({"read"});
  QCoreApplication::processEvents();
  ASSERT_EQ(w->viewers().kind(), gs::ViewerPanel::Kind::Structure);
  gs::StructureViewer* sv = w->viewers().structure_viewer();
  EXPECT_EQ(sv->atom_count(), expected);
  EXPECT_GT(sv->bond_count(), expected * 9 / 10);  // a protein has about one bond per atom
  // A big, exposed viewer: float its dock.
  auto* dock = w->findChild<QDockWidget*>(QStringLiteral("viewers"));
  ASSERT_NE(dock, nullptr);
  dock->setFloating(true);
  dock->resize(900, 700);
  ASSERT_TRUE(QTest::qWaitForWindowExposed(dock));
  QTest::qWait(100);
  auto* reset = sv->findChild<QToolButton*>(QStringLiteral("reset_view"));
  ASSERT_NE(reset, nullptr);
  QTest::mouseClick(reset, Qt::LeftButton);  // fit the molecule to the new window size
  QTest::qWait(200);
  EXPECT_GE(sv->view()->width(), 400);
  QImage shot = sv->grab_frame();
  ASSERT_FALSE(shot.isNull());
  fs::create_directories(kOut);
  const fs::path png = kOut / "structure_viewer.png";
  ASSERT_TRUE(shot.save(QString::fromStdString(png.string())));
  w->grab().save(QString::fromStdString((kOut / "studio_window.png").string()));
  std::cout << "screenshot: " << png.string() << " (" << shot.width() << "x" << shot.height() << ")\n";
  // Not blank: many pixels differ from the background, in many colours, with contrast.
  const QColor bg = QColor::fromRgbF(0.11f, 0.12f, 0.14f);
  std::size_t differ = 0, total = 0;
  std::set<QRgb> colours;
  double sum = 0, sum2 = 0;
  for (int y = 0; y < shot.height(); y += 2)
    for (int x = 0; x < shot.width(); x += 2) {
      const QColor c = shot.pixelColor(x, y);
      ++total;
      if (std::abs(c.red() - bg.red()) + std::abs(c.green() - bg.green()) + std::abs(c.blue() - bg.blue()) > 30) ++differ;
      colours.insert(c.rgb() & 0xf0f0f0);
      const double l = 0.299 * c.red() + 0.587 * c.green() + 0.114 * c.blue();
      sum += l;
      sum2 += l * l;
    }
  const double mean = sum / static_cast<double>(total);
  const double sd = std::sqrt(std::max(0.0, sum2 / static_cast<double>(total) - mean * mean));
  std::cout << "pixels off background: " << 100.0 * static_cast<double>(differ) / static_cast<double>(total)
            << " %, colours: " << colours.size() << ", luminance sd: " << sd << "\n";
  EXPECT_GT(static_cast<double>(differ) / static_cast<double>(total), 0.05);
  EXPECT_GT(colours.size(), 20u);
  EXPECT_GT(sd, 10.0);

  // Overlay: model 1 of the ensemble superposed on itself has RMSD 0.
  w->scene().select_nodes({"all"});
  QCoreApplication::processEvents();
  ASSERT_EQ(w->viewers().kind(), gs::ViewerPanel::Kind::Structure);
  auto ens = w->runs().outputs("all")["structure"].as<gemflow::Structure>();
  EXPECT_EQ(sv->atom_count(), expected);
  auto one = w->runs().outputs("read")["structure"].as<gemflow::Structure>();
  sv->set_reference(one, QStringLiteral("read.structure"));
  EXPECT_NEAR(sv->overlay_rmsd(), 0.0, 1e-9);
  sv->set_model(1);  // model 2 against model 1: a real, small, positive RMSD
  EXPECT_GT(sv->overlay_rmsd(), 0.1);
  EXPECT_LT(sv->overlay_rmsd(), 10.0);
  EXPECT_EQ(ens->model_count(), 20u);
}

TEST_F(StudioGui, PaletteSearchAndWelcome) {
  w->palette().set_filter(QStringLiteral("sleep"));
  if (registry().find_node("test.sleep")) {
    EXPECT_EQ(w->palette().visible_count(), 1);
  }
  w->palette().set_filter({});
  EXPECT_EQ(w->palette().visible_count(), static_cast<int>(registry().nodes().size()));
  // A Welcome screen is shown first; it opens the shipped example when there is one.
  const auto example = gs::example_workflow();
  if (!example.empty()) {
    ASSERT_TRUE(w->open_file(QString::fromStdString(example.string()), true));
    EXPECT_GT(w->model().workflow().nodes.size(), 2u);
  }
}

}  // namespace

int main(int argc, char** argv) {
  ::testing::InitGoogleTest(&argc, argv);
  gs::set_default_surface_format();
  QStandardPaths::setTestModeEnabled(true);  // QSettings/caches do not touch the user's files
  QApplication app(argc, argv);
  QApplication::setOrganizationName(QStringLiteral("GemflowTest"));
  QApplication::setApplicationName(QStringLiteral("studio_gui_test"));
  return RUN_ALL_TESTS();
}
