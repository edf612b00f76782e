#pragma once
// The linalg benchmarks' stream (and cuBLAS handle) owner.
#include <cublas_v2.h>
#include <cuda_runtime.h>

#include <gemflow/cuda/check.hpp>
#include <gemflow/cuda/cublas.hpp>

/// A bench's non-blocking stream and, on request, a cuBLAS handle on it, both destroyed with the
/// scope (throws CudaError when creating them fails).
struct BenchStream {
  cudaStream_t s = nullptr;
  cublasHandle_t blas = nullptr;
  explicit BenchStream(bool with_blas = false) {
    GF_CUDA_TRY(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    try {
      if (with_blas) {
        GF_CUBLAS_TRY(cublasCreate(&blas));
        GF_CUBLAS_TRY(cublasSetStream(blas, s));
      }
    } catch (...) {
      release();
      throw;
    }
  }
  ~BenchStream() { release(); }
  void release() noexcept {
    if (blas) GF_CUDA_TRY_NO_THROW(cublasDestroy(blas));
    GF_CUDA_TRY_NO_THROW(cudaStreamDestroy(s));
  }
  BenchStream(const BenchStream&) = delete;
  BenchStream& operator=(const BenchStream&) = delete;
};
