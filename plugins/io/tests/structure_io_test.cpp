// PDB / mmCIF reading, writing and round trips; the structure nodes.
#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <map>
#include <sstream>

#include <gemflow/types.hpp>

#include <gemflow/testing.hpp>

#include "gemflow/io/errors.hpp"
#include "gemflow/io/structure_io.hpp"
#include "io_test_support.hpp"
#include "register.hpp"

using namespace gemflow;
using namespace gemflow::io;
using gemflow::io::testing::sample;
using gemflow::io::testing::write_temp;

namespace {

Vec3 centroid(const std::vector<Vec3>& x) {
  Vec3 c{0, 0, 0};
  for (const auto& p : x)
    for (int k = 0; k < 3; ++k) c[k] += p[k];
  for (auto& v : c) v /= static_cast<double>(x.size());
  return c;
}

/// Expects `f` to throw ParseError whose what() contains every string of `parts`.
template <class F>
void expect_parse_error(F&& f, std::initializer_list<std::string> parts) {
  try {
    f();
    ADD_FAILURE() << "no ParseError thrown";
  } catch (const ParseError& e) {
    for (const auto& p : parts) EXPECT_NE(std::string(e.what()).find(p), std::string::npos) << e.what();
  }
}

std::string atom_line(const char* rec, int serial, const char* name, char alt, const char* res, char chain, int resno,
                      double x, double y, double z, double occ = 1.0, const char* el = "") {
  char buf[128];
  std::snprintf(buf, sizeof buf, "%-6s%5d %-4s%c%-3s %c%4d    %8.3f%8.3f%8.3f%6.2f%6.2f          %2s\n", rec, serial,
                name, alt, res, chain, resno, x, y, z, occ, 0.0, el);
  return buf;
}

}  // namespace

TEST(ReadPdb, Ensemble2kpu) {
  auto s = read_pdb(sample("2kpu/2kpu.pdb"));
  ASSERT_EQ(s.model_count(), 20u);
  ASSERT_EQ(s.atom_count(), 1522u);
  const Atom& a0 = s.atoms[0];
  EXPECT_EQ(a0.name, "N");
  EXPECT_EQ(a0.residue, "SER");
  EXPECT_EQ(a0.residue_number, 1);
  EXPECT_EQ(a0.chain, "A");
  EXPECT_EQ(a0.element, "N");
  EXPECT_NEAR(s.models[0][0][0], -20.682, 1e-9);
  EXPECT_NEAR(s.models[0][0][2], -23.705, 1e-9);
  // Centroid of model 7, reference computed with awk over columns 31-54.
  Vec3 c = centroid(s.models[6]);
  EXPECT_NEAR(c[0], 0.2535, 5e-5);
  EXPECT_NEAR(c[1], 0.7338, 5e-5);
  EXPECT_NEAR(c[2], 0.2320, 5e-5);
  std::size_t h = 0;
  for (const auto& a : s.atoms) h += a.element == "H";
  EXPECT_EQ(h, 763u);  // awk over columns 77-78 of model 1: 763 H, 477 C, 148 O, 132 N, 2 S
}

TEST(ReadPdb, ModelSelection) {
  auto all = read_pdb(sample("2kpu/2kpu.pdb"));
  auto m7 = read_pdb(sample("2kpu/2kpu.pdb"), {.model = 7});
  ASSERT_EQ(m7.model_count(), 1u);
  ASSERT_EQ(m7.atom_count(), all.atom_count());
  for (std::size_t i = 0; i < all.atom_count(); ++i)
    for (int k = 0; k < 3; ++k) ASSERT_EQ(m7.models[0][i][k], all.models[6][i][k]);
  expect_parse_error([] { (void)read_pdb(sample("2kpu/2kpu.pdb"), {.model = 21}); },
                     {"2kpu.pdb", "model 21 requested", "1, 2, 3"});
}

