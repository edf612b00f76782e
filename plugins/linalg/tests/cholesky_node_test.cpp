// Node-level tests of linalg.cholesky (gemflow::testing::RecordingContext): parameter checks, error messages,
// outputs against the factorisation.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include <gemflow/node.hpp>
#include <gemflow/registry.hpp>
#include <gemflow/testing.hpp>
#include <gemflow/types.hpp>

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
  EXPECT_NE(e.find("linalg.cholesky"), std::string::npos) << e;
  EXPECT_NE(e.find("leading minor of order 2"), std::string::npos) << e;
  EXPECT_NE(e.find("rows/columns 0..1"), std::string::npos) << e;
  EXPECT_NE(e.find("pivoted: true"), std::string::npos) << e;
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

}  // namespace
