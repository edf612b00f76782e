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

#include "../newton_rules.hpp"
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

/// A device copy of `h`, enqueued on `stream`. The kernels run on a non-blocking stream, which
/// does not wait for the legacy default stream: a plain cudaMemcpy from pageable memory may return
/// before its DMA lands, so every copy is ordered on the kernels' own stream (`h` must outlive the
/// copy: the launchers' host arrays live until their final synchronisation).
template <class T>
gemflow::cuda::DeviceBuffer<T> upload(const std::vector<T>& h, cudaStream_t stream) {
  gemflow::cuda::DeviceBuffer<T> d(h.size());
  if (!h.empty())
    GF_CUDA_TRY(cudaMemcpyAsync(d.data(), h.data(), h.size() * sizeof(T), cudaMemcpyHostToDevice, stream));
  return d;
}

/// `out` (sized) from device memory, ordered on `stream`, then waits for it.
template <class T>
void download(const T* d, std::vector<T>& out, cudaStream_t stream) {
  if (!out.empty()) GF_CUDA_TRY(cudaMemcpyAsync(out.data(), d, out.size() * sizeof(T), cudaMemcpyDeviceToHost, stream));
  GF_CUDA_TRY(cudaStreamSynchronize(stream));
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
  auto d_offset = upload(K.offset, stream);
  auto d_flower = upload(K.flower, stream);
  auto d_fixed = upload(fixed, stream);
  auto d_boundary = upload(K.boundary, stream);
  auto d_target = upload(target, stream);
  auto d_list = upload(all, stream);
  auto d_x = upload(labels, stream);
  gemflow::cuda::DeviceBuffer<T> d_y(o.method == GpuMethod::jacobi ? labels.size() : 0);
  if (o.method == GpuMethod::jacobi)
    GF_CUDA_TRY(cudaMemcpyAsync(d_y.data(), d_x.data(), labels.size() * sizeof(T), cudaMemcpyDeviceToDevice, stream));
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
  download(cur, labels, stream);
  r.labels.assign(labels.begin(), labels.end());
  r.error = angle_error(K, p, r.labels);
  r.converged = r.error < o.tolerance;
  r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return r;
}

// ---- Newton-CG (Euclidean, fp64) ------------------------------------------------------------

constexpr std::uint32_t kNoVertex = 0xffffffffu;

struct NewtonDevice {
  DeviceComplex<double> K;
  const std::uint8_t* ideal;
  const std::int32_t* idx;       // unknown index of a vertex, −1 when not an unknown
  const std::uint32_t* unknown;  // the unknowns' vertices
  std::uint32_t m;
  std::uint32_t pinned;  // the free vertex pinned to fix the scale; kNoVertex when a radius fixes it
};

/// g[i] = θ(v_i) − A(v_i) for the unknowns at radii r; thread m writes the pinned vertex's θ − A
/// to *pinned_out (launch m + 1 threads).
__global__ void residual_kernel(NewtonDevice N, const double* r, double* g, double* pinned_out) {
  const std::uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < N.m) {
    const std::uint32_t v = N.unknown[i];
    g[i] = angle_sum(N.K, r, v) - N.K.target[v];
  } else if (i == N.m && N.pinned != kNoVertex) {
    *pinned_out = angle_sum(N.K, r, N.pinned) - N.K.target[N.pinned];
  }
}

/// Edge weights w_vw = Σ over the faces at edge vw of ρ/(r_v + r_w) (ρ the face's inradius,
/// √(r_v r_w) when its third vertex is a line), per flower entry of each unknown; diag = Σ w.
__global__ void weights_kernel(NewtonDevice N, const double* r, double* w, double* diag) {
  const std::uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= N.m) return;
  const std::uint32_t v = N.unknown[i];
  const std::uint32_t o = N.K.offset[v], k = N.K.offset[v + 1] - o;
  const bool closed = !N.K.boundary[v];
  const double rv = r[v];
  double d = 0;
  for (std::uint32_t j = 0; j < k; ++j) {
    const std::uint32_t a = N.K.flower[o + j];
    double wj = 0;
    if (!N.ideal[a]) {
      const double ra = r[a];
      // petals j−1 (third vertex flower[j−1]) and j (third vertex flower[j+1])
      for (int side = 0; side < 2; ++side) {
        std::uint32_t t;
        if (side == 0) {
          if (j == 0 && !closed) continue;
          t = N.K.flower[o + (j == 0 ? k - 1 : j - 1)];
        } else {
          if (j + 1 == k && !closed) continue;
          t = N.K.flower[o + (j + 1 == k ? 0 : j + 1)];
        }
        const double rho = N.ideal[t] ? sqrt(rv * ra) : sqrt(rv * ra * r[t] / (rv + ra + r[t]));
        wj += rho / (rv + ra);
      }
    }
    w[o + j] = wj;
    d += wj;
  }
  diag[i] = d;
}

