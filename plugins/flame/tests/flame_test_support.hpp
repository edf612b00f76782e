#pragma once
// Helpers of the flame tests: sample and shared data paths, flam3-render as the peer renderer.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <optional>
#include <string>

#include "gemflow/flame/flame.hpp"
#include "gemflow/flame/render.hpp"
#include "gemflow/io/image_io.hpp"
#include "gemflow/testing.hpp"

#define EXPECT_CONTAINS(text, part) EXPECT_NE(std::string(text).find(part), std::string::npos) << (text)

namespace gemflow::flame::testing {

/// A folder of this test process for flam3-render's files, removed when the process exits.
inline const std::filesystem::path& temp_dir() { return gemflow::testing::process_temp_dir(); }

inline std::string sample(const std::string& rel) {
  return std::string(GEMFLOW_SOURCE_DIR) + "/sample_data/flames/" + rel;
}

/// A file of shared/data/flames, or "" when absent.
inline std::string shared(const std::string& rel) {
  const char* root = std::getenv("GEMFLOW_SHARED_DATA");
  if (!root || !*root) return "";
  auto p = std::filesystem::path(root) / "flames" / rel;
  return std::filesystem::exists(p) ? p.string() : "";
}

/// The message of the FlameError that `f` throws, or "(no error)".
template <class F>
std::string error_of(F&& f) {
  try {
    f();
  } catch (const FlameError& e) {
    return e.what();
  }
  return "(no error)";
}

/// flam3-render, when installed.
inline std::optional<std::string> flam3_render() {
  for (const char* p : {"/usr/bin/flam3-render", "/usr/local/bin/flam3-render"})
    if (std::filesystem::exists(p)) return std::string(p);
  return std::nullopt;
}

/// Renders `flame` with flam3-render (its XML from write_flame; nthreads=1 so that it is
/// reproducible) and returns its RGBA pixels, or nullopt with a failure recorded.
/// `env` adds flam3-render settings ("earlyclip=1 transparency=1").
inline std::optional<std::vector<std::uint8_t>> render_with_flam3(const Flame& flame, const std::string& tag,
                                                                  int seed = 1, const std::string& env = "") {
  const auto exe = flam3_render();
  if (!exe) return std::nullopt;
  const auto dir = temp_dir();
  const auto in = dir / (tag + ".flam3"), out = dir / (tag + ".png");
  std::ofstream(in) << write_flame(flame);
  const std::string cmd = "env out='" + out.string() +
                          "' format=png verbose=0 nthreads=1 isaac_seed=" + std::to_string(seed) + " " + env + " '" +
                          *exe + "' < '" + in.string() + "' > '" + (dir / (tag + ".log")).string() + "' 2>&1";
  if (std::system(cmd.c_str()) != 0) {
    ADD_FAILURE() << cmd << " failed";
    return std::nullopt;
  }
  const Image im = io::read_png(out);
  if (im.width != flame.width || im.height != flame.height) {
    ADD_FAILURE() << "flam3-render wrote " << im.width << "x" << im.height;
    return std::nullopt;
  }
  return im.u8;
}

/// Straight RGBA8 composited over black (RGB·alpha/255, alpha 255): images with alpha compared
/// where they are seen, without the noise of RGB divided by a tiny alpha.
inline std::vector<std::uint8_t> over_black(const std::vector<std::uint8_t>& rgba) {
  std::vector<std::uint8_t> out(rgba.size());
  for (std::size_t i = 0; i + 3 < rgba.size(); i += 4) {
    for (std::size_t c = 0; c < 3; ++c)
      out[i + c] = static_cast<std::uint8_t>(std::lround(rgba[i + c] * static_cast<double>(rgba[i + 3]) / 255.0));
    out[i + 3] = 255;
  }
  return out;
}

/// The alpha channel as a grey RGBA8 image (for compare_images).
inline std::vector<std::uint8_t> alpha_as_grey(const std::vector<std::uint8_t>& rgba) {
  std::vector<std::uint8_t> out(rgba.size());
  for (std::size_t i = 0; i + 3 < rgba.size(); i += 4) out[i] = out[i + 1] = out[i + 2] = rgba[i + 3], out[i + 3] = 255;
  return out;
}

}  // namespace gemflow::flame::testing
