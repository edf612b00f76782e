#include "editor/palette.hpp"

#include <map>

#include <QHeaderView>
#include <QLineEdit>
#include <QMimeData>
#include <QTreeWidget>
#include <QVBoxLayout>

#include "editor/graph_view.hpp"
#include "editor/quick_add.hpp"

namespace gemflow::studio {

namespace {
QString q(const std::string& s) { return QString::fromStdString(s); }
constexpr int kTypeRole = Qt::UserRole + 1;
constexpr int kSearchRole = Qt::UserRole + 2;

class PaletteTree : public QTreeWidget {
 public:
  using QTreeWidget::QTreeWidget;

 protected:
  QMimeData* mimeData(const QList<QTreeWidgetItem*>& items) const override {
    for (auto* it : items) {
      const QString type = it->data(0, kTypeRole).toString();
      if (type.isEmpty()) continue;
      auto* m = new QMimeData;
      m->setData(kNodeTypeMime, type.toUtf8());
      m->setText(type);
      return m;
    }
    return nullptr;
  }
  QStringList mimeTypes() const override { return {QString::fromLatin1(kNodeTypeMime)}; }
};
}  // namespace

PaletteWidget::PaletteWidget(const Registry& registry, QWidget* parent)
    : QWidget(parent), registry_(registry), search_(new QLineEdit), tree_(new PaletteTree) {
  auto* lay = new QVBoxLayout(this);
  lay->setContentsMargins(2, 2, 2, 2);
  search_->setPlaceholderText(tr("Search nodes…"));
  search_->setClearButtonEnabled(true);
  tree_->setHeaderHidden(true);
  tree_->setDragEnabled(true);
  tree_->setDragDropMode(QAbstractItemView::DragOnly);
  tree_->setSelectionMode(QAbstractItemView::SingleSelection);
  lay->addWidget(search_);
  lay->addWidget(tree_);
  connect(search_, &QLineEdit::textChanged, this, &PaletteWidget::set_filter);
  connect(tree_, &QTreeWidget::itemDoubleClicked, this, [this](QTreeWidgetItem* it) {
    const QString type = it->data(0, kTypeRole).toString();
    if (!type.isEmpty()) Q_EMIT node_type_activated(type);
  });
  reload();
}

void PaletteWidget::reload() {
  tree_->clear();
  std::map<QString, QTreeWidgetItem*> groups;
  std::vector<std::pair<const NodeInfo*, std::string>> infos;  // info, origin
  for (const NodeEntry* e : registry_.nodes()) infos.emplace_back(&e->spec.info, e->origin);
  infos.emplace_back(&subworkflow_info(), "Gemflow");
  for (const auto& [ip, origin] : infos) {
    const auto& info = *ip;
    const auto dot = info.id.find('.');
    const QString plugin = dot == std::string::npos ? QStringLiteral("(core)") : q(info.id.substr(0, dot));
    const QString cat = info.category.empty() ? tr("Other") : q(info.category);
    const QString key = plugin + QStringLiteral(" / ") + cat;
    auto& g = groups[key];
    if (!g) {
      g = new QTreeWidgetItem(tree_, {key});
      g->setFlags(Qt::ItemIsEnabled);
      QFont f = g->font(0);
      f.setBold(true);
      g->setFont(0, f);
      g->setToolTip(0, tr("Plugin %1 (%2), category %3").arg(plugin, q(origin), cat));
    }
    auto* it = new QTreeWidgetItem(g, {q(info.title.empty() ? info.id : info.title)});
    it->setData(0, kTypeRole, q(info.id));
    it->setData(0, kSearchRole, q(info.id + " " + info.title + " " + info.category + " " + info.doc).toLower());
    it->setToolTip(
        0, QStringLiteral("<b>%1</b> (v%2)<br>%3").arg(q(info.id)).arg(info.version).arg(q(info.doc).toHtmlEscaped()));
    it->setFlags(Qt::ItemIsEnabled | Qt::ItemIsSelectable | Qt::ItemIsDragEnabled);
  }
  tree_->expandAll();
  set_filter(search_->text());
}

void PaletteWidget::set_filter(const QString& text) {
  const QString t = text.trimmed().toLower();
  for (int i = 0; i < tree_->topLevelItemCount(); ++i) {
    QTreeWidgetItem* g = tree_->topLevelItem(i);
    int shown = 0;
    for (int j = 0; j < g->childCount(); ++j) {
      QTreeWidgetItem* it = g->child(j);
      const bool match =
          t.isEmpty() || it->data(0, kSearchRole).toString().contains(t) || g->text(0).toLower().contains(t);
      it->setHidden(!match);
      shown += match;
    }
    g->setHidden(shown == 0);
  }
}

int PaletteWidget::visible_count() const {
  int n = 0;
  for (int i = 0; i < tree_->topLevelItemCount(); ++i) {
    QTreeWidgetItem* g = tree_->topLevelItem(i);
    for (int j = 0; j < g->childCount(); ++j) n += !g->child(j)->isHidden();
  }
  return n;
}

}  // namespace gemflow::studio
