// Topology from the sequence: CCD templates joined into chains (distgeom/topology.hpp) and the
// distgeom.topology nodes, checked against the deposited 2KPU model 1 (IUPAC names, bonds,
// bond lengths, 1-3 distances, Cα handedness).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <string>
#include <tuple>

#include <gemflow/distgeom/anneal.hpp>
#include <gemflow/distgeom/bounds.hpp>
#include <gemflow/distgeom/geometry.hpp>
#include <gemflow/distgeom/smoothing.hpp>
#include <gemflow/distgeom/topology.hpp>
#include <gemflow/io/structure_io.hpp>
#include <gemflow/node.hpp>
#include <gemflow/registry.hpp>
#include <gemflow/testing.hpp>
#include <gemflow/types.hpp>
#include <gemflow/workflow.hpp>

#include "ccd_templates.hpp"
#include "register.hpp"

namespace {
using namespace gemflow;
using gemflow::testing::error_of;
using gemflow::testing::RecordingContext;

Registry& registry() {
  static Registry reg;
  static bool once = [] {
    PluginRegistrar r(reg, "distgeom-topology-test");
    distgeom::register_topology_nodes(r);
    distgeom::register_embedding_nodes(r);
    distgeom::register_anneal_nodes(r);
    return true;
  }();
  (void)once;
  return reg;
}

const Structure& deposited() {
  static const Structure s = io::read_pdb(std::string(GEMFLOW_SOURCE_DIR) + "/sample_data/2kpu/2kpu.pdb");
  return s;
}

using Key = std::tuple<std::string, int, std::string>;

distgeom::MolecularTopology built_2kpu() {
  distgeom::ChainSequence c{"A", {}};
  for (const auto& a : deposited().atoms)
    if (c.residues.empty() || c.residues.back().number != a.residue_number)
      c.residues.push_back(distgeom::SequenceResidue{a.residue, a.residue_number, {}});
  return distgeom::build_topology({c}, distgeom::nodes::standard_templates());
}

double d(const std::vector<double>& x, std::size_t i, std::size_t j) {
  const double a = x[3 * i] - x[3 * j], b = x[3 * i + 1] - x[3 * j + 1], c = x[3 * i + 2] - x[3 * j + 2];
  return std::sqrt(a * a + b * b + c * c);
}

TEST(CcdTemplates, TwentyAminoAcidsWithIdealCoordinatesAndBonds) {
  const auto& t = distgeom::nodes::standard_templates();
  // 20 amino acids, caps ACE NME NH2, modified MSE SEP TPO, ligands HEM NA
  ASSERT_EQ(t.size(), 28u);
  const auto& ala = t.at("ALA");
  ASSERT_EQ(ala.atoms.size(), 13u);  // N CA C O CB OXT H H2 HA HB1-3 HXT
  EXPECT_EQ(ala.bonds.size(), 12u);
  EXPECT_TRUE(ala.atoms[ala.find("OXT")].leaving);
  EXPECT_FALSE(ala.atoms[ala.find("CA")].leaving);
  // ALA CA ideal coordinates of the CCD entry
  EXPECT_DOUBLE_EQ(ala.atoms[ala.find("CA")].xyz[0], 0.257);
  EXPECT_DOUBLE_EQ(ala.atoms[ala.find("CA")].xyz[2], 0.692);
  EXPECT_EQ(t.at("TRP").atoms.size(), 27u);
  EXPECT_EQ(ala.type, "L-PEPTIDE LINKING");
}

// The caps, modified residues and ligands: roles, atoms and bonds as their CCD entries hold them;
// an ion's entry is single items (no loop) and has no bond table.
TEST(CcdTemplates, CapsModifiedResiduesAndLigands) {
  using distgeom::ResidueRole;
  const auto& t = distgeom::nodes::standard_templates();
  const std::map<std::string, std::tuple<ResidueRole, std::size_t, std::size_t>> expected{
      // id: role, atoms, bonds (counted in the CCD files)
      {"ACE", {ResidueRole::NCap, 7, 6}},        {"NME", {ResidueRole::CCap, 7, 6}},
      {"NH2", {ResidueRole::CCap, 3, 2}},        {"MSE", {ResidueRole::AminoAcid, 20, 19}},
      {"SEP", {ResidueRole::AminoAcid, 19, 18}}, {"TPO", {ResidueRole::AminoAcid, 22, 21}},
      {"HEM", {ResidueRole::Ligand, 75, 82}},    {"NA", {ResidueRole::Ligand, 1, 0}},
      {"ALA", {ResidueRole::AminoAcid, 13, 12}},
  };
  for (const auto& [id, e] : expected) {
    SCOPED_TRACE(id);
    const auto& r = t.at(id);
    EXPECT_EQ(distgeom::residue_role(r), std::get<0>(e));
    EXPECT_EQ(r.atoms.size(), std::get<1>(e));
    EXPECT_EQ(r.bonds.size(), std::get<2>(e));
  }
  const auto& na = t.at("NA");
  EXPECT_EQ(na.atoms[0].name, "NA");
  EXPECT_EQ(na.atoms[0].element, "NA");
  EXPECT_EQ(na.type, "NON-POLYMER");
  // NME's leaving atom is HN1 (pdbx_leaving_atom_flag Y); ACE's aldehyde H is not flagged
  EXPECT_TRUE(t.at("NME").atoms[t.at("NME").find("HN1")].leaving);
  EXPECT_FALSE(t.at("ACE").atoms[t.at("ACE").find("H")].leaving);
  // a bond table is required once there are two atoms
  const std::string two =
      "data_X\n_chem_comp.type NON-POLYMER\nloop_\n_chem_comp_atom.atom_id\n"
      "_chem_comp_atom.type_symbol\n_chem_comp_atom.pdbx_leaving_atom_flag\n"
      "_chem_comp_atom.pdbx_model_Cartn_x_ideal\n_chem_comp_atom.pdbx_model_Cartn_y_ideal\n"
      "_chem_comp_atom.pdbx_model_Cartn_z_ideal\nA C N 0 0 0\nB C N 1 0 0\n";
  try {
    (void)distgeom::nodes::parse_ccd_entry(two, "two.cif");
    ADD_FAILURE() << "no error";
  } catch (const std::exception& e) {
    EXPECT_NE(std::string(e.what()).find("two.cif"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("_chem_comp_bond"), std::string::npos) << e.what();
  }
}

// Every atom of the deposited model (Xplor-NIH, IUPAC names) is built under its name, and no
// other: termini (H1-3, OXT), HIS with HD1 and HE2 as 2KPU has them, prolines without H.
TEST(Topology, AtomNamesOf2kpuEqualTheDepositedModel) {
  const auto t = built_2kpu();
  std::set<Key> built, dep;
  for (const auto& a : t.atoms) built.insert({a.chain, a.residue_number, a.name});
  for (const auto& a : deposited().atoms) dep.insert({a.chain, a.residue_number, a.name});
  EXPECT_EQ(t.atoms.size(), deposited().atoms.size());
  std::vector<Key> only_built, only_dep;
  std::set_difference(built.begin(), built.end(), dep.begin(), dep.end(), std::back_inserter(only_built));
  std::set_difference(dep.begin(), dep.end(), built.begin(), built.end(), std::back_inserter(only_dep));
  for (const auto& k : only_built) ADD_FAILURE() << "built only: " << std::get<1>(k) << " " << std::get<2>(k);
  for (const auto& k : only_dep) ADD_FAILURE() << "deposited only: " << std::get<1>(k) << " " << std::get<2>(k);
}

// Bond lengths and 1-3 distances of the template geometry against the deposited model: the
// CCD ideal values and Xplor-NIH's parameters agree to a few hundredths of an Å.
TEST(Topology, BondLengthsAnd13DistancesMatchTheDepositedModel) {
  const auto t = built_2kpu();
  std::map<Key, std::size_t> at;
  for (std::size_t i = 0; i < deposited().atoms.size(); ++i) {
    const auto& a = deposited().atoms[i];
    at[{a.chain, a.residue_number, a.name}] = i;
  }
  std::vector<double> dx;
  for (const auto& p : deposited().models[0]) dx.insert(dx.end(), {p[0], p[1], p[2]});
  auto dep_index = [&](std::size_t i) { return at.at({t.atoms[i].chain, t.atoms[i].residue_number, t.atoms[i].name}); };
  // the built bonds are the bonds perceived in the deposited model
  const auto perceived = distgeom::perceive_topology(
      [&] {
        std::vector<distgeom::AtomInfo> v;
        for (const auto& a : deposited().atoms) v.push_back({a.element, a.name, a.residue, a.chain, a.residue_number});
        return v;
      }(),
      dx);
  std::set<std::pair<std::size_t, std::size_t>> pb;
  for (auto [i, j] : perceived.bonds) pb.insert({std::min(i, j), std::max(i, j)});
  ASSERT_EQ(t.bonds.size(), perceived.bonds.size());
  double worst = 0, sum = 0;
  for (auto [i, j] : t.bonds) {
    const std::size_t a = dep_index(i), b = dep_index(j);
    EXPECT_TRUE(pb.count({std::min(a, b), std::max(a, b)})) << t.atoms[i].residue_number << " " << t.atoms[i].name;
    const double e = std::abs(d(t.xyz, i, j) - d(dx, a, b));
    worst = std::max(worst, e);
    sum += e;
  }
  const double mean = sum / static_cast<double>(t.bonds.size());
  EXPECT_LT(worst, 0.08);
  EXPECT_LT(mean, 0.02);
  // 1-3 distances (angles)
  const auto topo = distgeom::topology_from_bonds(t.atoms, t.bonds);
  double worst13 = 0, sum13 = 0;
  std::size_t n13 = 0;
  for (std::size_t c = 0; c < t.atoms.size(); ++c)
    for (std::size_t p = 0; p < topo.neighbours[c].size(); ++p)
      for (std::size_t q = p + 1; q < topo.neighbours[c].size(); ++q) {
        const std::size_t i = topo.neighbours[c][p], j = topo.neighbours[c][q];
        const double e = std::abs(d(t.xyz, i, j) - d(dx, dep_index(i), dep_index(j)));
        worst13 = std::max(worst13, e);
        sum13 += e;
        ++n13;
      }
  EXPECT_GT(n13, 2500u);
  EXPECT_LT(sum13 / static_cast<double>(n13), 0.03);
  EXPECT_LT(worst13, 0.15);
  std::printf("bonds: mean |Δ| %.4f Å, max %.4f Å; 1-3: mean %.4f Å, max %.4f Å (%zu)\n", mean, worst,
              sum13 / static_cast<double>(n13), worst13, n13);
}

// L-amino acids: the handedness of N, C, CB around CA is the deposited model's everywhere.
TEST(Topology, CalphaHandednessIsTheDepositedOne) {
  const auto t = built_2kpu();
  std::map<Key, std::size_t> bi, di;
  for (std::size_t i = 0; i < t.atoms.size(); ++i)
    bi[{t.atoms[i].chain, t.atoms[i].residue_number, t.atoms[i].name}] = i;
  for (std::size_t i = 0; i < deposited().atoms.size(); ++i) {
    const auto& a = deposited().atoms[i];
    di[{a.chain, a.residue_number, a.name}] = i;
  }
  std::size_t checked = 0;
  for (const auto& entry : bi) {
    const auto& k = entry.first;  // not a structured binding: clang 14 cannot capture one
    if (std::get<2>(k) != "CA" || !bi.count({std::get<0>(k), std::get<1>(k), "CB"})) continue;
    auto vol = [&](const std::map<Key, std::size_t>& m, auto pos) {
      auto p = [&](const char* nm) { return pos(m.at({std::get<0>(k), std::get<1>(k), nm})); };
      return distgeom::chiral_volume(p("CA").data(), p("N").data(), p("C").data(), p("CB").data());
    };
    const double vb = vol(bi, [&](std::size_t j) {
      return std::array<double, 3>{t.xyz[3 * j], t.xyz[3 * j + 1], t.xyz[3 * j + 2]};
    });
    const double vd = vol(di, [&](std::size_t j) { return deposited().models[0][j]; });
    EXPECT_GT(vb * vd, 0) << std::get<1>(k);
    ++checked;
  }
  EXPECT_EQ(checked, 96u - 3u);  // 2KPU has 3 glycines
}

// A user's report: first_residue 2147483647 numbered the next residue −2147483648 (exit 0). The
// parameter is limited so that every residue number fits; validation refuses beyond.
TEST(TopologyNode, FirstResidueIsBounded) {
  const ParamSpec* p = registry().find_node("distgeom.topology")->spec.param("first_residue");
  ASSERT_NE(p, nullptr);
  EXPECT_EQ(p->check(ParamValue(std::int64_t{1'000'000})), std::nullopt);
  EXPECT_EQ(p->check(ParamValue(std::int64_t{-1'000'000})), std::nullopt);
  for (std::int64_t v : {std::int64_t{2147483647}, std::int64_t{3000000000}, std::int64_t{-1'000'001}})
    EXPECT_NE(p->check(ParamValue(v)), std::nullopt) << v;
}

TEST(TopologyNode, NefMolecularSystemBuilds2kpu) {
  auto node = gemflow::testing::make_node(registry(), "distgeom.topology");
  node->set_param("path", std::string(GEMFLOW_SOURCE_DIR) + "/sample_data/2kpu/DhR29B_2kpu.nef");
  RecordingContext ctx;
  node->execute(ctx);
  const auto s = node->output("structure").as<Structure>();
  EXPECT_EQ(s->atoms.size(), deposited().atoms.size());
  ASSERT_EQ(s->models.size(), 1u);
  EXPECT_EQ(s->atoms.front().residue, "SER");
  EXPECT_EQ(s->atoms.back().residue_number, 96);
  EXPECT_FALSE(s->bonds.empty());
  // the bounds node takes the topology's bonds and leaves X-Pro planes free
  auto b = gemflow::testing::make_node(registry(), "distgeom.bounds");
  b->set_input("structure", Value::make(*s));
  b->set_input("restraints", Value::make(RestraintSet{}));
  b->set_param("bonds", std::string("structure"));
  b->set_param("free_proline_omega", true);
  RecordingContext bctx;
  EXPECT_EQ(error_of(*b, bctx), "(no error)");
}

TEST(TopologyNode, FastaWithCopiesGivesIdenticalChains) {
  const auto dir = std::filesystem::temp_directory_path() / "gemflow_topology_test";
  std::filesystem::create_directories(dir);
  const auto f = dir / "pep.fasta";
  std::ofstream(f) << ">pep\nGHPW\n";
  auto node = gemflow::testing::make_node(registry(), "distgeom.topology");
  node->set_param("path", f.string());
  node->set_param("copies", std::int64_t{2});
  node->set_param("histidine", std::string("delta"));
  RecordingContext ctx;
  node->execute(ctx);
  const auto s = node->output("structure").as<Structure>();
  std::size_t a = 0, b = 0, he2 = 0, hd1 = 0;
  for (const auto& x : s->atoms) {
    (x.chain == "A" ? a : b) += 1;
    he2 += x.name == "HE2" && x.residue == "HIS";
    hd1 += x.name == "HD1" && x.residue == "HIS";
  }
  EXPECT_EQ(a, b);
  EXPECT_EQ(hd1, 2u);
  EXPECT_EQ(he2, 0u);
  // GLY 9 atoms (NH3+), HIS 17 (HD1 only), PRO 14, TRP 25 (OXT, no HXT)
  EXPECT_EQ(a, 9u + 17u + 14u + 25u);
  std::ofstream(f) << ">bad\nGXZ\n";
  auto bad = gemflow::testing::make_node(registry(), "distgeom.topology");
  bad->set_param("path", f.string());
  RecordingContext ctx2;
  const auto e = error_of(*bad, ctx2);
  EXPECT_NE(e.find("pep.fasta:2"), std::string::npos) << e;
  EXPECT_NE(e.find("'X'"), std::string::npos) << e;
}

// An NMR-STAR v3 file's assembly: two chains of one entity (as wwPDB's 2KYI conversion: no
// author numbers, so numbered from first_residue), or the residues listed in _Chem_comp_assembly
// (NEF converted to NMR-STAR).
TEST(TopologyNode, NmrStarAssemblyGivesTheChains) {
  const auto dir = std::filesystem::temp_directory_path() / "gemflow_topology_test";
  std::filesystem::create_directories(dir);
  const auto f = dir / "dimer.str";
  std::ofstream(f) << "data_x\nsave_assembly\n_Assembly.Sf_category assembly\nloop_\n_Entity_assembly.ID\n"
                      "_Entity_assembly.Entity_ID\n_Entity_assembly.Asym_ID\n_Entity_assembly.PDB_chain_ID\n"
                      "1 1 A .\n2 1 B .\nstop_\nsave_\nsave_pep\n_Entity.Sf_category entity\n_Entity.ID 1\n"
                      "loop_\n_Entity_comp_index.ID\n_Entity_comp_index.Auth_seq_ID\n_Entity_comp_index.Comp_ID\n"
                      "1 . GLY\n2 . HIS\n3 . PRO\n4 . TRP\nstop_\nsave_\n";
  auto node = gemflow::testing::make_node(registry(), "distgeom.topology");
  node->set_param("path", f.string());
  node->set_param("first_residue", std::int64_t{20});
  RecordingContext ctx;
  ASSERT_EQ(error_of(*node, ctx), "(no error)");
  const auto s = node->output("structure").as<Structure>();
  // the same molecule as the FASTA sequence GHPW numbered from 20, twice
  const auto fa = dir / "ghpw.fasta";
  std::ofstream(fa) << ">pep\nGHPW\n";
  auto ref = gemflow::testing::make_node(registry(), "distgeom.topology");
  ref->set_param("path", fa.string());
  ref->set_param("first_residue", std::int64_t{20});
  ref->set_param("copies", std::int64_t{2});
  RecordingContext ctx2;
  ref->execute(ctx2);
  const auto r = ref->output("structure").as<Structure>();
  ASSERT_EQ(s->atoms.size(), r->atoms.size());
  for (std::size_t i = 0; i < s->atoms.size(); ++i) {
    ASSERT_EQ(s->atoms[i].chain, r->atoms[i].chain) << i;
    ASSERT_EQ(s->atoms[i].residue_number, r->atoms[i].residue_number) << i;
    ASSERT_EQ(s->atoms[i].name, r->atoms[i].name) << i;
  }
  EXPECT_EQ(s->atoms.front().residue_number, 20);
  EXPECT_EQ(s->atoms.back().chain, "B");
  EXPECT_EQ(s->atoms.back().residue_number, 23);
  // _Chem_comp_assembly with author chain and numbers
  std::ofstream(f) << "data_x\nsave_m\n_Assembly.Sf_category assembly\nloop_\n_Chem_comp_assembly.Entity_assembly_ID\n"
                      "_Chem_comp_assembly.Comp_index_ID\n_Chem_comp_assembly.Comp_ID\n"
                      "_Chem_comp_assembly.Auth_asym_ID\n_Chem_comp_assembly.Auth_seq_ID\n"
                      "1 1 GLY A 5\n1 2 HIS A 6\n1 3 PRO A 7\n1 4 TRP A 8\nstop_\nsave_\n";
  auto listed = gemflow::testing::make_node(registry(), "distgeom.topology");
  listed->set_param("path", f.string());
  RecordingContext ctx3;
  ASSERT_EQ(error_of(*listed, ctx3), "(no error)");
  const auto l = listed->output("structure").as<Structure>();
  EXPECT_EQ(l->atoms.size(), r->atoms.size() / 2);
  EXPECT_EQ(l->atoms.front().residue_number, 5);
  EXPECT_EQ(l->atoms.back().residue, "TRP");
  // errors name the file and line
  std::ofstream(f) << "data_x\nsave_pep\n_Entity.ID 1\nloop_\n_Entity_comp_index.ID\n_Entity_comp_index.Comp_ID\n"
                      "1x GLY\nstop_\nsave_\n";
  auto bad = gemflow::testing::make_node(registry(), "distgeom.topology");
  bad->set_param("path", f.string());
  RecordingContext ctx4;
  const auto e = error_of(*bad, ctx4);
  EXPECT_NE(e.find("dimer.str:7"), std::string::npos) << e;
  EXPECT_NE(e.find("'1x' is not an integer"), std::string::npos) << e;
  std::ofstream(f) << "data_x\nsave_s\nloop_\n_Atom_chem_shift.Val\n1.0\nstop_\nsave_\n";
  auto none = gemflow::testing::make_node(registry(), "distgeom.topology");
  none->set_param("path", f.string());
  RecordingContext ctx5;
  EXPECT_NE(error_of(*none, ctx5).find("no _Chem_comp_assembly or _Entity_comp_index loop"), std::string::npos);
}

// 2KYI's NMR-STAR conversion (entity, no author numbers) from residue 20 gives the molecule of its
// NEF file: the same atoms, chains and numbers.
TEST(TopologyNode, NmrStarOf2kyiEqualsItsNef) {
  const char* root = std::getenv("GEMFLOW_SHARED_DATA");
  const std::string dir = root ? std::string(root) + "/restraints/2kyi/" : "";
  if (!root || !std::filesystem::exists(dir + "2kyi_mr.str") || !std::filesystem::exists(dir + "DhR8C_2kyi.nef"))
    GTEST_SKIP() << "GEMFLOW_SHARED_DATA not set or 2KYI files absent";
  auto build = [&](const std::string& file, std::int64_t first) {
    auto node = gemflow::testing::make_node(registry(), "distgeom.topology");
    node->set_param("path", dir + file);
    node->set_param("first_residue", first);
    RecordingContext ctx;
    node->execute(ctx);
    return node->output("structure").as<Structure>();
  };
  const auto star = build("2kyi_mr.str", 20), nef = build("DhR8C_2kyi.nef", 1);
  ASSERT_EQ(star->atoms.size(), nef->atoms.size());
  for (std::size_t i = 0; i < star->atoms.size(); ++i) {
    ASSERT_EQ(star->atoms[i].chain, nef->atoms[i].chain) << i;
    ASSERT_EQ(star->atoms[i].residue_number, nef->atoms[i].residue_number) << i;
    ASSERT_EQ(star->atoms[i].name, nef->atoms[i].name) << i;
  }
  EXPECT_EQ(nef->atoms.back().chain, "B");
}

}  // namespace

namespace {

// distgeom.ensemble end to end on a 12-residue helix of 2KPU (residues 20-31): the molecule from
// the residue list, restraints from the deposited model's H–H distances under 5 Å between
// residues (upper = d + 0.5 Å),
// bounds from the template geometry, 3 structures, the 2 lowest energies kept.
TEST(EnsembleNode, SmallHelixOutputsAndStatistics) {
  Structure pep;
  pep.models.emplace_back();
  for (std::size_t i = 0; i < deposited().atoms.size(); ++i)
    if (deposited().atoms[i].residue_number >= 20 && deposited().atoms[i].residue_number <= 31) {
      pep.atoms.push_back(deposited().atoms[i]);
      pep.models[0].push_back(deposited().models[0][i]);
    }
  auto topo = gemflow::testing::make_node(registry(), "distgeom.topology_from_residues");
  topo->set_input("residues", Value::make(pep));
  RecordingContext c0;
  topo->execute(c0);
  const auto mol = topo->output("structure").as<Structure>();
  // restraints between hydrogens of residues ≥ 2 apart, from the deposited peptide
  std::map<Key, std::size_t> at;
  for (std::size_t i = 0; i < mol->atoms.size(); ++i)
    at[{mol->atoms[i].chain, mol->atoms[i].residue_number, mol->atoms[i].name}] = i;
  RestraintSet rs;
  rs.source = "synthetic";
  rs.format = "nef";
  int id = 0;
  for (std::size_t i = 0; i < pep.atoms.size(); ++i)
    for (std::size_t j = i + 1; j < pep.atoms.size(); ++j) {
      const auto& a = pep.atoms[i];
      const auto& b = pep.atoms[j];
      if (a.element != "H" || b.element != "H" || a.residue_number == b.residue_number) continue;
      const auto& p = pep.models[0][i];
      const auto& q = pep.models[0][j];
      const double dd =
          std::sqrt((p[0] - q[0]) * (p[0] - q[0]) + (p[1] - q[1]) * (p[1] - q[1]) + (p[2] - q[2]) * (p[2] - q[2]));
      // the peptide's first residue is NH3+ in the topology: its deposited amide H is not there
      if (dd > 5.0 || !at.count({a.chain, a.residue_number, a.name}) || !at.count({b.chain, b.residue_number, b.name}))
        continue;
      DistanceRestraint r;
      r.id = ++id;
      r.origin = "synthetic:" + std::to_string(id);
      r.upper = dd + 0.5;
      DistanceRestraint::Alternative alt;
      alt.atoms_a = {at.at({a.chain, a.residue_number, a.name})};
      alt.atoms_b = {at.at({b.chain, b.residue_number, b.name})};
      r.alternatives.push_back(alt);
      rs.restraints.push_back(r);
    }
  ASSERT_GT(rs.restraints.size(), 40u);
  auto bn = gemflow::testing::make_node(registry(), "distgeom.bounds");
  bn->set_input("structure", Value::make(*mol));
  bn->set_input("restraints", Value::make(rs));
  bn->set_param("bonds", std::string("structure"));
  bn->set_param("free_proline_omega", true);
  RecordingContext c1;
  bn->execute(c1);
  DistanceBounds sm = *bn->output("bounds").as<DistanceBounds>();
  ASSERT_TRUE(distgeom::smooth_bounds(sm.lower.span(), sm.upper.span(), sm.size()).consistent);
  auto en = gemflow::testing::make_node(registry(), "distgeom.ensemble");
  en->set_input("bounds", bn->output("bounds"));
  en->set_input("smoothed", Value::make(sm));
  en->set_input("topology", Value::make(*mol));
  en->set_input("restraints", Value::make(rs));
  en->set_input("reference", Value::make(pep));
  en->set_param("structures", std::int64_t{3});
  en->set_param("keep", std::int64_t{2});
  en->set_param("hot_steps", std::int64_t{300});
  en->set_param("cooling_stages", std::int64_t{5});
  en->set_param("steps_per_stage", std::int64_t{60});
  RecordingContext c2;
  ASSERT_EQ(error_of(*en, c2), "(no error)");
  const auto ens = en->output("structure").as<Structure>();
  ASSERT_EQ(ens->models.size(), 2u);
  EXPECT_EQ(ens->atoms.size(), mol->atoms.size());
  const auto rep = en->output("report").as<Table>();
  std::map<std::string, double> m;
  for (const auto& row : rep->rows) {
    const auto& v = row[1];
    m[std::get<std::string>(row[0])] = std::holds_alternative<double>(v) ? std::get<double>(v)
                                       : std::holds_alternative<std::int64_t>(v)
                                           ? static_cast<double>(std::get<std::int64_t>(v))
                                           : 0.0;
  }
  EXPECT_EQ(m.at("kept"), 2);
  EXPECT_EQ(m.at("failed"), 0);
  EXPECT_EQ(m.at("calpha_handedness_correct_fraction"), 1.0);
  EXPECT_LT(m.at("precision_backbone_A"), 1.0);
  EXPECT_LT(m.at("backbone_rmsd_to_reference_mean_A"), 1.0);
  EXPECT_LE(m.at("violations_gt_0_5A_per_model"), 3.0);  // measured 1.5 with this short schedule
  EXPECT_GE(m.at("ramachandran_favoured_or_allowed_fraction"), 0.9);
  std::printf("helix ensemble: precision %.2f Å, accuracy %.2f Å, %.1f violations, Ramachandran %.2f\n",
              m.at("precision_backbone_A"), m.at("backbone_rmsd_to_reference_mean_A"),
              m.at("violations_gt_0_5A_per_model"), m.at("ramachandran_favoured_or_allowed_fraction"));
  EXPECT_EQ(en->output("rmsf").as<Table>()->rows.size(), 12u);
  const auto models = en->output("models").as<Table>();
  ASSERT_EQ(models->rows.size(), 2u);
  // accepted structures first (selection: accepted), each part by energy; an accepted model has
  // no violation > 0.5 Å in the report either (its bounds include the pseudo-atom corrections)
  const auto acc0 = std::get<std::int64_t>(models->rows[0][6]), acc1 = std::get<std::int64_t>(models->rows[1][6]);
  EXPECT_GE(acc0, acc1);
  if (acc0 == acc1) {
    EXPECT_LE(std::get<double>(models->rows[0][2]), std::get<double>(models->rows[1][2]));
  }
  for (const auto& row : models->rows) {
    if (std::get<std::int64_t>(row[6]) == 1) {
      EXPECT_EQ(std::get<std::int64_t>(row[3]), 0);
    }
  }
  EXPECT_EQ(m.at("accepted") >= 2, acc0 + acc1 == 2);
  // selection: energy keeps the lowest energies of the same three structures
  en->set_param("selection", std::string("energy"));
  RecordingContext c3;
  ASSERT_EQ(error_of(*en, c3), "(no error)");
  const auto by_energy = en->output("models").as<Table>();
  ASSERT_EQ(by_energy->rows.size(), 2u);
  EXPECT_LE(std::get<double>(by_energy->rows[0][2]), std::get<double>(by_energy->rows[1][2]));
  std::printf("helix ensemble: %g of 3 structures accepted\n", m.at("accepted"));
  // A user's report: with no residue ordered (here: no restraint between residues 5 or more
  // apart) the node computed every structure and then failed ("fewer than 3 backbone atoms in
  // ordered residues"), losing them. It superimposes on every residue's backbone and says so.
  RestraintSet local = rs;
  std::erase_if(local.restraints, [&](const DistanceRestraint& r) {
    const auto& a = mol->atoms[r.alternatives[0].atoms_a[0]];
    const auto& b = mol->atoms[r.alternatives[0].atoms_b[0]];
    return std::abs(a.residue_number - b.residue_number) >= 5;
  });
  ASSERT_LT(local.restraints.size(), rs.restraints.size());
  en->set_input("restraints", Value::make(local));
  en->set_param("structures", std::int64_t{2});
  en->set_param("keep", std::int64_t{2});
  RecordingContext c4;
  ASSERT_EQ(error_of(*en, c4), "(no error)");
  EXPECT_EQ(en->output("structure").as<Structure>()->models.size(), 2u);
  ASSERT_FALSE(c4.warnings().empty());
  EXPECT_NE(c4.warnings().back().find("no residue is ordered"), std::string::npos) << c4.warnings().back();
  EXPECT_NE(c4.warnings().back().find("every residue's backbone (36 atoms)"), std::string::npos)
      << c4.warnings().back();

  // a user's report: a pivot_fraction within its range failed every structure with a message that
  // did not name it; each failure now names the parameter
  en->set_param("method", std::string("cholesky"));
  en->set_param("pivot_fraction", 0.01);
  RecordingContext c5;
  EXPECT_NE(error_of(*en, c5).find("structures succeeded"), std::string::npos);
  ASSERT_FALSE(c5.warnings().empty());
  EXPECT_NE(c5.warnings().front().find("parameter 'pivot_fraction' = 0.01"), std::string::npos) << c5.warnings().front();
}

}  // namespace

namespace {

// distgeom.anneal on a node level: a 6-residue peptide from its sequence, annealed from the
// extended template model against restraints that fold it (CA(i)–CA(i+3) ≤ 5.5 Å).
TEST(AnnealNode, FoldsAPeptideAgainstItsRestraints) {
  const auto dir = std::filesystem::temp_directory_path() / "gemflow_topology_test";
  std::filesystem::create_directories(dir);
  const auto f = dir / "hex.fasta";
  std::ofstream(f) << ">hex\nAEAAKA\n";
  auto topo = gemflow::testing::make_node(registry(), "distgeom.topology");
  topo->set_param("path", f.string());
  RecordingContext c0;
  topo->execute(c0);
  const auto mol = topo->output("structure").as<Structure>();
  std::map<std::pair<int, std::string>, std::size_t> at;
  for (std::size_t i = 0; i < mol->atoms.size(); ++i) at[{mol->atoms[i].residue_number, mol->atoms[i].name}] = i;
  RestraintSet rs;
  for (int r = 1; r + 3 <= 6; ++r) {
    DistanceRestraint d;
    d.id = r;
    d.origin = "test:" + std::to_string(r);
    d.upper = 5.5;
    DistanceRestraint::Alternative alt;
    alt.atoms_a = {at.at({r, "CA"})};
    alt.atoms_b = {at.at({r + 3, "CA"})};
    d.alternatives.push_back(alt);
    rs.restraints.push_back(d);
  }
  auto an = gemflow::testing::make_node(registry(), "distgeom.anneal");
  an->set_input("structure", Value::make(*mol));
  an->set_input("topology", Value::make(*mol));
  an->set_input("restraints", Value::make(rs));
  an->set_param("hot_steps", std::int64_t{300});
  an->set_param("cooling_stages", std::int64_t{4});
  an->set_param("steps_per_stage", std::int64_t{100});
  RecordingContext c1;
  ASSERT_EQ(error_of(*an, c1), "(no error)");
  const auto out = an->output("structure").as<Structure>();
  ASSERT_EQ(out->atoms.size(), mol->atoms.size());
  ASSERT_EQ(out->models.size(), 1u);
  EXPECT_EQ(out->bonds.size(), mol->bonds.size());
  for (int r = 1; r + 3 <= 6; ++r) {
    const auto& p = out->models[0][at.at({r, "CA"})];
    const auto& q = out->models[0][at.at({r + 3, "CA"})];
    const double dd =
        std::sqrt((p[0] - q[0]) * (p[0] - q[0]) + (p[1] - q[1]) * (p[1] - q[1]) + (p[2] - q[2]) * (p[2] - q[2]));
    EXPECT_LT(dd, 6.0) << "CA " << r << " – CA " << r + 3;  // 9-10 Å in the extended start
  }
  const auto rep = an->output("report").as<Table>();
  std::map<std::string, Table::Cell> m;
  for (const auto& row : rep->rows) m[std::get<std::string>(row[0])] = row[1];
  EXPECT_EQ(std::get<std::int64_t>(m.at("md_steps")), 700);
  EXPECT_EQ(std::get<std::int64_t>(m.at("noe_violations_gt_0_5A")), 0);
  // a start atom the topology lacks is an error naming it
  Structure bad = *mol;
  bad.atoms[0].name = "XX";
  auto an2 = gemflow::testing::make_node(registry(), "distgeom.anneal");
  an2->set_input("structure", Value::make(bad));
  an2->set_input("topology", Value::make(*mol));
  RecordingContext c2;
  const auto e = error_of(*an2, c2);
  EXPECT_NE(e.find("A:1:ALA:XX"), std::string::npos) << e;
}

}  // namespace

namespace {

// A schedule whose t_final is above t_hot "cools" by heating: a parameter rule refuses it at the
// parameter's line before the run, and execute() (no workflow validation) refuses it too, naming
// both parameters.
TEST(AnnealNode, FinalTemperatureAboveTheHotOneIsRefused) {
  for (const std::string id : {"distgeom.anneal", "distgeom.ensemble"}) {
    SCOPED_TRACE(id);
    const auto errors = [&](const std::string& params) {
      const auto res = parse_workflow("gemflow: 1\nnodes:\n  a:\n    type: " + id + "\n    params:\n" + params,
                                      "w.yaml", registry());
      std::vector<std::string> e;
      for (const auto& d : res.diagnostics)
        if (d.severity == Diagnostic::Severity::Error && d.str().find("required input") == std::string::npos)
          e.push_back(d.str());
      return e;
    };
    const auto e = errors("      t_hot: 300\n      t_final: 2000\n");
    ASSERT_EQ(e.size(), 1u) << ::testing::PrintToString(e);
    EXPECT_EQ(e[0],
              "w.yaml:7:16: error: node 'a', parameter 't_final': t_final = 2000.0 must be at most t_hot = 300.0 "
              "(the cooling stages go from t_hot down to t_final; a t_final above t_hot would heat)");
    EXPECT_EQ(errors("      t_final: 3000\n").size(), 1u);  // above the default t_hot 2000
    EXPECT_TRUE(errors("      t_hot: 300\n      t_final: 300\n").empty());
    EXPECT_TRUE(errors("      t_hot: 3000\n      t_final: 2500\n").empty());
  }
  auto an = gemflow::testing::make_node(registry(), "distgeom.anneal");
  an->set_param("t_hot", 300.0);
  an->set_param("t_final", 2000.0);
  const auto f = std::filesystem::temp_directory_path() / "gemflow_topology_test" / "ga.fasta";
  std::filesystem::create_directories(f.parent_path());
  std::ofstream(f) << ">ga\nGA\n";
  auto topo = gemflow::testing::make_node(registry(), "distgeom.topology");
  topo->set_param("path", f.string());
  RecordingContext c0;
  topo->execute(c0);
  const auto mol = topo->output("structure").as<Structure>();
  an->set_input("structure", Value::make(*mol));
  an->set_input("topology", Value::make(*mol));
  RecordingContext c1;
  EXPECT_EQ(error_of(*an, c1),
            "parameters: t_final = 2000 K is above t_hot = 300 K: the cooling stages would heat the structure");
}

// symmetry: c2 on a homodimer (FASTA with copies 2) anneals with the symmetry term reported;
// on a molecule that is not two identical chains it is an error naming the chains; a
// symmetry_weight without symmetry c2 (no effect) is refused at validation.
TEST(AnnealNode, SymmetryC2NeedsTwoIdenticalChains) {
  const auto dir = std::filesystem::temp_directory_path() / "gemflow_topology_test";
  std::filesystem::create_directories(dir);
  const auto mol = [&](const std::string& fasta, std::int64_t copies) {
    const auto f = dir / "sym.fasta";
    std::ofstream(f) << fasta;
    auto topo = gemflow::testing::make_node(registry(), "distgeom.topology");
    topo->set_param("path", f.string());
    topo->set_param("copies", copies);
    RecordingContext c;
    topo->execute(c);
    return topo->output("structure").as<Structure>();
  };
  const auto run = [&](const std::shared_ptr<const Structure>& m, std::map<std::string, Table::Cell>* report) {
    auto an = gemflow::testing::make_node(registry(), "distgeom.anneal");
    an->set_input("structure", Value::make(*m));
    an->set_input("topology", Value::make(*m));
    an->set_param("symmetry", std::string("c2"));
    an->set_param("hot_steps", std::int64_t{50});
    an->set_param("cooling_stages", std::int64_t{1});
    an->set_param("steps_per_stage", std::int64_t{50});
    an->set_param("minimise_iterations", std::int64_t{50});
    RecordingContext c;
    const auto e = error_of(*an, c);
    if (report && e == "(no error)")
      for (const auto& row : an->output("report").as<Table>()->rows) (*report)[std::get<std::string>(row[0])] = row[1];
    return e;
  };
  // a symmetry weight without the symmetry term would be ignored: a parameter rule
  for (const std::string id : {"distgeom.anneal", "distgeom.ensemble"}) {
    const auto errors = [&](const std::string& params) {
      std::vector<std::string> e;
      for (const auto& d : parse_workflow("gemflow: 1\nnodes:\n  a:\n    type: " + id + "\n    params:\n" + params,
                                          "w.yaml", registry())
                               .diagnostics)
        if (d.severity == Diagnostic::Severity::Error && d.str().find("required input") == std::string::npos)
          e.push_back(d.str());
      return e;
    };
    const auto e = errors("      symmetry_weight: 50\n");
    ASSERT_EQ(e.size(), 1u) << id;
    EXPECT_EQ(e[0],
              "w.yaml:6:24: error: node 'a', parameter 'symmetry_weight': symmetry_weight = 50.0 needs 'symmetry: "
              "c2' (the weight is that of the c2 symmetry term; without it the weight has no effect)");
    EXPECT_TRUE(errors("      symmetry: c2\n      symmetry_weight: 50\n").empty()) << id;
    EXPECT_EQ(errors("      symmetry_atoms: backbone\n").size(), 1u) << id;
    EXPECT_TRUE(errors("      symmetry: c2\n      symmetry_atoms: backbone\n").empty()) << id;
  }
  std::map<std::string, Table::Cell> rep;
  EXPECT_EQ(run(mol(">d\nKLVA\n", 2), &rep), "(no error)");
  EXPECT_GT(std::get<double>(rep.at("energy_symmetry")), 0.0);  // the copies start translated, not C2
  EXPECT_EQ(run(mol(">d\nKLVA\n", 1), nullptr),
            "parameter 'symmetry': symmetry c2 needs two identical chains; the molecule has 1: 'A'");
  EXPECT_EQ(run(mol(">a\nKLVA\n>b\nKLIA\n", 1), nullptr),
            "parameter 'symmetry': symmetry c2: chains 'A' and 'B' are not identical: residue 3 of each is "
            "A:3:VAL and B:3:ILE");
}

using distgeom::ChainSequence;
using distgeom::MolecularTopology;
using distgeom::SequenceResidue;

ChainSequence chain(const std::string& id, std::initializer_list<std::pair<const char*, int>> residues) {
  ChainSequence c{id, {}};
  for (const auto& [name, number] : residues) c.residues.push_back(SequenceResidue{name, number, {}});
  return c;
}

std::set<std::string> names_of(const MolecularTopology& t, int residue) {
  std::set<std::string> out;
  for (const auto& a : t.atoms)
    if (a.residue_number == residue) out.insert(a.name);
  return out;
}

std::size_t atom(const MolecularTopology& t, int residue, const std::string& name) {
  for (std::size_t i = 0; i < t.atoms.size(); ++i)
    if (t.atoms[i].residue_number == residue && t.atoms[i].name == name) return i;
  ADD_FAILURE() << "no atom " << residue << " " << name;
  return 0;
}

bool bonded(const MolecularTopology& t, std::size_t i, std::size_t j) {
  const std::array<std::size_t, 2> b{std::min(i, j), std::max(i, j)};
  return std::find(t.bonds.begin(), t.bonds.end(), b) != t.bonds.end();
}

std::array<double, 3> at(const MolecularTopology& t, std::size_t i) {
  return {t.xyz[3 * i], t.xyz[3 * i + 1], t.xyz[3 * i + 2]};
}

double torsion_deg(const MolecularTopology& t, std::size_t a, std::size_t b, std::size_t c, std::size_t d) {
  return distgeom::torsion_angle(at(t, a).data(), at(t, b).data(), at(t, c).data(), at(t, d).data()) * 180.0 /
         3.141592653589793;
}

// The template's ideal distance between two of its atoms.
double ideal(const std::string& id, const std::string& a, const std::string& b) {
  const auto& t = distgeom::nodes::standard_templates().at(id);
  const auto& p = t.atoms[t.find(a)].xyz;
  const auto& q = t.atoms[t.find(b)].xyz;
  return std::sqrt((p[0] - q[0]) * (p[0] - q[0]) + (p[1] - q[1]) * (p[1] - q[1]) + (p[2] - q[2]) * (p[2] - q[2]));
}

// ACE-ALA-NME: the atoms of the CCD entries less their leaving atoms (and ACE's aldehyde H), no
// NH3+ or OXT on the capped ends, the two junction bonds, the CCD bond lengths inside the caps,
// and planar trans peptides at both junctions.
TEST(TopologyCaps, AceAlaNmeAtomsBondsAndPlanes) {
  const auto t = distgeom::build_topology({chain("A", {{"ACE", 0}, {"ALA", 1}, {"NME", 2}})},
                                          distgeom::nodes::standard_templates());
  EXPECT_EQ(names_of(t, 0), (std::set<std::string>{"C", "O", "CH3", "H1", "H2", "H3"}));
  EXPECT_EQ(names_of(t, 1), (std::set<std::string>{"N", "CA", "C", "O", "CB", "H", "HA", "HB1", "HB2", "HB3"}));
  EXPECT_EQ(names_of(t, 2), (std::set<std::string>{"N", "C", "HN2", "H1", "H2", "H3"}));
  EXPECT_EQ(t.atoms.size(), 22u);
  // ACE 5 + ALA 9 + NME 5 template bonds + 2 junctions
  EXPECT_EQ(t.bonds.size(), 21u);
  const std::size_t ace_c = atom(t, 0, "C"), ace_o = atom(t, 0, "O"), ace_me = atom(t, 0, "CH3");
  const std::size_t n = atom(t, 1, "N"), ca = atom(t, 1, "CA"), c = atom(t, 1, "C"), o = atom(t, 1, "O"),
                    h = atom(t, 1, "H");
  const std::size_t nme_n = atom(t, 2, "N"), nme_c = atom(t, 2, "C"), nme_h = atom(t, 2, "HN2");
  EXPECT_TRUE(bonded(t, ace_c, n));
  EXPECT_TRUE(bonded(t, c, nme_n));
  EXPECT_TRUE(bonded(t, n, h));
  EXPECT_TRUE(bonded(t, nme_n, nme_h));
  EXPECT_NEAR(d(t.xyz, ace_c, n), 1.329, 1e-9);
  EXPECT_NEAR(d(t.xyz, c, nme_n), 1.329, 1e-9);
  // caps keep their CCD geometry
  EXPECT_NEAR(d(t.xyz, ace_c, ace_o), ideal("ACE", "C", "O"), 1e-6);
  EXPECT_NEAR(d(t.xyz, ace_c, ace_me), ideal("ACE", "C", "CH3"), 1e-6);
  EXPECT_NEAR(d(t.xyz, ace_me, atom(t, 0, "H2")), ideal("ACE", "CH3", "H2"), 1e-6);
  EXPECT_NEAR(d(t.xyz, nme_n, nme_c), ideal("NME", "N", "C"), 1e-6);
  EXPECT_NEAR(d(t.xyz, nme_c, atom(t, 2, "H3")), ideal("NME", "C", "H3"), 1e-6);
  EXPECT_NEAR(d(t.xyz, nme_n, nme_h), ideal("NME", "N", "HN2"), 1e-6);
  // trans peptide planes: ω and the carbonyl O opposite the amide H
  EXPECT_NEAR(std::abs(torsion_deg(t, ace_me, ace_c, n, ca)), 180.0, 1e-6);
  EXPECT_NEAR(std::abs(torsion_deg(t, ace_o, ace_c, n, h)), 180.0, 0.5);
  EXPECT_NEAR(std::abs(torsion_deg(t, ca, c, nme_n, nme_c)), 180.0, 1e-6);
  EXPECT_NEAR(std::abs(torsion_deg(t, o, c, nme_n, nme_h)), 180.0, 0.5);
  // the bounds see both junctions as peptide planes (C, N and their bonded atoms)
  const auto topo = distgeom::topology_from_bonds(t.atoms, t.bonds);
  ASSERT_EQ(topo.planes.size(), 2u);
  std::vector<std::size_t> ace_plane{ace_c, ace_o, ace_me, n, ca, h};
  std::sort(ace_plane.begin(), ace_plane.end());
  EXPECT_EQ(topo.planes[0], ace_plane);
  EXPECT_TRUE(std::find(topo.planes[1].begin(), topo.planes[1].end(), nme_c) != topo.planes[1].end());
  // Cα handedness: the template's
  const auto& ala = distgeom::nodes::standard_templates().at("ALA");
  auto tx = [&](const char* nm) { return ala.atoms[ala.find(nm)].xyz; };
  const double v_template = distgeom::chiral_volume(tx("CA").data(), tx("N").data(), tx("C").data(), tx("CB").data());
  const double v_built =
      distgeom::chiral_volume(at(t, ca).data(), at(t, n).data(), at(t, c).data(), at(t, atom(t, 1, "CB")).data());
  EXPECT_GT(v_template * v_built, 0.0);
  EXPECT_NEAR(v_built, v_template, 1e-6);
}

// ACE-PRO-NH2: no amide H on the proline after the cap, the NH2 cap with both hydrogens in the
// peptide plane; an MSE and an SEP inside a chain are amino acids like the others.
TEST(TopologyCaps, AceProNh2AndModifiedResidues) {
  const auto t =
      distgeom::build_topology({chain("A", {{"ACE", 0}, {"PRO", 1}, {"MSE", 2}, {"SEP", 3}, {"TPO", 4}, {"NH2", 5}})},
                               distgeom::nodes::standard_templates());
  EXPECT_EQ(names_of(t, 0), (std::set<std::string>{"C", "O", "CH3", "H1", "H2", "H3"}));
  const auto pro = names_of(t, 1);
  EXPECT_FALSE(pro.count("H") || pro.count("H2") || pro.count("H3"));
  EXPECT_EQ(names_of(t, 5), (std::set<std::string>{"N", "HN1", "HN2"}));
  EXPECT_TRUE(names_of(t, 2).count("SE"));
  EXPECT_TRUE(names_of(t, 3).count("P"));
  EXPECT_FALSE(names_of(t, 4).count("OXT"));
  const std::size_t c = atom(t, 4, "C"), ca = atom(t, 4, "CA"), n = atom(t, 5, "N");
  EXPECT_TRUE(bonded(t, c, n));
  EXPECT_TRUE(bonded(t, atom(t, 0, "C"), atom(t, 1, "N")));
  EXPECT_NEAR(std::abs(torsion_deg(t, ca, c, n, atom(t, 5, "HN1"))), 180.0, 1e-6);
  EXPECT_NEAR(std::abs(torsion_deg(t, ca, c, n, atom(t, 5, "HN2"))), 0.0, 1e-6);
  // every residue bonded to its neighbours: one connected molecule
  const auto topo = distgeom::topology_from_bonds(t.atoms, t.bonds);
  std::vector<char> seen(t.atoms.size(), 0);
  std::vector<std::size_t> stack{0};
  seen[0] = 1;
  while (!stack.empty()) {
    const auto i = stack.back();
    stack.pop_back();
    for (auto j : topo.neighbours[i])
      if (!seen[j]) {
        seen[j] = 1;
        stack.push_back(j);
      }
  }
  EXPECT_EQ(std::count(seen.begin(), seen.end(), 1), static_cast<std::ptrdiff_t>(t.atoms.size()));
}

// Ions and ligands are their own residues: all template atoms, no bond to the chain; the chain's
// termini stay NH3+ / COO-; a chain of a ligand only is fine.
TEST(TopologyCaps, IonAndLigandResidues) {
  const auto& templates = distgeom::nodes::standard_templates();
  const auto t = distgeom::build_topology(
      {chain("A", {{"ALA", 1}, {"GLY", 2}, {"NA", 101}}), chain("B", {{"HEM", 201}})}, templates);
  EXPECT_EQ(names_of(t, 101), (std::set<std::string>{"NA"}));
  const std::size_t na = atom(t, 101, "NA");
  for (auto [i, j] : t.bonds) EXPECT_TRUE(i != na && j != na);
  EXPECT_TRUE(names_of(t, 1).count("H1"));
  EXPECT_TRUE(names_of(t, 2).count("OXT"));
  std::size_t hem = 0, hem_bonds = 0;
  for (const auto& a : t.atoms) hem += a.residue_number == 201;
  for (auto [i, j] : t.bonds) hem_bonds += t.atoms[i].residue_number == 201 && t.atoms[j].residue_number == 201;
  EXPECT_EQ(hem, templates.at("HEM").atoms.size());
  EXPECT_EQ(hem_bonds, templates.at("HEM").bonds.size());
  // HEM keeps its ideal geometry (Fe–NA bond)
  EXPECT_NEAR(d(t.xyz, atom(t, 201, "FE"), atom(t, 201, "NA")), ideal("HEM", "FE", "NA"), 1e-9);
  // the ion is away from the chain
  for (std::size_t i = 0; i < t.atoms.size(); ++i) {
    if (i != na) {
      EXPECT_GT(d(t.xyz, i, na), 5.0) << t.atoms[i].name;
    }
  }
}

// Caps and ligands in the wrong place, and unknown residues, are errors naming chain, number and
// name.
TEST(TopologyCaps, MisplacedCapsAndUnknownResiduesAreErrors) {
  const auto& templates = distgeom::nodes::standard_templates();
  auto error = [&](const ChainSequence& c) {
    try {
      (void)distgeom::build_topology({c}, templates);
    } catch (const std::invalid_argument& e) {
      return std::string(e.what());
    }
    return std::string("(no error)");
  };
  auto e = error(chain("A", {{"ALA", 1}, {"ACE", 2}, {"GLY", 3}}));
  EXPECT_NE(e.find("chain 'A' residue 2 ACE"), std::string::npos) << e;
  e = error(chain("A", {{"NME", 1}, {"ALA", 2}}));
  EXPECT_NE(e.find("residue 1 NME: a C-terminal cap"), std::string::npos) << e;
  e = error(chain("A", {{"ALA", 1}, {"NH2", 2}, {"GLY", 3}}));
  EXPECT_NE(e.find("residue 2 NH2"), std::string::npos) << e;
  e = error(chain("A", {{"ACE", 1}}));
  EXPECT_NE(e.find("residue 1 ACE: an N-terminal cap"), std::string::npos) << e;
  e = error(chain("A", {{"ALA", 1}, {"NA", 2}, {"GLY", 3}}));
  EXPECT_NE(e.find("residue 2 NA: not an amino acid, between amino acids 1 and 3"), std::string::npos) << e;
  e = error(chain("B", {{"ALA", 7}, {"XYZ", 8}}));
  EXPECT_NE(e.find("chain 'B' residue 8 XYZ: no residue template"), std::string::npos) << e;
  EXPECT_NE(e.find("ACE"), std::string::npos) << e;  // the templates there are
  // ligands before the chain are fine
  EXPECT_EQ(error(chain("A", {{"NA", 0}, {"ACE", 1}, {"ALA", 2}, {"NME", 3}, {"NA", 4}})), "(no error)");
}

// FASTA cannot name caps: n_cap / c_cap add them; a NEF / NMR-STAR file names them itself; the
// error for an unknown residue names the file.
TEST(TopologyNode, CapParametersAndCapsFromNmrStar) {
  const auto dir = std::filesystem::temp_directory_path() / "gemflow_topology_test";
  std::filesystem::create_directories(dir);
  const auto f = dir / "capped.fasta";
  std::ofstream(f) << ">pep\nAG\n";
  auto node = gemflow::testing::make_node(registry(), "distgeom.topology");
  node->set_param("path", f.string());
  node->set_param("n_cap", std::string("ACE"));
  node->set_param("c_cap", std::string("NH2"));
  node->set_param("copies", std::int64_t{2});
  RecordingContext ctx;
  ASSERT_EQ(error_of(*node, ctx), "(no error)");
  const auto s = node->output("structure").as<Structure>();
  std::map<std::pair<std::string, int>, std::string> residues;
  for (const auto& a : s->atoms) residues[{a.chain, a.residue_number}] = a.residue;
  const std::map<std::pair<std::string, int>, std::string> want{{{"A", 0}, "ACE"}, {{"A", 1}, "ALA"}, {{"A", 2}, "GLY"},
                                                                {{"A", 3}, "NH2"}, {{"B", 0}, "ACE"}, {{"B", 1}, "ALA"},
                                                                {{"B", 2}, "GLY"}, {{"B", 3}, "NH2"}};
  EXPECT_EQ(residues, want);
  // ACE 6 + ALA 10 + GLY 7 (no OXT) + NH2 3, twice
  EXPECT_EQ(s->atoms.size(), 2u * (6u + 10u + 7u + 3u));
  // the same molecule from an NMR-STAR entity naming the caps
  const auto str = dir / "capped.str";
  std::ofstream(str) << "data_x\nsave_pep\n_Entity.Sf_category entity\n_Entity.ID 1\nloop_\n"
                        "_Entity_comp_index.ID\n_Entity_comp_index.Auth_seq_ID\n_Entity_comp_index.Comp_ID\n"
                        "1 0 ACE\n2 1 ALA\n3 2 GLY\n4 3 NH2\nstop_\nsave_\n";
  auto star = gemflow::testing::make_node(registry(), "distgeom.topology");
  star->set_param("path", str.string());
  RecordingContext ctx2;
  ASSERT_EQ(error_of(*star, ctx2), "(no error)");
  const auto s2 = star->output("structure").as<Structure>();
  ASSERT_EQ(s2->atoms.size(), s->atoms.size() / 2);
  for (std::size_t i = 0; i < s2->atoms.size(); ++i) {
    ASSERT_EQ(s2->atoms[i].name, s->atoms[i].name) << i;
    ASSERT_EQ(s2->atoms[i].residue_number, s->atoms[i].residue_number) << i;
  }
  // capping a chain that names its caps adds none
  star->set_param("n_cap", std::string("ACE"));
  star->set_param("c_cap", std::string("NME"));
  RecordingContext ctx3;
  ASSERT_EQ(error_of(*star, ctx3), "(no error)");
  EXPECT_EQ(star->output("structure").as<Structure>()->atoms.size(), s2->atoms.size());
  // an unknown residue: file, chain, number, name
  std::ofstream(str) << "data_x\nsave_pep\n_Entity.ID 1\nloop_\n_Entity_comp_index.ID\n_Entity_comp_index.Comp_ID\n"
                        "1 ALA\n2 ZN\nstop_\nsave_\n";
  auto bad = gemflow::testing::make_node(registry(), "distgeom.topology");
  bad->set_param("path", str.string());
  RecordingContext ctx4;
  const auto e = error_of(*bad, ctx4);
  EXPECT_NE(e.find("capped.str"), std::string::npos) << e;
  EXPECT_NE(e.find("chain 'A' residue 2 ZN: no residue template"), std::string::npos) << e;
}

// A NEF molecular system names caps and ions by residue name; a structure's residue list
// (distgeom.topology_from_residues) gives the same molecule back.
TEST(TopologyNode, NefCapsAndIonAndTheResidueListRoundTrip) {
  const auto dir = std::filesystem::temp_directory_path() / "gemflow_topology_test";
  std::filesystem::create_directories(dir);
  const auto f = dir / "capped.nef";
  std::ofstream(f) << "data_capped\nsave_nef_molecular_system\n_nef_molecular_system.sf_category "
                      "nef_molecular_system\nloop_\n_nef_sequence.index\n_nef_sequence.chain_code\n"
                      "_nef_sequence.sequence_code\n_nef_sequence.residue_name\n_nef_sequence.linking\n"
                      "_nef_sequence.residue_variant\n1 A 0 ACE start .\n2 A 1 SER middle .\n"
                      "3 A 2 TRP middle .\n4 A 3 NME end .\n5 B 10 NA single .\nstop_\nsave_\n";
  auto node = gemflow::testing::make_node(registry(), "distgeom.topology");
  node->set_param("path", f.string());
  RecordingContext ctx;
  ASSERT_EQ(error_of(*node, ctx), "(no error)");
  const auto s = node->output("structure").as<Structure>();
  std::set<std::tuple<std::string, int, std::string>> residues;
  for (const auto& a : s->atoms) residues.insert({a.chain, a.residue_number, a.residue});
  EXPECT_EQ(residues, (std::set<std::tuple<std::string, int, std::string>>{
                          {"A", 0, "ACE"}, {"A", 1, "SER"}, {"A", 2, "TRP"}, {"A", 3, "NME"}, {"B", 10, "NA"}}));
  // ACE 6 + SER 11 (H, no H1-3) + TRP 24 (no OXT) + NME 6 + NA 1
  EXPECT_EQ(s->atoms.size(), 6u + 11u + 24u + 6u + 1u);
  auto again = gemflow::testing::make_node(registry(), "distgeom.topology_from_residues");
  again->set_input("residues", Value::make(*s));
  RecordingContext ctx2;
  ASSERT_EQ(error_of(*again, ctx2), "(no error)");
  const auto r = again->output("structure").as<Structure>();
  ASSERT_EQ(r->atoms.size(), s->atoms.size());
  for (std::size_t i = 0; i < r->atoms.size(); ++i) ASSERT_EQ(r->atoms[i].name, s->atoms[i].name) << i;
  EXPECT_EQ(r->bonds, s->bonds);
}

// End to end: bounds from the capped peptide's template geometry, embedding and refinement give
// the CCD bond lengths back, junctions included (tolerance stated below).
TEST(TopologyCaps, EmbeddedCappedPeptideKeepsTheCcdBondLengths) {
  const auto dir = std::filesystem::temp_directory_path() / "gemflow_topology_test";
  std::filesystem::create_directories(dir);
  const auto f = dir / "capped_aaa.fasta";
  std::ofstream(f) << ">pep\nAVA\n";
  auto topo = gemflow::testing::make_node(registry(), "distgeom.topology");
  topo->set_param("path", f.string());
  topo->set_param("n_cap", std::string("ACE"));
  topo->set_param("c_cap", std::string("NME"));
  RecordingContext c0;
  ASSERT_EQ(error_of(*topo, c0), "(no error)");
  const auto mol = topo->output("structure").as<Structure>();
  auto bn = gemflow::testing::make_node(registry(), "distgeom.bounds");
  bn->set_input("structure", Value::make(*mol));
  bn->set_input("restraints", Value::make(RestraintSet{}));
  bn->set_param("bonds", std::string("structure"));
  RecordingContext c1;
  ASSERT_EQ(error_of(*bn, c1), "(no error)");
  DistanceBounds sm = *bn->output("bounds").as<DistanceBounds>();
  ASSERT_TRUE(distgeom::smooth_bounds(sm.lower.span(), sm.upper.span(), sm.size()).consistent);
  auto er = gemflow::testing::make_node(registry(), "distgeom.embed_and_refine");
  er->set_input("bounds", bn->output("bounds"));
  er->set_input("smoothed", Value::make(sm));
  er->set_input("structure", Value::make(*mol));
  er->set_param("trials", std::int64_t{2});
  er->set_param("threads", std::int64_t{1});
  RecordingContext c2;
  ASSERT_EQ(error_of(*er, c2), "(no error)");
  const auto out = er->output("structure").as<Structure>();
  ASSERT_EQ(out->atoms.size(), mol->atoms.size());
  std::map<Key, std::size_t> idx;
  for (std::size_t i = 0; i < out->atoms.size(); ++i)
    idx[{out->atoms[i].chain, out->atoms[i].residue_number, out->atoms[i].name}] = i;
  auto dist = [&](const Structure& s, std::size_t i, std::size_t j) {
    const auto& p = s.models[0][i];
    const auto& q = s.models[0][j];
    return std::sqrt((p[0] - q[0]) * (p[0] - q[0]) + (p[1] - q[1]) * (p[1] - q[1]) + (p[2] - q[2]) * (p[2] - q[2]));
  };
  double worst = 0;
  for (auto [i, j] : mol->bonds) {
    const std::size_t a = idx.at({mol->atoms[i].chain, mol->atoms[i].residue_number, mol->atoms[i].name}),
                      b = idx.at({mol->atoms[j].chain, mol->atoms[j].residue_number, mol->atoms[j].name});
    worst = std::max(worst, std::abs(dist(*out, a, b) - dist(*mol, i, j)));
  }
  // the template model's bonds are the CCD's (checked above): the cap bonds and the junctions
  auto embedded = [&](int r1, const char* a1, int r2, const char* a2) {
    return dist(*out, idx.at({"A", r1, a1}), idx.at({"A", r2, a2}));
  };
  constexpr double kTol = 0.02;  // Å: bonds are bounded to the model ± 0.01 Å (measured worst 0.010)
  EXPECT_NEAR(embedded(0, "C", 0, "O"), ideal("ACE", "C", "O"), kTol);
  EXPECT_NEAR(embedded(0, "C", 0, "CH3"), ideal("ACE", "C", "CH3"), kTol);
  EXPECT_NEAR(embedded(4, "N", 4, "C"), ideal("NME", "N", "C"), kTol);
  EXPECT_NEAR(embedded(0, "C", 1, "N"), 1.329, kTol);
  EXPECT_NEAR(embedded(3, "C", 4, "N"), 1.329, kTol);
  EXPECT_LT(worst, kTol);
  std::printf("capped AVA embedded: worst bond |Δ| %.4f Å over %zu bonds\n", worst, mol->bonds.size());
  // distgeom.anneal takes the caps' geometry too: junction bonds and trans peptide planes hold
  auto an = gemflow::testing::make_node(registry(), "distgeom.anneal");
  an->set_input("structure", Value::make(*mol));
  an->set_input("topology", Value::make(*mol));
  an->set_param("hot_steps", std::int64_t{200});
  an->set_param("cooling_stages", std::int64_t{3});
  an->set_param("steps_per_stage", std::int64_t{100});
  RecordingContext c3;
  ASSERT_EQ(error_of(*an, c3), "(no error)");
  const auto ann = an->output("structure").as<Structure>();
  auto model_at = [&](int r, const char* a) {
    for (std::size_t i = 0; i < ann->atoms.size(); ++i)
      if (ann->atoms[i].residue_number == r && ann->atoms[i].name == a) return i;
    ADD_FAILURE() << r << " " << a;
    return std::size_t{0};
  };
  EXPECT_NEAR(dist(*ann, model_at(0, "C"), model_at(1, "N")), 1.329, 0.05);
  EXPECT_NEAR(dist(*ann, model_at(3, "C"), model_at(4, "N")), 1.329, 0.05);
  auto omega = [&](int r1, const char* a, const char* b, int r2, const char* c, const char* e) {
    const auto& p = ann->models[0];
    return std::abs(distgeom::torsion_angle(p[model_at(r1, a)].data(), p[model_at(r1, b)].data(),
                                            p[model_at(r2, c)].data(), p[model_at(r2, e)].data())) *
           180.0 / 3.141592653589793;
  };
  EXPECT_GT(omega(0, "CH3", "C", 1, "N", "CA"), 150.0);
  EXPECT_GT(omega(3, "CA", "C", 4, "N", "C"), 150.0);
}

}  // namespace
