// Host dispatch of the CUDA triangle smoothing (declared in gemflow/distgeom/smoothing_cuda.hpp).
#include <algorithm>
#include <chrono>
#include <climits>
#include <cmath>
#include <cstdio>
#include <string>
#include <type_traits>
#include <vector>

#include <gemflow/cuda/buffer.hpp>
#include <gemflow/cuda/check.hpp>
#include <gemflow/cuda/timing.hpp>
#include <gemflow/cuda_smem.hpp>

#include "gemflow/distgeom/smoothing_cuda.hpp"
#include "smoothing_kernels.cuh"

namespace gemflow::distgeom::cuda {
namespace {

using detail::idx_t;

// ---- small RAII helpers -----------------------------------------------------------------

using ::gemflow::cuda::DeviceBuffer;
using ::gemflow::cuda::Event;  // without timing

class DeviceGuard {
 public:
  explicit DeviceGuard(int device) {
    GF_CUDA_TRY(cudaGetDevice(&previous_));
    if (device != previous_) GF_CUDA_TRY(cudaSetDevice(device));
  }
  DeviceGuard(const DeviceGuard&) = delete;
  DeviceGuard& operator=(const DeviceGuard&) = delete;
  ~DeviceGuard() { GF_CUDA_TRY_NO_THROW(cudaSetDevice(previous_)); }

