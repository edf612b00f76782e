#pragma once
// The Viewers dock: follows the selected node (any of its outputs) or wire (its source
// output) and shows the latest value with the viewer of its type: 3D structure (VTK),
// heatmap (Matrix, DistanceBounds), table (Table), text (Value::summary) for anything else.
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
class HeatmapViewer;
class TableViewer;
class TextViewer;

class ViewerPanel : public QWidget {
  Q_OBJECT
 public:
  ViewerPanel(GraphModel& model, RunController& runs, QWidget* parent = nullptr);
  /// Follows a node: lists its outputs, shows `port` (or the first one).
  void follow(const std::string& node, const std::string& port = {});
  /// The followed node ("" when none) and the output shown.
  [[nodiscard]] const std::string& node() const { return node_; }
  [[nodiscard]] std::string port() const;
  /// Re-reads the followed value (after a run).
  void refresh();
  /// Shows a value directly (also used by tests).
  void show_value(const Value& v, const QString& label);

  enum class Kind { None, Structure, Heatmap, Table, Text };
  [[nodiscard]] Kind kind() const { return kind_; }
  [[nodiscard]] StructureViewer* structure_viewer() const { return structure_; }
  [[nodiscard]] HeatmapViewer* heatmap_viewer() const { return heatmap_; }
  [[nodiscard]] TableViewer* table_viewer() const { return table_; }
  [[nodiscard]] TextViewer* text_viewer() const { return text_; }

 private:
  void show_current();
  void fill_overlays();
  GraphModel& model_;
  RunController& runs_;
  std::string node_;
  QComboBox* outputs_;
  QComboBox* overlay_;
  QLabel* overlay_label_;
  QStackedWidget* stack_;
  QLabel* empty_;
  StructureViewer* structure_;
  HeatmapViewer* heatmap_;
  TableViewer* table_;
  TextViewer* text_;
  Kind kind_ = Kind::None;
};

}  // namespace gemflow::studio
