#pragma once
// The standard data types of the SDK and their DataType registrations. Each is registered by
// the Registry's constructor (origin "core"). A summary is one line without the type's name,
// which the caller prints before it ("Image: 1920×1080 RGBA float").
#include <string>

#include "gemflow/data.hpp"
#include "gemflow/types/circle_packing.hpp"
#include "gemflow/types/distance_bounds.hpp"
#include "gemflow/types/image.hpp"
#include "gemflow/types/matrix.hpp"
#include "gemflow/types/molecules.hpp"
#include "gemflow/types/restraints.hpp"
#include "gemflow/types/scores.hpp"
#include "gemflow/types/segmentation.hpp"
#include "gemflow/types/signal.hpp"
#include "gemflow/types/structure.hpp"
#include "gemflow/types/table.hpp"
#include "gemflow/types/trimesh.hpp"

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

template <>
struct DataType<MoleculeSet> {
  static constexpr std::string_view name = "MoleculeSet";
  static constexpr std::string_view doc =
      "Small molecules: per record a name, atoms (element, 3D coordinates Å, formal charge) and bonds "
      "with MDL bond orders";
  static std::string summary(const MoleculeSet& s);
};
template <>
struct DataType<Image> {
  static constexpr std::string_view name = "Image";
  static constexpr std::string_view doc =
      "RGBA image, row-major from the top-left pixel: linear premultiplied float, or 8-bit sRGB with "
      "straight alpha";
  static std::string summary(const Image& im);
};
template <>
struct DataType<Signal> {
  static constexpr std::string_view name = "Signal";
  static constexpr std::string_view doc =
      "T samples × D named channels with units, on a regular (Hz) or explicit (s) time axis";
  static std::string summary(const Signal& s);
};
template <>
struct DataType<Scores> {
  static constexpr std::string_view name = "Scores";
  static constexpr std::string_view doc = "T × C emission log-potentials of C named labels per sample";
  static std::string summary(const Scores& s);
};
template <>
struct DataType<Segmentation> {
  static constexpr std::string_view name = "Segmentation";
  static constexpr std::string_view doc =
      "Labelled segments [start, end) in samples, sorted and non-overlapping, with scores";
  static std::string summary(const Segmentation& s);
};
template <>
struct DataType<TriMesh> {
  static constexpr std::string_view name = "TriMesh";
  static constexpr std::string_view doc =
      "Oriented manifold triangle mesh: vertices (x, y, z), faces (0-based indices), boundary loops, optional "
      "texture coordinates (u, v) per vertex";
  static constexpr int version = 2;  // 2: uv
  static std::string summary(const TriMesh& m);
};
template <>
struct DataType<CirclePacking> {
  static constexpr std::string_view name = "CirclePacking";
  static constexpr std::string_view doc =
      "Circles (centre, radius; Euclidean plane or Poincaré disc) of a triangulation's vertices, "
      "with boundary flags";
  static std::string summary(const CirclePacking& p);
};

}  // namespace gemflow
