#pragma once
// Tiled Cholesky in one persistent launch (CholeskyAlgo::tiled): the lower triangle as 64×64
// tiles, one task per tile, dependencies through flags in global memory instead of kernel
// boundaries, every product on the fp64 tensor cores (1×FP16: the updates on the FP16 ones).
//
// Task (i, j), i ≥ j, left-looking: A_ij −= Σ_{k<j} L_ik·L_jkᵀ (each k as soon as the flags of
// L_ik and L_jk are set, which warp 0 polls for 16 K tiles at once; m16n8k8 DMMA, which runs at
// twice the rate of m8n8k4 on an H200; 1×FP16: m16n8k16 FP16 MMA on fp16 copies of the solved
// tiles, fp32 sums per K tile added into the fp64 accumulator), then
// for i ≥ j + 2 wait for the published L_jj and solve L_ij = A_ij·L_jj⁻ᵀ (solve_rows, shared
// with the panel kernel's strips), write L_ij over A_ij and set its flag. Tile (j + 1, j) only
// gets its updates and hands them over; the diagonal task j + 1 runs the chain in one CTA: solve
// tile (j + 1, j) with L_jj, update A_{j+1,j+1} by it from shared memory, factor (the 8×8-tile
// phases of potrf_panel_kernel, panel_kernels.cuh) and publish L_{j+1,j+1} with its inverted 8×8
// diagonal tiles. CTAs take tasks from one atomic counter in a topological order (tiled_task_order), so
// every task waits only on tasks taken before it: no deadlock whatever the number of resident
// CTAs (one CTA included: a regression test). While a diagonal task runs its chain, the other
// CTA on its SM pauses between update chunks (the factor runs slower beside an update).
// Measurements and limits: docs/performance.md ("Persistent tiled kernel" and the sections after it).
//
// Publishing: the CTA's stores, a barrier, then thread 0 fences and sets the flag with a release
// store (the barrier orders the other threads' stores before it at CTA scope, and the release is
// cumulative at GPU scope: the pattern of cooperative groups' grid sync); consumers acquire the
// flag in thread 0, pass a barrier and read with ld.global.cg / cp.async.cg (L2, never a stale L1
// line). The update operands of the fp64 pipeline: warp 0's lanes acquire the flags, __syncwarp,
// then lane 0 orders them before its tensor copies (fence.proxy.async: the copies are the async
// proxy's reads of data the generic proxy wrote) and issues the copies.
//
// Sources: tile algorithms with dataflow scheduling (Buttari, Langou, Kurzak & Dongarra, "A class
// of parallel tiled linear algebra algorithms for multicore architectures", Parallel Computing 35
// (2009), PLASMA); TRSM through inverted diagonal blocks: Du Croz & Higham, IMA J. Numer. Anal. 12
// (1992). Arithmetic in fp64 for fp32 and fp64 data (fp32 is read, factored in fp64 and rounded
// once).
//
// Non-finite values: every value stored into L and a failing pivot are tested (flag_nonfinite,
// report_failure: panel_kernels.cuh), in place of scans of A and L around the factorisation.
//
// Pivot failure in diagonal tile j at column c (p ≤ 0, NaN or +Inf): info = 64j + c through
// st->info; the tiles below are still solved in the columns before c (LAPACK's
// contract: columns < info − 1 complete), later tile columns are skipped (undefined).
#include <cuda.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <type_traits>
#include <vector>

#include "context.cuh"
#include "panel_kernels.cuh"
#include "potrf_kernels.cuh"
#include "sync.cuh"
#include "tiled_order.hpp"

