#pragma once
// Normwise measures of a computed solution x of A x = b, shared by the CPU solves, the report and
// the GPU mixed solve (host and device alike):
//   ρ = ‖r‖ / (‖A‖·‖x‖)           (relative residual)
//   η = ‖r‖ / (‖A‖·‖x‖ + ‖b‖)     (Rigal & Gaches' normwise backward error; Higham, "Accuracy
//                                  and Stability of Numerical Algorithms", 2nd ed., Thm 7.1)
// computed with every term scaled by a power of two first: ‖A‖·‖x‖ (QA: b = 1e308·1 with
// ‖A‖∞ = 5) and ‖A‖ + ‖b‖/‖x‖ (QA: diag(1e308, 1), b = A·1) overflow for finite A, x and b, and
// r/∞ = 0 then claimed a converged, exact solution. Arguments are norms (≥ 0; NaN propagates; an
// infinite ‖A‖ or ‖x‖ gives NaN: not measurable, never 0); the products feed ldexp, not an
// addition, so host and device round alike (no FMA contraction).
//   ω = max_i |r_i| / (|A|·|x| + |b|)_i   (Oettli & Prager's componentwise backward error; Higham,
//                                          Thm 7.3; LAPACK dporfs's BERR)
// ω is invariant under row and column scaling of A; η is not, and a badly scaled system can have
// η at rounding level while its small components of x are wrong (QA: A = diag(1e200, 1e-200)).

#include <cmath>

#if defined(__CUDACC__)
#define GF_NORMWISE_HD __host__ __device__
#else
#define GF_NORMWISE_HD
#endif

namespace gemflow::linalg::detail {

/// η for one column; x = 0 gives ‖r‖/‖b‖ (= 1 when r = b), r = 0 gives 0.
template <class R>
GF_NORMWISE_HD inline R normwise_backward_error(R rn, R anorm, R xn, R bn) {
  using std::ilogb, std::isinf, std::isnan, std::ldexp;
  if (isnan(rn) || isnan(anorm) || isnan(xn) || isnan(bn)) return rn + anorm + xn + bn;
  if (rn == R(0)) return R(0);
  if (xn == R(0) || anorm == R(0)) return rn / bn;      // b = 0 with r ≠ 0: ∞
  if (isinf(anorm) || isinf(xn)) return anorm - anorm;  // NaN
  // rn / (anorm·xn + bn), each term scaled by 2^−e, 2^e about the larger of anorm·xn and bn
  const int ea = ilogb(anorm), ex = ilogb(xn);
  const int e = bn > R(0) && ilogb(bn) > ea + ex ? ilogb(bn) : ea + ex;
  const R ax = ldexp(ldexp(anorm, -ea) * ldexp(xn, -ex), ea + ex - e);
  return ldexp(rn, -e) / (ax + ldexp(bn, -e));
}

/// ρ for one column; x = 0 with r ≠ 0 gives ∞.
template <class R>
GF_NORMWISE_HD inline R normwise_relative_residual(R rn, R anorm, R xn) {
  using std::ilogb, std::isinf, std::isnan, std::ldexp;
  if (isnan(rn) || isnan(anorm) || isnan(xn)) return rn + anorm + xn;
  if (rn == R(0)) return R(0);
  if (xn == R(0) || anorm == R(0)) return rn / R(0);
  if (isinf(anorm) || isinf(xn)) return anorm - anorm;  // NaN
  const int ea = ilogb(anorm), ex = ilogb(xn);
  return ldexp(rn, -(ea + ex)) / (ldexp(anorm, -ea) * ldexp(xn, -ex));
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
