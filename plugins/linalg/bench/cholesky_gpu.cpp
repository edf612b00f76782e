// GPU Cholesky benchmark: one table per precision (TF/s with n³/3 flops, ratio vs cuSOLVER
// potrf in the same run, probe backward error), batched (GB/s vs cusolverDn<t>potrfBatched),
// mixed-precision solve (vs cuSOLVER fp64 potrf + potrs), and an optional tuning sweep.
// Each timing: call + stream sync + status read, on a freshly restored input (copied from a
// pristine buffer outside the timed region), median of the repetitions after one warm-up.
//
// --lookahead-sweep: fp64 panel widths, tiled tails (CholeskyOptions::tiled_tail) and SYRK leaves;
// fp32 panel widths per TF32/FP16 mode (the FP16 modes also with other tails). --variants a,b: only
// variants whose names contain a or b. --interleave R: each variant's runs alternate with cuSOLVER's,
// its ratio against those.
//
//   linalg_bench_cholesky_gpu [--min-n N] [--max-n N] [--sweep] [--lookahead-sweep] [--variants a,b]
//                             [--sizes n1,n2,...] [--interleave R]
//                             [--only fp64,fp32,batched,mixed]
//                             [--batched-n 4,32,...] [--max-batch B] [--batched-reps R]
//                             [--batched-precision fp64|fp32|both] [--no-batched-baseline]
//                             [--ill-conditioned SHIFT] (GMRES-IR vs classic refinement, orders --sizes)
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <string>
#include <vector>

#if GEMFLOW_LINALG_HAVE_CUDA
#include <cublas_v2.h>
#include <cuda_runtime.h>
#include <cusolverDn.h>

#include <gemflow/cuda/buffer.hpp>
#include <gemflow/cuda/cublas.hpp>
#include <gemflow/cuda/cusolver.hpp>
#include <gemflow/cuda/timing.hpp>
#include <gemflow/linalg/cholesky_cuda.hpp>

namespace gc = gemflow::linalg::cuda;

