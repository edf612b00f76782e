// Studio's viewers of the new data types under a real (virtual) display: a node's previews
// refresh the Viewers dock while it runs and the final value replaces them; a segmentation is
// shown with the signal upstream and the posterior selected with it; the circle-packing and
// mesh viewers' VTK scenes. Run through tests/gui/run_gui_test.sh (xvfb-run -a).
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iostream>
#include <limits>
#include <map>
#include <numbers>
#include <thread>

#include <gtest/gtest.h>

#include <QApplication>
#include <QDoubleSpinBox>
#include <QElapsedTimer>
#include <QImage>
#include <QMouseEvent>
#include <QSignalSpy>
#include <QTest>

#include <vtkRenderer.h>

#include <gemflow/types.hpp>

#include "app/main_window.hpp"
#include "editor/graph_scene.hpp"
#include "editor/style.hpp"
#include "model/graph_model.hpp"
#include "run/run_controller.hpp"
#include "viewers/data_viewers.hpp"
#include "viewers/image_viewer.hpp"
#include "viewers/mesh_viewers.hpp"
#include "viewers/series_viewer.hpp"
#include "viewers/viewer_panel.hpp"
#include "viewers/viewer_registry.hpp"
#include "viewers/vtk_view.hpp"

namespace fs = std::filesystem;
namespace gs = gemflow::studio;

