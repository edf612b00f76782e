// Timeline of the lookahead GPU Cholesky: a CUDA event after each step of its streams (the
// GF_CHOL_TRACE hook of cholesky.cu, defined here before including the library sources), then
// per step kind the summed time since the previous event on the same stream. The tables of
// docs/performance.md ("TF32 everywhere, our triangular solves") come from this program.
//
//   linalg_bench_cholesky_timeline [--n N] [--steps]
//
// --steps also prints every event (time from the start, kind, first column). Variants: fp64
// default, fp32 1×TF32 with tensor-core and library panels, fp32 3×TF32 with tensor-core panels.
// Each variant runs once untraced (warm-up), then once traced; the traced total includes the
// host-side event calls.
#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
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

#define GF_CHOL_TRACE(stream, what, k)                                        \
  do {                                                                        \
    if (g_tracing) {                                                          \
      cudaEvent_t e_ = nullptr;                                               \
      if (cudaEventCreate(&e_) == cudaSuccess) {                              \
        (void)cudaEventRecord(e_, stream);                                    \
        g_trace.push_back({e_, what, static_cast<long long>(k), stream});     \
      }                                                                       \
    }                                                                         \
  } while (0)

#include "cholesky.cu"
#include "test_utils.cu"

namespace {

namespace gc = gemflow::linalg::cuda;

void ck(cudaError_t e, const char* what) {
  if (e != cudaSuccess) {
    std::fprintf(stderr, "%s: %s\n", what, cudaGetErrorString(e));
    std::exit(2);
  }
}

template <class T>
void timeline(long long n, const gc::CholeskyOptions& o, const char* label, bool steps) {
  cudaStream_t s = nullptr;
  ck(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking), "stream");
  gc::GpuCholesky chol(s);
  T *a = nullptr, *pristine = nullptr;
  const std::size_t bytes = sizeof(T) * static_cast<std::size_t>(n) * static_cast<std::size_t>(n);
  ck(cudaMalloc(&a, bytes), "cudaMalloc");
  ck(cudaMalloc(&pristine, bytes), "cudaMalloc");
  gc::fill_random_symmetric(pristine, n, n, 1.3 * std::sqrt(static_cast<double>(n)), 5, s);
  cudaEvent_t e0 = nullptr, e1 = nullptr;
  ck(cudaEventCreate(&e0), "event");
  ck(cudaEventCreate(&e1), "event");
  for (int rep = 0; rep < 2; ++rep) {
    ck(cudaMemcpyAsync(a, pristine, bytes, cudaMemcpyDeviceToDevice, s), "copy");
    ck(cudaStreamSynchronize(s), "sync");
    g_trace.clear();
    g_tracing = rep == 1;
    ck(cudaEventRecord(e0, s), "record");
    const gc::CholeskyStatus st = chol.factor(a, n, n, o);
    ck(cudaEventRecord(e1, s), "record");
    ck(cudaEventSynchronize(e1), "sync");
    g_tracing = false;
    if (rep == 0) continue;
    float total = 0;
    ck(cudaEventElapsedTime(&total, e0, e1), "elapsed");
    std::printf("\n## %s, n = %lld: %.3f ms%s\n", label, n, total, st.ok() ? "" : "  !! not ok");
    std::vector<std::pair<std::string, double>> sums;  // step kind → time since the stream's previous event
    std::vector<std::pair<cudaStream_t, float>> last;   // per stream, the time of its previous event
    for (const TraceEvent& ev : g_trace) {
      float t = 0;
      ck(cudaEventElapsedTime(&t, e0, ev.event), "elapsed");
      auto l = std::find_if(last.begin(), last.end(), [&](const auto& x) { return x.first == ev.stream; });
      const double since = l == last.end() ? t : t - l->second;
      if (l == last.end()) last.push_back({ev.stream, t});
      else l->second = t;
      auto it = std::find_if(sums.begin(), sums.end(), [&](const auto& x) { return x.first == ev.what; });
      if (it == sums.end()) sums.push_back({ev.what, since});
      else it->second += since;
      if (steps) std::printf("  %9.3f ms  %-12s column %lld (+%.3f)\n", t, ev.what, ev.column, since);
      (void)cudaEventDestroy(ev.event);
    }
    for (const auto& [what, ms] : sums) std::printf("  %-12s %9.3f ms\n", what.c_str(), ms);
  }
  (void)cudaEventDestroy(e0);
  (void)cudaEventDestroy(e1);
  (void)cudaFree(a);
  (void)cudaFree(pristine);
  (void)cudaStreamDestroy(s);
}

}  // namespace

int main(int argc, char** argv) {
  long long n = 16384;
  bool steps = false;
  for (int i = 1; i < argc; ++i) {
    if (!std::strcmp(argv[i], "--n") && i + 1 < argc) n = std::atoll(argv[++i]);
    else if (!std::strcmp(argv[i], "--steps")) steps = true;
    else {
      std::fprintf(stderr, "usage: %s [--n N] [--steps]\n", argv[0]);
      return 1;
    }
  }
  if (gc::device_count() == 0) {
    std::printf("no CUDA device: nothing to measure\n");
    return 0;
  }
  try {
    gc::CholeskyOptions o;
    o.algo = gc::CholeskyAlgo::lookahead;
    timeline<double>(n, o, "fp64, default options", steps);
    o.fp32_mode = gc::Fp32Mode::tf32;
    timeline<float>(n, o, "fp32 1xTF32, tensor-core panels", steps);
    o.panel = gc::PanelAlgo::library;
    timeline<float>(n, o, "fp32 1xTF32, library panels", steps);
    o.panel = gc::PanelAlgo::automatic;
    o.fp32_mode = gc::Fp32Mode::tf32x3;
    timeline<float>(n, o, "fp32 3xTF32, tensor-core panels", steps);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "error: %s\n", e.what());
    return 1;
  }
  return 0;
}
