#pragma once
// GraphScene: the editor's QGraphicsScene, a view of a GraphModel. It mirrors the model's
// nodes and links as items, turns user gestures (drag port to port, move, delete) into model
// edits, and shows run states. It never changes the workflow except through GraphModel.
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <QGraphicsScene>

#include "editor/node_item.hpp"
#include "model/graph_model.hpp"

class QGraphicsPathItem;

namespace gemflow::studio {

class GraphScene : public QGraphicsScene {
  Q_OBJECT
 public:
  explicit GraphScene(GraphModel& model, QObject* parent = nullptr);

  [[nodiscard]] GraphModel& model() { return model_; }
  [[nodiscard]] NodeItem* node_item(const std::string& id) const;
  [[nodiscard]] std::vector<NodeItem*> node_items() const;
  [[nodiscard]] const std::vector<WireItem*>& wires() const { return wires_; }
  [[nodiscard]] std::vector<std::string> selected_node_ids() const;

  /// Starts dragging a wire from a port (called by PortItem on a press). Dragging from a
  /// connected input picks its link up and continues from its source output: dropped on
  /// another input it moves there (one undo step), dropped in empty space it is deleted,
  /// dropped back where it was it stays. Nothing changes until the mouse has moved by the
  /// platform's drag distance: a click is not an edit.
  void begin_link_drag(PortItem* port, QPointF scene_pos);
  /// Tries to link two ports (in either order); on refusal shows the reason as a tooltip at
  /// `screen_pos` (when given), emits message() and returns it.
  LinkCheck link_ports(PortItem* a, PortItem* b, const QPoint* screen_pos = nullptr);
  [[nodiscard]] const QString& last_refusal() const { return last_refusal_; }
  [[nodiscard]] bool dragging_link() const { return drag_from_ != nullptr; }

  /// Deletes the selected wires and nodes as one undo step.
  void delete_selection();
  void select_nodes(const std::vector<std::string>& ids);
  /// Shows run state on a node (a state change resets progress unless running).
  void set_node_state(const std::string& id, NodeState s, double progress, const QString& message);
  void reset_states();
  /// Where a new node goes when no position is given: right of everything.
  [[nodiscard]] QPointF free_position() const;

 Q_SIGNALS:
  /// Selection followed by the inspector and viewers: a node id, or a wire's source output.
  void node_selected(const QString& id);
  void wire_selected(const QString& from_node, const QString& from_port, const QString& to_node,
                     const QString& to_port);
  void selection_cleared();
  void message(const QString& text);

 protected:
  void mouseMoveEvent(QGraphicsSceneMouseEvent* e) override;
  void mouseReleaseEvent(QGraphicsSceneMouseEvent* e) override;
  void keyPressEvent(QKeyEvent* e) override;

 private:
  void rebuild();
  void auto_layout();
  NodeItem* add_node_item(const std::string& id);
  void remove_node_item(const std::string& id);
  void add_wire(const Link& l);
  void remove_wire(const QString& fn, const QString& fp, const QString& tn, const QString& tp);
  void update_wires_of(NodeItem* n);
  void sync_pos(const std::string& id);
  void end_link_drag(QPointF scene_pos, QPoint screen_pos);
  void clear_highlights();
  void on_selection_changed();
  void commit_moves();

  GraphModel& model_;
  std::map<std::string, NodeItem*> nodes_;
  std::vector<WireItem*> wires_;
  void cancel_link_drag();
  PortItem* drag_from_ = nullptr;
  QGraphicsPathItem* drag_wire_ = nullptr;
  /// The link picked up from an input (it stays in the model until the drop), its wire
  /// (hidden while dragging) and whether the mouse has moved far enough to be a drag.
  std::optional<Link> picked_;
  WireItem* picked_wire_ = nullptr;
  bool drag_moved_ = false;
  QString last_refusal_;
};

}  // namespace gemflow::studio
