#include "viewers/mesh_viewers.hpp"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <limits>
#include <numbers>
#include <set>

#include <QApplication>
#include <QCheckBox>
#include <QComboBox>
#include <QHBoxLayout>
#include <QLabel>
#include <QPointer>
#include <QSplitter>
#include <QThreadPool>
#include <QToolButton>
#include <QVBoxLayout>

#include <vtkActor.h>
#include <vtkActorCollection.h>
#include <vtkCamera.h>
#include <vtkCellArray.h>
#include <vtkDoubleArray.h>
#include <vtkFloatArray.h>
#include <vtkGlyph3DMapper.h>
#include <vtkImageData.h>
#include <vtkLookupTable.h>
#include <vtkPointData.h>
#include <vtkPoints.h>
#include <vtkPolyData.h>
#include <vtkPolyDataMapper.h>
#include <vtkProperty.h>
#include <vtkRegularPolygonSource.h>
#include <vtkRenderer.h>
#include <vtkScalarBarActor.h>
#include <vtkSmartPointer.h>
#include <vtkTextProperty.h>
#include <vtkTexture.h>
#include <vtkUnsignedCharArray.h>

#include "viewers/data_viewers.hpp"
#include "viewers/packing_geometry.hpp"
#include "viewers/vtk_view.hpp"

