// CPU triangle smoothing benchmark: one table, ratios against baselines run in this process.
//
//   distgeom_bench_smoothing_cpu [--sizes 250,500,1000] [--threads 2] [--tile 64]
//                                [--no-rdkit] [--rdkit-script PATH] [--markdown]
//
// Input per n: random points at protein-like density (n atoms in a cube of side 4·n^(1/3) Å),
// true distances, bounds loosened at random (d < 6 Å: L = d(1 − 0.25 r), U = d(1 + 0.25 r');
// farther pairs L = min(d, 3.2 Å), U = 1000 Å). The same matrix goes to every contender:
//   reference   smooth_bounds_reference (per-k, fp64, one thread)
//   blocked     smooth_bounds fp64 on 1 and on --threads threads, and fp32 on --threads
//   RDKit       rdkit.DistanceGeometry.DoTriangleSmoothing via /usr/bin/python3 and
//               smoothing_rdkit.py (next to this file); it times only the smoothing call.
// Times are the best of 3 runs (1 run for the reference and RDKit). RDKit's result is compared
// with ours entry by entry (upper triangle = U, lower = L). Last: how fast a cancel request
// stops the blocked closure at n = 2000 (the callback cancels after 0.3 s).
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <unistd.h>

#include <gemflow/distgeom/smoothing.hpp>

namespace gd = gemflow::distgeom;
namespace fs = std::filesystem;
using clk = std::chrono::steady_clock;

