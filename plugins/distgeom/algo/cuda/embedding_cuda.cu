// Metric matrix and Cholesky embedding on a CUDA device (see gemflow/distgeom/embedding_cuda.hpp).
//
// Kernels: (1) row sums Σ_j D_ij², one thread per row summing sequentially in j (the CPU order)
// from 32×32 tiles staged through shared memory so that the loads are coalesced; (2) one block:
// the total Σ_i row_i sequentially on one thread, then D_i0² per row; (3) G from 32×32 tiles,
// written row- or column-major (the column-major store goes through shared memory). Every
// product, sum and difference uses the _rn intrinsics so that nvcc cannot fuse them into FMAs:
// the operations are the CPU metric_matrix()'s, in its order. The factorisation is linalg's
// GpuCholesky::factor_pivoted; the k×k eigenproblem and the coordinates are computed on the host
// by embed_from_pivoted_cholesky() (embedding.hpp), the CPU path's own code.
#include <cuda_runtime.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <stdexcept>
#include <string>
#include <vector>

#include "gemflow/cuda/buffer.hpp"
#include "gemflow/cuda/check.hpp"
#include "gemflow/distgeom/embedding_cuda.hpp"
#include "gemflow/linalg/cholesky_cuda.hpp"

namespace gemflow::distgeom::cuda {
namespace detail {
namespace {

constexpr int kTile = 32;  // tile edge (one warp wide)
constexpr int kRows = 8;   // thread rows per tile: blocks of 32×8 threads

// row[i] = Σ_j d(i, j)², j = 0, 1, …, n−1 in that order (metric_matrix()'s loop).
__global__ void __launch_bounds__(kTile* kRows)
    row_sums_kernel(const double* __restrict__ d, std::int64_t n, double* __restrict__ row) {
  __shared__ double tile[kTile][kTile + 1];
  const std::int64_t i0 = static_cast<std::int64_t>(blockIdx.x) * kTile;
  const int tx = static_cast<int>(threadIdx.x), ty = static_cast<int>(threadIdx.y);
  double s = 0.0;
  for (std::int64_t j0 = 0; j0 < n; j0 += kTile) {
    for (int r = ty; r < kTile; r += kRows) {
      const std::int64_t i = i0 + r, j = j0 + tx;
      tile[r][tx] = i < n && j < n ? d[i * n + j] : 0.0;
    }
    __syncthreads();
    if (ty == 0) {
      const int m = static_cast<int>(n - j0 < kTile ? n - j0 : kTile);
      for (int c = 0; c < m; ++c) {
        const double v = tile[tx][c];
        s = __dadd_rn(s, __dmul_rn(v, v));
      }
    }
    __syncthreads();
  }
  if (ty == 0 && i0 + tx < n) row[i0 + tx] = s;
}

// work[0..n): row sums in, D_i0² out; work[n]: the total ½ Σ_i row_i. One block.
__global__ void centre_kernel(double* work, std::int64_t n) {
  __shared__ double s_total;
  if (threadIdx.x == 0) {
    double total = 0.0;
    for (std::int64_t i = 0; i < n; ++i) total = __dadd_rn(total, work[i]);
    total = __dmul_rn(total, 0.5);
    s_total = total;
    work[n] = total;
  }
  __syncthreads();
  const double inv = 1.0 / static_cast<double>(n);
  const double t = __dmul_rn(__dmul_rn(s_total, inv), inv);  // total · inv · inv, left to right
  for (std::int64_t i = threadIdx.x; i < n; i += blockDim.x) work[i] = __dsub_rn(__dmul_rn(work[i], inv), t);
}

// out(i, j) = f(i, j, in[i·n + j]) for the kTile×kTile tile of this block, stored at i·n + j
// (ColMajor = false) or, through a shared tile so that both sides stay coalesced, at i + j·n.
template <bool ColMajor, class F>
__device__ __forceinline__ void tile_map(const double* __restrict__ in, std::int64_t n, double* __restrict__ out, F f) {
  __shared__ double tile[kTile][kTile + 1];
  const std::int64_t i0 = static_cast<std::int64_t>(blockIdx.y) * kTile;
  const std::int64_t j0 = static_cast<std::int64_t>(blockIdx.x) * kTile;
  const int tx = static_cast<int>(threadIdx.x), ty = static_cast<int>(threadIdx.y);
  for (int r = ty; r < kTile; r += kRows) {
    const std::int64_t i = i0 + r, j = j0 + tx;
    if (i < n && j < n) {
      const double x = f(i, j, in[i * n + j]);
      if constexpr (ColMajor) tile[r][tx] = x;
      else out[i * n + j] = x;
    }
  }
  if constexpr (ColMajor) {
    __syncthreads();
    for (int c = ty; c < kTile; c += kRows) {
      const std::int64_t i = i0 + tx, j = j0 + c;
      if (i < n && j < n) out[i + j * n] = tile[tx][c];
    }
  }
}

// G(i, j) = 0.5 · ((D_i0² + D_j0²) − d(i, j)²), stored row- or column-major.
template <bool ColMajor>
__global__ void __launch_bounds__(kTile* kRows)
    metric_kernel(const double* __restrict__ d, const double* __restrict__ d0, std::int64_t n, double* __restrict__ g) {
  tile_map<ColMajor>(d, n, g, [d0](std::int64_t i, std::int64_t j, double v) {
    return __dmul_rn(0.5, __dsub_rn(__dadd_rn(d0[i], d0[j]), __dmul_rn(v, v)));
  });
}

// out[i + j·n] = in[i·n + j] (row-major in → column-major out of the same matrix).
__global__ void __launch_bounds__(kTile* kRows)
    transpose_kernel(const double* __restrict__ in, std::int64_t n, double* __restrict__ out) {
  tile_map<true>(in, n, out, [](std::int64_t, std::int64_t, double v) { return v; });
}

dim3 tile_grid(std::size_t n) {
  const auto t = static_cast<unsigned>((n + kTile - 1) / kTile);
  return dim3(t, t);
}

void check_grid(std::size_t n, const char* what) {
  if ((n + kTile - 1) / kTile > 65535)
    throw std::invalid_argument(std::string(what) + ": n = " + std::to_string(n) + " exceeds the " +
                                std::to_string(65535 * kTile) + " rows the tile grid covers");
}

using ByteBuffer = ::gemflow::cuda::DeviceBuffer<std::byte>;

// Grows `buffer` to at least `want` bytes (after a free-memory check; the old contents are lost);
// never shrinks it.
void* ensure(ByteBuffer& buffer, std::size_t want, std::size_t n, const char* what) {
  if (want <= buffer.size()) return buffer.data();
  buffer.deallocate();
  std::size_t free_b = 0, total_b = 0;
  GF_CUDA_TRY(cudaMemGetInfo(&free_b, &total_b));
  if (want > free_b) {
    int dev = 0;
    GF_CUDA_TRY(cudaGetDevice(&dev));
    throw CudaError(std::string(what) + " (n = " + std::to_string(n) + ") needs " + std::to_string(want) +
                    " more bytes of device memory, cuda:" + std::to_string(dev) + " has " + std::to_string(free_b) +
                    " free of " + std::to_string(total_b));
  }
  buffer.allocate(want);
  return buffer.data();
}

}  // namespace
}  // namespace detail

void metric_matrix_device(const double* d, std::size_t n, double* g, MatrixLayout layout, double* work, Stream stream) {
  if (n == 0) return;
  GF_EXPECTS(d != nullptr && g != nullptr && work != nullptr, "metric_matrix_device: null pointer");
  GF_EXPECTS(d != g, "metric_matrix_device: g must not alias d");
  detail::check_grid(n, "metric_matrix_device");
  const auto nn = static_cast<std::int64_t>(n);
  const dim3 block(detail::kTile, detail::kRows);
  const auto row_blocks = static_cast<unsigned>((n + detail::kTile - 1) / detail::kTile);
  detail::row_sums_kernel<<<row_blocks, block, 0, stream>>>(d, nn, work);
  GF_CUDA_CHECK_LAUNCH("row_sums_kernel");
  detail::centre_kernel<<<1, 1024, 0, stream>>>(work, nn);
  GF_CUDA_CHECK_LAUNCH("centre_kernel");
  if (layout == MatrixLayout::col_major)
    detail::metric_kernel<true><<<detail::tile_grid(n), block, 0, stream>>>(d, work, nn, g);
  else detail::metric_kernel<false><<<detail::tile_grid(n), block, 0, stream>>>(d, work, nn, g);
  GF_CUDA_CHECK_LAUNCH("metric_kernel");
}

// ---------------------------------------------------------------------------------------------
struct GpuEmbedder::Impl {
  int device = 0;
  cudaStream_t stream = nullptr;
  std::unique_ptr<::gemflow::linalg::cuda::GpuCholesky> chol;
  detail::ByteBuffer in, g, work, l, flags;

