#include "editor/node_item.hpp"

#include <algorithm>
#include <cmath>
#include <vector>

#include <QGraphicsSceneContextMenuEvent>
#include <QGraphicsSceneMouseEvent>
#include <QLineF>
#include <QMenu>
#include <QPainter>
#include <QPainterPathStroker>
#include <QStyleOptionGraphicsItem>

#include "editor/graph_scene.hpp"
#include "editor/style.hpp"

namespace gemflow::studio {

namespace {
constexpr double kPortR = 6.0;
/// Below this zoom nodes are drawn without text (a 500-node graph fitted to the window).
constexpr double kDetailZoom = 0.3;
QString q(const std::string& s) { return QString::fromStdString(s); }
}  // namespace

// ---- PortItem -------------------------------------------------------------------------

PortItem::PortItem(NodeItem* node, PortSpec spec, bool is_output)
    : QGraphicsItem(node), node_(node), spec_(std::move(spec)), output_(is_output) {
  setAcceptHoverEvents(true);
  setCursor(Qt::CrossCursor);
  setToolTip(QStringLiteral("<b>%1</b> %2 (%3)%4<br>%5")
                 .arg(q(spec_.name), output_ ? QStringLiteral("output") : QStringLiteral("input"), q(spec_.type),
                      spec_.optional ? QStringLiteral(", optional") : QString(), q(spec_.doc).toHtmlEscaped()));
}

QRectF PortItem::boundingRect() const { return {-kPortR - 3, -kPortR - 3, 2 * kPortR + 6, 2 * kPortR + 6}; }

void PortItem::paint(QPainter* p, const QStyleOptionGraphicsItem* o, QWidget*) {
  QColor c = type_color(spec_.type);
  if (o->levelOfDetailFromTransform(p->worldTransform()) < kDetailZoom) {  // a dot is enough
    p->fillRect(QRectF(-kPortR, -kPortR, 2 * kPortR, 2 * kPortR), c);
    return;
  }
  p->setRenderHint(QPainter::Antialiasing);
  if (highlight_ < 0) c.setAlpha(60);
  if (highlight_ > 0) {
    p->setPen(QPen(QColor(255, 255, 255), 2));
    p->setBrush(Qt::NoBrush);
    p->drawEllipse(QPointF(0, 0), kPortR + 2.5, kPortR + 2.5);
  }
  p->setPen(QPen(c.darker(150), 1.2, spec_.optional ? Qt::DashLine : Qt::SolidLine));
  p->setBrush(c);
  p->drawEllipse(QPointF(0, 0), kPortR, kPortR);
}

void PortItem::set_highlight(int h) {
  if (h == highlight_) return;
  highlight_ = h;
  update();
}

void PortItem::mousePressEvent(QGraphicsSceneMouseEvent* e) {
  if (e->button() == Qt::LeftButton)
    if (auto* s = dynamic_cast<GraphScene*>(scene())) {
      s->begin_link_drag(this, e->scenePos());
      e->accept();
      return;
    }
  QGraphicsItem::mousePressEvent(e);
}

// ---- NodeItem -------------------------------------------------------------------------

NodeItem::NodeItem(std::string id, std::string type, const NodeSpec* spec, const std::vector<PortSpec>& extra_in,
                   const std::vector<PortSpec>& extra_out)
    : id_(std::move(id)), type_(std::move(type)), known_(spec != nullptr) {
  setFlags(ItemIsMovable | ItemIsSelectable | ItemSendsGeometryChanges);
  setAcceptHoverEvents(true);
  setZValue(1);
  title_ = spec ? spec->info.title : "unknown type";
  if (spec) doc_ = q(spec->info.doc);
  std::vector<PortSpec> ins = spec ? spec->inputs : extra_in;
  std::vector<PortSpec> outs = spec ? spec->outputs : extra_out;
  height_ = height_for(ins.size(), outs.size());
  for (std::size_t i = 0; i < ins.size(); ++i) {
    auto* p = new PortItem(this, ins[i], false);
    p->setPos(0, kHeader + (static_cast<double>(i) + 0.5) * kRow);
    ports_.push_back(p);
  }
  for (std::size_t i = 0; i < outs.size(); ++i) {
    auto* p = new PortItem(this, outs[i], true);
    p->setPos(kWidth, kHeader + (static_cast<double>(i) + 0.5) * kRow);
    ports_.push_back(p);
  }
  update_tooltip();
}

double NodeItem::height_for(std::size_t inputs, std::size_t outputs) {
  const std::size_t rows = std::max<std::size_t>({inputs, outputs, 1});
  return kHeader + static_cast<double>(rows) * kRow + 10;
}

QRectF NodeItem::boundingRect() const { return {-2, -2, kWidth + 4, height_ + 4}; }

PortItem* NodeItem::port(const std::string& name, bool output) const {
  for (auto* p : ports_)
    if (p->is_output() == output && p->spec().name == name) return p;
  return nullptr;
}

void NodeItem::paint(QPainter* p, const QStyleOptionGraphicsItem* o, QWidget*) {
  const QRectF body(0, 0, kWidth, height_);
  if (o->levelOfDetailFromTransform(p->worldTransform()) < kDetailZoom) {
    // Zoomed far out (a big graph fitted to the window): text would be unreadable specks and
    // is what makes painting slow, so boxes, header and state only.
    p->fillRect(body, isSelected()                                                    ? QColor(0xff, 0xc8, 0x3c)
                      : !known_ || state_ == NodeState::Failed || !problem_.isEmpty() ? QColor(0xc0, 0x30, 0x30)
                                                                                      : QColor(0x3a, 0x3d, 0x44));
    p->fillRect(QRectF(4, 4, kWidth - 8, kHeader - 8), bypass_ ? QColor(0xb0, 0x80, 0x30) : QColor(0x4c, 0x52, 0x5e));
    p->fillRect(QRectF(kWidth - 24, 6, 16, 16), state_color(state_));
    return;
  }
  p->setRenderHint(QPainter::Antialiasing);
  QColor frame = isSelected() ? QColor(0xff, 0xc8, 0x3c) : QColor(0x20, 0x20, 0x24);
  if (!known_ || state_ == NodeState::Failed)
    frame = isSelected() ? QColor(0xff, 0x90, 0x90) : QColor(0xc0, 0x30, 0x30);
  p->setPen(QPen(frame, isSelected() ? 2.5 : 1.5, bypass_ ? Qt::DashLine : Qt::SolidLine));
  p->setBrush(QColor(0x3a, 0x3d, 0x44));
  if (bypass_) p->setOpacity(0.55);
  p->drawRoundedRect(body, 6, 6);
  // Header.
  QPainterPath header;
  header.addRoundedRect(QRectF(0, 0, kWidth, kHeader), 6, 6);
  p->fillPath(header, known_ ? QColor(0x4c, 0x52, 0x5e) : QColor(0x70, 0x30, 0x30));
  p->setPen(Qt::white);
  QFont f = p->font();
  f.setBold(true);
  f.setPointSizeF(9.5);
  p->setFont(f);
  const QRectF title_rect(8, 3, kWidth - 34, 18);
  p->drawText(title_rect, Qt::AlignLeft | Qt::AlignVCenter,
              p->fontMetrics().elidedText(q(id_), Qt::ElideRight, static_cast<int>(title_rect.width())));
  f.setBold(false);
  f.setPointSizeF(7.5);
  p->setFont(f);
  p->setPen(QColor(0xc8, 0xcc, 0xd4));
  const QRectF type_rect(8, 20, kWidth - 16, 16);
  p->drawText(type_rect, Qt::AlignLeft | Qt::AlignVCenter,
              p->fontMetrics().elidedText(q(type_), Qt::ElideMiddle, static_cast<int>(type_rect.width())));
  // State badge.
  p->setPen(QPen(QColor(0x20, 0x20, 0x20), 1));
  p->setBrush(state_color(state_));
  p->drawEllipse(QPointF(kWidth - 14, 12), 6.5, 6.5);
  // Port labels.
  f.setPointSizeF(8);
  p->setFont(f);
  p->setPen(QColor(0xe8, 0xe8, 0xe8));
  for (auto* port : ports_) {
    const double y = port->pos().y();
    QRectF r = port->is_output() ? QRectF(kWidth / 2, y - kRow / 2, kWidth / 2 - 12, kRow)
                                 : QRectF(12, y - kRow / 2, kWidth / 2 - 12, kRow);
    p->drawText(r, (port->is_output() ? Qt::AlignRight : Qt::AlignLeft) | Qt::AlignVCenter, q(port->spec().name));
  }
  if (bypass_) {
    p->setOpacity(1.0);
    const QRectF band(0, kHeader - 2, kWidth, 14);
    p->fillRect(band, QColor(0xb0, 0x80, 0x30, 200));
    f.setPointSizeF(7.5);
    f.setBold(true);
    p->setFont(f);
    p->setPen(Qt::white);
    p->drawText(band, Qt::AlignCenter, QObject::tr("bypassed"));
  }
  if (!problem_.isEmpty()) {  // a warning sign left of the state badge
    const QPointF c(kWidth - 34, 12);
    QPainterPath tri;
    tri.moveTo(c + QPointF(0, -8));
    tri.lineTo(c + QPointF(8, 7));
    tri.lineTo(c + QPointF(-8, 7));
    tri.closeSubpath();
    p->setPen(QPen(QColor(0x20, 0x20, 0x20), 1));
    p->setBrush(problem_error_ ? QColor(0xf0, 0x50, 0x50) : QColor(0xe0, 0xa0, 0x30));
    p->drawPath(tri);
    f.setPointSizeF(7.5);
    f.setBold(true);
    p->setFont(f);
    p->setPen(Qt::white);
    p->drawText(QRectF(c.x() - 8, c.y() - 6, 16, 13), Qt::AlignCenter, QStringLiteral("!"));
  }
  // Progress bar while running.
  if (state_ == NodeState::Running) {
    const QRectF bar(8, height_ - 8, kWidth - 16, 4);
    p->setPen(Qt::NoPen);
    p->setBrush(QColor(0x25, 0x25, 0x28));
    p->drawRect(bar);
    p->setBrush(state_color(NodeState::Running).lighter(130));
    p->drawRect(QRectF(bar.left(), bar.top(), bar.width() * std::clamp(progress_, 0.0, 1.0), bar.height()));
  }
}

void NodeItem::set_id(std::string id) {
  id_ = std::move(id);
  update_tooltip();
  update();
}

void NodeItem::set_state(NodeState s, double progress, const QString& message) {
  if (s == state_ && progress == progress_ && message == message_) return;  // invalidation of idle nodes
  state_ = s;
  progress_ = progress;
  message_ = message;
  update_tooltip();
  update();
}

void NodeItem::set_bypass(bool on) {
  if (on == bypass_) return;
  bypass_ = on;
  update_tooltip();
  update();
}

void NodeItem::set_problem(const QString& text, bool error) {
  if (text == problem_ && error == problem_error_) return;
  problem_ = text;
  problem_error_ = error;
  update_tooltip();
  update();
}

void NodeItem::contextMenuEvent(QGraphicsSceneContextMenuEvent* e) {
  auto* s = dynamic_cast<GraphScene*>(scene());
  if (!s) return;
  if (!isSelected()) s->select_nodes({id_});
  std::unique_ptr<QMenu> menu(s->make_node_menu(id_));
  menu->exec(e->screenPos());
  e->accept();
}

void NodeItem::mouseDoubleClickEvent(QGraphicsSceneMouseEvent* e) {
  auto* s = dynamic_cast<GraphScene*>(scene());
  if (s && e->button() == Qt::LeftButton && type_ == kSubWorkflowType) {
    Q_EMIT s->open_subworkflow_requested(q(id_));
    e->accept();
    return;
  }
  QGraphicsObject::mouseDoubleClickEvent(e);
}

void NodeItem::update_tooltip() {
  QString tip = QStringLiteral("<b>%1</b> — %2<br><i>%3</i>").arg(q(id_), q(title_), q(type_));
  if (!problem_.isEmpty())
    tip += QStringLiteral("<br><span style='color:%1'><b>%2</b></span>")
               .arg(problem_error_ ? QStringLiteral("#ff6060") : QStringLiteral("#e0a030"),
                    problem_.toHtmlEscaped().replace(QLatin1Char('\n'), QStringLiteral("<br>")));
  if (bypass_) tip += QObject::tr("<br><b>Bypassed</b>: its inputs pass through to its outputs of the same type.");
  if (!known_) tip += QStringLiteral("<br><b>No loaded plugin provides this type.</b>");
  if (!doc_.isEmpty()) tip += QStringLiteral("<br>") + doc_.toHtmlEscaped();
  tip += QStringLiteral("<br>State: <b>%1</b>").arg(state_text(state_));
  if (state_ == NodeState::Running) tip += QStringLiteral(" %1 %").arg(static_cast<int>(progress_ * 100));
  if (!message_.isEmpty()) tip += QStringLiteral("<br>") + message_.toHtmlEscaped();
  setToolTip(tip);
}

QVariant NodeItem::itemChange(GraphicsItemChange change, const QVariant& value) {
  if (change == ItemPositionHasChanged) Q_EMIT geometry_changed();
  if (change == ItemSelectedHasChanged) update();
  return QGraphicsObject::itemChange(change, value);
}

// ---- WireItem -------------------------------------------------------------------------

WireItem::WireItem(PortItem* from, PortItem* to) : from_(from), to_(to) {
  setFlags(ItemIsSelectable);
  setZValue(0);
  update_tooltip();
  update_path();
}

void WireItem::update_tooltip() {
  setToolTip(QStringLiteral("%1.%2 → %3.%4 (%5)")
                 .arg(q(from_->node()->id()), q(from_->spec().name), q(to_->node()->id()), q(to_->spec().name),
                      q(from_->spec().type)));
}

Link WireItem::link() const {
  Link l;
  l.from_node = from_->node()->id();
  l.from_port = from_->spec().name;
  l.to_node = to_->node()->id();
  l.to_port = to_->spec().name;
  return l;
}

QPainterPath WireItem::bezier(QPointF a, QPointF b) {
  QPainterPath path(a);
  const double dx = std::max(40.0, std::abs(b.x() - a.x()) * 0.5);
  path.cubicTo(a + QPointF(dx, 0), b - QPointF(dx, 0), b);
  return path;
}

namespace {
/// A polyline with its corners rounded (radius `r`, less on short segments).
QPainterPath rounded_polyline(const std::vector<QPointF>& pts, double r) {
  std::vector<QPointF> p;
  for (const QPointF& x : pts)
    if (p.empty() || QLineF(p.back(), x).length() > 0.5) p.push_back(x);
  QPainterPath path(p.front());
  for (std::size_t i = 1; i + 1 < p.size(); ++i) {
    const double l1 = QLineF(p[i - 1], p[i]).length(), l2 = QLineF(p[i], p[i + 1]).length();
    const double rr = std::min({r, l1 / 2, l2 / 2});
    path.lineTo(p[i] + (p[i - 1] - p[i]) * (rr / l1));
    path.quadTo(p[i], p[i] + (p[i + 1] - p[i]) * (rr / l2));
  }
  path.lineTo(p.back());
  return path;
}
}  // namespace

QPainterPath WireItem::route(QPointF a, QPointF b, const QRectF& from, const QRectF& to) {
  constexpr double kStub = 22, kMinForward = 40;
  if (b.x() >= a.x() + kMinForward) return bezier(a, b);
  // Backward: along a horizontal lane in the gap between the nodes, else below both.
  double lane;
  if (to.top() > from.bottom() + 12) lane = (from.bottom() + to.top()) / 2;
  else if (from.top() > to.bottom() + 12) lane = (to.bottom() + from.top()) / 2;
  else lane = std::max(from.bottom(), to.bottom()) + 28;
  const double x1 = a.x() + kStub, x2 = b.x() - kStub;
  return rounded_polyline({a, {x1, a.y()}, {x1, lane}, {x2, lane}, {x2, b.y()}, b}, 14);
}

void WireItem::update_path() {
  setPath(route(from_->anchor(), to_->anchor(), from_->node()->sceneBoundingRect(), to_->node()->sceneBoundingRect()));
}

QPainterPath WireItem::shape() const {
  QPainterPathStroker s;
  s.setWidth(10);
  return s.createStroke(path());
}

void WireItem::paint(QPainter* p, const QStyleOptionGraphicsItem* o, QWidget*) {
  p->setRenderHint(QPainter::Antialiasing, o->levelOfDetailFromTransform(p->worldTransform()) >= kDetailZoom);
  QColor c = type_color(from_->spec().type);
  if (isSelected()) {
    p->setPen(QPen(QColor(0xff, 0xc8, 0x3c), 5));
    p->drawPath(path());
  }
  p->setPen(QPen(c, 2.5));
  p->setBrush(Qt::NoBrush);
  p->drawPath(path());
}

}  // namespace gemflow::studio
