#pragma once
// Parameter values and their specs: the single description that the YAML loader, the CLI
// (`gemflow nodes`, `--set`), Studio's inspector and the docs all read.
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

namespace gemflow {

/// Kind of a parameter, which fixes its YAML form and its editor in Studio.
enum class ParamKind {
  Bool,        ///< true/false
  Int,         ///< 64-bit integer, optional [min, max]
  Float,       ///< double, optional [min, max], unit
  String,      ///< free text
  Choice,      ///< one of `choices`
  InputPath,   ///< file read by the node; relative paths resolve against the workflow file
  OutputPath,  ///< file written by the node; relative paths resolve against the output folder
  Device,      ///< "auto", "cpu", "cuda" or "cuda:N"
};
[[nodiscard]] const char* to_string(ParamKind k) noexcept;

/// A parameter value. Int and Float params also accept an integer literal for Float.
using ParamValue = std::variant<bool, std::int64_t, double, std::string>;

/// Text form of a value as written in YAML ("true", "12", "0.5", "cholesky").
[[nodiscard]] std::string format_param(const ParamValue& v);

/// A YAML 1.1 boolean word (what yaml-cpp and PyYAML read as one): true/false, yes/no, on/off,
/// y/n, each lower-case, capitalised or upper-case; std::nullopt for anything else (1 and 0
/// included: YAML reads them as integers).
[[nodiscard]] std::optional<bool> yaml_bool(std::string_view text);

/// Declaration of one parameter.
struct ParamSpec {
  std::string name;
  ParamKind kind = ParamKind::Float;
  ParamValue default_value;
  bool required = false;             ///< no usable default: the workflow must set it
  std::optional<double> min, max;    ///< inclusive limits for Int and Float
  std::vector<std::string> choices;  ///< for Choice
  std::string unit;                  ///< "Å", "kcal/mol", "" for none
  std::string doc;
  /// For InputPath and OutputPath: the file extensions the node can read or write, lower case
  /// with the dot (".json", ".tar.gz"); matched case-insensitively against the end of the file
  /// name. Empty: any name is accepted.
  std::vector<std::string> extensions;
  /// The node's random seed (SeedParam: an Int named "seed", ≥ 0). It makes the node stochastic
  /// and the executor records its value in the node's provenance record ("seed").
  bool seed = false;
  /// For InputPath: what workflow validation (`gemflow validate`) learns from the file's content,
  /// called on a regular file that exists, with the values of the node's other parameters
  /// (`param(name)`: the workflow's value or the default; nullptr for an unknown name). Returns
  /// one line on what the node will read there ("restraint format nef (...): 841 distance, 66
  /// dihedral restraints"); throws a std::exception whose what() says why the node cannot read
  /// it, naming file:line. Empty: the content is not checked before the run. Set with
  /// PathParam::inspect.
  using Inspector = std::function<std::string(const std::string& path,
                                              const std::function<const ParamValue*(const std::string&)>& param)>;
  Inspector inspect;

  /// Parses YAML scalar text into a value of this kind (without checking limits).
  /// Returns the reason on failure ("expected a number, got 'abc'").
  [[nodiscard]] std::variant<ParamValue, std::string> parse(const std::string& text) const;
  /// Checks a value against kind, limits, choices and path extensions; nullopt when valid, else the reason
  /// ("2.5 is above the maximum 2 Å"). This is the one validation path used everywhere.
  [[nodiscard]] std::optional<std::string> check(const ParamValue& v) const;
};

/// How a comparison rule (ParamRule::compare) relates two numbers.
enum class ParamCompare { None, Less, LessEqual, Greater, GreaterEqual };

/// A rule between parameters of one node type, which the one validation path checks on the
/// values a workflow sets (defaults for the rest): workflow validation (`gemflow validate`,
/// `gemflow run` before anything runs, Studio's problems list), at the `--set` that took part, else
/// at the first of the parameters that the file sets; with `--set`, on the values after the
/// overrides. Two forms:
///
/// Equality (compare = None): when `param` takes one of the values in `when` (empty: any value
/// other than its default), `other` must equal `other_value` (must = true) or must not
/// (must = false). Example, linalg.cholesky: a `rank` other than 0 needs `pivoted: true`.
///
/// Comparison (compare set): the number `param` must be `compare` the number `other` (another Int
/// or Float parameter) or, with `other` empty, `other_value`. It applies only when `if_param`
/// (empty: always) takes one of the values in `when`, and not when `param` is below `unless_below`
/// (a sentinel such as "negative: the default"). Example, distgeom.bounds_from_structure:
///   {.param = "tolerance", .compare = ParamCompare::Less, .other = "cutoff",
///    .if_param = "unlisted_lower", .when = {std::string("cutoff")}, .why = "..."}
///
/// Relation (holds set): what the two forms above cannot state, such as a value that must follow
/// from another by a formula. `holds(value_of)` is true when the values keep the rule; `param`
/// and, when not empty, `other` name the parameters involved (the message names both, with
/// their values); `why` states the rule in words ("corner_angle must be 0 or 180 − 360/corners").
/// Example, circlepack.pack: a corner_angle other than 0 must be the one that `corners` implies.
///
/// `why` ends the message. A node's execute() may check the same again (tests set parameters
/// without validation), but the rule is what a user meets first.
struct ParamRule {
  std::string param;
  std::vector<ParamValue> when;
  std::string other;
  ParamValue other_value;
  bool must = true;
  std::string why;
  ParamCompare compare = ParamCompare::None;
  std::string if_param;
  std::optional<double> unless_below;
  std::function<bool(const std::function<const ParamValue&(const std::string&)>& value_of)> holds;
};

/// The message of a broken rule: "rank = 3 needs 'pivoted: true' (why)", "… cannot be used with
/// …", "tolerance = 6.0 must be below cutoff = 5.0 (why)". `value_of(name)`: the value a parameter
/// has.
[[nodiscard]] std::string rule_message(const ParamRule& rule,
                                       const std::function<const ParamValue&(const std::string&)>& value_of);
/// The same for an equality rule, given the value that `param` has.
[[nodiscard]] std::string rule_message(const ParamRule& rule, const ParamValue& value);

/// The number a numeric parameter value holds (an Int or a Float), else std::nullopt.
[[nodiscard]] std::optional<double> param_number(const ParamValue& v);

}  // namespace gemflow
