#pragma once
// GraphView: zoom (wheel, around the cursor), pan (middle button, or Space + drag), rubber-band
// selection, fit-to-view, and drops of node types from the palette.
#include <QGraphicsView>

namespace gemflow::studio {

class GraphScene;

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

 protected:
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
  GraphScene* scene_;
  bool panning_ = false;
  bool space_ = false;
  QPoint last_;
};

}  // namespace gemflow::studio
