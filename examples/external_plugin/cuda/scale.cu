// The CUDA snippet of docs/plugin-guide.md ("CUDA code"), compiled when a CUDA compiler is found:
// the SDK's header-only helpers in a plugin's own .cu file.
#include <cstddef>

#include <gemflow/cuda/buffer.hpp>
#include <gemflow/cuda/check.hpp>

namespace {
__global__ void scale_kernel(const double* x, double* y, std::size_t n, double a) {
  const std::size_t i = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x;
  if (i < n) y[i] = a * x[i];
}
unsigned blocks(std::size_t n) { return static_cast<unsigned>((n + 255) / 256); }
}  // namespace

void scale(double* x, std::size_t n, double a, gemflow::cuda::Stream s) {
  gemflow::cuda::DeviceBuffer<double> tmp(n, s);  // freed on s when the scope ends
  scale_kernel<<<blocks(n), 256, 0, s>>>(x, tmp.data(), n, a);
  GF_CUDA_CHECK_LAUNCH("scale_kernel");
  GF_CUDA_TRY(cudaMemcpyAsync(x, tmp.data(), tmp.size_bytes(), cudaMemcpyDeviceToDevice, s));
}
