// Triangle smoothing: input checks, the fp64 per-k reference, the doubled-graph oracle and the
// explanation of inconsistent pairs. The blocked fast path is in smoothing_blocked.cpp.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <stdexcept>
#include <string>
#include <vector>

#include "gemflow/distgeom/smoothing.hpp"
#include "smoothing_internal.hpp"

namespace gemflow::distgeom {

namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

std::string num(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.6g", v);
  return buf;
}

std::string pair_text(std::size_t i, std::size_t j) { return "(" + std::to_string(i) + ", " + std::to_string(j) + ")"; }

template <class T>
std::optional<BoundsDefect> check_impl(std::span<const T> lower, std::span<const T> upper, std::size_t n,
                                       double tolerance) {
  using K = BoundsDefect::Kind;
  if (lower.size() != n * n || upper.size() != n * n) {
    BoundsDefect d;
    d.kind = K::Size;
    d.i = lower.size();
    d.j = upper.size();
    d.lower_ji = static_cast<double>(n);
    return d;
  }
  auto make = [&](K kind, std::size_t i, std::size_t j) {
    BoundsDefect d;
    d.kind = kind;
    d.i = i;
    d.j = j;
    d.lower = lower[i * n + j];
    d.upper = upper[i * n + j];
    d.lower_ji = lower[j * n + i];
    d.upper_ji = upper[j * n + i];
    return d;
  };
  // Fast, branch-free screening (cache-blocked for the transposed reads); the row-major scans
  // below only run when it finds something, to name the first offending pair.
  bool bad_value = false, bad_pair = false;
  for (std::size_t k = 0; k < n * n; ++k) {
    const T l = lower[k], u = upper[k];
    bad_value |= (l != l) | (u != u) | (l < 0) | (u < 0) | (l == std::numeric_limits<T>::infinity());
  }
  constexpr std::size_t B = 32;
  for (std::size_t i0 = 0; i0 < n && !bad_value; i0 += B)
    for (std::size_t j0 = i0; j0 < n; j0 += B)
      for (std::size_t i = i0; i < std::min(n, i0 + B); ++i)
        for (std::size_t j = j0; j < std::min(n, j0 + B); ++j) {
          const T l = lower[i * n + j], u = upper[i * n + j];
          bad_pair |= (l != lower[j * n + i]) | (u != upper[j * n + i]) |
                      (static_cast<double>(l) > static_cast<double>(u) + tolerance) |
                      ((i == j) & ((l != 0) | (u != 0)));
        }
  if (!bad_value && !bad_pair) return std::nullopt;
  // Values first, so that a NaN is reported as such and not as an asymmetry.
  for (std::size_t i = 0; i < n; ++i)
    for (std::size_t j = 0; j < n; ++j) {
      const T l = lower[i * n + j], u = upper[i * n + j];
      if (std::isnan(l) || std::isnan(u)) return make(K::NotANumber, i, j);
      if (l < 0 || u < 0) return make(K::Negative, i, j);
      if (std::isinf(l)) return make(K::InfiniteLower, i, j);
    }
  for (std::size_t i = 0; i < n; ++i)
    for (std::size_t j = 0; j < n; ++j) {
      const T l = lower[i * n + j], u = upper[i * n + j];
      if (i == j) {
        if (l != 0 || u != 0) return make(K::NonzeroDiagonal, i, j);
        continue;
      }
      if (l != lower[j * n + i] || u != upper[j * n + i]) return make(K::NotSymmetric, i, j);
      if (static_cast<double>(l) > static_cast<double>(u) + tolerance) return make(K::LowerAboveUpper, i, j);
    }
  return std::nullopt;
}

/// Dense Dijkstra on the upper-bound graph (all U ≥ 0; +inf = no edge), lowest index on ties.
void dijkstra(const std::vector<double>& U, std::size_t n, std::size_t src, std::vector<double>& dist,
              std::vector<std::size_t>& pred) {
  dist.assign(n, kInf);
  pred.assign(n, n);
  std::vector<char> done(n, 0);
  dist[src] = 0;
  for (std::size_t it = 0; it < n; ++it) {
    std::size_t u = n;
    for (std::size_t x = 0; x < n; ++x)
      if (!done[x] && (u == n || dist[x] < dist[u])) u = x;
    if (u == n || dist[u] == kInf) break;
    done[u] = 1;
    for (std::size_t v = 0; v < n; ++v) {
      const double w = U[u * n + v];
      if (done[v] || w == kInf) continue;
      const double d = dist[u] + w;
      if (d < dist[v]) {
        dist[v] = d;
        pred[v] = u;
      }
    }
  }
}

/// The chain src ⇝ x as atoms [src, …, x] from a predecessor array.
std::vector<std::size_t> chain(const std::vector<std::size_t>& pred, std::size_t src, std::size_t x) {
  std::vector<std::size_t> p{x};
  while (p.back() != src) p.push_back(pred[p.back()]);
  std::reverse(p.begin(), p.end());
  return p;
}

template <class T>
InconsistencyPath explain_impl(std::span<const T> lower_in, std::span<const T> upper_in, std::size_t n, std::size_t i,
                               std::size_t j) {
  if (lower_in.size() != n * n || upper_in.size() != n * n)
    throw std::invalid_argument("explain_inconsistency: lower/upper must have n*n = " + std::to_string(n * n) +
                                " elements");
  if (i >= n || j >= n)
    throw std::invalid_argument("explain_inconsistency: pair " + pair_text(i, j) +
                                " out of range for n = " + std::to_string(n));
  const std::vector<double> L(lower_in.begin(), lower_in.end()), U(upper_in.begin(), upper_in.end());
  std::vector<double> di, dj;
  std::vector<std::size_t> pi, pj;
  dijkstra(U, n, i, di, pi);
  dijkstra(U, n, j, dj, pj);
  // D(i, j') = min over the crossing arc a→b' of U'_ia − L_ab + U'_bj (doubled graph).
  std::size_t a = i, b = j;
  double best = -kInf;
  for (std::size_t x = 0; x < n; ++x) {
    if (di[x] == kInf) continue;
    for (std::size_t y = 0; y < n; ++y) {
      if (dj[y] == kInf) continue;
      const double v = L[x * n + y] - di[x] - dj[y];
      if (v > best) {
        best = v;
        a = x;
        b = y;
      }
    }
  }
  InconsistencyPath p;
  p.i = i;
  p.j = j;
  // a ⇝ i (reverse of i ⇝ a; U symmetric), i ⇝ j, j ⇝ b.
  std::vector<std::size_t> ia = chain(pi, i, a);
  p.atoms.assign(ia.rbegin(), ia.rend());
  p.pos_i = p.atoms.size() - 1;
  if (di[j] != kInf) {
    const auto ij = chain(pi, i, j);
    p.atoms.insert(p.atoms.end(), ij.begin() + 1, ij.end());
  } else if (i != j) {
    // No upper-bound path i ⇝ j: U'_ij = +inf, nothing to explain. Keep the chain honest:
    // mark it with an infinite step.
    p.atoms.push_back(j);
  }
  p.pos_j = p.atoms.size() - 1;
  const auto jb = chain(pj, j, b);
  p.atoms.insert(p.atoms.end(), jb.begin() + 1, jb.end());
  p.lower = L[a * n + b];
  for (std::size_t s = 0; s + 1 < p.atoms.size(); ++s) {
    const double u = U[p.atoms[s] * n + p.atoms[s + 1]];
    p.upper.push_back(u);
    p.upper_sum += u;
  }
  return p;
}

template <class T>
SmoothingReport reference_impl(std::span<T> lower, std::span<T> upper, std::size_t n, const CancelFn& cancel,
                               double tolerance) {
  detail::require_valid_bounds<T>(lower, upper, n, tolerance);
  std::vector<double> L(lower.begin(), lower.end()), U(upper.begin(), upper.end());
  std::vector<double> rowL(n), rowU(n);
  for (std::size_t k = 0; k < n; ++k) {
    if (cancel && cancel(static_cast<double>(k) / static_cast<double>(n))) {
      SmoothingReport r;
      r.cancelled = true;
      return r;
    }
    // Row k before step k (U's row k does not change in step k; L's may, when L_kk > 0).
    std::copy_n(L.begin() + static_cast<std::ptrdiff_t>(k * n), n, rowL.begin());
    std::copy_n(U.begin() + static_cast<std::ptrdiff_t>(k * n), n, rowU.begin());
    const double lkk = rowL[k];
    for (std::size_t i = 0; i < n; ++i) {
      double* Ui = U.data() + i * n;
      double* Li = L.data() + i * n;
      const double uik = Ui[k];
      const double lik = std::max(Li[k], lkk - uik);  // D(i, k') after pivot k
      for (std::size_t j = 0; j < n; ++j) {
        Ui[j] = std::min(Ui[j], uik + rowU[j]);                           // i → k → j
        Li[j] = std::max(Li[j], std::max(rowL[j] - uik, lik - rowU[j]));  // i→k→j', i→k'→j'
      }
    }
  }
  if (cancel) cancel(1.0);
  SmoothingReport r = detail::finish_report<T>(lower, upper, n, tolerance, [&](std::size_t i) {
    return std::pair<const double*, const double*>(L.data() + i * n, U.data() + i * n);
  });
  std::transform(L.begin(), L.end(), lower.begin(), [](double v) { return static_cast<T>(v); });
  std::transform(U.begin(), U.end(), upper.begin(), [](double v) { return static_cast<T>(v); });
  return r;
}

}  // namespace

