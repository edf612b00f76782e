// CPU fp64 reference of the semi-Markov CRF (gemflow/semicrf/semicrf.hpp).
#include "gemflow/semicrf/semicrf.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>

#include "sequence.hpp"

namespace gemflow::semicrf {

Model Model::zeros(std::size_t labels, std::size_t max_duration) {
  Model m;
  m.labels = labels;
  m.max_duration = max_duration;
  m.transitions.assign(labels * labels, 0.0);
  m.duration_bias.assign(labels * max_duration, 0.0);
  return m;
}

std::size_t Batch::total_length() const noexcept {
  std::size_t n = 0;
  for (auto t : lengths) n += t;
  return n;
}

std::vector<std::size_t> Batch::offsets() const {
  std::vector<std::size_t> o(lengths.size() + 1, 0);
  for (std::size_t b = 0; b < lengths.size(); ++b) o[b + 1] = o[b] + lengths[b];
  return o;
}

std::string no_segmentation_message(std::size_t b, std::size_t length) {
  return "no segmentation is allowed: every segmentation of sequence " + std::to_string(b) + " (" +
         std::to_string(length) +
         " samples) has a score of -inf (impossible emission scores, transitions, duration biases or a "
         "maximum duration that cannot cover the sequence)";
}

namespace detail {

namespace {
constexpr double kNegInf = -std::numeric_limits<double>::infinity();

/// a·b without overflow, else MemoryError naming `what`.
std::size_t mul(std::size_t a, std::size_t b, const char* what) {
  if (a != 0 && b > std::numeric_limits<std::size_t>::max() / a)
    throw MemoryError(std::string("the working memory of ") + what + " overflows the address space");
  return a * b;
}
}  // namespace

void validate(const Model& m, const Batch& x) {
  const std::size_t C = m.labels, K = m.max_duration;
  if (C == 0) throw std::invalid_argument("the model has no labels (C = 0)");
  if (K == 0) throw std::invalid_argument("the maximum duration K is 0: no segment can be formed");
  if (m.transitions.size() != C * C && m.transitions.size() != K * C * C)
    throw std::invalid_argument("transitions hold " + std::to_string(m.transitions.size()) +
                                " values; expected C·C = " + std::to_string(C * C) +
                                " or K·C·C = " + std::to_string(K * C * C));
  if (m.duration_bias.size() != K * C)
    throw std::invalid_argument("duration biases hold " + std::to_string(m.duration_bias.size()) +
                                " values; expected K·C = " + std::to_string(K * C));
  if (!m.initial.empty() && m.initial.size() != C)
    throw std::invalid_argument("initial scores hold " + std::to_string(m.initial.size()) +
                                " values; expected C = " + std::to_string(C));
  auto check = [](const std::vector<double>& v, const char* name) {
    for (std::size_t i = 0; i < v.size(); ++i)
      if (std::isnan(v[i]) || v[i] == std::numeric_limits<double>::infinity())
        throw std::invalid_argument(std::string(name) + " value " + std::to_string(i) + " is " +
                                    (std::isnan(v[i]) ? "NaN" : "+inf") + " (allowed: finite or -inf)");
  };
  check(m.transitions, "transition");
  check(m.duration_bias, "duration bias");
  check(m.initial, "initial score");
  const std::size_t n = x.total_length();
  if (n > 0 && x.emissions == nullptr) throw std::invalid_argument("emission scores are missing");
  auto check_rows = [&](const double* p, const char* name) {
    if (p == nullptr) return;
    const auto off = x.offsets();
    for (std::size_t b = 0; b < x.lengths.size(); ++b)
      for (std::size_t u = 0; u < x.lengths[b]; ++u)
        for (std::size_t c = 0; c < C; ++c) {
          const double v = p[(off[b] + u) * C + c];
          if (std::isnan(v) || v == std::numeric_limits<double>::infinity())
            throw std::invalid_argument(std::string(name) + " of sequence " + std::to_string(b) + ", sample " +
                                        std::to_string(u) + ", label " + std::to_string(c) + " is " +
                                        (std::isnan(v) ? "NaN" : "+inf") + " (allowed: finite or -inf)");
        }
  };
  check_rows(x.emissions, "emission score");
  check_rows(x.start_scores, "start score");
  check_rows(x.end_scores, "end score");
}

std::size_t interval(std::size_t T, std::size_t K, const Options& o) {
  if (o.checkpoint_interval > 0) return o.checkpoint_interval;
  return std::max<std::size_t>(1, static_cast<std::size_t>(std::ceil(std::sqrt(double(T) * double(K)))));
}

std::size_t working_bytes(const Model& m, std::size_t T, const Options& o, bool backward) {
  const std::size_t C = m.labels, K = m.max_duration, D = interval(T, K, o);
  std::size_t rows = mul(T + 1, 3, "the prefix sums");  // S (8 bytes) + counts (4 bytes) ≈ 1.5 rows
  rows += mul(T / D + 1, K, "the checkpoints");
  if (backward) rows += 2 * (D + K) + (K + 1) + (T + 1);
  return mul(mul(rows, C, "the recurrences"), 8, "the recurrences");
}

void require(const Model& m, const Batch& x, const Options& o, bool backward, std::size_t extra_per_row) {
  if (o.memory_limit == 0) return;
  std::size_t worst = 0;
  for (auto T : x.lengths) worst = std::max(worst, working_bytes(m, T, o, backward));
  const std::size_t out = mul(mul(x.total_length(), m.labels, "the outputs"), extra_per_row, "the outputs");
  if (worst + out > o.memory_limit || worst + out < worst)
    throw MemoryError("the semi-CRF needs " + std::to_string(worst + out) +
                      " bytes of working memory (C = " + std::to_string(m.labels) +
                      ", K = " + std::to_string(m.max_duration) + ", " + std::to_string(x.lengths.size()) +
                      " sequences of up to " + std::to_string(*std::max_element(x.lengths.begin(), x.lengths.end())) +
                      " samples), " + std::to_string(o.memory_limit) + " available");
}

Sequence::Sequence(const Model& m, const Batch& x, std::size_t b, std::size_t offset, const Options& o)
    : C(m.labels), K(m.max_duration), T(x.lengths[b]), model(m), general(false), reconstruct(false) {
  general = o.recurrence == Recurrence::general || (o.recurrence == Recurrence::automatic && m.duration_dependent());
  if (o.recurrence == Recurrence::factored && m.duration_dependent())
    throw std::invalid_argument(
        "the factored recurrence needs transitions that do not depend on the duration "
        "(C·C values); these have K·C·C");
  reconstruct = o.centring == Centring::reconstruct;
  if (o.poll) poll = &o.poll;
  const double* f = x.emissions + offset * C;
  start = x.start_scores ? x.start_scores + offset * C : nullptr;
  end = x.end_scores ? x.end_scores + offset * C : nullptr;
  segment = x.segment_score;
  index = b;
  nu.assign(C, 0.0);
  if (o.centring != Centring::none) {
    for (std::size_t c = 0; c < C; ++c) {
      double s = 0;
      std::size_t n = 0;
      for (std::size_t u = 0; u < T; ++u)
        if (std::isfinite(f[u * C + c])) s += f[u * C + c], ++n;
      nu[c] = n ? s / double(n) : 0.0;
      finite_count.push_back(n);
    }
  }
  S.assign((T + 1) * C, 0.0);
  ninf.assign((T + 1) * C, 0);
  for (std::size_t u = 0; u < T; ++u)
    for (std::size_t c = 0; c < C; ++c) {
      const double v = f[u * C + c];
      const bool bad = v == kNegInf;
      S[(u + 1) * C + c] = S[u * C + c] + (bad ? 0.0 : v - nu[c]);
      ninf[(u + 1) * C + c] = ninf[u * C + c] + (bad ? 1u : 0u);
    }
}

double Sequence::psi0(std::size_t t, std::size_t k, std::size_t c) const {
  const std::size_t s = t - k;
  if (ninf[t * C + c] != ninf[s * C + c]) return kNegInf;
  double v = S[t * C + c] - S[s * C + c] + model.duration_bias[(k - 1) * C + c];
  if (reconstruct) v += nu[c] * double(k);
  if (start) v += start[s * C + c];
  if (end) v += end[(t - 1) * C + c];
  if (segment) {
    const double g = segment->score(index, s, t, c);
    if (std::isnan(g) || g == std::numeric_limits<double>::infinity())
      throw std::invalid_argument("the segment score of [" + std::to_string(s) + ", " + std::to_string(t) +
                                  ") of sequence " + std::to_string(index) + ", label " + std::to_string(c) + " is " +
                                  std::to_string(g) + " (allowed: finite or -inf)");
    v += g;
  }
  return v;
}

double Sequence::init(std::size_t c) const { return model.initial.empty() ? 0.0 : model.initial[c]; }

void Sequence::incoming(const double* alpha, double* in) const {
  for (std::size_t c = 0; c < C; ++c) {
    LogSum acc;
    for (std::size_t cp = 0; cp < C; ++cp) acc.add(alpha[cp] + model.transitions[cp * C + c]);
    in[c] = acc.value();
  }
}

void Sequence::alpha_step(std::size_t t, const RowAt& row, double* alpha) const {
  const std::size_t kmax = std::min(K, t);
  for (std::size_t c = 0; c < C; ++c) {
    LogSum acc;
    for (std::size_t k = 1; k <= kmax; ++k) {
      const std::size_t s = t - k;
      const double p = psi0(t, k, c);
      if (p == kNegInf) continue;
      if (s == 0) {
        acc.add(init(c) + p);
      } else if (!general) {
        acc.add(row(s)[c] + p);
      } else {
        const double* a = row(s);
        for (std::size_t cp = 0; cp < C; ++cp) acc.add(a[cp] + trans(k, cp, c) + p);
      }
    }
    alpha[c] = acc.value();
  }
}

}  // namespace detail

using detail::LogSum;
using detail::Sequence;

namespace {
constexpr double kNegInf = -std::numeric_limits<double>::infinity();

/// Forward pass of one sequence: log Z, and (when `checkpoints` is given) the ring at every
/// multiple of the checkpoint interval. The ring holds, per position, in(s, ·) (factored) or
/// α(s, ·) (general): what later steps read.
double forward(const Sequence& q, std::size_t delta, std::vector<std::vector<double>>* checkpoints) {
  const std::size_t C = q.C, K = q.K, T = q.T;
  if (T == 0) return 0.0;
  std::vector<double> ring(K * C, kNegInf), alpha(C), in(C);
  auto row = [&](std::size_t s) { return ring.data() + (s % K) * C; };
  const Sequence::RowAt ring_rows{ring.data(), K, 0, C};
  // a checkpoint: the ring, then α at its position (which the ring does not hold)
  auto save = [&] {
    checkpoints->push_back(ring);
    checkpoints->back().insert(checkpoints->back().end(), alpha.begin(), alpha.end());
  };
  std::fill(alpha.begin(), alpha.end(), kNegInf);
  if (checkpoints) save();  // position 0: the start, nothing stored
  for (std::size_t t = 1; t <= T; ++t) {
    q.tick(t, T);
    q.alpha_step(t, ring_rows, alpha.data());
    if (t == T) break;
    if (q.general) std::copy(alpha.begin(), alpha.end(), row(t));
    else q.incoming(alpha.data(), row(t));
    if (checkpoints && t % delta == 0) save();
  }
  LogSum z;
  for (double a : alpha) z.add(a);
  return z.value();
}
}  // namespace

std::size_t working_bytes(const Model& m, std::size_t length, const Options& o) {
  return detail::working_bytes(m, length, o, true);
}

std::vector<double> log_partition(const Model& m, const Batch& x, const Options& o) {
  detail::validate(m, x);
  detail::require(m, x, o, false, 0);
  const auto off = x.offsets();
  std::vector<double> z(x.lengths.size());
  for (std::size_t b = 0; b < x.lengths.size(); ++b) {
    Sequence q(m, x, b, off[b], o);
    z[b] = forward(q, detail::interval(q.T, q.K, o), nullptr);
  }
  return z;
}

namespace {

/// Backward pass of one sequence from its checkpoints: adds its posteriors to `r`.
class Backward {
 public:
  Backward(const Sequence& q, std::size_t delta, const std::vector<std::vector<double>>& cps, double log_z,
           std::size_t offset, Posteriors& r)
      : q_(q), C_(q.C), K_(q.K), T_(q.T), delta_(delta), cps_(cps), z_(log_z), off_(offset), r_(r) {}

