// CUDA renderer: chaos game (basic and divergence-free), fixed-point histogram (split u32 words
// or u64), density estimation, spatial filter and tone map on the device (render_cuda.hpp
// documents it).
#include <cooperative_groups.h>
#include <cooperative_groups/reduce.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstring>
#include <vector>

#include <gemflow/cuda/buffer.hpp>
#include <gemflow/cuda/check.hpp>
#include <gemflow/cuda/timing.hpp>

#include "gemflow/flame/detail/de_gather.hpp"
#include "gemflow/flame/detail/postprocess.hpp"
#include "gemflow/flame/detail/prepare.hpp"
#include "gemflow/flame/detail/split_hist.hpp"
#include "gemflow/flame/render_cuda.hpp"

namespace gemflow::flame::cuda {
namespace {

using detail::Camera;
using detail::kGrain;
using detail::KXform;
using gemflow::cuda::DeviceBuffer;
namespace cg = cooperative_groups;

constexpr int kBlock = 256;

/// Walker state between launches (structure of arrays).
struct Walkers {
  float* x;
  float* y;
  float* c;
  unsigned long long* rng_state;
  unsigned long long* rng_inc;
  int* row;                  ///< basic: the selection row (xaos)
  unsigned long long* done;  ///< basic: iterations run, fuse included
};

struct Scene {
  const KXform<float>* xf;
  int n_xforms;  ///< without the final xform
  int has_final;
  float final_opacity;
  const unsigned short* table;
  int chaos;
  const float* palette;
  int step_mode;
  Camera<float> cam;
  unsigned long long* hist;  ///< Histogram::U64 and U64Aggregated: 4 channels per cell
  unsigned* lo;              ///< Histogram::Split32: low words (detail/split_hist.hpp) …
  unsigned* hi;              ///< … and high words, 4 per cell each
  int mode;                  ///< 0: U64, 1: Split32, 2: U64Aggregated
  int fuse;
};

/// splitmix64: a counter-based 64-bit mix for the warp-uniform draws and the permutations.
__host__ __device__ inline unsigned long long mix64(unsigned long long z) {
  z += 0x9e3779b97f4a7c15ull;
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

__device__ inline void plot(const Scene& s, int fn, float x, float y, float c, Pcg32& rng) {
  const float vis = s.xf[fn].vis;
  if (vis == 0.0f) return;
  float px = x, py = y, pc = c;
  if (s.has_final && (s.final_opacity == 1.0f || uniform01<float>(rng) < s.final_opacity))
    if (!detail::apply_xform(s.xf[s.n_xforms], x, y, c, px, py, pc, rng)) return;
  int ix, iy;
  if (!detail::to_cell(s.cam, px, py, ix, iy)) return;
  float col[4];
  detail::palette_color(s.palette, s.step_mode, pc, col);
  const size_t cell = static_cast<size_t>(iy) * s.cam.width + ix;
  if (s.mode == 0) {
    unsigned long long* h = s.hist + cell * 4;
    for (int k = 0; k < 4; ++k) {
      const unsigned long long v = detail::to_fixed(col[k] * vis);
      if (v) atomicAdd(h + k, v);
    }
    return;
  }
  // Split words: the lanes of the warp that plot into the same cell add their increments first
  // (integer sums: exact, any order), and one of them makes the cell's atomics. Each increment is
  // about 2^26 at most (render_cuda checks palette · opacity ≤ 4), so a warp's sum of 32 stays
  // below 2^32.
  const cg::coalesced_group active = cg::coalesced_threads();
  const cg::coalesced_group peers = cg::labeled_partition(active, static_cast<unsigned>(cell));
  unsigned sum[4];
  for (int k = 0; k < 4; ++k)
    sum[k] = cg::reduce(peers, static_cast<unsigned>(detail::to_fixed(col[k] * vis)), cg::plus<unsigned>());
  if (peers.thread_rank() != 0) return;
  for (int k = 0; k < 4; ++k) {
    if (!sum[k]) continue;
    if (s.mode == 2) {
      atomicAdd(s.hist + cell * 4 + k, static_cast<unsigned long long>(sum[k]));
      continue;
    }
    const unsigned old = atomicAdd(s.lo + cell * 4 + k, sum[k]);
    if (detail::split_wrapped(old, sum[k])) atomicAdd(s.hi + cell * 4 + k, 1u);
  }
}

__global__ void init_walkers(Walkers w, unsigned long long n, unsigned long long seed) {
  const unsigned long long i = blockIdx.x * static_cast<unsigned long long>(blockDim.x) + threadIdx.x;
  if (i >= n) return;
  Pcg32 rng(seed, i);
  w.x[i] = uniform01<float>(rng) * 2.0f - 1.0f;
  w.y[i] = uniform01<float>(rng) * 2.0f - 1.0f;
  w.c[i] = uniform01<float>(rng);
  w.rng_state[i] = rng.state;
  w.rng_inc[i] = rng.inc;
  w.row[i] = 0;
  w.done[i] = 0;
}

/// basic: each thread runs its walker `iters` more iterations (fuse first), up to its quota.
__global__ void basic_kernel(Scene s, Walkers w, unsigned long long n, unsigned long long per_walker,
                             unsigned long long extra, unsigned long long iters, unsigned long long* bad_count) {
  const unsigned long long i = blockIdx.x * static_cast<unsigned long long>(blockDim.x) + threadIdx.x;
  if (i >= n) return;
  const unsigned long long quota = per_walker + (i < extra ? 1 : 0) + s.fuse;
  unsigned long long done = w.done[i];
  if (done >= quota) return;
  const unsigned long long end = min(quota, done + iters);
  Pcg32 rng;
  rng.state = w.rng_state[i];
  rng.inc = w.rng_inc[i];
  float x = w.x[i], y = w.y[i], c = w.c[i];
  int row = w.row[i];
  unsigned long long bad = 0;
  for (; done < end; ++done) {
    const int fn = s.table[row * kGrain + (rng.next() & (kGrain - 1))];
    float nx, ny, nc;
    if (!detail::apply_xform(s.xf[fn], x, y, c, nx, ny, nc, rng)) {
      ++bad;
      x = uniform01<float>(rng) * 2.0f - 1.0f;
      y = uniform01<float>(rng) * 2.0f - 1.0f;
      continue;
    }
    x = nx;
    y = ny;
    c = nc;
    if (s.chaos) row = fn + 1;
    if (done >= static_cast<unsigned long long>(s.fuse)) plot(s, fn, x, y, c, rng);
  }
  w.x[i] = x;
  w.y[i] = y;
  w.c[i] = c;
  w.row[i] = row;
  w.done[i] = done;
  w.rng_state[i] = rng.state;
  w.rng_inc[i] = rng.inc;
  if (bad) atomicAdd(bad_count, bad);
}

/// divergence_free: thread g loads the point of slot perm(g) = (a·g + b) mod n (n a power of
/// two, a odd: a bijection), then runs `iters` iterations; each iteration the warp draws one
/// xform (warp-uniform: no divergence on the choice) and the block permutes its points through
/// shared memory with another bijection. Points and colours move; the random streams stay with
/// the threads. All walkers advance together: `step0` is the global iteration of this launch.
__global__ void df_kernel(Scene s, Walkers in, Walkers out, unsigned long long n, unsigned long long a,
                          unsigned long long b, unsigned long long seed, unsigned long long step0, int iters,
                          unsigned long long* bad_count) {
  __shared__ float sx[kBlock], sy[kBlock], sc[kBlock];
  const unsigned long long g = blockIdx.x * static_cast<unsigned long long>(blockDim.x) + threadIdx.x;
  const unsigned long long src = (a * g + b) & (n - 1);
  float x = in.x[src], y = in.y[src], c = in.c[src];
  Pcg32 rng;
  rng.state = in.rng_state[g];
  rng.inc = in.rng_inc[g];
  const unsigned long long warp = g >> 5;
  unsigned long long bad = 0;
  for (int it = 0; it < iters; ++it) {
    const unsigned long long step = step0 + static_cast<unsigned long long>(it);
    const int fn = s.table[mix64(seed ^ mix64(warp * 0x100000001b3ull + step)) & (kGrain - 1)];
    float nx, ny, nc;
    int ok = detail::apply_xform(s.xf[fn], x, y, c, nx, ny, nc, rng);
    if (!ok) {
      ++bad;
      nx = uniform01<float>(rng) * 2.0f - 1.0f;
      ny = uniform01<float>(rng) * 2.0f - 1.0f;
      nc = c;
    }
    x = nx;
    y = ny;
    c = nc;
    if (ok && step >= static_cast<unsigned long long>(s.fuse)) plot(s, fn, x, y, c, rng);
    // Block permutation.
    const unsigned long long h = mix64(seed + 0x51ed27ull * (blockIdx.x + 1) + step);
    const unsigned pa = static_cast<unsigned>(h | 1u) & (kBlock - 1),
                   pb = static_cast<unsigned>(h >> 32) & (kBlock - 1);
    sx[threadIdx.x] = x;
    sy[threadIdx.x] = y;
    sc[threadIdx.x] = c;
    __syncthreads();
    const unsigned from = (pa * threadIdx.x + pb) & (kBlock - 1);
    x = sx[from];
    y = sy[from];
    c = sc[from];
    __syncthreads();
  }
  out.x[g] = x;
  out.y[g] = y;
  out.c[g] = c;
  out.rng_state[g] = rng.state;
  out.rng_inc[g] = rng.inc;
  if (bad) atomicAdd(bad_count, bad);
}

constexpr double kAccOne = 4294967296.0;  // DE accumulator: 2^32 units

/// Histogram views for the post kernels: a u64 histogram or split words, hist[cell·4 + channel].
template <class H>
__device__ inline void load_cell(const H& hist, size_t cell, unsigned long long h[4]) {
  for (int q = 0; q < 4; ++q) h[q] = hist[cell * 4 + q];
}

template <class H>
__global__ void log_density_kernel(H hist, double* acc, size_t cells, double k1, double k2) {
  const size_t i = blockIdx.x * static_cast<size_t>(blockDim.x) + threadIdx.x;
  if (i >= cells) return;
  unsigned long long h[4];
  load_cell(hist, i, h);
  detail::log_density(h, k1, k2, acc + i * 4);
}

struct DeDevice {
  const double* coefs;
  const unsigned long long* offsets;
  const int* radius;
  int kmax;
  double de_max, de_min, curve;
};

template <class H>
__global__ void de_kernel(H hist, unsigned long long* acc, int hw, int hh, int ss, double k1, double k2, DeDevice de) {
  const size_t cell = blockIdx.x * static_cast<size_t>(blockDim.x) + threadIdx.x;
  if (cell >= static_cast<size_t>(hw) * hh) return;
  const int x = static_cast<int>(cell % hw), y = static_cast<int>(cell / hw);
  if (x < ss - 1 || x >= hw - (ss - 1) || y < ss - 1 || y >= hh - (ss - 1)) return;
  unsigned long long h[4];
  load_cell(hist, static_cast<size_t>(y) * hw + x, h);
  if (h[3] == 0) return;
  const int half = ss / 2;
  double n = 0;
  for (int j = -half; j <= half; ++j)
    for (int i = -half; i <= half; ++i) {
      const int yy = y + j, xx = x + i;
      if (yy < 0 || xx < 0 || yy >= hh || xx >= hw) continue;
      n += static_cast<double>(hist[(static_cast<size_t>(yy) * hw + xx) * 4 + 3]) / detail::kFixedOne;
    }
  if (ss % 2 == 0) n *= (ss / (ss + 1.0)) * (ss / (ss + 1.0));
  double v[4];
  detail::log_density(h, k1, k2, v);
  const double kd = n <= 1 ? 1.0 : ceil(n);
  const int k = kd >= de.kmax ? de.kmax : static_cast<int>(kd);
  const int r = de.radius[k];
  const double* c = de.coefs + de.offsets[k];
  const int side = 2 * r + 1;
  for (int j = -r; j <= r; ++j) {
    const int yy = y + j;
    if (yy < 0 || yy >= hh) continue;
    for (int i = -r; i <= r; ++i) {
      const int xx = x + i;
      if (xx < 0 || xx >= hw) continue;
      const double w = c[(j + r) * side + (i + r)];
      if (w == 0) continue;
      unsigned long long* a = acc + (static_cast<size_t>(yy) * hw + xx) * 4;
      for (int q = 0; q < 4; ++q) {
        const unsigned long long add = static_cast<unsigned long long>(w * v[q] * kAccOne + 0.5);
        if (add) atomicAdd(a + q, add);
      }
    }
  }
}

// Density estimation, gather form (the default): each output cell sums the contributions of the
// source cells around it, read from a shared-memory tile, in a fixed order — no atomics, and
// the same bytes on every run. The scatter form above stays for estimator radii whose tile does
// not fit in shared memory.

/// Gather, first pass: each cell's log-density value and kernel index (detail::de_source).
template <class H>
__global__ void de_source_kernel(H hist, double* val, int* kidx, int hw, int hh, int ss, double k1, double k2,
                                 int kmax) {
  const size_t cell = blockIdx.x * static_cast<size_t>(blockDim.x) + threadIdx.x;
  if (cell >= static_cast<size_t>(hw) * hh) return;
  kidx[cell] = detail::de_source(hist, hw, hh, ss, k1, k2, kmax, static_cast<int>(cell % hw),
                                 static_cast<int>(cell / hw), val + cell * 4);
}

using detail::kDeTile;

/// Shared memory of a gather block for kernel radius R: (tile + 2R)² cells of 4 doubles + 1 int.
std::size_t de_gather_smem(int R) {
  const auto side = static_cast<std::size_t>(detail::de_tile_side(R));
  return side * side * (4 * sizeof(double) + sizeof(int));
}

/// Gather, second pass (detail/de_gather.hpp): block = kDeTile² output cells.
__global__ void de_gather_kernel(const double* val, const int* kidx, int hw, int hh, int R, DeDevice de, double* acc) {
  extern __shared__ double de_smem[];
  __shared__ int tile_r;
  const int S = detail::de_tile_side(R);
  double* sv = de_smem;
  int* sk = reinterpret_cast<int*>(de_smem + static_cast<size_t>(S) * S * 4);
  const int tx = static_cast<int>(threadIdx.x), ty = static_cast<int>(threadIdx.y);
  if (tx == 0 && ty == 0) tile_r = -1;
  __syncthreads();
  const int my_r = detail::de_tile_load(val, kidx, de.radius, hw, hh, R, static_cast<int>(blockIdx.x),
                                        static_cast<int>(blockIdx.y), ty * kDeTile + tx, kDeTile * kDeTile, sv, sk);
  if (my_r >= 0) atomicMax(&tile_r, my_r);
  __syncthreads();
  const int x = static_cast<int>(blockIdx.x) * kDeTile + tx, y = static_cast<int>(blockIdx.y) * kDeTile + ty;
  if (x >= hw || y >= hh) return;
  double a[4];
  detail::de_tile_sum(sv, sk, R, tile_r, de.coefs, de.offsets, tx, ty, a);
  double* o = acc + (static_cast<size_t>(y) * hw + x) * 4;
  for (int q = 0; q < 4; ++q) o[q] = a[q];
}

__global__ void de_to_double(const unsigned long long* in, double* out, size_t n) {
  const size_t i = blockIdx.x * static_cast<size_t>(blockDim.x) + threadIdx.x;
  if (i < n) out[i] = static_cast<double>(in[i]) / kAccOne;
}

/// earlyclip: each accumulator cell replaced by its tone values before the filter.
__global__ void tone_cells_kernel(double* acc, size_t cells, detail::ToneParams tone) {
  const size_t i = blockIdx.x * static_cast<size_t>(blockDim.x) + threadIdx.x;
  if (i >= cells) return;
  double v[4];
  detail::tone_values(acc + i * 4, tone, v);
  for (int q = 0; q < 4; ++q) acc[i * 4 + q] = v[q];
}

__global__ void filter_tone_kernel(const double* acc, int hw, const double* filter, int fw, int ss, int offset, int W,
                                   int H, detail::ToneParams tone, int earlyclip, unsigned char* out) {
  const size_t pixel = blockIdx.x * static_cast<size_t>(blockDim.x) + threadIdx.x;
  if (pixel >= static_cast<size_t>(W) * H) return;
  const int i = static_cast<int>(pixel % W), j = static_cast<int>(pixel / W);
  const int xs = offset + i * ss, ys = offset + j * ss;
  double t[4] = {0, 0, 0, 0};
  for (int jj = 0; jj < fw; ++jj)
    for (int ii = 0; ii < fw; ++ii) {
      const double k = filter[jj * fw + ii];
      const double* a = acc + ((static_cast<size_t>(ys + jj)) * hw + xs + ii) * 4;
      for (int q = 0; q < 4; ++q) t[q] += k * a[q];
    }
  double v[4];
  if (earlyclip) {
    for (int q = 0; q < 4; ++q) v[q] = t[q];
  } else {
    detail::tone_values(t, tone, v);
  }
  detail::to_rgba8(v, tone, out + (static_cast<size_t>(j) * W + i) * 4);
}

__global__ void eval_variations_kernel(const int* ids, const float* pts, const float* params, const float* coefs,
                                       const unsigned long long* seeds, float* out, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  VarPoint<float> q;
  q.tx = pts[2 * i];
  q.ty = pts[2 * i + 1];
  q.sumsq = q.tx * q.tx + q.ty * q.ty;
  q.sqrt_ = sqrtf(q.sumsq);
  q.atan_xy = atan2f(q.tx, q.ty);
  q.atan_yx = atan2f(q.ty, q.tx);
  q.coefs = coefs + 6 * i;
  float px = 0, py = 0;
  Pcg32 rng(seeds[i], 3);
  eval_variation(ids[i], pts[2 * n + i], q, params + static_cast<size_t>(kNumVarParams) * i, px, py, rng);
  out[2 * i] = px;
  out[2 * i + 1] = py;
}

unsigned blocks_for(unsigned long long n) { return static_cast<unsigned>((n + kBlock - 1) / kBlock); }

template <class T>
DeviceBuffer<T> upload(const std::vector<T>& v) {
  DeviceBuffer<T> d(v.size());
  if (!v.empty()) GF_CUDA_TRY(cudaMemcpy(d.data(), v.data(), v.size() * sizeof(T), cudaMemcpyHostToDevice));
  return d;
}

/// Seconds of the post-processing phases: density (log density, density estimation), filter
/// and tone map (device event time), copy of the image to the host (host time).
struct PostTimes {
  double density = 0, filter_tone = 0, copy = 0;
};

/// Device post-processing of the current histogram into RGBA8.
class DevicePost {
 public:
  DevicePost(const Flame& f, const detail::PostParams& p, int device, bool force_scatter) : f_(f), p_(p) {
    filter_ = upload(p.filter);
    const std::size_t cells = p.shape.width * p.shape.height;
    acc_ = DeviceBuffer<double>(cells * 4);
    if (p.de) {
      const detail::DeKernels k(p);
      coefs_ = upload(k.coefs);
      std::vector<unsigned long long> off(k.offsets.begin(), k.offsets.end());
      offsets_ = upload(off);
      radius_ = upload(k.radius);
      kmax_ = k.kmax;
      for (int r : k.radius) max_radius_ = std::max(max_radius_, r);
      int optin = 0;
      GF_CUDA_TRY(cudaDeviceGetAttribute(&optin, cudaDevAttrMaxSharedMemoryPerBlockOptin, device));
      const std::size_t smem = de_gather_smem(max_radius_) + sizeof(int);
      gather_ = !force_scatter && smem <= static_cast<std::size_t>(optin) && kmax_ <= detail::kDeKMask &&
                max_radius_ < (1 << (31 - detail::kDeKBits));
      if (gather_) {
        GF_CUDA_TRY(cudaFuncSetAttribute(de_gather_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                         static_cast<int>(de_gather_smem(max_radius_))));
        de_val_ = DeviceBuffer<double>(cells * 4);
        de_k_ = DeviceBuffer<int>(cells);
      } else {
        acc_fixed_ = DeviceBuffer<unsigned long long>(cells * 4);
      }
    }
    out_ = DeviceBuffer<unsigned char>(f.width * f.height * 4);
    out_host_ = gemflow::cuda::PinnedBuffer<unsigned char>(out_.size());
  }

  /// Post-processing of `hist` (a u64 pointer or a detail::SplitHistView) into `rgba` (resized;
  /// best already sized, its pages touched); the device time of its phases (events on the
  /// default stream) and the host time of the copy back go to `t`.
  template <class Hist>
  void run(const Hist& hist, PostTimes& t, std::vector<std::uint8_t>& rgba) {
    using Clock = std::chrono::steady_clock;
    ev_[0].record(nullptr);
    const int hw = static_cast<int>(p_.shape.width), hh = static_cast<int>(p_.shape.height);
    const std::size_t cells = p_.shape.width * p_.shape.height;
    if (!p_.de) {
      log_density_kernel<<<blocks_for(cells), kBlock>>>(hist, acc_.data(), cells, p_.k1, p_.k2);
      GF_CUDA_CHECK_LAUNCH("log_density_kernel");
    } else if (gather_) {
      DeDevice de{coefs_.data(), offsets_.data(), radius_.data(), kmax_, p_.de_max, p_.de_min, p_.de_curve};
      de_source_kernel<<<blocks_for(cells), kBlock>>>(hist, de_val_.data(), de_k_.data(), hw, hh, p_.ss, p_.k1, p_.k2,
                                                      kmax_);
      GF_CUDA_CHECK_LAUNCH("de_source_kernel");
      const dim3 block(kDeTile, kDeTile);
      const dim3 grid(static_cast<unsigned>((hw + kDeTile - 1) / kDeTile),
                      static_cast<unsigned>((hh + kDeTile - 1) / kDeTile));
      de_gather_kernel<<<grid, block, de_gather_smem(max_radius_)>>>(de_val_.data(), de_k_.data(), hw, hh, max_radius_,
                                                                     de, acc_.data());
      GF_CUDA_CHECK_LAUNCH("de_gather_kernel");
    } else {
      GF_CUDA_TRY(cudaMemset(acc_fixed_.data(), 0, acc_fixed_.size_bytes()));
      DeDevice de{coefs_.data(), offsets_.data(), radius_.data(), kmax_, p_.de_max, p_.de_min, p_.de_curve};
      de_kernel<<<blocks_for(cells), kBlock>>>(hist, acc_fixed_.data(), hw, hh, p_.ss, p_.k1, p_.k2, de);
      GF_CUDA_CHECK_LAUNCH("de_kernel");
      de_to_double<<<blocks_for(cells * 4), kBlock>>>(acc_fixed_.data(), acc_.data(), cells * 4);
      GF_CUDA_CHECK_LAUNCH("de_to_double");
    }
    ev_[1].record(nullptr);
    if (p_.earlyclip) {
      tone_cells_kernel<<<blocks_for(cells), kBlock>>>(acc_.data(), cells, p_.tone);
      GF_CUDA_CHECK_LAUNCH("tone_cells_kernel");
    }
    const int W = static_cast<int>(f_.width), H = static_cast<int>(f_.height);
    filter_tone_kernel<<<blocks_for(static_cast<unsigned long long>(W) * H), kBlock>>>(
        acc_.data(), hw, filter_.data(), static_cast<int>(p_.shape.filter_width), p_.ss,
        static_cast<int>(p_.shape.de_offset), W, H, p_.tone, p_.earlyclip ? 1 : 0, out_.data());
    GF_CUDA_CHECK_LAUNCH("filter_tone_kernel");
    ev_[2].record(nullptr);
    ev_[2].synchronize();
    const auto tc = Clock::now();
    // Through page-locked memory (a pageable copy of a 1080p image costs about a millisecond), in
    // chunks, so that the host copies one chunk into `rgba` while the next one crosses the bus.
    const std::size_t bytes = out_.size_bytes(), chunk = (bytes + kCopyChunks - 1) / kCopyChunks;
    rgba.resize(bytes);
    for (std::size_t i = 0; i < kCopyChunks; ++i) {
      const std::size_t off = std::min(bytes, i * chunk), len = std::min(bytes, off + chunk) - off;
      if (len)
        GF_CUDA_TRY(cudaMemcpyAsync(out_host_.data() + off, out_.data() + off, len, cudaMemcpyDeviceToHost, nullptr));
      copied_[i].record(nullptr);
    }
    for (std::size_t i = 0; i < kCopyChunks; ++i) {
      const std::size_t off = std::min(bytes, i * chunk), len = std::min(bytes, off + chunk) - off;
      copied_[i].synchronize();
      if (len) std::memcpy(rgba.data() + off, out_host_.data() + off, len);
    }
    float ms = 0;
    GF_CUDA_TRY(cudaEventElapsedTime(&ms, ev_[0].get(), ev_[1].get()));
    t.density = 1e-3 * ms;
    GF_CUDA_TRY(cudaEventElapsedTime(&ms, ev_[1].get(), ev_[2].get()));
    t.filter_tone = 1e-3 * ms;
    t.copy = std::chrono::duration<double>(Clock::now() - tc).count();
  }

 private:
  const Flame& f_;
  const detail::PostParams& p_;
  DeviceBuffer<double> filter_, acc_, coefs_, de_val_;
  DeviceBuffer<unsigned long long> offsets_, acc_fixed_;
  DeviceBuffer<int> radius_, de_k_;
  DeviceBuffer<unsigned char> out_;
  gemflow::cuda::PinnedBuffer<unsigned char> out_host_;
  gemflow::cuda::Event ev_[3] = {gemflow::cuda::Event(cudaEventDefault), gemflow::cuda::Event(cudaEventDefault),
                                 gemflow::cuda::Event(cudaEventDefault)};
  static constexpr std::size_t kCopyChunks = 4;
  gemflow::cuda::Event copied_[kCopyChunks];
  int kmax_ = 0, max_radius_ = 0;
  bool gather_ = false;
};

struct WalkerBuffers {
  explicit WalkerBuffers(std::size_t n) : x(n), y(n), c(n), state(n), inc(n), row(n), done(n) {}
  Walkers view() { return {x.data(), y.data(), c.data(), state.data(), inc.data(), row.data(), done.data()}; }
  DeviceBuffer<float> x, y, c;
  DeviceBuffer<unsigned long long> state, inc;
  DeviceBuffer<int> row;
  DeviceBuffer<unsigned long long> done;
};

}  // namespace

RenderedImage render_cuda(const Flame& flame, const RenderOptions& opt, const CudaRenderOptions& c, Variant* used) {
  using Clock = std::chrono::steady_clock;
  const Flame f = apply_overrides(flame, opt);
  const Variant variant = resolve_variant(f, c.variant);
  if (used) *used = variant;
  GF_CUDA_TRY(cudaSetDevice(c.device));
  auto P = detail::prepare<float>(f, {opt.earlyclip, opt.transparency});

  cudaDeviceProp prop{};
  GF_CUDA_TRY(cudaGetDeviceProperties(&prop, c.device));
  // Walkers: a power of two (the permutations), about 64 resident blocks per SM's worth, and
  // at least 64 iterations each.
  std::uint64_t want = c.walkers ? c.walkers : static_cast<std::uint64_t>(prop.multiProcessorCount) * 2048ull * 4ull;
  want = std::min<std::uint64_t>(want, std::max<std::uint64_t>(P.samples / 64, kBlock));
  std::uint64_t n = kBlock;
  while (n * 2 <= want) n *= 2;

  const std::size_t cells = P.post.shape.width * P.post.shape.height;
  const double need = static_cast<double>(cells) * (32.0 + 32.0 + (P.post.de ? 36.0 : 0.0)) +
                      static_cast<double>(n) * 2 * 48.0 + static_cast<double>(f.width * f.height * 4);
  std::size_t free_b = 0, total_b = 0;
  GF_CUDA_TRY(cudaMemGetInfo(&free_b, &total_b));
  if (need > 0.9 * static_cast<double>(free_b))
    throw FlameError(f.source + ":" + std::to_string(f.line) + ": flame '" + f.name + "': size " +
                     std::to_string(f.width) + " × " + std::to_string(f.height) + " at supersample " +
                     std::to_string(f.supersample) + " needs " +
                     std::to_string(static_cast<long long>(need / 1048576)) + " MiB of device memory, " +
                     std::to_string(free_b >> 20) + " MiB free");

  // Split words need every plot's increment ≤ ~2^26 (palette · opacity ≤ 4: a warp's sum of 32
  // then fits 32 bits) and cell indices within 32 bits (the warp's grouping label); otherwise
  // the u64 histogram.
  float max_color = 0, max_vis = 0;
  for (float v : P.palette) max_color = std::max(max_color, v);
  for (const auto& x : P.xforms) max_vis = std::max(max_vis, x.vis);
  const bool aggregable = max_color * max_vis <= 4.0f && cells < (1ull << 32);
  const Histogram layout = aggregable ? c.histogram : Histogram::U64;
  const bool split = layout == Histogram::Split32;
  auto xf = upload(P.xforms);
  auto table = upload(P.table);
  auto pal = upload(P.palette);
  DeviceBuffer<unsigned long long> hist(split ? 0 : cells * 4), bad(1);
  DeviceBuffer<unsigned> lo(split ? cells * 4 : 0), hi(split ? cells * 4 : 0);
  if (split) {
    GF_CUDA_TRY(cudaMemset(lo.data(), 0, lo.size_bytes()));
    GF_CUDA_TRY(cudaMemset(hi.data(), 0, hi.size_bytes()));
  } else {
    GF_CUDA_TRY(cudaMemset(hist.data(), 0, hist.size_bytes()));
  }
  GF_CUDA_TRY(cudaMemset(bad.data(), 0, bad.size_bytes()));
  const detail::SplitHistView split_view{lo.data(), hi.data()};
  Scene s{xf.data(),
          static_cast<int>(f.xforms.size()),
          P.has_final ? 1 : 0,
          P.final_opacity,
          table.data(),
          P.chaos ? 1 : 0,
          pal.data(),
          P.step_mode,
          P.cam,
          hist.data(),
          lo.data(),
          hi.data(),
          layout == Histogram::U64 ? 0
          : split                  ? 1
                                   : 2,
          P.fuse};

  WalkerBuffers wa(n), wb(variant == Variant::DivergenceFree ? n : 0);
  init_walkers<<<blocks_for(n), kBlock>>>(wa.view(), n, opt.seed);
  GF_CUDA_CHECK_LAUNCH("init_walkers");

  DevicePost post(f, P.post, c.device, c.de_scatter);
  PostTimes post_times;
  auto run_post = [&](std::vector<std::uint8_t>& rgba) {
    if (split) post.run(split_view, post_times, rgba);
    else post.run(static_cast<const unsigned long long*>(hist.data()), post_times, rgba);
  };
  const std::uint64_t per_walker = P.samples / n, extra = P.samples % n;
  // divergence_free runs every walker the same number of steps: ceil(samples / n), so it
  // draws up to n − 1 samples more than asked (reported in iterations).
  const std::uint64_t steps =
      (variant == Variant::DivergenceFree ? (P.samples + n - 1) / n : per_walker + (extra ? 1 : 0)) +
      static_cast<std::uint64_t>(P.fuse);
  const int passes = std::max(1, std::min<int>(opt.passes, static_cast<int>(steps)));
  RenderedImage img;
  img.width = f.width;
  img.height = f.height;
  const auto t0 = Clock::now();
  double post_seconds = 0;
  // Launches cover a fixed kStepsPerLaunch steps (fewer at a pass's end), so where they start —
  // and with them the divergence-free variant's global permutations, seeded by the step — does
  // not depend on timing: the same seed gives the same image however fast the device runs. Only
  // how many launches go between synchronisations adapts to time (~50 ms, so that cancel is
  // answered within 200 ms).
  constexpr std::uint64_t kStepsPerLaunch = 16;
  std::uint64_t step = 0, launches_per_sync = 1;
  for (int pass = 0; pass < passes; ++pass) {
    const std::uint64_t pass_end = steps * static_cast<std::uint64_t>(pass + 1) / static_cast<std::uint64_t>(passes);
    while (step < pass_end) {
      if (opt.cancelled && opt.cancelled()) throw RenderCancelled();
      const auto tb = Clock::now();
      for (std::uint64_t j = 0; j < launches_per_sync && step < pass_end; ++j) {
        const std::uint64_t k = std::min(kStepsPerLaunch, pass_end - step);
        if (variant == Variant::DivergenceFree) {
          const unsigned long long h = mix64(opt.seed * 0x2545f4914f6cdd1dull + step);
          df_kernel<<<blocks_for(n), kBlock>>>(s, wa.view(), wb.view(), n, h | 1ull, h >> 17, opt.seed, step,
                                               static_cast<int>(k), bad.data());
          GF_CUDA_CHECK_LAUNCH("df_kernel");
          std::swap(wa, wb);
        } else {
          basic_kernel<<<blocks_for(n), kBlock>>>(s, wa.view(), n, per_walker, extra, k, bad.data());
          GF_CUDA_CHECK_LAUNCH("basic_kernel");
        }
        step += k;
      }
      // The image's pages are touched here, while the device iterates, not in the post-processing.
      if (img.rgba.empty()) img.rgba.assign(f.width * f.height * 4, 0);
      GF_CUDA_TRY(cudaDeviceSynchronize());
      const double sec = std::chrono::duration<double>(Clock::now() - tb).count();
      if (sec < 0.5 * c.sync_seconds) launches_per_sync = std::min<std::uint64_t>(launches_per_sync * 2, 1u << 16);
      else if (sec > 2.0 * c.sync_seconds && launches_per_sync > 1) launches_per_sync /= 2;
    }
    if (opt.progress) opt.progress(static_cast<double>(pass + 1) / passes, pass + 1, passes);
    if (opt.preview && pass + 1 < passes) {
      const auto tp = Clock::now();
      RenderedImage prev;
      prev.width = f.width;
      prev.height = f.height;
      run_post(prev.rgba);
      post_seconds += std::chrono::duration<double>(Clock::now() - tp).count();
      opt.preview(prev);
    }
  }
  const auto t1 = Clock::now();
  run_post(img.rgba);
  const auto t2 = Clock::now();
  img.seconds_post_density = post_times.density;
  img.seconds_post_filter_tone = post_times.filter_tone;
  img.seconds_post_copy = post_times.copy;
  if (c.histogram_out) {
    auto& out = *c.histogram_out;
    out.resize(cells * 4);
    if (split) {
      std::vector<unsigned> l(cells * 4), h(cells * 4);
      GF_CUDA_TRY(cudaMemcpy(l.data(), lo.data(), lo.size_bytes(), cudaMemcpyDeviceToHost));
      GF_CUDA_TRY(cudaMemcpy(h.data(), hi.data(), hi.size_bytes(), cudaMemcpyDeviceToHost));
      for (std::size_t i = 0; i < out.size(); ++i) out[i] = detail::split_value(l[i], h[i]);
    } else {
      GF_CUDA_TRY(cudaMemcpy(out.data(), hist.data(), hist.size_bytes(), cudaMemcpyDeviceToHost));
    }
  }
  if (c.histogram_used) *c.histogram_used = layout;
  unsigned long long bad_h = 0;
  GF_CUDA_TRY(cudaMemcpy(&bad_h, bad.data(), sizeof bad_h, cudaMemcpyDeviceToHost));
  img.iterations = variant == Variant::DivergenceFree ? (steps - static_cast<std::uint64_t>(P.fuse)) * n : P.samples;
  img.bad_points = bad_h;
  img.seconds_iterate = std::chrono::duration<double>(t1 - t0).count() - post_seconds;
  img.seconds_post = std::chrono::duration<double>(t2 - t1).count();
  return img;
}

std::vector<float> eval_variations_device(const std::vector<int>& ids, const std::vector<float>& points_and_weights,
                                          const std::vector<float>& params, const std::vector<float>& coefs,
                                          const std::vector<unsigned long long>& seeds) {
  const int n = static_cast<int>(ids.size());
  auto d_ids = upload(ids);
  auto d_pts = upload(points_and_weights);
  auto d_par = upload(params);
  auto d_coef = upload(coefs);
  auto d_seed = upload(seeds);
  DeviceBuffer<float> out(2 * ids.size());
  eval_variations_kernel<<<blocks_for(static_cast<unsigned long long>(n)), kBlock>>>(
      d_ids.data(), d_pts.data(), d_par.data(), d_coef.data(), d_seed.data(), out.data(), n);
  GF_CUDA_CHECK_LAUNCH("eval_variations_kernel");
  std::vector<float> h(out.size());
  GF_CUDA_TRY(cudaMemcpy(h.data(), out.data(), out.size_bytes(), cudaMemcpyDeviceToHost));
  return h;
}

}  // namespace gemflow::flame::cuda
