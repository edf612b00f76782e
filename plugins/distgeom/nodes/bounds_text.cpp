// Text about distance bounds in the user's atom names (see bounds_text.hpp).
#include "bounds_text.hpp"

#include <gemflow/distgeom/bounds.hpp>

#include <cstdio>

namespace gemflow::distgeom::text {

std::string num(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.4g", v);
  return buf;
}

std::string label(const DistanceBounds& b, std::size_t i) {
  if (i < b.labels.size() && !b.labels[i].empty()) return b.labels[i];
  return "atom " + std::to_string(i);
}

std::string restraint_of(const DistanceBounds& b, std::size_t i, std::size_t j) {
  if (b.restraint.rows() != b.size() || b.restraint.cols() != b.size()) return "";
  const int id = b.restraint(i, j);
  return id >= 0 ? ", restraint " + std::to_string(id) : "";
}

std::string pair_text(const DistanceBounds& b, std::size_t i, std::size_t j) {
  return "(" + label(b, i) + ", " + label(b, j) + ")";
}

std::string defect_text(const DistanceBounds& b, const BoundsDefect& d) {
  using K = BoundsDefect::Kind;
  const std::string p = pair_text(b, d.i, d.j);
  switch (d.kind) {
    case K::Size: return d.message();
    case K::NotANumber: return "bounds of " + p + " are NaN (lower " + num(d.lower) + ", upper " + num(d.upper) + ")";
    case K::Negative: return "negative bound for " + p + ": lower " + num(d.lower) + " Å, upper " + num(d.upper) + " Å";
    case K::InfiniteLower: return "infinite lower bound for " + p;
    case K::NonzeroDiagonal:
      return "nonzero diagonal for " + label(b, d.i) + ": lower " + num(d.lower) + " Å, upper " + num(d.upper) +
             " Å (must be 0)";
    case K::NotSymmetric:
      return "bounds are not symmetric for " + p + ": lower " + num(d.lower) + " vs " + num(d.lower_ji) + " Å, upper " +
             num(d.upper) + " vs " + num(d.upper_ji) + " Å";
    case K::LowerAboveUpper:
      return "L" + p + " = " + num(d.lower) + " Å > U = " + num(d.upper) + " Å" + restraint_of(b, d.i, d.j);
  }
  return d.message();
}

std::string inconsistency_text(const DistanceBounds& b, const SmoothingReport& r) {
  std::string s = "L" + pair_text(b, r.i, r.j) + "=" + num(r.lower) + " Å > U=" + num(r.upper) + " Å";
  if (r.path) {
    const InconsistencyPath& p = *r.path;
    s += "; path: " + label(b, p.atoms[0]);
    for (std::size_t k = 0; k + 1 < p.atoms.size(); ++k)
      s += " -[U " + num(p.upper[k]) + restraint_of(b, p.atoms[k], p.atoms[k + 1]) + "]- " + label(b, p.atoms[k + 1]);
    s += "; its upper bounds sum to " + num(p.upper_sum) + " Å, but L" + pair_text(b, p.a(), p.b()) + " = " +
         num(p.lower) + " Å" + restraint_of(b, p.a(), p.b()) + " (excess " + num(p.excess()) + " Å)";
  }
  s += "; " + std::to_string(r.inconsistent_pairs) + " pair(s) inconsistent";
  return s;
}

std::string untabulated_radii_warning(std::span<const std::string> elements) {
  const auto missing = untabulated_elements(elements);
  if (missing.empty()) return "";
  std::string list;
  for (const auto& e : missing) list += (list.empty() ? "" : ", ") + element_symbol(e);
  return "no tabulated covalent and van der Waals radii for element(s) " + list +
         ": carbon's (0.77 Å, 1.70 Å) are used for their bonds and vdW lower bounds";
}

}  // namespace gemflow::distgeom::text
