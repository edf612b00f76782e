// TCPD evaluation of the semi-CRF change-point model: one parameter set for every series (the
// default experiment of TCPDBench) and a per-series sweep (its oracle experiment).
// Usage: semicrf_bench_tcpd_sweep DATA_DIR [series ...]
//   TCPD_SWEEP_MODEL=levels  the C-Gaussian-level model's grid instead of the segment model's
//   TCPD_SWEEP_WIDE=1        the segment model's wide grid (for the per-series oracle table)
//   TCPD_SWEEP_QUICK=1       the neighbourhood of the workflows' setting only, with the change points
//   DATA_DIR holds <series>.json and annotations.json (sample_data/sequences/tcpd, or
//   shared/data/sequences/tcpd for nile and quality_control_1).
// Models: (default) one label with a Normal-Gamma marginal likelihood per segment on channels
// standardised by median and MAD, Hampel outliers masked, a cost per segment (segment_models.hpp);
// (TCPD_SWEEP_MODEL=levels) C Gaussian levels (k-means, noise variance from first differences),
// self-transitions forbidden, a cost per segment, optional EM. Viterbi; change points = the
// starts of the segments after the first.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <functional>
#include <limits>
#include <map>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "gemflow/io/signal_io.hpp"
#include "gemflow/semicrf/fit.hpp"
#include "gemflow/semicrf/metrics.hpp"
#include "gemflow/semicrf/segment_models.hpp"

namespace sc = gemflow::semicrf;

