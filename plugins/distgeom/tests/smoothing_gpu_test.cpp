// GPU triangle smoothing against the CPU reference (gemflow/distgeom/smoothing.hpp).
// Label gpu: every test skips with a message when no CUDA device is present.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>
#include <span>
#include <string>
#include <vector>

#include "gemflow/distgeom/smoothing.hpp"

#if GEMFLOW_DISTGEOM_HAVE_CUDA
#include <cuda_runtime.h>

#include <gemflow/cuda/buffer.hpp>

#include "gemflow/distgeom/smoothing_cuda.hpp"

namespace gd = gemflow::distgeom;
namespace gc = gemflow::distgeom::cuda;

namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

#define CUDA_OK(call) ASSERT_EQ((call), cudaSuccess) << #call

std::uint64_t fresh_seed() {
  std::random_device rd;
  return (static_cast<std::uint64_t>(rd()) << 32) ^ rd();
}

struct Bounds {
  std::size_t n = 0;
  std::vector<double> lower, upper;
};

/// Random consistent bounds from random points: 30% of pairs d(1∓0.1r), the rest
/// L = min(d, 2.5), U = box diagonal (5% of those +∞). `dyadic`: multiples of 2⁻⁸ (L rounded
/// down, U up), so that every path sum is exact in fp32 and fp64.
Bounds random_bounds(std::size_t n, std::uint64_t seed, bool dyadic) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> uni(0.0, 1.0);
  const double box = 2.0 * std::cbrt(double(n)) + 4.0, diag = box * std::sqrt(3.0);
  std::vector<double> xyz(3 * n);
  for (auto& x : xyz) x = box * uni(rng);
  Bounds b{n, std::vector<double>(n * n, 0.0), std::vector<double>(n * n, 0.0)};
  for (std::size_t i = 0; i < n; ++i)
    for (std::size_t j = i + 1; j < n; ++j) {
      double d2 = 0;
      for (int c = 0; c < 3; ++c) d2 += std::pow(xyz[3 * i + c] - xyz[3 * j + c], 2);
      const double d = std::sqrt(d2);
      double lo, up;
      if (uni(rng) < 0.3) {
        lo = d * (1 - 0.1 * uni(rng));
        up = d * (1 + 0.1 * uni(rng));
      } else {
        lo = std::min(d, 2.5);
        up = uni(rng) < 0.05 ? kInf : diag;
      }
      if (dyadic) {
        lo = std::floor(lo * 256) / 256;
        if (up != kInf) up = std::ceil(up * 256) / 256;
      }
      b.lower[i * n + j] = b.lower[j * n + i] = lo;
      b.upper[i * n + j] = b.upper[j * n + i] = up;
    }
  return b;
}

/// Plants a contradiction: L_ab = U_ac + U_cb + excess for a random c ∉ {a, b} (an infinite
/// U_ac or U_cb is first set to 1000 Å, above every distance here), U_ab ≥ L_ab. n ≥ 3.
void plant_contradiction(Bounds& in, std::size_t a, std::size_t b, double excess, std::mt19937_64& rng) {
  const std::size_t n = in.n;
  std::size_t c = rng() % n;
  while (c == a || c == b) c = rng() % n;
  for (std::size_t x : {a, b})
    if (!std::isfinite(in.upper[x * n + c])) in.upper[x * n + c] = in.upper[c * n + x] = 1000.0;
  const double l = in.upper[a * n + c] + in.upper[c * n + b] + excess;
  in.lower[a * n + b] = in.lower[b * n + a] = l;
  in.upper[a * n + b] = in.upper[b * n + a] = std::max(in.upper[a * n + b], l);
}

double max_finite(const std::vector<double>& v) {
  double m = 0;
  for (double x : v)
    if (std::isfinite(x)) m = std::max(m, x);
  return m;
}

/// CPU closure (fp64): the reference for n ≤ 500, the blocked CPU path above (same closure,
/// bit-identical on dyadic input, within rounding otherwise).
gd::SmoothingReport cpu_closure(Bounds& b) {
  if (b.n <= 500) return gd::smooth_bounds_reference(b.lower, b.upper, b.n);
  return gd::smooth_bounds(std::span<double>(b.lower), std::span<double>(b.upper), b.n);
}