namespace {

// ---- node types of this test only ----------------------------------------------------------

/// The stage a Refine node waits for (set by the test): 0 → preview 0.25 and wait; 1 → preview
/// 0.5 and wait; 2 → finish with 1.0.
std::atomic<int> g_stage{0};
std::atomic<int> g_reached{-1};

gemflow::Image grey(float v) {
  gemflow::Image im(8, 6, gemflow::Image::Format::RGBA32F);
  for (std::size_t i = 0; i < im.f32.size(); i += 4) {
    im.f32[i] = im.f32[i + 1] = im.f32[i + 2] = v;
    im.f32[i + 3] = 1.0f;
  }
  return im;
}

/// A progressive renderer: two previews of its image, then the final one.
struct Refine final : gemflow::Node {
  static gemflow::NodeInfo info() {
    return {.id = "viewtest.refine",
            .version = 1,
            .title = "Refine",
            .category = "Viewer test",
            .doc = "Previews its image"};
  }
  gemflow::Output<gemflow::Image> image{this, "image", "the picture"};
  void execute(gemflow::NodeContext& ctx) override {
    auto wait_for_stage = [&](int s) {
      while (g_stage.load() < s)
        if (ctx.cancelled()) throw gemflow::Error("cancelled");
        else std::this_thread::sleep_for(std::chrono::milliseconds(5));
    };
    ctx.preview("image", gemflow::Value::make(grey(0.25f)));
    g_reached = 0;
    wait_for_stage(1);
    std::this_thread::sleep_for(std::chrono::milliseconds(120));  // past the executor's 10/s limit
    ctx.preview("image", gemflow::Value::make(grey(0.5f)));
    g_reached = 1;
    wait_for_stage(2);
    image.set(grey(1.0f));
  }
};

struct MakeSignal final : gemflow::Node {
  static gemflow::NodeInfo info() {
    return {
        .id = "viewtest.signal", .version = 1, .title = "Signal", .category = "Viewer test", .doc = "A step signal"};
  }
  gemflow::Output<gemflow::Signal> signal{this, "signal", "300 samples, a step at 100 and 200"};
  void execute(gemflow::NodeContext&) override {
    gemflow::Signal s;
    s.samples = gemflow::Matrix<double>(300, 1);
    for (std::size_t t = 0; t < 300; ++t) s.samples(t, 0) = t < 100 ? 0.0 : t < 200 ? 5.0 : 1.0;
    s.sample_rate = 10;
    s.channels = {"level"};
    s.units = {"m"};
    signal.set(std::move(s));
  }
};

struct Segment final : gemflow::Node {
  static gemflow::NodeInfo info() {
    return {
        .id = "viewtest.segment", .version = 1, .title = "Segment", .category = "Viewer test", .doc = "Three segments"};
  }
  gemflow::Input<gemflow::Signal> in{this, "signal", "the signal"};
  gemflow::Output<gemflow::Segmentation> segments{this, "segments", "the segments"};
  void execute(gemflow::NodeContext&) override {
    gemflow::Segmentation s;
    s.length = in.get()->length();
    s.labels = {"low", "high"};
    s.segments = {{0, 100, 0, 1.0}, {100, 200, 1, 2.0}, {200, s.length, 0, 3.0}};
    s.sample_rate = 10;
    segments.set(std::move(s));
  }
};

/// Label and boundary posteriors, as semicrf.marginals gives them (two Scores outputs).
struct Posterior final : gemflow::Node {
  static gemflow::NodeInfo info() {
    return {
        .id = "viewtest.posterior", .version = 1, .title = "Posterior", .category = "Viewer test", .doc = "Posteriors"};
  }
  gemflow::Input<gemflow::Signal> in{this, "signal", "the signal"};
  gemflow::Output<gemflow::Scores> labels{this, "labels", "log P(label at t)"};
  gemflow::Output<gemflow::Scores> boundary{this, "boundary", "log P(boundary at t)"};
  void execute(gemflow::NodeContext&) override {
    gemflow::Scores l;
    l.scores = gemflow::Matrix<double>(in.get()->length(), 2, std::log(0.5));
    l.labels = {"low", "high"};
    labels.set(std::move(l));
    gemflow::Scores s;
    s.scores = gemflow::Matrix<double>(in.get()->length(), 1, std::log(0.01));
    s.scores(100, 0) = std::log(0.95);
    s.scores(200, 0) = std::log(0.9);
    s.labels = {"boundary"};
    s.sample_rate = 10;
    boundary.set(std::move(s));
  }
};

/// A bumpy n × n grid over [0, 1]² (a disk-type surface).
std::shared_ptr<gemflow::TriMesh> bumpy_grid(int n) {
  auto mesh = std::make_shared<gemflow::TriMesh>();
  for (int j = 0; j <= n; ++j)
    for (int i = 0; i <= n; ++i) {
      const double x = static_cast<double>(i) / n, y = static_cast<double>(j) / n;
      mesh->vertices.push_back({x, y, 0.15 * std::sin(3 * x) * std::cos(2 * y) + 0.05});
    }
  for (int j = 0; j < n; ++j)
    for (int i = 0; i < n; ++i) {
      const auto a = static_cast<std::uint32_t>(j * (n + 1) + i);
      mesh->faces.push_back({a, a + 1, a + n + 2});
      mesh->faces.push_back({a, a + n + 2, a + n + 1});
    }
  mesh->boundary = gemflow::boundary_loops(mesh->vertices.size(), mesh->faces);
  return mesh;
}

struct MakeMesh final : gemflow::Node {
  static gemflow::NodeInfo info() {
    return {.id = "viewtest.mesh", .version = 1, .title = "Mesh", .category = "Viewer test", .doc = "A bumpy grid"};
  }
  gemflow::Output<gemflow::TriMesh> mesh{this, "mesh", "the surface"};
  void execute(gemflow::NodeContext&) override { mesh.set(bumpy_grid(6)); }
};

/// A flattening as circlepack.flatten gives it: the same faces, vertices (u, v, 0).
struct Flatten final : gemflow::Node {
  static gemflow::NodeInfo info() {
    return {.id = "viewtest.flatten", .version = 1, .title = "Flatten", .category = "Viewer test", .doc = "Drops z"};
  }
  gemflow::Input<gemflow::TriMesh> in{this, "mesh", "the surface"};
  gemflow::Output<gemflow::TriMesh> flat{this, "flat", "the flattening"};
  void execute(gemflow::NodeContext&) override {
    gemflow::TriMesh f = *in.get();
    for (auto& v : f.vertices) v[2] = 0.0;
    flat.set(std::move(f));
  }
};

const fs::path kOut = fs::path(GEMFLOW_BINARY_DIR) / "studio-test";

gemflow::Registry& registry() {
  static gemflow::Registry reg;
  static bool loaded = false;
  if (!loaded) {
    reg.add_node<Refine>("viewtest");
    reg.add_node<MakeSignal>("viewtest");
    reg.add_node<Segment>("viewtest");
    reg.add_node<Posterior>("viewtest");
    reg.add_node<MakeMesh>("viewtest");
    reg.add_node<Flatten>("viewtest");
    loaded = true;
  }
  return reg;
}

fs::path write_file(const std::string& name, const std::string& text) {
  fs::create_directories(kOut);
  fs::path f = kOut / name;
  std::ofstream(f) << text;
  return f;
}

bool wait_for(const std::function<bool()>& ok, int ms = 20000) {
  QElapsedTimer t;
  t.start();
  while (!ok()) {
    if (t.elapsed() > ms) return false;
    QTest::qWait(5);
  }
  return true;
}

/// The red channel of the shown image's pixel (0, 0) (its stored value, 0 when none is shown).
float shown_value(gs::MainWindow& w) {
  auto* iv = qobject_cast<gs::ImageViewer*>(w.viewers().viewer_widget("image"));
  if (!iv || !iv->canvas()->image() || iv->canvas()->image()->f32.empty()) return 0.0f;
  return iv->canvas()->image()->f32[0];
}

/// Screenshots for docs/images (a widget of the window: no paths in it).
void save_shot(QWidget* widget, const std::string& name) {
  fs::create_directories(kOut);
  widget->grab().save(QString::fromStdString((kOut / name).string()));
}

class ViewersGui : public ::testing::Test {
 protected:
  void SetUp() override {
    w = std::make_unique<gs::MainWindow>(registry(), std::vector<gemflow::PluginRecord>{});
    w->set_prompt_enabled(false);
    w->runs().set_out_dir(kOut / "runs");
    w->show();
    ASSERT_TRUE(QTest::qWaitForWindowExposed(w.get()));
  }
  void TearDown() override {
    g_stage = 2;  // a node still waiting finishes
    if (w) w->runs().wait();
    w.reset();
  }
  std::unique_ptr<gs::MainWindow> w;
};

}  // namespace

