// Development driver / benchmark: the distance-geometry chain on 2KPU, stage by stage.
// Prints per-stage timings and quality (model 1 vs the bounds, RMSD, violations); no baseline
// ratios: it is a development driver for docs/nmr-structure.md, not a speed benchmark.
// Usage: distgeom_bench_pipeline_2kpu [seed] [all|restrained|none] [dim] [cholesky|eigen] [iterations]
// MIRROR=1 also refines the mirror image (as distgeom.refine's mirror_trial); KRANK=k Cholesky rank.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <map>
#include <set>
#include <string>
#include <vector>

#include <gemflow/distgeom/bounds.hpp>
#include <gemflow/distgeom/embedding.hpp>
#include <gemflow/distgeom/geometry.hpp>
#include <gemflow/distgeom/metrize.hpp>
#include <gemflow/distgeom/refine.hpp>
#include <gemflow/distgeom/smoothing.hpp>
#include <gemflow/linalg/cholesky.hpp>

#include <Eigen/Dense>
#include <gemflow/io/restraints_io.hpp>
#include <gemflow/io/structure_io.hpp>

using namespace gemflow;
using namespace gemflow::distgeom;
using clk = std::chrono::steady_clock;

static double secs(clk::time_point a) { return std::chrono::duration<double>(clk::now() - a).count(); }

