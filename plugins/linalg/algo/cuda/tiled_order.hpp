#pragma once
// The task order of the persistent tiled Cholesky (potrf_tiled_kernel, tiled_kernels.cuh), host
// code apart from the kernels so that a host-only test checks that it is topological.
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <vector>

namespace gemflow::linalg::cuda::detail {

/// The slope of the task order the library uses (tiled_task_order). 1/64 since the tensor-copy
/// update loop, which left the chain shorter than 1/16 does (H200: docs/performance.md, "Tensor
/// copies for the tiled kernel's operands, and the task order").
inline constexpr double kTiledSlope = 1.0 / 64;

/// Tasks for tt tile rows: one per tile of the lower triangle.
__host__ __device__ inline std::int64_t tiled_task_count(std::int64_t tt) { return tt * (tt + 1) / 2; }

/// The order in which CTAs take the tasks: tile (i, j) by key j + slope·(i − j) (ties: column,
/// then row), a wavefront that takes the next diagonal tiles before the far rows of the current
/// column. Any slope in [0, 1) makes it a topological order of the dependencies, which is all the
/// kernel needs to be deadlock-free (a gpu test runs it on one CTA; the host-only test
/// TiledTaskOrder.IsTopological checks the order). Task (i, j) waits for
/// the flags of tiles (i, k) and (j, k), k < j, and for (j, j); each is set by a task of smaller
/// key: tile (x, k) with x ≥ k + 2 by its own task, key k + s(x − k) < j + s(i − j) when s < 1;
/// tile (k + 1, k) and (k, k) by the diagonal task of key k + 1 resp. k, ≤ j. The diagonal task
/// j also waits for task (j, j − 1) (its updates), key j − 1 + s < j. (A sub-diagonal task taken
/// before the diagonal task just above it would wait for that task's tile (j, j − 1): one CTA
/// then deadlocks; review, 2026-11-30.)
inline std::vector<int2> tiled_task_order(std::int64_t tt, double slope) {
  std::vector<int2> order;
  order.reserve(static_cast<std::size_t>(tiled_task_count(tt)));
  for (std::int64_t j = 0; j < tt; ++j)
    for (std::int64_t i = j; i < tt; ++i) order.push_back(make_int2(static_cast<int>(i), static_cast<int>(j)));
  slope = std::clamp(slope, 0.0, 0.5);
  const auto key = [slope](int2 t) { return t.y + slope * (t.x - t.y); };
  std::stable_sort(order.begin(), order.end(),
                   [&](int2 x, int2 y) { return key(x) < key(y); });  // stable: equal keys keep column-major order
  return order;
}

}  // namespace gemflow::linalg::cuda::detail
