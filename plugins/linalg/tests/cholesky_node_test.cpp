// Node-level tests of linalg.cholesky (gemflow::testing::RecordingContext): parameter checks, error messages,
// outputs against the factorisation.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include <gemflow/device.hpp>
#include <gemflow/linalg/cholesky_cuda.hpp>
#include <gemflow/node.hpp>
#include <gemflow/registry.hpp>
#include <gemflow/testing.hpp>
#include <gemflow/types.hpp>
#include <gemflow/workflow.hpp>

#include "placement.hpp"
#include "register.hpp"

namespace {
using namespace gemflow;

struct Fixture {
  Registry reg;
  std::unique_ptr<Node> node;
  Fixture() {
    PluginRegistrar r(reg, "linalg-test");
    linalg::register_cholesky_nodes(r);
    node = gemflow::testing::make_node(reg, "linalg.cholesky");
  }
  std::string error(NodeContext& ctx) { return gemflow::testing::error_of(*node, ctx); }
};

Matrix<double> mat(std::size_t r, std::size_t c, std::vector<double> v) { return Matrix<double>(r, c, std::move(v)); }

TEST(CholeskyNode, FactorsAnSpdMatrix) {
  Fixture f;
  f.node->set_input("matrix", Value::make(mat(3, 3, {4, 2, -2, 2, 10, 5, -2, 5, 6})));
  gemflow::testing::RecordingContext ctx;
  f.node->execute(ctx);
  const auto l = f.node->output("factor").as<Matrix<double>>();
  const std::vector<double> ref{2, 0, 0, 1, 3, 0, -1, 2, 1};
  for (std::size_t k = 0; k < 9; ++k) EXPECT_NEAR(l->span()[k], ref[k], 1e-15) << k;
  EXPECT_TRUE(f.node->output("permutation").as<Table>()->rows.empty());
  EXPECT_EQ(std::get<std::int64_t>(ctx.records().at("rank")), 3);
}

TEST(CholeskyNode, NotPositiveDefiniteNamesTheLeadingMinor) {
  Fixture f;
  // Leading 2×2 minor 1·1 − 2·2 < 0: LAPACK stops at order 2.
  f.node->set_input("matrix", Value::make(mat(3, 3, {1, 2, 0, 2, 1, 0, 0, 0, 1})));
  gemflow::testing::RecordingContext ctx;
  const auto e = f.error(ctx);
  // the node's own message, without its id or type: the executor names the node (the error convention)
  EXPECT_EQ(e.rfind("the matrix is not positive definite: the leading minor of order 2", 0), 0u) << e;
  EXPECT_NE(e.find("rows/columns 0..1"), std::string::npos) << e;
  EXPECT_NE(e.find("pivoted: true"), std::string::npos) << e;
}

// Regression: an SPD matrix of entries below fp32's range failed in precision fp32 with a message
// that called it not positive definite and suggested 'pivoted: true', which refuses fp32. Now a
// warning names the first such entry, and the error says it underflows and to use fp64.
TEST(CholeskyNode, Fp32UnderflowIsNamedNotBlamedOnDefiniteness) {
  Fixture f;
  f.node->set_input("matrix", Value::make(mat(2, 2, {1e-300, 1e-301, 1e-301, 1e-300})));
  f.node->set_param("precision", std::string("fp32"));
  gemflow::testing::RecordingContext ctx;
  const auto e = f.error(ctx);
  EXPECT_NE(e.find("A(0, 0) = 1e-300 underflows single precision (|a| < 1.2e-38): use precision fp64"),
            std::string::npos)
      << e;
  EXPECT_EQ(e.find("pivoted"), std::string::npos) << e;
  ASSERT_EQ(ctx.warnings().size(), 1u);
  EXPECT_NE(ctx.warnings()[0].find("A(0, 0) = 1e-300 is below single precision's normal range"), std::string::npos)
      << ctx.warnings()[0];
  // fp64 factors it: L(0, 0) = 1e-150
  Fixture g;
  g.node->set_input("matrix", Value::make(mat(2, 2, {1e-300, 1e-301, 1e-301, 1e-300})));
  gemflow::testing::RecordingContext ctx64;
  g.node->execute(ctx64);
  EXPECT_DOUBLE_EQ((*g.node->output("factor").as<Matrix<double>>())(0, 0), 1e-150);
  EXPECT_TRUE(ctx64.warnings().empty());
}

// QA: combinations wrong on every device passed `gemflow validate` and failed the run without a
// file position; they are workflow errors at the parameter now (NodeInfo::rules).
TEST(CholeskyNode, ParameterCombinationsAreWorkflowErrorsWithTheirPosition) {
  Registry reg;
  PluginRegistrar r(reg, "linalg-test");
  linalg::register_cholesky_nodes(r);
  linalg::register_solve_nodes(r);
  const auto errors = [&](const std::string& node) {
    const auto res = parse_workflow("gemflow: 1\nnodes:\n  n: " + node + "\n", "w.yaml", reg);
    std::vector<std::string> e;
    for (const auto& d : res.diagnostics)
      if (d.severity == Diagnostic::Severity::Error && d.str().find("required input") == std::string::npos)
        e.push_back(d.str());  // (the unconnected input 'matrix' aside)
    return e;
  };
  struct Case {
    std::string node, error;
  };
  for (const Case& c :
       {Case{"{type: linalg.cholesky, params: {device: cpu, rank: 3}}",
             "w.yaml:3:58: error: node 'n', parameter 'rank': rank = 3 needs 'pivoted: true' (the plain factorisation "
             "has "
             "no rank limit)"},
        Case{"{type: linalg.cholesky, params: {tolerance: 0.1}}",
             "error: node 'n', parameter 'tolerance': tolerance = 0.1 needs 'pivoted: true'"},
        Case{"{type: linalg.cholesky, params: {pivoted: true, precision: fp32}}",
             "error: node 'n', parameter 'precision': precision = fp32 cannot be used with 'pivoted: true' (the "
             "pivoted factorisation runs in fp64 only)"},
        Case{"{type: linalg.cholesky, params: {algorithm: tiled, pivoted: true}}",
             "error: node 'n', parameter 'algorithm': algorithm = tiled cannot be used with 'pivoted: true'"},
        Case{"{type: linalg.cholesky, params: {pivoted: true, fp32_products: 3xTF32}}",
             "parameter 'fp32_products': fp32_products = 3xTF32 cannot be used with 'precision: fp64'"},
        Case{"{type: linalg.cholesky, params: {fp32_products: 1xFP16}}",
             "parameter 'fp32_products': fp32_products = 1xFP16 cannot be used with 'precision: fp64'"},
        Case{"{type: linalg.spd_solve, params: {precision: mixed, algorithm: lapack, fp32_products: 1xFP16}}",
             "fp32_products = 1xFP16 cannot be used with 'algorithm: lapack' (they run on the CUDA tensor cores"},
        Case{"{type: linalg.spd_solve, params: {precision: mixed, algorithm: cusolver}}",
             "error: node 'n', parameter 'algorithm': algorithm = cusolver cannot be used with 'precision: "
             "mixed'"},
        // a comparison with a constant (checked in execute() only, after the upstream nodes ran)
        Case{"{type: linalg.spd_solve, params: {precision: mixed, tolerance: 0}}",
             "w.yaml:3:69: error: node 'n', parameter 'tolerance': tolerance = 0.0 must be at least "
             "1.1102230246251565e-16 "
             "(the backward error of an fp64 solution is about 2⁻⁵³"},
        Case{"{type: linalg.spd_solve, params: {tolerance: 1e-17}}",
             "parameter 'tolerance': tolerance = 1e-17 must be at least 1.1102230246251565e-16"}}) {
    const auto e = errors(c.node);
    ASSERT_EQ(e.size(), 1u) << c.node << ": " << ::testing::PrintToString(e);
    EXPECT_NE(e[0].find(c.error), std::string::npos) << e[0];
  }
  for (const char* ok : {"{type: linalg.cholesky, params: {rank: 3, pivoted: true, tolerance: 0.1}}",
                         "{type: linalg.cholesky, params: {precision: fp32, fp32_products: 3xTF32}}",
                         "{type: linalg.spd_solve, params: {precision: mixed, algorithm: lookahead}}",
                         "{type: linalg.spd_solve, params: {precision: fp32, algorithm: lapack, "
                         "fp32_products: exact}}",
                         "{type: linalg.spd_solve, params: {tolerance: -1}}",  // negative: the default
                         "{type: linalg.spd_solve, params: {tolerance: 1e-10}}"})
    EXPECT_TRUE(errors(ok).empty()) << ok << ": " << errors(ok).front();
}

TEST(CholeskyNode, RejectsNonSquareNonFiniteAndRankWithoutPivoting) {
  {
    Fixture f;
    f.node->set_input("matrix", Value::make(mat(2, 3, {1, 0, 0, 0, 1, 0})));
    gemflow::testing::RecordingContext ctx;
    EXPECT_NE(f.error(ctx).find("must be square, got 2×3"), std::string::npos);
  }
  {
    Fixture f;
    f.node->set_input("matrix", Value::make(Matrix<double>(0, 0)));
    gemflow::testing::RecordingContext ctx;
    EXPECT_NE(f.error(ctx).find("input 'matrix' is empty (0×0)"), std::string::npos);
  }
  {
    Fixture f;
    f.node->set_input("matrix", Value::make(mat(2, 2, {1, std::nan(""), 0, 1})));
    gemflow::testing::RecordingContext ctx;
    EXPECT_NE(f.error(ctx).find("NaN or infinity"), std::string::npos);
  }
  {
    Fixture f;
    f.node->set_input("matrix", Value::make(mat(2, 2, {1, 0, 0, 1})));
    f.node->set_param("rank", std::int64_t{1});
    gemflow::testing::RecordingContext ctx;
    EXPECT_NE(f.error(ctx).find("parameter 'rank' = 1 needs 'pivoted: true'"), std::string::npos);
  }
  // Limits come from the spec (the one validation path).
  Fixture f;
  const auto* spec = f.reg.find_node("linalg.cholesky")->spec.param("rank");
  ASSERT_NE(spec, nullptr);
  EXPECT_TRUE(spec->check(std::int64_t{-1}).has_value());
  EXPECT_FALSE(spec->check(std::int64_t{3}).has_value());
}

TEST(CholeskyNode, PivotedGivesRankColumnsAndPermutation) {
  // Rank-2 PSD 4×4: B Bᵀ with B = [[1,0],[2,1],[0,3],[1,1]].
  const std::vector<double> b{1, 0, 2, 1, 0, 3, 1, 1};
  std::vector<double> a(16);
  for (int i = 0; i < 4; ++i)
    for (int j = 0; j < 4; ++j) a[i * 4 + j] = b[i * 2] * b[j * 2] + b[i * 2 + 1] * b[j * 2 + 1];
  Fixture f;
  f.node->set_input("matrix", Value::make(mat(4, 4, a)));
  f.node->set_param("pivoted", true);
  gemflow::testing::RecordingContext ctx;
  f.node->execute(ctx);
  // QA: auto on CUDA logged the plain factor's algorithm (tiled) for a pivoted factor
  const std::string want =
      gemflow::cuda_device_count() > 0 ? "algorithm auto: factor_pivoted (GPU" : "algorithm auto: lapack (CPU)";
  const auto infos = ctx.infos();
  EXPECT_TRUE(std::any_of(infos.begin(), infos.end(), [&](const std::string& m) { return m.find(want) == 0; }))
      << "no '" << want << "' among " << infos.size() << " info lines";
  const auto l = f.node->output("factor").as<Matrix<double>>();
  const auto perm = f.node->output("permutation").as<Table>();
  ASSERT_EQ(l->rows(), 4u);
  ASSERT_EQ(l->cols(), 2u);
  ASSERT_EQ(perm->rows.size(), 4u);
  EXPECT_EQ(std::get<std::int64_t>(perm->rows[0][1]), 2);  // largest diagonal: 9 at row 2
  std::vector<std::size_t> p;
  for (const auto& row : perm->rows) p.push_back(static_cast<std::size_t>(std::get<std::int64_t>(row[1])));
  for (std::size_t i = 0; i < 4; ++i)
    for (std::size_t j = 0; j < 4; ++j) {
      const double llt = (*l)(i, 0) * (*l)(j, 0) + (*l)(i, 1) * (*l)(j, 1);
      EXPECT_NEAR(llt, a[p[i] * 4 + p[j]], 1e-12);
    }
  EXPECT_EQ(std::get<std::int64_t>(ctx.records().at("rank")), 2);
}

TEST(CholeskyNode, Fp32FactorIsTheSinglePrecisionFactor) {
  // 4 2 -2 / 2 10 5 / -2 5 6 = L Lᵀ with small integers: exact in fp32 too
  Fixture f;
  f.node->set_input("matrix", Value::make(mat(3, 3, {4, 2, -2, 2, 10, 5, -2, 5, 6})));
  f.node->set_param("precision", std::string("fp32"));
  f.node->set_param("device", std::string("cpu"));
  gemflow::testing::RecordingContext ctx;
  f.node->execute(ctx);
  const auto l = f.node->output("factor").as<Matrix<double>>();
  const std::vector<double> ref{2, 0, 0, 1, 3, 0, -1, 2, 1};
  for (std::size_t k = 0; k < 9; ++k) EXPECT_EQ(l->span()[k], ref[k]) << k;
  EXPECT_EQ(std::get<std::string>(ctx.records().at("precision")), "fp32");
  // a value that fp32 rounds: L(1,0) = 0.1/2 is the single-precision quotient, not the double one
  Fixture g;
  g.node->set_input("matrix", Value::make(mat(2, 2, {4, 0.1, 0.1, 1})));
  g.node->set_param("precision", std::string("fp32"));
  gemflow::testing::RecordingContext ctx2;
  g.node->execute(ctx2);
  const auto l2 = g.node->output("factor").as<Matrix<double>>();
  EXPECT_EQ((*l2)(1, 0), static_cast<double>(0.1f / 2.0f));
  EXPECT_NE((*l2)(1, 0), 0.1 / 2.0);
}

TEST(CholeskyNode, DeviceAlgorithmAndPrecisionAreCheckedAndNamed) {
  const auto run = [](std::vector<std::pair<std::string, ParamValue>> params, std::string device_override = "") {
    Fixture f;
    f.node->set_input("matrix", Value::make(mat(2, 2, {4, 2, 2, 5})));
    for (auto& [k, v] : params) f.node->set_param(k, v);
    gemflow::testing::RecordingContext ctx;
    if (!device_override.empty()) ctx.set_device_override(device_override);
    return f.error(ctx);
  };
  using P = std::vector<std::pair<std::string, ParamValue>>;
  EXPECT_NE(run(P{{"tolerance", 0.5}}).find("parameter 'tolerance' = 0.5 needs 'pivoted: true'"), std::string::npos);
  EXPECT_NE(run(P{{"pivoted", true}, {"precision", std::string("fp32")}}).find("parameter 'precision'"),
            std::string::npos);
  EXPECT_NE(run(P{{"pivoted", true}, {"algorithm", std::string("cusolver")}}).find("parameter 'algorithm' = cusolver"),
            std::string::npos);
  const auto gpu_on_cpu = run(P{{"algorithm", std::string("cusolver")}, {"device", std::string("cpu")}});
  EXPECT_NE(gpu_on_cpu.find("algorithm 'cusolver' runs on a CUDA GPU"), std::string::npos) << gpu_on_cpu;
  const auto tiled_on_cpu = run(P{{"algorithm", std::string("tiled")}, {"device", std::string("cpu")}});
  EXPECT_NE(tiled_on_cpu.find("algorithm 'tiled' runs on a CUDA GPU"), std::string::npos) << tiled_on_cpu;
  const auto lapack_on_cuda = run(P{{"algorithm", std::string("lapack")}}, "cuda");
  EXPECT_NE(lapack_on_cuda.find("parameter 'algorithm': lapack runs on the CPU"), std::string::npos) << lapack_on_cuda;
  EXPECT_NE(run(P{{"device", std::string("gpu")}}).find("parameter 'device': 'gpu' is not a device"),
            std::string::npos);
  // fp32_products: fp32 GEMM modes, tensor-core ones on CUDA only
  const auto p64 = run(P{{"fp32_products", std::string("3xFP16")}, {"device", std::string("cpu")}});
  EXPECT_NE(p64.find("parameter 'fp32_products' = 3xFP16 applies to precision fp32 or mixed, not fp64"),
            std::string::npos)
      << p64;
  const auto tc_on_cpu = run(
      P{{"fp32_products", std::string("1xTF32")}, {"precision", std::string("fp32")}, {"device", std::string("cpu")}});
  EXPECT_NE(tc_on_cpu.find("parameter 'fp32_products' = 1xTF32 runs on the CUDA tensor cores"), std::string::npos)
      << tc_on_cpu;
  EXPECT_NE(run(P{{"pivoted", true}, {"fp32_products", std::string("exact")}}).find("parameter 'fp32_products'"),
            std::string::npos);
  EXPECT_EQ(
      run(P{
          {"fp32_products", std::string("exact")}, {"precision", std::string("fp32")}, {"device", std::string("cpu")}}),
      "(no error)");                        // LAPACK spotrf is the exact mode
  if (gemflow::cuda_device_count() == 0) {  // no GPU here: an explicit cuda device is an error, never the CPU
    const auto e = run(P{{"device", std::string("cuda")}});
    EXPECT_NE(e.find("parameter 'device' = cuda: "), std::string::npos) << e;
    // A build without CUDA (the asan preset) says so rather than looking for a device.
    EXPECT_NE(e.find(gemflow::built_with_cuda() ? "no CUDA device is present" : "this Gemflow was built without CUDA"),
              std::string::npos)
        << e;
  }
}

// auto on CUDA: the persistent tiled kernel below the card's crossover, the lookahead from it
// and for the mixed solve's FP16 factor; the card's row from its traits, every other card on the
// H100 row under a name that says so.
TEST(CholeskyNode, AutoOnCudaPicksTiledBelowTheCardsCrossover) {
  using linalg::CholAlgo;
  using linalg::SolvePrecision;
  namespace cu = gemflow::linalg::cuda;
  const auto h200 = cu::auto_dispatch({9, 0, 132, 4800.0});
  const auto h100 = cu::auto_dispatch({9, 0, 132, 3352.0});
  const auto other = cu::auto_dispatch({8, 0, 108, 2039.0});
  EXPECT_EQ(h200.row, "H200");
  EXPECT_EQ(h100.row, "H100");
  EXPECT_EQ(other.row, "H100 (fallback: cc 8.0, 108 SMs)");
  EXPECT_EQ(other.tiled_below_fp64, h100.tiled_below_fp64);
  EXPECT_EQ(other.tiled_below_fp32, h100.tiled_below_fp32);
  EXPECT_EQ(cu::auto_dispatch({9, 0, 114, 2000.0}).row, "H100 (fallback: cc 9.0, 114 SMs)");
  for (const auto& d : {h200, h100}) {
    SCOPED_TRACE(d.row);
    const auto n64 = static_cast<std::size_t>(d.tiled_below_fp64), n32 = static_cast<std::size_t>(d.tiled_below_fp32);
    EXPECT_EQ(linalg::auto_cuda_algorithm(1, SolvePrecision::fp64, d), CholAlgo::Tiled);
    EXPECT_EQ(linalg::auto_cuda_algorithm(2003, SolvePrecision::fp64, d), CholAlgo::Tiled);
    EXPECT_EQ(linalg::auto_cuda_algorithm(n64 - 1, SolvePrecision::fp64, d), CholAlgo::Tiled);
    EXPECT_EQ(linalg::auto_cuda_algorithm(n64, SolvePrecision::fp64, d), CholAlgo::Lookahead);
    EXPECT_EQ(linalg::auto_cuda_algorithm(n32 - 1, SolvePrecision::fp32, d), CholAlgo::Tiled);
    EXPECT_EQ(linalg::auto_cuda_algorithm(n32, SolvePrecision::fp32, d), CholAlgo::Lookahead);
    EXPECT_EQ(linalg::auto_cuda_algorithm(2003, SolvePrecision::mixed, d), CholAlgo::Lookahead);
  }
  EXPECT_EQ(h200.tiled_below_fp64, 9216);
  EXPECT_EQ(h200.tiled_below_fp32, 6656);
}

// Host only: the one rule of which algorithm runs which fp32 product mode (GpuCholesky::factor,
// solve_mixed and the nodes' fp32_products all check it), and the names its errors give.
TEST(CholeskyNode, Fp32ProductModesAndTheirAlgorithms) {
  namespace cu = gemflow::linalg::cuda;
  using A = cu::CholeskyAlgo;
  using M = cu::Fp32Mode;
  for (A a : {A::blocked, A::recursive, A::cusolver, A::lookahead, A::tiled}) {
    EXPECT_TRUE(cu::algo_runs_mode(a, M::exact));
    const bool tf32 = a == A::recursive || a == A::lookahead;
    EXPECT_EQ(cu::algo_runs_mode(a, M::tf32), tf32);
    EXPECT_EQ(cu::algo_runs_mode(a, M::tf32x3), tf32);
    EXPECT_EQ(cu::algo_runs_mode(a, M::fp16x3), a == A::lookahead);
    EXPECT_EQ(cu::algo_runs_mode(a, M::fp16), a == A::lookahead || a == A::tiled);
  }
  EXPECT_STREQ(cu::algos_running_mode(M::tf32x3), "recursive or lookahead");
  EXPECT_STREQ(cu::algos_running_mode(M::fp16x3), "lookahead");
  EXPECT_STREQ(cu::algos_running_mode(M::fp16), "lookahead or tiled");
}

TEST(CholeskyNode, WarnsOnAsymmetryAndOnAnIndefinitePivotedMatrix) {
  {
    Fixture f;  // lower triangle [[4],[2,5]] used; the upper 3 differs
    f.node->set_input("matrix", Value::make(mat(2, 2, {4, 3, 2, 5})));
    gemflow::testing::RecordingContext ctx;
    f.node->execute(ctx);
    ASSERT_EQ(ctx.warnings().size(), 1u);
    EXPECT_NE(ctx.warnings()[0].find("not symmetric: A(1, 0) = 2 but A(0, 1) = 3"), std::string::npos)
        << ctx.warnings()[0];
    EXPECT_EQ((*f.node->output("factor").as<Matrix<double>>())(1, 0), 1.0);  // 2 / √4
  }
  {
    Fixture f;  // eigenvalues 3 and −1: indefinite
    f.node->set_input("matrix", Value::make(mat(2, 2, {1, 2, 2, 1})));
    f.node->set_param("pivoted", true);
    gemflow::testing::RecordingContext ctx;
    f.node->execute(ctx);
    EXPECT_EQ(std::get<std::int64_t>(ctx.records().at("rank")), 1);
    ASSERT_EQ(ctx.warnings().size(), 1u);
    EXPECT_NE(ctx.warnings()[0].find("the next pivot -3 is negative"), std::string::npos) << ctx.warnings()[0];
    EXPECT_NE(ctx.warnings()[0].find("not positive semidefinite"), std::string::npos);
  }
  {
    // Regression: the largest remaining diagonal is 0 (so no negative next pivot), but −1 = −‖A‖
    // remains: indefinite, and it was factored as semidefinite with no word.
    Fixture f;
    f.node->set_input("matrix", Value::make(mat(3, 3, {1, 0, 0, 0, 0, 0, 0, 0, -1})));
    f.node->set_param("pivoted", true);
    gemflow::testing::RecordingContext ctx;
    f.node->execute(ctx);
    EXPECT_EQ(std::get<std::int64_t>(ctx.records().at("rank")), 1);
    EXPECT_EQ(std::get<double>(ctx.records().at("min_remaining_diagonal")), -1.0);
    ASSERT_EQ(ctx.warnings().size(), 1u);
    EXPECT_NE(ctx.warnings()[0].find("the diagonal of row 2 (0-based) is -1"), std::string::npos) << ctx.warnings()[0];
    EXPECT_NE(ctx.warnings()[0].find("not positive semidefinite"), std::string::npos);
  }
  {
    // A next pivot of −1e-17 on a matrix of norm 1 is rounding, not indefiniteness: no warning.
    Fixture f;
    f.node->set_input("matrix", Value::make(mat(2, 2, {1, 0, 0, -1e-17})));
    f.node->set_param("pivoted", true);
    gemflow::testing::RecordingContext ctx;
    f.node->execute(ctx);
    EXPECT_EQ(std::get<std::int64_t>(ctx.records().at("rank")), 1);
    EXPECT_TRUE(ctx.warnings().empty()) << ctx.warnings().front();
  }
}

}  // namespace
