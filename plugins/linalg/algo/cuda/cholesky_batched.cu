// Batched Cholesky of many small SPD matrices in one launch (lower, column-major).
// n ≤ 8: 4 or 8 lanes per matrix, one row per lane in registers, warp shuffles.
// 8 < n ≤ 64: one row per thread in registers, columns broadcast through shared memory,
// software-pipelined (batched_kernels.cuh), 16 or 32 threads per matrix; fp64 17–64,
// fp32 29–64: 8×8 tiles in the accumulators of the fp64 tensor cores (DMMA), one warp per
// matrix (fp32 factored in fp64 and rounded once, but with fp32 pivots at 29–32 and from 41),
// right-looking with every tile in registers (fp64 17–24) or left-looking with one block column
// in registers and the panels in shared memory (the others; at some sizes persistent warps that
// factor one matrix after another). sm_80 or newer.
// 64 < n ≤ 512: one block per matrix, left-looking over panels of P columns held in shared
// memory; each thread owns rows and accumulates P columns in registers.
#include <cuda_runtime.h>

#include <algorithm>
#include <climits>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <vector>

#include <gemflow/cuda_smem.hpp>

#include "context.cuh"  // GpuCholesky::Impl; gemflow/cuda/ checks and buffers
#include "batched_kernels.cuh"
#include "potrf_kernels.cuh"

