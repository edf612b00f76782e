#pragma once
// Workflow files: the YAML that both `gemflow run` and Studio read and write.
//
//   gemflow: 1                      # format version; newer than kWorkflowFormat is refused
//   name: nmr-structure
//   description: ...                # optional
//   nodes:
//     read:  {type: io.read_structure, version: 1, params: {path: ../sample_data/2kpu.pdb}}
//   links:
//     - read.structure -> bounds.structure
//   editor: {read: {pos: [0, 0]}}   # Studio layout only; ignored headless
//   annotations:                    # Studio frames and notes only; ignored headless
//     groups: [{title: Input, color: "#4a6fa5", nodes: [read]}]
//     notes: [{text: "...", pos: [0, -80], width: 240}]
//   sweep: {dg.seed: 1..100}        # optional: `gemflow run` runs every point (gemflow/sweep.hpp)
//
// A node may say `bypass: true`: it does not run, each of its outputs passes on the first
// input of the same type (see run_workflow).
//
// Unknown keys are errors. Relative input paths resolve against the workflow file's folder.
//
// Sub-workflows: a node of type `workflow` runs another workflow file, whose `inputs:` and
// `outputs:` sections name the inner ports it exposes:
//
//   nodes:
//     refine: {type: workflow, params: {path: refine.yaml}}   # relative to this file
//   # in refine.yaml:
//   inputs:  {bounds: [smooth.bounds, dg.bounds]}   # one exposed input may feed several ports
//   outputs: {structure: dg.structure}
//
// The executor runs the flattened graph (flatten()): inner nodes get ids "refine/dg", so the
// cache and parallel branches work across the boundary, `--set refine/dg.trials=8` and
// `--until refine/dg` reach them, and inner output files go to OUT/refine/.
#include <array>
#include <filesystem>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "gemflow/error.hpp"
#include "gemflow/node.hpp"
#include "gemflow/param.hpp"
#include "gemflow/registry.hpp"

namespace gemflow {

inline constexpr int kWorkflowFormat = 1;

/// One problem found while loading or validating, with everything needed to find it.
struct Diagnostic {
  enum class Severity { Error, Warning };
  Severity severity = Severity::Error;
  SourceLocation where;
  std::string node;   ///< node id, "" when not about a node
  std::string param;  ///< parameter or port name, "" when none
  std::string message;
  std::string hint;      ///< e.g. "did you mean 'distgeom.embed'?"
  bool is_port = false;  ///< `param` names a port (str() says "port 'y'")
  /// A broken parameter rule (NodeInfo::rules). `gemflow run/validate --set` checks rules on the
  /// values after the overrides only, so that an override can mend a combination in the file.
  bool rule = false;
  /// "file:line:col: error: node 'x', parameter 'y': message (did you mean 'z'?)"
  [[nodiscard]] std::string str() const;
  /// The same without the severity and the node ("file:line:col: parameter 'y': message (…)"),
  /// for a log line that names both already.
  [[nodiscard]] std::string log_str() const;
};

struct SubWorkflow;

/// The node type of a sub-workflow node (its one parameter, `path`, names the inner file).
inline constexpr std::string_view kSubWorkflowType = "workflow";
/// Sub-workflows nest at most this deep (a deeper chain is refused with its files).
inline constexpr int kMaxSubWorkflowDepth = 8;
/// Every `workflow` node loads its file, so a file used by K nodes is loaded K times, and K per
/// level over 8 levels multiply: one load of a workflow loads at most this many sub-workflow
/// files, and at most kMaxSubWorkflowBytes of their text in all; the nodes past either limit
/// are not loaded (an error at each, naming the limit).
inline constexpr std::size_t kMaxSubWorkflowLoads = 10000;
inline constexpr std::size_t kMaxSubWorkflowBytes = std::size_t{256} << 20;

/// The one parameter of a `workflow` node: `path`, the inner file (.yaml/.yml, relative to the
/// outer workflow's folder), required.
[[nodiscard]] ParamSpec subworkflow_path_param();

struct NodeInstance {
  std::string id;
  std::string type;
  int type_version = 0;  ///< version saved in the file (0: not given → current)
  /// Parameters set in the file, in file order; unset ones take the spec default.
  std::vector<std::pair<std::string, ParamValue>> params;
  std::optional<std::array<double, 2>> pos;  ///< editor position
  /// Bypassed (muted): the executor passes inputs through instead of running the node.
  bool bypass = false;
  SourceLocation where;                               ///< of the node's key
  std::map<std::string, SourceLocation> param_where;  ///< of each parameter's value
  /// A `workflow` node: the inner workflow as loaded (null for other nodes, or when the inner
  /// file could not be read). Shared between copies of the Workflow; apply_override copies it
  /// before changing it.
  std::shared_ptr<const SubWorkflow> sub;

