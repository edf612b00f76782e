// semicrf.decode, semicrf.marginals, semicrf.change_points.
#include <cmath>
#include <limits>

#include "model_type.hpp"
#include "register.hpp"

#if GEMFLOW_SEMICRF_HAVE_CUDA
#include <cuda_runtime.h>

#include "gemflow/semicrf/semicrf_cuda.hpp"
#endif

namespace gemflow::semicrf {
namespace {

const char* kNodeMemory =
    "CPU: T·C prefix sums (12 bytes per value) and the streaming recurrences' O(K·C·(1 + √(T/K))) values; decode "
    "adds T·C backpointers (8 bytes), marginals T·C posteriors. CUDA: the same on the device in fp64 prefix sums "
    "and fp32 recurrences, checked before allocating.";

/// On the selected device (cuda: the GPU path, which needs C·C transitions).
template <class Cpu, class Gpu>
auto on_device(NodeContext& ctx, const DeviceParam& device, Cpu&& cpu, Gpu&& gpu) {
  const Device dev = device.resolve(ctx);
  if (!dev.is_cuda()) return run_algo(cpu);
#if GEMFLOW_SEMICRF_HAVE_CUDA
  try {
    if (cudaSetDevice(dev.index) != cudaSuccess) throw DeviceError("cannot select " + dev.str());
    return run_algo(gpu);
  } catch (const cuda::CudaError& e) {
    throw DeviceError(e.what());
  }
#else
  (void)gpu;
  throw DeviceError("device " + dev.str() + " requested, but Gemflow's semicrf plugin was built without CUDA");
#endif
}

class Decode final : public Node {
 public:
  static NodeInfo info() {
    return {.id = "semicrf.decode",
            .version = 1,
            .title = "Decode segments (Viterbi)",
            .category = "Segmentation",
            .doc =
                "The highest-scoring segmentation of the emission scores under the model (semi-Markov Viterbi with "
                "compact backpointers; the factored recurrence when transitions do not depend on the duration). "
                "Each segment's score is its potential: emissions + duration bias + transition (or initial).",
            .errors =
                "Scores whose label count differs from the model's; NaN or +inf scores (the sample named); "
                "'no segmentation is allowed' when every segmentation has a score of −inf; memory beyond the "
                "available (the bytes named).",
            .memory = kNodeMemory,
            .determinism =
                "Deterministic; ties go to the shortest last segment, then the lowest previous label. The "
                "GPU path computes in fp32 and may break near-ties differently.",
            .references = "Sarawagi & Cohen, Semi-Markov CRFs, NIPS 2004."};
  }
  Input<Scores> scores{this, "scores", "Emission scores, T × C"};
  Input<CrfModel> model{this, "model", "The semi-CRF (semicrf.fit)"};
  Output<Segmentation> segmentation{this, "segmentation", "The best segmentation"};
  DeviceParam device{this};

  void execute(NodeContext& ctx) override {
    const Scores& s = *scores;
    const CrfModel& m = *model;
    const Batch b = one_sequence(s, m);
    Options o = crf_options(m);
    o.poll = node_poll(ctx, 0.0, 1.0, 1, "Viterbi");
    const auto paths = on_device(
        ctx, device, [&] { return viterbi(m.model.crf, b, o); },
        [&] {
#if GEMFLOW_SEMICRF_HAVE_CUDA
          return cuda::viterbi(m.model.crf, b, o, nullptr);
#else
          return std::vector<Path>{};
#endif
        });
    const Path& p = paths.at(0);
    if (p.score == -std::numeric_limits<double>::infinity()) throw InputError(no_segmentation_message(0, s.length()));
    Segmentation out;
    out.length = s.length();
    out.labels = m.labels.size() == s.classes() ? m.labels : s.labels;
    out.sample_rate = s.sample_rate;
    for (const auto& g : p.segments) out.segments.push_back({g.start, g.end, g.label, g.score});
    ctx.record("score", p.score);
    ctx.record("segments", static_cast<std::int64_t>(out.segments.size()));
    segmentation.set(std::move(out));
  }
};

class Marginals final : public Node {
 public:
  static NodeInfo info() {
    return {.id = "semicrf.marginals",
            .version = 1,
            .title = "Posterior marginals",
            .category = "Segmentation",
            .doc =
                "Forward-backward over all segmentations: the posterior probability of each label at each sample, "
                "and of a segment boundary (a segment starting) at each sample, as natural-log probabilities "
                "(Scores). log Z is recorded.",
            .errors = "As semicrf.decode.",
            .memory = kNodeMemory,
            .determinism = "Deterministic (fixed summation order, no atomics).",
            .references = "Sarawagi & Cohen, NIPS 2004; Flash-SemiCRF (streaming forward-backward with checkpoints)."};
  }
  Input<Scores> scores{this, "scores", "Emission scores, T × C"};
  Input<CrfModel> model{this, "model", "The semi-CRF"};
  Output<Scores> labels{this, "labels", "log P(label c at sample t), T × C"};
  Output<Scores> boundaries{this, "boundaries", "log P(a segment starts at t), T × 1 (label 'boundary'; t = 0: 0)"};
  DeviceParam device{this};

