#pragma once
// Cholesky factorisations on a CUDA GPU: launcher header, usable from plain C++ (no CUDA header;
// the stream is gemflow::cuda::Stream, i.e. cudaStream_t).
//
// Layout: every matrix is COLUMN-MAJOR (cuBLAS/LAPACK convention), element (i, j) at
// a[i + j * lda], lda ≥ n, all pointers are DEVICE pointers unless a name says `host`.
// Only the LOWER triangle (i ≥ j) is used and, for factorisations, overwritten with L such that
// A = L Lᵀ; the strict upper triangle keeps its values and no result depends on them (the
// tensor-core panels, PanelAlgo::tiles, copy the diagonal blocks' strict upper triangles aside and
// back around their in-place update GEMMs: a read and a write of the same values, which
// compute-sanitizer initcheck reports where they were never written). A row-major n×n buffer read as
// column-major is Aᵀ: its row-major lower triangle is the column-major upper one, so a row-major
// caller must mirror the lower triangle into the upper one first (or pass a transposed copy).
//
// Errors: std::invalid_argument for bad sizes / options; CudaError (gemflow/cuda/error.hpp) for every failed
// CUDA, cuBLAS or cuSOLVER call (the text names the call, file:line and the error string) and
// for too little device memory (checked with cudaMemGetInfo before any allocation). A matrix
// that is not positive definite is NOT an exception: it is reported like LAPACK's INFO.
//
// Sources:
//  - blocked: LAPACK dpotrf (right-looking: POTRF diagonal block, TRSM panel, SYRK trailing).
//  - recursive: Gustavson, "Recursion leads to automatic variable blocking for dense
//    linear-algebra algorithms", IBM J. Res. Dev. 41(6), 1997; Ahmad & Peise, "Recursive
//    algorithms for dense linear algebra: the ReLAPACK collection", 2016 (RELAPACK_dpotrf):
//    halves of POTRF / TRSM / SYRK so that almost all flops land in large GEMMs.
//  - cusolver: cusolverDn<t>potrf, the baseline and fallback.
//  - lookahead: Kurzak & Dongarra, "Implementing linear algebra routines on multi-core
//    processors with pipelining and a look-ahead", PARA 2006; Tomov, Dongarra & Baboulin,
//    "Towards dense linear algebra for hybrid GPU accelerated manycore systems", Parallel
//    Computing 36 (2010) (MAGMA dpotrf): the next panel's critical path overlaps the update.
//  - tiled: tile algorithms with dataflow scheduling (Buttari, Langou, Kurzak & Dongarra, Parallel
//    Computing 35 (2009)) in one persistent kernel of our own, see tiled_kernels.cuh.
//  - tensor-core panels (PanelAlgo::tiles): our own kernel, see panel_kernels.cuh; TRSM through
//    inverted diagonal blocks as in Du Croz & Higham, IMA J. Numer. Anal. 12 (1992).
//  - 3×TF32: Ootomo & Yokota, "Recovering single precision accuracy from Tensor Cores while
//    surpassing the FP32 theoretical peak performance", IJHPCA 2022 (hi/lo split, three TF32
//    products, the lo·lo term dropped); their FP16 variant (lo scaled by 2¹¹) for 3×FP16.
//  - FP16 modes' equilibration: Higham, Pranesh & Zounon, "Squeezing a matrix into half precision,
//    with an application to solving linear systems", SIAM J. Sci. Comput. 41 (2019) (two-sided
//    diagonal scaling before rounding to fp16; here by powers of two, so exact).
//  - mixed solve: Langou et al., "Exploiting the performance of 32 bit floating point arithmetic
//    in obtaining 64 bit accuracy", SC 2006 (LAPACK dsposv); Haidar et al., SC 2018.
//  - pivoted: LAPACK dpstf2 (Higham 1990; Lucas, LAPACK Working Note 161).
#include <cstddef>
#include <cstdint>
#include <functional>
#include <limits>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include <gemflow/cuda/error.hpp>
#include <gemflow/cuda/stream.hpp>
#include <gemflow/linalg/cholesky.hpp>  // PivotedCholesky (the same result type as the CPU path)

