// distgeom.compare (superposition RMSD, restraint violations) and distgeom.report (report.json).
#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <fstream>
#include <iomanip>
#include <limits>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include <gemflow/distgeom/geometry.hpp>
#include <gemflow/distgeom/violations.hpp>
#include <gemflow/node.hpp>
#include <gemflow/types.hpp>

#include "dg_convert.hpp"
#include "register.hpp"

namespace gemflow::distgeom {
namespace {
using namespace nodes;

using ResidueKey = std::pair<std::string, int>;  // chain, number

// "8-92", "A:8-40,A:45-92", "12" → set of (chain or "*", number).
/// One item of the `residues` parameter: chain ("*": any) and an inclusive residue range.
struct ResidueRange {
  std::string chain;
  int first = 0, last = 0;
};

std::vector<ResidueRange> parse_residues(const std::string& text) {
  std::vector<ResidueRange> out;
  std::stringstream ss(text);
  for (std::string item; std::getline(ss, item, ',');) {
    item.erase(std::remove(item.begin(), item.end(), ' '), item.end());
    if (item.empty()) continue;
    std::string chain = "*";
    if (auto c = item.find(':'); c != std::string::npos) {
      chain = item.substr(0, c);
      item = item.substr(c + 1);
    }
    const auto dash = item.find('-', 1);
    const std::string sa = item.substr(0, dash), sb = dash == std::string::npos ? sa : item.substr(dash + 1);
    int a = 0, b = 0;
    const auto ra = std::from_chars(sa.data(), sa.data() + sa.size(), a);
    const auto rb = std::from_chars(sb.data(), sb.data() + sb.size(), b);
    if (sa.empty() || sb.empty() || ra.ec != std::errc() || ra.ptr != sa.data() + sa.size() || rb.ec != std::errc() ||
        rb.ptr != sb.data() + sb.size())
      throw InputError("parameter 'residues': cannot read '" + item +
                       "' (expected e.g. \"8-92\" or \"A:8-40,A:45-92\")");
    if (a > b)  // QA: "90-10" was taken as 10-90
      throw InputError("parameter 'residues': the range " + item + " runs backwards (write " + std::to_string(b) + "-" +
                       std::to_string(a) + ")");
    out.push_back({chain, a, b});
  }
  return out;
}

std::string format_ranges(const std::set<ResidueKey>& rs) {
  std::ostringstream m;
  std::string chain;
  int start = 0, prev = 0;
  bool open = false;
  auto flush = [&] {
    if (!open) return;
    if (m.tellp() > 0) m << ",";
    m << chain << ":" << start;
    if (prev != start) m << "-" << prev;
  };
  for (const auto& [c, r] : rs) {
    if (open && c == chain && r == prev + 1) {
      prev = r;
      continue;
    }
    flush();
    chain = c;
    start = prev = r;
    open = true;
  }
  flush();
  return m.str();
}

class CompareNode final : public Node {
 public:
  static NodeInfo info() {
    return {.id = "distgeom.compare",
            .version = 1,
            .title = "Compare with a reference",
            .category = "Distance geometry",
            .doc =
                "Quality of a computed structure against a reference model and the restraints.\n"
                "Inputs: model (computed structure); reference (e.g. the deposited ensemble); restraints "
                "(optional, resolved against the reference).\n"
                "Outputs: report, Table (metric, value): backbone_rmsd_A (N, CA, C of the ordered residues, "
                "Kabsch superposition), heavy_rmsd_A (all non-hydrogen atoms of the ordered residues, own "
                "superposition), violations_gt_0_5A (restraints whose r^-6-summed distance exceeds upper + "
                "pseudo correction by more than `threshold`; equivalent atoms as the field treats them: a "
                "Phe/Tyr ring proton named alone (HD1) is widened to both flipping positions (r^-6 sum), and "
                "with equivalent_swap: rings_and_prochiral each prochiral group takes the assignment with the "
                "smaller violations, as in floating stereospecific assignment), max/mean violation, "
                "restraints_used (all atoms present in the model), restraints_skipped (atoms absent from the "
                "model, plus those the reader left out with on_unknown_atom: skip), "
                "ring_atoms_widened, prochiral_groups_swapped, ordered_residue_count, residue_count, "
                "ordered_residues; violations, Table (id, distance_A, upper_A, violation_A) per used "
                "restraint.\n"
                "Ordered region: `residues` when given, else the residues named by at least "
                "`min_long_range` restraints whose two residues are ≥ `long_range_separation` apart "
                "(chosen from the restraints only, never from the reference coordinates).\n"
                "Atoms are matched by chain, residue number, insertion code and name.",
            .errors =
                "A model without coordinates; a `residues` text that cannot be read, a range that runs "
                "backwards, or one that selects no residue of the reference (a warning when only some of its "
                "residues are there).",
            .memory = "The model's and reference's coordinates (host); no device memory.",
            .determinism = "Deterministic.",
            .references = "Kabsch, Acta Cryst. A32 (1976) 922; r^-6 sums: Nilges, Proteins 17 (1993) 297."};
  }
  Input<Structure> model_in{this, "model", "Computed structure (first model used)"};
  Input<Structure> reference{this, "reference", "Reference structure"};
  Input<RestraintSet> restraints{this, "restraints", "Restraints resolved against the reference", PortUse::Optional};
  Output<Table> report{this, "report", "Metrics: columns metric, value"};
  Output<Table> violations{this, "violations", "Per restraint: id, distance_A, upper_A, violation_A"};
  Param<std::int64_t> reference_model{
      this, "reference_model", 1, {.min = 1, .doc = "Model of the reference (1-based)"}};
  Param<std::string> residues{this,
                              "residues",
                              "",
                              {.doc = "Ordered residues, e.g. \"8-92\" or \"A:8-40,A:45-92\"; "
                                      "empty = from the restraints (see doc)"}};
  Param<std::int64_t> min_long_range{
      this, "min_long_range", 3, {.min = 0, .doc = "Auto region: restraints per residue"}};
  Param<std::int64_t> long_range_separation{
      this, "long_range_separation", 5, {.min = 1, .doc = "Auto region: |i − j| of a long-range restraint"}};
  Param<double> threshold{this, "threshold", 0.5, {.min = 0, .unit = "Å", .doc = "Violation threshold"}};
  enum class Swap { None, Rings, RingsAndProchiral };
  Choice<Swap> equivalent_swap{
      this,
      "equivalent_swap",
      Swap::Rings,
      {{Swap::None, "none"}, {Swap::Rings, "rings"}, {Swap::RingsAndProchiral, "rings_and_prochiral"}},
      {.doc = "Equivalent atoms before counting violations: rings (Phe/Tyr ring flips, "
              "always equivalent: HD1 means HD1+HD2, r^-6 sum); rings_and_prochiral "
              "(also floats Val/Leu methyls, methylene H, NH2 groups: for restraints "
              "without stereospecific assignment); none"}};

