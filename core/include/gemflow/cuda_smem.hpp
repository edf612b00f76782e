#pragma once
// CUDA helper for plugin kernels (include from .cu files only: needs the CUDA runtime headers).
#include <cuda_runtime.h>

#include <mutex>
#include <set>
#include <utility>

namespace gemflow::cuda {

/// Lets `kernel` launch with up to `bytes` of dynamic shared memory on the current device:
/// cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, bytes), once per
/// kernel and device. The attribute belongs to the device, so a process-wide "done" flag leaves
/// the second GPU of a process without it (its launches then fail). Thread-safe. Returns
/// cudaSuccess or the error of cudaGetDevice / cudaFuncSetAttribute (retried on the next call).
inline cudaError_t allow_dynamic_smem(const void* kernel, int bytes) {
  int device = 0;
  if (const cudaError_t e = cudaGetDevice(&device); e != cudaSuccess) return e;
  static std::mutex mutex;
  static std::set<std::pair<const void*, int>> done;
  const std::lock_guard lock(mutex);
  if (done.contains({kernel, device})) return cudaSuccess;
  const cudaError_t e = cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, bytes);
  if (e == cudaSuccess) done.insert({kernel, device});
  return e;
}

/// The same for a typed kernel pointer.
template <class Kernel>
cudaError_t allow_dynamic_smem(Kernel* kernel, std::size_t bytes) {
  return allow_dynamic_smem(reinterpret_cast<const void*>(kernel), static_cast<int>(bytes));
}

}  // namespace gemflow::cuda