namespace gemflow::linalg::cuda::detail {

constexpr int kTileNb = 64;            ///< tile order
constexpr int kTileSub = kTileNb / 8;  ///< 8×8 sub-tiles per tile side, one warp per sub-tile row
constexpr int kTileThreads = 32 * kTileSub;
constexpr int kTileLd = kTileNb + 4;    ///< row stride (doubles) of a factored tile in shared and global memory
constexpr int kTileKc = 32;             ///< K columns per update chunk
constexpr int kTileKcLd = kTileKc + 4;  ///< row stride of a chunk in shared memory (conflict-free fragments)

/// kAsync update pipeline (fp64, lda even, 16-byte aligned matrix): chunks of kAsyncKc columns of
/// both operands in kAsyncStages shared-memory stages, column-major ([column][row], stride
/// kAsyncLd), filled by tensor copies (cp.async.bulk.tensor, which read L2: other CTAs' results are
/// never read from a stale L1 line) of boxes of kTmaBoxRows rows by kTmaBoxCols columns. A box has
/// the tile's 64 rows and 4 rows of the next, so the stages keep the conflict-free row stride
/// kAsyncLd; rows ≥ n arrive as zeros. Three stages of 32 columns (two chunks in flight) over
/// the buffers of the factor and the sub-diagonal tile, which are used only after the loop.
/// (Faster than the cp.async pipeline it replaced: docs/performance.md, "Persistent tiled kernel:
/// the measurements behind its pieces".)
constexpr int kAsyncKc = 32;
constexpr int kAsyncStages = 3;
constexpr int kAsyncLd = kTileNb + 4;
constexpr int kTmaBoxRows = kAsyncLd;
constexpr int kTmaBoxCols = 32;
constexpr unsigned kTmaBoxBytes = sizeof(double) * kTmaBoxRows * kTmaBoxCols;
static_assert(kAsyncKc % kTmaBoxCols == 0 && (kTmaBoxBytes % 128) == 0 &&
                  (sizeof(double) * kAsyncKc * kAsyncLd) % 128 == 0,
              "boxes tile a chunk, 128-byte aligned");

/// kHalf update pipeline (fp32 data, 1×FP16): the operands are the fp16 copies of the solved
/// tiles, packed one 64×64 row-major tile after another in column-major tile order (`hl`, 8 KiB a
/// tile, written by the solves), and each K tile (64 columns of both operands) goes through one of
/// kHalfStages shared-memory stages by 16-byte cp.async.cg. Row stride kHalfLd halves (144 bytes):
/// the 32-bit fragment loads of a warp hit 32 distinct banks.
constexpr int kHalfStages = 4;
constexpr int kHalfLd = kTileNb + 8;
constexpr int kHalfTile = kTileNb * kTileNb;  ///< halves per packed tile

/// C += A·B on the FP16 tensor cores, fp32 accumulation (m16n8k16: a row-major 16×16, b 16×8 as
/// columns, c in the accumulator layout of m16n8k8 DMMA: (g, 2t), (g, 2t + 1), (g + 8, 2t), (g + 8, 2t + 1)).
__device__ __forceinline__ void hmma_m16n8k16(float (&c)[4], unsigned a0, unsigned a1, unsigned a2, unsigned a3,
                                              unsigned b0, unsigned b1) {
  asm volatile(
      "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, "
      "{%0, %1, %2, %3};"
      : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
      : "r"(a0), "r"(a1), "r"(a2), "r"(a3), "r"(b0), "r"(b1));
}

/// Shared memory of potrf_tiled_kernel: two chunk buffers of L_ik and L_jk (2 × 64 × kTileKcLd
/// each), aliased by the factor/solve buffers (64 × kTileLd, 8 diagonal tiles, 64 × kTileLd); then
/// the diagonal task's first tile below (64 × kTileLd; the kAsync stages cover all of these), the
/// kAsync stages' mbarriers and eight ints. 108,624 bytes: two CTAs per SM.
constexpr std::size_t tiled_smem_bytes() {
  constexpr std::size_t chunks = sizeof(double) * 2 * 2 * kTileNb * kTileKcLd;
  constexpr std::size_t factor = sizeof(double) * (2 * kTileNb * kTileLd + kTileSub * 64);
  static_assert(chunks == factor, "the sub-diagonal tile follows both");
  static_assert(2 * kHalfStages * kTileNb * kHalfLd * 2 <= chunks, "the kHalf stages fit");
  static_assert(sizeof(double) * kAsyncStages * 2 * kAsyncKc * kAsyncLd <= chunks + sizeof(double) * kTileNb * kTileLd,
                "the kAsync stages fit (over the sub-diagonal tile too: the diagonal task fills it after its loop)");
  return chunks + sizeof(double) * kTileNb * kTileLd + 32 + 8 * 2 * kAsyncStages;
}

/// Flag of a diagonal tile: the 8-column tiles usable by the solves below (1–8), and whether its
/// factor failed (then its columns before the failure are complete). Other tiles: 1.
constexpr int kTileFlagDone = 0xff;
constexpr int kTileFlagFailed = 0x100;

/// SM slots of the tiled workspace (indexed by %smid, which is below the SM count on every GPU so far).
constexpr int kTiledSmSlots = 1024;

/// Ints of the tiled workspace for tt tile rows: task counter, abort word, per-SM critical-task
/// counters, one flag per tile, one "updated" flag per tile row (tile (j, j − 1) before its solve).
inline std::int64_t tiled_state_ints(std::int64_t tt) { return 2 + kTiledSmSlots + tt * (tt + 1) / 2 + tt; }

/// acc −= A·Bᵀ over K columns, A and B row-major in shared memory (row stride Ld): this warp's rows
/// rg + g, rg + g + 8 of A and cg + 8nt + g of B, in the m16n8k8 accumulator layout of acc
/// (g = r = lane / 4, t = q = lane % 4).
template <int Ld, int K>
__device__ __forceinline__ void mma_nt_sub(double (&acc)[4][4], const double* a, const double* b, int rg, int cg, int r,
                                           int q) {
  const double* ap = a + (rg + r) * Ld + q;
  const double* bp = b + (cg + r) * Ld + q;
#pragma unroll
  for (int k0 = 0; k0 < K; k0 += 8) {
    const double a0 = -ap[k0], a1 = -ap[8 * Ld + k0], a2 = -ap[k0 + 4], a3 = -ap[8 * Ld + k0 + 4];
#pragma unroll
    for (int nt = 0; nt < 4; ++nt)
      dmma_m16n8k8(acc[nt], a0, a1, a2, a3, bp[8 * nt * Ld + k0], bp[8 * nt * Ld + k0 + 4]);
  }
}

__device__ __forceinline__ double ldcg(const double* p) { return __ldcg(p); }
__device__ __forceinline__ double ldcg(const float* p) { return static_cast<double>(__ldcg(p)); }

/// Thread 0 only: spins until *flag ≠ 0 and returns it, or returns 0 when a diagonal tile of a
/// column before `col` failed (*abort = 1 + that column).
__device__ __forceinline__ int wait_flag(const int* flag, const int* abort, std::int64_t col) {
  for (;;) {
    const int v = ld_acquire(flag);
    if (v) return v;
    const int ab = ld_acquire(abort);
    if (ab && col > ab - 1) return 0;
  }
}

/// The dynamic shared memory of potrf_tiled_kernel (tiled_smem_bytes() bytes from a 128-byte
/// aligned base: tensor-copy destinations), by the phase of a task that uses it:
///  - bytes [0, sub): the update pipeline's buffers while a task accumulates: `chunk`, two
///    buffers of L_ik and L_jk rows (2 × 2 × 64 × kTileKcLd doubles), or the kHalf stages, or the
///    kAsync stages (which run on over `sub`: a diagonal task fills it after its updates). After
///    the updates the same bytes hold `ls` (64 × kTileLd: the tile being factored, or the solve
///    form of L_jj), `ldiag` (kTileSub × 64: the inverted 8×8 diagonal tiles) and `xbuf`
///    (64 × kTileLd: A_ij with its updates, before its solve or factor);
///  - `sub` (64 × kTileLd): the diagonal task's tile (j, j − 1), then its L;
///  - the kAsync stages' mbarriers: `full` (the copies landed), `empty` (every warp has read it);
///  - `sint`, the last 32 bytes: eight ints that thread 0 or warp 0 hands to the CTA through a
///    barrier (TiledSlot).
struct TiledSmem {
  double* chunk;
  double* ls;
  double* ldiag;
  double* xbuf;
  double* sub;
  int* sint;
  unsigned long long* full;
  unsigned long long* empty;

