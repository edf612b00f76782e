// SeedParam: the declaration, the stochastic flag it implies and enforces, and the seed the
// executor records in the provenance record.
#include <fstream>
#include <sstream>

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "gemflow/executor.hpp"
#include "gemflow/registry.hpp"
#include "gemflow/types.hpp"
#include "test_support.hpp"

namespace fs = std::filesystem;
using ::testing::HasSubstr;

namespace gemflow {
namespace {

// Draws one number from its seed (a linear congruential step, enough to see the seed used).
class Draw final : public Node {
 public:
  static NodeInfo info() { return {.id = "seed.draw", .title = "Draw", .category = "Test"}; }
  Output<MatrixF64> out{this, "out", "One number from the seed"};
  SeedParam seed{this, "Seed of the draw", 7};
  void execute(NodeContext&) override {
    out.set(MatrixF64(1, 1, static_cast<double>((seed.value() * 6364136223846793005ULL + 1) >> 40)));
  }
};

class StochasticWithoutSeed final : public Node {
 public:
  static NodeInfo info() { return {.id = "seed.unseeded", .stochastic = true}; }
  void execute(NodeContext&) override {}
};

// A plain integer named "seed": not a SeedParam, so not recorded; refused when stochastic.
class PlainSeed final : public Node {
 public:
  static NodeInfo info() { return {.id = "seed.plain", .stochastic = true}; }
  Param<std::int64_t> seed{this, "seed", 1, {.min = 0}};
  void execute(NodeContext&) override {}
};

class Deterministic final : public Node {
 public:
  static NodeInfo info() { return {.id = "seed.none"}; }
  Output<MatrixF64> out{this, "out", "2"};
  void execute(NodeContext&) override { out.set(MatrixF64(1, 1, 2.0)); }
};

TEST(SeedParam, DeclaresAnIntegerSeedAndMakesTheNodeStochastic) {
  Registry r;
  r.add_node<Draw>("x.so");
  const NodeSpec& spec = r.find_node("seed.draw")->spec;
  EXPECT_TRUE(spec.info.stochastic);  // not said in info(): the seed implies it
  const ParamSpec* p = spec.param("seed");
  ASSERT_NE(p, nullptr);
  EXPECT_TRUE(p->seed);
  EXPECT_EQ(p->kind, ParamKind::Int);
  EXPECT_EQ(p->default_value, ParamValue(std::int64_t{7}));
  EXPECT_EQ(p->min, 0.0);
  EXPECT_EQ(p->doc, "Seed of the draw");
  EXPECT_EQ(p->check(std::int64_t{-1}), "-1 is below the minimum 0");

  Draw d;
  EXPECT_EQ(d.seed.value(), 7u);
  d.set_param("seed", std::int64_t{1} << 62);
  EXPECT_EQ(*d.seed, std::uint64_t{1} << 62);
  d.set_param("seed", std::int64_t{-3});  // set_param checks the kind only
  EXPECT_THAT([&] { (void)d.seed.value(); },
              ::testing::ThrowsMessage<Error>(HasSubstr("parameter 'seed': -3 is below the minimum 0")));
}

TEST(SeedParam, StochasticNodeWithoutASeedIsRefused) {
  Registry r;
  EXPECT_THAT([&] { r.add_node<StochasticWithoutSeed>("x.so"); },
              ::testing::ThrowsMessage<Error>(
                  HasSubstr("node 'seed.unseeded' is declared stochastic but has no seed parameter: declare "
                            "`SeedParam seed{this};`")));
  EXPECT_THAT([&] { r.add_node<PlainSeed>("x.so"); },
              ::testing::ThrowsMessage<Error>(HasSubstr("in place of its parameter 'seed'")));
  EXPECT_EQ(r.find_node("seed.unseeded"), nullptr);
  EXPECT_EQ(r.find_node("seed.plain"), nullptr);
  r.add_node<Deterministic>("x.so");
  EXPECT_FALSE(r.find_node("seed.none")->spec.info.stochastic);
}

std::string read(const fs::path& p) {
  std::ifstream in(p);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

TEST(SeedParam, ExecutorRecordsTheSeedInProvenance) {
  Registry reg;
  reg.add_node<Draw>("x.so");
  reg.add_node<Deterministic>("x.so");
  test::TempDir dir;
  const fs::path file = dir / "w.yaml";
  std::ofstream(file) << "gemflow: 1\nnodes:\n  a: {type: seed.draw, params: {seed: 42}}\n"
                         "  b: {type: seed.draw}\n  c: {type: seed.none}\n";
  const LoadResult loaded = load_workflow(file, reg);
  ASSERT_TRUE(loaded.ok()) << test::all(loaded.diagnostics);
  RunOptions o;
  o.out_dir = dir / "out";
  const RunResult r = run_workflow(*loaded.workflow, reg, o);
  ASSERT_TRUE(r.ok()) << test::all(r.diagnostics);
  const auto j = nlohmann::json::parse(read(r.provenance));
  EXPECT_EQ(j["nodes"]["a"]["seed"], 42);
  EXPECT_EQ(j["nodes"]["b"]["seed"], 7);  // the default, recorded too
  EXPECT_FALSE(j["nodes"]["c"].contains("seed"));
  EXPECT_TRUE(j["nodes"]["a"]["records"].empty());  // the node recorded nothing itself
}

TEST(SeedParam, WorkflowValidationRefusesANegativeSeed) {
  Registry reg;
  reg.add_node<Draw>("x.so");
  const LoadResult loaded =
      parse_workflow("gemflow: 1\nnodes:\n  a: {type: seed.draw, params: {seed: -1}}\n", "w.yaml", reg);
  EXPECT_FALSE(loaded.ok());
  ASSERT_FALSE(loaded.diagnostics.empty());
  EXPECT_THAT(loaded.diagnostics[0].str(), HasSubstr("-1 is below the minimum 0"));
}

}  // namespace
}  // namespace gemflow
