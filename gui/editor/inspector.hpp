#pragma once
// Inspector: the parameter editor of the selected node, generated from its ParamSpecs only
// (no node-specific code). Bool → check box; Int/Float → spin box with the spec's limits and
// unit; Choice → combo; Device → combo of the devices present; paths → text + file picker
// (input paths relative to the workflow file); text → line edit. Tooltips come from the docs.
// Every edit goes through GraphModel::set_param (ParamSpec::check): an invalid value is shown
// red with the reason and never applied. The node id is editable (rename; links follow). With
// no node selected it edits the workflow's name and description.
#include <filesystem>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include <QWidget>

#include "model/graph_model.hpp"

class QFileSystemWatcher;
class QFormLayout;
class QLabel;
class QLineEdit;
class QPlainTextEdit;
class QVBoxLayout;

namespace gemflow::studio {

class InspectorWidget : public QWidget {
  Q_OBJECT
 public:
  explicit InspectorWidget(GraphModel& model, QWidget* parent = nullptr);
  ~InspectorWidget() override;
  /// Shows a node's parameters ("" clears).
  void show_node(const std::string& id);
  [[nodiscard]] const std::string& node() const { return node_; }
  /// The editor widget of a parameter (for tests), nullptr when absent.
  [[nodiscard]] QWidget* editor(const std::string& param) const;
  /// Run state line under the title ("failed: message"; "" hides it).
  void set_status(const QString& text, const QColor& color);
  /// Re-reads what the panel shows from the model and the disk (a run may have written an
  /// input file).
  void refresh();
  /// Other nodes of the shown node's type that each edit applies to as well (multi-selection),
  /// as one undo step per edit.
  void set_also(std::vector<std::string> ids);
  [[nodiscard]] const std::vector<std::string>& also() const { return also_; }
  /// Problems of the shown node found before running (GraphScene::problems_of): the
  /// parameters they name are marked, all are listed under the title.
  void set_problems(std::vector<Diagnostic> problems);
  /// Opens the documentation part of the shown node.
  void show_docs();

 protected:
  bool eventFilter(QObject* watched, QEvent* e) override;

 Q_SIGNALS:
  void message(const QString& text);

 private:
  QWidget* make_editor(const ParamSpec& spec);
  void build_workflow_page(QVBoxLayout* lay);
  void commit_description();
  void refresh_values();
  void update_facts();
  void check_paths();
  void watch_folder_of(const std::filesystem::path& file);
  /// Applies `text` (or `value`) to the parameter; marks `w` red with the reason on refusal.
  bool apply(QWidget* w, const ParamSpec& spec, const std::variant<std::string, ParamValue>& v);
  static void mark(QWidget* w, const QString& error, const QString& tooltip);

  GraphModel& model_;
  std::string node_;
  QVBoxLayout* outer_;
  QWidget* body_ = nullptr;
  QLabel* status_ = nullptr;
  QLineEdit* workflow_name_ = nullptr;
  QPlainTextEdit* workflow_description_ = nullptr;
  QLabel* facts_ = nullptr;
  QFileSystemWatcher* watcher_;
  bool docs_open_ = false;
  std::map<std::string, QWidget*> editors_;
  std::map<std::string, std::function<void()>> refresh_;
  std::map<std::string, std::function<void()>> path_checks_;
  std::map<std::string, QString> tooltips_;
  std::vector<std::string> also_;
  std::vector<Diagnostic> problems_;
  QLabel* problems_label_ = nullptr;
  QLabel* also_label_ = nullptr;
  void show_problems();
};

}  // namespace gemflow::studio