namespace {

double since(clk::time_point t) { return std::chrono::duration<double>(clk::now() - t).count(); }

struct Bounds {
  std::size_t n;
  std::vector<double> lower, upper;
};

Bounds make_bounds(std::size_t n, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> uni(0.0, 1.0);
  const double side = 4.0 * std::cbrt(static_cast<double>(n));
  std::vector<double> x(3 * n);
  for (double& v : x) v = side * uni(rng);
  Bounds b{n, std::vector<double>(n * n, 0.0), std::vector<double>(n * n, 0.0)};
  for (std::size_t i = 0; i < n; ++i)
    for (std::size_t j = i + 1; j < n; ++j) {
      const double d = std::hypot(x[3 * i] - x[3 * j], x[3 * i + 1] - x[3 * j + 1], x[3 * i + 2] - x[3 * j + 2]);
      double l = std::min(d, 3.2), u = 1000.0;
      if (d < 6.0) {
        l = d * (1.0 - 0.25 * uni(rng));
        u = d * (1.0 + 0.25 * uni(rng));
      }
      b.lower[i * n + j] = b.lower[j * n + i] = l;
      b.upper[i * n + j] = b.upper[j * n + i] = u;
    }
  return b;
}

struct Run {
  double seconds = 0;
  std::vector<double> lower, upper;
  gd::SmoothingReport report;
};

template <class F>
Run best_of(int reps, F f) {
  Run best;
  best.seconds = 1e300;
  for (int r = 0; r < reps; ++r) {
    Run x = f();
    if (x.seconds < best.seconds) best = std::move(x);
  }
  return best;
}

Run run_blocked(const Bounds& b, unsigned threads, std::size_t tile) {
  Run r{0, b.lower, b.upper, {}};
  gd::SmoothingOptions o;
  o.threads = threads;
  o.tile = tile;
  const auto t = clk::now();
  r.report = gd::smooth_bounds(std::span<double>(r.lower), std::span<double>(r.upper), b.n, o);
  r.seconds = since(t);
  return r;
}

double run_blocked_fp32(const Bounds& b, unsigned threads, std::size_t tile) {
  std::vector<float> l(b.lower.begin(), b.lower.end()), u(b.upper.begin(), b.upper.end());
  gd::SmoothingOptions o;
  o.threads = threads;
  o.tile = tile;
  const auto t = clk::now();
  (void)gd::smooth_bounds(std::span<float>(l), std::span<float>(u), b.n, o);
  return since(t);
}

Run run_reference(const Bounds& b) {
  Run r{0, b.lower, b.upper, {}};
  const auto t = clk::now();
  r.report = gd::smooth_bounds_reference(std::span<double>(r.lower), std::span<double>(r.upper), b.n);
  r.seconds = since(t);
  return r;
}

// ---- .npy (version 1.0, little-endian float64, C order) ------------------------------------

void write_npy(const fs::path& p, const std::vector<double>& a, std::size_t n) {
  std::string header =
      "{'descr': '<f8', 'fortran_order': False, 'shape': (" + std::to_string(n) + ", " + std::to_string(n) + "), }";
  while ((10 + header.size() + 1) % 64 != 0) header += ' ';
  header += '\n';
  std::ofstream f(p, std::ios::binary);
  f.write("\x93NUMPY\x01\x00", 8);
  const unsigned short len = static_cast<unsigned short>(header.size());
  const char le[2] = {static_cast<char>(len & 0xff), static_cast<char>(len >> 8)};
  f.write(le, 2);
  f.write(header.data(), static_cast<std::streamsize>(header.size()));
  f.write(reinterpret_cast<const char*>(a.data()), static_cast<std::streamsize>(a.size() * sizeof(double)));
  if (!f) throw std::runtime_error("cannot write " + p.string());
}

std::vector<double> read_npy(const fs::path& p, std::size_t n) {
  std::ifstream f(p, std::ios::binary);
  char magic[10];
  if (!f.read(magic, 10) || std::memcmp(magic, "\x93NUMPY", 6) != 0 || magic[6] != 1)
    throw std::runtime_error(p.string() + ": not a version-1 .npy file");
  const std::size_t hl =
      static_cast<unsigned char>(magic[8]) | (static_cast<std::size_t>(static_cast<unsigned char>(magic[9])) << 8);
  std::string header(hl, '\0');
  f.read(header.data(), static_cast<std::streamsize>(hl));
  const std::string shape = "(" + std::to_string(n) + ", " + std::to_string(n) + ")";
  if (header.find("'<f8'") == std::string::npos || header.find(shape) == std::string::npos ||
      header.find("'fortran_order': False") == std::string::npos)
    throw std::runtime_error(p.string() + ": expected C-order float64 " + shape + ", header " + header);
  std::vector<double> a(n * n);
  if (!f.read(reinterpret_cast<char*>(a.data()), static_cast<std::streamsize>(a.size() * sizeof(double))))
    throw std::runtime_error(p.string() + ": truncated");
  return a;
}

struct RdkitRun {
  bool ran = false;
  std::string error, version;
  double seconds = 0;
  bool ok = false;
  std::vector<double> matrix;  ///< RDKit layout: upper triangle U, lower triangle L
};

RdkitRun run_rdkit(const Bounds& b, const std::string& script) {
  RdkitRun r;
  const std::size_t n = b.n;
  const fs::path dir = fs::temp_directory_path() / ("gemflow_smoothing_bench_" + std::to_string(::getpid()));
  fs::create_directories(dir);
  const fs::path in = dir / "in.npy", out = dir / "out.npy";
  std::vector<double> bm(n * n, 0.0);
  for (std::size_t i = 0; i < n; ++i)
    for (std::size_t j = 0; j < n; ++j)
      if (i < j) bm[i * n + j] = b.upper[i * n + j];
      else if (i > j) bm[i * n + j] = b.lower[i * n + j];
  write_npy(in, bm, n);
  const std::string cmd = "/usr/bin/python3 '" + script + "' '" + in.string() + "' '" + out.string() + "' 2>&1";
  std::string text;
  if (FILE* p = ::popen(cmd.c_str(), "r")) {
    char buf[512];
    while (std::fgets(buf, sizeof buf, p)) text += buf;
    const int rc = ::pclose(p);
    if (rc != 0) r.error = "exit " + std::to_string(rc) + ": " + text;
  } else {
    r.error = "cannot run " + cmd;
  }
  if (r.error.empty()) {
    std::istringstream s(text);
    std::string w1, w2, w3;
    int ok = 0;
    if (s >> w1 >> r.version >> w2 >> r.seconds >> w3 >> ok && w1 == "rdkit") {
      r.ok = ok != 0;
      r.matrix = read_npy(out, n);
      r.ran = true;
    } else {
      r.error = "unexpected output: " + text;
    }
  }
  fs::remove_all(dir);
  return r;
}

struct Diff {
  std::size_t differ = 0, differ_1e9 = 0;
  double max_abs = 0;
};

/// Our closure vs RDKit's matrix (U in its upper triangle, L in its lower).
Diff compare(const Run& ours, const std::vector<double>& rd, std::size_t n) {
  Diff d;
  for (std::size_t i = 0; i < n; ++i)
    for (std::size_t j = 0; j < n; ++j) {
      if (i == j) continue;
      const double v = i < j ? ours.upper[i * n + j] : ours.lower[i * n + j];
      const double e = std::abs(v - rd[i * n + j]);
      d.differ += e != 0;
      d.differ_1e9 += e > 1e-9;
      d.max_abs = std::max(d.max_abs, e);
    }
  return d;
}

std::string fmt(const char* f, double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, f, v);
  return buf;
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<std::size_t> sizes = {250, 500, 1000};
  unsigned threads = 2;
  std::size_t tile = 64;
  bool rdkit = true, markdown = false;
  std::string script = (fs::path(__FILE__).parent_path() / "smoothing_rdkit.py").string();
  for (int a = 1; a < argc; ++a) {
    const std::string arg = argv[a];
    auto next = [&]() -> std::string {
      if (a + 1 >= argc) {
        std::fprintf(stderr, "%s needs a value\n", arg.c_str());
        std::exit(2);
      }
      return argv[++a];
    };
    if (arg == "--sizes") {
      sizes.clear();
      std::stringstream s(next());
      for (std::string x; std::getline(s, x, ',');) sizes.push_back(std::stoul(x));
    } else if (arg == "--threads") {
      threads = static_cast<unsigned>(std::stoul(next()));
    } else if (arg == "--tile") {
      tile = std::stoul(next());
    } else if (arg == "--no-rdkit") {
      rdkit = false;
    } else if (arg == "--rdkit-script") {
      script = next();
    } else if (arg == "--markdown") {
      markdown = true;
    } else {
      std::fprintf(stderr,
                   "usage: %s [--sizes 250,500,1000] [--threads 2] [--tile 64] [--no-rdkit] "
                   "[--rdkit-script PATH] [--markdown]\n",
                   argv[0]);
      return 2;
    }
  }
  if (rdkit && !fs::exists(script)) {
    std::fprintf(stderr, "RDKit script %s not found (use --rdkit-script or --no-rdkit)\n", script.c_str());
    return 2;
  }

