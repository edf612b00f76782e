// Element data and distance-based bond perception.
#include <algorithm>
#include <array>
#include <cctype>
#include <cmath>
#include <unordered_map>

#include "gemflow/io/structure_io.hpp"

namespace gemflow::io {

namespace {
// Symbols 1..118 (upper case).
constexpr std::array<std::string_view, 118> kSymbols = {
    "H",  "HE", "LI", "BE", "B",  "C",  "N",  "O",  "F",  "NE", "NA", "MG", "AL", "SI", "P",  "S",  "CL",
    "AR", "K",  "CA", "SC", "TI", "V",  "CR", "MN", "FE", "CO", "NI", "CU", "ZN", "GA", "GE", "AS", "SE",
    "BR", "KR", "RB", "SR", "Y",  "ZR", "NB", "MO", "TC", "RU", "RH", "PD", "AG", "CD", "IN", "SN", "SB",
    "TE", "I",  "XE", "CS", "BA", "LA", "CE", "PR", "ND", "PM", "SM", "EU", "GD", "TB", "DY", "HO", "ER",
    "TM", "YB", "LU", "HF", "TA", "W",  "RE", "OS", "IR", "PT", "AU", "HG", "TL", "PB", "BI", "PO", "AT",
    "RN", "FR", "RA", "AC", "TH", "PA", "U",  "NP", "PU", "AM", "CM", "BK", "CF", "ES", "FM", "MD", "NO",
    "LR", "RF", "DB", "SG", "BH", "HS", "MT", "DS", "RG", "CN", "NH", "FL", "MC", "LV", "TS", "OG"};
// Covalent radii (Å) for Z = 1..96, Cordero et al. 2008 (sp3 C, high-spin Mn/Fe/Co).
constexpr std::array<double, 96> kRadii = {
    0.31, 0.28, 1.28, 0.96, 0.84, 0.76, 0.71, 0.66, 0.57, 0.58, 1.66, 1.41, 1.21, 1.11, 1.07, 1.05,
    1.02, 1.06, 2.03, 1.76, 1.70, 1.60, 1.53, 1.39, 1.61, 1.52, 1.50, 1.24, 1.32, 1.22, 1.22, 1.20,
    1.19, 1.20, 1.20, 1.16, 2.20, 1.95, 1.90, 1.75, 1.64, 1.54, 1.47, 1.46, 1.42, 1.39, 1.45, 1.44,
    1.42, 1.39, 1.39, 1.38, 1.39, 1.40, 2.44, 2.15, 2.07, 2.04, 2.03, 2.01, 1.99, 1.98, 1.98, 1.96,
    1.94, 1.92, 1.92, 1.89, 1.90, 1.87, 1.87, 1.75, 1.70, 1.62, 1.51, 1.44, 1.41, 1.36, 1.36, 1.32,
    1.45, 1.46, 1.48, 1.40, 1.50, 1.50, 2.60, 2.21, 2.15, 2.06, 2.00, 1.96, 1.90, 1.87, 1.80, 1.69};
}  // namespace

int atomic_number(std::string_view element) noexcept {
  if (element.empty() || element.size() > 2) return 0;
  char u[2] = {static_cast<char>(std::toupper(static_cast<unsigned char>(element[0]))),
               element.size() > 1 ? static_cast<char>(std::toupper(static_cast<unsigned char>(element[1]))) : '\0'};
  std::string_view e(u, element.size());
  if (e == "D" || e == "T") return 1;  // deuterium, tritium
  for (std::size_t i = 0; i < kSymbols.size(); ++i)
    if (kSymbols[i] == e) return static_cast<int>(i + 1);
  return 0;
}

double covalent_radius(std::string_view element) noexcept {
  int z = atomic_number(element);
  if (z <= 0 || z > static_cast<int>(kRadii.size())) return 1.5;
  return kRadii[static_cast<std::size_t>(z - 1)];
}

std::vector<std::array<std::size_t, 2>> bonds_by_distance(const Structure& s, std::size_t model, double tolerance) {
  std::vector<std::array<std::size_t, 2>> bonds;
  if (model >= s.models.size()) return bonds;
  const auto& x = s.models[model];
  const std::size_t n = x.size();
  std::vector<double> r(n);
  double rmax = 0;
  for (std::size_t i = 0; i < n; ++i) {
    r[i] = covalent_radius(s.atoms[i].element);
    rmax = std::max(rmax, r[i]);
  }
  const double cell = 2 * rmax + std::max(tolerance, 0.0);
  struct Key {
    long long a, b, c;
    bool operator==(const Key&) const = default;
  };
  struct Hash {
    std::size_t operator()(const Key& k) const noexcept {  // unsigned: wraps, never overflows
      return static_cast<std::size_t>(static_cast<unsigned long long>(k.a) * 73856093ULL ^
                                      static_cast<unsigned long long>(k.b) * 19349663ULL ^
                                      static_cast<unsigned long long>(k.c) * 83492791ULL);
    }
  };
  std::unordered_map<Key, std::vector<std::size_t>, Hash> grid;
  // Cell indices clamped to ±2⁵⁰ so that any finite coordinate (1e300 overflowed the conversion
  // and the hash) gives a key whose neighbours ±1 exist; atoms that far out share clamped cells,
  // which costs time, not correctness: every pair is still measured. Non-finite positions bond
  // to nothing.
  constexpr double kMaxCell = 1125899906842624.0;  // 2^50
  auto cell_of = [&](double v) {
    return static_cast<long long>(std::clamp(std::floor(v / cell), -kMaxCell, kMaxCell));
  };
  auto key_of = [&](const Vec3& p) { return Key{cell_of(p[0]), cell_of(p[1]), cell_of(p[2])}; };
  auto finite = [](const Vec3& p) { return std::isfinite(p[0]) && std::isfinite(p[1]) && std::isfinite(p[2]); };
  for (std::size_t i = 0; i < n; ++i)
    if (finite(x[i])) grid[key_of(x[i])].push_back(i);
  for (std::size_t i = 0; i < n; ++i) {
    if (!finite(x[i])) continue;
    Key k = key_of(x[i]);
    for (long long da = -1; da <= 1; ++da)
      for (long long db = -1; db <= 1; ++db)
        for (long long dc = -1; dc <= 1; ++dc) {
          auto it = grid.find(Key{k.a + da, k.b + db, k.c + dc});
          if (it == grid.end()) continue;
          for (std::size_t j : it->second) {
            if (j <= i) continue;
            double d2 = 0;
            for (int c = 0; c < 3; ++c) d2 += (x[i][c] - x[j][c]) * (x[i][c] - x[j][c]);
            double lim = r[i] + r[j] + tolerance;
            if (d2 > 0.16 && d2 < lim * lim) bonds.push_back({i, j});
          }
        }
  }
  std::sort(bonds.begin(), bonds.end());
  return bonds;
}

}  // namespace gemflow::io
