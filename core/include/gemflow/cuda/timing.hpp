#pragma once
// CUDA events: an owning Event, and event timing for benchmarks (EventTimer, time_ms). Needs the
// CUDA runtime headers.
//
// Timing measures device time between two events recorded on one stream: what the GPU spent on the
// work enqueued between them on that stream (and anything the stream waited for), not host time.
// Reading a time blocks the calling host thread until the stop event has completed.
// Thread-safety: distinct objects may be used from different threads, one object not concurrently.
#include <cuda_runtime.h>

#include <algorithm>
#include <utility>
#include <vector>

#include <gemflow/cuda/check.hpp>
#include <gemflow/cuda/stream.hpp>

namespace gemflow::cuda {

/// An owning cudaEvent_t, created on the current device. Move-only; the destructor never throws.
class Event {
 public:
  /// cudaEventCreateWithFlags(flags): the default has no timing (cheaper; for ordering streams).
  /// Throws CudaError.
  explicit Event(unsigned flags = cudaEventDisableTiming) { GF_CUDA_TRY(cudaEventCreateWithFlags(&event_, flags)); }
  ~Event() {
    if (event_) GF_CUDA_TRY_NO_THROW(cudaEventDestroy(event_));
  }
  Event(const Event&) = delete;
  Event& operator=(const Event&) = delete;
  Event(Event&& other) noexcept : event_(std::exchange(other.event_, nullptr)) {}
  Event& operator=(Event&& other) noexcept {
    if (this != &other) {
      if (event_) GF_CUDA_TRY_NO_THROW(cudaEventDestroy(event_));
      event_ = std::exchange(other.event_, nullptr);
    }
    return *this;
  }
  [[nodiscard]] cudaEvent_t get() const noexcept { return event_; }
  /// cudaEventRecord on `stream`. Throws CudaError.
  void record(Stream stream) { GF_CUDA_TRY(cudaEventRecord(event_, stream)); }
  /// Blocks the host until the recorded work has completed. Throws CudaError.
  void synchronize() { GF_CUDA_TRY(cudaEventSynchronize(event_)); }

 private:
  cudaEvent_t event_ = nullptr;
};

/// Two timing events: start(stream) … stop_ms(stream) gives the device milliseconds between them.
/// Reusable: each start() begins a new interval. Throws CudaError on every CUDA failure.
class EventTimer {
 public:
  EventTimer() : start_(cudaEventDefault), stop_(cudaEventDefault) {}
  /// Records the start event on `stream`.
  void start(Stream stream) { start_.record(stream); }
  /// Records the stop event on `stream` (the stream of start()), waits for it, and returns the
  /// milliseconds between the two events (cudaEventElapsedTime: about 0.5 µs resolution).
  float stop_ms(Stream stream) {
    stop_.record(stream);
    stop_.synchronize();
    float ms = 0.0f;
    GF_CUDA_TRY(cudaEventElapsedTime(&ms, start_.get(), stop_.get()));
    return ms;
  }

 private:
  Event start_, stop_;
};

/// Device milliseconds of the work that `enqueue()` puts on `stream` (it must enqueue on that
/// stream; host time it spends is not counted unless the stream waits for it). Creates two events
/// per call and blocks until the work has completed. Throws CudaError; exceptions of enqueue() pass.
template <class Enqueue>
float time_ms(Stream stream, Enqueue&& enqueue) {
  EventTimer timer;
  timer.start(stream);
  std::forward<Enqueue>(enqueue)();
  return timer.stop_ms(stream);
}

/// Median device milliseconds of `reps` ≥ 1 timed runs of run() on `stream`, after `warmup`
/// untimed runs. prepare() is called (and may enqueue work) before each start event, so it is not
/// timed; after() is called on the host once each timed run has completed (checks of its result).
/// For an even count the upper median. Throws CudaError; exceptions of the callables pass.
template <class Prepare, class Run, class After>
float median_ms(Stream stream, int reps, int warmup, Prepare&& prepare, Run&& run, After&& after) {
  EventTimer timer;
  std::vector<float> ms;
  ms.reserve(static_cast<std::size_t>(std::max(reps, 1)));
  for (int r = -warmup; r < reps; ++r) {
    prepare();
    timer.start(stream);
    run();
    const float t = timer.stop_ms(stream);
    if (r >= 0) {
      ms.push_back(t);
      after();
    }
  }
  std::sort(ms.begin(), ms.end());
  return ms.empty() ? 0.0f : ms[ms.size() / 2];
}

}  // namespace gemflow::cuda