  std::printf(
      "CPU triangle smoothing: distgeom_bench_smoothing_cpu, %u hardware threads, SIMD kernels %s, "
      "tile %zu, blocked on %u threads\n",
      std::thread::hardware_concurrency(), gd::smoothing_simd_target(), tile, threads);
  const char* sep = markdown ? " | " : "  ";
  std::string rdkit_version;
  std::vector<std::string> rows;
  rows.push_back(std::string(markdown ? "| " : "") + "n" + sep + "reference s" + sep + "blocked 1 thr s" + sep +
                 "blocked s" + sep + "blocked fp32 s" + sep + "RDKit s" + sep + "ref/blocked" + sep + "RDKit/blocked" +
                 sep + "RDKit/blocked fp32" + sep + "entries != RDKit (>1e-9)" + sep + "max abs diff vs RDKit, Å" +
                 (markdown ? " |" : ""));
  if (markdown) rows.push_back("|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|");
  for (std::size_t n : sizes) {
    const Bounds b = make_bounds(n, 20240 + n);
    const Run ref = run_reference(b);
    const Run one = best_of(3, [&] { return run_blocked(b, 1, tile); });
    const Run blk = best_of(3, [&] { return run_blocked(b, threads, tile); });
    double f32 = 1e300;
    for (int r = 0; r < 3; ++r) f32 = std::min(f32, run_blocked_fp32(b, threads, tile));
    // Self-check: blocked vs reference (rounding only; see smoothing.hpp).
    double maxdiff = 0;
    for (std::size_t k = 0; k < n * n; ++k)
      maxdiff = std::max({maxdiff, std::abs(blk.upper[k] - ref.upper[k]), std::abs(blk.lower[k] - ref.lower[k])});
    if (!(maxdiff <= 1e-9) || !blk.report.consistent) {
      std::fprintf(stderr, "n = %zu: blocked differs from reference by %g Å (consistent %d)\n", n, maxdiff,
                   blk.report.consistent);
      return 1;
    }
    std::string rd_s = "-", rd_ratio = "-", rd_ratio32 = "-", rd_diff = "-", rd_max = "-";
    if (rdkit) {
      const RdkitRun rd = run_rdkit(b, script);
      if (!rd.ran) {
        std::fprintf(stderr, "RDKit failed: %s\n", rd.error.c_str());
        return 1;
      }
      rdkit_version = rd.version;
      const Diff d = compare(blk, rd.matrix, n);
      rd_s = fmt("%.3f", rd.seconds) + (rd.ok ? "" : " (returned false)");
      rd_ratio = fmt("%.0f", rd.seconds / blk.seconds);
      rd_ratio32 = fmt("%.0f", rd.seconds / f32);
      rd_diff = std::to_string(d.differ) + " (" + std::to_string(d.differ_1e9) + ")";
      rd_max = fmt("%.2g", d.max_abs);
    }
    rows.push_back(std::string(markdown ? "| " : "") + std::to_string(n) + sep + fmt("%.3f", ref.seconds) + sep +
                   fmt("%.4f", one.seconds) + sep + fmt("%.4f", blk.seconds) + sep + fmt("%.4f", f32) + sep + rd_s +
                   sep + fmt("%.1f", ref.seconds / blk.seconds) + sep + rd_ratio + sep + rd_ratio32 + sep + rd_diff +
                   sep + rd_max + (markdown ? " |" : ""));
    std::fflush(stdout);
  }
  if (!rdkit_version.empty()) std::printf("RDKit %s (/usr/bin/python3)\n", rdkit_version.c_str());
  for (const auto& r : rows) std::printf("%s\n", r.c_str());

