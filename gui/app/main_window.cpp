#include "app/main_window.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <memory>
#include <set>

#include <QAction>
#include <QActionGroup>
#include <QApplication>
#include <QClipboard>
#include <QCloseEvent>
#include <QCoreApplication>
#include <QDesktopServices>
#include <QDir>
#include <QDockWidget>
#include <QFileDialog>
#include <QFileInfo>
#include <QLabel>
#include <QLineEdit>
#include <QListWidget>
#include <QMenuBar>
#include <QMessageBox>
#include <QMimeData>
#include <QMouseEvent>
#include <QPlainTextEdit>
#include <QProgressBar>
#include <QPushButton>
#include <QSettings>
#include <QStackedWidget>
#include <QStatusBar>
#include <QTextBlock>
#include <QToolBar>
#include <QUrl>
#include <QVBoxLayout>

#include "app/input_guard.hpp"
#include "editor/graph_scene.hpp"
#include "editor/graph_view.hpp"
#include "editor/inspector.hpp"
#include "editor/palette.hpp"
#include "editor/quick_add.hpp"
#include "editor/style.hpp"
#include "model/graph_model.hpp"
#include "run/run_controller.hpp"
#include "run/sweep_dialog.hpp"
#include "viewers/viewer_panel.hpp"

namespace gemflow::studio {

namespace {
QString q(const std::string& s) { return QString::fromStdString(s); }
constexpr const char* kSnippetMime = "application/x-gemflow-snippet";
constexpr int kMaxRecent = 10;
const QString kRecentKey = QStringLiteral("recent_files");
const QString kThemeKey = QStringLiteral("theme");
const QString kOutputKey = QStringLiteral("output_folders/");

std::vector<MainWindow*>& window_list() {
  static std::vector<MainWindow*> list;
  return list;
}

/// The node a log line is about (kept with its block: clicking the line selects the node).
class LogNode : public QTextBlockUserData {
 public:
  explicit LogNode(QString id) : id(std::move(id)) {}
  QString id;
};

/// A folder name from a workflow name, as `gemflow run` makes it (no separators or oddities).
std::string folder_name(const std::string& name) {
  std::string r;
  for (char c : name) r += std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_' || c == '.' ? c : '_';
  return r.empty() || r == "." || r == ".." ? std::string("untitled") : r;
}

/// Studio's settings: this user's file of this application ($XDG_CONFIG_HOME/<organisation>/
/// <application>.conf), without Qt's fallbacks to the organisation-wide file (other
/// applications) and the system-wide ones ($XDG_CONFIG_DIRS, other users). QSettings writes
/// through a temporary file renamed over the old one, under a lock: never half a list.
std::unique_ptr<QSettings> user_settings() {
  QString org = QCoreApplication::organizationName();
  QString app = QCoreApplication::applicationName();
  if (org.isEmpty()) org = QStringLiteral("Gemflow");
  if (app.isEmpty()) app = QStringLiteral("Gemflow Studio");
  auto s = std::make_unique<QSettings>(QSettings::UserScope, org, app);
  s->setFallbacksEnabled(false);
  s->setAtomicSyncRequired(true);
  return s;
}
}  // namespace

std::filesystem::path example_workflow(const std::string& name) {
  namespace fs = std::filesystem;
  std::vector<fs::path> candidates;
  const fs::path exe_dir = QCoreApplication::applicationDirPath().toStdString();
  candidates.push_back(exe_dir / ".." / "share" / "gemflow" / "workflows" / name);
#ifdef GEMFLOW_STUDIO_SOURCE_DIR
  candidates.push_back(fs::path(GEMFLOW_STUDIO_SOURCE_DIR) / "workflows" / name);
#endif
  for (const auto& c : candidates)
    if (fs::exists(c)) return fs::absolute(c).lexically_normal();
  return {};
}

MainWindow::MainWindow(const Registry& registry, std::vector<PluginRecord> plugins, QWidget* parent)
    : QMainWindow(parent),
      registry_(registry),
      plugins_(std::move(plugins)),
      model_(new GraphModel(registry, this)),
      scene_(new GraphScene(*model_, this)),
      view_(new GraphView(scene_)),
      runs_(new RunController(registry, this)) {
  setObjectName(QStringLiteral("GemflowStudio"));
  install_input_guard();  // wheel and undo/redo rules for every widget of every panel
  resize(1400, 900);
  central_ = new QStackedWidget;
  welcome_ = build_welcome();
  central_->addWidget(welcome_);
  central_->addWidget(view_);
  setCentralWidget(central_);
  build_docks();
  build_actions();
  statusBar()->showMessage(tr("Ready"));
  progress_ = new QProgressBar;
  progress_->setObjectName(QStringLiteral("run_progress"));
  progress_->setRange(0, 1000);
  progress_->setMaximumWidth(220);
  progress_->setFormat(tr("%p % of the run"));
  progress_->setVisible(false);
  statusBar()->addPermanentWidget(progress_);
  url_opener = [](const QUrl& u) { return QDesktopServices::openUrl(u); };
  file_chooser = [this](const QString& title, const QString& suggestion, bool save) {
    const QString filter = tr("Workflows (*.yaml *.yml)");
    return save ? QFileDialog::getSaveFileName(this, title, suggestion, filter)
                : QFileDialog::getOpenFileName(this, title, suggestion, filter);
  };
  window_list().push_back(this);

  connect(model_->undo_stack(), &QUndoStack::cleanChanged, this, [this] { update_title(); });
  connect(model_, &GraphModel::model_reset, this, [this] {
    update_title();
    scene_->reset_states();
    runs_->reset_session();
    viewers_->follow({});
  });
  // A node that goes (delete, or undo of its addition) leaves the viewers too.
  connect(model_, &GraphModel::node_removed, this, [this](const QString& id) {
    runs_->forget(id.toStdString());
    if (viewers_->node() == id.toStdString()) viewers_->follow({});
  });
  connect(model_, &GraphModel::name_changed, this, [this] { update_title(); });
  // A rename changes no result (node keys hash type, parameters and inputs, not ids).
  connect(model_, &GraphModel::node_renamed, this, [this](const QString& from, const QString& to) {
    runs_->rename(from.toStdString(), to.toStdString());
    if (inspector_->node() == from.toStdString()) inspector_->show_node(to.toStdString());
    if (viewers_->node() == from.toStdString()) viewers_->follow(to.toStdString(), viewers_->port());
  });
  // Anything that changes what a node computes makes it and its downstream stale.
  connect(model_, &GraphModel::node_changed, this, [this](const QString& id) { invalidate_from(id.toStdString()); });
  connect(
      model_, &GraphModel::link_added, this,
      [this](const QString&, const QString&, const QString& to, const QString&) { invalidate_from(to.toStdString()); });
  connect(
      model_, &GraphModel::link_removed, this,
      [this](const QString&, const QString&, const QString& to, const QString&) { invalidate_from(to.toStdString()); });

  connect(scene_, &GraphScene::message, this, [this](const QString& m) { statusBar()->showMessage(m, 8000); });
  connect(inspector_, &InspectorWidget::message, this, [this](const QString& m) { statusBar()->showMessage(m, 8000); });
  connect(scene_, &GraphScene::node_selected, this, &MainWindow::follow_selection);
  connect(scene_, &GraphScene::problems_changed, this,
          [this] { inspector_->set_problems(scene_->problems_of(inspector_->node())); });
  // Context menus of the editor.
  connect(scene_, &GraphScene::run_to_requested, this, [this](const QString& id) {
    scene_->select_nodes({id.toStdString()});
    run(true);
  });
  connect(scene_, &GraphScene::docs_requested, this, [this](const QString& id) {
    scene_->select_nodes({id.toStdString()});
    inspector_->show_docs();
    if (auto* d = findChild<QDockWidget*>(QStringLiteral("inspector"))) d->raise();
  });
  connect(scene_, &GraphScene::rename_requested, this, [this](const QString& id) {
    scene_->select_nodes({id.toStdString()});
    if (auto* e = inspector_->findChild<QLineEdit*>(QStringLiteral("node_id"))) {
      e->setFocus(Qt::OtherFocusReason);
      e->selectAll();
    }
  });
  connect(scene_, &GraphScene::outputs_folder_requested, this, [this] { open_output_folder(); });
  connect(scene_, &GraphScene::open_subworkflow_requested, this,
          [this](const QString& id) { open_subworkflow(id.toStdString()); });
  connect(scene_, &GraphScene::collapse_requested, this, [this](const QStringList& ids) {
    std::vector<std::string> v;
    for (const QString& id : ids) v.push_back(id.toStdString());
    collapse_selection(v);
  });
  connect(view_, &GraphView::subworkflow_link_requested, this, &MainWindow::add_linked_subworkflow);
  connect(scene_, &GraphScene::view_data_requested, this, [this](const QString& node, const QString& port) {
    viewers_->follow(node.toStdString(), port.toStdString());
    if (auto* d = findChild<QDockWidget*>(QStringLiteral("viewers"))) {
      d->show();
      d->raise();
    }
  });
  connect(view_, &GraphView::command_requested, this, [this](const QString& key) {
    if (key == QLatin1String("cmd:paste")) paste();
    else if (key == QLatin1String("cmd:select_all"))
      for (auto* n : scene_->node_items()) n->setSelected(true);
  });
  connect(scene_, &GraphScene::wire_selected, this,
          [this](const QString& fn, const QString& fp, const QString&, const QString&) {
            viewers_->follow(fn.toStdString(), fp.toStdString());
          });
  connect(scene_, &GraphScene::selection_cleared, this, [this] { inspector_->show_node({}); });
  connect(palette_, &PaletteWidget::node_type_activated, this, [this](const QString& type) {
    show_editor();
    const QPointF p = scene_->free_position();
    const std::string id = model_->add_node(type.toStdString(), {p.x(), p.y()});
    if (!id.empty()) scene_->select_nodes({id});
  });

  connect(runs_, &RunController::node_state, this,
          [this](const QString& node, int st, double progress, const QString& msg) {
            scene_->set_node_state(node.toStdString(), static_cast<NodeState>(st), progress, msg);
            update_progress(node, st, progress);
            if (inspector_->node() == node.toStdString()) update_inspector_status();
          });
  connect(runs_, &RunController::log, this, &MainWindow::log);
  connect(runs_, &RunController::finished, this, [this](bool, bool, const QString& summary) {
    statusBar()->showMessage(summary, 15000);
    on_run_finished();
  });

  for (const auto& p : plugins_) {
    if (p.loaded)
      log(static_cast<int>(LogLevel::Info), {},
          tr("Plugin %1 %2: %3 node types (%4)")
              .arg(q(p.name), q(p.version))
              .arg(p.node_ids.size())
              .arg(q(p.file.string())));
    else log(static_cast<int>(LogLevel::Error), {}, tr("Plugin %1 refused: %2").arg(q(p.file.string()), q(p.error)));
  }
  log(static_cast<int>(LogLevel::Info), {}, tr("%1 node types available").arg(registry_.nodes().size()));
  update_title();
  show_welcome();
}

MainWindow::~MainWindow() {
  std::erase(window_list(), this);
  delete sweep_dialog_.data();  // stops its sweep before the model goes
  runs_->cancel();
  runs_->wait();
  // Clearing the scene changes the selection: nobody may listen while the docks go away.
  scene_->disconnect();
  delete scene_;
}

// ---- layout -------------------------------------------------------------------------------

QWidget* MainWindow::build_welcome() {
  auto* w = new QWidget;
  auto* lay = new QVBoxLayout(w);
  lay->setContentsMargins(60, 40, 60, 40);
  auto* title =
      new QLabel(tr("<h1>Gemflow Studio</h1><p>Wire plugin nodes into workflows, run them on the GPU or "
                    "the CPU, and look at the results. The files are the same YAML that "
                    "<code>gemflow run</code> reads.</p>"));
  title->setWordWrap(true);
  lay->addWidget(title);
  const auto example = example_workflow();
  auto* ex = new QPushButton(tr("Open the example: NMR structure from restraints (%1)")
                                 .arg(example.empty() ? tr("not found") : q(example.filename().string())));
  ex->setObjectName(QStringLiteral("welcome_example"));
  ex->setEnabled(!example.empty());
  ex->setToolTip(q(example.string()));
  connect(ex, &QPushButton::clicked, this, [this, example] { open_file(q(example.string())); });
  auto* nw = new QPushButton(tr("New workflow"));
  connect(nw, &QPushButton::clicked, this, [this] { new_file(); });
  auto* op = new QPushButton(tr("Open…"));
  connect(op, &QPushButton::clicked, this, [this] {
    const QString f = QFileDialog::getOpenFileName(this, tr("Open workflow"), {}, tr("Workflows (*.yaml *.yml)"));
    if (!f.isEmpty()) open_file(f);
  });
  for (auto* b : {ex, nw, op}) {
    b->setMinimumHeight(36);
    lay->addWidget(b);
  }
  lay->addWidget(new QLabel(tr("<h3>Recent files</h3>")));
  welcome_recent_ = new QListWidget;
  welcome_recent_->setObjectName(QStringLiteral("welcome_recent"));
  connect(welcome_recent_, &QListWidget::itemActivated, this,
          [this](QListWidgetItem* it) { open_file(it->data(Qt::UserRole).toString()); });
  lay->addWidget(welcome_recent_, 1);
  return w;
}

void MainWindow::build_docks() {
  setDockOptions(AnimatedDocks | AllowTabbedDocks);
  palette_ = new PaletteWidget(registry_);
  auto* pd = new QDockWidget(tr("Palette"), this);
  pd->setObjectName(QStringLiteral("palette"));
  pd->setWidget(palette_);
  addDockWidget(Qt::LeftDockWidgetArea, pd);

  inspector_ = new InspectorWidget(*model_);
  auto* id = new QDockWidget(tr("Inspector"), this);
  id->setObjectName(QStringLiteral("inspector"));
  id->setWidget(inspector_);
  addDockWidget(Qt::RightDockWidgetArea, id);

  viewers_ = new ViewerPanel(*model_, *runs_);
  auto* vd = new QDockWidget(tr("Viewers"), this);
  vd->setObjectName(QStringLiteral("viewers"));
  vd->setWidget(viewers_);

  log_ = new QPlainTextEdit;
  log_->setObjectName(QStringLiteral("log_text"));
  log_->setReadOnly(true);
  log_->setMaximumBlockCount(5000);
  log_->viewport()->installEventFilter(this);  // a click on a node's line selects the node
  auto* ld = new QDockWidget(tr("Log"), this);
  ld->setObjectName(QStringLiteral("log"));
  ld->setWidget(log_);
  addDockWidget(Qt::BottomDockWidgetArea, ld);
  // Viewers get the wide bottom-right corner; the log sits left of them.
  splitDockWidget(ld, vd, Qt::Horizontal);
  arrange_docks();
}

void MainWindow::arrange_docks() {
  auto* pd = findChild<QDockWidget*>(QStringLiteral("palette"));
  auto* id = findChild<QDockWidget*>(QStringLiteral("inspector"));
  auto* ld = findChild<QDockWidget*>(QStringLiteral("log"));
  auto* vd = findChild<QDockWidget*>(QStringLiteral("viewers"));
  if (!pd || !id || !ld || !vd) return;
  const int w = width(), h = height();
  resizeDocks({pd, id}, {std::clamp(w * 13 / 100, 180, 260), std::clamp(w * 22 / 100, 300, 420)}, Qt::Horizontal);
  resizeDocks({ld, vd}, {w * 34 / 100, w * 66 / 100}, Qt::Horizontal);
  resizeDocks({vd}, {std::clamp(h * 42 / 100, 250, 600)}, Qt::Vertical);
}

void MainWindow::build_actions() {
  auto* file = menuBar()->addMenu(tr("&File"));
  auto* a_new = file->addAction(tr("&New"), this, [this] { new_file(); });
  a_new->setShortcut(QKeySequence::New);
  auto* a_open = file->addAction(tr("&Open…"), this, [this] {
    if (!maybe_save()) return;
    const QString f = QFileDialog::getOpenFileName(this, tr("Open workflow"), {}, tr("Workflows (*.yaml *.yml)"));
    if (!f.isEmpty()) open_file(f, true);
  });
  a_open->setShortcut(QKeySequence::Open);
  recent_menu_ = file->addMenu(tr("Open &Recent"));
  recent_menu_->setObjectName(QStringLiteral("recent_menu"));
  auto* a_save = file->addAction(tr("&Save"), this, [this] { save(); });
  a_save->setShortcut(QKeySequence::Save);
  auto* a_save_as = file->addAction(tr("Save &As…"), this, [this] { save_as(); });
  a_save_as->setShortcut(QKeySequence::SaveAs);
  file->addSeparator();
  auto* up = file->addAction(tr("&Parent Workflow"), this, [this] {
    if (MainWindow* p = parent_workflow_window()) {
      p->show();
      p->raise();
      p->activateWindow();
    }
  });
  up->setShortcut(QKeySequence(Qt::ALT | Qt::Key_Up));
  up->setToolTip(tr("Back to the workflow this sub-workflow was opened from"));
  up->setObjectName(QStringLiteral("parent_workflow"));
  file->addAction(tr("&Welcome"), this, [this] { show_welcome(); });
  file->addAction(tr("&Quit"), this, [this] { close(); })->setShortcut(QKeySequence::Quit);

  auto* edit = menuBar()->addMenu(tr("&Edit"));
  auto* undo = model_->undo_stack()->createUndoAction(this, tr("&Undo"));
  undo->setShortcut(QKeySequence::Undo);
  auto* redo = model_->undo_stack()->createRedoAction(this, tr("&Redo"));
  redo->setShortcut(QKeySequence::Redo);
  edit->addAction(undo);
  edit->addAction(redo);
  edit->addSeparator();
  edit->addAction(tr("Cu&t"), this, [this] { copy_selection(true); })->setShortcut(QKeySequence::Cut);
  edit->addAction(tr("&Copy"), this, [this] { copy_selection(false); })->setShortcut(QKeySequence::Copy);
  edit->addAction(tr("&Paste"), this, [this] { paste(); })->setShortcut(QKeySequence::Paste);
  edit->addAction(tr("&Duplicate"), this,
                  [this] {
                    auto ids = model_->duplicate(scene_->selected_node_ids());
                    if (!ids.empty()) scene_->select_nodes(ids);
                  })
      ->setShortcut(QKeySequence(Qt::CTRL | Qt::Key_D));
  edit->addAction(tr("&Delete"), this, [this] { scene_->delete_selection(); })->setShortcut(QKeySequence::Delete);
  edit->addAction(tr("Select &All"), this,
                  [this] {
                    for (auto* n : scene_->node_items()) n->setSelected(true);
                  })
      ->setShortcut(QKeySequence::SelectAll);
  edit->addSeparator();
  edit->addAction(tr("&Add Node…"), this, [this] {
    const QPoint c = view_->viewport()->rect().center();
    view_->open_quick_add(view_->mapToScene(c), view_->viewport()->mapToGlobal(c));
  });  // Tab in the editor
  edit->addAction(tr("&Bypass"), this,
                  [this] {
                    const auto ids = scene_->selected_node_ids();
                    if (ids.empty()) return;
                    const NodeInstance* n = model_->workflow().find(ids.front());
                    model_->set_bypass(ids, !(n && n->bypass));
                  })
      ->setShortcut(QKeySequence(Qt::CTRL | Qt::Key_B));
  edit->addAction(tr("&Group Selection"), this,
                  [this] {
                    const auto ids = scene_->selected_node_ids();
                    if (!ids.empty()) model_->add_group(ids, tr("Group").toStdString());
                  })
      ->setShortcut(QKeySequence(Qt::CTRL | Qt::Key_G));
  edit->addAction(tr("Co&llapse into Sub-workflow…"), this, [this] { collapse_selection(); })
      ->setShortcut(QKeySequence(Qt::CTRL | Qt::SHIFT | Qt::Key_G));
  edit->addAction(tr("&Expand Sub-workflow"), this,
                  [this] {
                    const auto ids = scene_->selected_node_ids();
                    if (ids.size() != 1) return;
                    const auto r = model_->expand_subworkflow(ids.front());
                    if (r.ok()) scene_->select_nodes(r.nodes);
                    else statusBar()->showMessage(q(r.error), 8000);
                  })
      ->setShortcut(QKeySequence(Qt::CTRL | Qt::ALT | Qt::Key_G));
  edit->addAction(tr("Add &Note"), this, [this] {
    const QPointF c = view_->mapToScene(view_->viewport()->rect().center());
    model_->add_note(tr("Note").toStdString(), {std::round(c.x()), std::round(c.y())});
  });

  auto* viewm = menuBar()->addMenu(tr("&View"));
  viewm->addAction(tr("&Fit to View"), this, [this] { view_->fit_to_view(); })->setShortcut(QKeySequence(Qt::Key_F));
  viewm->addAction(tr("Zoom &In"), this, [this] { view_->zoom_by(1.2); })->setShortcut(QKeySequence::ZoomIn);
  viewm->addAction(tr("Zoom &Out"), this, [this] { view_->zoom_by(1 / 1.2); })->setShortcut(QKeySequence::ZoomOut);
  viewm->addAction(tr("Find &Node…"), this, [this] { view_->open_find(); })->setShortcut(QKeySequence::Find);
  auto* mini = viewm->addAction(tr("&Minimap"));
  mini->setCheckable(true);
  mini->setChecked(true);
  mini->setToolTip(tr("An overview in the editor's corner while part of the graph is out of view"));
  connect(mini, &QAction::toggled, view_, &GraphView::set_minimap_enabled);
  viewm->addSeparator();
  viewm->addAction(tr("&Arrange All"), this, [this] { scene_->arrange(); })
      ->setShortcut(QKeySequence(Qt::CTRL | Qt::Key_L));
  auto* align = viewm->addMenu(tr("Al&ign Selection"));
  const std::pair<QString, GraphScene::Align> aligns[] = {
      {tr("Left Edges"), GraphScene::Align::Left},
      {tr("Right Edges"), GraphScene::Align::Right},
      {tr("Top Edges"), GraphScene::Align::Top},
      {tr("Bottom Edges"), GraphScene::Align::Bottom},
      {tr("Centres in a Row"), GraphScene::Align::CentreH},
      {tr("Centres in a Column"), GraphScene::Align::CentreV},
      {tr("Distribute Horizontally"), GraphScene::Align::DistributeH},
      {tr("Distribute Vertically"), GraphScene::Align::DistributeV}};
  for (const auto& [text, how] : aligns)
    align->addAction(text, this, [this, how = how] { scene_->align_selection(how); });
  auto* theme = viewm->addMenu(tr("&Theme"));
  auto* themes = new QActionGroup(theme);
  for (const auto& [text, t] : {std::pair{tr("Follow the Desktop"), Theme::System}, std::pair{tr("Dark"), Theme::Dark},
                                std::pair{tr("Light"), Theme::Light}}) {
    QAction* a = theme->addAction(text, this, [this, t = t] { set_theme(t); });
    a->setCheckable(true);
    a->setChecked(theme_setting() == t);
    a->setObjectName(QStringLiteral("theme_") + to_string(t));
    themes->addAction(a);
  }
  viewm->addSeparator();
  for (auto* d : findChildren<QDockWidget*>()) viewm->addAction(d->toggleViewAction());

  auto* runm = menuBar()->addMenu(tr("&Run"));
  run_ = runm->addAction(tr("&Run"), this, [this] { run(false); });
  run_->setShortcut(QKeySequence(Qt::Key_F5));
  run_sel_ = runm->addAction(tr("Run to &Selected"), this, [this] { run(true); });
  run_sel_->setShortcut(QKeySequence(Qt::SHIFT | Qt::Key_F5));
  cancel_ = runm->addAction(tr("&Cancel"), this, [this] { cancel_run(); });
  cancel_->setShortcut(QKeySequence(Qt::Key_Escape));
  cancel_->setEnabled(false);
  runm->addSeparator();
  runm->addAction(tr("Run S&weep…"), this, [this] { open_sweep_dialog(); })->setObjectName(QStringLiteral("run_sweep"));
  runm->addSeparator();
  runm->addAction(tr("&Output Folder…"), this, [this] {
    const QString d = QFileDialog::getExistingDirectory(this, tr("Output folder of %1").arg(q(model_->workflow().name)),
                                                        q(output_folder().string()));
    if (!d.isEmpty()) set_output_folder(d.toStdString());
  });
  runm->addAction(tr("Open Output &Folder"), this, [this] { open_output_folder(); });
  runm->addSeparator();
  runm->addAction(tr("Clear Result &Cache"), this, [this] {
    runs_->clear_cache();
    scene_->reset_states();
    update_inspector_status();
    viewers_->refresh();
    log(static_cast<int>(LogLevel::Info), {}, tr("Result cache cleared: the next run recomputes every node."));
  });

  auto* tb = addToolBar(tr("Main"));
  tb->setObjectName(QStringLiteral("main_toolbar"));
  tb->addAction(a_new);
  tb->addAction(a_open);
  tb->addAction(a_save);
  tb->addSeparator();
  tb->addAction(undo);
  tb->addAction(redo);
  tb->addSeparator();
  tb->addAction(run_);
  tb->addAction(run_sel_);
  tb->addAction(cancel_);
  tb->addSeparator();
  tb->addAction(tr("Fit"), this, [this] { view_->fit_to_view(); });
  fill_recent();
}

// ---- documents ----------------------------------------------------------------------------

void MainWindow::update_title() {
  const auto& wf = model_->workflow();
  const QString file = wf.file.empty() ? tr("unsaved") : q(wf.file.string());
  setWindowTitle(QStringLiteral("%1 — %2[*] — Gemflow Studio").arg(q(wf.name), file));
  setWindowModified(model_->modified());
}

bool MainWindow::maybe_save() {
  if (!model_->modified() || !prompt_) return true;
  const auto r =
      QMessageBox::warning(this, tr("Unsaved changes"),
                           tr("The workflow '%1' has unsaved changes. Save them?").arg(q(model_->workflow().name)),
                           QMessageBox::Save | QMessageBox::Discard | QMessageBox::Cancel, QMessageBox::Save);
  if (r == QMessageBox::Save) return save();
  return r == QMessageBox::Discard;
}

bool MainWindow::open_file(const QString& path, bool force) {
  if (!force && !maybe_save()) return false;
  if (runs_->running()) {
    runs_->cancel();
    runs_->wait();
  }
  bool loaded = false;
  const auto diags = model_->load(path.toStdString(), &loaded);
  int errors = 0;
  for (const auto& d : diags) {
    errors += d.severity == Diagnostic::Severity::Error;
    log(static_cast<int>(d.severity == Diagnostic::Severity::Error ? LogLevel::Error : LogLevel::Warning), q(d.node),
        q(d.str()));
  }
  if (!loaded) {
    QMessageBox::critical(
        this, tr("Cannot open"),
        tr("%1 could not be read:\n%2").arg(path, diags.empty() ? tr("unknown error") : q(diags.front().str())));
    return false;
  }
  add_recent(QFileInfo(path).absoluteFilePath());
  log(static_cast<int>(LogLevel::Info), {},
      tr("Opened %1: %2 nodes, %3 links%4")
          .arg(path)
          .arg(model_->workflow().nodes.size())
          .arg(model_->workflow().links.size())
          .arg(errors ? tr(", %1 problem(s) — see above").arg(errors) : QString()));
  show_editor();
  view_->fit_to_view();
  return true;
}

bool MainWindow::save() {
  if (model_->workflow().file.empty()) return save_as();
  try {
    model_->save(model_->workflow().file);
  } catch (const std::exception& e) {
    QMessageBox::critical(this, tr("Cannot save"), q(e.what()));
    return false;
  }
  add_recent(q(model_->workflow().file.string()));
  statusBar()->showMessage(tr("Saved %1").arg(q(model_->workflow().file.string())), 5000);
  update_title();
  inspector_->refresh();  // relative paths now resolve against the file
  announce_saved(model_->workflow().file);
  return true;
}

bool MainWindow::save_as() {
  QString f = QFileDialog::getSaveFileName(
      this, tr("Save workflow as"),
      q(model_->workflow().file.empty() ? model_->workflow().name + ".yaml" : model_->workflow().file.string()),
      tr("Workflows (*.yaml *.yml)"));
  if (f.isEmpty()) return false;
  if (!f.endsWith(QStringLiteral(".yaml")) && !f.endsWith(QStringLiteral(".yml"))) f += QStringLiteral(".yaml");
  try {
    model_->save(f.toStdString());
  } catch (const std::exception& e) {
    QMessageBox::critical(this, tr("Cannot save"), q(e.what()));
    return false;
  }
  add_recent(QFileInfo(f).absoluteFilePath());
  update_title();
  inspector_->refresh();  // relative paths now resolve against the file
  announce_saved(model_->workflow().file);
  return true;
}

void MainWindow::announce_saved(const std::filesystem::path& file) {
  for (MainWindow* w : window_list()) {
    if (w == this) continue;
    const auto ids = w->model().reload_subworkflows(file);
    if (ids.empty()) continue;
    QStringList names;
    for (const auto& id : ids) names << q(id);
    w->log(
        static_cast<int>(LogLevel::Info), {},
        tr("%1 was saved: sub-workflow node(s) %2 reloaded").arg(q(file.string()), names.join(QStringLiteral(", "))));
  }
}

const std::vector<MainWindow*>& MainWindow::windows() { return window_list(); }

MainWindow* MainWindow::parent_workflow_window() const { return parent_window_.data(); }

MainWindow* MainWindow::open_subworkflow(const std::string& id) {
  const std::filesystem::path file = model_->subworkflow_file(id);
  if (file.empty()) {
    statusBar()->showMessage(
        tr("'%1' has no sub-workflow file: choose one with its 'path' in the Inspector").arg(q(id)), 8000);
    return nullptr;
  }
  std::error_code ec;
  const auto canonical = std::filesystem::weakly_canonical(file, ec);
  for (MainWindow* w : window_list())
    if (!w->model().workflow().file.empty() &&
        std::filesystem::weakly_canonical(w->model().workflow().file, ec) == canonical) {
      w->show();
      w->raise();
      w->activateWindow();
      return w;
    }
  auto* w = new MainWindow(registry_, plugins_);
  w->setAttribute(Qt::WA_DeleteOnClose);
  w->prompt_ = prompt_;
  w->url_opener = url_opener;
  w->file_chooser = file_chooser;
  w->parent_window_ = this;
  if (!w->open_file(q(file.string()), true)) {
    w->close();
    return nullptr;
  }
  w->resize(size());
  w->move(pos() + QPoint(40, 40));
  w->show();
  w->log(static_cast<int>(LogLevel::Info), {},
         tr("Sub-workflow of node '%1' in %2: saving it updates that node's ports")
             .arg(q(id), q(model_->workflow().file.empty() ? tr("an unsaved workflow").toStdString()
                                                           : model_->workflow().file.string())));
  return w;
}

std::string MainWindow::collapse_selection(std::vector<std::string> ids) {
  if (ids.empty()) ids = scene_->selected_node_ids();
  if (ids.empty()) {
    statusBar()->showMessage(tr("Select the nodes to collapse into a sub-workflow first"), 8000);
    return {};
  }
  const std::filesystem::path base = std::filesystem::absolute(model_->workflow().base_dir());
  std::filesystem::path suggestion = base / "subworkflow.yaml";
  for (int i = 2; std::filesystem::exists(suggestion); ++i)
    suggestion = base / ("subworkflow_" + std::to_string(i) + ".yaml");
  QString f =
      file_chooser
          ? file_chooser(tr("Collapse %n node(s) into the sub-workflow file", nullptr, static_cast<int>(ids.size())),
                         q(suggestion.string()), true)
          : QString();
  if (f.isEmpty()) return {};
  if (!f.endsWith(QStringLiteral(".yaml")) && !f.endsWith(QStringLiteral(".yml"))) f += QStringLiteral(".yaml");
  const auto r = model_->collapse_to_subworkflow(ids, f.toStdString());
  if (!r.ok()) {
    log(static_cast<int>(LogLevel::Error), {}, q(r.error));
    statusBar()->showMessage(q(r.error), 10000);
    return {};
  }
  scene_->select_nodes(r.nodes);
  log(static_cast<int>(LogLevel::Info), q(r.nodes.front()),
      tr("Collapsed %n node(s) into %1 (node '%2'); double-click it to edit the file", nullptr,
         static_cast<int>(ids.size()))
          .arg(f, q(r.nodes.front())));
  return r.nodes.front();
}

void MainWindow::add_linked_subworkflow(QPointF scene_pos, const QString& port_node, const QString& port,
                                        bool port_is_output) {
  const QString f = file_chooser
                        ? file_chooser(tr("Sub-workflow to link to %1.%2").arg(port_node, port),
                                       q(std::filesystem::absolute(model_->workflow().base_dir()).string()), false)
                        : QString();
  if (f.isEmpty()) return;
  std::filesystem::path path = f.toStdString();
  if (!model_->workflow().file.empty()) {
    const auto rel = std::filesystem::absolute(path).lexically_normal().lexically_relative(
        std::filesystem::absolute(model_->workflow().base_dir()).lexically_normal());
    if (!rel.empty()) path = rel;
  }
  const std::string id =
      model_->add_node_linked(std::string(kSubWorkflowType), {scene_pos.x(), scene_pos.y()}, port_node.toStdString(),
                              port.toStdString(), port_is_output, path.generic_string());
  if (id.empty()) {
    statusBar()->showMessage(
        tr("%1 exposes no %2 that fits %3.%4").arg(f, port_is_output ? tr("input") : tr("output"), port_node, port),
        10000);
    return;
  }
  scene_->select_nodes({id});
}

SweepDialog* MainWindow::open_sweep_dialog() {
  if (sweep_dialog_) {
    sweep_dialog_->show();
    sweep_dialog_->raise();
    return sweep_dialog_;
  }
  const auto sel = scene_->selected_node_ids();
  std::filesystem::path out = output_folder();
  out = out.parent_path() / (out.filename().string() + "-sweep");
  auto* d = new SweepDialog(*model_, out, sel.empty() ? std::string() : sel.front(), this);
  std::vector<std::filesystem::path> dirs;
  for (const auto& p : plugins_)
    if (p.loaded && std::find(dirs.begin(), dirs.end(), p.file.parent_path()) == dirs.end())
      dirs.push_back(p.file.parent_path());
  d->set_plugin_dirs(std::move(dirs));
  d->save_workflow = [this] { return model_->modified() || model_->workflow().file.empty() ? save() : true; };
  d->url_opener = [this](const QUrl& u) { return url_opener ? url_opener(u) : false; };
  // A point's outputs: its workflow runs as a normal run would (states, log, viewers), in a
  // folder of its own beside the run folder, so neither the point's folder nor the last run's
  // files are overwritten.
  d->show_in_viewers = [this](const QString& point, const Workflow& wf) {
    if (runs_->running()) return false;
    scene_->reset_states();
    update_inspector_status();
    run_nodes_.clear();
    std::filesystem::path dir = output_folder();
    dir = dir.parent_path() / (dir.filename().string() + "-point");
    progress_->setValue(0);
    progress_->setVisible(true);
    if (!runs_->start_point(wf, point, dir)) {
      progress_->setVisible(false);
      return false;
    }
    run_->setEnabled(false);
    run_sel_->setEnabled(false);
    cancel_->setEnabled(true);
    statusBar()->showMessage(tr("Viewers: sweep point %1").arg(point), 8000);
    return true;
  };
  // a new document: the dialog belongs to the old one
  connect(model_, &GraphModel::model_reset, d, [d] {
    if (!d->running()) d->deleteLater();
  });
  sweep_dialog_ = d;
  d->show();
  return d;
}

void MainWindow::new_file() {
  if (!maybe_save()) return;
  Workflow wf;
  wf.name = "untitled";
  model_->reset(std::move(wf));
  show_editor();
  view_->fit_to_view();
}

void MainWindow::add_recent(const QString& path) {
  const QString file = QDir::cleanPath(QFileInfo(path).absoluteFilePath());
  auto s = user_settings();
  QStringList list = s->value(kRecentKey).toStringList();  // as written now, by any window
  list.removeAll(file);
  list.prepend(file);
  while (list.size() > kMaxRecent) list.removeLast();
  s->setValue(kRecentKey, list);
  s->sync();
  if (s->status() != QSettings::NoError)
    log(static_cast<int>(LogLevel::Warning), {}, tr("Cannot write the recent files list to %1").arg(s->fileName()));
  fill_recent();
}

QStringList MainWindow::recent_files() const { return user_settings()->value(kRecentKey).toStringList(); }

void MainWindow::fill_recent() {
  const QStringList list = recent_files();
  if (recent_menu_) {
    recent_menu_->clear();
    for (const QString& f : list) recent_menu_->addAction(f, this, [this, f] { open_file(f); });
    recent_menu_->setEnabled(!list.isEmpty());
  }
  if (welcome_recent_) {
    welcome_recent_->clear();
    for (const QString& f : list) {
      auto* it = new QListWidgetItem(QStringLiteral("%1 — %2").arg(QFileInfo(f).fileName(), f));
      it->setData(Qt::UserRole, f);
      if (!QFileInfo::exists(f)) it->setForeground(Qt::gray);
      welcome_recent_->addItem(it);
    }
  }
}

void MainWindow::show_welcome() {
  fill_recent();
  central_->setCurrentWidget(welcome_);
}

void MainWindow::show_editor() { central_->setCurrentWidget(view_); }

void MainWindow::closeEvent(QCloseEvent* e) {
  if (!maybe_save()) {
    e->ignore();
    return;
  }
  runs_->cancel();
  runs_->wait();
  e->accept();
}

// ---- editing ----------------------------------------------------------------------------

void MainWindow::copy_selection(bool cut) {
  const auto ids = scene_->selected_node_ids();
  if (ids.empty()) return;
  const std::string text = model_->copy(ids);
  auto* mime = new QMimeData;
  mime->setData(kSnippetMime, QByteArray::fromStdString(text));
  mime->setText(q(text));
  QGuiApplication::clipboard()->setMimeData(mime);
  paste_count_ = 0;
  if (cut) scene_->delete_selection();
}

void MainWindow::paste() {
  const QMimeData* mime = QGuiApplication::clipboard()->mimeData();
  if (!mime) return;
  const std::string text =
      mime->hasFormat(kSnippetMime) ? mime->data(kSnippetMime).toStdString() : mime->text().toStdString();
  if (text.empty()) return;
  ++paste_count_;
  std::string err;
  auto ids = model_->paste(text, {30.0 * paste_count_, 30.0 * paste_count_}, &err);
  if (ids.empty()) {
    statusBar()->showMessage(tr("Cannot paste: %1").arg(q(err)), 8000);
    return;
  }
  show_editor();
  scene_->select_nodes(ids);
}

void MainWindow::invalidate_from(const std::string& node) {
  // The node and everything downstream of it show idle and lose their displayed outputs; the
  // session cache still holds the results by content key, so undoing an edit re-uses them.
  std::set<std::string> todo{node}, seen;
  while (!todo.empty()) {
    std::string cur = *todo.begin();
    todo.erase(todo.begin());
    if (!seen.insert(cur).second) continue;
    for (const auto& l : model_->workflow().links)
      if (l.from_node == cur) todo.insert(l.to_node);
  }
  for (const auto& id : seen) {
    runs_->forget(id);
    scene_->set_node_state(id, NodeState::Idle, 0, {});
  }
  update_inspector_status();
  viewers_->refresh();
}

void MainWindow::update_inspector_status() {
  const NodeItem* n = scene_->node_item(inspector_->node());
  if (!n) return;
  const NodeState s = n->state();
  inspector_->set_status(
      s == NodeState::Idle
          ? QString()
          : state_text(s) +
                (s == NodeState::Running ? QStringLiteral(" %1 %").arg(static_cast<int>(n->progress() * 100))
                                         : QString()) +
                (n->message().isEmpty() ? QString() : QStringLiteral(": ") + n->message()),
      state_color(s));
}

// ---- running ----------------------------------------------------------------------------

void MainWindow::run(bool selected) {
  std::string until;
  if (selected) {
    const auto ids = scene_->selected_node_ids();
    if (ids.size() != 1) {
      statusBar()->showMessage(tr("Select exactly one node to run up to it."), 5000);
      return;
    }
    until = ids.front();
  }
  if (runs_->running()) return;
  // Nodes that will take part show as queued until their first event.
  scene_->reset_states();
  update_inspector_status();
  runs_->set_run_dir(output_folder());
  run_nodes_.clear();
  progress_->setValue(0);
  progress_->setVisible(true);
  if (!runs_->start(model_->workflow(), until)) {
    progress_->setVisible(false);
    return;
  }
  run_->setEnabled(false);
  run_sel_->setEnabled(false);
  cancel_->setEnabled(true);
}

void MainWindow::cancel_run() { runs_->cancel(); }

void MainWindow::on_run_finished() {
  progress_->setVisible(false);
  run_->setEnabled(true);
  run_sel_->setEnabled(true);
  cancel_->setEnabled(false);
  viewers_->refresh();
  inspector_->refresh();  // a run may have written files that inputs read
}

void MainWindow::log(int level, const QString& node, const QString& text) {
  const QString text_color = log_->palette().color(QPalette::Text).name();
  const QString colors[] = {QStringLiteral("#808080"), text_color, QStringLiteral("#e09a30"),
                            QStringLiteral("#f05050")};
  static const char* names[] = {"debug", "info", "warning", "error"};
  const int l = std::clamp(level, 0, 3);
  log_->appendHtml(QStringLiteral("<span style='color:%1'>[%2]%3 %4</span>")
                       .arg(colors[l], QLatin1String(names[l]),
                            node.isEmpty() ? QString() : QStringLiteral(" <b>%1</b>:").arg(node.toHtmlEscaped()),
                            text.toHtmlEscaped()));
  if (!node.isEmpty()) log_->document()->lastBlock().setUserData(new LogNode(node));
}

bool MainWindow::eventFilter(QObject* watched, QEvent* e) {
  if (log_ && watched == log_->viewport() && e->type() == QEvent::MouseButtonRelease) {
    const QTextBlock b = log_->cursorForPosition(static_cast<QMouseEvent*>(e)->position().toPoint()).block();
    if (const auto* n = dynamic_cast<const LogNode*>(b.userData()); n && model_->workflow().find(n->id.toStdString())) {
      show_editor();
      view_->reveal(n->id.toStdString());
    }
  }
  return QMainWindow::eventFilter(watched, e);
}

void MainWindow::follow_selection(const QString& id) {
  inspector_->show_node(id.toStdString());
  // Ctrl+click several nodes of one type: the Inspector edits them all.
  const NodeInstance* shown = model_->workflow().find(id.toStdString());
  std::vector<std::string> same;
  for (const auto& other : scene_->selected_node_ids())
    if (const NodeInstance* o = model_->workflow().find(other);
        shown && o && other != shown->id && o->type == shown->type)
      same.push_back(other);
  inspector_->set_also(same);
  inspector_->set_problems(scene_->problems_of(id.toStdString()));
  update_inspector_status();
  viewers_->set_selection(scene_->selected_node_ids());  // companions of the shown value
  viewers_->follow(id.toStdString());
}

void MainWindow::update_progress(const QString& node, int state, double progress) {
  if (!runs_->running()) return;
  const auto st = static_cast<NodeState>(state);
  double& f = run_nodes_[node.toStdString()];
  if (st == NodeState::Running) f = std::clamp(progress, 0.0, 1.0);
  else if (st != NodeState::Queued && st != NodeState::Idle) f = 1.0;
  double sum = 0;
  for (const auto& [id, x] : run_nodes_) sum += x;
  progress_->setValue(static_cast<int>(1000.0 * sum / static_cast<double>(run_nodes_.size())));
}

std::filesystem::path MainWindow::output_folder() const {
  const Workflow& wf = model_->workflow();
  if (!wf.file.empty()) {
    const QString chosen =
        user_settings()->value(kOutputKey + QString::fromUtf8(QUrl::toPercentEncoding(q(wf.file.string())))).toString();
    if (!chosen.isEmpty()) return chosen.toStdString();
  }
  if (runs_->has_out_dir() || wf.file.empty()) return runs_->out_dir_for(wf);
  return wf.file.parent_path() / "out" / folder_name(wf.name);
}

void MainWindow::set_output_folder(const std::filesystem::path& dir) {
  const Workflow& wf = model_->workflow();
  if (wf.file.empty()) {
    statusBar()->showMessage(tr("Save the workflow first: its output folder is kept with its file."), 8000);
    return;
  }
  auto s = user_settings();
  const QString key = kOutputKey + QString::fromUtf8(QUrl::toPercentEncoding(q(wf.file.string())));
  if (dir.empty()) s->remove(key);
  else s->setValue(key, q(std::filesystem::absolute(dir).lexically_normal().string()));
  s->sync();
  log(static_cast<int>(LogLevel::Info), {}, tr("Output folder of %1: %2").arg(q(wf.name), q(output_folder().string())));
}

void MainWindow::open_output_folder() {
  const auto dir = output_folder();
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec || !url_opener(QUrl::fromLocalFile(q(dir.string()))))
    statusBar()->showMessage(
        tr("Cannot open %1%2").arg(q(dir.string()), ec ? QStringLiteral(": ") + q(ec.message()) : QString()), 8000);
}

Theme MainWindow::theme_setting() { return theme_from_string(user_settings()->value(kThemeKey).toString()); }

void MainWindow::set_theme(Theme t) {
  auto s = user_settings();
  s->setValue(kThemeKey, to_string(t));
  s->sync();
  apply_theme(t);
}

QString MainWindow::log_text() const { return log_->toPlainText(); }

}  // namespace gemflow::studio
