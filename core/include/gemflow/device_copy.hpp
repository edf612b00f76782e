#pragma once
// Device-resident values: a value may carry a copy of its data in device (GPU) memory, so that
// chained GPU nodes pass it without a round trip through the host; the host copy is made lazily,
// the first time a CPU consumer (or a writer, a viewer) reads the value.
//
// Core knows no CUDA (it builds with GEMFLOW_CUDA=OFF): a device copy is a DeviceCopy, an
// interface implemented by the plugin that made the copy, with its own CUDA code (its device
// buffers, its download). Core only keeps it, hands it to consumers, and calls download() when
// the host copy is asked for. A type-erased holder keeps the SDK types (Matrix, DistanceBounds…)
// plain host structs: their data() stays a noexcept host pointer everywhere.
//
// Contract of a DeviceCopy (the stream contract of docs/plugin-guide.md):
//  - Complete: the producing node has finished every device operation that writes the copy
//    before execute() returns (it synchronises its streams). A consumer may read it on any
//    stream of its device without waiting for anything.
//  - Immutable and shared: consumers read it, never write it (copy it to modify it); several
//    consumers may read it at the same time, from different threads and streams.
//  - Thread-safe const members; the destructor may run on any thread (free synchronously, or
//    stream-ordered on a stream the copy owns, with the right device current).
//  - download() makes the host value from the device data, synchronously; it throws on failure
//    (a CUDA error), and then the node that read the value fails with that message.
#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>

#include "gemflow/device.hpp"

namespace gemflow {

/// Direction of a host↔device copy.
enum class Transfer { ToDevice, ToHost };

/// Bytes, copies and seconds of host↔device transfers (one node's, in provenance.json).
struct TransferStats {
  std::uint64_t to_device_bytes = 0, to_host_bytes = 0;
  std::uint64_t to_device_count = 0, to_host_count = 0;
  double to_device_seconds = 0.0, to_host_seconds = 0.0;
  [[nodiscard]] bool empty() const noexcept { return to_device_count == 0 && to_host_count == 0; }
};

/// A thread-safe TransferStats accumulator: the executor keeps one per node execution.
class TransferLog {
 public:
  void add(Transfer direction, std::size_t bytes, double seconds);
  [[nodiscard]] TransferStats stats() const;

 private:
  mutable std::mutex mutex_;
  TransferStats stats_;
};

/// The device copy of a value (see the file comment). Implemented by plugins; see DeviceCopyOf.
class DeviceCopy {
 public:
  DeviceCopy() = default;
  DeviceCopy(const DeviceCopy&) = delete;
  DeviceCopy& operator=(const DeviceCopy&) = delete;
  virtual ~DeviceCopy() = default;
  /// The device holding the copy (cuda:N).
  [[nodiscard]] virtual Device device() const = 0;
  /// Bytes download() copies from the device (for the transfer statistics).
  [[nodiscard]] virtual std::size_t bytes() const = 0;
  /// What DataType<T>::summary() says of the value, without downloading it.
  [[nodiscard]] virtual std::string summary() const = 0;
  /// The host value (a T of DeviceCopyOf<T>), type-erased: used by Value.
  [[nodiscard]] virtual std::shared_ptr<const void> download_erased() const = 0;
};

/// The device copy of a value of DataType T: implement download() (and device(), bytes(),
/// summary()) and hand it to Output<T>::set_device().
template <class T>
class DeviceCopyOf : public DeviceCopy {
 public:
  /// Makes the host value from the device data, synchronously. Value calls it at most once per
  /// value (again only after a failure).
  [[nodiscard]] virtual std::shared_ptr<const T> download() const = 0;

 private:
  [[nodiscard]] std::shared_ptr<const void> download_erased() const final { return download(); }
};

namespace detail {
/// The shared state of a device-resident Value (all copies of the Value share it): the device
/// copy, and the host copy once made. Thread-safe.
class Resident {
 public:
  Resident(std::shared_ptr<const DeviceCopy> device, std::shared_ptr<const void> host)
      : device_(std::move(device)), host_(std::move(host)) {}
  /// The host copy, downloaded now when there is none (once: concurrent readers wait for the
  /// first). The download is added to `log` (when not nullptr) as Transfer::ToHost.
  [[nodiscard]] std::shared_ptr<const void> host(TransferLog* log);
  [[nodiscard]] bool has_host() const;
  /// The device copy; nullptr once released.
  [[nodiscard]] std::shared_ptr<const DeviceCopy> device() const;
  /// Makes the host copy (as host()) and drops this value's reference to the device copy, whose
  /// memory is freed when no consumer holds it any more. Returns false when there was none.
  bool release_device(TransferLog* log);
  /// The host summary when the host copy exists, else the device copy's ("… (on cuda:0)").
  [[nodiscard]] std::string summary(std::string (*host_summary)(const void*)) const;

 private:
  mutable std::mutex mutex_;
  std::shared_ptr<const DeviceCopy> device_;
  std::shared_ptr<const void> host_;
};
}  // namespace detail

}  // namespace gemflow
