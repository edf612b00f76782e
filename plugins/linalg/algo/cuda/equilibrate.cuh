#pragma once
// Power-of-two equilibration of an SPD matrix for the FP16 modes (cholesky.cu, spd_solve_mixed.cu):
// A ← S·A·S with S = diag(2^e_i), 2^(2·e_i)·a_ii ∈ [0.5, 2), so |a_ij| < 2 and |l_ij| < 1.42 for SPD
// A (fp16 holds ±65504); exact in binary. Higham, Pranesh & Zounon, SIAM J. Sci. Comput. 41 (2019).
#include <cstdint>

#include "../equilibration.hpp"

namespace gemflow::linalg::cuda::detail {

using ::gemflow::linalg::detail::equilibration_exponent;  // ../equilibration.hpp, shared with the CPU

/// e[i] = equilibration_exponent(a_ii), i < n.
template <class T>
__global__ void equilibrate_exponents_kernel(const T* a, std::int64_t lda, std::int64_t n, int* e) {
  const std::int64_t i = blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x;
  if (i < n) e[i] = equilibration_exponent(a[i + i * lda]);
}

}  // namespace gemflow::linalg::cuda::detail
