#pragma once
// The standard data types of the SDK and their DataType registrations.
#include <string>

#include "gemflow/data.hpp"
#include "gemflow/types/distance_bounds.hpp"
#include "gemflow/types/matrix.hpp"
#include "gemflow/types/restraints.hpp"
#include "gemflow/types/structure.hpp"
#include "gemflow/types/table.hpp"

namespace gemflow {

template <>
struct DataType<Matrix<double>> {
  static constexpr std::string_view name = "Matrix<f64>";
  static constexpr std::string_view doc = "Dense row-major matrix of doubles";
  static std::string summary(const Matrix<double>& m);
};
template <>
struct DataType<Matrix<float>> {
  static constexpr std::string_view name = "Matrix<f32>";
  static constexpr std::string_view doc = "Dense row-major matrix of floats";
  static std::string summary(const Matrix<float>& m);
};
template <>
struct DataType<DistanceBounds> {
  static constexpr std::string_view name = "DistanceBounds";
  static constexpr std::string_view doc = "Lower/upper interatomic distance bounds (Å) with atom labels";
  static std::string summary(const DistanceBounds& b);
};
template <>
struct DataType<Structure> {
  static constexpr std::string_view name = "Structure";
  static constexpr std::string_view doc = "Atoms (element, name, residue, chain) and coordinate models (Å)";
  static std::string summary(const Structure& s);
};
template <>
struct DataType<RestraintSet> {
  static constexpr std::string_view name = "RestraintSet";
  static constexpr std::string_view doc = "Distance restraints (Å), possibly ambiguous, with their file origin";
  static std::string summary(const RestraintSet& r);
};
template <>
struct DataType<Table> {
  static constexpr std::string_view name = "Table";
  static constexpr std::string_view doc = "Named columns of numbers or text (reports, statistics)";
  static std::string summary(const Table& t);
};

}  // namespace gemflow
