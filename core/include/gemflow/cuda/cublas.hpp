#pragma once
// cuBLAS statuses for the checks of check.hpp: GF_CUDA_TRY / GF_CUDA_TRY_NO_THROW accept a
// cublasStatus_t once this header is included; GF_CUBLAS_TRY(call) is the same check, named for
// the reader. Needs cublas_v2.h only: the status names are ours, so a target that includes this
// header without calling cuBLAS need not link it.
#include <cublas_v2.h>

#include <string>

#include <gemflow/cuda/check.hpp>

namespace gemflow::cuda {

/// The enumerator's name ("CUBLAS_STATUS_ALLOC_FAILED"), or "CUBLAS_STATUS_<unknown>" for a code
/// this header does not know.
[[nodiscard]] constexpr const char* status_name(cublasStatus_t s) noexcept {
  switch (s) {
    case CUBLAS_STATUS_SUCCESS: return "CUBLAS_STATUS_SUCCESS";
    case CUBLAS_STATUS_NOT_INITIALIZED: return "CUBLAS_STATUS_NOT_INITIALIZED";
    case CUBLAS_STATUS_ALLOC_FAILED: return "CUBLAS_STATUS_ALLOC_FAILED";
    case CUBLAS_STATUS_INVALID_VALUE: return "CUBLAS_STATUS_INVALID_VALUE";
    case CUBLAS_STATUS_ARCH_MISMATCH: return "CUBLAS_STATUS_ARCH_MISMATCH";
    case CUBLAS_STATUS_MAPPING_ERROR: return "CUBLAS_STATUS_MAPPING_ERROR";
    case CUBLAS_STATUS_EXECUTION_FAILED: return "CUBLAS_STATUS_EXECUTION_FAILED";
    case CUBLAS_STATUS_INTERNAL_ERROR: return "CUBLAS_STATUS_INTERNAL_ERROR";
    case CUBLAS_STATUS_NOT_SUPPORTED: return "CUBLAS_STATUS_NOT_SUPPORTED";
    case CUBLAS_STATUS_LICENSE_ERROR: return "CUBLAS_STATUS_LICENSE_ERROR";
    default: break;  // a code of a newer cuBLAS
  }
  return "CUBLAS_STATUS_<unknown>";
}

/// "CUBLAS_STATUS_X (cublasStatus_t N)", as CudaError reports a failed cuBLAS call.
[[nodiscard]] inline std::string status_string(cublasStatus_t s) {
  return std::string(status_name(s)) + " (cublasStatus_t " + std::to_string(static_cast<int>(s)) + ")";
}

namespace detail {

inline void check(cublasStatus_t s, const char* call, const char* file, int line) {
  if (s != CUBLAS_STATUS_SUCCESS) [[unlikely]]
    throw CudaError(call, status_string(s), file, line);
}

inline bool check_no_throw(cublasStatus_t s, const char* call, const char* file, int line) noexcept {
  if (s == CUBLAS_STATUS_SUCCESS) return true;
  report_ignored(call, status_name(s), "cublasStatus_t", file, line);
  return false;
}

}  // namespace detail
}  // namespace gemflow::cuda

#define GF_CUBLAS_TRY(call) ::gemflow::cuda::detail::check((call), #call, __FILE__, __LINE__)
