// Restraint formats: NEF dihedral lists and combination logic, Xplor dihedral .tbl, CYANA,
// NMR-STAR v3, AMBER &rst, wwPDB .mr bundles and format detection, against the deposited files
// of 2KPU, 2KYI and 2JR2 (the same restraints read from different formats must agree).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <set>

#include "gemflow/io/errors.hpp"
#include "gemflow/io/restraints_io.hpp"
#include "gemflow/io/star.hpp"
#include "io_test_support.hpp"

using namespace gemflow;
using namespace gemflow::io;
using gemflow::io::testing::error_of;
using gemflow::io::testing::model1;
using gemflow::io::testing::sample;
using gemflow::io::testing::shared;
using gemflow::io::testing::write_temp;

namespace {

#define SKIP_WITHOUT(path)                                                          \
  if ((path).empty()) GTEST_SKIP() << "GEMFLOW_SHARED_DATA not set or file absent"; \
  static_assert(true)

/// The dihedral angle (degrees, [-180, 180)) of four atoms of model 1 (IUPAC sign convention).
double dihedral_of(const Structure& s, const std::array<std::size_t, 4>& idx) {
  const auto& x = s.models[0];
  auto sub = [](const Vec3& a, const Vec3& b) { return Vec3{a[0] - b[0], a[1] - b[1], a[2] - b[2]}; };
  auto cross = [](const Vec3& a, const Vec3& b) {
    return Vec3{a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0]};
  };
  auto dot = [](const Vec3& a, const Vec3& b) { return a[0] * b[0] + a[1] * b[1] + a[2] * b[2]; };
  const Vec3 b1 = sub(x[idx[1]], x[idx[0]]), b2 = sub(x[idx[2]], x[idx[1]]), b3 = sub(x[idx[3]], x[idx[2]]);
  const Vec3 n1 = cross(b1, b2), n2 = cross(b2, b3);
  const double nb2 = std::sqrt(dot(b2, b2));
  return std::atan2(dot(cross(n1, n2), b2) / nb2, dot(n1, n2)) * 180.0 / M_PI;
}

double wrap(double a) {
  double r = std::fmod(a + 180.0, 360.0);
  return (r < 0 ? r + 360.0 : r) - 180.0;
}

/// Whether angle `a` lies in the restraint's interval (running from lower to upper, through ±180
/// when upper < lower), within `tol` degrees.
bool inside(const DihedralRestraint& d, double a, double tol) {
  auto ccw = [](double from, double to) {  // counter-clockwise distance from → to, [0, 360)
    double v = std::fmod(to - from, 360.0);
    return v < 0 ? v + 360.0 : v;
  };
  const double width = d.lower == -180.0 && d.upper == 180.0 ? 360.0 : ccw(d.lower, d.upper);
  return ccw(d.lower, a) <= width + tol || ccw(a, d.lower) <= tol;
}

std::string res_pair(const DistanceRestraint& r, int offset_a = 0, int offset_b = 0) {
  const auto& alt = r.alternatives.front();
  auto one = [](const AtomSelector& s, int off) { return s.chain + ":" + std::to_string(s.residue_number + off); };
  const auto off = [&](const AtomSelector& s) { return s.chain == "B" ? offset_b : offset_a; };
  std::string x = one(alt.a, off(alt.a)), y = one(alt.b, off(alt.b));
  return x < y ? x + "|" + y : y + "|" + x;
}

}  // namespace

// ---- NEF dihedral lists, 2KPU; the same restraints from the Xplor-NIH dihedral .tbl

TEST(NefDihedrals, Read2kpuWithTheirAtomsAndIntervals) {
  const auto set = read_nef_distance_restraints(sample("2kpu/DhR29B_2kpu.nef"));
  EXPECT_EQ(set.restraints.size(), 841u);
  ASSERT_EQ(set.dihedrals.size(), 66u);
  const DihedralRestraint& phi = set.dihedrals[0];
  EXPECT_EQ(phi.id, 1);
  EXPECT_EQ(phi.name, "PHI");
  EXPECT_CONTAINS(phi.origin, "DhR29B_2kpu.nef:2210");
  const char* names[4] = {"C", "N", "CA", "C"};
  const int residues[4] = {9, 10, 10, 10};
  for (std::size_t k = 0; k < 4; ++k) {
    EXPECT_EQ(phi.atoms[k].atom, names[k]);
    EXPECT_EQ(phi.atoms[k].residue_number, residues[k]);
    EXPECT_EQ(phi.atoms[k].chain, "A");
  }
  EXPECT_EQ(phi.atoms[0].residue, "PRO");
  EXPECT_DOUBLE_EQ(phi.lower, -147.74);
  EXPECT_DOUBLE_EQ(phi.upper, -87.74);
  EXPECT_DOUBLE_EQ(phi.target, -117.74);
  EXPECT_DOUBLE_EQ(phi.weight, 1.0);
  // Row 8 is written wrapped (108.86 to -171.14): the interval runs through ±180.
  EXPECT_EQ(set.dihedrals[7].name, "PSI");
  EXPECT_NEAR(set.dihedrals[7].lower, 108.86, 1e-9);
  EXPECT_NEAR(set.dihedrals[7].upper, -171.14, 1e-9);
}

