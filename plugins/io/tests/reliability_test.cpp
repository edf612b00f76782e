// Hostile and extreme inputs of the io readers and writers (issue 34's findings): reads of freed
// memory, overflowing numbers, quadratic time, allocations before the data, writers emitting
// what no reader takes, truncated integers, errors without a line, cancellation.
#include <gtest/gtest.h>

#include <chrono>
#include <cmath>
#include <fstream>
#include <limits>
#include <sstream>

#include "gemflow/io/errors.hpp"
#include "gemflow/io/limits.hpp"
#include "gemflow/io/matrix_io.hpp"
#include "gemflow/io/molecules.hpp"
#include "gemflow/io/restraints_io.hpp"
#include "gemflow/io/signal_io.hpp"
#include "gemflow/io/star.hpp"
#include "gemflow/io/structure_io.hpp"
#include "io_test_support.hpp"

using namespace gemflow;
using namespace gemflow::io;
using gemflow::io::testing::expect_error_at;
using gemflow::io::testing::sample;
using gemflow::io::testing::slurp;

namespace {

/// Expects `f` to throw std::invalid_argument whose message contains every string of `parts`.
template <class F>
void expect_invalid(F&& f, std::initializer_list<std::string> parts) {
  try {
    f();
    ADD_FAILURE() << "no std::invalid_argument thrown";
  } catch (const std::invalid_argument& e) {
    for (const auto& p : parts) EXPECT_NE(std::string(e.what()).find(p), std::string::npos) << e.what();
  }
}

double seconds(const std::function<void()>& f) {
  const auto t0 = std::chrono::steady_clock::now();
  f();
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

const std::string kCarbon = "    0.0000    0.0000    0.0000 C   0  0  0  0  0  0  0  0  0  0  0  0\n";

/// `n` one-atom V2000 records named `name` (blank: the header's first line is empty).
std::string sdf_records(std::size_t n, const std::string& name) {
  const std::string rec = name + "\n  manual\n\n  1  0  0  0  0  0  0  0  0  0999 V2000\n" + kCarbon + "M  END\n$$$$\n";
  std::string s;
  s.reserve(n * rec.size());
  for (std::size_t i = 0; i < n; ++i) s += rec;
  return s;
}

/// A two-atom structure (N and CA of SER A 22), one model.
Structure two_atoms() {
  Structure s;
  Atom n;
  n.name = "N";
  n.element = "N";
  n.residue = "SER";
  n.chain = "A";
  n.residue_number = 22;
  Atom ca = n;
  ca.name = "CA";
  ca.element = "C";
  s.atoms = {n, ca};
  s.models = {{Vec3{4.909, 12.659, -3.127}, Vec3{6.035, 13.459, -2.622}}};
  return s;
}

/// An mmCIF _atom_site loop of two rows whose first row's Cartn_x is `x` (line 14).
std::string cif_two_atoms(const std::string& x) {
  return "data_t\nloop_\n_atom_site.group_PDB\n_atom_site.id\n_atom_site.type_symbol\n_atom_site.label_atom_id\n"
         "_atom_site.label_comp_id\n_atom_site.label_asym_id\n_atom_site.label_seq_id\n_atom_site.Cartn_x\n"
         "_atom_site.Cartn_y\n_atom_site.Cartn_z\n_atom_site.B_iso_or_equiv\n"
         "ATOM 1 N N SER A 22 " +
         x +
         " 12.659 -3.127 3.03\n"
         "ATOM 2 C CA SER A 22 6.035 13.459 -2.622 3.04\n";
}

}  // namespace

// ---- SDF -------------------------------------------------------------------------------------

// A V3000 record with a (valid) COLLECTION block: the block's "BEGIN COLLECTION" was compared
// through a view into a freed temporary (heap-use-after-free under ASan; a release build read it
// by luck). Reproducer asan_sdf_v3000_use_after_free.
TEST(IoReliability, SdfV3000CollectionBlockIsSkipped) {
  std::string v3 = slurp(sample("molecules/biotite_TYR.v3000.sdf"));
  const auto at = v3.find("M  V30 END CTAB");
  ASSERT_NE(at, std::string::npos);
  v3.insert(at, "M  V30 BEGIN COLLECTION\nM  V30 MDLV30/STEABS ATOMS=(1 2)\nM  V30 END COLLECTION\n");
  const MoleculeSet set = parse_sdf(v3, "c.sdf");
  ASSERT_EQ(set.size(), 1u);
  EXPECT_EQ(set.molecules[0].atoms.size(), 24u);
  EXPECT_EQ(set.molecules[0].bonds.size(), 24u);
  // an unterminated collection is named where the record ends (line 62, "M  END")
  std::string open = v3;
  open.erase(open.find("M  V30 END COLLECTION\n"), 22);
  expect_error_at([&] { (void)parse_sdf(open, "o.sdf"); }, 62, {"o.sdf:62:", "record ends before END COLLECTION"});
}

// Coordinates of 1e300 passed and overflowed bond perception (UBSan); every format now refuses
// |x| > 1e6 Å at its line, V2000 and V3000 alike.
TEST(IoReliability, SdfRefusesHugeCoordinates) {
  std::string rec = sdf_records(1, "x");
  rec.replace(rec.find("    0.0000    0.0000    0.0000"), 10, "    1e+300");
  expect_error_at([&] { (void)parse_sdf(rec, "h.sdf"); }, 5, {"atom 1 x (columns 1-10)", "1e+300", "±1e6 Å"});
  std::string just = sdf_records(1, "x");
  just.replace(just.find("    0.0000    0.0000    0.0000"), 10, " 1000000.0");
  EXPECT_EQ(parse_sdf(just, "ok.sdf").molecules[0].atoms[0].xyz[0], 1e6);
  just.replace(just.find(" 1000000.0"), 10, " 1000000.1");
  expect_error_at([&] { (void)parse_sdf(just, "j.sdf"); }, 5, {"1000000.1"});
  std::string v3 = slurp(sample("molecules/biotite_TYR.v3000.sdf"));
  const std::string atom1 = "M  V30 1 N 1.320000 0.952000 1.428000 0";
  ASSERT_NE(v3.find(atom1), std::string::npos);
  v3.replace(v3.find(atom1), atom1.size(), "M  V30 1 N 1.32 -5e300 1.428 0");
  expect_error_at([&] { (void)parse_sdf(v3, "v3.sdf"); }, 8, {"v3.sdf:8:", "atom 1 y: -5e300 Å is beyond"});
}

// Charges were cut to int without a range check: CTfile charges are -15..15.
TEST(IoReliability, SdfChargesAreRangeChecked) {
  std::string rec = sdf_records(1, "x");
  rec.insert(rec.find("M  END"), "M  CHG  1   1   2\n");
  EXPECT_EQ(parse_sdf(rec, "ok.sdf").molecules[0].atoms[0].charge, 2);
  rec.replace(rec.find("M  CHG  1   1   2"), 17, "M  CHG  1   1 999");
  expect_error_at([&] { (void)parse_sdf(rec, "q.sdf"); }, 6, {"M  CHG charge 1: 999 is not a charge of -15..15"});
}

// 60 000 records with blank names took 21 s against 0.45 s with names: each blank name copied the
// file's line table to look ahead. Now the two take about the same time.
TEST(IoReliability, SdfBlankNamesReadInLinearTime) {
  const std::size_t n = 20000;
  const std::string named = sdf_records(n, "mol"), blank = sdf_records(n, "");
  MoleculeSet a, b;
  const double t_named = seconds([&] { a = parse_sdf(named, "n.sdf"); });
  const double t_blank = seconds([&] { b = parse_sdf(blank, "b.sdf"); });
  ASSERT_EQ(a.size(), n);
  ASSERT_EQ(b.size(), n);
  EXPECT_EQ(b.molecules[n - 1].name, "");
  EXPECT_EQ(b.molecules[n - 1].atoms.size(), 1u);
  EXPECT_LT(t_blank, 4 * t_named + 0.1) << "named " << t_named << " s, blank " << t_blank << " s";
}

// ---- bond perception -------------------------------------------------------------------------

// A coordinate of 1e300 overflowed the grid's cell index and hash (UBSan signed overflow): any
// finite position is now hashed safely, a non-finite one bonds to nothing, and the real bonds are
// still found.
TEST(IoReliability, BondPerceptionOnExtremeCoordinates) {
  Structure s = two_atoms();
  s.atoms.push_back(s.atoms[1]);
  s.atoms.push_back(s.atoms[1]);
  s.atoms.push_back(s.atoms[1]);
  s.atoms.push_back(s.atoms[1]);
  s.models[0].push_back({1e300, 0, 0});
  s.models[0].push_back({-1e300, -1e300, 1e300});
  s.models[0].push_back({std::numeric_limits<double>::quiet_NaN(), 0, 0});
  s.models[0].push_back({5e15, 5e15 + 1.0, 0});  // far out, ~1.5 Å from nothing
  const auto bonds = bonds_by_distance(s);
  ASSERT_EQ(bonds.size(), 1u);
  EXPECT_EQ(bonds[0], (std::array<std::size_t, 2>{0, 1}));
  // two atoms bonded far out, beyond the clamped cell range, are still found
  Structure far = two_atoms();
  far.models[0] = {Vec3{3e16, 0, 0}, Vec3{3e16, 1.0, 0}};
  EXPECT_EQ(bonds_by_distance(far).size(), 1u);
}

// ---- structures: readers refuse, writers never corrupt -----------------------------------------

TEST(IoReliability, StructureReadersRefuseHugeCoordinates) {
  // manual_cif_huge_value_truncated_output/huge_coord.cif: Cartn_x 1e300 on line 14
  expect_error_at([] { (void)parse_mmcif(cif_two_atoms("1e300"), "h.cif"); }, 14,
                  {"h.cif:14:", "Cartn_x 1e300", "±1e6 Å"});
  EXPECT_EQ(parse_mmcif(cif_two_atoms("-999999.5"), "ok.cif").models[0][0][0], -999999.5);
  // "1e300" fits PDB's 8 coordinate columns
  const std::string pdb = "ATOM      1  N   SER A  22       1e300  12.659  -3.127  1.00  3.03           N\n";
  expect_error_at([&] { (void)parse_pdb(pdb, "h.pdb"); }, 1, {"h.pdb:1:", "x coordinate '1e300' (columns 31-38)"});
}

// 20 000 models, then model 7 again: every model read, and the repeat named with its first line,
// in time linear in the models (each MODEL scanned every model before it).
TEST(IoReliability, ManyModelsAndARepeatedSerial) {
  const std::string atom = "ATOM      1  N   SER A  22       1.000  12.659  -3.127  1.00  3.03           N\n";
  std::string pdb;
  const int n = 20000;
  for (int m = 1; m <= n; ++m) pdb += "MODEL     " + std::to_string(m) + "\n" + atom + "ENDMDL\n";
  EXPECT_EQ(parse_pdb(pdb, "m.pdb").models.size(), std::size_t(n));
  expect_error_at([&] { (void)parse_pdb(pdb + "MODEL     7\n" + atom + "ENDMDL\n", "m.pdb"); }, 3 * n + 1,
                  {"model 7 appears twice (first at line 19)"});
}

// The mmCIF writer cut lines at 64 characters (a fixed buffer) when a B-factor or coordinate was
// wide, and the PDB writer wrote past its columns, merging two atoms. Now mmCIF writes any finite
// width and reads back the same, and PDB refuses what its columns cannot hold, naming the atom.
TEST(IoReliability, WritersRoundTripOrRefuseExtremeValues) {
  Structure s = two_atoms();
  s.atoms[0].b_factor = 1e200;
  s.atoms[1].occupancy = -12345678.25;
  s.models[0][1] = {999999.125, -999999.875, 0.5};
  std::ostringstream cif;
  write_mmcif(cif, s);
  const Structure back = parse_mmcif(cif.str(), "rt.cif");
  ASSERT_EQ(back.atoms.size(), 2u);
  EXPECT_EQ(back.atoms[0].b_factor, 1e200);  // %.2f of a double is its exact decimal value
  EXPECT_EQ(back.atoms[1].occupancy, -12345678.25);
  EXPECT_EQ(back.models[0][1], (Vec3{999999.125, -999999.875, 0.5}));
  EXPECT_EQ(back.models[0][0], s.models[0][0]);

  std::ostringstream pdb;
  expect_invalid([&] { write_pdb(pdb, s); }, {"atom 1 'N' of SER A 22", "B-factor 1e+200", "columns 61-66", ".cif"});
  s.atoms[0].b_factor = 3.03;
  expect_invalid([&] { write_pdb(pdb, s); }, {"atom 2 'CA' of SER A 22", "occupancy -12345678.25", ".cif"});
  s.atoms[1].occupancy = 1.0;
  expect_invalid([&] { write_pdb(pdb, s); }, {"atom 2 'CA'", "x coordinate 999999.125", "columns 31-54", ".cif"});
  s.models[0][1] = {9999.999, -999.999, 0.5};  // the extremes %8.3f holds
  write_pdb(pdb, s);
  const Structure p = parse_pdb(pdb.str(), "rt.pdb");
  ASSERT_EQ(p.atoms.size(), 2u);
  EXPECT_EQ(p.models[0][1], (Vec3{9999.999, -999.999, 0.5}));
  EXPECT_EQ(p.atoms[0].b_factor, 3.03);

  // what read_mmcif refuses, write_mmcif refuses too
  s.models[0][0][2] = 2e6;
  std::ostringstream bad;
  expect_invalid([&] { write_mmcif(bad, s); }, {"atom 1 'N' of SER A 22", "2000000.000", "±1e6 Å"});
  s.models[0][0][2] = 0;
  s.atoms[1].name = "C\nA";
  expect_invalid([&] { write_mmcif(bad, s); }, {"line break"});
  expect_invalid([&] { write_pdb(bad, s); }, {"atom 2", "control character"});
}

// Errors that concern the whole file say so; those with a place name it.
TEST(IoReliability, StructureErrorsNameALineWhereThereIsOne) {
  expect_error_at([] { (void)parse_mmcif("#\ndata_x\n_cell.a 1\n", "n.cif"); }, 2,
                  {"n.cif:2:", "no _atom_site loop in data block 'x'"});
  expect_error_at(
      [] {
        (void)parse_mmcif(
            "data_x\nloop_\n_atom_site.label_atom_id\n_atom_site.Cartn_x\n_atom_site.Cartn_y\n"
            "_atom_site.Cartn_z\n",
            "e.cif");
      },
      2, {"e.cif:2:", "the _atom_site loop has no rows"});
  expect_error_at([] { (void)parse_pdb("REMARK nothing\n", "e.pdb"); }, 0, {"e.pdb: no atoms found in the file"});
  expect_error_at([] { (void)parse_sdf("\n\n", "e.sdf"); }, 0, {"e.sdf: no molecule record in the file"});
}

// ---- Matrix Market, NPY ------------------------------------------------------------------------

// A 60-byte header "20000 20000 1" allocated 3.4 GB before noticing the missing entry
// (manual_mtx_header_memory_bomb). Nothing is allocated now before the entries are there: a
// declared 10⁹×10⁹ matrix (8·10¹⁸ bytes, which no machine has) gives the truncation error, not an
// out-of-memory one.
TEST(IoReliability, MatrixMarketAllocatesOnlyWhatTheFileHolds) {
  const std::string coord = "%%MatrixMarket matrix coordinate real general\n";
  expect_error_at([&] { (void)parse_matrix_market(coord + "1000000000 1000000000 1\n", "b.mtx"); }, 2,
                  {"the file ends after 0 of the 1 entries"});
  expect_error_at([&] { (void)parse_matrix_market(coord + "1000000000 1000000000 2\n5 7 1.5\n", "b.mtx"); }, 3,
                  {"the file ends after 1 of the 2 entries"});
  const std::string array = "%%MatrixMarket matrix array real general\n";
  expect_error_at([&] { (void)parse_matrix_market(array + "1000000000 1000000000\n1\n2\n", "a.mtx"); }, 4,
                  {"the file ends after 2 of the 1000000000000000000 values"});
  // a matrix that the file does describe but that cannot fit: the size line, with the memory
  try {
    (void)parse_matrix_market(coord + "1000000000 1000000000 1\n5 7 1.5\n", "big.mtx");
    ADD_FAILURE() << "no error";
  } catch (const ParseError& e) {
    EXPECT_EQ(e.line(), 2) << e.what();
  }
  // duplicates still summed in file order and counted, symmetric entries mirrored
  MatrixFileInfo info;
  const auto m = parse_matrix_market(
      "%%MatrixMarket matrix coordinate real symmetric\n3 3 4\n2 1 0.1\n3 3 1\n2 1 0.2\n1 1 -4\n", "s.mtx", {}, &info);
  EXPECT_EQ(info.duplicates, 1u);
  EXPECT_EQ(m(1, 0), 0.1 + 0.2);
  EXPECT_EQ(m(0, 1), 0.1 + 0.2);
  EXPECT_EQ(m(2, 2), 1.0);
  EXPECT_EQ(m(0, 0), -4.0);
  EXPECT_EQ(m(2, 0), 0.0);
  expect_error_at(
      [&] {
        (void)parse_matrix_market(coord + "3 3 3\n2 1 0.1\n3 3 1\n2 1 0.2\n", "d.mtx",
                                  {.duplicates = DuplicateEntries::error});
      },
      5, {"entry (2, 1) was already given on line 3"});
}

// A `2 0` array header, a 10¹²×0 one and an NPY of shape (5, 0) read as empty matrices, which no
// node can use (and the writer then looped over 10¹² rows): refused where they are declared.
TEST(IoReliability, MatricesWithAZeroDimensionAreRefused) {
  const std::string array = "%%MatrixMarket matrix array real general\n";
  expect_error_at([&] { (void)parse_matrix_market(array + "2 0\n", "z.mtx"); }, 2,
                  {"z.mtx:2:", "a 2×0 matrix has no entries"});
  expect_error_at([&] { (void)parse_matrix_market(array + "% tall\n1000000000000 0\n", "t.mtx"); }, 3,
                  {"a 1000000000000×0 matrix has no entries"});
  expect_error_at([&] { (void)parse_matrix_market("%%MatrixMarket matrix coordinate real general\n0 4 0\n", "c.mtx"); },
                  2, {"a 0×4 matrix"});
  std::string dict = "{'descr': '<f8', 'fortran_order': False, 'shape': (5, 0), }";
  dict.append((64 - (10 + dict.size() + 1) % 64) % 64, ' ');
  dict += '\n';
  std::string npy = std::string("\x93NUMPY\x01\x00", 8) + static_cast<char>(dict.size()) + '\0' + dict;
  try {
    (void)parse_npy(npy, "e.npy");
    ADD_FAILURE() << "no error";
  } catch (const ParseError& e) {
    EXPECT_NE(std::string(e.what()).find("shape (5, 0) has no elements"), std::string::npos) << e.what();
  }
  // the writers refuse them too, at once (10¹²×0 looped over its rows)
  for (const char* path : {"t.mtx", "t.npy", "t.csv"}) {
    std::ostringstream out;
    expect_invalid([&] { write_matrix(out, Matrix<double>(1000000000000, 0), path); },
                   {"1000000000000×0 matrix has no entries"});
    EXPECT_TRUE(out.str().empty()) << path;
  }
}

// ---- NEF ---------------------------------------------------------------------------------------

namespace {
std::string nef(const std::string& rows) {
  return "data_x\nsave_d\nloop_\n_nef_distance_restraint.restraint_id\n"
         "_nef_distance_restraint.chain_code_1\n_nef_distance_restraint.sequence_code_1\n"
         "_nef_distance_restraint.residue_name_1\n_nef_distance_restraint.atom_name_1\n"
         "_nef_distance_restraint.chain_code_2\n_nef_distance_restraint.sequence_code_2\n"
         "_nef_distance_restraint.residue_name_2\n_nef_distance_restraint.atom_name_2\n"
         "_nef_distance_restraint.target_value\n_nef_distance_restraint.target_value_uncertainty\n" +
         rows + "stop_\nsave_\n";
}
}  // namespace

// `restraint_id 2.9` was truncated to 2 and merged into restraint 2; every integer column is now
// read whole, in range.
TEST(IoReliability, NefIntegerColumnsAreReadWhole) {
  const std::string r2 = "2 A 1 SER H A 2 SER H 3.0 0.5\n";
  const auto ok = parse_nef_distance_restraints(nef(r2 + "3 A 1 SER HA A 2 SER H 3.0 0.5\n"), "ok.nef");
  ASSERT_EQ(ok.restraints.size(), 2u);
  EXPECT_EQ(ok.restraints[1].id, 3);
  expect_error_at([&] { (void)parse_nef_distance_restraints(nef(r2 + "2.9 A 1 SER HA A 2 SER H 3.0 0.5\n"), "a.nef"); },
                  16, {"a.nef:16:", "bad restraint_id '2.9' (expected an integer)"});
  expect_error_at([&] { (void)parse_nef_distance_restraints(nef("1e3 A 1 SER HA A 2 SER H 3.0 0.5\n"), "b.nef"); }, 15,
                  {"bad restraint_id '1e3'"});
  expect_error_at(
      [&] { (void)parse_nef_distance_restraints(nef("4294967298 A 1 SER HA A 2 SER H 3.0 0.5\n"), "c.nef"); }, 15,
      {"restraint_id '4294967298' is out of range"});
  // a sequence code is an integer, optionally followed by an insertion code (letters)
  expect_error_at([&] { (void)parse_nef_distance_restraints(nef("1 A 2.9 SER HA A 2 SER H 3.0 0.5\n"), "d.nef"); }, 15,
                  {"sequence_code_1 '2.9' is not a residue number"});
  expect_error_at(
      [&] { (void)parse_nef_distance_restraints(nef("1 A 1 SER HA A 99999999999 SER H 3.0 0.5\n"), "e.nef"); }, 15,
      {"sequence_code_2 '99999999999' is out of range"});
  const auto ins = parse_nef_distance_restraints(nef("1 A 10A SER HA A 2 SER H 3.0 0.5\n"), "f.nef");
  EXPECT_EQ(ins.restraints[0].alternatives[0].a.residue_number, 10);
  // target + uncertainty beyond the double range: located, not an infinite bound found later
  expect_error_at([&] { (void)parse_nef_distance_restraints(nef("1 A 1 SER HA A 2 SER H 1e308 1e308\n"), "g.nef"); },
                  15, {"restraint 1: target_value + target_value_uncertainty is not a finite number"});
}

// ---- cancellation ------------------------------------------------------------------------------

TEST(IoReliability, ReadersStopWhenCancelled) {
  int polls = 0;
  const CancelCheck stop = [&polls] {
    ++polls;
    return true;
  };
  EXPECT_THROW((void)parse_sdf(sdf_records(5000, "m"), "c.sdf", stop), ReadCancelled);
  EXPECT_EQ(polls, 1);
  EXPECT_EQ(parse_sdf(sdf_records(5000, "m"), "c.sdf", [] { return false; }).size(), 5000u);

  std::string csv;
  for (int i = 0; i < 5000; ++i) csv += "1,2\n";
  EXPECT_THROW((void)parse_csv(csv, "c.csv", nullptr, stop), ReadCancelled);
  std::string mtx = "%%MatrixMarket matrix array real general\n5000 1\n";
  for (int i = 0; i < 5000; ++i) mtx += "1\n";
  EXPECT_THROW((void)parse_matrix_market(mtx, "c.mtx", {.cancel = stop}), ReadCancelled);
  EXPECT_EQ(parse_matrix_market(mtx, "c.mtx").rows(), 5000u);

  std::string pdb;
  for (int i = 0; i < 5000; ++i)
    pdb += "ATOM      1  CA  SER A  22       6.035  13.459  -2.622  1.00  3.04           C\n";
  EXPECT_THROW((void)parse_pdb(pdb, "c.pdb", {.cancel = stop}), ReadCancelled);
  std::string cif = cif_two_atoms("4.909");
  for (int i = 0; i < 3000; ++i) cif += "ATOM 2 C CA SER A 22 6.035 13.459 -2.622 3.04\n";
  EXPECT_THROW((void)parse_mmcif(cif, "c.cif", {.cancel = stop}), ReadCancelled);
}

namespace {
/// A read given a CancelCheck: never cancelled it reads through, polling more than
/// `polls_before` times (what the parts it builds on poll, e.g. the STAR lexer: so the reader's
/// own loops poll too); cancelled at the first poll it stops there with ReadCancelled.
template <class Read>
void expect_cancellable(const char* what, Read read, std::size_t polls_before = 0) {
  SCOPED_TRACE(what);
  std::size_t polls = 0;
  EXPECT_NO_THROW(read([&polls] {
    ++polls;
    return false;
  }));
  EXPECT_GT(polls, polls_before);
  std::size_t cancelled_polls = 0;
  EXPECT_THROW(read([&cancelled_polls] {
                 ++cancelled_polls;
                 return true;
               }),
               ReadCancelled);
  EXPECT_EQ(cancelled_polls, 1u);
}

std::size_t star_polls(const std::string& text) {
  std::size_t n = 0;
  (void)parse_star(text, "s.str", [&n] {
    ++n;
    return false;
  });
  return n;
}
}  // namespace

// Every restraint reader, the NPY reader and the TCPD JSON signal reader poll the cancel check
// in their own loops (a large file stops within a few thousand rows).
TEST(IoReliability, RestraintAndBinaryReadersStopWhenCancelled) {
  constexpr int n = 9000;
  std::string rows, tbl, upl, aco, amber, star, json = "{\"series\": [{\"raw\": [";
  for (int i = 1; i <= n; ++i) {
    rows += std::to_string(i) + " A 1 SER HA A 2 SER H 3.0 0.5\n";
    tbl += "assign (resid 1 and name HA) (resid 2 and name H) 3.0 1.0 0.5\n";
    upl += "1 SER HA 2 SER H 5.0\n";
    aco += "2 SER PHI -120.0 -60.0\n";
    amber += " &rst iat=1,2, r1=0.0, r2=1.8, r3=5.0, r4=5.5, rk2=1.0 /\n";
    star += std::to_string(i) + " 1 1 22 SER N 1 22 SER CA 1.8 5.0\n";
    json += (i > 1 ? ", " : "") + std::to_string(i);
  }
  json += "]}]}";
  const std::string nef_text = nef(rows);
  expect_cancellable(
      "NEF", [&](const CancelCheck& c) { (void)parse_nef_distance_restraints(nef_text, "c.nef", c); },
      star_polls(nef_text));
  expect_cancellable("Xplor", [&](const CancelCheck& c) { (void)parse_xplor_distance_restraints(tbl, "c.tbl", c); });
  expect_cancellable("CYANA upl",
                     [&](const CancelCheck& c) { (void)parse_cyana_restraints(upl, "c.upl", CyanaKind::Upper, c); });
  expect_cancellable("CYANA aco",
                     [&](const CancelCheck& c) { (void)parse_cyana_restraints(aco, "c.aco", CyanaKind::Angles, c); });
  const Structure s = two_atoms();
  expect_cancellable("AMBER", [&](const CancelCheck& c) { (void)parse_amber_restraints(amber, "c.rst", &s, c); });
  const std::string nmrstar =
      "data_x\nsave_d\n_Gen_dist_constraint_list.Sf_category gen_dist_constraints\nloop_\n"
      "_Gen_dist_constraint.ID\n_Gen_dist_constraint.Member_ID\n"
      "_Gen_dist_constraint.Entity_assembly_ID_1\n_Gen_dist_constraint.Comp_index_ID_1\n"
      "_Gen_dist_constraint.Comp_ID_1\n_Gen_dist_constraint.Atom_ID_1\n"
      "_Gen_dist_constraint.Entity_assembly_ID_2\n_Gen_dist_constraint.Comp_index_ID_2\n"
      "_Gen_dist_constraint.Comp_ID_2\n_Gen_dist_constraint.Atom_ID_2\n"
      "_Gen_dist_constraint.Distance_lower_bound_val\n_Gen_dist_constraint.Distance_upper_bound_val\n" +
      star + "stop_\nsave_\n";
  expect_cancellable(
      "NMR-STAR", [&](const CancelCheck& c) { (void)parse_nmrstar_restraints(nmrstar, "c.str", c); },
      star_polls(nmrstar));
  expect_cancellable("wwPDB .mr",
                     [&](const CancelCheck& c) { (void)parse_mr_restraints(tbl, "c.mr", nullptr, nullptr, c); });
  expect_cancellable("read_restraints (auto)", [&](const CancelCheck& c) {
    RestraintReadOptions o;
    o.cancel = c;
    (void)parse_restraints(upl, "c.upl", o);
  });
  std::ostringstream npy;
  write_npy(npy, Matrix<double>(n, 1, 0.5));
  expect_cancellable("NPY", [&](const CancelCheck& c) { (void)parse_npy(npy.str(), "c.npy", nullptr, c); });
  expect_cancellable("TCPD JSON", [&](const CancelCheck& c) {
    ReadSignalOptions o;
    o.cancel = c;
    (void)parse_signal(json, "c.json", o);
  });
  expect_cancellable("NPY signal", [&](const CancelCheck& c) {
    ReadSignalOptions o;
    o.cancel = c;
    (void)parse_signal(npy.str(), "c.npy", o);
  });
}

// Fuzzing found a vertical tab between two values: the lexer neither skipped it as white space
// nor read it into a word, and returned empty values until memory ran out. Every white-space
// character now separates values, as in a word.
TEST(IoReliability, StarValuesSeparatedByAnyWhiteSpace) {
  for (const char* sep : {"\v", "\f", " \v ", "\t\f"}) {
    const std::string text = std::string("data_x\nloop_\n_a.b\n_a.c\n1") + sep + "2\n3 4\n";
    const StarFile f = parse_star(text, "ws.cif");
    ASSERT_EQ(f.blocks.size(), 1u);
    ASSERT_EQ(f.blocks[0].global.loops.size(), 1u);
    const auto& values = f.blocks[0].global.loops[0].values;
    ASSERT_EQ(values.size(), 4u);
    EXPECT_EQ(values[0].text, "1");
    EXPECT_EQ(values[1].text, "2");
  }
}