template <class T>
std::vector<T> convert(const std::vector<double>& v) {
  return std::vector<T>(v.begin(), v.end());
}

/// Device copy of a matrix set with a NaN-poisoned guard zone after it (checks out-of-bounds
/// writes); the whole allocation is poisoned before the data is copied in.
template <class T>
class DeviceBounds {
 public:
  static constexpr std::size_t kGuard = 4096;
  explicit DeviceBounds(const std::vector<double>& lower, const std::vector<double>& upper)
      : count_(lower.size()), lbuf_(count_ + kGuard), ubuf_(count_ + kGuard), l_(lbuf_.data()), u_(ubuf_.data()) {
    const std::size_t bytes = (count_ + kGuard) * sizeof(T);
    const std::vector<T> nan(count_ + kGuard, std::numeric_limits<T>::quiet_NaN());
    EXPECT_EQ(cudaMemcpy(l_, nan.data(), bytes, cudaMemcpyHostToDevice), cudaSuccess);
    EXPECT_EQ(cudaMemcpy(u_, nan.data(), bytes, cudaMemcpyHostToDevice), cudaSuccess);
    const auto lt = convert<T>(lower), ut = convert<T>(upper);
    EXPECT_EQ(cudaMemcpy(l_, lt.data(), count_ * sizeof(T), cudaMemcpyHostToDevice), cudaSuccess);
    EXPECT_EQ(cudaMemcpy(u_, ut.data(), count_ * sizeof(T), cudaMemcpyHostToDevice), cudaSuccess);
  }
  T* lower() { return l_; }
  T* upper() { return u_; }
  /// The device data as stored (guard zone excluded).
  std::vector<T> raw() const {
    std::vector<T> l(2 * count_);
    EXPECT_EQ(cudaMemcpy(l.data(), l_, count_ * sizeof(T), cudaMemcpyDeviceToHost), cudaSuccess);
    EXPECT_EQ(cudaMemcpy(l.data() + count_, u_, count_ * sizeof(T), cudaMemcpyDeviceToHost), cudaSuccess);
    return l;
  }
  /// Copies back; fails the test when the guard zone was written or a NaN is in the data.
  void fetch(std::vector<double>& lower, std::vector<double>& upper) {
    std::vector<T> l(count_ + kGuard), u(count_ + kGuard);
    ASSERT_EQ(cudaMemcpy(l.data(), l_, l.size() * sizeof(T), cudaMemcpyDeviceToHost), cudaSuccess);
    ASSERT_EQ(cudaMemcpy(u.data(), u_, u.size() * sizeof(T), cudaMemcpyDeviceToHost), cudaSuccess);
    std::size_t guard_written = 0, nan_inside = 0;
    for (std::size_t e = count_; e < count_ + kGuard; ++e) guard_written += !std::isnan(l[e]) || !std::isnan(u[e]);
    for (std::size_t e = 0; e < count_; ++e) nan_inside += std::isnan(l[e]) || std::isnan(u[e]);
    EXPECT_EQ(guard_written, 0u) << "elements written past the end of the matrices";
    EXPECT_EQ(nan_inside, 0u) << "NaN in the smoothed bounds";
    lower.assign(l.begin(), l.begin() + static_cast<std::ptrdiff_t>(count_));
    upper.assign(u.begin(), u.begin() + static_cast<std::ptrdiff_t>(count_));
  }

 private:
  std::size_t count_;
  gemflow::cuda::DeviceBuffer<T> lbuf_, ubuf_;
  T* l_;
  T* u_;
};

/// Smooths one matrix on the device (validate, closure, consistency), returns the closure.
template <class T>
gc::ConsistencyReport gpu_closure(const Bounds& in, Bounds& out, int block, double tol = 1e-4) {
  DeviceBounds<T> d(in.lower, in.upper);
  gc::Control control;
  control.block = block;
  gc::validate_bounds_device(d.lower(), d.upper(), in.n, tol, nullptr);
  EXPECT_TRUE(gc::smooth_bounds_device(d.lower(), d.upper(), in.n, nullptr, control));
  const auto report = gc::check_consistency_device(d.lower(), d.upper(), in.n, tol, nullptr);
  out.n = in.n;
  d.fetch(out.lower, out.upper);
  return report;
}

