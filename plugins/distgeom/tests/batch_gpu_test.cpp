// Label gpu: distgeom.smooth_batch on CUDA (one batched launch for n ≤ 256, larger matrices one
// by one) against the CPU. Every test skips with a message when no CUDA device is present.
#include <gtest/gtest.h>

#include <cstring>

#include <gemflow/distgeom/molecule_bounds.hpp>
#include <gemflow/distgeom/smoothing.hpp>
#include <gemflow/io/errors.hpp>

#include "batch_test_support.hpp"

#if defined(GEMFLOW_DISTGEOM_HAVE_CUDA)
#include <gemflow/distgeom/smoothing_cuda.hpp>
#endif

using namespace gemflow;
using namespace gemflow::distgeom;
using namespace gemflow::distgeom::batch_testing;

#if defined(GEMFLOW_DISTGEOM_HAVE_CUDA)
namespace {

class GpuBatch : public ::testing::Test {
 protected:
  void SetUp() override {
    if (distgeom::cuda::device_count() == 0) GTEST_SKIP() << "no CUDA device: GPU batch smoothing tests skipped";
  }
};

std::shared_ptr<const BoundsBatch> run(const Nodes& nodes, const BoundsBatch& in, const std::string& device,
                                       const std::string& precision, RecordingContext& ctx,
                                       std::shared_ptr<const Table>* report = nullptr) {
  auto node = nodes.make("distgeom.smooth_batch");
  node->set_input("bounds", Value::make(in));
  node->set_param("device", device);
  node->set_param("precision", precision);
  node->set_param("on_inconsistent", std::string("skip"));
  node->execute(ctx);
  if (report) *report = node->output("report").as<Table>();
  return node->output("bounds").as<BoundsBatch>();
}

/// Largest |a − b| over finite entries; infinities must match exactly; NaN fails.
double max_diff(std::span<const double> a, std::span<const double> b) {
  double m = 0;
  for (std::size_t e = 0; e < a.size(); ++e) {
    EXPECT_FALSE(std::isnan(a[e]) || std::isnan(b[e])) << e;
    if (a[e] == b[e]) continue;
    if (std::isinf(a[e]) || std::isinf(b[e])) return std::numeric_limits<double>::infinity();
    m = std::max(m, std::abs(a[e] - b[e]));
  }
  return m;
}

double max_finite(std::span<const double> a) {
  double m = 0;
  for (double v : a)
    if (std::isfinite(v)) m = std::max(m, v);
  return m;
}

}  // namespace

// Sample molecules: the CUDA batch (one launch, padded to n = 130: the blocked batched closure)
// and the CPU node (blocked) are both within 6·n·2⁻⁵³·max(U) of the per-k fp64 reference.
TEST_F(GpuBatch, SampleMoleculesMatchCpu) {
  Nodes nodes;
  io::MoleculeSet set;
  for (const auto& f : sample_molecule_files())
    for (auto& m : io::read_sdf(sample(f)).molecules) set.molecules.push_back(std::move(m));
  RecordingContext ctx;
  auto bn = nodes.make("distgeom.bounds_from_molecules");
  bn->set_input("molecules", Value::make(set));
  bn->execute(ctx);
  const auto in = bn->output("bounds").as<BoundsBatch>();
  RecordingContext gctx, cctx;
  std::shared_ptr<const Table> grep, crep;
  const auto gpu = run(nodes, *in, "cuda", "fp64", gctx, &grep);
  const auto cpu = run(nodes, *in, "cpu", "fp64", cctx, &crep);
  EXPECT_EQ(std::get<std::int64_t>(gctx.records().at("cuda_batched")), 4);
  EXPECT_EQ(std::get<std::int64_t>(gctx.records().at("cuda_padded_n")), 130);
  EXPECT_EQ(std::get<std::int64_t>(gctx.records().at("cuda_one_by_one")), 0);
  ASSERT_EQ(gpu->size(), 4u);
  for (std::size_t k = 0; k < 4; ++k) {
    SCOPED_TRACE(in->names[k]);
    DistanceBounds ref = in->bounds[k];
    const auto r = smooth_bounds_reference(ref.lower.span(), ref.upper.span(), ref.size());
    ASSERT_TRUE(r.consistent);
    const double bound = 6.0 * static_cast<double>(ref.size()) * 0x1p-53 * max_finite(in->bounds[k].upper.span());
    EXPECT_LE(max_diff(gpu->bounds[k].lower.span(), ref.lower.span()), bound);
    EXPECT_LE(max_diff(gpu->bounds[k].upper.span(), ref.upper.span()), bound);
    EXPECT_LE(max_diff(gpu->bounds[k].lower.span(), cpu->bounds[k].lower.span()), bound);
    EXPECT_LE(max_diff(gpu->bounds[k].upper.span(), cpu->bounds[k].upper.span()), bound);
    EXPECT_EQ(grep->rows[k][4], crep->rows[k][4]) << "pairs tightened";
  }
}

