// The SDK's CUDA helpers on a device (label gpu; skipped without one): DeviceBuffer in both modes,
// PinnedBuffer, Event, EventTimer / time_ms / median_ms, and the launch check.
#include <gtest/gtest.h>

#include <cstddef>
#include <numeric>
#include <string>
#include <utility>
#include <vector>

#include <gemflow/cuda/buffer.hpp>
#include <gemflow/cuda/check.hpp>
#include <gemflow/cuda/timing.hpp>

namespace {

using gemflow::cuda::CudaError;
using gemflow::cuda::DeviceBuffer;
using gemflow::cuda::PinnedBuffer;

__global__ void add_index_kernel(int* x, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) x[i] += i;
}

__global__ void spin_kernel(long long cycles) {
  const long long start = clock64();
  while (clock64() - start < cycles) {
  }
}

class CudaHelpersGpu : public ::testing::Test {
 protected:
  void SetUp() override {
    int n = 0;
    if (cudaGetDeviceCount(&n) != cudaSuccess || n == 0) {
      (void)cudaGetLastError();
      GTEST_SKIP() << "no CUDA device";
    }
    GF_CUDA_TRY(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking));
  }
  void TearDown() override {
    if (stream_) GF_CUDA_TRY_NO_THROW(cudaStreamDestroy(stream_));
  }
  cudaStream_t stream_ = nullptr;
};

TEST_F(CudaHelpersGpu, DeviceBufferRoundTrip) {
  const int n = 1000;
  DeviceBuffer<int> d(n);
  ASSERT_NE(d.data(), nullptr);
  EXPECT_EQ(d.size(), std::size_t(n));
  EXPECT_EQ(d.size_bytes(), sizeof(int) * n);
  std::vector<int> h(n, 7);
  GF_CUDA_TRY(cudaMemcpy(d.data(), h.data(), d.size_bytes(), cudaMemcpyHostToDevice));
  add_index_kernel<<<(n + 255) / 256, 256>>>(d.data(), n);
  GF_CUDA_CHECK_LAUNCH("add_index_kernel");
  GF_CUDA_TRY(cudaMemcpy(h.data(), d.data(), d.size_bytes(), cudaMemcpyDeviceToHost));
  for (int i = 0; i < n; ++i) ASSERT_EQ(h[i], 7 + i) << i;
}

TEST_F(CudaHelpersGpu, StreamOrderedBufferAllocatesUsesAndFreesOnItsStream) {
  const int n = 4096;
  PinnedBuffer<int> h(n);
  {
    DeviceBuffer<int> d(n, stream_);
    EXPECT_TRUE(d.stream_ordered());
    EXPECT_EQ(d.stream(), stream_);
    GF_CUDA_TRY(cudaMemsetAsync(d.data(), 0, d.size_bytes(), stream_));
    add_index_kernel<<<(n + 255) / 256, 256, 0, stream_>>>(d.data(), n);
    GF_CUDA_CHECK_LAUNCH();
    GF_CUDA_TRY(cudaMemcpyAsync(h.data(), d.data(), d.size_bytes(), cudaMemcpyDeviceToHost, stream_));
    d.allocate(10);  // the old allocation is freed in stream order, after the copy
    EXPECT_EQ(d.size(), 10u);
  }  // freed with cudaFreeAsync on stream_
  GF_CUDA_TRY(cudaStreamSynchronize(stream_));
  for (int i = 0; i < n; ++i) ASSERT_EQ(h[i], i) << i;
}

TEST_F(CudaHelpersGpu, MovesTransferOwnership) {
  DeviceBuffer<float> a(16);
  float* const p = a.data();
  DeviceBuffer<float> b(std::move(a));
  EXPECT_EQ(b.data(), p);
  EXPECT_EQ(b.size(), 16u);
  EXPECT_EQ(a.data(), nullptr);  // NOLINT(bugprone-use-after-move): the moved-from state is specified
  EXPECT_TRUE(a.empty());
  DeviceBuffer<float> c(4);
  c = std::move(b);  // frees c's own allocation
  EXPECT_EQ(c.data(), p);
  EXPECT_TRUE(b.empty());
  c.deallocate();
  EXPECT_TRUE(c.empty());
  PinnedBuffer<double> h(3);
  h[0] = 1.5;
  PinnedBuffer<double> g(std::move(h));
  EXPECT_EQ(g[0], 1.5);
  EXPECT_TRUE(h.empty());
}

