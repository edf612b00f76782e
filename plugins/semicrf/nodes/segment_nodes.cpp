// semicrf.bayes_segments: change points from a per-segment mean and variance model.
#include <cmath>
#include <limits>

#include "gemflow/semicrf/emissions.hpp"
#include "gemflow/semicrf/segment_models.hpp"
#include "model_type.hpp"
#include "register.hpp"

namespace gemflow::semicrf {
namespace {

class BayesSegments final : public Node {
 public:
  static NodeInfo info() {
    return {.id = "semicrf.bayes_segments",
            .version = 1,
            .title = "Segments with their own mean and variance",
            .category = "Segmentation",
            .doc =
                "Cuts a signal where its level or spread changes. Every segment has its own unknown mean and "
                "variance per channel under a conjugate Normal-Gamma prior, integrated out (the segment's "
                "marginal likelihood, a segment-level semi-CRF score); a segment costs penalty·log T nats; the "
                "segmentation is the most probable one (Viterbi of a one-label semi-CRF) and the boundary "
                "posterior comes from forward-backward. Channels are first put in robust standard units "
                "(median, MAD), so that one parameter set fits series of any unit; isolated outliers (a Hampel "
                "identifier) and missing values (the signal's mask) are left out of the likelihood.",
            .errors =
                "An empty signal; a channel without observed values; min_duration above max_duration; working "
                "memory beyond the available (the bytes named).",
            .memory =
                "CPU: prefix sums of the signal (3·T·D values) and the streaming recurrences over K = "
                "max_duration (T by default): O(T·K) time per pass, O(K + √(T·K)) values; no device memory.",
            .determinism = "Deterministic (fixed order of every sum).",
            .references =
                "Fearnhead, Stat. Comput. 16 (2006); Adams & MacKay, arXiv:0710.3742 (2007); Murphy, Conjugate "
                "Bayesian analysis of the Gaussian distribution (2007); Hampel, JASA 69 (1974); Sarawagi & "
                "Cohen, NIPS 2004."};
  }
  Input<Signal> signal{this, "signal", "Signal to segment, T × D"};
  Output<Segmentation> segmentation{this, "segmentation", "The most probable segmentation (one label, 'segment')"};
  Output<Scores> boundaries{this, "boundaries", "log P(a segment starts at t), T × 1 (label 'boundary')"};
  Param<double> penalty{this,
                        "penalty",
                        2.0,
                        {.min = 0,
                         .max = 1e6,
                         .unit = "log T",
                         .doc = "Cost of a segment in units of log T nats (a BIC-like cost: one value for series "
                                "of any length)"}};
  Param<double> alpha{
      this, "alpha", 1.0, {.min = 1e-6, .max = 1e6, .doc = "α₀: shape of the prior on each segment's precision"}};
  Param<double> beta{this,
                     "beta",
                     1.0,
                     {.min = 1e-9,
                      .max = 1e9,
                      .doc = "β₀: rate of the prior on each segment's precision (standard units squared; "
                             "β₀/α₀ is the prior's typical variance)"}};
  Param<double> kappa{this,
                      "kappa",
                      0.1,
                      {.min = 1e-9,
                       .max = 1e9,
                       .unit = "samples",
                       .doc = "κ₀: weight of the prior mean (the channel's median) in samples"}};
  Param<int> hampel_window{this,
                           "hampel_window",
                           5,
                           {.min = 0,
                            .max = 100000,
                            .unit = "samples",
                            .doc = "Half window of the running median that finds isolated outliers; 0: none"}};
  Param<double> hampel_threshold{
      this,
      "hampel_threshold",
      5.0,
      {.min = 0.1, .max = 1e6, .doc = "An outlier lies this many robust standard deviations from the running median"}};
  Param<int> max_duration{
      this, "max_duration", 0, {.min = 0, .unit = "samples", .doc = "Longest segment K; 0: the signal's length"}};
  Param<int> min_duration{this, "min_duration", 1, {.min = 1, .unit = "samples", .doc = "Shortest segment"}};