TEST(NefDihedrals, AgreeWithTheXplorDihedralTable) {
  const auto nef = read_nef_distance_restraints(sample("2kpu/DhR29B_2kpu.nef"));
  const auto tbl = read_xplor_distance_restraints(sample("2kpu/2kpu_Xplor-NIH_dihedral.tbl"));
  EXPECT_TRUE(tbl.restraints.empty());
  ASSERT_EQ(tbl.dihedrals.size(), 66u);
  ASSERT_EQ(nef.dihedrals.size(), 66u);
  EXPECT_CONTAINS(tbl.dihedrals[0].origin, "2kpu_Xplor-NIH_dihedral.tbl:2");
  EXPECT_NEAR(tbl.dihedrals[0].lower, -147.74, 1e-9);  // -117.74 ± 30
  EXPECT_NEAR(tbl.dihedrals[0].upper, -87.74, 1e-9);
  // 148.86 ± 140 runs from 8.86 through ±180 to 288.86 = -71.14
  EXPECT_NEAR(tbl.dihedrals[7].lower, 8.86, 1e-9);
  EXPECT_NEAR(tbl.dihedrals[7].upper, -71.14, 1e-9);
  std::size_t same = 0, range140 = 0;
  for (std::size_t k = 0; k < 66; ++k) {
    const auto &n = nef.dihedrals[k], &x = tbl.dihedrals[k];
    for (std::size_t a = 0; a < 4; ++a) {
      ASSERT_EQ(n.atoms[a].atom, x.atoms[a].atom) << k;
      ASSERT_EQ(n.atoms[a].residue_number, x.atoms[a].residue_number) << k;
      ASSERT_EQ(n.atoms[a].chain, x.atoms[a].chain) << k;
    }
    EXPECT_NEAR(n.target, x.target, 1e-9) << k;
    if (std::abs(n.lower - x.lower) < 1e-9 && std::abs(n.upper - x.upper) < 1e-9) {
      ++same;
    } else {
      // The deposited .tbl gives 13 ψ ranges of 140° where the NEF file has 40°, same centre.
      EXPECT_NEAR(x.lower, wrap(x.target - 140.0), 1e-9) << k;
      EXPECT_NEAR(n.lower, wrap(n.target - 40.0), 1e-9) << k;
      ++range140;
    }
  }
  EXPECT_EQ(same, 53u);
  EXPECT_EQ(range140, 13u);
}

TEST(NefDihedrals, ResolvedOn2kpuAndSatisfiedByTheDepositedModel) {
  auto set = read_nef_distance_restraints(sample("2kpu/DhR29B_2kpu.nef"));
  const auto rep = resolve_restraints(set, model1());
  EXPECT_EQ(rep.dihedrals_in, 66u);
  EXPECT_EQ(rep.dihedrals_out, 66u);
  ASSERT_EQ(set.dihedrals.size(), 66u);
  const auto& s = model1();
  const auto& phi = set.dihedrals[0];
  EXPECT_EQ(s.atoms[phi.atom_index[0]].name, "C");
  EXPECT_EQ(s.atoms[phi.atom_index[0]].residue_number, 9);
  EXPECT_EQ(s.atoms[phi.atom_index[2]].name, "CA");
  EXPECT_EQ(s.atoms[phi.atom_index[3]].residue_number, 10);
  // Model 1 of the deposited ensemble was refined against these restraints.
  std::size_t within = 0;
  for (const auto& d : set.dihedrals) {
    within += inside(d, dihedral_of(s, d.atom_index), 5.0);
  }
  EXPECT_EQ(within, 66u);
  // An angle atom missing from the structure follows on_unknown_atom, naming its line.
  auto bad = set;
  bad.dihedrals[3].atoms[2].atom = "CX";
  EXPECT_CONTAINS(error_of([&] { (void)resolve_restraints(bad, model1()); }),
                  "DhR29B_2kpu.nef:2213: dihedral restraint 4");
  auto skip = bad;
  const auto srep = resolve_restraints(skip, model1(), {.on_unknown_atom = UnknownAtomPolicy::Skip});
  EXPECT_EQ(srep.dihedrals_skipped, 1u);
  EXPECT_EQ(skip.dihedrals.size(), 65u);
  EXPECT_EQ(skip.skipped, 1u);
}

// ---- NEF v1.1 restraint and combination ids, the specification's commented example

TEST(NefCombinations, SpecificationExample) {
  const std::string path = shared("restraints/nef_spec/Commented_Example_v1_1.nef");
  SKIP_WITHOUT(path);
  const auto set = read_nef_distance_restraints(path);
  // L1: restraints 1 (4 OR-ed rows), 5, 8 (2 rows); hbond1: 1, 2, 3 (one AND combination → 2),
  // 4 ((H-O22 AND N-O22) OR (H-O24 AND N-O24) → 2 implied restraints).
  ASSERT_EQ(set.restraints.size(), 3u + 6u);
  EXPECT_EQ(set.restraints[0].alternatives.size(), 4u);
  EXPECT_DOUBLE_EQ(set.restraints[0].lower, 2.5);
  EXPECT_DOUBLE_EQ(set.restraints[0].upper, 4.2);
  EXPECT_EQ(set.restraints[2].alternatives.size(), 2u);
  EXPECT_EQ(set.restraints[2].alternatives[1].b.chain, "E");
  // restraint 3 of hbond1: its two AND-ed rows are two restraints
  const auto& r3a = set.restraints[5];
  const auto& r3b = set.restraints[6];
  EXPECT_EQ(r3a.id, 3);
  EXPECT_EQ(r3b.id, 3);
  ASSERT_EQ(r3a.alternatives.size(), 1u);
  EXPECT_EQ(r3a.alternatives[0].b.atom, "H");
  EXPECT_EQ(r3b.alternatives[0].b.atom, "N");
  EXPECT_DOUBLE_EQ(r3b.upper, 3.7);
  // restraint 4: the H row of each combination OR-ed, then the N rows
  const auto& r4a = set.restraints[7];
  const auto& r4b = set.restraints[8];
  EXPECT_EQ(r4a.id, 4);
  ASSERT_EQ(r4a.alternatives.size(), 2u);
  EXPECT_EQ(r4a.alternatives[0].a.atom, "H");
  EXPECT_EQ(r4a.alternatives[0].b.residue_number, 22);
  EXPECT_EQ(r4a.alternatives[1].b.residue_number, 24);
  EXPECT_DOUBLE_EQ(r4a.upper, 2.7);
  ASSERT_EQ(r4b.alternatives.size(), 2u);
  EXPECT_EQ(r4b.alternatives[0].a.atom, "N");
  EXPECT_DOUBLE_EQ(r4b.upper, 3.7);

  // Dihedrals: 1 (two intervals of one ψ), 2, 3 (φ AND ψ → 2), 4 ((φ AND ψ) OR (φ AND ψ) → φ, ψ),
  // 5 (χ2 with CDx), 6.
  ASSERT_EQ(set.dihedrals.size(), 8u);
  const auto& psi = set.dihedrals[0];
  EXPECT_EQ(psi.name, "PSI");
  EXPECT_DOUBLE_EQ(psi.lower, -60.0);  // [-60, -40] or [90, 120]: the smallest arc holding both
  EXPECT_DOUBLE_EQ(psi.upper, 120.0);  // (180°; the other way round, [90, -40], is 230°)
  EXPECT_DOUBLE_EQ(set.dihedrals[1].weight, 3.0);
  EXPECT_EQ(set.dihedrals[2].id, 3);
  EXPECT_EQ(set.dihedrals[2].name, "PHI");
  EXPECT_EQ(set.dihedrals[3].name, "PSI");
  EXPECT_EQ(set.dihedrals[3].atoms[3].residue_number, 24);  // 24B: insertion code dropped, warned
  EXPECT_EQ(set.dihedrals[4].id, 4);
  EXPECT_DOUBLE_EQ(set.dihedrals[4].lower, -90.0);  // [-60, -40] or [-90, -70]
  EXPECT_DOUBLE_EQ(set.dihedrals[4].upper, -40.0);
  EXPECT_EQ(set.dihedrals[5].name, "PSI");
  EXPECT_EQ(set.dihedrals[6].atoms[3].atom, "CDx");
  EXPECT_EQ(set.dihedrals[7].name, "CHI2");
  std::string all;
  for (const auto& w : set.warnings) all += w + "\n";
  EXPECT_CONTAINS(all, "1 restraints OR several AND-ed combinations");
  EXPECT_CONTAINS(all, "restraint 4 (");
  EXPECT_CONTAINS(all, "1 restraints are one combination of AND-ed rows");
  EXPECT_CONTAINS(all, "3 dihedral restraints OR several intervals of one angle");
  EXPECT_CONTAINS(all, "sequence codes carry a suffix");
  EXPECT_CONTAINS(all,
                  "1 restraint lists other than distance and dihedral lists are not read, e.g. "
                  "_nef_rdc_restraint (line ");
}

