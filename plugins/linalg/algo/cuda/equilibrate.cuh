#pragma once
// Power-of-two equilibration of an SPD matrix for the FP16 modes (cholesky.cu, spd_solve_mixed.cu):
// A ← S·A·S with S = diag(2^e_i), 2^(2·e_i)·a_ii ∈ [0.5, 2), so |a_ij| < 2 and |l_ij| < 1.42 for SPD
// A (fp16 holds ±65504); exact in binary. Higham, Pranesh & Zounon, SIAM J. Sci. Comput. 41 (2019).
#include <cstdint>

namespace gemflow::linalg::cuda::detail {

/// e such that 2^(2e)·d ∈ [0.5, 2); 0 when d is not a positive finite number (the factorisation
/// fails at or before that pivot anyway).
template <class T>
__device__ __forceinline__ int equilibration_exponent(T d) {
  if (!(d > T(0)) || !isfinite(d)) return 0;
  int ex = 0;
  (void)frexp(static_cast<double>(d), &ex);  // d = m·2^ex, m ∈ [0.5, 1)
  return -(ex >> 1);                          // −⌊ex/2⌋
}

/// e[i] = equilibration_exponent(a_ii), i < n.
template <class T>
__global__ void equilibrate_exponents_kernel(const T* a, std::int64_t lda, std::int64_t n, int* e) {
  const std::int64_t i = blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x;
  if (i < n) e[i] = equilibration_exponent(a[i + i * lda]);
}

}  // namespace gemflow::linalg::cuda::detail