// QA: CR-only line endings read as one line (1 atom of 40); UTF-16 text said "no atoms".
TEST(ReadPdb, CrOnlyLineEndingsAndUtf16) {
  std::string text = atom_line("ATOM", 1, " N  ", ' ', "ALA", 'A', 1, 0, 0, 0) +
                     atom_line("ATOM", 2, " CA ", ' ', "ALA", 'A', 1, 1.5, 0, 0) +
                     atom_line("ATOM", 3, " C  ", ' ', "ALA", 'A', 1, 2, 1.2, 0);
  std::string cr = text;
  for (char& c : cr)
    if (c == '\n') c = '\r';
  const auto a = parse_pdb(text, "lf.pdb"), b = parse_pdb(cr, "cr.pdb");
  ASSERT_EQ(b.atom_count(), 3u);
  EXPECT_EQ(b.atoms[2].name, a.atoms[2].name);
  EXPECT_EQ(b.models[0][2], a.models[0][2]);
  std::string utf16 = "\xFF\xFE";
  for (char c : text.substr(0, 80)) utf16 += std::string{c, '\0'};
  expect_parse_error([&] { (void)parse_pdb(utf16, "w.pdb"); }, {"w.pdb:1:", "UTF-16", "UTF-8"});
}

// QA: a repeated atom record was kept silently (identical ones become zero-distance pairs).
TEST(ReadPdb, DuplicateAtomRecordsAreWarnedAbout) {
  const std::string a = atom_line("ATOM", 1, " N  ", ' ', "ALA", 'A', 1, 0, 0, 0),
                    b = atom_line("ATOM", 2, " CA ", ' ', "ALA", 'A', 1, 1.5, 0, 0);
  std::vector<std::string> warnings;
  const auto s = parse_pdb(a + b + a, "dup.pdb", {}, &warnings);
  EXPECT_EQ(s.atom_count(), 3u);
  ASSERT_EQ(warnings.size(), 1u);
  EXPECT_NE(warnings[0].find("1 duplicate atom record(s)"), std::string::npos) << warnings[0];
  EXPECT_NE(warnings[0].find("line 3 repeats"), std::string::npos) << warnings[0];
  EXPECT_NE(warnings[0].find("of line 1"), std::string::npos) << warnings[0];
  warnings.clear();
  (void)parse_pdb(a + b, "ok.pdb", {}, &warnings);
  EXPECT_TRUE(warnings.empty());
  (void)read_pdb(sample("2kpu/2kpu.pdb"), {}, &warnings);  // 20 models of one atom list: no false alarm
  for (const auto& w : warnings) EXPECT_EQ(w.find("duplicate"), std::string::npos) << w;
}

TEST(ReadPdb, ElementsFromColumnsAndNames) {
  std::string text = atom_line("ATOM", 1, " CA ", ' ', "ALA", 'A', 1, 0, 0, 0) +   // no element columns
                     atom_line("ATOM", 2, "HG11", ' ', "VAL", 'A', 2, 1, 0, 0) +   // 4-letter H name
                     atom_line("HETATM", 3, "ZN  ", ' ', "ZN", 'A', 3, 2, 0, 0) +  // ion, name in col 13
                     atom_line("HETATM", 4, "CA  ", ' ', "CA", 'A', 4, 3, 0, 0, 1.0, "CA") +
                     atom_line("ATOM", 5, "1HB ", ' ', "ALA", 'A', 1, 4, 0, 0);
  auto s = parse_pdb(text, "elements.pdb");
  ASSERT_EQ(s.atom_count(), 5u);
  EXPECT_EQ(s.atoms[0].element, "C");
  EXPECT_EQ(s.atoms[1].element, "H");
  EXPECT_EQ(s.atoms[2].element, "ZN");
  EXPECT_EQ(s.atoms[3].element, "CA");
  EXPECT_EQ(s.atoms[4].element, "H");
  EXPECT_TRUE(s.atoms[2].hetero);
}

