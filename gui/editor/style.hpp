#pragma once
// Colours of Studio's editor: one per data type (ports and wires) and one per node state.
#include <string>

#include <QColor>
#include <QString>

#include <gemflow/executor.hpp>

namespace gemflow::studio {

/// Stable colour of a data type: fixed for the SDK's types, hashed hue for plugin types.
[[nodiscard]] QColor type_color(const std::string& type);
/// Badge colour of a node state (idle grey, queued blue-grey, running blue, cached teal,
/// done green, failed red, cancelled/skipped amber).
[[nodiscard]] QColor state_color(NodeState s);
/// Human-readable state ("running 42 %").
[[nodiscard]] QString state_text(NodeState s);

}  // namespace gemflow::studio
