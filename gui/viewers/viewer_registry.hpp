#pragma once
// Which viewer shows a value of which data type, keyed by DataType<T>::name so that no type name
// is spelled twice. A viewer is a widget, made once per Viewers dock, and a function that shows a
// value in it. A plugin type gets its viewer by one add<T, Widget>() line in builtin_viewers().
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include <QString>

#include <gemflow/data.hpp>

class QWidget;

namespace gemflow::studio {

class ViewerRegistry {
 public:
  /// Makes the viewer's widget (the dock owns it).
  using Make = std::function<QWidget*()>;
  /// Shows a value of the registered type in a widget that Make made.
  using Show = std::function<void(QWidget& widget, const Value& value, const QString& label)>;
  struct Viewer {
    std::string type;  ///< DataType<T>::name of the values it shows
    std::string id;    ///< e.g. "heatmap"; the types of one id share one widget in a dock
    Make make;
    Show show;
  };

  /// Registers viewer `id` (a W) for T: show(W&, std::shared_ptr<const T>, const QString& label).
  /// Registrations with the same id share one widget, so they must name the same W.
  template <class T, class W, class F>
  void add(std::string id, F show) {
    add(
        DataType<T>::name, std::move(id), [] { return static_cast<QWidget*>(new W); },
        [show = std::move(show)](QWidget& widget, const Value& value, const QString& label) {
          show(dynamic_cast<W&>(widget), value.template as<T>(), label);
        });
  }
  /// The untyped form, for a type known by name only. Throws gemflow::Error when `id` is already
  /// registered for `type_name`, or when the name, id, make or show is empty.
  void add(std::string_view type_name, std::string id, Make make, Show show);

  /// Where the dock looks for a companion value (see ViewerPanel).
  enum class Near {
    Selection,  ///< only among the outputs of the other selected nodes
    Upstream,   ///< among them, else the nearest node upstream of the shown one
  };
  /// A value of another type that a viewer draws together with the one it shows (the signal
  /// under its segmentation). `show` is called after the viewer's own show, which clears what
  /// the previous value's companions drew.
  struct Companion {
    std::string viewer;  ///< viewer id
    std::string type;    ///< DataType<T>::name of the companion
    Near near = Near::Selection;
    Show show;
    /// Also looked for when the shown value has this type (another output of it is drawn too:
    /// a second posterior strip, the flattening beside a mesh); otherwise skipped then.
    bool own_type = false;
  };
  /// Registers a companion T of viewer `id` (a W): show(W&, std::shared_ptr<const T>, label).
  template <class T, class W, class F>
  void add_companion(std::string id, Near near, F show, bool own_type = false) {
    add_companion(
        DataType<T>::name, std::move(id), near,
        [show = std::move(show)](QWidget& widget, const Value& value, const QString& label) {
          show(dynamic_cast<W&>(widget), value.template as<T>(), label);
        },
        own_type);
  }
  /// Untyped form. Throws gemflow::Error when viewer `id` is not registered, or already has a
  /// companion of this type.
  void add_companion(std::string_view type_name, std::string id, Near near, Show show, bool own_type = false);
  /// The companions of viewer `id`, in registration order.
  [[nodiscard]] std::vector<const Companion*> companions_of(std::string_view id) const;

  /// The viewers of a type, in registration order; empty when none (the dock then shows the
  /// value's summary).
  [[nodiscard]] std::vector<const Viewer*> viewers_for(std::string_view type_name) const;
  /// One registration per viewer id (its first), in registration order: the widgets a dock makes.
  [[nodiscard]] std::vector<const Viewer*> distinct_viewers() const;

 private:
  std::vector<Viewer> viewers_;
  std::vector<Companion> companions_;
};

/// The viewers Studio ships, registered in one place (viewer_registry.cpp).
[[nodiscard]] const ViewerRegistry& builtin_viewers();

}  // namespace gemflow::studio
