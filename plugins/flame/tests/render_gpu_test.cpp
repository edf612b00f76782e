// The CUDA renderer against the CPU reference (label gpu: every test skips with a message when
// no CUDA device is present). Tolerances: the GPU image is the CPU image up to sampling noise:
// at 128 pixels and quality 400 our CPU image is 39.9–60 dB (SSIM ≥ 0.979) from flam3-render's
// on these flames (docs/flames.md), so the floors 34 dB / 0.96 (45 dB / 0.99 for the Sierpinski
// triangle) leave the GPU the same margin; fp32 variations within 2e-3 relative of fp64 at 95 %
// of random points, as the CPU fp32 test.
#include <cmath>
#include <random>

#include "flame_test_support.hpp"

#if GEMFLOW_FLAME_HAVE_CUDA
#include <cuda_runtime.h>

#include "gemflow/flame/detail/core.hpp"
#include "gemflow/flame/detail/prepare.hpp"
#include "gemflow/flame/render_cuda.hpp"

namespace gemflow::flame {
namespace {

using namespace testing;

bool have_device() {
  int n = 0;
  return cudaGetDeviceCount(&n) == cudaSuccess && n > 0;
}
#define REQUIRE_DEVICE() \
  if (!have_device()) GTEST_SKIP() << "no CUDA device"

Flame load(const std::string& file, std::size_t index) { return read_flames(file).flames.at(index); }

Flame shrink(Flame f, std::size_t width, double quality) {
  const double k = static_cast<double>(width) / static_cast<double>(f.width);
  f.width = width;
  f.height = static_cast<std::size_t>(std::max(1.0, std::round(static_cast<double>(f.height) * k)));
  f.scale *= k;
  f.quality = quality;
  return f;
}

void gpu_matches_cpu(const Flame& f, cuda::Variant v, double min_psnr, double min_ssim, RenderOptions o = {}) {
  o.passes = 2;
  const auto cpu = render_cpu(f, o);
  cuda::CudaRenderOptions c;
  c.variant = v;
  cuda::Variant used{};
  const auto gpu = cuda::render_cuda(f, o, c, &used);
  ASSERT_EQ(gpu.rgba.size(), cpu.rgba.size());
  // With transparency the straight RGB of faint pixels is noise divided by a small alpha:
  // compared as seen, over black.
  const auto cmp = o.transparency
                       ? compare_images(over_black(gpu.rgba), over_black(cpu.rgba), f.width, f.height, 4, 4, 2)
                       : compare_images(gpu.rgba, cpu.rgba, f.width, f.height, 4, 4, 2);
  std::printf("%s %s: PSNR %.2f dB SSIM %.4f, %.3f s iterate + %.3f s post on the GPU\n", f.name.c_str(),
              cuda::variant_name(used), cmp.psnr, cmp.ssim, gpu.seconds_iterate, gpu.seconds_post);
  EXPECT_GE(cmp.psnr, min_psnr);
  EXPECT_GE(cmp.ssim, min_ssim);
  EXPECT_GE(gpu.iterations, cpu.iterations);
}

TEST(RenderGpu, BasicAndDivergenceFreeMatchTheCpu) {
  REQUIRE_DEVICE();
  for (std::size_t i = 0; i < 3; ++i) {
    const Flame f = shrink(load(sample("gemflow_samples.flame"), i), 128, 400);
    SCOPED_TRACE(f.name);
    gpu_matches_cpu(f, cuda::Variant::Basic, 34, 0.96);
    if (!f.has_chaos) gpu_matches_cpu(f, cuda::Variant::DivergenceFree, 34, 0.96);
  }
  gpu_matches_cpu(shrink(load(sample("gemflow_sierpinski.flame"), 0), 128, 400), cuda::Variant::DivergenceFree, 45,
                  0.99);
}

// earlyclip and transparency on the device: the same functions as the CPU (detail/core.hpp),
// so the same floors; with transparency the alpha channel is compared too (as grey).
TEST(RenderGpu, EarlyclipAndTransparencyMatchTheCpu) {
  REQUIRE_DEVICE();
  Flame f = shrink(load(sample("gemflow_samples.flame"), 0), 128, 400);
  f.background = {0.2, 0.4, 0.6};
  for (int mode = 1; mode < 4; ++mode) {
    RenderOptions o;
    o.earlyclip = (mode & 1) != 0;
    o.transparency = (mode & 2) != 0;
    SCOPED_TRACE(mode);
    gpu_matches_cpu(f, cuda::Variant::DivergenceFree, 34, 0.96, o);
    if (!o.transparency) continue;
    o.passes = 2;
    const auto cpu = render_cpu(f, o);
    const auto gpu = cuda::render_cuda(f, o, cuda::CudaRenderOptions{});
    const auto a = compare_images(alpha_as_grey(gpu.rgba), alpha_as_grey(cpu.rgba), f.width, f.height, 4, 4, 2);
    std::printf("alpha: PSNR %.2f dB\n", a.psnr);
    EXPECT_GE(a.psnr, 34.0);
  }
}

// Density estimation by the shared-memory gather (the default) against the atomic scatter, on
// the same histogram (same seed): the same sums in another order and rounding (the scatter adds
// in 2⁻³² fixed point), so the 8-bit images agree but for rare last-bit flips: ≥ 55 dB. At
// supersample 1 (radius 9: a 42 KB tile) and 2 (radius 11 / 19 with estimator 5 / 9).
TEST(RenderGpu, DensityEstimationGatherMatchesScatter) {
  REQUIRE_DEVICE();
  for (int ss : {1, 2}) {
    for (std::size_t i : {0, 1}) {
      Flame f = shrink(load(sample("gemflow_samples.flame"), i), 160, 100);
      ASSERT_GT(f.estimator_radius, 0);
      f.supersample = ss;
      RenderOptions o;
      o.seed = 4;
      cuda::CudaRenderOptions gather, scatter;
      gather.variant = scatter.variant = cuda::Variant::Basic;
      scatter.de_scatter = true;
      const auto a = cuda::render_cuda(f, o, gather), b = cuda::render_cuda(f, o, scatter);
      const auto cmp = compare_images(a.rgba, b.rgba, f.width, f.height, 4, 4, 1);
      std::printf("%s ss %d: gather vs scatter PSNR %.2f dB; post %.4f s vs %.4f s\n", f.name.c_str(), ss, cmp.psnr,
                  a.seconds_post, b.seconds_post);
      EXPECT_GE(cmp.psnr, 55.0) << f.name << " ss " << ss;
      EXPECT_EQ(cuda::render_cuda(f, o, gather).rgba, a.rgba) << "gather is deterministic";
    }
  }
}

// The split histogram (u32 low words, u32 high words counting the wraps, warp-aggregated adds)
// against the CPU reference on a flame whose histogram is known exactly: one xform that maps
// every point to one fixed point with colour 0.5 (palette entry 128, no interpolation) and
// opacity 1, so every plotted iteration adds to_fixed(palette[128]) to one cell — thousands of
// low-word wraps, and all 32 lanes of every warp on one cell.
TEST(RenderGpu, SplitHistogramEqualsTheExactSumsOfAOneCellFlame) {
  REQUIRE_DEVICE();
  Flame f = shrink(load(sample("gemflow_sierpinski.flame"), 0), 64, 200);
  Xform x;
  x.weight = 1;
  x.color = 0.5;
  x.color_speed = 1;
  x.coefs = {0, 0, 0, 0, 0.5, 0.45};  // the image centre
  x.var[static_cast<std::size_t>(kVar_linear)] = 1;
  f.xforms = {x};
  f.final_xform.reset();
  f.has_chaos = false;
  for (std::size_t i = 0; i < 256; ++i) f.palette[i] = {0.25, 0.5, 0.75, 1.0};
  f.palette[128] = {0.375, 0.625, 0.875, 1.0};
  const auto P = detail::prepare<float>(apply_overrides(f, RenderOptions{}));
  unsigned long long inc[4];
  for (int k = 0; k < 4; ++k) inc[k] = detail::to_fixed(P.palette[128 * 4 + k] * P.xforms[0].vis);
  ASSERT_EQ(inc[3], 1ull << 24);
  for (auto v : {cuda::Variant::Basic, cuda::Variant::DivergenceFree}) {
    std::vector<std::uint64_t> h;
    cuda::Histogram used{};
    cuda::CudaRenderOptions c;
    c.variant = v;
    c.histogram = cuda::Histogram::Split32;
    c.histogram_out = &h;
    c.histogram_used = &used;
    const auto r = cuda::render_cuda(f, RenderOptions{}, c);
    ASSERT_EQ(used, cuda::Histogram::Split32);
    ASSERT_EQ(r.bad_points, 0u);
    std::size_t hit = 0, cell = 0;
    for (std::size_t i = 0; i < h.size() / 4; ++i)
      if (h[i * 4 + 3]) ++hit, cell = i;
    ASSERT_EQ(hit, 1u) << cuda::variant_name(v) << ": every point in one cell";
    for (int k = 0; k < 4; ++k)
      EXPECT_EQ(h[cell * 4 + static_cast<std::size_t>(k)], r.iterations * inc[k])
          << cuda::variant_name(v) << " channel " << k;
    EXPECT_GT(h[cell * 4 + 3], 1000ull << 32) << "the low word wrapped a thousand times";
  }
}

// On real flames the split histogram holds the same u64 sums as plain u64 atomics, cell for
// cell (the same seed draws the same points), and so gives the same image bytes; at this size
// and quality many cells pass 2³², so the high words are exercised.
TEST(RenderGpu, SplitHistogramEqualsTheU64Histogram) {
  REQUIRE_DEVICE();
  for (const auto& [file, index] : {std::pair{"gemflow_samples.flame", 0},
                                    {"gemflow_samples.flame", 1},
                                    {"gemflow_samples.flame", 2},
                                    {"gemflow_sierpinski.flame", 0}}) {
    const Flame f = shrink(load(sample(file), static_cast<std::size_t>(index)), 64, 3000);
    for (auto v : {cuda::Variant::Basic, cuda::Variant::DivergenceFree}) {
      RenderOptions o;
      o.seed = 21;
      std::vector<std::uint64_t> hs, hu;
      cuda::Histogram used_s{}, used_u{};
      cuda::CudaRenderOptions split, u64;
      split.variant = u64.variant = v;
      split.histogram = cuda::Histogram::Split32;
      u64.histogram = cuda::Histogram::U64;
      split.histogram_out = &hs;
      u64.histogram_out = &hu;
      split.histogram_used = &used_s;
      u64.histogram_used = &used_u;
      const auto a = cuda::render_cuda(f, o, split), b = cuda::render_cuda(f, o, u64);
      ASSERT_EQ(used_s, cuda::Histogram::Split32) << f.name;
      ASSERT_EQ(used_u, cuda::Histogram::U64) << f.name;
      ASSERT_EQ(hs.size(), hu.size());
      std::size_t differ = 0, wrapped = 0;
      for (std::size_t i = 0; i < hs.size(); ++i) {
        differ += hs[i] != hu[i];
        wrapped += hu[i] >> 32 != 0;
      }
      EXPECT_EQ(differ, 0u) << f.name << " " << cuda::variant_name(v);
      EXPECT_GT(wrapped, 10u) << f.name << " " << cuda::variant_name(v) << ": channels past 2^32";
      EXPECT_EQ(a.rgba, b.rgba) << f.name << " " << cuda::variant_name(v);
      // The warp-aggregated adds on u64 cells: the same sums too.
      std::vector<std::uint64_t> ha;
      u64.histogram = cuda::Histogram::U64Aggregated;
      u64.histogram_out = &ha;
      (void)cuda::render_cuda(f, o, u64);
      EXPECT_EQ(used_u, cuda::Histogram::U64Aggregated) << f.name;
      EXPECT_TRUE(ha == hu) << f.name << " " << cuda::variant_name(v) << ": aggregated u64 cells";
    }
  }
}

TEST(RenderGpu, SameSeedSameBytesAnotherSeedOtherBytes) {
  REQUIRE_DEVICE();
  const Flame f = shrink(load(sample("gemflow_samples.flame"), 0), 96, 50);
  for (auto v : {cuda::Variant::Basic, cuda::Variant::DivergenceFree}) {
    RenderOptions o;
    o.seed = 11;
    cuda::CudaRenderOptions c;
    c.variant = v;
    const auto a = cuda::render_cuda(f, o, c);
    const auto b = cuda::render_cuda(f, o, c);
    EXPECT_EQ(a.rgba, b.rgba) << cuda::variant_name(v);
    o.seed = 12;
    EXPECT_NE(cuda::render_cuda(f, o, c).rgba, a.rgba) << cuda::variant_name(v);
  }
}

// Launch lengths must not depend on the device's speed: the divergence-free variant permutes
// the points at each launch, so launches that followed timing would give a slowed run (under
// compute-sanitizer) another image for the same seed. However often the host synchronises, the
// image is the same.
TEST(RenderGpu, TheImageDoesNotDependOnHowOftenTheHostSynchronises) {
  REQUIRE_DEVICE();
  const Flame f = shrink(load(sample("gemflow_samples.flame"), 0), 96, 50);
  for (auto v : {cuda::Variant::Basic, cuda::Variant::DivergenceFree}) {
    RenderOptions o;
    o.seed = 5;
    cuda::CudaRenderOptions every_launch, rarely;
    every_launch.variant = rarely.variant = v;
    every_launch.sync_seconds = 1e-9;  // one launch per synchronisation
    rarely.sync_seconds = 1e3;         // as many as allowed
    EXPECT_EQ(cuda::render_cuda(f, o, every_launch).rgba, cuda::render_cuda(f, o, rarely).rgba)
        << cuda::variant_name(v);
  }
}

TEST(RenderGpu, XaosFallsBackToBasic) {
  REQUIRE_DEVICE();
  const Flame f = shrink(load(sample("gemflow_samples.flame"), 1), 64, 10);
  ASSERT_TRUE(f.has_chaos);
  cuda::CudaRenderOptions c;
  c.variant = cuda::Variant::DivergenceFree;
  cuda::Variant used{};
  (void)cuda::render_cuda(f, RenderOptions{}, c, &used);
  EXPECT_EQ(used, cuda::Variant::Basic);
}

TEST(RenderGpu, ProgressPreviewsAndCancel) {
  REQUIRE_DEVICE();
  Flame f = shrink(load(sample("gemflow_samples.flame"), 0), 96, 200);
  RenderOptions o;
  o.passes = 4;
  int progress = 0, previews = 0;
  o.progress = [&](double, int, int) { ++progress; };
  o.preview = [&](const RenderedImage&) { ++previews; };
  (void)cuda::render_cuda(f, o, cuda::CudaRenderOptions{});
  EXPECT_EQ(progress, 4);
  EXPECT_EQ(previews, 3);
  f.quality = 1e7;  // far too long
  RenderOptions c;
  std::chrono::steady_clock::time_point asked{};
  const auto start = std::chrono::steady_clock::now();
  c.cancelled = [&] {
    if (std::chrono::steady_clock::now() - start < std::chrono::milliseconds(300)) return false;
    if (asked == std::chrono::steady_clock::time_point{}) asked = std::chrono::steady_clock::now();
    return true;
  };
  EXPECT_THROW((void)cuda::render_cuda(f, c, cuda::CudaRenderOptions{}), RenderCancelled);
  EXPECT_LT(std::chrono::duration<double>(std::chrono::steady_clock::now() - asked).count(), 0.2);
}

TEST(RenderGpu, EveryVariationInDeviceFp32AgreesWithCpuFp64) {
  REQUIRE_DEVICE();
  std::mt19937_64 gen(7);
  std::uniform_real_distribution<double> u(-1.5, 1.5), pert(-0.5, 0.5);
  const int per = 200;
  std::vector<int> ids;
  std::vector<float> pts, weights, params, coefs;
  std::vector<unsigned long long> seeds;
  std::vector<double> ref;
  for (int v = 0; v < kNumVariations; ++v) {
    if (v == kVar_pre_blur) continue;
    for (int k = 0; k < per; ++k) {
      double P[kNumVarParams];
      for (int p = 0; p < kNumVarParams; ++p) {
        P[p] = static_cast<float>(kVarParams[p].default_value + pert(gen));
        params.push_back(static_cast<float>(P[p]));
      }
      double cd[6];
      for (double& x : cd) x = static_cast<float>(u(gen)), coefs.push_back(static_cast<float>(x));
      const float x = static_cast<float>(u(gen)), y = static_cast<float>(u(gen)),
                  w = static_cast<float>(0.5 + 0.5 * u(gen));
      ids.push_back(v);
      pts.push_back(x);
      pts.push_back(y);
      weights.push_back(w);
      seeds.push_back(static_cast<unsigned long long>(k));
      VarPoint<double> q{x,
                         y,
                         x * static_cast<double>(x) + y * static_cast<double>(y),
                         0,
                         std::atan2(double(x), double(y)),
                         std::atan2(double(y), double(x)),
                         cd};
      q.sqrt_ = std::sqrt(q.sumsq);
      double px = 0, py = 0;
      Pcg32 rng(static_cast<std::uint64_t>(k), 3);
      eval_variation(v, static_cast<double>(w), q, P, px, py, rng);
      ref.push_back(px);
      ref.push_back(py);
    }
  }
  pts.insert(pts.end(), weights.begin(), weights.end());
  const auto out = cuda::eval_variations_device(ids, pts, params, coefs, seeds);
  for (int v = 0, i = 0; v < kNumVariations; ++v) {
    if (v == kVar_pre_blur) continue;
    int ok = 0, total = 0;
    for (int k = 0; k < per; ++k, ++i) {
      const double dx = ref[2 * static_cast<std::size_t>(i)], dy = ref[2 * static_cast<std::size_t>(i) + 1];
      if (!std::isfinite(dx) || !std::isfinite(dy) || std::fabs(dx) > 1e6 || std::fabs(dy) > 1e6) continue;
      ++total;
      const double fx = out[2 * static_cast<std::size_t>(i)], fy = out[2 * static_cast<std::size_t>(i) + 1];
      if (std::fabs(fx - dx) <= 2e-3 * (1 + std::fabs(dx)) && std::fabs(fy - dy) <= 2e-3 * (1 + std::fabs(dy))) ++ok;
    }
    EXPECT_GE(ok, total * 95 / 100) << kVariationNames[v] << ": " << ok << " of " << total;
  }
}

}  // namespace
}  // namespace gemflow::flame

#else
TEST(RenderGpu, NotBuilt) { GTEST_SKIP() << "the flame plugin was built without CUDA"; }
#endif
