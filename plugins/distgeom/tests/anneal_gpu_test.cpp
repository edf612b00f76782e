// Label gpu: the batched CUDA restrained MD (anneal_cuda.hpp) against the CPU fp64 reference
// (md_steps) on a few steps, and the device repel pair lists against repel_pairs(). Skips when
// no CUDA device is present.
#include <gtest/gtest.h>

#include <cmath>
#include <map>
#include <string>
#include <tuple>

#include <gemflow/distgeom/anneal.hpp>
#include <gemflow/distgeom/topology.hpp>
#include <gemflow/io/structure_io.hpp>

#include "ccd_templates.hpp"

#if defined(GEMFLOW_DISTGEOM_HAVE_CUDA)
#include <gemflow/distgeom/anneal_cuda.hpp>
#include <gemflow/distgeom/smoothing_cuda.hpp>
#endif

using namespace gemflow::distgeom;

#if defined(GEMFLOW_DISTGEOM_HAVE_CUDA)
namespace {

// A 20-residue peptide (2KPU 1-20) with every term active: NOEs (single and group), a dihedral
// restraint, repel at full radius, the Ramachandran term (conformers 2 and 3 are mirror images:
// φ > 0, outside every box), 4 perturbed conformers with their own velocities.
TEST(AnnealGpu, BatchedMdMatchesTheCpuReferenceOnAFewSteps) {
  if (cuda::device_count() == 0) GTEST_SKIP() << "no CUDA device: GPU annealing test skipped";
  const std::string seq = "SSQTLDRDPTRLAKEIIEQV";
  ChainSequence c{"A", {}};
  for (std::size_t i = 0; i < seq.size(); ++i)
    c.residues.push_back(SequenceResidue{nodes::three_letter(seq[i]), static_cast<int>(i + 1), {}});
  const auto t = build_topology({c}, nodes::standard_templates());
  auto idx = [&](int r, const char* nm) {
    for (std::size_t i = 0; i < t.atoms.size(); ++i)
      if (t.atoms[i].residue_number == r && t.atoms[i].name == nm) return i;
    return SIZE_MAX;
  };
  std::vector<PairRestraint> noes;
  for (int r = 1; r + 4 <= 20; ++r) {
    PairRestraint p{r, {}, 1.8, 5.0, 0.0};
    p.alternatives.push_back({{idx(r, "CA")}, {idx(r + 4, "CA")}});
    noes.push_back(p);
  }
  PairRestraint g{100, {}, 0.0, 4.0, 1.0};
  g.alternatives.push_back({{idx(5, "HB2"), idx(5, "HB3")}, {idx(9, "HA")}});
  noes.push_back(g);
  std::vector<TorsionRestraint> dih(1);
  dih[0].atoms = {idx(4, "C"), idx(5, "N"), idx(5, "CA"), idx(5, "C")};
  dih[0].lower = -80;
  dih[0].upper = -40;
  const auto terms = anneal_terms(t.atoms, t.xyz, t.bonds, noes, dih);
  AnnealWeights w;
  w.rep_scale = 0.9;
  w.rama = 50.0;
  ASSERT_EQ(terms.ramas.size(), 18u);  // residues 2-19 (no Gly in this sequence)
  MdOptions o;
  o.steps = 20;
  o.rebuild_every = 10;
  o.t_bath = 1000;
  const std::size_t B = 4, n = t.atoms.size();
  std::vector<double> x(B * 3 * n), v(B * 3 * n);
  std::uint64_t s = 11;
  auto rnd = [&] {
    s = s * 6364136223846793005ULL + 1442695040888963407ULL;
    return static_cast<double>(s >> 11) / 9007199254740992.0 - 0.5;
  };
  for (std::size_t b = 0; b < B; ++b)
    for (std::size_t k = 0; k < 3 * n; ++k) {
      x[b * 3 * n + k] = (b >= 2 && k % 3 == 0 ? -t.xyz[k] : t.xyz[k]) + 0.1 * rnd();
      v[b * 3 * n + k] = 4.0 * rnd();
    }
  for (std::size_t b = 2; b < B; ++b)
    EXPECT_GT(anneal_energy(terms, w, std::span<const double>(x.data() + b * 3 * n, 3 * n), {}).rama, 1.0);
  // capacity 1: every row of the first build overflows; the steps are run again with rows that
  // fit, and the result is the same
  for (const std::size_t capacity : {std::size_t{0}, std::size_t{1}}) {
    std::vector<double> gx = x, gv = v;
    const auto gpu = cuda::md_steps_batch(terms, w, gx, gv, B, o, 0, capacity);
    ASSERT_EQ(gpu.energy.size(), B);
    for (std::size_t b = 0; b < B; ++b) {
      std::vector<double> cx(x.begin() + static_cast<long>(b * 3 * n), x.begin() + static_cast<long>((b + 1) * 3 * n));
      std::vector<double> cv(v.begin() + static_cast<long>(b * 3 * n), v.begin() + static_cast<long>((b + 1) * 3 * n));
      const auto e = md_steps(terms, w, cx, cv, o);
      // fp64 on both; the GPU sums forces in another order (atomics): rounding, grown over 20 steps
      EXPECT_NEAR(gpu.energy[b], e.total, 1e-8 * std::abs(e.total)) << "structure " << b << ", capacity " << capacity;
      double dx = 0, dv = 0;
      for (std::size_t k = 0; k < 3 * n; ++k) {
        dx = std::max(dx, std::abs(gx[b * 3 * n + k] - cx[k]));
        dv = std::max(dv, std::abs(gv[b * 3 * n + k] - cv[k]));
      }
      EXPECT_LT(dx, 1e-8) << "structure " << b << ", capacity " << capacity << " (Å)";
      EXPECT_LT(dv, 1e-6) << "structure " << b << ", capacity " << capacity << " (Å/ps)";
    }
  }
}

// The repel pair lists built on the device are exactly repel_pairs()' on the 20 deposited models
// of 2KPU (1522 atoms with hydrogens, the topology from the sequence): the same pairs at the hot
// and the final radius scale, also when the rows start with room for one partner (regrown).
TEST(AnnealGpu, DeviceRepelListsEqualTheCpuListsOnThe2kpuModels) {
  if (cuda::device_count() == 0) GTEST_SKIP() << "no CUDA device: GPU annealing test skipped";
  const auto dep = gemflow::io::read_pdb(std::string(GEMFLOW_SOURCE_DIR) + "/sample_data/2kpu/2kpu.pdb");
  ChainSequence c{"A", {}};
  for (const auto& a : dep.atoms)
    if (c.residues.empty() || c.residues.back().number != a.residue_number)
      c.residues.push_back(SequenceResidue{a.residue, a.residue_number, {}});
  const auto topo = build_topology({c}, nodes::standard_templates());
  const std::size_t n = topo.atoms.size(), B = dep.models.size();
  ASSERT_EQ(B, 20u);
  std::map<std::tuple<int, std::string>, std::size_t> at;
  for (std::size_t i = 0; i < dep.atoms.size(); ++i) at[{dep.atoms[i].residue_number, dep.atoms[i].name}] = i;
  std::vector<double> x(B * 3 * n);
  for (std::size_t i = 0; i < n; ++i) {
    const auto it = at.find({topo.atoms[i].residue_number, topo.atoms[i].name});
    ASSERT_NE(it, at.end()) << topo.atoms[i].residue_number << " " << topo.atoms[i].name;
    for (std::size_t b = 0; b < B; ++b)
      for (int q = 0; q < 3; ++q) x[(b * n + i) * 3 + static_cast<std::size_t>(q)] = dep.models[b][it->second][q];
  }
  const auto terms = anneal_terms(topo.atoms, topo.xyz, topo.bonds, {}, {});
  for (const double scale : {0.9, 0.85})
    for (const std::size_t capacity : {std::size_t{0}, std::size_t{1}}) {
      const auto gpu = cuda::repel_pairs_batch(terms, x, B, scale, 0, capacity);
      ASSERT_EQ(gpu.size(), B);
      for (std::size_t b = 0; b < B; ++b) {
        auto cpu = repel_pairs(terms, std::span<const double>(x.data() + b * 3 * n, 3 * n), scale);
        std::sort(cpu.begin(), cpu.end());
        EXPECT_GT(cpu.size(), 10 * n);  // a real list: about 15 partners per atom
        EXPECT_EQ(gpu[b].size(), cpu.size()) << "model " << b + 1 << ", scale " << scale << ", capacity " << capacity;
        EXPECT_TRUE(gpu[b] == cpu) << "model " << b + 1 << ", scale " << scale << ", capacity " << capacity;
      }
    }
}

// The whole schedule batched against anneal() on the CPU, seed by seed (every term, the
// Ramachandran term included): every structure
// annealed, the schedule's steps, the same final energies (the MD is fp64 on both sides; only
// the order of summation differs), restraint energy below the start's.
TEST(AnnealGpu, BatchedScheduleMatchesTheCpuAnneal) {
  if (cuda::device_count() == 0) GTEST_SKIP() << "no CUDA device: GPU annealing test skipped";
  const std::string seq = "SSQTLDRDPTRLAKEIIEQV";
  ChainSequence c{"A", {}};
  for (std::size_t i = 0; i < seq.size(); ++i)
    c.residues.push_back(SequenceResidue{nodes::three_letter(seq[i]), static_cast<int>(i + 1), {}});
  const auto t = build_topology({c}, nodes::standard_templates());
  auto idx = [&](int r, const char* nm) {
    for (std::size_t i = 0; i < t.atoms.size(); ++i)
      if (t.atoms[i].residue_number == r && t.atoms[i].name == nm) return i;
    return SIZE_MAX;
  };
  std::vector<PairRestraint> noes;
  for (int r = 1; r + 3 <= 20; ++r) {  // a helix: CA(i)–CA(i+3) about 5 Å
    PairRestraint p{r, {}, 0.0, 5.5, 0.0};
    p.alternatives.push_back({{idx(r, "CA")}, {idx(r + 3, "CA")}});
    noes.push_back(p);
  }
  const auto terms = anneal_terms(t.atoms, t.xyz, t.bonds, noes, {});
  AnnealOptions o;
  o.hot_steps = 200;
  o.cooling_stages = 4;
  o.steps_per_stage = 50;
  o.minimise_iterations = 100;
  o.hot.rama = 20.0;  // the Ramachandran term ramped as the other weights
  o.final.rama = 200.0;
  const std::vector<std::vector<double>> starts{t.xyz, t.xyz, t.xyz};
  const auto r = cuda::anneal_batch(terms, starts, {1, 2, 3}, o);
  ASSERT_EQ(r.size(), 3u);
  const double e0 = anneal_energy(terms, o.final, t.xyz, {}).noe;
  for (std::size_t b = 0; b < r.size(); ++b) {
    const auto& a = r[b];
    AnnealOptions oc = o;
    oc.seed = b + 1;
    const auto ref = anneal(terms, t.xyz, oc);
    EXPECT_TRUE(std::isfinite(a.energy.total));
    EXPECT_EQ(a.steps, 400u);
    EXPECT_NEAR(a.energy.total, ref.energy.total, 1e-3 * std::abs(ref.energy.total)) << "seed " << b + 1;
    EXPECT_NEAR(a.energy.noe, ref.energy.noe, 1e-3 * std::abs(ref.energy.noe)) << "seed " << b + 1;
    EXPECT_LT(a.energy.noe, e0) << "seed " << b + 1;
  }
}

// The C2 symmetry term (symmetry_kernel) against the CPU fp64 reference: a dimer of two
// 6-residue chains built as a translated copy (far from C2: the distance-symmetry pairs differ by
// many Å), perturbed, 3 conformers with their own velocities, 20 steps with every term on.
TEST(AnnealGpu, SymmetryTermMatchesTheCpuReferenceOnAFewSteps) {
  if (cuda::device_count() == 0) GTEST_SKIP() << "no CUDA device: GPU annealing test skipped";
  std::vector<ChainSequence> chains;
  for (const char* id : {"A", "B"}) {
    ChainSequence c{id, {}};
    const std::string seq = "KLVAEW";
    for (std::size_t i = 0; i < seq.size(); ++i)
      c.residues.push_back(SequenceResidue{nodes::three_letter(seq[i]), static_cast<int>(i + 1), {}});
    chains.push_back(c);
  }
  const auto t = build_topology(chains, nodes::standard_templates());
  auto terms = anneal_terms(t.atoms, t.xyz, t.bonds, {}, {});
  terms.symmetry = c2_symmetry_pairs(t.atoms);
  ASSERT_EQ(terms.symmetry.size(), 2u * 15u);
  AnnealWeights w;
  w.sym = 1.0;  // E_sym ≈ 1500 kcal/mol at the start; atoms move up to 0.2 Å in the 20 steps
  MdOptions o;
  o.steps = 20;
  o.rebuild_every = 10;
  o.t_bath = 1000;
  const std::size_t B = 3, n = t.atoms.size();
  std::vector<double> x(B * 3 * n), v(B * 3 * n);
  std::uint64_t s = 17;
  auto rnd = [&] {
    s = s * 6364136223846793005ULL + 1442695040888963407ULL;
    return static_cast<double>(s >> 11) / 9007199254740992.0 - 0.5;
  };
  for (std::size_t b = 0; b < B; ++b)
    for (std::size_t k = 0; k < 3 * n; ++k) {
      x[b * 3 * n + k] = t.xyz[k] + 0.1 * rnd();
      v[b * 3 * n + k] = 4.0 * rnd();
    }
  for (std::size_t b = 0; b < B; ++b)
    EXPECT_GT(anneal_energy(terms, w, std::span<const double>(x.data() + b * 3 * n, 3 * n), {}).sym, 100.0);
  std::vector<double> gx = x, gv = v;
  const auto gpu = cuda::md_steps_batch(terms, w, gx, gv, B, o);
  ASSERT_EQ(gpu.energy.size(), B);
  for (std::size_t b = 0; b < B; ++b) {
    std::vector<double> cx(x.begin() + static_cast<long>(b * 3 * n), x.begin() + static_cast<long>((b + 1) * 3 * n));
    std::vector<double> cv(v.begin() + static_cast<long>(b * 3 * n), v.begin() + static_cast<long>((b + 1) * 3 * n));
    const auto e = md_steps(terms, w, cx, cv, o);
    EXPECT_GT(e.sym, 1.0) << "structure " << b;
    // fp64 on both; the GPU sums forces in another order (atomics): rounding, grown over 20 steps
    EXPECT_NEAR(gpu.energy[b], e.total, 1e-8 * std::abs(e.total)) << "structure " << b;
    double dx = 0, dv = 0;
    for (std::size_t k = 0; k < 3 * n; ++k) {
      dx = std::max(dx, std::abs(gx[b * 3 * n + k] - cx[k]));
      dv = std::max(dv, std::abs(gv[b * 3 * n + k] - cv[k]));
    }
    EXPECT_LT(dx, 1e-8) << "structure " << b << " (Å)";
    EXPECT_LT(dv, 1e-6) << "structure " << b << " (Å/ps)";
  }
}

// Progress goes from about 0 to 1 over the schedule; returning false cancels with
// std::runtime_error("cancelled").
TEST(AnnealGpu, BatchedScheduleReportsProgressAndCancels) {
  if (cuda::device_count() == 0) GTEST_SKIP() << "no CUDA device: GPU annealing test skipped";
  ChainSequence c{"A", {}};
  for (int r = 1; r <= 5; ++r) c.residues.push_back(SequenceResidue{"ALA", r, {}});
  const auto t = build_topology({c}, nodes::standard_templates());
  const auto terms = anneal_terms(t.atoms, t.xyz, t.bonds, {}, {});
  AnnealOptions o;
  o.hot_steps = 200;
  o.cooling_stages = 2;
  o.steps_per_stage = 100;
  o.minimise_iterations = 20;
  std::vector<double> seen;
  cuda::AnnealBatchOptions bo;
  bo.progress = [&](double f) {
    seen.push_back(f);
    return true;
  };
  const auto r = cuda::anneal_batch(terms, {t.xyz, t.xyz}, {1, 2}, o, 0, bo);
  ASSERT_EQ(r.size(), 2u);
  ASSERT_EQ(seen.size(), 4u);  // per 100 steps of 400
  EXPECT_DOUBLE_EQ(seen.front(), 0.25);
  EXPECT_DOUBLE_EQ(seen.back(), 1.0);
  bo.progress = [](double) { return false; };
  try {
    (void)cuda::anneal_batch(terms, {t.xyz}, {1}, o, 0, bo);
    ADD_FAILURE() << "not cancelled";
  } catch (const std::runtime_error& e) {
    EXPECT_STREQ(e.what(), "cancelled");
  }
}

}  // namespace
#endif
