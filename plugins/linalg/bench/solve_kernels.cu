// The mixed solve's kernels alone (spd_solve_mixed.cu launches them; the kernels come from their
// headers, launched here as solve_mixed launches them): the one-right-hand-side triangular solves
// and the memory-bound passes over A. The factor L and the random matrices come from the plugin's
// CUDA library (GpuCholesky, fill_random_symmetric). Tables in docs/performance.md.
//
//   linalg_bench_solve_kernels --trsv | --passes
//
// --trsv: the mixed solve's pair of one-right-hand-side triangular solves (trsv_kernels.cuh), L y = b
// then Lᵀ x = y with the fp32 factor of a random SPD matrix (ld padded to a multiple of 4, as
// solve_mixed pads its fp32 copy), launched as solve_mixed launches them (the tickets and the
// tagged words zeroed before each pair): CUDA events, median of 21 pairs after a warm-up; the
// inverted diagonal blocks' kernel alike; the relative error against cuBLAS DTRSV on the same L in
// fp64; the largest relative difference |x − x₀| / |x₀| to the first pair's x (pairs must agree
// bit for bit: any difference is a race); then one traced pair (trsv_kernel's kTrace
// instantiation): the chain step split by its stamps, mean over the solve positions.
//
// --passes: the mixed solve's memory-bound passes over A (fp64, lower triangle) against a copy of
// the same bytes: the demotion with ‖A‖∞ (demote_norm_kernel + sum_parts_kernel) and the residual
// SYMV (symv_lower, and cuBLAS DSYMV), at n = 4k–32k.
#include <cublas_v2.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#include <gemflow/cuda/check.hpp>
#include <gemflow/cuda/cublas.hpp>
#include <gemflow/cuda/timing.hpp>
#include <gemflow/cuda_smem.hpp>
#include <gemflow/linalg/cholesky_cuda.hpp>

#include "bench_stream.cuh"
#include "demote_kernels.cuh"
#include "symv_kernels.cuh"
#include "trsv_kernels.cuh"

