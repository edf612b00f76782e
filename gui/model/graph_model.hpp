#pragma once
// GraphModel: Studio's editable view of a gemflow::Workflow.
//
// The core Workflow stays the single source of truth: the scene, inspector and runner read it
// through this class and change it only through the public editing functions, each of which
// pushes an undo command (gui/model/commands.hpp) holding plain values (node ids, parameter
// values, positions), never scene pointers. Every change is announced by a signal so views
// can follow. No display is needed: the model is unit-tested headless.
#include <array>
#include <filesystem>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <QObject>
#include <QString>
#include <QUndoStack>

#include <gemflow/registry.hpp>
#include <gemflow/workflow.hpp>

namespace gemflow::studio {

using Pos = std::array<double, 2>;

/// Answer of a link check: empty `reason` means the link is allowed.
struct LinkCheck {
  std::string reason;
  [[nodiscard]] bool ok() const noexcept { return reason.empty(); }
};

/// Result of a parameter edit: empty `error` means the value was applied.
struct ParamEdit {
  std::string error;
  [[nodiscard]] bool ok() const noexcept { return error.empty(); }
};

class GraphModel : public QObject {
  Q_OBJECT
 public:
  explicit GraphModel(const Registry& registry, QObject* parent = nullptr);

  [[nodiscard]] const Registry& registry() const noexcept { return registry_; }
  [[nodiscard]] const Workflow& workflow() const noexcept { return wf_; }
  [[nodiscard]] QUndoStack* undo_stack() noexcept { return &undo_; }
  /// Spec of a node's type, nullptr when the type is unknown (plugin missing).
  [[nodiscard]] const NodeSpec* spec_of(std::string_view node_id) const;
  /// Effective parameter value: the one set in the file, else the spec default.
  [[nodiscard]] std::optional<ParamValue> param_value(std::string_view node_id, std::string_view name) const;
  /// Links into or out of a node.
  [[nodiscard]] std::vector<Link> links_of(std::string_view node_id) const;
  /// The link feeding an input port, if any.
  [[nodiscard]] const Link* link_into(std::string_view node_id, std::string_view port) const;

  // ---- documents ----------------------------------------------------------------------
  /// Replaces the whole workflow (clears undo history, marks clean, emits reset()).
  void reset(Workflow wf);
  /// Loads a file; returns the diagnostics (errors included). When the YAML could be read into
  /// a model (even with validation errors, e.g. a missing plugin) it replaces the current one.
  /// `loaded` (optional) tells whether the model was replaced.
  std::vector<Diagnostic> load(const std::filesystem::path& file, bool* loaded = nullptr);
  /// Saves to `file` (atomic), records it as the workflow's file and marks the stack clean.
  void save(const std::filesystem::path& file);
  [[nodiscard]] bool modified() const { return !undo_.isClean(); }
  [[nodiscard]] std::string to_yaml() const { return gemflow::to_yaml(wf_); }

