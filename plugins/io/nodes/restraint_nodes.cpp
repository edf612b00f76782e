// io.read_restraints.
#include <gemflow/types.hpp>

#include <filesystem>
#include <functional>
#include <map>
#include <string>
#include <utility>

#include "gemflow/io/restraints_io.hpp"
#include "gemflow/io/star.hpp"
#include "register.hpp"

namespace gemflow::io {
namespace {

const std::pair<const char*, RestraintFormat> kFormatNames[] = {
    {"auto", RestraintFormat::Auto},   {"nef", RestraintFormat::Nef},          {"xplor", RestraintFormat::Xplor},
    {"cyana", RestraintFormat::Cyana}, {"nmr-star", RestraintFormat::NmrStar}, {"amber", RestraintFormat::Amber},
    {"mr", RestraintFormat::Mr}};

/// `gemflow validate`'s look at a restraint file: its format and what it holds, or the reader's
/// error (file:line). AMBER files are only recognised: their atoms are numbers of the structure.
std::string inspect_restraint_file(const std::string& file,
                                   const std::function<const ParamValue*(const std::string&)>& param) {
  RestraintReadOptions ro;
  if (const ParamValue* v = param("format"); v && std::holds_alternative<std::string>(*v))
    for (const auto& [name, f] : kFormatNames)
      if (std::get<std::string>(*v) == name) ro.format = f;
  const std::string text = read_text_file(file);
  std::string how = "set in the workflow";
  if (ro.format == RestraintFormat::Auto) {
    const FormatDetection det = detect_restraint_format(text, file);
    ro.format = det.format;
    how = det.reason;
  }
  const std::string head = std::string("restraint format ") + restraint_format_name(ro.format) + " (" + how + ")";
  if (ro.format == RestraintFormat::Amber)
    return head + "; its atom numbers are read against the structure at run time";
  MrReport mr;
  ro.mr_report = &mr;
  const RestraintSet set = parse_restraints(text, file, ro);
  std::size_t skipped = 0;
  for (const auto& s : mr.sections) skipped += !s.skipped.empty();
  return head + ": " + std::to_string(set.restraints.size()) + " distance and " + std::to_string(set.dihedrals.size()) +
         " dihedral restraints" +
         (mr.sections.empty()
              ? std::string()
              : ", " + std::to_string(mr.sections.size()) + " sections (" + std::to_string(skipped) + " skipped)") +
         (set.warnings.empty() ? std::string() : ", " + std::to_string(set.warnings.size()) + " warnings");
}

class ReadRestraints final : public Node {
 public:
  ReadRestraints() { path.inspect(inspect_restraint_file); }

