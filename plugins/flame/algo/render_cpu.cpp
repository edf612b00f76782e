// CPU renderer: oneTBB chaos game into per-thread integer histograms, merged after each pass,
// then density estimation, spatial filter and tone map (render.hpp describes each stage).
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>

#include <sys/mman.h>

#include <cstdlib>
#include <cstring>
#include <memory>
#include <mutex>
#include <optional>
#include <utility>

#include <tbb/blocked_range.h>
#include <tbb/enumerable_thread_specific.h>
#include <tbb/global_control.h>
#include <tbb/parallel_for.h>
#include <tbb/info.h>
#include <tbb/task_arena.h>

#include "gemflow/flame/detail/postprocess.hpp"
#include "gemflow/flame/detail/prepare.hpp"
#include "gemflow/flame/render.hpp"

namespace gemflow::flame {

namespace detail {

double filter_value(int shape, double x) {
  const double pi = 3.14159265358979323846;
  switch (static_cast<FilterShape>(shape)) {
    case FilterShape::Gaussian: return std::exp(-2.0 * x * x) * std::sqrt(2.0 / pi);
    case FilterShape::Hermite: {
      const double t = std::fabs(x);
      return t < 1 ? (2 * t - 3) * t * t + 1 : 0;
    }
    case FilterShape::Box: return (x > -0.5 && x <= 0.5) ? 1.0 : 0.0;
    case FilterShape::Triangle: {
      const double t = std::fabs(x);
      return t < 1 ? 1 - t : 0;
    }
    case FilterShape::Bell: {
      const double t = std::fabs(x);
      if (t < 0.5) return 0.75 - t * t;
      if (t < 1.5) return 0.5 * (t - 1.5) * (t - 1.5);
      return 0;
    }
    case FilterShape::BSpline: {
      const double t = std::fabs(x);
      if (t < 1) return 0.5 * t * t * t - t * t + 2.0 / 3.0;
      if (t < 2) return (2 - t) * (2 - t) * (2 - t) / 6.0;
      return 0;
    }
    case FilterShape::Mitchell: {
      const double b = 1.0 / 3.0, c = 1.0 / 3.0, t = std::fabs(x), tt = t * t;
      if (t < 1) return ((12 - 9 * b - 6 * c) * t * tt + (-18 + 12 * b + 6 * c) * tt + (6 - 2 * b)) / 6.0;
      if (t < 2)
        return ((-b - 6 * c) * t * tt + (6 * b + 30 * c) * tt + (-12 * b - 48 * c) * t + (8 * b + 24 * c)) / 6.0;
      return 0;
    }
    case FilterShape::Blackman: return sinc(x) * (0.42 + 0.5 * std::cos(pi * x) + 0.08 * std::cos(2 * pi * x));
    case FilterShape::Catrom: {
      if (x < -2) return 0;
      if (x < -1) return 0.5 * (4 + x * (8 + x * (5 + x)));
      if (x < 0) return 0.5 * (2 + x * x * (-5 - 3 * x));
      if (x < 1) return 0.5 * (2 + x * x * (-5 + 3 * x));
      if (x < 2) return 0.5 * (4 + x * (-8 + x * (5 - x)));
      return 0;
    }
    case FilterShape::Hanning: return sinc(x) * (0.5 + 0.5 * std::cos(pi * x));
    case FilterShape::Hamming: return sinc(x) * (0.54 + 0.46 * std::cos(pi * x));
    case FilterShape::Lanczos3: {
      const double t = std::fabs(x);
      return t < 3 ? sinc(t) * sinc(t / 3) * sinc(x / 3) : 0;
    }
    case FilterShape::Lanczos2: {
      const double t = std::fabs(x);
      return t < 2 ? sinc(t) * sinc(t / 2) * sinc(x / 2) : 0;
    }
    case FilterShape::Quadratic: {
      if (x < -1.5) return 0;
      if (x < -0.5) return 0.5 * (x + 1.5) * (x + 1.5);
      if (x < 0.5) return 0.75 - x * x;
      if (x < 1.5) return 0.5 * (x - 1.5) * (x - 1.5);
      return 0;
    }
  }
  return 0;
}

DeKernels::DeKernels(const PostParams& p) {
  if (!p.de) return;
  // Index k gives radius max/k^curve until it reaches min: kernels 1..kmax.
  const double kmax_d = std::pow(p.de_max / p.de_min, 1.0 / p.de_curve);
  kmax = static_cast<int>(std::min(std::ceil(kmax_d), 200000.0));
  if (kmax < 1) kmax = 1;
  offsets.resize(static_cast<std::size_t>(kmax) + 2);
  radius.resize(static_cast<std::size_t>(kmax) + 1);
  row_offsets.resize(static_cast<std::size_t>(kmax) + 1);
  for (int k = 1; k <= kmax; ++k) {
    double h = p.de_max / std::pow(static_cast<double>(k), p.de_curve);
    if (h < p.de_min) h = p.de_min;
    const int r = static_cast<int>(std::ceil(h)) - 1;
    radius[static_cast<std::size_t>(k)] = r;
    offsets[static_cast<std::size_t>(k)] = coefs.size();
    const std::size_t base = coefs.size();
    double sum = 0;
    for (int j = -r; j <= r; ++j)
      for (int i = -r; i <= r; ++i) {
        const double d = std::sqrt(static_cast<double>(i * i + j * j)) / h;
        const double v = d <= 1.0 ? filter_value(0, 1.5 * d) : 0.0;  // flam3: gaussian, support 1.5
        coefs.push_back(v);
        sum += v;
      }
    for (std::size_t q = base; q < coefs.size(); ++q) coefs[q] /= sum;
    row_offsets[static_cast<std::size_t>(k)] = row_extent.size();
    const int side = 2 * r + 1;
    for (int j = 0; j < side; ++j) {
      int e = -1;
      for (int i = 0; i < side; ++i)
        if (coefs[base + static_cast<std::size_t>(j * side + i)] != 0) e = std::max(e, std::abs(i - r));
      row_extent.push_back(e);
    }
  }
  offsets[static_cast<std::size_t>(kmax) + 1] = coefs.size();
}

int DeKernels::index(double n) const {
  const double k = de_index(n);
  return k >= kmax ? kmax : static_cast<int>(k);
}

namespace {

/// The post-processing stages of one histogram (Hist: a u64 pointer or a SplitHistView, indexed as
/// hist[cell·4 + channel]); the workers poll cancel once per row (a large density estimation
/// takes seconds).
template <class Hist>
class PostProcess {
 public:
  PostProcess(const Hist& hist, const Flame& f, const PostParams& p, const std::function<bool()>& cancelled)
      : hist_(hist),
        f_(f),
        p_(p),
        cancelled_(cancelled),
        hw_(p.shape.width),
        hh_(p.shape.height),
        acc_(hw_ * hh_ * 4, 0.0) {}

