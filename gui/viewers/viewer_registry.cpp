#include "viewers/viewer_registry.hpp"

#include <algorithm>

#include <gemflow/types.hpp>

#include "viewers/data_viewers.hpp"
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
  r.add<Structure, StructureViewer>(
      "structure", [](StructureViewer& w, std::shared_ptr<const Structure> s, const QString& label) {
        w.set_structure(std::move(s), label);
      });
  r.add<Matrix<double>, HeatmapViewer>("heatmap", show_matrix<double>);
  r.add<Matrix<float>, HeatmapViewer>("heatmap", show_matrix<float>);
  r.add<DistanceBounds, HeatmapViewer>(
      "heatmap", [](HeatmapViewer& w, std::shared_ptr<const DistanceBounds> b, const QString& label) {
        w.set_bounds(std::move(b), label);
      });
  r.add<Table, TableViewer>("table", [](TableViewer& w, const std::shared_ptr<const Table>& t,
                                        const QString& label) { w.set_table(*t, label); });
  return r;
}
}  // namespace

const ViewerRegistry& builtin_viewers() {
  static const ViewerRegistry registry = make_builtin();
  return registry;
}

}  // namespace gemflow::studio
