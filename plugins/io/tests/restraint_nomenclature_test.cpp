// Restraint resolution against 2KPU: residue numbering offsets, the skip limit, the
// nomenclature table (terminal and Ile names across IUPAC, PDB, X-PLOR, CYANA, AMBER), methyl
// pseudo-atoms, bounds checks and the one meaning of "ambiguous".
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <set>
#include <string>

#include <gemflow/types.hpp>

#include "gemflow/io/errors.hpp"
#include "gemflow/io/nomenclature.hpp"
#include "gemflow/io/restraints_io.hpp"
#include "gemflow/io/structure_io.hpp"
#include "io_test_support.hpp"

using namespace gemflow;
using namespace gemflow::io;
using gemflow::io::testing::sample;
using gemflow::io::testing::shared;

namespace {

using gemflow::io::testing::error_of;
using gemflow::io::testing::model1;

RestraintSet shifted(RestraintSet set, int by) {
  for (auto& r : set.restraints)
    for (auto& alt : r.alternatives) {
      alt.a.residue_number += by;
      alt.b.residue_number += by;
    }
  for (auto& d : set.dihedrals)
    for (auto& a : d.atoms) a.residue_number += by;
  return set;
}

std::vector<std::string> names_of(const Structure& s, const std::vector<std::size_t>& atoms) {
  std::vector<std::string> out;
  for (auto i : atoms) out.push_back(s.atoms[i].name);
  std::sort(out.begin(), out.end());
  return out;
}

std::size_t item(const ResolveReport& rep, const std::string& prefix) {
  for (const auto& it : rep.items)
    if (it.what.rfind(prefix, 0) == 0) return it.count;
  ADD_FAILURE() << "no report item '" << prefix << "'";
  return 0;
}

}  // namespace

// Every restraint numbered 3 higher than the structure (NEF, residue names given): an error at
// the first mismatching selection naming the offset that fixes it; residue_offset applies it.
TEST(RestraintOffset, ResidueNameMismatchIsAnErrorSuggestingTheOffset) {
  const auto nef = read_nef_distance_restraints(sample("2kpu/DhR29B_2kpu.nef"));
  auto bad = shifted(nef, 3);
  const std::string e = error_of([&] {
    auto c = bad;
    (void)resolve_restraints(c, model1());
  });
  EXPECT_CONTAINS(e, "DhR29B_2kpu.nef:1333:");  // line of the first restraint's selection
  EXPECT_CONTAINS(e, "name a residue that differs from the structure");
  EXPECT_CONTAINS(e, "residue A 22 is ASN in the file");
  EXPECT_CONTAINS(e, "with residue_offset: -3");
  // Skipping does not get around it: the names disagree, whatever the atoms.
  EXPECT_CONTAINS(error_of([&] {
                    auto c = bad;
                    (void)resolve_restraints(c, model1(), {.on_unknown_atom = UnknownAtomPolicy::Skip});
                  }),
                  "with residue_offset: -3");
  // The suggested offset restores every restraint, pair for pair.
  auto fixed = bad;
  auto rep = resolve_restraints(fixed, model1(), {.residue_offset = -3});
  ASSERT_EQ(rep.restraints_out, 841u);
  auto ref = nef;
  (void)resolve_restraints(ref, model1());
  for (std::size_t k = 0; k < 841; ++k) {
    ASSERT_EQ(fixed.restraints[k].alternatives[0].atoms_a, ref.restraints[k].alternatives[0].atoms_a);
    ASSERT_EQ(fixed.restraints[k].alternatives[0].atoms_b, ref.restraints[k].alternatives[0].atoms_b);
  }
  EXPECT_EQ(fixed.restraints[0].alternatives[0].a.residue_number, 22);  // the file's number is kept
}

