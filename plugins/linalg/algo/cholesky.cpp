// CPU Cholesky factorisations over LAPACKE (see gemflow/linalg/cholesky.hpp).
#include "gemflow/linalg/cholesky.hpp"

#include <lapacke.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <stdexcept>
#include <string>
#include <utility>

namespace gemflow::linalg {
namespace {

void check_shape(std::size_t size, std::size_t n, const char* what) {
  if (size != n * n)
    throw std::invalid_argument(std::string(what) + ": buffer has " + std::to_string(size) +
                                " elements, expected n*n = " + std::to_string(n * n));
  if (n > static_cast<std::size_t>(std::numeric_limits<lapack_int>::max()))
    throw std::invalid_argument(std::string(what) + ": n = " + std::to_string(n) + " exceeds LAPACK's int range");
}

template <class T>
void zero_strict_upper(std::span<T> a, std::size_t n) {
  for (std::size_t i = 0; i < n; ++i)
    for (std::size_t j = i + 1; j < n; ++j) a[i * n + j] = T{0};
}

template <class T, class F>
int cholesky_impl(std::span<T> a, std::size_t n, F potrf, const char* what) {
  check_shape(a.size(), n, what);
  if (n == 0) return 0;
  // Row-major lower == column-major upper: factor column-major 'U' in place.
  const lapack_int info = potrf(LAPACK_COL_MAJOR, 'U', static_cast<lapack_int>(n), a.data(),
                                static_cast<lapack_int>(n));
  if (info < 0) throw std::runtime_error(std::string(what) + ": LAPACK argument " + std::to_string(-info) + " invalid");
  zero_strict_upper(a, n);
  return static_cast<int>(info);
}

// Greedy pivoted Cholesky for the first `k` pivots: the steps of LAPACK dpstf2 on an
// explicitly symmetric trailing block.
PivotedCholesky partial_pivoted(std::span<double> a, std::size_t n, std::size_t k, double tol,
                                std::span<const unsigned char> cand = {}) {
  PivotedCholesky r;
  r.tolerance = tol;
  r.permutation.resize(n);
  std::iota(r.permutation.begin(), r.permutation.end(), std::size_t{0});
  auto at = [&](std::size_t i, std::size_t j) -> double& { return a[i * n + j]; };
  for (std::size_t i = 0; i < n; ++i)
    for (std::size_t j = i + 1; j < n; ++j) at(i, j) = at(j, i);
  std::size_t j = 0;
  // Candidate test by original index (row i of the permuted matrix is permutation[i]).
  auto eligible = [&](std::size_t i) { return cand.empty() || cand[r.permutation[i]] != 0; };
  for (; j < k; ++j) {
    std::size_t p = n;
    for (std::size_t i = j; i < n; ++i)
      if (eligible(i) && (p == n || at(i, i) > at(p, p))) p = i;
    if (p == n) {  // no candidate left
      r.rank_deficient = true;
      r.next_pivot = -std::numeric_limits<double>::infinity();
      break;
    }
    const double ajj = at(p, p);
    if (!(ajj > tol)) {
      r.rank_deficient = true;
      r.next_pivot = ajj;
      break;
    }
    if (p != j) {
      for (std::size_t c = 0; c < n; ++c) std::swap(at(j, c), at(p, c));
      for (std::size_t c = 0; c < n; ++c) std::swap(at(c, j), at(c, p));
      std::swap(r.permutation[j], r.permutation[p]);
    }
    const double ljj = std::sqrt(ajj);
    at(j, j) = ljj;
    for (std::size_t i = j + 1; i < n; ++i) at(i, j) /= ljj;
    for (std::size_t i = j + 1; i < n; ++i) {
      const double lij = at(i, j);
      double* row = &at(i, 0);
      for (std::size_t l = j + 1; l < n; ++l) row[l] -= lij * at(l, j);
    }
  }
  r.rank = j;
  if (!r.rank_deficient && r.rank < n) {
    double m = -std::numeric_limits<double>::infinity();
    for (std::size_t i = r.rank; i < n; ++i)
      if (eligible(i)) m = std::max(m, at(i, i));
    r.next_pivot = m;
  }
  return r;
}

}  // namespace

int cholesky(std::span<double> a, std::size_t n) {
  return cholesky_impl(a, n, LAPACKE_dpotrf, "cholesky (dpotrf)");
}
int cholesky(std::span<float> a, std::size_t n) {
  return cholesky_impl(a, n, LAPACKE_spotrf, "cholesky (spotrf)");
}

PivotedCholesky pivoted_cholesky(std::span<double> a, std::size_t n, std::size_t max_rank, double tolerance) {
  check_shape(a.size(), n, "pivoted_cholesky (dpstrf)");
  PivotedCholesky r;
  if (n == 0) return r;
  double tol = tolerance;
  if (tol < 0) {
    double dmax = -std::numeric_limits<double>::infinity();
    for (std::size_t i = 0; i < n; ++i) dmax = std::max(dmax, a[i * n + i]);
    tol = static_cast<double>(n) * std::numeric_limits<double>::epsilon() * dmax;
  }
  if (max_rank > 0 && max_rank < n) {
    r = partial_pivoted(a, n, max_rank, tol);
  } else {
    std::vector<lapack_int> piv(n);
    lapack_int rank = 0;
    // Column-major 'U' on the row-major buffer: P ᵀ A P = Uᵀ U with U = Lᵀ.
    const lapack_int info = LAPACKE_dpstrf(LAPACK_COL_MAJOR, 'U', static_cast<lapack_int>(n), a.data(),
                                           static_cast<lapack_int>(n), piv.data(), &rank, tol);
    if (info < 0)
      throw std::runtime_error("pivoted_cholesky (dpstrf): LAPACK argument " + std::to_string(-info) + " invalid");
    r.tolerance = tol;
    r.rank = static_cast<std::size_t>(rank);
    r.rank_deficient = info > 0;
    r.permutation.resize(n);
    for (std::size_t i = 0; i < n; ++i) r.permutation[i] = static_cast<std::size_t>(piv[i] - 1);
    // dpstf2/dpstrf store the refused pivot at A(rank, rank) before stopping.
    if (r.rank < n) r.next_pivot = a[r.rank * n + r.rank];
  }
  // Keep L (n × rank, lower trapezoidal); clear the Schur complement and the upper triangle.
  for (std::size_t i = 0; i < n; ++i)
    for (std::size_t j = 0; j < n; ++j)
      if (j > i || j >= r.rank) a[i * n + j] = 0.0;
  return r;
}

PivotedCholesky pivoted_cholesky_restricted(std::span<double> a, std::size_t n, std::span<const unsigned char> candidates,
                                            std::size_t max_rank, double tolerance) {
  check_shape(a.size(), n, "pivoted_cholesky_restricted");
  if (candidates.size() != n)
    throw std::invalid_argument("pivoted_cholesky_restricted: " + std::to_string(candidates.size()) +
                                " candidate flags for n = " + std::to_string(n));
  PivotedCholesky r;
  if (n == 0) return r;
  double tol = tolerance;
  if (tol < 0) {
    double dmax = -std::numeric_limits<double>::infinity();
    for (std::size_t i = 0; i < n; ++i) dmax = std::max(dmax, a[i * n + i]);
    tol = static_cast<double>(n) * std::numeric_limits<double>::epsilon() * dmax;
  }
  const auto count = static_cast<std::size_t>(std::count_if(candidates.begin(), candidates.end(), [](unsigned char c) { return c != 0; }));
  const std::size_t k = max_rank == 0 ? count : std::min(max_rank, n);
  r = partial_pivoted(a, n, k, tol, candidates);
  for (std::size_t i = 0; i < n; ++i)
    for (std::size_t j = 0; j < n; ++j)
      if (j > i || j >= r.rank) a[i * n + j] = 0.0;
  return r;
}

}  // namespace gemflow::linalg
