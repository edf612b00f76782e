// Invariants of the sequence types: Signal, Scores, Segmentation.
#include <cmath>
#include <set>

#include <fmt/format.h>

#include "gemflow/types.hpp"

namespace gemflow {

namespace {
/// Label names: `count` of them, non-empty and distinct.
std::optional<std::string> check_labels(const std::vector<std::string>& labels, std::size_t count,
                                        std::string_view what) {
  if (labels.size() != count) return fmt::format("{} {} names for {} {}s", labels.size(), what, count, what);
  std::set<std::string_view> seen;
  for (std::size_t i = 0; i < labels.size(); ++i) {
    if (labels[i].empty()) return fmt::format("{} {} has an empty name", what, i);
    if (!seen.insert(labels[i]).second) return fmt::format("{} name '{}' is given twice", what, labels[i]);
  }
  return std::nullopt;
}
}  // namespace

std::optional<std::string> Signal::validate() const {
  const std::size_t n = length(), d = dims();
  if (channels.size() != d) return fmt::format("{} channel names for {} channels", channels.size(), d);
  if (units.size() != d) return fmt::format("{} units for {} channels", units.size(), d);
  if (times.empty()) {
    if (!std::isfinite(sample_rate) || sample_rate <= 0.0)
      return fmt::format("sample rate {} Hz is not a positive number", sample_rate);
    if (!std::isfinite(start_time)) return fmt::format("start time {} s is not finite", start_time);
  } else {
    if (times.size() != n) return fmt::format("{} times for {} samples", times.size(), n);
    for (std::size_t t = 0; t < n; ++t) {
      if (!std::isfinite(times[t])) return fmt::format("time of sample {} is {}", t, times[t]);
      if (t > 0 && !(times[t] > times[t - 1]))
        return fmt::format("times are not increasing: sample {} at {} s, sample {} at {} s", t - 1, times[t - 1], t,
                           times[t]);
    }
  }
  for (std::size_t t = 0; t < n; ++t)
    for (std::size_t c = 0; c < d; ++c)
      if (!std::isfinite(samples(t, c)))
        return fmt::format("sample {} of channel '{}' is {}{}", t, channels[c], samples(t, c),
                           observed(t, c) ? "" : " (a missing value holds a finite placeholder)");
  if (!valid.empty()) {
    if (valid.size() != n * d) return fmt::format("{} validity flags for {} × {} samples", valid.size(), n, d);
    for (std::size_t i = 0; i < valid.size(); ++i)
      if (valid[i] > 1)
        return fmt::format("validity flag of sample {}, channel '{}' is {} (1 observed, 0 missing)", i / d,
                           channels[i % d], int(valid[i]));
  }
  return std::nullopt;
}

std::size_t Signal::missing() const noexcept {
  std::size_t n = 0;
  for (const auto v : valid) n += v == 0;
  return n;
}

std::optional<std::string> Scores::validate() const {
  if (auto why = check_labels(labels, classes(), "label")) return why;
  if (!std::isfinite(sample_rate) || sample_rate < 0.0)
    return fmt::format("sample rate {} Hz is neither positive nor 0 (unknown)", sample_rate);
  for (std::size_t t = 0; t < length(); ++t)
    for (std::size_t c = 0; c < classes(); ++c) {
      const double v = scores(t, c);
      if (std::isnan(v) || v == HUGE_VAL)
        return fmt::format(
            "score of label '{}' at sample {} is {} (−inf marks an impossible label; NaN and "
            "+inf are refused)",
            labels[c], t, v);
    }
  return std::nullopt;
}

bool Segmentation::complete() const noexcept {
  std::size_t at = 0;
  for (const auto& s : segments) {
    if (s.start != at) return false;
    at = s.end;
  }
  return at == length;
}

std::optional<std::string> Segmentation::validate() const {
  if (auto why = check_labels(labels, labels.size(), "label")) return why;
  if (!std::isfinite(sample_rate) || sample_rate < 0.0)
    return fmt::format("sample rate {} Hz is neither positive nor 0 (unknown)", sample_rate);
  for (std::size_t k = 0; k < segments.size(); ++k) {
    const Segment& s = segments[k];
    if (s.start >= s.end) return fmt::format("segment {} [{}, {}) is empty", k, s.start, s.end);
    if (s.end > length) return fmt::format("segment {} [{}, {}) ends past the {} samples", k, s.start, s.end, length);
    if (s.label >= labels.size())
      return fmt::format("segment {} [{}, {}) has label {}, but there are {} labels", k, s.start, s.end, s.label,
                         labels.size());
    if (std::isnan(s.score)) return fmt::format("segment {} [{}, {}) has a NaN score", k, s.start, s.end);
    if (k > 0 && s.start < segments[k - 1].end)
      return fmt::format(
          "segment {} [{}, {}) starts before segment {} [{}, {}) ends (segments are sorted and do not "
          "overlap)",
          k, s.start, s.end, k - 1, segments[k - 1].start, segments[k - 1].end);
  }
  return std::nullopt;
}

}  // namespace gemflow