TEST(ReadPdb, AltlocKeepsFirstPerResidue) {
  std::string text = atom_line("ATOM", 1, " N  ", ' ', "SER", 'A', 5, 0, 0, 0) +
                     atom_line("ATOM", 2, " CA ", 'B', "SER", 'A', 5, 1, 0, 0, 0.6) +  // B comes first: kept
                     atom_line("ATOM", 3, " CA ", 'A', "SER", 'A', 5, 9, 0, 0, 0.4) +
                     atom_line("ATOM", 4, " OG ", 'B', "SER", 'A', 5, 2, 0, 0, 0.6) +
                     atom_line("ATOM", 5, " OG ", 'A', "SER", 'A', 5, 9, 9, 0, 0.4) +
                     atom_line("ATOM", 6, " N  ", 'A', "GLY", 'A', 6, 3, 0, 0, 0.5) +  // new residue: A first
                     atom_line("ATOM", 7, " N  ", 'B', "GLY", 'A', 6, 8, 0, 0, 0.5);
  std::vector<std::string> warnings;
  auto s = parse_pdb(text, "alt.pdb", {}, &warnings);
  ASSERT_EQ(s.atom_count(), 4u);
  EXPECT_EQ(s.atoms[1].name, "CA");
  EXPECT_EQ(s.models[0][1][0], 1.0);
  EXPECT_EQ(s.models[0][2][0], 2.0);
  EXPECT_EQ(s.models[0][3][0], 3.0);
  ASSERT_EQ(warnings.size(), 1u);
  EXPECT_NE(warnings[0].find("3 atom records"), std::string::npos) << warnings[0];
}

TEST(ReadPdb, BadCoordinateNamesLineAndColumns) {
  std::string text = atom_line("ATOM", 1, " N  ", ' ', "SER", 'A', 5, 0, 0, 0) +
                     atom_line("ATOM", 2, " CA ", ' ', "SER", 'A', 5, 1, 0, 0);
  text.replace(text.find('\n') + 1 + 38, 8, "  1.2a34");  // y of line 2
  expect_parse_error([&] { (void)parse_pdb(text, "bad.pdb"); }, {"bad.pdb:2:", "bad y coordinate", "1.2a34", "39-46"});
  expect_parse_error([] { (void)parse_pdb("ATOM      1  N   SER A   5       1.000   2.000\n", "short.pdb"); },
                     {"short.pdb:1:", "columns 31-54"});
  expect_parse_error([] { (void)parse_pdb("REMARK nothing\n", "empty.pdb"); }, {"empty.pdb", "no atoms"});
  std::string bad_res = atom_line("ATOM", 1, " N  ", ' ', "SER", 'A', 5, 0, 0, 0);
  bad_res.replace(22, 4, "  x5");
  expect_parse_error([&] { (void)parse_pdb(bad_res, "res.pdb"); }, {"res.pdb:1:", "residue number", "23-26"});
}

TEST(ReadPdb, InconsistentModelsAreErrors) {
  std::string m1 = "MODEL        1\n" + atom_line("ATOM", 1, " N  ", ' ', "SER", 'A', 1, 0, 0, 0) +
                   atom_line("ATOM", 2, " CA ", ' ', "SER", 'A', 1, 1, 0, 0) + "ENDMDL\n";
  std::string m2 = "MODEL        2\n" + atom_line("ATOM", 1, " N  ", ' ', "SER", 'A', 1, 0, 0, 0) +
                   atom_line("ATOM", 2, " CB ", ' ', "SER", 'A', 1, 1, 0, 0) + "ENDMDL\n";
  expect_parse_error([&] { (void)parse_pdb(m1 + m2, "ens.pdb"); }, {"ens.pdb:7:", "model 2 atom 2", "'CB'", "'CA'"});
  std::string m3 = "MODEL        2\n" + atom_line("ATOM", 1, " N  ", ' ', "SER", 'A', 1, 0, 0, 0) + "ENDMDL\n";
  expect_parse_error([&] { (void)parse_pdb(m1 + m3, "ens.pdb"); }, {"ens.pdb:5:", "model 2 has 1 atoms", "has 2"});
  expect_parse_error([&] { (void)parse_pdb("MODEL 1\nMODEL 2\n", "nest.pdb"); }, {"nest.pdb:2:", "missing ENDMDL"});
  expect_parse_error(
      [&] { (void)parse_pdb(m1 + atom_line("ATOM", 3, " C  ", ' ', "SER", 'A', 1, 0, 0, 0), "out.pdb"); },
      {"out.pdb:5:", "outside MODEL"});
  std::string m2ok = m1;
  m2ok[m2ok.find("1\n")] = '2';  // (not replace(): GCC 12's -Wrestrict false positive)
  auto ok = parse_pdb(m1 + m2ok, "ok.pdb");
  EXPECT_EQ(ok.model_count(), 2u);
}

