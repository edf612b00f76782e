#pragma once
// Normwise measures of a computed solution x of A x = b, shared by the CPU solves, the report and
// the GPU mixed solve (host and device alike):
//   ρ = ‖r‖ / (‖A‖·‖x‖)           (relative residual)
//   η = ‖r‖ / (‖A‖·‖x‖ + ‖b‖)     (Rigal & Gaches' normwise backward error; Higham, "Accuracy
//                                  and Stability of Numerical Algorithms", 2nd ed., Thm 7.1)
// computed as (‖r‖/‖x‖) / ‖A‖ and (‖r‖/‖x‖) / (‖A‖ + ‖b‖/‖x‖): the product ‖A‖·‖x‖ overflows for
// finite A and x once ‖x‖ nears the double range, and r/∞ = 0 then claimed a converged, exact
// solution (QA: b = 1e308·1 with ‖A‖∞ = 5). Arguments are norms (≥ 0, or NaN, which propagates);
// only divisions and one addition, so host and device round alike (no FMA contraction).

#if defined(__CUDACC__)
#define GF_NORMWISE_HD __host__ __device__
#else
#define GF_NORMWISE_HD
#endif

namespace gemflow::linalg::detail {

/// η for one column; x = 0 gives ‖r‖/‖b‖ (= 1 when r = b), r = 0 gives 0.
template <class R>
GF_NORMWISE_HD inline R normwise_backward_error(R rn, R anorm, R xn, R bn) {
  if (rn == R(0)) return R(0);
  if (xn == R(0)) return rn / bn;  // b = 0 with r ≠ 0: ∞
  return (rn / xn) / (anorm + bn / xn);
}

/// ρ for one column; x = 0 with r ≠ 0 gives ∞.
template <class R>
GF_NORMWISE_HD inline R normwise_relative_residual(R rn, R anorm, R xn) {
  if (rn == R(0)) return R(0);
  return (rn / xn) / anorm;
}

}  // namespace gemflow::linalg::detail

#undef GF_NORMWISE_HD
