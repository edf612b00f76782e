// io.read_molecules: MDL SD files / molfiles → MoleculeSet.
#include <string>

#include "gemflow/io/molecules.hpp"
#include "register.hpp"

namespace gemflow::io {
namespace {

class ReadMolecules final : public Node {
 public:
  static NodeInfo info() {
    return {.id = "io.read_molecules",
            .version = 1,
            .title = "Read molecules",
            .category = "Input/Output",
            .doc =
                "Reads every record of an MDL SD file (.sdf, .sd) or molfile (.mol): connection tables V2000 "
                "and V3000, records separated by $$$$, each ending its table with M  END. Per record: the "
                "name (header line 1), atoms (element, x y z in Å, formal charge from the atom block, "
                "M  CHG or V3000 CHG=; 0 when absent) and bonds with their MDL bond type (1 single, 2 "
                "double, 3 triple, 4 aromatic). Data items (> <field>) are skipped. Records with only 2D "
                "coordinates (all z = 0) are read and logged as a warning.\n"
                "Outputs: molecules (MoleculeSet).",
            .errors = "A malformed record names file:line and the field (columns for V2000).",
            .memory = "The molecules on the host; no device memory (CPU only).",
            .determinism = "Deterministic.",
            .references = "BIOVIA, CTfile Formats (2020)."};
  }
  Output<MoleculeSet> molecules{this, "molecules", "The records of the file, in file order"};
  PathParam path{
      this, "path", PathParam::Mode::Read, "SD file or molfile: .sdf, .sd or .mol", "", {".sdf", ".sd", ".mol"}};

  void execute(NodeContext& ctx) override {
    const auto file = path.value();
    ctx.add_input_file(file);
    ctx.progress(0.0, "reading " + file.filename().string());
    MoleculeSet set;
    try {
      set = read_sdf(file.string(), [&ctx] { return ctx.cancelled(); });
    } catch (const ParseError& e) {
      throw to_input_error(e);
    } catch (const ReadCancelled&) {
      throw Cancelled();
    }
    std::size_t flat = 0;
    for (const auto& m : set.molecules)
      if (m.flat() && m.atoms.size() > 1) {
        if (++flat <= 5) ctx.warn(m.source + ": '" + m.name + "' has only 2D coordinates (every z = 0)");
      }
    if (flat > 5) ctx.warn(std::to_string(flat) + " records have only 2D coordinates");
    ctx.info(file.filename().string() + ": " + DataType<MoleculeSet>::summary(set));
    ctx.record("molecules", static_cast<std::int64_t>(set.size()));
    molecules.set(std::move(set));
    ctx.progress(1.0);
  }
};

}  // namespace

void register_molecule_nodes(PluginRegistrar& r) {
  r.add_type<MoleculeSet>();
  r.add_node<ReadMolecules>();
}

}  // namespace gemflow::io
