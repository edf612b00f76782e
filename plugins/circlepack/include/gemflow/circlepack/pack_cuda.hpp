#pragma once
// GPU circle packing (CUDA): the seed's graph-coloured Gauss–Seidel and Jacobi iterations of
// the Collins–Stephenson update (formulas in gemflow/circlepack/pack.hpp), Euclidean and
// hyperbolic, fp32 or fp64. Usable from plain C++; defined only when the plugin is built with
// CUDA (GEMFLOW_CIRCLEPACK_HAVE_CUDA).
//
// - coloured_gs: the free vertices split by a colouring computed once on the host
//   (colour_vertices: no two neighbours share a colour; 3 colours for the triangle lattice),
//   one kernel launch per colour per sweep: a vertex's neighbours are not updated while it is
//   (Gauss–Seidel between colours, Jacobi within one). The seed's GPU v1.
// - jacobi: one kernel computes every angle sum and new radius from the old radii (the seed's
//   GPU v2); converges about half as fast per sweep as Gauss–Seidel.
// - newton: Newton's method on the log-radius functional (as the CPU newton: Euclidean, fp64),
//   each step's system L δ = θ − A solved by conjugate gradients with the Jacobi (diagonal)
//   preconditioner, matrix-free: the edge weights w_vw are recomputed per step into an array
//   parallel to the flowers, the product is Σ_w w_vw (x_v − x_w). Inexact Newton: CG stops at
//   relative residual η = min(0.1, max|θ − A|) (superlinear convergence near the solution), at
//   most cg_max_iterations. With no radius fixed one vertex is pinned and every residual is
//   driven to their mean, so the summed rounding of the targets is spread over all vertices
//   (pack.hpp). Line search on ‖θ − A − ḡ‖₂ as on the CPU. The dot products are two-pass block reductions (deterministic). Up to
//   cg_single_block_max unknowns the whole CG solve is one kernel of one block (the same
//   iteration, its reductions in the block). Every copy and kernel runs on one non-blocking
//   stream.
// The flowers are stored in CSR arrays on the device (32-bit indices); the convergence check
// (max |θ − A|, a block reduction then an atomic max on the float bits) runs every `check_every`
// sweeps, so up to check_every − 1 sweeps more than needed are run. Results are deterministic
// (no atomics in the updates; the reduction's max is order-independent).
//
// Device memory: (n + 1)·4 (offsets) + Σdeg·(4 + 8) (flower, fixed petal angles) + n·(3·8)
// (labels, targets, vertex lists) bytes.
#include <cstddef>
#include <cstdint>
#include <functional>
#include <stdexcept>
#include <vector>

#include "gemflow/circlepack/complex.hpp"
#include "gemflow/circlepack/pack.hpp"

namespace gemflow::circlepack {

/// Colouring of the free, non-ideal vertices by DSatur (Brélaz, CACM 22 (1979) 251–256): next
/// the uncoloured vertex with the most distinct colours among its neighbours (ties: more
/// uncoloured neighbours, then the smaller index), given the smallest colour no neighbour has.
/// Greedy in index order needs 4 colours on the triangle lattice; DSatur finds its 3, since each
/// next vertex closes a triangle of two coloured neighbours. Ideal and fixed vertices get colour
/// 255 (not updated). At most max degree + 1 colours; PackError beyond 254.
[[nodiscard]] std::vector<std::uint8_t> colour_vertices(const Complex& K, const Problem& p);

namespace cuda {

enum class GpuMethod { coloured_gs, jacobi, newton };

struct GpuOptions {
  GpuMethod method = GpuMethod::coloured_gs;
  Precision precision = Precision::fp64;
  double tolerance = 1e-10;
  std::size_t max_iterations = 10'000'000;
  std::size_t check_every = 10;
  int device = 0;
  std::size_t cg_max_iterations = 20000;  ///< newton: per step
  /// newton: systems of at most this many unknowns are solved by one kernel of one 1024-thread
  /// block that runs every CG iteration on the device (reductions in the block; no launch and no
  /// host synchronisation per iteration, which bound the multi-kernel loop below ~10⁵ unknowns);
  /// larger ones by the multi-kernel loop over the whole device. 0: always the multi-kernel loop.
  /// The default sits between the sizes where each path wins on an H100 (one block 1.37× faster
  /// at 19 441 unknowns, the multi-kernel loop 1.33× faster at 32 137: `pack_table --cutover`).
  std::size_t cg_single_block_max = 25000;
  /// Called at every convergence check (newton: every step) with (iteration, error); false stops (cancel).
  std::function<bool(std::size_t, double)> monitor;
};

/// CUDA devices present (0 when the runtime finds none or fails).
[[nodiscard]] int device_count() noexcept;

/// Solves `p` on the GPU. The final error is recomputed on the host in fp64 (PackResult::error).
/// PackResult::inner_iterations counts newton's CG iterations (all steps). Throws
/// gemflow::cuda::CudaError (gemflow/cuda/error.hpp) on CUDA failures, PackError on bad input
/// (newton: hyperbolic or fp32).
[[nodiscard]] PackResult pack_gpu(const Complex& K, const Problem& p, const GpuOptions& o);

}  // namespace cuda
}  // namespace gemflow::circlepack
