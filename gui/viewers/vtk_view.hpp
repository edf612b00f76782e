#pragma once
// VtkView: a QOpenGLWidget that owns a vtkGenericOpenGLRenderWindow (Debian's VTK 9.1 has no
// Qt 6 widget). The recipe verified in DESIGN.md: SetOwnContext(false) + OpenGLInitContext()
// in initializeGL, SetSize in resizeGL, Render() in paintGL, mouse events forwarded to a
// vtkGenericRenderWindowInteractor; the default QSurfaceFormat (3.2 core) is set before the
// QApplication (see gemflow::studio::set_default_surface_format()).
#include <QOpenGLWidget>

#include <vtkNew.h>
#include <vtkSmartPointer.h>

#include <vtkGenericOpenGLRenderWindow.h>
#include <vtkGenericRenderWindowInteractor.h>
#include <vtkRenderer.h>

namespace gemflow::studio {

/// Sets the 3.2 core-profile default surface format VTK needs. Call before QApplication.
void set_default_surface_format();

class VtkView : public QOpenGLWidget {
  Q_OBJECT
 public:
  explicit VtkView(QWidget* parent = nullptr);
  ~VtkView() override;
  [[nodiscard]] vtkRenderer* renderer() const { return renderer_; }
  [[nodiscard]] vtkGenericOpenGLRenderWindow* render_window() const { return window_; }
  /// Resets the camera to show everything and repaints.
  void reset_camera();

 protected:
  void initializeGL() override;
  void resizeGL(int w, int h) override;
  void paintGL() override;
  void mousePressEvent(QMouseEvent* e) override;
  void mouseReleaseEvent(QMouseEvent* e) override;
  void mouseMoveEvent(QMouseEvent* e) override;
  void wheelEvent(QWheelEvent* e) override;

 private:
  void forward_mouse(QMouseEvent* e, unsigned long event);
  void release_context();
  void fit_camera();
  vtkSmartPointer<vtkGenericOpenGLRenderWindow> window_;
  vtkSmartPointer<vtkGenericRenderWindowInteractor> interactor_;
  vtkSmartPointer<vtkRenderer> renderer_;
  bool camera_pending_ = false;
};

}  // namespace gemflow::studio
