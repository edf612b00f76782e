// Superposition and chiral volumes (see gemflow/distgeom/geometry.hpp).
#include "gemflow/distgeom/geometry.hpp"

#include <Eigen/Dense>

#include <cmath>
#include <stdexcept>
#include <string>

namespace gemflow::distgeom {

Superposition kabsch(std::span<const double> mobile, std::span<const double> target) {
  if (mobile.size() != target.size() || mobile.size() % 3 != 0 || mobile.empty())
    throw std::invalid_argument("kabsch: point sets of " + std::to_string(mobile.size()) + " and " +
                                std::to_string(target.size()) + " values (need equal, non-zero multiples of 3)");
  const std::size_t n = mobile.size() / 3;
  using Map = Eigen::Map<const Eigen::Matrix<double, Eigen::Dynamic, 3, Eigen::RowMajor>>;
  const Map a(mobile.data(), static_cast<Eigen::Index>(n), 3), b(target.data(), static_cast<Eigen::Index>(n), 3);
  const Eigen::RowVector3d ca = a.colwise().mean(), cb = b.colwise().mean();
  const Eigen::MatrixXd a0 = a.rowwise() - ca, b0 = b.rowwise() - cb;
  const Eigen::Matrix3d h = a0.transpose() * b0;  // covariance
  Eigen::JacobiSVD<Eigen::Matrix3d> svd(h, Eigen::ComputeFullU | Eigen::ComputeFullV);
  Eigen::Matrix3d d = Eigen::Matrix3d::Identity();
  if ((svd.matrixV() * svd.matrixU().transpose()).determinant() < 0) d(2, 2) = -1.0;
  const Eigen::Matrix3d r = svd.matrixV() * d * svd.matrixU().transpose();
  const Eigen::MatrixXd diff = (a0 * r.transpose()) - b0;
  Superposition s;
  s.rmsd = std::sqrt(diff.squaredNorm() / static_cast<double>(n));
  for (int i = 0; i < 3; ++i) {
    s.centre_mobile[static_cast<std::size_t>(i)] = ca(i);
    s.centre_target[static_cast<std::size_t>(i)] = cb(i);
    for (int j = 0; j < 3; ++j) s.rotation[static_cast<std::size_t>(3 * i + j)] = r(i, j);
  }
  return s;
}

double superposed_rmsd(std::span<const double> mobile, std::span<const double> target) {
  return kabsch(mobile, target).rmsd;
}

void apply(const Superposition& s, std::span<double> p) {
  for (std::size_t i = 0; i + 2 < p.size(); i += 3) {
    const double x[3] = {p[i] - s.centre_mobile[0], p[i + 1] - s.centre_mobile[1], p[i + 2] - s.centre_mobile[2]};
    for (std::size_t k = 0; k < 3; ++k)
      p[i + k] =
          s.rotation[3 * k] * x[0] + s.rotation[3 * k + 1] * x[1] + s.rotation[3 * k + 2] * x[2] + s.centre_target[k];
  }
}

double chiral_volume(const double* c, const double* a, const double* b, const double* d) {
  const double u[3] = {a[0] - c[0], a[1] - c[1], a[2] - c[2]};
  const double v[3] = {b[0] - c[0], b[1] - c[1], b[2] - c[2]};
  const double w[3] = {d[0] - c[0], d[1] - c[1], d[2] - c[2]};
  return u[0] * (v[1] * w[2] - v[2] * w[1]) - u[1] * (v[0] * w[2] - v[2] * w[0]) + u[2] * (v[0] * w[1] - v[1] * w[0]);
}

}  // namespace gemflow::distgeom
