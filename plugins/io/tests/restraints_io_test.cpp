// NEF and Xplor-NIH restraint reading, resolution against 2KPU, error messages.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <set>

#include <gemflow/types.hpp>

#include <gemflow/testing.hpp>

#include "gemflow/io/errors.hpp"
#include "gemflow/io/restraints_io.hpp"
#include "gemflow/io/structure_io.hpp"
#include "io_test_support.hpp"
#include "register.hpp"

using namespace gemflow;
using namespace gemflow::io;
using gemflow::io::testing::sample;
using gemflow::io::testing::shared;
using gemflow::io::testing::write_temp;

namespace {

using PairSet = std::set<std::pair<std::size_t, std::size_t>>;

PairSet pairs_of(const DistanceRestraint& r) {
  PairSet p;
  for (const auto& alt : r.alternatives)
    for (auto i : alt.atoms_a)
      for (auto j : alt.atoms_b) p.emplace(std::min(i, j), std::max(i, j));
  return p;
}

using gemflow::io::testing::error_of;
using gemflow::io::testing::model1;

}  // namespace

/// A NEF distance-restraint loop up to its rows: data block, save frame, the id and selection
/// columns, then `values` (e.g. "upper_limit"); 10 + values.size() lines.
std::string nef_head(std::initializer_list<const char*> values) {
  std::string h =
      "data_x\nsave_d\nloop_\n_nef_distance_restraint.restraint_id\n"
      "_nef_distance_restraint.chain_code_1\n_nef_distance_restraint.sequence_code_1\n"
      "_nef_distance_restraint.residue_name_1\n_nef_distance_restraint.atom_name_1\n"
      "_nef_distance_restraint.chain_code_2\n_nef_distance_restraint.sequence_code_2\n"
      "_nef_distance_restraint.residue_name_2\n_nef_distance_restraint.atom_name_2\n";
  for (const char* v : values) h += std::string("_nef_distance_restraint.") + v + "\n";
  return h;
}

TEST(XplorRestraints, Counts2kpu) {
  auto set = read_xplor_distance_restraints(sample("2kpu/2kpu_Xplor-NIH_distance.tbl"));
  ASSERT_EQ(set.restraints.size(), 841u);
  EXPECT_EQ(set.format, "xplor");
  const auto& r0 = set.restraints[0];
  EXPECT_EQ(r0.id, 1);
  EXPECT_CONTAINS(r0.origin, "2kpu_Xplor-NIH_distance.tbl:1");
  ASSERT_EQ(r0.alternatives.size(), 1u);
  EXPECT_EQ(r0.alternatives[0].a.chain, "A");
  EXPECT_EQ(r0.alternatives[0].a.residue_number, 19);
  EXPECT_EQ(r0.alternatives[0].a.atom, "H");
  EXPECT_EQ(r0.alternatives[0].b.residue_number, 20);
  EXPECT_DOUBLE_EQ(r0.lower, 1.8);  // 1.800 - 0.000
  EXPECT_DOUBLE_EQ(r0.upper, 3.5);  // 1.800 + 1.700
  EXPECT_DOUBLE_EQ(r0.target, 1.8);
  for (const auto& r : set.restraints) EXPECT_EQ(r.alternatives.size(), 1u) << r.origin;
}

TEST(NefRestraints, AgreesWithXplorRestraintByRestraint) {
  auto nef = read_nef_distance_restraints(sample("2kpu/DhR29B_2kpu.nef"));
  auto tbl = read_xplor_distance_restraints(sample("2kpu/2kpu_Xplor-NIH_distance.tbl"));
  ASSERT_EQ(nef.restraints.size(), 841u);
  ASSERT_EQ(tbl.restraints.size(), nef.restraints.size());
  EXPECT_EQ(nef.format, "nef");
  for (std::size_t k = 0; k < nef.restraints.size(); ++k) {
    const auto &n = nef.restraints[k], &x = tbl.restraints[k];
    ASSERT_EQ(n.id, static_cast<int>(k + 1));  // the .tbl comments give the NEF id in order
    ASSERT_EQ(n.id, x.id);
    ASSERT_NEAR(n.lower, x.lower, 1e-9) << n.origin << " vs " << x.origin;
    ASSERT_NEAR(n.upper, x.upper, 1e-9) << n.origin << " vs " << x.origin;
    ASSERT_EQ(n.alternatives.size(), 1u);
    EXPECT_EQ(n.alternatives[0].a.residue_number, x.alternatives[0].a.residue_number) << n.origin;
    EXPECT_EQ(n.alternatives[0].b.residue_number, x.alternatives[0].b.residue_number) << n.origin;
  }
  EXPECT_EQ(nef.restraints[0].alternatives[0].a.residue, "ASN");
  EXPECT_EQ(nef.restraints[0].alternatives[0].a.line, 1333);
}

