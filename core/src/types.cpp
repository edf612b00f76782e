#include "gemflow/types.hpp"

#include <cxxabi.h>

#include <cmath>
#include <cstdlib>
#include <limits>
#include <memory>
#include <set>

#include <fmt/format.h>

#include "gemflow/error.hpp"
#include "gemflow/memory.hpp"

namespace gemflow {

std::string demangle(const char* mangled) {
  int status = 0;
  const std::unique_ptr<char, void (*)(void*)> d(abi::__cxa_demangle(mangled, nullptr, nullptr, &status), std::free);
  return status == 0 && d ? std::string(d.get()) : std::string(mangled);
}

std::string TypeLayout::str() const {
  return fmt::format("C++ type {}, {} bytes, alignment {}, version {}", demangle(cxx_type.c_str()), size, align,
                     version);
}

Image::Image(std::size_t w, std::size_t h, Format f) : width(w), height(h), format(f) {
  const std::size_t value_size = f == Format::RGBA32F ? sizeof(float) : 1;
  const std::size_t max = std::numeric_limits<std::size_t>::max() / (4 * value_size);
  if (w != 0 && h > max / w) throw OutOfMemory(fmt::format("a {}×{} RGBA image is too large to address", w, h));
  const std::size_t bytes = w * h * 4 * value_size;
  if (bytes >= (std::size_t{256} << 20)) require_host_memory(bytes, fmt::format("a {}×{} RGBA image", w, h));
  if (f == Format::RGBA32F) f32.assign(w * h * 4, 0.0f);
  else u8.assign(w * h * 4, 0);
}

std::optional<std::string> Image::validate() const {
  const bool is_float = format == Format::RGBA32F;
  const std::size_t used = is_float ? f32.size() : u8.size();
  const std::size_t unused = is_float ? u8.size() : f32.size();
  if (width != 0 && height > std::numeric_limits<std::size_t>::max() / 4 / width)
    return fmt::format("{}×{} pixels overflow the storage size", width, height);
  if (used != width * height * 4)
    return fmt::format("{} holds {} values, {}×{}×4 = {} expected", is_float ? "f32" : "u8", used, width, height,
                       width * height * 4);
  if (unused != 0)
    return fmt::format("{} holds {} values for a {} image (it must be empty)", is_float ? "u8" : "f32", unused,
                       is_float ? "RGBA32F" : "RGBA8");
  if (!is_float) return std::nullopt;
  static constexpr const char* kChannel[] = {"red", "green", "blue", "alpha"};
  for (std::size_t k = 0; k < f32.size(); ++k) {
    const float v = f32[k];
    const std::size_t c = k % 4, x = (k / 4) % width, y = k / 4 / width;
    if (!std::isfinite(v)) return fmt::format("pixel ({}, {}): {} is {}", x, y, kChannel[c], v);
    if (v < 0.0f) return fmt::format("pixel ({}, {}): {} {} is negative", x, y, kChannel[c], v);
    if (c == 3 && v > 1.0f) return fmt::format("pixel ({}, {}): alpha {} is outside [0, 1]", x, y, v);
  }
  return std::nullopt;
}

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
  return fmt::format("{} atoms, {} residues, {} model{}", s.atoms.size(), residues.size(), s.models.size(),
                     s.models.size() == 1 ? "" : "s");
}
std::string DataType<RestraintSet>::summary(const RestraintSet& r) {
  if (r.dihedrals.empty()) return fmt::format("{} restraints", r.restraints.size());
  return fmt::format("{} distance and {} dihedral restraints", r.restraints.size(), r.dihedrals.size());
}
std::string DataType<Table>::summary(const Table& t) {
  return fmt::format("{} rows × {} columns", t.rows.size(), t.columns.size());
}

std::string DataType<MoleculeSet>::summary(const MoleculeSet& s) {
  std::size_t atoms = 0, bonds = 0;
  for (const auto& m : s.molecules) atoms += m.atoms.size(), bonds += m.bonds.size();
  return fmt::format("{} molecule(s), {} atoms, {} bonds", s.size(), atoms, bonds);
}
std::string DataType<Image>::summary(const Image& im) {
  return fmt::format("{}×{} RGBA {}", im.width, im.height, im.format == Image::Format::RGBA32F ? "float" : "8-bit");
}
std::string DataType<Signal>::summary(const Signal& s) {
  const std::string axis = s.regular() ? fmt::format("{} Hz", s.sample_rate) : std::string("irregular times");
  const std::size_t missing = s.missing();
  return fmt::format(
      "{} samples × {} channel{}, {}{}", s.length(), s.dims(), s.dims() == 1 ? "" : "s", axis,
      missing == 0 ? std::string() : fmt::format(", {} missing value{}", missing, missing == 1 ? "" : "s"));
}
std::string DataType<Scores>::summary(const Scores& s) {
  return fmt::format("{} samples × {} label{}", s.length(), s.classes(), s.classes() == 1 ? "" : "s");
}
std::string DataType<Segmentation>::summary(const Segmentation& s) {
  return fmt::format("{} segment{} over {} samples, {} label{}", s.segments.size(), s.segments.size() == 1 ? "" : "s",
                     s.length, s.labels.size(), s.labels.size() == 1 ? "" : "s");
}
std::string DataType<TriMesh>::summary(const TriMesh& m) {
  return fmt::format("{} vertices, {} faces, {} boundary loop{}{}", m.vertex_count(), m.face_count(), m.boundary.size(),
                     m.boundary.size() == 1 ? "" : "s", m.has_uv() ? ", texture coordinates" : "");
}
std::string DataType<CirclePacking>::summary(const CirclePacking& p) {
  std::size_t on_boundary = 0;
  for (const auto b : p.boundary) on_boundary += b != 0;
  return fmt::format("{} circles, {} faces, {} on the boundary, {}", p.size(), p.faces.size(), on_boundary,
                     p.geometry == CirclePacking::Geometry::Euclidean ? "euclidean" : "hyperbolic (Poincaré disc)");
}

}  // namespace gemflow
