#pragma once
// VtkView: a widget that shows a VTK renderer (Debian's VTK 9.1 has no Qt 6 widget).
//
// VTK draws through a vtkGenericOpenGLRenderWindow into an OpenGL context that this widget
// owns (a QOpenGLContext on a QOffscreenSurface, created on first use); each frame is read
// back and painted as an image. Rendering inside a QOpenGLWidget's context instead (the
// recipe first tried, see DESIGN.md) breaks whenever Qt re-creates or re-targets that context,
// which it does when a window first composes OpenGL content or a dock is floated: VTK's
// framebuffer objects then belong to another context and the widget showed uninitialised
// memory (measured under Xvfb with Mesa; the Studio GUI test checks for it). A private context
// is never touched by Qt, and the read-back costs about a millisecond per frame on a GPU.
//
// Mouse events go to a vtkGenericRenderWindowInteractor (trackball camera). The default
// QSurfaceFormat (3.2 core) must be set before the QApplication exists: call
// gemflow::studio::set_default_surface_format().
#include <functional>

#include <QImage>
#include <QString>
#include <QWidget>

#include <vtkSmartPointer.h>

#include <vtkGenericOpenGLRenderWindow.h>
#include <vtkGenericRenderWindowInteractor.h>
#include <vtkRenderer.h>

class QOffscreenSurface;
class QOpenGLContext;

namespace gemflow::studio {

/// Sets the 3.2 core-profile default surface format VTK needs. Call before QApplication.
void set_default_surface_format();

class VtkView : public QWidget {
  Q_OBJECT
 public:
  explicit VtkView(QWidget* parent = nullptr);
  ~VtkView() override;
  [[nodiscard]] vtkRenderer* renderer() const { return renderer_; }
  [[nodiscard]] vtkGenericOpenGLRenderWindow* render_window() const { return window_; }
  /// Resets the camera to show everything and repaints.
  void reset_camera();
  /// How reset_camera() frames the content: called with the renderer and the view's aspect
  /// ratio (width / height). Default (empty): VTK's ResetCamera, zoomed in a little.
  void set_camera_fit(std::function<void(vtkRenderer*, double aspect)> fit) { fit_ = std::move(fit); }
  /// Renders now and returns the frame (device pixels; null when OpenGL is unavailable).
  [[nodiscard]] QImage grab_frame();
  /// Why nothing can be drawn ("" when rendering works).
  [[nodiscard]] const QString& error() const { return error_; }

 protected:
  void paintEvent(QPaintEvent* e) override;
  void resizeEvent(QResizeEvent* e) override;
  void mousePressEvent(QMouseEvent* e) override;
  void mouseReleaseEvent(QMouseEvent* e) override;
  void mouseMoveEvent(QMouseEvent* e) override;
  void wheelEvent(QWheelEvent* e) override;

 private:
  bool ensure_context();
  bool make_current();
  void render_frame();
  void forward_mouse(QMouseEvent* e, unsigned long event);
  void fit_camera();
  vtkSmartPointer<vtkGenericOpenGLRenderWindow> window_;
  vtkSmartPointer<vtkGenericRenderWindowInteractor> interactor_;
  vtkSmartPointer<vtkRenderer> renderer_;
  QOffscreenSurface* surface_ = nullptr;
  QOpenGLContext* context_ = nullptr;
  std::function<void(vtkRenderer*, double)> fit_;
  QImage frame_;
  QString error_;
  bool camera_pending_ = false;
};

}  // namespace gemflow::studio
