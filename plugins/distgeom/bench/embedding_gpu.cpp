// Metric matrix + Cholesky embedding, GPU (embedding_cuda.hpp) against the CPU (embedding.hpp),
// both from host distances to host coordinates as a node or a trial sees them: one table, the
// CPU measured in this process as the baseline.
//
//   distgeom_bench_embedding_gpu [--sizes N,N,...] [--reps R]
//
// Rows: n; CPU metric_matrix(); CPU embed() (4D, pivots restricted to 25 % of the atoms, as the
// NMR workflow); GPU embed_distances() (host → device copy, metric matrix, pivoted Cholesky,
// n×4 factor back, host k×k eigenproblem); speed-up of the whole chain; max |Δx| between the two
// (Å). Wall-clock medians of R repetitions after one warm-up (the GPU buffers are then
// allocated: a trial reuses its thread's embedder). Random points, distances ×(1 ± 5 %).
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "gemflow/distgeom/embedding.hpp"

#if GEMFLOW_DISTGEOM_HAVE_CUDA
#include "gemflow/distgeom/embedding_cuda.hpp"

namespace gd = gemflow::distgeom;

namespace {

template <class F>
double median_ms(int reps, F&& f) {
  std::vector<double> t;
  f();  // warm-up
  for (int r = 0; r < reps; ++r) {
    const auto a = std::chrono::steady_clock::now();
    f();
    t.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - a).count());
  }
  std::sort(t.begin(), t.end());
  return t[t.size() / 2];
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<std::size_t> sizes{500, 1500, 3000, 6000};
  int reps = 5;
  for (int i = 1; i < argc; ++i) {
    if (!std::strcmp(argv[i], "--sizes") && i + 1 < argc) {
      sizes.clear();
      for (char* p = std::strtok(argv[++i], ","); p; p = std::strtok(nullptr, ","))
        sizes.push_back(std::strtoul(p, nullptr, 10));
    } else if (!std::strcmp(argv[i], "--reps") && i + 1 < argc) {
      reps = std::max(1, std::atoi(argv[++i]));
    } else {
      std::fprintf(stderr, "usage: %s [--sizes N,N,...] [--reps R]\n", argv[0]);
      return 2;
    }
  }
  if (gd::cuda::device_count() == 0) {
    std::printf("no CUDA device: nothing to measure\n");
    return 0;
  }
  gd::cuda::GpuEmbedder gpu(0);
  std::printf("%7s %12s %12s %12s %10s %12s\n", "n", "cpu_metric", "cpu_embed", "gpu_chain", "speed-up", "max|dx| A");
  for (std::size_t n : sizes) {
    std::mt19937_64 rng(n);
    std::uniform_real_distribution<double> u(0.0, 3.0 * std::cbrt(double(n)));
    std::uniform_real_distribution<double> s(-0.05, 0.05);
    std::vector<double> x(3 * n), d(n * n, 0.0), g(n * n);
    for (auto& v : x) v = u(rng);
    for (std::size_t i = 0; i < n; ++i)
      for (std::size_t j = 0; j < i; ++j) {
        double r2 = 0;
        for (int k = 0; k < 3; ++k) r2 += (x[3 * i + k] - x[3 * j + k]) * (x[3 * i + k] - x[3 * j + k]);
        d[i * n + j] = d[j * n + i] = std::sqrt(r2) * (1.0 + s(rng));
      }
    std::vector<unsigned char> cand(n, 0);
    for (std::size_t i = 0; i < n; i += 4) cand[i] = 1;
    gd::EmbedResult ec, eg;
    const double t_metric = median_ms(reps, [&] { gd::metric_matrix(d, n, g); });
    const double t_embed = median_ms(reps, [&] { ec = gd::embed(g, n, 4, gd::EmbedMethod::Cholesky, 0, cand); });
    const double t_gpu = median_ms(reps, [&] { eg = gpu.embed_distances(d, n, 4, 0, cand); });
    double dx = 0;
    for (std::size_t i = 0; i < ec.coords.size(); ++i) dx = std::max(dx, std::abs(ec.coords[i] - eg.coords[i]));
    std::printf("%7zu %10.2fms %10.2fms %10.2fms %9.2fx %12.3g\n", n, t_metric, t_embed, t_gpu,
                (t_metric + t_embed) / t_gpu, dx);
  }
  return 0;
}

#else
int main() {
  std::printf("built without CUDA: nothing to measure\n");
  return 0;
}
#endif
