#include "viewers/vtk_view.hpp"

#include <QCoreApplication>
#include <QMouseEvent>
#include <QOffscreenSurface>
#include <QOpenGLContext>
#include <QOpenGLExtraFunctions>
#include <QPainter>
#include <QPointer>
#include <QSurfaceFormat>
#include <QThread>
#include <QWheelEvent>

#include <vtkCallbackCommand.h>
#include <vtkCamera.h>
#include <vtkCommand.h>
#include <vtkInteractorStyleImage.h>
#include <vtkInteractorStyleTrackballCamera.h>
#include <vtkObjectFactory.h>
#include <vtkOpenGLFramebufferObject.h>
#include <vtkOpenGLState.h>

namespace gemflow::studio {

namespace {
/// vtkInteractorStyleImage (right drag zooms, middle drag pans, no rotation in its 2D mode)
/// with the left button panning too: the usual mouse of a 2D view.
class PanZoomStyle : public vtkInteractorStyleImage {
 public:
  static PanZoomStyle* New();
  void OnLeftButtonDown() override {
    FindPokedRenderer(Interactor->GetEventPosition()[0], Interactor->GetEventPosition()[1]);
    if (!CurrentRenderer) return;
    GrabFocus(EventCallbackCommand);
    StartPan();
  }
  void OnLeftButtonUp() override {
    if (State == VTKIS_PAN) {
      EndPan();
      if (Interactor) ReleaseFocus();
    }
  }
  vtkTypeMacro(PanZoomStyle, vtkInteractorStyleImage)
};
vtkStandardNewMacro(PanZoomStyle);
}  // namespace

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
  interactor_->EnableRenderOff();  // every posted change is followed by a frame anyway
  // VTK asks through these events whether its context is current and to make it current
  // (vtkGenericOpenGLRenderWindow skips rendering otherwise). Both come on the render thread.
  auto make_current = vtkSmartPointer<vtkCallbackCommand>::New();
  make_current->SetClientData(this);
  make_current->SetCallback(
      [](vtkObject*, unsigned long, void* self, void*) { static_cast<VtkView*>(self)->make_current(); });
  window_->AddObserver(vtkCommand::WindowMakeCurrentEvent, make_current);
  auto is_current = vtkSmartPointer<vtkCallbackCommand>::New();
  is_current->SetClientData(this);
  is_current->SetCallback([](vtkObject*, unsigned long, void* self, void* data) {
    auto* v = static_cast<VtkView*>(self);
    *static_cast<bool*>(data) = v->context_ && QOpenGLContext::currentContext() == v->context_;
  });
  window_->AddObserver(vtkCommand::WindowIsCurrentEvent, is_current);
  // The offscreen surface belongs to the GUI thread; the context is made on the render thread.
  surface_ = new QOffscreenSurface;
  surface_->setFormat(QSurfaceFormat::defaultFormat());
  surface_->create();
  worker_ = new QObject;
  if (QOpenGLContext::supportsThreadedOpenGL()) {
    thread_ = new QThread;
    thread_->setObjectName(QStringLiteral("vtk-render"));
    worker_->moveToThread(thread_);
    thread_->start();
  }
}

VtkView::~VtkView() {
  run_on_render_thread([this] { release(); }, true);
  if (thread_) {
    thread_->quit();
    thread_->wait();
    delete thread_;
  }
  delete worker_;
  window_->SetReadyForRendering(false);
  delete surface_;
}

void VtkView::release() {
  if (context_ && make_current()) {
    window_->ReleaseGraphicsResources(window_);  // in the context that owns them
    context_->doneCurrent();
  }
  window_->SetReadyForRendering(false);
  delete context_;  // on the thread that owns it
  context_ = nullptr;
}

void VtkView::run_on_render_thread(std::function<void()> f, bool wait) {
  if (!thread_) {
    // No render thread: queued on the GUI thread, in the same order; a wait runs what is
    // queued first.
    if (wait) {
      QCoreApplication::sendPostedEvents(worker_, QEvent::MetaCall);
      f();
    } else {
      QMetaObject::invokeMethod(worker_, std::move(f), Qt::QueuedConnection);
    }
    return;
  }
  QMetaObject::invokeMethod(worker_, std::move(f), wait ? Qt::BlockingQueuedConnection : Qt::QueuedConnection);
}

QSize VtkView::device_size() const {
  const double dpr = devicePixelRatioF();
  return {std::max(1, static_cast<int>(width() * dpr)), std::max(1, static_cast<int>(height() * dpr))};
}

void VtkView::post(std::function<void(vtkRenderer*)> f) {
  run_on_render_thread([this, f = std::move(f)] { f(renderer_); }, false);
  dirty_ = true;
  request_render();
}

void VtkView::query(const std::function<void(vtkRenderer*)>& f) {
  run_on_render_thread([this, &f] { f(renderer_); }, true);
}

void VtkView::set_interaction_2d() {
  post([this](vtkRenderer*) {
    auto style = vtkSmartPointer<PanZoomStyle>::New();
    style->SetInteractionModeToImage2D();
    interactor_->SetInteractorStyle(style);
  });
}

void VtkView::set_camera_fit(std::function<void(vtkRenderer*, double)> fit) {
  run_on_render_thread([this, fit = std::move(fit)] { fit_ = fit; }, false);
}

