// Which progress lines plain output (a pipe, a log) prints: 10 % steps at most once a second, and
// a heartbeat with what changed after 10 s without a line (cli/progress_throttle.hpp).
#include <gtest/gtest.h>

#include "progress_throttle.hpp"

namespace gemflow::cli {
namespace {

TEST(PlainProgressThrottle, PrintsTenPercentStepsAtMostOnceASecond) {
  PlainProgressThrottle th;
  EXPECT_EQ(th.report(0.0, "n", 0.0, ""), "n: 0%");
  EXPECT_EQ(th.report(0.5, "n", 0.15, "a"), std::nullopt);  // a new step, but within a second
  EXPECT_EQ(th.report(1.5, "n", 0.18, "a"), "n: 18% a");
  EXPECT_EQ(th.report(3.0, "n", 0.19, "b"), std::nullopt);  // same step, a new message, 1.5 s
  EXPECT_EQ(th.report(4.0, "n", 1.7, ""), "n: 100%");       // clamped
}

// A node that advances slowly (or reports coarse steps) is not silent: a changed message or
// percent is printed once 10 s passed without a line; an unchanged line is not repeated.
TEST(PlainProgressThrottle, HeartbeatAfterTenSilentSecondsWhenTheLineChanged) {
  PlainProgressThrottle th;
  ASSERT_EQ(th.report(0.0, "pack", 0.41, "iteration 100, error 1e-3"), "pack: 41% iteration 100, error 1e-3");
  EXPECT_EQ(th.report(5.0, "pack", 0.41, "iteration 200, error 1e-4"), std::nullopt);
  EXPECT_EQ(th.report(9.9, "pack", 0.42, "iteration 300, error 1e-5"), std::nullopt);
  EXPECT_EQ(th.report(10.0, "pack", 0.42, "iteration 300, error 1e-5"), "pack: 42% iteration 300, error 1e-5");
  // the same line again, 20 s later: nothing new to say
  EXPECT_EQ(th.report(30.0, "pack", 0.42, "iteration 300, error 1e-5"), std::nullopt);
  // only the message changed, 21 s after the last line
  EXPECT_EQ(th.report(31.0, "pack", 0.42, "iteration 400, error 1e-6"), "pack: 42% iteration 400, error 1e-6");
  EXPECT_EQ(th.report(35.0, "pack", 0.43, "iteration 500"), std::nullopt);  // 4 s: too soon again
}

}  // namespace
}  // namespace gemflow::cli