namespace gemflow::linalg::cuda {

/// A cudaStream_t. Every call enqueues its work on this stream; calls that return host results
/// (info, ranks, refinement history) synchronise that stream before returning.
using Stream = ::gemflow::cuda::Stream;

/// A failed CUDA / cuBLAS / cuSOLVER call, or too little device memory (the SDK's one CUDA error).
using CudaError = ::gemflow::cuda::CudaError;

/// Number of usable CUDA devices; 0 when there is no driver or no device. Never throws.
[[nodiscard]] int device_count() noexcept;

enum class CholeskyAlgo {
  blocked,    ///< iterative right-looking reference (cuSOLVER POTRF on nb×nb, cuBLAS TRSM/SYRK)
  recursive,  ///< recursive halves down to a tuned base case; GEMMs through cuBLAS (default)
  cusolver,   ///< one cusolverDn<t>potrf call (n = 1: our correctly rounded √a11, see cholesky.cu)
  lookahead,  ///< right-looking, nb-wide panels, lookahead one panel deep on two streams: the
              ///< panel (see PanelAlgo) and the next block column on a high-priority stream while
              ///< the rest of the trailing update runs on a low-priority one; the last trailing
              ///< matrix (order ≤ 5120, 1×FP16 8192: CholeskyOptions::tiled_tail) by the tiled kernel.
              ///< fp64 and exact fp32 with tensor-core panels: two panels deep, the next block column updated
              ///< as the panel's column groups finish, the one after it on a third stream, the
              ///< bulk update (fp64) over two low-priority streams.
              ///< Fastest of these from n ≈ 9k in fp64, 6.5k in fp32 (H200: 1.43× cuSOLVER dpotrf
              ///< at 8k, 1.31× at 12k, 1.08–1.30× at 16k–32k; exact fp32 1.36× spotrf at 6k,
              ///< 1.26× at 8k, 1.08–1.13× at 16k–32k; 1×FP16 3.1× at 8k, 4.35× at 16k, 7.0× at 32k)
  tiled,      ///< 64×64 tiles, one persistent launch, dependencies through flags, every product on
              ///< the fp64 tensor cores (fp32 data factored in fp64 and rounded once); see
              ///< tiled_kernels.cuh. Fastest of these below n ≈ 9k in fp64 (H200: 1.71–1.89×
              ///< cuSOLVER dpotrf at 4k–6k, 1.64× at 7k, 1.50× at 8k; fp32 data 1.1–1.35× spotrf at 4k–8k with
              ///< 4–5× smaller backward error; docs/performance.md). Workspace: 68 KiB per 64 rows
              ///< and 12 bytes per 64×64 tile. fp32_mode exact, or fp16: the tile updates are then
              ///< FP16 products of fp16 copies of the solved tiles (8 KiB more per tile), fp32 sums
              ///< per 64 columns (H200: 1.31× spotrf at 4k, 3.07× at 8k); other modes throw
              ///< std::invalid_argument. The other options are ignored.
};

/// How an fp32 factorisation does its products (ignored for fp64): the TF32 modes need
/// CholeskyAlgo::recursive or lookahead, the FP16 modes lookahead with tensor-core panels (fp16
/// also tiled); blocked and cusolver accept only `exact` (std::invalid_argument otherwise).
enum class Fp32Mode {
  exact,   ///< cublasSgemm (IEEE fp32 FMA, no tensor cores)
  tf32x3,  ///< accuracy restored: A·Bᵀ ≈ Ahi·Bhiᵀ + Ahi·Bloᵀ + Alo·Bhiᵀ on TF32 tensor cores
  tf32,    ///< one TF32 product (≈ 1e-3 relative error; for refinement solves only); every
           ///< product, TRSM leaves and panel updates included, on the TF32 tensor cores
  /// FP16 tensor cores (2.6× the TF32 GEMM rate on an H200) on an equilibrated matrix:
  /// A ← S·A·S with S = diag(2^e_i) such that s_i²·a_ii ∈ [0.5, 2) (exact: powers of two; |l_ij| ≤ 1.42
  /// then, far inside fp16's ±65504), factored, then L ← S⁻¹·L. Each finished panel is rounded to
  /// fp16 (saturating, so a non-SPD input cannot overflow to Inf) and every trailing and sub-panel
  /// update is a cuBLAS fp16 GEMM accumulating in fp32 (in the tiled kernel and the lookahead's
  /// tiled tail, fp16: FP16 MMA on fp16 copies of the tiles). CholeskyAlgo::lookahead with
  /// tensor-core panels, or (fp16) tiled; std::invalid_argument otherwise. fp16: one product (hi = fp16(x): the same
  /// 11-bit significand as TF32, so the accuracy of `tf32`); fp16x3: accuracy restored as Ootomo
  /// & Yokota's FP16 variant, A·Bᵀ ≈ Ahi·Bhiᵀ + 2⁻¹¹(Ahi·B'loᵀ + A'lo·Bhiᵀ), lo' = fp16((x − hi)·2¹¹).
  fp16,
  fp16x3,
};

/// True for the modes that run their products on the FP16 tensor cores.
[[nodiscard]] constexpr bool is_fp16_mode(Fp32Mode m) noexcept { return m == Fp32Mode::fp16 || m == Fp32Mode::fp16x3; }

/// Whether `algo` factors fp32 data with the products of `mode`: exact with every algorithm; the
/// TF32 modes with recursive and lookahead; the FP16 modes with lookahead (with tensor-core panels:
/// PanelAlgo::library refuses them), 1×FP16 also with tiled (FP16 tile updates). The one rule
/// GpuCholesky::factor, solve_mixed and the nodes check.
[[nodiscard]] constexpr bool algo_runs_mode(CholeskyAlgo algo, Fp32Mode mode) noexcept {
  switch (mode) {
    case Fp32Mode::exact: return true;
    case Fp32Mode::tf32x3:
    case Fp32Mode::tf32: return algo == CholeskyAlgo::recursive || algo == CholeskyAlgo::lookahead;
    case Fp32Mode::fp16x3: return algo == CholeskyAlgo::lookahead;
    case Fp32Mode::fp16: return algo == CholeskyAlgo::lookahead || algo == CholeskyAlgo::tiled;
  }
  return false;
}

/// The algorithms that run `mode` (algo_runs_mode), as error messages name them.
[[nodiscard]] constexpr const char* algos_running_mode(Fp32Mode mode) noexcept {
  switch (mode) {
    case Fp32Mode::exact: return "any";
    case Fp32Mode::tf32x3:
    case Fp32Mode::tf32: return "recursive or lookahead";
    case Fp32Mode::fp16x3: return "lookahead";
    case Fp32Mode::fp16: return "lookahead or tiled";
  }
  return "?";
}

/// "exact", "3xTF32", "1xTF32", "1xFP16" or "3xFP16".
[[nodiscard]] constexpr const char* fp32_mode_name(Fp32Mode m) noexcept {
  switch (m) {
    case Fp32Mode::exact: return "exact";
    case Fp32Mode::tf32x3: return "3xTF32";
    case Fp32Mode::tf32: return "1xTF32";
    case Fp32Mode::fp16: return "1xFP16";
    case Fp32Mode::fp16x3: return "3xFP16";
  }
  return "?";
}

/// What distinguishes one card's tuning from another's: the compute capability, the SM count and
/// the peak memory bandwidth (GB/s, from the memory clock and bus width).
struct DeviceTraits {
  int cc_major = 0, cc_minor = 0;
  int sms = 0;
  double bandwidth_gbs = 0.0;
};

/// Where CholeskyAlgo `auto` (linalg.cholesky, linalg.spd_solve) switches from the tiled kernel
/// to the lookahead: tiled for n < tiled_below, lookahead from it (the mixed solve's FP16 factor
/// is always the lookahead). One row per measured card (docs/performance.md, "Per-card
/// dispatch"): each was the crossover of interleaved runs of both algorithms on that card.
struct AutoDispatch {
  std::string row;                    ///< the table row: "H200", "H100", or the fallback's name
  std::int64_t tiled_below_fp64 = 0;  ///< n (order)
  std::int64_t tiled_below_fp32 = 0;  ///< n, fp32 data (the tiled kernel factors in fp64)
};

/// The H100 row's crossovers (docs/performance.md, "Per-card dispatch").
inline constexpr std::int64_t kH100TiledBelowFp64 = 8192, kH100TiledBelowFp32 = 6656;

/// The table row for a card. Hopper (9.0) with 132 SMs: H200 when its bandwidth is ≥ 4 TB/s
/// (HBM3e, 4.8 TB/s), else H100 (HBM3, 3.35 TB/s). Any other card takes the H100 row, named
/// "H100 (fallback: cc X.Y, N SMs)": the lower-bandwidth Hopper's crossovers are the earlier
/// ones, and the lookahead (cuBLAS GEMMs) degrades more gracefully on an unmeasured card than
/// the tiled kernel (tuned for 132 SMs and 227 KiB of shared memory).
[[nodiscard]] inline AutoDispatch auto_dispatch(const DeviceTraits& d) {
  const bool hopper132 = d.cc_major == 9 && d.cc_minor == 0 && d.sms == 132;
  if (hopper132 && d.bandwidth_gbs >= 4000.0) return {"H200", 9216, 6656};
  AutoDispatch h100{"H100", kH100TiledBelowFp64, kH100TiledBelowFp32};
  if (!hopper132)
    h100.row = "H100 (fallback: cc " + std::to_string(d.cc_major) + "." + std::to_string(d.cc_minor) + ", " +
               std::to_string(d.sms) + " SMs)";
  return h100;
}

/// The traits of CUDA device `device` (CudaError when it cannot be queried).
[[nodiscard]] DeviceTraits device_traits(int device);

/// How CholeskyAlgo::lookahead factors each nb-wide panel (the diagonal block and the rows below).
enum class PanelAlgo {
  automatic,  ///< tiles, for every precision and mode (H200 sweeps,
              ///< docs/performance.md)
  tiles,      ///< left-looking over 128-column sub-panels: one cuBLAS GEMM applies a sub-panel's
              ///< update in place (the diagonal blocks' strict upper triangles are saved and put
              ///< back), then one fp64 tensor-core kernel factors the 128×128 diagonal block (its
              ///< 8×8 tiles in fp32 in the 1×FP16 and 1×TF32 modes) and solves the rows below
              ///< through the inverted 8×8 diagonal tiles (panel_kernels.cuh)
  library,    ///< cuSOLVER potrf of the diagonal block (the recursive algorithm when `base` < nb),
              ///< then the recursive TRSM over cuBLAS
};

/// Tuning and algorithm choice. Sizes of 0 select the tuned defaults (docs/performance.md).
struct CholeskyOptions {
  CholeskyAlgo algo = CholeskyAlgo::recursive;
  Fp32Mode fp32_mode = Fp32Mode::exact;
  /// recursive: POTRF leaves of at most this order (cuSOLVER). lookahead with library panels:
  /// the diagonal blocks are factored by the recursive algorithm with this base; 0 = nb, one
  /// cuSOLVER potrf each (unused by tensor-core panels).
  std::int64_t base = 0;
  std::int64_t trsm_base = 0;  ///< recursive: TRSM leaves of at most this order (cuBLAS trsm)
  /// recursive and lookahead: SYRK leaves of at most this order (0: 1024; lookahead with fp64
  /// tensor-core panels: 2048; fp32 1×TF32 and 1×FP16 2048, 3×TF32 and 3×FP16 4096, where a leaf is
  /// one tensor-core GEMM of the full square into scratch whose lower triangle is then
  /// subtracted, cuBLAS SSYRK having no tensor-core path)
  std::int64_t syrk_base = 0;
  /// blocked / lookahead: panel width nb. 0: 256 (blocked); lookahead with tensor-core panels
  /// fp64 and exact fp32 512 below n = 6144, 1024 below 12288, 1536 below 16384, else 2048; fp32
  /// TF32 modes and 3×FP16 1024 below n = 12288, else 2048 (3×FP16: 1536); 1×FP16 1024 below 6144,
  /// 2048 below 13312, 3072 below 20480, else 4096; with library panels 2048.
  std::int64_t block = 0;
  PanelAlgo panel = PanelAlgo::automatic;  ///< lookahead only
  /// tiled: at most this many CTAs (0: as many as fit on the device, two per SM). Fewer leave SMs
  /// to other work; any count ≥ 1 completes (the task order is topological).
  std::int64_t tiled_ctas = 0;
  /// lookahead with tensor-core panels: CTAs of each panel kernel after the first, which runs beside
  /// a bulk update. 0: fp64 and exact fp32 16 while at least 12288 columns remain, else one per
  /// 128-row strip (H200, docs/performance.md); > 0: at most this many; < 0: one per strip. Every
  /// CTA factors the panel's diagonal block itself, so fewer leave SMs to the bulk update and
  /// lengthen the panel chain. The factor is the same bit for bit.
  std::int64_t panel_ctas = 0;
  /// lookahead: once the trailing matrix is at most this order, it is factored by the tiled
  /// kernel (CholeskyAlgo::tiled, one persistent launch, fp64 arithmetic; 1×FP16: FP16 tile
  /// updates) instead of further panels; the first panel always runs, except in 1×FP16, whose
  /// tiled kernel then factors the whole matrix. 0: the default, 5120, 1×FP16 8192 (H200 sweeps,
  /// docs/performance.md); < 0: never.
  std::int64_t tiled_tail = 0;
};

/// Instruments and experiments for benchmarks and profiling (bench/cholesky_timeline.cu), set on a
/// GpuCholesky with set_probe(); production code leaves it unset. Every field's default is the
/// library's own choice, so that without a probe, or with a default one, factor and solve_mixed
/// compute the same results bit for bit, at the same speed. The steps themselves are always NVTX
/// ranges (gemflow/cuda/nvtx.hpp: "cholesky lookahead", "panel", "bulk", ... in the "gemflow"
/// domain), visible with `nsys profile --trace=cuda,nvtx` and free without a profiler; this struct
/// adds what NVTX cannot give: device time per step, in-kernel stamps, and schedule experiments.
struct CholeskyProbe {
  /// Called on the host right after a step of the lookahead schedule or of solve_mixed has been
  /// enqueued on `stream`, with the step's name (a string literal: "panel", "next column", "ahead
  /// column", "bulk start", "bulk", "sub-update", "sub-panel", "tiled tail"; solve_mixed: "demote,
  /// norms", "fp32 factor", "inverted blocks", "start of step", "solve pair", "symv", "eta, sync")
  /// and its first column (0 for solve_mixed). Record a CUDA event on `stream` to time the step.
  /// Exceptions propagate out of factor / solve_mixed (the streams are joined first).
  std::function<void(Stream stream, const char* step, std::int64_t column)> on_step;

