// Host memory checks (gemflow/memory.hpp) and the Matrix allocations that use them.
#include <gemflow/memory.hpp>
#include <gemflow/types/matrix.hpp>

#include <gtest/gtest.h>

#include <cstdint>
#include <cstdlib>
#include <limits>
#include <string>
#include <utility>
#include <vector>

namespace {

using gemflow::Matrix;
using gemflow::OutOfMemory;

TEST(HostMemory, AvailableIsKnownOnLinux) {
  const auto avail = gemflow::available_host_memory();
  ASSERT_TRUE(avail.has_value());
  EXPECT_GT(*avail, std::size_t{16} << 20);  // the test process itself is running
}

TEST(HostMemory, RequireNamesWhatAndHowMuch) {
  EXPECT_NO_THROW(gemflow::require_host_memory(1024, "a small buffer"));
  try {
    gemflow::require_host_memory(std::size_t{1} << 62, "the test's request");
    FAIL() << "4 EiB were granted";
  } catch (const OutOfMemory& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("the test's request needs 4294967296.00 GiB of memory, "), std::string::npos) << what;
    EXPECT_NE(what.find(" GiB available"), std::string::npos) << what;
  }
}

// QA: "needs 1.07 GiB of memory, 1.07 GiB available": sizes that round alike get more digits.
TEST(HostMemory, ShortfallShowsDifferentSizesDifferently) {
  const std::size_t gib = std::size_t{1} << 30;
  EXPECT_EQ(gemflow::memory_shortfall(3 * gib, gib), "needs 3.00 GiB of memory, 1.00 GiB available");
  EXPECT_EQ(gemflow::memory_shortfall(gib + (std::size_t{72} << 20), gib + (std::size_t{70} << 20)),
            "needs 1096.0 MiB of memory, 1094.0 MiB available");  // both 1.07 GiB
  EXPECT_EQ(gemflow::memory_shortfall(gib + 1000, gib + 10),
            "needs 1073742824 bytes of memory, 1073741834 bytes available");
}

// QA: a 45000×45000 matrix passed the reader and the solver's copy got the process killed by the
// kernel (Linux overcommits); a Matrix that cannot fit now throws before it is filled.
TEST(HostMemory, MatrixTooLargeForTheMachineThrowsNamingItsShape) {
  const std::size_t n = std::size_t{1} << 20;  // 8 TiB of doubles
  try {
    Matrix<double> m(n, n);
    FAIL() << "an 8 TiB matrix was allocated";
  } catch (const OutOfMemory& e) {
    EXPECT_NE(std::string(e.what()).find("a 1048576×1048576 matrix needs 8192.00 GiB of memory"), std::string::npos)
        << e.what();
  }
  const Matrix<double> small(3, 2, 1.5);
  Matrix<double> copy = small;  // copies are checked too, and still copy
  EXPECT_EQ(copy.rows(), 3u);
  EXPECT_EQ(copy(2, 1), 1.5);
  Matrix<double> assigned(1, 1);
  assigned = small;
  EXPECT_EQ(assigned.cols(), 2u);
  EXPECT_EQ(assigned(0, 0), 1.5);
}

TEST(HostMemory, MatrixShapeThatOverflowsIsRefusedNotWrapped) {
  const std::size_t huge = std::numeric_limits<std::size_t>::max() / 4;
  EXPECT_THROW((Matrix<double>(huge, 3)), OutOfMemory);
  EXPECT_THROW((Matrix<double>(huge, 3, std::vector<double>(3))), std::invalid_argument);
}

}  // namespace

// OpenBLAS threads under an address-space limit (QA: `ulimit -v 1200000` hung gemflow)
TEST(HostMemory, BlasThreadsFitTheAddressLimit) {
  constexpr std::size_t kGiB = std::size_t{1} << 30;
  EXPECT_EQ(gemflow::blas_threads_for_address_limit(std::size_t{1200000} * 1024, 2), 1);
  EXPECT_EQ(gemflow::blas_threads_for_address_limit(0, 8), 1);
  EXPECT_EQ(gemflow::blas_threads_for_address_limit(4 * kGiB, 64), 13);  // (4 − 1.5) GiB / 192 MiB
  EXPECT_EQ(gemflow::blas_threads_for_address_limit(64 * kGiB, 16), 16);
  EXPECT_EQ(gemflow::blas_threads_for_address_limit(64 * kGiB, 0), 1);
}

// GEMFLOW_MEMORY_LIMIT caps what allocations may take (fuzzing: a 60-byte Matrix Market header
// "20000 20000 0" asked for 3.2 GB; under the harness's 1G limit it is refused at once).
TEST(HostMemory, ConfiguredLimitCapsTheAvailableMemory) {
  struct Restore {
    ~Restore() { ::unsetenv("GEMFLOW_MEMORY_LIMIT"); }
  } restore;
  constexpr std::size_t kMiB = std::size_t{1} << 20;
  for (const auto& [text, bytes] : std::vector<std::pair<const char*, std::size_t>>{{"3M", 3 * kMiB},
                                                                                    {"3MiB", 3 * kMiB},
                                                                                    {"3MB", 3 * kMiB},
                                                                                    {"1.5k", 1536},
                                                                                    {"4096", 4096},
                                                                                    {"2G", 2048 * kMiB}}) {
    ::setenv("GEMFLOW_MEMORY_LIMIT", text, 1);
    const auto avail = gemflow::available_host_memory();
    ASSERT_TRUE(avail.has_value()) << text;
    EXPECT_LE(*avail, bytes) << text;
  }
  ::setenv("GEMFLOW_MEMORY_LIMIT", "1M", 1);
  EXPECT_THROW(gemflow::require_host_memory(2 * kMiB, "a test"), gemflow::OutOfMemory);
  EXPECT_THROW((gemflow::Matrix<double>(8192, 8192)), gemflow::OutOfMemory);  // 512 MiB
  for (const char* ignored : {"", "lots", "-1G", "1X"}) {                     // malformed: no cap, not an error
    ::setenv("GEMFLOW_MEMORY_LIMIT", ignored, 1);
    EXPECT_NO_THROW(gemflow::require_host_memory(2 * kMiB, "a test")) << ignored;
  }
}
