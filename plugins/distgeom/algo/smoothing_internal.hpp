#pragma once
// Shared pieces of the smoothing implementations (algo/smoothing*.cpp); not installed.
#include <cstddef>
#include <span>
#include <stdexcept>

#include "gemflow/distgeom/smoothing.hpp"

namespace gemflow::distgeom::detail {

/// Throws std::invalid_argument with BoundsDefect::message() when the input is invalid.
template <class T>
void require_valid_bounds(std::span<const T> lower, std::span<const T> upper, std::size_t n,
                          double tolerance) {
  if (!(tolerance >= 0)) throw std::invalid_argument("smoothing: tolerance must be >= 0 Å");
  if (auto d = check_bounds(lower, upper, n, tolerance)) throw std::invalid_argument(d->message());
}

/// Builds the report from the untouched input and the smoothed values `get(i, j)` →
/// {L'_ij, U'_ij} (as double), explaining the first inconsistent pair from the input.
template <class T, class Get>
SmoothingReport finish_report(std::span<const T> lower_in, std::span<const T> upper_in, std::size_t n,
                              double tolerance, Get get) {
  SmoothingReport r;
  for (std::size_t i = 0; i < n; ++i)
    for (std::size_t j = i + 1; j < n; ++j) {
      const auto [l, u] = get(i, j);
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
  if (!r.consistent) r.path = explain_inconsistency(lower_in, upper_in, n, r.i, r.j);
  return r;
}

}  // namespace gemflow::distgeom::detail
