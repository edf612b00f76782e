#pragma once
// 3D structure viewer (VTK): atoms as spheres coloured by element (one vtkGlyph3DMapper per
// element), bonds as sticks coloured half by half (Structure::bonds, else perceived by
// distance), a rainbow tube through the Cα atoms of each chain, a model selector for
// ensembles, and an optional reference overlay superposed by Kabsch with its RMSD. The view is
// framed along the molecule's principal axes.
//
// An ensemble (more than one model) opens on "all": every model's Cα tube, superimposed on the
// well-defined core (superpose_ensemble) and coloured per residue by backbone RMSF on a fixed
// scale (rmsf_color), without atoms or bonds; the model selector's 1..N show one model.
//
// The geometry (bond perception, tubes, superposition) is built on a worker thread of the
// global QThreadPool and handed back by a queued call: selecting a big ensemble never blocks
// the GUI. A newer request cancels the running one and stale results are dropped; the counts
// below describe what is shown, and geometry_ready() tells when a request has been drawn.
#include <atomic>
#include <memory>
#include <string>
#include <utility>

#include <QWidget>

#include <gemflow/types/structure.hpp>

class QComboBox;
class QLabel;
class QSpinBox;
class vtkActor;

namespace gemflow::studio {

class VtkView;

class StructureViewer : public QWidget {
  Q_OBJECT
 public:
  explicit StructureViewer(QWidget* parent = nullptr);
  void set_structure(std::shared_ptr<const Structure> s, const QString& label);
  /// Overlay of another structure superposed onto the shown model (nullptr removes it).
  void set_reference(std::shared_ptr<const Structure> ref, const QString& label);
  /// Model shown, from 0; -1 = all models superimposed (the default of an ensemble).
  void set_model(int index);

  /// True when the models are shown superimposed (an ensemble, model "all").
  [[nodiscard]] bool ensemble_shown() const { return ensemble_shown_; }
  /// Models drawn: all of an ensemble when superimposed, else 1 (0 when nothing is shown).
  [[nodiscard]] std::size_t models_shown() const { return models_shown_; }
  /// Smallest and largest per-residue backbone RMSF (Å) of the superimposed ensemble; {0, 0}
  /// when one model is shown.
  [[nodiscard]] std::pair<double, double> rmsf_range() const { return rmsf_range_; }
  [[nodiscard]] std::size_t atom_count() const { return atoms_shown_; }
  [[nodiscard]] std::size_t bond_count() const { return bonds_shown_; }
  /// Backbone traces drawn (Cα tubes; chain breaks split a chain); in the ensemble view, one
  /// per model and trace of model 1.
  [[nodiscard]] std::size_t trace_count() const { return traces_shown_; }
  [[nodiscard]] double overlay_rmsd() const { return rmsd_; }
  [[nodiscard]] VtkView* view() const { return view_; }
  /// The rendered frame (renders first).
  [[nodiscard]] QImage grab_frame();
  /// True while the geometry of the latest request is being built.
  [[nodiscard]] bool building() const { return building_; }

  struct Geometry;

 Q_SIGNALS:
  /// The geometry of the latest request is shown (counts and RMSD are up to date).
  void geometry_ready();

 private:
  void rebuild();
  void apply_geometry(int generation, const std::shared_ptr<Geometry>& g);
  VtkView* view_;
  QSpinBox* model_box_;
  QLabel* info_;
  std::shared_ptr<const Structure> s_, ref_;
  QString label_, ref_label_;
  int model_ = 0;
  std::size_t atoms_shown_ = 0, bonds_shown_ = 0, traces_shown_ = 0, models_shown_ = 0;
  bool ensemble_shown_ = false;
  std::pair<double, double> rmsf_range_{0.0, 0.0};
  double rmsd_ = -1;
  int generation_ = 0;
  bool building_ = false;
  bool reset_camera_ = false;
  std::shared_ptr<std::atomic<bool>> cancel_;
};

}  // namespace gemflow::studio