/// y = L x over the unknowns (matrix-free).
__global__ void laplacian_kernel(NewtonDevice N, const double* w, const double* diag, const double* x, double* y) {
  const std::uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= N.m) return;
  const std::uint32_t v = N.unknown[i];
  const std::uint32_t o = N.K.offset[v], e = N.K.offset[v + 1];
  double s = diag[i] * x[i];
  for (std::uint32_t j = o; j < e; ++j) {
    const std::int32_t q = N.idx[N.K.flower[j]];
    if (q >= 0) s -= w[j] * x[q];
  }
  y[i] = s;
}

/// Block-wide Σ x, max y and Σ z of the threads' values, left in sum[0], big[0] and plain[0]
/// (kBlock threads).
__device__ void block_sum_max(double x, double y, double z, double* sum, double* big, double* plain) {
  sum[threadIdx.x] = x;
  big[threadIdx.x] = y;
  plain[threadIdx.x] = z;
  __syncthreads();
  for (unsigned s = blockDim.x / 2; s > 0; s >>= 1) {
    if (threadIdx.x < s) {
      sum[threadIdx.x] += sum[threadIdx.x + s];
      big[threadIdx.x] = fmax(big[threadIdx.x], big[threadIdx.x + s]);
      plain[threadIdx.x] += plain[threadIdx.x + s];
    }
    __syncthreads();
  }
}

/// Per block: Σ a·b (b == nullptr: Σ a²), max |a| and Σ a into part[block], part[gridDim + block]
/// and part[2·gridDim + block].
__global__ void dot_kernel(const double* a, const double* b, std::uint32_t m, double* part) {
  __shared__ double sum[kBlock], big[kBlock], plain[kBlock];
  const std::uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;
  double x = 0, y = 0, z = 0;
  if (i < m) {
    z = a[i];
    x = z * (b ? b[i] : z);
    y = fabs(z);
  }
  block_sum_max(x, y, z, sum, big, plain);
  if (threadIdx.x == 0)
    part[blockIdx.x] = sum[0], part[gridDim.x + blockIdx.x] = big[0], part[2 * gridDim.x + blockIdx.x] = plain[0];
}

/// Second pass: out[0] = Σ part[0..n), out[1] = max part[n..2n), out[2] = Σ part[2n..3n) (one block).
__global__ void finish_kernel(const double* part, std::uint32_t n, double* out) {
  __shared__ double sum[kBlock], big[kBlock], plain[kBlock];
  double x = 0, y = 0, z = 0;
  for (std::uint32_t i = threadIdx.x; i < n; i += blockDim.x)
    x += part[i], y = fmax(y, part[n + i]), z += part[2 * n + i];
  block_sum_max(x, y, z, sum, big, plain);
  if (threadIdx.x == 0) out[0] = sum[0], out[1] = big[0], out[2] = plain[0];
}

/// res = g − shift (the Newton right-hand side under the scale gauge, newton_rules.hpp).
__global__ void shifted_copy_kernel(const double* g, double shift, std::uint32_t m, double* res) {
  const std::uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < m) res[i] = g[i] - shift;
}

/// z = x / diag (Jacobi preconditioner).
__global__ void precondition_kernel(const double* x, const double* diag, std::uint32_t m, double* z) {
  const std::uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < m) z[i] = x[i] / diag[i];
}

/// y += a·x.
__global__ void axpy_kernel(double a, const double* x, std::uint32_t m, double* y) {
  const std::uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < m) y[i] += a * x[i];
}

/// p = z + b·p.
__global__ void xpby_kernel(const double* z, double b, std::uint32_t m, double* p) {
  const std::uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < m) p[i] = z[i] + b * p[i];
}

// ---- conjugate gradients in one block (small systems) -----------------------------------------

constexpr int kCgBlock = 1024;

