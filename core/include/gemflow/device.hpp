#pragma once
// Compute devices: what `device: auto | cpu | cuda | cuda:N` resolves to.
#include <optional>
#include <string>
#include <string_view>

namespace gemflow {

struct Device {
  enum class Kind { Cpu, Cuda };
  Kind kind = Kind::Cpu;
  int index = 0;  ///< CUDA ordinal
  [[nodiscard]] bool is_cuda() const noexcept { return kind == Kind::Cuda; }
  /// "cpu" or "cuda:N".
  [[nodiscard]] std::string str() const;
};

/// Number of usable CUDA devices (0 when Gemflow was built without CUDA, when no driver is
/// present or when CUDA_VISIBLE_DEVICES hides them all). Never throws.
[[nodiscard]] int cuda_device_count() noexcept;
/// "NVIDIA H200 (sm_90, 139 GiB)" for a CUDA ordinal, or "" when unavailable.
[[nodiscard]] std::string cuda_device_name(int index);
/// True when the library was compiled with CUDA support.
[[nodiscard]] bool built_with_cuda() noexcept;

/// Parses "auto" | "cpu" | "cuda" | "cuda:N"; nullopt on anything else.
struct DeviceRequest {
  enum class Kind { Auto, Cpu, Cuda } kind = Kind::Auto;
  int index = 0;
  [[nodiscard]] static std::optional<DeviceRequest> parse(std::string_view text);
};

/// Resolves a request: auto → cuda:0 when a device is present, else cpu; cuda / cuda:N
/// throw DeviceError naming the request when that device is absent (never a silent fallback).
[[nodiscard]] Device resolve_device(const DeviceRequest& request);

}  // namespace gemflow
