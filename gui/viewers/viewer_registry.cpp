#include "viewers/viewer_registry.hpp"

#include <algorithm>

#include <gemflow/types.hpp>

#include "viewers/data_viewers.hpp"
#include "viewers/image_viewer.hpp"
#include "viewers/mesh_viewers.hpp"
#include "viewers/packing_geometry.hpp"
#include "viewers/series_viewer.hpp"
#include "viewers/structure_viewer.hpp"

namespace gemflow::studio {

void ViewerRegistry::add(std::string_view type_name, std::string id, Make make, Show show) {
  if (type_name.empty() || id.empty() || !make || !show)
    throw Error("viewer registration needs a type name, an id, a make and a show function (type '" +
                std::string(type_name) + "', viewer '" + id + "')");
  for (const Viewer& v : viewers_)
    if (v.type == type_name && v.id == id)
      throw Error("viewer '" + id + "' is registered twice for type " + std::string(type_name));
  viewers_.push_back(Viewer{std::string(type_name), std::move(id), std::move(make), std::move(show)});
}

void ViewerRegistry::add_companion(std::string_view type_name, std::string id, Near near, Show show, bool own_type) {
  if (type_name.empty() || !show)
    throw Error("companion registration of viewer '" + id + "' needs a type name and a show function");
  if (std::none_of(viewers_.begin(), viewers_.end(), [&](const Viewer& v) { return v.id == id; }))
    throw Error("companion " + std::string(type_name) + " of viewer '" + id + "': no such viewer is registered");
  for (const Companion& c : companions_)
    if (c.viewer == id && c.type == type_name)
      throw Error("viewer '" + id + "' has a companion " + std::string(type_name) + " already");
  companions_.push_back(Companion{std::move(id), std::string(type_name), near, std::move(show), own_type});
}

std::vector<const ViewerRegistry::Companion*> ViewerRegistry::companions_of(std::string_view id) const {
  std::vector<const Companion*> out;
  for (const Companion& c : companions_)
    if (c.viewer == id) out.push_back(&c);
  return out;
}

std::vector<const ViewerRegistry::Viewer*> ViewerRegistry::viewers_for(std::string_view type_name) const {
  std::vector<const Viewer*> out;
  for (const Viewer& v : viewers_)
    if (v.type == type_name) out.push_back(&v);
  return out;
}

std::vector<const ViewerRegistry::Viewer*> ViewerRegistry::distinct_viewers() const {
  std::vector<const Viewer*> out;
  for (const Viewer& v : viewers_)
    if (std::none_of(out.begin(), out.end(), [&](const Viewer* o) { return o->id == v.id; })) out.push_back(&v);
  return out;
}

namespace {
template <class T>
void show_matrix(HeatmapViewer& w, const std::shared_ptr<const Matrix<T>>& m, const QString& label) {
  w.set_matrix(m->rows(), m->cols(), std::vector<double>(m->data(), m->data() + m->size()), label);
}

ViewerRegistry make_builtin() {
  ViewerRegistry r;
  r.add<Structure, StructureViewer>("structure", [](StructureViewer& w, std::shared_ptr<const Structure> s,
                                                    const QString& label) { w.set_structure(std::move(s), label); });
  r.add<Matrix<double>, HeatmapViewer>("heatmap", show_matrix<double>);
  r.add<Matrix<float>, HeatmapViewer>("heatmap", show_matrix<float>);
  r.add<DistanceBounds, HeatmapViewer>("heatmap", [](HeatmapViewer& w, std::shared_ptr<const DistanceBounds> b,
                                                     const QString& label) { w.set_bounds(std::move(b), label); });
  r.add<Table, TableViewer>("table", [](TableViewer& w, const std::shared_ptr<const Table>& t, const QString& label) {
    w.set_table(*t, label);
  });
  r.add<Image, ImageViewer>("image", [](ImageViewer& w, std::shared_ptr<const Image> image, const QString& label) {
    w.set_image(std::move(image), label);
  });
  // Signal, Segmentation and Scores share one plot: the shown value draws its own layer, and
  // the others join it (the signal from upstream; segments and posteriors from the selection).
  r.add<Signal, SeriesViewer>("series", [](SeriesViewer& w, std::shared_ptr<const Signal> s, const QString& label) {
    w.show_signal(std::move(s), label);
  });
  r.add<Segmentation, SeriesViewer>("series", [](SeriesViewer& w, std::shared_ptr<const Segmentation> s,
                                                 const QString& label) { w.show_segmentation(std::move(s), label); });
  r.add<Scores, SeriesViewer>("series", [](SeriesViewer& w, std::shared_ptr<const Scores> s, const QString& label) {
    w.show_scores(std::move(s), label);
  });
  using Near = ViewerRegistry::Near;
  r.add_companion<Signal, SeriesViewer>("series", Near::Upstream,
                                        [](SeriesViewer& w, std::shared_ptr<const Signal> s, const QString& label) {
                                          w.add_signal(std::move(s), label);
                                        });
  r.add_companion<Segmentation, SeriesViewer>(
      "series", Near::Selection, [](SeriesViewer& w, std::shared_ptr<const Segmentation> s, const QString& label) {
        w.add_segmentation(std::move(s), label);
      });
  // Scores join Scores too: the other posterior of a marginals node is a second strip.
  r.add_companion<Scores, SeriesViewer>(
      "series", Near::Selection,
      [](SeriesViewer& w, std::shared_ptr<const Scores> s, const QString& label) { w.add_scores(std::move(s), label); },
      true);
  r.add<CirclePacking, PackingViewer>("packing", [](PackingViewer& w, std::shared_ptr<const CirclePacking> p,
                                                    const QString& label) { w.set_packing(std::move(p), label); });
  r.add<TriMesh, TriMeshViewer>("mesh", [](TriMeshViewer& w, const std::shared_ptr<const TriMesh>& m,
                                           const QString& label) { w.set_mesh(m, mesh_uvs(*m), label); });
  // A flattening (a planar mesh with the same faces, as circlepack.flatten gives) and the 3D
  // mesh upstream of it are shown side by side, whichever of the two is selected.
  r.add_companion<TriMesh, TriMeshViewer>(
      "mesh", Near::Upstream,
      [](TriMeshViewer& w, const std::shared_ptr<const TriMesh>& m, const QString& label) { w.pair_mesh(m, label); },
      true);
  return r;
}
}  // namespace

const ViewerRegistry& builtin_viewers() {
  static const ViewerRegistry registry = make_builtin();
  return registry;
}

}  // namespace gemflow::studio