TEST_F(ViewersGui, PreviewsRefreshTheViewerAndTheFinalValueReplacesThem) {
  g_stage = 0;
  g_reached = -1;
  const auto f = write_file("refine.yaml", "gemflow: 1\nname: viewers-preview\nnodes:\n  r: {type: viewtest.refine}\n");
  ASSERT_TRUE(w->open_file(QString::fromStdString(f.string()), true));
  w->show_editor();
  w->scene().select_nodes({"r"});
  QCoreApplication::processEvents();
  ASSERT_EQ(w->viewers().node(), "r");
  QSignalSpy done(&w->runs(), &gs::RunController::finished);
  w->run();
  // First preview: shown while the node runs, as an intermediate value.
  ASSERT_TRUE(wait_for([&] { return shown_value(*w) == 0.25f; })) << "the first preview was not shown";
  EXPECT_TRUE(w->runs().running());
  EXPECT_TRUE(w->viewers().showing_preview());
  EXPECT_EQ(w->viewers().viewer(), "image");
  EXPECT_EQ(w->runs().outputs("r").count("image"), 0u) << "a preview is not an output";
  // The user zooms in; the next preview replaces the value and keeps the view.
  auto* iv = qobject_cast<gs::ImageViewer*>(w->viewers().viewer_widget("image"));
  ASSERT_NE(iv, nullptr);
  iv->canvas()->zoom_by(2.0, QPointF(20, 20));
  const double scale = iv->canvas()->scale();
  const QPointF offset = iv->canvas()->offset();
  g_stage = 1;
  ASSERT_TRUE(wait_for([&] { return shown_value(*w) == 0.5f; })) << "the second preview did not replace the first";
  EXPECT_TRUE(w->viewers().showing_preview());
  EXPECT_EQ(iv->canvas()->scale(), scale);
  EXPECT_EQ(iv->canvas()->offset(), offset);
  // The node finishes: the final value, no longer a preview, and the preview is gone.
  g_stage = 2;
  ASSERT_TRUE(done.wait(20000));
  QCoreApplication::processEvents();
  EXPECT_EQ(shown_value(*w), 1.0f);
  EXPECT_FALSE(w->viewers().showing_preview());
  EXPECT_TRUE(w->runs().preview("r", "image").empty());
  EXPECT_EQ(w->runs().outputs("r").count("image"), 1u);
}

TEST_F(ViewersGui, CancelledNodeDropsItsPreview) {
  g_stage = 0;
  g_reached = -1;
  const auto f =
      write_file("refine_cancel.yaml", "gemflow: 1\nname: viewers-cancel\nnodes:\n  r: {type: viewtest.refine}\n");
  ASSERT_TRUE(w->open_file(QString::fromStdString(f.string()), true));
  w->scene().select_nodes({"r"});
  QSignalSpy done(&w->runs(), &gs::RunController::finished);
  w->run();
  ASSERT_TRUE(wait_for([&] { return w->viewers().showing_preview(); }));
  w->cancel_run();
  ASSERT_TRUE(done.wait(20000));
  QCoreApplication::processEvents();
  EXPECT_FALSE(w->viewers().showing_preview());
  EXPECT_EQ(w->viewers().viewer(), "") << "no value: the dock says it has not been computed";
  EXPECT_TRUE(w->runs().preview("r", "image").empty());
}

