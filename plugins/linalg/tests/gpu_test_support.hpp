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
/// passes a valid pointer); p is buf.data(); put/get copy whole vectors synchronously.
template <class T>
struct Dev {
  explicit Dev(std::size_t count) : buf(std::max<std::size_t>(count, 1)), p(buf.data()), n(count) {}
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
