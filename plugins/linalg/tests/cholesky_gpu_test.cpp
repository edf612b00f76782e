// GPU Cholesky (gemflow/linalg/cholesky_cuda.hpp) against LAPACK (LAPACKE) on fresh random
// matrices. Skips without a CUDA device.
//
// Backward error β = ‖A − L Lᵀ‖_F / ‖A‖_F (LLᵀ formed in fp64 on the GPU). Bounds:
//   fp64, fp32 exact, fp32 3×TF32:  β ≤ n·ε  and  β ≤ 10·max(β_LAPACK, ε)   (ε of the precision,
//                                   β_LAPACK of dpotrf / spotrf on the same matrix)
//   fp32 1×TF32 (refinement only):  β ≤ 4·2⁻¹¹ (TF32's unit roundoff is 2⁻¹¹)
// Not-SPD matrices give LAPACK's INFO; NaN in the lower triangle at (i, j), i > j, gives
// INFO = i + 1 (reference LAPACK's DISNAN check on the pivot) and non_finite.
// The strict upper triangle and the padding rows (lda > n) are poisoned and must come back
// bit-identical.
// Each test reseeds its matrices in SetUp and prints "GEMFLOW_TEST_SEED=<seed>"; set that variable
// to reproduce a run. GEMFLOW_TEST_VERBOSE=1 prints β/(n·ε) for every algorithm and n.
#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <optional>
#include <random>
#include <sstream>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#if GEMFLOW_LINALG_HAVE_CUDA
#include <cublas_v2.h>
#include <cuda_runtime.h>
#include <lapacke.h>

#include <gemflow/cuda/cublas.hpp>
#include <gemflow/linalg/cholesky.hpp>
#include <gemflow/linalg/cholesky_cuda.hpp>

#include "../algo/cuda/tiled_order.hpp"
#include "gpu_test_support.hpp"

namespace {
namespace gc = gemflow::linalg::cuda;
using gc::CholeskyAlgo;
using gc::CholeskyOptions;
using gc::Fp32Mode;

using gemflow::linalg::testing::Dev;
using gemflow::linalg::testing::test_seed;

struct Cublas {
  cublasHandle_t h{};
  Cublas() { GF_CUBLAS_TRY(cublasCreate(&h)); }
  ~Cublas() { GF_CUDA_TRY_NO_THROW(cublasDestroy(h)); }
};

constexpr double kPoison = -7.77e77;
constexpr float kPoisonF = -7.77e37f;
template <class T>
T poison() {
  return sizeof(T) == 8 ? T(kPoison) : T(kPoisonF);
}

std::mt19937_64& rng() {
  static std::mt19937_64 g;
  return g;
}

bool verbose() {
  const char* e = std::getenv("GEMFLOW_TEST_VERBOSE");
  return e && *e && *e != '0';
}

/// Column-major n×n SPD A = G Gᵀ / n + shift·I (G n×n, N(0,1)) formed on the GPU, full storage.
std::vector<double> random_spd(std::int64_t n, double shift, std::int64_t rank = -1) {
  const std::int64_t r = rank < 0 ? n : rank;
  std::normal_distribution<double> g;
  std::vector<double> gh(static_cast<std::size_t>(n * std::max<std::int64_t>(r, 1)));
  for (auto& x : gh) x = g(rng());
  Dev<double> gd(gh.size()), ad(static_cast<std::size_t>(n * n));
  gd.put(gh);
  Cublas cb;
  const double alpha = 1.0 / double(n), beta = 0.0;
  if (r > 0)
    GF_CUBLAS_TRY(cublasDgemm(cb.h, CUBLAS_OP_N, CUBLAS_OP_T, int(n), int(n), int(r), &alpha, gd.p, int(n), gd.p,
                              int(n), &beta, ad.p, int(n)));
  else GF_CUDA_TRY(cudaMemset(ad.p, 0, sizeof(double) * n * n));
  auto a = ad.get();
  for (std::int64_t i = 0; i < n; ++i) a[i + i * n] += shift;
  // exact symmetry
  for (std::int64_t j = 0; j < n; ++j)
    for (std::int64_t i = j + 1; i < n; ++i) a[j + i * n] = a[i + j * n];
  return a;
}

/// count standard normal values from the test generator.
std::vector<double> random_normal(std::size_t count) {
  std::normal_distribution<double> g;
  std::vector<double> v(count);
  for (auto& x : v) x = g(rng());
  return v;
}

/// A = M D Mᵀ, M unit lower (small random below the diagonal), D = 1 except D[k−1] = −1:
/// leading minors 1..k−1 positive, minor k negative. Columns 0 … k−2 of A's Cholesky factor are
/// those of M (D = 1 there); M is returned in *m_out when given.
std::vector<double> not_spd(std::int64_t n, std::int64_t k, std::vector<double>* m_out = nullptr) {
  std::uniform_real_distribution<double> u(-1, 1);
  std::vector<double> m(static_cast<std::size_t>(n * n), 0.0), a(static_cast<std::size_t>(n * n), 0.0);
  const double s = 0.5 / std::sqrt(double(n));
  for (std::int64_t j = 0; j < n; ++j) {
    m[j + j * n] = 1.0;
    for (std::int64_t i = j + 1; i < n; ++i) m[i + j * n] = s * u(rng());
  }
  std::vector<double> d(static_cast<std::size_t>(n), 1.0);
  d[static_cast<std::size_t>(k - 1)] = -1.0;
  for (std::int64_t j = 0; j < n; ++j)
    for (std::int64_t i = j; i < n; ++i) {
      double acc = 0;
      for (std::int64_t c = 0; c <= j; ++c) acc += m[i + c * n] * d[static_cast<std::size_t>(c)] * m[j + c * n];
      a[i + j * n] = a[j + i * n] = acc;
    }
  if (m_out) *m_out = std::move(m);
  return a;
}

/// β = ‖A − L Lᵀ‖_F / ‖A‖_F for L = lower triangle of l (ld ldl), in fp64 on the GPU; A is the
/// matrix the factorisation saw, i.e. a rounded to T.
template <class T>
double backward_error(const std::vector<double>& a64, const std::vector<T>& l, std::int64_t n, std::int64_t ldl) {
  std::vector<double> a(a64.size());
  for (std::size_t i = 0; i < a.size(); ++i) a[i] = double(T(a64[i]));
  std::vector<double> lh(static_cast<std::size_t>(n * n), 0.0);
  for (std::int64_t j = 0; j < n; ++j)
    for (std::int64_t i = j; i < n; ++i) lh[i + j * n] = double(l[i + j * ldl]);
  Dev<double> ld(lh.size()), cd(lh.size());
  ld.put(lh);
  Cublas cb;
  const double one = 1.0, zero = 0.0;
  GF_CUBLAS_TRY(cublasDgemm(cb.h, CUBLAS_OP_N, CUBLAS_OP_T, int(n), int(n), int(n), &one, ld.p, int(n), ld.p, int(n),
                            &zero, cd.p, int(n)));
  const auto c = cd.get();
  double num = 0, den = 0;
  for (std::int64_t j = 0; j < n; ++j)
    for (std::int64_t i = 0; i < n; ++i) {
      const double e = a[i + j * n] - c[i + j * n];
      num += e * e;
      den += a[i + j * n] * a[i + j * n];
    }
  return std::sqrt(num / den);
}

template <class T>
double eps() {
  return std::numeric_limits<T>::epsilon();
}

struct Case {
  const char* name;
  CholeskyOptions opt;
};

std::vector<Case> cases() {
  std::vector<Case> v;
  CholeskyOptions o;
  o.algo = CholeskyAlgo::cusolver;
  v.push_back({"cusolver", o});
  o = {};
  o.algo = CholeskyAlgo::blocked;
  v.push_back({"blocked", o});
  o.block = 48;  // own leaf kernel, many panels
  v.push_back({"blocked_nb48", o});
  o = {};
  v.push_back({"recursive", o});
  o.base = 256;  // cuSOLVER leaves, deep TRSM/SYRK recursion
  o.trsm_base = 96;
  o.syrk_base = 96;
  v.push_back({"recursive_deep", o});
  o = {};
  o.base = 40;
  v.push_back({"recursive_base40", o});
  o = {};
  o.algo = CholeskyAlgo::lookahead;
  v.push_back({"lookahead", o});   // PanelAlgo::automatic
  o.panel = gc::PanelAlgo::tiles;  // tensor-core panels, also for fp32
  o.block = 96;                    // many panels: every stream hand-over and the 2-stream split of the update
  v.push_back({"lookahead_tiles_nb96", o});
  o.block = 300;  // sub-panels of 128, 128 and 44 columns (a partial 8×8 tile); fp64: two column groups
  v.push_back({"lookahead_tiles_nb300", o});
  o.block = 96;  // the last trailing matrix of order ≤ 200 by the tiled kernel (its info offset too)
  o.tiled_tail = 200;
  v.push_back({"lookahead_tiled_tail", o});
  o.tiled_tail = -1;  // panels to the end (1×FP16 would hand a matrix of order ≤ 8192 to the tiled kernel)
  v.push_back({"lookahead_no_tail", o});
  o.panel_ctas = 2;   // panel kernels on two CTAs after the first, each solving many strips in turn,
  o.syrk_base = 128;  // and SYRK leaves of 128: fp64 splits each bulk update over two streams
  v.push_back({"lookahead_capped_split", o});
  o.panel_ctas = 0;
  o.syrk_base = 0;
  o = {};
  o.algo = CholeskyAlgo::lookahead;
  o.panel = gc::PanelAlgo::library;  // cuSOLVER potrf + recursive TRSM panels
  v.push_back({"lookahead_library", o});
  o.block = 96;
  o.base = 40;
  v.push_back({"lookahead_library_nb96", o});
  o = {};
  o.algo = CholeskyAlgo::tiled;
  v.push_back({"tiled", o});
  return v;
}

template <class T>
std::vector<T> to_padded(const std::vector<double>& a, std::int64_t n, std::int64_t lda) {
  std::vector<T> h(static_cast<std::size_t>(lda * std::max<std::int64_t>(n, 1)), poison<T>());
  for (std::int64_t j = 0; j < n; ++j)
    for (std::int64_t i = j; i < n; ++i) h[i + j * lda] = T(a[i + j * n]);
  return h;
}

template <class T>
void expect_poison_kept(const std::vector<T>& h, std::int64_t n, std::int64_t lda, const std::string& ctx) {
  std::int64_t bad = 0;
  for (std::int64_t j = 0; j < n; ++j)
    for (std::int64_t i = 0; i < lda; ++i)
      if ((i < j || i >= n) && std::memcmp(&h[i + j * lda], &(const T&)poison<T>(), sizeof(T)) != 0) ++bad;
  EXPECT_EQ(bad, 0) << ctx << ": entries outside the lower triangle were written";
}

class GpuCholeskyTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (gc::device_count() == 0) GTEST_SKIP() << "no CUDA device: GPU Cholesky tests skipped";
    const std::uint64_t seed = test_seed();
    rng().seed(seed);
    std::printf("[   SEED   ] GEMFLOW_TEST_SEED=%llu\n", static_cast<unsigned long long>(seed));
    RecordProperty("seed", std::to_string(seed));
  }
};

template <class T>
int lapack_potrf(std::vector<T>& a, std::int64_t n) {
  if constexpr (sizeof(T) == 8) return LAPACKE_dpotrf(LAPACK_COL_MAJOR, 'L', int(n), a.data(), int(n));
  else return LAPACKE_spotrf(LAPACK_COL_MAJOR, 'L', int(n), a.data(), int(n));
}

/// The FP16 modes run on lookahead with tensor-core panels only.
bool mode_supports(Fp32Mode mode, const CholeskyOptions& o) {
  if (!gc::algo_runs_mode(o.algo, mode)) return false;
  return !gc::is_fp16_mode(mode) || o.algo != CholeskyAlgo::lookahead || o.panel != gc::PanelAlgo::library;
}

/// Factors a (n×n, its values as T) with c's options in `mode`: the status and the result;
/// std::nullopt when c's algorithm does not run `mode`.
template <class T>
std::optional<std::pair<gc::CholeskyStatus, std::vector<T>>> factor_case(gc::GpuCholesky& chol,
                                                                         const std::vector<double>& a, std::int64_t n,
                                                                         const Case& c, Fp32Mode mode) {
  CholeskyOptions opt = c.opt;
  opt.fp32_mode = mode;
  if (!mode_supports(mode, opt)) return std::nullopt;
  auto h = to_padded<T>(a, n, n);
  Dev<T> d(h.size());
  d.put(h);
  const auto st = chol.factor(d.p, n, n, opt);
  return std::pair{st, d.get()};
}

