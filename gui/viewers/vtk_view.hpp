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
// Rendering happens on a thread of the view's own, which owns that context (when the platform
// supports OpenGL on threads; otherwise on the GUI thread as before): a heavy frame (a large
// ensemble in software OpenGL takes seconds) never blocks the GUI. Every change of the VTK
// scene is posted to that thread with post(); the widget paints the latest finished frame.
//
// Mouse events go to a vtkGenericRenderWindowInteractor (trackball camera), on the render
// thread too. The default QSurfaceFormat (3.2 core) must be set before the QApplication
// exists: call gemflow::studio::set_default_surface_format().
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
class QThread;

namespace gemflow::studio {

/// Sets the 3.2 core-profile default surface format VTK needs. Call before QApplication.
void set_default_surface_format();

class VtkView : public QWidget {
  Q_OBJECT
 public:
  explicit VtkView(QWidget* parent = nullptr);
  ~VtkView() override;
  /// Runs `f` on the render thread with the renderer (after everything posted before), then
  /// draws a new frame. The VTK scene is touched only this way.
  void post(std::function<void(vtkRenderer*)> f);
  /// Runs `f` on the render thread after everything posted before and waits for it (reading
  /// the VTK scene: tests, exports). Draws nothing.
  void query(const std::function<void(vtkRenderer*)>& f);
  /// Mouse for flat content: left or middle drag pans, right drag and wheel zoom, no rotation
  /// (the default is a trackball camera).
  void set_interaction_2d();
  /// Resets the camera to show everything and repaints.
  void reset_camera();
  /// How reset_camera() frames the content: called with the renderer and the view's aspect
  /// ratio (width / height). Default (empty): VTK's ResetCamera, zoomed in a little.
  void set_camera_fit(std::function<void(vtkRenderer*, double aspect)> fit);
  /// Renders now (after everything posted) and returns the frame (device pixels; null when
  /// OpenGL is unavailable). Blocks until the frame is drawn.
  [[nodiscard]] QImage grab_frame();
  /// Why nothing can be drawn ("" when rendering works or was not tried yet).
  [[nodiscard]] const QString& error() const { return error_; }
  /// Whether a frame is being drawn or changes wait for one (false: what is shown is current).
  [[nodiscard]] bool rendering() const { return render_queued_; }
  /// Whether frames are drawn off the GUI thread.
  [[nodiscard]] bool threaded() const { return thread_ != nullptr; }

 Q_SIGNALS:
  /// A new frame is shown.
  void frame_shown();

 protected:
  void paintEvent(QPaintEvent* e) override;
  void resizeEvent(QResizeEvent* e) override;
  void showEvent(QShowEvent* e) override;
  void mousePressEvent(QMouseEvent* e) override;
  void mouseReleaseEvent(QMouseEvent* e) override;
  void mouseMoveEvent(QMouseEvent* e) override;
  void wheelEvent(QWheelEvent* e) override;

 private:
  // GUI thread.
  void request_render();
  void run_on_render_thread(std::function<void()> f, bool wait);
  [[nodiscard]] QSize device_size() const;
  void forward_mouse(QMouseEvent* e, unsigned long event);
  void fit_if_pending();
  // Render thread.
  bool ensure_context();
  bool make_current();
  QImage render_frame(QSize px);
  void fit_camera(double aspect);
  void release();

  vtkSmartPointer<vtkGenericOpenGLRenderWindow> window_;
  vtkSmartPointer<vtkGenericRenderWindowInteractor> interactor_;
  vtkSmartPointer<vtkRenderer> renderer_;
  QOffscreenSurface* surface_ = nullptr;           // created on the GUI thread, used on the render thread
  QOpenGLContext* context_ = nullptr;              // render thread
  QString context_error_;                          // render thread
  std::function<void(vtkRenderer*, double)> fit_;  // render thread
  QThread* thread_ = nullptr;
  QObject* worker_ = nullptr;  // lives on the render thread: queued calls run there
  // GUI thread.
  QImage frame_;
  QString error_;
  bool render_queued_ = false, dirty_ = false, camera_pending_ = false;
};

}  // namespace gemflow::studio