TEST(ReadPdb, HetatmConectAndDegenerateCoordinates) {
  auto s = read_pdb(sample("molecules/biotite_hetatm.pdb"));
  ASSERT_EQ(s.atom_count(), 5u);
  EXPECT_TRUE(s.atoms[0].hetero);
  EXPECT_EQ(s.atoms[0].residue, "LIG");
  EXPECT_EQ(s.atoms[0].chain, "B");
  const std::vector<std::array<std::size_t, 2>> want = {{0, 1}, {1, 2}, {2, 3}, {3, 4}};
  EXPECT_EQ(s.bonds, want);
}

TEST(ReadPdb, ProtonatedBptiMatchesRdkit) {
  auto s = read_pdb(sample("molecules/bpti_allatom_openmm.pdb"));
  ASSERT_EQ(s.atom_count(), 892u);                                  // RDKit MolFromPDBFile(removeHs=False): 892 atoms
  EXPECT_NEAR(centroid(s.models[0])[0], 30.796121076233188, 1e-9);  // RDKit mean x
  EXPECT_EQ(s.bonds.size(), 3u);                                    // 3 disulfides (6 CONECT lines, each bond twice)
  std::map<std::string, int> el;
  for (const auto& a : s.atoms) ++el[a.element];
  EXPECT_EQ(el.size(), 5u);  // C H N O S, as RDKit
  // awk over columns 77-78: N 84, S 7 (6 Cys + 1 Met), C 284, H 438, O 79
  EXPECT_EQ(el["S"], 7);
  EXPECT_EQ(el["H"], 438);
  EXPECT_EQ(el["C"], 284);
}

TEST(ReadMmcif, XplorLowest2kpu) {
  auto s = read_mmcif(sample("2kpu/2kpu_Xplor-NIH_lowest.cif"));
  ASSERT_EQ(s.model_count(), 1u);
  ASSERT_EQ(s.atom_count(), 1522u);
  EXPECT_EQ(s.atoms[1].name, "HT1");  // label_atom_id (no auth_atom_id column)
  EXPECT_EQ(s.atoms[1].element, "H");
  EXPECT_EQ(s.atoms[1].residue_number, 1);  // auth_seq_id (label_seq_id is '.')
  EXPECT_EQ(s.atoms[1].chain, "A");
  Vec3 c = centroid(s.models[0]);  // awk over the Cartn_x/y/z columns
  EXPECT_NEAR(c[0], -0.1127, 5e-5);
  EXPECT_NEAR(c[1], -0.5515, 5e-5);
  EXPECT_NEAR(c[2], 0.3566, 5e-5);
}

TEST(ReadMmcif, AuthNumberingByDefault) {
  auto s = read_mmcif(sample("molecules/biotite_res_ids.cif"));
  ASSERT_EQ(s.atom_count(), 251u);
  EXPECT_EQ(s.atoms[0].residue_number, 0);  // auth_seq_id 0 (label_seq_id 5)
  EXPECT_EQ(s.atoms[0].chain, "A");
  const Atom& last = s.atoms.back();  // NAG: auth_asym_id E (label_asym_id O), auth_seq_id 406
  EXPECT_EQ(last.residue, "NAG");
  EXPECT_EQ(last.chain, "E");
  EXPECT_EQ(last.residue_number, 406);
  EXPECT_EQ(last.name, "O7");
  EXPECT_TRUE(last.hetero);
}

