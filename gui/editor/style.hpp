#pragma once
// Colours of Studio: one per data type (ports and wires), one per node state, and the
// application palette.
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
/// Studio's dark Fusion palette (panels match the editor's dark canvas). Call once, after the
/// QApplication exists and its style is set.
void apply_studio_palette();

}  // namespace gemflow::studio
