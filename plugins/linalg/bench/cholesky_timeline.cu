// Timeline of the lookahead GPU Cholesky: the library's steps timed on the GPU through
// CholeskyProbe::on_step (a CUDA event recorded on the step's stream right after the step is
// enqueued), then per step kind the summed time since the previous event on the same stream. The
// tables of docs/performance.md ("TF32 everywhere, our triangular solves") come from this program.
// It links the plugin's CUDA library as it ships: the probe and the schedule experiments below are
// runtime settings of GpuCholesky (set_probe), and the same steps are NVTX ranges that
// `nsys profile --trace=cuda,nvtx` shows without this program.
//
//   linalg_bench_cholesky_timeline [--n N] [--steps] [--serial] [--nb NB] [--syrk-base B] [--tail T]
//                                  [--panel-cap C] [--panel-cap-from S] [--no-bulk-split]
//                                  [--depth1] [--next-groups G] [--check]
//   linalg_bench_cholesky_timeline [--n N] [--tiled [--slope S] [--ctas-per-sm C] [--no-async] [--fp16]]
//   linalg_bench_cholesky_timeline --mixed [--n N] [--steps]
//
// --tiled: the persistent tiled kernel instead (CholeskyAlgo::tiled, fp64; --fp16: fp32 data with
// 1×FP16 tile updates): the global timer at each step of every task (CholeskyProbe::tiled_trace,
// the kernel's traced instantiation), then the critical chain per tile column (flag latencies, last
// update, tile factor, solve) and how busy the CTAs were.
//
// --mixed: the mixed-precision solve (1×FP16) at order n, its stages on its own stream.
//
// The mixed solve's triangular solves and memory-bound passes alone (--trsv, --passes) are in
// linalg_bench_solve_kernels (bench/solve_kernels.cu).
//
// --steps also prints every event (time from the start, kind, first column). Variants: fp64
// default, fp32 1×TF32 with tensor-core and library panels, fp32 3×TF32, 1×FP16 and 3×FP16 with
// tensor-core panels; --only TEXT keeps those whose label contains TEXT. --no-bulk drops the
// lookahead's bulk updates (the factor is then wrong): the panel chain's time without them.
// --serial runs the bulk updates on the panel stream (same factor, no overlap). --nb, --syrk-base
// and --tail set CholeskyOptions::block, syrk_base and tiled_tail of the lookahead variants.
// --panel-cap C (0: none) and --panel-cap-from S: the fp64 lookahead's panel kernels run on at
// most C CTAs while n − k ≥ S, k > 0 (CholeskyProbe::panel_cap, panel_cap_from). --no-bulk-split:
// the fp64 bulk updates on one stream instead of two. --depth1: the fp64 lookahead one panel deep
// instead of two; --next-groups G: CholeskyProbe::next_groups. --check: each fp64 factor against
// the one-panel-deep schedule's on the same input.
// Each variant runs once untraced (warm-up), then once traced; the traced total includes the
// host-side event calls.
#include <cublas_v2.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <type_traits>
#include <vector>

#include <gemflow/cuda/check.hpp>
#include <gemflow/cuda/cublas.hpp>
#include <gemflow/linalg/cholesky_cuda.hpp>

#include "bench_stream.cuh"