  std::vector<std::uint8_t> run() {
    if (p_.de) density_estimation();
    else log_density_all();
    check();
    if (p_.earlyclip) tone_cells();
    auto out = filter_and_tone();
    check();
    return out;
  }

 private:
  void load(std::size_t cell, std::uint64_t h[4]) const {
    for (std::size_t q = 0; q < 4; ++q) h[q] = hist_[cell * 4 + q];
  }

  bool row_cancelled() {
    if (stop_.load(std::memory_order_relaxed)) return true;
    if (cancelled_ && cancelled_()) stop_ = true;
    return stop_.load(std::memory_order_relaxed);
  }
  void check() {
    if (stop_ || (cancelled_ && cancelled_())) throw RenderCancelled();
  }

  void log_density_all() {
    tbb::parallel_for(tbb::blocked_range<std::size_t>(0, hh_), [&](const tbb::blocked_range<std::size_t>& rows) {
      for (std::size_t y = rows.begin(); y < rows.end(); ++y)
        for (std::size_t x = 0; x < hw_; ++x) {
          std::uint64_t h[4];
          load(y * hw_ + x, h);
          log_density(h, p_.k1, p_.k2, &acc_[(y * hw_ + x) * 4]);
        }
    });
  }

  /// Hits in the ss×ss neighbourhood of a cell (flam3 scales it by (ss/(ss+1))² for even ss).
  double neighbourhood_density(std::size_t x, std::size_t y) const {
    const int half = p_.ss / 2;
    double n = 0;
    for (int j = -half; j <= half; ++j)
      for (int i = -half; i <= half; ++i) {
        const long yy = static_cast<long>(y) + j, xx = static_cast<long>(x) + i;
        if (yy < 0 || xx < 0 || yy >= static_cast<long>(hh_) || xx >= static_cast<long>(hw_)) continue;
        n += static_cast<double>(hist_[(static_cast<std::size_t>(yy) * hw_ + static_cast<std::size_t>(xx)) * 4 + 3]) /
             kFixedOne;
      }
    return p_.ss % 2 == 0 ? n * std::pow(p_.ss / (p_.ss + 1.0), 2.0) : n;
  }

