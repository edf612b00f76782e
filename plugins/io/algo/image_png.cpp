// PNG reading and writing through libpng's classic API; see image_io.hpp.
#include <png.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <csetjmp>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iterator>
#include <memory>
#include <stdexcept>
#include <vector>

#include "gemflow/io/errors.hpp"
#include "gemflow/io/image_io.hpp"
#include "gemflow/memory.hpp"

namespace gemflow::io {

double srgb_encode(double v) noexcept {
  v = std::clamp(v, 0.0, 1.0);
  return v <= 0.0031308 ? 12.92 * v : 1.055 * std::pow(v, 1.0 / 2.4) - 0.055;
}

double srgb_decode(double v) noexcept {
  v = std::clamp(v, 0.0, 1.0);
  return v <= 0.04045 ? v / 12.92 : std::pow((v + 0.055) / 1.055, 2.4);
}

namespace {

// The classic write API reports errors by longjmp: everything with a destructor lives in the
// caller, and this function keeps only plain values between setjmp and png_write_end.
struct WriteJob {
  FILE* fp = nullptr;
  std::uint32_t width = 0, height = 0;
  int depth = 8;
  png_bytep* rows = nullptr;
  char error[256] = {};
  int sys_errno = 0;  ///< errno when libpng gave up (its fwrite's reason)
};

void on_png_error(png_structp png, png_const_charp message) {
  auto* job = static_cast<WriteJob*>(png_get_error_ptr(png));
  job->sys_errno = errno;
  std::snprintf(job->error, sizeof job->error, "%s", message);
  png_longjmp(png, 1);
}
void on_png_warning(png_structp, png_const_charp) {}

bool write_rows(WriteJob& job) {
  png_structp png = png_create_write_struct(PNG_LIBPNG_VER_STRING, &job, on_png_error, on_png_warning);
  if (!png) {
    std::snprintf(job.error, sizeof job.error, "libpng could not start a writer");
    return false;
  }
  png_infop info = png_create_info_struct(png);
  if (!info || setjmp(png_jmpbuf(png))) {
    png_destroy_write_struct(&png, info ? &info : nullptr);
    if (!job.error[0]) std::snprintf(job.error, sizeof job.error, "libpng could not start a writer");
    return false;
  }
  png_init_io(png, job.fp);
  png_set_IHDR(png, info, job.width, job.height, job.depth, PNG_COLOR_TYPE_RGB_ALPHA, PNG_INTERLACE_NONE,
               PNG_COMPRESSION_TYPE_DEFAULT, PNG_FILTER_TYPE_DEFAULT);
  png_set_sRGB_gAMA_and_cHRM(png, info, PNG_sRGB_INTENT_PERCEPTUAL);
  png_write_info(png, info);
  png_write_image(png, job.rows);
  png_write_end(png, nullptr);
  png_destroy_write_struct(&png, &info);
  return true;
}

}  // namespace

void write_png(const std::filesystem::path& file, const Image& image, PngDepth depth, const std::string& name) {
  if (image.width == 0 || image.height == 0)
    throw ParseError(name, 0,
                     "the image is empty (" + std::to_string(image.width) + "×" + std::to_string(image.height) +
                         "): PNG needs at least one pixel");
  if (image.width > kMaxImageSide || image.height > kMaxImageSide)
    throw ParseError(name, 0,
                     "the image is " + std::to_string(image.width) + "×" + std::to_string(image.height) +
                         ", larger than the " + std::to_string(kMaxImageSide) + " pixels a side written");
  if (auto bad = image.validate()) throw ParseError(name, 0, "invalid image: " + *bad);

  const std::size_t w = image.width, h = image.height;
  const int bits = static_cast<int>(depth);
  const std::size_t row_bytes = w * 4 * (bits / 8);
  require_host_memory(row_bytes * h, "the " + std::to_string(w) + "×" + std::to_string(h) + " PNG's rows");
  std::vector<png_byte> pixels(row_bytes * h);
  const bool is_float = image.format == Image::Format::RGBA32F;
  const double max = bits == 8 ? 255.0 : 65535.0;
  for (std::size_t i = 0; i < w * h; ++i) {
    unsigned out[4];
    if (!is_float && bits == 8) {
      for (int c = 0; c < 4; ++c) out[c] = image.u8[i * 4 + c];
    } else if (!is_float) {  // 8-bit sRGB widened exactly: v·257 maps 255 to 65535
      for (int c = 0; c < 4; ++c) out[c] = image.u8[i * 4 + c] * 257u;
    } else {
      const float* p = &image.f32[i * 4];
      const double a = std::clamp<double>(p[3], 0.0, 1.0);
      for (int c = 0; c < 3; ++c) {
        const double straight = a > 0.0 ? p[c] / a : 0.0;  // premultiplied → straight alpha
        out[c] = static_cast<unsigned>(std::lround(srgb_encode(straight) * max));
      }
      out[3] = static_cast<unsigned>(std::lround(a * max));
    }
    png_byte* dst = &pixels[i * 4 * (bits / 8)];
    for (int c = 0; c < 4; ++c) {
      if (bits == 8) {
        dst[c] = static_cast<png_byte>(out[c]);
      } else {  // PNG stores 16-bit samples big-endian
        dst[2 * c] = static_cast<png_byte>(out[c] >> 8);
        dst[2 * c + 1] = static_cast<png_byte>(out[c] & 0xffu);
      }
    }
  }
  std::vector<png_bytep> rows(h);
  for (std::size_t y = 0; y < h; ++y) rows[y] = &pixels[y * row_bytes];

  const auto cannot_write = [&](int err) {
    return std::runtime_error("cannot write " + name + ": " + std::strerror(err != 0 ? err : EIO));
  };
  const std::unique_ptr<FILE, int (*)(FILE*)> fp(std::fopen(file.c_str(), "wb"), std::fclose);
  if (!fp) throw cannot_write(errno);
  WriteJob job;
  job.fp = fp.get();
  job.width = static_cast<std::uint32_t>(w);
  job.height = static_cast<std::uint32_t>(h);
  job.depth = bits;
  job.rows = rows.data();
  errno = 0;
  if (!write_rows(job)) {
    // libpng says only "Write Error" when fwrite fails (a full disk): give the system's reason.
    if (std::ferror(fp.get())) throw cannot_write(job.sys_errno);
    throw ParseError(name, 0, std::string("libpng: ") + job.error);
  }
  if (std::fflush(fp.get()) != 0 || std::ferror(fp.get())) throw cannot_write(errno);
}

namespace {

// Reading through the classic API (the simplified API converts 16-bit data with a 2.2 power
// law, not the sRGB curve): as for writing, only plain values live between setjmp and the
// libpng calls, and each function that calls libpng sets its own jump point.
struct ReadJob {
  const png_byte* data = nullptr;
  std::size_t size = 0, at = 0;
  png_structp png = nullptr;
  png_infop info = nullptr;
  std::uint32_t width = 0, height = 0;
  int depth = 8;
  char error[256] = {};
};

void read_bytes(png_structp png, png_bytep out, png_size_t n) {
  auto* job = static_cast<ReadJob*>(png_get_io_ptr(png));
  if (n > job->size - job->at) png_error(png, "the file ends early (truncated)");
  std::memcpy(out, job->data + job->at, n);
  job->at += n;
}

void on_read_error(png_structp png, png_const_charp message) {
  auto* job = static_cast<ReadJob*>(png_get_error_ptr(png));
  std::snprintf(job->error, sizeof job->error, "%s", message);
  png_longjmp(png, 1);
}

// Reads the header and sets the transformations to 8- or 16-bit RGBA rows.
bool read_header(ReadJob& job) {
  job.png = png_create_read_struct(PNG_LIBPNG_VER_STRING, &job, on_read_error, on_png_warning);
  if (!job.png) return false;
  job.info = png_create_info_struct(job.png);
  if (!job.info || setjmp(png_jmpbuf(job.png))) return false;
  png_set_read_fn(job.png, &job, read_bytes);
  png_set_user_limits(job.png, 0x7fffffffu, 0x7fffffffu);  // read_png_memory checks the size itself
  png_set_chunk_malloc_max(job.png, 64u << 20);
  png_read_info(job.png, job.info);
  job.width = png_get_image_width(job.png, job.info);
  job.height = png_get_image_height(job.png, job.info);
  const int type = png_get_color_type(job.png, job.info);
  job.depth = png_get_bit_depth(job.png, job.info) == 16 ? 16 : 8;
  if (type == PNG_COLOR_TYPE_PALETTE) png_set_palette_to_rgb(job.png);
  if (type == PNG_COLOR_TYPE_GRAY && png_get_bit_depth(job.png, job.info) < 8) png_set_expand_gray_1_2_4_to_8(job.png);
  if (png_get_valid(job.png, job.info, PNG_INFO_tRNS)) png_set_tRNS_to_alpha(job.png);
  if (type == PNG_COLOR_TYPE_GRAY || type == PNG_COLOR_TYPE_GRAY_ALPHA) png_set_gray_to_rgb(job.png);
  if (!(type & PNG_COLOR_MASK_ALPHA) && !png_get_valid(job.png, job.info, PNG_INFO_tRNS))
    png_set_add_alpha(job.png, job.depth == 16 ? 0xffff : 0xff, PNG_FILLER_AFTER);
  (void)png_set_interlace_handling(job.png);
  png_read_update_info(job.png, job.info);
  if (png_get_rowbytes(job.png, job.info) != std::size_t{job.width} * 4 * (job.depth / 8)) {
    std::snprintf(job.error, sizeof job.error, "unsupported pixel layout");
    return false;
  }
  return true;
}

bool read_rows(ReadJob& job, png_bytep* rows) {
  if (setjmp(png_jmpbuf(job.png))) return false;
  png_read_image(job.png, rows);
  png_read_end(job.png, nullptr);
  return true;
}

}  // namespace

Image read_png_memory(const void* data, std::size_t size, const std::string& name) {
  static constexpr unsigned char kSignature[8] = {0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n'};
  if (size == 0) throw ParseError(name, 0, "the file is empty");
  if (size < 8 || std::memcmp(data, kSignature, 8) != 0)
    throw ParseError(name, 0, "not a PNG file (its first 8 bytes are not the PNG signature)");
  // The size, named, before libpng (whose limit check says only "Invalid IHDR data").
  const auto* b = static_cast<const png_byte*>(data);
  if (size >= 24 && std::memcmp(b + 12, "IHDR", 4) == 0) {
    const auto be32 = [&](std::size_t at) {
      return (std::uint32_t{b[at]} << 24) | (std::uint32_t{b[at + 1]} << 16) | (std::uint32_t{b[at + 2]} << 8) |
             b[at + 3];
    };
    const std::uint32_t w = be32(16), h = be32(20);
    if (w > kMaxImageSide || h > kMaxImageSide)
      throw ParseError(name, 0,
                       "the image is " + std::to_string(w) + "×" + std::to_string(h) + ", larger than the " +
                           std::to_string(kMaxImageSide) + " pixels a side read");
  }
  ReadJob job;
  job.data = b;
  job.size = size;
  struct Free {
    ReadJob& j;
    ~Free() {
      if (j.png) png_destroy_read_struct(&j.png, j.info ? &j.info : nullptr, nullptr);
    }
  } free_job{job};
  const auto fail = [&](const char* what) {
    return ParseError(name, 0, std::string("corrupt PNG: ") + (job.error[0] ? job.error : what));
  };
  if (!read_header(job)) throw fail("libpng could not read the header");
  // Deflate expands at most 1032:1, so the file bounds the scanlines it can hold (one filter
  // byte and at least one bit per pixel each): a header that announces more is refused before
  // the image is allocated (a 60-byte file announced 16 GiB).
  const double min_raw = static_cast<double>(job.height) * (1.0 + std::ceil(static_cast<double>(job.width) / 8.0));
  if (min_raw > 1032.0 * static_cast<double>(size))
    throw ParseError(name, 0,
                     "the header announces " + std::to_string(job.width) + "×" + std::to_string(job.height) +
                         " pixels, at least " + std::to_string(static_cast<long long>(min_raw)) +
                         " bytes of scanlines, more than the file's " + std::to_string(size) +
                         " bytes can hold compressed (truncated or not a PNG image)");

  // 8-bit files stay 8-bit sRGB (exact); 16-bit ones become linear float so that their
  // precision survives.
  const bool deep = job.depth == 16;
  Image out;
  try {
    out = Image(job.width, job.height, deep ? Image::Format::RGBA32F : Image::Format::RGBA8);
  } catch (const OutOfMemory& e) {
    throw ParseError(name, 0, e.what());
  }
  const std::size_t row_bytes = std::size_t{job.width} * 4 * (job.depth / 8);
  std::vector<png_byte> wide;
  if (deep) wide.resize(row_bytes * job.height);
  std::vector<png_bytep> rows(job.height);
  for (std::size_t y = 0; y < job.height; ++y) rows[y] = deep ? &wide[y * row_bytes] : &out.u8[y * row_bytes];
  if (!read_rows(job, rows.data())) throw fail("libpng could not decode the pixels");
  if (deep) {
    // Samples are big-endian sRGB-encoded with straight alpha: decode and premultiply.
    for (std::size_t i = 0; i < out.pixels(); ++i) {
      const png_byte* p = &wide[i * 8];
      double v[4];
      for (int c = 0; c < 4; ++c) v[c] = ((unsigned{p[2 * c]} << 8) | p[2 * c + 1]) / 65535.0;
      for (int c = 0; c < 3; ++c) out.f32[i * 4 + c] = static_cast<float>(srgb_decode(v[c]) * v[3]);
      out.f32[i * 4 + 3] = static_cast<float>(v[3]);
    }
  }
  return out;
}

Image read_png(const std::filesystem::path& file, const CancelCheck& cancel) {
  const std::string name = file.string();
  std::ifstream in(file, std::ios::binary);
  if (!in) throw ParseError(name, 0, std::string("cannot open: ") + std::strerror(errno));
  std::error_code ec;
  const auto bytes = std::filesystem::file_size(file, ec);
  if (ec) throw ParseError(name, 0, "cannot read its size: " + ec.message());
  // A compressed PNG is at most about 1032× smaller than its pixels: a file this large cannot
  // be a valid image of at most kMaxImageSide² pixels worth reading whole.
  if (bytes > (std::uintmax_t{1} << 34)) throw ParseError(name, 0, "the file is " + std::to_string(bytes) + " bytes");
  require_host_memory(static_cast<std::size_t>(bytes), "reading " + file.filename().string());
  std::vector<char> data(static_cast<std::size_t>(bytes));
  if (!in.read(data.data(), static_cast<std::streamsize>(data.size())))
    throw ParseError(name, 0, "cannot read the whole file");
  if (cancel && cancel()) throw ReadCancelled();
  return read_png_memory(data.data(), data.size(), name);
}

}  // namespace gemflow::io