  void execute(NodeContext& ctx) override {
    const auto& m = *model_in;
    const auto& ref = *reference;
    if (m.models.empty()) throw InputError("input 'model' has no coordinates");
    const auto rx = model_xyz(ref, reference_model.value(), "reference_model");
    const auto& mx = m.models[0];
    const auto keys = atom_keys(m);
    std::vector<std::size_t> in_model(ref.atoms.size(), SIZE_MAX);
    for (std::size_t i = 0; i < ref.atoms.size(); ++i)
      if (auto it = keys.find(atom_key(ref.atoms[i])); it != keys.end()) in_model[i] = it->second;

    std::set<ResidueKey> all_res;
    for (const auto& a : ref.atoms) all_res.insert({a.chain, a.residue_number});
    // Ordered region.
    std::set<ResidueKey> ordered;
    if (!residues.value().empty()) {
      const auto ranges = parse_residues(residues.value());
      for (const auto& [c2, r2] : all_res)
        for (const auto& g : ranges)
          if (r2 >= g.first && r2 <= g.last && (g.chain == "*" || g.chain == c2)) ordered.insert({c2, r2});
      // QA: a region with no residue of the reference gave RMSD NaN, exit 0; one partly beyond
      // the reference was cut down silently
      if (ordered.empty())
        throw InputError("parameter 'residues' = '" + residues.value() +
                         "' selects no residue of the reference (it has " + format_ranges(all_res) + ")");
      // the residues named, each once: overlapping ranges of one chain merged (a user's "9-20,9-20"
      // was 24 residues, 12 of them "not in the reference")
      std::map<std::string, std::vector<std::pair<std::int64_t, std::int64_t>>> by_chain;
      for (const auto& g : ranges) by_chain[g.chain].push_back({g.first, g.last});
      std::size_t requested = 0;
      for (auto& [chain, spans] : by_chain) {
        std::sort(spans.begin(), spans.end());
        std::int64_t covered = spans.front().first - 1;  // the last residue counted
        for (const auto& [first, last] : spans) {
          const std::int64_t from = std::max(first, covered + 1);
          if (last >= from) requested += static_cast<std::size_t>(last - from) + 1;
          covered = std::max(covered, last);
        }
      }
      if (ordered.size() < requested)
        ctx.warn("parameter 'residues' = '" + residues.value() + "': " + std::to_string(ordered.size()) + " of the " +
                 std::to_string(requested) + " residues it names are in the reference (" + format_ranges(all_res) +
                 "); the others are left out");
    } else if (restraints.connected()) {
      std::map<ResidueKey, int> count;
      for (const auto& r : restraints.get()->restraints) {
        std::set<ResidueKey> touched;
        for (const auto& alt : r.alternatives)
          for (auto ia : alt.atoms_a)
            for (auto ib : alt.atoms_b) {
              if (ia >= ref.atoms.size() || ib >= ref.atoms.size()) continue;
              const auto& a = ref.atoms[ia];
              const auto& b2 = ref.atoms[ib];
              if (a.chain == b2.chain && std::abs(a.residue_number - b2.residue_number) < long_range_separation.value())
                continue;
              touched.insert(ResidueKey{a.chain, a.residue_number});
              touched.insert(ResidueKey{b2.chain, b2.residue_number});
            }
        for (const auto& k : touched) ++count[k];
      }
      for (const auto& [k, c] : count)
        if (c >= min_long_range.value()) ordered.insert(k);
    } else {
      ordered = all_res;
    }
    // RMSDs.
    std::vector<double> bb_m, bb_r, hv_m, hv_r;
    for (std::size_t i = 0; i < ref.atoms.size(); ++i) {
      const auto& a = ref.atoms[i];
      if (in_model[i] == SIZE_MAX || !ordered.count({a.chain, a.residue_number})) continue;
      const auto& p = mx[in_model[i]];
      const bool heavy = a.element != "H" && a.element != "D";
      if (a.name == "N" || a.name == "CA" || a.name == "C") {
        bb_m.insert(bb_m.end(), {p[0], p[1], p[2]});
        bb_r.insert(bb_r.end(), {rx[3 * i], rx[3 * i + 1], rx[3 * i + 2]});
      }
      if (heavy) {
        hv_m.insert(hv_m.end(), {p[0], p[1], p[2]});
        hv_r.insert(hv_r.end(), {rx[3 * i], rx[3 * i + 1], rx[3 * i + 2]});
      }
    }
    const double bb = bb_m.size() >= 9 ? superposed_rmsd(bb_m, bb_r) : std::nan("");
    const double hv = hv_m.size() >= 9 ? superposed_rmsd(hv_m, hv_r) : std::nan("");
    // Violations: r^-6 sums over the expanded pairs, equivalent groups floated (violations.hpp).
    std::int64_t used = 0, nviol = 0;
    double vmax = 0, vsum = 0;
    std::size_t skipped = 0, swapped = 0, widened = 0;
    Table vt{{"id", "distance_A", "upper_A", "violation_A"}, {}};
    if (restraints.connected()) {
      const RestraintSet& set = *restraints.get();
      std::vector<double> at(3 * ref.atoms.size(), std::nan(""));
      for (std::size_t i = 0; i < ref.atoms.size(); ++i)
        if (in_model[i] != SIZE_MAX)
          for (int c = 0; c < 3; ++c)
            at[3 * i + static_cast<std::size_t>(c)] = mx[in_model[i]][static_cast<std::size_t>(c)];
      const auto pr = pair_restraints(set);
      const EquivalentSwap sw = *equivalent_swap == Swap::None    ? EquivalentSwap::None
                                : *equivalent_swap == Swap::Rings ? EquivalentSwap::Rings
                                                                  : EquivalentSwap::RingsAndProchiral;
      const auto res = restraint_violations(atom_infos(ref), at, pr, sw);
      // Restraints left out while reading (on_unknown_atom: skip) count as skipped too.
      skipped = res.skipped.size() + set.skipped;
      swapped = res.swapped.size();
      widened = res.ring_expanded;
      for (const auto& v : res.restraints) {
        ++used;
        if (v.violation > threshold.value()) ++nviol;
        vmax = std::max(vmax, v.violation);
        vsum += v.violation;
        vt.rows.push_back({Table::Cell{static_cast<std::int64_t>(pr[v.index].id)}, Table::Cell{v.distance},
                           Table::Cell{v.upper}, Table::Cell{v.violation}});
      }
      if (!res.swapped.empty()) {
        std::string list;
        for (std::size_t k = 0; k < res.swapped.size() && k < 5; ++k) list += (k ? ", " : "") + res.swapped[k];
        if (res.swapped.size() > 5) list += " (and " + std::to_string(res.swapped.size() - 5) + " more)";
        ctx.info(std::to_string(res.swapped.size()) + " prochiral group(s) swapped to the restraints: " + list);
      }
    }
    std::ostringstream thr;
    thr << threshold.value();
    std::string tname = thr.str();
    std::replace(tname.begin(), tname.end(), '.', '_');
    Table t{{"metric", "value"}, {}};
    t.rows.push_back({std::string("backbone_rmsd_A"), bb});
    t.rows.push_back({std::string("heavy_rmsd_A"), hv});
    t.rows.push_back({std::string("backbone_atoms"), static_cast<std::int64_t>(bb_m.size() / 3)});
    t.rows.push_back({std::string("heavy_atoms"), static_cast<std::int64_t>(hv_m.size() / 3)});
    t.rows.push_back({"violations_gt_" + tname + "A", nviol});
    t.rows.push_back({std::string("max_violation_A"), vmax});
    t.rows.push_back({std::string("mean_violation_A"), used ? vsum / static_cast<double>(used) : 0.0});
    t.rows.push_back({std::string("restraints_used"), used});
    t.rows.push_back({std::string("restraints_skipped"), static_cast<std::int64_t>(skipped)});
    t.rows.push_back({std::string("ring_atoms_widened"), static_cast<std::int64_t>(widened)});
    t.rows.push_back({std::string("prochiral_groups_swapped"), static_cast<std::int64_t>(swapped)});
    t.rows.push_back({std::string("ordered_residue_count"), static_cast<std::int64_t>(ordered.size())});
    t.rows.push_back({std::string("residue_count"), static_cast<std::int64_t>(all_res.size())});
    t.rows.push_back({std::string("ordered_residues"), format_ranges(ordered)});
    ctx.info("backbone RMSD " + std::to_string(bb) + " Å, heavy " + std::to_string(hv) + " Å over " +
             std::to_string(ordered.size()) + "/" + std::to_string(all_res.size()) + " residues; " +
             std::to_string(nviol) + "/" + std::to_string(used) + " restraints violated by > " + thr.str() + " Å");
    report.set(std::move(t));
    violations.set(std::move(vt));
  }
};

class ReportNode final : public Node {
 public:
  static NodeInfo info() {
    return {.id = "distgeom.report",
            .version = 1,
            .title = "Write report.json",
            .category = "Distance geometry",
            .doc =
                "Writes metric tables (columns metric, value) as one JSON object {metric: value} (numbers stay "
                "numbers; NaN becomes null).\n"
                "Inputs: report (e.g. distgeom.compare's), extra (optional, e.g. distgeom.refine's report; its "
                "metrics are added, a duplicate name is an error).\n"
                "Output file: `path` (relative to the run's output folder), written atomically.",
            .errors =
                "A table without columns metric and value, a metric name that is not text, a metric that "
                "appears twice.",
            .memory = "The JSON text (host); no device memory.",
            .determinism = "Deterministic (keys sorted)."};
  }
  Input<Table> report{this, "report", "Metrics table (metric, value)"};
  Input<Table> extra{this, "extra", "More metrics (metric, value)", PortUse::Optional};
  PathParam path{this, "path", PathParam::Mode::Write, "JSON file to write", "report.json"};

