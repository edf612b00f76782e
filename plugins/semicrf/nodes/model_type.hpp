#pragma once
// The semicrf.Model data type: a fitted semi-CRF with Gaussian emissions, and helpers shared by
// the nodes.
#include <algorithm>
#include <functional>
#include <string>
#include <vector>

#include <gemflow/data.hpp>
#include <gemflow/error.hpp>
#include <gemflow/memory.hpp>
#include <gemflow/node.hpp>
#include <gemflow/serialize.hpp>
#include <gemflow/types.hpp>

#include "gemflow/semicrf/fit.hpp"

namespace gemflow::semicrf {

/// A semi-CRF model as it travels between nodes: the potentials (semicrf.hpp), the centring the
/// recurrences apply, the label names and, when it models a signal, the Gaussian of each label
/// (emissions.hpp; `gaussians.labels == 0` when it has none).
struct CrfModel {
  GaussianSemiCrf model;
  Centring centring = Centring::none;
  std::vector<std::string> labels;  ///< C names
};

/// The semi-CRF options of a node: the model's centring, the memory left on this host.
inline Options crf_options(const CrfModel& m) {
  Options o;
  o.centring = m.centring;
  if (auto avail = available_host_memory()) o.memory_limit = *avail;
  return o;
}

/// Emission scores of `s` checked against the model (same labels), as a Batch of one sequence.
inline Batch one_sequence(const Scores& s, const CrfModel& m) {
  if (s.classes() != m.model.crf.labels)
    throw InputError("input 'scores' has " + std::to_string(s.classes()) + " labels, the model " +
                     std::to_string(m.model.crf.labels));
  if (auto why = s.validate()) throw InputError("input 'scores': " + *why);
  Batch b;
  b.emissions = s.scores.data();
  b.lengths = {s.length()};
  return b;
}

/// Runs `f`, turning the algorithm's errors into node errors.
/// Options::poll for a node: its progress from `from` to `to` over `passes` recurrence passes
/// (a pass starts again at 0), with `message`, and its cancellation checked, every 64 positions
/// (a pass over a long signal takes seconds).
inline std::function<void(double)> node_poll(NodeContext& ctx, double from, double to, int passes,
                                             std::string message) {
  return [&ctx, from, to, passes, message = std::move(message), pass = 0, last = 0.0, shown = from](double f) mutable {
    if (f < last && pass + 1 < passes) ++pass;
    last = f;
    shown = std::max(shown, from + (to - from) * (pass + f) / passes);
    ctx.progress(shown, message);
    ctx.throw_if_cancelled();
  };
}

template <class F>
auto run_algo(F&& f) {
  try {
    return f();
  } catch (const MemoryError& e) {
    throw OutOfMemory(e.what());
  } catch (const std::invalid_argument& e) {
    throw InputError(e.what());
  }
}

}  // namespace gemflow::semicrf

template <>
struct gemflow::DataType<gemflow::semicrf::CrfModel> {
  static constexpr std::string_view name = "semicrf.Model";
  static constexpr std::string_view doc =
      "A semi-Markov CRF: C labels, maximum duration K, transitions, duration biases, initial scores (natural-log "
      "potentials), centring, and per-label Gaussians (mean, variance per channel) when fitted to a signal";
  static std::string summary(const gemflow::semicrf::CrfModel& m) {
    std::string s = std::to_string(m.model.crf.labels) + " labels, K = " + std::to_string(m.model.crf.max_duration);
    if (m.model.gaussians.labels > 0) s += ", Gaussians over " + std::to_string(m.model.gaussians.dims) + " channels";
    return s;
  }
};

/// The result cache's encoding of a model (semicrf.fit, the slowest node of a segmentation, ran on
/// every run without one). Reading checks every size against C, K and D: a damaged entry is a
/// miss, never a model the recurrences would index out of bounds.
template <>
struct gemflow::Serial<gemflow::semicrf::CrfModel> {
  static constexpr std::uint32_t version = 1;
  static void write(BinaryWriter& w, const gemflow::semicrf::CrfModel& m) {
    w.size(m.model.crf.labels);
    w.size(m.model.crf.max_duration);
    w.block(m.model.crf.transitions);
    w.block(m.model.crf.duration_bias);
    w.block(m.model.crf.initial);
    w.size(m.model.gaussians.labels);
    w.size(m.model.gaussians.dims);
    w.block(m.model.gaussians.mean);
    w.block(m.model.gaussians.variance);
    w.put(m.model.gaussians.outlier);
    w.put<std::uint8_t>(static_cast<std::uint8_t>(m.centring));
    w.strings(m.labels);
  }
  static gemflow::semicrf::CrfModel read(BinaryReader& r) {
    gemflow::semicrf::CrfModel m;
    auto& crf = m.model.crf;
    auto& g = m.model.gaussians;
    crf.labels = r.size("labels", 0);
    crf.max_duration = r.size("max_duration", 0);
    crf.transitions = r.block<double>("transitions");
    crf.duration_bias = r.block<double>("duration biases");
    crf.initial = r.block<double>("initial scores");
    g.labels = r.size("Gaussian labels", 0);
    g.dims = r.size("Gaussian channels", 0);
    g.mean = r.block<double>("Gaussian means");
    g.variance = r.block<double>("Gaussian variances");
    g.outlier = r.get<double>("outlier probability");
    const auto centring = r.get<std::uint8_t>("centring");
    m.labels = r.strings("label names");
    const std::size_t C = crf.labels, K = crf.max_duration;
    const auto bad = [](const std::string& what) { throw SerialError("corrupt semicrf.Model: " + what); };
    if (C == 0 || K == 0 || C > (std::size_t{1} << 20) || K > (std::size_t{1} << 40) / C) bad("C or K out of range");
    if (crf.transitions.size() != C * C && crf.transitions.size() != K * C * C) bad("transitions");
    if (crf.duration_bias.size() != K * C) bad("duration biases");
    if (!crf.initial.empty() && crf.initial.size() != C) bad("initial scores");
    if (g.labels != 0 && g.labels != C) bad("Gaussian labels");
    if (g.dims > (std::size_t{1} << 20) || g.mean.size() != g.labels * g.dims || g.variance.size() != g.mean.size())
      bad("Gaussians");
    if (centring > static_cast<std::uint8_t>(gemflow::semicrf::Centring::reconstruct)) bad("centring");
    m.centring = static_cast<gemflow::semicrf::Centring>(centring);
    if (m.labels.size() != C) bad("label names");
    return m;
  }
};
