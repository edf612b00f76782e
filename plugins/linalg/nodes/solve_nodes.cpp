// linalg.spd_solve: node adapter over gemflow/linalg/spd_solve.hpp.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <limits>
#include <optional>
#include <sstream>
#include <string>

#include <gemflow/linalg/spd_solve.hpp>
#include <gemflow/memory.hpp>
#include <gemflow/node.hpp>
#include <gemflow/types.hpp>

#include "placement.hpp"
#include "register.hpp"

namespace gemflow::linalg {
namespace {

std::string sci(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.3e", v);
  return buf;
}

class SpdSolveNode final : public Node {
 public:
  static NodeInfo info() {
    return {.id = "linalg.spd_solve",
            .version = 1,
            .title = "SPD solve (Cholesky)",
            .category = "Linear algebra",
            .doc =
                "Solves A X = B for a symmetric positive definite A by Cholesky.\n"
                "Inputs: matrix, n×n Matrix<f64>, symmetric (checked to a few ulps; the lower triangle is "
                "used); rhs, n×k Matrix<f64>, optional: when absent b = A·1 (accumulated in long double, then "
                "rounded) so that the exact solution x* = 1 is known and the forward error is reported.\n"
                "Outputs: solution, n×k Matrix<f64>; report, Table of one row: n, nrhs, rhs, algorithm, device, "
                "precision, method, relative_residual ρ = max_c ‖b_c − A x_c‖∞ / (‖A‖∞ ‖x_c‖∞) (∞-norms; "
                "the normwise backward error w.r.t. A, O(u) for a backward-stable solve whatever κ(A)), "
                "backward_error η = ‖r‖∞ / (‖A‖∞ ‖x‖∞ + ‖b‖∞) (Rigal–Gaches), componentwise_backward_error "
                "ω = max_i |r_i| / (|A|·|x| + |b|)_i (Oettli–Prager; unchanged by scaling rows and columns of A, "
                "so ω ≈ 1e-16 means every component is as accurate as its own condition allows), "
                "forward_error ‖x − 1‖∞ "
                "(NaN, i.e. null in JSON, when rhs is given; expect about κ(A)·ρ), norm (the norm of these "
                "columns: 'inf-norm'), refinement (what the mixed "
                "refinement did, 'none' otherwise), iterations, backward_error_history (mixed: η after the "
                "fp32 solve and after each step, those for ω included: componentwise_threshold), seconds "
                "(the solve alone: factor, solves, refinement; on "
                "CUDA also the transfers and the stream/cuBLAS/cuSOLVER handle set-up, which dominate for small "
                "n: benchmark the algorithms with linalg's bench, not with this column).\n"
                "CPU: LAPACK dpotrf + dpotrs (fp64), spotrf + spotrs (fp32), spotrf of the equilibrated "
                "S·A·S (S = diag(2^e_i)) + fp64 refinement with an fp64 fallback like LAPACK dsposv (mixed). "
                "CUDA: GpuCholesky factor (blocked, recursive, "
                "cuSOLVER, lookahead or tiled) + cuBLAS trsm; mixed: GpuCholesky::solve_mixed (lookahead fp32 "
                "factor with 1×FP16 products on an equilibrated copy of A, escalated to 3×FP16 when its "
                "refinement stalls; recursive: 1×TF32, escalated to 3×TF32; tiled: 1×FP16 tile updates, escalated to "
                "the 3×FP16 lookahead). Mixed on both devices: when "
                "refinement with the final fp32 factor is slow, GMRES-IR (FGMRES in fp64 preconditioned by the "
                "fp32 factor) before the fp64 fallback: classic refinement stops near κ(A) ≈ 1e7, GMRES-IR "
                "converged up to κ ≈ 3e11 in the tests (as long as the fp32 factor exists).",
            .errors =
                "Not square, not symmetric, NaN/Inf, rhs rows ≠ n; b = A·1 or the solution beyond the double "
                "range; not positive definite names the leading minor k that fails; a GPU algorithm on the CPU "
                "or lapack on CUDA; precision mixed with algorithm blocked or cusolver, a tolerance below 2⁻⁵³ "
                "(parameter rules, reported before a run); device cuda without a device. Never falls back to "
                "the CPU silently: device auto logs its choice.",
            .memory =
                "Host: 8 bytes per entry of the n×n matrix for the factor or CUDA's staging copy (CPU fp32: 4, "
                "CPU mixed: 12) and 40 bytes per entry of the n×k right-hand sides. Device: n² + 2·n·k doubles (fp32: "
                "floats) "
                "plus the factorisation's workspace.",
            .determinism = "Deterministic for a given BLAS build / device and library version.",
            .references =
                "LAPACK dpotrf/dpotrs/dsposv; Langou et al., SC 2006; GMRES-IR: Carson & Higham, SIAM J. Sci. "
                "Comput. 40 (2018) A817; Higham, Accuracy and Stability of Numerical Algorithms, 2002, ch. 7 "
                "and 10.",
            .rules = rules()};
  }
  enum class Prec { Fp64, Fp32, Mixed };
  static std::vector<ParamRule> rules() {
    std::vector<ParamRule> r = fp32_products_rules();
    r.push_back({.param = "algorithm",
                 .when = {std::string("blocked"), std::string("cusolver")},
                 .other = "precision",
                 .other_value = std::string("mixed"),
                 .must = false,
                 .why = "the mixed solve factors in fp32 with the lookahead, the recursive or the tiled algorithm on "
                        "CUDA or with LAPACK on the CPU"});
    // η of an fp64 solution does not go below about 2⁻⁵³: a smaller tolerance is never met and would
    // run every step, then fall back to fp64; negative: the default √n·2⁻⁵³
    r.push_back({.param = "tolerance",
                 .other_value = 0x1p-53,
                 .why = "the backward error of an fp64 solution is about 2⁻⁵³ = 1.1e-16 at best; a negative value "
                        "gives the default √n·2⁻⁵³",
                 .compare = ParamCompare::GreaterEqual,
                 .unless_below = 0.0});
    return r;
  }

