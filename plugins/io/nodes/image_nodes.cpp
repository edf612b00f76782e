// io.read_image, io.write_image.
#include <gemflow/types.hpp>

#include "gemflow/io/image_io.hpp"
#include "register.hpp"

namespace gemflow::io {
namespace {

class ReadImage final : public Node {
 public:
  static NodeInfo info() {
    return {.id = "io.read_image",
            .version = 1,
            .title = "Read image",
            .category = "Input/Output",
            .doc =
                "Reads a PNG file of any colour type and bit depth as an RGBA Image. An 8-bit file gives an "
                "RGBA8 image (sRGB, straight alpha, the file's samples unchanged); a 16-bit file gives RGBA32F "
                "(linear light, premultiplied alpha) so that its precision is kept. Grey, palette and RGB files "
                "get opaque alpha.",
            .errors =
                "Not a PNG, truncated or corrupt data (libpng's reason), a side above 65536 pixels, or pixels "
                "that do not fit in memory: each names the file.",
            .memory = "The file and the decoded pixels on the host (4 bytes a pixel at 8 bits, 16 at 16 bits).",
            .determinism = "Deterministic.",
            .references = "W3C PNG Specification (Third Edition); libpng simplified API; IEC 61966-2-1 (sRGB)."};
  }
  Output<Image> image{this, "image", "The image, row 0 at the top"};
  PathParam path{this, "path", PathParam::Mode::Read, "PNG file", "", {".png"}};

  void execute(NodeContext& ctx) override {
    const auto file = path.value();
    ctx.add_input_file(file);
    try {
      Image im = read_png(file, [&ctx] { return ctx.cancelled(); });
      ctx.info("read " + file.filename().string() + ": " + DataType<Image>::summary(im));
      image.set(std::move(im));
    } catch (const ParseError& e) {
      throw to_input_error(e);
    } catch (const ReadCancelled&) {
      throw Cancelled();
    }
  }
};

class WriteImage final : public Node {
 public:
  static NodeInfo info() {
    return {.id = "io.write_image",
            .version = 1,
            .title = "Write image",
            .category = "Input/Output",
            .doc =
                "Writes an Image as an RGBA PNG (with an sRGB chunk), atomically. An RGBA8 image at 8 bits is "
                "written unchanged. A linear RGBA32F image is divided by its alpha and sRGB-encoded; colour "
                "above 1 clips to white (tone-map first: a renderer's output is already tone-mapped). 16 bits "
                "keep smooth gradients of linear data.",
            .errors =
                "An empty image, a side above 65536 pixels, NaN or negative colour, alpha outside [0, 1], or "
                "a file that cannot be written (the system's reason); nothing is left behind.",
            .memory = "The encoded rows on the host (4 or 8 bytes a pixel).",
            .determinism = "Deterministic: the same image gives the same file.",
            .references = "W3C PNG Specification (Third Edition); libpng manual; IEC 61966-2-1 (sRGB)."};
  }
  Input<Image> image{this, "image", "The image to write"};
  PathParam path{this, "path",  PathParam::Mode::Write, "Output .png file (relative: to the run's output folder)",
                 "",   {".png"}};
  Choice<PngDepth> bit_depth{this,
                             "bit_depth",
                             PngDepth::Eight,
                             {{PngDepth::Eight, "8"}, {PngDepth::Sixteen, "16"}},
                             {.doc = "Bits per sample: 8 (what screens show) or 16 (smooth gradients, editing)"}};

  void execute(NodeContext& ctx) override {
    const auto file = path.value();
    const Image& im = *image;
    ctx.write_file(file, [&](const std::filesystem::path& tmp) {
      try {
        write_png(tmp, im, *bit_depth, file.string());
      } catch (const ParseError& e) {
        throw InputError("input 'image': " + printable(e.message()));
      }
    });
    ctx.info("wrote " + file.string() + " (" + std::to_string(im.width) + "×" + std::to_string(im.height) + ", " +
             std::to_string(static_cast<int>(*bit_depth)) + "-bit RGBA)");
  }
};

}  // namespace

void register_image_nodes(PluginRegistrar& r) {
  r.add_node<ReadImage>();
  r.add_node<WriteImage>();
}

}  // namespace gemflow::io
