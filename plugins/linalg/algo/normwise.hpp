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
//   ω = max_i |r_i| / (|A|·|x| + |b|)_i   (Oettli & Prager's componentwise backward error; Higham,
//                                          Thm 7.3; LAPACK dporfs's BERR)
// ω is invariant under row and column scaling of A; η is not, and a badly scaled system can have
// η at rounding level while its small components of x are wrong (QA: A = diag(1e200, 1e-200)).

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

/// The componentwise steps of the mixed solves (CPU and GPU) solve each right-hand side in bands of
/// entries whose binary exponents (of S·r) lie within this many of each other, one fp32 solve per
/// band: each band then peaks near 1 (GPU: near 2^t, |t| ≤ 64 for A within fp32) and its smallest
/// entries stay normal in fp32 (2^−126). In one solve, the entries more than 2^126 below the
/// largest flush to 0, and the refinement never sees them.
constexpr int kSolveBandBits = 48;

/// ω_i for one row from |r_i| and den = (|A|·|x| + |b|)_i: 0/0 = 0 (b_i = 0 and every product 0
/// make r_i = 0), r ≠ 0 over 0 = ∞; NaN propagates.
template <class R>
GF_NORMWISE_HD inline R componentwise_ratio(R rabs, R den) {
  if (rabs == R(0)) return R(0);
  return rabs / den;
}

}  // namespace gemflow::linalg::detail

#undef GF_NORMWISE_HD
