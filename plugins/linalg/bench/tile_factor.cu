// The tiled Cholesky's chain in isolation (one CTA, clock64, checked against an fp64 CPU Cholesky):
// the 64×64 diagonal-tile factor on the safe pivot path (the baseline) and on the fast one, one
// 8×8 tile factor, the fast path's fallback on subnormal and non-SPD tiles (bit-identical to the
// safe path), the 64×64 tile solve, and the latencies (cycles, one warp, dependent chains) of the
// operations on the chain. docs/performance.md ("Tile factor and the chain, measured") has the
// tables.
//
//   linalg_bench_tile_factor [--reps R]
#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include <gemflow/cuda/check.hpp>

#include "panel_kernels.cuh"
#include "tiled_kernels.cuh"

namespace {

namespace gd = gemflow::linalg::cuda::detail;

constexpr int kChain = 256;  // dependent operations per latency probe

enum Probe {
  kDfma,
  kDmul,
  kRsqrtApprox,
  kRsqrtFast,
  kRsqrtRefined,
  kRsqrtCuda,
  kRcpRn,
  kSqrtRn,
  kShfl,
  kDmma884,
  kDmma1688,
  kSel,
  kBarrier,
  kProbes
};
const char* probe_name(int p) {
  static const char* names[] = {"DFMA",
                                "DMUL",
                                "rsqrt.approx.f64",
                                "rsqrt.approx + Newton (fast pivot path)",
                                "rsqrt_refined (safe pivot path)",
                                "rsqrt() (CUDA)",
                                "1/d (rcp.rn)",
                                "sqrt (rn)",
                                "shfl (double)",
                                "DMMA m8n8k4 (acc chain)",
                                "DMMA m16n8k8 (acc chain)",
                                "select (double)",
                                "barrier (8 warps)"};
  return names[p];
}

template <int P>
__global__ void latency_kernel(double seed, long long* cycles, double* sink) {
  const int lane = static_cast<int>(threadIdx.x % 32);
  double x = seed + 1e-3 * lane;
  double acc[4] = {x, x, x, x};
  double2 acc2 = make_double2(x, x);
  __syncthreads();
  const long long t0 = clock64();
  if constexpr (P == kBarrier) {
#pragma unroll 16
    for (int i = 0; i < kChain; ++i) __syncthreads();
  } else if (threadIdx.x < 32) {
#pragma unroll 16
    for (int i = 0; i < kChain; ++i) {
      if constexpr (P == kDfma) x = fma(x, 0.999, 1e-3);
      if constexpr (P == kDmul) x = x * 0.9999999;
      if constexpr (P == kRsqrtApprox) asm volatile("rsqrt.approx.ftz.f64 %0, %0;" : "+d"(x));
      if constexpr (P == kRsqrtFast) {
        double y;
        asm("rsqrt.approx.ftz.f64 %0, %1;" : "=d"(y) : "d"(x));
        const double r = fma(-x * y, y, 1.0);
        x = fma(y * r, fma(0.375, r, 0.5), y);
      }
      if constexpr (P == kRsqrtRefined) x = gd::rsqrt_refined(x);
      if constexpr (P == kRsqrtCuda) x = rsqrt(x);
      if constexpr (P == kRcpRn) x = 1.0 / x;
      if constexpr (P == kSqrtRn) x = sqrt(x);
      if constexpr (P == kShfl) x = __shfl_sync(0xffffffffu, x, (lane + 1) & 31);
      if constexpr (P == kDmma884) gd::dmma_m8n8k4(acc2, acc2.x, x);
      if constexpr (P == kDmma1688) gd::dmma_m16n8k8(acc, acc[0], x, x, x, x, x);
      if constexpr (P == kSel) x = x > 0.5 ? x : 0.25 * seed;
    }
  }
  const long long t1 = clock64();
  if (threadIdx.x == 0) cycles[P] = t1 - t0;
  sink[threadIdx.x] = x + acc[0] + acc[1] + acc[2] + acc[3] + acc2.x + acc2.y;
}

template <int... P>
void run_latency(std::integer_sequence<int, P...>, long long* d_cycles, double* d_sink) {
  (latency_kernel<P><<<1, gd::kTileThreads>>>(0.7, d_cycles, d_sink), ...);
}

// one warp: factor_invert_tile on the leading 8×8 tile of a (min over reps)
template <int Variant>
__global__ void tile_kernel(const double* a, int reps, long long* cycles, double* sink) {
  __shared__ double t0s[8 * gd::kTileLd];
  __shared__ double ld[64];
  const int lane = static_cast<int>(threadIdx.x);
  for (int e = lane; e < 64; e += 32) ld[e] = 0.0;
  long long best = 1ll << 62;
  int f = 0;
  for (int rep = 0; rep < reps; ++rep) {
    for (int e = lane; e < 64; e += 32) t0s[(e / 8) * gd::kTileLd + e % 8] = a[(e / 8) + 64 * (e % 8)];
    __syncwarp();
    const long long c0 = clock64();
    if constexpr (Variant == 2) f += gd::factor_invert_tile_fp32<gd::kTileLd>(t0s, ld, lane);
    else f += gd::factor_invert_tile<gd::kTileLd, Variant == 1>(t0s, ld, lane);
    __syncwarp();
    const long long c1 = clock64();
    best = std::min(best, c1 - c0);
  }
  if (lane == 0) *cycles = best;
  sink[lane] = t0s[lane] + ld[lane] + f;
}

// factor_block_phases<kTileLd> on the safe (Variant 0) or fast (1) pivot path, or with fp32 tiles (2). Output: L (64×64
// row-major, zero above) and the inverted diagonal 8×8 tiles (8 × 64, row-major).
template <int Variant>
__global__ void __launch_bounds__(gd::kTileThreads, 1)
    block_factor_kernel(const double* a, int reps, double* l_out, double* inv_out, long long* cycles, int* fail_out) {
  extern __shared__ __align__(16) unsigned char smem_raw[];
  double* ls = reinterpret_cast<double*>(smem_raw);
  double* ldiag = ls + gd::kTileNb * gd::kTileLd;
  int* s_fail = reinterpret_cast<int*>(ldiag + gd::kTileSub * 64);
  const int tid = static_cast<int>(threadIdx.x), warp = tid / 32, lane = tid % 32;
  long long best = 1ll << 62;
  int fail = 0, nt_done = 0;
  for (int rep = 0; rep < reps; ++rep) {
    for (int e = tid; e < 64 * 64; e += gd::kTileThreads) ls[(e % 64) * gd::kTileLd + e / 64] = a[e];
    for (int e = tid; e < gd::kTileSub * 64; e += gd::kTileThreads) ldiag[e] = 0.0;
    if (tid < 2) s_fail[tid] = 0;
    __syncthreads();
    const long long t0 = clock64();
    fail = gd::factor_block_phases<gd::kTileLd, Variant != 0, Variant == 2>(ls, ldiag, s_fail, gd::kTileSub, warp, lane,
                                                                            nt_done);
    __syncthreads();
    const long long t1 = clock64();
    best = std::min(best, t1 - t0);
  }
  for (int e = tid; e < 64 * 64; e += gd::kTileThreads) {
    const int i = e / 64, j = e % 64, ti = i / 8, tj = j / 8;
    l_out[e] = j > i ? 0.0 : (ti == tj ? ldiag[64 * ti + 8 * (i % 8) + j % 8] : ls[i * gd::kTileLd + j]);
    if (i == j) l_out[e] = sqrt(l_out[e]);  // the pivot (factor_invert_tile)
    if (ti == tj) inv_out[64 * ti + 8 * (i % 8) + j % 8] = j > i ? 0.0 : ls[i * gd::kTileLd + j];
  }
  if (tid == 0) {
    *cycles = best;
    *fail_out = fail;
  }
}

// The tiled kernel's tile solve: X = B·L⁻ᵀ for a 64×64 B in shared memory against the factored
// tile (solve_rows, 8 warps × 8 rows, m8n8k4), X written to global memory as the kernel does.
// Output X (64×64 row-major).
__global__ void __launch_bounds__(gd::kTileThreads, 1)
    tile_solve_kernel(const double* a, const double* bmat, int reps, double* x_out, long long* cycles) {
  extern __shared__ __align__(16) unsigned char smem_raw[];
  double* ls = reinterpret_cast<double*>(smem_raw);
  double* ldiag = ls + gd::kTileNb * gd::kTileLd;
  double* bs = ldiag + gd::kTileSub * 64;
  int* s_fail = reinterpret_cast<int*>(bs + gd::kTileNb * gd::kTileLd);
  const int tid = static_cast<int>(threadIdx.x), warp = tid / 32, lane = tid % 32;
  for (int e = tid; e < 64 * 64; e += gd::kTileThreads) ls[(e % 64) * gd::kTileLd + e / 64] = a[e];
  for (int e = tid; e < gd::kTileSub * 64; e += gd::kTileThreads) ldiag[e] = 0.0;
  if (tid < 2) s_fail[tid] = 0;
  __syncthreads();
  int nt_done = 0;
  gd::factor_block_phases<gd::kTileLd>(ls, ldiag, s_fail, gd::kTileSub, warp, lane, nt_done);
  __syncthreads();
  long long best = 1ll << 62;
  for (int rep = 0; rep < reps; ++rep) {
    for (int e = tid; e < 64 * 64; e += gd::kTileThreads) bs[(e / 64) * gd::kTileLd + e % 64] = bmat[e];
    __syncthreads();
    const long long t0 = clock64();
    {
      const int r = lane >> 2, q = lane & 3;
      double* srow = bs + (8 * warp + r) * gd::kTileLd + 2 * q;
      double* xrow = x_out + (8 * warp + r) * 64 + 2 * q;
      const auto load_b = [&](int k) { return *reinterpret_cast<const double2*>(srow + 8 * k); };
      const auto store_x = [&](int k, double2 x) { *reinterpret_cast<double2*>(xrow + 8 * k) = x; };
      gd::solve_rows<gd::kTileLd, gd::kTileSub, gd::kTileSub - 1, true>(ls, 8, r, q, load_b, store_x);
    }
    __syncthreads();
    const long long t1 = clock64();
    best = std::min(best, t1 - t0);
  }
  if (tid == 0) *cycles = best;
}

// fp64 CPU Cholesky (lower, row-major)
bool cpu_cholesky(std::vector<double>& l, int n) {
  for (int j = 0; j < n; ++j) {
    double d = l[j * n + j];
    for (int k = 0; k < j; ++k) d -= l[j * n + k] * l[j * n + k];
    if (!(d > 0)) return false;
    const double ljj = std::sqrt(d);
    l[j * n + j] = ljj;
    for (int i = j + 1; i < n; ++i) {
      double s = l[i * n + j];
      for (int k = 0; k < j; ++k) s -= l[i * n + k] * l[j * n + k];
      l[i * n + j] = s / ljj;
    }
    for (int i = 0; i < j; ++i) l[i * n + j] = 0.0;
  }
  return true;
}

struct Result {
  long long cycles;
  int fail;
  double err_l, err_inv;
  std::vector<double> l, inv;
};

template <int Variant>
Result run_variant(const double* d_a, const std::vector<double>& lref, int reps) {
  double *d_l = nullptr, *d_inv = nullptr;
  long long* d_cycles = nullptr;
  int* d_fail = nullptr;
  GF_CUDA_TRY(cudaMalloc(&d_l, 64 * 64 * sizeof(double)));
  GF_CUDA_TRY(cudaMalloc(&d_inv, 8 * 64 * sizeof(double)));
  GF_CUDA_TRY(cudaMalloc(&d_cycles, sizeof(long long)));
  GF_CUDA_TRY(cudaMalloc(&d_fail, sizeof(int)));
  const std::size_t smem = sizeof(double) * (gd::kTileNb * gd::kTileLd + gd::kTileSub * 64) + 16;
  GF_CUDA_TRY(cudaFuncSetAttribute(block_factor_kernel<Variant>, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                   static_cast<int>(smem)));
  block_factor_kernel<Variant><<<1, gd::kTileThreads, smem>>>(d_a, reps, d_l, d_inv, d_cycles, d_fail);
  GF_CUDA_TRY(cudaGetLastError());
  GF_CUDA_TRY(cudaDeviceSynchronize());
  std::vector<double> l(64 * 64), inv(8 * 64);
  Result r{};
  r.l.resize(l.size());
  GF_CUDA_TRY(cudaMemcpy(l.data(), d_l, l.size() * sizeof(double), cudaMemcpyDeviceToHost));
  GF_CUDA_TRY(cudaMemcpy(inv.data(), d_inv, inv.size() * sizeof(double), cudaMemcpyDeviceToHost));
  GF_CUDA_TRY(cudaMemcpy(&r.cycles, d_cycles, sizeof(long long), cudaMemcpyDeviceToHost));
  GF_CUDA_TRY(cudaMemcpy(&r.fail, d_fail, sizeof(int), cudaMemcpyDeviceToHost));
  r.l = l;
  r.inv = inv;
  double lmax = 0.0;
  for (double v : lref) lmax = std::max(lmax, std::abs(v));
  for (std::size_t e = 0; e < l.size(); ++e) r.err_l = std::max(r.err_l, std::abs(l[e] - lref[e]) / lmax);
  // ‖L_kk·inv_k − I‖_max over the 8 diagonal tiles
  for (int t = 0; t < 8; ++t)
    for (int i = 0; i < 8; ++i)
      for (int j = 0; j < 8; ++j) {
        double s = 0.0;
        for (int k = 0; k < 8; ++k) s += lref[(8 * t + i) * 64 + 8 * t + k] * inv[64 * t + 8 * k + j];
        r.err_inv = std::max(r.err_inv, std::abs(s - (i == j ? 1.0 : 0.0)));
      }
  cudaFree(d_l);
  cudaFree(d_inv);
  cudaFree(d_cycles);
  cudaFree(d_fail);
  return r;
}

}  // namespace

