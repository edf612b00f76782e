#pragma once
// User-facing text about distance bounds, in the user's atom names: shared by the smoothing
// nodes so that the single and batched paths report input defects and inconsistencies alike.
#include <cstddef>
#include <span>
#include <string>

#include <gemflow/distgeom/smoothing.hpp>
#include <gemflow/types.hpp>

namespace gemflow::distgeom::text {

/// A length with 4 significant digits ("3.2", "0.0001").
std::string num(double v);
/// "A:12:ALA:HA", or "atom 12" (0-based) when the bounds carry no labels.
std::string label(const DistanceBounds& b, std::size_t i);
/// ", restraint 117" when bounds.restraint names one for (i, j), else "".
std::string restraint_of(const DistanceBounds& b, std::size_t i, std::size_t j);
/// "(A:12:ALA:HA, A:40:LEU:HB2)".
std::string pair_text(const DistanceBounds& b, std::size_t i, std::size_t j);
/// The input-check failure (check_bounds) in atom names.
std::string defect_text(const DistanceBounds& b, const BoundsDefect& d);
/// "L(a, b)=5.1 Å > U=3.2 Å; path: a -[U 2, restraint 117]- c ...; N pair(s) inconsistent":
/// the first inconsistent pair and the chain of input bounds that contradicts a lower bound.
std::string inconsistency_text(const DistanceBounds& b, const SmoothingReport& r);
/// "" or the warning that elements without tabulated radii (untabulated_elements) get carbon's
/// (QA: an unknown element, a metal ion say, was given carbon's radii silently).
std::string untabulated_radii_warning(std::span<const std::string> elements);

}  // namespace gemflow::distgeom::text