  void run() {
    beta_.assign((K_ + 1) * C_, kNegInf);
    std::fill(beta_row(T_), beta_row(T_) + C_, 0.0);
    diff_.assign((T_ + 1) * C_, 0.0);
    const std::size_t blocks = (T_ + delta_ - 1) / delta_;
    for (std::size_t j = blocks; j-- > 0;) run_block(j * delta_, std::min(T_, (j + 1) * delta_));
    finish();
  }

 private:
  double* beta_row(std::size_t t) { return beta_.data() + (t % (K_ + 1)) * C_; }

  /// Recomputes the ring rows of positions [a, b) (from the checkpoint at a) into buf_.
  void recompute(std::size_t a, std::size_t b) {
    base_ = a >= K_ - 1 ? a - (K_ - 1) : 0;
    buf_.assign((b - base_ + 1) * C_, kNegInf);
    alpha_.assign((b - base_ + 1) * C_, kNegInf);
    const auto& cp = cps_[a / delta_];
    for (std::size_t s = base_; s <= a; ++s)
      std::copy(cp.begin() + (s % K_) * C_, cp.begin() + (s % K_ + 1) * C_, buf_.begin() + (s - base_) * C_);
    std::copy(cp.end() - static_cast<std::ptrdiff_t>(C_), cp.end(), alpha_.begin() + (a - base_) * C_);
    auto row = [&](std::size_t s) { return buf_.data() + (s - base_) * C_; };
    const Sequence::RowAt rows{buf_.data(), 0, base_, C_};
    std::vector<double> alpha(C_);
    for (std::size_t t = a + 1; t < b; ++t) {
      q_.tick(++work_, 2 * T_);
      q_.alpha_step(t, rows, alpha.data());
      std::copy(alpha.begin(), alpha.end(), alpha_.begin() + (t - base_) * C_);
      if (q_.general) std::copy(alpha.begin(), alpha.end(), row(t));
      else q_.incoming(alpha.data(), row(t));
    }
  }

