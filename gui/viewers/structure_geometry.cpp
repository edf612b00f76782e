#include "viewers/structure_geometry.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <tuple>
#include <unordered_map>

#include <Eigen/Dense>

namespace gemflow::studio {

namespace {
struct ElementInfo {
  double radius;
  std::array<double, 3> color;
};
const std::map<std::string, ElementInfo>& elements() {
  static const std::map<std::string, ElementInfo> table{
      {"H", {0.31, {1.00, 1.00, 1.00}}},  {"C", {0.76, {0.56, 0.56, 0.56}}},  {"N", {0.71, {0.19, 0.31, 0.97}}},
      {"O", {0.66, {1.00, 0.05, 0.05}}},  {"S", {1.05, {1.00, 1.00, 0.19}}},  {"P", {1.07, {1.00, 0.50, 0.00}}},
      {"F", {0.57, {0.56, 0.88, 0.31}}},  {"CL", {1.02, {0.12, 0.94, 0.12}}}, {"BR", {1.20, {0.65, 0.16, 0.16}}},
      {"I", {1.39, {0.58, 0.00, 0.58}}},  {"SE", {1.20, {1.00, 0.63, 0.00}}}, {"FE", {1.32, {0.88, 0.40, 0.20}}},
      {"ZN", {1.22, {0.49, 0.50, 0.69}}}, {"MG", {1.41, {0.54, 1.00, 0.00}}}, {"CA", {1.76, {0.24, 1.00, 0.00}}},
      {"NA", {1.66, {0.67, 0.36, 0.95}}}, {"K", {2.03, {0.56, 0.25, 0.83}}},  {"MN", {1.39, {0.61, 0.48, 0.78}}},
      {"CU", {1.32, {0.78, 0.50, 0.20}}}, {"CO", {1.26, {0.94, 0.56, 0.63}}}, {"NI", {1.24, {0.31, 0.82, 0.31}}},
      {"B", {0.84, {1.00, 0.71, 0.71}}},  {"SI", {1.11, {0.94, 0.78, 0.63}}}, {"D", {0.31, {1.00, 1.00, 0.75}}},
  };
  return table;
}
std::string upper(std::string s) {
  for (auto& c : s) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return s;
}
}  // namespace

double covalent_radius(const std::string& element) {
  auto it = elements().find(upper(element));
  return it == elements().end() ? 0.76 : it->second.radius;
}

std::array<double, 3> element_color(const std::string& element) {
  auto it = elements().find(upper(element));
  return it == elements().end() ? std::array<double, 3>{1.0, 0.08, 0.58} : it->second.color;
}

std::vector<std::array<std::size_t, 2>> perceive_bonds(const std::vector<Atom>& atoms, const std::vector<Vec3>& coords,
                                                       double tolerance) {
  std::vector<std::array<std::size_t, 2>> bonds;
  const std::size_t n = std::min(atoms.size(), coords.size());
  if (n < 2) return bonds;
  std::vector<double> r(n);
  double rmax = 0;
  for (std::size_t i = 0; i < n; ++i) rmax = std::max(rmax, r[i] = covalent_radius(atoms[i].element));
  const double cell = 2 * rmax + tolerance;
  auto key = [&](const Vec3& p) {
    return std::make_tuple(static_cast<long>(std::floor(p[0] / cell)), static_cast<long>(std::floor(p[1] / cell)),
                           static_cast<long>(std::floor(p[2] / cell)));
  };
  struct Hash {
    std::size_t operator()(const std::tuple<long, long, long>& k) const {
      return std::hash<long>()(std::get<0>(k) * 73856093L ^ std::get<1>(k) * 19349663L ^ std::get<2>(k) * 83492791L);
    }
  };
  std::unordered_map<std::tuple<long, long, long>, std::vector<std::size_t>, Hash> grid;
  for (std::size_t i = 0; i < n; ++i) grid[key(coords[i])].push_back(i);
  for (std::size_t i = 0; i < n; ++i) {
    auto [x, y, z] = key(coords[i]);
    for (long dx = -1; dx <= 1; ++dx)
      for (long dy = -1; dy <= 1; ++dy)
        for (long dz = -1; dz <= 1; ++dz) {
          auto it = grid.find({x + dx, y + dy, z + dz});
          if (it == grid.end()) continue;
          for (std::size_t j : it->second) {
            if (j <= i) continue;
            const double d2 = std::pow(coords[i][0] - coords[j][0], 2) + std::pow(coords[i][1] - coords[j][1], 2) +
                              std::pow(coords[i][2] - coords[j][2], 2);
            const double lim = r[i] + r[j] + tolerance;
            if (d2 > 0.16 && d2 <= lim * lim) bonds.push_back({i, j});
          }
        }
  }
  std::sort(bonds.begin(), bonds.end());
  return bonds;
}

Vec3 Superposition::apply(const Vec3& x) const {
  Vec3 y{};
  for (int i = 0; i < 3; ++i)
    y[i] = rotation[i][0] * x[0] + rotation[i][1] * x[1] + rotation[i][2] * x[2] + translation[i];
  return y;
}

std::optional<Superposition> kabsch(const std::vector<Vec3>& mobile, const std::vector<Vec3>& target,
                                    const std::vector<std::array<std::size_t, 2>>& pairs) {
  if (pairs.size() < 3) return std::nullopt;
  Eigen::Vector3d cm = Eigen::Vector3d::Zero(), ct = Eigen::Vector3d::Zero();
  for (auto [a, b] : pairs) {
    cm += Eigen::Vector3d(mobile[a][0], mobile[a][1], mobile[a][2]);
    ct += Eigen::Vector3d(target[b][0], target[b][1], target[b][2]);
  }
  cm /= static_cast<double>(pairs.size());
  ct /= static_cast<double>(pairs.size());
  Eigen::Matrix3d h = Eigen::Matrix3d::Zero();
  for (auto [a, b] : pairs)
    h += (Eigen::Vector3d(mobile[a][0], mobile[a][1], mobile[a][2]) - cm) *
         (Eigen::Vector3d(target[b][0], target[b][1], target[b][2]) - ct).transpose();
  Eigen::JacobiSVD<Eigen::Matrix3d> svd(h, Eigen::ComputeFullU | Eigen::ComputeFullV);
  Eigen::Matrix3d d = Eigen::Matrix3d::Identity();
  d(2, 2) = (svd.matrixV() * svd.matrixU().transpose()).determinant() < 0 ? -1.0 : 1.0;
  const Eigen::Matrix3d rot = svd.matrixV() * d * svd.matrixU().transpose();
  const Eigen::Vector3d t = ct - rot * cm;
  Superposition s;
  for (int i = 0; i < 3; ++i) {
    for (int j = 0; j < 3; ++j) s.rotation[i][j] = rot(i, j);
    s.translation[i] = t(i);
  }
  double sum = 0;
  for (auto [a, b] : pairs) {
    const Vec3 y = s.apply(mobile[a]);
    sum += std::pow(y[0] - target[b][0], 2) + std::pow(y[1] - target[b][1], 2) + std::pow(y[2] - target[b][2], 2);
  }
  s.pairs = pairs.size();
  s.rmsd = std::sqrt(sum / static_cast<double>(pairs.size()));
  return s;
}

std::vector<std::array<std::size_t, 2>> match_atoms(const Structure& mobile, const Structure& target) {
  std::vector<std::array<std::size_t, 2>> pairs;
  bool same = mobile.atoms.size() == target.atoms.size();
  for (std::size_t i = 0; same && i < mobile.atoms.size(); ++i)
    same = mobile.atoms[i].name == target.atoms[i].name && mobile.atoms[i].residue_number == target.atoms[i].residue_number;
  if (same) {
    for (std::size_t i = 0; i < mobile.atoms.size(); ++i) pairs.push_back({i, i});
    return pairs;
  }
  std::map<std::tuple<std::string, int, std::string>, std::size_t> index;
  for (std::size_t j = 0; j < target.atoms.size(); ++j) {
    const auto& a = target.atoms[j];
    index.emplace(std::make_tuple(a.chain, a.residue_number, a.name), j);
  }
  for (std::size_t i = 0; i < mobile.atoms.size(); ++i) {
    const auto& a = mobile.atoms[i];
    if (auto it = index.find({a.chain, a.residue_number, a.name}); it != index.end()) pairs.push_back({i, it->second});
  }
  return pairs;
}

}  // namespace gemflow::studio
