// GPU metric matrix and Cholesky embedding (gemflow/distgeom/embedding_cuda.hpp) against the CPU
// reference (embedding.hpp), and the nodes distgeom.metric_matrix / embed / embed_and_refine with
// device cuda against device cpu. Label gpu: every test skips with a message without a device.
//
// Bounds (fp64, ε = 2⁻⁵²):
//  - metric matrix: |G_gpu − G_cpu| ≤ 4·n·ε·max D² (the kernels perform the CPU's operations in
//    its order: in practice 0, the count of bit-identical entries is printed with
//    GEMFLOW_TEST_VERBOSE=1); the column-major device layout is exactly the row-major transposed.
//  - embedding: the same pivot sequence (rank, next) as the CPU, coordinates within 1e-9 Å
//    (max over all atoms and axes, i.e. RMSD ≤ 1e-9 Å without any superposition), spectrum
//    within 1e-12 relative.
//  - exact 2KPU distances: the 3D embedding is the model itself up to a rigid motion and
//    reflection: superposed RMSD ≤ 1e-9 Å.
//  - nodes: cuda and cpu outputs within the same bounds; the refined structures of
//    embed_and_refine within 1e-6 Å (the refinement itself runs on the CPU from the embedding).
// Each test prints "GEMFLOW_TEST_SEED=<seed>"; set that variable to reproduce a run.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>
#include <map>
#include <memory>
#include <random>
#include <span>
#include <string>
#include <vector>

#include "gemflow/distgeom/embedding.hpp"

#if GEMFLOW_DISTGEOM_HAVE_CUDA
#include <cuda_runtime.h>

#include <gemflow/cuda/buffer.hpp>
#include <gemflow/device.hpp>
#include <gemflow/error.hpp>
#include <gemflow/io/structure_io.hpp>
#include <gemflow/node.hpp>
#include <gemflow/registry.hpp>
#include <gemflow/testing.hpp>
#include <gemflow/types.hpp>

#include "gemflow/distgeom/embedding_cuda.hpp"
#include "gemflow/distgeom/geometry.hpp"
#include "gemflow/distgeom/smoothing.hpp"
#include "register.hpp"

namespace gd = gemflow::distgeom;
namespace gc = gemflow::distgeom::cuda;

