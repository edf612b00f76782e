#include "viewers/series_viewer.hpp"

#include <algorithm>
#include <cmath>

#include <QHBoxLayout>
#include <QLabel>
#include <QMouseEvent>
#include <QPainter>
#include <QToolButton>
#include <QVBoxLayout>
#include <QWheelEvent>

#include "viewers/data_viewers.hpp"

namespace gemflow::studio {

namespace {
constexpr int kLeft = 90;  // margin for channel names and ranges
constexpr int kRight = 8;
constexpr int kLegend = 20;       // legend row
constexpr int kAxis = 22;         // time axis
constexpr int kStrip = 56;        // scores strip
constexpr double kMinWindow = 4;  // samples
constexpr std::size_t kMaxLanes = 8;

QString q(const std::string& s) { return QString::fromStdString(s); }

/// "Nice" tick step (1, 2 or 5 × 10^k) for about `count` ticks over `span`.
double tick_step(double span, int count) {
  const double raw = span / std::max(1, count);
  const double p = std::pow(10.0, std::floor(std::log10(raw)));
  for (double m : {1.0, 2.0, 5.0})
    if (m * p >= raw) return m * p;
  return 10 * p;
}
}  // namespace

std::vector<ColumnRange> minmax_columns(const double* data, std::size_t stride, std::size_t begin, std::size_t end,
                                        std::size_t columns) {
  std::vector<ColumnRange> out(columns);
  if (columns == 0 || end <= begin) return out;
  const std::size_t n = end - begin;
  for (std::size_t c = 0; c < columns; ++c) {
    ColumnRange& col = out[c];
    // c·n < columns·n: far below 2⁶⁴ for any plot width and sample count.
    col.begin = begin + static_cast<std::size_t>(static_cast<unsigned long long>(c) * n / columns);
    col.end = begin + static_cast<std::size_t>(static_cast<unsigned long long>(c + 1) * n / columns);
    if (col.begin == col.end) continue;
    col.first = data[col.begin * stride];
    col.last = data[(col.end - 1) * stride];
    double lo = std::numeric_limits<double>::infinity(), hi = -lo;
    for (std::size_t t = col.begin; t < col.end; ++t) {
      const double v = data[t * stride];
      if (!std::isfinite(v)) continue;
      lo = std::min(lo, v);
      hi = std::max(hi, v);
    }
    if (lo <= hi) {
      col.min = lo;
      col.max = hi;
    }
  }
  return out;
}

QColor label_color(std::size_t index) {
  // Tableau 10: distinct for colour-blind viewers too.
  static const QRgb base[10] = {0x4e79a7, 0xf28e2b, 0xe15759, 0x76b7b2, 0x59a14f,
                                0xedc948, 0xb07aa1, 0xff9da7, 0x9c755f, 0xbab0ac};
  QColor c = QColor::fromRgb(base[index % 10]);
  const std::size_t round = index / 10;
  if (round % 2 == 1) c = c.lighter(100 + 25 * static_cast<int>((round + 1) / 2));
  else if (round > 0) c = c.darker(100 + 25 * static_cast<int>(round / 2));
  return c;
}

// ---- SeriesCanvas -----------------------------------------------------------------------

SeriesCanvas::SeriesCanvas(QWidget* parent) : QWidget(parent) {
  setMouseTracking(true);
  setMinimumSize(300, 160);
  setFocusPolicy(Qt::ClickFocus);
}

void SeriesCanvas::set_signal(std::shared_ptr<const Signal> s) {
  signal_ = std::move(s);
  ranges_.clear();
  if (signal_) {
    const std::size_t T = signal_->length(), D = signal_->dims();
    ranges_.assign(D, {0.0, 0.0});
    for (std::size_t d = 0; d < D; ++d) {
      double lo = std::numeric_limits<double>::infinity(), hi = -lo;
      for (std::size_t t = 0; t < T; ++t) {
        const double v = signal_->samples(t, d);
        if (!std::isfinite(v)) continue;
        lo = std::min(lo, v);
        hi = std::max(hi, v);
      }
      if (lo > hi) lo = hi = 0;
      if (lo == hi) {
        lo -= 0.5;
        hi += 0.5;
      }
      ranges_[d] = {lo, hi};
    }
  }
  layers_changed();
}

void SeriesCanvas::set_segmentation(std::shared_ptr<const Segmentation> s) {
  segmentation_ = std::move(s);
  layers_changed();
}

void SeriesCanvas::set_scores(std::shared_ptr<const Scores> s) {
  scores_.clear();
  if (s) add_scores(std::move(s));
  else layers_changed();
}

void SeriesCanvas::add_scores(std::shared_ptr<const Scores> s) {
  if (!s) return;
  ScoresLayer l;
  // Log-probabilities (what a posterior gives: every value ≤ 0) are shown as probabilities;
  // other scores on their own finite range.
  double lo = std::numeric_limits<double>::infinity(), hi = -lo;
  const double* v = s->scores.data();
  for (std::size_t i = 0; i < s->scores.size(); ++i)
    if (std::isfinite(v[i])) {
      lo = std::min(lo, v[i]);
      hi = std::max(hi, v[i]);
    }
  if (lo > hi) lo = hi = 0;
  l.log = hi <= 0;
  l.min = l.log ? 0.0 : lo;
  l.max = l.log ? 1.0 : (hi > lo ? hi : lo + 1);
  l.s = std::move(s);
  scores_.push_back(std::move(l));
  layers_changed();
}

std::vector<std::shared_ptr<const Scores>> SeriesCanvas::scores() const {
  std::vector<std::shared_ptr<const Scores>> out;
  for (const ScoresLayer& l : scores_) out.push_back(l.s);
  return out;
}

void SeriesCanvas::layers_changed() {
  std::size_t n = 0;
  if (signal_) n = std::max(n, signal_->length());
  if (segmentation_) n = std::max(n, segmentation_->length);
  for (const ScoresLayer& l : scores_) n = std::max(n, l.s->length());
  const bool same = n == length_;
  length_ = n;
  if (keep_window_ && same) set_window(w0_, w1_);
  else fit();
}

void SeriesCanvas::set_window(double t0, double t1) {
  const double n = static_cast<double>(std::max<std::size_t>(length_, 1));
  double w = std::clamp(t1 - t0, std::min(kMinWindow, n), n);
  t0 = std::clamp(t0, 0.0, n - w);
  w0_ = t0;
  w1_ = t0 + w;
  update();
  Q_EMIT view_changed();
}

void SeriesCanvas::fit() { set_window(0, static_cast<double>(length_)); }

void SeriesCanvas::zoom_by(double factor, double about) {
  const double t = sample_at(about);
  const double w = (w1_ - w0_) / factor;
  const double f = (t - w0_) / (w1_ - w0_);
  set_window(t - f * w, t - f * w + w);
}

QRect SeriesCanvas::plot_rect() const {
  const int top = segmentation_ ? kLegend : 4;
  const int bottom = height() - kAxis - static_cast<int>(strips()) * (kStrip + 4);
  return {kLeft, top, std::max(1, width() - kLeft - kRight), std::max(1, bottom - top)};
}

QRect SeriesCanvas::strip_rect(std::size_t i) const {
  const QRect p = plot_rect();
  return {p.left(), p.bottom() + 5 + static_cast<int>(i) * (kStrip + 4), p.width(), kStrip};
}

double SeriesCanvas::x_of(double t) const {
  const QRect r = plot_rect();
  return r.left() + (t - w0_) / (w1_ - w0_) * r.width();
}

double SeriesCanvas::sample_at(double x) const {
  const QRect r = plot_rect();
  return w0_ + (x - r.left()) / r.width() * (w1_ - w0_);
}

double SeriesCanvas::sample_rate() const {
  if (signal_ && signal_->regular() && signal_->sample_rate > 0) return signal_->sample_rate;
  if (segmentation_ && segmentation_->sample_rate > 0) return segmentation_->sample_rate;
  for (const ScoresLayer& l : scores_)
    if (l.s->sample_rate > 0) return l.s->sample_rate;
  return 0;
}

void SeriesCanvas::paintEvent(QPaintEvent*) {
  QPainter p(this);
  p.fillRect(rect(), palette().base());
  lines_drawn_ = 0;
  if (length_ == 0) {
    p.setPen(palette().text().color());
    p.drawText(rect(), Qt::AlignCenter, tr("Nothing to show (0 samples)"));
    return;
  }
  const QRect plot = plot_rect();
  draw_legend(p);
  draw_bands(p, plot);
  p.setPen(palette().mid().color());
  p.drawRect(plot.adjusted(0, 0, -1, -1));
  if (signal_ && signal_->dims() > 0) {
    const std::size_t lanes = std::min(signal_->dims(), kMaxLanes);
    const int h = plot.height() / static_cast<int>(lanes);
    for (std::size_t d = 0; d < lanes; ++d) {
      const QRect lane(plot.left(), plot.top() + static_cast<int>(d) * h, plot.width(), h);
      QColor c = palette().text().color();
      if (lanes > 1) c = label_color(d).darker(160);
      draw_channel(p, lane, d, c);
    }
  } else if (segmentation_) {
    p.setPen(palette().text().color());
    p.drawText(QRect(0, plot.top(), kLeft - 6, plot.height()), Qt::AlignRight | Qt::AlignVCenter, tr("segments"));
  }
  for (std::size_t i = 0; i < strips(); ++i) draw_scores(p, strip_rect(i), scores_[i]);
  draw_axis(p, QRect(plot.left(), height() - kAxis, plot.width(), kAxis));
}

void SeriesCanvas::draw_legend(QPainter& p) const {
  if (!segmentation_) return;
  int x = kLeft;
  const QFontMetrics fm = p.fontMetrics();
  for (std::size_t i = 0; i < segmentation_->labels.size() && x < width() - 20; ++i) {
    p.fillRect(QRect(x, 5, 12, 12), label_color(i));
    p.setPen(palette().text().color());
    const QString name = q(segmentation_->labels[i]);
    p.drawText(QPoint(x + 16, 5 + fm.ascent()), name);
    x += 16 + fm.horizontalAdvance(name) + 14;
  }
}

void SeriesCanvas::draw_bands(QPainter& p, const QRect& r) const {
  if (!segmentation_) return;
  p.save();
  p.setClipRect(r);
  const auto& segs = segmentation_->segments;
  // First segment ending after the window starts (segments are sorted and disjoint).
  auto it = std::partition_point(segs.begin(), segs.end(),
                                 [&](const Segment& s) { return static_cast<double>(s.end) <= w0_; });
  int last_px = std::numeric_limits<int>::min();
  const bool boundaries = (w1_ - w0_) / r.width() < 0.25;  // ≥ 4 px a sample: draw edges
  for (; it != segs.end() && static_cast<double>(it->start) < w1_; ++it) {
    const int x0 = static_cast<int>(std::floor(x_of(static_cast<double>(it->start))));
    const int x1 = std::max(x0 + 1, static_cast<int>(std::ceil(x_of(static_cast<double>(it->end)))));
    if (x1 <= last_px) continue;  // several segments in one pixel column: the first one shows
    QColor c = label_color(it->label);
    c.setAlpha(90);
    p.fillRect(QRect(std::max(x0, last_px), r.top(), x1 - std::max(x0, last_px), r.height()), c);
    if (boundaries) {
      p.setPen(label_color(it->label).darker(130));
      p.drawLine(x0, r.top(), x0, r.bottom());
    }
    last_px = x1;
  }
  p.restore();
}

void SeriesCanvas::draw_channel(QPainter& p, const QRect& lane, std::size_t d, QColor colour) {
  const auto [lo, hi] = ranges_[d];
  const double pad = 0.06 * (hi - lo);
  auto y_of = [&, lo = lo, hi = hi](double v) {
    return lane.bottom() - 2 - (v - (lo - pad)) / ((hi + pad) - (lo - pad)) * (lane.height() - 4);
  };
  // Channel name and range.
  p.setPen(palette().text().color());
  const QString name =
      d < signal_->channels.size() && !signal_->channels[d].empty() ? q(signal_->channels[d]) : tr("channel %1").arg(d);
  const QString unit = d < signal_->units.size() ? q(signal_->units[d]) : QString();
  p.drawText(QRect(2, lane.top() + 2, kLeft - 8, lane.height() - 4),
             Qt::AlignRight | Qt::AlignVCenter | Qt::TextWordWrap,
             unit.isEmpty() ? name : QStringLiteral("%1 (%2)").arg(name, unit));
  p.setPen(palette().mid().color());
  p.drawText(QRect(2, lane.top(), kLeft - 8, 14), Qt::AlignRight | Qt::AlignTop, QString::number(hi, 'g', 4));
  p.drawText(QRect(2, lane.bottom() - 14, kLeft - 8, 14), Qt::AlignRight | Qt::AlignBottom,
             QString::number(lo, 'g', 4));

  const std::size_t T = signal_->length(), D = signal_->dims();
  if (T == 0) return;
  const double* data = signal_->samples.data() + d;
  const auto i0 = static_cast<std::size_t>(std::clamp(std::floor(w0_), 0.0, static_cast<double>(T)));
  const auto i1 = static_cast<std::size_t>(std::clamp(std::ceil(w1_), 0.0, static_cast<double>(T)));
  const auto columns = static_cast<std::size_t>(lane.width());
  std::vector<QLineF> lines;
  p.save();
  p.setClipRect(lane);
  p.setRenderHint(QPainter::Antialiasing, false);
  if (i1 - i0 <= 2 * columns) {
    // Few samples: the polyline itself, broken at non-finite samples, one sample beyond each
    // edge so that lines leave the plot instead of stopping short.
    const std::size_t a = i0 > 0 ? i0 - 1 : 0, b = std::min(T, i1 + 1);
    for (std::size_t t = a; t + 1 < b; ++t) {
      const double v0 = data[t * D], v1 = data[(t + 1) * D];
      if (std::isfinite(v0) && std::isfinite(v1))
        lines.emplace_back(x_of(static_cast<double>(t)), y_of(v0), x_of(static_cast<double>(t + 1)), y_of(v1));
    }
    if (i1 - i0 <= columns / 4)  // a dot per sample when zoomed far in (isolated samples show)
      for (std::size_t t = i0; t < i1; ++t)
        if (std::isfinite(data[t * D]))
          p.fillRect(QRectF(x_of(static_cast<double>(t)) - 1.5, y_of(data[t * D]) - 1.5, 3, 3), colour);
  } else {
    // One vertical min–max line per pixel column, joined to the next column where the signal
    // is continuous (both edge samples finite).
    const auto cols = minmax_columns(data, D, i0, i1, columns);
    // The columns cover the whole samples of [i0, i1); place them by their samples.
    for (std::size_t c = 0; c < cols.size(); ++c) {
      const ColumnRange& col = cols[c];
      if (col.begin == col.end) continue;
      const double x = x_of(static_cast<double>(col.begin + col.end) / 2.0);
      // At least one pixel tall: a flat column still shows.
      if (std::isfinite(col.min)) lines.emplace_back(x, y_of(col.min), x, std::min(y_of(col.max), y_of(col.min) - 1.0));
      if (c > 0 && std::isfinite(cols[c - 1].last) && std::isfinite(col.first)) {
        const ColumnRange& prev = cols[c - 1];
        lines.emplace_back(x_of(static_cast<double>(prev.begin + prev.end) / 2.0), y_of(prev.last), x, y_of(col.first));
      }
    }
  }
  p.setPen(QPen(colour, 1.0));
  p.drawLines(lines.data(), static_cast<int>(lines.size()));
  lines_drawn_ += lines.size();
  p.restore();
}

void SeriesCanvas::draw_scores(QPainter& p, const QRect& r, const ScoresLayer& layer) const {
  const Scores& sc = *layer.s;
  const std::size_t T = sc.length(), C = sc.classes();
  p.fillRect(r, palette().alternateBase());
  p.setPen(palette().text().color());
  const QString title = C == 1 && !sc.labels.empty() ? q(sc.labels[0]) : tr("scores (%1)").arg(C);
  p.drawText(QRect(2, r.top(), kLeft - 8, r.height()), Qt::AlignRight | Qt::AlignVCenter | Qt::TextWordWrap,
             layer.log ? tr("%1\n(probability)").arg(title) : title);
  if (T == 0 || C == 0) return;
  const auto i0 = static_cast<std::size_t>(std::clamp(std::floor(w0_), 0.0, static_cast<double>(T)));
  const auto i1 = static_cast<std::size_t>(std::clamp(std::ceil(w1_), 0.0, static_cast<double>(T)));
  auto norm = [&](double v) {
    const double x = layer.log ? std::exp(v) : v;
    return std::clamp((x - layer.min) / (layer.max - layer.min), 0.0, 1.0);
  };
  const auto columns = static_cast<std::size_t>(r.width());
  p.save();
  p.setClipRect(r);
  const int row_h = std::max(1, r.height() / static_cast<int>(std::min<std::size_t>(C, 16)));
  for (std::size_t c = 0; c < C && c < 16; ++c) {
    const double* data = sc.scores.data() + c;
    // The maximum of each pixel column: a one-sample boundary spike never vanishes.
    std::vector<ColumnRange> cols;
    if (i1 - i0 > columns) cols = minmax_columns(data, C, i0, i1, columns);
    else
      for (std::size_t t = i0; t < i1; ++t) {
        ColumnRange col;
        col.begin = t;
        col.end = t + 1;
        if (std::isfinite(data[t * C])) col.min = col.max = data[t * C];
        cols.push_back(col);
      }
    for (const ColumnRange& col : cols) {
      if (col.begin == col.end) continue;
      const double xa = x_of(static_cast<double>(col.begin)), xb = std::max(xa + 1, x_of(static_cast<double>(col.end)));
      const double v = std::isfinite(col.max) ? norm(col.max) : 0.0;
      if (C == 1) {
        const double h = v * (r.height() - 2);
        p.fillRect(QRectF(xa, r.bottom() - h, xb - xa, h), QColor(200, 60, 60));
      } else {
        p.fillRect(QRectF(xa, r.top() + static_cast<int>(c) * row_h, xb - xa, row_h), colormap(v));
      }
    }
  }
  p.restore();
}

void SeriesCanvas::draw_axis(QPainter& p, const QRect& r) const {
  const double rate = sample_rate();
  const double t0 = signal_ && signal_->regular() ? signal_->start_time : 0.0;
  // Ticks in seconds when a sample rate is known, else in samples.
  const double a = rate > 0 ? t0 + w0_ / rate : w0_, b = rate > 0 ? t0 + w1_ / rate : w1_;
  const double step = tick_step(b - a, std::max(2, r.width() / 90));
  p.setPen(palette().text().color());
  for (double v = std::ceil(a / step) * step; v <= b + 1e-9 * step; v += step) {
    const double t = rate > 0 ? (v - t0) * rate : v;
    const double x = x_of(t);
    p.drawLine(QPointF(x, r.top()), QPointF(x, r.top() + 4));
    p.drawText(QRectF(x - 45, r.top() + 4, 90, r.height() - 4), Qt::AlignHCenter | Qt::AlignTop,
               QString::number(v, 'g', 6));
  }
  p.drawText(QRect(0, r.top() + 4, kLeft - 8, r.height() - 4), Qt::AlignRight | Qt::AlignTop,
             rate > 0 ? tr("time (s)") : tr("sample"));
}

QString SeriesCanvas::readout_at(QPointF pos) const {
  if (length_ == 0) return {};
  const double s = sample_at(pos.x());
  if (s < 0 || s >= static_cast<double>(length_)) return {};
  const auto t = static_cast<std::size_t>(s);
  QString text = tr("sample %1").arg(t);
  if (signal_ && t < signal_->length()) {
    text += tr(", t = %1 s").arg(signal_->time(t), 0, 'g', 8);
    for (std::size_t d = 0; d < signal_->dims(); ++d) {
      const double v = signal_->samples(t, d);
      const QString name = d < signal_->channels.size() ? q(signal_->channels[d]) : QString::number(d);
      text += QStringLiteral(", %1 = %2").arg(name, std::isfinite(v) ? QString::number(v, 'g', 6) : tr("missing"));
    }
  } else if (const double rate = sample_rate(); rate > 0) {
    text += tr(", t = %1 s").arg(static_cast<double>(t) / rate, 0, 'g', 8);
  }
  if (segmentation_) {
    const auto& segs = segmentation_->segments;
    auto it = std::partition_point(segs.begin(), segs.end(), [&](const Segment& g) { return g.end <= t; });
    if (it != segs.end() && it->start <= t) {
      const QString name =
          it->label < segmentation_->labels.size() ? q(segmentation_->labels[it->label]) : QString::number(it->label);
      text += tr("; segment [%1, %2) %3, score %4").arg(it->start).arg(it->end).arg(name).arg(it->score, 0, 'g', 6);
    } else {
      text += tr("; no segment");
    }
  }
  for (const ScoresLayer& l : scores_) {
    if (t >= l.s->length()) continue;
    text += QStringLiteral(";");
    for (std::size_t c = 0; c < l.s->classes() && c < 8; ++c) {
      const double v = l.s->scores(t, c);
      const QString name = c < l.s->labels.size() ? q(l.s->labels[c]) : QString::number(c);
      text += QStringLiteral(" %1 %2").arg(name, QString::number(l.log ? std::exp(v) : v, 'g', 5));
    }
  }
  return text;
}

void SeriesCanvas::wheelEvent(QWheelEvent* e) {
  const int d = e->angleDelta().y();
  if (d == 0) return;
  zoom_by(std::pow(1.25, d / 120.0), e->position().x());
  e->accept();
}

void SeriesCanvas::mousePressEvent(QMouseEvent* e) {
  if (e->button() == Qt::LeftButton) drag_x_ = e->position().x();
}

void SeriesCanvas::mouseMoveEvent(QMouseEvent* e) {
  if (drag_x_) {
    const double dt = (e->position().x() - *drag_x_) / plot_rect().width() * (w1_ - w0_);
    drag_x_ = e->position().x();
    set_window(w0_ - dt, w1_ - dt);
  }
  Q_EMIT hovered(readout_at(e->position()));
}

void SeriesCanvas::mouseReleaseEvent(QMouseEvent*) { drag_x_.reset(); }

void SeriesCanvas::mouseDoubleClickEvent(QMouseEvent*) { fit(); }

// ---- SeriesViewer -----------------------------------------------------------------------

SeriesViewer::SeriesViewer(QWidget* parent)
    : QWidget(parent), canvas_(new SeriesCanvas), info_(new QLabel), readout_(new QLabel) {
  auto* lay = new QVBoxLayout(this);
  lay->setContentsMargins(0, 0, 0, 0);
  auto* bar = new QHBoxLayout;
  auto* fit = new QToolButton;
  fit->setText(tr("Fit"));
  fit->setObjectName(QStringLiteral("fit"));
  fit->setToolTip(tr("Show every sample (or double-click the plot)"));
  connect(fit, &QToolButton::clicked, canvas_, &SeriesCanvas::fit);
  bar->addWidget(fit);
  bar->addWidget(info_, 1);
  info_->setWordWrap(true);
  info_->setTextInteractionFlags(Qt::TextSelectableByMouse);
  lay->addLayout(bar);
  lay->addWidget(canvas_, 1);
  readout_->setTextInteractionFlags(Qt::TextSelectableByMouse);
  readout_->setMinimumHeight(readout_->fontMetrics().height());
  lay->addWidget(readout_);
  connect(canvas_, &SeriesCanvas::hovered, readout_, &QLabel::setText);
}

void SeriesViewer::begin(const QString& label) {
  canvas_->set_keep_window(label == label_);
  label_ = label;
  signal_label_.clear();
  segmentation_label_.clear();
  scores_labels_.clear();
  canvas_->set_signal(nullptr);
  canvas_->set_segmentation(nullptr);
  canvas_->set_scores(nullptr);
}

void SeriesViewer::show_signal(std::shared_ptr<const Signal> s, const QString& label) {
  begin(label);
  add_signal(std::move(s), label);
}
void SeriesViewer::show_segmentation(std::shared_ptr<const Segmentation> s, const QString& label) {
  begin(label);
  add_segmentation(std::move(s), label);
}
void SeriesViewer::show_scores(std::shared_ptr<const Scores> s, const QString& label) {
  begin(label);
  add_scores(std::move(s), label);
}

void SeriesViewer::add_signal(std::shared_ptr<const Signal> s, const QString& label) {
  signal_label_ = label;
  canvas_->set_signal(std::move(s));
  update_info();
}
void SeriesViewer::add_segmentation(std::shared_ptr<const Segmentation> s, const QString& label) {
  segmentation_label_ = label;
  canvas_->set_segmentation(std::move(s));
  update_info();
}
void SeriesViewer::add_scores(std::shared_ptr<const Scores> s, const QString& label) {
  scores_labels_ << label;
  canvas_->add_scores(std::move(s));
  update_info();
}

QString SeriesViewer::info() const { return info_->text(); }

void SeriesViewer::update_info() {
  QStringList parts;
  std::vector<std::size_t> lengths;
  if (const auto& s = canvas_->signal()) {
    parts << tr("signal %1: %2 × %3").arg(signal_label_).arg(s->length()).arg(s->dims());
    lengths.push_back(s->length());
  }
  if (const auto& s = canvas_->segmentation()) {
    parts << tr("segments %1: %2 in %3 samples").arg(segmentation_label_).arg(s->segments.size()).arg(s->length);
    lengths.push_back(s->length);
  }
  const auto scores = canvas_->scores();
  for (std::size_t i = 0; i < scores.size(); ++i) {
    const QString label =
        i < static_cast<std::size_t>(scores_labels_.size()) ? scores_labels_[static_cast<int>(i)] : QString();
    parts << tr("scores %1: %2 × %3%4")
                 .arg(label)
                 .arg(scores[i]->length())
                 .arg(scores[i]->classes())
                 .arg(i < SeriesCanvas::kMaxStrips
                          ? QString()
                          : tr(" (not drawn: %1 strips at most)").arg(SeriesCanvas::kMaxStrips));
    lengths.push_back(scores[i]->length());
  }
  QString text = parts.join(QStringLiteral("; "));
  if (std::adjacent_find(lengths.begin(), lengths.end(), std::not_equal_to<>()) != lengths.end())
    text += tr(" — lengths differ: drawn on one sample axis from 0");
  if (const auto& s = canvas_->signal(); s && s->dims() > kMaxLanes)
    text += tr(" — first %1 of %2 channels shown").arg(kMaxLanes).arg(s->dims());
  info_->setText(text);
}

}  // namespace gemflow::studio
