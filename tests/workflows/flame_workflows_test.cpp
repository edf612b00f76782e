// The shipped flame workflows, run through `gemflow run` on the CPU: the PNG is the flame's
// image bit for bit (the render of the same flame, quality and seed through the library), and
// the gallery writes one PNG per flame of the file with its table.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

#include <nlohmann/json.hpp>

#include "progress_check.hpp"

#include "gemflow/flame/render.hpp"
#include "gemflow/io/image_io.hpp"

namespace fs = std::filesystem;

namespace {

fs::path run(const std::string& workflow, const std::string& tag) {
  fs::path out = fs::temp_directory_path() / ("gemflow_flame_workflows_" + tag);
  fs::remove_all(out);
  const fs::path log = out.string() + ".log";
  const std::string cmd = std::string(gemflow::test::kCheckProgress) + "\"" + GEMFLOW_EXE + "\" run \"" +
                          GEMFLOW_SOURCE_DIR + "/workflows/" + workflow + "\" --device cpu --out \"" + out.string() +
                          "\" > \"" + log.string() + "\" 2>&1";
  if (std::system(cmd.c_str()) != 0) {
    std::ifstream in(log);
    ADD_FAILURE() << cmd << " failed:\n" << std::string(std::istreambuf_iterator<char>(in), {});
  }
  gemflow::test::expect_progress_reported(log);
  return out;
}

const std::string kSamples = std::string(GEMFLOW_SOURCE_DIR) + "/sample_data/flames/gemflow_samples.flame";

TEST(FlameRenderWorkflow, WritesTheFlamesImage) {
  const auto out = run("flame_render.yaml", "render");
  const auto im = gemflow::io::read_png(out / "swirl_julia.png");
  const auto flames = gemflow::flame::read_flames(kSamples);
  const auto& f = flames.flames.at(0);
  ASSERT_EQ(f.name, "swirl_julia");
  ASSERT_EQ(im.width, f.width);
  ASSERT_EQ(im.height, f.height);
  gemflow::flame::RenderOptions o;
  o.seed = 1;
  const auto expected = gemflow::flame::render_cpu(f, o);
  EXPECT_EQ(im.u8, expected.rgba);
  std::size_t lit = 0;
  for (std::size_t i = 0; i < im.u8.size(); i += 4) lit += (im.u8[i] | im.u8[i + 1] | im.u8[i + 2]) > 8;
  EXPECT_GT(lit, im.width * im.height / 10);  // a picture, not a black frame
}

TEST(FlameGalleryWorkflow, OnePngPerFlameAndTheTables) {
  const auto out = run("flame_gallery.yaml", "gallery");
  const auto flames = gemflow::flame::read_flames(kSamples);
  std::ifstream in(out / "gallery.json");
  ASSERT_TRUE(in);
  const auto j = nlohmann::json::parse(in);
  ASSERT_EQ(j.at("rows").size(), flames.flames.size());
  for (std::size_t i = 0; i < flames.flames.size(); ++i) {
    const auto& row = j.at("rows")[i];
    EXPECT_EQ(row.at("name"), flames.flames[i].name);
    const auto im = gemflow::io::read_png(out / row.at("file").get<std::string>());
    EXPECT_EQ(im.width, flames.flames[i].width);
    const auto& f = flames.flames[i];
    EXPECT_EQ(row.at("iterations").get<double>(), f.quality * static_cast<double>(f.width * f.height));
  }
  std::ifstream csv(out / "flames.csv");
  std::string header;
  std::getline(csv, header);
  EXPECT_EQ(header, "index,name,xforms,final,width,height,quality,line");
}

}  // namespace
