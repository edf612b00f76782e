#pragma once
// Application-wide input rules of Studio, one event filter for every widget (including those
// created later, in any panel):
// - Spin boxes and combo boxes take the mouse wheel only while they have keyboard focus; an
//   unfocused one under the cursor lets the wheel scroll the panel around it (a wheel must
//   never edit a value by passing over it). They never take focus from the wheel either.
// - Undo/Redo shortcuts reach the document's undo stack whatever widget has focus; a text
//   editor keeps them only while it holds uncommitted text of its own to undo or redo.
namespace gemflow::studio {

/// Installs the filter on the QApplication (once; later calls do nothing).
void install_input_guard();

}  // namespace gemflow::studio