TEST(ReadMmcif, AltlocMicroheterogeneity) {
  std::vector<std::string> warnings;
  auto s = read_mmcif(sample("molecules/biotite_altloc.cif"), {}, &warnings);
  // Residue 22: altloc A (SER) is met first and kept; SER B and PRO C are dropped.
  std::size_t ser = 0, pro = 0;
  for (const auto& a : s.atoms) {
    if (a.residue_number != 22) continue;
    ser += a.residue == "SER";
    pro += a.residue == "PRO";
  }
  EXPECT_EQ(ser, 10u);
  EXPECT_EQ(pro, 0u);
  ASSERT_FALSE(warnings.empty());
}

TEST(ReadMmcif, QuotedNamesAndErrors) {
  const std::string cif = R"(data_x
loop_
_atom_site.group_PDB
_atom_site.id
_atom_site.type_symbol
_atom_site.auth_atom_id
_atom_site.auth_comp_id
_atom_site.auth_asym_id
_atom_site.auth_seq_id
_atom_site.Cartn_x
_atom_site.Cartn_y
_atom_site.Cartn_z
_atom_site.pdbx_PDB_model_num
HETATM 1 C "C1'" DA B 7 1.0 2.0 3.0 1
HETATM 2 O 'O5"' DA B 7 1.5 2.0 3.0 1
HETATM 1 C "C1'" DA B 7 1.1 2.1 3.1 2
HETATM 2 O 'O5"' DA B 7 1.6 2.1 3.1 2
)";
  auto s = parse_mmcif(cif, "q.cif");
  ASSERT_EQ(s.atom_count(), 2u);
  ASSERT_EQ(s.model_count(), 2u);
  EXPECT_EQ(s.atoms[0].name, "C1'");
  EXPECT_EQ(s.atoms[1].name, "O5\"");
  EXPECT_EQ(s.models[1][1][0], 1.6);
  auto m2 = parse_mmcif(cif, "q.cif", {.model = 2});
  EXPECT_EQ(m2.models.size(), 1u);
  EXPECT_EQ(m2.models[0][0][0], 1.1);
  std::string bad = cif;
  bad.replace(bad.find("1.5"), 3, "1x5");
  expect_parse_error([&] { (void)parse_mmcif(bad, "q.cif"); }, {"q.cif:15:", "Cartn_x", "1x5"});
  std::string short_row = cif.substr(0, cif.rfind(" 2\n")) + "\n";
  expect_parse_error([&] { (void)parse_mmcif(short_row, "q.cif"); }, {"q.cif:17:", "10 of 11"});
  expect_parse_error([&] { (void)parse_mmcif("data_x\n_cell.a 1\n", "n.cif"); }, {"n.cif", "no _atom_site loop"});
}

namespace {
void expect_same(const Structure& a, const Structure& b, bool segments) {
  ASSERT_EQ(a.atom_count(), b.atom_count());
  ASSERT_EQ(a.model_count(), b.model_count());
  for (std::size_t i = 0; i < a.atom_count(); ++i) {
    const Atom &x = a.atoms[i], &y = b.atoms[i];
    ASSERT_EQ(x.name, y.name) << i;
    ASSERT_EQ(x.residue, y.residue) << i;
    ASSERT_EQ(x.residue_number, y.residue_number) << i;
    ASSERT_EQ(x.chain, y.chain) << i;
    ASSERT_EQ(x.element, y.element) << i;
    ASSERT_EQ(x.insertion, y.insertion) << i;
    ASSERT_EQ(x.hetero, y.hetero) << i;
    if (segments) {
      ASSERT_EQ(x.segment, y.segment) << i;
    }
  }
  for (std::size_t m = 0; m < a.model_count(); ++m)
    for (std::size_t i = 0; i < a.atom_count(); ++i)
      for (int k = 0; k < 3; ++k) ASSERT_NEAR(a.models[m][i][k], b.models[m][i][k], 1e-3) << m << " " << i;
}
}  // namespace

