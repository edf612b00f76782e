#include "run/run_controller.hpp"

#include <chrono>
#include <cstdlib>

#include <QDir>
#include <QMetaObject>
#include <QPointer>
#include <QStandardPaths>

namespace gemflow::studio {

namespace {
QString q(const std::string& s) { return QString::fromStdString(s); }
}  // namespace

RunController::RunController(const Registry& registry, QObject* parent) : QObject(parent), registry_(registry) {
  const char* off = std::getenv("GEMFLOW_NO_CACHE");
  if (off && *off && std::string(off) != "0") return;
  try {
    disk_cache_.emplace(DiskCache::default_dir());
  } catch (const std::exception&) {  // a cache is an optimisation: Studio runs without one
  }
}

RunController::~RunController() {
  cancel_ = true;
  if (worker_.joinable()) worker_.join();
}

std::filesystem::path RunController::out_dir_for(const Workflow& wf) const {
  std::filesystem::path base = out_dir_;
  if (base.empty()) {
    QString loc = QStandardPaths::writableLocation(QStandardPaths::CacheLocation);
    if (loc.isEmpty()) loc = QDir::tempPath() + QStringLiteral("/gemflow-studio");
    base = std::filesystem::path(loc.toStdString()) / "runs";
  }
  return base / (wf.name.empty() ? std::string("untitled") : wf.name);
}

bool RunController::start(const Workflow& wf, const std::string& until) {
  if (running_) {
    Q_EMIT log(static_cast<int>(LogLevel::Warning), {}, tr("A run is already going; cancel it first."));
    return false;
  }
  if (worker_.joinable()) worker_.join();
  running_ = true;
  cancel_ = false;
  shown_point_.clear();
  RunOptions opt;
  opt.out_dir = run_dir_.empty() ? out_dir_for(wf) : run_dir_;
  opt.cancel = &cancel_;
  opt.until = until;
  opt.previews = true;
  opt.cache = &cache_;
  opt.disk_cache = disk_cache_ && !skip_disk_cache_once_ ? &*disk_cache_ : nullptr;
  skip_disk_cache_once_ = false;
  // Worker threads → GUI thread: every event is copied into a queued call on this object.
  QPointer<RunController> self(this);
  opt.on_event = [self](const RunEvent& e) {
    if (!self) return;
    QMetaObject::invokeMethod(
        self,
        [self, e] {
          if (self) self->on_event(e);
        },
        Qt::QueuedConnection);
  };
  Q_EMIT started(q(until));
  Q_EMIT log(static_cast<int>(LogLevel::Info), {},
             until.empty() ? tr("Run %1 → %2").arg(q(wf.name), q(opt.out_dir.string()))
                           : tr("Run %1 up to %2 → %3").arg(q(wf.name), q(until), q(opt.out_dir.string())));
  last_wf_ = wf;
  worker_ = std::thread([self, wf, opt, this] {
    const auto t0 = std::chrono::steady_clock::now();
    auto r = std::make_shared<RunResult>();
    try {
      *r = run_workflow(wf, registry_, opt);
    } catch (const std::exception& ex) {
      Diagnostic d;
      d.message = std::string("run failed: ") + ex.what();
      r->diagnostics.push_back(d);
    }
    const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    if (self)
      QMetaObject::invokeMethod(
          self,
          [self, r, s] {
            if (self) self->on_done(r, s);
          },
          Qt::QueuedConnection);
  });
  return true;
}

void RunController::cancel() {
  if (!running_) return;
  cancel_ = true;
  Q_EMIT log(static_cast<int>(LogLevel::Warning), {}, tr("Cancelling…"));
}

void RunController::wait() {
  if (worker_.joinable()) worker_.join();
}

void RunController::rename(const std::string& from, const std::string& to) {
  if (auto p = previews_.extract(from); !p.empty()) {
    p.key() = to;
    previews_.insert(std::move(p));
  }
  auto node = results_.extract(from);
  if (node.empty()) return;
  node.key() = to;
  results_.insert(std::move(node));
}

bool RunController::start_point(const Workflow& wf, const QString& point, const std::filesystem::path& out_dir) {
  const std::filesystem::path keep = run_dir_;
  run_dir_ = out_dir;
  const bool ok = start(wf);
  run_dir_ = keep;
  if (ok) shown_point_ = point;
  return ok;
}

void RunController::reset_session() {
  cache_.clear();
  results_.clear();
  previews_.clear();
  shown_point_.clear();
}

void RunController::clear_cache() {
  cache_.clear();
  skip_disk_cache_once_ = true;
  results_.clear();
  previews_.clear();
}

Value RunController::preview(const std::string& node, const std::string& port) const {
  auto it = previews_.find(node);
  if (it == previews_.end()) return {};
  auto p = it->second.find(port);
  return p == it->second.end() ? Value{} : p->second;
}

std::map<std::string, Value> RunController::latest(const std::string& node) const {
  std::map<std::string, Value> out = outputs(node);
  if (auto it = previews_.find(node); it != previews_.end())
    for (const auto& [port, v] : it->second) out[port] = v;
  return out;
}

std::map<std::string, Value> RunController::outputs(const std::string& node) const {
  auto it = results_.find(node);
  return it == results_.end() ? std::map<std::string, Value>{} : it->second.outputs;
}

void RunController::on_event(const RunEvent& e) {
  // A node inside a sub-workflow ("outer/inner"): its outer node shows that it runs or failed
  // (its final state comes with the run's end).
  if (const auto slash = e.node.find('/'); slash != std::string::npos) {
    const QString outer = q(e.node.substr(0, slash));
    if (e.kind == RunEvent::Kind::Progress || (e.kind == RunEvent::Kind::State && e.state == NodeState::Running))
      Q_EMIT node_state(outer, static_cast<int>(NodeState::Running), 0.0, q(e.node + ": " + e.message));
    else if (e.kind == RunEvent::Kind::State && e.state == NodeState::Failed)
      Q_EMIT node_state(outer, static_cast<int>(NodeState::Failed), 0.0, q(e.node + ": " + e.message));
  }
  switch (e.kind) {
    case RunEvent::Kind::State:
      Q_EMIT node_state(q(e.node), static_cast<int>(e.state), e.state == NodeState::Done ? 1.0 : 0.0, q(e.message));
      if (e.state == NodeState::Failed) Q_EMIT log(static_cast<int>(LogLevel::Error), q(e.node), q(e.message));
      // An intermediate value of a node that did not finish is no result: drop it. A node that
      // is done keeps its last preview until the run's end brings its outputs.
      if ((e.state == NodeState::Failed || e.state == NodeState::Cancelled) && previews_.erase(e.node))
        Q_EMIT preview_changed(q(e.node), {});
      break;
    case RunEvent::Kind::Progress:
      Q_EMIT node_state(q(e.node), static_cast<int>(NodeState::Running), e.progress, q(e.message));
      break;
    case RunEvent::Kind::Log: Q_EMIT log(static_cast<int>(e.level), q(e.node), q(e.message)); break;
    case RunEvent::Kind::Preview:
      // Late events of a run that has ended (queued before on_done) are stale.
      if (!running_ || e.value.empty()) break;
      previews_[e.node][e.port] = e.value;
      Q_EMIT preview_changed(q(e.node), q(e.port));
      break;
  }
}

void RunController::aggregate_subworkflows(const std::string& prefix, const Workflow& wf) {
  for (const auto& n : wf.nodes) {
    if (n.type != kSubWorkflowType || !n.sub) continue;
    const std::string id = prefix + n.id;
    const Workflow& inner = n.sub->workflow;
    aggregate_subworkflows(id + "/", inner);
    NodeResult agg;
    agg.state = NodeState::Cached;
    bool complete = true;
    for (const auto& m : inner.nodes) {
      auto it = results_.find(id + "/" + m.id);
      if (it == results_.end()) {
        complete = false;  // not run (failed, cancelled or left out by "run to")
        continue;
      }
      if (it->second.state == NodeState::Done) agg.state = NodeState::Done;
      agg.seconds += it->second.seconds;
    }
    if (!complete) {
      results_.erase(id);
      continue;
    }
    for (const auto& x : inner.outputs)
      if (!x.targets.empty())
        if (auto it = results_.find(id + "/" + x.targets.front().first); it != results_.end())
          if (auto v = it->second.outputs.find(x.targets.front().second); v != it->second.outputs.end())
            agg.outputs[x.name] = v->second;
    results_[id] = std::move(agg);
  }
}

void RunController::on_done(std::shared_ptr<RunResult> r, double seconds) {
  if (worker_.joinable()) worker_.join();
  running_ = false;
  previews_.clear();  // the outputs below replace them
  int done = 0, cached = 0, failed = 0;
  for (auto& [id, nr] : r->nodes) {
    // Final states, also for nodes whose last event was dropped or never sent.
    Q_EMIT node_state(q(id), static_cast<int>(nr.state), nr.state == NodeState::Done ? 1.0 : 0.0, q(nr.error));
    if (nr.state == NodeState::Done || nr.state == NodeState::Cached) results_[id] = nr;
    done += nr.state == NodeState::Done;
    cached += nr.state == NodeState::Cached;
    failed += nr.state == NodeState::Failed;
  }
  aggregate_subworkflows({}, last_wf_);
  for (const auto& n : last_wf_.nodes) {
    if (n.type != kSubWorkflowType) continue;
    if (auto it = results_.find(n.id); it != results_.end()) {
      Q_EMIT node_state(q(n.id), static_cast<int>(it->second.state), 1.0, {});
      continue;
    }
    // not complete: the inner nodes' worst state (failed, cancelled, skipped), else not run
    const auto rank = [](NodeState x) {
      return x == NodeState::Failed ? 3 : x == NodeState::Cancelled ? 2 : x == NodeState::Skipped ? 1 : 0;
    };
    NodeState st = NodeState::Idle;
    for (const auto& [id, nr] : r->nodes)
      if (id.starts_with(n.id + "/") && rank(nr.state) > rank(st)) st = nr.state;
    Q_EMIT node_state(q(n.id), static_cast<int>(st), 0.0, {});
  }
  for (const auto& d : r->diagnostics) Q_EMIT log(static_cast<int>(LogLevel::Error), q(d.node), q(d.str()));
  QString summary;
  if (!r->diagnostics.empty())
    summary = tr("Not run: %n validation error(s)", nullptr, static_cast<int>(r->diagnostics.size()));
  else
    summary = tr("%1 in %2 s: %3 run, %4 cached, %5 failed")
                  .arg(r->cancelled ? tr("Cancelled") : (r->ok() ? tr("Finished") : tr("Finished with errors")))
                  .arg(seconds, 0, 'f', 2)
                  .arg(done)
                  .arg(cached)
                  .arg(failed);
  if (!r->provenance.empty()) summary += tr("; provenance %1").arg(q(r->provenance.string()));
  Q_EMIT log(static_cast<int>(r->ok() ? LogLevel::Info : LogLevel::Warning), {}, summary);
  Q_EMIT finished(r->ok(), r->cancelled, summary);
}

}  // namespace gemflow::studio
