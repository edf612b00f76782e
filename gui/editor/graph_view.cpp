#include "editor/graph_view.hpp"

#include <algorithm>
#include <cmath>

#include <QCursor>
#include <QDragEnterEvent>
#include <QLineEdit>
#include <QMimeData>
#include <QPainter>
#include <QScrollBar>
#include <QWheelEvent>

#include "editor/graph_scene.hpp"
#include "editor/quick_add.hpp"

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
  connect(scene_, &GraphScene::quick_add_requested, this, &GraphView::open_quick_add);
  connect(scene_, &GraphScene::insert_node_requested, this, &GraphView::open_insert);
  minimap_ = new Minimap(this, scene_);
  place_minimap();
  connect(scene_, &QGraphicsScene::changed, this, [this] { update_minimap(); });
}

void GraphView::set_minimap_enabled(bool on) {
  minimap_enabled_ = on;
  update_minimap();
}

void GraphView::update_minimap() {
  if (!minimap_) return;
  bool out = false;
  if (minimap_enabled_) {
    const QRectF seen = mapToScene(viewport()->rect()).boundingRect();
    for (auto* n : scene_->node_items())
      if (!seen.contains(n->sceneBoundingRect())) {
        out = true;
        break;
      }
  }
  if (minimap_->isVisible() != out) minimap_->setVisible(out);
  if (out) minimap_->update();
}

namespace {
QString q(const std::string& s) { return QString::fromStdString(s); }

std::vector<QuickAddEntry> canvas_commands() {
  const std::pair<const char*, QString> cmds[] = {{"cmd:note", QObject::tr("Add Note")},
                                                  {"cmd:group", QObject::tr("Group Selected Nodes")},
                                                  {"cmd:arrange", QObject::tr("Arrange All (layered layout)")},
                                                  {"cmd:fit", QObject::tr("Fit to View")},
                                                  {"cmd:find", QObject::tr("Find Node…")},
                                                  {"cmd:paste", QObject::tr("Paste")},
                                                  {"cmd:select_all", QObject::tr("Select All")}};
  std::vector<QuickAddEntry> r;
  for (const auto& [key, label] : cmds)
    r.push_back(
        {QLatin1String(key), label, QObject::tr("command"), (label + QStringLiteral(" command")).toLower(), {}});
  return r;
}
}  // namespace

void GraphView::show_popup(QuickAddPopup* p, QPoint screen_pos) {
  if (popup_) popup_->close();
  popup_ = p;
  p->popup(screen_pos);
}

void GraphView::open_quick_add(QPointF scene_pos, QPoint screen_pos, const QString& port_node, const QString& port,
                               bool port_is_output, bool commands) {
  GraphModel& m = scene_->model();
  std::vector<QuickAddEntry> entries;
  if (port_node.isEmpty()) {
    entries = node_type_entries(m.registry());
  } else {
    const NodeSpec* spec = m.spec_of(port_node.toStdString());
    const PortSpec* p = !spec            ? nullptr
                        : port_is_output ? spec->output(port.toStdString())
                                         : spec->input(port.toStdString());
    if (!p) return;
    auto types = m.compatible_types(p->type, port_is_output);
    types.emplace_back(kSubWorkflowType);  // any file may expose such a port: asked for next
    entries = node_type_entries(m.registry(), &types);
  }
  if (commands) {
    auto cmds = canvas_commands();
    entries.insert(entries.begin(), cmds.begin(), cmds.end());
  }
  auto* popup = new QuickAddPopup(std::move(entries),
                                  port_node.isEmpty() ? tr("Add node: type a name, category or word of its doc")
                                                      : tr("Add a node linked to %1.%2").arg(port_node, port),
                                  this);
  const Pos at{std::round(scene_pos.x()), std::round(scene_pos.y())};
  connect(popup, &QuickAddPopup::activated, this, [this, at, port_node, port, port_is_output](const QString& key) {
    GraphModel& gm = scene_->model();
    if (key.startsWith(QLatin1String("cmd:"))) {
      if (key == QLatin1String("cmd:note")) gm.add_note(tr("Note").toStdString(), at);
      else if (key == QLatin1String("cmd:group")) {
        const auto ids = scene_->selected_node_ids();
        if (!ids.empty()) gm.add_group(ids, tr("Group").toStdString());
      } else if (key == QLatin1String("cmd:arrange")) scene_->arrange();
      else if (key == QLatin1String("cmd:fit")) fit_to_view();
      else if (key == QLatin1String("cmd:find")) open_find();
      else Q_EMIT command_requested(key);
      return;
    }
    // A node dragged out of an output goes right of the drop point, out of an input left.
    Pos p = at;
    if (!port_node.isEmpty() && !port_is_output) p[0] -= 190;
    if (!port_node.isEmpty() && key == QLatin1String(kSubWorkflowType.data())) {
      Q_EMIT subworkflow_link_requested(QPointF(p[0], p[1]), port_node, port, port_is_output);
      return;
    }
    const std::string id = port_node.isEmpty() ? gm.add_node(key.toStdString(), p)
                                               : gm.add_node_linked(key.toStdString(), p, port_node.toStdString(),
                                                                    port.toStdString(), port_is_output);
    if (id.empty()) return;
    if (port_node.isEmpty()) scene_->insert_on_wire(id);
    scene_->select_nodes({id});
  });
  show_popup(popup, screen_pos);
}

