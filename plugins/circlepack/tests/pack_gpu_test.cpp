// GPU circle packing (gemflow/circlepack/pack_cuda.hpp) against the CPU fp64 reference (Newton,
// or cs for hyperbolic packings). Label gpu: every test skips without a CUDA device.
#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <string>
#include <vector>

#include <gemflow/circlepack/complex.hpp>
#include <gemflow/circlepack/pack.hpp>

#include "pack_test_support.hpp"

#if GEMFLOW_CIRCLEPACK_HAVE_CUDA
#include <gemflow/circlepack/pack_cuda.hpp>

namespace {

using namespace gemflow::circlepack;
using gemflow::circlepack::test::describe;

struct Case {
  std::string name;
  PackSetup setup;
};

std::vector<Case> cases() {
  std::vector<Case> c;
  {
    const Lattice L = triangle_lattice(30);
    BoundarySpec bc;
    bc.kind = Boundary::lines;
    std::vector<double> start(L.points.size());
    for (std::size_t v = 0; v < start.size(); ++v) start[v] = 1.0 + 0.5 * static_cast<double>(v % 3);
    c.push_back({"triangle 30 layers, lines", setup_problem(L.points.size(), L.faces, bc, start)});
  }
  {
    const Lattice L = random_disk(12, 3);
    BoundarySpec bc;
    const PackSetup base = setup_problem(L.points.size(), L.faces, bc);
    std::mt19937 rng(1);
    std::uniform_real_distribution<double> U(0.5, 2.0);
    for (std::size_t v = 0; v < L.points.size(); ++v)
      if (base.complex.boundary[v]) bc.radii.push_back(U(rng));
    c.push_back({"random disk 12 rings, fixed radii", setup_problem(L.points.size(), L.faces, bc)});
  }
  {
    const Lattice L = hex_disk(8);
    BoundarySpec bc;
    bc.kind = Boundary::maximal;
    c.push_back({"hexagonal disk 8 rings, maximal", setup_problem(L.points.size(), L.faces, bc)});
  }
  return c;
}

PackResult reference(const PackSetup& S) {
  PackOptions o;
  o.algorithm = S.problem.geometry == Geometry::euclidean ? Algorithm::newton : Algorithm::cs;
  // fp64 angle sums round at ~1e-15 per vertex (Newton spreads the targets' summed rounding over
  // every vertex instead of pinning it on one: newton_rules.hpp); 1e-12 leaves a wide margin.
  o.tolerance = 1e-12;
  return pack(S.complex, S.problem, o);
}

/// Largest relative difference of the free radii (hyperbolic: of the hyperbolic radii).
double worst(const PackSetup& S, const std::vector<double>& a, const std::vector<double>& b) {
  double w = 0;
  const bool hyp = S.problem.geometry == Geometry::hyperbolic;
  for (std::size_t v = 0; v < S.complex.n; ++v) {
    if (S.complex.ideal[v] || !S.problem.free(static_cast<Index>(v))) continue;
    const double x = hyp ? -std::log(a[v]) : a[v], y = hyp ? -std::log(b[v]) : b[v];
    w = std::max(w, std::abs(x - y) / std::abs(y));
  }
  return w;
}

class GpuPack : public ::testing::Test {
 protected:
  void SetUp() override {
    if (cuda::device_count() == 0) GTEST_SKIP() << "no CUDA device: GPU circle packing tests skipped";
  }
};

TEST_F(GpuPack, Fp64MethodsMatchTheCpuReference) {
  for (const auto& c : cases()) {
    SCOPED_TRACE(c.name);
    // lines: scale-free, compare radii relative to circle 0
    const PackResult ref = reference(c.setup);
    ASSERT_TRUE(ref.converged) << "CPU reference: " << describe(ref);
    for (auto m : {cuda::GpuMethod::coloured_gs, cuda::GpuMethod::jacobi, cuda::GpuMethod::newton}) {
      if (m == cuda::GpuMethod::newton && c.setup.problem.geometry != Geometry::euclidean) continue;
      cuda::GpuOptions o;
      o.method = m;
      o.tolerance = 1e-12;  // radii to ~1e-9: the Laplacian amplifies angle errors by up to ~N
      const PackResult r = cuda::pack_gpu(c.setup.complex, c.setup.problem, o);
      ASSERT_TRUE(r.converged) << "method " << static_cast<int>(m) << ": " << describe(r);
      if (m == cuda::GpuMethod::newton) {
        EXPECT_LE(r.iterations, 12u) << describe(r);
        EXPECT_GT(r.inner_iterations, 0u) << describe(r);
      }
      std::vector<double> a = r.labels, b = ref.labels;
      if (c.setup.complex.n > c.setup.problem.mesh_vertices)  // lines: fix the scale
        for (std::size_t v = 0; v < c.setup.problem.mesh_vertices; ++v) a[v] /= r.labels[0], b[v] /= ref.labels[0];
      EXPECT_LT(worst(c.setup, a, b), 1e-8) << static_cast<int>(m);
    }
  }
}

// gpu_newton's two CG paths: the whole solve in one kernel of one block (small systems, the
// default below cg_single_block_max unknowns) and one launch per vector operation (forced with
// cg_single_block_max = 0); both against the CPU fp64 reference, on the three cases and on the
// seed's N = 5050 triangle to 1e-8 (the goal's size: 5049 unknowns, one block).
TEST_F(GpuPack, NewtonSingleBlockAndMultiKernelCgMatchTheCpuReference) {
  std::vector<Case> all = cases();
  {
    const Lattice L = triangle_lattice(100);
    BoundarySpec bc;
    bc.kind = Boundary::lines;
    std::vector<double> start(L.points.size());
    for (std::size_t v = 0; v < start.size(); ++v) start[v] = 1.0 + 0.5 * static_cast<double>(v % 3);
    all.push_back({"triangle 100 layers, lines", setup_problem(L.points.size(), L.faces, bc, start)});
  }
  for (const auto& c : all) {
    if (c.setup.problem.geometry != Geometry::euclidean) continue;
    SCOPED_TRACE(c.name);
    const PackResult ref = reference(c.setup);
    ASSERT_TRUE(ref.converged) << "CPU reference: " << describe(ref);
    for (std::size_t single_max : {std::size_t{32768}, std::size_t{0}}) {
      cuda::GpuOptions o;
      o.method = cuda::GpuMethod::newton;
      o.tolerance = 1e-12;
      o.cg_single_block_max = single_max;
      const PackResult r = cuda::pack_gpu(c.setup.complex, c.setup.problem, o);
      ASSERT_TRUE(r.converged) << "single block up to " << single_max << ": " << describe(r);
      EXPECT_LE(r.iterations, 12u) << "single block up to " << single_max << ": " << describe(r);
      EXPECT_GT(r.inner_iterations, 0u) << "single block up to " << single_max << ": " << describe(r);
      std::vector<double> a = r.labels, b = ref.labels;
      if (c.setup.complex.n > c.setup.problem.mesh_vertices)
        for (std::size_t v = 0; v < c.setup.problem.mesh_vertices; ++v) a[v] /= r.labels[0], b[v] /= ref.labels[0];
      EXPECT_LT(worst(c.setup, a, b), 1e-8) << "single block up to " << single_max;
    }
  }
}

// The seed's N = 5050 triangle has no radius fixed: Newton pins one vertex, and Gauss–Bonnet
// ties that vertex's residual to the fp64 rounding of every target and angle sum (1.2–2e-12 in
// all). Left on that vertex it would cap the error near 1.5e-12; driven to their mean, the
// residuals of both CG paths must reach 1e-13.
TEST_F(GpuPack, NewtonReachesTheRoundingFloorOnTheScaleFreeTriangle) {
  const Lattice L = triangle_lattice(100);
  BoundarySpec bc;
  bc.kind = Boundary::lines;
  std::vector<double> start(L.points.size());
  for (std::size_t v = 0; v < start.size(); ++v) start[v] = 1.0 + 0.5 * static_cast<double>(v % 3);
  const PackSetup S = setup_problem(L.points.size(), L.faces, bc, start);
  for (std::size_t single_max : {std::size_t{32768}, std::size_t{0}}) {
    cuda::GpuOptions o;
    o.method = cuda::GpuMethod::newton;
    o.tolerance = 1e-13;
    o.cg_single_block_max = single_max;
    const PackResult r = cuda::pack_gpu(S.complex, S.problem, o);
    EXPECT_TRUE(r.converged) << "single block up to " << single_max << ": " << describe(r);
    EXPECT_LT(r.error, 1e-13) << "single block up to " << single_max << ": " << describe(r);
    EXPECT_LE(r.iterations, 8u) << "single block up to " << single_max << ": " << describe(r);
  }
}

TEST_F(GpuPack, ColouredGaussSeidelNeedsFewerSweepsThanJacobi) {
  const auto c = cases()[0];
  cuda::GpuOptions o;
  o.tolerance = 1e-8;
  o.check_every = 1;
  const PackResult gs = cuda::pack_gpu(c.setup.complex, c.setup.problem, o);
  o.method = cuda::GpuMethod::jacobi;
  const PackResult jac = cuda::pack_gpu(c.setup.complex, c.setup.problem, o);
  ASSERT_TRUE(gs.converged) << describe(gs);
  ASSERT_TRUE(jac.converged) << describe(jac);
  EXPECT_LT(gs.iterations, jac.iterations);
}

TEST_F(GpuPack, Fp32ReachesTheSeedsTolerance) {
  for (const auto& c : cases()) {
    SCOPED_TRACE(c.name);
    const PackResult ref = reference(c.setup);
    cuda::GpuOptions o;
    o.precision = Precision::fp32;
    o.tolerance = 1e-3;  // the seed's GPU tolerance
    const PackResult r = cuda::pack_gpu(c.setup.complex, c.setup.problem, o);
    EXPECT_LT(r.error, 2e-3);  // the fp64 re-evaluation of the fp32 radii
    std::vector<double> a = r.labels, b = ref.labels;
    if (c.setup.complex.n > c.setup.problem.mesh_vertices)
      for (std::size_t v = 0; v < c.setup.problem.mesh_vertices; ++v) a[v] /= r.labels[0], b[v] /= ref.labels[0];
    EXPECT_LT(worst(c.setup, a, b), 5e-2);
  }
}

TEST_F(GpuPack, NewtonRefusesHyperbolicAndFp32) {
  const auto c = cases()[2];
  cuda::GpuOptions o;
  o.method = cuda::GpuMethod::newton;
  EXPECT_THROW((void)cuda::pack_gpu(c.setup.complex, c.setup.problem, o), PackError);
  const auto e = cases()[0];
  o.precision = Precision::fp32;
  EXPECT_THROW((void)cuda::pack_gpu(e.setup.complex, e.setup.problem, o), PackError);
}

TEST_F(GpuPack, MonitorCancels) {
  const auto c = cases()[0];
  cuda::GpuOptions o;
  o.tolerance = 1e-14;
  o.check_every = 4;
  o.monitor = [](std::size_t it, double) { return it < 8; };
  const PackResult r = cuda::pack_gpu(c.setup.complex, c.setup.problem, o);
  EXPECT_TRUE(r.cancelled);
  EXPECT_EQ(r.iterations, 8u);
}

}  // namespace

#else
TEST(GpuPack, NotBuilt) { GTEST_SKIP() << "Gemflow was built without CUDA"; }
#endif
