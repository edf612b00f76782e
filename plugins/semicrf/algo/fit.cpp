// EM and supervised L-BFGS fitting (gemflow/semicrf/fit.hpp).
#include "gemflow/semicrf/fit.hpp"

#include <lbfgs.h>

#include <algorithm>
#include <cmath>
#include <exception>
#include <limits>
#include <stdexcept>
#include <string>

namespace gemflow::semicrf {

namespace {
constexpr double kNegInf = -std::numeric_limits<double>::infinity();

double sum_or_throw(const std::vector<double>& log_z, const std::vector<std::size_t>& lengths) {
  double s = 0;
  for (std::size_t b = 0; b < log_z.size(); ++b) {
    if (log_z[b] == kNegInf) throw std::invalid_argument(no_segmentation_message(b, lengths[b]));
    s += log_z[b];
  }
  return s;
}

/// The emission scores (n × C doubles, and as many posteriors in the supervised gradient) are
/// made before the recurrences check their own memory: refuse what cannot fit, as they do,
/// rather than fail in the allocation.
void require_scores(std::size_t n, std::size_t C, std::size_t copies, const Options& o) {
  if (o.memory_limit == 0) return;
  const double bytes = double(n) * double(C) * 8.0 * double(copies);
  if (bytes > double(o.memory_limit))
    throw MemoryError("the emission scores of " + std::to_string(n) + " samples × C = " + std::to_string(C) +
                      " labels need " + std::to_string(static_cast<unsigned long long>(bytes)) + " bytes, " +
                      std::to_string(o.memory_limit) + " available (fewer labels fit)");
}

/// log of normalised (counts + a) over the entries where `keep` is finite; others −∞.
void normalise_row(double* out, const double* counts, const double* keep, std::size_t n, std::size_t stride, double a) {
  double s = 0;
  for (std::size_t i = 0; i < n; ++i)
    if (keep[i * stride] != kNegInf) s += counts[i * stride] + a;
  for (std::size_t i = 0; i < n; ++i)
    out[i * stride] = keep[i * stride] == kNegInf || s <= 0 ? kNegInf : std::log((counts[i * stride] + a) / s);
}
}  // namespace

std::vector<FitStep> fit_em(GaussianSemiCrf& m, const double* x, const std::vector<std::size_t>& lengths, std::size_t D,
                            const FitOptions& o, const std::uint8_t* valid) {
  const std::size_t C = m.crf.labels, K = m.crf.max_duration;
  std::size_t n = 0;
  for (auto t : lengths) n += t;
  require_scores(n, C, 2, o.crf);  // the scores and the posteriors' marginals
  const auto noise = noise_variance(x, n, D, valid);
  auto seen = [valid, D](std::size_t u, std::size_t d) { return valid == nullptr || valid[u * D + d] != 0; };
  std::vector<FitStep> hist;
  double prev = 0;
  for (std::size_t it = 0; it <= o.iterations; ++it) {
    const auto f = gaussian_scores(x, n, D, m.gaussians, valid);
    Batch batch;
    batch.emissions = f.data();
    batch.lengths = lengths;
    const auto p = posteriors(m.crf, batch, o.crf);
    const double obj = sum_or_throw(p.log_z, lengths);
    hist.push_back({it, obj, it == 0 ? 0.0 : obj - prev});
    if (it == o.iterations || (it > 0 && std::abs(obj - prev) <= o.tolerance * std::abs(obj))) break;
    if (o.on_step && !o.on_step(hist.back())) break;
    prev = obj;
    if (o.fit_emissions) {
      // weights q(u, c) over the observed values of each channel (missing ones carry no data)
      for (std::size_t c = 0; c < C; ++c) {
        std::vector<double> w(D, 0.0), s1(D, 0.0), s2(D, 0.0);
        for (std::size_t u = 0; u < n; ++u) {
          const double q = p.label_marginals[u * C + c];
          for (std::size_t d = 0; d < D; ++d)
            if (seen(u, d)) w[d] += q, s1[d] += q * x[u * D + d];
        }
        for (std::size_t d = 0; d < D; ++d) {
          if (w[d] < 1e-9) continue;  // an unused label keeps its Gaussian
          m.gaussians.mean[c * D + d] = s1[d] / w[d];
          if (!o.fit_variances) continue;
          for (std::size_t u = 0; u < n; ++u)
            if (seen(u, d))
              s2[d] += p.label_marginals[u * C + c] * std::pow(x[u * D + d] - m.gaussians.mean[c * D + d], 2);
          m.gaussians.variance[c * D + d] = std::max(s2[d] / w[d], o.variance_floor * noise[d]);
        }
      }
    }
    if (o.fit_transitions && m.crf.transitions.size() == C * C)
      for (std::size_t cp = 0; cp < C; ++cp)
        normalise_row(&m.crf.transitions[cp * C], &p.grad_transitions[cp * C], &m.crf.transitions[cp * C], C, 1,
                      o.pseudo_count);
    if (o.fit_durations)
      for (std::size_t c = 0; c < C; ++c)
        normalise_row(&m.crf.duration_bias[c], &p.grad_duration[c], &m.crf.duration_bias[c], K, C, o.pseudo_count);
    if (o.fit_initial) {
      if (m.crf.initial.empty()) m.crf.initial.assign(C, 0.0);
      normalise_row(m.crf.initial.data(), p.grad_initial.data(), m.crf.initial.data(), C, 1, o.pseudo_count);
    }
  }
  return hist;
}

namespace {

/// The parameter vector of the supervised fit and its objective.
class Supervised {
 public:
  Supervised(GaussianSemiCrf& m, const double* x, const std::vector<std::size_t>& lengths, std::size_t D,
             const std::vector<std::vector<Segment>>& gold, const FitOptions& o, const std::uint8_t* valid)
      : m_(m), x_(x), valid_(valid), lengths_(lengths), D_(D), gold_(gold), o_(o) {
    for (auto t : lengths) n_ += t;
    if (gold.size() != lengths.size())
      throw std::invalid_argument(std::to_string(gold.size()) + " labelled segmentations for " +
                                  std::to_string(lengths.size()) + " signals");
    if (o.fit_transitions)
      for (std::size_t i = 0; i < m.crf.transitions.size(); ++i)
        if (std::isfinite(m.crf.transitions[i])) tr_.push_back(i);
    if (o.fit_durations)
      for (std::size_t i = 0; i < m.crf.duration_bias.size(); ++i)
        if (std::isfinite(m.crf.duration_bias[i])) du_.push_back(i);
    if (o.fit_initial && m.crf.initial.empty()) m.crf.initial.assign(m.crf.labels, 0.0);
    ni_ = o.fit_initial ? m.crf.labels : 0;
    ng_ = o.fit_emissions ? 2 * m.gaussians.mean.size() : 0;
  }
  [[nodiscard]] std::size_t size() const { return tr_.size() + du_.size() + ni_ + ng_; }

