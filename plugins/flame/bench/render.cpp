// Fractal flame rendering benchmark at 1920×1080: one table, ratios against baselines measured
// in the same run.
//   CPU: our oneTBB renderer against flam3-render (when installed) on the same flames at the same
//        quality; samples per second of the whole render and the post-processing share.
//   GPU (when built with CUDA and a device is present): basic against divergence_free on the
//        sample flames and on synthetic flames of 1, 2, 5, 10, 20 and 50 xforms.
//   --de-scatter: GPU density estimation by the atomic scatter instead of the shared-memory
//        gather (to compare the post-processing share of the two).
//   --histogram-layouts: rows per flame with the other histogram layouts against the basic row
//        (plain u64 cells, the default): split u32 words with warp-aggregated adds (basic_split)
//        and u64 cells with the warp aggregation alone (basic_u64agg).
//   GPU rows split the post-processing share into its phases: density (log density + density
//   estimation), filter + tone map, copy of the image to the host.
// Usage: flame_bench_render [--cpu-quality Q] [--gpu-quality Q] [--no-cpu] [--no-gpu] [--no-flam3]
//                           [--size WxH] [--de-scatter] [--histogram-layouts] [--only NAME]
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <random>
#include <string>
#include <vector>

#include <sys/resource.h>

#include "gemflow/flame/flame.hpp"
#include "gemflow/flame/render.hpp"
#if GEMFLOW_FLAME_HAVE_CUDA
#include <cuda_runtime.h>

#include "gemflow/flame/render_cuda.hpp"
#endif

using namespace gemflow::flame;
namespace fs = std::filesystem;

