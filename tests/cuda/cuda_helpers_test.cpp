// The SDK's CUDA helpers without a GPU: CudaError's message and parts, the checked-call macros and
// their status overloads (cudaError_t, cublasStatus_t, cusolverStatus_t), the no-throw form, and
// buffers of size 0, which must call no CUDA function.
#include <gtest/gtest.h>

#include <cstddef>
#include <cstdint>
#include <limits>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <utility>

#include <gemflow/cuda/buffer.hpp>
#include <gemflow/cuda/check.hpp>
#include <gemflow/cuda/cublas.hpp>
#include <gemflow/cuda/cusolver.hpp>
#include <gemflow/cuda/error.hpp>
#include <gemflow/cuda/stream.hpp>

namespace {

using gemflow::cuda::CudaError;
using gemflow::cuda::DeviceBuffer;
using gemflow::cuda::PinnedBuffer;

bool ends_with(const std::string& s, const std::string& tail) {
  return s.size() >= tail.size() && s.compare(s.size() - tail.size(), tail.size(), tail) == 0;
}

static_assert(std::is_same_v<gemflow::cuda::Stream, cudaStream_t>);
static_assert(std::is_nothrow_copy_constructible_v<CudaError>, "an exception's copy must not throw");
static_assert(std::is_base_of_v<std::runtime_error, CudaError>);

TEST(CudaError, FailedCallMessageNamesFileLineCallAndError) {
  const CudaError e("cudaMalloc(&p, 8)", "cudaErrorMemoryAllocation (out of memory)", "dir/a.cu", 42);
  EXPECT_STREQ(e.what(), "dir/a.cu:42: cudaMalloc(&p, 8): cudaErrorMemoryAllocation (out of memory)");
  EXPECT_EQ(e.call(), "cudaMalloc(&p, 8)");
  EXPECT_EQ(e.error(), "cudaErrorMemoryAllocation (out of memory)");
  EXPECT_EQ(e.file(), "dir/a.cu");
  EXPECT_EQ(e.line(), 42);
  EXPECT_EQ(CudaError::format("c", "E", "f", 7), "f:7: c: E");
}

TEST(CudaError, PlainMessageHasNoParts) {
  const CudaError e("solve: needs 12 GiB, 3 GiB free");
  EXPECT_STREQ(e.what(), "solve: needs 12 GiB, 3 GiB free");
  EXPECT_EQ(e.call(), "");
  EXPECT_EQ(e.error(), "");
  EXPECT_EQ(e.file(), "");
  EXPECT_EQ(e.line(), 0);
}

TEST(CudaError, ContextPrefixesTheMessageAndKeepsTheParts) {
  const CudaError cause("cublasCreate(&h)", "CUBLAS_STATUS_NOT_INITIALIZED (cublasStatus_t 1)", "b.cu", 9);
  const CudaError e("GpuEmbedder", cause);
  EXPECT_EQ(std::string(e.what()), std::string("GpuEmbedder: ") + cause.what());
  EXPECT_EQ(e.call(), cause.call());
  EXPECT_EQ(e.line(), 9);
  const CudaError copy = e;  // shares the parts
  EXPECT_STREQ(copy.what(), e.what());
  EXPECT_EQ(copy.file(), "b.cu");
}

TEST(CudaTry, SuccessDoesNotThrow) {
  EXPECT_NO_THROW(GF_CUDA_TRY(cudaSuccess));
  EXPECT_NO_THROW(GF_CUBLAS_TRY(CUBLAS_STATUS_SUCCESS));
  EXPECT_NO_THROW(GF_CUSOLVER_TRY(CUSOLVER_STATUS_SUCCESS));
}

TEST(CudaTry, FailureThrowsWithCallTextFileLineAndErrorString) {
  int line = 0;
  try {
    line = __LINE__ + 1;
    GF_CUDA_TRY(cudaErrorInvalidValue);
    FAIL() << "no exception";
  } catch (const CudaError& e) {
    EXPECT_EQ(e.call(), "cudaErrorInvalidValue");
    EXPECT_EQ(e.error(), std::string("cudaErrorInvalidValue (") + cudaGetErrorString(cudaErrorInvalidValue) + ")");
    EXPECT_TRUE(ends_with(e.file(), "cuda_helpers_test.cpp")) << e.file();
    EXPECT_EQ(e.line(), line);
    EXPECT_EQ(std::string(e.what()), e.file() + ":" + std::to_string(line) + ": " + e.call() + ": " + e.error());
  }
}

TEST(CudaTry, StatusStringsOfTheRuntime) {
  EXPECT_EQ(gemflow::cuda::status_string(cudaErrorMemoryAllocation),
            std::string("cudaErrorMemoryAllocation (") + cudaGetErrorString(cudaErrorMemoryAllocation) + ")");
}

TEST(CudaTry, CublasStatusNamesAndCheck) {
  using gemflow::cuda::status_name;
  EXPECT_STREQ(status_name(CUBLAS_STATUS_ALLOC_FAILED), "CUBLAS_STATUS_ALLOC_FAILED");
  EXPECT_STREQ(status_name(CUBLAS_STATUS_NOT_SUPPORTED), "CUBLAS_STATUS_NOT_SUPPORTED");
  EXPECT_STREQ(status_name(static_cast<cublasStatus_t>(999)), "CUBLAS_STATUS_<unknown>");
  EXPECT_EQ(gemflow::cuda::status_string(CUBLAS_STATUS_EXECUTION_FAILED),
            "CUBLAS_STATUS_EXECUTION_FAILED (cublasStatus_t 13)");
  try {
    GF_CUBLAS_TRY(CUBLAS_STATUS_INVALID_VALUE);
    FAIL() << "no exception";
  } catch (const CudaError& e) {
    EXPECT_EQ(e.call(), "CUBLAS_STATUS_INVALID_VALUE");
    EXPECT_EQ(e.error(), "CUBLAS_STATUS_INVALID_VALUE (cublasStatus_t 7)");
  }
  // GF_CUDA_TRY dispatches on the status type too
  EXPECT_THROW(GF_CUDA_TRY(CUBLAS_STATUS_INTERNAL_ERROR), CudaError);
}

TEST(CudaTry, CusolverStatusNamesAndCheck) {
  using gemflow::cuda::status_name;
  EXPECT_STREQ(status_name(CUSOLVER_STATUS_INVALID_VALUE), "CUSOLVER_STATUS_INVALID_VALUE");
  EXPECT_STREQ(status_name(CUSOLVER_STATUS_INVALID_WORKSPACE), "CUSOLVER_STATUS_INVALID_WORKSPACE");
  EXPECT_STREQ(status_name(CUSOLVER_STATUS_IRS_OUT_OF_RANGE), "CUSOLVER_STATUS_<unknown>");
  try {
    GF_CUSOLVER_TRY(CUSOLVER_STATUS_EXECUTION_FAILED);
    FAIL() << "no exception";
  } catch (const CudaError& e) {
    EXPECT_EQ(e.error(), "CUSOLVER_STATUS_EXECUTION_FAILED (cusolverStatus_t 6)");
  }
}

TEST(CudaTryNoThrow, ReportsToStderrAndReturnsFalse) {
  static_assert(noexcept(GF_CUDA_TRY_NO_THROW(cudaErrorInvalidValue)));
  static_assert(noexcept(GF_CUDA_TRY_NO_THROW(CUBLAS_STATUS_ALLOC_FAILED)));
  static_assert(noexcept(GF_CUDA_TRY_NO_THROW(CUSOLVER_STATUS_ALLOC_FAILED)));
  EXPECT_TRUE(GF_CUDA_TRY_NO_THROW(cudaSuccess));
  testing::internal::CaptureStderr();
  const int line = __LINE__ + 1;
  const bool ok = GF_CUDA_TRY_NO_THROW(cudaErrorInvalidValue);
  const bool blas_ok = GF_CUDA_TRY_NO_THROW(CUBLAS_STATUS_ALLOC_FAILED);
  const std::string err = testing::internal::GetCapturedStderr();
  EXPECT_FALSE(ok);
  EXPECT_FALSE(blas_ok);
  EXPECT_NE(
      err.find("cuda_helpers_test.cpp:" + std::to_string(line) + ": cudaErrorInvalidValue: cudaErrorInvalidValue ("),
      std::string::npos)
      << err;
  EXPECT_NE(err.find("CUBLAS_STATUS_ALLOC_FAILED"), std::string::npos) << err;
  EXPECT_NE(err.find("ignored: no-throw context"), std::string::npos) << err;
}

TEST(Expects, ThrowsInvalidArgumentAndEvaluatesTheMessageOnlyOnFailure) {
  int built = 0;
  const auto message = [&] {
    ++built;
    return std::string("n must be positive");
  };
  EXPECT_NO_THROW(GF_EXPECTS(1 > 0, message()));
  EXPECT_EQ(built, 0);
  try {
    GF_EXPECTS(1 < 0, message());
    FAIL() << "no exception";
  } catch (const std::invalid_argument& e) {
    EXPECT_STREQ(e.what(), "n must be positive");
  }
  EXPECT_EQ(built, 1);
}

// On this machine there may be no device: size 0 must not reach the CUDA runtime (a call would fail
// with cudaErrorNoDevice, or with an invalid stream handle below on a machine with a GPU).
TEST(DeviceBuffer, SizeZeroNeedsNoDevice) {
  const auto bogus = reinterpret_cast<gemflow::cuda::Stream>(std::uintptr_t{0x10});
  DeviceBuffer<double> a(0);
  EXPECT_EQ(a.data(), nullptr);
  EXPECT_EQ(a.size(), 0u);
  EXPECT_EQ(a.size_bytes(), 0u);
  EXPECT_TRUE(a.empty());
  EXPECT_FALSE(a.stream_ordered());
  EXPECT_NO_THROW(a.allocate(0));
  EXPECT_NO_THROW(a.deallocate());
  a.reset();
  DeviceBuffer<int> ordered(0, bogus);
  EXPECT_TRUE(ordered.stream_ordered());
  EXPECT_EQ(ordered.stream(), bogus);
  EXPECT_EQ(ordered.data(), nullptr);
  DeviceBuffer<int> moved(std::move(ordered));
  EXPECT_TRUE(moved.stream_ordered());
  EXPECT_EQ(moved.stream(), bogus);
  DeviceBuffer<int> assigned;
  assigned = std::move(moved);
  EXPECT_TRUE(assigned.empty());
  EXPECT_EQ(assigned.stream(), bogus);
  PinnedBuffer<float> p(0);
  EXPECT_EQ(p.data(), nullptr);
  EXPECT_EQ(p.begin(), p.end());
  EXPECT_NO_THROW(p.allocate(0));
}

TEST(DeviceBuffer, ByteCountOverflowIsALengthErrorBeforeAnyCudaCall) {
  const std::size_t too_many = std::numeric_limits<std::size_t>::max() / sizeof(double) + 1;
  EXPECT_THROW(DeviceBuffer<double>{too_many}, std::length_error);
  EXPECT_THROW(PinnedBuffer<double>{too_many}, std::length_error);
  DeviceBuffer<double> b;
  EXPECT_THROW(b.allocate(too_many), std::length_error);
  EXPECT_TRUE(b.empty());
}

static_assert(!std::is_copy_constructible_v<DeviceBuffer<int>> && !std::is_copy_assignable_v<DeviceBuffer<int>>);
static_assert(std::is_nothrow_move_constructible_v<DeviceBuffer<int>> &&
              std::is_nothrow_move_assignable_v<DeviceBuffer<int>>);
static_assert(!std::is_copy_constructible_v<PinnedBuffer<int>>);
static_assert(std::is_nothrow_move_constructible_v<PinnedBuffer<int>>);

}  // namespace
