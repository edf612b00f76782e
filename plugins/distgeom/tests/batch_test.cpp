// Bounds of small molecules (molecule_bounds) and batched triangle smoothing
// (smooth_bounds_batch, distgeom.bounds_from_molecules, distgeom.smooth_batch) on the CPU.
#include <gtest/gtest.h>

#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <set>
#include <type_traits>

#include <gemflow/distgeom/bounds.hpp>
#include <gemflow/distgeom/molecule_bounds.hpp>
#include <gemflow/distgeom/smoothing.hpp>
#include <gemflow/io/errors.hpp>

#include "batch_test_support.hpp"

using namespace gemflow;
using namespace gemflow::distgeom;
using namespace gemflow::distgeom::batch_testing;

namespace {

bool same_bits(std::span<const double> a, std::span<const double> b) {
  return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(double)) == 0;
}

io::MoleculeSet sample_set() {
  io::MoleculeSet s;
  for (const auto& f : sample_molecule_files())
    for (auto& m : io::read_sdf(sample(f)).molecules) s.molecules.push_back(std::move(m));
  return s;
}

std::shared_ptr<const BoundsBatch> bounds_of(const Nodes& nodes, const io::MoleculeSet& set, RecordingContext& ctx) {
  auto n = nodes.make("distgeom.bounds_from_molecules");
  n->set_input("molecules", Value::make(set));
  n->execute(ctx);
  return n->output("bounds").as<BoundsBatch>();
}

double dist(const io::Molecule& m, std::size_t i, std::size_t j) {
  double s = 0;
  for (int c = 0; c < 3; ++c) s += std::pow(m.atoms[i].xyz[c] - m.atoms[j].xyz[c], 2);
  return std::sqrt(s);
}

}  // namespace

// TYR: every 1-2 bound brackets its 3D bond length by exactly ± 0.01 Å, every 1-3 bound the
// 3D distance by ± 0.04 Å; the pair counts equal a brute-force count of the bond graph; the
// conformer itself satisfies every bound (so the bounds are consistent).
TEST(MoleculeBounds, TyrBracketsBondLengthsAndAngles) {
  const io::Molecule m = io::read_sdf(sample("molecules/biotite_TYR.sdf")).molecules.at(0);
  const std::size_t n = m.atoms.size();
  std::vector<std::string> el;
  std::vector<double> xyz;
  std::vector<std::array<std::size_t, 2>> bonds;
  for (const auto& a : m.atoms) el.push_back(a.element), xyz.insert(xyz.end(), a.xyz.begin(), a.xyz.end());
  for (const auto& b : m.bonds) bonds.push_back({b.a, b.b});
  const MoleculeBounds b = molecule_bounds(el, xyz, bonds);
  ASSERT_EQ(b.n, 24u);
  EXPECT_EQ(b.pairs_12, 24u);
  // Brute force: pairs at bond-graph distance exactly 2.
  std::vector<std::vector<int>> adj(n, std::vector<int>(n, 0));
  for (const auto& [i, j] : bonds) adj[i][j] = adj[j][i] = 1;
  std::size_t n13 = 0;
  for (std::size_t i = 0; i < n; ++i)
    for (std::size_t k = i + 1; k < n; ++k) {
      if (adj[i][k]) continue;
      bool common = false;
      for (std::size_t c = 0; c < n; ++c) common = common || (adj[i][c] && adj[c][k]);
      if (!common) continue;
      ++n13;
      const double d = dist(m, i, k);
      EXPECT_NEAR(b.lower[i * n + k], d - 0.04, 1e-12) << i << "," << k;
      EXPECT_NEAR(b.upper[i * n + k], d + 0.04, 1e-12) << i << "," << k;
    }
  EXPECT_EQ(b.pairs_13, n13);
  EXPECT_EQ(n13, 38u);  // RDKit: (Chem.GetDistanceMatrix(TYR) == 2) pairs, i < j
  for (const auto& [i, j] : bonds) {
    const double d = dist(m, i, j);
    EXPECT_LT(b.lower[i * n + j], d);
    EXPECT_GT(b.upper[i * n + j], d);
    EXPECT_NEAR(b.upper[i * n + j] - b.lower[i * n + j], 0.02, 1e-12);
    EXPECT_NEAR(b.lower[i * n + j], d - 0.01, 1e-12);
  }
  // The carboxyl C=O (atoms 3, 4): RDKit conformer distance 1.2069917149674225 Å.
  EXPECT_NEAR(dist(m, 2, 3), 1.2069917149674225, 1e-12);
  EXPECT_NEAR(b.upper[2 * n + 3], 1.2069917149674225 + 0.01, 1e-12);
  for (std::size_t i = 0; i < n; ++i)
    for (std::size_t j = 0; j < n; ++j) {
      if (i == j) continue;
      EXPECT_LE(b.lower[i * n + j], dist(m, i, j) + 1e-12) << i << "," << j;
      EXPECT_GE(b.upper[i * n + j], dist(m, i, j) - 1e-12) << i << "," << j;
      EXPECT_EQ(b.lower[i * n + j], b.lower[j * n + i]);
    }
  // Other pairs: vdW floor 0.7 × (1.70 + 1.20) for C–H.
  EXPECT_NEAR(b.lower[1 * n + 22], 0.7 * (1.70 + 1.20), 1e-12);  // C2 … H23 (hydroxyl H)
  EXPECT_EQ(b.upper[1 * n + 22], 1000.0);
  EXPECT_THROW((void)molecule_bounds(el, xyz, std::vector<std::array<std::size_t, 2>>{{0, 24}}), std::invalid_argument);
}