namespace {

/// `n` elements on the device, at least one allocated (size 0 still gives a valid pointer).
template <class T>
gemflow::cuda::DeviceBuffer<T> device_array(std::size_t n) {
  return gemflow::cuda::DeviceBuffer<T>(std::max<std::size_t>(n, 1));
}

double now() { return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count(); }

/// seconds of one run of f after `prep` (untimed).
double time_once(const std::function<void()>& prep, const std::function<void()>& f, cudaStream_t s) {
  prep();
  GF_CUDA_TRY(cudaStreamSynchronize(s));
  const double t0 = now();
  f();
  GF_CUDA_TRY(cudaStreamSynchronize(s));
  return now() - t0;
}

/// median seconds of `reps` runs of f after `prep` (untimed) each, one warm-up first.
double time_median(int reps, const std::function<void()>& prep, const std::function<void()>& f, cudaStream_t s) {
  std::vector<double> t;
  for (int r = -1; r < reps; ++r) {
    const double x = time_once(prep, f, s);
    if (r >= 0) t.push_back(x);
  }
  std::sort(t.begin(), t.end());
  return t[t.size() / 2];
}

/// median milliseconds of `reps` runs of f (enqueued on s) timed with CUDA events around f
/// alone, after `prep` (enqueued before the start event), one warm-up first; `label` names f in
/// the message of a CUDA error.
double time_events_ms(int reps, const std::function<void()>& prep, const std::function<void()>& f, cudaStream_t s,
                      const char* label = "the timed run") {
  try {
    return gemflow::cuda::median_ms(s, reps, 1, prep, f, [] {});
  } catch (const gemflow::cuda::CudaError& e) {
    throw gemflow::cuda::CudaError(std::string("timing ") + label, e);
  }
}

int reps_for(std::int64_t n) { return n <= 4096 ? 7 : (n <= 8192 ? 5 : 3); }
double tflops(std::int64_t n, double sec) { return double(n) * double(n) * double(n) / 3.0 / sec / 1e12; }

struct Cusolver {
  cusolverDnHandle_t h{};
  explicit Cusolver(cudaStream_t s) {
    GF_CUSOLVER_TRY(cusolverDnCreate(&h));
    GF_CUSOLVER_TRY(cusolverDnSetStream(h, s));
  }
  ~Cusolver() { cusolverDnDestroy(h); }
};

template <class T>
void cusolver_potrf(Cusolver& cs, T* a, std::int64_t n, gemflow::cuda::DeviceBuffer<T>& work, int& lwork, int* dinfo) {
  int lw = 0;
  if constexpr (sizeof(T) == 8)
    GF_CUSOLVER_TRY(cusolverDnDpotrf_bufferSize(cs.h, CUBLAS_FILL_MODE_LOWER, int(n), a, int(n), &lw));
  else GF_CUSOLVER_TRY(cusolverDnSpotrf_bufferSize(cs.h, CUBLAS_FILL_MODE_LOWER, int(n), a, int(n), &lw));
  if (lw > lwork || work.empty()) {
    work = device_array<T>(std::size_t(lw));
    lwork = lw;
  }
  if constexpr (sizeof(T) == 8)
    GF_CUSOLVER_TRY(cusolverDnDpotrf(cs.h, CUBLAS_FILL_MODE_LOWER, int(n), a, int(n), work.data(), lwork, dinfo));
  else GF_CUSOLVER_TRY(cusolverDnSpotrf(cs.h, CUBLAS_FILL_MODE_LOWER, int(n), a, int(n), work.data(), lwork, dinfo));
  int info = 0;
  GF_CUDA_TRY(cudaMemcpy(&info, dinfo, sizeof(int), cudaMemcpyDeviceToHost));
  if (info != 0) std::printf("  !! cuSOLVER info = %d\n", info);
}

struct Cfg {
  std::int64_t base, trsm, syrk;
};

template <class T>
Cfg sweep(gc::GpuCholesky& chol, cudaStream_t s, std::vector<std::int64_t> sizes, gc::Fp32Mode mode,
          const char* label) {
  std::printf("\n## Tuning sweep, %s (TF/s; base / trsm_base / syrk_base)\n", label);
  std::vector<Cfg> cfgs;
  for (std::int64_t b : {64, 128, 256, 512})
    for (std::int64_t t : {256, 512, 1024, 1 << 30})
      for (std::int64_t y : {256, 512, 1024}) cfgs.push_back({b, t, y});
  std::vector<double> score(cfgs.size(), 0.0);
  for (std::int64_t n : sizes) {
    auto pristine = device_array<T>(std::size_t(n * n));
    auto a = device_array<T>(std::size_t(n * n));
    gc::fill_random_symmetric(pristine.data(), n, n, 1.3 * std::sqrt(double(n)), 42, s);
    std::printf("n = %lld:", (long long)n);
    double best = 0;
    std::size_t bi = 0;
    for (std::size_t c = 0; c < cfgs.size(); ++c) {
      gc::CholeskyOptions o;
      o.fp32_mode = mode;
      o.base = cfgs[c].base;
      o.trsm_base = cfgs[c].trsm;
      o.syrk_base = cfgs[c].syrk;
      const double t = time_median(
          3,
          [&] {
            GF_CUDA_TRY(cudaMemcpyAsync(a.data(), pristine.data(), sizeof(T) * n * n, cudaMemcpyDeviceToDevice, s));
          },
          [&] {
            if (chol.factor(a.data(), n, n, o).info != 0) std::printf(" !!fail");
          },
          s);
      const double tf = tflops(n, t);
      score[c] += std::log(tf);
      if (tf > best) best = tf, bi = c;
    }
    std::printf(" best %.1f TF/s at %lld/%lld/%lld\n", best, (long long)cfgs[bi].base, (long long)cfgs[bi].trsm,
                (long long)cfgs[bi].syrk);
  }
  std::vector<std::size_t> idx(cfgs.size());
  for (std::size_t i = 0; i < idx.size(); ++i) idx[i] = i;
  std::sort(idx.begin(), idx.end(), [&](auto x, auto y) { return score[x] > score[y]; });
  std::printf("top configs by geometric mean over n:");
  for (std::size_t k = 0; k < 5; ++k)
    std::printf(" %lld/%lld/%lld (%.1f)", (long long)cfgs[idx[k]].base, (long long)cfgs[idx[k]].trsm,
                (long long)cfgs[idx[k]].syrk, std::exp(score[idx[k]] / double(sizes.size())));
  std::printf("\n");
  return cfgs[idx[0]];
}

/// --interleave R: each variant's runs alternate with cuSOLVER's (R pairs after one warm-up pair),
/// and its ratio is against the median of those cuSOLVER runs. Under sustained load the H200
/// sits at its 700 W cap and its SM clock drifts (1.4–1.98 GHz); alternating runs both
/// factorisations through the same states, though each run still heats the next (cuSOLVER
/// 16k: 38.4 ms beside the lookahead, 47.2 ms beside the tiled kernel; docs/performance.md,
/// twenty-first session).
bool g_interleave = false;
int g_interleave_reps = 5;
/// Comma-separated substrings of variant names to run (empty: all); --variants.
std::string g_variants;
/// Orders of the fp64/fp32 tables (empty: min-n, doubling up to max-n); --sizes.
std::vector<std::int64_t> g_sizes;

bool variant_selected(const std::string& name) {
  if (g_variants.empty()) return true;
  std::size_t p = 0;
  while (p <= g_variants.size()) {
    const std::size_t e = std::min(g_variants.find(',', p), g_variants.size());
    if (e > p && name.find(g_variants.substr(p, e - p)) != std::string::npos) return true;
    p = e + 1;
  }
  return false;
}

template <class T>
void table(gc::GpuCholesky& chol, cudaStream_t s, std::int64_t max_n, bool fp32, const Cfg* tuned,
           bool lookahead_sweep = false, std::int64_t min_n = 1024) {
  std::printf("\n## %s Cholesky, lower, column-major (TF/s = n^3/3 / time; ratio vs cuSOLVER %s)\n",
              fp32 ? "fp32" : "fp64", fp32 ? "spotrf" : "dpotrf");
  struct Variant {
    std::string name;
    gc::CholeskyOptions o;
  };
  std::vector<Variant> vs;
  gc::CholeskyOptions o;
  o.algo = gc::CholeskyAlgo::blocked;
  vs.push_back({"blocked", o});
  o = {};
  vs.push_back({"recursive", o});
  if (tuned) {
    o.base = tuned->base, o.trsm_base = tuned->trsm, o.syrk_base = tuned->syrk;
    vs.push_back({"recursive(sweep-best)", o});
  }
  if (lookahead_sweep && !fp32) {  // panel width of the tensor-core panels, against the library panels
    vs.clear();
    o = {};
    o.algo = gc::CholeskyAlgo::lookahead;
    o.panel = gc::PanelAlgo::library;
    o.block = 2048;
    vs.push_back({"la library nb 2048", o});
    o.panel = gc::PanelAlgo::tiles;
    for (std::int64_t nb : {256, 384, 512, 768, 1024, 1536, 2048, 3072, 4096}) {
      o.block = nb;
      vs.push_back({"la tiles nb " + std::to_string(nb), o});
    }
    // the tiled kernel for the last trailing matrix (CholeskyOptions::tiled_tail), panel widths before it
    o = {};
    o.algo = gc::CholeskyAlgo::lookahead;
    for (std::int64_t t : {2048, 3072, 4096, 5120, 5632, 6144, 6656, 7168, 8192}) {
      o.tiled_tail = t;
      vs.push_back({"la tail " + std::to_string(t), o});
      for (std::int64_t nb : {256, 384, 512, 768, 1536}) {
        o.block = nb;
        vs.push_back({"la tail " + std::to_string(t) + " nb " + std::to_string(nb), o});
      }
      o.block = 0;
    }
    o.tiled_tail = 0;
    for (std::int64_t sb : {1024, 2048, 4096, 8192, 16384, 32768}) {  // SYRK leaves of the trailing update
      o.syrk_base = sb;
      vs.push_back({"la syrk " + std::to_string(sb), o});
      o.block = 1536;
      vs.push_back({"la syrk " + std::to_string(sb) + " nb 1536", o});
      o.block = 0;
    }
  }
  if (lookahead_sweep && fp32) {  // every TF32 and FP16 mode: library panels, tensor-core panels of several widths
    vs.clear();
    for (auto mode : {gc::Fp32Mode::tf32x3, gc::Fp32Mode::tf32, gc::Fp32Mode::fp16x3, gc::Fp32Mode::fp16}) {
      const std::string m = gc::fp32_mode_name(mode);
      o = {};
      o.algo = gc::CholeskyAlgo::lookahead;
      o.fp32_mode = mode;
      o.block = 2048;
      if (!gc::is_fp16_mode(mode)) {  // the FP16 modes need tensor-core panels
        o.panel = gc::PanelAlgo::library;
        vs.push_back({m + " library 2048", o});
      }
      o.panel = gc::PanelAlgo::tiles;
      for (std::int64_t nb : {512, 768, 1024, 1536, 2048, 3072, 4096}) {
        if ((nb == 768 || nb == 1536 || nb > 2048) && !gc::is_fp16_mode(mode)) continue;
        o.block = nb;
        vs.push_back({m + " tiles " + std::to_string(nb), o});
      }
      if (mode == gc::Fp32Mode::fp16) {  // the tiled kernel alone, FP16 updates
        gc::CholeskyOptions t;
        t.algo = gc::CholeskyAlgo::tiled;
        t.fp32_mode = mode;
        vs.push_back({m + " tiled", t});
      }
      // where the tiled tail (3×FP16: fp64 arithmetic; 1×FP16: FP16 updates) takes over
      if (gc::is_fp16_mode(mode)) {
        for (std::int64_t t : {3072, 4096, 6144, 8192, 10240, 12288}) {
          if (t > 6144 && mode != gc::Fp32Mode::fp16) continue;
          o.tiled_tail = t;
          for (std::int64_t nb : {1024, 1536, 2048, 3072}) {
            o.block = nb;
            vs.push_back({m + " tiles " + std::to_string(nb) + " tail " + std::to_string(t), o});
          }
        }
      }
    }
  }
  if (!lookahead_sweep) {  // the default (PanelAlgo::automatic, nb by n), then the previous default:
                           // cuSOLVER potrf + recursive TRSM panels
    o = {};
    o.algo = gc::CholeskyAlgo::lookahead;
    vs.push_back({"lookahead (default)", o});
    if (!fp32) {  // without the tiled tail (--lookahead-sweep sweeps it)
      o.tiled_tail = -1;
      vs.push_back({"la tail none", o});
    }
    o = {};
    o.algo = gc::CholeskyAlgo::tiled;
    vs.push_back({fp32 ? "tiled (fp64 arithmetic)" : "tiled", o});
    o = {};
    o.algo = gc::CholeskyAlgo::lookahead;
    o.panel = gc::PanelAlgo::library;
    o.block = 2048;
    vs.push_back({"la library nb 2048", o});
  }
  for (std::int64_t nb : {128, 256, 512, 1024, 2048}) {
    if (lookahead_sweep) break;
    o = {};
    o.algo = gc::CholeskyAlgo::lookahead;
    o.block = nb;
    vs.push_back({"la tiles nb " + std::to_string(nb), o});
    if (fp32 && nb >= 512) {
      o.fp32_mode = gc::Fp32Mode::tf32x3;
      vs.push_back({"lookahead 3xTF32 nb " + std::to_string(nb), o});
      o.fp32_mode = gc::Fp32Mode::tf32;
      vs.push_back({"lookahead 1xTF32 nb " + std::to_string(nb), o});
    }
  }
  if (fp32 && !lookahead_sweep) {  // every fp32 mode at the default panel width
    for (auto mode :
         {gc::Fp32Mode::exact, gc::Fp32Mode::tf32x3, gc::Fp32Mode::fp16x3, gc::Fp32Mode::tf32, gc::Fp32Mode::fp16}) {
      o = {};
      o.algo = gc::CholeskyAlgo::lookahead;
      o.fp32_mode = mode;
      vs.push_back({std::string("lookahead ") + gc::fp32_mode_name(mode), o});
      o.tiled_tail = -1;  // without the tiled tail
      vs.push_back({std::string("lookahead ") + gc::fp32_mode_name(mode) + " no tail", o});
      if (mode == gc::Fp32Mode::fp16) {  // the tiled kernel alone, FP16 updates
        o = {};
        o.algo = gc::CholeskyAlgo::tiled;
        o.fp32_mode = mode;
        vs.push_back({"tiled 1xFP16", o});
      }
      if (mode == gc::Fp32Mode::exact) {  // cuSOLVER's spotrf panels, the default before the tail
        o.panel = gc::PanelAlgo::library;
        vs.push_back({"lookahead exact library panels", o});
      }
    }
  }
  if (fp32) {
    o = {};
    o.fp32_mode = gc::Fp32Mode::tf32x3;
    vs.push_back({"recursive 3xTF32", o});
    if (tuned) {
      o.base = tuned->base, o.trsm_base = tuned->trsm, o.syrk_base = tuned->syrk;
      vs.push_back({"3xTF32(sweep-best)", o});
    }
    o = {};
    o.fp32_mode = gc::Fp32Mode::tf32;
    vs.push_back({"recursive 1xTF32", o});
  }
  std::printf("%7s | %-22s | %8s | %7s | %6s | %9s | %s\n", "n", "algorithm", "time ms", "TF/s", "ratio", "beta",
              "beta/beta_cusolver");
  Cusolver cs(s);
  gemflow::cuda::DeviceBuffer<T> work;
  int lwork = 0;
  auto dinfo = device_array<int>(1);
  std::vector<std::int64_t> orders = g_sizes;
  if (orders.empty())
    for (std::int64_t n = min_n; n <= max_n; n *= 2) orders.push_back(n);
  int dev = 0;
  GF_CUDA_TRY(cudaGetDevice(&dev));
  const gc::AutoDispatch dispatch = gc::auto_dispatch(gc::device_traits(dev));
  const std::int64_t crossover = fp32 ? dispatch.tiled_below_fp32 : dispatch.tiled_below_fp64;
  const std::string tiled_name = fp32 ? "tiled (fp64 arithmetic)" : "tiled";
  for (const std::int64_t n : orders) {
    std::size_t freeb = 0, totalb = 0;
    GF_CUDA_TRY(cudaMemGetInfo(&freeb, &totalb));
    if (double(sizeof(T)) * n * n * 2.6 > double(freeb)) {
      std::printf("%7lld | skipped: %.1f GiB free\n", (long long)n, freeb / 1073741824.0);
      break;
    }
    auto pristine = device_array<T>(std::size_t(n * n));
    auto a = device_array<T>(std::size_t(n * n));
    gc::fill_random_symmetric(pristine.data(), n, n, 1.3 * std::sqrt(double(n)), 1234 + n, s);
    const auto restore = [&] {
      GF_CUDA_TRY(cudaMemcpyAsync(a.data(), pristine.data(), sizeof(T) * n * n, cudaMemcpyDeviceToDevice, s));
    };
    const int reps = reps_for(n);
    const double t0 = time_median(
        reps, restore, [&] { cusolver_potrf<T>(cs, a.data(), n, work, lwork, dinfo.data()); }, s);
    const double b0 = gc::probe_backward_error(pristine.data(), n, a.data(), n, n, 2, s);
    std::printf("%7lld | %-22s | %8.2f | %7.2f | %6.2f | %9.2e | %.2f\n", (long long)n, "cuSOLVER potrf", t0 * 1e3,
                tflops(n, t0), 1.0, b0, 1.0);
    const std::string auto_name = n < crossover ? tiled_name : "lookahead (default)";
    double auto_ratio = 0, best_ratio = 0;
    std::string best_name;
    for (const auto& v : vs) {
      if (!variant_selected(v.name)) continue;
      gc::CholeskyStatus st;
      const auto ours = [&] { st = chol.factor(a.data(), n, n, v.o); };
      double t = 0, tc = t0;  // tc: the cuSOLVER time this variant's ratio is taken against
      if (g_interleave) {
        std::vector<double> tv, tcs;
        for (int r = -1; r < g_interleave_reps; ++r) {
          const double c = time_once(
              restore, [&] { cusolver_potrf<T>(cs, a.data(), n, work, lwork, dinfo.data()); }, s);
          const double x = time_once(restore, ours, s);
          if (r >= 0) tcs.push_back(c), tv.push_back(x);
        }
        std::sort(tv.begin(), tv.end());
        std::sort(tcs.begin(), tcs.end());
        t = tv[tv.size() / 2];
        tc = tcs[tcs.size() / 2];
      } else {
        t = time_median(reps, restore, ours, s);
      }
      const double b = gc::probe_backward_error(pristine.data(), n, a.data(), n, n, 2, s);
      std::printf("%7lld | %-22s | %8.2f | %7.2f | %6.2f | %9.2e | %.2f", (long long)n, v.name.c_str(), t * 1e3,
                  tflops(n, t), tc / t, b, b / b0);
      if (g_interleave) std::printf(" | cuSOLVER %.2f ms interleaved", tc * 1e3);
      std::printf("%s\n", st.ok() ? "" : "  !! not ok");
      if (v.name == auto_name) auto_ratio = tc / t;
      // the candidates of auto: the default lookahead and the tiled kernel (the other rows are tunings)
      if ((v.name == tiled_name || v.name == "lookahead (default)") && tc / t > best_ratio)
        best_ratio = tc / t, best_name = v.name;
    }
    if (auto_ratio > 0 && best_ratio > 0)
      std::printf("%7lld | auto (%s row) picks %s: %.2f×; best of tiled/lookahead: %s %.2f×; auto/best %.3f\n",
                  (long long)n, dispatch.row.c_str(), auto_name.c_str(), auto_ratio, best_name.c_str(), best_ratio,
                  auto_ratio / best_ratio);
    std::fflush(stdout);
  }
}

struct BatchedOpts {
  std::vector<std::int64_t> ns{4, 8, 16, 24, 32, 33, 48, 64, 128, 256, 512};
  std::int64_t max_batch = 0;  // 0: the default caps below
  int reps = 5;
  bool baseline = true;  // time cusolverDn<t>potrfBatched too
};

template <class T>
void batched(gc::GpuCholesky& chol, cudaStream_t s, const BatchedOpts& o) {
  std::printf(
      "\n## batched %s (GB/s = 2·n²·sizeof·batch / time, read + write; ratio vs cusolverDn%spotrfBatched;\n"
      "## device time between CUDA events, info left on the device for both)\n",
      sizeof(T) == 8 ? "fp64" : "fp32", sizeof(T) == 8 ? "D" : "S");
  std::printf("%5s | %8s | %12s | %9s | %12s | %9s | %6s | %s\n", "n", "batch", "cuSOLVER ms", "GB/s", "ours ms",
              "GB/s", "ratio", "max |ours - cuSOLVER| / |L|");
  Cusolver cs(s);
  for (std::int64_t n : o.ns) {
    // ≤ 1 GiB per buffer; ≤ 131072 matrices from n = 32 on. On the H200 (CUDA 13) cuSOLVER's
    // potrfBatched faulted (illegal address) now and then at n = 17–32 after other sizes in the
    // same process, also with our kernel not run (3 of 4 sweeps of fp64 9–32 died, at 26–30), but
    // not at a size run alone (docs/performance.md, nineteenth session): time those sizes one
    // process per n.
    const std::int64_t cap = n >= 32 ? 131072 : (1 << 20);
    std::int64_t batch = std::min<std::int64_t>(cap, (std::int64_t(1) << 30) / (sizeof(T) * n * n));
    if (o.max_batch > 0) batch = std::min(batch, o.max_batch);
    const std::size_t total = std::size_t(batch * n * n);
    auto pristine = device_array<T>(total);
    auto a = device_array<T>(total);
    auto ref = device_array<T>(o.baseline ? std::size_t(n * n) : 1);
    gc::fill_random_symmetric(pristine.data(), n, n, 1.3 * std::sqrt(double(n)) + 1.0, 7, s);
    // replicate matrix 0 over the batch (same data in every slot)
    for (std::int64_t filled = 1; filled < batch; filled *= 2) {
      const std::int64_t cnt = std::min(filled, batch - filled);
      GF_CUDA_TRY(cudaMemcpyAsync(pristine.data() + filled * n * n, pristine.data(), sizeof(T) * cnt * n * n,
                                  cudaMemcpyDeviceToDevice, s));
    }
    std::vector<T*> ptrs(static_cast<std::size_t>(batch));
    for (std::int64_t b = 0; b < batch; ++b) ptrs[b] = a.data() + b * n * n;
    auto dptrs = device_array<T*>(ptrs.size());
    auto dinfo = device_array<int>(ptrs.size());
    GF_CUDA_TRY(cudaMemcpy(dptrs.data(), ptrs.data(), sizeof(T*) * ptrs.size(), cudaMemcpyHostToDevice));
    const auto restore = [&] {
      GF_CUDA_TRY(cudaMemcpyAsync(a.data(), pristine.data(), sizeof(T) * total, cudaMemcpyDeviceToDevice, s));
    };
    std::vector<int> hinfo(ptrs.size());
    const auto count_bad = [&] {
      GF_CUDA_TRY(cudaMemcpy(hinfo.data(), dinfo.data(), sizeof(int) * hinfo.size(), cudaMemcpyDeviceToHost));
      return int(std::count_if(hinfo.begin(), hinfo.end(), [](int v) { return v != 0; }));
    };
    double t0 = 0;
    int bad0 = 0;
    if (o.baseline) {
      t0 = time_events_ms(
          o.reps, restore,
          [&] {
            if constexpr (sizeof(T) == 8)
              GF_CUSOLVER_TRY(cusolverDnDpotrfBatched(cs.h, CUBLAS_FILL_MODE_LOWER, int(n), dptrs.data(), int(n),
                                                      dinfo.data(), int(batch)));
            else
              GF_CUSOLVER_TRY(cusolverDnSpotrfBatched(cs.h, CUBLAS_FILL_MODE_LOWER, int(n), dptrs.data(), int(n),
                                                      dinfo.data(), int(batch)));
          },
          s, sizeof(T) == 8 ? "cusolverDnDpotrfBatched" : "cusolverDnSpotrfBatched");
      bad0 = count_bad();
      // keep the last matrix of cuSOLVER's result to compare with ours
      GF_CUDA_TRY(
          cudaMemcpyAsync(ref.data(), a.data() + (batch - 1) * n * n, sizeof(T) * n * n, cudaMemcpyDeviceToDevice, s));
    }
    GF_CUDA_TRY(cudaMemsetAsync(dinfo.data(), 0x7f, sizeof(int) * hinfo.size(), s));
    const double t1 = time_events_ms(
        o.reps, restore, [&] { chol.factor_batched_async(a.data(), n, n, n * n, batch, dinfo.data()); }, s,
        "GpuCholesky::factor_batched_async");
    const int bad = count_bad();
    double diff = -1;
    if (o.baseline) {
      std::vector<T> x(std::size_t(n * n)), y(std::size_t(n * n));
      GF_CUDA_TRY(cudaMemcpy(x.data(), a.data() + (batch - 1) * n * n, sizeof(T) * n * n, cudaMemcpyDeviceToHost));
      GF_CUDA_TRY(cudaMemcpy(y.data(), ref.data(), sizeof(T) * n * n, cudaMemcpyDeviceToHost));
      double num = 0, den = 0;
      for (std::int64_t j = 0; j < n; ++j)
        for (std::int64_t i = j; i < n; ++i) {
          num = std::max(num, std::abs(double(x[i + j * n]) - double(y[i + j * n])));
          den = std::max(den, std::abs(double(y[i + j * n])));
        }
      diff = num / den;
    }
    const double bytes = 2.0 * double(sizeof(T)) * double(total);
    if (o.baseline)
      std::printf("%5lld | %8lld | %12.4f | %9.1f | %12.4f | %9.1f | %6.2f | %.1e%s%s\n", (long long)n,
                  (long long)batch, t0, bytes / t0 / 1e6, t1, bytes / t1 / 1e6, t0 / t1, diff,
                  bad ? "  !! info != 0" : "", bad0 ? "  !! cuSOLVER info != 0" : "");
    else
      std::printf("%5lld | %8lld | %12s | %9s | %12.4f | %9.1f | %6s | -%s\n", (long long)n, (long long)batch, "-", "-",
                  t1, bytes / t1 / 1e6, "-", bad ? "  !! info != 0" : "");
    std::fflush(stdout);
  }
}

/// The baseline of the solve tables: cuSOLVER fp64 Dpotrf + Dpotrs of A x = b (a n×n, one
/// right-hand side) on the copy af, median seconds over reps (x restored outside the timing).
double time_cusolver_solve(Cusolver& cs, cudaStream_t s, const double* a, double* af, const double* b, double* x,
                           std::int64_t n, int reps) {
  auto dinfo = device_array<int>(1);
  int lw = 0;
  GF_CUSOLVER_TRY(cusolverDnDpotrf_bufferSize(cs.h, CUBLAS_FILL_MODE_LOWER, int(n), af, int(n), &lw));
  auto work = device_array<double>(static_cast<std::size_t>(lw));
  return time_median(
      reps, [&] { GF_CUDA_TRY(cudaMemcpyAsync(x, b, sizeof(double) * n, cudaMemcpyDeviceToDevice, s)); },
      [&] {
        GF_CUDA_TRY(cudaMemcpyAsync(af, a, sizeof(double) * n * n, cudaMemcpyDeviceToDevice, s));
        GF_CUSOLVER_TRY(
            cusolverDnDpotrf(cs.h, CUBLAS_FILL_MODE_LOWER, int(n), af, int(n), work.data(), lw, dinfo.data()));
        GF_CUSOLVER_TRY(cusolverDnDpotrs(cs.h, CUBLAS_FILL_MODE_LOWER, int(n), 1, af, int(n), x, int(n), dinfo.data()));
        int info = 0;
        GF_CUDA_TRY(cudaMemcpyAsync(&info, dinfo.data(), sizeof(int), cudaMemcpyDeviceToHost, s));
      },
      s);
}

void mixed(gc::GpuCholesky& chol, cudaStream_t s, std::int64_t max_n, std::int64_t min_n) {
  std::printf("\n## mixed-precision SPD solve, 1 rhs, kappa ~ 17 (vs cuSOLVER fp64 Dpotrf + Dpotrs on a copy)\n");
  std::printf("%7s | %10s | %-22s | %10s | %6s | %5s | %9s | %9s | %s\n", "n", "fp64 ms", "factor", "mixed ms", "ratio",
              "iters", "eta", "omega", "fallback");
  Cusolver cs(s);
  for (std::int64_t n = std::max<std::int64_t>(2048, min_n); n <= max_n; n *= 2) {
    std::size_t freeb = 0, totalb = 0;
    GF_CUDA_TRY(cudaMemGetInfo(&freeb, &totalb));
    if (8.0 * n * n * 3.2 > double(freeb)) break;
    auto a = device_array<double>(std::size_t(n * n));
    auto af = device_array<double>(std::size_t(n * n));
    auto b = device_array<double>(static_cast<std::size_t>(n));
    auto x = device_array<double>(static_cast<std::size_t>(n));
    gc::fill_random_symmetric(a.data(), n, n, 1.3 * std::sqrt(double(n)), 99 + n, s);
    GF_CUDA_TRY(
        cudaMemcpyAsync(b.data(), a.data(), sizeof(double) * n, cudaMemcpyDeviceToDevice, s));  // b = column 0 of A
    const int reps = reps_for(n);
    const double t0 = time_cusolver_solve(cs, s, a.data(), af.data(), b.data(), x.data(), n, reps);
    struct Variant {
      const char* name;
      gc::CholeskyAlgo algo;
      gc::Fp32Mode mode;
      gc::PanelAlgo panel;
      double componentwise_threshold = 0x1p-12;  // 0: ω to the tolerance always; 1: η alone (dsposv)
    };
    using A = gc::CholeskyAlgo;
    using M = gc::Fp32Mode;
    using P = gc::PanelAlgo;
    for (const Variant& v : {Variant{"la default 3xTF32", A::lookahead, M::tf32x3, P::automatic},
                             Variant{"la library 3xTF32", A::lookahead, M::tf32x3, P::library},
                             Variant{"la tiles 3xTF32", A::lookahead, M::tf32x3, P::tiles},
                             Variant{"la library 1xTF32", A::lookahead, M::tf32, P::library},
                             Variant{"la tiles 1xTF32", A::lookahead, M::tf32, P::tiles},
                             Variant{"la tiles 3xFP16", A::lookahead, M::fp16x3, P::tiles},
                             Variant{"la tiles 1xFP16", A::lookahead, M::fp16, P::tiles},
                             Variant{"la tiles 1xFP16 omega to tol", A::lookahead, M::fp16, P::tiles, 0.0},
                             Variant{"tiled 1xFP16", A::tiled, M::fp16, P::automatic},
                             Variant{"tiled 1xFP16 omega to tol", A::tiled, M::fp16, P::automatic, 0.0},
                             Variant{"rc 1xTF32", A::recursive, M::tf32, P::automatic}}) {
      if (!variant_selected(v.name)) continue;
      gc::MixedSolveOptions o;
      o.factor_algo = v.algo;
      o.factor_mode = v.mode;
      o.factor_panel = v.panel;
      o.componentwise_threshold = v.componentwise_threshold;
      gc::MixedSolveResult r;
      const double t1 = time_median(
          reps, [] {}, [&] { r = chol.solve_mixed(a.data(), n, n, b.data(), n, 1, x.data(), n, o); }, s);
      std::printf("%7lld | %10.2f | %-22s | %10.2f | %6.2f | %5d | %9.2e | %9.2e | %s\n", (long long)n, t0 * 1e3,
                  v.name, t1 * 1e3, t0 / t1, r.iterations, r.backward_error.empty() ? -1.0 : r.backward_error.back(),
                  r.componentwise_backward_error, r.used_fp64_fallback ? "YES" : (r.escalated ? "escalated" : "no"));
    }
    std::fflush(stdout);
  }
}

/// The mixed solve on an ill-conditioned A = G·Gᵀ·3/n + shift·I, G the first n/2 columns of a
/// random symmetric matrix (entries uniform in (−1, 1)): rank n/2 plus shift, κ ≈ 2.9/shift.
/// GMRES-IR (the default) against classic refinement alone (which falls back to fp64 once κ·u32
/// ≳ 1) and cuSOLVER fp64 potrf + potrs.
void illcond(gc::GpuCholesky& chol, cudaStream_t s, double shift) {
  std::printf(
      "\n## mixed-precision solve, ill-conditioned A = G G^T 3/n + %.0e I (rank n/2 + shift: kappa ~ %.0e), "
      "1 rhs\n",
      shift, 2.9 / shift);
  std::printf("%7s | %10s | %-24s | %10s | %6s | %5s | %11s | %9s | %s\n", "n", "fp64 ms", "refinement", "mixed ms",
              "ratio", "iters", "gmres steps", "eta", "fallback");
  Cusolver cs(s);
  cublasHandle_t blas = nullptr;
  GF_CUBLAS_TRY(cublasCreate(&blas));
  GF_CUBLAS_TRY(cublasSetStream(blas, s));
  for (std::int64_t n : g_sizes.empty() ? std::vector<std::int64_t>{4096, 16384} : g_sizes) {
    auto a = device_array<double>(std::size_t(n * n));
    auto af = device_array<double>(std::size_t(n * n));
    auto b = device_array<double>(static_cast<std::size_t>(n));
    auto x = device_array<double>(static_cast<std::size_t>(n));
    // G = R + Rᵀ from the lower-triangle fill R (af as scratch), then A = shift·I + G_r G_rᵀ·3/n (lower)
    GF_CUDA_TRY(cudaMemsetAsync(a.data(), 0, sizeof(double) * n * n, s));
    gc::fill_random_symmetric(a.data(), n, n, 0.0, 7 + n, s);
    const double one = 1.0, scale = 3.0 / double(n);
    GF_CUBLAS_TRY(cublasDgeam(blas, CUBLAS_OP_N, CUBLAS_OP_T, int(n), int(n), &one, a.data(), int(n), &one, a.data(),
                              int(n), af.data(), int(n)));
    GF_CUDA_TRY(cudaMemsetAsync(a.data(), 0, sizeof(double) * n * n, s));
    const std::vector<double> diag(static_cast<std::size_t>(n), shift);
    GF_CUDA_TRY(cudaMemcpy2DAsync(a.data(), sizeof(double) * (n + 1), diag.data(), sizeof(double), sizeof(double), n,
                                  cudaMemcpyHostToDevice, s));
    GF_CUBLAS_TRY(cublasDsyrk(blas, CUBLAS_FILL_MODE_LOWER, CUBLAS_OP_N, int(n), int(n / 2), &scale, af.data(), int(n),
                              &one, a.data(), int(n)));
    GF_CUDA_TRY(
        cudaMemcpyAsync(b.data(), af.data(), sizeof(double) * n, cudaMemcpyDeviceToDevice, s));  // b = column 0 of G
    const int reps = reps_for(n);
    const double t0 = time_cusolver_solve(cs, s, a.data(), af.data(), b.data(), x.data(), n, reps);
    for (bool gmres : {true, false}) {
      gc::MixedSolveOptions o;
      o.gmres = gmres;
      gc::MixedSolveResult r;
      const double t1 = time_median(
          reps, [] {}, [&] { r = chol.solve_mixed(a.data(), n, n, b.data(), n, 1, x.data(), n, o); }, s);
      char steps[32];
      std::snprintf(steps, sizeof steps, "%d (%d it)", r.gmres_steps, r.gmres_iterations);
      std::printf("%7lld | %10.2f | %-24s | %10.2f | %6.2f | %5d | %11s | %9.2e | %s\n", (long long)n, t0 * 1e3,
                  gmres ? "GMRES-IR (default)" : "classic only", t1 * 1e3, t0 / t1, r.iterations, steps,
                  r.backward_error.empty() ? -1.0 : r.backward_error.back(),
                  r.used_fp64_fallback ? "YES" : (r.escalated ? "escalated" : "no"));
    }
    std::fflush(stdout);
  }
  cublasDestroy(blas);
}

}  // namespace