  /// Stamps per tiled-kernel task in tiled_trace (below).
  static constexpr int kTiledTraceSlots = 11;
  /// CholeskyAlgo::tiled (and the lookahead's tiled tail), fp64 and fp32 1×FP16 only (fp32 data
  /// in another mode with algo tiled or lookahead: std::invalid_argument): when not null, a second instantiation of the
  /// kernel in which thread 0 of a task's CTA writes the global timer (ns) at each step of task t (column-major tile
  /// index: t = j·tt − j(j − 1)/2 + i − j for tile (i, j), tt = ⌈n/64⌉) into tiled_trace[t·11 + slot]: 0 taken, 1 last
  /// update's operands ready, 2 updates done, 3 the flag of L_jj (diagonal task: L_{j−1,j−1}) seen, 4 its flag set, 5
  /// the SM's id; diagonal tasks also 6 tile (j, j − 1) released, 7 factor started, 8 factor done, 9 the form of
  /// L_{j−1,j−1} loaded, 10 the solve of tile (j, j − 1) computed. A device array of tt(tt + 1)/2 · 11 entries; slots
  /// not reached are left as they were (zero them first). The untraced kernel is unchanged.
  unsigned long long* tiled_trace = nullptr;

  // ---- schedule experiments (the defaults are the library's tuned choices) ----
  double tiled_slope = 0;   ///< slope of the tiled task order (tiled_task_order); 0: the library's
  bool tiled_async = true;  ///< fp64 tiled: the tensor-copy update pipeline where the layout allows it
  bool bulk = true;         ///< false: the lookahead WITHOUT its bulk updates (wrong factor: the panel chain alone)
  bool serial = false;      ///< lookahead: the bulk updates on the panel stream (same factor, no overlap)
  bool bulk_split = true;   ///< fp64 lookahead: each bulk update over two streams
  bool depth2 = true;       ///< fp64 and exact fp32 with tensor-core panels: the lookahead two panels deep
  int next_groups = 0;      ///< lookahead two deep: column groups of the next block column (0: the library's)
  /// CholeskyOptions::panel_ctas = 0: the cap on a panel kernel's CTAs beside the bulk update
  /// (−1: the library's, 16; 0: none) while at least panel_cap_from columns remain (−1: the
  /// library's, 12288).
  int panel_cap = -1;
  std::int64_t panel_cap_from = -1;
};

/// Outcome of a factorisation, with LAPACK's INFO convention.
struct CholeskyStatus {
  /// 0: success. k ≥ 1: the leading minor of order k is not positive definite (its pivot was
  /// ≤ 0 or NaN); L is complete in columns < k−1 only, the rest of the lower triangle is
  /// undefined.
  std::int64_t info = 0;
  /// A NaN or Inf was found (info is then ≥ 1, never 0): in the factor or as the failing pivot
  /// (a NaN/Inf in A's lower triangle always reaches one of them unless an earlier minor fails
  /// first); recursive, blocked and cusolver also scan all of A's lower triangle first. Then no
  /// column of L is guaranteed: the tensor-core kernels multiply by exact zeros (0·Inf = NaN), so
  /// a non-finite entry can reach the earlier columns of its 8-column tile.
  bool non_finite = false;
  [[nodiscard]] bool ok() const noexcept { return info == 0; }
  /// "ok", "leading minor of order k is not positive definite", or "... (NaN/Inf)".
  [[nodiscard]] std::string message() const;
};

/// Mixed-precision SPD solve options.
struct MixedSolveOptions {
  /// Algorithm of the fp32 factor: lookahead, recursive, or tiled with factor_mode fp16 or exact
  /// (an escalation to fp16x3 then runs the lookahead); std::invalid_argument otherwise.
  CholeskyAlgo factor_algo = CholeskyAlgo::lookahead;
  /// How the fp32 factor does its GEMMs. fp16 (default) is fastest (H200, n = 16384: factor
  /// 9.2 ms with its FP16 tiled tail, tf32 15.5 ms, fp16x3 17.3 ms, tf32x3 37 ms) but its classic
  /// refinement converges only for κ(A) up to about 1e4–1e5; the three-product modes keep the
  /// factor at fp32 accuracy (classic refinement up to κ ≈ 1e6, GMRES-IR far beyond: see
  /// `escalate` and `gmres`). fp16 and
  /// fp16x3 need factor_algo = lookahead (fp16 also tiled; recursive: use tf32 or tf32x3).
  Fp32Mode factor_mode = Fp32Mode::fp16;
  /// factor_mode fp16 or tf32 only: when the one-product factor fails or its refinement has not
  /// converged within kEscalateSteps steps (stalled or slow), factor again with three products
  /// (fp16x3, tf32x3) and refine on from the current x, before any fp64 fallback.
  bool escalate = true;
  static constexpr int kEscalateSteps = 4;
  /// When refinement with the final fp32 factor is slow (a step does not halve η, or more than 4
  /// steps), switch to GMRES-IR: each correction A d = r solved by FGMRES in fp64 (up to 50
  /// iterations, to ‖r − A d‖₂ ≤ 1e-6·‖r‖₂), right-preconditioned by the fp32 factor (Carson &
  /// Higham, SIAM J. Sci. Comput. 40 (2018) A817; Haidar et al., SC18). It converges for κ(A)
  /// well beyond classic refinement's reach (H200, n = 600, 3×FP16 factor: up to κ ≈ 3e11, where
  /// classic refinement falls back from κ ≈ 1e7; docs/performance.md), before any fp64 fallback.
  /// Its steps count in max_iterations.
  bool gmres = true;
  /// Panels of a lookahead factor (CholeskyOptions::panel).
  PanelAlgo factor_panel = PanelAlgo::automatic;
  int max_iterations = 30;  ///< refinement steps before the fp64 fallback (LAPACK dsposv: 30)
  /// Stop when the normwise backward error η ≤ tolerance; < 0 selects √n · 2⁻⁵³ (dsposv).
  double tolerance = -1.0;
  /// Once η ≤ tolerance: when the componentwise backward error ω = max_i |r_i| / (|A|·|x| + |b|)_i
  /// (Oettli–Prager, LAPACK dporfs's BERR) exceeds this, further plain steps lower ω toward the
  /// tolerance, each solving the residual by exponent bands (one fp32 solve per band), kept only
  /// when it keeps η ≤ tolerance and lowers ω, the next only when it halved ω. 2⁻¹²: when the fp32
  /// solves lost some component; 0: always; ≥ 1: never. A band whose fp32 correction overflows is
  /// solved again 2⁶⁴ lower (up to three times). Once η has converged, ω takes one SYMV pass per
  /// column, only when its bound ω̂ exceeds the threshold; ω still above the threshold and the
  /// tolerance after the steps: not converged (the fp64 fallback). Columns of b below 2⁻⁶⁰⁰ are
  /// refined as b·2^k. See linalg::RefinementOptions::componentwise_threshold.
  double componentwise_threshold = 0x1p-12;
  bool fallback_fp64 = true;  ///< on non-convergence / fp32 failure: cuSOLVER fp64 potrf+potrs
};

/// Result of a mixed-precision solve.
struct MixedSolveResult {
  /// η_k = max over right-hand sides of ‖b − A x_k‖∞ / (‖A‖∞ ‖x_k‖∞ + ‖b‖∞) (Rigal–Gaches
  /// normwise backward error), k = 0 after the first fp32 solve, then one per refinement step
  /// (across an escalation, then after the fp64 fallback's solve).
  std::vector<double> backward_error;
  int iterations = 0;      ///< refinement steps taken (corrections applied after the first solve)
  bool converged = false;  ///< the refinement reached the tolerance
  bool used_fp64_fallback = false;
  /// the one-product factor was replaced by a three-product one (MixedSolveOptions::escalate)
  bool escalated = false;
  /// index in backward_error of the first η with the three-product factor (−1: no escalation, or
  /// the three-product factor failed too, `escalated` then true; 0: the one-product factor
  /// failed, no step ran with it)
  int escalation_step = -1;
  int gmres_steps = 0;                    ///< refinement steps that were GMRES-IR (MixedSolveOptions::gmres)
  int gmres_iterations = 0;               ///< FGMRES iterations over those steps (one fp32 solve and one A·v each)
  Fp32Mode factor_mode = Fp32Mode::fp16;  ///< the mode of the last fp32 factor
  CholeskyStatus fp32_status;             ///< status of the (last) fp32 factorisation
  CholeskyStatus status;                  ///< final status (info ≥ 1: A is not SPD even in fp64)
  double tolerance = 0.0;                 ///< the tolerance used
  int componentwise_steps = 0;            ///< steps after η converged, to lower ω (counted in iterations)
  /// ω of the returned x when the fp32 refinement converged; NaN otherwise, and NaN when the bound
  /// ω̂ = max_i |r_i| / max(|b_i|, |a_ii·x_i|) ≥ ω (the SYMV's, or an entrywise kernel's for more
  /// right-hand sides) was already within componentwise_threshold, or the threshold is ≥ 1 (ω then
  /// needs no pass of its own)
  double componentwise_backward_error = std::numeric_limits<double>::quiet_NaN();
};

/// Cholesky factorisations bound to one stream. Owns a cuBLAS and a cuSOLVER handle and
/// workspaces that grow on demand (device memory checked before each growth) and are kept until
/// the object is destroyed. Not thread-safe: use one object per host thread / stream.
class GpuCholesky {
 public:
  /// Binds to the current CUDA device and to `stream` (nullptr: the legacy default stream).
  explicit GpuCholesky(Stream stream);
  ~GpuCholesky();
  GpuCholesky(const GpuCholesky&) = delete;
  GpuCholesky& operator=(const GpuCholesky&) = delete;

