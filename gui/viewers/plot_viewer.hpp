#pragma once
// PlotCanvas: line or scatter plot of numeric series against an x series (convergence
// histories, refinement and fit histories, violation lists: a Table's numeric columns, or a
// vector), with axes and "nice" ticks, wheel zoom around the cursor, drag to pan, double-click
// to reset, and export of what is plotted as CSV and of the picture as PNG.
#include <string>
#include <vector>

#include <QRectF>
#include <QString>
#include <QStringList>
#include <QWidget>

#include <gemflow/types/table.hpp>

class QCheckBox;
class QComboBox;

namespace gemflow::studio {

/// Tick positions in [lo, hi]: about `target` of them at 1, 2 or 5 × 10^k.
[[nodiscard]] std::vector<double> nice_ticks(double lo, double hi, int target = 6);

class PlotCanvas : public QWidget {
  Q_OBJECT
 public:
  struct Series {
    QString name;
    std::vector<double> y;
  };
  explicit PlotCanvas(QWidget* parent = nullptr);
  /// `x` empty: the sample index. Non-finite values are gaps.
  void set_data(QString x_name, std::vector<double> x, std::vector<Series> series);
  void set_scatter(bool on);
  [[nodiscard]] bool scatter() const { return scatter_; }
  /// The data range shown (x0, y0)–(x1, y1) and the full range of the data.
  [[nodiscard]] QRectF view() const { return view_; }
  [[nodiscard]] QRectF data_range() const { return full_; }
  void set_view(const QRectF& r);
  void reset_view() { set_view(full_); }
  /// Widget point of a data point, and back.
  [[nodiscard]] QPointF to_widget(double x, double y) const;
  [[nodiscard]] QPointF to_data(QPointF p) const;
  [[nodiscard]] QRect plot_rect() const;
  /// The plotted data as CSV (header, one row per sample); written with write_csv.
  [[nodiscard]] std::string csv() const;
  bool write_csv(const QString& file) const;

 protected:
  void paintEvent(QPaintEvent*) override;
  void wheelEvent(QWheelEvent* e) override;
  void mousePressEvent(QMouseEvent* e) override;
  void mouseMoveEvent(QMouseEvent* e) override;
  void mouseDoubleClickEvent(QMouseEvent* e) override;

 private:
  QString x_name_;
  std::vector<double> x_;
  std::vector<Series> series_;
  bool scatter_ = false;
  QRectF full_, view_;  // data coordinates, y up
  QPointF last_;
};

/// A PlotCanvas with its controls: x column, lines/points, Reset, CSV…, PNG….
class PlotViewer : public QWidget {
  Q_OBJECT
 public:
  explicit PlotViewer(QWidget* parent = nullptr);
  /// Plots every numeric column of `t` against the chosen x column (default: row index).
  void set_table(const Table& t);
  void set_vector(std::vector<double> v, const QString& name);
  [[nodiscard]] PlotCanvas* canvas() const { return canvas_; }
  [[nodiscard]] QComboBox* x_choice() const { return x_; }

 private:
  void replot();
  PlotCanvas* canvas_;
  QComboBox* x_;
  QCheckBox* points_;
  Table table_;
};

}  // namespace gemflow::studio