// The .tbl has no residue names: the offset is found from the atom names.
TEST(RestraintOffset, XplorOffsetFoundFromAtomNamesAndSkipRefusesToDropMost) {
  const auto tbl = read_xplor_distance_restraints(sample("2kpu/2kpu_Xplor-NIH_distance.tbl"));
  auto bad = shifted(tbl, 3);
  const std::string e = error_of([&] {
    auto c = bad;
    (void)resolve_restraints(c, model1());
  });
  EXPECT_CONTAINS(e, "2kpu_Xplor-NIH_distance.tbl:");
  EXPECT_CONTAINS(e, "not found");
  EXPECT_CONTAINS(e, "more restraints name atoms not found");
  EXPECT_CONTAINS(e, "with residue_offset: -3");
  // on_unknown_atom: skip would drop 470 restraints and keep 371 on the wrong atoms (H and HA
  // exist in most residues), a wrong structure with "0 violated": refused, with counts, located
  // examples and the offset, whatever the skip limit.
  auto ok = bad;
  EXPECT_EQ(resolve_restraints(ok, model1(), {.residue_offset = -3}).restraints_out, 841u);
  auto c2 = bad;
  const std::string s2 = error_of([&] {
    (void)resolve_restraints(c2, model1(), {.on_unknown_atom = UnknownAtomPolicy::Skip, .max_skipped_fraction = 1.0});
  });
  EXPECT_CONTAINS(s2, "2kpu_Xplor-NIH_distance.tbl:3: on_unknown_atom: skip would leave out 470 of the 841 restraints");
  EXPECT_CONTAINS(s2, "under another residue numbering every atom selection is found");
  EXPECT_CONTAINS(s2, "Set residue_offset: -3");
  EXPECT_CONTAINS(s2, "2kpu_Xplor-NIH_distance.tbl:4 (restraint 4)");
}

// Chains numbered apart (a homodimer deposited with chain B numbered from 91, its molecule
// numbered from 20 in both chains): one residue_offset cannot fit both; the error names the
// offset per chain, and chain_offsets applies it to that chain's selectors only.
TEST(RestraintOffset, PerChainOffsetsAreSuggestedAndApplied) {
  // two copies of 2KPU model 1 as chains A and B, numbered alike; the restraints duplicated for
  // chain B, which the file numbers 71 higher
  Structure dimer = model1();
  const std::size_t n = dimer.atoms.size();
  for (std::size_t i = 0; i < n; ++i) {
    Atom a = dimer.atoms[i];
    a.chain = "B";
    dimer.atoms.push_back(a);
    auto x = dimer.models[0][i];
    x[0] += 50.0;
    dimer.models[0].push_back(x);
  }
  const auto nef = read_nef_distance_restraints(sample("2kpu/DhR29B_2kpu.nef"));
  RestraintSet two = nef;
  two.dihedrals.clear();
  for (auto r : nef.restraints) {
    for (auto& alt : r.alternatives)
      for (auto* sel : {&alt.a, &alt.b}) sel->chain = "B", sel->residue_number += 71;
    two.restraints.push_back(r);
  }
  ASSERT_EQ(two.restraints.size(), 2 * 841u);
  const std::string e = error_of([&] {
    auto c = two;
    (void)resolve_restraints(c, dimer);
  });
  EXPECT_CONTAINS(e, "residue B 90 is ASN in the file, GLU in the structure");
  EXPECT_CONTAINS(e, "chain_offsets: \"A:0, B:-71\"");
  EXPECT_EQ(e.find("may belong to another molecule"), std::string::npos) << e;
  // a global offset fixes one chain and breaks the other
  EXPECT_CONTAINS(error_of([&] {
                    auto c = two;
                    (void)resolve_restraints(c, dimer, {.residue_offset = -71});
                  }),
                  "chain_offsets: \"A:0, B:-71\"");
  auto fixed = two;
  const auto rep = resolve_restraints(fixed, dimer, {.chain_offsets = {{"B", -71}}});
  ASSERT_EQ(rep.restraints_out, 2 * 841u);
  EXPECT_TRUE(rep.suggested_chain_offsets.empty());
  for (std::size_t k = 0; k < 841; ++k) {
    const auto& a = fixed.restraints[k].alternatives[0];
    const auto& b = fixed.restraints[841 + k].alternatives[0];
    ASSERT_EQ(a.atoms_a.size(), b.atoms_a.size());
    for (std::size_t m = 0; m < a.atoms_a.size(); ++m) ASSERT_EQ(b.atoms_a[m], a.atoms_a[m] + n) << k;
    for (std::size_t m = 0; m < a.atoms_b.size(); ++m) ASSERT_EQ(b.atoms_b[m], a.atoms_b[m] + n) << k;
  }
  EXPECT_EQ(fixed.restraints[841].alternatives[0].a.residue_number,
            nef.restraints[0].alternatives[0].a.residue_number + 71);  // the file's number is kept
  // residue names are checked under the chain's offset: B offset by one residue less disagrees
  const std::string e2 = error_of([&] {
    auto c = two;
    (void)resolve_restraints(c, dimer, {.chain_offsets = {{"B", -70}}});
  });
  EXPECT_CONTAINS(e2, "name a residue that differs from the structure (with chain B offset -70)");
  EXPECT_CONTAINS(e2, "chain_offsets: \"A:0, B:-71\"");
}

