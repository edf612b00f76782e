#include "viewers/viewer_panel.hpp"

#include <QComboBox>
#include <QHBoxLayout>
#include <QLabel>
#include <QStackedWidget>
#include <QVBoxLayout>

#include <gemflow/types.hpp>

#include "model/graph_model.hpp"
#include "run/run_controller.hpp"
#include "viewers/data_viewers.hpp"
#include "viewers/structure_viewer.hpp"

namespace gemflow::studio {

namespace {
QString q(const std::string& s) { return QString::fromStdString(s); }

template <class T>
std::vector<double> to_doubles(const Matrix<T>& m) {
  return std::vector<double>(m.data(), m.data() + m.size());
}
}  // namespace

ViewerPanel::ViewerPanel(GraphModel& model, RunController& runs, QWidget* parent)
    : QWidget(parent),
      model_(model),
      runs_(runs),
      outputs_(new QComboBox),
      overlay_(new QComboBox),
      overlay_label_(new QLabel(tr("Overlay"))),
      stack_(new QStackedWidget),
      empty_(new QLabel),
      structure_(new StructureViewer),
      heatmap_(new HeatmapViewer),
      table_(new TableViewer),
      text_(new TextViewer) {
  auto* lay = new QVBoxLayout(this);
  lay->setContentsMargins(2, 2, 2, 2);
  auto* bar = new QHBoxLayout;
  bar->addWidget(outputs_, 2);
  bar->addWidget(overlay_label_);
  bar->addWidget(overlay_, 1);
  lay->addLayout(bar);
  lay->addWidget(stack_, 1);
  empty_->setAlignment(Qt::AlignCenter);
  empty_->setWordWrap(true);
  empty_->setText(tr("Select a node or a wire to see its output."));
  stack_->addWidget(empty_);
  stack_->addWidget(structure_);
  stack_->addWidget(heatmap_);
  stack_->addWidget(table_);
  stack_->addWidget(text_);
  overlay_->setToolTip(tr("Superpose another structure output (Kabsch) onto this one"));
  overlay_label_->setVisible(false);
  overlay_->setVisible(false);
  connect(outputs_, &QComboBox::currentIndexChanged, this, [this] { show_current(); });
  connect(overlay_, &QComboBox::currentIndexChanged, this, [this] {
    const QString key = overlay_->currentData().toString();
    const int dot = key.lastIndexOf(QLatin1Char('.'));
    if (key.isEmpty() || dot < 0) {
      structure_->set_reference(nullptr, {});
      return;
    }
    auto outs = runs_.outputs(key.left(dot).toStdString());
    auto it = outs.find(key.mid(dot + 1).toStdString());
    if (it != outs.end() && it->second.type() == "Structure") structure_->set_reference(it->second.as<Structure>(), key);
  });
}

void ViewerPanel::follow(const std::string& node, const std::string& port) {
  node_ = node;
  QSignalBlocker b(outputs_);
  outputs_->clear();
  if (const NodeSpec* s = model_.spec_of(node))
    for (const auto& p : s->outputs) outputs_->addItem(QStringLiteral("%1.%2 (%3)").arg(q(node), q(p.name), q(p.type)), q(p.name));
  if (!port.empty()) outputs_->setCurrentIndex(std::max(0, outputs_->findData(q(port))));
  show_current();
}

void ViewerPanel::refresh() { show_current(); }

std::string ViewerPanel::port() const { return outputs_->currentData().toString().toStdString(); }

void ViewerPanel::show_current() {
  const std::string port = outputs_->currentData().toString().toStdString();
  if (node_.empty() || port.empty()) {
    kind_ = Kind::None;
    empty_->setText(node_.empty() ? tr("Select a node or a wire to see its output.")
                                  : tr("%1 has no outputs.").arg(q(node_)));
    stack_->setCurrentWidget(empty_);
    return;
  }
  auto outs = runs_.outputs(node_);
  auto it = outs.find(port);
  if (it == outs.end() || it->second.empty()) {
    kind_ = Kind::None;
    empty_->setText(tr("%1.%2 has not been computed yet: Run (or Run to selected).").arg(q(node_), q(port)));
    stack_->setCurrentWidget(empty_);
    overlay_->setVisible(false);
    overlay_label_->setVisible(false);
    return;
  }
  show_value(it->second, QStringLiteral("%1.%2").arg(q(node_), q(port)));
}

void ViewerPanel::fill_overlays() {
  QSignalBlocker b(overlay_);
  const QString keep = overlay_->currentData().toString();
  overlay_->clear();
  overlay_->addItem(tr("none"), QString());
  for (const auto& [id, r] : runs_.results())
    for (const auto& [port, v] : r.outputs)
      if (v.type() == "Structure" && !(id == node_ && port == outputs_->currentData().toString().toStdString())) {
        const QString key = QStringLiteral("%1.%2").arg(q(id), q(port));
        overlay_->addItem(key, key);
      }
  overlay_->setCurrentIndex(std::max(0, overlay_->findData(keep)));
}

void ViewerPanel::show_value(const Value& v, const QString& label) {
  const std::string& t = v.type();
  const bool is_structure = t == "Structure";
  overlay_->setVisible(is_structure);
  overlay_label_->setVisible(is_structure);
  if (is_structure) {
    kind_ = Kind::Structure;
    fill_overlays();
    structure_->set_structure(v.as<Structure>(), label);
    stack_->setCurrentWidget(structure_);
    if (overlay_->currentIndex() > 0) Q_EMIT overlay_->currentIndexChanged(overlay_->currentIndex());
  } else if (t == "Matrix<f64>" || t == "Matrix<f32>") {
    kind_ = Kind::Heatmap;
    if (t == "Matrix<f64>") {
      auto m = v.as<Matrix<double>>();
      heatmap_->set_matrix(m->rows(), m->cols(), to_doubles(*m), label);
    } else {
      auto m = v.as<Matrix<float>>();
      heatmap_->set_matrix(m->rows(), m->cols(), to_doubles(*m), label);
    }
    stack_->setCurrentWidget(heatmap_);
  } else if (t == "DistanceBounds") {
    kind_ = Kind::Heatmap;
    heatmap_->set_bounds(v.as<DistanceBounds>(), label);
    stack_->setCurrentWidget(heatmap_);
  } else if (t == "Table") {
    kind_ = Kind::Table;
    table_->set_table(*v.as<Table>(), label);
    stack_->setCurrentWidget(table_);
  } else {
    kind_ = Kind::Text;
    text_->set_text(QStringLiteral("%1 (%2)\n\n%3").arg(label, q(t), q(v.summary())));
    stack_->setCurrentWidget(text_);
  }
}

}  // namespace gemflow::studio