  Input<Matrix<double>> matrix{this, "matrix", "Symmetric positive definite matrix A, n×n"};
  Input<Matrix<double>> rhs{this, "rhs", "Right-hand sides B, n×k; absent: b = A·1 (known solution 1)",
                            PortUse::Optional};
  Output<Matrix<double>> solution{this, "solution", "X, n×k, with A X = B"};
  Output<Table> report{this, "report", "One row: residuals, forward error, algorithm, device, precision, timings"};
  DeviceParam device{this};
  Choice<CholAlgo> algorithm = cholesky_algorithm_param(
      this,
      "auto: lapack on the CPU; on CUDA tiled below n = 9216 (fp32: 6656), else lookahead "
      "(precision mixed: always lookahead). lapack: CPU (dpotrf). blocked, recursive, cusolver, lookahead, "
      "tiled: CUDA only (see gemflow/linalg/cholesky_cuda.hpp); precision mixed takes auto, lapack (CPU), "
      "lookahead, recursive or tiled (CUDA; tiled: 1xFP16 or exact products)");
  Choice<Prec> precision{this,
                         "precision",
                         Prec::Fp64,
                         {{Prec::Fp64, "fp64"}, {Prec::Fp32, "fp32"}, {Prec::Mixed, "mixed"}},
                         {.doc = "fp64; fp32 (factor and solve in single, no refinement: ρ ≈ 1e-7 at best); "
                                 "mixed (fp32 factor, refinement to fp64 backward error, fp64 fallback)"}};
  Param<std::int64_t> max_iterations{
      this,
      "max_iterations",
      30,
      {.min = 0, .max = 1000, .doc = "mixed: refinement steps before the fp64 fallback (LAPACK dsposv: 30)"}};
  Choice<Products> fp32_products = fp32_products_param(
      this,
      "precision fp32 or mixed on CUDA: how the fp32 factor's GEMMs run. auto: exact for fp32; for mixed "
      "1xFP16 escalating to 3xFP16 (recursive: 1xTF32 → 3xTF32). exact, 3xTF32, 3xFP16: fp32 accuracy "
      "(no escalation); 1xTF32, 1xFP16: one tensor-core product (mixed: escalated to three when refinement "
      "stalls). TF32: lookahead or recursive; 3xFP16: lookahead; 1xFP16 (fp32): lookahead or tiled (auto picks "
      "one). CPU: auto or exact");
  Param<bool> gmres{this,
                    "gmres",
                    true,
                    {.doc = "mixed: GMRES-IR when refinement with the fp32 factor is slow (false: classic refinement "
                            "only, as LAPACK dsposv)"}};
  Param<double> tolerance{this,
                          "tolerance",
                          -1.0,
                          {.doc = "mixed: stop when the backward error η ≤ tolerance; negative: √n·2⁻⁵³ (dsposv)"}};
  Param<double> componentwise_threshold{
      this,
      "componentwise_threshold",
      0x1p-12,
      {.min = 0.0,
       .doc = "mixed: once η ≤ tolerance, when the componentwise backward error ω exceeds this, further steps "
              "lower ω toward the tolerance; if they cannot bring it within the threshold, the fp64 fallback "
              "(default 2⁻¹² ≈ 2.4e-4: the fp32 solves lost some component, e.g. beyond fp32's range; the small "
              "components of a badly scaled system may still be far less accurate than fp64's: ω ≈ 1e-7 leaves "
              "them fp32-accurate, and ω ≈ 5e-9 with κ = 1e8 left a 1e-150 block 10% off; 0: always, every "
              "component as accurate as fp64 makes it, at a step or two more; 1: never, η alone as LAPACK "
              "dsposv)"}};

