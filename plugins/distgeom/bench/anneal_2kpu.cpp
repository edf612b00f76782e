// Development driver: 2KPU from the sequence + NEF restraints (distances and dihedrals), DG
// trials then simulated annealing, as distgeom.ensemble computes structure k (trial k of the
// seed, annealing seed trial_seed(seed + 1, k)). Prints per structure the backbone RMSD to the
// deposited model 1 over the ordered residues (≥ 3 restraints to residues ≥ 5 apart, as the
// ensemble), violations > 0.5 Å, Ramachandran favoured / +allowed, clashes, energy and time; then
// the `keep` lowest energies as the ensemble reports them (mean and best RMSD, precision).
// Usage: distgeom_bench_anneal_2kpu [structures] [seed] [keep]; environment: HOT, STAGES, PER,
// MIN, THOT, TFINAL (schedule), NOE_HOT, NOE, REP_HOT, REP, REP_SCALE_HOT, REP_SCALE, CDIH_HOT,
// CDIH, RAMA_HOT, RAMA (weights), NO_CDIH=1 (no dihedral restraints), FIRST (first structure),
// THREADS (parallel structures, default 2), EIGEN=1 (eigen embedding), SELECT=energy (keep the
// lowest energies, accepted or not), DETAIL=1 (covalent terms, φ/ψ outside the favoured boxes and
// restraints violated by > 0.3 Å, with the deposited model's values), REMIN=iterations (a longer
// final minimisation; REMIN_NOE its NOE weight).
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <tuple>

#include <gemflow/distgeom/anneal.hpp>
#include <gemflow/distgeom/bounds.hpp>
#include <gemflow/distgeom/geometry.hpp>
#include <gemflow/distgeom/smoothing.hpp>
#include <gemflow/distgeom/topology.hpp>
#include <gemflow/distgeom/trials.hpp>
#include <gemflow/distgeom/violations.hpp>
#include <gemflow/io/restraints_io.hpp>
#include <gemflow/io/structure_io.hpp>

#include "ensemble_2kpu_problem.hpp"

using namespace gemflow;
using namespace gemflow::distgeom;

namespace {
double env(const char* k, double d) {
  const char* v = std::getenv(k);
  return v ? std::atof(v) : d;
}
}  // namespace