  __device__ __forceinline__ explicit TiledSmem(unsigned char* raw)
      : chunk(reinterpret_cast<double*>(raw)),
        ls(reinterpret_cast<double*>(raw)),
        ldiag(ls + kTileNb * kTileLd),
        xbuf(ldiag + kTileSub * 64),
        sub(chunk + 2 * 2 * kTileNb * kTileKcLd),
        sint(reinterpret_cast<int*>(raw + tiled_smem_bytes() - 32)),
        full(reinterpret_cast<unsigned long long*>(sint) - 2 * kAsyncStages),
        empty(full + kAsyncStages) {}
};

/// The slots of TiledSmem::sint.
enum TiledSlot : int {
  kSlotTask = 0,   ///< the task taken from the counter
  kSlotAbort = 1,  ///< the abort word when it was taken
  kSlotFail = 2,   ///< two: the failing pivots of the factor phases (factor_block_phases)
  kSlotOk = 4,     ///< two: the polls for a chunk succeeded (alternating: a slow warp may still read the last)
  kSlotReady = 6,  ///< the first polls of an update succeeded; the diagonal task's `updated` flag
  kSlotFlag = 7,   ///< the flag of L_jj (L_{j−1,j−1} on the chain) waited for
};

/// One CTA of potrf_tiled_kernel: the kernel's arguments, its shared memory (TiledSmem) and the
/// thread's place in the CTA as members, the stages of a task (the updates of the three pipelines,
/// the solve, the factor) and the tasks (offdiagonal_task, diagonal_task) as methods. Everything is
/// inlined into the kernel: the same code as one function, in readable pieces. kTrace: the
/// timeline stamps of CholeskyProbe::tiled_trace (stamp()); none are compiled in otherwise.
template <class T, bool kAsync, bool kHalf, bool kTrace>
struct TiledCta {
  static_assert(!kAsync || std::is_same_v<T, double>, "the tensor copies are fp64");
  static_assert(!kHalf || (std::is_same_v<T, float> && !kAsync), "fp16 copies of fp32 data");

  T* const a;
  const std::int64_t lda, n, tt;
  double* const forms;
  DeviceStatus* const st;
  const std::int64_t offset;
  __half* const hl;
  const CUtensorMap* const amap;
  double* const chunk;
  double* const ls;
  double* const ldiag;
  double* const xbuf;
  double* const sub;
  int* const sint;
  unsigned long long* const full;
  unsigned long long* const empty;
  const int tid, warp, lane;
  const int r, q;            // lane / 4 and lane % 4: g and t of the MMA fragment layouts
  unsigned int* const next;  // the task counter
  int* const abort;          // 1 + the column of the first failed diagonal tile, else 0
  int* const flags;          // one per tile (tix_of)
  int* const updated;        // [j]: tile (j, j − 1) has its updates, in forms slot tt + j
  int* sm_critical;          // this SM's count of critical tasks computing now
  // warp tile of the updates: rows 16·(warp & 3) + g (+8), columns 32·(warp >> 2) + 8nt + 2t (+1),
  // the m16n8k8 accumulator layout (g = lane / 4 = r, t = lane % 4 = q)
  const int rg, cg;
  // kAsync: chunks through the stages so far (CTA-uniform): stage and phase of the next. 32 bits
  // hold about 2.7·10⁵ tile columns' updates on one CTA, far beyond any matrix that fits.
  unsigned tma_seq = 0;
  unsigned long long* const trace;  // kTrace: CholeskyProbe::tiled_trace

  __device__ __forceinline__ TiledCta(const TiledSmem& sm, T* a_, std::int64_t lda_, std::int64_t n_, std::int64_t tt_,
                                      int* state, double* forms_, DeviceStatus* st_, std::int64_t offset_, __half* hl_,
                                      const CUtensorMap* amap_, unsigned long long* trace_)
      : a(a_),
        lda(lda_),
        n(n_),
        tt(tt_),
        forms(forms_),
        st(st_),
        offset(offset_),
        hl(hl_),
        amap(amap_),
        chunk(sm.chunk),
        ls(sm.ls),
        ldiag(sm.ldiag),
        xbuf(sm.xbuf),
        sub(sm.sub),
        sint(sm.sint),
        full(sm.full),
        empty(sm.empty),
        tid(static_cast<int>(threadIdx.x)),
        warp(tid / 32),
        lane(tid % 32),
        r(lane >> 2),
        q(lane & 3),
        next(reinterpret_cast<unsigned int*>(state)),
        abort(state + 1),
        flags(state + 2 + kTiledSmSlots),
        updated(flags + tt_ * (tt_ + 1) / 2),
        rg(16 * (warp & 3)),
        cg(32 * (warp >> 2)),
        trace(kTrace ? trace_ : nullptr) {
    int* critical = state + 2;  // per SM
    unsigned smid;
    asm("mov.u32 %0, %%smid;" : "=r"(smid));
    sm_critical = critical + (smid % kTiledSmSlots);
  }

  /// kTrace: the global timer (ns) at step `slot` of task tix, and the SM's id in slot 5
  /// (CholeskyProbe::tiled_trace); called by one thread of the CTA.
  __device__ __forceinline__ void stamp([[maybe_unused]] std::int64_t tix, [[maybe_unused]] int slot) {
    if constexpr (kTrace) {
      unsigned long long now;
      asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(now));
      unsigned smid;
      asm volatile("mov.u32 %0, %%smid;" : "=r"(smid));
      trace[tix * CholeskyProbe::kTiledTraceSlots + slot] = now;
      trace[tix * CholeskyProbe::kTiledTraceSlots + 5] = smid;
    }
  }

  /// kAsync: the stages' mbarriers (thread 0, before the first barrier of the task loop).
  __device__ __forceinline__ void init_barriers() {
    if constexpr (kAsync) {
      if (tid == 0) {
        for (int s = 0; s < kAsyncStages; ++s) {
          mbar_init(full + s, 1);
          mbar_init(empty + s, kTileSub);  // one arrival per warp
        }
      }
    }
  }

  /// Column-major index of tile (i, j), i ≥ j: its flag and its packed fp16 copy (kHalf).
  __device__ __forceinline__ std::int64_t tix_of(std::int64_t i, std::int64_t j) const {
    return j * tt - j * (j - 1) / 2 + (i - j);
  }
  __device__ __forceinline__ int* flag_of(std::int64_t i, std::int64_t j) const { return flags + tix_of(i, j); }

  // ---- the stages of a task ----

