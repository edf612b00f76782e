#include "viewers/image_viewer.hpp"

#include <algorithm>
#include <cmath>
#include <functional>
#include <thread>
#include <vector>

#include <QApplication>
#include <QDoubleSpinBox>
#include <QHBoxLayout>
#include <QLabel>
#include <QMouseEvent>
#include <QPainter>
#include <QPointer>
#include <QThreadPool>
#include <QToolButton>
#include <QVBoxLayout>
#include <QWheelEvent>

namespace gemflow::studio {

namespace {
constexpr int kChecker = 8;                         // checkerboard square, image pixels
constexpr std::uint8_t kCheckerSrgb[2] = {58, 84};  // its two greys, 8-bit sRGB
constexpr double kMinScale = 1.0 / 512, kMaxScale = 256;

double srgb_decode(double v) { return v <= 0.04045 ? v / 12.92 : std::pow((v + 0.055) / 1.055, 2.4); }
bool dark_square(std::size_t x, std::size_t y) { return ((x / kChecker) + (y / kChecker)) % 2 == 0; }
}  // namespace

double srgb_encode(double linear) {
  const double v = std::clamp(linear, 0.0, 1.0);
  return v <= 0.0031308 ? 12.92 * v : 1.055 * std::pow(v, 1.0 / 2.4) - 0.055;
}

namespace {
/// Runs f(y0, y1) over row ranges of [0, h) on up to 8 threads (a 4K frame is 8 M pixels).
void for_rows(int h, const std::function<void(int, int)>& f) {
  const int threads = std::clamp(static_cast<int>(std::thread::hardware_concurrency()), 1, 8);
  const int n = std::clamp(h / 64, 1, threads);
  std::vector<std::thread> pool;
  for (int k = 1; k < n; ++k) pool.emplace_back(f, h * k / n, h * (k + 1) / n);
  f(0, h / n);
  for (auto& t : pool) t.join();
}
}  // namespace

namespace {
/// One row of an 8-bit image: sRGB over the checkerboard by straight alpha.
void rgba8_row(const Image& image, std::size_t y, QRgb* line) {
  const std::uint8_t* px = image.u8.data() + image.index(0, y);
  for (std::size_t x = 0; x < image.width; ++x, px += 4) {
    const int a = px[3];
    const int bg = kCheckerSrgb[dark_square(x, y) ? 0 : 1];
    auto over = [&](int c) { return (c * a + bg * (255 - a) + 127) / 255; };
    line[x] = qRgb(over(px[0]), over(px[1]), over(px[2]));
  }
}

/// The linear → display mapping of one transform: exposure, checkerboard, gamma and sRGB.
class LinearToDisplay {
 public:
  explicit LinearToDisplay(DisplayTransform t) : gain_(static_cast<float>(std::exp2(t.exposure))), table_(kTable) {
    const double inv_gamma = 1.0 / std::max(t.gamma, 1e-3);
    for (int i = 0; i < kTable; ++i) {
      const double lin = static_cast<double>(i) / (kTable - 1);
      table_[static_cast<std::size_t>(i)] =
          static_cast<std::uint8_t>(std::lround(255.0 * srgb_encode(std::pow(lin, inv_gamma))));
    }
    for (int k = 0; k < 2; ++k) bg_[k] = static_cast<float>(srgb_decode(kCheckerSrgb[k] / 255.0));
  }
  void row(const Image& image, std::size_t y, QRgb* line) const {
    const float* px = image.f32.data() + image.index(0, y);
    for (std::size_t x = 0; x < image.width; ++x, px += 4) {
      const float a = std::clamp(px[3], 0.0f, 1.0f);
      const float bg = (1.0f - a) * bg_[dark_square(x, y) ? 0 : 1];
      line[x] = qRgb(lookup(px[0] * gain_ + bg), lookup(px[1] * gain_ + bg), lookup(px[2] * gain_ + bg));
    }
  }