TEST(ResolveRestraints, BothFormatsResolveToTheSamePairsOn2kpuModel1) {
  auto nef = read_nef_distance_restraints(sample("2kpu/DhR29B_2kpu.nef"));
  auto tbl = read_xplor_distance_restraints(sample("2kpu/2kpu_Xplor-NIH_distance.tbl"));
  auto rn = resolve_restraints(nef, model1());
  auto rx = resolve_restraints(tbl, model1());
  ASSERT_EQ(rn.restraints_out, 841u);  // every restraint resolves
  ASSERT_EQ(rx.restraints_out, 841u);
  EXPECT_EQ(rn.skipped, 0u);
  EXPECT_EQ(rn.suggested_offset, 0);
  // The Xplor-NIH export names one proton of a Phe/Tyr ring pair (HD1, HE1) where the NEF has
  // the pair (HD%, HE%): symmetric ring protons, flipping fast, are one position for Xplor-NIH.
  // Every other restraint resolves to exactly the same atom pairs.
  const Structure& s = model1();
  std::vector<int> ring_only;
  for (std::size_t k = 0; k < 841; ++k) {
    const auto &n = nef.restraints[k], &x = tbl.restraints[k];
    const PairSet pn = pairs_of(n), px = pairs_of(x);
    ASSERT_FALSE(px.empty());
    if (pn == px) {
      ASSERT_DOUBLE_EQ(n.pseudo_correction, x.pseudo_correction) << n.origin;
      continue;
    }
    ASSERT_TRUE(std::includes(pn.begin(), pn.end(), px.begin(), px.end())) << n.origin << " vs " << x.origin;
    for (int side = 0; side < 2; ++side) {
      const auto& ns = side == 0 ? n.alternatives[0].a : n.alternatives[0].b;
      const auto& xs = side == 0 ? x.alternatives[0].a : x.alternatives[0].b;
      const auto& atoms = side == 0 ? n.alternatives[0].atoms_a : n.alternatives[0].atoms_b;
      if (atoms == (side == 0 ? x.alternatives[0].atoms_a : x.alternatives[0].atoms_b)) continue;
      const std::string res = s.atoms[atoms[0]].residue;
      EXPECT_TRUE(res == "PHE" || res == "TYR") << n.origin << " " << ns.atom << " vs " << xs.atom;
      EXPECT_TRUE((ns.atom == "HD%" && xs.atom == "HD1") || (ns.atom == "HE%" && xs.atom == "HE1"))
          << n.origin << " " << ns.atom << " vs " << xs.atom;
    }
    ring_only.push_back(n.id);
  }
  EXPECT_EQ(ring_only.size(), 26u) << ::testing::PrintToString(ring_only);  // 815 identical
  // No residue-name mismatch between the NEF and the deposited structure.
  for (const auto& it : rn.items)
    if (it.what.rfind("residue names differing", 0) == 0) {
      EXPECT_EQ(it.count, 0u) << it.examples;
    }
}

TEST(ResolveRestraints, PseudoAtomCorrections2kpu) {
  auto nef = read_nef_distance_restraints(sample("2kpu/DhR29B_2kpu.nef"));
  (void)resolve_restraints(nef, model1());
  const Structure& s = model1();
  std::map<double, int> by_value;
  for (const auto& r : nef.restraints) ++by_value[r.pseudo_correction];
  // Restraint 1: H 19 - H 20, single atoms.
  EXPECT_EQ(nef.restraints[0].pseudo_correction, 0.0);
  // Every restraint whose NEF names use '%' on one side has a correction >= 1 Å.
  for (const auto& r : nef.restraints) {
    const auto& alt = r.alternatives[0];
    double want = 0;
    for (const auto* sel : {&alt.a, &alt.b})
      if (sel->atom.find_first_of("%xy") != std::string::npos) {
        const auto& atoms = sel == &alt.a ? alt.atoms_a : alt.atoms_b;
        const std::string res = s.atoms[atoms[0]].residue;
        if (atoms.size() == 6) want += 2.4;  // Val/Leu both methyls
        else if ((res == "PHE" || res == "TYR") && (sel->atom == "HD%" || sel->atom == "HE%")) want += 2.0;
        else want += 1.0;  // methylene pair or methyl
      }
    ASSERT_DOUBLE_EQ(r.pseudo_correction, want) << r.origin << " " << alt.a.atom << " " << alt.b.atom;
  }
  EXPECT_GT(by_value[1.0], 100);
}

TEST(ResolveRestraints, AriaVariantParsesAndMatches) {
  const std::string aria = shared("restraints/2kpu/2kpu_ARIA_distances.tbl");
  if (aria.empty()) GTEST_SKIP() << "GEMFLOW_SHARED_DATA/restraints/2kpu/2kpu_ARIA_distances.tbl absent";
  auto set = read_xplor_distance_restraints(aria);
  ASSERT_EQ(set.restraints.size(), 841u);
  std::size_t alternatives = 0;
  for (const auto& r : set.restraints) alternatives += r.alternatives.size();
  EXPECT_EQ(alternatives, 841u + 1141u);  // one per assign plus one per `or` line (grep -c)
  EXPECT_DOUBLE_EQ(set.restraints[0].weight, 1.0);
  EXPECT_EQ(set.restraints[0].alternatives[0].a.chain, "A");  // segid "   A" trimmed
  auto tbl = read_xplor_distance_restraints(sample("2kpu/2kpu_Xplor-NIH_distance.tbl"));
  auto ra = resolve_restraints(set, model1());
  (void)resolve_restraints(tbl, model1());
  ASSERT_EQ(ra.restraints_out, 841u);
  // ARIA lists explicit alternatives, sometimes only some of the wildcard's pairs: its pairs
  // are a subset of the .tbl's, equal for most restraints.
  std::size_t same = 0;
  for (std::size_t k = 0; k < 841; ++k) {
    const PairSet pa = pairs_of(set.restraints[k]), px = pairs_of(tbl.restraints[k]);
    same += pa == px;
    EXPECT_TRUE(std::includes(px.begin(), px.end(), pa.begin(), pa.end())) << set.restraints[k].origin;
    EXPECT_NEAR(set.restraints[k].lower, tbl.restraints[k].lower, 1e-9);
    EXPECT_NEAR(set.restraints[k].upper, tbl.restraints[k].upper, 1e-9);
  }
  EXPECT_EQ(same, 572u);
}