std::string BoundsDefect::message() const {
  using K = Kind;
  const std::string p = "bounds " + pair_text(i, j);
  switch (kind) {
    case K::Size:
      return "bounds: lower has " + std::to_string(i) + " and upper " + std::to_string(j) +
             " elements, expected n*n with n = " + num(lower_ji);
    case K::NotANumber: return p + ": NaN (lower " + num(lower) + " Å, upper " + num(upper) + " Å)";
    case K::Negative: return p + ": negative bound (lower " + num(lower) + " Å, upper " + num(upper) + " Å)";
    case K::InfiniteLower: return p + ": infinite lower bound (upper " + num(upper) + " Å)";
    case K::NonzeroDiagonal: return p + ": diagonal must be 0 (lower " + num(lower) + " Å, upper " + num(upper) + " Å)";
    case K::NotSymmetric:
      return p + ": not symmetric: lower " + num(lower) + " / " + num(lower_ji) + " Å, upper " + num(upper) + " / " +
             num(upper_ji) + " Å at " + pair_text(i, j) + " / " + pair_text(j, i);
    case K::LowerAboveUpper: return p + ": lower bound " + num(lower) + " Å > upper bound " + num(upper) + " Å";
  }
  return p + ": invalid";
}

std::optional<BoundsDefect> check_bounds(std::span<const double> lower, std::span<const double> upper, std::size_t n,
                                         double tolerance) {
  return check_impl(lower, upper, n, tolerance);
}
std::optional<BoundsDefect> check_bounds(std::span<const float> lower, std::span<const float> upper, std::size_t n,
                                         double tolerance) {
  return check_impl(lower, upper, n, tolerance);
}

