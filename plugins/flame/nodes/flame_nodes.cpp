// flame.read, flame.list, flame.render, flame.render_all.
#include <algorithm>
#include <cstring>
#include <filesystem>
#include <string>
#include <system_error>
#include <vector>

#include <unistd.h>

#include <gemflow/memory.hpp>
#include <gemflow/types.hpp>

#include "flame_types.hpp"
#include "gemflow/flame/render.hpp"
#include "gemflow/flame/render_cuda.hpp"
#include "gemflow/io/image_io.hpp"
#include "register.hpp"

namespace gemflow::flame {
namespace {

Image to_image(const RenderedImage& r) {
  Image im(r.width, r.height, Image::Format::RGBA8);
  std::memcpy(im.u8.data(), r.rgba.data(), r.rgba.size());
  return im;
}

/// One render on the resolved device: the CPU path, or the CUDA path (no silent fallback).
struct RenderRequest {
  Device device;
  cuda::Variant variant = cuda::Variant::Auto;
  RenderOptions options;
};

RenderedImage render_on(const Flame& f, RenderRequest& rq, std::string* variant_used) {
  try {
    if (rq.device.is_cuda()) {
#if GEMFLOW_FLAME_HAVE_CUDA
      cuda::CudaRenderOptions c;
      c.variant = rq.variant;
      c.device = rq.device.index;
      cuda::Variant used = cuda::Variant::Basic;
      auto img = cuda::render_cuda(f, rq.options, c, &used);
      if (variant_used) *variant_used = cuda::variant_name(used);
      return img;
#else
      throw DeviceError("device " + rq.device.str() + ": this build of the flame plugin has no CUDA renderer");
#endif
    }
    if (variant_used) *variant_used = "cpu";
    require_host_memory(cpu_render_bytes(f, rq.options),
                        "flame " + (f.name.empty() ? "#" + std::to_string(f.index) : "'" + f.name + "'") + " at " +
                            std::to_string(f.width) + "×" + std::to_string(f.height) + " (histograms)");
    return render_cpu(f, rq.options);
  } catch (const RenderCancelled&) {
    throw Cancelled();
  } catch (const FlameError& e) {
    throw InputError(e.what());
  } catch (const cuda::CudaError& e) {
    throw DeviceError(e.what());
  }
}

class ReadFlame final : public Node {
 public:
  static NodeInfo info() {
    return {.id = "flame.read",
            .version = 1,
            .title = "Read flame",
            .category = "Fractal flames",
            .doc =
                "Reads a flam3 XML file (flam3, Apophysis, Fractorium, JWildfire, Fr0st): every <flame> element "
                "wherever it sits (bare, <flames>, <sequence>, <test> or another wrapper), with a UTF-8 BOM or "
                "CRLF line ends. Palettes: inline hex <palette>, <color index rgb> lists, or an index into the "
                "standard 701-entry flam3-palettes.xml table (looked for in 'palettes', then $FLAM3_PALETTES, "
                "then /usr/share/flam3/flam3-palettes.xml). Outputs the flame chosen by 'name' (when set) or "
                "'index', and the whole file.",
            .errors =
                "Empty or non-XML text, no <flame>, a flame without xforms, palette or total weight, a "
                "non-number or non-finite attribute, a palette index without a table or out of its range, a "
                "size of 0 or one whose histogram exceeds 24 GiB: one error naming file, line, flame and "
                "attribute. Variations flam3 does not know: an error listing them with the flame and line, "
                "or (strict: false) warnings listing what was dropped. A 'name' or 'index' not in the file.",
            .memory = "The file's text and its flames (about 2 KB per xform).",
            .determinism = "Deterministic.",
            .references = "flam3 3.1 (parser.c, flam3-palettes.xml); Draves & Reckase, The Fractal Flame Algorithm."};
  }
  Output<Flame> flame{this, "flame", "The chosen flame"};
  Output<FlameSet> flames{this, "flames", "Every flame of the file, in document order"};
  PathParam path{this, "path", PathParam::Mode::Read, "flam3 XML file", "", {".flame", ".flam3", ".xml"}};
  Param<std::int64_t> index{this, "index", 0, {.min = 0.0, .doc = "Which flame (0-based, document order)"}};
  Param<std::string> name{this, "name", "", {.doc = "Which flame by its name attribute (wins over 'index' when set)"}};
  Param<bool> strict{this,
                     "strict",
                     true,
                     {.doc = "Unknown variations are an error (true) or dropped with a warning listing them (false)"}};
  // A path parameter, so that the table's content is part of the cache key and the provenance.
  PathParam palettes{this,
                     "palettes",
                     PathParam::Mode::Read,
                     "flam3-palettes.xml for palette indices (relative: to the workflow's folder; empty: "
                     "$FLAM3_PALETTES, then /usr/share/flam3/flam3-palettes.xml)",
                     PortUse::Optional,
                     {".xml"}};