  /// A = L Lᵀ in place (lower, column-major, see the file comment). n ≥ 0, lda ≥ max(1, n).
  /// Synchronises the stream and returns the status. Deterministic for a given device,
  /// library version and options (no atomics in the arithmetic).
  CholeskyStatus factor(double* a, std::int64_t n, std::int64_t lda, const CholeskyOptions& options = {});
  CholeskyStatus factor(float* a, std::int64_t n, std::int64_t lda, const CholeskyOptions& options = {});

  /// `batch` independent factorisations in one launch: matrix b at a + b·stride (column-major,
  /// lda ≥ n, stride ≥ lda·n), 1 ≤ n ≤ 512. n ≤ 64: in registers (n ≤ 8: 4 or 8 lanes per
  /// matrix, one row per lane, shuffles; fp64 n ≤ 16 and fp32 n ≤ 28: one row per thread, 16 or
  /// 32 threads per matrix, columns broadcast through shared memory, pivot j+1 overlapped with
  /// the updates of step j; fp64 17–64 and fp32 29–64: one warp per matrix, 8×8 tiles updated by
  /// the fp64 tensor cores, right-looking for fp64 17–24 and left-looking otherwise; fp32 data is
  /// factored in fp64 and rounded once, but for n = 29–32 and n ≥ 41 the 8 pivots of each
  /// diagonal tile run in fp32);
  /// larger: left-looking panels in shared memory. Kernels chosen per size from H200
  /// measurements (docs/performance.md); needs sm_80 or newer (the plugin builds for sm_90 by
  /// default). Returns info per matrix (LAPACK convention; a NaN pivot counts as not positive;
  /// fp32 33–40 tests its pivots in fp64, so a pivot that rounds to ≤ 0 only in fp32 arithmetic
  /// succeeds there).
  /// Synchronises the stream.
  std::vector<int> factor_batched(double* a, std::int64_t n, std::int64_t lda, std::int64_t stride, std::int64_t batch);
  std::vector<int> factor_batched(float* a, std::int64_t n, std::int64_t lda, std::int64_t stride, std::int64_t batch);