TEST_F(ViewersGui, SegmentationShowsTheSignalUpstreamAndTheSelectedPosterior) {
  const auto f = write_file("segment.yaml", R"(gemflow: 1
name: viewers-series
nodes:
  sig: {type: viewtest.signal}
  seg: {type: viewtest.segment}
  post: {type: viewtest.posterior}
links:
  - sig.signal -> seg.signal
  - sig.signal -> post.signal
editor:
  sig: {pos: [0, 0]}
  seg: {pos: [300, 0]}
  post: {pos: [300, 200]}
)");
  ASSERT_TRUE(w->open_file(QString::fromStdString(f.string()), true));
  w->show_editor();
  QSignalSpy done(&w->runs(), &gs::RunController::finished);
  w->run();
  ASSERT_TRUE(done.wait(20000));
  QCoreApplication::processEvents();
  // The segmentation alone: the signal comes from upstream.
  w->scene().select_nodes({"seg"});
  QCoreApplication::processEvents();
  EXPECT_EQ(w->viewers().viewer(), "series");
  EXPECT_EQ(w->viewers().companions_shown(), QStringList{QStringLiteral("Signal=sig.signal")});
  auto* sv = qobject_cast<gs::SeriesViewer*>(w->viewers().viewer_widget("series"));
  ASSERT_NE(sv, nullptr);
  ASSERT_TRUE(sv->canvas()->segmentation());
  ASSERT_TRUE(sv->canvas()->signal());
  EXPECT_TRUE(sv->canvas()->scores().empty());
  // With the posterior selected too: its strip joins (whichever of the two the dock follows).
  w->scene().select_nodes({"seg", "post"});
  QCoreApplication::processEvents();
  const QStringList shown = w->viewers().companions_shown();
  EXPECT_TRUE(shown.contains(QStringLiteral("Signal=sig.signal"))) << shown.join(' ').toStdString();
  EXPECT_TRUE(shown.contains(QStringLiteral("Scores=post.labels")) ||
              shown.contains(QStringLiteral("Segmentation=seg.segments")))
      << shown.join(' ').toStdString();
  // The dock's own rule, independent of which item the scene reports first.
  w->viewers().set_selection({"seg", "post"});
  w->viewers().follow("seg");
  // Both posteriors of the selected node, in the order its type declares them: one strip each.
  EXPECT_EQ(w->viewers().companions_shown(),
            (QStringList{QStringLiteral("Signal=sig.signal"), QStringLiteral("Scores=post.labels"),
                         QStringLiteral("Scores=post.boundary")}));
  ASSERT_EQ(sv->canvas()->scores().size(), 2u);
  EXPECT_EQ(sv->canvas()->scores()[0]->classes(), 2u);
  EXPECT_EQ(sv->canvas()->scores()[1]->length(), 300u);
  // The posterior is not found upstream: selected alone, the segmentation has none.
  w->viewers().set_selection({"seg"});
  w->viewers().follow("seg");
  EXPECT_TRUE(sv->canvas()->scores().empty());
  // The hover readout names the segment and the posterior at the step.
  w->viewers().set_selection({"seg", "post"});
  w->viewers().follow("seg");
  const QRect plot = sv->canvas()->plot_rect();
  const QString r = sv->canvas()->readout_at(QPointF(plot.left() + 100.5 / 300 * plot.width(), plot.center().y()));
  EXPECT_NE(r.indexOf(QStringLiteral("t = 10 s, level = 5")), -1) << r.toStdString();
  EXPECT_NE(r.indexOf(QStringLiteral("segment [100, 200) high")), -1) << r.toStdString();
  EXPECT_NE(r.indexOf(QStringLiteral("boundary 0.95")), -1) << r.toStdString();
  // A screenshot of the same values at a readable size.
  gs::SeriesViewer shot;
  shot.resize(900, 340);
  shot.show();
  ASSERT_TRUE(QTest::qWaitForWindowExposed(&shot));
  shot.show_segmentation(sv->canvas()->segmentation(), QStringLiteral("seg.segments"));
  shot.add_signal(sv->canvas()->signal(), QStringLiteral("sig.signal"));
  shot.add_scores(sv->canvas()->scores()[1], QStringLiteral("post.boundary"));
  save_shot(&shot, "viewer-series.png");
}

// ---- VTK viewers -------------------------------------------------------------------------

