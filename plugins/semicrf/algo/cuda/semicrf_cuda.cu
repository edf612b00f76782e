// The semi-CRF on CUDA: prefix sums, streaming forward, backward (marginals and gradients),
// Viterbi (gemflow/semicrf/semicrf_cuda.hpp; notation in semicrf_kernels.cuh).
#include <algorithm>
#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include <gemflow/cuda/buffer.hpp>
#include <gemflow/cuda/check.hpp>
#include <gemflow/cuda_smem.hpp>

#include "../sequence.hpp"
#include "gemflow/semicrf/semicrf_cuda.hpp"
#include "scan_plan.hpp"
#include "semicrf_kernels.cuh"

namespace gemflow::semicrf::cuda {

using detail::ArgMax;
using detail::kWarp;
using detail::LogSum;
using detail::Params;
using detail::Shared;

namespace {

/// Shared memory a block may use for its rings (the rest of the 227 KiB of sm_90 is headroom).
constexpr std::size_t kRingSmemLimit = 160 * 1024;

// ---- prefix sums ------------------------------------------------------------------------------

/// One block per sequence, threads over labels: ν, S, L, N.
__global__ void prefix_kernel(Params p) {
  const int b = blockIdx.x, C = p.C, T = p.length(b);
  const long long off = p.offset[b], sr = p.srow(b);
  for (int c = threadIdx.x; c < C; c += blockDim.x) {
    double nu = 0;
    if (p.centring != 0) {
      double s = 0;
      long long n = 0;
      for (int u = 0; u < T; ++u) {
        const double v = p.f[(off + u) * C + c];
        if (v != -INFINITY) s += v, ++n;
      }
      nu = n ? s / static_cast<double>(n) : 0.0;
    }
    p.nu[b * C + c] = nu;
    double s = 0;
    int last = 0;
    p.S[sr * C + c] = 0;
    p.L[sr * C + c] = 0;
    for (int u = 0; u < T; ++u) {
      const double v = p.f[(off + u) * C + c];
      const bool bad = v == -INFINITY;
      s += bad ? 0.0 : v - nu;
      if (bad) last = u + 1;
      p.S[(sr + u + 1) * C + c] = s;
      p.L[(sr + u + 1) * C + c] = last;
    }
    int next = T;
    p.N[(sr + T) * C + c] = T;
    for (int u = T - 1; u >= 0; --u) {
      if (p.f[(off + u) * C + c] == -INFINITY) next = u;
      p.N[(sr + u) * C + c] = next;
    }
  }
}

// ---- the forward step, shared by the forward pass, the backward pass's recomputation and Viterbi

/// One sequence's view of the parameters (pointers offset to its rows; copied, not referenced,
/// so that the kernel's parameter block stays in constant space).
struct Seq {
  int b, T, C, K;
  long long off, sr;
  const double* Srow;  ///< S of this sequence, row 0
  const int* Lrow;
  const int* Nrow;
  const double* ps;  ///< this sequence's start scores, or nullptr
  const double* pe;
  const double* nu;
  const double* dur;
  const double* tr;
  const double* init;
  double r;  ///< 1 for reconstruct

