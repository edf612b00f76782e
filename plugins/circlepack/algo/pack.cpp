// Collins–Stephenson iterations (plain and with super-steps) and Newton's method.
#include "gemflow/circlepack/pack.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <condition_variable>
#include <exception>
#include <limits>
#include <memory>
#include <mutex>
#include <numbers>
#include <queue>
#include <thread>
#include <tuple>

#include <tbb/blocked_range.h>
#include <tbb/parallel_for.h>
#include <Eigen/SparseCholesky>
#include <Eigen/SparseCore>

#include "angles.hpp"
#include "gemflow/circlepack/pack_cuda.hpp"
#include "newton_rules.hpp"

namespace gemflow::circlepack {
namespace {

using Clock = std::chrono::steady_clock;

/// Runs `work` on a thread of its own and waits for it, asking `stopped` every 50 ms. When
/// `stopped` says so, returns false at once and leaves the thread to finish alone: `work` must own
/// everything it touches (shared state). For one long library call that cannot poll (a sparse
/// factorisation of seconds), so that cancel does not wait for it. Rethrows what `work` throws.
template <class Work, class Stopped>
bool run_abandonable(Work work, Stopped stopped) {
  struct State {
    std::mutex m;
    std::condition_variable cv;
    bool done = false;
    std::exception_ptr error;
  };
  auto st = std::make_shared<State>();
  std::thread th([st, work = std::move(work)]() mutable {
    std::exception_ptr e;
    try {
      work();
    } catch (...) {
      e = std::current_exception();
    }
    std::lock_guard lock(st->m);
    st->error = e;
    st->done = true;
    st->cv.notify_all();
  });
  std::unique_lock lock(st->m);
  while (!st->cv.wait_for(lock, std::chrono::milliseconds(50), [&] { return st->done; })) {
    lock.unlock();
    const bool stop = stopped();
    lock.lock();
    if (stop && !st->done) {
      th.detach();
      return false;
    }
  }
  lock.unlock();
  th.join();
  if (st->error) std::rethrow_exception(st->error);
  return true;
}

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

/// Records (iteration, error) every history_every iterations and at the end; sets the timing.
void finish(PackResult& r, const Complex& K, const Problem& p, const PackOptions& o, Clock::time_point t0) {
  r.error = angle_error(K, p, r.labels);
  r.converged = r.error < o.tolerance;
  if (r.history_iteration.empty() || r.history_iteration.back() != r.iterations) {
    r.history_iteration.push_back(r.iterations);
    r.history_error.push_back(r.error);
  }
  r.seconds = std::chrono::duration<double>(Clock::now() - t0).count();
}

/// Calls PackOptions::preview after the first iteration and then at most every preview_seconds.
class Previewer {
 public:
  explicit Previewer(const PackOptions& o) : o_(o) {}
  template <class T>
  void operator()(const std::vector<T>& labels) {
    if (!o_.preview) return;
    const auto now = Clock::now();
    if (shown_ && std::chrono::duration<double>(now - last_).count() < o_.preview_seconds) return;
    shown_ = true;
    last_ = now;
    o_.preview(std::vector<double>(labels.begin(), labels.end()));
  }

 private:
  const PackOptions& o_;
  bool shown_ = false;
  Clock::time_point last_;
};

/// Collins–Stephenson sweeps in precision T, with or without super-steps.
template <class T>
class CsRun {
 public:
  CsRun(const Complex& K, const Problem& p, const PackOptions& o, bool accelerate)
      : K_(K), p_(p), o_(o), g_(p.geometry), accelerate_(accelerate), x_(p.labels.begin(), p.labels.end()) {
    for (std::size_t v = 0; v < K.n; ++v)
      if (p.free(static_cast<Index>(v)) && !K.ideal[v])
        free_.push_back(static_cast<Index>(v)), target_.push_back(static_cast<T>(p.target[v]));
    if (accelerate_) {
      y_.resize(free_.size());
      for (std::size_t i = 0; i < free_.size(); ++i) y_[i] = to_y(g_, x_[free_[i]]);
      d_.assign(free_.size(), 0.0);
    }
  }