  /// factor_batched without the host round trip: enqueues the launch on the stream, writes the
  /// per-matrix info into the DEVICE array `info` (batch ints) and returns at once (no sync),
  /// like cusolverDn<t>potrfBatched. Argument errors throw before anything is enqueued.
  void factor_batched_async(double* a, std::int64_t n, std::int64_t lda, std::int64_t stride, std::int64_t batch,
                            int* info);
  void factor_batched_async(float* a, std::int64_t n, std::int64_t lda, std::int64_t stride, std::int64_t batch,
                            int* info);

  /// Pivoted (rank-revealing) Cholesky of a symmetric positive semidefinite A (lower triangle
  /// read, A not modified), stopping after `max_rank` pivots (0 = up to n) or when the largest
  /// remaining diagonal is ≤ tolerance (< 0: n·ε·max diag A). Exactly the steps of LAPACK dpstf2
  /// and of the CPU gemflow::linalg::pivoted_cholesky (largest remaining diagonal, lowest
  /// position on ties). Outer-product, one thread block, O(n·r²) work for r pivots: meant for
  /// small r (the distance-geometry embedding asks for 3–4). On return l (n × min(max_rank, n)
  /// columns, max_rank 0: n; ldl ≥ n) holds L in pivot order, zero above its diagonal and in columns ≥ rank:
  /// A(perm[i], perm[j]) ≈ Σ_k l(i,k) l(j,k). Throws CudaError naming the first non-finite
  /// diagonal when the Schur complement becomes NaN/Inf. Synchronises the stream.
  PivotedCholesky factor_pivoted(const double* a, std::int64_t n, std::int64_t lda, std::int64_t max_rank,
                                 double tolerance, double* l, std::int64_t ldl);

