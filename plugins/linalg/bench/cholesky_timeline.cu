// Timeline of the lookahead GPU Cholesky: a CUDA event after each step of its streams (the
// GF_CHOL_TRACE hook of cholesky.cu, defined here before including the library sources), then
// per step kind the summed time since the previous event on the same stream. The tables of
// docs/performance.md ("TF32 everywhere, our triangular solves") come from this program.
//
//   linalg_bench_cholesky_timeline [--n N] [--steps] [--serial] [--nb NB] [--syrk-base B] [--tail T]
//                                  [--panel-cap C] [--panel-cap-from S] [--no-bulk-split]
//                                  [--depth1] [--next-groups G] [--check]
//   linalg_bench_cholesky_timeline [--n N] [--tiled [--slope S] [--ctas-per-sm C] [--no-async] [--fp16]]
//   linalg_bench_cholesky_timeline --trsv | --passes | --mixed [--n N] [--steps]
//
// --tiled: the persistent tiled kernel instead (CholeskyAlgo::tiled, fp64; --fp16: fp32 data with
// 1×FP16 tile updates): the global timer at
// each step of every task (GF_TILED_TRACE), then the critical chain per tile column (flag
// latencies, last update, tile factor, solve) and how busy the CTAs were.
//
// --trsv: the mixed solve's one-right-hand-side triangular solves alone (the inverted diagonal
// blocks and the forward + transposed pair in ms at n = 2003–32k, the error against cuBLAS DTRSV in
// fp64, a check that repeated pairs agree bit for bit, and the chain step split by GF_TRSV_TRACE).
//
// --passes: the mixed solve's passes over A (the fp32 copy with ‖A‖∞, the residual SYMV) in ms and
// GB/s against a copy of the same bytes, and DSYMV, at n = 4k–32k.
//
// --mixed: the mixed-precision solve (1×FP16) at order n, its stages on its own stream.
//
// --steps also prints every event (time from the start, kind, first column). Variants: fp64
// default, fp32 1×TF32 with tensor-core and library panels, fp32 3×TF32, 1×FP16 and 3×FP16 with
// tensor-core panels; --only TEXT keeps those whose label contains TEXT. --no-bulk drops the
// lookahead's bulk updates (the factor is then wrong): the panel chain's time without them.
// --serial runs the bulk updates on the panel stream (same factor, no overlap). --nb, --syrk-base
// and --tail set CholeskyOptions::block, syrk_base and tiled_tail of the lookahead variants.
// --panel-cap C (0: none) and --panel-cap-from S: the fp64 lookahead's panel kernels run on at
// most C CTAs while n − k ≥ S, k > 0 (kPanelCtasBesideBulk, kPanelCapFrom). --no-bulk-split: the
// fp64 bulk updates on one stream instead of two. --depth1: the fp64 lookahead one panel deep
// (Factor::lookahead) instead of two; --next-groups G: kNextGroups. --check: each fp64 factor
// against the one-panel-deep schedule's on the same input.
// --panel-trace: the panel kernel's stages per launch from the global timer of each CTA (a
// barrier before each reading), averaged over the launches (--steps: every launch).
// Each variant runs once untraced (warm-up), then once traced; the traced total includes the
// host-side event calls.
#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <type_traits>
#include <vector>

namespace {
struct TraceEvent {
  cudaEvent_t event;
  const char* what;
  long long column;
  cudaStream_t stream;
};
std::vector<TraceEvent> g_trace;
bool g_tracing = false;
}  // namespace

#define GF_CHOL_TRACE(stream, what, k)                                    \
  do {                                                                    \
    if (g_tracing) {                                                      \
      cudaEvent_t e_ = nullptr;                                           \
      if (cudaEventCreate(&e_) == cudaSuccess) {                          \
        (void)cudaEventRecord(e_, stream);                                \
        g_trace.push_back({e_, what, static_cast<long long>(k), stream}); \
      }                                                                   \
    }                                                                     \
  } while (0)

__device__ __forceinline__ unsigned long long gf_globaltimer() {
  unsigned long long now;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(now));
  return now;
}

