// The viewer registry: which viewer each type gets, and that a registration shows the value it
// is given. Widgets are made on Qt's offscreen platform: no display needed.
#include <QApplication>
#include <QLabel>

#include <gtest/gtest.h>

#include <gemflow/types.hpp>

#include "viewers/viewer_registry.hpp"

namespace gs = gemflow::studio;
using gemflow::DataType;

namespace {

std::vector<std::string> ids(const std::vector<const gs::ViewerRegistry::Viewer*>& viewers) {
  std::vector<std::string> out;
  for (const auto* v : viewers) out.push_back(v->id);
  return out;
}

QApplication& app() {
  static int argc = 3;
  static char arg0[] = "viewer_registry_test", arg1[] = "-platform", arg2[] = "offscreen";
  static char* argv[] = {arg0, arg1, arg2, nullptr};
  static QApplication a(argc, argv);
  return a;
}

}  // namespace

TEST(ViewerRegistry, BuiltinViewersByDataTypeName) {
  const gs::ViewerRegistry& r = gs::builtin_viewers();
  using V = std::vector<std::string>;
  EXPECT_EQ(ids(r.viewers_for(DataType<gemflow::Structure>::name)), V{"structure"});
  EXPECT_EQ(ids(r.viewers_for(DataType<gemflow::Matrix<double>>::name)), V{"heatmap"});
  EXPECT_EQ(ids(r.viewers_for(DataType<gemflow::Matrix<float>>::name)), V{"heatmap"});
  EXPECT_EQ(ids(r.viewers_for(DataType<gemflow::DistanceBounds>::name)), V{"heatmap"});
  EXPECT_EQ(ids(r.viewers_for(DataType<gemflow::Table>::name)), V{"table"});
  EXPECT_EQ(ids(r.viewers_for(DataType<gemflow::Image>::name)), V{"image"});
  EXPECT_EQ(ids(r.viewers_for(DataType<gemflow::Signal>::name)), V{"series"});
  EXPECT_EQ(ids(r.viewers_for(DataType<gemflow::Segmentation>::name)), V{"series"});
  EXPECT_EQ(ids(r.viewers_for(DataType<gemflow::Scores>::name)), V{"series"});
  // No viewer: the dock shows the summary.
  EXPECT_TRUE(r.viewers_for(DataType<gemflow::RestraintSet>::name).empty());
  EXPECT_TRUE(r.viewers_for("NoSuchType").empty());
  // One widget per id: the three heatmap registrations share one.
  EXPECT_EQ(ids(r.viewers_for(DataType<gemflow::CirclePacking>::name)), V{"packing"});
  EXPECT_EQ(ids(r.viewers_for(DataType<gemflow::TriMesh>::name)), V{"mesh"});
  EXPECT_EQ(ids(r.distinct_viewers()), (V{"structure", "heatmap", "table", "image", "series", "packing", "mesh"}));
}

TEST(ViewerRegistry, SeriesCompanions) {
  const gs::ViewerRegistry& r = gs::builtin_viewers();
  using Near = gs::ViewerRegistry::Near;
  std::vector<std::pair<std::string, Near>> got;
  for (const auto* c : r.companions_of("series")) got.emplace_back(c->type, c->near);
  // The signal is found upstream of a segmentation or posterior; segmentations and scores
  // join only when selected (an upstream Scores is usually emissions, not a posterior).
  EXPECT_EQ(got, (std::vector<std::pair<std::string, Near>>{
                     {"Signal", Near::Upstream}, {"Segmentation", Near::Selection}, {"Scores", Near::Selection}}));
  // Only Scores join a value of their own type (a second posterior strip).
  std::vector<bool> own_type;
  for (const auto* c : r.companions_of("series")) own_type.push_back(c->own_type);
  EXPECT_EQ(own_type, (std::vector<bool>{false, false, true}));
  // A mesh's flattening (another TriMesh) is found upstream or in the selection.
  const auto mesh = r.companions_of("mesh");
  ASSERT_EQ(mesh.size(), 1u);
  EXPECT_EQ(mesh.front()->type, "TriMesh");
  EXPECT_EQ(mesh.front()->near, Near::Upstream);
  EXPECT_TRUE(mesh.front()->own_type);
  EXPECT_TRUE(r.companions_of("heatmap").empty());
  gs::ViewerRegistry own;
  auto show = [](QWidget&, const gemflow::Value&, const QString&) {};
  EXPECT_THROW(own.add_companion("Signal", "nothing", Near::Upstream, show), gemflow::Error);  // no such viewer
  own.add(
      "Image", "picture", [] { return static_cast<QWidget*>(nullptr); }, show);
  own.add_companion("Signal", "picture", Near::Selection, show);
  EXPECT_THROW(own.add_companion("Signal", "picture", Near::Upstream, show), gemflow::Error);  // twice
  EXPECT_THROW(own.add_companion("", "picture", Near::Upstream, show), gemflow::Error);
}

TEST(ViewerRegistry, TypedRegistrationShowsTheValue) {
  app();
  gs::ViewerRegistry r;
  r.add<gemflow::Table, QLabel>("rows",
                                [](QLabel& w, const std::shared_ptr<const gemflow::Table>& t, const QString& label) {
                                  w.setText(QStringLiteral("%1: %2 rows").arg(label).arg(t->rows.size()));
                                });
  const auto found = r.viewers_for("Table");
  ASSERT_EQ(found.size(), 1u);
  std::unique_ptr<QWidget> w(found.front()->make());
  auto* label = qobject_cast<QLabel*>(w.get());
  ASSERT_NE(label, nullptr);
  gemflow::Table t;
  t.columns = {"x"};
  t.rows = {{1.0}, {2.0}, {3.0}};
  found.front()->show(*w, gemflow::Value::make(std::move(t)), QStringLiteral("n.out"));
  EXPECT_EQ(label->text(), QStringLiteral("n.out: 3 rows"));
  // A value of another type is refused by Value::as, not read as a Table.
  EXPECT_THROW(found.front()->show(*w, gemflow::Value::make(gemflow::Matrix<double>(2, 2)), {}), gemflow::Error);
}

TEST(ViewerRegistry, RefusesDuplicatesAndIncompleteRegistrations) {
  gs::ViewerRegistry r;
  auto make = [] { return static_cast<QWidget*>(nullptr); };
  auto show = [](QWidget&, const gemflow::Value&, const QString&) {};
  r.add("Image", "picture", make, show);
  r.add("Image", "histogram", make, show);  // a second viewer for one type
  EXPECT_EQ(ids(r.viewers_for("Image")), (std::vector<std::string>{"picture", "histogram"}));
  EXPECT_THROW(r.add("Image", "picture", make, show), gemflow::Error);
  EXPECT_THROW(r.add("", "picture", make, show), gemflow::Error);
  EXPECT_THROW(r.add("Image", "", make, show), gemflow::Error);
  EXPECT_THROW(r.add("Image", "x", nullptr, show), gemflow::Error);
  EXPECT_THROW(r.add("Image", "x", make, nullptr), gemflow::Error);
  EXPECT_EQ(r.viewers_for("Image").size(), 2u);
}