  static NodeInfo info() {
    return {.id = "io.read_restraints",
            .version = 1,
            .title = "Read restraints",
            .category = "Input/Output",
            .doc =
                "Reads NMR distance and dihedral restraints. Formats, told apart by content (format: auto) "
                "or named: NEF (_nef_distance_restraint and _nef_dihedral_restraint loops; rows sharing a "
                "restraint_id are OR-ed alternatives, rows sharing a restraint_combination_id AND-ed, per-row "
                "bounds of NEF v1.1 allowed), Xplor-NIH/CNS .tbl (assign (sel) (sel) d dminus dplus: lower = d "
                "- dminus, upper = d + dplus; `or` alternatives, ARIA `weight`, HADDOCK nested selections; "
                "dihedrals assign (sel)x4 k angle range exp: angle ± range), CYANA .upl/.lol/.aco (a .upl "
                "takes the .lol and .aco of the same name beside it), NMR-STAR v3 (_Gen_dist_constraint, "
                "_Torsion_angle_constraint), AMBER &rst (needs the structure, in the prmtop's atom order) and "
                "wwPDB .mr bundles (split into sections by content, each read by its format; sections and "
                "statements of other kinds are skipped and listed). With a structure, every atom selection "
                "is resolved to atom indices: NEF/Xplor wildcards (% * # +), H/HN, N-terminal H1-3, "
                "pseudo-atoms (QB, MG1, QQD, QR ...), the nomenclature table (IUPAC/NEF, PDB v2/v3, "
                "X-PLOR/CNS HN/HT1-3/OT1-2, CYANA, AMBER names), old X-PLOR methylene names; each dihedral "
                "selection must give one atom. The pseudo-atom correction (1.0 Å CH2/CH3, 2.0 Å ring pair, "
                "2.4 Å Val/Leu methyl pair or whole ring) is stored per restraint (upper itself stays as in "
                "the file). \"Ambiguous\" means more than one assignment alternative; \"group\" one "
                "alternative with several atom pairs (pseudo-atoms, wildcards). Dihedral angles are in degrees "
                "(interval lower..upper, through ±180 when upper < lower). See docs/nmr-structure.md, "
                "\"Restraint formats\", for what each format reader reads and what it does not.",
            .errors =
                "A residue name that differs from the structure's names file:line and the residue_offset under "
                "which the names agree (set residue_offset to apply it); an atom that cannot be found names "
                "file:line, or with on_unknown_atom: skip the restraint is left out and counted "
                "(restraints_skipped, carried to distgeom.compare's report), unless more than "
                "max_skipped_fraction of them would be (distances and dihedrals counted apart). Bounds that "
                "are not finite or beyond 1000 Å are errors at their line. A file whose format is not known "
                "(or a STAR file without restraint loops, e.g. chemical shifts only) is an error naming the "
                "first line that fits no format.",
            .memory = "The restraints on the host; no device memory.",
            .determinism = "Deterministic.",
            .references =
                "Nomenclature: Markley et al. 1998 (IUPAC), BMRB; pseudo-atom corrections: Wüthrich, "
                "Billeter & Braun 1983."};
  }
  enum class Format { Auto, Nef, Xplor, Cyana, NmrStar, Amber, Mr };
  enum class OnUnknown { Error, Skip };
  enum class OnMismatch { Error, Warn };
  Input<Structure> structure{this, "structure",
                             "Structure to resolve atom selections against (optional; without it the "
                             "restraints keep their selectors only)",
                             PortUse::Optional};
  Output<RestraintSet> restraints{this, "restraints",
                                  "Distance restraints (Å) and dihedral restraints (degrees), resolved when a "
                                  "structure is given"};
  Output<Table> report{this, "report", "What was read and resolved: columns item, count, examples (one row per check)"};
  PathParam path{this, "path", PathParam::Mode::Read,
                 "Restraint file: NEF (.nef), Xplor-NIH/CNS (.tbl ...), CYANA (.upl, .lol, .aco), NMR-STAR v3 "
                 "(.str), AMBER &rst, wwPDB .mr bundle"};
  Choice<Format> format{this,
                        "format",
                        Format::Auto,
                        {{Format::Auto, "auto"},
                         {Format::Nef, "nef"},
                         {Format::Xplor, "xplor"},
                         {Format::Cyana, "cyana"},
                         {Format::NmrStar, "nmr-star"},
                         {Format::Amber, "amber"},
                         {Format::Mr, "mr"}},
                        {.doc = "auto: by the file's content (STAR loops, assign statements, CYANA lines, &rst "
                                "namelists, '*' headers of .mr bundles); a name reads the file as that format"}};
  Param<bool> companions{this,
                         "companions",
                         true,
                         {.doc = "For a CYANA .upl: also read the .lol (lower limits, merged into the upper "
                                 "limits of the same atom pairs) and .aco (dihedrals) of the same name beside it, "
                                 "when they exist"}};
  Choice<OnUnknown> on_unknown_atom{this,
                                    "on_unknown_atom",
                                    OnUnknown::Error,
                                    {{OnUnknown::Error, "error"}, {OnUnknown::Skip, "skip"}},
                                    {.doc = "An atom or residue missing from the structure: error (fail naming "
                                            "file:line) or skip (leave the restraint out; counted in the report "
                                            "and the warnings)"}};
  Param<double> max_skipped_fraction{this,
                                     "max_skipped_fraction",
                                     0.5,
                                     {.min = 0,
                                      .max = 1,
                                      .doc = "With on_unknown_atom: skip, the largest fraction of the restraints "
                                             "that may be left out; more (or all) is an error listing them"}};
  Param<std::int64_t> residue_offset{this,
                                     "residue_offset",
                                     0,
                                     {.min = -100000,
                                      .max = 100000,
                                      .doc = "Added to the file's residue numbers: structure residue = file "
                                             "residue + offset (the error for mismatching names suggests it)"}};
  Param<std::string> chain_offsets{this,
                                   "chain_offsets",
                                   "",
                                   {.doc = "Per chain of the file (chain or segid as written), replacing "
                                           "residue_offset for that chain: \"B:-71\" or \"A:0, B:-71\" "
                                           "(structure residue = file residue + offset; for chains numbered "
                                           "apart, as 2KYI's chain B in the deposited files). The errors for "
                                           "mismatching names or atoms suggest it"}};
  Choice<OnMismatch> on_residue_mismatch{this,
                                         "on_residue_mismatch",
                                         OnMismatch::Error,
                                         {{OnMismatch::Error, "error"}, {OnMismatch::Warn, "warn"}},
                                         {.doc = "A residue name of the file that differs from the structure's "
                                                 "(HIE, CYX ... count as HIS, CYS): error (naming file:line and "
                                                 "a residue_offset that fixes it) or warn"}};