  void execute(NodeContext& ctx) override {
    nlohmann::json j = nlohmann::json::object();
    auto add = [&](const Table& t, const char* port) {
      const int km = t.column("metric"), kv = t.column("value");
      if (km < 0 || kv < 0) throw InputError(std::string("input '") + port + "' needs columns 'metric' and 'value'");
      for (const auto& row : t.rows) {
        const auto* name = std::get_if<std::string>(&row[static_cast<std::size_t>(km)]);
        if (!name) throw InputError(std::string("input '") + port + "': a metric name is not text");
        if (j.contains(*name)) throw InputError("metric '" + *name + "' appears twice");
        const auto& v = row[static_cast<std::size_t>(kv)];
        if (const auto* d = std::get_if<double>(&v))
          j[*name] = std::isfinite(*d) ? nlohmann::json(*d) : nlohmann::json();
        else if (const auto* i = std::get_if<std::int64_t>(&v)) j[*name] = *i;
        else j[*name] = std::get<std::string>(v);
      }
    };
    add(*report, "report");
    if (extra.connected()) add(*extra, "extra");
    const auto file = path.value();
    ctx.write_file(file, [&](std::ostream& out) { out << j.dump(2) << "\n"; });
  }
};

}  // namespace

void register_compare_nodes(PluginRegistrar& r) {
  r.add_node<CompareNode>();
  r.add_node<ReportNode>();
}

}  // namespace gemflow::distgeom