  bool owns_stream = false;

  Impl(int dev, cudaStream_t s, bool own) : device(dev), stream(s) {
    GF_CUDA_TRY(cudaSetDevice(device));
    if (own) {
      GF_CUDA_TRY(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
      owns_stream = true;
    }
    try {
      chol = std::make_unique<::gemflow::linalg::cuda::GpuCholesky>(stream);
    } catch (const CudaError& e) {
      if (owns_stream) GF_CUDA_TRY_NO_THROW(cudaStreamDestroy(stream));
      throw CudaError("GpuEmbedder", e);
    }
  }
  ~Impl() {
    GF_CUDA_TRY_NO_THROW(cudaSetDevice(device));
    chol.reset();
    in.reset();
    g.reset();
    work.reset();
    l.reset();
    flags.reset();
    if (owns_stream) GF_CUDA_TRY_NO_THROW(cudaStreamDestroy(stream));
  }

  void activate() { GF_CUDA_TRY(cudaSetDevice(device)); }

  // Uploads a host n×n matrix into `in`.
  double* upload(std::span<const double> host, std::size_t n, const char* what) {
    auto* p = static_cast<double*>(detail::ensure(in, sizeof(double) * n * n, n, what));
    GF_CUDA_TRY(cudaMemcpyAsync(p, host.data(), sizeof(double) * n * n, cudaMemcpyHostToDevice, stream));
    return p;
  }

  // Pivoted Cholesky of the column-major G in `g`, then the host half of embed().
  /// Uploads the n×n distances d and forms their metric matrix in `g` with `layout`.
  double* metric_on_device(std::span<const double> d, std::size_t n, MatrixLayout layout, const char* what) {
    detail::check_grid(n, what);
    const double* dd = upload(d, n, what);
    auto* gd = static_cast<double*>(detail::ensure(g, sizeof(double) * n * n, n, what));
    auto* wd = static_cast<double*>(detail::ensure(work, sizeof(double) * (n + 1), n, what));
    metric_matrix_device(dd, n, gd, layout, wd, stream);
    return gd;
  }

  EmbedResult factor_and_embed(std::size_t n, std::size_t dim, std::size_t cholesky_rank,
                               std::span<const unsigned char> pivot_candidates, const char* what) {
    const std::size_t k = embed_cholesky_columns(n, dim, cholesky_rank);
    auto* lp = static_cast<double*>(detail::ensure(l, sizeof(double) * n * k, n, what));
    const unsigned char* allowed = nullptr;
    if (!pivot_candidates.empty()) {
      auto* fp = static_cast<unsigned char*>(detail::ensure(flags, n, n, what));
      GF_CUDA_TRY(cudaMemcpyAsync(fp, pivot_candidates.data(), n, cudaMemcpyHostToDevice, stream));
      allowed = fp;
    }
    const auto nn = static_cast<std::int64_t>(n);
    linalg::PivotedCholesky f;
    try {
      f = chol->factor_pivoted(reinterpret_cast<const double*>(g.data()), nn, nn, static_cast<std::int64_t>(k), 0.0, lp,
                               nn, allowed);
    } catch (const CudaError& e) {  // linalg's, the same type: add the entry point's name
      throw CudaError(what, e);
    }
    std::vector<double> host_l(n * k);
    GF_CUDA_TRY(cudaMemcpyAsync(host_l.data(), lp, sizeof(double) * n * k, cudaMemcpyDeviceToHost, stream));
    GF_CUDA_TRY(cudaStreamSynchronize(stream));
    return embed_from_pivoted_cholesky(f, host_l.data(), 1, n, n, dim);
  }
};

namespace {

void check_embed_args(std::size_t size, std::size_t n, std::size_t dim, std::span<const unsigned char> candidates,
                      const char* matrix_message) {
  if (size != n * n) throw std::invalid_argument(matrix_message);
  if (dim < 1 || dim > 4) throw std::invalid_argument("embed: dim must be 1..4");
  if (n < dim + 1) throw std::invalid_argument("embed: need more than dim points");
  if (!candidates.empty() && candidates.size() != n)
    throw std::invalid_argument("embed: " + std::to_string(candidates.size()) + " pivot candidate flags for " +
                                std::to_string(n) + " atoms");
}

}  // namespace

GpuEmbedder::GpuEmbedder(int device, Stream stream) : impl_(std::make_unique<Impl>(device, stream, false)) {}
GpuEmbedder::GpuEmbedder(int device) : impl_(std::make_unique<Impl>(device, nullptr, true)) {}
GpuEmbedder::~GpuEmbedder() = default;

int GpuEmbedder::device() const noexcept { return impl_->device; }

std::size_t GpuEmbedder::device_bytes() const noexcept {
  const auto& m = *impl_;
  return m.in.size() + m.g.size() + m.work.size() + m.l.size() + m.flags.size() + m.chol->workspace_bytes();
}

void GpuEmbedder::metric_matrix(std::span<const double> d, std::size_t n, std::span<double> g) {
  if (d.size() != n * n || g.size() != n * n)
    throw std::invalid_argument("metric_matrix: expected " + std::to_string(n) + "×" + std::to_string(n) +
                                " distance and metric buffers");
  if (n == 0) return;
  auto& m = *impl_;
  m.activate();
  const double* gd = m.metric_on_device(d, n, MatrixLayout::row_major, "metric matrix (cuda)");
  GF_CUDA_TRY(cudaMemcpyAsync(g.data(), gd, sizeof(double) * n * n, cudaMemcpyDeviceToHost, m.stream));
  GF_CUDA_TRY(cudaStreamSynchronize(m.stream));
}

EmbedResult GpuEmbedder::embed(std::span<const double> g, std::size_t n, std::size_t dim, std::size_t cholesky_rank,
                               std::span<const unsigned char> pivot_candidates) {
  check_embed_args(g.size(), n, dim, pivot_candidates, "embed: metric matrix is not n×n");
  auto& m = *impl_;
  m.activate();
  const char* what = "embed (cholesky, cuda)";
  detail::check_grid(n, what);
  const double* gin = m.upload(g, n, what);
  auto* gd = static_cast<double*>(detail::ensure(m.g, sizeof(double) * n * n, n, what));
  // The CPU reads the row-major lower triangle; GpuCholesky reads the column-major one.
  detail::transpose_kernel<<<detail::tile_grid(n), dim3(detail::kTile, detail::kRows), 0, m.stream>>>(
      gin, static_cast<std::int64_t>(n), gd);
  GF_CUDA_CHECK_LAUNCH("transpose_kernel");
  return m.factor_and_embed(n, dim, cholesky_rank, pivot_candidates, what);
}

EmbedResult GpuEmbedder::embed_distances(std::span<const double> d, std::size_t n, std::size_t dim,
                                         std::size_t cholesky_rank, std::span<const unsigned char> pivot_candidates) {
  check_embed_args(
      d.size(), n, dim, pivot_candidates,
      ("metric_matrix: expected " + std::to_string(n) + "×" + std::to_string(n) + " distance and metric buffers")
          .c_str());
  auto& m = *impl_;
  m.activate();
  const char* what = "metric matrix + embed (cholesky, cuda)";
  // G(i, j) from d[i·n + j] stored column-major: GpuCholesky's lower triangle is the CPU's.
  (void)m.metric_on_device(d, n, MatrixLayout::col_major, what);
  return m.factor_and_embed(n, dim, cholesky_rank, pivot_candidates, what);
}

}  // namespace gemflow::distgeom::cuda
