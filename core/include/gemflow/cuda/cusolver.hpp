#pragma once
// cuSOLVER statuses for the checks of check.hpp: GF_CUDA_TRY / GF_CUDA_TRY_NO_THROW accept a
// cusolverStatus_t once this header is included; GF_CUSOLVER_TRY(call) is the same check, named
// for the reader. Needs the cuSOLVER headers only (cuSOLVER has no status-string function: the
// names are ours), so a target that includes this header without calling cuSOLVER need not link it.
#include <cusolverDn.h>

#include <string>

#include <gemflow/cuda/check.hpp>

namespace gemflow::cuda {

/// The enumerator's name ("CUSOLVER_STATUS_INVALID_VALUE"), or "CUSOLVER_STATUS_<unknown>" for a
/// code this header does not know.
[[nodiscard]] constexpr const char* status_name(cusolverStatus_t s) noexcept {
  switch (s) {
    case CUSOLVER_STATUS_SUCCESS: return "CUSOLVER_STATUS_SUCCESS";
    case CUSOLVER_STATUS_NOT_INITIALIZED: return "CUSOLVER_STATUS_NOT_INITIALIZED";
    case CUSOLVER_STATUS_ALLOC_FAILED: return "CUSOLVER_STATUS_ALLOC_FAILED";
    case CUSOLVER_STATUS_INVALID_VALUE: return "CUSOLVER_STATUS_INVALID_VALUE";
    case CUSOLVER_STATUS_ARCH_MISMATCH: return "CUSOLVER_STATUS_ARCH_MISMATCH";
    case CUSOLVER_STATUS_MAPPING_ERROR: return "CUSOLVER_STATUS_MAPPING_ERROR";
    case CUSOLVER_STATUS_EXECUTION_FAILED: return "CUSOLVER_STATUS_EXECUTION_FAILED";
    case CUSOLVER_STATUS_INTERNAL_ERROR: return "CUSOLVER_STATUS_INTERNAL_ERROR";
    case CUSOLVER_STATUS_MATRIX_TYPE_NOT_SUPPORTED: return "CUSOLVER_STATUS_MATRIX_TYPE_NOT_SUPPORTED";
    case CUSOLVER_STATUS_NOT_SUPPORTED: return "CUSOLVER_STATUS_NOT_SUPPORTED";
    case CUSOLVER_STATUS_ZERO_PIVOT: return "CUSOLVER_STATUS_ZERO_PIVOT";
    case CUSOLVER_STATUS_INVALID_LICENSE: return "CUSOLVER_STATUS_INVALID_LICENSE";
    case CUSOLVER_STATUS_INVALID_WORKSPACE: return "CUSOLVER_STATUS_INVALID_WORKSPACE";
    default: break;  // the IRS codes, or a code of a newer cuSOLVER
  }
  return "CUSOLVER_STATUS_<unknown>";
}

/// "CUSOLVER_STATUS_X (cusolverStatus_t N)", as CudaError reports a failed cuSOLVER call.
[[nodiscard]] inline std::string status_string(cusolverStatus_t s) {
  return std::string(status_name(s)) + " (cusolverStatus_t " + std::to_string(static_cast<int>(s)) + ")";
}

namespace detail {

inline void check(cusolverStatus_t s, const char* call, const char* file, int line) {
  if (s != CUSOLVER_STATUS_SUCCESS) [[unlikely]]
    throw CudaError(call, status_string(s), file, line);
}

inline bool check_no_throw(cusolverStatus_t s, const char* call, const char* file, int line) noexcept {
  if (s == CUSOLVER_STATUS_SUCCESS) return true;
  report_ignored(call, status_name(s), "cusolverStatus_t", file, line);
  return false;
}

}  // namespace detail
}  // namespace gemflow::cuda

#define GF_CUSOLVER_TRY(call) ::gemflow::cuda::detail::check((call), #call, __FILE__, __LINE__)
