// The 2D viewers of the new data types on Qt's offscreen platform (no display): the image
// viewer's display transform, 1:1 mapping, zoom and pixel readout; the series viewer's min/max
// decimation (against brute force at T = 10⁶) and what it draws; the circle-packing viewer's
// angle and tangency errors against values worked out by hand.
#include <chrono>
#include <cmath>
#include <iostream>
#include <limits>
#include <numbers>
#include <random>

#include <QApplication>
#include <QDoubleSpinBox>
#include <QMouseEvent>

#include <gtest/gtest.h>

#include <gemflow/types.hpp>

#include <QComboBox>

#include "viewers/data_viewers.hpp"
#include "viewers/image_viewer.hpp"
#include "viewers/packing_geometry.hpp"
#include "viewers/plot_viewer.hpp"
#include "viewers/series_viewer.hpp"

namespace gs = gemflow::studio;
using gemflow::Image;

namespace {

QApplication& app() {
  static int argc = 3;
  static char arg0[] = "viewers_test", arg1[] = "-platform", arg2[] = "offscreen";
  static char* argv[] = {arg0, arg1, arg2, nullptr};
  // Never destroyed: a static QApplication is torn down after Qt's own statics at exit, and
  // the pointing device that the mouse events created then crashes in its destructor.
  static QApplication* a = new QApplication(argc, argv);
  return *a;
}

/// 8-bit image whose pixel (x, y) is (5x, 7y, x + y, 255): every pixel tells where it is.
std::shared_ptr<const Image> coded_image(std::size_t w, std::size_t h) {
  Image im(w, h, Image::Format::RGBA8);
  for (std::size_t y = 0; y < h; ++y)
    for (std::size_t x = 0; x < w; ++x) {
      const std::size_t i = im.index(x, y);
      im.u8[i] = static_cast<std::uint8_t>(5 * x);
      im.u8[i + 1] = static_cast<std::uint8_t>(7 * y);
      im.u8[i + 2] = static_cast<std::uint8_t>(x + y);
      im.u8[i + 3] = 255;
    }
  return std::make_shared<const Image>(std::move(im));
}

void move_mouse(QWidget* w, QPointF p) {
  QMouseEvent e(QEvent::MouseMove, p, w->mapToGlobal(p), Qt::NoButton, Qt::NoButton, Qt::NoModifier);
  QApplication::sendEvent(w, &e);
}

QRgb rgb(int r, int g, int b) { return qRgb(r, g, b); }

}  // namespace

// ---- image -----------------------------------------------------------------------------

TEST(ImageDisplay, LinearFloatIsSrgbEncodedAfterExposureAndGamma) {
  Image im(3, 1, Image::Format::RGBA32F);
  const float px[3][4] = {{0.5f, 0.25f, 0.125f, 1.0f}, {0.25f, 0.125f, 0.0f, 1.0f}, {0.0f, 0.0f, 0.0f, 0.0f}};
  for (std::size_t x = 0; x < 3; ++x)
    for (std::size_t c = 0; c < 4; ++c) im.f32[im.index(x, 0) + c] = px[x][c];
  // sRGB of 0.5, 0.25, 0.125: 187.5, 137.0, 99.1 (IEC 61966-2-1, worked out by hand).
  QImage d = gs::display_image(im, {});
  EXPECT_EQ(d.pixel(0, 0), rgb(188, 137, 99));
  // +1 EV doubles the linear values: pixel 1 then looks like pixel 0 did.
  d = gs::display_image(im, {1.0, 1.0});
  EXPECT_EQ(d.pixel(1, 0), rgb(188, 137, 0));
  EXPECT_EQ(d.pixel(0, 0), rgb(255, 188, 137));  // 1.0 clips
  // Gamma 2: 0.5^(1/2) = 0.7071 → sRGB 218.8.
  d = gs::display_image(im, {0.0, 2.0});
  EXPECT_EQ(qRed(d.pixel(0, 0)), 219);
  // A transparent pixel shows the checkerboard (one of its two greys), whatever the exposure.
  for (double ev : {0.0, 5.0}) {
    const QRgb bg = gs::display_image(im, {ev, 1.0}).pixel(2, 0);
    EXPECT_TRUE(bg == rgb(58, 58, 58) || bg == rgb(84, 84, 84)) << std::hex << bg;
  }
}

