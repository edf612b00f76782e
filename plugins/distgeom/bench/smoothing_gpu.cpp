// GPU triangle smoothing benchmark: one table, ratios against baselines run in this process.
//
//   distgeom_bench_smoothing_gpu [--quick] [--sizes N,N,...] [--precision fp32|fp64|both]
//                                [--no-batched]
//
// Rows: n, precision, our blocked closure (CUDA events, median), the per-pivot full-matrix
// sweep of GPU Gems 2 ch. 43 (timed over the first P pivots and scaled by n/P: its cost per
// pivot is constant), speed-up, rate and % of the add+min ceiling measured in this run by a
// register-only microbenchmark. Work count: 1.5·n³ (add, min/max) pairs = the per-pivot
// update of U (n³) and L (2n³) with the symmetry halving that our kernels exploit (they run
// phase 3 on the upper triangle only). Batched rows: molecules per second.
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#if GEMFLOW_DISTGEOM_HAVE_CUDA
#include <cuda_runtime.h>

#include <gemflow/cuda/buffer.hpp>
#include <gemflow/cuda/check.hpp>
#include <gemflow/cuda/timing.hpp>

#include "../algo/cuda/smoothing_bench_support.hpp"
#include "gemflow/distgeom/smoothing_cuda.hpp"

namespace gc = gemflow::distgeom::cuda;