  void execute(NodeContext& ctx) override {
    const auto file = path.value();
    ctx.add_input_file(file);
    ReadOptions o;
    o.strict = *strict;
    o.palettes = palettes.value();
    o.source = file.string();
    o.cancelled = [&ctx] { return ctx.cancelled(); };
    FlameSet set;
    try {
      set = read_flames(file, o);
    } catch (const FlameError& e) {
      throw InputError(e.what());
    } catch (const ReadCancelled&) {
      throw Cancelled();
    }
    // A table found through $FLAM3_PALETTES or Debian's path is not in the node's key: recorded
    // here, for the provenance and so that a cached result counts only while the table is unchanged.
    if (!palettes.given() &&
        std::any_of(set.flames.begin(), set.flames.end(), [](const Flame& f) { return f.palette_index >= 0; }))
      if (const auto table = find_palette_table({})) ctx.add_input_file(*table);
    for (const auto& d : set.dropped) ctx.warn(d);
    std::size_t pick = static_cast<std::size_t>(*index);
    if (!name.value().empty()) {
      bool found = false;
      for (std::size_t i = 0; i < set.flames.size() && !found; ++i)
        if (set.flames[i].name == *name) pick = i, found = true;
      if (!found) {
        std::string names;
        for (std::size_t i = 0; i < set.flames.size() && i < 20; ++i)
          names += (i ? ", '" : "'") + set.flames[i].name + "'";
        throw InputError("parameter 'name': no flame named '" + *name + "' in " + file.string() + " (flames: " + names +
                         (set.flames.size() > 20 ? ", ..." : "") + ")");
      }
    } else if (pick >= set.flames.size()) {
      throw InputError("parameter 'index' = " + std::to_string(pick) + ": " + file.string() + " has " +
                       std::to_string(set.flames.size()) + " flame(s)");
    }
    ctx.record("flames", static_cast<std::int64_t>(set.flames.size()));
    ctx.info("read " + std::to_string(set.flames.size()) + " flame(s); chose #" + std::to_string(pick) + ": " +
             DataType<Flame>::summary(set.flames[pick]));
    flame.set(set.flames[pick]);
    flames.set(std::move(set));
  }
};

class ListFlames final : public Node {
 public:
  static NodeInfo info() {
    return {.id = "flame.list",
            .version = 1,
            .title = "List flames",
            .category = "Fractal flames",
            .doc =
                "One row per flame of a file: index, name, xforms, final (1 when it has a final xform), "
                "width, height (pixels), quality (samples per pixel), line (of its <flame> element).",
            .errors = "None.",
            .memory = "The table (a few hundred bytes per flame).",
            .determinism = "Deterministic."};
  }
  Input<FlameSet> flames{this, "flames", "Flames of a file (flame.read)"};
  Output<Table> table{this, "table", "One row per flame"};