// per task: fetched, last update's operands ready, updates done, L_jj ready (solves), flag set, SM;
// diagonal tasks also: tile (j, j − 1) solved and released, factor started, factor done, the form
// of L_{j−1,j−1} loaded, the solve computed
constexpr int kTiledSlots = 11;
__device__ unsigned long long* gf_tiled_trace_buf = nullptr;
#define GF_TILED_TRACE(t, slot)                                        \
  do {                                                                 \
    if (gf_tiled_trace_buf) {                                          \
      gf_tiled_trace_buf[(t)*kTiledSlots + (slot)] = gf_globaltimer(); \
      unsigned smid_;                                                  \
      asm volatile("mov.u32 %0, %%smid;" : "=r"(smid_));               \
      gf_tiled_trace_buf[(t)*kTiledSlots + 5] = smid_;                 \
    }                                                                  \
  } while (0)

// panel kernel (--panel-trace): per CTA a record of the column and the global timer at its start
// (slot 1), block loaded, block factored, block written back, strips solved (slots 2–5, each after
// a barrier)
constexpr int kPanelSlots = 6;
constexpr unsigned kPanelRecords = 1u << 16;
__device__ unsigned long long* gf_panel_trace_buf = nullptr;
__device__ unsigned gf_panel_trace_count = 0;
#define GF_PANEL_TRACE_BEGIN(column)                                             \
  unsigned long long* gf_rec_ = nullptr;                                         \
  if (threadIdx.x == 0 && gf_panel_trace_buf) {                                  \
    const unsigned i_ = atomicAdd(&gf_panel_trace_count, 1u);                    \
    if (i_ < kPanelRecords) {                                                    \
      gf_rec_ = gf_panel_trace_buf + static_cast<std::size_t>(i_) * kPanelSlots; \
      gf_rec_[0] = static_cast<unsigned long long>(column);                      \
      gf_rec_[1] = gf_globaltimer();                                             \
    }                                                                            \
  }
#define GF_PANEL_TRACE(slot)                         \
  do {                                               \
    if (gf_panel_trace_enabled()) {                  \
      __syncthreads();                               \
      if (gf_rec_) gf_rec_[slot] = gf_globaltimer(); \
    }                                                \
  } while (0)
__device__ __forceinline__ bool gf_panel_trace_enabled() { return gf_panel_trace_buf != nullptr; }
bool g_panel_trace = false;

// triangular solves (--trsv): per solve position, the global timer when thread 0 has the last
// block's values (0), after the sums' barrier (1), after the inverse's barrier (2), after its
// publish (3), and when it starts waiting for the last block (4)
constexpr int kTrsvSlots = 5;
__device__ unsigned long long* gf_trsv_trace_buf = nullptr;
#define GF_TRSV_TRACE(pos, slot)                                                            \
  do {                                                                                      \
    if (gf_trsv_trace_buf) gf_trsv_trace_buf[(pos)*kTrsvSlots + (slot)] = gf_globaltimer(); \
  } while (0)

#include "tiled_order.hpp"  // kTiledSlope, the library's default for --slope
double g_tiled_slope = gemflow::linalg::cuda::detail::kTiledSlope;
int g_tiled_ctas = 0;  // per SM, 0: as many as fit (CholeskyOptions::tiled_ctas = this × SMs)
bool g_tiled_async = true;
#define GF_TILED_SLOPE g_tiled_slope
#define GF_TILED_ASYNC g_tiled_async
bool g_bulk = true;
#define GF_CHOL_BULK g_bulk
bool g_serial = false;
long long g_nb = 0, g_syrk_base = 0, g_tail = 0;  // --nb, --syrk-base, --tail (0: the defaults)
#define GF_CHOL_SERIAL g_serial
extern int g_panel_cap;             // --panel-cap C (0: one CTA per strip)
extern long long g_panel_cap_from;  // --panel-cap-from S
bool g_bulk_split = true;           // --no-bulk-split: each bulk update on one stream
#define GF_BULK_SPLIT g_bulk_split
bool g_depth2 = true;      // --depth1: the fp64 lookahead one panel deep
extern int g_next_groups;  // --next-groups G
#define GF_LOOKAHEAD_DEPTH2 g_depth2
#define GF_NEXT_GROUPS g_next_groups
#define GF_PANEL_CAP g_panel_cap
#define GF_PANEL_CAP_FROM g_panel_cap_from