// QA: an element without tabulated radii (a metal ion, 'XX') was given carbon's radii silently;
// the node now says which elements, and the sample molecules (tabulated elements only) say nothing.
TEST(MoleculeBounds, UntabulatedElementsAreNamedOnce) {
  const Nodes nodes;
  RecordingContext clean;
  (void)bounds_of(nodes, sample_set(), clean);
  for (const auto& w : clean.warnings()) EXPECT_EQ(w.find("no tabulated"), std::string::npos) << w;
  io::MoleculeSet set = sample_set();
  set.molecules.at(0).atoms.at(0).element = "ZN";
  set.molecules.at(0).atoms.at(1).element = "XX";
  set.molecules.back().atoms.at(0).element = "ZN";
  RecordingContext ctx;
  (void)bounds_of(nodes, set, ctx);
  std::size_t hits = 0;
  for (const auto& w : ctx.warnings())
    if (w.find("no tabulated covalent and van der Waals radii for element(s) Xx, Zn: carbon's (0.77 Å, 1.70 Å)") !=
        std::string::npos)
      ++hits;
  EXPECT_EQ(hits, 1u);
  EXPECT_TRUE(has_tabulated_radii("SE"));
  EXPECT_FALSE(has_tabulated_radii("FE"));
}

// A 2D record (every z = 0: a drawing) gave bounds in drawing units as if they were Å, with a
// warning only; it is refused now, naming the file:line and the record, whichever record it is.
TEST(MoleculeBounds, TwoDimensionalRecordsAreRefusedNamingFileAndRecord) {
  const Nodes nodes;
  const io::MoleculeSet good = sample_set();
  for (const std::size_t k : {std::size_t{0}, good.molecules.size() - 1}) {
    io::MoleculeSet set = good;
    io::Molecule& m = set.molecules.at(k);
    for (auto& a : m.atoms) a.xyz[2] = 0.0;
    RecordingContext ctx;
    auto n = nodes.make("distgeom.bounds_from_molecules");
    n->set_input("molecules", Value::make(set));
    const std::string e = gemflow::testing::error_of(*n, ctx);
    EXPECT_NE(e.find("molecule " + std::to_string(k) + " '" + m.name + "' (" + m.source + ")"), std::string::npos) << e;
    EXPECT_NE(e.find("has only 2D coordinates (every z = 0)"), std::string::npos) << e;
  }
  // a single atom has no geometry to be wrong: accepted
  io::MoleculeSet one;
  one.molecules.push_back(good.molecules.at(0));
  one.molecules[0].atoms.resize(1);
  one.molecules[0].bonds.clear();
  one.molecules[0].atoms[0].xyz = {1, 2, 0};
  RecordingContext ctx;
  EXPECT_EQ(bounds_of(nodes, one, ctx)->bounds.size(), 1u);
  // PubChem 13136 (a calcium salt) as a 2D depiction
  const char* shared = std::getenv("GEMFLOW_SHARED_DATA");
  const std::string f = shared ? std::string(shared) + "/molecules/small/biotite_13136.sdf" : "";
  if (f.empty() || !std::filesystem::exists(f)) GTEST_SKIP() << "GEMFLOW_SHARED_DATA/molecules/small absent";
  auto n = nodes.make("distgeom.bounds_from_molecules");
  n->set_input("molecules", Value::make(io::read_sdf(f)));
  RecordingContext c2;
  const std::string e = gemflow::testing::error_of(*n, c2);
  EXPECT_NE(e.find("molecule 0 '13136' (" + f + ":1) has only 2D coordinates"), std::string::npos) << e;
}