  /// Spreads the log-density value of cell (x, y) with its density's kernel: per row, only the
  /// taps within the disc and the histogram (the same adds, in the same order, as over the whole
  /// square: the skipped taps are zero).
  void spread(const DeKernels& kernels, std::size_t x, std::size_t y) {
    if (hist_[(y * hw_ + x) * 4 + 3] == 0) return;
    std::uint64_t h[4];
    load(y * hw_ + x, h);
    double v[4];
    log_density(h, p_.k1, p_.k2, v);
    const auto k = static_cast<std::size_t>(kernels.index(neighbourhood_density(x, y)));
    const int r = kernels.radius[k];
    const double* c = &kernels.coefs[kernels.offsets[k]];
    const int* extent = &kernels.row_extent[kernels.row_offsets[k]];
    const int side = 2 * r + 1;
    const long xl = static_cast<long>(x), yl = static_cast<long>(y), W = static_cast<long>(hw_);
    for (int j = -r; j <= r; ++j) {
      const long yy = yl + j;
      const int e = extent[j + r];
      if (yy < 0 || yy >= static_cast<long>(hh_) || e < 0) continue;
      const long i0 = std::max<long>(-e, -xl), i1 = std::min<long>(e, W - 1 - xl);
      const double* crow = c + (j + r) * side + r;
      double* arow = &acc_[(static_cast<std::size_t>(yy) * hw_ + x) * 4];
      for (long i = i0; i <= i1; ++i) {
        const double w = crow[i];
        double* a = arow + 4 * i;
        a[0] += w * v[0];
        a[1] += w * v[1];
        a[2] += w * v[2];
        a[3] += w * v[3];
      }
    }
  }

  /// Two phases over bands of 2·rmax + 2 rows: the bands of one phase write disjoint rows and
  /// each band adds in a fixed order, so the result does not depend on the number of threads.
  void density_estimation() {
    const DeKernels kernels(p_);
    const auto edge = static_cast<std::size_t>(p_.ss - 1);  // flam3 leaves ss − 1 cells at the edge
    const std::size_t band = 2 * static_cast<std::size_t>(std::ceil(p_.de_max)) + 2;
    const std::size_t y0 = edge, y1 = hh_ > edge ? hh_ - edge : 0, x0 = edge, x1 = hw_ > edge ? hw_ - edge : 0;
    const std::size_t nbands = y1 > y0 ? (y1 - y0 + band - 1) / band : 0;
    for (std::size_t phase = 0; phase < 2; ++phase) {
      check();
      tbb::parallel_for(std::size_t(0), (nbands + 1 - phase) / 2, [&](std::size_t bi) {
        const std::size_t ya = y0 + (2 * bi + phase) * band, yb = std::min(y1, ya + band);
        for (std::size_t y = ya; y < yb && !row_cancelled(); ++y)
          for (std::size_t x = x0; x < x1; ++x) spread(kernels, x, y);
      });
    }
  }

  /// earlyclip: every accumulator cell replaced by its tone values (clamped RGB, alpha).
  void tone_cells() {
    tbb::parallel_for(tbb::blocked_range<std::size_t>(0, hh_), [&](const tbb::blocked_range<std::size_t>& rows) {
      for (std::size_t y = rows.begin(); y < rows.end(); ++y)
        for (std::size_t x = 0; x < hw_; ++x) {
          double* a = &acc_[(y * hw_ + x) * 4];
          double v[4];
          tone_values(a, p_.tone, v);
          for (int q = 0; q < 4; ++q) a[q] = v[q];
        }
    });
    check();
  }

