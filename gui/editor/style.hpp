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

/// Studio's theme setting: follow the desktop, or always dark or light.
enum class Theme { System, Dark, Light };
/// True when the desktop prefers dark colours: the platform palette's window colour (taken the
/// first time this is called, before Studio changes the palette) is dark.
[[nodiscard]] bool desktop_prefers_dark();
/// Applies the panels' palette for `t` (the editor canvas stays dark, as in other node editors).
/// Returns whether the dark palette was applied.
bool apply_theme(Theme t);
[[nodiscard]] Theme theme_from_string(const QString& s);
[[nodiscard]] QString to_string(Theme t);

}  // namespace gemflow::studio
