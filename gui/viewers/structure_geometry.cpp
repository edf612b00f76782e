#include "viewers/structure_geometry.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
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
    same = mobile.atoms[i].name == target.atoms[i].name &&
           mobile.atoms[i].residue_number == target.atoms[i].residue_number;
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

std::vector<std::vector<std::size_t>> backbone_traces(const std::vector<Atom>& atoms, const std::vector<Vec3>& coords,
                                                      double max_gap) {
  std::vector<std::vector<std::size_t>> traces;
  std::map<std::string, std::size_t> open;  // chain → index of its current trace
  const std::size_t n = std::min(atoms.size(), coords.size());
  for (std::size_t i = 0; i < n; ++i) {
    if (atoms[i].name != "CA" || atoms[i].hetero || upper(atoms[i].element) != "C") continue;
    auto it = open.find(atoms[i].chain);
    if (it != open.end()) {
      const Vec3& a = coords[traces[it->second].back()];
      const Vec3& b = coords[i];
      const double d =
          std::sqrt((a[0] - b[0]) * (a[0] - b[0]) + (a[1] - b[1]) * (a[1] - b[1]) + (a[2] - b[2]) * (a[2] - b[2]));
      if (d <= max_gap) {
        traces[it->second].push_back(i);
        continue;
      }
    }
    open[atoms[i].chain] = traces.size();
    traces.push_back({i});
  }
  std::erase_if(traces, [](const auto& t) { return t.size() < 2; });
  return traces;
}

PrincipalAxes principal_axes(const std::vector<Vec3>& coords) {
  PrincipalAxes r;
  r.axis = {Vec3{1, 0, 0}, Vec3{0, 1, 0}, Vec3{0, 0, 1}};
  if (coords.empty()) return r;
  Eigen::Vector3d c = Eigen::Vector3d::Zero();
  for (const auto& p : coords) c += Eigen::Vector3d(p[0], p[1], p[2]);
  c /= static_cast<double>(coords.size());
  Eigen::Matrix3d cov = Eigen::Matrix3d::Zero();
  for (const auto& p : coords) {
    const Eigen::Vector3d d = Eigen::Vector3d(p[0], p[1], p[2]) - c;
    cov += d * d.transpose();
  }
  Eigen::SelfAdjointEigenSolver<Eigen::Matrix3d> es(cov);  // ascending eigenvalues
  Eigen::Vector3d e0 = es.eigenvectors().col(2), e1 = es.eigenvectors().col(1);
  const Eigen::Vector3d e2 = e0.cross(e1);  // right-handed
  const Eigen::Vector3d axes[3] = {e0, e1, e2};
  r.centre = {c.x(), c.y(), c.z()};
  for (int k = 0; k < 3; ++k) {
    r.axis[static_cast<std::size_t>(k)] = {axes[k].x(), axes[k].y(), axes[k].z()};
    double m = 0;
    for (const auto& p : coords) m = std::max(m, std::abs((Eigen::Vector3d(p[0], p[1], p[2]) - c).dot(axes[k])));
    r.half_extent[static_cast<std::size_t>(k)] = m;
  }
  return r;
}

namespace {
/// Mean position over the models of each listed atom.
std::vector<Vec3> mean_positions(const std::vector<std::vector<Vec3>>& models, const std::vector<std::size_t>& atoms) {
  std::vector<Vec3> mean(atoms.size(), Vec3{0, 0, 0});
  const double w = 1.0 / static_cast<double>(models.size());
  for (const auto& m : models)
    for (std::size_t k = 0; k < atoms.size(); ++k)
      for (int c = 0; c < 3; ++c) mean[k][c] += w * m[atoms[k]][c];
  return mean;
}
double squared_distance(const Vec3& a, const Vec3& b) {
  return (a[0] - b[0]) * (a[0] - b[0]) + (a[1] - b[1]) * (a[1] - b[1]) + (a[2] - b[2]) * (a[2] - b[2]);
}
}  // namespace

