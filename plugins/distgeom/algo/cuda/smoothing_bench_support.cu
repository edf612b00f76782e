// Benchmark-only kernels (see smoothing_bench_support.hpp).
#include <algorithm>
#include <cmath>
#include <vector>

#include <gemflow/cuda/buffer.hpp>
#include <gemflow/cuda/check.hpp>
#include <gemflow/cuda/timing.hpp>

#include "smoothing_bench_support.hpp"
#include "smoothing_kernels.cuh"

namespace gemflow::distgeom::cuda::bench {
namespace {

using detail::idx_t;

__device__ __forceinline__ double uniform(std::uint64_t seed, std::uint64_t a, std::uint64_t b) {
  std::uint64_t x = seed ^ (a * 0x9E3779B97F4A7C15ull) ^ (b * 0xC2B2AE3D27D4EB4Full);
  x ^= x >> 33;
  x *= 0xff51afd7ed558ccdull;
  x ^= x >> 33;
  x *= 0xc4ceb9fe1a85ec53ull;
  x ^= x >> 33;
  return static_cast<double>(x >> 11) * 0x1.0p-53;
}

template <class T>
__global__ void fill_kernel(T* lower, T* upper, idx_t n, idx_t total, std::uint64_t seed) {
  const idx_t nn = n * n;
  const double box = 2.0 * cbrt(static_cast<double>(n)) + 4.0, diag = box * sqrt(3.0);
  for (idx_t e = blockIdx.x * static_cast<idx_t>(blockDim.x) + threadIdx.x; e < total;
       e += static_cast<idx_t>(gridDim.x) * blockDim.x) {
    const idx_t b = e / nn, r = e - b * nn;
    idx_t i = r / n, j = r - i * n;
    if (i > j) {
      const idx_t t = i;
      i = j;
      j = t;
    }
    if (i == j) {
      lower[e] = T(0);
      upper[e] = T(0);
      continue;
    }
    double d2 = 0;
    for (int c = 0; c < 3; ++c) {
      const double x = box * (uniform(seed, b * n + i, c) - uniform(seed, b * n + j, c));
      d2 += x * x;
    }
    const double d = sqrt(d2);
    const std::uint64_t pair = static_cast<std::uint64_t>(i) * n + j;
    double lo, up;
    if (uniform(seed ^ 0x5555, b, pair) < 0.3) {
      lo = d * (1.0 - 0.1 * uniform(seed ^ 0x1111, b, pair));
      up = d * (1.0 + 0.1 * uniform(seed ^ 0x2222, b, pair));
    } else {
      lo = fmin(d, 2.5);
      up = diag;
    }
    lower[e] = static_cast<T>(lo);
    upper[e] = static_cast<T>(up);
  }
}

template <class T>
__global__ void sweep_kernel(const T* __restrict__ ls, const T* __restrict__ us, T* __restrict__ ld, T* __restrict__ ud,
                             int n, int k) {
  const int j = blockIdx.x * blockDim.x + threadIdx.x, i = blockIdx.y;
  if (j >= n) return;
  const idx_t N = n;
  const T lkk = ls[k * N + k];
  const T uik = us[i * N + k];
  const T lik = detail::vmax(ls[i * N + k], lkk - uik);
  const T ukj = us[k * N + j], lkj = ls[k * N + j];
  const idx_t e = i * N + j;
  ud[e] = detail::vmin(us[e], uik + ukj);
  ld[e] = detail::vmax(ls[e], detail::vmax(lkj - uik, lik - ukj));
}

template <class T>
__global__ void add_min_kernel(T* out, T c0, T y, int iters) {
  T x[16], c[16];
#pragma unroll
  for (int q = 0; q < 16; ++q) {
    x[q] = c0 * T(threadIdx.x + q);
    c[q] = c0 * T(q + 1);
  }
  for (int it = 0; it < iters; ++it) {
#pragma unroll
    for (int q = 0; q < 16; ++q) x[q] = detail::vmin(x[q] + c[q], y);
  }
  T s = 0;
#pragma unroll
  for (int q = 0; q < 16; ++q) s += x[q];
  out[blockIdx.x * blockDim.x + threadIdx.x] = s;
}

template <class T>
void fill_impl(T* lower, T* upper, std::size_t n, std::size_t batch, std::uint64_t seed, Stream s) {
  const idx_t total = static_cast<idx_t>(n) * n * batch;
  if (total == 0) return;
  const int grid = static_cast<int>(std::min<idx_t>((total + 255) / 256, 65536));
  fill_kernel<T><<<grid, 256, 0, s>>>(lower, upper, static_cast<idx_t>(n), total, seed);
  GF_CUDA_CHECK_LAUNCH("fill_kernel");
}

template <class T>
bool sweep_impl(T* l, T* u, T* l2, T* u2, std::size_t n, std::size_t pivots, Stream s) {
  const dim3 grid(static_cast<unsigned>((n + 255) / 256), static_cast<unsigned>(n));
  bool flipped = false;
  for (std::size_t k = 0; k < pivots; ++k) {
    if (!flipped) sweep_kernel<T><<<grid, 256, 0, s>>>(l, u, l2, u2, static_cast<int>(n), static_cast<int>(k));
    else sweep_kernel<T><<<grid, 256, 0, s>>>(l2, u2, l, u, static_cast<int>(n), static_cast<int>(k));
    GF_CUDA_CHECK_LAUNCH("sweep_kernel");
    flipped = !flipped;
  }
  return flipped;
}

template <class T>
double ceiling_impl(Stream s) {
  int device = 0, sms = 0;
  GF_CUDA_TRY(cudaGetDevice(&device));
  GF_CUDA_TRY(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
  const int blocks = sms * 8, threads = 256, iters = 1 << 14;
  ::gemflow::cuda::DeviceBuffer<T> out(std::size_t(blocks) * threads);
  ::gemflow::cuda::EventTimer timer;
  std::vector<double> rates;
  for (int rep = 0; rep < 6; ++rep) {
    timer.start(s);
    add_min_kernel<T><<<blocks, threads, 0, s>>>(out.data(), T(1e-3), T(1e30), iters);
    GF_CUDA_CHECK_LAUNCH("add_min_kernel");
    const float ms = timer.stop_ms(s);
    if (rep > 0) rates.push_back(double(blocks) * threads * 16.0 * iters / (ms * 1e-3));
  }
  std::sort(rates.begin(), rates.end());
  return rates[rates.size() / 2];
}

}  // namespace

void fill_random_bounds(float* l, float* u, std::size_t n, std::size_t batch, std::uint64_t seed, Stream s) {
  fill_impl(l, u, n, batch, seed, s);
}
void fill_random_bounds(double* l, double* u, std::size_t n, std::size_t batch, std::uint64_t seed, Stream s) {
  fill_impl(l, u, n, batch, seed, s);
}
bool per_pivot_sweep(float* l, float* u, float* l2, float* u2, std::size_t n, std::size_t p, Stream s) {
  return sweep_impl(l, u, l2, u2, n, p, s);
}
bool per_pivot_sweep(double* l, double* u, double* l2, double* u2, std::size_t n, std::size_t p, Stream s) {
  return sweep_impl(l, u, l2, u2, n, p, s);
}
double add_min_ceiling(Precision p, Stream s) {
  return p == Precision::fp32 ? ceiling_impl<float>(s) : ceiling_impl<double>(s);
}

}  // namespace gemflow::distgeom::cuda::bench
