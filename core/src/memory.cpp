#include "gemflow/memory.hpp"

#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <limits>
#include <string>

#include <fmt/format.h>

namespace gemflow {
namespace {

std::optional<std::size_t> read_number(const char* file) {
  std::ifstream in(file);
  std::string text;
  if (!(in >> text) || text == "max") return std::nullopt;
  try {
    return static_cast<std::size_t>(std::stoull(text));
  } catch (const std::exception&) {
    return std::nullopt;
  }
}

std::optional<std::size_t> mem_available() {
  std::ifstream in("/proc/meminfo");
  std::string key;
  std::size_t kib = 0;
  std::string unit;
  while (in >> key >> kib) {
    std::getline(in, unit);
    if (key == "MemAvailable:") return kib * 1024;
  }
  const long pages = ::sysconf(_SC_AVPHYS_PAGES), page = ::sysconf(_SC_PAGESIZE);
  if (pages > 0 && page > 0) return static_cast<std::size_t>(pages) * static_cast<std::size_t>(page);
  return std::nullopt;
}

std::string gib(std::size_t bytes) { return fmt::format("{:.2f} GiB", static_cast<double>(bytes) / (1u << 30)); }

/// Under RLIMIT_AS (ulimit -v): the limit and the address space this process maps now.
struct AddressSpace {
  std::size_t limit = 0, mapped = 0;
  [[nodiscard]] std::size_t left() const { return limit > mapped ? limit - mapped : 0; }
};
std::optional<AddressSpace> address_space() {
  rlimit rl{};
  if (getrlimit(RLIMIT_AS, &rl) != 0 || rl.rlim_cur == RLIM_INFINITY) return std::nullopt;
  std::ifstream in("/proc/self/statm");
  std::size_t pages = 0;
  const long page = ::sysconf(_SC_PAGESIZE);
  if (!(in >> pages) || page <= 0) return std::nullopt;
  return AddressSpace{static_cast<std::size_t>(rl.rlim_cur), pages * static_cast<std::size_t>(page)};
}

/// GEMFLOW_MEMORY_LIMIT: bytes, or a number with K, M, G or T (powers of 1024); unset, empty or
/// malformed: no limit (a malformed value is ignored rather than fatal: it only lowers a cap).
std::optional<std::size_t> configured_limit() {
  const char* v = std::getenv("GEMFLOW_MEMORY_LIMIT");
  if (!v || !*v) return std::nullopt;
  char* end = nullptr;
  const double x = std::strtod(v, &end);
  if (end == v || !(x > 0)) return std::nullopt;
  double scale = 1;
  switch (*end) {
    case 'K':
    case 'k':
      scale = 1024.0;
      ++end;
      break;
    case 'M':
    case 'm':
      scale = 1024.0 * 1024;
      ++end;
      break;
    case 'G':
    case 'g':
      scale = 1024.0 * 1024 * 1024;
      ++end;
      break;
    case 'T':
    case 't':
      scale = 1024.0 * 1024 * 1024 * 1024;
      ++end;
      break;
    default: break;
  }
  if (*end == 'i' || *end == 'B') ++end;  // "1GiB", "1GB"
  if (*end == 'B') ++end;
  if (*end != '\0') return std::nullopt;
  const double bytes = x * scale;
  if (bytes >= static_cast<double>(std::numeric_limits<std::size_t>::max())) return std::nullopt;
  return static_cast<std::size_t>(bytes);
}

}  // namespace

std::string address_limit_note() {
  const auto as = address_space();
  if (!as) return "";
  return fmt::format("; the address-space limit (ulimit -v) is {}, {} of it mapped already", gib(as->limit),
                     gib(as->mapped));
}

std::optional<std::size_t> available_host_memory() {
  std::optional<std::size_t> avail = mem_available();
  // cgroup v2 (containers): the limit of this process's group, mounted at /sys/fs/cgroup
  const auto limit = read_number("/sys/fs/cgroup/memory.max");
  const auto used = read_number("/sys/fs/cgroup/memory.current");
  if (limit && used) {
    const std::size_t left = *limit > *used ? *limit - *used : 0;
    avail = avail ? std::min(*avail, left) : left;
  }
  if (const auto as = address_space()) avail = avail ? std::min(*avail, as->left()) : as->left();
  if (const auto cap = configured_limit()) avail = avail ? std::min(*avail, *cap) : *cap;
  return avail;
}

std::string memory_shortfall(std::size_t needed, std::size_t available) {
  std::string a = gib(needed), b = gib(available);
  if (a == b && needed != available) {
    const auto mib = [](std::size_t x) { return fmt::format("{:.1f} MiB", static_cast<double>(x) / (1u << 20)); };
    a = mib(needed);
    b = mib(available);
    if (a == b) {
      a = fmt::format("{} bytes", needed);
      b = fmt::format("{} bytes", available);
    }
  }
  return fmt::format("needs {} of memory, {} available", a, b);
}

void require_host_memory(std::size_t bytes, const std::string& what) {
  const auto avail = available_host_memory();
  if (avail && bytes > *avail)
    throw OutOfMemory(fmt::format("{} {}{}", what, memory_shortfall(bytes, *avail), address_limit_note()));
}

std::size_t checked_matrix_bytes(std::size_t rows, std::size_t cols, std::size_t element_size) {
  const std::size_t max = std::numeric_limits<std::size_t>::max();
  if (cols != 0 && rows > max / element_size / cols)
    throw OutOfMemory(fmt::format("a {}×{} matrix is too large to address", rows, cols));
  const std::size_t bytes = rows * cols * element_size;
  if (bytes >= (std::size_t{256} << 20)) require_host_memory(bytes, fmt::format("a {}×{} matrix", rows, cols));
  return bytes;
}

int blas_threads_for_address_limit(std::size_t limit_bytes, int cpus) {
  constexpr std::size_t kReserve = std::size_t{3} << 29;  // 1.5 GiB
  constexpr std::size_t kPerThread = std::size_t{192} << 20;
  const std::size_t fit = limit_bytes > kReserve ? (limit_bytes - kReserve) / kPerThread : 0;
  return static_cast<int>(std::clamp<std::size_t>(fit, 1, static_cast<std::size_t>(std::max(cpus, 1))));
}

int fit_blas_threads_to_address_limit() {
  for (const char* v : {"OPENBLAS_NUM_THREADS", "GOTO_NUM_THREADS", "OMP_NUM_THREADS"})
    if (const char* e = std::getenv(v); e && *e) return 0;
  rlimit rl{};
  if (getrlimit(RLIMIT_AS, &rl) != 0 || rl.rlim_cur == RLIM_INFINITY) return 0;
  const long cpus = sysconf(_SC_NPROCESSORS_ONLN);
  const int threads = blas_threads_for_address_limit(static_cast<std::size_t>(rl.rlim_cur), static_cast<int>(cpus));
  if (cpus <= 0 || threads >= cpus) return 0;
  setenv("OPENBLAS_NUM_THREADS", std::to_string(threads).c_str(), 1);
  return threads;
}

}  // namespace gemflow