  void execute(NodeContext& ctx) override {
    const auto file = path.value();
    ctx.add_input_file(file);
    ctx.progress(0.0, "reading " + file.filename().string());
    Table t;
    t.columns = {"item", "count", "examples"};
    auto row = [&](const std::string& what, std::size_t n, const std::string& examples) {
      t.rows.push_back({what, static_cast<std::int64_t>(n), examples});
    };
    try {
      RestraintReadOptions ro;
      ro.format = kFormatNames[static_cast<int>(*format)].second;
      if (structure.connected()) ro.structure = &*structure;
      ro.cancel = [&ctx] { return ctx.cancelled(); };
      MrReport mr;
      ro.mr_report = &mr;
      const std::string text = read_text_file(file.string());
      std::string how = "format set in the workflow";
      if (ro.format == RestraintFormat::Auto) {
        const FormatDetection det = detect_restraint_format(text, file.string());
        ro.format = det.format;
        how = det.reason;
      }
      RestraintSet set = parse_restraints(text, file.string(), ro);
      row(std::string("format: ") + restraint_format_name(ro.format) + " (" + how + ")", 1, "");
      for (const auto& sec : mr.sections)
        row("section lines " + std::to_string(sec.first_line) + "-" + std::to_string(sec.last_line) + " (" +
                sec.format + ")" + (sec.skipped.empty() ? ": read" : ": skipped"),
            sec.distances + sec.dihedrals,
            sec.skipped.empty()
                ? std::to_string(sec.distances) + " distance, " + std::to_string(sec.dihedrals) + " dihedral restraints"
                : sec.skipped);
      // CYANA: the .lol and .aco beside a .upl.
      if (ro.format == RestraintFormat::Cyana && *companions && file.extension() == ".upl") {
        for (const char* ext : {".lol", ".aco"}) {
          auto other = file;
          other.replace_extension(ext);
          // Recorded absent too ("missing" in the key): a companion that appears later makes the
          // node run again instead of the cache answering without it (a user's .aco was ignored).
          ctx.add_input_file(other);
          std::error_code ec;
          if (!std::filesystem::is_regular_file(other, ec)) continue;
          RestraintSet more =
              parse_cyana_restraints(read_text_file(other.string()), other.string(), CyanaKind::Auto, ro.cancel);
          if (std::string(ext) == ".lol") {
            merge_cyana_limits(set, more);
          } else {
            for (auto& d : more.dihedrals) set.dihedrals.push_back(std::move(d));
            for (auto& w : more.warnings) set.warnings.push_back(other.filename().string() + ": " + w);
          }
          row(std::string("companion file read: ") + other.filename().string(),
              more.restraints.size() + more.dihedrals.size(), "");
        }
      }
      ctx.throw_if_cancelled();
      const std::size_t read_distances = set.restraints.size(), read_dihedrals = set.dihedrals.size();
      if (structure.connected()) {
        ctx.progress(0.5, "resolving atoms");
        ResolveOptions o;
        o.on_unknown_atom = *on_unknown_atom == OnUnknown::Skip ? UnknownAtomPolicy::Skip : UnknownAtomPolicy::Error;
        o.on_residue_mismatch =
            *on_residue_mismatch == OnMismatch::Warn ? ResidueMismatchPolicy::Warn : ResidueMismatchPolicy::Error;
        o.max_skipped_fraction = max_skipped_fraction.value();
        o.residue_offset = static_cast<int>(residue_offset.value());
        o.chain_offsets = parse_chain_offsets(chain_offsets.value(), "chain_offsets");
        ResolveReport rep = resolve_restraints(set, *structure, o);
        for (const auto& it : rep.items) row(it.what, it.count, it.examples);
        ctx.record("restraints_skipped", static_cast<std::int64_t>(rep.skipped + rep.dihedrals_skipped));
        ctx.record("dihedrals_skipped", static_cast<std::int64_t>(rep.dihedrals_skipped));
      } else {
        std::size_t alts = 0;
        for (const auto& r : set.restraints) alts += r.alternatives.size();
        row("restraints read", set.restraints.size(), "");
        row("alternatives (atom-selection pairs)", alts, "");
        row("dihedral restraints read", set.dihedrals.size(), "");
        row("not resolved: no structure connected", 0, "");
      }
      for (const auto& w : set.warnings) {
        ctx.warn(file.filename().string() + ": " + w);
        row("warning", 1, w);
      }
      ctx.info(file.filename().string() + ": " + std::to_string(read_distances) + " distance and " +
               std::to_string(read_dihedrals) + " dihedral restraints read (" + restraint_format_name(ro.format) + ")" +
               (structure.connected() ? "; " + std::to_string(set.restraints.size()) + " and " +
                                            std::to_string(set.dihedrals.size()) + " resolved"
                                      : std::string()));
      ctx.record("restraints", static_cast<std::int64_t>(set.restraints.size()));
      ctx.record("dihedrals", static_cast<std::int64_t>(set.dihedrals.size()));
      ctx.record("format", std::string(restraint_format_name(ro.format)));
      restraints.set(std::move(set));
      report.set(std::move(t));
    } catch (const ParseError& e) {
      throw to_input_error(e);
    } catch (const ReadCancelled&) {
      throw Cancelled();
    }
    ctx.progress(1.0);
  }
};

}  // namespace

void register_restraint_nodes(PluginRegistrar& r) { r.add_node<ReadRestraints>(); }

std::map<std::string, int> parse_chain_offsets(const std::string& text, const std::string& param) {
  std::map<std::string, int> out;
  std::string entry;
  auto flush = [&] {
    if (entry.empty()) return;
    const auto colon = entry.rfind(':');
    const std::string chain = colon == std::string::npos ? "" : entry.substr(0, colon);
    const std::string num = colon == std::string::npos ? "" : entry.substr(colon + 1);
    std::size_t used = 0;
    long v = 0;
    bool ok = !chain.empty() && !num.empty();
    if (ok) {
      try {
        v = std::stol(num, &used);
      } catch (const std::exception&) {
        ok = false;
      }
    }
    if (!ok || used != num.size() || v < -100000 || v > 100000)
      throw InputError("parameter '" + param + "': '" + entry +
                       "' is not CHAIN:OFFSET (e.g. \"B:-71\"; offset an integer within ±100000)");
    if (!out.emplace(chain, static_cast<int>(v)).second)
      throw InputError("parameter '" + param + "': chain '" + chain + "' is given twice");
    entry.clear();
  };
  for (char c : text) {
    if (c == ',' || c == ' ' || c == '\t') flush();
    else entry += c;
  }
  flush();
  return out;
}

}  // namespace gemflow::io
