// Node-level tests of the distance-geometry chain (gemflow::testing::RecordingContext): parameter
// validation, error messages, cancellation of refine, trials = the separate chain,
// thread-independence, device resolution (no GPU needed).
#include <gtest/gtest.h>

#include <limits>

#include <atomic>
#include <cmath>
#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include <gemflow/device.hpp>
#include <gemflow/distgeom/refine.hpp>
#include <gemflow/distgeom/smoothing.hpp>
#include <gemflow/distgeom/trials.hpp>
#include <gemflow/io/structure_io.hpp>
#include <gemflow/node.hpp>
#include <gemflow/registry.hpp>
#include <gemflow/testing.hpp>
#include <gemflow/types.hpp>
#include <gemflow/workflow.hpp>

#include "register.hpp"

namespace {
using namespace gemflow;
using gemflow::testing::error_of;
using gemflow::testing::RecordingContext;

Registry& registry() {
  static Registry reg;
  static bool once = [] {
    PluginRegistrar r(reg, "distgeom-test");
    distgeom::register_embedding_nodes(r);
    return true;
  }();
  (void)once;
  return reg;
}

std::unique_ptr<Node> make(const std::string& id) { return gemflow::testing::make_node(registry(), id); }

// 2KPU model 1, residues 20-31 (a helix and its flanks): small enough for fast node runs.
const Structure& peptide() {
  static const Structure s = [] {
    const Structure full = io::read_pdb(std::string(GEMFLOW_SOURCE_DIR) + "/sample_data/2kpu/2kpu.pdb");
    Structure out;
    out.models.emplace_back();
    for (std::size_t i = 0; i < full.atoms.size(); ++i)
      if (full.atoms[i].residue_number >= 20 && full.atoms[i].residue_number <= 31) {
        out.atoms.push_back(full.atoms[i]);
        out.models[0].push_back(full.models[0][i]);
      }
    return out;
  }();
  return s;
}

struct Chain {
  std::shared_ptr<const DistanceBounds> bounds, smoothed;
};

Chain bounds_chain(const std::string& unlisted = "cutoff") {
  auto node = make("distgeom.bounds_from_structure");
  node->set_input("structure", Value::make(peptide()));
  node->set_param("unlisted_lower", unlisted);
  RecordingContext ctx;
  node->execute(ctx);
  Chain c;
  c.bounds = node->output("bounds").as<DistanceBounds>();
  DistanceBounds sm = *c.bounds;
  const auto rep = distgeom::smooth_bounds(sm.lower.span(), sm.upper.span(), sm.size());
  EXPECT_TRUE(rep.consistent);
  c.smoothed = std::make_shared<const DistanceBounds>(std::move(sm));
  return c;
}

double dist(const Structure& s, std::size_t i, std::size_t j) {
  const auto& a = s.models[0][i];
  const auto& b = s.models[0][j];
  return std::sqrt((a[0] - b[0]) * (a[0] - b[0]) + (a[1] - b[1]) * (a[1] - b[1]) + (a[2] - b[2]) * (a[2] - b[2]));
}

TEST(BoundsFromStructureNode, UnlistedPairsGetCutoffMinusToleranceOrVdw) {
  const auto cut = bounds_chain("cutoff").bounds;
  const auto vdw = bounds_chain("vdw").bounds;
  const std::size_t n = cut->size();
  ASSERT_EQ(vdw->size(), n);
  std::size_t unlisted = 0, listed = 0;
  for (std::size_t i = 0; i < n; ++i)
    for (std::size_t j = i + 1; j < n; ++j) {
      const double d = dist(peptide(), cut->atom_index[i], cut->atom_index[j]);
      if (d < 5.0) {
        ++listed;
        EXPECT_NEAR(cut->lower(i, j), std::max(0.0, d - 0.05), 1e-12);
        EXPECT_NEAR(cut->upper(i, j), d + 0.05, 1e-12);
        EXPECT_EQ(vdw->lower(i, j), cut->lower(i, j));
      } else {
        ++unlisted;
        EXPECT_DOUBLE_EQ(cut->lower(i, j), 4.95);
        EXPECT_LE(vdw->lower(i, j), 5.0);
        EXPECT_LT(vdw->lower(i, j), 4.0);  // 0.8 × Bondi sums of heavy atoms are ≤ 3.04 Å
      }
    }
  EXPECT_GT(listed, 100u);
  EXPECT_GT(unlisted, 100u);
}

// QA: restraints never resolved against the structure (the reader had no structure linked)
// were all skipped, and the run went on to a structure from covalent geometry alone, exit 0.
TEST(BoundsNode, RestraintsNoneOfWhichMatchTheStructureAreAnError) {
  RestraintSet rs;
  rs.source = "r.nef";
  for (int id = 1; id <= 3; ++id) {
    DistanceRestraint r;
    r.id = id;
    r.upper = 5.0;
    r.alternatives.push_back({});  // names only: atoms_a/atoms_b empty
    rs.restraints.push_back(r);
  }
  auto node = make("distgeom.bounds");
  node->set_input("structure", Value::make(peptide()));
  node->set_input("restraints", Value::make(rs));
  RecordingContext ctx;
  const auto e = error_of(*node, ctx);
  EXPECT_NE(e.find("none of the 3 restraints names atoms of the structure"), std::string::npos) << e;
  EXPECT_NE(e.find("read.structure -> restraints.structure"), std::string::npos) << e;
  // one resolved restraint among them: a run, with the others skipped and warned about
  rs.restraints[0].alternatives[0].atoms_a = {0};
  rs.restraints[0].alternatives[0].atoms_b = {4};
  auto ok = make("distgeom.bounds");
  ok->set_input("structure", Value::make(peptide()));
  ok->set_input("restraints", Value::make(rs));
  RecordingContext ctx2;
  EXPECT_EQ(error_of(*ok, ctx2), "(no error)");
  // a user's report: a skipped restraint was named by its id alone; each now has its file:line
  rs.restraints[1].origin = "r.nef:12";
  rs.restraints[1].alternatives[0].atoms_a = {3};
  rs.restraints[1].alternatives[0].atoms_b = {3};  // an atom with itself
  auto self = make("distgeom.bounds");
  self->set_input("structure", Value::make(peptide()));
  self->set_input("restraints", Value::make(rs));
  RecordingContext ctx3;
  EXPECT_EQ(error_of(*self, ctx3), "(no error)");
  ASSERT_FALSE(ctx3.warnings().empty());
  EXPECT_NE(ctx3.warnings()[0].find("r.nef:12 (restraint 2, both sides are the same atom)"), std::string::npos)
      << ctx3.warnings()[0];
}

// QA: a region with no residue of the reference gave RMSD NaN and exit 0; "90-10" was read as
// 10-90; a range beyond the reference was cut down silently; a bad reference_model was reported
// as parameter 'model'.
TEST(CompareNode, ResidueRegionAndReferenceModelAreChecked) {
  const auto run = [](const std::string& residues, std::int64_t ref_model, RecordingContext& ctx) {
    auto node = make("distgeom.compare");
    node->set_input("model", Value::make(peptide()));
    node->set_input("reference", Value::make(peptide()));
    node->set_param("residues", residues);
    node->set_param("reference_model", ref_model);
    return error_of(*node, ctx);
  };
  RecordingContext c1, c2, c3, c4, c5;
  EXPECT_NE(
      run("B:1-5", 1, c1).find("parameter 'residues' = 'B:1-5' selects no residue of the reference (it has A:20-31)"),
      std::string::npos)
      << run("B:1-5", 1, c1);
  EXPECT_NE(run("31-20", 1, c2).find("the range 31-20 runs backwards (write 20-31)"), std::string::npos);
  EXPECT_NE(run("20-31", 5, c3).find("parameter 'reference_model' = 5 but the structure has 1 model(s)"),
            std::string::npos);
  EXPECT_EQ(run("A:20-1000000000", 1, c4), "(no error)");  // no billion-step loop either
  bool warned = false;
  for (const auto& l : c4.logs()) warned = warned || l.text.find("12 of the 999999981 residues") != std::string::npos;
  EXPECT_TRUE(warned);
  EXPECT_EQ(run("22-28", 1, c5), "(no error)");
  for (const auto& l : c5.logs()) EXPECT_EQ(l.text.find("residues it names"), std::string::npos) << l.text;
  // a user's report: a range named twice counted its residues twice ("12 of the 24 residues")
  RecordingContext c6, c7;
  EXPECT_EQ(run("20-31,20-31,22-25", 1, c6), "(no error)");
  for (const auto& l : c6.logs()) EXPECT_EQ(l.text.find("residues it names"), std::string::npos) << l.text;
  EXPECT_EQ(run("18-25,24-33", 1, c7), "(no error)");  // 16 named, 12 in the reference
  bool overlap = false;
  for (const auto& l : c7.logs()) overlap = overlap || l.text.find("12 of the 16 residues") != std::string::npos;
  EXPECT_TRUE(overlap);
}

TEST(BoundsFromStructureNode, ToleranceNotBelowCutoffIsAnErrorNamingTheParameters) {
  auto node = make("distgeom.bounds_from_structure");
  node->set_input("structure", Value::make(peptide()));
  node->set_param("tolerance", 6.0);
  RecordingContext ctx;
  const auto e = error_of(*node, ctx);
  EXPECT_NE(e.find("parameter 'tolerance'"), std::string::npos) << e;
  EXPECT_NE(e.find("'cutoff'"), std::string::npos) << e;
  EXPECT_NE(e.find("unlisted_lower: cutoff"), std::string::npos) << e;
  // ... and allowed with the vdW floor.
  node = make("distgeom.bounds_from_structure");
  node->set_input("structure", Value::make(peptide()));
  node->set_param("tolerance", 6.0);
  node->set_param("unlisted_lower", std::string("vdw"));
  RecordingContext ctx2;
  EXPECT_EQ(error_of(*node, ctx2), "(no error)");
}

// The comparison that execute() makes after the upstream nodes ran is a parameter rule too:
// `gemflow validate` reports it at the parameter's line before anything runs.
TEST(BoundsFromStructureNode, ToleranceNotBelowCutoffIsAWorkflowErrorAtItsLine) {
  const auto errors = [](const std::string& params) {
    const auto res =
        parse_workflow("gemflow: 1\nnodes:\n  b:\n    type: distgeom.bounds_from_structure\n    params:\n" + params,
                       "w.yaml", registry());
    std::vector<std::string> e;
    for (const auto& d : res.diagnostics)
      if (d.severity == Diagnostic::Severity::Error && d.str().find("required input") == std::string::npos)
        e.push_back(d.str());
    return e;
  };
  const auto e = errors("      cutoff: 4\n      tolerance: 6\n");
  ASSERT_EQ(e.size(), 1u) << ::testing::PrintToString(e);
  EXPECT_EQ(e[0],
            "w.yaml:7:18: error: node 'b', parameter 'tolerance': tolerance = 6.0 must be below cutoff = 4.0 when "
            "unlisted_lower is cutoff ('unlisted_lower: cutoff' gives every pair beyond the cutoff the lower bound "
            "cutoff − tolerance)");
  EXPECT_TRUE(errors("      tolerance: 6\n      unlisted_lower: vdw\n").empty());
  EXPECT_TRUE(errors("      tolerance: 4.9\n").empty());
  EXPECT_EQ(errors("      tolerance: 5\n").size(), 1u);  // not below the default cutoff 5
}

// embed_and_refine declares the parameter groups of metrize, embed and refine: the names that
// workflows use stay as they were, in the same order, and the groups' limits hold
TEST(DistgeomNodeSpecs, EmbedAndRefineKeepsItsParameterNames) {
  const auto names = [](const std::string& id) {
    std::vector<std::string> n;
    for (const auto& p : registry().find_node(id)->spec.params) n.push_back(p.name);
    return n;
  };
  EXPECT_EQ(names("distgeom.embed_and_refine"),
            (std::vector<std::string>{"trials", "seed", "first_trial", "metrize", "metrize_atoms", "method",
                                      "dimensions", "rank", "pivot_fraction", "max_iterations", "w_chiral",
                                      "mirror_trial", "threads", "model", "device"}));
  EXPECT_EQ(names("distgeom.metrize"), (std::vector<std::string>{"method", "atoms", "seed"}));
  EXPECT_EQ(names("distgeom.embed"),
            (std::vector<std::string>{"method", "dimensions", "rank", "pivot_fraction", "model", "device"}));
  EXPECT_EQ(names("distgeom.refine"),
            (std::vector<std::string>{"max_iterations", "w_chiral", "mirror_trial", "model"}));
  const NodeSpec& er = registry().find_node("distgeom.embed_and_refine")->spec;
  const NodeSpec& m = registry().find_node("distgeom.metrize")->spec;
  EXPECT_EQ(er.param("metrize")->choices, m.param("method")->choices);
  EXPECT_EQ(er.param("metrize_atoms")->doc, m.param("atoms")->doc);
  EXPECT_NE(er.param("metrize")->doc.find("`metrize_atoms`"), std::string::npos) << er.param("metrize")->doc;
  EXPECT_NE(m.param("method")->doc.find("`atoms`"), std::string::npos) << m.param("method")->doc;
  // the unsigned group parameters refuse negative values (Param<std::size_t>: minimum 0)
  for (const char* p : {"metrize_atoms", "rank"}) EXPECT_TRUE(er.param(p)->check(std::int64_t{-1}).has_value()) << p;
  EXPECT_TRUE(er.param("max_iterations")->check(std::int64_t{0}).has_value());
}

TEST(DistgeomNodeSpecs, LimitsAndChoicesAreValidatedByTheSpec) {
  const auto& reg = registry();
  const auto* er = reg.find_node("distgeom.embed_and_refine");
  ASSERT_NE(er, nullptr);
  EXPECT_TRUE(er->spec.info.stochastic);
  EXPECT_TRUE(er->spec.param("trials")->check(std::int64_t{0}).has_value());
  EXPECT_FALSE(er->spec.param("trials")->check(std::int64_t{8}).has_value());
  EXPECT_TRUE(er->spec.param("pivot_fraction")->check(0.0).has_value());
  EXPECT_TRUE(er->spec.param("method")->check(std::string("qr")).has_value());
  EXPECT_EQ(er->spec.param("device")->kind, ParamKind::Device);
  const auto* em = reg.find_node("distgeom.embed");
  EXPECT_TRUE(em->spec.param("dimensions")->check(std::int64_t{2}).has_value());
  EXPECT_TRUE(em->spec.param("pivot_fraction")->check(1.5).has_value());
  EXPECT_NE(em->spec.param("device"), nullptr);
  EXPECT_NE(reg.find_node("distgeom.metric_matrix")->spec.param("device"), nullptr);
  const auto* bs = reg.find_node("distgeom.bounds_from_structure");
  EXPECT_TRUE(bs->spec.param("unlisted_lower")->check(std::string("none")).has_value());
  EXPECT_EQ(std::get<std::string>(bs->spec.param("unlisted_lower")->default_value), "cutoff");
}

// method eigen with a Cholesky rank or pivot fraction ignored them silently; now a rule, an error
// before the run at the parameter's line
TEST(DistgeomNodeSpecs, CholeskyOnlyParametersWithEigenAreWorkflowErrors) {
  for (const std::string id : {"distgeom.embed", "distgeom.embed_and_refine"}) {
    const auto res = parse_workflow("gemflow: 1\nnodes:\n  e:\n    type: " + id +
                                        "\n    params:\n      method: eigen\n      rank: 8\n"
                                        "      pivot_fraction: 0.25\n",
                                    "w.yaml", registry());
    std::vector<std::string> e;
    for (const auto& d : res.diagnostics)
      if (d.severity == Diagnostic::Severity::Error && d.str().find("required input") == std::string::npos)
        e.push_back(d.str());
    ASSERT_EQ(e.size(), 2u) << id;
    EXPECT_NE(e[0].find("w.yaml:7:13: error: node 'e', parameter 'rank': rank = 8 cannot be used with 'method: eigen'"),
              std::string::npos)
        << e[0];
    EXPECT_NE(e[1].find("w.yaml:8:23: error: node 'e', parameter 'pivot_fraction': pivot_fraction = 0.25 cannot be "
                        "used with"),
              std::string::npos)
        << e[1];
  }
}

TEST(MetricMatrixNode, RejectsNonSquareDistances) {
  auto node = make("distgeom.metric_matrix");
  node->set_input("distances", Value::make(Matrix<double>(2, 3, 0.0)));
  RecordingContext ctx;
  const auto e = error_of(*node, ctx);
  // the node's message alone: the executor adds the node's id and type (the error convention)
  EXPECT_EQ(e.rfind("input 'distances' is 2×3, not square", 0), 0u) << e;
}

// Not a distance matrix: the first offending entry is named (QA: a negative, asymmetric
// matrix used to give a non-symmetric "metric" silently).
TEST(MetricMatrixNode, RejectsEntriesThatAreNotDistances) {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  struct Case {
    std::vector<double> d;
    const char* expect;
  };
  for (const Case& c :
       {Case{{0, -1, 2, 5, 0, 1, 2, 1, 0}, "(0, 1) = -1 Å is negative"},
        Case{{0, 1, 2, 5, 0, 1, 2, 1, 0}, "(0, 1) = 1 Å but (1, 0) = 5 Å: not symmetric"},
        Case{{0, 1, 2, 1, 0.5, 1, 2, 1, 0}, "(1, 1) = 0.5 Å: the diagonal of a distance matrix must be 0"},
        Case{{0, 1, nan, 1, 0, 1, nan, 1, 0}, "(0, 2) = nan Å is not finite"}}) {
    auto node = make("distgeom.metric_matrix");
    node->set_input("distances", Value::make(Matrix<double>(3, 3, c.d)));
    node->set_param("device", std::string("cpu"));
    RecordingContext ctx;
    const auto e = error_of(*node, ctx);
    EXPECT_EQ(e.rfind(std::string("input 'distances' ") + c.expect, 0), 0u) << e;
  }
  // symmetric to rounding is accepted
  auto node = make("distgeom.metric_matrix");
  node->set_input("distances", Value::make(Matrix<double>(2, 2, {0, 1.0, std::nextafter(1.0, 2.0), 0})));
  node->set_param("device", std::string("cpu"));
  RecordingContext ctx;
  EXPECT_EQ(error_of(*node, ctx), "(no error)");
}

// Regression: finite distances whose squares pass the double range gave a metric of Inf/NaN and
// "done"; the next node failed without the cause.
TEST(MetricMatrixNode, SquaredDistancesBeyondTheDoubleRangeAreAnError) {
  auto node = make("distgeom.metric_matrix");
  node->set_input("distances", Value::make(Matrix<double>(2, 2, {0, 1e160, 1e160, 0})));
  node->set_param("device", std::string("cpu"));
  RecordingContext ctx;
  const auto e = error_of(*node, ctx);
  EXPECT_NE(e.find("the squared distances overflow double precision (the largest distance "
                   "is 1e+160 Å"),
            std::string::npos)
      << e;
  EXPECT_EQ(e.find("nan"), std::string::npos) << e;
  // squares below the double range: a warning (the metric loses them)
  auto tiny = make("distgeom.metric_matrix");
  tiny->set_input("distances", Value::make(Matrix<double>(2, 2, {0, 1e-170, 1e-170, 0})));
  tiny->set_param("device", std::string("cpu"));
  RecordingContext tctx;
  tiny->execute(tctx);
  ASSERT_EQ(tctx.warnings().size(), 1u);
  EXPECT_NE(tctx.warnings()[0].find("D(1, 0) = 1e-170 Å, whose square is below the double range"), std::string::npos)
      << tctx.warnings()[0];
}

/// Five atoms with bounds 0 … 10 Å (the embedding reads only their number here).
std::shared_ptr<const DistanceBounds> five_atoms() {
  auto b = std::make_shared<DistanceBounds>();
  b->lower = Matrix<double>(5, 5, 0.0);
  b->upper = Matrix<double>(5, 5, 10.0);
  for (int i = 0; i < 5; ++i) b->labels.push_back(std::string("A").append(std::to_string(i)));
  return b;
}

// The metric matrix of five points (not coplanar): no warning, the embedding keeps the largest
// distance (span 1), rank 3. Not symmetric: a warning, and the lower triangle is used (the same
// coordinates). A negative diagonal cannot be |x_i|²: a warning.
TEST(EmbedNode, WarnsOnAMetricThatIsNotSymmetricOrHasANegativeDiagonal) {
  const std::vector<double> x = {0, 0, 0, 2, 0, 0, 0, 3, 0, 0, 0, 4, 1, 1, 1};
  Matrix<double> g(5, 5, 0.0);
  double c[3] = {0, 0, 0};
  for (int i = 0; i < 5; ++i)
    for (int k = 0; k < 3; ++k) c[k] += x[3 * i + k] / 5.0;
  for (int i = 0; i < 5; ++i)
    for (int j = 0; j < 5; ++j)
      for (int k = 0; k < 3; ++k) g(i, j) += (x[3 * i + k] - c[k]) * (x[3 * j + k] - c[k]);
  const auto run = [&](const Matrix<double>& m, RecordingContext& ctx) {
    auto node = make("distgeom.embed");
    node->set_input("metric", Value::make(m));
    node->set_input("bounds", Value::of<DistanceBounds>(five_atoms()));
    node->set_param("dimensions", std::int64_t{3});
    node->set_param("device", std::string("cpu"));
    node->execute(ctx);
    return *node->output("coordinates").as<Matrix<double>>();
  };
  RecordingContext exact;
  const auto xe = run(g, exact);
  EXPECT_TRUE(exact.warnings().empty()) << exact.warnings().front();
  EXPECT_NEAR(std::get<double>(exact.records().at("span_ratio")), 1.0, 1e-12);
  EXPECT_EQ(std::get<std::int64_t>(exact.records().at("cholesky_rank")), 3);

  Matrix<double> ns = g;
  ns(0, 1) += 50;  // the upper triangle: not read
  RecordingContext asym;
  const auto xa = run(ns, asym);
  ASSERT_EQ(asym.warnings().size(), 1u);
  EXPECT_NE(asym.warnings()[0].find("input 'metric' is not symmetric: G(1, 0) = "), std::string::npos)
      << asym.warnings()[0];
  EXPECT_NE(asym.warnings()[0].find("the lower triangle is used"), std::string::npos);
  EXPECT_EQ(xa.span().size(), xe.span().size());
  for (std::size_t k = 0; k < xe.span().size(); ++k) EXPECT_EQ(xa.span()[k], xe.span()[k]) << k;

  Matrix<double> round = g;  // an atom at the centroid: metric_matrix's sums can leave −1e-15
  round(4, 4) = -1e-15;
  RecordingContext rounding;
  (void)run(round, rounding);
  EXPECT_TRUE(rounding.warnings().empty()) << rounding.warnings().front();

  Matrix<double> neg = g;
  neg(4, 4) = -100;
  RecordingContext negative;
  (void)run(neg, negative);
  ASSERT_FALSE(negative.warnings().empty());
  EXPECT_NE(negative.warnings()[0].find("input 'metric' has G(4, 4) = -100 Å² < 0 on its diagonal"), std::string::npos)
      << negative.warnings()[0];
}

// Regression (QA, 2KPU with bounds of 8 Å and rank 20: atoms 2091 Å from the centroid, no word):
// a small pivot of an indefinite Schur complement amplifies it. Here three points 10 Å out, and
// two at the centroid with G_33 = 1e-4, G_44 = 1e-5, G_34 = 1 (no points can do that): the
// factor pivots on 1e-4, puts atom 4 100 Å out, and stops at the next pivot −1e4.
TEST(EmbedNode, WarnsWhenAnIndefiniteMetricBlowsTheEmbeddingUp) {
  Matrix<double> g(5, 5, 0.0);
  for (int i = 0; i < 3; ++i) g(i, i) = 100;
  g(3, 3) = 1e-4;
  g(4, 4) = 1e-5;
  g(3, 4) = g(4, 3) = 1.0;
  auto node = make("distgeom.embed");
  node->set_input("metric", Value::make(g));
  node->set_input("bounds", Value::of<DistanceBounds>(five_atoms()));
  node->set_param("dimensions", std::int64_t{3});
  node->set_param("rank", std::int64_t{5});
  node->set_param("device", std::string("cpu"));
  RecordingContext ctx;
  node->execute(ctx);
  EXPECT_EQ(std::get<std::int64_t>(ctx.records().at("cholesky_rank")), 4);
  const double span = std::get<double>(ctx.records().at("span_ratio"));
  EXPECT_GT(span, 5.0);
  ASSERT_EQ(ctx.warnings().size(), 2u);
  EXPECT_NE(ctx.warnings()[0].find("stopped at 4 of the 5 columns asked for: the next pivot is -10000 Å²"),
            std::string::npos)
      << ctx.warnings()[0];
  EXPECT_NE(ctx.warnings()[1].find("the embedded coordinates are unreliable: their largest distance is"),
            std::string::npos)
      << ctx.warnings()[1];
  // rank = dimensions pivots on the three real points only: exact, no warning
  auto plain = make("distgeom.embed");
  plain->set_input("metric", Value::make(g));
  plain->set_input("bounds", Value::of<DistanceBounds>(five_atoms()));
  plain->set_param("dimensions", std::int64_t{3});
  plain->set_param("device", std::string("cpu"));
  RecordingContext ok;
  plain->execute(ok);
  EXPECT_TRUE(ok.warnings().empty()) << ok.warnings().front();
  EXPECT_NEAR(std::get<double>(ok.records().at("span_ratio")), 1.0, 1e-12);
}

// QA: with pivot_fraction < 1 the "only k positive pivots" error blamed the distances alone. Ten
// atoms: five on a line with tight bounds, five off it; pivot_fraction 0.5 keeps the five on the
// line, which span one dimension. With every atom allowed (five atoms: at least five are kept) the hint stays out
// (review).
TEST(EmbedNode, TooFewPivotsNamesPivotFractionWhenItRestrictsThem) {
  // centroid 0, the five on the x axis through it (so that they span one dimension)
  const std::vector<double> x = {-2, 0, 0, -1, 0,  0, 0, 0, 0, 1, 0, 0,  2, 0, 0,
                                 0,  5, 0, 0,  -5, 0, 0, 0, 5, 0, 0, -5, 0, 0, 0};
  const std::size_t n = 10;
  Matrix<double> g(n, n, 0.0);
  double c[3] = {0, 0, 0};
  for (std::size_t i = 0; i < n; ++i)
    for (int k = 0; k < 3; ++k) c[k] += x[3 * i + k] / double(n);
  for (std::size_t i = 0; i < n; ++i)
    for (std::size_t j = 0; j < n; ++j)
      for (int k = 0; k < 3; ++k) g(i, j) += (x[3 * i + k] - c[k]) * (x[3 * j + k] - c[k]);
  auto b = std::make_shared<DistanceBounds>();
  b->lower = Matrix<double>(n, n, 0.0);
  b->upper = Matrix<double>(n, n, 0.0);
  for (std::size_t i = 0; i < n; ++i) {
    b->labels.push_back(std::string("A").append(std::to_string(i)));
    for (std::size_t j = 0; j < n; ++j) b->upper(i, j) = i == j ? 0.0 : (i < 5 && j < 5 ? 0.1 : 10.0);
  }
  const auto run = [&](const Matrix<double>& m, std::shared_ptr<const DistanceBounds> bounds, double fraction) {
    auto node = make("distgeom.embed");
    node->set_input("metric", Value::make(m));
    node->set_input("bounds", Value::of<DistanceBounds>(std::move(bounds)));
    node->set_param("dimensions", std::int64_t{3});
    node->set_param("pivot_fraction", fraction);
    node->set_param("device", std::string("cpu"));
    RecordingContext ctx;
    return error_of(*node, ctx);
  };
  const auto e = run(g, b, 0.5);
  EXPECT_NE(e.find("only 1 positive pivots (need 3)"), std::string::npos) << e;
  EXPECT_NE(e.find("among the 5 atoms that parameter 'pivot_fraction' = 0.5 allows as pivots"), std::string::npos) << e;
  EXPECT_EQ(run(g, b, 1.0), "(no error)");
  // five atoms on a line: every atom is allowed, and the error does not name pivot_fraction
  Matrix<double> line(5, 5, 0.0);
  for (int i = 0; i < 5; ++i)
    for (int j = 0; j < 5; ++j) line(i, j) = (i - 2.0) * (j - 2.0);
  const auto all = run(line, five_atoms(), 0.5);
  EXPECT_NE(all.find("only 1 positive pivots (need 3)"), std::string::npos) << all;
  EXPECT_EQ(all.find("pivot_fraction"), std::string::npos) << all;
}

TEST(EmbedNode, ErrorsNameSizesPivotsAndMissingChiralityAtoms) {
  const auto c = bounds_chain();
  const std::size_t n = c.bounds->size();
  {  // metric of the wrong size
    auto node = make("distgeom.embed");
    node->set_input("metric", Value::make(Matrix<double>(3, 3, 0.0)));
    node->set_input("bounds", Value::of<DistanceBounds>(c.bounds));
    RecordingContext ctx;
    const auto e = error_of(*node, ctx);
    EXPECT_NE(e.find("metric is 3×3 but the bounds have " + std::to_string(n) + " atoms"), std::string::npos) << e;
  }
  {  // all points on a line: rank 1, the Cholesky embedding needs 3 positive pivots
    Matrix<double> g(n, n, 0.0);
    for (std::size_t i = 0; i < n; ++i)
      for (std::size_t j = 0; j < n; ++j) g(i, j) = (double(i) - n / 2.0) * (double(j) - n / 2.0);
    auto node = make("distgeom.embed");
    node->set_input("metric", Value::make(std::move(g)));
    node->set_input("bounds", Value::of<DistanceBounds>(c.bounds));
    node->set_param("dimensions", std::int64_t{3});
    RecordingContext ctx;
    const auto e = error_of(*node, ctx);
    EXPECT_EQ(e.rfind("embed (cholesky): the metric matrix has only 1 positive pivots (need 3)", 0), 0u) << e;
  }
  {  // handedness asked for, but the bounds hold no N, CA, C, CB of one residue
    Structure s = peptide();
    for (auto& a : s.atoms)
      if (a.name == "CB") a.name = "CX";
    Matrix<double> g(n, n, 0.0);
    for (std::size_t i = 0; i < n; ++i) g(i, i) = 1.0 + double(i);
    auto node = make("distgeom.embed");
    node->set_input("metric", Value::make(std::move(g)));
    node->set_input("bounds", Value::of<DistanceBounds>(c.bounds));
    node->set_input("structure", Value::make(std::move(s)));
    RecordingContext ctx;
    const auto e = error_of(*node, ctx);
    EXPECT_NE(e.find("no residue has all of N, CA, C and CB"), std::string::npos) << e;
  }
}

// The separate chain metrize -> metric_matrix -> embed -> refine for one seed: the refine node
// after its run (in rctx).
std::unique_ptr<Node> refined_chain(const Chain& c, std::int64_t seed, std::int64_t iterations,
                                    RecordingContext& rctx) {
  RecordingContext ctx;
  auto m = make("distgeom.metrize");
  m->set_input("bounds", Value::of<DistanceBounds>(c.smoothed));
  m->set_param("seed", seed);
  m->execute(ctx);
  auto g = make("distgeom.metric_matrix");
  g->set_input("distances", m->output("distances"));
  g->execute(ctx);
  auto e = make("distgeom.embed");
  e->set_input("metric", g->output("metric"));
  e->set_input("bounds", Value::of<DistanceBounds>(c.smoothed));
  e->set_input("structure", Value::make(peptide()));
  e->set_param("pivot_fraction", 0.25);
  e->execute(ctx);
  auto r = make("distgeom.refine");
  r->set_input("coordinates", e->output("coordinates"));
  r->set_input("bounds", Value::of<DistanceBounds>(c.bounds));
  r->set_input("structure", Value::make(peptide()));
  r->set_param("max_iterations", iterations);
  r->execute(rctx);
  return r;
}
std::shared_ptr<const Structure> separate_chain(const Chain& c, std::int64_t seed, std::int64_t iterations) {
  RecordingContext ctx;
  return refined_chain(c, seed, iterations, ctx)->output("structure").as<Structure>();
}

// A refined structure that still violates its bounds by more than 0.5 Å says so (QA: a kept
// trial with 24,360 upper violations, no word); a converged one does not.
TEST(RefineNode, WarnsWhenTheStructureStillViolatesItsBounds) {
  const auto c = bounds_chain();
  for (const std::int64_t iterations : {std::int64_t{1}, std::int64_t{5000}}) {
    RecordingContext rctx;
    const auto r = refined_chain(c, 3, iterations, rctx);
    const auto& t = *r->output("report").as<Table>();
    std::int64_t violations = 0;
    for (const auto& row : t.rows) {
      const auto& name = std::get<std::string>(row[0]);
      if (name == "upper_violations_gt_0_5A" || name == "lower_violations_gt_0_5A")
        violations += std::get<std::int64_t>(row[1]);
    }
    bool warned = false;
    for (const auto& w : rctx.warnings())
      warned = warned || w.find("the refined structure still violates") != std::string::npos;
    EXPECT_EQ(warned, violations > 0) << iterations << " iterations, " << violations << " violations";
    if (iterations == 1) {
      EXPECT_GT(violations, 0);
    } else {
      EXPECT_EQ(violations, 0);
    }
  }
}

std::unique_ptr<Node> trials_node(const Chain& c, std::int64_t trials, std::int64_t threads, std::int64_t iterations) {
  auto node = make("distgeom.embed_and_refine");
  node->set_input("bounds", Value::of<DistanceBounds>(c.bounds));
  node->set_input("smoothed", Value::of<DistanceBounds>(c.smoothed));
  node->set_input("structure", Value::make(peptide()));
  node->set_param("trials", trials);
  node->set_param("threads", threads);
  node->set_param("seed", std::int64_t{3});
  node->set_param("pivot_fraction", 0.25);
  node->set_param("max_iterations", iterations);
  return node;
}

TEST(EmbedAndRefineNode, OneTrialIsExactlyTheSeparateChain) {
  const auto c = bounds_chain();
  const auto ref = separate_chain(c, 3, 400);
  auto node = trials_node(c, 1, 1, 400);
  RecordingContext ctx;
  node->execute(ctx);
  const auto got = node->output("structure").as<Structure>();
  ASSERT_EQ(got->models[0].size(), ref->models[0].size());
  EXPECT_EQ(got->models[0], ref->models[0]);  // bit for bit
}

TEST(EmbedAndRefineNode, KeepsTheLowestDgErrorWhateverTheThreadCount) {
  const auto c = bounds_chain();
  std::shared_ptr<const Structure> first;
  std::shared_ptr<const Table> first_trials;
  for (std::int64_t threads : {1, 2, 3}) {
    auto node = trials_node(c, 3, threads, 400);
    RecordingContext ctx;
    node->execute(ctx);
    const auto s = node->output("structure").as<Structure>();
    const auto t = node->output("trials").as<Table>();
    ASSERT_EQ(t->rows.size(), 3u);
    // The kept trial has the lowest error; its seed is in the report.
    const int ce = t->column("dg_error"), ck = t->column("kept");
    std::size_t best = 0;
    for (std::size_t k = 1; k < 3; ++k)
      if (std::get<double>(t->rows[k][ce]) < std::get<double>(t->rows[best][ce])) best = k;
    for (std::size_t k = 0; k < 3; ++k) EXPECT_EQ(std::get<std::int64_t>(t->rows[k][ck]), k == best ? 1 : 0);
    EXPECT_EQ(std::get<std::string>(t->rows[0][t->column("seed")]), "3");  // trial 0 uses the seed itself
    if (!first) {
      first = s;
      first_trials = t;
    } else {
      EXPECT_EQ(s->models[0], first->models[0]) << threads << " threads";
      EXPECT_EQ(t->rows, first_trials->rows) << threads << " threads";
    }
  }
}

// QA: best_seed was written as a wrapped signed integer that the seed parameter refused, so the
// kept trial could not be repeated; now seed + first_trial repeat it exactly, seeds are exact text.
TEST(EmbedAndRefineNode, TheKeptTrialRepeatsFromSeedAndFirstTrial) {
  const auto c = bounds_chain();
  auto node = trials_node(c, 3, 2, 400);
  RecordingContext ctx;
  node->execute(ctx);
  const auto all = node->output("structure").as<Structure>();
  const auto t = node->output("trials").as<Table>();
  const auto rep = node->output("report").as<Table>();
  std::int64_t best = -1;
  std::string best_seed;
  for (const auto& row : rep->rows) {
    if (std::get<std::string>(row[0]) == "best_trial") best = std::get<std::int64_t>(row[1]);
    if (std::get<std::string>(row[0]) == "best_seed") best_seed = std::get<std::string>(row[1]);
  }
  ASSERT_GE(best, 0);
  EXPECT_EQ(best_seed, std::get<std::string>(t->rows[std::size_t(best)][t->column("seed")]));
  EXPECT_EQ(std::get<std::string>(t->rows[1][t->column("seed")]), std::to_string(distgeom::trial_seed(3, 1)));
  auto again = trials_node(c, 1, 1, 400);
  again->set_param("first_trial", best);
  RecordingContext ctx2;
  again->execute(ctx2);
  EXPECT_EQ(again->output("structure").as<Structure>()->models[0], all->models[0]);  // bit for bit
  const auto t2 = again->output("trials").as<Table>();
  EXPECT_EQ(std::get<std::int64_t>(t2->rows[0][t2->column("trial")]), best);
  EXPECT_EQ(std::get<std::string>(t2->rows[0][t2->column("seed")]), best_seed);
}

// The two hands refined in two threads give exactly what one after the other gives.
TEST(EmbedAndRefineTrials, ParallelHandsGiveTheSameResult) {
  const auto c = bounds_chain();
  distgeom::TrialProblem p;
  p.n = c.bounds->size();
  p.smoothed_lower = c.smoothed->lower.span();
  p.smoothed_upper = c.smoothed->upper.span();
  p.lower = c.bounds->lower.span();
  p.upper = c.bounds->upper.span();
  distgeom::TrialOptions o;
  o.trials = 3;
  o.seed = 5;
  o.threads = 1;
  o.mirror_trial = true;
  o.refine.max_iterations = 300;
  const auto in_turn = distgeom::run_trials(p, o);
  o.parallel_hands = true;
  const auto parallel = distgeom::run_trials(p, o);
  ASSERT_EQ(parallel.trials.size(), in_turn.trials.size());
  for (std::size_t t = 0; t < in_turn.trials.size(); ++t) {
    EXPECT_EQ(parallel.trials[t].error, in_turn.trials[t].error) << "trial " << t;
    EXPECT_EQ(parallel.trials[t].error_other_hand, in_turn.trials[t].error_other_hand) << "trial " << t;
    EXPECT_EQ(parallel.trials[t].mirror_won, in_turn.trials[t].mirror_won) << "trial " << t;
    EXPECT_TRUE(std::isfinite(in_turn.trials[t].error_other_hand)) << "trial " << t;  // both hands refined
  }
  EXPECT_EQ(parallel.best, in_turn.best);
  EXPECT_EQ(parallel.refined.coords, in_turn.refined.coords);  // bit for bit
}

// QA: one trial whose embedding failed failed the whole best-of-N node, and a nonsense structure
// was kept and reported as done (here NaN coordinates, whose DG error read 0).
TEST(EmbedAndRefineTrials, FailedAndDivergedTrialsAreLeftOut) {
  const auto c = bounds_chain();
  distgeom::TrialProblem p;
  p.n = c.bounds->size();
  p.smoothed_lower = c.smoothed->lower.span();
  p.smoothed_upper = c.smoothed->upper.span();
  p.lower = c.bounds->lower.span();
  p.upper = c.bounds->upper.span();
  distgeom::TrialOptions o;
  o.trials = 4;
  o.seed = 3;
  o.threads = 2;
  o.pivot_fraction = 0.25;
  o.refine.max_iterations = 300;
  const std::uint64_t throws = distgeom::trial_seed(3, 1), diverges = distgeom::trial_seed(3, 2);
  std::atomic<bool> all_fail{false};
  p.make_embedder = [&]() -> distgeom::TrialEmbedder {
    return [&](std::span<const double> d, std::size_t n, std::size_t dim, distgeom::EmbedMethod m, std::size_t rank,
               std::span<const unsigned char> cand) {
      // the seed is not passed: recognise the trial by its distances (metrize's output for that seed)
      std::vector<double> g(n * n);
      distgeom::metric_matrix(d, n, g);
      auto e = distgeom::embed(g, n, dim, m, rank, cand);
      if (all_fail.load()) throw std::runtime_error("the metric matrix has only 3 positive pivots (need 4)");
      for (std::uint64_t s : {throws, diverges}) {
        const auto ds = distgeom::metrize(p.smoothed_lower, p.smoothed_upper, n, [&] {
          auto x = o.metrize;
          x.seed = s;
          return x;
        }());
        if (std::equal(ds.begin(), ds.end(), d.begin())) {
          if (s == throws) throw std::runtime_error("the metric matrix has only 3 positive pivots (need 4)");
          for (double& x : e.coords) x = std::numeric_limits<double>::quiet_NaN();
        }
      }
      return e;
    };
  };
  const auto r = distgeom::run_trials(p, o);
  ASSERT_EQ(r.trials.size(), 4u);
  EXPECT_EQ(r.trials[1].failure, "the metric matrix has only 3 positive pivots (need 4)");
  EXPECT_EQ(r.trials[2].failure.rfind("refine: the starting coordinate of atom 0 is not finite", 0), 0u)
      << r.trials[2].failure;
  EXPECT_TRUE(r.trials[0].failure.empty());
  EXPECT_TRUE(r.trials[3].failure.empty());
  EXPECT_TRUE(r.best == 0 || r.best == 3);
  EXPECT_TRUE(std::isnan(r.trials[1].error));
  all_fail = true;
  try {
    (void)distgeom::run_trials(p, o);
    ADD_FAILURE() << "no error when every trial fails";
  } catch (const std::runtime_error& e) {
    EXPECT_EQ(std::string(e.what()),
              "every trial failed; trial 0 (seed 3): the metric matrix has only 3 positive "
              "pivots (need 4)");
  }
}

// Every trial failing names the first failure, and for too few positive pivots the eigen method.
TEST(EmbedAndRefineNode, EveryTrialFailingIsAnErrorThatNamesTheWayOut) {
  const auto c = bounds_chain();
  DistanceBounds line = *c.bounds;  // exact distances of points on a line: metric matrix of rank 1
  const std::size_t n = line.size();
  for (std::size_t i = 0; i < n; ++i)
    for (std::size_t j = 0; j < n; ++j) line.lower(i, j) = line.upper(i, j) = 1.5 * std::abs(double(i) - double(j));
  Chain flat;
  flat.bounds = flat.smoothed = std::make_shared<const DistanceBounds>(line);
  auto node = trials_node(flat, 3, 1, 10);
  node->set_param("pivot_fraction", 1.0);
  RecordingContext ctx;
  const auto e = error_of(*node, ctx);
  EXPECT_NE(e.find("every trial failed; trial 0 (seed 3): embed (cholesky): the metric matrix has only 1 positive "
                   "pivots (need 4)"),
            std::string::npos)
      << e;
  EXPECT_NE(e.find("method eigen embeds from the largest eigenvalues and needs no positive pivots"), std::string::npos)
      << e;
}

TEST(EmbedAndRefineNode, MismatchedBoundsAreAnInputError) {
  const auto c = bounds_chain();
  Chain other = c;
  DistanceBounds fewer = *c.smoothed;
  fewer.atom_index.pop_back();
  other.smoothed = std::make_shared<const DistanceBounds>(fewer);
  auto node = trials_node(other, 1, 1, 10);
  RecordingContext ctx;
  const auto e = error_of(*node, ctx);
  EXPECT_NE(e.find("'bounds'"), std::string::npos) << e;
  EXPECT_NE(e.find("not over the same atoms"), std::string::npos) << e;
}

TEST(RefineNode, CancelStopsAtTheNextCheck) {
  // The refinement reports progress (and checks cancellation) every 10 L-BFGS iterations:
  // on this 100-atom problem that is well under 100 ms. Once cancelled() turns true the node
  // must stop at that check with gemflow::Cancelled (not a node failure).
  const auto c = bounds_chain();
  RecordingContext pre;
  auto m = make("distgeom.metrize");
  m->set_input("bounds", Value::of<DistanceBounds>(c.smoothed));
  m->execute(pre);
  auto g = make("distgeom.metric_matrix");
  g->set_input("distances", m->output("distances"));
  g->execute(pre);
  auto e = make("distgeom.embed");
  e->set_input("metric", g->output("metric"));
  e->set_input("bounds", Value::of<DistanceBounds>(c.smoothed));
  e->execute(pre);
  auto r = make("distgeom.refine");
  r->set_input("coordinates", e->output("coordinates"));
  r->set_input("bounds", Value::of<DistanceBounds>(c.bounds));
  r->set_input("structure", Value::make(peptide()));
  r->set_param("max_iterations", std::int64_t{100000});
  RecordingContext ctx;
  ctx.cancel_after_progress(5);
  EXPECT_THROW(r->execute(ctx), Cancelled);
  EXPECT_EQ(ctx.progress_calls(), 5u);  // no progress after the cancelling check
}

TEST(RefineAlgo, ChecksForCancellationAtLeastEveryTenIterations) {
  const auto c = bounds_chain();
  const std::size_t n = c.bounds->size();
  std::vector<double> x(n * 3);
  for (std::size_t i = 0; i < x.size(); ++i) x[i] = std::sin(double(i) * 1.7) * 10.0;  // a poor start
  distgeom::RefineOptions o;
  o.max_iterations = 600;
  std::size_t calls = 0;
  const auto res = distgeom::refine(x, n, 3, c.bounds->lower.span(), c.bounds->upper.span(), {}, {}, o,
                                    [&](double, const std::string&) {
                                      ++calls;
                                      return true;
                                    });
  EXPECT_GE(calls, res.iterations / 10);
}

TEST(RefineNode, WrongCoordinateShapeIsNamed) {
  const auto c = bounds_chain();
  auto r = make("distgeom.refine");
  r->set_input("coordinates", Value::make(Matrix<double>(c.bounds->size(), 2, 0.0)));
  r->set_input("bounds", Value::of<DistanceBounds>(c.bounds));
  r->set_input("structure", Value::make(peptide()));
  RecordingContext ctx;
  const auto e = error_of(*r, ctx);
  EXPECT_NE(e.find("coordinates are " + std::to_string(c.bounds->size()) + "×2, expected"), std::string::npos) << e;
}

}  // namespace

