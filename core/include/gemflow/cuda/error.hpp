#pragma once
// The error type of Gemflow's CUDA code, and a precondition check (plain C++: no CUDA header, so
// launcher headers, node adapters and CPU-only builds can name and catch it). The checks that
// raise it are in check.hpp (CUDA runtime), cublas.hpp and cusolver.hpp (after RAFT's
// core/error.hpp and cuda_rt_essentials.hpp).
//
//   GF_EXPECTS(cond, message)   a precondition: throws std::invalid_argument(message) when false
#include <memory>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>

namespace gemflow::cuda {

/// A failed CUDA runtime, cuBLAS or cuSOLVER call, a failed kernel launch, or a CUDA resource that
/// could not be had (too little device memory, a driver without an entry point).
///
/// A failed call (GF_CUDA_TRY and friends) carries its parts: what() is
///   "<file>:<line>: <call text>: <error name> (<error description>)"
/// (file as __FILE__ gives it), e.g.
///   ".../smoothing_cuda.cu:120: cudaMalloc(&p, bytes): cudaErrorMemoryAllocation (out of memory)".
/// Other errors carry a plain message (call() and error() empty, line() 0).
/// Copies share the parts: copying never throws, as an exception's copy must not.
class CudaError : public std::runtime_error {
 public:
  /// A plain message (too little memory, a missing driver function, a non-finite pivot…).
  explicit CudaError(const std::string& message) : std::runtime_error(message) {}

  /// A failed call: `call` is its source text, `error` the status string (see status_string()).
  CudaError(std::string call, std::string error, std::string file, int line)
      : std::runtime_error(format(call, error, file, line)),
        site_(std::make_shared<const Site>(Site{std::move(call), std::move(error), std::move(file), line})) {}

  /// `cause` seen from a caller: what() is "<context>: <cause.what()>"; the parts are cause's.
  CudaError(std::string_view context, const CudaError& cause)
      : std::runtime_error(std::string(context) + ": " + cause.what()), site_(cause.site_) {}

  /// Source text of the failed call ("" for a plain message).
  [[nodiscard]] const std::string& call() const noexcept { return site_ ? site_->call : empty(); }
  /// Status of the failed call: its name and description ("" for a plain message).
  [[nodiscard]] const std::string& error() const noexcept { return site_ ? site_->error : empty(); }
  /// Source file of the failed call ("" for a plain message).
  [[nodiscard]] const std::string& file() const noexcept { return site_ ? site_->file : empty(); }
  /// Source line of the failed call (0 for a plain message).
  [[nodiscard]] int line() const noexcept { return site_ ? site_->line : 0; }

  /// The what() of a failed call: "<file>:<line>: <call>: <error>".
  [[nodiscard]] static std::string format(std::string_view call, std::string_view error, std::string_view file,
                                          int line) {
    std::string s;
    s.reserve(file.size() + call.size() + error.size() + 16);
    s.append(file).append(":").append(std::to_string(line)).append(": ");
    s.append(call).append(": ").append(error);
    return s;
  }

 private:
  struct Site {
    std::string call, error, file;
    int line = 0;
  };
  static const std::string& empty() noexcept {
    static const std::string none;
    return none;
  }
  std::shared_ptr<const Site> site_;
};

}  // namespace gemflow::cuda

/// Precondition of a CUDA entry point: throws std::invalid_argument(message) when `cond` is false.
/// `message` is evaluated only then.
#define GF_EXPECTS(cond, message)                        \
  do {                                                   \
    if (!(cond)) throw ::std::invalid_argument(message); \
  } while (0)