  __device__ Seq(const Params& p, int bb) : b(bb), T(p.length(bb)), C(p.C), K(p.K) {
    off = p.offset[b];
    sr = p.srow(b);
    Srow = p.S + sr * C;
    Lrow = p.L + sr * C;
    Nrow = p.N + sr * C;
    ps = p.ps ? p.ps + off * C : nullptr;
    pe = p.pe ? p.pe + off * C : nullptr;
    nu = p.nu + static_cast<long long>(b) * C;
    dur = p.dur;
    tr = p.tr;
    init = p.init;
    r = p.centring == 2 ? 1.0 : 0.0;
  }
  __device__ double S(int t, int c) const { return Srow[static_cast<long long>(t) * C + c]; }
  __device__ double H(int t, int c) const {
    return S(t, c) + r * nu[c] * t + (pe ? pe[static_cast<long long>(t - 1) * C + c] : 0.0);
  }
  __device__ double Ps(int s, int c) const { return ps ? ps[static_cast<long long>(s) * C + c] : 0.0; }
  /// G(s, c) from in(s, c).
  __device__ double G(int s, int c, double in) const { return in - S(s, c) - r * nu[c] * s + Ps(s, c); }
  __device__ int kmax_end(int t, int c) const { return min(K, t - Lrow[static_cast<long long>(t) * C + c]); }
  __device__ int kmax_start(int s, int c) const {
    return min(min(K, T - s), Nrow[static_cast<long long>(s) * C + c] - s);
  }
};

/// α(t, ·) into sh.alpha from the ring rows of G (row of position s at (s % K)·C).
template <bool kLanes>
__device__ void alpha_step(const Seq& q, int t, const double* ring, double* alpha) {
  const int C = q.C, K = q.K;
  if constexpr (kLanes) {
    const int warp = threadIdx.x / kWarp, lane = threadIdx.x % kWarp, nw = blockDim.x / kWarp;
    for (int c = warp; c < C; c += nw) {
      LogSum acc;
      const int kmax = q.kmax_end(t, c);
      for (int k = 1 + lane; k <= kmax; k += kWarp) acc.add(ring[((t - k) % K) * C + c] + q.dur[(k - 1) * C + c]);
      acc.warp_reduce();
      if (lane == 0) {
        const double v = acc.value();
        alpha[c] = v == -INFINITY ? -INFINITY : q.H(t, c) + v;
      }
    }
  } else {
    for (int c = threadIdx.x; c < C; c += blockDim.x) {
      LogSum acc;
      const int kmax = q.kmax_end(t, c);
      for (int k = 1; k <= kmax; ++k) acc.add(ring[((t - k) % K) * C + c] + q.dur[(k - 1) * C + c]);
      const double v = acc.value();
      alpha[c] = v == -INFINITY ? -INFINITY : q.H(t, c) + v;
    }
  }
}

/// in(t, ·) from α(t, ·); writes G(t, ·) to the ring row of t (and to `gcopy` when given).
template <bool kLanes>
__device__ void incoming_step(const Seq& q, int t, const double* alpha, double* ring, double* gcopy) {
  const int C = q.C, K = q.K;
  auto finish = [&](int c, double in) {
    const double g = in == -INFINITY ? -INFINITY : q.G(t, c, in);
    ring[(t % K) * C + c] = g;
    if (gcopy) gcopy[c] = g;
  };
  if constexpr (kLanes) {
    const int warp = threadIdx.x / kWarp, lane = threadIdx.x % kWarp, nw = blockDim.x / kWarp;
    for (int c = warp; c < C; c += nw) {
      LogSum acc;
      for (int cp = lane; cp < C; cp += kWarp) acc.add(alpha[cp] + q.tr[cp * C + c]);
      acc.warp_reduce();
      if (lane == 0) finish(c, acc.value());
    }
  } else {
    for (int c = threadIdx.x; c < C; c += blockDim.x) {
      LogSum acc;
      for (int cp = 0; cp < C; ++cp) acc.add(alpha[cp] + q.tr[cp * C + c]);
      finish(c, acc.value());
    }
  }
}

/// The ring of position 0: G(0, c) = I[c] + Ps(0, c); every other row −∞ (never read before written).
__device__ void ring_start(const Seq& q, double* ring) {
  const int C = q.C, K = q.K;
  for (int i = threadIdx.x; i < K * C; i += blockDim.x) ring[i] = -INFINITY;
  __syncthreads();
  for (int c = threadIdx.x; c < C; c += blockDim.x) ring[c] = q.G(0, c, q.init[c]);
}

__device__ double* ring_of(const Shared& sh, const Params& p, int b) {
  return sh.ring ? sh.ring : p.ring + static_cast<long long>(b) * p.K * p.C;
}
__device__ double* ering_of(const Shared& sh, const Params& p, int b) {
  return sh.ering ? sh.ering : p.ering + static_cast<long long>(b) * (p.K + 1) * p.C;
}

// ---- forward ----------------------------------------------------------------------------------

/// One block per sequence: log Z; with `save`, the checkpoints every Δ steps.
template <bool kLanes>
__global__ void __launch_bounds__(1024) forward_kernel(Params p, bool smem_ring, bool save) {
  extern __shared__ double smem[];
  const int b = blockIdx.x;
  const Seq q(p, b);
  const Shared sh = Shared::carve(smem, p.C, p.K, smem_ring, false);
  double* ring = ring_of(sh, p, b);
  const int C = q.C, K = q.K, T = q.T;
  if (T == 0) {
    if (threadIdx.x == 0) p.log_z[b] = 0.0;
    return;
  }
  ring_start(q, ring);
  for (int c = threadIdx.x; c < C; c += blockDim.x) sh.alpha[c] = -INFINITY;
  __syncthreads();
  auto checkpoint = [&](int t) {
    double* cp = p.checkpoints + (p.cp_offset[b] + t / p.delta) * (static_cast<long long>(K) * C + C);
    for (int i = threadIdx.x; i < K * C; i += blockDim.x) cp[i] = ring[i];
    for (int c = threadIdx.x; c < C; c += blockDim.x) cp[K * C + c] = sh.alpha[c];
  };
  if (save) {
    checkpoint(0);
    __syncthreads();  // the copy reads α before the next step writes it
  }
  for (int t = 1; t <= T; ++t) {
    alpha_step<kLanes>(q, t, ring, sh.alpha);
    __syncthreads();
    if (t == T) break;
    incoming_step<kLanes>(q, t, sh.alpha, ring, nullptr);
    __syncthreads();
    if (save && t % p.delta == 0) {
      checkpoint(t);
      __syncthreads();
    }
  }
  if (threadIdx.x == 0) {
    double m = -INFINITY;
    for (int c = 0; c < C; ++c) m = fmax(m, sh.alpha[c]);
    double s = 0;
    for (int c = 0; c < C; ++c)
      if (sh.alpha[c] != -INFINITY) s += exp(sh.alpha[c] - m);
    p.log_z[b] = s == 0 ? -INFINITY : m + log(s);
  }
}

// ---- forward for K = 1 by chunks (scan_plan.hpp) ---------------------------------------------

/// e(t, c): the score of the one-sample segment [t − 1, t) of label c without its transition, −∞
/// where sample t − 1 is impossible for c (then α(t, c) = −∞ as in the sequential kernel).
__device__ double unit_segment(const Seq& q, int t, int c) {
  if (q.kmax_end(t, c) < 1) return -INFINITY;
  return q.H(t, c) + q.G(t - 1, c, 0.0) + q.dur[c];
}

/// One block per chunk, a warp per start label i (blockDim = 32·C), a lane per label c: row i of
/// the chunk's transfer matrix, P[i, c] = log Σ over label paths from i at step `first` to c at
/// step `last` (the log-semiring product of M_t, t = first + 1 .. last), fp64 values with fp32
/// sums relative to each max; with kMax the max-plus product instead (Viterbi). Tr and each warp's
/// row live in shared memory; a warp synchronises only itself (no block barrier inside the loop).
template <bool kMax>
__global__ void __launch_bounds__(1024) scan_chunk_kernel(Params p, const detail::ScanChunk* chunks, double* P) {
  constexpr int kL = static_cast<int>(detail::kScanMaxLabels);
  __shared__ double tr[kL * kL];
  __shared__ double row[kL][kL];
  const detail::ScanChunk ch = chunks[blockIdx.x];
  const Seq q(p, ch.b);
  const int C = q.C, i = threadIdx.x / kWarp, c = threadIdx.x % kWarp;
  const bool on = c < C;
  for (int n = threadIdx.x; n < C * C; n += blockDim.x) tr[n] = q.tr[n];
  __syncthreads();
  // after step first + 1: Tr[i, c] + e(first + 1, c)
  double v = on ? tr[i * C + c] + unit_segment(q, ch.first + 1, c) : -INFINITY;
  double e_next = on && ch.first + 2 <= ch.last ? unit_segment(q, ch.first + 2, c) : -INFINITY;
  for (int t = ch.first + 2; t <= ch.last; ++t) {
    const double e = e_next;
    if (on && t < ch.last) e_next = unit_segment(q, t + 1, c);  // loaded while this step runs
    row[i][c] = v;
    __syncwarp();
    double m = -INFINITY;
    if (on)
      for (int cp = 0; cp < C; ++cp) m = fmax(m, row[i][cp] + tr[cp * C + c]);
    float sum = 0.f;
    if (!kMax && m != -INFINITY)
      for (int cp = 0; cp < C; ++cp) {
        const double x = row[i][cp] + tr[cp * C + c];
        if (x != -INFINITY) sum += __expf(static_cast<float>(x - m));
      }
    __syncwarp();  // every lane has read the row before the next step writes it
    v = m == -INFINITY || e == -INFINITY ? -INFINITY : kMax ? e + m : e + m + static_cast<double>(logf(sum));
  }
  if (on) P[(static_cast<long long>(blockIdx.x) * C + i) * C + c] = v;
}

/// α(1, c) = I[c] + e(1, c) (with Ps(0, c)), as the sequential kernel starts.
__device__ double alpha_one(const Seq& q, int c) {
  return q.G(0, c, q.init[c]) + (q.kmax_end(1, c) < 1 ? -INFINITY : q.H(1, c) + q.dur[c]);
}

/// One warp per sequence, a lane per label: α(1, ·), then α at the end of each chunk in order,
/// α' (c) = log Σ_i exp(α(i) + P[i, c]) (the next chunk's column is loaded while this one is
/// applied), then log Z as the sequential kernel computes it. With `A`, α at the start of each
/// chunk j is kept there (A[j·C + c]) for the backward pass. With kMax (Viterbi, max-plus): the
/// best score into vscore and its final label (the lowest on ties) into `best` (−1: none).
template <bool kMax>
__global__ void __launch_bounds__(32)
    scan_combine_kernel(Params p, const long long* first_chunk, const double* P, double* A, int* best) {
  const int b = blockIdx.x, c = threadIdx.x;
  const Seq q(p, b);
  const int C = q.C, T = q.T;
  const bool on = c < C;
  if (T == 0) {
    if (c == 0) {
      if constexpr (kMax) p.vscore[b] = 0.0, best[b] = -1;
      else p.log_z[b] = 0.0;
    }
    return;
  }
  double a = on ? alpha_one(q, c) : -INFINITY;
  const long long j0 = first_chunk[b], j1 = first_chunk[b + 1];
  double col[detail::kScanMaxLabels], nxt[detail::kScanMaxLabels];
  auto load = [&](long long j, double* dst) {
#pragma unroll
    for (int i = 0; i < static_cast<int>(detail::kScanMaxLabels); ++i)
      dst[i] = on && i < C && j < j1 ? P[(j * C + i) * C + c] : -INFINITY;
  };
  load(j0, nxt);
  for (long long j = j0; j < j1; ++j) {
    if (A && on) A[j * C + c] = a;
#pragma unroll
    for (int i = 0; i < static_cast<int>(detail::kScanMaxLabels); ++i) col[i] = nxt[i];
    load(j + 1, nxt);
    double m = -INFINITY;
#pragma unroll
    for (int i = 0; i < static_cast<int>(detail::kScanMaxLabels); ++i)
      m = fmax(m, __shfl_sync(0xffffffffu, a, i) + col[i]);
    if constexpr (kMax) {
      a = m;
    } else {
      float sum = 0.f;  // every lane shuffles (full mask); only finite terms add
#pragma unroll
      for (int i = 0; i < static_cast<int>(detail::kScanMaxLabels); ++i) {
        const double x = __shfl_sync(0xffffffffu, a, i) + col[i];
        if (x != -INFINITY) sum += __expf(static_cast<float>(x - m));
      }
      a = m == -INFINITY ? -INFINITY : m + static_cast<double>(logf(sum));
    }
  }
  if constexpr (kMax) {  // the best final label as traceback() picks it
    int bl = 0;
    double bv = __shfl_sync(0xffffffffu, a, 0);
    for (int l = 1; l < C; ++l) {
      const double v = __shfl_sync(0xffffffffu, a, l);
      if (v > bv) bv = v, bl = l;
    }
    if (c == 0) p.vscore[b] = bv, best[b] = bv == -INFINITY ? -1 : bl;
    return;
  }
  // log Z = log Σ_c exp α(T, c), in fp64 and label order as forward_kernel
  double m = -INFINITY;
  for (int l = 0; l < C; ++l) m = fmax(m, __shfl_sync(0xffffffffu, a, l));
  double s = 0;
  for (int l = 0; l < C; ++l) {
    const double al = __shfl_sync(0xffffffffu, a, l);
    if (al != -INFINITY) s += exp(al - m);
  }
  if (c == 0) p.log_z[b] = s == 0 ? -INFINITY : m + log(s);
}

/// Per-chunk results of the chunked forward-backward pass (device pointers).
struct ScanBackward {
  const detail::ScanChunk* chunks;
  const long long* first_chunk;
  const double* P;  ///< C × C per chunk
  const double* A;  ///< α at each chunk's start, C per chunk
  double* Bend;     ///< β at each chunk's end, C per chunk
  double* part_gt;  ///< C × C per chunk: Σ over its steps of the transition marginals
  double* part_gd;  ///< C per chunk: Σ over its positions of the label marginals
};

/// One warp per sequence, a lane per label, chunks in reverse order: β at each chunk's end
/// (β(T, ·) = 0), β(first, i) = log Σ_c exp(P[i, c] + β(last, c)); then position 0 from α(1, ·)
/// and β(1, ·): its label marginals (the initial-score gradients), its boundary posterior.
__global__ void __launch_bounds__(32) scan_beta_kernel(Params p, ScanBackward w) {
  const int b = blockIdx.x, c = threadIdx.x;
  const Seq q(p, b);
  const int C = q.C, T = q.T;
  const double z = p.log_z[b];
  if (T == 0 || z == -INFINITY) return;
  const bool on = c < C;
  double beta = on ? 0.0 : -INFINITY;
  for (long long j = w.first_chunk[b + 1] - 1; j >= w.first_chunk[b]; --j) {
    if (on) w.Bend[j * C + c] = beta;
    double m = -INFINITY;
    for (int l = 0; l < C; ++l)
      m = fmax(m, (on ? w.P[(j * C + c) * C + l] : -INFINITY) + __shfl_sync(0xffffffffu, beta, l));
    float sum = 0.f;
    for (int l = 0; l < C; ++l) {
      const double x = (on ? w.P[(j * C + c) * C + l] : -INFINITY) + __shfl_sync(0xffffffffu, beta, l);
      if (x != -INFINITY) sum += __expf(static_cast<float>(x - m));
    }
    beta = m == -INFINITY ? -INFINITY : m + static_cast<double>(logf(sum));
  }
  const double a = on ? alpha_one(q, c) : -INFINITY;
  const double q0 = a == -INFINITY || beta == -INFINITY ? 0.0 : exp(a + beta - z);
  if (on) {
    p.gi[static_cast<long long>(b) * C + c] = q0;
    p.diff[q.sr * C + c] = q0;  // label marginals written directly (marginals_kernel, direct)
  }
  const double total = detail::warp_sum(q0);
  if (c == 0) p.boundaries[q.off] = total;
}

/// One block per chunk, a warp per label c' (blockDim = 32·C), a lane per label c: α of the
/// chunk's steps again from α(first, ·) (rows in shared memory), then backwards from β(last, ·):
/// for step t the term Tr[c', c] + e(t, c) + β(t, c) gives β(t − 1, c') (warp c' reduces over its
/// lanes) and the transition marginal exp(α(t − 1, c') + term − log Z), summed per thread in step
/// order; warp 0 writes the label marginals of position t − 1 and its boundary posterior.
__global__ void __launch_bounds__(1024) scan_marginals_kernel(Params p, ScanBackward w) {
  extern __shared__ double smem[];
  const long long j = blockIdx.x;
  const detail::ScanChunk ch = w.chunks[j];
  const Seq q(p, ch.b);
  const int C = q.C, cp = threadIdx.x / kWarp, c = threadIdx.x % kWarp, L = ch.last - ch.first;
  const bool on = c < C;
  const double z = p.log_z[ch.b];
  double* arow = smem;                    // (L + 1) rows of 32: α(first + r, ·)
  double* brow = smem + (L + 1) * kWarp;  // 2 rows of 32: β(t, ·), double-buffered
  double* part_gt = w.part_gt + j * C * C;
  if (z == -INFINITY) {
    if (on) part_gt[cp * C + c] = 0.0;
    if (cp == 0 && on) w.part_gd[j * C + c] = 0.0;
    return;
  }
  const double tr = on ? q.tr[cp * C + c] : -INFINITY;     // Tr[c', c]
  const double tr_in = on ? q.tr[c * C + cp] : -INFINITY;  // Tr[c, c'] for the forward step: lane c = previous label
  if (cp == 0) arow[c] = on ? w.A[j * C + c] : -INFINITY;
  __syncthreads();
  for (int r = 1; r <= L; ++r) {
    // α(t, c') = e(t, c') + log Σ_c exp(α(t − 1, c) + Tr[c, c']): warp c', lanes over c
    LogSum acc;
    if (on) acc.add(arow[(r - 1) * kWarp + c] + tr_in);
    acc.warp_reduce();
    if (c == 0) {
      const double e = unit_segment(q, ch.first + r, cp), v = acc.value();
      arow[r * kWarp + cp] = v == -INFINITY || e == -INFINITY ? -INFINITY : e + v;
    }
    if (cp == 0 && c >= C) arow[r * kWarp + c] = -INFINITY;
    __syncthreads();
  }
  int cur = 0;
  if (cp == 0) brow[c] = on ? w.Bend[j * C + c] : -INFINITY;
  __syncthreads();
  double gt = 0.0, gd = 0.0;
  for (int t = ch.last; t > ch.first; --t) {
    const int r = t - ch.first;
    const double e = on ? unit_segment(q, t, c) : -INFINITY;
    const double bt = brow[cur * kWarp + c];
    const double term = tr + e + bt;
    const double ap = arow[(r - 1) * kWarp + cp];
    if (on && term != -INFINITY && ap != -INFINITY) gt += exp(ap + term - z);
    if (cp == 0) {  // position t − 1: label marginals and boundary posterior
      const double at = arow[r * kWarp + c];
      const double qv = on && at != -INFINITY && bt != -INFINITY ? exp(at + bt - z) : 0.0;
      if (on) p.diff[(q.sr + t - 1) * C + c] = qv;
      gd += qv;
      const double total = detail::warp_sum(qv);
      if (c == 0) p.boundaries[q.off + t - 1] = total;
    }
    LogSum acc;
    if (on) acc.add(term);
    acc.warp_reduce();
    if (c == 0) brow[(1 - cur) * kWarp + cp] = acc.value();
    if (cp == 0 && c >= C) brow[(1 - cur) * kWarp + c] = -INFINITY;
    __syncthreads();
    cur = 1 - cur;
  }
  if (on) part_gt[cp * C + c] = gt;
  if (cp == 0 && on) w.part_gd[j * C + c] = gd;
}

/// Thread per (sequence, entry): the per-sequence gradients from the chunks' partial sums, in chunk
/// order (deterministic): Tr from part_gt; B[1, ·] = the initial-score entry (position 0) plus part_gd.
__global__ void scan_gradients_kernel(Params p, ScanBackward w) {
  const int b = blockIdx.x, C = p.C;
  for (int i = threadIdx.x; i < C * C + C; i += blockDim.x) {
    const bool trans = i < C * C;
    const int n = trans ? C * C : C, k = trans ? i : i - C * C;
    double s = trans ? 0.0 : p.gi[static_cast<long long>(b) * C + k];
    for (long long j = w.first_chunk[b]; j < w.first_chunk[b + 1]; ++j) s += (trans ? w.part_gt : w.part_gd)[j * n + k];
    (trans ? p.gt : p.gd)[static_cast<long long>(b) * n + k] = s;
  }
}

/// Device pointers of the chunked Viterbi (K = 1).
struct ScanViterbi {
  const detail::ScanChunk* chunks;
  const long long* first_chunk;
  const double* A;  ///< max-plus α at each chunk's start, C per chunk
  const int* best;  ///< B: the best final label (−1: no segmentation)
  int* map;         ///< C per chunk: the label at step `first` on the best path that ends in c at `last`
  int* end_label;   ///< per chunk: the label at step `last` on the best path
};

/// One block per chunk, a warp per label c, a lane per previous label: max-plus α of the chunk's
/// steps from α(first, ·), each step's best previous label into bp (row t of the sequence; ties to
/// the lowest label, as ArgMax); then lane c of warp 0 follows them from label c at `last` back to
/// `first` (map).
__global__ void __launch_bounds__(1024) scan_viterbi_chunk_kernel(Params p, ScanViterbi w) {
  __shared__ double arow[2][kWarp];
  const long long j = blockIdx.x;
  const detail::ScanChunk ch = w.chunks[j];
  const Seq q(p, ch.b);
  const int C = q.C, c = threadIdx.x / kWarp, lane = threadIdx.x % kWarp;
  const bool on = lane < C;
  unsigned* bp = p.bp + q.sr * C;
  const double tr = on ? q.tr[lane * C + c] : -INFINITY;  // Tr[lane, c]
  if (c == 0) arow[0][lane] = on ? w.A[j * C + lane] : -INFINITY;
  __syncthreads();
  int cur = 0;
  for (int t = ch.first + 1; t <= ch.last; ++t) {
    ArgMax am;
    if (on) am.add(arow[cur][lane] + tr, lane);
    am.warp_reduce();
    if (lane == 0) {
      const double e = unit_segment(q, t, c);
      arow[1 - cur][c] = am.v == -INFINITY || e == -INFINITY ? -INFINITY : e + am.v;
      bp[static_cast<long long>(t) * C + c] = am.v == -INFINITY ? 0u : static_cast<unsigned>(am.i);
    }
    if (c == 0 && !on) arow[1 - cur][lane] = -INFINITY;
    __syncthreads();
    cur = 1 - cur;
  }
  if (c == 0 && on) {
    int lab = lane;
    for (int t = ch.last; t > ch.first; --t) lab = static_cast<int>(bp[static_cast<long long>(t) * C + lab]);
    w.map[j * C + lane] = lab;
  }
}

/// One thread per sequence: the label at each chunk's end on the best path, chunks in reverse
/// order through their maps; the first segment [0, 1); the segment count (T, or 0 when no
/// segmentation is allowed).
__global__ void scan_viterbi_link_kernel(Params p, ScanViterbi w) {
  const int b = blockIdx.x * blockDim.x + threadIdx.x;
  if (b >= p.B) return;
  const Seq q(p, b);
  const int C = q.C, T = q.T;
  int lab = w.best[b];
  if (T == 0 || lab < 0) {
    p.seg_count[b] = 0;
    return;
  }
  for (long long j = w.first_chunk[b + 1] - 1; j >= w.first_chunk[b]; --j) {
    w.end_label[j] = lab;
    lab = w.map[j * C + lab];
  }
  int* seg = p.seg + q.off * 3;
  seg[0] = 0, seg[1] = 1, seg[2] = lab;
  p.seg_count[b] = T;
}

/// One thread per chunk: its one-sample segments [t − 1, t), from its end label back through bp.
__global__ void scan_viterbi_segments_kernel(Params p, ScanViterbi w, long long n) {
  const long long j = blockIdx.x * static_cast<long long>(blockDim.x) + threadIdx.x;
  if (j >= n) return;
  const detail::ScanChunk ch = w.chunks[j];
  const Seq q(p, ch.b);
  if (w.best[ch.b] < 0) return;
  const int C = q.C;
  const unsigned* bp = p.bp + q.sr * C;
  int* seg = p.seg + q.off * 3;
  int lab = w.end_label[j];
  for (int t = ch.last; t > ch.first; --t) {
    seg[(t - 1) * 3] = t - 1, seg[(t - 1) * 3 + 1] = t, seg[(t - 1) * 3 + 2] = lab;
    lab = static_cast<int>(bp[static_cast<long long>(t) * C + lab]);
  }
}

// ---- backward ---------------------------------------------------------------------------------

/// One block per sequence: marginals (difference array, boundaries) and per-sequence gradients.
template <bool kLanes>
__global__ void __launch_bounds__(1024) backward_kernel(Params p, bool smem_ring, bool smem_ering) {
  extern __shared__ double smem[];
  const int b = blockIdx.x;
  const Seq q(p, b);
  const int C = q.C, K = q.K, T = q.T, D = p.delta;
  const double z = p.log_z[b];
  if (T == 0 || z == -INFINITY) return;
  const Shared sh = Shared::carve(smem, C, K, smem_ring, smem_ering);
  double* ring = ring_of(sh, p, b);
  double* ering = ering_of(sh, p, b);
  double* gbuf = p.gbuf + static_cast<long long>(b) * D * C;
  double* abuf = p.abuf + static_cast<long long>(b) * D * C;
  double* diff = p.diff + q.sr * C;
  double* gd = p.gd + static_cast<long long>(b) * K * C;
  double* gt = p.gt + static_cast<long long>(b) * C * C;
  const int warp = threadIdx.x / kWarp, lane = threadIdx.x % kWarp, nw = blockDim.x / kWarp;
  // E(T, c) = β(T) + H(T, c) = H(T, c); other rows −∞
  for (int i = threadIdx.x; i < (K + 1) * C; i += blockDim.x) ering[i] = -INFINITY;
  __syncthreads();
  for (int c = threadIdx.x; c < C; c += blockDim.x) ering[(T % (K + 1)) * C + c] = q.H(T, c);
  __syncthreads();
  const int blocks = (T + D - 1) / D;
  for (int j = blocks - 1; j >= 0; --j) {
    const int a = j * D, e_blk = min(T, a + D);
    // recompute G and α of positions [a, e_blk) from the checkpoint at a
    const double* cp = p.checkpoints + (p.cp_offset[b] + j) * (static_cast<long long>(K) * C + C);
    for (int i = threadIdx.x; i < K * C; i += blockDim.x) ring[i] = cp[i];
    for (int c = threadIdx.x; c < C; c += blockDim.x) {
      abuf[c] = cp[K * C + c];
      gbuf[c] = cp[(a % K) * C + c];
    }
    __syncthreads();
    for (int t = a + 1; t < e_blk; ++t) {
      alpha_step<kLanes>(q, t, ring, sh.alpha);
      __syncthreads();
      for (int c = threadIdx.x; c < C; c += blockDim.x) abuf[(t - a) * C + c] = sh.alpha[c];
      incoming_step<kLanes>(q, t, sh.alpha, ring, gbuf + (t - a) * C);
      __syncthreads();
    }
    // backward over the block
    for (int s = e_blk - 1; s >= a; --s) {
      const double* G = gbuf + (s - a) * C;
      // γ'(s, c) = log Σ_k exp(B[k, c] + E(s + k, c)); p(s, k, c) = exp(G + B + E − z)
      auto one_label = [&](int c, int k0, int kstep, LogSum& acc, double& psum) {
        const int kmax = q.kmax_start(s, c);
        const double g = G[c];
        for (int k = k0; k <= kmax; k += kstep) {
          const int e = s + k;
          const double v = p.dur[(k - 1) * C + c] + ering[(e % (K + 1)) * C + c];
          if (v == -INFINITY) continue;
          acc.add(v);
          if (g == -INFINITY) continue;
          const double pr = exp(g + v - z);
          psum += pr;
          gd[(k - 1) * C + c] += pr;  // (k, c) is always this thread's
          diff[e * C + c] -= pr;      // one e per thread in a step
        }
      };
      if constexpr (kLanes) {
        for (int c = warp; c < C; c += nw) {
          LogSum acc;
          double psum = 0;
          one_label(c, 1 + lane, kWarp, acc, psum);
          acc.warp_reduce();
          psum = detail::warp_sum(psum);
          if (lane == 0) {
            const double gp = acc.value();
            sh.aux[c] = gp == -INFINITY ? -INFINITY : gp - q.S(s, c) - q.r * q.nu[c] * s + q.Ps(s, c);
            sh.psum[c] = psum;
          }
        }
      } else {
        for (int c = threadIdx.x; c < C; c += blockDim.x) {
          LogSum acc;
          double psum = 0;
          one_label(c, 1, 1, acc, psum);
          const double gp = acc.value();
          sh.aux[c] = gp == -INFINITY ? -INFINITY : gp - q.S(s, c) - q.r * q.nu[c] * s + q.Ps(s, c);
          sh.psum[c] = psum;
        }
      }
      __syncthreads();
      // the segments starting at s: difference array, boundary, initial scores
      for (int c = threadIdx.x; c < C; c += blockDim.x) {
        diff[s * C + c] += sh.psum[c];
        if (s == 0) p.gi[static_cast<long long>(b) * C + c] = sh.psum[c];
      }
      if (threadIdx.x == 0) {
        double bs = 0;
        for (int c = 0; c < C; ++c) bs += sh.psum[c];
        p.boundaries[q.off + s] = bs;
      }
      if (s > 0) {
        // β(s, c') = log Σ_c exp(Tr[c', c] + γ(s, c)); E(s, c') = β + H(s, c'); transition gradients
        const double* alpha = abuf + (s - a) * C;
        auto one_prev = [&](int cp, int c0, int cstep, LogSum& acc) {
          for (int c = c0; c < C; c += cstep) {
            const double v = p.tr[cp * C + c] + sh.aux[c];
            acc.add(v);
            if (v != -INFINITY && alpha[cp] != -INFINITY) gt[cp * C + c] += exp(alpha[cp] + v - z);
          }
        };
        if constexpr (kLanes) {
          for (int cp = warp; cp < C; cp += nw) {
            LogSum acc;
            one_prev(cp, lane, kWarp, acc);
            acc.warp_reduce();
            if (lane == 0) {
              const double beta = acc.value();
              ering[(s % (K + 1)) * C + cp] = beta == -INFINITY ? -INFINITY : beta + q.H(s, cp);
            }
          }
        } else {
          for (int cp = threadIdx.x; cp < C; cp += blockDim.x) {
            LogSum acc;
            one_prev(cp, 0, 1, acc);
            const double beta = acc.value();
            ering[(s % (K + 1)) * C + cp] = beta == -INFINITY ? -INFINITY : beta + q.H(s, cp);
          }
        }
      }
      __syncthreads();
    }
  }
}

/// Thread per (b, c): label marginals from the difference array; the emission gradients.
/// With `direct` the array holds the label marginals themselves (the chunked K = 1 pass), else
/// their differences along t.
__global__ void marginals_kernel(Params p, double* q_out, double* grad_out, bool direct) {
  const int b = blockIdx.x, C = p.C, T = p.length(b);
  const long long off = p.offset[b], sr = p.srow(b);
  const bool ok = p.log_z[b] != -INFINITY;
  for (int c = threadIdx.x; c < C; c += blockDim.x) {
    double run = 0, sum = 0;
    long long n = 0;
    for (int u = 0; u < T; ++u) {
      run = direct ? p.diff[(sr + u) * C + c] : run + p.diff[(sr + u) * C + c];
      const double v = ok ? fmin(fmax(run, 0.0), 1.0) : 0.0;
      q_out[(off + u) * C + c] = v;
      grad_out[(off + u) * C + c] = v;
      if (p.f[(off + u) * C + c] != -INFINITY) sum += v, ++n;
    }
    if (p.centring == 1 && n > 0 && ok) {
      const double mean = sum / static_cast<double>(n);
      for (int u = 0; u < T; ++u)
        if (p.f[(off + u) * C + c] != -INFINITY) grad_out[(off + u) * C + c] -= mean;
    }
  }
}

/// Thread per entry: Σ over sequences, in sequence order.
__global__ void reduce_kernel(const double* per_seq, int B, int n, double* out) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  double s = 0;
  for (int b = 0; b < B; ++b) s += per_seq[static_cast<long long>(b) * n + i];
  out[i] = s;
}

// ---- Viterbi ----------------------------------------------------------------------------------

/// Thread 0 of a block: the best final label from α(T, ·) and the traceback through the packed
/// backpointers (one dependent load per segment), the segments (start, end, label) written from
/// the end of the sequence's slots backwards; their scores come after, in parallel
/// (segment_scores_kernel), off this serial chain.
__device__ void traceback(const Params& p, const Seq& q, const double* alpha, const unsigned* bp) {
  const int b = q.b, C = q.C, T = q.T;
  int c = 0;
  for (int l = 1; l < C; ++l)
    if (alpha[l] > alpha[c]) c = l;
  p.vscore[b] = alpha[c];
  if (alpha[c] == -INFINITY) {
    p.seg_count[b] = 0;
    return;
  }
  int t = T, n = 0;
  int* seg = p.seg + q.off * 3;
  while (t > 0) {
    const unsigned w = bp[static_cast<long long>(t) * C + c];
    const int s = t - detail::bp_k(w), slot = T - 1 - n;
    seg[slot * 3] = s, seg[slot * 3 + 1] = t, seg[slot * 3 + 2] = c;
    ++n;
    t = s;
    c = detail::bp_prev(w);
  }
  p.seg_count[b] = n;
}

/// One block per sequence, threads over its segments: the score of each segment, ψ plus the
/// transition from the segment before it (the initial score for the first).
__global__ void segment_scores_kernel(Params p) {
  const int b = blockIdx.x;
  const Seq q(p, b);
  const int C = q.C, T = q.T, n = T > 0 ? p.seg_count[b] : 0;
  const int* seg = p.seg + q.off * 3;
  double* sc = p.seg_score + q.off;
  for (int slot = T - n + static_cast<int>(threadIdx.x); slot < T; slot += blockDim.x) {
    const int s = seg[slot * 3], t = seg[slot * 3 + 1], c = seg[slot * 3 + 2], k = t - s;
    const double trans = s == 0 ? p.init[c] : p.tr[seg[(slot - 1) * 3 + 2] * C + c];
    const double psi = q.H(t, c) - q.S(s, c) - q.r * q.nu[c] * s + q.Ps(s, c) + p.dur[(k - 1) * C + c];
    sc[slot] = psi + trans;
  }
}

__device__ int* bring_of(const Params& p, int b, bool smem, double* smem_end) {
  return smem ? reinterpret_cast<int*>(smem_end) : p.bring + static_cast<long long>(b) * p.K * p.C;
}

/// One block per sequence: max-sum forward with backpointers, traceback by thread 0. With
/// `smem_ring` both rings (G and the previous labels) live in shared memory, else in global memory.
template <bool kLanes>
__global__ void __launch_bounds__(1024) viterbi_kernel(Params p, bool smem_ring) {
  extern __shared__ double smem[];
  const int b = blockIdx.x;
  const Seq q(p, b);
  const Shared sh = Shared::carve(smem, p.C, p.K, smem_ring, false);
  double* ring = ring_of(sh, p, b);
  int* bring = bring_of(p, b, smem_ring, smem + Shared::bytes(p.C, p.K, true, false) / sizeof(double));
  const int C = q.C, K = q.K, T = q.T;
  const int warp = threadIdx.x / kWarp, lane = threadIdx.x % kWarp, nw = blockDim.x / kWarp;
  unsigned* bp = p.bp + q.sr * C;
  if (T == 0) {
    if (threadIdx.x == 0) p.vscore[b] = 0.0, p.seg_count[b] = 0;
    return;
  }
  ring_start(q, ring);
  __syncthreads();
  for (int t = 1; t <= T; ++t) {
    auto best_k = [&](int c, int k0, int kstep) {
      ArgMax am;
      const int kmax = q.kmax_end(t, c);
      for (int k = k0; k <= kmax; k += kstep) am.add(ring[((t - k) % K) * C + c] + p.dur[(k - 1) * C + c], k);
      return am;
    };
    auto set_alpha = [&](int c, const ArgMax& am) {
      sh.alpha[c] = am.v == -INFINITY ? -INFINITY : q.H(t, c) + am.v;
      const int s = t - am.i;
      bp[static_cast<long long>(t) * C + c] =
          am.v == -INFINITY ? 0u : detail::pack_bp(am.i, s == 0 ? 0 : bring[(s % K) * C + c]);
    };
    if constexpr (kLanes) {
      for (int c = warp; c < C; c += nw) {
        ArgMax am = best_k(c, 1 + lane, kWarp);
        am.warp_reduce();
        if (lane == 0) set_alpha(c, am);
      }
    } else {
      for (int c = threadIdx.x; c < C; c += blockDim.x) set_alpha(c, best_k(c, 1, 1));
    }
    __syncthreads();
    if (t == T) break;
    auto best_prev = [&](int c, int c0, int cstep) {
      ArgMax am;
      for (int cp = c0; cp < C; cp += cstep) am.add(sh.alpha[cp] + p.tr[cp * C + c], cp);
      return am;
    };
    auto set_in = [&](int c, const ArgMax& am) {
      ring[(t % K) * C + c] = am.v == -INFINITY ? -INFINITY : q.G(t, c, am.v);
      bring[(t % K) * C + c] = am.v == -INFINITY ? 0 : am.i;
    };
    if constexpr (kLanes) {
      for (int c = warp; c < C; c += nw) {
        ArgMax am = best_prev(c, lane, kWarp);
        am.warp_reduce();
        if (lane == 0) set_in(c, am);
      }
    } else {
      for (int c = threadIdx.x; c < C; c += blockDim.x) set_in(c, best_prev(c, 0, 1));
    }
    __syncthreads();
  }
  if (threadIdx.x == 0) traceback(p, q, sh.alpha, bp);
}

/// Durations a lane keeps in registers in warp_kernel: K ≤ 32·kDurRegs.
constexpr int kDurRegs = 8;

/// Viterbi (kViterbi) or the forward pass (log Z, no checkpoints) for C ≤ 32 labels and
/// K ≤ 32·kDurRegs (the lanes dispatch): one warp per label for the whole sequence (threads =
/// 32·C), so that each lane keeps its durations' biases B[k, c] (k = lane + 1 + 32j) and its
/// transition Tr[lane, c] in registers, and the per-step inputs that do not depend on the
/// recurrence (S, L, Ps, Pe of step t + 1) are loaded during step t. The same terms, in the same
/// order, as viterbi_kernel<true> and forward_kernel<true> (the same maxima, ties, backpointers
/// and sums); only the latency of each step's global loads is hidden.
template <bool kViterbi>
__global__ void __launch_bounds__(1024) warp_kernel(Params p, bool smem_ring) {
  extern __shared__ double smem[];
  const int b = blockIdx.x;
  const Seq q(p, b);
  const Shared sh = Shared::carve(smem, p.C, p.K, smem_ring, false);
  double* ring = ring_of(sh, p, b);
  int* bring =
      kViterbi ? bring_of(p, b, smem_ring, smem + Shared::bytes(p.C, p.K, true, false) / sizeof(double)) : nullptr;
  const int C = q.C, K = q.K, T = q.T;
  const int c = threadIdx.x / kWarp, lane = threadIdx.x % kWarp;
  unsigned* bp = kViterbi ? p.bp + q.sr * C : nullptr;
  if (T == 0) {
    if (threadIdx.x == 0) {
      if constexpr (kViterbi) p.vscore[b] = 0.0, p.seg_count[b] = 0;
      else p.log_z[b] = 0.0;
    }
    return;
  }
  double dur[kDurRegs];
#pragma unroll
  for (int j = 0; j < kDurRegs; ++j) {
    const int k = lane + 1 + kWarp * j;
    dur[j] = k <= K ? p.dur[(k - 1) * C + c] : -INFINITY;
  }
  const double tr = lane < C ? p.tr[lane * C + c] : -INFINITY;
  const double rnu = q.r * q.nu[c];
  // inputs of step t (S(t, c), L(t, c), Pe(t − 1, c), Ps(t, c)), loaded one step ahead
  auto S_at = [&](int t) { return q.S(t, c); };
  auto L_at = [&](int t) { return q.Lrow[static_cast<long long>(t) * C + c]; };
  auto pe_at = [&](int t) { return q.pe ? q.pe[static_cast<long long>(t - 1) * C + c] : 0.0; };
  auto ps_at = [&](int t) { return t < T && q.ps ? q.ps[static_cast<long long>(t) * C + c] : 0.0; };
  double s_cur = S_at(1), pe_cur = pe_at(1), ps_cur = ps_at(1);
  int l_cur = L_at(1);
  ring_start(q, ring);
  __syncthreads();
  int pos = 1 % K;  // t % K
  for (int t = 1; t <= T; ++t) {
    double s_nx = 0, pe_nx = 0, ps_nx = 0;
    int l_nx = 0;
    if (t < T) s_nx = S_at(t + 1), l_nx = L_at(t + 1), pe_nx = pe_at(t + 1), ps_nx = ps_at(t + 1);
    // α(t, c) = H(t, c) + max_k or log Σ_k exp (G(t − k, c) + B[k, c])
    const int kmax = min(K, t - l_cur);
    if constexpr (kViterbi) {
      ArgMax am;
#pragma unroll
      for (int j = 0; j < kDurRegs; ++j) {
        const int k = lane + 1 + kWarp * j;
        if (k <= kmax) {
          const int slot = pos - k < 0 ? pos - k + K : pos - k;
          am.add(ring[slot * C + c] + dur[j], k);
        }
      }
      am.warp_reduce();
      if (lane == 0) {
        sh.alpha[c] = am.v == -INFINITY ? -INFINITY : s_cur + rnu * t + pe_cur + am.v;
        const int s = t - am.i, sslot = pos - am.i < 0 ? pos - am.i + K : pos - am.i;
        bp[static_cast<long long>(t) * C + c] =
            am.v == -INFINITY ? 0u : detail::pack_bp(am.i, s == 0 ? 0 : bring[sslot * C + c]);
      }
    } else {
      LogSum acc;
#pragma unroll
      for (int j = 0; j < kDurRegs; ++j) {
        const int k = lane + 1 + kWarp * j;
        if (k <= kmax) {
          const int slot = pos - k < 0 ? pos - k + K : pos - k;
          acc.add(ring[slot * C + c] + dur[j]);
        }
      }
      acc.warp_reduce();
      if (lane == 0) {
        const double v = acc.value();
        sh.alpha[c] = v == -INFINITY ? -INFINITY : s_cur + rnu * t + pe_cur + v;
      }
    }
    __syncthreads();
    if (t == T) break;
    // in(t, c) = max_c' or log Σ_c' exp (α(t, c') + Tr[c', c]); G(t, c) = in − S(t, c) − rν_c t + Ps(t, c)
    if constexpr (kViterbi) {
      ArgMax ai;
      if (lane < C) ai.add(sh.alpha[lane] + tr, lane);
      ai.warp_reduce();
      if (lane == 0) {
        ring[pos * C + c] = ai.v == -INFINITY ? -INFINITY : ai.v - s_cur - rnu * t + ps_cur;
        bring[pos * C + c] = ai.v == -INFINITY ? 0 : ai.i;
      }
    } else {
      LogSum acc;
      if (lane < C) acc.add(sh.alpha[lane] + tr);
      acc.warp_reduce();
      if (lane == 0) {
        const double in = acc.value();
        ring[pos * C + c] = in == -INFINITY ? -INFINITY : in - s_cur - rnu * t + ps_cur;
      }
    }
    __syncthreads();
    s_cur = s_nx, l_cur = l_nx, pe_cur = pe_nx, ps_cur = ps_nx;
    pos = pos + 1 == K ? 0 : pos + 1;
  }
  if (threadIdx.x == 0) {
    if constexpr (kViterbi) {
      traceback(p, q, sh.alpha, bp);
    } else {  // log Z as forward_kernel computes it
      double m = -INFINITY;
      for (int l = 0; l < C; ++l) m = fmax(m, sh.alpha[l]);
      double z = 0;
      for (int l = 0; l < C; ++l)
        if (sh.alpha[l] != -INFINITY) z += exp(sh.alpha[l] - m);
      p.log_z[b] = z == 0 ? -INFINITY : m + log(z);
    }
  }
}

template <class T>
gemflow::cuda::DeviceBuffer<T> upload(const T* host, std::size_t n, Stream s) {
  gemflow::cuda::DeviceBuffer<T> d(n, s);
  if (n) GF_CUDA_TRY(cudaMemcpyAsync(d.data(), host, n * sizeof(T), cudaMemcpyHostToDevice, s));
  return d;
}

template <class T>
std::vector<T> download(const gemflow::cuda::DeviceBuffer<T>& d, std::size_t n, Stream s) {
  std::vector<T> h(n);
  if (n) GF_CUDA_TRY(cudaMemcpyAsync(h.data(), d.data(), n * sizeof(T), cudaMemcpyDeviceToHost, s));
  GF_CUDA_TRY(cudaStreamSynchronize(s));
  return h;
}

}  // namespace

