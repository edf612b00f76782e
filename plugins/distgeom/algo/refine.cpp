// DG error function and its L-BFGS minimisation (see gemflow/distgeom/refine.hpp).
#include "gemflow/distgeom/refine.hpp"

#include <lbfgs.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>
#include <string>

#include "gemflow/distgeom/geometry.hpp"

namespace gemflow::distgeom {
namespace {

struct Pair {
  std::size_t i, j;
  double l2, u2;  // squared bounds
};

struct Problem {
  std::size_t n = 0, dim = 3;
  std::vector<Pair> fixed;    // explicit pairs
  std::vector<Pair> dynamic;  // rebuilt
  std::span<const ChiralTerm> chirals;
  std::vector<AmbiguousTerm> ambiguous;
  RefineOptions o;
  double w4 = 0.0;
  std::size_t evaluations = 0;

  double evaluate(const double* x, double* g) const {
    std::fill(g, g + n * dim, 0.0);
    double e = 0.0;
    auto pair_term = [&](const Pair& p) {
      const double* a = x + p.i * dim;
      const double* b = x + p.j * dim;
      double diff[4];
      double s = 0;
      for (std::size_t k = 0; k < dim; ++k) {
        diff[k] = a[k] - b[k];
        s += diff[k] * diff[k];
      }
      double coef = 0;
      if (s > p.u2) {
        const double t = s / p.u2 - 1.0;
        e += o.w_upper * t * t;
        coef = o.w_upper * 4.0 * t / p.u2;
      } else if (s < p.l2) {
        const double q = p.l2 + s;
        const double f = 2.0 * p.l2 / q - 1.0;
        e += o.w_lower * f * f;
        coef = o.w_lower * 4.0 * f * (-2.0 * p.l2 / (q * q));
      } else {
        return;
      }
      double* ga = g + p.i * dim;
      double* gb = g + p.j * dim;
      for (std::size_t k = 0; k < dim; ++k) {
        ga[k] += coef * diff[k];
        gb[k] -= coef * diff[k];
      }
    };
    for (const auto& p : fixed) pair_term(p);
    for (const auto& p : dynamic) pair_term(p);
    for (const auto& c : chirals) {
      const double* pc = x + c.centre * dim;
      const double* pa = x + c.a * dim;
      const double* pb = x + c.b * dim;
      const double* pd = x + c.c * dim;
      const double u[3] = {pa[0] - pc[0], pa[1] - pc[1], pa[2] - pc[2]};
      const double v[3] = {pb[0] - pc[0], pb[1] - pc[1], pb[2] - pc[2]};
      const double w[3] = {pd[0] - pc[0], pd[1] - pc[1], pd[2] - pc[2]};
      const double vw[3] = {v[1] * w[2] - v[2] * w[1], v[2] * w[0] - v[0] * w[2], v[0] * w[1] - v[1] * w[0]};
      const double wu[3] = {w[1] * u[2] - w[2] * u[1], w[2] * u[0] - w[0] * u[2], w[0] * u[1] - w[1] * u[0]};
      const double uv[3] = {u[1] * v[2] - u[2] * v[1], u[2] * v[0] - u[0] * v[2], u[0] * v[1] - u[1] * v[0]};
      const double vol = u[0] * vw[0] + u[1] * vw[1] + u[2] * vw[2];
      const double dv = vol - c.volume;
      e += o.w_chiral * dv * dv;
      const double f = 2.0 * o.w_chiral * dv;
      for (std::size_t k = 0; k < 3; ++k) {
        g[c.a * dim + k] += f * vw[k];
        g[c.b * dim + k] += f * wu[k];
        g[c.c * dim + k] += f * uv[k];
        g[c.centre * dim + k] -= f * (vw[k] + wu[k] + uv[k]);
      }
    }
    for (const auto& a : ambiguous) {
      double sum = 0;
      for (auto [i, j] : a.pairs) {
        double s = 0;
        for (std::size_t k = 0; k < dim; ++k)
          s += (x[i * dim + k] - x[j * dim + k]) * (x[i * dim + k] - x[j * dim + k]);
        sum += 1.0 / (s * s * s);
      }
      const double deff2 = std::pow(sum, -1.0 / 3.0);
      const double u2 = a.upper * a.upper;
      if (deff2 <= u2) continue;
      const double t = deff2 / u2 - 1.0;
      e += o.w_ambiguous * t * t;
      const double de_dsum = o.w_ambiguous * 2.0 * t / u2 * (-1.0 / 3.0) * deff2 / sum;
      for (auto [i, j] : a.pairs) {
        double diff[4], s = 0;
        for (std::size_t k = 0; k < dim; ++k) {
          diff[k] = x[i * dim + k] - x[j * dim + k];
          s += diff[k] * diff[k];
        }
        const double coef = de_dsum * (-3.0 / (s * s * s * s)) * 2.0;
        for (std::size_t k = 0; k < dim; ++k) {
          g[i * dim + k] += coef * diff[k];
          g[j * dim + k] -= coef * diff[k];
        }
      }
    }
    if (dim == 4 && w4 > 0) {
      for (std::size_t i = 0; i < n; ++i) {
        const double v = x[i * 4 + 3];
        e += w4 * v * v;
        g[i * 4 + 3] += 2.0 * w4 * v;
      }
    }
    return e;
  }
};

struct Cancel {
  Problem* problem;
  const RefineProgress* progress;
  double fraction;
  bool cancelled = false;
  std::size_t iterations = 0;
};

lbfgsfloatval_t evaluate_cb(void* inst, const lbfgsfloatval_t* x, lbfgsfloatval_t* g, const int,
                            const lbfgsfloatval_t) {
  auto* p = static_cast<Cancel*>(inst)->problem;
  ++p->evaluations;
  return p->evaluate(x, g);
}

int progress_cb(void* inst, const lbfgsfloatval_t*, const lbfgsfloatval_t*, const lbfgsfloatval_t,
                const lbfgsfloatval_t, const lbfgsfloatval_t, const lbfgsfloatval_t, int, int k, int) {
  auto* c = static_cast<Cancel*>(inst);
  c->iterations = static_cast<std::size_t>(k);
  if (c->progress && *c->progress && k % 10 == 0 && !(*c->progress)(c->fraction, "")) {
    c->cancelled = true;
    return 1;
  }
  return 0;
}

}  // namespace

RefineResult refine(std::span<const double> coords, std::size_t n, std::size_t dim, std::span<const double> lower,
                    std::span<const double> upper, std::span<const ChiralTerm> chirals,
                    std::span<const AmbiguousTerm> ambiguous, const RefineOptions& o, const RefineProgress& progress) {
  if (dim != 3 && dim != 4) throw std::invalid_argument("refine: dim must be 3 or 4");
  if (coords.size() != n * dim) throw std::invalid_argument("refine: coordinates are not n×dim");
  // NaN fails every violation test, so a NaN start would "refine" to a DG error of 0
  for (std::size_t k = 0; k < coords.size(); ++k)
    if (!std::isfinite(coords[k]))
      throw std::invalid_argument("refine: the starting coordinate of atom " + std::to_string(k / dim) +
                                  " is not finite (" + std::to_string(coords[k]) + ")");
  if (lower.size() != n * n || upper.size() != n * n) throw std::invalid_argument("refine: bounds are not n×n");
  for (const auto& c : chirals)
    if (std::max({c.centre, c.a, c.b, c.c}) >= n) throw std::invalid_argument("refine: chiral term atom out of range");
  double umax = 0;
  for (std::size_t k = 0; k < n * n; ++k) umax = std::max(umax, upper[k]);
  Problem pb;
  pb.n = n;
  pb.dim = dim;
  pb.o = o;
  pb.chirals = chirals;
  pb.ambiguous.assign(ambiguous.begin(), ambiguous.end());
  double lmax_other = 0;
  for (std::size_t i = 0; i < n; ++i)
    for (std::size_t j = i + 1; j < n; ++j) {
      const double l = lower[i * n + j], u = upper[i * n + j];
      if (u < umax) pb.fixed.push_back({i, j, l * l, u * u});
      else lmax_other = std::max(lmax_other, l);
    }
  const double rc2 = (lmax_other + o.skin) * (lmax_other + o.skin);

  lbfgsfloatval_t* x = lbfgs_malloc(static_cast<int>(n * 4));
  if (!x) throw std::bad_alloc();
  struct Free {
    lbfgsfloatval_t* p;
    ~Free() { lbfgs_free(p); }
  } guard{x};
  std::copy(coords.begin(), coords.end(), x);

  auto rebuild = [&]() {
    pb.dynamic.clear();
    const std::size_t d = pb.dim;
    for (std::size_t i = 0; i < n; ++i)
      for (std::size_t j = i + 1; j < n; ++j) {
        const double u = upper[i * n + j];
        if (u < umax) continue;
        double s = 0;
        for (std::size_t k = 0; k < d; ++k) s += (x[i * d + k] - x[j * d + k]) * (x[i * d + k] - x[j * d + k]);
        if (s < rc2 || s > 0.81 * u * u) pb.dynamic.push_back({i, j, lower[i * n + j] * lower[i * n + j], u * u});
      }
  };

  // Stages: the 4D squeeze schedule (when dim == 4), then 3D.
  std::vector<double> stages;
  if (dim == 4) stages = o.w4_schedule;
  stages.push_back(-1.0);  // 3D
  const std::size_t budget = std::max<std::size_t>(o.max_iterations, 1);
  const std::size_t per4d = dim == 4 ? budget / (2 * std::max<std::size_t>(o.w4_schedule.size(), 1)) : 0;
  std::size_t used = 0;
  RefineResult res;
  lbfgs_parameter_t param;
  lbfgs_parameter_init(&param);
  param.epsilon = o.epsilon;
  param.max_linesearch = 40;
  for (std::size_t st = 0; st < stages.size(); ++st) {
    const bool last = st + 1 == stages.size();
    if (last && pb.dim == 4) {  // drop the 4th dimension
      for (std::size_t i = 0; i < n; ++i)
        for (std::size_t k = 0; k < 3; ++k) x[i * 3 + k] = x[i * 4 + k];
      pb.dim = 3;
    }
    pb.w4 = last ? 0.0 : stages[st];
    const std::size_t stage_budget = last ? budget - std::min(used, budget) : per4d;
    std::size_t stage_used = 0;
    while (stage_used < stage_budget) {
      rebuild();
      param.max_iterations = static_cast<int>(std::min(o.rebuild_every, stage_budget - stage_used));
      Cancel c{&pb, &progress, static_cast<double>(used) / static_cast<double>(budget)};
      lbfgsfloatval_t fx = 0;
      const int ret = lbfgs(static_cast<int>(n * pb.dim), x, &fx, evaluate_cb, progress_cb, &c, &param);
      if (c.cancelled) throw std::runtime_error("cancelled");
      const std::size_t it = std::max<std::size_t>(1, c.iterations);
      stage_used += it;
      used += it;
      res.error = fx;
      if (ret == LBFGSERR_MAXIMUMITERATION) continue;
      // Converged (or the line search cannot improve; liblbfgs keeps the last good point):
      // done when a rebuild leaves the pair list unchanged.
      const auto old = pb.dynamic.size();
      rebuild();
      if (pb.dynamic.size() == old || ret < 0) break;
    }
    if (progress && !progress(static_cast<double>(used) / static_cast<double>(budget),
                              last ? "3D refinement" : "4D squeeze w4=" + std::to_string(stages[st])))
      throw std::runtime_error("cancelled");
  }
  res.iterations = used;
  res.coords.assign(x, x + n * 3);
  // Final statistics over all pairs.
  RefineOptions o3 = o;
  res.error = dg_error(res.coords, n, lower, upper, chirals, ambiguous, o3);
  for (std::size_t i = 0; i < n; ++i)
    for (std::size_t j = i + 1; j < n; ++j) {
      double s = 0;
      for (std::size_t k = 0; k < 3; ++k)
        s += (res.coords[i * 3 + k] - res.coords[j * 3 + k]) * (res.coords[i * 3 + k] - res.coords[j * 3 + k]);
      const double d = std::sqrt(s);
      const double vu = d - upper[i * n + j], vl = lower[i * n + j] - d;
      if (vu > 0.5) ++res.upper_violations;
      if (vl > 0.5) ++res.lower_violations;
      res.max_violation = std::max({res.max_violation, vu, vl});
    }
  for (const auto& c : chirals) {
    if (std::abs(c.volume) < 0.5) continue;
    const double v =
        chiral_volume(&res.coords[c.centre * 3], &res.coords[c.a * 3], &res.coords[c.b * 3], &res.coords[c.c * 3]);
    if ((v > 0) != (c.volume > 0)) ++res.chiral_wrong;
  }
  return res;
}

double dg_error(std::span<const double> coords, std::size_t n, std::span<const double> lower,
                std::span<const double> upper, std::span<const ChiralTerm> chirals,
                std::span<const AmbiguousTerm> ambiguous, const RefineOptions& o) {
  if (coords.size() != n * 3 || lower.size() != n * n || upper.size() != n * n)
    throw std::invalid_argument("dg_error: sizes do not match n");
  Problem pb;
  pb.n = n;
  pb.dim = 3;
  pb.o = o;
  pb.chirals = chirals;
  pb.ambiguous.assign(ambiguous.begin(), ambiguous.end());
  for (std::size_t i = 0; i < n; ++i)
    for (std::size_t j = i + 1; j < n; ++j)
      pb.fixed.push_back({i, j, lower[i * n + j] * lower[i * n + j], upper[i * n + j] * upper[i * n + j]});
  std::vector<double> g(n * 3);
  return pb.evaluate(coords.data(), g.data());
}

}  // namespace gemflow::distgeom
