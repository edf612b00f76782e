// `gemflow cache info|prune|clear`: the lasting result cache of `gemflow run`.
#include <cctype>
#include <filesystem>
#include <optional>
#include <string>

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "commands.hpp"
#include "gemflow/disk_cache.hpp"

namespace gemflow::cli {

std::optional<std::uint64_t> parse_size(const std::string& text) {
  if (text.empty()) return std::nullopt;
  std::size_t used = 0;
  double value = 0;
  try {
    value = std::stod(text, &used);
  } catch (const std::exception&) {
    return std::nullopt;
  }
  if (!(value >= 0)) return std::nullopt;
  std::string unit = text.substr(used);
  if (!unit.empty() && (unit.back() == 'B' || unit.back() == 'b')) unit.pop_back();
  if (unit.size() > 1 && (unit.back() == 'i')) unit.pop_back();  // "GiB"
  double scale = 1;
  if (unit.size() == 1) {
    switch (std::toupper(static_cast<unsigned char>(unit[0]))) {
      case 'K': scale = 1024.0; break;
      case 'M': scale = 1024.0 * 1024; break;
      case 'G': scale = 1024.0 * 1024 * 1024; break;
      case 'T': scale = 1024.0 * 1024 * 1024 * 1024; break;
      default: return std::nullopt;
    }
  } else if (!unit.empty()) {
    return std::nullopt;
  }
  const double bytes = value * scale;
  if (bytes > 1.8e19) return std::nullopt;
  return static_cast<std::uint64_t>(bytes);
}

namespace {
std::string human(std::uint64_t b) {
  if (b >= (std::uint64_t{1} << 30)) return fmt::format("{:.2f} GiB", static_cast<double>(b) / (1u << 30));
  if (b >= (std::uint64_t{1} << 20)) return fmt::format("{:.1f} MiB", static_cast<double>(b) / (1u << 20));
  return fmt::format("{} bytes", b);
}
}  // namespace

int cache_command(const CacheArgs& args) {
  const std::filesystem::path dir = args.dir ? std::filesystem::absolute(*args.dir) : DiskCache::default_dir();
  DiskCache cache(dir);
  if (args.action == "info") {
    const auto s = cache.stats();
    fmt::print("Result cache: {}\n  {} entries, {} (limit {})\n", dir.string(), s.entries, human(s.bytes),
               human(cache.max_bytes()));
    return kExitOk;
  }
  if (args.action == "prune") {
    std::uint64_t limit = cache.max_bytes();
    if (!args.max_size.empty()) {
      const auto v = parse_size(args.max_size);
      if (!v) {
        spdlog::error("--max-size '{}' is not a size (e.g. 5G, 500M, 1048576)", args.max_size);
        return kExitInvalid;
      }
      limit = *v;
    }
    const std::size_t removed = cache.prune(limit);
    const auto s = cache.stats();
    fmt::print("Removed {} entries; {} left, {}\n", removed, s.entries, human(s.bytes));
    return kExitOk;
  }
  cache.clear();
  fmt::print("Cleared {}\n", dir.string());
  return kExitOk;
}

}  // namespace gemflow::cli
