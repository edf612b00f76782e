// The flam3 XML reader: sample and shared flames against counts read independently from the
// text, wrappers, BOM and CRLF, the write → read round trip, and every bad input of the issue.
#include <chrono>
#include <regex>
#include <sstream>

#include "flame_test_support.hpp"

namespace gemflow::flame {
namespace {

using namespace testing;

std::string slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

std::size_t count(const std::string& text, const std::string& re) {
  const std::regex r(re);
  return static_cast<std::size_t>(
      std::distance(std::sregex_iterator(text.begin(), text.end(), r), std::sregex_iterator()));
}

constexpr const char* kPalette = "<color index=\"0\" rgb=\"255 0 0\"/><color index=\"255\" rgb=\"0 0 255\"/>";

std::string one_flame(const std::string& attrs, const std::string& body) {
  return "<flame name=\"t\" size=\"16 8\" " + attrs + ">\n" + body + "\n</flame>\n";
}
const std::string kXform = "<xform weight=\"1\" color=\"0\" linear=\"1\" coefs=\"0.5 0 0 0.5 0 0\"/>";

FlameSet parse(const std::string& text, bool strict = true) {
  ReadOptions o;
  o.source = "t.flame";
  o.strict = strict;
  o.palettes = "/nonexistent/flam3-palettes.xml";
  return parse_flames(text, o);
}

TEST(Parse, SampleFlamesAgainstTheirText) {
  for (const char* name : {"gemflow_sierpinski.flame", "gemflow_samples.flame"}) {
    SCOPED_TRACE(name);
    const std::string text = slurp(sample(name));
    const auto set = read_flames(sample(name));
    ASSERT_EQ(set.flames.size(), count(text, "<flame[ >]"));
    std::size_t xforms = 0, finals = 0;
    for (const auto& f : set.flames) {
      xforms += f.xforms.size();
      finals += f.final_xform ? 1 : 0;
      EXPECT_EQ(f.width, 320u);
      EXPECT_EQ(f.height, 240u);
    }
    EXPECT_EQ(xforms, count(text, "<xform "));
    EXPECT_EQ(finals, count(text, "<finalxform "));
  }
  const auto set = read_flames(sample("gemflow_samples.flame"));
  const Flame& x = set.flames[1];
  EXPECT_EQ(x.name, "xaos_final");
  EXPECT_TRUE(x.has_chaos);
  EXPECT_EQ(x.xforms[1].chaos, (std::vector<double>{1, 0, 2}));
  EXPECT_DOUBLE_EQ(x.xforms[0].color_speed, (1 - 0.2) / 2);  // symmetry 0.2
  EXPECT_DOUBLE_EQ(x.xforms[2].opacity, 0.7);
  EXPECT_DOUBLE_EQ(x.final_xform->param[kP_curl_c1], 0.3);
  EXPECT_DOUBLE_EQ(x.final_xform->color_speed, 0);
  // <color index="0" rgb="..."/> of the text, entry 0 and 255.
  std::smatch m;
  const std::string text = slurp(sample("gemflow_samples.flame"));
  ASSERT_TRUE(std::regex_search(text, m, std::regex("<color index=\"255\" rgb=\"(\\d+) (\\d+) (\\d+)\"")));
  EXPECT_DOUBLE_EQ(x.palette[255][0], std::stod(m[1]) / 255.0);
  EXPECT_DOUBLE_EQ(x.palette[255][2], std::stod(m[3]) / 255.0);
  const Flame& p = set.flames[2];
  EXPECT_EQ(p.palette_mode, PaletteMode::Step);
  EXPECT_EQ(p.filter_shape, FilterShape::Mitchell);
  EXPECT_DOUBLE_EQ(p.xforms[0].param[kP_julian_power], 5);
  EXPECT_DOUBLE_EQ(p.xforms[1].param[kP_ngon_sides], 6);
  EXPECT_DOUBLE_EQ(p.xforms[1].var[kVar_waves], 0.5);
  // Inline hex: the first colour of the sierpinski palette.
  const std::string st = slurp(sample("gemflow_sierpinski.flame"));
  ASSERT_TRUE(std::regex_search(st, m, std::regex("format=\"RGB\">\\s*([0-9A-F]{2})([0-9A-F]{2})([0-9A-F]{2})")));
  const Flame s = read_flames(sample("gemflow_sierpinski.flame")).flames[0];
  EXPECT_DOUBLE_EQ(s.palette[0][0], std::stoi(m[1], nullptr, 16) / 255.0);
  EXPECT_DOUBLE_EQ(s.palette[0][1], std::stoi(m[2], nullptr, 16) / 255.0);
  EXPECT_DOUBLE_EQ(s.palette[0][3], 1.0);
}

TEST(Parse, WriteThenReadGivesTheSameFlame) {
  for (const auto& f : read_flames(sample("gemflow_samples.flame")).flames) {
    SCOPED_TRACE(f.name);
    const Flame g = parse(write_flame(f)).flames.at(0);
    EXPECT_EQ(g.name, f.name);
    EXPECT_EQ(g.width, f.width);
    EXPECT_EQ(g.center, f.center);
    EXPECT_EQ(g.scale, f.scale);
    EXPECT_EQ(g.rotate, f.rotate);
    EXPECT_EQ(g.supersample, f.supersample);
    EXPECT_EQ(g.quality, f.quality);
    EXPECT_EQ(g.brightness, f.brightness);
    EXPECT_EQ(g.gamma, f.gamma);
    EXPECT_EQ(g.highlight_power, f.highlight_power);
    EXPECT_EQ(g.background, f.background);
    EXPECT_EQ(g.estimator_radius, f.estimator_radius);
    EXPECT_EQ(g.filter_shape, f.filter_shape);
    EXPECT_EQ(g.palette_mode, f.palette_mode);
    ASSERT_EQ(g.xforms.size(), f.xforms.size());
    for (std::size_t i = 0; i < f.xforms.size(); ++i) {
      EXPECT_EQ(g.xforms[i].coefs, f.xforms[i].coefs);
      EXPECT_EQ(g.xforms[i].post, f.xforms[i].post);
      EXPECT_EQ(g.xforms[i].var, f.xforms[i].var);
      EXPECT_EQ(g.xforms[i].param, f.xforms[i].param);
      EXPECT_EQ(g.xforms[i].chaos, f.xforms[i].chaos);
      EXPECT_EQ(g.xforms[i].color_speed, f.xforms[i].color_speed);
      EXPECT_EQ(g.xforms[i].opacity, f.xforms[i].opacity);
    }
    EXPECT_EQ(g.final_xform.has_value(), f.final_xform.has_value());
    for (std::size_t i = 0; i < 256; ++i)
      for (std::size_t c = 0; c < 4; ++c) EXPECT_NEAR(g.palette[i][c], f.palette[i][c], 1e-12) << i;
  }
}

TEST(Parse, FlamesAnywhereBomAndCrlf) {
  const std::string f1 = one_flame("", kXform + kPalette);
  for (const std::string& doc :
       {f1, "<flames>" + f1 + f1 + "</flames>", "<sequence>" + f1 + "</sequence>", "<test>" + f1 + f1 + "</test>",
        "<?xml version=\"1.0\"?><a><b>" + f1 + "</b><c>" + f1 + "</c></a>"}) {
    SCOPED_TRACE(doc.substr(0, 30));
    const auto set = parse(doc);
    EXPECT_EQ(set.flames.size(), count(doc, "<flame "));
    EXPECT_EQ(set.flames.back().index, set.flames.size() - 1);
  }
  // A BOM and CRLF line ends: same flames, and line numbers count CRLF lines.
  std::string crlf = "\xEF\xBB\xBF<flames>\r\n\r\n" + one_flame("gamma=\"x\"", kXform + kPalette) + "</flames>\r\n";
  const std::string e = error_of([&] { (void)parse(crlf); });
  EXPECT_CONTAINS(e, "t.flame:3: flame 't' (#0): attribute 'gamma' = 'x' is not a number");
  std::string ok = "\xEF\xBB\xBF<flames>\r\n" + one_flame("", kXform + "\r\n" + kPalette) + "</flames>\r\n";
  EXPECT_EQ(parse(ok).flames.size(), 1u);
}

TEST(Parse, BadInputsNameFileLineFlameAndAttribute) {
  const auto err = [](const std::string& text) { return error_of([&] { (void)parse(text); }); };
  EXPECT_CONTAINS(err(""), "t.flame:1: the file is empty");
  EXPECT_CONTAINS(err("this is not xml"), "t.flame:1: not valid XML");
  EXPECT_CONTAINS(err("<flames><other/></flames>"), "t.flame:1: no <flame> element");
  EXPECT_CONTAINS(err("<flames>\n" + one_flame("", kXform + kPalette) + "<flame name=\"cut\"><xform weight=\"1\""),
                  "t.flame:5: not valid XML");
  EXPECT_CONTAINS(err(one_flame("", kPalette)), "t.flame:1: flame 't' (#0): no <xform>");
  EXPECT_CONTAINS(err(one_flame("", kXform)), "flame 't' (#0): no palette");
  EXPECT_CONTAINS(
      err(one_flame("", "<xform weight=\"0\" linear=\"1\" coefs=\"1 0 0 1 0 0\"/>" + std::string(kPalette))),
      "total weight is 0");
  EXPECT_CONTAINS(
      err(one_flame("", "<xform weight=\"1\" linear=\"1\" coefs=\"1 0 nan 1 0 0\"/>" + std::string(kPalette))),
      "t.flame:2: flame 't' (#0): attribute 'coefs' = '1 0 nan 1 0 0' is not finite");
  EXPECT_CONTAINS(
      err(one_flame("", "<xform weight=\"1\" linear=\"inf\" coefs=\"1 0 0 1 0 0\"/>" + std::string(kPalette))),
      "attribute 'linear' = 'inf' is not finite");
  EXPECT_CONTAINS(err(one_flame("", "<xform weight=\"1\" linear=\"1\" coefs=\"1 0 0 1 0\"/>" + std::string(kPalette))),
                  "attribute 'coefs' = '1 0 0 1 0' has 5 numbers, expected 6");
  EXPECT_CONTAINS(err(one_flame("size=\"0 10\"", kXform + kPalette)), "attribute 'size' = '0 10'");
  const std::string huge = err("<flame name=\"big\" size=\"1000000 1000000\">" + kXform + kPalette + "</flame>");
  EXPECT_CONTAINS(huge, "flame 'big' (#0): attribute 'size' = 1000000 × 1000000");
  EXPECT_CONTAINS(huge, "MiB of histogram");
  // a user's report: a huge filter radius was reported as the size
  const std::string wide =
      err("<flame name=\"wide\" size=\"64 48\" filter=\"1e6\">" + kXform + kPalette + "</flame>");
  EXPECT_CONTAINS(wide, "flame 'wide' (#0): attribute 'filter' = 1e+06 needs");
  EXPECT_CONTAINS(wide, "a border of");
  EXPECT_CONTAINS(err(one_flame("palette=\"12\"", kXform)),
                  "flame 't' (#0): attribute 'palette' = 12 needs the standard palette table flam3-palettes.xml");
  EXPECT_CONTAINS(err(one_flame("", kXform + "<palette count=\"256\" format=\"RGB\">00FF</palette>")),
                  "<palette>: 4 hexadecimal digits for 256 colours");
  EXPECT_CONTAINS(err(one_flame("", kXform + "<color index=\"300\" rgb=\"1 2 3\"/>")),
                  "'index' = '300' is not in 0..255");
}

TEST(Parse, PaletteIndexFromTheStandardTable) {
  const auto table = find_palette_table(shared("flam3-palettes.xml"));
  if (!table) GTEST_SKIP() << "flam3-palettes.xml absent (shared data or Debian's flam3-palette)";
  ReadOptions o;
  o.palettes = *table;
  o.source = "t.flame";
  const auto f = parse_flames(one_flame("palette=\"0\"", kXform), o).flames[0];
  // Entry 0 of the table ("south-sea-bather") starts with 00b9eaeb: RGB b9 ea eb.
  EXPECT_DOUBLE_EQ(f.palette[0][0], 0xb9 / 255.0);
  EXPECT_DOUBLE_EQ(f.palette[0][1], 0xea / 255.0);
  EXPECT_DOUBLE_EQ(f.palette[0][2], 0xeb / 255.0);
  const std::string e = error_of([&] { (void)parse_flames(one_flame("palette=\"701\"", kXform), o); });
  EXPECT_CONTAINS(e, "t.flame:1: flame 't' (#0): attribute 'palette' = 701: index 701 is not in the palette table");
  EXPECT_CONTAINS(e, "(0..700)");
  // Half a turn of hue moves every colour.
  const auto g = parse_flames(one_flame("palette=\"0\" hue=\"0.5\"", kXform), o).flames[0];
  EXPECT_GT(std::fabs(g.palette[0][0] - f.palette[0][0]), 0.05);
}

// A palette table whose entry 0 is 256 × the colour `rgb` (flam3-palettes.xml layout).
void write_table(const std::filesystem::path& file, const std::string& rgb) {
  std::string data;
  for (int i = 0; i < 256; ++i) data += "00" + rgb;
  std::ofstream(file) << "<palettes>\n<palette number=\"0\" name=\"t\" data=\"" << data << "\"/>\n</palettes>\n";
}

// The table is read again when it changes (same name): no stale palette in a long-lived process.
TEST(Parse, AnEditedPaletteTableIsReadAgain) {
  const auto file = temp_dir() / "edited_palettes.xml";
  ReadOptions o;
  o.palettes = file;
  o.source = "t.flame";
  write_table(file, "ff0000");
  EXPECT_DOUBLE_EQ(parse_flames(one_flame("palette=\"0\"", kXform), o).flames[0].palette[0][0], 1.0);
  write_table(file, "0000ff");  // same size, other colour
  std::filesystem::last_write_time(file, std::filesystem::last_write_time(file) + std::chrono::seconds(2));
  const auto f = parse_flames(one_flame("palette=\"0\"", kXform), o).flames[0];
  EXPECT_DOUBLE_EQ(f.palette[0][0], 0.0);
  EXPECT_DOUBLE_EQ(f.palette[0][2], 1.0);
}

TEST(Parse, UnknownVariationsStrictAndNot) {
  const std::string text = "<flames>\n<flame name=\"plug\" size=\"8 8\">\n" + kXform +
                           "\n<xform weight=\"1\" coefs=\"1 0 0 1 0 0\" julia3D=\"0.5\" julia3D_power=\"2\" "
                           "linear3D=\"1\" spherical=\"0.5\" flatten=\"0\"/>\n" +
                           kPalette + "\n</flame>\n</flames>";
  const std::string e = error_of([&] { (void)parse(text); });
  EXPECT_CONTAINS(e, "t.flame:2: flame 'plug' (#0): unknown variation(s) julia3D (line 4), linear3D (line 4)");
  EXPECT_EQ(e.find("julia3D_power"), std::string::npos) << e;  // a parameter, not a variation
  EXPECT_EQ(e.find("flatten"), std::string::npos) << e;        // weight 0: nothing to drop
  const auto set = parse(text, false);
  ASSERT_EQ(set.dropped.size(), 1u);
  EXPECT_CONTAINS(set.dropped[0],
                  "flame 'plug' (#0): dropped unknown variation(s) julia3D (line 4), linear3D (line 4)");
  EXPECT_DOUBLE_EQ(set.flames[0].xforms[1].var[kVar_spherical], 0.5);
}

// 1024 xforms are read; the 1025th is a located error (the render's tables and the xaos checks
// grow with the square of the count; real files hold tens).
TEST(Parse, XformCountIsBounded) {
  std::string xforms;
  for (std::size_t k = 0; k < kMaxXforms; ++k) xforms += "\n" + kXform;
  const auto text = [&](const std::string& x) {
    return "<flames>\n<flame name=\"many\" size=\"8 8\">" + x + "\n" + kPalette + "\n</flame>\n</flames>";
  };
  EXPECT_EQ(parse(text(xforms)).flames.at(0).xforms.size(), kMaxXforms);
  const std::string e = error_of([&] { (void)parse(text(xforms + "\n" + kXform)); });
  EXPECT_CONTAINS(e, "t.flame:" + std::to_string(kMaxXforms + 3) + ": ");
  EXPECT_CONTAINS(e, "more than 1024 <xform> elements in one flame");
}

// Flames are found at any depth, in document order, without recursion: 200 000 nested elements
// (1.4 MB) once overflowed the call stack.
TEST(Parse, FlamesAtAnyDepthWithoutRecursion) {
  const std::string flame = "<flame name=\"deep\" size=\"8 8\">" + kXform + kPalette + "</flame>";
  std::string open, close;
  for (int i = 0; i < 200000; ++i) {
    open += "<a>";
    close += "</a>";
  }
  const std::string text = "<flames><flame name=\"top\" size=\"8 8\">" + kXform + kPalette + "</flame>" + open +
                           flame + close + "<b><flame name=\"last\" size=\"8 8\">" + kXform + kPalette +
                           "</flame></b></flames>";
  const auto set = parse(text, false);
  ASSERT_EQ(set.flames.size(), 3u);
  EXPECT_EQ(set.flames[0].name, "top");
  EXPECT_EQ(set.flames[1].name, "deep");
  EXPECT_EQ(set.flames[2].name, "last");
}

// A parameter belongs to the attribute named by any prefix ending before one of its '_' (my_var
// owns my_var_scale_x); an xform with 20 000 such parameters reads at once (the owner test was
// quadratic in the attributes: a fuzzer's timeout).
TEST(Parse, ParametersOfUnknownVariationsFindTheirOwnerInBulk) {
  std::string bulk;
  for (int i = 0; i < 20000; ++i) bulk += " my_var_p" + std::to_string(i) + "=\"1\"";
  std::string underscores = "zz";  // a 60 000-character name of 30 000 '_': owners are short names
  for (int i = 0; i < 30000; ++i) underscores += "_a";
  bulk += " " + underscores + "=\"1\"";
  const std::string text = "<flames>\n<flame name=\"plug\" size=\"8 8\">\n" + kXform +
                           "\n<xform weight=\"1\" coefs=\"1 0 0 1 0 0\" zz3D=\"0.5\" zz3D_power=\"2\" my_var=\"1\" "
                           "my_var_scale_x=\"2\" lone_param=\"3\"" + bulk + "/>\n" + kPalette + "\n</flame>\n</flames>";
  const auto set = parse(text, false);
  ASSERT_EQ(set.dropped.size(), 1u);
  EXPECT_CONTAINS(set.dropped[0],
                  "dropped unknown variation(s) zz3D (line 4), my_var (line 4), lone_param (line 4)");
  EXPECT_EQ(set.dropped[0].find("my_var_"), std::string::npos) << set.dropped[0].substr(0, 300);
  EXPECT_EQ(set.dropped[0].find("zz3D_power"), std::string::npos);
  EXPECT_NE(set.dropped[0].find("zz_a_a_a"), std::string::npos);  // no owner: an unknown variation
}

// Every flame of the shared collection: the counts of <flame> and <xform> elements read from
// the text, or (for the two files that are bad inputs) the error.
TEST(Parse, EverySharedFlameFile) {
  const std::string dir = shared("");
  if (dir.empty()) GTEST_SKIP() << "shared/data/flames absent";
  const auto table = find_palette_table(shared("flam3-palettes.xml"));
  std::size_t files = 0;
  for (const auto& entry : std::filesystem::directory_iterator(dir)) {
    const auto& path = entry.path();
    if (path.extension() != ".flame" && path.extension() != ".flam3") continue;
    SCOPED_TRACE(path.filename().string());
    ++files;
    const std::string text = slurp(path.string());
    ReadOptions o;
    o.strict = false;
    if (table) o.palettes = *table;
    const std::string name = path.filename().string();
    if (name == "fr0st_template_empty_flame.flame" || name == "flam3_vidres.flam3") {
      EXPECT_CONTAINS(error_of([&] { (void)read_flames(path, o); }), "no <xform>");
      continue;
    }
    const auto set = read_flames(path, o);
    EXPECT_EQ(set.flames.size(), count(text, "<flame[ \r\n>]"));
    std::size_t xforms = 0;
    for (const auto& f : set.flames) xforms += f.xforms.size();
    EXPECT_EQ(xforms, count(text, "<xform[ \r\n>]"));
  }
  EXPECT_GE(files, 17u);
}

}  // namespace
}  // namespace gemflow::flame

