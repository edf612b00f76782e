#pragma once
// Owning, move-only buffers of device memory and of page-locked (pinned) host memory. Needs the
// CUDA runtime headers (include from .cu files or from .cpp files of targets that link
// CUDA::cudart).
//
// Contract of both buffers:
//  - The elements are uninitialised (T must be trivially copyable: no constructor runs).
//  - Size 0 allocates nothing and calls no CUDA function: data() is nullptr, no device is needed.
//  - Allocation failures throw CudaError (check.hpp) and leave the buffer empty; a size whose
//    byte count overflows std::size_t throws std::length_error.
//  - The destructor and reset() never throw: a failed free is printed to stderr.
//  - deallocate() and allocate() free with a checked call (CudaError) and leave the buffer empty
//    before they allocate again: an allocation of the new size never coexists with the old one.
//  - Thread-safety: as for a std::vector — distinct buffers may be used from different threads,
//    one buffer not concurrently.
#include <cuda_runtime.h>

#include <cstddef>
#include <limits>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <utility>

#include <gemflow/cuda/check.hpp>
#include <gemflow/cuda/stream.hpp>

namespace gemflow::cuda {

namespace detail {
template <class T>
std::size_t checked_bytes(std::size_t size, const char* what) {
  if (size > std::numeric_limits<std::size_t>::max() / sizeof(T))
    throw std::length_error(std::string(what) + ": " + std::to_string(size) + " elements of " +
                            std::to_string(sizeof(T)) + " bytes exceed the address space");
  return size * sizeof(T);
}
}  // namespace detail

/// `size()` elements of T in device memory, on the device current when they were allocated.
///
/// Two modes, fixed at construction:
///  - synchronous (DeviceBuffer(size)): cudaMalloc / cudaFree. cudaFree waits for the device, so
///    freeing is safe whatever work still uses the memory.
///  - stream-ordered (DeviceBuffer(size, stream)): cudaMallocAsync / cudaFreeAsync on `stream`.
///    The memory may be used by work enqueued on `stream` after the allocation (other streams
///    must synchronise with it first), and is freed in the stream's order: work enqueued on
///    `stream` before the free completes first, work on other streams must be ordered before it
///    by the caller. `stream` must still exist when the buffer frees (destructor included).
template <class T>
class DeviceBuffer {
  static_assert(std::is_trivially_copyable_v<T>, "DeviceBuffer<T>: T must be trivially copyable");

 public:
  using value_type = T;

  /// Empty, synchronous mode.
  DeviceBuffer() noexcept = default;
  /// `size` uninitialised elements (cudaMalloc). Throws CudaError.
  explicit DeviceBuffer(std::size_t size) { allocate(size); }
  /// `size` uninitialised elements, stream-ordered on `stream` (cudaMallocAsync). Throws CudaError.
  DeviceBuffer(std::size_t size, Stream stream) : stream_(stream), stream_ordered_(true) { allocate(size); }

  ~DeviceBuffer() { reset(); }
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
  /// Takes `other`'s allocation and mode; `other` is left empty (same mode).
  DeviceBuffer(DeviceBuffer&& other) noexcept
      : data_(std::exchange(other.data_, nullptr)),
        size_(std::exchange(other.size_, 0)),
        stream_(other.stream_),
        stream_ordered_(other.stream_ordered_) {}
  /// Frees this buffer's allocation (as reset()), then takes `other`'s.
  DeviceBuffer& operator=(DeviceBuffer&& other) noexcept {
    if (this != &other) {
      reset();
      data_ = std::exchange(other.data_, nullptr);
      size_ = std::exchange(other.size_, 0);
      stream_ = other.stream_;
      stream_ordered_ = other.stream_ordered_;
    }
    return *this;
  }

  [[nodiscard]] T* data() noexcept { return data_; }
  [[nodiscard]] const T* data() const noexcept { return data_; }
  [[nodiscard]] std::size_t size() const noexcept { return size_; }
  [[nodiscard]] std::size_t size_bytes() const noexcept { return size_ * sizeof(T); }
  [[nodiscard]] bool empty() const noexcept { return size_ == 0; }
  /// Whether the buffer allocates and frees in the order of stream().
  [[nodiscard]] bool stream_ordered() const noexcept { return stream_ordered_; }
  /// The stream of a stream-ordered buffer (nullptr in synchronous mode).
  [[nodiscard]] Stream stream() const noexcept { return stream_; }