int device_count() noexcept {
  int n = 0;
  if (cudaGetDeviceCount(&n) != cudaSuccess) {
    (void)cudaGetLastError();
    return 0;
  }
  return n;
}

struct Session::Impl {
  Model model;
  Options options;
  Stream stream;
  std::vector<std::size_t> lengths;
  std::vector<long long> offsets, cp_offsets;
  std::size_t rows = 0, srows = 0, checkpoints = 0;
  int B = 0, C = 0, K = 0, delta = 1, threads = 32;
  bool lanes = false, smem_ring = false, smem_ering = false, smem_vring = false;
  std::size_t scan_length = 0;  ///< K = 1 chunked forward: chunk length (0: sequential kernel)
  std::vector<detail::ScanChunk> chunks;
  std::vector<long long> first_chunk;
  std::size_t bytes = 0;
  // inputs and prefix sums
  gemflow::cuda::DeviceBuffer<long long> d_offset, d_cp_offset;
  gemflow::cuda::DeviceBuffer<double> d_f, d_ps, d_pe, d_tr, d_dur, d_init, d_S, d_nu, d_log_z;
  gemflow::cuda::DeviceBuffer<int> d_L, d_N;
  // forward-backward
  gemflow::cuda::DeviceBuffer<double> d_cp, d_ring, d_ering, d_gbuf, d_abuf, d_diff, d_bound, d_gd, d_gt, d_gi;
  gemflow::cuda::DeviceBuffer<double> d_q, d_grad, d_rgd, d_rgt, d_rgi;
  // Viterbi
  gemflow::cuda::DeviceBuffer<unsigned> d_bp;
  // K = 1 chunked forward
  gemflow::cuda::DeviceBuffer<detail::ScanChunk> d_chunks;
  gemflow::cuda::DeviceBuffer<long long> d_first_chunk;
  gemflow::cuda::DeviceBuffer<double> d_P, d_A, d_Bend, d_part_gt, d_part_gd, d_VA;
  gemflow::cuda::DeviceBuffer<int> d_best, d_map, d_end_label;
  gemflow::cuda::DeviceBuffer<int> d_bring, d_seg_count, d_seg;
  gemflow::cuda::DeviceBuffer<double> d_vscore, d_seg_score;
  bool have_posteriors = false, have_paths = false, have_forward = false;

