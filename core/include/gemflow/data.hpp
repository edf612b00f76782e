#pragma once
// Typed, immutable values that travel on the wires between nodes.
#include <cstddef>
#include <memory>
#include <string>
#include <string_view>
#include <typeinfo>
#include <utility>

#include "gemflow/device_copy.hpp"
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
///
/// A value lives on the host (of), or on a device with a host copy made lazily (on_device,
/// gemflow/device_copy.hpp): as<T>() then downloads it once, the first time it is asked.
class Value {
 public:
  Value() = default;

  template <class T>
  static Value of(std::shared_ptr<const T> p) {
    Value v = typed<T>();
    v.ptr_ = std::move(p);
    return v;
  }
  template <class T>
  static Value make(T value) {
    return of<T>(std::make_shared<const T>(std::move(value)));
  }
  /// A device-resident value: `copy` holds the data; `host` is its host copy when the producer
  /// has one already (else it is downloaded when first asked for). Throws Error when `copy` is
  /// null.
  template <class T>
  static Value on_device(std::shared_ptr<const DeviceCopyOf<T>> copy, std::shared_ptr<const T> host = nullptr) {
    if (!copy) throw Error("a device-resident " + std::string(DataType<T>::name) + " without a device copy");
    Value v = typed<T>();
    v.resident_ = std::make_shared<detail::Resident>(std::move(copy), std::move(host));
    return v;
  }

  [[nodiscard]] bool empty() const noexcept { return !ptr_ && !resident_; }
  [[nodiscard]] const std::string& type() const noexcept { return type_; }
  /// DataType<T>::summary() of the host copy; of a device-resident value without one, the device
  /// copy's summary (no download).
  [[nodiscard]] std::string summary() const {
    if (ptr_) return summary_(ptr_.get());
    return resident_ ? resident_->summary(summary_) : "(empty)";
  }

  /// The device copy, or nullptr (a host value, or a device copy released by the executor).
  [[nodiscard]] std::shared_ptr<const DeviceCopy> device_copy() const {
    return resident_ ? resident_->device() : nullptr;
  }
  /// The device copy as the plugin's own class D (a DeviceCopyOf<T>), or nullptr when there is
  /// none or it is of another class (made by another plugin: read the host copy then).
  template <class D>
  [[nodiscard]] std::shared_ptr<const D> device_copy_as() const {
    return std::dynamic_pointer_cast<const D>(device_copy());
  }
  /// True when as<T>() needs no download: a host value, or a device value already downloaded.
  [[nodiscard]] bool has_host_copy() const { return ptr_ || (resident_ && resident_->has_host()); }
  /// Makes the host copy (a download, added to `log`) and drops this value's device copy (its
  /// memory is freed when no consumer holds it). Shared by every copy of the Value. Returns false
  /// when there was no device copy. Throws what the download throws.
  bool release_device_copy(TransferLog* log = nullptr) const { return resident_ && resident_->release_device(log); }

  /// The value as T; throws gemflow::Error when it holds another type. The registry keeps one
  /// layout per name (TypeLayout); the C++ type is checked here too, for values made of a type
  /// that was never registered. A device-resident value is downloaded the first time (once,
  /// whatever the number of readers), and the transfer added to `log` when given.
  template <class T>
  [[nodiscard]] std::shared_ptr<const T> as(TransferLog* log = nullptr) const {
    if (empty()) throw Error("empty value where " + std::string(DataType<T>::name) + " was expected");
    if (type_ != DataType<T>::name)
      throw Error("value of type " + type_ + " where " + std::string(DataType<T>::name) + " was expected");
    if (*cxx_ != typeid(T))
      throw Error("value of type " + type_ + " holds another C++ type (" + demangle(cxx_->name()) +
                  ") than the one read (" + demangle(typeid(T).name()) + ")");
    if (ptr_) return std::static_pointer_cast<const T>(ptr_);
    return std::static_pointer_cast<const T>(resident_->host(log));
  }
  /// The host object; nullptr for a device-resident value (even once downloaded).
  [[nodiscard]] const std::shared_ptr<const void>& raw() const noexcept { return ptr_; }

 private:
  template <class T>
  static Value typed() {
    Value v;
    v.type_ = std::string(DataType<T>::name);
    v.cxx_ = &typeid(T);
    v.summary_ = [](const void* q) { return DataType<T>::summary(*static_cast<const T*>(q)); };
    return v;
  }
  std::string type_;
  const std::type_info* cxx_ = nullptr;
  std::string (*summary_)(const void*) = nullptr;
  std::shared_ptr<const void> ptr_;             // a host value
  std::shared_ptr<detail::Resident> resident_;  // a device-resident value
};

}  // namespace gemflow
