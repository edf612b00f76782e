#pragma once
// Palette: every node type of the registry, grouped by plugin and category, searchable;
// drag an entry onto the editor (or double-click it) to add a node.
#include <QWidget>

#include <gemflow/registry.hpp>

class QLineEdit;
class QTreeWidget;

namespace gemflow::studio {

class PaletteWidget : public QWidget {
  Q_OBJECT
 public:
  explicit PaletteWidget(const Registry& registry, QWidget* parent = nullptr);
  /// Re-reads the registry (after plugins were loaded).
  void reload();
  /// Shows only entries whose id, title, category or doc contain `text` (case-insensitive).
  void set_filter(const QString& text);
  [[nodiscard]] int visible_count() const;

 Q_SIGNALS:
  void node_type_activated(const QString& type);

 private:
  const Registry& registry_;
  QLineEdit* search_;
  QTreeWidget* tree_;
};

}  // namespace gemflow::studio