// Device resolution of the embedding nodes, testable without a GPU: an absent CUDA device (node
// parameter or the run's --device override) is a DeviceError naming it, never a silent CPU
// fallback; method: eigen has no CUDA path (DeviceError naming 'method' for an explicit cuda,
// CPU with a log line for auto); cpu records cpu, auto records what it picked. The GPU results
// themselves are checked in embedding_gpu_test.cpp.
TEST(EmbeddingNodesDevice, AbsentCudaDeviceIsADeviceErrorNamingIt) {
  const int count = cuda_device_count();
  const std::string absent = "cuda:" + std::to_string(count);  // never present
  for (const std::string id : {"distgeom.metric_matrix", "distgeom.embed", "distgeom.embed_and_refine"}) {
    for (const bool via_override : {false, true}) {
      auto node = make(id);
      RecordingContext ctx;
      if (via_override) ctx.set_device_override(absent);
      else node->set_param("device", absent);
      try {
        node->execute(ctx);
        ADD_FAILURE() << id << ": " << absent << " did not fail";
      } catch (const DeviceError& e) {
        const std::string m = e.what();
        EXPECT_NE(m.find("device " + absent + " requested"), std::string::npos) << id << ": " << m;
        EXPECT_TRUE(m.find("no CUDA device is present") != std::string::npos ||
                    m.find("CUDA device(s) are present") != std::string::npos ||
                    m.find("built without CUDA") != std::string::npos)
            << id << ": " << m;
      } catch (const std::exception& e) {
        ADD_FAILURE() << id << ": not a DeviceError: " << e.what();
      }
      EXPECT_EQ(ctx.records().count("device_used"), 0u) << id;
    }
    if (count == 0) {  // plain `cuda` on a machine without a device
      auto node = make(id);
      RecordingContext ctx;
      node->set_param("device", std::string("cuda"));
      EXPECT_THROW(node->execute(ctx), DeviceError) << id;
    }
  }
}