  void run_block(std::size_t a, std::size_t b) {
    recompute(a, b);
    gamma_.assign(C_, kNegInf);
    in_.assign(C_, kNegInf);
    for (std::size_t s = b; s-- > a;) {
      q_.tick(++work_, 2 * T_);
      step(s);
    }
  }

  /// The segments starting at s (marginals, duration and transition gradients) and β(s).
  void step(std::size_t s) {
    const double* alpha = alpha_.data() + (s - base_) * C_;
    // in(s, c): the score of a segment of label c starting at s, before its own potential
    if (s == 0)
      for (std::size_t c = 0; c < C_; ++c) in_[c] = q_.init(c);
    else if (!q_.general) std::copy(buf_.begin() + (s - base_) * C_, buf_.begin() + (s - base_ + 1) * C_, in_.begin());
    bsum_.assign(C_, LogSum{});
    double bound = 0;
    for (std::size_t c = 0; c < C_; ++c) bound += starting(s, c, alpha);
    double* beta_s = beta_row(s);
    if (s == 0) {
      for (std::size_t c = 0; c < C_; ++c) r_.grad_initial[c] += std::exp(in_[c] + gamma_[c] - z_);
    } else if (!q_.general) {
      for (std::size_t cp = 0; cp < C_; ++cp) beta_s[cp] = factored_beta(cp, alpha[cp]);
    } else {
      for (std::size_t cp = 0; cp < C_; ++cp) beta_s[cp] = bsum_[cp].value();
    }
    r_.boundaries[off_ + s] = bound;
    // β(s + K + 1) is no longer read: the ring slot s + K + 1 ≡ s is what β(s) just took.
  }

