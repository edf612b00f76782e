#pragma once
// The componentwise steps of the mixed-precision solves (CPU spd_solve.cpp, GPU
// spd_solve_mixed.cu): once the normwise η has converged, refinement goes on while it lowers the
// componentwise backward error ω (normwise.hpp) toward the tolerance, as LAPACK dporfs refines
// BERR (a step that does not halve ω is the last; one that does not lower it, or that lifts η
// above the tolerance, is undone). See RefinementOptions::componentwise_threshold.
#include <algorithm>
#include <vector>

namespace gemflow::linalg::detail {

/// keep() saves x; step() adds the banded fp32 solve of the current residual to x; eta() forms the
/// new residual and returns its η; omega_of() returns ω of the current x; restore() puts the kept x
/// back. omega: ω of the converged x. iterations, steps and history (η per step) grow with each
/// kept step. Returns ω of the x left; `converged` turns false when the steps ran and ω stays above
/// max(threshold, tol) (the budget spent, or steps that stall): the caller's fp64 fallback.
template <class Keep, class Step, class Eta, class Omega, class Restore>
double componentwise_steps(Keep keep, Step step, Eta eta, Omega omega_of, Restore restore, double omega,
                           double threshold, double tol, int max_iterations, int& iterations, int& steps,
                           std::vector<double>& history, bool& converged) {
  const bool wanted = omega > threshold;  // NaN: no
  while (wanted && omega > tol && iterations < max_iterations) {
    keep();
    step();
    const double eta2 = eta();
    const double omega2 = omega_of();
    if (!(eta2 <= tol) || !(omega2 < omega)) {  // no gain: the converged x stays
      restore();
      break;
    }
    ++iterations;
    ++steps;
    history.push_back(eta2);
    const bool halved = omega2 <= 0.5 * omega;
    omega = omega2;
    if (!halved) break;
  }
  if (wanted && !(omega <= std::max(threshold, tol))) converged = false;
  return omega;
}

}  // namespace gemflow::linalg::detail
