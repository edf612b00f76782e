#include "viewers/vtk_view.hpp"

#include <QMouseEvent>
#include <QOffscreenSurface>
#include <QOpenGLContext>
#include <QOpenGLExtraFunctions>
#include <QPainter>
#include <QSurfaceFormat>
#include <QWheelEvent>

#include <vtkCallbackCommand.h>
#include <vtkCamera.h>
#include <vtkCommand.h>
#include <vtkInteractorStyleTrackballCamera.h>
#include <vtkOpenGLFramebufferObject.h>
#include <vtkOpenGLState.h>

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
    : QWidget(parent),
      window_(vtkSmartPointer<vtkGenericOpenGLRenderWindow>::New()),
      interactor_(vtkSmartPointer<vtkGenericRenderWindowInteractor>::New()),
      renderer_(vtkSmartPointer<vtkRenderer>::New()) {
  setMinimumSize(200, 200);
  setFocusPolicy(Qt::StrongFocus);
  setAttribute(Qt::WA_OpaquePaintEvent);  // every pixel comes from the frame
  renderer_->SetBackground(0.11, 0.12, 0.14);
  renderer_->SetBackgroundAlpha(1.0);
  window_->AddRenderer(renderer_);
  window_->SetOwnContext(false);
  window_->SetFrameBlitModeToNoBlit();  // the frame is read back from VTK's display framebuffer
  interactor_->SetRenderWindow(window_);
  auto style = vtkSmartPointer<vtkInteractorStyleTrackballCamera>::New();
  interactor_->SetInteractorStyle(style);
  interactor_->EnableRenderOff();  // Qt decides when to paint
  // VTK asks for a render (e.g. while rotating): schedule a Qt repaint instead.
  auto cb = vtkSmartPointer<vtkCallbackCommand>::New();
  cb->SetClientData(this);
  cb->SetCallback([](vtkObject*, unsigned long, void* self, void*) { static_cast<VtkView*>(self)->update(); });
  interactor_->AddObserver(vtkCommand::RenderEvent, cb);
  // VTK asks through these events whether its context is current and to make it current
  // (vtkGenericOpenGLRenderWindow skips rendering otherwise).
  auto make_current = vtkSmartPointer<vtkCallbackCommand>::New();
  make_current->SetClientData(this);
  make_current->SetCallback([](vtkObject*, unsigned long, void* self, void*) { static_cast<VtkView*>(self)->make_current(); });
  window_->AddObserver(vtkCommand::WindowMakeCurrentEvent, make_current);
  auto is_current = vtkSmartPointer<vtkCallbackCommand>::New();
  is_current->SetClientData(this);
  is_current->SetCallback([](vtkObject*, unsigned long, void* self, void* data) {
    auto* v = static_cast<VtkView*>(self);
    *static_cast<bool*>(data) = v->context_ && QOpenGLContext::currentContext() == v->context_;
  });
  window_->AddObserver(vtkCommand::WindowIsCurrentEvent, is_current);
}

VtkView::~VtkView() {
  if (context_ && make_current()) {
    window_->ReleaseGraphicsResources(window_);  // in the context that owns them
    context_->doneCurrent();
  }
  window_->SetReadyForRendering(false);
  delete context_;
  delete surface_;
}

bool VtkView::make_current() { return context_ && surface_ && context_->makeCurrent(surface_); }

bool VtkView::ensure_context() {
  if (context_) return true;
  if (!error_.isEmpty()) return false;
  surface_ = new QOffscreenSurface;
  surface_->setFormat(QSurfaceFormat::defaultFormat());
  surface_->create();
  context_ = new QOpenGLContext;
  context_->setFormat(QSurfaceFormat::defaultFormat());
  if (!surface_->isValid() || !context_->create() || !make_current()) {
    error_ = tr("No OpenGL 3.2 context: the 3D view is unavailable (%1).")
                 .arg(surface_->isValid() ? tr("context creation failed") : tr("no offscreen surface"));
    delete context_;
    context_ = nullptr;
    return false;
  }
  window_->SetIsCurrent(true);
  window_->OpenGLInitContext();
  // VTK expects the depth test on with GL_LEQUAL (a fresh context has it off, GL_LESS).
  vtkOpenGLState* state = window_->GetState();
  state->Reset();
  state->vtkglDepthFunc(GL_LEQUAL);
  state->vtkglEnable(GL_DEPTH_TEST);
  window_->SetReadyForRendering(true);
  return true;
}

void VtkView::render_frame() {
  const double dpr = devicePixelRatioF();
  const int w = std::max(1, static_cast<int>(width() * dpr)), h = std::max(1, static_cast<int>(height() * dpr));
  if (!ensure_context() || !make_current()) {
    frame_ = QImage();
    return;
  }
  if (window_->GetSize()[0] != w || window_->GetSize()[1] != h) {
    window_->SetSize(w, h);
    interactor_->SetSize(w, h);
  }
  if (camera_pending_) {  // first frame at the real size after new content
    fit_camera();
    camera_pending_ = false;
  }
  window_->Render();
  // Read the finished frame back from VTK's display framebuffer (bottom-up rows).
  vtkOpenGLFramebufferObject* display = window_->GetDisplayFramebuffer();
  QOpenGLExtraFunctions* f = context_->extraFunctions();
  QImage img(w, h, QImage::Format_RGBX8888);
  if (display && display->GetFBOIndex() != 0) {
    f->glBindFramebuffer(GL_READ_FRAMEBUFFER, display->GetFBOIndex());
    f->glReadBuffer(GL_COLOR_ATTACHMENT0);
    f->glPixelStorei(GL_PACK_ALIGNMENT, 4);
    f->glReadPixels(0, 0, w, h, GL_RGBA, GL_UNSIGNED_BYTE, img.bits());
    window_->GetState()->ResetFramebufferBindings();  // VTK's cache: we changed the binding
    frame_ = img.mirrored();
  } else {
    frame_ = QImage();
  }
  frame_.setDevicePixelRatio(dpr);
  window_->SetIsCurrent(false);
  context_->doneCurrent();
}

QImage VtkView::grab_frame() {
  render_frame();
  return frame_;
}

void VtkView::paintEvent(QPaintEvent*) {
  render_frame();
  QPainter p(this);
  if (frame_.isNull()) {
    p.fillRect(rect(), QColor::fromRgbF(0.11f, 0.12f, 0.14f));
    p.setPen(palette().text().color());
    p.drawText(rect().adjusted(10, 10, -10, -10), Qt::AlignCenter | Qt::TextWordWrap,
               error_.isEmpty() ? tr("Nothing to show.") : error_);
    return;
  }
  p.drawImage(QPointF(0, 0), frame_);
}

void VtkView::resizeEvent(QResizeEvent* e) {
  QWidget::resizeEvent(e);
  update();
}

void VtkView::fit_camera() {
  if (fit_) {
    fit_(renderer_, static_cast<double>(std::max(1, width())) / std::max(1, height()));
    return;
  }
  // ResetCamera fits the bounding sphere, which leaves wide margins around elongated
  // molecules; zoom in a little so that the content fills the view.
  renderer_->ResetCamera();
  renderer_->GetActiveCamera()->Zoom(1.4);
  renderer_->ResetCameraClippingRange();
}

void VtkView::reset_camera() {
  // The aspect ratio is known once the widget has its size: fit then (or now).
  camera_pending_ = !isVisible() || width() < 2;
  if (!camera_pending_) {
    const double dpr = devicePixelRatioF();
    window_->SetSize(std::max(1, static_cast<int>(width() * dpr)), std::max(1, static_cast<int>(height() * dpr)));
    fit_camera();
  }
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
