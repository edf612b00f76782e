// Blocked (tiled) Floyd-Warshall on the Dress-Havel doubled graph: the fast CPU smoothing.
// See smoothing.hpp for the algorithm, its sources and the exactness argument.
//
// Layout: the bounds are copied into two tile-major buffers (tile (I, J) is a contiguous
// T×T row-major block) padded to B·T atoms with unconnected atoms (U = +inf, L = 0), which
// take part in no finite path. Per block K:
//   phase 1: tile (K, K) in place (pivots k, k' for k in K, one after the other);
//   phase 2: tiles (K, J) in place, reading the finished (K, K);
//   phase 3: every other tile (I, J) from the finished (I, K) and (K, J): a min-plus product
//            whose pivot order no longer matters, so it is register-blocked.
// The closure and every intermediate state are symmetric (a path i ⇝ j' reversed, with the
// copies swapped, is a path j ⇝ i' of the same length), so phases 2 and 3 compute the tiles
// with I ≤ J only and store their transposes as (J, I): about half the work.
// Every entry always holds the length of a real path of the doubled graph and is never
// worse than plain Floyd-Warshall's value at the same point, hence the result is exact
// (Venkataraman, Sahni & Mukhopadhyaya 2003). Tiles of one phase are independent: threads
// take them from an atomic counter; the result does not depend on the thread count.
//
// Inner loops use GCC/Clang vector extensions (portable element-wise SIMD, no intrinsics,
// no branches: min/max by comparison and select). On x86-64 the kernels are compiled for
// x86-64-v4 (AVX-512), x86-64-v3 (AVX2) and the baseline, chosen once at run time.
#include <algorithm>
#include <atomic>
#include <barrier>
#include <chrono>
#include <cstring>
#include <exception>
#include <limits>
#include <new>
#include <stdexcept>
#include <string>
#include <system_error>
#include <thread>
#include <utility>
#include <vector>

#include "gemflow/distgeom/smoothing.hpp"
#include "smoothing_internal.hpp"

