// Mesh readers, writers and the topology report (gemflow/io/mesh_io.hpp): round trips, the real
// meshes of shared/data (skipped when absent), hostile input.
#include <gtest/gtest.h>

#include <filesystem>
#include <sstream>
#include <string>

#include <gemflow/testing.hpp>
#include <gemflow/types.hpp>

#include "gemflow/io/mesh_io.hpp"
#include "io_test_support.hpp"
#include "register.hpp"

namespace {

using namespace gemflow::io;
using gemflow::TriMesh;
using gemflow::io::testing::error_of;
using gemflow::io::testing::shared;
using gemflow::io::testing::slurp;
using gemflow::io::testing::write_temp;

TriMesh square() {
  TriMesh m;
  m.vertices = {{0, 0, 0}, {1, 0, 0}, {1, 1, 0.5}, {0, 1, 0.25}};
  m.faces = {{0, 1, 2}, {0, 2, 3}};
  return m;
}

std::string regression(const std::string& name) {
  return std::string(GEMFLOW_SOURCE_DIR) + "/plugins/io/fuzz/regressions/mesh/" + name;
}

TEST(MeshIo, WritersRoundTripThroughTheReaders) {
  const TriMesh m = square();
  const MeshUv uv = {{0, 0}, {1, 0}, {1, 1}, {0, 1}};
  for (int k = 0; k < 3; ++k) {
    std::ostringstream out;
    MeshFormat f = MeshFormat::obj;
    if (k == 0) write_obj(out, m, uv);
    if (k == 1) write_ply(out, m, false, uv), f = MeshFormat::ply;
    if (k == 2) write_ply(out, m, true, uv), f = MeshFormat::ply;
    MeshReadInfo info;
    const TriMesh r = parse_mesh(out.str(), "mem", f, &info);
    EXPECT_EQ(r.vertices, m.vertices) << k;
    EXPECT_EQ(r.faces, m.faces) << k;
    if (k == 2) {
      EXPECT_EQ(info.encoding, "binary_little_endian");
    }
  }
  std::ostringstream obj;
  write_obj(obj, m, uv);
  EXPECT_NE(obj.str().find("vt 1 1\n"), std::string::npos);
  EXPECT_NE(obj.str().find("f 1/1 2/2 3/3\n"), std::string::npos);
  std::ostringstream vtp;
  write_vtp(vtp, m, uv);
  EXPECT_NE(vtp.str().find("NumberOfPoints=\"4\" NumberOfPolys=\"2\""), std::string::npos);
  EXPECT_NE(vtp.str().find("TCoords=\"uv\""), std::string::npos);
}

// Texture coordinates travel in TriMesh::uv: the writers write the mesh's own, the readers read
// them back (OBJ vt through v/vt, PLY s t or u v); OFF has none.
TEST(MeshIo, TextureCoordinatesRoundTripInTheMesh) {
  TriMesh m = square();
  m.uv = {{0, 0}, {1, 0}, {1, 1}, {0.25, 0.75}};
  for (int k = 0; k < 3; ++k) {
    std::ostringstream out;
    MeshFormat f = MeshFormat::obj;
    if (k == 0) write_obj(out, m);
    if (k == 1) write_ply(out, m, false), f = MeshFormat::ply;
    if (k == 2) write_ply(out, m, true), f = MeshFormat::ply;
    MeshReadInfo info;
    const TriMesh r = parse_mesh(out.str(), "mem", f, &info);
    EXPECT_EQ(r.uv, m.uv) << k;
    EXPECT_TRUE(info.warnings.empty()) << k;
  }
  // PLY's other names
  const TriMesh p = parse_mesh(
      "ply\nformat ascii 1.0\nelement vertex 3\nproperty float x\nproperty float y\nproperty float z\n"
      "property float texture_u\nproperty float texture_v\nelement face 1\nproperty list uchar int vertex_indices\n"
      "end_header\n0 0 0 0.5 0.25\n1 0 0 1 0\n0 1 0 0 1\n3 0 1 2\n",
      "uv.ply", MeshFormat::ply);
  EXPECT_EQ(p.uv, (std::vector<std::array<double, 2>>{{0.5, 0.25}, {1, 0}, {0, 1}}));
  EXPECT_CONTAINS(error_of([] {
                    (void)parse_mesh(
                        "ply\nformat ascii 1.0\nelement vertex 1\nproperty float x\nproperty float y\n"
                        "property float z\nproperty float u\nend_header\n0 0 0 1\n",
                        "half.ply", MeshFormat::ply);
                  }),
                  "one texture coordinate of two");
  // OBJ: vt shared by a vertex's corners (also relative), read per vertex
  MeshReadInfo info;
  const TriMesh o = parse_mesh(
      "v 0 0 0\nv 1 0 0\nv 1 1 0\nv 0 1 0\nvt 0 0\nvt 1 0\nvt 1 1\nvt 0 1\n"
      "f 1/1 2/2 3/3\nf 1/-4 3/-2 4/-1\n",
      "t.obj", MeshFormat::obj, &info);
  EXPECT_EQ(o.uv, (std::vector<std::array<double, 2>>{{0, 0}, {1, 0}, {1, 1}, {0, 1}}));
  EXPECT_TRUE(info.warnings.empty());
  // a seam (vertex 1 with two vt), corners without vt, a vt that is not there: geometry kept, no
  // UVs, a warning saying why
  const TriMesh seam = parse_mesh(
      "v 0 0 0\nv 1 0 0\nv 1 1 0\nv 0 1 0\nvt 0 0\nvt 1 0\nvt 1 1\nvt 0 1\nvt 0.5 0.5\n"
      "f 1/1 2/2 3/3\nf 1/5 3/3 4/4\n",
      "s.obj", MeshFormat::obj, &info);
  EXPECT_EQ(seam.faces.size(), 2u);
  EXPECT_TRUE(seam.uv.empty());
  ASSERT_EQ(info.warnings.size(), 1u);
  EXPECT_CONTAINS(info.warnings[0], "vertex 0 (and others) has several texture coordinates (a seam)");
  (void)parse_mesh("v 0 0 0\nv 1 0 0\nv 1 1 0\nvt 0 0\nf 1/1 2 3\n", "p.obj", MeshFormat::obj, &info);
  ASSERT_EQ(info.warnings.size(), 1u);
  EXPECT_CONTAINS(info.warnings[0], "2 face corners have no texture coordinate");
  (void)parse_mesh("v 0 0 0\nv 1 0 0\nv 1 1 0\nvt 0 0\nf 1/1 2/2 3/9\n", "m.obj", MeshFormat::obj, &info);
  ASSERT_EQ(info.warnings.size(), 1u);
  EXPECT_CONTAINS(info.warnings[0], "line 5: a face names texture coordinate 2 (1-based), but the file has 1");
  // OFF: none
  EXPECT_TRUE(parse_mesh("OFF\n3 1 0\n0 0 0\n1 0 0\n0 1 0\n3 0 1 2\n", "n.off", MeshFormat::off).uv.empty());
  // a given uv wins over the mesh's own
  std::ostringstream out;
  write_obj(out, m, {{9, 9}, {9, 9}, {9, 9}, {9, 9}});
  EXPECT_EQ(parse_mesh(out.str(), "mem", MeshFormat::obj).uv[3], (std::array<double, 2>{9, 9}));
  if (const auto c = shared("meshes/disk/libigl_camel_b.obj"); !c.empty()) {
    TriMesh camel = read_mesh(c, &info);
    camel.boundary = gemflow::boundary_loops(camel.vertex_count(), camel.faces);
    EXPECT_EQ(camel.uv.size(), camel.vertices.size());  // 2032 vt, one per vertex
    EXPECT_EQ(camel.validate(), std::nullopt);
  }
}

TEST(MeshIo, QuadsAreTriangulatedWithAWarning) {
  MeshReadInfo info;
  const TriMesh m = parse_mesh("OFF\n4 1 0\n0 0 0\n1 0 0\n1 1 0\n0 1 0\n4 0 1 2 3\n", "q.off", MeshFormat::off, &info);
  ASSERT_EQ(m.faces.size(), 2u);
  EXPECT_EQ(m.faces[1], (std::array<TriMesh::Index, 3>{0, 2, 3}));
  EXPECT_EQ(info.polygons_triangulated, 1u);
  ASSERT_EQ(info.warnings.size(), 1u);
  EXPECT_CONTAINS(info.warnings[0], "1 faces with more than 3 vertices");
  // OBJ: v/vt/vn forms, negative indices, '\' continuation
  const TriMesh o =
      parse_mesh("v 0 0 0\nv 1 0 0\nv 1 1 0\nv 0 1 0\nf 1/1/1 2//2 \\\n -2/3 -1\n", "c.obj", MeshFormat::obj, &info);
  ASSERT_EQ(o.faces.size(), 2u);
  EXPECT_EQ(o.faces[0], (std::array<TriMesh::Index, 3>{0, 1, 2}));
}

TEST(MeshIo, HostileInputNamesFileAndPlace) {
  // counts checked against the bytes left before anything is read or allocated
  EXPECT_CONTAINS(error_of([] { (void)read_mesh(regression("truncated_binary.ply")); }),
                  "truncated_binary.ply:3: element vertex announces 4 entries of at least 12 bytes, more than the 29");
  // a list cut short: the element, its index and the byte offset
  EXPECT_CONTAINS(error_of([] { (void)read_mesh(regression("truncated_face.ply")); }),
                  "element face index 0: list of 3 values runs past the end of the file (truncated)");
  EXPECT_CONTAINS(error_of([] { (void)read_mesh(regression("huge_vertex_count.ply")); }),
                  "huge_vertex_count.ply:3: element vertex announces 4000000000 entries");
  EXPECT_CONTAINS(error_of([] { (void)read_mesh(regression("huge_counts.off")); }),
                  "huge_counts.off:2: the header announces 2000000000 vertices");
  EXPECT_CONTAINS(error_of([] { (void)read_mesh(regression("list_past_end.ply")); }), "element face index 0");
  EXPECT_CONTAINS(error_of([] { (void)read_mesh(regression("nan_vertex.obj")); }),
                  "nan_vertex.obj:2: vertex 1 has a non-finite coordinate (NaN)");
  EXPECT_CONTAINS(error_of([] { (void)parse_mesh("", "e.off", MeshFormat::off); }), "e.off: the file is empty");
  EXPECT_CONTAINS(
      error_of([] { (void)parse_mesh("OFF\n3 1 0\n0 0 0\n1 0 0\n0 1 0\n3 0 1 7\n", "x.off", MeshFormat::off); }),
      "x.off:6: face 0 names vertex 7, but there are 3 vertices");
  EXPECT_CONTAINS(error_of([] { (void)parse_mesh("v 0 0 0\nv 1 0 0\nf 1 2\n", "t.obj", MeshFormat::obj); }),
                  "t.obj:3: face with 2 vertices");
  EXPECT_CONTAINS(error_of([] { (void)parse_mesh("v 0 0 0\nf 1 2 3\n", "f.obj", MeshFormat::obj); }),
                  "f.obj:2: face names vertex 3 (1-based), but the file defines 1 vertices");
  EXPECT_CONTAINS(error_of([] { (void)read_mesh("mesh.stl"); }), "unknown mesh format '.stl'");
  // a PLY name of 300 characters would be copied into every entry's messages
  EXPECT_CONTAINS(error_of([] {
                    (void)parse_mesh("ply\nformat ascii 1.0\nelement " + std::string(300, 'v') + " 1\nend_header\n",
                                     "n.ply", MeshFormat::ply);
                  }),
                  "n.ply:3: element name of 300 characters (at most 256)");
  EXPECT_CONTAINS(error_of([] {
                    (void)parse_mesh("ply\nformat ascii 1.0\nelement vertex 1\nproperty float " +
                                         std::string(300, 'x') + "\nend_header\n",
                                     "p.ply", MeshFormat::ply);
                  }),
                  "p.ply:4: property name of 300 characters (at most 256)");
  // a folder read as empty and was blamed as "the file is empty"
  const auto dir = std::filesystem::temp_directory_path() / "gemflow_io_tests" / "folder.obj";
  std::filesystem::create_directories(dir);
  EXPECT_CONTAINS(error_of([&] { (void)read_mesh(dir.string()); }), "folder.obj: is a folder, not a file");
}

// The zero-area test squared coordinate differences: a mesh at 1e200 (overflow to inf) or 1e-200
// (underflow to 0) had every face "degenerate (repeated vertex or zero area)".
TEST(MeshTopology, AreaTestIsScaleFree) {
  for (double scale : {1e200, 1e-200, 1e-9, 1e9}) {
    TriMesh m = square();
    for (auto& v : m.vertices)
      for (auto& x : v) x *= scale;
    const MeshTopology t = mesh_topology(m);
    EXPECT_TRUE(t.disk()) << scale << ": " << t.manifold_problems();
    EXPECT_EQ(t.degenerate_count, 0u) << scale;
    m.vertices[2] = {2 * scale, 0, 0};  // collinear with 0 and 1: face 0 has zero area at any scale
    EXPECT_EQ(mesh_topology(m).degenerate_count, 1u) << scale;
  }
}

// One polygon of 100 000 vertices, fanned from its first corner: a disk whose first vertex has
// 99 998 neighbours, found in time linear in them (a scan per face was quadratic).
TEST(MeshTopology, OnePolygonOfManyVerticesIsADisk) {
  const int n = 100000;
  std::ostringstream o;
  o.precision(17);
  o << "OFF\n" << n << " 1 0\n";
  for (int k = 0; k < n; ++k) {
    const double a = 2 * 3.141592653589793 * k / n;
    o << std::cos(a) << ' ' << std::sin(a) << " 0\n";
  }
  o << n;
  for (int k = 0; k < n; ++k) o << ' ' << k;
  const std::string off = o.str();
  MeshReadInfo info;
  const TriMesh m = parse_mesh(off + "\n", "big.off", MeshFormat::off, &info);
  ASSERT_EQ(m.faces.size(), std::size_t(n - 2));
  const MeshTopology t = mesh_topology(m);
  EXPECT_TRUE(t.disk()) << t.disk_problems() << t.manifold_problems();
}

TEST(MeshTopology, NamesEveryDefect) {
  TriMesh m = square();
  EXPECT_TRUE(mesh_topology(m).disk());
  m.vertices.push_back({5, 5, 5});  // unreferenced 4
  m.faces.push_back({0, 2, 1});     // 0–1–2 again, flipped
  m.vertices.push_back({2, 0, 0});
  m.faces.push_back({1, 5, 1});  // repeated vertex
  const MeshTopology t = mesh_topology(m);
  EXPECT_FALSE(t.clean());
  const std::string why = t.manifold_problems();
  EXPECT_CONTAINS(why, "unreferenced vertices (in no face), 0-based: 4");
  EXPECT_CONTAINS(why, "degenerate faces (repeated vertex or zero area), 0-based: 3");
  EXPECT_CONTAINS(why, "duplicate faces (same vertices), pairs: 0 = 2");
  EXPECT_CONTAINS(why, "non-manifold edges (more than two faces): 0–2");
  // closed surface and two components
  TriMesh tet;
  tet.vertices = {{0, 0, 0}, {1, 0, 0}, {0, 1, 0}, {0, 0, 1}};
  tet.faces = {{0, 2, 1}, {0, 1, 3}, {1, 2, 3}, {0, 3, 2}};
  EXPECT_CONTAINS(mesh_topology(tet).disk_problems(),
                  "not a disk: 1 component, Euler characteristic 2 and 0 boundary loops (a disk has 1, 1 and 1): a "
                  "closed surface of genus 0");
  TriMesh two = square();
  two.vertices.push_back({3, 0, 0}), two.vertices.push_back({4, 0, 0}), two.vertices.push_back({3, 1, 0});
  two.faces.push_back({4, 5, 6});
  EXPECT_CONTAINS(mesh_topology(two).disk_problems(), "2 components, Euler characteristic 2 and 2 boundary loops");
}

// The real meshes of shared/data/meshes (PROVENANCE.md's verified topology table).
TEST(MeshIo, SharedMeshesHaveTheirVerifiedTopology) {
  struct Case {
    const char* path;
    std::size_t v, f;
    std::int64_t chi;
    std::size_t loops, components;
  };
  const Case cases[] = {
      {"meshes/disk/libigl_camelhead.off", 11381, 22704, 1, 1, 1},
      {"meshes/disk/libigl_grid.off", 145, 256, 1, 1, 1},
      {"meshes/disk/libigl_2triangles.off", 4, 2, 1, 1, 1},
      {"meshes/disk/libigl_snail.obj", 871, 1653, 1, 1, 1},
      {"meshes/disk/c3d_woody.obj", 694, 1267, 1, 1, 1},
      {"meshes/disk/trimesh_plane_tri.ply", 4, 2, 1, 1, 1},
      {"meshes/closed/trimesh_tet_binary.ply", 4, 4, 2, 0, 1},
      {"meshes/closed/trimesh_fuze_ascii.ply", 502, 1000, 2, 0, 1},
      {"meshes/closed/libigl_fertility.off", 4494, 9000, -6, 0, 1},
      {"meshes/nondisk_or_broken/trimesh_tube_multicomponent.obj", 128, 120, 4, 8, 6},
  };
  int found = 0;
  for (const auto& c : cases) {
    const std::string p = shared(c.path);
    if (p.empty()) continue;
    ++found;
    const TriMesh m = read_mesh(p);
    const MeshTopology t = mesh_topology(m);
    EXPECT_EQ(m.vertices.size(), c.v) << c.path;
    EXPECT_EQ(m.faces.size(), c.f) << c.path;
    EXPECT_EQ(t.euler, c.chi) << c.path;
    EXPECT_EQ(t.boundary_loops, c.loops) << c.path;
    EXPECT_EQ(t.components, c.components) << c.path;
    EXPECT_EQ(t.disk(), c.chi == 1 && c.loops == 1 && c.components == 1) << c.path;
  }
  if (found == 0) GTEST_SKIP() << "GEMFLOW_SHARED_DATA meshes absent";
  if (const auto p = shared("meshes/nondisk_or_broken/trimesh_joined_tetrahedra.obj"); !p.empty()) {
    EXPECT_CONTAINS(mesh_topology(read_mesh(p)).manifold_problems(), "3 non-manifold edges");
  }
  if (const auto p = shared("meshes/nondisk_or_broken/c3d_teapot.obj"); !p.empty()) {
    EXPECT_CONTAINS(mesh_topology(read_mesh(p)).manifold_problems(), "non-manifold vertices");
  }
  if (const auto p = shared("meshes/nondisk_or_broken/trimesh_empty.ply"); !p.empty()) {
    EXPECT_CONTAINS(error_of([&] { (void)read_mesh(p); }), "the file holds no vertices");
  }
  if (const auto p = shared("meshes/nondisk_or_broken/trimesh_notenoughindices.obj"); !p.empty()) {
    EXPECT_CONTAINS(error_of([&] { (void)read_mesh(p); }), "face with 2 vertices");
  }
  if (const auto p = shared("meshes/nondisk_or_broken/trimesh_whitespace_header.off"); !p.empty()) {
    MeshReadInfo info;
    const TriMesh m = read_mesh(p, &info);
    EXPECT_EQ(m.vertices.size(), 8u);
    EXPECT_EQ(info.polygons_triangulated, 6u);  // the cube's quads
  }
  if (const auto p = shared("meshes/nondisk_or_broken/libigl_halftunnel.off"); !p.empty()) {
    EXPECT_CONTAINS(mesh_topology(read_mesh(p)).disk_problems(), "3 boundary loops");
  }
}

// ---- nodes -------------------------------------------------------------------------------------

TEST(MeshNodes, ReadChecksTopologyAndWriteCarriesUvs) {
  gemflow::Registry reg;
  gemflow::PluginRegistrar r(reg, "io-test");
  register_mesh_nodes(r);
  gemflow::testing::RecordingContext ctx;
  // a quad: triangulated with a warning, a disk
  const std::string quad = write_temp("quad.off", "OFF\n4 1 0\n0 0 0\n1 0 0\n1 1 0\n0 1 0\n4 0 1 2 3\n");
  auto rd = gemflow::testing::make_node(reg, "io.read_mesh");
  rd->set_param("path", quad);
  rd->set_param("require", std::string("disk"));
  ASSERT_EQ(gemflow::testing::error_of(*rd, ctx), "(no error)");
  const auto m = rd->output("mesh").as<TriMesh>();
  EXPECT_EQ(m->faces.size(), 2u);
  ASSERT_EQ(m->boundary.size(), 1u);
  EXPECT_EQ(m->boundary[0].size(), 4u);
  ASSERT_EQ(ctx.warnings().size(), 1u);
  EXPECT_CONTAINS(ctx.warnings()[0], "quad.off: 1 faces with more than 3 vertices");
  // a closed tetrahedron: refused as a disk, accepted as a manifold
  const std::string tet =
      write_temp("tet.off", "OFF\n4 4 0\n0 0 0\n1 0 0\n0 1 0\n0 0 1\n3 0 2 1\n3 0 1 3\n3 1 2 3\n3 0 3 2\n");
  auto rt = gemflow::testing::make_node(reg, "io.read_mesh");
  rt->set_param("path", tet);
  rt->set_param("require", std::string("disk"));
  EXPECT_CONTAINS(gemflow::testing::error_of(*rt, ctx), "tet.off: not a disk: 1 component, Euler characteristic 2");
  rt->set_param("require", std::string("manifold"));
  EXPECT_EQ(gemflow::testing::error_of(*rt, ctx), "(no error)");
  // an unreferenced vertex: refused as a manifold, named
  const std::string loose = write_temp("loose.obj", "v 0 0 0\nv 1 0 0\nv 0 1 0\nv 5 5 5\nf 1 2 3\n");
  auto rl = gemflow::testing::make_node(reg, "io.read_mesh");
  rl->set_param("path", loose);
  EXPECT_CONTAINS(gemflow::testing::error_of(*rl, ctx), "loose.obj: 1 unreferenced vertices (in no face), 0-based: 3");
  // a user's report: a fan with a zero-area face, accepted with require: any, came without boundary
  // loops, and circle packing then blamed a boundary edge. The loops are there whenever the faces
  // form a triangulation.
  const std::string needle = write_temp("needle.off",
                                        "OFF\n7 6 0\n0 0 0\n1 0 0\n1 1e-12 0\n-0.5 0.866 0\n-1 0 0\n"
                                        "-0.5 -0.866 0\n0.5 -0.866 0\n3 0 1 2\n3 0 2 3\n3 0 3 4\n3 0 4 5\n"
                                        "3 0 5 6\n3 0 6 1\n");
  auto rn = gemflow::testing::make_node(reg, "io.read_mesh");
  rn->set_param("path", needle);
  EXPECT_CONTAINS(gemflow::testing::error_of(*rn, ctx), "needle.off: 1 degenerate faces (repeated vertex or zero area)");
  rn->set_param("require", std::string("any"));
  ASSERT_EQ(gemflow::testing::error_of(*rn, ctx), "(no error)");
  const auto nm = rn->output("mesh").as<TriMesh>();
  ASSERT_EQ(nm->boundary.size(), 1u);
  EXPECT_EQ(nm->boundary[0].size(), 6u);
  EXPECT_EQ(nm->validate(), std::nullopt);
  // write with UVs
  auto wr = gemflow::testing::make_node(reg, "io.write_mesh");
  wr->set_input("mesh", rd->output("mesh"));
  wr->set_input("uv", rd->output("mesh"));
  wr->set_param("path", std::string("out.obj"));
  ASSERT_EQ(gemflow::testing::error_of(*wr, ctx), "(no error)");
  const std::string text = slurp((ctx.output_dir() / "out.obj").string());
  EXPECT_CONTAINS(text, "vt 1 1\n");
  EXPECT_CONTAINS(text, "f 1/1 2/2 3/3\n");
  wr->set_input("uv", gemflow::Value::make(square()));
  wr->set_input("mesh", rt->output("mesh"));
  EXPECT_EQ(gemflow::testing::error_of(*wr, ctx), "(no error)");  // 4 and 4 vertices
  TriMesh three = square();
  three.vertices.pop_back();
  three.faces.pop_back();
  wr->set_input("uv", gemflow::Value::make(three));
  EXPECT_CONTAINS(gemflow::testing::error_of(*wr, ctx), "input 'uv' has 3 vertices, input 'mesh' 4");
  // without 'uv' the mesh's own texture coordinates are written, as PLY s t; read back into uv
  TriMesh own = square();
  own.uv = {{0, 0}, {1, 0}, {1, 1}, {0, 0.5}};
  auto w2 = gemflow::testing::make_node(reg, "io.write_mesh");
  w2->set_input("mesh", gemflow::Value::make(own));
  w2->set_param("path", std::string("own.ply"));
  ASSERT_EQ(gemflow::testing::error_of(*w2, ctx), "(no error)");
  const std::string ply = slurp((ctx.output_dir() / "own.ply").string());
  EXPECT_CONTAINS(ply, "property double s\nproperty double t\n");
  auto r2 = gemflow::testing::make_node(reg, "io.read_mesh");
  r2->set_param("path", (ctx.output_dir() / "own.ply").string());
  ASSERT_EQ(gemflow::testing::error_of(*r2, ctx), "(no error)");
  EXPECT_EQ(r2->output("mesh").as<TriMesh>()->uv, own.uv);
}

}  // namespace