  /// factor_pivoted with the pivots restricted to the rows r (ORIGINAL index) with
  /// allowed[r] != 0; `allowed` is a DEVICE array of n flags, nullptr = every row (the overload
  /// above). Exactly the steps of the CPU gemflow::linalg::pivoted_cholesky_restricted: each
  /// step pivots on the allowed row with the largest remaining Schur-complement diagonal (lowest
  /// position in the current pivot order on ties); every row is still eliminated, so l is the
  /// Nyström factor on the chosen columns and `permutation` lists the pivots first. Stops after
  /// max_rank pivots (0 = as many as there are allowed rows), or when the largest allowed
  /// diagonal is ≤ tolerance (rank_deficient, next_pivot = that diagonal), or when no allowed
  /// row is left (rank_deficient, next_pivot = −∞); otherwise next_pivot = the largest allowed
  /// remaining diagonal (−∞ when none; 0 when rank = n). tolerance < 0: n·ε·max diag A over all
  /// rows. l: n × (max_rank ? min(max_rank, n) : n) columns, zero in columns ≥ rank. A NaN/Inf
  /// remaining diagonal in ANY row (allowed or not) throws CudaError. Synchronises the stream.
  /// Source: as the CPU function (Harbrecht, Peters & Schneider, Appl. Numer. Math. 62 (2012) 428).
  PivotedCholesky factor_pivoted(const double* a, std::int64_t n, std::int64_t lda, std::int64_t max_rank,
                                 double tolerance, double* l, std::int64_t ldl, const unsigned char* allowed);