struct Diff {
  double max_abs = 0;
  std::size_t mismatches = 0, first = 0;
};

Diff compare(const std::vector<double>& a, const std::vector<double>& b) {
  Diff d;
  for (std::size_t e = 0; e < a.size(); ++e) {
    if (a[e] == b[e]) continue;  // equal, or both the same infinity
    if (d.mismatches++ == 0) d.first = e;
    d.max_abs = std::max(d.max_abs, std::abs(a[e] - b[e]));
  }
  return d;
}

class GpuSmoothing : public ::testing::Test {
 protected:
  void SetUp() override {
    if (gc::device_count() == 0) GTEST_SKIP() << "no CUDA device: GPU smoothing tests skipped";
  }
};

const std::size_t kSizes[] = {1, 2, 3, 31, 64, 65, 127, 500, 1000, 2049};

// Multiples of 2⁻⁸: every sum is exact, so every path, precision and block size must give the
// CPU closure bit for bit (this checks indexing, tails, phases and the mirror exactly).
TEST_F(GpuSmoothing, BitIdenticalToCpuOnDyadicBounds) {
  for (std::size_t n : kSizes) {
    const auto seed = fresh_seed();
    SCOPED_TRACE("n = " + std::to_string(n) + ", seed = " + std::to_string(seed));
    const Bounds in = random_bounds(n, seed, true);
    Bounds ref = in;
    const auto cpu = cpu_closure(ref);
    ASSERT_TRUE(cpu.consistent);
    struct Run {
      const char* name;
      int block;
      bool fp32;
    };
    for (const Run run : {Run{"fp64 B=64", 64, false}, Run{"fp32 B=64", 64, true}, Run{"fp32 B=128", 128, true}}) {
      SCOPED_TRACE(run.name);
      Bounds out;
      const auto rep = run.fp32 ? gpu_closure<float>(in, out, run.block) : gpu_closure<double>(in, out, run.block);
      const Diff dl = compare(out.lower, ref.lower), du = compare(out.upper, ref.upper);
      EXPECT_EQ(du.mismatches, 0u) << "first U mismatch at (" << du.first / n << ", " << du.first % n
                                   << "), max |diff| " << du.max_abs;
      EXPECT_EQ(dl.mismatches, 0u) << "first L mismatch at (" << dl.first / n << ", " << dl.first % n
                                   << "), max |diff| " << dl.max_abs;
      EXPECT_TRUE(rep.consistent);
    }
  }
}

// General real-valued bounds: agreement within the documented rounding bound
// 6·n·u·max(U) (u = 2⁻⁵³ fp64, 2⁻²⁴ fp32, plus one rounding of the input to fp32).
TEST_F(GpuSmoothing, WithinRoundingBoundOnRandomBounds) {
  for (std::size_t n : kSizes) {
    const auto seed = fresh_seed();
    SCOPED_TRACE("n = " + std::to_string(n) + ", seed = " + std::to_string(seed));
    const Bounds in = random_bounds(n, seed, false);
    Bounds ref = in;
    const auto cpu = cpu_closure(ref);
    ASSERT_TRUE(cpu.consistent);
    const double m = max_finite(in.upper);
    const double tol64 = 6.0 * double(n) * std::ldexp(1.0, -53) * m;
    const double tol32 = (6.0 * double(n) + 1.0) * std::ldexp(1.0, -24) * m;
    Bounds out;
    gpu_closure<double>(in, out, 0);
    Diff dl = compare(out.lower, ref.lower), du = compare(out.upper, ref.upper);
    EXPECT_LE(std::max(dl.max_abs, du.max_abs), tol64) << "fp64";
    std::printf("[ n = %zu ] fp64 max |GPU − CPU| = %.3g Å (bound %.3g), %zu/%zu elements differ\n", n,
                std::max(dl.max_abs, du.max_abs), tol64, dl.mismatches + du.mismatches, 2 * n * n);
    for (int block : {64, 128}) {
      gpu_closure<float>(in, out, block);
      dl = compare(out.lower, ref.lower);
      du = compare(out.upper, ref.upper);
      EXPECT_LE(std::max(dl.max_abs, du.max_abs), tol32) << "fp32 B=" << block;
      std::printf("[ n = %zu ] fp32 B=%d max |GPU − CPU| = %.3g Å (bound %.3g)\n", n, block,
                  std::max(dl.max_abs, du.max_abs), tol32);
    }
  }
}

