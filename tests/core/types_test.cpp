// The SDK's data types: invariants (validate() accepts valid values and names what is wrong with
// invalid ones), summaries, registration, and the layout fingerprint that keeps one definition
// per type name.
#include <cmath>
#include <limits>
#include <string>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <fmt/format.h>

#include "gemflow/plugin_loader.hpp"
#include "gemflow/registry.hpp"
#include "gemflow/types.hpp"

namespace fs = std::filesystem;
using ::testing::HasSubstr;
using ::testing::Optional;

namespace gemflow {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

template <class T>
std::string summary(const T& v) {
  return Value::make<T>(v).summary();
}

// ---------------------------------------------------------------------------------------------
TEST(Image, NewImageIsTransparentBlackInItsFormat) {
  const Image f(3, 2, Image::Format::RGBA32F);
  EXPECT_EQ(f.f32.size(), 24u);
  EXPECT_TRUE(f.u8.empty());
  EXPECT_EQ(f.validate(), std::nullopt);
  EXPECT_EQ(f.index(2, 1), (1u * 3 + 2) * 4);  // row-major from the top-left pixel
  const Image b(3, 2, Image::Format::RGBA8);
  EXPECT_EQ(b.u8, std::vector<std::uint8_t>(24, 0));
  EXPECT_TRUE(b.f32.empty());
  EXPECT_EQ(b.validate(), std::nullopt);
  EXPECT_EQ(summary(Image(1920, 1080, Image::Format::RGBA32F)), "1920×1080 RGBA float");
  EXPECT_EQ(summary(b), "3×2 RGBA 8-bit");
}

TEST(Image, TooLargeToAddressIsOutOfMemory) {
  const std::size_t huge = std::size_t{1} << 32;
  EXPECT_THAT([&] { Image(huge, huge, Image::Format::RGBA32F); },
              ::testing::ThrowsMessage<OutOfMemory>(HasSubstr("4294967296×4294967296 RGBA image is too large")));
}

TEST(Image, InvalidValuesAreNamedByPixelAndChannel) {
  Image im(4, 3, Image::Format::RGBA32F);
  im.f32[im.index(1, 2) + 3] = 1.5f;
  EXPECT_EQ(im.validate(), "pixel (1, 2): alpha 1.5 is outside [0, 1]");
  im.f32[im.index(1, 2) + 3] = 1.0f;
  im.f32[im.index(3, 0) + 0] = 7.0f;  // high dynamic range: accepted
  EXPECT_EQ(im.validate(), std::nullopt);
  im.f32[im.index(3, 0) + 1] = std::numeric_limits<float>::quiet_NaN();
  EXPECT_EQ(im.validate(), "pixel (3, 0): green is nan");
  im.f32[im.index(3, 0) + 1] = -0.25f;
  EXPECT_EQ(im.validate(), "pixel (3, 0): green -0.25 is negative");
}

TEST(Image, StorageMustMatchTheFormat) {
  Image im(2, 2, Image::Format::RGBA8);
  im.u8.pop_back();
  EXPECT_EQ(im.validate(), "u8 holds 15 values, 2×2×4 = 16 expected");
  im.u8.push_back(0);
  im.f32.assign(16, 0.0f);
  EXPECT_EQ(im.validate(), "f32 holds 16 values for a RGBA8 image (it must be empty)");
  Image bare;
  bare.width = 2;  // height 0: no pixels, no values
  EXPECT_EQ(bare.validate(), std::nullopt);
}

// ---------------------------------------------------------------------------------------------
Signal two_channels() {
  Signal s;
  s.samples = Matrix<double>(4, 2, std::vector<double>{0, 1, 2, 3, 4, 5, 6, 7});
  s.sample_rate = 100.0;
  s.start_time = 2.0;
  s.channels = {"x", "y"};
  s.units = {"mV", ""};
  return s;
}

TEST(Signal, RegularAndIrregularTimeAxes) {
  Signal s = two_channels();
  EXPECT_EQ(s.validate(), std::nullopt);
  EXPECT_DOUBLE_EQ(s.time(3), 2.03);
  EXPECT_EQ(summary(s), "4 samples × 2 channels, 100 Hz");
  s.times = {0.0, 0.5, 0.75, 2.0};
  s.sample_rate = 0.0;  // ignored with explicit times
  EXPECT_EQ(s.validate(), std::nullopt);
  EXPECT_DOUBLE_EQ(s.time(2), 0.75);
  EXPECT_EQ(summary(s), "4 samples × 2 channels, irregular times");
}

TEST(Signal, ValidityMask) {
  Signal s = two_channels();
  EXPECT_EQ(s.missing(), 0u);
  EXPECT_TRUE(s.observed(3, 1));
  s.valid = {1, 1, 1, 0, 1, 1, 0, 0};
  EXPECT_EQ(s.validate(), std::nullopt);
  EXPECT_FALSE(s.observed(1, 1));
  EXPECT_TRUE(s.observed(1, 0));
  EXPECT_EQ(s.missing(), 3u);
  EXPECT_EQ(summary(s), "4 samples × 2 channels, 100 Hz, 3 missing values");
  s.valid = {1, 1, 1};
  EXPECT_EQ(s.validate(), "3 validity flags for 4 × 2 samples");
  s.valid = {1, 1, 1, 2, 1, 1, 1, 1};
  EXPECT_EQ(s.validate(), "validity flag of sample 1, channel 'y' is 2 (1 observed, 0 missing)");
  s.valid = {1, 1, 1, 0, 1, 1, 1, 1};
  s.samples(1, 1) = std::numeric_limits<double>::quiet_NaN();
  EXPECT_EQ(s.validate(), "sample 1 of channel 'y' is nan (a missing value holds a finite placeholder)");
}

TEST(Signal, InvalidSignalsSayWhy) {
  auto broken = [](auto edit) {
    Signal s = two_channels();
    edit(s);
    return s.validate();
  };
  EXPECT_EQ(broken([](Signal& s) { s.channels.pop_back(); }), "1 channel names for 2 channels");
  EXPECT_EQ(broken([](Signal& s) { s.units.push_back("s"); }), "3 units for 2 channels");
  EXPECT_EQ(broken([](Signal& s) { s.sample_rate = 0; }), "sample rate 0 Hz is not a positive number");
  EXPECT_EQ(broken([](Signal& s) { s.sample_rate = kNaN; }), "sample rate nan Hz is not a positive number");
  EXPECT_EQ(broken([](Signal& s) { s.start_time = kInf; }), "start time inf s is not finite");
  EXPECT_EQ(broken([](Signal& s) { s.times = {0, 1, 2}; }), "3 times for 4 samples");
  EXPECT_EQ(broken([](Signal& s) {
              s.times = {0, 1, 1, 2};
            }),
            "times are not increasing: sample 1 at 1 s, sample 2 at 1 s");
  EXPECT_EQ(broken([](Signal& s) { s.times = {0, 1, kNaN, 2}; }), "time of sample 2 is nan");
  EXPECT_EQ(broken([](Signal& s) { s.samples(2, 1) = kNaN; }), "sample 2 of channel 'y' is nan");
}

// ---------------------------------------------------------------------------------------------
Scores three_labels() {
  Scores s;
  s.scores = Matrix<double>(2, 3, std::vector<double>{-1.0, -kInf, 0.5, 2.0, -3.0, -0.1});
  s.labels = {"rest", "walk", "run"};
  s.sample_rate = 50.0;
  return s;
}

TEST(Scores, MinusInfinityMarksAnImpossibleLabel) {
  const Scores s = three_labels();
  EXPECT_EQ(s.validate(), std::nullopt);
  EXPECT_EQ(summary(s), "2 samples × 3 labels");
}

TEST(Scores, InvalidScoresSayWhy) {
  auto broken = [](auto edit) {
    Scores s = three_labels();
    edit(s);
    return s.validate();
  };
  EXPECT_EQ(broken([](Scores& s) { s.labels.pop_back(); }), "2 label names for 3 labels");
  EXPECT_EQ(broken([](Scores& s) { s.labels[2] = "rest"; }), "label name 'rest' is given twice");
  EXPECT_EQ(broken([](Scores& s) { s.labels[1].clear(); }), "label 1 has an empty name");
  EXPECT_EQ(broken([](Scores& s) { s.sample_rate = -1; }), "sample rate -1 Hz is neither positive nor 0 (unknown)");
  EXPECT_THAT(broken([](Scores& s) { s.scores(1, 2) = kNaN; }),
              Optional(HasSubstr("score of label 'run' at sample 1 is nan")));
  EXPECT_THAT(broken([](Scores& s) { s.scores(0, 0) = kInf; }),
              Optional(HasSubstr("score of label 'rest' at sample 0 is inf")));
}

// ---------------------------------------------------------------------------------------------
Segmentation three_segments() {
  Segmentation s;
  s.length = 10;
  s.labels = {"a", "b"};
  s.segments = {{0, 3, 0, -1.5}, {3, 7, 1, -0.5}, {7, 10, 0, -2.0}};
  return s;
}

TEST(Segmentation, HalfOpenSegmentsCoverTheSequence) {
  Segmentation s = three_segments();
  EXPECT_EQ(s.validate(), std::nullopt);
  EXPECT_TRUE(s.complete());
  EXPECT_EQ(summary(s), "3 segments over 10 samples, 2 labels");
  s.segments.erase(s.segments.begin() + 1);  // a gap [3, 7): valid, not complete
  EXPECT_EQ(s.validate(), std::nullopt);
  EXPECT_FALSE(s.complete());
  s.segments.pop_back();
  s.segments.front().end = 10;
  EXPECT_TRUE(s.complete());
  EXPECT_EQ(summary(s), "1 segment over 10 samples, 2 labels");
  Segmentation empty;
  EXPECT_EQ(empty.validate(), std::nullopt);
  EXPECT_TRUE(empty.complete());
}

TEST(Segmentation, InvalidSegmentationsSayWhy) {
  auto broken = [](auto edit) {
    Segmentation s = three_segments();
    edit(s);
    return s.validate();
  };
  EXPECT_EQ(broken([](Segmentation& s) { s.segments[1].end = 3; }), "segment 1 [3, 3) is empty");
  EXPECT_EQ(broken([](Segmentation& s) { s.segments[2].end = 11; }), "segment 2 [7, 11) ends past the 10 samples");
  EXPECT_EQ(broken([](Segmentation& s) { s.segments[1].start = 2; }),
            "segment 1 [2, 7) starts before segment 0 [0, 3) ends (segments are sorted and do not overlap)");
  EXPECT_EQ(broken([](Segmentation& s) { std::swap(s.segments[0], s.segments[2]); }),
            "segment 1 [3, 7) starts before segment 0 [7, 10) ends (segments are sorted and do not overlap)");
  EXPECT_EQ(broken([](Segmentation& s) { s.segments[0].label = 2; }),
            "segment 0 [0, 3) has label 2, but there are 2 labels");
  EXPECT_EQ(broken([](Segmentation& s) { s.segments[2].score = kNaN; }), "segment 2 [7, 10) has a NaN score");
  EXPECT_EQ(broken([](Segmentation& s) { s.labels = {"a", "a"}; }), "label name 'a' is given twice");
}

// ---------------------------------------------------------------------------------------------
// A unit square split into two counter-clockwise triangles: 4 boundary edges, one loop.
TriMesh square() {
  TriMesh m;
  m.vertices = {{0, 0, 0}, {1, 0, 0}, {1, 1, 0}, {0, 1, 0}};
  m.faces = {{0, 1, 2}, {0, 2, 3}};
  m.boundary = {{0, 1, 2, 3}};
  return m;
}

// A tetrahedron's surface: closed, no boundary.
TriMesh tetrahedron() {
  TriMesh m;
  m.vertices = {{0, 0, 0}, {1, 0, 0}, {0, 1, 0}, {0, 0, 1}};
  m.faces = {{0, 2, 1}, {0, 1, 3}, {1, 2, 3}, {0, 3, 2}};
  return m;
}

// An annulus: the outer square 0-3 and the inner square 4-7, eight triangles between them.
TriMesh annulus() {
  TriMesh m;
  m.vertices = {{0, 0, 0}, {3, 0, 0}, {3, 3, 0}, {0, 3, 0}, {1, 1, 0}, {2, 1, 0}, {2, 2, 0}, {1, 2, 0}};
  for (TriMesh::Index k = 0; k < 4; ++k) {
    const TriMesh::Index a = k, b = (k + 1) % 4, ia = 4 + k, ib = 4 + (k + 1) % 4;
    m.faces.push_back({a, b, ib});
    m.faces.push_back({a, ib, ia});
  }
  m.boundary = {{0, 1, 2, 3}, {4, 7, 6, 5}};  // outer counter-clockwise, hole clockwise
  return m;
}

TEST(TriMesh, ValidMeshes) {
  EXPECT_EQ(square().validate(), std::nullopt);
  EXPECT_EQ(tetrahedron().validate(), std::nullopt);
  EXPECT_EQ(annulus().validate(), std::nullopt);
  TriMesh rotated = annulus();  // any starting vertex, any loop order
  rotated.boundary = {{6, 5, 4, 7}, {2, 3, 0, 1}};
  EXPECT_EQ(rotated.validate(), std::nullopt);
  EXPECT_EQ(TriMesh{}.validate(), std::nullopt);
  EXPECT_EQ(summary(annulus()), "8 vertices, 8 faces, 2 boundary loops");
  EXPECT_EQ(summary(square()), "4 vertices, 2 faces, 1 boundary loop");
}

// The zero-area test io.read_mesh and circlepack.flatten share: collinear to about 1e-12, at any
// scale (squares of 1e-200 underflow and of 1e200 overflow without the scaling).
TEST(TriMesh, ZeroAreaIsScaleFree) {
  for (double s : {1e-200, 1e-6, 1.0, 1e6, 1e200}) {
    const std::array<double, 3> a{0, 0, 0}, b{s, 0, 0}, c{0, s, 0}, needle{s, 1e-13 * s, 0}, thin{s, 1e-9 * s, 0};
    EXPECT_FALSE(zero_area(a, b, c)) << s;
    EXPECT_TRUE(zero_area(a, b, needle)) << s;
    EXPECT_FALSE(zero_area(a, b, thin)) << s;
    EXPECT_TRUE(zero_area(a, b, b)) << s;  // a repeated vertex
    EXPECT_TRUE(zero_area(a, a, a)) << s;
  }
}

TEST(TriMesh, BoundaryLoopsAreFoundInCanonicalOrder) {
  const TriMesh a = annulus();
  EXPECT_EQ(boundary_loops(a.vertex_count(), a.faces), a.boundary);
  EXPECT_EQ(boundary_loops(4, square().faces), square().boundary);
  EXPECT_TRUE(boundary_loops(4, tetrahedron().faces).empty());
  EXPECT_THAT(
      [] {
        (void)boundary_loops(3, {{0, 1, 1}});
      },
      ::testing::ThrowsMessage<Error>(HasSubstr("boundary loops: face 0 (0, 1, 1) repeats a vertex")));
}

TEST(TriMesh, InvalidMeshesSayWhy) {
  auto broken = [](TriMesh m, auto edit) {
    edit(m);
    return m.validate();
  };
  EXPECT_EQ(broken(square(), [](TriMesh& m) { m.vertices[2][1] = kNaN; }), "vertex 2 (1, nan, 0) is not finite");
  EXPECT_EQ(broken(square(), [](TriMesh& m) { m.faces[1][2] = 4; }),
            "face 1 (0, 2, 4) names vertex 4, but there are 4 vertices");
  EXPECT_EQ(broken(square(), [](TriMesh& m) { m.faces[1] = {0, 2, 2}; }), "face 1 (0, 2, 2) repeats a vertex");
  EXPECT_EQ(broken(square(), [](TriMesh& m) { m.vertices.push_back({5, 5, 5}); }), "vertex 4 is in no face");
  // The second triangle flipped: both faces run along 0→2.
  EXPECT_EQ(broken(square(),
                   [](TriMesh& m) {
                     m.faces[1] = {0, 3, 2};
                   }),
            "faces 0 and 1 both run along edge 2→0: a face is flipped against its neighbour, or the edge has more "
            "than two faces");
  // A third face on the edge 0–2.
  EXPECT_THAT(broken(square(),
                     [](TriMesh& m) {
                       m.vertices.push_back({1, -1, 1});
                       m.faces.push_back({2, 0, 4});
                     }),
              Optional(HasSubstr("the edge has more than two faces")));
  // Two triangles touching at one vertex (a bow tie): vertex 0 has two fans.
  TriMesh bowtie;
  bowtie.vertices = {{0, 0, 0}, {1, 0, 0}, {1, 1, 0}, {-1, 0, 0}, {-1, -1, 0}};
  bowtie.faces = {{0, 1, 2}, {0, 3, 4}};
  bowtie.boundary = {{0, 1, 2}, {3, 4}};
  EXPECT_EQ(bowtie.validate(), "vertex 0 is not a manifold vertex: its faces form separate fans");
  // Two faces on the same three vertices, opposite ways round.
  TriMesh pocket;
  pocket.vertices = {{0, 0, 0}, {1, 0, 0}, {0, 1, 0}};
  pocket.faces = {{0, 1, 2}, {0, 2, 1}};
  EXPECT_EQ(pocket.validate(), "faces 0 and 1 have the same vertices (0, 1, 2)");
}

// A grid of w × h unit squares, two counter-clockwise triangles each; vertex (i, j) is j(w+1) + i
// and square (i, j) holds faces 2(jw + i) and 2(jw + i) + 1.
TriMesh grid(TriMesh::Index w, TriMesh::Index h) {
  TriMesh m;
  for (TriMesh::Index j = 0; j <= h; ++j)
    for (TriMesh::Index i = 0; i <= w; ++i) m.vertices.push_back({double(i), double(j), 0.0});
  auto id = [w](TriMesh::Index i, TriMesh::Index j) { return j * (w + 1) + i; };
  for (TriMesh::Index j = 0; j < h; ++j)
    for (TriMesh::Index i = 0; i < w; ++i) {
      m.faces.push_back({id(i, j), id(i + 1, j), id(i + 1, j + 1)});
      m.faces.push_back({id(i, j), id(i + 1, j + 1), id(i, j + 1)});
    }
  return m;
}

// 120 000 faces: one loop around the rectangle; with two faces flipped, the defect named is the one
// a scan of the faces in order meets first (face 1001's first edge, 501→802, also in face 998),
// whichever vertex it sits at.
TEST(TriMesh, LargeMeshesNameTheFirstDefectInFaceOrder) {
  TriMesh g = grid(300, 200);
  g.boundary = boundary_loops(g.vertex_count(), g.faces);
  ASSERT_EQ(g.boundary.size(), 1u);
  EXPECT_EQ(g.boundary[0].size(), 2u * (300 + 200));
  EXPECT_EQ(g.boundary[0][1], 1u);  // counter-clockwise from vertex 0
  EXPECT_EQ(g.validate(), std::nullopt);
  TriMesh f = g;
  std::swap(f.faces[70001][1], f.faces[70001][2]);
  std::swap(f.faces[1001][1], f.faces[1001][2]);
  EXPECT_EQ(f.validate(),
            "faces 998 and 1001 both run along edge 501→802: a face is flipped against its neighbour, or the edge "
            "has more than two faces");
  TriMesh d = g;  // a pocket: the opposite of face 5000 added at the end
  d.faces.push_back({g.faces[5000][0], g.faces[5000][2], g.faces[5000][1]});
  EXPECT_THAT(d.validate(), Optional(HasSubstr("both run along edge")));  // its edges are the neighbours' too
}

// Texture coordinates: none, or one finite (u, v) per vertex; the summary says when there are.
TEST(TriMesh, TextureCoordinatesAreOnePerVertexOrNone) {
  TriMesh m = square();
  EXPECT_FALSE(m.has_uv());
  m.uv = {{0, 0}, {1, 0}, {1, 1}, {0, 1}};
  EXPECT_TRUE(m.has_uv());
  EXPECT_EQ(m.validate(), std::nullopt);
  EXPECT_EQ(summary(m), "4 vertices, 2 faces, 1 boundary loop, texture coordinates");
  m.uv.pop_back();
  EXPECT_EQ(m.validate(), "uv holds 3 texture coordinates for 4 vertices (one per vertex, or none)");
  m.uv = {{0, 0}, {1, 0}, {1, kNaN}, {0, 1}};
  EXPECT_EQ(m.validate(), "uv of vertex 2 (1, nan) is not finite");
}

TEST(TriMesh, LoopsMustBeExactlyTheBoundary) {
  auto loops = [](TriMesh m, std::vector<std::vector<TriMesh::Index>> b) {
    m.boundary = std::move(b);
    return m.validate();
  };
  EXPECT_EQ(loops(square(), {}), "boundary edge 0→1 is in no boundary loop (4 boundary edges, 0 in the loops)");
  EXPECT_EQ(loops(square(), {{0, 3, 2, 1}}),
            "boundary loop 0: 0→3 is not a boundary edge (the boundary runs 0→1, along its faces' edges)");
  EXPECT_EQ(loops(square(), {{0, 1, 2, 3}, {}}), "boundary loop 1 is empty");
  EXPECT_EQ(loops(square(), {{0, 1, 2, 3, 0, 1, 2, 3}}), "boundary loop 0: vertex 0 appears twice among the loops");
  EXPECT_EQ(loops(square(), {{0, 1, 2, 9}}), "boundary loop 0 names vertex 9, but there are 4 vertices");
  EXPECT_EQ(loops(annulus(), {{0, 1, 2, 3}}),
            "boundary edge 4→7 is in no boundary loop (8 boundary edges, 4 in the loops)");
  EXPECT_EQ(loops(tetrahedron(), {{0, 1, 2}}), "boundary loop 0: vertex 0 is not on the boundary");
}

// ---------------------------------------------------------------------------------------------
// Three mutually tangent unit circles around a fourth (a flower): radii 1, centres on a circle of
// radius 2 at 120° (petals tangent to the centre; to each other only approximately).
CirclePacking flower() {
  CirclePacking p;
  p.radii = {1, 1, 1, 1};
  p.centres = {{0, 0}, {2, 0}, {-1, std::sqrt(3.0)}, {-1, -std::sqrt(3.0)}};
  p.faces = {{0, 1, 2}, {0, 2, 3}, {0, 3, 1}};
  p.boundary = {0, 1, 1, 1};
  return p;
}

TEST(CirclePacking, ValidPackingAndItsTangencyError) {
  CirclePacking p = flower();
  EXPECT_EQ(p.validate(), std::nullopt);
  EXPECT_EQ(summary(p), "4 circles, 3 faces, 3 on the boundary, euclidean");
  // petals 1 and 2: centres 2√3 apart, radii sum 2
  EXPECT_NEAR(p.tangency_error(), (2 * std::sqrt(3.0) - 2) / 2, 1e-12);
  // scaled into the unit disc, it is a valid hyperbolic (disc model) drawing
  p.geometry = CirclePacking::Geometry::Hyperbolic;
  for (auto& r : p.radii) r /= 3;
  for (auto& c : p.centres) c = {c[0] / 3, c[1] / 3};
  EXPECT_EQ(p.validate(), std::nullopt);
  EXPECT_EQ(summary(p), "4 circles, 3 faces, 3 on the boundary, hyperbolic (Poincaré disc)");
}

TEST(CirclePacking, InvalidPackingsSayWhy) {
  auto broken = [](auto edit) {
    CirclePacking p = flower();
    edit(p);
    return p.validate();
  };
  EXPECT_EQ(broken([](CirclePacking& p) { p.centres.pop_back(); }), "3 centres for 4 radii");
  EXPECT_EQ(broken([](CirclePacking& p) { p.boundary.pop_back(); }), "3 boundary flags for 4 circles");
  EXPECT_EQ(broken([](CirclePacking& p) { p.radii[2] = 0; }), "circle 2: radius 0 is not positive");
  EXPECT_EQ(broken([](CirclePacking& p) { p.radii[2] = kInf; }), "circle 2: radius inf is not positive");
  EXPECT_EQ(broken([](CirclePacking& p) { p.centres[1][0] = kNaN; }), "circle 1: centre (nan, 0) is not finite");
  EXPECT_EQ(broken([](CirclePacking& p) { p.boundary[1] = 2; }), "circle 1: boundary flag 2 is neither 0 nor 1");
  EXPECT_EQ(broken([](CirclePacking& p) { p.boundary[0] = 1; }),
            "circle 0: boundary flag 1, but vertex 0 is not on the triangulation's boundary");
  EXPECT_EQ(broken([](CirclePacking& p) { p.boundary[3] = 0; }),
            "circle 3: boundary flag 0, but vertex 3 is on the triangulation's boundary");
  EXPECT_EQ(broken([](CirclePacking& p) {
              p.faces[2] = {0, 1, 3};
            }),
            "triangulation: faces 0 and 2 both run along edge 0→1: a face is flipped against its neighbour, or the "
            "edge has more than two faces");
  // circle 0 (centre (0, 0), radius 1) touches the unit circle from inside: accepted
  EXPECT_EQ(broken([](CirclePacking& p) { p.geometry = CirclePacking::Geometry::Hyperbolic; }),
            "circle 1 (centre (2, 0), radius 1) leaves the unit disc (reaches 3)");
}

// ---------------------------------------------------------------------------------------------
TEST(MoleculeSet, IsAnSdkTypeWithItsSummary) {
  MoleculeSet s;
  s.molecules.push_back({.name = "water", .atoms = {{"O"}, {"H"}, {"H"}}, .bonds = {{0, 1, 1}, {0, 2, 1}}});
  s.molecules.push_back({.name = "argon", .atoms = {{"AR"}}});
  EXPECT_EQ(summary(s), "2 molecule(s), 4 atoms, 2 bonds");
  EXPECT_EQ(Registry().find_type("MoleculeSet")->origin, "core");
}

TEST(Types, EverySdkTypeIsRegisteredByCore) {
  const Registry r;
  for (const char* name : {"Matrix<f64>", "Matrix<f32>", "DistanceBounds", "Structure", "RestraintSet", "Table",
                           "MoleculeSet", "Image", "Signal", "Scores", "Segmentation", "TriMesh", "CirclePacking"}) {
    SCOPED_TRACE(name);
    const TypeInfo* t = r.find_type(name);
    ASSERT_NE(t, nullptr);
    EXPECT_EQ(t->origin, "core");
    EXPECT_FALSE(t->doc.empty());
    EXPECT_GT(t->layout.size, 0u);
  }
  EXPECT_EQ(r.find_type("Image")->layout, type_layout<Image>());
}

}  // namespace