  [[nodiscard]] const ParamValue* param(std::string_view name) const;
  void set_param(const std::string& name, ParamValue v);  ///< replaces or appends
};

struct Link {
  std::string from_node, from_port, to_node, to_port;
  SourceLocation where;
  /// "a.out -> b.in"
  [[nodiscard]] std::string str() const;
};

/// A port that a workflow exposes to the workflows that use it as a sub-workflow.
struct ExposedPort {
  std::string name;
  /// Inner (node, port) pairs: an exposed input feeds each of them; an output names exactly one.
  std::vector<std::pair<std::string, std::string>> targets;
  SourceLocation where;
};

/// A workflow file included by another (flatten() lists them for provenance).
struct IncludedFile {
  std::filesystem::path file;
  std::string xxh3;  ///< of the file's bytes when it was loaded
};

struct WorkflowSource;

/// A Studio frame around nodes (moved with them); layout only, ignored headless.
struct EditorGroup {
  std::string title;
  std::string color;               ///< "#rrggbb"; "" = Studio's default
  std::vector<std::string> nodes;  ///< member node ids
};

/// A free-text note on the Studio canvas; layout only, ignored headless.
struct EditorNote {
  std::string text;
  std::array<double, 2> pos{0, 0};
  double width = 240;
};

/// One entry of a workflow's `sweep:` section: a parameter and the values it takes, as written.
/// gemflow/sweep.hpp checks and expands them (the loader checks only the form).
struct SweepEntry {
  std::string target;             ///< "node.param"
  std::string text;               ///< the values in --sweep's syntax ("1..100", "a,b", "@file.txt")
  std::vector<std::string> list;  ///< or a YAML list of values (then `text` is "")
  bool is_list = false;           ///< the values were given as a YAML list
  SourceLocation where;           ///< of the entry's key
};

/// The `sweep:` section:
///   sweep:
///     dg.seed: 1..100            # same syntax as --sweep node.param=VALUES
///     bounds.cutoff: [4.0, 5.0]  # or a YAML list
///     zip: true                  # optional: pair the values instead of every combination
struct WorkflowSweep {
  std::vector<SweepEntry> entries;  ///< in file order
  bool zip = false;
  SourceLocation where;  ///< of the `sweep:` key
  [[nodiscard]] bool empty() const noexcept { return entries.empty(); }
};

struct Workflow {
  int format = kWorkflowFormat;
  std::string name;
  std::string description;
  std::vector<NodeInstance> nodes;  ///< in file order
  std::vector<Link> links;
  std::filesystem::path file;        ///< where it was loaded from / saved to ("" if never)
  std::vector<ExposedPort> inputs;   ///< `inputs:` (ports exposed when used as a sub-workflow)
  std::vector<ExposedPort> outputs;  ///< `outputs:`
  /// Sub-workflow files whose nodes flatten() brought in, outermost first (empty otherwise).
  std::vector<IncludedFile> included;
  /// The text it was loaded from and the model that text gave, so that saving changes only the
  /// lines of what was edited (null when built in code). Shared between copies.
  std::shared_ptr<const WorkflowSource> source;
  std::vector<EditorGroup> groups;  ///< `annotations: groups:` (Studio only)
  std::vector<EditorNote> notes;    ///< `annotations: notes:` (Studio only)
  WorkflowSweep sweep;              ///< the `sweep:` section (empty: none)