InconsistencyPath explain_inconsistency(std::span<const double> lower_in, std::span<const double> upper_in,
                                        std::size_t n, std::size_t i, std::size_t j) {
  return explain_impl(lower_in, upper_in, n, i, j);
}
InconsistencyPath explain_inconsistency(std::span<const float> lower_in, std::span<const float> upper_in, std::size_t n,
                                        std::size_t i, std::size_t j) {
  return explain_impl(lower_in, upper_in, n, i, j);
}

SmoothingReport smooth_bounds_reference(std::span<double> lower, std::span<double> upper, std::size_t n,
                                        const CancelFn& cancel, double tolerance) {
  return reference_impl(lower, upper, n, cancel, tolerance);
}
SmoothingReport smooth_bounds_reference(std::span<float> lower, std::span<float> upper, std::size_t n,
                                        const CancelFn& cancel, double tolerance) {
  return reference_impl(lower, upper, n, cancel, tolerance);
}

void smooth_bounds_doubled_graph_oracle(std::span<double> lower, std::span<double> upper, std::size_t n) {
  if (lower.size() != n * n || upper.size() != n * n)
    throw std::invalid_argument("doubled-graph oracle: lower/upper must have n*n elements");
  // Vertex 2x = atom x (left copy), 2x+1 = x' (right copy). Arcs: x→y and x'→y' weight U_xy,
  // x→y' weight −L_xy; nothing from right to left.
  const std::size_t m = 2 * n;
  std::vector<double> D(m * m, kInf);
  for (std::size_t x = 0; x < n; ++x)
    for (std::size_t y = 0; y < n; ++y) {
      D[(2 * x) * m + 2 * y] = upper[x * n + y];
      D[(2 * x + 1) * m + 2 * y + 1] = upper[x * n + y];
      D[(2 * x) * m + 2 * y + 1] = -lower[x * n + y];
    }
  for (std::size_t v = 0; v < m; ++v) D[v * m + v] = std::min(D[v * m + v], 0.0);
  for (std::size_t k = 0; k < m; ++k)
    for (std::size_t a = 0; a < m; ++a) {
      const double dak = D[a * m + k];
      if (dak == kInf) continue;
      for (std::size_t b = 0; b < m; ++b) D[a * m + b] = std::min(D[a * m + b], dak + D[k * m + b]);
    }
  for (std::size_t x = 0; x < n; ++x)
    for (std::size_t y = 0; y < n; ++y) {
      upper[x * n + y] = D[(2 * x) * m + 2 * y];
      lower[x * n + y] = -D[(2 * x) * m + 2 * y + 1];
    }
}

}  // namespace gemflow::distgeom