namespace {

constexpr double kEps = std::numeric_limits<double>::epsilon();
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr double kCoordTol = 1e-9;  // Å

bool verbose() { return std::getenv("GEMFLOW_TEST_VERBOSE") != nullptr; }

std::uint64_t test_seed() {
  if (const char* e = std::getenv("GEMFLOW_TEST_SEED"); e && *e) return std::strtoull(e, nullptr, 0);
  std::random_device rd;
  return (std::uint64_t{rd()} << 32) ^ rd();
}

/// n random points in a box of edge ~ 3·n^(1/3) Å (protein-like density), `dim` coordinates.
std::vector<double> random_points(std::size_t n, std::size_t dim, std::mt19937_64& rng) {
  std::uniform_real_distribution<double> u(0.0, 3.0 * std::cbrt(double(n)) + 2.0);
  std::vector<double> x(n * dim);
  for (auto& v : x) v = u(rng);
  return x;
}

/// Distances of the points (n×n, row-major), each pair i < j scaled by (1 + noise·u), u ∈ (−1, 1)
/// (a metrized-like, indefinite metric matrix for noise > 0), kept symmetric unless `asymmetric`
/// (then the upper triangle gets its own noise).
std::vector<double> distances(const std::vector<double>& x, std::size_t n, std::size_t dim, double noise,
                              bool asymmetric, std::mt19937_64& rng) {
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  std::vector<double> d(n * n, 0.0);
  for (std::size_t i = 0; i < n; ++i)
    for (std::size_t j = 0; j < i; ++j) {
      double s = 0;
      for (std::size_t k = 0; k < dim; ++k) s += (x[i * dim + k] - x[j * dim + k]) * (x[i * dim + k] - x[j * dim + k]);
      const double r = std::sqrt(s);
      d[i * n + j] = r * (1.0 + noise * u(rng));
      d[j * n + i] = asymmetric ? r * (1.0 + noise * u(rng)) : d[i * n + j];
    }
  return d;
}

std::vector<unsigned char> random_flags(std::size_t n, double p, std::mt19937_64& rng) {
  std::uniform_real_distribution<double> u(0.0, 1.0);
  std::vector<unsigned char> f(n);
  for (auto& v : f) v = u(rng) < p ? 1 : 0;
  for (std::size_t k = 0; k < 5 && k < n; ++k) f[k * (n / 5)] = 1;  // at least 5 candidates
  return f;
}

double max_abs(std::span<const double> a) {
  double m = 0;
  for (double v : a) m = std::max(m, std::abs(v));
  return m;
}

/// Compares a GPU embedding with the CPU's (see the file comment).
void expect_same_embedding(const gd::EmbedResult& g, const gd::EmbedResult& c, const std::string& ctx) {
  ASSERT_EQ(g.dim, c.dim) << ctx;
  ASSERT_EQ(g.coords.size(), c.coords.size()) << ctx;
  ASSERT_EQ(g.spectrum.size(), c.spectrum.size()) << ctx;
  const double smax = std::max(1.0, max_abs(c.spectrum));
  for (std::size_t k = 0; k < c.spectrum.size(); ++k)
    EXPECT_LE(std::abs(g.spectrum[k] - c.spectrum[k]), 1e-12 * smax) << ctx << ": spectrum " << k;
  EXPECT_LE(std::abs(g.next - c.next), 1e-12 * smax) << ctx << ": next";
  double diff = 0;
  std::size_t same = 0;
  for (std::size_t i = 0; i < c.coords.size(); ++i) {
    ASSERT_TRUE(std::isfinite(g.coords[i])) << ctx << ": coordinate " << i;
    diff = std::max(diff, std::abs(g.coords[i] - c.coords[i]));
    same += g.coords[i] == c.coords[i];
  }
  EXPECT_LE(diff, kCoordTol) << ctx << ": coordinates differ (Å)";
  if (verbose())
    std::printf("  %-58s max|Δx| = %.3g Å, %zu/%zu bit-identical\n", ctx.c_str(), diff, same, c.coords.size());
}

class GpuEmbedding : public ::testing::Test {
 protected:
  void SetUp() override {
    if (gc::device_count() == 0) GTEST_SKIP() << "no CUDA device: GPU embedding tests skipped";
    seed_ = test_seed();
    std::printf("[   SEED   ] GEMFLOW_TEST_SEED=%llu\n", static_cast<unsigned long long>(seed_));
    rng_.seed(seed_);
  }
  std::uint64_t seed_ = 0;
  std::mt19937_64 rng_;
};

TEST_F(GpuEmbedding, MetricMatrixMatchesCpu) {
  gc::GpuEmbedder gpu(0);
  for (std::size_t n : {1, 2, 5, 31, 32, 33, 100, 257, 1000, 1537}) {
    for (bool asym : {false, true}) {
      const auto x = random_points(n, 4, rng_);
      const auto d = distances(x, n, 4, 0.05, asym, rng_);
      std::vector<double> gc_(n * n, kNaN), gg(n * n, kNaN);
      gd::metric_matrix(d, n, gc_);
      gpu.metric_matrix(d, n, gg);
      const double dmax = max_abs(d);
      const double bound = 4.0 * double(n) * kEps * dmax * dmax;
      double diff = 0;
      std::size_t same = 0;
      for (std::size_t k = 0; k < n * n; ++k) {
        ASSERT_TRUE(std::isfinite(gg[k])) << "n=" << n << ": G[" << k << "] not written";
        diff = std::max(diff, std::abs(gg[k] - gc_[k]));
        same += gg[k] == gc_[k];
      }
      EXPECT_LE(diff, bound) << "n=" << n << (asym ? " asymmetric D" : "") << " seed " << seed_;
      if (verbose())
        std::printf("  metric n=%-5zu %s max|ΔG| = %.3g (bound %.3g), %zu/%zu bit-identical\n", n,
                    asym ? "asym" : "sym ", diff, bound, same, n * n);
    }
  }
}

TEST_F(GpuEmbedding, DeviceLayoutsAreTransposesOfEachOther) {
  for (std::size_t n : {1, 33, 250}) {
    const auto x = random_points(n, 3, rng_);
    const auto d = distances(x, n, 3, 0.1, true, rng_);
    gemflow::cuda::DeviceBuffer<double> dbuf(n * n), grbuf(n * n), gcmbuf(n * n), wbuf(n + 1);
    double *dd = dbuf.data(), *gr = grbuf.data(), *gcm = gcmbuf.data(), *w = wbuf.data();
    ASSERT_EQ(cudaMemcpy(dd, d.data(), sizeof(double) * n * n, cudaMemcpyHostToDevice), cudaSuccess);
    gc::metric_matrix_device(dd, n, gr, gc::MatrixLayout::row_major, w, nullptr);
    gc::metric_matrix_device(dd, n, gcm, gc::MatrixLayout::col_major, w, nullptr);
    std::vector<double> hr(n * n), hc(n * n);
    ASSERT_EQ(cudaMemcpy(hr.data(), gr, sizeof(double) * n * n, cudaMemcpyDeviceToHost), cudaSuccess);
    ASSERT_EQ(cudaMemcpy(hc.data(), gcm, sizeof(double) * n * n, cudaMemcpyDeviceToHost), cudaSuccess);
    for (std::size_t i = 0; i < n; ++i)
      for (std::size_t j = 0; j < n; ++j)
        ASSERT_EQ(hc[i + j * n], hr[i * n + j]) << "n=" << n << " (" << i << ", " << j << ")";
  }
}

TEST_F(GpuEmbedding, CholeskyEmbeddingMatchesCpu) {
  gc::GpuEmbedder gpu(0);
  int cpu_errors = 0;  // noisy 4D embeddings of few points may lack a 4th positive pivot
  for (std::size_t n : {5, 40, 333, 1200}) {
    const auto x = random_points(n, 3, rng_);
    for (double noise : {0.0, 0.08}) {
      const auto d = distances(x, n, 3, noise, false, rng_);
      std::vector<double> g(n * n);
      gd::metric_matrix(d, n, g);
      for (std::size_t dim : {3, 4}) {
        if (noise == 0.0 && dim == 4) continue;  // exact 3D distances have no 4th positive pivot
        for (std::size_t rank : {0, 6}) {
          for (bool restricted : {false, true}) {
            const auto cand = restricted ? random_flags(n, 0.25, rng_) : std::vector<unsigned char>{};
            const std::string ctx = "n=" + std::to_string(n) + " noise=" + std::to_string(noise) +
                                    " dim=" + std::to_string(dim) + " rank=" + std::to_string(rank) +
                                    (restricted ? " restricted" : "") + " seed " + std::to_string(seed_);
            gd::EmbedResult c;
            try {
              c = gd::embed(g, n, dim, gd::EmbedMethod::Cholesky, rank, cand);
            } catch (const std::runtime_error& err) {  // too few positive pivots: the GPU says the same
              ++cpu_errors;
              EXPECT_THROW(
                  {
                    try {
                      (void)gpu.embed(g, n, dim, rank, cand);
                    } catch (const std::runtime_error& ge) {
                      EXPECT_EQ(std::string(ge.what()), std::string(err.what())) << ctx;
                      throw;
                    }
                  },
                  std::runtime_error)
                  << ctx;
              EXPECT_THROW((void)gpu.embed_distances(d, n, dim, rank, cand), std::runtime_error) << ctx;
              continue;
            }
            const auto e = gpu.embed(g, n, dim, rank, cand);
            expect_same_embedding(e, c, "embed " + ctx);
            const auto e2 = gpu.embed_distances(d, n, dim, rank, cand);
            expect_same_embedding(e2, c, "embed_distances " + ctx);
          }
        }
      }
    }
  }
  EXPECT_LE(cpu_errors, 8) << "the comparison must mostly compare coordinates, not errors";
}

TEST_F(GpuEmbedding, OnlyTheLowerTriangleOfTheMetricIsReadLikeTheCpu) {
  gc::GpuEmbedder gpu(0);
  const std::size_t n = 97;
  const auto x = random_points(n, 4, rng_);
  const auto d = distances(x, n, 4, 0.05, false, rng_);
  std::vector<double> g(n * n);
  gd::metric_matrix(d, n, g);
  for (std::size_t i = 0; i < n; ++i)
    for (std::size_t j = i + 1; j < n; ++j) g[i * n + j] = 1e6 * double(i + 1);  // garbage upper triangle
  const auto c = gd::embed(g, n, 4, gd::EmbedMethod::Cholesky, 4, {});
  expect_same_embedding(gpu.embed(g, n, 4, 4, {}), c, "garbage upper triangle");
}

TEST_F(GpuEmbedding, ErrorsAreTheCpuErrors) {
  gc::GpuEmbedder gpu(0);
  const std::size_t n = 12;
  std::vector<double> line(n * n);  // points on a line: rank 1
  for (std::size_t i = 0; i < n; ++i)
    for (std::size_t j = 0; j < n; ++j) line[i * n + j] = (double(i) - n / 2.0) * (double(j) - n / 2.0);
  auto message = [](auto&& f) {
    try {
      f();
    } catch (const std::exception& e) {
      return std::string(e.what());
    }
    return std::string("(no error)");
  };
  const std::string cpu = message([&] { (void)gd::embed(line, n, 3, gd::EmbedMethod::Cholesky); });
  const std::string gpu_msg = message([&] { (void)gpu.embed(line, n, 3); });
  EXPECT_NE(cpu.find("only 1 positive pivots (need 3)"), std::string::npos) << cpu;
  EXPECT_EQ(gpu_msg, cpu);
  EXPECT_EQ(message([&] { (void)gpu.embed(std::vector<double>(10), n, 3); }),
            message([&] { (void)gd::embed(std::vector<double>(10), n, 3, gd::EmbedMethod::Cholesky); }));
  EXPECT_EQ(message([&] { (void)gpu.embed(line, n, 3, 0, std::vector<unsigned char>(3, 1)); }), message([&] {
              (void)gd::embed(line, n, 3, gd::EmbedMethod::Cholesky, 0, std::vector<unsigned char>(3, 1));
            }));
  std::vector<double> nan_d(n * n, 1.0);
  for (std::size_t i = 0; i < n; ++i) nan_d[i * n + i] = 0.0;
  nan_d[5 * n + 2] = kNaN;
  const std::string nan_msg = message([&] { (void)gpu.embed_distances(nan_d, n, 3); });
  EXPECT_NE(nan_msg.find("NaN/Inf"), std::string::npos) << nan_msg;
}

// 2KPU model 1 (all atoms): the exact distances embed back to the model (classical embedding on 3
// pivots is exact for a rank-3 metric matrix), on the GPU as on the CPU.
TEST_F(GpuEmbedding, TwoKpuExactDistancesGiveTheModelBack) {
  const auto s = gemflow::io::read_pdb(std::string(GEMFLOW_SOURCE_DIR) + "/sample_data/2kpu/2kpu.pdb");
  const std::size_t n = s.atoms.size();
  ASSERT_GT(n, 1000u);
  std::vector<double> x(3 * n);
  for (std::size_t i = 0; i < n; ++i)
    for (int k = 0; k < 3; ++k) x[3 * i + k] = s.models[0][i][k];
  const auto d = distances(x, n, 3, 0.0, false, rng_);
  gc::GpuEmbedder gpu(0);
  for (bool restricted : {false, true}) {
    const auto cand = restricted ? random_flags(n, 0.25, rng_) : std::vector<unsigned char>{};
    const auto e = gpu.embed_distances(d, n, 3, 0, cand);
    std::vector<double> g(n * n);
    gd::metric_matrix(d, n, g);
    expect_same_embedding(e, gd::embed(g, n, 3, gd::EmbedMethod::Cholesky, 0, cand),
                          std::string("2KPU ") + (restricted ? "restricted" : "all pivots"));
    auto mirror = e.coords;
    for (std::size_t i = 0; i < n; ++i) mirror[3 * i] = -mirror[3 * i];
    const double rmsd = std::min(gd::superposed_rmsd(e.coords, x), gd::superposed_rmsd(mirror, x));
    EXPECT_LE(rmsd, kCoordTol) << (restricted ? "restricted" : "all pivots") << " seed " << seed_;
    if (verbose()) std::printf("  2KPU n=%zu: RMSD to the model after superposition %.3g Å\n", n, rmsd);
  }
}

// ---- nodes ------------------------------------------------------------------------------------
using gemflow::DistanceBounds;
using gemflow::Matrix;
using gemflow::Node;
using gemflow::Structure;
using gemflow::Table;
using gemflow::Value;
using gemflow::testing::error_of;
using gemflow::testing::RecordingContext;

gemflow::Registry& registry() {
  static gemflow::Registry reg;
  static bool once = [] {
    gemflow::PluginRegistrar r(reg, "distgeom-gpu-test");
    gd::register_embedding_nodes(r);
    gd::register_smoothing_nodes(r);
    gd::register_topology_nodes(r);
    gd::register_anneal_nodes(r);
    return true;
  }();
  (void)once;
  return reg;
}

std::unique_ptr<Node> make(const std::string& id) { return gemflow::testing::make_node(registry(), id); }

// 2KPU model 1, residues 20-31, heavy atoms, bounds from the model (as embedding_nodes_test).
struct Chain {
  Structure peptide;
  std::shared_ptr<const DistanceBounds> bounds, smoothed;
};

const Chain& chain() {
  static const Chain c = [] {
    Chain out;
    const Structure full = gemflow::io::read_pdb(std::string(GEMFLOW_SOURCE_DIR) + "/sample_data/2kpu/2kpu.pdb");
    out.peptide.models.emplace_back();
    for (std::size_t i = 0; i < full.atoms.size(); ++i)
      if (full.atoms[i].residue_number >= 20 && full.atoms[i].residue_number <= 31) {
        out.peptide.atoms.push_back(full.atoms[i]);
        out.peptide.models[0].push_back(full.models[0][i]);
      }
    auto node = make("distgeom.bounds_from_structure");
    node->set_input("structure", Value::make(out.peptide));
    RecordingContext ctx;
    node->execute(ctx);
    out.bounds = node->output("bounds").as<DistanceBounds>();
    DistanceBounds sm = *out.bounds;
    (void)gd::smooth_bounds(sm.lower.span(), sm.upper.span(), sm.size());
    out.smoothed = std::make_shared<const DistanceBounds>(std::move(sm));
    return out;
  }();
  return c;
}

std::string device_used(const RecordingContext& ctx) {
  return ctx.records().count("device_used") ? std::get<std::string>(ctx.records().at("device_used")) : "(none)";
}

std::shared_ptr<const Matrix<double>> metrized(std::int64_t seed) {
  auto m = make("distgeom.metrize");
  m->set_input("bounds", Value::of<DistanceBounds>(chain().smoothed));
  m->set_param("seed", seed);
  RecordingContext ctx;
  m->execute(ctx);
  return m->output("distances").as<Matrix<double>>();
}

TEST_F(GpuEmbedding, NodesOnCudaEqualNodesOnCpu) {
  const auto& c = chain();
  const auto d = metrized(5);
  std::shared_ptr<const Matrix<double>> g[2];
  std::shared_ptr<const Matrix<double>> x[2];
  const char* devices[2] = {"cpu", "cuda"};
  for (int k = 0; k < 2; ++k) {
    auto mm = make("distgeom.metric_matrix");
    mm->set_input("distances", Value::of<Matrix<double>>(d));
    mm->set_param("device", std::string(devices[k]));
    RecordingContext c1;
    ASSERT_EQ(error_of(*mm, c1), "(no error)") << devices[k];
    EXPECT_EQ(device_used(c1), k ? "cuda:0" : "cpu");
    g[k] = mm->output("metric").as<Matrix<double>>();
    auto em = make("distgeom.embed");
    em->set_input("metric", Value::of<Matrix<double>>(g[0]));  // the same G for both devices
    em->set_input("bounds", Value::of<DistanceBounds>(c.smoothed));
    em->set_input("structure", Value::make(c.peptide));
    em->set_param("pivot_fraction", 0.25);
    em->set_param("device", std::string(devices[k]));
    RecordingContext c2;
    ASSERT_EQ(error_of(*em, c2), "(no error)") << devices[k];
    EXPECT_EQ(device_used(c2), k ? "cuda:0" : "cpu");
    x[k] = em->output("coordinates").as<Matrix<double>>();
  }
  const std::size_t n = d->rows();
  const double dmax = max_abs(d->span());
  double gdiff = 0;
  for (std::size_t i = 0; i < n * n; ++i) gdiff = std::max(gdiff, std::abs(g[0]->span()[i] - g[1]->span()[i]));
  EXPECT_LE(gdiff, 4.0 * double(n) * kEps * dmax * dmax);
  ASSERT_EQ(x[0]->rows(), x[1]->rows());
  ASSERT_EQ(x[0]->cols(), x[1]->cols());
  double xdiff = 0;
  for (std::size_t i = 0; i < x[0]->span().size(); ++i)
    xdiff = std::max(xdiff, std::abs(x[0]->span()[i] - x[1]->span()[i]));
  EXPECT_LE(xdiff, kCoordTol);
}

TEST_F(GpuEmbedding, EmbedAndRefineOnCudaEqualsCpu) {
  const auto& c = chain();
  std::shared_ptr<const Structure> s[2];
  std::shared_ptr<const Table> t[2];
  const char* devices[2] = {"cpu", "cuda"};
  for (int k = 0; k < 2; ++k) {
    auto node = make("distgeom.embed_and_refine");
    node->set_input("bounds", Value::of<DistanceBounds>(c.bounds));
    node->set_input("smoothed", Value::of<DistanceBounds>(c.smoothed));
    node->set_input("structure", Value::make(c.peptide));
    node->set_param("trials", std::int64_t{3});
    node->set_param("threads", std::int64_t{3});
    node->set_param("seed", std::int64_t{3});
    node->set_param("pivot_fraction", 0.25);
    node->set_param("max_iterations", std::int64_t{300});
    node->set_param("device", std::string(devices[k]));
    RecordingContext ctx;
    ASSERT_EQ(error_of(*node, ctx), "(no error)") << devices[k];
    EXPECT_EQ(device_used(ctx), k ? "cuda:0" : "cpu");
    s[k] = node->output("structure").as<Structure>();
    t[k] = node->output("trials").as<Table>();
  }
  ASSERT_EQ(t[0]->rows.size(), t[1]->rows.size());
  const int ck = t[0]->column("kept"), ce = t[0]->column("dg_error");
  for (std::size_t r = 0; r < t[0]->rows.size(); ++r) {
    EXPECT_EQ(t[0]->rows[r][ck], t[1]->rows[r][ck]) << "trial " << r;
    const double e0 = std::get<double>(t[0]->rows[r][ce]), e1 = std::get<double>(t[1]->rows[r][ce]);
    EXPECT_LE(std::abs(e0 - e1), 1e-9 * std::max(1.0, e0)) << "trial " << r;
  }
  ASSERT_EQ(s[0]->models[0].size(), s[1]->models[0].size());
  double diff = 0;
  for (std::size_t i = 0; i < s[0]->models[0].size(); ++i)
    for (int k = 0; k < 3; ++k) diff = std::max(diff, std::abs(s[0]->models[0][i][k] - s[1]->models[0][i][k]));
  EXPECT_LE(diff, 1e-6) << "refined structures differ (Å)";
}

// The NMR chain on the GPU: distgeom.triangle_smoothing leaves its closure on the device (a
// device-resident value); embed_and_refine reads it, which makes its host copy once (counted in
// its transfers). The result is the host path's: the closure of smooth_bounds_cuda() (what the
// node gave before it kept results on the device) given as a host value, bit for bit.
TEST_F(GpuEmbedding, DeviceResidentSmoothedBoundsGiveTheHostPathsResult) {
  const auto& c = chain();
  const std::size_t n = c.bounds->size();
  auto smooth = make("distgeom.triangle_smoothing");
  smooth->set_input("bounds", Value::of<DistanceBounds>(c.bounds));
  smooth->set_param("device", std::string("cuda"));
  gemflow::TransferLog smooth_log;
  smooth->set_transfer_log(&smooth_log);
  RecordingContext sc;
  ASSERT_EQ(error_of(*smooth, sc), "(no error)");
  const Value resident = smooth->output("bounds");
  ASSERT_NE(resident.device_copy(), nullptr);
  EXPECT_EQ(resident.device_copy()->device().str(), "cuda:0");
  EXPECT_EQ(resident.device_copy()->bytes(), 2 * n * n * sizeof(double));
  EXPECT_FALSE(resident.has_host_copy());
  EXPECT_EQ(resident.summary(), "bounds for " + std::to_string(n) + " atoms (on cuda:0)");

  DistanceBounds host = *c.bounds;  // the host path
  ASSERT_TRUE(gc::smooth_bounds_cuda(host.lower.span(), host.upper.span(), n, nullptr, {}).consistency.consistent);
  std::int64_t changed = 0;
  for (std::size_t i = 0; i < n; ++i)
    for (std::size_t j = i + 1; j < n; ++j)
      changed += host.lower(i, j) != c.bounds->lower(i, j) || host.upper(i, j) != c.bounds->upper(i, j);
  EXPECT_EQ(std::get<std::int64_t>(sc.records().at("changed_pairs")), changed);
  EXPECT_GT(changed, 0);

  std::shared_ptr<const Structure> s[2];
  gemflow::TransferLog logs[2];
  for (int k = 0; k < 2; ++k) {
    auto node = make("distgeom.embed_and_refine");
    node->set_transfer_log(&logs[k]);
    node->set_input("bounds", Value::of<DistanceBounds>(c.bounds));
    node->set_input("smoothed", k == 0 ? resident : Value::make(host));
    node->set_input("structure", Value::make(c.peptide));
    node->set_param("trials", std::int64_t{3});
    node->set_param("threads", std::int64_t{3});
    node->set_param("seed", std::int64_t{3});
    node->set_param("pivot_fraction", 0.25);
    node->set_param("max_iterations", std::int64_t{300});
    node->set_param("device", std::string("cuda"));
    RecordingContext ctx;
    ASSERT_EQ(error_of(*node, ctx), "(no error)") << k;
    s[k] = node->output("structure").as<Structure>();
  }
  // the lazy host copy: made once, by the consumer, equal to the host path's closure
  ASSERT_TRUE(resident.has_host_copy());
  const auto downloaded = resident.as<DistanceBounds>();
  EXPECT_EQ(std::memcmp(downloaded->lower.data(), host.lower.data(), n * n * sizeof(double)), 0);
  EXPECT_EQ(std::memcmp(downloaded->upper.data(), host.upper.data(), n * n * sizeof(double)), 0);
  EXPECT_EQ(downloaded->labels, c.bounds->labels);
  EXPECT_EQ(downloaded->atom_index, c.bounds->atom_index);
  EXPECT_EQ(logs[0].stats().to_host_count, 1u);
  EXPECT_EQ(logs[0].stats().to_host_bytes, 2 * n * n * sizeof(double));
  EXPECT_EQ(logs[1].stats().to_host_count, 0u);
  // smoothing uploaded its input and downloaded nothing
  EXPECT_EQ(smooth_log.stats().to_host_count, 0u);
  EXPECT_EQ(sc.records().count("changed_pairs"), 1u);
  ASSERT_EQ(s[0]->models[0].size(), s[1]->models[0].size());
  for (std::size_t i = 0; i < s[0]->models[0].size(); ++i)
    for (int k = 0; k < 3; ++k) ASSERT_EQ(s[0]->models[0][i][k], s[1]->models[0][i][k]) << "atom " << i;
}

TEST_F(GpuEmbedding, EigenOnCudaFailsNamingTheMethodAndAutoRunsItOnTheCpu) {
  const auto& c = chain();
  const auto d = metrized(2);
  std::vector<double> g(d->rows() * d->rows());
  gd::metric_matrix(d->span(), d->rows(), g);
  for (const std::string dev : {"cuda", "auto"}) {
    auto em = make("distgeom.embed");
    em->set_input("metric", Value::make(Matrix<double>(d->rows(), d->rows(), g)));
    em->set_input("bounds", Value::of<DistanceBounds>(c.smoothed));
    em->set_param("method", std::string("eigen"));
    em->set_param("device", dev);
    RecordingContext ctx;
    if (dev == "cuda") {
      try {
        em->execute(ctx);
        FAIL() << "eigen on cuda ran";
      } catch (const gemflow::DeviceError& e) {
        EXPECT_NE(std::string(e.what()).find("parameter 'method' = eigen has no CUDA path"), std::string::npos)
            << e.what();
      }
    } else {
      ASSERT_EQ(error_of(*em, ctx), "(no error)");
      EXPECT_EQ(device_used(ctx), "cpu");
      bool logged = false;
      for (const auto& m : ctx.messages(gemflow::LogLevel::Info))
        logged |= m.find("eigen has no CUDA path") != std::string::npos;
      EXPECT_TRUE(logged) << "auto + eigen must say why it runs on the CPU";
    }
  }
}

// distgeom.anneal with device cuda: the batch path with one structure gives the CPU node's
// result (a 6-residue peptide from its sequence against CA(i)–CA(i+3) ≤ 5.5 Å, the MD schedule of
// AnnealGpu.BatchedScheduleMatchesTheCpuAnneal: energies to 1e-3 relative), and says which device
// it used. The L-BFGS minimisations are cut to 20 iterations: longer ones amplify rounding (on the
// CPU alone, moving one start coordinate by 1e-12 Å changes the final energy of the default
// 500-iteration schedule by 25 %, a different local minimum), while at 20 a change of 1e-9 Å moves
// it by 1e-9 relative. Another seed (4) changes the energies by about 25 %, so a seed, schedule
// or term that did not reach the device would fail the comparison.
TEST_F(GpuEmbedding, AnnealNodeOnCudaMatchesTheCpuNode) {
  const auto dir = std::filesystem::temp_directory_path() / "gemflow_anneal_gpu_test";
  std::filesystem::create_directories(dir);
  const auto f = dir / "hex.fasta";
  std::ofstream(f) << ">hex\nAEAAKA\n";
  auto topo = make("distgeom.topology");
  topo->set_param("path", f.string());
  RecordingContext c0;
  ASSERT_EQ(error_of(*topo, c0), "(no error)");
  const auto mol = topo->output("structure").as<Structure>();
  auto at = [&](int r, const char* name) {
    for (std::size_t i = 0; i < mol->atoms.size(); ++i)
      if (mol->atoms[i].residue_number == r && mol->atoms[i].name == name) return i;
    return SIZE_MAX;
  };
  gemflow::RestraintSet rs;
  for (int r = 1; r + 3 <= 6; ++r) {
    gemflow::DistanceRestraint d;
    d.id = r;
    d.origin = "test:" + std::to_string(r);
    d.upper = 5.5;
    gemflow::DistanceRestraint::Alternative alt;
    alt.atoms_a = {at(r, "CA")};
    alt.atoms_b = {at(r + 3, "CA")};
    d.alternatives.push_back(alt);
    rs.restraints.push_back(d);
  }
  std::map<std::string, Table::Cell> m[3];
  const char* devices[3] = {"cpu", "cuda", "cpu"};
  for (int k = 0; k < 3; ++k) {
    auto an = make("distgeom.anneal");
    an->set_input("structure", Value::make(*mol));
    an->set_input("topology", Value::make(*mol));
    an->set_input("restraints", Value::make(rs));
    an->set_param("hot_steps", std::int64_t{200});
    an->set_param("cooling_stages", std::int64_t{4});
    an->set_param("steps_per_stage", std::int64_t{50});
    an->set_param("minimise_iterations", std::int64_t{20});
    an->set_param("seed", std::int64_t{k == 2 ? 4 : 3});
    an->set_param("device", std::string(devices[k]));
    RecordingContext c;
    ASSERT_EQ(error_of(*an, c), "(no error)") << devices[k];
    EXPECT_EQ(device_used(c), k == 1 ? "cuda:0" : "cpu");
    ASSERT_EQ(an->output("structure").as<Structure>()->atoms.size(), mol->atoms.size());
    for (const auto& row : an->output("report").as<Table>()->rows) m[k][std::get<std::string>(row[0])] = row[1];
  }
  EXPECT_EQ(std::get<std::int64_t>(m[1].at("md_steps")), std::get<std::int64_t>(m[0].at("md_steps")));
  EXPECT_EQ(std::get<std::int64_t>(m[1].at("noe_violations_gt_0_5A")),
            std::get<std::int64_t>(m[0].at("noe_violations_gt_0_5A")));
  for (const char* term : {"energy_total", "energy_noe", "energy_bond"}) {
    const double cpu = std::get<double>(m[0].at(term)), gpu = std::get<double>(m[1].at(term));
    const double other_seed = std::get<double>(m[2].at(term));
    EXPECT_NEAR(gpu, cpu, 1e-3 * std::abs(cpu) + 1e-6) << term;
    EXPECT_GT(std::abs(other_seed - cpu), 1e-2 * std::abs(cpu)) << term << ": the comparison must tell seeds apart";
  }
}

}  // namespace

#else
TEST(GpuEmbedding, NotBuilt) { GTEST_SKIP() << "Gemflow was built without CUDA"; }
#endif