TEST(ImageDisplay, EightBitIsShownAsStoredWithStraightAlpha) {
  Image im(2, 1, Image::Format::RGBA8);
  const std::uint8_t px[8] = {10, 200, 30, 255, 200, 100, 0, 128};
  std::copy(px, px + 8, im.u8.begin());
  // The exposure and gamma are for linear data only.
  const QImage d = gs::display_image(im, {3.0, 2.2});
  EXPECT_EQ(d.pixel(0, 0), rgb(10, 200, 30));
  // Half alpha over the checkerboard's dark grey (58; pixel (1, 0) is in square (0, 0)).
  EXPECT_EQ(d.pixel(1, 0),
            rgb((200 * 128 + 58 * 127 + 127) / 255, (100 * 128 + 58 * 127 + 127) / 255, (58 * 127 + 127) / 255));
}

TEST(ImageViewer, OneToOneMapsEachImagePixelToOneScreenPixel) {
  app();
  gs::ImageViewer v;
  v.resize(500, 400);
  v.show();
  QCoreApplication::processEvents();
  auto image = coded_image(61, 37);
  v.set_image(image, QStringLiteral("n.image"));
  gs::ImageCanvas* c = v.canvas();
  c->one_to_one();
  EXPECT_DOUBLE_EQ(c->scale(), 1.0 / c->devicePixelRatioF());
  // The grabbed widget shows pixel (x, y) at offset + (x, y), exactly as stored.
  const QImage shot = c->grab().toImage().convertToFormat(QImage::Format_RGB32);
  ASSERT_EQ(c->devicePixelRatioF(), 1.0) << "the offscreen platform has one device pixel per pixel";
  const QPoint o = c->offset().toPoint();
  EXPECT_EQ(QPointF(o), c->offset()) << "1:1 puts image pixels on whole screen pixels";
  for (std::size_t y : {0u, 1u, 18u, 36u})
    for (std::size_t x : {0u, 1u, 30u, 60u}) {
      const QPoint p = o + QPoint(static_cast<int>(x), static_cast<int>(y));
      ASSERT_TRUE(shot.rect().contains(p));
      EXPECT_EQ(shot.pixel(p), rgb(static_cast<int>(5 * x), static_cast<int>(7 * y), static_cast<int>(x + y)))
          << x << ", " << y;
      const auto at = c->pixel_at(QPointF(p) + QPointF(0.5, 0.5));
      ASSERT_TRUE(at);
      EXPECT_EQ((*at)[0], x);
      EXPECT_EQ((*at)[1], y);
    }
  // Neighbouring pixels are one screen pixel apart.
  EXPECT_DOUBLE_EQ(c->to_widget({11, 5}).x() - c->to_widget({10, 5}).x(), 1.0);
  EXPECT_FALSE(c->pixel_at(c->to_widget({-0.5, 3})));
  EXPECT_FALSE(c->pixel_at(c->to_widget({61.5, 3})));
}

TEST(ImageViewer, ReadoutGivesTheStoredValuesUnderTheCursor) {
  app();
  gs::ImageViewer v;
  v.resize(500, 400);
  v.show();
  QCoreApplication::processEvents();
  v.set_image(coded_image(40, 30), QStringLiteral("n.image"));
  gs::ImageCanvas* c = v.canvas();
  c->zoom_by(3.0, QPointF(100, 100));  // any zoom: the readout follows the mapping
  move_mouse(c, c->to_widget({7.5, 4.5}));
  EXPECT_EQ(v.readout(), QStringLiteral("x 7, y 4: R 35 G 28 B 11 A 255"));
  // Linear float values are read out as stored, whatever the display transform.
  Image f(4, 3, Image::Format::RGBA32F);
  const std::size_t i = f.index(2, 1);
  f.f32[i] = 0.5f;
  f.f32[i + 1] = 2.75f;  // HDR: above 1 before tone mapping
  f.f32[i + 2] = 0.125f;
  f.f32[i + 3] = 1.0f;
  v.set_image(std::make_shared<const Image>(std::move(f)), QStringLiteral("render.image"));
  v.exposure()->setValue(-2.0);
  move_mouse(c, c->to_widget({2.2, 1.9}));
  EXPECT_EQ(v.readout(), QStringLiteral("x 2, y 1: R 0.5 G 2.75 B 0.125 A 1"));
  const auto values = v.readout_values();
  ASSERT_TRUE(values);
  EXPECT_DOUBLE_EQ((*values)[1], 2.75);
  // Off the image: no readout.
  move_mouse(c, c->to_widget({-1, 1}));
  EXPECT_EQ(v.readout(), QString());
}

