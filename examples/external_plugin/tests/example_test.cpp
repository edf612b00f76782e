// Tests of the example plugin: gemflow_add_plugin_test() in CMakeLists.txt builds them, and
// gemflow::testing::plugin_registry() loads the built plugin as gemflow does.
#include <gtest/gtest.h>

#include <gemflow/testing.hpp>
#include <gemflow/types.hpp>

#include "../histogram.hpp"

TEST(Scale, MultipliesEveryElement) {
  auto node = gemflow::testing::make_node(gemflow::testing::plugin_registry(), "example.scale");
  node->set_input("matrix", gemflow::Value::make(gemflow::MatrixF64(2, 3, 1.5)));
  node->set_param("factor", -2.0);
  gemflow::testing::RecordingContext ctx;
  EXPECT_EQ(gemflow::testing::error_of(*node, ctx), "(no error)");
  const auto out = node->output("scaled").as<gemflow::MatrixF64>();
  EXPECT_EQ((*out)(1, 2), -3.0);
  EXPECT_EQ(std::get<std::int64_t>(ctx.records().at("elements")), 6);
}

TEST(Clip, AnEmptyRangeIsAnErrorWithoutTheNodeId) {
  auto node = gemflow::testing::make_node(gemflow::testing::plugin_registry(), "example.clip");
  node->set_input("matrix", gemflow::Value::make(gemflow::MatrixF64(1, 1, 0.5)));
  node->set_param("low", 2.0);
  gemflow::testing::RecordingContext ctx;
  EXPECT_EQ(gemflow::testing::error_of(*node, ctx).rfind("parameter 'low' = 2", 0), 0u);
}

TEST(Histogram, CountsIntoEqualBins) {
  auto node = gemflow::testing::make_node(gemflow::testing::plugin_registry(), "example.histogram");
  node->set_input("matrix", gemflow::Value::make(gemflow::MatrixF64(1, 4, std::vector<double>{0.1, 0.2, 0.9, 1.0})));
  node->set_param("bins", std::int64_t{2});
  gemflow::testing::RecordingContext ctx;
  node->execute(ctx);
  const auto h = node->output("histogram").as<example::Histogram>();
  EXPECT_EQ(h->counts, (std::vector<std::size_t>{2, 2}));
  // an unsigned parameter refuses -1 before anything runs
  const auto* spec = gemflow::testing::plugin_registry().find_node("example.histogram");
  EXPECT_TRUE(spec->spec.param("bins")->check(std::int64_t{-1}).has_value());
}

TEST(Histogram, RoundTripsThroughItsDiskEncoding) {
  const example::Histogram h{-1.0, 3.0, {4, 0, 7}};
  gemflow::BinaryWriter w;
  gemflow::Serial<example::Histogram>::write(w, h);
  gemflow::BinaryReader r(w.bytes());
  const example::Histogram back = gemflow::Serial<example::Histogram>::read(r);
  EXPECT_EQ(back.low, -1.0);
  EXPECT_EQ(back.high, 3.0);
  EXPECT_EQ(back.counts, h.counts);
  // registered by the plugin with its encoding: the cache can store its nodes' results
  const auto* type = gemflow::testing::plugin_registry().find_type("example.Histogram");
  ASSERT_NE(type, nullptr);
  EXPECT_TRUE(type->save && type->load);
}