  // acc = tile (ti, tj) of A (lower part only for a diagonal tile; identity beyond n)
  __device__ __forceinline__ void init_acc(double (&acc)[4][4], std::int64_t ti, std::int64_t tj) {
#pragma unroll
    for (int nt = 0; nt < 4; ++nt)
#pragma unroll
      for (int e = 0; e < 4; ++e) {
        const std::int64_t gi = kTileNb * ti + rg + r + 8 * (e >> 1), gj = kTileNb * tj + cg + 8 * nt + 2 * q + (e & 1);
        acc[nt][e] = gi < n && (ti != tj || gj <= gi) ? ldcg(a + gi + gj * lda) : (gi == gj ? 1.0 : 0.0);
      }
  }
  // Warp 0 (all lanes): true once K tile kn of the update of (ti, tj) has both operands published,
  // false when a diagonal tile before column `col` failed. The lanes poll the flags of 16 K tiles
  // at once (lane l: K tile kn + l / 2, operand l % 2) and `ready` keeps how far they are known to
  // be set, so most K tiles wait on no flag: two acquire loads per K tile on thread 0, behind the
  // barrier, left the tensor cores idle.
  __device__ __forceinline__ bool poll_operands(std::int64_t ti, std::int64_t tj, std::int64_t kend, std::int64_t col,
                                                std::int64_t kn, std::int64_t& ready) {
    if (kn >= kend || kn < ready) return true;
    for (;;) {
      const std::int64_t kk = kn + (lane >> 1);
      const int v = kk < kend ? ld_acquire(flag_of((lane & 1) ? tj : ti, kk)) : 1;
      const unsigned set = __ballot_sync(0xffffffffu, v != 0);
      const int lead = set == 0xffffffffu ? 32 : __ffs(~set) - 1;  // leading lanes with their flag set
      if (lead >= 2) {
        ready = kn + lead / 2;
        return true;
      }
      const int ab = __shfl_sync(0xffffffffu, lane == 0 ? ld_acquire(abort) : 0, 0);
      if (ab && col > ab - 1) return false;
    }
  }
  // SM-local priority (thread 0): while a diagonal task runs its chain (solve, factor) on this SM,
  // the other tasks there pause before their next K tile: the factor runs slower beside an update,
  // and the chain bounds the factorisation. The chain holds no waits while marked, so a pause
  // always ends. Tested once per K tile, not per chunk.
  __device__ __forceinline__ void pause_for_chain() {
    while (ld_acquire(sm_critical) > 0) __nanosleep(128);
  }
  // acc −= Σ_{k<kend} L_{ti,k}·L_{tj,k}ᵀ in chunks of kTileKc columns through shared memory (two
  // buffers, one barrier per chunk, the next chunk's loads in flight during the products). Waits for
  // the operands' flags; false when a diagonal tile before column `col` failed. Ends with a barrier
  // when there was anything to read (kend > 0; the loop's first barrier covers kend = 0).
  __device__ __forceinline__ bool accumulate(double (&acc)[4][4], std::int64_t ti, std::int64_t tj, std::int64_t kend,
                                             std::int64_t col, bool low_priority, std::int64_t tix) {
    const std::int64_t nchunks = 2 * kend;
    if (nchunks == 0) return true;
    const bool same = ti == tj;
    const std::int64_t rowi = kTileNb * ti + 8 * warp + r, rowj = kTileNb * tj + 8 * warp + r;  // rows to load
    double fa[kTileKc / 4], fb[kTileKc / 4];  // the next chunk: L_{ti,k} and L_{tj,k} at (row, 4s + q)
    const auto load = [&](std::int64_t ch) {
      const std::int64_t c = kTileKc * ch + q;
#pragma unroll
      for (int s = 0; s < kTileKc / 4; ++s) {
        fb[s] = rowj < n ? ldcg(a + rowj + (c + 4 * s) * lda) : 0.0;
        if (!same) fa[s] = rowi < n ? ldcg(a + rowi + (c + 4 * s) * lda) : 0.0;
      }
    };
    std::int64_t ready = 0;  // warp 0: poll_operands
    if (warp == 0) {
      const bool okv = poll_operands(ti, tj, kend, col, 0, ready);
      if (lane == 0) sint[kSlotReady] = okv;
    }
    __syncthreads();
    if (!sint[kSlotReady]) return false;
    load(0);
    for (std::int64_t ch = 0; ch < nchunks; ++ch) {
      double* bufa = chunk + (ch & 1) * (2 * kTileNb * kTileKcLd);  // L_{ti,k} rows, then L_{tj,k} rows
      double* bufb = bufa + kTileNb * kTileKcLd;
#pragma unroll
      for (int s = 0; s < kTileKc / 4; ++s) {
        bufb[(8 * warp + r) * kTileKcLd + 4 * s + q] = fb[s];
        if (!same) bufa[(8 * warp + r) * kTileKcLd + 4 * s + q] = fa[s];
      }
      const bool more = ch + 1 < nchunks;
      int* ok = sint + kSlotOk + (ch & 1);  // two slots: a slow warp may still read the last one
      if (warp == 0) {
        const bool next_tile = more && ((ch + 1) & 1) == 0;  // chunk ch + 1 starts K tile (ch + 1) / 2
        const bool okv = !next_tile || poll_operands(ti, tj, kend, col, (ch + 1) / 2, ready);
        if (lane == 0) {
          *ok = okv;
          if (low_priority && (ch & 1) == 0) pause_for_chain();
          if (next_tile && (ch + 1) / 2 + 1 == kend) stamp(tix, 1);
        }
      }
      __syncthreads();
      if (!*ok) return false;
      if (more) load(ch + 1);
      mma_nt_sub<kTileKcLd, kTileKc>(acc, same ? bufb : bufa, bufb, rg, cg, r, q);
    }
    __syncthreads();  // ls and xbuf alias the chunk buffers
    return true;
  }
  // accumulate with the kAsync pipeline: the stages filled by tensor copies (boxes of kTmaBoxRows
  // × kTmaBoxCols of `amap`, rows ≥ n zero) that complete on the stage's `full` mbarrier.
  // Warp 0 produces: it polls a K tile's flags before its first chunk, waits until every warp
  // has arrived on the stage's `empty` barrier, and lane 0 issues the copies. The other warps
  // wait on `full` only: no CTA barrier per chunk. A failed poll still completes the stage's
  // phase (an arrival without data) and clears sint[kSlotReady], so the phases stay in step across tasks;
  // the products of such chunks read stale stages, and the task's result is dropped.
  __device__ __forceinline__ bool accumulate_async(double (&acc)[4][4], std::int64_t ti, std::int64_t tj,
                                                   std::int64_t kend, std::int64_t col, bool low_priority,
                                                   std::int64_t tix) {
    constexpr int kPerTile = kTileNb / kAsyncKc, kStage = 2 * kAsyncKc * kAsyncLd;
    const int nchunks = static_cast<int>(kPerTile * kend);
    if (nchunks == 0) return true;
    const bool same = ti == tj;
    const unsigned bytes = (same ? 1u : 2u) * (kAsyncKc / kTmaBoxCols) * kTmaBoxBytes;
    const int rowi = static_cast<int>(kTileNb * ti), rowj = static_cast<int>(kTileNb * tj);
    const unsigned base = tma_seq;
    fence_proxy_async_smem();  // this task's generic accesses to the stages' memory before the copies
    if (tid == 0) sint[kSlotReady] = 1;
    __syncthreads();
    std::int64_t ready = 0;            // warp 0: poll_operands
    bool ok = true;                    // warp 0: every poll so far succeeded
    const auto produce = [&](int c) {  // warp 0: chunk c of this task
      if (c % kPerTile == 0 && ok) {
        ok = poll_operands(ti, tj, kend, col, c / kPerTile, ready);
        if (lane == 0) {
          if (low_priority) pause_for_chain();
          if (c / kPerTile + 1 == kend) stamp(tix, 1);
        }
      }
      __syncwarp();  // the flags acquired by the polling lanes, before lane 0's copies
      if (lane == 0) {
        const unsigned g = base + static_cast<unsigned>(c);
        const int s = static_cast<int>(g % kAsyncStages);
        if (g >= kAsyncStages) mbar_wait(empty + s, ((g / kAsyncStages) & 1u) ^ 1u);
        if (ok) {
          fence_proxy_async_global();
          mbar_arrive_expect(full + s, bytes);
          double* stage = chunk + s * kStage;
          const int k0 = kAsyncKc * c;
#pragma unroll
          for (int b = 0; b < kAsyncKc / kTmaBoxCols; ++b) {
            if (!same) tma_load_2d(stage + kTmaBoxCols * b * kAsyncLd, amap, rowi, k0 + kTmaBoxCols * b, full + s);
            tma_load_2d(stage + (kAsyncKc + kTmaBoxCols * b) * kAsyncLd, amap, rowj, k0 + kTmaBoxCols * b, full + s);
          }
        } else {
          sint[kSlotReady] = 0;
          mbar_arrive(full + s);
        }
      }
      __syncwarp();
    };
    if (warp == 0)
      for (int c = 0; c < kAsyncStages - 1 && c < nchunks; ++c) produce(c);
    for (int ch = 0; ch < nchunks; ++ch) {
      if (warp == 0 && ch + kAsyncStages - 1 < nchunks) produce(ch + kAsyncStages - 1);
      const unsigned g = base + static_cast<unsigned>(ch);
      const int s = static_cast<int>(g % kAsyncStages);
      mbar_wait(full + s, (g / kAsyncStages) & 1u);
      const double* stage = chunk + s * kStage;
      const double* ap = stage + (same ? kAsyncKc * kAsyncLd : 0) + q * kAsyncLd + rg + r;
      const double* bp = stage + kAsyncKc * kAsyncLd + q * kAsyncLd + cg + r;
#pragma unroll
      for (int k0 = 0; k0 < kAsyncKc; k0 += 8) {
        const double a0 = -ap[k0 * kAsyncLd], a1 = -ap[k0 * kAsyncLd + 8], a2 = -ap[(k0 + 4) * kAsyncLd],
                     a3 = -ap[(k0 + 4) * kAsyncLd + 8];
#pragma unroll
        for (int nt = 0; nt < 4; ++nt)
          dmma_m16n8k8(acc[nt], a0, a1, a2, a3, bp[k0 * kAsyncLd + 8 * nt], bp[(k0 + 4) * kAsyncLd + 8 * nt]);
      }
      __syncwarp();
      if (lane == 0) mbar_arrive(empty + s);
    }
    tma_seq = base + static_cast<unsigned>(nchunks);
    const bool good = sint[kSlotReady] != 0;  // final: written before the last chunk's arrival on `full`
    __syncthreads();                          // ls and xbuf alias the stages
    return good;
  }
  // accumulate with the kHalf pipeline: one K tile per stage from the packed fp16 copies, FP16
  // products summed in fp32 over the K tile, then subtracted from the fp64 accumulator
  __device__ __forceinline__ bool accumulate_half(double (&acc)[4][4], std::int64_t ti, std::int64_t tj,
                                                  std::int64_t kend, std::int64_t col, bool low_priority,
                                                  std::int64_t tix) {
    constexpr int kStage = 2 * kTileNb * kHalfLd;  // halves: L_{ti,k} rows, then L_{tj,k} rows
    if (kend == 0) return true;
    const bool same = ti == tj;
    __half* const stages = reinterpret_cast<__half*>(chunk);
    // thread t copies halves 8t … 8t + 7 (row t / 8) and 2048 further (row t / 8 + 32) of each operand
    static_assert(kTileNb * kTileNb / 8 / kTileThreads == 2, "the copy layout");
    const auto issue = [&](std::int64_t k) {
      __half* stage = stages + (k % kHalfStages) * kStage + (tid / 8) * kHalfLd + 8 * (tid % 8);
#pragma unroll
      for (int op = same ? 1 : 0; op < 2; ++op) {
        const __half* src = hl + tix_of(op ? tj : ti, k) * kHalfTile + 8 * tid;
#pragma unroll
        for (int u = 0; u < 2; ++u)
          cp_async16(stage + op * (kTileNb * kHalfLd) + 32 * u * kHalfLd, src + kHalfTile / 2 * u, 16);
      }
    };
    std::int64_t ready = 0;  // warp 0: poll_operands
    int crit_seen = 0;       // thread 0: the per-SM critical counter, read one K tile ahead
    if (warp == 0) {         // the prologue's K tiles
      bool okv = true;
      for (int k = 0; k < kHalfStages - 1 && okv; ++k) okv = poll_operands(ti, tj, kend, col, k, ready);
      if (lane == 0) sint[kSlotReady] = okv;
    }
    __syncthreads();
    if (!sint[kSlotReady]) return false;
#pragma unroll
    for (int k = 0; k < kHalfStages - 1; ++k) {
      if (k < kend) issue(k);
      cp_async_commit();
    }
    for (std::int64_t k = 0; k < kend; ++k) {
      cp_async_wait<kHalfStages - 2>();             // this thread's copies of K tile k have landed
      const std::int64_t kn = k + kHalfStages - 1;  // the K tile to issue in this step
      int* ok = sint + kSlotOk + (k & 1);
      if (warp == 0) {
        const bool okv = poll_operands(ti, tj, kend, col, kn, ready);
        if (lane == 0) {
          *ok = okv;
          // SM-local priority as in accumulate, from a relaxed load of the counter issued one K
          // tile earlier (off the barrier's path, where a load on every K tile cost time): a chain
          // that starts meanwhile waits for one K tile's products
          if (low_priority && crit_seen > 0) pause_for_chain();
          if (kn + 1 == kend) stamp(tix, 1);
        }
      }
      __syncthreads();  // K tile k visible to all; K tile k − 1's stage free
      if (!*ok) {
        cp_async_wait<0>();
        __syncthreads();
        return false;
      }
      if (kn < kend) issue(kn);
      cp_async_commit();
      if (low_priority && tid == 0) crit_seen = ld_relaxed(sm_critical);  // for the next K tile
      const __half* stage = stages + (k % kHalfStages) * kStage;
      const unsigned* ap =
          reinterpret_cast<const unsigned*>(stage + (same ? kTileNb * kHalfLd : 0) + (rg + r) * kHalfLd + 2 * q);
      const unsigned* bp = reinterpret_cast<const unsigned*>(stage + kTileNb * kHalfLd + (cg + r) * kHalfLd + 2 * q);
      constexpr int kW = kHalfLd / 2;  // 32-bit words per stage row
      float part[4][4] = {};
#pragma unroll
      for (int k0 = 0; k0 < kTileNb / 2; k0 += 8) {  // in words: 16 halves per step
        const unsigned a0 = ap[k0], a1 = ap[8 * kW + k0], a2 = ap[k0 + 4], a3 = ap[8 * kW + k0 + 4];
#pragma unroll
        for (int nt = 0; nt < 4; ++nt)
          hmma_m16n8k16(part[nt], a0, a1, a2, a3, bp[8 * nt * kW + k0], bp[8 * nt * kW + k0 + 4]);
      }
#pragma unroll
      for (int nt = 0; nt < 4; ++nt)
#pragma unroll
        for (int e = 0; e < 4; ++e) acc[nt][e] -= static_cast<double>(part[nt][e]);
    }
    cp_async_wait<0>();
    __syncthreads();  // ls and xbuf alias the stages
    return true;
  }
  __device__ __forceinline__ bool update(double (&acc)[4][4], std::int64_t ti, std::int64_t tj, std::int64_t kend,
                                         std::int64_t col, bool low_priority, std::int64_t tix) {
    if constexpr (kHalf) return accumulate_half(acc, ti, tj, kend, col, low_priority, tix);
    else if constexpr (kAsync) return accumulate_async(acc, ti, tj, kend, col, low_priority, tix);
    else return accumulate(acc, ti, tj, kend, col, low_priority, tix);
  }
  // the accumulator to shared memory (row-major, stride kTileLd)
  __device__ __forceinline__ void acc_to_smem(const double (&acc)[4][4], double* dst) {
#pragma unroll
    for (int nt = 0; nt < 4; ++nt) {
      double* p = dst + (rg + r) * kTileLd + cg + 8 * nt + 2 * q;
      *reinterpret_cast<double2*>(p) = make_double2(acc[nt][0], acc[nt][1]);
      *reinterpret_cast<double2*>(p + 8 * kTileLd) = make_double2(acc[nt][2], acc[nt][3]);
    }
  }
  // L_{ti,tj} = B·L_jj⁻ᵀ with B in shared memory (src, stride kTileLd) and the solve form of L_jj in
  // ls, in the columns of the first nt_done 8-column tiles; warp w solves rows 8w … 8w + 7
  // (solve_rows, panel_kernels.cuh) and writes X over A_{ti,tj} (and over src when keep is
  // std::true_type)
  template <bool kKeep>
  __device__ __forceinline__ void solve(const double* src, std::int64_t ti, std::int64_t tj, int nt_done) {
    const std::int64_t row = kTileNb * ti + 8 * warp + r;
    const bool rvalid = row < n;
    T* arow = a + (rvalid ? row : 0) + kTileNb * tj * lda;
    bool bad = false;  // a stored value is NaN/Inf
    double* srow = const_cast<double*>(src) + (8 * warp + r) * kTileLd + 2 * q;
    const auto load_b = [&](int k) { return *reinterpret_cast<const double2*>(srow + 8 * k); };
    // kHalf: the tile's fp16 copy (row 8w + r, columns 2q, 2q + 1 of each 8-column tile)
    [[maybe_unused]] __half2* hrow =
        kHalf ? reinterpret_cast<__half2*>(hl + tix_of(ti, tj) * kHalfTile + (8 * warp + r) * kTileNb) + q : nullptr;
    const auto store_x = [&](int k, double2 x) {
      const int c = 8 * k + 2 * q;
      if (rvalid) {
        const T x0 = static_cast<T>(x.x), x1 = static_cast<T>(x.y);
        arow[c * lda] = x0;
        arow[(c + 1) * lda] = x1;
        bad |= !(isfinite(x0) && isfinite(x1));
      }
      if constexpr (kHalf)  // rows beyond n: zero (operands of the padded diagonal tile)
        hrow[4 * k] = rvalid ? __halves2half2(fp16_sat(static_cast<float>(x.x)), fp16_sat(static_cast<float>(x.y)))
                             : __float2half2_rn(0.0f);
      if constexpr (kKeep) *reinterpret_cast<double2*>(srow + 8 * k) = x;
    };
    if (nt_done == kTileSub)  // no per-tile guards: the common case, on the critical chain
      solve_rows<kTileLd, kTileSub, kTileSub - 1, true>(ls, nt_done, r, q, load_b, store_x);
    else solve_rows<kTileLd, kTileSub, kTileSub - 1, false>(ls, nt_done, r, q, load_b, store_x);
    if (bad) flag_first_nonfinite(st, arow, lda, 8 * nt_done, offset + kTileNb * tj);
  }
  // the solve form of L_jj into ls
  __device__ __forceinline__ void load_form(std::int64_t j) {
    const double2* src = reinterpret_cast<const double2*>(forms + j * (kTileNb * kTileLd));
    double2* dst = reinterpret_cast<double2*>(ls);
    for (int e = tid; e < kTileNb * kTileLd / 2; e += kTileThreads) dst[e] = __ldcg(src + e);
  }