TEST(WriteStructure, RoundTripPdbAndCif) {
  auto s = read_pdb(sample("2kpu/2kpu.pdb"));
  s.models.resize(3);
  s.bonds = {{0, 1}, {1, 2}};
  std::ostringstream pdb, cif;
  write_pdb(pdb, s);
  auto back = parse_pdb(pdb.str(), "rt.pdb");
  expect_same(s, back, true);
  EXPECT_EQ(back.bonds, s.bonds);
  write_mmcif(cif, s);
  expect_same(s, parse_mmcif(cif.str(), "rt.cif"), false);
  // Ions and ligands keep their element and HETATM flag.
  auto h = read_pdb(sample("molecules/biotite_hetatm.pdb"));
  std::ostringstream hp;
  write_pdb(hp, h);
  expect_same(h, parse_pdb(hp.str(), "h.pdb"), true);
}

// Regression (break-test): TITLE was cut every 70 characters, so a word split across two lines
// came back as two words and the title changed with every write. Now it wraps between words and a
// second write is the same file.
TEST(WriteStructure, PdbTitleIsStableOverWrites) {
  auto s = read_pdb(sample("2kpu/2kpu.pdb"));
  s.models.resize(1);
  s.title =
      "SOLUTION  NMR STRUCTURE OF THE PROTEIN YP_001302112.1 FROM PARABACTEROIDES DISTASONIS, "
      "NORTHEAST STRUCTURAL GENOMICS CONSORTIUM TARGET PDR16, AND A VERY LONG LAST WORD: " +
      std::string(150, 'X');
  std::ostringstream first;
  write_pdb(first, s);
  const auto back = parse_pdb(first.str(), "t1.pdb");
  std::ostringstream second;
  write_pdb(second, back);
  EXPECT_EQ(first.str(), second.str());
  // runs of blanks become one; the words are kept
  EXPECT_EQ(back.title.substr(0, 40), "SOLUTION NMR STRUCTURE OF THE PROTEIN YP");
  EXPECT_NE(back.title.find("TARGET PDR16, AND A VERY LONG LAST WORD: XXX"), std::string::npos) << back.title;
  // PDB format 3.3: continuations numbered in columns 9-10, a blank in 11, no line beyond 80 columns
  std::istringstream lines(first.str());
  int titles = 0;
  for (std::string l; std::getline(lines, l);) {
    if (l.rfind("TITLE", 0) != 0) continue;
    ++titles;
    EXPECT_LE(l.size(), 80u) << l;
    if (titles > 1) {
      std::string number = std::to_string(titles);
      if (number.size() < 2) number.insert(0, 1, ' ');
      EXPECT_EQ(l.substr(8, 2), number) << l;
      EXPECT_EQ(l[10], ' ') << l;
    }
  }
  EXPECT_EQ(titles, 6);  // three of them the 150-character word, cut
}

// Regression (break-test): the mmCIF writer put the title into the block name, blanks turned
// into '_', and that came back as the title. It is now _struct.title, whatever its quotes.
TEST(WriteStructure, MmcifKeepsTheTitle) {
  auto s = read_pdb(sample("2kpu/2kpu.pdb"));
  s.models.resize(1);
  for (const std::string& title :
       {std::string("SOLUTION NMR STRUCTURE OF 2KPU"), std::string("it's a \"title\"' x"), std::string("a \" b' c")}) {
    s.title = title;
    std::ostringstream cif;
    write_mmcif(cif, s, "my model");
    EXPECT_EQ(cif.str().rfind("data_my_model\n", 0), 0u) << cif.str().substr(0, 40);
    EXPECT_EQ(parse_mmcif(cif.str(), "t.cif").title, title);
  }
  s.title.clear();  // no title: the block's name, as before
  std::ostringstream cif;
  write_mmcif(cif, s, "m1");
  EXPECT_EQ(parse_mmcif(cif.str(), "t.cif").title, "m1");
}

TEST(WriteStructure, VtpHasPointsElementsAndBonds) {
  auto s = read_pdb(sample("molecules/bpti_allatom_openmm.pdb"));
  std::ostringstream out;
  write_vtp(out, s);
  const std::string t = out.str();
  EXPECT_NE(t.find("NumberOfPoints=\"892\""), std::string::npos);
  EXPECT_NE(t.find("Name=\"element\""), std::string::npos);
  // The file has CONECT bonds only (3 disulfides), so they are written as they are.
  EXPECT_NE(t.find("NumberOfLines=\"3\""), std::string::npos);
  // Without bonds they are perceived: a protein has about as many bonds as atoms.
  s.bonds.clear();
  auto perceived = bonds_by_distance(s);
  EXPECT_GT(perceived.size(), 880u);
  EXPECT_LT(perceived.size(), 920u);
}