int main(int argc, char** argv) {
  const std::uint64_t seed = argc > 1 ? std::stoull(argv[1]) : 1;
  const std::string hpol = argc > 2 ? argv[2] : "all";
  const std::size_t dim = argc > 3 ? std::stoul(argv[3]) : 4;
  const std::string meth = argc > 4 ? argv[4] : "cholesky";
  const std::size_t iters = argc > 5 ? std::stoul(argv[5]) : 3000;
  const std::string dir = std::string(GEMFLOW_SOURCE_DIR) + "/sample_data/2kpu/";
  auto t0 = clk::now();
  io::ReadStructureOptions ro;
  const Structure ens = io::read_pdb(dir + "2kpu.pdb");
  const auto& atoms = ens.atoms;
  const std::size_t na = atoms.size();
  std::vector<AtomInfo> info;
  std::vector<double> xyz;
  for (std::size_t i = 0; i < na; ++i) {
    info.push_back({atoms[i].element, atoms[i].name, atoms[i].residue, atoms[i].chain, atoms[i].residue_number});
    for (int k = 0; k < 3; ++k) xyz.push_back(ens.models[0][i][k]);
  }
  // Restraints through the io plugin (NEF), resolved against the structure.
  RestraintSet set = io::read_distance_restraints(dir + "DhR29B_2kpu.nef");
  (void)io::resolve_restraints(set, ens);
  std::vector<PairRestraint> rs;
  std::map<int, int> longrange;
  for (const auto& r : set.restraints) {
    PairRestraint p;
    p.id = r.id;
    p.lower = r.lower;
    p.upper = r.upper;
    p.correction = r.pseudo_correction;
    for (const auto& alt : r.alternatives) p.alternatives.push_back({alt.atoms_a, alt.atoms_b});
    rs.push_back(p);
    const auto& alt = r.alternatives.front();
    const int ra = atoms[alt.atoms_a.front()].residue_number, rb = atoms[alt.atoms_b.front()].residue_number;
    if (std::abs(ra - rb) >= 5) {
      ++longrange[ra];
      ++longrange[rb];
    }
  }
  std::set<int> ordered;
  for (auto [r, c] : longrange)
    if (c >= 3) ordered.insert(r);
  std::printf("read: %zu atoms, %zu restraints, ordered residues %zu (%.2fs)\n", na, rs.size(), ordered.size(),
              secs(t0));

  BoundsOptions bo;
  bo.hydrogens = hpol == "none"         ? HydrogenPolicy::None
                 : hpol == "restrained" ? HydrogenPolicy::Restrained
                                        : HydrogenPolicy::All;
  t0 = clk::now();
  auto b = restraint_bounds(info, xyz, rs, bo);
  const std::size_t n = b.n;
  std::printf(
      "bounds: n=%zu covalent pairs %zu, used %zu skipped %zu, conflicts %zu, diameter %.1f, planes %zu centres %zu "
      "(%.2fs)\n",
      n, b.covalent_pairs, b.restraints_used, b.skipped.size(), b.covalent_conflicts.size(), b.diameter,
      b.topology.planes.size(), b.topology.centres.size(), secs(t0));
  // Model 1 against the bounds.
  std::vector<double> x1;
  for (auto i : b.atoms) x1.insert(x1.end(), {xyz[3 * i], xyz[3 * i + 1], xyz[3 * i + 2]});
  {
    std::size_t lv = 0, uv = 0, lv5 = 0, uv5 = 0;
    double worst = 0, worstu = 0;
    std::string wl, wu;
    for (std::size_t i = 0; i < n; ++i)
      for (std::size_t j = i + 1; j < n; ++j) {
        double s = 0;
        for (int k = 0; k < 3; ++k) s += (x1[3 * i + k] - x1[3 * j + k]) * (x1[3 * i + k] - x1[3 * j + k]);
        const double d = std::sqrt(s);
        const double l = b.lower[i * n + j], u = b.upper[i * n + j];
        if (d < l - 0.01) ++lv;
        if (d > u + 0.01) ++uv;
        if (d < l - 0.5) ++lv5;
        if (d > u + 0.5) ++uv5;
        if (d - u > worstu) {
          worstu = d - u;
          wu = atoms[b.atoms[i]].name + std::to_string(atoms[b.atoms[i]].residue_number) + "-" +
               atoms[b.atoms[j]].name + std::to_string(atoms[b.atoms[j]].residue_number) + " d=" + std::to_string(d) +
               " U=" + std::to_string(u) + " r=" + std::to_string(b.restraint[i * n + j]);
        }
        if (l - d > worst) {
          worst = l - d;
          wl = atoms[b.atoms[i]].name + std::to_string(atoms[b.atoms[i]].residue_number) + "-" +
               atoms[b.atoms[j]].name + std::to_string(atoms[b.atoms[j]].residue_number) + " d=" + std::to_string(d) +
               " L=" + std::to_string(l);
        }
      }
    std::printf("model 1 vs bounds: lower viol %zu (>0.5: %zu), upper viol %zu (>0.5: %zu); worst lower %s upper %s\n",
                lv, lv5, uv, uv5, wl.c_str(), wu.c_str());
  }
  auto lo = b.lower, up = b.upper;
  t0 = clk::now();
  SmoothingOptions so;
  so.threads = 2;
  auto rep = smooth_bounds(lo, up, n, so);
  std::printf("smooth: consistent %d changed %zu (%.2fs)\n", rep.consistent, rep.changed_pairs, secs(t0));
  t0 = clk::now();
  MetrizeOptions mo;
  mo.seed = seed;
  if (const char* pa = std::getenv("PARTIAL")) {
    mo.method = MetrizeMethod::Partial;
    mo.atoms = std::stoul(pa);
  }
  auto d = metrize(lo, up, n, mo, [&](std::span<double> l2, std::span<double> u2, std::size_t m) {
    SmoothingOptions s2;
    s2.threads = 2;
    (void)smooth_bounds(l2, u2, m, s2);
  });
  std::printf("metrize: (%.2fs)\n", secs(t0));
  t0 = clk::now();
  std::vector<double> g(n * n);
  metric_matrix(d, n, g);
  if (std::getenv("DIAG")) {
    // Low-rank structure of G: eigen spectrum and pivoted Cholesky residuals.
    Eigen::Map<const Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>> gm(
        g.data(), (Eigen::Index)n, (Eigen::Index)n);
    Eigen::SelfAdjointEigenSolver<Eigen::MatrixXd> es(Eigen::MatrixXd(gm), Eigen::EigenvaluesOnly);
    Eigen::VectorXd ev = es.eigenvalues().reverse();
    double tot = ev.squaredNorm(), top3 = ev.head(3).squaredNorm(), neg = 0;
    for (Eigen::Index k = 0; k < ev.size(); ++k)
      if (ev(k) < 0) neg += -ev(k);
    std::printf(
        "G spectrum: %.0f %.0f %.0f | %.0f %.0f %.0f ... min %.0f; rank-3 rel.err %.3f; negative trace %.0f of trace "
        "%.0f\n",
        ev(0), ev(1), ev(2), ev(3), ev(4), ev(5), ev(ev.size() - 1), std::sqrt((tot - top3) / tot), neg, ev.sum());
    for (std::size_t k : {3u, 4u, 6u, 10u}) {
      std::vector<double> a(g);
      auto f = linalg::pivoted_cholesky(a, n, k, 0.0);
      double err = 0;
      for (std::size_t i = 0; i < n; ++i)
        for (std::size_t j = 0; j < n; ++j) {
          double s2 = 0;
          for (std::size_t c = 0; c < f.rank; ++c) s2 += a[i * n + c] * a[j * n + c];
          const double r = g[f.permutation[i] * n + f.permutation[j]] - s2;
          err += r * r;
        }
      std::printf("  cholesky k=%zu rank %zu next %.0f rel.err %.3f pivots:", k, f.rank, f.next_pivot,
                  std::sqrt(err / tot));
      for (std::size_t c = 0; c < f.rank; ++c)
        std::printf(" %s%d", atoms[b.atoms[f.permutation[c]]].name.c_str(),
                    atoms[b.atoms[f.permutation[c]]].residue_number);
      std::printf("\n");
    }
  }
  auto e = embed(g, n, dim, meth == "eigen" ? EmbedMethod::Eigen : EmbedMethod::Cholesky,
                 std::getenv("KRANK") ? std::stoul(std::getenv("KRANK")) : 0);
  if (const char* pq = std::getenv("PQ")) {
    // Experiment: pivots restricted to atoms with the tightest smoothed bounds (mean U'-L').
    std::vector<double> gap(n, 0.0);
    for (std::size_t i = 0; i < n; ++i) {
      for (std::size_t j = 0; j < n; ++j) gap[i] += up[i * n + j] - lo[i * n + j];
      gap[i] /= double(n);
    }
    auto sorted = gap;
    std::sort(sorted.begin(), sorted.end());
    const double thr = sorted[std::min(n - 1, std::size_t(std::stod(pq) * double(n)))];
    const std::size_t K = std::getenv("KRANK") ? std::stoul(std::getenv("KRANK")) : dim;
    std::vector<double> a(g);
    std::vector<std::size_t> piv;
    std::vector<double> L(n * K, 0.0);
    std::vector<double> diag(n);
    for (std::size_t i = 0; i < n; ++i) diag[i] = g[i * n + i];
    for (std::size_t c = 0; c < K; ++c) {
      std::size_t p = n;
      for (std::size_t i = 0; i < n; ++i)
        if (gap[i] <= thr && std::find(piv.begin(), piv.end(), i) == piv.end() && (p == n || diag[i] > diag[p])) p = i;
      if (p == n || diag[p] <= 0) break;
      const double lpp = std::sqrt(diag[p]);
      for (std::size_t i = 0; i < n; ++i) {
        double v = g[i * n + p];
        for (std::size_t q = 0; q < c; ++q) v -= L[i * K + q] * L[p * K + q];
        L[i * K + c] = v / lpp;
      }
      for (std::size_t i = 0; i < n; ++i) diag[i] -= L[i * K + c] * L[i * K + c];
      piv.push_back(p);
    }
    const std::size_t k = piv.size();
    Eigen::MatrixXd lm(n, k);
    for (std::size_t i = 0; i < n; ++i)
      for (std::size_t c = 0; c < k; ++c) lm(i, c) = L[i * K + c];
    Eigen::SelfAdjointEigenSolver<Eigen::MatrixXd> es(lm.transpose() * lm);
    Eigen::MatrixXd x = lm * es.eigenvectors().rowwise().reverse().leftCols(dim);
    for (std::size_t i = 0; i < n; ++i)
      for (std::size_t c = 0; c < dim; ++c) e.coords[i * dim + c] = x(i, c);
    std::printf("restricted pivots (gap <= %.1f, %zu columns):", thr, k);
    for (auto q : piv) std::printf(" %s%d", atoms[b.atoms[q]].name.c_str(), atoms[b.atoms[q]].residue_number);
    std::printf("\n");
  }
  std::printf("embed: spectrum %.1f %.1f %.1f next %.1f (%.2fs)\n", e.spectrum[0], e.spectrum[1], e.spectrum[2], e.next,
              secs(t0));
  // Chirality from CA centres.
  std::vector<ChiralCheck> checks;
  std::vector<ChiralTerm> chir;
  std::map<std::pair<int, std::string>, std::size_t> idx;
  for (std::size_t i = 0; i < n; ++i) idx[{atoms[b.atoms[i]].residue_number, atoms[b.atoms[i]].name}] = i;
  for (std::size_t i = 0; i < n; ++i) {
    const auto& a = atoms[b.atoms[i]];
    if (a.name != "CA") continue;
    auto fN = idx.find({a.residue_number, "N"}), fC = idx.find({a.residue_number, "C"}),
         fB = idx.find({a.residue_number, "CB"});
    if (fN == idx.end() || fC == idx.end() || fB == idx.end()) continue;
    const double v = chiral_volume(&x1[3 * i], &x1[3 * fN->second], &x1[3 * fC->second], &x1[3 * fB->second]);
    checks.push_back({i, fN->second, fC->second, fB->second, v > 0 ? 1 : -1});
  }
  for (const auto& c : b.topology.centres)
    chir.push_back({c[0], c[1], c[2], c[3], chiral_volume(&x1[3 * c[0]], &x1[3 * c[1]], &x1[3 * c[2]], &x1[3 * c[3]])});
  std::size_t ok = 0;
  const bool flipped = fix_chirality(e.coords, dim, checks, &ok);
  std::printf("chirality: flipped %d, correct %zu/%zu\n", flipped, ok, checks.size());
  t0 = clk::now();
  RefineOptions rop;
  rop.max_iterations = iters;
  std::vector<AmbiguousTerm> amb;
  {
    std::vector<std::size_t> inv0(na, SIZE_MAX);
    for (std::size_t i = 0; i < n; ++i) inv0[b.atoms[i]] = i;
    for (const auto& r : rs) {
      AmbiguousTerm t;
      t.id = r.id;
      t.upper = r.upper + r.correction;
      bool okr = true;
      for (const auto& [sa, sb] : r.alternatives)
        for (auto ia : sa)
          for (auto ib : sb) {
            if (inv0[ia] == SIZE_MAX || inv0[ib] == SIZE_MAX) okr = false;
            else if (ia != ib) t.pairs.push_back({inv0[ia], inv0[ib]});
          }
      if (okr && t.pairs.size() > 1) amb.push_back(std::move(t));
    }
    std::printf("r^-6 terms: %zu\n", amb.size());
  }
  auto rr = refine(e.coords, n, dim, b.lower, b.upper, chir, amb, rop);
  if (std::getenv("MIRROR")) {
    auto mc = e.coords;
    for (std::size_t k = 0; k < mc.size(); k += dim) mc[k] = -mc[k];
    auto rm = refine(mc, n, dim, b.lower, b.upper, chir, amb, rop);
    std::printf("mirror trial: E=%.3f vs %.3f\n", rm.error, rr.error);
    if (rm.error < rr.error) rr = rm;
  }
  std::printf("refine: E=%.3f it=%zu upper>0.5 %zu lower>0.5 %zu max %.2f chiral wrong %zu (%.2fs)\n", rr.error,
              rr.iterations, rr.upper_violations, rr.lower_violations, rr.max_violation, rr.chiral_wrong, secs(t0));
  // RMSD on the ordered backbone.
  std::vector<double> pa, pb, ha, hb;
  for (std::size_t i = 0; i < n; ++i) {
    const auto& a = atoms[b.atoms[i]];
    if (!ordered.count(a.residue_number)) continue;
    if (a.name == "N" || a.name == "CA" || a.name == "C") {
      pa.insert(pa.end(), {rr.coords[3 * i], rr.coords[3 * i + 1], rr.coords[3 * i + 2]});
      pb.insert(pb.end(), {x1[3 * i], x1[3 * i + 1], x1[3 * i + 2]});
    }
    if (a.element != "H") {
      ha.insert(ha.end(), {rr.coords[3 * i], rr.coords[3 * i + 1], rr.coords[3 * i + 2]});
      hb.insert(hb.end(), {x1[3 * i], x1[3 * i + 1], x1[3 * i + 2]});
    }
  }
  // Restraint violations (r^-6 sum vs upper + correction).
  std::vector<std::size_t> inv(na, SIZE_MAX);
  for (std::size_t i = 0; i < n; ++i) inv[b.atoms[i]] = i;
  std::size_t viol = 0, used = 0, viol_model = 0;
  for (const auto& r : rs) {
    double s = 0, s1 = 0;
    bool okr = true;
    for (const auto& [sa, sb] : r.alternatives)
      for (auto ia : sa)
        for (auto ib : sb) {
          if (inv[ia] == SIZE_MAX || inv[ib] == SIZE_MAX) {
            okr = false;
            continue;
          }
          const std::size_t i = inv[ia], j = inv[ib];
          double q = 0, q1 = 0;
          for (int k = 0; k < 3; ++k) {
            q += std::pow(rr.coords[3 * i + k] - rr.coords[3 * j + k], 2);
            q1 += std::pow(x1[3 * i + k] - x1[3 * j + k], 2);
          }
          s += std::pow(q, -3);
          s1 += std::pow(q1, -3);
        }
    if (!okr) continue;
    ++used;
    if (std::pow(s, -1.0 / 6) > r.upper + r.correction + 0.5) ++viol;
    if (std::pow(s1, -1.0 / 6) > r.upper + r.correction + 0.5) ++viol_model;
  }
  auto pm = pb;
  for (std::size_t k = 0; k < pm.size(); k += 3) pm[k] = -pm[k];
  std::printf("mirror-reference backbone RMSD %.2f\n", superposed_rmsd(pa, pm));
  std::printf("RESULT seed %llu: backbone RMSD %.2f (%zu atoms) heavy %.2f, violations>0.5 %zu/%zu (model1: %zu)\n",
              (unsigned long long)seed, superposed_rmsd(pa, pb), pa.size() / 3, superposed_rmsd(ha, hb), viol, used,
              viol_model);
  return 0;
}
