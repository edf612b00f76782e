#pragma once
// Helpers shared by the linalg GPU tests (CUDA builds only): error checks, a device buffer, and
// the GEMFLOW_TEST_SEED convention (every test prints its seed; set the variable to reproduce).
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

namespace gemflow::linalg::testing {

inline void ok(cudaError_t e, const char* what) {
  if (e != cudaSuccess) throw std::runtime_error(std::string(what) + ": " + cudaGetErrorString(e));
}

/// `count` elements of T on the device (at least one allocated); put/get copy whole vectors.
template <class T>
struct Dev {
  T* p = nullptr;
  std::size_t n = 0;
  explicit Dev(std::size_t count) : n(count) { ok(cudaMalloc(&p, sizeof(T) * std::max<std::size_t>(count, 1)), "cudaMalloc"); }
  ~Dev() { cudaFree(p); }
  Dev(const Dev&) = delete;
  Dev& operator=(const Dev&) = delete;
  void put(const std::vector<T>& h) { ok(cudaMemcpy(p, h.data(), sizeof(T) * h.size(), cudaMemcpyHostToDevice), "H2D"); }
  std::vector<T> get() const {
    std::vector<T> h(n);
    ok(cudaMemcpy(h.data(), p, sizeof(T) * n, cudaMemcpyDeviceToHost), "D2H");
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
