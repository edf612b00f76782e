#include "run/sweep_dialog.hpp"

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <sstream>

#include <QCheckBox>
#include <QColor>
#include <QComboBox>
#include <QCoreApplication>
#include <QDesktopServices>
#include <QDir>
#include <QFileInfo>
#include <QFormLayout>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QJsonDocument>
#include <QJsonObject>
#include <QLabel>
#include <QLineEdit>
#include <QPlainTextEdit>
#include <QProgressBar>
#include <QPushButton>
#include <QSplitter>
#include <QStandardPaths>
#include <QTableWidget>
#include <QUrl>
#include <QVBoxLayout>

#include "model/graph_model.hpp"

namespace gemflow::studio {

namespace {
namespace fs = std::filesystem;
QString q(const std::string& s) { return QString::fromStdString(s); }

std::string read_text(const fs::path& file) {
  std::ifstream in(file, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

/// The `gemflow` program: GEMFLOW_CLI, else beside Studio (installed: both in bin/), else PATH.
QString default_program() {
  if (const char* env = std::getenv("GEMFLOW_CLI"); env && *env) return QString::fromLocal8Bit(env);
  QString beside = QDir(QCoreApplication::applicationDirPath()).filePath(QStringLiteral("gemflow"));
  if (QFileInfo(beside).isExecutable()) return beside;
  return QStandardPaths::findExecutable(QStringLiteral("gemflow"));
}

QString state_text(PointState s) { return QString::fromLatin1(to_string(s)); }

enum Column { kPoint = 0, kState = 1, kFirstValue = 2 };
}  // namespace

SweepDialog::SweepDialog(GraphModel& model, fs::path out_dir, const std::string& node, QWidget* parent)
    : QDialog(parent),
      model_(model),
      out_dir_(std::move(out_dir)),
      program_(default_program()),
      axes_(new QTableWidget(0, 2)),
      target_(new QComboBox),
      zip_(new QCheckBox(tr("Zip: pair the k-th values (else every combination)"))),
      force_(new QCheckBox(tr("Allow more than %1 points").arg(kSweepPointLimit))),
      retry_(new QCheckBox(tr("Run the failed points again"))),
      summary_(new QLabel),
      out_edit_(new QLineEdit),
      run_(new QPushButton(tr("Run"))),
      cancel_(new QPushButton(tr("Cancel Sweep"))),
      progress_(new QProgressBar),
      points_(new QTableWidget),
      log_(new QPlainTextEdit) {
  setObjectName(QStringLiteral("sweep_dialog"));
  setWindowTitle(tr("Sweep of %1").arg(q(model_.workflow().name)));
  url_opener = [](const QUrl& u) { return QDesktopServices::openUrl(u); };
  auto* lay = new QVBoxLayout(this);

  // Parameters and values.
  axes_->setObjectName(QStringLiteral("sweep_axes"));
  axes_->setHorizontalHeaderLabels({tr("Parameter (node.param)"), tr("Values: a,b,c · A..B · A:B:S · A:B#N · @file")});
  axes_->horizontalHeader()->setSectionResizeMode(1, QHeaderView::Stretch);
  axes_->horizontalHeader()->setSectionResizeMode(0, QHeaderView::ResizeToContents);
  axes_->verticalHeader()->setVisible(false);
  axes_->setMinimumHeight(110);
  lay->addWidget(axes_);
  auto* add_row = new QHBoxLayout;
  target_->setObjectName(QStringLiteral("sweep_target"));
  for (const auto& n : model_.workflow().nodes)
    if (const NodeSpec* s = model_.spec_of(n.id))
      for (const auto& p : s->params) target_->addItem(q(n.id + "." + p.name));
  auto* add = new QPushButton(tr("Add Parameter"));
  auto* remove = new QPushButton(tr("Remove Row"));
  add_row->addWidget(target_, 1);
  add_row->addWidget(add);
  add_row->addWidget(remove);
  lay->addLayout(add_row);
  connect(add, &QPushButton::clicked, this, [this] { add_axis(target_->currentText(), {}); });
  connect(remove, &QPushButton::clicked, this, [this] {
    if (axes_->currentRow() >= 0) axes_->removeRow(axes_->currentRow());
    refresh_check();
  });
  connect(axes_, &QTableWidget::itemChanged, this, [this] { refresh_check(); });

  auto* opts = new QFormLayout;
  opts->addRow(zip_);
  opts->addRow(force_);
  opts->addRow(retry_);
  out_edit_->setObjectName(QStringLiteral("sweep_out"));
  out_edit_->setText(q(out_dir_.string()));
  connect(out_edit_, &QLineEdit::editingFinished, this,
          [this] { out_dir_ = out_edit_->text().trimmed().toStdString(); });
  opts->addRow(tr("Sweep folder:"), out_edit_);
  lay->addLayout(opts);
  connect(zip_, &QCheckBox::toggled, this, [this] { refresh_check(); });
  connect(force_, &QCheckBox::toggled, this, [this] { refresh_check(); });

  summary_->setObjectName(QStringLiteral("sweep_summary"));
  summary_->setWordWrap(true);
  summary_->setTextInteractionFlags(Qt::TextSelectableByMouse);
  lay->addWidget(summary_);

  auto* buttons = new QHBoxLayout;
  auto* save = new QPushButton(tr("Save to Workflow"));
  save->setObjectName(QStringLiteral("sweep_save"));
  save->setToolTip(
      tr("Write these parameters and values into the workflow's sweep: section (gemflow run then sweeps them)"));
  auto* open_folder = new QPushButton(tr("Open Point Folder"));
  auto* show = new QPushButton(tr("Show in Viewers"));
  show->setObjectName(QStringLiteral("sweep_show"));
  show->setToolTip(tr("Show the outputs of the selected finished point in Studio's viewers"));
  run_->setObjectName(QStringLiteral("sweep_run"));
  run_->setToolTip(tr("Run the points; points done before are kept (resume)"));
  cancel_->setObjectName(QStringLiteral("sweep_cancel"));
  cancel_->setEnabled(false);
  auto* close = new QPushButton(tr("Close"));
  buttons->addWidget(save);
  buttons->addWidget(open_folder);
  buttons->addWidget(show);
  buttons->addStretch(1);
  buttons->addWidget(run_);
  buttons->addWidget(cancel_);
  buttons->addWidget(close);
  lay->addLayout(buttons);
  connect(save, &QPushButton::clicked, this, [this] { save_to_workflow(); });
  connect(open_folder, &QPushButton::clicked, this, [this] { open_point(points_->currentRow()); });
  connect(show, &QPushButton::clicked, this, [this] { show_point(points_->currentRow()); });
  connect(run_, &QPushButton::clicked, this, [this] { start(); });
  connect(cancel_, &QPushButton::clicked, this, [this] { cancel(); });
  connect(close, &QPushButton::clicked, this, &QDialog::close);

  progress_->setObjectName(QStringLiteral("sweep_progress"));
  progress_->setFormat(tr("%v of %m points"));
  progress_->setValue(0);
  lay->addWidget(progress_);
  auto* split = new QSplitter(Qt::Vertical);
  points_->setObjectName(QStringLiteral("sweep_points"));
  points_->setEditTriggers(QAbstractItemView::NoEditTriggers);
  points_->setSelectionBehavior(QAbstractItemView::SelectRows);
  points_->verticalHeader()->setVisible(false);
  points_->setToolTip(
      tr("Double-click a finished point to show its outputs in the viewers, another point to open its folder"));
  connect(points_, &QTableWidget::cellDoubleClicked, this, [this](int row, int) {
    const QString st = points_->item(row, kState) ? points_->item(row, kState)->text() : QString();
    if (st == QLatin1String("done") || st == QLatin1String("cached")) show_point(row);
    else open_point(row);
  });
  log_->setObjectName(QStringLiteral("sweep_log"));
  log_->setReadOnly(true);
  log_->setMaximumBlockCount(2000);
  split->addWidget(points_);
  split->addWidget(log_);
  split->setStretchFactor(0, 3);
  split->setSizes({420, 140});
  axes_->setMaximumHeight(170);
  lay->addWidget(split, 1);
  resize(900, 700);

  // The rows: the workflow's own sweep: section, else the node asked for.
  const WorkflowSweep& ws = model_.workflow().sweep;
  for (const auto& e : ws.entries) {
    QString values;
    if (e.is_list) {
      QStringList l;
      for (const auto& v : e.list) l << q(v).replace(QLatin1Char(','), QStringLiteral("\\,"));
      values = l.join(QLatin1Char(','));
    } else {
      values = q(e.text);
    }
    add_axis(q(e.target), values);
  }
  zip_->setChecked(ws.zip);
  if (ws.empty() && !node.empty())
    if (const NodeSpec* s = model_.spec_of(node); s && !s->params.empty())
      add_axis(q(node + "." + s->params.front().name), {});
  refresh_check();
}

SweepDialog::~SweepDialog() {
  if (process_ && process_->state() != QProcess::NotRunning) {
    process_->disconnect(this);
    process_->terminate();
    if (!process_->waitForFinished(15000)) process_->kill();
    process_->waitForFinished(2000);
  }
}

void SweepDialog::add_axis(const QString& target, const QString& values) {
  const QSignalBlocker block(axes_);
  const int r = axes_->rowCount();
  axes_->insertRow(r);
  axes_->setItem(r, 0, new QTableWidgetItem(target));
  axes_->setItem(r, 1, new QTableWidgetItem(values));
  axes_->setCurrentCell(r, 1);
  refresh_check();
}

void SweepDialog::set_zip(bool on) { zip_->setChecked(on); }
void SweepDialog::set_force(bool on) { force_->setChecked(on); }
void SweepDialog::set_retry_failed(bool on) { retry_->setChecked(on); }

std::vector<std::string> SweepDialog::sweep_args() const {
  std::vector<std::string> r;
  const fs::path base = fs::absolute(model_.workflow().base_dir());
  for (int i = 0; i < axes_->rowCount(); ++i) {
    const QString target = axes_->item(i, 0) ? axes_->item(i, 0)->text().trimmed() : QString();
    QString values = axes_->item(i, 1) ? axes_->item(i, 1)->text().trimmed() : QString();
    if (target.isEmpty()) continue;
    // @file is relative to the workflow's folder, as in its sweep: section (--sweep reads it
    // against the current folder: give the command an absolute path).
    if (values.startsWith(QLatin1Char('@')) && fs::path(values.mid(1).toStdString()).is_relative())
      values = QLatin1Char('@') + q((base / values.mid(1).toStdString()).lexically_normal().string());
    r.push_back((target + QLatin1Char('=') + values).toStdString());
  }
  return r;
}

SweepDialog::Check SweepDialog::check() const {
  Check c;
  const auto args = sweep_args();
  if (args.empty()) {
    c.error = tr("Add a parameter and its values.");
    return c;
  }
  std::vector<SweepAxis> axes;
  for (const auto& a : args) {
    auto parsed = parse_sweep_arg(a, model_.workflow(), model_.registry());
    if (auto* d = std::get_if<Diagnostic>(&parsed)) {
      c.error = q(d->message + (d->hint.empty() ? "" : " (" + d->hint + ")"));
      if (!d->node.empty() && c.error.indexOf(q(d->node)) < 0) c.error = q(d->node + "." + d->param + ": ") + c.error;
      return c;
    }
    axes.push_back(std::move(std::get<SweepAxis>(parsed)));
  }
  auto ex = expand_sweep(std::move(axes), zip_->isChecked(), force_->isChecked());
  if (auto* d = std::get_if<Diagnostic>(&ex)) {
    c.error = q(d->message);
    return c;
  }
  c.sweep = std::move(std::get<Sweep>(ex));
  c.points = c.sweep.points.size();
  // Each point as the command checks it before running anything (a swept value against the
  // rules between parameters, a workflow problem): the first points only, to answer at once.
  constexpr std::size_t kValidated = 200;
  for (std::size_t i = 0; i < std::min(c.sweep.points.size(), kValidated); ++i) {
    Workflow pw = model_.workflow();
    apply_sweep_point(pw, c.sweep, c.sweep.points[i]);
    for (const auto& d : validate(pw, model_.registry()))
      if (d.severity == Diagnostic::Severity::Error) {
        c.error = tr("point %1: %2")
                      .arg(q(c.sweep.points[i].name), q(d.node.empty() ? d.log_str() : d.node + ": " + d.log_str()));
        return c;
      }
  }
  return c;
}

void SweepDialog::refresh_check() {
  const Check c = check();
  if (!c.ok()) {
    summary_->setText(QStringLiteral("<span style='color:#e05050'>%1</span>").arg(c.error.toHtmlEscaped()));
    run_->setEnabled(false);
    return;
  }
  summary_->setText(tr("%n point(s), each in %1/points/NAME", nullptr, static_cast<int>(c.points))
                        .arg(q(out_dir_.string()).toHtmlEscaped()));
  run_->setEnabled(!running());
  if (!running()) fill_points(c.sweep);
}

void SweepDialog::fill_points(const Sweep& sweep) {
  axis_names_.clear();
  for (const auto& a : sweep.axes) axis_names_.push_back(a.target());
  points_->clear();
  row_of_.clear();
  QStringList headers{tr("Point"), tr("State")};
  for (const auto& a : axis_names_) headers << q(a);
  headers << tr("Seconds") << tr("Error");
  points_->setColumnCount(static_cast<int>(headers.size()));
  points_->setHorizontalHeaderLabels(headers);
  points_->setRowCount(static_cast<int>(sweep.points.size()));
  for (const auto& p : sweep.points) {
    const int r = static_cast<int>(p.index);
    points_->setItem(r, kPoint, new QTableWidgetItem(q(p.name)));
    for (std::size_t k = 0; k < p.values.size(); ++k)
      points_->setItem(r, kFirstValue + static_cast<int>(k), new QTableWidgetItem(q(format_param(p.values[k]))));
    row_of_[q(p.name)] = r;
    // what the folder says now (a sweep run before: resume)
    PointState st = PointState::Pending;
    double seconds = 0;
    std::string error;
    if (auto rec = parse_point_record(read_text(out_dir_ / "points" / p.name / "point.json"))) {
      st = rec->state;
      seconds = rec->seconds;
      error = rec->error;
    }
    set_row_state(r, state_text(st), seconds, q(error));
  }
  points_->resizeColumnsToContents();
  progress_->setRange(0, static_cast<int>(sweep.points.size()));
  progress_->setValue(0);
}

void SweepDialog::set_row_state(int row, const QString& state, double seconds, const QString& error) {
  if (row < 0 || row >= points_->rowCount()) return;
  const int secs_col = kFirstValue + static_cast<int>(axis_names_.size());
  auto* item = new QTableWidgetItem(state);
  QColor c;
  if (state == QLatin1String("done")) c = QColor(0x3c, 0xa0, 0x50);
  else if (state == QLatin1String("cached")) c = QColor(0x50, 0x90, 0xc0);
  else if (state == QLatin1String("failed") || state == QLatin1String("interrupted")) c = QColor(0xd0, 0x40, 0x40);
  else if (state == QLatin1String("running")) c = QColor(0xe0, 0xa0, 0x30);
  if (c.isValid()) item->setForeground(c);
  points_->setItem(row, kState, item);
  points_->setItem(row, secs_col, new QTableWidgetItem(seconds > 0 ? QString::number(seconds, 'f', 2) : QString()));
  points_->setItem(row, secs_col + 1, new QTableWidgetItem(error));
}

QString SweepDialog::state_of(const QString& point) const {
  auto it = row_of_.find(point);
  if (it == row_of_.end() || !points_->item(it->second, kState)) return {};
  return points_->item(it->second, kState)->text();
}

bool SweepDialog::running() const { return process_ && process_->state() != QProcess::NotRunning; }

bool SweepDialog::start() {
  if (running()) return false;
  const Check c = check();
  if (!c.ok()) {
    append_log(tr("Not started: %1").arg(c.error));
    return false;
  }
  if (save_workflow && !save_workflow()) {
    append_log(tr("Not started: the workflow must be saved first (the sweep runs the file)."));
    return false;
  }
  if (model_.workflow().file.empty()) {
    append_log(tr("Not started: the workflow has no file yet."));
    return false;
  }
  if (program_.isEmpty() || !QFileInfo(program_).isExecutable()) {
    append_log(
        tr("Not started: the gemflow command was not found (install it beside Studio, put it on PATH, or set "
           "GEMFLOW_CLI)."));
    return false;
  }
  fill_points(c.sweep);
  QStringList args;
  for (const auto& d : plugin_dirs_) args << QStringLiteral("--plugin-path") << q(d.string());
  args << QStringLiteral("run") << q(model_.workflow().file.string()) << QStringLiteral("--out") << q(out_dir_.string())
       << QStringLiteral("--json");
  for (const auto& a : sweep_args()) args << QStringLiteral("--sweep") << q(a);
  if (zip_->isChecked()) args << QStringLiteral("--zip");
  if (force_->isChecked()) args << QStringLiteral("--force");
  if (retry_->isChecked()) args << QStringLiteral("--retry-failed");

  delete process_;
  process_ = new QProcess(this);
  process_->setWorkingDirectory(q(fs::absolute(model_.workflow().base_dir()).string()));
  connect(process_, &QProcess::readyReadStandardOutput, this, &SweepDialog::on_stdout);
  connect(process_, &QProcess::readyReadStandardError, this,
          [this] { append_log(QString::fromUtf8(process_->readAllStandardError()).trimmed()); });
  connect(process_, &QProcess::finished, this, [this](int code, QProcess::ExitStatus) { on_done(code); });
  connect(process_, &QProcess::errorOccurred, this, [this](QProcess::ProcessError e) {
    if (e == QProcess::FailedToStart) {
      append_log(tr("Cannot start %1: %2").arg(program_, process_->errorString()));
      on_done(-1);
    }
  });
  ran_.clear();
  pending_.clear();
  cancelled_ = false;
  append_log(QStringLiteral("$ %1 %2").arg(program_, args.join(QLatin1Char(' '))));
  run_->setEnabled(false);
  cancel_->setEnabled(true);
  process_->start(program_, args);
  return true;
}

void SweepDialog::cancel() {
  if (!running()) return;
  cancelled_ = true;
  append_log(tr("Cancelling: the points running stop, the others stay pending (Run resumes)."));
  process_->terminate();
}

void SweepDialog::on_stdout() {
  pending_ += process_->readAllStandardOutput();
  for (qsizetype nl; (nl = pending_.indexOf('\n')) >= 0;) {
    const QByteArray line = pending_.left(nl);
    pending_.remove(0, nl + 1);
    const QJsonObject j = QJsonDocument::fromJson(line).object();
    const QString event = j.value(QStringLiteral("event")).toString();
    if (event == QLatin1String("point")) {
      const QString name = j.value(QStringLiteral("point")).toString();
      const QString state = j.value(QStringLiteral("state")).toString();
      ran_.insert(name);
      if (auto it = row_of_.find(name); it != row_of_.end())
        set_row_state(it->second, state, j.value(QStringLiteral("seconds")).toDouble(),
                      j.value(QStringLiteral("error")).toString());
      progress_->setValue(std::min(progress_->maximum(), progress_->value() + 1));
      Q_EMIT point_finished(name, state);
    } else if (event == QLatin1String("summary")) {
      append_log(
          tr("Sweep %1 in %2 s: ran %3, done before %4")
              .arg(j.value(QStringLiteral("ok")).toBool() ? tr("finished") : tr("ended with failures or cancelled"))
              .arg(j.value(QStringLiteral("seconds")).toDouble(), 0, 'f', 2)
              .arg(j.value(QStringLiteral("ran")).toInt())
              .arg(j.value(QStringLiteral("already_done")).toInt()));
    } else if (!line.trimmed().isEmpty() && event.isEmpty()) {
      append_log(QString::fromUtf8(line));
    }
  }
}

void SweepDialog::on_done(int code) {
  if (process_) {
    on_stdout();
    const QString rest = QString::fromUtf8(process_->readAllStandardError()).trimmed();
    if (!rest.isEmpty()) append_log(rest);
  }
  load_table();
  run_->setEnabled(check().ok());
  cancel_->setEnabled(false);
  append_log(tr("gemflow exited with %1%2").arg(code).arg(cancelled_ ? tr(" (cancelled)") : QString()));
  Q_EMIT finished(code);
}

void SweepDialog::load_table() {
  // The summary table of the whole sweep folder, with the report numbers of each point.
  const auto rows = parse_sweep_table(read_text(out_dir_ / "sweep.json"));
  if (!rows) return;
  std::set<std::string> numbers;
  for (const auto& r : *rows)
    for (const auto& [k, v] : r.numbers) numbers.insert(k);
  const int first_number = kFirstValue + static_cast<int>(axis_names_.size()) + 2;
  points_->setColumnCount(first_number + static_cast<int>(numbers.size()));
  int col = first_number;
  for (const auto& n : numbers) points_->setHorizontalHeaderItem(col++, new QTableWidgetItem(q(n)));
  int finished = 0;
  for (const auto& r : *rows) {
    auto it = row_of_.find(q(r.name));
    if (it == row_of_.end()) continue;
    QString state = state_text(r.state);
    // done before this run and still valid: the command kept it
    if (r.state == PointState::Done && !ran_.count(q(r.name))) state = QStringLiteral("cached");
    set_row_state(it->second, state, r.seconds, q(r.error));
    col = first_number;
    for (const auto& n : numbers) {
      auto v = r.numbers.find(n);
      points_->setItem(it->second, col++,
                       new QTableWidgetItem(v == r.numbers.end() ? QString() : QString::number(v->second, 'g', 8)));
    }
    finished += r.state == PointState::Done || r.state == PointState::Failed;
  }
  progress_->setValue(std::min(progress_->maximum(), finished));
  points_->resizeColumnsToContents();
}

fs::path SweepDialog::point_folder(int row) const {
  if (row < 0 || row >= points_->rowCount() || !points_->item(row, kPoint)) return {};
  return out_dir_ / "points" / points_->item(row, kPoint)->text().toStdString();
}

void SweepDialog::open_point(int row) {
  const fs::path dir = point_folder(row);
  if (dir.empty()) return;
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) {
    append_log(tr("%1 has not run yet: no folder").arg(q(dir.string())));
    return;
  }
  if (url_opener) url_opener(QUrl::fromLocalFile(q(dir.string())));
}

std::optional<Workflow> SweepDialog::point_workflow(int row) const {
  if (row < 0 || row >= points_->rowCount() || !points_->item(row, kPoint)) return std::nullopt;
  const Check c = check();
  if (!c.ok()) return std::nullopt;
  const std::string name = points_->item(row, kPoint)->text().toStdString();
  for (const auto& p : c.sweep.points)
    if (p.name == name) {
      Workflow pw = model_.workflow();
      apply_sweep_point(pw, c.sweep, p);
      return pw;
    }
  return std::nullopt;
}

bool SweepDialog::show_point(int row) {
  if (row < 0 || row >= points_->rowCount() || !points_->item(row, kPoint)) return false;
  const QString name = points_->item(row, kPoint)->text();
  const QString st = state_of(name);
  if (st != QLatin1String("done") && st != QLatin1String("cached")) {
    append_log(tr("Point %1 is %2: only a finished point can be shown").arg(name, st));
    return false;
  }
  // The rows follow the parameters as typed now: a point of another sweep is not this one.
  auto wf = point_workflow(row);
  if (!wf) {
    append_log(tr("Point %1 is not a point of the sweep as it stands now").arg(name));
    return false;
  }
  if (!show_in_viewers || !show_in_viewers(name, *wf)) {
    append_log(tr("Cannot show point %1 now (a run is going?)").arg(name));
    return false;
  }
  append_log(tr("Showing point %1 in the viewers (from the result cache when the sweep filled it)").arg(name));
  return true;
}

void SweepDialog::save_to_workflow() {
  WorkflowSweep ws;
  ws.zip = zip_->isChecked();
  for (int i = 0; i < axes_->rowCount(); ++i) {
    SweepEntry e;
    e.target = axes_->item(i, 0) ? axes_->item(i, 0)->text().trimmed().toStdString() : std::string();
    e.text = axes_->item(i, 1) ? axes_->item(i, 1)->text().trimmed().toStdString() : std::string();
    if (!e.target.empty()) ws.entries.push_back(std::move(e));
  }
  model_.set_sweep(ws);
  append_log(ws.empty() ? tr("The workflow's sweep: section was removed (save the workflow to keep it).")
                        : tr("Written into the workflow's sweep: section (save the workflow to keep it)."));
}

void SweepDialog::append_log(const QString& text) {
  if (!text.isEmpty()) log_->appendPlainText(text);
}

}  // namespace gemflow::studio