  Params params() {
    Params p;
    p.B = B, p.C = C, p.K = K;
    p.centring = options.centring == Centring::none ? 0 : options.centring == Centring::mean ? 1 : 2;
    p.offset = d_offset.data();
    p.f = d_f.data();
    p.ps = d_ps.size() ? d_ps.data() : nullptr;
    p.pe = d_pe.size() ? d_pe.data() : nullptr;
    p.tr = d_tr.data(), p.dur = d_dur.data(), p.init = d_init.data();
    p.S = d_S.data(), p.L = d_L.data(), p.N = d_N.data(), p.nu = d_nu.data(), p.log_z = d_log_z.data();
    p.delta = delta;
    p.cp_offset = d_cp_offset.data();
    p.checkpoints = d_cp.data();
    p.ring = d_ring.data(), p.ering = d_ering.data(), p.gbuf = d_gbuf.data(), p.abuf = d_abuf.data();
    p.diff = d_diff.data(), p.boundaries = d_bound.data(), p.gd = d_gd.data(), p.gt = d_gt.data(), p.gi = d_gi.data();
    p.bp = d_bp.data(), p.bring = d_bring.data(), p.vscore = d_vscore.data(), p.seg_count = d_seg_count.data();
    p.seg = d_seg.data(), p.seg_score = d_seg_score.data();
    return p;
  }