  // ---- the tasks ----

  /// Task (i, j), i > j: its updates, then (i ≥ j + 2) the solve through the published L_jj; a
  /// tile (j + 1, j) only gets its updates, handed (fp64, in `forms`) to the diagonal task j + 1,
  /// which solves it on its chain. ab: the abort word when the task was taken.
  __device__ __forceinline__ void offdiagonal_task(std::int64_t i, std::int64_t j, int ab, std::int64_t tix) {
    if (ab && j > ab - 1) return;  // after a failed diagonal tile: skip
    double acc[4][4];
    init_acc(acc, i, j);
    if (!update(acc, i, j, j, j, i > j + 1, tix)) return;  // the sub-diagonal tile feeds the chain
    if (tid == 0) stamp(tix, 2);
    if (i == j + 1) {
      hand_over(acc, i, tix);
      return;
    }
    acc_to_smem(acc, xbuf);
    if (tid == 0) {
      sint[kSlotFlag] = wait_flag(flag_of(j, j), abort, j);
      stamp(tix, 3);
    }
    __syncthreads();
    const int nt_done = sint[kSlotFlag] & kTileFlagDone;
    if (!nt_done) return;
    load_form(j);
    __syncthreads();
    solve<false>(xbuf, i, j, nt_done);
    __syncthreads();
    if (tid == 0) {
      __threadfence();
      st_release(flag_of(i, j), 1);
      stamp(tix, 4);
    }
  }

