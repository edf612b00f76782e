#pragma once
// SweepDialog: "Run ▸ Run Sweep…". The user picks parameters of the workflow's nodes and gives
// their values in the syntax of `gemflow run --sweep` (a,b,c · A..B · A:B:S · A:B#N · @file),
// every combination or zipped. The point count and the checks of gemflow/sweep.hpp (unknown
// parameter, a value outside its limits, an empty range, too many points) show as the values
// are typed, before anything runs.
//
// Running is `gemflow run W.yaml --sweep ... --out DIR --json` in a child process: the sweep
// runner of the command line (resume, --retry-failed, the summary table, the disk cache shared
// with Slurm and MPI runs) is used as it is, Studio stays responsive, and a crashing point
// cannot take Studio down. Each finished point updates its row (done, failed, cancelled; points
// done before and still valid are "cached"); Cancel sends SIGTERM (the command cancels as on
// Ctrl-C); running again resumes. At the end the table is DIR/sweep.json; a row opens its
// point's folder, and a finished point (double-click, or Show in Viewers) shows its outputs in
// Studio's viewers: the workflow with the point's values set runs in Studio, its nodes found in
// the lasting result cache that the sweep filled (same node keys), computed again otherwise.
#include <filesystem>
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include <QDialog>
#include <QProcess>
#include <QString>

#include <gemflow/sweep.hpp>

class QCheckBox;
class QLabel;
class QLineEdit;
class QComboBox;
class QPlainTextEdit;
class QProgressBar;
class QPushButton;
class QTableWidget;
class QUrl;

namespace gemflow::studio {

class GraphModel;

class SweepDialog : public QDialog {
  Q_OBJECT
 public:
  /// `out_dir`: the sweep folder (points/, sweep.csv). The rows start from the workflow's
  /// `sweep:` section, else one row for `node` (its first parameter) when given.
  SweepDialog(GraphModel& model, std::filesystem::path out_dir, const std::string& node = {},
              QWidget* parent = nullptr);
  ~SweepDialog() override;

  /// Adds a row: "node.param" and its values.
  void add_axis(const QString& target, const QString& values);
  void set_zip(bool on);
  void set_force(bool on);
  void set_retry_failed(bool on);
  /// The sweep of the rows as `--sweep` arguments ("node.param=VALUES"; @file made absolute
  /// against the workflow's folder, as in a `sweep:` section).
  [[nodiscard]] std::vector<std::string> sweep_args() const;

  /// The checks made before running (gemflow/sweep.hpp): the points, or the first problem.
  struct Check {
    std::size_t points = 0;
    QString error;
    Sweep sweep;
    [[nodiscard]] bool ok() const { return error.isEmpty(); }
  };
  [[nodiscard]] Check check() const;

  /// Starts the sweep (the workflow is saved first through `save_workflow`); false with the
  /// reason in the log when it cannot start.
  bool start();
  /// Asks the running sweep to stop (SIGTERM: the points running are cancelled, the others stay
  /// pending); finished() follows.
  void cancel();
  [[nodiscard]] bool running() const;
  /// Writes the rows into the workflow's `sweep:` section (one undo step of the document).
  void save_to_workflow();

  [[nodiscard]] std::filesystem::path out_dir() const { return out_dir_; }
  void set_out_dir(const std::filesystem::path& dir) { out_dir_ = dir; }
  /// The `gemflow` program run (default: next to Studio's executable, else on PATH; the
  /// environment variable GEMFLOW_CLI overrides both).
  void set_program(const QString& path) { program_ = path; }
  [[nodiscard]] const QString& program() const { return program_; }
  /// Plugin folders passed as --plugin-path (those Studio loaded its plugins from).
  void set_plugin_dirs(std::vector<std::filesystem::path> dirs) { plugin_dirs_ = std::move(dirs); }
  /// The folder of the point of a row of the points table.
  [[nodiscard]] std::filesystem::path point_folder(int row) const;
  /// Opens a point's folder (url_opener).
  void open_point(int row);
  /// Shows a finished point (done or cached) in the viewers through show_in_viewers; false with
  /// the reason in the log otherwise.
  bool show_point(int row);
  /// The workflow of a point: the document's with the point's swept values set.
  [[nodiscard]] std::optional<Workflow> point_workflow(int row) const;
  /// The state shown for a point ("pending", "running", "done", "cached", "failed", ...).
  [[nodiscard]] QString state_of(const QString& point) const;

  /// Saves the workflow before a run; false stops the run (set by the main window).
  std::function<bool()> save_workflow;
  /// Shows a point's outputs (set by the main window): the point's name and workflow; false
  /// when it cannot now (a run is going).
  std::function<bool(const QString& point, const Workflow& wf)> show_in_viewers;
  /// How folders are opened (tests replace QDesktopServices::openUrl).
  std::function<bool(const QUrl&)> url_opener;

  [[nodiscard]] QTableWidget* axes_table() const { return axes_; }
  [[nodiscard]] QTableWidget* points_table() const { return points_; }
  [[nodiscard]] QLabel* summary() const { return summary_; }
  [[nodiscard]] QProgressBar* progress() const { return progress_; }
  [[nodiscard]] QPlainTextEdit* log() const { return log_; }

 Q_SIGNALS:
  /// A point ended in this run (its name and state).
  void point_finished(const QString& name, const QString& state);
  /// The child process ended (its exit code; 3 when cancelled).
  void finished(int exit_code);

 private:
  void refresh_check();
  void fill_points(const Sweep& sweep);
  void set_row_state(int row, const QString& state, double seconds, const QString& error);
  void on_stdout();
  void on_done(int code);
  void load_table();
  void append_log(const QString& text);

  GraphModel& model_;
  std::filesystem::path out_dir_;
  QString program_;
  std::vector<std::filesystem::path> plugin_dirs_;
  QTableWidget* axes_;
  QComboBox* target_;
  QCheckBox* zip_;
  QCheckBox* force_;
  QCheckBox* retry_;
  QLabel* summary_;
  QLineEdit* out_edit_;
  QPushButton* run_;
  QPushButton* cancel_;
  QProgressBar* progress_;
  QTableWidget* points_;
  QPlainTextEdit* log_;
  QProcess* process_ = nullptr;
  QByteArray pending_;
  std::map<QString, int> row_of_;  ///< point name → row of points_
  std::set<QString> ran_;          ///< points reported by this run
  std::vector<std::string> axis_names_;
  bool cancelled_ = false;
};

}  // namespace gemflow::studio