TEST(ImageViewer, WheelZoomKeepsThePointUnderTheCursorAndRefreshKeepsTheView) {
  app();
  gs::ImageViewer v;
  v.resize(600, 400);
  v.show();
  QCoreApplication::processEvents();
  v.set_image(coded_image(300, 100), QStringLiteral("n.image"));
  gs::ImageCanvas* c = v.canvas();
  // Fit: the whole image, centred, touching two sides.
  const QPointF a = c->to_widget({0, 0}), b = c->to_widget({300, 100});
  EXPECT_GE(a.x(), -1e-9);
  EXPECT_GE(a.y(), -1e-9);
  EXPECT_LE(b.x(), c->width() + 1e-9);
  EXPECT_LE(b.y(), c->height() + 1e-9);
  EXPECT_NEAR(a.x() + b.x(), c->width(), 1e-9);
  EXPECT_NEAR(a.y() + b.y(), c->height(), 1e-9);
  EXPECT_TRUE(std::abs(b.x() - a.x() - c->width()) < 1e-9 || std::abs(b.y() - a.y() - c->height()) < 1e-9);
  const QPointF cursor(123, 77);
  const QPointF before = (cursor - c->offset()) / c->scale();
  QWheelEvent wheel(cursor, c->mapToGlobal(cursor), QPoint(), QPoint(0, 240), Qt::NoButton, Qt::NoModifier,
                    Qt::NoScrollPhase, false);
  const double s0 = c->scale();
  QApplication::sendEvent(c, &wheel);
  EXPECT_NEAR(c->scale(), s0 * 1.25 * 1.25, 1e-12);
  const QPointF after = (cursor - c->offset()) / c->scale();
  EXPECT_NEAR(after.x(), before.x(), 1e-9);
  EXPECT_NEAR(after.y(), before.y(), 1e-9);
  // A new value of the same output and size (a render refining) keeps zoom and pan...
  const double s1 = c->scale();
  const QPointF o1 = c->offset();
  v.set_image(coded_image(300, 100), QStringLiteral("n.image"));
  EXPECT_EQ(c->scale(), s1);
  EXPECT_EQ(c->offset(), o1);
  // ...another output, or another size, is fitted.
  v.set_image(coded_image(300, 100), QStringLiteral("other.image"));
  EXPECT_NE(c->scale(), s1);
}

TEST(ImageViewer, LargeImagesAreConvertedOffTheGuiThread) {
  app();
  gs::ImageViewer v;
  v.resize(500, 400);
  v.show();
  QCoreApplication::processEvents();
  // 1100 × 1000 linear pixels (above kSyncPixels), a 0.5 grey: sRGB 188.
  auto im = std::make_shared<Image>(1100, 1000, Image::Format::RGBA32F);
  ASSERT_GT(im->pixels(), gs::ImageCanvas::kSyncPixels);
  for (std::size_t i = 0; i < im->f32.size(); i += 4) {
    im->f32[i] = im->f32[i + 1] = im->f32[i + 2] = 0.5f;
    im->f32[i + 3] = 1.0f;
  }
  gs::ImageCanvas* c = v.canvas();
  v.set_image(im, QStringLiteral("big.image"));
  EXPECT_TRUE(c->converting());
  // The exposure changes while the first conversion runs: the last request wins.
  v.exposure()->setValue(1.0);
  const auto t0 = std::chrono::steady_clock::now();
  while (c->converting() && std::chrono::steady_clock::now() - t0 < std::chrono::seconds(20))
    QCoreApplication::processEvents();
  ASSERT_FALSE(c->converting());
  ASSERT_EQ(c->picture().size(), QSize(1100, 1000));
  EXPECT_EQ(c->picture().pixel(700, 600), rgb(255, 255, 255)) << "0.5 at +1 EV is 1.0";
  v.exposure()->setValue(0.0);
  while (c->converting() && std::chrono::steady_clock::now() - t0 < std::chrono::seconds(20))
    QCoreApplication::processEvents();
  EXPECT_EQ(c->picture().pixel(700, 600), rgb(188, 188, 188));
}

// ---- series ----------------------------------------------------------------------------