  // ---- editing (undoable) ---------------------------------------------------------------
  /// Adds a node of `type` at `pos` with a fresh id derived from the type ("add", "add_2").
  /// Returns the new id, or "" when the type is unknown.
  std::string add_node(const std::string& type, Pos pos);
  /// Removes nodes and every link touching them, as one undo step.
  void remove_nodes(const std::vector<std::string>& ids);
  /// Moves nodes; consecutive moves of the same node set merge into one undo step.
  void move_nodes(const std::vector<std::pair<std::string, Pos>>& moves);
  /// Sets a parameter after ParamSpec::check; an invalid value never reaches the model.
  ParamEdit set_param(const std::string& node, const std::string& name, const ParamValue& value);
  /// Parses text with ParamSpec::parse then behaves as set_param.
  ParamEdit set_param_text(const std::string& node, const std::string& name, const std::string& text);
  /// Checks a link without changing anything: unknown node/port, direction, types, input
  /// already connected, self link and cycles ("would close the cycle a -> b -> a").
  [[nodiscard]] LinkCheck can_connect(const std::string& from_node, const std::string& from_port,
                                      const std::string& to_node, const std::string& to_port) const;
  /// Adds the link when can_connect allows it; otherwise the model is unchanged.
  LinkCheck connect(const std::string& from_node, const std::string& from_port, const std::string& to_node,
                    const std::string& to_port);
  /// Removes a link (matched by its four endpoints); false when absent.
  bool disconnect(const Link& link);
  /// Renames nothing, changes nothing: a YAML snippet (gemflow workflow text) of `ids` and the
  /// links among them, for the clipboard.
  [[nodiscard]] std::string copy(const std::vector<std::string>& ids) const;
  /// Pastes a snippet made by copy(): ids that clash are remapped ("add" → "add_2"), links
  /// follow, positions shift by `offset`. Returns the new ids; empty with `error` set when the
  /// text is not a usable snippet (the model is then unchanged).
  std::vector<std::string> paste(const std::string& yaml, Pos offset, std::string* error = nullptr);
  /// copy + paste with an offset, as one undo step.
  std::vector<std::string> duplicate(const std::vector<std::string>& ids, Pos offset = {30, 30});
  /// Sets the workflow name (undoable).
  void set_name(const std::string& name);
  /// Sets the workflow description (undoable; "" removes it from the file).
  void set_description(const std::string& description);
  /// Why `id` cannot be the new id of node `node` ("" when it can): the workflow format's rule
  /// (gemflow::valid_node_id: letters, digits, '_' and '-', starting with a letter or '_', at most
  /// kMaxIdLength characters) and uniqueness.
  [[nodiscard]] std::string check_node_id(const std::string& node, const std::string& id) const;
  /// Renames a node; its links and editor position follow (undoable). Returns "" on success,
  /// else the reason, and the model is unchanged.
  std::string rename_node(const std::string& node, const std::string& new_id);

  /// Bypasses (mutes) nodes or brings them back, one undo step: a bypassed node passes its
  /// inputs through to its outputs of the same type when the workflow runs.
  void set_bypass(const std::vector<std::string>& ids, bool on);
  /// Removes a link and wires `node` into it (link.from → node's first input of the link's
  /// type, node's first output of that type → link.to), one undo step. Refused (model
  /// unchanged) when the node has no such ports or the new links are not allowed.
  LinkCheck insert_into_link(const Link& link, const std::string& node);
  /// Adds a node of `type` at `pos` and links it to an existing port (`port_node`.`port`, an
  /// output when `port_is_output`) through its first compatible port; one undo step. Returns
  /// the new id, "" when the type is unknown or has no compatible port. A `workflow` node runs
  /// `sub_path` (its ports are that file's).
  std::string add_node_linked(const std::string& type, Pos pos, const std::string& port_node, const std::string& port,
                              bool port_is_output, const std::string& sub_path = {});
  /// Node types of the registry with a port that can link to a port of data type `type`: an
  /// input of that type when `want_input`, else an output.
  [[nodiscard]] std::vector<std::string> compatible_types(const std::string& type, bool want_input) const;

  // ---- groups and notes (Studio annotations, undoable) -----------------------------------
  /// Frames `ids` in a new group; returns its index.
  std::size_t add_group(const std::vector<std::string>& ids, const std::string& title, const std::string& color = {});
  void set_group(std::size_t index, const EditorGroup& g);
  void remove_group(std::size_t index);
  /// Adds a note; returns its index.
  std::size_t add_note(const std::string& text, Pos pos, double width = 240);
  void set_note(std::size_t index, const EditorNote& n);
  void remove_note(std::size_t index);

  // ---- sub-workflows -----------------------------------------------------------------------
  /// Adds a `workflow` node at `pos` that runs `path` (relative to the workflow's folder, or
  /// absolute; "" leaves it to be chosen in the Inspector). The id comes from the file's stem.
  /// Returns the new id.
  std::string add_subworkflow(const std::string& path, Pos pos);
  /// The inner file of a `workflow` node (absolute, resolved against the workflow's folder);
  /// "" when `node` is no sub-workflow node or has no path.
  [[nodiscard]] std::filesystem::path subworkflow_file(std::string_view node) const;
  /// Reads again the inner file of every `workflow` node that runs `file` (saved elsewhere), so
  /// that their ports follow it. Not an edit: no undo step, the document stays as modified as it
  /// was. Returns the ids of the nodes reloaded.
  std::vector<std::string> reload_subworkflows(const std::filesystem::path& file);
  /// Answer of collapse/expand: the new node ids, or why nothing changed.
  struct SubgraphEdit {
    std::vector<std::string> nodes;
    std::string error;
    [[nodiscard]] bool ok() const noexcept { return error.empty(); }
  };
  /// Writes the nodes `ids` and the links among them to `file` as a workflow whose `inputs:` and
  /// `outputs:` expose every link that crosses the selection's boundary (one exposed input per
  /// outside output feeding the selection, one exposed output per inner output read outside),
  /// then replaces them by one `workflow` node running that file, wired the same way: one undo
  /// step (the file stays when undone). Relative input paths of the moved nodes are rewritten
  /// relative to `file`'s folder. The model is unchanged when the file cannot be written.
  SubgraphEdit collapse_to_subworkflow(const std::vector<std::string>& ids, const std::filesystem::path& file);
  /// The inverse: replaces a `workflow` node by its inner nodes (ids "<node>_<inner id>", made
  /// unique), their links, and the outer links rewired through the exposed ports; one undo step.
  SubgraphEdit expand_subworkflow(const std::string& node);

