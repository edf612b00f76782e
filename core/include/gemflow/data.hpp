#pragma once
// Typed, immutable values that travel on the wires between nodes.
#include <cstddef>
#include <memory>
#include <string>
#include <string_view>
#include <typeinfo>
#include <utility>

#include "gemflow/error.hpp"

namespace gemflow {

/// Describes a data type to the registry. Specialise for every type that travels on a wire:
///
///   template <> struct DataType<MyType> {
///     static constexpr std::string_view name = "MyType";           // unique, shown in specs
///     static constexpr std::string_view doc = "What it holds, units";
///     static constexpr int version = 1;   // optional (1): bump when the layout or meaning changes
///     static std::string summary(const MyType& v);                  // one line, e.g. "12 rows"
///   };
///
/// A value is known by its name on the wires, in workflow files and in Studio; the registry keeps
/// the TypeLayout of each name and refuses a second registration of the name with another
/// layout, naming both plugin files, so that `Value::as<T>` never reads one layout as another.
template <class T>
struct DataType;

/// What two registrations of one type name must agree on to be the same type: the C++ type
/// (its mangled name: the namespace and class), its size and alignment, and the version that
/// DataType<T> declares (1 when it declares none). A shared header compiled into several plugins
/// gives the same layout everywhere; a field added without bumping the version changes the size
/// in most cases, and the version covers the rest (a changed meaning, a reordered field).
struct TypeLayout {
  std::string cxx_type;  ///< typeid(T).name() (mangled; str() demangles it)
  std::size_t size = 0;
  std::size_t align = 0;
  int version = 1;
  [[nodiscard]] bool operator==(const TypeLayout&) const = default;
  /// "C++ type gemflow::Image, 64 bytes, alignment 8, version 1".
  [[nodiscard]] std::string str() const;
};

/// The layout of DataType<T> as compiled in the calling translation unit.
template <class T>
[[nodiscard]] TypeLayout type_layout() {
  int version = 1;
  if constexpr (requires { DataType<T>::version; }) version = DataType<T>::version;
  return {typeid(T).name(), sizeof(T), alignof(T), version};
}

/// The readable form of a mangled C++ type name ("gemflow::Image"); the name itself when it
/// cannot be demangled.
[[nodiscard]] std::string demangle(const char* mangled);

/// Type-erased immutable value of a registered DataType. Cheap to copy (shared ownership);
/// the same value may feed several consumers and parallel branches.
class Value {
 public:
  Value() = default;

  template <class T>
  static Value of(std::shared_ptr<const T> p) {
    Value v;
    v.type_ = std::string(DataType<T>::name);
    v.cxx_ = &typeid(T);
    v.summary_ = [](const void* q) { return DataType<T>::summary(*static_cast<const T*>(q)); };
    v.ptr_ = std::move(p);
    return v;
  }
  template <class T>
  static Value make(T value) {
    return of<T>(std::make_shared<const T>(std::move(value)));
  }

  [[nodiscard]] bool empty() const noexcept { return !ptr_; }
  [[nodiscard]] const std::string& type() const noexcept { return type_; }
  [[nodiscard]] std::string summary() const { return ptr_ ? summary_(ptr_.get()) : "(empty)"; }

  /// The value as T; throws gemflow::Error when it holds another type. The registry keeps one
  /// layout per name (TypeLayout); the C++ type is checked here too, for values made of a type
  /// that was never registered.
  template <class T>
  [[nodiscard]] std::shared_ptr<const T> as() const {
    if (!ptr_) throw Error("empty value where " + std::string(DataType<T>::name) + " was expected");
    if (type_ != DataType<T>::name)
      throw Error("value of type " + type_ + " where " + std::string(DataType<T>::name) +
                  " was expected");
    if (*cxx_ != typeid(T))
      throw Error("value of type " + type_ + " holds another C++ type (" + demangle(cxx_->name()) +
                  ") than the one read (" + demangle(typeid(T).name()) + ")");
    return std::static_pointer_cast<const T>(ptr_);
  }
  [[nodiscard]] const std::shared_ptr<const void>& raw() const noexcept { return ptr_; }

 private:
  std::string type_;
  const std::type_info* cxx_ = nullptr;
  std::string (*summary_)(const void*) = nullptr;
  std::shared_ptr<const void> ptr_;
};

}  // namespace gemflow