/// The exact closure for inconsistent input: smooth_bounds() (blocked CPU path). On such input
/// smooth_bounds_reference() currently differs from smooth_bounds_doubled_graph_oracle() in a
/// few L entries (dyadic input, so not rounding), while smooth_bounds() equals the oracle.
gd::SmoothingReport exact_closure(Bounds& b) {
  return gd::smooth_bounds(std::span<double>(b.lower), std::span<double>(b.upper), b.n);
}

// A planted contradiction: L_ab = U_ac + U_cb + 2 Å. Same first pair, count and values.
TEST_F(GpuSmoothing, InconsistentBoundsGiveTheCpuPair) {
  for (std::size_t n : {std::size_t(3), std::size_t(65), std::size_t(500), std::size_t(1000)}) {
    const auto seed = fresh_seed();
    SCOPED_TRACE("n = " + std::to_string(n) + ", seed = " + std::to_string(seed));
    Bounds in = random_bounds(n, seed, true);
    std::mt19937_64 rng(seed + 1);
    std::size_t a = rng() % n, b = rng() % n;
    while (b == a) b = rng() % n;
    plant_contradiction(in, a, b, 2.0, rng);
    Bounds ref = in;
    const auto cpu = exact_closure(ref);
    ASSERT_FALSE(cpu.consistent);
    for (int prec = 0; prec < 2; ++prec) {
      SCOPED_TRACE(prec == 0 ? "fp64" : "fp32");
      Bounds out;
      const auto rep = prec == 0 ? gpu_closure<double>(in, out, 0) : gpu_closure<float>(in, out, 0);
      EXPECT_FALSE(rep.consistent);
      EXPECT_EQ(rep.first_i, cpu.i);
      EXPECT_EQ(rep.first_j, cpu.j);
      EXPECT_EQ(rep.first_lower, cpu.lower);
      EXPECT_EQ(rep.first_upper, cpu.upper);
      EXPECT_EQ(rep.inconsistent_pairs, cpu.inconsistent_pairs);
      EXPECT_EQ(compare(out.lower, ref.lower).mismatches, 0u);
      EXPECT_EQ(compare(out.upper, ref.upper).mismatches, 0u);
    }
  }
}

// Invalid input is rejected before any smoothing kernel runs (the device data is unchanged),
// with the pair and kind that the CPU check_bounds() reports.
TEST_F(GpuSmoothing, InvalidInputRejectedBeforeLaunch) {
  const std::size_t n = 70;
  const Bounds good = random_bounds(n, fresh_seed(), true);
  struct Case {
    const char* name;
    std::size_t i, j;
    double lower, upper;
    bool symmetric;
  };
  const Case cases[] = {
      {"NaN lower", 9, 41, std::numeric_limits<double>::quiet_NaN(), 5.0, true},
      {"NaN upper", 41, 9, 1.0, std::numeric_limits<double>::quiet_NaN(), false},
      {"negative", 3, 60, -0.5, 5.0, true},
      {"L > U", 12, 13, 6.0, 5.0, true},
      {"infinite lower", 50, 2, kInf, kInf, true},
      {"asymmetric", 20, 30, 1.0, 7.0, false},
      {"diagonal", 33, 33, 0.0, 1.0, true},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    Bounds in = good;
    in.lower[c.i * n + c.j] = c.lower;
    in.upper[c.i * n + c.j] = c.upper;
    if (c.symmetric) {
      in.lower[c.j * n + c.i] = c.lower;
      in.upper[c.j * n + c.i] = c.upper;
    }
    const auto expected = gd::check_bounds(std::span<const double>(in.lower), std::span<const double>(in.upper), n);
    ASSERT_TRUE(expected.has_value());
    for (int prec = 0; prec < 2; ++prec) {
      auto run = [&](auto tag) {
        using T = decltype(tag);
        DeviceBounds<T> d(in.lower, in.upper);
        try {
          gc::validate_bounds_device(d.lower(), d.upper(), n, gd::kDefaultSmoothingTolerance, nullptr);
          ADD_FAILURE() << "not rejected";
        } catch (const gc::InvalidBounds& e) {
          EXPECT_EQ(e.defect.kind, expected->kind) << e.what();
          EXPECT_EQ(e.defect.i, expected->i) << e.what();
          EXPECT_EQ(e.defect.j, expected->j) << e.what();
          EXPECT_NE(
              std::string(e.what()).find("(" + std::to_string(expected->i) + ", " + std::to_string(expected->j) + ")"),
              std::string::npos)
              << e.what();
        }
        std::vector<T> expect = convert<T>(in.lower), eu = convert<T>(in.upper);
        expect.insert(expect.end(), eu.begin(), eu.end());
        const std::vector<T> got = d.raw();
        EXPECT_EQ(std::memcmp(got.data(), expect.data(), got.size() * sizeof(T)), 0)
            << "device data changed by a rejected call";
      };
      if (prec == 0) run(double{});
      else run(float{});
    }
    // The host entry point validates before it smooths and leaves the arrays unchanged.
    Bounds host = in;
    gc::HostOptions o;
    EXPECT_THROW(gc::smooth_bounds_cuda(host.lower, host.upper, n, nullptr, o), gc::InvalidBounds);
    EXPECT_EQ(std::memcmp(host.lower.data(), in.lower.data(), n * n * sizeof(double)), 0);
  }
}