// Calcium ('Ca' in the SDF's element column, 'CA' from the reader) was labelled 'CA1' and given
// carbon's radii; it is calcium: labelled 'Ca1', with its own radii, whatever the case.
TEST(MoleculeBounds, TwoLetterElementsAreThemselvesNotCarbon) {
  EXPECT_EQ(element_symbol("CA"), "Ca");
  EXPECT_EQ(element_symbol("cl"), "Cl");
  EXPECT_EQ(element_symbol("C"), "C");
  for (const char* ca : {"CA", "Ca", "ca"}) {
    EXPECT_TRUE(has_tabulated_radii(ca)) << ca;
    EXPECT_DOUBLE_EQ(covalent_radius(ca), 1.76);  // Cordero 2008
    EXPECT_DOUBLE_EQ(vdw_radius(ca), 2.31);       // Mantina 2009
  }
  EXPECT_DOUBLE_EQ(vdw_radius("Cl"), 1.75);
  EXPECT_DOUBLE_EQ(covalent_radius("NA"), 1.66);
  const Nodes nodes;
  io::MoleculeSet set;
  set.molecules.push_back(sample_set().molecules.at(0));
  io::Molecule& m = set.molecules[0];
  // an atom two bonds or more from atom 0: its lower bound is vdw_scale × (r(0) + r(j))
  std::size_t far = 0;
  for (std::size_t j = 1; j < m.atoms.size() && !far; ++j) {
    bool near = false;
    for (const auto& b : m.bonds)
      for (std::size_t x : {b.a, b.b})
        for (const auto& c : m.bonds)
          if ((b.a == 0 || b.b == 0) && (c.a == x || c.b == x) && (c.a == j || c.b == j)) near = true;
    for (const auto& b : m.bonds)
      if ((b.a == 0 && b.b == j) || (b.b == 0 && b.a == j)) near = true;
    if (!near) far = j;
  }
  ASSERT_NE(far, 0u);
  m.atoms[0].element = "CA";  // as io::read_sdf gives 'Ca'
  RecordingContext ctx;
  const auto b = bounds_of(nodes, set, ctx);
  for (const auto& w : ctx.warnings()) EXPECT_EQ(w.find("no tabulated"), std::string::npos) << w;
  const DistanceBounds& d = b->bounds.at(0);
  EXPECT_EQ(d.labels.at(0), "Ca1");
  EXPECT_DOUBLE_EQ(d.lower(0, far), 0.7 * (2.31 + vdw_radius(m.atoms[far].element)));
}