  /// Solves A X = B (A n×n SPD, lower triangle read, B and X n×nrhs, fp64): factor a fp32 copy
  /// of A (options.factor_algo and factor_mode; by default 1×FP16 escalating to 3×FP16, see
  /// MixedSolveOptions), solve in fp32 (one right-hand side: our synchronisation-free blocked
  /// triangular solves, trsv_kernels.cuh; more: cuBLAS STRSM), then refine in fp64 (residuals with
  /// our deterministic SYMV, symv_kernels.cuh, or cublasDsymm for more right-hand sides; GMRES-IR
  /// when that is slow, see MixedSolveOptions::gmres) until the backward error is at fp64 level,
  /// else fall back to cuSOLVER fp64 potrf + potrs. A and B are not modified; the fp32 copy and
  /// the SYMV's partials (2·⌈n/64⌉·n doubles) stay in this object's workspace for the next call
  /// (workspace_bytes()). One right-hand side: the first step is queued behind the factor and each
  /// next step's solve before the host has read η, both skipped on the device when not wanted, so
  /// the stream holds no host round trip between steps; x is written only by steps that run.
  /// Each column that goes to the fp32 solve (of B, of a residual) is first scaled by a power of
  /// two, exactly, to a largest entry near √‖A‖∞ (FP16 modes: near 1, their S·A·S has a unit
  /// diagonal), and the correction scaled back: right-hand sides and residuals far outside fp32's
  /// range (1e-40, 1e300), and A of 1e±33 with κ of 1e5, refine in fp32.
  MixedSolveResult solve_mixed(const double* a, std::int64_t n, std::int64_t lda, const double* b, std::int64_t ldb,
                               std::int64_t nrhs, double* x, std::int64_t ldx, const MixedSolveOptions& options = {});