TEST(ResolveRestraints, HaddockNestedOrSelections) {
  auto set = read_xplor_distance_restraints(sample("restraints/haddock_air/e2a-hpr_air.tbl"));
  ASSERT_EQ(set.restraints.size(), 20u);
  const auto& r0 = set.restraints[0];
  EXPECT_EQ(r0.alternatives.size(), 16u) << "assign (resid 38 and segid A) ((resid 15 ...) or ... 16 residues)";
  EXPECT_EQ(r0.alternatives[0].a.atom, "*");
  EXPECT_DOUBLE_EQ(r0.lower, 0.0);
  EXPECT_DOUBLE_EQ(r0.upper, 2.0);
  auto pdb = read_pdb(sample("restraints/haddock_air/e2a-hpr_1GGR.pdb"));
  auto rep = resolve_restraints(set, pdb);
  EXPECT_EQ(rep.restraints_out, 20u);
  const auto& r0r = set.restraints[0];
  // Whole residues: atom count of the first selection = atoms of residue A 38.
  std::size_t n38 = 0;
  for (const auto& a : pdb.atoms) n38 += a.segment == "A" && a.residue_number == 38;
  EXPECT_EQ(r0r.alternatives[0].atoms_a.size(), n38);
  EXPECT_GT(n38, 5u);
  EXPECT_EQ(r0r.pseudo_correction, 0.0);
  auto gap = read_xplor_distance_restraints(sample("restraints/haddock_air/antibody_unambig.tbl"));
  ASSERT_EQ(gap.restraints.size(), 2u);
  EXPECT_DOUBLE_EQ(gap.restraints[0].lower, 22.565);
  EXPECT_DOUBLE_EQ(gap.restraints[0].upper, 22.565);
  EXPECT_EQ(gap.restraints[1].alternatives[0].b.residue_number, 35);
}

TEST(ResolveRestraints, NamingVariantsAndPseudoAtoms) {
  const Structure& s = model1();
  auto first = [&](const char* name) {
    for (const auto& a : s.atoms)
      if (a.residue == name) return std::to_string(a.residue_number);
    return std::string("?");
  };
  const std::string ala = first("ALA"), val = first("VAL"), leu = first("LEU"), phe = first("PHE");
  const std::string tbl =
      "! naming variants\n"
      "assign (resid " +
      ala + " and name HN) (resid " + ala +
      " and name MB) 2.0 0.2 1.0\n"  // HN→H, MB methyl
      "assign (resid " +
      val + " and name QQG) (resid " + leu +
      " and name QD1) 3.0 1.0 2.0\n"  // Val both methyls
      "assign (resid " +
      phe +
      " and name QR) (resid 1 and name H) 3.0 1.0 2.0\n"  // Phe ring, N-terminal H1-3
      "assign (resid " +
      phe + " and name HD#) (resid " + phe + " and name QB) 3.0 1.0 2.0\n";  // ring pair, CH2
  auto set = parse_xplor_distance_restraints(tbl, "variants.tbl");
  auto rep = resolve_restraints(set, s);
  ASSERT_EQ(rep.restraints_out, 4u);
  const auto& r = set.restraints;
  EXPECT_EQ(r[0].alternatives[0].atoms_a.size(), 1u);
  EXPECT_EQ(s.atoms[r[0].alternatives[0].atoms_a[0]].name, "H");
  EXPECT_EQ(r[0].alternatives[0].atoms_b.size(), 3u);
  EXPECT_DOUBLE_EQ(r[0].pseudo_correction, 1.0);
  EXPECT_EQ(r[1].alternatives[0].atoms_a.size(), 6u);
  EXPECT_DOUBLE_EQ(r[1].pseudo_correction, 2.4 + 1.0);
  EXPECT_EQ(r[2].alternatives[0].atoms_a.size(), 5u);  // HD1 HD2 HE1 HE2 HZ
  EXPECT_EQ(r[2].alternatives[0].atoms_b.size(), 3u);  // H1 H2 H3
  EXPECT_DOUBLE_EQ(r[2].pseudo_correction, 2.4 + 1.0);
  EXPECT_DOUBLE_EQ(r[3].pseudo_correction, 2.0 + 1.0);
  EXPECT_DOUBLE_EQ(r[0].lower, 1.8);
  EXPECT_DOUBLE_EQ(r[0].upper, 3.0);
}

TEST(ResolveRestraints, UnknownAtomIsOneClearErrorOrSkipped) {
  const std::string tbl =
      "assign (resid 19 and segid \"A\" and name H) (resid 20 and segid \"A\" and name H) 1.8 0.0 1.7\n"
      "\n"
      "assign (resid 23 and segid \"A\" and name H)\n"
      "       (resid 24 and segid \"A\" and name HQ7) 1.8 0.0 3.2\n"
      "assign (resid 500 and segid \"A\" and name H) (resid 24 and segid \"A\" and name H) 1.8 0.0 3.2\n";
  const std::string path = write_temp("unknown_atom.tbl", tbl);
  auto set = read_xplor_distance_restraints(path);
  std::string e = error_of([&] {
    auto copy = set;
    (void)resolve_restraints(copy, model1());
  });
  EXPECT_CONTAINS(e, path + ":4:");
  EXPECT_CONTAINS(e, "restraint 2");
  EXPECT_CONTAINS(e, "'HQ7'");
  EXPECT_CONTAINS(e, "A 24 SER");
  // 2 of 3 left out: allowed only when the limit is raised (restraint_nomenclature_test.cpp).
  auto rep =
      resolve_restraints(set, model1(), {.on_unknown_atom = UnknownAtomPolicy::Skip, .max_skipped_fraction = 1.0});
  EXPECT_EQ(rep.restraints_out, 1u);
  EXPECT_EQ(rep.skipped, 2u);
  ASSERT_EQ(set.restraints.size(), 1u);
  bool reported = false;
  for (const auto& w : set.warnings) reported = reported || w.find("2 restraints skipped") != std::string::npos;
  EXPECT_TRUE(reported);
  // NEF: the line of the atom name.
  const std::string nef =
      "data_x\nsave_d\n_nef_distance_restraint_list.sf_category nef_distance_restraint_list\nloop_\n"
      "_nef_distance_restraint.index\n_nef_distance_restraint.restraint_id\n"
      "_nef_distance_restraint.chain_code_1\n_nef_distance_restraint.sequence_code_1\n"
      "_nef_distance_restraint.residue_name_1\n_nef_distance_restraint.atom_name_1\n"
      "_nef_distance_restraint.chain_code_2\n_nef_distance_restraint.sequence_code_2\n"
      "_nef_distance_restraint.residue_name_2\n_nef_distance_restraint.atom_name_2\n"
      "_nef_distance_restraint.lower_limit\n_nef_distance_restraint.upper_limit\n"
      "1 1 A 19 ASN H A 20 THR H 1.8 3.5\n"
      "2 2 A 19 ASN HB% A 20 THR HX9 1.8 3.5\n"
      "stop_\nsave_\n";
  auto nset = parse_nef_distance_restraints(nef, "u.nef");
  EXPECT_CONTAINS(error_of([&] { (void)resolve_restraints(nset, model1()); }), "u.nef:18: restraint 2: atom 'HX9'");
}

