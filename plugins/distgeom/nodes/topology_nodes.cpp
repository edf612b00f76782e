// distgeom.topology and distgeom.topology_from_residues: the covalent molecule from a sequence.
#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include <gemflow/distgeom/topology.hpp>
#include <gemflow/io/errors.hpp>
#include <gemflow/io/star.hpp>
#include <gemflow/node.hpp>
#include <gemflow/types.hpp>

#include "ccd_templates.hpp"
#include "register.hpp"

namespace gemflow::distgeom {
namespace {
using namespace nodes;

enum class His { Both, Delta, Epsilon };
enum class NCap { None, Ace };
enum class CCap { None, Nme, Nh2 };

// Adds the caps of `n` / `c` to every chain that has amino acids and no cap at that end: ACE
// numbered one before the first amino acid, NME / NH2 one after the last (before any ligands
// listed after it).
void add_caps(std::vector<ChainSequence>& chains, NCap n, CCap c) {
  const auto& templates = standard_templates();
  auto role = [&](const SequenceResidue& r) {
    const auto it = templates.find(r.name);
    return it == templates.end() ? ResidueRole::Ligand : residue_role(it->second);
  };
  for (auto& ch : chains) {
    auto& rs = ch.residues;
    std::size_t first = rs.size(), last = 0;
    for (std::size_t i = 0; i < rs.size(); ++i)
      if (role(rs[i]) == ResidueRole::AminoAcid) {
        first = std::min(first, i);
        last = i;
      }
    if (first == rs.size()) continue;
    if (c != CCap::None && !(last + 1 < rs.size() && role(rs[last + 1]) == ResidueRole::CCap))
      rs.insert(rs.begin() + static_cast<std::ptrdiff_t>(last + 1),
                SequenceResidue{c == CCap::Nme ? "NME" : "NH2", rs[last].number + 1, {}});
    if (n == NCap::Ace && !(first > 0 && role(rs[first - 1]) == ResidueRole::NCap))
      rs.insert(rs.begin() + static_cast<std::ptrdiff_t>(first), SequenceResidue{"ACE", rs[first].number - 1, {}});
  }
}

const char* kTopologyDoc =
    "The built Structure: atoms with IUPAC/PDB v3 names (N-terminal H1 H2 H3, C-terminal OXT), the bonds, "
    "and one model: an extended chain (φ −120°, ψ 130°, ω 180°) whose residues carry the ideal coordinates of "
    "the wwPDB Chemical Component Dictionary entries (compiled in; plugins/distgeom/data/ccd/PROVENANCE.md) and "
    "Engh & Huber (1991) peptide geometry between them. That model is covalent geometry (bond lengths, 1-3 "
    "distances, planar groups, chiral volumes) for distgeom.bounds (bonds: structure) and distgeom.anneal, "
    "not a conformation. Chains are 40 Å apart. Histidine: both ring protons (CCD HIS) unless `histidine` "
    "or the residue's NEF variant ('-HE2', '-HD1') says otherwise.\n"
    "Templates: the 20 standard amino acids; the modified amino acids MSE, SEP, TPO (CCD protonation: "
    "phosphates as acids); the caps ACE (N-terminal: its C bonded to N of the first amino acid, no NH3+) and "
    "NME, NH2 (C-terminal: their N bonded to C of the last amino acid, no OXT); the ligands HEM and NA, each "
    "its own residue without bonds to the chain. A chain is [ACE] amino acids [NME|NH2], with ligands "
    "before or after (or a chain of ligands only).";

TopologyOptions topology_options(His h) {
  TopologyOptions o;
  o.histidine = h == His::Delta ? Histidine::Delta : h == His::Epsilon ? Histidine::Epsilon : Histidine::Both;
  return o;
}

Structure to_structure(const MolecularTopology& t, const std::string& title) {
  Structure s;
  s.title = title;
  s.models.emplace_back();
  for (std::size_t i = 0; i < t.atoms.size(); ++i) {
    Atom a;
    a.name = t.atoms[i].name;
    a.element = t.atoms[i].element;
    a.residue = t.atoms[i].residue;
    a.residue_number = t.atoms[i].residue_number;
    a.chain = t.atoms[i].chain;
    a.serial = static_cast<int>(i + 1);
    s.atoms.push_back(std::move(a));
    s.models[0].push_back({t.xyz[3 * i], t.xyz[3 * i + 1], t.xyz[3 * i + 2]});
  }
  for (auto b : t.bonds) s.bonds.push_back(b);
  return s;
}

Structure build(NodeContext& ctx, const std::vector<ChainSequence>& chains, His h, const std::string& title) {
  MolecularTopology t;
  try {
    t = build_topology(chains, standard_templates(), topology_options(h));
  } catch (const std::invalid_argument& e) {
    throw InputError(title + ": " + e.what());
  }
  std::size_t residues = 0;
  for (const auto& c : chains) residues += c.residues.size();
  ctx.info(std::to_string(chains.size()) + " chain(s), " + std::to_string(residues) + " residues, " +
           std::to_string(t.atoms.size()) + " atoms, " + std::to_string(t.bonds.size()) + " bonds");
  ctx.record("atoms", static_cast<std::int64_t>(t.atoms.size()));
  ctx.record("residues", static_cast<std::int64_t>(residues));
  ctx.record("chains", static_cast<std::int64_t>(chains.size()));
  return to_structure(t, title);
}

// NEF molecular system: the _nef_sequence loop (chain_code, sequence_code, residue_name,
// residue_variant).
std::vector<ChainSequence> nef_chains(const std::string& path) {
  const io::StarFile f = io::read_star_file(path);
  for (const auto& b : f.blocks)
    for (const auto& fr : b.frames)
      for (const auto& l : fr.loops) {
        const int cc = l.column("_nef_sequence.chain_code"), cs = l.column("_nef_sequence.sequence_code"),
                  cn = l.column("_nef_sequence.residue_name"), cv = l.column("_nef_sequence.residue_variant");
        if (cc < 0 || cs < 0 || cn < 0) continue;
        std::vector<ChainSequence> out;
        for (std::size_t r = 0; r < l.rows(); ++r) {
          const std::string chain = l.at(r, cc).text;
          SequenceResidue res;
          res.name = l.at(r, cn).text;
          for (auto& ch : res.name) ch = static_cast<char>(std::toupper(static_cast<unsigned char>(ch)));
          const auto& code = l.at(r, cs);
          try {
            std::size_t used = 0;
            res.number = std::stoi(code.text, &used);
            if (used != code.text.size()) throw std::invalid_argument(code.text);
          } catch (const std::exception&) {
            throw io::ParseError(path, code.line, "sequence_code '" + code.text + "' is not an integer residue number");
          }
          if (cv >= 0 && !l.at(r, cv).is_null()) res.variant = l.at(r, cv).text;
          if (out.empty() || out.back().chain != chain) out.push_back(ChainSequence{chain, {}});
          out.back().residues.push_back(std::move(res));
        }
        return out;
      }
  throw io::ParseError(path, 0, "no _nef_sequence loop (NEF molecular system) in the file");
}

// NMR-STAR v3 molecular assembly: the residues of _Chem_comp_assembly (Comp_ID, chain
// Auth_asym_ID, number Auth_seq_ID, else Comp_index_ID + first − 1) when the file lists them (NEF
// converted to NMR-STAR); else the chains of _Entity_assembly (PDB_chain_ID, else Asym_ID, else
// A, B, ... by row) with the residues of their entity (_Entity_comp_index: Comp_ID, numbered by
// Auth_seq_ID when given, else ID + first − 1). Without _Entity_assembly, one chain per entity.
class StarSequence {
 public:
  StarSequence(std::string path, int first) : path_(std::move(path)), first_(first) {}