  /// Segments of label c starting at s: adds their posteriors, sets γ(s, c) (factored) or adds to
  /// the β sums per previous label (general); returns their total probability.
  double starting(std::size_t s, std::size_t c, const double* alpha) {
    LogSum gs;
    double total = 0;
    const std::size_t kmax = std::min(K_, T_ - s);
    for (std::size_t k = 1; k <= kmax; ++k) {
      const std::size_t e = s + k;
      const double p0 = q_.psi0(e, k, c);
      const double be = beta_row(e)[c];
      if (p0 == kNegInf || be == kNegInf) continue;
      const double rest = p0 + be;  // the segment and everything after it
      double p = 0;
      if (!q_.general || s == 0) {
        gs.add(rest);
        p = std::exp(in_[c] + rest - z_);
      } else {
        p = general_transitions(k, c, rest, alpha);
      }
      add_segment(s, e, k, c, p);
      total += p;
    }
    gamma_[c] = gs.value();
    return total;
  }

  /// General recurrence: the transitions into a segment (label c, duration k, potential + rest
  /// `rest`) from every previous label; returns the segment's probability.
  double general_transitions(std::size_t k, std::size_t c, double rest, const double* alpha) {
    double pk = 0;
    for (std::size_t cp = 0; cp < C_; ++cp) {
      const double tr = q_.trans(k, cp, c);
      bsum_[cp].add(tr + rest);
      const double p = std::exp(alpha[cp] + tr + rest - z_);
      r_.grad_transitions[q_.trans_index(k, cp, c)] += p;
      pk += p;
    }
    return pk;
  }

