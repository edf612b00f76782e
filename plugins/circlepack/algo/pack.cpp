// Collins–Stephenson iterations (plain and with super-steps) and Newton's method.
#include "gemflow/circlepack/pack.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numbers>
#include <queue>
#include <tuple>

#include <Eigen/SparseCholesky>
#include <Eigen/SparseCore>

#include "angles.hpp"
#include "gemflow/circlepack/pack_cuda.hpp"

namespace gemflow::circlepack {
namespace {

using Clock = std::chrono::steady_clock;

template <class T>
T cs_update(Geometry g, T x, T theta, T target, std::uint32_t k) {
  const T inv = T(1) / (T(2) * static_cast<T>(k));
  const T beta = std::min(std::sin(theta * inv), T(1) - std::numeric_limits<T>::epsilon());
  const T delta = std::sin(target * inv);
  if (g == Geometry::euclidean) {
    const T rho = x * beta / (T(1) - beta);  // k equal neighbours giving the same angle sum
    return rho * (T(1) - delta) / delta;
  }
  // hyperbolic, s-radii: sin(α/2) = s(1−t²)/(1−s²t²) for k equal neighbours of s-radius t
  const T t2 = x > beta ? (x - beta) / (x * (T(1) - beta * x)) : T(0);
  const T a = T(1) - t2;
  return T(2) * delta / (a + std::sqrt(a * a + T(4) * delta * delta * t2));
}

/// Log-label used for super-step extrapolation: log r (Euclidean), log h = log(−log s) (hyperbolic).
template <class T>
double to_y(Geometry g, T x) {
  return g == Geometry::euclidean ? std::log(static_cast<double>(x)) : std::log(-std::log(static_cast<double>(x)));
}
template <class T>
T from_y(Geometry g, double y) {
  return static_cast<T>(g == Geometry::euclidean ? std::exp(y) : std::exp(-std::exp(y)));
}

template <class T>
PackResult run_cs(const Complex& K, const Problem& p, const PackOptions& o, bool accelerate) {
  const auto t0 = Clock::now();
  const Geometry g = p.geometry;
  std::vector<T> x(p.labels.begin(), p.labels.end());
  std::vector<Index> free;
  std::vector<T> target;
  for (std::size_t v = 0; v < K.n; ++v)
    if (p.free(static_cast<Index>(v)) && !K.ideal[v])
      free.push_back(static_cast<Index>(v)), target.push_back(static_cast<T>(p.target[v]));
  PackResult r;
  std::vector<double> y, y_prev, d, d_prev;
  if (accelerate) {
    y.resize(free.size());
    for (std::size_t i = 0; i < free.size(); ++i) y[i] = to_y(g, x[free[i]]);
    d.assign(free.size(), 0.0);
  }
  auto exact_error = [&](const std::vector<T>& lab) {
    double e = 0;
    for (std::size_t i = 0; i < free.size(); ++i)
      e = std::max(e, std::abs(static_cast<double>(detail::angle_sum(K, g, lab.data(), free[i]) - target[i])));
    return e;
  };
  std::size_t since_try = 0;
  double err = exact_error(x);
  if (o.history_every) r.history_iteration.push_back(0), r.history_error.push_back(err);
  std::vector<T> trial;
  while (r.iterations < o.max_iterations) {
    if (err < o.tolerance) {
      r.converged = true;
      break;
    }
    double sweep_err = 0;
    for (std::size_t i = 0; i < free.size(); ++i) {
      const Index v = free[i];
      const T th = detail::angle_sum(K, g, x.data(), v);
      sweep_err = std::max(sweep_err, std::abs(static_cast<double>(th - target[i])));
      x[v] = cs_update<T>(g, x[v], th, target[i], K.petals(v));
    }
    ++r.iterations;
    err = sweep_err;
    if (accelerate) {
      y_prev.swap(y);
      y.resize(free.size());
      d_prev.swap(d);
      d.resize(free.size());
      double dd = 0, pp = 0, dp = 0;
      for (std::size_t i = 0; i < free.size(); ++i) {
        y[i] = to_y(g, x[free[i]]);
        d[i] = y[i] - y_prev[i];
        dd += d[i] * d[i];
        pp += d_prev[i] * d_prev[i];
        dp += d[i] * d_prev[i];
      }
      ++since_try;
      if (r.iterations >= 3 && since_try >= 3 && pp > 0 && dd > 0 && dp / std::sqrt(dd * pp) > 0.99) {
        const double lambda = std::sqrt(dd / pp);
        if (lambda < 1) {
          since_try = 0;
          const double current = exact_error(x);
          for (double f = std::min(lambda / (1 - lambda), 1000.0); f >= 0.5; f /= 4) {
            trial = x;
            for (std::size_t i = 0; i < free.size(); ++i) trial[free[i]] = from_y<T>(g, y[i] + f * d[i]);
            const double e = exact_error(trial);
            if (e < current && std::isfinite(e)) {
              x.swap(trial);
              for (std::size_t i = 0; i < free.size(); ++i) y[i] = to_y(g, x[free[i]]);
              ++r.supersteps;
              err = e;
              break;
            }
          }
        }
      }
    }
    if (err < o.tolerance) err = exact_error(x);  // the sweep's figure mixes old and new radii
    if (o.history_every && r.iterations % o.history_every == 0) {
      r.history_iteration.push_back(r.iterations);
      r.history_error.push_back(err);
    }
    if (o.monitor && !o.monitor(r.iterations, err)) {
      r.cancelled = true;
      break;
    }
    if (!std::isfinite(err)) break;
  }
  r.labels.assign(x.begin(), x.end());
  r.error = angle_error(K, p, r.labels);
  r.converged = r.error < o.tolerance;
  if (r.history_iteration.empty() || r.history_iteration.back() != r.iterations) {
    r.history_iteration.push_back(r.iterations);
    r.history_error.push_back(r.error);
  }
  r.seconds = std::chrono::duration<double>(Clock::now() - t0).count();
  return r;
}

PackResult run_newton(const Complex& K, const Problem& p, const PackOptions& o) {
  if (p.geometry != Geometry::euclidean)
    throw PackError("newton solves Euclidean packings only; use cs for the maximal (hyperbolic) packing");
  if (o.precision != Precision::fp64) throw PackError("newton runs in fp64 only; use cs for fp32");
  const auto t0 = Clock::now();
  std::vector<double> r = p.labels;
  // unknowns: free, non-ideal vertices; with no finite radius fixed the scale is free, and the
  // first unknown is pinned
  bool scale_fixed = false;
  for (std::size_t v = 0; v < K.n; ++v) scale_fixed = scale_fixed || (!p.free(static_cast<Index>(v)) && !K.ideal[v]);
  std::vector<std::int64_t> idx(K.n, -1);
  std::vector<Index> unknown, checked;
  for (std::size_t v = 0; v < K.n; ++v) {
    if (!p.free(static_cast<Index>(v)) || K.ideal[v]) continue;
    checked.push_back(static_cast<Index>(v));
    if (!scale_fixed && unknown.empty() && checked.size() == 1) continue;  // pinned
    idx[v] = static_cast<std::int64_t>(unknown.size());
    unknown.push_back(static_cast<Index>(v));
  }
  const auto m = static_cast<Eigen::Index>(unknown.size());
  PackResult res;
  auto residual = [&](const std::vector<double>& lab, Eigen::VectorXd& g) {
    g.resize(m);
    for (Eigen::Index i = 0; i < m; ++i) {
      const Index v = unknown[static_cast<std::size_t>(i)];
      g[i] = detail::angle_sum(K, Geometry::euclidean, lab.data(), v) - p.target[v];
    }
  };
  Eigen::SimplicialLDLT<Eigen::SparseMatrix<double>> solver;
  bool analysed = false;
  std::vector<Eigen::Triplet<double>> trip;
  Eigen::SparseMatrix<double> L(m, m);
  Eigen::VectorXd g, g_new, delta;
  double err = angle_error(K, p, r);
  if (o.history_every) res.history_iteration.push_back(0), res.history_error.push_back(err);
  std::vector<double> trial(r.size());
  if (m > 0) residual(r, g);
  // the error over the unknowns and the pinned vertex (whose residual Gauss–Bonnet ties to theirs)
  auto error_of = [&](const Eigen::VectorXd& res_g, const std::vector<double>& lab) {
    double e = m > 0 ? res_g.cwiseAbs().maxCoeff() : 0.0;
    for (const Index v : checked)
      if (idx[v] < 0) e = std::max(e, std::abs(detail::angle_sum(K, Geometry::euclidean, lab.data(), v) - p.target[v]));
    return e;
  };
  while (res.iterations < o.max_iterations && err >= o.tolerance && m > 0) {
    trip.clear();
    for (const auto& f : K.faces) {
      const int ideal = K.ideal[f[0]] + K.ideal[f[1]] + K.ideal[f[2]];
      if (ideal >= 2) continue;
      double rho;
      if (ideal == 0) {
        rho = std::sqrt(r[f[0]] * r[f[1]] * r[f[2]] / (r[f[0]] + r[f[1]] + r[f[2]]));
      } else {
        double prod = 1;
        for (Index v : f)
          if (!K.ideal[v]) prod *= r[v];
        rho = std::sqrt(prod);
      }
      for (int k = 0; k < 3; ++k) {
        const Index a = f[k], b = f[(k + 1) % 3];
        if (K.ideal[a] || K.ideal[b]) continue;
        const double w = rho / (r[a] + r[b]);
        const auto ia = idx[a], ib = idx[b];
        if (ia >= 0) trip.emplace_back(ia, ia, w);
        if (ib >= 0) trip.emplace_back(ib, ib, w);
        if (ia >= 0 && ib >= 0) trip.emplace_back(ia, ib, -w), trip.emplace_back(ib, ia, -w);
      }
    }
    L.setFromTriplets(trip.begin(), trip.end());
    if (!analysed) solver.analyzePattern(L), analysed = true;
    solver.factorize(L);
    if (solver.info() != Eigen::Success)
      throw PackError("newton: the Hessian could not be factorised (not positive definite)");
    delta = solver.solve(g);
    const double big = delta.cwiseAbs().maxCoeff();
    double t = big > 2 ? 2 / big : 1.0;
    const double norm0 = g.norm();
    bool accepted = false;
    for (int halvings = 0; halvings < 30; ++halvings, t *= 0.5) {
      trial = r;
      for (Eigen::Index i = 0; i < m; ++i) trial[unknown[static_cast<std::size_t>(i)]] *= std::exp(t * delta[i]);
      residual(trial, g_new);
      if (g_new.norm() < (1 - 1e-4 * t) * norm0 || g_new.norm() == 0) {
        accepted = true;
        break;
      }
    }
    ++res.iterations;
    if (!accepted) break;  // no decrease along the Newton direction: at rounding level
    r.swap(trial);
    g.swap(g_new);
    err = error_of(g, r);
    if (!std::isfinite(err)) err = angle_error(K, p, r);
    if (o.history_every && res.iterations % o.history_every == 0) {
      res.history_iteration.push_back(res.iterations);
      res.history_error.push_back(err);
    }
    if (o.monitor && !o.monitor(res.iterations, err)) {
      res.cancelled = true;
      break;
    }
  }
  res.labels = std::move(r);
  res.error = angle_error(K, p, res.labels);
  res.converged = res.error < o.tolerance;
  if (res.history_iteration.empty() || res.history_iteration.back() != res.iterations) {
    res.history_iteration.push_back(res.iterations);
    res.history_error.push_back(res.error);
  }
  res.seconds = std::chrono::duration<double>(Clock::now() - t0).count();
  return res;
}

}  // namespace

std::vector<double> angle_sums(const Complex& K, Geometry g, const std::vector<double>& labels) {
  std::vector<double> th(K.n, std::numeric_limits<double>::quiet_NaN());
  for (std::size_t v = 0; v < K.n; ++v)
    if (!K.ideal[v]) th[v] = detail::angle_sum(K, g, labels.data(), static_cast<Index>(v));
  return th;
}

double angle_error(const Complex& K, const Problem& p, const std::vector<double>& labels) {
  double e = 0;
  for (std::size_t v = 0; v < K.n; ++v) {
    if (K.ideal[v] || !p.free(static_cast<Index>(v))) continue;
    const double d = std::abs(detail::angle_sum(K, p.geometry, labels.data(), static_cast<Index>(v)) - p.target[v]);
    if (!(d <= e)) e = d;  // NaN propagates
  }
  return e;
}

PackResult pack(const Complex& K, const Problem& p, const PackOptions& o) {
  if (p.labels.size() != K.n || p.target.size() != K.n)
    throw PackError("problem has " + std::to_string(p.labels.size()) + " labels for " + std::to_string(K.n) +
                    " vertices");
  if (!(o.tolerance > 0)) throw PackError("tolerance must be > 0");
  switch (o.algorithm) {
    case Algorithm::newton:
      return run_newton(K, p, o);
    case Algorithm::cs_plain:
    case Algorithm::cs: {
      const bool acc = o.algorithm == Algorithm::cs;
      return o.precision == Precision::fp32 ? run_cs<float>(K, p, o, acc) : run_cs<double>(K, p, o, acc);
    }
  }
  return {};
}

std::vector<std::uint8_t> colour_vertices(const Complex& K, const Problem& p) {
  std::vector<std::uint8_t> colour(K.n, 255);
  std::vector<std::array<std::uint64_t, 4>> seen(K.n, {0, 0, 0, 0});  // colours among the neighbours
  std::vector<std::uint32_t> sat(K.n, 0), open(K.n, 0);
  using Entry = std::tuple<std::uint32_t, std::uint32_t, std::int64_t>;  // saturation, uncoloured nbrs, −index
  std::priority_queue<Entry> heap;
  auto active = [&](std::size_t v) { return !K.ideal[v] && p.free(static_cast<Index>(v)); };
  for (std::size_t v = 0; v < K.n; ++v) {
    if (!active(v)) continue;
    for (std::uint32_t j = K.offset[v]; j < K.offset[v + 1]; ++j) open[v] += active(K.flower[j]) ? 1u : 0u;
    heap.emplace(0, open[v], -static_cast<std::int64_t>(v));
  }
  while (!heap.empty()) {
    const auto [s, o, mv] = heap.top();
    heap.pop();
    const auto v = static_cast<Index>(-mv);
    if (colour[v] != 255 || s != sat[v] || o != open[v]) continue;  // stale entry
    std::uint32_t c = 0;
    while (c < 255 && (seen[v][c / 64] >> (c % 64) & 1u)) ++c;
    if (c >= 255) throw PackError("colouring: vertex " + std::to_string(v) + " needs more than 254 colours");
    colour[v] = static_cast<std::uint8_t>(c);
    for (std::uint32_t j = K.offset[v]; j < K.offset[v + 1]; ++j) {
      const Index w = K.flower[j];
      if (!active(w) || colour[w] != 255) continue;
      --open[w];
      if (!(seen[w][c / 64] >> (c % 64) & 1u)) seen[w][c / 64] |= std::uint64_t{1} << (c % 64), ++sat[w];
      heap.emplace(sat[w], open[w], -static_cast<std::int64_t>(w));
    }
  }
  return colour;
}

}  // namespace gemflow::circlepack
