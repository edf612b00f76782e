#include "editor/style.hpp"

#include <map>

#include <QHash>

namespace gemflow::studio {

QColor type_color(const std::string& type) {
  static const std::map<std::string, QColor> fixed{
      {"Structure", QColor(0xe0, 0x8a, 0x2e)},   {"DistanceBounds", QColor(0x9b, 0x59, 0xd0)},
      {"Matrix<f64>", QColor(0x3b, 0x8e, 0xd0)}, {"Matrix<f32>", QColor(0x5b, 0xb0, 0xe6)},
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

}  // namespace gemflow::studio
