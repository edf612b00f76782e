// Basic bounds of small molecules and batched triangle smoothing (molecule_bounds.hpp).
#include "gemflow/distgeom/molecule_bounds.hpp"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <exception>
#include <limits>
#include <mutex>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "gemflow/distgeom/bounds.hpp"

#if defined(GEMFLOW_DISTGEOM_HAVE_CUDA)
#include "gemflow/distgeom/smoothing_cuda.hpp"
#endif

namespace gemflow::distgeom {

MoleculeBounds molecule_bounds(std::span<const std::string> elements, std::span<const double> xyz,
                               std::span<const std::array<std::size_t, 2>> bonds, const MoleculeBoundsOptions& o) {
  const std::size_t n = elements.size();
  if (xyz.size() != 3 * n)
    throw std::invalid_argument("molecule_bounds: " + std::to_string(xyz.size()) + " coordinates for " +
                                std::to_string(n) + " atoms (expected n×3)");
  if (!(o.tolerance_12 >= 0) || !(o.tolerance_13 >= 0) || !(o.vdw_scale >= 0))
    throw std::invalid_argument("molecule_bounds: tolerances and vdw_scale must be >= 0");
  MoleculeBounds b;
  b.n = n;
  b.lower.assign(n * n, 0.0);
  b.upper.assign(n * n, 0.0);
  auto dist = [&](std::size_t i, std::size_t j) {
    const double dx = xyz[3 * i] - xyz[3 * j], dy = xyz[3 * i + 1] - xyz[3 * j + 1],
                 dz = xyz[3 * i + 2] - xyz[3 * j + 2];
    return std::sqrt(dx * dx + dy * dy + dz * dz);
  };
  // Other pairs first; 1-3 and 1-2 overwrite.
  std::vector<double> radius(n);
  for (std::size_t i = 0; i < n; ++i) radius[i] = vdw_radius(elements[i]);
  for (std::size_t i = 0; i < n; ++i)
    for (std::size_t j = i + 1; j < n; ++j) {
      const double floor = o.vdw_scale * (radius[i] + radius[j]);
      if (floor > o.max_upper)
        throw std::invalid_argument("molecule_bounds: max_upper " + std::to_string(o.max_upper) +
                                    " Å is below the vdW floor " + std::to_string(floor) + " Å");
      b.lower[i * n + j] = b.lower[j * n + i] = floor;
      b.upper[i * n + j] = b.upper[j * n + i] = o.max_upper;
    }
  std::vector<std::vector<std::size_t>> nb(n);
  std::vector<char> bonded(n * n, 0);
  for (std::size_t k = 0; k < bonds.size(); ++k) {
    const auto [i, j] = bonds[k];
    if (i >= n || j >= n || i == j)
      throw std::invalid_argument("molecule_bounds: bond " + std::to_string(k) + " joins atoms " + std::to_string(i) +
                                  " and " + std::to_string(j) + " of " + std::to_string(n));
    if (bonded[i * n + j]) continue;  // listed twice
    bonded[i * n + j] = bonded[j * n + i] = 1;
    nb[i].push_back(j);
    nb[j].push_back(i);
  }
  auto set = [&](std::size_t i, std::size_t j, double d, double t) {
    b.lower[i * n + j] = b.lower[j * n + i] = std::max(0.0, d - t);
    b.upper[i * n + j] = b.upper[j * n + i] = d + t;
  };
  std::vector<char> is13(n * n, 0);
  for (std::size_t c = 0; c < n; ++c)
    for (std::size_t p = 0; p < nb[c].size(); ++p)
      for (std::size_t q = p + 1; q < nb[c].size(); ++q) {
        const std::size_t i = nb[c][p], k = nb[c][q];
        if (bonded[i * n + k] || is13[i * n + k]) continue;
        // Law of cosines from the bond lengths and the angle at c (= the 3D distance of i, k).
        const double a = dist(c, i), bb = dist(c, k);
        double cos_t = 0.0;
        if (a > 0 && bb > 0) {
          cos_t = ((xyz[3 * i] - xyz[3 * c]) * (xyz[3 * k] - xyz[3 * c]) +
                   (xyz[3 * i + 1] - xyz[3 * c + 1]) * (xyz[3 * k + 1] - xyz[3 * c + 1]) +
                   (xyz[3 * i + 2] - xyz[3 * c + 2]) * (xyz[3 * k + 2] - xyz[3 * c + 2])) /
                  (a * bb);
          cos_t = std::clamp(cos_t, -1.0, 1.0);
        }
        const double d13 = std::sqrt(std::max(0.0, a * a + bb * bb - 2 * a * bb * cos_t));
        is13[i * n + k] = is13[k * n + i] = 1;
        set(i, k, d13, o.tolerance_13);
        ++b.pairs_13;
      }
  for (std::size_t i = 0; i < n; ++i)
    for (std::size_t j = i + 1; j < n; ++j)
      if (bonded[i * n + j]) {
        set(i, j, dist(i, j), o.tolerance_12);
        ++b.pairs_12;
      }
  return b;
}

namespace {

// Matrices up to this size share one padded batch (each pays the largest one's N³).
constexpr std::size_t kPaddedBatchN = 256;

std::size_t changed_pairs(const std::vector<double>& lo0, const std::vector<double>& up0, const BatchMatrix& m) {
  std::size_t c = 0;
  for (std::size_t i = 0; i < m.n; ++i)
    for (std::size_t j = i + 1; j < m.n; ++j)
      c += m.lower[i * m.n + j] != lo0[i * m.n + j] || m.upper[i * m.n + j] != up0[i * m.n + j];
  return c;
}

/// One matrix on the CPU, one thread, fp64 in place or through an fp32 copy.
SmoothingReport smooth_one_cpu(const BatchMatrix& m, const BatchSmoothingOptions& o, const CancelFn& cancel) {
  SmoothingOptions so;
  so.threads = 1;
  so.tolerance = o.tolerance;
  so.progress = cancel;
  if (!o.fp32) return smooth_bounds(m.lower, m.upper, m.n, so);
  std::vector<float> lo(m.lower.begin(), m.lower.end()), up(m.upper.begin(), m.upper.end());
  SmoothingReport r = smooth_bounds(std::span<float>(lo), std::span<float>(up), m.n, so);
  if (!r.cancelled) {
    std::copy(lo.begin(), lo.end(), m.lower.begin());
    std::copy(up.begin(), up.end(), m.upper.begin());
  }
  return r;
}

BatchSmoothingResult batch_cpu(std::span<const BatchMatrix> ms, const BatchSmoothingOptions& o) {
  BatchSmoothingResult res;
  res.reports.resize(ms.size());
  unsigned t = o.threads ? o.threads : std::max(1u, std::thread::hardware_concurrency());
  t = static_cast<unsigned>(std::min<std::size_t>(t, std::max<std::size_t>(ms.size(), 1)));
  std::atomic<std::size_t> next{0}, done{0};
  std::atomic<bool> stop{false};
  std::mutex err_mu;
  std::size_t err_index = ms.size();
  std::exception_ptr err;
  const CancelFn inner = [&stop](double) { return stop.load(std::memory_order_relaxed); };
  auto work = [&](bool caller) {
    while (!stop.load(std::memory_order_relaxed)) {
      const std::size_t k = next.fetch_add(1);
      if (k >= ms.size()) break;
      try {
        res.reports[k] = smooth_one_cpu(ms[k], o, inner);
      } catch (...) {
        std::lock_guard lock(err_mu);
        if (k < err_index) err_index = k, err = std::current_exception();
        stop = true;
      }
      const std::size_t d = done.fetch_add(1) + 1;
      if (caller && o.progress && o.progress(static_cast<double>(d) / static_cast<double>(ms.size()))) stop = true;
    }
  };
  std::vector<std::thread> pool;
  for (unsigned i = 1; i < t; ++i) pool.emplace_back(work, false);
  work(true);
  for (auto& th : pool) th.join();
  if (err) std::rethrow_exception(err);
  res.cancelled = stop.load() || done.load() < ms.size();
  for (const auto& r : res.reports) res.cancelled = res.cancelled || r.cancelled;
  return res;
}

#if defined(GEMFLOW_DISTGEOM_HAVE_CUDA)
SmoothingReport from_consistency(const cuda::ConsistencyReport& c) {
  SmoothingReport r;
  r.consistent = c.consistent;
  r.i = c.first_i;
  r.j = c.first_j;
  r.lower = c.first_lower;
  r.upper = c.first_upper;
  r.inconsistent_pairs = c.inconsistent_pairs;
  return r;
}

BatchSmoothingResult batch_cuda(std::span<const BatchMatrix> ms, const BatchSmoothingOptions& o) {
  BatchSmoothingResult res;
  res.reports.resize(ms.size());
  // Inputs kept for changed_pairs and explain_inconsistency.
  std::vector<std::vector<double>> lo0(ms.size()), up0(ms.size());
  for (std::size_t k = 0; k < ms.size(); ++k) {
    lo0[k].assign(ms[k].lower.begin(), ms[k].lower.end());
    up0[k].assign(ms[k].upper.begin(), ms[k].upper.end());
  }
  cuda::HostOptions ho;
  ho.device = o.device;
  ho.precision = o.fp32 ? cuda::Precision::fp32 : cuda::Precision::fp64;
  ho.tolerance = o.tolerance;
  double reported = 0.0;  // cancellation polls re-report the last fraction
  ho.control.cancelled = [&o, &reported] { return o.progress && o.progress(reported); };
  std::vector<std::size_t> small, large;
  std::size_t N = 0;
  for (std::size_t k = 0; k < ms.size(); ++k) {
    if (ms[k].n == 0) continue;
    if (ms[k].n <= kPaddedBatchN) small.push_back(k), N = std::max(N, ms[k].n);
    else large.push_back(k);
  }
  const double total = static_cast<double>(ms.size());
  if (!small.empty()) {
    const std::size_t B = small.size(), NN = N * N;
    const double inf = std::numeric_limits<double>::infinity();
    std::vector<double> lo(B * NN, 0.0), up(B * NN, inf);
    for (std::size_t b = 0; b < B; ++b) {
      const BatchMatrix& m = ms[small[b]];
      double* L = lo.data() + b * NN;
      double* U = up.data() + b * NN;
      for (std::size_t i = 0; i < N; ++i) U[i * N + i] = 0.0;
      for (std::size_t i = 0; i < m.n; ++i)
        for (std::size_t j = 0; j < m.n; ++j) {
          L[i * N + j] = m.lower[i * m.n + j];
          U[i * N + j] = m.upper[i * m.n + j];
        }
    }
    bool cancelled = false;
    const auto reps = cuda::smooth_bounds_batched_cuda(lo, up, N, B, nullptr, ho, &cancelled);
    if (cancelled) {
      res.cancelled = true;
      return res;
    }
    for (std::size_t b = 0; b < B; ++b) {
      const BatchMatrix& m = ms[small[b]];
      const double* L = lo.data() + b * NN;
      const double* U = up.data() + b * NN;
      for (std::size_t i = 0; i < m.n; ++i)
        for (std::size_t j = 0; j < m.n; ++j) {
          m.lower[i * m.n + j] = L[i * N + j];
          m.upper[i * m.n + j] = U[i * N + j];
        }
      res.reports[small[b]] = from_consistency(reps[b]);
    }
    res.batched = B;
    res.padded_n = N;
    reported = static_cast<double>(B) / total;
    if (o.progress && o.progress(reported)) {
      res.cancelled = true;
      return res;
    }
  }
  std::size_t done = small.size();
  for (std::size_t k : large) {
    const auto r = cuda::smooth_bounds_cuda(ms[k].lower, ms[k].upper, ms[k].n, nullptr, ho);
    if (r.cancelled) {
      res.cancelled = true;
      return res;
    }
    res.reports[k] = from_consistency(r.consistency);
    ++res.one_by_one;
    reported = static_cast<double>(++done) / total;
    if (o.progress && o.progress(reported)) {
      res.cancelled = true;
      return res;
    }
  }
  for (std::size_t k = 0; k < ms.size(); ++k) {
    SmoothingReport& r = res.reports[k];
    r.changed_pairs = changed_pairs(lo0[k], up0[k], ms[k]);
    if (!r.consistent) r.path = explain_inconsistency(lo0[k], up0[k], ms[k].n, r.i, r.j);
  }
  return res;
}
#endif

}  // namespace

BatchSmoothingResult smooth_bounds_batch(std::span<const BatchMatrix> ms, const BatchSmoothingOptions& o) {
  for (std::size_t k = 0; k < ms.size(); ++k)
    if (ms[k].lower.size() != ms[k].n * ms[k].n || ms[k].upper.size() != ms[k].n * ms[k].n)
      throw std::invalid_argument("smooth_bounds_batch: matrix " + std::to_string(k) + " is not " +
                                  std::to_string(ms[k].n) + "×" + std::to_string(ms[k].n));
  if (!o.cuda) return batch_cpu(ms, o);
#if defined(GEMFLOW_DISTGEOM_HAVE_CUDA)
  return batch_cuda(ms, o);
#else
  throw std::runtime_error("smooth_bounds_batch: CUDA smoothing was not built into this Gemflow");
#endif
}

}  // namespace gemflow::distgeom
