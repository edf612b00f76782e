// SPD solves on the CPU and residual measures (see gemflow/linalg/spd_solve.hpp).
#include "gemflow/linalg/spd_solve.hpp"

#include <cblas.h>
#include <lapacke.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <stdexcept>
#include <string>

#include "componentwise_steps.hpp"
#include "equilibration.hpp"
#include "gemflow/linalg/cholesky.hpp"
#include "gmres_ir.hpp"
#include "normwise.hpp"

namespace gemflow::linalg {
namespace {

void check_sizes(std::size_t a, std::size_t n, std::size_t b, std::size_t nrhs, std::size_t x, const char* what) {
  if (a != n * n || b != n * nrhs || x != n * nrhs)
    throw std::invalid_argument(std::string(what) + ": sizes a = " + std::to_string(a) + ", b = " + std::to_string(b) +
                                ", x = " + std::to_string(x) + " do not fit n = " + std::to_string(n) +
                                ", nrhs = " + std::to_string(nrhs));
  if (n > static_cast<std::size_t>(std::numeric_limits<lapack_int>::max()) ||
      nrhs > static_cast<std::size_t>(std::numeric_limits<lapack_int>::max()))
    throw std::invalid_argument(std::string(what) + ": n or nrhs exceeds LAPACK's int range");
}

/// Row-major n×k → column-major n×k (and back: the same with roles swapped).
template <class To, class From>
void to_col_major(std::span<const From> rm, std::size_t n, std::size_t k, std::vector<To>& cm) {
  cm.resize(n * k);
  for (std::size_t i = 0; i < n; ++i)
    for (std::size_t c = 0; c < k; ++c) cm[i + c * n] = static_cast<To>(rm[i * k + c]);
}
template <class From>
void from_col_major(const std::vector<From>& cm, std::size_t n, std::size_t k, std::span<double> rm) {
  for (std::size_t i = 0; i < n; ++i)
    for (std::size_t c = 0; c < k; ++c) rm[i * k + c] = static_cast<double>(cm[i + c * n]);
}

/// Triangular solves with the row-major lower factor l (column-major upper U = Lᵀ, A = UᵀU).
void potrs(const std::vector<double>& l, std::size_t n, std::vector<double>& bcm, std::size_t k) {
  const lapack_int info = LAPACKE_dpotrs(LAPACK_COL_MAJOR, 'U', static_cast<lapack_int>(n), static_cast<lapack_int>(k),
                                         l.data(), static_cast<lapack_int>(n), bcm.data(), static_cast<lapack_int>(n));
  if (info != 0) throw std::runtime_error("dpotrs: LAPACK argument " + std::to_string(-info) + " invalid");
}
/// fp32: without LAPACKE's NaN check (the _work form), so that a refinement step whose
/// right-hand side holds a NaN yields a NaN correction, which the refinement treats as no
/// convergence (the fp64 fallback), rather than an error.
void potrs(const std::vector<float>& l, std::size_t n, std::vector<float>& bcm, std::size_t k) {
  const auto ni = static_cast<lapack_int>(n);
  const lapack_int info =
      LAPACKE_spotrs_work(LAPACK_COL_MAJOR, 'U', ni, static_cast<lapack_int>(k), l.data(), ni, bcm.data(), ni);
  if (info != 0) throw std::runtime_error("spotrs: LAPACK argument " + std::to_string(-info) + " invalid");
}

/// cholesky(a, n), through the cancellable blocked factorisation when there is a callback.
template <class T>
int factor(std::span<T> a, std::size_t n, const FlopCallback& on_flops) {
  if (!on_flops) return cholesky(a, n);
  const int info = cholesky(a, n, on_flops);
  if (info == kCholeskyStopped) throw std::runtime_error("the factorisation was stopped");
  return info;
}

/// fp64 Cholesky solve; returns INFO.
int solve_fp64(std::span<const double> a, std::size_t n, std::span<const double> b, std::size_t k, std::span<double> x,
               const FlopCallback& on_flops) {
  std::vector<double> l(a.begin(), a.end());
  const int info = factor(std::span<double>(l), n, on_flops);
  if (info != 0) return info;
  std::vector<double> bc;
  to_col_major<double>(b, n, k, bc);
  potrs(l, n, bc, k);
  from_col_major(bc, n, k, x);
  return 0;
}

/// y = A x (n vectors), A symmetric from the lower triangle of the row-major a (BLAS dsymv).
void symv(std::span<const double> a, std::size_t n, const double* x, double* y) {
  if (n == 0) return;
  const auto ni = static_cast<int>(n);
  cblas_dsymv(CblasRowMajor, CblasLower, ni, 1.0, a.data(), ni, x, 1, 0.0, y, 1);
}

/// r = b − A x, column-major n×k, A symmetric from the lower triangle of the row-major a.
void residual(std::span<const double> a, std::size_t n, const std::vector<double>& bcm, const std::vector<double>& xcm,
              std::size_t k, std::vector<double>& rcm) {
  rcm.resize(n * k);
  std::vector<double> ax(n);
  for (std::size_t c = 0; c < k; ++c) {
    symv(a, n, xcm.data() + c * n, ax.data());
    for (std::size_t i = 0; i < n; ++i) rcm[i + c * n] = bcm[i + c * n] - ax[i];
  }
}

/// max_i |cm(i, c)|; NaN when the column holds a NaN (std::max would drop it: an infinite
/// solution times a zero of A gives NaN residuals, which then read as 0).
double col_max_abs(const double* cm, std::size_t n, std::size_t c) {
  double m = 0.0;
  for (std::size_t i = 0; i < n; ++i) {
    const double v = std::abs(cm[i + c * n]);
    if (std::isnan(v)) return v;
    m = std::max(m, v);
  }
  return m;
}

/// max(a, b) that keeps a NaN.
double nan_max(double a, double b) {
  return std::isnan(a) || std::isnan(b) ? std::numeric_limits<double>::quiet_NaN() : std::max(a, b);
}

/// ω = max_c max_i |r_i| / (|A|·|x| + |b|)_i (normwise.hpp) of column-major b, x, r (k columns),
/// A symmetric from the lower triangle of the row-major a; R = double, or long double where
/// |A|·|x| would overflow double. NaN propagates; NaN also when some (|A|·|x| + |b|)_i is ∞.
template <class R, class RR>
R componentwise_of(std::span<const double> a, std::size_t n, const double* bcm, const double* xcm, const RR* rcm,
                   std::size_t k) {
  std::vector<R> den(n);
  R w = 0;
  for (std::size_t c = 0; c < k; ++c) {
    const double* x = xcm + c * n;
    for (std::size_t i = 0; i < n; ++i) den[i] = std::fabs(static_cast<R>(bcm[i + c * n]));
    for (std::size_t i = 0; i < n; ++i) {
      const double* row = a.data() + i * n;
      const R xi = std::fabs(static_cast<R>(x[i]));
      R s = 0;
      for (std::size_t j = 0; j < i; ++j) {
        const R v = std::fabs(static_cast<R>(row[j]));
        s += v * std::fabs(static_cast<R>(x[j]));
        den[j] += v * xi;
      }
      den[i] += s + std::fabs(static_cast<R>(row[i])) * xi;
    }
    for (std::size_t i = 0; i < n; ++i) {
      if (std::isinf(den[i])) return std::numeric_limits<R>::quiet_NaN();  // |A|·|x| beyond R (or x not finite)
      const R wi = detail::componentwise_ratio(std::fabs(static_cast<R>(rcm[i + c * n])), den[i]);
      w = std::isnan(wi) || std::isnan(w) ? std::numeric_limits<R>::quiet_NaN() : std::max(w, wi);
    }
  }
  return w;
}

}  // namespace

void detail::require_finite_fp32_solution(std::span<const double> x) {
  if (!std::all_of(x.begin(), x.end(), [](double v) { return std::isfinite(v); }))
    throw std::runtime_error(
        "the single-precision solution is not finite (it overflowed: A is too ill-conditioned or too badly "
        "scaled for fp32); use precision fp64 or mixed");
}

double symmetric_norm_inf(std::span<const double> a, std::size_t n) {
  if (a.size() != n * n) throw std::invalid_argument("symmetric_norm_inf: a.size() != n*n");
  std::vector<double> row(n, 0.0);
  for (std::size_t i = 0; i < n; ++i)
    for (std::size_t j = 0; j <= i; ++j) {
      const double v = std::abs(a[i * n + j]);
      row[i] += v;
      if (j != i) row[j] += v;
    }
  return n ? *std::max_element(row.begin(), row.end()) : 0.0;
}

/// Adds one column's measures from its ∞-norms (double or long double): a non-finite solution is
/// no solution, whatever its residual: ρ = η = ∞ (not 0 = r/∞); a NaN residual stays NaN.
template <class R>
void add_column(ResidualNorms& r, R rn, R xn, R bn, R anorm) {
  r.residual_inf = nan_max(r.residual_inf, static_cast<double>(rn));
  const double inf = std::numeric_limits<double>::infinity();
  const bool x_finite = std::isfinite(static_cast<double>(xn));
  const double rho = !x_finite ? inf : static_cast<double>(detail::normwise_relative_residual(rn, anorm, xn));
  const double eta = !x_finite ? inf : static_cast<double>(detail::normwise_backward_error(rn, anorm, xn, bn));
  r.relative_residual = nan_max(r.relative_residual, rho);
  r.backward_error = nan_max(r.backward_error, eta);
}

/// ω as a double, +∞ when x is not finite (no solution, as ρ and η).
template <class R>
double x_finite_or_inf(const std::vector<double>& x, R w) {
  if (!std::all_of(x.begin(), x.end(), [](double v) { return std::isfinite(v); }))
    return std::numeric_limits<double>::infinity();
  return static_cast<double>(w);
}

/// Scales each column of the column-major bcm (n × k) whose largest entry lies below 2⁻⁶⁰⁰ by the
/// power of two 2^k that brings it near 2⁻⁶⁰⁰, and returns the k (0 for the other columns). b − A·x
/// of such a column lies near or below double's normal range, where its rounding hides errors; ρ,
/// η and ω do not change when b and x are scaled alike (QA: A of 1e-100 and b of 3e-320 gave
/// r = 0, η = ω = 0, for an x 4e-8 off).
std::vector<int> scale_tiny_columns(std::vector<double>& bcm, std::size_t n, std::size_t k) {
  std::vector<int> e(k, 0);
  for (std::size_t c = 0; c < k; ++c) {
    const double m = col_max_abs(bcm.data(), n, c);
    if (!(m > 0 && m < 0x1p-600)) continue;
    e[c] = -600 - std::ilogb(m);
    for (std::size_t i = 0; i < n; ++i) bcm[i + c * n] = std::ldexp(bcm[i + c * n], e[c]);
  }
  return e;
}

/// ‖A‖∞ in long double (x87: range to 1e4932), where the row sums may overflow double.
long double symmetric_norm_inf_wide(std::span<const double> a, std::size_t n) {
  std::vector<long double> row(n, 0.0L);
  for (std::size_t i = 0; i < n; ++i)
    for (std::size_t j = 0; j <= i; ++j) {
      const long double v = std::fabs(static_cast<long double>(a[i * n + j]));
      row[i] += v;
      if (j != i) row[j] += v;
    }
  return n ? *std::max_element(row.begin(), row.end()) : 0.0L;
}

/// residual_norms in long double (x87: range to 1e4932) for entries near the double range, where
/// A·x, ‖A‖∞ or |A|·|x| + |b| overflow in double although A, b and x are finite.
ResidualNorms residual_norms_wide(std::span<const double> a, std::size_t n, std::span<const double> b, std::size_t nrhs,
                                  std::span<const double> x) {
  ResidualNorms r;
  std::vector<long double> ax(n);
  const long double anorm = symmetric_norm_inf_wide(a, n);
  r.a_norm_inf = static_cast<double>(anorm);
  std::vector<double> bc, xc;
  to_col_major<double>(b, n, nrhs, bc);
  to_col_major<double>(x, n, nrhs, xc);
  std::vector<long double> rc(n * nrhs);
  for (std::size_t c = 0; c < nrhs; ++c) {
    std::fill(ax.begin(), ax.end(), 0.0L);
    for (std::size_t i = 0; i < n; ++i)
      for (std::size_t j = 0; j <= i; ++j) {
        const long double v = a[i * n + j];
        ax[i] += v * x[j * nrhs + c];
        if (j != i) ax[j] += v * x[i * nrhs + c];
      }
    long double rn = 0.0L, xn = 0.0L, bn = 0.0L;
    for (std::size_t i = 0; i < n; ++i) {
      const long double ri = std::fabs(static_cast<long double>(b[i * nrhs + c]) - ax[i]);
      rc[i + c * n] = ri;
      rn = std::isnan(ri) || std::isnan(rn) ? std::numeric_limits<long double>::quiet_NaN() : std::max(rn, ri);
      xn = std::max(xn, std::fabs(static_cast<long double>(x[i * nrhs + c])));
      bn = std::max(bn, std::fabs(static_cast<long double>(b[i * nrhs + c])));
    }
    add_column(r, rn, xn, bn, anorm);
  }
  r.componentwise_backward_error =
      x_finite_or_inf(xc, componentwise_of<long double>(a, n, bc.data(), xc.data(), rc.data(), nrhs));
  return r;
}

ResidualNorms residual_norms(std::span<const double> a, std::size_t n, std::span<const double> b, std::size_t nrhs,
                             std::span<const double> x) {
  check_sizes(a.size(), n, b.size(), nrhs, x.size(), "residual_norms");
  ResidualNorms r;
  r.a_norm_inf = symmetric_norm_inf(a, n);
  std::vector<double> bc, xc, rc;
  to_col_major<double>(b, n, nrhs, bc);
  to_col_major<double>(x, n, nrhs, xc);
  const std::vector<int> e = scale_tiny_columns(bc, n, nrhs);  // x scaled alike; ‖r‖∞ unscaled below
  for (std::size_t c = 0; c < nrhs; ++c) {
    if (e[c] == 0) continue;
    for (std::size_t i = 0; i < n; ++i) xc[i + c * n] = std::ldexp(xc[i + c * n], e[c]);
  }
  residual(a, n, bc, xc, nrhs, rc);
  bool overflow = !std::isfinite(r.a_norm_inf);
  double rinf = 0.0;
  for (std::size_t c = 0; c < nrhs; ++c) {
    const double rn = col_max_abs(rc.data(), n, c), xn = col_max_abs(xc.data(), n, c),
                 bn = col_max_abs(bc.data(), n, c);
    // finite A, b and x with a non-finite residual: A·x overflowed in double
    overflow = overflow || (std::isfinite(xn) && std::isfinite(bn) && !std::isfinite(rn));
    add_column(r, rn, xn, bn, r.a_norm_inf);
    rinf = nan_max(rinf, std::ldexp(rn, -e[c]));
  }
  r.residual_inf = rinf;
  if (!overflow) {
    const double w = componentwise_of<double>(a, n, bc.data(), xc.data(), rc.data(), nrhs);
    // finite b and x with some (|A|·|x| + |b|)_i beyond double (w NaN): in long double
    overflow = std::isnan(w) && std::all_of(xc.begin(), xc.end(), [](double v) { return std::isfinite(v); }) &&
               std::all_of(bc.begin(), bc.end(), [](double v) { return std::isfinite(v); });
    r.componentwise_backward_error = x_finite_or_inf(xc, w);
  }
  // rare, O(n²·nrhs) in long double: only when double overflowed (QA: ‖A‖∞ = ∞ gave ρ = 0)
  return overflow ? residual_norms_wide(a, n, b, nrhs, x) : r;
}

SpdSolveResult spd_solve_cpu(std::span<const double> a, std::size_t n, std::span<const double> b, std::size_t nrhs,
                             std::span<double> x, SolvePrecision precision, const RefinementOptions& refinement,
                             const FlopCallback& on_flops) {
  check_sizes(a.size(), n, b.size(), nrhs, x.size(), "spd_solve_cpu");
  SpdSolveResult res;
  if (precision == SolvePrecision::fp64) {
    res.method = "LAPACK dpotrf + dpotrs";
    res.info = solve_fp64(a, n, b, nrhs, x, on_flops);
    return res;
  }

  // fp32 copy of A; values beyond the float range make the fp32 factor unusable. Mixed factors
  // S·A·S instead (equilibration.hpp: S = diag(2^e_i), exact), whose SPD entries lie in (−2, 2):
  // a badly scaled A then neither leaves the fp32 range nor loses its small components in the
  // fp32 solves (QA: diag(1e30, 1e-30) gave x = (1, 0), worse than precision fp32's (1, 1)).
  std::vector<int> ex(precision == SolvePrecision::mixed ? n : 0, 0);
  for (std::size_t i = 0; i < ex.size(); ++i) ex[i] = detail::equilibration_exponent(a[i * n + i]);
  std::vector<float> af(n * n);
  bool overflow = false;
  for (std::size_t i = 0; i < n; ++i)
    for (std::size_t j = 0; j < n; ++j) {
      const double v = ex.empty() ? a[i * n + j] : std::ldexp(a[i * n + j], ex[i] + ex[j]);
      af[i * n + j] = static_cast<float>(v);
      if (std::isfinite(a[i * n + j]) && !std::isfinite(af[i * n + j])) overflow = true;
    }
  const int info32 = overflow ? -1 : factor(std::span<float>(af), n, on_flops);

  if (precision == SolvePrecision::fp32) {
    res.method = "LAPACK spotrf + spotrs";
    if (overflow)
      throw std::invalid_argument("entries of A overflow single precision (|a| > 3.4e38): use precision fp64 or mixed");
    res.info = info32;
    if (info32 != 0) return res;
    std::vector<float> bc;
    to_col_major<float>(b, n, nrhs, bc);
    potrs(af, n, bc, nrhs);
    from_col_major(bc, n, nrhs, x);
    detail::require_finite_fp32_solution(x);
    return res;
  }

  // Mixed: fp32 factor (of S·A·S), fp64 residuals.
  res.method = "LAPACK spotrf + spotrs (equilibrated), fp64 refinement";
  res.fp32_info = info32;
  res.tolerance =
      refinement.tolerance >= 0 ? refinement.tolerance : std::sqrt(static_cast<double>(n)) * std::ldexp(1.0, -53);
  // ‖A‖∞ in long double where it overflows double (QA: entries of 1.5e308 read η = NaN as 0)
  const double anorm_d = symmetric_norm_inf(a, n);
  const long double anorm = std::isfinite(anorm_d) ? anorm_d : symmetric_norm_inf_wide(a, n);
  std::vector<double> bc, xc(n * nrhs, 0.0), rc;
  to_col_major<double>(b, n, nrhs, bc);
  // columns of b below 2⁻⁶⁰⁰ refined as b·2^k, x unscaled at the end (scale_tiny_columns)
  const std::vector<int> bscale = scale_tiny_columns(bc, n, nrhs);
  const auto unscaled_x = [&]() {
    for (std::size_t c = 0; c < nrhs; ++c)
      for (std::size_t i = 0; i < n; ++i) xc[i + c * n] = std::ldexp(xc[i + c * n], -bscale[c]);
    from_col_major(xc, n, nrhs, x);
  };
  auto eta_of = [&]() {
    residual(a, n, bc, xc, nrhs, rc);
    double eta = 0.0;
    for (std::size_t c = 0; c < nrhs; ++c) {
      const double rn = col_max_abs(rc.data(), n, c), xn = col_max_abs(xc.data(), n, c);
      // an overflowed fp32 solve: not converged (dsposv goes on to its fp64 fallback)
      if (!std::isfinite(rn) || !std::isfinite(xn)) return std::numeric_limits<double>::infinity();
      eta = nan_max(eta, static_cast<double>(detail::normwise_backward_error<long double>(
                             rn, anorm, xn, col_max_abs(bc.data(), n, c))));
    }
    return eta;
  };
  // fp32 solves of A d = r (k columns, column-major): d = S·(S·A·S)⁻¹·S·r, each column of S·r
  // scaled by its largest entry to fit single precision (long double: S·r may exceed double)
  std::vector<float> f;
  auto fp32_solve = [&](const double* rhs, std::size_t k, double* out) {
    if (k == 0) return;
    f.resize(n * k);
    std::vector<long double> scale(k, 1.0L);
    for (std::size_t c = 0; c < k; ++c) {
      long double m = 0.0L;
      for (std::size_t i = 0; i < n; ++i)
        m = std::max(m, std::fabs(std::ldexp(static_cast<long double>(rhs[i + c * n]), ex[i])));
      scale[c] = m > 0 && std::isfinite(m) ? m : 1.0L;
      for (std::size_t i = 0; i < n; ++i)
        f[i + c * n] = static_cast<float>(std::ldexp(static_cast<long double>(rhs[i + c * n]), ex[i]) / scale[c]);
    }
    potrs(af, n, f, k);
    for (std::size_t c = 0; c < k; ++c)
      for (std::size_t i = 0; i < n; ++i)
        out[i + c * n] = static_cast<double>(std::ldexp(static_cast<long double>(f[i + c * n]) * scale[c], ex[i]));
  };
  // The same by exponent bands (detail::kSolveBandBits wide) of each column of S·r, one fp32 solve
  // per band, summed in fp64: entries more than fp32's range below the column's largest are
  // not flushed to 0 (the componentwise steps)
  std::vector<double> band_rhs, band_out;
  auto fp32_solve_banded = [&](const double* rhs, std::size_t k, double* out) {
    band_rhs.resize(n);
    band_out.resize(n);
    for (std::size_t c = 0; c < k; ++c) {
      const double* rc_ = rhs + c * n;
      std::vector<int> band(n, -1);
      int emax = std::numeric_limits<int>::min();
      for (std::size_t i = 0; i < n; ++i)
        if (rc_[i] != 0.0 && std::isfinite(rc_[i])) emax = std::max(emax, std::ilogb(rc_[i]) + ex[i]);
      std::uint64_t mask = 0;
      for (std::size_t i = 0; i < n; ++i)
        if (rc_[i] != 0.0 && std::isfinite(rc_[i])) {
          band[i] = std::min(63, (emax - (std::ilogb(rc_[i]) + ex[i])) / detail::kSolveBandBits);
          mask |= std::uint64_t{1} << band[i];
        }
      std::fill(out + c * n, out + (c + 1) * n, 0.0);
      for (int bd = 0; bd < 64; ++bd) {
        if (!(mask >> bd & 1)) continue;
        for (std::size_t i = 0; i < n; ++i) band_rhs[i] = band[i] == bd ? rc_[i] : 0.0;
        fp32_solve(band_rhs.data(), 1, band_out.data());
        for (std::size_t i = 0; i < n; ++i) out[i + c * n] += band_out[i];
      }
    }
  };
  // GMRES-IR step (gmres_ir.hpp): x_c += the FGMRES solution of A d = r_c for every column.
  const int m = static_cast<int>(std::min<std::size_t>(detail::kGmresIterations, n));
  std::vector<double> vz;
  auto gmres_step = [&]() {
    vz.resize(n * (2 * static_cast<std::size_t>(m) + 2));
    double* const V = vz.data();
    double* const Z = V + n * (m + 1);
    double* const w = Z + n * m;
    // the same steps as the GPU's DeviceFgmres, through BLAS (V, Z column-major, ld n)
    struct Ops {
      std::span<const double> a;
      std::size_t n;
      int m;
      const double* r;
      double* x;
      double *V, *Z, *w;
      const decltype(fp32_solve)& solve32;
      std::vector<double> hc = std::vector<double>(static_cast<std::size_t>(m) + 1);
      int ni() const { return static_cast<int>(n); }
      void set_divided(double* dst, const double* src, double d) const {  // dst = src / d (divide_scale)
        cblas_dcopy(ni(), src, 1, dst, 1);
        for (const double f : detail::divide_scale(d))
          if (f != 1.0) cblas_dscal(ni(), f, dst, 1);
      }
      double start() {
        const double beta = cblas_dnrm2(ni(), r, 1);
        if (beta > 0 && std::isfinite(beta)) set_divided(V, r, beta);
        return beta;
      }
      void precondition(int j) { solve32(V + j * n, 1, Z + j * n); }
      double arnoldi(int j, double* h) {
        symv(a, n, Z + j * n, w);
        for (int i = 0; i <= j; ++i) h[i] = 0.0;
        for (int pass = 0; pass < 2; ++pass) {  // classical Gram–Schmidt, twice (CGS2)
          cblas_dgemv(CblasColMajor, CblasTrans, ni(), j + 1, 1.0, V, ni(), w, 1, 0.0, hc.data(), 1);
          cblas_dgemv(CblasColMajor, CblasNoTrans, ni(), j + 1, -1.0, V, ni(), hc.data(), 1, 1.0, w, 1);
          for (int i = 0; i <= j; ++i) h[i] += hc[static_cast<std::size_t>(i)];
        }
        const double hn = cblas_dnrm2(ni(), w, 1);
        if (hn > 0 && std::isfinite(hn) && j + 1 < m) set_divided(V + (j + 1) * n, w, hn);
        return hn;
      }
      void correct(const double* y, int k) {
        cblas_dgemv(CblasColMajor, CblasNoTrans, ni(), k, 1.0, Z, ni(), y, 1, 1.0, x, 1);
      }
    };
    for (std::size_t c = 0; c < nrhs; ++c) {
      Ops ops{a, n, m, rc.data() + c * n, xc.data() + c * n, V, Z, w, fp32_solve};
      res.gmres_iterations += detail::fgmres(ops, m, detail::kGmresRelTol);
    }
  };

  if (info32 == 0 && n > 0 && nrhs > 0) {
    fp32_solve(bc.data(), nrhs, xc.data());
    double eta = eta_of();
    res.backward_error.push_back(eta);
    std::vector<double> d(n * nrhs);
    int stage_steps = 1;  // solves with the factor, then GMRES-IR steps
    bool gmres = false;
    while (eta > res.tolerance && std::isfinite(eta) && res.iterations < refinement.max_iterations) {
      const double prev = eta;
      if (gmres) {
        gmres_step();
        ++res.gmres_steps;
      } else {
        fp32_solve(rc.data(), nrhs, d.data());
        for (std::size_t i = 0; i < xc.size(); ++i) xc[i] += d[i];
      }
      ++res.iterations;
      ++stage_steps;
      eta = eta_of();
      res.backward_error.push_back(eta);
      if (gmres && !(eta < prev)) break;  // GMRES-IR stalled
      if (!gmres && refinement.gmres && detail::refinement_too_slow(stage_steps, eta, prev)) {
        gmres = true;
        stage_steps = 0;
      }
    }
    res.converged = eta <= res.tolerance;
    if (res.converged) {
      // ω of the converged x; above the threshold, banded steps while they lower it toward the
      // tolerance (RefinementOptions::componentwise_threshold); ω still above both after them: not
      // converged (the fp64 fallback). Long double where |A|·|x| + |b| leaves double (QA: A = I,
      // b = (1e308, 1e-308) gave NaN, and no step).
      const auto omega_of = [&]() {
        const double w = componentwise_of<double>(a, n, bc.data(), xc.data(), rc.data(), nrhs);
        return std::isnan(w)
                   ? static_cast<double>(componentwise_of<long double>(a, n, bc.data(), xc.data(), rc.data(), nrhs))
                   : w;
      };
      std::vector<double> kept;
      // QA: with the budget spent before any step (max_iterations), or steps that stall (GMRES-IR
      // systems with blocks 1e±150 apart), x kept lost components: not converged
      res.componentwise_backward_error = detail::componentwise_steps(
          [&] { kept = xc; },
          [&] {
            fp32_solve_banded(rc.data(), nrhs, d.data());
            for (std::size_t i = 0; i < xc.size(); ++i) xc[i] += d[i];
          },
          eta_of, omega_of, [&] { xc = kept; },  // rc is not used again
          omega_of(), refinement.componentwise_threshold, res.tolerance, refinement.max_iterations, res.iterations,
          res.componentwise_steps, res.backward_error, res.converged);
    }
  } else if (info32 == 0) {
    res.converged = true;  // nothing to solve
    res.componentwise_backward_error = 0.0;
  }
  if (res.converged) {
    unscaled_x();
    return res;
  }
  if (!refinement.fallback_fp64) {
    res.info = info32;  // 0 when the factor worked but the refinement did not converge
    unscaled_x();
    return res;
  }
  res.used_fp64_fallback = true;
  res.method += " (fell back to dpotrf + dpotrs)";
  res.info = solve_fp64(a, n, b, nrhs, x, on_flops);
  return res;
}

#if !defined(GEMFLOW_LINALG_HAVE_CUDA)
bool spd_solve_cuda_built() noexcept { return false; }
SpdSolveResult spd_solve_cuda(std::span<const double>, std::size_t, std::span<const double>, std::size_t,
                              std::span<double>, SolvePrecision, SpdAlgorithm, int, const RefinementOptions&,
                              Fp32Products) {
  throw std::runtime_error("spd_solve_cuda: Gemflow's linalg plugin was built without CUDA");
}
int cholesky_cuda(std::span<const double>, std::size_t, std::span<double>, SolvePrecision, SpdAlgorithm, int,
                  Fp32Products) {
  throw std::runtime_error("cholesky_cuda: Gemflow's linalg plugin was built without CUDA");
}
PivotedCholesky pivoted_cholesky_cuda(std::span<const double>, std::size_t, std::size_t, double, std::span<double>,
                                      int) {
  throw std::runtime_error("pivoted_cholesky_cuda: Gemflow's linalg plugin was built without CUDA");
}
#endif

}  // namespace gemflow::linalg