TEST_F(CudaHelpersGpu, PinnedBufferIsHostMemoryForAsyncCopies) {
  const std::size_t n = 257;
  PinnedBuffer<double> src(n), dst(n);
  std::iota(src.begin(), src.end(), 0.25);
  cudaPointerAttributes attr{};
  GF_CUDA_TRY(cudaPointerGetAttributes(&attr, src.data()));
  EXPECT_EQ(attr.type, cudaMemoryTypeHost);
  DeviceBuffer<double> d(n, stream_);
  GF_CUDA_TRY(cudaMemcpyAsync(d.data(), src.data(), src.size_bytes(), cudaMemcpyHostToDevice, stream_));
  GF_CUDA_TRY(cudaMemcpyAsync(dst.data(), d.data(), d.size_bytes(), cudaMemcpyDeviceToHost, stream_));
  GF_CUDA_TRY(cudaStreamSynchronize(stream_));
  for (std::size_t i = 0; i < n; ++i) ASSERT_EQ(dst[i], src[i]) << i;
}

TEST_F(CudaHelpersGpu, LaunchCheckNamesTheKernel) {
  DeviceBuffer<int> d(1);
  add_index_kernel<<<1, 4096, 0, stream_>>>(d.data(), 1);  // more threads than a block may have
  try {
    GF_CUDA_CHECK_LAUNCH("add_index_kernel");
    FAIL() << "no exception";
  } catch (const CudaError& e) {
    EXPECT_EQ(e.call(), "launch of add_index_kernel");
    // The runtime's name for a too-large block differs by version (CUDA 13: cudaErrorInvalidValue).
    EXPECT_EQ(e.error().rfind("cudaError", 0), 0u) << e.what();
    EXPECT_EQ(e.error().find("cudaSuccess"), std::string::npos) << e.what();
  }
  add_index_kernel<<<1, 4096, 0, stream_>>>(d.data(), 1);
  try {
    GF_CUDA_CHECK_LAUNCH();
    FAIL() << "no exception";
  } catch (const CudaError& e) {
    EXPECT_EQ(e.call(), "kernel launch");
  }
  EXPECT_NO_THROW(GF_CUDA_CHECK_LAUNCH());  // cudaGetLastError cleared the (non-sticky) error
}

TEST_F(CudaHelpersGpu, EventTimerMeasuresDeviceTime) {
  int clock_khz = 0, device = 0;
  GF_CUDA_TRY(cudaGetDevice(&device));
  GF_CUDA_TRY(cudaDeviceGetAttribute(&clock_khz, cudaDevAttrClockRate, device));
  const long long cycles = 5LL * clock_khz;  // 5 ms at the nominal clock
  gemflow::cuda::EventTimer t;
  t.start(stream_);
  spin_kernel<<<1, 1, 0, stream_>>>(cycles);
  GF_CUDA_CHECK_LAUNCH("spin_kernel");
  const float ms = t.stop_ms(stream_);
  EXPECT_GT(ms, 1.0f);
  EXPECT_LT(ms, 1000.0f);
  const float empty = gemflow::cuda::time_ms(stream_, [] {});
  EXPECT_GE(empty, 0.0f);
  EXPECT_LT(empty, ms);
  const float again = gemflow::cuda::time_ms(stream_, [&] { spin_kernel<<<1, 1, 0, stream_>>>(cycles); });
  EXPECT_GT(again, 1.0f);
}

TEST_F(CudaHelpersGpu, MedianMsRunsWarmupsAndReps) {
  int prepared = 0, ran = 0, checked = 0;
  const float ms = gemflow::cuda::median_ms(
      stream_, 3, 2, [&] { ++prepared; }, [&] { ++ran; }, [&] { ++checked; });
  EXPECT_EQ(prepared, 5);
  EXPECT_EQ(ran, 5);
  EXPECT_EQ(checked, 3);
  EXPECT_GE(ms, 0.0f);
}

TEST_F(CudaHelpersGpu, EventOrdersStreams) {
  gemflow::cuda::Event e;
  ASSERT_NE(e.get(), nullptr);
  e.record(stream_);
  e.synchronize();
  EXPECT_EQ(cudaEventQuery(e.get()), cudaSuccess);
  gemflow::cuda::Event moved(std::move(e));
  EXPECT_EQ(e.get(), nullptr);
  EXPECT_NE(moved.get(), nullptr);
}

}  // namespace