  // ---- sweep section ----------------------------------------------------------------------
  /// Replaces the workflow's `sweep:` section (undoable; an empty one removes it).
  void set_sweep(const WorkflowSweep& sweep);

  // ---- problems ---------------------------------------------------------------------------
  /// What `gemflow validate` would say now (missing inputs, broken rules, bad values, cycles),
  /// without running anything.
  [[nodiscard]] std::vector<Diagnostic> problems() const { return validate(wf_, registry_); }

  /// A fresh node id based on `base` that is not used in the workflow nor in `taken`.
  [[nodiscard]] std::string unique_id(const std::string& base, const std::vector<std::string>& taken = {}) const;

  // ---- raw mutators: used by the undo commands only (no undo, but signals) --------------
  void raw_insert_node(const NodeInstance& n, std::size_t index);
  void raw_erase_node(const std::string& id);
  void raw_replace_node(const NodeInstance& n);  ///< same id: params/pos/type
  void raw_set_pos(const std::string& id, std::optional<Pos> pos);
  void raw_insert_link(const Link& l, std::size_t index);
  void raw_erase_link(std::size_t index);
  void raw_set_name(const std::string& name);
  void raw_set_description(const std::string& description);
  void raw_rename_node(const std::string& from, const std::string& to);
  void raw_set_annotations(std::vector<EditorGroup> groups, std::vector<EditorNote> notes);
  void raw_set_sweep(WorkflowSweep sweep);
  [[nodiscard]] std::optional<std::size_t> link_index(const Link& l) const;
  [[nodiscard]] std::optional<std::size_t> node_index(std::string_view id) const;

 Q_SIGNALS:
  void model_reset();
  void node_added(const QString& id);
  void node_removed(const QString& id);
  void node_changed(const QString& id);  ///< parameters or type changed
  void node_moved(const QString& id);
  void link_added(const QString& from_node, const QString& from_port, const QString& to_node, const QString& to_port);
  void link_removed(const QString& from_node, const QString& from_port, const QString& to_node, const QString& to_port);
  void name_changed();  ///< name or description
  /// A node's id changed (its links were updated in place; no link signals).
  void node_renamed(const QString& from, const QString& to);
  /// Groups or notes changed.
  void annotations_changed();
  /// The `sweep:` section changed.
  void sweep_changed();
  /// Any change at all (after the specific signal).
  void changed();

 private:
  const Registry& registry_;
  Workflow wf_;
  QUndoStack undo_;
};

/// Layered ("Sugiyama") layout of a workflow: each node in the column of its longest path from
/// a source (sources left, sinks right), the order within columns by repeated barycentre sweeps
/// to reduce wire crossings, nodes stacked with `height(id)` and a gap so that none overlap.
/// Returns the top-left position of every node.
[[nodiscard]] std::map<std::string, Pos> layered_layout(const Workflow& wf,
                                                        const std::function<double(const std::string&)>& height,
                                                        double width);
/// Wire crossings between adjacent columns of `pos` (links counted between consecutive x
/// columns only; for tests and the benchmark).
[[nodiscard]] std::size_t count_crossings(const Workflow& wf, const std::map<std::string, Pos>& pos);

/// True when both links join the same endpoints.
[[nodiscard]] bool same_link(const Link& a, const Link& b);

}  // namespace gemflow::studio
