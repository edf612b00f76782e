#pragma once
// Residue templates from wwPDB Chemical Component Dictionary entries (mmCIF): the 20 standard
// amino acids, the caps ACE, NME, NH2, the modified amino acids MSE, SEP, TPO, and the ligands
// HEM and NA, compiled into the plugin (plugins/distgeom/data/ccd, see PROVENANCE.md there).
#include <map>
#include <string>
#include <string_view>

#include <gemflow/distgeom/topology.hpp>

namespace gemflow::distgeom::nodes {

/// One CCD entry's text: _chem_comp.type, _chem_comp_atom (atom_id, type_symbol,
/// pdbx_leaving_atom_flag, pdbx_model_Cartn_{x,y,z}_ideal) and _chem_comp_bond (atom_id_1,
/// atom_id_2), each a loop or, for one row, plain items (a one-atom entry has no bond table).
/// `source` names the text in errors. Throws io::ParseError (file:line) for a missing table or
/// column, an ideal coordinate that is not a number, or a bond naming an unknown atom.
[[nodiscard]] ResidueTemplate parse_ccd_entry(std::string_view text, const std::string& source);

/// The compiled-in templates by CCD id (parsed once; thread-safe).
[[nodiscard]] const std::map<std::string, ResidueTemplate>& standard_templates();

/// One-letter code → CCD id of the 20 standard amino acids; empty for other letters.
[[nodiscard]] std::string three_letter(char one);

}  // namespace gemflow::distgeom::nodes