namespace {

struct Setting {
  std::size_t min_duration;  ///< shorter segments are impossible (duration bias −∞)
  bool variances;            ///< EM re-estimates the variances (else only the means)
  double outlier;
  std::size_t labels;
  double segment_penalty;  ///< per segment, in units of log(T)
  std::size_t em_iterations;
  sc::VarianceEstimate variance;
};

/// The segment model: one label, a Normal-Gamma marginal likelihood per segment on channels
/// standardised by their median and MAD, outliers (Hampel) masked, a cost per segment.
struct SegmentSetting {
  double alpha, beta, kappa;  ///< prior (standardised units)
  double segment_penalty;     ///< per segment, in units of log(T)
  std::size_t hampel_window;  ///< half window; 0: no outlier masking
  double hampel_threshold;
};

struct Series {
  std::string name;
  gemflow::Signal signal;
  std::vector<sc::ChangePoints> truth;
};

sc::ChangePoints change_points(const sc::Path& p) {
  sc::ChangePoints cps;
  for (std::size_t i = 1; i < p.segments.size(); ++i) cps.push_back(static_cast<long long>(p.segments[i].start));
  return cps;
}

const std::uint8_t* mask(const gemflow::Signal& s) { return s.valid.empty() ? nullptr : s.valid.data(); }

sc::ChangePoints detect(const Series& s, const Setting& st) {
  const std::size_t T = s.signal.length(), D = s.signal.dims();
  // channels standardised by their noise level, so that one penalty fits every series
  std::vector<double> x(s.signal.samples.data(), s.signal.samples.data() + T * D);
  const auto nv = sc::noise_variance(x.data(), T, D, mask(s.signal));
  for (std::size_t t = 0; t < T; ++t)
    for (std::size_t d = 0; d < D; ++d) x[t * D + d] /= std::sqrt(nv[d]);
  sc::GaussianSemiCrf m;
  const std::size_t C = std::min(st.labels, T);
  m.gaussians = sc::estimate_gaussians(x.data(), T, D, C, sc::LevelEstimate::kmeans, st.variance, mask(s.signal));
  m.gaussians.outlier = st.outlier;
  m.crf = sc::Model::zeros(C, T);
  for (std::size_t a = 0; a < C; ++a)
    m.crf.transitions[a * C + a] = C > 1 ? -std::numeric_limits<double>::infinity() : 0;
  for (auto& v : m.crf.duration_bias) v = -st.segment_penalty * std::log(double(T));
  for (std::size_t k = 1; k < st.min_duration && k <= T; ++k)
    for (std::size_t c = 0; c < C; ++c) m.crf.duration_bias[(k - 1) * C + c] = -std::numeric_limits<double>::infinity();
  sc::FitOptions fo;
  fo.iterations = st.em_iterations;
  fo.fit_transitions = false;
  fo.fit_variances = st.variances;
  fo.crf.centring = sc::Centring::reconstruct;
  if (st.em_iterations > 0) sc::fit_em(m, x.data(), {T}, D, fo, mask(s.signal));
  const auto f = sc::gaussian_scores(x.data(), T, D, m.gaussians, mask(s.signal));
  sc::Batch b;
  b.emissions = f.data();
  b.lengths = {T};
  return change_points(sc::viterbi(m.crf, b, fo.crf)[0]);
}

sc::ChangePoints detect(const Series& s, const SegmentSetting& st) {
  const std::size_t T = s.signal.length(), D = s.signal.dims();
  const auto x = sc::standardise(s.signal.samples.data(), T, D, mask(s.signal));
  const auto valid = st.hampel_window > 0
                         ? sc::hampel_outliers(x.data(), T, D, st.hampel_window, st.hampel_threshold, mask(s.signal))
                         : std::vector<std::uint8_t>(s.signal.valid);
  const sc::NormalGammaSegments g(x.data(), {T}, D, {{0.0, st.kappa, st.alpha, st.beta}},
                                  valid.empty() ? nullptr : valid.data());
  sc::Model m = sc::Model::zeros(1, T);
  for (auto& v : m.duration_bias) v = -st.segment_penalty * std::log(double(T));
  const std::vector<double> f(T, 0.0);
  sc::Batch b;
  b.emissions = f.data();
  b.lengths = {T};
  b.segment_score = &g;
  return change_points(sc::viterbi(m, b)[0]);
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: %s DATA_DIR [series ...]\n", argv[0]);
    return 2;
  }
  const std::string dir = argv[1];
  std::vector<std::string> names;
  for (int i = 2; i < argc; ++i) names.emplace_back(argv[i]);
  if (names.empty()) names = {"nile", "well_log", "bank", "run_log", "quality_control_1"};
  std::ifstream af(dir + "/annotations.json");
  const auto ann = nlohmann::json::parse(af);
  std::vector<Series> series;
  for (const auto& n : names) {
    Series s;
    s.name = n;
    try {
      s.signal = gemflow::io::read_signal(dir + "/" + n + ".json");
    } catch (const std::exception& e) {
      std::fprintf(stderr, "skipping %s: %s\n", n.c_str(), e.what());
      continue;
    }
    for (const auto& [who, cps] : ann.at(n).items()) s.truth.push_back(cps.get<sc::ChangePoints>());
    series.push_back(std::move(s));
  }
  // TCPD_SWEEP_MODEL=levels: the C-Gaussian-level model; default: the Normal-Gamma segment model
  const char* model = std::getenv("TCPD_SWEEP_MODEL");
  const bool levels = model != nullptr && std::string(model) == "levels";
  const bool quick = std::getenv("TCPD_SWEEP_QUICK") != nullptr;  // the one-setting neighbourhood only
  std::vector<std::pair<std::string, std::function<sc::ChangePoints(const Series&)>>> grid;
  char buf[256];
  if (levels) {
    for (std::size_t kmin : {1, 2, 3, 5})
      for (bool var : {false, true})
        for (double eps : {0.0, 0.01})
          for (std::size_t C : {6, 8, 10})
            for (double pen : {4.0, 5.0, 6.0})
              for (std::size_t em : {0, 10}) {
                if (em == 0 && !var) continue;
                if (quick && !(var && eps == 0.0 && C == 8 && em == 10)) continue;
                const Setting st{kmin, var, eps, C, pen, em, sc::VarianceEstimate::noise};
                std::snprintf(buf, sizeof buf, "kmin=%zu %s eps=%.2f C=%zu pen=%.1f·logT em=%zu |", kmin,
                              var ? "em-var" : "em-means", eps, C, pen, em);
                grid.emplace_back(buf, [st](const Series& s) { return detect(s, st); });
              }
  } else if (std::getenv("TCPD_SWEEP_WIDE") != nullptr) {  // the oracle grid (per-series best)
    for (double ab : {0.25, 0.5, 1.0, 2.0, 4.0})
      for (double kappa : {0.01, 0.1, 1.0})
        for (double pen = 0.5; pen <= 6.0; pen += 0.5)
          for (auto [hw, ht] :
               {std::pair<std::size_t, double>{0, 5.0}, {3, 5.0}, {5, 5.0}, {5, 7.0}, {5, 10.0}, {10, 5.0}}) {
            const SegmentSetting st{ab, ab, kappa, pen, hw, ht};
            std::snprintf(buf, sizeof buf, "normal-gamma a=b=%.2f kappa=%.2f pen=%.1f·logT hampel=%zu/%.0f |", ab,
                          kappa, pen, hw, ht);
            grid.emplace_back(buf, [st](const Series& s) { return detect(s, st); });
          }
  } else {
    for (double ab : {0.5, 1.0, 2.0})
      for (double kappa : {0.01, 0.1})
        for (double pen : {1.5, 2.0, 2.5, 3.0, 4.0})
          for (std::size_t hw : {0, 5})
            for (double ht : {5.0, 7.0, 10.0}) {
              if (hw == 0 && ht != 5.0) continue;
              if (quick && !(ab == 1.0 && kappa == 0.01 && pen == 4.0)) continue;
              const SegmentSetting st{ab, ab, kappa, pen, hw, ht};
              std::snprintf(buf, sizeof buf, "normal-gamma a=b=%.1f kappa=%.2f pen=%.1f·logT hampel=%zu/%.0f |", ab,
                            kappa, pen, hw, ht);
              grid.emplace_back(buf, [st](const Series& s) { return detect(s, st); });
            }
  }
  std::map<std::string, std::pair<double, double>> best_f1, best_cover;
  double best_mean = -1;
  std::string best_line;
  for (const auto& [label, run] : grid) {
    std::string line = label;
    double mean = 0;
    for (const auto& s : series) {
      const auto cps = run(s);
      const double f1 = sc::f_measure(s.truth, cps).f1, cover = sc::covering(s.truth, cps, s.signal.length());
      std::snprintf(buf, sizeof buf, " %s %.3f/%.3f (%zu)", s.name.c_str(), f1, cover, cps.size());
      line += buf;
      if (quick) {  // the change points themselves
        line += " [";
        for (std::size_t i = 0; i < cps.size(); ++i) {  // piece by piece: GCC 12's -Wrestrict false positive
          if (i) line += ' ';
          line += std::to_string(cps[i]);
        }
        line += "]";
      }
      mean += (f1 + cover) / 2 / double(series.size());
      best_f1[s.name].first = std::max(best_f1[s.name].first, f1);
      best_cover[s.name].second = std::max(best_cover[s.name].second, cover);
    }
    std::snprintf(buf, sizeof buf, " | mean %.3f", mean);
    line += buf;
    std::puts(line.c_str());
    std::fflush(stdout);
    if (mean > best_mean) best_mean = mean, best_line = line;
  }
  std::printf("\nbest single setting (mean of F1 and cover over the series):\n%s\n\noracle (best per series):\n",
              best_line.c_str());
  for (const auto& s : series)
    std::printf("  %-18s F1 %.3f  cover %.3f\n", s.name.c_str(), best_f1[s.name].first, best_cover[s.name].second);
  return 0;
}
