// Benchmark (not a test): time to load N generated nodes into the editor scene (model reset →
// items and wires), to fit the view and to paint the first frame, with ratios against a
// 50-node baseline measured in the same run; then the time of each editor interaction on the
// 500-node graph in the whole main window (the goal: every one within 100 ms). Runs on Qt's
// offscreen platform by default.
#include <chrono>
#include <cstdio>
#include <cstdlib>

#include <functional>

#include <QApplication>
#include <QLineEdit>
#include <QTest>

#include <gemflow/types.hpp>

#include "app/main_window.hpp"
#include "editor/graph_scene.hpp"
#include "editor/graph_view.hpp"
#include "editor/inspector.hpp"
#include "editor/quick_add.hpp"
#include "model/graph_model.hpp"

namespace {
struct Src final : gemflow::Node {
  static gemflow::NodeInfo info() { return {.id = "bench.source", .title = "Source", .category = "Bench"}; }
  gemflow::Output<gemflow::MatrixF64> out{this, "out", "value"};
  gemflow::Param<double> x{this, "x", 1.0, {.min = 0, .max = 10, .unit = "Å"}};
  void execute(gemflow::NodeContext&) override {}
};
struct Op final : gemflow::Node {
  static gemflow::NodeInfo info() { return {.id = "bench.op", .title = "Operation", .category = "Bench"}; }
  gemflow::Input<gemflow::MatrixF64> a{this, "a", "left"};
  gemflow::Input<gemflow::MatrixF64> b{this, "b", "right", gemflow::PortUse::Optional};
  gemflow::Output<gemflow::MatrixF64> out{this, "out", "result"};
  gemflow::Param<int> n{this, "n", 3, {.min = 1}};
  void execute(gemflow::NodeContext&) override {}
};

/// n nodes on a 25-wide grid: sources in column 0, each other node fed by its left
/// neighbour and (when possible) by the node above-left.
gemflow::Workflow generate(int n) {
  gemflow::Workflow wf;
  wf.name = "bench";
  const int w = 25;
  for (int i = 0; i < n; ++i) {
    gemflow::NodeInstance ni;
    ni.id = "n" + std::to_string(i);
    ni.type = i % w == 0 ? "bench.source" : "bench.op";
    ni.pos = std::array<double, 2>{(i % w) * 260.0, (i / w) * 160.0};
    wf.nodes.push_back(ni);
    if (i % w != 0) {
      gemflow::Link l;
      l.from_node = "n" + std::to_string(i - 1);
      l.from_port = "out";
      l.to_node = ni.id;
      l.to_port = "a";
      wf.links.push_back(l);
      if (i >= w) {
        l.from_node = "n" + std::to_string(i - w - 1 + (i % w == 1 ? 1 : 0));
        l.to_port = "b";
        wf.links.push_back(l);
      }
    }
  }
  return wf;
}

struct Times {
  double load_ms, fit_ms, paint_ms;
  std::size_t items;
};

Times measure(gemflow::studio::GraphModel& m, gemflow::studio::GraphScene& scene, gemflow::studio::GraphView& view,
              int n) {
  using clock = std::chrono::steady_clock;
  auto wf = generate(n);
  const auto t0 = clock::now();
  m.reset(std::move(wf));
  const auto t1 = clock::now();
  view.fit_to_view();
  const auto t2 = clock::now();
  (void)view.grab();  // one full paint
  const auto t3 = clock::now();
  auto ms = [](auto a, auto b) { return std::chrono::duration<double, std::milli>(b - a).count(); };
  return {ms(t0, t1), ms(t1, t2), ms(t2, t3), static_cast<std::size_t>(scene.items().size())};
}
}  // namespace