  std::vector<ChainSequence> chains() {
    const io::StarFile f = io::read_star_file(path_);
    for (const auto& b : f.blocks)
      for (const auto& fr : b.frames)
        for (const auto& l : fr.loops) read_loop(l, fr.item("_entity.id"));
    if (!listed_.empty()) return listed_;
    if (entities_.empty())
      throw io::ParseError(path_, 0,
                           "no _Chem_comp_assembly or _Entity_comp_index loop (NMR-STAR sequence) in the file");
    if (assembly_.empty())
      for (std::size_t k = 0; k < entity_order_.size(); ++k) assembly_.push_back({letter(k), entity_order_[k]});
    std::vector<ChainSequence> out;
    for (const auto& [chain, id] : assembly_) {
      auto it = entities_.find(id);
      if (it == entities_.end())
        throw io::ParseError(path_, assembly_line_,
                             "_Entity_assembly names entity '" + id + "', which has no _Entity_comp_index loop");
      out.push_back(ChainSequence{chain, it->second});
    }
    return out;
  }

 private:
  static std::string letter(std::size_t k) { return std::string(1, static_cast<char>('A' + k % 26)); }

  void read_loop(const io::StarLoop& l, const io::StarValue* frame_entity) {
    if (l.column("_chem_comp_assembly.comp_id") >= 0) read_listed(l);
    if (l.column("_entity_comp_index.id") >= 0 && l.column("_entity_comp_index.comp_id") >= 0)
      read_entity(l, frame_entity);
    if (l.column("_entity_assembly.entity_id") >= 0) read_assembly(l);
  }