  void execute(NodeContext&) override {
    Table t;
    t.columns = {"index", "name", "xforms", "final", "width", "height", "quality", "line"};
    for (const auto& f : (*flames).flames)
      t.rows.push_back({static_cast<std::int64_t>(f.index), Table::Cell(f.name),
                        static_cast<std::int64_t>(f.xforms.size()), static_cast<std::int64_t>(f.final_xform ? 1 : 0),
                        static_cast<std::int64_t>(f.width), static_cast<std::int64_t>(f.height), f.quality,
                        static_cast<std::int64_t>(f.line)});
    table.set(std::move(t));
  }
};

/// Parameters that flame.render and flame.render_all share.
struct RenderParams : ParamGroup {
  explicit RenderParams(Node* n, Renames r = {})
      : ParamGroup(std::move(r)),
        variant{n,
                name("variant"),
                cuda::Variant::Auto,
                {{cuda::Variant::Basic, "basic"},
                 {cuda::Variant::DivergenceFree, "divergence_free"},
                 {cuda::Variant::Auto, "auto"}},
                {.doc = "CUDA chaos game: basic (one walker per thread), divergence_free (a warp runs one xform, "
                        "points permuted between threads), auto (divergence_free from 5 xforms on, without xaos)"}},
        quality{n,
                name("quality"),
                0.0,
                {.min = 0.0, .max = 1e6, .unit = "samples/pixel", .doc = "Samples per output pixel (0: the flame's)"}},
        supersample{n,
                    name("supersample"),
                    0,
                    {.min = 0.0, .max = 16.0, .doc = "Histogram cells per pixel side (0: the flame's)"}},
        passes{n, name("passes"), 8, {.min = 1.0, .max = 256.0, .doc = "Progressive passes (a preview after each)"}},
        threads{n, name("threads"), 0, {.min = 0.0, .max = 1024.0, .doc = "CPU threads (0 or more than the cores: all)"}},
        earlyclip{n,
                  name("earlyclip"),
                  false,
                  {.doc = "flam3-render's earlyclip: tone map and clamp each supersampled cell before the spatial "
                          "filter (sharper highlights)"}},
        transparency{n,
                     name("transparency"),
                     false,
                     {.doc = "flam3-render's transparency: alpha from the density, no background, RGB straight "
                             "(divided by alpha)"}} {
    done();
  }
  Choice<cuda::Variant> variant;
  Param<double> quality;
  Param<int> supersample;
  Param<int> passes;
  Param<int> threads;
  Param<bool> earlyclip;
  Param<bool> transparency;

  RenderOptions options(std::uint64_t seed) const {
    RenderOptions o;
    o.quality = *quality > 0 ? *quality : -1;
    o.supersample = *supersample > 0 ? *supersample : -1;
    o.seed = seed;
    o.passes = *passes;
    o.threads = *threads;
    o.earlyclip = *earlyclip;
    o.transparency = *transparency;
    return o;
  }
};

class RenderFlame final : public Node {
 public:
  static NodeInfo info() {
    return {.id = "flame.render",
            .version = 1,
            .title = "Render flame",
            .category = "Fractal flames",
            .doc =
                "Renders a flame as flam3 does: chaos game (quality samples per pixel, fuse, xaos, final xform, "
                "opacity), density estimation, log-density tone map (brightness, gamma with its linear "
                "threshold, vibrancy, highlight power, background) and the spatial filter, on the CPU (oneTBB) "
                "or a CUDA device. Progressive: a preview of 'image' after each pass. The image is 8-bit RGBA "
                "with the values flam3-render writes (the flame's gamma is its display encoding): opaque, or "
                "with 'transparency' straight RGB and alpha as flam3-render's PNG holds them.",
            .errors =
                "A flame whose histogram exceeds 24 GiB (size and supersample named); device cuda without a "
                "GPU or a CUDA error (call and reason).",
            .memory =
                "Host: (width·ss + 2g)·(height·ss + 2g)·(32 B per thread + 64 B) for the histograms and the "
                "accumulator (g: filter and estimator gutter); CUDA: 64 B per cell plus 16 B per walker.",
            .determinism =
                "The same flame, parameters and seed give the same bytes on the same device, whatever the "
                "number of CPU threads (integer histograms). CPU and GPU images differ by sampling "
                "noise only.",
            .references =
                "Draves & Reckase, The Fractal Flame Algorithm (2003/2008); flam3 3.1 (rect.c, "
                "filters.c); Schied et al., divergence-free parallel chaos game."};
  }
  Input<Flame> flame{this, "flame", "The flame to render"};
  Output<Image> image{this, "image", "The rendered image (RGBA8, width × height of the flame)"};
  DeviceParam device{this};
  RenderParams render{this};
  SeedParam seed{this};

