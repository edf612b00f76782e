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
  explicit GraphView(GraphScene* scene, QWidget* parent = nullptr);
  /// Fits every node in view (or resets the zoom for an empty graph).
  void fit_to_view();
  [[nodiscard]] double zoom() const;

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
