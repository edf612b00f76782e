// Viewer geometry (no display): grid bond perception equals the brute-force rule; Kabsch
// recovers a known rigid motion (RMSD 0) and never returns a reflection; the ensemble
// superposition fits the rigid core and recovers the RMSF of the unrotated models.
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

namespace {
/// Rotation matrix of a unit quaternion drawn uniformly.
std::array<std::array<double, 3>, 3> random_rotation(std::mt19937& rng) {
  std::normal_distribution<double> g(0.0, 1.0);
  double q[4] = {g(rng), g(rng), g(rng), g(rng)};
  const double n = std::sqrt(q[0] * q[0] + q[1] * q[1] + q[2] * q[2] + q[3] * q[3]);
  for (double& v : q) v /= n;
  const double w = q[0], x = q[1], y = q[2], z = q[3];
  return {{{1 - 2 * (y * y + z * z), 2 * (x * y - w * z), 2 * (x * z + w * y)},
           {2 * (x * y + w * z), 1 - 2 * (x * x + z * z), 2 * (y * z - w * x)},
           {2 * (x * z - w * y), 2 * (y * z + w * x), 1 - 2 * (x * x + y * y)}}};
}

/// 15 residues (N, CA, C, O) on a helix, 8 models: residues 1-10 identical in every model (a
/// rigid core), residues 11-15 displaced per model by known vectors growing to the C-terminus.
/// `unrotated` are these models; the structure's models are each moved by a random rigid motion.
struct SyntheticEnsemble {
  gemflow::Structure s;
  std::vector<std::vector<Vec3>> unrotated;
};
SyntheticEnsemble synthetic_ensemble() {
  SyntheticEnsemble e;
  const std::string names[] = {"N", "CA", "C", "O"}, elements[] = {"N", "C", "C", "O"};
  const Vec3 offset[] = {{-0.5, -1.0, -0.8}, {0, 0, 0}, {-0.5, 1.0, 0.8}, {-0.5, 1.3, 1.98}};
  std::vector<Vec3> base;
  for (int r = 0; r < 15; ++r) {
    const double a = r * 100.0 * M_PI / 180.0;
    for (int k = 0; k < 4; ++k) {
      const Vec3& o = offset[k];
      base.push_back({(2.3 + o[0]) * std::cos(a) - o[1] * std::sin(a), (2.3 + o[0]) * std::sin(a) + o[1] * std::cos(a),
                      1.5 * r + o[2]});
      e.s.atoms.push_back(
          {.name = names[k], .element = elements[k], .residue = "ALA", .residue_number = r + 1, .chain = "A"});
    }
  }
  std::mt19937 rng(11);
  std::normal_distribution<double> g(0.0, 1.0);
  for (int m = 0; m < 8; ++m) {
    std::vector<Vec3> xyz = base;
    for (int r = 10; r < 15; ++r) {
      const double scale = 0.5 * (r - 9);  // 0.5 Å at residue 11 … 2.5 Å at residue 15
      const Vec3 d{scale * g(rng), scale * g(rng), scale * g(rng)};
      for (int k = 0; k < 4; ++k)
        for (int c = 0; c < 3; ++c) xyz[static_cast<std::size_t>(4 * r + k)][c] += d[c] + 0.1 * k * g(rng);
    }
    e.unrotated.push_back(xyz);
    const auto rot = random_rotation(rng);
    const Vec3 t{10 * g(rng), 10 * g(rng), 10 * g(rng)};
    for (auto& p : xyz) {
      const Vec3 q = p;
      for (int i = 0; i < 3; ++i) p[i] = rot[i][0] * q[0] + rot[i][1] * q[1] + rot[i][2] * q[2] + t[i];
    }
    e.s.models.push_back(std::move(xyz));
  }
  return e;
}

/// Backbone RMSF per residue of models already in one frame (no fitting): the oracle.
std::vector<double> direct_rmsf(const gemflow::Structure& s, const std::vector<std::vector<Vec3>>& models) {
  std::vector<double> sum(15, 0.0), count(15, 0.0);
  for (std::size_t i = 0; i < s.atoms.size(); ++i) {
    if (s.atoms[i].name == "O") continue;
    Vec3 mean{0, 0, 0};
    for (const auto& m : models)
      for (int c = 0; c < 3; ++c) mean[c] += m[i][c] / static_cast<double>(models.size());
    const auto q = static_cast<std::size_t>(s.atoms[i].residue_number - 1);
    for (const auto& m : models) {
      sum[q] += std::pow(m[i][0] - mean[0], 2) + std::pow(m[i][1] - mean[1], 2) + std::pow(m[i][2] - mean[2], 2);
      count[q] += 1;
    }
  }
  for (std::size_t q = 0; q < 15; ++q) sum[q] = std::sqrt(sum[q] / count[q]);
  return sum;
}
}  // namespace