namespace gemflow::flame {
namespace {

TEST(Parse, XaosRowsArePaddedTruncatedOrDropped) {
  const std::string pal = "<color index=\"0\" rgb=\"255 0 0\"/>";
  const std::string x = "<xform weight=\"1\" linear=\"1\" coefs=\"1 0 0 1 0 0\" ";
  ReadOptions o;
  o.source = "t.flame";
  const auto f =
      parse_flames(
          "<flame size=\"4 4\">" + x + "chaos=\"0 2 7 7 7\"/>" + x + "chaos=\"0 0\"/>" + x + "/>" + pal + "</flame>", o)
          .flames[0];
  EXPECT_EQ(f.xforms[0].chaos, (std::vector<double>{0, 2, 7}));  // past the 3 xforms: ignored
  EXPECT_EQ(f.xforms[1].chaos, (std::vector<double>{0, 0}));     // the missing third entry is 1
  EXPECT_TRUE(f.has_chaos);
  const auto g =
      parse_flames("<flame size=\"4 4\">" + x + "chaos=\"0 0\"/>" + x + "/>" + pal + "</flame>", o).flames[0];
  EXPECT_TRUE(g.xforms[0].chaos.empty());  // every next weight 0: no xaos for that xform
}

// A long flame file stops when cancelled: the reader polls before every flame and every xform.
TEST(Parse, StopsWhenCancelled) {
  std::string doc = "<flames>";
  for (int i = 0; i < 50; ++i) doc += one_flame("", kXform + kXform + kPalette);
  doc += "</flames>";
  ReadOptions o;
  o.source = "t.flame";
  std::size_t polls = 0;
  o.cancelled = [&polls] {
    ++polls;
    return false;
  };
  EXPECT_EQ(parse_flames(doc, o).flames.size(), 50u);
  EXPECT_GE(polls, 50u * 3);  // each flame, and each of its two xforms
  polls = 0;
  o.cancelled = [&polls] { return ++polls > 1; };  // cancels at the second poll: inside the first flame
  EXPECT_THROW((void)parse_flames(doc, o), ReadCancelled);
  EXPECT_EQ(polls, 2u);
}

}  // namespace
}  // namespace gemflow::flame