int main(int argc, char** argv) {
  const std::size_t N = argc > 1 ? std::strtoul(argv[1], nullptr, 10) : 1;
  const std::uint64_t seed = argc > 2 ? std::strtoull(argv[2], nullptr, 10) : 1;
  const std::size_t M = argc > 3 ? std::strtoul(argv[3], nullptr, 10) : (N + 1) / 2;
  const auto prob = bench::load_2kpu(std::string(GEMFLOW_SOURCE_DIR) + "/sample_data/2kpu");
  const auto& topo = prob.topo;
  const auto& pr = prob.restraints;
  const TrialProblem tp = prob.trial_problem();
  std::map<std::tuple<int, std::string>, std::size_t> at;
  for (std::size_t i = 0; i < topo.atoms.size(); ++i) at[{topo.atoms[i].residue_number, topo.atoms[i].name}] = i;
  std::vector<TorsionRestraint> dih;
  if (env("NO_CDIH", 0) == 0) dih = prob.dihedrals;
  // NO_CORR=1: the annealing's NOE term without the pseudo-atom corrections (r^-6 sums alone)
  std::vector<PairRestraint> pa = pr;
  if (env("NO_CORR", 0) > 0)
    for (auto& p : pa) p.correction = 0;
  const auto terms = anneal_terms(topo.atoms, topo.xyz, topo.bonds, pa, dih);
  AnnealOptions ao;
  ao.hot_steps = static_cast<std::size_t>(env("HOT", static_cast<double>(ao.hot_steps)));
  ao.cooling_stages = static_cast<std::size_t>(env("STAGES", static_cast<double>(ao.cooling_stages)));
  ao.steps_per_stage = static_cast<std::size_t>(env("PER", static_cast<double>(ao.steps_per_stage)));
  ao.minimise_iterations = static_cast<std::size_t>(env("MIN", static_cast<double>(ao.minimise_iterations)));
  ao.t_hot = env("THOT", ao.t_hot);
  ao.t_final = env("TFINAL", ao.t_final);
  ao.hot.noe = env("NOE_HOT", ao.hot.noe);
  ao.final.noe = env("NOE", ao.final.noe);
  ao.hot.rep = env("REP_HOT", ao.hot.rep);
  ao.final.rep = env("REP", ao.final.rep);
  ao.final.rep_scale = env("REP_SCALE", ao.final.rep_scale);
  ao.hot.rep_scale = env("REP_SCALE_HOT", ao.hot.rep_scale);
  ao.hot.cdih = env("CDIH_HOT", ao.hot.cdih);
  ao.final.cdih = env("CDIH", ao.final.cdih);
  ao.hot.rama = env("RAMA_HOT", ao.hot.rama);
  ao.final.rama = env("RAMA", ao.final.rama);
  std::printf("%zu atoms, %zu restraints, %zu dihedral restraints, %zu Ramachandran terms\n", topo.atoms.size(),
              pr.size(), dih.size(), terms.ramas.size());
  // ordered residues as distgeom.ensemble: ≥ 3 restraints to residues ≥ 5 apart
  const auto& ordered = prob.ordered;
  const auto& bb = prob.backbone;
  auto pick = [&](const std::vector<double>& x) {
    std::vector<double> q;
    for (auto i : bb) q.insert(q.end(), {x[3 * i], x[3 * i + 1], x[3 * i + 2]});
    return q;
  };
  auto rmsd = [&](const std::vector<double>& x) { return prob.rmsd(x); };
  const std::vector<double>& xdep = prob.deposited;  // the deposited model 1, every atom
  {
    // the deposited model 1 against the restraints with and without pseudo-atom corrections
    const auto& xd = xdep;
    std::vector<PairRestraint> nc = pr;
    for (auto& p : nc) p.correction = 0;
    const std::vector<PairRestraint>* sets[] = {&pr, &nc};
    for (const auto* set : sets) {
      const auto v = restraint_violations(topo.atoms, xd, *set, EquivalentSwap::Rings);
      std::size_t k5 = 0, k0 = 0;
      for (const auto& rv : v.restraints) k5 += rv.violation > 0.5, k0 += rv.violation > 0.1;
      std::printf("deposited model 1, %s corrections: %zu violations > 0.5 Å, %zu > 0.1 Å\n",
                  set == &pr ? "with" : "without", k5, k0);
    }
  }
  auto viol = [&](const std::vector<double>& x) {
    const auto v = restraint_violations(topo.atoms, x, pr, EquivalentSwap::Rings);
    std::size_t k = 0;
    for (const auto& rv : v.restraints) k += rv.violation > 0.5;
    return k;
  };
  const Topology bt = topology_from_bonds(topo.atoms, topo.bonds);
  std::vector<std::set<std::size_t>> near(topo.atoms.size());
  for (std::size_t i = 0; i < near.size(); ++i) {
    near[i].insert(i);
    for (auto a : bt.neighbours[i]) {
      near[i].insert(a);
      for (auto b2 : bt.neighbours[a]) {
        near[i].insert(b2);
        for (auto c2 : bt.neighbours[b2]) near[i].insert(c2);
      }
    }
  }
  // Ramachandran (favoured, favoured or allowed) over the ordered residues, and clashes, as
  // distgeom.ensemble counts them
  auto quality = [&](const std::vector<double>& x, std::size_t& fav, std::size_t& all, std::size_t& nr,
                     std::size_t& clashes) {
    fav = all = nr = clashes = 0;
    const double deg = 180.0 / 3.14159265358979323846;
    for (const auto& q : terms.ramas) {
      if (!ordered.count(topo.atoms[q.ca].residue_number)) continue;
      const double phi = torsion_angle(&x[3 * q.c_prev], &x[3 * q.n], &x[3 * q.ca], &x[3 * q.c]) * deg;
      const double psi = torsion_angle(&x[3 * q.n], &x[3 * q.ca], &x[3 * q.c], &x[3 * q.n_next]) * deg;
      const auto reg = rama_region(topo.atoms[q.ca].residue, phi, psi);
      ++nr;
      fav += reg == RamaRegion::Favoured;
      all += reg != RamaRegion::Outlier;
    }
    for (int rn : ordered)  // glycines count as favoured, as in the ensemble
      if (at.count({rn, "CA"}) && topo.atoms[at[{rn, "CA"}]].residue == "GLY" && at.count({rn - 1, "C"}) &&
          at.count({rn + 1, "N"}))
        ++nr, ++fav, ++all;
    const std::size_t n = topo.atoms.size();
    for (std::size_t i = 0; i < n; ++i)
      for (std::size_t j = i + 1; j < n; ++j) {
        const double R = vdw_radius(topo.atoms[i].element) + vdw_radius(topo.atoms[j].element) - 0.4;
        const double dx = x[3 * i] - x[3 * j];
        if (dx * dx >= R * R) continue;
        const double d2 = dx * dx + (x[3 * i + 1] - x[3 * j + 1]) * (x[3 * i + 1] - x[3 * j + 1]) +
                          (x[3 * i + 2] - x[3 * j + 2]) * (x[3 * i + 2] - x[3 * j + 2]);
        if (d2 >= R * R || near[i].count(j)) continue;
        if ((terms.polar_h[i] && terms.acceptor[j]) || (terms.polar_h[j] && terms.acceptor[i])) continue;
        ++clashes;
      }
  };
  {
    const auto& xd = xdep;
    std::size_t fav, all, nr, clashes;
    quality(xd, fav, all, nr, clashes);
    std::printf("deposited model 1: Ramachandran %.0f %% / %.0f %%, %zu clashes\n",
                100.0 * static_cast<double>(fav) / static_cast<double>(nr),
                100.0 * static_cast<double>(all) / static_cast<double>(nr), clashes);
  }
  if (N == 0) return 0;
  struct Out {
    double dg_rmsd = 0, rmsd = 0, energy = 0, secs = 0;
    std::size_t viol = 0, fav = 0, all = 0, nr = 0, clashes = 0;
    bool accepted = false;  // as distgeom.ensemble: no reported violation > 0.5 Å, no dihedral > 5°
    std::vector<double> coords;
  };
  const std::size_t first = static_cast<std::size_t>(env("FIRST", 0));
  std::vector<Out> out(N);
  std::atomic<std::size_t> next{0};
  std::mutex print;
  auto work = [&] {
    for (std::size_t q; (q = next.fetch_add(1)) < N;) {
      const std::size_t k = first + q;
      TrialOptions to;
      to.pivot_fraction = 0.25;
      to.threads = 1;
      to.seed = seed;
      to.first_trial = k;
      if (env("EIGEN", 0) > 0) to.method = EmbedMethod::Eigen;
      const auto t0 = std::chrono::steady_clock::now();
      const auto tr = run_trials(tp, to);
      AnnealOptions o = ao;
      o.seed = trial_seed(seed + 1, k);
      auto an = anneal(terms, tr.refined.coords, o);
      if (env("REMIN", 0) > 0) {  // REMIN=iterations: minimise the annealed structure further
        AnnealOptions mo = o;
        mo.minimise_iterations = static_cast<std::size_t>(env("REMIN", 0));
        mo.final.noe = env("REMIN_NOE", mo.final.noe);
        const auto e0 = an.energy.total;
        an = anneal_finish(terms, mo, an.coords);
        an.energy = anneal_energy(terms, o.final, an.coords, {}, nullptr);
        std::printf("structure %zu re-minimised: E %.1f -> %.1f\n", k, e0, an.energy.total);
      }
      Out& w = out[q];
      w.secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
      w.dg_rmsd = rmsd(tr.refined.coords);
      w.rmsd = rmsd(an.coords);
      w.viol = viol(an.coords);
      w.energy = an.energy.total;
      w.accepted = accepted(an, w.viol);
      quality(an.coords, w.fav, w.all, w.nr, w.clashes);
      std::lock_guard lock(print);
      std::printf(
          "structure %zu%s: DG %.2f Å -> SA %.2f Å, %zu viol, rama %.0f/%.0f %%, %zu clashes, E %.1f (noe %.1f rep "
          "%.1f "
          "cdih %.1f rama %.1f) %.1f s\n",
          k, w.accepted ? "" : " (not accepted)", w.dg_rmsd, w.rmsd, w.viol,
          100.0 * static_cast<double>(w.fav) / static_cast<double>(w.nr),
          100.0 * static_cast<double>(w.all) / static_cast<double>(w.nr), w.clashes, an.energy.total, an.energy.noe,
          an.energy.rep, an.energy.cdih, an.energy.rama, w.secs);
      if (env("DETAIL", 0) > 0) {
        std::size_t wrong = 0, planar_off = 0;
        for (const auto& ch : terms.chirals) {
          const double v =
              chiral_volume(&an.coords[3 * ch.c], &an.coords[3 * ch.a], &an.coords[3 * ch.b], &an.coords[3 * ch.d]);
          wrong += std::abs(ch.v0) > 0.3 && v * ch.v0 < 0;
        }
        for (const auto& pl : terms.planes) {
          const double phi =
              torsion_angle(&an.coords[3 * pl.i], &an.coords[3 * pl.j], &an.coords[3 * pl.k], &an.coords[3 * pl.l]);
          planar_off += !pl.two_fold && std::cos(phi - pl.phi0) < 0.5;
        }
        std::printf("  bond %.1f angle %.1f chiral %.1f plane %.1f; inverted centres %zu, planes off > 60° %zu\n",
                    an.energy.bond, an.energy.angle, an.energy.chiral, an.energy.plane, wrong, planar_off);
        // φ/ψ of the residues outside the favoured boxes, and of the deposited model 1
        for (const auto& q : terms.ramas) {
          const double deg = 180.0 / 3.14159265358979323846;
          auto phipsi = [&](const std::vector<double>& x, double& phi, double& psi) {
            phi = torsion_angle(&x[3 * q.c_prev], &x[3 * q.n], &x[3 * q.ca], &x[3 * q.c]) * deg;
            psi = torsion_angle(&x[3 * q.n], &x[3 * q.ca], &x[3 * q.c], &x[3 * q.n_next]) * deg;
          };
          double phi, psi, dphi, dpsi;
          phipsi(an.coords, phi, psi);
          phipsi(xdep, dphi, dpsi);
          const int rn = topo.atoms[q.ca].residue_number;
          if (rama_region(topo.atoms[q.ca].residue, phi, psi) != RamaRegion::Favoured || (rn >= 88 && rn <= 93))
            std::printf("  residue %d %s: phi %.0f psi %.0f (deposited %.0f %.0f)\n", rn,
                        topo.atoms[q.ca].residue.c_str(), phi, psi, dphi, dpsi);
        }
        // the restraints violated by more than 0.3 Å, with the deposited model 1's distance
        const auto va = restraint_violations(topo.atoms, an.coords, pr, EquivalentSwap::Rings);
        const auto vd = restraint_violations(topo.atoms, xdep, pr, EquivalentSwap::Rings);
        for (std::size_t m = 0; m < va.restraints.size(); ++m) {
          const auto& rv = va.restraints[m];
          if (rv.violation <= 0.3) continue;
          std::string who;
          for (const auto& [sa, sb] : pr[rv.index].alternatives) {
            auto side = [&](const std::vector<std::size_t>& s2) {
              std::string o = std::to_string(topo.atoms[s2[0]].residue_number) + topo.atoms[s2[0]].residue + ":";
              for (auto i : s2) o += topo.atoms[i].name + ",";
              return o;
            };
            who += side(sa) + " - " + side(sb) + " | ";
          }
          const double dd = m < vd.restraints.size() ? vd.restraints[m].distance : -1.0;
          std::printf(
              "  restraint %d: %s d_eff %.2f, lower %.2f upper %.2f (+corr %.2f), violation %.2f; deposited %.2f\n",
              pr[rv.index].id, who.c_str(), rv.distance, pr[rv.index].lower, pr[rv.index].upper,
              pr[rv.index].correction, rv.violation, dd);
        }
      }
      std::fflush(stdout);
      w.coords = an.coords;
    }
  };
  const auto t0 = std::chrono::steady_clock::now();
  std::vector<std::thread> pool;
  for (int i = 0; i < static_cast<int>(env("THREADS", 2)); ++i) pool.emplace_back(work);
  for (auto& t : pool) t.join();
  const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  for (const std::size_t keep : {M, N}) {
    std::vector<std::size_t> idx(N);
    for (std::size_t k = 0; k < N; ++k) idx[k] = k;
    // as distgeom.ensemble (selection: accepted): the accepted structures first, each part by energy
    const bool by_energy = std::getenv("SELECT") && std::string(std::getenv("SELECT")) == "energy";
    std::stable_sort(idx.begin(), idx.end(), [&](auto a, auto b2) {
      if (!by_energy && out[a].accepted != out[b2].accepted) return out[a].accepted;
      return out[a].energy < out[b2].energy;
    });
    idx.resize(std::min(keep, N));
    double mean = 0, best = 1e9, v = 0, fav = 0, all = 0, nr = 0, cl = 0, cpu = 0;
    for (const auto& o : out) cpu += o.secs;
    std::vector<std::vector<double>> models;
    for (auto k : idx) {
      const auto& o = out[k];
      mean += o.rmsd / static_cast<double>(idx.size());
      best = std::min(best, o.rmsd);
      v += static_cast<double>(o.viol) / static_cast<double>(idx.size());
      fav += static_cast<double>(o.fav), all += static_cast<double>(o.all), nr += static_cast<double>(o.nr);
      cl += static_cast<double>(o.clashes) / static_cast<double>(idx.size());
      models.push_back(pick(o.coords));
    }
    std::vector<double> mn = models[0];
    for (int it = 0; it < 3; ++it) {
      for (auto& m : models) distgeom::apply(kabsch(m, mn), m);
      std::fill(mn.begin(), mn.end(), 0.0);
      for (const auto& m : models)
        for (std::size_t q = 0; q < m.size(); ++q) mn[q] += m[q] / static_cast<double>(models.size());
    }
    double prec = 0;
    for (const auto& m : models) {
      double s2 = 0;
      for (std::size_t q = 0; q < m.size(); ++q) s2 += (m[q] - mn[q]) * (m[q] - mn[q]);
      prec += std::sqrt(s2 / static_cast<double>(bb.size())) / static_cast<double>(models.size());
    }
    std::printf(
        "kept %zu of %zu: RMSD mean %.2f Å (best %.2f), precision %.2f Å, violations > 0.5 Å %.1f per model, "
        "Ramachandran %.0f %% / %.0f %%, clashes %.0f per model; CPU %.0f s (wall %.0f s)\n",
        idx.size(), N, mean, best, prec, v, 100 * fav / nr, 100 * all / nr, cl, cpu, wall);
  }
}
