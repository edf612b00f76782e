#pragma once
// Median CUDA-event timing shared by the linalg benchmarks (cholesky_gpu.cpp, cholesky_timeline.cu).
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <vector>

namespace gemflow::linalg::bench {

/// Median milliseconds of `reps` runs of run() (work enqueued on s), timed with CUDA events around
/// it alone: prepare() is enqueued before the start event, after() runs on the host once each
/// timed run has finished (checks of its result); `warmup` untimed runs come first. Exits with a
/// message that names `label` (what run() does) on a CUDA error.
template <class Prepare, class Run, class After>
double median_event_ms(int reps, int warmup, cudaStream_t s, const Prepare& prepare, const Run& run,
                       const After& after, const char* label = "the timed run") {
  const auto ck = [label](cudaError_t e, const char* what) {
    if (e != cudaSuccess) {
      std::fprintf(stderr, "%s (timing %s): %s\n", what, label, cudaGetErrorString(e));
      std::exit(2);
    }
  };
  cudaEvent_t e0 = nullptr, e1 = nullptr;
  ck(cudaEventCreate(&e0), "event");
  ck(cudaEventCreate(&e1), "event");
  std::vector<float> ms;
  for (int r = -warmup; r < reps; ++r) {
    prepare();
    ck(cudaEventRecord(e0, s), "record");
    run();
    ck(cudaEventRecord(e1, s), "record");
    ck(cudaEventSynchronize(e1), "sync");
    float t = 0;
    ck(cudaEventElapsedTime(&t, e0, e1), "elapsed");
    if (r >= 0) {
      ms.push_back(t);
      after();
    }
  }
  (void)cudaEventDestroy(e0);
  (void)cudaEventDestroy(e1);
  std::sort(ms.begin(), ms.end());
  return static_cast<double>(ms[ms.size() / 2]);
}

}  // namespace gemflow::linalg::bench