TEST(NefCombinations, AnAngleOnlySomeAlternativesRestrainIsLeftOutWithAWarning) {
  const std::string head =
      "data_x\nsave_d\nloop_\n_nef_dihedral_restraint.restraint_id\n_nef_dihedral_restraint.restraint_combination_id\n"
      "_nef_dihedral_restraint.chain_code_1\n_nef_dihedral_restraint.sequence_code_1\n"
      "_nef_dihedral_restraint.residue_name_1\n_nef_dihedral_restraint.atom_name_1\n"
      "_nef_dihedral_restraint.chain_code_2\n_nef_dihedral_restraint.sequence_code_2\n"
      "_nef_dihedral_restraint.residue_name_2\n_nef_dihedral_restraint.atom_name_2\n"
      "_nef_dihedral_restraint.chain_code_3\n_nef_dihedral_restraint.sequence_code_3\n"
      "_nef_dihedral_restraint.residue_name_3\n_nef_dihedral_restraint.atom_name_3\n"
      "_nef_dihedral_restraint.chain_code_4\n_nef_dihedral_restraint.sequence_code_4\n"
      "_nef_dihedral_restraint.residue_name_4\n_nef_dihedral_restraint.atom_name_4\n"
      "_nef_dihedral_restraint.lower_limit\n_nef_dihedral_restraint.upper_limit\n";
  // (φ AND ψ) OR (φ alone): ψ is restrained only by the first alternative, so nothing about ψ
  // holds; φ is in [-90, -40] either way.
  const auto set = parse_nef_distance_restraints(head +
                                                     "1 1 A 1 ALA C A 2 ALA N A 2 ALA CA A 2 ALA C -60 -40\n"
                                                     "1 1 A 2 ALA N A 2 ALA CA A 2 ALA C A 3 ALA N 100 140\n"
                                                     "1 . A 1 ALA C A 2 ALA N A 2 ALA CA A 2 ALA C -90 -70\n"
                                                     "stop_\nsave_\n",
                                                 "c.nef");
  ASSERT_EQ(set.dihedrals.size(), 1u);
  EXPECT_DOUBLE_EQ(set.dihedrals[0].lower, -90.0);
  EXPECT_DOUBLE_EQ(set.dihedrals[0].upper, -40.0);
  ASSERT_EQ(set.warnings.size(), 2u);
  EXPECT_CONTAINS(set.warnings[1], "restrained by only some of the alternatives");
  EXPECT_CONTAINS(set.warnings[1], "restraint 1 (c.nef:24)");
  // Missing interval columns are named at the loop_ line.
  EXPECT_CONTAINS(error_of([] {
                    (void)parse_nef_distance_restraints(
                        "data_x\nsave_d\nloop_\n_nef_dihedral_restraint.restraint_id\n1\nstop_\nsave_\n", "m.nef");
                  }),
                  "m.nef:3: _nef_dihedral_restraint loop has no chain_code_1");
}

// 20 000 rows of one restraint_id, each its own alternative on its own angle: no angle is
// restrained by every alternative, so none is kept. Memory is linear in the rows (a slot per
// alternative and angle once took 20 000² vectors, 10 GB, for a 2 MB file).
TEST(NefCombinations, ManyAlternativesOfOneRestraintIdInLinearMemory) {
  std::string text =
      "data_x\nsave_d\nloop_\n_nef_dihedral_restraint.restraint_id\n_nef_dihedral_restraint.restraint_combination_id\n";
  for (int k = 1; k <= 4; ++k)
    for (const char* c : {"chain_code_", "sequence_code_", "residue_name_", "atom_name_"})
      text += std::string("_nef_dihedral_restraint.") + c + std::to_string(k) + "\n";
  text += "_nef_dihedral_restraint.lower_limit\n_nef_dihedral_restraint.upper_limit\n";
  for (int i = 1; i <= 20000; ++i) {
    const std::string r = std::to_string(i), n = std::to_string(i + 1);
    text += "1 . A " + r + " ALA C A " + n + " ALA N A " + n + " ALA CA A " + n + " ALA C -60 -40\n";
  }
  text += "stop_\nsave_\n";
  const auto set = parse_nef_distance_restraints(text, "many.nef");
  EXPECT_EQ(set.dihedrals.size(), 0u);
  std::string all;
  for (const auto& w : set.warnings) all += w + "\n";
  EXPECT_CONTAINS(all, "restrained by only some of the alternatives");
}

