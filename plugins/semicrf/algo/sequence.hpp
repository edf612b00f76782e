#pragma once
// One sequence of a batch as the recurrences read it (internal to algo/).
#include <cmath>
#include <cstdint>
#include <functional>
#include <limits>
#include <vector>

#include "gemflow/semicrf/semicrf.hpp"

namespace gemflow::semicrf::detail {

/// Streaming log Σ exp of values added one at a time, in the order added (deterministic).
class LogSum {
 public:
  void add(double v) {
    if (v == -std::numeric_limits<double>::infinity()) return;
    if (v <= max_) {
      sum_ += std::exp(v - max_);
    } else {
      sum_ = sum_ * std::exp(max_ - v) + 1.0;
      max_ = v;
    }
  }
  [[nodiscard]] double value() const {
    return sum_ == 0.0 ? -std::numeric_limits<double>::infinity() : max_ + std::log(sum_);
  }

 private:
  double max_ = -std::numeric_limits<double>::infinity();
  double sum_ = 0.0;
};

void validate(const Model& m, const Batch& x);
std::size_t interval(std::size_t T, std::size_t K, const Options& o);
std::size_t working_bytes(const Model& m, std::size_t T, const Options& o, bool backward);
/// MemoryError when the working memory plus `extra_per_row` bytes per (sample, label) of
/// output exceed o.memory_limit.
void require(const Model& m, const Batch& x, const Options& o, bool backward, std::size_t extra_per_row);

/// The prefix sums and potentials of one sequence.
struct Sequence {
  /// Where the ring row of position s is: data + (s % modulus)·C (a ring), or, with modulus 0,
  /// data + (s − base)·C (a block buffer).
  struct RowAt {
    const double* data;
    std::size_t modulus, base, C;
    const double* operator()(std::size_t s) const { return data + (modulus ? s % modulus : s - base) * C; }
  };
  Sequence(const Model& m, const Batch& x, std::size_t b, std::size_t offset, const Options& o);

  /// ψ without the transition term: segment [t−k, t) of label c.
  [[nodiscard]] double psi0(std::size_t t, std::size_t k, std::size_t c) const;
  [[nodiscard]] double trans(std::size_t k, std::size_t cp, std::size_t c) const {
    return model.transitions[trans_index(k, cp, c)];
  }
  /// Index of Tr[(k,) c', c] in Model::transitions (either shape).
  [[nodiscard]] std::size_t trans_index(std::size_t k, std::size_t cp, std::size_t c) const {
    return model.transitions.size() == C * C ? cp * C + c : ((k - 1) * C + cp) * C + c;
  }
  [[nodiscard]] double init(std::size_t c) const;
  /// in(s, ·) from α(s, ·) (factored recurrence).
  void incoming(const double* alpha, double* in) const;
  /// α(t, ·) from the ring rows of t−K..t−1 (`row(s)`: in(s, ·) factored, α(s, ·) general).
  void alpha_step(std::size_t t, const RowAt& row, double* alpha) const;

  std::size_t C, K, T;
  const Model& model;
  bool general, reconstruct;
  const std::function<void(double)>* poll = nullptr;  ///< Options::poll when set
  /// Options::poll every 64 positions (`done` of `of`).
  void tick(std::size_t done, std::size_t of) const {
    if (poll && done % 64 == 0 && of > 0) (*poll)(static_cast<double>(done) / static_cast<double>(of));
  }
  const double* start = nullptr;
  const double* end = nullptr;
  const SegmentScore* segment = nullptr;
  std::size_t index = 0;  ///< b, for `segment`
  std::vector<double> nu, S;
  std::vector<std::uint32_t> ninf;
  std::vector<std::size_t> finite_count;  ///< per label (centring modes other than none)
};

}  // namespace gemflow::semicrf::detail
