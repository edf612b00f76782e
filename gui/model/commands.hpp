#pragma once
// Undo commands of GraphModel. Each holds values only (node snapshots, ids, indices,
// positions) and replays them through GraphModel's raw mutators, so undo/redo never depends
// on scene items being alive and restores exactly the same workflow text.
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <QUndoCommand>

#include "model/graph_model.hpp"

namespace gemflow::studio {

/// Appends nodes then links (add node, paste, duplicate).
class AddNodesCommand : public QUndoCommand {
 public:
  AddNodesCommand(GraphModel& m, std::vector<NodeInstance> nodes, std::vector<Link> links, const QString& text);
  void redo() override;
  void undo() override;

 private:
  GraphModel& m_;
  std::vector<NodeInstance> nodes_;
  std::vector<Link> links_;
};

/// Removes nodes and the links touching them; undo puts both back at their old indices.
class RemoveNodesCommand : public QUndoCommand {
 public:
  RemoveNodesCommand(GraphModel& m, const std::vector<std::string>& ids);
  void redo() override;
  void undo() override;

 private:
  GraphModel& m_;
  std::vector<std::pair<std::size_t, NodeInstance>> nodes_;  ///< ascending index
  std::vector<std::pair<std::size_t, Link>> links_;          ///< ascending index
};

/// Moves nodes; consecutive moves of the same node set merge (one undo step per drag).
class MoveNodesCommand : public QUndoCommand {
 public:
  static constexpr int kId = 0x6d6f7665;
  struct Move {
    std::string id;
    std::optional<Pos> from;
    Pos to;
  };
  MoveNodesCommand(GraphModel& m, std::vector<Move> moves);
  void redo() override;
  void undo() override;
  [[nodiscard]] int id() const override { return kId; }
  bool mergeWith(const QUndoCommand* other) override;

 private:
  GraphModel& m_;
  std::vector<Move> moves_;
};

/// Replaces a node's snapshot (parameter edits); consecutive edits of the same parameter merge.
class SetParamCommand : public QUndoCommand {
 public:
  static constexpr int kId = 0x70617261;
  SetParamCommand(GraphModel& m, NodeInstance before, NodeInstance after, std::string param);
  void redo() override;
  void undo() override;
  [[nodiscard]] int id() const override { return kId; }
  bool mergeWith(const QUndoCommand* other) override;

 private:
  GraphModel& m_;
  NodeInstance before_, after_;
  std::string param_;
};

/// Adds (add = true) or removes one link at a given index.
class LinkCommand : public QUndoCommand {
 public:
  LinkCommand(GraphModel& m, Link link, std::size_t index, bool add);
  void redo() override;
  void undo() override;

 private:
  void apply(bool insert);
  GraphModel& m_;
  Link link_;
  std::size_t index_;
  bool add_;
};

class RenameWorkflowCommand : public QUndoCommand {
 public:
  RenameWorkflowCommand(GraphModel& m, std::string before, std::string after);
  void redo() override { m_.raw_set_name(after_); }
  void undo() override { m_.raw_set_name(before_); }

 private:
  GraphModel& m_;
  std::string before_, after_;
};

class SetDescriptionCommand : public QUndoCommand {
 public:
  SetDescriptionCommand(GraphModel& m, std::string before, std::string after);
  void redo() override { m_.raw_set_description(after_); }
  void undo() override { m_.raw_set_description(before_); }

 private:
  GraphModel& m_;
  std::string before_, after_;
};

/// Renames a node (its links follow); undo renames it back.
class RenameNodeCommand : public QUndoCommand {
 public:
  RenameNodeCommand(GraphModel& m, std::string from, std::string to);
  void redo() override { m_.raw_rename_node(from_, to_); }
  void undo() override { m_.raw_rename_node(to_, from_); }

 private:
  GraphModel& m_;
  std::string from_, to_;
};

/// Replaces the groups and notes (values before and after).
class AnnotationsCommand : public QUndoCommand {
 public:
  AnnotationsCommand(GraphModel& m, std::vector<EditorGroup> groups, std::vector<EditorNote> notes,
                     const QString& text);
  void redo() override { m_.raw_set_annotations(after_groups_, after_notes_); }
  void undo() override { m_.raw_set_annotations(before_groups_, before_notes_); }

 private:
  GraphModel& m_;
  std::vector<EditorGroup> before_groups_, after_groups_;
  std::vector<EditorNote> before_notes_, after_notes_;
};

/// Replaces the `sweep:` section (values before and after).
class SetSweepCommand : public QUndoCommand {
 public:
  SetSweepCommand(GraphModel& m, WorkflowSweep before, WorkflowSweep after);
  void redo() override { m_.raw_set_sweep(after_); }
  void undo() override { m_.raw_set_sweep(before_); }

 private:
  GraphModel& m_;
  WorkflowSweep before_, after_;
};

}  // namespace gemflow::studio