  /// Spatial filter and tone map per output pixel (earlyclip: the filter of the toned cells).
  std::vector<std::uint8_t> filter_and_tone() {
    const std::size_t fw = p_.shape.filter_width, W = f_.width, H = f_.height;
    const auto ss = static_cast<std::size_t>(p_.ss);
    std::vector<std::uint8_t> out(W * H * 4);
    tbb::parallel_for(tbb::blocked_range<std::size_t>(0, H), [&](const tbb::blocked_range<std::size_t>& rows) {
      for (std::size_t j = rows.begin(); j < rows.end() && !row_cancelled(); ++j)
        for (std::size_t i = 0; i < W; ++i) {
          const std::size_t xs = p_.shape.de_offset + i * ss, ys = p_.shape.de_offset + j * ss;
          double t[4] = {0, 0, 0, 0};
          for (std::size_t jj = 0; jj < fw; ++jj)
            for (std::size_t ii = 0; ii < fw; ++ii) {
              const double k = p_.filter[jj * fw + ii];
              const double* a = &acc_[((ys + jj) * hw_ + xs + ii) * 4];
              for (int q = 0; q < 4; ++q) t[q] += k * a[q];
            }
          double v[4];
          if (p_.earlyclip) {
            for (int q = 0; q < 4; ++q) v[q] = t[q];
          } else {
            tone_values(t, p_.tone, v);
          }
          to_rgba8(v, p_.tone, &out[(j * W + i) * 4]);
        }
    });
    return out;
  }

  const Hist hist_;
  const Flame& f_;
  const PostParams& p_;
  const std::function<bool()>& cancelled_;
  std::size_t hw_, hh_;
  std::vector<double> acc_;
  std::atomic<bool> stop_{false};
};

}  // namespace

std::vector<std::uint8_t> postprocess(const std::uint64_t* hist, const Flame& f, const PostParams& p,
                                      const std::function<bool()>& cancelled) {
  return PostProcess<const std::uint64_t*>(hist, f, p, cancelled).run();
}

std::vector<std::uint8_t> postprocess(const SplitHistView& hist, const Flame& f, const PostParams& p,
                                      const std::function<bool()>& cancelled) {
  return PostProcess<SplitHistView>(hist, f, p, cancelled).run();
}

}  // namespace detail

namespace {

/// `values` u32 of fresh anonymous memory: zero without a pass of ours (the kernel zeroes each
/// page at its first touch, so pages never touched cost nothing), 2 MiB-aligned; `huge`: advised
/// to use huge pages (plotting is a random access per sample, and at 1080p the TLB misses of
/// 4 KiB pages cost more than the cache misses).
class ZeroWords {
 public:
  ZeroWords(std::size_t values, bool huge) {
    constexpr std::size_t kHuge = 2u << 20;
    bytes_ = (values * sizeof(unsigned) + kHuge - 1) / kHuge * kHuge + kHuge;
    base_ = ::mmap(nullptr, bytes_, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (base_ == MAP_FAILED) throw std::bad_alloc();
    const auto a = (reinterpret_cast<std::uintptr_t>(base_) + kHuge - 1) / kHuge * kHuge;
    data_ = reinterpret_cast<unsigned*>(a);
    if (huge) ::madvise(data_, bytes_ - kHuge, MADV_HUGEPAGE);
  }
  ~ZeroWords() {
    if (base_) ::munmap(base_, bytes_);
  }
  ZeroWords(ZeroWords&& o) noexcept
      : base_(std::exchange(o.base_, nullptr)), data_(std::exchange(o.data_, nullptr)), bytes_(o.bytes_) {}
  ZeroWords(const ZeroWords&) = delete;
  ZeroWords& operator=(const ZeroWords&) = delete;
  ZeroWords& operator=(ZeroWords&&) = delete;
  unsigned* data() const { return data_; }

 private:
  void* base_ = nullptr;
  unsigned* data_ = nullptr;
  std::size_t bytes_ = 0;
};

/// One thread's histogram as split words (detail/split_hist.hpp): the low words, which every
/// plot writes (16 B per cell: half the memory to fault in and to cache of u64 cells), and the
/// high words, written once per wrap of a low word, so that most of their pages are never
/// touched.
struct ThreadHistogram {
  explicit ThreadHistogram(std::size_t values) : lo(values, true), hi(values, false) {}
  ZeroWords lo, hi;
};

}  // namespace

Flame apply_overrides(const Flame& flame, const RenderOptions& o) {
  Flame f = flame;
  if (o.quality > 0) f.quality = o.quality;
  f.quality *= o.quality_scale;
  if (o.supersample >= 1) f.supersample = o.supersample;
  const std::string where = f.source + ":" + std::to_string(f.line) + ": flame " +
                            (f.name.empty() ? std::string() : "'" + f.name + "' ") + "(#" + std::to_string(f.index) +
                            "): ";
  if (!(f.quality > 0) || !std::isfinite(f.quality))
    throw FlameError(where + "quality " + std::to_string(f.quality) + " is not > 0");
  if (f.supersample < 1 || f.supersample > 16)
    throw FlameError(where + "supersample " + std::to_string(f.supersample) + " is not in 1..16");
  const auto s = histogram_shape(f);
  const double bytes = static_cast<double>(s.width) * static_cast<double>(s.height) * 64.0;
  if (bytes > static_cast<double>(kMaxRenderBytes))
    throw FlameError(where + "size " + std::to_string(f.width) + " × " + std::to_string(f.height) + " at supersample " +
                     std::to_string(f.supersample) + " needs " +
                     std::to_string(static_cast<long long>(bytes / 1048576)) + " MiB, over the " +
                     std::to_string(kMaxRenderBytes >> 20) + " MiB limit");
  const double samples =
      f.quality * std::pow(4.0, f.zoom) * static_cast<double>(f.width) * static_cast<double>(f.height);
  if (samples > 1e15)
    throw FlameError(where + "quality × size asks for " + std::to_string(samples) + " samples (limit 1e15)");
  return f;
}

namespace {
int render_threads(const RenderOptions& opt, std::size_t cells) {
  // more threads than the machine runs at once would only add histograms (a user's threads=1024
  // was refused for the memory of 1024 of them)
  const int cores = std::max(1, tbb::info::default_concurrency());
  const int threads = opt.threads > 0 ? std::min(opt.threads, cores) : tbb::this_task_arena::max_concurrency();
  // Per-thread histograms: bounded by the memory limit (fewer threads rather than more memory).
  const double per_hist = static_cast<double>(cells) * 32.0;
  const int max_hists = std::max(1, static_cast<int>(static_cast<double>(kMaxRenderBytes) / 2 / per_hist));
  return std::min(threads, max_hists);
}
}  // namespace

std::size_t cpu_render_bytes(const Flame& flame, const RenderOptions& opt) {
  const Flame f = apply_overrides(flame, opt);
  const auto s = histogram_shape(f);
  const std::size_t cells = s.width * s.height;
  return cells * 32 * static_cast<std::size_t>(render_threads(opt, cells) + 2) + f.width * f.height * 4;
}

namespace {

/// One CPU render: the walkers split into passes, per-thread histograms kept over the passes
/// and summed (into `total_` for a preview, into the first thread's at the end; exact integers:
/// the sum does not depend on which thread ran which walker).
class CpuRender {
 public:
  using Clock = std::chrono::steady_clock;

