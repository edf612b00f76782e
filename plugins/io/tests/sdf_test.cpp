// MDL SD file / molfile reading (V2000, V3000, multi-record) and the io.read_molecules node.
#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <sstream>

#include <gemflow/testing.hpp>

#include "gemflow/io/errors.hpp"
#include "gemflow/io/molecules.hpp"
#include "io_test_support.hpp"
#include "register.hpp"

using namespace gemflow;
using namespace gemflow::io;
using gemflow::io::testing::expect_parse_error;
using gemflow::io::testing::sample;
using gemflow::io::testing::shared;
using gemflow::io::testing::slurp;
using gemflow::io::testing::write_temp;

namespace {

// A tiny hand-checked V2000 record (water with a charge field and M  CHG).
const char* kWater =
    "water\n"
    "  test\n"
    "\n"
    "  3  2  0  0  0  0  0  0  0  0999 V2000\n"
    "    0.0000    0.0000    0.1173 O   0  0  0  0  0  0  0  0  0  0  0  0\n"
    "    0.0000    0.7572   -0.4692 H   0  0  0  0  0  0  0  0  0  0  0  0\n"
    "    0.0000   -0.7572   -0.4692 H   0  3  0  0  0  0  0  0  0  0  0  0\n"
    "  1  2  1  0\n"
    "  1  3  1  0\n"
    "M  END\n"
    "> <id>\n"
    "7\n"
    "\n"
    "$$$$\n";

}  // namespace

// Counts from the files' count lines (V2000 "aaabbb", V3000 COUNTS), checked exactly.
// QA: nan/inf coordinates passed the reader and failed later as bounds without a file:line;
// CR-only line endings and a UTF-8 byte-order mark are read.
TEST(ReadSdf, NonFiniteCoordinatesCrOnlyAndBom) {
  std::string bad = kWater;
  bad.replace(bad.find("    0.0000    0.7572"), 10, "       nan");
  expect_parse_error([&] { (void)parse_sdf(bad, "n.sdf"); }, {"n.sdf:6:", "atom 2 x (columns 1-10)", "not a finite"});
  std::string inf = kWater;
  inf.replace(inf.find("   -0.4692 H   0  3"), 10, "       inf");
  expect_parse_error([&] { (void)parse_sdf(inf, "i.sdf"); }, {"i.sdf:7:", "atom 3 z", "not a finite"});
  std::string cr = kWater;
  for (char& c : cr)
    if (c == '\n') c = '\r';
  const auto a = parse_sdf(kWater, "w.sdf").molecules.at(0),
             b = parse_sdf("\xEF\xBB\xBF" + cr, "cr.sdf").molecules.at(0);
  ASSERT_EQ(b.atoms.size(), 3u);
  EXPECT_EQ(b.atoms[1].xyz, a.atoms[1].xyz);
  EXPECT_EQ(b.bonds.size(), a.bonds.size());
  // QA: a bond type beyond the V2000 table (1-8) was accepted
  std::string nine = kWater;
  nine.replace(nine.find("  1  3  1  0"), 12, "  1  3  9  0");
  expect_parse_error([&] { (void)parse_sdf(nine, "b.sdf"); }, {"b.sdf:9:", "bond 2: bond type 9 is not one of 1-8"});
}

TEST(ReadSdf, CountsMatchCountLines) {
  struct Case {
    const char* file;
    std::size_t atoms, bonds;
    const char* name;
  };
  for (const Case& c :
       {Case{"molecules/biotite_TYR.sdf", 24, 24, "TYR - Ideal conformer"},
        Case{"molecules/biotite_TYR.v3000.sdf", 24, 24, "TYR - Ideal conformer"},
        Case{"molecules/biotite_HWB.sdf", 32, 34, ""}, Case{"molecules/biotite_03F.sdf", 130, 130, "03F"}}) {
    SCOPED_TRACE(c.file);
    const auto set = read_sdf(sample(c.file));
    ASSERT_EQ(set.size(), 1u);
    EXPECT_EQ(set.molecules[0].atoms.size(), c.atoms);
    EXPECT_EQ(set.molecules[0].bonds.size(), c.bonds);
    if (*c.name) {
      EXPECT_EQ(set.molecules[0].name, c.name);
    }
  }
}

