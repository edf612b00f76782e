#pragma once
// The Studio main window: the editor in the middle, palette / inspector / viewers / log docks,
// File (New, Open, Recent, Save, Save As with an unsaved-changes prompt), Edit (undo, redo,
// copy, paste, duplicate, delete), Run (run, run to selected, cancel) and a Welcome page.
#include <filesystem>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include <QMainWindow>
#include <QPointF>
#include <QPointer>

#include <gemflow/plugin_loader.hpp>

#include "editor/style.hpp"

class QAction;
class QListWidget;
class QMenu;
class QPlainTextEdit;
class QProgressBar;
class QUrl;
class QStackedWidget;

namespace gemflow::studio {

class GraphModel;
class GraphScene;
class GraphView;
class InspectorWidget;
class PaletteWidget;
class RunController;
class SweepDialog;
class ViewerPanel;

/// The example opened from the Welcome page: workflows/nmr_structure.yaml from the source
/// tree (in-tree builds) or <prefix>/share/gemflow/workflows; "" when not found.
[[nodiscard]] std::filesystem::path example_workflow(const std::string& name = "nmr_structure.yaml");

class MainWindow : public QMainWindow {
  Q_OBJECT
 public:
  MainWindow(const Registry& registry, std::vector<PluginRecord> plugins, QWidget* parent = nullptr);
  ~MainWindow() override;

  /// Opens a workflow (asks to save unsaved changes first unless `force`); false on failure
  /// (the reason is logged and shown).
  bool open_file(const QString& path, bool force = false);
  bool save();
  bool save_as();
  void new_file();
  /// Runs the whole graph, or (selected = true) up to the selected node.
  void run(bool selected = false);
  void cancel_run();
  void show_welcome();
  void show_editor();
  /// Sizes the docks for the window's current size: palette and inspector at the sides, the
  /// log and the (wider) viewers along the bottom.
  void arrange_docks();

  [[nodiscard]] GraphModel& model() { return *model_; }
  [[nodiscard]] GraphScene& scene() { return *scene_; }
  [[nodiscard]] GraphView& view() { return *view_; }
  [[nodiscard]] RunController& runs() { return *runs_; }
  [[nodiscard]] ViewerPanel& viewers() { return *viewers_; }
  [[nodiscard]] InspectorWidget& inspector() { return *inspector_; }
  [[nodiscard]] PaletteWidget& palette() { return *palette_; }
  [[nodiscard]] QString log_text() const;
  /// Appends a line to the log panel.
  void log(int level, const QString& node, const QString& text);
  /// The recent files of this user and application, newest first.
  [[nodiscard]] QStringList recent_files() const;
  /// Skip the unsaved-changes prompt (tests).
  void set_prompt_enabled(bool on) { prompt_ = on; }

  /// Where this workflow's runs write: the folder chosen for it (Run ▸ Output Folder, kept per
  /// workflow file in the user's settings), else <workflow folder>/out/<name> as `gemflow run`
  /// from that folder, else (never saved) the user cache's runs/<name>.
  [[nodiscard]] std::filesystem::path output_folder() const;
  /// Chooses the output folder of the current workflow ("" = back to the default).
  void set_output_folder(const std::filesystem::path& dir);
  /// Opens the output folder in the desktop's file manager (created first).
  void open_output_folder();
  /// How folders and URLs are opened (tests replace QDesktopServices::openUrl).
  std::function<bool(const QUrl&)> url_opener;
  [[nodiscard]] QProgressBar* run_progress() const { return progress_; }
  [[nodiscard]] QPlainTextEdit* log_widget() const { return log_; }
  // ---- sub-workflows ------------------------------------------------------------------
  /// Opens the inner file of sub-workflow node `id` for editing in a window of its own (a
  /// window already showing that file is raised). Returns it; nullptr when the node has no file
  /// (the reason goes to the status bar).
  MainWindow* open_subworkflow(const std::string& id);
  /// Collapses nodes (default: the selection) into a new sub-workflow file, asked for with
  /// file_chooser; one undo step. Returns the new node's id, "" when nothing changed.
  std::string collapse_selection(std::vector<std::string> ids = {});
  /// How a file is asked for (tests replace the file dialogs): (title, suggested file, save)
  /// → the file, "" when cancelled.
  std::function<QString(const QString& title, const QString& suggestion, bool save)> file_chooser;
  /// Every Studio window open now (saving a file refreshes the sub-workflow nodes of the others).
  [[nodiscard]] static const std::vector<MainWindow*>& windows();
  /// The window this one was opened from by open_subworkflow (nullptr: none or closed).
  [[nodiscard]] MainWindow* parent_workflow_window() const;

  // ---- sweeps --------------------------------------------------------------------------
  /// Opens the sweep dialog of this workflow (Run ▸ Run Sweep…), for the selected node's
  /// parameters when its `sweep:` section is empty. The window owns it.
  SweepDialog* open_sweep_dialog();

  /// Theme from the user's settings (main() applies it at start).
  [[nodiscard]] static Theme theme_setting();
  /// Applies and stores the theme.
  void set_theme(Theme t);

 protected:
  bool eventFilter(QObject* watched, QEvent* e) override;
  void closeEvent(QCloseEvent* e) override;

 private:
  void build_actions();
  void build_docks();
  QWidget* build_welcome();
  bool maybe_save();
  void update_title();
  void add_recent(const QString& path);
  void fill_recent();
  void invalidate_from(const std::string& node);
  /// The Inspector's state line from the inspected node's state (after any state change).
  void update_inspector_status();
  void copy_selection(bool cut);
  void paste();
  void on_run_finished();
  void update_progress(const QString& node, int state, double progress);
  void follow_selection(const QString& id);

  const Registry& registry_;
  std::vector<PluginRecord> plugins_;
  GraphModel* model_;
  GraphScene* scene_;
  GraphView* view_;
  RunController* runs_;
  PaletteWidget* palette_ = nullptr;
  InspectorWidget* inspector_ = nullptr;
  ViewerPanel* viewers_ = nullptr;
  QPlainTextEdit* log_ = nullptr;
  QStackedWidget* central_ = nullptr;
  QWidget* welcome_ = nullptr;
  QListWidget* welcome_recent_ = nullptr;
  QMenu* recent_menu_ = nullptr;
  QAction *run_ = nullptr, *run_sel_ = nullptr, *cancel_ = nullptr;
  QProgressBar* progress_ = nullptr;
  std::map<std::string, double> run_nodes_;  ///< node of the current run → its fraction done
  bool prompt_ = true;
  int paste_count_ = 0;
  /// Tells the other windows that `file` was saved (their sub-workflow nodes reload it).
  void announce_saved(const std::filesystem::path& file);
  void add_linked_subworkflow(QPointF scene_pos, const QString& port_node, const QString& port, bool port_is_output);
  QPointer<MainWindow> parent_window_;
  QPointer<SweepDialog> sweep_dialog_;
};

}  // namespace gemflow::studio
