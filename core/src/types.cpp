#include "gemflow/types.hpp"

#include <set>

#include <fmt/format.h>

namespace gemflow {

std::optional<std::size_t> Structure::find(const std::string& chain, int residue_number,
                                           const std::string& name) const {
  for (std::size_t i = 0; i < atoms.size(); ++i) {
    const Atom& a = atoms[i];
    if (a.residue_number == residue_number && a.name == name && (chain.empty() || a.chain == chain)) return i;
  }
  return std::nullopt;
}

int Table::column(const std::string& name) const {
  for (std::size_t i = 0; i < columns.size(); ++i)
    if (columns[i] == name) return static_cast<int>(i);
  return -1;
}

std::string DataType<Matrix<double>>::summary(const Matrix<double>& m) {
  return fmt::format("{}×{} f64", m.rows(), m.cols());
}
std::string DataType<Matrix<float>>::summary(const Matrix<float>& m) {
  return fmt::format("{}×{} f32", m.rows(), m.cols());
}
std::string DataType<DistanceBounds>::summary(const DistanceBounds& b) {
  return fmt::format("bounds for {} atoms", b.size());
}
std::string DataType<Structure>::summary(const Structure& s) {
  std::set<std::tuple<std::string, int, std::string>> residues;
  for (const auto& a : s.atoms) residues.emplace(a.chain, a.residue_number, a.insertion);
  return fmt::format("{} atoms, {} residues, {} model{}", s.atoms.size(), residues.size(),
                     s.models.size(), s.models.size() == 1 ? "" : "s");
}
std::string DataType<RestraintSet>::summary(const RestraintSet& r) {
  return fmt::format("{} restraints", r.restraints.size());
}
std::string DataType<Table>::summary(const Table& t) {
  return fmt::format("{} rows × {} columns", t.rows.size(), t.columns.size());
}

}  // namespace gemflow
