#include "gemflow/device_copy.hpp"

#include <chrono>
#include <stdexcept>

namespace gemflow {

void TransferLog::add(Transfer direction, std::size_t bytes, double seconds) {
  std::lock_guard lock(mutex_);
  if (direction == Transfer::ToDevice) {
    stats_.to_device_bytes += bytes;
    stats_.to_device_seconds += seconds;
    ++stats_.to_device_count;
  } else {
    stats_.to_host_bytes += bytes;
    stats_.to_host_seconds += seconds;
    ++stats_.to_host_count;
  }
}

TransferStats TransferLog::stats() const {
  std::lock_guard lock(mutex_);
  return stats_;
}

namespace detail {

namespace {
// Called with the mutex held: readers that come meanwhile wait for this one download.
std::shared_ptr<const void> download(const DeviceCopy& device, TransferLog* log) {
  const auto t0 = std::chrono::steady_clock::now();
  std::shared_ptr<const void> host = device.download_erased();
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  if (!host) throw std::logic_error("a device copy on " + device.device().str() + " downloaded nothing");
  if (log) log->add(Transfer::ToHost, device.bytes(), seconds);
  return host;
}
}  // namespace

std::shared_ptr<const void> Resident::host(TransferLog* log) {
  std::lock_guard lock(mutex_);
  if (!host_) host_ = download(*device_, log);  // device_ is set while host_ is not (release_device)
  return host_;
}

bool Resident::has_host() const {
  std::lock_guard lock(mutex_);
  return host_ != nullptr;
}

std::shared_ptr<const DeviceCopy> Resident::device() const {
  std::lock_guard lock(mutex_);
  return device_;
}

bool Resident::release_device(TransferLog* log) {
  std::lock_guard lock(mutex_);
  if (!device_) return false;
  if (!host_) host_ = download(*device_, log);
  device_.reset();
  return true;
}

std::string Resident::summary(std::string (*host_summary)(const void*)) const {
  std::lock_guard lock(mutex_);
  if (host_) return host_summary(host_.get());
  return device_->summary() + " (on " + device_->device().str() + ")";
}

}  // namespace detail
}  // namespace gemflow