TEST(ResolveRestraints, ResidueNumberOffsetIsReported) {
  // The same NEF rows, numbered 5 higher than the structure.
  const std::string nef =
      "data_x\nsave_d\nloop_\n_nef_distance_restraint.restraint_id\n"
      "_nef_distance_restraint.chain_code_1\n_nef_distance_restraint.sequence_code_1\n"
      "_nef_distance_restraint.residue_name_1\n_nef_distance_restraint.atom_name_1\n"
      "_nef_distance_restraint.chain_code_2\n_nef_distance_restraint.sequence_code_2\n"
      "_nef_distance_restraint.residue_name_2\n_nef_distance_restraint.atom_name_2\n"
      "_nef_distance_restraint.upper_limit\n"
      "1 A 24 ASN CA A 25 THR CA 5.0\n2 A 28 ASN CA A 29 SER CA 5.0\n3 A 32 MET CA A 33 THR CA 5.0\n"
      "stop_\nsave_\n";
  auto set = parse_nef_distance_restraints(nef, "o.nef");
  // The mismatch is an error by default (restraint_nomenclature_test.cpp); warn reports it.
  auto rep = resolve_restraints(set, model1(), {.on_residue_mismatch = ResidueMismatchPolicy::Warn});
  EXPECT_EQ(rep.suggested_offset, -5);
  ASSERT_FALSE(set.warnings.empty());
  EXPECT_CONTAINS(set.warnings[0], "offset by -5");
}

TEST(XplorRestraints, MalformedFilesNameTheLine) {
  EXPECT_CONTAINS(
      error_of([] {
        (void)parse_xplor_distance_restraints(
            "assign (resid 1 and name HA) (resid 2 and name HA 2.0 0.1 1.0\nassign (resid 3) (resid 4) 1 1 1\n",
            "p.tbl");
      }),
      "p.tbl:1:");
  EXPECT_CONTAINS(error_of([] {
                    (void)parse_xplor_distance_restraints(
                        "{ header\n comment }\nassign (resid 1 and name HA)\n (resid 2 and name HA) 2.0 0.1\n",
                        "n.tbl");
                  }),
                  "n.tbl:4: expected dplus (restraint 'assign' of line 3), found the end of the file");
  EXPECT_CONTAINS(error_of([] {
                    (void)parse_xplor_distance_restraints(
                        "assign (resid 1 and name C) (resid 2 and name N) (resid 2 and name CA) 1 -60 20 2\n", "t.tbl");
                  }),
                  "t.tbl:1: expected the distance 'd dminus dplus' after two selections, found a third selection");
  EXPECT_CONTAINS(error_of([] {
                    (void)parse_xplor_distance_restraints(
                        "assign (resid 1 and name C) (resid 2 and name N) (resid 2 and name CA) (resid 2 and name C)"
                        " (resid 3 and name N) 53.9 41.1\n",
                        "c.tbl");
                  }),
                  "c.tbl:1: 'assign' with 5 selections is no distance (2) or dihedral (4) restraint (Xplor-NIH carbon "
                  "chemical-shift 'carb' restraints have 5)");
  EXPECT_CONTAINS(
      error_of([] { (void)parse_xplor_distance_restraints("assign (not resid 1) (resid 2) 1 1 1\n", "x.tbl"); }),
      "x.tbl:1: 'not' is not supported");
  EXPECT_CONTAINS(
      error_of([] { (void)parse_xplor_distance_restraints("\nasign (resid 1) (resid 2) 1 1 1\n", "y.tbl"); }),
      "y.tbl:2: unexpected 'asign'");
  EXPECT_CONTAINS(error_of([] {
                    (void)parse_xplor_distance_restraints("assign (resid x1 and name HA) (resid 2) 1 1 1\n", "z.tbl");
                  }),
                  "z.tbl:1: bad resid 'x1'");
  // Control statements and resid ranges are accepted.
  auto set = parse_xplor_distance_restraints(
      "set echo=off end\nnoe\n nres=100 class all\n assi (resid 3:5 and name CA) (resid 9 and name CA) 5 1 1\nend\n",
      "c.tbl");
  ASSERT_EQ(set.restraints.size(), 1u);
  EXPECT_EQ(set.restraints[0].alternatives.size(), 3u);
}

