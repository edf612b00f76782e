#pragma once
// Parameter sweeps: many runs of one workflow, each with other values of some parameters.
//
//   gemflow run W.yaml --sweep dg.seed=1..100 --sweep bounds.cutoff=4.0,5.0
//
// The model behind `gemflow run --sweep`, the workflow's `sweep:` section (WorkflowSweep),
// `--shard`, and `gemflow sweep status|collect|submit`: the value syntax, the checks made before
// anything runs, the expansion into points, each point's stable folder name, the shard a point
// belongs to, and the records a sweep folder holds. See docs/scale-out.md.
//
// Value syntax (one parameter, `--sweep node.param=VALUES` or `node.param: VALUES` in `sweep:`):
//   a,b,c          a list (a value with a comma in it: write it as \,)
//   A..B           the integers A to B, both included (Int and Float parameters)
//   A:B:S          A, A+S, A+2S, ... up to B included (S may be negative; Int and Float)
//   A:B#N          N values evenly spaced from A to B, both ends included (Float; Int when
//                  every value is an integer)
//   @file.txt      one value a line (blank lines and lines starting with '#' skipped); relative to
//                  the current folder for --sweep, to the workflow's folder in `sweep:`
// Ranges are only read for Int and Float parameters: elsewhere "a..b" or "C:/x" is one value.
// Float values of ranges are rounded to 12 significant digits (0:1:0.1 gives 0.3, not
// 0.30000000000000004), so that names and keys are stable.
//
// Points: every combination of the values (cartesian; the first parameter varies slowest, the
// last fastest), or with zip the k-th value of every parameter together (all of one length).
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "gemflow/param.hpp"
#include "gemflow/registry.hpp"
#include "gemflow/workflow.hpp"

