#pragma once
// GPU-scope flags between the CTAs of one persistent launch (the tiled Cholesky; the triangular
// solves publish tagged values instead, trsv_kernels.cuh): a producer stores its results, passes
// a barrier, and one thread publishes with a release store; a consumer thread acquires the flag,
// then its CTA passes a barrier and reads the results through L2 (ld.global.cg / cp.async.cg),
// never from a stale L1 line. PTX ISA, memory consistency model: release/acquire patterns at .gpu
// scope, barriers at CTA scope, causality order transitive.
#include <cuda_runtime.h>

namespace gemflow::linalg::cuda::detail {

__device__ __forceinline__ unsigned ld_acquire(const unsigned* p) {
  unsigned v;
  asm volatile("ld.acquire.gpu.global.u32 %0, [%1];" : "=r"(v) : "l"(p) : "memory");
  return v;
}
__device__ __forceinline__ int ld_acquire(const int* p) {
  return static_cast<int>(ld_acquire(reinterpret_cast<const unsigned*>(p)));
}
/// A relaxed GPU-scope load (from L2, no ordering): a hint that may be one update stale.
__device__ __forceinline__ int ld_relaxed(const int* p) {
  int v;
  asm volatile("ld.relaxed.gpu.global.s32 %0, [%1];" : "=r"(v) : "l"(p) : "memory");
  return v;
}
__device__ __forceinline__ void st_release(unsigned* p, unsigned v) {
  asm volatile("st.release.gpu.global.u32 [%0], %1;" ::"l"(p), "r"(v) : "memory");
}
__device__ __forceinline__ void st_release(int* p, int v) {
  st_release(reinterpret_cast<unsigned*>(p), static_cast<unsigned>(v));
}

/// Asynchronous copies global → shared (sm_80+): src_bytes < size zero-fills the rest (0: no
/// read). 16 bytes by .cg (L2 only: other CTAs' results are never read from a stale L1 line);
/// 4 bytes by .ca (the only mode for that size: for data no CTA of the launch writes).
__device__ __forceinline__ void cp_async16(void* dst, const void* src, int src_bytes) {
  const unsigned d = static_cast<unsigned>(__cvta_generic_to_shared(dst));
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;" ::"r"(d), "l"(src), "r"(src_bytes) : "memory");
}
__device__ __forceinline__ void cp_async4(void* dst, const void* src, int src_bytes) {
  const unsigned d = static_cast<unsigned>(__cvta_generic_to_shared(dst));
  asm volatile("cp.async.ca.shared.global [%0], [%1], 4, %2;" ::"r"(d), "l"(src), "r"(src_bytes) : "memory");
}
__device__ __forceinline__ void cp_async_commit() { asm volatile("cp.async.commit_group;" ::: "memory"); }
template <int N>
__device__ __forceinline__ void cp_async_wait() {
  asm volatile("cp.async.wait_group %0;" ::"n"(N) : "memory");
}

/// mbarriers in shared memory (PTX ISA, "Parallel synchronization and communication
/// instructions: mbarrier"): a phase completes when `count` arrivals and the expected transaction
/// bytes (complete_tx of bulk copies) have both come in; waiters name the phase by its parity.
/// These and the tensor copies are sm_90 instructions: built for an older target they trap (the
/// host runs the tiled kernel's tensor-copy pipeline only on devices of compute capability 9.0+).
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ < 900
#define GF_SM90_ASM(...) __trap()
#else
#define GF_SM90_ASM(...) asm volatile(__VA_ARGS__)
#endif
__device__ __forceinline__ unsigned smem_addr(const void* p) {
  return static_cast<unsigned>(__cvta_generic_to_shared(p));
}
__device__ __forceinline__ void mbar_init(unsigned long long* b, unsigned count) {
  GF_SM90_ASM("mbarrier.init.shared::cta.b64 [%0], %1;" ::"r"(smem_addr(b)), "r"(count) : "memory");
}
/// One arrival that also expects `bytes` of transactions in the current phase.
__device__ __forceinline__ void mbar_arrive_expect(unsigned long long* b, unsigned bytes) {
  GF_SM90_ASM("mbarrier.arrive.expect_tx.release.cta.shared::cta.b64 _, [%0], %1;" ::"r"(smem_addr(b)), "r"(bytes)
              : "memory");
}
__device__ __forceinline__ void mbar_arrive(unsigned long long* b) {
  GF_SM90_ASM("mbarrier.arrive.release.cta.shared::cta.b64 _, [%0];" ::"r"(smem_addr(b)) : "memory");
}
/// Spins until the phase of parity `parity` has completed (acquire: its transactions' data is visible).
__device__ __forceinline__ void mbar_wait(unsigned long long* b, unsigned parity) {
  GF_SM90_ASM(
      "{\n .reg .pred done;\n wait_%=:\n mbarrier.try_wait.parity.acquire.cta.shared::cta.b64 done, [%0], %1;\n"
      " @!done bra wait_%=;\n}\n" ::"r"(smem_addr(b)),
      "r"(parity)
      : "memory");
}
/// The box of a 2-D tensor map at element coordinates (x: fastest dimension, y) into shared
/// memory (128-byte aligned), completing `bytes` on mbarrier b (cp.async.bulk.tensor, sm_90).
__device__ __forceinline__ void tma_load_2d(void* dst, const void* map, int x, int y, unsigned long long* b) {
  GF_SM90_ASM(
      "cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1, {%2, %3}], [%4];" ::"r"(
          smem_addr(dst)),
      "l"(reinterpret_cast<unsigned long long>(map)), "r"(x), "r"(y), "r"(smem_addr(b))
      : "memory");
}
/// Orders this thread's earlier generic-proxy accesses (and what it acquired) before its later
/// async-proxy ones (tensor copies): global memory, and the CTA's shared memory.
__device__ __forceinline__ void fence_proxy_async_global() { GF_SM90_ASM("fence.proxy.async.global;" ::: "memory"); }
__device__ __forceinline__ void fence_proxy_async_smem() { GF_SM90_ASM("fence.proxy.async.shared::cta;" ::: "memory"); }
#undef GF_SM90_ASM

}  // namespace gemflow::linalg::cuda::detail
