#pragma once
// Angle sums in the working precision (internal to the circlepack algo library); formulas in
// gemflow/circlepack/pack.hpp.
#include <algorithm>
#include <cmath>

#include "gemflow/circlepack/complex.hpp"

namespace gemflow::circlepack::detail {

/// sin²(α/2) factor of neighbour label a seen from label v. Euclidean: a/(v+a) written as
/// 1/(1 + v/a), exact 1 for a = ∞ (a line); hyperbolic s-radii: s_v(1−s_a²)/(1−s_v²s_a²), s_v
/// for a horocycle (s_a = 0).
template <class T>
inline T factor(Geometry g, T v, T a) {
  if (g == Geometry::euclidean) return T(1) / (T(1) + v / a);
  return v * (T(1) - a * a) / (T(1) - v * v * a * a);
}

/// Angle sum at v (not ideal) for labels x.
template <class T>
inline T angle_sum(const Complex& K, Geometry g, const T* x, Index v) {
  const std::uint32_t o = K.offset[v], k = K.offset[v + 1] - o, p = K.boundary[v] ? k - 1 : k;
  const T xv = x[v];
  T f_prev = factor(g, xv, x[K.flower[o]]);
  T sum = 0;
  for (std::uint32_t j = 0; j < p; ++j) {
    const std::uint32_t nxt = j + 1 < k ? j + 1 : 0;
    const T f_next = factor(g, xv, x[K.flower[o + nxt]]);
    const double fixed = K.fixed_petal[o + j];
    if (!std::isnan(fixed)) {
      sum += static_cast<T>(fixed);
    } else {
      sum += T(2) * std::asin(std::sqrt(std::min(f_prev * f_next, T(1))));
    }
    f_prev = f_next;
  }
  return sum;
}

/// Angle at vertex with label v of the face (v, a, b), a and b not both ideal.
template <class T>
inline T face_angle(Geometry g, T v, T a, T b) {
  return T(2) * std::asin(std::sqrt(std::min(factor(g, v, a) * factor(g, v, b), T(1))));
}

}  // namespace gemflow::circlepack::detail