namespace {

struct Row {
  std::string device, variant, flame;
  std::size_t xforms = 0;
  double samples = 0, iterate_s = 0, post_s = 0;
  std::string baseline;  // key of the row this one is compared with ("" : none)
  double cpu_s = 0;      // CPU time (user + system, all threads) of a CPU row; 0: not measured
  double density_s = 0, filter_s = 0, copy_s = 0;  // GPU rows: the post-processing phases
};

std::vector<Row> rows;

void print() {
  std::printf("\n%-10s %-16s %-26s %6s %10s %9s %9s %8s %6s %6s %6s %7s %8s %9s %s\n", "device", "variant", "flame",
              "xforms", "samples", "total s", "Msamp/s", "post %", "dens %", "filt %", "copy %", "ratio", "cpu s",
              "ratio cpu", "(vs)");
  for (const auto& r : rows) {
    const double total = r.iterate_s + r.post_s;
    double ratio = 0, ratio_cpu = 0;
    for (const auto& b : rows)
      if (!r.baseline.empty() && b.device + "/" + b.variant + "/" + b.flame == r.baseline) {
        ratio = (r.samples / total) / (b.samples / (b.iterate_s + b.post_s));
        if (r.cpu_s > 0 && b.cpu_s > 0) ratio_cpu = (r.samples / r.cpu_s) / (b.samples / b.cpu_s);
      }
    const auto pct = [&](double s) { return total > 0 ? 100 * s / total : 0.0; };
    std::printf("%-10s %-16s %-26s %6zu %10.3g %9.3f %9.1f %7.1f%% %5.1f%% %5.1f%% %5.1f%% %7s %8.2f %9s %s\n",
                r.device.c_str(), r.variant.c_str(), r.flame.c_str(), r.xforms, r.samples, total,
                r.samples / total / 1e6, pct(r.post_s), pct(r.density_s), pct(r.filter_s), pct(r.copy_s),
                ratio > 0 ? (std::to_string(ratio).substr(0, 5) + "×").c_str() : "", r.cpu_s,
                ratio_cpu > 0 ? (std::to_string(ratio_cpu).substr(0, 5) + "×").c_str() : "", r.baseline.c_str());
  }
  std::fflush(stdout);
}

/// User + system CPU seconds of this process (who = RUSAGE_SELF) or of its waited-for children.
double cpu_seconds(int who) {
  rusage u{};
  ::getrusage(who, &u);
  return static_cast<double>(u.ru_utime.tv_sec + u.ru_stime.tv_sec) +
         1e-6 * static_cast<double>(u.ru_utime.tv_usec + u.ru_stime.tv_usec);
}

Flame at_size(Flame f, std::size_t w, std::size_t h, double quality) {
  const double k = static_cast<double>(w) / static_cast<double>(f.width);
  f.scale *= k;
  f.width = w;
  f.height = h;
  f.quality = quality;
  return f;
}

/// A synthetic flame of n xforms: contractive random affines, common variations in turn.
Flame synthetic(std::size_t n) {
  std::mt19937_64 g(n);
  std::uniform_real_distribution<double> u(-1, 1);
  const int vars[] = {kVar_linear, kVar_sinusoidal, kVar_spherical, kVar_swirl,  kVar_julia,
                      kVar_polar,  kVar_horseshoe,  kVar_disc,      kVar_bubble, kVar_eyefish};
  Flame f;
  f.name = "synthetic_" + std::to_string(n);
  f.width = 1920;
  f.height = 1080;
  f.scale = 300;
  for (std::size_t i = 0; i < n; ++i) {
    Xform x;
    x.weight = 1.0 / static_cast<double>(n);
    x.color = static_cast<double>(i) / static_cast<double>(std::max<std::size_t>(n - 1, 1));
    const double s = 0.5 + 0.3 * u(g), a = 3.14159 * u(g);
    x.coefs = {s * std::cos(a), s * std::sin(a), -s * std::sin(a), s * std::cos(a), u(g), u(g)};
    x.var[static_cast<std::size_t>(vars[i % 10])] = 0.6;
    x.var[static_cast<std::size_t>(vars[(i + 3) % 10])] = 0.4;
    f.xforms.push_back(x);
  }
  for (std::size_t i = 0; i < 256; ++i) f.palette[i] = {i / 255.0, 0.5, 1 - i / 255.0, 1};
  return f;
}

/// flam3-render's wall seconds (and its CPU seconds in *cpu), or −1 when it failed.
double flam3_seconds(const Flame& f, double* cpu) {
  const auto dir = fs::temp_directory_path() / "gemflow_flame_bench";
  fs::create_directories(dir);
  const auto in = dir / "f.flam3";
  std::ofstream(in) << write_flame(f);
  const std::string cmd = "env out='" + (dir / "f.png").string() + "' format=png verbose=0 flam3-render < '" +
                          in.string() + "' > /dev/null 2>&1";
  const double c0 = cpu_seconds(RUSAGE_CHILDREN);
  const auto t0 = std::chrono::steady_clock::now();
  if (std::system(cmd.c_str()) != 0) return -1;
  *cpu = cpu_seconds(RUSAGE_CHILDREN) - c0;
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

}  // namespace

int main(int argc, char** argv) {
  double cpu_q = 10, gpu_q = 200;
  bool cpu = true, gpu = true, peer = true, de_scatter = false, u64_rows = false;
  std::string only;
  std::size_t W = 1920, H = 1080;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--cpu-quality" && i + 1 < argc) cpu_q = std::atof(argv[++i]);
    else if (a == "--gpu-quality" && i + 1 < argc) gpu_q = std::atof(argv[++i]);
    else if (a == "--no-cpu") cpu = false;
    else if (a == "--no-gpu") gpu = false;
    else if (a == "--no-flam3") peer = false;
    else if (a == "--de-scatter") de_scatter = true;
    else if (a == "--histogram-layouts") u64_rows = true;
    else if (a == "--only" && i + 1 < argc) only = argv[++i];
    else if (a == "--size" && i + 1 < argc) std::sscanf(argv[++i], "%zux%zu", &W, &H);
    else {
      std::fprintf(stderr, "unknown argument %s\n", a.c_str());
      return 2;
    }
  }
  const std::string dir = std::string(GEMFLOW_SOURCE_DIR) + "/sample_data/flames/";
  std::vector<Flame> flames;
  for (const auto& f : read_flames(dir + "gemflow_samples.flame").flames) flames.push_back(f);
  flames.push_back(read_flames(dir + "gemflow_sierpinski.flame").flames[0]);