template <class T>
void check_spd_all(Fp32Mode mode, double bound_abs_factor) {
  const bool one_product = mode == Fp32Mode::tf32 || mode == Fp32Mode::fp16;
  gc::GpuCholesky chol(nullptr);
  for (std::int64_t n : {1, 2, 17, 64, 65, 1000, 2049}) {
    const auto a = random_spd(n, 0.5);
    // LAPACK reference
    std::vector<T> ref(a.size());
    for (std::size_t i = 0; i < a.size(); ++i) ref[i] = T(a[i]);
    ASSERT_EQ(lapack_potrf(ref, n), 0);
    const double beta_lapack = backward_error<T>(a, ref, n, n);
    for (const auto& c : cases()) {
      CholeskyOptions opt = c.opt;
      opt.fp32_mode = mode;
      if (!mode_supports(mode, opt)) continue;
      const std::int64_t lda = n + 3;
      auto h = to_padded<T>(a, n, lda);
      Dev<T> d(h.size());
      d.put(h);
      const auto st = chol.factor(d.p, n, lda, opt);
      const std::string ctx = std::string(c.name) + " n=" + std::to_string(n);
      ASSERT_EQ(st.info, 0) << ctx << ": " << st.message();
      EXPECT_FALSE(st.non_finite) << ctx;
      const auto out = d.get();
      expect_poison_kept(out, n, lda, ctx);
      const double beta = backward_error<T>(a, out, n, lda);
      if (verbose())
        std::printf("  %-17s n=%-5lld beta=%.3e  beta/(n eps)=%.3f  beta/(sqrt(n) eps)=%.3f  lapack/(n eps)=%.3f\n",
                    c.name, static_cast<long long>(n), beta, beta / (double(n) * eps<T>()),
                    beta / (std::sqrt(double(n)) * eps<T>()), beta_lapack / (double(n) * eps<T>()));
      if (verbose() && n == 1) {
        const T a11 = T(a[0]);
        const T exact = T(std::sqrt(double(a11)));  // correctly rounded: sqrt of a T is never a tie in T
        std::printf("  %-17s n=1 a=%.9e l=%.9e correctly_rounded=%.9e ulps_off=%lld\n", c.name, double(a11),
                    double(out[0]), double(exact),
                    static_cast<long long>(std::nextafter(exact, T(0)) == out[0]      ? -1
                                           : std::nextafter(exact, T(1e30)) == out[0] ? 1
                                           : out[0] == exact                          ? 0
                                                                                      : 99));
      }
      EXPECT_LE(beta, bound_abs_factor * double(n) * eps<T>()) << ctx << " (LAPACK: " << beta_lapack << ")";
      if (!one_product) {
        EXPECT_LE(beta, 10.0 * std::max(beta_lapack, eps<T>())) << ctx << " (LAPACK: " << beta_lapack << ")";
      }
      // the factor itself is close to LAPACK's (A is well conditioned: κ ≤ 9)
      double num = 0, den = 0;
      for (std::int64_t j = 0; j < n; ++j)
        for (std::int64_t i = j; i < n; ++i) {
          const double e = double(out[i + j * lda]) - double(ref[i + j * n]);
          num += e * e;
          den += double(ref[i + j * n]) * double(ref[i + j * n]);
        }
      if (!one_product) {
        EXPECT_LE(std::sqrt(num / den), 100.0 * double(n) * eps<T>()) << ctx;
      }
    }
  }
}

TEST_F(GpuCholeskyTest, Fp64AllAlgorithmsMatchLapack) { check_spd_all<double>(Fp32Mode::exact, 1.0); }
TEST_F(GpuCholeskyTest, Fp32ExactAllAlgorithmsMatchLapack) { check_spd_all<float>(Fp32Mode::exact, 1.0); }
TEST_F(GpuCholeskyTest, Fp32Tf32x3RestoresSpotrfAccuracy) { check_spd_all<float>(Fp32Mode::tf32x3, 1.0); }
TEST_F(GpuCholeskyTest, Fp32Fp16x3RestoresSpotrfAccuracy) { check_spd_all<float>(Fp32Mode::fp16x3, 1.0); }

// 1×FP16 has TF32's 11-bit significand: the same bound as 1×TF32, over several panels (nb 128)
// with no tiled tail, panels of three sub-panels (nb 384: the sub-panels' update GEMMs from the
// panel's fp16 copy, and a last panel and sub-panel narrower than 128; nb 381: an odd sub-panel
// width inside a panel, so an odd-width update GEMM and fp16 copy), panels then the FP16
// tiled tail (tail 512), the default (the lookahead hands a matrix of order ≤ 8192 to the tiled
// kernel) and the tiled kernel itself. A sub-panel update left out gives β of order 1.
TEST_F(GpuCholeskyTest, Fp32Fp16WithinTf32Bound) {
  gc::GpuCholesky chol(nullptr);
  struct Run {
    const char* name;
    CholeskyAlgo algo;
    std::int64_t block, tail;
  };
  for (std::int64_t n : {1, 65, 1000, 2049}) {
    const auto a = random_spd(n, 0.5);
    for (const Run& r :
         {Run{"panels nb 128", CholeskyAlgo::lookahead, 128, -1},
          Run{"panels nb 384", CholeskyAlgo::lookahead, 384, -1},
          Run{"panels nb 381", CholeskyAlgo::lookahead, 381, -1},
          Run{"panels nb 128, tail 512", CholeskyAlgo::lookahead, 128, 512},
          Run{"lookahead default", CholeskyAlgo::lookahead, 0, 0}, Run{"tiled", CholeskyAlgo::tiled, 0, 0}}) {
      auto h = to_padded<float>(a, n, n);
      Dev<float> d(h.size());
      d.put(h);
      CholeskyOptions o;
      o.algo = r.algo;
      o.fp32_mode = Fp32Mode::fp16;
      o.block = r.block;
      o.tiled_tail = r.tail;
      const auto st = chol.factor(d.p, n, n, o);
      ASSERT_EQ(st.info, 0) << "n=" << n << ' ' << r.name << ": " << st.message();
      EXPECT_LE(backward_error<float>(a, d.get(), n, n), 4.0 * std::ldexp(1.0, -11)) << "n=" << n << ' ' << r.name;
    }
  }
}

// The FP16 modes equilibrate A by powers of two (S·A·S, s_i²·a_ii ∈ [0.5, 2)) before rounding
// panels to fp16 (range ±65504, normal from 6e-5) and take S⁻¹ back out of L, exactly. So the
// factor of D·A·D, D = diag(2^k_i) with k_i up to ±40 (entries from 1e-24 to 1e24, far outside
// fp16), is D·L bit for bit, L the factor of A. Without the equilibration the panels overflow.
TEST_F(GpuCholeskyTest, Fp16ModesAreExactlyScaleInvariant) {
  gc::GpuCholesky chol(nullptr);
  const std::int64_t n = 700;
  const auto a = random_spd(n, 0.5);
  std::vector<int> k(static_cast<std::size_t>(n));
  std::mt19937 gen(5);
  for (auto& v : k) v = int(gen() % 81) - 40;
  std::vector<double> scaled(a.size());
  for (std::int64_t j = 0; j < n; ++j)
    for (std::int64_t i = 0; i < n; ++i) scaled[i + j * n] = std::ldexp(a[i + j * n], k[i] + k[j]);
  std::vector<float> ref(a.size());
  for (std::size_t i = 0; i < a.size(); ++i) ref[i] = float(a[i]);
  ASSERT_EQ(lapack_potrf(ref, n), 0);
  const double beta_lapack = backward_error<float>(a, ref, n, n);
  // 1×FP16 twice: panels to the end, and the default, which hands this matrix to the tiled kernel
  for (auto [mode, tail] : {std::pair{Fp32Mode::fp16, std::int64_t{-1}}, std::pair{Fp32Mode::fp16, std::int64_t{0}},
                            std::pair{Fp32Mode::fp16x3, std::int64_t{0}}}) {
    CholeskyOptions o;
    o.algo = CholeskyAlgo::lookahead;
    o.fp32_mode = mode;
    o.block = 256;  // three panels: the bulk update and the next-column update run too
    o.tiled_tail = tail;
    const std::string ctx = std::string(gc::fp32_mode_name(mode)) + (tail < 0 ? " panels only" : "");
    Dev<float> d(a.size()), ds(a.size());
    d.put(to_padded<float>(a, n, n));
    ds.put(to_padded<float>(scaled, n, n));
    ASSERT_EQ(chol.factor(d.p, n, n, o).info, 0) << ctx;
    ASSERT_EQ(chol.factor(ds.p, n, n, o).info, 0) << ctx;
    const auto l = d.get(), ls = ds.get();
    std::int64_t differ = 0;
    for (std::int64_t j = 0; j < n; ++j)
      for (std::int64_t i = j; i < n; ++i) differ += ls[i + j * n] != std::ldexp(l[i + j * n], k[i]);
    EXPECT_EQ(differ, 0) << ctx << ": entries of the factor of D·A·D that are not D·L";
    const double beta = backward_error<float>(a, l, n, n);
    if (mode == Fp32Mode::fp16x3) EXPECT_LE(beta, 10.0 * beta_lapack) << ctx;
    else EXPECT_LE(beta, 4.0 * std::ldexp(1.0, -11)) << ctx;
  }
}

TEST_F(GpuCholeskyTest, Fp32Tf32WithinTf32Bound) {
  gc::GpuCholesky chol(nullptr);
  for (std::int64_t n : {65, 1000, 2049}) {
    const auto a = random_spd(n, 0.5);
    auto h = to_padded<float>(a, n, n);
    Dev<float> d(h.size());
    d.put(h);
    CholeskyOptions o;
    o.fp32_mode = Fp32Mode::tf32;
    o.base = 64;
    ASSERT_EQ(chol.factor(d.p, n, n, o).info, 0);
    EXPECT_LE(backward_error<float>(a, d.get(), n, n), 4.0 * std::ldexp(1.0, -11)) << "n=" << n;
  }
}

/// A random symmetric matrix of order n on the device (diagonal shifted by 1.3·√n, κ ≈ 17) and
/// the probe backward error (gc::probe_backward_error) of factoring a fresh copy: large-n tests
/// without a host reference.
template <class T>
struct DeviceProbe {
  std::int64_t n;
  gc::GpuCholesky chol{nullptr};
  Dev<T> pristine, a;
  DeviceProbe(std::int64_t order, std::uint64_t seed)
      : n(order), pristine(std::size_t(order * order)), a(std::size_t(order * order)) {
    gc::fill_random_symmetric(pristine.p, n, n, 1.3 * std::sqrt(double(n)), seed, nullptr);
  }
  double beta(const CholeskyOptions& o) {
    GF_CUDA_TRY(cudaMemcpy(a.p, pristine.p, sizeof(T) * n * n, cudaMemcpyDeviceToDevice));
    EXPECT_EQ(chol.factor(a.p, n, n, o).info, 0);
    return gc::probe_backward_error(pristine.p, n, a.p, n, n, 2, nullptr);
  }
  /// β of cuSOLVER potrf on the same matrix: the reference of the large-n tests.
  double beta_cusolver() {
    CholeskyOptions ref;
    ref.algo = CholeskyAlgo::cusolver;
    return beta(ref);
  }
};

// Regression: one TF32 GEMM over K = n/2 lost the hi·lo corrections in the truncating
// tensor-core accumulation (β 13× spotrf's at n = 8192 on the H200). With K chunked, β stays
// within 10× of cuSOLVER spotrf's on the same matrix.
TEST_F(GpuCholeskyTest, Tf32x3WithinTenfoldOfSpotrfAtLargeN) {
  DeviceProbe<float> probe(8192, 77);
  const double b0 = probe.beta_cusolver();
  for (auto algo : {CholeskyAlgo::recursive, CholeskyAlgo::lookahead}) {
    CholeskyOptions o;
    o.algo = algo;
    o.fp32_mode = Fp32Mode::tf32x3;
    const double b = probe.beta(o);
    EXPECT_LE(b, 10.0 * b0) << (algo == CholeskyAlgo::recursive ? "recursive" : "lookahead") << " 3xTF32: beta " << b
                            << ", spotrf " << b0;
  }
}

// Regression: the first tensor-core panels ran their sub-panel updates as 3×TF32 GEMMs even for
// n ≤ nb, whose operand buffer is sized only for n > nb: on a fresh object the GEMMs read and
// wrote past the workspace (illegal address on the H200). The same class: library panels whose
// recursion base exceeds nb (GEMMs from n > nb on, buffer sized only for n > base).
TEST_F(GpuCholeskyTest, Tf32x3LookaheadNarrowerThanOnePanel) {
  for (std::int64_t n : {129, 300, 1000}) {
    const auto a = random_spd(n, 0.5);
    std::vector<float> ref(a.size());
    for (std::size_t i = 0; i < a.size(); ++i) ref[i] = float(a[i]);
    ASSERT_EQ(lapack_potrf(ref, n), 0);
    const double beta_lapack = backward_error<float>(a, ref, n, n);
    const auto h = to_padded<float>(a, n, n);
    CholeskyOptions tiles;
    tiles.algo = CholeskyAlgo::lookahead;  // default nb (> n)
    tiles.panel = gc::PanelAlgo::tiles;
    tiles.fp32_mode = Fp32Mode::tf32x3;
    CholeskyOptions library = tiles;  // panels of 128 factored by a recursion with base 1024 > nb
    library.panel = gc::PanelAlgo::library;
    library.block = 128;
    library.base = 1024;
    for (const auto& [name, o] : {std::pair{"tiles", tiles}, std::pair{"library base > nb", library}}) {
      gc::GpuCholesky chol(nullptr);  // fresh: no workspace left over from larger calls
      Dev<float> d(h.size());
      d.put(h);
      const auto st = chol.factor(d.p, n, n, o);
      ASSERT_EQ(st.info, 0) << name << " n=" << n << ": " << st.message();
      const double beta = backward_error<float>(a, d.get(), n, n);
      EXPECT_LE(beta, 10.0 * std::max(beta_lapack, double(eps<float>()))) << name << " n=" << n;
    }
  }
}

// Panels taller than 128 rows × the SM count: solve CTAs take several strips each, the grid is
// capped at one CTA per SM (n = 17500: 136 strips below the first block on a 132-SM H200).
TEST_F(GpuCholeskyTest, TilesPanelsWithMoreStripsThanSms) {
  DeviceProbe<double> probe(17500, 91);
  const double b0 = probe.beta_cusolver();
  CholeskyOptions o;
  o.algo = CholeskyAlgo::lookahead;
  o.panel = gc::PanelAlgo::tiles;
  const double b = probe.beta(o);
  EXPECT_LE(b, 10.0 * b0) << "tiles: beta " << b << ", cuSOLVER " << b0;
}

