#pragma once
// Scene items of the editor: nodes with their ports, and wires. Items are views: they hold
// ids and port names, never the model's data, and are rebuilt from the model when it changes.
#include <string>
#include <vector>

#include <QGraphicsObject>
#include <QGraphicsPathItem>

#include <gemflow/executor.hpp>
#include <gemflow/node.hpp>
#include <gemflow/workflow.hpp>

namespace gemflow::studio {

class NodeItem;

/// One port circle of a node. Its scene position is where wires attach.
class PortItem : public QGraphicsItem {
 public:
  enum { Type = UserType + 2 };
  PortItem(NodeItem* node, PortSpec spec, bool is_output);
  [[nodiscard]] int type() const override { return Type; }
  [[nodiscard]] QRectF boundingRect() const override;
  void paint(QPainter* p, const QStyleOptionGraphicsItem*, QWidget*) override;

  [[nodiscard]] NodeItem* node() const { return node_; }
  [[nodiscard]] const PortSpec& spec() const { return spec_; }
  [[nodiscard]] bool is_output() const { return output_; }
  /// Drag highlighting: 0 none, 1 compatible (lit), -1 incompatible (dimmed).
  void set_highlight(int h);
  [[nodiscard]] QPointF anchor() const { return scenePos(); }

 protected:
  void mousePressEvent(QGraphicsSceneMouseEvent* e) override;

 private:
  NodeItem* node_;
  PortSpec spec_;
  bool output_;
  int highlight_ = 0;
};

/// A node: title (id), type, ports coloured by type, a state badge and a progress bar.
class NodeItem : public QGraphicsObject {
  Q_OBJECT
 public:
  enum { Type = UserType + 1 };
  static constexpr double kWidth = 190, kHeader = 40, kRow = 22;
  /// Height of a node with that many input and output ports.
  [[nodiscard]] static double height_for(std::size_t inputs, std::size_t outputs);
  /// `spec` is null for a type that no loaded plugin provides (drawn in red, ports from links).
  NodeItem(std::string id, std::string type, const NodeSpec* spec, const std::vector<PortSpec>& extra_in = {},
           const std::vector<PortSpec>& extra_out = {});
  [[nodiscard]] int type() const override { return Type; }
  [[nodiscard]] QRectF boundingRect() const override;
  void paint(QPainter* p, const QStyleOptionGraphicsItem*, QWidget*) override;

  [[nodiscard]] const std::string& id() const { return id_; }
  /// After GraphModel renamed the node.
  void set_id(std::string id);
  [[nodiscard]] const std::string& node_type() const { return type_; }
  [[nodiscard]] PortItem* port(const std::string& name, bool output) const;
  [[nodiscard]] const std::vector<PortItem*>& ports() const { return ports_; }

  void set_state(NodeState s, double progress, const QString& message);
  /// Bypassed nodes are drawn dimmed with a "bypassed" band.
  void set_bypass(bool on);
  [[nodiscard]] bool bypassed() const { return bypass_; }
  /// Problems found before running (validation, parameter rules): a warning sign on the node,
  /// the messages in its tooltip; "" clears. `error` false: only warnings.
  void set_problem(const QString& text, bool error);
  [[nodiscard]] const QString& problem() const { return problem_; }
  [[nodiscard]] NodeState state() const { return state_; }
  [[nodiscard]] double progress() const { return progress_; }
  [[nodiscard]] const QString& message() const { return message_; }
  /// Called when the user drags the item (not when the model moves it).
  bool syncing = false;

 Q_SIGNALS:
  void geometry_changed();

 protected:
  QVariant itemChange(GraphicsItemChange change, const QVariant& value) override;
  void contextMenuEvent(QGraphicsSceneContextMenuEvent* e) override;
  /// A sub-workflow node opens its inner file.
  void mouseDoubleClickEvent(QGraphicsSceneMouseEvent* e) override;

 private:
  void update_tooltip();
  std::string id_, type_;
  std::string title_;
  bool known_;
  double height_ = 0;
  std::vector<PortItem*> ports_;
  NodeState state_ = NodeState::Idle;
  double progress_ = 0;
  QString message_;
  QString doc_;
  bool bypass_ = false;
  QString problem_;
  bool problem_error_ = false;
};

/// A link from an output to an input, coloured by its type: a cubic bezier when the input is
/// to the right of the output; otherwise a rounded orthogonal path that leaves the output to
/// the right, runs back in the gap between (or below) the two nodes and enters the input
/// from the left, so that it never doubles back over the nodes themselves.
class WireItem : public QGraphicsPathItem {
 public:
  enum { Type = UserType + 3 };
  WireItem(PortItem* from, PortItem* to);
  [[nodiscard]] int type() const override { return Type; }
  void update_path();
  void update_tooltip();
  [[nodiscard]] PortItem* from() const { return from_; }
  [[nodiscard]] PortItem* to() const { return to_; }
  [[nodiscard]] QPainterPath shape() const override;
  void paint(QPainter* p, const QStyleOptionGraphicsItem* o, QWidget* w) override;
  [[nodiscard]] Link link() const;
  /// The bezier between two points (also used for the wire being dragged).
  [[nodiscard]] static QPainterPath bezier(QPointF a, QPointF b);
  /// The path of a wire from output anchor `a` (on node `from`) to input anchor `b` (on `to`).
  [[nodiscard]] static QPainterPath route(QPointF a, QPointF b, const QRectF& from, const QRectF& to);

 private:
  PortItem* from_;
  PortItem* to_;
};

}  // namespace gemflow::studio