  void get(double* v) const {
    std::size_t j = 0;
    for (auto i : tr_) v[j++] = m_.crf.transitions[i];
    for (auto i : du_) v[j++] = m_.crf.duration_bias[i];
    for (std::size_t i = 0; i < ni_; ++i) v[j++] = m_.crf.initial[i];
    for (std::size_t i = 0; i < ng_ / 2; ++i) v[j++] = m_.gaussians.mean[i];
    for (std::size_t i = 0; i < ng_ / 2; ++i) v[j++] = std::log(m_.gaussians.variance[i]);
  }
  void set(const double* v) {
    std::size_t j = 0;
    for (auto i : tr_) m_.crf.transitions[i] = v[j++];
    for (auto i : du_) m_.crf.duration_bias[i] = v[j++];
    for (std::size_t i = 0; i < ni_; ++i) m_.crf.initial[i] = v[j++];
    for (std::size_t i = 0; i < ng_ / 2; ++i) m_.gaussians.mean[i] = v[j++];
    for (std::size_t i = 0; i < ng_ / 2; ++i) m_.gaussians.variance[i] = std::exp(std::clamp(v[j++], -700.0, 700.0));
  }

  /// −Σ (score(gold) − log Z) + ½ l2 ‖θ_crf‖², and its gradient.
  double evaluate(const double* v, double* g) {
    set(v);
    const std::size_t C = m_.crf.labels, D = D_;
    const auto f = gaussian_scores(x_, n_, D, m_.gaussians, valid_);
    Batch batch;
    batch.emissions = f.data();
    batch.lengths = lengths_;
    Options co = o_.crf;
    co.centring = Centring::none;  // the gradients below are with respect to the raw scores
    const auto p = posteriors(m_.crf, batch, co);
    double obj = 0;
    for (std::size_t b = 0; b < lengths_.size(); ++b) {
      if (p.log_z[b] == kNegInf) throw std::invalid_argument(no_segmentation_message(b, lengths_[b]));
      const double s = path_score(m_.crf, batch, b, gold_[b], co);
      if (s == kNegInf)
        throw std::invalid_argument("the labelled segmentation of signal " + std::to_string(b) +
                                    " has a score of -inf under the model (a forbidden transition, a duration above K "
                                    "or an impossible label)");
      obj -= s - p.log_z[b];
    }
    // gradient of the objective: expected − gold counts (+ l2·θ)
    std::vector<double> gt = p.grad_transitions, gd = p.grad_duration, gi = p.grad_initial;
    std::vector<double> ge = p.grad_emissions;  // ∂(−LL)/∂f = q − gold
    const auto off = batch.offsets();
    for (std::size_t b = 0; b < lengths_.size(); ++b)
      for (std::size_t i = 0; i < gold_[b].size(); ++i) {
        const auto& s = gold_[b][i];
        const std::size_t k = s.end - s.start;
        for (std::size_t u = s.start; u < s.end; ++u) ge[(off[b] + u) * C + s.label] -= 1.0;
        gd[(k - 1) * C + s.label] -= 1.0;
        if (i == 0) gi[s.label] -= 1.0;
        else if (m_.crf.transitions.size() == C * C) gt[gold_[b][i - 1].label * C + s.label] -= 1.0;
        else gt[((k - 1) * C + gold_[b][i - 1].label) * C + s.label] -= 1.0;
      }
    std::size_t j = 0;
    for (auto i : tr_) {
      obj += 0.5 * o_.l2 * v[j] * v[j];
      g[j] = gt[i] + o_.l2 * v[j];
      ++j;
    }
    for (auto i : du_) {
      obj += 0.5 * o_.l2 * v[j] * v[j];
      g[j] = gd[i] + o_.l2 * v[j];
      ++j;
    }
    for (std::size_t i = 0; i < ni_; ++i, ++j) {
      obj += 0.5 * o_.l2 * v[j] * v[j];
      g[j] = gi[i] + o_.l2 * v[j];
    }
    if (ng_ > 0) {
      const std::size_t nm = ng_ / 2;
      for (std::size_t i = 0; i < ng_; ++i) g[j + i] = 0;
      for (std::size_t u = 0; u < n_; ++u)
        for (std::size_t c = 0; c < C; ++c) {
          const double w = ge[u * C + c];
          if (w == 0) continue;
          for (std::size_t d = 0; d < D; ++d) {
            if (valid_ != nullptr && valid_[u * D + d] == 0) continue;  // f does not depend on a missing value's μ, σ²
            const double var = m_.gaussians.variance[c * D + d], r = x_[u * D + d] - m_.gaussians.mean[c * D + d];
            g[j + c * D + d] += w * r / var;                          // ∂f/∂μ = r/σ²
            g[j + nm + c * D + d] += w * (-0.5 + r * r / (2 * var));  // ∂f/∂log σ²
          }
        }
    }
    return obj;
  }

