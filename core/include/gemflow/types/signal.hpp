#pragma once
// Sampled multichannel signals (sensor traces, features): the input of sequence models.
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "gemflow/types/matrix.hpp"

namespace gemflow {

/// T samples of D channels: `samples(t, d)` is channel d at sample t (a T × D row-major
/// Matrix, so one sample's channels are contiguous).
///
/// Time axis: sample t is at `start_time + t / sample_rate` seconds when `times` is empty (a
/// regular signal, sample_rate in Hz, > 0); otherwise `times[t]` seconds (an irregular signal:
/// T finite values, strictly increasing; sample_rate is then ignored and may be 0).
/// `channels[d]` names channel d and `units[d]` gives its unit ("mV", "m/s²", "" when
/// dimensionless); both have D entries.
///
/// Missing values: `valid` is empty (every value observed) or holds T·D flags in the layout of
/// `samples` (valid[t·D + d] = 1: channel d observed at sample t; 0: missing). Samples are
/// finite everywhere, a missing one included: it holds a placeholder (io.read_signal fills it by
/// linear interpolation) so that consumers that ignore the mask still see a finite signal;
/// models that honour the mask marginalise it out (semicrf: it contributes no log-likelihood).
struct Signal {
  Matrix<double> samples;     ///< T × D
  double sample_rate = 1.0;   ///< Hz (regular signals)
  double start_time = 0.0;    ///< s, time of sample 0 (regular signals)
  std::vector<double> times;  ///< s, one per sample (irregular signals); empty when regular
  std::vector<std::string> channels;
  std::vector<std::string> units;
  std::vector<std::uint8_t> valid;  ///< T·D flags (1 observed, 0 missing), or empty: all observed

  [[nodiscard]] std::size_t length() const noexcept { return samples.rows(); }  ///< T
  [[nodiscard]] std::size_t dims() const noexcept { return samples.cols(); }    ///< D
  [[nodiscard]] bool regular() const noexcept { return times.empty(); }
  /// Whether channel d was observed at sample t.
  [[nodiscard]] bool observed(std::size_t t, std::size_t d) const noexcept {
    return valid.empty() || valid[t * dims() + d] != 0;
  }
  /// Number of missing values (0 when `valid` is empty).
  [[nodiscard]] std::size_t missing() const noexcept;
  /// Time of sample t, s.
  [[nodiscard]] double time(std::size_t t) const noexcept {
    return times.empty() ? start_time + static_cast<double>(t) / sample_rate : times[t];
  }
  /// nullopt when the invariants above hold, else the first broken one.
  [[nodiscard]] std::optional<std::string> validate() const;
};

}  // namespace gemflow