int bench_main(int argc, char** argv) {
  int reps = 20;
  for (int i = 1; i < argc; ++i) {
    if (!std::strcmp(argv[i], "--reps") && i + 1 < argc) reps = std::max(1, std::atoi(argv[++i]));
  }
  cudaDeviceProp prop{};
  GF_CUDA_TRY(cudaGetDeviceProperties(&prop, 0));
  int clock_khz = 0;
  GF_CUDA_TRY(cudaDeviceGetAttribute(&clock_khz, cudaDevAttrClockRate, 0));
  std::printf("device: %s, %d SMs, SM clock %.0f MHz\n\n", prop.name, prop.multiProcessorCount, clock_khz / 1e3);

  long long* d_cycles = nullptr;
  double* d_sink = nullptr;
  GF_CUDA_TRY(cudaMalloc(&d_cycles, kProbes * sizeof(long long)));
  GF_CUDA_TRY(cudaMalloc(&d_sink, gd::kTileThreads * sizeof(double)));
  std::vector<long long> cyc(kProbes, 1ll << 62);
  for (int rep = 0; rep < 5; ++rep) {
    run_latency(std::make_integer_sequence<int, kProbes>{}, d_cycles, d_sink);
    GF_CUDA_TRY(cudaDeviceSynchronize());
    std::vector<long long> c(kProbes);
    GF_CUDA_TRY(cudaMemcpy(c.data(), d_cycles, kProbes * sizeof(long long), cudaMemcpyDeviceToHost));
    for (int p = 0; p < kProbes; ++p) cyc[p] = std::min(cyc[p], c[p]);
  }
  std::printf("| operation (dependent chain, one warp) | cycles each |\n|---|---|\n");
  for (int p = 0; p < kProbes; ++p) std::printf("| %s | %.1f |\n", probe_name(p), static_cast<double>(cyc[p]) / kChain);

  // SPD 64×64: symmetric uniform(−1, 1) + 1.3·√64·I, as the Cholesky bench's matrices
  std::mt19937_64 rng(42);
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  std::vector<double> a(64 * 64);
  for (int j = 0; j < 64; ++j)
    for (int i = j; i < 64; ++i) a[i + 64 * j] = a[j + 64 * i] = u(rng) + (i == j ? 1.3 * 8.0 : 0.0);
  std::vector<double> lref(a);  // symmetric: column-major = row-major
  if (!cpu_cholesky(lref, 64)) return 2;
  double* d_a = nullptr;
  GF_CUDA_TRY(cudaMalloc(&d_a, a.size() * sizeof(double)));
  GF_CUDA_TRY(cudaMemcpy(d_a, a.data(), a.size() * sizeof(double), cudaMemcpyHostToDevice));

  const Result base = run_variant<0>(d_a, lref, reps);
  std::printf("\n64×64 tile factor, one CTA of %d threads (min of %d), error vs fp64 CPU:\n\n", gd::kTileThreads, reps);
  std::printf("| variant | cycles | µs | ratio vs phases | max|L − L_ref|/max|L| | max|L_kk·inv − I| | fail |\n");
  std::printf("|---|---|---|---|---|---|---|\n");
  const auto row = [&](const char* name, const Result& r) {
    std::printf("| %s | %lld | %.2f | %.2f× | %.1e | %.1e | %d |\n", name, r.cycles, r.cycles / (clock_khz * 1e-3),
                static_cast<double>(base.cycles) / r.cycles, r.err_l, r.err_inv, r.fail);
  };
  row("phases, safe pivot path (sixth session)", base);
  row("phases, fast pivot path", run_variant<1>(d_a, lref, reps));
  row("phases, fp32 tiles (1×FP16, 1×TF32)", run_variant<2>(d_a, lref, reps));
  std::printf("\none 8×8 factor_invert_tile (one warp), cycles:");
  const auto tile = [&](auto kernel) {
    long long c = 0;
    kernel<<<1, 32>>>(d_a, reps, d_cycles, d_sink);
    GF_CUDA_TRY(cudaDeviceSynchronize());
    GF_CUDA_TRY(cudaMemcpy(&c, d_cycles, sizeof(long long), cudaMemcpyDeviceToHost));
    std::printf(" %lld", c);
  };
  tile(tile_kernel<0>);
  tile(tile_kernel<1>);
  tile(tile_kernel<2>);
  std::printf(" (safe pivot path, fast pivot path, fp32 tile)\n");

  // the safe path behind the fast one: inputs whose pivots are subnormal, or that are not SPD,
  // must give the safe path's result bit for bit
  const auto same = [&](const std::vector<double>& m, const char* what) {
    GF_CUDA_TRY(cudaMemcpy(d_a, m.data(), m.size() * sizeof(double), cudaMemcpyHostToDevice));
    const Result s0 = run_variant<0>(d_a, lref, 1), s1 = run_variant<1>(d_a, lref, 1),
                 s2 = run_variant<2>(d_a, lref, 1);
    const auto differ = [](const std::vector<double>& x, const std::vector<double>& y) {
      int d = 0;  // NaN equals NaN here
      for (std::size_t e = 0; e < x.size(); ++e) d += !(x[e] == y[e]) && !(x[e] != x[e] && y[e] != y[e]);
      return d;
    };
    std::printf(
        "%s: fail %d / %d / %d (safe / fast / fp32 tiles), %d / %d elements of L and %d / %d of the inverted "
        "tiles differ from the safe path's\n",
        what, s0.fail, s1.fail, s2.fail, differ(s0.l, s1.l), differ(s0.l, s2.l), differ(s0.inv, s1.inv),
        differ(s0.inv, s2.inv));
  };
  std::vector<double> tiny(a), bad(a);
  for (auto& x : tiny) x = std::ldexp(x, -1060);
  bad[37 + 64 * 37] = -1.0;
  same(tiny, "subnormal pivots (A·2^-1060)");
  same(bad, "not SPD (A(37, 37) = −1)");

  // tile solves: X·Lᵀ = B, residual against the CPU factor
  GF_CUDA_TRY(cudaMemcpy(d_a, a.data(), a.size() * sizeof(double), cudaMemcpyHostToDevice));
  std::vector<double> bm(64 * 64);
  for (auto& x : bm) x = u(rng);
  double *d_b = nullptr, *d_x = nullptr;
  GF_CUDA_TRY(cudaMalloc(&d_b, bm.size() * sizeof(double)));
  GF_CUDA_TRY(cudaMalloc(&d_x, bm.size() * sizeof(double)));
  GF_CUDA_TRY(cudaMemcpy(d_b, bm.data(), bm.size() * sizeof(double), cudaMemcpyHostToDevice));
  std::printf(
      "\n64×64 tile solve X = B·L⁻ᵀ, one CTA (min of %d):\n\n| variant | cycles | µs | ratio | max|X·Lᵀ − B| "
      "|\n|---|---|---|---|---|\n",
      reps);
  long long solve_base = 0;
  const auto solve = [&](auto kernel, const char* name) {
    const std::size_t smem = sizeof(double) * (2 * gd::kTileNb * gd::kTileLd + gd::kTileSub * 64) + 16;
    GF_CUDA_TRY(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, static_cast<int>(smem)));
    GF_CUDA_TRY(cudaMemset(d_x, 0, bm.size() * sizeof(double)));
    kernel<<<1, gd::kTileThreads, smem>>>(d_a, d_b, reps, d_x, d_cycles);
    GF_CUDA_TRY(cudaDeviceSynchronize());
    long long c = 0;
    std::vector<double> x(bm.size());
    GF_CUDA_TRY(cudaMemcpy(&c, d_cycles, sizeof c, cudaMemcpyDeviceToHost));
    GF_CUDA_TRY(cudaMemcpy(x.data(), d_x, x.size() * sizeof(double), cudaMemcpyDeviceToHost));
    double res = 0;
    for (int i = 0; i < 64; ++i)
      for (int j = 0; j < 64; ++j) {
        double v = -bm[i * 64 + j];
        for (int k = 0; k <= j; ++k) v += x[i * 64 + k] * lref[j * 64 + k];
        res = std::max(res, std::abs(v));
      }
    if (!solve_base) solve_base = c;
    std::printf("| %s | %lld | %.2f | %.2f× | %.1e |\n", name, c, c / (clock_khz * 1e-3),
                static_cast<double>(solve_base) / c, res);
  };
  solve(tile_solve_kernel, "solve_rows (8 warps × 8 rows, m8n8k4)");

  cudaFree(d_b);
  cudaFree(d_x);
  cudaFree(d_a);
  cudaFree(d_cycles);
  cudaFree(d_sink);
  return 0;
}

int main(int argc, char** argv) {
  try {
    return bench_main(argc, argv);
  } catch (const std::exception& e) {  // gemflow::cuda::CudaError from the checked calls
    std::fprintf(stderr, "%s\n", e.what());
    return 2;
  }
}