// 1×TF32 switches the cuBLAS handles of the context and the lookahead's streams to TF32 for the
// call and must switch every one back: an exact fp32 factorisation on the same object afterwards
// (library panels: cuBLAS TRSM, SYRK and GEMMs on all those handles) keeps spotrf's accuracy.
// The guard once held three handles and was given four (undefined behaviour).
TEST_F(GpuCholeskyTest, Tf32MathModeEndsWithTheCall) {
  gc::GpuCholesky chol(nullptr);
  const std::int64_t n = 1000;
  const auto a = random_spd(n, 0.5);
  std::vector<float> ref(a.size());
  for (std::size_t i = 0; i < a.size(); ++i) ref[i] = float(a[i]);
  ASSERT_EQ(lapack_potrf(ref, n), 0);
  const double beta_lapack = backward_error<float>(a, ref, n, n);
  for (auto panel : {gc::PanelAlgo::tiles, gc::PanelAlgo::library}) {
    Dev<float> d(a.size());
    d.put(to_padded<float>(a, n, n));
    CholeskyOptions o;
    o.algo = CholeskyAlgo::lookahead;
    o.panel = panel;
    o.block = 128;
    o.fp32_mode = Fp32Mode::tf32;
    ASSERT_EQ(chol.factor(d.p, n, n, o).info, 0);
    const double beta_tf32 = backward_error<float>(a, d.get(), n, n);
    d.put(to_padded<float>(a, n, n));
    o.fp32_mode = Fp32Mode::exact;
    o.panel = gc::PanelAlgo::library;
    ASSERT_EQ(chol.factor(d.p, n, n, o).info, 0);
    const double beta = backward_error<float>(a, d.get(), n, n);
    EXPECT_LE(beta, 10.0 * beta_lapack) << "exact fp32 after 1xTF32 (" << int(panel) << "): beta " << beta
                                        << ", spotrf " << beta_lapack << ", the 1xTF32 factor " << beta_tf32;
  }
}

// CholeskyOptions::panel_ctas only moves strips between CTAs (each factors the diagonal block
// itself): any cap gives the same factor bit for bit, here with two column groups per panel
// (nb 300) and no tiled tail, in fp64 and exact fp32.
template <class T>
void check_panel_ctas_bitwise() {
  gc::GpuCholesky chol(nullptr);
  const std::int64_t n = 2049;
  const auto a = random_spd(n, 0.5);
  const auto factor = [&](std::int64_t ctas) {
    Dev<T> d(a.size());
    d.put(to_padded<T>(a, n, n));
    CholeskyOptions o;
    o.algo = CholeskyAlgo::lookahead;
    o.panel = gc::PanelAlgo::tiles;
    o.block = 300;
    o.tiled_tail = -1;
    o.panel_ctas = ctas;
    EXPECT_EQ(chol.factor(d.p, n, n, o).info, 0) << "panel_ctas " << ctas;
    return d.get();
  };
  const auto ref = factor(-1);
  for (std::int64_t ctas : {1, 3, 0}) {
    const auto l = factor(ctas);
    std::int64_t differ = 0;
    for (std::size_t i = 0; i < l.size(); ++i) differ += std::memcmp(&l[i], &ref[i], sizeof(T)) != 0;
    EXPECT_EQ(differ, 0) << "panel_ctas " << ctas << ": entries that differ from one CTA per strip";
  }
}
TEST_F(GpuCholeskyTest, PanelCtasGiveTheSameFactorFp64) { check_panel_ctas_bitwise<double>(); }
TEST_F(GpuCholeskyTest, PanelCtasGiveTheSameFactorFp32) { check_panel_ctas_bitwise<float>(); }

// The FP16 modes' panel kernel writes the fp16 copy of every strip it solves, so a CTA with several
// strips writes several (n = 17500 on a 132-SM H200). A strip left out of the copy leaves
// garbage in the later updates: β of order 1. Measured β / spotrf's: 3×FP16 4–5, 1×FP16 180–200.
TEST_F(GpuCholeskyTest, Fp16PanelsWithMoreStripsThanSms) {
  DeviceProbe<float> probe(17500, 94);
  const double b0 = probe.beta_cusolver();
  for (auto [mode, bound] : {std::pair{Fp32Mode::fp16x3, 10.0}, std::pair{Fp32Mode::fp16, 1000.0}}) {
    CholeskyOptions o;
    o.algo = CholeskyAlgo::lookahead;
    o.fp32_mode = mode;
    const double b = probe.beta(o);
    EXPECT_LE(b, bound * b0) << gc::fp32_mode_name(mode) << ": beta " << b << ", spotrf " << b0;
  }
}

// The tiled kernel with FP16 tile updates (1×FP16): every solved tile's fp16 copy is an operand of
// later updates, on many more tasks than CTAs, with a partial last tile (its padded rows must be
// zero in the copies) and on one CTA (the copies' cp.async pipeline waits for two K tiles ahead).
// A tile missing from the copies gives β of order 1; 1×FP16's β is 100–200× spotrf's.
TEST_F(GpuCholeskyTest, TiledFp16UpdatesMatchTheirBound) {
  DeviceProbe<float> probe(17500, 95);
  const double b0 = probe.beta_cusolver();
  CholeskyOptions o;
  o.algo = CholeskyAlgo::tiled;
  o.fp32_mode = Fp32Mode::fp16;
  const double b = probe.beta(o);
  EXPECT_LE(b, 1000.0 * b0) << "tiled 1xFP16: beta " << b << ", spotrf " << b0;
  gc::GpuCholesky chol(nullptr);
  const std::int64_t n = 1000;
  const auto a = random_spd(n, 0.5);
  for (std::int64_t ctas : {1, 3}) {
    const std::int64_t lda = n + 1;  // odd: fp32 columns not 16-byte aligned (the copies are packed)
    auto h = to_padded<float>(a, n, lda);
    Dev<float> d(h.size());
    d.put(h);
    o.tiled_ctas = ctas;
    const auto st = chol.factor(d.p, n, lda, o);
    ASSERT_EQ(st.info, 0) << ctas << " CTAs: " << st.message();
    const auto out = d.get();
    expect_poison_kept(out, n, lda, std::to_string(ctas) + " CTAs");
    EXPECT_LE(backward_error<float>(a, out, n, lda), 4.0 * std::ldexp(1.0, -11)) << ctas << " CTAs";
  }
}

// The persistent tiled kernel far beyond one wave of tasks: n = 17500 is 274 tile rows (37675
// tasks for at most two CTAs per SM) with a partial last tile of 28 rows.
TEST_F(GpuCholeskyTest, TiledWithManyMoreTasksThanCtas) {
  DeviceProbe<double> probe(17500, 92);
  const double b0 = probe.beta_cusolver();
  CholeskyOptions o;
  o.algo = CholeskyAlgo::tiled;
  const double b = probe.beta(o);
  EXPECT_LE(b, 10.0 * b0) << "tiled: beta " << b << ", cuSOLVER " << b0;
}

// Regression (review): the task order must be topological, so the persistent tiled kernel
// completes on any number of CTAs. A sub-diagonal task once came before the diagonal task whose
// output it waits for: one CTA deadlocked (here: a ctest timeout). Both update pipelines (lda
// even: cp.async; odd: register-staged), a partial last tile, and a failure (info 517) on one CTA.
TEST_F(GpuCholeskyTest, TiledCompletesOnOneCta) {
  gc::GpuCholesky chol(nullptr);
  const std::int64_t n = 1000;  // 16 tile rows, 136 tasks
  const auto a = random_spd(n, 0.5);
  std::vector<double> ref = a;
  ASSERT_EQ(lapack_potrf(ref, n), 0);
  const double beta_lapack = backward_error<double>(a, ref, n, n);
  // factors m (n×n, lower) with lda on `ctas` CTAs: the status and the factor
  const auto factor_on = [&](const std::vector<double>& m, std::int64_t lda, std::int64_t ctas) {
    auto h = to_padded<double>(m, n, lda);
    Dev<double> d(h.size());
    d.put(h);
    CholeskyOptions o;
    o.algo = CholeskyAlgo::tiled;
    o.tiled_ctas = ctas;
    const auto st = chol.factor(d.p, n, lda, o);
    return std::pair{st, d.get()};
  };
  for (std::int64_t lda : {n, n + 1})
    for (std::int64_t ctas : {1, 2, 3}) {
      const auto [st, out] = factor_on(a, lda, ctas);
      ASSERT_EQ(st.info, 0) << "lda " << lda << ", " << ctas << " CTAs";
      EXPECT_LE(backward_error<double>(a, out, n, lda), 10.0 * std::max(beta_lapack, eps<double>()))
          << "lda " << lda << ", " << ctas << " CTAs";
    }
  std::vector<double> m;  // the exact factor's columns before the failing minor
  const auto bad = not_spd(n, 517, &m);
  for (std::int64_t ctas : {1, 2}) {
    const auto [st, out] = factor_on(bad, n, ctas);
    EXPECT_EQ(st.info, 517) << ctas << " CTAs";
    double worst = 0;
    for (std::int64_t j = 0; j + 1 < 517; ++j)
      for (std::int64_t i = j; i < n; ++i) {
        const double e = std::abs(out[i + j * n] - m[i + j * n]);
        if (!(e <= worst)) worst = e;  // NaN counts as worst
      }
    EXPECT_LE(worst, 100.0 * double(n) * eps<double>()) << ctas << " CTAs: columns before the failure";
  }
  CholeskyOptions o;
  o.algo = CholeskyAlgo::tiled;
  o.tiled_ctas = -1;
  Dev<double> d(1);
  EXPECT_THROW((void)chol.factor(d.p, 1, 1, o), std::invalid_argument);
}

// Host only (runs without a GPU): every task of the tiled kernel comes after the tasks that set
// the flags it waits for, for every slope the order accepts (clamped to [0, 0.5]), so the kernel
// cannot deadlock on any number of resident CTAs. The waits, as in potrf_tiled_kernel: task (i, j)
// updates with tiles (i, k) and (j, k), k < j (the diagonal task: k < j − 1), whose flags are set
// by their own tasks, except tile (k + 1, k), which the diagonal task k + 1 solves and publishes;
// tiles i ≥ j + 2 then wait for the diagonal task j; the diagonal task j waits for task (j, j − 1)
// (its handed-over updates) and the diagonal task j − 1.
TEST(TiledTaskOrder, IsTopological) {
  namespace gd = gemflow::linalg::cuda::detail;
  for (double slope : {0.0, 1.0 / 64, 1.0 / 32, 1.0 / 16, 0.125, 0.25, 0.49, 0.5, 0.7}) {
    for (std::int64_t tt = 1; tt <= 40; ++tt) {
      const auto order = gd::tiled_task_order(tt, slope);
      ASSERT_EQ(std::int64_t(order.size()), gd::tiled_task_count(tt));
      std::vector<std::int64_t> pos(static_cast<std::size_t>(tt * tt), -1);
      const auto at = [&](std::int64_t i, std::int64_t j) -> std::int64_t& {
        return pos[static_cast<std::size_t>(i * tt + j)];
      };
      for (std::size_t p = 0; p < order.size(); ++p) {
        const std::int64_t i = order[p].x, j = order[p].y;
        ASSERT_TRUE(j >= 0 && i >= j && i < tt) << "tile (" << i << ", " << j << ")";
        ASSERT_EQ(at(i, j), -1) << "tile (" << i << ", " << j << ") twice";
        at(i, j) = static_cast<std::int64_t>(p);
      }
      const auto setter = [&](std::int64_t x, std::int64_t k) { return x == k + 1 ? at(x, x) : at(x, k); };
      for (std::int64_t j = 0; j < tt; ++j)
        for (std::int64_t i = j; i < tt; ++i) {
          const std::int64_t me = at(i, j);
          const std::string ctx = "slope " + std::to_string(slope) + ", " + std::to_string(tt) + " tile rows, task (" +
                                  std::to_string(i) + ", " + std::to_string(j) + ")";
          const std::int64_t kend = i == j ? j - 1 : j;
          for (std::int64_t k = 0; k < kend; ++k) {
            EXPECT_LT(setter(i, k), me) << ctx << " waits for tile (" << i << ", " << k << ")";
            EXPECT_LT(setter(j, k), me) << ctx << " waits for tile (" << j << ", " << k << ")";
          }
          if (i >= j + 2) {
            EXPECT_LT(at(j, j), me) << ctx << " waits for the diagonal task " << j;
          }
          if (i == j && j > 0) {
            EXPECT_LT(at(j, j - 1), me) << ctx << " waits for task (" << j << ", " << j - 1 << ")";
            EXPECT_LT(at(j - 1, j - 1), me) << ctx << " waits for the diagonal task " << j - 1;
          }
        }
    }
  }
}

