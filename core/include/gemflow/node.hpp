#pragma once
// Nodes: the unit of work in a workflow. A node type declares each port and parameter once,
// as a typed member; the registry builds the NodeSpec (the schema read by the YAML loader,
// validation, `gemflow nodes`, Studio's inspector and the docs) from those declarations.
//
//   class Smooth final : public gemflow::Node {
//    public:
//     static gemflow::NodeInfo info() {
//       return {.id = "distgeom.triangle_smoothing", .version = 1, .title = "Triangle smoothing",
//               .category = "Distance geometry", .doc = "..."};
//     }
//     gemflow::Input<gemflow::DistanceBounds> bounds{this, "bounds", "Bounds to smooth"};
//     gemflow::Output<gemflow::DistanceBounds> smoothed{this, "smoothed", "Triangle-closed bounds"};
//     gemflow::Param<double> tol{this, "tolerance", 1e-9, {.min = 0, .unit = "Å", .doc = "..."}};
//     void execute(gemflow::NodeContext& ctx) override;
//   };
//
// A fresh instance is created for every execution; parameters and inputs are set before
// execute() is called and outputs read after it returns.
#include <charconv>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <initializer_list>
#include <iosfwd>
#include <limits>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

#include "gemflow/data.hpp"
#include "gemflow/device.hpp"
#include "gemflow/error.hpp"
#include "gemflow/param.hpp"

namespace gemflow {

struct MigrationTarget;

/// One step of a node type's migration (NodeInfo::migrations): turns a node saved at version
/// `from` into one of version `from + 1`, so that workflows saved before a parameter or port was
/// renamed, removed or changed its unit still load. Loading applies the steps in order from the
/// saved version to the current one, with one warning per step naming the node and `note`;
/// `gemflow upgrade W.yaml` writes the result back. Make steps with the gemflow::migrate helpers
/// below, or give `apply` yourself.
struct Migration {
  int from = 0;
  std::string note;  ///< what changed, e.g. "parameter 'scale_factor' is now 'scale'"
  std::function<void(MigrationTarget&)> apply;
};

/// Identity and documentation of a node type.
struct NodeInfo {
  std::string id;        ///< namespaced, "plugin.name"
  int version = 1;       ///< bumped when parameters or ports change meaning
  std::string title;     ///< shown in Studio's palette
  std::string category;  ///< palette group
  /// A brief: what the node does and how, in a sentence or a short paragraph. Inputs, outputs and
  /// parameters are documented on their declarations; the fields below hold the rest, each shown
  /// under its own heading by `gemflow nodes ID` and Studio's help (do not restate them in `doc`).
  std::string doc;
  std::string errors;       ///< when it fails or warns, and what the message names
  std::string memory;       ///< host and device memory, as a formula of the input sizes
  std::string determinism;  ///< what gives the same result (same seed, device, library version...)
  std::string references;   ///< the methods' sources (papers, libraries)
  /// Uses a seed; same seed, same device → same result. Declaring a SeedParam sets it; a node
  /// that sets it without a SeedParam is refused at registration.
  bool stochastic = false;
  /// Rules between parameters (ParamRule), checked before a workflow runs.
  std::vector<ParamRule> rules;
  /// Steps from older versions (`from` = 1 … version − 1, several per version allowed, applied
  /// in order): see Migration.
  std::vector<Migration> migrations;
};

/// Ready-made migration steps (implemented in core/src/migrate.cpp). Each applies to a node
/// saved at version `from`; a step whose parameter or port the node does not set does nothing.
namespace migrate {
/// Parameter `old_name` renamed `new_name`.
[[nodiscard]] Migration rename_param(int from, std::string old_name, std::string new_name);
/// Parameter `name` removed (its value dropped).
[[nodiscard]] Migration remove_param(int from, std::string name);
/// The value `old_value` of choice parameter `name` renamed `new_value`.
[[nodiscard]] Migration rename_choice(int from, std::string name, std::string old_value, std::string new_value);
/// A number's unit changed: the saved value is multiplied by `factor` (`why`: "nm → Å").
[[nodiscard]] Migration scale_param(int from, std::string name, double factor, std::string why);
/// The default of `name` changed: a node that did not set it gets `old_default` written in, so
/// that it keeps computing what it did.
[[nodiscard]] Migration keep_old_default(int from, std::string name, ParamValue old_default);
/// Input (or output) port `old_name` renamed `new_name`: the workflow's links follow.
[[nodiscard]] Migration rename_input(int from, std::string old_name, std::string new_name);
[[nodiscard]] Migration rename_output(int from, std::string old_name, std::string new_name);
}  // namespace migrate

struct PortSpec {
  std::string name;
  std::string type;  ///< DataType<T>::name
  bool optional = false;
  std::string doc;
};

/// The full, generated description of a node type.
struct NodeSpec {
  NodeInfo info;
  std::vector<PortSpec> inputs;
  std::vector<PortSpec> outputs;
  std::vector<ParamSpec> params;

