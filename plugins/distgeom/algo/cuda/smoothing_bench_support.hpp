#pragma once
// Benchmark-only kernels of the GPU triangle smoothing (bench/smoothing_gpu.cpp). They live in
// algo/cuda because bench/*.cpp is compiled as C++; nothing in the product calls them.
#include <cstddef>
#include <cstdint>

#include "gemflow/distgeom/smoothing_cuda.hpp"

namespace gemflow::distgeom::cuda::bench {

/// `batch` random, consistent bound matrices (n×n each, one after another) on the device:
/// atoms uniform in a cube of edge 2·n^(1/3)+4 Å, 30% of pairs L = d(1−0.1r), U = d(1+0.1r'),
/// the rest L = min(d, 2.5 Å), U = the cube's diagonal. Asynchronous on `stream`.
void fill_random_bounds(float* lower, float* upper, std::size_t n, std::size_t batch, std::uint64_t seed,
                        Stream stream);
void fill_random_bounds(double* lower, double* upper, std::size_t n, std::size_t batch, std::uint64_t seed,
                        Stream stream);

/// Baseline: the per-pivot full-matrix sweep (GPU Gems 2, ch. 43): one kernel per pivot k
/// over all n² pairs, ping-pong between (lower, upper) and (lower2, upper2), pivots
/// [0, pivots). Same update as the closure. Returns true when the result ended in lower2/upper2.
bool per_pivot_sweep(float* lower, float* upper, float* lower2, float* upper2, std::size_t n, std::size_t pivots,
                     Stream stream);
bool per_pivot_sweep(double* lower, double* upper, double* lower2, double* upper2, std::size_t n, std::size_t pivots,
                     Stream stream);

/// Register-only add+min microbenchmark: x ← min(x + c, y) in 16 independent chains per
/// thread over the whole device. Returns (add, min) pairs per second (median of 5).
double add_min_ceiling(Precision precision, Stream stream);

}  // namespace gemflow::distgeom::cuda::bench
