// The lasting result cache (gemflow/disk_cache.hpp).
#include "gemflow/disk_cache.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>

#include <fmt/format.h>
#include <xxhash.h>
#include <nlohmann/json.hpp>

#include "gemflow/registry.hpp"
#include "gemflow/serialize.hpp"

namespace fs = std::filesystem;

namespace gemflow {
namespace {

constexpr char kMagic[8] = {'G', 'F', 'C', 'A', 'C', 'H', 'E', '1'};
constexpr std::string_view kEntrySuffix = ".entry";

std::string hex(std::uint64_t h) { return fmt::format("{:016x}", h); }

// Writes `bytes` to `file` through a temporary in the same folder: write, fsync, rename.
void write_atomically(const fs::path& file, const std::string& bytes) {
  static std::atomic<unsigned> counter{0};
  const fs::path tmp =
      file.parent_path() / fmt::format(".tmp.{}.{}.{}", ::getpid(), counter++, file.filename().string());
  const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) throw Error(fmt::format("cannot write {}: {}", tmp.parent_path().string(), std::strerror(errno)));
  std::size_t done = 0;
  int err = 0;
  while (done < bytes.size()) {
    const ssize_t n = ::write(fd, bytes.data() + done, bytes.size() - done);
    if (n < 0) {
      if (errno == EINTR) continue;
      err = errno;
      break;
    }
    done += static_cast<std::size_t>(n);
  }
  if (!err && ::fsync(fd) != 0) err = errno;
  if (::close(fd) != 0 && !err) err = errno;
  std::error_code ec;
  if (!err) {
    fs::rename(tmp, file, ec);
    if (!ec) return;
    err = ec.value();
  }
  fs::remove(tmp, ec);
  throw Error(fmt::format("cannot write {}: {}", file.string(), std::strerror(err)));
}

// One read into a buffer of the file's size (entries reach tens of MB: no stream copies).
std::optional<std::string> read_all(const fs::path& file) {
  const int fd = ::open(file.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return std::nullopt;
  struct stat st {};
  std::optional<std::string> out;
  if (::fstat(fd, &st) == 0 && st.st_size >= 0) {
    std::string buf(static_cast<std::size_t>(st.st_size), '\0');
    std::size_t done = 0;
    while (done < buf.size()) {
      const ssize_t n = ::read(fd, buf.data() + done, buf.size() - done);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) break;
      done += static_cast<std::size_t>(n);
    }
    buf.resize(done);  // a file cut while being read: its hash check fails
    out = std::move(buf);
  }
  ::close(fd);
  return out;
}

bool is_entry(const fs::directory_entry& e) {
  const std::string name = e.path().filename().string();
  return e.is_regular_file() && name.size() > kEntrySuffix.size() && name.ends_with(kEntrySuffix);
}

bool is_stale_temporary(const fs::directory_entry& e) {
  if (!e.path().filename().string().starts_with(".tmp.")) return false;
  std::error_code ec;
  const auto age = fs::file_time_type::clock::now() - fs::last_write_time(e.path(), ec);
  return !ec && age > std::chrono::hours(1);  // a live writer finishes long before
}

}  // namespace

DiskCache::DiskCache(fs::path dir, std::uint64_t max_bytes) : dir_(std::move(dir)), max_bytes_(max_bytes) {
  std::error_code ec;
  fs::create_directories(dir_ / "entries", ec);
  if (ec) throw Error(fmt::format("cannot create the cache folder {}: {}", (dir_ / "entries").string(), ec.message()));
  fs::create_directories(dir_ / "runs", ec);
  if (ec) throw Error(fmt::format("cannot create the cache folder {}: {}", (dir_ / "runs").string(), ec.message()));
}

fs::path DiskCache::default_dir() {
  if (const char* d = std::getenv("GEMFLOW_CACHE_DIR"); d && *d) return d;
  if (const char* x = std::getenv("XDG_CACHE_HOME"); x && *x) return fs::path(x) / "gemflow" / "results";
  if (const char* h = std::getenv("HOME"); h && *h) return fs::path(h) / ".cache" / "gemflow" / "results";
  return fs::temp_directory_path() / "gemflow-cache";
}

fs::path DiskCache::entry_path(const std::string& key) const {
  return dir_ / "entries" / key.substr(0, 2) / (key + std::string(kEntrySuffix));
}

