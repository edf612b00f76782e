// Semi-CRF timings: forward (log Z), forward + backward (marginals and gradients), Viterbi, on the
// CPU fp64 reference and on the GPU, for the shapes: B = 64, T = 10⁴, K = 100, C = 24 and
// the sweep K ∈ {1, 10, 100, 1000} × B ∈ {1, 8, 64} × T ∈ {10³, 10⁴, 10⁵}.
//
// Usage: semicrf_bench_semicrf_bench [--main] [--sweep] [--goals] [--shape B,T,K,C]... [--cpu-seqs N]
//                                     [--reps R] [--flash-inputs] [--flash-ms F,FB,V]
//   --main      only the headline shape (default: headline, then the sweep)
//   --goals     the other goals: K = 1 against K = 30 (B = 64, T = 10⁴, C = 24; K = 1 should
//               be no slower), and one long sequence (B = 1, T = 10⁵, K ∈ {1, 100}, C = 24)
//   --shape     this shape only (repeatable)
//   --cpu-seqs  sequences timed on the CPU per shape (default 1; the CPU time of the whole batch is
//               that × B / N, marked "(×B)": the reference runs sequences one after another)
//   --flash-ms  Flash-SemiCRF's forward, forward + backward and Viterbi times (ms) at the headline
//               shape, as bench/flash_semicrf_peer.py printed them on the same device: the headline
//               row is followed by the goal line, our GPU times against these (default: the
//               issue's H200 figures, 1163, 14 815 and 334 ms), each ratio marked met (≥ 20×) or missed
// Scores: N(0, 1) emissions, N(0, 1) transitions, N(−1, 1) duration biases, seed 1 (the same
// shapes and score distribution a peer benchmark should use). Every GPU row checks its log Z
// against the CPU reference on the first sequence (column "rel.err") and its Viterbi score.
// Times: median of R runs (GPU: CUDA events around the kernels, inputs already on the device and
// their prefix sums computed — by the session's constructor, untimed, as Flash-SemiCRF's cumsum is
// outside its kernels; CPU: steady clock, prefix sums included). Memory: the GPU session's device bytes.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "gemflow/semicrf/semicrf.hpp"

#if GEMFLOW_SEMICRF_HAVE_CUDA
#include <cuda_runtime.h>

#include <gemflow/cuda/timing.hpp>

#include "gemflow/semicrf/semicrf_cuda.hpp"
#endif

namespace sc = gemflow::semicrf;

namespace {

struct Shape {
  std::size_t B, T, K, C;
};

struct Data {
  sc::Model model;
  std::vector<double> f;
  sc::Batch batch;
};

/// Inputs: normal random numbers (seed 1), or with `flash` the deterministic sines that
/// bench/flash_semicrf_peer.py generates too, under Flash-SemiCRF's conventions (centring mean;
/// the first segment scored with log Σ_c' exp Tr[c', c], its α(0, ·) = 0 with a transition), so that
/// both print the same log Z.
bool g_flash = false;

/// Flash-SemiCRF at the headline shape (ms): forward, forward + backward, Viterbi.
double g_peer[3] = {1163.0, 14815.0, 334.0};
const char* g_peer_source = "the issue's H200 figures";

double sine(std::size_t i, double phase) { return std::sin(0.37 * double(i) + phase); }

Data make(const Shape& s) {
  std::mt19937_64 g(1);
  std::normal_distribution<double> n(0.0, 1.0);
  Data d;
  d.model = sc::Model::zeros(s.C, s.K);
  d.f.resize(s.B * s.T * s.C);
  if (g_flash) {
    for (std::size_t i = 0; i < d.model.transitions.size(); ++i) d.model.transitions[i] = 0.5 * sine(i, 0.3);
    for (std::size_t i = 0; i < d.model.duration_bias.size(); ++i) d.model.duration_bias[i] = 0.5 * sine(i, 0.7) - 1.0;
    for (std::size_t i = 0; i < d.f.size(); ++i) d.f[i] = 1.5 * sine(i, 1.1);
    d.model.initial.assign(s.C, 0.0);
    for (std::size_t c = 0; c < s.C; ++c) {
      double m = -INFINITY, sum = 0;
      for (std::size_t cp = 0; cp < s.C; ++cp) m = std::max(m, d.model.transitions[cp * s.C + c]);
      for (std::size_t cp = 0; cp < s.C; ++cp) sum += std::exp(d.model.transitions[cp * s.C + c] - m);
      d.model.initial[c] = m + std::log(sum);
    }
  } else {
    for (auto& v : d.model.transitions) v = n(g);
    for (auto& v : d.model.duration_bias) v = n(g) - 1.0;
    for (auto& v : d.f) v = n(g);
  }
  d.batch.emissions = d.f.data();
  d.batch.lengths.assign(s.B, s.T);
  return d;
}

sc::Options options() {
  sc::Options o;
  if (g_flash) o.centring = sc::Centring::mean;
  return o;
}

template <class F>
double cpu_ms(F&& f, int reps) {
  std::vector<double> t;
  for (int r = 0; r < reps; ++r) {
    const auto a = std::chrono::steady_clock::now();
    f();
    t.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - a).count());
  }
  std::sort(t.begin(), t.end());
  return t[t.size() / 2];
}

