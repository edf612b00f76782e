#include "viewers/data_viewers.hpp"

#include <algorithm>
#include <cmath>

#include <QComboBox>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QMouseEvent>
#include <QPainter>
#include <QPlainTextEdit>
#include <QTableWidget>
#include <QToolTip>
#include <QVBoxLayout>

namespace gemflow::studio {

QColor colormap(double t) {
  static const double stops[5][3] = {
      {0.267, 0.005, 0.329}, {0.230, 0.322, 0.546}, {0.128, 0.567, 0.551}, {0.369, 0.789, 0.383}, {0.993, 0.906, 0.144}};
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
}

void HeatmapCanvas::set_data(std::size_t rows, std::size_t cols, std::vector<double> values,
                             std::vector<std::string> labels) {
  rows_ = rows;
  cols_ = cols;
  values_ = std::move(values);
  labels_ = std::move(labels);
  bool any = false;
  for (double v : values_)
    if (std::isfinite(v)) {
      vmin_ = any ? std::min(vmin_, v) : v;
      vmax_ = any ? std::max(vmax_, v) : v;
      any = true;
    }
  if (!any) vmin_ = vmax_ = 0;
  image_ = QImage(static_cast<int>(cols_), static_cast<int>(rows_), QImage::Format_RGB32);
  const double span = vmax_ > vmin_ ? vmax_ - vmin_ : 1.0;
  for (std::size_t i = 0; i < rows_; ++i) {
    auto* line = reinterpret_cast<QRgb*>(image_.scanLine(static_cast<int>(i)));
    for (std::size_t j = 0; j < cols_; ++j) {
      const double v = values_[i * cols_ + j];
      line[j] = std::isfinite(v) ? colormap((v - vmin_) / span).rgb() : qRgb(128, 128, 128);
    }
  }
  update();
}

QRect HeatmapCanvas::plot_rect() const {
  const int bar = 70;
  const int w = width() - bar - 10, h = height() - 10;
  if (rows_ == 0 || cols_ == 0 || w <= 0 || h <= 0) return {};
  const double s = std::min(static_cast<double>(w) / static_cast<double>(cols_), static_cast<double>(h) / static_cast<double>(rows_));
  return {5, 5, std::max(1, static_cast<int>(s * static_cast<double>(cols_))), std::max(1, static_cast<int>(s * static_cast<double>(rows_)))};
}

void HeatmapCanvas::paintEvent(QPaintEvent*) {
  QPainter p(this);
  p.fillRect(rect(), palette().window());
  const QRect r = plot_rect();
  if (r.isEmpty()) return;
  p.drawImage(r, image_);  // nearest-neighbour scaling keeps cells crisp
  // Colour bar.
  const QRect bar(width() - 60, 5, 16, height() - 10);
  for (int y = 0; y < bar.height(); ++y) {
    p.setPen(colormap(1.0 - static_cast<double>(y) / std::max(1, bar.height() - 1)));
    p.drawLine(bar.left(), bar.top() + y, bar.right(), bar.top() + y);
  }
  p.setPen(palette().text().color());
  p.drawRect(bar);
  p.drawText(QPoint(bar.right() + 4, bar.top() + 10), QString::number(vmax_, 'g', 4));
  p.drawText(QPoint(bar.right() + 4, bar.bottom()), QString::number(vmin_, 'g', 4));
}

void HeatmapCanvas::mouseMoveEvent(QMouseEvent* e) {
  const QRect r = plot_rect();
  if (!r.contains(e->position().toPoint())) return;
  const auto j = static_cast<std::size_t>((e->position().x() - r.left()) * static_cast<double>(cols_) / r.width());
  const auto i = static_cast<std::size_t>((e->position().y() - r.top()) * static_cast<double>(rows_) / r.height());
  if (i >= rows_ || j >= cols_) return;
  QString t = QStringLiteral("(%1, %2) = %3").arg(i).arg(j).arg(values_[i * cols_ + j], 0, 'g', 6);
  if (i < labels_.size() && j < labels_.size())
    t += QStringLiteral("\n%1 — %2").arg(QString::fromStdString(labels_[i]), QString::fromStdString(labels_[j]));
  QToolTip::showText(e->globalPosition().toPoint(), t, this);
}

// ---- HeatmapViewer ----------------------------------------------------------------------

HeatmapViewer::HeatmapViewer(QWidget* parent)
    : QWidget(parent), canvas_(new HeatmapCanvas), which_(new QComboBox), info_(new QLabel) {
  auto* lay = new QVBoxLayout(this);
  lay->setContentsMargins(0, 0, 0, 0);
  auto* bar = new QHBoxLayout;
  which_->addItems({tr("lower"), tr("upper"), tr("upper − lower")});
  bar->addWidget(which_);
  bar->addWidget(info_, 1);
  lay->addLayout(bar);
  lay->addWidget(canvas_, 1);
  connect(which_, &QComboBox::currentIndexChanged, this, [this] { show_bounds(); });
}

void HeatmapViewer::set_matrix(std::size_t rows, std::size_t cols, std::vector<double> values, const QString& label) {
  bounds_.reset();
  which_->setVisible(false);
  canvas_->set_data(rows, cols, std::move(values), {});
  info_->setText(tr("%1: %2 × %3, [%4, %5]").arg(label).arg(rows).arg(cols).arg(canvas_->vmin(), 0, 'g', 5).arg(canvas_->vmax(), 0, 'g', 5));
}

void HeatmapViewer::set_bounds(std::shared_ptr<const DistanceBounds> b, const QString& label) {
  bounds_ = std::move(b);
  label_ = label;
  which_->setVisible(true);
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

TableViewer::TableViewer(QWidget* parent) : QWidget(parent), info_(new QLabel), table_(new QTableWidget) {
  auto* lay = new QVBoxLayout(this);
  lay->setContentsMargins(0, 0, 0, 0);
  lay->addWidget(info_);
  lay->addWidget(table_, 1);
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