  // Cancellation latency at n = 2000: the callback asks to stop 0.3 s into the run.
  {
    const Bounds b = make_bounds(2000, 7);
    std::vector<double> l = b.lower, u = b.upper;
    gd::SmoothingOptions o;
    o.threads = threads;
    o.tile = tile;
    const auto t0 = clk::now();
    auto last = t0, cancel_at = t0;
    double first = -1, max_gap = 0;
    int calls = 0;
    o.progress = [&](double) {
      const auto now = clk::now();
      if (first < 0) first = std::chrono::duration<double>(now - t0).count();
      else max_gap = std::max(max_gap, std::chrono::duration<double>(now - last).count());
      last = now;
      ++calls;
      if (now - t0 > std::chrono::milliseconds(300)) {
        cancel_at = now;
        return true;
      }
      return false;
    };
    const auto r = gd::smooth_bounds(std::span<double>(l), std::span<double>(u), b.n, o);
    std::printf(
        "cancel at n = 2000: cancelled %s; %d callbacks, the first %.1f ms after the call (input checks "
        "and tiled copy), then at most %.1f ms apart; returned %.1f ms after the cancelling callback\n",
        r.cancelled ? "yes" : "NO", calls, 1e3 * first, 1e3 * max_gap, 1e3 * since(cancel_at));
  }
  return 0;
}
