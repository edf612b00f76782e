// Random symmetric test matrices and probe backward errors (for tests and benchmarks).
#include <cuda_runtime.h>

#include <cmath>
#include <stdexcept>
#include <string>
#include <vector>

#include <gemflow/cuda/buffer.hpp>
#include <gemflow/cuda/check.hpp>
#include <gemflow/linalg/cholesky_cuda.hpp>

namespace gemflow::linalg::cuda {
namespace detail {
namespace {

__device__ __forceinline__ std::uint64_t mix(std::uint64_t x) {  // splitmix64 finaliser
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}
__device__ __forceinline__ double uniform_pm1(std::uint64_t seed, std::int64_t i, std::int64_t j) {
  const std::uint64_t h =
      mix(seed ^ mix(static_cast<std::uint64_t>(i) * 0x100000001b3ull + static_cast<std::uint64_t>(j)));
  return (static_cast<double>(h >> 11) + 0.5) * 0x1.0p-53 * 2.0 - 1.0;
}

template <class T>
__global__ void fill_kernel(T* a, std::int64_t n, std::int64_t lda, double shift, std::uint64_t seed) {
  const std::int64_t i = blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x;
  if (i >= n) return;
  for (std::int64_t j = blockIdx.y; j <= i; j += gridDim.y)
    a[i + j * lda] = static_cast<T>(uniform_pm1(seed, i, j) + (i == j ? shift : 0.0));
}

__global__ void random_vec_kernel(double* v, std::int64_t n, std::uint64_t seed) {
  const std::int64_t i = blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x;
  if (i < n) v[i] = uniform_pm1(seed, i, -1);
}

// y_j = Σ_{i ≥ j} M(i, j) x_i (warp per column): Mᵀx restricted to the lower triangle, diagonal
// included when diag, else strictly below.
template <class T>
__global__ void lower_t_times(const T* m, std::int64_t ld, std::int64_t n, const double* x, double* y, bool diag,
                              bool accumulate) {
  const std::int64_t w = (blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x) / 32;
  const int lane = threadIdx.x % 32;
  if (w >= n) return;
  double s = 0.0;
  for (std::int64_t i = w + (diag ? 0 : 1) + lane; i < n; i += 32) s += static_cast<double>(m[i + w * ld]) * x[i];
  for (int o = 16; o > 0; o >>= 1) s += __shfl_down_sync(0xffffffffu, s, o);
  if (lane == 0) y[w] = accumulate ? y[w] + s : s;
}

// y_i = Σ_{j ≤ i} M(i, j) x_j (thread per row; coalesced over i for each j).
template <class T>
__global__ void lower_times(const T* m, std::int64_t ld, std::int64_t n, const double* x, double* y) {
  const std::int64_t i = blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x;
  if (i >= n) return;
  double s = 0.0;
  for (std::int64_t j = 0; j <= i; ++j) s += static_cast<double>(m[i + j * ld]) * x[j];
  y[i] = s;
}

// per-column Σ over the lower triangle of a² (off-diagonal counted twice)
template <class T>
__global__ void frob_cols(const T* a, std::int64_t ld, std::int64_t n, double* out) {
  const std::int64_t w = (blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x) / 32;
  const int lane = threadIdx.x % 32;
  if (w >= n) return;
  double s = 0.0;
  for (std::int64_t i = w + lane; i < n; i += 32) {
    const double v = static_cast<double>(a[i + w * ld]);
    s += (i == w ? 1.0 : 2.0) * v * v;
  }
  for (int o = 16; o > 0; o >>= 1) s += __shfl_down_sync(0xffffffffu, s, o);
  if (lane == 0) out[w] = s;
}

template <class T>
double probe_impl(const T* a, std::int64_t lda, const T* l, std::int64_t ldl, std::int64_t n, int probes,
                  cudaStream_t s) {
  if (n <= 0) return 0.0;
  ::gemflow::cuda::DeviceBuffer<double> buf(std::size_t(4 * n), s);  // stream-ordered
  double *v = buf.data(), *y = v + n, *z = v + 2 * n, *w = v + 3 * n;
  const unsigned rows = unsigned((n + 255) / 256), warps = unsigned((n * 32 + 255) / 256);
  std::vector<double> hz(n), hw(n), hv(n);
  frob_cols<T><<<warps, 256, 0, s>>>(a, lda, n, z);
  GF_CUDA_CHECK_LAUNCH();
  GF_CUDA_TRY(cudaMemcpyAsync(hz.data(), z, sizeof(double) * n, cudaMemcpyDeviceToHost, s));
  GF_CUDA_TRY(cudaStreamSynchronize(s));
  double fa = 0.0;
  for (double x : hz) fa += x;
  fa = std::sqrt(fa);
  double worst = 0.0;
  for (int p = 0; p < probes; ++p) {
    random_vec_kernel<<<rows, 256, 0, s>>>(v, n, 0x5eedull + 7919ull * p);
    GF_CUDA_CHECK_LAUNCH();
    lower_t_times<T><<<warps, 256, 0, s>>>(l, ldl, n, v, y, true, false);  // y = Lᵀ v
    GF_CUDA_CHECK_LAUNCH();
    lower_times<T><<<rows, 256, 0, s>>>(l, ldl, n, y, z);  // z = L y
    GF_CUDA_CHECK_LAUNCH();
    lower_times<T><<<rows, 256, 0, s>>>(a, lda, n, v, w);  // w = tril(A) v
    GF_CUDA_CHECK_LAUNCH();
    lower_t_times<T><<<warps, 256, 0, s>>>(a, lda, n, v, w, false, true);  // w += strict-tril(A)ᵀ v
    GF_CUDA_CHECK_LAUNCH();
    GF_CUDA_TRY(cudaMemcpyAsync(hz.data(), z, sizeof(double) * n, cudaMemcpyDeviceToHost, s));
    GF_CUDA_TRY(cudaMemcpyAsync(hw.data(), w, sizeof(double) * n, cudaMemcpyDeviceToHost, s));
    GF_CUDA_TRY(cudaMemcpyAsync(hv.data(), v, sizeof(double) * n, cudaMemcpyDeviceToHost, s));
    GF_CUDA_TRY(cudaStreamSynchronize(s));
    double num = 0.0, vn = 0.0;
    for (std::int64_t i = 0; i < n; ++i) {
      num += (hw[i] - hz[i]) * (hw[i] - hz[i]);
      vn += hv[i] * hv[i];
    }
    const double e = std::sqrt(num) / (fa * std::sqrt(vn));
    worst = (e != e || e > worst) ? e : worst;
  }
  buf.deallocate();  // cudaFreeAsync, checked
  GF_CUDA_TRY(cudaStreamSynchronize(s));
  return worst;
}

template <class T>
void fill_impl(T* a, std::int64_t n, std::int64_t lda, double shift, std::uint64_t seed, cudaStream_t s) {
  if (n <= 0) return;
  fill_kernel<T><<<dim3(unsigned((n + 255) / 256), unsigned(std::min<std::int64_t>(n, 4096))), 256, 0, s>>>(
      a, n, lda, shift, seed);
  GF_CUDA_CHECK_LAUNCH();
}

}  // namespace
}  // namespace detail

void fill_random_symmetric(double* a, std::int64_t n, std::int64_t lda, double shift, std::uint64_t seed,
                           Stream stream) {
  detail::fill_impl(a, n, lda, shift, seed, static_cast<cudaStream_t>(stream));
}
void fill_random_symmetric(float* a, std::int64_t n, std::int64_t lda, double shift, std::uint64_t seed,
                           Stream stream) {
  detail::fill_impl(a, n, lda, shift, seed, static_cast<cudaStream_t>(stream));
}
double probe_backward_error(const double* a, std::int64_t lda, const double* l, std::int64_t ldl, std::int64_t n,
                            int probes, Stream stream) {
  return detail::probe_impl(a, lda, l, ldl, n, probes, static_cast<cudaStream_t>(stream));
}
double probe_backward_error(const float* a, std::int64_t lda, const float* l, std::int64_t ldl, std::int64_t n,
                            int probes, Stream stream) {
  return detail::probe_impl(a, lda, l, ldl, n, probes, static_cast<cudaStream_t>(stream));
}

}  // namespace gemflow::linalg::cuda
