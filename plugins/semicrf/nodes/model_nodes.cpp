// semicrf.gaussian_emissions, semicrf.fit.
#include <cmath>
#include <cstdlib>
#include <limits>
#include <sstream>
#include <stdexcept>

#include "model_type.hpp"
#include "register.hpp"

namespace gemflow::semicrf {
namespace {

constexpr double kNegInf = -std::numeric_limits<double>::infinity();

/// "1, 2.5, 3" → numbers; InputError naming the parameter otherwise.
std::vector<double> number_list(const std::string& text, const char* param) {
  std::vector<double> v;
  std::string item;
  std::istringstream in(text);
  while (std::getline(in, item, ',')) {
    std::size_t used = 0;
    double x = 0;
    std::string why = "is not a finite number";
    try {
      x = std::stod(item, &used);
    } catch (const std::out_of_range&) {
      // a number, out of the normal doubles' range: say which end (a user's 1e-320 was "not finite")
      const double near = std::strtod(item.c_str(), nullptr);
      why = std::abs(near) < 1.0 ? "is too close to 0 (below 2.2e-308, the smallest normal double)"
                              : "is beyond the largest double (1.8e308)";
      used = 0;
    } catch (const std::exception&) {
      used = 0;
    }
    while (used < item.size() && std::isspace(static_cast<unsigned char>(item[used]))) ++used;
    if (used != item.size() || item.empty() || !std::isfinite(x))
      throw InputError(std::string("parameter '") + param + "': '" + item + "' " + why);
    v.push_back(x);
  }
  return v;
}

std::vector<std::string> level_names(std::size_t C) {
  std::vector<std::string> n;
  for (std::size_t c = 0; c < C; ++c) n.push_back("level" + std::to_string(c));
  return n;
}

/// Parameters shared by the nodes that estimate Gaussians from a signal.
struct GaussianParams : ParamGroup {
  explicit GaussianParams(Node* n, Renames r = {})
      : ParamGroup(std::move(r)),
        labels{n, name("labels"), 4, {.min = 1, .max = 4096, .doc = "Number of labels C (levels of the signal)"}},
        levels{n,
               name("levels"),
               LevelEstimate::kmeans,
               {{LevelEstimate::quantiles, "quantiles"}, {LevelEstimate::kmeans, "kmeans"}},
               {.doc = "Label means: quantiles (the (c+½)/C quantiles) or kmeans (Lloyd's k-means started there)"}},
        variance{n,
                 name("variance"),
                 VarianceEstimate::noise,
                 {{VarianceEstimate::noise, "noise"}, {VarianceEstimate::cluster, "cluster"}},
                 {.doc = "Label variances: noise (one per channel, from the median absolute first difference) or "
                         "cluster (each label's spread, at least the noise)"}},
        labels_name{name("labels")} {
    done();
  }
  /// C for a signal of T samples; more labels than samples is the parameter's fault, said as such.
  [[nodiscard]] std::size_t count_for(std::size_t T) const {
    const auto C = static_cast<std::size_t>(*labels);
    if (C > T)
      throw InputError("parameter '" + labels_name + "' = " + std::to_string(C) + " is more than the signal's " +
                       std::to_string(T) + " samples (each label needs at least one)");
    return C;
  }
  Param<int> labels;
  Choice<LevelEstimate> levels;
  Choice<VarianceEstimate> variance;
  std::string labels_name;
};

const Signal& checked_signal(const Input<Signal>& in) {
  const Signal& s = *in;
  if (s.length() == 0) throw InputError("input 'signal' has no samples");
  if (auto why = s.validate()) throw InputError("input 'signal': " + *why);
  return s;
}

/// The signal's validity flags for the algorithms (nullptr: every value observed).
const std::uint8_t* mask(const Signal& s) { return s.valid.empty() ? nullptr : s.valid.data(); }

class GaussianEmissions final : public Node {
 public:
  static NodeInfo info() {
    return {.id = "semicrf.gaussian_emissions",
            .version = 1,
            .title = "Gaussian emissions",
            .category = "Segmentation",
            .doc =
                "Scores every sample of a signal under C labels, each a diagonal Gaussian over the channels: "
                "f(t, c) = Σ_d −½ log(2π σ²(c,d)) − (x(t,d) − μ(c,d))² / (2 σ²(c,d)); a missing value (the signal's "
                "validity mask) is marginalised: its channel drops from the sum. The Gaussians come from "
                "the model input when it has them (semicrf.fit), else from the parameters means/std_devs, else "
                "they are estimated from the signal (levels, variance).",
            .errors =
                "An empty signal; C > T; means/std_devs whose count is not C·D, or std_devs ≤ 0; a model "
                "whose Gaussians have another channel count.",
            .memory = "T·C scores (8 bytes each) on the host; no device memory.",
            .determinism = "Deterministic (no random initialisation).",
            .references =
                "Murphy, Hidden semi-Markov models (2002); Lloyd, IEEE Trans. Inf. Theory 28 (1982); "
                "Hampel, JASA 69 (1974) for the MAD noise estimate."};
  }
  Input<Signal> signal{this, "signal", "Signal to score, T × D"};
  Input<CrfModel> model{this, "model", "Fitted model whose Gaussians to use (optional)", PortUse::Optional};
  Output<Scores> scores{this, "scores", "Emission scores, T × C (natural-log densities)"};
  GaussianParams gauss{this};
  Param<std::string> means{
      this, "means", "", {.doc = "Given label means, C·D comma-separated numbers (label-major); empty: estimated"}};
  Param<double> outlier_probability{this,
                                    "outlier_probability",
                                    0.0,
                                    {.min = 0,
                                     .max = 0.5,
                                     .doc = "ε: each sample is an outlier (uniform over the signal's "
                                            "range) with this probability; 0: plain Gaussians"}};
  Param<std::string> std_devs{this,
                              "std_devs",
                              "",
                              {.doc = "Given standard deviations, C·D numbers (or one per channel, D); empty: "
                                      "estimated"}};