// Batched closure: bit-identical to the fp64 reference (same pivot order) on real-valued
// consistent bounds, equal to the single-matrix GPU path on dyadic bounds, every kernel variant
// (registers n ≤ 32/64/128, shared memory, global memory).
TEST_F(GpuSmoothing, BatchedMatchesReferenceAndSingleMatrixPath) {
  for (std::size_t n : {1, 5, 32, 33, 64, 65, 100, 128, 129, 200, 256, 300, 512}) {
    for (const auto method : {gc::BatchedMethod::Auto, gc::BatchedMethod::PerBlock, gc::BatchedMethod::Blocked}) {
      const std::size_t batch = 5;
      SCOPED_TRACE(std::string("method ") + gc::to_string(method));
      const auto seed = fresh_seed();
      SCOPED_TRACE("n = " + std::to_string(n) + ", seed = " + std::to_string(seed));
      for (bool dyadic : {false, true}) {
        std::vector<Bounds> mats;
        Bounds all{n, {}, {}};
        for (std::size_t b = 0; b < batch; ++b) {
          mats.push_back(random_bounds(n, seed + b, dyadic));
          all.lower.insert(all.lower.end(), mats.back().lower.begin(), mats.back().lower.end());
          all.upper.insert(all.upper.end(), mats.back().upper.begin(), mats.back().upper.end());
        }
        for (int prec = 0; prec < 2; ++prec) {
          if (prec == 1 && !dyadic) continue;  // fp32 vs fp64 reference: exact only when dyadic
          SCOPED_TRACE(std::string(prec == 0 ? "fp64" : "fp32") + (dyadic ? " dyadic" : ""));
          Bounds out;
          std::vector<gc::ConsistencyReport> reps;
          auto run = [&](auto tag) {
            using T = decltype(tag);
            DeviceBounds<T> d(all.lower, all.upper);
            gc::validate_bounds_batched_device(d.lower(), d.upper(), n, batch, 1e-4, nullptr);
            gc::smooth_bounds_batched_device(d.lower(), d.upper(), n, batch, nullptr, method);
            reps = gc::check_consistency_batched_device(d.lower(), d.upper(), n, batch, 1e-4, nullptr);
            d.fetch(out.lower, out.upper);
          };
          if (prec == 0) run(double{});
          else run(float{});
          ASSERT_EQ(reps.size(), batch);
          for (std::size_t b = 0; b < batch; ++b) {
            Bounds ref = mats[b];
            gd::smooth_bounds_reference(ref.lower, ref.upper, n);
            const std::vector<double> gl(out.lower.begin() + b * n * n, out.lower.begin() + (b + 1) * n * n);
            const std::vector<double> gu(out.upper.begin() + b * n * n, out.upper.begin() + (b + 1) * n * n);
            // The per-block kernels take the pivots in the reference's order: bit for bit. The
            // blocked method is the single-matrix algorithm: bit for bit equal to that path, and
            // within its rounding bound 6·n·u·max(U) of the reference (equal on dyadic bounds).
            const bool blocked = method == gc::BatchedMethod::Blocked ||
                                 (method == gc::BatchedMethod::Auto &&
                                  gc::batched_method_for(n, prec == 0 ? gc::Precision::fp64 : gc::Precision::fp32) ==
                                      gc::BatchedMethod::Blocked);
            const Diff dl = compare(gl, ref.lower), du = compare(gu, ref.upper);
            if (!blocked || dyadic) {
              EXPECT_EQ(dl.mismatches, 0u) << "matrix " << b << " L";
              EXPECT_EQ(du.mismatches, 0u) << "matrix " << b << " U";
            } else {
              const double bound = 6.0 * double(n) * std::ldexp(1.0, -53) * max_finite(mats[b].upper);
              EXPECT_LE(dl.max_abs, bound) << "matrix " << b << " L";
              EXPECT_LE(du.max_abs, bound) << "matrix " << b << " U";
            }
            EXPECT_TRUE(reps[b].consistent);
            if (dyadic || blocked) {
              Bounds single;
              if (prec == 0) gpu_closure<double>(mats[b], single, 64);
              else gpu_closure<float>(mats[b], single, 64);
              EXPECT_EQ(compare(gl, single.lower).mismatches, 0u) << "matrix " << b;
              EXPECT_EQ(compare(gu, single.upper).mismatches, 0u) << "matrix " << b;
            }
          }
        }
      }
    }
  }
}

