#pragma once
// Circle packing: radii whose angle sums meet their targets (gemflow/circlepack/complex.hpp).
//
// Angle at v of a face (v, a, b), by the law of cosines in its half-angle form (no
// cancellation for thin triangles, Collins & Stephenson 2003, §2):
//   Euclidean:  sin²(α/2) = a/(v+a) · b/(v+b)                       (radii; a = ∞: factor 1)
//   hyperbolic: sin²(α/2) = F(v,a)·F(v,b),  F(v,a) = s_v(1−s_a²)/(1−s_v²s_a²)
//               (s-radii s = e^{−h}; a horocycle, s_a = 0: F = s_v)  (Stephenson 2005, §3.3)
// A face with two ideal vertices (a corner between two lines) has the fixed angle the complex
// stores. Angle sums are accumulated in the working precision (fp32 or fp64).
//
// Algorithms:
// - cs_plain: Collins–Stephenson's Gauss–Seidel sweep (2003, §3): for v with k faces and angle
//   sum θ, β = sin(θ/2k) gives the radius ρ of k equal neighbours with the same sum
//   (Euclidean: ρ = r·β/(1−β)); with δ = sin(A/2k) for the target A the new radius is the one
//   that ρ-flower would need (Euclidean: r' = ρ(1−δ)/δ; hyperbolic: the same in s-radii, solved
//   in closed form). Vertices in index order, one sweep per iteration.
// - cs: cs_plain with Collins–Stephenson's super-steps (2003, §4): when two successive sweeps
//   change the log-labels in nearly the same direction (cosine > 0.99) and the change shrinks by
//   λ < 1, extrapolate by λ/(1−λ) along it (the geometric series' sum), kept only when it
//   lowers the angle error.
// - newton: Newton's method on the convex functional of the log-radii u = log r whose gradient
//   is A − θ (Colin de Verdière, Invent. Math. 104 (1991) 655–669; Bobenko & Springborn, Trans.
//   AMS 356 (2004) 659–689). Its Hessian is the weighted graph Laplacian L of the free vertices,
//   w_vw = Σ over the faces at edge vw of ρ_f/(r_v + r_w), ρ_f = √(r_v r_w r_x/(r_v+r_w+r_x))
//   the face's inradius (√(r_v r_w) when x is a line), symmetric positive definite once a radius
//   is fixed (with angle sums only, the first free vertex is pinned: the scale is free). Each
//   step solves L δ = θ − A and backtracks on the residual norm ‖θ − A‖₂ (halving up to 30
//   times, steps capped at 2 in log-radius). With a pinned vertex, Gauss–Bonnet makes Σ(θ − A)
//   over the free vertices a constant that is 0 in exact arithmetic but the summed rounding of
//   the targets in fp64 (N·|fl(2π) − 2π|: 1.2e-12 at N = 5050), or a corner-angle gap within
//   setup_problem's 1e-9 check; the steps drive every residual to the mean ḡ of that sum
//   (right-hand side θ − A − ḡ, merit ‖θ − A − ḡ‖₂ over every free vertex), so it is spread
//   over all N vertices instead of left on the pinned one, where it would bound the error. The first step factorises L
//   (Eigen's SimplicialLDLT, pattern analysed once); later steps keep that factorisation as the preconditioner of
//   conjugate gradients on the current L, started from the chord step, to the relative residual min(0.1, max|θ − A|)
//   (no finer than needed to end a tenth below the tolerance): inexact Newton (Dembo, Eisenstat & Steihaug, SIAM J.
//   Numer. Anal. 19 (1982) 400–408). When 12 iterations do not reach it, or the inexact step fails the line search, L
//   is factorised afresh. Euclidean, fp64 only (PackError otherwise).
//
// Convergence: max over free vertices of |θ(v) − A(v)| (radians) below `tolerance`, checked on
// the radii after a sweep or step (the angle sums recomputed, not the ones seen during the sweep).
#include <chrono>
#include <cstddef>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "gemflow/circlepack/complex.hpp"

namespace gemflow::circlepack {

enum class Algorithm { cs_plain, cs, newton };
enum class Precision { fp64, fp32 };

struct PackOptions {
  Algorithm algorithm = Algorithm::cs;
  Precision precision = Precision::fp64;
  double tolerance = 1e-10;                 ///< on max |θ − A| (radians)
  std::size_t max_iterations = 10'000'000;  ///< sweeps (cs) or Newton steps
  /// Called after every iteration with (iteration, error); returns false to stop (cancel).
  std::function<bool(std::size_t, double)> monitor;
  /// Record the error every `history_every` iterations (and the last); 0: only the last.
  std::size_t history_every = 1;
  /// CPU algorithms: called with the current labels after the first iteration and then at most
  /// every `preview_seconds` (to show the packing converging); empty: never.
  std::function<void(const std::vector<double>&)> preview;
  double preview_seconds = 0.2;
};

/// Sweeps over which cs and cs_plain must lower their least error by 1 %, else they stop.
inline constexpr std::size_t kStagnationSweeps = 1000;

struct PackResult {
  std::vector<double> labels;  ///< Euclidean radii or hyperbolic s-radii (fixed ones unchanged)
  std::size_t iterations = 0;
  double error = 0;  ///< max |θ − A| over free vertices at the end (fp64 evaluation)
  bool converged = false;
  bool cancelled = false;
  /// cs, cs_plain: stopped early because the error stagnated (the least error seen fell by less
  /// than 1 % in kStagnationSweeps sweeps): the precision's floor is above the tolerance.
  bool stagnated = false;
  std::size_t supersteps = 0;        ///< cs: extrapolations accepted
  std::size_t inner_iterations = 0;  ///< newton: conjugate-gradient iterations over all steps
  std::size_t factorisations = 0;    ///< CPU newton: Cholesky factorisations of the Hessian
  double seconds = 0;
  /// GPU newton: seconds per phase, in order ("setup and upload": device selection, stream,
  /// allocations and copies; "weights and CG"; "line search"; "error checks"; "download and host
  /// check": the radii back and the fp64 error on the host). Empty otherwise.
  std::vector<std::pair<std::string, double>> phases;
  std::vector<std::size_t> history_iteration;
  std::vector<double> history_error;
};

/// Angle sums of every non-ideal vertex at `labels` (fp64); NaN for ideal vertices.
[[nodiscard]] std::vector<double> angle_sums(const Complex& K, Geometry g, const std::vector<double>& labels);
/// max over free vertices of |θ − A| (fp64).
[[nodiscard]] double angle_error(const Complex& K, const Problem& p, const std::vector<double>& labels);
/// Solves `p` on `K`. Throws PackError: Newton in hyperbolic geometry or fp32; labels of the
/// wrong size. A run that does not converge within max_iterations returns converged = false.
[[nodiscard]] PackResult pack(const Complex& K, const Problem& p, const PackOptions& o);

/// Hyperbolic radius h of an s-radius (∞ for 0).
[[nodiscard]] inline double hyperbolic_radius(double s) { return -std::log(s); }

}  // namespace gemflow::circlepack