TEST(SeriesDecimation, ColumnsPartitionTheSamplesAndKeepEachColumnsMinAndMax) {
  const std::size_t T = 1'000'000, D = 2;
  std::vector<double> data(T * D);
  std::mt19937 rng(11);
  std::normal_distribution<double> noise(0.0, 1.0);
  for (std::size_t t = 0; t < T; ++t) {
    data[t * D] = noise(rng);
    data[t * D + 1] = std::sin(static_cast<double>(t) * 1e-4) + 0.01 * noise(rng);
  }
  // Gaps: a long one (whole columns missing), single missing samples, and spikes.
  for (std::size_t t = 400'000; t < 420'000; ++t) data[t * D] = std::numeric_limits<double>::quiet_NaN();
  for (std::size_t t = 3; t < T; t += 9973) data[t * D] = std::numeric_limits<double>::quiet_NaN();
  data[777'777 * D] = 50.0;
  data[123'456 * D] = -60.0;
  for (std::size_t channel : {0u, 1u})
    for (auto [begin, end, columns] : {std::tuple<std::size_t, std::size_t, std::size_t>{0, T, 997},
                                       {12'345, 987'654, 1600},
                                       {100, 1'100, 1000},
                                       {5, 9, 3}}) {
      const auto t0 = std::chrono::steady_clock::now();
      const auto cols = gs::minmax_columns(data.data() + channel, D, begin, end, columns);
      const double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
      if (end - begin == T) std::cout << "minmax_columns over 10^6 samples: " << ms << " ms\n";
      ASSERT_EQ(cols.size(), columns);
      EXPECT_EQ(cols.front().begin, begin);
      EXPECT_EQ(cols.back().end, end);
      const std::size_t n = end - begin;
      for (std::size_t c = 0; c < columns; ++c) {
        const auto& col = cols[c];
        if (c + 1 < columns) {
          EXPECT_EQ(col.end, cols[c + 1].begin);
        }
        // Equal widths to one sample: no column hides more samples than its neighbours.
        EXPECT_LE(col.end - col.begin, n / columns + 1);
        EXPECT_GE(col.end - col.begin, n / columns);
        double lo = std::numeric_limits<double>::infinity(), hi = -lo;
        for (std::size_t t = col.begin; t < col.end; ++t) {
          const double v = data[t * D + channel];
          if (std::isfinite(v)) lo = std::min(lo, v), hi = std::max(hi, v);
        }
        if (lo > hi) {
          EXPECT_TRUE(std::isnan(col.min) && std::isnan(col.max)) << "column " << c << " has no finite sample";
        } else {
          ASSERT_EQ(col.min, lo) << "column " << c;
          ASSERT_EQ(col.max, hi) << "column " << c;
        }
        if (col.end > col.begin) {
          const double first = data[col.begin * D + channel], last = data[(col.end - 1) * D + channel];
          EXPECT_TRUE(first == col.first || (std::isnan(first) && std::isnan(col.first)));
          EXPECT_TRUE(last == col.last || (std::isnan(last) && std::isnan(col.last)));
        }
      }
    }
}

TEST(SeriesViewer, AMillionSamplesDrawAboutOneLinePerColumnAndKeepTheSpikes) {
  app();
  const std::size_t T = 1'000'000;
  gemflow::Signal s;
  s.samples = gemflow::Matrix<double>(T, 1);
  s.sample_rate = 1000.0;
  s.channels = {"flow"};
  s.units = {"m³/s"};
  std::mt19937 rng(3);
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  for (std::size_t t = 0; t < T; ++t) s.samples(t, 0) = u(rng);
  s.samples(654'321, 0) = 10.0;  // one sample; the plot's range is [-1, 10]
  for (std::size_t t = 200'000; t < 300'000; ++t) s.samples(t, 0) = std::numeric_limits<double>::quiet_NaN();
  gemflow::Segmentation seg;
  seg.length = T;
  seg.labels = {"low", "high"};
  for (std::size_t k = 0; k < 100; ++k) seg.segments.push_back({k * 10'000, (k + 1) * 10'000, k % 2, 0.0});

  gs::SeriesViewer v;
  v.resize(900, 300);
  v.show();
  QCoreApplication::processEvents();
  v.show_segmentation(std::make_shared<const gemflow::Segmentation>(seg), QStringLiteral("decode.segments"));
  v.add_signal(std::make_shared<const gemflow::Signal>(std::move(s)), QStringLiteral("read.signal"));
  gs::SeriesCanvas* c = v.canvas();
  EXPECT_EQ(c->length(), T);
  const auto t0 = std::chrono::steady_clock::now();
  const QImage shot = c->grab().toImage().convertToFormat(QImage::Format_RGB32);
  const double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  std::cout << "paint of 10^6 samples: " << ms << " ms, " << c->lines_drawn() << " lines\n";
  const QRect plot = c->plot_rect();
  // A vertical line per column and a joining line per column: never one per sample.
  EXPECT_LE(c->lines_drawn(), 2u * static_cast<std::size_t>(plot.width()));
  EXPECT_GT(c->lines_drawn(), static_cast<std::size_t>(plot.width()) / 2);
  // The single-sample spike reaches the top of its pixel column; neighbouring columns don't.
  const int spike_x = static_cast<int>(std::lround(plot.left() + 654'321.5 / T * plot.width()));
  auto darkest_above = [&](int x, int y_max) {
    int best = 255 * 3;
    for (int dx = -1; dx <= 1; ++dx)
      for (int y = plot.top(); y < y_max; ++y) {
        const QRgb p = shot.pixel(x + dx, y);
        best = std::min(best, qRed(p) + qGreen(p) + qBlue(p));
      }
    return best;
  };
  const int upper = plot.top() + plot.height() / 3;  // values above ~6.5
  EXPECT_LT(darkest_above(spike_x, upper), 200) << "the spike at sample 654321 is not drawn";
  EXPECT_GT(darkest_above(spike_x + 40, upper), 300) << "a column without spike reaches the top";
  // The gap [200000, 300000) draws no line: its middle column is only background and band.
  const int gap_x = static_cast<int>(plot.left() + 0.25 * plot.width());
  EXPECT_GT(darkest_above(gap_x, plot.bottom() - 2), 300);

  // Zoom: the window shrinks around the cursor's sample, and the readout names the segment.
  const double x = plot.left() + 0.5 * plot.width();
  const double s_mid = c->sample_at(x);
  c->zoom_by(100.0, x);
  const auto [w0, w1] = c->window();
  EXPECT_NEAR(w1 - w0, T / 100.0, 1e-6);
  EXPECT_NEAR(c->sample_at(x), s_mid, 1e-6);
  const QString r = c->readout_at(QPointF(x, plot.center().y()));
  EXPECT_TRUE(r.startsWith(QStringLiteral("sample 500000, t = 500 s, flow = "))) << r.toStdString();
  EXPECT_NE(r.indexOf(QStringLiteral("segment [500000, 510000) low")), -1) << r.toStdString();
  // Zoomed far in: the polyline itself.
  c->set_window(1000, 1100);
  (void)c->grab();
  EXPECT_EQ(c->lines_drawn(), 101u);  // samples 999..1100, one line between each pair
}

TEST(SeriesViewer, PosteriorStripAndLengthMismatchAreReported) {
  app();
  gs::SeriesViewer v;
  v.resize(700, 300);
  v.show();
  gemflow::Scores post;
  post.scores = gemflow::Matrix<double>(1000, 1, -std::numeric_limits<double>::infinity());
  post.scores(500, 0) = std::log(0.9);
  post.labels = {"boundary"};
  gemflow::Segmentation seg;
  seg.length = 1200;
  seg.labels = {"a"};
  seg.segments = {{0, 1200, 0, 1.0}};
  v.show_scores(std::make_shared<const gemflow::Scores>(post), QStringLiteral("marg.boundary"));
  v.add_segmentation(std::make_shared<const gemflow::Segmentation>(seg), QStringLiteral("decode.segments"));
  EXPECT_EQ(v.canvas()->length(), 1200u);
  EXPECT_NE(v.info().indexOf(QStringLiteral("lengths differ")), -1) << v.info().toStdString();
  // Log-probabilities are shown as probabilities.
  const QRect plot = v.canvas()->plot_rect();
  const double x = v.canvas()->plot_rect().left() + 500.5 / 1200.0 * plot.width();
  const QString r = v.canvas()->readout_at(QPointF(x, plot.center().y()));
  EXPECT_NE(r.indexOf(QStringLiteral("boundary 0.9")), -1) << r.toStdString();
}

// ---- circle packing quantities ----------------------------------------------------------

namespace {
/// The hexagonal flower: circle 0 (radius r0) at the origin, six unit circles around it at
/// distance r0 + 1, faces (0, k, k+1) counter-clockwise; the petals are the boundary.
gemflow::CirclePacking flower(double r0) {
  gemflow::CirclePacking p;
  p.radii = {r0};
  p.centres = {{0.0, 0.0}};
  p.boundary = {0};
  for (int k = 0; k < 6; ++k) {
    const double a = k * std::numbers::pi / 3;
    p.radii.push_back(1.0);
    p.centres.push_back({(r0 + 1) * std::cos(a), (r0 + 1) * std::sin(a)});
    p.boundary.push_back(1);
    p.faces.push_back({0, static_cast<std::uint32_t>(1 + k), static_cast<std::uint32_t>(1 + (k + 1) % 6)});
  }
  return p;
}
}  // namespace

TEST(PackingGeometry, AngleSumsOfTheHexagonalFlower) {
  // Six equal neighbours of an equal circle close up exactly: θ = 6 · 60°.
  auto p = flower(1.0);
  auto err = gs::angle_errors(p);
  EXPECT_NEAR(err[0], 0.0, 1e-14);
  for (std::size_t k = 1; k <= 6; ++k) EXPECT_TRUE(std::isnan(err[k])) << "boundary circle " << k << " has no target";
  // A bigger centre: each angle is 2·asin(1 / (r0 + 1)) (isosceles triangle r0+1, r0+1, 2).
  p = flower(1.1);
  err = gs::angle_errors(p);
  EXPECT_NEAR(err[0], std::abs(6 * 2 * std::asin(1 / 2.1) - 2 * std::numbers::pi), 1e-13);
  EXPECT_GT(err[0], 0.1);
  const auto sums = gs::angle_sums(p.radii, p.faces);
  // A petal has two faces: its angles are those of the triangle's other corners.
  const double petal = 2 * std::acos((2.1 * 2.1 + 4 - 2.1 * 2.1) / (2 * 2.1 * 2));
  EXPECT_NEAR(sums[1], petal, 1e-13);
}

TEST(PackingGeometry, TangencyErrorsPerCircle) {
  auto p = flower(1.0);
  for (double e : gs::tangency_errors(p)) EXPECT_NEAR(e, 0.0, 1e-14);
  // Petal 1 moved 0.1 outward: its edge to the centre is 0.1 too long for r + r = 2.
  p.centres[1][0] += 0.1;
  const auto e = gs::tangency_errors(p);
  EXPECT_NEAR(e[0], 0.05, 1e-14);
  EXPECT_GE(e[1], 0.05);
  EXPECT_NEAR(e[4], 0.0, 1e-14);  // the opposite petal's edges did not change
  EXPECT_NEAR(*std::max_element(e.begin(), e.end()), p.tangency_error(), 1e-15);
}

// The mesh viewer's UVs are the mesh's own (TriMesh::uv): a mesh read with texture coordinates or
// flattened by circlepack.flatten shows its UV layout beside the surface.
TEST(MeshUvs, AreTheMeshsTextureCoordinates) {
  gemflow::TriMesh m;
  m.vertices = {{0, 0, 0}, {1, 0, 0}, {0, 1, 1}};
  m.faces = {{0, 1, 2}};
  EXPECT_EQ(gs::mesh_uvs(m), nullptr);
  m.uv = {{0, 0}, {1, 0}, {0, 0.5}};
  ASSERT_NE(gs::mesh_uvs(m), nullptr);
  EXPECT_EQ(gs::mesh_uvs(m), &m.uv);
  m.uv.pop_back();  // not one per vertex (validate() refuses it): no UVs, not a misdrawn layout
  EXPECT_EQ(gs::mesh_uvs(m), nullptr);
}

// ---- heatmap: scales, range, zoom, colour bar, aspect; plots; PNG of every viewer ----------

TEST(Heatmap, LogAndSymmetricScalesAndAGivenRange) {
  app();
  gs::HeatmapCanvas c;
  c.resize(400, 300);
  // 1, 10, 100, 1000 and a non-positive value.
  c.set_data(1, 5, {1, 10, 100, 1000, -5}, {});
  EXPECT_NEAR(c.scale_position(1), 6.0 / 1005.0, 1e-12);
  c.set_scale(gs::HeatmapCanvas::Scale::Log);  // log over [1, 1000]: decades evenly spaced
  EXPECT_NEAR(c.scale_position(10), 1.0 / 3, 1e-12);
  EXPECT_NEAR(c.scale_position(100), 2.0 / 3, 1e-12);
  EXPECT_TRUE(std::isnan(c.scale_position(-5)));  // no colour: grey
  EXPECT_EQ(c.image().pixel(4, 0), qRgb(128, 128, 128));
  EXPECT_EQ(c.tick_labels(), (QStringList{"1", "10", "100", "1000"}));
  c.set_scale(gs::HeatmapCanvas::Scale::Symmetric);  // symmetric: 0 in the middle, white-ish
  EXPECT_DOUBLE_EQ(c.scale_position(0), 0.5);
  EXPECT_DOUBLE_EQ(c.colour_range().first, -1000);
  EXPECT_EQ(gs::diverging_colormap(0.5).rgb(), QColor::fromRgbF(0.865f, 0.865f, 0.865f).rgb());
  c.set_scale(gs::HeatmapCanvas::Scale::Linear);
  c.set_range(0, 10);  // values above the range saturate
  EXPECT_DOUBLE_EQ(c.scale_position(5), 0.5);
  EXPECT_DOUBLE_EQ(c.scale_position(1000), 1.0);
  EXPECT_EQ(c.image().pixel(3, 0), gs::colormap(1.0).rgb());
  c.set_range(0, 0);  // auto again
  EXPECT_DOUBLE_EQ(c.colour_range().second, 1000);
}

TEST(Heatmap, ColourBarLabelsAlwaysFitAndTallMatricesUseTheRoom) {
  app();
  gs::HeatmapCanvas c;
  c.resize(300, 400);
  std::vector<double> v(1000 * 3);
  for (std::size_t k = 0; k < v.size(); ++k) v[k] = -123456.789 + static_cast<double>(k) * 1000.5;
  c.set_data(1000, 3, v, {});
  const QFontMetrics fm(c.font());
  const QStringList labels = c.tick_labels();
  ASSERT_GE(labels.size(), 3);
  for (const QString& s : labels)
    EXPECT_LE(c.bar_rect().right() + 6 + fm.horizontalAdvance(s), c.width()) << s.toStdString();
  // 1000 × 3 with square cells would be 1 px wide: it gets at least half the width instead.
  const QRect r = c.plot_rect();
  EXPECT_GE(r.width(), (c.width() - (c.width() - c.bar_rect().left()) - 12) / 2 - 1);
  EXPECT_GE(r.height(), c.height() - 12);
  EXPECT_LT(r.right(), c.bar_rect().left());
  // A square matrix keeps square cells.
  c.set_data(10, 10, std::vector<double>(100, 1.0), {});
  EXPECT_EQ(c.plot_rect().width(), c.plot_rect().height());
}

TEST(Heatmap, WheelZoomsAroundTheCursorAndDragPans) {
  app();
  gs::HeatmapCanvas c;
  c.resize(460, 400);
  std::vector<double> v(100 * 100);
  for (std::size_t k = 0; k < v.size(); ++k) v[k] = static_cast<double>(k);
  c.set_data(100, 100, v, {});
  const QRect r = c.plot_rect();
  const QPointF at(r.left() + r.width() * 0.25, r.top() + r.height() * 0.75);  // cell (75, 25)
  auto cell_at = [&](QPointF p) {
    const QRectF vis = c.visible_cells();
    return QPointF(vis.left() + (p.x() - r.left()) / r.width() * vis.width(),
                   vis.top() + (p.y() - r.top()) / r.height() * vis.height());
  };
  const QPointF before = cell_at(at);
  QWheelEvent e(at, c.mapToGlobal(at), QPoint(), QPoint(0, 480), Qt::NoButton, Qt::NoModifier, Qt::NoScrollPhase,
                false);
  QApplication::sendEvent(&c, &e);
  EXPECT_GT(c.zoom(), 2.0);
  const QPointF after = cell_at(at);
  EXPECT_NEAR(after.x(), before.x(), 0.01);
  EXPECT_NEAR(after.y(), before.y(), 0.01);
  // Drag right by a quarter of the plot: the view moves left by a quarter of what it shows.
  const QRectF vis = c.visible_cells();
  QMouseEvent press(QEvent::MouseButtonPress, at, c.mapToGlobal(at), Qt::LeftButton, Qt::LeftButton, Qt::NoModifier);
  QApplication::sendEvent(&c, &press);
  const QPointF to = at + QPointF(r.width() / 4.0, 0);
  QMouseEvent move(QEvent::MouseMove, to, c.mapToGlobal(to), Qt::NoButton, Qt::LeftButton, Qt::NoModifier);
  QApplication::sendEvent(&c, &move);
  EXPECT_NEAR(c.visible_cells().left(), vis.left() - vis.width() / 4, 0.01);
  c.reset_view();
  EXPECT_EQ(c.visible_cells(), QRectF(0, 0, 100, 100));
}

TEST(Plot, NiceTicksAndTheMappingRoundTrip) {
  EXPECT_EQ(gs::nice_ticks(0, 10, 5), (std::vector<double>{0, 2, 4, 6, 8, 10}));
  const auto t = gs::nice_ticks(-0.3, 0.3, 6);
  const std::vector<double> want{-0.3, -0.2, -0.1, 0, 0.1, 0.2, 0.3};
  ASSERT_EQ(t.size(), want.size());
  for (std::size_t i = 0; i < t.size(); ++i) EXPECT_NEAR(t[i], want[i], 1e-15);
  app();
  gs::PlotCanvas c;
  c.resize(500, 300);
  c.set_data("iteration", {}, {{"energy", {5, 4, 3.5, NAN, 3.1}}});
  EXPECT_DOUBLE_EQ(c.data_range().left(), 0);
  EXPECT_DOUBLE_EQ(c.data_range().right(), 4);
  const QPointF p = c.to_widget(2, 3.5);
  EXPECT_NEAR(c.to_data(p).x(), 2, 1e-9);
  EXPECT_NEAR(c.to_data(p).y(), 3.5, 1e-9);
  EXPECT_TRUE(c.plot_rect().contains(p.toPoint()));
  // Wheel zoom in around a point keeps it; double-click shows everything again.
  QWheelEvent e(p, c.mapToGlobal(p), QPoint(), QPoint(0, 240), Qt::NoButton, Qt::NoModifier, Qt::NoScrollPhase, false);
  QApplication::sendEvent(&c, &e);
  EXPECT_LT(c.view().width(), c.data_range().width() * 0.8);
  EXPECT_NEAR(c.to_data(p).x(), 2, 1e-9);
  c.reset_view();
  EXPECT_EQ(c.view(), c.data_range());
  // CSV of what is plotted: the gap stays empty.
  EXPECT_EQ(c.csv(), "iteration,energy\n0,5\n1,4\n2,3.5\n3,\n4,3.1000000000000001\n");
}

TEST(Plot, TablesPlotTheirNumericColumnsAgainstTheChosenX) {
  app();
  gemflow::Table t;
  t.columns = {"step", "name", "violation", "rmsd"};
  t.rows = {{std::int64_t{1}, std::string("a"), 0.5, 2.0}, {std::int64_t{2}, std::string("b"), 0.25, 1.5}};
  gs::TableViewer tv;
  tv.resize(600, 400);
  tv.set_table(t, "t");
  gs::PlotViewer* pv = tv.plot();
  ASSERT_NE(pv, nullptr);
  // x: row, step, violation, rmsd (the text column is not numeric).
  ASSERT_EQ(pv->x_choice()->count(), 4);
  EXPECT_EQ(pv->canvas()->csv(), "row,step,violation,rmsd\n0,1,0.5,2\n1,2,0.25,1.5\n");
  pv->x_choice()->setCurrentIndex(1);  // step
  EXPECT_EQ(pv->canvas()->csv(), "step,violation,rmsd\n1,0.5,2\n2,0.25,1.5\n");
  // A vector matrix in the heatmap viewer is a line plot.
  gs::HeatmapViewer hv;
  hv.resize(600, 400);
  hv.set_matrix(1, 4, {1, 2, 4, 8}, "v");
  EXPECT_TRUE(hv.showing_plot());
  EXPECT_EQ(hv.plot()->canvas()->csv(), "index,v (4 values)\n0,1\n1,2\n2,4\n3,8\n");
  hv.set_matrix(2, 2, {1, 2, 3, 4}, "m");
  EXPECT_FALSE(hv.showing_plot());
}