  void execute(NodeContext& ctx) override {
    const Signal& s = *signal;
    if (s.length() == 0) throw InputError("input 'signal' has no samples");
    if (auto why = s.validate()) throw InputError("input 'signal': " + *why);
    const std::size_t T = s.length(), D = s.dims();
    const std::size_t K = *max_duration == 0 ? T : std::min<std::size_t>(T, static_cast<std::size_t>(*max_duration));
    const std::size_t kmin = static_cast<std::size_t>(*min_duration);
    if (kmin > K)
      throw InputError("parameter 'min_duration' = " + std::to_string(kmin) +
                       " exceeds the longest segment K = " + std::to_string(K) + ": no segmentation is allowed");
    const std::uint8_t* mask = s.valid.empty() ? nullptr : s.valid.data();
    const auto x = run_algo([&] { return standardise(s.samples.data(), T, D, mask); });
    std::vector<std::uint8_t> valid(s.valid);
    if (*hampel_window > 0)
      valid = run_algo([&] {
        return hampel_outliers(x.data(), T, D, static_cast<std::size_t>(*hampel_window), *hampel_threshold, mask,
                               node_poll(ctx, 0.0, 0.0, 1, "isolated outliers"));
      });
    std::size_t outliers = 0;
    for (std::size_t i = 0; i < valid.size(); ++i) outliers += valid[i] == 0 && (mask == nullptr || mask[i] != 0);
    if (outliers > 0) ctx.info(std::to_string(outliers) + " isolated outliers left out of the likelihood");
    const NormalGammaSegments g = run_algo([&] {
      return NormalGammaSegments(x.data(), {T}, D, {{0.0, *kappa, *alpha, *beta}},
                                 valid.empty() ? nullptr : valid.data());
    });
    Model m = Model::zeros(1, K);
    for (std::size_t k = 1; k <= K; ++k)
      m.duration_bias[k - 1] = k < kmin ? -std::numeric_limits<double>::infinity() : -*penalty * std::log(double(T));
    const std::vector<double> f(T, 0.0);
    Batch b;
    b.emissions = f.data();
    b.lengths = {T};
    b.segment_score = &g;
    Options o;
    if (auto avail = available_host_memory()) o.memory_limit = *avail;
    ctx.progress(0.0, "Viterbi");
    o.poll = node_poll(ctx, 0.0, 0.5, 1, "Viterbi");
    const Path p = run_algo([&] { return viterbi(m, b, o); }).at(0);
    if (p.score == -std::numeric_limits<double>::infinity()) throw InputError(no_segmentation_message(0, T));
    ctx.throw_if_cancelled();
    ctx.progress(0.5, "forward-backward");
    o.poll = node_poll(ctx, 0.5, 1.0, 2, "forward-backward");
    const auto post = run_algo([&] { return posteriors(m, b, o); });
    Segmentation out;
    out.length = T;
    out.labels = {"segment"};
    out.sample_rate = s.regular() ? s.sample_rate : 0.0;
    for (const auto& seg : p.segments) out.segments.push_back({seg.start, seg.end, seg.label, seg.score});
    Scores bnd;
    bnd.scores = Matrix<double>(T, 1);
    for (std::size_t t = 0; t < T; ++t) bnd.scores(t, 0) = std::log(std::min(1.0, post.boundaries[t]));
    bnd.labels = {"boundary"};
    bnd.sample_rate = out.sample_rate;
    ctx.record("segments", static_cast<std::int64_t>(out.segments.size()));
    ctx.record("log_evidence", post.log_z[0]);
    ctx.record("outliers", static_cast<std::int64_t>(outliers));
    ctx.progress(1.0);
    segmentation.set(std::move(out));
    boundaries.set(std::move(bnd));
  }
};

}  // namespace

void register_segment_nodes(PluginRegistrar& r) { r.add_node<BayesSegments>(); }

}  // namespace gemflow::semicrf
