#pragma once
// NVTX ranges for profilers: the phases of a computation as named ranges on the host thread's
// timeline (Nsight Systems: `nsys profile --trace=cuda,nvtx PROGRAM`, which also projects each range
// onto the GPU rows of the kernels launched inside it). Header-only, plain C++.
//
// NVTX v3 (nvtx3/nvToolsExt.h, shipped with the CUDA toolkit) needs no library: its first call
// looks for a profiler's injection library (NVTX_INJECTION64_PATH, set by the profiler) and, when
// there is none, every later call is an empty function through a pointer (a few ns). So ranges may
// stay in production code paths, at host-side step granularity (not inside tight loops). Without
// the NVTX headers on the include path (a build without the CUDA toolkit) the ranges are empty.
//
// Ranges belong to the "gemflow" NVTX domain (nsys: `--nvtx-domain-include=gemflow`); names must be
// string literals or otherwise outlive the profiler's session (they are passed as pointers).
// Thread-safety: ranges nest per host thread; a range must end on the thread that began it.
#include <cstdint>

#if __has_include(<nvtx3/nvToolsExt.h>)
#include <nvtx3/nvToolsExt.h>
#define GEMFLOW_HAVE_NVTX 1
#else
#define GEMFLOW_HAVE_NVTX 0
#endif

namespace gemflow::cuda {

#if GEMFLOW_HAVE_NVTX
/// The "gemflow" NVTX domain (created on first use).
inline nvtxDomainHandle_t nvtx_domain() noexcept {
  static const nvtxDomainHandle_t domain = nvtxDomainCreateA("gemflow");
  return domain;
}
#endif

/// A scoped NVTX range: begins at construction, ends at destruction. The payload (e.g. the first
/// column of a panel) is shown beside the name. Never throws; not copyable or movable.
class NvtxRange {
 public:
  explicit NvtxRange(const char* name) noexcept { push(name, nullptr); }
  NvtxRange(const char* name, std::int64_t payload) noexcept { push(name, &payload); }
  ~NvtxRange() {
#if GEMFLOW_HAVE_NVTX
    nvtxDomainRangePop(nvtx_domain());
#endif
  }
  NvtxRange(const NvtxRange&) = delete;
  NvtxRange& operator=(const NvtxRange&) = delete;

 private:
  static void push([[maybe_unused]] const char* name, [[maybe_unused]] const std::int64_t* payload) noexcept {
#if GEMFLOW_HAVE_NVTX
    nvtxEventAttributes_t attr{};
    attr.version = NVTX_VERSION;
    attr.size = NVTX_EVENT_ATTRIB_STRUCT_SIZE;
    attr.messageType = NVTX_MESSAGE_TYPE_ASCII;
    attr.message.ascii = name;
    if (payload) {
      attr.payloadType = NVTX_PAYLOAD_TYPE_INT64;
      attr.payload.llValue = *payload;
    }
    nvtxDomainRangePushEx(nvtx_domain(), &attr);
#endif
  }
};

}  // namespace gemflow::cuda