// The batch node on the sample molecules equals smooth_bounds() run on each matrix alone,
// bit for bit (fp64), for several worker counts; every sample molecule is consistent.
TEST(SmoothBatch, EqualsPerMatrixSmoothingOnSampleMolecules) {
  Nodes nodes;
  RecordingContext ctx;
  const auto in = bounds_of(nodes, sample_set(), ctx);
  ASSERT_EQ(in->size(), 4u);
  EXPECT_EQ(in->bounds[3].size(), 130u);
  for (std::int64_t threads : {1, 2, 3}) {
    auto node = nodes.make("distgeom.smooth_batch");
    node->set_input("bounds", Value::of<BoundsBatch>(in));
    node->set_param("device", std::string("cpu"));
    node->set_param("threads", threads);
    node->execute(ctx);
    const auto out = node->output("bounds").as<BoundsBatch>();
    const auto report = node->output("report").as<Table>();
    ASSERT_EQ(out->size(), 4u);
    ASSERT_EQ(report->rows.size(), 4u);
    for (std::size_t k = 0; k < 4; ++k) {
      DistanceBounds ref = in->bounds[k];
      const SmoothingReport r = smooth_bounds(ref.lower.span(), ref.upper.span(), ref.size());
      ASSERT_TRUE(r.consistent) << in->names[k];
      EXPECT_TRUE(same_bits(out->bounds[k].lower.span(), ref.lower.span())) << k;
      EXPECT_TRUE(same_bits(out->bounds[k].upper.span(), ref.upper.span())) << k;
      EXPECT_EQ(std::get<std::int64_t>(report->rows[k][4]), static_cast<std::int64_t>(r.changed_pairs)) << k;
      EXPECT_GT(r.changed_pairs, 0u);
      EXPECT_EQ(std::get<std::string>(report->rows[k][5]), "ok");
      EXPECT_EQ(out->names[k], in->names[k]);
    }
    // V2000 and V3000 TYR give the same smoothed bounds.
    EXPECT_TRUE(same_bits(out->bounds[0].upper.span(), out->bounds[1].upper.span()));
  }
}

// Random batches (sizes 1..90, some inconsistent): smooth_bounds_batch reports and results
// equal smooth_bounds per matrix exactly, in fp64 and fp32, for 1 and 4 workers.
TEST(SmoothBatch, RandomBatchesEqualPerMatrixSmoothing) {
  std::mt19937_64 rng(20261129);
  std::uniform_int_distribution<std::size_t> size(1, 90);
  for (bool fp32 : {false, true})
    for (unsigned threads : {1u, 4u}) {
      std::vector<DistanceBounds> in;
      for (int k = 0; k < 40; ++k) in.push_back(random_bounds(size(rng), rng, k % 7 == 3));
      std::vector<DistanceBounds> work = in;
      std::vector<BatchMatrix> ms;
      for (auto& d : work) ms.push_back({d.lower.span(), d.upper.span(), d.size()});
      BatchSmoothingOptions o;
      o.fp32 = fp32;
      o.threads = threads;
      const auto res = smooth_bounds_batch(ms, o);
      ASSERT_FALSE(res.cancelled);
      ASSERT_EQ(res.reports.size(), in.size());
      std::size_t inconsistent = 0;
      for (std::size_t k = 0; k < in.size(); ++k) {
        const std::size_t n = in[k].size();
        SmoothingReport r;
        std::vector<double> lo(in[k].lower.span().begin(), in[k].lower.span().end());
        std::vector<double> up(in[k].upper.span().begin(), in[k].upper.span().end());
        if (fp32) {
          std::vector<float> lf(lo.begin(), lo.end()), uf(up.begin(), up.end());
          r = smooth_bounds(std::span<float>(lf), std::span<float>(uf), n);
          std::copy(lf.begin(), lf.end(), lo.begin());
          std::copy(uf.begin(), uf.end(), up.begin());
        } else {
          r = smooth_bounds(std::span<double>(lo), std::span<double>(up), n);
        }
        SCOPED_TRACE("matrix " + std::to_string(k) + " n " + std::to_string(n) + (fp32 ? " fp32" : " fp64"));
        EXPECT_TRUE(same_bits(work[k].lower.span(), lo));
        EXPECT_TRUE(same_bits(work[k].upper.span(), up));
        const SmoothingReport& b = res.reports[k];
        EXPECT_EQ(b.consistent, r.consistent);
        EXPECT_EQ(b.changed_pairs, r.changed_pairs);
        EXPECT_EQ(b.inconsistent_pairs, r.inconsistent_pairs);
        if (!r.consistent) {
          ++inconsistent;
          EXPECT_EQ(b.i, r.i);
          EXPECT_EQ(b.j, r.j);
          ASSERT_TRUE(b.path.has_value());
          EXPECT_GT(b.path->excess(), 0.0);
        }
      }
      EXPECT_GE(inconsistent, 5u);  // the planted ones (k % 7 == 3, n ≥ 3)
    }
}