int main(int argc, char** argv) {
  if (!std::getenv("QT_QPA_PLATFORM")) setenv("QT_QPA_PLATFORM", "offscreen", 1);
  QApplication app(argc, argv);
  gemflow::Registry reg;
  reg.add_node<Src>("bench");
  reg.add_node<Op>("bench");
  gemflow::studio::GraphModel model(reg);
  gemflow::studio::GraphScene scene(model);
  gemflow::studio::GraphView view(&scene);
  view.resize(1600, 1000);
  view.show();
  QCoreApplication::processEvents();
  measure(model, scene, view, 50);  // warm-up (fonts, caches)
  const Times base = measure(model, scene, view, 50);
  std::printf("Studio scene load (offscreen), baseline 50 nodes\n");
  std::printf("%6s %8s %10s %10s %10s %10s %12s\n", "nodes", "items", "load ms", "fit ms", "paint ms", "total ms",
              "per-node x");
  for (int n : {50, 500, 2000}) {
    const Times t = n == 50 ? base : measure(model, scene, view, n);
    const double total = t.load_ms + t.fit_ms + t.paint_ms;
    const double base_total = base.load_ms + base.fit_ms + base.paint_ms;
    std::printf("%6d %8zu %10.2f %10.2f %10.2f %10.2f %12.2f\n", n, t.items, t.load_ms, t.fit_ms, t.paint_ms, total,
                (total / n) / (base_total / 50));
  }

  // Interactions on 500 nodes, in the main window (its panels follow every edit). Each is timed
  // until the event loop is idle again (deferred work such as the problems refresh included).
  gemflow::studio::MainWindow w(reg, {});
  w.resize(1600, 1000);
  w.show();
  w.show_editor();
  w.model().reset(generate(500));
  w.view().fit_to_view();
  QCoreApplication::processEvents();
  auto& m = w.model();
  auto time = [](const std::function<void()>& f) {
    using clock = std::chrono::steady_clock;
    double best = 1e300;
    for (int rep = 0; rep < 3; ++rep) {  // best of three: the machine may be shared
      const auto t0 = clock::now();
      f();
      QCoreApplication::processEvents();
      best = std::min(best, std::chrono::duration<double, std::milli>(clock::now() - t0).count());
    }
    return best;
  };
  int k = 0;
  const std::pair<const char*, std::function<void()>> steps[] = {
      {"select a node",
       [&] {
         std::string id = "n";
         id += std::to_string(250 + k++);
         w.scene().select_nodes({id});
       }},
      {"move a node",
       [&] {
         m.move_nodes({{"n260", {1000.0 + k++, 900.0}}});
       }},
      {"set a parameter (source)", [&] { m.set_param("n25", "x", 1.0 + 0.1 * k++); }},
      {"undo", [&] { m.undo_stack()->undo(); }},
      {"redo", [&] { m.undo_stack()->redo(); }},
      {"add a node",
       [&] {
         m.add_node("bench.op", {0, -300});
       }},
      {"delete a node", [&] { m.remove_nodes({m.workflow().nodes.back().id}); }},
      {"bypass a node", [&] { m.set_bypass({"n270"}, k++ % 2 == 0); }},
      {"problems refresh", [&] { w.scene().refresh_problems(); }},
      {"arrange (layered layout)", [&] { w.scene().arrange(); }},
      {"quick-add: type 'op'",
       [&] {
         const QPoint c = w.view().viewport()->rect().center();
         w.view().open_quick_add(w.view().mapToScene(c), w.view().viewport()->mapToGlobal(c));
         QTest::keyClicks(w.view().quick_add()->search(), "op");
         w.view().quick_add()->close();
       }},
      {"find node (Ctrl+F, Return)",
       [&] {
         w.view().open_find();
         QTest::keyClicks(w.view().quick_add()->search(), "n499");
         QTest::keyClick(w.view().quick_add()->search(), Qt::Key_Return);
       }},
      {"zoom (wheel step)", [&] { w.view().zoom_by(1.1); }},
      {"full repaint", [&] { (void)w.view().grab(); }},
  };
  std::printf("\nStudio interactions on 500 nodes (main window, offscreen), best of 3\n%-30s %10s\n", "interaction",
              "ms");
  for (const auto& [name, f] : steps) std::printf("%-30s %10.2f\n", name, time(f));
  return 0;
}