  void execute(NodeContext& ctx) override {
    const Matrix<double>& a = *matrix;
    const std::size_t n = a.rows();
    if (a.rows() != a.cols())
      throw InputError("input 'matrix' must be square, got " + std::to_string(a.rows()) + "×" +
                       std::to_string(a.cols()));
    if (n == 0) throw InputError("input 'matrix' is empty (0×0)");
    check_values(a, "matrix");
    check_symmetric(a);

    // Right-hand sides.
    const bool known = !rhs.connected();
    Matrix<double> b;
    if (known) {
      b = Matrix<double>(n, 1);
      for (std::size_t i = 0; i < n; ++i) {
        long double s = 0.0L;
        for (std::size_t j = 0; j < n; ++j) s += static_cast<long double>(i >= j ? a(i, j) : a(j, i));
        b(i, 0) = static_cast<double>(s);
        if (!std::isfinite(b(i, 0)))  // QA: an overflowing A·1 gave a solve "done" with an infinite x
          throw InputError("b = A·1 overflows double precision in row " + std::to_string(i) + " (its row sum is " +
                           sci(static_cast<double>(s)) + "): connect a right-hand side to input 'rhs', or scale A");
      }
    } else {
      b = *rhs;
      if (b.rows() != n)
        throw InputError("input 'rhs' has " + std::to_string(b.rows()) + " rows, 'matrix' is " + std::to_string(n) +
                         "×" + std::to_string(n));
      if (b.cols() == 0) throw InputError("input 'rhs' has no columns");
      check_values(b, "rhs");
    }
    const std::size_t k = b.cols();

    // Device and algorithm: never a silent fallback.
    const SolvePrecision prec = *precision == Prec::Fp64   ? SolvePrecision::fp64
                                : *precision == Prec::Fp32 ? SolvePrecision::fp32
                                                           : SolvePrecision::mixed;
    // wrong on every device (these algorithms run on CUDA only, where the mixed solve factors with
    // the lookahead, the recursive or the tiled algorithm): said before the device is looked at (QA)
    if (prec == SolvePrecision::mixed && (*algorithm == CholAlgo::Blocked || *algorithm == CholAlgo::Cusolver))
      throw InputError("parameter 'algorithm' = " + algo_name(*algorithm) +
                       " cannot run precision mixed: the mixed solve factors in fp32 with the lookahead, the "
                       "recursive or the tiled algorithm on CUDA (GpuCholesky::solve_mixed) or with LAPACK on the "
                       "CPU; use algorithm auto, lookahead, recursive, tiled or lapack");
    Placement place = resolve_placement(ctx, device, *algorithm, n, prec);
    const Fp32Products products = resolve_products(ctx, *fp32_products, *algorithm, place, prec);
    const CholAlgo algo = place.algo;
    const Device& dev = place.dev;
    // η of an fp64 solution does not go below about ε = 2⁻⁵³: a smaller tolerance is never met and
    // would run every step, then fall back to fp64
    constexpr double kEps = 0x1p-53;
    if (tolerance.value() >= 0 && tolerance.value() < kEps)
      throw InputError("parameter 'tolerance' = " + sci(tolerance.value()) +
                       " cannot be met: the backward error of an fp64 solution is about 2⁻⁵³ = 1.1e-16 at best; use "
                       "at least that, or a negative value for the default √n·2⁻⁵³");
    RefinementOptions ro;
    ro.max_iterations = static_cast<int>(max_iterations.value());
    ro.tolerance = tolerance.value();
    ro.gmres = gmres.value();
    ro.componentwise_threshold = componentwise_threshold.value();

    // Memory for the factor: fp64 8n², fp32 4n², mixed 4n² + the fp64 fallback's 8n², CUDA a host
    // staging copy of 8n² (spd_solve.cpp, spd_solve_cuda.cpp)
    const double n2 = static_cast<double>(n) * static_cast<double>(n);
    const double per = dev.is_cuda()                  ? 8.0
                       : prec == SolvePrecision::fp64 ? 8.0
                       : prec == SolvePrecision::fp32 ? 4.0
                                                      : 12.0;
    require_host_memory(static_cast<std::size_t>(n2 * per + 40.0 * static_cast<double>(n * k)),
                        "solving with a " + std::to_string(n) + "×" + std::to_string(n) + " matrix (" +
                            precision_name(prec) + ", " + dev.str() + ")");

    // fp32: an entry below single precision's normal range keeps fewer digits, or none (QA: 4e-40
    // ran silently with ρ = 2.8e-6); mixed factors an equilibrated copy and needs no such word
    if (prec == SolvePrecision::fp32) {
      for (const auto& [m, port] : {std::pair<const Matrix<double>*, const char*>{&a, "A"}, {&b, "B"}})
        if (const auto ij = first_below_fp32_normal(*m)) {
          std::ostringstream w;  // (a chain of std::string + trips GCC 12's -Wrestrict false positive)
          w << port << "(" << ij->first << ", " << ij->second << ") = " << sci((*m)(ij->first, ij->second))
            << " is below single precision's normal range (1.2e-38): fp32 keeps it with fewer digits or as 0, "
               "and the solve loses accuracy; use precision fp64 or mixed";
          ctx.warn(w.str());
        }
    }

    // Solve.
    ctx.throw_if_cancelled();
    ctx.progress(0.0, "factorising (" + algo_name(algo) + ", " + precision_name(prec) + ", " + dev.str() + ")");
    Matrix<double> x(n, k);
    SpdSolveResult r;
    const auto t0 = std::chrono::steady_clock::now();
    if (dev.is_cuda()) {
      r = spd_solve_cuda(a.span(), n, b.span(), k, x.span(), prec, to_spd(algo), dev.index, ro, products);
    } else {
      r = spd_solve_cpu(a.span(), n, b.span(), k, x.span(), prec, ro, [&](double f) {
        ctx.throw_if_cancelled();  // within ~2·10⁹ flops of a Ctrl-C, not after the whole dpotrf
        ctx.progress(0.9 * f, "factorising");
        return true;
      });
    }
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    ctx.throw_if_cancelled();
    if (r.info != 0) {
      const bool single = prec == SolvePrecision::fp32 || (prec == SolvePrecision::mixed && !r.used_fp64_fallback);
      throw InputError("the matrix is not positive definite" + std::string(single ? " in single precision" : "") +
                       ": the leading minor of order " + std::to_string(r.info) + " (rows/columns 0.." +
                       std::to_string(r.info - 1) + ") is not positive" +
                       (single ? fp32_failure_hint(a, static_cast<std::size_t>(r.info - 1), "precision fp64 or mixed")
                               : std::string()));
    }
    // a solve that overflows is a failure, not a result with ρ = ∞ (QA: diag(1e-300) with b = 1e300)
    for (std::size_t i = 0; i < n; ++i)
      for (std::size_t c = 0; c < k; ++c)
        if (!std::isfinite(x(i, c)))
          throw InputError("the solution overflows double precision: X(" + std::to_string(i) + ", " +
                           std::to_string(c) + ") = " + (std::isnan(x(i, c)) ? std::string("NaN") : sci(x(i, c))) +
                           " (max |A| = " + sci(max_abs(a)) + ", max |B| = " + sci(max_abs(b)) +
                           "); scale A or B so that X fits (|x| < 1.8e308)");
    ctx.progress(0.9, "residuals");

    // Report.
    const ResidualNorms norms = residual_norms(a.span(), n, b.span(), k, x.span());
    double forward = std::numeric_limits<double>::quiet_NaN();
    if (known) {
      forward = 0.0;  // x is finite here
      for (double v : x.span()) forward = std::max(forward, std::abs(v - 1.0));
    }
    std::string refinement = "none", history;
    if (prec == SolvePrecision::mixed) {
      for (double e : r.backward_error) {  // appended piece by piece: GCC 12's -Wrestrict false positive
        if (!history.empty()) history += ' ';
        history += sci(e);
      }
      if (r.fp32_info != 0)
        refinement = r.fp32_info < 0
                         ? "A overflows fp32: fp64 fallback"
                         : "fp32 factor failed at leading minor " + std::to_string(r.fp32_info) + ": fp64 fallback";
      else {
        // ω is set once η has converged; not converged then means ω stayed above the threshold
        const bool eta_converged = r.converged || !std::isnan(r.componentwise_backward_error);
        refinement = (eta_converged ? "converged to η ≤ " : "no convergence to η ≤ ") + sci(r.tolerance) + " in " +
                     std::to_string(r.iterations - r.componentwise_steps) + " step(s)";
        if (r.gmres_steps > 0)
          refinement += " (" + std::to_string(r.gmres_steps) + " of them GMRES-IR, " +
                        std::to_string(r.gmres_iterations) + " FGMRES iterations)";
        if (r.componentwise_steps > 0)
          refinement +=
              ", then " + std::to_string(r.componentwise_steps) + " for ω = " + sci(r.componentwise_backward_error);
        if (!r.converged && eta_converged)
          refinement += ", but ω = " + sci(r.componentwise_backward_error) + " stayed above " +
                        (componentwise_threshold.value() >= r.tolerance
                             ? "componentwise_threshold = " + sci(componentwise_threshold.value())
                             : "the tolerance " + sci(r.tolerance) + " (componentwise_threshold " +
                                   sci(componentwise_threshold.value()) + ")");
        if (r.used_fp64_fallback) refinement += ": fp64 fallback";
      }
    }
    Table t;
    t.columns = {"n",
                 "nrhs",
                 "rhs",
                 "algorithm",
                 "device",
                 "precision",
                 "method",
                 "relative_residual",
                 "backward_error",
                 "componentwise_backward_error",
                 "forward_error",
                 "norm",
                 "refinement",
                 "iterations",
                 "backward_error_history",
                 "seconds"};
    t.rows.push_back({static_cast<std::int64_t>(n), static_cast<std::int64_t>(k),
                      std::string(known ? "A·1 (exact solution 1)" : "input"), algo_name(algo), dev.str(),
                      precision_name(prec), r.method, norms.relative_residual, norms.backward_error,
                      norms.componentwise_backward_error, forward, std::string("inf-norm"), refinement,
                      static_cast<std::int64_t>(r.iterations), history, seconds});
    ctx.info(r.method + " on " + dev.str() + ": n = " + std::to_string(n) + ", relative residual " +
             sci(norms.relative_residual) + (known ? ", forward error " + sci(forward) : std::string()) + ", " +
             sci(seconds) + " s" + (prec == SolvePrecision::mixed ? "; " + refinement : std::string()));
    if (r.used_fp64_fallback) ctx.warn("mixed precision fell back to fp64: " + refinement);
    ctx.record("algorithm", algo_name(algo));
    ctx.record("relative_residual", norms.relative_residual);
    ctx.record("componentwise_backward_error", norms.componentwise_backward_error);
    ctx.record("iterations", static_cast<std::int64_t>(r.iterations));
    solution.set(std::move(x));
    report.set(std::move(t));
    ctx.progress(1.0);
  }