// An inconsistent molecule fails the node naming its index, name and atom pair; with
// on_inconsistent = skip it is dropped, counted and reported in the table.
TEST(SmoothBatch, InconsistentMoleculeNamedOrSkipped) {
  Nodes nodes;
  RecordingContext ctx;
  auto set = sample_set();
  const io::Molecule& hwb = set.molecules[2];
  const auto in = bounds_of(nodes, set, ctx);
  BoundsBatch bad = *in;
  // Record 2 (HWB): the 1-3 pair spanned by its first two bonds gets L = 50 Å, far above
  // the path of the two bond upper bounds (~3 Å).
  DistanceBounds& d = bad.bounds[2];
  const auto& b0 = hwb.bonds[0];
  const auto& b1 = hwb.bonds[1];
  ASSERT_TRUE(b0.a == b1.a || b0.a == b1.b || b0.b == b1.a || b0.b == b1.b);
  const std::size_t far_i = b0.a == b1.a || b0.a == b1.b ? b0.b : b0.a;
  const std::size_t far_j = b1.a == b0.a || b1.a == b0.b ? b1.b : b1.a;
  d.lower(far_i, far_j) = d.lower(far_j, far_i) = 50.0;
  d.upper(far_i, far_j) = d.upper(far_j, far_i) = 60.0;
  auto node = nodes.make("distgeom.smooth_batch");
  node->set_input("bounds", Value::make(bad));
  node->set_param("device", std::string("cpu"));
  try {
    node->execute(ctx);
    ADD_FAILURE() << "no error";
  } catch (const Error& e) {
    const std::string w = e.what();
    EXPECT_NE(w.find("molecule 2 '" + hwb.name + "'"), std::string::npos) << w;
    EXPECT_NE(w.find("inconsistent"), std::string::npos) << w;
    EXPECT_NE(w.find("= 50 Å"), std::string::npos) << w;  // the contradicted input lower bound
  }
  auto skip = nodes.make("distgeom.smooth_batch");
  skip->set_input("bounds", Value::make(bad));
  skip->set_param("device", std::string("cpu"));
  skip->set_param("on_inconsistent", std::string("skip"));
  RecordingContext c2;
  skip->execute(c2);
  const auto out = skip->output("bounds").as<BoundsBatch>();
  const auto table = skip->output("report").as<Table>();
  ASSERT_EQ(out->size(), 3u);
  EXPECT_EQ(out->source, (std::vector<std::size_t>{0, 1, 3}));
  EXPECT_EQ(std::get<std::string>(table->rows[2][5]), "inconsistent (skipped)");
  EXPECT_EQ(std::get<std::int64_t>(c2.records().at("skipped")), 1);
  ASSERT_EQ(c2.warnings().size(), 1u);
  EXPECT_NE(c2.warnings()[0].find("molecule 2"), std::string::npos);
}

// Invalid input bounds name the molecule and the atoms.
TEST(SmoothBatch, InvalidBoundsNameMolecule) {
  Nodes nodes;
  RecordingContext ctx;
  const auto in = bounds_of(nodes, sample_set(), ctx);
  BoundsBatch bad = *in;
  bad.bounds[1].lower(3, 5) = -1.0;
  auto node = nodes.make("distgeom.smooth_batch");
  node->set_input("bounds", Value::make(bad));
  node->set_param("device", std::string("cpu"));
  try {
    node->execute(ctx);
    ADD_FAILURE() << "no error";
  } catch (const InputError& e) {
    const std::string w = e.what();
    EXPECT_NE(w.find("molecule 1 'TYR - Ideal conformer'"), std::string::npos) << w;
    EXPECT_NE(w.find("O4, C6"), std::string::npos) << w;
  }
}

// MoleculeSet is an SDK type: io's name for it is the same type, and a plugin that still
// registers it changes nothing.
TEST(SmoothBatch, MoleculeSetIsAnSdkType) {
  static_assert(std::is_same_v<io::MoleculeSet, MoleculeSet>);
  Registry r;
  ASSERT_NE(r.find_type("MoleculeSet"), nullptr);
  EXPECT_NO_THROW(r.add_type<io::MoleculeSet>("libgemflow_io.so"));
  EXPECT_EQ(r.find_type("MoleculeSet")->origin, "core");
}
