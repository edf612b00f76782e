// gemflow/testing.hpp: RecordingContext records what a node reports, cancels by each rule, and
// writes files like the executor (temporary file renamed; inputs never overwritten).
#include <gtest/gtest.h>

#include <atomic>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <stdexcept>
#include <string>

#include <gemflow/testing.hpp>

namespace {
namespace fs = std::filesystem;
using gemflow::testing::RecordingContext;

std::string slurp(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), {}};
}

class Counting final : public gemflow::Node {
 public:
  void execute(gemflow::NodeContext& ctx) override {
    for (int i = 1; i <= 10; ++i) {
      ctx.throw_if_cancelled();
      ctx.progress(i / 10.0, "step");
    }
    ctx.warn("careful");
    ctx.info("done");
    ctx.record("steps", std::int64_t{10});
  }
};

TEST(RecordingContext, RecordsProgressLogsAndRecords) {
  RecordingContext ctx;
  Counting node;
  EXPECT_EQ(gemflow::testing::error_of(node, ctx), "(no error)");
  EXPECT_EQ(ctx.progress_calls(), 10u);
  EXPECT_EQ(ctx.fractions().back(), 1.0);
  EXPECT_EQ(ctx.progress_messages()[3], "step");
  EXPECT_EQ(ctx.cancel_checks(), 10u);
  EXPECT_EQ(ctx.warnings(), std::vector<std::string>{"careful"});
  EXPECT_EQ(ctx.infos(), std::vector<std::string>{"done"});
  ASSERT_EQ(ctx.logs().size(), 2u);
  EXPECT_EQ(ctx.logs()[0].level, gemflow::LogLevel::Warning);
  EXPECT_EQ(std::get<std::int64_t>(ctx.records().at("steps")), 10);
  EXPECT_EQ(ctx.node_id(), "test_node");
  EXPECT_EQ(ctx.device_override(), "");
  ctx.set_node_id("n1").set_device_override("cuda:1");
  EXPECT_EQ(ctx.node_id(), "n1");
  EXPECT_EQ(ctx.device_override(), "cuda:1");
}

TEST(RecordingContext, CancelRules) {
  Counting node;
  RecordingContext after;
  after.cancel_after_progress(3);
  EXPECT_THROW(node.execute(after), gemflow::Cancelled);
  EXPECT_EQ(after.progress_calls(), 3u);
  EXPECT_EQ(after.cancel_checks(), 4u);

  std::atomic<bool> flag{false};
  RecordingContext on;
  on.cancel_on(flag);
  EXPECT_FALSE(on.cancelled());
  flag = true;
  EXPECT_TRUE(on.cancelled());

  int calls = 0;
  RecordingContext when;
  when.cancel_when([&] { return ++calls == 2; });
  EXPECT_FALSE(when.cancelled());
  EXPECT_TRUE(when.cancelled());
}

TEST(RecordingContext, WritesThroughATemporaryFileAndProtectsInputs) {
  fs::path dir;
  {
    RecordingContext ctx;
    dir = ctx.output_dir();
    ASSERT_TRUE(fs::is_directory(dir));
    EXPECT_TRUE(fs::is_empty(dir));
    fs::path seen;
    ctx.write_file("sub/a.txt", [&](const fs::path& tmp) {
      seen = tmp;
      std::ofstream(tmp) << "hello";
    });
    EXPECT_EQ(seen.parent_path(), dir / "sub");
    EXPECT_NE(seen.filename(), "a.txt");
    EXPECT_EQ(slurp(dir / "sub/a.txt"), "hello");
    ASSERT_EQ(ctx.written_files().size(), 1u);
    EXPECT_EQ(ctx.written_files()[0], dir / "sub/a.txt");

    // A failing writer leaves neither the target nor the temporary file.
    EXPECT_THROW(ctx.write_file("b.txt",
                                [](const fs::path& tmp) {
                                  std::ofstream(tmp) << "partial";
                                  throw std::runtime_error("disk full");
                                }),
                 std::runtime_error);
    EXPECT_FALSE(fs::exists(dir / "b.txt"));
    EXPECT_EQ(std::distance(fs::directory_iterator(dir), fs::directory_iterator()), 1);  // sub/

    ctx.add_input_file(dir / "sub/a.txt");
    ASSERT_EQ(ctx.input_files().size(), 1u);
    EXPECT_THROW(ctx.write_file(dir / "sub/a.txt", [](const fs::path& tmp) { std::ofstream(tmp) << "x"; }),
                 gemflow::InputError);
    EXPECT_EQ(slurp(dir / "sub/a.txt"), "hello");
  }
  EXPECT_FALSE(fs::exists(dir));  // the context's own folder is removed
}

}  // namespace