 private:
  int previous_ = 0;
};

std::string fmt_value(double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.9g", v);
  return buf;
}

int grid_for(idx_t count, int threads) {
  int device = 0, sms = 0;
  GF_CUDA_TRY(cudaGetDevice(&device));
  GF_CUDA_TRY(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
  const idx_t blocks = (count + threads - 1) / threads;
  return static_cast<int>(std::max<idx_t>(1, std::min<idx_t>(blocks, 32ll * sms)));
}

constexpr std::size_t kStagingElems = std::size_t(1) << 23;  // 64 MiB of doubles

void require_memory(std::size_t n, std::size_t bytes, const char* what) {
  std::size_t free_b = 0, total_b = 0;
  GF_CUDA_TRY(cudaMemGetInfo(&free_b, &total_b));
  if (bytes > free_b) {
    int device = 0;
    GF_CUDA_TRY(cudaGetDevice(&device));
    throw CudaError(std::string("triangle smoothing (") + what + ", n = " + std::to_string(n) + ") needs " +
                    std::to_string(bytes) + " bytes of device memory, cuda:" + std::to_string(device) + " has " +
                    std::to_string(free_b) + " free of " + std::to_string(total_b));
  }
}

// ---- validation ---------------------------------------------------------------------------

template <class T>
void validate_impl(const T* lower, const T* upper, std::size_t n, std::size_t batch, double tolerance, Stream stream) {
  GF_EXPECTS(tolerance >= 0, "triangle smoothing: tolerance must be >= 0 Å");
  if (n == 0 || batch == 0) return;
  DeviceBuffer<unsigned long long> first(1);
  GF_CUDA_TRY(cudaMemsetAsync(first.data(), 0xff, sizeof(unsigned long long), stream));
  const idx_t total = static_cast<idx_t>(n) * n * batch;
  detail::validate_kernel<T>
      <<<grid_for(total, 256), 256, 0, stream>>>(lower, upper, static_cast<idx_t>(n), total, tolerance, first.data());
  GF_CUDA_CHECK_LAUNCH("validate_kernel");
  unsigned long long key = 0;
  GF_CUDA_TRY(cudaMemcpyAsync(&key, first.data(), sizeof key, cudaMemcpyDeviceToHost, stream));
  GF_CUDA_TRY(cudaStreamSynchronize(stream));
  if (key == ~0ull) return;

  const unsigned kind = static_cast<unsigned>(key & 7ull);
  const std::size_t e = static_cast<std::size_t>((key & ~(3ull << 62)) >> 3);
  const std::size_t nn = n * n, b = e / nn, i = (e % nn) / n, j = e % n;
  T v[4];  // L(i,j), U(i,j), L(j,i), U(j,i)
  const std::size_t et = b * nn + j * n + i;
  GF_CUDA_TRY(cudaMemcpy(&v[0], lower + e, sizeof(T), cudaMemcpyDeviceToHost));
  GF_CUDA_TRY(cudaMemcpy(&v[1], upper + e, sizeof(T), cudaMemcpyDeviceToHost));
  GF_CUDA_TRY(cudaMemcpy(&v[2], lower + et, sizeof(T), cudaMemcpyDeviceToHost));
  GF_CUDA_TRY(cudaMemcpy(&v[3], upper + et, sizeof(T), cudaMemcpyDeviceToHost));
  BoundsDefect d;
  d.i = i;
  d.j = j;
  d.lower = static_cast<double>(v[0]);
  d.upper = static_cast<double>(v[1]);
  d.lower_ji = static_cast<double>(v[2]);
  d.upper_ji = static_cast<double>(v[3]);
  using K = BoundsDefect::Kind;
  const std::string lo = fmt_value(d.lower), up = fmt_value(d.upper);
  std::string what;
  switch (kind) {
    case detail::kBadNaN:
      d.kind = K::NotANumber;
      what = "NaN";
      break;
    case detail::kBadNegative:
      d.kind = K::Negative;
      what = "negative bound";
      break;
    case detail::kBadInfLower:
      d.kind = K::InfiniteLower;
      what = "infinite lower bound";
      break;
    case detail::kBadDiagonal:
      d.kind = K::NonzeroDiagonal;
      what = "diagonal must be 0";
      break;
    case detail::kBadAsymmetric:
      d.kind = K::NotSymmetric;
      what = "not symmetric, (" + std::to_string(j) + ", " + std::to_string(i) + ") has lower " +
             fmt_value(d.lower_ji) + " Å, upper " + fmt_value(d.upper_ji) + " Å";
      break;
    default:
      d.kind = K::LowerAboveUpper;
      what = "lower bound > upper bound + " + fmt_value(tolerance) + " Å";
      break;
  }
  throw InvalidBounds("bounds " + (batch > 1 ? "of matrix " + std::to_string(b) + " " : "") + "(" + std::to_string(i) +
                          ", " + std::to_string(j) + "): " + what + " (lower " + lo + " Å, upper " + up + " Å" +
                          (std::is_same_v<T, float> ? ", as fp32" : "") +
                          "); checked on the GPU "
                          "before smoothing",
                      b, d);
}

// ---- blocked closure ------------------------------------------------------------------------

template <class P, class T>
void configure_product_kernels() {
  GF_CUDA_TRY(gemflow::cuda::allow_dynamic_smem(detail::tile_product_kernel<P, T, true>, P::smem_bytes));
  GF_CUDA_TRY(gemflow::cuda::allow_dynamic_smem(detail::tile_product_kernel<P, T, false>, P::smem_bytes));
}

/// One pivot block K: phase 1 (diagonal tile), phase 2 (pivot row), phase 3 (the rest), for
/// `batch` matrices of n² elements stored one after another (batch ≤ 65535: a grid dimension).
template <class T, int TB>
void launch_pivot_block(T* lower, T* upper, int n, int K, cudaStream_t s, unsigned batch = 1) {
  using P = detail::ProductPolicy<T, TB>;
  constexpr int TD = TB / 4;
  const int tiles = (n + TB - 1) / TB;
  const idx_t stride = static_cast<idx_t>(n) * n;
  const idx_t diag = static_cast<idx_t>(K) * TB * (static_cast<idx_t>(n) + 1);
  const int m = std::min(TB, n - K * TB);
  detail::reg_closure_kernel<T, TD><<<batch, TD * TD, 0, s>>>(lower + diag, upper + diag, n, m, stride);
  GF_CUDA_CHECK_LAUNCH("reg_closure_kernel (phase 1)");
  if (tiles == 1) return;
  detail::tile_product_kernel<P, T, true>
      <<<dim3(tiles, batch), P::kThreads, P::smem_bytes, s>>>(lower, upper, n, K, stride);
  GF_CUDA_CHECK_LAUNCH("tile_product_kernel (phase 2)");
  const unsigned upper_tiles = static_cast<unsigned>(tiles) * (tiles + 1) / 2;
  detail::tile_product_kernel<P, T, false>
      <<<dim3(upper_tiles, batch), P::kThreads, P::smem_bytes, s>>>(lower, upper, n, K, stride);
  GF_CUDA_CHECK_LAUNCH("tile_product_kernel (phase 3)");
}

/// Blocked closure of a batch: every pivot block launched once for all matrices (up to 65535
/// per launch), then the mirror of the upper triangle.
template <class T, int TB>
void batched_blocked_closure(T* lower, T* upper, int n, std::size_t batch, cudaStream_t s) {
  using P = detail::ProductPolicy<T, TB>;
  configure_product_kernels<P, T>();
  const int tiles = (n + TB - 1) / TB;
  const idx_t stride = static_cast<idx_t>(n) * n;
  for (std::size_t b0 = 0; b0 < batch; b0 += 65535) {
    const unsigned count = static_cast<unsigned>(std::min<std::size_t>(65535, batch - b0));
    T* l = lower + static_cast<idx_t>(b0) * stride;
    T* u = upper + static_cast<idx_t>(b0) * stride;
    for (int K = 0; K < tiles; ++K) launch_pivot_block<T, TB>(l, u, n, K, s, count);
    const dim3 mg((n + 31) / 32, (n + 31) / 32, count);
    detail::mirror_upper_kernel<T><<<mg, dim3(32, 8), 0, s>>>(l, u, n, stride);
    GF_CUDA_CHECK_LAUNCH("mirror_upper_kernel (batched)");
  }
}

template <class T, int TB>
bool blocked_closure(T* lower, T* upper, int n, cudaStream_t s, const Control& control) {
  using P = detail::ProductPolicy<T, TB>;
  configure_product_kernels<P, T>();
  const int tiles = (n + TB - 1) / TB;
  // Chunk: ~chunk_ms of work at a conservative rate (pairs = 1.5·n²·TB per pivot block).
  const double rate = std::is_same_v<T, float> ? 6e12 : 3e12;  // add+min pairs per second
  const double block_ms = 1.5 * double(n) * double(n) * TB / rate * 1e3;
  const double chunk_blocks = std::max(control.chunk_ms, 0.0) / std::max(block_ms, 1e-9);
  const int chunk = static_cast<int>(std::clamp(chunk_blocks, 1.0, double(tiles)));
  Event done[2];
  int issued = 0, previous_end = 0;
  for (int K = 0; K < tiles;) {
    const int end = std::min(tiles, K + chunk);
    for (; K < end; ++K) launch_pivot_block<T, TB>(lower, upper, n, K, s);
    GF_CUDA_TRY(cudaEventRecord(done[issued & 1].get(), s));
    if (issued > 0) {  // keep one chunk queued while the host polls
      GF_CUDA_TRY(cudaEventSynchronize(done[(issued - 1) & 1].get()));
      if (control.progress) control.progress(static_cast<double>(previous_end) / tiles);
      if (control.cancelled && control.cancelled()) {
        GF_CUDA_TRY(cudaEventSynchronize(done[issued & 1].get()));
        return false;
      }
    }
    ++issued;
    previous_end = end;
  }
  const dim3 mg((n + 31) / 32, (n + 31) / 32);
  detail::mirror_upper_kernel<T><<<mg, dim3(32, 8), 0, s>>>(lower, upper, n, 0);
  GF_CUDA_CHECK_LAUNCH("mirror_upper_kernel");
  if (control.progress) control.progress(1.0);
  return true;
}

template <class T>
bool smooth_impl(T* lower, T* upper, std::size_t n, Stream stream, const Control& control) {
  if (n == 0) return true;
  GF_EXPECTS(n <= INT_MAX / 2, "smooth_bounds_device: n too large");
  int block = control.block;
  if (block == 0) block = (std::is_same_v<T, float> && n >= 3072) ? 128 : 64;
  GF_EXPECTS(block == 64 || (block == 128 && std::is_same_v<T, float>),
             "smooth_bounds_device: Control::block must be 0, 64 or (fp32) 128");
  if (control.cancelled && control.cancelled()) return false;
  const int ni = static_cast<int>(n);
  if constexpr (std::is_same_v<T, float>) {
    if (block == 128) return blocked_closure<float, 128>(lower, upper, ni, stream, control);
    return blocked_closure<float, 64>(lower, upper, ni, stream, control);
  } else {
    return blocked_closure<double, 64>(lower, upper, ni, stream, control);
  }
}

// ---- consistency check ----------------------------------------------------------------------

template <class T>
std::vector<ConsistencyReport> consistency_impl(const T* lower, const T* upper, std::size_t n, std::size_t batch,
                                                double tol, Stream stream) {
  std::vector<ConsistencyReport> out(batch);
  if (n == 0 || batch == 0) return out;
  DeviceBuffer<unsigned long long> first(batch), count(batch);
  DeviceBuffer<double> values(2 * batch);
  GF_CUDA_TRY(cudaMemsetAsync(first.data(), 0xff, batch * sizeof(unsigned long long), stream));
  GF_CUDA_TRY(cudaMemsetAsync(count.data(), 0, batch * sizeof(unsigned long long), stream));
  // Written only for the molecules with an inconsistency; zeroed so that the whole buffer copied
  // back is defined (compute-sanitizer initcheck).
  GF_CUDA_TRY(cudaMemsetAsync(values.data(), 0, 2 * batch * sizeof(double), stream));
  const idx_t total = static_cast<idx_t>(n) * n * batch;
  detail::consistency_kernel<T><<<grid_for(total, 256), 256, 0, stream>>>(lower, upper, static_cast<idx_t>(n), total,
                                                                          tol, first.data(), count.data());
  GF_CUDA_CHECK_LAUNCH("consistency_kernel");
  detail::gather_first_kernel<T><<<grid_for(static_cast<idx_t>(batch), 256), 256, 0, stream>>>(
      lower, upper, static_cast<idx_t>(n), static_cast<idx_t>(batch), first.data(), count.data(), values.data());
  GF_CUDA_CHECK_LAUNCH("gather_first_kernel");
  std::vector<unsigned long long> f(batch), c(batch);
  std::vector<double> v(2 * batch);
  GF_CUDA_TRY(
      cudaMemcpyAsync(f.data(), first.data(), batch * sizeof(unsigned long long), cudaMemcpyDeviceToHost, stream));
  GF_CUDA_TRY(
      cudaMemcpyAsync(c.data(), count.data(), batch * sizeof(unsigned long long), cudaMemcpyDeviceToHost, stream));
  GF_CUDA_TRY(cudaMemcpyAsync(v.data(), values.data(), 2 * batch * sizeof(double), cudaMemcpyDeviceToHost, stream));
  GF_CUDA_TRY(cudaStreamSynchronize(stream));
  for (std::size_t b = 0; b < batch; ++b) {
    if (c[b] == 0) continue;
    auto& r = out[b];
    r.consistent = false;
    r.inconsistent_pairs = static_cast<std::size_t>(c[b]);
    r.first_i = static_cast<std::size_t>(f[b] / n);
    r.first_j = static_cast<std::size_t>(f[b] % n);
    r.first_lower = v[2 * b];
    r.first_upper = v[2 * b + 1];
  }
  return out;
}

// ---- batched closure ------------------------------------------------------------------------

template <class T>
void batched_impl(T* lower, T* upper, std::size_t n, std::size_t batch, Stream stream, BatchedMethod method) {
  GF_EXPECTS(n <= max_batched_n, "smooth_bounds_batched_device: n = " + std::to_string(n) +
                                     " > max_batched_n = " + std::to_string(max_batched_n));
  GF_EXPECTS(batch <= 0x7fffffffu, "smooth_bounds_batched_device: batch too large");
  if (n == 0 || batch == 0) return;
  const int ni = static_cast<int>(n);
  const idx_t stride = static_cast<idx_t>(n) * n;
  const unsigned grid = static_cast<unsigned>(batch);
  if (method == BatchedMethod::Auto) method = batched_method_for(n, sizeof(T) == 4 ? Precision::fp32 : Precision::fp64);
  if (method == BatchedMethod::Blocked) {
    batched_blocked_closure<T, 64>(lower, upper, ni, batch, stream);
    return;
  }
  if (n <= 32) {
    detail::reg_closure_kernel<T, 8><<<grid, 64, 0, stream>>>(lower, upper, ni, ni, stride);
    GF_CUDA_CHECK_LAUNCH("reg_closure_kernel<8> (batched)");
    return;
  }
  if (n <= 64) {
    detail::reg_closure_kernel<T, 16><<<grid, 256, 0, stream>>>(lower, upper, ni, ni, stride);
    GF_CUDA_CHECK_LAUNCH("reg_closure_kernel<16> (batched)");
    return;
  }
  if constexpr (std::is_same_v<T, float>) {
    if (n <= 128) {
      detail::reg_closure_kernel<T, 32><<<grid, 1024, 0, stream>>>(lower, upper, ni, ni, stride);
      GF_CUDA_CHECK_LAUNCH("reg_closure_kernel<32> (batched)");
      return;
    }
  }
  int device = 0, optin = 0;
  GF_CUDA_TRY(cudaGetDevice(&device));
  GF_CUDA_TRY(cudaDeviceGetAttribute(&optin, cudaDevAttrMaxSharedMemoryPerBlockOptin, device));
  const std::size_t row_bytes = 2 * n * sizeof(T);
  const std::size_t all_bytes = row_bytes + 2 * n * n * sizeof(T);
  if (all_bytes <= static_cast<std::size_t>(optin)) {
    GF_CUDA_TRY(cudaFuncSetAttribute(detail::stream_closure_kernel<T, true>,
                                     cudaFuncAttributeMaxDynamicSharedMemorySize, static_cast<int>(all_bytes)));
    detail::stream_closure_kernel<T, true><<<grid, 512, all_bytes, stream>>>(lower, upper, ni);
    GF_CUDA_CHECK_LAUNCH("stream_closure_kernel<shared> (batched)");
  } else {
    detail::stream_closure_kernel<T, false><<<grid, 512, row_bytes, stream>>>(lower, upper, ni);
    GF_CUDA_CHECK_LAUNCH("stream_closure_kernel<global> (batched)");
  }
}

// ---- host-memory entry points ---------------------------------------------------------------

/// Host doubles → device T (fp32 converts on the device through a staging buffer).
template <class T>
void upload(T* dst, const double* src, std::size_t count, double* staging, std::size_t staging_count, cudaStream_t s) {
  if constexpr (std::is_same_v<T, double>) {
    GF_CUDA_TRY(cudaMemcpyAsync(dst, src, count * sizeof(double), cudaMemcpyHostToDevice, s));
  } else {
    for (std::size_t off = 0; off < count; off += staging_count) {
      const std::size_t c = std::min(staging_count, count - off);
      GF_CUDA_TRY(cudaMemcpyAsync(staging, src + off, c * sizeof(double), cudaMemcpyHostToDevice, s));
      detail::convert_kernel<T, double>
          <<<grid_for(static_cast<idx_t>(c), 256), 256, 0, s>>>(dst + off, staging, static_cast<idx_t>(c));
      GF_CUDA_CHECK_LAUNCH("convert_kernel (upload)");
    }
  }
}

template <class T>
void download(double* dst, const T* src, std::size_t count, double* staging, std::size_t staging_count,
              cudaStream_t s) {
  if constexpr (std::is_same_v<T, double>) {
    GF_CUDA_TRY(cudaMemcpyAsync(dst, src, count * sizeof(double), cudaMemcpyDeviceToHost, s));
  } else {
    for (std::size_t off = 0; off < count; off += staging_count) {
      const std::size_t c = std::min(staging_count, count - off);
      detail::convert_kernel<double, T>
          <<<grid_for(static_cast<idx_t>(c), 256), 256, 0, s>>>(staging, src + off, static_cast<idx_t>(c));
      GF_CUDA_CHECK_LAUNCH("convert_kernel (download)");
      GF_CUDA_TRY(cudaMemcpyAsync(dst + off, staging, c * sizeof(double), cudaMemcpyDeviceToHost, s));
      GF_CUDA_TRY(cudaStreamSynchronize(s));  // staging is reused
    }
  }
  GF_CUDA_TRY(cudaStreamSynchronize(s));
}

template <class T>
struct HostBuffers {
  HostBuffers(std::size_t n, std::size_t count, const char* what)
      : staging_count(std::is_same_v<T, float> ? std::min(count, kStagingElems) : 0) {
    require_memory(n,
                   device_bytes_needed(n, count / std::max<std::size_t>(1, n * n),
                                       std::is_same_v<T, float> ? Precision::fp32 : Precision::fp64),
                   what);
    lower.allocate(count);
    upper.allocate(count);
    staging.allocate(staging_count);  // none for fp64
  }
  std::size_t staging_count;
  DeviceBuffer<T> lower, upper;
  DeviceBuffer<double> staging;
  double* staging_ptr() { return staging.data(); }
};

template <class T>
SmoothingResult host_impl(std::span<double> lower, std::span<double> upper, std::size_t n, Stream stream,
                          const HostOptions& o) {
  const std::size_t count = n * n;
  HostBuffers<T> buf(n, count, "one matrix");
  upload<T>(buf.lower.data(), lower.data(), count, buf.staging_ptr(), buf.staging_count, stream);
  upload<T>(buf.upper.data(), upper.data(), count, buf.staging_ptr(), buf.staging_count, stream);
  validate_impl<T>(buf.lower.data(), buf.upper.data(), n, 1, o.tolerance, stream);
  SmoothingResult result;
  if (!smooth_impl<T>(buf.lower.data(), buf.upper.data(), n, stream, o.control)) {
    result.cancelled = true;
    return result;
  }
  result.consistency = consistency_impl<T>(buf.lower.data(), buf.upper.data(), n, 1, o.tolerance, stream)[0];
  download<T>(lower.data(), buf.lower.data(), count, buf.staging_ptr(), buf.staging_count, stream);
  download<T>(upper.data(), buf.upper.data(), count, buf.staging_ptr(), buf.staging_count, stream);
  return result;
}

template <class T>
std::vector<ConsistencyReport> host_batched_impl(std::span<double> lower, std::span<double> upper, std::size_t n,
                                                 std::size_t batch, Stream stream, const HostOptions& o,
                                                 bool* cancelled) {
  const std::size_t count = n * n * batch;
  HostBuffers<T> buf(n, count, "batched");
  upload<T>(buf.lower.data(), lower.data(), count, buf.staging_ptr(), buf.staging_count, stream);
  upload<T>(buf.upper.data(), upper.data(), count, buf.staging_ptr(), buf.staging_count, stream);
  validate_impl<T>(buf.lower.data(), buf.upper.data(), n, batch, o.tolerance, stream);
  const double rate = std::is_same_v<T, float> ? 1e12 : 5e11;  // conservative, small matrices
  const double per_matrix_ms = 3.0 * double(n) * n * n / rate * 1e3;
  const std::size_t per_launch = std::max<std::size_t>(
      1, static_cast<std::size_t>(std::min(double(batch), std::max(o.control.chunk_ms, 0.0) / per_matrix_ms)));
  if (cancelled) *cancelled = false;
  for (std::size_t b = 0; b < batch; b += per_launch) {
    const std::size_t c = std::min(per_launch, batch - b);
    batched_impl<T>(buf.lower.data() + b * n * n, buf.upper.data() + b * n * n, n, c, stream, BatchedMethod::Auto);
    if (b + c < batch && (o.control.cancelled || o.control.progress)) {
      GF_CUDA_TRY(cudaStreamSynchronize(stream));
      if (o.control.progress) o.control.progress(double(b + c) / double(batch));
      if (o.control.cancelled && o.control.cancelled()) {
        if (cancelled) *cancelled = true;
        return {};
      }
    }
  }
  auto reports = consistency_impl<T>(buf.lower.data(), buf.upper.data(), n, batch, o.tolerance, stream);
  download<T>(lower.data(), buf.lower.data(), count, buf.staging_ptr(), buf.staging_count, stream);
  download<T>(upper.data(), buf.upper.data(), count, buf.staging_ptr(), buf.staging_count, stream);
  return reports;
}

}  // namespace

// The arrays of a DeviceBounds (smoothing_cuda.hpp).
struct DeviceBounds::Impl {
  int device = 0;
  std::size_t n = 0;
  DeviceBuffer<double> lower, upper;  // synchronous mode: freeing waits for the device
  Impl() = default;
  Impl(const Impl&) = delete;
  Impl& operator=(const Impl&) = delete;
  ~Impl() {  // freed with its device current (the last holder may run on any thread)
    int previous = 0;
    if (lower.empty() && upper.empty()) return;
    if (cudaGetDevice(&previous) != cudaSuccess) previous = -1;
    GF_CUDA_TRY_NO_THROW(cudaSetDevice(device));
    lower.reset();
    upper.reset();
    if (previous >= 0 && previous != device) GF_CUDA_TRY_NO_THROW(cudaSetDevice(previous));
  }
};

namespace {

// ---- a closure kept on the device ------------------------------------------------------------

/// Pairs i < j (of n×n arrays) where the closure (lower, upper; T) differs from the input
/// (in_lower, in_upper; fp64), compared as the host path compares the downloaded closure: in fp64
/// after the same float → double conversion (convert_kernel's static_cast).
template <class T>
__global__ void count_changed_kernel(const double* in_lower, const double* in_upper, const T* lower, const T* upper,
                                     idx_t n, unsigned long long* count) {
  unsigned long long local = 0;
  for (idx_t e = blockIdx.x * static_cast<idx_t>(blockDim.x) + threadIdx.x; e < n * n;
       e += static_cast<idx_t>(gridDim.x) * blockDim.x)
    if (e % n > e / n && (static_cast<double>(lower[e]) != in_lower[e] || static_cast<double>(upper[e]) != in_upper[e]))
      ++local;
  if (local != 0) atomicAdd(count, local);
}

template <class T>
std::size_t count_changed(const double* in_lower, const double* in_upper, const T* lower, const T* upper, std::size_t n,
                          cudaStream_t s) {
  DeviceBuffer<unsigned long long> count(1);
  GF_CUDA_TRY(cudaMemsetAsync(count.data(), 0, sizeof(unsigned long long), s));
  const auto total = static_cast<idx_t>(n) * static_cast<idx_t>(n);
  count_changed_kernel<T>
      <<<grid_for(total, 256), 256, 0, s>>>(in_lower, in_upper, lower, upper, static_cast<idx_t>(n), count.data());
  GF_CUDA_CHECK_LAUNCH("count_changed_kernel");
  unsigned long long host = 0;
  GF_CUDA_TRY(cudaMemcpyAsync(&host, count.data(), sizeof host, cudaMemcpyDeviceToHost, s));
  GF_CUDA_TRY(cudaStreamSynchronize(s));
  return static_cast<std::size_t>(host);
}

// host_impl() with the closure left on the device. The input goes to fp64 arrays `in` (kept for
// the count); the working arrays are T, filled from `in` on the device by the conversion the
// host path's upload() makes (fp64: a copy), so the closure is the host path's bit for bit.
template <class T>
ResidentSmoothing resident_impl(std::span<const double> lower, std::span<const double> upper, std::size_t n,
                                Stream stream, const HostOptions& o) {
  const std::size_t count = n * n;
  const std::size_t bytes = count * sizeof(double);
  require_memory(n, device_bytes_needed(n, 1, std::is_same_v<T, float> ? Precision::fp32 : Precision::fp64) + 2 * bytes,
                 "one matrix, kept on the device");
  ResidentSmoothing r;
  DeviceBuffer<double> in_lower(count), in_upper(count);
  const auto t0 = std::chrono::steady_clock::now();
  GF_CUDA_TRY(cudaMemcpyAsync(in_lower.data(), lower.data(), bytes, cudaMemcpyHostToDevice, stream));
  GF_CUDA_TRY(cudaMemcpyAsync(in_upper.data(), upper.data(), bytes, cudaMemcpyHostToDevice, stream));
  GF_CUDA_TRY(cudaStreamSynchronize(stream));
  r.upload_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  r.upload_bytes = 2 * bytes;

  DeviceBuffer<T> work_lower(count), work_upper(count);
  if constexpr (std::is_same_v<T, double>) {
    GF_CUDA_TRY(cudaMemcpyAsync(work_lower.data(), in_lower.data(), bytes, cudaMemcpyDeviceToDevice, stream));
    GF_CUDA_TRY(cudaMemcpyAsync(work_upper.data(), in_upper.data(), bytes, cudaMemcpyDeviceToDevice, stream));
  } else {
    const int grid = grid_for(static_cast<idx_t>(count), 256);
    detail::convert_kernel<T, double>
        <<<grid, 256, 0, stream>>>(work_lower.data(), in_lower.data(), static_cast<idx_t>(count));
    GF_CUDA_CHECK_LAUNCH("convert_kernel (resident, lower)");
    detail::convert_kernel<T, double>
        <<<grid, 256, 0, stream>>>(work_upper.data(), in_upper.data(), static_cast<idx_t>(count));
    GF_CUDA_CHECK_LAUNCH("convert_kernel (resident, upper)");
  }
  validate_impl<T>(work_lower.data(), work_upper.data(), n, 1, o.tolerance, stream);
  if (!smooth_impl<T>(work_lower.data(), work_upper.data(), n, stream, o.control)) {
    GF_CUDA_TRY(cudaStreamSynchronize(stream));  // nothing in flight on buffers freed now
    r.result.cancelled = true;
    return r;
  }
  r.result.consistency = consistency_impl<T>(work_lower.data(), work_upper.data(), n, 1, o.tolerance, stream)[0];
  r.changed_pairs = count_changed<T>(in_lower.data(), in_upper.data(), work_lower.data(), work_upper.data(), n, stream);

  auto impl = std::make_unique<DeviceBounds::Impl>();
  impl->device = o.device;
  impl->n = n;
  if constexpr (std::is_same_v<T, double>) {
    impl->lower = std::move(work_lower);
    impl->upper = std::move(work_upper);
  } else {  // the fp64 closure, converted as download() converts it, into the input's arrays
    const int grid = grid_for(static_cast<idx_t>(count), 256);
    detail::convert_kernel<double, T>
        <<<grid, 256, 0, stream>>>(in_lower.data(), work_lower.data(), static_cast<idx_t>(count));
    GF_CUDA_CHECK_LAUNCH("convert_kernel (resident result, lower)");
    detail::convert_kernel<double, T>
        <<<grid, 256, 0, stream>>>(in_upper.data(), work_upper.data(), static_cast<idx_t>(count));
    GF_CUDA_CHECK_LAUNCH("convert_kernel (resident result, upper)");
    impl->lower = std::move(in_lower);
    impl->upper = std::move(in_upper);
  }
  GF_CUDA_TRY(cudaStreamSynchronize(stream));  // complete before it is handed out (and work is freed)
  r.bounds = DeviceBounds(std::move(impl));
  return r;
}

void check_host_sizes(std::span<double> lower, std::span<double> upper, std::size_t count, const char* fn) {
  if (lower.size() != count || upper.size() != count)
    throw std::invalid_argument(std::string(fn) + ": lower/upper have " + std::to_string(lower.size()) + "/" +
                                std::to_string(upper.size()) + " elements, expected " + std::to_string(count));
}

}  // namespace

// ---- DeviceBounds -----------------------------------------------------------------------------

DeviceBounds::DeviceBounds() = default;
DeviceBounds::DeviceBounds(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
DeviceBounds::~DeviceBounds() = default;
DeviceBounds::DeviceBounds(DeviceBounds&&) noexcept = default;
DeviceBounds& DeviceBounds::operator=(DeviceBounds&&) noexcept = default;
int DeviceBounds::device() const noexcept { return impl_ ? impl_->device : 0; }
std::size_t DeviceBounds::n() const noexcept { return impl_ ? impl_->n : 0; }
const double* DeviceBounds::lower() const noexcept { return impl_ ? impl_->lower.data() : nullptr; }
const double* DeviceBounds::upper() const noexcept { return impl_ ? impl_->upper.data() : nullptr; }

void DeviceBounds::download(std::span<double> lower, std::span<double> upper) const {
  const std::size_t count = n() * n();
  if (lower.size() != count || upper.size() != count)
    throw std::invalid_argument("DeviceBounds::download: lower/upper have " + std::to_string(lower.size()) + "/" +
                                std::to_string(upper.size()) + " elements, expected " + std::to_string(count));
  if (count == 0) return;
  DeviceGuard guard(impl_->device);
  GF_CUDA_TRY(cudaMemcpy(lower.data(), impl_->lower.data(), count * sizeof(double), cudaMemcpyDeviceToHost));
  GF_CUDA_TRY(cudaMemcpy(upper.data(), impl_->upper.data(), count * sizeof(double), cudaMemcpyDeviceToHost));
}

// ---- public API -------------------------------------------------------------------------------

std::size_t device_bytes_needed(std::size_t n, std::size_t batch, Precision p) noexcept {
  const std::size_t count = n * n * batch;
  const std::size_t elem = p == Precision::fp32 ? sizeof(float) : sizeof(double);
  const std::size_t staging = p == Precision::fp32 ? std::min(count, kStagingElems) : 0;
  return 2 * count * elem + staging * sizeof(double) + (std::size_t(1) << 20);
}

void require_device_memory(std::size_t n, std::size_t bytes) { require_memory(n, bytes, "requested"); }

int device_count() noexcept {
  int count = 0;
  if (cudaGetDeviceCount(&count) != cudaSuccess) {
    (void)cudaGetLastError();
    return 0;
  }
  return count;
}

void validate_bounds_device(const float* l, const float* u, std::size_t n, double tol, Stream s) {
  validate_impl(l, u, n, 1, tol, s);
}
void validate_bounds_device(const double* l, const double* u, std::size_t n, double tol, Stream s) {
  validate_impl(l, u, n, 1, tol, s);
}
bool smooth_bounds_device(float* l, float* u, std::size_t n, Stream s, const Control& c) {
  return smooth_impl(l, u, n, s, c);
}
bool smooth_bounds_device(double* l, double* u, std::size_t n, Stream s, const Control& c) {
  return smooth_impl(l, u, n, s, c);
}
ConsistencyReport check_consistency_device(const float* l, const float* u, std::size_t n, double tol, Stream s) {
  return consistency_impl(l, u, n, 1, tol, s)[0];
}
ConsistencyReport check_consistency_device(const double* l, const double* u, std::size_t n, double tol, Stream s) {
  return consistency_impl(l, u, n, 1, tol, s)[0];
}
void validate_bounds_batched_device(const float* l, const float* u, std::size_t n, std::size_t batch, double tol,
                                    Stream s) {
  validate_impl(l, u, n, batch, tol, s);
}
void validate_bounds_batched_device(const double* l, const double* u, std::size_t n, std::size_t batch, double tol,
                                    Stream s) {
  validate_impl(l, u, n, batch, tol, s);
}
BatchedMethod batched_method_for(std::size_t n, Precision precision) noexcept {
  // Crossovers measured on an H100 (docs/performance.md): fp32 blocked from n = 65, fp64 per-block
  // (shared memory) still ahead at 65 and behind at 96.
  return n <= (precision == Precision::fp32 ? 64u : 80u) ? BatchedMethod::PerBlock : BatchedMethod::Blocked;
}
const char* to_string(BatchedMethod m) noexcept {
  switch (m) {
    case BatchedMethod::Auto: return "auto";
    case BatchedMethod::PerBlock: return "per-block";
    case BatchedMethod::Blocked: return "blocked";
  }
  return "?";
}
void smooth_bounds_batched_device(float* l, float* u, std::size_t n, std::size_t batch, Stream s,
                                  BatchedMethod method) {
  batched_impl(l, u, n, batch, s, method);
}
void smooth_bounds_batched_device(double* l, double* u, std::size_t n, std::size_t batch, Stream s,
                                  BatchedMethod method) {
  batched_impl(l, u, n, batch, s, method);
}
std::vector<ConsistencyReport> check_consistency_batched_device(const float* l, const float* u, std::size_t n,
                                                                std::size_t batch, double tol, Stream s) {
  return consistency_impl(l, u, n, batch, tol, s);
}
std::vector<ConsistencyReport> check_consistency_batched_device(const double* l, const double* u, std::size_t n,
                                                                std::size_t batch, double tol, Stream s) {
  return consistency_impl(l, u, n, batch, tol, s);
}

SmoothingResult smooth_bounds_cuda(std::span<double> lower, std::span<double> upper, std::size_t n, Stream stream,
                                   const HostOptions& o) {
  check_host_sizes(lower, upper, n * n, "smooth_bounds_cuda");
  if (n == 0) return {};
  DeviceGuard guard(o.device);
  return o.precision == Precision::fp32 ? host_impl<float>(lower, upper, n, stream, o)
                                        : host_impl<double>(lower, upper, n, stream, o);
}

ResidentSmoothing smooth_bounds_cuda_resident(std::span<const double> lower, std::span<const double> upper,
                                              std::size_t n, Stream stream, const HostOptions& o) {
  if (lower.size() != n * n || upper.size() != n * n)
    throw std::invalid_argument("smooth_bounds_cuda_resident: lower/upper have " + std::to_string(lower.size()) + "/" +
                                std::to_string(upper.size()) + " elements, expected " + std::to_string(n * n));
  ResidentSmoothing r;
  if (n == 0) return r;
  DeviceGuard guard(o.device);
  return o.precision == Precision::fp32 ? resident_impl<float>(lower, upper, n, stream, o)
                                        : resident_impl<double>(lower, upper, n, stream, o);
}

std::vector<ConsistencyReport> smooth_bounds_batched_cuda(std::span<double> lower, std::span<double> upper,
                                                          std::size_t n, std::size_t batch, Stream stream,
                                                          const HostOptions& o, bool* cancelled) {
  check_host_sizes(lower, upper, n * n * batch, "smooth_bounds_batched_cuda");
  GF_EXPECTS(n <= max_batched_n, "smooth_bounds_batched_cuda: n = " + std::to_string(n) +
                                     " > max_batched_n = " + std::to_string(max_batched_n));
  if (cancelled) *cancelled = false;
  if (n == 0 || batch == 0) return std::vector<ConsistencyReport>(batch);
  DeviceGuard guard(o.device);
  return o.precision == Precision::fp32 ? host_batched_impl<float>(lower, upper, n, batch, stream, o, cancelled)
                                        : host_batched_impl<double>(lower, upper, n, batch, stream, o, cancelled);
}

}  // namespace gemflow::distgeom::cuda