void VtkView::request_render() {
  if (render_queued_) return;  // the frame that comes asks again if something changed since
  render_queued_ = true;
  dirty_ = false;
  const QSize px = device_size();
  const double dpr = devicePixelRatioF();
  QPointer<VtkView> self(this);
  run_on_render_thread(
      [this, px, dpr] {
        QImage img = render_frame(px);
        img.setDevicePixelRatio(dpr);
        const QString err = context_error_;
        // Back on the GUI thread; dropped when the view is gone (it is the call's context).
        QMetaObject::invokeMethod(
            this,
            [this, img, err] {
              render_queued_ = false;
              frame_ = img;
              error_ = err;
              update();
              Q_EMIT frame_shown();
              if (dirty_) request_render();
            },
            Qt::QueuedConnection);
      },
      false);
}

bool VtkView::make_current() { return context_ && surface_ && context_->makeCurrent(surface_); }

bool VtkView::ensure_context() {
  if (context_) return true;
  if (!context_error_.isEmpty()) return false;
  context_ = new QOpenGLContext;
  context_->setFormat(QSurfaceFormat::defaultFormat());
  if (!surface_->isValid() || !context_->create() || !make_current()) {
    context_error_ = tr("No OpenGL 3.2 context: the 3D view is unavailable (%1).")
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

QImage VtkView::render_frame(QSize px) {
  const int w = px.width(), h = px.height();
  if (!ensure_context() || !make_current()) return {};
  if (window_->GetSize()[0] != w || window_->GetSize()[1] != h) {
    window_->SetSize(w, h);
    interactor_->SetSize(w, h);
  }
  window_->Render();
  // Read the finished frame back from VTK's display framebuffer (bottom-up rows).
  vtkOpenGLFramebufferObject* display = window_->GetDisplayFramebuffer();
  QOpenGLExtraFunctions* f = context_->extraFunctions();
  QImage img(w, h, QImage::Format_RGBX8888);
  QImage result;
  if (display && display->GetFBOIndex() != 0) {
    f->glBindFramebuffer(GL_READ_FRAMEBUFFER, display->GetFBOIndex());
    f->glReadBuffer(GL_COLOR_ATTACHMENT0);
    f->glPixelStorei(GL_PACK_ALIGNMENT, 4);
    f->glReadPixels(0, 0, w, h, GL_RGBA, GL_UNSIGNED_BYTE, img.bits());
    window_->GetState()->ResetFramebufferBindings();  // VTK's cache: we changed the binding
    result = img.mirrored();
  }
  window_->SetIsCurrent(false);
  context_->doneCurrent();
  return result;
}

QImage VtkView::grab_frame() {
  fit_if_pending();
  QImage img;
  const QSize px = device_size();
  run_on_render_thread([this, px, &img] { img = render_frame(px); }, true);
  img.setDevicePixelRatio(devicePixelRatioF());
  frame_ = img;
  update();
  return img;
}

void VtkView::paintEvent(QPaintEvent*) {
  QPainter p(this);
  const QColor background = QColor::fromRgbF(0.11f, 0.12f, 0.14f);
  if (frame_.isNull()) {
    p.fillRect(rect(), background);
    p.setPen(palette().text().color());
    p.drawText(rect().adjusted(10, 10, -10, -10), Qt::AlignCenter | Qt::TextWordWrap,
               error_.isEmpty() ? tr("Nothing to show.") : error_);
    return;
  }
  // The latest frame; after a resize, until the next one arrives, the rest is background.
  const QSizeF shown = frame_.deviceIndependentSize();
  if (shown.width() < width() || shown.height() < height()) p.fillRect(rect(), background);
  p.drawImage(QPointF(0, 0), frame_);
}

void VtkView::resizeEvent(QResizeEvent* e) {
  QWidget::resizeEvent(e);
  fit_if_pending();
  request_render();
}

void VtkView::showEvent(QShowEvent* e) {
  QWidget::showEvent(e);
  fit_if_pending();
  request_render();
}

void VtkView::fit_camera(double aspect) {
  if (fit_) {
    fit_(renderer_, aspect);
    return;
  }
  // ResetCamera fits the bounding sphere, which leaves wide margins around elongated
  // molecules; zoom in a little so that the content fills the view.
  renderer_->ResetCamera();
  renderer_->GetActiveCamera()->Zoom(1.4);
  renderer_->ResetCameraClippingRange();
}

void VtkView::fit_if_pending() {
  if (!camera_pending_ || !isVisible() || width() < 2) return;
  camera_pending_ = false;
  const double aspect = static_cast<double>(std::max(1, width())) / std::max(1, height());
  post([this, aspect](vtkRenderer*) { fit_camera(aspect); });
}

void VtkView::reset_camera() {
  // The aspect ratio is known once the widget has its size: fit then (or now).
  camera_pending_ = true;
  fit_if_pending();
  request_render();
}

void VtkView::forward_mouse(QMouseEvent* e, unsigned long event) {
  const double r = devicePixelRatioF();
  const QPointF p = e->position();
  const int x = static_cast<int>(p.x() * r), y = static_cast<int>(p.y() * r);
  const int ctrl = (e->modifiers() & Qt::ControlModifier) ? 1 : 0, shift = (e->modifiers() & Qt::ShiftModifier) ? 1 : 0;
  post([this, x, y, ctrl, shift, event](vtkRenderer*) {
    interactor_->SetEventInformationFlipY(x, y, ctrl, shift);
    interactor_->InvokeEvent(event, nullptr);
  });
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
  const int x = static_cast<int>(e->position().x() * r), y = static_cast<int>(e->position().y() * r);
  const unsigned long event =
      e->angleDelta().y() > 0 ? vtkCommand::MouseWheelForwardEvent : vtkCommand::MouseWheelBackwardEvent;
  post([this, x, y, event](vtkRenderer*) {
    interactor_->SetEventInformationFlipY(x, y);
    interactor_->InvokeEvent(event, nullptr);
  });
}

}  // namespace gemflow::studio