TEST(StructureGeometry, EnsembleSuperpositionFitsTheCoreAndRecoversTheRmsf) {
  const auto e = synthetic_ensemble();
  const auto oracle = direct_rmsf(e.s, e.unrotated);
  for (int r = 0; r < 10; ++r) ASSERT_NEAR(oracle[static_cast<std::size_t>(r)], 0.0, 1e-12);
  for (int r = 10; r < 15; ++r) ASSERT_GT(oracle[static_cast<std::size_t>(r)], 0.3);

  const auto sup = gs::superpose_ensemble(e.s);
  ASSERT_FALSE(sup.empty());
  ASSERT_EQ(sup.residues.size(), 15u);
  ASSERT_EQ(sup.residue_rmsf.size(), 15u);
  ASSERT_EQ(sup.models.size(), 8u);
  for (std::size_t q = 0; q < 15; ++q) {
    EXPECT_EQ(sup.residues[q], (gs::ResidueId{"A", static_cast<int>(q) + 1, ""}));
    if (q < 10) EXPECT_NEAR(sup.residue_rmsf[q], 0.0, 1e-9) << "core residue " << q + 1;
    else EXPECT_NEAR(sup.residue_rmsf[q], oracle[q], 1e-9) << "tail residue " << q + 1;
  }
  // The core is the lower half by RMSF, inside the rigid residues; the models agree on it.
  EXPECT_EQ(sup.core.size(), 8u);
  for (auto q : sup.core) EXPECT_LT(q, 10u);
  EXPECT_NEAR(sup.rmsd_to_mean, 0.0, 1e-9);
  // Every atom moved with its model (O too): each superposed model is a rigid image of its
  // unrotated one, and the core atoms (O included) coincide across the models.
  std::vector<std::array<std::size_t, 2>> pairs;
  for (std::size_t i = 0; i < e.s.atoms.size(); ++i) pairs.push_back({i, i});
  for (std::size_t m = 0; m < 8; ++m) {
    auto fit = gs::kabsch(e.unrotated[m], sup.models[m], pairs);
    ASSERT_TRUE(fit);
    EXPECT_LT(fit->rmsd, 1e-9) << "model " << m + 1;
    for (std::size_t i = 0; i < 40; ++i)
      for (int c = 0; c < 3; ++c) EXPECT_NEAR(sup.models[m][i][c], sup.models[0][i][c], 1e-9);
  }
  // Per atom: its residue's RMSF.
  ASSERT_EQ(sup.atom_rmsf.size(), e.s.atoms.size());
  for (std::size_t i = 0; i < e.s.atoms.size(); ++i) EXPECT_EQ(sup.atom_rmsf[i], sup.residue_rmsf[i / 4]);

  // The test can fail: fitting over all backbone atoms (no core) spreads the tail's motion over
  // the core, and the tail RMSF differs from the oracle.
  std::vector<std::array<std::size_t, 2>> bb;
  for (std::size_t i = 0; i < e.s.atoms.size(); ++i)
    if (e.s.atoms[i].name != "O") bb.push_back({i, i});
  std::vector<std::vector<Vec3>> whole = e.s.models;
  for (int it = 0; it < 3; ++it) {
    std::vector<Vec3> mean(e.s.atoms.size(), Vec3{0, 0, 0});
    for (const auto& m : whole)
      for (std::size_t i = 0; i < mean.size(); ++i)
        for (int c = 0; c < 3; ++c) mean[i][c] += m[i][c] / 8.0;
    for (auto& m : whole) {
      auto fit = gs::kabsch(m, mean, bb);
      ASSERT_TRUE(fit);
      for (auto& x : m) x = fit->apply(x);
    }
  }
  const auto all_fit = direct_rmsf(e.s, whole);
  double worst = 0;
  for (std::size_t q = 0; q < 15; ++q) worst = std::max(worst, std::abs(all_fit[q] - oracle[q]));
  EXPECT_GT(worst, 0.05);
  EXPECT_GT(all_fit[0], 0.01);
}

