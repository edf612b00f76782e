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
                   "QR ...), old X-PLOR methylene names; the pseudo-atom correction of Wüthrich et al. (1983) "
                   "(1.0 Å CH2/CH3, 2.0 Å ring pair, 2.4 Å Val/Leu methyl pair or whole ring) is stored per "
                   "restraint (upper itself stays as in the file). Residue-name mismatches are reported with a "
                   "suggested numbering offset; an atom that cannot be found is an error naming file:line, or "
                   "with on_unknown_atom: skip the restraint is left out and counted. Device memory: none. "
                   "Deterministic."};
  }
  enum class Format { Auto, Nef, Xplor };
  enum class OnUnknown { Error, Skip };
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
