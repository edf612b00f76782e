// GpuCholesky::set_probe (CholeskyProbe, gemflow/linalg/cholesky_cuda.hpp): the benchmarks'
// instruments must not change a result, and must report what they document. Skips without a CUDA
// device.
//  - a probe that records every step and the tiled kernel's stamps gives the same factor, bit for
//    bit, as no probe (fp64 and 1×FP16, lookahead with its tiled tail and the tiled kernel alone);
//  - on_step names the lookahead's steps at the documented columns;
//  - the tiled stamps are filled for every task, in the order the dependencies impose;
//  - the traced tiled kernel exists for fp64 and 1×FP16 only: other fp32 modes are refused.
#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <set>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <vector>

#if GEMFLOW_LINALG_HAVE_CUDA
#include <cuda_runtime.h>

#include <gemflow/linalg/cholesky_cuda.hpp>

#include "gpu_test_support.hpp"

namespace {
namespace gc = gemflow::linalg::cuda;
using gemflow::linalg::testing::Dev;

class GpuCholeskyProbeTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (gc::device_count() == 0) GTEST_SKIP() << "no CUDA device: GPU Cholesky probe tests skipped";
  }
};

struct Step {
  std::string what;
  std::int64_t column;
};

/// The factor of a fixed random SPD matrix of order n (fill_random_symmetric, κ ≈ 17) with
/// options o, through a GpuCholesky with `probe` set (nullptr: none). Fails the test unless info = 0.
template <class T>
std::vector<T> factor_with(std::int64_t n, const gc::CholeskyOptions& o, const gc::CholeskyProbe* probe) {
  Dev<T> a(static_cast<std::size_t>(n * n));
  gc::fill_random_symmetric(a.p, n, n, 1.3 * std::sqrt(double(n)), 11, nullptr);
  gc::GpuCholesky chol(nullptr);
  chol.set_probe(probe);
  EXPECT_EQ(chol.factor(a.p, n, n, o).info, 0);
  return a.get();
}

template <class T>
std::int64_t entries_that_differ(const std::vector<T>& x, const std::vector<T>& y) {
  std::int64_t differ = 0;
  using Bits = std::conditional_t<sizeof(T) == 8, std::uint64_t, std::uint32_t>;  // bit patterns, NaNs too
  for (std::size_t i = 0; i < x.size(); ++i) differ += std::bit_cast<Bits>(x[i]) != std::bit_cast<Bits>(y[i]);
  return differ;
}

/// Factors with and without a probe that records every step and every tiled stamp: same bits.
template <class T>
void expect_probe_changes_nothing(std::int64_t n, const gc::CholeskyOptions& o, const std::string& label) {
  const std::int64_t tt = (n + 63) / 64;
  Dev<unsigned long long> stamps(static_cast<std::size_t>(tt * (tt + 1) / 2 * gc::CholeskyProbe::kTiledTraceSlots));
  GF_CUDA_TRY(cudaMemset(stamps.p, 0, sizeof(unsigned long long) * stamps.n));
  std::vector<Step> steps;
  gc::CholeskyProbe probe;
  probe.on_step = [&](gc::Stream s, const char* what, std::int64_t col) {
    cudaEvent_t e = nullptr;  // what a timeline does: an event after the step
    GF_CUDA_TRY(cudaEventCreate(&e));
    GF_CUDA_TRY(cudaEventRecord(e, s));
    GF_CUDA_TRY(cudaEventDestroy(e));
    steps.push_back({what, col});
  };
  probe.tiled_trace = stamps.p;
  const auto plain = factor_with<T>(n, o, nullptr);
  const auto probed = factor_with<T>(n, o, &probe);
  EXPECT_EQ(entries_that_differ(plain, probed), 0) << label << ": entries that the probe changed";
  const auto stamped = stamps.get();
  EXPECT_GT(std::count_if(stamped.begin(), stamped.end(), [](auto v) { return v != 0; }), 0)
      << label << ": the traced tiled kernel ran";
}

TEST_F(GpuCholeskyProbeTest, ProbeGivesTheSameFactorBitForBit) {
  gc::CholeskyOptions o;
  o.algo = gc::CholeskyAlgo::lookahead;  // fp64: two panels deep, then the tiled tail
  o.block = 256;
  o.tiled_tail = 512;
  expect_probe_changes_nothing<double>(1500, o, "fp64 lookahead");
  o.fp32_mode = gc::Fp32Mode::fp16;  // 1×FP16: the tiled kernel with FP16 updates takes n ≤ 8192 whole
  o.tiled_tail = 0;
  o.block = 0;
  expect_probe_changes_nothing<float>(1500, o, "fp32 1xFP16 lookahead");
  o = {};
  o.algo = gc::CholeskyAlgo::tiled;
  expect_probe_changes_nothing<double>(1000, o, "fp64 tiled");
}