void run(const Shape& s, std::size_t cpu_seqs, int reps) {
  Data d = make(s);
  // CPU reference on the first cpu_seqs sequences, scaled to B
  Data cd = d;
  cd.batch.lengths.assign(std::min(cpu_seqs, s.B), s.T);
  const double scale = double(s.B) / double(cd.batch.lengths.size());
  const bool big = double(s.T) * double(s.K) * double(s.C) * double(cd.batch.lengths.size()) > 5e9;
  double cf = NAN, cfb = NAN, cv = NAN, z_cpu = NAN, v_cpu = NAN;
  if (!big) {
    cf = cpu_ms([&] { z_cpu = sc::log_partition(cd.model, cd.batch, options())[0]; }, 1) * scale;
    cfb = cpu_ms([&] { (void)sc::posteriors(cd.model, cd.batch, options()); }, 1) * scale;
    cv = cpu_ms([&] { v_cpu = sc::viterbi(cd.model, cd.batch, options())[0].score; }, 1) * scale;
  }
  if (g_flash && !std::isnan(z_cpu)) std::printf("log Z[0] (CPU) %.12g\n", z_cpu);
  std::printf("%4zu %7zu %5zu %4zu | CPU %10.1f %10.1f %10.1f%s", s.B, s.T, s.K, s.C, cf, cfb, cv,
              scale > 1 ? " (×B)" : "     ");
#if GEMFLOW_SEMICRF_HAVE_CUDA
  if (sc::cuda::device_count() > 0) {
    cudaStream_t st;
    cudaStreamCreate(&st);
    {
      sc::cuda::Session gs(d.model, d.batch, options(), st);
      gs.synchronize();
      auto nop = [] {};
      const float gf = gemflow::cuda::median_ms(
          st, reps, 1, nop, [&] { gs.forward(); }, nop);
      const double z_gpu = gs.log_z()[0];
      const float gfb = gemflow::cuda::median_ms(
          st, reps, 1, nop, [&] { gs.forward_backward(); }, nop);
      const float gv = gemflow::cuda::median_ms(
          st, reps, 1, nop, [&] { gs.viterbi(); }, nop);
      const double v_gpu = gs.paths()[0].score;
      const double rel = std::isnan(z_cpu) ? NAN : std::abs(z_gpu - z_cpu) / std::abs(z_cpu);
      const double vrel = std::isnan(v_cpu) ? NAN : std::abs(v_gpu - v_cpu) / std::abs(v_cpu);
      if (g_flash) std::printf(" | log Z[0] %.12g", z_gpu);
      std::printf(" | GPU %9.2f %9.2f %9.2f | %8.1f MB | rel.err %.1e vit %.1e | ×CPU %6.0f %6.0f %6.0f", gf, gfb, gv,
                  double(gs.device_bytes()) / 1e6, rel, vrel, cf / gf, cfb / gfb, cv / gv);
      if (s.B == 64 && s.T == 10000 && s.K == 100 && s.C == 24) {
        // the speed goal: ≥ 20× Flash-SemiCRF on each of the three at this shape
        const double ours[3] = {gf, gfb, gv};
        const char* name[3] = {"forward", "fwd+bwd", "Viterbi"};
        std::printf("\n  goal ≥ 20× Flash-SemiCRF (%s):", g_peer_source);
        for (int i = 0; i < 3; ++i)
          std::printf(" %s %.0f/%.2f ms = %.1f× (%s, ≤ %.2f ms needed)%s", name[i], g_peer[i], ours[i],
                      g_peer[i] / ours[i], g_peer[i] / ours[i] >= 20.0 ? "met" : "missed", g_peer[i] / 20.0,
                      i < 2 ? ";" : "");
      }
    }
    cudaStreamDestroy(st);
  }
#endif
  std::printf("\n");
  std::fflush(stdout);
}

}  // namespace

