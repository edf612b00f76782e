#pragma once
// Solving A X = B for a symmetric positive definite A by Cholesky, on the CPU (LAPACK) or a CUDA
// GPU (the GpuCholesky factorisations of cholesky_cuda.hpp), in fp64, fp32 or mixed precision
// (fp32 factor, fp64 iterative refinement).
//
// Layout: A is n×n ROW-MAJOR and only its LOWER triangle (i ≥ j) is read, as in cholesky.hpp;
// B and X are n×nrhs row-major (column c of X solves A x = column c of B).
//
// Norms and error measures (∞-norms, max over the right-hand sides c):
//   relative residual  ρ = max_c ‖b_c − A x_c‖∞ / (‖A‖∞ ‖x_c‖∞)
//   backward error     η = max_c ‖b_c − A x_c‖∞ / (‖A‖∞ ‖x_c‖∞ + ‖b_c‖∞)   (Rigal–Gaches)
//   componentwise     ω = max_c max_i |b_c − A x_c|_i / (|A|·|x_c| + |b_c|)_i   (Oettli–Prager)
// ρ is the normwise backward error with respect to A alone. A backward-stable solve gives ρ of
// order u = 2⁻⁵³ ≈ 1.1e-16 (fp64) times a modest function of n, whatever the condition number
// κ(A); the forward error ‖x − x*‖/‖x*‖ is then about κ(A)·ρ. (Higham, "Accuracy and
// Stability of Numerical Algorithms", 2nd ed., 2002, Thm 7.1 and 10.4.) ω is the backward error
// with relative perturbations of each entry of A and b (Higham Thm 7.3; LAPACK dporfs's BERR): it
// does not change when rows and columns of A are scaled, so ω ≈ u gives every component of x the
// accuracy that its scale-independent condition number allows, where η ≈ u may leave the small
// components of a badly scaled system wrong.
//
// Sources: LAPACK dpotrf/dpotrs and spotrf/spotrs; mixed precision: Langou et al., "Exploiting
// the performance of 32 bit floating point arithmetic in obtaining 64 bit accuracy", SC 2006
// (LAPACK dsposv: at most 30 steps, stop when the residual is at √n·u level, fp64 fallback).
#include <cstddef>
#include <limits>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "gemflow/linalg/cholesky.hpp"       // PivotedCholesky
#include "gemflow/linalg/cholesky_cuda.hpp"  // cuda::Fp32Mode (declarations only: no CUDA headers)

