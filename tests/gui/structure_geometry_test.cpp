// Viewer geometry (no display): grid bond perception equals the brute-force rule; Kabsch
// recovers a known rigid motion (RMSD 0) and never returns a reflection.
#include <cmath>
#include <random>

#include <gtest/gtest.h>

#include "viewers/structure_geometry.hpp"

namespace gs = gemflow::studio;
using gemflow::Vec3;

TEST(StructureGeometry, GridBondsEqualBruteForce) {
  std::mt19937 rng(7);
  std::uniform_real_distribution<double> u(0.0, 12.0);
  const char* els[] = {"C", "N", "O", "H", "S", "FE"};
  for (int n : {2, 17, 300, 1001}) {
    std::vector<gemflow::Atom> atoms(static_cast<std::size_t>(n));
    std::vector<Vec3> xyz(atoms.size());
    for (std::size_t i = 0; i < atoms.size(); ++i) {
      atoms[i].element = els[rng() % 6];
      xyz[i] = {u(rng), u(rng), u(rng) * n / 300.0};
    }
    std::vector<std::array<std::size_t, 2>> brute;
    for (std::size_t i = 0; i < atoms.size(); ++i)
      for (std::size_t j = i + 1; j < atoms.size(); ++j) {
        const double d = std::sqrt(std::pow(xyz[i][0] - xyz[j][0], 2) + std::pow(xyz[i][1] - xyz[j][1], 2) +
                                   std::pow(xyz[i][2] - xyz[j][2], 2));
        if (d > 0.4 && d <= gs::covalent_radius(atoms[i].element) + gs::covalent_radius(atoms[j].element) + 0.45)
          brute.push_back({i, j});
      }
    EXPECT_EQ(gs::perceive_bonds(atoms, xyz), brute) << n << " atoms";
  }
}

TEST(StructureGeometry, EthaneBonds) {
  // C-C 1.54 Å, C-H 1.09 Å: 7 bonds, no H-H or geminal C...H bonds.
  std::vector<gemflow::Atom> atoms(8);
  std::vector<Vec3> xyz{{0, 0, 0}, {1.54, 0, 0}};
  atoms[0].element = atoms[1].element = "C";
  const double a = 1.09 * std::sin(109.5 * M_PI / 180), b = 1.09 * std::cos(109.5 * M_PI / 180);
  for (int c = 0; c < 2; ++c)
    for (int k = 0; k < 3; ++k) {
      const double phi = 2 * M_PI * k / 3 + c * M_PI / 3;
      xyz.push_back({c == 0 ? b : 1.54 - b, a * std::cos(phi), a * std::sin(phi)});
      atoms[xyz.size() - 1].element = "H";
    }
  EXPECT_EQ(gs::perceive_bonds(atoms, xyz).size(), 7u);
}

TEST(StructureGeometry, KabschRecoversRigidMotion) {
  std::mt19937 rng(3);
  std::normal_distribution<double> g(0.0, 5.0);
  std::vector<Vec3> target(50);
  for (auto& p : target) p = {g(rng), g(rng), g(rng)};
  // mobile = R^T (target - t): superposing mobile onto target must give back R and t.
  const double th = 0.7;
  const double r[3][3] = {{std::cos(th), -std::sin(th), 0}, {std::sin(th), std::cos(th), 0}, {0, 0, 1}};
  const Vec3 t{3, -2, 10};
  std::vector<Vec3> mobile(target.size());
  std::vector<std::array<std::size_t, 2>> pairs;
  for (std::size_t i = 0; i < target.size(); ++i) {
    const Vec3 d{target[i][0] - t[0], target[i][1] - t[1], target[i][2] - t[2]};
    for (int k = 0; k < 3; ++k) mobile[i][k] = r[0][k] * d[0] + r[1][k] * d[1] + r[2][k] * d[2];
    pairs.push_back({i, i});
  }
  auto s = gs::kabsch(mobile, target, pairs);
  ASSERT_TRUE(s);
  EXPECT_LT(s->rmsd, 1e-10);
  for (int i = 0; i < 3; ++i) {
    EXPECT_NEAR(s->translation[i], t[i], 1e-9);
    for (int j = 0; j < 3; ++j) EXPECT_NEAR(s->rotation[i][j], r[i][j], 1e-12);
  }
  // A mirror image cannot be superposed by a rotation: RMSD stays large, det(R) = +1.
  std::vector<Vec3> mirror = target;
  for (auto& p : mirror) p[2] = -p[2];
  auto m = gs::kabsch(mirror, target, pairs);
  ASSERT_TRUE(m);
  const auto& R = m->rotation;
  const double det = R[0][0] * (R[1][1] * R[2][2] - R[1][2] * R[2][1]) -
                     R[0][1] * (R[1][0] * R[2][2] - R[1][2] * R[2][0]) +
                     R[0][2] * (R[1][0] * R[2][1] - R[1][1] * R[2][0]);
  EXPECT_NEAR(det, 1.0, 1e-12);
  EXPECT_GT(m->rmsd, 1.0);
  EXPECT_FALSE(gs::kabsch(mobile, target, {{0, 0}, {1, 1}}));
}