  /// The chunks of the K = 1 passes on the device, and room for their transfer matrices (each pass
  /// computes its own: log-sum-exp or max-plus).
  void scan_upload() {
    const std::size_t n = chunks.size(), c = C;
    if (d_first_chunk.size()) return;
    require(sizeof(detail::ScanChunk) * n + sizeof(long long) * (B + 1) + sizeof(double) * n * c * c,
            "the chunked passes");
    d_chunks = upload(chunks.data(), n, stream);
    d_first_chunk = upload(first_chunk.data(), first_chunk.size(), stream);
    d_P = gemflow::cuda::DeviceBuffer<double>(std::max<std::size_t>(n * c * c, 1), stream);
  }

  /// The chunked K = 1 forward pass (scan_plan.hpp): the chunks' transfer matrices, then their
  /// ordered product per sequence (log Z); with `keep_alpha`, α at each chunk's start in d_A.
  void scan_forward(bool keep_alpha) {
    const std::size_t n = chunks.size(), c = C;
    scan_upload();
    if (keep_alpha && !d_A.size()) {
      require(sizeof(double) * n * (2 * c + c * c + c), "the chunked backward pass");
      d_A = gemflow::cuda::DeviceBuffer<double>(std::max<std::size_t>(n * c, 1), stream);
      d_Bend = gemflow::cuda::DeviceBuffer<double>(std::max<std::size_t>(n * c, 1), stream);
      d_part_gt = gemflow::cuda::DeviceBuffer<double>(std::max<std::size_t>(n * c * c, 1), stream);
      d_part_gd = gemflow::cuda::DeviceBuffer<double>(std::max<std::size_t>(n * c, 1), stream);
    }
    if (n) {
      scan_chunk_kernel<false>
          <<<static_cast<unsigned>(n), kWarp * C, 0, stream>>>(params(), d_chunks.data(), d_P.data());
      GF_CUDA_CHECK_LAUNCH("scan_chunk_kernel");
    }
    scan_combine_kernel<false><<<B, kWarp, 0, stream>>>(params(), d_first_chunk.data(), d_P.data(),
                                                        keep_alpha ? d_A.data() : nullptr, nullptr);
    GF_CUDA_CHECK_LAUNCH("scan_combine_kernel");
  }

