#pragma once
// Per-sample label scores: what a sequence model's emission stage gives its decoder.
#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include "gemflow/types/matrix.hpp"

namespace gemflow {

/// Emission scores of C labels at T samples: `scores(t, c)` (a T × C row-major Matrix) is the
/// log-potential of label c at sample t — natural log, unnormalised, higher is more likely; a
/// probability model gives log-probabilities. −∞ means the label is impossible at that sample;
/// NaN and +∞ are refused. `labels[c]` names label c (C distinct, non-empty names). Sample t is
/// sample t of the Signal the scores were computed from; `sample_rate` (Hz) is copied from a
/// regular signal, 0 when unknown or irregular.
struct Scores {
  Matrix<double> scores;  ///< T × C
  std::vector<std::string> labels;
  double sample_rate = 0.0;

  [[nodiscard]] std::size_t length() const noexcept { return scores.rows(); }   ///< T
  [[nodiscard]] std::size_t classes() const noexcept { return scores.cols(); }  ///< C
  /// nullopt when the invariants above hold, else the first broken one.
  [[nodiscard]] std::optional<std::string> validate() const;
};

}  // namespace gemflow
