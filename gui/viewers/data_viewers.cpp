#include "viewers/data_viewers.hpp"

#include "viewers/plot_viewer.hpp"

#include <algorithm>
#include <cmath>

#include <QComboBox>
#include <QDoubleSpinBox>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QMouseEvent>
#include <QPainter>
#include <QPlainTextEdit>
#include <QPushButton>
#include <QStackedWidget>
#include <QTabWidget>
#include <QTableWidget>
#include <QToolTip>
#include <QVBoxLayout>
#include <QWheelEvent>

namespace gemflow::studio {

QColor colormap(double t) {
  static const double stops[5][3] = {{0.267, 0.005, 0.329},
                                     {0.230, 0.322, 0.546},
                                     {0.128, 0.567, 0.551},
                                     {0.369, 0.789, 0.383},
                                     {0.993, 0.906, 0.144}};
  t = std::clamp(t, 0.0, 1.0) * 4.0;
  const int i = std::min(3, static_cast<int>(t));
  const double f = t - i;
  double c[3];
  for (int k = 0; k < 3; ++k) c[k] = stops[i][k] + f * (stops[i + 1][k] - stops[i][k]);
  return QColor::fromRgbF(static_cast<float>(c[0]), static_cast<float>(c[1]), static_cast<float>(c[2]));
}

QColor diverging_colormap(double t) {
  static const double stops[5][3] = {{0.230, 0.299, 0.754},
                                     {0.553, 0.690, 0.996},
                                     {0.865, 0.865, 0.865},
                                     {0.958, 0.604, 0.482},
                                     {0.706, 0.016, 0.150}};
  t = std::clamp(t, 0.0, 1.0) * 4.0;
  const int i = std::min(3, static_cast<int>(t));
  const double f = t - i;
  double c[3];
  for (int k = 0; k < 3; ++k) c[k] = stops[i][k] + f * (stops[i + 1][k] - stops[i][k]);
  return QColor::fromRgbF(static_cast<float>(c[0]), static_cast<float>(c[1]), static_cast<float>(c[2]));
}

// ---- HeatmapCanvas ----------------------------------------------------------------------

HeatmapCanvas::HeatmapCanvas(QWidget* parent) : QWidget(parent) {
  setMouseTracking(true);
  setMinimumSize(200, 160);
  setToolTip(tr("Wheel: zoom; drag: pan; double-click: whole matrix"));
}

void HeatmapCanvas::set_data(std::size_t rows, std::size_t cols, std::vector<double> values,
                             std::vector<std::string> labels) {
  const bool same_shape = rows == rows_ && cols == cols_;
  rows_ = rows;
  cols_ = cols;
  values_ = std::move(values);
  labels_ = std::move(labels);
  bool any = false;
  min_positive_ = 0;
  for (double v : values_)
    if (std::isfinite(v)) {
      vmin_ = any ? std::min(vmin_, v) : v;
      vmax_ = any ? std::max(vmax_, v) : v;
      any = true;
      if (v > 0) min_positive_ = min_positive_ > 0 ? std::min(min_positive_, v) : v;
    }
  if (!any) vmin_ = vmax_ = 0;
  if (!same_shape) reset_view();  // a new value of the same shape keeps the zoom
  rebuild_image();
}

void HeatmapCanvas::set_scale(Scale s) {
  scale_ = s;
  rebuild_image();
}

void HeatmapCanvas::set_range(double lo, double hi) {
  range_lo_ = lo;
  range_hi_ = hi;
  rebuild_image();
}

std::pair<double, double> HeatmapCanvas::colour_range() const {
  double lo = vmin_, hi = vmax_;
  if (range_lo_ < range_hi_) {
    lo = range_lo_;
    hi = range_hi_;
  }
  if (scale_ == Scale::Log) {
    if (lo <= 0) lo = min_positive_ > 0 ? min_positive_ : 1e-300;
    if (hi <= lo) hi = lo * 10;
  } else if (scale_ == Scale::Symmetric) {
    const double m = std::max(std::abs(lo), std::abs(hi));
    lo = -m;
    hi = m;
  }
  return {lo, hi};
}

double HeatmapCanvas::scale_position(double v) const {
  if (!std::isfinite(v)) return NAN;
  const auto [lo, hi] = colour_range();
  if (scale_ == Scale::Log) {
    if (v <= 0) return NAN;
    return std::clamp((std::log10(v) - std::log10(lo)) / std::max(1e-300, std::log10(hi) - std::log10(lo)), 0.0, 1.0);
  }
  const double span = hi > lo ? hi - lo : 1.0;
  return std::clamp((v - lo) / span, 0.0, 1.0);
}

void HeatmapCanvas::rebuild_image() {
  image_ = QImage(static_cast<int>(cols_), static_cast<int>(rows_), QImage::Format_RGB32);
  const bool diverging = scale_ == Scale::Symmetric;
  for (std::size_t i = 0; i < rows_; ++i) {
    auto* line = reinterpret_cast<QRgb*>(image_.scanLine(static_cast<int>(i)));
    for (std::size_t j = 0; j < cols_; ++j) {
      const double t = scale_position(values_[i * cols_ + j]);
      line[j] = std::isnan(t) ? qRgb(128, 128, 128) : (diverging ? diverging_colormap(t) : colormap(t)).rgb();
    }
  }
  update();
}

std::vector<double> HeatmapCanvas::ticks() const {
  const auto [lo, hi] = colour_range();
  std::vector<double> r;
  if (!(hi > lo)) return {lo};
  if (scale_ == Scale::Log) {
    for (double e = std::ceil(std::log10(lo) - 1e-9); e <= std::floor(std::log10(hi) + 1e-9); e += 1)
      r.push_back(std::pow(10.0, e));
    if (r.size() < 2) r = {lo, hi};
    while (r.size() > 7) {  // every other decade
      std::vector<double> half;
      for (std::size_t i = 0; i < r.size(); i += 2) half.push_back(r[i]);
      r = std::move(half);
    }
    return r;
  }
  // 1, 2 or 5 × 10^k steps, about five of them.
  const double raw = (hi - lo) / 5;
  const double mag = std::pow(10.0, std::floor(std::log10(raw)));
  double step = 10 * mag;
  for (double m : {1.0, 2.0, 5.0})
    if (m * mag >= raw) {
      step = m * mag;
      break;
    }
  // By index, not by adding steps: no accumulated rounding.
  for (auto k = static_cast<long long>(std::ceil(lo / step - 1e-9)); static_cast<double>(k) * step <= hi + step * 1e-9;
       ++k)
    r.push_back(static_cast<double>(k) * step);
  return r;
}

QStringList HeatmapCanvas::tick_labels() const {
  QStringList r;
  for (double t : ticks()) r << QString::number(t, 'g', 4);
  return r;
}

int HeatmapCanvas::bar_width() const {
  // Room for the widest label: never cut off at the window's edge.
  const QFontMetrics fm(font());
  int w = 0;
  for (const QString& s : tick_labels()) w = std::max(w, fm.horizontalAdvance(s));
  return 16 + 6 + w + 8;
}

QRect HeatmapCanvas::bar_rect() const {
  return {width() - bar_width(), 5 + fontMetrics().height() / 2, 16, height() - 10 - fontMetrics().height()};
}

QRect HeatmapCanvas::plot_rect() const {
  const int w = width() - bar_width() - 12, h = height() - 10;
  if (rows_ == 0 || cols_ == 0 || w <= 0 || h <= 0) return {};
  const double s = std::min(static_cast<double>(w) / static_cast<double>(cols_),
                            static_cast<double>(h) / static_cast<double>(rows_));
  // Square cells, unless that leaves a tall (or wide) matrix a sliver: then at least half the room.
  const double pw = std::max(s * static_cast<double>(cols_), std::min<double>(w, 0.5 * w));
  const double ph = std::max(s * static_cast<double>(rows_), std::min<double>(h, 0.5 * h));
  return {5, 5, std::max(1, static_cast<int>(pw)), std::max(1, static_cast<int>(ph))};
}

QRectF HeatmapCanvas::visible_cells() const {
  const double w = static_cast<double>(cols_) / zoom_, h = static_cast<double>(rows_) / zoom_;
  return {centre_.x() - w / 2, centre_.y() - h / 2, w, h};
}

void HeatmapCanvas::reset_view() {
  zoom_ = 1;
  centre_ = QPointF(static_cast<double>(cols_) / 2, static_cast<double>(rows_) / 2);
  update();
}

void HeatmapCanvas::zoom_at(QPointF widget_pos, double factor) {
  const QRect r = plot_rect();
  if (r.isEmpty()) return;
  const QRectF v = visible_cells();
  const QPointF cell(v.left() + (widget_pos.x() - r.left()) / r.width() * v.width(),
                     v.top() + (widget_pos.y() - r.top()) / r.height() * v.height());
  const double z = std::clamp(zoom_ * factor, 1.0, std::max(1.0, static_cast<double>(std::max(rows_, cols_)) / 2));
  // The cell under the cursor stays there.
  const double k = zoom_ / z;
  centre_ = cell + (centre_ - cell) * k;
  zoom_ = z;
  const QRectF nv = visible_cells();  // keep inside the matrix
  centre_.rx() = std::clamp(centre_.x(), nv.width() / 2, static_cast<double>(cols_) - nv.width() / 2);
  centre_.ry() = std::clamp(centre_.y(), nv.height() / 2, static_cast<double>(rows_) - nv.height() / 2);
  update();
}

void HeatmapCanvas::paintEvent(QPaintEvent*) {
  QPainter p(this);
  p.fillRect(rect(), palette().window());
  const QRect r = plot_rect();
  if (r.isEmpty()) return;
  p.drawImage(QRectF(r), image_, visible_cells());  // nearest-neighbour scaling keeps cells crisp
  // Colour bar with ticks.
  const QRect bar = bar_rect();
  const bool diverging = scale_ == Scale::Symmetric;
  for (int y = 0; y < bar.height(); ++y) {
    const double t = 1.0 - static_cast<double>(y) / std::max(1, bar.height() - 1);
    p.setPen(diverging ? diverging_colormap(t) : colormap(t));
    p.drawLine(bar.left(), bar.top() + y, bar.right(), bar.top() + y);
  }
  p.setPen(palette().text().color());
  p.drawRect(bar);
  const QFontMetrics fm = p.fontMetrics();
  for (double t : ticks()) {
    const double pos = scale_position(t);
    if (std::isnan(pos)) continue;
    const int y = bar.bottom() - static_cast<int>(std::lround(pos * (bar.height() - 1)));
    p.drawLine(bar.right(), y, bar.right() + 4, y);
    p.drawText(QPoint(bar.right() + 6, y + fm.ascent() / 2 - 1), QString::number(t, 'g', 4));
  }
}

void HeatmapCanvas::mousePressEvent(QMouseEvent* e) { last_ = e->position(); }

void HeatmapCanvas::mouseDoubleClickEvent(QMouseEvent*) { reset_view(); }

void HeatmapCanvas::wheelEvent(QWheelEvent* e) {
  zoom_at(e->position(), std::pow(1.0015, e->angleDelta().y()));
  e->accept();
}

void HeatmapCanvas::mouseMoveEvent(QMouseEvent* e) {
  const QRect r = plot_rect();
  if (e->buttons() & Qt::LeftButton) {
    if (r.isEmpty()) return;
    const QRectF v = visible_cells();
    const QPointF d = e->position() - last_;
    last_ = e->position();
    centre_ -= QPointF(d.x() / r.width() * v.width(), d.y() / r.height() * v.height());
    centre_.rx() = std::clamp(centre_.x(), v.width() / 2, static_cast<double>(cols_) - v.width() / 2);
    centre_.ry() = std::clamp(centre_.y(), v.height() / 2, static_cast<double>(rows_) - v.height() / 2);
    update();
    return;
  }
  if (!r.contains(e->position().toPoint())) return;
  const QRectF v = visible_cells();
  const double cx = v.left() + (e->position().x() - r.left()) / r.width() * v.width();
  const double cy = v.top() + (e->position().y() - r.top()) / r.height() * v.height();
  if (cx < 0 || cy < 0) return;
  const auto j = static_cast<std::size_t>(cx);
  const auto i = static_cast<std::size_t>(cy);
  if (i >= rows_ || j >= cols_) return;
  QString t = QStringLiteral("(%1, %2) = %3").arg(i).arg(j).arg(values_[i * cols_ + j], 0, 'g', 6);
  if (i < labels_.size() && j < labels_.size())
    t += QStringLiteral("\n%1 — %2").arg(QString::fromStdString(labels_[i]), QString::fromStdString(labels_[j]));
  QToolTip::showText(e->globalPosition().toPoint(), t, this);
}

// ---- HeatmapViewer ----------------------------------------------------------------------

HeatmapViewer::HeatmapViewer(QWidget* parent)
    : QWidget(parent),
      canvas_(new HeatmapCanvas),
      which_(new QComboBox),
      scale_(new QComboBox),
      lo_(new QDoubleSpinBox),
      hi_(new QDoubleSpinBox),
      info_(new QLabel),
      stack_(new QStackedWidget),
      heat_page_(new QWidget) {
  auto* lay = new QVBoxLayout(this);
  lay->setContentsMargins(0, 0, 0, 0);
  auto* page = new QVBoxLayout(heat_page_);
  page->setContentsMargins(0, 0, 0, 0);
  auto* bar = new QHBoxLayout;
  which_->addItems({tr("lower"), tr("upper"), tr("upper − lower")});
  scale_->setObjectName(QStringLiteral("heatmap_scale"));
  scale_->addItems({tr("linear"), tr("log"), tr("symmetric")});
  scale_->setToolTip(tr("Colour scale: linear, logarithmic (positive values), or symmetric about 0 (diverging)"));
  for (auto* sb : {lo_, hi_}) {
    sb->setRange(-1e300, 1e300);
    sb->setDecimals(6);
    sb->setKeyboardTracking(false);
    sb->setMaximumWidth(110);
  }
  lo_->setObjectName(QStringLiteral("heatmap_min"));
  hi_->setObjectName(QStringLiteral("heatmap_max"));
  lo_->setToolTip(tr("Colour range minimum (equal to the maximum: the data's own range)"));
  hi_->setToolTip(tr("Colour range maximum"));
  auto* autob = new QPushButton(tr("Auto"));
  autob->setToolTip(tr("Colour range from the data"));
  bar->addWidget(which_);
  bar->addWidget(scale_);
  bar->addWidget(new QLabel(tr("range")));
  bar->addWidget(lo_);
  bar->addWidget(hi_);
  bar->addWidget(autob);
  bar->addWidget(info_, 1);
  page->addLayout(bar);
  page->addWidget(canvas_, 1);
  stack_->addWidget(heat_page_);
  lay->addWidget(stack_, 1);
  connect(which_, &QComboBox::currentIndexChanged, this, [this] { show_bounds(); });
  connect(scale_, &QComboBox::currentIndexChanged, this,
          [this](int i) { canvas_->set_scale(static_cast<HeatmapCanvas::Scale>(i)); });
  connect(lo_, &QDoubleSpinBox::valueChanged, this, [this] { apply_range(); });
  connect(hi_, &QDoubleSpinBox::valueChanged, this, [this] { apply_range(); });
  connect(autob, &QPushButton::clicked, this, [this] {
    QSignalBlocker a(lo_), b(hi_);
    lo_->setValue(canvas_->vmin());
    hi_->setValue(canvas_->vmin());
    canvas_->set_range(0, 0);
  });
}

void HeatmapViewer::apply_range() { canvas_->set_range(lo_->value(), hi_->value()); }

bool HeatmapViewer::showing_plot() const { return plot_ && stack_->currentWidget() == plot_; }

void HeatmapViewer::set_matrix(std::size_t rows, std::size_t cols, std::vector<double> values, const QString& label) {
  bounds_.reset();
  which_->setVisible(false);
  if ((rows == 1 || cols == 1) && rows * cols > 1) {  // a vector: a line plot says more
    if (!plot_) {
      plot_ = new PlotViewer;
      stack_->addWidget(plot_);
    }
    plot_->set_vector(std::move(values), QStringLiteral("%1 (%2 values)").arg(label).arg(rows * cols));
    stack_->setCurrentWidget(plot_);
    return;
  }
  stack_->setCurrentWidget(heat_page_);
  canvas_->set_data(rows, cols, std::move(values), {});
  info_->setText(tr("%1: %2 × %3, [%4, %5]")
                     .arg(label)
                     .arg(rows)
                     .arg(cols)
                     .arg(canvas_->vmin(), 0, 'g', 5)
                     .arg(canvas_->vmax(), 0, 'g', 5));
}

void HeatmapViewer::set_bounds(std::shared_ptr<const DistanceBounds> b, const QString& label) {
  bounds_ = std::move(b);
  label_ = label;
  which_->setVisible(true);
  stack_->setCurrentWidget(heat_page_);
  show_bounds();
}

void HeatmapViewer::show_bounds() {
  if (!bounds_) return;
  const auto& lo = bounds_->lower;
  const auto& up = bounds_->upper;
  std::vector<double> v(lo.size());
  const int w = which_->currentIndex();
  for (std::size_t k = 0; k < v.size(); ++k) {
    const double u = k < up.size() ? up.data()[k] : NAN;
    v[k] = w == 0 ? lo.data()[k] : w == 1 ? u : u - lo.data()[k];
  }
  canvas_->set_data(lo.rows(), lo.cols(), std::move(v), bounds_->labels);
  info_->setText(tr("%1: %2 atoms, %3 [%4, %5] Å")
                     .arg(label_)
                     .arg(bounds_->size())
                     .arg(which_->currentText())
                     .arg(canvas_->vmin(), 0, 'g', 5)
                     .arg(canvas_->vmax(), 0, 'g', 5));
}

// ---- TableViewer / TextViewer -----------------------------------------------------------

TableViewer::TableViewer(QWidget* parent)
    : QWidget(parent), info_(new QLabel), table_(new QTableWidget), tabs_(new QTabWidget), plot_(new PlotViewer) {
  auto* lay = new QVBoxLayout(this);
  lay->setContentsMargins(0, 0, 0, 0);
  lay->addWidget(info_);
  tabs_->addTab(table_, tr("Table"));
  tabs_->addTab(plot_, tr("Plot"));
  lay->addWidget(tabs_, 1);
  table_->setEditTriggers(QAbstractItemView::NoEditTriggers);
}

void TableViewer::set_table(const Table& t, const QString& label) {
  info_->setText(tr("%1: %2 rows × %3 columns").arg(label).arg(t.rows.size()).arg(t.columns.size()));
  table_->clear();
  table_->setColumnCount(static_cast<int>(t.columns.size()));
  table_->setRowCount(static_cast<int>(t.rows.size()));
  QStringList header;
  for (const auto& c : t.columns) header << QString::fromStdString(c);
  table_->setHorizontalHeaderLabels(header);
  for (std::size_t i = 0; i < t.rows.size(); ++i)
    for (std::size_t j = 0; j < t.rows[i].size() && j < t.columns.size(); ++j) {
      const auto& cell = t.rows[i][j];
      QString text;
      if (auto* d = std::get_if<double>(&cell)) text = QString::number(*d, 'g', 10);
      else if (auto* n = std::get_if<std::int64_t>(&cell)) text = QString::number(*n);
      else text = QString::fromStdString(std::get<std::string>(cell));
      auto* item = new QTableWidgetItem(text);
      if (!std::holds_alternative<std::string>(cell)) item->setTextAlignment(Qt::AlignRight | Qt::AlignVCenter);
      table_->setItem(static_cast<int>(i), static_cast<int>(j), item);
    }
  table_->resizeColumnsToContents();
  plot_->set_table(t);
}

TextViewer::TextViewer(QWidget* parent) : QWidget(parent), text_(new QPlainTextEdit) {
  auto* lay = new QVBoxLayout(this);
  lay->setContentsMargins(0, 0, 0, 0);
  text_->setReadOnly(true);
  lay->addWidget(text_);
}

void TextViewer::set_text(const QString& text) { text_->setPlainText(text); }
QString TextViewer::text() const { return text_->toPlainText(); }

}  // namespace gemflow::studio
