// Random and partial metrization (see gemflow/distgeom/metrize.hpp).
#include "gemflow/distgeom/metrize.hpp"

#include <algorithm>
#include <random>
#include <stdexcept>
#include <string>
#include <utility>

namespace gemflow::distgeom {
namespace {

struct Rng {
  std::mt19937_64 g;
  explicit Rng(std::uint64_t seed) : g(seed) {}
  double unit() { return static_cast<double>(g() >> 11) * 0x1.0p-53; }  // [0, 1)
  std::size_t below(std::size_t m) { return static_cast<std::size_t>(unit() * static_cast<double>(m)); }
  template <class V>
  void shuffle(V& v) {  // Fisher–Yates with our own draws (std::shuffle is not portable)
    for (std::size_t i = v.size(); i > 1; --i) std::swap(v[i - 1], v[below(i)]);
  }
};

}  // namespace

std::vector<double> metrize(std::span<const double> lower, std::span<const double> upper, std::size_t n,
                            const MetrizeOptions& o, const Resmoother& resmooth, const Progress& progress) {
  if (lower.size() != n * n || upper.size() != n * n)
    throw std::invalid_argument("metrize: bounds are not " + std::to_string(n) + "×" + std::to_string(n));
  Rng rng(o.seed);
  std::vector<double> lo(lower.begin(), lower.end()), up(upper.begin(), upper.end());
  std::vector<double> d(n * n, 0.0);
  std::vector<char> done(n * n, 0);
  auto check = [&](std::size_t i, std::size_t j) {
    if (lo[i * n + j] > up[i * n + j] + 1e-9)
      throw std::runtime_error("metrize: bounds of pair (" + std::to_string(i) + ", " + std::to_string(j) +
                               ") are inconsistent: lower " + std::to_string(lo[i * n + j]) + " > upper " +
                               std::to_string(up[i * n + j]) + " Å (smooth them first)");
  };
  if (o.method == MetrizeMethod::Partial) {
    if (!resmooth) throw std::invalid_argument("metrize: partial metrization needs a smoother");
    std::vector<std::size_t> order(n);
    for (std::size_t i = 0; i < n; ++i) order[i] = i;
    rng.shuffle(order);
    const std::size_t m = std::min(o.atoms, n);
    for (std::size_t a = 0; a < m; ++a) {
      const std::size_t i = order[a];
      std::vector<std::size_t> others;
      for (std::size_t j = 0; j < n; ++j)
        if (j != i && !done[i * n + j]) others.push_back(j);
      rng.shuffle(others);
      for (auto j : others) {
        check(i, j);
        const double l = lo[i * n + j], u = std::max(l, up[i * n + j]);
        const double v = l + rng.unit() * (u - l);
        d[i * n + j] = d[j * n + i] = v;
        done[i * n + j] = done[j * n + i] = 1;
        lo[i * n + j] = lo[j * n + i] = up[i * n + j] = up[j * n + i] = v;
        // Triangles (i, j, k): keep every later pick from i consistent with this one.
        for (std::size_t k = 0; k < n; ++k) {
          if (k == i || k == j || done[i * n + k]) continue;
          const double u_ik = std::min(up[i * n + k], v + up[j * n + k]);
          const double l_ik = std::max({lo[i * n + k], v - up[j * n + k], lo[j * n + k] - v});
          up[i * n + k] = up[k * n + i] = u_ik;
          lo[i * n + k] = lo[k * n + i] = std::min(l_ik, u_ik);
        }
      }
      resmooth(lo, up, n);
      if (progress && !progress(static_cast<double>(a + 1) / static_cast<double>(m + 1)))
        throw std::runtime_error("cancelled");
    }
  }
  for (std::size_t i = 0; i < n; ++i)
    for (std::size_t j = i + 1; j < n; ++j) {
      if (done[i * n + j]) continue;
      check(i, j);
      const double l = lo[i * n + j], u = std::max(l, up[i * n + j]);
      d[i * n + j] = d[j * n + i] = l + rng.unit() * (u - l);
    }
  if (progress) (void)progress(1.0);
  return d;
}

}  // namespace gemflow::distgeom
