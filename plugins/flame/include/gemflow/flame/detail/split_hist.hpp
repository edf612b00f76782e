#pragma once
// The CUDA histogram's split accumulation (render_cuda.hpp): each u64 fixed-point channel held
// as a low word (u32, the array the chaos game hammers: 16 B per cell, 33 MB at 1080p, so that
// it stays in a 50 MB L2) and a high word (u32, a separate array touched once per wrap of the
// low word). An add of v < 2³² is one atomicAdd on the low word; when its returned old value
// shows the sum wrapped (old + v mod 2³² < old) it adds 1 to the high word. Exact: the adds to a
// low word are serialised, each wraps at most once, and the high word counts the wraps, so
// hi·2³² + lo is the u64 sum whatever the order — the same bytes as a u64 histogram.
#include <cstddef>
#include <cstdint>

#include "gemflow/flame/detail/core.hpp"

namespace gemflow::flame::detail {

/// True when adding v to a low word that held `old` wrapped past 2³².
GF_FLAME_HD inline bool split_wrapped(unsigned old, unsigned v) { return static_cast<unsigned>(old + v) < old; }

/// The u64 value of a split channel.
GF_FLAME_HD inline unsigned long long split_value(unsigned lo, unsigned hi) {
  return (static_cast<unsigned long long>(hi) << 32) | lo;
}

/// Read-only view of a split histogram (4 channels per cell in each array) indexed as the u64
/// histogram: view[cell·4 + channel].
struct SplitHistView {
  const unsigned* lo;
  const unsigned* hi;
  GF_FLAME_HD unsigned long long operator[](std::size_t i) const { return split_value(lo[i], hi[i]); }
};

}  // namespace gemflow::flame::detail
