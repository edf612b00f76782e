// CPU Cholesky factorisations over LAPACKE (see gemflow/linalg/cholesky.hpp).
#include "gemflow/linalg/cholesky.hpp"

#include <cblas.h>
#include <lapacke.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <stdexcept>
#include <string>
#include <type_traits>
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
  const lapack_int info =
      potrf(LAPACK_COL_MAJOR, 'U', static_cast<lapack_int>(n), a.data(), static_cast<lapack_int>(n));
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

/// LAPACK/BLAS of one precision for the blocked factorisation (column-major upper: A = UᵀU).
template <class T>
struct Lapack {
  static constexpr bool kDouble = std::is_same_v<T, double>;
  static lapack_int potrf(lapack_int n, T* a, lapack_int lda) {
    if constexpr (kDouble) return LAPACKE_dpotrf_work(LAPACK_COL_MAJOR, 'U', n, a, lda);
    else return LAPACKE_spotrf_work(LAPACK_COL_MAJOR, 'U', n, a, lda);
  }
  // B (m×n) ← U⁻ᵀ B, U m×m upper
  static void trsm(int m, int n, const T* u, int ldu, T* b, int ldb) {
    constexpr auto s = CblasColMajor;
    if constexpr (kDouble) cblas_dtrsm(s, CblasLeft, CblasUpper, CblasTrans, CblasNonUnit, m, n, 1.0, u, ldu, b, ldb);
    else cblas_strsm(s, CblasLeft, CblasUpper, CblasTrans, CblasNonUnit, m, n, 1.0f, u, ldu, b, ldb);
  }
  // C (n×n upper) −= Aᵀ A, A k×n
  static void syrk(int n, int k, const T* a, int lda, T* c, int ldc) {
    if constexpr (kDouble) cblas_dsyrk(CblasColMajor, CblasUpper, CblasTrans, n, k, -1.0, a, lda, 1.0, c, ldc);
    else cblas_ssyrk(CblasColMajor, CblasUpper, CblasTrans, n, k, -1.0f, a, lda, 1.0f, c, ldc);
  }
  // C (m×n) −= Aᵀ B, A k×m, B k×n
  static void gemm_tn(int m, int n, int k, const T* a, int lda, const T* b, int ldb, T* c, int ldc) {
    if constexpr (kDouble)
      cblas_dgemm(CblasColMajor, CblasTrans, CblasNoTrans, m, n, k, -1.0, a, lda, b, ldb, 1.0, c, ldc);
    else cblas_sgemm(CblasColMajor, CblasTrans, CblasNoTrans, m, n, k, -1.0f, a, lda, b, ldb, 1.0f, c, ldc);
  }
};

/// Flops between two callbacks at most (≈ 50 ms on a few cores).
constexpr double kFlopsPerCallback = 2e9;

