#include "editor/inspector.hpp"

#include <charconv>
#include <cmath>
#include <filesystem>
#include <limits>
#include <utility>

#include <QCheckBox>
#include <QComboBox>
#include <QDoubleSpinBox>
#include <QFileDialog>
#include <QFileSystemWatcher>
#include <QFormLayout>
#include <QHBoxLayout>
#include <QKeyEvent>
#include <QLabel>
#include <QLineEdit>
#include <QPlainTextEdit>
#include <QScrollArea>
#include <QToolButton>
#include <QVBoxLayout>

#include <gemflow/device.hpp>

#include "editor/style.hpp"

namespace gemflow::studio {

namespace {
QString q(const std::string& s) { return QString::fromStdString(s); }

std::string shortest(double x) {
  char buf[64];
  auto r = std::to_chars(buf, buf + sizeof buf, x);
  return std::string(buf, r.ptr);
}

/// A spin box for Int and Float parameters that accepts exactly what ParamSpec accepts: text is
/// parsed and checked by the spec; invalid text stays visible (red) but is never committed.
class NumberSpin : public QDoubleSpinBox {
 public:
  explicit NumberSpin(const ParamSpec& spec) : spec_(spec) {
    const bool is_int = spec.kind == ParamKind::Int;
    setDecimals(is_int ? 0 : 323);
    const double big = is_int ? 9.0e15 : std::numeric_limits<double>::max();
    setRange(spec.min.value_or(-big), spec.max.value_or(big));
    setKeyboardTracking(false);
    setAccelerated(true);
    if (!is_int) setStepType(QAbstractSpinBox::AdaptiveDecimalStepType);
    setCorrectionMode(QAbstractSpinBox::CorrectToPreviousValue);
  }
  QString textFromValue(double v) const override {
    if (spec_.kind == ParamKind::Int) return QString::number(static_cast<qlonglong>(std::llround(v)));
    return q(shortest(v));
  }
  double valueFromText(const QString& text) const override { return text.trimmed().toDouble(); }
  QValidator::State validate(QString& text, int&) const override {
    auto parsed = spec_.parse(text.trimmed().toStdString());
    std::string why;
    if (auto* e = std::get_if<std::string>(&parsed)) why = *e;
    else if (auto c = spec_.check(std::get<ParamValue>(parsed))) why = *c;
    const_cast<NumberSpin*>(this)->show_error(why);
    return why.empty() ? QValidator::Acceptable : QValidator::Intermediate;
  }
  void fixup(QString&) const override {}
  /// Return/Enter or leaving the box with invalid text: keep the text, red, with the reason;
  /// nothing is committed (QAbstractSpinBox would silently revert it).
  void keyPressEvent(QKeyEvent* e) override {
    if ((e->key() == Qt::Key_Return || e->key() == Qt::Key_Enter) && !error_.isEmpty()) {
      e->accept();
      return;
    }
    QDoubleSpinBox::keyPressEvent(e);
  }
  void focusOutEvent(QFocusEvent* e) override {
    if (!error_.isEmpty()) {
      QWidget::focusOutEvent(e);  // skip the spin box's revert
      return;
    }
    QDoubleSpinBox::focusOutEvent(e);
  }
  /// Re-checks the shown text (after the value was set from the model): a stale error goes.
  void revalidate() {
    QString t = text();
    int pos = 0;
    (void)validate(t, pos);
  }
  [[nodiscard]] ParamValue param_value() const {
    if (spec_.kind == ParamKind::Int) return static_cast<std::int64_t>(std::llround(value()));
    return value();
  }
  QString base_tooltip;

