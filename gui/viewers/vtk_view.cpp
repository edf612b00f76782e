#include "viewers/vtk_view.hpp"

#include <QMouseEvent>
#include <QOpenGLContext>
#include <QSurfaceFormat>
#include <QWheelEvent>

#include <vtkCallbackCommand.h>
#include <vtkCamera.h>
#include <vtkCommand.h>
#include <vtkGenericOpenGLRenderWindow.h>
#include <vtkGenericRenderWindowInteractor.h>
#include <vtkInteractorStyleTrackballCamera.h>
#include <vtkRenderer.h>

namespace gemflow::studio {

void set_default_surface_format() {
  QSurfaceFormat f;
  f.setRenderableType(QSurfaceFormat::OpenGL);
  f.setVersion(3, 2);
  f.setProfile(QSurfaceFormat::CoreProfile);
  f.setDepthBufferSize(24);
  f.setStencilBufferSize(8);
  f.setSamples(0);
  QSurfaceFormat::setDefaultFormat(f);
}

VtkView::VtkView(QWidget* parent)
    : QOpenGLWidget(parent),
      window_(vtkSmartPointer<vtkGenericOpenGLRenderWindow>::New()),
      interactor_(vtkSmartPointer<vtkGenericRenderWindowInteractor>::New()),
      renderer_(vtkSmartPointer<vtkRenderer>::New()) {
  setMinimumSize(200, 200);
  setFocusPolicy(Qt::StrongFocus);
  renderer_->SetBackground(0.11, 0.12, 0.14);
  window_->AddRenderer(renderer_);
  interactor_->SetRenderWindow(window_);
  auto style = vtkSmartPointer<vtkInteractorStyleTrackballCamera>::New();
  interactor_->SetInteractorStyle(style);
  interactor_->EnableRenderOff();  // Qt decides when to paint
  // VTK asks for a render (e.g. while rotating): schedule a Qt repaint instead.
  auto cb = vtkSmartPointer<vtkCallbackCommand>::New();
  cb->SetClientData(this);
  cb->SetCallback([](vtkObject*, unsigned long, void* self, void*) { static_cast<VtkView*>(self)->update(); });
  interactor_->AddObserver(vtkCommand::RenderEvent, cb);
  // The window draws in Qt's context: VTK asks through these events whether it is current and
  // to make it current (vtkGenericOpenGLRenderWindow skips rendering otherwise).
  auto make_current = vtkSmartPointer<vtkCallbackCommand>::New();
  make_current->SetClientData(this);
  make_current->SetCallback([](vtkObject*, unsigned long, void* self, void*) { static_cast<VtkView*>(self)->makeCurrent(); });
  window_->AddObserver(vtkCommand::WindowMakeCurrentEvent, make_current);
  auto is_current = vtkSmartPointer<vtkCallbackCommand>::New();
  is_current->SetClientData(this);
  is_current->SetCallback([](vtkObject*, unsigned long, void* self, void* data) {
    auto* v = static_cast<VtkView*>(self);
    *static_cast<bool*>(data) = v->context() && QOpenGLContext::currentContext() == v->context();
  });
  window_->AddObserver(vtkCommand::WindowIsCurrentEvent, is_current);
}

VtkView::~VtkView() {
  if (context()) {
    disconnect(context(), nullptr, this, nullptr);  // QOpenGLWidget destroys it after us
    release_context();
  }
}

void VtkView::release_context() {
  // The widget moved to another window (e.g. a dock was floated): Qt destroys the GL context;
  // VTK's shaders and buffers of that context must go with it, and are rebuilt on next render.
  makeCurrent();
  window_->SetIsCurrent(true);
  window_->ReleaseGraphicsResources(window_);
  window_->SetIsCurrent(false);
  doneCurrent();
}

void VtkView::initializeGL() {
  connect(context(), &QOpenGLContext::aboutToBeDestroyed, this, &VtkView::release_context, Qt::UniqueConnection);
  window_->SetOwnContext(false);
  // Qt binds its own framebuffer object before paintGL: VTK blits its frame into it.
  window_->SetFrameBlitModeToBlitToCurrent();
  window_->SetIsCurrent(true);
  window_->OpenGLInitContext();
  window_->SetIsCurrent(false);
  window_->SetReadyForRendering(true);
}

void VtkView::resizeGL(int w, int h) {
  const double r = devicePixelRatioF();
  window_->SetSize(static_cast<int>(w * r), static_cast<int>(h * r));
  interactor_->SetSize(static_cast<int>(w * r), static_cast<int>(h * r));
  interactor_->ConfigureEvent();
}

void VtkView::paintGL() {
  if (camera_pending_) {  // first frame at the real size after new content
    fit_camera();
    camera_pending_ = false;
  }
  window_->SetIsCurrent(true);
  window_->Render();
  window_->SetIsCurrent(false);
}

void VtkView::fit_camera() {
  // ResetCamera fits the bounding sphere, which leaves wide margins around elongated
  // molecules; zoom in a little so that the content fills the view.
  renderer_->ResetCamera();
  renderer_->GetActiveCamera()->Zoom(1.4);
  renderer_->ResetCameraClippingRange();
}

void VtkView::reset_camera() {
  fit_camera();
  camera_pending_ = !isVisible() || width() < 2;
  update();
}

void VtkView::forward_mouse(QMouseEvent* e, unsigned long event) {
  const double r = devicePixelRatioF();
  const QPointF p = e->position();
  interactor_->SetEventInformationFlipY(static_cast<int>(p.x() * r), static_cast<int>(p.y() * r),
                                        (e->modifiers() & Qt::ControlModifier) ? 1 : 0,
                                        (e->modifiers() & Qt::ShiftModifier) ? 1 : 0);
  interactor_->InvokeEvent(event, e);
  update();
}

void VtkView::mousePressEvent(QMouseEvent* e) {
  switch (e->button()) {
    case Qt::LeftButton: forward_mouse(e, vtkCommand::LeftButtonPressEvent); break;
    case Qt::RightButton: forward_mouse(e, vtkCommand::RightButtonPressEvent); break;
    case Qt::MiddleButton: forward_mouse(e, vtkCommand::MiddleButtonPressEvent); break;
    default: break;
  }
}

void VtkView::mouseReleaseEvent(QMouseEvent* e) {
  switch (e->button()) {
    case Qt::LeftButton: forward_mouse(e, vtkCommand::LeftButtonReleaseEvent); break;
    case Qt::RightButton: forward_mouse(e, vtkCommand::RightButtonReleaseEvent); break;
    case Qt::MiddleButton: forward_mouse(e, vtkCommand::MiddleButtonReleaseEvent); break;
    default: break;
  }
}

void VtkView::mouseMoveEvent(QMouseEvent* e) { forward_mouse(e, vtkCommand::MouseMoveEvent); }

void VtkView::wheelEvent(QWheelEvent* e) {
  const double r = devicePixelRatioF();
  interactor_->SetEventInformationFlipY(static_cast<int>(e->position().x() * r), static_cast<int>(e->position().y() * r));
  interactor_->InvokeEvent(e->angleDelta().y() > 0 ? vtkCommand::MouseWheelForwardEvent
                                                   : vtkCommand::MouseWheelBackwardEvent,
                           e);
  update();
}

}  // namespace gemflow::studio
