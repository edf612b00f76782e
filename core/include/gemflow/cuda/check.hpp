#pragma once
// Checked CUDA runtime calls (after RAFT's cuda_rt_essentials.hpp). Needs the CUDA runtime headers:
// include from .cu files, or from .cpp files of targets that link CUDA::cudart. cuBLAS and cuSOLVER
// statuses: cublas.hpp, cusolver.hpp (include those only where the library is used).
//
//   GF_CUDA_TRY(call)             throws CudaError (error.hpp) when `call` does not return success:
//                                 "<file>:<line>: <call text>: cudaErrorX (description)"
//   GF_CUDA_TRY_NO_THROW(call)    for destructors and cleanup paths: a failure is printed to stderr
//                                 ("... (ignored: no-throw context)") and never thrown; evaluates to
//                                 true when the call succeeded
//   GF_CUDA_CHECK_LAUNCH()        after every kernel launch: cudaGetLastError(), throws CudaError
//   GF_CUDA_CHECK_LAUNCH("name")  the same, naming the kernel ("launch of name")
//   GF_EXPECTS(cond, message)     precondition: throws std::invalid_argument (error.hpp)
//
// The launch check catches launch errors (bad configuration, too much shared memory, no kernel
// image for the device) and sticky errors of earlier work; errors of the kernel's execution show
// at the next synchronising call. It does not synchronise. GF_CUDA_TRY also accepts cublasStatus_t
// and cusolverStatus_t where cublas.hpp / cusolver.hpp are included (GF_CUBLAS_TRY and
// GF_CUSOLVER_TRY are the same check, named for the reader).
//
// Thread-safety: the checks keep no state; cudaGetLastError() reads and clears the calling host
// thread's last error.
#include <cuda_runtime.h>

#include <cstdio>
#include <string>
#include <type_traits>

#include <gemflow/cuda/error.hpp>
#include <gemflow/cuda/stream.hpp>

static_assert(std::is_same_v<gemflow::cuda::Stream, cudaStream_t>, "gemflow::cuda::Stream must be cudaStream_t");

namespace gemflow::cuda {

/// "cudaErrorX (description)", as CudaError reports a failed runtime call. Needs no device.
[[nodiscard]] inline std::string status_string(cudaError_t e) {
  return std::string(cudaGetErrorName(e)) + " (" + cudaGetErrorString(e) + ")";
}

namespace detail {

inline void check(cudaError_t e, const char* call, const char* file, int line) {
  if (e != cudaSuccess) [[unlikely]]
    throw CudaError(call, status_string(e), file, line);
}

/// Prints a failure to stderr without allocating (safe where an exception must not escape).
inline void report_ignored(const char* call, const char* name, const char* description, const char* file,
                           int line) noexcept {
  std::fprintf(stderr, "%s:%d: %s: %s (%s) (ignored: no-throw context)\n", file, line, call, name, description);
}

inline bool check_no_throw(cudaError_t e, const char* call, const char* file, int line) noexcept {
  if (e == cudaSuccess) return true;
  report_ignored(call, cudaGetErrorName(e), cudaGetErrorString(e), file, line);
  return false;
}

/// `kernel` is "" (no name given) or the kernel's name.
inline void check_launch(const char* kernel, const char* file, int line) {
  const cudaError_t e = cudaGetLastError();
  if (e != cudaSuccess) [[unlikely]]
    throw CudaError(*kernel ? std::string("launch of ") + kernel : std::string("kernel launch"), status_string(e), file,
                    line);
}

}  // namespace detail
}  // namespace gemflow::cuda

#define GF_CUDA_TRY(call) ::gemflow::cuda::detail::check((call), #call, __FILE__, __LINE__)
#define GF_CUDA_TRY_NO_THROW(call) ::gemflow::cuda::detail::check_no_throw((call), #call, __FILE__, __LINE__)
// The optional argument must be a string literal: "" "name" concatenates to "name", "" alone is "".
#define GF_CUDA_CHECK_LAUNCH(...) ::gemflow::cuda::detail::check_launch("" __VA_ARGS__, __FILE__, __LINE__)