int main(int argc, char** argv) {
  std::int64_t max_n = 32768, min_n = 1024;
  bool do_sweep = false, la_sweep = false;
  std::string only = "fp64,fp32,batched,mixed";
  BatchedOpts bo;
  std::string bprec = "both";
  double ill_shift = 0;
  for (int i = 1; i < argc; ++i) {
    if (!std::strcmp(argv[i], "--max-n") && i + 1 < argc) max_n = std::atoll(argv[++i]);
    else if (!std::strcmp(argv[i], "--min-n") && i + 1 < argc) min_n = std::atoll(argv[++i]);
    else if (!std::strcmp(argv[i], "--lookahead-sweep")) la_sweep = true;
    else if (!std::strcmp(argv[i], "--sweep")) do_sweep = true;
    else if (!std::strcmp(argv[i], "--only") && i + 1 < argc) only = argv[++i];
    else if (!std::strcmp(argv[i], "--variants") && i + 1 < argc) g_variants = argv[++i];
    else if (!std::strcmp(argv[i], "--interleave") && i + 1 < argc) {
      g_interleave = true;
      g_interleave_reps = std::max(1, std::atoi(argv[++i]));
    } else if (!std::strcmp(argv[i], "--sizes") && i + 1 < argc) {
      for (char* t = std::strtok(argv[++i], ","); t; t = std::strtok(nullptr, ",")) g_sizes.push_back(std::atoll(t));
    } else if (!std::strcmp(argv[i], "--batched-n") && i + 1 < argc) {
      bo.ns.clear();
      for (char* t = std::strtok(argv[++i], ","); t; t = std::strtok(nullptr, ",")) bo.ns.push_back(std::atoll(t));
    } else if (!std::strcmp(argv[i], "--max-batch") && i + 1 < argc) bo.max_batch = std::atoll(argv[++i]);
    else if (!std::strcmp(argv[i], "--batched-reps") && i + 1 < argc) bo.reps = std::max(1, std::atoi(argv[++i]));
    else if (!std::strcmp(argv[i], "--batched-precision") && i + 1 < argc) bprec = argv[++i];
    else if (!std::strcmp(argv[i], "--no-batched-baseline")) bo.baseline = false;
    else if (!std::strcmp(argv[i], "--ill-conditioned") && i + 1 < argc) ill_shift = std::atof(argv[++i]);
    else {
      std::fprintf(stderr,
                   "usage: %s [--min-n N] [--max-n N] [--sweep] [--lookahead-sweep] [--only fp64,fp32,batched,mixed]\n"
                   "       [--variants NAME,...] (fp64/fp32 tables: variants whose name contains one of them)\n"
                   "       [--sizes N,...] (fp64/fp32 tables: these orders instead of min-n doubling to max-n)\n"
                   "       [--interleave R] (fp64/fp32 tables: R runs of each variant alternating with cuSOLVER's)\n"
                   "       [--batched-n 4,32,...]\n"
                   "       [--max-batch B] [--batched-reps R] [--batched-precision fp64|fp32|both] "
                   "[--no-batched-baseline]\n"
                   "       [--ill-conditioned SHIFT] (mixed solve of a rank-n/2 + SHIFT·I matrix, orders --sizes)\n",
                   argv[0]);
      return 1;
    }
  }
  if (gc::device_count() == 0) {
    std::printf("no CUDA device: nothing to measure\n");
    return 0;
  }
  cudaStream_t s = nullptr;
  try {
    cudaDeviceProp prop{};
    GF_CUDA_TRY(cudaGetDeviceProperties(&prop, 0));
    std::printf("# GPU Cholesky benchmark on %s (%d SMs, %.0f GiB)\n", prop.name, prop.multiProcessorCount,
                prop.totalGlobalMem / 1073741824.0);
    GF_CUDA_TRY(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    gc::GpuCholesky chol(s);
    Cfg t64{0, 0, 0}, t32{0, 0, 0};
    if (do_sweep) {
      t64 = sweep<double>(chol, s, {4096, 8192, 16384}, gc::Fp32Mode::exact, "fp64");
      t32 = sweep<float>(chol, s, {8192, 16384}, gc::Fp32Mode::tf32x3, "fp32 3xTF32");
    }
    if (only.find("fp64") != std::string::npos)
      table<double>(chol, s, max_n, false, do_sweep ? &t64 : nullptr, la_sweep, min_n);
    if (only.find("fp32") != std::string::npos)
      table<float>(chol, s, max_n, true, do_sweep ? &t32 : nullptr, la_sweep, min_n);
    if (only.find("batched") != std::string::npos) {
      if (bprec != "fp32") batched<double>(chol, s, bo);
      if (bprec != "fp64") batched<float>(chol, s, bo);
    }
    if (only.find("mixed") != std::string::npos) mixed(chol, s, max_n, min_n);
    if (ill_shift > 0) illcond(chol, s, ill_shift);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "error: %s\n", e.what());
    return 1;
  }
  cudaStreamDestroy(s);
  return 0;
}

#else
#include <cstdio>
int main() {
  std::printf("built without CUDA: nothing to measure\n");
  return 0;
}
#endif