TEST(EmbeddingNodesDevice, EigenHasNoCudaPathAndSaysSo) {
  for (const std::string id : {"distgeom.embed", "distgeom.embed_and_refine"}) {
    for (const std::string dev : {"cuda", "cuda:0"}) {
      auto node = make(id);
      node->set_param("method", std::string("eigen"));
      node->set_param("device", dev);
      RecordingContext ctx;
      try {
        node->execute(ctx);
        ADD_FAILURE() << id << ": eigen on " << dev << " did not fail";
      } catch (const DeviceError& e) {
        const std::string m = e.what();
        EXPECT_EQ(m.rfind("device '" + dev + "' requested, but parameter 'method' = eigen has no CUDA path", 0), 0u)
            << m;
      }
    }
  }
  // auto + eigen: the CPU, with a log line when a device is present
  const auto c = bounds_chain();
  const std::size_t n = c.bounds->size();
  Matrix<double> g(n, n, 0.0);
  for (std::size_t i = 0; i < n; ++i) g(i, i) = 1.0 + double(i);
  auto node = make("distgeom.embed");
  node->set_input("metric", Value::make(std::move(g)));
  node->set_input("bounds", Value::of<DistanceBounds>(c.bounds));
  node->set_param("method", std::string("eigen"));
  RecordingContext ctx;
  EXPECT_EQ(error_of(*node, ctx), "(no error)");
  EXPECT_EQ(std::get<std::string>(ctx.records().at("device_used")), "cpu");
  if (cuda_device_count() > 0) {
    bool logged = false;
    for (const auto& m : ctx.messages(LogLevel::Info)) logged |= m.find("eigen has no CUDA path") != std::string::npos;
    EXPECT_TRUE(logged);
  }
}

TEST(EmbeddingNodesDevice, CpuRecordsCpuAndAutoRecordsWhatItPicked) {
  auto node = make("distgeom.metric_matrix");
  node->set_input("distances", Value::make(Matrix<double>(3, 3, std::vector<double>{0, 1, 1, 1, 0, 1, 1, 1, 0})));
  for (const std::string dev : {"cpu", "auto"}) {
    RecordingContext ctx;
    node->set_param("device", dev);
    EXPECT_EQ(error_of(*node, ctx), "(no error)") << dev;
    ASSERT_EQ(ctx.records().count("device_used"), 1u);
    const std::string want = dev == "cpu" || cuda_device_count() == 0 ? "cpu" : "cuda:0";
    EXPECT_EQ(std::get<std::string>(ctx.records().at("device_used")), want) << dev;
    const auto g = node->output("metric").as<Matrix<double>>();
    // equilateral triangle of side 1: G_ii = 1/3, G_ij = −1/6
    for (std::size_t i = 0; i < 3; ++i)
      for (std::size_t j = 0; j < 3; ++j) EXPECT_NEAR((*g)(i, j), i == j ? 1.0 / 3 : -1.0 / 6, 1e-15) << dev;
  }
}
