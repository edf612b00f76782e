// io.read_structure and io.write_structure.
#include <fstream>
#include <set>
#include <stdexcept>

#include <gemflow/types.hpp>

#include "gemflow/io/structure_io.hpp"
#include "register.hpp"

namespace gemflow::io {
namespace {

class ReadStructure final : public Node {
 public:
  static NodeInfo info() {
    return {.id = "io.read_structure",
            .version = 1,
            .title = "Read structure",
            .category = "Input/Output",
            .doc =
                "Reads a molecular structure from a PDB (.pdb, .ent) or mmCIF (.cif, .mmcif) file, chosen "
                "by extension. NMR ensembles become one Structure with several models (every model must "
                "list the same atoms in the same order). Alternate locations: per residue the first altloc "
                "id in the file is kept. mmCIF uses the author numbering (auth_seq_id, auth_asym_id, "
                "auth_atom_id), falling back to label_* fields. PDB elements come from columns 77-78 or "
                "are inferred from the atom name. CONECT records become bonds.",
            .errors =
                "Malformed records name file:line and the columns; a model whose atoms differ from the first "
                "model's names file:line and both atoms.",
            .memory = "The structure on the host; no device memory (CPU only).",
            .determinism = "Deterministic.",
            .references = "wwPDB, Atomic Coordinate Entry Format 3.3; PDBx/mmCIF dictionary."};
  }
  Output<Structure> structure{this, "structure", "Atoms and coordinate models (Å)"};
  PathParam path{this,
                 "path",
                 PathParam::Mode::Read,
                 "Structure file: .pdb, .ent, .cif or .mmcif",
                 "",
                 {".pdb", ".ent", ".cif", ".mmcif"}};
  Param<int> model{this,
                   "model",
                   0,
                   {.min = 0,
                    .doc = "0 = all models; N = only model N (PDB MODEL N / mmCIF "
                           "pdbx_PDB_model_num N; a file without models has model 1)"}};
  Param<std::string> chain_offsets{this,
                                   "chain_offsets",
                                   "",
                                   {.doc = "Renumbers residues per chain: \"B:-71\" or \"A:0, B:-71\" "
                                           "(residue = file residue + offset), so that a deposited structure "
                                           "numbered otherwise (2KYI's chain B 91-161) matches a molecule "
                                           "built from the sequence (20-90) in comparisons; a chain the file "
                                           "lacks is an error"}};

  void execute(NodeContext& ctx) override {
    const auto file = path.value();
    ctx.add_input_file(file);
    ctx.progress(0.0, "reading " + file.filename().string());
    std::vector<std::string> warnings;
    try {
      auto s =
          read_structure(file.string(), {.model = *model, .cancel = [&ctx] { return ctx.cancelled(); }}, &warnings);
      for (const auto& w : warnings) ctx.warn(file.filename().string() + ": " + w);
      const auto offsets = parse_chain_offsets(chain_offsets.value(), "chain_offsets");
      for (const auto& [chain, off] : offsets) {
        std::size_t renumbered = 0;
        for (auto& a : s.atoms)
          if (a.chain == chain) a.residue_number += off, ++renumbered;
        if (renumbered == 0) {
          std::set<std::string> have;
          for (const auto& a : s.atoms) have.insert(a.chain);
          std::string list;
          for (const auto& c : have) list += (list.empty() ? "" : ", ") + c;
          std::string msg = "parameter 'chain_offsets': chain '" + chain + "' is not in ";
          msg += file.filename().string();
          msg += " (chains: " + list + ")";
          throw InputError(msg);
        }
        ctx.info(file.filename().string() + ": chain " + chain + " renumbered by " + std::to_string(off));
      }
      ctx.info(file.filename().string() + ": " + std::to_string(s.atom_count()) + " atoms, " +
               std::to_string(s.model_count()) + " model(s), " + std::to_string(s.bonds.size()) + " bonds");
      structure.set(std::move(s));
    } catch (const ParseError& e) {
      throw to_input_error(e);
    } catch (const ReadCancelled&) {
      throw Cancelled();
    }
    ctx.progress(1.0);
  }
};

class WriteStructure final : public Node {
 public:
  static NodeInfo info() {
    return {.id = "io.write_structure",
            .version = 1,
            .title = "Write structure",
            .category = "Input/Output",
            .doc =
                "Writes a structure, format by extension: .pdb/.ent (MODEL/ENDMDL for more than one model, "
                "TER, CONECT for bonds), .cif/.mmcif (mmCIF _atom_site loop with auth_* and label_* ids and "
                "pdbx_PDB_model_num), .vtp (VTK XML PolyData, ASCII, for ParaView: atoms of the first "
                "model as points with point data 'element' (atomic number), 'residue_number', 'b_factor', "
                "bonds as lines; bonds perceived from covalent radii when the structure has none). The file "
                "is written atomically. Segment ids are kept by PDB only.",
            .errors =
                "A structure without a coordinate model; an unknown extension; a write error names the file "
                "and the system's reason (an earlier file is left as it was).",
            .memory = "The file's text; no device memory.",
            .determinism = "Deterministic.",
            .references = "wwPDB, Atomic Coordinate Entry Format 3.3; PDBx/mmCIF dictionary; VTK XML file formats."};
  }
  Input<Structure> structure{this, "structure", "Structure to write"};
  PathParam path{this,
                 "path",
                 PathParam::Mode::Write,
                 "Output file: .pdb, .ent, .cif, .mmcif or .vtp (relative: to the run's output folder)",
                 "",
                 {".pdb", ".ent", ".cif", ".mmcif", ".vtp"}};

  void execute(NodeContext& ctx) override {
    const auto file = path.value();
    const Structure& s = *structure;
    StructureFormat format;
    try {
      format = structure_format_from_path(file.string());
    } catch (const ParseError& e) {
      throw InputError("parameter 'path': " + printable(e.message()));
    }
    if (s.models.empty()) throw InputError("structure has no coordinate model to write");
    ctx.write_file(file, [&](std::ostream& out) {
      try {
        switch (format) {
          case StructureFormat::Pdb: write_pdb(out, s); break;
          case StructureFormat::Mmcif: write_mmcif(out, s, file.stem().string()); break;  // title: _struct.title
          case StructureFormat::Vtp: write_vtp(out, s, 0); break;
        }
      } catch (const std::invalid_argument& e) {
        throw InputError(file.filename().string() + ": " + e.what());
      }
    });
    ctx.info("wrote " + file.string());
  }
};

}  // namespace

void register_structure_nodes(PluginRegistrar& r) {
  r.add_node<ReadStructure>();
  r.add_node<WriteStructure>();
}

}  // namespace gemflow::io