// Skip within the limit: counted in the report and carried by the set (RestraintSet::skipped,
// which distgeom.compare adds to restraints_skipped); all dropped is refused at any limit.
TEST(RestraintSkip, CountedInTheSetAndNeverEverything) {
  auto tbl = read_xplor_distance_restraints(sample("2kpu/2kpu_Xplor-NIH_distance.tbl"));
  for (int k : {10, 20, 30, 40}) tbl.restraints[static_cast<std::size_t>(k)].alternatives[0].b.atom = "HZZ9";
  auto set = tbl;
  auto rep = resolve_restraints(set, model1(), {.on_unknown_atom = UnknownAtomPolicy::Skip});
  EXPECT_EQ(rep.skipped, 4u);
  EXPECT_EQ(set.skipped, 4u);
  EXPECT_EQ(set.restraints.size(), 837u);
  EXPECT_EQ(item(rep, "restraints skipped"), 4u);

  // More than half not found (and no numbering that finds them): refused, with counts and
  // located examples.
  auto most = tbl;
  for (std::size_t k = 0; k < 430; ++k) most.restraints[k].alternatives[0].a.atom = "HZZ9";
  const std::string m =
      error_of([&] { (void)resolve_restraints(most, model1(), {.on_unknown_atom = UnknownAtomPolicy::Skip}); });
  EXPECT_CONTAINS(m, "2kpu_Xplor-NIH_distance.tbl:1: on_unknown_atom: skip would leave out 430 of the 841 restraints");
  EXPECT_CONTAINS(m, "more than 50 %");
  EXPECT_CONTAINS(m, "2kpu_Xplor-NIH_distance.tbl:2 (restraint 2): atom 'HZZ9' not found");
  EXPECT_CONTAINS(m, "(and 427 more)");
  auto half = tbl;  // 420 of 841: within the limit
  for (std::size_t k = 0; k < 420; ++k) half.restraints[k].alternatives[0].a.atom = "HZZ9";
  EXPECT_EQ(resolve_restraints(half, model1(), {.on_unknown_atom = UnknownAtomPolicy::Skip}).skipped, 420u);

  auto all = tbl;
  for (auto& r : all.restraints) r.alternatives[0].a.atom = "HZZ9";
  const std::string e = error_of([&] {
    (void)resolve_restraints(all, model1(), {.on_unknown_atom = UnknownAtomPolicy::Skip, .max_skipped_fraction = 1.0});
  });
  EXPECT_CONTAINS(e, "would leave out 841 of the 841 restraints");
}

// Xplor-NIH/CHARMM terminal names against a PDB/IUPAC structure, and the reverse.
TEST(RestraintNomenclature, TerminalNamesMapBothWays) {
  const Structure& pdb = model1();  // SER 1: H1 H2 H3; HIS 96: O OXT
  Structure xplor = pdb;            // the same atoms with Xplor-NIH's names
  for (auto& a : xplor.atoms) {
    if (a.residue_number == 1 && (a.name == "H1" || a.name == "H2" || a.name == "H3")) a.name = "HT" + a.name.substr(1);
    if (a.residue_number == 96 && a.name == "O") a.name = "OT1";
    if (a.residue_number == 96 && a.name == "OXT") a.name = "OT2";
  }
  auto resolve_one = [](const Structure& s, const std::string& atom, int resid) {
    const std::string tbl =
        "assign (resid " + std::to_string(resid) + " and name " + atom + ") (resid 50 and name HA) 3.0 1.0 2.0\n";
    auto set = parse_xplor_distance_restraints(tbl, "t.tbl");
    (void)resolve_restraints(set, s);
    return names_of(s, set.restraints[0].alternatives[0].atoms_a);
  };
  using V = std::vector<std::string>;
  // IUPAC / PDB / AMBER / CYANA names in the file, X-PLOR names in the structure.
  EXPECT_EQ(resolve_one(xplor, "H1", 1), V{"HT1"});
  EXPECT_EQ(resolve_one(xplor, "H2", 1), V{"HT2"});
  EXPECT_EQ(resolve_one(xplor, "H3", 1), V{"HT3"});
  EXPECT_EQ(resolve_one(xplor, "H#", 1), (V{"HT1", "HT2", "HT3"}));
  EXPECT_EQ(resolve_one(xplor, "HN", 1), (V{"HT1", "HT2", "HT3"}));
  EXPECT_EQ(resolve_one(xplor, "H", 1), (V{"HT1", "HT2", "HT3"}));
  EXPECT_EQ(resolve_one(xplor, "O", 96), V{"OT1"});
  EXPECT_EQ(resolve_one(xplor, "OXT", 96), V{"OT2"});
  EXPECT_EQ(resolve_one(xplor, "O''", 96), V{"OT2"});  // IUPAC O''
  // X-PLOR names in the file, IUPAC/PDB names in the structure.
  EXPECT_EQ(resolve_one(pdb, "HT1", 1), V{"H1"});
  EXPECT_EQ(resolve_one(pdb, "HT3", 1), V{"H3"});
  EXPECT_EQ(resolve_one(pdb, "HT#", 1), (V{"H1", "H2", "H3"}));
  EXPECT_EQ(resolve_one(pdb, "HT*", 1), (V{"H1", "H2", "H3"}));
  EXPECT_EQ(resolve_one(pdb, "OT1", 96), V{"O"});
  EXPECT_EQ(resolve_one(pdb, "OT2", 96), V{"OXT"});
  EXPECT_EQ(resolve_one(pdb, "OC2", 96), V{"OXT"});  // GROMACS
  // Only at the termini: OT1 of a middle residue is no atom.
  EXPECT_CONTAINS(error_of([&] { (void)resolve_one(pdb, "OT1", 50); }), "atom 'OT1' not found");
  EXPECT_CONTAINS(error_of([&] { (void)resolve_one(pdb, "HT1", 50); }), "atom 'HT1' not found");
}