  /// Factored recurrence: β(s, c') from γ(s, ·), and the transition gradients out of c'.
  double factored_beta(std::size_t cp, double alpha_cp) {
    LogSum acc;
    for (std::size_t c = 0; c < C_; ++c) {
      const double v = q_.model.transitions[cp * C_ + c] + gamma_[c];
      acc.add(v);
      if (alpha_cp != kNegInf && v != kNegInf) r_.grad_transitions[cp * C_ + c] += std::exp(alpha_cp + v - z_);
    }
    return acc.value();
  }

  void add_segment(std::size_t s, std::size_t e, std::size_t k, std::size_t c, double p) {
    diff_[s * C_ + c] += p;
    diff_[e * C_ + c] -= p;
    r_.grad_duration[(k - 1) * C_ + c] += p;
  }

  void finish() {
    std::vector<double> run(C_, 0.0);
    for (std::size_t u = 0; u < T_; ++u)
      for (std::size_t c = 0; c < C_; ++c) {
        run[c] += diff_[u * C_ + c];
        const double v = std::clamp(run[c], 0.0, 1.0);
        r_.label_marginals[(off_ + u) * C_ + c] = v;
      }
  }

  const Sequence& q_;
  const std::size_t C_, K_, T_, delta_;
  const std::vector<std::vector<double>>& cps_;
  const double z_;
  const std::size_t off_;
  Posteriors& r_;
  std::vector<double> beta_, diff_, buf_, alpha_, gamma_, in_;
  std::vector<LogSum> bsum_;
  std::size_t base_ = 0;
  std::size_t work_ = 0;  // positions recomputed and stepped so far (of 2·T), for Options::poll
};

}  // namespace

Posteriors posteriors(const Model& m, const Batch& x, const Options& o) {
  detail::validate(m, x);
  detail::require(m, x, o, true, std::size_t{3} * sizeof(double));  // marginals, gradients, diff
  const std::size_t C = m.labels, n = x.total_length();
  Posteriors r;
  r.log_z.resize(x.lengths.size());
  r.label_marginals.assign(n * C, 0.0);
  r.boundaries.assign(n, 0.0);
  r.grad_emissions.assign(n * C, 0.0);
  r.grad_transitions.assign(m.transitions.size(), 0.0);
  r.grad_duration.assign(m.duration_bias.size(), 0.0);
  r.grad_initial.assign(C, 0.0);
  const auto off = x.offsets();
  for (std::size_t b = 0; b < x.lengths.size(); ++b) {
    Sequence q(m, x, b, off[b], o);
    const std::size_t delta = detail::interval(q.T, q.K, o);
    std::vector<std::vector<double>> cps;
    r.log_z[b] = forward(q, delta, &cps);
    if (q.T == 0 || r.log_z[b] == kNegInf) continue;
    Backward(q, delta, cps, r.log_z[b], off[b], r).run();
    for (std::size_t u = 0; u < q.T; ++u)
      for (std::size_t c = 0; c < C; ++c)
        r.grad_emissions[(off[b] + u) * C + c] = r.label_marginals[(off[b] + u) * C + c];
    if (o.centring == Centring::mean) {
      const double* f = x.emissions + off[b] * C;
      for (std::size_t c = 0; c < C; ++c) {
        if (q.finite_count[c] == 0) continue;
        double s = 0;
        for (std::size_t u = 0; u < q.T; ++u)
          if (std::isfinite(f[u * C + c])) s += r.label_marginals[(off[b] + u) * C + c];
        const double mean = s / double(q.finite_count[c]);
        for (std::size_t u = 0; u < q.T; ++u)
          if (std::isfinite(f[u * C + c])) r.grad_emissions[(off[b] + u) * C + c] -= mean;
      }
    }
  }
  return r;
}

namespace {

/// Max-sum forward pass of one sequence with compact backpointers, and its traceback.
class ViterbiPass {
 public:
  explicit ViterbiPass(const Sequence& q)
      : q_(q),
        C_(q.C),
        K_(q.K),
        T_(q.T),
        best_((T_ + 1) * C_, kNegInf),
        inmax_(q.general ? 0 : (T_ + 1) * C_, kNegInf),
        bpk_((T_ + 1) * C_, 0),
        bpc_((T_ + 1) * C_, 0) {}

