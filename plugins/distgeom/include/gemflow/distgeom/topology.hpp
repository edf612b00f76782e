#pragma once
// Covalent topology of a protein from its sequence: residue templates (wwPDB Chemical Component
// Dictionary ideal coordinates) joined by peptide bonds into chains with ideal geometry.
//
// Plain data in and out (no Gemflow types). Coordinates row-major n×3, Å; angles in degrees.
//
// A chain's residues are, in order: an optional N-terminal cap (ACE), one run of amino acids
// (templates whose _chem_comp.type is a PEPTIDE LINKING type: the 20 standard ones and modified
// ones such as MSE, SEP, TPO), an optional C-terminal cap (NME or NH2); ligands and ions (every
// other template) may come before or after that run, or make a chain of their own, never inside
// it. A chain may hold ligands only.
//
// What the built molecule holds:
//  - every atom of each amino acid template except its leaving atoms (CCD
//    pdbx_leaving_atom_flag Y: OXT, HXT and the second N hydrogen H2), with these terminal
//    exceptions: an uncapped first amino acid is NH3+ (H1, H2, H3 in place of H; IUPAC names;
//    proline NH2+ with H2, H3), an uncapped last one keeps OXT (carboxylate, no HXT); Asp and Glu
//    side chains are carboxylates (no HD2 / HE2, as at neutral pH); histidine protonation by
//    `histidine` or the residue's variant; other templates keep the CCD's protonation (SEP and
//    TPO phosphates as the acids, HOP2 and HOP3; a NEF variant "-HOP2,-HOP3" removes them);
//  - caps: ACE without its aldehyde H (the CCD entry is acetaldehyde; the H's place is the
//    peptide N), its C bonded to N of the next residue; NME without its leaving HN1, NH2 with
//    both HN1 and HN2, their N bonded to C of the previous residue (which then has no OXT);
//  - ligands and ions: all atoms and bonds of their template, no bond to anything else;
//  - bonds: the templates' bonds (_chem_comp_bond) plus C(i)–N(i+1) within a chain, ACE C–N
//    and C–N of NME / NH2;
//  - coordinates: an extended chain (φ, ψ, ω of TopologyOptions) whose every residue is its
//    template's ideal coordinates, rigidly placed on the backbone N, CA, C; the inter-residue
//    geometry (C–N, CA–C–N, C–N–CA, CA–C–O, C–N–H) is Engh & Huber, Acta Cryst. A47 (1991) 392,
//    Table 3; carboxylate C–O 1.249 Å (the CCD entries are the protonated acids); prolines at
//    φ −63° (ring closure). The caps are their templates' ideal coordinates rigidly placed so
//    that the junction takes the same peptide geometry (ACE CH3 in the place of CA(i−1), the
//    NME methyl C in the place of CA(i+1)); the amide hydrogens of NME and NH2 lie in the
//    peptide plane (NME's on the external bisector of C–N–C, NH2's cis and trans to CA) at
//    their template's N–H length. A ligand is its template's ideal coordinates, its centroid
//    20 Å (and 20 Å more for each further ligand of the chain) below the chain's start along z.
//    These coordinates carry the covalent geometry (bond lengths, 1-3 distances, planar
//    groups, chiral volumes) that distgeom.bounds and distgeom.anneal take from a model; they
//    are not a conformation. Chains are placed 40 Å apart along y.
#include <array>
#include <cstddef>
#include <map>
#include <string>
#include <vector>

#include "gemflow/distgeom/bounds.hpp"

namespace gemflow::distgeom {

/// One atom of a residue template (CCD _chem_comp_atom).
struct TemplateAtom {
  std::string name;                    ///< atom_id ("CA", "HB2")
  std::string element;                 ///< upper case
  std::array<double, 3> xyz{0, 0, 0};  ///< ideal coordinates, Å
  bool leaving = false;                ///< pdbx_leaving_atom_flag Y (lost on polymerisation)
};

/// A residue template (one CCD entry).
struct ResidueTemplate {
  std::string id;    ///< "ALA"
  std::string type;  ///< _chem_comp.type, upper case ("L-PEPTIDE LINKING", "NON-POLYMER")
  std::vector<TemplateAtom> atoms;
  std::vector<std::array<std::size_t, 2>> bonds;  ///< indices into atoms
  /// Index of the atom named `name`, or atoms.size() when absent.
  [[nodiscard]] std::size_t find(const std::string& name) const;
};

/// Where a residue joins its chain: an amino acid (a PEPTIDE LINKING template), an N-terminal
/// cap (ACE), a C-terminal cap (NME, NH2), or a ligand / ion (its own residue, no polymer bond).
enum class ResidueRole { AminoAcid, NCap, CCap, Ligand };
/// The role of a template (by its id for the caps, by its type for amino acids).
[[nodiscard]] ResidueRole residue_role(const ResidueTemplate& t);

/// One residue of a chain's sequence.
struct SequenceResidue {
  std::string name;  ///< three-letter code, upper case ("ALA")
  int number = 0;    ///< residue number (author / NEF sequence_code)
  /// Atoms to remove, "-NAME" tokens separated by commas (NEF residue_variant, e.g. "-HE2");
  /// empty or "." for none.
  std::string variant;
};

struct ChainSequence {
  std::string chain;
  std::vector<SequenceResidue> residues;
};

/// Histidine protonation: both ring NH (CCD HIS, imidazolium), δ only, or ε only.
enum class Histidine { Both, Delta, Epsilon };

struct TopologyOptions {
  Histidine histidine = Histidine::Both;
  double phi = -120.0, psi = 130.0, omega = 180.0;  ///< degrees, of the built extended chain
};

/// The built molecule. `atoms[i]` is at xyz[3i..3i+2].
struct MolecularTopology {
  std::vector<AtomInfo> atoms;
  std::vector<double> xyz;
  std::vector<std::array<std::size_t, 2>> bonds;  ///< i < j, sorted
};

/// Builds the chains (see the file comment). `templates` by CCD id. Throws std::invalid_argument
/// naming the chain and residue for a residue without template (listing the templates there
/// are), an amino acid template lacking N, CA, C or O (or without a bond list), an empty chain
/// or a duplicate residue number in a chain, a variant token that names no atom of the
/// residue, a cap that is not at an end of the run of amino acids (ACE right before the first,
/// NME / NH2 right after the last) and a ligand between two amino acids.
[[nodiscard]] MolecularTopology build_topology(const std::vector<ChainSequence>& chains,
                                               const std::map<std::string, ResidueTemplate>& templates,
                                               const TopologyOptions& options = {});

/// Position of atom d from a, b, c: |cd| = bond (Å), angle b-c-d = angle (degrees), dihedral
/// a-b-c-d = torsion (degrees) (the natural extension reference frame, Parsons et al.,
/// J. Comput. Chem. 26 (2005) 1063).
[[nodiscard]] std::array<double, 3> place_atom(const std::array<double, 3>& a, const std::array<double, 3>& b,
                                               const std::array<double, 3>& c, double bond, double angle,
                                               double torsion);

}  // namespace gemflow::distgeom