  /// Throws CudaError naming the bytes when `more` does not fit the free device memory.
  void require(std::size_t more, const char* what) {
    std::size_t free_b = 0, total = 0;
    GF_CUDA_TRY(cudaMemGetInfo(&free_b, &total));
    if (more > free_b)
      throw CudaError(std::string("semi-CRF on the GPU: ") + what + " needs " + std::to_string(more) +
                      " bytes of device memory, " + std::to_string(free_b) + " free (B = " + std::to_string(B) +
                      ", C = " + std::to_string(C) + ", K = " + std::to_string(K) + ", " + std::to_string(rows) +
                      " samples in all)");
    bytes += more;
  }

  /// Allows the kernel the device's whole opt-in shared memory (once per kernel and device: a
  /// later launch with a larger K must not find a smaller limit set by an earlier one).
  template <class Kernel>
  void launch_setup(Kernel* k, std::size_t smem) {
    if (smem <= 48 * 1024) return;
    int device = 0, optin = 0;
    GF_CUDA_TRY(cudaGetDevice(&device));
    GF_CUDA_TRY(cudaDeviceGetAttribute(&optin, cudaDevAttrMaxSharedMemoryPerBlockOptin, device));
    if (smem > static_cast<std::size_t>(optin))
      throw CudaError("semi-CRF on the GPU: " + std::to_string(smem) +
                      " bytes of shared memory per block, the device "
                      "allows " +
                      std::to_string(optin));
    GF_CUDA_TRY(gemflow::cuda::allow_dynamic_smem(k, static_cast<std::size_t>(optin)));
  }
};