namespace gemflow::linalg::cuda {
namespace detail {

template <class T, int P>
__global__ void __launch_bounds__(256) potrf_batched_panel_kernel(T* a, int n, std::int64_t lda, std::int64_t stride,
                                                                  int* info) {
  extern __shared__ unsigned char smem_raw[];
  T* rows = reinterpret_cast<T*>(smem_raw);  // rows[k*P + c] = L(j0 + c, k), k < j0
  T* v = rows + static_cast<std::size_t>(P) * n;  // v[c*n + i] = panel column j0 + c, row i
  T* A = a + static_cast<std::int64_t>(blockIdx.x) * stride;
  const int tid = threadIdx.x, nt = blockDim.x;
  int fail = 0;
  for (int j0 = 0; j0 < n && !fail; j0 += P) {
    const int nb = min(P, n - j0);
    for (int idx = tid; idx < P * j0; idx += nt) {
      const int c = idx % P, k = idx / P;
      rows[k * P + c] = c < nb ? A[(j0 + c) + static_cast<std::int64_t>(k) * lda] : T(0);
    }
    __syncthreads();
    for (int i = j0 + tid; i < n; i += nt) {
      T acc[P];
#pragma unroll
      for (int c = 0; c < P; ++c) acc[c] = (c < nb && i >= j0 + c) ? A[i + static_cast<std::int64_t>(j0 + c) * lda] : T(0);
      for (int k = 0; k < j0; ++k) {
        const T l = A[i + static_cast<std::int64_t>(k) * lda];
#pragma unroll
        for (int c = 0; c < P; ++c) acc[c] -= l * rows[k * P + c];
      }
#pragma unroll
      for (int c = 0; c < P; ++c) v[c * n + i] = acc[c];
    }
    __syncthreads();
    for (int c = 0; c < nb; ++c) {
      const int jj = j0 + c;
      const T p = v[c * n + jj];
      if (bad_pivot(p)) {
        fail = jj + 1;
        break;
      }
      const T ljj = sqrt(p), inv = T(1) / ljj;
      __syncthreads();
      for (int i = jj + 1 + tid; i < n; i += nt) v[c * n + i] *= inv;
      if (tid == 0) v[c * n + jj] = ljj;
      __syncthreads();
      for (int i = jj + 1 + tid; i < n; i += nt) {
        const T li = v[c * n + i];
        for (int c2 = c + 1; c2 < nb; ++c2)
          if (i >= j0 + c2) v[c2 * n + i] -= li * v[c * n + j0 + c2];
      }
      __syncthreads();
    }
    const int done = fail ? fail - 1 - j0 : nb;
    for (int c = 0; c < done; ++c)
      for (int i = j0 + c + tid; i < n; i += nt) A[i + static_cast<std::int64_t>(j0 + c) * lda] = v[c * n + i];
    __syncthreads();
  }
  if (tid == 0) info[blockIdx.x] = fail;
}

/// One configuration of the DMMA kernels: the left-looking one (one warp per block, a register
/// cap as __launch_bounds__ minimum blocks per SM, for fp32 data the pivots in fp32 or fp64, the
/// row solve's form, the panels' swizzle, the reciprocals on L_kk's diagonal, persistent warps) or
/// the right-looking one (kWarps per block).
template <bool kLeft, int kWarps, int kMinBlocks, bool kF32Pivots, bool kRowPairs, bool kSwizzle, bool kInvDiag,
          bool kPersist>
struct DmmaCfg {
  static constexpr bool left = kLeft, f32_pivots = kF32Pivots, row_pairs = kRowPairs, swizzle = kSwizzle,
                        inv_diag = kInvDiag, persist = kPersist;
  static constexpr int warps = kWarps, minb = kMinBlocks;
};
template <int kMinBlocks = 1, bool kF32Pivots = false, bool kRowPairs = false, bool kSwizzle = false,
          bool kInvDiag = false, bool kPersist = false>
using DmmaLeft = DmmaCfg<true, 1, kMinBlocks, kF32Pivots, kRowPairs, kSwizzle, kInvDiag, kPersist>;
template <int kWarps = 1>
using DmmaRight = DmmaCfg<false, kWarps, 1, false, false, false, false, false>;

template <class T>
constexpr int panel_width() {
  return sizeof(T) == 8 ? 8 : 16;
}

template <class T>
void factor_batched_launch(GpuCholesky::Impl& ctx, T* a, std::int64_t n, std::int64_t lda, std::int64_t stride,
                           std::int64_t batch, int* info) {
  const std::string what = "GpuCholesky::factor_batched";
  if (batch < 0) throw std::invalid_argument(what + ": batch = " + std::to_string(batch) + " < 0");
  if (n < 0 || n > 512) throw std::invalid_argument(what + ": n = " + std::to_string(n) + " outside [0, 512]");
  if (batch > INT_MAX) throw std::invalid_argument(what + ": batch exceeds 2^31 - 1");
  if (batch == 0) return;
  if (info == nullptr) throw std::invalid_argument(what + ": null info pointer");
  if (n == 0) {
    GF_CUDA_TRY(cudaMemsetAsync(info, 0, sizeof(int) * static_cast<std::size_t>(batch), ctx.stream));
    return;
  }
  if (lda < n) throw std::invalid_argument(what + ": lda = " + std::to_string(lda) + " < n = " + std::to_string(n));
  if (batch > 1 && stride < lda * (n - 1) + n)
    throw std::invalid_argument(what + ": stride = " + std::to_string(stride) + " makes matrices overlap (lda·(n−1)+n = " +
                                std::to_string(lda * (n - 1) + n) + ")");
  if (a == nullptr) throw std::invalid_argument(what + ": null matrix pointer");
  const unsigned grid = static_cast<unsigned>(batch);
  const int nn = static_cast<int>(n);
  const auto reg_grid = [&](int width) { return static_cast<unsigned>((batch * width + 127) / 128); };
  // Kernel and launch shape per precision and size: the fastest measured on an H200
  // (docs/performance.md, "Batched"); the same arithmetic up to rounding in all of them.
  using std::integral_constant;
  using I1 = integral_constant<int, 1>;
  using Yes = std::true_type;
  using No = std::false_type;
  const auto bcast = [&](auto nc, auto minb, auto nan_info, auto fast) {
    constexpr int N = decltype(nc)::value, per_block = 128 / bcast_group<N>();
    const auto grid = static_cast<unsigned>((batch + per_block - 1) / per_block);
    potrf_batched_bcast_kernel<T, N, decltype(minb)::value, decltype(nan_info)::value, decltype(fast)::value>
        <<<grid, 128, 0, ctx.stream>>>(a, nn, lda, stride, batch, info);
  };
  // n = 8·NT (whole), the other n (part) and those of them whose last block column stops at n
  // (stop: n ≤ 8·NT − saved, that many padding pivots or more to skip; saved = 0: none; saved = 1:
  // every n < 8·NT, so no part kernel) are separate kernels (bounds tests compiled out), each with
  // its measured configuration (DmmaCfg).
  const auto dmma = [&](auto ntc, auto whole, auto part, auto stop, auto saved) {
    constexpr int NT = decltype(ntc)::value, S = decltype(saved)::value;
    if (n <= 8 * (NT - 1) || n > 8 * NT)  // the kernels test bounds only in their last tile row and column
      throw std::logic_error(what + ": DMMA kernel with " + std::to_string(NT) + " tiles for n = " + std::to_string(n));
    const auto launch = [&](auto cfg, auto whole_c, auto stop_c) {
      using C = decltype(cfg);
      constexpr bool kW = decltype(whole_c)::value, kS = decltype(stop_c)::value;
      auto g = static_cast<unsigned>((batch + C::warps - 1) / C::warps);
      if constexpr (C::left) {
        using P = std::conditional_t<C::f32_pivots && sizeof(T) == 4, float, double>;
        const auto kernel = potrf_batched_dmma_left_kernel<T, NT, C::warps, kW, kS, C::minb, P, C::row_pairs,
                                                           C::swizzle, C::inv_diag, C::persist>;
        if constexpr (C::persist) {  // one block per resident slot, each warp loops over matrices
          int sms = 0, per_sm = 0;
          GF_CUDA_TRY(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, ctx.device));
          GF_CUDA_TRY(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kernel, 32 * C::warps, 0));
          g = static_cast<unsigned>(std::min<std::int64_t>(g, std::int64_t{std::max(sms, 1)} * std::max(per_sm, 1)));
        }
        kernel<<<g, 32 * C::warps, 0, ctx.stream>>>(a, nn, lda, stride, batch, info);
      } else
        potrf_batched_dmma_kernel<T, NT, C::warps, kW, kS>
            <<<g, 32 * C::warps, 0, ctx.stream>>>(a, nn, lda, stride, batch, info);
    };
    if (n == 8 * NT) return launch(whole, Yes{}, No{});
    if constexpr (S == 1) {
      return launch(stop, No{}, Yes{});
    } else {
      if constexpr (S > 0) {
        if (n <= 8 * NT - S) return launch(stop, No{}, Yes{});
      }
      launch(part, No{}, No{});
    }
  };
  // The early stop (kStop): the ranges (saved) were measured with the right-looking kernel
  // (seventeenth session: fp64 n = 25 6.5 → 7.3×, 28 6.8 → 7.2×, 30 6.9 → 7.05×; two pivots saved
  // or more, fp32 NT = 5 five or more, none at fp64 NT = 7 and at NT = 8) and kept for the
  // left-looking one, not measured again. The left-looking kernel from NT = 5 up, and for fp64 31–32 (same
  // call against the right-looking kernel: fp64 31 6.5 → 6.8×, 33 8.3 → 10.1×, 40 8.7 → 9.9×, 41 7.1
  // → 8.0×, 47 5.9 → 7.6×, 49–56 8.2–8.6 → 9.25–9.45×, 57–64 6.2–6.6 → 7.25–7.5× (capped at 12
  // blocks: 168 registers); fp32 33–40 7.0–7.55 → 7.7–8.3×, 41–48 5.7–6.1 → 6.2–6.3×, 49–56 5.6–6.1 →
  // 7.5–7.8× (capped at 16 blocks), 57–64 4.8–5.1 → 6.1–6.2× (12 blocks)); not at 17–30 (fp64 24
  // 10.05 → 9.0×, 28 7.3 → 7.0×). For fp32 data its pivots in fp32 from 41 up (against fp64 pivots:
  // 41–44 6.3 → 6.8×, 48 6.3 → 6.8×, 49–56 7.5–7.8 → 8.8–8.95×, 57–64 6.1–6.2 → 6.8–7.05×; 47 6.25 →
  // 6.1×, kept for one rule from 41 up; not 33–40: 40 8.3 → 7.9×). Nineteenth session, same calls,
  // register caps (minimum blocks) and the row solve in dot form (pairs; same values) per kernel:
  // fp32 NT = 6 stop 41–47 at 20 blocks with pairs 6.3–6.95 → 7.8–8.2× (stop at 47: 7.35 → 7.8×),
  // whole 48 at 16 6.7 → 7.6×; fp32 NT = 5 at 20–24 blocks 7.65–8.2 → 8.2–8.45×; fp64 NT = 5 stop
  // and part at 24 blocks 9.4–9.9 → 9.7–10.45× (whole 40 loses with a cap); fp32 NT = 7 stop at 18
  // with pairs, whole with pairs: +1–2%; fp64 31 stopped at 24 blocks with pairs 6.7 → 7.15×; fp32
  // 29–32 the left-looking kernel (fp32 pivots, 24 blocks) instead of the broadcast one: 7.0–7.4 →
  // 7.7–8.0×. No gain: fp64 NT = 6–8, fp32 NT = 8 (caps 10–16, pairs), fp64 32 (caps, pairs, two
  // warps per block, right-looking). The swizzle (same values), same calls, where it won: fp64 32
  // 6.67 → 6.93×, 44 +2.4%, 47 stopped 7.6 → 7.8×, 49–55 (stop to 54) 9.3 → 9.5–10.0×, 56 +3%, 64
  // +0.8%; fp32 37 +2%, 41–48 +1.7–2.9%, 55 +4%, 56 +2%, 57–64 +2–3.4% (63 6.93 → 7.16×). Where it
  // lost, it is off: fp64 31 and NT = 5 (−0.5 to −5%), 48 (−1.4%), 57–63 (−10%: spills); fp32 29–32
  // (−1.2%), 40 (−3.6%), 49–54 (−3.7%). Twentieth session, same calls, the same values bit for bit:
  // persistent warps and the reciprocals on L_kk's diagonal (dot form), where they won: fp64 25–30
  // the left-looking stop kernel, persistent at 18 blocks, instead of the right-looking one (25
  // +1.3%, 28 +3.2%, 30 +5.2%); fp64 32 reciprocals at 18 blocks +3% (16: +1.7%; persistent −1%);
  // fp64 40 and 48 both at 16 blocks +4.5% and +2.5%; fp64 64 persistent +3.2%; fp32 whole kernels
  // both: 32 +3.8%, 40 +1.4%, 48 +8.9%, 56 +9.6%, 64 +9.2% (6.88 → 7.51×); fp32 stop 41–47 +1.1–2.3%
  // and part 55 +2.6%, both. They lost (up to −14%) at the other part and stop kernels: fp64 31,
  // 33–39, 41–47 (within ±1%), 49–63; fp32 29–31, 33–39, 49–54, 57–63.
  using S0 = integral_constant<int, 0>;
  using S1 = integral_constant<int, 1>;
  using S2 = integral_constant<int, 2>;
  constexpr bool kF32 = sizeof(T) == 4;
  if (n <= 4) {
    potrf_batched_reg_kernel<T, 4><<<reg_grid(4), 128, 0, ctx.stream>>>(a, nn, lda, stride, batch, info);
  } else if (n <= 8) {
    potrf_batched_reg_kernel<T, 8><<<reg_grid(8), 128, 0, ctx.stream>>>(a, nn, lda, stride, batch, info);
  } else if (n <= 32) {
    if constexpr (sizeof(T) == 8) {
      if (n <= 12) bcast(integral_constant<int, 12>{}, I1{}, No{}, No{});
      // 13–16: the fast pivot path (at 16 CUDA's rsqrt ran 6.7×). Rows of 14 for 13–14 under 7 blocks'
      // cap: 7.5–7.6× against 6.85–7.0× with rows of 16; 15–16 rows of 16 under 6 blocks' cap (80
      // registers; 7 blocks: 6.0–6.7×, 8 spill): 7.0× and 7.3× (without a cap 16 took 100 registers, 5.8×).
      // At 13–15 the info comes from the pivot tests of the safe path, not from the first NaN on the
      // diagonal: the fast path only finishes with every pivot normal, positive and finite (info 0),
      // so its scan and reduction are not needed (twentieth session, the same factors: 13 7.50 →
      // 8.05×, 14 7.61 → 7.64×, 15 6.97 → 7.20×; but 16 7.25 → 6.57×, so 16 keeps the scan).
      else if (n <= 14) bcast(integral_constant<int, 14>{}, integral_constant<int, 7>{}, No{}, Yes{});
      else if (n == 15) bcast(integral_constant<int, 16>{}, integral_constant<int, 6>{}, No{}, Yes{});
      else if (n == 16) bcast(integral_constant<int, 16>{}, integral_constant<int, 6>{}, Yes{}, Yes{});
      else if (n <= 24)
        dmma(integral_constant<int, 3>{}, DmmaRight<4>{}, DmmaRight<4>{}, DmmaRight<4>{}, S2{});
      else {  // 25–32: n < 32 stops its last block column (persistent at 25–30)
        using Whole = DmmaLeft<18, false, true, true, true>;
        using Stop = DmmaLeft<18, false, false, false, false, true>;
        if (n <= 30) dmma(integral_constant<int, 4>{}, Whole{}, Whole{}, Stop{}, S1{});
        else dmma(integral_constant<int, 4>{}, Whole{}, Whole{}, DmmaLeft<24, false, true>{}, S1{});
      }
    } else {
      if (n <= 12) bcast(integral_constant<int, 12>{}, I1{}, Yes{}, No{});
      else if (n <= 16) bcast(integral_constant<int, 16>{}, integral_constant<int, 8>{}, Yes{}, No{});
      else if (n <= 24) bcast(integral_constant<int, 24>{}, integral_constant<int, 8>{}, Yes{}, No{});
      else if (n <= 28) bcast(integral_constant<int, 28>{}, integral_constant<int, 8>{}, Yes{}, No{});
      else dmma(integral_constant<int, 4>{}, DmmaLeft<24, true, true, false, true, true>{}, DmmaLeft<24, true>{},
                DmmaLeft<24, true>{}, S1{});
    }
  } else if (n <= 40) {  // 32 < n ≤ 64: the left-looking DMMA kernel in both precisions
    // DmmaLeft<cap, fp32 pivots (fp32 data only), row pairs, swizzle, reciprocals on the diagonal,
    // persistent>, for whole, part and stop
    using Whole = std::conditional_t<kF32, DmmaLeft<20, false, true, false, true, true>,
                                     DmmaLeft<16, false, true, false, true, true>>;
    using Part = std::conditional_t<kF32, DmmaLeft<24, false, false, true>, DmmaLeft<24, false, true>>;
    using Stop = std::conditional_t<kF32, DmmaLeft<24, false, true, true>, DmmaLeft<24>>;
    dmma(integral_constant<int, 5>{}, Whole{}, Part{}, Stop{}, integral_constant<int, kF32 ? 5 : 2>{});
  } else if (n <= 48) {
    if constexpr (kF32)
      dmma(integral_constant<int, 6>{}, DmmaLeft<16, true, true, true, true, true>{},
           DmmaLeft<20, true, true, true, true, true>{}, DmmaLeft<20, true, true, true, true, true>{}, S1{});
    else dmma(integral_constant<int, 6>{}, DmmaLeft<16, false, true, false, true, true>{},
              DmmaLeft<1, false, false, true>{}, DmmaLeft<1, false, false, true>{}, S1{});
  } else if (n <= 56) {
    if constexpr (kF32)
      dmma(integral_constant<int, 7>{}, DmmaLeft<16, true, true, true, true, true>{},
           DmmaLeft<16, true, true, true, true, true>{}, DmmaLeft<18, true, true>{}, S2{});
    else {
      using C = DmmaLeft<1, false, false, true>;
      dmma(integral_constant<int, 7>{}, C{}, C{}, C{}, S2{});
    }
  } else if (n <= 64) {
    if constexpr (kF32) {
      using C = DmmaLeft<12, true, false, true>;
      dmma(integral_constant<int, 8>{}, DmmaLeft<12, true, true, true, true, true>{}, C{}, C{}, S0{});
    } else {
      dmma(integral_constant<int, 8>{}, DmmaLeft<12, false, false, true, false, true>{}, DmmaLeft<12>{},
           DmmaLeft<12>{}, S0{});
    }
  } else {
    constexpr int P = panel_width<T>();
    const std::size_t smem = 2 * sizeof(T) * P * static_cast<std::size_t>(n);
    GF_CUDA_TRY(gemflow::cuda::allow_dynamic_smem(potrf_batched_panel_kernel<T, P>, 2 * sizeof(T) * P * 512));
    potrf_batched_panel_kernel<T, P><<<grid, 256, smem, ctx.stream>>>(a, nn, lda, stride, info);
  }
  GF_CUDA_CHECK_LAUNCH();
}