  [[nodiscard]] const PortSpec* input(std::string_view name) const;
  [[nodiscard]] const PortSpec* output(std::string_view name) const;
  [[nodiscard]] const ParamSpec* param(std::string_view name) const;
  /// The rules of info.rules that `value_of` breaks (value_of(name): the value a workflow gives,
  /// or the default), in declaration order.
  [[nodiscard]] std::vector<const ParamRule*> broken_rules(
      const std::function<const ParamValue&(const std::string&)>& value_of) const;
};

enum class LogLevel { Debug, Info, Warning, Error };

/// What a running node may use: progress, cancellation, logging, its device, output files.
/// Implemented by the executor; thread-safe for the node's own use.
class NodeContext {
 public:
  virtual ~NodeContext() = default;
  [[nodiscard]] virtual const std::string& node_id() const = 0;
  /// Reports progress in [0, 1] with an optional short message. Cheap; call it freely.
  virtual void progress(double fraction, std::string_view message = {}) = 0;
  /// True once the run was cancelled. Check at least every ~100 ms of work.
  [[nodiscard]] virtual bool cancelled() const = 0;
  void throw_if_cancelled() const {
    if (cancelled()) throw Cancelled();
  }
  virtual void log(LogLevel level, std::string_view message) = 0;
  void info(std::string_view m) { log(LogLevel::Info, m); }
  void warn(std::string_view m) { log(LogLevel::Warning, m); }
  /// The run's output folder (created before the run starts).
  [[nodiscard]] virtual const std::filesystem::path& output_dir() const = 0;
  /// Records an input file read by this node (hashed into provenance; never overwritten).
  virtual void add_input_file(const std::filesystem::path& file) = 0;
  /// Writes `file` atomically: `write` fills a temporary file in the same folder, which is
  /// renamed over `file` only when `write` returns. Refuses (InputError) to overwrite a file
  /// that any node of the run read. Records the file in provenance.
  virtual void write_file(const std::filesystem::path& file,
                          const std::function<void(const std::filesystem::path& tmp)>& write) = 0;
  /// The same through a stream that the SDK owns (prefer it): after `write` returns, the stream
  /// is flushed, checked and synced to disk before the rename, so that a full disk or an I/O
  /// error fails the node with the file and the system's reason ("cannot write report.json: No
  /// space left on device") and an existing file is left as it was.
  void write_file(const std::filesystem::path& file, const std::function<void(std::ostream& out)>& write);
  /// Adds a key/value to this node's provenance record (e.g. "device_used", "iterations").
  virtual void record(std::string_view key, const ParamValue& value) = 0;
  /// Device override for the whole run ("" when none), applied by Param<Device>.
  [[nodiscard]] virtual const std::string& device_override() const = 0;
  /// Adds a host↔device copy the node made itself (an upload of its inputs, a download of a
  /// result) to its provenance record ("transfers"); the lazy host copies of device-resident
  /// inputs are counted by the SDK. Thread-safe. The default records nothing.
  virtual void record_transfer(Transfer direction, std::size_t bytes, double seconds) {
    (void)direction, (void)bytes, (void)seconds;
  }
  /// Publishes an intermediate value of output `port` while the node still runs (a render
  /// refining pass by pass), for Studio to show; headless runs ignore it. The value must not be
  /// modified afterwards (pass a fresh Value per pass). The executor forwards at most about ten
  /// previews a second per node and drops the rest, so call it after each pass without
  /// throttling. The default ignores it.
  virtual void preview(std::string_view port, Value value) { (void)port, (void)value; }
  /// Whether anyone shows this run's previews (Studio): false in a headless run, where
  /// preview() drops them. A node whose preview costs real work (a tone-mapped image, a layout)
  /// makes it only when this is true. The default is false.
  [[nodiscard]] virtual bool previews_wanted() const { return false; }
};

class Node;

namespace detail {
struct InputSlot {
  PortSpec spec;
  Value value;
};
struct OutputSlot {
  PortSpec spec;
  Value value;
};
struct ParamSlot {
  ParamSpec spec;
  ParamValue value;
};
}  // namespace detail

/// Base class of every node type. See the file comment for the declaration pattern.
class Node {
 public:
  Node() = default;
  Node(const Node&) = delete;
  Node& operator=(const Node&) = delete;
  virtual ~Node() = default;