TEST(NefRestraints, MalformedFilesNameTheLine) {
  const std::string head = nef_head({"upper_limit"});  // 13 lines
  EXPECT_CONTAINS(
      error_of([&] { (void)parse_nef_distance_restraints(head + "1 A 1 SER H A 2 SER H\nstop_\nsave_\n", "a.nef"); }),
      "a.nef:14: loop_ of line 3");
  EXPECT_CONTAINS(error_of([&] {
                    (void)parse_nef_distance_restraints(head + "1 A 1 SER H A 2 SER H 4.x\nstop_\nsave_\n", "b.nef");
                  }),
                  "b.nef:14: bad upper_limit '4.x'");
  EXPECT_CONTAINS(error_of([&] {
                    (void)parse_nef_distance_restraints(head + "1 A 1 SER 'H A 2 SER H 4\nstop_\nsave_\n", "c.nef");
                  }),
                  "c.nef:14: unterminated quoted value");
  EXPECT_CONTAINS(
      error_of([&] { (void)parse_nef_distance_restraints(head + "1 A 1 SER H A 2 SER H 4\nstop_\n", "d.nef"); }),
      "d.nef:2: save frame opened here is not closed");
  EXPECT_CONTAINS(error_of([&] {
                    (void)parse_nef_distance_restraints(head + "1 A one SER H A 2 SER H 4\nstop_\nsave_\n", "e.nef");
                  }),
                  "e.nef:14: sequence_code_1 'one'");
  // Ambiguous restraint: rows sharing an id; '.'/'?' and quoted strings.
  auto set = parse_nef_distance_restraints(
      head + "7 A 1 SER 'HB%' A 2 SER H 4.5\n7 A 1 SER HA A 2 SER H 4.5\n8 . 3 SER H A 2 SER H 4\nstop_\nsave_\n",
      "f.nef");
  ASSERT_EQ(set.restraints.size(), 2u);
  EXPECT_EQ(set.restraints[0].alternatives.size(), 2u);
  EXPECT_EQ(set.restraints[0].alternatives[0].a.atom, "HB%");
  EXPECT_DOUBLE_EQ(set.restraints[0].lower, 0.0);
  EXPECT_DOUBLE_EQ(set.restraints[0].upper, 4.5);
  EXPECT_EQ(set.restraints[1].alternatives[0].a.chain, "");
  EXPECT_CONTAINS(
      error_of([&] { (void)parse_nef_distance_restraints(head + "8 A 3 SER ? A 2 SER H 4\nstop_\nsave_\n", "g.nef"); }),
      "g.nef:14: atom_name_1 is missing");
  // NEF v1.1: OR-ed rows of one restraint_id may have bounds of their own; one restraint holds
  // one pair of bounds, so the widest are kept, with a warning naming the restraint.
  const auto wide = parse_nef_distance_restraints(
      head + "7 A 1 SER HB2 A 2 SER H 4.5\n7 A 1 SER HB3 A 2 SER H 5.0\nstop_\nsave_\n", "h.nef");
  ASSERT_EQ(wide.restraints.size(), 1u);
  EXPECT_EQ(wide.restraints[0].alternatives.size(), 2u);
  EXPECT_DOUBLE_EQ(wide.restraints[0].upper, 5.0);
  ASSERT_EQ(wide.warnings.size(), 1u);
  EXPECT_CONTAINS(wide.warnings[0], "1 restraints combine rows with different bounds");
  EXPECT_CONTAINS(wide.warnings[0], "restraint 7 (h.nef:14): [0, 5] Å");
  // QA: a row missing a value among rows laid out one per line was reported at the loop's end
  const std::string row = "7 A 1 SER HA A 2 SER H 4.5\n";
  EXPECT_CONTAINS(error_of([&] {
                    (void)parse_nef_distance_restraints(
                        head + row + row + "8 A 1 SER HA A 2 SER H\n" + row + row + "stop_\nsave_\n", "i.nef");
                  }),
                  "i.nef:16: row 3 of the loop_ of line 3 (_nef_distance_restraint.restraint_id ...) has 9 of 10 "
                  "values (the rows before it are one per line)");
}

// QA: negative limits and weights passed the readers and failed later without a file:line (a
// .tbl distance of −1.8 as "restraint −1"); a UTF-8 byte-order mark was "a value without a tag".
TEST(NefRestraints, NegativeLimitsAndEncodings) {
  const std::string head = nef_head({"weight", "lower_limit", "upper_limit"});
  const auto nef = [&](const std::string& row) { return head + row + "\nstop_\nsave_\n"; };
  EXPECT_EQ(parse_nef_distance_restraints(nef("1 A 19 ASN H A 20 THR H 1.0 1.8 3.5"), "ok.nef").restraints.size(), 1u);
  EXPECT_CONTAINS(
      error_of([&] { (void)parse_nef_distance_restraints(nef("1 A 19 ASN H A 20 THR H 1.0 -5.0 -3.5"), "n.nef"); }),
      "n.nef:16: restraint 1: lower_limit -5.000000 is negative");
  EXPECT_CONTAINS(
      error_of([&] { (void)parse_nef_distance_restraints(nef("1 A 19 ASN H A 20 THR H 1.0 -1.0 3.5"), "n.nef"); }),
      "lower_limit -1.000000 is negative");
  EXPECT_CONTAINS(
      error_of([&] { (void)parse_nef_distance_restraints(nef("1 A 19 ASN H A 20 THR H -2 1.8 3.5"), "n.nef"); }),
      "weight -2.000000 is negative");
  const auto bom = parse_nef_distance_restraints("\xEF\xBB\xBF" + nef("1 A 19 ASN H A 20 THR H 1.0 1.8 3.5"), "b.nef");
  EXPECT_EQ(bom.restraints.size(), 1u);
  EXPECT_CONTAINS(error_of([] {
                    (void)parse_nef_distance_restraints(std::string("\xFF\xFE"
                                                                    "d\0a\0",
                                                                    6),
                                                        "u.nef");
                  }),
                  "u.nef:1: the file is UTF-16");
  EXPECT_CONTAINS(error_of([] {
                    (void)parse_xplor_distance_restraints(
                        "assign (resid 1 and name HA) (resid 2 and name HA) -1.8 0.0 1.7\n", "d.tbl");
                  }),
                  "d.tbl:1: negative distance d = -1.800000 Å in restraint 1");
  const std::string tbl =
      "! c\nassign (resid 1 and name HA) (resid 2 and name HA) 2.0 0.2 1.0\n"
      "assign (resid 3 and name HA) (resid 4 and name HA) 3.0 0.2 1.0\n";
  std::string cr = tbl;
  for (char& c : cr)
    if (c == '\n') c = '\r';
  const auto lf = parse_xplor_distance_restraints(tbl, "lf.tbl"), crs = parse_xplor_distance_restraints(cr, "cr.tbl");
  ASSERT_EQ(crs.restraints.size(), 2u);
  EXPECT_EQ(crs.restraints[1].upper, lf.restraints[1].upper);
  EXPECT_EQ(crs.restraints[1].origin, "cr.tbl:3");
}