template <class T>
void check_not_spd(Fp32Mode mode = Fp32Mode::exact) {
  gc::GpuCholesky chol(nullptr);
  // L's completed columns: to fp rounding, or to 1×FP16's 11-bit products
  const double l_bound = mode == Fp32Mode::fp16 ? 8.0 * std::ldexp(1.0, -11) : 100.0 * eps<T>();
  for (auto [n, k] : std::vector<std::pair<std::int64_t, std::int64_t>>{
           {1, 1}, {2, 2}, {17, 1}, {65, 64}, {65, 65}, {300, 129}, {1000, 517}, {1000, 1000}}) {
    std::vector<double> m;
    const auto a = not_spd(n, k, &m);
    std::vector<T> ref(a.size());
    for (std::size_t i = 0; i < a.size(); ++i) ref[i] = T(a[i]);
    const int lapack_info = lapack_potrf(ref, n);
    ASSERT_EQ(lapack_info, k) << "test matrix construction n=" << n;
    for (const auto& c : cases()) {
      const auto r = factor_case<T>(chol, a, n, c, mode);
      if (!r) continue;
      const auto& [st, out] = *r;
      EXPECT_EQ(st.info, lapack_info) << c.name << " n=" << n << " k=" << k;
      EXPECT_FALSE(st.non_finite) << c.name << " n=" << n << " k=" << k;
      // the documented partial result: columns < info − 1 are L's, every row (here: M's columns)
      double worst = 0;
      std::int64_t wi = 0, wj = 0;
      for (std::int64_t j = 0; j + 1 < k; ++j)
        for (std::int64_t i = j; i < n; ++i) {
          const double e = std::abs(double(out[i + j * n]) - m[i + j * n]);
          if (!(e <= worst)) worst = e, wi = i, wj = j;  // NaN counts as worst
        }
      EXPECT_LE(worst, double(n) * l_bound)
          << c.name << " n=" << n << " k=" << k << ": L(" << wi << "," << wj << ") off by " << worst;
    }
  }
}

TEST_F(GpuCholeskyTest, NotSpdGivesLapackInfoFp64) { check_not_spd<double>(); }
TEST_F(GpuCholeskyTest, NotSpdGivesLapackInfoFp32) { check_not_spd<float>(); }
TEST_F(GpuCholeskyTest, NotSpdGivesLapackInfoFp16Modes) {
  check_not_spd<float>(Fp32Mode::fp16x3);
  check_not_spd<float>(Fp32Mode::fp16);
}

// NaN, +Inf and −Inf on and below the diagonal: the failing minor is LAPACK's (the row of the
// value) and non_finite is set. The tensor-core panel and tiled kernels test what they store and
// the failing pivot instead of scanning A and L; a diagonal NaN/Inf reaches only the pivot, so
// without that test the status said "not positive definite" alone.
template <class T>
void check_non_finite_input(Fp32Mode mode = Fp32Mode::exact) {
  gc::GpuCholesky chol(nullptr);
  const double inf = std::numeric_limits<double>::infinity();
  for (const double bad : {std::numeric_limits<double>::quiet_NaN(), inf, -inf})
    for (auto [n, i, j] : std::vector<std::array<std::int64_t, 3>>{
             {1, 0, 0}, {17, 9, 3}, {1000, 700, 10}, {1000, 300, 300}, {1000, 999, 998}, {1000, 999, 999}}) {
      auto a = random_spd(n, 0.5);
      a[i + j * n] = bad;
      for (const auto& c : cases()) {
        const auto r = factor_case<T>(chol, a, n, c, mode);
        if (!r) continue;
        const gc::CholeskyStatus& st = r->first;
        const std::string ctx = std::string(c.name) + " " + std::to_string(bad) + " at (" + std::to_string(i) + "," +
                                std::to_string(j) + ") n=" + std::to_string(n);
        EXPECT_EQ(st.info, i + 1) << ctx;
        EXPECT_TRUE(st.non_finite) << ctx;
      }
    }
}

TEST_F(GpuCholeskyTest, NonFiniteIsNeverSuccessFp64) { check_non_finite_input<double>(); }
TEST_F(GpuCholeskyTest, NonFiniteIsNeverSuccessFp32) { check_non_finite_input<float>(); }
TEST_F(GpuCholeskyTest, NonFiniteIsNeverSuccessFp16Modes) {
  check_non_finite_input<float>(Fp32Mode::fp16x3);
  check_non_finite_input<float>(Fp32Mode::fp16);
}

// Regression guard for the tile factor's fast pivot path (factor_invert_tile): its rsqrt has no
// subnormal rescue on the chain, so a tile whose pivots are subnormal must be factored again on
// the safe path. An SPD matrix scaled into the subnormal range (every entry below 2^-1022) is SPD
// for LAPACK; without the safe path its pivots gave an infinite 1/√p and a NaN factor.
TEST_F(GpuCholeskyTest, SubnormalPivotsTakeTheSafePath) {
  gc::GpuCholesky chol(nullptr);
  const std::int64_t n = 300;
  auto a = random_spd(n, 0.5);
  for (auto& x : a) x = std::ldexp(x, -1060);
  std::vector<double> ref = a;
  ASSERT_EQ(lapack_potrf(ref, n), 0);
  double den = 0;
  for (std::int64_t j = 0; j < n; ++j)
    for (std::int64_t i = j; i < n; ++i) den += ref[i + j * n] * ref[i + j * n];
  for (const auto& c : cases()) {
    auto h = to_padded<double>(a, n, n);
    Dev<double> d(h.size());
    d.put(h);
    const auto st = chol.factor(d.p, n, n, c.opt);
    ASSERT_EQ(st.info, 0) << c.name << ": " << st.message();
    EXPECT_FALSE(st.non_finite) << c.name;
    const auto out = d.get();
    double num = 0;
    for (std::int64_t j = 0; j < n; ++j)
      for (std::int64_t i = j; i < n; ++i) {
        const double e = out[i + j * n] - ref[i + j * n];
        num += e * e;
      }
    // every algorithm equalled LAPACK bit for bit here (H200, 2026-11-30): the updates' products
    // land on the subnormal grid (2^-1074), which absorbs ulp differences of L; one product that
    // rounds the other way would move an entry by about 1e-4 relative, so the bound is 1e-3 (the
    // defects this guards against give NaN or O(1) errors)
    const double rel = std::sqrt(num / den);
    if (verbose()) std::printf("  %-22s relative difference to LAPACK %.3e\n", c.name, rel);
    EXPECT_LE(rel, 1e-3) << c.name;
  }
}

// A product mode with an algorithm that cannot run it is an argument error that names the mode,
// raised before any work: TF32 modes need recursive or lookahead, FP16 modes the lookahead with
// tensor-core panels (factor and mixed solve alike).
TEST_F(GpuCholeskyTest, ProductModesNeedTheirAlgorithms) {
  gc::GpuCholesky chol(nullptr);
  Dev<float> d(4);
  d.put({4.0f, 1.0f, 1.0f, 3.0f});
  const auto message_of = [&](const CholeskyOptions& o) -> std::string {
    try {
      (void)chol.factor(d.p, 2, 2, o);
    } catch (const std::invalid_argument& e) {
      return e.what();
    }
    return "no error";
  };
  CholeskyOptions o;
  o.algo = CholeskyAlgo::tiled;
  o.fp32_mode = Fp32Mode::tf32x3;
  EXPECT_NE(message_of(o).find("fp32_mode 3xTF32 needs algo = recursive or lookahead"), std::string::npos)
      << message_of(o);
  o.algo = CholeskyAlgo::recursive;
  o.fp32_mode = Fp32Mode::fp16;
  EXPECT_NE(message_of(o).find("fp32_mode 1xFP16 needs algo = lookahead"), std::string::npos) << message_of(o);
  o.algo = CholeskyAlgo::lookahead;
  o.panel = gc::PanelAlgo::library;
  o.fp32_mode = Fp32Mode::fp16x3;
  EXPECT_NE(message_of(o).find("fp32_mode 3xFP16 needs algo = lookahead"), std::string::npos) << message_of(o);
  o.panel = gc::PanelAlgo::tiles;  // the valid combination factors
  EXPECT_EQ(message_of(o), "no error");
  Dev<double> a(4), b(2), x(2);
  a.put({4.0, 1.0, 1.0, 3.0});
  b.put({1.0, 1.0});
  gc::MixedSolveOptions mo;
  mo.factor_algo = CholeskyAlgo::recursive;  // the default factor_mode is fp16
  try {
    (void)chol.solve_mixed(a.p, 2, 2, b.p, 2, 1, x.p, 2, mo);
    ADD_FAILURE() << "solve_mixed accepted 1xFP16 with the recursive factor";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("factor_mode 1xFP16 needs factor_algo = lookahead"), std::string::npos)
        << e.what();
  }
}

TEST_F(GpuCholeskyTest, EmptyAndOneByOne) {
  gc::GpuCholesky chol(nullptr);
  EXPECT_EQ(chol.factor(static_cast<double*>(nullptr), 0, 1).info, 0);
  Dev<double> d(1);
  for (auto [v, info, root] : std::vector<std::array<double, 3>>{{4.0, 0, 2.0}, {-1.0, 1, 0}, {0.0, 1, 0}}) {
    for (const auto& c : cases()) {
      d.put({v});
      const auto st = chol.factor(d.p, 1, 1, c.opt);
      EXPECT_EQ(st.info, std::int64_t(info)) << c.name << " a=" << v;
      if (info == 0) {
        EXPECT_EQ(d.get()[0], root) << c.name;
      }
    }
  }
  EXPECT_THROW((void)chol.factor(d.p, 2, 1), std::invalid_argument);
  EXPECT_THROW((void)chol.factor(d.p, -1, 1), std::invalid_argument);
}

// Regression: the `cusolver` algorithm at n = 1 gave √a up to 2 ulps low (cuSOLVER's own
// rounding; backward error 4ε > n·ε). Every algorithm must return the correctly rounded root.
template <class T>
void check_one_by_one_rounding() {
  gc::GpuCholesky chol(nullptr);
  std::uniform_real_distribution<double> u(-8.0, 8.0);
  Dev<T> d(1);
  for (int t = 0; t < 200; ++t) {
    const T a = T(std::exp2(u(rng())));
    const T exact = T(std::sqrt(double(a)));  // correctly rounded: √ of a T is never a tie in T
    for (const auto& c : cases()) {
      d.put({a});
      ASSERT_EQ(chol.factor(d.p, 1, 1, c.opt).info, 0) << c.name;
      const T l = d.get()[0];
      EXPECT_EQ(l, exact) << c.name << ": a = " << double(a) << ", l = " << double(l);
    }
  }
}

TEST_F(GpuCholeskyTest, OneByOneIsTheCorrectlyRoundedRootFp64) { check_one_by_one_rounding<double>(); }
TEST_F(GpuCholeskyTest, OneByOneIsTheCorrectlyRoundedRootFp32) { check_one_by_one_rounding<float>(); }

template <class T>
void check_batched() {
  gc::GpuCholesky chol(nullptr);
  // every kernel and size class: its first and last n, and for the DMMA kernels' n < 8·NT (right-
  // looking to 24, left-looking above) both the kernel whose last block column stops at n (a
  // class's first n, where it has one) and the full one (8·NT − 1)
  for (std::int64_t n : {1,  2,  3,  4,  5,  8,  9,  12, 13, 14, 15, 16, 17, 23, 24, 25,  28, 29,
                         31, 32, 33, 39, 40, 41, 47, 48, 49, 55, 56, 57, 63, 64, 65, 200, 512}) {
    const std::int64_t batch = n >= 200 ? 6 : 37, lda = n + 1, stride = lda * n + 5;
    std::vector<std::vector<double>> as;
    std::vector<int> expect_info;
    std::vector<T> h(static_cast<std::size_t>(stride * batch), poison<T>());
    for (std::int64_t b = 0; b < batch; ++b) {
      const bool bad = b % 5 == 3;
      const std::int64_t k = bad ? 1 + (b * 7919) % n : 0;
      as.push_back(bad ? not_spd(n, k) : random_spd(n, 0.5));
      expect_info.push_back(int(k));
      for (std::int64_t j = 0; j < n; ++j)
        for (std::int64_t i = j; i < n; ++i) h[b * stride + i + j * lda] = T(as.back()[i + j * n]);
    }
    Dev<T> d(h.size());
    d.put(h);
    const auto info = chol.factor_batched(d.p, n, lda, stride, batch);
    const auto out = d.get();
    {  // the asynchronous entry point: same factors, info left on the device
      Dev<T> d2(h.size());
      d2.put(h);
      Dev<int> dinfo{static_cast<std::size_t>(batch)};
      dinfo.put(std::vector<int>(std::size_t(batch), -7));
      chol.factor_batched_async(d2.p, n, lda, stride, batch, dinfo.p);
      EXPECT_EQ(dinfo.get(), info) << "async info, n=" << n;
      EXPECT_EQ(std::memcmp(d2.get().data(), out.data(), sizeof(T) * out.size()), 0) << "async factors, n=" << n;
    }
    for (std::int64_t b = 0; b < batch; ++b) {
      const std::string ctx = "batched n=" + std::to_string(n) + " b=" + std::to_string(b);
      EXPECT_EQ(info[b], expect_info[b]) << ctx;
      // one by one with the recursive algorithm
      auto one = to_padded<T>(as[b], n, lda);
      Dev<T> d1(one.size());
      d1.put(one);
      EXPECT_EQ(chol.factor(d1.p, n, lda).info, info[b]) << ctx;
      std::vector<T> mine(out.begin() + b * stride, out.begin() + b * stride + lda * n);
      std::vector<T> pad(out.begin() + b * stride, out.begin() + (b + 1) * stride);
      expect_poison_kept(mine, n, lda, ctx);
      if (b + 1 < batch) {
        for (std::int64_t t = lda * n; t < stride; ++t) {
          EXPECT_EQ(std::memcmp(&pad[t], &(const T&)poison<T>(), sizeof(T)), 0) << ctx << " gap written";
        }
      }
      if (info[b] != 0) continue;
      const auto single = d1.get();
      double num = 0, den = 0;
      for (std::int64_t j = 0; j < n; ++j)
        for (std::int64_t i = j; i < n; ++i) {
          const double e = double(mine[i + j * lda]) - double(single[i + j * lda]);
          num += e * e;
          den += double(single[i + j * lda]) * double(single[i + j * lda]);
        }
      EXPECT_LE(std::sqrt(num / den), 100.0 * double(n) * eps<T>()) << ctx << ": batched differs from one-by-one";
      EXPECT_LE(backward_error<T>(as[b], mine, n, lda), double(n) * eps<T>()) << ctx;
    }
  }
}