  void execute(NodeContext& ctx) override {
    const Flame& f = *flame;
    RenderRequest rq;
    rq.device = device.resolve(ctx);
    rq.variant = *render.variant;
    rq.options = render.options(seed.value());
    rq.options.progress = [&](double frac, int pass, int passes) {
      ctx.progress(frac, "pass " + std::to_string(pass) + "/" + std::to_string(passes));
    };
    rq.options.cancelled = [&] { return ctx.cancelled(); };
    // a preview is a density-estimated, tone-mapped image per pass: made only when shown
    if (ctx.previews_wanted())
      rq.options.preview = [&](const RenderedImage& r) { ctx.preview("image", Value::make(to_image(r))); };
    std::string used;
    const RenderedImage r = render_on(f, rq, &used);
    if (rq.variant == cuda::Variant::DivergenceFree && used == "basic")
      ctx.warn("variant divergence_free needs a flame without xaos: rendered with basic");
    ctx.record("iterations", static_cast<std::int64_t>(r.iterations));
    ctx.record("bad_points", static_cast<std::int64_t>(r.bad_points));
    ctx.record("variant", used);
    ctx.record("seconds_iterate", r.seconds_iterate);
    ctx.record("seconds_post", r.seconds_post);
    ctx.info("rendered " + std::to_string(r.width) + "×" + std::to_string(r.height) + " on " + rq.device.str() + " (" +
             used + "): " + std::to_string(r.iterations) + " iterations, " + std::to_string(r.bad_points) +
             " bad points, " + detail::plain_number(r.seconds_iterate + r.seconds_post, 2) + " s");
    image.set(to_image(r));
  }
};

/// The gallery's files are named <prefix><index>.png in the output folder: a prefix with a folder
/// separator would put them elsewhere (a user's `../x_` wrote beside the folder).
bool plain_prefix(const std::string& p) { return p.find_first_of("/\\") == std::string::npos; }

ParamRule prefix_rule() {
  return {.param = "prefix",
          .why = "a file-name prefix, without '/' or '\\': the files go into the run's output folder",
          .holds = [](const std::function<const ParamValue&(const std::string&)>& value_of) {
            const auto* p = std::get_if<std::string>(&value_of("prefix"));
            return p == nullptr || plain_prefix(*p);
          }};
}

class RenderAll final : public Node {
 public:
  static NodeInfo info() {
    return {.id = "flame.render_all",
            .version = 1,
            .title = "Render every flame",
            .category = "Fractal flames",
            .doc =
                "Renders every flame of a file (as flame.render) and writes one 8-bit PNG per flame into the "
                "output folder, named <prefix><index>.png (index with 3 digits); the workflow engine has no "
                "fan-out over a list, so this node is the gallery's loop. Outputs a table of index, name, file, "
                "iterations, bad_points.",
            .errors = "As flame.render, naming the flame; a file that cannot be written; a prefix with a folder "
                      "in it. The PNGs are written when every flame is rendered: a failed or cancelled run "
                      "writes none.",
            .memory = "One render at a time (flame.render's).",
            .determinism = "As flame.render; flame i uses seed + i.",
            .rules = {prefix_rule()}};
  }
  Input<FlameSet> flames{this, "flames", "Flames of a file (flame.read)"};
  Output<Table> table{this, "table", "One row per flame written"};
  DeviceParam device{this};
  RenderParams render{this};
  SeedParam seed{this};
  Param<std::string> prefix{this, "prefix", "flame_", {.doc = "File name prefix, in the run's output folder"}};