namespace gemflow::studio {

namespace {
// Sides of the circle glyph: multiples of 4 (a vertex on each axis: the glyph's bounds are the
// circle's). Large packings get fewer: at a zoom that shows them whole a circle is a few pixels,
// and software OpenGL spends its time on the triangles.
constexpr int kCircleSides = 48, kCircleSidesLarge = 16;
constexpr std::size_t kLargePacking = 20000;
constexpr std::size_t kEdgesUpTo = 20000;  // faces: wireframe over the surface up to this many

/// Unit circle glyph (filled polygon or outline), centred at the origin in the z = 0 plane.
vtkSmartPointer<vtkPolyData> unit_circle(bool filled, int sides = kCircleSides) {
  auto src = vtkSmartPointer<vtkRegularPolygonSource>::New();
  src->SetNumberOfSides(sides);
  src->SetRadius(1.0);
  src->SetCenter(0, 0, 0);
  src->SetNormal(0, 0, 1);
  src->SetGeneratePolygon(filled);
  src->SetGeneratePolyline(!filled);
  src->Update();
  auto out = vtkSmartPointer<vtkPolyData>::New();
  out->ShallowCopy(src->GetOutput());
  return out;
}

vtkSmartPointer<vtkLookupTable> viridis(double lo, double hi) {
  auto lut = vtkSmartPointer<vtkLookupTable>::New();
  lut->SetNumberOfTableValues(256);
  for (int i = 0; i < 256; ++i) {
    const QColor c = colormap(i / 255.0);
    lut->SetTableValue(i, c.redF(), c.greenF(), c.blueF(), 1.0);
  }
  lut->SetRange(lo, hi);
  lut->SetNanColor(0.55, 0.55, 0.55, 1.0);
  return lut;
}

/// Flat content: look down −z with a parallel projection at the bounds (x0, x1, y0, y1), with
/// a little margin, for the view's aspect ratio; `right` is the fraction of the view's width
/// kept free on the right (for a colour bar).
void frame_plane(vtkRenderer* ren, const std::array<double, 4>& b, double aspect, double right = 0.0) {
  vtkCamera* cam = ren->GetActiveCamera();
  const double cx = (b[0] + b[1]) / 2, cy = (b[2] + b[3]) / 2;
  const double half_w = std::max((b[1] - b[0]) / 2, 1e-12), half_h = std::max((b[3] - b[2]) / 2, 1e-12);
  const double a = std::max(aspect, 0.1);
  const double scale = std::max(half_h, half_w / (a * (1 - right))) * 1.06;  // half the view's height
  const double fx = cx + right * scale * a;  // content centred in the left (1 − right) of the view
  cam->ParallelProjectionOn();
  cam->SetFocalPoint(fx, cy, 0);
  cam->SetPosition(fx, cy, 10 * std::max(half_w, half_h));
  cam->SetViewUp(0, 1, 0);
  cam->SetParallelScale(scale);
  ren->ResetCameraClippingRange();
}

vtkSmartPointer<vtkTexture> checkerboard() {
  auto img = vtkSmartPointer<vtkImageData>::New();
  img->SetDimensions(2, 2, 1);
  img->AllocateScalars(VTK_UNSIGNED_CHAR, 3);
  const unsigned char light[3] = {235, 235, 225}, dark[3] = {60, 90, 160};
  for (int y = 0; y < 2; ++y)
    for (int x = 0; x < 2; ++x) {
      auto* p = static_cast<unsigned char*>(img->GetScalarPointer(x, y, 0));
      const unsigned char* c = (x + y) % 2 ? dark : light;
      std::copy(c, c + 3, p);
    }
  auto tex = vtkSmartPointer<vtkTexture>::New();
  tex->SetInputData(img);
  tex->InterpolateOff();
  tex->RepeatOn();
  tex->EdgeClampOff();
  return tex;
}

/// Texture coordinates for a checkerboard of `squares` squares across the UVs' longest side
/// (the 2 × 2 texture repeats every 2 squares).
vtkSmartPointer<vtkFloatArray> checker_tcoords(const std::vector<std::array<double, 2>>& uv, double squares) {
  double lo[2] = {std::numeric_limits<double>::infinity(), std::numeric_limits<double>::infinity()};
  double hi[2] = {-lo[0], -lo[1]};
  for (const auto& p : uv)
    for (int k = 0; k < 2; ++k) {
      lo[k] = std::min(lo[k], p[k]);
      hi[k] = std::max(hi[k], p[k]);
    }
  const double ext = std::max({hi[0] - lo[0], hi[1] - lo[1], 1e-300});
  auto tc = vtkSmartPointer<vtkFloatArray>::New();
  tc->SetNumberOfComponents(2);
  tc->SetNumberOfTuples(static_cast<vtkIdType>(uv.size()));
  tc->SetName("uv");
  for (std::size_t i = 0; i < uv.size(); ++i) {
    const float t[2] = {static_cast<float>((uv[i][0] - lo[0]) / ext * squares / 2),
                        static_cast<float>((uv[i][1] - lo[1]) / ext * squares / 2)};
    tc->SetTypedTuple(static_cast<vtkIdType>(i), t);
  }
  return tc;
}

vtkSmartPointer<vtkCellArray> triangles(const std::vector<std::array<TriMesh::Index, 3>>& faces) {
  auto cells = vtkSmartPointer<vtkCellArray>::New();
  cells->AllocateExact(static_cast<vtkIdType>(faces.size()), 3 * static_cast<vtkIdType>(faces.size()));
  for (const auto& f : faces) {
    const vtkIdType ids[3] = {f[0], f[1], f[2]};
    cells->InsertNextCell(3, ids);
  }
  return cells;
}
}  // namespace

SceneStats scene_stats(VtkView& view) {
  SceneStats s;
  view.query([&s](vtkRenderer* ren) {
    vtkActorCollection* actors = ren->GetActors();
    actors->InitTraversal();
    while (vtkActor* a = actors->GetNextActor()) {
      ++s.actors;
      if (a->GetTexture()) ++s.textured_actors;
      if (auto* g = vtkGlyph3DMapper::SafeDownCast(a->GetMapper()); g && g->GetScalarVisibility()) {
        s.disk_instances += static_cast<std::size_t>(g->GetInput()->GetNumberOfPoints());
        a->GetBounds(s.disk_bounds.data());
      } else if (auto* m = vtkPolyDataMapper::SafeDownCast(a->GetMapper()); m && m->GetInput()) {
        s.edge_lines += static_cast<std::size_t>(m->GetInput()->GetNumberOfLines());
      }
    }
  });
  return s;
}

// ---- PackingViewer ---------------------------------------------------------------------

PackingViewer::PackingViewer(QWidget* parent)
    : QWidget(parent),
      view_(new VtkView),
      colour_box_(new QComboBox),
      edges_box_(new QCheckBox(tr("Edges"))),
      info_(new QLabel) {
  auto* lay = new QVBoxLayout(this);
  lay->setContentsMargins(0, 0, 0, 0);
  auto* bar = new QHBoxLayout;
  bar->addWidget(new QLabel(tr("Colour")));
  colour_box_->addItem(tr("radius"), static_cast<int>(Colour::Radius));
  colour_box_->addItem(tr("angle error"), static_cast<int>(Colour::AngleError));
  colour_box_->addItem(tr("tangency error"), static_cast<int>(Colour::TangencyError));
  colour_box_->setToolTip(
      tr("log10 of the radius, of |angle sum − 2π| at interior circles (boundary circles grey), "
         "or of each circle's largest relative tangency error"));
  bar->addWidget(colour_box_);
  edges_box_->setToolTip(tr("Circle outlines and the triangulation's edges"));
  edges_box_->setChecked(true);
  bar->addWidget(edges_box_);
  bar->addWidget(info_, 1);
  info_->setTextInteractionFlags(Qt::TextSelectableByMouse);
  auto* reset = new QToolButton;
  reset->setText(tr("Reset view"));
  connect(reset, &QToolButton::clicked, this, [this] { view_->reset_camera(); });
  bar->addWidget(reset);
  lay->addLayout(bar);
  lay->addWidget(view_, 1);
  view_->set_interaction_2d();
  connect(colour_box_, &QComboBox::currentIndexChanged, this,
          [this] { set_colour(static_cast<Colour>(colour_box_->currentData().toInt())); });
  connect(edges_box_, &QCheckBox::toggled, this, [this] { rebuild(); });
}

void PackingViewer::set_edges(bool on) {
  {
    QSignalBlocker b(edges_box_);
    edges_box_->setChecked(on);
  }
  rebuild();
}

bool PackingViewer::edges() const { return edges_box_->isChecked(); }

void PackingViewer::set_packing(std::shared_ptr<const CirclePacking> p, const QString& label) {
  const bool same = label == label_ && packing_ && p && p->size() == packing_->size();
  packing_ = std::move(p);
  label_ = label;
  if (!same) {
    QSignalBlocker b(edges_box_);
    edges_box_->setChecked(packing_ && packing_->size() <= kPackingEdgesUpTo);
  }
  reset_camera_ = reset_camera_ || !same;  // once the new geometry is there
  rebuild();
}

void PackingViewer::set_colour(Colour c) {
  colour_ = c;
  {
    QSignalBlocker b(colour_box_);
    colour_box_->setCurrentIndex(colour_box_->findData(static_cast<int>(c)));
  }
  rebuild();
}

QString PackingViewer::info() const { return info_->text(); }
SceneStats PackingViewer::scene_stats() const { return studio::scene_stats(*view_); }

/// What the packing viewer draws, built off the GUI thread: VTK data only (actors and mappers
/// are made on the view's render thread).
struct PackingViewer::Geometry {
  vtkSmartPointer<vtkPolyData> circles, edges;
  std::size_t n = 0, edge_count = 0, skipped = 0;
  double lo = 0, hi = 0, worst = 0, tangency = 0, lift = 0;
  QString what;
  std::array<double, 4> bounds{};
  bool hyperbolic = false;
};

namespace {
std::shared_ptr<PackingViewer::Geometry> build_packing(const CirclePacking& pk, PackingViewer::Colour colour,
                                                       const std::atomic<bool>& cancelled) {
  using Colour = PackingViewer::Colour;
  auto g = std::make_shared<PackingViewer::Geometry>();
  const std::size_t n = pk.size();
  g->n = n;
  // Colour values (log10; non-finite → NaN colour).
  std::vector<double> value;
  switch (colour) {
    case Colour::Radius:
      value = pk.radii;
      g->what = QObject::tr("log10 radius");
      break;
    case Colour::AngleError:
      value = angle_errors(pk);
      g->what = QObject::tr("log10 angle error (rad)");
      break;
    case Colour::TangencyError:
      value = tangency_errors(pk);
      g->what = QObject::tr("log10 tangency error");
      break;
  }
  double lo = std::numeric_limits<double>::infinity(), hi = -lo;
  for (double& v : value) {
    // An exact zero error is below any scale: shown at the bottom of it.
    v = v > 0 ? std::log10(v) : (v == 0 ? -16.0 : std::numeric_limits<double>::quiet_NaN());
    if (!std::isfinite(v)) continue;
    lo = std::min(lo, v);
    hi = std::max(hi, v);
  }
  if (lo > hi) lo = hi = 0;
  if (hi - lo < 1e-9) {
    lo -= 0.5;
    hi += 0.5;
  }
  g->lo = lo;
  g->hi = hi;
  if (colour != Colour::Radius) g->worst = std::pow(10.0, hi);
  if (cancelled) return nullptr;

  // Circles: points at the centres with radius and colour value; one glyph each. A circle
  // without a finite centre and a finite positive radius (a straight line of a layout, a broken
  // value) has no disk: it is counted, not drawn, and so are its edges.
  constexpr vtkIdType kNone = -1;
  std::vector<vtkIdType> point(n, kNone);
  auto pts = vtkSmartPointer<vtkPoints>::New();
  pts->SetDataTypeToDouble();
  auto radius = vtkSmartPointer<vtkDoubleArray>::New();
  radius->SetName("radius");
  auto colours = vtkSmartPointer<vtkDoubleArray>::New();
  colours->SetName("colour");
  double b[4] = {std::numeric_limits<double>::infinity(), -std::numeric_limits<double>::infinity(),
                 std::numeric_limits<double>::infinity(), -std::numeric_limits<double>::infinity()};
  for (std::size_t i = 0; i < n; ++i) {
    const auto& c = pk.centres[i];
    const double r = pk.radii[i];
    if (!(std::isfinite(c[0]) && std::isfinite(c[1]) && std::isfinite(r) && r > 0)) {
      ++g->skipped;
      continue;
    }
    point[i] = pts->InsertNextPoint(c[0], c[1], 0.0);
    radius->InsertNextValue(r);
    colours->InsertNextValue(value[i]);
    b[0] = std::min(b[0], c[0] - r);
    b[1] = std::max(b[1], c[0] + r);
    b[2] = std::min(b[2], c[1] - r);
    b[3] = std::max(b[3], c[1] + r);
  }
  g->hyperbolic = pk.geometry == CirclePacking::Geometry::Hyperbolic;
  if (g->hyperbolic || pts->GetNumberOfPoints() == 0) {  // the whole disc
    b[0] = std::min(b[0], -1.0);
    b[1] = std::max(b[1], 1.0);
    b[2] = std::min(b[2], -1.0);
    b[3] = std::max(b[3], 1.0);
  }
  g->bounds = {b[0], b[1], b[2], b[3]};
  g->lift = 1e-4 * std::max(b[1] - b[0], b[3] - b[2]);
  g->circles = vtkSmartPointer<vtkPolyData>::New();
  g->circles->SetPoints(pts);
  g->circles->GetPointData()->AddArray(radius);
  g->circles->GetPointData()->AddArray(colours);
  g->circles->GetPointData()->SetActiveScalars("colour");
  if (cancelled) return nullptr;

  // Triangulation edges, each once.
  std::vector<std::pair<TriMesh::Index, TriMesh::Index>> e;
  e.reserve(3 * pk.faces.size());
  for (const auto& f : pk.faces)
    for (int k = 0; k < 3; ++k) {
      const auto u = f[k], v = f[(k + 1) % 3];
      if (u < n && v < n && point[u] != kNone && point[v] != kNone) e.emplace_back(std::min(u, v), std::max(u, v));
    }
  std::sort(e.begin(), e.end());
  e.erase(std::unique(e.begin(), e.end()), e.end());
  auto edges = vtkSmartPointer<vtkCellArray>::New();
  edges->AllocateExact(static_cast<vtkIdType>(e.size()), 2 * static_cast<vtkIdType>(e.size()));
  for (auto [u, v] : e) {
    const vtkIdType ids[2] = {point[u], point[v]};
    edges->InsertNextCell(2, ids);
  }
  g->edges = vtkSmartPointer<vtkPolyData>::New();
  g->edges->SetPoints(pts);
  g->edges->SetLines(edges);
  g->edge_count = e.size();
  g->tangency = pk.tangency_error();
  return cancelled ? nullptr : g;
}
}  // namespace

void PackingViewer::rebuild() {
  // A newer request makes the running one stale: it stops early and its result is dropped.
  if (cancel_) *cancel_ = true;
  cancel_.reset();
  const int generation = ++generation_;
  if (!packing_ || packing_->size() == 0 || packing_->centres.size() != packing_->size()) {
    building_ = false;
    view_->post([](vtkRenderer* ren) { ren->RemoveAllViewProps(); });
    info_->setText(packing_ ? tr("%1: no circles").arg(label_) : QString());
    range_ = {0, 0};
    Q_EMIT geometry_ready();
    return;
  }
  building_ = true;
  info_->setText(tr("%1: building the view…").arg(label_));
  auto cancel = std::make_shared<std::atomic<bool>>(false);
  cancel_ = cancel;
  QPointer<PackingViewer> self(this);
  QThreadPool::globalInstance()->start([self, generation, cancel, p = packing_, colour = colour_] {
    auto g = build_packing(*p, colour, *cancel);
    if (!g) return;
    QMetaObject::invokeMethod(
        qApp,
        [self, generation, g] {
          if (self) self->apply(generation, g);
        },
        Qt::QueuedConnection);
  });
}

void PackingViewer::apply(int generation, const std::shared_ptr<Geometry>& g) {
  if (generation != generation_) return;  // stale
  building_ = false;
  cancel_.reset();
  range_ = {g->lo, g->hi};
  const bool outlines = edges_box_->isChecked();
  const int sides = g->n > kLargePacking ? kCircleSidesLarge : kCircleSides;
  view_->post([g, outlines, sides](vtkRenderer* ren) {
    ren->RemoveAllViewProps();
    auto lut = viridis(g->lo, g->hi);
    auto disks = vtkSmartPointer<vtkGlyph3DMapper>::New();
    disks->SetInputData(g->circles);
    disks->SetSourceData(unit_circle(true, sides));
    disks->SetScaleArray("radius");
    disks->SetScaleModeToScaleByMagnitude();
    disks->SetScaleFactor(1.0);
    disks->SetLookupTable(lut);
    disks->SetScalarRange(g->lo, g->hi);
    disks->ScalarVisibilityOn();  // the active scalars: "colour"
    auto disk_actor = vtkSmartPointer<vtkActor>::New();
    disk_actor->SetMapper(disks);
    disk_actor->GetProperty()->SetLighting(false);
    ren->AddActor(disk_actor);
    if (outlines) {
      auto rim = vtkSmartPointer<vtkGlyph3DMapper>::New();
      rim->SetInputData(g->circles);
      rim->SetSourceData(unit_circle(false, sides));
      rim->SetScaleArray("radius");
      rim->SetScaleModeToScaleByMagnitude();
      rim->SetScaleFactor(1.0);
      rim->ScalarVisibilityOff();
      auto rim_actor = vtkSmartPointer<vtkActor>::New();
      rim_actor->SetMapper(rim);
      rim_actor->SetPosition(0, 0, g->lift);
      rim_actor->GetProperty()->SetColor(0.1, 0.1, 0.12);
      rim_actor->GetProperty()->SetLighting(false);
      ren->AddActor(rim_actor);
      auto edge_mapper = vtkSmartPointer<vtkPolyDataMapper>::New();
      edge_mapper->SetInputData(g->edges);
      edge_mapper->ScalarVisibilityOff();
      auto edge_actor = vtkSmartPointer<vtkActor>::New();
      edge_actor->SetMapper(edge_mapper);
      edge_actor->SetPosition(0, 0, 2 * g->lift);
      edge_actor->GetProperty()->SetColor(0.95, 0.95, 0.95);
      edge_actor->GetProperty()->SetOpacity(0.55);
      edge_actor->GetProperty()->SetLighting(false);
      ren->AddActor(edge_actor);
    }
    if (g->hyperbolic) {
      auto m = vtkSmartPointer<vtkPolyDataMapper>::New();
      m->SetInputData(unit_circle(false));
      auto a = vtkSmartPointer<vtkActor>::New();
      a->SetMapper(m);
      a->SetPosition(0, 0, g->lift);
      a->GetProperty()->SetColor(0.9, 0.9, 0.9);
      a->GetProperty()->SetLighting(false);
      ren->AddActor(a);
    }
    auto bar = vtkSmartPointer<vtkScalarBarActor>::New();
    bar->SetLookupTable(lut);
    bar->SetTitle(g->what.toStdString().c_str());
    bar->SetNumberOfLabels(5);
    bar->SetPosition(0.86, 0.08);
    bar->SetPosition2(0.13, 0.84);
    bar->SetMaximumWidthInPixels(90);
    bar->SetMaximumHeightInPixels(400);
    bar->GetTitleTextProperty()->SetFontSize(11);
    bar->GetLabelTextProperty()->SetFontSize(11);
    bar->UnconstrainedFontSizeOn();
    ren->AddViewProp(bar);
  });
  const std::array<double, 4> bounds = g->bounds;
  view_->set_camera_fit([bounds](vtkRenderer* r, double aspect) { frame_plane(r, bounds, aspect, 0.13); });
  if (reset_camera_) view_->reset_camera();
  reset_camera_ = false;
  QString text = tr("%1: %2 circles, %3 edges, %4; %5 [%6, %7]")
                     .arg(label_)
                     .arg(g->n)
                     .arg(g->edge_count)
                     .arg(g->hyperbolic ? tr("hyperbolic (Poincaré disc)") : tr("Euclidean"))
                     .arg(g->what)
                     .arg(g->lo, 0, 'f', 2)
                     .arg(g->hi, 0, 'f', 2);
  if (colour_ != Colour::Radius) text += tr("; worst %1").arg(g->worst, 0, 'g', 3);
  text += tr("; tangency error %1").arg(g->tangency, 0, 'g', 3);
  if (g->skipped > 0) text += tr("; %1 circles without a finite centre and radius not drawn").arg(g->skipped);
  info_->setText(text);
  Q_EMIT geometry_ready();
}

// ---- TriMeshViewer ---------------------------------------------------------------------

TriMeshViewer::TriMeshViewer(QWidget* parent)
    : QWidget(parent),
      view3d_(new VtkView),
      viewuv_(new VtkView),
      split_(new QSplitter(Qt::Horizontal)),
      info_(new QLabel) {
  auto* lay = new QVBoxLayout(this);
  lay->setContentsMargins(0, 0, 0, 0);
  auto* bar = new QHBoxLayout;
  bar->addWidget(info_, 1);
  info_->setTextInteractionFlags(Qt::TextSelectableByMouse);
  auto* reset = new QToolButton;
  reset->setText(tr("Reset view"));
  connect(reset, &QToolButton::clicked, this, [this] {
    view3d_->reset_camera();
    if (has_uvs_) viewuv_->reset_camera();
  });
  bar->addWidget(reset);
  lay->addLayout(bar);
  split_->addWidget(view3d_);
  split_->addWidget(viewuv_);
  lay->addWidget(split_, 1);
  viewuv_->set_interaction_2d();
  viewuv_->setVisible(false);
}

QString TriMeshViewer::info() const { return info_->text(); }

void TriMeshViewer::set_mesh(const std::shared_ptr<const TriMesh>& m, const std::vector<std::array<double, 2>>* uvs,
                             const QString& label) {
  const bool same = label == label_;
  label_ = label;
  mesh_ = m;
  pair_label_.clear();
  draw(m, uvs, !same);
}

namespace {
bool planar(const TriMesh& m) {
  return std::all_of(m.vertices.begin(), m.vertices.end(), [](const auto& v) { return v[2] == 0.0; });
}
}  // namespace

void TriMeshViewer::pair_mesh(const std::shared_ptr<const TriMesh>& other, const QString& label) {
  // A flattening and its mesh: the same faces, one of the two planar (z = 0), the other not.
  if (!mesh_ || !other || other->vertices.size() != mesh_->vertices.size() || other->faces != mesh_->faces) return;
  const bool shown_flat = planar(*mesh_), other_flat = planar(*other);
  if (shown_flat == other_flat) return;
  const auto& surface = shown_flat ? other : mesh_;
  const auto& flat = shown_flat ? mesh_ : other;
  std::vector<std::array<double, 2>> uv(flat->vertices.size());
  for (std::size_t i = 0; i < uv.size(); ++i) uv[i] = {flat->vertices[i][0], flat->vertices[i][1]};
  pair_label_ = label;
  draw(surface, &uv, !viewuv_->isVisibleTo(this) || shown_flat);
}

void TriMeshViewer::draw(const std::shared_ptr<const TriMesh>& m, const std::vector<std::array<double, 2>>* uvs,
                         bool reset_cameras) {
  const QString& label = label_;
  const bool same = !reset_cameras;
  if (!m || m->vertices.empty()) {
    view3d_->post([](vtkRenderer* ren) { ren->RemoveAllViewProps(); });
    viewuv_->post([](vtkRenderer* ren) { ren->RemoveAllViewProps(); });
    viewuv_->setVisible(false);
    has_uvs_ = false;
    info_->setText(m ? tr("%1: empty mesh").arg(label) : QString());
    return;
  }
  has_uvs_ = uvs && uvs->size() == m->vertices.size();
  auto pts = vtkSmartPointer<vtkPoints>::New();
  pts->SetDataTypeToDouble();
  pts->SetNumberOfPoints(static_cast<vtkIdType>(m->vertices.size()));
  for (std::size_t i = 0; i < m->vertices.size(); ++i) pts->SetPoint(static_cast<vtkIdType>(i), m->vertices[i].data());
  auto cells = triangles(m->faces);
  auto surface = vtkSmartPointer<vtkPolyData>::New();
  surface->SetPoints(pts);
  surface->SetPolys(cells);
  vtkSmartPointer<vtkPolyData> flat;
  if (has_uvs_) {
    auto tc = checker_tcoords(*uvs, 16);
    surface->GetPointData()->SetTCoords(tc);
    auto upts = vtkSmartPointer<vtkPoints>::New();
    upts->SetDataTypeToDouble();
    upts->SetNumberOfPoints(static_cast<vtkIdType>(uvs->size()));
    for (std::size_t i = 0; i < uvs->size(); ++i)
      upts->SetPoint(static_cast<vtkIdType>(i), (*uvs)[i][0], (*uvs)[i][1], 0.0);
    flat = vtkSmartPointer<vtkPolyData>::New();
    flat->SetPoints(upts);
    flat->SetPolys(cells);
    flat->GetPointData()->SetTCoords(tc);
  }
  const bool edges = m->faces.size() <= kEdgesUpTo;
  auto add_surface = [edges](vtkRenderer* ren, const vtkSmartPointer<vtkPolyData>& poly, bool textured, bool lit) {
    ren->RemoveAllViewProps();
    auto mapper = vtkSmartPointer<vtkPolyDataMapper>::New();
    mapper->SetInputData(poly);
    mapper->ScalarVisibilityOff();
    auto actor = vtkSmartPointer<vtkActor>::New();
    actor->SetMapper(mapper);
    if (textured) actor->SetTexture(checkerboard());
    else actor->GetProperty()->SetColor(0.72, 0.78, 0.88);
    actor->GetProperty()->SetLighting(lit);
    if (edges) {
      actor->GetProperty()->EdgeVisibilityOn();
      actor->GetProperty()->SetEdgeColor(0.15, 0.15, 0.18);
    }
    actor->GetProperty()->BackfaceCullingOff();
    ren->AddActor(actor);
  };
  const bool textured = has_uvs_;
  view3d_->post([surface, textured, add_surface](vtkRenderer* ren) { add_surface(ren, surface, textured, true); });
  if (has_uvs_ && !viewuv_->isVisibleTo(this)) {
    viewuv_->setVisible(true);
    const int half = std::max(1, split_->width() / 2);
    split_->setSizes({half, half});
  }
  viewuv_->setVisible(has_uvs_);
  if (has_uvs_) {
    double b[6];
    flat->GetBounds(b);
    const std::array<double, 4> bounds{b[0], b[1], b[2], b[3]};
    viewuv_->post([flat, add_surface](vtkRenderer* ren) { add_surface(ren, flat, true, false); });
    viewuv_->set_camera_fit([bounds](vtkRenderer* r, double aspect) { frame_plane(r, bounds, aspect); });
    if (!same) viewuv_->reset_camera();
  }
  if (!same) view3d_->reset_camera();
  info_->setText(tr("%1: %2 vertices, %3 faces, %4 boundary loop(s)%5")
                     .arg(pair_label_.isEmpty() ? label : tr("%1 with %2").arg(label, pair_label_))
                     .arg(m->vertices.size())
                     .arg(m->faces.size())
                     .arg(m->boundary.size())
                     .arg(has_uvs_ ? tr("; right: the UV flattening, checkerboard through the UVs") : tr("; no UVs")));
}

}  // namespace gemflow::studio