  if (cpu) {
    const bool have_flam3 = peer && fs::exists("/usr/bin/flam3-render");
    for (const auto& f0 : flames) {
      if (!only.empty() && f0.name != only) continue;
      const Flame f = at_size(f0, W, H, cpu_q);
      RenderOptions o;
      o.passes = 1;
      const double c0 = cpu_seconds(RUSAGE_SELF);
      const auto r = render_cpu(f, o);
      const double cpu_s = cpu_seconds(RUSAGE_SELF) - c0;
      Row row{"cpu",
              "tbb",
              f.name,
              f.xforms.size(),
              static_cast<double>(r.iterations),
              r.seconds_iterate,
              r.seconds_post,
              have_flam3 ? "flam3/render/" + f.name : "",
              cpu_s};
      if (have_flam3) {
        double c = 0;
        const double s = flam3_seconds(f, &c);
        if (s > 0) rows.push_back({"flam3", "render", f.name, f.xforms.size(), f.quality * W * H, s, 0, "", c});
      }
      rows.push_back(row);
      print();
    }
  }
#if GEMFLOW_FLAME_HAVE_CUDA
  int devices = 0;
  if (gpu && cudaGetDeviceCount(&devices) == cudaSuccess && devices > 0) {
    std::vector<Flame> gflames;
    for (const auto& f : flames) gflames.push_back(at_size(f, W, H, gpu_q));
    for (std::size_t n : {1, 2, 5, 10, 20, 50}) gflames.push_back(at_size(synthetic(n), W, H, gpu_q));
    // Warm-up (context creation, first launch).
    (void)cuda::render_cuda(at_size(flames[0], 64, 64, 1), RenderOptions{}, cuda::CudaRenderOptions{});
    for (const auto& f : gflames) {
      if (!only.empty() && f.name != only) continue;
      // run −1: basic_split, 0: basic_u64agg, 1: basic (default layout), 2: divergence_free
      for (int run = u64_rows ? -1 : 1; run < 3; ++run) {
        const auto v = run == 2 ? cuda::Variant::DivergenceFree : cuda::Variant::Basic;
        if (v == cuda::Variant::DivergenceFree && f.has_chaos) continue;
        RenderOptions o;
        o.passes = 1;
        cuda::CudaRenderOptions c;
        c.variant = v;
        c.de_scatter = de_scatter;
        if (run == -1) c.histogram = cuda::Histogram::Split32;
        if (run == 0) c.histogram = cuda::Histogram::U64Aggregated;
        const auto r = cuda::render_cuda(f, o, c);
        const std::string name = run == -1 ? "basic_split" : run == 0 ? "basic_u64agg" : cuda::variant_name(v);
        std::string vs;
        if (run == 2 || run <= 0) vs = "cuda/basic/" + f.name;
        Row row{"cuda",         name, f.name, f.xforms.size(), static_cast<double>(r.iterations), r.seconds_iterate,
                r.seconds_post, vs};
        row.density_s = r.seconds_post_density;
        row.filter_s = r.seconds_post_filter_tone;
        row.copy_s = r.seconds_post_copy;
        rows.push_back(row);
      }
      print();
    }
  } else if (gpu) {
    std::printf("(no CUDA device: GPU rows skipped)\n");
  }
#else
  (void)de_scatter;
  (void)u64_rows;
  if (gpu) std::printf("(built without CUDA: GPU rows skipped)\n");
#endif
  std::printf(
      "\nratio: samples/s against the row named in (vs), measured in this run. cpu s: CPU time (user + system, "
      "all threads; flam3-render's from its process) and ratio cpu: samples per CPU second against (vs) — the "
      "fairer ratio on a machine shared with other work. dens/filt/copy %%: the GPU post-processing's phases "
      "(density estimation, filter + tone map: device time; copy of the image to the host) in %% of total s.\n");
  return 0;
}