  CpuRender(const Flame& flame, const RenderOptions& opt)
      : opt_(opt),
        f_(apply_overrides(flame, opt)),
        P_(detail::prepare<double>(f_, {opt.earlyclip, opt.transparency})),
        cells_(P_.post.shape.width * P_.post.shape.height),
        arena_(render_threads(opt, cells_)),
        walkers_((P_.samples + kWalkerIterations - 1) / kWalkerIterations),
        local_([this] { return ThreadHistogram(cells_ * 4); }) {}

  RenderedImage run() {
    const int passes = std::max(1, std::min<int>(opt_.passes, static_cast<int>(std::max<std::uint64_t>(walkers_, 1))));
    const auto t0 = Clock::now();
    for (int pass = 0; pass < passes; ++pass) {
      run_walkers(walkers_ * static_cast<std::uint64_t>(pass) / static_cast<std::uint64_t>(passes),
                  walkers_ * static_cast<std::uint64_t>(pass + 1) / static_cast<std::uint64_t>(passes), pass, passes);
      if (opt_.progress) opt_.progress(static_cast<double>(pass + 1) / passes, pass + 1, passes);
      if (opt_.preview && pass + 1 < passes) preview();
    }
    const auto hist = final_sum();
    const auto t1 = Clock::now();
    RenderedImage img;
    img.width = f_.width;
    img.height = f_.height;
    img.rgba = arena_.execute([&] {
      return hist ? detail::postprocess(*hist, f_, P_.post, opt_.cancelled)
                  : detail::postprocess(total_.data(), f_, P_.post, opt_.cancelled);
    });
    img.iterations = P_.samples;
    img.bad_points = bad_;
    img.seconds_iterate = std::chrono::duration<double>(t1 - t0).count() - post_seconds_;
    img.seconds_post = std::chrono::duration<double>(Clock::now() - t1).count();
    return img;
  }