  /// Does the work. Throw gemflow::Error (or any exception) to fail the node.
  virtual void execute(NodeContext& ctx) = 0;

  // ---- used by the framework ----
  [[nodiscard]] std::vector<PortSpec> input_specs() const;
  [[nodiscard]] std::vector<PortSpec> output_specs() const;
  [[nodiscard]] std::vector<ParamSpec> param_specs() const;
  /// Sets an input value; throws Error when the port is unknown or the type differs.
  void set_input(std::string_view port, Value v);
  /// Sets a parameter (the executor sets values checked against the spec); throws Error when it
  /// is unknown or the value is of another kind (an integer for a float is converted).
  void set_param(std::string_view name, ParamValue v);
  [[nodiscard]] const Value& output(std::string_view port) const;
  /// Where Input<T>::get() counts the download of a device-resident input (nullptr: nowhere).
  void set_transfer_log(TransferLog* log) noexcept { transfers_ = log; }

 protected:
  template <class T>
  friend class Input;
  template <class T>
  friend class Output;
  template <class T>
  friend class Param;
  friend class DeviceParam;
  friend class SeedParam;
  friend class PathParam;
  template <class E>
  friend class Choice;
  std::size_t add_input(PortSpec s);
  std::size_t add_output(PortSpec s);
  std::size_t add_param(ParamSpec s);
  std::vector<detail::InputSlot> inputs_;
  std::vector<detail::OutputSlot> outputs_;
  std::vector<detail::ParamSlot> params_;
  TransferLog* transfers_ = nullptr;
};

/// Port flags.
enum class PortUse { Required, Optional };

/// An input port carrying DataType<T>.
template <class T>
class Input {
 public:
  Input(Node* owner, std::string name, std::string doc, PortUse use = PortUse::Required)
      : owner_(owner),
        slot_(owner->add_input(
            {std::move(name), std::string(DataType<T>::name), use == PortUse::Optional, std::move(doc)})) {}
  /// True when a value was given (always true for required ports at execute time).
  [[nodiscard]] bool connected() const { return !owner_->inputs_[slot_].value.empty(); }
  /// The value; throws Error for an unconnected port. A device-resident value is downloaded
  /// the first time its host copy is asked for (by any consumer), counted in this node's
  /// provenance record.
  [[nodiscard]] std::shared_ptr<const T> get() const {
    return owner_->inputs_[slot_].value.template as<T>(owner_->transfers_);
  }
  const T& operator*() const { return *get(); }
  /// The value's device copy as the plugin's class D (a DeviceCopyOf<T>), or nullptr: no copy,
  /// or one of another class. A GPU node reads it instead of get() to skip the host.
  template <class D>
  [[nodiscard]] std::shared_ptr<const D> device() const {
    return owner_->inputs_[slot_].value.template device_copy_as<D>();
  }

 private:
  Node* owner_;
  std::size_t slot_;
};

/// An output port carrying DataType<T>.
template <class T>
class Output {
 public:
  Output(Node* owner, std::string name, std::string doc)
      : owner_(owner),
        slot_(owner->add_output({std::move(name), std::string(DataType<T>::name), false, std::move(doc)})) {}
  void set(std::shared_ptr<const T> v) { owner_->outputs_[slot_].value = Value::of<T>(std::move(v)); }
  void set(T v) { set(std::make_shared<const T>(std::move(v))); }
  /// A device-resident result (see gemflow/device_copy.hpp: complete when execute() returns);
  /// `host`: its host copy when the node has one already.
  void set_device(std::shared_ptr<const DeviceCopyOf<T>> copy, std::shared_ptr<const T> host = nullptr) {
    owner_->outputs_[slot_].value = Value::on_device<T>(std::move(copy), std::move(host));
  }

