#pragma once
// Image viewer: an Image drawn with nearest-pixel zoom (wheel about the cursor, Fit, 1:1) and
// pan (left drag). RGBA32F (linear, premultiplied) goes through a display transform —
// exposure, gamma, sRGB encoding — that never changes the data; RGBA8 (sRGB, straight alpha) is
// shown as stored. Transparent pixels are composited over a checkerboard. The pixel under the
// cursor is read out with its stored values. A new value of the same output and size (a render
// refining, a re-run) keeps the zoom and pan.
#include <array>
#include <memory>
#include <optional>

#include <QImage>
#include <QPointF>
#include <QWidget>

#include <gemflow/types/image.hpp>

class QDoubleSpinBox;
class QLabel;
class QToolButton;

namespace gemflow::studio {

/// How linear float images are shown: linear colour × 2^exposure, then ^(1/gamma), then the
/// sRGB transfer curve, clamped to [0, 1].
struct DisplayTransform {
  double exposure = 0.0;  ///< stops
  double gamma = 1.0;     ///< > 0; 1 = plain sRGB
};

/// sRGB encoding (IEC 61966-2-1) of a linear value, clamped to [0, 1].
[[nodiscard]] double srgb_encode(double linear);

/// The screen picture of `image` (ARGB32, opaque, one screen pixel per image pixel).
/// RGBA32F: the premultiplied linear colour c, scaled by 2^exposure, composited over the
/// checkerboard (c·2^e + (1 − a)·background, in linear light), then gamma and sRGB encoded
/// (through a 2¹⁶-entry table: within one 8-bit step of the exact curve).
/// RGBA8: the stored sRGB values composited by straight alpha over the checkerboard (opaque
/// pixels exactly as stored); the transform is not used.
[[nodiscard]] QImage display_image(const Image& image, DisplayTransform t);

/// The picture with zoom and pan. Widget coordinates p and image coordinates u (pixel (x, y)
/// covers [x, x+1) × [y, y+1)) are related by p = offset + u · scale.
class ImageCanvas : public QWidget {
  Q_OBJECT
 public:
  explicit ImageCanvas(QWidget* parent = nullptr);
  /// Shows `image`; keeps zoom and pan when `keep_view` and the size is unchanged, else fits.
  void set_image(std::shared_ptr<const Image> image, bool keep_view);
  void set_transform(DisplayTransform t);
  [[nodiscard]] const std::shared_ptr<const Image>& image() const { return image_; }
  /// What is drawn (display_image of the image). Images of more than kSyncPixels pixels are
  /// converted on a worker thread: converting() until picture_ready().
  [[nodiscard]] const QImage& picture() const { return picture_; }
  [[nodiscard]] bool converting() const { return converting_; }
  static constexpr std::size_t kSyncPixels = std::size_t{1} << 20;

  /// The whole image in the widget, centred.
  void fit();
  /// One image pixel per screen (device) pixel, keeping the image point at the centre.
  void one_to_one();
  /// Zooms by `factor`, keeping the image point under `about` (widget coordinates) in place.
  void zoom_by(double factor, QPointF about);
  [[nodiscard]] double scale() const { return scale_; }  ///< widget pixels per image pixel
  [[nodiscard]] QPointF offset() const { return offset_; }
  /// The image pixel under widget point `p`, nullopt outside the image.
  [[nodiscard]] std::optional<std::array<std::size_t, 2>> pixel_at(QPointF p) const;
  /// Widget point of image point `u`.
  [[nodiscard]] QPointF to_widget(QPointF u) const { return offset_ + u * scale_; }
  /// The pixel last hovered (nullopt when the cursor is outside the image).
  [[nodiscard]] const std::optional<std::array<std::size_t, 2>>& hovered_pixel() const { return hover_; }

 Q_SIGNALS:
  /// The pixel under the cursor changed (hovered_pixel()).
  void hovered();
  void view_changed();
  /// The picture of the latest image and transform is shown.
  void picture_ready();

 protected:
  void paintEvent(QPaintEvent* e) override;
  void resizeEvent(QResizeEvent* e) override;
  void wheelEvent(QWheelEvent* e) override;
  void mousePressEvent(QMouseEvent* e) override;
  void mouseMoveEvent(QMouseEvent* e) override;
  void mouseReleaseEvent(QMouseEvent* e) override;
  void leaveEvent(QEvent* e) override;

 private:
  void repaint_picture();
  void set_hover(std::optional<QPointF> p);
  std::shared_ptr<const Image> image_;
  DisplayTransform transform_;
  QImage picture_;
  double scale_ = 1.0;
  QPointF offset_;
  bool fitted_ = false;  // fit() once the widget has a size
  int generation_ = 0;   // of the image and transform
  bool converting_ = false;
  std::optional<QPointF> drag_from_;
  std::optional<QPointF> mouse_;  // the cursor, while over the widget
  std::optional<std::array<std::size_t, 2>> hover_;
};

class ImageViewer : public QWidget {
  Q_OBJECT
 public:
  explicit ImageViewer(QWidget* parent = nullptr);
  /// Shows an image; a new value under the same label and of the same size keeps the view.
  void set_image(std::shared_ptr<const Image> image, const QString& label);
  [[nodiscard]] ImageCanvas* canvas() const { return canvas_; }
  [[nodiscard]] QDoubleSpinBox* exposure() const { return exposure_; }
  [[nodiscard]] QDoubleSpinBox* gamma() const { return gamma_; }
  /// The readout line: "x 3, y 1: R 0.5 G 0.25 B 0 A 1" (stored values), "" off the image.
  [[nodiscard]] QString readout() const;
  /// Stored values of the hovered pixel (RGBA8 as 0–255), nullopt off the image.
  [[nodiscard]] std::optional<std::array<double, 4>> readout_values() const;

 private:
  void update_readout();
  void update_zoom_label();
  ImageCanvas* canvas_;
  QLabel* info_;
  QLabel* zoom_;
  QLabel* readout_;
  QDoubleSpinBox* exposure_;
  QDoubleSpinBox* gamma_;
  QString label_;
};

}  // namespace gemflow::studio