  /// Benchmarks and profiling: the probe used by the next calls (nullptr: none, the default); the
  /// caller keeps it alive while it is set.
  void set_probe(const CholeskyProbe* probe) noexcept;

  [[nodiscard]] Stream stream() const noexcept;
  /// Device bytes the workspaces hold now: the factorisation scratch, and after solve_mixed its
  /// fp32 copy of A, the norm and SYMV partials and vectors (about 4.375·n² bytes; a solve that needs
  /// ω exactly holds 0.25·n² more while it runs), kept for the next call.
  [[nodiscard]] std::size_t workspace_bytes() const noexcept;

  struct Impl;

 private:
  std::unique_ptr<Impl> impl_;
};

// ---- Utilities for tests and benchmarks ----------------------------------------------------

/// Fills the lower triangle of a (n×n, lda) with a symmetric random R + shift·I: R(i, j) uniform
/// in (−1, 1) from a hash of (seed, min(i,j), max(i,j)), so the fp32 and fp64 fills of one seed
/// agree to rounding. R's spectrum lies in about ±1.155·√n (Wigner semicircle, variance 1/3):
/// shift = 1.3·√n gives an SPD matrix with κ ≈ 17. Asynchronous on `stream`.
void fill_random_symmetric(double* a, std::int64_t n, std::int64_t lda, double shift, std::uint64_t seed,
                           Stream stream);
void fill_random_symmetric(float* a, std::int64_t n, std::int64_t lda, double shift, std::uint64_t seed, Stream stream);

/// Probe estimate of the backward error of a factor, in fp64: max over `probes` random vectors v
/// of ‖A v − L (Lᵀ v)‖₂ / (‖A‖_F ‖v‖₂), A symmetric from the lower triangle of a, L the lower
/// triangle of l. O(n²) per probe. Synchronises the stream.
double probe_backward_error(const double* a, std::int64_t lda, const double* l, std::int64_t ldl, std::int64_t n,
                            int probes, Stream stream);
double probe_backward_error(const float* a, std::int64_t lda, const float* l, std::int64_t ldl, std::int64_t n,
                            int probes, Stream stream);

/// The mixed solve's triangular solves with one right-hand side: x ← L⁻ᵀ·L⁻¹·x in place, L the
/// lower triangle of l (n×n fp32, column-major, ld ldl ≥ n; rows ≥ n of the padding are never
/// read), x n floats, both on the device. Block-row solves of 128 rows, one CTA per block, each
/// waiting on the values the earlier blocks publish, through inverted diagonal blocks
/// (trsv_kernels.cuh; Liu et al., Euro-Par 2016; Du Croz & Higham 1992); products of one tile
/// row summed in fp32, everything else in fp64. A temporary workspace of about 1032·n bytes
/// (checked against free memory first); synchronises the stream. Throws std::invalid_argument for
/// n < 0, ldl < max(1, n) or a null pointer, CudaError on a CUDA error or too little memory.
void triangular_solve_pair(const float* l, std::int64_t ldl, std::int64_t n, float* x, Stream stream);

}  // namespace gemflow::linalg::cuda
