#pragma once
// Molecular structure: atoms with identity and an ensemble of coordinate models.
#include <array>
#include <cstddef>
#include <optional>
#include <string>
#include <vector>

namespace gemflow {

/// One atom's identity (shared by all models of a Structure).
struct Atom {
  std::string name;        ///< PDB atom name, trimmed ("CA", "HB2", "H1'")
  std::string element;     ///< element symbol, upper case ("C", "H", "SE")
  std::string residue;     ///< residue name ("ALA")
  int residue_number = 0;  ///< author residue sequence number
  std::string insertion;   ///< insertion code ("" when none)
  std::string chain;       ///< author chain id
  std::string segment;     ///< segment id (PDB cols 73-76; "" when none)
  bool hetero = false;     ///< HETATM record
  int serial = 0;          ///< serial number in the source file
  double occupancy = 1.0;
  double b_factor = 0.0;
};

using Vec3 = std::array<double, 3>;

/// Atoms plus one or more coordinate models (NMR ensembles), coordinates in Å.
/// `models[m][i]` is the position of `atoms[i]` in model m; every model has atoms.size() rows.
/// Alternate locations are resolved on reading (the reader documents which one it keeps).
struct Structure {
  std::string title;
  std::vector<Atom> atoms;
  std::vector<std::vector<Vec3>> models;
  /// Optional bonds (pairs of atom indices), e.g. from CONECT or perceived geometry.
  std::vector<std::array<std::size_t, 2>> bonds;

  [[nodiscard]] std::size_t atom_count() const noexcept { return atoms.size(); }
  [[nodiscard]] std::size_t model_count() const noexcept { return models.size(); }
  /// Index of the atom (chain, residue_number, name); nullopt when absent. Linear scan.
  [[nodiscard]] std::optional<std::size_t> find(const std::string& chain, int residue_number,
                                                const std::string& name) const;
};

}  // namespace gemflow
