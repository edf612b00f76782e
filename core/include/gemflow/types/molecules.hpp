#pragma once
// Small molecules with 3D coordinates and bonds (ligands, conformers), e.g. read from MDL SDF.
#include <array>
#include <cstddef>
#include <string>
#include <vector>

namespace gemflow {

/// One atom of a molecule: element symbol as written in the source, normalised to upper case
/// ("C", "CL", "BR"), position in Å, formal charge (0 when absent).
struct MoleculeAtom {
  std::string element;
  std::array<double, 3> xyz{0, 0, 0};
  int charge = 0;
};

/// A bond between atoms a < b (0-based) with the MDL bond type: 1 single, 2 double, 3 triple,
/// 4 aromatic, 5-8 query types (kept as written; V3000 9/10 coordination/hydrogen bonds too).
struct MoleculeBond {
  std::size_t a = 0, b = 0;
  int order = 1;
};

/// One record: its name (an SD file's header line 1), atoms and bonds.
struct Molecule {
  std::string name;
  std::vector<MoleculeAtom> atoms;
  std::vector<MoleculeBond> bonds;
  std::string source;  ///< "file:line" of the record's first line
  /// True when every z coordinate is 0 (a 2D depiction; dimension code "2D" or flat input).
  [[nodiscard]] bool flat() const noexcept {
    for (const auto& a : atoms)
      if (a.xyz[2] != 0.0) return false;
    return true;
  }
};

/// The records of one or more files, in file order.
struct MoleculeSet {
  std::vector<Molecule> molecules;
  [[nodiscard]] std::size_t size() const noexcept { return molecules.size(); }
};

}  // namespace gemflow