  PackResult run() {
    const auto t0 = Clock::now();
    double err = exact_error(x_);
    if (o_.history_every) r_.history_iteration.push_back(0), r_.history_error.push_back(err);
    // Stagnation: the least error of each window of kStagnationSweeps sweeps against the one
    // before (a tolerance below the precision's floor would otherwise run max_iterations).
    double least = err, least_before = err;
    while (r_.iterations < o_.max_iterations && !(err < o_.tolerance)) {
      err = sweep();
      ++r_.iterations;
      if (accelerate_) {
        const double e = superstep();
        if (std::isfinite(e)) err = e;
      }
      if (err < o_.tolerance) err = exact_error(x_);  // the sweep's figure mixes old and new radii
      if (o_.history_every && r_.iterations % o_.history_every == 0) {
        r_.history_iteration.push_back(r_.iterations);
        r_.history_error.push_back(err);
      }
      preview_(x_);
      if (o_.monitor && !o_.monitor(r_.iterations, err)) {
        r_.cancelled = true;
        break;
      }
      if (!std::isfinite(err)) break;
      least = std::min(least, err);
      if (r_.iterations % kStagnationSweeps == 0) {
        if (!(least < 0.99 * least_before)) {
          r_.stagnated = true;
          break;
        }
        least_before = least;
      }
    }
    r_.labels.assign(x_.begin(), x_.end());
    finish(r_, K_, p_, o_, t0);
    return r_;
  }

 private:
  double exact_error(const std::vector<T>& lab) const {
    double e = 0;
    for (std::size_t i = 0; i < free_.size(); ++i)
      e = std::max(e, std::abs(static_cast<double>(detail::angle_sum(K_, g_, lab.data(), free_[i]) - target_[i])));
    return e;
  }

  /// One Gauss–Seidel sweep; returns the largest |θ − A| seen during it.
  double sweep() {
    double err = 0;
    for (std::size_t i = 0; i < free_.size(); ++i) {
      const Index v = free_[i];
      const T th = detail::angle_sum(K_, g_, x_.data(), v);
      err = std::max(err, std::abs(static_cast<double>(th - target_[i])));
      x_[v] = cs_update<T>(g_, x_[v], th, target_[i], K_.petals(v));
    }
    return err;
  }

  /// Collins–Stephenson's extrapolation along the last change of the log-labels, kept when it
  /// lowers the angle error; returns that error (∞ when none was kept).
  double superstep() {
    y_prev_.swap(y_);
    y_.resize(free_.size());
    d_prev_.swap(d_);
    d_.resize(free_.size());
    double dd = 0, pp = 0, dp = 0;
    for (std::size_t i = 0; i < free_.size(); ++i) {
      y_[i] = to_y(g_, x_[free_[i]]);
      d_[i] = y_[i] - y_prev_[i];
      dd += d_[i] * d_[i];
      pp += d_prev_[i] * d_prev_[i];
      dp += d_[i] * d_prev_[i];
    }
    constexpr double kInf = std::numeric_limits<double>::infinity();
    if (++since_try_ < 3 || r_.iterations < 3 || !(pp > 0 && dd > 0) || dp / std::sqrt(dd * pp) <= 0.99) return kInf;
    const double lambda = std::sqrt(dd / pp);
    if (lambda >= 1) return kInf;
    since_try_ = 0;
    const double current = exact_error(x_);
    for (double f = std::min(lambda / (1 - lambda), 1000.0); f >= 0.5; f /= 4) {
      trial_ = x_;
      for (std::size_t i = 0; i < free_.size(); ++i) trial_[free_[i]] = from_y<T>(g_, y_[i] + f * d_[i]);
      const double e = exact_error(trial_);
      if (e < current && std::isfinite(e)) {
        x_.swap(trial_);
        for (std::size_t i = 0; i < free_.size(); ++i) y_[i] = to_y(g_, x_[free_[i]]);
        ++r_.supersteps;
        return e;
      }
    }
    return kInf;
  }

  const Complex& K_;
  const Problem& p_;
  const PackOptions& o_;
  Geometry g_;
  bool accelerate_;
  std::vector<T> x_, target_, trial_;
  std::vector<Index> free_;
  std::vector<double> y_, y_prev_, d_, d_prev_;
  std::size_t since_try_ = 0;
  PackResult r_;
  Previewer preview_{o_};
};

/// Newton's method on the log-radius functional (Euclidean, fp64).
class NewtonRun {
 public:
  NewtonRun(const Complex& K, const Problem& p, const PackOptions& o) : K_(K), p_(p), o_(o), r_(p.labels) {
    if (p.geometry != Geometry::euclidean)
      throw PackError("newton solves Euclidean packings only; use cs for the maximal (hyperbolic) packing");
    if (o.precision != Precision::fp64) throw PackError("newton runs in fp64 only; use cs for fp32");
    // unknowns: free, non-ideal vertices; with no finite radius fixed the scale is free, and the
    // first unknown is pinned
    bool scale_fixed = false;
    for (std::size_t v = 0; v < K.n; ++v) scale_fixed = scale_fixed || (!p.free(static_cast<Index>(v)) && !K.ideal[v]);
    idx_.assign(K.n, -1);
    for (std::size_t v = 0; v < K.n; ++v) {
      if (!p.free(static_cast<Index>(v)) || K.ideal[v]) continue;
      if (!scale_fixed && pinned_ < 0) {
        pinned_ = static_cast<std::int64_t>(v);
        continue;
      }
      idx_[v] = static_cast<std::int64_t>(unknown_.size());
      unknown_.push_back(static_cast<Index>(v));
    }
    m_ = static_cast<Eigen::Index>(unknown_.size());
  }

