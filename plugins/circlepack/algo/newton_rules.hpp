#pragma once
// Host-side rules of the Newton solvers (internal to the circlepack plugin): the scale gauge is
// shared by the CPU and the GPU launcher (cuda/pack_cuda.cu), so the CPU tests check its
// arithmetic; the forcing term is the CPU's.
#include <algorithm>
#include <cstddef>

namespace gemflow::circlepack::detail {

/// Inexact Newton's forcing term: the relative residual at which CG may stop, min(0.1, err)
/// (superlinear near the solution; Dembo, Eisenstat & Steihaug 1982), but no finer than the step
/// needs to bring the error a tenth below the tolerance (0.1·tolerance/err). err = max|θ − A| > 0.
[[nodiscard]] inline double newton_forcing(double err, double tolerance) {
  if (!(err > 0)) return 0.1;
  return std::min(0.1, std::max(err, 0.1 * tolerance / err));
}

/// The scale gauge of a scale-free problem (no finite radius fixed: lines or angle-sum
/// boundaries). Newton pins one free vertex, and Gauss–Bonnet ties the pinned vertex's residual
/// to the others': Σ over all free vertices of (θ − A) is constant in exact arithmetic, but in
/// fp64 it is the targets' and angle sums' rounding summed over every vertex (N·|fl(2π) − 2π|
/// alone is 1.2e-12 at N = 5050). Driving the unknowns' residuals to 0 would put that whole sum
/// on the pinned vertex, so the max error could not fall below it; Newton instead drives every
/// residual to their mean ḡ, which spreads it evenly (|ḡ| ~ 1e-16 at any N).
struct GaugeShift {
  double mean = 0;       ///< ḡ = (Σ_unknowns g + g_pinned)/(m + 1)
  double unknowns2 = 0;  ///< Σ over the unknowns of (g − ḡ)²: the Newton right-hand side's norm²
  double all2 = 0;       ///< unknowns2 + (g_pinned − ḡ)²: the line search's merit²
};

/// The gauge from the unknowns' Σg and Σg² (m of them) and the pinned vertex's residual.
[[nodiscard]] inline GaugeShift gauge_shift(double sum, double sum_sq, double pinned, std::size_t m) {
  GaugeShift s;
  const auto dm = static_cast<double>(m);
  s.mean = (sum + pinned) / (dm + 1);
  s.unknowns2 = std::max(0.0, sum_sq - 2 * s.mean * sum + dm * s.mean * s.mean);
  s.all2 = s.unknowns2 + (pinned - s.mean) * (pinned - s.mean);
  return s;
}

}  // namespace gemflow::circlepack::detail