  void execute(NodeContext& ctx) override {
    const Scores& s = *scores;
    const CrfModel& m = *model;
    const Batch b = one_sequence(s, m);
    Options o = crf_options(m);
    o.poll = node_poll(ctx, 0.0, 1.0, 2, "forward-backward");
    const auto p = on_device(
        ctx, device, [&] { return posteriors(m.model.crf, b, o); },
        [&] {
#if GEMFLOW_SEMICRF_HAVE_CUDA
          return cuda::posteriors(m.model.crf, b, o, nullptr);
#else
          return Posteriors{};
#endif
        });
    if (p.log_z.at(0) == -std::numeric_limits<double>::infinity())
      throw InputError(no_segmentation_message(0, s.length()));
    const std::size_t T = s.length(), C = s.classes();
    Scores lab, bnd;
    lab.scores = Matrix<double>(T, C);
    for (std::size_t i = 0; i < T * C; ++i) lab.scores.data()[i] = std::log(p.label_marginals[i]);
    lab.labels = s.labels;
    lab.sample_rate = s.sample_rate;
    bnd.scores = Matrix<double>(T, 1);
    for (std::size_t t = 0; t < T; ++t) bnd.scores(t, 0) = std::log(std::min(1.0, p.boundaries[t]));
    bnd.labels = {"boundary"};
    bnd.sample_rate = s.sample_rate;
    ctx.record("log_z", p.log_z[0]);
    labels.set(std::move(lab));
    boundaries.set(std::move(bnd));
  }
};

class ChangePointsNode final : public Node {
 public:
  static NodeInfo info() {
    return {.id = "semicrf.change_points",
            .version = 1,
            .title = "Change points",
            .category = "Segmentation",
            .doc =
                "The change points of a segmentation: the start of every segment after the first (with "
                "merge_same_label, only where the label changes). Columns: index (sample), time (s, when the "
                "sample rate is known, else the index), label_before, label_after (names).",
            .errors = "An invalid segmentation (the first broken segment).",
            .memory = "One row per change point.",
            .determinism = "Deterministic.",
            .references = ""};
  }
  Input<Segmentation> segmentation{this, "segmentation", "Segments"};
  Output<Table> table{this, "table", "One row per change point"};
  Param<bool> merge_same_label{
      this, "merge_same_label", true, {.doc = "Skip boundaries between two segments of the same label"}};

  void execute(NodeContext& ctx) override {
    const Segmentation& s = *segmentation;
    if (auto why = s.validate()) throw InputError("input 'segmentation': " + *why);
    Table t;
    t.columns = {"index", "time", "label_before", "label_after"};
    for (std::size_t i = 1; i < s.segments.size(); ++i) {
      const auto& a = s.segments[i - 1];
      const auto& b = s.segments[i];
      if (*merge_same_label && a.label == b.label && a.end == b.start) continue;
      const double time = s.sample_rate > 0 ? double(b.start) / s.sample_rate : double(b.start);
      t.rows.push_back({static_cast<std::int64_t>(b.start), time, s.labels[a.label], s.labels[b.label]});
    }
    ctx.record("change_points", static_cast<std::int64_t>(t.rows.size()));
    table.set(std::move(t));
  }
};

}  // namespace

void register_decode_nodes(PluginRegistrar& r) {
  r.add_node<Decode>();
  r.add_node<Marginals>();
  r.add_node<ChangePointsNode>();
}

}  // namespace gemflow::semicrf
