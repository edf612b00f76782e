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
#include <tuple>
#include <type_traits>
#include <vector>

#include <gemflow/cuda_smem.hpp>

#include "batched_kernels.cuh"
#include "context.cuh"  // GpuCholesky::Impl; gemflow/cuda/ checks and buffers
#include "potrf_kernels.cuh"

namespace gemflow::linalg::cuda {
namespace detail {

template <class T, int P>
__global__ void __launch_bounds__(256)
    potrf_batched_panel_kernel(T* a, int n, std::int64_t lda, std::int64_t stride, int* info) {
  extern __shared__ unsigned char smem_raw[];
  T* rows = reinterpret_cast<T*>(smem_raw);       // rows[k*P + c] = L(j0 + c, k), k < j0
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
      for (int c = 0; c < P; ++c)
        acc[c] = (c < nb && i >= j0 + c) ? A[i + static_cast<std::int64_t>(j0 + c) * lda] : T(0);
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

// ---- The size dispatch: a table of tuning policies per precision ---------------------------
// Each row gives the sizes up to max_n (from the previous row's max_n + 1) one kernel and its
// launch shape: the fastest measured on an H200, every n from 1 to 64 (docs/performance.md,
// "Batched dispatch: the measurements behind each policy"); the same arithmetic up to rounding in
// all of them.

/// potrf_batched_reg_kernel: W lanes per matrix, one row per lane in registers.
template <int W>
struct RegPolicy {};
/// potrf_batched_bcast_kernel: rows of N registers, a register cap (__launch_bounds__ minimum
/// blocks), info from the first NaN on the diagonal (kNanInfo; else from the safe path's pivot
/// tests), the fast pivot path (kFast).
template <int N, int kMinBlocks, bool kNanInfo, bool kFast>
struct BcastPolicy {};
/// The DMMA kernels for n in (8·(NT − 1), 8·NT]: the configurations (DmmaCfg) of the kernel for
/// n = 8·NT (Whole), for the other n (Part), and for those whose last block column stops at n
/// (Stop: n ≤ 8·NT − kSaved, that many padding pivots or more to skip; kSaved = 0: none; kSaved =
/// 1: every n < 8·NT, so no Part kernel). Bounds tests are compiled out of each.
template <int NT, class Whole, class Part, class Stop, int kSaved>
struct DmmaPolicy {};
/// potrf_batched_panel_kernel (64 < n ≤ 512): one block per matrix, panels of panel_width<T>().
struct PanelPolicy {};

template <int kMaxN, class Policy>
struct SizeRow {
  static constexpr int max_n = kMaxN;
  using policy = Policy;
};

template <class T>
struct BatchedTable;

template <>
struct BatchedTable<double> {
  // 25–32: the left-looking kernel, n < 32 stops its last block column (persistent at 25–30)
  using Whole32 = DmmaLeft<18, false, true, true, true>;
  using Stop30 = DmmaLeft<18, false, false, false, false, true>;
  using Left56 = DmmaLeft<1, false, false, true>;
  using rows = std::tuple<
      SizeRow<4, RegPolicy<4>>, SizeRow<8, RegPolicy<8>>, SizeRow<12, BcastPolicy<12, 1, false, false>>,
      // 13–16: the fast pivot path; rows of 14 under 7 blocks' cap for 13–14, of 16 under 6 for
      // 15–16; 16 keeps the NaN scan for its info
      SizeRow<14, BcastPolicy<14, 7, false, true>>, SizeRow<15, BcastPolicy<16, 6, false, true>>,
      SizeRow<16, BcastPolicy<16, 6, true, true>>,
      SizeRow<24, DmmaPolicy<3, DmmaRight<4>, DmmaRight<4>, DmmaRight<4>, 2>>,
      SizeRow<30, DmmaPolicy<4, Whole32, Whole32, Stop30, 1>>,
      SizeRow<32, DmmaPolicy<4, Whole32, Whole32, DmmaLeft<24, false, true>, 1>>,
      SizeRow<40,
              DmmaPolicy<5, DmmaLeft<16, false, true, false, true, true>, DmmaLeft<24, false, true>, DmmaLeft<24>, 2>>,
      SizeRow<48, DmmaPolicy<6, DmmaLeft<16, false, true, false, true, true>, Left56, Left56, 1>>,
      SizeRow<56, DmmaPolicy<7, Left56, Left56, Left56, 2>>,
      SizeRow<64, DmmaPolicy<8, DmmaLeft<12, false, false, true, false, true>, DmmaLeft<12>, DmmaLeft<12>, 0>>,
      SizeRow<512, PanelPolicy>>;
};

template <>
struct BatchedTable<float> {
  // DmmaLeft<cap, fp32 pivots, row pairs, swizzle, reciprocals on the diagonal, persistent>
  using Both = DmmaLeft<16, true, true, true, true, true>;
  using Both20 = DmmaLeft<20, true, true, true, true, true>;
  using rows = std::tuple<SizeRow<4, RegPolicy<4>>, SizeRow<8, RegPolicy<8>>,
                          SizeRow<12, BcastPolicy<12, 1, true, false>>, SizeRow<16, BcastPolicy<16, 8, true, false>>,
                          SizeRow<24, BcastPolicy<24, 8, true, false>>, SizeRow<28, BcastPolicy<28, 8, true, false>>,
                          SizeRow<32, DmmaPolicy<4, DmmaLeft<24, true, true, false, true, true>, DmmaLeft<24, true>,
                                                 DmmaLeft<24, true>, 1>>,
                          SizeRow<40, DmmaPolicy<5, DmmaLeft<20, false, true, false, true, true>,
                                                 DmmaLeft<24, false, false, true>, DmmaLeft<24, false, true, true>, 5>>,
                          SizeRow<48, DmmaPolicy<6, Both, Both20, Both20, 1>>,
                          SizeRow<56, DmmaPolicy<7, Both, Both, DmmaLeft<18, true, true>, 2>>,
                          SizeRow<64, DmmaPolicy<8, DmmaLeft<12, true, true, true, true, true>,
                                                 DmmaLeft<12, true, false, true>, DmmaLeft<12, true, false, true>, 0>>,
                          SizeRow<512, PanelPolicy>>;
};

/// f(Policy{}) for the first row of `Rows` whose max_n ≥ n; false when there is none.
/// The largest n that a policy's kernel takes, and the smallest n its kernel takes minus one
/// (the DMMA kernels test bounds only in their last tile row and column).
template <class P>
struct PolicyRange {
  static constexpr int above = 0, max = 512;
};
template <int W>
struct PolicyRange<RegPolicy<W>> {
  static constexpr int above = 0, max = W;
};
template <int N, int kMinBlocks, bool kNanInfo, bool kFast>
struct PolicyRange<BcastPolicy<N, kMinBlocks, kNanInfo, kFast>> {
  static constexpr int above = 0, max = N;
};
template <int NT, class Whole, class Part, class Stop, int kSaved>
struct PolicyRange<DmmaPolicy<NT, Whole, Part, Stop, kSaved>> {
  static constexpr int above = 8 * (NT - 1), max = 8 * NT;
};

/// A table covers 1–512 in ascending rows, each within the sizes its kernel takes.
template <class... Rows>
constexpr bool table_is_valid(const std::tuple<Rows...>*) {
  int prev = 0;
  bool ok = true;
  ((ok = ok && Rows::max_n > prev && prev >= PolicyRange<typename Rows::policy>::above &&
         Rows::max_n <= PolicyRange<typename Rows::policy>::max,
    prev = Rows::max_n),
   ...);
  return ok && prev == 512;
}
static_assert(table_is_valid(static_cast<const BatchedTable<double>::rows*>(nullptr)), "fp64 batched table");
static_assert(table_is_valid(static_cast<const BatchedTable<float>::rows*>(nullptr)), "fp32 batched table");

/// The overload set of several callables.
template <class... Fs>
struct Overloaded : Fs... {
  using Fs::operator()...;
};
template <class... Fs>
Overloaded(Fs...) -> Overloaded<Fs...>;

template <class F, class... Rows>
bool dispatch_size(std::int64_t n, const std::tuple<Rows...>*, F&& f) {
  return (... || (n <= Rows::max_n && (f(typename Rows::policy{}), true)));
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
    throw std::invalid_argument(what + ": stride = " + std::to_string(stride) +
                                " makes matrices overlap (lda·(n−1)+n = " + std::to_string(lda * (n - 1) + n) + ")");
  if (a == nullptr) throw std::invalid_argument(what + ": null matrix pointer");
  const unsigned grid = static_cast<unsigned>(batch);
  const int nn = static_cast<int>(n);
  const auto reg_grid = [&](int width) { return static_cast<unsigned>((batch * width + 127) / 128); };
  // the launches of the tuning policies (BatchedTable)
  using std::integral_constant;
  using Yes = std::true_type;
  using No = std::false_type;
  const auto bcast = [&](auto nc, auto minb, auto nan_info, auto fast) {
    constexpr int N = decltype(nc)::value, per_block = 128 / bcast_group<N>();
    const auto grid = static_cast<unsigned>((batch + per_block - 1) / per_block);
    potrf_batched_bcast_kernel<T, N, decltype(minb)::value, decltype(nan_info)::value, decltype(fast)::value>
        <<<grid, 128, 0, ctx.stream>>>(a, nn, lda, stride, batch, info);
  };
  // DmmaPolicy: the whole, part or stop kernel for this n
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
  const auto launch = Overloaded{
      [&]<int W>(RegPolicy<W>) {
        potrf_batched_reg_kernel<T, W><<<reg_grid(W), 128, 0, ctx.stream>>>(a, nn, lda, stride, batch, info);
      },
      [&]<int N, int kMinBlocks, bool kNanInfo, bool kFast>(BcastPolicy<N, kMinBlocks, kNanInfo, kFast>) {
        bcast(integral_constant<int, N>{}, integral_constant<int, kMinBlocks>{}, std::bool_constant<kNanInfo>{},
              std::bool_constant<kFast>{});
      },
      [&]<int NT, class Whole, class Part, class Stop, int kSaved>(DmmaPolicy<NT, Whole, Part, Stop, kSaved>) {
        dmma(integral_constant<int, NT>{}, Whole{}, Part{}, Stop{}, integral_constant<int, kSaved>{});
      },
      [&](PanelPolicy) {
        constexpr int P = panel_width<T>();
        const std::size_t smem = 2 * sizeof(T) * P * static_cast<std::size_t>(n);
        GF_CUDA_TRY(gemflow::cuda::allow_dynamic_smem(potrf_batched_panel_kernel<T, P>, 2 * sizeof(T) * P * 512));
        potrf_batched_panel_kernel<T, P><<<grid, 256, smem, ctx.stream>>>(a, nn, lda, stride, info);
      }};
  if (!dispatch_size(n, static_cast<const typename BatchedTable<T>::rows*>(nullptr), launch))
    throw std::logic_error(what + ": no tuning policy for n = " + std::to_string(n));
  GF_CUDA_CHECK_LAUNCH();
}

template <class T>
std::vector<int> factor_batched_impl(GpuCholesky::Impl& ctx, T* a, std::int64_t n, std::int64_t lda,
                                     std::int64_t stride, std::int64_t batch) {
  if (batch < 0) throw std::invalid_argument("GpuCholesky::factor_batched: batch = " + std::to_string(batch) + " < 0");
  if (batch == 0) return {};
  int* info =
      static_cast<int*>(ctx.workspace(sizeof(int) * static_cast<std::size_t>(batch), "GpuCholesky::factor_batched"));
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