template <class T>
int cholesky_blocked(std::span<T> a, std::size_t n, const FlopCallback& on_flops, std::size_t nb, const char* what) {
  check_shape(a.size(), n, what);
  if (n == 0) return 0;
  nb = std::clamp<std::size_t>(nb, 1, n);
  const double total = static_cast<double>(n) * static_cast<double>(n) * static_cast<double>(n) / 3.0;
  double done = 0.0;
  const auto step = [&](double flops) {
    done += flops;
    return !on_flops || on_flops(std::min(1.0, done / total));
  };
  const int ld = static_cast<int>(n);
  T* const m = a.data();  // column-major view: (i, j) at m[i + j·n]; its upper triangle is the row-major lower
  for (std::size_t k = 0; k < n; k += nb) {
    const std::size_t kb = std::min(nb, n - k), rest = n - k - kb;
    T* const a11 = m + k + k * n;
    const lapack_int info = Lapack<T>::potrf(static_cast<lapack_int>(kb), a11, ld);
    if (info < 0)
      throw std::runtime_error(std::string(what) + ": LAPACK argument " + std::to_string(-info) + " invalid");
    if (info > 0) {
      zero_strict_upper(a, n);
      return static_cast<int>(k) + static_cast<int>(info);
    }
    const double fkb = static_cast<double>(kb);
    if (!step(fkb * fkb * fkb / 3.0)) return kCholeskyStopped;
    if (rest == 0) break;
    T* const a12 = m + k + (k + kb) * n;  // kb × rest
    T* const a22 = a12 + kb;              // rest × rest
    Lapack<T>::trsm(static_cast<int>(kb), static_cast<int>(rest), a11, ld, a12, ld);
    if (!step(fkb * fkb * static_cast<double>(rest))) return kCholeskyStopped;
    // A22 −= A12ᵀ A12 (upper), in column strips of at most kFlopsPerCallback
    const auto width = static_cast<std::size_t>(kFlopsPerCallback / (2.0 * fkb * static_cast<double>(rest)));
    const std::size_t w = std::clamp<std::size_t>(width, 64, rest);
    for (std::size_t c0 = 0; c0 < rest; c0 += w) {
      const std::size_t cw = std::min(w, rest - c0);
      if (c0 > 0)
        Lapack<T>::gemm_tn(static_cast<int>(c0), static_cast<int>(cw), static_cast<int>(kb), a12, ld, a12 + c0 * n, ld,
                           a22 + c0 * n, ld);
      Lapack<T>::syrk(static_cast<int>(cw), static_cast<int>(kb), a12 + c0 * n, ld, a22 + c0 + c0 * n, ld);
      if (!step(fkb * static_cast<double>(cw) * static_cast<double>(2 * c0 + cw))) return kCholeskyStopped;
    }
  }
  zero_strict_upper(a, n);
  return 0;
}

}  // namespace

int cholesky(std::span<double> a, std::size_t n) { return cholesky_impl(a, n, LAPACKE_dpotrf, "cholesky (dpotrf)"); }
int cholesky(std::span<float> a, std::size_t n) { return cholesky_impl(a, n, LAPACKE_spotrf, "cholesky (spotrf)"); }
int cholesky(std::span<double> a, std::size_t n, const FlopCallback& on_flops, std::size_t block) {
  return cholesky_blocked(a, n, on_flops, block, "cholesky (blocked dpotrf)");
}
int cholesky(std::span<float> a, std::size_t n, const FlopCallback& on_flops, std::size_t block) {
  return cholesky_blocked(a, n, on_flops, block, "cholesky (blocked spotrf)");
}

PivotedCholesky pivoted_cholesky(std::span<double> a, std::size_t n, std::size_t max_rank, double tolerance) {
  check_shape(a.size(), n, "pivoted_cholesky (dpstrf)");
  PivotedCholesky r;
  if (n == 0) return r;
  double tol = tolerance;
  double dmax = -std::numeric_limits<double>::infinity();
  for (std::size_t i = 0; i < n; ++i) dmax = std::max(dmax, a[i * n + i]);
  if (tol < 0) tol = static_cast<double>(n) * std::numeric_limits<double>::epsilon() * dmax;
  if (max_rank > 0 && max_rank < n) {
    r = partial_pivoted(a, n, max_rank, tol);
  } else if (!(dmax > tol)) {
    // dpstf2 tests its first pivot against 0 only; every pivot ≤ tolerance stops here, as in
    // the partial path and on the GPU: rank 0
    r.tolerance = tol;
    r.rank_deficient = true;
    r.next_pivot = dmax;
    r.permutation.resize(n);
    std::iota(r.permutation.begin(), r.permutation.end(), std::size_t{0});
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

PivotedCholesky pivoted_cholesky_restricted(std::span<double> a, std::size_t n,
                                            std::span<const unsigned char> candidates, std::size_t max_rank,
                                            double tolerance) {
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
  const auto count = static_cast<std::size_t>(
      std::count_if(candidates.begin(), candidates.end(), [](unsigned char c) { return c != 0; }));
  const std::size_t k = max_rank == 0 ? count : std::min(max_rank, n);
  r = partial_pivoted(a, n, k, tol, candidates);
  for (std::size_t i = 0; i < n; ++i)
    for (std::size_t j = 0; j < n; ++j)
      if (j > i || j >= r.rank) a[i * n + j] = 0.0;
  return r;
}

}  // namespace gemflow::linalg
