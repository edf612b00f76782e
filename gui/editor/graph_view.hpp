#pragma once
// GraphView: zoom (wheel, around the cursor), pan (middle button, or Space + drag), rubber-band
// selection, fit-to-view, and drops of node types from the palette.
#include <QGraphicsView>
#include <QPointer>

#include <gemflow/workflow.hpp>

#include "editor/quick_add.hpp"

namespace gemflow::studio {

class GraphScene;
class Minimap;

/// MIME type of a palette drag: the node type id as UTF-8.
inline constexpr const char* kNodeTypeMime = "application/x-gemflow-node-type";

class GraphView : public QGraphicsView {
  Q_OBJECT
 public:
  /// The zoom range of the editor (wheel, menu, Fit): Fit never leaves it, so the wheel
  /// always works from where Fit left the view.
  static constexpr double kMinZoom = 0.02, kMaxZoom = 8.0;
  explicit GraphView(GraphScene* scene, QWidget* parent = nullptr);
  /// Fits every node in view, at most at 1:1 and at least at kMinZoom (a graph too big for
  /// that is centred); resets the zoom for an empty graph.
  void fit_to_view();
  [[nodiscard]] double zoom() const;
  /// Multiplies the zoom by `f`, clamped to [kMinZoom, kMaxZoom] (around the cursor when the
  /// anchor is under the mouse).
  void zoom_by(double f);

  /// Opens the quick-add search at `screen_pos` (see GraphScene::quick_add_requested).
  void open_quick_add(QPointF scene_pos, QPoint screen_pos, const QString& port_node = {}, const QString& port = {},
                      bool port_is_output = false, bool commands = false);
  /// Opens the search for a node to insert into `link` (types that take and give its data).
  void open_insert(QPointF scene_pos, QPoint screen_pos, const Link& link);
  /// Ctrl+F: the search over the workflow's node ids and types; the pick is selected and centred.
  void open_find();
  /// The open search box (nullptr when closed).
  [[nodiscard]] QuickAddPopup* quick_add() const { return popup_; }
  /// Centres the view on a node and selects it.
  void reveal(const std::string& id);
  [[nodiscard]] Minimap* minimap() const { return minimap_; }
  /// The minimap shows while enabled and some node is out of view.
  void set_minimap_enabled(bool on);

 Q_SIGNALS:
  /// A canvas command the view cannot do itself ("cmd:paste", "cmd:select_all").
  void command_requested(const QString& key);
  /// The quick-add of a dropped wire chose a sub-workflow: the file is asked for, then the node
  /// is added at `scene_pos` and linked to `port_node`.`port` (the main window does both).
  void subworkflow_link_requested(QPointF scene_pos, const QString& port_node, const QString& port,
                                  bool port_is_output);

 protected:
  bool event(QEvent* e) override;
  void resizeEvent(QResizeEvent* e) override;
  void scrollContentsBy(int dx, int dy) override;
  void wheelEvent(QWheelEvent* e) override;
  void mousePressEvent(QMouseEvent* e) override;
  void mouseMoveEvent(QMouseEvent* e) override;
  void mouseReleaseEvent(QMouseEvent* e) override;
  void keyPressEvent(QKeyEvent* e) override;
  void keyReleaseEvent(QKeyEvent* e) override;
  void dragEnterEvent(QDragEnterEvent* e) override;
  void dragMoveEvent(QDragMoveEvent* e) override;
  void dropEvent(QDropEvent* e) override;
  void drawBackground(QPainter* p, const QRectF& rect) override;

 private:
  void show_popup(QuickAddPopup* p, QPoint screen_pos);
  void place_minimap();
  void update_minimap();
  bool minimap_enabled_ = true;
  GraphScene* scene_;
  QPointer<QuickAddPopup> popup_;
  Minimap* minimap_ = nullptr;
  bool panning_ = false;
  bool space_ = false;
  QPoint last_;
};

/// Overview of the whole graph in a corner of the editor: nodes as boxes, the visible area as a
/// frame; a click or drag centres the editor there. Paints from the node items' rectangles
/// only (cheap on big graphs).
class Minimap : public QWidget {
  Q_OBJECT
 public:
  Minimap(GraphView* view, GraphScene* scene);
  /// Scene point shown at widget point `p`.
  [[nodiscard]] QPointF to_scene(QPointF p) const;

 protected:
  void paintEvent(QPaintEvent* e) override;
  void mousePressEvent(QMouseEvent* e) override;
  void mouseMoveEvent(QMouseEvent* e) override;

 private:
  [[nodiscard]] QRectF world() const;
  GraphView* view_;
  GraphScene* scene_;
};

}  // namespace gemflow::studio