namespace gemflow {

/// A sweep of more points than this is refused unless forced (`--force`).
inline constexpr std::size_t kSweepPointLimit = 10'000;
/// No sweep may have more points than this, forced or not (each point is a folder).
inline constexpr std::size_t kSweepPointCeiling = 10'000'000;

/// One swept parameter and its values, in order (checked against the parameter's spec).
struct SweepAxis {
  std::string node, param;
  std::vector<ParamValue> values;
  SourceLocation where;  ///< "--sweep node.param=..." or the `sweep:` entry's file:line
  [[nodiscard]] std::string target() const { return node + "." + param; }
};

/// One run of the sweep.
struct SweepPoint {
  std::size_t index = 0;           ///< position in the sweep's order (0-based)
  std::vector<ParamValue> values;  ///< one per axis, in axis order
  std::string name;                ///< folder name (sweep_point_name)
};

struct Sweep {
  std::vector<SweepAxis> axes;
  bool zip = false;
  std::vector<SweepPoint> points;
};

/// Reads the value syntax above for a parameter of kind `spec`: parsed (ParamSpec::parse) and
/// checked (ParamSpec::check, so a value outside the limits is named with the limit). Returns the
/// values or the reason ("empty range 5..1: the first is above the last", "-1 is below the
/// minimum 0"). More than `max_values` values is refused before they are made. `@file` paths
/// relative to `base_dir`.
[[nodiscard]] std::variant<std::vector<ParamValue>, std::string> parse_sweep_values(
    std::string_view text, const ParamSpec& spec, const std::filesystem::path& base_dir,
    std::size_t max_values = kSweepPointCeiling);

/// One axis from "node.param=VALUES" (`--sweep`; `@file` relative to the current folder), checked
/// against `wf`: the node exists, its type has the parameter, every value is valid. The
/// diagnostic names "--sweep ..." as its place, the node and the parameter, with a nearest-name
/// hint.
[[nodiscard]] std::variant<SweepAxis, Diagnostic> parse_sweep_arg(const std::string& assignment, const Workflow& wf,
                                                                  const Registry& registry);

/// The axes of a workflow's `sweep:` section, checked as parse_sweep_arg does, with the file and
/// line of each entry. Every problem is returned (empty when all are valid).
[[nodiscard]] std::vector<Diagnostic> sweep_axes_of(const Workflow& wf, const Registry& registry,
                                                    std::vector<SweepAxis>& axes);

/// The points of `axes`. Errors (nothing expanded): no axes, an axis swept twice, zip of axes
/// of different lengths, more points than kSweepPointLimit (unless `force`) or than
/// kSweepPointCeiling. Counted before anything is made.
[[nodiscard]] std::variant<Sweep, Diagnostic> expand_sweep(std::vector<SweepAxis> axes, bool zip, bool force);

/// A point's folder name from its values: "seed=7", "cutoff=4.5__seed=7" (the parameter's name
/// alone when no other axis has that name, else node.param; axes joined by "__"). Stable: the
/// same values give the same name whatever their position in the sweep. File-system safe: only
/// [A-Za-z0-9._+=-]; a value with other characters (a path, text) or longer than 40 is shortened
/// and followed by "~" and 8 hex digits of its xxh3, so that two values never share a name. A name
/// over 200 bytes is cut and ends with the hash of the whole.
[[nodiscard]] std::string sweep_point_name(const std::vector<SweepAxis>& axes, const std::vector<ParamValue>& values);

/// Sets the point's values in `wf` (a copy of the swept workflow), and clears its `sweep:`.
void apply_sweep_point(Workflow& wf, const Sweep& sweep, const SweepPoint& point);

/// xxh3 (hex) of the workflow's canonical text (to_yaml): a point whose record has another hash
/// was run with other values and runs again.
/// `extra`: what else changes the results (the run's --device, --until).
[[nodiscard]] std::string sweep_workflow_hash(const Workflow& wf, std::string_view extra = {});

/// The node ids whose result depends on a swept value: the swept nodes and everything downstream.
/// The others compute the same for every point (the sweep shares them).
[[nodiscard]] std::vector<std::string> swept_nodes(const Workflow& wf, const std::vector<SweepAxis>& axes);

// ---- Shards ---------------------------------------------------------------------------------

/// Part `index` (0-based) of `count`: the points whose index % count == index.
struct Shard {
  std::size_t index = 0, count = 1;
  std::string source;  ///< "--shard", "SLURM_ARRAY_TASK_ID", "OMPI_COMM_WORLD_RANK", "PMI_RANK"
  [[nodiscard]] bool contains(std::size_t point_index) const noexcept { return point_index % count == index; }
  [[nodiscard]] std::string str() const;  ///< "2/8"
};

/// "i/N" (0 <= i < N); nullopt with the reason in `why`.
[[nodiscard]] std::optional<Shard> parse_shard(std::string_view text, std::string* why);

/// The shard given by the environment, if any, first found of: a Slurm job array
/// (SLURM_ARRAY_TASK_ID - SLURM_ARRAY_TASK_MIN of SLURM_ARRAY_TASK_COUNT), Open MPI
/// (OMPI_COMM_WORLD_RANK / OMPI_COMM_WORLD_SIZE), MPICH and Intel MPI (PMI_RANK / PMI_SIZE).
/// nullopt when none is set (one process runs everything); an error in `why` when the variables
/// are set but make no shard (a rank not below the size). `env` is getenv by default.
[[nodiscard]] std::optional<Shard> shard_from_environment(std::string* why,
                                                          const std::function<const char*(const char*)>& env = {});

// ---- Records of a sweep folder ----------------------------------------------------------------
//
//   OUT/sweep-plan.json        the sweep: workflow, axes, every point (written before any runs)
//   OUT/sweep.json, sweep.csv  the summary table, rewritten atomically as points finish
//   OUT/shards/shard-I-of-N.json  the table of one shard's points
//   OUT/points/NAME/           a point's outputs, provenance.json and point.json (its record)

/// The state of a point as read from its folder.
enum class PointState { Pending, Running, Done, Failed, Interrupted, Cancelled };
[[nodiscard]] const char* to_string(PointState s) noexcept;
[[nodiscard]] std::optional<PointState> point_state_from(std::string_view text);

/// A point's record (points/NAME/point.json), also a row of the summary table.
struct PointRecord {
  std::string name;
  std::size_t index = 0;
  std::vector<std::pair<std::string, std::string>> values;  ///< (node.param, value text), axis order
  PointState state = PointState::Pending;
  double seconds = 0.0;
  std::string error;  ///< the first failed node's message
  std::string host;
  std::string shard;          ///< "2/8", "" when not sharded
  std::string finished;       ///< UTC time
  std::string workflow_hash;  ///< xxh3 of the point's effective workflow text
  /// Key report numbers: numeric outputs of report tables and numbers of report*.json files
  /// the point wrote (sweep_report_numbers).
  std::map<std::string, double> numbers;
};

[[nodiscard]] std::string point_record_json(const PointRecord& r);
/// nullopt when the text is not a point record.
[[nodiscard]] std::optional<PointRecord> parse_point_record(const std::string& text);

/// The summary table of `records` (in their order) as JSON {"columns": [...], "points": [...]} and
/// as CSV: point, state, one column per axis, seconds, one column per number (sorted), error.
[[nodiscard]] std::string sweep_table_json(const std::vector<std::string>& axes,
                                           const std::vector<PointRecord>& records);
[[nodiscard]] std::string sweep_table_csv(const std::vector<std::string>& axes,
                                          const std::vector<PointRecord>& records);
/// The rows of a table written by sweep_table_json; nullopt when the text is not one.
[[nodiscard]] std::optional<std::vector<PointRecord>> parse_sweep_table(const std::string& text);

/// The key report numbers of a finished point: for each output Table of a port named "report",
/// its numeric rows when it has columns metric and value ("NODE.METRIC"), else the numeric cells
/// of its first row ("NODE.COLUMN"); and the numbers of each JSON file named report*.json in
/// `files` (nested keys joined by '.', a {"columns", "rows"} table's first row), named by key
/// (prefixed with the file's stem when several such files exist). Non-finite numbers are left out.
[[nodiscard]] std::map<std::string, double> sweep_report_numbers(
    const std::map<std::string, std::map<std::string, Value>>& outputs_by_node,
    const std::vector<std::filesystem::path>& files);

/// The plan of a sweep folder (sweep-plan.json) as text, and read back.
struct SweepPlan {
  std::filesystem::path workflow;  ///< absolute
  std::vector<std::string> axes;   ///< node.param
  bool zip = false;
  std::vector<std::pair<std::string, std::vector<std::pair<std::string, std::string>>>> points;  ///< name, values
};
[[nodiscard]] std::string sweep_plan_json(const std::filesystem::path& workflow, const Sweep& sweep);
[[nodiscard]] std::optional<SweepPlan> parse_sweep_plan(const std::string& text);

}  // namespace gemflow
