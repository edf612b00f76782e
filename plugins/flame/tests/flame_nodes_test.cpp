// The flame nodes without the executor: flame.read (index, name, strict), flame.list,
// flame.render (device cpu, previews, progress, the seed), flame.render_all.
#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>
#include <fstream>

#include <gemflow/device.hpp>
#include <gemflow/node.hpp>
#include <gemflow/registry.hpp>
#include <gemflow/testing.hpp>
#include <gemflow/types.hpp>

#include "flame_test_support.hpp"
#include "flame_types.hpp"
#include "register.hpp"

namespace gemflow::flame {
namespace {

using gemflow::testing::error_of;
using gemflow::testing::RecordingContext;

Registry& registry() {
  static Registry reg;
  static bool once = [] {
    PluginRegistrar r(reg, "flame-test");
    register_flame_nodes(r);
    return true;
  }();
  (void)once;
  return reg;
}

std::unique_ptr<Node> make(const std::string& id) { return gemflow::testing::make_node(registry(), id); }

std::unique_ptr<Node> read(const std::string& file, std::int64_t index = 0, const std::string& name = "") {
  auto n = make("flame.read");
  n->set_param("path", file);
  n->set_param("index", index);
  n->set_param("name", name);
  return n;
}

TEST(FlameNodes, ReadByIndexAndNameAndList) {
  auto n = read(flame::testing::sample("gemflow_samples.flame"), 1);
  RecordingContext ctx;
  ASSERT_EQ(error_of(*n, ctx), "(no error)");
  EXPECT_EQ(n->output("flame").as<Flame>()->name, "xaos_final");
  const auto set = n->output("flames").as<FlameSet>();
  EXPECT_EQ(set->flames.size(), 3u);

  auto byname = read(flame::testing::sample("gemflow_samples.flame"), 0, "parametric");
  ASSERT_EQ(error_of(*byname, ctx), "(no error)");
  EXPECT_EQ(byname->output("flame").as<Flame>()->index, 2u);

  auto missing = read(flame::testing::sample("gemflow_samples.flame"), 0, "nope");
  EXPECT_CONTAINS(error_of(*missing, ctx), "no flame named 'nope'");
  auto beyond = read(flame::testing::sample("gemflow_samples.flame"), 3);
  EXPECT_CONTAINS(error_of(*beyond, ctx), "parameter 'index' = 3");

  auto list = make("flame.list");
  list->set_input("flames", n->output("flames"));
  ASSERT_EQ(error_of(*list, ctx), "(no error)");
  const auto t = list->output("table").as<Table>();
  ASSERT_EQ(t->rows.size(), 3u);
  EXPECT_EQ(std::get<std::string>(t->rows[2][static_cast<std::size_t>(t->column("name"))]), "parametric");
  EXPECT_EQ(std::get<std::int64_t>(t->rows[1][static_cast<std::size_t>(t->column("xforms"))]), 3);
  EXPECT_EQ(std::get<std::int64_t>(t->rows[1][static_cast<std::size_t>(t->column("final"))]), 1);
}

// 'palettes' names a file: an optional input path (resolved against the workflow's folder, its
// content in the cache key and the provenance record), not plain text.
TEST(FlameNodes, PalettesIsAnOptionalInputPath) {
  const ParamSpec* p = registry().find_node("flame.read")->spec.param("palettes");
  ASSERT_NE(p, nullptr);
  EXPECT_EQ(p->kind, ParamKind::InputPath);
  EXPECT_FALSE(p->required);
  EXPECT_EQ(std::get<std::string>(p->default_value), "");
  EXPECT_EQ(p->check(std::string("tables/flam3-palettes.xml")), std::nullopt);
  EXPECT_CONTAINS(p->check(std::string("palettes.txt")).value_or(""), "this node reads .xml");
}

// A palette table found through $FLAM3_PALETTES (the parameter left empty) is recorded as an
// input file: the provenance names it, and a cached result counts only while it is unchanged
// (a table edited in place gave the old colours from the cache).
TEST(FlameNodes, APaletteTableFoundAtRunTimeIsRecorded) {
  const auto dir = flame::testing::temp_dir();
  const auto table = dir / "table.xml";
  std::ofstream(table) << "<palettes><palette number=\"0\" name=\"grey\" data=\"" + std::string(256 * 8, '8') +
                              "\"/></palettes>";
  const auto indexed = dir / "indexed.flame";
  std::ofstream(indexed) << "<flame name=\"i\" size=\"8 8\" palette=\"0\"><xform weight=\"1\" linear=\"1\" "
                            "coefs=\"1 0 0 1 0 0\"/></flame>";
  const auto inline_palette = dir / "inline.flame";
  std::ofstream(inline_palette) << "<flame name=\"p\" size=\"8 8\"><xform weight=\"1\" linear=\"1\" "
                                   "coefs=\"1 0 0 1 0 0\"/><color index=\"0\" rgb=\"9 9 9\"/></flame>";
  ::setenv("FLAM3_PALETTES", table.c_str(), 1);
  RecordingContext ctx;
  auto n = read(indexed.string());
  const std::string err = error_of(*n, ctx);
  RecordingContext plain;
  auto p = read(inline_palette.string());
  const std::string err_plain = error_of(*p, plain);
  ::unsetenv("FLAM3_PALETTES");
  ASSERT_EQ(err, "(no error)");
  EXPECT_EQ(ctx.input_files(), (std::vector<std::filesystem::path>{indexed, table}));
  ASSERT_EQ(err_plain, "(no error)");
  EXPECT_EQ(plain.input_files(), (std::vector<std::filesystem::path>{inline_palette}));  // no table used
}

// Every other text parameter of the plugin's nodes is not a file to read.
TEST(FlameNodes, NoFileIsReadThroughATextParameter) {
  for (const char* id : {"flame.read", "flame.list", "flame.render", "flame.render_all"}) {
    const NodeEntry* e = registry().find_node(id);
    ASSERT_NE(e, nullptr) << id;
    for (const auto& p : e->spec.params)
      if (p.kind == ParamKind::String) EXPECT_TRUE(p.name == "name" || p.name == "prefix") << id << "." << p.name;
  }
}

// The summary writes numbers as a person does: "quality 40", not "quality 40.000000".
TEST(FlameNodes, SummaryWritesNumbersPlainly) {
  Flame f;
  f.quality = 40;
  EXPECT_CONTAINS(DataType<Flame>::summary(f), "quality 40");
  EXPECT_EQ(DataType<Flame>::summary(f).find("40.0"), std::string::npos) << DataType<Flame>::summary(f);
  f.quality = 0.25;
  EXPECT_CONTAINS(DataType<Flame>::summary(f), "quality 0.25");
  EXPECT_EQ(DataType<Flame>::summary(f).find("0.250"), std::string::npos) << DataType<Flame>::summary(f);
}

TEST(FlameNodes, StrictFalseWarnsWithWhatWasDropped) {
  const auto file = flame::testing::temp_dir() / "plugin.flame";
  std::ofstream(file) << "<flame name=\"p\" size=\"8 8\"><xform weight=\"1\" linear=\"1\" hemisphere=\"0.5\" "
                         "coefs=\"1 0 0 1 0 0\"/><color index=\"0\" rgb=\"9 9 9\"/></flame>";
  RecordingContext ctx;
  auto strict = read(file.string());
  EXPECT_CONTAINS(error_of(*strict, ctx), "unknown variation(s) hemisphere (line 1)");
  auto lax = read(file.string());
  lax->set_param("strict", false);
  ASSERT_EQ(error_of(*lax, ctx), "(no error)");
  ASSERT_EQ(ctx.warnings().size(), 1u);
  EXPECT_CONTAINS(ctx.warnings()[0], "dropped unknown variation(s) hemisphere");
}

TEST(FlameNodes, RenderOnCpuWithPreviewsProgressAndSeed) {
  auto r = read(flame::testing::sample("gemflow_sierpinski.flame"));
  RecordingContext rctx;
  ASSERT_EQ(error_of(*r, rctx), "(no error)");
  auto run = [&](std::int64_t seed, RecordingContext& ctx) {
    auto n = make("flame.render");
    n->set_input("flame", r->output("flame"));
    n->set_param("device", std::string("cpu"));
    n->set_param("quality", 5.0);
    n->set_param("passes", std::int64_t{4});
    n->set_param("seed", seed);
    EXPECT_EQ(error_of(*n, ctx), "(no error)");
    return n->output("image").as<Image>();
  };
  RecordingContext ctx;
  const auto a = run(3, ctx);
  EXPECT_EQ(a->width, 320u);
  EXPECT_EQ(a->height, 240u);
  EXPECT_EQ(a->format, Image::Format::RGBA8);
  EXPECT_EQ(ctx.previews().size(), 3u);  // after every pass but the last
  for (const auto& p : ctx.previews()) EXPECT_EQ(p.port, "image");
  EXPECT_DOUBLE_EQ(ctx.fractions().back(), 1.0);
  EXPECT_EQ(std::get<std::int64_t>(ctx.records().at("iterations")), 5 * 320 * 240);
  RecordingContext ctx2;
  ctx2.set_previews_wanted(false);  // headless: no preview made, the same image
  EXPECT_EQ(run(3, ctx2)->u8, a->u8);
  EXPECT_TRUE(ctx2.previews().empty());
  RecordingContext ctx3;
  EXPECT_NE(run(4, ctx3)->u8, a->u8);
}

// Progress comes from inside a pass too: with one pass, a render reported only its end (a large
// flame's pass takes seconds, past the one-second rule of the plugin guide).
TEST(FlameNodes, RenderReportsProgressWithinAPass) {
  auto r = read(flame::testing::sample("gemflow_sierpinski.flame"));
  RecordingContext rctx;
  ASSERT_EQ(error_of(*r, rctx), "(no error)");
  auto n = make("flame.render");
  n->set_input("flame", r->output("flame"));
  n->set_param("device", std::string("cpu"));
  n->set_param("quality", 5.0);  // 320 × 240 × 5 samples: 38 walkers
  n->set_param("passes", std::int64_t{1});
  n->set_param("threads", std::int64_t{1});
  RecordingContext ctx;
  ASSERT_EQ(error_of(*n, ctx), "(no error)");
  const auto f = ctx.fractions();
  ASSERT_GE(f.size(), 30u);
  EXPECT_DOUBLE_EQ(f.back(), 1.0);
  EXPECT_GT(f.front(), 0.0);
  EXPECT_LE(f.front(), 2.0 / 64);
  for (std::size_t i = 1; i < f.size(); ++i) EXPECT_LT(f[i - 1], f[i]) << i;
}

TEST(FlameNodes, RenderAllWritesOnePngPerFlame) {
  auto r = read(flame::testing::sample("gemflow_samples.flame"));
  RecordingContext ctx;
  ASSERT_EQ(error_of(*r, ctx), "(no error)");
  auto n = make("flame.render_all");
  n->set_input("flames", r->output("flames"));
  n->set_param("device", std::string("cpu"));
  n->set_param("quality", 2.0);
  ASSERT_EQ(error_of(*n, ctx), "(no error)");
  const auto t = n->output("table").as<Table>();
  ASSERT_EQ(t->rows.size(), 3u);
  for (std::size_t i = 0; i < 3; ++i) {
    const auto file = ctx.output_dir() / ("flame_00" + std::to_string(i) + ".png");
    ASSERT_TRUE(std::filesystem::exists(file)) << file;
    const Image im = io::read_png(file);
    EXPECT_EQ(im.width, 320u);
  }
}

// Regressions (a user's reports): a cancelled or failed gallery left the PNGs it had written
// (cli.md: a node that failed or was cancelled writes nothing); a prefix with a folder in it
// wrote outside the output folder; a smaller gallery into a used folder left the earlier one's
// files with no word.
TEST(FlameNodes, RenderAllWritesAllOrNothingInsideTheFolder) {
  auto r = read(flame::testing::sample("gemflow_samples.flame"));
  RecordingContext ctx;
  ASSERT_EQ(error_of(*r, ctx), "(no error)");
  const auto make_gallery = [&](const std::string& prefix) {
    auto n = make("flame.render_all");
    n->set_input("flames", r->output("flames"));
    n->set_param("device", std::string("cpu"));
    n->set_param("quality", 1.0);
    n->set_param("prefix", prefix);
    return n;
  };
  const auto files = [](const std::filesystem::path& dir) {
    std::vector<std::string> out;
    for (const auto& e : std::filesystem::directory_iterator(dir)) out.push_back(e.path().filename().string());
    std::sort(out.begin(), out.end());
    return out;
  };
  // cancelled during the second flame (8 progress reports a flame): no file, staged ones included
  RecordingContext cancel;
  cancel.cancel_after_progress(12);
  auto c = make_gallery("g_");
  EXPECT_EQ(error_of(*c, cancel), "cancelled");
  EXPECT_EQ(files(cancel.output_dir()), std::vector<std::string>{});
  // a prefix with a folder: refused by the rule (validation) and by the node
  const NodeSpec& spec = registry().find_node("flame.render_all")->spec;
  const ParamValue bad = std::string("../g_"), good = std::string("g_");
  const auto value_of = [&](const ParamValue& prefix) {
    return [&spec, prefix](const std::string& name) -> const ParamValue& {
      static thread_local ParamValue v;
      v = name == "prefix" ? prefix : spec.param(name)->default_value;
      return v;
    };
  };
  EXPECT_EQ(spec.broken_rules(value_of(bad)).size(), 1u);
  EXPECT_TRUE(spec.broken_rules(value_of(good)).empty());
  RecordingContext outside;
  auto o = make_gallery("../g_");
  EXPECT_CONTAINS(error_of(*o, outside), "parameter 'prefix' = '../g_'");
  EXPECT_FALSE(std::filesystem::exists(outside.output_dir().parent_path() / "g_000.png"));
  // three files, then one flame into the same folder: a warning names the two left
  RecordingContext used;
  ASSERT_EQ(error_of(*make_gallery("g_"), used), "(no error)");
  EXPECT_EQ(files(used.output_dir()), (std::vector<std::string>{"g_000.png", "g_001.png", "g_002.png"}));
  RecordingContext again;
  again.set_output_dir(used.output_dir());
  auto one = read(flame::testing::sample("gemflow_sierpinski.flame"));
  ASSERT_EQ(error_of(*one, again), "(no error)");
  auto n = make_gallery("g_");
  n->set_input("flames", one->output("flames"));
  ASSERT_EQ(error_of(*n, again), "(no error)");
  ASSERT_EQ(again.warnings().size(), 1u);
  EXPECT_CONTAINS(again.warnings()[0], "2 file(s) of an earlier gallery");
  EXPECT_CONTAINS(again.warnings()[0], "g_001.png … g_002.png");
}

}  // namespace
}  // namespace gemflow::flame

