#include "app/input_guard.hpp"

#include <QAbstractSpinBox>
#include <QApplication>
#include <QComboBox>
#include <QKeyEvent>
#include <QLineEdit>
#include <QPlainTextEdit>
#include <QPointer>
#include <QTextEdit>

namespace gemflow::studio {

namespace {

bool wheel_guarded(const QObject* o) {
  return qobject_cast<const QAbstractSpinBox*>(o) || qobject_cast<const QComboBox*>(o);
}

/// The line edit that holds a widget's text: itself, or the one inside a spin box or an
/// editable combo box.
QLineEdit* line_edit_of(QObject* o) {
  if (auto* le = qobject_cast<QLineEdit*>(o)) return le;
  if (qobject_cast<QAbstractSpinBox*>(o) || qobject_cast<QComboBox*>(o))
    return o->findChild<QLineEdit*>(QString(), Qt::FindDirectChildrenOnly);
  return nullptr;
}

/// Whether `o` may keep an Undo (undo = true) or Redo shortcut for its own text: only while
/// its text differs from what was last set or committed and it has that step to take.
bool keeps_text_undo(QObject* o, bool undo) {
  if (auto* le = line_edit_of(o)) {
    if (le->isReadOnly() || !le->isModified()) return false;
    return undo ? le->isUndoAvailable() : le->isRedoAvailable();
  }
  if (auto* pe = qobject_cast<QPlainTextEdit*>(o)) {
    if (pe->isReadOnly()) return false;
    return undo ? pe->document()->isUndoAvailable() : pe->document()->isRedoAvailable();
  }
  if (auto* te = qobject_cast<QTextEdit*>(o)) {
    if (te->isReadOnly()) return false;
    return undo ? te->document()->isUndoAvailable() : te->document()->isRedoAvailable();
  }
  return true;  // not a text editor: its own business
}

class InputGuard : public QObject {
 public:
  using QObject::QObject;

 protected:
  bool eventFilter(QObject* o, QEvent* e) override {
    switch (e->type()) {
      case QEvent::Polish:
        // Qt's default for both is WheelFocus: a wheel passing over would focus them first.
        if (wheel_guarded(o)) {
          auto* w = static_cast<QWidget*>(o);
          if ((w->focusPolicy() & Qt::WheelFocus) == Qt::WheelFocus) w->setFocusPolicy(Qt::StrongFocus);
        }
        break;
      case QEvent::Wheel:
        if (wheel_guarded(o) && !static_cast<QWidget*>(o)->hasFocus()) {
          // Ignored and filtered: QApplication passes a real wheel event on to the parent
          // (the scroll area), and the value stays as it is.
          e->ignore();
          return true;
        }
        break;
      case QEvent::ShortcutOverride: {
        auto* k = static_cast<QKeyEvent*>(e);
        const bool undo = k->matches(QKeySequence::Undo);
        const bool redo = !undo && k->matches(QKeySequence::Redo);
        if ((undo || redo) && !keeps_text_undo(o, undo)) {
          // Not overridden: the window's Undo/Redo action (the document's stack) runs.
          e->ignore();
          return true;
        }
        break;
      }
      default: break;
    }
    return false;
  }
};

}  // namespace

void install_input_guard() {
  static QPointer<InputGuard> guard;
  if (guard || !qApp) return;
  guard = new InputGuard(qApp);
  qApp->installEventFilter(guard);
  for (QWidget* w : QApplication::allWidgets())  // polished before the filter existed
    if (wheel_guarded(w) && (w->focusPolicy() & Qt::WheelFocus) == Qt::WheelFocus) w->setFocusPolicy(Qt::StrongFocus);
}

}  // namespace gemflow::studio
