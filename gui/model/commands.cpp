#include "model/commands.hpp"

#include <algorithm>

namespace gemflow::studio {

namespace {
QString q(const std::string& s) { return QString::fromStdString(s); }
}  // namespace

// ---- AddNodesCommand -------------------------------------------------------------------
AddNodesCommand::AddNodesCommand(GraphModel& m, std::vector<NodeInstance> nodes, std::vector<Link> links,
                                 const QString& text)
    : QUndoCommand(text), m_(m), nodes_(std::move(nodes)), links_(std::move(links)) {}

void AddNodesCommand::redo() {
  for (const auto& n : nodes_) m_.raw_insert_node(n, m_.workflow().nodes.size());
  for (const auto& l : links_) m_.raw_insert_link(l, m_.workflow().links.size());
}

void AddNodesCommand::undo() {
  for (auto it = links_.rbegin(); it != links_.rend(); ++it)
    if (auto i = m_.link_index(*it)) m_.raw_erase_link(*i);
  for (auto it = nodes_.rbegin(); it != nodes_.rend(); ++it) m_.raw_erase_node(it->id);
}

// ---- RemoveNodesCommand ----------------------------------------------------------------
RemoveNodesCommand::RemoveNodesCommand(GraphModel& m, const std::vector<std::string>& ids) : m_(m) {
  const auto& wf = m.workflow();
  auto selected = [&](const std::string& id) { return std::find(ids.begin(), ids.end(), id) != ids.end(); };
  for (std::size_t i = 0; i < wf.nodes.size(); ++i)
    if (selected(wf.nodes[i].id)) nodes_.emplace_back(i, wf.nodes[i]);
  for (std::size_t i = 0; i < wf.links.size(); ++i)
    if (selected(wf.links[i].from_node) || selected(wf.links[i].to_node)) links_.emplace_back(i, wf.links[i]);
  setText(nodes_.size() == 1 ? QObject::tr("Delete %1").arg(q(nodes_.front().second.id))
                             : QObject::tr("Delete %1 nodes").arg(nodes_.size()));
}

void RemoveNodesCommand::redo() {
  for (auto it = links_.rbegin(); it != links_.rend(); ++it) m_.raw_erase_link(it->first);
  for (auto it = nodes_.rbegin(); it != nodes_.rend(); ++it) m_.raw_erase_node(it->second.id);
}

void RemoveNodesCommand::undo() {
  for (const auto& [i, n] : nodes_) m_.raw_insert_node(n, i);
  for (const auto& [i, l] : links_) m_.raw_insert_link(l, i);
}

// ---- MoveNodesCommand ------------------------------------------------------------------
MoveNodesCommand::MoveNodesCommand(GraphModel& m, std::vector<Move> moves)
    : QUndoCommand(moves.size() == 1 ? QObject::tr("Move %1").arg(q(moves.front().id))
                                     : QObject::tr("Move %1 nodes").arg(moves.size())),
      m_(m),
      moves_(std::move(moves)) {}

void MoveNodesCommand::redo() {
  for (const auto& mv : moves_) m_.raw_set_pos(mv.id, mv.to);
}

void MoveNodesCommand::undo() {
  for (const auto& mv : moves_) m_.raw_set_pos(mv.id, mv.from);
}

bool MoveNodesCommand::mergeWith(const QUndoCommand* other) {
  const auto* o = static_cast<const MoveNodesCommand*>(other);
  if (o->moves_.size() != moves_.size()) return false;
  for (std::size_t i = 0; i < moves_.size(); ++i)
    if (o->moves_[i].id != moves_[i].id) return false;
  for (std::size_t i = 0; i < moves_.size(); ++i) moves_[i].to = o->moves_[i].to;
  return true;
}

// ---- SetParamCommand -------------------------------------------------------------------
SetParamCommand::SetParamCommand(GraphModel& m, NodeInstance before, NodeInstance after, std::string param)
    : QUndoCommand(QObject::tr("Set %1.%2").arg(q(after.id), q(param))),
      m_(m),
      before_(std::move(before)),
      after_(std::move(after)),
      param_(std::move(param)) {}

void SetParamCommand::redo() { m_.raw_replace_node(after_); }
void SetParamCommand::undo() { m_.raw_replace_node(before_); }

bool SetParamCommand::mergeWith(const QUndoCommand* other) {
  const auto* o = static_cast<const SetParamCommand*>(other);
  if (o->after_.id != after_.id || o->param_ != param_) return false;
  after_ = o->after_;
  return true;
}

// ---- LinkCommand -----------------------------------------------------------------------
LinkCommand::LinkCommand(GraphModel& m, Link link, std::size_t index, bool add)
    : QUndoCommand((add ? QObject::tr("Connect %1") : QObject::tr("Disconnect %1")).arg(q(link.str()))),
      m_(m),
      link_(std::move(link)),
      index_(index),
      add_(add) {}

void LinkCommand::apply(bool insert) {
  if (insert) {
    m_.raw_insert_link(link_, index_);
  } else if (auto i = m_.link_index(link_)) {
    m_.raw_erase_link(*i);
  }
}

void LinkCommand::redo() { apply(add_); }
void LinkCommand::undo() { apply(!add_); }

// ---- RenameWorkflowCommand -------------------------------------------------------------
RenameWorkflowCommand::RenameWorkflowCommand(GraphModel& m, std::string before, std::string after)
    : QUndoCommand(QObject::tr("Rename workflow")), m_(m), before_(std::move(before)), after_(std::move(after)) {}

SetDescriptionCommand::SetDescriptionCommand(GraphModel& m, std::string before, std::string after)
    : QUndoCommand(QObject::tr("Edit workflow description")),
      m_(m),
      before_(std::move(before)),
      after_(std::move(after)) {}

RenameNodeCommand::RenameNodeCommand(GraphModel& m, std::string from, std::string to)
    : QUndoCommand(QObject::tr("Rename %1 to %2").arg(q(from), q(to))),
      m_(m),
      from_(std::move(from)),
      to_(std::move(to)) {}

// ---- AnnotationsCommand ----------------------------------------------------------------
AnnotationsCommand::AnnotationsCommand(GraphModel& m, std::vector<EditorGroup> groups, std::vector<EditorNote> notes,
                                       const QString& text)
    : QUndoCommand(text),
      m_(m),
      before_groups_(m.workflow().groups),
      after_groups_(std::move(groups)),
      before_notes_(m.workflow().notes),
      after_notes_(std::move(notes)) {}

// ---- SetSweepCommand ---------------------------------------------------------------------
SetSweepCommand::SetSweepCommand(GraphModel& m, WorkflowSweep before, WorkflowSweep after)
    : QUndoCommand(QObject::tr("Edit sweep")), m_(m), before_(std::move(before)), after_(std::move(after)) {}

}  // namespace gemflow::studio