  /// Tile (i, i − 1) with its updates into forms slot tt + i, in fp64 (also for fp32 data),
  /// row-major 64 × 64, then its `updated` flag for the diagonal task i.
  __device__ __forceinline__ void hand_over(const double (&acc)[4][4], std::int64_t i, std::int64_t tix) {
    double* dst = forms + (tt + i) * (kTileNb * kTileLd);
#pragma unroll
    for (int nt = 0; nt < 4; ++nt) {
      double* p = dst + (rg + r) * kTileNb + cg + 8 * nt + 2 * q;
      *reinterpret_cast<double2*>(p) = make_double2(acc[nt][0], acc[nt][1]);
      *reinterpret_cast<double2*>(p + 8 * kTileNb) = make_double2(acc[nt][2], acc[nt][3]);
    }
    __syncthreads();
    if (tid == 0) {
      __threadfence();
      st_release(updated + i, 1);
      stamp(tix, 4);
    }
  }

  /// Diagonal task j: A_jj's updates by columns < j − 1, then the chain L_{j−1,j−1} → L_{j,j−1} →
  /// L_jj in this CTA (critical, no more waits): chain(), then the factor (factor_and_publish).
  __device__ __forceinline__ void diagonal_task(std::int64_t j, int ab, std::int64_t tix) {
    if (ab && j - 1 > ab - 1) return;
    double acc[4][4];
    if (j > 0) {
      if (!chain(acc, j, tix)) return;
    } else {
      init_acc(acc, 0, 0);
      if (tid == 0) {
        atomicAdd(sm_critical, 1);
        stamp(tix, 3);
      }
    }
    acc_to_smem(acc, ls);
    factor_and_publish(j, tix);
  }

