#pragma once
// CUDA error checking for the distgeom kernels (after RAFT's cuda_rt_essentials.hpp).
//   GF_CUDA_TRY(call)          throws CudaError("file:line: call: <cuda error string>")
//   GF_CUDA_CHECK_LAUNCH(name) after every kernel launch (launch configuration errors)
//   GF_CUDA_TRY_NOTHROW(call)  for destructors: prints to stderr, never throws
//   GF_EXPECTS(cond, message)  precondition: throws std::invalid_argument(message)
#include <cuda_runtime.h>

#include <cstdio>
#include <stdexcept>
#include <string>

#include "gemflow/distgeom/smoothing_cuda.hpp"

namespace gemflow::distgeom::cuda::detail {

[[noreturn]] inline void throw_cuda(cudaError_t e, const char* what, const char* file, int line) {
  throw CudaError(std::string(file) + ":" + std::to_string(line) + ": " + what + ": " +
                  cudaGetErrorName(e) + " (" + cudaGetErrorString(e) + ")");
}

inline void check(cudaError_t e, const char* what, const char* file, int line) {
  if (e != cudaSuccess) throw_cuda(e, what, file, line);
}

inline void check_nothrow(cudaError_t e, const char* what, const char* file, int line) noexcept {
  if (e != cudaSuccess)
    std::fprintf(stderr, "%s:%d: %s: %s (ignored in a destructor)\n", file, line, what,
                 cudaGetErrorString(e));
}

}  // namespace gemflow::distgeom::cuda::detail

#define GF_CUDA_TRY(call) ::gemflow::distgeom::cuda::detail::check((call), #call, __FILE__, __LINE__)
#define GF_CUDA_TRY_NOTHROW(call) \
  ::gemflow::distgeom::cuda::detail::check_nothrow((call), #call, __FILE__, __LINE__)
#define GF_CUDA_CHECK_LAUNCH(name)                                                        \
  ::gemflow::distgeom::cuda::detail::check(cudaGetLastError(), "launch of " name, __FILE__, \
                                           __LINE__)
#define GF_EXPECTS(cond, message)                         \
  do {                                                    \
    if (!(cond)) throw std::invalid_argument(message);    \
  } while (0)