// Lower bounds stored as −0 (e.g. from 0·(−1) upstream) on unconstrained atoms (U = +∞ to
// everyone): every candidate L_ik − U_kj for such a pair is negative or −∞, so the closure
// must keep L = 0. Guards every min/max the kernels may use: with a signed-integer compare of
// the bit patterns (a variant measured for fp64) −0 orders below every negative number, and
// this test caught exactly that in the batched global-memory kernel.
TEST_F(GpuSmoothing, NegativeZeroLowerBoundsOfUnconstrainedAtomsStayZero) {
  for (std::size_t n : {3, 33, 65, 130, 500}) {
    const auto seed = fresh_seed();
    SCOPED_TRACE("n = " + std::to_string(n) + ", seed = " + std::to_string(seed));
    Bounds in = random_bounds(n, seed, true);
    for (std::size_t a = 0; a < n; a += 3)  // every third atom knows nothing
      for (std::size_t j = 0; j < n; ++j) {
        if (j == a) continue;
        in.lower[a * n + j] = in.lower[j * n + a] = -0.0;
        in.upper[a * n + j] = in.upper[j * n + a] = kInf;
      }
    Bounds ref = in;
    ASSERT_TRUE(cpu_closure(ref).consistent);
    const auto check = [&](const std::vector<double>& lower, const std::vector<double>& upper, const char* what) {
      std::size_t negative = 0;
      for (double x : lower) negative += std::signbit(x) && x != 0.0 ? 1 : 0;
      EXPECT_EQ(negative, 0u) << what << ": negative lower bounds";
      EXPECT_EQ(compare(lower, ref.lower).mismatches, 0u) << what << " L";
      EXPECT_EQ(compare(upper, ref.upper).mismatches, 0u) << what << " U";
    };
    Bounds out;
    gpu_closure<double>(in, out, 64);
    check(out.lower, out.upper, "fp64");
    gpu_closure<float>(in, out, 64);
    check(out.lower, out.upper, "fp32");
    if (n <= 256) {
      Bounds two{n, in.lower, in.upper};
      two.lower.insert(two.lower.end(), in.lower.begin(), in.lower.end());
      two.upper.insert(two.upper.end(), in.upper.begin(), in.upper.end());
      DeviceBounds<double> d(two.lower, two.upper);
      gc::smooth_bounds_batched_device(d.lower(), d.upper(), n, 2, nullptr);
      Bounds got;
      d.fetch(got.lower, got.upper);
      for (std::size_t b = 0; b < 2; ++b)
        check(std::vector<double>(got.lower.begin() + b * n * n, got.lower.begin() + (b + 1) * n * n),
              std::vector<double>(got.upper.begin() + b * n * n, got.upper.begin() + (b + 1) * n * n), "batched fp64");
    }
  }
}

