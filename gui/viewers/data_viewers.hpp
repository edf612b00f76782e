#pragma once
// 2D viewers: a matrix heatmap with a colour bar (Matrix, DistanceBounds lower/upper), a table
// view (Table) and a text view (Value::summary) for every other type.
#include <string>
#include <vector>

#include <QImage>
#include <QWidget>

#include <gemflow/types/distance_bounds.hpp>
#include <gemflow/types/table.hpp>

class QComboBox;
class QDoubleSpinBox;
class QLabel;
class QPlainTextEdit;
class QStackedWidget;
class QTableWidget;
class QTabWidget;

namespace gemflow::studio {

/// Viridis-like colour of t in [0, 1] (5-stop piecewise-linear approximation of viridis).
[[nodiscard]] QColor colormap(double t);
/// Diverging blue–white–red colour of t in [0, 1] (white at 0.5), for the symmetric scale.
[[nodiscard]] QColor diverging_colormap(double t);

class PlotViewer;

/// The heatmap proper: the image scaled to fit (nearest pixels; cells square unless the matrix
/// is so tall or wide that it would use less than half the room, then stretched), wheel zoom
/// around the cursor and drag to pan (double-click resets), a colour bar with ticks whose
/// labels always fit, a linear, logarithmic or symmetric (diverging, centred on 0) colour scale
/// over the data's range or a given one, and a tooltip with (i, j), labels and value.
class HeatmapCanvas : public QWidget {
  Q_OBJECT
 public:
  enum class Scale { Linear, Log, Symmetric };
  explicit HeatmapCanvas(QWidget* parent = nullptr);
  /// Row-major values; NaN/inf are drawn grey and ignored by the scale.
  void set_data(std::size_t rows, std::size_t cols, std::vector<double> values, std::vector<std::string> labels);
  [[nodiscard]] const QImage& image() const { return image_; }
  /// The data's finite range (log: its smallest positive value as vmin).
  [[nodiscard]] double vmin() const { return vmin_; }
  [[nodiscard]] double vmax() const { return vmax_; }
  void set_scale(Scale s);
  [[nodiscard]] Scale scale() const { return scale_; }
  /// Colour range; lo >= hi: the data's own range (auto).
  void set_range(double lo, double hi);
  /// The range the colours span now (after auto and the scale).
  [[nodiscard]] std::pair<double, double> colour_range() const;
  /// Position in [0, 1] of value v on the colour scale (NaN when it has no colour: non-finite,
  /// or not positive on the log scale).
  [[nodiscard]] double scale_position(double v) const;
  /// Zoom factor (1 = the whole matrix) and the shown part, in cells.
  [[nodiscard]] double zoom() const { return zoom_; }
  [[nodiscard]] QRectF visible_cells() const;
  void zoom_at(QPointF widget_pos, double factor);
  void reset_view();
  [[nodiscard]] QRect plot_rect() const;
  /// Colour-bar tick labels shown now (text) and the bar's rectangle.
  [[nodiscard]] QStringList tick_labels() const;
  [[nodiscard]] QRect bar_rect() const;

 protected:
  void paintEvent(QPaintEvent*) override;
  void mouseMoveEvent(QMouseEvent* e) override;
  void mousePressEvent(QMouseEvent* e) override;
  void mouseDoubleClickEvent(QMouseEvent* e) override;
  void wheelEvent(QWheelEvent* e) override;

 private:
  void rebuild_image();
  [[nodiscard]] std::vector<double> ticks() const;
  [[nodiscard]] int bar_width() const;
  std::size_t rows_ = 0, cols_ = 0;
  std::vector<double> values_;
  std::vector<std::string> labels_;
  QImage image_;
  double vmin_ = 0, vmax_ = 0, min_positive_ = 0;
  Scale scale_ = Scale::Linear;
  double range_lo_ = 0, range_hi_ = 0;  // lo >= hi: auto
  double zoom_ = 1;
  QPointF centre_;  // in cells
  QPointF last_;
};

class HeatmapViewer : public QWidget {
  Q_OBJECT
 public:
  explicit HeatmapViewer(QWidget* parent = nullptr);
  void set_matrix(std::size_t rows, std::size_t cols, std::vector<double> values, const QString& label);
  void set_bounds(std::shared_ptr<const DistanceBounds> b, const QString& label);
  [[nodiscard]] HeatmapCanvas* canvas() const { return canvas_; }
  /// Vectors (one row or one column) are drawn as a line plot; nullptr before the first one.
  [[nodiscard]] PlotViewer* plot() const { return plot_; }
  [[nodiscard]] bool showing_plot() const;
  [[nodiscard]] QComboBox* scale_choice() const { return scale_; }
  [[nodiscard]] QDoubleSpinBox* range_min() const { return lo_; }
  [[nodiscard]] QDoubleSpinBox* range_max() const { return hi_; }

 private:
  void show_bounds();
  void apply_range();
  HeatmapCanvas* canvas_;
  QComboBox* which_;
  QComboBox* scale_;
  QDoubleSpinBox* lo_;
  QDoubleSpinBox* hi_;
  QLabel* info_;
  QStackedWidget* stack_;
  QWidget* heat_page_;
  PlotViewer* plot_ = nullptr;
  std::shared_ptr<const DistanceBounds> bounds_;
  QString label_;
};

class TableViewer : public QWidget {
  Q_OBJECT
 public:
  explicit TableViewer(QWidget* parent = nullptr);
  void set_table(const Table& t, const QString& label);
  [[nodiscard]] QTableWidget* table() const { return table_; }
  /// The Plot tab: the table's numeric columns as lines or points.
  [[nodiscard]] PlotViewer* plot() const { return plot_; }
  [[nodiscard]] QTabWidget* tabs() const { return tabs_; }

 private:
  QLabel* info_;
  QTableWidget* table_;
  QTabWidget* tabs_;
  PlotViewer* plot_;
};

class TextViewer : public QWidget {
  Q_OBJECT
 public:
  explicit TextViewer(QWidget* parent = nullptr);
  void set_text(const QString& text);
  [[nodiscard]] QString text() const;

 private:
  QPlainTextEdit* text_;
};

}  // namespace gemflow::studio