// Regression (break-test): a row repeated under one restraint_id made the restraint ambiguous
// with the same pair twice (its r^-6 sum then bounds d/2^(1/6), 11% short); the repeat is now
// dropped with a warning, also with the two atoms swapped. The same restraint under another id is
// kept and warned about.
TEST(NefRestraints, RepeatedRowsAndRestraints) {
  const std::string head = nef_head({"weight", "lower_limit", "upper_limit"});
  const auto nef = [&](const std::string& rows) { return head + rows + "\nstop_\nsave_\n"; };
  const auto rs = parse_nef_distance_restraints(nef("1 A 19 ASN H A 20 THR H 1.0 1.8 3.5\n"
                                                    "1 A 19 ASN H A 20 THR H 1.0 1.8 3.5\n"
                                                    "1 A 20 THR H A 19 ASN H 1.0 1.8 3.5\n"
                                                    "1 A 19 ASN H A 21 GLY H 1.0 1.8 3.5\n"
                                                    "2 A 19 ASN H A 20 THR H 1.0 1.8 3.5\n"
                                                    "3 A 19 ASN H A 21 GLY H 1.0 1.8 3.5\n"
                                                    "3 A 20 THR H A 19 ASN H 1.0 1.8 3.5\n"
                                                    "4 A 19 ASN H A 20 THR H 1.0 1.8 4.5"),
                                                "d.nef");
  ASSERT_EQ(rs.restraints.size(), 4u);
  EXPECT_EQ(rs.restraints[0].alternatives.size(), 2u);  // (19 H, 20 H) once, (19 H, 21 H)
  EXPECT_EQ(rs.restraints[2].alternatives.size(), 2u);
  ASSERT_EQ(rs.warnings.size(), 1u + 1u) << ::testing::PrintToString(rs.warnings);
  EXPECT_CONTAINS(rs.warnings[0], "2 rows repeat an atom pair of their own restraint_id and were dropped");
  EXPECT_CONTAINS(rs.warnings[0], "line 17 repeats line 16 (restraint 1)");
  // restraint 3 repeats restraint 1 (the same pairs in another order); 2 has one pair, 4 other bounds
  EXPECT_CONTAINS(rs.warnings[1], "1 restraint repeats the atom pairs and bounds of an earlier restraint");
  EXPECT_CONTAINS(rs.warnings[1], "restraint 3 (d.nef:21) repeats restraint 1");
}

// One restraint_id over 20 000 rows of distinct pairs, then a pair repeated (swapped): 20 000
// alternatives and one dropped row, found at once (the repeat test scanned every alternative per
// row: quadratic, seconds for 16 000 rows). Atoms are compared exactly: chain "A:1:X", residue 2,
// atom Y is not chain A, residue 1, atom "X:2:Y" (their "chain:residue:atom" keys were equal).
TEST(NefRestraints, RepeatTestsScaleAndCompareAtomsExactly) {
  const std::string head = nef_head({"weight", "lower_limit", "upper_limit"});
  std::string rows;
  const int n = 20000;
  for (int i = 1; i <= n; ++i) rows += "1 A " + std::to_string(i) + " ALA H A " + std::to_string(i + 1) + " ALA H 1.0 1.8 5.0\n";
  rows += "1 A 8 ALA H A 7 ALA H 1.0 1.8 5.0\n";
  const auto big = parse_nef_distance_restraints(head + rows + "stop_\nsave_\n", "big.nef");
  ASSERT_EQ(big.restraints.size(), 1u);
  EXPECT_EQ(big.restraints[0].alternatives.size(), std::size_t(n));
  ASSERT_FALSE(big.warnings.empty());
  EXPECT_CONTAINS(big.warnings[0], "1 row repeats an atom pair of its own restraint_id and was dropped");
  EXPECT_CONTAINS(big.warnings[0], "repeats line " + std::to_string(16 + 7 - 1) + " (restraint 1)");

  const auto two = parse_nef_distance_restraints(head +
                                                     "1 A 1 ALA X:2:Y A 5 ALA H 1.0 1.8 5.0\n"
                                                     "2 A:1:X 2 ALA Y A 5 ALA H 1.0 1.8 5.0\n"
                                                     "3 A:1:X 2 ALA Y A 5 ALA H 1.0 1.8 5.0\n"
                                                     "stop_\nsave_\n",
                                                 "keys.nef");
  ASSERT_EQ(two.restraints.size(), 3u);
  ASSERT_EQ(two.warnings.size(), 1u) << ::testing::PrintToString(two.warnings);
  EXPECT_CONTAINS(two.warnings[0], "restraint 3 (keys.nef:18) repeats restraint 2");
}

