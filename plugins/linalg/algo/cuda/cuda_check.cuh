#pragma once
// Error checks for CUDA, cuBLAS and cuSOLVER calls (modelled on RAFT's cuda_rt_essentials.hpp).
//   GF_CUDA_TRY(call)         throws CudaError("call text: error string (file:line)")
//   GF_CUBLAS_TRY(call)       same for cublasStatus_t
//   GF_CUSOLVER_TRY(call)     same for cusolverStatus_t
//   GF_CUDA_CHECK_LAUNCH()    after every kernel launch (cudaGetLastError)
//   GF_CUDA_TRY_NO_THROW(call) for destructors: prints to stderr, never throws
#include <cublas_v2.h>
#include <cuda_runtime.h>
#include <cusolverDn.h>

#include <cstdio>
#include <string>

#include <gemflow/linalg/cholesky_cuda.hpp>

namespace gemflow::linalg::cuda::detail {

inline const char* cusolver_status_string(cusolverStatus_t s) {
  switch (s) {
    case CUSOLVER_STATUS_SUCCESS: return "CUSOLVER_STATUS_SUCCESS";
    case CUSOLVER_STATUS_NOT_INITIALIZED: return "CUSOLVER_STATUS_NOT_INITIALIZED";
    case CUSOLVER_STATUS_ALLOC_FAILED: return "CUSOLVER_STATUS_ALLOC_FAILED";
    case CUSOLVER_STATUS_INVALID_VALUE: return "CUSOLVER_STATUS_INVALID_VALUE";
    case CUSOLVER_STATUS_ARCH_MISMATCH: return "CUSOLVER_STATUS_ARCH_MISMATCH";
    case CUSOLVER_STATUS_EXECUTION_FAILED: return "CUSOLVER_STATUS_EXECUTION_FAILED";
    case CUSOLVER_STATUS_INTERNAL_ERROR: return "CUSOLVER_STATUS_INTERNAL_ERROR";
    case CUSOLVER_STATUS_MATRIX_TYPE_NOT_SUPPORTED: return "CUSOLVER_STATUS_MATRIX_TYPE_NOT_SUPPORTED";
    case CUSOLVER_STATUS_NOT_SUPPORTED: return "CUSOLVER_STATUS_NOT_SUPPORTED";
    default: return "cusolverStatus_t (unknown code)";
  }
}

[[noreturn]] inline void raise(const char* what, const std::string& err, const char* file, int line) {
  throw CudaError(std::string(what) + ": " + err + " (" + file + ":" + std::to_string(line) + ")");
}

inline void check(cudaError_t e, const char* what, const char* file, int line) {
  if (e != cudaSuccess) raise(what, std::string(cudaGetErrorName(e)) + " " + cudaGetErrorString(e), file, line);
}
inline void check(cublasStatus_t e, const char* what, const char* file, int line) {
  if (e != CUBLAS_STATUS_SUCCESS) raise(what, cublasGetStatusString(e), file, line);
}
inline void check(cusolverStatus_t e, const char* what, const char* file, int line) {
  if (e != CUSOLVER_STATUS_SUCCESS) raise(what, cusolver_status_string(e), file, line);
}

inline void check_no_throw(cudaError_t e, const char* what, const char* file, int line) noexcept {
  if (e != cudaSuccess) std::fprintf(stderr, "%s:%d: %s: %s\n", file, line, what, cudaGetErrorString(e));
}
inline void check_no_throw(cublasStatus_t e, const char* what, const char* file, int line) noexcept {
  if (e != CUBLAS_STATUS_SUCCESS) std::fprintf(stderr, "%s:%d: %s: %s\n", file, line, what, cublasGetStatusString(e));
}
inline void check_no_throw(cusolverStatus_t e, const char* what, const char* file, int line) noexcept {
  if (e != CUSOLVER_STATUS_SUCCESS)
    std::fprintf(stderr, "%s:%d: %s: %s\n", file, line, what, cusolver_status_string(e));
}

}  // namespace gemflow::linalg::cuda::detail

#define GF_CUDA_TRY(call) ::gemflow::linalg::cuda::detail::check((call), #call, __FILE__, __LINE__)
#define GF_CUBLAS_TRY(call) ::gemflow::linalg::cuda::detail::check((call), #call, __FILE__, __LINE__)
#define GF_CUSOLVER_TRY(call) ::gemflow::linalg::cuda::detail::check((call), #call, __FILE__, __LINE__)
#define GF_CUDA_CHECK_LAUNCH() \
  ::gemflow::linalg::cuda::detail::check(cudaGetLastError(), "kernel launch", __FILE__, __LINE__)
#define GF_CUDA_TRY_NO_THROW(call) \
  ::gemflow::linalg::cuda::detail::check_no_throw((call), #call, __FILE__, __LINE__)
