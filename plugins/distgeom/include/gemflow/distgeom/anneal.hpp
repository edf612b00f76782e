#pragma once
// Cartesian simulated annealing of a protein against NMR restraints (restrained molecular
// dynamics with a simple geometric force field), as Xplor-NIH / CNS anneal a structure.
//
// Force field (energies in kcal/mol, distances Å, angles rad; weights per stage, AnnealWeights):
//   bonds       k_bond  Σ (d − d₀)²                 d₀ from the template model (CCD ideal)
//   angles      k_angle Σ (d₁₃ − d₀)²               1-3 distances of the template model
//   chirality   k_chiral Σ (V − V₀)²                signed volumes of every centre with 3 or 4
//                                                   bonded atoms (V₀ ≈ 0: planar sp2 centres); a
//                                                   4-bonded centre has two, over its first three
//                                                   neighbours and over the first two and the
//                                                   fourth, so that every substituent (Hα too)
//                                                   keeps its side
//   planarity   k_plane Σ (1 − cos(φ − φ₀))         one torsion per bond between two planar
//                                                   centres (amides, rings, guanidinium,
//                                                   carboxylates), φ₀ = 0 or π from the template;
//                                                   X-Pro ω: k_plane (1 − cos 2φ)/4 (cis or trans)
//   repel       k_rep Σ max(0, (s·R)² − d²)²         every pair not 1-2 or 1-3 (Xplor-NIH's
//                                                   "repel", quartic; R = Bondi radii sum, polar
//                                                   H to N/O: R = 2.0 Å (hydrogen bonds))
//   NOE         k_noe Σ f(d_eff − U) + f(L − d)     d_eff = (Σ_pairs d⁻⁶)^(−1/6) over every
//                                                   expanded pair of every alternative (Nilges
//                                                   1993); f(x) = x² for 0 < x ≤ 0.5 Å, linear
//                                                   beyond (Xplor's soft asymptote); lower
//                                                   bounds for one-pair restraints only
//   dihedral    k_cdih Σ w Δ²                        Δ = distance (rad) of the torsion outside
//                                                   [lower, upper] (Xplor-NIH CDIH, flat bottom)
//   Ramachandran k_rama Σ min_box (Δφ² + Δψ² + o²)  every non-Gly residue with φ and ψ: Δ =
//                                                   distance (rad) of φ, ψ outside the box's
//                                                   intervals, o its offset (αL: 60°); boxes
//                                                   kRamaBoxes (αR, β/PPII, αL:
//                                                   the favoured regions of Lovell et al.,
//                                                   Proteins 50 (2003) 437, as the coarse boxes
//                                                   of rama_region), flat bottom: a knowledge-
//                                                   based backbone term in place of Xplor-NIH's
//                                                   torsionDB (Bermejo, Clore & Schwieters,
//                                                   Protein Sci. 21 (2012) 1824)
//   symmetry    k_sym Σ (d(a,b) − d(c,d))²          C2 homodimers (c2_symmetry_pairs): NCS pairs
//                                                   d(A_i,A_j) − d(B_i,B_j) keep the chains'
//                                                   internal geometry identical, distance-symmetry
//                                                   pairs d(A_i,B_j) − d(B_i,A_j) make the dimer
//                                                   C2-symmetric (Nilges, Proteins 17 (1993) 297:
//                                                   "distance symmetry"; Xplor-NIH's DistSymmPot),
//                                                   over the Cα atoms, i < j. A distance-difference
//                                                   form: no superposition, invariant under rigid
//                                                   motions of the dimer; with the chiral terms it
//                                                   admits only proper C2 images. Off (k_sym = 0)
//                                                   unless asked for
// Dynamics: velocity Verlet, all masses 100 amu (as Xplor-NIH's annealing protocols), time step
// dt, Berendsen weak coupling to the stage temperature (τ = 0.05 ps; Berendsen et al., J. Chem.
// Phys. 81 (1984) 3684). Schedule (AnnealOptions): an L-BFGS regularisation, a hot stage, a
// cooling ramp in `cooling_stages` stages (temperature linear, force constants geometric), then
// an L-BFGS minimisation with the final weights.
// Sources: Nilges, Clore & Gronenborn, FEBS Lett. 229 (1988) 317 and 239 (1988) 129
// (restrained simulated annealing, hybrid DG-SA); Schwieters, Kuszewski, Tjandra & Clore,
// J. Magn. Reson. 160 (2003) 65 and Prog. NMR Spectrosc. 48 (2006) 47 (Xplor-NIH: repel, NOE
// soft-square potential, CDIH, the annealing schedule).
// Deterministic: the same input and seed give the same coordinates (one thread, a seeded
// SplitMix64 stream with Box–Muller normals for the initial velocities).
#include <array>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <span>
#include <string>
#include <vector>