#include "cholesky.cu"
int g_next_groups = gemflow::linalg::cuda::detail::kNextGroups;  // the library's defaults
int g_panel_cap = gemflow::linalg::cuda::detail::kPanelCtasBesideBulk;
long long g_panel_cap_from = gemflow::linalg::cuda::detail::kPanelCapFrom;
#include "demote_kernels.cuh"
#include "spd_solve_mixed.cu"
#include "symv_kernels.cuh"
#include "test_utils.cu"
#include "trsv_kernels.cuh"

#include <gemflow/cuda/timing.hpp>

namespace {

namespace gc = gemflow::linalg::cuda;

/// The panel kernels' records (--panel-trace): per launch, the spread of the CTAs' starts, the
/// mean time per stage, the launch's span and the gap since the previous launch ended; averages.
void panel_trace_report(const unsigned long long* dbuf, bool steps) {
  unsigned count = 0;
  GF_CUDA_TRY(cudaMemcpyFromSymbol(&count, gf_panel_trace_count, sizeof count));
  count = std::min(count, kPanelRecords);
  std::vector<unsigned long long> h(static_cast<std::size_t>(count) * kPanelSlots);
  GF_CUDA_TRY(cudaMemcpy(h.data(), dbuf, sizeof(unsigned long long) * h.size(), cudaMemcpyDeviceToHost));
  struct Launch {
    unsigned long long col, first = ~0ull, last_start = 0, end = 0;
    double st[4] = {};
    int ctas = 0;
  };
  std::vector<Launch> ls;
  for (unsigned i = 0; i < count; ++i) {
    const unsigned long long* r = &h[static_cast<std::size_t>(i) * kPanelSlots];
    auto it = std::find_if(ls.begin(), ls.end(), [&](const Launch& l) { return l.col == r[0]; });
    if (it == ls.end()) {
      ls.push_back({r[0]});
      it = ls.end() - 1;
    }
    it->first = std::min(it->first, r[1]);
    it->last_start = std::max(it->last_start, r[1]);
    it->end = std::max(it->end, r[5]);
    for (int k = 0; k < 4; ++k) it->st[k] += 1e-3 * double(r[2 + k] - r[1 + k]);
    ++it->ctas;
  }
  std::sort(ls.begin(), ls.end(), [](const Launch& x, const Launch& y) { return x.first < y.first; });
  double sum[7] = {};
  std::printf("  panel kernels: %zu launches, %u CTA records\n", ls.size(), count);
  if (steps)
    std::printf("  %8s %5s %8s %8s %8s %8s %8s %8s %8s\n", "column", "CTAs", "gap us", "skew", "load", "factor",
                "write", "strips", "span");
  for (std::size_t i = 0; i < ls.size(); ++i) {
    const Launch& l = ls[i];
    const double gap = i ? 1e-3 * (double(l.first) - double(ls[i - 1].end)) : 0.0;
    const double v[7] = {gap,
                         1e-3 * double(l.last_start - l.first),
                         l.st[0] / l.ctas,
                         l.st[1] / l.ctas,
                         l.st[2] / l.ctas,
                         l.st[3] / l.ctas,
                         1e-3 * double(l.end - l.first)};
    for (int k = 0; k < 7; ++k) sum[k] += v[k];
    if (steps)
      std::printf("  %8llu %5d %8.2f %8.2f %8.2f %8.2f %8.2f %8.2f %8.2f\n", l.col, l.ctas, v[0], v[1], v[2], v[3],
                  v[4], v[5], v[6]);
  }
  const double nl = std::max<double>(1.0, double(ls.size()));
  std::printf(
      "  per launch, us: gap since the previous %.2f, start skew %.2f, load %.2f, factor %.2f, write-back "
      "%.2f, strips %.2f, span %.2f\n",
      sum[0] / nl, sum[1] / nl, sum[2] / nl, sum[3] / nl, sum[4] / nl, sum[5] / nl, sum[6] / nl);
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

/// f() between events e0 and e1 on s, with the GF_CHOL_TRACE events recorded when `traced` (the
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

/// A bench's non-blocking stream and, on request, a cuBLAS handle on it, both destroyed with the
/// scope (throws CudaError when creating them fails).
struct BenchStream {
  cudaStream_t s = nullptr;
  cublasHandle_t blas = nullptr;
  explicit BenchStream(bool with_blas = false) {
    GF_CUDA_TRY(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    try {
      if (with_blas) {
        GF_CUBLAS_TRY(cublasCreate(&blas));
        GF_CUBLAS_TRY(cublasSetStream(blas, s));
      }
    } catch (...) {
      release();
      throw;
    }
  }
  ~BenchStream() { release(); }
  void release() noexcept {
    if (blas) GF_CUDA_TRY_NO_THROW(cublasDestroy(blas));
    GF_CUDA_TRY_NO_THROW(cudaStreamDestroy(s));
  }
  BenchStream(const BenchStream&) = delete;
  BenchStream& operator=(const BenchStream&) = delete;
};

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
    const bool depth2 = g_depth2;
    g_depth2 = false;
    {
      gc::GpuCholesky chol(bs.s);
      chol.factor(ref, n, n, o);
    }
    g_depth2 = depth2;
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
  T *a = nullptr, *pristine = nullptr;
  const std::size_t bytes = sizeof(T) * static_cast<std::size_t>(n) * static_cast<std::size_t>(n);
  GF_CUDA_TRY(cudaMalloc(&a, bytes));
  GF_CUDA_TRY(cudaMalloc(&pristine, bytes));
  gc::fill_random_symmetric(pristine, n, n, 1.3 * std::sqrt(static_cast<double>(n)), 5, s);
  cudaEvent_t e0 = nullptr, e1 = nullptr;
  GF_CUDA_TRY(cudaEventCreate(&e0));
  GF_CUDA_TRY(cudaEventCreate(&e1));
  unsigned long long* pbuf = nullptr;
  if (g_panel_trace) GF_CUDA_TRY(cudaMalloc(&pbuf, sizeof(unsigned long long) * kPanelSlots * kPanelRecords));
  for (int rep = 0; rep < 2; ++rep) {
    GF_CUDA_TRY(cudaMemcpyAsync(a, pristine, bytes, cudaMemcpyDeviceToDevice, s));
    GF_CUDA_TRY(cudaStreamSynchronize(s));
    if (pbuf) {
      unsigned long long* p = rep == 1 ? pbuf : nullptr;
      const unsigned zero = 0;
      GF_CUDA_TRY(cudaMemcpyToSymbol(gf_panel_trace_buf, &p, sizeof p));
      GF_CUDA_TRY(cudaMemcpyToSymbol(gf_panel_trace_count, &zero, sizeof zero));
      GF_CUDA_TRY(cudaMemset(pbuf, 0, sizeof(unsigned long long) * kPanelSlots * kPanelRecords));
    }
    gc::CholeskyStatus st;
    const float total = timed_call(s, e0, e1, rep == 1, [&] { st = chol.factor(a, n, n, o); });
    if (rep == 0) continue;
    std::printf("\n## %s, n = %lld: %.3f ms%s\n", label, n, total, st.ok() ? "" : "  !! not ok");
    if (g_check && std::is_same_v<T, double>) check_against_default(a, pristine, n, o, s);
    report_trace(e0, nullptr, steps);
    if (pbuf) panel_trace_report(pbuf, steps);
  }
  if (pbuf) {
    unsigned long long* null = nullptr;
    GF_CUDA_TRY(cudaMemcpyToSymbol(gf_panel_trace_buf, &null, sizeof null));
    (void)cudaFree(pbuf);
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
  T *a = nullptr, *pristine = nullptr;
  unsigned long long* buf = nullptr;
  const long long tt = (n + 63) / 64, tasks = tt * (tt + 1) / 2;
  const std::size_t bytes = sizeof(T) * static_cast<std::size_t>(n) * static_cast<std::size_t>(n);
  GF_CUDA_TRY(cudaMalloc(&a, bytes));
  GF_CUDA_TRY(cudaMalloc(&pristine, bytes));
  GF_CUDA_TRY(cudaMalloc(&buf, sizeof(unsigned long long) * kTiledSlots * tasks));
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
    unsigned long long* p = rep == 2 ? buf : nullptr;
    GF_CUDA_TRY(cudaMemcpyToSymbol(gf_tiled_trace_buf, &p, sizeof p));
    GF_CUDA_TRY(cudaMemsetAsync(buf, 0, sizeof(unsigned long long) * kTiledSlots * tasks, s));
    GF_CUDA_TRY(cudaMemcpyAsync(a, pristine, bytes, cudaMemcpyDeviceToDevice, s));
    GF_CUDA_TRY(cudaEventRecord(e0, s));
    const gc::CholeskyStatus st = chol.factor(a, n, n, o);
    GF_CUDA_TRY(cudaEventRecord(e1, s));
    GF_CUDA_TRY(cudaEventSynchronize(e1));
    float ms = 0;
    GF_CUDA_TRY(cudaEventElapsedTime(&ms, e0, e1));
    std::printf("tiled%s n = %lld, slope %.4f, CTAs per SM %d%s: %.3f ms%s%s\n",
                std::is_same_v<T, float> ? " 1xFP16" : "", n, g_tiled_slope, g_tiled_ctas,
                g_tiled_async ? "" : ", register-staged", ms, rep == 2 ? " (traced)" : "",
                st.ok() ? "" : "  !! not ok");
  }
  std::vector<unsigned long long> h(static_cast<std::size_t>(kTiledSlots * tasks));
  GF_CUDA_TRY(cudaMemcpy(h.data(), buf, sizeof(unsigned long long) * h.size(), cudaMemcpyDeviceToHost));
  const auto task = [&](long long i, long long j) { return j * tt - j * (j - 1) / 2 + (i - j); };
  unsigned long long t0 = ~0ull, t1 = 0;
  for (long long t = 0; t < tasks; ++t) {
    t0 = std::min(t0, h[t * kTiledSlots]);
    t1 = std::max(t1, h[t * kTiledSlots + 4]);
  }
  const auto at = [&](long long t, int slot) { return (static_cast<double>(h[t * kTiledSlots + slot]) - t0) * 1e-3; };
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
  unsigned long long* null = nullptr;
  GF_CUDA_TRY(cudaMemcpyToSymbol(gf_tiled_trace_buf, &null, sizeof null));
  (void)cudaEventDestroy(e0);
  (void)cudaEventDestroy(e1);
  (void)cudaFree(a);
  (void)cudaFree(pristine);
  (void)cudaFree(buf);
}

/// --trsv: the mixed solve's pair of one-right-hand-side triangular solves (trsv_kernels.cuh), L y = b
/// then Lᵀ x = y with the fp32 factor of a random SPD matrix (ld padded to a multiple of 4, as
/// solve_mixed pads its fp32 copy), launched as solve_mixed launches them (the tickets and the
/// tagged words zeroed before each pair): CUDA events, median of 21 pairs after a warm-up; the
/// inverted diagonal blocks' kernel alike; the relative error against cuBLAS DTRSV on the same L in
/// fp64; the largest relative difference |x − x₀| / |x₀| to the first pair's x (pairs must agree
/// bit for bit: any difference is a race); then one traced pair: the chain step split by the
/// GF_TRSV_TRACE points, mean over the solve positions.
__global__ void widen_kernel(const float* a, double* b, std::int64_t count) {
  for (std::int64_t i = blockIdx.x * std::int64_t(blockDim.x) + threadIdx.x; i < count;
       i += std::int64_t(gridDim.x) * blockDim.x)
    b[i] = a[i];
}

/// --mixed: GpuCholesky::solve_mixed at order n (1×FP16 lookahead factor, one right-hand side), an
/// event after each of its stages on its stream: per stage kind the summed time since the previous
/// event there (--steps: every event of the solve's stream), after an untraced warm-up.
void mixed_timeline(long long n, bool steps) {
  const BenchStream bs;
  cudaStream_t s = bs.s;
  gc::GpuCholesky chol(s);
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
  const BenchStream bs(true);
  cudaStream_t s = bs.s;
  cublasHandle_t blas = bs.blas;
  gc::GpuCholesky chol(s);
  GF_CUDA_TRY(gemflow::cuda::allow_dynamic_smem(d::trsv_invert_diag_kernel, d::trsv_invert_smem_bytes()));
  GF_CUDA_TRY(gemflow::cuda::allow_dynamic_smem(d::trsv_kernel<false>, d::trsv_smem_bytes(false)));
  GF_CUDA_TRY(gemflow::cuda::allow_dynamic_smem(d::trsv_kernel<true>, d::trsv_smem_bytes(true)));
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
          l, ld, n, inv, x, tickets, pub, 1u, nullptr);
    };
    const auto transposed = [&]() {
      d::trsv_kernel<true><<<unsigned(nblk), d::kTrsvThreads, d::trsv_smem_bytes(true), s>>>(
          l, ld, n, inv, x, tickets + 1, pub, 2u, nullptr);
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
      unsigned long long* p0 = tb;
      unsigned long long* p1 = tb + nblk * kTrsvSlots;
      unsigned long long* none = nullptr;
      GF_CUDA_TRY(cudaMemcpyToSymbolAsync(gf_trsv_trace_buf, &p0, sizeof(p0), 0, cudaMemcpyHostToDevice, s));
      forward();
      GF_CUDA_TRY(cudaMemcpyToSymbolAsync(gf_trsv_trace_buf, &p1, sizeof(p1), 0, cudaMemcpyHostToDevice, s));
      transposed();
      GF_CUDA_TRY(cudaMemcpyToSymbolAsync(gf_trsv_trace_buf, &none, sizeof(none), 0, cudaMemcpyHostToDevice, s));
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

int bench_main(int argc, char** argv) {
  long long n = 16384;
  bool steps = false, tiled = false, fp16 = false, trsv = false, passes = false, mixed = false;
  const char* only = nullptr;
  for (int i = 1; i < argc; ++i) {
    if (!std::strcmp(argv[i], "--n") && i + 1 < argc) n = std::atoll(argv[++i]);
    else if (!std::strcmp(argv[i], "--steps")) steps = true;
    else if (!std::strcmp(argv[i], "--tiled")) tiled = true;
    else if (!std::strcmp(argv[i], "--slope") && i + 1 < argc) g_tiled_slope = std::atof(argv[++i]);
    else if (!std::strcmp(argv[i], "--ctas-per-sm") && i + 1 < argc) g_tiled_ctas = std::atoi(argv[++i]);
    else if (!std::strcmp(argv[i], "--no-async")) g_tiled_async = false;
    else if (!std::strcmp(argv[i], "--fp16")) fp16 = true;
    else if (!std::strcmp(argv[i], "--trsv")) trsv = true;
    else if (!std::strcmp(argv[i], "--passes")) passes = true;
    else if (!std::strcmp(argv[i], "--mixed")) mixed = true;
    else if (!std::strcmp(argv[i], "--only") && i + 1 < argc) only = argv[++i];
    else if (!std::strcmp(argv[i], "--no-bulk")) g_bulk = false;
    else if (!std::strcmp(argv[i], "--serial")) g_serial = true;
    else if (!std::strcmp(argv[i], "--nb") && i + 1 < argc) g_nb = std::atoll(argv[++i]);
    else if (!std::strcmp(argv[i], "--syrk-base") && i + 1 < argc) g_syrk_base = std::atoll(argv[++i]);
    else if (!std::strcmp(argv[i], "--tail") && i + 1 < argc) g_tail = std::atoll(argv[++i]);
    else if (!std::strcmp(argv[i], "--no-bulk-split")) g_bulk_split = false;
    else if (!std::strcmp(argv[i], "--depth1")) g_depth2 = false;
    else if (!std::strcmp(argv[i], "--check")) g_check = true;
    else if (!std::strcmp(argv[i], "--next-groups") && i + 1 < argc) g_next_groups = std::atoi(argv[++i]);
    else if (!std::strcmp(argv[i], "--panel-cap") && i + 1 < argc) g_panel_cap = std::atoi(argv[++i]);
    else if (!std::strcmp(argv[i], "--panel-cap-from") && i + 1 < argc) g_panel_cap_from = std::atoll(argv[++i]);
    else if (!std::strcmp(argv[i], "--panel-trace")) g_panel_trace = true;
    else {
      std::fprintf(stderr,
                   "usage: %s [--n N] [--steps] [--only TEXT] [--no-bulk] [--serial] [--nb NB] [--syrk-base B] "
                   "[--tail T] [--panel-cap C] [--panel-cap-from S] [--no-bulk-split] [--depth1] "
                   "[--next-groups G] [--check] [--panel-trace] [--tiled [--slope S] [--ctas-per-sm C] "
                   "[--no-async] [--fp16]] [--trsv]\n",
                   argv[0]);
      return 1;
    }
  }
  if (gc::device_count() == 0) {
    std::printf("no CUDA device: nothing to measure\n");
    return 0;
  }
  try {
    if (trsv) {
      trsv_timeline({2003, 4096, 8192, 16383, 16384, 32768});
      return 0;
    }
    if (passes) {
      passes_timeline({4096, 8192, 12288, 16384, 32768});
      return 0;
    }
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
