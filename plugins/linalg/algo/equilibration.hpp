#pragma once
// Power-of-two symmetric equilibration of an SPD matrix, shared by the CPU mixed solve and the
// GPU's FP16 modes: A ← S·A·S with S = diag(2^e_i), 2^(2·e_i)·a_ii ∈ [0.5, 2), exact in binary.
// For SPD A every entry then lies in (−2, 2) (|a_ij| ≤ √(a_ii·a_jj)) and |l_ij| < 1.42. Higham,
// Pranesh & Zounon, "Squeezing a matrix into half precision, with an application to solving
// linear systems", SIAM J. Sci. Comput. 41 (2019) A2536.
#include <cmath>

#if defined(__CUDACC__)
#define GF_EQUILIBRATION_HD __host__ __device__
#else
#define GF_EQUILIBRATION_HD
#endif

namespace gemflow::linalg::detail {

/// e such that 2^(2e)·d ∈ [0.5, 2); 0 when d is not a positive finite number (the factorisation
/// fails at or before that pivot anyway).
template <class T>
GF_EQUILIBRATION_HD inline int equilibration_exponent(T d) {
  if (!(d > T(0)) || !std::isfinite(static_cast<double>(d))) return 0;
  int ex = 0;
  (void)std::frexp(static_cast<double>(d), &ex);  // d = m·2^ex, m ∈ [0.5, 1)
  return -(ex >> 1);                              // −⌊ex/2⌋
}

}  // namespace gemflow::linalg::detail

#undef GF_EQUILIBRATION_HD