TEST(RestraintNomenclature, IsoleucineAndPdbV2NamesAndResidueVariants) {
  const Structure& pdb = model1();  // ILE 16: CD1 HD11-13, HG12 HG13 HG21-23
  auto resolve_one = [&](const std::string& atom, int resid) {
    auto set = parse_xplor_distance_restraints(
        "assign (resid " + std::to_string(resid) + " and name " + atom + ") (resid 50 and name HA) 3.0 1.0 2.0\n",
        "i.tbl");
    (void)resolve_restraints(set, pdb);
    return names_of(pdb, set.restraints[0].alternatives[0].atoms_a);
  };
  using V = std::vector<std::string>;
  EXPECT_EQ(resolve_one("CD", 16), V{"CD1"});    // CHARMM Ile CD
  EXPECT_EQ(resolve_one("HD1", 16), V{"HD11"});  // CHARMM Ile HD1-3
  EXPECT_EQ(resolve_one("HD3", 16), V{"HD13"});
  EXPECT_EQ(resolve_one("1HG2", 16), V{"HG21"});  // PDB v2
  EXPECT_EQ(resolve_one("1HB", 1), V{"HB2"});     // PDB v2 methylene 1HB/2HB = HB2/HB3
  EXPECT_EQ(resolve_one("2HB", 1), V{"HB3"});
  EXPECT_EQ(canonical_residue("HIE"), "HIS");
  EXPECT_EQ(canonical_residue("CYX"), "CYS");
  EXPECT_EQ(canonical_residue("NSER"), "SER");
  EXPECT_EQ(canonical_residue("hsd"), "HIS");
  EXPECT_EQ(canonical_residue("NAG"), "NAG");
  // AMBER residue variants are no mismatch (HIS 96 written HIE).
  auto nef = read_nef_distance_restraints(sample("2kpu/DhR29B_2kpu.nef"));
  for (auto& r : nef.restraints)
    for (auto& alt : r.alternatives)
      for (auto* sel : {&alt.a, &alt.b})
        if (sel->residue_number == 96) sel->residue = "HIE";
  EXPECT_EQ(resolve_restraints(nef, pdb).restraints_out, 841u);
  // Every row of the table names its IUPAC atom.
  for (const auto& row : nomenclature_table()) EXPECT_TRUE(row.iupac && *row.iupac);
}