int main(int argc, char** argv) {
  bool main_only = false, sweep_only = false, goals = false;
  std::vector<Shape> shapes;
  std::size_t cpu_seqs = 1;
  int reps = 5;
  for (int i = 1; i < argc; ++i) {
    if (!std::strcmp(argv[i], "--main")) main_only = true;
    else if (!std::strcmp(argv[i], "--sweep")) sweep_only = true;
    else if (!std::strcmp(argv[i], "--cpu-seqs") && i + 1 < argc) cpu_seqs = std::stoul(argv[++i]);
    else if (!std::strcmp(argv[i], "--reps") && i + 1 < argc) reps = std::stoi(argv[++i]);
    else if (!std::strcmp(argv[i], "--flash-inputs")) g_flash = true;
    else if (!std::strcmp(argv[i], "--goals")) goals = true;
    else if (!std::strcmp(argv[i], "--flash-ms") && i + 1 < argc) {
      if (std::sscanf(argv[++i], "%lf,%lf,%lf", &g_peer[0], &g_peer[1], &g_peer[2]) != 3 ||
          !(g_peer[0] > 0 && g_peer[1] > 0 && g_peer[2] > 0)) {
        std::fprintf(stderr, "--flash-ms F,FB,V: three positive times in ms, got '%s'\n", argv[i]);
        return 2;
      }
      g_peer_source = "--flash-ms, measured beside this run";
    } else if (!std::strcmp(argv[i], "--shape") && i + 1 < argc) {
      Shape sh{};
      if (std::sscanf(argv[++i], "%zu,%zu,%zu,%zu", &sh.B, &sh.T, &sh.K, &sh.C) != 4 ||
          sh.B * sh.T * sh.K * sh.C == 0) {
        std::fprintf(stderr, "--shape B,T,K,C: four positive integers, got '%s'\n", argv[i]);
        return 2;
      }
      shapes.push_back(sh);
    } else {
      std::fprintf(stderr,
                   "usage: %s [--main] [--sweep] [--goals] [--shape B,T,K,C]... [--cpu-seqs N] [--reps R] "
                   "[--flash-inputs] [--flash-ms F,FB,V]\n",
                   argv[0]);
      return 2;
    }
  }
#if GEMFLOW_SEMICRF_HAVE_CUDA
  if (sc::cuda::device_count() == 0) std::printf("no CUDA device: CPU times only\n");
#else
  std::printf("built without CUDA: CPU times only\n");
#endif
  std::printf(
      "   B       T     K    C |     forward   fwd+bwd    Viterbi (ms)      |     forward   fwd+bwd   Viterbi (ms)\n");
  if (!shapes.empty() || goals) {
    for (const auto& sh : shapes) run(sh, cpu_seqs, reps);
    if (goals)
      for (const Shape& sh :
           {Shape{64, 10000, 1, 24}, Shape{64, 10000, 30, 24}, Shape{1, 100000, 1, 24}, Shape{1, 100000, 100, 24}})
        run(sh, cpu_seqs, reps);
    return 0;
  }
  if (!sweep_only) run({64, 10000, 100, 24}, cpu_seqs, reps);
  if (main_only) return 0;
  for (std::size_t T : {1000, 10000, 100000})
    for (std::size_t B : {1, 8, 64})
      for (std::size_t K : {1, 10, 100, 1000}) run({B, T, K, 24}, cpu_seqs, reps);
  return 0;
}
