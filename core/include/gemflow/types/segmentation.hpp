#pragma once
// A labelled segmentation of a sequence of T samples (the output of a segment decoder).
#include <cstddef>
#include <optional>
#include <string>
#include <vector>

namespace gemflow {

/// One segment: samples [start, end) (half-open, in samples, so end − start is its duration),
/// `label` an index into Segmentation::labels, `score` the segment's score as the producing
/// model defines it (a semi-Markov CRF: the sum of its emission, duration and transition
/// log-potentials); not NaN.
struct Segment {
  std::size_t start = 0;
  std::size_t end = 0;
  std::size_t label = 0;
  double score = 0.0;
  [[nodiscard]] bool operator==(const Segment&) const = default;
};

/// Segments of a sequence of `length` samples. Invariants (validate()): every segment is
/// non-empty (start < end) and within [0, length); segments are sorted by start and do not
/// overlap (each starts at or after the previous one's end); gaps are allowed (samples no
/// segment covers: complete() says whether there are none); labels are indices into `labels`
/// (distinct, non-empty names). `sample_rate` (Hz) converts samples to seconds, 0 when unknown.
struct Segmentation {
  std::size_t length = 0;  ///< T
  std::vector<std::string> labels;
  std::vector<Segment> segments;
  double sample_rate = 0.0;

  /// True when the segments cover [0, length) without gaps (valid segmentations only).
  [[nodiscard]] bool complete() const noexcept;
  /// nullopt when the invariants above hold, else the first broken one ("segment 3 [40, 38) is empty").
  [[nodiscard]] std::optional<std::string> validate() const;
};

}  // namespace gemflow