// CYANA methyl names: Ile MG is the HG2 methyl only; Leu MD names both methyls: kept (as QQD,
// correction 2.4 Å) and listed with its file:line.
TEST(RestraintNomenclature, MethylPseudoAtomsAndTheLeuMdWarning) {
  const Structure& s = model1();
  int leu = 0;
  for (const auto& a : s.atoms)
    if (a.residue == "LEU") {
      leu = a.residue_number;
      break;
    }
  const std::string tbl =
      "assign (resid 16 and name MG) (resid 50 and name HA) 3.0 1.0 2.0\n"
      "assign (resid " +
      std::to_string(leu) +
      " and name MD) (resid 50 and name HA) 3.0 1.0 2.0\n"
      "assign (resid " +
      std::to_string(leu) + " and name MD1) (resid 50 and name HA) 3.0 1.0 2.0\n";
  auto set = parse_xplor_distance_restraints(tbl, "m.tbl");
  auto rep = resolve_restraints(set, s);
  using V = std::vector<std::string>;
  EXPECT_EQ(names_of(s, set.restraints[0].alternatives[0].atoms_a), (V{"HG21", "HG22", "HG23"}));
  EXPECT_DOUBLE_EQ(set.restraints[0].pseudo_correction, 1.0);
  EXPECT_EQ(set.restraints[1].alternatives[0].atoms_a.size(), 6u);
  EXPECT_DOUBLE_EQ(set.restraints[1].pseudo_correction, 2.4);
  EXPECT_EQ(set.restraints[2].alternatives[0].atoms_a.size(), 3u);
  EXPECT_EQ(item(rep, "methyl pseudo-atoms naming both methyls"), 1u);
  bool warned = false;
  for (const auto& w : set.warnings)
    warned =
        warned || (w.find("both methyls") != std::string::npos && w.find("m.tbl:2 (restraint 2)") != std::string::npos);
  EXPECT_TRUE(warned) << ::testing::PrintToString(set.warnings);
}

// Bounds that are no distance (issue 34: `d 1e308 dplus 1e308` gave an infinite upper bound
// that failed later without a location): refused at the restraint's line.
TEST(RestraintBounds, NonFiniteOrAbsurdBoundsNameTheLine) {
  auto base = parse_xplor_distance_restraints(
      "assign (resid 19 and name H) (resid 20 and name H) 1.8 0.0 1.7\n"
      "assign (resid 20 and name H) (resid 21 and name HA) 1.8 0.0 1.7\n",
      "b.tbl");
  auto with = [&](double lower, double upper) {
    auto set = base;
    set.restraints[1].lower = lower;
    set.restraints[1].upper = upper;
    return error_of([&] { (void)resolve_restraints(set, model1()); });
  };
  const double inf = std::numeric_limits<double>::infinity();
  EXPECT_CONTAINS(with(1.8, inf), "b.tbl:2: restraint 2: upper bound inf is not a finite number");
  EXPECT_CONTAINS(with(std::nan(""), 3.0), "b.tbl:2: restraint 2: lower bound");
  EXPECT_CONTAINS(with(1.8, 1e308), "b.tbl:2: restraint 2: upper bound 1e+308 Å is beyond 1000 Å");
  EXPECT_CONTAINS(with(4.0, 3.0), "b.tbl:2: restraint 2: lower bound 4 Å exceeds the upper bound 3 Å");
  EXPECT_CONTAINS(with(1.8, 0.0), "b.tbl:2: restraint 2: upper bound 0 Å is not positive");
  EXPECT_EQ(with(1.8, 999.0), "(no ParseError)");
}

// "Ambiguous" = more than one assignment alternative; pseudo-atoms and wildcards make "group"
// restraints. 2KPU's NEF has one alternative per restraint: 0 ambiguous (as distgeom.bounds
// logs), the '%' restraints are groups.
TEST(RestraintVocabulary, AmbiguousMeansSeveralAlternatives) {
  auto nef = read_nef_distance_restraints(sample("2kpu/DhR29B_2kpu.nef"));
  auto rep = resolve_restraints(nef, model1());
  std::size_t groups = 0, ambiguous = 0;
  for (const auto& r : nef.restraints) {
    groups += is_group(r);
    ambiguous += is_ambiguous(r);
  }
  EXPECT_EQ(ambiguous, 0u);
  EXPECT_GT(groups, 300u);
  EXPECT_EQ(item(rep, "ambiguous restraints"), 0u);
  EXPECT_EQ(item(rep, "group restraints"), groups);
  // HADDOCK restraints list alternatives: ambiguous, not groups.
  auto air = read_xplor_distance_restraints(sample("restraints/haddock_air/e2a-hpr_air.tbl"));
  auto ra = resolve_restraints(air, read_pdb(sample("restraints/haddock_air/e2a-hpr_1GGR.pdb")));
  EXPECT_EQ(item(ra, "ambiguous restraints"), 20u);
  EXPECT_EQ(item(ra, "group restraints"), 0u);
}