/// Σa and Σb over the block, returned to every thread: warp shuffles, then warp 0 over the warps'
/// partial sums in `scratch` (33 entries). A fixed order: deterministic. Every thread must call it.
__device__ inline double2 block_sum2(double a, double b, double2* scratch) {
  for (int off = 16; off > 0; off >>= 1) {
    a += __shfl_down_sync(0xffffffffu, a, off);
    b += __shfl_down_sync(0xffffffffu, b, off);
  }
  const unsigned lane = threadIdx.x & 31u, warp = threadIdx.x >> 5;
  if (lane == 0) scratch[warp] = make_double2(a, b);
  __syncthreads();
  if (warp == 0) {
    double2 v = lane < (blockDim.x >> 5) ? scratch[lane] : make_double2(0.0, 0.0);
    for (int off = 16; off > 0; off >>= 1) {
      v.x += __shfl_down_sync(0xffffffffu, v.x, off);
      v.y += __shfl_down_sync(0xffffffffu, v.y, off);
    }
    if (lane == 0) scratch[32] = v;
  }
  __syncthreads();
  const double2 out = scratch[32];
  __syncthreads();  // before the next call overwrites scratch
  return out;
}

/// The whole Jacobi-preconditioned CG solve of L x = g − shift (from x = 0, until ‖res‖² ≤ stop2 or
/// max_it iterations) in one block of kCgBlock threads, looping on the device: no launch and no
/// host synchronisation per iteration, which is what limits the multi-kernel loop at small n.
/// Vectors in global memory (L1/L2-resident at these sizes); thread t owns rows t, t + 1024, …;
/// p is gathered across rows in the product, so its update is followed by __syncthreads. The
/// iteration count goes to *iterations.
__global__ void __launch_bounds__(kCgBlock)
    cg_block_kernel(NewtonDevice N, const double* w, const double* diag, const double* g, double shift, double stop2,
                    std::uint32_t max_it, double* x, double* res, double* p, double* q, std::uint32_t* iterations) {
  __shared__ double2 scratch[33];
  const std::uint32_t m = N.m;
  double rz_l = 0, rr_l = 0;
  for (std::uint32_t i = threadIdx.x; i < m; i += blockDim.x) {
    const double gi = g[i] - shift, zi = gi / diag[i];
    x[i] = 0;
    res[i] = gi;
    p[i] = zi;
    rz_l += gi * zi;
    rr_l += gi * gi;
  }
  double2 s = block_sum2(rz_l, rr_l, scratch);  // its barriers also publish p
  double rz = s.x, rr = s.y;
  std::uint32_t it = 0;
  for (; it < max_it && rr > stop2; ++it) {  // rr, rz: the same in every thread (uniform branches)
    double pq_l = 0;
    for (std::uint32_t i = threadIdx.x; i < m; i += blockDim.x) {
      const std::uint32_t v = N.unknown[i];
      double y = diag[i] * p[i];
      for (std::uint32_t j = N.K.offset[v], e = N.K.offset[v + 1]; j < e; ++j) {
        const std::int32_t c = N.idx[N.K.flower[j]];
        if (c >= 0) y -= w[j] * p[c];
      }
      q[i] = y;
      pq_l += p[i] * y;
    }
    const double pq = block_sum2(pq_l, 0.0, scratch).x;
    if (!(pq > 0)) break;
    const double alpha = rz / pq;
    rz_l = 0, rr_l = 0;
    for (std::uint32_t i = threadIdx.x; i < m; i += blockDim.x) {
      x[i] += alpha * p[i];
      const double ri = res[i] - alpha * q[i];
      res[i] = ri;
      rz_l += ri * (ri / diag[i]);
      rr_l += ri * ri;
    }
    s = block_sum2(rz_l, rr_l, scratch);  // every thread has read its p before it is rewritten
    const double beta = s.x / rz;
    rz = s.x, rr = s.y;
    for (std::uint32_t i = threadIdx.x; i < m; i += blockDim.x) p[i] = res[i] / diag[i] + beta * p[i];
    __syncthreads();  // p complete before the next product gathers it
  }
  if (threadIdx.x == 0) *iterations = it;
}

/// trial = r, with the unknowns' radii scaled by exp(t·δ).
__global__ void step_kernel(NewtonDevice N, const double* r, const double* delta, double t, double* trial) {
  const std::uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= N.m) return;
  const std::uint32_t v = N.unknown[i];
  trial[v] = r[v] * exp(t * delta[i]);
}