TEST_F(ViewersGui, AFlatteningIsShownBesideTheMeshUpstreamOfIt) {
  const auto f = write_file("flatten.yaml", R"(gemflow: 1
name: viewers-flatten
nodes:
  mk: {type: viewtest.mesh}
  flat: {type: viewtest.flatten}
links:
  - mk.mesh -> flat.mesh
)");
  ASSERT_TRUE(w->open_file(QString::fromStdString(f.string()), true));
  QSignalSpy done(&w->runs(), &gs::RunController::finished);
  w->run();
  ASSERT_TRUE(done.wait(20000));
  QCoreApplication::processEvents();
  auto* mv = qobject_cast<gs::TriMeshViewer*>(w->viewers().viewer_widget("mesh"));
  ASSERT_NE(mv, nullptr);
  // The flattening selected: the 3D mesh upstream joins it, textured through the flat (x, y).
  w->scene().select_nodes({"flat"});
  QCoreApplication::processEvents();
  EXPECT_EQ(w->viewers().viewer(), "mesh");
  EXPECT_EQ(w->viewers().companions_shown(), QStringList{QStringLiteral("TriMesh=mk.mesh")});
  EXPECT_TRUE(mv->showing_flattening());
  EXPECT_NE(mv->info().indexOf(QStringLiteral("flat.flat with mk.mesh")), -1) << mv->info().toStdString();
  // The 3D mesh alone has no flattening upstream; selected with it, it has.
  w->scene().select_nodes({"mk"});
  QCoreApplication::processEvents();
  EXPECT_FALSE(mv->showing_flattening());
  w->viewers().set_selection({"mk", "flat"});
  w->viewers().follow("mk");
  EXPECT_TRUE(mv->showing_flattening());
}

namespace {
/// A hexagonal patch of unit-spaced equal circles (radius 0.5) in `rings` rings around one:
/// 1 + 3·rings·(rings + 1) circles, triangulated.
gemflow::CirclePacking hex_patch(int rings) {
  gemflow::CirclePacking p;
  std::map<std::pair<int, int>, std::uint32_t> id;
  for (int q = -rings; q <= rings; ++q)
    for (int r = std::max(-rings, -q - rings); r <= std::min(rings, -q + rings); ++r) {
      id[{q, r}] = static_cast<std::uint32_t>(p.radii.size());
      p.radii.push_back(0.5);
      p.centres.push_back({q + r / 2.0, r * std::sqrt(3.0) / 2});
      p.boundary.push_back(std::max({std::abs(q), std::abs(r), std::abs(q + r)}) == rings ? 1 : 0);
    }
  for (const auto& [k, i] : id) {
    auto a = id.find({k.first + 1, k.second}), b = id.find({k.first, k.second + 1}),
         c = id.find({k.first - 1, k.second + 1});
    if (a != id.end() && b != id.end()) p.faces.push_back({i, a->second, b->second});
    if (b != id.end() && c != id.end()) p.faces.push_back({i, b->second, c->second});
  }
  return p;
}

QColor pixel_of(gs::VtkView& view, const QImage& frame, double x, double y) {
  double d[3] = {0, 0, 0};
  view.query([&](vtkRenderer* ren) {
    ren->SetWorldPoint(x, y, 0, 1);
    ren->WorldToDisplay();
    ren->GetDisplayPoint(d);
  });
  const int px = static_cast<int>(std::lround(d[0])), py = frame.height() - 1 - static_cast<int>(std::lround(d[1]));
  return frame.pixelColor(std::clamp(px, 0, frame.width() - 1), std::clamp(py, 0, frame.height() - 1));
}
}  // namespace

