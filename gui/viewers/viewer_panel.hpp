#pragma once
// The Viewers dock: follows the selected node (any of its outputs) or wire (its source
// output) and shows the latest value with the first viewer that the ViewerRegistry has for its
// type, or its summary as text when it has none. While the node runs, the value is its latest
// preview (NodeContext::preview), replaced by the final output when the run ends.
//
// Companions: a viewer may draw values of other types with the shown one (the signal under a
// segmentation). For each registered companion type the dock takes the outputs of that type
// (in port order) of the first node that has any among: the shown node (its other outputs), the
// other selected nodes, then (companions registered Near::Upstream) the nodes upstream of the
// shown one, breadth first.
#include <map>
#include <string>
#include <vector>

#include <QStringList>
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
  /// The selected nodes (the followed one among them): where companions are looked for first.
  void set_selection(std::vector<std::string> nodes) { selection_ = std::move(nodes); }
  /// Re-reads the followed value (after a run).
  void refresh();
  /// A value with its label ("node.port").
  struct Labelled {
    Value value;
    QString label;
  };
  /// Shows a value directly (also used by tests), with companion values by type name (those
  /// that the value's viewer registers are drawn with it, in order).
  void show_value(const Value& v, const QString& label,
                  const std::map<std::string, std::vector<Labelled>>& companions = {});
  /// The value shown (empty when none).
  [[nodiscard]] const Value& shown_value() const { return shown_; }
  /// The status line under the viewer ("sweep point value=2.0" for a sweep point's outputs).
  [[nodiscard]] QString status() const;
  /// Whether the shown value is a running node's intermediate value.
  [[nodiscard]] bool showing_preview() const { return preview_; }
  /// The companions drawn with the shown value, as "type=node.port" (tests, status line).
  [[nodiscard]] const QStringList& companions_shown() const { return companions_shown_; }

  /// The id of the viewer shown ("structure", "heatmap", …), "text" for a type without one,
  /// "" when nothing is shown.
  [[nodiscard]] const std::string& viewer() const { return viewer_; }
  /// The widget of viewer `id`, nullptr when the registry has no such viewer.
  [[nodiscard]] QWidget* viewer_widget(const std::string& id) const;
  [[nodiscard]] StructureViewer* structure_viewer() const;
  [[nodiscard]] TextViewer* text_viewer() const { return text_; }
  /// Saves what the shown viewer draws as a PNG picture (the Save PNG… button); false when
  /// nothing is shown or the file cannot be written.
  bool save_png(const QString& file) const;

 private:
  void show_current();
  void fill_overlays();
  [[nodiscard]] std::vector<Labelled> find_companions(const std::string& type, bool upstream,
                                                      const std::string& port) const;
  GraphModel& model_;
  RunController& runs_;
  const ViewerRegistry& registry_;
  std::string node_;
  QComboBox* outputs_;
  QComboBox* overlay_;
  QLabel* overlay_label_;
  QLabel* status_;
  QStackedWidget* stack_;
  QLabel* empty_;
  std::map<std::string, QWidget*, std::less<>> widgets_;  // by viewer id
  TextViewer* text_;
  std::string viewer_;
  std::vector<std::string> selection_;
  bool preview_ = false;
  Value shown_;
  QStringList companions_shown_;
};

}  // namespace gemflow::studio