// ---------------------------------------------------------------------------------------------
// Two definitions of one type name, as two plugins that do not share a header would write them.
namespace one {
struct Twin {
  double x = 1;
};
}  // namespace one
namespace two {
struct Twin {
  double x = 2, y = 3;
};
}  // namespace two
template <>
struct DataType<one::Twin> {
  static constexpr std::string_view name = "Twin";
  static constexpr std::string_view doc = "first";
  static std::string summary(const one::Twin&) { return "one"; }
};
template <>
struct DataType<two::Twin> {
  static constexpr std::string_view name = "Twin";
  static constexpr std::string_view doc = "second";
  static constexpr int version = 2;
  static std::string summary(const two::Twin&) { return "two"; }
};

namespace {

TEST(TypeLayout, DescribesTheCxxTypeSizeAlignmentAndVersion) {
  const TypeLayout a = type_layout<one::Twin>();
  EXPECT_EQ(a.size, sizeof(double));
  EXPECT_EQ(a.align, alignof(double));
  EXPECT_EQ(a.version, 1);  // DataType<one::Twin> declares none
  EXPECT_EQ(a.str(), fmt::format("C++ type gemflow::one::Twin, {} bytes, alignment {}, version 1", sizeof(double),
                                 alignof(double)));
  EXPECT_EQ(type_layout<two::Twin>().version, 2);
  EXPECT_NE(a, type_layout<two::Twin>());
}

TEST(TypeLayout, SameNameWithAnotherLayoutIsRefusedNamingBothOrigins) {
  Registry r;
  r.add_type<one::Twin>("libfirst.so");
  EXPECT_NO_THROW(r.add_type<one::Twin>("libthird.so"));  // the same definition: the same type
  EXPECT_EQ(r.find_type("Twin")->origin, "libfirst.so");
  EXPECT_THAT([&] { r.add_type<two::Twin>("libsecond.so"); },
              ::testing::ThrowsMessage<Error>(::testing::AllOf(
                  HasSubstr("data type 'Twin' is defined differently by libfirst.so (C++ type gemflow::one::Twin"),
                  HasSubstr("and by libsecond.so (C++ type gemflow::two::Twin"), HasSubstr("version 2)"))));
  EXPECT_EQ(r.find_type("Twin")->doc, "first");
  // Only the version differs (a changed meaning behind the same fields): refused too.
  TypeInfo bumped = *r.find_type("Twin");
  bumped.origin = "libnewer.so";
  bumped.layout.version = 3;
  EXPECT_THAT([&] { r.add_type(bumped); },
              ::testing::ThrowsMessage<Error>(HasSubstr("and by libnewer.so (C++ type gemflow::one::Twin, 8 bytes, "
                                                        "alignment 8, version 3)")));
}

TEST(TypeLayout, SdkTypesMayBeRegisteredAgainOnlyAsThemselves) {
  Registry r;
  EXPECT_NO_THROW(r.add_type<Table>("libplugin.so"));
  EXPECT_EQ(r.find_type("Table")->origin, "core");
  TypeInfo impostor = *r.find_type("Table");
  impostor.origin = "libplugin.so";
  impostor.layout.size += 8;
  EXPECT_THAT([&] { r.add_type(impostor); },
              ::testing::ThrowsMessage<Error>(HasSubstr("data type 'Table' is defined differently by core")));
}

TEST(TypeLayout, ValueReadAsAnotherCxxTypeOfTheSameNameThrows) {
  const Value v = Value::make(one::Twin{});
  EXPECT_EQ(v.as<one::Twin>()->x, 1.0);
  EXPECT_THAT(
      [&] { (void)v.as<two::Twin>(); },
      ::testing::ThrowsMessage<Error>(HasSubstr(
          "value of type Twin holds another C++ type (gemflow::one::Twin) than the one read (gemflow::two::Twin)")));
}

fs::path plugin(const std::string& name) {
  return fs::path(GEMFLOW_TEST_PLUGIN_DIR) / name / ("libgemflow_" + name + ".so");
}

// Plugins shape_a and shape_b define "test.Shape" with one and two doubles: the second loaded is
// refused, naming both files, and nothing of it stays.
TEST(TypeLayout, PluginLoadRefusesAnotherLayoutNamingBothFiles) {
  for (const auto& [first, second] : {std::pair{"shape_a", "shape_b"}, std::pair{"shape_b", "shape_a"}}) {
    SCOPED_TRACE(first);
    Registry reg;
    PluginHost host(reg);
    ASSERT_TRUE(host.load(plugin(first)).loaded);
    const PluginRecord r = host.load(plugin(second));
    EXPECT_FALSE(r.loaded);
    EXPECT_THAT(r.error, HasSubstr("data type 'test.Shape' is defined differently by " + plugin(first).string() +
                                   " (C++ type layout_test::Shape"));
    EXPECT_THAT(r.error, HasSubstr("and by " + plugin(second).string() + " (C++ type layout_test::Shape"));
    EXPECT_EQ(reg.find_type("test.Shape")->origin, plugin(first).string());
    EXPECT_EQ(reg.find_node(std::string(second) + ".make"), nullptr);
    EXPECT_NE(reg.find_node(std::string(first) + ".make"), nullptr);
  }
}

}  // namespace
}  // namespace gemflow
