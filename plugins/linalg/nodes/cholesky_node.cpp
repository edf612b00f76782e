// linalg.cholesky: node adapter over gemflow/linalg/cholesky.hpp.
#include <cmath>
#include <string>

#include <gemflow/linalg/cholesky.hpp>
#include <gemflow/node.hpp>
#include <gemflow/types.hpp>

#include "register.hpp"

namespace gemflow::linalg {
namespace {

class CholeskyNode final : public Node {
 public:
  static NodeInfo info() {
    return {.id = "linalg.cholesky",
            .version = 1,
            .title = "Cholesky factorisation",
            .category = "Linear algebra",
            .doc = "Cholesky factor of a symmetric matrix (CPU: LAPACK dpotrf; pivoted: dpstrf).\n"
                   "Inputs: matrix, n×n Matrix<f64>, symmetric; only the lower triangle is read.\n"
                   "Outputs: factor, Matrix<f64> L, lower triangular, row-major. Plain: n×n with "
                   "A = L Lᵀ. Pivoted: n×rank (rows in pivot order) with PᵀAP ≈ L Lᵀ, i.e. "
                   "A(perm[k], perm[l]) ≈ (L Lᵀ)(k, l); permutation, Table (pivot, row): "
                   "pivot k was original row/column `row` (0-based); empty for the plain factor.\n"
                   "Errors: a matrix that is not square; plain factorisation of a matrix that is "
                   "not positive definite names the leading minor k that fails (LAPACK INFO).\n"
                   "Device memory: none (CPU). Determinism: deterministic for a given BLAS build.\n"
                   "Source: LAPACK dpotrf/dpstrf; Higham 1990; Lucas, LAWN 161."};
  }
  Input<Matrix<double>> matrix{this, "matrix", "Symmetric matrix, n×n (lower triangle read)"};
  Output<Matrix<double>> factor{this, "factor", "Lower-triangular factor L (n×n, or n×rank when pivoted)"};
  Output<Table> permutation{this, "permutation",
                            "Pivot order: columns pivot, row (0-based); empty when not pivoted"};
  Param<bool> pivoted{this, "pivoted", false,
                      {.doc = "Complete diagonal pivoting for positive semidefinite matrices (dpstrf); "
                              "stops at the numerical rank instead of failing"}};
  Param<std::int64_t> rank{this, "rank", 0,
                           {.min = 0, .doc = "Pivoted only: stop after this many columns; 0 = full numerical rank"}};
  Param<double> tolerance{this, "tolerance", -1.0,
                          {.doc = "Pivoted only: pivots ≤ tolerance stop the factorisation; negative = "
                                  "LAPACK's default n·ε·max(diag A)"}};

  void execute(NodeContext& ctx) override {
    const auto& a = *matrix;
    if (a.rows() != a.cols())
      throw InputError("linalg.cholesky: input 'matrix' must be square, got " + std::to_string(a.rows()) + "×" +
                       std::to_string(a.cols()));
    const std::size_t n = a.rows();
    if (!pivoted.value() && rank.value() != 0)
      throw InputError("linalg.cholesky: parameter 'rank' = " + std::to_string(rank.value()) +
                       " needs 'pivoted: true'");
    for (double v : a.span())
      if (!std::isfinite(v)) throw InputError("linalg.cholesky: input 'matrix' contains NaN or infinity");
    Matrix<double> l = a;
    ctx.progress(0.0, "factorising");
    if (!pivoted.value()) {
      const int info = cholesky(l.span(), n);
      if (info > 0)
        throw InputError("linalg.cholesky: the matrix is not positive definite: the leading minor of order " +
                         std::to_string(info) + " (rows/columns 0.." + std::to_string(info - 1) +
                         ") is not positive; use 'pivoted: true' for a semidefinite matrix");
      factor.set(std::move(l));
      permutation.set(Table{{"pivot", "row"}, {}});
      ctx.record("rank", static_cast<std::int64_t>(n));
    } else {
      const auto r = pivoted_cholesky(l.span(), n, static_cast<std::size_t>(rank.value()), tolerance.value());
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
      if (r.rank_deficient)
        ctx.info("rank " + std::to_string(r.rank) + " of " + std::to_string(n) + ": next pivot " +
                 std::to_string(r.next_pivot) + " ≤ tolerance " + std::to_string(r.tolerance));
    }
    ctx.progress(1.0);
  }
};

}  // namespace

void register_cholesky_nodes(PluginRegistrar& r) { r.add_node<CholeskyNode>(); }

}  // namespace gemflow::linalg
