#pragma once
// gemflow::cuda::Stream: the CUDA stream type, nameable from plain C++ (no CUDA header needed).
//
// Stream is exactly cudaStream_t (`struct CUstream_st*`; check.hpp asserts it), so a launcher
// header can take a stream without including cuda_runtime.h and a .cu file passes it on unchanged.
// nullptr is the legacy default stream. Every Gemflow launcher takes the stream explicitly (no
// default argument) and enqueues its work on it; a function that returns a result to the host
// says that it synchronises the stream.

struct CUstream_st;  // the CUDA runtime's opaque stream, declared as the runtime declares it

namespace gemflow::cuda {

/// A cudaStream_t. Not owning: the caller creates and destroys streams.
using Stream = CUstream_st*;

}  // namespace gemflow::cuda