  // A residue of Comp_ID `name`, numbered by the author number when given, else index + first − 1.
  SequenceResidue residue(const io::StarValue& name, const io::StarValue* auth, const io::StarValue* index,
                          const char* loop) const {
    const bool by_auth = auth && !auth->is_null();
    if (!by_auth && !index) throw io::ParseError(path_, name.line, std::string(loop) + " row without a residue number");
    const io::StarValue& num = by_auth ? *auth : *index;
    SequenceResidue res;
    res.name = name.text;
    for (auto& ch : res.name) ch = static_cast<char>(std::toupper(static_cast<unsigned char>(ch)));
    std::size_t used = 0;
    try {
      res.number = std::stoi(num.text, &used) + (by_auth ? 0 : first_ - 1);
    } catch (const std::exception&) {
      used = 0;
    }
    if (used == 0 || used != num.text.size())
      throw io::ParseError(path_, num.line, std::string(loop) + " residue number '" + num.text + "' is not an integer");
    return res;
  }

  void read_listed(const io::StarLoop& l) {
    const int kc = l.column("_chem_comp_assembly.comp_id"), ka = l.column("_chem_comp_assembly.auth_asym_id"),
              ks = l.column("_chem_comp_assembly.auth_seq_id"), ki = l.column("_chem_comp_assembly.comp_index_id"),
              ke = l.column("_chem_comp_assembly.entity_assembly_id");
    for (std::size_t r = 0; r < l.rows(); ++r) {
      std::string chain = "A";
      if (ka >= 0 && !l.at(r, ka).is_null()) chain = l.at(r, ka).text;
      else if (ke >= 0) chain = letter(static_cast<std::size_t>(std::max(1, std::atoi(l.at(r, ke).text.c_str())) - 1));
      SequenceResidue res = residue(l.at(r, kc), ks >= 0 ? &l.at(r, ks) : nullptr, ki >= 0 ? &l.at(r, ki) : nullptr,
                                    "_Chem_comp_assembly");
      if (listed_.empty() || listed_.back().chain != chain) listed_.push_back(ChainSequence{chain, {}});
      listed_.back().residues.push_back(std::move(res));
    }
  }