TEST(StructureGeometry, EnsembleSuperpositionOfOneModelAndOfNoBackbone) {
  auto e = synthetic_ensemble();
  e.s.models.resize(1);
  const auto one = gs::superpose_ensemble(e.s);
  ASSERT_EQ(one.residue_rmsf.size(), 15u);
  for (double v : one.residue_rmsf) EXPECT_EQ(v, 0.0);
  ASSERT_EQ(one.models.size(), 1u);
  for (std::size_t i = 0; i < e.s.atoms.size(); ++i)
    for (int c = 0; c < 3; ++c) EXPECT_NEAR(one.models[0][i][c], e.s.models[0][i][c], 1e-9);
  EXPECT_EQ(one.core.size(), 15u);
  // An insertion code makes another residue: 5 and 5A are two.
  for (std::size_t i = 20; i < 24; ++i) {
    e.s.atoms[i].residue_number = 5;
    e.s.atoms[i].insertion = "A";
  }
  const auto ins = gs::superpose_ensemble(e.s);
  ASSERT_EQ(ins.residues.size(), 15u);
  EXPECT_EQ(ins.residues[4], (gs::ResidueId{"A", 5, ""}));
  EXPECT_EQ(ins.residues[5], (gs::ResidueId{"A", 5, "A"}));

  // No backbone atoms (a ligand, waters): an empty result, nothing to draw.
  gemflow::Structure lig;
  for (const char* n : {"C1", "O1", "N1", "CA"}) {
    gemflow::Atom a;
    a.name = n;
    a.element = n[0] == 'C' ? "C" : n[0] == 'O' ? "O" : "N";
    a.hetero = std::string(n) == "CA";
    lig.atoms.push_back(a);
  }
  lig.models.assign(3, std::vector<Vec3>(4, Vec3{1, 2, 3}));
  const auto none = gs::superpose_ensemble(lig);
  EXPECT_TRUE(none.empty());
  EXPECT_TRUE(none.models.empty());
  EXPECT_TRUE(none.residue_rmsf.empty());
  EXPECT_TRUE(gs::superpose_ensemble(gemflow::Structure{}).empty());
  // A model of the wrong size (a broken Structure): empty, not a read past the end.
  e.s.models.push_back(std::vector<Vec3>(3));
  EXPECT_TRUE(gs::superpose_ensemble(e.s).empty());
}

TEST(StructureGeometry, RmsfColourHasAFixedScale) {
  using C = std::array<double, 3>;
  EXPECT_EQ(gs::rmsf_color(0.0), (C{0.0, 0.3, 1.0}));
  EXPECT_EQ(gs::rmsf_color(-1.0), gs::rmsf_color(0.0));
  EXPECT_EQ(gs::rmsf_color(1.0), (C{1.0, 1.0, 1.0}));
  EXPECT_EQ(gs::rmsf_color(2.0), (C{1.0, 0.0, 0.0}));
  EXPECT_EQ(gs::rmsf_color(7.5), gs::rmsf_color(2.0));
  const auto half = gs::rmsf_color(0.5), one_half = gs::rmsf_color(1.5);
  EXPECT_NEAR(half[0], 0.5, 1e-12);
  EXPECT_NEAR(half[1], 0.65, 1e-12);
  EXPECT_NEAR(half[2], 1.0, 1e-12);
  EXPECT_NEAR(one_half[0], 1.0, 1e-12);
  EXPECT_NEAR(one_half[1], 0.5, 1e-12);
  EXPECT_NEAR(one_half[2], 0.5, 1e-12);
  EXPECT_EQ(gs::rmsf_color(std::nan("")), (C{0.6, 0.6, 0.6}));
}