void GraphView::open_insert(QPointF scene_pos, QPoint screen_pos, const Link& link) {
  GraphModel& m = scene_->model();
  const NodeSpec* spec = m.spec_of(link.from_node);
  const PortSpec* p = spec ? spec->output(link.from_port) : nullptr;
  if (!p) return;
  std::vector<std::string> both;
  const auto ins = m.compatible_types(p->type, true), outs = m.compatible_types(p->type, false);
  for (const auto& t : ins)
    if (std::find(outs.begin(), outs.end(), t) != outs.end()) both.push_back(t);
  auto* popup =
      new QuickAddPopup(node_type_entries(m.registry(), &both), tr("Insert a node into %1").arg(q(link.str())), this);
  const Pos at{std::round(scene_pos.x() - 95), std::round(scene_pos.y() - 30)};
  connect(popup, &QuickAddPopup::activated, this, [this, at, link](const QString& key) {
    GraphModel& gm = scene_->model();
    gm.undo_stack()->beginMacro(tr("Insert %1 into %2").arg(key, q(link.str())));
    const std::string id = gm.add_node(key.toStdString(), at);
    if (!id.empty()) gm.insert_into_link(link, id);
    gm.undo_stack()->endMacro();
    if (!id.empty()) scene_->select_nodes({id});
  });
  show_popup(popup, screen_pos);
}

void GraphView::open_find() {
  std::vector<QuickAddEntry> entries;
  for (const auto& n : scene_->model().workflow().nodes)
    entries.push_back({q(n.id), q(n.id), q(n.type), q(n.id + " " + n.type).toLower(), {}});
  auto* popup = new QuickAddPopup(std::move(entries), tr("Find node: id or type"), this);
  popup->setObjectName(QStringLiteral("find_node"));
  connect(popup, &QuickAddPopup::activated, this, [this](const QString& id) { reveal(id.toStdString()); });
  show_popup(popup, mapToGlobal(QPoint(width() / 2 - 190, 40)));
}

void GraphView::reveal(const std::string& id) {
  if (NodeItem* n = scene_->node_item(id)) {
    scene_->select_nodes({id});
    centerOn(n);
    minimap_->update();
  }
}

bool GraphView::event(QEvent* e) {
  // Tab would move the focus to the next widget: in the editor it opens the quick-add search.
  if (e->type() == QEvent::KeyPress) {
    auto* k = static_cast<QKeyEvent*>(e);
    if (k->key() == Qt::Key_Tab && k->modifiers() == Qt::NoModifier && !scene_->focusItem()) {
      QPoint at = mapFromGlobal(QCursor::pos());
      if (!viewport()->rect().contains(at)) at = viewport()->rect().center();
      open_quick_add(mapToScene(at), viewport()->mapToGlobal(at));
      return true;
    }
    if (k->key() == Qt::Key_F && k->modifiers() == Qt::ControlModifier) {
      open_find();
      return true;
    }
  }
  return QGraphicsView::event(e);
}