 private:
  GaussianSemiCrf& m_;
  const double* x_;
  const std::uint8_t* valid_;
  const std::vector<std::size_t>& lengths_;
  std::size_t D_, n_ = 0;
  const std::vector<std::vector<Segment>>& gold_;
  const FitOptions& o_;
  std::vector<std::size_t> tr_, du_;
  std::size_t ni_ = 0, ng_ = 0;
};

struct LbfgsState {
  Supervised* s;
  std::vector<FitStep>* hist;
  double prev = 0;
  std::exception_ptr error;  // no exception crosses liblbfgs's C frames
  const std::function<bool(const FitStep&)>* on_step = nullptr;
};

lbfgsfloatval_t evaluate_cb(void* inst, const lbfgsfloatval_t* x, lbfgsfloatval_t* g, const int n,
                            const lbfgsfloatval_t) {
  auto* st = static_cast<LbfgsState*>(inst);
  try {
    return st->s->evaluate(x, g);
  } catch (...) {
    st->error = std::current_exception();
    std::fill(g, g + n, 0.0);
    return std::numeric_limits<double>::infinity();
  }
}

// NOLINTNEXTLINE(readability-function-size): liblbfgs's callback has ten parameters
int progress_cb(void* inst, const lbfgsfloatval_t*, const lbfgsfloatval_t*, const lbfgsfloatval_t fx,
                const lbfgsfloatval_t, const lbfgsfloatval_t, const lbfgsfloatval_t, int, int k, int) {
  auto* st = static_cast<LbfgsState*>(inst);
  if (st->error) return 1;
  st->hist->push_back({static_cast<std::size_t>(k), fx, fx - st->prev});
  st->prev = fx;
  try {
    if (st->on_step && !(*st->on_step)(st->hist->back())) return 1;
  } catch (...) {
    st->error = std::current_exception();
    return 1;
  }
  return 0;
}

}  // namespace

std::vector<FitStep> fit_supervised(GaussianSemiCrf& m, const double* x, const std::vector<std::size_t>& lengths,
                                    std::size_t D, const std::vector<std::vector<Segment>>& gold, const FitOptions& o,
                                    const std::uint8_t* valid) {
  std::size_t samples = 0;
  for (auto t : lengths) samples += t;
  require_scores(samples, m.crf.labels, 2, o.crf);  // the scores and their gradient
  Supervised s(m, x, lengths, D, gold, o, valid);
  const std::size_t n = s.size();
  std::vector<FitStep> hist;
  if (n == 0) return hist;
  lbfgsfloatval_t* v = lbfgs_malloc(static_cast<int>(n));
  if (v == nullptr) throw std::bad_alloc();
  s.get(v);
  std::vector<double> g(n);
  LbfgsState st{&s, &hist, 0};
  st.on_step = o.on_step ? &o.on_step : nullptr;
  st.prev = s.evaluate(v, g.data());
  hist.push_back({0, st.prev, 0.0});
  lbfgs_parameter_t param;
  lbfgs_parameter_init(&param);
  param.max_iterations = static_cast<int>(o.iterations);
  param.delta = o.tolerance;
  param.past = 1;
  lbfgsfloatval_t fx = 0;
  (void)lbfgs(static_cast<int>(n), v, &fx, evaluate_cb, progress_cb, &st, &param);
  // L-BFGS leaves v at the best point it reached, whatever its return code (a line search that
  // cannot improve further is the usual end at convergence)
  if (!st.error) s.set(v);
  lbfgs_free(v);
  if (st.error) std::rethrow_exception(st.error);
  return hist;
}

}  // namespace gemflow::semicrf