 private:
  /// Walkers [w0, w1) on the arena's threads; cancel is polled before every walker.
  // One pass: walkers [w0, w1). Progress also comes from inside the pass, at each 1/kSteps of
  // its walkers (a pass of a large flame takes seconds on a few cores: one report per pass left
  // the node silent for 3–10 s), from one worker at a time.
  void run_walkers(std::uint64_t w0, std::uint64_t w1, int pass, int passes) {
    constexpr std::uint64_t kSteps = 64;
    const std::uint64_t count = w1 - w0;
    std::atomic<std::uint64_t> done{0}, reported{0};
    const auto report = [&](std::uint64_t now_done) {
      const std::uint64_t step = now_done * kSteps / count;
      if (step <= reported.load(std::memory_order_relaxed) || step >= kSteps) return;
      std::unique_lock lock(progress_mutex_, std::try_to_lock);  // busy: a later step reports
      if (!lock || step <= reported.load(std::memory_order_relaxed)) return;
      reported.store(step, std::memory_order_relaxed);
      opt_.progress((pass + static_cast<double>(step) / kSteps) / passes, pass + 1, passes);
    };
    arena_.execute([&] {
      tbb::parallel_for(tbb::blocked_range<std::uint64_t>(w0, w1, 1), [&](const tbb::blocked_range<std::uint64_t>& r) {
        auto& h = local_.local();
        for (std::uint64_t w = r.begin(); w < r.end() && !cancelled(); ++w) {
          const std::uint64_t iters =
              w + 1 == walkers_ ? P_.samples - w * kWalkerIterations : std::min(kWalkerIterations, P_.samples);
          bad_ += detail::run_walker(P_, opt_.seed, w, iters, h.lo.data(), h.hi.data());
          const std::uint64_t now_done = done.fetch_add(1, std::memory_order_relaxed) + 1;
          if (opt_.progress) report(now_done);
        }
      });
    });
    if (stop_) throw RenderCancelled();
  }

  bool cancelled() {
    if (!stop_.load(std::memory_order_relaxed) && opt_.cancelled && opt_.cancelled()) stop_ = true;
    return stop_.load(std::memory_order_relaxed);
  }

  /// Σ over the threads' histograms of value i (exact: integers).
  static std::uint64_t sum_at(const std::vector<detail::SplitHistView>& hs, std::size_t i) {
    std::uint64_t sum = 0;
    for (const auto& h : hs) sum += h[i];
    return sum;
  }

  void for_each_value(const std::function<void(std::size_t, std::size_t)>& body) {
    arena_.execute([&] {
      tbb::parallel_for(tbb::blocked_range<std::size_t>(0, cells_ * 4),
                        [&](const tbb::blocked_range<std::size_t>& r) { body(r.begin(), r.end()); });
    });
  }

  std::vector<detail::SplitHistView> thread_histograms() {
    std::vector<detail::SplitHistView> hs;
    for (auto& h : local_) hs.push_back({h.lo.data(), h.hi.data()});
    return hs;
  }

  /// The histogram of the whole render: the other threads' added into the first thread's split
  /// words (no buffer more: at 1080p and supersample 2 a u64 histogram is 270 MB of fresh pages
  /// to fault in); a high word is written only where it changes. Empty (no thread plotted):
  /// zeros in total_.
  std::optional<detail::SplitHistView> final_sum() {
    const auto hs = thread_histograms();
    if (hs.empty()) {
      total_.assign(cells_ * 4, 0);
      return std::nullopt;
    }
    if (hs.size() > 1) {
      auto& first = *local_.begin();
      unsigned *lo = first.lo.data(), *hi = first.hi.data();
      for_each_value([&](std::size_t b, std::size_t e) {
        for (std::size_t i = b; i < e; ++i) {
          const std::uint64_t sum = sum_at(hs, i);
          lo[i] = static_cast<unsigned>(sum);
          const auto h = static_cast<unsigned>(sum >> 32);
          if (hi[i] != h) hi[i] = h;
        }
      });
    }
    return hs.front();
  }