  void execute(NodeContext& ctx) override {
    if (!plain_prefix(*prefix))
      throw InputError("parameter 'prefix' = '" + *prefix + "': " + prefix_rule().why);
    const auto& set = *flames;
    Table t;
    t.columns = {"index", "name", "file", "iterations", "bad_points"};
    const std::size_t n = set.flames.size();
    // Each PNG is staged under a hidden name and all take their names at the end, so that a
    // failed or cancelled gallery leaves no file of its own (cli.md: such a node writes nothing).
    struct Staged {
      std::filesystem::path staged, file;
    };
    std::vector<Staged> staged;
    struct Cleanup {
      std::vector<Staged>& s;
      ~Cleanup() {
        std::error_code ec;
        for (const auto& f : s) std::filesystem::remove(f.staged, ec);
      }
    } cleanup{staged};
    for (std::size_t i = 0; i < n; ++i) {
      const Flame& f = set.flames[i];
      RenderRequest rq;
      rq.device = device.resolve(ctx);
      rq.variant = *render.variant;
      rq.options = render.options(seed.value() + i);
      rq.options.progress = [&](double frac, int, int) {
        ctx.progress((static_cast<double>(i) + frac) / static_cast<double>(n),
                     "flame " + std::to_string(i + 1) + "/" + std::to_string(n));
      };
      rq.options.cancelled = [&] { return ctx.cancelled(); };
      const RenderedImage r = render_on(f, rq, nullptr);
      const std::string name = *prefix + index_name(i);
      const std::filesystem::path file = ctx.output_dir() / name;
      const std::filesystem::path part = ctx.output_dir() / ("." + name + ".part" + std::to_string(::getpid()));
      staged.push_back({part, file});
      try {
        io::write_png(part, to_image(r), io::PngDepth::Eight, file.string());
      } catch (const std::exception& e) {
        throw InputError(std::string("flame #") + std::to_string(i) + ": " + e.what());
      }
      t.rows.push_back({static_cast<std::int64_t>(i), Table::Cell(f.name), Table::Cell(name),
                        static_cast<std::int64_t>(r.iterations), static_cast<std::int64_t>(r.bad_points)});
    }
    ctx.throw_if_cancelled();
    std::size_t named = 0;
    try {
      for (; named < staged.size(); ++named) {
        auto& st = staged[named];
        ctx.write_file(st.file, [&](const std::filesystem::path& tmp) { std::filesystem::rename(st.staged, tmp); });
        st.staged.clear();
      }
    } catch (...) {
      // a name another node of this run wrote, a full disk: this gallery's files go too
      std::error_code ec;
      for (std::size_t k = 0; k < named; ++k) std::filesystem::remove(staged[k].file, ec);
      throw;
    }
    ctx.info("wrote " + std::to_string(n) + " PNG file(s)");
    warn_earlier_gallery(ctx, n);
    table.set(std::move(t));
  }

 private:
  static std::string index_name(std::size_t i) {
    char num[32];
    std::snprintf(num, sizeof num, "%03zu.png", i);
    return num;
  }

  /// Files <prefix><index>.png of an earlier, larger gallery in the folder are not this run's: say
  /// so (they are left, as other nodes' earlier outputs are).
  void warn_earlier_gallery(NodeContext& ctx, std::size_t n) const {
    std::vector<std::string> old;
    std::error_code ec;
    for (std::size_t i = n;; ++i) {
      const std::string name = *prefix + index_name(i);
      if (!std::filesystem::is_regular_file(ctx.output_dir() / name, ec)) break;
      old.push_back(name);
    }
    if (old.empty()) return;
    ctx.warn(std::to_string(old.size()) + " file(s) of an earlier gallery are left in the output folder and are not "
             "in this run's table: " + old.front() + (old.size() > 1 ? " … " + old.back() : ""));
  }
};

}  // namespace

void register_flame_nodes(PluginRegistrar& r) {
  r.add_type<Flame>();
  r.add_type<FlameSet>();
  r.add_node<ReadFlame>();
  r.add_node<ListFlames>();
  r.add_node<RenderFlame>();
  r.add_node<RenderAll>();
}

}  // namespace gemflow::flame
