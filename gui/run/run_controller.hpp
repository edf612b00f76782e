#pragma once
// RunController: runs a snapshot of the workflow through gemflow::run_workflow on a worker
// thread (never the UI thread) and marshals its events back to the GUI thread as queued
// signals. Keeps a session ResultCache (only changed nodes re-run), the lasting DiskCache that
// `gemflow run` uses too (results survive a restart of Studio; none under GEMFLOW_NO_CACHE=1),
// and the latest outputs of every node for the viewers.
#include <atomic>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <thread>

#include <QObject>
#include <QString>

#include <gemflow/executor.hpp>

namespace gemflow::studio {

class RunController : public QObject {
  Q_OBJECT
 public:
  explicit RunController(const Registry& registry, QObject* parent = nullptr);
  ~RunController() override;

  /// Starts a run of `wf` (copied) in the background; `until` runs only that node and what it
  /// needs. Returns false (and emits log) when a run is already going.
  bool start(const Workflow& wf, const std::string& until = {});
  /// Shows a finished sweep point in the viewers: runs `wf` (the workflow with the point's
  /// values set, so its node keys are those of the point's run) into `out_dir`; the nodes the
  /// sweep stored in the lasting cache come from there, the others are computed again.
  /// shown_point() names the point until the next start().
  bool start_point(const Workflow& wf, const QString& point, const std::filesystem::path& out_dir);
  /// The sweep point whose outputs the results are ("" for a run of the workflow itself).
  [[nodiscard]] const QString& shown_point() const { return shown_point_; }
  /// Asks the running nodes to stop (cooperative); finished() follows.
  void cancel();
  [[nodiscard]] bool running() const noexcept { return running_; }
  /// Blocks until the worker thread has finished (tests, shutdown). Events still queued are
  /// delivered by the event loop afterwards.
  void wait();

  /// Latest outputs of a node (empty when it has not produced any since it last changed).
  [[nodiscard]] std::map<std::string, Value> outputs(const std::string& node) const;
  [[nodiscard]] const std::map<std::string, NodeResult>& results() const { return results_; }
  /// The latest intermediate value a running node published for `port` (NodeContext::preview),
  /// empty when there is none. Kept until the run ends (its final outputs then replace it) or
  /// the node fails or is cancelled.
  [[nodiscard]] Value preview(const std::string& node, const std::string& port) const;
  /// The node's outputs as the viewers should show them: its previews during a run, else
  /// outputs(node).
  [[nodiscard]] std::map<std::string, Value> latest(const std::string& node) const;
  /// Keeps a renamed node's outputs under its new id.
  void rename(const std::string& from, const std::string& to);
  /// Forgets a node's outputs (its parameters changed).
  void forget(const std::string& node) {
    results_.erase(node);
    previews_.erase(node);
  }
  void clear_cache();
  /// Forgets the results held in memory (another document is opened); the lasting cache stays
  /// in use, so the first run of the new document takes what earlier runs and sweeps stored.
  void reset_session();
  /// Output folder of runs; default: <cache location>/runs/<workflow name>.
  void set_out_dir(const std::filesystem::path& dir) { out_dir_ = dir; }
  [[nodiscard]] bool has_out_dir() const { return !out_dir_.empty(); }
  [[nodiscard]] std::filesystem::path out_dir_for(const Workflow& wf) const;
  /// The exact folder of the next runs (MainWindow::output_folder()); "" = out_dir_for().
  void set_run_dir(const std::filesystem::path& dir) { run_dir_ = dir; }
  [[nodiscard]] ResultCache& cache() { return cache_; }

 Q_SIGNALS:
  void started(const QString& until);
  void node_state(const QString& node, int state, double progress, const QString& message);
  void log(int level, const QString& node, const QString& text);
  /// A running node published an intermediate value of `port` (preview()); port "" when its
  /// previews were dropped (the node failed or was cancelled).
  void preview_changed(const QString& node, const QString& port);
  /// After the run: ok, cancelled, a one-line summary.
  void finished(bool ok, bool cancelled, const QString& summary);

 private:
  void on_event(const RunEvent& e);
  void on_done(std::shared_ptr<RunResult> r, double seconds);
  /// The results of the `workflow` nodes of `wf` (ids `prefix` + id) from their inner nodes'
  /// (the executor runs them flattened, "node/inner"): done or cached when all inner nodes are,
  /// else the first failure; outputs are the exposed ports' inner outputs. Innermost first.
  void aggregate_subworkflows(const std::string& prefix, const Workflow& wf);

  Workflow last_wf_;  ///< the workflow of the last run (its sub-workflow nodes)

  const Registry& registry_;
  ResultCache cache_;
  std::optional<DiskCache> disk_cache_;
  bool skip_disk_cache_once_ = false;  // after clear_cache(): the next run computes every node
  std::atomic<bool> cancel_{false};
  bool running_ = false;
  std::thread worker_;
  std::map<std::string, NodeResult> results_;
  std::map<std::string, std::map<std::string, Value>> previews_;  // node → port → value
  std::filesystem::path out_dir_;
  std::filesystem::path run_dir_;
  QString shown_point_;
};

}  // namespace gemflow::studio
