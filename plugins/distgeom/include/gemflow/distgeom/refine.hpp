#pragma once
// Refinement of embedded coordinates against the distance-geometry error function.
//
// E(x) = Σ_upper w_u (d²/U² − 1)²            over pairs with d > U
//      + Σ_lower w_l (2L²/(L² + d²) − 1)²     over pairs with d < L
//      + Σ_chiral w_c (V − V₀)²               chiral/planar volumes (Å³)
//      + Σ_ambiguous w_u (d_eff²/U² − 1)²     d_eff = (Σ_pairs d⁻⁶)^(−1/6), over d_eff > U
//      + w₄ Σ_i x_i4²                          (4D only) pushes the 4th dimension out
// Source: Crippen & Havel 1988, §6.4 and Havel, Prog. Biophys. Mol. Biol. 56 (1991) 43 (the
// DG-II error function, "4D embedding then squeeze"); r⁻⁶ sum: Nilges, Proteins 17 (1993) 297.
// Minimised with L-BFGS (liblbfgs, Nocedal 1980; Liu & Nocedal 1989).
#include <array>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <span>
#include <string>
#include <vector>

namespace gemflow::distgeom {

struct ChiralTerm {
  std::size_t centre = 0, a = 0, b = 0, c = 0;
  double volume = 0.0;  ///< target chiral_volume(centre, a, b, c), Å³ (0 for planar centres)
};

struct AmbiguousTerm {
  int id = 0;
  std::vector<std::array<std::size_t, 2>> pairs;  ///< every expanded atom pair of every alternative
  double upper = 0.0;                             ///< Å (restraint upper + correction)
};

struct RefineOptions {
  std::size_t max_iterations = 3000;  ///< L-BFGS iterations over all stages
  double w_upper = 1.0, w_lower = 1.0, w_chiral = 0.1, w_ambiguous = 1.0;
  /// 4D only: weights of Σ x₄² for the squeeze stages (each stage runs to convergence or its
  /// share of the iterations), then x₄ is dropped and the 3D stage runs.
  std::vector<double> w4_schedule{0.0, 0.01, 0.1, 1.0};
  /// Pairs that are not explicit enter the error through a pair list rebuilt every
  /// `rebuild_every` iterations by an O(n²) scan: those nearer than their lower bound + skin,
  /// and those farther than 0.9 × their upper bound.
  double skin = 2.0;
  std::size_t rebuild_every = 50;
  double epsilon = 1e-6;  ///< L-BFGS gradient convergence (relative)
};

struct RefineResult {
  std::vector<double> coords;  ///< n×3, Å
  double error = 0.0;          ///< final E (3D, w₄ = 0)
  std::size_t iterations = 0;
  std::size_t upper_violations = 0;  ///< pairs above U by > 0.5 Å (explicit pairs)
  std::size_t lower_violations = 0;  ///< pairs below L by > 0.5 Å
  double max_violation = 0.0;        ///< Å, over all bound terms
  std::size_t chiral_wrong = 0;      ///< centres whose volume sign differs from a target with |V₀| > 0.5
};

/// Stop request: return false to cancel (refine then throws std::runtime_error("cancelled")).
using RefineProgress = std::function<bool(double fraction, const std::string& message)>;

/// Minimises E starting from `coords` (n×dim, dim 3 or 4, row-major, Å). `lower`/`upper` are
/// the full n×n bounds (Å); pairs with upper < the largest upper value (the diameter) are
/// "explicit" (both terms, always evaluated), the others through the pair list (see skin).
/// Deterministic (single thread, no random numbers).
[[nodiscard]] RefineResult refine(std::span<const double> coords, std::size_t n, std::size_t dim,
                                  std::span<const double> lower, std::span<const double> upper,
                                  std::span<const ChiralTerm> chirals, std::span<const AmbiguousTerm> ambiguous,
                                  const RefineOptions& options, const RefineProgress& progress = {});

/// The same error function evaluated once (all pairs, O(n²)), 3D coordinates.
[[nodiscard]] double dg_error(std::span<const double> coords, std::size_t n, std::span<const double> lower,
                              std::span<const double> upper, std::span<const ChiralTerm> chirals,
                              std::span<const AmbiguousTerm> ambiguous, const RefineOptions& options);

}  // namespace gemflow::distgeom