std::optional<std::map<std::string, Value>> DiskCache::find(const std::string& key, const Registry& registry,
                                                            std::string* why) const {
  const auto miss = [&](std::string reason) -> std::optional<std::map<std::string, Value>> {
    if (why) *why = std::move(reason);
    return std::nullopt;
  };
  if (key.size() < 2) return miss("no key");
  const fs::path file = entry_path(key);
  const auto bytes = read_all(file);
  if (!bytes) return miss("not in the cache");
  const auto corrupt = [&](const std::string& reason) {
    std::error_code ec;
    fs::remove(file, ec);
    return miss("corrupt cache entry (removed): " + reason);
  };
  try {
    BinaryReader r(*bytes);
    char magic[8];
    for (char& c : magic) c = static_cast<char>(r.get<std::uint8_t>("the header"));
    if (std::memcmp(magic, kMagic, 8) != 0) return corrupt("not a cache entry");
    if (r.str("the key") != key) return corrupt("it holds another key");
    const auto hash = r.get<std::uint64_t>("the hash");
    const std::size_t body_size = r.size("the body");
    const std::string_view body(bytes->data() + (bytes->size() - r.left()), body_size);
    if (body.size() != r.left()) return corrupt("trailing bytes");
    if (XXH3_64bits(body.data(), body.size()) != hash) return corrupt("its hash does not match its contents");
    BinaryReader b(body);
    std::map<std::string, Value> out;
    const std::size_t count = b.size("outputs", 8);
    for (std::size_t k = 0; k < count; ++k) {
      std::string name = b.str("an output name");
      const std::string type = b.str("a type name");
      const std::string layout = b.str("a type layout");
      const auto version = b.get<std::uint32_t>("an encoding version");
      const std::string payload = b.str("a value");
      const TypeInfo* t = registry.find_type(type);
      if (!t || !t->load)
        return miss(fmt::format("type '{}' of output '{}' cannot be read from the cache here", type, name));
      if (t->layout.str() != layout || t->serial_version != version)
        return miss(fmt::format("type '{}' changed since the entry was written", type));
      BinaryReader pr(payload);
      Value v = t->load(pr);
      pr.finish(type.c_str());
      out.emplace(std::move(name), std::move(v));
    }
    b.finish("the outputs");
    std::error_code ec;
    fs::last_write_time(file, fs::file_time_type::clock::now(), ec);  // LRU
    return out;
  } catch (const SerialError& e) {
    return corrupt(e.what());
  } catch (const std::exception& e) {  // a value's own check (Matrix shape, Image validate)
    return corrupt(e.what());
  }
}

bool DiskCache::store(const std::string& key, const std::map<std::string, Value>& outputs, const Registry& registry,
                      std::string* why) {
  const auto fail = [&](std::string reason) {
    if (why) *why = std::move(reason);
    return false;
  };
  if (key.size() < 2) return fail("no key");
  BinaryWriter body;
  body.size(outputs.size());
  for (const auto& [name, v] : outputs) {
    const TypeInfo* t = registry.find_type(v.type());
    if (!t || !t->save) return fail(fmt::format("output '{}' is a {}, which has no disk encoding", name, v.type()));
    BinaryWriter payload;
    t->save(v, payload);
    body.str(name);
    body.str(t->name);
    body.str(t->layout.str());
    body.put<std::uint32_t>(t->serial_version);
    body.str(payload.bytes());
    if (body.bytes().size() > max_bytes_ / 4)
      return fail(fmt::format("the outputs take more than a quarter of the cache's {} MiB limit", max_bytes_ >> 20));
  }
  BinaryWriter entry;
  for (char c : kMagic) entry.put<std::uint8_t>(static_cast<std::uint8_t>(c));
  entry.str(key);
  entry.put<std::uint64_t>(XXH3_64bits(body.bytes().data(), body.bytes().size()));
  entry.str(body.bytes());
  const fs::path file = entry_path(key);
  try {
    std::error_code ec;
    fs::create_directories(file.parent_path(), ec);
    if (ec) throw Error(fmt::format("cannot create {}: {}", file.parent_path().string(), ec.message()));
    write_atomically(file, entry.bytes());
  } catch (const Error& e) {
    return fail(e.what());
  }
  // The folder is walked once per process; then stores add up (other processes' writes are
  // seen at the next walk, when the estimate passes the limit).
  std::lock_guard lock(mutex_);
  if (!approx_bytes_) approx_bytes_ = stats().bytes;
  else *approx_bytes_ += entry.bytes().size();
  if (*approx_bytes_ > max_bytes_) {
    prune(max_bytes_);
    approx_bytes_ = stats().bytes;
  }
  return true;
}

DiskCache::Stats DiskCache::stats() const {
  Stats s;
  std::error_code ec;
  for (fs::recursive_directory_iterator it(dir_ / "entries", ec), end; !ec && it != end; it.increment(ec))
    if (is_entry(*it)) {
      ++s.entries;
      s.bytes += it->file_size(ec);
    }
  return s;
}