  /// Replaces the allocation by `size` uninitialised elements (contents are not kept): frees as
  /// deallocate(), then allocates in the buffer's mode. Throws CudaError (buffer then empty).
  void allocate(std::size_t size) {
    deallocate();
    if (size == 0) return;
    const std::size_t bytes = detail::checked_bytes<T>(size, "DeviceBuffer");
    void* p = nullptr;
    if (stream_ordered_) GF_CUDA_TRY(cudaMallocAsync(&p, bytes, stream_));
    else GF_CUDA_TRY(cudaMalloc(&p, bytes));
    data_ = static_cast<T*>(p);
    size_ = size;
  }

  /// Frees now, checked: throws CudaError when the free fails (the buffer is empty either way).
  void deallocate() {
    if (!data_) return;
    void* p = std::exchange(data_, nullptr);
    size_ = 0;
    if (stream_ordered_) GF_CUDA_TRY(cudaFreeAsync(p, stream_));
    else GF_CUDA_TRY(cudaFree(p));
  }

  /// Frees without throwing (a failure is printed to stderr); the buffer is then empty.
  void reset() noexcept {
    if (!data_) return;
    void* p = std::exchange(data_, nullptr);
    size_ = 0;
    if (stream_ordered_) GF_CUDA_TRY_NO_THROW(cudaFreeAsync(p, stream_));
    else GF_CUDA_TRY_NO_THROW(cudaFree(p));
  }

 private:
  T* data_ = nullptr;
  std::size_t size_ = 0;
  Stream stream_ = nullptr;
  bool stream_ordered_ = false;
};

/// `size()` elements of T in page-locked host memory (cudaMallocHost / cudaFreeHost): the host
/// side of asynchronous copies. Host-accessible: data(), operator[], begin()/end(). cudaFreeHost
/// waits for the device, so freeing is safe while copies are in flight.
template <class T>
class PinnedBuffer {
  static_assert(std::is_trivially_copyable_v<T>, "PinnedBuffer<T>: T must be trivially copyable");

 public:
  using value_type = T;

  PinnedBuffer() noexcept = default;
  /// `size` uninitialised elements. Throws CudaError.
  explicit PinnedBuffer(std::size_t size) { allocate(size); }
  ~PinnedBuffer() { reset(); }
  PinnedBuffer(const PinnedBuffer&) = delete;
  PinnedBuffer& operator=(const PinnedBuffer&) = delete;
  PinnedBuffer(PinnedBuffer&& other) noexcept
      : data_(std::exchange(other.data_, nullptr)), size_(std::exchange(other.size_, 0)) {}
  PinnedBuffer& operator=(PinnedBuffer&& other) noexcept {
    if (this != &other) {
      reset();
      data_ = std::exchange(other.data_, nullptr);
      size_ = std::exchange(other.size_, 0);
    }
    return *this;
  }

  [[nodiscard]] T* data() noexcept { return data_; }
  [[nodiscard]] const T* data() const noexcept { return data_; }
  [[nodiscard]] std::size_t size() const noexcept { return size_; }
  [[nodiscard]] std::size_t size_bytes() const noexcept { return size_ * sizeof(T); }
  [[nodiscard]] bool empty() const noexcept { return size_ == 0; }
  T& operator[](std::size_t i) noexcept { return data_[i]; }
  const T& operator[](std::size_t i) const noexcept { return data_[i]; }
  T* begin() noexcept { return data_; }
  T* end() noexcept { return data_ + size_; }
  const T* begin() const noexcept { return data_; }
  const T* end() const noexcept { return data_ + size_; }

  /// Replaces the allocation by `size` uninitialised elements (frees first, as deallocate()).
  /// Throws CudaError (buffer then empty).
  void allocate(std::size_t size) {
    deallocate();
    if (size == 0) return;
    const std::size_t bytes = detail::checked_bytes<T>(size, "PinnedBuffer");
    void* p = nullptr;
    GF_CUDA_TRY(cudaMallocHost(&p, bytes));
    data_ = static_cast<T*>(p);
    size_ = size;
  }

  /// Frees now, checked: throws CudaError when the free fails (the buffer is empty either way).
  void deallocate() {
    if (!data_) return;
    void* p = std::exchange(data_, nullptr);
    size_ = 0;
    GF_CUDA_TRY(cudaFreeHost(p));
  }

  /// Frees without throwing (a failure is printed to stderr); the buffer is then empty.
  void reset() noexcept {
    if (!data_) return;
    void* p = std::exchange(data_, nullptr);
    size_ = 0;
    GF_CUDA_TRY_NO_THROW(cudaFreeHost(p));
  }

 private:
  T* data_ = nullptr;
  std::size_t size_ = 0;
};

}  // namespace gemflow::cuda
