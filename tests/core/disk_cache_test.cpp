// The lasting result cache: every SDK type's binary encoding round-trips; entries are verified,
// pruned least-recently-used, and never fail a run; the executor takes a second identical run
// from the cache, explains why a node ran, and journals finished nodes so a dead run is told of.
#include <sys/stat.h>
#include <unistd.h>
#include <fstream>
#include <thread>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "gemflow/disk_cache.hpp"
#include "gemflow/executor.hpp"
#include "gemflow/serialize.hpp"
#include "gemflow/types.hpp"
#include "test_support.hpp"

namespace fs = std::filesystem;
using ::testing::HasSubstr;

namespace gemflow {
namespace {

using test::all;
using test::TempDir;

template <class T>
T round_trip(const T& v) {
  BinaryWriter w;
  Serial<T>::write(w, v);
  BinaryReader r(w.bytes());
  T back = Serial<T>::read(r);
  r.finish("the value");
  return back;
}

TEST(Serial, EveryStandardTypeRoundTrips) {
  const MatrixF64 m(2, 3, std::vector<double>{1, 2, 3, 4, 5, -6.5});
  EXPECT_EQ(round_trip(m).span().size(), 6u);
  EXPECT_EQ(round_trip(m)(1, 2), -6.5);
  EXPECT_EQ(round_trip(MatrixF32(1, 2, 0.25f))(0, 1), 0.25f);

  DistanceBounds b;
  b.lower = MatrixF64(2, 2, 1.0);
  b.upper = MatrixF64(2, 2, 4.0);
  b.labels = {"A:1:CA", "A:2:N"};
  b.atom_index = {3, 7};
  b.restraint = Matrix<int>(2, 2, -1);
  const auto b2 = round_trip(b);
  EXPECT_EQ(b2.upper(1, 0), 4.0);
  EXPECT_EQ(b2.labels, b.labels);
  EXPECT_EQ(b2.atom_index, b.atom_index);
  EXPECT_EQ(b2.restraint(0, 1), -1);

  Structure s;
  s.title = "t";
  Atom a;
  a.name = "CA";
  a.element = "C";
  a.residue = "ALA";
  a.residue_number = 5;
  a.insertion = "B";
  a.chain = "A";
  a.segment = "S1";
  a.hetero = true;
  a.serial = 9;
  a.occupancy = 0.5;
  a.b_factor = 12.5;
  s.atoms = {a};
  s.models = {{{1.0, 2.0, 3.0}}, {{4.0, 5.0, 6.0}}};
  s.bonds = {{0, 0}};
  const auto s2 = round_trip(s);
  ASSERT_EQ(s2.atoms.size(), 1u);
  EXPECT_EQ(s2.atoms[0].segment, "S1");
  EXPECT_TRUE(s2.atoms[0].hetero);
  EXPECT_EQ(s2.atoms[0].b_factor, 12.5);
  EXPECT_EQ(s2.models[1][0][2], 6.0);

  RestraintSet rs;
  rs.source = "x.tbl";
  rs.format = "xplor";
  DistanceRestraint d;
  d.id = 4;
  d.origin = "x.tbl:3";
  d.alternatives.push_back({{"A", 1, "ALA", "HA", 3}, {"A", 2, "GLY", "HA#", 3}, {1}, {2, 3}});
  d.upper = 5.5;
  d.pseudo_correction = 1.0;
  rs.restraints = {d};
  DihedralRestraint phi;
  phi.id = 7;
  phi.name = "PHI";
  phi.atoms[1] = {"A", 5, "LEU", "N", 9};
  phi.atom_index = {10, 11, 12, DihedralRestraint::unresolved};
  phi.lower = 160.0;
  phi.upper = -140.0;
  rs.dihedrals = {phi};
  rs.warnings = {"w"};
  rs.skipped = 2;
  const auto rs2 = round_trip(rs);
  EXPECT_EQ(rs2.restraints[0].alternatives[0].b.atom, "HA#");
  EXPECT_EQ(rs2.restraints[0].alternatives[0].atoms_b, (std::vector<std::size_t>{2, 3}));
  EXPECT_EQ(rs2.restraints[0].upper, 5.5);
  EXPECT_EQ(rs2.skipped, 2u);
  ASSERT_EQ(rs2.dihedrals.size(), 1u);
  EXPECT_EQ(rs2.dihedrals[0].name, "PHI");
  EXPECT_EQ(rs2.dihedrals[0].atoms[1].residue, "LEU");
  EXPECT_EQ(rs2.dihedrals[0].atom_index[3], DihedralRestraint::unresolved);
  EXPECT_EQ(rs2.dihedrals[0].upper, -140.0);

  Table t;
  t.columns = {"a", "b", "c"};
  t.rows = {{1.5, std::int64_t{-3}, std::string("x")}};
  const auto t2 = round_trip(t);
  EXPECT_EQ(std::get<std::int64_t>(t2.rows[0][1]), -3);
  EXPECT_EQ(std::get<std::string>(t2.rows[0][2]), "x");

  MoleculeSet ms;
  ms.molecules.push_back({"m", {{"C", {1, 2, 3}, -1}}, {{0, 0, 2}}, "f.sdf:1"});
  const auto ms2 = round_trip(ms);
  EXPECT_EQ(ms2.molecules[0].atoms[0].charge, -1);
  EXPECT_EQ(ms2.molecules[0].bonds[0].order, 2);

  Image im;
  im.width = 2;
  im.height = 1;
  im.f32 = {0.1f, 0.2f, 0.3f, 1.0f, 0, 0, 0, 0};
  EXPECT_EQ(round_trip(im).f32, im.f32);

  Signal sig;
  sig.samples = MatrixF64(3, 1, std::vector<double>{1, NAN, 3});
  sig.sample_rate = 2.0;
  sig.channels = {"depth"};
  sig.units = {"m"};
  sig.valid = {1, 0, 1};
  const auto sig2 = round_trip(sig);
  EXPECT_TRUE(std::isnan(sig2.samples(1, 0)));
  EXPECT_EQ(sig2.valid, sig.valid);
  EXPECT_EQ(sig2.sample_rate, 2.0);

  Scores sc;
  sc.scores = MatrixF64(2, 2, 0.5);
  sc.labels = {"low", "high"};
  EXPECT_EQ(round_trip(sc).labels, sc.labels);

  Segmentation seg;
  seg.length = 10;
  seg.labels = {"a", "b"};
  seg.segments = {{0, 4, 0, 1.5}, {4, 10, 1, 2.5}};
  EXPECT_EQ(round_trip(seg).segments, seg.segments);

  TriMesh mesh;
  mesh.vertices = {{0, 0, 0}, {1, 0, 0}, {0, 1, 0}};
  mesh.faces = {{0, 1, 2}};
  mesh.boundary = {{0, 1, 2}};
  EXPECT_EQ(round_trip(mesh).boundary, mesh.boundary);
  EXPECT_TRUE(round_trip(mesh).uv.empty());
  mesh.uv = {{0, 0}, {1, 0}, {0.5, 1}};
  EXPECT_EQ(round_trip(mesh).uv, mesh.uv);
  EXPECT_EQ(round_trip(mesh).vertices, mesh.vertices);

  CirclePacking p;
  p.geometry = CirclePacking::Geometry::Hyperbolic;
  p.radii = {1, 2};
  p.centres = {{0, 0}, {3, 0}};
  p.boundary = {1, 0};
  const auto p2 = round_trip(p);
  EXPECT_EQ(p2.geometry, CirclePacking::Geometry::Hyperbolic);
  EXPECT_EQ(p2.centres[1][0], 3.0);
}

TEST(Serial, TruncatedOrInflatedDataIsRefusedWithoutAllocating) {
  BinaryWriter w;
  Serial<MatrixF64>::write(w, MatrixF64(100, 100, 1.0));
  const std::string bytes = w.bytes();
  for (std::size_t cut : {std::size_t{0}, std::size_t{7}, std::size_t{30}, bytes.size() - 1}) {
    BinaryReader r(std::string_view(bytes).substr(0, cut));
    EXPECT_THROW((void)Serial<MatrixF64>::read(r), SerialError) << cut;
  }
  // A count of 2⁶⁰ strings in 16 bytes is refused before any allocation.
  BinaryWriter lie;
  lie.size(std::size_t{1} << 60);
  lie.size(0);
  BinaryReader r(lie.bytes());
  EXPECT_THROW((void)r.strings("labels"), SerialError);
}

std::map<std::string, Value> outputs_of(double v) { return {{"value", Value::make(MatrixF64(1, 1, v))}}; }

TEST(DiskCache, StoresFindsAndDetectsCorruption) {
  TempDir dir;
  Registry reg;
  DiskCache cache(dir / "c");
  std::string why;
  EXPECT_FALSE(cache.find("0123456789abcdef", reg, &why));
  EXPECT_EQ(why, "not in the cache");
  ASSERT_TRUE(cache.store("0123456789abcdef", outputs_of(2.5), reg, &why)) << why;
  auto hit = cache.find("0123456789abcdef", reg, &why);
  ASSERT_TRUE(hit) << why;
  EXPECT_EQ((*hit->at("value").as<MatrixF64>())(0, 0), 2.5);
  EXPECT_EQ(cache.stats().entries, 1u);

  // Flip one byte of the body: the hash catches it and the entry goes.
  const fs::path file = dir / "c" / "entries" / "01" / "0123456789abcdef.entry";
  ASSERT_TRUE(fs::exists(file));
  {
    std::fstream f(file, std::ios::in | std::ios::out | std::ios::binary);
    f.seekp(-3, std::ios::end);
    f.put('\x7f');
  }
  EXPECT_FALSE(cache.find("0123456789abcdef", reg, &why));
  EXPECT_THAT(why, HasSubstr("corrupt cache entry (removed): its hash does not match"));
  EXPECT_FALSE(fs::exists(file));

  // Truncated to a few bytes.
  ASSERT_TRUE(cache.store("0123456789abcdef", outputs_of(2.5), reg));
  fs::resize_file(file, 10);
  EXPECT_FALSE(cache.find("0123456789abcdef", reg, &why));
  EXPECT_THAT(why, HasSubstr("corrupt cache entry (removed)"));
}

struct Opaque {
  int x = 0;
};

}  // namespace
template <>
struct DataType<Opaque> {
  static constexpr std::string_view name = "Opaque";
  static constexpr std::string_view doc = "a type without a binary encoding";
  static std::string summary(const Opaque&) { return "opaque"; }
};
namespace {

TEST(DiskCache, ATypeWithoutEncodingIsNotStored) {
  TempDir dir;
  Registry reg;
  reg.add_type<Opaque>("test");
  DiskCache cache(dir / "c");
  std::string why;
  EXPECT_FALSE(cache.store("00000000000000aa", {{"o", Value::make(Opaque{})}}, reg, &why));
  EXPECT_EQ(why, "output 'o' is a Opaque, which has no disk encoding");
  EXPECT_EQ(cache.stats().entries, 0u);
}

TEST(DiskCache, PrunesLeastRecentlyUsedFirst) {
  TempDir dir;
  Registry reg;
  DiskCache cache(dir / "c");
  const std::vector<std::string> keys{"aa00000000000001", "bb00000000000002", "cc00000000000003"};
  for (const auto& k : keys) ASSERT_TRUE(cache.store(k, outputs_of(1), reg));
  // Ages: the first written is read last, so the second is the least recently used.
  const auto now = fs::file_time_type::clock::now();
  for (std::size_t i = 0; i < keys.size(); ++i)
    fs::last_write_time(dir / "c" / "entries" / keys[i].substr(0, 2) / (keys[i] + ".entry"),
                        now - std::chrono::hours(10 - i));
  ASSERT_TRUE(cache.find(keys[0], reg));
  const auto one = cache.stats().bytes / 3;
  EXPECT_EQ(cache.prune(2 * one), 1u);
  EXPECT_TRUE(cache.find(keys[0], reg));
  EXPECT_FALSE(cache.find(keys[1], reg));
  EXPECT_TRUE(cache.find(keys[2], reg));
  cache.clear();
  EXPECT_EQ(cache.stats().entries, 0u);
}

TEST(DiskCache, AFolderThatCannotBeWrittenFailsTheStoreNotTheCaller) {
  TempDir dir;
  Registry reg;
  DiskCache cache(dir / "c");
  std::string why;
  // A file where the entry's folder should be (root ignores permissions, so not chmod).
  std::ofstream(dir / "c" / "entries" / "dd") << "x";
  EXPECT_FALSE(cache.store("dd00000000000004", outputs_of(1), reg, &why));
  EXPECT_THAT(why, HasSubstr("cannot create"));
  // And the file being written cannot be renamed into place: nothing is left behind.
  fs::create_directories(dir / "c" / "entries" / "ee" / "ee00000000000005.entry");
  EXPECT_FALSE(cache.store("ee00000000000005", outputs_of(1), reg, &why));
  EXPECT_THAT(why, HasSubstr("cannot write"));
  std::size_t temporaries = 0;
  for (const auto& e : fs::directory_iterator(dir / "c" / "entries" / "ee"))
    temporaries += e.path().filename().string().starts_with(".tmp.");
  EXPECT_EQ(temporaries, 0u);
}

TEST(DiskCache, ExplainsKeyChanges) {
  const std::string a = "type=x.y\nversion=1\nparam trials=4\nparam path=a.tbl\nfile path=1234\ninput bounds=k1:out\n";
  const std::string b = "type=x.y\nversion=2\nparam trials=8\nparam path=a.tbl\nfile path=5678\ninput bounds=k2:out\n";
  EXPECT_EQ(explain_key_change(a, b),
            "the file of parameter path changed; input bounds changed; parameter trials 4 → 8; node version 1 → 2");
  EXPECT_EQ(explain_key_change(a, a), "");
  EXPECT_EQ(explain_key_change("param x=1\n", "param x=1\nparam y=2\n"), "new parameter y = 2");
}

// Two constants and their sum: the cache tests' workflow.
constexpr const char* kTwoPlusThree = R"(gemflow: 1
nodes:
  a: {type: test.constant, params: {value: 2}}
  b: {type: test.constant, params: {value: 3}}
  s: {type: test.add}
links:
  - a.value -> s.a
  - b.value -> s.b
)";

Workflow load_text(const TempDir& dir, const std::string& text) {
  std::ofstream(dir / "w.yaml") << text;
  auto r = load_workflow(dir / "w.yaml", test::testnodes());
  EXPECT_TRUE(r.ok()) << all(r.diagnostics);
  return *r.workflow;
}

TEST(DiskCache, ASecondRunComesFromTheCacheAndAChangeIsExplained) {
  TempDir dir;
  const std::string text = kTwoPlusThree;
  const Workflow wf = load_text(dir, text);
  DiskCache cache(dir / "cache");
  RunOptions o;
  o.out_dir = dir / "out1";
  o.disk_cache = &cache;
  const RunResult r1 = run_workflow(wf, test::testnodes(), o);
  ASSERT_TRUE(r1.ok()) << all(r1.diagnostics);
  EXPECT_EQ(r1.nodes.at("s").state, NodeState::Done);
  EXPECT_THAT(r1.nodes.at("s").why, HasSubstr("first run of this node"));

  // Another output folder: the same computation, every node from the cache.
  o.out_dir = dir / "out2";
  const RunResult r2 = run_workflow(wf, test::testnodes(), o);
  ASSERT_TRUE(r2.ok());
  for (const auto& [id, n] : r2.nodes) {
    EXPECT_EQ(n.state, NodeState::Cached) << id;
    EXPECT_EQ(n.why, "from the cache") << id;
  }
  EXPECT_EQ((*r2.nodes.at("s").outputs.at("sum").as<MatrixF64>())(0, 0), 5.0);

  // One parameter changed: that node and its consumer run, and say why.
  std::string changed = text;
  changed.replace(changed.find("value: 2"), 8, "value: 7");
  const Workflow wf3 = load_text(dir, changed);
  o.out_dir = dir / "out3";
  const RunResult r3 = run_workflow(wf3, test::testnodes(), o);
  ASSERT_TRUE(r3.ok());
  EXPECT_EQ(r3.nodes.at("a").why, "parameter value 2.0 → 7.0");
  EXPECT_EQ(r3.nodes.at("b").state, NodeState::Cached);
  EXPECT_EQ(r3.nodes.at("s").why, "input a changed");
  EXPECT_EQ((*r3.nodes.at("s").outputs.at("sum").as<MatrixF64>())(0, 0), 10.0);
}

// A rebuilt or upgraded plugin whose node versions did not change must not get the old plugin's
// cached results: the key holds the plugin file's content hash.
TEST(DiskCache, AChangedPluginFileRunsItsNodesAgain) {
  TempDir dir;
  const fs::path plugin = dir / "libgemflow_testnodes.so";
  fs::copy_file(fs::path(GEMFLOW_TEST_PLUGIN_DIR) / "testnodes" / "libgemflow_testnodes.so", plugin);
  Registry reg;
  PluginHost host(reg);
  const PluginRecord rec = host.load(plugin);
  ASSERT_TRUE(rec.loaded) << rec.error;
  std::ofstream(dir / "w.yaml") << kTwoPlusThree;
  auto loaded = load_workflow(dir / "w.yaml", reg);
  ASSERT_TRUE(loaded.ok()) << all(loaded.diagnostics);
  DiskCache cache(dir / "cache");
  RunOptions o;
  o.out_dir = dir / "out";
  o.disk_cache = &cache;
  ASSERT_TRUE(run_workflow(*loaded.workflow, reg, o).ok());
  const RunResult again = run_workflow(*loaded.workflow, reg, o);
  EXPECT_EQ(again.nodes.at("s").state, NodeState::Cached);

  std::ofstream(plugin, std::ios::app | std::ios::binary) << "rebuilt";  // other bytes, same node versions
  const RunResult rebuilt = run_workflow(*loaded.workflow, reg, o);
  ASSERT_TRUE(rebuilt.ok()) << all(rebuilt.diagnostics);
  for (const auto& [id, n] : rebuilt.nodes) {
    EXPECT_EQ(n.state, NodeState::Done) << id;
    EXPECT_THAT(n.why, HasSubstr("the node's plugin file changed")) << id;
  }
  EXPECT_EQ((*rebuilt.nodes.at("s").outputs.at("sum").as<MatrixF64>())(0, 0), 5.0);
}

// A file a node finds while running (flame.read's palette table from $FLAM3_PALETTES) is not in
// its parameters, so its content joins the key once the node has told of it: changed bytes run
// the node and everything downstream again instead of serving the old table's result.
TEST(DiskCache, AFileReadAtRunTimeThatChangedRunsTheNodeAndItsConsumersAgain) {
  TempDir dir;
  const fs::path side = dir / "table.txt";
  std::ofstream(side) << "abc";
  const Workflow wf =
      load_text(dir, "gemflow: 1\nnodes:\n  r: {type: test.read_side, params: {file: \"" + side.string() +
                         "\"}}\n  b: {type: test.constant, params: {value: 10}}\n  s: {type: test.add}\n"
                         "links:\n  - r.size -> s.a\n  - b.value -> s.b\n");
  DiskCache cache(dir / "cache");
  RunOptions o;
  o.out_dir = dir / "out";
  o.disk_cache = &cache;
  const auto sum = [](const RunResult& r) { return (*r.nodes.at("s").outputs.at("sum").as<MatrixF64>())(0, 0); };
  const RunResult r1 = run_workflow(wf, test::testnodes(), o);
  ASSERT_TRUE(r1.ok()) << all(r1.diagnostics);
  EXPECT_EQ(sum(r1), 13.0);
  const RunResult r2 = run_workflow(wf, test::testnodes(), o);
  ASSERT_TRUE(r2.ok());
  EXPECT_EQ(r2.nodes.at("r").state, NodeState::Cached);
  EXPECT_EQ(r2.nodes.at("s").state, NodeState::Cached);

  std::ofstream(side) << "abcdefg";  // the same path, other bytes
  const RunResult r3 = run_workflow(wf, test::testnodes(), o);
  ASSERT_TRUE(r3.ok()) << all(r3.diagnostics);
  EXPECT_EQ(r3.nodes.at("r").state, NodeState::Done);
  EXPECT_EQ(r3.nodes.at("r").why, "the file it read, " + side.string() + ", changed");
  EXPECT_EQ(r3.nodes.at("s").state, NodeState::Done);
  EXPECT_EQ(r3.nodes.at("b").state, NodeState::Cached);
  EXPECT_EQ(sum(r3), 17.0);
  // The same bytes again find that result; the first bytes find the first one.
  const RunResult r4 = run_workflow(wf, test::testnodes(), o);
  EXPECT_EQ(r4.nodes.at("s").state, NodeState::Cached);
  EXPECT_EQ(sum(r4), 17.0);
  std::ofstream(side) << "abc";
  const RunResult r5 = run_workflow(wf, test::testnodes(), o);
  EXPECT_EQ(r5.nodes.at("s").state, NodeState::Cached);
  EXPECT_EQ(sum(r5), 13.0);
}

TEST(DiskCache, AJournalLeftByADeadRunIsReportedAndRemovedAfterASuccessfulRun) {
  TempDir dir;
  const Workflow wf = load_text(dir, "gemflow: 1\nnodes:\n  a: {type: test.constant, params: {value: 1}}\n");
  fs::create_directories(dir / "out");
  std::ofstream(dir / "out" / ".gemflow-journal.jsonl")
      << R"({"node":"a","state":"done","key":"k","seconds":1})"
      << "\n"
      << R"({"node":"slow","state":"do)";  // the line being written when it died
  std::vector<std::string> warnings;
  RunOptions o;
  o.out_dir = dir / "out";
  o.on_event = [&](const RunEvent& e) {
    if (e.kind == RunEvent::Kind::Log && e.level == LogLevel::Warning) warnings.push_back(e.message);
  };
  const RunResult r = run_workflow(wf, test::testnodes(), o);
  ASSERT_TRUE(r.ok());
  ASSERT_EQ(warnings.size(), 1u);
  EXPECT_THAT(warnings[0], HasSubstr("stopped before it finished (1 node had finished: a)"));
  EXPECT_FALSE(fs::exists(dir / "out" / ".gemflow-journal.jsonl"));
}

}  // namespace
}  // namespace gemflow
