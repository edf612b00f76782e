// Shared device/algorithm resolution of the Cholesky-based nodes (see placement.hpp).
#include "placement.hpp"

#include <cmath>
#include <cstdio>
#include <limits>
#include <sstream>

namespace gemflow::linalg {

Choice<CholAlgo> cholesky_algorithm_param(Node* owner, std::string doc) {
  return Choice<CholAlgo>(owner, "algorithm", CholAlgo::Auto,
                          {{CholAlgo::Auto, "auto"},
                           {CholAlgo::Lapack, "lapack"},
                           {CholAlgo::Blocked, "blocked"},
                           {CholAlgo::Recursive, "recursive"},
                           {CholAlgo::Cusolver, "cusolver"},
                           {CholAlgo::Lookahead, "lookahead"},
                           {CholAlgo::Tiled, "tiled"}},
                          {.doc = std::move(doc)});
}

std::string algo_name(CholAlgo a) {
  switch (a) {
    case CholAlgo::Auto: return "auto";
    case CholAlgo::Lapack: return "lapack";
    case CholAlgo::Blocked: return "blocked";
    case CholAlgo::Recursive: return "recursive";
    case CholAlgo::Cusolver: return "cusolver";
    case CholAlgo::Lookahead: return "lookahead";
    case CholAlgo::Tiled: return "tiled";
  }
  return "?";
}

SpdAlgorithm to_spd(CholAlgo a) {
  switch (a) {
    case CholAlgo::Blocked: return SpdAlgorithm::blocked;
    case CholAlgo::Recursive: return SpdAlgorithm::recursive;
    case CholAlgo::Cusolver: return SpdAlgorithm::cusolver;
    case CholAlgo::Lookahead: return SpdAlgorithm::lookahead;
    case CholAlgo::Tiled: return SpdAlgorithm::tiled;
    default: return SpdAlgorithm::lapack;
  }
}

Choice<Products> fp32_products_param(Node* owner, std::string doc) {
  return Choice<Products>(owner, "fp32_products", Products::Auto,
                          {{Products::Auto, "auto"},
                           {Products::Exact, "exact"},
                           {Products::Tf32x3, "3xTF32"},
                           {Products::Tf32, "1xTF32"},
                           {Products::Fp16x3, "3xFP16"},
                           {Products::Fp16, "1xFP16"}},
                          {.doc = std::move(doc)});
}

std::vector<ParamRule> fp32_products_rules() {
  return {{.param = "fp32_products",
           .other = "precision",
           .other_value = std::string("fp64"),
           .must = false,
           .why = "the products are those of an fp32 factorisation: precision fp32 or mixed"},
          {.param = "fp32_products",
           .when = {std::string("3xTF32"), std::string("1xTF32"), std::string("3xFP16"), std::string("1xFP16")},
           .other = "algorithm",
           .other_value = std::string("lapack"),
           .must = false,
           .why = "they run on the CUDA tensor cores; LAPACK's spotrf on the CPU is exact fp32"}};
}

Fp32Products resolve_products(NodeContext& ctx, Products products, CholAlgo requested, Placement& place,
                              SolvePrecision precision) {
  if (products == Products::Auto) return std::nullopt;
  using M = cuda::Fp32Mode;
  const M mode = products == Products::Exact    ? M::exact
                 : products == Products::Tf32x3 ? M::tf32x3
                 : products == Products::Tf32   ? M::tf32
                 : products == Products::Fp16x3 ? M::fp16x3
                                                : M::fp16;
  const std::string name = std::string("parameter 'fp32_products' = ") + cuda::fp32_mode_name(mode);
  if (precision == SolvePrecision::fp64) throw InputError(name + " applies to precision fp32 or mixed, not fp64");
  if (!place.dev.is_cuda()) {
    if (mode == M::exact) return std::nullopt;  // LAPACK spotrf is exact fp32
    throw InputError(name + " runs on the CUDA tensor cores; on the CPU (LAPACK spotrf) use auto or exact");
  }
  if (mode == M::exact) return mode;
  using A = cuda::CholeskyAlgo;
  const A algo = place.algo == CholAlgo::Blocked     ? A::blocked
                 : place.algo == CholAlgo::Recursive ? A::recursive
                 : place.algo == CholAlgo::Cusolver  ? A::cusolver
                 : place.algo == CholAlgo::Tiled     ? A::tiled
                                                     : A::lookahead;
  if (cuda::algo_runs_mode(algo, mode)) return mode;
  if (requested != CholAlgo::Auto)
    throw InputError(name + " needs algorithm " + cuda::algos_running_mode(mode) + " (or auto), not " +
                     algo_name(place.algo));
  ctx.info(name + ": algorithm lookahead (" + algo_name(place.algo) + " has no " + cuda::fp32_mode_name(mode) +
           " products)");
  place.algo = CholAlgo::Lookahead;
  return mode;
}

CholAlgo auto_cuda_algorithm(std::size_t n, SolvePrecision precision, const cuda::AutoDispatch& dispatch) {
  const auto below = [&](std::int64_t limit) {
    return static_cast<std::int64_t>(n) < limit ? CholAlgo::Tiled : CholAlgo::Lookahead;
  };
  switch (precision) {
    case SolvePrecision::fp64: return below(dispatch.tiled_below_fp64);
    case SolvePrecision::fp32: return below(dispatch.tiled_below_fp32);
    case SolvePrecision::mixed: break;
  }
  return CholAlgo::Lookahead;
}

Placement resolve_placement(NodeContext& ctx, const DeviceParam& device, CholAlgo requested, std::size_t n,
                            SolvePrecision precision, bool pivoted) {
  const std::string request = ctx.device_override().empty() ? device.requested() : ctx.device_override();
  const auto req = DeviceRequest::parse(request);
  if (!req) throw InputError("parameter 'device': '" + request + "' is not a device (auto, cpu, cuda, cuda:N)");
  Placement p;
  p.algo = requested;
  if (requested == CholAlgo::Lapack) {
    if (req->kind == DeviceRequest::Kind::Cuda)
      throw InputError("parameter 'algorithm': lapack runs on the CPU, but the device is '" + request +
                       "'; use algorithm auto, blocked, recursive, cusolver, lookahead or tiled on CUDA, or device "
                       "cpu");
    if (req->kind == DeviceRequest::Kind::Auto) ctx.info("device auto with algorithm lapack: using cpu");
    ctx.record("device_used", std::string("cpu"));
    return p;
  }
  p.dev = device.resolve(ctx);  // DeviceError when a requested CUDA device is absent
  if (requested == CholAlgo::Auto) {
    std::string row;
    if (p.dev.is_cuda()) {
#if defined(GEMFLOW_LINALG_HAVE_CUDA)
      const auto dispatch = cuda::auto_dispatch(cuda::device_traits(p.dev.index));
      p.algo = auto_cuda_algorithm(n, precision, dispatch);
      row = ", " + dispatch.row + " dispatch row";
#endif
    } else {
      p.algo = CholAlgo::Lapack;
    }
    ctx.info("algorithm auto: " + (!p.dev.is_cuda() ? std::string("lapack (CPU)")
                                   : pivoted        ? std::string("factor_pivoted (GPU, dpstf2 steps)")
                                                    : algo_name(p.algo) + " (GPU" + row + ")"));
  } else if (!p.dev.is_cuda()) {
    const std::string from = ctx.device_override().empty() ? "" : " (from --device)";
    throw DeviceError("parameter 'algorithm': algorithm '" + algo_name(requested) +
                      "' runs on a CUDA GPU, but the device " +
                      (req->kind == DeviceRequest::Kind::Auto ? "auto resolved to cpu (no CUDA device found)"
                                                              : "is '" + request + "'" + from) +
                      "; use algorithm lapack or auto on the CPU, or run on a machine with a CUDA GPU");
  }
  if (p.dev.is_cuda() && !spd_solve_cuda_built())
    throw DeviceError("device " + p.dev.str() + " requested but the linalg plugin was built without CUDA");
  return p;
}

std::optional<std::pair<std::size_t, std::size_t>> first_asymmetry(const Matrix<double>& a) {
  constexpr double tol = 8.0 * std::numeric_limits<double>::epsilon() / 2.0;
  for (std::size_t i = 0; i < a.rows(); ++i)
    for (std::size_t j = 0; j < i; ++j) {
      const double u = a(i, j), v = a(j, i);
      const double scale = std::max(std::abs(u) + std::abs(v), std::sqrt(std::abs(a(i, i)) * std::abs(a(j, j))));
      if (std::abs(u - v) > tol * scale) return std::pair{i, j};
    }
  return std::nullopt;
}

std::string full_precision(double v) {
  char buf[40];
  std::snprintf(buf, sizeof buf, "%.17g", v);
  return buf;
}

std::optional<std::pair<std::size_t, std::size_t>> first_below_fp32_normal(const Matrix<double>& m) {
  for (std::size_t i = 0; i < m.rows(); ++i)
    for (std::size_t j = 0; j < m.cols(); ++j)
      if (const double v = m(i, j); v != 0 && std::abs(v) < std::numeric_limits<float>::min()) return {{i, j}};
  return std::nullopt;
}

std::string fp32_failure_hint(const Matrix<double>& a, std::size_t k, const std::string& alternative) {
  std::ostringstream s;
  s.precision(6);
  const double akk = a(k, k);
  if (akk != 0 && std::abs(akk) < std::numeric_limits<float>::min()) {
    s << " (A(" << k << ", " << k << ") = " << akk << " underflows single precision (|a| < 1.2e-38): use "
      << alternative << ")";
  } else if (const auto ij = first_below_fp32_normal(a)) {
    s << " (entries below single precision's normal range, such as A(" << ij->first << ", " << ij->second
      << ") = " << a(ij->first, ij->second) << ", become 0 or lose digits there: use " << alternative << ")";
  } else {
    s << " (κ(A) may be too large for fp32: use " << alternative << ")";
  }
  return s.str();
}

}  // namespace gemflow::linalg