  void execute(NodeContext& ctx) override {
    const Signal& s = checked_signal(signal);
    const std::size_t T = s.length(), D = s.dims();
    GaussianLabels g;
    std::vector<std::string> names;
    if (model.connected() && (*model).model.gaussians.labels > 0) {
      g = (*model).model.gaussians;
      names = (*model).labels;
      ctx.info("Gaussians of the model input");
    } else {
      const std::size_t C = gauss.count_for(T);
      g = run_algo([&] {
        return estimate_gaussians(s.samples.data(), T, D, C, *gauss.levels, *gauss.variance, mask(s),
                                  node_poll(ctx, 0.0, 1.0, 1, "estimating the labels' levels"));
      });
      if (!(*means).empty()) {
        auto m = number_list(*means, "means");
        if (m.size() != C * D)
          throw InputError("parameter 'means' has " + std::to_string(m.size()) +
                           " numbers; expected C·D = " + std::to_string(C * D));
        g.mean = m;
      }
      if (!(*std_devs).empty()) {
        auto sd = number_list(*std_devs, "std_devs");
        if (sd.size() != C * D && sd.size() != D)
          throw InputError("parameter 'std_devs' has " + std::to_string(sd.size()) +
                           " numbers; expected C·D = " + std::to_string(C * D) + " or D = " + std::to_string(D));
        for (std::size_t i = 0; i < C * D; ++i) {
          const double v = sd.size() == D ? sd[i % D] : sd[i];
          if (!(v > 0)) throw InputError("parameter 'std_devs': " + std::to_string(v) + " is not positive");
          g.variance[i] = v * v;
        }
      }
      names = level_names(C);
      g.outlier = *outlier_probability;
    }
    Scores out;
    out.scores = Matrix<double>(T, g.labels);
    const auto f = run_algo([&] { return gaussian_scores(s.samples.data(), T, D, g, mask(s)); });
    if (s.missing() > 0) ctx.info(std::to_string(s.missing()) + " missing values marginalised (no log-likelihood)");
    std::copy(f.begin(), f.end(), out.scores.data());
    out.labels = names;
    out.sample_rate = s.regular() ? s.sample_rate : 0.0;
    for (std::size_t c = 0; c < g.labels; ++c) {
      std::string m;
      for (std::size_t d = 0; d < D; ++d) {
        if (d) m += ", ";
        m += std::to_string(g.mean[c * D + d]);
      }
      ctx.record("mean_" + names[c], m);
    }
    scores.set(std::move(out));
  }
};

class Fit final : public Node {
 public:
  enum class Mode { unsupervised, supervised };
  enum class Self { forbid, allow };
  enum class PenaltyUnit { nats, log_length };
  static NodeInfo info() {
    return {.id = "semicrf.fit",
            .version = 1,
            .title = "Fit semi-CRF",
            .category = "Segmentation",
            .doc =
                "Fits a semi-Markov CRF with Gaussian emissions to a signal. The start: C Gaussians estimated from "
                "the signal (levels, variance), transitions −change_penalty between different labels (self: "
                "forbidden or 0), duration bias −segment_penalty for every duration up to max_duration. "
                "unsupervised: EM from the forward-backward marginals (the Gaussians, the transitions as "
                "log-probabilities over the allowed ones; durations with fit_durations). supervised: maximum "
                "likelihood of the labelled segmentation (input 'labels') with L-BFGS and the backward pass's "
                "gradients. The history is a Table (iteration, objective, change).",
            .errors =
                "An empty signal; supervised without 'labels' (or labels of another length, or with label "
                "indices ≥ C); a model under which no segmentation is allowed (named as such); working memory "
                "beyond the available memory (the bytes named).",
            .memory =
                "Per iteration: T·C emission scores, marginals and gradients (8 bytes each) plus the streaming "
                "recurrences' O(K·C·(1 + √(T/K))) and T·C prefix sums; no device memory.",
            .determinism = "Deterministic: fixed order of every sum, no random initialisation.",
            .references =
                "Sarawagi & Cohen, Semi-Markov CRFs, NIPS 2004; Yu, Hidden semi-Markov models, Artif. "
                "Intell. 174 (2010); Nocedal, Math. Comp. 35 (1980) / liblbfgs."};
  }
  Input<Signal> signal{this, "signal", "Signal to fit, T × D"};
  Input<Segmentation> labels{this, "labels", "Labelled segmentation (supervised mode)", PortUse::Optional};
  Output<CrfModel> model{this, "model", "The fitted model"};
  Output<Table> history{this, "history", "Objective per iteration"};
  Choice<Mode> mode{this,
                    "mode",
                    Mode::unsupervised,
                    {{Mode::unsupervised, "unsupervised"}, {Mode::supervised, "supervised"}},
                    {.doc = "unsupervised (EM on the signal) or supervised (L-BFGS on 'labels')"}};
  GaussianParams gauss{this};
  Param<int> max_duration{
      this, "max_duration", 0, {.min = 0, .unit = "samples", .doc = "Longest segment K; 0: the signal's length"}};
  Param<int> min_duration{this,
                          "min_duration",
                          1,
                          {.min = 1,
                           .unit = "samples",
                           .doc = "Shortest segment: durations below it get a duration bias of −∞ (kept by EM)"}};
  Param<double> change_penalty{this,
                               "change_penalty",
                               0.0,
                               {.min = 0, .max = 1e6, .doc = "Start: −log-potential of a change between two labels"}};
  Param<double> segment_penalty{this,
                                "segment_penalty",
                                10.0,
                                {.min = 0,
                                 .max = 1e6,
                                 .doc = "−duration bias of every segment (a cost per segment, "
                                        "natural-log units)"}};
  Choice<PenaltyUnit> penalty_unit{this,
                                   "penalty_unit",
                                   PenaltyUnit::nats,
                                   {{PenaltyUnit::nats, "nats"}, {PenaltyUnit::log_length, "log_length"}},
                                   {.doc = "Unit of segment_penalty: nats (natural-log units, as given) or log_length "
                                           "(times log T, a BIC-like cost that lets one value fit series of any "
                                           "length)"}};
  Choice<Self> self_transitions{this,
                                "self_transitions",
                                Self::forbid,
                                {{Self::forbid, "forbid"}, {Self::allow, "allow"}},
                                {.doc = "A segment followed by one of the same label: forbid (every boundary is a "
                                        "change) or allow (log-potential 0)"}};
  Param<double> outlier_probability{this,
                                    "outlier_probability",
                                    0.0,
                                    {.min = 0,
                                     .max = 0.5,
                                     .doc = "ε of the Gaussians' uniform outlier component (see "
                                            "semicrf.gaussian_emissions); kept in the model"}};
  Param<int> iterations{this, "iterations", 20, {.min = 0, .max = 100000, .doc = "EM or L-BFGS iterations"}};
  Param<bool> fit_emissions{this, "fit_emissions", true, {.doc = "Re-estimate the Gaussians"}};
  Param<bool> fit_transitions{this, "fit_transitions", true, {.doc = "Re-estimate the transitions"}};
  Param<bool> fit_durations{this,
                            "fit_durations",
                            false,
                            {.doc = "Re-estimate the duration biases (EM: a free distribution over 1..K per label)"}};
  Param<double> l2{this, "l2", 1e-3, {.min = 0, .doc = "supervised: weight of ½‖θ‖² on the CRF potentials"}};
  Choice<Centring> centring{
      this,
      "centring",
      Centring::reconstruct,
      {{Centring::none, "none"}, {Centring::mean, "mean"}, {Centring::reconstruct, "reconstruct"}},
      {.doc = "Emission centring inside the recurrences: none, mean (changes the model: each "
              "segment loses ν_c·k), reconstruct (same model, centred prefix sums)"}};