template <class T>
std::vector<int> factor_batched_impl(GpuCholesky::Impl& ctx, T* a, std::int64_t n, std::int64_t lda, std::int64_t stride,
                                     std::int64_t batch) {
  if (batch < 0)
    throw std::invalid_argument("GpuCholesky::factor_batched: batch = " + std::to_string(batch) + " < 0");
  if (batch == 0) return {};
  int* info = static_cast<int*>(ctx.workspace(sizeof(int) * static_cast<std::size_t>(batch), "GpuCholesky::factor_batched"));
  factor_batched_launch<T>(ctx, a, n, lda, stride, batch, info);
  std::vector<int> out(static_cast<std::size_t>(batch));
  GF_CUDA_TRY(cudaMemcpyAsync(out.data(), info, sizeof(int) * out.size(), cudaMemcpyDeviceToHost, ctx.stream));
  GF_CUDA_TRY(cudaStreamSynchronize(ctx.stream));
  return out;
}

}  // namespace detail

void GpuCholesky::factor_batched_async(double* a, std::int64_t n, std::int64_t lda, std::int64_t stride,
                                       std::int64_t batch, int* info) {
  detail::factor_batched_launch<double>(*impl_, a, n, lda, stride, batch, info);
}
void GpuCholesky::factor_batched_async(float* a, std::int64_t n, std::int64_t lda, std::int64_t stride,
                                       std::int64_t batch, int* info) {
  detail::factor_batched_launch<float>(*impl_, a, n, lda, stride, batch, info);
}

std::vector<int> GpuCholesky::factor_batched(double* a, std::int64_t n, std::int64_t lda, std::int64_t stride,
                                             std::int64_t batch) {
  return detail::factor_batched_impl<double>(*impl_, a, n, lda, stride, batch);
}
std::vector<int> GpuCholesky::factor_batched(float* a, std::int64_t n, std::int64_t lda, std::int64_t stride,
                                             std::int64_t batch) {
  return detail::factor_batched_impl<float>(*impl_, a, n, lda, stride, batch);
}

}  // namespace gemflow::linalg::cuda
