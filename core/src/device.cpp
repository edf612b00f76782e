#include "gemflow/device.hpp"

#include <charconv>

#include "gemflow/error.hpp"

#ifdef GEMFLOW_WITH_CUDA
namespace gemflow::cuda_detail {
int device_count() noexcept;
std::string device_name(int index);
}  // namespace gemflow::cuda_detail
#endif

namespace gemflow {

std::string Device::str() const { return is_cuda() ? "cuda:" + std::to_string(index) : "cpu"; }

bool built_with_cuda() noexcept {
#ifdef GEMFLOW_WITH_CUDA
  return true;
#else
  return false;
#endif
}

int cuda_device_count() noexcept {
#ifdef GEMFLOW_WITH_CUDA
  static const int n = cuda_detail::device_count();
  return n;
#else
  return 0;
#endif
}

std::string cuda_device_name(int index) {
#ifdef GEMFLOW_WITH_CUDA
  if (index < 0 || index >= cuda_device_count()) return {};
  return cuda_detail::device_name(index);
#else
  (void)index;
  return {};
#endif
}

std::optional<DeviceRequest> DeviceRequest::parse(std::string_view t) {
  if (t == "auto") return DeviceRequest{Kind::Auto, 0};
  if (t == "cpu") return DeviceRequest{Kind::Cpu, 0};
  if (t == "cuda") return DeviceRequest{Kind::Cuda, 0};
  if (t.starts_with("cuda:")) {
    int i = -1;
    auto s = t.substr(5);
    auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), i);
    if (ec == std::errc() && p == s.data() + s.size() && i >= 0) return DeviceRequest{Kind::Cuda, i};
  }
  return std::nullopt;
}

Device resolve_device(const DeviceRequest& r) {
  const int n = cuda_device_count();
  switch (r.kind) {
    case DeviceRequest::Kind::Cpu: return {Device::Kind::Cpu, 0};
    case DeviceRequest::Kind::Auto: return n > 0 ? Device{Device::Kind::Cuda, 0} : Device{Device::Kind::Cpu, 0};
    case DeviceRequest::Kind::Cuda:
      if (!built_with_cuda())
        throw DeviceError("device cuda:" + std::to_string(r.index) +
                          " requested, but this Gemflow was built without CUDA");
      if (r.index >= n)
        throw DeviceError(
            "device cuda:" + std::to_string(r.index) + " requested, but " +
            (n == 0 ? std::string("no CUDA device is present") : std::to_string(n) + " CUDA device(s) are present"));
      return {Device::Kind::Cuda, r.index};
  }
  return {};
}

}  // namespace gemflow
