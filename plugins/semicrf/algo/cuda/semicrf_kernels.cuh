#pragma once
// Kernels of the semi-CRF on CUDA (see gemflow/semicrf/semicrf_cuda.hpp for the contract).
//
// Notation (per sequence b of length T, labels c, durations k = 1..K):
//   S[t, c]   prefix sums of the (centred) emissions, fp64, rows 0..T
//   L[t, c]   1 + the last sample < t whose score is −∞ (0 if none): [s, t) is possible iff s ≥ L[t, c]
//   N[s, c]   the first sample ≥ s whose score is −∞ (T if none):    [s, e) is possible iff e ≤ N[s, c]
//   r·ν_c     the centring added back per sample (reconstruct)
// Every segment potential splits into a start part, a duration part and an end part:
//   in(s, c) + ψ₀(e, k, c) = G(s, c) + B[k, c] + H(e, c)
//   G(s, c) = in(s, c) − S[s, c] − r ν_c s + Ps(s, c)          (in(0, c) = I[c])
//   H(e, c) = S[e, c] + r ν_c e + Pe(e − 1, c)
// so that the forward step reads one ring row of G per duration:
//   α(t, c) = H(t, c) + log Σ_k exp(G(t − k, c) + B[k, c])
// and the backward step one ring row of E(e, c) = β(e, c) + H(e, c):
//   γ(s, c) = G(s, c) − in(s, c) + log Σ_k exp(B[k, c] + E(s + k, c))      (= the rest after a start)
//   p(s, k, c) = exp(G(s, c) + B[k, c] + E(s + k, c) − log Z)
// G, H, E, α, β are fp64; the exponentials and their sums fp32 (each term is exp(v − max) ≤ 1).
#include <cuda_runtime.h>

#include <cmath>
#include <cstdint>

namespace gemflow::semicrf::cuda::detail {

constexpr int kWarp = 32;

/// Device view of a batch and a model (all pointers device memory; per-sequence arrays of
/// T_b + 1 rows start at row srow[b] = offset[b] + b).
struct Params {
  int B = 0, C = 0, K = 0;
  int centring = 0;                   ///< 0 none, 1 mean, 2 reconstruct
  const long long* offset = nullptr;  ///< B + 1 row offsets of the emissions
  const double* f = nullptr;          ///< Σ T × C emissions
  const double* ps = nullptr;         ///< start scores or nullptr
  const double* pe = nullptr;         ///< end scores or nullptr
  const double* tr = nullptr;         ///< C × C
  const double* dur = nullptr;        ///< K × C
  const double* init = nullptr;       ///< C
  double* S = nullptr;                ///< (Σ T + B) × C
  int* L = nullptr;                   ///< same shape
  int* N = nullptr;                   ///< same shape
  double* nu = nullptr;               ///< B × C (0 without centring)
  double* log_z = nullptr;            ///< B
  // forward state, checkpoints, backward buffers
  int delta = 1;                         ///< checkpoint interval Δ
  const long long* cp_offset = nullptr;  ///< B + 1: first checkpoint of each sequence
  double* checkpoints = nullptr;         ///< per checkpoint: K·C ring of G, then C values of α
  double* ring = nullptr;                ///< B × K × C (global rings, when not in shared memory)
  double* ering = nullptr;               ///< B × (K + 1) × C
  double* gbuf = nullptr;                ///< B × Δ × C: G of the block being recomputed
  double* abuf = nullptr;                ///< B × Δ × C: α of that block
  double* diff = nullptr;                ///< (Σ T + B) × C: label-marginal difference array
  double* boundaries = nullptr;          ///< Σ T
  double* gd = nullptr;                  ///< B × K × C duration-bias gradients
  double* gt = nullptr;                  ///< B × C × C transition gradients
  double* gi = nullptr;                  ///< B × C initial-score gradients
  // Viterbi
  unsigned* bp = nullptr;    ///< (Σ T + B) × C packed backpointers (pack_bp): best k and the label before
  int* bring = nullptr;      ///< B × K × C ring of the best previous label in(·) chose (when not in shared memory)
  double* vscore = nullptr;  ///< B best scores
  int* seg_count = nullptr;  ///< B
  int* seg = nullptr;        ///< Σ T × 3 (start, end, label), sequence b's at offset[b]
  double* seg_score = nullptr;  ///< Σ T

