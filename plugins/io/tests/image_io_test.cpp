// PNG reading and writing: exact 8-bit round trips, the sRGB conversion of linear images against
// values worked out by hand, the header written, and hostile files refused with the file named.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cmath>
#include <cstdint>
#include <stdexcept>
#include <string>

#include "gemflow/io/image_io.hpp"
#include "gemflow/testing.hpp"
#include "io_test_support.hpp"

namespace gemflow::io {
namespace {

using testing::error_of;
using testing::slurp;
using testing::write_temp;

// Not a shared folder that another test may or may not have made (ctest runs each test alone).
std::string temp_path(const std::string& name) {
  return (gemflow::testing::process_temp_dir() / name).string();
}

std::uint32_t be32(const std::string& b, std::size_t at) {
  return (std::uint32_t(std::uint8_t(b[at])) << 24) | (std::uint32_t(std::uint8_t(b[at + 1])) << 16) |
         (std::uint32_t(std::uint8_t(b[at + 2])) << 8) | std::uint32_t(std::uint8_t(b[at + 3]));
}

// CRC-32 of PNG chunks (ISO 3309, as the PNG specification's sample code computes it).
std::uint32_t crc32(const std::string& bytes) {
  std::uint32_t c = 0xffffffffu;
  for (unsigned char b : bytes) {
    c ^= b;
    for (int k = 0; k < 8; ++k) c = (c >> 1) ^ (0xedb88320u & (0u - (c & 1u)));
  }
  return c ^ 0xffffffffu;
}

std::string chunk(const std::string& type, const std::string& data) {
  auto put32 = [](std::uint32_t v) { return std::string{char(v >> 24), char(v >> 16), char(v >> 8), char(v)}; };
  return put32(static_cast<std::uint32_t>(data.size())) + type + data + put32(crc32(type + data));
}

std::string signature() { return std::string("\x89PNG\r\n\x1a\n", 8); }

Image gradient8(std::size_t w, std::size_t h) {
  Image im;
  im.width = w;
  im.height = h;
  im.format = Image::Format::RGBA8;
  im.u8.resize(w * h * 4);
  for (std::size_t i = 0; i < im.u8.size(); ++i) im.u8[i] = static_cast<std::uint8_t>((i * 37 + i / 7) & 0xff);
  return im;
}

TEST(Png, Rgba8RoundTripsExactlyAtEightAndSixteenBits) {
  const Image im = gradient8(13, 7);
  const std::string f8 = temp_path("rt8.png");
  write_png(f8, im, PngDepth::Eight, "rt8.png");
  const Image back = read_png(f8);
  ASSERT_EQ(back.format, Image::Format::RGBA8);
  EXPECT_EQ(back.width, 13u);
  EXPECT_EQ(back.height, 7u);
  EXPECT_EQ(back.u8, im.u8);

  // The header: 13×7, 8 bits, colour type 6 (RGBA), and an sRGB chunk.
  const std::string bytes = slurp(f8);
  ASSERT_EQ(bytes.substr(0, 8), signature());
  EXPECT_EQ(bytes.substr(12, 4), "IHDR");
  EXPECT_EQ(be32(bytes, 16), 13u);
  EXPECT_EQ(be32(bytes, 20), 7u);
  EXPECT_EQ(int(bytes[24]), 8);
  EXPECT_EQ(int(bytes[25]), 6);
  EXPECT_NE(bytes.find("sRGB"), std::string::npos);

  const std::string f16 = temp_path("rt16.png");
  write_png(f16, im, PngDepth::Sixteen, "rt16.png");
  const std::string b16 = slurp(f16);
  EXPECT_EQ(int(b16[24]), 16);
  // Read back as linear float: re-encoding to sRGB at 8 bits gives the original samples.
  const Image lin = read_png(f16);
  ASSERT_EQ(lin.format, Image::Format::RGBA32F);
  for (std::size_t i = 0; i < lin.pixels(); ++i) {
    const double a = lin.f32[i * 4 + 3];
    EXPECT_EQ(std::lround(a * 255.0), im.u8[i * 4 + 3]) << "alpha of pixel " << i;
    if (im.u8[i * 4 + 3] < 8) continue;  // premultiplied by a tiny alpha: the colour keeps few bits
    for (int c = 0; c < 3; ++c)
      EXPECT_EQ(std::lround(srgb_encode(lin.f32[i * 4 + c] / a) * 255.0), im.u8[i * 4 + c])
          << "pixel " << i << " channel " << c;
  }
}

TEST(Png, LinearFloatIsUnpremultipliedAndSrgbEncoded) {
  // sRGB of linear 0.5 is 0.735357 (IEC 61966-2-1): 187.52 → 188 at 8 bits, 48192 at 16 bits.
  EXPECT_NEAR(srgb_encode(0.5), 0.735357, 1e-6);
  EXPECT_NEAR(srgb_decode(srgb_encode(0.2)), 0.2, 1e-12);
  EXPECT_NEAR(srgb_encode(0.002), 0.02584, 1e-12);  // the linear segment
  Image im;
  im.width = 3;
  im.height = 1;
  im.f32 = {0.25f, 0.25f, 0.25f, 0.5f,   // 50 % grey at half coverage, premultiplied
            2.0f,  0.0f,  1.0f,  1.0f,   // red above 1 clips to 255
            0.0f,  0.0f,  0.0f,  0.0f};  // transparent black
  const std::string f = temp_path("lin.png");
  write_png(f, im, PngDepth::Eight, "lin.png");
  const Image back = read_png(f);
  ASSERT_EQ(back.format, Image::Format::RGBA8);
  const std::vector<std::uint8_t> expected = {188, 188, 188, 128, 255, 0, 255, 255, 0, 0, 0, 0};
  EXPECT_EQ(back.u8, expected);

  write_png(f, im, PngDepth::Sixteen, "lin.png");
  const Image lin = read_png(f);
  ASSERT_EQ(lin.format, Image::Format::RGBA32F);
  EXPECT_NEAR(lin.f32[0], 0.25, 2e-5);
  EXPECT_NEAR(lin.f32[3], 0.5, 2e-5);
  EXPECT_NEAR(lin.f32[4], 1.0, 2e-5);
  EXPECT_NEAR(lin.f32[6], 1.0, 2e-5);
}

TEST(Png, InvalidImagesAreRefusedWithTheReason) {
  Image empty;
  EXPECT_CONTAINS(error_of([&] { write_png(temp_path("e.png"), empty, PngDepth::Eight, "e.png"); }),
                  "e.png: the image is empty (0×0)");
  Image nan;
  nan.width = 1;
  nan.height = 1;
  nan.f32 = {0.0f, NAN, 0.0f, 1.0f};
  EXPECT_CONTAINS(error_of([&] { write_png(temp_path("n.png"), nan, PngDepth::Eight, "n.png"); }),
                  "invalid image: pixel (0, 0): green is nan");
  Image wide;
  wide.width = kMaxImageSide + 1;
  wide.height = 0;
  EXPECT_CONTAINS(error_of([&] { write_png(temp_path("w.png"), wide, PngDepth::Eight, "w.png"); }), "empty");
}

// A full disk gave "input 'image': libpng: Write Error": neither the file nor the reason, and
// blamed on the image. Both places a write fails are covered: inside libpng (an image larger
// than stdio's buffer) and at the final flush (a small one).
TEST(Png, AFullDiskIsNamedWithTheFileAndTheSystemsReason) {
  if (::access("/dev/full", W_OK) != 0) GTEST_SKIP() << "no /dev/full";
  Image noisy;  // incompressible, so that libpng writes far more than stdio buffers
  noisy.width = 256;
  noisy.height = 256;
  noisy.format = Image::Format::RGBA8;
  noisy.u8.resize(256 * 256 * 4);
  std::uint32_t x = 12345;
  for (auto& b : noisy.u8) b = static_cast<std::uint8_t>((x = x * 1664525u + 1013904223u) >> 24);
  for (const Image& im : {noisy, gradient8(2, 2)}) {
    try {
      write_png("/dev/full", im, PngDepth::Eight, "out/picture.png");
      ADD_FAILURE() << "no error for a " << im.width << "×" << im.height << " image";
    } catch (const ParseError& e) {
      ADD_FAILURE() << "a write error reported as a bad image: " << e.what();
    } catch (const std::runtime_error& e) {
      EXPECT_STREQ(e.what(), "cannot write out/picture.png: No space left on device");
    }
  }
}

TEST(Png, HostileFilesNameTheFileAndTheReason) {
  EXPECT_CONTAINS(error_of([] { (void)read_png(write_temp("empty.png", "")); }), "empty.png: the file is empty");
  EXPECT_CONTAINS(error_of([] { (void)read_png(write_temp("text.png", "hello, world")); }), "text.png: not a PNG file");
  EXPECT_CONTAINS(error_of([] { (void)read_png("/nonexistent/x.png"); }), "x.png: cannot open");

  const std::string good = temp_path("good.png");
  write_png(good, gradient8(40, 30), PngDepth::Eight, "good.png");
  const std::string bytes = slurp(good);
  for (const std::size_t cut : {std::size_t{20}, std::size_t{40}, bytes.size() / 2, bytes.size() - 13}) {
    const std::string name = "cut" + std::to_string(cut) + ".png";
    EXPECT_CONTAINS(error_of([&] { (void)read_png(write_temp(name, bytes.substr(0, cut))); }), name + ": corrupt PNG")
        << "cut at " << cut;
  }

  // A valid header declaring 100000×100000 pixels (40 GB at 8 bits): refused before decoding.
  const auto ihdr = [](std::uint32_t w, std::uint32_t h) {
    std::string d;
    for (std::uint32_t v : {w, h}) d += std::string{char(v >> 24), char(v >> 16), char(v >> 8), char(v)};
    d += std::string{8, 6, 0, 0, 0};
    return chunk("IHDR", d);
  };
  const std::string huge = signature() + ihdr(100000, 100000) + chunk("IDAT", "") + chunk("IEND", "");
  EXPECT_CONTAINS(error_of([&] { (void)read_png(write_temp("huge.png", huge)); }),
                  "huge.png: the image is 100000×100000, larger than the 65536 pixels a side read");
  // Within the side limit, but more scanlines than the file could hold at deflate's best ratio
  // (1032:1): refused before the image is allocated, whatever the memory.
  const std::string small = signature() + ihdr(60000, 60000) + chunk("IDAT", "") + chunk("IEND", "");
  EXPECT_CONTAINS(error_of([&] { (void)read_png(write_temp("small.png", small)); }),
                  "small.png: the header announces 60000×60000 pixels, at least 450060000 bytes of scanlines, more "
                  "than the file's " +
                      std::to_string(small.size()) + " bytes can hold compressed");
  // Data enough for that, but not in memory under a 64 MiB limit: named with the size.
  ::setenv("GEMFLOW_MEMORY_LIMIT", "64M", 1);
  const std::string big =
      signature() + ihdr(60000, 60000) + chunk("IDAT", std::string(450000, '\0')) + chunk("IEND", "");
  const std::string e = error_of([&] { (void)read_png(write_temp("big.png", big)); });
  ::unsetenv("GEMFLOW_MEMORY_LIMIT");
  EXPECT_CONTAINS(e, "big.png: a 60000×60000 RGBA image needs");
}

}  // namespace
}  // namespace gemflow::io
