#pragma once
// Change-point evaluation as the Turing Change Point Detection benchmark computes it (van den
// Burg & Williams, "An Evaluation of Change Point Detection Algorithms", arXiv:2003.06222, 2020;
// TCPDBench analysis/scripts/metrics.py), and TSSB's covering (Ermshaus, Schäfer & Leser,
// "ClaSP", Data Min. Knowl. Disc. 2023; time-series-segmentation-benchmark tssb/evaluation.py).
//
// Change points are 0-based sample indices where a new segment starts. Our own implementation
// of the definitions:
//  F1: every annotator's set and the prediction set get the point 0 added. A true positive of a
//    set T against predictions X: for each τ of T in ascending order, the closest unused x with
//    |τ − x| ≤ margin (ties: the smaller x) is matched and used up. Precision P = |TP(T*, X)| / |X|
//    with T* the union of the annotators' sets; recall R = mean over annotators k of
//    |TP(T_k, X)| / |T_k|; F = P·R / (α·R + (1 − α)·P), α = ½.
//    (metrics.py walks T in Python's set order, which for the sets of a few hundred small
//    indices it meets is ascending except after hash collisions modulo the table size; the
//    order matters only when one prediction is within the margin of two annotated points.)
//  Cover: the partition of [0, n) by the change points (points ≤ 0 or ≥ n ignored) of each
//    annotator S and of the prediction S′; C(S′, S) = (1/n) Σ_{R ∈ S} |R| · max_{R′ ∈ S′} J(R, R′)
//    with J the Jaccard index (Arbeláez et al., TPAMI 2011, eq. 8); the mean over annotators.
//  TSSB covering: Cover with one annotator (the series' true change points).
#include <cstddef>
#include <vector>

namespace gemflow::semicrf {

using ChangePoints = std::vector<long long>;

struct F1Score {
  double f1 = 0, precision = 0, recall = 0;
};

/// TCPDBench's F1 of `predictions` against every annotator's change points (at least one annotator).
[[nodiscard]] F1Score f_measure(const std::vector<ChangePoints>& annotations, const ChangePoints& predictions,
                                long long margin = 5, double alpha = 0.5);

/// TCPDBench's covering of a series of n_obs samples (at least one annotator, n_obs ≥ 1).
[[nodiscard]] double covering(const std::vector<ChangePoints>& annotations, const ChangePoints& predictions,
                              std::size_t n_obs);

/// The true positives of metrics.py's true_positives(T, X, margin): the matched points of T.
[[nodiscard]] ChangePoints true_positives(const ChangePoints& truth, const ChangePoints& predictions, long long margin);

}  // namespace gemflow::semicrf