 private:
  static constexpr int kTable = 1 << 16;  // within one 8-bit step of the exact curve
  [[nodiscard]] std::uint8_t lookup(float v) const {
    const float c = v > 0.0f ? (v < 1.0f ? v : 1.0f) : 0.0f;  // NaN fails v > 0: shown black
    return table_[static_cast<std::size_t>(std::lrint(c * static_cast<float>(kTable - 1)))];
  }
  float gain_;
  float bg_[2] = {0, 0};
  std::vector<std::uint8_t> table_;
};
}  // namespace

QImage display_image(const Image& image, DisplayTransform t) {
  QImage out(static_cast<int>(image.width), static_cast<int>(image.height), QImage::Format_RGB32);
  if (out.isNull()) return out;
  auto line = [&](int y) { return reinterpret_cast<QRgb*>(out.scanLine(y)); };
  if (image.format == Image::Format::RGBA8) {
    for_rows(out.height(), [&](int y0, int y1) {
      for (int y = y0; y < y1; ++y) rgba8_row(image, static_cast<std::size_t>(y), line(y));
    });
    return out;
  }
  const LinearToDisplay map(t);
  for_rows(out.height(), [&](int y0, int y1) {
    for (int y = y0; y < y1; ++y) map.row(image, static_cast<std::size_t>(y), line(y));
  });
  return out;
}

// ---- ImageCanvas -----------------------------------------------------------------------

ImageCanvas::ImageCanvas(QWidget* parent) : QWidget(parent) {
  setMouseTracking(true);
  setMinimumSize(200, 160);
  setFocusPolicy(Qt::ClickFocus);
  setCursor(Qt::CrossCursor);
}

void ImageCanvas::set_image(std::shared_ptr<const Image> image, bool keep_view) {
  const bool same_size = image && image_ && image->width == image_->width && image->height == image_->height;
  image_ = std::move(image);
  repaint_picture();
  if (!(keep_view && same_size && fitted_)) {
    fitted_ = false;
    fit();
  }
  set_hover(mouse_);
  update();
}

void ImageCanvas::set_transform(DisplayTransform t) {
  transform_ = t;
  repaint_picture();
  update();
}

void ImageCanvas::repaint_picture() {
  ++generation_;
  if (!image_) {
    picture_ = QImage();
    return;
  }
  if (image_->pixels() <= kSyncPixels) {
    picture_ = display_image(*image_, transform_);
    return;
  }
  // Large pictures are converted on a worker thread (an 8K frame takes a good part of a second
  // on two cores); until then the previous picture stays when it has the same size.
  if (picture_.width() != static_cast<int>(image_->width) || picture_.height() != static_cast<int>(image_->height))
    picture_ = QImage();
  // One conversion at a time: when it ends, a newer request (generation) starts the next.
  if (converting_) return;
  converting_ = true;
  QPointer<ImageCanvas> self(this);
  QThreadPool::globalInstance()->start([self, image = image_, t = transform_, generation = generation_] {
    QImage picture = display_image(*image, t);
    QMetaObject::invokeMethod(
        qApp,
        [self, generation, picture = std::move(picture)]() mutable {
          if (!self) return;
          self->converting_ = false;
          if (generation == self->generation_) {
            self->picture_ = std::move(picture);
            self->update();
          } else {
            self->repaint_picture();  // the image or transform changed meanwhile
          }
          if (!self->converting_) Q_EMIT self->picture_ready();
        },
        Qt::QueuedConnection);
  });
}

void ImageCanvas::fit() {
  if (!image_ || image_->pixels() == 0 || width() < 2 || height() < 2) return;  // again on resize
  const double iw = static_cast<double>(image_->width), ih = static_cast<double>(image_->height);
  scale_ = std::clamp(std::min(width() / iw, height() / ih), kMinScale, kMaxScale);
  offset_ = QPointF((width() - iw * scale_) / 2, (height() - ih * scale_) / 2);
  fitted_ = true;
  update();
  Q_EMIT view_changed();
}

void ImageCanvas::one_to_one() {
  const QPointF centre(width() / 2.0, height() / 2.0);
  zoom_by(1.0 / devicePixelRatioF() / scale_, centre);
  // Whole widget pixels: image pixel edges on device pixel edges, no resampling.
  offset_ = QPointF(std::round(offset_.x()), std::round(offset_.y()));
  update();
}

void ImageCanvas::zoom_by(double factor, QPointF about) {
  const double s = std::clamp(scale_ * factor, kMinScale, kMaxScale);
  const QPointF u = (about - offset_) / scale_;  // image point under `about`
  scale_ = s;
  offset_ = about - u * scale_;
  fitted_ = true;
  set_hover(mouse_);
  update();
  Q_EMIT view_changed();
}

std::optional<std::array<std::size_t, 2>> ImageCanvas::pixel_at(QPointF p) const {
  if (!image_ || scale_ <= 0) return std::nullopt;
  const QPointF u = (p - offset_) / scale_;
  if (u.x() < 0 || u.y() < 0) return std::nullopt;
  const auto x = static_cast<std::size_t>(std::floor(u.x())), y = static_cast<std::size_t>(std::floor(u.y()));
  if (x >= image_->width || y >= image_->height) return std::nullopt;
  return std::array<std::size_t, 2>{x, y};
}

void ImageCanvas::set_hover(std::optional<QPointF> p) {
  auto px = p ? pixel_at(*p) : std::nullopt;
  if (px == hover_) return;
  hover_ = px;
  Q_EMIT hovered();
}

void ImageCanvas::paintEvent(QPaintEvent*) {
  QPainter p(this);
  p.fillRect(rect(), QColor(40, 42, 46));
  if (picture_.isNull()) {
    p.setPen(palette().text().color());
    p.drawText(rect(), Qt::AlignCenter,
               !image_       ? tr("No image")
               : converting_ ? tr("Converting for display…")
                             : tr("Empty image"));
    return;
  }
  // Only the visible part of the image: a 256× zoom never scales the whole picture.
  const double iw = picture_.width(), ih = picture_.height();
  const double x0 = std::clamp(std::floor(-offset_.x() / scale_), 0.0, iw);
  const double y0 = std::clamp(std::floor(-offset_.y() / scale_), 0.0, ih);
  const double x1 = std::clamp(std::ceil((width() - offset_.x()) / scale_), 0.0, iw);
  const double y1 = std::clamp(std::ceil((height() - offset_.y()) / scale_), 0.0, ih);
  if (x1 <= x0 || y1 <= y0) return;
  const QRectF source(x0, y0, x1 - x0, y1 - y0);
  const QRectF target(to_widget({x0, y0}), to_widget({x1, y1}));
  // Nearest pixels when magnified (the pixels are the data); smooth when reduced.
  p.setRenderHint(QPainter::SmoothPixmapTransform, scale_ < 1.0);
  p.drawImage(target, picture_, source);
}

void ImageCanvas::resizeEvent(QResizeEvent* e) {
  QWidget::resizeEvent(e);
  if (!fitted_) fit();
}

void ImageCanvas::wheelEvent(QWheelEvent* e) {
  const int d = e->angleDelta().y();
  if (d == 0) return;
  zoom_by(std::pow(1.25, d / 120.0), e->position());
  e->accept();
}

void ImageCanvas::mousePressEvent(QMouseEvent* e) {
  if (e->button() == Qt::LeftButton || e->button() == Qt::MiddleButton) {
    drag_from_ = e->position();
    setCursor(Qt::ClosedHandCursor);
  }
}

void ImageCanvas::mouseMoveEvent(QMouseEvent* e) {
  mouse_ = e->position();
  if (drag_from_) {
    offset_ += e->position() - *drag_from_;
    drag_from_ = e->position();
    fitted_ = true;
    update();
    Q_EMIT view_changed();
  }
  set_hover(e->position());
}

void ImageCanvas::mouseReleaseEvent(QMouseEvent*) {
  drag_from_.reset();
  setCursor(Qt::CrossCursor);
}

void ImageCanvas::leaveEvent(QEvent* e) {
  QWidget::leaveEvent(e);
  mouse_.reset();
  set_hover(mouse_);
}

// ---- ImageViewer -----------------------------------------------------------------------

ImageViewer::ImageViewer(QWidget* parent)
    : QWidget(parent),
      canvas_(new ImageCanvas),
      info_(new QLabel),
      zoom_(new QLabel),
      readout_(new QLabel),
      exposure_(new QDoubleSpinBox),
      gamma_(new QDoubleSpinBox) {
  auto* lay = new QVBoxLayout(this);
  lay->setContentsMargins(0, 0, 0, 0);
  auto* bar = new QHBoxLayout;
  auto* fit = new QToolButton;
  fit->setText(tr("Fit"));
  fit->setObjectName(QStringLiteral("fit"));
  fit->setToolTip(tr("Show the whole image"));
  auto* one = new QToolButton;
  one->setText(tr("1:1"));
  one->setObjectName(QStringLiteral("one_to_one"));
  one->setToolTip(tr("One image pixel per screen pixel"));
  connect(fit, &QToolButton::clicked, canvas_, &ImageCanvas::fit);
  connect(one, &QToolButton::clicked, canvas_, &ImageCanvas::one_to_one);
  exposure_->setRange(-20, 20);
  exposure_->setSingleStep(0.5);
  exposure_->setDecimals(1);
  exposure_->setSuffix(tr(" EV"));
  exposure_->setToolTip(tr("Display exposure of linear images (the data is not changed)"));
  gamma_->setRange(0.1, 10);
  gamma_->setSingleStep(0.1);
  gamma_->setDecimals(2);
  gamma_->setValue(1.0);
  gamma_->setToolTip(tr("Display gamma of linear images, applied before the sRGB curve (1 = plain sRGB)"));
  bar->addWidget(fit);
  bar->addWidget(one);
  bar->addWidget(zoom_);
  bar->addWidget(new QLabel(tr("Exposure")));
  bar->addWidget(exposure_);
  bar->addWidget(new QLabel(tr("Gamma")));
  bar->addWidget(gamma_);
  bar->addWidget(info_, 1);
  lay->addLayout(bar);
  lay->addWidget(canvas_, 1);
  readout_->setTextInteractionFlags(Qt::TextSelectableByMouse);
  readout_->setMinimumHeight(readout_->fontMetrics().height());
  zoom_->setMinimumWidth(zoom_->fontMetrics().horizontalAdvance(QStringLiteral("25600 %")));
  zoom_->setToolTip(tr("Zoom: screen pixels per image pixel"));
  lay->addWidget(readout_);
  auto retransform = [this] { canvas_->set_transform({exposure_->value(), gamma_->value()}); };
  connect(exposure_, &QDoubleSpinBox::valueChanged, this, retransform);
  connect(gamma_, &QDoubleSpinBox::valueChanged, this, retransform);
  connect(canvas_, &ImageCanvas::hovered, this, [this] { update_readout(); });
  connect(canvas_, &ImageCanvas::view_changed, this, [this] { update_zoom_label(); });
}

void ImageViewer::set_image(std::shared_ptr<const Image> image, const QString& label) {
  const bool same = label == label_;
  label_ = label;
  const bool linear = image && image->format == Image::Format::RGBA32F;
  exposure_->setEnabled(linear);
  gamma_->setEnabled(linear);
  info_->setText(image ? tr("%1: %2 × %3 %4")
                             .arg(label)
                             .arg(image->width)
                             .arg(image->height)
                             .arg(linear ? tr("RGBA float, linear, premultiplied") : tr("RGBA 8-bit sRGB"))
                       : label);
  canvas_->set_image(std::move(image), same);
  update_readout();
  update_zoom_label();
}

std::optional<std::array<double, 4>> ImageViewer::readout_values() const {
  const auto& px = canvas_->hovered_pixel();
  const auto& im = canvas_->image();
  if (!px || !im) return std::nullopt;
  const std::size_t i = im->index((*px)[0], (*px)[1]);
  std::array<double, 4> v{};
  for (std::size_t c = 0; c < 4; ++c) v[c] = im->format == Image::Format::RGBA32F ? im->f32[i + c] : im->u8[i + c];
  return v;
}

QString ImageViewer::readout() const {
  const auto v = readout_values();
  if (!v) return {};
  const auto& px = *canvas_->hovered_pixel();
  const bool linear = canvas_->image()->format == Image::Format::RGBA32F;
  auto num = [&](double x) { return linear ? QString::number(x, 'g', 5) : QString::number(static_cast<int>(x)); };
  return tr("x %1, y %2: R %3 G %4 B %5 A %6")
      .arg(px[0])
      .arg(px[1])
      .arg(num((*v)[0]), num((*v)[1]), num((*v)[2]), num((*v)[3]));
}

void ImageViewer::update_readout() { readout_->setText(readout()); }

void ImageViewer::update_zoom_label() {
  zoom_->setText(QStringLiteral("%1 %").arg(canvas_->scale() * devicePixelRatioF() * 100.0, 0, 'g', 4));
}

}  // namespace gemflow::studio