TEST(StructureNodes, ReadAndWriteThroughNodes) {
  // Node adapters with a fake context (no executor).
  gemflow::Registry reg;
  gemflow::PluginRegistrar r(reg, "io-test");
  gemflow::io::register_structure_nodes(r);
  auto reader = gemflow::testing::make_node(reg, "io.read_structure");
  reader->set_param("path", std::string(sample("2kpu/2kpu.pdb")));
  reader->set_param("model", std::int64_t{2});
  gemflow::testing::RecordingContext ctx;
  reader->execute(ctx);
  auto s = reader->output("structure").as<Structure>();
  ASSERT_EQ(s->model_count(), 1u);
  EXPECT_EQ(ctx.input_files().size(), 1u);

  auto out = std::filesystem::temp_directory_path() / "gemflow_io_node_rt.cif";
  auto writer = gemflow::testing::make_node(reg, "io.write_structure");
  writer->set_input("structure", gemflow::Value::of<Structure>(s));
  writer->set_param("path", out.string());
  writer->execute(ctx);
  expect_same(*s, read_mmcif(out.string()), false);

  auto bad = gemflow::testing::make_node(reg, "io.read_structure");
  bad->set_param(
      "path", write_temp("bad.pdb", atom_line("ATOM", 1, " N  ", ' ', "SER", 'A', 5, 0, 0, 0).replace(31, 4, "abcd")));
  try {
    bad->execute(ctx);
    ADD_FAILURE() << "no error";
  } catch (const gemflow::InputError& e) {
    EXPECT_EQ(e.where().line, 1);
    EXPECT_NE(std::string(e.what()).find("bad x coordinate"), std::string::npos) << e.what();
  }
}

// chain_offsets renumbers a chain's residues (a deposited dimer whose chain B is numbered apart
// from the molecule built from the sequence); a chain the file lacks and malformed entries are
// errors naming the parameter.
TEST(StructureNodes, ChainOffsetsRenumberResidues) {
  gemflow::Registry reg;
  gemflow::PluginRegistrar r(reg, "io-test");
  gemflow::io::register_structure_nodes(r);
  gemflow::testing::RecordingContext ctx;
  auto read = [&](const std::string& offsets) {
    auto reader = gemflow::testing::make_node(reg, "io.read_structure");
    reader->set_param("path", std::string(sample("2kpu/2kpu.pdb")));
    reader->set_param("model", std::int64_t{1});
    reader->set_param("chain_offsets", offsets);
    reader->execute(ctx);
    return reader->output("structure").as<Structure>();
  };
  const auto plain = read("");
  const auto moved = read("A:-71");
  ASSERT_EQ(plain->atoms.size(), moved->atoms.size());
  for (std::size_t i = 0; i < plain->atoms.size(); ++i) {
    ASSERT_EQ(moved->atoms[i].residue_number, plain->atoms[i].residue_number - 71) << i;
    ASSERT_EQ(moved->atoms[i].name, plain->atoms[i].name);
  }
  EXPECT_EQ(moved->models[0][0], plain->models[0][0]);
  auto error = [&](const std::string& offsets) {
    try {
      (void)read(offsets);
    } catch (const gemflow::InputError& e) {
      return std::string(e.what());
    }
    return std::string("(no error)");
  };
  EXPECT_NE(error("B:-71").find("parameter 'chain_offsets': chain 'B' is not in 2kpu.pdb (chains: A)"),
            std::string::npos)
      << error("B:-71");
  EXPECT_NE(error("A-71").find("parameter 'chain_offsets': 'A-71' is not CHAIN:OFFSET"), std::string::npos);
  EXPECT_NE(error("A:x").find("'A:x' is not CHAIN:OFFSET"), std::string::npos);
  EXPECT_NE(error("A:1, A:2").find("chain 'A' is given twice"), std::string::npos);
}
