// linalg.cholesky: node adapter over gemflow/linalg/cholesky.hpp (CPU) and the GPU factors of
// gemflow/linalg/spd_solve.hpp (cholesky_cuda, pivoted_cholesky_cuda).
#include <cmath>
#include <cstdio>
#include <limits>
#include <sstream>
#include <string>
#include <vector>

#include <gemflow/linalg/cholesky.hpp>
#include <gemflow/linalg/spd_solve.hpp>
#include <gemflow/memory.hpp>
#include <gemflow/node.hpp>
#include <gemflow/types.hpp>

#include "placement.hpp"
#include "register.hpp"

namespace gemflow::linalg {
namespace {

std::string g6(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.6g", v);
  return buf;
}

class CholeskyNode final : public Node {
 public:
  static NodeInfo info() {
    return {.id = "linalg.cholesky",
            .version = 1,
            .title = "Cholesky factorisation",
            .category = "Linear algebra",
            .doc =
                "Cholesky factor of a symmetric matrix: A = L Lᵀ, or PᵀAP ≈ L Lᵀ with pivoting.\n"
                "Inputs: matrix, n×n Matrix<f64>, symmetric; only the lower triangle is read (a warning "
                "names the first pair that differs beyond rounding).\n"
                "Outputs: factor, Matrix<f64> L, lower triangular, row-major. Plain: n×n with "
                "A = L Lᵀ. Pivoted: n×rank (rows in pivot order) with PᵀAP ≈ L Lᵀ, i.e. "
                "A(perm[k], perm[l]) ≈ (L Lᵀ)(k, l); permutation, Table (pivot, row): "
                "pivot k was original row/column `row` (0-based); empty for the plain factor.\n"
                "CPU (algorithm lapack): LAPACK dpotrf / spotrf (precision fp32), pivoted dpstrf (full rank) "
                "or dpstf2 steps (rank limit). CUDA: GpuCholesky::factor with algorithm blocked, recursive, "
                "cusolver, lookahead or tiled (auto: tiled below n = 9216, fp32 "
                "6656, else lookahead), fp64 or fp32; pivoted: GpuCholesky::factor_pivoted "
                "(dpstf2 steps, fp64). fp32 factors are returned as the single-precision values. Every pivot, "
                "the first too, must exceed the tolerance: one ≥ max diag A gives rank 0.",
            .errors =
                "A matrix that is not square or empty, NaN/Inf; plain factorisation of a matrix that is not "
                "positive definite names the leading minor k that fails (LAPACK INFO); rank or tolerance "
                "without pivoted, pivoted with precision fp32 or a GPU algorithm (parameter rules, reported "
                "before a run); a GPU algorithm on the CPU, lapack on CUDA, device cuda without a device. "
                "Never falls back to the CPU silently: device auto logs its choice. A pivoted factor warns "
                "that the matrix is not positive semidefinite when the diagonal left after its pivots has an "
                "entry below −max(tolerance, n·ε·max|a_ii|).",
            .memory =
                "Host: the n² factor (8 bytes per entry; fp32 4 more, CUDA a staging copy of 8 more). "
                "Device: n² values (fp32: floats) plus the factorisation's workspace; pivoted: 2n² doubles.",
            .determinism = "Deterministic for a given BLAS build / device and library version.",
            .references =
                "LAPACK dpotrf/dpstrf; Higham 1990; Lucas, LAWN 161; GPU algorithms: "
                "gemflow/linalg/cholesky_cuda.hpp.",
            .rules = pivoting_rules()};
  }
  enum class Prec { Fp64, Fp32 };
  /// Parameter combinations wrong on every device, said before a workflow runs (QA: they passed
  /// `gemflow validate` and failed the run without a file position); execute() checks them too.
  static std::vector<ParamRule> pivoting_rules() {
    std::vector<ParamRule> r = fp32_products_rules();
    for (auto& rule :
         std::vector<ParamRule>{{.param = "rank",
         .other = "pivoted",
         .other_value = true,
         .why = "the plain factorisation has no rank limit"},
                                {.param = "tolerance",
                                .other = "pivoted",
                                .other_value = true,
                                .why = "the plain factorisation has no tolerance"},
                                {.param = "precision",
                                .when = {std::string("fp32")},
                                .other = "pivoted",
                                .other_value = true,
                                .must = false,
                                .why = "the pivoted factorisation runs in fp64 only"},
                                {.param = "algorithm",
                                .when = {std::string("blocked"), std::string("recursive"), std::string("cusolver"),
                                         std::string("lookahead"), std::string("tiled")},
                                .other = "pivoted",
                                .other_value = true,
                                .must = false,
                                .why = "pivoted takes algorithm auto (dpstf2 steps on CUDA) or lapack"}})
      r.push_back(std::move(rule));
    return r;
  }