  void read_entity(const io::StarLoop& l, const io::StarValue* frame_entity) {
    const int ci = l.column("_entity_comp_index.id"), cc = l.column("_entity_comp_index.comp_id"),
              ca = l.column("_entity_comp_index.auth_seq_id"), ce = l.column("_entity_comp_index.entity_id");
    for (std::size_t r = 0; r < l.rows(); ++r) {
      std::string id = frame_entity ? frame_entity->text : "1";
      if (ce >= 0 && !l.at(r, ce).is_null()) id = l.at(r, ce).text;
      SequenceResidue res = residue(l.at(r, cc), ca >= 0 ? &l.at(r, ca) : nullptr, &l.at(r, ci), "_Entity_comp_index");
      if (!entities_.count(id)) entity_order_.push_back(id);
      entities_[id].push_back(std::move(res));
    }
  }

  void read_assembly(const io::StarLoop& l) {
    const int ae = l.column("_entity_assembly.entity_id"), ap = l.column("_entity_assembly.pdb_chain_id"),
              aa = l.column("_entity_assembly.asym_id");
    for (std::size_t r = 0; r < l.rows(); ++r) {
      std::string chain = letter(r);
      if (ap >= 0 && !l.at(r, ap).is_null()) chain = l.at(r, ap).text;
      else if (aa >= 0 && !l.at(r, aa).is_null()) chain = l.at(r, aa).text;
      assembly_.push_back({chain, l.at(r, ae).text});
      if (assembly_line_ == 0) assembly_line_ = l.at(r, ae).line;
    }
  }