// Host entry point: results, inconsistency report, cancellation and progress.
TEST_F(GpuSmoothing, HostEntryPoint) {
  const std::size_t n = 300;
  const auto seed = fresh_seed();
  SCOPED_TRACE("seed = " + std::to_string(seed));
  Bounds in = random_bounds(n, seed, true);
  std::mt19937_64 rng(seed);
  plant_contradiction(in, 7, 250, 1.0, rng);
  Bounds ref = in;
  const auto cpu = exact_closure(ref);
  ASSERT_FALSE(cpu.consistent);
  for (auto prec : {gc::Precision::fp64, gc::Precision::fp32}) {
    Bounds b = in;
    gc::HostOptions o;
    o.precision = prec;
    std::vector<double> fractions;
    o.control.chunk_ms = 1e-6;  // one pivot block per chunk
    o.control.block = 64;
    o.control.progress = [&](double f) { fractions.push_back(f); };
    const auto r = gc::smooth_bounds_cuda(b.lower, b.upper, n, nullptr, o);
    EXPECT_FALSE(r.cancelled);
    EXPECT_FALSE(r.consistency.consistent);
    EXPECT_EQ(r.consistency.first_i, cpu.i);
    EXPECT_EQ(r.consistency.first_j, cpu.j);
    EXPECT_EQ(r.consistency.inconsistent_pairs, cpu.inconsistent_pairs);
    EXPECT_EQ(compare(b.lower, ref.lower).mismatches, 0u);
    EXPECT_EQ(compare(b.upper, ref.upper).mismatches, 0u);
    ASSERT_FALSE(fractions.empty());
    EXPECT_TRUE(std::is_sorted(fractions.begin(), fractions.end()));
    EXPECT_EQ(fractions.back(), 1.0);

    Bounds c = in;
    int polls = 0;
    o.control.progress = nullptr;
    o.control.cancelled = [&] { return ++polls >= 2; };
    const auto rc = gc::smooth_bounds_cuda(c.lower, c.upper, n, nullptr, o);
    EXPECT_TRUE(rc.cancelled);
    EXPECT_EQ(std::memcmp(c.lower.data(), in.lower.data(), n * n * sizeof(double)), 0);
  }
}