// ---- 2KYI: NEF, the deposited wwPDB .mr bundle and its NMR-STAR conversion

// 2KYI's NMR-STAR conversion numbers chain B as the deposited coordinates (91-161), its NEF file
// and so its molecule 20-90: chain_offsets B:-71 resolves them onto the NEF file's restraints.
TEST(RestraintOffset, Dimer2kyiNmrStarWithChainOffsets) {
  const std::string pdb = shared("restraints/2kyi/2kyi.pdb"), nef_path = shared("restraints/2kyi/DhR8C_2kyi.nef"),
                    str_path = shared("restraints/2kyi/2kyi_mr.str");
  SKIP_WITHOUT(pdb);
  SKIP_WITHOUT(nef_path);
  SKIP_WITHOUT(str_path);
  Structure s = read_pdb(pdb, {.model = 1});
  for (auto& a : s.atoms)
    if (a.chain == "B") a.residue_number -= 71;  // as io.read_structure chain_offsets: "B:-71"
  auto nef = read_restraints(nef_path);
  auto str = read_restraints(str_path);
  (void)resolve_restraints(nef, s, {.on_unknown_atom = UnknownAtomPolicy::Skip});
  const std::string e = error_of([&] {
    auto c = str;
    (void)resolve_restraints(c, s);
  });
  EXPECT_CONTAINS(e, "2kyi_mr.str:");
  EXPECT_CONTAINS(e, "chain_offsets: \"A:0, B:-71\"");
  const auto rep =
      resolve_restraints(str, s, {.on_unknown_atom = UnknownAtomPolicy::Skip, .chain_offsets = {{"B", -71}}});
  ASSERT_EQ(str.restraints.size(), nef.restraints.size());
  EXPECT_EQ(rep.restraints_out, nef.restraints.size());
  // the same atom pairs in every restraint (the NMR-STAR file writes a pseudo-atom as several
  // alternatives, and either side first)
  auto sides = [](const DistanceRestraint& r) {
    std::set<std::pair<std::size_t, std::size_t>> pairs;
    for (const auto& alt : r.alternatives)
      for (auto i : alt.atoms_a)
        for (auto j : alt.atoms_b) pairs.insert({std::min(i, j), std::max(i, j)});
    return pairs;
  };
  // the NMR-STAR file names one proton where the NEF file's x/y names leave a methylene
  // unassigned (both): its pairs are among the NEF restraint's
  std::size_t same = 0;
  for (std::size_t k = 0; k < nef.restraints.size(); ++k) {
    const auto a = sides(nef.restraints[k]), b = sides(str.restraints[k]);
    ASSERT_TRUE(std::includes(a.begin(), a.end(), b.begin(), b.end())) << k;
    same += a == b;
  }
  std::printf("2KYI NMR-STAR vs NEF: %zu of %zu restraints on the same atom pairs\n", same, nef.restraints.size());
  EXPECT_GT(same, nef.restraints.size() / 2);
}

