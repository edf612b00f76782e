#include "editor/style.hpp"

#include <map>

#include <QApplication>
#include <QHash>
#include <QPalette>
#include <QStyle>

namespace gemflow::studio {

QColor type_color(const std::string& type) {
  static const std::map<std::string, QColor> fixed{
      {"Structure", QColor(0xe0, 0x8a, 0x2e)},    {"DistanceBounds", QColor(0x9b, 0x59, 0xd0)},
      {"Matrix<f64>", QColor(0x3b, 0x8e, 0xd0)},  {"Matrix<f32>", QColor(0x5b, 0xb0, 0xe6)},
      {"RestraintSet", QColor(0xd0, 0x4a, 0x6e)}, {"Table", QColor(0x8a, 0x9a, 0x5b)},
  };
  if (auto it = fixed.find(type); it != fixed.end()) return it->second;
  const uint h = qHash(QString::fromStdString(type));
  return QColor::fromHsv(static_cast<int>(h % 360), 150, 210);
}

QColor state_color(NodeState s) {
  switch (s) {
    case NodeState::Idle: return QColor(0x80, 0x80, 0x80);
    case NodeState::Queued: return QColor(0x7a, 0x8c, 0xa8);
    case NodeState::Running: return QColor(0x2d, 0x7f, 0xf9);
    case NodeState::Cached: return QColor(0x1a, 0xa3, 0x9a);
    case NodeState::Done: return QColor(0x2e, 0xb8, 0x4b);
    case NodeState::Failed: return QColor(0xe0, 0x36, 0x36);
    case NodeState::Cancelled:
    case NodeState::Skipped: return QColor(0xe0, 0xa0, 0x20);
  }
  return Qt::gray;
}

QString state_text(NodeState s) { return QString::fromLatin1(to_string(s)); }

bool desktop_prefers_dark() {
  static const bool dark = [] {
    // GTK and KDE desktops name their dark themes so; the platform palette says it otherwise.
    const QString gtk = qEnvironmentVariable("GTK_THEME").toLower();
    if (gtk.contains(QLatin1String("dark"))) return true;
    const QColor w = QGuiApplication::palette().color(QPalette::Window);
    return w.lightness() < 128;
  }();
  return dark;
}

Theme theme_from_string(const QString& s) {
  if (s == QLatin1String("dark")) return Theme::Dark;
  if (s == QLatin1String("light")) return Theme::Light;
  return Theme::System;
}

QString to_string(Theme t) {
  switch (t) {
    case Theme::Dark: return QStringLiteral("dark");
    case Theme::Light: return QStringLiteral("light");
    case Theme::System: break;
  }
  return QStringLiteral("system");
}

bool apply_theme(Theme t) {
  (void)desktop_prefers_dark();  // remember the desktop's palette before changing it
  const bool dark = t == Theme::Dark || (t == Theme::System && desktop_prefers_dark());
  if (dark) apply_studio_palette();
  else QApplication::setPalette(QApplication::style()->standardPalette());
  return dark;
}

void apply_studio_palette() {
  const QColor window(0x2e, 0x31, 0x36), base(0x1f, 0x21, 0x25), text(0xe4, 0xe6, 0xea);
  const QColor disabled(0x80, 0x84, 0x8c), accent(0x3d, 0x8e, 0xe0);
  QPalette p;
  p.setColor(QPalette::Window, window);
  p.setColor(QPalette::WindowText, text);
  p.setColor(QPalette::Base, base);
  p.setColor(QPalette::AlternateBase, QColor(0x28, 0x2b, 0x30));
  p.setColor(QPalette::ToolTipBase, QColor(0x38, 0x3b, 0x42));
  p.setColor(QPalette::ToolTipText, text);
  p.setColor(QPalette::PlaceholderText, disabled);
  p.setColor(QPalette::Text, text);
  p.setColor(QPalette::Button, QColor(0x3a, 0x3d, 0x44));
  p.setColor(QPalette::ButtonText, text);
  p.setColor(QPalette::BrightText, QColor(0xff, 0x60, 0x60));
  p.setColor(QPalette::Light, QColor(0x4a, 0x4e, 0x56));
  p.setColor(QPalette::Midlight, QColor(0x40, 0x43, 0x4a));
  p.setColor(QPalette::Mid, QColor(0x30, 0x33, 0x38));
  p.setColor(QPalette::Dark, QColor(0x1a, 0x1c, 0x20));
  p.setColor(QPalette::Shadow, QColor(0x10, 0x10, 0x12));
  p.setColor(QPalette::Highlight, accent);
  p.setColor(QPalette::HighlightedText, Qt::white);
  p.setColor(QPalette::Link, QColor(0x6a, 0xb0, 0xff));
  p.setColor(QPalette::LinkVisited, QColor(0xb0, 0x90, 0xff));
  for (auto role : {QPalette::WindowText, QPalette::Text, QPalette::ButtonText})
    p.setColor(QPalette::Disabled, role, disabled);
  p.setColor(QPalette::Disabled, QPalette::Highlight, QColor(0x50, 0x54, 0x5c));
  QApplication::setPalette(p);
}

}  // namespace gemflow::studio