// The two dialects' wildcards, and patterns of thousands of them: matched in O(|pattern|·|name|)
// (trying every split at each star took exponential time: 40 stars before a letter hung).
TEST(AtomNameMatches, DialectsAndPatternsOfManyWildcards) {
  struct Case {
    const char *pattern, *name, *dialect;
    bool match;
  };
  for (const Case& c : {Case{"HB*", "HB2", "xplor", true},     Case{"HB*", "HB", "xplor", true},
                        Case{"hb*", "HB3", "xplor", true},     Case{"HB#", "HB12", "xplor", true},
                        Case{"HB#", "HB", "xplor", false},     Case{"HB#", "HB1A", "xplor", false},
                        Case{"H%", "HA", "xplor", true},       Case{"H%", "H", "xplor", false},
                        Case{"HG+", "HG1", "xplor", true},     Case{"HG+", "HGA", "xplor", false},
                        Case{"*A", "CA", "xplor", true},       Case{"C*#", "CB", "xplor", false},
                        Case{"HB%", "HB12", "nef", true},      Case{"HB%", "HBA", "nef", false},
                        Case{"HBx", "HB2", "nef", true},       Case{"HGxy", "HG12", "nef", true},
                        Case{"HBX", "HB2", "nef", false},      Case{"H*", "H", "nef", true},
                        Case{"%", "", "nef", false},           Case{"*", "", "xplor", true}})
    EXPECT_EQ(atom_name_matches(c.pattern, c.name, c.dialect), c.match)
        << c.dialect << " '" << c.pattern << "' on '" << c.name << "'";
  const std::string stars(3000, '*');
  EXPECT_TRUE(atom_name_matches("H" + stars, "HB2", "xplor"));
  EXPECT_FALSE(atom_name_matches("H" + stars + "Z", "HB2", "xplor"));
  EXPECT_FALSE(atom_name_matches(stars + "Z", "HD21", "nef"));
  std::string runs;
  for (int i = 0; i < 1000; ++i) runs += "*#";
  EXPECT_FALSE(atom_name_matches(runs, "H1234567890", "xplor"));  // needs 1000 digits
  EXPECT_TRUE(atom_name_matches(runs.substr(0, 10), "H1234567890", "xplor"));
}

TEST(NefRestraints, RequiredColumnsAreNamedAtTheLoopHeader) {
  auto loop = [](const std::vector<std::string>& tags, const std::string& rows) {
    std::string t = "data_x\nsave_d\nloop_\n";  // loop_ on line 3
    for (const auto& tag : tags) t += "_nef_distance_restraint." + tag + "\n";
    return t + rows + "stop_\nsave_\n";
  };
  const std::vector<std::string> atoms = {"restraint_id",    "chain_code_1",   "sequence_code_1",
                                          "residue_name_1",  "atom_name_1",    "chain_code_2",
                                          "sequence_code_2", "residue_name_2", "atom_name_2"};
  // No upper_limit and no target: no upper bound can be derived.
  auto no_upper = atoms;
  no_upper.push_back("lower_limit");
  EXPECT_EQ(
      error_of([&] { (void)parse_nef_distance_restraints(loop(no_upper, "1 A 1 SER H A 2 SER H 1.8\n"), "a.nef"); }),
      "a.nef:3: _nef_distance_restraint loop has no upper_limit column");
  // A target without its uncertainty is no upper bound either (the QA case: bounds far too tight).
  auto target_only = atoms;
  target_only.push_back("target_value");
  EXPECT_EQ(
      error_of([&] { (void)parse_nef_distance_restraints(loop(target_only, "1 A 1 SER H A 2 SER H 3\n"), "b.nef"); }),
      "b.nef:3: _nef_distance_restraint loop has no upper_limit (or target_value_uncertainty, to use "
      "target_value + target_value_uncertainty) column");
  // Several missing columns are named together.
  std::vector<std::string> partial = {"restraint_id", "chain_code_1",    "sequence_code_1", "atom_name_1",
                                      "chain_code_2", "sequence_code_2", "residue_name_2",  "upper_limit"};
  EXPECT_EQ(error_of([&] { (void)parse_nef_distance_restraints(loop(partial, "1 A 1 H A 2 SER 4\n"), "c.nef"); }),
            "c.nef:3: _nef_distance_restraint loop has no residue_name_1 and atom_name_2 columns");
  // target_value + target_value_uncertainty columns: used, with a warning; a row without an
  // uncertainty names the missing column.
  auto with_unc = target_only;
  with_unc.push_back("target_value_uncertainty");
  auto set = parse_nef_distance_restraints(loop(with_unc, "1 A 1 SER H A 2 SER H 3.0 0.5\n"), "d.nef");
  ASSERT_EQ(set.restraints.size(), 1u);
  EXPECT_DOUBLE_EQ(set.restraints[0].upper, 3.5);
  EXPECT_DOUBLE_EQ(set.restraints[0].target, 3.0);
  ASSERT_EQ(set.warnings.size(), 1u);
  EXPECT_EQ(set.warnings[0],
            "line 3: the _nef_distance_restraint loop has no upper_limit column: upper bounds are "
            "target_value + target_value_uncertainty");
  EXPECT_EQ(error_of([&] {
              (void)parse_nef_distance_restraints(
                  loop(with_unc, "1 A 1 SER H A 2 SER H 3.0 0.5\n2 A 1 SER H A 3 SER H 3.0 .\n"), "e.nef");
            }),
            "e.nef:16: restraint 2 has no upper bound: the loop (line 3) has no upper_limit column, and no "
            "target_value_uncertainty is given");
  // upper_limit '.' in a row falls back the same way, and fails the same way.
  auto both = with_unc;
  both.push_back("upper_limit");
  EXPECT_EQ(
      error_of([&] { (void)parse_nef_distance_restraints(loop(both, "1 A 1 SER H A 2 SER H 3.0 . .\n"), "f.nef"); }),
      "f.nef:16: restraint 1 has no upper bound: upper_limit is '.', and no target_value_uncertainty is given");
}