TEST(Restraints2kyi, NefMrAndNmrStarAgree) {
  const std::string nef_path = shared("restraints/2kyi/DhR8C_2kyi.nef");
  const std::string mr_path = shared("restraints/2kyi/2kyi.mr");
  const std::string str_path = shared("restraints/2kyi/2kyi_mr.str");
  SKIP_WITHOUT(nef_path);
  SKIP_WITHOUT(mr_path);
  SKIP_WITHOUT(str_path);
  EXPECT_EQ(detect_restraint_format(read_text_file(nef_path), nef_path).format, RestraintFormat::Nef);
  EXPECT_EQ(detect_restraint_format(read_text_file(mr_path), mr_path).format, RestraintFormat::Mr);
  EXPECT_EQ(detect_restraint_format(read_text_file(str_path), str_path).format, RestraintFormat::NmrStar);
  const auto nef = read_restraints(nef_path);
  MrReport mr_report;
  RestraintReadOptions mo;
  mo.mr_report = &mr_report;
  const auto mr = read_restraints(mr_path, mo);
  const auto str = read_restraints(str_path);
  // 1894 NOE + 80 hydrogen-bond distance restraints, 152 dihedrals, in every format
  ASSERT_EQ(nef.restraints.size(), 1974u);
  ASSERT_EQ(mr.restraints.size(), 1974u);
  ASSERT_EQ(str.restraints.size(), 1974u);
  ASSERT_EQ(nef.dihedrals.size(), 152u);
  ASSERT_EQ(mr.dihedrals.size(), 152u);
  ASSERT_EQ(str.dihedrals.size(), 152u);
  // The same bounds restraint by restraint; the same residue pairs. Numbering: the .mr numbers
  // each chain from 1, the NEF file from 20 (chain B too), the NMR-STAR PDB columns (the
  // deposited coordinates) A from 20 and B from 91.
  for (std::size_t k = 0; k < 1974; ++k) {
    ASSERT_NEAR(nef.restraints[k].upper, mr.restraints[k].upper, 1e-9) << k;
    ASSERT_NEAR(nef.restraints[k].upper, str.restraints[k].upper, 1e-9) << k;
    ASSERT_NEAR(nef.restraints[k].lower, mr.restraints[k].lower, 1e-9) << k;
    ASSERT_NEAR(nef.restraints[k].lower, str.restraints[k].lower, 1e-9) << k;
    ASSERT_EQ(res_pair(nef.restraints[k]), res_pair(str.restraints[k], 0, -71)) << k;
    ASSERT_EQ(res_pair(nef.restraints[k]), res_pair(mr.restraints[k], 19, 19)) << k;
  }
  EXPECT_NEAR(nef.restraints[0].upper, 3.89, 1e-12);
  EXPECT_EQ(mr.restraints[0].alternatives[0].a.atom, "HA");
  EXPECT_EQ(mr.restraints[0].alternatives[0].b.atom, "HG*");
  EXPECT_EQ(nef.restraints[0].alternatives[0].b.atom, "HG%");
  ASSERT_EQ(str.restraints[0].alternatives.size(), 2u);  // HG* written out as HG2 OR HG3
  EXPECT_EQ(str.restraints[0].alternatives[1].b.atom, "HG3");
  EXPECT_CONTAINS(mr.restraints[1974 - 80].origin, "2kyi.mr:1927");  // the first hydrogen bond
  for (std::size_t k = 0; k < 152; ++k) {
    const auto &n = nef.dihedrals[k], &m = mr.dihedrals[k], &s = str.dihedrals[k];
    ASSERT_NEAR(n.lower, m.lower, 0.011) << k;  // the NEF file rounds to 0.01°
    ASSERT_NEAR(n.upper, m.upper, 0.011) << k;
    ASSERT_NEAR(n.lower, s.lower, 0.011) << k;
    ASSERT_NEAR(n.upper, s.upper, 0.011) << k;
    ASSERT_EQ(n.atoms[1].residue_number, s.atoms[1].residue_number - (s.atoms[1].chain == "B" ? 71 : 0)) << k;
    ASSERT_EQ(n.atoms[1].residue_number, m.atoms[1].residue_number + 19) << k;
    ASSERT_EQ(n.atoms[1].atom, m.atoms[1].atom) << k;
  }
  // The bundle's sections: header, NOE and hydrogen-bond and dihedral statements, 122 carbon
  // chemical-shift statements skipped, the nomenclature table skipped.
  std::string all;
  for (const auto& w : mr.warnings) all += w + "\n";
  EXPECT_CONTAINS(all,
                  "122 'assign' statements with 5 selections (first at line 2314) are not read (Xplor-NIH "
                  "carbon chemical-shift 'carb' restraints have 5)");
  EXPECT_CONTAINS(all, "skipped: wwPDB atom nomenclature mapping table, no restraints");
  ASSERT_GE(mr_report.sections.size(), 3u);
  EXPECT_EQ(mr_report.sections.front().format, "header");
  EXPECT_EQ(mr_report.sections.front().first_line, 1);
  EXPECT_EQ(mr_report.sections.back().format, "nomenclature mapping table");
  std::size_t distances = 0, dihedrals = 0;
  for (const auto& s : mr_report.sections) {
    distances += s.distances;
    dihedrals += s.dihedrals;
  }
  EXPECT_EQ(distances, 1974u);
  EXPECT_EQ(dihedrals, 152u);
}

TEST(Restraints2jr2, NefDistancesAndDihedrals) {
  const std::string path = shared("restraints/2jr2/CsR4_2jr2.nef");
  SKIP_WITHOUT(path);
  const auto set = read_restraints(path);
  EXPECT_EQ(set.restraints.size(), 1510u);
  EXPECT_EQ(set.dihedrals.size(), 212u);
}

// ---- 2KPU: NMR-STAR conversion of the NEF file, and a chemical-shift-only BMRB file

TEST(NmrStarRestraints, The2kpuConversionAgreesWithTheNef) {
  const std::string path = shared("restraints/2kpu/DhR29B_2kpu_nmrstar.str");
  SKIP_WITHOUT(path);
  const auto nef = read_nef_distance_restraints(sample("2kpu/DhR29B_2kpu.nef"));
  auto str = parse_nmrstar_restraints(read_text_file(path), path);
  ASSERT_EQ(str.restraints.size(), 841u);
  ASSERT_EQ(str.dihedrals.size(), 66u);
  for (std::size_t k = 0; k < 841; ++k) {
    ASSERT_NEAR(str.restraints[k].upper, nef.restraints[k].upper, 1e-9) << k;
    ASSERT_NEAR(str.restraints[k].lower, nef.restraints[k].lower, 1e-9) << k;
    ASSERT_EQ(res_pair(str.restraints[k]), res_pair(nef.restraints[k])) << k;
  }
  for (std::size_t k = 0; k < 66; ++k) {
    ASSERT_NEAR(str.dihedrals[k].lower, nef.dihedrals[k].lower, 1e-9) << k;
    ASSERT_NEAR(str.dihedrals[k].upper, nef.dihedrals[k].upper, 1e-9) << k;
  }
  EXPECT_EQ(str.dihedrals[0].name, "PHI");
  // Resolved on the deposited model like the NEF restraints.
  const auto rep = resolve_restraints(str, model1());
  EXPECT_EQ(rep.restraints_out, 841u);
  EXPECT_EQ(rep.dihedrals_out, 66u);
}

TEST(NmrStarRestraints, ChemicalShiftFileIsNoRestraintFile) {
  const std::string path = shared("restraints/2kpu/16570.bmrb");
  SKIP_WITHOUT(path);
  const std::string e = error_of([&] { (void)read_restraints(path); });
  EXPECT_CONTAINS(e,
                  "16570.bmrb:40: a STAR file (NEF or NMR-STAR) without distance or dihedral restraint loops (it "
                  "holds chemical shifts)");
  EXPECT_CONTAINS(error_of([] {
                    (void)parse_nmrstar_restraints(
                        "data_x\nsave_c\nloop_\n_Gen_dist_constraint.ID\n_Gen_dist_constraint.Atom_ID_1\n1 HA\nstop_\n"
                        "save_\n",
                        "g.str");
                  }),
                  "g.str:3: _Gen_dist_constraint loop has no Comp_index_ID_1/Atom_ID_1, Comp_index_ID_2/Atom_ID_2, "
                  "Distance_upper_bound_val columns");
}

// ---- CYANA .upl / .lol / .aco