// Random batches with sizes 1..256 (one padded launch) plus n = 300 and 511 (one by one), some
// inconsistent: same consistency verdicts, first pairs and counts as the CPU; values within
// the rounding bound (fp64) or the fp32 bound.
TEST_F(GpuBatch, RandomBatchesMatchCpu) {
  Nodes nodes;
  std::mt19937_64 rng(4242);
  std::uniform_int_distribution<std::size_t> size(1, 256);
  BoundsBatch in;
  for (int k = 0; k < 60; ++k) {
    const std::size_t n = k == 10 ? 300 : k == 20 ? 511 : k == 30 ? 256 : k == 40 ? 1 : size(rng);
    in.bounds.push_back(random_bounds(n, rng, k % 9 == 4));
    in.names.push_back("random " + std::to_string(k));
    in.source.push_back(static_cast<std::size_t>(k));
  }
  for (const char* precision : {"fp64", "fp32"}) {
    SCOPED_TRACE(precision);
    const bool fp32 = std::string(precision) == "fp32";
    RecordingContext gctx, cctx;
    std::shared_ptr<const Table> grep, crep;
    const auto gpu = run(nodes, in, "cuda", precision, gctx, &grep);
    const auto cpu = run(nodes, in, "cpu", precision, cctx, &crep);
    EXPECT_EQ(std::get<std::int64_t>(gctx.records().at("cuda_batched")), 58);
    EXPECT_EQ(std::get<std::int64_t>(gctx.records().at("cuda_padded_n")), 256);
    EXPECT_EQ(std::get<std::int64_t>(gctx.records().at("cuda_one_by_one")), 2);
    ASSERT_EQ(grep->rows.size(), crep->rows.size());
    for (std::size_t k = 0; k < grep->rows.size(); ++k) EXPECT_EQ(grep->rows[k][5], crep->rows[k][5]) << k;
    EXPECT_GE(std::get<std::int64_t>(gctx.records().at("skipped")), 5);
    if (!fp32) {
      EXPECT_EQ(gctx.warnings(), cctx.warnings());  // same molecules, pairs and explanations
    }
    ASSERT_EQ(gpu->source, cpu->source);
    for (std::size_t k = 0; k < gpu->size(); ++k) {
      const std::size_t n = gpu->bounds[k].size();
      const double u = max_finite(in.bounds[gpu->source[k]].upper.span());
      const double bound = 6.0 * static_cast<double>(n) * (fp32 ? 0x1p-24 : 0x1p-53) * u + (fp32 ? u * 0x1p-24 : 0.0);
      EXPECT_LE(max_diff(gpu->bounds[k].lower.span(), cpu->bounds[k].lower.span()), bound) << k << " n " << n;
      EXPECT_LE(max_diff(gpu->bounds[k].upper.span(), cpu->bounds[k].upper.span()), bound) << k << " n " << n;
    }
  }
}

#else
TEST(GpuBatch, NotBuilt) { GTEST_SKIP() << "Gemflow was built without CUDA"; }
#endif