TEST_F(GpuCholeskyTest, BatchedEqualsOneByOneFp64) { check_batched<double>(); }
TEST_F(GpuCholeskyTest, BatchedEqualsOneByOneFp32) { check_batched<float>(); }

// Every batched kernel (one per size class and precision) reports a non-finite or zero pivot as
// LAPACK's info: NaN or +Inf on the diagonal, NaN below it (reaches pivot i through row i), an
// exact zero pivot. Some kernels test each pivot, others find the first NaN on the diagonal of L.
// The batched broadcast kernel's fast pivot path (fp64, n = 13–16) has no subnormal rescue on its
// chain: a warp with a subnormal pivot factors its matrices again on the safe path. Every batched
// kernel, with a normal matrix (b = 2) beside the scaled ones in the same launch.
TEST_F(GpuCholeskyTest, BatchedSubnormalPivotsMatchLapack) {
  gc::GpuCholesky chol(nullptr);
  for (std::int64_t n : {3, 9, 13, 14, 15, 16, 24, 28, 31, 33, 39, 40, 44, 52, 64}) {
    const std::int64_t batch = 5, stride = n * n;
    std::vector<double> h(static_cast<std::size_t>(stride * batch));
    std::vector<std::vector<double>> refs;
    for (std::int64_t b = 0; b < batch; ++b) {
      auto a = random_spd(n, 0.5);
      if (b != 2)
        for (auto& x : a) x = std::ldexp(x, -1060);
      std::copy(a.begin(), a.end(), h.begin() + b * stride);
      ASSERT_EQ(lapack_potrf(a, n), 0);
      refs.push_back(a);
    }
    Dev<double> d(h.size());
    d.put(h);
    const auto info = chol.factor_batched(d.p, n, n, stride, batch);
    const auto out = d.get();
    for (std::int64_t b = 0; b < batch; ++b) {
      const std::string ctx = "n=" + std::to_string(n) + " b=" + std::to_string(b);
      EXPECT_EQ(info[b], 0) << ctx;
      double num = 0, den = 0;
      for (std::int64_t j = 0; j < n; ++j)
        for (std::int64_t i = j; i < n; ++i) {
          const double e = out[b * stride + i + j * n] - refs[b][i + j * n];
          num += e * e;
          den += refs[b][i + j * n] * refs[b][i + j * n];
        }
      EXPECT_LE(std::sqrt(num / den), 1e-3) << ctx;  // as SubnormalPivotsTakeTheSafePath
    }
  }
}

template <class T>
void check_batched_non_finite() {
  gc::GpuCholesky chol(nullptr);
  const double nan = std::numeric_limits<double>::quiet_NaN(), inf = std::numeric_limits<double>::infinity();
  // (the DMMA kernels' sizes: both the kernel whose last block column stops at n and the full one)
  for (std::int64_t n :
       {3, 7, 9, 13, 15, 16, 20, 23, 24, 25, 30, 31, 32, 33, 39, 40, 44, 47, 48, 52, 55, 56, 60, 64, 100}) {
    struct Case {
      std::int64_t i, j;
      double v;
      const char* what;
    };
    const std::int64_t k = n / 2;
    const std::vector<Case> cases = {{k, k, nan, "NaN pivot"},     {k, k, inf, "+Inf pivot"},
                                     {n - 1, 0, nan, "NaN below"}, {k, k, 0.0, "zero pivot"},
                                     {0, 0, -inf, "-Inf first"},   {n - 1, n - 1, nan, "NaN last"}};
    const std::int64_t batch = std::int64_t(cases.size()) + 1, lda = n, stride = n * n;
    std::vector<T> h(static_cast<std::size_t>(stride * batch));
    for (std::int64_t b = 0; b < batch; ++b) {
      auto a = random_spd(n, 0.5);
      if (b < std::int64_t(cases.size())) {
        const auto& c = cases[std::size_t(b)];
        if (c.v == 0.0) {  // exactly singular leading minor k+1: row and column k zero
          for (std::int64_t t = 0; t < n; ++t) a[k + t * n] = a[t + k * n] = 0.0;
        } else {
          a[c.i + c.j * n] = c.v;
        }
      }
      for (std::int64_t j = 0; j < n; ++j)
        for (std::int64_t i = 0; i < n; ++i) h[b * stride + i + j * lda] = T(a[i + j * n]);
    }
    Dev<T> d(h.size());
    d.put(h);
    const auto info = chol.factor_batched(d.p, n, lda, stride, batch);
    for (std::size_t b = 0; b < cases.size(); ++b)
      EXPECT_EQ(info[b], int(cases[b].i) + 1) << cases[b].what << ", n=" << n;
    EXPECT_EQ(info.back(), 0) << "SPD neighbour, n=" << n;
  }
}

TEST_F(GpuCholeskyTest, BatchedNonFinitePivotsGiveLapackInfoFp64) { check_batched_non_finite<double>(); }
TEST_F(GpuCholeskyTest, BatchedNonFinitePivotsGiveLapackInfoFp32) { check_batched_non_finite<float>(); }

// The persistent batched kernels (each warp factors matrices m, m + grid, … and loads the next
// one's first block column during its last step; cholesky_batched.cu names the sizes): a batch of
// more than three matrices per resident warp in one launch gives every matrix the info of LAPACK
// (one in seven is not SPD, so a warp's next matrix must start its info afresh), every SPD matrix
// the factor of the same matrix factored alone, bit for bit, and leaves the upper triangles and
// the gaps between matrices untouched.
template <class T>
void check_batched_persistent() {
  gc::GpuCholesky chol(nullptr);
  int device = 0, sms = 0, blocks_per_sm = 0;  // one warp per block: at most sms·blocks_per_sm resident warps
  ASSERT_EQ(cudaGetDevice(&device), cudaSuccess);
  ASSERT_EQ(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device), cudaSuccess);
  ASSERT_EQ(cudaDeviceGetAttribute(&blocks_per_sm, cudaDevAttrMaxBlocksPerMultiprocessor, device), cudaSuccess);
  const std::int64_t batch = 3 * std::int64_t{blocks_per_sm} * sms + 17;
  const std::vector<std::int64_t> ns = sizeof(T) == 8 ? std::vector<std::int64_t>{25, 28, 30, 40, 48, 64}
                                                      : std::vector<std::int64_t>{32, 40, 41, 47, 48, 55, 56, 64};
  for (const std::int64_t n : ns) {
    const std::int64_t lda = n, stride = n * n + 3;
    std::vector<T> h(static_cast<std::size_t>(stride * batch), poison<T>());
    std::vector<int> expect(static_cast<std::size_t>(batch), 0);
    std::mt19937_64 g(static_cast<std::uint64_t>(n));
    std::uniform_real_distribution<double> u(-1.0, 1.0);
    for (std::int64_t b = 0; b < batch; ++b) {
      T* a = h.data() + b * stride;
      for (std::int64_t j = 0; j < n; ++j)  // diagonally dominant: SPD
        for (std::int64_t i = j; i < n; ++i) a[i + j * lda] = T(i == j ? double(n) + 1.0 + u(g) : u(g));
      if (b % 7 == 3) {  // leading minor k is not positive: LAPACK info k
        const std::int64_t k = 1 + (b * 31) % n;
        a[(k - 1) * (lda + 1)] = T(-1.0);
        expect[std::size_t(b)] = int(k);
      }
    }
    Dev<T> d(h.size());
    d.put(h);
    const auto info = chol.factor_batched(d.p, n, lda, stride, batch);
    const auto out = d.get();
    int wrong_info = 0, written = 0, differ = 0, singles = 0;
    for (std::int64_t b = 0; b < batch; ++b) {
      wrong_info += info[std::size_t(b)] != expect[std::size_t(b)];
      for (std::int64_t t = 0; t < stride; ++t) {
        const std::int64_t i = t % lda, j = t / lda;
        const bool lower = t < lda * n && i >= j;
        if (!lower && std::memcmp(&out[b * stride + t], &h[b * stride + t], sizeof(T)) != 0) ++written;
      }
    }
    for (std::int64_t b = 0; b < batch; b += (b < 40 ? 1 : 97)) {  // the first matrices of many warps, then a sample
      if (expect[std::size_t(b)] != 0) continue;
      Dev<T> d1(static_cast<std::size_t>(lda * n));
      d1.put(std::vector<T>(h.begin() + b * stride, h.begin() + b * stride + lda * n));
      ASSERT_EQ(chol.factor_batched(d1.p, n, lda, stride, 1).at(0), 0) << "n=" << n << " b=" << b;
      const auto one = d1.get();
      ++singles;
      for (std::int64_t j = 0; j < n; ++j)
        for (std::int64_t i = j; i < n; ++i)
          differ += std::memcmp(&one[i + j * lda], &out[b * stride + i + j * lda], sizeof(T)) != 0;
    }
    EXPECT_EQ(wrong_info, 0) << "n=" << n << ", batch " << batch << ": matrices with another info than LAPACK's";
    EXPECT_EQ(written, 0) << "n=" << n << ": entries outside the lower triangles written";
    EXPECT_GT(singles, 40) << "n=" << n;
    EXPECT_EQ(differ, 0) << "n=" << n << ": entries that differ from the matrix factored alone (" << singles
                         << " matrices)";
  }
}

TEST_F(GpuCholeskyTest, BatchedPersistentWarpsMatchSingleMatricesFp64) { check_batched_persistent<double>(); }
TEST_F(GpuCholeskyTest, BatchedPersistentWarpsMatchSingleMatricesFp32) { check_batched_persistent<float>(); }

TEST_F(GpuCholeskyTest, PivotedMatchesCpuDpstf2Steps) {
  gc::GpuCholesky chol(nullptr);
  for (std::int64_t n : {17, 1000, 2049}) {
    for (std::int64_t true_rank : {std::int64_t{3}, n}) {
      const auto a = random_spd(n, true_rank == n ? 0.5 : 0.0, true_rank);
      for (std::int64_t max_rank : {3, 4}) {
        const std::string ctx =
            "n=" + std::to_string(n) + " rank=" + std::to_string(true_rank) + " max_rank=" + std::to_string(max_rank);
        Dev<double> ad(a.size()), ld(static_cast<std::size_t>(n * max_rank));
        ad.put(a);
        ld.put(std::vector<double>(ld.n, std::numeric_limits<double>::quiet_NaN()));
        const auto g = chol.factor_pivoted(ad.p, n, n, max_rank, -1.0, ld.p, n);
        const auto l = ld.get();
        for (double v : l) ASSERT_FALSE(std::isnan(v)) << ctx << ": L entry not written";
        auto cpu_a = a;  // symmetric: row-major = column-major
        const auto c = gemflow::linalg::pivoted_cholesky(cpu_a, std::size_t(n), std::size_t(max_rank), -1.0);
        EXPECT_EQ(g.rank, c.rank) << ctx;
        EXPECT_EQ(g.rank_deficient, c.rank_deficient) << ctx;
        EXPECT_EQ(g.tolerance, c.tolerance) << ctx;
        EXPECT_NEAR(g.next_pivot, c.next_pivot, 1e-12 * std::abs(a[0]) + 1e-14) << ctx;
        EXPECT_EQ(g.rank, std::size_t(std::min(true_rank, max_rank))) << ctx;
        ASSERT_EQ(g.permutation.size(), std::size_t(n));
        for (std::size_t k = 0; k < g.rank; ++k) EXPECT_EQ(g.permutation[k], c.permutation[k]) << ctx << " pivot " << k;
        double maxdiff = 0, maxl = 0;
        for (std::int64_t k = 0; k < max_rank; ++k)
          for (std::int64_t i = 0; i < n; ++i) {
            const double cv = std::size_t(k) < c.rank ? cpu_a[i * n + k] : 0.0;
            maxdiff = std::max(maxdiff, std::abs(l[i + k * n] - cv));
            maxl = std::max(maxl, std::abs(cv));
          }
        EXPECT_LE(maxdiff, 1e-13 * maxl) << ctx << ": L differs from the CPU dpstf2 steps";
        if (true_rank == 3) {
          // P ᵀ A P ≈ L Lᵀ to rounding for an exactly rank-3 PSD matrix
          double num = 0, den = 0;
          for (std::int64_t j = 0; j < n; ++j)
            for (std::int64_t i = 0; i < n; ++i) {
              double s = 0;
              for (std::int64_t k = 0; k < 3; ++k) s += l[i + k * n] * l[j + k * n];
              const double av = a[g.permutation[i] + g.permutation[j] * n];
              num += (av - s) * (av - s);
              den += av * av;
            }
          EXPECT_LE(std::sqrt(num / den), double(n) * eps<double>()) << ctx;
        }
      }
    }
  }
  // the full rank of a rank-3 PSD matrix agrees with LAPACK dpstrf
  const std::int64_t n = 300;
  const auto a = random_spd(n, 0.0, 3);
  Dev<double> ad(a.size()), ld(static_cast<std::size_t>(n * n));
  ad.put(a);
  const auto g = chol.factor_pivoted(ad.p, n, n, 0, -1.0, ld.p, n);
  auto la = a;
  std::vector<lapack_int> piv(n);
  lapack_int rank = 0;
  ASSERT_GE(LAPACKE_dpstrf(LAPACK_COL_MAJOR, 'L', int(n), la.data(), int(n), piv.data(), &rank, -1.0), 0);
  EXPECT_EQ(g.rank, std::size_t(rank));
  EXPECT_EQ(g.rank, 3u);
  EXPECT_TRUE(g.rank_deficient);
}

