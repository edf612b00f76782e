#include "editor/graph_view.hpp"

#include <algorithm>
#include <cmath>

#include <QDragEnterEvent>
#include <QMimeData>
#include <QScrollBar>
#include <QWheelEvent>

#include "editor/graph_scene.hpp"

namespace gemflow::studio {

GraphView::GraphView(GraphScene* scene, QWidget* parent) : QGraphicsView(scene, parent), scene_(scene) {
  setRenderHint(QPainter::Antialiasing);
  setDragMode(QGraphicsView::RubberBandDrag);
  setRubberBandSelectionMode(Qt::IntersectsItemShape);
  setTransformationAnchor(QGraphicsView::AnchorUnderMouse);
  setViewportUpdateMode(QGraphicsView::BoundingRectViewportUpdate);
  setAcceptDrops(true);
  setSceneRect(-50000, -50000, 100000, 100000);
  setHorizontalScrollBarPolicy(Qt::ScrollBarAlwaysOff);
  setVerticalScrollBarPolicy(Qt::ScrollBarAlwaysOff);
}

double GraphView::zoom() const { return transform().m11(); }

void GraphView::fit_to_view() {
  QRectF r;
  for (auto* n : scene_->node_items()) r |= n->sceneBoundingRect();
  if (r.isNull()) {
    resetTransform();
    centerOn(0, 0);
    return;
  }
  r.adjust(-40, -40, 40, 40);
  // Nodes may lie anywhere: keep them all reachable by panning.
  if (!sceneRect().contains(r)) setSceneRect(sceneRect() | r.adjusted(-r.width(), -r.height(), r.width(), r.height()));
  fitInView(r, Qt::KeepAspectRatio);
  // Not above 1:1 (a two-node graph stays its size), not below the wheel's limit.
  const double z = std::clamp(zoom(), kMinZoom, 1.0);
  if (z != zoom()) {
    const double f = z / zoom();
    scale(f, f);
    centerOn(r.center());
  }
}

void GraphView::zoom_by(double f) {
  const double z = std::clamp(zoom() * f, kMinZoom, kMaxZoom);
  if (zoom() <= 0 || z == zoom()) return;
  const double g = z / zoom();
  scale(g, g);
}

void GraphView::wheelEvent(QWheelEvent* e) {
  zoom_by(std::pow(1.0015, e->angleDelta().y()));
  e->accept();
}

void GraphView::mousePressEvent(QMouseEvent* e) {
  if (e->button() == Qt::MiddleButton || (space_ && e->button() == Qt::LeftButton)) {
    panning_ = true;
    last_ = e->position().toPoint();
    setCursor(Qt::ClosedHandCursor);
    e->accept();
    return;
  }
  QGraphicsView::mousePressEvent(e);
}

void GraphView::mouseMoveEvent(QMouseEvent* e) {
  if (panning_) {
    const QPoint d = e->position().toPoint() - last_;
    last_ = e->position().toPoint();
    horizontalScrollBar()->setValue(horizontalScrollBar()->value() - d.x());
    verticalScrollBar()->setValue(verticalScrollBar()->value() - d.y());
    e->accept();
    return;
  }
  QGraphicsView::mouseMoveEvent(e);
}

void GraphView::mouseReleaseEvent(QMouseEvent* e) {
  if (panning_) {
    panning_ = false;
    setCursor(space_ ? Qt::OpenHandCursor : Qt::ArrowCursor);
    e->accept();
    return;
  }
  QGraphicsView::mouseReleaseEvent(e);
}

void GraphView::keyPressEvent(QKeyEvent* e) {
  if (e->key() == Qt::Key_Space && !e->isAutoRepeat()) {
    space_ = true;
    setCursor(Qt::OpenHandCursor);
    return;
  }
  if (e->key() == Qt::Key_F && e->modifiers() == Qt::NoModifier) {
    fit_to_view();
    return;
  }
  QGraphicsView::keyPressEvent(e);
}

void GraphView::keyReleaseEvent(QKeyEvent* e) {
  if (e->key() == Qt::Key_Space && !e->isAutoRepeat()) {
    space_ = false;
    unsetCursor();
    return;
  }
  QGraphicsView::keyReleaseEvent(e);
}

void GraphView::dragEnterEvent(QDragEnterEvent* e) {
  if (e->mimeData()->hasFormat(kNodeTypeMime)) e->acceptProposedAction();
  else QGraphicsView::dragEnterEvent(e);
}

void GraphView::dragMoveEvent(QDragMoveEvent* e) {
  if (e->mimeData()->hasFormat(kNodeTypeMime)) e->acceptProposedAction();
  else QGraphicsView::dragMoveEvent(e);
}

void GraphView::dropEvent(QDropEvent* e) {
  if (!e->mimeData()->hasFormat(kNodeTypeMime)) {
    QGraphicsView::dropEvent(e);
    return;
  }
  const std::string type = QString::fromUtf8(e->mimeData()->data(kNodeTypeMime)).toStdString();
  const QPointF p = mapToScene(e->position().toPoint());
  const std::string id = scene_->model().add_node(type, {std::round(p.x()), std::round(p.y())});
  if (!id.empty()) scene_->select_nodes({id});
  e->acceptProposedAction();
}

void GraphView::drawBackground(QPainter* p, const QRectF& rect) {
  QGraphicsView::drawBackground(p, rect);
  if (zoom() < 0.3) return;
  const double step = 25;
  p->setPen(QPen(QColor(0x30, 0x33, 0x38), 0));
  const double left = std::floor(rect.left() / step) * step, top = std::floor(rect.top() / step) * step;
  for (double x = left; x < rect.right(); x += step) p->drawLine(QPointF(x, rect.top()), QPointF(x, rect.bottom()));
  for (double y = top; y < rect.bottom(); y += step) p->drawLine(QPointF(rect.left(), y), QPointF(rect.right(), y));
}

}  // namespace gemflow::studio
