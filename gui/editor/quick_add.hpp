#pragma once
// QuickAdd: the search box that opens at the cursor (Tab or a right-click on the canvas, a
// wire dropped in empty space, Ctrl+F). One line to type in, a list of what matches below;
// Return or a click picks the highlighted entry, Esc closes. The entries are given by the
// caller (node types, canvas commands, node ids), each with the text it is found by.
#include <vector>

#include <QFrame>
#include <QString>

#include <gemflow/registry.hpp>

class QLineEdit;
class QListWidget;

namespace gemflow::studio {

struct QuickAddEntry {
  QString key;     ///< what activated() reports (a node type id, "cmd:..." for a command)
  QString label;   ///< shown
  QString detail;  ///< shown greyed after the label (category, type)
  QString search;  ///< lower-case text the query is matched against
  QString tooltip;
};

/// Entries for node types: found by id, title, category and doc. `only` (when not null)
/// keeps the types it lists. The `workflow` type (a sub-workflow: another workflow file as one
/// node) is listed with the registry's types.
[[nodiscard]] std::vector<QuickAddEntry> node_type_entries(const Registry& registry,
                                                           const std::vector<std::string>* only = nullptr);
/// Title, category and doc of the `workflow` node type, as the palette and quick-add show it.
[[nodiscard]] const NodeInfo& subworkflow_info();
/// The entries that match `query` (every word of it, case-insensitive), best first: a word at
/// the start of the label or key before one inside it, then the given order.
[[nodiscard]] std::vector<const QuickAddEntry*> match_entries(const std::vector<QuickAddEntry>& entries,
                                                              const QString& query);

class QuickAddPopup : public QFrame {
  Q_OBJECT
 public:
  QuickAddPopup(std::vector<QuickAddEntry> entries, const QString& placeholder, QWidget* parent = nullptr);
  /// Shows the box with its top-left at `global_pos` and focuses the search line.
  void popup(QPoint global_pos);
  [[nodiscard]] QLineEdit* search() const { return search_; }
  [[nodiscard]] QListWidget* list() const { return list_; }
  /// The keys shown now, in order.
  [[nodiscard]] QStringList shown_keys() const;

 Q_SIGNALS:
  void activated(const QString& key);

 protected:
  bool eventFilter(QObject* watched, QEvent* e) override;

 private:
  void refilter();
  void activate_current();
  std::vector<QuickAddEntry> entries_;
  QLineEdit* search_;
  QListWidget* list_;
};

}  // namespace gemflow::studio