namespace {

namespace gc = gemflow::linalg::cuda;

__global__ void widen_kernel(const float* a, double* b, std::int64_t count) {
  for (std::int64_t i = blockIdx.x * std::int64_t(blockDim.x) + threadIdx.x; i < count;
       i += std::int64_t(gridDim.x) * blockDim.x)
    b[i] = a[i];
}

/// --passes: the mixed solve's memory-bound passes over A (fp64, lower triangle) against a copy of
/// the same bytes: the demotion with ‖A‖∞ (demote_norm_kernel + sum_parts_kernel) and the residual
/// SYMV (symv_lower, and cuBLAS DSYMV). GB/s counts the bytes each must move once: the triangle
/// read (and for the demotion its fp32 copy written).
void passes_timeline(const std::vector<long long>& sizes) {
  namespace d = gc::detail;
  const BenchStream bs(true);
  cudaStream_t s = bs.s;
  cublasHandle_t blas = bs.blas;
  const auto ms_of = [&](const auto& run) {
    return gemflow::cuda::median_ms(
        s, 11, 2, [] {}, run, [] {});
  };
  std::printf("%7s | %-28s | %9s | %8s | %s\n", "n", "pass", "ms", "GB/s", "vs copy of the same bytes");
  for (const long long n : sizes) {
    const std::size_t tri = static_cast<std::size_t>(n) * static_cast<std::size_t>(n + 1) / 2;
    const long long ldas = (n + 3) / 4 * 4, parts = (n + d::kNormTile - 1) / d::kNormTile;
    double *a = nullptr, *x = nullptr, *y = nullptr, *b = nullptr, *work = nullptr, *rowpart = nullptr,
           *colpart = nullptr, *rowsum = nullptr;
    float* as = nullptr;
    int* overflow = nullptr;
    char* copy = nullptr;
    GF_CUDA_TRY(cudaMalloc(&a, sizeof(double) * n * n));
    GF_CUDA_TRY(cudaMalloc(&as, sizeof(float) * ldas * n));
    GF_CUDA_TRY(cudaMalloc(&copy, sizeof(double) * tri * 2));
    GF_CUDA_TRY(cudaMalloc(&x, sizeof(double) * n));
    GF_CUDA_TRY(cudaMalloc(&y, sizeof(double) * n));
    GF_CUDA_TRY(cudaMalloc(&b, sizeof(double) * n));
    GF_CUDA_TRY(cudaMalloc(&work, sizeof(double) * (d::symv_workspace_doubles(n) + d::symv_abs_workspace_doubles(n))));
    unsigned long long* maxes = nullptr;
    GF_CUDA_TRY(cudaMalloc(&maxes, 3 * sizeof(unsigned long long)));
    GF_CUDA_TRY(cudaMalloc(&rowpart, sizeof(double) * parts * n));
    GF_CUDA_TRY(cudaMalloc(&colpart, sizeof(double) * parts * n));
    GF_CUDA_TRY(cudaMalloc(&rowsum, sizeof(double) * n));
    GF_CUDA_TRY(cudaMalloc(&overflow, sizeof(int)));
    gc::fill_random_symmetric(a, n, n, 1.3 * std::sqrt(static_cast<double>(n)), 5, s);
    {
      std::vector<double> h(static_cast<std::size_t>(2 * n));
      for (std::size_t i = 0; i < h.size(); ++i) h[i] = std::sin(0.37 * double(i) + 0.1);
      GF_CUDA_TRY(cudaMemcpy(x, h.data(), sizeof(double) * n, cudaMemcpyHostToDevice));
      GF_CUDA_TRY(cudaMemcpy(b, h.data() + n, sizeof(double) * n, cudaMemcpyHostToDevice));
    }
    const double read_b = sizeof(double) * double(tri);
    const double copy_ms = ms_of([&] {
      GF_CUDA_TRY(
          cudaMemcpyAsync(copy + sizeof(double) * tri, copy, sizeof(double) * tri, cudaMemcpyDeviceToDevice, s));
    });
    const auto row = [&](const char* what, double ms, double bytes) {
      const double ref = copy_ms * bytes / (2.0 * read_b);  // a copy moving `bytes`
      std::printf("%7lld | %-28s | %9.4f | %8.0f | %.2f\n", n, what, ms, bytes / ms * 1e-6, ref / ms);
    };
    row("copy (read + write)", copy_ms, 2.0 * read_b);
    row("demotion + norm", ms_of([&] {
          d::demote_norm_kernel<<<dim3(unsigned(parts), unsigned(parts)), dim3(d::kNormTile, 2), 0, s>>>(
              a, n, n, as, ldas, nullptr, overflow, rowpart, colpart);
          d::sum_parts_kernel<<<unsigned((n + d::kSumPartsK - 1) / d::kSumPartsK), d::kSumPartsK * d::kSumPartsSegs, 0,
                                s>>>(rowpart, colpart, n, parts, rowsum);
        }),
        read_b * 1.5);  // fp64 read, fp32 written
    row("SYMV + omega bound (residuals)", ms_of([&] {
          GF_CUDA_TRY(cudaMemsetAsync(maxes, 0, 3 * sizeof(unsigned long long), s));
          d::symv_lower(a, n, n, x, b, y, work, s, maxes, nullptr, d::SymvOmega::bound);
        }),
        read_b);
    row("SYMV + exact omega", ms_of([&] {
          GF_CUDA_TRY(cudaMemsetAsync(maxes, 0, 3 * sizeof(unsigned long long), s));
          d::symv_lower(a, n, n, x, b, y, work, s, maxes, nullptr, d::SymvOmega::exact,
                        work + d::symv_workspace_doubles(n));
        }),
        read_b);
    row("SYMV (symv_lower)", ms_of([&] { d::symv_lower(a, n, n, x, b, y, work, s); }), read_b);
    {
      const auto nt = d::symv_tiles(n);
      row("  its pass 2 alone", ms_of([&] {
            d::symv_sum_kernel<false>
                <<<unsigned((n + d::kSymvSumK - 1) / d::kSymvSumK), d::kSymvSumK * d::kSymvSumSegs, 0, s>>>(
                    n, work, work + nt * n, nullptr, nullptr, b, y, x, nullptr, nullptr);
          }),
          sizeof(double) * double(nt) * double(n));  // one partial per tile and entry
    }
    std::vector<double> y0(static_cast<std::size_t>(n)), y1(y0.size());
    GF_CUDA_TRY(cudaMemcpy(y0.data(), y, sizeof(double) * n, cudaMemcpyDeviceToHost));
    const double one = 1.0, minus_one = -1.0;
    row("cuBLAS DSYMV", ms_of([&] {
          GF_CUDA_TRY(cudaMemcpyAsync(y, b, sizeof(double) * n, cudaMemcpyDeviceToDevice, s));
          if (cublasDsymv(blas, CUBLAS_FILL_MODE_LOWER, int(n), &minus_one, a, int(n), x, 1, &one, y, 1) !=
              CUBLAS_STATUS_SUCCESS)
            std::exit(2);
        }),
        read_b);
    GF_CUDA_TRY(cudaMemcpy(y1.data(), y, sizeof(double) * n, cudaMemcpyDeviceToHost));
    double dy = 0, my = 0;
    for (std::size_t i = 0; i < y0.size(); ++i) {
      dy = std::max(dy, std::fabs(y0[i] - y1[i]));
      my = std::max(my, std::fabs(y1[i]));
    }
    std::printf("        SYMV against DSYMV: max |diff| / max |y| %.2e\n", dy / my);
    for (void* p : {static_cast<void*>(a), static_cast<void*>(as), static_cast<void*>(copy), static_cast<void*>(x),
                    static_cast<void*>(y), static_cast<void*>(b), static_cast<void*>(work), static_cast<void*>(rowpart),
                    static_cast<void*>(colpart), static_cast<void*>(rowsum), static_cast<void*>(overflow),
                    static_cast<void*>(maxes)})
      (void)cudaFree(p);
  }
}

void trsv_timeline(const std::vector<long long>& sizes) {
  namespace d = gc::detail;
  constexpr int kTrsvSlots = d::kTrsvTraceSlots;
  const BenchStream bs(true);
  cudaStream_t s = bs.s;
  cublasHandle_t blas = bs.blas;
  gc::GpuCholesky chol(s);
  GF_CUDA_TRY(gemflow::cuda::allow_dynamic_smem(d::trsv_invert_diag_kernel, d::trsv_invert_smem_bytes()));
  GF_CUDA_TRY(gemflow::cuda::allow_dynamic_smem(d::trsv_kernel<false>, d::trsv_smem_bytes(false)));
  GF_CUDA_TRY(gemflow::cuda::allow_dynamic_smem(d::trsv_kernel<true>, d::trsv_smem_bytes(true)));
  GF_CUDA_TRY(gemflow::cuda::allow_dynamic_smem(d::trsv_kernel<false, true>, d::trsv_smem_bytes(false)));
  GF_CUDA_TRY(gemflow::cuda::allow_dynamic_smem(d::trsv_kernel<true, true>, d::trsv_smem_bytes(true)));
  const auto median_ms = [&](const auto& prepare, const auto& run, const auto& after) {
    return gemflow::cuda::median_ms(s, 21, 0, prepare, run, after);
  };
  std::printf("%7s | %10s | %10s | %10s | %10s | %s\n", "n", "invert ms", "pair ms", "us / block", "vs DTRSV",
              "max |x - x0| / |x0|");
  for (const long long n : sizes) {
    const long long nblk = (n + d::kTrsvB - 1) / d::kTrsvB;
    const long long ld = (n + 3) / 4 * 4;
    float *l = nullptr, *inv = nullptr, *x = nullptr, *b = nullptr;
    double *l64 = nullptr, *x64 = nullptr;
    unsigned* tickets = nullptr;
    unsigned long long* pub = nullptr;
    GF_CUDA_TRY(cudaMalloc(&l, sizeof(float) * ld * n));
    GF_CUDA_TRY(cudaMalloc(&l64, sizeof(double) * ld * n));
    GF_CUDA_TRY(cudaMalloc(&x64, sizeof(double) * n));
    GF_CUDA_TRY(cudaMalloc(&inv, sizeof(float) * 2 * nblk * d::kTrsvB * d::kTrsvB));
    GF_CUDA_TRY(cudaMalloc(&x, sizeof(float) * n));
    GF_CUDA_TRY(cudaMalloc(&b, sizeof(float) * n));
    GF_CUDA_TRY(cudaMalloc(&tickets, sizeof(unsigned) * 2));
    GF_CUDA_TRY(cudaMalloc(&pub, sizeof(unsigned long long) * n));
    gc::fill_random_symmetric(l, n, ld, 1.3 * std::sqrt(static_cast<double>(n)), 7, s);
    std::vector<float> hb(static_cast<std::size_t>(n));
    {  // b: uniform(−1, 1)
      std::uint64_t z = 8;
      for (auto& v : hb) {
        z = z * 6364136223846793005ull + 1442695040888963407ull;
        v = static_cast<float>(static_cast<double>(z >> 11) * 0x1p-52 - 1.0);
      }
      GF_CUDA_TRY(cudaMemcpy(b, hb.data(), sizeof(float) * n, cudaMemcpyHostToDevice));
    }
    gc::CholeskyOptions o;
    o.algo = gc::CholeskyAlgo::lookahead;
    if (!chol.factor(l, n, ld, o).ok()) {
      std::printf("%7lld | factor failed\n", n);
      continue;
    }
    // the fp64 reference: cuBLAS DTRSV twice on the same L, widened
    std::vector<double> ref(static_cast<std::size_t>(n));
    {
      widen_kernel<<<1024, 256, 0, s>>>(l, l64, ld * n);
      std::vector<double> hb64(hb.begin(), hb.end());
      GF_CUDA_TRY(cudaMemcpyAsync(x64, hb64.data(), sizeof(double) * n, cudaMemcpyHostToDevice, s));
      if (cublasDtrsv(blas, CUBLAS_FILL_MODE_LOWER, CUBLAS_OP_N, CUBLAS_DIAG_NON_UNIT, int(n), l64, int(ld), x64, 1) !=
              CUBLAS_STATUS_SUCCESS ||
          cublasDtrsv(blas, CUBLAS_FILL_MODE_LOWER, CUBLAS_OP_T, CUBLAS_DIAG_NON_UNIT, int(n), l64, int(ld), x64, 1) !=
              CUBLAS_STATUS_SUCCESS) {
        std::fprintf(stderr, "dtrsv\n");
        std::exit(2);
      }
      GF_CUDA_TRY(cudaMemcpyAsync(ref.data(), x64, sizeof(double) * n, cudaMemcpyDeviceToHost, s));
      GF_CUDA_TRY(cudaStreamSynchronize(s));
    }
    double refmax = 0;
    for (double v : ref) refmax = std::max(refmax, std::fabs(v));
    const auto invert = [&]() {
      d::trsv_invert_diag_kernel<<<unsigned(nblk), d::kTrsvB, d::trsv_invert_smem_bytes(), s>>>(l, ld, n, inv, nullptr);
    };
    const double inv_ms = median_ms([] {}, invert, [] {});
    const auto reset = [&]() { GF_CUDA_TRY(cudaMemcpyAsync(x, b, sizeof(float) * n, cudaMemcpyDeviceToDevice, s)); };
    const auto zero_flags = [&]() {  // part of the pair, as in solve_mixed
      GF_CUDA_TRY(cudaMemsetAsync(tickets, 0, sizeof(unsigned) * 2, s));
      GF_CUDA_TRY(cudaMemsetAsync(pub, 0, sizeof(unsigned long long) * n, s));
    };
    const auto forward = [&]() {
      d::trsv_kernel<false><<<unsigned(nblk), d::kTrsvThreads, d::trsv_smem_bytes(false), s>>>(
          l, ld, n, inv, x, tickets, pub, 1u, nullptr, nullptr);
    };
    const auto transposed = [&]() {
      d::trsv_kernel<true><<<unsigned(nblk), d::kTrsvThreads, d::trsv_smem_bytes(true), s>>>(
          l, ld, n, inv, x, tickets + 1, pub, 2u, nullptr, nullptr);
    };
    const auto pair = [&]() {
      zero_flags();
      forward();
      transposed();
    };
    reset();
    pair();
    GF_CUDA_TRY(cudaStreamSynchronize(s));  // s is non-blocking: cudaMemcpy would not wait for it
    std::vector<float> x0(static_cast<std::size_t>(n)), xr(x0.size());
    GF_CUDA_TRY(cudaMemcpy(x0.data(), x, sizeof(float) * n, cudaMemcpyDeviceToHost));
    double err = 0, x0max = 0, worst = 0;
    for (std::size_t i = 0; i < x0.size(); ++i) {
      err = std::max(err, std::fabs(double(x0[i]) - ref[i]) / refmax);
      x0max = std::max(x0max, static_cast<double>(std::fabs(x0[i])));
    }
    const double pair_ms = median_ms(reset, pair, [&] {
      GF_CUDA_TRY(cudaMemcpy(xr.data(), x, sizeof(float) * n, cudaMemcpyDeviceToHost));
      for (std::size_t i = 0; i < xr.size(); ++i)
        worst = std::max(worst, static_cast<double>(std::fabs(xr[i] - x0[i])) / std::max(x0max, 1e-300));
    });
    std::printf("%7lld | %10.3f | %10.3f | %10.2f | %10.2e | %.2e\n", n, inv_ms, pair_ms, 1e3 * pair_ms / (2.0 * nblk),
                err, worst);
    {  // one traced pair: the chain step split (µs, mean over positions 2 …)
      unsigned long long* tb = nullptr;
      GF_CUDA_TRY(cudaMalloc(&tb, sizeof(unsigned long long) * 2 * nblk * kTrsvSlots));
      GF_CUDA_TRY(cudaMemsetAsync(tb, 0, sizeof(unsigned long long) * 2 * nblk * kTrsvSlots, s));
      reset();
      zero_flags();
      d::trsv_kernel<false, true><<<unsigned(nblk), d::kTrsvThreads, d::trsv_smem_bytes(false), s>>>(
          l, ld, n, inv, x, tickets, pub, 1u, nullptr, tb);
      d::trsv_kernel<true, true><<<unsigned(nblk), d::kTrsvThreads, d::trsv_smem_bytes(true), s>>>(
          l, ld, n, inv, x, tickets + 1, pub, 2u, nullptr, tb + nblk * kTrsvSlots);
      std::vector<unsigned long long> h(static_cast<std::size_t>(2 * nblk * kTrsvSlots));
      GF_CUDA_TRY(cudaMemcpyAsync(h.data(), tb, sizeof(unsigned long long) * h.size(), cudaMemcpyDeviceToHost, s));
      GF_CUDA_TRY(cudaStreamSynchronize(s));
      (void)cudaFree(tb);
      for (int dir = 0; dir < 2; ++dir) {
        const auto at = [&](long long p, int slot) {
          return static_cast<double>(h[static_cast<std::size_t>((dir * nblk + p) * kTrsvSlots + slot)]);
        };
        double hand = 0, sums = 0, gemv = 0, pubd = 0, early = 0;
        long long cnt = 0, late = 0;
        for (long long p = 2; p < nblk; ++p, ++cnt) {
          hand += at(p, 0) - at(p - 1, 3);
          sums += at(p, 1) - at(p, 0);
          gemv += at(p, 2) - at(p, 1);
          pubd += at(p, 3) - at(p, 2);
          early += at(p - 1, 3) - at(p, 4);
          late += at(p, 4) > at(p - 1, 3);
        }
        if (cnt == 0) continue;
        std::printf(
            "        | %-10s step %.2f us: values seen %.2f, sums %.2f, inverse %.2f, publish %.2f; "
            "waiting from %.2f us before the publish, %lld of %lld later\n",
            dir ? "transposed" : "forward", 1e-3 * (at(nblk - 1, 3) - at(1, 3)) / double(nblk - 2), 1e-3 * hand / cnt,
            1e-3 * sums / cnt, 1e-3 * gemv / cnt, 1e-3 * pubd / cnt, 1e-3 * early / cnt, late, cnt);
      }
    }
    for (void* p :
         {static_cast<void*>(l), static_cast<void*>(inv), static_cast<void*>(x), static_cast<void*>(b),
          static_cast<void*>(tickets), static_cast<void*>(pub), static_cast<void*>(l64), static_cast<void*>(x64)})
      (void)cudaFree(p);
  }
}

}  // namespace

int main(int argc, char** argv) {
  const bool trsv = argc == 2 && !std::strcmp(argv[1], "--trsv");
  const bool passes = argc == 2 && !std::strcmp(argv[1], "--passes");
  if (!trsv && !passes) {
    std::fprintf(stderr, "usage: %s --trsv | --passes\n", argv[0]);
    return 1;
  }
  if (gc::device_count() == 0) {
    std::printf("no CUDA device: nothing to measure\n");
    return 0;
  }
  try {
    if (trsv) trsv_timeline({2003, 4096, 8192, 16383, 16384, 32768});
    else passes_timeline({4096, 8192, 12288, 16384, 32768});
  } catch (const std::exception& e) {  // gemflow::cuda::CudaError from the checked calls
    std::fprintf(stderr, "error: %s\n", e.what());
    return 2;
  }
  return 0;
}
