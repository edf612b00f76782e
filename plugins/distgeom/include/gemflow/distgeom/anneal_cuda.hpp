#pragma once
// Restrained molecular dynamics of a whole batch of structures at once on a CUDA device: the
// force field and integrator of anneal.hpp (velocity Verlet, masses 100 amu, Berendsen
// coupling), every structure of the batch with the same terms (one molecule, B conformers).
//
// Layout: the terms, coordinates, velocities, forces and repel pair lists stay on the device
// for the whole schedule (uploaded once). Per-term kernels over (structure, term) with fp64
// atomicAdd into the forces, one thread per (structure, NOE restraint) for the r^-6 sums, one per
// (structure, atom) for the integration and for repel (a full pair list: each atom's partners in
// a row, its force summed without atomics). Energies only where asked (the MD needs forces).
// The repel pair list is built on the device (one warp per atom against all atoms, the
// 1-2/1-3 exclusions by binary search, the rows grown and the build repeated when one
// overflows: never truncated) with repel_pairs()' selection, rebuilt per structure when one of
// its atoms moved more than half the skin (anneal()'s rule) or every `rebuild_every` steps
// (md_steps()'). The host synchronises once per 100 steps (list overflow, non-finite
// coordinates, progress). Plain C++ interface; the CPU reference is md_steps() (anneal.hpp).
// The sums' order differs from the CPU's (atomics), so results agree to rounding, which MD
// amplifies over many steps: compare a few steps (plugins/distgeom/tests/anneal_gpu_test.cpp).
#include <array>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <span>
#include <vector>

#include "gemflow/distgeom/anneal.hpp"

namespace gemflow::distgeom::cuda {

struct MdBatchResult {
  std::vector<double> energy;  ///< per structure, at the end (kcal/mol, weights w)
};

/// `x`, `v`: B × n × 3 (Å, Å/ps), updated in place. Throws std::invalid_argument on sizes,
/// CudaError on device failures, std::runtime_error when CUDA was not built.
/// `initial_row_capacity` > 0: the repel lists' rows start that small (tests of the overflow
/// handling: the steps are run again with larger rows, the result is the same).
MdBatchResult md_steps_batch(const AnnealTerms& t, const AnnealWeights& w, std::span<double> x, std::span<double> v,
                             std::size_t batch, const MdOptions& o, int device = 0,
                             std::size_t initial_row_capacity = 0);

/// The repel pair lists repel_pairs() gives (pairs i < j, sorted) of each structure of `x`
/// (B × n × 3, Å), built on the device. `initial_row_capacity` > 0 starts the per-atom rows that
/// small (tests of the regrowth). Throws as md_steps_batch.
[[nodiscard]] std::vector<std::vector<std::array<std::size_t, 2>>> repel_pairs_batch(
    const AnnealTerms& t, std::span<const double> x, std::size_t batch, double scale, int device = 0,
    std::size_t initial_row_capacity = 0);

/// Seconds spent in each part of anneal_batch.
struct AnnealBatchTimes {
  double prepare = 0, md = 0, finish = 0;
};

struct AnnealBatchOptions {
  unsigned threads = 0;  ///< host threads for anneal_prepare / anneal_finish (L-BFGS); 0 = hardware
  /// The earlier host-side lists: repel_pairs() per structure on the host every 20 steps,
  /// uploaded (a round trip each time); the benchmark's baseline, with threads = 1.
  bool host_pair_lists = false;
  /// Called about every 100 MD steps with the fraction of the steps done; returning false
  /// cancels (std::runtime_error("cancelled")).
  std::function<bool(double)> progress;
  AnnealBatchTimes* times = nullptr;  ///< filled when not null
};

/// anneal() for every start at once: anneal_prepare on the host (per structure in parallel
/// threads, seed `seeds[k]` in place of o.seed), the stages of anneal_stages(o) batched on the
/// device (lists rebuilt on displacement per structure, as anneal()), anneal_finish on the host
/// (threads). Agrees with the CPU path in distribution, not structure by structure: the MD is
/// chaotic and the device sums in another order. Throws as md_steps_batch, std::invalid_argument
/// when a start is not n×3 or the seeds are not one per start, std::runtime_error when a
/// coordinate becomes non-finite (naming the stage) or on cancellation.
[[nodiscard]] std::vector<AnnealResult> anneal_batch(const AnnealTerms& t,
                                                     const std::vector<std::vector<double>>& starts,
                                                     const std::vector<std::uint64_t>& seeds, const AnnealOptions& o,
                                                     int device = 0, const AnnealBatchOptions& options = {});

}  // namespace gemflow::distgeom::cuda