PackResult run_newton(const Complex& K, const Problem& p, const GpuOptions& o) {
  if (p.geometry != Geometry::euclidean) throw PackError("gpu newton solves Euclidean packings only");
  if (o.precision != Precision::fp64) throw PackError("gpu newton runs in fp64 only");
  const auto t0 = std::chrono::steady_clock::now();
  GF_CUDA_TRY(cudaSetDevice(o.device));
  cudaStream_t stream = nullptr;
  GF_CUDA_TRY(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  struct StreamGuard {
    cudaStream_t s;
    ~StreamGuard() { (void)GF_CUDA_TRY_NO_THROW(cudaStreamDestroy(s)); }
  } guard{stream};
  // unknowns as on the CPU: free finite vertices, the first pinned when no finite radius is fixed
  bool scale_fixed = false;
  for (std::size_t v = 0; v < K.n; ++v) scale_fixed = scale_fixed || (!p.free(static_cast<Index>(v)) && !K.ideal[v]);
  std::vector<std::int32_t> idx(K.n, -1);
  std::vector<std::uint32_t> unknown, free_list;
  std::uint32_t pinned = kNoVertex;
  for (std::size_t v = 0; v < K.n; ++v) {
    if (!p.free(static_cast<Index>(v)) || K.ideal[v]) continue;
    free_list.push_back(static_cast<std::uint32_t>(v));
    if (!scale_fixed && free_list.size() == 1) {
      pinned = static_cast<std::uint32_t>(v);
      continue;
    }
    idx[v] = static_cast<std::int32_t>(unknown.size());
    unknown.push_back(static_cast<std::uint32_t>(v));
  }
  if (unknown.size() > static_cast<std::size_t>(std::numeric_limits<std::int32_t>::max()))
    throw PackError("gpu newton: more than 2³¹−1 unknowns");
  const auto m = static_cast<std::uint32_t>(unknown.size());
  std::vector<double> fixed(K.fixed_petal.begin(), K.fixed_petal.end()), target(K.n);
  for (std::size_t v = 0; v < K.n; ++v) target[v] = std::isnan(p.target[v]) ? 0.0 : p.target[v];
  auto d_offset = upload(K.offset, stream);
  auto d_flower = upload(K.flower, stream);
  auto d_fixed = upload(fixed, stream);
  auto d_boundary = upload(K.boundary, stream);
  auto d_ideal = upload(K.ideal, stream);
  auto d_target = upload(target, stream);
  auto d_idx = upload(idx, stream);
  auto d_unknown = upload(unknown, stream);
  auto d_free = upload(free_list, stream);
  auto d_r = upload(p.labels, stream);
  auto d_trial = upload(p.labels, stream);
  gemflow::cuda::DeviceBuffer<double> d_w(K.flower.size()), d_diag(m), d_g(m), d_gt(m), d_x(m), d_res(m), d_z(m),
      d_p(m), d_q(m), d_err(1);
  const unsigned nb = std::max(1u, blocks(m));
  gemflow::cuda::DeviceBuffer<double> d_part(3 * nb), d_out(4);  // out[3]: the pinned vertex's θ − A
  gemflow::cuda::DeviceBuffer<std::uint32_t> d_its(1);
  const NewtonDevice N{{d_offset.data(), d_flower.data(), d_fixed.data(), d_boundary.data(), d_target.data(), false},
                       d_ideal.data(),
                       d_idx.data(),
                       d_unknown.data(),
                       m,
                       pinned};
  auto reduce = [&](const double* a, const double* b, double& sum, double& mx) {
    dot_kernel<<<nb, kBlock, 0, stream>>>(a, b, m, d_part.data());
    finish_kernel<<<1, kBlock, 0, stream>>>(d_part.data(), nb, d_out.data());
    GF_CUDA_CHECK_LAUNCH("dot_kernel");
    double h[2];
    GF_CUDA_TRY(cudaMemcpyAsync(h, d_out.data(), sizeof h, cudaMemcpyDeviceToHost, stream));
    GF_CUDA_TRY(cudaStreamSynchronize(stream));
    sum = h[0], mx = h[1];
  };
  auto full_error = [&](const double* r) {  // over every free vertex, pinned included
    double zero = 0, h = 0;
    GF_CUDA_TRY(cudaMemcpyAsync(d_err.data(), &zero, sizeof zero, cudaMemcpyHostToDevice, stream));
    if (!free_list.empty())
      error_kernel<double><<<blocks(free_list.size()), kBlock, 0, stream>>>(
          N.K, d_free.data(), static_cast<std::uint32_t>(free_list.size()), r, d_err.data());
    GF_CUDA_CHECK_LAUNCH("error_kernel");
    GF_CUDA_TRY(cudaMemcpyAsync(&h, d_err.data(), sizeof h, cudaMemcpyDeviceToHost, stream));
    GF_CUDA_TRY(cudaStreamSynchronize(stream));
    return h;
  };
  // θ − A at radii r into g (the unknowns) and its gauge (newton_rules.hpp): the CG right-hand
  // side is g − shift, norm2 its ‖·‖², merit2 the line search's ‖θ − A − ḡ‖² over every free vertex
  struct Residual {
    double norm2 = 0, merit2 = 0, max = 0, shift = 0, pinned = 0;
  };
  auto residual = [&](const double* r, double* g) {
    residual_kernel<<<blocks(std::size_t{m} + 1), kBlock, 0, stream>>>(N, r, g, d_out.data() + 3);
    dot_kernel<<<nb, kBlock, 0, stream>>>(g, nullptr, m, d_part.data());
    finish_kernel<<<1, kBlock, 0, stream>>>(d_part.data(), nb, d_out.data());
    GF_CUDA_CHECK_LAUNCH("residual_kernel");
    // out[3] exists only with a pinned vertex (residual_kernel writes it then): copy what was written
    double h[4] = {};
    const std::size_t written = pinned == kNoVertex ? 3 : 4;
    GF_CUDA_TRY(cudaMemcpyAsync(h, d_out.data(), written * sizeof(double), cudaMemcpyDeviceToHost, stream));
    GF_CUDA_TRY(cudaStreamSynchronize(stream));
    Residual out;
    out.max = h[1];
    if (pinned == kNoVertex) {
      out.norm2 = out.merit2 = h[0];
      return out;
    }
    const detail::GaugeShift gs = detail::gauge_shift(h[2], h[0], h[3], m);
    out.norm2 = gs.unknowns2, out.merit2 = gs.all2, out.shift = gs.mean, out.pinned = h[3];
    return out;
  };
  GF_CUDA_TRY(cudaStreamSynchronize(stream));  // the uploads, inside "setup and upload"
  // where the time goes (PackResult::phases): each phase ends at a host synchronisation
  using Clock = std::chrono::steady_clock;
  double t_setup = std::chrono::duration<double>(Clock::now() - t0).count(), t_cg = 0, t_search = 0, t_check = 0;
  auto lap = [](Clock::time_point& since) {
    const auto now = Clock::now();
    const double s = std::chrono::duration<double>(now - since).count();
    since = now;
    return s;
  };
  auto mark = Clock::now();
  PackResult res;
  double err = full_error(d_r.data());
  res.history_iteration.push_back(0);
  res.history_error.push_back(err);
  Residual cur;
  if (m > 0) cur = residual(d_r.data(), d_g.data());
  t_check += lap(mark);
  while (m > 0 && err >= o.tolerance && res.iterations < o.max_iterations && std::isfinite(err)) {
    weights_kernel<<<nb, kBlock, 0, stream>>>(N, d_r.data(), d_w.data(), d_diag.data());
    GF_CUDA_CHECK_LAUNCH("weights_kernel");
    // CG on L x = g − shift from x = 0, to the relative residual η = min(0.1, max|g|) (not the
    // CPU's floor of 0.1·tolerance/error: that bounds the unknowns' error, but the pinned vertex
    // collects their CG residuals' sum, and the extra Newton step it then needs costs the GPU
    // more than the CG iterations saved)
    const double eta = std::clamp(cur.max, 1e-12, 0.1);
    const double stop2 = eta * eta * cur.norm2;
    double unused = 0;
    if (m <= o.cg_single_block_max) {  // the whole solve in one kernel
      const auto cap = static_cast<std::uint32_t>(std::min<std::size_t>(o.cg_max_iterations, UINT32_MAX));
      cg_block_kernel<<<1, kCgBlock, 0, stream>>>(N, d_w.data(), d_diag.data(), d_g.data(), cur.shift, stop2, cap,
                                                  d_x.data(), d_res.data(), d_p.data(), d_q.data(), d_its.data());
      GF_CUDA_CHECK_LAUNCH("cg_block_kernel");
      std::uint32_t its = 0;
      GF_CUDA_TRY(cudaMemcpyAsync(&its, d_its.data(), sizeof its, cudaMemcpyDeviceToHost, stream));
      GF_CUDA_TRY(cudaStreamSynchronize(stream));
      res.inner_iterations += its;
    } else {  // one launch per vector operation, over the whole device
      // res = g − shift, z = M⁻¹ res, p = z
      GF_CUDA_TRY(cudaMemsetAsync(d_x.data(), 0, m * sizeof(double), stream));
      shifted_copy_kernel<<<nb, kBlock, 0, stream>>>(d_g.data(), cur.shift, m, d_res.data());
      precondition_kernel<<<nb, kBlock, 0, stream>>>(d_res.data(), d_diag.data(), m, d_z.data());
      GF_CUDA_TRY(cudaMemcpyAsync(d_p.data(), d_z.data(), m * sizeof(double), cudaMemcpyDeviceToDevice, stream));
      double rz = 0, rr = cur.norm2;
      reduce(d_res.data(), d_z.data(), rz, unused);
      for (std::size_t it = 0; it < o.cg_max_iterations && rr > stop2; ++it) {
        laplacian_kernel<<<nb, kBlock, 0, stream>>>(N, d_w.data(), d_diag.data(), d_p.data(), d_q.data());
        double pq = 0;
        reduce(d_p.data(), d_q.data(), pq, unused);
        if (!(pq > 0)) break;
        const double alpha = rz / pq;
        axpy_kernel<<<nb, kBlock, 0, stream>>>(alpha, d_p.data(), m, d_x.data());
        axpy_kernel<<<nb, kBlock, 0, stream>>>(-alpha, d_q.data(), m, d_res.data());
        precondition_kernel<<<nb, kBlock, 0, stream>>>(d_res.data(), d_diag.data(), m, d_z.data());
        double rz_new = 0;
        reduce(d_res.data(), d_z.data(), rz_new, unused);
        reduce(d_res.data(), nullptr, rr, unused);
        xpby_kernel<<<nb, kBlock, 0, stream>>>(d_z.data(), rz_new / rz, m, d_p.data());
        GF_CUDA_CHECK_LAUNCH("cg");
        rz = rz_new;
        ++res.inner_iterations;
      }
    }
    GF_CUDA_TRY(cudaStreamSynchronize(stream));
    t_cg += lap(mark);
    // line search on ‖θ − A − ḡ‖₂ over the free vertices, steps capped at 2 in log-radius
    double dnorm2 = 0, dmax = 0;
    reduce(d_x.data(), nullptr, dnorm2, dmax);
    double t = dmax > 2 ? 2 / dmax : 1.0;
    bool accepted = false;
    Residual next;
    for (int halvings = 0; halvings < 30; ++halvings, t *= 0.5) {
      GF_CUDA_TRY(cudaMemcpyAsync(d_trial.data(), d_r.data(), K.n * sizeof(double), cudaMemcpyDeviceToDevice, stream));
      step_kernel<<<nb, kBlock, 0, stream>>>(N, d_r.data(), d_x.data(), t, d_trial.data());
      GF_CUDA_CHECK_LAUNCH("line search");
      next = residual(d_trial.data(), d_gt.data());
      if (std::sqrt(next.merit2) < (1 - 1e-4 * t) * std::sqrt(cur.merit2) || next.merit2 == 0) {
        accepted = true;
        break;
      }
    }
    ++res.iterations;
    t_search += lap(mark);
    if (!accepted) break;
    std::swap(d_r, d_trial);
    std::swap(d_g, d_gt);
    cur = next;
    err = full_error(d_r.data());
    t_check += lap(mark);
    res.history_iteration.push_back(res.iterations);
    res.history_error.push_back(err);
    if (o.monitor && !o.monitor(res.iterations, err)) {
      res.cancelled = true;
      break;
    }
  }
  mark = Clock::now();
  res.labels.resize(K.n);
  download(d_r.data(), res.labels, stream);
  res.error = angle_error(K, p, res.labels);
  res.converged = res.error < o.tolerance;
  res.phases = {{"setup and upload", t_setup},
                {"weights and CG", t_cg},
                {"line search", t_search},
                {"error checks", t_check},
                {"download and host check", lap(mark)}};
  res.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return res;
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
  if (o.method == GpuMethod::newton) return run_newton(K, p, o);
  return o.precision == Precision::fp32 ? run<float>(K, p, o) : run<double>(K, p, o);
}

}  // namespace cuda
}  // namespace gemflow::circlepack