namespace gemflow::flame {
namespace {

// No silent CPU fallback: device cuda without a GPU fails and says so.
TEST(FlameNodes, DeviceCudaWithoutAGpuFails) {
  if (cuda_device_count() > 0) GTEST_SKIP() << "a CUDA device is present";
  auto r = read(flame::testing::sample("gemflow_sierpinski.flame"));
  gemflow::testing::RecordingContext ctx;
  ASSERT_EQ(gemflow::testing::error_of(*r, ctx), "(no error)");
  auto n = make("flame.render");
  n->set_input("flame", r->output("flame"));
  n->set_param("device", std::string("cuda"));
  EXPECT_CONTAINS(gemflow::testing::error_of(*n, ctx), "cuda");
}

}  // namespace
}  // namespace gemflow::flame

namespace gemflow::flame {
namespace {

// Host memory is checked before the histograms are allocated, naming the flame and its size.
TEST(FlameNodes, RenderChecksHostMemoryFirst) {
  auto r = read(flame::testing::sample("gemflow_sierpinski.flame"));
  gemflow::testing::RecordingContext ctx;
  ASSERT_EQ(gemflow::testing::error_of(*r, ctx), "(no error)");
  auto n = make("flame.render");
  n->set_input("flame", r->output("flame"));
  n->set_param("device", std::string("cpu"));
  ::setenv("GEMFLOW_MEMORY_LIMIT", "1M", 1);
  const std::string e = gemflow::testing::error_of(*n, ctx);
  ::unsetenv("GEMFLOW_MEMORY_LIMIT");
  EXPECT_CONTAINS(e, "flame 'gemflow_sierpinski' at 320×240 (histograms) needs");
}

// A user's report: threads = 1024 on a 2-core machine was refused for the memory of 1024
// histograms that are never made. Threads beyond the machine's cores count as all of them.
TEST(FlameNodes, MoreThreadsThanCoresAddNoMemory) {
  auto r = read(flame::testing::sample("gemflow_sierpinski.flame"));
  gemflow::testing::RecordingContext ctx;
  ASSERT_EQ(gemflow::testing::error_of(*r, ctx), "(no error)");
  const Flame& f = *r->output("flame").as<Flame>();
  RenderOptions all, many;
  many.threads = 1024;
  EXPECT_EQ(cpu_render_bytes(f, many), cpu_render_bytes(f, all));
}

// The disk cache keeps flames: the registry records their encodings, and a flame file's flames
// (xaos, final xform, post affines, step palettes) come back equal field by field; truncated or
// altered bytes are SerialError, not a wrong flame.
TEST(FlameSerial, RoundTripThroughTheRegistryEncoding) {
  const TypeInfo* ft = registry().find_type("flame.Flame");
  const TypeInfo* st = registry().find_type("flame.FlameSet");
  ASSERT_NE(ft, nullptr);
  ASSERT_NE(st, nullptr);
  EXPECT_EQ(ft->serial_version, 1u);
  EXPECT_EQ(st->serial_version, 1u);
  ASSERT_TRUE(ft->save && ft->load && st->save && st->load);

  FlameSet set = read_flames(flame::testing::sample("gemflow_samples.flame"));
  ASSERT_EQ(set.flames.size(), 3u);
  set.dropped = {"flame 'x' (#3) line 12: dropped variation(s) julia3D"};
  Flame& f = set.flames[0];
  f.palette_mode = PaletteMode::Step;
  f.filter_shape = FilterShape::Quadratic;
  f.xforms[0].post = {0.5, 0.1, -0.2, 0.7, 0.01, -0.3};
  f.xforms[0].param[0] = 0.123456789012345678;
  ASSERT_TRUE(set.flames[1].has_chaos);
  ASSERT_TRUE(set.flames[1].final_xform.has_value());

  BinaryWriter w;
  st->save(Value::make(set), w);
  BinaryReader r(w.bytes());
  const Value back = st->load(r);
  r.finish("flame set");
  const auto& got = *back.as<FlameSet>();
  EXPECT_EQ(got.source, set.source);
  EXPECT_EQ(got.dropped, set.dropped);
  ASSERT_EQ(got.flames.size(), set.flames.size());
  for (std::size_t i = 0; i < set.flames.size(); ++i) {
    EXPECT_TRUE(got.flames[i] == set.flames[i]) << "flame " << i;
    EXPECT_EQ(write_flame(got.flames[i]), write_flame(set.flames[i]));
  }
  EXPECT_EQ(got.flames[1].xforms[0].chaos, set.flames[1].xforms[0].chaos);

  // One flame alone, and every truncation of it.
  BinaryWriter one;
  ft->save(Value::make(set.flames[1]), one);
  {
    BinaryReader rr(one.bytes());
    EXPECT_TRUE(*ft->load(rr).as<Flame>() == set.flames[1]);
    rr.finish("flame");
  }
  const std::string bytes = one.bytes();
  for (std::size_t cut = 0; cut < bytes.size(); cut += 97) {
    BinaryReader rr(std::string_view(bytes).substr(0, cut));
    EXPECT_THROW((void)ft->load(rr), SerialError) << "cut at " << cut;
  }
}

TEST(FlameSerial, BadEnumsAndCountsAreRefused) {
  const Flame f = read_flames(flame::testing::sample("gemflow_sierpinski.flame")).flames.at(0);
  BinaryWriter w;
  Serial<Flame>::write(w, f);
  std::string bytes = w.bytes();
  // filter_shape's byte: after name, index, line, source, width, height, center, scale, rotate,
  // zoom, supersample, quality, filter.
  const std::size_t at = 8 + f.name.size() + 8 + 8 + 8 + f.source.size() + 8 + 8 + 16 + 24 + 4 + 8 + 8;
  ASSERT_EQ(static_cast<unsigned char>(bytes[at]), static_cast<unsigned char>(f.filter_shape));
  bytes[at] = 99;
  BinaryReader r(bytes);
  try {
    (void)Serial<Flame>::read(r);
    ADD_FAILURE() << "no error";
  } catch (const SerialError& e) {
    EXPECT_CONTAINS(e.what(), "filter shape 99");
  }
}

}  // namespace
}  // namespace gemflow::flame
