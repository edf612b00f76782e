// Metric matrix and embedding (see gemflow/distgeom/embedding.hpp).
#include "gemflow/distgeom/embedding.hpp"

#include <Spectra/MatOp/DenseSymMatProd.h>
#include <Spectra/SymEigsSolver.h>
#include <Eigen/Dense>

#include <algorithm>
#include <cmath>
#include <sstream>
#include <stdexcept>

#include "gemflow/distgeom/geometry.hpp"
#include "gemflow/linalg/cholesky.hpp"

namespace gemflow::distgeom {

void metric_matrix(std::span<const double> d, std::size_t n, std::span<double> g) {
  if (d.size() != n * n || g.size() != n * n)
    throw std::invalid_argument("metric_matrix: expected " + std::to_string(n) + "×" + std::to_string(n) +
                                " distance and metric buffers");
  if (n == 0) return;
  std::vector<double> row(n, 0.0);  // Σ_j D_ij²
  double total = 0.0;               // Σ_{j<k} D_jk²
  for (std::size_t i = 0; i < n; ++i) {
    double s = 0.0;
    for (std::size_t j = 0; j < n; ++j) s += d[i * n + j] * d[i * n + j];
    row[i] = s;
    total += s;
  }
  total *= 0.5;
  const double inv = 1.0 / static_cast<double>(n);
  std::vector<double> d0(n);
  for (std::size_t i = 0; i < n; ++i) d0[i] = row[i] * inv - total * inv * inv;
  for (std::size_t i = 0; i < n; ++i)
    for (std::size_t j = 0; j < n; ++j) g[i * n + j] = 0.5 * (d0[i] + d0[j] - d[i * n + j] * d[i * n + j]);
}

namespace {

// Centre (the Cholesky factor is centred only when G is exactly centred).
void centre(EmbedResult& r, std::size_t n) {
  const std::size_t dim = r.dim;
  for (std::size_t c = 0; c < dim; ++c) {
    double mean = 0;
    for (std::size_t i = 0; i < n; ++i) mean += r.coords[i * dim + c];
    mean /= static_cast<double>(n);
    for (std::size_t i = 0; i < n; ++i) r.coords[i * dim + c] -= mean;
  }
}

}  // namespace

std::size_t embed_cholesky_columns(std::size_t n, std::size_t dim, std::size_t cholesky_rank) noexcept {
  return std::min(n, std::max(dim, cholesky_rank == 0 ? dim : cholesky_rank));
}

EmbedResult embed_from_pivoted_cholesky(const linalg::PivotedCholesky& f, const double* lp, std::size_t row_stride,
                                        std::size_t col_stride, std::size_t n, std::size_t dim) {
  if (f.permutation.size() != n)
    throw std::invalid_argument("embed: pivoted factor has a permutation of " + std::to_string(f.permutation.size()) +
                                " rows for n = " + std::to_string(n));
  EmbedResult r;
  r.dim = dim;
  r.coords.assign(n * dim, 0.0);
  r.next = f.next_pivot;
  r.rank = f.rank;
  r.next_pivot = f.next_pivot;
  if (f.rank < dim) {
    std::ostringstream m;
    m << "embed (cholesky): the metric matrix has only " << f.rank << " positive pivots (need " << dim
      << "); the next pivot is " << f.next_pivot << " Å²: the distances do not span " << dim << " dimensions";
    throw std::runtime_error(m.str());
  }
  // The best rank-dim approximation of L Lᵀ through the small k×k eigenproblem LᵀL = V Σ Vᵀ: X = L V_dim.
  const auto k = static_cast<Eigen::Index>(f.rank);
  Eigen::MatrixXd l(static_cast<Eigen::Index>(n), k);
  for (std::size_t row = 0; row < n; ++row)
    for (Eigen::Index c = 0; c < k; ++c)
      l(static_cast<Eigen::Index>(f.permutation[row]), c) =
          lp[row * row_stride + static_cast<std::size_t>(c) * col_stride];
  Eigen::SelfAdjointEigenSolver<Eigen::MatrixXd> es(l.transpose() * l);
  const Eigen::VectorXd sv = es.eigenvalues().reverse();
  const Eigen::MatrixXd v = es.eigenvectors().rowwise().reverse();
  const Eigen::MatrixXd x = l * v.leftCols(static_cast<Eigen::Index>(dim));
  for (std::size_t c = 0; c < dim; ++c) r.spectrum.push_back(sv(static_cast<Eigen::Index>(c)));
  if (static_cast<std::size_t>(k) > dim) r.next = sv(static_cast<Eigen::Index>(dim));
  for (std::size_t i = 0; i < n; ++i)
    for (std::size_t c = 0; c < dim; ++c)
      r.coords[i * dim + c] = x(static_cast<Eigen::Index>(i), static_cast<Eigen::Index>(c));
  centre(r, n);
  return r;
}

EmbedResult embed(std::span<const double> g, std::size_t n, std::size_t dim, EmbedMethod method,
                  std::size_t cholesky_rank, std::span<const unsigned char> pivot_candidates) {
  if (g.size() != n * n) throw std::invalid_argument("embed: metric matrix is not n×n");
  if (dim < 1 || dim > 4) throw std::invalid_argument("embed: dim must be 1..4");
  if (n < dim + 1) throw std::invalid_argument("embed: need more than dim points");
  if (method == EmbedMethod::Cholesky) {
    // Pivoted Cholesky G ≈ L Lᵀ with k ≥ dim columns, then embed_from_pivoted_cholesky.
    const std::size_t k_max = embed_cholesky_columns(n, dim, cholesky_rank);
    std::vector<double> a(g.begin(), g.end());
    if (!pivot_candidates.empty() && pivot_candidates.size() != n)
      throw std::invalid_argument("embed: " + std::to_string(pivot_candidates.size()) + " pivot candidate flags for " +
                                  std::to_string(n) + " atoms");
    const auto f = pivot_candidates.empty() ? linalg::pivoted_cholesky(a, n, k_max, 0.0)
                                            : linalg::pivoted_cholesky_restricted(a, n, pivot_candidates, k_max, 0.0);
    return embed_from_pivoted_cholesky(f, a.data(), n, 1, n, dim);
  }
  EmbedResult r;
  r.dim = dim;
  r.coords.assign(n * dim, 0.0);
  {
    Eigen::Map<const Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>> gm(
        g.data(), static_cast<Eigen::Index>(n), static_cast<Eigen::Index>(n));
    const Eigen::MatrixXd m = gm;  // symmetric: layout does not matter
    const Eigen::Index nev = static_cast<Eigen::Index>(std::min(dim + 1, n - 1));
    Eigen::VectorXd values;
    Eigen::MatrixXd vectors;
    if (n <= 64) {
      Eigen::SelfAdjointEigenSolver<Eigen::MatrixXd> es(m);
      values = es.eigenvalues().reverse().head(nev);
      vectors = es.eigenvectors().rowwise().reverse().leftCols(nev);
    } else {
      Spectra::DenseSymMatProd<double> op(m);
      const Eigen::Index ncv =
          std::min<Eigen::Index>(static_cast<Eigen::Index>(n), std::max<Eigen::Index>(4 * nev, 20));
      Spectra::SymEigsSolver<Spectra::DenseSymMatProd<double>> solver(op, nev, ncv);
      solver.init();
      solver.compute(Spectra::SortRule::LargestAlge, 2000, 1e-12);
      if (solver.info() != Spectra::CompInfo::Successful)
        throw std::runtime_error("embed (eigen): Spectra did not converge on the top " + std::to_string(nev) +
                                 " eigenpairs of the " + std::to_string(n) + "×" + std::to_string(n) +
                                 " metric matrix");
      values = solver.eigenvalues();
      vectors = solver.eigenvectors();
    }
    for (std::size_t k = 0; k < dim; ++k) r.spectrum.push_back(values(static_cast<Eigen::Index>(k)));
    r.next = nev > static_cast<Eigen::Index>(dim) ? values(static_cast<Eigen::Index>(dim)) : 0.0;
    for (std::size_t k = 0; k < dim; ++k)
      if (!(values(static_cast<Eigen::Index>(k)) > 0.0)) {
        std::ostringstream msg;
        msg << "embed (eigen): eigenvalue " << k + 1 << " of the metric matrix is "
            << values(static_cast<Eigen::Index>(k)) << " Å² (not positive): the distances do not span " << dim
            << " dimensions";
        throw std::runtime_error(msg.str());
      }
    for (std::size_t k = 0; k < dim; ++k) {
      const double s = std::sqrt(values(static_cast<Eigen::Index>(k)));
      for (std::size_t i = 0; i < n; ++i)
        r.coords[i * dim + k] = s * vectors(static_cast<Eigen::Index>(i), static_cast<Eigen::Index>(k));
    }
  }
  centre(r, n);
  return r;
}

std::vector<unsigned char> tight_atoms(std::span<const double> lower, std::span<const double> upper, std::size_t n,
                                       double fraction) {
  if (lower.size() != n * n || upper.size() != n * n) throw std::invalid_argument("tight_atoms: bounds are not n×n");
  if (!(fraction > 0.0)) throw std::invalid_argument("tight_atoms: fraction must be > 0");
  std::vector<unsigned char> flag(n, 1);
  if (fraction >= 1.0 || n == 0) return flag;
  std::vector<double> score(n, 0.0);
  for (std::size_t i = 0; i < n; ++i) {
    double s = 0.0;
    for (std::size_t j = 0; j < n; ++j) s += upper[i * n + j] - lower[i * n + j];
    score[i] = s / static_cast<double>(n);
  }
  std::vector<std::size_t> order(n);
  for (std::size_t i = 0; i < n; ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return score[a] < score[b]; });
  const auto keep =
      std::min(n, std::max<std::size_t>(5, static_cast<std::size_t>(std::ceil(fraction * static_cast<double>(n)))));
  std::fill(flag.begin(), flag.end(), 0);
  for (std::size_t k = 0; k < keep; ++k) flag[order[k]] = 1;
  return flag;
}

bool fix_chirality(std::span<double> x, std::size_t dim, std::span<const ChiralCheck> centres,
                   std::size_t* correct_after) {
  if (dim < 3) throw std::invalid_argument("fix_chirality: need at least 3 dimensions");
  std::size_t correct = 0;
  for (const auto& c : centres) {
    const double v = chiral_volume(&x[c.centre * dim], &x[c.a * dim], &x[c.b * dim], &x[c.c * dim]);
    if ((v > 0) == (c.sign > 0) && v != 0.0) ++correct;
  }
  bool flipped = false;
  if (2 * correct < centres.size()) {
    for (std::size_t i = 0; i < x.size(); i += dim) x[i] = -x[i];
    correct = centres.size() - correct;  // zero volumes stay wrong; close enough for reporting
    flipped = true;
  }
  if (correct_after) *correct_after = correct;
  return flipped;
}

}  // namespace gemflow::distgeom