TEST_F(GpuCholeskyProbeTest, OnStepNamesTheLookaheadSteps) {
  const std::int64_t n = 1500;
  gc::CholeskyOptions o;
  o.algo = gc::CholeskyAlgo::lookahead;
  o.block = 256;       // panels at 0, 256, 512, 768
  o.tiled_tail = 512;  // then n − 1024 = 476 ≤ 512 columns for the tiled kernel
  std::vector<Step> steps;
  gc::CholeskyProbe probe;
  probe.on_step = [&](gc::Stream, const char* what, std::int64_t col) { steps.push_back({what, col}); };
  factor_with<double>(n, o, &probe);
  const std::set<std::string> documented = {"panel", "next column", "ahead column", "bulk start",
                                            "bulk",  "sub-update",  "sub-panel",    "tiled tail"};
  std::vector<std::int64_t> panels, tails;
  for (const Step& s : steps) {
    EXPECT_TRUE(documented.count(s.what)) << "undocumented step " << s.what;
    if (s.what == "panel") panels.push_back(s.column);
    if (s.what == "tiled tail") tails.push_back(s.column);
  }
  EXPECT_EQ(panels, (std::vector<std::int64_t>{0, 256, 512, 768}));
  EXPECT_EQ(tails, (std::vector<std::int64_t>{1024}));
}

// Every task's stamps: taken (0) ≤ flag set (4); each diagonal tile is published after the one
// before it (the chain).
TEST_F(GpuCholeskyProbeTest, TiledStampsFollowTheDependencies) {
  const std::int64_t n = 640, tt = n / 64, tasks = tt * (tt + 1) / 2;
  constexpr int kSlots = gc::CholeskyProbe::kTiledTraceSlots;
  Dev<unsigned long long> stamps(static_cast<std::size_t>(tasks * kSlots));
  GF_CUDA_TRY(cudaMemset(stamps.p, 0, sizeof(unsigned long long) * stamps.n));
  gc::CholeskyProbe probe;
  probe.tiled_trace = stamps.p;
  gc::CholeskyOptions o;
  o.algo = gc::CholeskyAlgo::tiled;
  factor_with<double>(n, o, &probe);
  const auto h = stamps.get();
  const auto at = [&](std::int64_t t, int slot) { return h[static_cast<std::size_t>(t * kSlots + slot)]; };
  for (std::int64_t t = 0; t < tasks; ++t) {
    EXPECT_NE(at(t, 0), 0u) << "task " << t << " never taken";
    EXPECT_GE(at(t, 4), at(t, 0)) << "task " << t << ": flag before it was taken";
  }
  const auto diag = [&](std::int64_t j) { return j * tt - j * (j - 1) / 2; };  // task of tile (j, j)
  for (std::int64_t j = 1; j < tt; ++j)
    EXPECT_GE(at(diag(j), 4), at(diag(j - 1), 4)) << "L_" << j << j << " published before L_" << j - 1 << j - 1;
}

TEST_F(GpuCholeskyProbeTest, TiledTraceOfPlainFp32IsRefused) {
  const std::int64_t n = 256;
  Dev<unsigned long long> stamps(static_cast<std::size_t>(10 * gc::CholeskyProbe::kTiledTraceSlots));
  gc::CholeskyProbe probe;
  probe.tiled_trace = stamps.p;
  Dev<float> a(static_cast<std::size_t>(n * n));
  gc::fill_random_symmetric(a.p, n, n, 1.3 * std::sqrt(double(n)), 3, nullptr);
  gc::GpuCholesky chol(nullptr);
  chol.set_probe(&probe);
  gc::CholeskyOptions o;
  o.algo = gc::CholeskyAlgo::tiled;  // exact fp32: no traced instantiation
  EXPECT_THROW(chol.factor(a.p, n, n, o), std::invalid_argument);
}

}  // namespace

#else
TEST(GpuCholeskyProbeTest, BuiltWithoutCuda) { GTEST_SKIP() << "Gemflow was built without CUDA: nothing to probe"; }
#endif