  __device__ int length(int b) const { return static_cast<int>(offset[b + 1] - offset[b]); }
  __device__ long long srow(int b) const { return offset[b] + b; }
};

/// Shared-memory layout of a block (one sequence); carved once, in this order.
struct Shared {
  double* alpha;  ///< C
  double* aux;    ///< C (γ in the backward pass)
  double* psum;   ///< C (Σ_k p per label)
  double* ring;   ///< K·C when the ring lives in shared memory, else nullptr
  double* ering;  ///< (K + 1)·C likewise
  static __host__ __device__ std::size_t bytes(int C, int K, bool ring, bool ering) {
    return sizeof(double) *
           (3 * static_cast<std::size_t>(C) + (ring ? std::size_t(K) * C : 0) + (ering ? std::size_t(K + 1) * C : 0));
  }
  __device__ static Shared carve(double* base, int C, int K, bool ring, bool ering) {
    Shared s;
    s.alpha = base;
    s.aux = base + C;
    s.psum = base + 2 * C;
    double* p = base + 3 * C;
    s.ring = ring ? p : nullptr;
    if (ring) p += static_cast<std::size_t>(K) * C;
    s.ering = ering ? p : nullptr;
    return s;
  }
};

// ---- log-sum-exp and arg-max reductions (fixed order: deterministic) ----------------------------

struct LogSum {
  double m = -INFINITY;
  float s = 0.f;
  __device__ void add(double v) {
    if (v == -INFINITY) return;
    if (v > m) {
      s = s * __expf(static_cast<float>(m - v)) + 1.f;
      m = v;
    } else {
      s += __expf(static_cast<float>(v - m));
    }
  }
  __device__ void merge(double m2, float s2) {
    if (m2 == -INFINITY) return;
    if (m == -INFINITY) {
      m = m2, s = s2;
      return;
    }
    const double mx = m > m2 ? m : m2;
    s = s * __expf(static_cast<float>(m - mx)) + s2 * __expf(static_cast<float>(m2 - mx));
    m = mx;
  }
  __device__ void warp_reduce() {
    for (int o = kWarp / 2; o > 0; o /= 2) {
      const double m2 = __shfl_xor_sync(0xffffffffu, m, o);
      const float s2 = __shfl_xor_sync(0xffffffffu, s, o);
      merge(m2, s2);
    }
  }
  [[nodiscard]] __device__ double value() const { return s == 0.f ? -INFINITY : m + static_cast<double>(logf(s)); }
};

struct ArgMax {
  double v = -INFINITY;
  int i = 0x7fffffff;
  __device__ void add(double x, int idx) {
    if (x > v || (x == v && idx < i && x != -INFINITY)) v = x, i = idx;
  }
  __device__ void warp_reduce() {
    for (int o = kWarp / 2; o > 0; o /= 2) {
      const double v2 = __shfl_xor_sync(0xffffffffu, v, o);
      const int i2 = __shfl_xor_sync(0xffffffffu, i, o);
      add(v2, i2);
    }
  }
};

/// Backpointer of (t, c): the best duration k and the label c' of the segment before it (the label
/// in(t − k, c) chose), in one word, so that the traceback follows one load per segment.
constexpr int kBpBits = 21;  ///< k < 2²¹; c' < 2¹¹ (C ≤ 2048)
__host__ __device__ inline unsigned pack_bp(int k, int cprev) {
  return static_cast<unsigned>(k) | (static_cast<unsigned>(cprev) << kBpBits);
}
__host__ __device__ inline int bp_k(unsigned w) { return static_cast<int>(w & ((1u << kBpBits) - 1)); }
__host__ __device__ inline int bp_prev(unsigned w) { return static_cast<int>(w >> kBpBits); }

__device__ inline double warp_sum(double v) {
  // butterfly: every lane ends with the same sum, added in the same order on every run
  for (int o = kWarp / 2; o > 0; o /= 2) v += __shfl_xor_sync(0xffffffffu, v, o);
  return v;
}

}  // namespace gemflow::semicrf::cuda::detail
