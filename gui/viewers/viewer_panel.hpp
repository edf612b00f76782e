#pragma once
// The Viewers dock: follows the selected node (any of its outputs) or wire (its source
// output) and shows the latest value with the first viewer that the ViewerRegistry has for its
// type, or its summary as text when it has none.
#include <map>
#include <string>

#include <QWidget>

#include <gemflow/data.hpp>

class QComboBox;
class QLabel;
class QStackedWidget;

namespace gemflow::studio {

class GraphModel;
class RunController;
class StructureViewer;
class TextViewer;
class ViewerRegistry;

class ViewerPanel : public QWidget {
  Q_OBJECT
 public:
  /// Makes one widget per viewer id of `viewers` (builtin_viewers() when null).
  ViewerPanel(GraphModel& model, RunController& runs, QWidget* parent = nullptr,
              const ViewerRegistry* viewers = nullptr);
  /// Follows a node: lists its outputs, shows `port` (or the first one).
  void follow(const std::string& node, const std::string& port = {});
  /// The followed node ("" when none) and the output shown.
  [[nodiscard]] const std::string& node() const { return node_; }
  [[nodiscard]] std::string port() const;
  /// Re-reads the followed value (after a run).
  void refresh();
  /// Shows a value directly (also used by tests).
  void show_value(const Value& v, const QString& label);

  /// The id of the viewer shown ("structure", "heatmap", …), "text" for a type without one,
  /// "" when nothing is shown.
  [[nodiscard]] const std::string& viewer() const { return viewer_; }
  /// The widget of viewer `id`, nullptr when the registry has no such viewer.
  [[nodiscard]] QWidget* viewer_widget(const std::string& id) const;
  [[nodiscard]] StructureViewer* structure_viewer() const;
  [[nodiscard]] TextViewer* text_viewer() const { return text_; }

 private:
  void show_current();
  void fill_overlays();
  GraphModel& model_;
  RunController& runs_;
  const ViewerRegistry& registry_;
  std::string node_;
  QComboBox* outputs_;
  QComboBox* overlay_;
  QLabel* overlay_label_;
  QStackedWidget* stack_;
  QLabel* empty_;
  std::map<std::string, QWidget*, std::less<>> widgets_;  // by viewer id
  TextViewer* text_;
  std::string viewer_;
};

}  // namespace gemflow::studio
