#include "editor/graph_view.hpp"

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
  fitInView(r.adjusted(-40, -40, 40, 40), Qt::KeepAspectRatio);
  if (zoom() > 1.0) {  // do not blow a two-node graph up to giant size
    const double f = 1.0 / zoom();
    scale(f, f);
  }
}

void GraphView::wheelEvent(QWheelEvent* e) {
  const double f = std::pow(1.0015, e->angleDelta().y());
  const double z = zoom() * f;
  if (z < 0.05 || z > 8) return;
  scale(f, f);
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