// The mixed solve's one-right-hand-side triangular solves (trsv_kernels.cuh) against fp64
// substitution with the same fp32 L: every block-row layout (one partial block, exact blocks,
// one row more, many blocks so that later CTAs wait on earlier ones), leading dimensions that
// take the 16-byte and the 4-byte column loads, garbage in the padding rows. κ(A) ≤ 9, so κ(L)
// ≤ 3; the error bound is 64·u32·κ(A) whatever n (the fp32 sums have 32 terms at most, all
// others are fp64); measured errors are about 2e-7. The pair is also deterministic.
TEST_F(GpuCholeskyTest, TriangularSolvePairMatchesFp64Substitution) {
  Dev<float> one(1);
  EXPECT_THROW(gc::triangular_solve_pair(one.p, 5, 6, one.p, nullptr), std::invalid_argument);  // ldl < n
  EXPECT_THROW(gc::triangular_solve_pair(nullptr, 6, 6, one.p, nullptr), std::invalid_argument);
  for (std::int64_t n : {1, 2, 17, 127, 128, 129, 1000, 2049, 5000}) {
    for (std::int64_t ldl : {n, n + 1, (n + 3) / 4 * 4 + 4}) {
      const std::string ctx = "n=" + std::to_string(n) + " ldl=" + std::to_string(ldl);
      const auto a = random_spd(n, 0.5);
      std::vector<float> l32(a.begin(), a.end());
      ASSERT_EQ(lapack_potrf(l32, n), 0) << ctx;
      std::vector<float> lp(static_cast<std::size_t>(ldl * n), std::numeric_limits<float>::quiet_NaN());
      for (std::int64_t j = 0; j < n; ++j)
        for (std::int64_t i = 0; i < n; ++i) lp[i + j * ldl] = i >= j ? l32[i + j * n] : 7.0f;  // upper: not read
      const auto bd = random_normal(static_cast<std::size_t>(n));
      std::vector<float> b(bd.begin(), bd.end());
      // reference: L z = b, Lᵀ x = z in fp64 with the fp32 entries
      std::vector<double> ref(b.begin(), b.end());
      for (std::int64_t j = 0; j < n; ++j) {
        ref[j] /= l32[j + j * n];
        for (std::int64_t i = j + 1; i < n; ++i) ref[i] -= double(l32[i + j * n]) * ref[j];
      }
      for (std::int64_t j = n - 1; j >= 0; --j) {
        double v = ref[j];
        for (std::int64_t i = j + 1; i < n; ++i) v -= double(l32[i + j * n]) * ref[i];
        ref[j] = v / l32[j + j * n];
      }
      Dev<float> ld(lp.size()), xd(b.size());
      ld.put(lp);
      xd.put(b);
      gc::triangular_solve_pair(ld.p, ldl, n, xd.p, nullptr);
      const auto x = xd.get();
      double err = 0, xmax = 0;
      for (std::int64_t i = 0; i < n; ++i) {
        err = std::max(err, std::abs(double(x[i]) - ref[i]));
        xmax = std::max(xmax, std::abs(ref[i]));
      }
      ASSERT_TRUE(std::isfinite(err)) << ctx;
      EXPECT_LE(err, 64.0 * 0x1p-24 * 9.0 * xmax) << ctx;
      xd.put(b);
      gc::triangular_solve_pair(ld.p, ldl, n, xd.p, nullptr);
      EXPECT_EQ(xd.get(), x) << ctx << ": a second solve differs (a race)";
    }
  }
}

TEST_F(GpuCholeskyTest, MixedSolveReachesFp64BackwardError) {
  gc::GpuCholesky chol(nullptr);
  for (auto mode : {Fp32Mode::tf32x3, Fp32Mode::exact, Fp32Mode::tf32, Fp32Mode::fp16, Fp32Mode::fp16x3}) {
    for (std::int64_t n : {1, 17, 1000, 2049}) {
      for (std::int64_t nrhs : {1, 3}) {
        const std::string ctx =
            "mode=" + std::to_string(int(mode)) + " n=" + std::to_string(n) + " nrhs=" + std::to_string(nrhs);
        const auto a = random_spd(n, 0.5);
        const auto b = random_normal(static_cast<std::size_t>(n * nrhs));
        Dev<double> ad(a.size()), bd(b.size()), xd(b.size());
        ad.put(a);
        bd.put(b);
        xd.put(std::vector<double>(b.size(), std::numeric_limits<double>::quiet_NaN()));
        gc::MixedSolveOptions o;
        o.factor_mode = mode;
        const auto r = chol.solve_mixed(ad.p, n, n, bd.p, n, nrhs, xd.p, n, o);
        EXPECT_TRUE(r.converged) << ctx;
        EXPECT_FALSE(r.used_fp64_fallback) << ctx;
        EXPECT_FALSE(r.escalated) << ctx;  // κ ≤ 9: 1×TF32 suffices
        EXPECT_EQ(r.factor_mode, mode) << ctx;
        ASSERT_FALSE(r.backward_error.empty()) << ctx;
        EXPECT_LE(r.backward_error.back(), r.tolerance) << ctx;
        for (std::size_t k = 1; k < r.backward_error.size(); ++k)
          EXPECT_LT(r.backward_error[k], r.backward_error[k - 1]) << ctx << " step " << k;
        // against LAPACK dposv in fp64 (κ(A) ≤ 9)
        auto la = a;
        auto lx = b;
        ASSERT_EQ(LAPACKE_dposv(LAPACK_COL_MAJOR, 'L', int(n), int(nrhs), la.data(), int(n), lx.data(), int(n)), 0);
        const auto x = xd.get();
        double dmax = 0, xmax = 0;
        for (std::size_t i = 0; i < x.size(); ++i) {
          dmax = std::max(dmax, std::abs(x[i] - lx[i]));
          xmax = std::max(xmax, std::abs(lx[i]));
        }
        EXPECT_LE(dmax, 100.0 * double(n) * eps<double>() * xmax) << ctx;
      }
    }
  }
}

// The reported η_0 = ‖b − A x_0‖∞ / (‖A‖∞ ‖x_0‖∞ + ‖b‖∞) against the same formula on the host for
// the returned x_0 (no refinement, no fallback): checks the one-pass ‖A‖∞ of the symmetric A from
// its lower triangle (tile edges at n = 127, 128, 129, 300; the strict upper triangle holds
// garbage that must not be read). η_0 ~ 1e-7 is resolved far above the fp64 rounding of r.
TEST_F(GpuCholeskyTest, MixedSolveBackwardErrorMatchesHostFormula) {
  gc::GpuCholesky chol(nullptr);
  for (std::int64_t n : {1, 2, 127, 128, 129, 300, 1000}) {
    const std::string ctx = "n=" + std::to_string(n);
    auto a = random_spd(n, 0.5);
    for (std::int64_t i = 0; i < n; ++i) a[i + i * n] += double(i % 7);  // unequal row sums
    auto garbage = a;
    for (std::int64_t j = 1; j < n; ++j)
      for (std::int64_t i = 0; i < j; ++i) garbage[i + j * n] = 1e300;
    const auto b = random_normal(static_cast<std::size_t>(n));
    Dev<double> ad(a.size()), bd(b.size()), xd(b.size());
    ad.put(garbage);
    bd.put(b);
    gc::MixedSolveOptions o;
    o.factor_mode = Fp32Mode::exact;
    o.max_iterations = 0;
    o.fallback_fp64 = false;
    o.tolerance = 0.0;
    const auto r = chol.solve_mixed(ad.p, n, n, bd.p, n, 1, xd.p, n, o);
    ASSERT_EQ(r.backward_error.size(), 1u) << ctx;
    const auto x = xd.get();
    long double anorm = 0, rnorm = 0, xnorm = 0, bnorm = 0;
    for (std::int64_t i = 0; i < n; ++i) {
      long double row = 0, ri = b[i];
      for (std::int64_t j = 0; j < n; ++j) {
        row += std::abs(a[i + j * n]);
        ri -= static_cast<long double>(a[i + j * n]) * x[j];
      }
      anorm = std::max(anorm, row);
      rnorm = std::max(rnorm, std::abs(ri));
      xnorm = std::max<long double>(xnorm, std::abs(x[i]));
      bnorm = std::max<long double>(bnorm, std::abs(b[i]));
    }
    const double eta = double(rnorm / (anorm * xnorm + bnorm));
    if (n > 1) {
      EXPECT_GT(eta, 1e-12) << ctx;  // an fp32 solution: resolved, not rounding noise
    }
    EXPECT_LT(eta, 1e-4) << ctx;  // and a solution: the fp32 triangular solves are right
    EXPECT_NEAR(r.backward_error[0], eta, 1e-6 * eta + 1e-300) << ctx;
  }
}

// The triangular solves of the refinement at more 128-row blocks than SMs (17500: 137 blocks, one
// CTA per SM, so the later blocks start as earlier ones finish): b = A·e₀, so x = e₀.
TEST_F(GpuCholeskyTest, MixedSolveWithMoreTriangularBlocksThanSms) {
  const std::int64_t n = 17500;
  gc::GpuCholesky chol(nullptr);
  Dev<double> a(std::size_t(n * n)), x(static_cast<std::size_t>(n));
  gc::fill_random_symmetric(a.p, n, n, 1.3 * std::sqrt(double(n)), 17, nullptr);  // κ ≈ 17
  for (auto mode : {Fp32Mode::tf32, Fp32Mode::tf32x3, Fp32Mode::fp16, Fp32Mode::fp16x3}) {
    gc::MixedSolveOptions o;
    o.factor_mode = mode;
    const auto r = chol.solve_mixed(a.p, n, n, a.p, n, 1, x.p, n, o);  // b = column 0 of A
    const std::string ctx = gc::fp32_mode_name(mode);
    EXPECT_TRUE(r.converged) << ctx;
    EXPECT_FALSE(r.used_fp64_fallback) << ctx;
    EXPECT_LE(r.iterations, 3) << ctx;
    const auto h = x.get();
    double err = 0;
    for (std::int64_t i = 0; i < n; ++i) err = std::max(err, std::abs(h[i] - (i == 0 ? 1.0 : 0.0)));
    EXPECT_LE(err, 1e-12) << ctx;
  }
}

/// Under GEMFLOW_TEST_VERBOSE: what a mixed solve did and its η history.
void print_solve(const std::string& ctx, const gc::MixedSolveResult& r) {
  if (!verbose()) return;
  std::printf("  %s: escalated %d converged %d fallback %d gmres %d/%d eta", ctx.c_str(), int(r.escalated),
              int(r.converged), int(r.used_fp64_fallback), r.gmres_steps, r.gmres_iterations);
  for (double e : r.backward_error) std::printf(" %.1e", e);
  std::printf("\n");
}

// κ ≈ 1e6: beyond a one-product factor (1×TF32 or 1×FP16: κ·2⁻¹¹ ≫ 1), within a three-product
// one. With escalation (the default) the solve must end on the 3× factor without the fp64
// fallback, at fp64 backward error; without escalation or GMRES-IR the same solve needs the
// fallback, or at least twice the refinement steps. Regression: with classic refinement alone, 6
// of 300 seeds (H200) stalled on the 3×FP16 factor (β ≈ 6e-7, κ·β ≈ 1) and fell back; GMRES-IR now
// takes over there. Seed 12851884202221925955 (kept as a second case): the one-product factor
// alone converges, at a contraction of about 0.6 per step (30 steps against 8 and 11 with
// escalation), so "needs the fallback" was not true of every matrix.
// GEMFLOW_TEST_VERBOSE=1 prints each solve's η history.
void check_escalation_to_three_products() {
  gc::GpuCholesky chol(nullptr);
  const std::int64_t n = 600;
  const auto a = random_spd(n, 4e-6);
  const auto b = random_normal(static_cast<std::size_t>(n));
  Dev<double> ad(a.size()), bd(b.size()), xd(b.size());
  ad.put(a);
  bd.put(b);
  ASSERT_TRUE(gc::MixedSolveOptions{}.escalate);
  for (auto [from, to] : {std::pair{Fp32Mode::tf32, Fp32Mode::tf32x3}, std::pair{Fp32Mode::fp16, Fp32Mode::fp16x3}}) {
    const std::string ctx = gc::fp32_mode_name(from);
    gc::MixedSolveOptions o;
    o.factor_mode = from;
    const auto r = chol.solve_mixed(ad.p, n, n, bd.p, n, 1, xd.p, n, o);
    print_solve(ctx, r);
    EXPECT_TRUE(r.escalated) << ctx;
    EXPECT_EQ(r.factor_mode, to) << ctx;
    EXPECT_GE(r.escalation_step, 0) << ctx;
    EXPECT_LT(r.escalation_step, static_cast<int>(r.backward_error.size())) << ctx;
    EXPECT_TRUE(r.converged) << ctx;
    EXPECT_FALSE(r.used_fp64_fallback) << ctx;
    ASSERT_FALSE(r.backward_error.empty()) << ctx;
    EXPECT_LE(r.backward_error.back(), r.tolerance) << ctx;
    EXPECT_LE(r.iterations, o.max_iterations) << ctx;
    // the solution against LAPACK dposv (κ ≈ 1e6: forward error up to κ·η)
    auto la = a;
    auto lx = b;
    ASSERT_EQ(LAPACKE_dposv(LAPACK_COL_MAJOR, 'L', int(n), 1, la.data(), int(n), lx.data(), int(n)), 0);
    const auto x = xd.get();
    double dmax = 0, xmax = 0;
    for (std::size_t i = 0; i < x.size(); ++i) {
      dmax = std::max(dmax, std::abs(x[i] - lx[i]));
      xmax = std::max(xmax, std::abs(lx[i]));
    }
    EXPECT_LE(dmax, 1e-8 * xmax) << ctx;
    o.escalate = false;
    o.gmres = false;
    const auto r2 = chol.solve_mixed(ad.p, n, n, bd.p, n, 1, xd.p, n, o);
    print_solve(ctx + ", no escalation or GMRES", r2);
    EXPECT_FALSE(r2.escalated) << ctx;
    EXPECT_EQ(r2.gmres_steps, 0) << ctx;
    EXPECT_TRUE(r2.used_fp64_fallback || r2.backward_error.size() >= 2 * r.backward_error.size())
        << ctx << ": " << r2.backward_error.size() << " steps without escalation, " << r.backward_error.size()
        << " with";
  }
}

