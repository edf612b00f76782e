#include "viewers/structure_viewer.hpp"

#include <algorithm>
#include <atomic>
#include <map>

#include <QApplication>
#include <QHBoxLayout>
#include <QImage>
#include <QLabel>
#include <QPointer>
#include <QSpinBox>
#include <QThreadPool>
#include <QToolButton>
#include <QVBoxLayout>

#include <vtkActor.h>
#include <vtkCamera.h>
#include <vtkCellArray.h>
#include <vtkCellData.h>
#include <vtkGlyph3DMapper.h>
#include <vtkPointData.h>
#include <vtkPoints.h>
#include <vtkPolyData.h>
#include <vtkPolyDataMapper.h>
#include <vtkProperty.h>
#include <vtkRenderer.h>
#include <vtkSmartPointer.h>
#include <vtkSphereSource.h>
#include <vtkTubeFilter.h>
#include <vtkUnsignedCharArray.h>

#include "viewers/structure_geometry.hpp"
#include "viewers/vtk_view.hpp"

namespace gemflow::studio {

namespace {
/// Sticks: every bond as two half-cylinders, each in its atom's colour (opacity for overlays).
/// The tubes are computed here (the worker thread), not at the first render.
vtkSmartPointer<vtkPolyData> bond_geometry(const std::vector<Atom>& atoms, const std::vector<Vec3>& xyz,
                                           const std::vector<std::array<std::size_t, 2>>& bonds, double radius,
                                           const std::array<double, 3>* flat_color) {
  auto pts = vtkSmartPointer<vtkPoints>::New();
  auto lines = vtkSmartPointer<vtkCellArray>::New();
  auto colors = vtkSmartPointer<vtkUnsignedCharArray>::New();
  colors->SetNumberOfComponents(3);
  colors->SetName("colors");
  for (auto [i, j] : bonds) {
    const Vec3 &a = xyz[i], &b = xyz[j];
    const double mid[3] = {(a[0] + b[0]) / 2, (a[1] + b[1]) / 2, (a[2] + b[2]) / 2};
    const vtkIdType pa = pts->InsertNextPoint(a.data());
    const vtkIdType pm = pts->InsertNextPoint(mid);
    const vtkIdType pb = pts->InsertNextPoint(b.data());
    const vtkIdType l1[2] = {pa, pm}, l2[2] = {pm, pb};
    lines->InsertNextCell(2, l1);
    lines->InsertNextCell(2, l2);
    for (std::size_t k : {i, j}) {
      const auto c = flat_color ? *flat_color : element_color(atoms[k].element);
      const unsigned char rgb[3] = {static_cast<unsigned char>(c[0] * 255), static_cast<unsigned char>(c[1] * 255),
                                    static_cast<unsigned char>(c[2] * 255)};
      colors->InsertNextTypedTuple(rgb);
    }
  }
  auto poly = vtkSmartPointer<vtkPolyData>::New();
  poly->SetPoints(pts);
  poly->SetLines(lines);
  poly->GetCellData()->SetScalars(colors);
  auto tubes = vtkSmartPointer<vtkTubeFilter>::New();
  tubes->SetInputData(poly);
  tubes->SetRadius(radius);
  tubes->SetNumberOfSides(10);
  tubes->CappingOn();
  tubes->Update();
  auto out = vtkSmartPointer<vtkPolyData>::New();
  out->ShallowCopy(tubes->GetOutput());  // free of the pipeline that made it
  return out;
}
/// A line through points, each with its colour (RGB in [0, 1]).
struct Polyline {
  std::vector<Vec3> points;
  std::vector<std::array<double, 3>> colors;
};
/// Tubes through polylines (one polydata: one actor for many lines), coloured per point.
vtkSmartPointer<vtkPolyData> tube_geometry(const std::vector<Polyline>& lines, double radius, int sides) {
  auto pts = vtkSmartPointer<vtkPoints>::New();
  auto cells = vtkSmartPointer<vtkCellArray>::New();
  auto colors = vtkSmartPointer<vtkUnsignedCharArray>::New();
  colors->SetNumberOfComponents(3);
  colors->SetName("colors");
  for (const auto& l : lines) {
    cells->InsertNextCell(static_cast<vtkIdType>(l.points.size()));
    for (std::size_t k = 0; k < l.points.size(); ++k) {
      cells->InsertCellPoint(pts->InsertNextPoint(l.points[k].data()));
      const auto& c = l.colors[k];
      const unsigned char rgb[3] = {static_cast<unsigned char>(c[0] * 255), static_cast<unsigned char>(c[1] * 255),
                                    static_cast<unsigned char>(c[2] * 255)};
      colors->InsertNextTypedTuple(rgb);
    }
  }
  auto poly = vtkSmartPointer<vtkPolyData>::New();
  poly->SetPoints(pts);
  poly->SetLines(cells);
  poly->GetPointData()->SetScalars(colors);
  auto tube = vtkSmartPointer<vtkTubeFilter>::New();
  tube->SetInputData(poly);
  tube->SetRadius(radius);
  tube->SetNumberOfSides(sides);
  tube->CappingOn();
  tube->Update();
  auto out = vtkSmartPointer<vtkPolyData>::New();
  out->ShallowCopy(tube->GetOutput());
  return out;
}
/// The Cα trace as a polyline, coloured by `color(atom index, position along the trace in [0, 1])`.
template <class Color>
Polyline trace_line(const std::vector<Vec3>& xyz, const std::vector<std::size_t>& trace, Color color) {
  Polyline l;
  for (std::size_t k = 0; k < trace.size(); ++k) {
    l.points.push_back(xyz[trace[k]]);
    l.colors.push_back(color(trace[k], static_cast<double>(k) / static_cast<double>(trace.size() - 1)));
  }
  return l;
}

/// Where a tube set's colours live: per cell (sticks, half by half) or per point (traces).
enum class Scalars { PerCell, PerPoint };
/// Adds an actor for prebuilt tubes (bond_geometry, tube_geometry), coloured by their scalars.
void add_tubes(vtkRenderer* ren, const vtkSmartPointer<vtkPolyData>& tubes, Scalars scalars, double opacity = 1.0,
               bool shiny = false) {
  auto mapper = vtkSmartPointer<vtkPolyDataMapper>::New();
  mapper->SetInputData(tubes);
  if (scalars == Scalars::PerCell) mapper->SetScalarModeToUseCellData();
  else mapper->SetScalarModeToUsePointData();
  auto actor = vtkSmartPointer<vtkActor>::New();
  actor->SetMapper(mapper);
  if (opacity < 1.0) actor->GetProperty()->SetOpacity(opacity);
  if (shiny) {
    actor->GetProperty()->SetSpecular(0.4);
    actor->GetProperty()->SetSpecularPower(30);
  }
  ren->AddActor(actor);
}

/// Looks down the smallest principal axis with the largest one across the view, at the
/// distance where the molecule's extent (plus atom radii) just fits the view's aspect ratio.
void frame_axes(vtkRenderer* ren, const PrincipalAxes& a, double aspect) {
  vtkCamera* cam = ren->GetActiveCamera();
  const double margin = 2.0;  // Å: sphere radii and a little air
  const double half_w = a.half_extent[0] + margin, half_h = a.half_extent[1] + margin;
  const double half = std::max(half_h, half_w / std::max(aspect, 0.1)) * 1.04;
  const double angle = cam->GetViewAngle() * 3.14159265358979323846 / 180.0;
  const double d = half / std::tan(angle / 2) + a.half_extent[2];
  const Vec3& c = a.centre;
  const Vec3& z = a.axis[2];
  cam->SetFocalPoint(c[0], c[1], c[2]);
  cam->SetPosition(c[0] + z[0] * d, c[1] + z[1] * d, c[2] + z[2] * d);
  cam->SetViewUp(a.axis[1][0], a.axis[1][1], a.axis[1][2]);
  ren->ResetCameraClippingRange();
}
}  // namespace

StructureViewer::StructureViewer(QWidget* parent)
    : QWidget(parent), view_(new VtkView), model_box_(new QSpinBox), info_(new QLabel) {
  auto* lay = new QVBoxLayout(this);
  lay->setContentsMargins(0, 0, 0, 0);
  auto* bar = new QHBoxLayout;
  bar->addWidget(new QLabel(tr("Model")));
  bar->addWidget(model_box_);
  bar->addWidget(info_, 1);
  auto* reset = new QToolButton;
  reset->setText(tr("Reset view"));
  reset->setObjectName(QStringLiteral("reset_view"));
  connect(reset, &QToolButton::clicked, this, [this] { view_->reset_camera(); });
  bar->addWidget(reset);
  info_->setTextInteractionFlags(Qt::TextSelectableByMouse);
  lay->addLayout(bar);
  lay->addWidget(view_, 1);
  model_box_->setMinimum(1);
  model_box_->setToolTip(tr("Model shown; \"all\": the models superimposed, coloured by backbone RMSF"));
  connect(model_box_, &QSpinBox::valueChanged, this, [this](int v) { set_model(v - 1); });
}

void StructureViewer::set_structure(std::shared_ptr<const Structure> s, const QString& label) {
  s_ = std::move(s);
  label_ = label;
  // An ensemble opens on "all" (value 0 of the box): the models superimposed.
  const int n = s_ ? static_cast<int>(s_->model_count()) : 0;
  model_ = n > 1 ? -1 : 0;
  {
    QSignalBlocker b(model_box_);
    model_box_->setSpecialValueText(n > 1 ? tr("all") : QString());
    model_box_->setMinimum(n > 1 ? 0 : 1);
    model_box_->setMaximum(std::max(1, n));
    model_box_->setValue(model_ + 1);
  }
  reset_camera_ = true;  // once the new geometry is there
  rebuild();
}

void StructureViewer::set_reference(std::shared_ptr<const Structure> ref, const QString& label) {
  ref_ = std::move(ref);
  ref_label_ = label;
  rebuild();
}

void StructureViewer::set_model(int index) {
  model_ = std::max(index, -1);
  {
    QSignalBlocker b(model_box_);
    model_box_->setValue(model_ + 1);  // "all" where the box has it, else model 1
  }
  rebuild();
}

/// Everything the viewer draws for one (structure, model, reference), computed off the GUI
/// thread: VTK data only (no actors, mappers or renderers, which belong to the GUI thread).
struct StructureViewer::Geometry {
  struct Element {
    vtkSmartPointer<vtkPolyData> points;
    vtkSmartPointer<vtkPolyData> sphere;
    std::array<double, 3> color{};
  };
  std::vector<Element> elements;
  vtkSmartPointer<vtkPolyData> bonds, overlay, overlay_trace;
  std::vector<vtkSmartPointer<vtkPolyData>> traces;
  PrincipalAxes axes;
  std::size_t atoms = 0, bond_count = 0, trace_count = 0, models = 1;
  bool ensemble = false;
  std::pair<double, double> rmsf_range{0.0, 0.0};
  double rmsd = -1;
  QString text;
};

namespace {
/// The ensemble view: every model's Cα tubes superimposed, coloured by RMSF; the reference's
/// Cα tubes (flat gold) fitted onto superposed model 1. False when there is no backbone to
/// superimpose (the caller shows model 1).
bool build_ensemble(StructureViewer::Geometry& g, const Structure& s, const std::shared_ptr<const Structure>& ref,
                    const QString& label, const QString& ref_label, const std::atomic<bool>& cancelled) {
  const EnsembleSuperposition e = superpose_ensemble(s);
  if (e.empty()) return false;
  // The chains and their breaks (missing residues) are model 1's for every model: the models
  // share one sequence, and a stretched Cα–Cα in one model is that model's geometry to show.
  const auto traces = backbone_traces(s.atoms, s.models.front());
  std::vector<Polyline> lines;
  std::vector<Vec3> ca;  // every traced Cα of every model: the framing
  for (const auto& xyz : e.models) {
    if (cancelled) return true;
    for (const auto& trace : traces) {
      lines.push_back(trace_line(xyz, trace, [&e](std::size_t i, double) { return rmsf_color(e.atom_rmsf[i]); }));
      ca.insert(ca.end(), lines.back().points.begin(), lines.back().points.end());
    }
  }
  if (!lines.empty()) g.traces.push_back(tube_geometry(lines, 0.25, 8));
  g.trace_count = lines.size();
  g.models = e.models.size();
  g.ensemble = true;
  const auto [lo, hi] = std::minmax_element(e.residue_rmsf.begin(), e.residue_rmsf.end());
  g.rmsf_range = {*lo, *hi};
  g.axes = principal_axes(ca.empty() ? e.models.front() : ca);
  g.text = QObject::tr(
               "%1: %2 models superimposed on %3 residues (backbone RMSD to the mean %4 Å); RMSF %5–%6 Å, "
               "blue 0 → white 1 → red ≥ 2 Å")
               .arg(label)
               .arg(e.models.size())
               .arg(e.core.size())
               .arg(e.rmsd_to_mean, 0, 'f', 2)
               .arg(*lo, 0, 'f', 1)
               .arg(*hi, 0, 'f', 1);
  if (ref && !ref->models.empty() && !cancelled) {
    const auto& rxyz = ref->models.front();
    if (auto sup = kabsch(rxyz, e.models.front(), match_atoms(*ref, s))) {
      std::vector<Vec3> moved(rxyz.size());
      for (std::size_t i = 0; i < rxyz.size(); ++i) moved[i] = sup->apply(rxyz[i]);
      std::vector<Polyline> rl;
      for (const auto& trace : backbone_traces(ref->atoms, moved))
        rl.push_back(trace_line(moved, trace, [](std::size_t, double) {
          return std::array<double, 3>{0.85, 0.75, 0.25};
        }));
      if (!rl.empty()) g.overlay_trace = tube_geometry(rl, 0.35, 10);
      g.rmsd = sup->rmsd;
      g.text += QObject::tr("; overlay %1 (Cα): RMSD %2 Å to model 1 over %3 atoms")
                    .arg(ref_label)
                    .arg(sup->rmsd, 0, 'f', 3)
                    .arg(sup->pairs);
    } else {
      g.text += QObject::tr("; overlay %1: fewer than 3 matching atoms").arg(ref_label);
    }
  }
  return true;
}

/// Builds the geometry; nullptr when `cancelled` was set meanwhile (a newer request exists).
std::shared_ptr<StructureViewer::Geometry> build_geometry(const std::shared_ptr<const Structure>& s, int model,
                                                          const std::shared_ptr<const Structure>& ref,
                                                          const QString& label, const QString& ref_label,
                                                          const std::atomic<bool>& cancelled) {
  auto g = std::make_shared<StructureViewer::Geometry>();
  if (model < 0 && s->models.size() > 1) {
    if (build_ensemble(*g, *s, ref, label, ref_label, cancelled)) return cancelled ? nullptr : g;
    model = 0;  // no backbone to superimpose: model 1, said in the label
    g->text = QObject::tr(" (no backbone atoms to superimpose the models on)");
  }
  const auto& xyz =
      s->models[static_cast<std::size_t>(std::clamp<int>(model, 0, static_cast<int>(s->models.size()) - 1))];
  const auto& atoms = s->atoms;
  // One glyph set per element: spheres scaled by a fraction of the covalent radius.
  std::map<std::string, std::vector<std::size_t>> by_element;
  for (std::size_t i = 0; i < atoms.size() && i < xyz.size(); ++i) by_element[atoms[i].element].push_back(i);
  for (const auto& [el, idx] : by_element) {
    auto pts = vtkSmartPointer<vtkPoints>::New();
    pts->SetNumberOfPoints(static_cast<vtkIdType>(idx.size()));
    for (std::size_t k = 0; k < idx.size(); ++k) pts->SetPoint(static_cast<vtkIdType>(k), xyz[idx[k]].data());
    StructureViewer::Geometry::Element e;
    e.points = vtkSmartPointer<vtkPolyData>::New();
    e.points->SetPoints(pts);
    auto sphere = vtkSmartPointer<vtkSphereSource>::New();
    sphere->SetRadius(0.35 * covalent_radius(el) + 0.1);
    sphere->SetThetaResolution(16);
    sphere->SetPhiResolution(12);
    sphere->Update();
    e.sphere = vtkSmartPointer<vtkPolyData>::New();
    e.sphere->ShallowCopy(sphere->GetOutput());
    e.color = element_color(el);
    g->elements.push_back(std::move(e));
    g->atoms += idx.size();
  }
  if (cancelled) return nullptr;
  const auto bonds = s->bonds.empty() ? perceive_bonds(atoms, xyz) : s->bonds;
  g->bond_count = bonds.size();
  if (cancelled) return nullptr;
  if (!bonds.empty()) g->bonds = bond_geometry(atoms, xyz, bonds, 0.12, nullptr);
  // Backbone: a tube through the Cα atoms of each chain, rainbow from N- to C-terminus, so
  // that the fold reads at a glance among all the atoms.
  for (const auto& trace : backbone_traces(atoms, xyz)) {
    if (cancelled) return nullptr;
    g->traces.push_back(
        tube_geometry({trace_line(xyz, trace, [](std::size_t, double t) { return rainbow(t); })}, 0.55, 14));
  }
  g->trace_count = g->traces.size();
  g->axes = principal_axes(xyz);
  g->text = QObject::tr("%1: %2 atoms, %3 bonds%4, model %5/%6")
                .arg(label)
                .arg(g->atoms)
                .arg(g->bond_count)
                .arg(s->bonds.empty() ? QObject::tr(" (perceived)") : QString())
                .arg(std::max(model, 0) + 1)
                .arg(s->models.size()) +
            g->text;
  // Reference overlay, superposed onto the shown model.
  if (ref && !ref->models.empty()) {
    if (cancelled) return nullptr;
    const auto pairs = match_atoms(*ref, *s);
    const auto& rxyz = ref->models.front();
    if (auto sup = kabsch(rxyz, xyz, pairs)) {
      std::vector<Vec3> moved(rxyz.size());
      for (std::size_t i = 0; i < rxyz.size(); ++i) moved[i] = sup->apply(rxyz[i]);
      const auto rb = ref->bonds.empty() ? perceive_bonds(ref->atoms, moved) : ref->bonds;
      const std::array<double, 3> grey{0.85, 0.75, 0.25};
      g->overlay = bond_geometry(ref->atoms, moved, rb, 0.06, &grey);
      g->rmsd = sup->rmsd;
      g->text +=
          QObject::tr("; overlay %1: RMSD %2 Å over %3 atoms").arg(ref_label).arg(sup->rmsd, 0, 'f', 3).arg(sup->pairs);
    } else {
      g->text += QObject::tr("; overlay %1: fewer than 3 matching atoms").arg(ref_label);
    }
  }
  return cancelled ? nullptr : g;
}
}  // namespace

void StructureViewer::rebuild() {
  // A newer request makes the running one stale: it stops early and its result is ignored.
  if (cancel_) *cancel_ = true;
  cancel_.reset();
  const int generation = ++generation_;
  atoms_shown_ = bonds_shown_ = traces_shown_ = models_shown_ = 0;
  ensemble_shown_ = false;
  rmsf_range_ = {0.0, 0.0};
  rmsd_ = -1;
  if (!s_ || s_->models.empty()) {
    building_ = false;
    view_->post([](vtkRenderer* ren) { ren->RemoveAllViewProps(); });
    info_->setText(s_ ? tr("%1: no coordinates").arg(label_) : QString());
    Q_EMIT geometry_ready();
    return;
  }
  building_ = true;
  info_->setText(tr("%1: building the view…").arg(label_));
  auto cancel = std::make_shared<std::atomic<bool>>(false);
  cancel_ = cancel;
  QPointer<StructureViewer> self(this);
  QThreadPool::globalInstance()->start(
      [self, generation, cancel, s = s_, model = model_, ref = ref_, label = label_, ref_label = ref_label_] {
        auto g = build_geometry(s, model, ref, label, ref_label, *cancel);
        if (!g) return;
        // Delivered on the GUI thread (qApp lives there); the viewer may be gone by then.
        QMetaObject::invokeMethod(
            qApp,
            [self, generation, g] {
              if (self) self->apply_geometry(generation, g);
            },
            Qt::QueuedConnection);
      });
}

void StructureViewer::apply_geometry(int generation, const std::shared_ptr<Geometry>& g) {
  if (generation != generation_) return;  // stale: a newer request is on its way
  building_ = false;
  cancel_.reset();
  // Actors and mappers are made and used on the view's render thread.
  view_->post([g](vtkRenderer* ren) {
    ren->RemoveAllViewProps();
    for (const auto& e : g->elements) {
      auto mapper = vtkSmartPointer<vtkGlyph3DMapper>::New();
      mapper->SetInputData(e.points);
      mapper->SetSourceData(e.sphere);
      mapper->ScalingOff();
      auto actor = vtkSmartPointer<vtkActor>::New();
      actor->SetMapper(mapper);
      actor->GetProperty()->SetColor(e.color[0], e.color[1], e.color[2]);
      actor->GetProperty()->SetSpecular(0.3);
      ren->AddActor(actor);
    }
    if (g->bonds) add_tubes(ren, g->bonds, Scalars::PerCell);
    for (const auto& t : g->traces) add_tubes(ren, t, Scalars::PerPoint, 1.0, true);
    if (g->overlay) add_tubes(ren, g->overlay, Scalars::PerCell, 0.6);
    if (g->overlay_trace) add_tubes(ren, g->overlay_trace, Scalars::PerPoint, 0.7);
  });
  atoms_shown_ = g->atoms;
  bonds_shown_ = g->bond_count;
  traces_shown_ = g->trace_count;
  models_shown_ = g->models;
  ensemble_shown_ = g->ensemble;
  rmsf_range_ = g->rmsf_range;
  rmsd_ = g->rmsd;
  // Frame the molecule along its principal axes: the longest across the (wide) view.
  const PrincipalAxes axes = g->axes;
  view_->set_camera_fit([axes](vtkRenderer* r, double aspect) { frame_axes(r, axes, aspect); });
  if (reset_camera_) view_->reset_camera();
  reset_camera_ = false;
  info_->setText(g->text);
  Q_EMIT geometry_ready();
}

QImage StructureViewer::grab_frame() { return view_->grab_frame(); }

}  // namespace gemflow::studio