TEST(ReadSdf, Tyr2000First) {
  const auto m = read_sdf(sample("molecules/biotite_TYR.sdf")).molecules.at(0);
  EXPECT_EQ(m.atoms[0].element, "N");
  EXPECT_DOUBLE_EQ(m.atoms[0].xyz[0], 1.32);
  EXPECT_DOUBLE_EQ(m.atoms[0].xyz[1], 0.952);
  EXPECT_DOUBLE_EQ(m.atoms[0].xyz[2], 1.428);
  EXPECT_EQ(m.atoms[23].element, "H");
  EXPECT_DOUBLE_EQ(m.atoms[23].xyz[2], 4.784);
  // "  3  4  2  0": the carbonyl double bond, 0-based (2, 3).
  EXPECT_EQ(m.bonds[6].a, 2u);
  EXPECT_EQ(m.bonds[6].b, 3u);
  EXPECT_EQ(m.bonds[6].order, 2);
  int doubles = 0;
  for (const auto& b : m.bonds) doubles += b.order == 2;
  EXPECT_EQ(doubles, 4);  // C=O and the three Kekulé double bonds of the ring
  for (const auto& a : m.atoms) EXPECT_EQ(a.charge, 0);
  EXPECT_EQ(m.source, sample("molecules/biotite_TYR.sdf") + ":1");
}

// Same molecule, both formats: identical atoms, bonds and coordinates.
TEST(ReadSdf, V2000EqualsV3000) {
  const auto a = read_sdf(sample("molecules/biotite_TYR.sdf")).molecules.at(0);
  const auto b = read_sdf(sample("molecules/biotite_TYR.v3000.sdf")).molecules.at(0);
  ASSERT_EQ(a.atoms.size(), b.atoms.size());
  ASSERT_EQ(a.bonds.size(), b.bonds.size());
  for (std::size_t i = 0; i < a.atoms.size(); ++i) {
    EXPECT_EQ(a.atoms[i].element, b.atoms[i].element) << i;
    EXPECT_EQ(a.atoms[i].charge, b.atoms[i].charge) << i;
    for (int k = 0; k < 3; ++k) EXPECT_EQ(a.atoms[i].xyz[k], b.atoms[i].xyz[k]) << i;  // same decimal values
  }
  for (std::size_t i = 0; i < a.bonds.size(); ++i) {
    EXPECT_EQ(a.bonds[i].a, b.bonds[i].a) << i;
    EXPECT_EQ(a.bonds[i].b, b.bonds[i].b) << i;
    EXPECT_EQ(a.bonds[i].order, b.bonds[i].order) << i;
  }
}

TEST(ReadSdf, ChargesAndDataItems) {
  const auto set = parse_sdf(kWater, "water.sdf");
  ASSERT_EQ(set.size(), 1u);
  const auto& m = set.molecules[0];
  EXPECT_EQ(m.name, "water");
  EXPECT_EQ(m.atoms[2].charge, 1);  // charge code 3 = +1
  EXPECT_EQ(m.atoms[0].charge, 0);
  // M  CHG supersedes every atom-block charge.
  std::string t = kWater;
  t.replace(t.find("M  END"), 6, "M  CHG  1   1  -1\nM  END");
  const auto c = parse_sdf(t, "water.sdf").molecules[0];
  EXPECT_EQ(c.atoms[0].charge, -1);
  EXPECT_EQ(c.atoms[2].charge, 0);
}

// Several records in one file: the sample files concatenated (each ends with $$$$).
TEST(ReadSdf, MultiRecord) {
  const std::string text = slurp(sample("molecules/biotite_TYR.sdf")) + slurp(sample("molecules/biotite_03F.sdf")) +
                           slurp(sample("molecules/biotite_TYR.v3000.sdf")) + std::string(kWater) + "\n\n";
  const auto set = parse_sdf(text, "cat.sdf");
  ASSERT_EQ(set.size(), 4u);
  EXPECT_EQ(set.molecules[0].atoms.size(), 24u);
  EXPECT_EQ(set.molecules[1].atoms.size(), 130u);
  EXPECT_EQ(set.molecules[1].name, "03F");
  EXPECT_EQ(set.molecules[2].bonds.size(), 24u);
  EXPECT_EQ(set.molecules[3].name, "water");
  // Record 2 starts after TYR's 53 lines.
  const auto tyr_lines = std::count(
      text.begin(), text.begin() + static_cast<long>(slurp(sample("molecules/biotite_TYR.sdf")).size()), '\n');
  EXPECT_EQ(set.molecules[1].source, "cat.sdf:" + std::to_string(tyr_lines + 1));
}

// OpenBabel's forcefield.sdf (GPL-2.0, not in sample_data): 18 records; counts per record
// taken from its V2000 count lines by a separate scan.
TEST(ReadSdf, SharedMultiRecordFile) {
  const auto path = shared("molecules/small/openbabel_forcefield.sdf");
  if (path.empty()) GTEST_SKIP() << "GEMFLOW_SHARED_DATA unset or molecules/small/openbabel_forcefield.sdf absent";
  const auto set = read_sdf(path);
  ASSERT_EQ(set.size(), 18u);
  // Independent scan: the line after each record's 3 header lines is the counts line.
  std::istringstream in(slurp(path));
  std::string line;
  std::vector<std::pair<long, long>> counts;
  int k = 0;
  while (std::getline(in, line)) {
    if (k == 3) counts.emplace_back(std::stol(line.substr(0, 3)), std::stol(line.substr(3, 3)));
    ++k;
    if (line.rfind("$$$$", 0) == 0) k = 0;
  }
  ASSERT_EQ(counts.size(), 18u);
  for (std::size_t i = 0; i < 18; ++i) {
    EXPECT_EQ(set.molecules[i].atoms.size(), static_cast<std::size_t>(counts[i].first)) << i;
    EXPECT_EQ(set.molecules[i].bonds.size(), static_cast<std::size_t>(counts[i].second)) << i;
  }
}

