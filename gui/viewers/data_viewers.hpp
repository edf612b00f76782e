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
class QLabel;
class QPlainTextEdit;
class QTableWidget;

namespace gemflow::studio {

/// Viridis-like colour of t in [0, 1] (5-stop piecewise-linear approximation of viridis).
[[nodiscard]] QColor colormap(double t);

/// The heatmap proper: the image scaled to fit (nearest pixels), a colour bar with min/max,
/// and a tooltip with (i, j), labels and value under the mouse.
class HeatmapCanvas : public QWidget {
  Q_OBJECT
 public:
  explicit HeatmapCanvas(QWidget* parent = nullptr);
  /// Row-major values; NaN/inf are drawn grey and ignored by the scale.
  void set_data(std::size_t rows, std::size_t cols, std::vector<double> values, std::vector<std::string> labels);
  [[nodiscard]] const QImage& image() const { return image_; }
  [[nodiscard]] double vmin() const { return vmin_; }
  [[nodiscard]] double vmax() const { return vmax_; }

 protected:
  void paintEvent(QPaintEvent*) override;
  void mouseMoveEvent(QMouseEvent* e) override;

 private:
  [[nodiscard]] QRect plot_rect() const;
  std::size_t rows_ = 0, cols_ = 0;
  std::vector<double> values_;
  std::vector<std::string> labels_;
  QImage image_;
  double vmin_ = 0, vmax_ = 0;
};

class HeatmapViewer : public QWidget {
  Q_OBJECT
 public:
  explicit HeatmapViewer(QWidget* parent = nullptr);
  void set_matrix(std::size_t rows, std::size_t cols, std::vector<double> values, const QString& label);
  void set_bounds(std::shared_ptr<const DistanceBounds> b, const QString& label);
  [[nodiscard]] HeatmapCanvas* canvas() const { return canvas_; }

 private:
  void show_bounds();
  HeatmapCanvas* canvas_;
  QComboBox* which_;
  QLabel* info_;
  std::shared_ptr<const DistanceBounds> bounds_;
  QString label_;
};

class TableViewer : public QWidget {
  Q_OBJECT
 public:
  explicit TableViewer(QWidget* parent = nullptr);
  void set_table(const Table& t, const QString& label);
  [[nodiscard]] QTableWidget* table() const { return table_; }

 private:
  QLabel* info_;
  QTableWidget* table_;
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