TEST_F(GpuCholeskyTest, MixedSolveEscalatesToThreeProducts) {
  for (const char* seed : {"fresh", "12851884202221925955"}) {
    SCOPED_TRACE(std::string("seed ") + seed);
    if (std::string(seed) != "fresh") rng().seed(std::strtoull(seed, nullptr, 10));
    check_escalation_to_three_products();
  }
}

// Regression: after an escalation inside the refinement loop, the one-right-hand-side solves kept
// the inverted diagonal blocks of the one-product factor, so each correction mixed two factors.
// The one-right-hand-side path (our triangular solves, launches gated on the device) must refine
// as the several-right-hand-side path (cuBLAS STRSM, host decisions) does on the same system,
// given as two identical columns: the same escalation step, the same number of steps (±1) and η
// within 8× at each step up to the shorter history's end. Classic refinement only (GMRES-IR off),
// κ ≈ 4e2 … 1e5: the 1×FP16 refinement escalates after 4 steps (H200: before the fix, 1 rhs took
// 8–23 steps where 2 rhs took 6–9; at shift 1e-5 it fell back where 2 rhs converged).
TEST_F(GpuCholeskyTest, MixedSolveOneRhsRefinesAsTheStrsmPath) {
  gc::GpuCholesky chol(nullptr);
  const std::int64_t n = 600;
  int in_loop = 0;
  for (double shift : {1e-2, 1e-3, 3e-4, 1e-4, 3e-5}) {
    const std::string ctx = "shift " + std::to_string(shift);
    const auto a = random_spd(n, shift);
    auto b = random_normal(static_cast<std::size_t>(n));
    b.insert(b.end(), b.begin(), b.end());  // two identical columns
    Dev<double> ad(a.size()), bd(b.size()), xd(b.size());
    ad.put(a);
    bd.put(b);
    gc::MixedSolveOptions o;
    o.factor_mode = Fp32Mode::fp16;
    o.gmres = false;
    const auto r1 = chol.solve_mixed(ad.p, n, n, bd.p, n, 1, xd.p, n, o);
    const auto x1 = xd.get();
    const auto r2 = chol.solve_mixed(ad.p, n, n, bd.p, n, 2, xd.p, n, o);
    print_solve(ctx + ", 1 rhs", r1);
    print_solve(ctx + ", 2 rhs", r2);
    EXPECT_EQ(r1.escalated, r2.escalated) << ctx;
    EXPECT_EQ(r1.escalation_step, r2.escalation_step) << ctx;
    EXPECT_EQ(r1.converged, r2.converged) << ctx;
    EXPECT_EQ(r1.used_fp64_fallback, r2.used_fp64_fallback) << ctx;
    EXPECT_LE(std::abs(int(r1.backward_error.size()) - int(r2.backward_error.size())), 1) << ctx;
    for (std::size_t k = 0; k < std::min(r1.backward_error.size(), r2.backward_error.size()); ++k) {
      const double e1 = r1.backward_error[k], e2 = r2.backward_error[k];
      EXPECT_LE(std::max(e1, e2), 8 * std::min(e1, e2) + r1.tolerance / 8) << ctx << ", step " << k;
    }
    EXPECT_TRUE(r1.converged) << ctx;
    if (r1.escalation_step > 0) ++in_loop;
    // the first column of the two-column solve is the one-column solve's x to refinement accuracy
    const auto x2 = xd.get();
    double dmax = 0, xmax = 0;
    for (std::int64_t i = 0; i < n; ++i) {
      dmax = std::max(dmax, std::abs(x1[std::size_t(i)] - x2[std::size_t(i)]));
      xmax = std::max(xmax, std::abs(x2[std::size_t(i)]));
    }
    EXPECT_LE(dmax, 1e-6 * xmax) << ctx;
  }
  EXPECT_GT(in_loop, 0) << "no shift escalated inside the refinement loop";
}

/// A random SPD system scaled out of fp32's range: A = scale·(random SPD, κ ≤ 9; with shift and
/// rank: G Gᵀ/n of rank `rank` + shift·I), b = 1e3·N(0, 1), and LAPACK dposv's x with its largest
/// magnitude.
struct ScaledSystem {
  std::vector<double> a, b, x;
  double xmax = 0;
};
ScaledSystem scaled_system(std::int64_t n, double scale, double shift = 0.5, std::int64_t rank = -1) {
  ScaledSystem sys{random_spd(n, shift, rank), random_normal(static_cast<std::size_t>(n)), {}, 0.0};
  for (auto& v : sys.a) v *= scale;
  for (auto& v : sys.b) v *= 1e3;
  auto la = sys.a;
  sys.x = sys.b;
  EXPECT_EQ(LAPACKE_dposv(LAPACK_COL_MAJOR, 'L', int(n), 1, la.data(), int(n), sys.x.data(), int(n)), 0);
  for (double v : sys.x) sys.xmax = std::max(sys.xmax, std::abs(v));
  return sys;
}

// Regression: an fp32 solve that overflows gave η = ∞, the next step turned x into NaN, and the
// column maxima dropped NaN, so η = 0 reported a NaN x as converged. Now a non-finite iterate
// stops the fp32 stage (after the escalation, by default) and the fp64 fallback solves it. The
// right-hand side reaches the fp32 solve scaled to a largest entry near √‖A‖∞, so the solve
// overflows only where ‖A⁻¹‖·√‖A‖ passes fp32's range: A = diag(1e38 … 1e-30), b = 1, whose
// scaled solution reaches 9e18 / 1e-30 (x itself up to 1e30).
TEST_F(GpuCholeskyTest, MixedSolveOverflowingFp32SolveFallsBack) {
  gc::GpuCholesky chol(nullptr);
  const std::int64_t n = 300;
  std::vector<double> a(static_cast<std::size_t>(n * n), 0.0), b(static_cast<std::size_t>(n), 1.0), lx(b.size());
  for (std::int64_t i = 0; i < n; ++i) {
    a[i + i * n] = std::pow(10.0, 38.0 - 68.0 * double(i) / double(n - 1));
    lx[i] = 1.0 / a[i + i * n];
  }
  Dev<double> ad(a.size()), bd(b.size()), xd(b.size());
  ad.put(a);
  bd.put(b);
  const double lmax = lx[n - 1];
  ASSERT_GT(lmax, 1e29);
  for (auto mode : {Fp32Mode::tf32, Fp32Mode::tf32x3}) {
    const std::string ctx = mode == Fp32Mode::tf32 ? "1xTF32 (escalates)" : "3xTF32";
    gc::MixedSolveOptions o;
    o.factor_mode = mode;
    const auto r = chol.solve_mixed(ad.p, n, n, bd.p, n, 1, xd.p, n, o);
    EXPECT_TRUE(r.used_fp64_fallback) << ctx;
    EXPECT_EQ(r.status.info, 0) << ctx;
    EXPECT_FALSE(r.status.non_finite) << ctx;
    ASSERT_FALSE(r.backward_error.empty()) << ctx;
    EXPECT_LE(r.backward_error.back(), r.tolerance) << ctx;
    const auto x = xd.get();
    double dmax = 0;
    for (std::int64_t i = 0; i < n; ++i) {
      ASSERT_TRUE(std::isfinite(x[i])) << ctx << " x[" << i << "]";
      dmax = std::max(dmax, std::abs(x[i] - lx[i]));
    }
    EXPECT_LE(dmax, 1e-10 * lmax) << ctx;
  }
}

// Every right-hand side and residual reaches the fp32 solve scaled by a power of two per column
// (its largest entry of S·r near √‖S·A·S‖∞). Regressions: A ~ 1e-36 (x ~ 1e39, beyond fp32) and
// columns of b at 1e-40 (residuals below fp32's range) and 1e300 (beyond it) took the fp64
// fallback, in every mode; scaled to a largest entry of 1 instead, the corrections of A ~ 1e-33
// with κ ≈ 1e5 overflowed fp32 in the TF32 modes (review). Each converges in the fp32 stage to
// LAPACK's x, one and two right-hand sides (our triangular solves and cuBLAS STRSM).
TEST_F(GpuCholeskyTest, MixedSolveScalesEachColumnIntoFp32Range) {
  gc::GpuCholesky chol(nullptr);
  const std::int64_t n = 300;
  struct Case {
    double a_scale;
    std::vector<double> b_scales;
    double shift = 0.5;  // κ ≤ 9; 1e-5 with rank n/2: κ ≈ 3e5
    int max_steps = 4;
  };
  for (const Case& c : {Case{1e-36, {1.0}}, Case{1.0, {1e-40}}, Case{1.0, {1e300}}, Case{1.0, {1e-40, 1e300}},
                        Case{1e-36, {1e-30, 1e30}}, Case{1e-33, {1.0}, 1e-5, 30}, Case{1e33, {1.0, 1e-20}, 1e-5, 30}}) {
    const auto k = static_cast<std::int64_t>(c.b_scales.size());
    const ScaledSystem sys = scaled_system(n, c.a_scale, c.shift, c.shift < 0.5 ? n / 2 : -1);
    std::vector<double> b(static_cast<std::size_t>(n * k)), lx(b.size());
    std::vector<double> colmax(c.b_scales.size(), 0.0);
    for (std::int64_t j = 0; j < k; ++j)
      for (std::int64_t i = 0; i < n; ++i) {
        b[i + j * n] = sys.b[i] * c.b_scales[j];
        lx[i + j * n] = sys.x[i] * c.b_scales[j];
        colmax[j] = std::max(colmax[j], std::abs(lx[i + j * n]));
      }
    Dev<double> ad(sys.a.size()), bd(b.size()), xd(b.size());
    ad.put(sys.a);
    bd.put(b);
    for (auto mode : {Fp32Mode::fp16, Fp32Mode::fp16x3, Fp32Mode::tf32, Fp32Mode::tf32x3}) {
      std::ostringstream ctx;
      ctx << gc::fp32_mode_name(mode) << ", A scaled by " << c.a_scale << ", " << k << " column(s) of b scaled by "
          << c.b_scales.front() << (k > 1 ? " …" : "");
      gc::MixedSolveOptions o;
      o.factor_mode = mode;
      // κ ≈ 3e5: the forward error is about 2κη, so η is asked to reach 4u rather than √n·u (the
      // default let 2κη reach 1.1e-9, and the TF32 modes stopped there in some runs)
      if (c.shift < 0.5) o.tolerance = 4 * 0x1p-53;
      const auto r = chol.solve_mixed(ad.p, n, n, bd.p, n, k, xd.p, n, o);
      EXPECT_TRUE(r.converged) << ctx.str();
      EXPECT_FALSE(r.used_fp64_fallback) << ctx.str();
      EXPECT_LE(r.iterations, c.max_steps) << ctx.str();
      ASSERT_FALSE(r.backward_error.empty()) << ctx.str();
      EXPECT_LE(r.backward_error.back(), r.tolerance) << ctx.str();
      const auto x = xd.get();
      for (std::int64_t j = 0; j < k; ++j) {
        double dmax = 0;
        for (std::int64_t i = 0; i < n; ++i) dmax = std::max(dmax, std::abs(x[i + j * n] - lx[i + j * n]));
        // forward error ≲ 2κη: 1e-10 at κ ≤ 9, 1e-9 at κ ≈ 3e5 (η ≤ 4u; LAPACK's x within 2κu)
        EXPECT_LE(dmax, (c.shift < 0.5 ? 1e-9 : 1e-10) * colmax[j])
            << ctx.str() << ", column " << j << ", " << r.iterations << " steps, last η " << r.backward_error.back()
            << ", ω steps " << r.componentwise_steps << ", GMRES-IR steps " << r.gmres_steps;
      }
    }
  }
}

// The mixed solve does not scan its fp32 factor for NaN/Inf (two passes over the matrix): a
// non-finite entry of A's lower triangle must still never give success. NaN and Inf, in the
// diagonal block of a panel and far below it: no fp32 factor runs, the fp64 fallback reports the
// failure, and without the fallback the status says non-finite.
TEST_F(GpuCholeskyTest, MixedSolveNonFiniteInputIsNeverSuccess) {
  gc::GpuCholesky chol(nullptr);
  const std::int64_t n = 300;
  for (auto [i, j, v] : std::vector<std::tuple<std::int64_t, std::int64_t, double>>{
           {7, 3, std::numeric_limits<double>::quiet_NaN()},
           {250, 10, std::numeric_limits<double>::infinity()},
           {120, 120, -std::numeric_limits<double>::infinity()}}) {
    auto a = random_spd(n, 0.5);
    a[i + j * n] = v;
    Dev<double> ad(a.size()), bd(n), xd(n);
    ad.put(a);
    bd.put(std::vector<double>(n, 1.0));
    const std::string ctx = "A(" + std::to_string(i) + ", " + std::to_string(j) + ") = " + std::to_string(v);
    gc::MixedSolveOptions o;
    o.fallback_fp64 = false;
    const auto r = chol.solve_mixed(ad.p, n, n, bd.p, n, 1, xd.p, n, o);
    EXPECT_FALSE(r.converged) << ctx;
    EXPECT_TRUE(r.status.non_finite) << ctx;
    EXPECT_TRUE(r.backward_error.empty()) << ctx << ": an fp32 stage ran";
    o.fallback_fp64 = true;
    const auto f = chol.solve_mixed(ad.p, n, n, bd.p, n, 1, xd.p, n, o);
    EXPECT_FALSE(f.converged) << ctx;
    EXPECT_TRUE(f.used_fp64_fallback) << ctx;
    EXPECT_TRUE(f.status.info != 0 || f.status.non_finite) << ctx << ": info " << f.status.info;
  }
}