TEST(CyanaRestraints, UplLolAndAcoOn2kpu) {
  const std::string upl = write_temp("cy.upl",
                                     "# CYANA upper limits\n"
                                     "   19 ASN  HN     20 THR  HN      3.50\n"
                                     "   44 ILE  QD1    46 VAL  QQG     6.00  #peak 12\n"
                                     "   40 TYR  QD     49 LEU  QD1     5.50\n"
                                     "   29 LYS  QZ     27 MET  QE      7.00\n"
                                     "   20 THR  QG2    28 THR  HB      5.00\n");
  const std::string lol = write_temp("cy.lol",
                                     "   20 THR  HN     19 ASN  HN      1.80\n"
                                     "   40 TYR  QD     49 LEU  QD1     2.00\n"
                                     "   23 ASN  H      24 SER  H       2.10\n");
  const std::string aco = write_temp("cy.aco",
                                     "   10 THR  PHI   -147.7  -87.7\n"
                                     "   13 LEU  PSI    170.0 -170.0\n"
                                     "   20 THR  CHI1   -80.0  -40.0\n");
  EXPECT_EQ(detect_restraint_format(read_text_file(upl), upl).format, RestraintFormat::Cyana);
  EXPECT_EQ(detect_restraint_format(read_text_file(aco), aco).reason, "CYANA angle restraints (.aco)");
  auto set = read_restraints(upl);
  ASSERT_EQ(set.restraints.size(), 5u);
  EXPECT_DOUBLE_EQ(set.restraints[1].upper, 6.0);
  EXPECT_DOUBLE_EQ(set.restraints[1].lower, 0.0);
  EXPECT_EQ(set.restraints[1].alternatives[0].b.atom, "QQG");
  EXPECT_CONTAINS(set.restraints[1].origin, "cy.upl:3");
  merge_cyana_limits(set, read_restraints(lol));
  ASSERT_EQ(set.restraints.size(), 6u);
  EXPECT_DOUBLE_EQ(set.restraints[0].lower, 1.8);  // the pair written the other way round
  EXPECT_DOUBLE_EQ(set.restraints[2].lower, 2.0);
  EXPECT_DOUBLE_EQ(set.restraints[5].lower, 2.1);
  EXPECT_DOUBLE_EQ(set.restraints[5].upper, kNoUpperLimit);
  EXPECT_CONTAINS(set.warnings[0], "2 lower limits of ");
  EXPECT_CONTAINS(set.warnings[1], "1 lower limits of ");
  EXPECT_CONTAINS(set.warnings[1], "cy.lol:3");
  const auto ang = read_restraints(aco);
  ASSERT_EQ(ang.dihedrals.size(), 3u);
  EXPECT_EQ(ang.dihedrals[0].atoms[0].residue_number, 9);  // φ: C of the residue before
  EXPECT_EQ(ang.dihedrals[0].atoms[0].atom, "C");
  EXPECT_DOUBLE_EQ(ang.dihedrals[1].lower, 170.0);  // through ±180
  EXPECT_DOUBLE_EQ(ang.dihedrals[1].upper, -170.0);
  EXPECT_EQ(ang.dihedrals[2].atoms[3].atom, "OG1");  // Thr χ1: N-CA-CB-OG1
  for (auto& d : ang.dihedrals) set.dihedrals.push_back(d);

  // Pseudo-atoms resolve through the pseudo-atom rules and the nomenclature table (HN → H).
  const auto rep = resolve_restraints(set, model1());
  EXPECT_EQ(rep.restraints_out, 6u);
  EXPECT_EQ(rep.dihedrals_out, 3u);
  const auto& s = model1();
  auto names = [&](const std::vector<std::size_t>& idx) {
    std::set<std::string> n;
    for (auto i : idx) n.insert(s.atoms[i].name);
    return n;
  };
  EXPECT_EQ(names(set.restraints[0].alternatives[0].atoms_a), (std::set<std::string>{"H"}));
  EXPECT_EQ(names(set.restraints[1].alternatives[0].atoms_a), (std::set<std::string>{"HD11", "HD12", "HD13"}));
  EXPECT_EQ(set.restraints[1].alternatives[0].atoms_b.size(), 6u);
  EXPECT_EQ(names(set.restraints[2].alternatives[0].atoms_a), (std::set<std::string>{"HD1", "HD2"}));
  EXPECT_EQ(names(set.restraints[3].alternatives[0].atoms_a), (std::set<std::string>{"HZ1", "HZ2", "HZ3"}));
  EXPECT_EQ(names(set.restraints[4].alternatives[0].atoms_a), (std::set<std::string>{"HG21", "HG22", "HG23"}));
  EXPECT_NEAR(set.restraints[1].pseudo_correction, 1.0 + 2.4, 1e-12);
  EXPECT_EQ(s.atoms[set.dihedrals[2].atom_index[3]].name, "OG1");

  // Errors name the line.
  EXPECT_CONTAINS(error_of([] { (void)parse_cyana_restraints("  1 ALA HA 2 GLY H 3.0\n  2 GLY HA 3\n", "b.upl"); }),
                  "b.upl:2: expected a CYANA distance restraint");
  EXPECT_CONTAINS(error_of([] { (void)parse_cyana_restraints("  1 GLY CHI1 -60 60\n", "b.aco"); }),
                  "b.aco:1: angle CHI1 is not defined for residue GLY");
}

// ---- AMBER &rst