  void execute(NodeContext& ctx) override {
    const Signal& s = checked_signal(signal);
    const std::size_t T = s.length(), D = s.dims();
    const std::size_t C = gauss.count_for(T);
    const std::size_t K = *max_duration == 0 ? T : std::min<std::size_t>(T, static_cast<std::size_t>(*max_duration));
    CrfModel m;
    m.centring = *centring;
    m.labels = level_names(C);
    // the starting levels: progress stays at 0 (the iterations' share is unknown), cancel works
    m.model.gaussians = run_algo([&] {
      return estimate_gaussians(s.samples.data(), T, D, C, *gauss.levels, *gauss.variance, mask(s),
                                node_poll(ctx, 0.0, 0.0, 1, "estimating the labels' levels"));
    });
    m.model.gaussians.outlier = *outlier_probability;
    m.model.crf = Model::zeros(C, K);
    for (std::size_t a = 0; a < C; ++a)
      for (std::size_t b = 0; b < C; ++b)
        m.model.crf.transitions[a * C + b] =
            a == b ? (*self_transitions == Self::forbid && C > 1 ? kNegInf : 0.0) : -*change_penalty;
    const double penalty = *segment_penalty * (*penalty_unit == PenaltyUnit::log_length ? std::log(double(T)) : 1.0);
    for (auto& v : m.model.crf.duration_bias) v = -penalty;
    const std::size_t kmin = static_cast<std::size_t>(*min_duration);
    if (kmin > K)
      throw InputError("parameter 'min_duration' = " + std::to_string(kmin) +
                       " exceeds the longest segment K = " + std::to_string(K) + ": no segmentation is allowed");
    for (std::size_t k = 1; k < kmin; ++k)
      for (std::size_t c = 0; c < C; ++c) m.model.crf.duration_bias[(k - 1) * C + c] = kNegInf;
    if (C == 1 && *self_transitions == Self::forbid && K < T)
      throw InputError("one label with self_transitions: forbid allows a single segment, but max_duration " +
                       std::to_string(K) + " < T = " + std::to_string(T) + ": no segmentation is allowed");
    FitOptions o;
    o.iterations = static_cast<std::size_t>(*iterations);
    o.fit_emissions = *fit_emissions;
    o.fit_transitions = *fit_transitions;
    o.fit_durations = *fit_durations;
    o.l2 = *l2;
    o.crf = crf_options(m);
    // Within an iteration (recurrence passes of seconds on a long signal): its share of the bar,
    // and cancellation. `done`: the last iteration reported by on_step (none yet: -1).
    const double per_iteration = 1.0 / static_cast<double>(std::max<std::size_t>(o.iterations, 1));
    double shown = 0.0;
    std::int64_t done = -1;
    o.crf.poll = [&ctx, &shown, &done, per_iteration](double f) {
      const double it = static_cast<double>(std::max<std::int64_t>(done, 0));
      shown = std::max(shown, std::min(1.0, (it + f) * per_iteration));
      ctx.progress(shown, "iteration " + std::to_string(done + 1));
      ctx.throw_if_cancelled();
    };
    o.on_step = [&ctx, &shown, &done, per_iteration](const FitStep& st) {
      done = static_cast<std::int64_t>(st.iteration);
      shown = std::max(shown, std::min(1.0, static_cast<double>(st.iteration) * per_iteration));
      ctx.progress(shown, "iteration " + std::to_string(st.iteration) + ": objective " + std::to_string(st.objective));
      return !ctx.cancelled();
    };
    ctx.progress(0.0, "fitting");
    std::vector<FitStep> h;
    if (*mode == Mode::supervised) {
      if (!labels.connected()) throw InputError("mode 'supervised' needs the input 'labels' (a labelled segmentation)");
      const Segmentation& g = *labels;
      if (g.length != T)
        throw InputError("input 'labels' covers " + std::to_string(g.length) + " samples, the signal has " +
                         std::to_string(T));
      if (auto why = g.validate()) throw InputError("input 'labels': " + *why);
      if (!g.complete())
        throw InputError(
            "input 'labels' leaves samples without a segment (supervised fitting needs a complete segmentation)");
      std::vector<Segment> gold;
      for (const auto& seg : g.segments) {
        if (seg.label >= C)
          throw InputError("input 'labels' uses label " + std::to_string(seg.label) +
                           ", the model has C = " + std::to_string(C));
        gold.push_back({seg.start, seg.end, seg.label, seg.score});
      }
      if (g.labels.size() == C) m.labels = g.labels;
      h = run_algo([&] { return fit_supervised(m.model, s.samples.data(), {T}, D, {gold}, o, mask(s)); });
    } else {
      h = run_algo([&] { return fit_em(m.model, s.samples.data(), {T}, D, o, mask(s)); });
    }
    ctx.throw_if_cancelled();
    Table t;
    t.columns = {"iteration", "objective", "change"};
    for (const auto& step : h)
      t.rows.push_back({static_cast<std::int64_t>(step.iteration), step.objective, step.change});
    if (!h.empty()) {
      ctx.record("objective", h.back().objective);
      ctx.record("iterations", static_cast<std::int64_t>(h.back().iteration));
      ctx.info("objective " + std::to_string(h.front().objective) + " → " + std::to_string(h.back().objective) +
               " in " + std::to_string(h.size() - 1) + " iterations");
    }
    ctx.progress(1.0);
    model.set(std::move(m));
    history.set(std::move(t));
  }
};

}  // namespace

void register_model_nodes(PluginRegistrar& r) {
  r.add_type<CrfModel>();
  r.add_node<GaussianEmissions>();
  r.add_node<Fit>();
}

}  // namespace gemflow::semicrf
