#pragma once
// GraphScene: the editor's QGraphicsScene, a view of a GraphModel. It mirrors the model's
// nodes and links as items, turns user gestures (drag port to port, move, delete) into model
// edits, and shows run states. It never changes the workflow except through GraphModel.
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <QGraphicsScene>

#include "editor/annotation_items.hpp"
#include "editor/node_item.hpp"
#include "model/graph_model.hpp"

class QGraphicsPathItem;
class QMenu;

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

  // ---- menus (the caller shows and deletes them) ---------------------------------------
  /// Run to here, bypass, duplicate, delete, rename, group, open docs, show outputs folder.
  [[nodiscard]] QMenu* make_node_menu(const std::string& id);
  /// Insert node, delete, view data.
  [[nodiscard]] QMenu* make_wire_menu(const Link& link);
  /// Rename, colour, ungroup.
  [[nodiscard]] QMenu* make_group_menu(std::size_t index);

  // ---- gestures used by items and the view --------------------------------------------
  /// Wires `node` into the first wire under its body when it has no links yet and the types
  /// fit (one undo step); true when it did.
  bool insert_on_wire(const std::string& node);
  /// Moves a group's member items by `d` (the model follows on commit_node_moves()).
  void move_group_items(std::size_t index, QPointF d);
  /// Writes item positions that differ from the model as one move (one undo step).
  void commit_node_moves() { commit_moves(); }
  void rename_group(std::size_t index, const QString& title);
  [[nodiscard]] const std::vector<GroupItem*>& group_items() const { return groups_; }
  [[nodiscard]] const std::vector<NoteItem*>& note_items() const { return notes_; }
  /// Builds a node's item again when its ports no longer match its spec (a sub-workflow node
  /// whose inner file changed); its links are drawn again.
  void refresh_ports(const std::string& id);
  /// The node's scene rectangle from its item (spec-free: works for unknown types too).
  [[nodiscard]] QRectF node_rect(const std::string& id) const;

  // ---- big graphs --------------------------------------------------------------------
  /// Layered auto-layout of every node (sources left, sinks right), one undo step.
  void arrange();
  enum class Align { Left, Right, Top, Bottom, CentreH, CentreV, DistributeH, DistributeV };
  /// Aligns or distributes the selected nodes (at least 2; 3 to distribute), one undo step.
  void align_selection(Align how);

  // ---- problems before running --------------------------------------------------------
  /// Re-validates the workflow and marks the nodes (done after every edit, coalesced).
  void refresh_problems();
  /// Diagnostics of a node from the last refresh (empty when none).
  [[nodiscard]] std::vector<Diagnostic> problems_of(const std::string& id) const;
  [[nodiscard]] const std::vector<Diagnostic>& problems() const { return problems_; }

 Q_SIGNALS:
  /// Selection followed by the inspector and viewers: a node id, or a wire's source output.
  void node_selected(const QString& id);
  void wire_selected(const QString& from_node, const QString& from_port, const QString& to_node,
                     const QString& to_port);
  void selection_cleared();
  void message(const QString& text);
  /// Context-menu requests that need the main window.
  void run_to_requested(const QString& id);
  void docs_requested(const QString& id);
  void outputs_folder_requested(const QString& id);
  void rename_requested(const QString& id);
  void view_data_requested(const QString& from_node, const QString& from_port);
  /// Open the quick-add search at `screen_pos` for a node at `scene_pos`. With `port_node`
  /// set, the new node is linked to that port (an output when `port_is_output`) and the list
  /// holds the compatible types only; with `commands`, canvas commands are listed too.
  /// `link` (from_node set) asks for a node inserted into that link.
  void quick_add_requested(QPointF scene_pos, QPoint screen_pos, const QString& port_node, const QString& port,
                           bool port_is_output, bool commands);
  void insert_node_requested(QPointF scene_pos, QPoint screen_pos, const gemflow::Link& link);
  /// After refresh_problems().
  void problems_changed();
  /// Open the inner file of a sub-workflow node (double-click, its menu).
  void open_subworkflow_requested(const QString& id);
  /// Collapse these nodes into a sub-workflow (the main window asks for the file).
  void collapse_requested(const QStringList& ids);

 protected:
  void mouseMoveEvent(QGraphicsSceneMouseEvent* e) override;
  void mouseReleaseEvent(QGraphicsSceneMouseEvent* e) override;
  void keyPressEvent(QKeyEvent* e) override;
  void contextMenuEvent(QGraphicsSceneContextMenuEvent* e) override;

 private:
  void rebuild_annotations();
  void update_group_frames();
  void schedule_problems();
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
  std::vector<GroupItem*> groups_;
  std::vector<NoteItem*> notes_;
  std::vector<Diagnostic> problems_;
  bool problems_pending_ = false;
  bool annotations_pending_ = false;
};

}  // namespace gemflow::studio
