#pragma once
// Restrained molecular dynamics of a whole batch of structures at once on a CUDA device: the
// force field and integrator of anneal.hpp (velocity Verlet, masses 100 amu, Berendsen
// coupling), every structure of the batch with the same terms (one molecule, B conformers).
//
// Layout: per-term kernels over (structure, term) with fp64 atomicAdd into the forces, one
// thread per (structure, NOE restraint) for the r^-6 sums, one per (structure, atom) for the
// integration, per-structure kinetic energies by atomicAdd. The repel pair list is built on the
// host from the current coordinates every `rebuild_every` steps (as md_steps() does) and
// uploaded. Plain C++ interface; the CPU reference is md_steps() (anneal.hpp). The sums' order
// differs from the CPU's (atomics), so results agree to rounding, which MD amplifies over many
// steps: compare a few steps (plugins/distgeom/tests/anneal_gpu_test.cpp).
#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "gemflow/distgeom/anneal.hpp"

namespace gemflow::distgeom::cuda {

struct MdBatchResult {
  std::vector<double> energy;  ///< per structure, at the end (kcal/mol, weights w)
};

/// `x`, `v`: B × n × 3 (Å, Å/ps), updated in place. Throws std::invalid_argument on sizes,
/// CudaError on device failures, std::runtime_error when CUDA was not built.
MdBatchResult md_steps_batch(const AnnealTerms& t, const AnnealWeights& w, std::span<double> x, std::span<double> v,
                             std::size_t batch, const MdOptions& o, int device = 0);

/// anneal() for every start at once: anneal_prepare on the host (per structure, seed
/// `seeds[k]` in place of o.seed), each stage of anneal_stages(o) batched on the device
/// (md_steps_batch, pair lists rebuilt every 20 steps instead of on displacement), anneal_finish
/// on the host. Agrees with the CPU path in distribution, not structure by structure: the MD is
/// chaotic and the device sums in another order. Throws as md_steps_batch.
[[nodiscard]] std::vector<AnnealResult> anneal_batch(const AnnealTerms& t,
                                                     const std::vector<std::vector<double>>& starts,
                                                     const std::vector<std::uint64_t>& seeds, const AnnealOptions& o,
                                                     int device = 0);

}  // namespace gemflow::distgeom::cuda