TEST_F(ViewersGui, PackingViewerDrawsOneDiskPerCircleWithinThePackingsBounds) {
  auto flower = std::make_shared<gemflow::CirclePacking>(hex_patch(1));  // the hexagonal flower
  ASSERT_EQ(flower->size(), 7u);
  ASSERT_EQ(flower->faces.size(), 6u);
  ASSERT_TRUE(!flower->validate()) << *flower->validate();
  ASSERT_LT(flower->tangency_error(), 1e-12);
  gs::PackingViewer v;
  v.resize(700, 520);
  v.show();
  ASSERT_TRUE(QTest::qWaitForWindowExposed(&v));
  v.set_packing(flower, QStringLiteral("pack.packing"));
  ASSERT_TRUE(wait_for([&] { return !v.building(); }));
  const QImage frame = v.view()->grab_frame();
  if (frame.isNull()) GTEST_SKIP() << "no OpenGL: " << v.view()->error().toStdString();
  const gs::SceneStats s = v.scene_stats();
  EXPECT_EQ(s.disk_instances, 7u);
  EXPECT_EQ(s.edge_lines, 12u);  // 6 spokes + 6 rim edges, each once
  // The disks' bounds are the circles' (centres ± radius): x ∈ [−1.5, 1.5], y ∈ ±(√3/2 + 0.5).
  const double tol = 0.5 * (1 - std::cos(std::numbers::pi / 48)) + 1e-9;  // the 48-gon's sag
  const double ymax = std::sqrt(3.0) / 2 + 0.5;
  EXPECT_NEAR(s.disk_bounds[0], -1.5, tol);
  EXPECT_NEAR(s.disk_bounds[1], 1.5, tol);
  EXPECT_NEAR(s.disk_bounds[2], -ymax, tol);
  EXPECT_NEAR(s.disk_bounds[3], ymax, tol);
  // Equal radii: one colour, the middle of the scale, inside each disk (between the spokes).
  const QColor mid = gs::colormap(0.5);
  for (double a : {std::numbers::pi / 6, 7 * std::numbers::pi / 6}) {
    const QColor c = pixel_of(*v.view(), frame, 0.3 * std::cos(a), 0.3 * std::sin(a));
    EXPECT_NEAR(c.red(), mid.red(), 4);
    EXPECT_NEAR(c.green(), mid.green(), 4);
    EXPECT_NEAR(c.blue(), mid.blue(), 4);
  }
  // Outside every circle: the background.
  const QColor bg = pixel_of(*v.view(), frame, 1.45, 1.2);
  EXPECT_NEAR(bg.red(), 28, 4);
  // A circle without a finite centre or radius is counted, not drawn, nor are its edges.
  auto broken = std::make_shared<gemflow::CirclePacking>(*flower);
  broken->centres[3][0] = std::numeric_limits<double>::quiet_NaN();
  broken->radii[5] = std::numeric_limits<double>::infinity();
  v.set_packing(broken, QStringLiteral("pack.packing"));
  ASSERT_TRUE(wait_for([&] { return !v.building(); }));
  const gs::SceneStats bs = v.scene_stats();
  EXPECT_EQ(bs.disk_instances, 5u);
  EXPECT_EQ(bs.edge_lines, 4u);  // circle 3 is the centre (its 6 spokes go), circle 5 a petal (2 rim edges)
  EXPECT_TRUE(std::isfinite(bs.disk_bounds[0]) && std::isfinite(bs.disk_bounds[3]));
  EXPECT_NE(v.info().indexOf(QStringLiteral("2 circles without a finite centre and radius not drawn")), -1)
      << v.info().toStdString();
  v.set_packing(flower, QStringLiteral("pack.packing"));
  ASSERT_TRUE(wait_for([&] { return !v.building(); }));
  // Angle error: the centre is interior (its error is 0 here), the petals are boundary (grey).
  v.set_colour(gs::PackingViewer::Colour::AngleError);
  ASSERT_TRUE(wait_for([&] { return !v.building(); }));
  EXPECT_NE(v.info().indexOf(QStringLiteral("angle error")), -1);
  EXPECT_EQ(v.scene_stats().disk_instances, 7u);

  // A large packing (above the 20 000 circles where edges go off by default): one glyph
  // instance per circle in one actor, built off the GUI thread. (10⁵ circles behave the same;
  // they cost seconds a frame in software OpenGL, too slow for `make test`.)
  const int rings = 100;
  auto big = std::make_shared<gemflow::CirclePacking>(hex_patch(rings));  // 30 301 circles
  QElapsedTimer t;
  t.start();
  std::clock_t cpu = std::clock();
  v.set_packing(big, QStringLiteral("pack.packing"));
  std::cout << big->size() << " circles: set_packing returns after " << t.elapsed() << " ms\n";
  // The GUI stays responsive while the geometry is built: the event loop turns every few ms.
  qint64 longest = 0, last = t.elapsed();
  ASSERT_TRUE(wait_for([&] {
    longest = std::max(longest, t.elapsed() - last);
    last = t.elapsed();
    return !v.building();
  }));
  std::cout << "geometry built after " << t.elapsed() << " ms; longest event-loop gap " << longest << " ms\n";
  EXPECT_LT(longest, 100) << "the GUI stalled while the packing's geometry was built";
  (void)v.view()->grab_frame();
  std::cout << big->size() << " circles: set + first frame " << t.elapsed()
            << " ms (CPU, all threads: " << 1000.0 * static_cast<double>(std::clock() - cpu) / CLOCKS_PER_SEC
            << " ms; software OpenGL)\n";
  const gs::SceneStats b = v.scene_stats();
  EXPECT_EQ(b.disk_instances, big->size());
  EXPECT_FALSE(v.edges()) << "beyond 20 000 circles, edges are off by default";
  EXPECT_EQ(b.actors, 1u) << "one actor whatever the count";
  EXPECT_NEAR(b.disk_bounds[1] - b.disk_bounds[0], 2 * rings + 1, 1e-6);
  EXPECT_EQ(b.edge_lines, 0u);

  // For docs/studio.md: a hexagonal patch with its layout bent, coloured by tangency error.
  auto bent = std::make_shared<gemflow::CirclePacking>(hex_patch(7));
  for (auto& c : bent->centres) c[1] += 0.04 * c[0] * c[0];
  v.set_packing(bent, QStringLiteral("layout.packing"));
  v.set_colour(gs::PackingViewer::Colour::TangencyError);
  ASSERT_TRUE(wait_for([&] { return !v.building(); }));
  (void)v.view()->grab_frame();
  save_shot(&v, "viewer-packing.png");
}

