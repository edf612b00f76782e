#pragma once
// Shared pieces of the smoothing implementations (algo/smoothing*.cpp); not installed.
#include <cstddef>
#include <span>
#include <stdexcept>

#include "gemflow/distgeom/smoothing.hpp"

namespace gemflow::distgeom::detail {

/// Throws std::invalid_argument with BoundsDefect::message() when the input is invalid.
template <class T>
void require_valid_bounds(std::span<const T> lower, std::span<const T> upper, std::size_t n, double tolerance) {
  if (!(tolerance >= 0)) throw std::invalid_argument("smoothing: tolerance must be >= 0 Å");
  if (auto d = check_bounds(lower, upper, n, tolerance)) throw std::invalid_argument(d->message());
}

/// Builds the report from the untouched input and the smoothed rows: `get_row(i)` returns
/// {pointer to row i of L', pointer to row i of U'} (n values of any floating type, compared
/// after rounding to T: what the caller will receive). The first inconsistent pair is
/// explained from the input.
template <class T, class GetRow>
SmoothingReport finish_report(std::span<const T> lower_in, std::span<const T> upper_in, std::size_t n, double tolerance,
                              GetRow get_row) {
  SmoothingReport r;
  for (std::size_t i = 0; i < n; ++i) {
    const auto [lrow, urow] = get_row(i);
    for (std::size_t j = i + 1; j < n; ++j) {
      const double l = static_cast<T>(lrow[j]), u = static_cast<T>(urow[j]);
      if (l > u + tolerance) {
        if (r.consistent) {
          r.consistent = false;
          r.i = i;
          r.j = j;
          r.lower = l;
          r.upper = u;
        }
        ++r.inconsistent_pairs;
      }
      if (l != static_cast<double>(lower_in[i * n + j]) || u != static_cast<double>(upper_in[i * n + j]))
        ++r.changed_pairs;
    }
  }
  if (!r.consistent) r.path = explain_inconsistency(lower_in, upper_in, n, r.i, r.j);
  return r;
}

}  // namespace gemflow::distgeom::detail
