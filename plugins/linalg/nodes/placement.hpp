#pragma once
// What the Cholesky-based nodes (linalg.cholesky, linalg.spd_solve) share: the `algorithm`
// parameter, its resolution against `device` (never a silent fallback: `auto` logs its choice),
// and the symmetry test of the input matrix.
#include <cstddef>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <gemflow/device.hpp>
#include <gemflow/linalg/cholesky_cuda.hpp>
#include <gemflow/linalg/spd_solve.hpp>
#include <gemflow/node.hpp>
#include <gemflow/types.hpp>

namespace gemflow::linalg {

enum class CholAlgo { Auto, Lapack, Blocked, Recursive, Cusolver, Lookahead, Tiled };

/// The `algorithm` parameter: auto | lapack | blocked | recursive | cusolver | lookahead | tiled.
Choice<CholAlgo> cholesky_algorithm_param(Node* owner, std::string doc);

[[nodiscard]] std::string algo_name(CholAlgo a);
/// The library's algorithm (lapack for Auto/Lapack).
[[nodiscard]] SpdAlgorithm to_spd(CholAlgo a);

struct Placement {
  CholAlgo algo = CholAlgo::Lapack;  ///< resolved: never Auto
  Device dev;                        ///< cpu or cuda:N
};

/// What `auto` runs on CUDA for an n×n factor in `precision` on a card whose dispatch row is
/// `dispatch` (cuda::auto_dispatch: the measured crossovers per card): the tiled kernel below the
/// row's crossover (fp32 data are factored in fp64 arithmetic), else the lookahead (its last
/// trailing matrix of order ≤ 5120 by the tiled kernel); the mixed solve's FP16 factor is always
/// the lookahead (which hands 1×FP16 to the tiled kernel below 8192).
[[nodiscard]] CholAlgo auto_cuda_algorithm(std::size_t n, SolvePrecision precision, const cuda::AutoDispatch& dispatch);

/// Resolves `device` (with the run's --device override) and `requested`: lapack runs on the CPU
/// (InputError with a CUDA device), the other algorithms on CUDA (DeviceError when the device is
/// the CPU or the plugin has no CUDA), auto picks lapack or auto_cuda_algorithm(n, precision)
/// and says so (pivoted: GpuCholesky::factor_pivoted on CUDA, named as such).
[[nodiscard]] Placement resolve_placement(NodeContext& ctx, const DeviceParam& device, CholAlgo requested,
                                          std::size_t n, SolvePrecision precision, bool pivoted = false);

/// The `fp32_products` parameter: auto | exact | 3xTF32 | 1xTF32 | 3xFP16 | 1xFP16.
enum class Products { Auto, Exact, Tf32x3, Tf32, Fp16x3, Fp16 };
Choice<Products> fp32_products_param(Node* owner, std::string doc);
/// Checks `products` against the precision, the device and the algorithm of `place` and returns
/// the mode (empty for auto: the library default). InputError when it names a mode with
/// precision fp64, a tensor-core mode on the CPU, or an algorithm that cannot run the mode (TF32:
/// lookahead or recursive; FP16: lookahead); with algorithm auto on CUDA a tensor-core mode
/// takes the lookahead (logged). `requested`: the `algorithm` parameter as given.
/// The rules of the `fp32_products` parameter (NodeInfo::rules): none but auto with precision
/// fp64; the tensor-core products not with algorithm lapack (the CPU's spotrf is exact fp32).
[[nodiscard]] std::vector<ParamRule> fp32_products_rules();

[[nodiscard]] Fp32Products resolve_products(NodeContext& ctx, Products products, CholAlgo requested, Placement& place,
                                            SolvePrecision precision);

/// The first (i, j), i > j, with |a_ij − a_ji| > 4ε·max(|a_ij| + |a_ji|, √|a_ii·a_jj|), or
/// nothing: symmetric to rounding, entrywise (a matrix computed as B Bᵀ or expanded from
/// symmetric storage passes) or against the diagonal, which is what a Cholesky factor's accuracy
/// is measured against and invariant under diagonal scaling D A D (so a tiny entry facing a zero,
/// 1e-300 against 0 beside unit diagonals, is rounding noise, not asymmetry).
[[nodiscard]] std::optional<std::pair<std::size_t, std::size_t>> first_asymmetry(const Matrix<double>& a);

/// "%.17g": a double that reads back to itself.
[[nodiscard]] std::string full_precision(double v);

/// The first entry (row, column) that is not 0 but below fp32's normal range (1.2e-38): single
/// precision keeps it with fewer digits, or as 0.
[[nodiscard]] std::optional<std::pair<std::size_t, std::size_t>> first_below_fp32_normal(const Matrix<double>& m);

/// Why an fp32 factorisation of a failed at the leading minor of order k + 1 (" (…)", for an
/// error message): a diagonal entry below fp32's normal range, or the first entry there
/// anywhere, flushes to (almost) zero; otherwise the condition number. `alternative`: what to use
/// instead ("precision fp64 or mixed").
[[nodiscard]] std::string fp32_failure_hint(const Matrix<double>& a, std::size_t k, const std::string& alternative);

}  // namespace gemflow::linalg
