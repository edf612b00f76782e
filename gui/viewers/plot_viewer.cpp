#include "viewers/plot_viewer.hpp"

#include <algorithm>
#include <cmath>
#include <fstream>
#include <limits>

#include <QCheckBox>
#include <QComboBox>
#include <QFileDialog>
#include <QHBoxLayout>
#include <QLabel>
#include <QMouseEvent>
#include <QPainter>
#include <QPainterPath>
#include <QPushButton>
#include <QToolTip>
#include <QVBoxLayout>
#include <QWheelEvent>

#include <gemflow/atomic_file.hpp>

namespace gemflow::studio {

namespace {
/// Distinct colours of the series (Tableau 10).
QColor series_color(std::size_t i) {
  static const QRgb c[] = {0x4e79a7, 0xf28e2b, 0xe15759, 0x76b7b2, 0x59a14f,
                           0xedc948, 0xb07aa1, 0xff9da7, 0x9c755f, 0xbab0ac};
  return QColor::fromRgb(c[i % 10]);
}
}  // namespace

std::vector<double> nice_ticks(double lo, double hi, int target) {
  std::vector<double> r;
  if (!(hi > lo) || !std::isfinite(lo) || !std::isfinite(hi)) return r;
  const double raw = (hi - lo) / std::max(1, target);
  const double mag = std::pow(10.0, std::floor(std::log10(raw)));
  double step = mag;
  for (double m : {1.0, 2.0, 5.0, 10.0})
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

PlotCanvas::PlotCanvas(QWidget* parent) : QWidget(parent) {
  setMouseTracking(true);
  setMinimumSize(240, 160);
}

void PlotCanvas::set_data(QString x_name, std::vector<double> x, std::vector<Series> series) {
  x_name_ = std::move(x_name);
  series_ = std::move(series);
  std::size_t n = 0;
  for (const auto& s : series_) n = std::max(n, s.y.size());
  if (x.empty()) {
    x.resize(n);
    for (std::size_t i = 0; i < n; ++i) x[i] = static_cast<double>(i);
    if (x_name_.isEmpty()) x_name_ = tr("index");
  }
  x_ = std::move(x);
  double x0 = std::numeric_limits<double>::infinity(), x1 = -x0, y0 = x0, y1 = -x0;
  for (const auto& s : series_)
    for (std::size_t i = 0; i < s.y.size() && i < x_.size(); ++i)
      if (std::isfinite(s.y[i]) && std::isfinite(x_[i])) {
        x0 = std::min(x0, x_[i]);
        x1 = std::max(x1, x_[i]);
        y0 = std::min(y0, s.y[i]);
        y1 = std::max(y1, s.y[i]);
      }
  if (!std::isfinite(x0)) x0 = 0, x1 = 1, y0 = 0, y1 = 1;
  if (x1 == x0) x0 -= 0.5, x1 += 0.5;
  if (y1 == y0) y0 -= 0.5, y1 += 0.5;
  const double pad = 0.04 * (y1 - y0);
  full_ = QRectF(QPointF(x0, y0 - pad), QPointF(x1, y1 + pad));
  view_ = full_;
  update();
}

void PlotCanvas::set_scatter(bool on) {
  scatter_ = on;
  update();
}

void PlotCanvas::set_view(const QRectF& r) {
  if (r.width() <= 0 || r.height() <= 0) return;
  view_ = r;
  update();
}

QRect PlotCanvas::plot_rect() const {
  const QFontMetrics fm(font());
  const int left = fm.horizontalAdvance(QStringLiteral("-0.000e+00")) + 10;
  const int bottom = 2 * fm.height() + 8;
  return QRect(left, 8, std::max(10, width() - left - 12), std::max(10, height() - bottom - 8));
}

QPointF PlotCanvas::to_widget(double x, double y) const {
  const QRect r = plot_rect();
  return {r.left() + (x - view_.left()) / view_.width() * r.width(),
          r.bottom() - (y - view_.top()) / view_.height() * r.height()};
}

QPointF PlotCanvas::to_data(QPointF p) const {
  const QRect r = plot_rect();
  return {view_.left() + (p.x() - r.left()) / r.width() * view_.width(),
          view_.top() + (r.bottom() - p.y()) / r.height() * view_.height()};
}

void PlotCanvas::paintEvent(QPaintEvent*) {
  QPainter p(this);
  p.fillRect(rect(), palette().base());
  const QRect r = plot_rect();
  const QColor text = palette().text().color();
  QColor grid = text;
  grid.setAlpha(40);
  p.setPen(text);
  const QFontMetrics fm = p.fontMetrics();
  for (double t : nice_ticks(view_.left(), view_.right(), std::max(2, r.width() / 90))) {
    const double x = to_widget(t, 0).x();
    p.setPen(grid);
    p.drawLine(QPointF(x, r.top()), QPointF(x, r.bottom()));
    p.setPen(text);
    const QString s = QString::number(t, 'g', 5);
    p.drawText(QPointF(x - fm.horizontalAdvance(s) / 2.0, r.bottom() + fm.ascent() + 4), s);
  }
  for (double t : nice_ticks(view_.top(), view_.bottom(), std::max(2, r.height() / 50))) {
    const double y = to_widget(0, t).y();
    p.setPen(grid);
    p.drawLine(QPointF(r.left(), y), QPointF(r.right(), y));
    p.setPen(text);
    const QString s = QString::number(t, 'g', 5);
    p.drawText(QPointF(r.left() - fm.horizontalAdvance(s) - 5, y + fm.ascent() / 2.0 - 1), s);
  }
  p.drawRect(r);
  p.drawText(QRect(r.left(), r.bottom() + fm.height() + 4, r.width(), fm.height() + 2), Qt::AlignCenter, x_name_);
  p.setClipRect(r.adjusted(1, 1, 0, 0));
  p.setRenderHint(QPainter::Antialiasing);
  for (std::size_t k = 0; k < series_.size(); ++k) {
    const auto& s = series_[k];
    p.setPen(QPen(series_color(k), scatter_ ? 1.0 : 1.6));
    p.setBrush(series_color(k));
    QPainterPath path;
    bool open = false;
    for (std::size_t i = 0; i < s.y.size() && i < x_.size(); ++i) {
      if (!std::isfinite(s.y[i]) || !std::isfinite(x_[i])) {
        open = false;
        continue;
      }
      const QPointF q = to_widget(x_[i], s.y[i]);
      if (scatter_) {
        p.drawEllipse(q, 2.5, 2.5);
      } else if (!open) {
        path.moveTo(q);
        open = true;
      } else {
        path.lineTo(q);
      }
    }
    if (!scatter_) {
      p.setBrush(Qt::NoBrush);
      p.drawPath(path);
    }
  }
  p.setClipping(false);
  // Legend.
  int y = r.top() + 4;
  for (std::size_t k = 0; k < series_.size(); ++k) {
    const QString s = series_[k].name;
    const int w = fm.horizontalAdvance(s);
    p.fillRect(QRect(r.right() - w - 30, y, w + 26, fm.height()), palette().base());
    p.fillRect(QRect(r.right() - w - 26, y + fm.height() / 2 - 2, 14, 4), series_color(k));
    p.setPen(text);
    p.drawText(QPointF(r.right() - w - 8, y + fm.ascent()), s);
    y += fm.height() + 2;
  }
}

void PlotCanvas::wheelEvent(QWheelEvent* e) {
  const QPointF at = to_data(e->position());
  const double f = std::pow(0.9985, e->angleDelta().y());
  set_view(QRectF(QPointF(at.x() - (at.x() - view_.left()) * f, at.y() - (at.y() - view_.top()) * f),
                  QSizeF(view_.width() * f, view_.height() * f)));
  e->accept();
}

void PlotCanvas::mousePressEvent(QMouseEvent* e) { last_ = e->position(); }

void PlotCanvas::mouseMoveEvent(QMouseEvent* e) {
  if (e->buttons() & Qt::LeftButton) {
    const QPointF d = to_data(last_) - to_data(e->position());
    last_ = e->position();
    set_view(view_.translated(d));
    return;
  }
  if (!plot_rect().contains(e->position().toPoint())) return;
  const QPointF at = to_data(e->position());
  QToolTip::showText(e->globalPosition().toPoint(),
                     QStringLiteral("%1 = %2, y = %3").arg(x_name_).arg(at.x(), 0, 'g', 6).arg(at.y(), 0, 'g', 6),
                     this);
}

void PlotCanvas::mouseDoubleClickEvent(QMouseEvent*) { reset_view(); }

std::string PlotCanvas::csv() const {
  auto field = [](const QString& s) {
    std::string t = s.toStdString();
    if (t.find_first_of(",\"\n") == std::string::npos) return t;
    std::string q(1, '"');
    for (char c : t) {
      if (c == '"') q += '"';
      q += c;
    }
    q += '"';
    return q;
  };
  std::string out = field(x_name_);
  for (const auto& s : series_) {
    out += ',';
    out += field(s.name);
  }
  out += '\n';
  char buf[64];
  auto num = [&](double v) {
    if (!std::isfinite(v)) return std::string();
    std::snprintf(buf, sizeof buf, "%.17g", v);
    return std::string(buf);
  };
  for (std::size_t i = 0; i < x_.size(); ++i) {
    out += num(x_[i]);
    for (const auto& s : series_) {
      out += ',';
      if (i < s.y.size()) out += num(s.y[i]);
    }
    out += '\n';
  }
  return out;
}

bool PlotCanvas::write_csv(const QString& file) const {
  try {
    write_file_atomically(file.toStdString(), csv());
    return true;
  } catch (const std::exception&) {
    return false;
  }
}

// ---- PlotViewer ---------------------------------------------------------------------------

PlotViewer::PlotViewer(QWidget* parent)
    : QWidget(parent), canvas_(new PlotCanvas), x_(new QComboBox), points_(new QCheckBox(tr("points"))) {
  setObjectName(QStringLiteral("plot_viewer"));
  auto* lay = new QVBoxLayout(this);
  lay->setContentsMargins(0, 0, 0, 0);
  auto* bar = new QHBoxLayout;
  bar->addWidget(new QLabel(tr("x:")));
  bar->addWidget(x_, 1);
  bar->addWidget(points_);
  auto* reset = new QPushButton(tr("Reset"));
  reset->setToolTip(tr("Show all the data again (or double-click the plot)"));
  auto* csv = new QPushButton(tr("CSV…"));
  csv->setObjectName(QStringLiteral("plot_csv"));
  csv->setToolTip(tr("Save the plotted columns as CSV"));
  auto* png = new QPushButton(tr("PNG…"));
  png->setToolTip(tr("Save the plot as a PNG picture"));
  for (auto* b : {reset, csv, png}) bar->addWidget(b);
  lay->addLayout(bar);
  lay->addWidget(canvas_, 1);
  connect(points_, &QCheckBox::toggled, canvas_, &PlotCanvas::set_scatter);
  connect(reset, &QPushButton::clicked, canvas_, &PlotCanvas::reset_view);
  connect(x_, &QComboBox::currentIndexChanged, this, [this] { replot(); });
  connect(csv, &QPushButton::clicked, this, [this] {
    const QString f =
        QFileDialog::getSaveFileName(this, tr("Save plotted data"), QStringLiteral("plot.csv"), tr("CSV (*.csv)"));
    if (!f.isEmpty()) canvas_->write_csv(f);
  });
  connect(png, &QPushButton::clicked, this, [this] {
    const QString f =
        QFileDialog::getSaveFileName(this, tr("Save plot"), QStringLiteral("plot.png"), tr("PNG (*.png)"));
    if (!f.isEmpty()) canvas_->grab().save(f, "PNG");
  });
}

void PlotViewer::set_table(const Table& t) {
  table_ = t;
  QSignalBlocker b(x_);
  const QString keep = x_->currentText();
  x_->clear();
  x_->addItem(tr("row"));
  for (std::size_t j = 0; j < t.columns.size(); ++j) {
    bool numeric = !t.rows.empty();
    for (const auto& row : t.rows)
      if (j < row.size() && std::holds_alternative<std::string>(row[j])) numeric = false;
    if (numeric) x_->addItem(QString::fromStdString(t.columns[j]), static_cast<int>(j));
  }
  const int i = x_->findText(keep);
  x_->setCurrentIndex(i < 0 ? 0 : i);
  x_->setEnabled(true);
  replot();
}

void PlotViewer::set_vector(std::vector<double> v, const QString& name) {
  table_ = {};
  QSignalBlocker b(x_);
  x_->clear();
  x_->addItem(tr("index"));
  x_->setEnabled(false);
  canvas_->set_data(tr("index"), {}, {{name, std::move(v)}});
}

void PlotViewer::replot() {
  auto value = [](const Table::Cell& c) {
    if (auto* d = std::get_if<double>(&c)) return *d;
    if (auto* n = std::get_if<std::int64_t>(&c)) return static_cast<double>(*n);
    return std::numeric_limits<double>::quiet_NaN();
  };
  const int xcol = x_->currentData().isValid() ? x_->currentData().toInt() : -1;
  std::vector<double> x;
  if (xcol >= 0)
    for (const auto& row : table_.rows)
      x.push_back(static_cast<std::size_t>(xcol) < row.size() ? value(row[static_cast<std::size_t>(xcol)]) : NAN);
  std::vector<PlotCanvas::Series> series;
  for (int k = 1; k < x_->count(); ++k) {
    const int j = x_->itemData(k).toInt();
    if (j == xcol) continue;
    PlotCanvas::Series s{x_->itemText(k), {}};
    for (const auto& row : table_.rows)
      s.y.push_back(static_cast<std::size_t>(j) < row.size() ? value(row[static_cast<std::size_t>(j)]) : NAN);
    series.push_back(std::move(s));
  }
  canvas_->set_data(xcol >= 0 ? x_->currentText() : tr("row"), std::move(x), std::move(series));
}

}  // namespace gemflow::studio
