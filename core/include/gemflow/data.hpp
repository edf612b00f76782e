#pragma once
// Typed, immutable values that travel on the wires between nodes.
#include <memory>
#include <string>
#include <string_view>
#include <utility>

#include "gemflow/error.hpp"

namespace gemflow {

/// Describes a data type to the registry. Specialise for every type that travels on a wire:
///
///   template <> struct DataType<MyType> {
///     static constexpr std::string_view name = "MyType";           // unique, shown in specs
///     static constexpr std::string_view doc = "What it holds, units";
///     static std::string summary(const MyType& v);                  // one line, e.g. "12 rows"
///   };
///
/// Identity across plugins is the name, so two plugins must not define the same name.
template <class T>
struct DataType;

/// Type-erased immutable value of a registered DataType. Cheap to copy (shared ownership);
/// the same value may feed several consumers and parallel branches.
class Value {
 public:
  Value() = default;

  template <class T>
  static Value of(std::shared_ptr<const T> p) {
    Value v;
    v.type_ = std::string(DataType<T>::name);
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

  /// The value as T; throws gemflow::Error when it holds another type.
  template <class T>
  [[nodiscard]] std::shared_ptr<const T> as() const {
    if (!ptr_) throw Error("empty value where " + std::string(DataType<T>::name) + " was expected");
    if (type_ != DataType<T>::name)
      throw Error("value of type " + type_ + " where " + std::string(DataType<T>::name) +
                  " was expected");
    return std::static_pointer_cast<const T>(ptr_);
  }
  [[nodiscard]] const std::shared_ptr<const void>& raw() const noexcept { return ptr_; }

 private:
  std::string type_;
  std::string (*summary_)(const void*) = nullptr;
  std::shared_ptr<const void> ptr_;
};

}  // namespace gemflow
