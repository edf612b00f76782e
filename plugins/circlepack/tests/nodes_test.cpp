// circlepack nodes (gemflow::testing::RecordingContext): outputs, reports, and the bad inputs of
// issue 37 each refused with one clear error.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include <gemflow/device.hpp>
#include <gemflow/node.hpp>
#include <gemflow/registry.hpp>
#include <gemflow/testing.hpp>
#include <gemflow/types.hpp>

#include "register.hpp"

namespace {

using namespace gemflow;
using gemflow::testing::error_of;
using gemflow::testing::RecordingContext;

#define EXPECT_CONTAINS(text, part) EXPECT_NE(std::string(text).find(part), std::string::npos) << (text)

Registry& registry() {
  static Registry reg;
  static bool once = [] {
    PluginRegistrar r(reg, "circlepack-test");
    circlepack::register_lattice_nodes(r);
    circlepack::register_pack_nodes(r);
    return true;
  }();
  (void)once;
  return reg;
}
std::unique_ptr<Node> make(const std::string& id) { return gemflow::testing::make_node(registry(), id); }

std::shared_ptr<const TriMesh> lattice(std::int64_t layers) {
  auto n = make("circlepack.triangle_lattice");
  n->set_param("layers", layers);
  RecordingContext ctx;
  EXPECT_EQ(error_of(*n, ctx), "(no error)");
  return n->output("mesh").as<TriMesh>();
}

double metric(const Table& t, const std::string& name) {
  for (const auto& r : t.rows)
    if (std::get<std::string>(r[0]) == name) {
      if (const auto* d = std::get_if<double>(&r[1])) return *d;
      if (const auto* i = std::get_if<std::int64_t>(&r[1])) return static_cast<double>(*i);
    }
  ADD_FAILURE() << "no metric " << name;
  return NAN;
}

TEST(TriangleLatticeNode, BuildsTheSeedsTriangleAndRefusesBadSizes) {
  const auto m = lattice(10);
  EXPECT_EQ(m->vertices.size(), 55u);
  EXPECT_EQ(m->faces.size(), 81u);
  ASSERT_EQ(m->boundary.size(), 1u);
  EXPECT_EQ(m->boundary[0].size(), 27u);
  for (std::int64_t bad : {0, 1}) {
    auto n = make("circlepack.triangle_lattice");
    n->set_param("layers", bad);
    RecordingContext ctx;
    EXPECT_CONTAINS(error_of(*n, ctx), "at least 2 layers");
  }
  auto n = make("circlepack.triangle_lattice");
  n->set_param("layers", std::int64_t{100000000});
  RecordingContext ctx;
  const std::string e = error_of(*n, ctx);
  EXPECT_CONTAINS(e, "parameter 'layers' = 100000000: the triangle lattice has 5e+15 circles");
  EXPECT_CONTAINS(e, "GiB");
}

// The lattices' least sizes are in their specs, so that `gemflow validate` refuses a size the node
// would refuse only when it runs (the spec said minimum 0 for both: validate passed, run failed).
TEST(LatticeNodes, TheLeastSizeIsAParameterLimit) {
  const struct {
    const char* node;
    const char* param;
    std::int64_t least;
  } cases[] = {{"circlepack.triangle_lattice", "layers", 2}, {"circlepack.disk_lattice", "rings", 1}};
  for (const auto& c : cases) {
    const auto specs = make(c.node)->param_specs();
    const auto it = std::find_if(specs.begin(), specs.end(), [&](const ParamSpec& s) { return s.name == c.param; });
    ASSERT_NE(it, specs.end()) << c.node;
    EXPECT_EQ(it->check(ParamValue{c.least}), std::nullopt) << c.node;
    EXPECT_EQ(it->check(ParamValue{c.least - 1}).value_or("(accepted)"),
              std::to_string(c.least - 1) + " is below the minimum " + std::to_string(c.least))
        << c.node;
  }
}

TEST(PackNode, PacksTheTriangleWithLinesAndReports) {
  auto n = make("circlepack.pack");
  n->set_input("mesh", Value::of<TriMesh>(lattice(10)));
  n->set_param("boundary", std::string("lines"));
  n->set_param("algorithm", std::string("cs_plain"));
  n->set_param("start", std::string("varied"));
  n->set_param("tolerance", 1e-8);
  RecordingContext ctx;
  ASSERT_EQ(error_of(*n, ctx), "(no error)");
  const auto p = n->output("packing").as<CirclePacking>();
  EXPECT_EQ(p->size(), 55u);
  EXPECT_EQ(p->validate(), std::nullopt);
  EXPECT_LT(p->tangency_error(), 1e-7);
  const auto rep = n->output("report").as<Table>();
  EXPECT_EQ(metric(*rep, "iterations"), 161);  // pack_test.cpp: SeedTriangle
  EXPECT_LT(metric(*rep, "angle_error"), 1e-8);
  const auto hist = n->output("history").as<Table>();
  EXPECT_EQ(hist->rows.size(), 162u);  // the start and every sweep
  EXPECT_FALSE(ctx.fractions().empty());
  // the packing converging, for Studio: after the first sweep at least
  ASSERT_FALSE(ctx.previews().empty());
  EXPECT_EQ(ctx.previews().front().port, "packing");
  EXPECT_EQ(ctx.previews().front().value.as<CirclePacking>()->size(), 55u);
  // headless: no layout made for a preview, the same packing
  RecordingContext headless;
  headless.set_previews_wanted(false);
  ASSERT_EQ(error_of(*n, headless), "(no error)");
  EXPECT_TRUE(headless.previews().empty());
  EXPECT_EQ(n->output("packing").as<CirclePacking>()->size(), 55u);
}

// Parameter values wrong whatever the mesh were reported as "input 'mesh': 2 corners: a polygon
// needs at least 3", "input 'mesh': corner angle 3.141593 rad is outside (0, π)", ...: they name
// the parameter now.
TEST(PackNode, ParameterErrorsNameTheParameter) {
  const auto m = lattice(6);
  struct Case {
    std::vector<std::pair<std::string, ParamValue>> params;
    std::string error;
  };
  const Case cases[] = {
      {{{"boundary", std::string("fixed_radii")}, {"boundary_radius", 0.0}},
       "parameter 'boundary_radius' = 0: boundary fixed_radii needs a radius > 0"},
      {{{"boundary", std::string("lines")}, {"corners", std::int64_t{2}}},
       "parameter 'corners' = 2: a polygon needs at least 3 corners"},
      {{{"boundary", std::string("angle_sums")}, {"corner_angle", 180.0}},
       "parameter 'corner_angle' = 180 deg: a corner's interior angle must be below 180"},
      {{{"boundary", std::string("angle_sums")}, {"normalisation", std::string("polygon")}},
       "parameter 'normalisation' = polygon needs boundary lines"},
      // more corners than the 15 boundary vertices of the 6-layer triangle
      {{{"boundary", std::string("lines")}, {"corners", std::int64_t{16}}},
       "parameter 'corners' = 16: the mesh's boundary has only 15 vertices"},
      {{{"boundary", std::string("angle_sums")}, {"corners", std::int64_t{9223372036854775807}}},
       "parameter 'corners' = 9223372036854775807: the mesh's boundary has only 15 vertices"},
  };
  for (const auto& c : cases) {
    auto n = make("circlepack.pack");
    n->set_input("mesh", Value::of<TriMesh>(m));
    for (const auto& [name, value] : c.params) n->set_param(name, value);
    RecordingContext ctx;
    const std::string e = error_of(*n, ctx);
    EXPECT_CONTAINS(e, c.error);
    EXPECT_EQ(e.find("input 'mesh'"), std::string::npos) << e;
  }
  // the values next to them still pack
  auto ok = make("circlepack.pack");
  ok->set_input("mesh", Value::of<TriMesh>(m));
  ok->set_param("boundary", std::string("lines"));
  ok->set_param("corners", std::int64_t{3});
  ok->set_param("normalisation", std::string("polygon"));
  RecordingContext ctx;
  EXPECT_EQ(error_of(*ok, ctx), "(no error)");
}

// A corner_angle that Gauss–Bonnet forbids with the corners given failed only when the node ran
// ("input 'mesh': boundary targets contradict Gauss–Bonnet"); it is a rule between the two
// parameters now, checked when the workflow is validated.
TEST(PackNode, CornerAngleMustFitCornersAtValidation) {
  const NodeSpec& spec = registry().find_node("circlepack.pack")->spec;
  const auto broken = [&](const std::string& bc, std::int64_t corners, double angle) -> std::string {
    const std::map<std::string, ParamValue> set{{"boundary", bc}, {"corners", corners}, {"corner_angle", angle}};
    const auto value_of = [&](const std::string& name) -> const ParamValue& {
      const auto it = set.find(name);
      return it != set.end() ? it->second : spec.param(name)->default_value;
    };
    const auto rules = spec.broken_rules(value_of);
    return rules.empty() ? "" : rule_message(*rules.front(), value_of);
  };
  for (const char* bc : {"angle_sums", "lines"}) {
    SCOPED_TRACE(bc);
    EXPECT_EQ(broken(bc, 3, 0.0), "");   // 0: the regular polygon's
    EXPECT_EQ(broken(bc, 3, 60.0), "");  // 3 · 120 = 360
    EXPECT_EQ(broken(bc, 4, 90.0), "");
    EXPECT_EQ(broken(bc, 6, 120.0), "");
    EXPECT_EQ(broken(bc, 0, 90.0), "");   // automatic corners: 4 fit
    EXPECT_EQ(broken(bc, 0, 179.5), "");  // 720 corners fit
    EXPECT_CONTAINS(broken(bc, 3, 90.0), "corner_angle = 90.0 does not fit corners = 3 (");
    EXPECT_CONTAINS(broken(bc, 4, 60.0), "corner_angle = 60.0 does not fit corners = 4");
    EXPECT_CONTAINS(broken(bc, 5, 90.0001), "corner_angle = 90.0001 does not fit corners = 5");
    EXPECT_CONTAINS(broken(bc, 0, 100.0), "corner_angle = 100.0 does not fit corners = 0");  // 4.5 corners
    EXPECT_CONTAINS(broken(bc, 0, 30.0), "corner_angle = 30.0 does not fit corners = 0");    // 2.4 corners
    EXPECT_CONTAINS(broken(bc, 3, 180.0), "corner_angle = 180.0 does not fit corners = 3");
  }
  EXPECT_EQ(broken("fixed_radii", 3, 90.0), "");  // the corners are not used
  EXPECT_EQ(broken("maximal", 0, 100.0), "");
}

// fp32 with a tolerance it cannot reach (1e-15) ran 10⁶ sweeps before warning; it is refused at
// validation, stating the floor.
TEST(PackNode, Fp32ToleranceBelowItsFloorIsRefusedAtValidation) {
  const NodeSpec& spec = registry().find_node("circlepack.pack")->spec;
  const auto broken = [&](const std::string& precision, double tolerance) -> std::string {
    const std::map<std::string, ParamValue> set{{"precision", precision}, {"tolerance", tolerance}};
    const auto value_of = [&](const std::string& name) -> const ParamValue& {
      const auto it = set.find(name);
      return it != set.end() ? it->second : spec.param(name)->default_value;
    };
    const auto rules = spec.broken_rules(value_of);
    return rules.empty() ? "" : rule_message(*rules.front(), value_of);
  };
  EXPECT_CONTAINS(broken("fp32", 1e-15), "tolerance = 1e-15 must be at least 1e-06 when precision is fp32 (");
  EXPECT_CONTAINS(broken("fp32", 5e-7), "must be at least 1e-06");
  EXPECT_EQ(broken("fp32", 1e-6), "");
  EXPECT_EQ(broken("fp32", 1e-3), "");
  EXPECT_EQ(broken("fp64", 1e-15), "");
}

TEST(PackNode, RefusesImpossibleRequests) {
  const auto m = lattice(6);
  struct Case {
    std::string param, value, error;
  };
  const Case cases[] = {
      {"algorithm", "gpu_coloured_gs", "needs a CUDA device, but the device is cpu"},
      {"boundary", "maximal", "has all three vertices on the boundary (an ear)"},
  };
  for (const auto& c : cases) {
    auto n = make("circlepack.pack");
    n->set_input("mesh", Value::of<TriMesh>(m));
    n->set_param(c.param, c.value);
    RecordingContext ctx;
    EXPECT_CONTAINS(error_of(*n, ctx), c.error);
  }
  auto n = make("circlepack.pack");
  n->set_input("mesh", Value::of<TriMesh>(m));
  n->set_param("boundary", std::string("angle_sums"));
  n->set_param("corners", std::int64_t{3});
  n->set_param("corner_angle", 90.0);
  RecordingContext ctx;
  EXPECT_CONTAINS(error_of(*n, ctx), "input 'mesh': boundary targets contradict Gauss–Bonnet");
  // device cuda without a device: the device parameter fails, no CPU fallback
  if (gemflow::cuda_device_count() == 0) {
    auto g = make("circlepack.pack");
    g->set_input("mesh", Value::of<TriMesh>(m));
    g->set_param("device", std::string("cuda"));
    RecordingContext c3;
    EXPECT_CONTAINS(error_of(*g, c3), "parameter 'device' = cuda");
  }
  // auto says which algorithm it used
  auto a = make("circlepack.pack");
  a->set_input("mesh", Value::of<TriMesh>(m));
  RecordingContext c4;
  ASSERT_EQ(error_of(*a, c4), "(no error)");
  EXPECT_EQ(std::get<std::string>(c4.records().at("algorithm_used")), "newton");
  ASSERT_FALSE(c4.infos().empty());
  EXPECT_CONTAINS(c4.infos().front(), "algorithm auto: using newton on cpu");
  // a closed surface
  TriMesh tet;
  tet.vertices = {{0, 0, 0}, {1, 0, 0}, {0, 1, 0}, {0, 0, 1}};
  tet.faces = {{0, 2, 1}, {0, 1, 3}, {1, 2, 3}, {0, 3, 2}};
  auto f = make("circlepack.flatten");
  f->set_input("mesh", Value::make(tet));
  RecordingContext ctx2;
  EXPECT_CONTAINS(error_of(*f, ctx2), "not a disk: 1 component, Euler characteristic 2 and 0 boundary loops");
}

// A user's report: a fan with a zero-area face (read with require: any) was flattened into flipped
// triangles of infinite conformal distortion with exit 0 (once its loops were kept: before, both
// nodes blamed a boundary edge). Flatten names the face; pack, which sees only the combinatorics,
// packs the fan.
TEST(FlattenNode, RefusesFacesOfZeroAreaWhichPackAccepts) {
  TriMesh fan;
  fan.vertices = {{0, 0, 0}, {1, 0, 0}, {1, 1e-12, 0}, {-0.5, 0.866, 0}, {-1, 0, 0}, {-0.5, -0.866, 0}, {0.5, -0.866, 0}};
  fan.faces = {{0, 1, 2}, {0, 2, 3}, {0, 3, 4}, {0, 4, 5}, {0, 5, 6}, {0, 6, 1}};
  fan.boundary = {{1, 2, 3, 4, 5, 6}};
  ASSERT_EQ(fan.validate(), std::nullopt);
  auto f = make("circlepack.flatten");
  f->set_input("mesh", Value::make(fan));
  RecordingContext c1;
  EXPECT_CONTAINS(error_of(*f, c1), "input 'mesh': 1 face(s) of zero area (0-based: 0)");
  auto p = make("circlepack.pack");
  p->set_input("mesh", Value::make(fan));
  RecordingContext c2;
  ASSERT_EQ(error_of(*p, c2), "(no error)");
  EXPECT_EQ(p->output("packing").as<CirclePacking>()->size(), 7u);
  // the same fan with the face opened up flattens
  fan.vertices[2] = {0.5, 0.866, 0};
  f->set_input("mesh", Value::make(fan));
  RecordingContext c3;
  EXPECT_EQ(error_of(*f, c3), "(no error)");
  // a single triangle: no interior vertex, said in the node's terms (not "fixed boundary radii")
  TriMesh one;
  one.vertices = {{0, 0, 0}, {1, 0, 0}, {0, 1, 0}};
  one.faces = {{0, 1, 2}};
  one.boundary = {{0, 1, 2}};
  for (const char* bc : {"geometry", "maximal"}) {
    f->set_input("mesh", Value::make(one));
    f->set_param("boundary", std::string(bc));
    RecordingContext c4;
    EXPECT_CONTAINS(error_of(*f, c4), "input 'mesh': all 3 vertices are on the boundary") << bc;
  }
}

// Extreme boundary radii (1e-300, 1e300) against unknowns starting at 1 would underflow or
// overflow Newton's weights and cs's updates. The packing is scale-invariant: every radius
// scales with the boundary radius, exactly.
TEST(PackNode, ExtremeBoundaryRadiiPackAtTheirScale) {
  auto d = make("circlepack.disk_lattice");
  d->set_param("rings", std::int64_t{4});
  RecordingContext c0;
  ASSERT_EQ(error_of(*d, c0), "(no error)");
  const auto m = d->output("mesh").as<TriMesh>();
  const auto packed = [&](const std::string& algorithm, const std::string& normalisation,
                          double radius) -> std::shared_ptr<const CirclePacking> {
    auto n = make("circlepack.pack");
    n->set_input("mesh", Value::of<TriMesh>(m));
    n->set_param("algorithm", algorithm);
    n->set_param("normalisation", normalisation);
    n->set_param("start", std::string("varied"));
    n->set_param("boundary_radius", radius);
    RecordingContext ctx;
    EXPECT_EQ(error_of(*n, ctx), "(no error)") << algorithm << " " << radius;
    EXPECT_LT(metric(*n->output("report").as<Table>(), "angle_error"), 1e-10) << algorithm << " " << radius;
    return n->output("packing").as<CirclePacking>();
  };
  for (const char* algorithm : {"newton", "cs"}) {
    SCOPED_TRACE(algorithm);
    const auto unit = packed(algorithm, "none", 1.0);
    ASSERT_NE(unit, nullptr);
    for (const double r : {1e-300, 1e-150, 1e150, 1e300}) {
      SCOPED_TRACE(r);
      const auto p = packed(algorithm, "none", r);
      ASSERT_NE(p, nullptr);
      ASSERT_EQ(p->size(), unit->size());
      for (std::size_t v = 0; v < p->size(); ++v) {
        EXPECT_NEAR(p->radii[v] / r, unit->radii[v], 1e-12 * unit->radii[v]) << v;
        EXPECT_NEAR(p->centres[v][0] / r, unit->centres[v][0], 1e-12 * (1 + std::abs(unit->centres[v][0]))) << v;
        EXPECT_NEAR(p->centres[v][1] / r, unit->centres[v][1], 1e-12 * (1 + std::abs(unit->centres[v][1]))) << v;
      }
      // in the unit disk the scale does not show at all
      const auto a = packed(algorithm, "unit_disk", 1.0), b = packed(algorithm, "unit_disk", r);
      ASSERT_NE(b, nullptr);
      for (std::size_t v = 0; v < a->size(); ++v) EXPECT_NEAR(b->radii[v], a->radii[v], 1e-12) << v;
    }
  }
  // a scale whose circles leave the doubles: refused, naming the parameter and the usable range
  for (const double r : {1e-310, 1e308}) {
    auto n = make("circlepack.pack");
    n->set_input("mesh", Value::of<TriMesh>(m));
    n->set_param("normalisation", std::string("none"));
    n->set_param("boundary_radius", r);
    RecordingContext ctx;
    const std::string e = error_of(*n, ctx);
    EXPECT_CONTAINS(e, "parameter 'boundary_radius' = " + std::string(r < 1 ? "1e-310" : "1e+308") + ": ");
    EXPECT_CONTAINS(e, "for this mesh it must be within [2.2");
    EXPECT_CONTAINS(e, "normalisation unit_disk does not depend on it");
  }
}

// A mesh at 1e-300 or 1e300 flattened with NaN boundary radii (squared edge lengths overflow) or
// infinite conformal distortion (areas underflow); a flattening is similar at every size.
TEST(FlattenNode, FlattensAMeshAtAnyScale) {
  auto d = make("circlepack.disk_lattice");
  d->set_param("rings", std::int64_t{3});
  RecordingContext c0;
  ASSERT_EQ(error_of(*d, c0), "(no error)");
  TriMesh m = *d->output("mesh").as<TriMesh>();
  for (auto& v : m.vertices) v[2] = 0.05 * (v[0] * v[0] - v[1] * v[1]);
  const auto flattened = [&](double scale, std::shared_ptr<const Table>* report) {
    TriMesh s = m;
    for (auto& v : s.vertices) v = {v[0] * scale, v[1] * scale, v[2] * scale};
    auto f = make("circlepack.flatten");
    f->set_input("mesh", Value::make(s));
    RecordingContext ctx;
    EXPECT_EQ(error_of(*f, ctx), "(no error)") << scale;
    *report = f->output("report").as<Table>();
    return f->output("flat").as<TriMesh>();
  };
  std::shared_ptr<const Table> r1;
  const auto unit = flattened(1.0, &r1);
  ASSERT_NE(unit, nullptr);
  for (const double scale : {1e-300, 1e-160, 1e160, 1e300}) {
    SCOPED_TRACE(scale);
    std::shared_ptr<const Table> rs;
    const auto flat = flattened(scale, &rs);
    ASSERT_NE(flat, nullptr);
    for (std::size_t v = 0; v < flat->vertices.size(); ++v)
      for (int k = 0; k < 2; ++k)
        EXPECT_NEAR(flat->vertices[v][k] / scale, unit->vertices[v][k], 1e-9 * (1 + std::abs(unit->vertices[v][k])));
    for (const char* name : {"conformal_distortion_mean", "angle_distortion_max_deg", "area_log_distortion_max_abs"})
      EXPECT_NEAR(metric(*rs, name), metric(*r1, name), 1e-9) << name;
    EXPECT_EQ(metric(*rs, "flipped_faces"), 0);
  }
}

TEST(FlattenNode, FlattensASaddleWithoutFlippedFaces) {
  // a hexagonal disk lifted onto a saddle
  auto d = make("circlepack.disk_lattice");
  d->set_param("rings", std::int64_t{5});
  RecordingContext c0;
  ASSERT_EQ(error_of(*d, c0), "(no error)");
  TriMesh m = *d->output("mesh").as<TriMesh>();
  for (auto& v : m.vertices) v[2] = 0.05 * (v[0] * v[0] - v[1] * v[1]);
  auto f = make("circlepack.flatten");
  f->set_input("mesh", Value::make(m));
  RecordingContext ctx;
  ASSERT_EQ(error_of(*f, ctx), "(no error)");
  const auto rep = f->output("report").as<Table>();
  EXPECT_LT(metric(*rep, "angle_error"), 1e-10);
  EXPECT_EQ(metric(*rep, "flipped_faces"), 0);
  EXPECT_LT(metric(*rep, "closing_error"), 1e-10);
  EXPECT_LT(metric(*rep, "conformal_distortion_mean"), 1.1);
  const auto flat = f->output("flat").as<TriMesh>();
  EXPECT_EQ(flat->vertices.size(), m.vertices.size());
  for (const auto& v : flat->vertices) EXPECT_EQ(v[2], 0.0);
  // the UVs: the 3D mesh keeps its vertices and faces and gains the flat mesh's (u, v), the
  // packing's centres
  const auto tex = f->output("mesh").as<TriMesh>();
  EXPECT_EQ(tex->vertices, m.vertices);
  EXPECT_EQ(tex->faces, m.faces);
  ASSERT_EQ(tex->uv.size(), m.vertices.size());
  EXPECT_EQ(tex->validate(), std::nullopt);
  const auto pk = f->output("packing").as<CirclePacking>();
  for (std::size_t v = 0; v < m.vertices.size(); ++v) {
    EXPECT_EQ(tex->uv[v][0], flat->vertices[v][0]);
    EXPECT_EQ(tex->uv[v][1], flat->vertices[v][1]);
    EXPECT_EQ(tex->uv[v], pk->centres[v]);
  }
  EXPECT_EQ(flat->uv, tex->uv);
  // draw it
  auto dr = make("circlepack.draw");
  dr->set_input("packing", f->output("packing"));
  dr->set_param("width", std::int64_t{64});
  dr->set_param("height", std::int64_t{48});
  RecordingContext c2;
  ASSERT_EQ(error_of(*dr, c2), "(no error)");
  const auto img = dr->output("image").as<Image>();
  EXPECT_EQ(img->width, 64u);
  EXPECT_EQ(img->height, 48u);
  EXPECT_EQ(img->validate(), std::nullopt);
}

TEST(LayoutNode, RelaysOutAPackingAndReportsTheClosingError) {
  auto n = make("circlepack.pack");
  n->set_input("mesh", Value::of<TriMesh>(lattice(8)));
  n->set_param("boundary", std::string("lines"));
  n->set_param("start", std::string("varied"));
  RecordingContext ctx;
  ASSERT_EQ(error_of(*n, ctx), "(no error)");
  auto l = make("circlepack.layout");
  l->set_input("packing", n->output("packing"));
  l->set_param("seed_face", std::int64_t{20});
  RecordingContext c2;
  ASSERT_EQ(error_of(*l, c2), "(no error)");
  const auto p = l->output("packing").as<CirclePacking>();
  EXPECT_LT(p->tangency_error(), 1e-9);
  EXPECT_LT(metric(*l->output("report").as<Table>(), "closing_error"), 1e-9);
  l->set_param("seed_face", std::int64_t{1000});
  RecordingContext c3;
  EXPECT_CONTAINS(error_of(*l, c3), "seed face 1000 is out of range (49 faces)");
}

}  // namespace