TEST(AmberRestraints, AtomNumbersOfTheStructure) {
  const auto& s = model1();
  auto index_of = [&](int res, const std::string& name) {
    for (std::size_t i = 0; i < s.atoms.size(); ++i)
      if (s.atoms[i].residue_number == res && s.atoms[i].name == name) return static_cast<long>(i) + 1;
    return 0L;
  };
  const long h19 = index_of(19, "H"), h20 = index_of(20, "H"), hb2 = index_of(20, "HB"), c9 = index_of(9, "C"),
             n10 = index_of(10, "N"), ca10 = index_of(10, "CA"), c10 = index_of(10, "C");
  ASSERT_GT(h19 * h20 * hb2 * c9 * n10 * ca10 * c10, 0);
  const std::string text =
      "# distance, then one with the r values of the one before, a torsion, a group\n"
      " &rst iat=" +
      std::to_string(h19) + "," + std::to_string(h20) +
      ", r1=1.3, r2=1.8, r3=3.5, r4=4.0, rk2=20.0, rk3=20.0, &end\n"
      " &rst iat=" +
      std::to_string(h20) + "," + std::to_string(hb2) +
      ", /\n"
      " &rst iat=" +
      std::to_string(c9) + "," + std::to_string(n10) + "," + std::to_string(ca10) + "," + std::to_string(c10) +
      ",\n   r1=-180, r2=-147.7, r3=-87.7, r4=0, rk2=2, &end\n"
      " &rst iat=-1," +
      std::to_string(h20) + ", igr1=" + std::to_string(h19) + "," + std::to_string(hb2) +
      ",0, r1=0, r2=0, r3=5.0, r4=6, &end\n";
  const std::string path = write_temp("r.rst", text);
  EXPECT_EQ(detect_restraint_format(text, path).format, RestraintFormat::Amber);
  EXPECT_CONTAINS(error_of([&] { (void)read_restraints(path); }), "connect the structure");
  RestraintReadOptions o;
  o.structure = &s;
  auto set = read_restraints(path, o);
  ASSERT_EQ(set.restraints.size(), 3u);
  ASSERT_EQ(set.dihedrals.size(), 1u);
  EXPECT_DOUBLE_EQ(set.restraints[0].lower, 1.8);
  EXPECT_DOUBLE_EQ(set.restraints[0].upper, 3.5);
  EXPECT_DOUBLE_EQ(set.restraints[0].weight, 20.0);
  EXPECT_DOUBLE_EQ(set.restraints[1].upper, 3.5);  // r2/r3 persist to the next namelist
  EXPECT_EQ(set.restraints[0].alternatives[0].a.atom, "H");
  EXPECT_EQ(set.restraints[0].alternatives[0].a.residue_number, 19);
  EXPECT_CONTAINS(set.restraints[1].origin, "r.rst:3");
  EXPECT_EQ(set.restraints[2].alternatives.size(), 2u);  // igr1 = {19 H, 20 HB} against 20 H
  EXPECT_DOUBLE_EQ(set.dihedrals[0].lower, -147.7);
  EXPECT_DOUBLE_EQ(set.dihedrals[0].upper, -87.7);
  const auto rep = resolve_restraints(set, s);
  EXPECT_EQ(rep.restraints_out, 3u);
  EXPECT_EQ(set.restraints[0].alternatives[0].atoms_a, (std::vector<std::size_t>{static_cast<std::size_t>(h19 - 1)}));
  EXPECT_EQ(set.dihedrals[0].atom_index[3], static_cast<std::size_t>(c10 - 1));
  EXPECT_CONTAINS(error_of([&] { (void)parse_amber_restraints(" &rst iat=1,999999, r3=4, &end\n", "n.rst", &s); }),
                  "n.rst:1: atom number 999999 is not in the structure");
  EXPECT_CONTAINS(error_of([&] { (void)parse_amber_restraints("\n &rst iat=1,2, r3=4,\n", "u.rst", &s); }),
                  "u.rst:2: the &rst namelist of this line is not closed");
  EXPECT_CONTAINS(error_of([&] { (void)parse_amber_restraints(" &rst iat=1,2,3, r3=4, &end\n", "a.rst", &s); }),
                  "a.rst:1: &rst with 3 atoms in iat");
}

// A file cannot make the readers build far more than it holds.
TEST(RestraintLimits, CombinationsAndGroupsAreBounded) {
  std::string igr = "igr1=";
  for (int k = 1; k <= 150; ++k) igr += std::to_string(k) + ",";
  std::string igr2 = "igr2=";
  for (int k = 151; k <= 300; ++k) igr2 += std::to_string(k) + ",";
  Structure s;
  for (int k = 0; k < 300; ++k) {
    Atom a;
    a.name = "H";
    a.residue = "ALA";
    a.residue_number = k + 1;
    s.atoms.push_back(a);
  }
  EXPECT_CONTAINS(error_of([&] {
                    (void)parse_amber_restraints("\n &rst iat=-1,-1, " + igr + " " + igr2 + " r3=5, &end\n", "g.rst",
                                                 &s);
                  }),
                  "g.rst:2: groups igr1 × igr2 give 22500 atom pairs (at most 10000)");
  // One restraint id: 400 OR-ed single rows and one combination of 400 AND-ed rows.
  std::string nef =
      "data_x\nsave_d\nloop_\n_nef_distance_restraint.restraint_id\n"
      "_nef_distance_restraint.restraint_combination_id\n_nef_distance_restraint.chain_code_1\n"
      "_nef_distance_restraint.sequence_code_1\n_nef_distance_restraint.residue_name_1\n"
      "_nef_distance_restraint.atom_name_1\n_nef_distance_restraint.chain_code_2\n"
      "_nef_distance_restraint.sequence_code_2\n_nef_distance_restraint.residue_name_2\n"
      "_nef_distance_restraint.atom_name_2\n_nef_distance_restraint.upper_limit\n";
  for (int k = 1; k <= 400; ++k) nef += "1 . A 1 ALA H A " + std::to_string(k + 1) + " ALA H 5\n";
  for (int k = 1; k <= 400; ++k) nef += "1 7 A 2 ALA H A " + std::to_string(k + 1) + " ALA HA 5\n";
  nef += "stop_\nsave_\n";
  EXPECT_CONTAINS(error_of([&] { (void)parse_nef_distance_restraints(nef, "c.nef"); }),
                  "c.nef:15: restraint 1 ORs 401 combinations of up to 400 AND-ed rows: 160400 alternatives in all "
                  "(at most 100000)");
  // Each restraint within its cap, the file past 200 000 alternatives in all: 21 AMBER group
  // restraints of 100 × 100 pairs (a namelist of 1 KB builds 10⁴); 3 NEF restraint ids of
  // 300 × 300 combined alternatives (600 rows each build 9·10⁴).
  std::string g1 = "igr1=", g2 = "igr2=";
  for (int k = 1; k <= 100; ++k) {
    g1 += std::to_string(k) + ",";
    g2 += std::to_string(k + 100) + ",";
  }
  std::string amber;
  for (int r = 0; r < 21; ++r) amber += " &rst iat=-1,-1, " + g1 + " " + g2 + " r3=5, &end\n";
  EXPECT_CONTAINS(error_of([&] { (void)parse_amber_restraints(amber, "t.rst", &s); }),
                  "t.rst:21: the file expands to more than 200000 atom-pair alternatives in all");
  std::string many = nef.substr(0, nef.find("1 . A"));
  for (int id = 1; id <= 3; ++id)
    for (int k = 1; k <= 300; ++k) {
      const std::string i = std::to_string(id), n = std::to_string(k + 1);
      many += i + " . A 1 ALA H A " + n + " ALA H 5\n" + i + " 7 A 2 ALA H A " + n + " ALA HA 5\n";
    }
  many += "stop_\nsave_\n";
  EXPECT_CONTAINS(error_of([&] { (void)parse_nef_distance_restraints(many, "t.nef"); }),
                  "the file expands to more than 200000 atom-pair alternatives in all");
}

