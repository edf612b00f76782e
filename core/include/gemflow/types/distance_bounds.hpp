#pragma once
// Distance bounds matrix for distance geometry (Crippen & Havel 1988).
#include <cstddef>
#include <string>
#include <vector>

#include "gemflow/types/matrix.hpp"

namespace gemflow {

/// Lower and upper interatomic distance bounds, Å, for n atoms.
/// `lower(i,j) <= upper(i,j)`, symmetric, zero diagonal. `labels[i]` names atom i
/// ("A:12:ALA:CA"); `atom_index[i]` maps back to the source Structure's atom (when known).
/// `source(i,j)` says where a bound came from (see BoundSource) and `restraint(i,j)` the id
/// of the restraint that set it (-1 when none), so that smoothing errors can name restraints.
struct DistanceBounds {
  Matrix<double> lower;
  Matrix<double> upper;
  std::vector<std::string> labels;
  std::vector<std::size_t> atom_index;
  Matrix<int> restraint;  ///< restraint id per pair, -1 when none (may be empty)

  [[nodiscard]] std::size_t size() const noexcept { return lower.rows(); }
};

}  // namespace gemflow
