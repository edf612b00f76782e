// io.read_restraints.
#include <gemflow/types.hpp>

#include "gemflow/io/restraints_io.hpp"
#include "register.hpp"

namespace gemflow::io {
namespace {

class ReadRestraints final : public Node {
 public:
  static NodeInfo info() {
    return {.id = "io.read_restraints",
            .version = 1,
            .title = "Read restraints",
            .category = "Input/Output",
            .doc = "Reads NMR distance restraints from NEF (_nef_distance_restraint loops; rows sharing a "
                   "restraint_id are one ambiguous restraint) or Xplor-NIH/CNS .tbl files (assign (sel) (sel) "
                   "d dminus dplus: lower = d - dminus, upper = d + dplus; `or` alternatives, ARIA `weight`, "
                   "HADDOCK nested selections). With a structure, every atom selection is resolved to atom "
                   "indices: NEF/Xplor wildcards (% * # +), H/HN, N-terminal H1-3, pseudo-atoms (QB, MG1, QQD, "
                   "QR ...), the nomenclature table (IUPAC/NEF, PDB v2/v3, X-PLOR/CNS HN/HT1-3/OT1-2, CYANA, "
                   "AMBER names), old X-PLOR methylene names; the pseudo-atom correction "
                   "(1.0 Å CH2/CH3, 2.0 Å ring pair, 2.4 Å Val/Leu methyl pair or whole ring) is stored per "
                   "restraint (upper itself stays as in the file). \"Ambiguous\" means more than one assignment "
                   "alternative; \"group\" one alternative with several atom pairs (pseudo-atoms, wildcards).",
            .errors = "A residue name that differs from the structure's names file:line and the residue_offset under "
                      "which the names agree (set residue_offset to apply it); an atom that cannot be found names "
                      "file:line, or with on_unknown_atom: skip the restraint is left out and counted "
                      "(restraints_skipped, carried to distgeom.compare's report), unless more than "
                      "max_skipped_fraction of them would be. Bounds that are not finite or beyond 1000 Å are errors "
                      "at their line.",
            .memory = "The restraints on the host; no device memory.",
            .determinism = "Deterministic.",
            .references = "Nomenclature: Markley et al. 1998 (IUPAC), BMRB; pseudo-atom corrections: Wüthrich, "
                          "Billeter & Braun 1983."};
  }
  enum class Format { Auto, Nef, Xplor };
  enum class OnUnknown { Error, Skip };
  enum class OnMismatch { Error, Warn };
  Input<Structure> structure{this, "structure",
                             "Structure to resolve atom selections against (optional; without it the "
                             "restraints keep their selectors only)",
                             PortUse::Optional};
  Output<RestraintSet> restraints{this, "restraints", "Distance restraints (Å), resolved when a structure is given"};
  Output<Table> report{this, "report",
                       "What was read and resolved: columns item, count, examples (one row per check)"};
  PathParam path{this, "path", PathParam::Mode::Read, "Restraint file: .nef, or .tbl/.xplor/.cns/.noe (Xplor-NIH)"};
  Choice<Format> format{this, "format", Format::Auto,
                        {{Format::Auto, "auto"}, {Format::Nef, "nef"}, {Format::Xplor, "xplor"}},
                        {.doc = "auto: by extension (.nef → nef; .tbl, .xplor, .cns, .noe → xplor)"}};
  Choice<OnUnknown> on_unknown_atom{this, "on_unknown_atom", OnUnknown::Error,
                                    {{OnUnknown::Error, "error"}, {OnUnknown::Skip, "skip"}},
                                    {.doc = "An atom or residue missing from the structure: error (fail naming "
                                            "file:line) or skip (leave the restraint out; counted in the report "
                                            "and the warnings)"}};
  Param<double> max_skipped_fraction{this, "max_skipped_fraction", 0.5,
                                     {.min = 0, .max = 1,
                                      .doc = "With on_unknown_atom: skip, the largest fraction of the restraints "
                                             "that may be left out; more (or all) is an error listing them"}};
  Param<std::int64_t> residue_offset{this, "residue_offset", 0,
                                     {.min = -100000, .max = 100000,
                                      .doc = "Added to the file's residue numbers: structure residue = file "
                                             "residue + offset (the error for mismatching names suggests it)"}};
  Choice<OnMismatch> on_residue_mismatch{this, "on_residue_mismatch", OnMismatch::Error,
                                         {{OnMismatch::Error, "error"}, {OnMismatch::Warn, "warn"}},
                                         {.doc = "A residue name of the file that differs from the structure's "
                                                 "(HIE, CYX ... count as HIS, CYS): error (naming file:line and "
                                                 "a residue_offset that fixes it) or warn"}};

  void execute(NodeContext& ctx) override {
    const auto file = path.value();
    ctx.add_input_file(file);
    ctx.progress(0.0, "reading " + file.filename().string());
    RestraintFormat f = *format == Format::Nef     ? RestraintFormat::Nef
                        : *format == Format::Xplor ? RestraintFormat::Xplor
                                                   : RestraintFormat::Auto;
    Table t;
    t.columns = {"item", "count", "examples"};
    try {
      RestraintSet set = read_distance_restraints(file.string(), f);
      ctx.throw_if_cancelled();
      if (structure.connected()) {
        ctx.progress(0.5, "resolving atoms");
        ResolveOptions o;
        o.on_unknown_atom = *on_unknown_atom == OnUnknown::Skip ? UnknownAtomPolicy::Skip : UnknownAtomPolicy::Error;
        o.on_residue_mismatch =
            *on_residue_mismatch == OnMismatch::Warn ? ResidueMismatchPolicy::Warn : ResidueMismatchPolicy::Error;
        o.max_skipped_fraction = max_skipped_fraction.value();
        o.residue_offset = static_cast<int>(residue_offset.value());
        ResolveReport rep = resolve_restraints(set, *structure, o);
        for (const auto& it : rep.items)
          t.rows.push_back({it.what, static_cast<std::int64_t>(it.count), it.examples});
        ctx.record("restraints_skipped", static_cast<std::int64_t>(rep.skipped));
      } else {
        std::size_t alts = 0;
        for (const auto& r : set.restraints) alts += r.alternatives.size();
        t.rows.push_back({std::string("restraints read"), static_cast<std::int64_t>(set.restraints.size()), std::string()});
        t.rows.push_back({std::string("alternatives (atom-selection pairs)"), static_cast<std::int64_t>(alts),
                          std::string()});
        t.rows.push_back({std::string("not resolved: no structure connected"), std::int64_t{0}, std::string()});
      }
      for (const auto& w : set.warnings) {
        ctx.warn(file.filename().string() + ": " + w);
        t.rows.push_back({std::string("warning"), std::int64_t{1}, w});
      }
      ctx.info(file.filename().string() + ": " + std::to_string(set.restraints.size()) + " distance restraints (" +
               set.format + ")");
      ctx.record("restraints", static_cast<std::int64_t>(set.restraints.size()));
      restraints.set(std::move(set));
      report.set(std::move(t));
    } catch (const ParseError& e) {
      throw to_input_error(e);
    }
    ctx.progress(1.0);
  }
};

}  // namespace

void register_restraint_nodes(PluginRegistrar& r) { r.add_node<ReadRestraints>(); }

}  // namespace gemflow::io
