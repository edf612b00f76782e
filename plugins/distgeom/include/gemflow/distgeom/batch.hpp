#pragma once
// BoundsBatch: many small distance-bounds matrices (one per molecule) on one wire, for batched
// smoothing and embedding of ligands / conformer ensembles (nodes distgeom.bounds_from_molecules,
// distgeom.smooth_batch).
#include <algorithm>
#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include <gemflow/data.hpp>
#include <gemflow/types/distance_bounds.hpp>

namespace gemflow::distgeom {

/// One DistanceBounds per molecule (Å; labels name atoms as "O12": element and 1-based atom
/// number in the record) and the molecule names, names.size() == bounds.size(). `source[k]`
/// is the index of molecule k in the MoleculeSet it was built from (kept when smooth_batch
/// skips inconsistent molecules, so that reports point at the input record).
struct BoundsBatch {
  std::vector<DistanceBounds> bounds;
  std::vector<std::string> names;
  std::vector<std::size_t> source;
  [[nodiscard]] std::size_t size() const noexcept { return bounds.size(); }
};

}  // namespace gemflow::distgeom

namespace gemflow {

template <>
struct DataType<distgeom::BoundsBatch> {
  static constexpr std::string_view name = "BoundsBatch";
  static constexpr std::string_view doc =
      "Distance bounds (Å) of many molecules, one DistanceBounds per molecule, with molecule names";
  static std::string summary(const distgeom::BoundsBatch& b) {
    std::size_t atoms = 0, largest = 0;
    for (const auto& m : b.bounds) atoms += m.size(), largest = std::max(largest, m.size());
    return std::to_string(b.size()) + " molecule(s), " + std::to_string(atoms) + " atoms, largest " +
           std::to_string(largest);
  }
};

}  // namespace gemflow