TEST_F(ViewersGui, MeshViewerShowsTheFlatteningWithACheckerboardWhenTheMeshHasUvs) {
  // A bumpy 12 × 12 grid over [0, 1]², its UVs the (x, y) it came from.
  auto mesh = std::make_shared<gemflow::TriMesh>();
  std::vector<std::array<double, 2>> uvs;
  const int n = 12;
  for (int j = 0; j <= n; ++j)
    for (int i = 0; i <= n; ++i) {
      const double x = static_cast<double>(i) / n, y = static_cast<double>(j) / n;
      mesh->vertices.push_back({x, y, 0.15 * std::sin(3 * x) * std::cos(2 * y)});
      uvs.push_back({x, y});
    }
  for (int j = 0; j < n; ++j)
    for (int i = 0; i < n; ++i) {
      const auto a = static_cast<std::uint32_t>(j * (n + 1) + i);
      mesh->faces.push_back({a, a + 1, a + n + 2});
      mesh->faces.push_back({a, a + n + 2, a + n + 1});
    }
  mesh->boundary = gemflow::boundary_loops(mesh->vertices.size(), mesh->faces);
  ASSERT_FALSE(mesh->validate()) << *mesh->validate();
  gs::TriMeshViewer v;
  v.resize(900, 420);
  v.show();
  ASSERT_TRUE(QTest::qWaitForWindowExposed(&v));
  v.set_mesh(mesh, nullptr, QStringLiteral("read.mesh"));
  QCoreApplication::processEvents();
  if (v.view_3d()->grab_frame().isNull()) GTEST_SKIP() << "no OpenGL: " << v.view_3d()->error().toStdString();
  EXPECT_FALSE(v.showing_flattening());
  EXPECT_FALSE(v.view_uv()->isVisible());
  EXPECT_EQ(gs::scene_stats(*v.view_3d()).textured_actors, 0u);
  v.set_mesh(mesh, &uvs, QStringLiteral("flatten.mesh"));
  QCoreApplication::processEvents();
  EXPECT_TRUE(v.showing_flattening());
  EXPECT_TRUE(v.view_uv()->isVisible());
  EXPECT_EQ(gs::scene_stats(*v.view_3d()).textured_actors, 1u);
  EXPECT_EQ(gs::scene_stats(*v.view_uv()).textured_actors, 1u);
  // The flattening shows both squares of the checkerboard, in about equal amounts.
  const QImage uv = v.view_uv()->grab_frame();
  std::size_t light = 0, dark = 0;
  for (int y = 0; y < uv.height(); ++y)
    for (int x = 0; x < uv.width(); ++x) {
      const QColor c = uv.pixelColor(x, y);
      if (c.red() > 200 && c.green() > 200 && c.blue() > 190) ++light;
      if (std::abs(c.red() - 60) < 12 && std::abs(c.green() - 90) < 12 && std::abs(c.blue() - 160) < 12) ++dark;
    }
  std::cout << "checkerboard pixels: light " << light << ", dark " << dark << "\n";
  EXPECT_GT(light, 5000u);
  EXPECT_GT(dark, 5000u);
  EXPECT_LT(static_cast<double>(std::max(light, dark)) / static_cast<double>(std::min(light, dark)), 1.5);
  (void)v.view_3d()->grab_frame();  // both views' latest frames in the screenshot
  save_shot(&v, "viewer-mesh.png");
}

