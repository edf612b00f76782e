// Studio under a real (virtual) display: open a workflow, edit it with the mouse, run it on
// the worker thread, check every node's final state, re-run from the session cache, open the
// 3D viewer on a real structure, save a screenshot and check it is not blank.
// Run through tests/gui/run_gui_test.sh (xvfb-run -a).
#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <set>
#include <string>

#include <gtest/gtest.h>

#include <QApplication>
#include <QDockWidget>
#include <QDoubleSpinBox>
#include <QImage>
#include <QLineEdit>
#include <QPlainTextEdit>
#include <QPushButton>
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
#include "editor/style.hpp"
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

/// The shipped plugins only (no test nodes): what a user's Studio has, for the NMR test and
/// its screenshot.
std::vector<gemflow::PluginRecord> shipped_records;
gemflow::Registry& shipped_registry() {
  static gemflow::Registry reg;
  static bool loaded = false;
  if (!loaded) {
    gemflow::PluginHost host(reg);
    host.load_directory(GEMFLOW_PLUGIN_BUILD_DIR);
    shipped_records = host.records();
    for (const auto& r : shipped_records)
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

/// Pixel statistics of a rendered frame: fraction on and off the viewer background, distinct
/// colours (4 bits per channel), luminance standard deviation. A real view of a molecule has
/// both much background and much molecule; noise (an uninitialised framebuffer) has content
/// everywhere and no background.
struct PixelStats {
  double background = 0;
  double off_background = 0;
  std::size_t colours = 0;
  double luminance_sd = 0;
};

PixelStats pixel_stats(const QImage& shot) {
  const QColor bg = QColor::fromRgbF(0.11f, 0.12f, 0.14f);  // VtkView's background
  std::size_t differ = 0, same = 0, total = 0;
  std::set<QRgb> colours;
  double sum = 0, sum2 = 0;
  for (int y = 0; y < shot.height(); y += 2)
    for (int x = 0; x < shot.width(); x += 2) {
      const QColor c = shot.pixelColor(x, y);
      ++total;
      const int d = std::abs(c.red() - bg.red()) + std::abs(c.green() - bg.green()) + std::abs(c.blue() - bg.blue());
      if (d > 30) ++differ;
      if (d <= 6) ++same;
      colours.insert(c.rgb() & 0xf0f0f0);
      const double l = 0.299 * c.red() + 0.587 * c.green() + 0.114 * c.blue();
      sum += l;
      sum2 += l * l;
    }
  PixelStats r;
  if (total == 0) return r;
  const double mean = sum / static_cast<double>(total);
  r.off_background = static_cast<double>(differ) / static_cast<double>(total);
  r.background = static_cast<double>(same) / static_cast<double>(total);
  r.colours = colours.size();
  r.luminance_sd = std::sqrt(std::max(0.0, sum2 / static_cast<double>(total) - mean * mean));
  std::cout << "pixels on background: " << 100.0 * r.background << " %, off: " << 100.0 * r.off_background << " %, colours: " << r.colours
            << ", luminance sd: " << r.luminance_sd << "\n";
  return r;
}

/// A 256-colour copy of a screenshot for the docs (PNG of a third the size): the palette is
/// the 256 most frequent colours at 5 bits per channel (a UI is mostly flat colours), each
/// the mean of its pixels; pixels map to the nearest entry, without dithering.
QImage to_256_colours(const QImage& shot) {
  const QImage img = shot.convertToFormat(QImage::Format_RGB32);
  struct Bin {
    std::size_t n = 0;
    double r = 0, g = 0, b = 0;
  };
  std::map<int, Bin> bins;
  for (int y = 0; y < img.height(); ++y) {
    const auto* line = reinterpret_cast<const QRgb*>(img.constScanLine(y));
    for (int x = 0; x < img.width(); ++x) {
      const QRgb c = line[x];
      Bin& b = bins[((qRed(c) >> 3) << 10) | ((qGreen(c) >> 3) << 5) | (qBlue(c) >> 3)];
      ++b.n;
      b.r += qRed(c);
      b.g += qGreen(c);
      b.b += qBlue(c);
    }
  }
  std::vector<const Bin*> order;
  for (const auto& [key, b] : bins) order.push_back(&b);
  std::sort(order.begin(), order.end(), [](const Bin* a, const Bin* b) { return a->n > b->n; });
  QVector<QRgb> table;
  for (std::size_t i = 0; i < order.size() && i < 256; ++i) {
    const double n = static_cast<double>(order[i]->n);
    table.push_back(qRgb(static_cast<int>(order[i]->r / n + 0.5), static_cast<int>(order[i]->g / n + 0.5),
                         static_cast<int>(order[i]->b / n + 0.5)));
  }
  return img.convertToFormat(QImage::Format_Indexed8, table, Qt::ThresholdDither);
}

/// ATOM/HETATM records of the first model of a PDB file (the whole file when it has no MODEL).
std::size_t pdb_atom_records(const fs::path& pdb) {
  std::size_t n = 0;
  std::ifstream in(pdb);
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("ENDMDL", 0) == 0) break;
    if (line.rfind("ATOM  ", 0) == 0 || line.rfind("HETATM", 0) == 0) ++n;
  }
  return n;
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
    w->activateWindow();  // keyboard focus (and focus-out) like a user's window
    if (!QTest::qWaitForWindowActive(w.get(), 2000)) std::cerr << "note: the window did not become active\n";
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
  const std::size_t expected = pdb_atom_records(pdb);
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
  const PixelStats st = pixel_stats(shot);
  EXPECT_GT(st.background, 0.2);
  EXPECT_GT(st.off_background, 0.05);
  EXPECT_GT(st.colours, 20u);
  EXPECT_GT(st.luminance_sd, 10.0);

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

// Renaming a node and editing the workflow's name and description from the Inspector.
TEST_F(StudioGui, RenameNodeAndEditWorkflowFields) {
  if (!registry().find_node("test.add")) GTEST_SKIP() << "testnodes plugin not built";
  write_file("lines.txt", "first\nsecond\n");
  ASSERT_TRUE(w->open_file(QString::fromStdString(write_file("rename.yaml", kSumWorkflow).string()), true));
  ASSERT_TRUE(run_and_wait(*w));
  ASSERT_EQ(w->scene().node_item("sum")->state(), NodeState::Done);

  // Rename sum → total in the Inspector's id field: links follow, results stay, one undo step.
  w->scene().select_nodes({"sum"});
  QCoreApplication::processEvents();
  auto* id = w->inspector().findChild<QLineEdit*>(QStringLiteral("node_id"));
  ASSERT_NE(id, nullptr);
  EXPECT_EQ(id->text(), QStringLiteral("sum"));
  id->setFocus();
  id->selectAll();
  QTest::keyClicks(id, "total");
  QTest::keyClick(id, Qt::Key_Return);
  QCoreApplication::processEvents();
  EXPECT_EQ(w->model().workflow().find("sum"), nullptr);
  ASSERT_NE(w->model().workflow().find("total"), nullptr);
  EXPECT_EQ(w->model().workflow().links[0].str(), "a.value -> total.a");
  EXPECT_EQ(w->model().workflow().links[1].str(), "b.value -> total.b");
  ASSERT_NE(w->scene().node_item("total"), nullptr);
  EXPECT_EQ(w->scene().node_item("sum"), nullptr);
  EXPECT_EQ(w->scene().wires().size(), 2u);
  EXPECT_EQ(w->scene().node_item("total")->state(), NodeState::Done);  // same computation
  EXPECT_EQ(w->inspector().node(), "total");
  ASSERT_TRUE(w->runs().outputs("total").count("sum"));
  EXPECT_DOUBLE_EQ(w->runs().outputs("total")["sum"].as<gemflow::MatrixF64>()->data()[0], 3.5);
  EXPECT_EQ(w->viewers().kind(), gs::ViewerPanel::Kind::Heatmap);  // still shows its output
  // Re-run: the renamed node comes from the cache (ids are not part of a node's key).
  ASSERT_TRUE(run_and_wait(*w));
  EXPECT_EQ(w->scene().node_item("total")->state(), NodeState::Cached);

  // A refused id: red, with the reason, nothing changes.
  const std::string before = w->model().to_yaml();
  id = w->inspector().findChild<QLineEdit*>(QStringLiteral("node_id"));
  ASSERT_NE(id, nullptr);
  id->setFocus();
  id->selectAll();
  QTest::keyClicks(id, "a");  // taken
  QTest::keyClick(id, Qt::Key_Return);
  EXPECT_EQ(w->model().to_yaml(), before);
  EXPECT_NE(id->toolTip().indexOf(QStringLiteral("already exists")), -1) << id->toolTip().toStdString();

  // Undo brings the old id back, in the scene too.
  w->model().undo_stack()->undo();
  QCoreApplication::processEvents();
  EXPECT_NE(w->scene().node_item("sum"), nullptr);
  EXPECT_EQ(w->model().workflow().links[0].str(), "a.value -> sum.a");

  // Nothing selected: the Inspector edits the workflow's name and description.
  w->scene().clearSelection();
  QCoreApplication::processEvents();
  auto* name = w->inspector().findChild<QLineEdit*>(QStringLiteral("workflow_name"));
  auto* desc = w->inspector().findChild<QPlainTextEdit*>(QStringLiteral("workflow_description"));
  ASSERT_NE(name, nullptr);
  ASSERT_NE(desc, nullptr);
  EXPECT_EQ(name->text(), QStringLiteral("studio-gui-test"));
  name->setFocus();
  name->selectAll();
  QTest::keyClicks(name, "sums");
  QTest::keyClick(name, Qt::Key_Return);
  EXPECT_EQ(w->model().workflow().name, "sums");
  EXPECT_NE(w->windowTitle().indexOf(QStringLiteral("sums")), -1) << w->windowTitle().toStdString();
  desc->setFocus();
  QTest::keyClicks(desc, "Adds two constants.");
  name->setFocus();  // leaving the box applies it
  QCoreApplication::processEvents();
  EXPECT_EQ(w->model().workflow().description, "Adds two constants.");
  // Saved and read back by the core loader.
  const fs::path saved = kOut / "renamed.yaml";
  w->model().save(saved);
  auto loaded = gemflow::load_workflow(saved, registry());
  ASSERT_TRUE(loaded.workflow.has_value());
  EXPECT_EQ(loaded.workflow->name, "sums");
  EXPECT_EQ(loaded.workflow->description, "Adds two constants.");
  // Undo of the description shows in the box.
  w->model().undo_stack()->undo();
  QCoreApplication::processEvents();
  EXPECT_EQ(desc->toPlainText(), QString());
}

// The shipped NMR workflow end to end in the GUI: Welcome → open the example → run through
// the engine → every node done → 3D viewer on the refined structure, with a screenshot.
TEST_F(StudioGui, NmrWorkflowRunsAndShowsTheRefinedStructure) {
  const fs::path file = fs::path(GEMFLOW_SOURCE_DIR) / "workflows" / "nmr_structure.yaml";
  ASSERT_TRUE(fs::exists(file));
  auto reference = gemflow::load_workflow(file, shipped_registry());
  ASSERT_TRUE(reference.workflow.has_value());
  for (const auto& n : reference.workflow->nodes)
    if (!shipped_registry().find_node(n.type)) GTEST_SKIP() << "plugin node " << n.type << " not built";
  // A window with the shipped plugins only, as a user sees it.
  w = std::make_unique<gs::MainWindow>(shipped_registry(), shipped_records);
  w->set_prompt_enabled(false);
  w->runs().set_out_dir(kOut / "runs");
  ASSERT_TRUE(reference.ok()) << (reference.diagnostics.empty() ? "" : reference.diagnostics.front().str());
  // The refined structure: what the workflow writes to structure.pdb (io.write_structure).
  std::string producer, producer_port;
  fs::path written;
  for (const auto& l : reference.workflow->links) {
    const gemflow::NodeInstance* to = reference.workflow->find(l.to_node);
    const gemflow::ParamValue* path = to ? to->param("path") : nullptr;
    if (to && to->type == "io.write_structure" && path && std::get<std::string>(*path) == "structure.pdb") {
      producer = l.from_node;
      producer_port = l.from_port;
      written = std::get<std::string>(*path);
    }
  }
  ASSERT_FALSE(producer.empty()) << "no node of " << file << " writes structure.pdb";

  // Big enough for a readable screenshot of the whole tool.
  w->resize(1600, 1000);
  w->show();
  ASSERT_TRUE(QTest::qWaitForWindowExposed(w.get()));
  w->arrange_docks();
  QTest::qWait(50);

  // The Welcome page offers the example, enabled, and opens exactly that file.
  auto* example = w->findChild<QPushButton*>(QStringLiteral("welcome_example"));
  ASSERT_NE(example, nullptr);
  ASSERT_TRUE(example->isVisible());
  ASSERT_TRUE(example->isEnabled()) << example->text().toStdString();
  QTest::mouseClick(example, Qt::LeftButton);
  QCoreApplication::processEvents();
  ASSERT_TRUE(fs::equivalent(w->model().workflow().file, file)) << w->model().workflow().file;
  ASSERT_EQ(w->model().workflow().nodes.size(), reference.workflow->nodes.size());
  EXPECT_EQ(w->scene().node_items().size(), reference.workflow->nodes.size());
  EXPECT_EQ(w->scene().wires().size(), reference.workflow->links.size());
  EXPECT_FALSE(w->model().modified());  // the automatic layout is not an edit
  // The automatic layout keeps the nodes apart.
  const auto items = w->scene().node_items();
  for (std::size_t i = 0; i < items.size(); ++i)
    for (std::size_t j = i + 1; j < items.size(); ++j)
      EXPECT_FALSE(items[i]->sceneBoundingRect().intersects(items[j]->sceneBoundingRect()))
          << items[i]->id() << " overlaps " << items[j]->id();

  // Run through the engine (worker thread); every node ends done.
  QSignalSpy done(&w->runs(), &gs::RunController::finished);
  w->run();
  ASSERT_TRUE(done.wait(300000)) << "the NMR workflow did not finish in 300 s";
  QCoreApplication::processEvents();
  EXPECT_TRUE(done.front().at(0).toBool()) << done.front().at(2).toString().toStdString() << "\n"
                                           << w->log_text().toStdString();
  for (const auto& n : reference.workflow->nodes) {
    auto* item = w->scene().node_item(n.id);
    ASSERT_NE(item, nullptr) << n.id;
    EXPECT_EQ(item->state(), NodeState::Done) << n.id << ": " << item->message().toStdString();
  }

  // The 3D viewer on the refined structure: select its node, as a user would.
  w->scene().select_nodes({producer});
  QCoreApplication::processEvents();
  ASSERT_EQ(w->inspector().node(), producer);
  if (w->viewers().port() != producer_port) w->viewers().follow(producer, producer_port);  // output list
  ASSERT_EQ(w->viewers().port(), producer_port);
  ASSERT_EQ(w->viewers().kind(), gs::ViewerPanel::Kind::Structure);
  auto refined = w->runs().outputs(producer)[producer_port].as<gemflow::Structure>();
  ASSERT_NE(refined, nullptr);
  ASSERT_GT(refined->atoms.size(), 500u);  // 2KPU: ~1500 atoms with hydrogens
  gs::StructureViewer* sv = w->viewers().structure_viewer();
  EXPECT_EQ(sv->atom_count(), refined->atoms.size());
  EXPECT_GT(sv->bond_count(), refined->atoms.size() * 9 / 10);
  // The same count as the file the run wrote (an independent reader: ATOM/HETATM records).
  const fs::path pdb = w->runs().out_dir_for(w->model().workflow()) / written;
  ASSERT_TRUE(fs::exists(pdb)) << pdb;
  EXPECT_EQ(pdb_atom_records(pdb), refined->atoms.size());

  // Screenshots: the viewer's frame (checked) and the whole window (docs/images/studio-nmr.png).
  auto* reset = sv->findChild<QToolButton*>(QStringLiteral("reset_view"));
  ASSERT_NE(reset, nullptr);
  QTest::mouseClick(reset, Qt::LeftButton);
  QTest::qWait(300);
  EXPECT_GE(sv->view()->width(), 400);
  EXPECT_GE(sv->view()->height(), 250);
  const QImage frame = sv->grab_frame();
  ASSERT_FALSE(frame.isNull());
  fs::create_directories(kOut);
  ASSERT_TRUE(frame.save(QString::fromStdString((kOut / "nmr_structure_viewer.png").string())));
  const PixelStats st = pixel_stats(frame);
  EXPECT_GT(st.background, 0.2);
  EXPECT_GT(st.off_background, 0.05);
  EXPECT_GT(st.colours, 20u);
  EXPECT_GT(st.luminance_sd, 10.0);
  const QImage window = w->grab().toImage();
  const fs::path png = kOut / "studio-nmr.png";
  ASSERT_TRUE(window.save(QString::fromStdString(png.string())));
  std::cout << "screenshot: " << png.string() << " (" << window.width() << "x" << window.height() << ")\n";
  // The README's copy (docs/images/studio-nmr.png): same pixels, 256 colours, small file.
  const fs::path small_png = kOut / "studio-nmr-256.png";
  ASSERT_TRUE(to_256_colours(window).save(QString::fromStdString(small_png.string()), "PNG", 0));
  std::cout << "screenshot for the docs: " << small_png.string() << " (" << fs::file_size(small_png) / 1024 << " KiB)\n";
  // The window shot contains the rendered molecule too (what the README shows).
  const PixelStats ws = pixel_stats(window.copy(QRect(sv->view()->mapTo(w.get(), QPoint(0, 0)), sv->view()->size())));
  EXPECT_GT(ws.background, 0.2);
  EXPECT_GT(ws.off_background, 0.05);
}

TEST_F(StudioGui, PaletteSearchAndWelcome) {
  w->palette().set_filter(QStringLiteral("sleep"));
  if (registry().find_node("test.sleep")) {
    EXPECT_EQ(w->palette().visible_count(), 1);
  }
  w->palette().set_filter({});
  EXPECT_EQ(w->palette().visible_count(), static_cast<int>(registry().nodes().size()));
  // A Welcome screen is shown first; in-tree builds find the shipped NMR example.
  auto* example_button = w->findChild<QPushButton*>(QStringLiteral("welcome_example"));
  ASSERT_NE(example_button, nullptr);
  EXPECT_TRUE(example_button->isVisible());
  const auto example = gs::example_workflow();
  ASSERT_FALSE(example.empty());
  EXPECT_TRUE(fs::equivalent(example, fs::path(GEMFLOW_SOURCE_DIR) / "workflows" / "nmr_structure.yaml"));
  EXPECT_TRUE(example_button->isEnabled());
}

}  // namespace

int main(int argc, char** argv) {
  ::testing::InitGoogleTest(&argc, argv);
  gs::set_default_surface_format();
  QStandardPaths::setTestModeEnabled(true);  // QSettings/caches do not touch the user's files
  QApplication app(argc, argv);
  QApplication::setStyle(QStringLiteral("Fusion"));
  gs::apply_studio_palette();  // as gemflow-studio: the screenshots show the real look
  QApplication::setOrganizationName(QStringLiteral("GemflowTest"));
  QApplication::setApplicationName(QStringLiteral("studio_gui_test"));
  return RUN_ALL_TESTS();
}