  Input<Matrix<double>> matrix{this, "matrix", "Symmetric matrix, n×n (lower triangle read)"};
  Output<Matrix<double>> factor{this, "factor", "Lower-triangular factor L (n×n, or n×rank when pivoted)"};
  Output<Table> permutation{this, "permutation", "Pivot order: columns pivot, row (0-based); empty when not pivoted"};
  DeviceParam device{this};
  Choice<CholAlgo> algorithm =
      cholesky_algorithm_param(this,
                               "auto: lapack on the CPU; on CUDA tiled below n = 9216 (fp32: 6656), else lookahead. "
                               "lapack: CPU (dpotrf). blocked, recursive, cusolver, lookahead, tiled: CUDA only (see "
                               "gemflow/linalg/cholesky_cuda.hpp). Pivoted: auto or lapack");
  Choice<Prec> precision{this,
                         "precision",
                         Prec::Fp64,
                         {{Prec::Fp64, "fp64"}, {Prec::Fp32, "fp32"}},
                         {.doc = "fp64, or fp32 (factor in single precision: L to about 1e-7 relative; "
                                 "not pivoted)"}};
  Choice<Products> fp32_products = fp32_products_param(
      this,
      "precision fp32 on CUDA: how the factor's GEMMs run. auto/exact: IEEE fp32 (β like spotrf's); 3xTF32, "
      "3xFP16: accuracy restored on the tensor cores (β within 10× spotrf's; 3xFP16 2.3–2.8× spotrf from "
      "n = 16k on an H200); 1xTF32, 1xFP16: one tensor-core product (β ≈ 1e-4: preconditioners, refinement). "
      "TF32: lookahead or recursive; 3xFP16: lookahead; 1xFP16: lookahead or tiled (auto picks one). "
      "CPU: auto or exact");
  Param<bool> pivoted{this,
                      "pivoted",
                      false,
                      {.doc = "Complete diagonal pivoting for positive semidefinite matrices (dpstrf); "
                              "stops at the numerical rank instead of failing"}};
  Param<std::int64_t> rank{
      this, "rank", 0, {.min = 0, .doc = "Pivoted only: stop after this many columns; 0 = full numerical rank"}};
  Param<double> tolerance{this,
                          "tolerance",
                          -1.0,
                          {.doc = "Pivoted only: pivots ≤ tolerance stop the factorisation; negative (the "
                                  "default, -1) = LAPACK's default n·ε·max(diag A). Without pivoted: leave it at -1"}};