#include "gemflow/distgeom/bounds.hpp"

namespace gemflow::distgeom {

struct AnnealWeights {
  double bond = 1000.0, angle = 500.0, chiral = 100.0, plane = 300.0;
  double rep = 4.0;         ///< kcal/mol/Å⁴
  double rep_scale = 0.85;  ///< s
  double noe = 30.0;        ///< kcal/mol/Å²
  double cdih = 200.0;      ///< kcal/mol/rad²
  double rama = 50.0;       ///< kcal/mol/rad², Ramachandran boxes
  double sym = 0.0;         ///< kcal/mol/Å², C2 symmetry pairs (0 = off)
};

/// A box of the φ/ψ plane (degrees; each interval counter-clockwise from lower to upper,
/// through ±180 when upper < lower). `offset` (degrees): the term counts the box as
/// offset² further away, so an allowed box costs k·offset² inside.
struct RamaBox {
  double phi_lower, phi_upper, psi_lower, psi_upper, offset;
};
/// The boxes of the Ramachandran term and of rama_region(): αR, β/PPII (favoured), αL (allowed
/// for non-Gly residues, offset 60°: inside it costs as much as 60° outside a favoured box, and a
/// residue near φ = 0 is pulled to the φ < 0 side, not across the φ ≈ 0 barrier into αL).
inline constexpr RamaBox kRamaBoxes[3] = {
    {-160.0, -20.0, -120.0, 50.0, 0.0}, {-180.0, -40.0, 90.0, -150.0, 0.0}, {20.0, 110.0, -30.0, 100.0, 60.0}};

/// Ramachandran region of a residue's φ, ψ (degrees): favoured = αR or β/PPII box (glycine:
/// anywhere), allowed = the rest of φ < 0 or the αL box, outlier otherwise. Coarse boxes after
/// Ramachandran & Sasisekharan, Adv. Protein Chem. 23 (1968) 283, not MolProbity's contours.
enum class RamaRegion { Favoured, Allowed, Outlier };
[[nodiscard]] RamaRegion rama_region(const std::string& residue, double phi, double psi);

/// One dihedral restraint over atom indices (angles in degrees, interval from lower to upper
/// counter-clockwise, wrapping through ±180 when upper < lower).
struct TorsionRestraint {
  std::array<std::size_t, 4> atoms{};
  double lower = -180.0, upper = 180.0, weight = 1.0;
  int id = 0;
};

/// The terms of one molecule. Built once by anneal_terms.
struct AnnealTerms {
  std::size_t n = 0;
  struct Pair {
    std::size_t i, j;
    double d0;
  };
  struct Chiral {
    std::size_t c, a, b, d;
    double v0;
  };
  struct Torsion {
    std::size_t i, j, k, l;
    double phi0;
    bool two_fold;
  };
  struct Noe {
    int id;
    std::vector<std::array<std::size_t, 2>> pairs;
    double lower, upper;
    bool single;
  };
  std::vector<Pair> bonds, angles;
  std::vector<Chiral> chirals;
  std::vector<Torsion> planes;
  std::vector<Noe> noes;
  std::vector<TorsionRestraint> dihedrals;
  /// Ramachandran term: φ = C(i−1)-N-CA-C, ψ = N-CA-C-N(i+1) of every non-Gly residue with both.
  struct Rama {
    std::size_t c_prev, n, ca, c, n_next;
  };
  std::vector<Rama> ramas;
  std::vector<double> radius;                      ///< per atom, Å (Bondi)
  std::vector<unsigned char> polar_h, acceptor;    ///< per atom flags (hydrogen bonds)
  std::vector<std::vector<std::size_t>> excluded;  ///< per atom: sorted 1-2 and 1-3 partners
  /// Symmetry term: k_sym (d(a, b) − d(c, d))² per entry (empty unless c2_symmetry_pairs filled it).
  struct SymmetryPair {
    std::size_t a, b, c, d;
  };
  std::vector<SymmetryPair> symmetry;
};

/// The symmetry pairs of a C2 homodimer over atoms named `names` (default the Cα atoms): for
/// every two residue positions i < j that both have the atom, NCS (A_i, A_j | B_i, B_j) and
/// distance symmetry (A_i, B_j | B_i, A_j), Nilges 1993. Chains in order of first appearance;
/// residues paired by position in their chain (the numbers may differ). Throws
/// std::invalid_argument naming the chains when there are not exactly two, or when they differ in
/// length, in a residue name at some position, or in which of `names` a residue has.
[[nodiscard]] std::vector<AnnealTerms::SymmetryPair> c2_symmetry_pairs(std::span<const AtomInfo> atoms,
                                                                       std::span<const std::string> names = {});

/// Terms of `atoms` with the covalent geometry of `ideal` (n×3, Å: the template model) and
/// `bonds` (indices into atoms), restraints over the same indices. `cis_proline`: X-Pro ω may be
/// cis or trans. `pseudo_corrections`: NOE upper bounds + PairRestraint::correction (Wüthrich
/// pseudo-atom corrections) instead of the file's bounds; the r⁻⁶ sum over a group's atoms is
/// already no longer than any of its distances, so without corrections the bounds are those
/// Xplor-NIH's sum averaging applies. Throws std::invalid_argument on sizes or indices out of
/// range.
[[nodiscard]] AnnealTerms anneal_terms(std::span<const AtomInfo> atoms, std::span<const double> ideal,
                                       std::span<const std::array<std::size_t, 2>> bonds,
                                       std::span<const PairRestraint> restraints,
                                       std::span<const TorsionRestraint> dihedrals, bool cis_proline = true,
                                       bool pseudo_corrections = true);

/// Energy terms (kcal/mol) at coordinates x (n×3) with weights w; `grad` (n×3) receives ∂E/∂x
/// when not empty. All pairs are scanned for repel (O(n²)) when `neighbours` is null, else the
/// list (pairs i < j) is used.
struct AnnealEnergy {
  double total = 0, bond = 0, angle = 0, chiral = 0, plane = 0, rep = 0, noe = 0, cdih = 0, rama = 0, sym = 0;
};
[[nodiscard]] AnnealEnergy anneal_energy(const AnnealTerms& t, const AnnealWeights& w, std::span<const double> x,
                                         std::span<double> grad,
                                         const std::vector<std::array<std::size_t, 2>>* neighbours = nullptr);

struct AnnealOptions {
  std::uint64_t seed = 1;
  double dt = 0.002;       ///< ps
  double t_hot = 2000.0;   ///< K
  double t_final = 100.0;  ///< K
  std::size_t hot_steps = 1500;
  std::size_t cooling_stages = 30;
  std::size_t steps_per_stage = 200;
  std::size_t minimise_iterations = 500;  ///< L-BFGS, before (regularisation) and after
  AnnealWeights hot{1000.0, 500.0, 100.0, 300.0, 0.1, 0.9, 30.0, 10.0, 2.0};
  AnnealWeights final{};  ///< the cooling ramps from hot to final
};

/// Why `o` is not a schedule anneal() can run, or empty: temperatures not positive and finite,
/// t_final above t_hot (a "cooling" that heats), a time step not positive and finite.
[[nodiscard]] std::string anneal_options_problem(const AnnealOptions& o);

struct AnnealResult {
  std::vector<double> coords;       ///< n×3, Å
  AnnealEnergy energy;              ///< at the end, final weights
  std::size_t steps = 0;            ///< MD steps run
  std::size_t noe_violations = 0;   ///< restraints with d_eff − U (or L − d) > 0.5 Å
  double noe_max = 0.0;             ///< Å
  std::size_t cdih_violations = 0;  ///< dihedral restraints off by > 5°
};

/// Whether an annealed structure is accepted into an ensemble: no distance restraint violated by
/// more than 0.5 Å and no dihedral restraint by more than 5°, the criteria NMR ensembles are
/// deposited with ("low energy, few restraint violations"). `distance_violations`: the restraints
/// violated by more than 0.5 Å as the ensemble reports them (restraint_violations: r⁻⁶ sums,
/// pseudo-atom corrections, ring flips); the dihedrals from the annealing's count.
[[nodiscard]] inline bool accepted(const AnnealResult& r, std::size_t distance_violations) {
  return distance_violations == 0 && r.cdih_violations == 0;
}

/// The order in which an ensemble keeps structures (indices into `energy`): by energy, or with
/// `by_acceptance` the accepted ones (accepted[k] != 0) first, each part by energy. Stable: equal
/// energies keep their index order. Throws std::invalid_argument when the sizes differ.
[[nodiscard]] std::vector<std::size_t> ensemble_order(std::span<const double> energy, std::span<const char> accepted,
                                                      bool by_acceptance);

/// Anneals from `start` (n×3, Å). `progress(fraction)` returning false cancels
/// (std::runtime_error("cancelled")). Throws std::invalid_argument on sizes or a schedule
/// anneal_options_problem() refuses, std::runtime_error
/// when the energy becomes non-finite (naming the stage).
[[nodiscard]] AnnealResult anneal(const AnnealTerms& t, std::span<const double> start, const AnnealOptions& o,
                                  const std::function<bool(double)>& progress = {});

/// The pieces of anneal(), for a batched implementation of its MD stages (anneal_cuda.hpp):
/// the stages (hot, then cooling), the L-BFGS regularisation + initial velocities (seeded as
/// anneal()), and the final minimisation + violation counts. anneal() = prepare, the stages,
/// finish.
struct AnnealStage {
  AnnealWeights weights;
  double temperature = 0.0;  ///< K
  std::size_t steps = 0;
  bool hot = false;
};
[[nodiscard]] std::vector<AnnealStage> anneal_stages(const AnnealOptions& o);
void anneal_prepare(const AnnealTerms& t, const AnnealOptions& o, std::vector<double>& x, std::vector<double>& v);
[[nodiscard]] AnnealResult anneal_finish(const AnnealTerms& t, const AnnealOptions& o, std::vector<double> x);

/// A fixed-weight MD run (one stage of anneal()): the reference of the batched CUDA path.
struct MdOptions {
  std::size_t steps = 10;
  double dt = 0.002;               ///< ps
  double t_bath = 300.0;           ///< K, Berendsen target
  std::size_t rebuild_every = 20;  ///< repel pair list rebuilt from the current coordinates
};

/// Runs o.steps velocity-Verlet steps with weights w from x, v (n×3, Å and Å/ps; updated in
/// place) exactly as anneal() does inside a stage, except that the repel pair list is rebuilt
/// every o.rebuild_every steps (anneal() rebuilds on displacement). Returns the final energy.
AnnealEnergy md_steps(const AnnealTerms& t, const AnnealWeights& w, std::span<double> x, std::span<double> v,
                      const MdOptions& o);

/// The repel pair list anneal_energy() takes: pairs i < j, not 1-2 or 1-3, nearer than the
/// largest repel radius × scale + 1.5 Å.
[[nodiscard]] std::vector<std::array<std::size_t, 2>> repel_pairs(const AnnealTerms& t, std::span<const double> x,
                                                                  double scale);

/// Torsion a-b-c-d in radians (−π, π].
[[nodiscard]] double torsion_angle(const double* a, const double* b, const double* c, const double* d);

}  // namespace gemflow::distgeom