TEST(RestraintNodes, ReadResolveAndReport) {
  gemflow::Registry reg;
  gemflow::PluginRegistrar r(reg, "io-test");
  gemflow::io::register_structure_nodes(r);
  gemflow::io::register_restraint_nodes(r);
  const auto* entry = reg.find_node("io.read_restraints");
  ASSERT_NE(entry, nullptr);
  ASSERT_NE(entry->spec.param("on_unknown_atom"), nullptr);
  EXPECT_EQ(entry->spec.param("on_unknown_atom")->choices, (std::vector<std::string>{"error", "skip"}));
  gemflow::testing::RecordingContext ctx;
  auto structure = std::make_shared<const Structure>(model1());

  auto node = entry->create();
  node->set_param("path", sample("2kpu/DhR29B_2kpu.nef"));
  node->set_input("structure", gemflow::Value::of<Structure>(structure));
  node->execute(ctx);
  auto set = node->output("restraints").as<RestraintSet>();
  ASSERT_EQ(set->restraints.size(), 841u);
  EXPECT_FALSE(set->restraints[0].alternatives[0].atoms_a.empty());
  auto table = node->output("report").as<Table>();
  ASSERT_EQ(table->columns, (std::vector<std::string>{"item", "count", "examples"}));
  ASSERT_GE(table->rows.size(), 3u);
  EXPECT_EQ(std::get<std::string>(table->rows[0][0]),
            "format: nef (NEF: _nef_distance_restraint / _nef_dihedral_restraint loops)");
  EXPECT_EQ(std::get<std::string>(table->rows[2][0]), "restraints resolved");
  EXPECT_EQ(std::get<std::int64_t>(table->rows[2][1]), 841);
  // The 66 dihedral restraints of the NEF file are read and resolved too.
  ASSERT_EQ(set->dihedrals.size(), 66u);
  EXPECT_NE(set->dihedrals[0].atom_index[0], DihedralRestraint::unresolved);
  const auto row_named = [&](const std::string& what) -> std::int64_t {
    for (const auto& row : table->rows)
      if (std::get<std::string>(row[0]) == what) return std::get<std::int64_t>(row[1]);
    return -1;
  };
  EXPECT_EQ(row_named("dihedral restraints read"), 66);
  EXPECT_EQ(row_named("dihedral restraints resolved"), 66);
  EXPECT_EQ(std::get<std::int64_t>(ctx.records().at("dihedrals")), 66);

  // Unknown atom: InputError with file:line; skip: counted.
  const std::string bad =
      write_temp("node_unknown.tbl",
                 "assign (resid 19 and segid A and name H) (resid 20 and segid A and name H) 1.8 0 1.7\n"
                 "assign (resid 19 and segid A and name HZZ) (resid 20 and segid A and name H) 1.8 0 1.7\n");
  auto n2 = entry->create();
  n2->set_param("path", bad);
  n2->set_input("structure", gemflow::Value::of<Structure>(structure));
  try {
    n2->execute(ctx);
    ADD_FAILURE() << "no error";
  } catch (const gemflow::InputError& e) {
    EXPECT_EQ(e.where().file, bad);
    EXPECT_EQ(e.where().line, 2);
    EXPECT_CONTAINS(std::string(e.what()), "'HZZ'");
  }
  auto n3 = entry->create();
  n3->set_param("path", bad);
  n3->set_param("on_unknown_atom", std::string("skip"));
  n3->set_input("structure", gemflow::Value::of<Structure>(structure));
  n3->execute(ctx);
  EXPECT_EQ(n3->output("restraints").as<RestraintSet>()->restraints.size(), 1u);
  bool warned = false;
  for (const auto& w : ctx.warnings()) warned = warned || w.find("1 restraints skipped") != std::string::npos;
  EXPECT_TRUE(warned);

  // Without a structure: selectors only.
  auto n4 = entry->create();
  n4->set_param("path", sample("2kpu/2kpu_Xplor-NIH_distance.tbl"));
  n4->execute(ctx);
  auto s4 = n4->output("restraints").as<RestraintSet>();
  ASSERT_EQ(s4->restraints.size(), 841u);
  EXPECT_TRUE(s4->restraints[0].alternatives[0].atoms_a.empty());
}

namespace {
/// Violations (d - upper, Å, > 0) of r^-6-summed distances (Xplor-NIH "sum" averaging) over
/// the expanded atom pairs, in model 0 of `s`.
std::vector<std::pair<double, const DistanceRestraint*>> violations(const RestraintSet& set, const Structure& s) {
  std::vector<std::pair<double, const DistanceRestraint*>> out;
  for (const auto& r : set.restraints) {
    double sum = 0;
    for (const auto& alt : r.alternatives)
      for (auto i : alt.atoms_a)
        for (auto j : alt.atoms_b) {
          double d2 = 0;
          for (int k = 0; k < 3; ++k)
            d2 += (s.models[0][i][k] - s.models[0][j][k]) * (s.models[0][i][k] - s.models[0][j][k]);
          sum += std::pow(d2, -3.0);
        }
    const double d = std::pow(sum, -1.0 / 6.0);
    if (d > r.upper) out.emplace_back(d - r.upper, &r);
  }
  return out;
}
}  // namespace

TEST(ResolveRestraints, DepositedModelSatisfiesTheResolvedRestraints) {
  // A check of the resolution itself: wrongly resolved atoms would give large violations.
  const Structure& s = model1();
  auto nef = read_nef_distance_restraints(sample("2kpu/DhR29B_2kpu.nef"));
  (void)resolve_restraints(nef, s);
  double worst = 0;
  for (const auto& [v, r] : violations(nef, s)) worst = std::max(worst, v);
  EXPECT_LT(worst, 0.5) << "NEF restraints, model 1";
  // The .tbl names one ring proton (HD1/HE1) of Phe/Tyr where NEF has the pair: every
  // violation above 0.5 Å involves such a ring proton, whose label in the model is arbitrary.
  auto tbl = read_xplor_distance_restraints(sample("2kpu/2kpu_Xplor-NIH_distance.tbl"));
  (void)resolve_restraints(tbl, s);
  std::size_t big = 0;
  for (const auto& [v, r] : violations(tbl, s)) {
    if (v <= 0.5) continue;
    ++big;
    const auto& alt = r->alternatives[0];
    bool ring = false;
    for (const auto* atoms : {&alt.atoms_a, &alt.atoms_b})
      for (auto i : *atoms)
        ring = ring || ((s.atoms[i].residue == "PHE" || s.atoms[i].residue == "TYR") &&
                        (s.atoms[i].name == "HD1" || s.atoms[i].name == "HE1"));
    EXPECT_TRUE(ring) << r->origin << " violated by " << v;
  }
  EXPECT_EQ(big, 9u);
}