  std::string path_;
  int first_;
  std::map<std::string, std::vector<SequenceResidue>> entities_;  // entity ID → residues
  std::vector<std::string> entity_order_;
  std::vector<std::pair<std::string, std::string>> assembly_;  // chain, entity ID
  std::vector<ChainSequence> listed_;                          // _Chem_comp_assembly
  int assembly_line_ = 0;
};

// FASTA records (one chain each, chain ids A, B, ... unless `chain_ids` names them) or a bare
// one-letter sequence.
std::vector<ChainSequence> fasta_chains(const std::string& path, const std::string& chain_ids, int first) {
  const std::string text = io::read_text_file(path);
  std::vector<std::pair<std::string, int>> seqs;  // sequence, line of its first letter
  std::istringstream in(text);
  std::string line;
  int lineno = 0;
  bool header = false;
  while (std::getline(in, line)) {
    ++lineno;
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (!line.empty() && line[0] == '>') {
      seqs.push_back({"", lineno + 1});
      header = true;
      continue;
    }
    if (line.empty() || line[0] == ';' || line[0] == '#') continue;
    if (seqs.empty()) seqs.push_back({"", lineno});
    for (char ch : line) {
      if (std::isspace(static_cast<unsigned char>(ch)) || ch == '*') continue;
      if (three_letter(ch).empty())
        throw io::ParseError(path, lineno,
                             std::string("'") + ch + "' is not a one-letter code of the 20 standard amino acids");
      seqs.back().first += ch;
    }
  }
  (void)header;
  std::vector<std::string> ids;
  {
    std::stringstream ss(chain_ids);
    std::string tok;
    while (std::getline(ss, tok, ','))
      if (!tok.empty()) ids.push_back(tok);
  }
  std::vector<ChainSequence> out;
  for (std::size_t k = 0; k < seqs.size(); ++k) {
    if (seqs[k].first.empty()) throw io::ParseError(path, seqs[k].second, "empty sequence record");
    ChainSequence c;
    c.chain = k < ids.size() ? ids[k] : std::string(1, static_cast<char>('A' + k % 26));
    for (std::size_t i = 0; i < seqs[k].first.size(); ++i)
      c.residues.push_back(SequenceResidue{three_letter(seqs[k].first[i]), first + static_cast<int>(i), {}});
    out.push_back(std::move(c));
  }
  if (out.empty()) throw io::ParseError(path, 0, "no sequence in the file");
  return out;
}

// ---------------------------------------------------------------------------------------------
class TopologyNode final : public Node {
 public:
  static NodeInfo info() {
    return {
        .id = "distgeom.topology",
        .version = 1,
        .title = "Molecule from the sequence",
        .category = "Distance geometry",
        .doc = std::string("Builds the covalent molecule of a protein from its sequence file: a NEF file's molecular "
                           "system (_nef_sequence: chain_code, sequence_code, residue_name, residue_variant; "
                           "several chains), an NMR-STAR v3 file's assembly (.str: _Chem_comp_assembly, else the "
                           "chains of _Entity_assembly, PDB_chain_ID or Asym_ID, with their entity's "
                           "_Entity_comp_index residues; numbered by Auth_seq_ID, else from `first_residue`), or FASTA "
                           "(one record per chain, ids from "
                           "`chains`, numbered from `first_residue`; a bare one-letter sequence is one chain).\n"
                           "Output: structure. ") +
               kTopologyDoc +
               "\nParameter `copies` repeats every chain "
               "(homo-oligomers given by one sequence): copy k gets the chain id of `chains` entry "
               "k (FASTA) or the next letter after the last chain.",
        .errors =
            "The file's line for a NEF sequence_code or NMR-STAR residue number that is not an integer, an "
            "NMR-STAR assembly naming an entity without residues, or a FASTA letter outside the 20 "
            "standard amino acids; the file, chain, residue number and name for a residue without template "
            "(the message lists the templates there are), a residue number used twice in a chain, a "
            "variant naming no atom, a cap not at an end of the amino acids or a ligand between two amino "
            "acids.",
        .memory = "The molecule (a few hundred bytes per atom).",
        .determinism = "Deterministic.",
        .references =
            "wwPDB Chemical Component Dictionary (ideal coordinates); Engh & Huber, Acta Cryst. A47 "
            "(1991) 392; NEF 1.1 (Gutmanas et al., Nat. Struct. Mol. Biol. 22 (2015) 433)."};
  }
  Output<Structure> structure{this, "structure", "The molecule with template geometry (one model) and bonds"};
  PathParam path{this,
                 "path",
                 PathParam::Mode::Read,
                 "Sequence: .nef (molecular system), .str (NMR-STAR v3 assembly and entities) or FASTA "
                 "(.fasta, .fa, .seq)",
                 "",
                 {".nef", ".str", ".fasta", ".fa", ".seq", ".txt"}};
  Param<std::string> chains{
      this, "chains", "", {.doc = "FASTA: chain ids of the records, comma-separated (default A, B, ...)"}};
  Param<std::int64_t> first_residue{
      this,
      "first_residue",
      1,
      // within ±10⁶, so that every residue number of the chain fits the structure's 32-bit ones (a
      // user's 2147483647 numbered the next residue −2147483648, exit 0)
      {.min = -1'000'000,
       .max = 1'000'000,
       .doc = "FASTA, and NMR-STAR entities without Auth_seq_ID: number of the first residue"}};
  Param<std::int64_t> copies{this, "copies", 1, {.min = 1, .max = 26, .doc = "Copies of the chains (homo-oligomers)"}};
  Choice<His> histidine{this,
                        "histidine",
                        His::Both,
                        {{His::Both, "both"}, {His::Delta, "delta"}, {His::Epsilon, "epsilon"}},
                        {.doc = "Histidine ring protons: both (HD1 and HE2, CCD HIS), delta (HD1) or epsilon (HE2)"}};
  Choice<NCap> n_cap{this,
                     "n_cap",
                     NCap::None,
                     {{NCap::None, "none"}, {NCap::Ace, "ACE"}},
                     {.doc = "N-terminal cap added to every chain whose amino acids do not start with one (FASTA "
                             "cannot name caps): none (NH3+) or ACE (acetyl, numbered one before the first residue)"}};
  Choice<CCap> c_cap{this,
                     "c_cap",
                     CCap::None,
                     {{CCap::None, "none"}, {CCap::Nme, "NME"}, {CCap::Nh2, "NH2"}},
                     {.doc = "C-terminal cap added to every chain whose amino acids do not end with one: none "
                             "(COO-), NME (N-methylamide) or NH2 (amide), numbered one after the last residue"}};