  PackResult run() {
    const auto t0 = Clock::now();
    double err = angle_error(K_, p_, r_);
    if (o_.history_every) res_.history_iteration.push_back(0), res_.history_error.push_back(err);
    err_ = err;
    if (m_ > 0) gauge_ = residual(r_, g_), pattern(), stopped();
    bool have_factor = false;
    while (res_.iterations < o_.max_iterations && err >= o_.tolerance && m_ > 0 && !res_.cancelled) {
      assemble();
      // A kept factorisation preconditions conjugate gradients on the current Hessian; when they
      // do not converge quickly the Hessian is factorised afresh and solved directly.
      bool fresh = false;
      if (!have_factor || !pcg()) {
        if (stopped()) break;
        factorize();
        if (stopped()) break;
        delta_ = solver_.solve(g_);
        have_factor = fresh = true;
      }
      if (stopped()) break;
      ++res_.iterations;
      if (!line_search()) {
        if (fresh) break;     // no decrease along the exact Newton direction: at rounding level
        have_factor = false;  // the inexact direction failed: a fresh factorisation
        continue;
      }
      err = err_ = error_now();
      preview_(r_);
      if (o_.history_every && res_.iterations % o_.history_every == 0) {
        res_.history_iteration.push_back(res_.iterations);
        res_.history_error.push_back(err);
      }
      if (o_.monitor && !o_.monitor(res_.iterations, err)) {
        res_.cancelled = true;
        break;
      }
    }
    res_.labels = std::move(r_);
    finish(res_, K_, p_, o_, t0);
    return res_;
  }

 private:
  /// Whether the monitor cancels, asked between the parts of a step too (the factorisation of a
  /// Hessian of 10⁶ unknowns takes seconds): with the last step's iteration and error.
  bool stopped() {
    if (res_.cancelled) return true;
    if (o_.monitor && !o_.monitor(res_.iterations, err_)) res_.cancelled = true;
    return res_.cancelled;
  }

  /// Conjugate-gradient iterations at most per step, preconditioned by the kept factorisation:
  /// each costs one solve with the factor (a few percent of a factorisation at 10⁵ faces).
  static constexpr int kMaxPcg = 12;
  /// From this many unknowns the ordering and the factorisation (seconds at 10⁶) run on a thread
  /// of their own, so that a cancel need not wait for them.
  static constexpr Eigen::Index kOwnThreadFrom = 20'000;

  /// The residual's gauge (newton_rules.hpp): the mean ḡ subtracted from the unknowns' entries,
  /// the pinned vertex's own θ − A, and the line search's merit ‖θ − A − ḡ‖₂ over every free vertex.
  struct Gauge {
    double mean = 0, pinned = 0, merit = 0;
  };

  /// θ − A − ḡ over the unknowns (ḡ = 0 when a radius fixes the scale); each entry on its own
  /// (oneTBB splits the rows: the same values with any number of threads).
  Gauge residual(const std::vector<double>& lab, Eigen::VectorXd& g) const {
    g.resize(m_);
    tbb::parallel_for(tbb::blocked_range<Eigen::Index>(0, m_, 4096), [&](const tbb::blocked_range<Eigen::Index>& b) {
      for (Eigen::Index i = b.begin(); i < b.end(); ++i) {
        const Index v = unknown_[static_cast<std::size_t>(i)];
        g[i] = detail::angle_sum(K_, Geometry::euclidean, lab.data(), v) - p_.target[v];
      }
    });
    Gauge out;
    if (pinned_ < 0) {
      out.merit = g.norm();
      return out;
    }
    const auto v = static_cast<Index>(pinned_);
    out.pinned = detail::angle_sum(K_, Geometry::euclidean, lab.data(), v) - p_.target[v];
    const detail::GaugeShift s =
        detail::gauge_shift(g.sum(), g.squaredNorm(), out.pinned, static_cast<std::size_t>(m_));
    out.mean = s.mean;
    out.merit = std::sqrt(s.all2);
    g.array() -= s.mean;
    return out;
  }