TEST(StructureGeometry, BackboneTracesSplitAtChainBreaksAndChains) {
  // Chain A: 5 Cα 3.8 Å apart, then a 9 Å gap, then 3 more; chain B: 2 Cα. Side-chain atoms
  // and a hetero "CA" (calcium) are not part of any trace.
  std::vector<gemflow::Atom> atoms;
  std::vector<Vec3> xyz;
  auto add = [&](const char* name, const char* el, const char* chain, Vec3 p, bool het = false) {
    gemflow::Atom a;
    a.name = name;
    a.element = el;
    a.chain = chain;
    a.hetero = het;
    atoms.push_back(a);
    xyz.push_back(p);
  };
  double x = 0;
  for (int i = 0; i < 5; ++i, x += 3.8) {
    add("N", "N", "A", {x - 1, 0, 0});
    add("CA", "C", "A", {x, 0, 0});
    add("CB", "C", "A", {x, 1.5, 0});
  }
  x += 9.0 - 3.8;
  for (int i = 0; i < 3; ++i, x += 3.8) add("CA", "C", "A", {x, 0, 0});
  add("CA", "CA", "A", {x + 1, 0, 0}, true);
  add("CA", "C", "B", {0, 10, 0});
  add("CA", "C", "B", {3.8, 10, 0});
  add("CA", "C", "C", {0, 20, 0});  // a single Cα: no trace
  const auto t = gs::backbone_traces(atoms, xyz);
  ASSERT_EQ(t.size(), 3u);
  EXPECT_EQ(t[0], (std::vector<std::size_t>{1, 4, 7, 10, 13}));
  EXPECT_EQ(t[1], (std::vector<std::size_t>{15, 16, 17}));
  EXPECT_EQ(t[2], (std::vector<std::size_t>{19, 20}));
}

TEST(StructureGeometry, PrincipalAxesOfAnOrientedBox) {
  // Points on a 20 × 6 × 2 Å grid, rotated and shifted: the axes come back in order of
  // extent, orthonormal and right-handed, with the half extents of the box.
  const double th = 0.4;
  const Vec3 shift{5, -3, 12};
  std::vector<Vec3> pts;
  for (double a = -10; a <= 10; a += 1)
    for (double b = -3; b <= 3; b += 1)
      for (double c = -1; c <= 1; c += 1)
        pts.push_back({std::cos(th) * a - std::sin(th) * b + shift[0], std::sin(th) * a + std::cos(th) * b + shift[1],
                       c + shift[2]});
  const auto p = gs::principal_axes(pts);
  for (int k = 0; k < 3; ++k) EXPECT_NEAR(p.centre[k], shift[k], 1e-9);
  EXPECT_NEAR(std::abs(p.axis[0][0] * std::cos(th) + p.axis[0][1] * std::sin(th)), 1.0, 1e-9);
  EXPECT_NEAR(std::abs(-p.axis[1][0] * std::sin(th) + p.axis[1][1] * std::cos(th)), 1.0, 1e-9);
  EXPECT_NEAR(std::abs(p.axis[2][2]), 1.0, 1e-9);
  EXPECT_NEAR(p.half_extent[0], 10.0, 1e-9);
  EXPECT_NEAR(p.half_extent[1], 3.0, 1e-9);
  EXPECT_NEAR(p.half_extent[2], 1.0, 1e-9);
  const auto& a = p.axis;
  const Vec3 cross{a[0][1] * a[1][2] - a[0][2] * a[1][1], a[0][2] * a[1][0] - a[0][0] * a[1][2],
                   a[0][0] * a[1][1] - a[0][1] * a[1][0]};
  for (int k = 0; k < 3; ++k) EXPECT_NEAR(cross[k], a[2][k], 1e-12);
}

TEST(StructureGeometry, RainbowRunsFromBlueToRed) {
  EXPECT_EQ(gs::rainbow(0.0), (std::array<double, 3>{0, 0, 1}));
  EXPECT_EQ(gs::rainbow(0.5), (std::array<double, 3>{0, 1, 0}));
  EXPECT_EQ(gs::rainbow(1.0), (std::array<double, 3>{1, 0, 0}));
  EXPECT_EQ(gs::rainbow(2.0), gs::rainbow(1.0));
}
