// GPU Collins–Stephenson iterations: graph-coloured Gauss–Seidel and Jacobi (see
// gemflow/circlepack/pack_cuda.hpp).
#include <cuda_runtime.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

#include <gemflow/cuda/buffer.hpp>
#include <gemflow/cuda/check.hpp>

#include "gemflow/circlepack/pack_cuda.hpp"

namespace gemflow::circlepack {
namespace cuda {
namespace {

constexpr int kBlock = 256;

/// The flowers and problem on the device (CSR, 32-bit indices).
template <class T>
struct DeviceComplex {
  const std::uint32_t* offset;
  const std::uint32_t* flower;
  const T* fixed;  // per flower entry: the fixed petal angle, NaN when computed
  const std::uint8_t* boundary;
  const T* target;
  bool hyperbolic;
};

template <class T>
__device__ inline T factor(bool hyp, T v, T a) {
  if (!hyp) return T(1) / (T(1) + v / a);  // a = ∞ (a line): 1
  return v * (T(1) - a * a) / (T(1) - v * v * a * a);
}

template <class T>
__device__ T angle_sum(const DeviceComplex<T>& K, const T* x, std::uint32_t v) {
  const std::uint32_t o = K.offset[v], k = K.offset[v + 1] - o, p = K.boundary[v] ? k - 1 : k;
  const T xv = x[v];
  T f_prev = factor(K.hyperbolic, xv, x[K.flower[o]]);
  T sum = 0;
  for (std::uint32_t j = 0; j < p; ++j) {
    const std::uint32_t nxt = j + 1 < k ? j + 1 : 0;
    const T f_next = factor(K.hyperbolic, xv, x[K.flower[o + nxt]]);
    const T fixed = K.fixed[o + j];
    if (!isnan(fixed)) sum += fixed;
    else sum += T(2) * asin(sqrt(fmin(f_prev * f_next, T(1))));
    f_prev = f_next;
  }
  return sum;
}

template <class T>
__device__ T cs_update(bool hyp, T x, T theta, T target, std::uint32_t k) {
  const T inv = T(1) / (T(2) * static_cast<T>(k));
  const T eps = sizeof(T) == 4 ? T(1.1920929e-7) : T(2.220446049250313e-16);
  const T beta = fmin(sin(theta * inv), T(1) - eps);
  const T delta = sin(target * inv);
  if (!hyp) return x * beta / (T(1) - beta) * (T(1) - delta) / delta;
  const T t2 = x > beta ? (x - beta) / (x * (T(1) - beta * x)) : T(0);
  const T a = T(1) - t2;
  return T(2) * delta / (a + sqrt(a * a + T(4) * delta * delta * t2));
}

/// One Collins–Stephenson update of each vertex of `list` from `in` into `out` (in == out for a
/// colour class of Gauss–Seidel: no two of its vertices are neighbours).
template <class T>
__global__ void update_kernel(DeviceComplex<T> K, const std::uint32_t* list, std::uint32_t count, const T* in, T* out) {
  const std::uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= count) return;
  const std::uint32_t v = list[i];
  const std::uint32_t k = K.offset[v + 1] - K.offset[v] - (K.boundary[v] ? 1u : 0u);
  out[v] = cs_update(K.hyperbolic, in[v], angle_sum(K, in, v), K.target[v], k);
}

__device__ inline void atomic_max_nonneg(float* addr, float v) {
  atomicMax(reinterpret_cast<unsigned int*>(addr), __float_as_uint(v));
}
__device__ inline void atomic_max_nonneg(double* addr, double v) {
  atomicMax(reinterpret_cast<unsigned long long*>(addr), static_cast<unsigned long long>(__double_as_longlong(v)));
}

/// max over `list` of |θ − A| into *err (non-negative: IEEE bits order as unsigned integers).
template <class T>
__global__ void error_kernel(DeviceComplex<T> K, const std::uint32_t* list, std::uint32_t count, const T* x, T* err) {
  __shared__ T best[kBlock];
  const std::uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;
  T e = 0;
  if (i < count) {
    const std::uint32_t v = list[i];
    e = fabs(angle_sum(K, x, v) - K.target[v]);
    if (isnan(e)) e = T(1e30);  // reported as not converged
  }
  best[threadIdx.x] = e;
  __syncthreads();
  for (unsigned s = blockDim.x / 2; s > 0; s >>= 1) {
    if (threadIdx.x < s) best[threadIdx.x] = fmax(best[threadIdx.x], best[threadIdx.x + s]);
    __syncthreads();
  }
  if (threadIdx.x == 0) atomic_max_nonneg(err, best[0]);
}

template <class T>
gemflow::cuda::DeviceBuffer<T> upload(const std::vector<T>& h) {
  gemflow::cuda::DeviceBuffer<T> d(h.size());
  if (!h.empty()) GF_CUDA_TRY(cudaMemcpy(d.data(), h.data(), h.size() * sizeof(T), cudaMemcpyHostToDevice));
  return d;
}

unsigned blocks(std::size_t n) { return static_cast<unsigned>((n + kBlock - 1) / kBlock); }

template <class T>
PackResult run(const Complex& K, const Problem& p, const GpuOptions& o) {
  const auto t0 = std::chrono::steady_clock::now();
  GF_CUDA_TRY(cudaSetDevice(o.device));
  cudaStream_t stream = nullptr;
  GF_CUDA_TRY(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  struct StreamGuard {
    cudaStream_t s;
    ~StreamGuard() { (void)GF_CUDA_TRY_NO_THROW(cudaStreamDestroy(s)); }
  } guard{stream};

  // host arrays
  std::vector<T> fixed(K.fixed_petal.begin(), K.fixed_petal.end()), labels(p.labels.begin(), p.labels.end()),
      target(K.n);
  for (std::size_t v = 0; v < K.n; ++v) target[v] = static_cast<T>(std::isnan(p.target[v]) ? 0.0 : p.target[v]);
  std::vector<std::uint32_t> all;  // the free vertices, by colour for Gauss–Seidel
  std::vector<std::size_t> colour_start{0};
  if (o.method == GpuMethod::coloured_gs) {
    const auto colour = colour_vertices(K, p);
    int colours = 0;
    for (auto c : colour)
      if (c != 255) colours = std::max(colours, c + 1);
    for (int c = 0; c < colours; ++c) {
      for (std::size_t v = 0; v < K.n; ++v)
        if (colour[v] == c) all.push_back(static_cast<std::uint32_t>(v));
      colour_start.push_back(all.size());
    }
  } else {
    for (std::size_t v = 0; v < K.n; ++v)
      if (!K.ideal[v] && p.free(static_cast<Index>(v))) all.push_back(static_cast<std::uint32_t>(v));
    colour_start.push_back(all.size());
  }
  auto d_offset = upload(K.offset);
  auto d_flower = upload(K.flower);
  auto d_fixed = upload(fixed);
  auto d_boundary = upload(K.boundary);
  auto d_target = upload(target);
  auto d_list = upload(all);
  auto d_x = upload(labels);
  gemflow::cuda::DeviceBuffer<T> d_y(o.method == GpuMethod::jacobi ? labels.size() : 0);
  if (o.method == GpuMethod::jacobi)
    GF_CUDA_TRY(cudaMemcpy(d_y.data(), d_x.data(), labels.size() * sizeof(T), cudaMemcpyDeviceToDevice));
  gemflow::cuda::DeviceBuffer<T> d_err(1);
  const DeviceComplex<T> dk{d_offset.data(),   d_flower.data(), d_fixed.data(),
                            d_boundary.data(), d_target.data(), p.geometry == Geometry::hyperbolic};
  T* cur = d_x.data();
  T* other = d_y.data();
  auto error_now = [&]() -> double {
    T zero = 0, h = 0;
    GF_CUDA_TRY(cudaMemcpyAsync(d_err.data(), &zero, sizeof(T), cudaMemcpyHostToDevice, stream));
    if (!all.empty()) {
      error_kernel<T><<<blocks(all.size()), kBlock, 0, stream>>>(
          dk, d_list.data(), static_cast<std::uint32_t>(all.size()), cur, d_err.data());
      GF_CUDA_CHECK_LAUNCH("error_kernel");
    }
    GF_CUDA_TRY(cudaMemcpyAsync(&h, d_err.data(), sizeof(T), cudaMemcpyDeviceToHost, stream));
    GF_CUDA_TRY(cudaStreamSynchronize(stream));
    return static_cast<double>(h);
  };

  PackResult r;
  double err = error_now();
  r.history_iteration.push_back(0);
  r.history_error.push_back(err);
  const std::size_t every = std::max<std::size_t>(o.check_every, 1);
  while (err >= o.tolerance && r.iterations < o.max_iterations && std::isfinite(err)) {
    const std::size_t sweeps = std::min(every, o.max_iterations - r.iterations);
    for (std::size_t s = 0; s < sweeps; ++s) {
      if (o.method == GpuMethod::coloured_gs) {
        for (std::size_t c = 0; c + 1 < colour_start.size(); ++c) {
          const auto count = static_cast<std::uint32_t>(colour_start[c + 1] - colour_start[c]);
          if (count == 0) continue;
          update_kernel<T><<<blocks(count), kBlock, 0, stream>>>(dk, d_list.data() + colour_start[c], count, cur, cur);
        }
      } else if (!all.empty()) {
        update_kernel<T><<<blocks(all.size()), kBlock, 0, stream>>>(dk, d_list.data(),
                                                                    static_cast<std::uint32_t>(all.size()), cur, other);
        std::swap(cur, other);
      }
      GF_CUDA_CHECK_LAUNCH("update_kernel");
    }
    r.iterations += sweeps;
    err = error_now();
    r.history_iteration.push_back(r.iterations);
    r.history_error.push_back(err);
    if (o.monitor && !o.monitor(r.iterations, err)) {
      r.cancelled = true;
      break;
    }
  }
  GF_CUDA_TRY(cudaMemcpy(labels.data(), cur, labels.size() * sizeof(T), cudaMemcpyDeviceToHost));
  r.labels.assign(labels.begin(), labels.end());
  r.error = angle_error(K, p, r.labels);
  r.converged = r.error < o.tolerance;
  r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return r;
}

}  // namespace

int device_count() noexcept {
  int count = 0;
  if (cudaGetDeviceCount(&count) != cudaSuccess) {
    (void)cudaGetLastError();
    return 0;
  }
  return count;
}

PackResult pack_gpu(const Complex& K, const Problem& p, const GpuOptions& o) {
  if (p.labels.size() != K.n || p.target.size() != K.n)
    throw PackError("problem has " + std::to_string(p.labels.size()) + " labels for " + std::to_string(K.n) +
                    " vertices");
  if (!(o.tolerance > 0)) throw PackError("tolerance must be > 0");
  return o.precision == Precision::fp32 ? run<float>(K, p, o) : run<double>(K, p, o);
}

}  // namespace cuda
}  // namespace gemflow::circlepack