  /// max |θ − A| over the unknowns and the pinned vertex.
  double error_now() const {
    double e = (g_.array() + gauge_.mean).abs().maxCoeff();
    if (pinned_ >= 0) e = std::max(e, std::abs(gauge_.pinned));
    return std::isfinite(e) ? e : angle_error(K_, p_, r_);
  }

  /// The Hessian's sparsity pattern (the unknowns' graph, both triangles stored) and, per face
  /// edge, the positions its weight is added to; the ordering for the factorisation, once.
  void pattern() {
    std::vector<Eigen::Triplet<double>> trip;
    for (const auto& f : K_.faces)
      for (int k = 0; k < 3; ++k) {
        const auto ia = idx_[f[k]], ib = idx_[f[(k + 1) % 3]];
        if (ia >= 0) trip.emplace_back(ia, ia, 0.0);
        if (ib >= 0) trip.emplace_back(ib, ib, 0.0);
        if (ia >= 0 && ib >= 0) trip.emplace_back(ia, ib, 0.0), trip.emplace_back(ib, ia, 0.0);
      }
    L_.resize(m_, m_);
    L_.setFromTriplets(trip.begin(), trip.end());
    L_.makeCompressed();
    auto at = [&](std::int64_t row, std::int64_t col) -> std::int64_t {
      if (row < 0 || col < 0) return -1;
      const int* b = L_.innerIndexPtr() + L_.outerIndexPtr()[col];
      const int* e = L_.innerIndexPtr() + L_.outerIndexPtr()[col + 1];
      return std::lower_bound(b, e, static_cast<int>(row)) - L_.innerIndexPtr();
    };
    slot_.resize(K_.faces.size());
    for (std::size_t f = 0; f < K_.faces.size(); ++f)
      for (int k = 0; k < 3; ++k) {
        const auto ia = idx_[K_.faces[f][k]], ib = idx_[K_.faces[f][(k + 1) % 3]];
        slot_[f][k] = {at(ia, ia), at(ib, ib), at(ia, ib), at(ib, ia)};
      }
    if (m_ < kOwnThreadFrom)
      solver_.analyzePattern(L_);
    else
      run_abandonable([s = solver_ptr_, L = L_ptr_] { s->analyzePattern(*L); }, [this] { return stopped(); });
  }

  /// The Hessian L (weighted Laplacian of the unknowns) at r_, into the fixed pattern.
  void assemble() {
    double* val = L_.valuePtr();
    std::fill(val, val + L_.nonZeros(), 0.0);
    for (std::size_t fi = 0; fi < K_.faces.size(); ++fi) {
      const auto& f = K_.faces[fi];
      const int ideal = K_.ideal[f[0]] + K_.ideal[f[1]] + K_.ideal[f[2]];
      if (ideal >= 2) continue;
      double rho = 1;
      if (ideal == 0) {
        rho = std::sqrt(r_[f[0]] * r_[f[1]] * r_[f[2]] / (r_[f[0]] + r_[f[1]] + r_[f[2]]));
      } else {
        for (Index v : f)
          if (!K_.ideal[v]) rho *= r_[v];
        rho = std::sqrt(rho);
      }
      for (int k = 0; k < 3; ++k) {
        const Index a = f[k], b = f[(k + 1) % 3];
        if (K_.ideal[a] || K_.ideal[b]) continue;
        const double w = rho / (r_[a] + r_[b]);
        const auto& s = slot_[fi][k];
        if (s[0] >= 0) val[s[0]] += w;
        if (s[1] >= 0) val[s[1]] += w;
        if (s[2] >= 0) val[s[2]] -= w, val[s[3]] -= w;
      }
    }
  }

  void factorize() {
    if (m_ < kOwnThreadFrom)
      solver_.factorize(L_);
    else if (!run_abandonable([s = solver_ptr_, L = L_ptr_] { s->factorize(*L); }, [this] { return stopped(); }))
      return;  // cancelled: the thread finishes alone with its own references, nothing here is used again
    if (solver_.info() != Eigen::Success)
      throw PackError("newton: the Hessian could not be factorised (not positive definite)");
    ++res_.factorisations;
  }