  void execute(NodeContext& ctx) override {
    const auto file = path.value();
    ctx.add_input_file(file);
    std::vector<ChainSequence> cs;
    try {
      const auto ext = file.extension().string();
      cs = ext == ".nef"   ? nef_chains(file.string())
           : ext == ".str" ? StarSequence(file.string(), static_cast<int>(first_residue.value())).chains()
                           : fasta_chains(file.string(), chains.value(), static_cast<int>(first_residue.value()));
    } catch (const io::ParseError& e) {
      throw InputError(e.what());
    }
    add_caps(cs, n_cap.value(), c_cap.value());
    const std::size_t base = cs.size();
    std::set<std::string> used;
    for (const auto& c : cs) used.insert(c.chain);
    std::vector<std::string> ids;
    {
      std::stringstream ss(chains.value());
      std::string tok;
      while (std::getline(ss, tok, ','))
        if (!tok.empty()) ids.push_back(tok);
    }
    for (std::int64_t k = 1; k < copies.value(); ++k)
      for (std::size_t c = 0; c < base; ++c) {
        ChainSequence copy = cs[c];
        const std::size_t slot = static_cast<std::size_t>(k) * base + c;
        if (slot < ids.size()) {
          copy.chain = ids[slot];
        } else {
          char next = 'A';
          while (used.count(std::string(1, next)) && next < 'Z') ++next;
          copy.chain = std::string(1, next);
        }
        if (!used.insert(copy.chain).second)
          throw InputError("parameter 'copies': chain id '" + copy.chain + "' is used twice");
        cs.push_back(std::move(copy));
      }
    structure.set(build(ctx, cs, histidine.value(), "distgeom.topology " + file.filename().string()));
  }
};

// ---------------------------------------------------------------------------------------------
class TopologyFromResiduesNode final : public Node {
 public:
  static NodeInfo info() {
    return {.id = "distgeom.topology_from_residues",
            .version = 1,
            .title = "Molecule from a structure's residues",
            .category = "Distance geometry",
            .doc = std::string("Builds the covalent molecule of the residue list of a structure (chains and residue "
                               "numbers in file order; its coordinates are not used).\n"
                               "Input: structure. Output: structure. ") +
                   kTopologyDoc,
            .errors =
                "The chain, residue number and name for a residue without template (the message lists the "
                "templates there are; waters and other ligands must be removed first), a residue number used "
                "twice in a chain, a cap not at an end of the amino acids or a ligand between two amino acids.",
            .memory = "The molecule (a few hundred bytes per atom).",
            .determinism = "Deterministic.",
            .references =
                "wwPDB Chemical Component Dictionary (ideal coordinates); Engh & Huber, Acta Cryst. A47 "
                "(1991) 392."};
  }
  Input<Structure> residues{this, "residues", "Structure whose residue list is built"};
  Output<Structure> structure{this, "structure", "The molecule with template geometry (one model) and bonds"};
  Choice<His> histidine{this,
                        "histidine",
                        His::Both,
                        {{His::Both, "both"}, {His::Delta, "delta"}, {His::Epsilon, "epsilon"}},
                        {.doc = "Histidine ring protons: both (HD1 and HE2, CCD HIS), delta (HD1) or epsilon (HE2)"}};

  void execute(NodeContext& ctx) override {
    std::vector<ChainSequence> cs;
    const Structure& in = *residues;
    for (const auto& a : in.atoms) {
      if (cs.empty() || cs.back().chain != a.chain) cs.push_back(ChainSequence{a.chain, {}});
      auto& rs = cs.back().residues;
      if (rs.empty() || rs.back().number != a.residue_number)
        rs.push_back(SequenceResidue{a.residue, a.residue_number, {}});
    }
    if (cs.empty()) throw InputError("input 'residues' has no atoms");
    structure.set(build(ctx, cs, histidine.value(), "distgeom.topology_from_residues"));
  }
};

}  // namespace

void register_topology_nodes(PluginRegistrar& r) {
  r.add_node<TopologyNode>();
  r.add_node<TopologyFromResiduesNode>();
}

}  // namespace gemflow::distgeom