namespace gemflow::linalg {

enum class SolvePrecision {
  fp64,   ///< factor and solve in double
  fp32,   ///< factor and solve in single (x converted to double; no refinement)
  mixed,  ///< fp32 factor, refinement with fp64 residuals until η ≤ tolerance (fp64 fallback)
};

/// Factorisation algorithm. `lapack` runs on the CPU, the others on a CUDA GPU (see
/// cholesky_cuda.hpp: CholeskyAlgo).
enum class SpdAlgorithm { lapack, blocked, recursive, cusolver, lookahead, tiled };

/// How a CUDA fp32 factor does its GEMMs (cuda::Fp32Mode: exact, 3×TF32, 1×TF32, 3×FP16, 1×FP16;
/// the TF32 modes need the lookahead or recursive algorithm, the FP16 modes the lookahead).
/// Empty: the default, exact for precision fp32; for mixed 1×FP16 escalating to 3×FP16
/// (lookahead) or 1×TF32 escalating to 3×TF32 (recursive).
using Fp32Products = std::optional<cuda::Fp32Mode>;

/// Iterative refinement of precision mixed.
struct RefinementOptions {
  int max_iterations = 30;    ///< refinement steps before the fp64 fallback (dsposv: 30)
  double tolerance = -1.0;    ///< stop when η ≤ tolerance; < 0: √n · 2⁻⁵³ (dsposv)
  bool fallback_fp64 = true;  ///< fp32 factor fails or no convergence: fp64 factor + solve
  /// When refinement with the (final) fp32 factor is slow (a step does not halve η, or more than
  /// 4 steps), GMRES-IR: each correction A d = r solved by FGMRES in fp64 (up to 50 iterations,
  /// to ‖r − A d‖₂ ≤ 1e-6‖r‖₂) right-preconditioned by the fp32 factor; its steps count in
  /// max_iterations. Converges for κ(A) far beyond classic refinement (about 1e7 in fp32) before
  /// any fallback. Carson & Higham, SIAM J. Sci. Comput. 40 (2018) A817.
  bool gmres = true;
  /// Once η ≤ tolerance: when ω > componentwise_threshold, further plain steps lower ω toward the
  /// tolerance, each solving the residual by exponent bands (no entry lost below fp32's range),
  /// kept only when it keeps η ≤ tolerance and lowers ω, the next only when it halved ω. η alone
  /// stops LAPACK dsposv; ω is the criterion of LAPACK's fixed-precision refinement (dporfs).
  /// When ω stays above both the threshold and the tolerance after them (the budget spent, steps
  /// that stall), the solve has not converged: the fp64 fallback.
  /// Default 2⁻¹² ≈ 2.4e-4 (√ of fp32's unit roundoff): the steps run when the fp32 solves lost
  /// some component, not when the small components are merely at fp32's accuracy (ω ≈ 1e-7: a
  /// row-scaled D·C·D, and ω grows with n: 2.3e-8 at n = 16384, 4.5e-8 at 32768 for b a column of A
  /// with the GPU's 1×FP16 factor). With the default, ω ≈ 5e-9 and κ = 1e8 left a block scaled
  /// 1e-150 10% off (its forward error is about κ·ω). QA: A = diag(1e200, 1e-200), b = A·1
  /// stopped at x = (1, 0), ω = 1; one more step gives (1, 1). 0: always to the tolerance, every
  /// component as accurate as its own condition allows (H200, n = 16384, that b: ω 2.3e-8 →
  /// 1.1e-15 in two steps, 10.0 → 12.5 ms); ≥ 1: never (ω ≤ 1 always), η alone as dsposv.
  double componentwise_threshold = 0x1p-12;
};

/// Outcome of a solve.
struct SpdSolveResult {
  /// 0: solved. k ≥ 1: the leading minor of order k is not positive definite (LAPACK INFO) in
  /// the precision that decided (fp64; fp32 for precision fp32; mixed: the fp64 fallback, or
  /// the fp32 factor when there is no fallback). X is then unspecified.
  int info = 0;
  int fp32_info = 0;                   ///< mixed: the fp32 factor's INFO (≥ 1: it failed; −1: A overflows fp32)
  std::vector<double> backward_error;  ///< mixed: η after the fp32 solve, then after each step
  int iterations = 0;                  ///< mixed: refinement steps taken (corrections applied)
  bool converged = false;              ///< mixed: refinement reached the tolerance
  bool used_fp64_fallback = false;     ///< mixed: the answer came from the fp64 fallback
  int gmres_steps = 0;                 ///< mixed: refinement steps that were GMRES-IR
  int gmres_iterations = 0;            ///< mixed: FGMRES iterations over those steps
  double tolerance = 0.0;              ///< mixed: the tolerance used
  /// mixed: refinement steps taken after η reached the tolerance, to lower ω
  /// (RefinementOptions::componentwise_threshold); they count in `iterations` and `backward_error`
  int componentwise_steps = 0;
  /// mixed: ω (see the file comment) of the returned x when the fp32 refinement converged; NaN
  /// otherwise (the fp64 fallback, precisions fp64 and fp32: see residual_norms), and on CUDA when
  /// a bound within componentwise_threshold, or a threshold ≥ 1, made ω unnecessary
  /// (cuda::MixedSolveResult)
  double componentwise_backward_error = std::numeric_limits<double>::quiet_NaN();
  std::string method;  ///< what ran, e.g. "LAPACK dpotrf + dpotrs"
};

/// CPU solve through LAPACK: fp64 = gemflow::linalg::cholesky (dpotrf) + dpotrs; fp32 =
/// cholesky (spotrf) + spotrs; mixed = spotrf, spotrs, then per step r = b − A x in fp64
/// (scaled into fp32 range), spotrs of the correction, x += d; GMRES-IR when that is slow
/// (RefinementOptions::gmres), then steps that lower ω (RefinementOptions::componentwise_threshold);
/// a solve that overflows fp32 is not converged (fp64 fallback). a: n·n, b and x: n·nrhs.
/// `on_flops`, when given, is called during each factorisation (the cancellable blocked cholesky
/// of cholesky.hpp; it may throw to cancel). Throws std::invalid_argument for bad sizes,
/// std::runtime_error when an fp32 solution overflows or `on_flops` stopped a factorisation.
/// Deterministic for a given BLAS build.
[[nodiscard]] SpdSolveResult spd_solve_cpu(std::span<const double> a, std::size_t n, std::span<const double> b,
                                           std::size_t nrhs, std::span<double> x, SolvePrecision precision,
                                           const RefinementOptions& refinement = {}, const FlopCallback& on_flops = {});

/// True when this build has the CUDA path (GEMFLOW_LINALG_HAVE_CUDA).
[[nodiscard]] bool spd_solve_cuda_built() noexcept;

/// GPU solve on CUDA device `device` (ordinal) with a GpuCholesky bound to a fresh stream:
/// fp64/fp32 = GpuCholesky::factor(algorithm) + two cuBLAS triangular solves (trsm) on the
/// device; mixed = GpuCholesky::solve_mixed (its fp32 factor is `algorithm`: lookahead with 1×FP16
/// products escalating to 3×FP16, tiled with 1×FP16 tile updates escalating to the 3×FP16
/// lookahead, or recursive with 1×TF32 escalating to 3×TF32; blocked and cusolver throw
/// std::invalid_argument; its tolerance
/// √n·2⁻⁵³ unless given, fallback to cuSOLVER fp64; `products` set: that mode, escalated only
/// from a one-product mode). `products` applies to fp32 and mixed (std::invalid_argument with fp64
/// or an algorithm the mode cannot run). A is uploaded column-major with the lower
/// triangle of the row-major input (the same triangle the CPU reads). Throws std::invalid_argument for
/// bad sizes or algorithm lapack, cuda::CudaError for CUDA failures and too little memory,
/// std::runtime_error when built without CUDA.
[[nodiscard]] SpdSolveResult spd_solve_cuda(std::span<const double> a, std::size_t n, std::span<const double> b,
                                            std::size_t nrhs, std::span<double> x, SolvePrecision precision,
                                            SpdAlgorithm algorithm, int device,
                                            const RefinementOptions& refinement = {}, Fp32Products products = {});

/// The factor alone on CUDA device `device` (the linalg.cholesky node): a (n×n row-major, lower
/// triangle read) → l (n×n row-major, L on and below the diagonal, zero above), by
/// GpuCholesky::factor with `algorithm` in fp64 or fp32 (fp32: the single-precision factor's
/// values; `products`: the fp32 factor's GEMMs, as for spd_solve_cuda). Returns LAPACK's INFO (≥ 1: the leading minor
/// of that order is not positive definite; l is then unspecified). Throws std::invalid_argument for bad sizes,
/// algorithm lapack or precision mixed; cuda::CudaError for CUDA failures; std::runtime_error when built without CUDA.
[[nodiscard]] int cholesky_cuda(std::span<const double> a, std::size_t n, std::span<double> l, SolvePrecision precision,
                                SpdAlgorithm algorithm, int device, Fp32Products products = {});

/// Pivoted Cholesky on CUDA device `device` (GpuCholesky::factor_pivoted: the steps of LAPACK
/// dpstf2, fp64): the result and the layout of l (n×n row-major: columns < rank hold L, the rest
/// zero) of gemflow::linalg::pivoted_cholesky on the same a. Throws like cholesky_cuda.
[[nodiscard]] PivotedCholesky pivoted_cholesky_cuda(std::span<const double> a, std::size_t n, std::size_t max_rank,
                                                    double tolerance, std::span<double> l, int device);

namespace detail {
/// Throws std::runtime_error (the solve overflowed single precision; use fp64 or mixed) when x
/// holds a NaN or an infinity: the fp32 paths of spd_solve_cpu and spd_solve_cuda.
void require_finite_fp32_solution(std::span<const double> x);
}  // namespace detail

/// ‖A‖∞ (max row sum of |a_ij|) of the symmetric matrix whose lower triangle is stored in a.
[[nodiscard]] double symmetric_norm_inf(std::span<const double> a, std::size_t n);

/// Residual measures of X (see the file comment): A symmetric from its lower triangle. In double
/// (BLAS dsymv); when ‖A‖∞, A·x or |A|·|x| + |b| overflow double although A, B and X are finite,
/// recomputed in long double, so ρ, η and ω stay meaningful (a_norm_inf is then +∞, its double
/// value). A non-finite X gives ρ = η = ω = +∞.
struct ResidualNorms {
  double relative_residual = 0.0;             ///< ρ
  double backward_error = 0.0;                ///< η (Rigal–Gaches)
  double componentwise_backward_error = 0.0;  ///< ω (Oettli–Prager)
  double residual_inf = 0.0;                  ///< max_c ‖b_c − A x_c‖∞
  double a_norm_inf = 0.0;                    ///< ‖A‖∞
};
[[nodiscard]] ResidualNorms residual_norms(std::span<const double> a, std::size_t n, std::span<const double> b,
                                           std::size_t nrhs, std::span<const double> x);

}  // namespace gemflow::linalg
