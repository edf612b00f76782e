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
//   sweep: {dg.seed: 1..100}         # optional: `gemflow run` runs every point (gemflow/sweep.hpp)
//
// Unknown keys are errors. Relative input paths resolve against the workflow file's folder.
#include <array>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "gemflow/error.hpp"
#include "gemflow/param.hpp"
#include "gemflow/registry.hpp"

namespace gemflow {

inline constexpr int kWorkflowFormat = 1;

/// One problem found while loading or validating, with everything needed to find it.
struct Diagnostic {
  enum class Severity { Error, Warning };
  Severity severity = Severity::Error;
  SourceLocation where;
  std::string node;     ///< node id, "" when not about a node
  std::string param;    ///< parameter or port name, "" when none
  std::string message;
  std::string hint;     ///< e.g. "did you mean 'distgeom.embed'?"
  bool is_port = false; ///< `param` names a port (str() says "port 'y'")
  /// A broken parameter rule (NodeInfo::rules). `gemflow run/validate --set` checks rules on the
  /// values after the overrides only, so that an override can mend a combination in the file.
  bool rule = false;
  /// "file:line:col: error: node 'x', parameter 'y': message (did you mean 'z'?)"
  [[nodiscard]] std::string str() const;
  /// The same without the severity and the node ("file:line:col: parameter 'y': message (…)"),
  /// for a log line that names both already.
  [[nodiscard]] std::string log_str() const;
};

struct NodeInstance {
  std::string id;
  std::string type;
  int type_version = 0;  ///< version saved in the file (0: not given → current)
  /// Parameters set in the file, in file order; unset ones take the spec default.
  std::vector<std::pair<std::string, ParamValue>> params;
  std::optional<std::array<double, 2>> pos;  ///< editor position
  SourceLocation where;                               ///< of the node's key
  std::map<std::string, SourceLocation> param_where;  ///< of each parameter's value

  [[nodiscard]] const ParamValue* param(std::string_view name) const;
  void set_param(const std::string& name, ParamValue v);  ///< replaces or appends
};

struct Link {
  std::string from_node, from_port, to_node, to_port;
  SourceLocation where;
  /// "a.out -> b.in"
  [[nodiscard]] std::string str() const;
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
  std::filesystem::path file;  ///< where it was loaded from / saved to ("" if never)
  WorkflowSweep sweep;         ///< the `sweep:` section (empty: none)

  [[nodiscard]] NodeInstance* find(std::string_view id);
  [[nodiscard]] const NodeInstance* find(std::string_view id) const;
  /// Folder that relative input paths resolve against (the file's folder, else the cwd).
  [[nodiscard]] std::filesystem::path base_dir() const;
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

struct LoadResult {
  std::optional<Workflow> workflow;   ///< set when the YAML could be read into a model
  std::vector<Diagnostic> diagnostics;
  std::size_t migrated = 0;           ///< nodes brought to their type's current version
  [[nodiscard]] bool ok() const;      ///< workflow set and no Error diagnostics
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
/// Writes to_yaml(wf) atomically (temporary file + rename).
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

/// Node ids in a dependency order (inputs first); throws Error naming a cycle.
[[nodiscard]] std::vector<std::string> topological_order(const Workflow& wf);

}  // namespace gemflow
