// Multi-start distance geometry (see gemflow/distgeom/trials.hpp).
#include "gemflow/distgeom/trials.hpp"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <exception>
#include <limits>
#include <mutex>
#include <optional>
#include <stdexcept>
#include <string>
#include <thread>

namespace gemflow::distgeom {
namespace {

struct Cancelled {};  // internal: unwinds a worker's trial

std::string g6(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.6g", v);
  return buf;
}

struct Outcome {
  TrialSummary summary;
  RefineResult refined;
};

Outcome one_trial(const TrialProblem& p, const TrialOptions& o, std::uint64_t seed,
                  std::span<const unsigned char> pivots, const TrialEmbedder& embedder, const std::atomic<bool>& stop,
                  std::atomic<double>& fraction, double max_upper) {
  const std::size_t n = p.n;
  MetrizeOptions mo = o.metrize;
  mo.seed = seed;
  const auto d = metrize(p.smoothed_lower, p.smoothed_upper, n, mo, p.resmooth, [&](double f) {
    fraction.store(0.2 * f, std::memory_order_relaxed);
    return !stop.load(std::memory_order_relaxed);
  });
  if (stop.load()) throw Cancelled{};
  const auto cand = o.method == EmbedMethod::Cholesky ? pivots : std::span<const unsigned char>{};
  EmbedResult e;
  if (embedder) {
    e = embedder(d, n, o.dim, o.method, o.cholesky_rank, cand);
  } else {
    std::vector<double> g(n * n);
    metric_matrix(d, n, g);
    e = embed(g, n, o.dim, o.method, o.cholesky_rank, cand);
  }
  Outcome out;
  out.summary.seed = seed;
  out.summary.spectrum = e.spectrum;
  if (!p.handedness.empty()) (void)fix_chirality(e.coords, o.dim, p.handedness, &out.summary.chirality_correct);
  const int hands = o.mirror_trial ? 2 : 1;
  std::atomic<double> hand_fraction[2] = {0.0, 0.0};
  auto refine_hand = [&](int h) {
    auto start = e.coords;
    if (h == 1)
      for (std::size_t k = 0; k < start.size(); k += o.dim) start[k] = -start[k];
    return refine(start, n, o.dim, p.lower, p.upper, p.chirals, p.ambiguous, o.refine,
                  [&](double f, const std::string&) {
                    hand_fraction[h].store(f, std::memory_order_relaxed);
                    fraction.store(0.2 + 0.8 * (hand_fraction[0].load() + hand_fraction[1].load()) / hands,
                                   std::memory_order_relaxed);
                    return !stop.load(std::memory_order_relaxed);
                  });
  };
  std::optional<RefineResult> results[2];
  if (hands == 2 && o.parallel_hands) {  // independent and deterministic: the same result as in turn
    std::exception_ptr mirror_error;
    std::thread mirror([&] {
      try {
        results[1] = refine_hand(1);
      } catch (...) {
        mirror_error = std::current_exception();
      }
    });
    try {
      results[0] = refine_hand(0);
    } catch (...) {
      mirror.join();
      throw;
    }
    mirror.join();
    if (mirror_error) std::rethrow_exception(mirror_error);
  } else {
    for (int h = 0; h < hands; ++h) results[h] = refine_hand(h);
  }
  bool have = false;
  double other = std::numeric_limits<double>::quiet_NaN();
  for (int h = 0; h < hands; ++h) {
    auto& r = *results[h];
    // Same rule as distgeom.refine's mirror trial: the mirror replaces only on a strictly lower error.
    if (!have || r.error < out.refined.error) {
      if (have) other = out.refined.error;
      out.refined = std::move(r);
      out.summary.mirror_won = h == 1;
    } else {
      other = r.error;
    }
    have = true;
  }
  const auto& r = out.refined;
  // A refinement that ends with non-finite coordinates (whose DG error can read 0: NaN fails
  // every violation test), a bound violated by more than the largest upper bound, or a
  // non-finite error has diverged: its structure is far outside every bound (QA: a pivoted
  // Cholesky embedding at 2·10⁵ Å, DG error 10²⁶, reported as done).
  if (!std::all_of(r.coords.begin(), r.coords.end(), [](double x) { return std::isfinite(x); }))
    throw std::runtime_error("diverged: the refined coordinates are not finite");
  if (!std::isfinite(r.error) || !(r.max_violation <= max_upper))
    throw std::runtime_error("diverged: a bound is violated by " + g6(r.max_violation) +
                             " Å, more than the largest upper bound " + g6(max_upper) + " Å (DG error " + g6(r.error) +
                             ")");
  out.summary.error = r.error;
  out.summary.error_other_hand = other;
  out.summary.iterations = r.iterations;
  out.summary.upper_violations = r.upper_violations;
  out.summary.lower_violations = r.lower_violations;
  out.summary.max_violation = r.max_violation;
  out.summary.chiral_wrong = r.chiral_wrong;
  fraction.store(1.0, std::memory_order_relaxed);
  return out;
}

}  // namespace

std::uint64_t trial_seed(std::uint64_t seed, std::size_t t) {
  if (t == 0) return seed;
  std::uint64_t z = seed + static_cast<std::uint64_t>(t) * 0x9E3779B97F4A7C15ull;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

TrialsResult run_trials(const TrialProblem& p, const TrialOptions& o, const std::function<bool(double)>& progress) {
  const std::size_t n = p.n;
  if (o.trials == 0) throw std::invalid_argument("run_trials: trials must be ≥ 1");
  if (p.smoothed_lower.size() != n * n || p.smoothed_upper.size() != n * n || p.lower.size() != n * n ||
      p.upper.size() != n * n)
    throw std::invalid_argument("run_trials: bounds are not " + std::to_string(n) + "×" + std::to_string(n));
  if (o.metrize.method == MetrizeMethod::Partial && !p.resmooth)
    throw std::invalid_argument("run_trials: partial metrization needs a smoother");
  const std::vector<unsigned char> pivots = o.method == EmbedMethod::Cholesky && o.pivot_fraction < 1.0
                                                ? tight_atoms(p.smoothed_lower, p.smoothed_upper, n, o.pivot_fraction)
                                                : std::vector<unsigned char>{};

  double max_upper = 0.0;  // the largest finite upper bound: the divergence test of one_trial
  for (double u : p.upper)
    if (std::isfinite(u)) max_upper = std::max(max_upper, u);
  if (max_upper <= 0.0) max_upper = std::numeric_limits<double>::infinity();  // no finite bound: no test

  const std::size_t trials = o.trials;
  unsigned threads = o.threads ? o.threads : std::max(1u, std::thread::hardware_concurrency());
  threads = static_cast<unsigned>(std::min<std::size_t>(threads, trials));
  std::vector<std::optional<Outcome>> outcomes(trials);
  std::vector<std::exception_ptr> errors(trials);
  std::vector<std::atomic<double>> fractions(trials);
  for (auto& f : fractions) f.store(0.0);
  std::atomic<std::size_t> next{0};
  std::atomic<bool> stop{false};
  std::atomic<unsigned> running{threads};

  auto worker = [&] {
    TrialEmbedder embedder;  // this thread's (p.make_embedder), made before its first trial
    bool made = false;
    for (;;) {
      const std::size_t t = next.fetch_add(1);
      if (t >= trials || stop.load()) break;
      try {
        if (!made && p.make_embedder) embedder = p.make_embedder();
        made = true;
        outcomes[t] =
            one_trial(p, o, trial_seed(o.seed, o.first_trial + t), pivots, embedder, stop, fractions[t], max_upper);
      } catch (const Cancelled&) {
        break;
      } catch (...) {
        if (stop.load()) break;                // a cancelled refine/metrize throws runtime_error("cancelled")
        errors[t] = std::current_exception();  // this trial is dropped; the others go on
        fractions[t].store(1.0, std::memory_order_relaxed);
      }
    }
    running.fetch_sub(1);
  };
  std::vector<std::thread> pool;
  pool.reserve(threads);
  bool cancelled = false;
  try {
    for (unsigned k = 0; k < threads; ++k) pool.emplace_back(worker);
    while (running.load() > 0) {
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
      double sum = 0;
      for (const auto& f : fractions) sum += f.load(std::memory_order_relaxed);
      if (progress && !stop.load() && !progress(sum / static_cast<double>(trials))) {
        cancelled = true;
        stop.store(true);
      }
    }
  } catch (...) {  // progress threw: stop the workers before unwinding
    stop.store(true);
    for (auto& th : pool) th.join();
    throw;
  }
  for (auto& th : pool) th.join();
  if (cancelled) throw std::runtime_error("cancelled");
  TrialsResult res;
  bool have = false;
  std::string first_failure;
  for (std::size_t t = 0; t < trials; ++t) {
    const std::uint64_t seed = trial_seed(o.seed, o.first_trial + t);
    TrialSummary sum;
    if (errors[t]) {
      try {
        std::rethrow_exception(errors[t]);
      } catch (const std::exception& e) {
        sum.failure = e.what();
      } catch (...) {
        sum.failure = "unknown exception";
      }
      const double nan = std::numeric_limits<double>::quiet_NaN();
      sum.error = sum.error_other_hand = sum.max_violation = nan;
      if (first_failure.empty())
        first_failure =
            "trial " + std::to_string(o.first_trial + t) + " (seed " + std::to_string(seed) + "): " + sum.failure;
    } else {
      if (!outcomes[t]) throw std::logic_error("run_trials: trial " + std::to_string(t) + " did not run");
      sum = outcomes[t]->summary;
      if (!have || sum.error < res.trials[res.best].error) res.best = t;
      have = true;
    }
    sum.index = o.first_trial + t;
    sum.seed = seed;
    res.trials.push_back(std::move(sum));
  }
  if (!have) throw std::runtime_error((trials > 1 ? "every trial failed; " : "") + first_failure);
  res.refined = std::move(outcomes[res.best]->refined);
  if (progress) (void)progress(1.0);
  return res;
}

}  // namespace gemflow::distgeom
