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
#include <sstream>
#include <string>

#include <gtest/gtest.h>

#include <qtestspontaneevent.h>
#include <QApplication>
#include <QComboBox>
#include <QDockWidget>
#include <QDoubleSpinBox>
#include <QElapsedTimer>
#include <QFileDialog>
#include <QImage>
#include <QLabel>
#include <QLineEdit>
#include <QListWidget>
#include <QMenu>
#include <QMessageBox>
#include <QPlainTextEdit>
#include <QPushButton>
#include <QScrollArea>
#include <QScrollBar>
#include <QSettings>
#include <QSignalSpy>
#include <QSpinBox>
#include <QStandardPaths>
#include <QTemporaryDir>
#include <QTest>
#include <QTimer>
#include <QToolButton>
#include <QWheelEvent>

#include <cstdlib>
#include <functional>
#include <random>

#include <gemflow/plugin_loader.hpp>
#include <gemflow/types.hpp>

#include "app/main_window.hpp"
#include "editor/graph_scene.hpp"
#include "editor/graph_view.hpp"
#include "editor/inspector.hpp"
#include "editor/palette.hpp"
#include "editor/style.hpp"
#include "gui_test_support.hpp"
#include "model/graph_model.hpp"
#include "run/run_controller.hpp"
#include "viewers/structure_viewer.hpp"
#include "viewers/viewer_panel.hpp"
#include "viewers/vtk_view.hpp"

namespace fs = std::filesystem;
namespace gs = gemflow::studio;
using gemflow::NodeState;