 private:
  Node* owner_;
  std::size_t slot_;
};

/// Options of a parameter declaration (designated initialisers).
struct ParamOptions {
  std::optional<double> min, max;
  std::string unit;
  std::string doc;
};

namespace detail {
template <class T>
constexpr ParamKind kind_of() {
  if constexpr (std::is_same_v<T, bool>) return ParamKind::Bool;
  else if constexpr (std::is_integral_v<T>) return ParamKind::Int;
  else if constexpr (std::is_floating_point_v<T>) return ParamKind::Float;
  else return ParamKind::String;
}
}  // namespace detail

/// A parameter of type bool, an integer type, double/float or std::string.
template <class T>
class Param {
 public:
  Param(Node* owner, std::string name, T default_value, ParamOptions o = {}) : owner_(owner) {
    ParamSpec s;
    s.name = std::move(name);
    s.kind = detail::kind_of<T>();
    s.default_value = to_value(default_value);
    s.min = o.min;
    s.max = o.max;
    if constexpr (std::is_integral_v<T> && !std::is_same_v<T, bool>) limit_to_type(s);
    s.unit = std::move(o.unit);
    s.doc = std::move(o.doc);
    slot_ = owner->add_param(std::move(s));
  }
  [[nodiscard]] T value() const {
    const ParamValue& v = owner_->params_[slot_].value;
    if constexpr (std::is_same_v<T, bool>) return std::get<bool>(v);
    else if constexpr (std::is_integral_v<T>) return static_cast<T>(std::get<std::int64_t>(v));
    else if constexpr (std::is_floating_point_v<T>)
      return static_cast<T>(std::holds_alternative<double>(v) ? std::get<double>(v)
                                                              : static_cast<double>(std::get<std::int64_t>(v)));
    else return std::get<std::string>(v);
  }
  T operator*() const { return value(); }

 private:
  // An integer type narrower than the YAML's 64 bits implies its own limits: an unsigned
  // parameter refuses -1 at validation instead of running with 2⁶⁴ − 1. Declared limits outside
  // the type's range are a declaration error.
  static void limit_to_type(ParamSpec& s) {
    constexpr double lo = static_cast<double>(std::numeric_limits<T>::min());
    constexpr double hi = static_cast<double>(std::numeric_limits<T>::max());
    constexpr bool narrower_below =
        std::cmp_greater(std::numeric_limits<T>::min(), std::numeric_limits<std::int64_t>::min());
    constexpr bool narrower_above =
        std::cmp_less(std::numeric_limits<T>::max(), std::numeric_limits<std::int64_t>::max());
    if constexpr (narrower_below) {
      if (s.min && *s.min < lo)
        throw Error("parameter '" + s.name + "': minimum " + format_param(*s.min) + " is below " + format_param(lo) +
                    ", the least value of its integer type");
      if (!s.min) s.min = lo;
    }
    if constexpr (narrower_above) {
      if (s.max && *s.max > hi)
        throw Error("parameter '" + s.name + "': maximum " + format_param(*s.max) + " is above " + format_param(hi) +
                    ", the largest value of its integer type");
      if (!s.max) s.max = hi;
    }
  }
  static ParamValue to_value(const T& v) {
    if constexpr (std::is_same_v<T, bool>) return v;
    else if constexpr (std::is_integral_v<T>) return static_cast<std::int64_t>(v);
    else if constexpr (std::is_same_v<T, float>) {
      // the float's shortest decimal as a double: 0.1f is shown and saved as 0.1, not as
      // 0.10000000149011612 (break-test); it reads back as the same float
      char buf[32];
      const auto end = std::to_chars(buf, buf + sizeof buf, v).ptr;
      double d = v;
      std::from_chars(buf, end, d);
      return d;
    } else if constexpr (std::is_floating_point_v<T>) return static_cast<double>(v);
    else return std::string(v);
  }
  Node* owner_;
  std::size_t slot_ = 0;
};

/// A file path: required (no default), defaulted, or optional (PortUse::Optional: may be left
/// empty, and value() is then the empty path). Input paths resolve against the workflow file's
/// folder, output paths against the run's output folder; value() is the resolved absolute path.
/// A given input path takes part in the node's cache key by the file's content and is listed in
/// the run's provenance, like any InputPath. `extensions` (lower case, with the dot: {".json",
/// ".csv"}) lists the file types the node reads or writes; validation refuses other names before
/// anything runs. Empty: any name.
class PathParam {
 public:
  enum class Mode { Read, Write };
  PathParam(Node* owner, std::string name, Mode mode, std::string doc, std::string default_value = {});
  PathParam(Node* owner, std::string name, Mode mode, std::string doc, std::string default_value,
            std::vector<std::string> extensions);
  /// An optional path (`use` = PortUse::Optional: empty by default, not required) or a required
  /// one (PortUse::Required), with no default.
  PathParam(Node* owner, std::string name, Mode mode, std::string doc, PortUse use,
            std::vector<std::string> extensions = {});
  /// False when an optional path was left empty.
  [[nodiscard]] bool given() const;
  [[nodiscard]] std::filesystem::path value() const;
  std::filesystem::path operator*() const { return value(); }
  /// For Mode::Read: the content check `gemflow validate` runs on the file (ParamSpec::inspect).
  void inspect(ParamSpec::Inspector check);

