#pragma once
// Scene items of the workflow's annotations: group frames (a title and a colour around member
// nodes, dragged by the title bar with their nodes) and free-text notes. Views like the node
// items: they hold an index into Workflow::groups / notes and change the workflow only through
// GraphModel (undoable).
#include <QGraphicsObject>
#include <QGraphicsTextItem>

namespace gemflow::studio {

class GraphScene;

class GroupItem : public QGraphicsObject {
  Q_OBJECT
 public:
  enum { Type = UserType + 4 };
  static constexpr double kTitle = 26, kMargin = 18;
  GroupItem(GraphScene& scene, std::size_t index);
  [[nodiscard]] int type() const override { return Type; }
  [[nodiscard]] std::size_t index() const { return index_; }
  /// Frame around `members` (their scene rectangle), with the title bar above.
  void set_frame(const QRectF& members, const QString& title, const QColor& color);
  [[nodiscard]] QRectF boundingRect() const override { return rect_.adjusted(-2, -2, 2, 2); }
  [[nodiscard]] QRectF title_rect() const { return {rect_.left(), rect_.top(), rect_.width(), kTitle}; }
  [[nodiscard]] const QString& title() const { return title_; }
  void paint(QPainter* p, const QStyleOptionGraphicsItem*, QWidget*) override;

 protected:
  void mousePressEvent(QGraphicsSceneMouseEvent* e) override;
  void mouseMoveEvent(QGraphicsSceneMouseEvent* e) override;
  void mouseReleaseEvent(QGraphicsSceneMouseEvent* e) override;
  void mouseDoubleClickEvent(QGraphicsSceneMouseEvent* e) override;
  void contextMenuEvent(QGraphicsSceneContextMenuEvent* e) override;

 private:
  GraphScene& scene_;
  std::size_t index_;
  QRectF rect_;
  QString title_;
  QColor color_;
  bool dragging_ = false;
  QPointF last_;
};

class NoteItem : public QGraphicsTextItem {
  Q_OBJECT
 public:
  enum { Type = UserType + 5 };
  NoteItem(GraphScene& scene, std::size_t index);
  [[nodiscard]] int type() const override { return Type; }
  [[nodiscard]] std::size_t index() const { return index_; }
  /// Starts editing the text (double-click does the same).
  void edit();
  void paint(QPainter* p, const QStyleOptionGraphicsItem* o, QWidget* w) override;

 protected:
  void mouseDoubleClickEvent(QGraphicsSceneMouseEvent* e) override;
  void mouseReleaseEvent(QGraphicsSceneMouseEvent* e) override;
  void focusOutEvent(QFocusEvent* e) override;
  void keyPressEvent(QKeyEvent* e) override;
  void contextMenuEvent(QGraphicsSceneContextMenuEvent* e) override;

 private:
  void commit();
  GraphScene& scene_;
  std::size_t index_;
};

/// Colours offered for groups (name, #rrggbb); the first is the default.
[[nodiscard]] const std::vector<std::pair<QString, QString>>& group_colors();

}  // namespace gemflow::studio
