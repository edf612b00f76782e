#include "editor/quick_add.hpp"

#include <algorithm>

#include <QKeyEvent>
#include <QLineEdit>
#include <QListWidget>
#include <QVBoxLayout>

#include <gemflow/workflow.hpp>

namespace gemflow::studio {

namespace {
QString q(const std::string& s) { return QString::fromStdString(s); }
constexpr int kKeyRole = Qt::UserRole + 1;
}  // namespace

const NodeInfo& subworkflow_info() {
  static const NodeInfo info = [] {
    NodeInfo i;
    i.id = std::string(kSubWorkflowType);
    i.title = "Sub-workflow";
    i.category = "Workflow";
    i.doc =
        "Runs another workflow file as one node (subgraph, group node): its inputs: and outputs: sections "
        "are the node's ports.";
    i.version = 1;
    return i;
  }();
  return info;
}

std::vector<QuickAddEntry> node_type_entries(const Registry& registry, const std::vector<std::string>* only) {
  std::vector<QuickAddEntry> r;
  std::vector<const NodeInfo*> infos;
  for (const NodeEntry* e : registry.nodes()) infos.push_back(&e->spec.info);
  infos.push_back(&subworkflow_info());
  for (const NodeInfo* ip : infos) {
    const auto& info = *ip;
    if (only && std::find(only->begin(), only->end(), info.id) == only->end()) continue;
    QuickAddEntry x;
    x.key = q(info.id);
    x.label = q(info.title.empty() ? info.id : info.title);
    x.detail = q(info.id) + (info.category.empty() ? QString() : QStringLiteral(" · ") + q(info.category));
    x.search = q(info.id + " " + info.title + " " + info.category + " " + info.doc).toLower();
    x.tooltip = QStringLiteral("<b>%1</b><br>%2").arg(q(info.id), q(info.doc).toHtmlEscaped());
    r.push_back(std::move(x));
  }
  std::stable_sort(r.begin(), r.end(),
                   [](const auto& a, const auto& b) { return a.label.compare(b.label, Qt::CaseInsensitive) < 0; });
  return r;
}

std::vector<const QuickAddEntry*> match_entries(const std::vector<QuickAddEntry>& entries, const QString& query) {
  const QStringList words = query.toLower().split(QLatin1Char(' '), Qt::SkipEmptyParts);
  std::vector<std::pair<int, const QuickAddEntry*>> hits;
  for (const auto& e : entries) {
    bool all = true;
    int score = 0;
    for (const QString& w : words) {
      if (!e.search.contains(w)) {
        all = false;
        break;
      }
      const QString label = e.label.toLower(), key = e.key.toLower();
      // A word that starts the label or a part of the id ranks first, one inside them next.
      if (label.startsWith(w) || key.startsWith(w) || key.contains(QLatin1Char('.') + w)) score += 0;
      else if (label.contains(w) || key.contains(w)) score += 1;
      else score += 2;
    }
    if (all) hits.emplace_back(score, &e);
  }
  std::stable_sort(hits.begin(), hits.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
  std::vector<const QuickAddEntry*> r;
  for (const auto& [score, e] : hits) r.push_back(e);
  return r;
}

QuickAddPopup::QuickAddPopup(std::vector<QuickAddEntry> entries, const QString& placeholder, QWidget* parent)
    : QFrame(parent, Qt::Popup), entries_(std::move(entries)), search_(new QLineEdit), list_(new QListWidget) {
  setObjectName(QStringLiteral("quick_add"));
  setAttribute(Qt::WA_DeleteOnClose);
  setFrameShape(QFrame::StyledPanel);
  auto* lay = new QVBoxLayout(this);
  lay->setContentsMargins(4, 4, 4, 4);
  lay->setSpacing(3);
  search_->setPlaceholderText(placeholder);
  search_->setClearButtonEnabled(true);
  lay->addWidget(search_);
  lay->addWidget(list_);
  list_->setUniformItemSizes(true);
  resize(380, 340);
  search_->installEventFilter(this);
  connect(search_, &QLineEdit::textChanged, this, [this] { refilter(); });
  connect(list_, &QListWidget::itemActivated, this, [this] { activate_current(); });
  connect(list_, &QListWidget::itemClicked, this, [this] { activate_current(); });
  refilter();
}

void QuickAddPopup::popup(QPoint global_pos) {
  move(global_pos);
  show();
  raise();
  activateWindow();
  search_->setFocus(Qt::PopupFocusReason);
}

QStringList QuickAddPopup::shown_keys() const {
  QStringList r;
  for (int i = 0; i < list_->count(); ++i) r << list_->item(i)->data(kKeyRole).toString();
  return r;
}

void QuickAddPopup::refilter() {
  list_->clear();
  for (const QuickAddEntry* e : match_entries(entries_, search_->text())) {
    auto* it =
        new QListWidgetItem(e->detail.isEmpty() ? e->label : QStringLiteral("%1    %2").arg(e->label, e->detail));
    it->setData(kKeyRole, e->key);
    it->setToolTip(e->tooltip);
    list_->addItem(it);
  }
  if (list_->count()) list_->setCurrentRow(0);
}

void QuickAddPopup::activate_current() {
  QListWidgetItem* it = list_->currentItem();
  if (!it) return;
  const QString key = it->data(kKeyRole).toString();
  close();
  Q_EMIT activated(key);
}

bool QuickAddPopup::eventFilter(QObject* watched, QEvent* e) {
  if (watched == search_ && e->type() == QEvent::KeyPress) {
    auto* k = static_cast<QKeyEvent*>(e);
    switch (k->key()) {
      case Qt::Key_Return:
      case Qt::Key_Enter: activate_current(); return true;
      case Qt::Key_Escape: close(); return true;
      case Qt::Key_Down:
      case Qt::Key_Up:
      case Qt::Key_PageDown:
      case Qt::Key_PageUp: {
        const int step = k->key() == Qt::Key_Down       ? 1
                         : k->key() == Qt::Key_Up       ? -1
                         : k->key() == Qt::Key_PageDown ? 8
                                                        : -8;
        if (list_->count()) list_->setCurrentRow(std::clamp(list_->currentRow() + step, 0, list_->count() - 1));
        return true;
      }
      default: break;
    }
  }
  return QFrame::eventFilter(watched, e);
}

}  // namespace gemflow::studio
