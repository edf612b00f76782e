#pragma once
// Helpers shared by the linalg GPU tests (CUDA builds only): error checks, a device array over the
// SDK's DeviceBuffer, and the GEMFLOW_TEST_SEED convention (every test prints its seed; set the
// variable to reproduce).
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#include <gemflow/cuda/buffer.hpp>
#include <gemflow/cuda/check.hpp>

namespace gemflow::linalg::testing {

/// `count` elements of T on the device, at least one allocated (so that a zero-size case still
/// passes a valid pointer); p is buf.data(); put/get copy whole vectors synchronously. Every byte
/// starts as 0xFF (NaN in fp32 and fp64): an entry that the code under test should write and does
/// not shows as NaN instead of whatever the allocation held, and a test that copies back a region
/// nobody writes (the strict upper triangle of a factor, columns past the rank) reads defined
/// bytes, so compute-sanitizer initcheck reports only the library's own reads.
template <class T>
struct Dev {
  explicit Dev(std::size_t count) : buf(std::max<std::size_t>(count, 1)), p(buf.data()), n(count) {
    GF_CUDA_TRY(cudaMemset(p, 0xFF, sizeof(T) * std::max<std::size_t>(count, 1)));
  }
  ::gemflow::cuda::DeviceBuffer<T> buf;
  T* p;
  std::size_t n;
  void put(const std::vector<T>& h) {
    GF_CUDA_TRY(cudaMemcpy(p, h.data(), sizeof(T) * h.size(), cudaMemcpyHostToDevice));
  }
  std::vector<T> get() const {
    std::vector<T> h(n);
    GF_CUDA_TRY(cudaMemcpy(h.data(), p, sizeof(T) * n, cudaMemcpyDeviceToHost));
    return h;
  }
};

/// Seed of a test's matrices: GEMFLOW_TEST_SEED if set (reproduce a failure), else random.
inline std::uint64_t test_seed() {
  if (const char* e = std::getenv("GEMFLOW_TEST_SEED"); e && *e) return std::strtoull(e, nullptr, 0);
  std::random_device rd;
  return (std::uint64_t{rd()} << 32) ^ rd();
}

}  // namespace gemflow::linalg::testing