  Path run() {
    Path path;
    if (T_ == 0) {
      path.score = 0;
      return path;
    }
    for (std::size_t t = 1; t <= T_; ++t) {
      q_.tick(t, T_);
      for (std::size_t c = 0; c < C_; ++c) best_ending(t, c);
      if (!q_.general && t < T_)
        for (std::size_t c = 0; c < C_; ++c) best_incoming(t, c);
    }
    std::size_t c = 0;
    for (std::size_t l = 1; l < C_; ++l)
      if (best_[T_ * C_ + l] > best_[T_ * C_ + c]) c = l;
    path.score = best_[T_ * C_ + c];
    if (path.score != kNegInf) path.segments = traceback(c);
    return path;
  }

 private:
  /// best(t, c) over the last segment's duration (and previous label, general): ties to the
  /// smallest duration, then the smallest previous label.
  void best_ending(std::size_t t, std::size_t c) {
    double v = kNegInf;
    std::uint32_t bk = 0, bc = 0;
    for (std::size_t k = 1; k <= std::min(K_, t); ++k) {
      const std::size_t s = t - k;
      const double p = q_.psi0(t, k, c);
      if (p == kNegInf) continue;
      if (s == 0) {
        if (q_.init(c) + p > v) v = q_.init(c) + p, bk = std::uint32_t(k), bc = 0;
      } else if (!q_.general) {
        if (inmax_[s * C_ + c] + p > v) v = inmax_[s * C_ + c] + p, bk = std::uint32_t(k);
      } else {
        for (std::size_t cp = 0; cp < C_; ++cp) {
          const double w = best_[s * C_ + cp] + q_.trans(k, cp, c) + p;
          if (w > v) v = w, bk = std::uint32_t(k), bc = std::uint32_t(cp);
        }
      }
    }
    best_[t * C_ + c] = v;
    bpk_[t * C_ + c] = bk;
    if (q_.general) bpc_[t * C_ + c] = bc;
  }

