#include "editor/annotation_items.hpp"

#include <cmath>

#include <QGraphicsSceneMouseEvent>
#include <QInputDialog>
#include <QKeyEvent>
#include <QMenu>
#include <QPainter>
#include <QTextDocument>

#include "editor/graph_scene.hpp"

namespace gemflow::studio {

namespace {
QString q(const std::string& s) { return QString::fromStdString(s); }
}  // namespace

const std::vector<std::pair<QString, QString>>& group_colors() {
  static const std::vector<std::pair<QString, QString>> c = {
      {QObject::tr("Blue"), QStringLiteral("#4a6fa5")},   {QObject::tr("Green"), QStringLiteral("#4f8a4f")},
      {QObject::tr("Orange"), QStringLiteral("#b07030")}, {QObject::tr("Purple"), QStringLiteral("#7a55a0")},
      {QObject::tr("Red"), QStringLiteral("#a04848")},    {QObject::tr("Grey"), QStringLiteral("#6a6e76")}};
  return c;
}

// ---- GroupItem ----------------------------------------------------------------------------

GroupItem::GroupItem(GraphScene& scene, std::size_t index) : scene_(scene), index_(index) {
  setZValue(-2);
  setAcceptHoverEvents(true);
}

void GroupItem::set_frame(const QRectF& members, const QString& title, const QColor& color) {
  prepareGeometryChange();
  rect_ = members.adjusted(-kMargin, -kMargin - kTitle, kMargin, kMargin);
  title_ = title;
  color_ = color;
  setToolTip(tr("Group <b>%1</b>: drag its title bar to move its nodes; double-click it to rename; "
                "right-click for colour and ungroup")
                 .arg(title.toHtmlEscaped()));
  update();
}

void GroupItem::paint(QPainter* p, const QStyleOptionGraphicsItem*, QWidget*) {
  p->setRenderHint(QPainter::Antialiasing);
  QColor fill = color_;
  fill.setAlpha(46);
  p->setPen(QPen(color_, 1.5));
  p->setBrush(fill);
  p->drawRoundedRect(rect_, 8, 8);
  QPainterPath bar;
  bar.addRoundedRect(title_rect(), 8, 8);
  QColor head = color_;
  head.setAlpha(170);
  p->fillPath(bar, head);
  QFont f = p->font();
  f.setBold(true);
  f.setPointSizeF(10);
  p->setFont(f);
  p->setPen(Qt::white);
  const QRectF tr = title_rect().adjusted(10, 0, -10, 0);
  p->drawText(tr, Qt::AlignLeft | Qt::AlignVCenter,
              p->fontMetrics().elidedText(title_, Qt::ElideRight, static_cast<int>(tr.width())));
}

void GroupItem::mousePressEvent(QGraphicsSceneMouseEvent* e) {
  // Only the title bar is a handle: the body lets rubber bands and clicks on the canvas through.
  if (e->button() != Qt::LeftButton || !title_rect().contains(e->pos())) {
    e->ignore();
    return;
  }
  dragging_ = true;
  last_ = e->scenePos();
  e->accept();
}

void GroupItem::mouseMoveEvent(QGraphicsSceneMouseEvent* e) {
  if (!dragging_) return;
  const QPointF d = e->scenePos() - last_;
  last_ = e->scenePos();
  scene_.move_group_items(index_, d);
}

void GroupItem::mouseReleaseEvent(QGraphicsSceneMouseEvent* e) {
  if (!dragging_) return;
  dragging_ = false;
  e->accept();
  scene_.commit_node_moves();
}

void GroupItem::mouseDoubleClickEvent(QGraphicsSceneMouseEvent* e) {
  if (!title_rect().contains(e->pos())) {
    e->ignore();
    return;
  }
  bool ok = false;
  const QString t = QInputDialog::getText(nullptr, tr("Rename group"), tr("Title:"), QLineEdit::Normal, title_, &ok);
  if (ok) scene_.rename_group(index_, t);
}

void GroupItem::contextMenuEvent(QGraphicsSceneContextMenuEvent* e) {
  if (!title_rect().contains(e->pos())) {
    e->ignore();
    return;
  }
  std::unique_ptr<QMenu> menu(scene_.make_group_menu(index_));
  menu->exec(e->screenPos());
}

// ---- NoteItem -----------------------------------------------------------------------------

NoteItem::NoteItem(GraphScene& scene, std::size_t index) : scene_(scene), index_(index) {
  const EditorNote& n = scene.model().workflow().notes.at(index);
  setPlainText(q(n.text));
  setTextWidth(n.width);
  setPos(n.pos[0], n.pos[1]);
  setDefaultTextColor(QColor(0x20, 0x20, 0x20));
  setFlags(ItemIsMovable | ItemIsSelectable);
  setZValue(-1);
  setToolTip(tr("Note: double-click to edit, drag to move"));
}

void NoteItem::paint(QPainter* p, const QStyleOptionGraphicsItem* o, QWidget* w) {
  p->setPen(QPen(isSelected() ? QColor(0xff, 0xc8, 0x3c) : QColor(0xb8, 0xa8, 0x50), isSelected() ? 2 : 1));
  p->setBrush(QColor(0xf3, 0xe6, 0x9a));
  p->drawRoundedRect(boundingRect(), 4, 4);
  QGraphicsTextItem::paint(p, o, w);
}

void NoteItem::edit() {
  setTextInteractionFlags(Qt::TextEditorInteraction);
  setFocus(Qt::MouseFocusReason);
}

void NoteItem::mouseDoubleClickEvent(QGraphicsSceneMouseEvent* e) {
  if (textInteractionFlags() == Qt::NoTextInteraction) edit();
  QGraphicsTextItem::mouseDoubleClickEvent(e);
}

void NoteItem::mouseReleaseEvent(QGraphicsSceneMouseEvent* e) {
  QGraphicsTextItem::mouseReleaseEvent(e);
  commit();
}

void NoteItem::focusOutEvent(QFocusEvent* e) {
  QGraphicsTextItem::focusOutEvent(e);
  setTextInteractionFlags(Qt::NoTextInteraction);
  commit();
}

void NoteItem::keyPressEvent(QKeyEvent* e) {
  if (e->key() == Qt::Key_Escape) {
    clearFocus();  // commits
    return;
  }
  QGraphicsTextItem::keyPressEvent(e);
}

void NoteItem::contextMenuEvent(QGraphicsSceneContextMenuEvent* e) {
  QMenu menu;
  menu.addAction(tr("Edit Note"), [this] { edit(); });
  menu.addAction(tr("Delete Note"), [this] { scene_.model().remove_note(index_); });
  menu.exec(e->screenPos());
}

void NoteItem::commit() {
  const auto& notes = scene_.model().workflow().notes;
  if (index_ >= notes.size()) return;
  EditorNote n = notes[index_];
  n.text = toPlainText().toStdString();
  n.pos = {std::round(pos().x()), std::round(pos().y())};
  scene_.model().set_note(index_, n);  // a no-op when nothing changed
}

}  // namespace gemflow::studio