namespace {

namespace gc = gemflow::linalg::cuda;

struct TraceEvent {
  cudaEvent_t event;
  const char* what;
  long long column;
  cudaStream_t stream;
};
std::vector<TraceEvent> g_trace;
bool g_tracing = false;

/// The probe of every GpuCholesky here: the schedule experiments from the command line, and
/// on_step recording an event after each step while g_tracing.
gc::CholeskyProbe g_probe;
int g_tiled_ctas = 0;  // per SM, 0: as many as fit (CholeskyOptions::tiled_ctas = this × SMs)
long long g_nb = 0, g_syrk_base = 0, g_tail = 0;  // --nb, --syrk-base, --tail (0: the defaults)

void record_step(gc::Stream stream, const char* what, std::int64_t column) {
  if (!g_tracing) return;
  cudaEvent_t e = nullptr;
  GF_CUDA_TRY(cudaEventCreate(&e));
  g_trace.push_back({e, what, static_cast<long long>(column), stream});
  GF_CUDA_TRY(cudaEventRecord(e, stream));
}

/// The recorded trace (g_trace, times from e0), then its events destroyed: per step kind the
/// summed time since the previous event on the same stream (only: that stream's events alone;
/// nullptr: every stream); steps: every event. Returns the time of the last event reported.
float report_trace(cudaEvent_t e0, cudaStream_t only, bool steps) {
  std::vector<std::pair<std::string, double>> sums;  // step kind → time since the stream's previous event
  std::vector<std::pair<cudaStream_t, float>> last;  // per stream, the time of its previous event
  float latest = 0;
  for (const TraceEvent& ev : g_trace) {
    if (!only || ev.stream == only) {
      float t = 0;
      GF_CUDA_TRY(cudaEventElapsedTime(&t, e0, ev.event));
      auto l = std::find_if(last.begin(), last.end(), [&](const auto& x) { return x.first == ev.stream; });
      const double since = l == last.end() ? t : t - l->second;
      if (l == last.end()) last.push_back({ev.stream, t});
      else l->second = t;
      auto it = std::find_if(sums.begin(), sums.end(), [&](const auto& x) { return x.first == ev.what; });
      if (it == sums.end()) sums.push_back({ev.what, since});
      else it->second += since;
      if (steps) std::printf("  %9.3f ms  %-20s column %lld (+%.3f)\n", t, ev.what, ev.column, since);
      latest = t;
    }
    (void)cudaEventDestroy(ev.event);
  }
  g_trace.clear();
  for (const auto& [what, ms] : sums) std::printf("  %-20s %9.3f ms\n", what.c_str(), ms);
  return latest;
}

/// f() between events e0 and e1 on s, with the on_step events recorded when `traced` (the
/// trace cleared first); waits for e1 and returns the elapsed ms.
template <class F>
float timed_call(cudaStream_t s, cudaEvent_t e0, cudaEvent_t e1, bool traced, F&& f) {
  g_trace.clear();
  g_tracing = traced;
  GF_CUDA_TRY(cudaEventRecord(e0, s));
  f();
  GF_CUDA_TRY(cudaEventRecord(e1, s));
  GF_CUDA_TRY(cudaEventSynchronize(e1));
  g_tracing = false;
  float ms = 0;
  GF_CUDA_TRY(cudaEventElapsedTime(&ms, e0, e1));
  return ms;
}

bool g_check = false;  // --check
/// --check (fp64): the factor in `a` against the lookahead one panel deep on the same input (a
/// copy of `pristine`, same options otherwise), max |difference| / max |L| over the whole array.
template <class T>
void check_against_default(const T* a, const T* pristine, long long n, const gc::CholeskyOptions& o, cudaStream_t s) {
  if constexpr (std::is_same_v<T, double>) {
    const BenchStream bs(true);
    const std::size_t bytes = sizeof(T) * static_cast<std::size_t>(n) * static_cast<std::size_t>(n);
    T* ref = nullptr;
    GF_CUDA_TRY(cudaMalloc(&ref, bytes));
    GF_CUDA_TRY(cudaMemcpyAsync(ref, pristine, bytes, cudaMemcpyDeviceToDevice, bs.s));
    {
      gc::CholeskyProbe one_deep = g_probe;
      one_deep.on_step = nullptr;
      one_deep.depth2 = false;
      gc::GpuCholesky chol(bs.s);
      chol.set_probe(&one_deep);
      chol.factor(ref, n, n, o);
    }
    GF_CUDA_TRY(cudaStreamSynchronize(s));
    int imax = 0, irel = 0;
    const double minus = -1.0;
    const long long count = n * n;
    cublasIdamax(bs.blas, int(count), ref, 1, &irel);
    double big = 0;
    GF_CUDA_TRY(cudaMemcpy(&big, ref + (irel - 1), sizeof big, cudaMemcpyDeviceToHost));
    cublasDaxpy(bs.blas, int(count), &minus, a, 1, ref, 1);
    cublasIdamax(bs.blas, int(count), ref, 1, &imax);
    double diff = 0;
    GF_CUDA_TRY(cudaMemcpy(&diff, ref + (imax - 1), sizeof diff, cudaMemcpyDeviceToHost));
    std::printf("   check: max |L - L_default| / max |L| = %.3e (at %lld, %lld)\n", std::fabs(diff) / std::fabs(big),
                (long long)(imax - 1) % n, (long long)(imax - 1) / n);
    (void)cudaFree(ref);
  }
}

template <class T>
void timeline(long long n, const gc::CholeskyOptions& o, const char* label, bool steps) {
  const BenchStream bs;
  cudaStream_t s = bs.s;
  gc::GpuCholesky chol(s);
  chol.set_probe(&g_probe);
  T *a = nullptr, *pristine = nullptr;
  const std::size_t bytes = sizeof(T) * static_cast<std::size_t>(n) * static_cast<std::size_t>(n);
  GF_CUDA_TRY(cudaMalloc(&a, bytes));
  GF_CUDA_TRY(cudaMalloc(&pristine, bytes));
  gc::fill_random_symmetric(pristine, n, n, 1.3 * std::sqrt(static_cast<double>(n)), 5, s);
  cudaEvent_t e0 = nullptr, e1 = nullptr;
  GF_CUDA_TRY(cudaEventCreate(&e0));
  GF_CUDA_TRY(cudaEventCreate(&e1));
  for (int rep = 0; rep < 2; ++rep) {
    GF_CUDA_TRY(cudaMemcpyAsync(a, pristine, bytes, cudaMemcpyDeviceToDevice, s));
    GF_CUDA_TRY(cudaStreamSynchronize(s));
    gc::CholeskyStatus st;
    const float total = timed_call(s, e0, e1, rep == 1, [&] { st = chol.factor(a, n, n, o); });
    if (rep == 0) continue;
    std::printf("\n## %s, n = %lld: %.3f ms%s\n", label, n, total, st.ok() ? "" : "  !! not ok");
    if (g_check && std::is_same_v<T, double>) check_against_default(a, pristine, n, o, s);
    report_trace(e0, nullptr, steps);
  }
  (void)cudaEventDestroy(e0);
  (void)cudaEventDestroy(e1);
  (void)cudaFree(a);
  (void)cudaFree(pristine);
}

/// The tiled kernel's task trace at order n: per tile column j (averaged over j in four ranges),
/// the chain from one published diagonal tile to the next, and the CTAs' busy time.
template <class T>
void tiled_timeline(long long n) {
  const BenchStream bs;
  cudaStream_t s = bs.s;
  gc::GpuCholesky chol(s);
  gc::CholeskyProbe probe = g_probe;  // tiled_trace set for the traced run only
  chol.set_probe(&probe);
  T *a = nullptr, *pristine = nullptr;
  unsigned long long* buf = nullptr;
  constexpr int kSlots = gc::CholeskyProbe::kTiledTraceSlots;
  const long long tt = (n + 63) / 64, tasks = tt * (tt + 1) / 2;
  const std::size_t bytes = sizeof(T) * static_cast<std::size_t>(n) * static_cast<std::size_t>(n);
  GF_CUDA_TRY(cudaMalloc(&a, bytes));
  GF_CUDA_TRY(cudaMalloc(&pristine, bytes));
  GF_CUDA_TRY(cudaMalloc(&buf, sizeof(unsigned long long) * kSlots * tasks));
  gc::fill_random_symmetric(pristine, n, n, 1.3 * std::sqrt(static_cast<double>(n)), 5, s);
  gc::CholeskyOptions o;
  o.algo = gc::CholeskyAlgo::tiled;
  if (std::is_same_v<T, float>) o.fp32_mode = gc::Fp32Mode::fp16;  // --fp16: FP16 tile updates
  int sms = 0;
  GF_CUDA_TRY(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
  o.tiled_ctas = static_cast<std::int64_t>(g_tiled_ctas) * sms;
  cudaEvent_t e0 = nullptr, e1 = nullptr;
  GF_CUDA_TRY(cudaEventCreate(&e0));
  GF_CUDA_TRY(cudaEventCreate(&e1));
  for (int rep = 0; rep < 3; ++rep) {  // untraced, untraced, traced
    probe.tiled_trace = rep == 2 ? buf : nullptr;
    GF_CUDA_TRY(cudaMemsetAsync(buf, 0, sizeof(unsigned long long) * kSlots * tasks, s));
    GF_CUDA_TRY(cudaMemcpyAsync(a, pristine, bytes, cudaMemcpyDeviceToDevice, s));
    GF_CUDA_TRY(cudaEventRecord(e0, s));
    const gc::CholeskyStatus st = chol.factor(a, n, n, o);
    GF_CUDA_TRY(cudaEventRecord(e1, s));
    GF_CUDA_TRY(cudaEventSynchronize(e1));
    float ms = 0;
    GF_CUDA_TRY(cudaEventElapsedTime(&ms, e0, e1));
    std::printf(
        "tiled%s n = %lld, slope %s, CTAs per SM %d%s: %.3f ms%s%s\n", std::is_same_v<T, float> ? " 1xFP16" : "", n,
        g_probe.tiled_slope > 0 ? std::to_string(g_probe.tiled_slope).c_str() : "default", g_tiled_ctas,
        g_probe.tiled_async ? "" : ", register-staged", ms, rep == 2 ? " (traced)" : "", st.ok() ? "" : "  !! not ok");
  }
  std::vector<unsigned long long> h(static_cast<std::size_t>(kSlots * tasks));
  GF_CUDA_TRY(cudaMemcpy(h.data(), buf, sizeof(unsigned long long) * h.size(), cudaMemcpyDeviceToHost));
  const auto task = [&](long long i, long long j) { return j * tt - j * (j - 1) / 2 + (i - j); };
  unsigned long long t0 = ~0ull, t1 = 0;
  for (long long t = 0; t < tasks; ++t) {
    t0 = std::min(t0, h[t * kSlots]);
    t1 = std::max(t1, h[t * kSlots + 4]);
  }
  const auto at = [&](long long t, int slot) { return (static_cast<double>(h[t * kSlots + slot]) - t0) * 1e-3; };
  // off-diagonal tiles two or more below the diagonal: taken → updates done (waits included), per
  // tile update
  double upd = 0, nupd = 0;
  for (long long j = 0; j < tt; ++j)
    for (long long i = j + 2; i < tt; ++i) {
      const long long t = task(i, j);
      upd += at(t, 2) - at(t, 0);
      nupd += static_cast<double>(j);
    }
  const double span = (static_cast<double>(t1) - t0) * 1e-3;
  std::printf(
      "first take to last flag %.1f us; %.2f us per tile update of the off-diagonal tasks (waits "
      "included)\n",
      span, upd / std::max(nupd, 1.0));
  // diagonal task j (which also solves tile (j, j − 1)): slot 2 = its updates done, 3 = L_{j−1,j−1}
  // seen, 4 = L_jj published; "sub late": task (j, j − 1) handed its updates over after L_{j−1,j−1}
  std::printf("%-12s | %9s | %9s | %9s | %12s | %9s | %7s | %7s | %7s | %7s | %7s | %7s\n", "columns", "chain us",
              "late", "->seen", "solve+factor", "sub late", "solve", "update", "factor", "publish", "(form",
              "compute)");
  const long long ranges[5] = {1, tt / 4, tt / 2, 3 * tt / 4, tt};

  for (int r = 0; r < 4; ++r) {
    double c[11] = {};
    long long cnt = 0;
    for (long long j = std::max(1ll, ranges[r]); j < ranges[r + 1]; ++j) {
      const long long d = task(j, j), dp = task(j - 1, j - 1);
      const double prev = at(dp, 4);
      c[0] += at(d, 4) - prev;                              // L_{j−1,j−1} published → L_jj published
      c[1] += std::max(0.0, at(d, 2) - prev);               // its updates ended after L_{j−1,j−1}
      c[2] += at(d, 3) - std::max(at(d, 2), prev);          // the flag seen
      c[3] += at(d, 4) - at(d, 3);                          // solve (j, j − 1), update, factor, publish
      c[4] += std::max(0.0, at(task(j, j - 1), 4) - prev);  // the sub-diagonal tile's updates, late
      c[5] += at(d, 6) - at(d, 3);                          // form of L_{j−1,j−1} loaded, tile (j, j − 1) solved
      c[6] += at(d, 7) - at(d, 6);    // A_jj −= L_{j,j−1}·L_{j,j−1}ᵀ, into the factor's buffer
      c[7] += at(d, 8) - at(d, 7);    // factor_block_phases
      c[8] += at(d, 4) - at(d, 8);    // solve form published, flag
      c[9] += at(d, 9) - at(d, 3);    // the form loaded
      c[10] += at(d, 10) - at(d, 9);  // the solve computed
      ++cnt;
    }
    if (!cnt) continue;
    std::printf(
        "%5lld-%-6lld | %9.2f | %9.2f | %9.2f | %12.2f | %9.2f | %7.2f | %7.2f | %7.2f | %7.2f | %7.2f | %7.2f\n",
        ranges[r], ranges[r + 1] - 1, c[0] / cnt, c[1] / cnt, c[2] / cnt, c[3] / cnt, c[4] / cnt, c[5] / cnt,
        c[6] / cnt, c[7] / cnt, c[8] / cnt, c[9] / cnt, c[10] / cnt);
  }
  // occupancy over time: tasks between taken and published (the CTAs holding one), and of those
  // the ones past their updates (solve or hand-over), per tenth of the span; the chain's column
  const int kBuckets = 10;
  std::printf("%-16s | %9s | %9s | %s\n", "time us", "tasks held", "past upd.", "chain at column");
  for (int b = 0; b < kBuckets; ++b) {
    const double lo = span * b / kBuckets, hi = span * (b + 1) / kBuckets;
    double held = 0, past = 0;
    for (long long t = 0; t < tasks; ++t) {
      const double t_take = at(t, 0), t_upd = at(t, 2), t_done = at(t, 4);
      held += std::max(0.0, std::min(hi, t_done) - std::max(lo, t_take));
      past += std::max(0.0, std::min(hi, t_done) - std::max(lo, t_upd));
    }
    long long col = 0;
    for (long long j = 0; j < tt; ++j)
      if (at(task(j, j), 4) <= hi) col = j;
    std::printf("%7.0f-%-8.0f | %9.1f | %9.1f | %lld\n", lo, hi, held / (hi - lo), past / (hi - lo), col);
  }
  (void)cudaEventDestroy(e0);
  (void)cudaEventDestroy(e1);
  (void)cudaFree(a);
  (void)cudaFree(pristine);
  (void)cudaFree(buf);
}

/// --mixed: GpuCholesky::solve_mixed at order n (1×FP16 lookahead factor, one right-hand side), an
/// event after each of its stages on its stream: per stage kind the summed time since the previous
/// event there (--steps: every event of the solve's stream), after an untraced warm-up.
void mixed_timeline(long long n, bool steps) {
  const BenchStream bs;
  cudaStream_t s = bs.s;
  gc::GpuCholesky chol(s);
  chol.set_probe(&g_probe);
  double *a = nullptr, *b = nullptr, *x = nullptr;
  GF_CUDA_TRY(cudaMalloc(&a, sizeof(double) * n * n));
  GF_CUDA_TRY(cudaMalloc(&b, sizeof(double) * n));
  GF_CUDA_TRY(cudaMalloc(&x, sizeof(double) * n));
  gc::fill_random_symmetric(a, n, n, 1.3 * std::sqrt(static_cast<double>(n)), 5, s);
  {
    std::vector<double> h(static_cast<std::size_t>(n));
    for (std::size_t i = 0; i < h.size(); ++i) h[i] = std::sin(0.37 * double(i) + 0.1);
    GF_CUDA_TRY(cudaMemcpy(b, h.data(), sizeof(double) * n, cudaMemcpyHostToDevice));
  }
  gc::MixedSolveOptions o;
  o.factor_panel = gc::PanelAlgo::tiles;
  cudaEvent_t e0 = nullptr, e1 = nullptr;
  GF_CUDA_TRY(cudaEventCreate(&e0));
  GF_CUDA_TRY(cudaEventCreate(&e1));
  for (int rep = 0; rep < 2; ++rep) {
    GF_CUDA_TRY(cudaStreamSynchronize(s));
    gc::MixedSolveResult r;
    const float total = timed_call(s, e0, e1, rep == 1, [&] { r = chol.solve_mixed(a, n, n, b, n, 1, x, n, o); });
    if (rep == 0) continue;
    std::printf("\n## mixed solve (1xFP16), n = %lld: %.3f ms, %d steps, eta %.2e%s\n", n, total, r.iterations + 1,
                r.backward_error.empty() ? -1.0 : r.backward_error.back(), r.converged ? "" : "  !! not converged");
    const float last = report_trace(e0, s, steps);
    std::printf("  %-20s %9.3f ms\n", "(after the last)", total - last);
  }
  (void)cudaFree(a);
  (void)cudaFree(b);
  (void)cudaFree(x);
}

}  // namespace

int bench_main(int argc, char** argv) {
  long long n = 16384;
  bool steps = false, tiled = false, fp16 = false, mixed = false;
  const char* only = nullptr;
  for (int i = 1; i < argc; ++i) {
    if (!std::strcmp(argv[i], "--n") && i + 1 < argc) n = std::atoll(argv[++i]);
    else if (!std::strcmp(argv[i], "--steps")) steps = true;
    else if (!std::strcmp(argv[i], "--tiled")) tiled = true;
    else if (!std::strcmp(argv[i], "--slope") && i + 1 < argc) g_probe.tiled_slope = std::atof(argv[++i]);
    else if (!std::strcmp(argv[i], "--ctas-per-sm") && i + 1 < argc) g_tiled_ctas = std::atoi(argv[++i]);
    else if (!std::strcmp(argv[i], "--no-async")) g_probe.tiled_async = false;
    else if (!std::strcmp(argv[i], "--fp16")) fp16 = true;
    else if (!std::strcmp(argv[i], "--mixed")) mixed = true;
    else if (!std::strcmp(argv[i], "--only") && i + 1 < argc) only = argv[++i];
    else if (!std::strcmp(argv[i], "--no-bulk")) g_probe.bulk = false;
    else if (!std::strcmp(argv[i], "--serial")) g_probe.serial = true;
    else if (!std::strcmp(argv[i], "--nb") && i + 1 < argc) g_nb = std::atoll(argv[++i]);
    else if (!std::strcmp(argv[i], "--syrk-base") && i + 1 < argc) g_syrk_base = std::atoll(argv[++i]);
    else if (!std::strcmp(argv[i], "--tail") && i + 1 < argc) g_tail = std::atoll(argv[++i]);
    else if (!std::strcmp(argv[i], "--no-bulk-split")) g_probe.bulk_split = false;
    else if (!std::strcmp(argv[i], "--depth1")) g_probe.depth2 = false;
    else if (!std::strcmp(argv[i], "--check")) g_check = true;
    else if (!std::strcmp(argv[i], "--next-groups") && i + 1 < argc) g_probe.next_groups = std::atoi(argv[++i]);
    else if (!std::strcmp(argv[i], "--panel-cap") && i + 1 < argc) g_probe.panel_cap = std::atoi(argv[++i]);
    else if (!std::strcmp(argv[i], "--panel-cap-from") && i + 1 < argc) g_probe.panel_cap_from = std::atoll(argv[++i]);
    else {
      std::fprintf(stderr,
                   "usage: %s [--n N] [--steps] [--only TEXT] [--no-bulk] [--serial] [--nb NB] [--syrk-base B] "
                   "[--tail T] [--panel-cap C] [--panel-cap-from S] [--no-bulk-split] [--depth1] "
                   "[--next-groups G] [--check] [--tiled [--slope S] [--ctas-per-sm C] [--no-async] [--fp16]] "
                   "[--mixed]\n",
                   argv[0]);
      return 1;
    }
  }
  g_probe.on_step = record_step;
  if (gc::device_count() == 0) {
    std::printf("no CUDA device: nothing to measure\n");
    return 0;
  }
  try {
    if (mixed) {
      mixed_timeline(n, steps);
      return 0;
    }
    if (tiled) {
      if (fp16) tiled_timeline<float>(n);
      else tiled_timeline<double>(n);
      return 0;
    }
    gc::CholeskyOptions o;
    o.algo = gc::CholeskyAlgo::lookahead;
    o.block = g_nb;
    o.syrk_base = g_syrk_base;
    o.tiled_tail = g_tail;
    const auto run = [&](auto zero, const char* label) {  // --only TEXT: the variants whose label contains it
      if (!only || std::strstr(label, only)) timeline<decltype(zero)>(n, o, label, steps);
    };
    run(0.0, "fp64, default options");
    o.fp32_mode = gc::Fp32Mode::tf32;
    run(0.0f, "fp32 1xTF32, tensor-core panels");
    o.panel = gc::PanelAlgo::library;
    run(0.0f, "fp32 1xTF32, library panels");
    o.panel = gc::PanelAlgo::automatic;
    o.fp32_mode = gc::Fp32Mode::tf32x3;
    run(0.0f, "fp32 3xTF32, tensor-core panels");
    o.fp32_mode = gc::Fp32Mode::fp16;
    run(0.0f, "fp32 1xFP16, tensor-core panels");
    o.fp32_mode = gc::Fp32Mode::fp16x3;
    run(0.0f, "fp32 3xFP16, tensor-core panels");
  } catch (const std::exception& e) {
    std::fprintf(stderr, "error: %s\n", e.what());
    return 1;
  }
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
