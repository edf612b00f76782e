#pragma once
// Series viewer: a Signal (T × D, one lane per channel, non-finite samples drawn as gaps), a
// Segmentation as coloured bands per label behind it (a legend names the labels), and Scores
// as strips beneath (a boundary posterior: one row as an area; several labels: one heat row
// each; up to three strips, e.g. the label and boundary posteriors of one marginals node). Any one of the three is the
// shown value; the others are its companions (see ViewerPanel). Zoom (wheel about the cursor) and pan (drag) along
// time; Fit shows everything.
//
// Drawing costs O(visible samples) per paint, never O(visible samples) lines: when more samples
// than pixel columns are visible, each column draws one vertical line from the min to the max
// of its samples (minmax_columns), so T = 10⁶ draws about as many lines as the plot is wide.
#include <algorithm>
#include <cstddef>
#include <limits>
#include <memory>
#include <optional>
#include <utility>
#include <vector>

#include <QStringList>
#include <QWidget>

#include <gemflow/types/scores.hpp>
#include <gemflow/types/segmentation.hpp>
#include <gemflow/types/signal.hpp>

class QLabel;

namespace gemflow::studio {

/// What one pixel column draws of one channel.
struct ColumnRange {
  std::size_t begin = 0, end = 0;                         ///< its samples [begin, end)
  double min = std::numeric_limits<double>::quiet_NaN();  ///< over its finite samples; NaN when none
  double max = std::numeric_limits<double>::quiet_NaN();
  double first = std::numeric_limits<double>::quiet_NaN();  ///< its first sample (NaN when missing)
  double last = std::numeric_limits<double>::quiet_NaN();   ///< its last sample
};

/// Splits samples [begin, end) into `columns` consecutive ranges — column c covers
/// [begin + ⌊c·n/columns⌋, begin + ⌊(c+1)·n/columns⌋), n = end − begin, so every sample is in
/// exactly one column — and gives each the min and max of its finite samples. Sample t is
/// `data[t * stride]`. Columns are empty when n < columns.
[[nodiscard]] std::vector<ColumnRange> minmax_columns(const double* data, std::size_t stride, std::size_t begin,
                                                      std::size_t end, std::size_t columns);

/// Colour of label `index` (a qualitative palette, distinct for the first 10, then repeated
/// lighter and darker).
[[nodiscard]] QColor label_color(std::size_t index);

class SeriesCanvas : public QWidget {
  Q_OBJECT
 public:
  explicit SeriesCanvas(QWidget* parent = nullptr);
  void set_signal(std::shared_ptr<const Signal> s);
  void set_segmentation(std::shared_ptr<const Segmentation> s);
  /// Replaces the strips by `s` (none when null).
  void set_scores(std::shared_ptr<const Scores> s);
  /// Adds a strip (the first kMaxStrips are drawn).
  void add_scores(std::shared_ptr<const Scores> s);
  /// Whether the window survives the next layer changes (a new value of the same output).
  void set_keep_window(bool keep) { keep_window_ = keep; }

  [[nodiscard]] const std::shared_ptr<const Signal>& signal() const { return signal_; }
  [[nodiscard]] const std::shared_ptr<const Segmentation>& segmentation() const { return segmentation_; }
  /// The strips' scores, top to bottom.
  [[nodiscard]] std::vector<std::shared_ptr<const Scores>> scores() const;
  static constexpr std::size_t kMaxStrips = 3;
  /// Samples on the time axis: the longest of the layers.
  [[nodiscard]] std::size_t length() const { return length_; }

  /// Shows samples [t0, t1) (sample units; clamped to at least 4 samples inside [0, length]).
  void set_window(double t0, double t1);
  [[nodiscard]] std::pair<double, double> window() const { return {w0_, w1_}; }
  void fit();
  /// Zooms by `factor` (> 1 zooms in) keeping the sample under widget x `about` in place.
  void zoom_by(double factor, double about);
  /// The signal's plot area in widget coordinates (its width is the number of pixel columns).
  [[nodiscard]] QRect plot_rect() const;
  /// Sample at widget x (fractional).
  [[nodiscard]] double sample_at(double x) const;
  /// Line segments drawn by the last paint for the signal (a measure of the decimation).
  [[nodiscard]] std::size_t lines_drawn() const { return lines_drawn_; }
  /// The hover text for widget point p: sample, time, values, segment, scores.
  [[nodiscard]] QString readout_at(QPointF p) const;

 Q_SIGNALS:
  void view_changed();
  void hovered(const QString& text);

 protected:
  void paintEvent(QPaintEvent* e) override;
  void wheelEvent(QWheelEvent* e) override;
  void mousePressEvent(QMouseEvent* e) override;
  void mouseMoveEvent(QMouseEvent* e) override;
  void mouseReleaseEvent(QMouseEvent* e) override;
  void mouseDoubleClickEvent(QMouseEvent* e) override;

 private:
  void layers_changed();
  [[nodiscard]] double x_of(double t) const;
  [[nodiscard]] QRect strip_rect(std::size_t i) const;
  [[nodiscard]] std::size_t strips() const { return std::min(scores_.size(), kMaxStrips); }
  [[nodiscard]] double sample_rate() const;  // Hz for the axis, 0 when unknown
  void draw_legend(QPainter& p) const;
  void draw_bands(QPainter& p, const QRect& r) const;
  void draw_channel(QPainter& p, const QRect& lane, std::size_t d, QColor colour);
  struct ScoresLayer {
    std::shared_ptr<const Scores> s;
    bool log = false;  // log-probabilities (every finite value ≤ 0): shown as probabilities
    double min = 0, max = 1;
  };
  void draw_scores(QPainter& p, const QRect& r, const ScoresLayer& layer) const;
  void draw_axis(QPainter& p, const QRect& r) const;

  std::shared_ptr<const Signal> signal_;
  std::shared_ptr<const Segmentation> segmentation_;
  std::vector<ScoresLayer> scores_;
  std::vector<std::pair<double, double>> ranges_;  // per channel: finite min, max
  std::size_t length_ = 0;
  double w0_ = 0, w1_ = 1;
  bool keep_window_ = false;
  std::size_t lines_drawn_ = 0;
  std::optional<double> drag_x_;
};

class SeriesViewer : public QWidget {
  Q_OBJECT
 public:
  explicit SeriesViewer(QWidget* parent = nullptr);
  /// The shown value: clears the other layers (its companions follow). A new value under the
  /// same label keeps the time window.
  void show_signal(std::shared_ptr<const Signal> s, const QString& label);
  void show_segmentation(std::shared_ptr<const Segmentation> s, const QString& label);
  void show_scores(std::shared_ptr<const Scores> s, const QString& label);
  /// Companions drawn with it (add_scores adds a strip).
  void add_signal(std::shared_ptr<const Signal> s, const QString& label);
  void add_segmentation(std::shared_ptr<const Segmentation> s, const QString& label);
  void add_scores(std::shared_ptr<const Scores> s, const QString& label);
  [[nodiscard]] SeriesCanvas* canvas() const { return canvas_; }
  [[nodiscard]] QString info() const;

 private:
  void begin(const QString& label);
  void update_info();
  SeriesCanvas* canvas_;
  QLabel* info_;
  QLabel* readout_;
  QString label_, signal_label_, segmentation_label_;
  QStringList scores_labels_;
};

}  // namespace gemflow::studio
