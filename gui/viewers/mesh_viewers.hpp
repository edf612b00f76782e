#pragma once
// VTK viewers of meshes and packings.
//
// CirclePacking: every circle as a filled disk coloured by radius, angle error or tangency error
// (log10, colour bar), its outline, and the triangulation's edges between centres; the unit
// circle for a hyperbolic packing. Circles are instances of one disk glyph (vtkGlyph3DMapper
// scaled by radius), so 10⁵ circles are 10⁵ instances, not 10⁵ polylines of points.
//
// The packing's geometry (colour values, edges, VTK arrays) is built on a worker thread of the
// global QThreadPool, as the structure viewer's; a newer change cancels an older build.
//
// TriMesh: the surface in 3D and, when the mesh has UVs, its flattening beside it; both textured
// with one checkerboard through the UVs (squares stay squares where the map is conformal).
#include <array>
#include <atomic>
#include <memory>
#include <utility>
#include <vector>

#include <QWidget>

#include <gemflow/types/circle_packing.hpp>
#include <gemflow/types/trimesh.hpp>

class QCheckBox;
class QComboBox;
class QLabel;
class QSplitter;

namespace gemflow::studio {

class VtkView;

/// What a view's VTK scene holds (read on its render thread).
struct SceneStats {
  std::size_t actors = 0;
  std::size_t disk_instances = 0;       ///< circles drawn as disk glyphs
  std::array<double, 6> disk_bounds{};  ///< the disks' bounds (x0, x1, y0, y1, z0, z1)
  std::size_t edge_lines = 0;           ///< triangulation edges drawn as lines
  std::size_t textured_actors = 0;
};

class PackingViewer : public QWidget {
  Q_OBJECT
 public:
  enum class Colour { Radius, AngleError, TangencyError };
  explicit PackingViewer(QWidget* parent = nullptr);
  void set_packing(std::shared_ptr<const CirclePacking> p, const QString& label);
  void set_colour(Colour c);
  [[nodiscard]] Colour colour() const { return colour_; }
  /// Circle outlines and triangulation edges (on by default up to 20 000 circles: beyond, at a
  /// zoom that shows the whole packing they cover the colours).
  void set_edges(bool on);
  [[nodiscard]] bool edges() const;
  /// log10 range of the colour scale (finite values only).
  [[nodiscard]] std::pair<double, double> colour_range() const { return range_; }
  [[nodiscard]] VtkView* view() const { return view_; }
  [[nodiscard]] SceneStats scene_stats() const;
  [[nodiscard]] QString info() const;
  /// True while the geometry of the latest change is being built (on a worker thread: a
  /// 10⁵-circle packing never blocks the GUI); geometry_ready() follows.
  [[nodiscard]] bool building() const { return building_; }

  struct Geometry;

 Q_SIGNALS:
  void geometry_ready();

 private:
  void rebuild();
  void apply(int generation, const std::shared_ptr<Geometry>& g);
  VtkView* view_;
  QComboBox* colour_box_;
  QCheckBox* edges_box_;
  QLabel* info_;
  std::shared_ptr<const CirclePacking> packing_;
  QString label_;
  Colour colour_ = Colour::Radius;
  std::pair<double, double> range_{0, 0};
  int generation_ = 0;
  bool building_ = false;
  bool reset_camera_ = false;
  std::shared_ptr<std::atomic<bool>> cancel_;
};

class TriMeshViewer : public QWidget {
  Q_OBJECT
 public:
  explicit TriMeshViewer(QWidget* parent = nullptr);
  /// `uvs`: one (u, v) per vertex, or nullptr (only the 3D view then).
  void set_mesh(const std::shared_ptr<const TriMesh>& m, const std::vector<std::array<double, 2>>* uvs,
                const QString& label);
  /// A companion mesh: when it and the shown one have the same faces and exactly one of them is
  /// planar (z = 0, a flattening such as circlepack.flatten's), the planar one's (x, y) become the
  /// UVs of the other, shown in 3D beside it. Otherwise nothing changes.
  void pair_mesh(const std::shared_ptr<const TriMesh>& other, const QString& label);
  [[nodiscard]] VtkView* view_3d() const { return view3d_; }
  [[nodiscard]] VtkView* view_uv() const { return viewuv_; }
  [[nodiscard]] bool showing_flattening() const { return has_uvs_; }
  [[nodiscard]] QString info() const;

 private:
  void draw(const std::shared_ptr<const TriMesh>& m, const std::vector<std::array<double, 2>>* uvs, bool reset_cameras);
  VtkView* view3d_;
  VtkView* viewuv_;
  QSplitter* split_;
  QLabel* info_;
  bool has_uvs_ = false;
  QString label_, pair_label_;
  std::shared_ptr<const TriMesh> mesh_;  // the shown value
};

/// Circles up to which PackingViewer draws outlines and edges by default.
inline constexpr std::size_t kPackingEdgesUpTo = 20000;

/// Scene statistics of any VtkView (the disk glyphs, edge lines and textures it draws).
[[nodiscard]] SceneStats scene_stats(VtkView& view);

}  // namespace gemflow::studio