// ---- .mr bundles of several formats, and format detection

TEST(MrBundles, SectionsOfSeveralFormatsAreReadOrSkippedWithTheirLines) {
  const std::string text =
      "*HEADER    TEST\n"
      "*TITLE     A BUNDLE\n"
      "\n"
      "assign (resid 19 and name HN) (resid 20 and name HN) 3.0 1.2 0.5\n"
      "assign (resid 9 and name C) (resid 10 and name N) (resid 10 and name CA) (resid 10 and name C) 1.0 -117.7 30 2\n"
      "\n"
      "   40 TYR  QD     49 LEU  QD1     5.50\n"
      "   10 THR  PSI    85.6  165.6\n"
      "some free text the depositor left\n"
      "assign (resid 23 and name H) (resid 24 and name H) 3.0 1.2 0.5\n";
  const std::string path = write_temp("b.mr", text);
  EXPECT_EQ(detect_restraint_format(text, path).format, RestraintFormat::Mr);
  MrReport rep;
  const auto set = parse_mr_restraints(text, path, nullptr, &rep);
  ASSERT_EQ(set.restraints.size(), 3u);
  ASSERT_EQ(set.dihedrals.size(), 2u);
  EXPECT_EQ(set.restraints[1].id, 2);
  EXPECT_CONTAINS(set.restraints[1].origin, "b.mr:7");
  EXPECT_CONTAINS(set.restraints[2].origin, "b.mr:10");
  EXPECT_CONTAINS(set.dihedrals[1].origin, "b.mr:8");
  ASSERT_EQ(rep.sections.size(), 6u);
  EXPECT_EQ(rep.sections[0].format, "header");
  EXPECT_EQ(rep.sections[1].format, "Xplor-NIH/CNS");
  EXPECT_EQ(rep.sections[1].distances, 1u);
  EXPECT_EQ(rep.sections[1].dihedrals, 1u);
  EXPECT_EQ(rep.sections[2].format, "CYANA distance");
  EXPECT_EQ(rep.sections[3].format, "CYANA angle (.aco)");
  EXPECT_EQ(rep.sections[4].first_line, 9);
  EXPECT_CONTAINS(rep.sections[4].skipped, "not a restraint format Gemflow reads (first line: 'some free text");
  std::string all;
  for (const auto& w : set.warnings) all += w + "\n";
  EXPECT_CONTAINS(all, "lines 9-9 skipped: not a restraint format");
  EXPECT_CONTAINS(all, "CYANA distance lines (7-7): CYANA distance limits read as upper limits");
  // A section its reader refuses is an error at its line, not skipped.
  EXPECT_CONTAINS(error_of([] {
                    (void)parse_mr_restraints("*HEADER\nassign (resid 1 and name HA) (resid 2 and name HA) 3.0 x 1\n",
                                              "e.mr");
                  }),
                  "e.mr:2: expected dminus");
}

TEST(RestraintFormatDetection, UnknownEmptyAndNamedFormats) {
  EXPECT_CONTAINS(error_of([] { (void)detect_restraint_format("", "e.tbl"); }), "e.tbl: the file is empty");
  EXPECT_CONTAINS(error_of([] { (void)detect_restraint_format("# comment\nhello world\n", "h.txt"); }),
                  "h.txt:2: unknown restraint format");
  EXPECT_CONTAINS(error_of([] { (void)read_restraints("/nonexistent/x.tbl"); }),
                  "/nonexistent/x.tbl: cannot open file");
  EXPECT_EQ(detect_restraint_format(read_text_file(sample("2kpu/2kpu_Xplor-NIH_distance.tbl")), "x").format,
            RestraintFormat::Xplor);
  EXPECT_EQ(detect_restraint_format(read_text_file(sample("2kpu/DhR29B_2kpu.nef")), "x").format, RestraintFormat::Nef);
  EXPECT_EQ(std::string(restraint_format_name(RestraintFormat::NmrStar)), "nmr-star");
  // Xplor dihedral statement errors name their line.
  EXPECT_CONTAINS(error_of([] {
                    (void)parse_xplor_restraints(
                        "\nassign (resid 1 and name C) (resid 2 and name N) (resid 2 and "
                        "name CA) (resid 2 and name C) 1.0 -60\n",
                        "d.tbl", false);
                  }),
                  "d.tbl:2: expected the range of dihedral restraint 1");
  EXPECT_CONTAINS(error_of([] {
                    (void)parse_xplor_restraints(
                        "assign (resid 1 and name C) (resid 2 and name N) (resid 2 and "
                        "name CA) (resid 2:3 and name C) 1.0 -60 20 2\n",
                        "r.tbl", false);
                  }),
                  "r.tbl:1: selection 4 of dihedral restraint 1 spans several residues");
}