 private:
  void show_error(const std::string& why) {
    error_ = q(why);
    setStyleSheet(why.empty() ? QString() : QStringLiteral("QDoubleSpinBox { color: #ff5050; }"));
    setToolTip(why.empty() ? base_tooltip
                           : QStringLiteral("<b>%1</b><br>%2").arg(q(why).toHtmlEscaped(), base_tooltip));
  }
  ParamSpec spec_;
  QString error_;
};

/// File dialog filters of a path parameter: its extensions first (when it lists any), then
/// every file.
QStringList path_name_filters(const ParamSpec& p) {
  QStringList filters;
  if (!p.extensions.empty()) {
    QStringList globs;
    for (const auto& e : p.extensions) globs << QStringLiteral("*") + q(e);
    filters << QObject::tr("Files for %1 (%2)").arg(q(p.name), globs.join(QLatin1Char(' ')));
  }
  filters << QObject::tr("All files (*)");
  return filters;
}

QString spec_tooltip(const ParamSpec& p) {
  QString t = QStringLiteral("<b>%1</b> (%2)").arg(q(p.name), QString::fromLatin1(to_string(p.kind)));
  if (!p.doc.empty()) t += QStringLiteral("<br>") + q(p.doc).toHtmlEscaped();
  if (p.min || p.max)
    t += QStringLiteral("<br>Range: [%1, %2]%3")
             .arg(p.min ? q(shortest(*p.min)) : QStringLiteral("-∞"), p.max ? q(shortest(*p.max)) : QStringLiteral("∞"),
                  p.unit.empty() ? QString() : QStringLiteral(" ") + q(p.unit));
  else if (!p.unit.empty()) t += QStringLiteral("<br>Unit: ") + q(p.unit);
  if (!p.choices.empty()) {
    QStringList c;
    for (const auto& x : p.choices) c << q(x);
    t += QStringLiteral("<br>Choices: ") + c.join(QStringLiteral(", "));
  }
  if (p.required) t += QStringLiteral("<br><i>Required.</i>");
  else t += QStringLiteral("<br>Default: ") + q(format_param(p.default_value)).toHtmlEscaped();
  return t;
}
}  // namespace

InspectorWidget::InspectorWidget(GraphModel& model, QWidget* parent)
    : QWidget(parent), model_(model), outer_(new QVBoxLayout(this)), watcher_(new QFileSystemWatcher(this)) {
  outer_->setContentsMargins(4, 4, 4, 4);
  connect(watcher_, &QFileSystemWatcher::directoryChanged, this, [this] { check_paths(); });
  // Counts and the file name follow every change, undo and redo included.
  connect(&model_, &GraphModel::changed, this, [this] { update_facts(); });
  connect(&model_, &GraphModel::node_changed, this, [this](const QString& id) {
    if (id.toStdString() == node_) refresh_values();
  });
  connect(&model_, &GraphModel::node_removed, this, [this](const QString& id) {
    if (id.toStdString() == node_) show_node({});
  });
  connect(&model_, &GraphModel::model_reset, this, [this] {
    workflow_description_ = nullptr;  // the old text belongs to the old workflow
    show_node({});
  });
  connect(&model_, &GraphModel::name_changed, this, [this] {  // also undo/redo
    const Workflow& wf = model_.workflow();
    if (workflow_name_ && workflow_name_->text().trimmed().toStdString() != wf.name) {
      workflow_name_->setText(q(wf.name));
      mark(workflow_name_, {}, workflow_name_->toolTip());
    }
    if (workflow_description_ && workflow_description_->toPlainText().trimmed().toStdString() != wf.description) {
      QSignalBlocker b(workflow_description_);
      workflow_description_->setPlainText(q(wf.description));
    }
  });
  show_node({});
}

InspectorWidget::~InspectorWidget() {
  if (workflow_description_) workflow_description_->removeEventFilter(this);
}

QWidget* InspectorWidget::editor(const std::string& param) const {
  auto it = editors_.find(param);
  return it == editors_.end() ? nullptr : it->second;
}

void InspectorWidget::set_status(const QString& text, const QColor& color) {
  if (!status_) return;
  status_->setText(text);
  status_->setStyleSheet(QStringLiteral("color: %1;").arg(color.name()));
  status_->setVisible(!text.isEmpty());
}

void InspectorWidget::mark(QWidget* w, const QString& error, const QString& tooltip) {
  if (error.isEmpty()) {
    w->setStyleSheet({});
    w->setToolTip(tooltip);
  } else {
    w->setStyleSheet(QStringLiteral("color: #ff5050; border: 1px solid #ff5050;"));
    w->setToolTip(QStringLiteral("<b>%1</b><br>%2").arg(error.toHtmlEscaped(), tooltip));
  }
}

bool InspectorWidget::apply(QWidget* w, const ParamSpec& spec, const std::variant<std::string, ParamValue>& v) {
  auto set = [&](const std::string& id) {
    return std::holds_alternative<std::string>(v) ? model_.set_param_text(id, spec.name, std::get<std::string>(v))
                                                  : model_.set_param(id, spec.name, std::get<ParamValue>(v));
  };
  const std::string shown = node_;  // a signal of the edit may change what is shown
  const std::vector<std::string> also = also_;
  if (!also.empty()) model_.undo_stack()->beginMacro(tr("Set %1 on %2 nodes").arg(q(spec.name)).arg(also.size() + 1));
  ParamEdit e = set(shown);
  if (e.ok())
    for (const auto& id : also) set(id);
  if (!also.empty()) model_.undo_stack()->endMacro();
  mark(w, q(e.error), tooltips_[spec.name]);
  if (!e.ok()) Q_EMIT message(QStringLiteral("%1: %2").arg(q(node_), q(e.error)));
  return e.ok();
}

void InspectorWidget::set_also(std::vector<std::string> ids) {
  also_ = std::move(ids);
  if (!also_label_) return;
  also_label_->setText(
      tr("Edits apply to %n selected node(s) of this type.", nullptr, static_cast<int>(also_.size()) + 1));
  also_label_->setVisible(!also_.empty());
}

void InspectorWidget::set_problems(std::vector<Diagnostic> problems) {
  problems_ = std::move(problems);
  show_problems();
}

void InspectorWidget::show_problems() {
  if (!problems_label_) return;
  // Editors marked by the last problems go back to their own state first.
  for (auto& [name, f] : refresh_) f();
  QStringList lines;
  for (const auto& d : problems_) {
    lines << QStringLiteral("<span style='color:%1'>%2</span>")
                 .arg(d.severity == Diagnostic::Severity::Error ? QStringLiteral("#ff6060") : QStringLiteral("#e0a030"),
                      q(d.log_str()).toHtmlEscaped());
    if (d.param.empty() || d.is_port) continue;
    if (QWidget* w = editor(d.param)) mark(w, q(d.message), tooltips_[d.param]);
  }
  problems_label_->setText(lines.join(QStringLiteral("<br>")));
  problems_label_->setVisible(!lines.isEmpty());
}

void InspectorWidget::show_docs() {
  docs_open_ = true;
  if (auto* t = body_ ? body_->findChild<QToolButton*>(QStringLiteral("doc_toggle")) : nullptr) t->setChecked(true);
}

void InspectorWidget::show_node(const std::string& id) {
  node_ = id;
  also_.clear();
  problems_.clear();
  problems_label_ = nullptr;
  also_label_ = nullptr;
  editors_.clear();
  refresh_.clear();
  path_checks_.clear();
  tooltips_.clear();
  status_ = nullptr;
  facts_ = nullptr;
  if (!watcher_->directories().isEmpty()) watcher_->removePaths(watcher_->directories());
  if (workflow_description_) {
    commit_description();  // typed text is not lost by clicking a node
    workflow_description_->removeEventFilter(this);
  }
  workflow_name_ = nullptr;
  workflow_description_ = nullptr;
  if (body_) {
    // Hidden and detached now; deleted later because a signal of one of its editors may be
    // what brought us here.
    outer_->removeWidget(body_);
    body_->hide();
    body_->deleteLater();
    body_ = nullptr;
  }
  auto* scroll = new QScrollArea;
  scroll->setWidgetResizable(true);
  scroll->setFrameShape(QFrame::NoFrame);
  // Text wraps and form rows wrap; a panel narrower than one editor still scrolls to it.
  scroll->setHorizontalScrollBarPolicy(Qt::ScrollBarAsNeeded);
  body_ = scroll;
  outer_->addWidget(scroll);
  auto* page = new QWidget;
  auto* lay = new QVBoxLayout(page);
  scroll->setWidget(page);
  const NodeInstance* n = model_.workflow().find(id);
  if (!n) {
    build_workflow_page(lay);
    return;
  }
  const NodeSpec* spec = model_.spec_of(id);
  // The node id, editable: links follow a rename (GraphModel::rename_node, undoable).
  auto* id_edit = new QLineEdit(q(id));
  id_edit->setObjectName(QStringLiteral("node_id"));
  QFont bold = id_edit->font();
  bold.setBold(true);
  id_edit->setFont(bold);
  const QString id_tip =
      tr("Node id, used by links and in the file (letters, digits, '_' and '-'). "
         "Edit it to rename the node; its links follow.");
  id_edit->setToolTip(id_tip);
  connect(id_edit, &QLineEdit::editingFinished, this, [this, id_edit, id_tip] {
    const std::string wanted = id_edit->text().trimmed().toStdString();
    if (wanted == node_) {
      mark(id_edit, {}, id_tip);
      return;
    }
    const std::string why = model_.rename_node(node_, wanted);
    mark(id_edit, q(why), id_tip);
    if (!why.empty()) Q_EMIT message(tr("Cannot rename %1: %2").arg(q(node_), q(why)));
  });
  lay->addWidget(id_edit);
  auto* title = new QLabel(QStringLiteral("<small>%1 — %2%3</small>")
                               .arg(spec ? q(spec->info.title).toHtmlEscaped() : tr("unknown type"), q(n->type),
                                    spec ? QStringLiteral(" v%1").arg(spec->info.version) : QString()));
  title->setWordWrap(true);
  lay->addWidget(title);
  status_ = new QLabel;
  status_->setObjectName(QStringLiteral("node_status"));
  status_->setWordWrap(true);
  status_->setTextInteractionFlags(Qt::TextSelectableByMouse);
  status_->setVisible(false);
  lay->addWidget(status_);
  problems_label_ = new QLabel;
  problems_label_->setObjectName(QStringLiteral("node_problems"));
  problems_label_->setWordWrap(true);
  problems_label_->setTextInteractionFlags(Qt::TextSelectableByMouse);
  problems_label_->setVisible(false);
  lay->addWidget(problems_label_);
  also_label_ = new QLabel;
  also_label_->setObjectName(QStringLiteral("also_edits"));
  also_label_->setWordWrap(true);
  also_label_->setStyleSheet(QStringLiteral("color: #6ab0ff;"));
  also_label_->setVisible(false);
  lay->addWidget(also_label_);
  if (!spec) {
    auto* l =
        new QLabel(tr("No loaded plugin provides the type '%1'; its parameters are kept as written.").arg(q(n->type)));
    l->setWordWrap(true);
    l->setStyleSheet(QStringLiteral("color: #ff7070;"));
    lay->addWidget(l);
    lay->addStretch();
    return;
  }
  // Parameters first, in a form whose rows wrap (label above its editor) when a long name
  // and its editor do not fit side by side: editors and units stay in view at any width.
  auto* form = new QFormLayout;
  form->setFieldGrowthPolicy(QFormLayout::AllNonFixedFieldsGrow);
  form->setRowWrapPolicy(QFormLayout::WrapLongRows);
  for (const ParamSpec& p : spec->params) {
    tooltips_[p.name] = spec_tooltip(p);
    QWidget* ed = make_editor(p);
    // Long identifiers may break after their underscores (a zero-width space there): the
    // label column never forces the panel wider than its editors need.
    QString text = q(p.name);
    text.replace(QLatin1Char('_'), QStringLiteral("_\u200B"));
    auto* label = new QLabel(text + (p.required ? QStringLiteral(" *") : QString()));
    label->setWordWrap(true);
    label->setToolTip(tooltips_[p.name]);
    form->addRow(label, ed);
  }
  if (spec->params.empty()) form->addRow(new QLabel(tr("<i>No parameters.</i>")));
  lay->addLayout(form);
  // Ports, read-only.
  QString ports;
  for (const auto& p : spec->inputs)
    ports += QStringLiteral("<span style='color:%1'>●</span> in <b>%2</b>: %3%4<br>")
                 .arg(type_color(p.type).name(), q(p.name), q(p.type), p.optional ? tr(" (optional)") : QString());
  for (const auto& p : spec->outputs)
    ports += QStringLiteral("<span style='color:%1'>●</span> out <b>%2</b>: %3<br>")
                 .arg(type_color(p.type).name(), q(p.name), q(p.type));
  if (!ports.isEmpty()) {
    auto* l = new QLabel(ports);
    l->setWordWrap(true);
    lay->addWidget(l);
  }
  // The node's documentation last, collapsible (it stays open or closed from node to node): the
  // brief, then the structured parts (NodeInfo), as `gemflow nodes ID` shows them.
  QString more;
  const std::pair<QString, const std::string*> parts[] = {{tr("Errors"), &spec->info.errors},
                                                          {tr("Memory"), &spec->info.memory},
                                                          {tr("Determinism"), &spec->info.determinism},
                                                          {tr("References"), &spec->info.references}};
  for (const auto& [heading, text] : parts)
    if (!text->empty()) more += QStringLiteral("<p><b>%1:</b> %2</p>").arg(heading, q(*text).toHtmlEscaped());
  if (!spec->info.doc.empty() || !more.isEmpty()) {
    auto* toggle = new QToolButton;
    toggle->setObjectName(QStringLiteral("doc_toggle"));
    toggle->setText(tr("Documentation"));
    toggle->setToolButtonStyle(Qt::ToolButtonTextBesideIcon);
    toggle->setAutoRaise(true);
    toggle->setCheckable(true);
    toggle->setChecked(docs_open_);
    toggle->setArrowType(docs_open_ ? Qt::DownArrow : Qt::RightArrow);
    auto* doc = new QLabel(q(spec->info.doc));
    doc->setObjectName(QStringLiteral("node_doc"));
    doc->setWordWrap(true);
    doc->setTextInteractionFlags(Qt::TextSelectableByMouse);
    doc->setVisible(docs_open_);
    auto* details = new QLabel(more);
    details->setObjectName(QStringLiteral("node_doc_details"));
    details->setWordWrap(true);
    details->setTextInteractionFlags(Qt::TextSelectableByMouse);
    details->setVisible(docs_open_ && !more.isEmpty());
    connect(toggle, &QToolButton::toggled, this, [this, toggle, doc, details, has_more = !more.isEmpty()](bool open) {
      docs_open_ = open;
      toggle->setArrowType(open ? Qt::DownArrow : Qt::RightArrow);
      doc->setVisible(open);
      details->setVisible(open && has_more);
    });
    lay->addWidget(toggle);
    lay->addWidget(doc);
    lay->addWidget(details);
  }
  lay->addStretch();
  refresh_values();
}

void InspectorWidget::build_workflow_page(QVBoxLayout* lay) {
  // Nothing selected: the workflow's own fields (name, description), undoable.
  const Workflow& wf = model_.workflow();
  lay->addWidget(new QLabel(tr("<b>Workflow</b>")));
  auto* form = new QFormLayout;
  form->setFieldGrowthPolicy(QFormLayout::AllNonFixedFieldsGrow);
  auto* name = new QLineEdit(q(wf.name));
  name->setObjectName(QStringLiteral("workflow_name"));
  name->setToolTip(tr("Name of the workflow (the file's <code>name:</code>); runs go to runs/&lt;name&gt;."));
  connect(name, &QLineEdit::editingFinished, this, [this, name] {
    const std::string v = name->text().trimmed().toStdString();
    if (v.empty()) {
      mark(name, tr("a workflow needs a name"), name->toolTip());
      return;
    }
    model_.set_name(v);
  });
  form->addRow(tr("name"), name);
  auto* desc = new QPlainTextEdit(q(wf.description));
  desc->setObjectName(QStringLiteral("workflow_description"));
  desc->setToolTip(
      tr("What the workflow does (the file's <code>description:</code>). Applied when the box loses focus."));
  desc->setTabChangesFocus(true);
  desc->installEventFilter(this);
  form->addRow(tr("description"), desc);
  lay->addLayout(form);
  auto* info = new QLabel;
  info->setObjectName(QStringLiteral("workflow_facts"));
  info->setWordWrap(true);
  info->setTextInteractionFlags(Qt::TextSelectableByMouse);
  lay->addWidget(info);
  facts_ = info;
  update_facts();
  auto* hint = new QLabel(tr("Select a node to edit its parameters."));
  hint->setWordWrap(true);
  hint->setEnabled(false);
  lay->addWidget(hint);
  lay->addStretch();
  workflow_name_ = name;
  workflow_description_ = desc;
}

void InspectorWidget::update_facts() {
  if (!facts_) return;
  const Workflow& wf = model_.workflow();
  QString facts = tr("%n node(s)", nullptr, static_cast<int>(wf.nodes.size())) + QStringLiteral(", ") +
                  tr("%n link(s)", nullptr, static_cast<int>(wf.links.size()));
  facts += QStringLiteral("<br>") + (wf.file.empty() ? tr("not saved yet") : q(wf.file.string()).toHtmlEscaped());
  facts_->setText(QStringLiteral("<small>%1</small>").arg(facts));
}

void InspectorWidget::watch_folder_of(const std::filesystem::path& file) {
  // A missing input file may appear (or a present one go) without any edit: its folder is
  // watched so that the field's state follows the disk.
  std::error_code ec;
  std::filesystem::path dir = file.parent_path();
  while (!dir.empty() && !std::filesystem::is_directory(dir, ec) && dir != dir.parent_path()) dir = dir.parent_path();
  if (dir.empty()) return;
  const QString d = q(dir.string());
  if (!watcher_->directories().contains(d)) watcher_->addPath(d);
}

void InspectorWidget::refresh() {
  update_facts();
  check_paths();
}

void InspectorWidget::check_paths() {
  for (auto& [name, f] : path_checks_) f();
}

void InspectorWidget::commit_description() {
  if (!workflow_description_) return;
  const std::string v = workflow_description_->toPlainText().trimmed().toStdString();
  model_.set_description(v);
}

bool InspectorWidget::eventFilter(QObject* watched, QEvent* e) {
  if (watched == workflow_description_ && e->type() == QEvent::FocusOut) commit_description();
  return QWidget::eventFilter(watched, e);
}

QWidget* InspectorWidget::make_editor(const ParamSpec& p) {
  const QString tip = tooltips_[p.name];
  const std::string name = p.name;
  QWidget* result = nullptr;
  switch (p.kind) {
    case ParamKind::Bool: {
      auto* cb = new QCheckBox;
      connect(cb, &QCheckBox::toggled, this, [this, cb, p](bool on) { apply(cb, p, ParamValue{on}); });
      refresh_[name] = [this, cb, name] {
        const auto v = model_.param_value(node_, name);
        QSignalBlocker b(cb);
        cb->setChecked(v && std::holds_alternative<bool>(*v) && std::get<bool>(*v));
      };
      editors_[name] = result = cb;
      break;
    }
    case ParamKind::Int:
    case ParamKind::Float: {
      auto* row = new QWidget;
      auto* h = new QHBoxLayout(row);
      h->setContentsMargins(0, 0, 0, 0);
      auto* sb = new NumberSpin(p);
      sb->base_tooltip = tip;
      h->addWidget(sb, 1);
      if (!p.unit.empty()) h->addWidget(new QLabel(q(p.unit)));
      connect(sb, &QDoubleSpinBox::valueChanged, this, [this, sb, p] { apply(sb, p, sb->param_value()); });
      refresh_[name] = [this, sb, name] {
        const auto v = model_.param_value(node_, name);
        if (!v) return;
        QSignalBlocker b(sb);
        if (auto* i = std::get_if<std::int64_t>(&*v)) sb->setValue(static_cast<double>(*i));
        else if (auto* d = std::get_if<double>(&*v)) sb->setValue(*d);
        sb->revalidate();
      };
      editors_[name] = sb;
      result = row;
      break;
    }
    case ParamKind::Choice:
    case ParamKind::Device: {
      auto* combo = new QComboBox;
      if (p.kind == ParamKind::Choice) {
        for (const auto& c : p.choices) combo->addItem(q(c));
      } else {
        combo->setEditable(true);  // cuda:N for any N; checked by the spec
        combo->addItems({QStringLiteral("auto"), QStringLiteral("cpu"), QStringLiteral("cuda")});
        for (int i = 0; i < cuda_device_count(); ++i)
          combo->addItem(QStringLiteral("cuda:%1").arg(i), q(cuda_device_name(i)));
        connect(combo->lineEdit(), &QLineEdit::editingFinished, this,
                [this, combo, p] { apply(combo, p, combo->currentText().trimmed().toStdString()); });
      }
      connect(combo, &QComboBox::activated, this,
              [this, combo, p](int) { apply(combo, p, combo->currentText().toStdString()); });
      refresh_[name] = [this, combo, name] {
        const auto v = model_.param_value(node_, name);
        if (!v) return;
        QSignalBlocker b(combo);
        mark(combo, {}, tooltips_[name]);
        const QString t = q(format_param(*v));
        int i = combo->findText(t);
        if (i < 0 && combo->isEditable()) combo->setEditText(t);
        else combo->setCurrentIndex(i);
      };
      editors_[name] = result = combo;
      break;
    }
    case ParamKind::InputPath:
    case ParamKind::OutputPath:
    case ParamKind::String: {
      auto* edit = new QLineEdit;
      QWidget* w = edit;
      if (p.kind != ParamKind::String) {
        w = new QWidget;
        auto* h = new QHBoxLayout(w);
        h->setContentsMargins(0, 0, 0, 0);
        h->addWidget(edit, 1);
        auto* pick = new QToolButton;
        pick->setText(QStringLiteral("…"));
        pick->setToolTip(p.kind == ParamKind::InputPath ? tr("Choose a file (stored relative to the workflow file)")
                                                        : tr("Choose an output file"));
        h->addWidget(pick);
        connect(pick, &QToolButton::clicked, this, [this, edit, p] {
          namespace fs = std::filesystem;
          const fs::path base = model_.workflow().base_dir();
          const bool input = p.kind == ParamKind::InputPath;
          QFileDialog dialog(this,
                             input ? tr("Input file for %1").arg(q(p.name)) : tr("Output file for %1").arg(q(p.name)),
                             q(base.string()));
          dialog.setObjectName(QStringLiteral("path_dialog"));
          dialog.setAcceptMode(input ? QFileDialog::AcceptOpen : QFileDialog::AcceptSave);
          dialog.setFileMode(input ? QFileDialog::ExistingFile : QFileDialog::AnyFile);
          dialog.setNameFilters(path_name_filters(p));
          if (!input && !p.extensions.empty()) dialog.setDefaultSuffix(q(p.extensions.front()).mid(1));
          if (dialog.exec() != QDialog::Accepted || dialog.selectedFiles().isEmpty()) return;
          fs::path chosen = dialog.selectedFiles().front().toStdString();
          // Input paths are stored relative to the workflow file; before the first save they
          // stay absolute and GraphModel::save makes them relative to where the file goes.
          if (input && !model_.workflow().file.empty()) {
            fs::path rel = chosen.lexically_normal().lexically_relative(fs::absolute(base).lexically_normal());
            if (!rel.empty()) chosen = rel;
          }
          edit->setText(q(chosen.generic_string()));
          apply(edit, p, chosen.generic_string());
        });
      }
      connect(edit, &QLineEdit::editingFinished, this, [this, edit, p] {
        if (edit->isModified()) apply(edit, p, edit->text().toStdString());
        edit->setModified(false);
      });
      // The field's state follows the file on disk: a missing input file is shown orange.
      auto check = [this, edit, name, kind = p.kind, tip] {
        const auto v = model_.param_value(node_, name);
        mark(edit, {}, tip);
        if (kind != ParamKind::InputPath || !v || !std::holds_alternative<std::string>(*v) ||
            std::get<std::string>(*v).empty())
          return;
        namespace fs = std::filesystem;
        fs::path f = std::get<std::string>(*v);
        if (f.is_relative()) f = model_.workflow().base_dir() / f;
        watch_folder_of(f);
        std::error_code ec;
        if (!fs::exists(f, ec)) {
          edit->setStyleSheet(QStringLiteral("color: #e0a020;"));
          edit->setToolTip(tr("<b>File not found:</b> %1<br>%2").arg(q(f.string()).toHtmlEscaped(), tip));
        }
      };
      path_checks_[name] = [edit, check] {
        if (!edit->isModified()) check();  // never over what is being typed
      };
      refresh_[name] = [this, edit, name, check] {
        const auto v = model_.param_value(node_, name);
        if (!v) return;
        QSignalBlocker b(edit);
        edit->setText(q(format_param(*v)));
        check();
      };
      editors_[name] = edit;
      result = w;
      break;
    }
  }
  if (result) result->setToolTip(tip);
  if (auto it = editors_.find(name); it != editors_.end()) it->second->setToolTip(tip);
  return result;
}

void InspectorWidget::refresh_values() {
  for (auto& [name, f] : refresh_) f();
}

}  // namespace gemflow::studio