namespace gemflow::distgeom {

namespace {

constexpr std::size_t kDefaultTile = 64;
constexpr std::size_t kTileQuantum = 32;  // tiles are multiples of the widest column strip
constexpr std::size_t kMaxTile = 1024;

#define GF_ALWAYS_INLINE inline __attribute__((always_inline))

/// Load / store of one vector from possibly unaligned memory.
/// (By pointer, not by value: vector arguments would change the ABI between ISA clones.)
#define GF_VLOAD(v, p) std::memcpy(&(v), (p), sizeof(v))
#define GF_VSTORE(p, v) std::memcpy((p), &(v), sizeof(v))

/// One pivot step of a tile in place, pivots k then k' for kk = 0..t-1:
///   C_U[r][c] = min(C_U[r][c], A_U[r][kk] + B_U[kk][c])
///   C_L[r][c] = max(C_L[r][c], B_L[kk][c] − A_U[r][kk], l_rk − B_U[kk][c]),
///   l_rk = max(A_L[r][kk], D_L[kk][kk] − A_U[r][kk])
/// A, B and D may alias C (phases 1 and 2): every read of the pivot row/column is either
/// hoisted before the row loop or element-aligned with the write, and any value changed
/// during the step is still a real path length, so in-place order is safe.
template <class T, std::size_t VB>
GF_ALWAYS_INLINE void tile_inplace(std::size_t t, T* cu, T* cl, const T* au, const T* al, const T* bu, const T* bl,
                                   const T* dl) {
  typedef T V __attribute__((vector_size(VB)));
  constexpr std::size_t W = VB / sizeof(T);
  for (std::size_t kk = 0; kk < t; ++kk) {
    const T dkk = dl[kk * t + kk];
    const T* ku = bu + kk * t;
    const T* kl = bl + kk * t;
    for (std::size_t r = 0; r < t; ++r) {
      const T uik = au[r * t + kk];
      const T d = dkk - uik;
      const T lik = al[r * t + kk] < d ? d : al[r * t + kk];
      T* ru = cu + r * t;
      T* rl = cl + r * t;
      for (std::size_t c = 0; c < t; c += W) {
        V bU, bL, u, l;
        GF_VLOAD(bU, ku + c);
        GF_VLOAD(bL, kl + c);
        GF_VLOAD(u, ru + c);
        GF_VLOAD(l, rl + c);
        const V s = uik + bU;
        u = s < u ? s : u;
        const V x = bL - uik, y = lik - bU;
        const V m = x < y ? y : x;
        l = l < m ? m : l;
        GF_VSTORE(ru + c, u);
        GF_VSTORE(rl + c, l);
      }
    }
  }
}

/// Phase 3: C ⊕= A ⊗ B over all kk (A, B, D finished and distinct from C). Register block of
/// R rows × NV vectors, pivots innermost; l_rk precomputed once per tile into `lik`.
template <class T, std::size_t VB, std::size_t R, std::size_t NV>
GF_ALWAYS_INLINE void tile_minplus(std::size_t t, T* __restrict cu, T* __restrict cl, const T* __restrict au,
                                   const T* __restrict al, const T* __restrict bu, const T* __restrict bl,
                                   const T* __restrict dl, T* __restrict lik) {
  typedef T V __attribute__((vector_size(VB)));
  constexpr std::size_t W = VB / sizeof(T);
  for (std::size_t r = 0; r < t; ++r)
    for (std::size_t kk = 0; kk < t; ++kk) {
      const T d = dl[kk * t + kk] - au[r * t + kk];
      const T a = al[r * t + kk];
      lik[r * t + kk] = a < d ? d : a;
    }
  for (std::size_t r0 = 0; r0 < t; r0 += R)
    for (std::size_t c0 = 0; c0 < t; c0 += NV * W) {
      V U[R][NV], L[R][NV];
      for (std::size_t r = 0; r < R; ++r)
        for (std::size_t v = 0; v < NV; ++v) {
          GF_VLOAD(U[r][v], cu + (r0 + r) * t + c0 + v * W);
          GF_VLOAD(L[r][v], cl + (r0 + r) * t + c0 + v * W);
        }
      for (std::size_t kk = 0; kk < t; ++kk) {
        V bU[NV], bL[NV];
        for (std::size_t v = 0; v < NV; ++v) {
          GF_VLOAD(bU[v], bu + kk * t + c0 + v * W);
          GF_VLOAD(bL[v], bl + kk * t + c0 + v * W);
        }
#pragma GCC unroll 8
        for (std::size_t r = 0; r < R; ++r) {
          const T uik = au[(r0 + r) * t + kk];
          const T l = lik[(r0 + r) * t + kk];
#pragma GCC unroll 8
          for (std::size_t v = 0; v < NV; ++v) {
            const V s = uik + bU[v];
            U[r][v] = s < U[r][v] ? s : U[r][v];
            const V x = bL[v] - uik, y = l - bU[v];
            const V m = x < y ? y : x;
            L[r][v] = L[r][v] < m ? m : L[r][v];
          }
        }
      }
      for (std::size_t r = 0; r < R; ++r)
        for (std::size_t v = 0; v < NV; ++v) {
          GF_VSTORE(cu + (r0 + r) * t + c0 + v * W, U[r][v]);
          GF_VSTORE(cl + (r0 + r) * t + c0 + v * W, L[r][v]);
        }
    }
}

template <class T>
struct Kernels {
  void (*inplace)(std::size_t, T*, T*, const T*, const T*, const T*, const T*, const T*);
  void (*minplus)(std::size_t, T*, T*, const T*, const T*, const T*, const T*, const T*, T*);
  const char* isa;
};

// Kernel shapes per ISA (measured on Zen 4; any shape is correct): R rows × NV vectors.
template <class T>
void inplace_base(std::size_t t, T* cu, T* cl, const T* au, const T* al, const T* bu, const T* bl, const T* dl) {
  tile_inplace<T, 16>(t, cu, cl, au, al, bu, bl, dl);
}
template <class T>
void minplus_base(std::size_t t, T* cu, T* cl, const T* au, const T* al, const T* bu, const T* bl, const T* dl,
                  T* lik) {
  tile_minplus<T, 16, 2, 2>(t, cu, cl, au, al, bu, bl, dl, lik);
}
// gcc only: clang 14 knows neither the x86-64-v3/v4 names in __builtin_cpu_supports nor in target().
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
#define GF_HAVE_X86_CLONES 1
template <class T>
__attribute__((target("arch=x86-64-v3"))) void inplace_v3(std::size_t t, T* cu, T* cl, const T* au, const T* al,
                                                          const T* bu, const T* bl, const T* dl) {
  tile_inplace<T, 32>(t, cu, cl, au, al, bu, bl, dl);
}
template <class T>
__attribute__((target("arch=x86-64-v3"))) void minplus_v3(std::size_t t, T* cu, T* cl, const T* au, const T* al,
                                                          const T* bu, const T* bl, const T* dl, T* lik) {
  tile_minplus<T, 32, 2, 2>(t, cu, cl, au, al, bu, bl, dl, lik);
}
template <class T>
__attribute__((target("arch=x86-64-v4"))) void inplace_v4(std::size_t t, T* cu, T* cl, const T* au, const T* al,
                                                          const T* bu, const T* bl, const T* dl) {
  tile_inplace<T, 64>(t, cu, cl, au, al, bu, bl, dl);
}
template <class T>
__attribute__((target("arch=x86-64-v4"))) void minplus_v4(std::size_t t, T* cu, T* cl, const T* au, const T* al,
                                                          const T* bu, const T* bl, const T* dl, T* lik) {
  tile_minplus<T, 64, 4, 2>(t, cu, cl, au, al, bu, bl, dl, lik);
}
#endif

template <class T>
Kernels<T> pick_kernels() {
#ifdef GF_HAVE_X86_CLONES
  __builtin_cpu_init();
  if (__builtin_cpu_supports("x86-64-v4")) return {inplace_v4<T>, minplus_v4<T>, "x86-64-v4"};
  if (__builtin_cpu_supports("x86-64-v3")) return {inplace_v3<T>, minplus_v3<T>, "x86-64-v3"};
#endif
  return {inplace_base<T>, minplus_base<T>, "baseline"};
}

/// Zero-initialised, 64-byte aligned buffer.
template <class T>
class AlignedBuffer {
 public:
  explicit AlignedBuffer(std::size_t count)
      : p_(static_cast<T*>(::operator new (count * sizeof(T), std::align_val_t{64}))) {}
  ~AlignedBuffer() { ::operator delete (p_, std::align_val_t{64}); }
  AlignedBuffer(const AlignedBuffer&) = delete;
  AlignedBuffer& operator=(const AlignedBuffer&) = delete;
  T* get() const { return p_; }