  [[nodiscard]] NodeInstance* find(std::string_view id);
  [[nodiscard]] const NodeInstance* find(std::string_view id) const;
  /// Folder that relative input paths resolve against (the file's folder, else the cwd).
  [[nodiscard]] std::filesystem::path base_dir() const;
};

/// A workflow file's text as loaded, and what it meant (before migrations).
struct WorkflowSource {
  std::string text;
  Workflow loaded;
  std::map<std::string, int> top_key_line;  ///< 1-based line of each top-level key
};

/// What a migration step may change: the node (its parameters, with their file positions) and
/// the workflow's links (a renamed port's).
struct MigrationTarget {
  NodeInstance& node;
  std::vector<Link>& links;
};

/// Applies the migrations of every node saved at an older version of its type (NodeInfo::
/// migrations), in order, and sets its version to the last one reached. Returns one warning per
/// step that changed the node ("migrated from version 1 to 2 of 'x.y': parameter 'a' is now
/// 'b'"), at the node; `nodes_migrated` (optional) counts the nodes whose version advanced. A gap
/// in the chain stops there (validation then warns that the node is old). load_workflow calls it
/// before validating.
std::vector<Diagnostic> migrate_workflow(Workflow& wf, const Registry& registry, std::size_t* nodes_migrated = nullptr);

/// Whether `id` may name a node (and an exposed port): letters, digits, '_' and '-', starting
/// with a letter or '_' (links use '.'), at most kMaxIdLength characters
/// (gemflow/workflow_limits.hpp). The loader's rule, for editors that name nodes.
[[nodiscard]] bool valid_node_id(std::string_view id);

struct LoadResult {
  std::optional<Workflow> workflow;  ///< set when the YAML could be read into a model
  std::vector<Diagnostic> diagnostics;
  std::size_t migrated = 0;       ///< nodes brought to their type's current version
  [[nodiscard]] bool ok() const;  ///< workflow set and no Error diagnostics
};

/// Reads and checks a workflow file: YAML syntax, format version, known keys, node types
/// (with nearest-name hints), parameter names and values (kind, limits, choices), link syntax
/// and ports. Then runs validate(). Never throws for bad content; I/O errors become diagnostics.
[[nodiscard]] LoadResult load_workflow(const std::filesystem::path& file, const Registry& registry);
/// Same from text; `filename` is used in diagnostics and as the base for relative paths.
[[nodiscard]] LoadResult parse_workflow(const std::string& text, const std::filesystem::path& filename,
                                        const Registry& registry);

/// Graph-level checks: link endpoints exist, port types match, each input has at most one
/// link, required inputs are connected, parameter values are valid, no cycles (the cycle is
/// named node by node: "a -> b -> c -> a").
[[nodiscard]] std::vector<Diagnostic> validate(const Workflow& wf, const Registry& registry);

/// Canonical YAML text (stable: load → save → load → save gives identical text).
[[nodiscard]] std::string to_yaml(const Workflow& wf);
/// The text to save: for a workflow loaded from a file (Workflow::source), that file's text with
/// only what changed rewritten, so comments, key order and number spelling (`1e-3`) survive:
/// identical text when nothing changed; a changed parameter value replaced in place; a changed
/// node's entry, a new node or link, a removed one as lines; the `editor:` section rewritten.
/// Edits it cannot place that way (a flow-style `nodes:` map, reordered nodes, a changed name)
/// give to_yaml(wf). The result is checked by parsing it again; any mismatch gives to_yaml(wf).
[[nodiscard]] std::string to_yaml_preserving(const Workflow& wf);
/// Writes to_yaml_preserving(wf) atomically (temporary file + rename).
void save_workflow(const Workflow& wf, const std::filesystem::path& file);

/// Applies "node.param=value" (from `--set`); returns a diagnostic when the node or parameter
/// is unknown or the value is invalid, and leaves the workflow unchanged then. A relative
/// input path given here is made absolute against the current directory (where the user typed
/// it), not against the workflow file.
[[nodiscard]] std::optional<Diagnostic> apply_override(Workflow& wf, const std::string& assignment,
                                                       const Registry& registry);

/// `text` with control characters and bytes that are not UTF-8 written as \xNN (valid UTF-8
/// such as "Å" is kept): safe to echo file contents into a message or a terminal.
[[nodiscard]] std::string printable(std::string_view text);

/// A loaded sub-workflow: the inner workflow and the node spec it presents outside (its exposed
/// ports with the inner ports' types; one parameter, `path`).
struct SubWorkflow {
  Workflow workflow;
  NodeSpec spec;
  std::string xxh3;  ///< of the inner file's bytes
};

/// The spec of a node instance: its sub-workflow's, else its registered type's; null when the
/// type is unknown (or a sub-workflow could not be loaded).
[[nodiscard]] const NodeSpec* node_spec(const NodeInstance& n, const Registry& registry);

/// (Re)loads the inner file of every `workflow` node of `wf` whose `path` is set (relative to
/// wf.base_dir()); returns the diagnostics (those of the inner file keep its locations and name
/// the node as "outer/inner"). load_workflow does this itself; call it after building or
/// editing a workflow in code.
[[nodiscard]] std::vector<Diagnostic> load_subworkflows(Workflow& wf, const Registry& registry);

/// True when `wf` has a `workflow` node.
[[nodiscard]] bool has_subworkflows(const Workflow& wf);

/// The workflow with every sub-workflow node replaced by its inner nodes (ids prefixed with
/// "node/", recursively), links rewired through the exposed ports, relative input paths of inner
/// nodes made absolute against their own file's folder and relative output paths put under
/// "node/", `included` listing the inner files. Throws Error when a `workflow` node has no loaded
/// sub-workflow.
[[nodiscard]] Workflow flatten(const Workflow& wf, const Registry& registry);

/// Node ids in a dependency order (inputs first); throws Error naming a cycle.
[[nodiscard]] std::vector<std::string> topological_order(const Workflow& wf);

}  // namespace gemflow