TEST(ReadSdf, ErrorsNameFileAndLine) {
  std::string t = kWater;
  // Bad coordinate on line 6.
  std::string bad = t;
  bad.replace(bad.find("    0.0000    0.7572"), 10, "    x.0000");
  expect_parse_error([&] { (void)parse_sdf(bad, "w.sdf"); }, {"w.sdf:6:", "atom 2 x (columns 1-10)", "x.0000"});
  // Bond to a missing atom on line 9.
  bad = t;
  bad.replace(bad.find("  1  3  1  0"), 12, "  1  9  1  0");
  expect_parse_error([&] { (void)parse_sdf(bad, "w.sdf"); }, {"w.sdf:9:", "bond 2 joins atoms 1 and 9", "3 atoms"});
  // Missing M  END: the record separator on line 14 comes first.
  bad = t;
  bad.replace(bad.find("M  END\n"), 7, "");
  expect_parse_error([&] { (void)parse_sdf(bad, "w.sdf"); }, {"w.sdf:13:", "without 'M  END'"});
  // Too few atoms before the bond block ends the record.
  bad =
      "x\n\n\n  5  0  0  0  0  0  0  0  0  0999 V2000\n"
      "    0.0000    0.0000    0.0000 C   0  0\nM  END\n$$$$\n";
  expect_parse_error([&] { (void)parse_sdf(bad, "f.sdf"); }, {"f.sdf:6:", "after 1 of 5 atoms"});
  // Counts that are not numbers.
  bad = "x\n\n\n  a  0  0  0  0  0  0  0  0  0999 V2000\nM  END\n";
  expect_parse_error([&] { (void)parse_sdf(bad, "f.sdf"); }, {"f.sdf:4:", "atom count (columns 1-3)"});
  // Truncated file.
  expect_parse_error([&] { (void)parse_sdf("x\n\n", "f.sdf"); }, {"f.sdf:", "file ends before"});
  // QA: a file cut inside the atom block said "file ends before the atom block"
  bad =
      "x\n\n\n  3  0  0  0  0  0  0  0  0  0999 V2000\n"
      "    0.0000    0.0000    0.0000 C   0  0\n    1.0000    0.0000    0.0000 C   0  0\n";
  expect_parse_error([&] { (void)parse_sdf(bad, "g.sdf"); }, {"g.sdf:6:", "file ends after 2 of 3 atoms"});
  // V3000 COUNTS disagreeing with the ATOM block.
  std::string v3 = slurp(sample("molecules/biotite_TYR.v3000.sdf"));
  v3.replace(v3.find("COUNTS 24 24"), 12, "COUNTS 25 24");
  expect_parse_error([&] { (void)parse_sdf(v3, "t.sdf"); }, {"t.sdf:", "ATOM block has 24 atoms, COUNTS says 25"});
  // Nothing at all.
  expect_parse_error([&] { (void)parse_sdf("\n\n", "e.sdf"); }, {"e.sdf", "no molecule record"});
}

TEST(ReadMoleculesNode, ReadsFileAndRegistersType) {
  Registry reg;
  PluginRegistrar r(reg, "io");
  register_molecule_nodes(r);
  ASSERT_NE(reg.find_type("MoleculeSet"), nullptr);
  const auto* e = reg.find_node("io.read_molecules");
  ASSERT_NE(e, nullptr);
  auto node = e->create();
  node->set_param("path", std::string(sample("molecules/biotite_HWB.sdf")));
  gemflow::testing::RecordingContext ctx;
  node->execute(ctx);
  const auto set = node->output("molecules").as<MoleculeSet>();
  ASSERT_EQ(set->size(), 1u);
  EXPECT_EQ(set->molecules[0].atoms.size(), 32u);
  EXPECT_EQ(ctx.input_files().size(), 1u);
  // A malformed file fails with an InputError naming file:line.
  const auto bad = write_temp("bad.sdf", "x\n\n\n  1  0  0  0  0  0  0  0  0  0999 V2000\n    zzz\nM  END\n");
  auto n2 = e->create();
  n2->set_param("path", bad);
  try {
    n2->execute(ctx);
    ADD_FAILURE() << "no error";
  } catch (const InputError& err) {
    EXPECT_NE(std::string(err.what()).find("bad.sdf:5"), std::string::npos) << err.what();
  }
}