  void preview() {
    const auto tp = Clock::now();
    total_.resize(cells_ * 4);
    const auto hs = thread_histograms();
    for_each_value([&](std::size_t b, std::size_t e) {
      for (std::size_t i = b; i < e; ++i) total_[i] = sum_at(hs, i);
    });
    RenderedImage prev;
    prev.width = f_.width;
    prev.height = f_.height;
    prev.rgba = detail::postprocess(total_.data(), f_, P_.post, opt_.cancelled);
    post_seconds_ += std::chrono::duration<double>(Clock::now() - tp).count();
    opt_.preview(prev);
  }

  const RenderOptions& opt_;
  const Flame f_;
  const detail::Prepared<double> P_;
  const std::size_t cells_;
  tbb::task_arena arena_;
  const std::uint64_t walkers_;
  std::vector<std::uint64_t> total_;
  tbb::enumerable_thread_specific<ThreadHistogram> local_;
  std::atomic<std::uint64_t> bad_{0};
  std::atomic<bool> stop_{false};
  std::mutex progress_mutex_;  // opt_.progress is called by one worker at a time
  double post_seconds_ = 0;
};

}  // namespace

RenderedImage render_cpu(const Flame& flame, const RenderOptions& opt) { return CpuRender(flame, opt).run(); }

ImageComparison compare_images(const std::vector<std::uint8_t>& a, const std::vector<std::uint8_t>& b,
                               std::size_t width, std::size_t height, int ca, int cb, std::size_t factor) {
  factor = std::max<std::size_t>(factor, 1);
  const std::size_t w = width / factor, h = height / factor;
  std::vector<double> A(w * h * 3), B(w * h * 3);
  for (std::size_t y = 0; y < h * factor; ++y)
    for (std::size_t x = 0; x < w * factor; ++x)
      for (std::size_t c = 0; c < 3; ++c) {
        const std::size_t o = ((y / factor) * w + x / factor) * 3 + c;
        A[o] += a[(y * width + x) * static_cast<std::size_t>(ca) + c];
        B[o] += b[(y * width + x) * static_cast<std::size_t>(cb) + c];
      }
  const double n = static_cast<double>(factor * factor);
  double mse = 0;
  for (std::size_t i = 0; i < A.size(); ++i) {
    A[i] /= n;
    B[i] /= n;
    mse += (A[i] - B[i]) * (A[i] - B[i]);
  }
  mse /= static_cast<double>(A.size());
  ImageComparison r;
  r.psnr = mse == 0 ? 99.0 : 10.0 * std::log10(255.0 * 255.0 / mse);
  // SSIM of luma in 8×8 windows with stride 4 (Wang et al. 2004, constants K1 = 0.01, K2 = 0.03).
  auto luma = [&](const std::vector<double>& I, std::size_t x, std::size_t y) {
    const double* p = &I[(y * w + x) * 3];
    return 0.299 * p[0] + 0.587 * p[1] + 0.114 * p[2];
  };
  const double c1 = (0.01 * 255) * (0.01 * 255), c2 = (0.03 * 255) * (0.03 * 255);
  double sum = 0;
  std::size_t count = 0;
  for (std::size_t y = 0; y + 8 <= h; y += 4)
    for (std::size_t x = 0; x + 8 <= w; x += 4) {
      double ma = 0, mb = 0, va = 0, vb = 0, cov = 0;
      for (std::size_t j = 0; j < 8; ++j)
        for (std::size_t i = 0; i < 8; ++i) ma += luma(A, x + i, y + j), mb += luma(B, x + i, y + j);
      ma /= 64;
      mb /= 64;
      for (std::size_t j = 0; j < 8; ++j)
        for (std::size_t i = 0; i < 8; ++i) {
          const double da = luma(A, x + i, y + j) - ma, db = luma(B, x + i, y + j) - mb;
          va += da * da;
          vb += db * db;
          cov += da * db;
        }
      va /= 63;
      vb /= 63;
      cov /= 63;
      sum += ((2 * ma * mb + c1) * (2 * cov + c2)) / ((ma * ma + mb * mb + c1) * (va + vb + c2));
      ++count;
    }
  r.ssim = count ? sum / static_cast<double>(count) : 1.0;
  return r;
}

}  // namespace gemflow::flame
