#include "gemflow/memory.hpp"

#include <unistd.h>

#include <algorithm>
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

}  // namespace

std::optional<std::size_t> available_host_memory() {
  std::optional<std::size_t> avail = mem_available();
  // cgroup v2 (containers): the limit of this process's group, mounted at /sys/fs/cgroup
  const auto limit = read_number("/sys/fs/cgroup/memory.max");
  const auto used = read_number("/sys/fs/cgroup/memory.current");
  if (limit && used) {
    const std::size_t left = *limit > *used ? *limit - *used : 0;
    avail = avail ? std::min(*avail, left) : left;
  }
  return avail;
}

void require_host_memory(std::size_t bytes, const std::string& what) {
  const auto avail = available_host_memory();
  if (avail && bytes > *avail)
    throw OutOfMemory(fmt::format("{} needs {} of memory, {} available", what, gib(bytes), gib(*avail)));
}

std::size_t checked_matrix_bytes(std::size_t rows, std::size_t cols, std::size_t element_size) {
  const std::size_t max = std::numeric_limits<std::size_t>::max();
  if (cols != 0 && rows > max / element_size / cols)
    throw OutOfMemory(fmt::format("a {}×{} matrix is too large to address", rows, cols));
  const std::size_t bytes = rows * cols * element_size;
  if (bytes >= (std::size_t{256} << 20)) require_host_memory(bytes, fmt::format("a {}×{} matrix", rows, cols));
  return bytes;
}

}  // namespace gemflow