namespace {

using gemflow::cuda::DeviceBuffer;
using gemflow::cuda::EventTimer;

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

struct Row {
  std::size_t n;
  const char* prec;
  int block;
  double ours_ms, sweep_ms;
  std::size_t sweep_pivots;
  double rate, ceiling;
  bool consistent;
};

template <class T>
Row bench_one(std::size_t n, double ceiling, cudaStream_t s) {
  const std::size_t count = n * n;
  DeviceBuffer<T> l(count), u(count), l0(count), u0(count), l2(count), u2(count);
  gc::bench::fill_random_bounds(l0.data(), u0.data(), n, 1, 0x5eed + n, s);
  EventTimer t;
  const int reps = n <= 4096 ? 5 : (n <= 8192 ? 3 : 2);
  gc::Control control;  // defaults: chunks of ~25 ms, as the node runs it
  std::vector<double> times;
  bool consistent = true;
  for (int r = 0; r < reps; ++r) {
    GF_CUDA_TRY(cudaMemcpyAsync(l.data(), l0.data(), count * sizeof(T), cudaMemcpyDeviceToDevice, s));
    GF_CUDA_TRY(cudaMemcpyAsync(u.data(), u0.data(), count * sizeof(T), cudaMemcpyDeviceToDevice, s));
    t.start(s);
    gc::smooth_bounds_device(l.data(), u.data(), n, s, control);
    times.push_back(t.stop_ms(s));
  }
  consistent = gc::check_consistency_device(l.data(), u.data(), n, 1e-3, s).consistent;
  // Baseline: per-pivot sweep over the first P pivots, scaled by n / P.
  const std::size_t pivots = std::min<std::size_t>(n, 256);
  GF_CUDA_TRY(cudaMemcpyAsync(l.data(), l0.data(), count * sizeof(T), cudaMemcpyDeviceToDevice, s));
  GF_CUDA_TRY(cudaMemcpyAsync(u.data(), u0.data(), count * sizeof(T), cudaMemcpyDeviceToDevice, s));
  gc::bench::per_pivot_sweep(l.data(), u.data(), l2.data(), u2.data(), n, 8, s);  // warm-up
  t.start(s);
  gc::bench::per_pivot_sweep(l.data(), u.data(), l2.data(), u2.data(), n, pivots, s);
  const double sweep_ms = t.stop_ms(s) * double(n) / double(pivots);
  const double ours = median(times);
  const int block = (sizeof(T) == 4 && n >= 3072) ? 128 : 64;
  return Row{n,
             sizeof(T) == 4 ? "fp32" : "fp64",
             block,
             ours,
             sweep_ms,
             pivots,
             1.5 * double(n) * double(n) * double(n) / (ours * 1e-3),
             ceiling,
             consistent};
}

template <class T>
double bench_batched(std::size_t n, std::size_t batch, cudaStream_t s, gc::BatchedMethod method) {
  const std::size_t count = n * n * batch;
  DeviceBuffer<T> l(count), u(count), l0(count), u0(count);
  gc::bench::fill_random_bounds(l0.data(), u0.data(), n, batch, 0xba7c + n, s);
  EventTimer t;
  std::vector<double> times;
  for (int r = 0; r < 4; ++r) {
    GF_CUDA_TRY(cudaMemcpyAsync(l.data(), l0.data(), count * sizeof(T), cudaMemcpyDeviceToDevice, s));
    GF_CUDA_TRY(cudaMemcpyAsync(u.data(), u0.data(), count * sizeof(T), cudaMemcpyDeviceToDevice, s));
    t.start(s);
    gc::smooth_bounds_batched_device(l.data(), u.data(), n, batch, s, method);
    const double ms = t.stop_ms(s);
    if (r > 0) times.push_back(ms);
  }
  const auto reps = gc::check_consistency_batched_device(l.data(), u.data(), n, batch, 1e-3, s);
  const auto bad = std::count_if(reps.begin(), reps.end(), [](auto& r) { return !r.consistent; });
  if (bad) std::printf("  (warning: %ld of %zu batched matrices inconsistent)\n", long(bad), batch);
  return double(batch) / (median(times) * 1e-3);
}

std::vector<std::size_t> parse_sizes(char* text) {
  std::vector<std::size_t> v;
  for (char* t = std::strtok(text, ","); t; t = std::strtok(nullptr, ",")) v.push_back(std::strtoull(t, nullptr, 10));
  return v;
}

int bench_main(int argc, char** argv) {
  bool quick = false, batched = true;
  std::vector<std::size_t> sizes;
  std::string precision = "both";
  for (int i = 1; i < argc; ++i) {
    if (!std::strcmp(argv[i], "--quick")) quick = true;
    else if (!std::strcmp(argv[i], "--no-batched")) batched = false;
    else if (!std::strcmp(argv[i], "--sizes") && i + 1 < argc) sizes = parse_sizes(argv[++i]);
    else if (!std::strcmp(argv[i], "--precision") && i + 1 < argc) precision = argv[++i];
    else {
      std::fprintf(stderr, "usage: %s [--quick] [--sizes N,N,...] [--precision fp32|fp64|both] [--no-batched]\n",
                   argv[0]);
      return 1;
    }
  }
  if (gc::device_count() == 0) {
    std::printf("no CUDA device: nothing to measure\n");
    return 0;
  }
  cudaDeviceProp prop{};
  GF_CUDA_TRY(cudaGetDeviceProperties(&prop, 0));
  int clock_khz = 0, mem_khz = 0;
  cudaDeviceGetAttribute(&clock_khz, cudaDevAttrClockRate, 0);
  cudaDeviceGetAttribute(&mem_khz, cudaDevAttrMemoryClockRate, 0);
  std::printf("device: %s, %d SMs, sm_%d%d, %.0f GiB, max SM clock %.0f MHz\n", prop.name, prop.multiProcessorCount,
              prop.major, prop.minor, double(prop.totalGlobalMem) / (1u << 30), clock_khz / 1e3);
  cudaStream_t s{};
  GF_CUDA_TRY(cudaStreamCreate(&s));

  const double ceil32 = gc::bench::add_min_ceiling(gc::Precision::fp32, s);
  const double ceil64 = gc::bench::add_min_ceiling(gc::Precision::fp64, s);
  std::printf(
      "add+min ceiling (register-only, x = min(x + c, y), 16 chains/thread): "
      "fp32 %.2f T pairs/s, fp64 %.2f T pairs/s\n",
      ceil32 / 1e12, ceil64 / 1e12);

  bench_one<float>(1024, ceil32, s);  // warm-up (module load, attributes)
  std::vector<Row> rows;
  std::vector<std::size_t> n32 =
      quick ? std::vector<std::size_t>{1024, 4096} : std::vector<std::size_t>{1024, 2048, 4096, 8192, 16384};
  std::vector<std::size_t> n64 =
      quick ? std::vector<std::size_t>{1024, 4096} : std::vector<std::size_t>{1024, 2048, 4096, 8192};
  if (!sizes.empty()) n32 = n64 = sizes;
  if (precision == "fp64") n32.clear();
  if (precision == "fp32") n64.clear();
  for (auto n : n32) rows.push_back(bench_one<float>(n, ceil32, s));
  for (auto n : n64) rows.push_back(bench_one<double>(n, ceil64, s));

  std::printf(
      "\n| n | precision | B | ours (ms) | per-pivot sweep (ms) | speed-up | "
      "G pairs/s (1.5 n^3) | %% of add+min ceiling | closure consistent |\n");
  std::printf("|---|---|---|---|---|---|---|---|---|\n");
  for (const Row& r : rows)
    std::printf("| %zu | %s | %d | %.2f | %.1f (%zu pivots x %zu/%zu) | %.1fx | %.0f | %.0f%% | %s |\n", r.n, r.prec,
                r.block, r.ours_ms, r.sweep_ms, r.sweep_pivots, r.n, r.sweep_pivots, r.sweep_ms / r.ours_ms,
                r.rate / 1e9, 100.0 * r.rate / r.ceiling, r.consistent ? "yes" : "NO");

  if (!batched) {
    GF_CUDA_TRY(cudaStreamDestroy(s));
    return 0;
  }
  // Batched: both methods at every size, what auto picks, and auto's rate against the best. The
  // add+min ceiling counts 1.5·n³ pairs per molecule at the rate of the single-matrix table.
  std::printf(
      "\n| batched n | batch | precision | per-block molecules/s | blocked molecules/s | auto picks | auto / best |\n"
      "|---|---|---|---|---|---|---|\n");
  struct B {
    std::size_t n, batch;
  };
  std::vector<B> bsizes = {{32, 200000}, {64, 100000}, {65, 50000}, {72, 50000}, {80, 50000}, {88, 40000}, {96, 40000},
                           {128, 20000}, {160, 10000}, {192, 8000}, {256, 4000}, {384, 1000}, {512, 500}};
  if (quick) bsizes = {{64, 20000}, {128, 4000}, {256, 500}, {512, 100}};
  for (const B b : bsizes)
    for (const auto prec : {gc::Precision::fp32, gc::Precision::fp64}) {
      const bool f32 = prec == gc::Precision::fp32;
      // the per-block kernel streams through global memory above the shared-memory limit: few
      // molecules suffice to measure its rate
      const std::size_t pb_batch = b.n > 160 ? std::max<std::size_t>(b.batch / 10, 50) : b.batch;
      const double pb = f32 ? bench_batched<float>(b.n, pb_batch, s, gc::BatchedMethod::PerBlock)
                            : bench_batched<double>(b.n, pb_batch, s, gc::BatchedMethod::PerBlock);
      const double bl = f32 ? bench_batched<float>(b.n, b.batch, s, gc::BatchedMethod::Blocked)
                            : bench_batched<double>(b.n, b.batch, s, gc::BatchedMethod::Blocked);
      const auto pick = gc::batched_method_for(b.n, prec);
      const double picked = pick == gc::BatchedMethod::PerBlock ? pb : bl;
      std::printf("| %zu | %zu | %s | %.3g | %.3g | %s | %.2f |\n", b.n, b.batch, f32 ? "fp32" : "fp64", pb, bl,
                  gc::to_string(pick), picked / std::max(pb, bl));
    }
  GF_CUDA_TRY(cudaStreamDestroy(s));
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    return bench_main(argc, argv);
  } catch (const std::exception& e) {  // gemflow::cuda::CudaError, InvalidBounds
    std::fprintf(stderr, "%s\n", e.what());
    return 1;
  }
}

#else
int main() {
  std::printf("Gemflow was built without CUDA: nothing to measure\n");
  return 0;
}
#endif