// A TriMesh that carries UVs (io.read_mesh's texture coordinates, circlepack.flatten's mesh
// output) opens the registry's mesh viewer with its UV layout, checkerboarded, beside the
// surface; without UVs only the surface is shown.
TEST_F(ViewersGui, MeshViewerShowsAMeshsOwnUvsFromTheRegistry) {
  const auto found = gs::builtin_viewers().viewers_for(gemflow::DataType<gemflow::TriMesh>::name);
  ASSERT_FALSE(found.empty());
  std::unique_ptr<QWidget> widget(found.front()->make());
  auto* v = qobject_cast<gs::TriMeshViewer*>(widget.get());
  ASSERT_NE(v, nullptr);
  v->resize(900, 420);
  v->show();
  ASSERT_TRUE(QTest::qWaitForWindowExposed(v));
  gemflow::TriMesh m;
  m.vertices = {{0, 0, 0}, {1, 0, 0.2}, {1, 1, 0}, {0, 1, 0.3}};
  m.faces = {{0, 1, 2}, {0, 2, 3}};
  m.boundary = gemflow::boundary_loops(m.vertices.size(), m.faces);
  found.front()->show(*widget, gemflow::Value::make(m), QStringLiteral("read.mesh"));
  QCoreApplication::processEvents();
  EXPECT_FALSE(v->showing_flattening());
  EXPECT_FALSE(v->view_uv()->isVisible());
  EXPECT_TRUE(v->info().contains(QStringLiteral("no UVs"))) << v->info().toStdString();
  m.uv = {{0, 0}, {1, 0}, {1, 1}, {0, 1}};
  ASSERT_FALSE(m.validate()) << *m.validate();
  found.front()->show(*widget, gemflow::Value::make(std::move(m)), QStringLiteral("flatten.mesh"));
  QCoreApplication::processEvents();
  EXPECT_TRUE(v->showing_flattening());
  EXPECT_TRUE(v->view_uv()->isVisible());
  EXPECT_TRUE(v->info().contains(QStringLiteral("UV flattening"))) << v->info().toStdString();
  if (v->view_3d()->grab_frame().isNull()) GTEST_SKIP() << "no OpenGL: " << v->view_3d()->error().toStdString();
  EXPECT_EQ(gs::scene_stats(*v->view_3d()).textured_actors, 1u);
  EXPECT_EQ(gs::scene_stats(*v->view_uv()).textured_actors, 1u);
}

TEST_F(ViewersGui, ImageViewerScreenshot) {
  // A linear gradient with a transparent corner, for docs/studio.md.
  auto im = std::make_shared<gemflow::Image>(320, 200, gemflow::Image::Format::RGBA32F);
  for (std::size_t y = 0; y < im->height; ++y)
    for (std::size_t x = 0; x < im->width; ++x) {
      const std::size_t i = im->index(x, y);
      const float a = x < 60 && y < 60 ? 0.0f : 1.0f;
      im->f32[i] = a * static_cast<float>(x) / 320.0f;
      im->f32[i + 1] = a * static_cast<float>(y) / 200.0f;
      im->f32[i + 2] = a * 0.3f;
      im->f32[i + 3] = a;
    }
  gs::ImageViewer v;
  v.resize(640, 420);
  v.show();
  ASSERT_TRUE(QTest::qWaitForWindowExposed(&v));
  v.set_image(im, QStringLiteral("render.image"));
  v.exposure()->setValue(0.5);
  const QPointF p = v.canvas()->to_widget({200.5, 100.5});
  QMouseEvent move(QEvent::MouseMove, p, v.canvas()->mapToGlobal(p), Qt::NoButton, Qt::NoButton, Qt::NoModifier);
  QApplication::sendEvent(v.canvas(), &move);
  EXPECT_EQ(v.readout(), QStringLiteral("x 200, y 100: R 0.625 G 0.5 B 0.3 A 1"));
  save_shot(&v, "viewer-image.png");
}

int main(int argc, char** argv) {
  ::testing::InitGoogleTest(&argc, argv);
  gs::set_default_surface_format();
  // Settings and caches of this process only (opening a file records it in Open Recent): the
  // user's files are never touched.
  char tmpl[] = "/tmp/gemflow-viewers-gui-XXXXXX";
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
  QApplication app(argc, argv);
  QApplication::setStyle(QStringLiteral("Fusion"));
  gs::apply_studio_palette();
  QApplication::setOrganizationName(QStringLiteral("GemflowTest"));
  QApplication::setApplicationName(QStringLiteral("viewers_gui_test"));
  const int rc = RUN_ALL_TESTS();
  std::error_code ec;
  fs::remove_all(h, ec);
  return rc;
}