void GraphView::resizeEvent(QResizeEvent* e) {
  QGraphicsView::resizeEvent(e);
  place_minimap();
  update_minimap();
}

void GraphView::scrollContentsBy(int dx, int dy) {
  QGraphicsView::scrollContentsBy(dx, dy);
  update_minimap();
}

void GraphView::place_minimap() {
  if (!minimap_) return;
  const QSize sz(200, 130);
  minimap_->setGeometry(width() - sz.width() - 12, height() - sz.height() - 12, sz.width(), sz.height());
}

// ---- Minimap ------------------------------------------------------------------------------

Minimap::Minimap(GraphView* view, GraphScene* scene) : QWidget(view), view_(view), scene_(scene) {
  setObjectName(QStringLiteral("minimap"));
  setCursor(Qt::PointingHandCursor);
  setToolTip(tr("Overview: click or drag to move the view"));
  connect(scene_, &QGraphicsScene::changed, this, [this] { update(); });
}

QRectF Minimap::world() const {
  QRectF r;
  for (auto* n : scene_->node_items()) r |= n->sceneBoundingRect();
  return r.isNull() ? QRectF(-100, -100, 200, 200) : r.adjusted(-60, -60, 60, 60);
}

QPointF Minimap::to_scene(QPointF p) const {
  const QRectF w = world();
  const double s = std::max(w.width() / width(), w.height() / height());
  const QPointF off((width() - w.width() / s) / 2, (height() - w.height() / s) / 2);
  return w.topLeft() + (p - off) * s;
}

void Minimap::paintEvent(QPaintEvent*) {
  QPainter p(this);
  p.fillRect(rect(), QColor(0x1c, 0x1e, 0x22, 220));
  p.setPen(QColor(0x50, 0x54, 0x5c));
  p.drawRect(rect().adjusted(0, 0, -1, -1));
  const QRectF w = world();
  const double s = std::max(w.width() / width(), w.height() / height());
  const QPointF off((width() - w.width() / s) / 2, (height() - w.height() / s) / 2);
  auto map = [&](const QRectF& r) { return QRectF(off + (r.topLeft() - w.topLeft()) / s, r.size() / s); };
  p.setPen(Qt::NoPen);
  for (auto* n : scene_->node_items()) {
    p.setBrush(n->isSelected()          ? QColor(0xff, 0xc8, 0x3c)
               : n->problem().isEmpty() ? QColor(0x8a, 0x90, 0x9c)
                                        : QColor(0xe0, 0x60, 0x50));
    p.drawRect(map(n->sceneBoundingRect()));
  }
  p.setBrush(Qt::NoBrush);
  p.setPen(QPen(QColor(0x3d, 0x8e, 0xe0), 1.5));
  p.drawRect(map(view_->mapToScene(view_->viewport()->rect()).boundingRect())
                 .intersected(QRectF(rect()).adjusted(1, 1, -1, -1)));
}

void Minimap::mousePressEvent(QMouseEvent* e) {
  view_->centerOn(to_scene(e->position()));
  update();
}

void Minimap::mouseMoveEvent(QMouseEvent* e) {
  if (e->buttons() & Qt::LeftButton) {
    view_->centerOn(to_scene(e->position()));
    update();
  }
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
  update_minimap();
}

void GraphView::zoom_by(double f) {
  const double z = std::clamp(zoom() * f, kMinZoom, kMaxZoom);
  if (zoom() <= 0 || z == zoom()) return;
  const double g = z / zoom();
  scale(g, g);
  update_minimap();
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
  GraphModel& m = scene_->model();
  m.undo_stack()->beginMacro(tr("Add %1").arg(QString::fromStdString(type)));
  const std::string id = m.add_node(type, {std::round(p.x()), std::round(p.y())});
  if (!id.empty()) scene_->insert_on_wire(id);  // dropped onto a wire: into it when the types fit
  m.undo_stack()->endMacro();
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