EnsembleSuperposition superpose_ensemble(const Structure& s, int iterations) {
  EnsembleSuperposition r;
  const std::size_t n = s.atoms.size();
  if (s.models.empty() || std::any_of(s.models.begin(), s.models.end(), [n](const auto& m) { return m.size() != n; }))
    return r;
  // Backbone atoms and their residues, in file order.
  std::map<ResidueId, std::size_t> index;
  std::vector<std::size_t> bb, bb_residue;
  for (std::size_t i = 0; i < n; ++i) {
    const Atom& a = s.atoms[i];
    if (a.hetero || (a.name != "N" && a.name != "CA" && a.name != "C")) continue;
    const auto [it, added] = index.emplace(ResidueId{a.chain, a.residue_number, a.insertion}, r.residues.size());
    if (added) r.residues.push_back(it->first);
    bb.push_back(i);
    bb_residue.push_back(it->second);
  }
  if (bb.empty()) return r;
  r.models = s.models;
  const std::size_t nres = r.residues.size();
  // Fits every model onto `target` (one row per backbone atom) over the backbone atoms `use`
  // (indices into bb), moving all its atoms. Fewer than 3 atoms: nothing to fit, left as is.
  auto fit = [&](const std::vector<Vec3>& target, const std::vector<std::size_t>& use) {
    std::vector<std::array<std::size_t, 2>> pairs;
    for (auto k : use) pairs.push_back({bb[k], k});
    for (auto& m : r.models)
      if (const auto sup = kabsch(m, target, pairs))
        for (auto& x : m) x = sup->apply(x);
  };
  auto rmsf = [&](const std::vector<Vec3>& mean) {
    std::vector<double> sum(nres, 0.0), count(nres, 0.0);
    for (const auto& m : r.models)
      for (std::size_t k = 0; k < bb.size(); ++k) {
        sum[bb_residue[k]] += squared_distance(m[bb[k]], mean[k]);
        count[bb_residue[k]] += 1;
      }
    for (std::size_t q = 0; q < nres; ++q) sum[q] = std::sqrt(sum[q] / count[q]);
    return sum;
  };
  std::vector<std::size_t> all(bb.size());
  for (std::size_t k = 0; k < bb.size(); ++k) all[k] = k;
  // Pass 1: onto model 1 over the whole backbone.
  {
    std::vector<Vec3> first(bb.size());
    for (std::size_t k = 0; k < bb.size(); ++k) first[k] = r.models.front()[bb[k]];
    fit(first, all);
  }
  std::vector<Vec3> mean = mean_positions(r.models, bb);
  r.residue_rmsf = rmsf(mean);
  // Pass 2: the core (RMSF at most the median), iterative superposition on the mean.
  std::vector<double> sorted = r.residue_rmsf;
  std::sort(sorted.begin(), sorted.end());
  const double median = sorted[(sorted.size() - 1) / 2];
  std::vector<std::size_t> use;
  for (std::size_t k = 0; k < bb.size(); ++k)
    if (r.residue_rmsf[bb_residue[k]] <= median) use.push_back(k);
  const bool whole = use.size() < 3;
  if (whole) use = all;
  for (std::size_t q = 0; q < nres; ++q)
    if (whole || r.residue_rmsf[q] <= median) r.core.push_back(q);
  for (int it = 0; it < std::max(1, iterations); ++it) {
    fit(mean, use);
    mean = mean_positions(r.models, bb);
  }
  r.residue_rmsf = rmsf(mean);
  for (const auto& m : r.models) {
    double sum = 0;
    for (auto k : use) sum += squared_distance(m[bb[k]], mean[k]);
    r.rmsd_to_mean += std::sqrt(sum / static_cast<double>(use.size())) / static_cast<double>(r.models.size());
  }
  r.atom_rmsf.assign(n, std::numeric_limits<double>::quiet_NaN());
  for (std::size_t i = 0; i < n; ++i) {
    const Atom& a = s.atoms[i];
    if (auto it = index.find(ResidueId{a.chain, a.residue_number, a.insertion}); it != index.end())
      r.atom_rmsf[i] = r.residue_rmsf[it->second];
  }
  return r;
}

std::array<double, 3> rmsf_color(double rmsf) {
  if (std::isnan(rmsf)) return {0.6, 0.6, 0.6};
  static constexpr std::array<double, 3> blue{0.0, 0.3, 1.0}, white{1.0, 1.0, 1.0}, red{1.0, 0.0, 0.0};
  const double t = std::clamp(rmsf, 0.0, 2.0);
  const auto& a = t <= 1.0 ? blue : white;
  const auto& b = t <= 1.0 ? white : red;
  const double f = t <= 1.0 ? t : t - 1.0;
  return {a[0] + f * (b[0] - a[0]), a[1] + f * (b[1] - a[1]), a[2] + f * (b[2] - a[2])};
}

std::array<double, 3> rainbow(double t) {
  // Hue from 240° (blue) down to 0° (red), full saturation, bright.
  t = std::clamp(t, 0.0, 1.0);
  const double h = (1.0 - t) * 4.0;  // 4 = blue … 0 = red, in 60° sectors
  const int i = std::min(3, static_cast<int>(h));
  const double f = h - i;
  switch (i) {
    case 0: return {1.0, f, 0.0};         // red → yellow
    case 1: return {1.0 - f, 1.0, 0.0};   // yellow → green
    case 2: return {0.0, 1.0, f};         // green → cyan
    default: return {0.0, 1.0 - f, 1.0};  // cyan → blue
  }
}

}  // namespace gemflow::studio