  void execute(NodeContext& ctx) override {
    const auto& a = *matrix;
    if (a.rows() != a.cols())
      throw InputError("input 'matrix' must be square, got " + std::to_string(a.rows()) + "×" +
                       std::to_string(a.cols()));
    const std::size_t n = a.rows();
    if (n == 0) throw InputError("input 'matrix' is empty (0×0)");  // as linalg.spd_solve
    if (!pivoted.value() && rank.value() != 0)
      throw InputError("parameter 'rank' = " + std::to_string(rank.value()) + " needs 'pivoted: true'");
    if (!pivoted.value() && tolerance.value() != -1.0)  // the default: the rule in pivoting_rules()
      throw InputError("parameter 'tolerance' = " + g6(tolerance.value()) +
                       " needs 'pivoted: true' (the plain factorisation has no tolerance)");
    if (pivoted.value() && *precision == Prec::Fp32)
      throw InputError("parameter 'precision': the pivoted factorisation runs in fp64 only");
    if (pivoted.value() && *algorithm != CholAlgo::Auto && *algorithm != CholAlgo::Lapack)
      throw InputError("parameter 'algorithm' = " + algo_name(*algorithm) +
                       " applies to the plain factorisation; pivoted takes auto (dpstf2 steps on CUDA) or lapack");
    for (double v : a.span()) {
      if (!std::isfinite(v)) throw InputError("input 'matrix' contains NaN or infinity");
      if (*precision == Prec::Fp32 && std::abs(v) > std::numeric_limits<float>::max())
        throw InputError("input 'matrix' has an entry " + g6(v) +
                         " beyond single precision (|a| > 3.4e38): use precision fp64");
    }
    if (const auto ij = first_asymmetry(a))
      ctx.warn("input 'matrix' is not symmetric: A(" + std::to_string(ij->first) + ", " + std::to_string(ij->second) +
               ") = " + full_precision(a(ij->first, ij->second)) + " but A(" + std::to_string(ij->second) + ", " +
               std::to_string(ij->first) + ") = " + full_precision(a(ij->second, ij->first)) +
               " (0-based); the lower triangle is used");

    const bool fp32 = *precision == Prec::Fp32;
    if (fp32)
      if (const auto ij = first_below_fp32_normal(a)) {
        std::ostringstream w;
        w << "A(" << ij->first << ", " << ij->second << ") = " << a(ij->first, ij->second)
          << " is below single precision's normal range (1.2e-38): fp32 keeps it with fewer digits or as 0; use "
             "precision fp64";
        ctx.warn(w.str());
      }
    if (pivoted.value() && *fp32_products != Products::Auto)
      throw InputError(
          "parameter 'fp32_products' applies to the plain factorisation; pivoted runs "
          "in fp64");
    Placement place = resolve_placement(ctx, device, *algorithm, n, fp32 ? SolvePrecision::fp32 : SolvePrecision::fp64,
                                        pivoted.value());
    const Fp32Products products =
        resolve_products(ctx, *fp32_products, *algorithm, place, fp32 ? SolvePrecision::fp32 : SolvePrecision::fp64);
    const std::string where =
        pivoted.value() ? (place.dev.is_cuda() ? "factor_pivoted" : "lapack") : algo_name(place.algo);
    // the factor, an fp32 copy, a host staging copy for CUDA: known before anything is allocated
    const double n2 = static_cast<double>(n) * static_cast<double>(n);
    require_host_memory(static_cast<std::size_t>(n2 * (8.0 + (fp32 ? 4.0 : 0.0) + (place.dev.is_cuda() ? 8.0 : 0.0))),
                        "factorising a " + std::to_string(n) + "×" + std::to_string(n) + " matrix (" +
                            (fp32 ? "fp32" : "fp64") + ", " + place.dev.str() + ")");
    ctx.throw_if_cancelled();
    ctx.progress(0.0, "factorising (" + where + ", " + (fp32 ? "fp32" : "fp64") + ", " + place.dev.str() + ")");
    ctx.record("algorithm", where);
    ctx.record("precision", std::string(fp32 ? "fp32" : "fp64"));
    if (products) ctx.record("fp32_products", std::string(cuda::fp32_mode_name(*products)));
    if (!pivoted.value()) {
      Matrix<double> l(n, n);
      const int info = place.dev.is_cuda()
                           ? cholesky_cuda(a.span(), n, l.span(), fp32 ? SolvePrecision::fp32 : SolvePrecision::fp64,
                                           to_spd(place.algo), place.dev.index, products)
                           : factor_cpu(a, l, fp32, [&](double f) {
                               ctx.throw_if_cancelled();  // within ~2·10⁹ flops of a Ctrl-C
                               ctx.progress(f, "factorising");
                               return true;
                             });
      if (info > 0)
        throw InputError(
            "the matrix is not positive definite" + std::string(fp32 ? " in single precision" : "") +
            ": the leading minor of order " + std::to_string(info) + " (rows/columns 0.." + std::to_string(info - 1) +
            ") is not positive" +
            (fp32 ? fp32_failure_hint(a, static_cast<std::size_t>(info - 1), "precision fp64")
                  : std::string("; if the matrix is positive semidefinite (singular), 'pivoted: true' factors it up "
                                "to its numerical rank (and tells an indefinite one apart)")));
      factor.set(std::move(l));
      permutation.set(Table{{"pivot", "row"}, {}});
      ctx.record("rank", static_cast<std::int64_t>(n));
    } else {
      Matrix<double> l = a;
      const auto max_rank = static_cast<std::size_t>(rank.value());
      const auto r = place.dev.is_cuda()
                         ? pivoted_cholesky_cuda(a.span(), n, max_rank, tolerance.value(), l.span(), place.dev.index)
                         : pivoted_cholesky(l.span(), n, max_rank, tolerance.value());
      Matrix<double> f(n, r.rank);
      for (std::size_t i = 0; i < n; ++i)
        for (std::size_t j = 0; j < r.rank; ++j) f(i, j) = l(i, j);
      Table perm{{"pivot", "row"}, {}};
      for (std::size_t k = 0; k < n; ++k)
        perm.rows.push_back({static_cast<std::int64_t>(k), static_cast<std::int64_t>(r.permutation[k])});
      factor.set(std::move(f));
      permutation.set(std::move(perm));
      ctx.record("rank", static_cast<std::int64_t>(r.rank));
      ctx.record("next_pivot", r.next_pivot);
      ctx.record("tolerance_used", r.tolerance);
      // The Schur complement's smallest diagonal: a PSD matrix keeps it ≥ −(rounding), even where
      // its largest one (the next pivot) is 0. Rounding: the tolerance, at least n·ε·max|a_ii|.
      double amax = 0.0;
      for (std::size_t i = 0; i < n; ++i) amax = std::max(amax, std::abs(a(i, i)));
      const double rounding =
          std::max(r.tolerance, static_cast<double>(n) * std::numeric_limits<double>::epsilon() * amax);
      std::size_t worst = n;
      double dmin = std::numeric_limits<double>::infinity();
      for (std::size_t i = r.rank; i < n; ++i) {
        double d = a(r.permutation[i], r.permutation[i]);
        for (std::size_t j = 0; j < r.rank; ++j) d -= l(i, j) * l(i, j);
        if (d < dmin) dmin = d, worst = r.permutation[i];
      }
      if (r.rank < n) ctx.record("min_remaining_diagonal", dmin);
      if (r.rank < n && r.next_pivot < -rounding)
        ctx.warn("rank " + std::to_string(r.rank) + " of " + std::to_string(n) + ": the next pivot " +
                 g6(r.next_pivot) +
                 " is negative, so the matrix is not positive semidefinite (indefinite); the "
                 "factor covers its positive part only");
      else if (r.rank < n && dmin < -rounding)
        ctx.warn("rank " + std::to_string(r.rank) + " of " + std::to_string(n) +
                 ": after the pivots, the diagonal "
                 "of row " +
                 std::to_string(worst) + " (0-based) is " + g6(dmin) + ", below −" + g6(rounding) +
                 " (rounding), so the matrix is not positive semidefinite (indefinite); the factor covers its "
                 "positive part only");
      else if (r.rank_deficient)
        ctx.info("rank " + std::to_string(r.rank) + " of " + std::to_string(n) + ": next pivot " + g6(r.next_pivot) +
                 " ≤ tolerance " + g6(r.tolerance));
    }
    ctx.progress(1.0);
  }

 private:
  /// CPU factor into l: blocked dpotrf, or spotrf on a single-precision copy; returns INFO.
  static int factor_cpu(const Matrix<double>& a, Matrix<double>& l, bool fp32, const FlopCallback& on_flops) {
    const std::size_t n = a.rows();
    if (!fp32) {
      l = a;
      return cholesky(l.span(), n, on_flops);
    }
    std::vector<float> f(a.span().begin(), a.span().end());
    const int info = cholesky(std::span<float>(f), n, on_flops);
    for (std::size_t i = 0; i < n * n; ++i) l.span()[i] = static_cast<double>(f[i]);
    return info;
  }
};

}  // namespace

void register_cholesky_nodes(PluginRegistrar& r) { r.add_node<CholeskyNode>(); }

}  // namespace gemflow::linalg