Session::Session(const Model& m, const Batch& x, const Options& o, Stream stream) : impl_(std::make_unique<Impl>()) {
  if (x.segment_score != nullptr)
    throw std::invalid_argument("the GPU path has no segment-level scores (Batch::segment_score): run it on the CPU");
  semicrf::detail::validate(m, x);
  if (m.transitions.size() != m.labels * m.labels)
    throw std::invalid_argument(
        "the GPU path needs transitions that do not depend on the duration (C·C values); "
        "these have K·C·C: use the CPU");
  if (o.recurrence == Recurrence::general)
    throw std::invalid_argument("the GPU path runs the factored recurrence only (recurrence: general is CPU-only)");
  auto& s = *impl_;
  s.model = m;
  s.options = o;
  s.stream = stream;
  s.lengths = x.lengths;
  s.B = static_cast<int>(x.lengths.size());
  s.C = static_cast<int>(m.labels);
  s.K = static_cast<int>(m.max_duration);
  // three label rows of fp64 live in shared memory (48 KiB of them at most)
  // (a backpointer packs k < 2²¹ and the previous label < 2¹¹ into one word: detail::pack_bp)
  GF_EXPECTS(m.labels <= 2048 && m.max_duration < (1u << detail::kBpBits),
             "the GPU path takes at most 2048 labels and K < 2²¹ (C = " + std::to_string(m.labels) +
                 ", K = " + std::to_string(m.max_duration) + ")");
  std::size_t maxT = 0;
  s.offsets.assign(s.B + 1, 0);
  for (int b = 0; b < s.B; ++b) {
    s.offsets[b + 1] = s.offsets[b] + static_cast<long long>(x.lengths[b]);
    maxT = std::max(maxT, x.lengths[b]);
  }
  GF_EXPECTS(maxT < (1u << 30), "sequences longer than 2³⁰ samples");
  s.rows = static_cast<std::size_t>(s.offsets[s.B]);
  s.srows = s.rows + s.B;
  s.delta = static_cast<int>(semicrf::detail::interval(maxT, m.max_duration, o));
  s.cp_offsets.assign(s.B + 1, 0);
  for (int b = 0; b < s.B; ++b)
    s.cp_offsets[b + 1] = s.cp_offsets[b] + static_cast<long long>((x.lengths[b] + s.delta - 1) / s.delta + 1);
  s.checkpoints = static_cast<std::size_t>(s.cp_offsets[s.B]);
  // K-adaptive: a warp per label with lanes over durations (and over previous labels) for K > 8,
  // and for C ≥ 16 whatever K (a thread per label sums its C previous labels serially, where a
  // warp reduces them in 5 shuffle rounds, so that small K is no slower than K = 30 at C = 24);
  // else (small K and C) a thread per label
  s.lanes = s.K > 8 || s.C >= 16;
  s.threads = s.lanes ? std::min(32 * s.C, 1024) : std::min(((s.C + 31) / 32) * 32, 1024);
  s.smem_ring = Shared::bytes(s.C, s.K, true, false) <= kRingSmemLimit;
  s.smem_ering = Shared::bytes(s.C, s.K, s.smem_ring, true) <= kRingSmemLimit;
  s.smem_vring = Shared::bytes(s.C, s.K, true, false) + sizeof(int) * s.K * s.C <= kRingSmemLimit;
  {
    int device = 0, sms = 0;
    GF_CUDA_TRY(cudaGetDevice(&device));
    GF_CUDA_TRY(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
    s.scan_length = detail::scan_chunk_length(x.lengths, m.max_duration, m.labels, sms);
    if (s.scan_length) s.chunks = detail::scan_chunks(x.lengths, s.scan_length, s.first_chunk);
  }
  const std::size_t C = m.labels, K = m.max_duration, B = x.lengths.size();
  const std::size_t in_bytes =
      sizeof(double) * (s.rows * C * (1 + (x.start_scores ? 1 : 0) + (x.end_scores ? 1 : 0)) + C * C + K * C + C) +
      sizeof(long long) * 2 * (B + 1) + (sizeof(double) * 2 + sizeof(int) * 2) * s.srows * C;
  s.require(in_bytes, "the scores and prefix sums");
  s.d_offset = upload(s.offsets.data(), s.offsets.size(), stream);
  s.d_cp_offset = upload(s.cp_offsets.data(), s.cp_offsets.size(), stream);
  s.d_f = upload(x.emissions, s.rows * C, stream);
  if (x.start_scores) s.d_ps = upload(x.start_scores, s.rows * C, stream);
  if (x.end_scores) s.d_pe = upload(x.end_scores, s.rows * C, stream);
  s.d_tr = upload(m.transitions.data(), C * C, stream);
  s.d_dur = upload(m.duration_bias.data(), K * C, stream);
  std::vector<double> init = m.initial.empty() ? std::vector<double>(C, 0.0) : m.initial;
  s.d_init = upload(init.data(), C, stream);
  s.d_S = gemflow::cuda::DeviceBuffer<double>(s.srows * C, stream);
  s.d_L = gemflow::cuda::DeviceBuffer<int>(s.srows * C, stream);
  s.d_N = gemflow::cuda::DeviceBuffer<int>(s.srows * C, stream);
  s.d_nu = gemflow::cuda::DeviceBuffer<double>(B * C, stream);
  s.d_log_z = gemflow::cuda::DeviceBuffer<double>(std::max<std::size_t>(B, 1), stream);
  if (B > 0) {
    prefix_kernel<<<s.B, std::min(((s.C + 31) / 32) * 32, 256), 0, stream>>>(s.params());
    GF_CUDA_CHECK_LAUNCH("prefix_kernel");
  }
}

Session::~Session() = default;

void Session::forward() {
  auto& s = *impl_;
  if (s.B == 0) return;
  const std::size_t C = s.C, K = s.K;
  if (s.scan_length) {
    // K = 1 and a batch smaller than the SM count: chunk transfer matrices in parallel, then
    // their ordered product per sequence (scan_plan.hpp)
    s.scan_forward(false);
    s.have_forward = true;
    return;
  }
  if (!s.d_ring.size() && !s.smem_ring) {
    s.require(sizeof(double) * s.B * K * C, "the rings");
    s.d_ring = gemflow::cuda::DeviceBuffer<double>(s.B * K * C, s.stream);
  }
  const std::size_t smem = Shared::bytes(s.C, s.K, s.smem_ring, false);
  if (s.lanes && s.C <= kWarp && s.K <= kWarp * kDurRegs) {
    s.launch_setup(warp_kernel<false>, smem);
    warp_kernel<false><<<s.B, kWarp * s.C, smem, s.stream>>>(s.params(), s.smem_ring);
  } else if (s.lanes) {
    s.launch_setup(forward_kernel<true>, smem);
    forward_kernel<true><<<s.B, s.threads, smem, s.stream>>>(s.params(), s.smem_ring, false);
  } else {
    s.launch_setup(forward_kernel<false>, smem);
    forward_kernel<false><<<s.B, s.threads, smem, s.stream>>>(s.params(), s.smem_ring, false);
  }
  GF_CUDA_CHECK_LAUNCH("forward_kernel");
  s.have_forward = true;
}

void Session::forward_backward() {
  auto& s = *impl_;
  if (s.B == 0) return;
  const std::size_t C = s.C, K = s.K, B = s.B, D = s.delta;
  const bool scan = s.scan_length != 0;
  if (!s.d_diff.size()) {
    s.require(sizeof(double) * ((scan ? 0
                                      : s.checkpoints * (K * C + C) + (s.smem_ring ? 0 : B * K * C) +
                                            (s.smem_ering ? 0 : B * (K + 1) * C) + 2 * B * D * C) +
                                s.srows * C + s.rows + B * (K * C + C * C + C) + 2 * s.rows * C + K * C + C * C + C),
              "the forward-backward pass");
    if (!scan) {
      s.d_cp = gemflow::cuda::DeviceBuffer<double>(s.checkpoints * (K * C + C), s.stream);
      if (!s.smem_ring && !s.d_ring.size()) s.d_ring = gemflow::cuda::DeviceBuffer<double>(B * K * C, s.stream);
      if (!s.smem_ering) s.d_ering = gemflow::cuda::DeviceBuffer<double>(B * (K + 1) * C, s.stream);
      s.d_gbuf = gemflow::cuda::DeviceBuffer<double>(B * D * C, s.stream);
      s.d_abuf = gemflow::cuda::DeviceBuffer<double>(B * D * C, s.stream);
    }
    s.d_diff = gemflow::cuda::DeviceBuffer<double>(s.srows * C, s.stream);
    s.d_bound = gemflow::cuda::DeviceBuffer<double>(std::max<std::size_t>(s.rows, 1), s.stream);
    s.d_gd = gemflow::cuda::DeviceBuffer<double>(B * K * C, s.stream);
    s.d_gt = gemflow::cuda::DeviceBuffer<double>(B * C * C, s.stream);
    s.d_gi = gemflow::cuda::DeviceBuffer<double>(B * C, s.stream);
    s.d_q = gemflow::cuda::DeviceBuffer<double>(std::max<std::size_t>(s.rows * C, 1), s.stream);
    s.d_grad = gemflow::cuda::DeviceBuffer<double>(std::max<std::size_t>(s.rows * C, 1), s.stream);
    s.d_rgd = gemflow::cuda::DeviceBuffer<double>(K * C, s.stream);
    s.d_rgt = gemflow::cuda::DeviceBuffer<double>(C * C, s.stream);
    s.d_rgi = gemflow::cuda::DeviceBuffer<double>(C, s.stream);
  }
  GF_CUDA_TRY(cudaMemsetAsync(s.d_diff.data(), 0, s.d_diff.size_bytes(), s.stream));
  GF_CUDA_TRY(cudaMemsetAsync(s.d_bound.data(), 0, s.d_bound.size_bytes(), s.stream));
  GF_CUDA_TRY(cudaMemsetAsync(s.d_gd.data(), 0, s.d_gd.size_bytes(), s.stream));
  GF_CUDA_TRY(cudaMemsetAsync(s.d_gt.data(), 0, s.d_gt.size_bytes(), s.stream));
  GF_CUDA_TRY(cudaMemsetAsync(s.d_gi.data(), 0, s.d_gi.size_bytes(), s.stream));
  const Params p = s.params();
  if (scan) {
    // K = 1 and a batch smaller than the SM count: α and β at the chunks' ends from the chunk
    // matrices, then every chunk's marginals and gradient sums in parallel (scan_plan.hpp)
    s.scan_forward(true);
    const ScanBackward w{s.d_chunks.data(), s.d_first_chunk.data(), s.d_P.data(),      s.d_A.data(),
                         s.d_Bend.data(),   s.d_part_gt.data(),     s.d_part_gd.data()};
    scan_beta_kernel<<<s.B, kWarp, 0, s.stream>>>(p, w);
    GF_CUDA_CHECK_LAUNCH("scan_beta_kernel");
    const std::size_t msmem = sizeof(double) * kWarp * (s.scan_length + 3);
    s.launch_setup(scan_marginals_kernel, msmem);
    scan_marginals_kernel<<<static_cast<unsigned>(s.chunks.size()), kWarp * s.C, msmem, s.stream>>>(p, w);
    GF_CUDA_CHECK_LAUNCH("scan_marginals_kernel");
    scan_gradients_kernel<<<s.B, 256, 0, s.stream>>>(p, w);
    GF_CUDA_CHECK_LAUNCH("scan_gradients_kernel");
  } else {
    const std::size_t fsmem = Shared::bytes(s.C, s.K, s.smem_ring, false);
    const std::size_t bsmem = Shared::bytes(s.C, s.K, s.smem_ring, s.smem_ering);
    if (s.lanes) {
      s.launch_setup(forward_kernel<true>, fsmem);
      forward_kernel<true><<<s.B, s.threads, fsmem, s.stream>>>(p, s.smem_ring, true);
      GF_CUDA_CHECK_LAUNCH("forward_kernel");
      s.launch_setup(backward_kernel<true>, bsmem);
      backward_kernel<true><<<s.B, s.threads, bsmem, s.stream>>>(p, s.smem_ring, s.smem_ering);
    } else {
      s.launch_setup(forward_kernel<false>, fsmem);
      forward_kernel<false><<<s.B, s.threads, fsmem, s.stream>>>(p, s.smem_ring, true);
      GF_CUDA_CHECK_LAUNCH("forward_kernel");
      s.launch_setup(backward_kernel<false>, bsmem);
      backward_kernel<false><<<s.B, s.threads, bsmem, s.stream>>>(p, s.smem_ring, s.smem_ering);
    }
    GF_CUDA_CHECK_LAUNCH("backward_kernel");
  }
  // the chunked pass writes the label marginals themselves, the sequential one their differences
  marginals_kernel<<<s.B, std::min(((s.C + 31) / 32) * 32, 256), 0, s.stream>>>(p, s.d_q.data(), s.d_grad.data(), scan);
  GF_CUDA_CHECK_LAUNCH("marginals_kernel");
  auto reduce = [&](const gemflow::cuda::DeviceBuffer<double>& per_seq, gemflow::cuda::DeviceBuffer<double>& out,
                    std::size_t n) {
    reduce_kernel<<<static_cast<unsigned>((n + 255) / 256), 256, 0, s.stream>>>(per_seq.data(), s.B,
                                                                                static_cast<int>(n), out.data());
    GF_CUDA_CHECK_LAUNCH("reduce_kernel");
  };
  reduce(s.d_gd, s.d_rgd, K * C);
  reduce(s.d_gt, s.d_rgt, C * C);
  reduce(s.d_gi, s.d_rgi, C);
  s.have_forward = s.have_posteriors = true;
}

void Session::viterbi() {
  auto& s = *impl_;
  if (s.B == 0) return;
  const std::size_t C = s.C, K = s.K, B = s.B;
  if (!s.d_bp.size()) {
    s.require(sizeof(int) * (s.srows * C + B + 3 * s.rows + (s.smem_vring ? 0 : B * K * C)) +
                  sizeof(double) * (B + s.rows) + (s.smem_vring || s.d_ring.size() ? 0 : sizeof(double) * B * K * C),
              "Viterbi's backpointers");
    s.d_bp = gemflow::cuda::DeviceBuffer<unsigned>(s.srows * C, s.stream);
    if (!s.smem_vring && !s.scan_length) s.d_bring = gemflow::cuda::DeviceBuffer<int>(B * K * C, s.stream);
    s.d_seg_count = gemflow::cuda::DeviceBuffer<int>(B, s.stream);
    s.d_seg = gemflow::cuda::DeviceBuffer<int>(std::max<std::size_t>(3 * s.rows, 1), s.stream);
    s.d_vscore = gemflow::cuda::DeviceBuffer<double>(B, s.stream);
    s.d_seg_score = gemflow::cuda::DeviceBuffer<double>(std::max<std::size_t>(s.rows, 1), s.stream);
    // The backtrack writes each sequence's segments into its last rows only; paths() copies the
    // arrays back whole (one copy each, not one per sequence), so the other rows are set once here
    // and the copy moves defined bytes.
    GF_CUDA_TRY(cudaMemsetAsync(s.d_seg.data(), 0xFF, s.d_seg.size_bytes(), s.stream));
    GF_CUDA_TRY(cudaMemsetAsync(s.d_seg_score.data(), 0xFF, s.d_seg_score.size_bytes(), s.stream));
    if (!s.smem_vring && !s.d_ring.size() && !s.scan_length)
      s.d_ring = gemflow::cuda::DeviceBuffer<double>(B * K * C, s.stream);
  }
  if (s.scan_length) {
    // K = 1 and a batch smaller than the SM count: max-plus chunk matrices, α at the chunks'
    // starts, each chunk's backpointers and end-to-start label map in parallel, the maps linked in
    // order per sequence, then each chunk's segments in parallel (scan_plan.hpp)
    s.scan_upload();
    const std::size_t n = s.chunks.size();
    if (!s.d_best.size()) {
      s.require(sizeof(double) * n * C + sizeof(int) * (B + n * C + n), "the chunked Viterbi");
      s.d_VA = gemflow::cuda::DeviceBuffer<double>(std::max<std::size_t>(n * C, 1), s.stream);
      s.d_best = gemflow::cuda::DeviceBuffer<int>(B, s.stream);
      s.d_map = gemflow::cuda::DeviceBuffer<int>(std::max<std::size_t>(n * C, 1), s.stream);
      s.d_end_label = gemflow::cuda::DeviceBuffer<int>(std::max<std::size_t>(n, 1), s.stream);
    }
    const Params p = s.params();
    const ScanViterbi w{s.d_chunks.data(), s.d_first_chunk.data(), s.d_VA.data(),
                        s.d_best.data(),   s.d_map.data(),         s.d_end_label.data()};
    scan_chunk_kernel<true><<<static_cast<unsigned>(n), kWarp * s.C, 0, s.stream>>>(p, s.d_chunks.data(), s.d_P.data());
    GF_CUDA_CHECK_LAUNCH("scan_chunk_kernel");
    scan_combine_kernel<true>
        <<<s.B, kWarp, 0, s.stream>>>(p, s.d_first_chunk.data(), s.d_P.data(), s.d_VA.data(), s.d_best.data());
    GF_CUDA_CHECK_LAUNCH("scan_combine_kernel");
    scan_viterbi_chunk_kernel<<<static_cast<unsigned>(n), kWarp * s.C, 0, s.stream>>>(p, w);
    GF_CUDA_CHECK_LAUNCH("scan_viterbi_chunk_kernel");
    scan_viterbi_link_kernel<<<(s.B + 127) / 128, 128, 0, s.stream>>>(p, w);
    GF_CUDA_CHECK_LAUNCH("scan_viterbi_link_kernel");
    scan_viterbi_segments_kernel<<<static_cast<unsigned>((n + 127) / 128), 128, 0, s.stream>>>(
        p, w, static_cast<long long>(n));
    GF_CUDA_CHECK_LAUNCH("scan_viterbi_segments_kernel");
    segment_scores_kernel<<<s.B, 256, 0, s.stream>>>(p);
    GF_CUDA_CHECK_LAUNCH("segment_scores_kernel");
    s.have_paths = true;
    return;
  }
  // both rings (G, fp64, and the previous labels, int) in shared memory, or both in global memory
  const std::size_t smem =
      s.smem_vring ? Shared::bytes(s.C, s.K, true, false) + sizeof(int) * K * C : Shared::bytes(s.C, s.K, false, false);
  if (s.lanes && s.C <= kWarp && s.K <= kWarp * kDurRegs) {
    s.launch_setup(warp_kernel<true>, smem);
    warp_kernel<true><<<s.B, kWarp * s.C, smem, s.stream>>>(s.params(), s.smem_vring);
  } else if (s.lanes) {
    s.launch_setup(viterbi_kernel<true>, smem);
    viterbi_kernel<true><<<s.B, s.threads, smem, s.stream>>>(s.params(), s.smem_vring);
  } else {
    s.launch_setup(viterbi_kernel<false>, smem);
    viterbi_kernel<false><<<s.B, s.threads, smem, s.stream>>>(s.params(), s.smem_vring);
  }
  GF_CUDA_CHECK_LAUNCH("viterbi_kernel");
  segment_scores_kernel<<<s.B, 256, 0, s.stream>>>(s.params());
  GF_CUDA_CHECK_LAUNCH("segment_scores_kernel");
  s.have_paths = true;
}

void Session::synchronize() { GF_CUDA_TRY(cudaStreamSynchronize(impl_->stream)); }

std::vector<double> Session::log_z() {
  auto& s = *impl_;
  if (s.B == 0) return {};
  if (!s.have_forward) forward();
  return download(s.d_log_z, s.B, s.stream);
}

Posteriors Session::posteriors() {
  auto& s = *impl_;
  Posteriors r;
  const std::size_t C = s.C, K = s.K;
  if (s.B == 0) {
    r.grad_transitions.assign(C * C, 0.0);
    r.grad_duration.assign(K * C, 0.0);
    r.grad_initial.assign(C, 0.0);
    return r;
  }
  if (!s.have_posteriors) forward_backward();
  r.log_z = download(s.d_log_z, s.B, s.stream);
  r.label_marginals = download(s.d_q, s.rows * C, s.stream);
  r.grad_emissions = download(s.d_grad, s.rows * C, s.stream);
  r.boundaries = download(s.d_bound, s.rows, s.stream);
  r.grad_duration = download(s.d_rgd, K * C, s.stream);
  r.grad_transitions = download(s.d_rgt, C * C, s.stream);
  r.grad_initial = download(s.d_rgi, C, s.stream);
  return r;
}

std::vector<Path> Session::paths() {
  auto& s = *impl_;
  std::vector<Path> out(s.B);
  if (s.B == 0) return out;
  if (!s.have_paths) viterbi();
  const auto score = download(s.d_vscore, s.B, s.stream);
  const auto count = download(s.d_seg_count, s.B, s.stream);
  const auto seg = download(s.d_seg, 3 * s.rows, s.stream);
  const auto seg_score = download(s.d_seg_score, s.rows, s.stream);
  for (int b = 0; b < s.B; ++b) {
    out[b].score = score[b];
    const long long off = s.offsets[b];
    const long long T = s.offsets[b + 1] - off;
    for (long long i = T - count[b]; i < T; ++i) {
      const long long r = off + i;
      out[b].segments.push_back({static_cast<std::size_t>(seg[r * 3]), static_cast<std::size_t>(seg[r * 3 + 1]),
                                 static_cast<std::size_t>(seg[r * 3 + 2]), seg_score[r]});
    }
  }
  return out;
}

std::size_t Session::device_bytes() const { return impl_->bytes; }

std::vector<double> log_partition(const Model& m, const Batch& x, const Options& o, Stream stream) {
  Session s(m, x, o, stream);
  s.forward();
  return s.log_z();
}

Posteriors posteriors(const Model& m, const Batch& x, const Options& o, Stream stream) {
  Session s(m, x, o, stream);
  s.forward_backward();
  return s.posteriors();
}

std::vector<Path> viterbi(const Model& m, const Batch& x, const Options& o, Stream stream) {
  Session s(m, x, o, stream);
  s.viterbi();
  return s.paths();
}

}  // namespace gemflow::semicrf::cuda