  /// Diagonal task j > 0 up to its factor: acc = A_jj with its updates by columns < j − 1; the
  /// solve of tile (j, j − 1), whose updates task (j, j − 1) handed over; the update of acc by it
  /// from shared memory. The solve belongs to column j − 1: it is done even when L_{j−1,j−1}
  /// failed (its columns before the failure), then the task stops (false). Marks the SM's
  /// critical counter from the wait for L_{j−1,j−1} on.
  __device__ __forceinline__ bool chain(double (&acc)[4][4], std::int64_t j, std::int64_t tix) {
    init_acc(acc, j, j);
    if (!update(acc, j, j, j - 1, j - 1, false, tix)) return false;
    acc_to_smem(acc, xbuf);
    if (tid == 0) {
      stamp(tix, 2);
      sint[kSlotReady] = wait_flag(updated + j, abort, j - 1);
    }
    __syncthreads();
    if (!sint[kSlotReady]) return false;
    {  // A_{j,j−1} with its updates into `sub`
      const double2* src = reinterpret_cast<const double2*>(forms + (tt + j) * (kTileNb * kTileLd));
      for (int e = tid; e < kTileNb * kTileNb / 2; e += kTileThreads)
        *reinterpret_cast<double2*>(sub + (e / (kTileNb / 2)) * kTileLd + 2 * (e % (kTileNb / 2))) = __ldcg(src + e);
    }
    if (tid == 0) {
      sint[kSlotFlag] = wait_flag(flag_of(j - 1, j - 1), abort, j - 1);
      if (sint[kSlotFlag]) atomicAdd(sm_critical, 1);
      stamp(tix, 3);
    }
    __syncthreads();
    const int prev_flag = sint[kSlotFlag];
    if (!prev_flag) return false;
    const int prev_done = prev_flag & kTileFlagDone;  // 8-column tiles of L_{j−1,j−1} usable for the solve
    load_form(j - 1);
    __syncthreads();
    if (tid == 0) stamp(tix, 9);
    solve<true>(sub, j, j - 1, prev_done);  // L_{j,j−1} over A and over `sub`
    __syncthreads();
    if (tid == 0) stamp(tix, 10);
    if (tid == 0) {
      __threadfence();
      st_release(flag_of(j, j - 1), 1);
      stamp(tix, 6);
    }
    if (prev_flag & kTileFlagFailed) {  // L_{j−1,j−1} failed: column j is undefined
      if (tid == 0) atomicSub(sm_critical, 1);
      return false;
    }
    // A_jj −= L_{j,j−1}·L_{j,j−1}ᵀ from shared memory
#pragma unroll
    for (int nt = 0; nt < 4; ++nt) {
      const double* p = xbuf + (rg + r) * kTileLd + cg + 8 * nt + 2 * q;
      acc[nt][0] = p[0], acc[nt][1] = p[1], acc[nt][2] = p[8 * kTileLd], acc[nt][3] = p[8 * kTileLd + 1];
    }
    mma_nt_sub<kTileLd, kTileNb>(acc, sub, sub, rg, cg, r, q);
    __syncthreads();  // ls still holds the form of L_{j−1,j−1}
    return true;
  }

