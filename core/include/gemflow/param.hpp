#pragma once
// Parameter values and their specs: the single description that the YAML loader, the CLI
// (`gemflow nodes`, `--set`), Studio's inspector and the docs all read.
#include <cstdint>
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

  /// Parses YAML scalar text into a value of this kind (without checking limits).
  /// Returns the reason on failure ("expected a number, got 'abc'").
  [[nodiscard]] std::variant<ParamValue, std::string> parse(const std::string& text) const;
  /// Checks a value against kind, limits, choices and path extensions; nullopt when valid, else the reason
  /// ("2.5 is above the maximum 2 Å"). This is the one validation path used everywhere.
  [[nodiscard]] std::optional<std::string> check(const ParamValue& v) const;
};

/// A rule between two parameters of one node type, which the one validation path checks on the
/// values a workflow sets (defaults for the rest): workflow validation (`gemflow validate`,
/// `gemflow run` before anything runs, Studio's problems list), at the `--set` that took part, else
/// at the first of the two that the file sets; with `--set`, on the values after the overrides.
/// When `param` takes one of the values in `when` (empty:
/// any value other than its default), `other` must equal `other_value` (must = true) or must not
/// (must = false). `why` ends the message. Example, linalg.cholesky: a `rank` other than 0 needs
/// `pivoted: true`.
struct ParamRule {
  std::string param;
  std::vector<ParamValue> when;
  std::string other;
  ParamValue other_value;
  bool must = true;
  std::string why;
};

/// "rank = 3 needs 'pivoted: true' (why)" or "… cannot be used with …": the message of a broken
/// rule, for the value `value` that `param` has.
[[nodiscard]] std::string rule_message(const ParamRule& rule, const ParamValue& value);

}  // namespace gemflow