namespace {

// ---- node types of this test only ----------------------------------------------------------

/// A node with what makes an Inspector hard to lay out: a long doc, a long parameter name
/// with a unit, an int and a choice (the wheel targets of the defect report).
struct Tunable final : gemflow::Node {
  enum class Algorithm { Blocked, Tiled };
  static gemflow::NodeInfo info() {
    std::string doc = "Refines things. ";
    for (int i = 0; i < 40; ++i)
      doc += "This sentence is part of a long documentation text that pushes the parameters down. ";
    return {.id = "guitest.tunable", .version = 1, .title = "Tunable", .category = "GUI test", .doc = doc};
  }
  gemflow::Input<gemflow::MatrixF64> in{this, "in", "anything", gemflow::PortUse::Optional};
  gemflow::Output<gemflow::MatrixF64> out{this, "out", "a 1×1 matrix"};
  gemflow::Param<std::int64_t> trials{this, "trials", 4, {.min = 1, .max = 64, .doc = "Independent trials"}};
  gemflow::Choice<Algorithm> algorithm{this,
                                       "algorithm",
                                       Algorithm::Blocked,
                                       {{Algorithm::Blocked, "blocked"}, {Algorithm::Tiled, "tiled"}},
                                       {.doc = "How"}};
  gemflow::Param<double> largest_distance_violation_listed_in_the_report{
      this,
      "largest_distance_violation_listed_in_the_report",
      0.5,
      {.min = 0.0, .max = 100.0, .unit = "kcal/mol", .doc = "A long name"}};
  void execute(gemflow::NodeContext&) override { out.set(gemflow::MatrixF64(1, 1, static_cast<double>(*trials))); }
};

/// A synthetic NMR-like ensemble of realistic size: `residues` residues of 15 atoms (N, CA, C, O,
/// side chain, hydrogens; bonded lengths 1.0-1.5 Å) on a helix, `models` models perturbed by
/// 0.3 Å, no bonds given (the viewer perceives them, as for a PDB file).
struct Ensemble final : gemflow::Node {
  static gemflow::NodeInfo info() {
    return {.id = "guitest.ensemble",
            .version = 1,
            .title = "Ensemble",
            .category = "GUI test",
            .doc = "A synthetic ensemble"};
  }
  gemflow::Output<gemflow::Structure> structure{this, "structure", "the ensemble"};
  gemflow::Param<std::int64_t> residues{this, "residues", 100, {.min = 2, .max = 10000, .doc = "Residues"}};
  gemflow::Param<std::int64_t> models{this, "models", 20, {.min = 1, .max = 100, .doc = "Models"}};
  void execute(gemflow::NodeContext&) override {
    // Atom template of one residue: a chain of steps from N (name, element, step from the
    // previous atom of the template).
    struct T {
      const char* name;
      const char* element;
      gemflow::Vec3 step;  // position in the residue's frame
    };
    // x points away from the helix axis, y along the chain, z along the axis; CA at 0.
    static const T tpl[] = {
        {"N", "N", {-0.5, -1.0, -0.8}}, {"H", "H", {-0.5, -1.3, -1.75}}, {"CA", "C", {0, 0, 0}},
        {"HA", "H", {0.3, 0, 1.05}},    {"C", "C", {-0.5, 1.0, 0.8}},    {"O", "O", {-0.5, 1.3, 1.98}},
        {"CB", "C", {1.5, 0, 0}},       {"HB1", "H", {1.5, 1.0, 0}},     {"HB2", "H", {1.5, -1.0, 0}},
        {"CG", "C", {3.0, 0, 0.3}},     {"HG1", "H", {3.0, 1.0, 0.3}},   {"HG2", "H", {3.0, -1.0, 0.3}},
        {"CD", "C", {4.5, 0, 0}},       {"HD1", "H", {4.5, 1.0, 0}},     {"HD2", "H", {4.5, -1.0, 0}}};
    gemflow::Structure s;
    s.title = "synthetic ensemble";
    const auto nres = static_cast<int>(*residues);
    std::vector<gemflow::Vec3> base;
    for (int r = 0; r < nres; ++r) {
      // An α-helix's Cα trace: radius 2.3 Å, 100° and 1.5 Å a residue (Cα–Cα 3.8 Å).
      const double a = r * 100.0 * 3.14159265358979 / 180.0;
      const double c = std::cos(a), sn = std::sin(a);
      for (const T& t : tpl) {
        const gemflow::Vec3& o = t.step;  // local frame: radial, tangential, axial
        base.push_back({(2.3 + o[0]) * c - o[1] * sn, (2.3 + o[0]) * sn + o[1] * c, 1.5 * r + o[2]});
        s.atoms.push_back({.name = t.name,
                           .element = t.element,
                           .residue = "LYS",
                           .residue_number = r + 1,
                           .chain = "A",
                           .serial = static_cast<int>(s.atoms.size()) + 1});
      }
    }
    std::mt19937 rng(7);
    std::normal_distribution<double> noise(0.0, 0.3);
    for (std::int64_t m = 0; m < *models; ++m) {
      std::vector<gemflow::Vec3> xyz = base;
      if (m > 0)
        for (auto& p : xyz)
          for (double& c : p) c += noise(rng);
      s.models.push_back(std::move(xyz));
    }
    structure.set(std::move(s));
  }
};

const fs::path kOut = fs::path(GEMFLOW_BINARY_DIR) / "studio-test";

gemflow::Registry& registry() {
  static gemflow::Registry reg;
  static bool loaded = false;
  if (!loaded) {
    gemflow::PluginHost host(reg);
    host.load_directory(fs::path(GEMFLOW_BINARY_DIR) / "test-plugins" / "testnodes");
    host.load_directory(GEMFLOW_PLUGIN_BUILD_DIR);
    reg.add_node<Tunable>("gui-test");
    reg.add_node<Ensemble>("gui-test");
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
  return gemflow::studio::testing::write_file(kOut, name, text);
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

/// Presses and releases at one point, without moving: a click.
void mouse_click(gs::MainWindow& w, QPoint at) {
  QWidget* vp = w.view().viewport();
  QTest::mousePress(vp, Qt::LeftButton, {}, at);
  QTest::mouseRelease(vp, Qt::LeftButton, {}, at);
}

/// A wheel turn over `target` at `pos` (its coordinates) as the window system delivers it:
/// spontaneous, so QApplication gives wheel focus and passes an ignored event to the parents.
void wheel(QWidget* target, QPoint pos, int delta_y) {
  QWheelEvent e(QPointF(pos), QPointF(target->mapToGlobal(pos)), QPoint(), QPoint(0, delta_y), Qt::NoButton,
                Qt::NoModifier, Qt::NoScrollPhase, false);
  QSpontaneKeyEvent::setSpontaneous(&e);
  QApplication::instance()->notify(target, &e);  // sendEvent would clear the flag
}

/// Turns the event loop until `ok` or `ms` have passed.
bool wait_for(const std::function<bool()>& ok, int ms = 30000) {
  QElapsedTimer t;
  t.start();
  while (!ok()) {
    if (t.elapsed() > ms) return false;
    QTest::qWait(5);
  }
  return true;
}

/// Waits for the structure viewer to show its latest request.
bool viewer_ready(gs::StructureViewer* sv) {
  return wait_for([sv] { return !sv->building(); });
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
  std::cout << "pixels on background: " << 100.0 * r.background << " %, off: " << 100.0 * r.off_background
            << " %, colours: " << r.colours << ", luminance sd: " << r.luminance_sd << "\n";
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

/// Pixels of the ends of the RMSF colour scale in a frame: blue-ish (ordered residues) and
/// red-ish (disordered ones); lighting darkens a tube's colour but keeps its dominant channel.
/// The background, white-ish tubes and the gold overlay count as neither.
struct RmsfPixels {
  std::size_t blue = 0, red = 0;
};
RmsfPixels rmsf_pixels(const QImage& shot) {
  RmsfPixels r;
  const QImage img = shot.convertToFormat(QImage::Format_RGB32);
  for (int y = 0; y < img.height(); ++y)
    for (int x = 0; x < img.width(); ++x) {
      const QRgb c = img.pixel(x, y);
      if (qBlue(c) > 120 && qBlue(c) > qRed(c) + 60 && qBlue(c) > qGreen(c) + 30) ++r.blue;
      if (qRed(c) > 120 && qRed(c) > qGreen(c) + 60 && qRed(c) > qBlue(c) + 60) ++r.red;
    }
  std::cout << "RMSF pixels: " << r.blue << " blue-ish, " << r.red << " red-ish of " << img.width() * img.height()
            << "\n";
  return r;
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
  EXPECT_EQ(w->viewers().viewer(), "table");

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

// The lasting result cache: a second Studio (a new RunController) takes the results of the
// first from the disk instead of running the nodes again.
TEST_F(StudioGui, ResultsOutliveTheSessionThroughTheDiskCache) {
  if (!registry().find_node("test.constant")) GTEST_SKIP() << "testnodes plugin not built";
  const fs::path cache = kOut / "disk-cache";
  fs::remove_all(cache);
  ::setenv("GEMFLOW_CACHE_DIR", cache.c_str(), 1);
  ::setenv("GEMFLOW_NO_CACHE", "0", 1);
  const fs::path file = write_file("disk_cache.yaml", R"(gemflow: 1
name: disk-cache
nodes:
  a: {type: test.constant, params: {value: 2}}
  b: {type: test.constant, params: {value: 3}}
  s: {type: test.add}
links:
  - a.value -> s.a
  - b.value -> s.b
)");
  const auto loaded = load_workflow(file, registry());
  ASSERT_TRUE(loaded.ok());
  std::vector<NodeState> seen;
  for (int session = 0; session < 2; ++session) {
    gs::RunController rc(registry());
    rc.set_out_dir(kOut / ("disk-cache-out-" + std::to_string(session)));
    QSignalSpy done(&rc, &gs::RunController::finished);
    ASSERT_TRUE(rc.start(*loaded.workflow));
    ASSERT_TRUE(done.wait(60000));
    rc.wait();
    seen.push_back(rc.results().at("s").state);
    EXPECT_EQ((*rc.outputs("s").at("sum").as<gemflow::MatrixF64>())(0, 0), 5.0);
  }
  {  // Clear Result Cache: the next run computes again, whatever the disk holds
    gs::RunController rc(registry());
    rc.set_out_dir(kOut / "disk-cache-out-2");
    rc.clear_cache();
    QSignalSpy done(&rc, &gs::RunController::finished);
    ASSERT_TRUE(rc.start(*loaded.workflow));
    ASSERT_TRUE(done.wait(60000));
    rc.wait();
    seen.push_back(rc.results().at("s").state);
  }
  ::setenv("GEMFLOW_NO_CACHE", "1", 1);
  ::unsetenv("GEMFLOW_CACHE_DIR");
  EXPECT_EQ(seen, (std::vector<NodeState>{NodeState::Done, NodeState::Cached, NodeState::Done}));
}

TEST_F(StudioGui, CancelStopsTheRun) {
  if (!registry().find_node("test.sleep")) GTEST_SKIP() << "testnodes plugin not built";
  const auto f = write_file(
      "sleep.yaml", "gemflow: 1\nname: studio-cancel\nnodes:\n  nap: {type: test.sleep, params: {seconds: 30}}\n");
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
// A big, exposed structure viewer: its dock floated at 900×700, the molecule fitted to it.
void float_structure_viewer(gs::MainWindow& w, gs::StructureViewer* sv) {
  auto* dock = w.findChild<QDockWidget*>(QStringLiteral("viewers"));
  ASSERT_NE(dock, nullptr);
  dock->setFloating(true);
  dock->resize(900, 700);
  ASSERT_TRUE(QTest::qWaitForWindowExposed(dock));
  QTest::qWait(100);
  auto* reset = sv->findChild<QToolButton*>(QStringLiteral("reset_view"));
  ASSERT_NE(reset, nullptr);
  QTest::mouseClick(reset, Qt::LeftButton);  // fit the molecule to the new window size
  QTest::qWait(200);
}

TEST_F(StudioGui, StructureViewerScreenshot) {
  if (!registry().find_node("io.read_structure")) GTEST_SKIP() << "io plugin not built";
  const fs::path pdb = fs::path(GEMFLOW_SOURCE_DIR) / "sample_data" / "2kpu" / "2kpu.pdb";
  // Oracle: ATOM/HETATM records of the first MODEL in the file.
  const std::size_t expected = pdb_atom_records(pdb);
  ASSERT_GT(expected, 100u);
  const auto f = write_file(
      "structure.yaml",
      "gemflow: 1\nname: studio-structure\nnodes:\n  read: {type: io.read_structure, params: {path: " + pdb.string() +
          ", model: 1}}\n  all: {type: io.read_structure, params: {path: " + pdb.string() + "}}\n");
  ASSERT_TRUE(w->open_file(QString::fromStdString(f.string()), true));
  ASSERT_TRUE(run_and_wait(*w));
  for (const auto& [id, st] : states(*w)) EXPECT_EQ(st, NodeState::Done) << id << ": " << w->log_text().toStdString();
  w->scene().select_nodes({"read"});
  QCoreApplication::processEvents();
  ASSERT_EQ(w->viewers().viewer(), "structure");
  gs::StructureViewer* sv = w->viewers().structure_viewer();
  ASSERT_TRUE(viewer_ready(sv));  // the geometry is built off the GUI thread
  EXPECT_EQ(sv->atom_count(), expected);
  EXPECT_GT(sv->bond_count(), expected * 9 / 10);  // a protein has about one bond per atom
  EXPECT_FALSE(sv->ensemble_shown());
  auto* model_box = sv->findChild<QSpinBox*>();
  ASSERT_NE(model_box, nullptr);
  EXPECT_EQ(model_box->minimum(), 1);  // one model: no "all"
  EXPECT_EQ(model_box->text(), QStringLiteral("1"));
  ASSERT_NO_FATAL_FAILURE(float_structure_viewer(*w, sv));  // a big, exposed viewer
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

  // The deposited ensemble opens superimposed: 20 Cα tubes (one chain, no breaks), coloured
  // by RMSF, no atoms. 2KPU is ordered in its core (RMSF well below 1 Å) and disordered at its
  // termini (several Å): both ends of the colour scale are on screen.
  w->scene().select_nodes({"all"});
  QCoreApplication::processEvents();
  ASSERT_EQ(w->viewers().viewer(), "structure");
  auto ens = w->runs().outputs("all")["structure"].as<gemflow::Structure>();
  ASSERT_EQ(ens->model_count(), 20u);
  ASSERT_TRUE(viewer_ready(sv));
  EXPECT_TRUE(sv->ensemble_shown());
  EXPECT_EQ(sv->models_shown(), 20u);
  EXPECT_EQ(sv->trace_count(), 20u);
  EXPECT_EQ(sv->atom_count(), 0u);
  EXPECT_EQ(sv->bond_count(), 0u);
  EXPECT_EQ(model_box->text(), QStringLiteral("all"));
  EXPECT_EQ(model_box->maximum(), 20);
  const auto [rmsf_lo, rmsf_hi] = sv->rmsf_range();
  std::cout << "2KPU RMSF " << rmsf_lo << " - " << rmsf_hi << " A\n";
  EXPECT_GT(rmsf_lo, 0.0);
  EXPECT_LT(rmsf_lo, 0.5);
  EXPECT_GT(rmsf_hi, 2.0);
  EXPECT_LT(rmsf_hi, 30.0);
  auto* reset = sv->findChild<QToolButton*>(QStringLiteral("reset_view"));
  ASSERT_NE(reset, nullptr);
  QTest::mouseClick(reset, Qt::LeftButton);
  QTest::qWait(200);
  const QImage ens_shot = sv->grab_frame();
  ASSERT_FALSE(ens_shot.isNull());
  ASSERT_TRUE(ens_shot.save(QString::fromStdString((kOut / "structure_viewer_ensemble.png").string())));
  const PixelStats es = pixel_stats(ens_shot);
  EXPECT_GT(es.background, 0.2);
  EXPECT_GT(es.off_background, 0.02);
  EXPECT_GT(es.colours, 20u);
  const RmsfPixels ep = rmsf_pixels(ens_shot);
  EXPECT_GT(ep.blue, 200u);
  EXPECT_GT(ep.red, 200u);
  // Overlay on the ensemble: model 1 fitted onto superposed model 1, RMSD 0.
  auto one = w->runs().outputs("read")["structure"].as<gemflow::Structure>();
  sv->set_reference(one, QStringLiteral("read.structure"));
  ASSERT_TRUE(viewer_ready(sv));
  EXPECT_TRUE(sv->ensemble_shown());
  EXPECT_NEAR(sv->overlay_rmsd(), 0.0, 1e-9);
  // One model: all its atoms; model 1 of the ensemble superposed on itself has RMSD 0.
  sv->set_model(0);
  ASSERT_TRUE(viewer_ready(sv));
  EXPECT_FALSE(sv->ensemble_shown());
  EXPECT_EQ(sv->models_shown(), 1u);
  EXPECT_EQ(sv->atom_count(), expected);
  EXPECT_EQ(sv->trace_count(), 1u);
  EXPECT_NEAR(sv->overlay_rmsd(), 0.0, 1e-9);
  EXPECT_EQ(model_box->text(), QStringLiteral("1"));
  sv->set_model(1);  // model 2 against model 1: a real, small, positive RMSD
  ASSERT_TRUE(viewer_ready(sv));
  EXPECT_GT(sv->overlay_rmsd(), 0.1);
  EXPECT_LT(sv->overlay_rmsd(), 10.0);
  // The box, as a user turns it: its minimum is "all" again.
  model_box->setValue(0);
  ASSERT_TRUE(viewer_ready(sv));
  EXPECT_TRUE(sv->ensemble_shown());
  EXPECT_EQ(sv->trace_count(), 20u);
  model_box->setValue(3);
  ASSERT_TRUE(viewer_ready(sv));
  EXPECT_FALSE(sv->ensemble_shown());
  EXPECT_EQ(sv->atom_count(), expected);
  EXPECT_EQ(ens->model_count(), 20u);
}

// The docs' picture of an ensemble (docs/nmr-structure.md): when GEMFLOW_DOCS_ENSEMBLE names a
// multi-model PDB (a computed ensemble), its superimposed view is saved as nmr-ensemble.png
// (256 colours, as studio-nmr-256.png) beside a full-colour copy.
TEST_F(StudioGui, EnsembleViewForTheDocs) {
  const char* env = std::getenv("GEMFLOW_DOCS_ENSEMBLE");
  if (!env || !*env) GTEST_SKIP() << "GEMFLOW_DOCS_ENSEMBLE not set";
  if (!registry().find_node("io.read_structure")) GTEST_SKIP() << "io plugin not built";
  const fs::path pdb = fs::absolute(env);
  ASSERT_TRUE(fs::exists(pdb)) << pdb;
  const auto f = write_file("docs-ensemble.yaml",
                            "gemflow: 1\nname: docs-ensemble\nnodes:\n  ensemble: {type: "
                            "io.read_structure, params: {path: '" +
                                pdb.string() + "'}}\n");
  ASSERT_TRUE(w->open_file(QString::fromStdString(f.string()), true));
  ASSERT_TRUE(run_and_wait(*w));
  ASSERT_EQ(w->scene().node_item("ensemble")->state(), NodeState::Done) << w->log_text().toStdString();
  auto s = w->runs().outputs("ensemble")["structure"].as<gemflow::Structure>();
  ASSERT_NE(s, nullptr);
  ASSERT_GT(s->model_count(), 1u) << pdb << " has one model";
  w->scene().select_nodes({"ensemble"});
  QCoreApplication::processEvents();
  ASSERT_EQ(w->viewers().viewer(), "structure");
  gs::StructureViewer* sv = w->viewers().structure_viewer();
  ASSERT_TRUE(viewer_ready(sv));
  ASSERT_TRUE(sv->ensemble_shown());
  EXPECT_EQ(sv->models_shown(), s->model_count());
  ASSERT_NO_FATAL_FAILURE(float_structure_viewer(*w, sv));
  const QImage shot = sv->grab_frame();
  ASSERT_FALSE(shot.isNull());
  const PixelStats st = pixel_stats(shot);
  EXPECT_GT(st.background, 0.2);
  EXPECT_GT(st.off_background, 0.02);
  EXPECT_GT(st.colours, 20u);
  fs::create_directories(kOut);
  ASSERT_TRUE(shot.save(QString::fromStdString((kOut / "nmr-ensemble-full.png").string())));
  const fs::path png = kOut / "nmr-ensemble.png";
  ASSERT_TRUE(to_256_colours(shot).save(QString::fromStdString(png.string()), "PNG", 0));
  const auto [lo, hi] = sv->rmsf_range();
  std::cout << "screenshot for the docs: " << png.string() << " (" << fs::file_size(png) / 1024 << " KiB); "
            << s->model_count() << " models, RMSF " << lo << " - " << hi << " A\n";
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
  EXPECT_EQ(w->viewers().viewer(), "heatmap");  // still shows its output
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
  ASSERT_EQ(w->viewers().viewer(), "structure");
  auto refined = w->runs().outputs(producer)[producer_port].as<gemflow::Structure>();
  ASSERT_NE(refined, nullptr);
  ASSERT_GT(refined->atoms.size(), 500u);  // 2KPU: ~1500 atoms with hydrogens
  gs::StructureViewer* sv = w->viewers().structure_viewer();
  ASSERT_TRUE(viewer_ready(sv));
  // The kept models open superimposed (one chain: a Cα tube each), coloured by RMSF; then
  // model 1 with all its atoms.
  ASSERT_EQ(refined->model_count(), 2u);
  EXPECT_TRUE(sv->ensemble_shown());
  EXPECT_EQ(sv->models_shown(), 2u);
  EXPECT_EQ(sv->trace_count(), 2u);
  EXPECT_EQ(sv->atom_count(), 0u);
  const auto [rmsf_lo, rmsf_hi] = sv->rmsf_range();
  std::cout << "computed ensemble RMSF " << rmsf_lo << " - " << rmsf_hi << " A\n";
  EXPECT_GE(rmsf_lo, 0.0);
  EXPECT_LT(rmsf_lo, 1.0);  // the ordered core of two accepted models
  EXPECT_GT(rmsf_hi, rmsf_lo);
  EXPECT_LT(rmsf_hi, 30.0);
  sv->set_model(0);
  ASSERT_TRUE(viewer_ready(sv));
  EXPECT_FALSE(sv->ensemble_shown());
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
  std::cout << "screenshot for the docs: " << small_png.string() << " (" << fs::file_size(small_png) / 1024
            << " KiB)\n";
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
  // every registered type, and the sub-workflow node (type `workflow`, not a plugin's)
  EXPECT_EQ(w->palette().visible_count(), static_cast<int>(registry().nodes().size()) + 1);
  // A Welcome screen is shown first; in-tree builds find the shipped NMR example.
  auto* example_button = w->findChild<QPushButton*>(QStringLiteral("welcome_example"));
  ASSERT_NE(example_button, nullptr);
  EXPECT_TRUE(example_button->isVisible());
  const auto example = gs::example_workflow();
  ASSERT_FALSE(example.empty());
  EXPECT_TRUE(fs::equivalent(example, fs::path(GEMFLOW_SOURCE_DIR) / "workflows" / "nmr_structure.yaml"));
  EXPECT_TRUE(example_button->isEnabled());
}

// ---- defects of issue 40 -----------------------------------------------------------------------

const char* kTunableWorkflow = R"(gemflow: 1
name: studio-tunable
nodes:
  t: {type: guitest.tunable}
  u: {type: guitest.tunable}
links:
  - t.out -> u.in
editor:
  t: {pos: [0, 0]}
  u: {pos: [300, 0]}
)";

/// The Inspector's current page (the one before a selection change is hidden, deleted later).
QScrollArea* inspector_scroll(gs::MainWindow& w) {
  for (auto* s : w.inspector().findChildren<QScrollArea*>())
    if (!s->isHidden()) return s;
  return nullptr;
}
template <class T>
T* inspector_child(gs::MainWindow& w, const char* name) {
  QScrollArea* s = inspector_scroll(w);
  return s ? s->widget()->findChild<T*>(QString::fromLatin1(name)) : nullptr;
}

/// Every spin box and combo box of the window: none may take focus from the wheel.
void expect_no_wheel_focus(QWidget* top) {
  for (QWidget* wdg : top->findChildren<QWidget*>())
    if (qobject_cast<QAbstractSpinBox*>(wdg) || qobject_cast<QComboBox*>(wdg)) {
      EXPECT_NE(wdg->focusPolicy() & Qt::WheelFocus, Qt::WheelFocus)
          << wdg->metaObject()->className() << " " << wdg->objectName().toStdString();
    }
}

// Defect 1: scrolling over the Inspector never edits a value; the wheel scrolls the panel.
TEST_F(StudioGui, WheelOverTheInspectorNeverEditsValues) {
  ASSERT_TRUE(w->open_file(QString::fromStdString(write_file("tunable.yaml", kTunableWorkflow).string()), true));
  w->scene().select_nodes({"t"});
  QCoreApplication::processEvents();
  auto* spin = qobject_cast<QDoubleSpinBox*>(w->inspector().editor("trials"));
  auto* combo = qobject_cast<QComboBox*>(w->inspector().editor("algorithm"));
  ASSERT_NE(spin, nullptr);
  ASSERT_NE(combo, nullptr);
  // Open the long docs so that the panel has something to scroll.
  auto* toggle = inspector_child<QToolButton>(*w, "doc_toggle");
  ASSERT_NE(toggle, nullptr);
  if (!toggle->isChecked()) QTest::mouseClick(toggle, Qt::LeftButton);
  QTest::qWait(20);
  auto* scroll = inspector_scroll(*w);
  ASSERT_NE(scroll, nullptr);
  ASSERT_GT(scroll->verticalScrollBar()->maximum(), 0);
  scroll->verticalScrollBar()->setValue(0);
  w->view().setFocus();
  QCoreApplication::processEvents();
  const std::string before = w->model().to_yaml();
  const int steps = w->model().undo_stack()->count();
  for (int i = 0; i < 3; ++i) {
    wheel(spin, spin->rect().center(), -120);
    wheel(combo, combo->rect().center(), -120);
  }
  QCoreApplication::processEvents();
  EXPECT_EQ(w->model().to_yaml(), before);
  EXPECT_EQ(w->model().undo_stack()->count(), steps);
  EXPECT_EQ(spin->value(), 4.0);
  EXPECT_EQ(combo->currentText(), QStringLiteral("blocked"));
  EXPECT_FALSE(spin->hasFocus());
  EXPECT_FALSE(combo->hasFocus());
  EXPECT_GT(scroll->verticalScrollBar()->value(), 0);  // the panel scrolled instead
  // Everywhere in Studio: the viewers' lists and spin boxes too.
  expect_no_wheel_focus(w.get());
  // A focused spin box still takes the wheel: the user chose it.
  spin->setFocus();
  QCoreApplication::processEvents();
  wheel(spin, spin->rect().center(), 120);
  QCoreApplication::processEvents();
  EXPECT_EQ(spin->value(), 5.0);
  EXPECT_EQ(std::get<std::int64_t>(*w->model().param_value("t", "trials")), 5);
}

// Defect 2: Ctrl+Z / Ctrl+Shift+Z reach the document's undo stack from any focused editor;
// a text field keeps them only while it holds uncommitted typing.
TEST_F(StudioGui, UndoShortcutsReachTheDocumentFromAnyEditor) {
  ASSERT_TRUE(w->open_file(QString::fromStdString(write_file("tunable-undo.yaml", kTunableWorkflow).string()), true));
  w->scene().select_nodes({"t"});
  QCoreApplication::processEvents();
  auto* spin = qobject_cast<QDoubleSpinBox*>(w->inspector().editor("trials"));
  ASSERT_NE(spin, nullptr);
  const std::string original = w->model().to_yaml();
  spin->setFocus();
  QCoreApplication::processEvents();
  ASSERT_TRUE(spin->hasFocus());
  wheel(spin, spin->rect().center(), 120);  // focused: 4 → 5, an edit of the document
  QCoreApplication::processEvents();
  ASSERT_EQ(std::get<std::int64_t>(*w->model().param_value("t", "trials")), 5);
  QTest::keyClick(spin, Qt::Key_Z, Qt::ControlModifier);
  QCoreApplication::processEvents();
  EXPECT_EQ(w->model().to_yaml(), original);
  EXPECT_EQ(spin->value(), 4.0);
  QTest::keyClick(spin, Qt::Key_Z, Qt::ControlModifier | Qt::ShiftModifier);
  QCoreApplication::processEvents();
  EXPECT_EQ(std::get<std::int64_t>(*w->model().param_value("t", "trials")), 5);
  // From the combo box and from the node id field (no typing pending): the document's undo.
  auto* combo = qobject_cast<QComboBox*>(w->inspector().editor("algorithm"));
  ASSERT_NE(combo, nullptr);
  combo->setFocus();
  QTest::keyClick(combo, Qt::Key_Z, Qt::ControlModifier);
  QCoreApplication::processEvents();
  EXPECT_EQ(w->model().to_yaml(), original);
  auto* id = inspector_child<QLineEdit>(*w, "node_id");
  ASSERT_NE(id, nullptr);
  ASSERT_TRUE(w->model().set_param("t", "algorithm", std::string("tiled")).ok());
  QCoreApplication::processEvents();
  id = inspector_child<QLineEdit>(*w, "node_id");
  id->setFocus();
  QTest::keyClick(id, Qt::Key_Z, Qt::ControlModifier);
  QCoreApplication::processEvents();
  EXPECT_EQ(w->model().to_yaml(), original);
  // While typing in the field, Ctrl+Z undoes the typing, not the document.
  const int steps = w->model().undo_stack()->count();
  const int index = w->model().undo_stack()->index();
  id = inspector_child<QLineEdit>(*w, "node_id");
  id->setFocus();
  id->end(false);
  QTest::keyClicks(id, "xyz");
  ASSERT_EQ(id->text(), QStringLiteral("txyz"));
  QTest::keyClick(id, Qt::Key_Z, Qt::ControlModifier);
  EXPECT_EQ(id->text(), QStringLiteral("t"));
  EXPECT_EQ(w->model().undo_stack()->count(), steps);
  EXPECT_EQ(w->model().undo_stack()->index(), index);
}

// Defect 3: a click on a connected input (no drag) changes nothing; a drag back to the same
// input changes nothing; a drag onto another input moves the link in one undo step.
TEST_F(StudioGui, ClickOnAConnectedInputIsNotAnEdit) {
  if (!registry().find_node("test.add")) GTEST_SKIP() << "testnodes plugin not built";
  write_file("lines.txt", "first\nsecond\n");
  ASSERT_TRUE(w->open_file(QString::fromStdString(write_file("click.yaml", kSumWorkflow).string()), true));
  w->view().resetTransform();
  w->view().centerOn(350, 150);
  QCoreApplication::processEvents();
  const std::string before = w->model().to_yaml();
  const int steps = w->model().undo_stack()->count();
  const QPoint a = port_pos(*w, "sum", "a", false);
  mouse_click(*w, a);
  QCoreApplication::processEvents();
  EXPECT_EQ(w->model().to_yaml(), before);
  EXPECT_FALSE(w->model().modified());
  EXPECT_EQ(w->model().undo_stack()->count(), steps);
  EXPECT_EQ(w->scene().wires().size(), 2u);
  for (auto* wire : w->scene().wires()) EXPECT_TRUE(wire->isVisible());
  // Out and back onto the same input.
  QWidget* vp = w->view().viewport();
  QTest::mousePress(vp, Qt::LeftButton, {}, a);
  for (const QPoint p : {a + QPoint(-30, 0), a + QPoint(-80, -20), a + QPoint(-30, 0), a}) {
    QMouseEvent move(QEvent::MouseMove, p, vp->mapToGlobal(p), Qt::NoButton, Qt::LeftButton, Qt::NoModifier);
    QApplication::sendEvent(vp, &move);
  }
  QTest::mouseRelease(vp, Qt::LeftButton, {}, a);
  QCoreApplication::processEvents();
  EXPECT_EQ(w->model().to_yaml(), before);
  EXPECT_EQ(w->model().undo_stack()->count(), steps);
  // Onto another free input: moved, one undo step back to the same text.
  const std::string add2 = w->model().add_node("test.add", {600, 300});
  QCoreApplication::processEvents();
  const std::string with_add2 = w->model().to_yaml();
  mouse_drag(*w, port_pos(*w, "sum", "a", false), port_pos(*w, add2, "a", false));
  QCoreApplication::processEvents();
  ASSERT_EQ(w->model().workflow().links.size(), 2u);
  EXPECT_EQ(w->model().link_into("sum", "a"), nullptr);
  ASSERT_NE(w->model().link_into(add2, "a"), nullptr);
  EXPECT_EQ(w->model().link_into(add2, "a")->from_node, "a");
  w->model().undo_stack()->undo();
  EXPECT_EQ(w->model().to_yaml(), with_add2);
}

/// A workflow of `n` constants on a grid `columns` wide, `spacing` apart.
std::string grid_workflow(int n, int columns, double spacing) {
  std::ostringstream nodes, editor;
  for (int i = 0; i < n; ++i) {
    nodes << "  c" << i << ": {type: test.constant}\n";
    editor << "  c" << i << ": {pos: [" << (i % columns) * spacing << ", " << (i / columns) * spacing << "]}\n";
  }
  return "gemflow: 1\nname: grid\nnodes:\n" + nodes.str() + "editor:\n" + editor.str();
}

// Defect 4: on big graphs Fit stays within the zoom limits and the wheel works after it.
TEST_F(StudioGui, WheelZoomWorksAfterFitOnBigGraphs) {
  if (!registry().find_node("test.constant")) GTEST_SKIP() << "testnodes plugin not built";
  using gs::GraphView;
  // 500 nodes, 30 000 px wide: Fit needs a zoom of about 0.035.
  ASSERT_TRUE(
      w->open_file(QString::fromStdString(write_file("grid500.yaml", grid_workflow(500, 50, 600)).string()), true));
  QCoreApplication::processEvents();
  w->view().fit_to_view();
  const double fit = w->view().zoom();
  EXPECT_GE(fit, GraphView::kMinZoom);
  EXPECT_LT(fit, 0.05);  // the case of the report
  // Everything is in view.
  const QRect vp = w->view().viewport()->rect();
  for (auto* n : w->scene().node_items())
    EXPECT_TRUE(vp.contains(w->view().mapFromScene(n->sceneBoundingRect()).boundingRect())) << n->id();
  const QPoint centre = vp.center();
  wheel(w->view().viewport(), centre, 120);
  EXPECT_GT(w->view().zoom(), fit * 1.1);
  wheel(w->view().viewport(), centre, -120);
  EXPECT_NEAR(w->view().zoom(), fit, fit * 1e-6);
  // Too big to fit even at the smallest zoom: Fit stops at the limit, the wheel still zooms in.
  ASSERT_TRUE(
      w->open_file(QString::fromStdString(write_file("grid-huge.yaml", grid_workflow(100, 100, 5000)).string()), true));
  w->view().fit_to_view();
  EXPECT_NEAR(w->view().zoom(), GraphView::kMinZoom, 1e-9);
  wheel(w->view().viewport(), centre, -120);
  EXPECT_NEAR(w->view().zoom(), GraphView::kMinZoom, 1e-9);
  wheel(w->view().viewport(), centre, 120);
  EXPECT_GT(w->view().zoom(), GraphView::kMinZoom * 1.1);
  for (int i = 0; i < 200; ++i) wheel(w->view().viewport(), centre, 120);
  EXPECT_NEAR(w->view().zoom(), GraphView::kMaxZoom, 1e-9);
}

// Defect 5: at its default width the Inspector shows every editor and unit without scrolling
// sideways; the parameters come before the (collapsible) docs.
TEST_F(StudioGui, InspectorFitsItsDefaultWidth) {
  ASSERT_TRUE(w->open_file(QString::fromStdString(write_file("tunable-layout.yaml", kTunableWorkflow).string()), true));
  w->resize(1400, 900);
  w->arrange_docks();
  QTest::qWait(50);
  w->scene().select_nodes({"t"});
  QTest::qWait(50);
  auto* scroll = inspector_scroll(*w);
  ASSERT_NE(scroll, nullptr);
  QWidget* vp = scroll->viewport();
  std::cout << "inspector viewport: " << vp->width() << "x" << vp->height() << "\n";
  auto visible = [vp](QWidget* wdg) {
    const QRect r(wdg->mapTo(vp, QPoint(0, 0)), wdg->size());
    return r.left() >= 0 && r.right() < vp->width() && r.top() >= 0 && r.bottom() < vp->height();
  };
  const std::string long_name = "largest_distance_violation_listed_in_the_report";
  for (const std::string name : {"trials", "algorithm", long_name.c_str()}) {
    QWidget* ed = w->inspector().editor(name);
    ASSERT_NE(ed, nullptr) << name;
    EXPECT_TRUE(visible(ed)) << name << " at " << ed->mapTo(vp, QPoint(0, 0)).x() << "+" << ed->width();
  }
  QLabel* unit = nullptr;
  for (auto* l : scroll->widget()->findChildren<QLabel*>())
    if (l->text() == QStringLiteral("kcal/mol")) unit = l;
  ASSERT_NE(unit, nullptr);
  EXPECT_TRUE(visible(unit));
  EXPECT_EQ(scroll->horizontalScrollBar()->maximum(), 0);
  // Parameters first; the docs below them, collapsed, and they open on request.
  auto* toggle = inspector_child<QToolButton>(*w, "doc_toggle");
  auto* doc = inspector_child<QLabel>(*w, "node_doc");
  ASSERT_NE(toggle, nullptr);
  ASSERT_NE(doc, nullptr);
  EXPECT_GT(toggle->mapTo(vp, QPoint(0, 0)).y(), w->inspector().editor(long_name)->mapTo(vp, QPoint(0, 0)).y());
  EXPECT_FALSE(doc->isVisible());
  QTest::mouseClick(toggle, Qt::LeftButton);
  QTest::qWait(20);
  EXPECT_TRUE(doc->isVisible());
  {
    QWidget* t = w->inspector().editor("trials");
    EXPECT_TRUE(visible(t)) << t->mapTo(vp, QPoint(0, 0)).x() << "," << t->mapTo(vp, QPoint(0, 0)).y() << " "
                            << t->width() << "x" << t->height() << " in " << vp->width() << "x"
                            << vp->height();  // still first, still in view
    EXPECT_EQ(scroll->horizontalScrollBar()->maximum(), 0);
  }
  QTest::mouseClick(toggle, Qt::LeftButton);  // leave it closed for the other tests
}

// Defect 6: panels follow edits, undo and redo without reselecting.
TEST_F(StudioGui, PanelsFollowEditsUndoAndRedo) {
  if (!registry().find_node("test.read_text")) GTEST_SKIP() << "testnodes plugin not built";
  write_file("lines.txt", "first\nsecond\n");
  ASSERT_TRUE(w->open_file(QString::fromStdString(write_file("stale.yaml", kSumWorkflow).string()), true));
  w->scene().clearSelection();
  QCoreApplication::processEvents();
  auto facts = [this] {
    auto* l = inspector_child<QLabel>(*w, "workflow_facts");
    return l ? l->text().toStdString() : std::string("(none)");
  };
  EXPECT_NE(facts().find("5 node(s), 2 link(s)"), std::string::npos) << facts();
  const std::string extra = w->model().add_node("test.constant", {0, 600});
  QCoreApplication::processEvents();
  EXPECT_NE(facts().find("6 node(s), 2 link(s)"), std::string::npos) << facts();
  w->model().undo_stack()->undo();
  QCoreApplication::processEvents();
  EXPECT_NE(facts().find("5 node(s), 2 link(s)"), std::string::npos) << facts();
  w->model().undo_stack()->redo();
  QCoreApplication::processEvents();
  EXPECT_NE(facts().find("6 node(s), 2 link(s)"), std::string::npos) << facts();

  // The Inspector's state line follows the node: done after a run, gone after an edit.
  ASSERT_TRUE(run_and_wait(*w));
  w->scene().select_nodes({"sum"});
  QCoreApplication::processEvents();
  auto* status = inspector_child<QLabel>(*w, "node_status");
  ASSERT_NE(status, nullptr);
  EXPECT_TRUE(status->text().startsWith(gs::state_text(NodeState::Done))) << status->text().toStdString();
  ASSERT_TRUE(w->model().set_param("b", "value", 7.0).ok());
  QCoreApplication::processEvents();
  EXPECT_EQ(w->scene().node_item("sum")->state(), NodeState::Idle);
  EXPECT_FALSE(status->isVisibleTo(&w->inspector())) << status->text().toStdString();

  // A path field follows the disk: orange while the file is missing, plain once it exists.
  w->scene().select_nodes({"table"});
  QCoreApplication::processEvents();
  fs::remove(kOut / "appears.txt");
  ASSERT_TRUE(w->model().set_param("table", "path", std::string("appears.txt")).ok());
  QCoreApplication::processEvents();
  auto* path = qobject_cast<QLineEdit*>(w->inspector().editor("path"));
  ASSERT_NE(path, nullptr);
  EXPECT_NE(path->styleSheet().indexOf(QStringLiteral("#e0a020")), -1);
  write_file("appears.txt", "now here\n");
  EXPECT_TRUE(wait_for([path] { return path->styleSheet().isEmpty(); }, 5000)) << path->styleSheet().toStdString();

  // The viewers drop a node that undo removes.
  w->scene().select_nodes({extra});
  QCoreApplication::processEvents();
  ASSERT_EQ(w->viewers().node(), extra);
  while (w->model().workflow().find(extra)) w->model().undo_stack()->undo();
  QCoreApplication::processEvents();
  EXPECT_EQ(w->viewers().node(), "");
  EXPECT_EQ(w->viewers().viewer(), "");
}

// Defect 7: selecting a node whose output is a 20-model structure of realistic size returns at
// once; the geometry is built off the GUI thread, which keeps turning, and then shown.
TEST_F(StudioGui, SelectingABigEnsembleKeepsTheGuiResponsive) {
  const auto f =
      write_file("ensemble.yaml",
                 "gemflow: 1\nname: ensemble\nnodes:\n  ens: {type: guitest.ensemble}\n  t: {type: guitest.tunable}\n"
                 "editor:\n  ens: {pos: [0, 0]}\n  t: {pos: [300, 0]}\n");
  ASSERT_TRUE(w->open_file(QString::fromStdString(f.string()), true));
  ASSERT_TRUE(run_and_wait(*w));
  auto s = w->runs().outputs("ens")["structure"].as<gemflow::Structure>();
  ASSERT_NE(s, nullptr);
  ASSERT_EQ(s->model_count(), 20u);
  ASSERT_EQ(s->atom_count(), 1500u);
  w->scene().select_nodes({"t"});
  QTest::qWait(50);
  gs::StructureViewer* sv = w->viewers().structure_viewer();
  // The longest time the event loop goes without turning, while the view is built and drawn.
  QElapsedTimer clock;
  qint64 last = 0, longest = 0;
  QTimer tick;
  QObject::connect(&tick, &QTimer::timeout, [&] {
    longest = std::max(longest, clock.elapsed() - last);
    last = clock.elapsed();
  });
  QSignalSpy frames(sv->view(), &gs::VtkView::frame_shown);
  clock.start();
  w->scene().select_nodes({"ens"});
  const qint64 select_ms = clock.elapsed();
  last = clock.elapsed();
  tick.start(5);
  ASSERT_EQ(w->viewers().viewer(), "structure");
  ASSERT_TRUE(viewer_ready(sv));
  const qint64 ready_ms = clock.elapsed();
  // Then the first frame with the molecule (seconds in software OpenGL), drawn off the GUI
  // thread while the event loop keeps turning.
  ASSERT_TRUE(wait_for([&] { return !sv->view()->rendering(); }, 60000));
  EXPECT_GT(frames.count(), 0);
  tick.stop();
  std::cout << "select: " << select_ms << " ms, geometry after " << ready_ms << " ms, frame shown after "
            << clock.elapsed() << " ms, longest event-loop gap: " << longest << " ms ("
            << (sv->view()->threaded() ? "render thread" : "GUI thread") << ")\n";
  EXPECT_LT(select_ms, 100);
  EXPECT_LT(longest, 100);
  const PixelStats px = pixel_stats(sv->grab_frame());
  EXPECT_GT(px.background, 0.2);
  EXPECT_GT(px.off_background, 0.02);
  // The ensemble opens superimposed: a Cα tube per model; noise of 0.3 Å per coordinate gives
  // an RMSF of about 0.5 Å everywhere.
  EXPECT_TRUE(sv->ensemble_shown());
  EXPECT_EQ(sv->models_shown(), 20u);
  EXPECT_EQ(sv->trace_count(), 20u);
  const auto [rmsf_lo, rmsf_hi] = sv->rmsf_range();
  EXPECT_GT(rmsf_lo, 0.2);
  EXPECT_LT(rmsf_hi, 1.0);
  // One model with all its atoms and bonds: also built and drawn while the event loop turns.
  last = clock.elapsed();
  longest = 0;
  tick.start(5);
  sv->set_model(0);
  ASSERT_TRUE(viewer_ready(sv));
  ASSERT_TRUE(wait_for([&] { return !sv->view()->rendering(); }, 60000));
  tick.stop();
  std::cout << "model 1: longest event-loop gap: " << longest << " ms\n";
  EXPECT_LT(longest, 100);
  const PixelStats px1 = pixel_stats(sv->grab_frame());
  EXPECT_GT(px1.background, 0.2);
  EXPECT_GT(px1.off_background, 0.02);
  EXPECT_EQ(sv->atom_count(), 1500u);
  EXPECT_GE(sv->bond_count(), 1400u);  // 14 in each residue
  EXPECT_EQ(sv->trace_count(), 1u);
  // A newer request wins over one still being built.
  sv->set_model(3);
  sv->set_model(5);
  ASSERT_TRUE(viewer_ready(sv));
  EXPECT_EQ(sv->atom_count(), 1500u);
}

/// Answers the modal file dialogs that open while it lives: records the name filters and picks
/// `file`, again on every tick while the dialog is still open (its folder loads
/// asynchronously: an early accept may find no selection); gives up (rejects) after 10 s.
struct DialogAnswer {
  QStringList filters;
  bool answered = false;
  std::string unexpected;
  QTimer timer;
  QElapsedTimer clock;
  explicit DialogAnswer(const QString& file) {
    clock.start();
    QObject::connect(&timer, &QTimer::timeout, [this, file] {
      QWidget* modal = QApplication::activeModalWidget();
      auto* d = qobject_cast<QFileDialog*>(modal);
      if (modal && !d) {  // something else (a message box): the test fails, nothing hangs
        unexpected = modal->metaObject()->className();
        if (auto* box = qobject_cast<QMessageBox*>(modal)) unexpected += ": " + box->text().toStdString();
        modal->close();
        return;
      }
      if (!d) return;
      if (clock.elapsed() > 10000) {
        d->reject();
        return;
      }
      filters = d->nameFilters();
      // Typed, as a user would: selectFile() depends on the folder having loaded.
      if (auto* name = d->findChild<QLineEdit*>(QStringLiteral("fileNameEdit"))) name->setText(file);
      else d->selectFile(file);
      static_cast<QDialog*>(d)->accept();  // QFileDialog::accept checks the selection
      answered = d->result() == QDialog::Accepted;
    });
    timer.start(20);
  }
};

// Defect 8: the picker offers the parameter's extensions; paths picked before the first save
// are stored relative to the file once it is saved.
TEST_F(StudioGui, PathPickerFiltersAndFirstSaveMakesPathsRelative) {
  if (!registry().find_node("io.read_structure")) GTEST_SKIP() << "io plugin not built";
  const fs::path pdb = fs::path(GEMFLOW_SOURCE_DIR) / "sample_data" / "2kpu" / "2kpu.pdb";
  w->new_file();
  const std::string id = w->model().add_node("io.read_structure", {0, 0});
  w->scene().select_nodes({id});
  QCoreApplication::processEvents();
  auto* edit = qobject_cast<QLineEdit*>(w->inspector().editor("path"));
  ASSERT_NE(edit, nullptr);
  auto* pick = edit->parentWidget()->findChild<QToolButton*>();
  ASSERT_NE(pick, nullptr);
  {
    DialogAnswer answer(QString::fromStdString(pdb.string()));
    QTest::mouseClick(pick, Qt::LeftButton);
    ASSERT_TRUE(answer.answered) << answer.unexpected;
    EXPECT_EQ(answer.unexpected, "");
    ASSERT_FALSE(answer.filters.isEmpty());
    const QString first = answer.filters.front();
    for (const char* ext : {"*.pdb", "*.ent", "*.cif", "*.mmcif"})
      EXPECT_NE(first.indexOf(QLatin1String(ext)), -1) << first.toStdString();
    EXPECT_TRUE(answer.filters.back().contains(QStringLiteral("(*)")));
  }
  // Unsaved: absolute (there is no file to be relative to).
  const auto* v = w->model().workflow().find(id)->param("path");
  ASSERT_NE(v, nullptr);
  EXPECT_TRUE(fs::path(std::get<std::string>(*v)).is_absolute());
  // The first save makes it relative to the file, and the file still finds the structure.
  const fs::path dir = kOut / "first-save" / "deep";
  fs::create_directories(dir);
  w->model().save(dir / "picked.yaml");
  EXPECT_FALSE(w->model().modified());
  const std::string stored = std::get<std::string>(*w->model().workflow().find(id)->param("path"));
  EXPECT_TRUE(fs::path(stored).is_relative()) << stored;
  std::ifstream in(dir / "picked.yaml");
  const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  EXPECT_EQ(text.find(pdb.string()), std::string::npos) << text;
  auto loaded = gemflow::load_workflow(dir / "picked.yaml", registry());
  ASSERT_TRUE(loaded.ok()) << (loaded.diagnostics.empty() ? "" : loaded.diagnostics.front().str());
  EXPECT_TRUE(fs::equivalent(dir / std::get<std::string>(*loaded.workflow->find(id)->param("path")), pdb));
  // After a save, a picked path is relative at once.
  {
    DialogAnswer answer(QString::fromStdString(pdb.string()));
    QTest::mouseClick(pick, Qt::LeftButton);
    ASSERT_TRUE(answer.answered) << answer.unexpected;
    EXPECT_EQ(answer.unexpected, "");
  }
  EXPECT_TRUE(fs::path(edit->text().toStdString()).is_relative()) << edit->text().toStdString();
}

// Defect 9: Open Recent holds this user's files of this application only.
TEST_F(StudioGui, RecentFilesArePerUserAndPerApplication) {
  const char* config_home = std::getenv("XDG_CONFIG_HOME");
  const char* config_dirs = std::getenv("XDG_CONFIG_DIRS");
  ASSERT_NE(config_home, nullptr);
  ASSERT_NE(config_dirs, nullptr);
  const QString org = QCoreApplication::organizationName();
  const QString app = QCoreApplication::applicationName();
  struct Restore {
    QString app;
    ~Restore() { QCoreApplication::setApplicationName(app); }
  } restore{app};
  QCoreApplication::setApplicationName(QStringLiteral("studio_recent_test"));  // a fresh list
  // Other applications of the organisation and other users (system-wide) have lists of their own.
  const std::string other_app = "[General]\nrecent_files=/elsewhere/other-application.yaml\n";
  const std::string other_user = "[General]\nrecent_files=/elsewhere/other-user.yaml\n";
  const fs::path home(config_home), system(std::string(config_dirs).substr(0, std::string(config_dirs).find(':')));
  fs::create_directories(home);
  fs::create_directories(system / org.toStdString());
  std::ofstream(home / (org.toStdString() + ".conf")) << other_app;
  std::ofstream(system / (org.toStdString() + ".conf")) << other_user;
  std::ofstream(system / org.toStdString() / "studio_recent_test.conf") << other_user;

  auto fresh = std::make_unique<gs::MainWindow>(registry(), std::vector<gemflow::PluginRecord>{});
  EXPECT_TRUE(fresh->recent_files().isEmpty()) << fresh->recent_files().join(QStringLiteral(", ")).toStdString();
  auto* menu = fresh->findChild<QMenu*>(QStringLiteral("recent_menu"));
  ASSERT_NE(menu, nullptr);
  EXPECT_TRUE(menu->actions().isEmpty());
  auto* list = fresh->findChild<QListWidget*>(QStringLiteral("welcome_recent"));
  ASSERT_NE(list, nullptr);
  EXPECT_EQ(list->count(), 0);

  // Opening a file lists it, in this user's file of this application, for its other windows.
  fresh->set_prompt_enabled(false);
  const fs::path f = write_file("recent.yaml", kTunableWorkflow);
  ASSERT_TRUE(fresh->open_file(QString::fromStdString(f.string()), true));
  const QString abs = QString::fromStdString(fs::absolute(f).lexically_normal().string());
  EXPECT_EQ(fresh->recent_files(), QStringList{abs});
  auto second = std::make_unique<gs::MainWindow>(registry(), std::vector<gemflow::PluginRecord>{});
  EXPECT_EQ(second->recent_files(), QStringList{abs});
  EXPECT_EQ(second->findChild<QListWidget*>(QStringLiteral("welcome_recent"))->count(), 1);
  const fs::path own = home / org.toStdString() / "studio_recent_test.conf";
  ASSERT_TRUE(fs::exists(own));
  std::ifstream in(own);
  const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  EXPECT_NE(text.find("recent.yaml"), std::string::npos) << text;
  std::ifstream in2(home / (org.toStdString() + ".conf"));
  const std::string org_text((std::istreambuf_iterator<char>(in2)), std::istreambuf_iterator<char>());
  EXPECT_EQ(org_text, other_app);  // nobody else's list was touched
  // Another application name: its own list.
  QCoreApplication::setApplicationName(QStringLiteral("studio_recent_test_other"));
  EXPECT_TRUE(fresh->recent_files().isEmpty());
}
}  // namespace

int main(int argc, char** argv) {
  ::testing::InitGoogleTest(&argc, argv);
  gs::set_default_surface_format();
  // Settings, caches and data of this process only, in a folder of its own (Qt's test mode would
  // share ~/.qttest with every other test process): the user's files are never touched, and
  // concurrent runs never see each other's recent files.
  char tmpl[] = "/tmp/gemflow-studio-gui-XXXXXX";
  const char* home = mkdtemp(tmpl);
  if (!home) {
    std::cerr << "cannot create a temporary folder\n";
    return 1;
  }
  const std::string h = home;
  for (const auto& [var, sub] :
       {std::pair{"XDG_CONFIG_HOME", "/config"}, std::pair{"XDG_CONFIG_DIRS", "/system-config"},
        std::pair{"XDG_CACHE_HOME", "/cache"}, std::pair{"XDG_DATA_HOME", "/data"}})
    setenv(var, (h + sub).c_str(), 1);
  QCoreApplication::setAttribute(Qt::AA_DontUseNativeDialogs);  // dialogs the test can answer
  QApplication app(argc, argv);
  QApplication::setStyle(QStringLiteral("Fusion"));
  gs::apply_studio_palette();  // as gemflow-studio: the screenshots show the real look
  QApplication::setOrganizationName(QStringLiteral("GemflowTest"));
  QApplication::setApplicationName(QStringLiteral("studio_gui_test"));
  const int rc = RUN_ALL_TESTS();
  std::error_code ec;
  fs::remove_all(h, ec);
  return rc;
}