 private:
  Node* owner_;
  std::size_t slot_ = 0;
};

/// A choice among named enumerators: the YAML holds the name, the code gets the enum.
///   Choice<Method> method{this, "method", Method::Cholesky,
///                         {{Method::Cholesky, "cholesky"}, {Method::Eigen, "eigen"}}, {.doc = "..."}};
template <class E>
class Choice {
 public:
  Choice(Node* owner, std::string name, E default_value, std::initializer_list<std::pair<E, const char*>> names,
         ParamOptions o = {})
      : owner_(owner), names_(names) {
    ParamSpec s;
    s.name = std::move(name);
    s.kind = ParamKind::Choice;
    for (auto& [e, n] : names_) {
      s.choices.emplace_back(n);
      if (e == default_value) s.default_value = std::string(n);
    }
    s.doc = std::move(o.doc);
    s.unit = std::move(o.unit);
    slot_ = owner->add_param(std::move(s));
  }
  [[nodiscard]] E value() const {
    const auto& text = std::get<std::string>(owner_->params_[slot_].value);
    for (auto& [e, n] : names_)
      if (text == n) return e;
    throw Error("invalid choice '" + text + "'");
  }
  E operator*() const { return value(); }

 private:
  Node* owner_;
  std::vector<std::pair<E, const char*>> names_;
  std::size_t slot_ = 0;
};

/// The standard `device` parameter: auto | cpu | cuda | cuda:N. `resolve(ctx)` applies the
/// run's --device override, resolves it (DeviceError when a requested CUDA device is absent),
/// logs the choice for `auto` and records "device_used" in provenance.
class DeviceParam {
 public:
  explicit DeviceParam(Node* owner, std::string default_value = "auto");
  [[nodiscard]] std::string requested() const;
  [[nodiscard]] Device resolve(NodeContext& ctx) const;

 private:
  Node* owner_;
  std::size_t slot_ = 0;
};

/// The standard `seed` parameter of a stochastic node: an integer ≥ 0 (default 1) that a
/// workflow sets like any parameter. Declaring it makes the node stochastic (NodeSpec's
/// info.stochastic), and the executor records its value in the node's provenance record
/// ("seed"), so the node records nothing itself. The same seed on the same device must give the
/// same result.
///
///   SeedParam seed{this};                                   // "Random seed", default 1
///   SeedParam seed{this, "Metrization seed of trial 0"};
///   ... o.seed = seed.value();
class SeedParam {
 public:
  explicit SeedParam(Node* owner,
                     std::string doc = "Random seed: the same seed on the same device gives the same result",
                     std::uint64_t default_value = 1);
  [[nodiscard]] std::uint64_t value() const;
  std::uint64_t operator*() const { return value(); }

 private:
  Node* owner_;
  std::size_t slot_ = 0;
};

/// A set of parameters that several node types declare together, as one member. The group is a
/// plain class whose members are parameters declared on the owning node; `name()` applies the
/// renames a node asks for, so that a node whose YAML already used other names keeps them:
///
///   struct RefineParams : gemflow::ParamGroup {
///     explicit RefineParams(gemflow::Node* n, Renames r = {})
///         : ParamGroup(std::move(r)),
///           max_iterations{n, name("max_iterations"), 3000, {.min = 1, .doc = "..."}},
///           w_chiral{n, name("w_chiral"), 0.1, {.min = 0, .doc = "..."}} {
///       done();
///     }
///     gemflow::Param<std::int64_t> max_iterations;
///     gemflow::Param<double> w_chiral;
///   };
///   RefineParams refine{this};                              // max_iterations, w_chiral
///   MetrizeParams metrize{this, {{"method", "metrize"}}};   // its 'method' is 'metrize' here
///
/// The parameters are those of the node (the spec lists them in declaration order); a group adds
/// no prefix of its own.
class ParamGroup {
 public:
  /// {group's name, name in this node}
  using Renames = std::vector<std::pair<std::string, std::string>>;

 protected:
  explicit ParamGroup(Renames renames = {}) : renames_(std::move(renames)), used_(renames_.size(), false) {}
  /// The name of the group's parameter `name` in this node.
  [[nodiscard]] std::string name(const std::string& name) {
    for (std::size_t i = 0; i < renames_.size(); ++i)
      if (renames_[i].first == name) {
        used_[i] = true;
        return renames_[i].second;
      }
    return name;
  }
  /// Call at the end of the group's constructor: a rename of a parameter that the group does not
  /// have is a declaration error (Error; the registry names the node type).
  void done() const {
    for (std::size_t i = 0; i < renames_.size(); ++i)
      if (!used_[i])
        throw Error("parameter group: a rename names '" + renames_[i].first +
                    "', which is not a parameter of the group");
  }

 private:
  Renames renames_;
  std::vector<bool> used_;
};

}  // namespace gemflow
