#pragma once
// GMRES-based iterative refinement (GMRES-IR), shared by the CPU and GPU mixed-precision solves:
// when refinement with the fp32 factor M = L·Lᵀ of A stalls or is slow (κ(A)·‖A − M‖/‖A‖ near
// 1), each correction A d = r is solved by FGMRES in fp64, right-preconditioned by M⁻¹ (applied
// in fp32). The Krylov vectors live with the caller (host or device); this header holds the
// stage rule and the host-side least-squares part (Hessenberg columns, Givens rotations).
//
// Sources: Carson & Higham, "Accelerating the solution of linear systems by iterative refinement
// in three precisions", SIAM J. Sci. Comput. 40 (2018) A817 (GMRES-IR); Haidar, Tomov, Dongarra
// & Higham, "Harnessing GPU tensor cores for fast FP16 arithmetic to speed up mixed-precision
// iterative refinement solvers", SC18 (FGMRES with a half-precision factor); Saad, "A flexible
// inner-outer preconditioned GMRES algorithm", SIAM J. Sci. Stat. Comput. 14 (1993) 461.
#include <array>
#include <cmath>
#include <vector>

namespace gemflow::linalg::detail {

/// Refinement with the final fp32 factor hands over to GMRES-IR once a step fails to halve η, or
/// after kIrStepsBeforeGmres steps with that factor.
constexpr int kIrStepsBeforeGmres = 4;
/// FGMRES iterations per correction (one fp32 solve and one product with A each; no restart).
constexpr int kGmresIterations = 50;
/// Each correction's FGMRES stops at ‖r − A d‖₂ ≤ kGmresRelTol·‖r‖₂.
constexpr double kGmresRelTol = 1e-6;

/// Two factors whose product applied in turn divides by d (> 0, finite) without an overflow: 1/d,
/// 1 for d ≥ 2⁻¹⁰²², else 2⁶⁰⁰ and 1/(d·2⁶⁰⁰) (1/d would be ∞, and ∞·0 = NaN in the Krylov vector:
/// QA, a residual of 1e-310 made spotrs refuse a NaN right-hand side).
inline std::array<double, 2> divide_scale(double d) {
  if (d >= 0x1p-1022) return {1.0 / d, 1.0};
  return {0x1p600, 1.0 / (d * 0x1p600)};
}

/// stage_steps: solves with the current factor (the first solve or escalation included); eta,
/// prev: η after this step and the one before.
inline bool refinement_too_slow(int stage_steps, double eta, double prev) {
  return stage_steps > kIrStepsBeforeGmres || (stage_steps > 1 && !(eta < 0.5 * prev));
}

/// FGMRES (x₀ = 0, at most m iterations, no restart) on A d = r, the vectors held by `ops`:
///   double start()                       v₀ = r/‖r‖₂; returns ‖r‖₂ (0 or not finite: nothing done)
///   void precondition(int j)             z_j = M⁻¹ v_j
///   double arnoldi(int j, double* h)     w = A z_j orthogonalised against v₀ … v_j (coefficients
///                                        into h[0 … j]); v_{j+1} = w/‖w‖₂ when ‖w‖₂ > 0;
///                                        returns ‖w‖₂
///   void correct(const double* y, int k) x += Σ_{i<k} y_i z_i
/// Stops when the least-squares estimate of ‖r − A d‖₂ reaches rtol·‖r‖₂ or w = 0 (d exact in the
/// Krylov space), then corrects x. A non-finite Hessenberg entry stops it without a correction.
/// Returns the Arnoldi steps taken (preconditioner applications).
template <class Ops>
int fgmres(Ops& ops, int m, double rtol) {
  const double beta = ops.start();
  if (!(beta > 0) || !std::isfinite(beta)) return 0;
  std::vector<double> r(static_cast<std::size_t>(m) * m, 0.0), cs(m), sn(m), g(m + 1, 0.0), h(m + 1);
  g[0] = beta;
  int k = 0;
  for (int j = 0; j < m; ++j) {
    ops.precondition(j);
    const double hn = ops.arnoldi(j, h.data());
    h[j + 1] = hn;
    for (int i = 0; i < j; ++i) {  // the earlier rotations
      const double t = cs[i] * h[i] + sn[i] * h[i + 1];
      h[i + 1] = -sn[i] * h[i] + cs[i] * h[i + 1];
      h[i] = t;
    }
    const double den = std::hypot(h[j], h[j + 1]);
    if (!std::isfinite(den) || den == 0) return j + 1;
    cs[j] = h[j] / den;
    sn[j] = h[j + 1] / den;
    h[j] = den;
    g[j + 1] = -sn[j] * g[j];
    g[j] = cs[j] * g[j];
    for (int i = 0; i <= j; ++i) r[i + static_cast<std::size_t>(j) * m] = h[i];
    k = j + 1;
    if (std::abs(g[j + 1]) <= rtol * beta || hn == 0) break;
  }
  // back substitution R y = g
  std::vector<double> y(k);
  for (int i = k - 1; i >= 0; --i) {
    double s = g[i];
    for (int c = i + 1; c < k; ++c) s -= r[i + static_cast<std::size_t>(c) * m] * y[c];
    y[i] = s / r[i + static_cast<std::size_t>(i) * m];
  }
  ops.correct(y.data(), k);
  return k;
}

}  // namespace gemflow::linalg::detail