 private:
  T* p_;
};

template <class T>
SmoothingReport blocked_impl(std::span<T> lower, std::span<T> upper, std::size_t n, const SmoothingOptions& opt) {
  detail::require_valid_bounds<T>(lower, upper, n, opt.tolerance);
  const std::size_t t = opt.tile ? opt.tile : kDefaultTile;
  if (t % kTileQuantum != 0 || t > kMaxTile)
    throw std::invalid_argument("smoothing: tile must be 0 (auto) or a multiple of 32 up to 1024, got " +
                                std::to_string(t));
  if (n == 0) return {};
  static const Kernels<T> kern = pick_kernels<T>();

  const std::size_t nb = (n + t - 1) / t;  // blocks per side
  const std::size_t tt = t * t;
  AlignedBuffer<T> ubuf(nb * nb * tt), lbuf(nb * nb * tt);
  T* const U = ubuf.get();
  T* const L = lbuf.get();
  auto tile_u = [&](std::size_t I, std::size_t J) { return U + (I * nb + J) * tt; };
  auto tile_l = [&](std::size_t I, std::size_t J) { return L + (I * nb + J) * tt; };

  constexpr T inf = std::numeric_limits<T>::infinity();
  // Row i of the padded matrix ↔ row i % t of tiles (i / t, J), J = 0..nb-1.
  auto copy_in = [&](std::span<const T> src, T* dst, bool is_upper) {
    for (std::size_t i = 0; i < nb * t; ++i)
      for (std::size_t J = 0; J < nb; ++J) {
        T* d = dst + ((i / t) * nb + J) * tt + (i % t) * t;
        const std::size_t real = i < n ? std::min(t, n - J * t) : 0;  // columns inside the matrix
        if (real > 0) std::copy_n(src.data() + i * n + J * t, real, d);
        std::fill(d + real, d + t, is_upper ? inf : T(0));
        if (i >= n && i / t == J) d[i % t] = T(0);  // padded atoms: zero diagonal
      }
  };
  copy_in(upper, U, true);
  copy_in(lower, L, false);
  auto gather_row = [&](const T* src, std::size_t i, T* row) {
    for (std::size_t J = 0; J < nb; ++J) {
      const T* s = src + ((i / t) * nb + J) * tt + (i % t) * t;
      std::copy_n(s, std::min(t, n - J * t), row + J * t);
    }
  };

  if (opt.progress && opt.progress(0.0)) {  // after the O(n²) checks and copy, before the O(n³) work
    SmoothingReport r;
    r.cancelled = true;
    return r;
  }
  unsigned threads = opt.threads ? opt.threads : std::max(1u, std::thread::hardware_concurrency());
  threads = static_cast<unsigned>(std::min<std::size_t>(threads, nb * nb));

  // The state stays symmetric (D(i, j') = D(j, i'): reverse a path and swap the copies), so
  // only tiles (I, J) with I ≤ J are computed; (J, I) is their transpose.
  const std::size_t m = nb - 1;                                  // blocks other than K
  const std::size_t n2 = m;                                      // phase-2 tiles per block: (K, J)
  const std::size_t n3 = m * (m + 1) / 2;                        // phase-3 tiles per block: (I, J), I ≤ J
  std::vector<std::pair<std::size_t, std::size_t>> upper_pairs;  // (p, q), p ≤ q < m
  upper_pairs.reserve(n3);
  for (std::size_t p = 0; p < m; ++p)
    for (std::size_t q = p; q < m; ++q) upper_pairs.emplace_back(p, q);
  auto mirror = [&](std::size_t I, std::size_t J) {  // tile (J, I) = tile (I, J)ᵀ
    const T *su = tile_u(I, J), *sl = tile_l(I, J);
    T *du = tile_u(J, I), *dl = tile_l(J, I);
    for (std::size_t r = 0; r < t; ++r)
      for (std::size_t c = 0; c < t; ++c) {
        du[c * t + r] = su[r * t + c];
        dl[c * t + r] = sl[r * t + c];
      }
  };
  std::atomic<std::size_t> next2{0}, next3{0};
  std::atomic<bool> stop{false};
  std::exception_ptr callback_error;
  std::barrier sync(static_cast<std::ptrdiff_t>(threads));
  const double per_step = 1.0 + static_cast<double>(n2 + n3);
  const double total = static_cast<double>(nb) * per_step;
  using clock = std::chrono::steady_clock;
  auto last_call = clock::now();

  // Progress / cancel: only worker 0 (the calling thread) calls the callback.
  auto poll = [&](std::size_t K, bool force) {
    if (!opt.progress || stop.load(std::memory_order_relaxed)) return;
    const auto now = clock::now();
    if (!force && now - last_call < std::chrono::milliseconds(20)) return;
    last_call = now;
    const double done = static_cast<double>(K) * per_step + 1.0 +
                        static_cast<double>(std::min(next2.load(), n2) + std::min(next3.load(), n3));
    try {
      if (opt.progress(std::min(1.0, done / total))) stop.store(true);
    } catch (...) {
      callback_error = std::current_exception();
      stop.store(true);
    }
  };

  std::vector<std::vector<T>> scratch(threads, std::vector<T>(tt));  // l_ik per worker (phase 3)
  auto worker = [&](unsigned id) {
    std::vector<T>& lik = scratch[id];
    for (std::size_t K = 0; K < nb; ++K) {
      if (stop.load()) break;  // read after a barrier: every worker sees the same value
      // Phase 1 (worker 0 alone; it also resets the phase counters).
      if (id == 0) {
        next2.store(0);
        next3.store(0);
        kern.inplace(t, tile_u(K, K), tile_l(K, K), tile_u(K, K), tile_l(K, K), tile_u(K, K), tile_l(K, K),
                     tile_l(K, K));
      }
      sync.arrive_and_wait();
      // Phase 2: block row K (tiles (K, J)); block column K is its transpose.
      for (std::size_t x; !stop.load(std::memory_order_relaxed) && (x = next2.fetch_add(1)) < n2;) {
        const std::size_t J = x < K ? x : x + 1;  // skip K
        kern.inplace(t, tile_u(K, J), tile_l(K, J), tile_u(K, K), tile_l(K, K), tile_u(K, J), tile_l(K, J),
                     tile_l(K, K));
        mirror(K, J);
        if (id == 0) poll(K, false);
      }
      sync.arrive_and_wait();
      // Phase 3: tiles (I, J), I ≤ J, off block row and column K; (J, I) mirrored.
      for (std::size_t x; !stop.load(std::memory_order_relaxed) && (x = next3.fetch_add(1)) < n3;) {
        const std::size_t I = upper_pairs[x].first + (upper_pairs[x].first >= K);
        const std::size_t J = upper_pairs[x].second + (upper_pairs[x].second >= K);
        kern.minplus(t, tile_u(I, J), tile_l(I, J), tile_u(I, K), tile_l(I, K), tile_u(K, J), tile_l(K, J),
                     tile_l(K, K), lik.data());
        if (I != J) mirror(I, J);
        if (id == 0) poll(K, false);
      }
      if (id == 0) poll(K, true);  // once per block step, before the others may read `stop`
      sync.arrive_and_wait();
    }
  };

  std::vector<std::jthread> pool;
  pool.reserve(threads - 1);
  for (unsigned id = 1; id < threads; ++id) {
    try {
      pool.emplace_back(worker, id);
    } catch (const std::system_error&) {
      // Fewer threads than asked: drop the missing participants; tiles are taken dynamically.
      for (unsigned missing = id; missing < threads; ++missing) sync.arrive_and_drop();
      break;
    }
  }
  worker(0);
  pool.clear();  // joins
  if (callback_error) std::rethrow_exception(callback_error);

  SmoothingReport report;
  if (stop.load()) {
    report.cancelled = true;
    return report;
  }
  if (opt.progress) opt.progress(1.0);
  std::vector<T> lrow(n), urow(n);
  report = detail::finish_report<T>(lower, upper, n, opt.tolerance, [&](std::size_t i) {
    gather_row(L, i, lrow.data());
    gather_row(U, i, urow.data());
    return std::pair<const T*, const T*>(lrow.data(), urow.data());
  });
  for (std::size_t i = 0; i < n; ++i) {
    gather_row(L, i, lower.data() + i * n);
    gather_row(U, i, upper.data() + i * n);
  }
  return report;
}

}  // namespace

const char* smoothing_simd_target() { return pick_kernels<double>().isa; }

SmoothingReport smooth_bounds(std::span<double> lower, std::span<double> upper, std::size_t n,
                              const SmoothingOptions& options) {
  return blocked_impl(lower, upper, n, options);
}
SmoothingReport smooth_bounds(std::span<float> lower, std::span<float> upper, std::size_t n,
                              const SmoothingOptions& options) {
  return blocked_impl(lower, upper, n, options);
}

}  // namespace gemflow::distgeom
