#include "viewers/viewer_panel.hpp"

#include <deque>
#include <set>

#include <QComboBox>
#include <QFileDialog>
#include <QHBoxLayout>
#include <QLabel>
#include <QPushButton>
#include <QStackedWidget>
#include <QVBoxLayout>

#include <gemflow/types.hpp>

#include "model/graph_model.hpp"
#include "run/run_controller.hpp"
#include "viewers/data_viewers.hpp"
#include "viewers/structure_viewer.hpp"
#include "viewers/viewer_registry.hpp"

namespace gemflow::studio {

namespace {
QString q(const std::string& s) { return QString::fromStdString(s); }
const std::string kStructure(DataType<Structure>::name);
}  // namespace

ViewerPanel::ViewerPanel(GraphModel& model, RunController& runs, QWidget* parent, const ViewerRegistry* viewers)
    : QWidget(parent),
      model_(model),
      runs_(runs),
      registry_(viewers ? *viewers : builtin_viewers()),
      outputs_(new QComboBox),
      overlay_(new QComboBox),
      overlay_label_(new QLabel(tr("Overlay"))),
      status_(new QLabel),
      stack_(new QStackedWidget),
      empty_(new QLabel),
      text_(new TextViewer) {
  auto* lay = new QVBoxLayout(this);
  lay->setContentsMargins(2, 2, 2, 2);
  auto* bar = new QHBoxLayout;
  bar->addWidget(outputs_, 2);
  bar->addWidget(overlay_label_);
  bar->addWidget(overlay_, 1);
  bar->addWidget(status_);
  auto* png = new QPushButton(tr("Save PNG…"));
  png->setObjectName(QStringLiteral("viewer_save_png"));
  png->setToolTip(tr("Save what the viewer shows as a PNG picture"));
  connect(png, &QPushButton::clicked, this, [this] {
    const QString f = QFileDialog::getSaveFileName(
        this, tr("Save view"),
        QString::fromStdString(node_.empty() ? std::string("view") : node_) + QStringLiteral(".png"),
        tr("PNG (*.png)"));
    if (!f.isEmpty() && !save_png(f)) status_->setText(tr("Cannot write %1").arg(f));
  });
  bar->addWidget(png);
  status_->setObjectName(QStringLiteral("viewer_status"));
  lay->addLayout(bar);
  lay->addWidget(stack_, 1);
  empty_->setAlignment(Qt::AlignCenter);
  empty_->setWordWrap(true);
  empty_->setText(tr("Select a node or a wire to see its output."));
  stack_->addWidget(empty_);
  for (const ViewerRegistry::Viewer* v : registry_.distinct_viewers()) {
    QWidget* w = v->make();
    widgets_.emplace(v->id, w);
    stack_->addWidget(w);
  }
  stack_->addWidget(text_);
  overlay_->setToolTip(tr("Superpose another structure output (Kabsch) onto this one"));
  overlay_label_->setVisible(false);
  overlay_->setVisible(false);
  connect(outputs_, &QComboBox::currentIndexChanged, this, [this] { show_current(); });
  connect(overlay_, &QComboBox::currentIndexChanged, this, [this] {
    const QString key = overlay_->currentData().toString();
    const int dot = key.lastIndexOf(QLatin1Char('.'));
    StructureViewer* sv = structure_viewer();
    if (!sv) return;
    if (key.isEmpty() || dot < 0) {
      sv->set_reference(nullptr, {});
      return;
    }
    auto outs = runs_.outputs(key.left(dot).toStdString());
    auto it = outs.find(key.mid(dot + 1).toStdString());
    if (it != outs.end() && it->second.type() == kStructure) sv->set_reference(it->second.as<Structure>(), key);
  });
  // A running node's intermediate values: redraw when the shown output (or a companion's
  // node) gets a new one.
  connect(&runs_, &RunController::preview_changed, this, [this](const QString& node, const QString& port) {
    const std::string n = node.toStdString();
    if (n == node_ && (port.isEmpty() || port.toStdString() == this->port())) {
      show_current();
      return;
    }
    for (const QString& c : companions_shown_)
      if (c.section(QLatin1Char('='), 1).section(QLatin1Char('.'), 0, 0) == node) {
        show_current();
        return;
      }
  });
}

void ViewerPanel::follow(const std::string& node, const std::string& port) {
  node_ = node;
  QSignalBlocker b(outputs_);
  outputs_->clear();
  if (const NodeSpec* s = model_.spec_of(node))
    for (const auto& p : s->outputs)
      outputs_->addItem(QStringLiteral("%1.%2 (%3)").arg(q(node), q(p.name), q(p.type)), q(p.name));
  if (!port.empty()) outputs_->setCurrentIndex(std::max(0, outputs_->findData(q(port))));
  show_current();
}

void ViewerPanel::refresh() { show_current(); }

QWidget* ViewerPanel::viewer_widget(const std::string& id) const {
  auto it = widgets_.find(id);
  return it == widgets_.end() ? nullptr : it->second;
}

StructureViewer* ViewerPanel::structure_viewer() const {
  for (const ViewerRegistry::Viewer* v : registry_.viewers_for(kStructure))
    if (auto* sv = qobject_cast<StructureViewer*>(viewer_widget(v->id))) return sv;
  return nullptr;
}

QString ViewerPanel::status() const { return status_->text(); }

std::string ViewerPanel::port() const { return outputs_->currentData().toString().toStdString(); }

void ViewerPanel::show_current() {
  const std::string port = outputs_->currentData().toString().toStdString();
  if (node_.empty() || port.empty()) {
    viewer_.clear();
    shown_ = {};
    empty_->setText(node_.empty() ? tr("Select a node or a wire to see its output.")
                                  : tr("%1 has no outputs.").arg(q(node_)));
    stack_->setCurrentWidget(empty_);
    return;
  }
  const Value pv = runs_.preview(node_, port);
  preview_ = !pv.empty();
  auto outs = runs_.outputs(node_);
  auto it = outs.find(port);
  status_->setText(preview_                        ? tr("running: intermediate value")
                   : runs_.shown_point().isEmpty() ? QString()
                                                   : tr("sweep point %1").arg(runs_.shown_point()));
  if (!preview_ && (it == outs.end() || it->second.empty())) {
    viewer_.clear();
    shown_ = {};
    companions_shown_.clear();
    empty_->setText(tr("%1.%2 has not been computed yet: Run (or Run to selected).").arg(q(node_), q(port)));
    stack_->setCurrentWidget(empty_);
    overlay_->setVisible(false);
    overlay_label_->setVisible(false);
    return;
  }
  const Value& v = preview_ ? pv : it->second;
  std::map<std::string, std::vector<Labelled>> companions;
  const auto viewers = registry_.viewers_for(v.type());
  if (!viewers.empty())
    for (const ViewerRegistry::Companion* c : registry_.companions_of(viewers.front()->id))
      if ((c->own_type || c->type != v.type()) && !companions.count(c->type))
        if (auto found = find_companions(c->type, c->near == ViewerRegistry::Near::Upstream, port); !found.empty())
          companions.emplace(c->type, std::move(found));
  show_value(v, QStringLiteral("%1.%2").arg(q(node_), q(port)), companions);
}

std::vector<ViewerPanel::Labelled> ViewerPanel::find_companions(const std::string& type, bool upstream,
                                                                const std::string& port) const {
  // Every output of the type of one node, in the order its type declares them.
  auto in = [&](const std::string& node, const std::string& skip_port) {
    std::vector<Labelled> out;
    const auto values = runs_.latest(node);
    auto take = [&](const std::string& p) {
      auto it = values.find(p);
      if (p != skip_port && it != values.end() && !it->second.empty() && it->second.type() == type)
        out.push_back(Labelled{it->second, QStringLiteral("%1.%2").arg(q(node), q(p))});
    };
    if (const NodeSpec* spec = model_.spec_of(node))
      for (const auto& o : spec->outputs) take(o.name);
    else
      for (const auto& [p, v] : values) take(p);
    return out;
  };
  if (auto f = in(node_, port); !f.empty()) return f;
  for (const std::string& s : selection_)
    if (s != node_)
      if (auto f = in(s, {}); !f.empty()) return f;
  if (!upstream) return {};
  // Breadth first against the links: the nearest producer wins, ties in link order.
  std::set<std::string> seen{node_};
  std::deque<std::string> queue{node_};
  while (!queue.empty()) {
    const std::string n = queue.front();
    queue.pop_front();
    for (const Link& l : model_.workflow().links)
      if (l.to_node == n && seen.insert(l.from_node).second) {
        if (auto f = in(l.from_node, {}); !f.empty()) return f;
        queue.push_back(l.from_node);
      }
  }
  return {};
}

void ViewerPanel::fill_overlays() {
  QSignalBlocker b(overlay_);
  const QString keep = overlay_->currentData().toString();
  overlay_->clear();
  overlay_->addItem(tr("none"), QString());
  for (const auto& [id, r] : runs_.results())
    for (const auto& [port, v] : r.outputs)
      if (v.type() == kStructure && !(id == node_ && port == outputs_->currentData().toString().toStdString())) {
        const QString key = QStringLiteral("%1.%2").arg(q(id), q(port));
        overlay_->addItem(key, key);
      }
  overlay_->setCurrentIndex(std::max(0, overlay_->findData(keep)));
}

void ViewerPanel::show_value(const Value& v, const QString& label,
                             const std::map<std::string, std::vector<Labelled>>& companions) {
  const std::string& t = v.type();
  shown_ = v;
  companions_shown_.clear();
  const std::vector<const ViewerRegistry::Viewer*> viewers = registry_.viewers_for(t);
  // The overlay bar superposes structures: shown only with the structure viewer.
  const bool overlay = !viewers.empty() && qobject_cast<StructureViewer*>(viewer_widget(viewers.front()->id));
  overlay_->setVisible(overlay);
  overlay_label_->setVisible(overlay);
  if (viewers.empty()) {
    viewer_ = "text";
    text_->set_text(QStringLiteral("%1 (%2)\n\n%3").arg(label, q(t), q(v.summary())));
    stack_->setCurrentWidget(text_);
    return;
  }
  const ViewerRegistry::Viewer& viewer = *viewers.front();
  QWidget* widget = viewer_widget(viewer.id);
  viewer_ = viewer.id;
  if (overlay) fill_overlays();
  viewer.show(*widget, v, label);
  for (const ViewerRegistry::Companion* c : registry_.companions_of(viewer.id)) {
    auto it = companions.find(c->type);
    if ((c->type == t && !c->own_type) || it == companions.end()) continue;
    for (const Labelled& l : it->second) {
      c->show(*widget, l.value, l.label);
      companions_shown_ << QStringLiteral("%1=%2").arg(q(c->type), l.label);
    }
  }
  stack_->setCurrentWidget(widget);
  if (overlay && overlay_->currentIndex() > 0) Q_EMIT overlay_->currentIndexChanged(overlay_->currentIndex());
}

bool ViewerPanel::save_png(const QString& file) const {
  QWidget* w = stack_->currentWidget();
  if (!w || w == empty_) return false;
  // VTK views draw into an image of their own; grab() of the widget includes it.
  return w->grab().save(file, "PNG");
}

}  // namespace gemflow::studio
