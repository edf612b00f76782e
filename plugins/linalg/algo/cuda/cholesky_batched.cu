// Batched Cholesky of many small SPD matrices in one launch (lower, column-major).
// n ≤ 8: 4 or 8 lanes per matrix, one row per lane in registers, warp shuffles.
// 8 < n ≤ 64: one row per thread in registers, columns broadcast through shared memory,
// software-pipelined (batched_kernels.cuh), 16 or 32 threads per matrix; fp64 17–64,
// fp32 33–64: 8×8 tiles in the accumulators of the fp64 tensor cores (DMMA), one warp per
// matrix (fp32 factored in fp64 and rounded once). sm_80 or newer.
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

#include "context.cuh"
#include "cuda_check.cuh"
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

/// One configuration of potrf_batched_dmma_kernel: kRow, kNanInfo, kDefer and a register cap
/// (__launch_bounds__ minimum blocks per SM).
template <bool kRow, bool kNanInfo, bool kDefer, int kMinBlocks = 1>
struct DmmaCfg {
  static constexpr bool row = kRow, nan = kNanInfo, defer = kDefer;
  static constexpr int minb = kMinBlocks;
};

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
  // n = 8·NT and other n are separate kernels (bounds tests compiled out), each with its own
  // measured configuration (DmmaCfg: whole for n = 8·NT, part otherwise). saved > 0: n ≤ 8·NT −
  // saved (that many padding pivots or more to skip) takes the part kernel whose last block column
  // stops at n (kStop), with wpb_stop warps per block.
  const auto dmma = [&](auto ntc, auto wpb, auto whole, auto part, auto wpb_stop, auto saved) {
    constexpr int NT = decltype(ntc)::value, W = decltype(wpb)::value, WS = decltype(wpb_stop)::value;
    constexpr int S = decltype(saved)::value;
    using CW = decltype(whole);
    using CP = decltype(part);
    if (n <= 8 * (NT - 1) || n > 8 * NT)  // the kernel tests bounds only in its last tile row and column
      throw std::logic_error(what + ": DMMA kernel with " + std::to_string(NT) + " tiles for n = " + std::to_string(n));
    const auto stop_early = [&] {  // the kStop kernel (instantiated only where a size takes it)
      if constexpr (S > 0) {
        if (n > 8 * NT - S) return false;
        potrf_batched_dmma_kernel<T, NT, WS, CP::nan, false, CP::defer, true, CP::row, CP::minb>
            <<<static_cast<unsigned>((batch + WS - 1) / WS), 32 * WS, 0, ctx.stream>>>(a, nn, lda, stride, batch,
                                                                                      info);
        return true;
      }
      return false;
    };
    const auto grid = static_cast<unsigned>((batch + W - 1) / W);
    if (n == 8 * NT)
      potrf_batched_dmma_kernel<T, NT, W, CW::nan, true, CW::defer, false, CW::row, CW::minb>
          <<<grid, 32 * W, 0, ctx.stream>>>(a, nn, lda, stride, batch, info);
    else if (!stop_early())
      potrf_batched_dmma_kernel<T, NT, W, CP::nan, false, CP::defer, false, CP::row, CP::minb>
          <<<grid, 32 * W, 0, ctx.stream>>>(a, nn, lda, stride, batch, info);
  };
  // The early stop (kStop) where it saves two pivots or more (H200 vs potrfBatched, same call:
  // fp64 n = 25 6.5 → 7.3×, 28 6.8 → 7.2×, 30 6.9 → 7.05×, 33 7.9 → 8.4×, 41 5.8 → 6.15×; fp32 49
  // 5.3 → 6.0×, 54 5.5 → 5.85×), fp32 33–40 five or more (one warp per block: 33 6.7 → 7.1×; 38,
  // two saved, 7.1 → 7.0×). Not with one pivot saved (fp64 55 7.35 → 7.06×, fp32 39 7.25 → 7.14×),
  // not at fp64 NT = 7 (53–54 7.6 → 7.3–7.5×, 49–52 only +1.5%: no size there stops), not at NT = 8
  // (fp64 57–60 6.1–6.3× → 5.7–5.9×).
  using S0 = integral_constant<int, 0>;
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
      // registers; 7 blocks: 6.0–6.7×, 8 spill): 7.0× and 7.3× (without a cap 16 took 100 registers, 5.8×)
      else if (n <= 14) bcast(integral_constant<int, 14>{}, integral_constant<int, 7>{}, Yes{}, Yes{});
      else if (n <= 16) bcast(integral_constant<int, 16>{}, integral_constant<int, 6>{}, Yes{}, Yes{});
      else if (n <= 24)
        dmma(integral_constant<int, 3>{}, integral_constant<int, 4>{}, DmmaCfg<false, false, false>{},
             DmmaCfg<false, false, false>{}, integral_constant<int, 4>{}, S2{});
      else dmma(integral_constant<int, 4>{}, I1{}, DmmaCfg<false, false, true>{}, DmmaCfg<false, false, false>{}, I1{}, S2{});
    } else {
      if (n <= 12) bcast(integral_constant<int, 12>{}, I1{}, Yes{}, No{});
      else if (n <= 16) bcast(integral_constant<int, 16>{}, integral_constant<int, 8>{}, Yes{}, No{});
      else if (n <= 24) bcast(integral_constant<int, 24>{}, integral_constant<int, 8>{}, Yes{}, No{});
      else if (n <= 28) bcast(integral_constant<int, 28>{}, integral_constant<int, 8>{}, Yes{}, No{});
      else bcast(integral_constant<int, 32>{}, integral_constant<int, 7>{}, Yes{}, No{});
    }
  } else if (n <= 40) {  // 32 < n ≤ 64: the DMMA kernel in both precisions
    // fp32 stopping early: one warp per block (33–35: 7.2–7.3× against 7.0–7.1× with two); two
    // otherwise (fp64 33: 8.5× against 8.4× with one; fp32 39, which does not stop: 7.25× against 7.0×)
    dmma(integral_constant<int, 5>{}, integral_constant<int, 2>{}, DmmaCfg<false, kF32, !kF32>{},
         DmmaCfg<false, true, kF32>{}, integral_constant<int, kF32 ? 1 : 2>{}, integral_constant<int, kF32 ? 5 : 2>{});
  } else if (n <= 48) {
    // The panel solved by rows everywhere, under a 16-block cap (127 registers, none spilled) but
    // for fp64 n = 48 (against the per-pivot panel, same call: fp64 41 6.1 → 7.0×, 44 5.75 → 6.85×,
    // 48 6.15 → 6.5×; fp32 41–44 5.1 → 5.85×, 48 5.15 → 5.95×; fp64 48 capped 5.95×)
    dmma(integral_constant<int, 6>{}, I1{}, DmmaCfg<true, true, true, kF32 ? 16 : 1>{}, DmmaCfg<true, true, true, 16>{},
         I1{}, S2{});
  } else if (n <= 56) {
    // fp64 49–55 with the panel solved by rows (49 7.4 → 8.3×, 52 7.4 → 8.45×); not fp64 56 (8.0 →
    // 7.6×) nor fp32 (49–52 6.0 → 5.4×)
    dmma(integral_constant<int, 7>{}, I1{}, DmmaCfg<false, true, true>{}, DmmaCfg<!kF32, true, true>{}, I1{},
         integral_constant<int, kF32 ? 2 : 0>{});
  } else if (n <= 64) {
    // The panel solved by rows, deferring, for fp64 (57 6.0 → 6.45×, 60 6.3 → 6.5×, 64 5.6 → 6.1×) and
    // fp32 64 (4.5 → 5.05×); not fp32 57–63 (60: 4.9 → 4.87×)
    dmma(integral_constant<int, 8>{}, I1{}, DmmaCfg<true, true, true>{}, DmmaCfg<!kF32, true, !kF32>{}, I1{}, S0{});
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