 private:
  static std::string precision_name(SolvePrecision p) {
    return p == SolvePrecision::fp64 ? "fp64" : p == SolvePrecision::fp32 ? "fp32" : "mixed";
  }
  static double max_abs(const Matrix<double>& m) {
    double v = 0.0;
    for (double e : m.span()) v = std::max(v, std::abs(e));
    return v;
  }
  static void check_values(const Matrix<double>& m, const char* port) {
    for (std::size_t i = 0; i < m.rows(); ++i)
      for (std::size_t j = 0; j < m.cols(); ++j)
        if (!std::isfinite(m(i, j)))
          throw InputError(std::string("input '") + port + "' has a NaN or infinity at (" + std::to_string(i) + ", " +
                           std::to_string(j) + ")");
  }
  /// Symmetric to rounding (first_asymmetry: entrywise or against the diagonal); a
  /// non-symmetric matrix is refused, not half-read.
  static void check_symmetric(const Matrix<double>& a) {
    if (const auto ij = first_asymmetry(a)) {
      const auto [i, j] = *ij;
      throw InputError("input 'matrix' is not symmetric: A(" + std::to_string(i) + ", " + std::to_string(j) +
                       ") = " + full_precision(a(i, j)) + " but A(" + std::to_string(j) + ", " + std::to_string(i) +
                       ") = " + full_precision(a(j, i)) +
                       " (0-based); symmetrise it, e.g. (A + Aᵀ)/2, if that is what you mean");
    }
  }
};

}  // namespace

void register_solve_nodes(PluginRegistrar& r) { r.add_node<SpdSolveNode>(); }

}  // namespace gemflow::linalg