  /// delta_ ≈ L⁻¹ g_ by conjugate gradients preconditioned with the kept factorisation, to the
  /// relative residual η = min(0.1, max|θ − A|) (inexact Newton: the forcing term shrinks with
  /// the error, so the steps stay superlinear), but no finer than the step needs to bring the
  /// error a tenth below the tolerance (η ≥ 0.1·tolerance/error); false when kMaxPcg iterations
  /// do not reach it.
  bool pcg() {
    const double goal = detail::newton_forcing(g_.cwiseAbs().maxCoeff(), o_.tolerance) * g_.norm();
    // from the chord step M⁻¹g (M the kept factorisation), which is the Newton step when the
    // Hessian has not changed: better than CG's first step, a multiple of it
    delta_ = solver_.solve(g_);
    cg_r_ = g_ - L_ * delta_;
    if (cg_r_.norm() <= goal) return true;
    cg_z_ = solver_.solve(cg_r_);
    cg_p_ = cg_z_;
    double rz = cg_r_.dot(cg_z_);
    for (int it = 0; it < kMaxPcg; ++it) {
      if (stopped()) return true;  // the caller sees res_.cancelled
      cg_q_ = L_ * cg_p_;
      const double pq = cg_p_.dot(cg_q_);
      if (!(pq > 0)) return false;
      const double alpha = rz / pq;
      delta_ += alpha * cg_p_;
      cg_r_ -= alpha * cg_q_;
      ++res_.inner_iterations;
      if (cg_r_.norm() <= goal) return true;
      cg_z_ = solver_.solve(cg_r_);
      const double rz_next = cg_r_.dot(cg_z_);
      cg_p_ = cg_z_ + (rz_next / rz) * cg_p_;
      rz = rz_next;
    }
    return false;
  }

  /// Backtracking on the merit ‖θ − A − ḡ‖₂ (Gauge) along delta_ (steps capped at 2 in log-radius); true when a step
  /// was taken (r_ and g_ updated).
  bool line_search() {
    const double big = delta_.cwiseAbs().maxCoeff();
    double t = big > 2 ? 2 / big : 1.0;
    const double norm0 = gauge_.merit;
    for (int halvings = 0; halvings < 30; ++halvings, t *= 0.5) {
      if (halvings > 0 && stopped()) return false;
      trial_ = r_;
      for (Eigen::Index i = 0; i < m_; ++i) trial_[unknown_[static_cast<std::size_t>(i)]] *= std::exp(t * delta_[i]);
      const Gauge next = residual(trial_, g_new_);
      if (next.merit < (1 - 1e-4 * t) * norm0 || next.merit == 0) {
        r_.swap(trial_);
        g_.swap(g_new_);
        gauge_ = next;
        return true;
      }
    }
    return false;
  }

  const Complex& K_;
  const Problem& p_;
  const PackOptions& o_;
  std::vector<double> r_, trial_;
  std::vector<std::int64_t> idx_;
  std::vector<Index> unknown_;
  std::int64_t pinned_ = -1;  // the free vertex fixed to set the scale; −1 when a radius fixes it
  Gauge gauge_;
  double err_ = 0;  // the error after the last step, for the monitor
  Eigen::Index m_ = 0;
  // Shared with the thread that orders and factorises a large Hessian, which a cancel leaves to
  // finish alone (run_abandonable).
  std::shared_ptr<Eigen::SimplicialLDLT<Eigen::SparseMatrix<double>>> solver_ptr_ =
      std::make_shared<Eigen::SimplicialLDLT<Eigen::SparseMatrix<double>>>();
  std::shared_ptr<Eigen::SparseMatrix<double>> L_ptr_ = std::make_shared<Eigen::SparseMatrix<double>>();
  Eigen::SimplicialLDLT<Eigen::SparseMatrix<double>>& solver_ = *solver_ptr_;
  Eigen::SparseMatrix<double>& L_ = *L_ptr_;
  std::vector<std::array<std::array<std::int64_t, 4>, 3>> slot_;  // per face edge: aa, bb, ab, ba in L_
  Eigen::VectorXd g_, g_new_, delta_, cg_r_, cg_z_, cg_p_, cg_q_;
  PackResult res_;
  Previewer preview_{o_};
};

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
    case Algorithm::newton: return NewtonRun(K, p, o).run();
    case Algorithm::cs_plain:
    case Algorithm::cs: {
      const bool acc = o.algorithm == Algorithm::cs;
      return o.precision == Precision::fp32 ? CsRun<float>(K, p, o, acc).run() : CsRun<double>(K, p, o, acc).run();
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