  /// The factor of A_jj (in ls) in shared memory with the phases of potrf_panel_kernel over 8 tile
  /// rows; the solve form (L with inverted diagonal tiles) published for the tiles below and its
  /// flag released before L_jj is written over A_jj (write_factor).
  __device__ __forceinline__ void factor_and_publish(std::int64_t j, std::int64_t tix) {
    const std::int64_t c0 = kTileNb * j;
    for (int e = tid; e < kTileSub * 64; e += kTileThreads) ldiag[e] = 0.0;
    if (tid < 2) sint[kSlotFail + tid] = 0;
    __syncthreads();
    if (tid == 0) stamp(tix, 7);
    int nt_done = kTileSub;
    const int fail =
        factor_block_phases<kTileLd, true, kHalf>(ls, ldiag, sint + kSlotFail, kTileSub, warp, lane, nt_done);
    if (tid == 0) stamp(tix, 8);
    if (fail && tid == 0) {
      report_failure(st, offset + c0, fail);
      atomicCAS(abort, 0, static_cast<int>(j + 1));
    }
    if (j + 1 < tt) {
      double2* dst = reinterpret_cast<double2*>(forms + j * (kTileNb * kTileLd));
      const double2* src = reinterpret_cast<const double2*>(ls);
      for (int e = tid; e < kTileNb * kTileLd / 2; e += kTileThreads) dst[e] = src[e];
    }
    // the solves below need only the published form: release them before writing L_jj
    __syncthreads();
    if (tid == 0) {
      __threadfence();
      st_release(flag_of(j, j), nt_done | (fail ? kTileFlagFailed : 0));
      atomicSub(sm_critical, 1);
      stamp(tix, 4);
    }
    write_factor(c0, nt_done);
  }

  /// L_jj (diagonal tiles from ldiag, the others from ls) over A_jj at column c0, in its first
  /// nt_done 8-column tiles, tile by tile (36 tiles over 8 warps); stored non-finite values flagged.
  __device__ __forceinline__ void write_factor(std::int64_t c0, int nt_done) {
    for (int e = warp; e < kTileSub * (kTileSub + 1) / 2; e += kTileSub) {
      int ti = 0;
      while ((ti + 1) * (ti + 2) / 2 <= e) ++ti;
      const int tj = e - ti * (ti + 1) / 2;
      if (tj >= nt_done) continue;
      const int li = 8 * ti + r, lj = 8 * tj + 2 * q;
      const double2 x = diagonal_root(ti == tj ? ldiag + 64 * ti + 8 * r + 2 * q : ls + li * kTileLd + lj, li, lj);
      const std::int64_t gi = c0 + li, gj = c0 + lj;
      const T x0 = static_cast<T>(x.x), x1 = static_cast<T>(x.y);
      const bool v0 = gi < n && lj <= li, v1 = gi < n && lj + 1 <= li;
      if (v0) a[gi + gj * lda] = x0;
      if (v1) a[gi + (gj + 1) * lda] = x1;
      if ((v0 && !isfinite(x0)) || (v1 && !isfinite(x1)))
        flag_nonfinite(st, offset + gj + (v0 && !isfinite(x0) ? 0 : 1));
    }
  }
};

/// a: the n×n matrix (lower, column-major, lda); tt = ⌈n/64⌉. state: tiled_state_ints(tt) ints,
/// zero at launch; order: the tiled_task_count(tt) tasks (tile row, column) in a topological order
/// (tiled_task_order). forms: 2·tt slots of 64 × kTileLd doubles: slot j the factored diagonal tile
/// j for the solves (inverted 8×8 diagonal tiles, row stride kTileLd), slot tt + j tile (j, j − 1)
/// with its updates (row-major, stride 64). A failing pivot in column c (0-based, of this matrix)
/// sets st->info = offset + c + 1 unless it is already set (a trailing matrix of a larger one).
/// Grid: any number of CTAs of kTileThreads threads, tiled_smem_bytes() dynamic shared memory (at
/// most two per SM: 128 registers). kAsync: the tensor-copy update pipeline, for T = double with
/// lda even and a 16-byte aligned; amap is then the tensor map of a (tiled_tensor_map, cholesky.cu),
/// otherwise unused. kHalf (T = float, 1×FP16): every solved tile is also written, rounded
/// to fp16 (saturating), into `hl` (tiled_task_count(tt) packed tiles, row-major 64×64, tile index
/// column-major; rows beyond n zero), and the updates are FP16 products of those copies with fp32
/// accumulation per K tile, added into the fp64 accumulator (the diagonal task's last update, by
/// L_{j,j−1} from shared memory, stays fp64) and the diagonal tasks factor their 8×8 tiles in fp32
/// (factor_invert_tile_fp32). Otherwise hl is unused. kTrace: the stamps of
/// CholeskyProbe::tiled_trace into `trace` (unused otherwise: the kernel without them).
template <class T, bool kAsync, bool kHalf = false, bool kTrace = false>
__global__ void __launch_bounds__(kTileThreads, 2)
    potrf_tiled_kernel(T* a, std::int64_t lda, std::int64_t n, std::int64_t tt, int* state, const int2* order,
                       double* forms, DeviceStatus* st, std::int64_t offset, __half* hl,
                       const __grid_constant__ CUtensorMap amap, unsigned long long* trace) {
  extern __shared__ __align__(128) unsigned char tiled_smem_raw[];  // 128: tensor-copy destinations
  TiledCta<T, kAsync, kHalf, kTrace> cta(TiledSmem(tiled_smem_raw), a, lda, n, tt, state, forms, st, offset, hl, &amap,
                                         trace);
  const std::int64_t ntasks = tiled_task_count(tt);
  cta.init_barriers();
  int* const sint = cta.sint;
  for (;;) {
    __syncthreads();  // sint is reused
    if (cta.tid == 0) {
      sint[kSlotTask] = static_cast<int>(atomicAdd(cta.next, 1u));
      sint[kSlotAbort] = ld_acquire(cta.abort);
    }
    __syncthreads();
    const std::int64_t t = static_cast<unsigned int>(sint[kSlotTask]);
    const int ab = sint[kSlotAbort];
    if (t >= ntasks) return;
    const int2 ij = order[t];
    const std::int64_t i = ij.x, j = ij.y;
    const std::int64_t tix = cta.tix_of(i, j);  // column-major index (flags, trace)
    if (cta.tid == 0) cta.stamp(tix, 0);
    if (i != j) {
      cta.offdiagonal_task(i, j, ab, tix);
      continue;
    }
    cta.diagonal_task(j, ab, tix);
  }
}

}  // namespace gemflow::linalg::cuda::detail