std::size_t DiskCache::prune(std::uint64_t max_bytes) {
  struct Item {
    fs::path path;
    fs::file_time_type used;
    std::uint64_t bytes;
  };
  std::vector<Item> items;
  std::uint64_t total = 0;
  std::error_code ec;
  for (fs::recursive_directory_iterator it(dir_ / "entries", ec), end; !ec && it != end; it.increment(ec)) {
    std::error_code e2;
    if (is_stale_temporary(*it)) fs::remove(it->path(), e2);
    if (!is_entry(*it)) continue;
    Item i{it->path(), it->last_write_time(e2), it->file_size(e2)};
    total += i.bytes;
    items.push_back(std::move(i));
  }
  std::sort(items.begin(), items.end(), [](const Item& a, const Item& b) { return a.used < b.used; });
  std::size_t removed = 0;
  for (const auto& i : items) {
    if (total <= max_bytes) break;
    std::error_code e2;
    if (fs::remove(i.path, e2)) {
      total -= i.bytes;
      ++removed;
    }
  }
  return removed;
}

void DiskCache::clear() {
  std::error_code ec;
  for (const char* sub : {"entries", "runs"}) {
    fs::remove_all(dir_ / sub, ec);
    fs::create_directories(dir_ / sub, ec);
  }
}

std::map<std::string, std::string> DiskCache::last_key_texts(const std::string& scope) const {
  std::map<std::string, std::string> out;
  const auto bytes = read_all(dir_ / "runs" / (hex(XXH3_64bits(scope.data(), scope.size())) + ".json"));
  if (!bytes) return out;
  try {
    const auto j = nlohmann::json::parse(*bytes);
    if (j.value("scope", "") != scope) return out;
    for (const auto& [node, text] : j.at("nodes").items()) out[node] = text.get<std::string>();
  } catch (const std::exception&) {  // a damaged record only costs the explanation
    out.clear();
  }
  return out;
}

void DiskCache::remember_key_texts(const std::string& scope, const std::map<std::string, std::string>& texts) {
  nlohmann::json j{{"scope", scope}, {"nodes", texts}};
  try {
    write_atomically(dir_ / "runs" / (hex(XXH3_64bits(scope.data(), scope.size())) + ".json"), j.dump(1));
  } catch (const Error&) {  // explanations are a convenience: a read-only cache keeps none
  }
}

std::string explain_key_change(const std::string& before, const std::string& now) {
  const auto lines = [](const std::string& text) {
    std::map<std::string, std::string> m;  // "param trials" → "4"
    std::istringstream in(text);
    for (std::string line; std::getline(in, line);) {
      const auto eq = line.find('=');
      if (eq != std::string::npos) m[line.substr(0, eq)] = line.substr(eq + 1);
    }
    return m;
  };
  const auto a = lines(before), b = lines(now);
  std::vector<std::string> why;
  const auto describe = [](const std::string& what, const std::string* from, const std::string* to) {
    const auto space = what.find(' ');
    const std::string kind = what.substr(0, space), name = space == std::string::npos ? "" : what.substr(space + 1);
    if (kind == "type") return fmt::format("node type {} → {}", from ? *from : "?", to ? *to : "?");
    if (kind == "version") return fmt::format("node version {} → {}", from ? *from : "?", to ? *to : "?");
    if (kind == "code") return std::string("the node's plugin file changed");
    if (kind == "file") return fmt::format("the file of parameter {} changed", name);
    if (kind == "read") return fmt::format("the file it read, {}, changed", name);
    if (kind == "input") {
      if (!from) return fmt::format("input {} connected", name);
      if (!to) return fmt::format("input {} disconnected", name);
      return fmt::format("input {} changed", name);
    }
    if (kind == "param") {
      if (!from) return fmt::format("new parameter {} = {}", name, *to);
      if (!to) return fmt::format("parameter {} removed", name);
      return fmt::format("parameter {} {} → {}", name, *from, *to);
    }
    return what + " changed";
  };
  for (const auto& [k, v] : b) {
    const auto it = a.find(k);
    if (it == a.end()) why.push_back(describe(k, nullptr, &v));
    else if (it->second != v) why.push_back(describe(k, &it->second, &v));
  }
  for (const auto& [k, v] : a)
    if (!b.count(k)) why.push_back(describe(k, &v, nullptr));
  std::string out;
  for (const auto& w : why) out += (out.empty() ? "" : "; ") + w;
  return out;
}

}  // namespace gemflow