  /// Factored: the best previous label of a segment of label c starting at t.
  void best_incoming(std::size_t t, std::size_t c) {
    double v = kNegInf;
    std::uint32_t bc = 0;
    for (std::size_t cp = 0; cp < C_; ++cp) {
      const double w = best_[t * C_ + cp] + q_.model.transitions[cp * C_ + c];
      if (w > v) v = w, bc = std::uint32_t(cp);
    }
    inmax_[t * C_ + c] = v;
    bpc_[t * C_ + c] = bc;
  }

  std::vector<Segment> traceback(std::size_t c) const {
    std::vector<Segment> segs;
    std::size_t t = T_;
    while (t > 0) {
      const std::size_t k = bpk_[t * C_ + c], s = t - k;
      const std::size_t cp = s == 0 ? 0 : (q_.general ? bpc_[t * C_ + c] : bpc_[s * C_ + c]);
      const double tr = s == 0 ? q_.init(c) : q_.trans(k, cp, c);
      segs.push_back({s, t, c, q_.psi0(t, k, c) + tr});
      t = s;
      c = cp;
    }
    std::reverse(segs.begin(), segs.end());
    return segs;
  }

  const Sequence& q_;
  const std::size_t C_, K_, T_;
  std::vector<double> best_, inmax_;      ///< best(t, c); factored: max over c' of best(t, c') + Tr[c', c]
  std::vector<std::uint32_t> bpk_, bpc_;  ///< best duration per (t, c); best previous label
};

}  // namespace

std::vector<Path> viterbi(const Model& m, const Batch& x, const Options& o) {
  detail::validate(m, x);
  detail::require(m, x, o, false, 8);
  const auto off = x.offsets();
  std::vector<Path> paths(x.lengths.size());
  for (std::size_t b = 0; b < x.lengths.size(); ++b) {
    const Sequence q(m, x, b, off[b], o);
    paths[b] = ViterbiPass(q).run();
  }
  return paths;
}

double path_score(const Model& m, const Batch& x, std::size_t b, const std::vector<Segment>& segs, const Options& o) {
  detail::validate(m, x);
  const auto off = x.offsets();
  const Sequence q(m, x, b, off[b], o);
  double v = 0;
  std::size_t expect = 0;
  for (std::size_t i = 0; i < segs.size(); ++i) {
    const auto& g = segs[i];
    const std::size_t k = g.end - g.start;
    if (g.start != expect || g.end <= g.start || g.end > q.T || g.label >= q.C)
      throw std::invalid_argument("segment " + std::to_string(i) + " [" + std::to_string(g.start) + ", " +
                                  std::to_string(g.end) + ") does not continue a segmentation of " +
                                  std::to_string(q.T) + " samples");
    if (k > q.K) return kNegInf;
    v += q.psi0(g.end, k, g.label) + (i == 0 ? q.init(g.label) : q.trans(k, segs[i - 1].label, g.label));
    expect = g.end;
  }
  if (expect != q.T)
    throw std::invalid_argument("the segments end at " + std::to_string(expect) +
                                ", not at T = " + std::to_string(q.T));
  return v;
}

}  // namespace gemflow::semicrf
