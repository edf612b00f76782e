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