// "x is written only by steps that run": a solve that fails before any step (NaN in A, no fp64
// fallback; not SPD even in fp64) leaves x bit for bit as the caller had it, also where b is tiny
// enough (below 2⁻⁶⁰⁰) to be scaled before the fp32 solve. The scale was once undone on x anyway,
// turning the caller's 42 into 42·2⁻³⁹⁷ (compute-sanitizer initcheck: a read of never-written x).
TEST_F(GpuCholeskyTest, MixedSolveThatRunsNoStepLeavesXAsItWas) {
  gc::GpuCholesky chol(nullptr);
  const std::int64_t n = 200, k = 2;
  const std::vector<double> sentinel(std::size_t(n * k), 42.0);
  std::vector<double> b(std::size_t(n * k), 1e-300);  // column 0 tiny: scaled by 2^397
  for (std::int64_t i = 0; i < n; ++i) b[std::size_t(n + i)] = 1.0;
  struct Case {
    const char* what;
    std::int64_t i, j;
    double v;
    bool fallback;
  };
  for (const Case& c : {Case{"NaN in A, no fallback", 50, 20, std::numeric_limits<double>::quiet_NaN(), false},
                        Case{"not SPD even in fp64, fallback", 120, 120, -1e6, true}}) {
    auto a = random_spd(n, 0.5);
    a[std::size_t(c.i + c.j * n)] = c.v;
    Dev<double> ad(a.size()), bd(b.size()), xd(sentinel.size());
    ad.put(a);
    bd.put(b);
    xd.put(sentinel);
    gc::MixedSolveOptions o;
    o.fallback_fp64 = c.fallback;
    const auto r = chol.solve_mixed(ad.p, n, n, bd.p, n, k, xd.p, n, o);
    EXPECT_FALSE(r.converged) << c.what;
    EXPECT_TRUE(r.backward_error.empty()) << c.what << ": a step ran";
    const auto x = xd.get();
    std::int64_t changed = 0;
    for (std::size_t e = 0; e < x.size(); ++e) changed += std::bit_cast<std::uint64_t>(x[e]) != std::bit_cast<std::uint64_t>(42.0);
    EXPECT_EQ(changed, 0) << c.what << ": entries of x changed, x[0] = " << x[0];
  }
}

// Bad input in the lookahead's mixed solve (3×TF32 at n = 2100: a first panel of 1024 columns and
// more): a NaN or Inf in the first panel's columns or beyond, or an entry beyond fp32, gives no
// fp32 stage at all, and the fp64 fallback's answer.
TEST_F(GpuCholeskyTest, MixedSolveBadInputSkipsTheFp32Stage) {
  gc::GpuCholesky chol(nullptr);
  const std::int64_t n = 2100;
  struct Case {
    std::int64_t i, j;
    double v;
    bool finite;
  };
  for (const Case c :
       {Case{7, 3, std::numeric_limits<double>::quiet_NaN(), false},
        Case{1500, 1200, std::numeric_limits<double>::infinity(), false}, Case{1800, 1800, 1e39, true}}) {
    auto a = random_spd(n, 0.5);
    a[c.i + c.j * n] = c.v;
    a[c.j + c.i * n] = c.v;
    Dev<double> ad(a.size()), bd(n), xd(n);
    ad.put(a);
    bd.put(std::vector<double>(n, 1.0));
    const std::string ctx = "A(" + std::to_string(c.i) + ", " + std::to_string(c.j) + ") = " + std::to_string(c.v);
    gc::MixedSolveOptions o;
    o.factor_mode = Fp32Mode::tf32x3;
    o.fallback_fp64 = false;
    const auto r = chol.solve_mixed(ad.p, n, n, bd.p, n, 1, xd.p, n, o);
    EXPECT_FALSE(r.converged) << ctx;
    EXPECT_EQ(r.status.non_finite, !c.finite) << ctx;
    EXPECT_TRUE(r.backward_error.empty()) << ctx << ": an fp32 stage ran";
    EXPECT_FALSE(r.escalated) << ctx;
    o.fallback_fp64 = true;
    const auto f = chol.solve_mixed(ad.p, n, n, bd.p, n, 1, xd.p, n, o);
    EXPECT_TRUE(f.used_fp64_fallback) << ctx;
    if (c.finite) {  // A with 1e39 on the diagonal is SPD in fp64
      EXPECT_EQ(f.status.info, 0) << ctx;
      ASSERT_FALSE(f.backward_error.empty()) << ctx;
      EXPECT_LT(f.backward_error.back(), 1e-12) << ctx;
    } else {
      EXPECT_FALSE(f.converged) << ctx;
      EXPECT_TRUE(f.status.info != 0 || f.status.non_finite) << ctx << ": info " << f.status.info;
    }
  }
}

// The FP16 modes (the default) demote S·A·S and S·r (S = diag(2^e), s_i²·a_ii ∈ [0.5, 2)) and
// promote S·d: the same systems, beyond fp32 in A (entries ~1e-36 or ~1e45) and in x (~1e39 and
// ~1e-42), stay in the fp32 stage and converge without the fp64 fallback.
TEST_F(GpuCholeskyTest, MixedSolveFp16ModesEquilibrateAwayFp32Range) {
  gc::GpuCholesky chol(nullptr);
  const std::int64_t n = 300;
  for (double scale : {1e-36, 1e45}) {
    const ScaledSystem sys = scaled_system(n, scale);
    Dev<double> ad(sys.a.size()), bd(sys.b.size()), xd(sys.b.size());
    ad.put(sys.a);
    bd.put(sys.b);
    const auto& lx = sys.x;
    const double lmax = sys.xmax;
    ASSERT_TRUE(lmax > 1e39 || lmax < 1e-38);  // x beyond fp32's normal range
    for (auto mode : {Fp32Mode::fp16, Fp32Mode::fp16x3}) {
      const std::string ctx = std::string(gc::fp32_mode_name(mode)) + " scale " + std::to_string(scale);
      gc::MixedSolveOptions o;
      o.factor_mode = mode;
      const auto r = chol.solve_mixed(ad.p, n, n, bd.p, n, 1, xd.p, n, o);
      EXPECT_TRUE(r.converged) << ctx;
      EXPECT_FALSE(r.used_fp64_fallback) << ctx;
      EXPECT_FALSE(r.escalated) << ctx;
      EXPECT_LE(r.iterations, 3) << ctx;
      ASSERT_FALSE(r.backward_error.empty()) << ctx;
      EXPECT_LE(r.backward_error.back(), r.tolerance) << ctx;
      const auto x = xd.get();
      double dmax = 0;
      for (std::int64_t i = 0; i < n; ++i) dmax = std::max(dmax, std::abs(x[i] - lx[i]));
      EXPECT_LE(dmax, 1e-10 * lmax) << ctx;
    }
  }
}

// κ ≈ 3e11 (rank n/2 plus 1e-11·I): classic refinement with the 3×FP16 factor stagnates near
// η ≈ 1e-9 and falls back; GMRES-IR (the default) converges without the fallback (H200: two
// steps, up to 100 FGMRES iterations), with one right-hand side (our triangular solves) and two
// (cuBLAS STRSM). η is recomputed on the host. (No forward comparison with LAPACK: in ∞-norms
// κ·η reaches ~0.5 here, for LAPACK's x as for ours.)
TEST_F(GpuCholeskyTest, MixedSolveGmresIrBeyondClassicRefinement) {
  gc::GpuCholesky chol(nullptr);
  const std::int64_t n = 600;
  const auto a = random_spd(n, 1e-11, n / 2);
  for (std::int64_t k : {1, 2}) {
    const auto b = random_normal(static_cast<std::size_t>(n * k));
    Dev<double> ad(a.size()), bd(b.size()), xd(b.size());
    ad.put(a);
    bd.put(b);
    const std::string ctx = "nrhs=" + std::to_string(k);
    gc::MixedSolveOptions o;
    const auto r = chol.solve_mixed(ad.p, n, n, bd.p, n, k, xd.p, n, o);
    print_solve(ctx, r);
    EXPECT_TRUE(r.converged) << ctx;
    EXPECT_FALSE(r.used_fp64_fallback) << ctx;
    EXPECT_EQ(r.factor_mode, Fp32Mode::fp16x3) << ctx;
    EXPECT_GE(r.gmres_steps, 1) << ctx;
    EXPECT_GE(r.gmres_iterations, r.gmres_steps) << ctx;
    EXPECT_LE(r.gmres_iterations, r.gmres_steps * int(k) * 50) << ctx;
    ASSERT_FALSE(r.backward_error.empty()) << ctx;
    EXPECT_LE(r.backward_error.back(), r.tolerance) << ctx;
    // η on the host: max_c ‖b − A x‖∞ / (‖A‖∞ ‖x‖∞ + ‖b‖∞)
    const auto x = xd.get();
    double anorm = 0;
    for (std::int64_t i = 0; i < n; ++i) {
      double row = 0;
      for (std::int64_t j = 0; j < n; ++j) row += std::abs(a[i + j * n]);
      anorm = std::max(anorm, row);
    }
    for (std::int64_t c = 0; c < k; ++c) {
      double rmax = 0, xmax = 0, bmax = 0;
      for (std::int64_t i = 0; i < n; ++i) {
        long double ax = 0;
        for (std::int64_t j = 0; j < n; ++j) ax += static_cast<long double>(a[i + j * n]) * x[j + c * n];
        rmax = std::max(rmax, std::abs(double(b[i + c * n] - ax)));
        xmax = std::max(xmax, std::abs(x[i + c * n]));
        bmax = std::max(bmax, std::abs(b[i + c * n]));
      }
      EXPECT_LE(rmax / (anorm * xmax + bmax), 2 * r.tolerance) << ctx << " column " << c;
    }
    o.gmres = false;
    const auto r2 = chol.solve_mixed(ad.p, n, n, bd.p, n, k, xd.p, n, o);
    EXPECT_TRUE(r2.fp32_status.ok()) << ctx;  // the factor works; its refinement does not
    EXPECT_EQ(r2.gmres_steps, 0) << ctx;
    EXPECT_TRUE(r2.used_fp64_fallback) << ctx;
    EXPECT_EQ(r2.status.info, 0) << ctx;
    EXPECT_LE(r2.backward_error.back(), r2.tolerance) << ctx;
  }
}

// SPD in fp64 but not in fp32: 2×2 blocks [1, 1 − 2⁻³⁰; 1 − 2⁻³⁰, 1] (κ ≈ 2³¹) whose off-diagonal
// rounds to 1 in fp32 and fp16, so the second pivot is exactly 0: both the 1×FP16 factor and
// its 3×FP16 escalation report info = 2, and cuSOLVER's fp64 factor solves it.
TEST_F(GpuCholeskyTest, MixedSolveFallsBackWhenFp32CannotFactor) {
  gc::GpuCholesky chol(nullptr);
  const std::int64_t n = 600;
  std::vector<double> a(static_cast<std::size_t>(n * n), 0.0);
  for (std::int64_t i = 0; i < n; i += 2) {
    a[i + i * n] = a[(i + 1) + (i + 1) * n] = 1.0;
    a[(i + 1) + i * n] = a[i + (i + 1) * n] = 1.0 - std::ldexp(1.0, -30);
  }
  const auto b = random_normal(static_cast<std::size_t>(n));
  Dev<double> ad(a.size()), bd(b.size()), xd(b.size());
  ad.put(a);
  bd.put(b);
  const auto r = chol.solve_mixed(ad.p, n, n, bd.p, n, 1, xd.p, n);
  EXPECT_EQ(r.fp32_status.info, 2);
  EXPECT_TRUE(r.escalated);
  EXPECT_EQ(r.escalation_step, -1);  // no η with the three-product factor
  EXPECT_EQ(r.factor_mode, Fp32Mode::fp16x3);
  EXPECT_EQ(r.gmres_steps, 0);
  EXPECT_TRUE(r.used_fp64_fallback);
  EXPECT_EQ(r.status.info, 0) << r.status.message();
  ASSERT_EQ(r.backward_error.size(), 1u);
  EXPECT_LE(r.backward_error.back(), r.tolerance);
}

TEST_F(GpuCholeskyTest, NotEnoughMemoryIsAClearError) {
  gc::GpuCholesky chol(nullptr);
  const std::int64_t n = 1 << 20;  // 3×TF32 workspace of 3·n·n/2 floats: 6 TiB
  Dev<float> d(1);
  CholeskyOptions o;
  o.fp32_mode = Fp32Mode::tf32x3;
  try {
    (void)chol.factor(d.p, n, n, o);
    FAIL() << "expected CudaError";
  } catch (const gc::CudaError& e) {
    EXPECT_NE(std::string(e.what()).find("GiB free"), std::string::npos) << e.what();
  }
}

}  // namespace

#else
TEST(GpuCholeskyTest, BuiltWithoutCuda) { GTEST_SKIP() << "Gemflow was built without CUDA: GPU Cholesky not built"; }
#endif