// The closure left on the device (a device-resident value) is the host entry point's bit for
// bit, with the same report; the changed pairs are those the node counts on the host; the input
// is not touched. Random (not dyadic) bounds: the same kernels on the same data, not exact sums.
TEST_F(GpuSmoothing, ResidentClosureEqualsTheHostEntryPoint) {
  for (std::size_t n : {std::size_t{1}, std::size_t{2}, std::size_t{65}, std::size_t{300}, std::size_t{1001}})
    for (bool contradiction : {false, true})
      for (auto prec : {gc::Precision::fp64, gc::Precision::fp32}) {
        if (contradiction && n < 10) continue;
        const auto seed = fresh_seed();
        SCOPED_TRACE("n = " + std::to_string(n) + ", seed = " + std::to_string(seed) +
                     (prec == gc::Precision::fp32 ? ", fp32" : ", fp64") + (contradiction ? ", inconsistent" : ""));
        Bounds in = random_bounds(n, seed, false);
        if (contradiction) {
          std::mt19937_64 rng(seed);
          plant_contradiction(in, 3, n - 2, 1.0, rng);
        }
        gc::HostOptions o;
        o.precision = prec;
        Bounds host = in;
        const auto ref = gc::smooth_bounds_cuda(host.lower, host.upper, n, nullptr, o);
        const Bounds before = in;
        const auto r = gc::smooth_bounds_cuda_resident(in.lower, in.upper, n, nullptr, o);
        EXPECT_EQ(std::memcmp(in.lower.data(), before.lower.data(), n * n * sizeof(double)), 0);
        EXPECT_EQ(std::memcmp(in.upper.data(), before.upper.data(), n * n * sizeof(double)), 0);
        EXPECT_FALSE(r.result.cancelled);
        EXPECT_EQ(r.result.consistency.consistent, ref.consistency.consistent);
        EXPECT_EQ(r.result.consistency.consistent, !contradiction);
        EXPECT_EQ(r.result.consistency.first_i, ref.consistency.first_i);
        EXPECT_EQ(r.result.consistency.first_j, ref.consistency.first_j);
        EXPECT_EQ(r.result.consistency.inconsistent_pairs, ref.consistency.inconsistent_pairs);
        EXPECT_EQ(r.upload_bytes, 2 * n * n * sizeof(double));
        ASSERT_EQ(r.bounds.n(), n);
        EXPECT_EQ(r.bounds.device(), 0);
        cudaPointerAttributes attr{};
        CUDA_OK(cudaPointerGetAttributes(&attr, r.bounds.lower()));
        EXPECT_EQ(attr.type, cudaMemoryTypeDevice);
        // poisoned, then downloaded
        Bounds got{n, std::vector<double>(n * n, std::nan("")), std::vector<double>(n * n, std::nan(""))};
        r.bounds.download(got.lower, got.upper);
        EXPECT_EQ(std::memcmp(got.lower.data(), host.lower.data(), n * n * sizeof(double)), 0);
        EXPECT_EQ(std::memcmp(got.upper.data(), host.upper.data(), n * n * sizeof(double)), 0);
        std::size_t changed = 0;
        for (std::size_t i = 0; i < n; ++i)
          for (std::size_t j = i + 1; j < n; ++j)
            changed += host.lower[i * n + j] != in.lower[i * n + j] || host.upper[i * n + j] != in.upper[i * n + j];
        EXPECT_EQ(r.changed_pairs, changed);
        if (n >= 65) EXPECT_GT(changed, 0u);  // the count is tested, not 0 = 0
        EXPECT_THROW(r.bounds.download(std::span<double>(got.lower).first(n * n - 1), got.upper),
                     std::invalid_argument);
      }
}

TEST_F(GpuSmoothing, ResidentClosureCanBeCancelledAndMoved) {
  const std::size_t n = 700;
  const Bounds in = random_bounds(n, fresh_seed(), false);
  gc::HostOptions o;
  o.control.chunk_ms = 1e-6;
  o.control.block = 64;
  int polls = 0;
  o.control.cancelled = [&] { return ++polls >= 2; };
  const auto rc = gc::smooth_bounds_cuda_resident(in.lower, in.upper, n, nullptr, o);
  EXPECT_TRUE(rc.result.cancelled);
  EXPECT_EQ(rc.bounds.n(), 0u);
  EXPECT_EQ(rc.bounds.lower(), nullptr);

  o.control.cancelled = nullptr;
  auto r = gc::smooth_bounds_cuda_resident(in.lower, in.upper, n, nullptr, o);
  const double* p = r.bounds.lower();
  gc::DeviceBounds moved = std::move(r.bounds);
  EXPECT_EQ(moved.lower(), p);
  EXPECT_EQ(moved.n(), n);
  std::vector<double> lo(n * n), up(n * n);
  moved.download(lo, up);
  EXPECT_EQ(lo[0], 0.0);
  EXPECT_EQ(gc::smooth_bounds_cuda_resident({}, {}, 0, nullptr, o).bounds.n(), 0u);
}

TEST_F(GpuSmoothing, TooLittleDeviceMemoryIsAClearError) {
  const std::size_t n = 1 << 22;
  const std::size_t bytes = gc::device_bytes_needed(n, 1, gc::Precision::fp64);
  EXPECT_GT(bytes, std::size_t(1) << 40);
  try {
    gc::require_device_memory(n, bytes);
    ADD_FAILURE() << "no error";
  } catch (const gc::CudaError& e) {
    const std::string w = e.what();
    EXPECT_NE(w.find("n = " + std::to_string(n)), std::string::npos) << w;
    EXPECT_NE(w.find(std::to_string(bytes) + " bytes"), std::string::npos) << w;
    EXPECT_NE(w.find("free"), std::string::npos) << w;
  }
}

}  // namespace

#else  // built without CUDA

TEST(GpuSmoothing, NotBuilt) { GTEST_SKIP() << "Gemflow was built without CUDA"; }

#endif
