#pragma once
// The registry of node types and data types known to a host (built-in plus plugins).
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "gemflow/data.hpp"
#include "gemflow/node.hpp"
#include "gemflow/serialize.hpp"

namespace gemflow {

struct TypeInfo {
  std::string name;
  std::string doc;
  std::string origin;  ///< plugin file that registered it first, or "core"
  TypeLayout layout;   ///< what another registration of the name must match (type_layout<T>())
  /// The binary encoding of the disk cache (Serial<T>, gemflow/serialize.hpp): its version, and
  /// save/load of a host value of this type. Empty when the type has none (never cached on disk).
  std::uint32_t serial_version = 0;
  std::function<void(const Value&, BinaryWriter&)> save;
  std::function<Value(BinaryReader&)> load;
};

struct NodeEntry {
  NodeSpec spec;
  std::function<std::unique_ptr<Node>()> create;
  std::string origin;  ///< plugin file that registered it, or "core"
};

/// Node types concept: a Node subclass with `static NodeInfo info()` and a default constructor.
template <class N>
concept NodeType = std::is_base_of_v<Node, N> && std::is_default_constructible_v<N> && requires {
  { N::info() } -> std::convertible_to<NodeInfo>;
};

class Registry {
 public:
  Registry();  ///< registers the SDK's standard data types

  /// Registers a node type. Throws Error when the id is already registered (naming both
  /// origins), when a port type is not registered, or when a spec is malformed.
  void add_node(NodeEntry entry);
  /// Registers node type N from a prototype instance. A constructor that throws becomes an Error
  /// that names the node type.
  template <NodeType N>
  void add_node(std::string origin) {
    std::unique_ptr<N> proto;
    try {
      proto = std::make_unique<N>();
    } catch (const std::exception& e) {
      throw Error("node type '" + N::info().id + "': its constructor threw: " + e.what());
    } catch (...) {
      throw Error("node type '" + N::info().id + "': its constructor threw a non-standard exception");
    }
    add_node(NodeEntry{NodeSpec{N::info(), proto->input_specs(), proto->output_specs(), proto->param_specs()},
                       [] { return std::unique_ptr<Node>(std::make_unique<N>()); }, std::move(origin)});
  }
  /// Registers a data type. A name registered again with the same layout is the same type (a
  /// shared header compiled into several plugins, or an SDK type a plugin registers too): a
  /// no-op that keeps the first origin. The name registered with another layout throws Error
  /// naming both origins and both layouts.
  void add_type(TypeInfo info);
  template <class T>
  void add_type(std::string origin) {
    TypeInfo info{std::string(DataType<T>::name), std::string(DataType<T>::doc), std::move(origin), type_layout<T>()};
    if constexpr (SerialType<T>) {
      info.serial_version = Serial<T>::version;
      info.save = [](const Value& v, BinaryWriter& w) { Serial<T>::write(w, *v.as<T>()); };
      info.load = [](BinaryReader& r) { return Value::make<T>(Serial<T>::read(r)); };
    }
    add_type(std::move(info));
  }

  [[nodiscard]] const NodeEntry* find_node(std::string_view id) const;
  [[nodiscard]] const TypeInfo* find_type(std::string_view name) const;
  [[nodiscard]] std::vector<const NodeEntry*> nodes() const;  ///< sorted by id
  [[nodiscard]] std::vector<std::string> node_ids() const;
  [[nodiscard]] std::vector<const TypeInfo*> types() const;

 private:
  std::map<std::string, NodeEntry, std::less<>> nodes_;
  std::map<std::string, TypeInfo, std::less<>> types_;
};

/// Closest candidate to `name` by edit distance (case-insensitive), or "" when nothing is
/// reasonably close. Used for "did you mean ...?" hints everywhere.
[[nodiscard]] std::string nearest_name(std::string_view name, const std::vector<std::string>& candidates);

}  // namespace gemflow
