#include "gemflow/plugin_loader.hpp"

#include <dlfcn.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <fstream>
#include <map>
#include <mutex>
#include <optional>
#include <set>
#include <string_view>
#include <system_error>

#include <fmt/format.h>
#include <xxhash.h>
#include <boost/dll/shared_library.hpp>

#include "gemflow/atomic_file.hpp"
#include "gemflow/plugin.hpp"

#ifndef GEMFLOW_PLUGIN_INSTALL_RELDIR
#define GEMFLOW_PLUGIN_INSTALL_RELDIR "lib/gemflow/plugins"
#endif

namespace gemflow {

namespace fs = std::filesystem;

namespace {

// Libraries are never unloaded: values, vtables and std::functions created by a plugin may
// outlive any host object. Every library opened here stays in this list until exit.
void keep_loaded(boost::dll::shared_library lib) {
  static std::mutex mutex;
  static auto* libs = new std::vector<boost::dll::shared_library>();  // never destroyed
  std::lock_guard lock(mutex);
  libs->push_back(std::move(lib));
}

// "k=v;k=v" → ordered fields.
std::vector<std::pair<std::string, std::string>> fields(std::string_view fp) {
  std::vector<std::pair<std::string, std::string>> r;
  while (!fp.empty()) {
    const auto semi = fp.find(';');
    const std::string_view f = fp.substr(0, semi);
    const auto eq = f.find('=');
    if (eq == std::string_view::npos) r.emplace_back(std::string(f), std::string());
    else r.emplace_back(std::string(f.substr(0, eq)), std::string(f.substr(eq + 1)));
    if (semi == std::string_view::npos) break;
    fp.remove_prefix(semi + 1);
  }
  return r;
}

// Empty when compatible, else the differing fields ("sdk=0.0.0 (host: sdk=0.1.0)", ...).
std::string fingerprint_mismatch(std::string_view plugin, std::string_view host) {
  auto p = fields(plugin), h = fields(host);
  auto find = [](const auto& v, const std::string& k) -> const std::string* {
    for (const auto& [key, value] : v)
      if (key == k) return &value;
    return nullptr;
  };
  std::vector<std::string> diffs;
  for (const auto& [k, v] : h) {
    if (k == "compiler") continue;
    const std::string* pv = find(p, k);
    if (!pv) diffs.push_back(fmt::format("{} missing (host: {}={})", k, k, v));
    else if (*pv != v) diffs.push_back(fmt::format("{}={} (host: {}={})", k, *pv, k, v));
  }
  for (const auto& [k, v] : p)
    if (k != "compiler" && !find(h, k)) diffs.push_back(fmt::format("{}={} unknown to the host", k, v));
  std::string s;
  for (const auto& d : diffs) {
    if (!s.empty()) s += ", ";
    s += d;
  }
  return s;
}

fs::path normal(const fs::path& p) {
  std::error_code ec;
  auto c = fs::weakly_canonical(p, ec);
  return ec ? p.lexically_normal() : c;
}

// ---- Probe: load the file in a forked child first --------------------------------------------
//
// A library's load-time code (static constructors) runs inside dlopen; when it aborts or
// crashes, no check can stop it from taking the process down. So each file is first opened in
// a child process, which reports what it found and exits; the host opens only files whose
// child came back. Cost: one fork per plugin file. GEMFLOW_PLUGIN_PROBE=0 turns it off.

// What the child reports on its pipe: "name\0version\0fingerprint\0api\0error\0".
constexpr int kProbeOk = 0;        // every check passed: the host may load it
constexpr int kProbeRefused = 99;  // a check failed: the reason is on the pipe
constexpr auto kProbeTimeout = std::chrono::seconds(60);

// GEMFLOW_PLUGIN_PROBE_TIMEOUT (seconds, > 0) shortens or lengthens the wait for a probe child.
std::chrono::milliseconds probe_timeout() {
  if (const char* e = std::getenv("GEMFLOW_PLUGIN_PROBE_TIMEOUT")) {
    char* end = nullptr;
    const double s = std::strtod(e, &end);
    if (end != e && *end == '\0' && s > 0 && s < 1e6)
      return std::chrono::milliseconds(static_cast<long long>(s * 1000));
  }
  return kProbeTimeout;
}

struct ProbeResult {
  enum class Kind { Ok, Refused, Crashed, Exited, TimedOut, NotRun } kind = Kind::NotRun;
  std::string name, version, fingerprint, error;
};

bool probe_enabled() {
  const char* e = std::getenv("GEMFLOW_PLUGIN_PROBE");
  return !(e && std::string_view(e) == "0");
}

// The child: dlopen, read the entry points, compare version and fingerprint; never returns.
[[noreturn]] void probe_child(const fs::path& file, int fd) {
  std::string name, version, fingerprint, error;
  int code = kProbeOk;
  void* h = ::dlopen(file.c_str(), RTLD_NOW | RTLD_LOCAL);
  auto sym = [&](const char* s) { return h ? ::dlsym(h, s) : nullptr; };
  if (!h) {
    const char* err = ::dlerror();
    std::string why = err ? err : "unknown error";
    if (const std::string prefix = file.string() + ": "; why.starts_with(prefix)) why.erase(0, prefix.size());
    error = "not a loadable shared library: " + why;
    code = kProbeRefused;
  } else {
    if (auto* p = static_cast<const char*>(sym("gemflow_plugin_name"))) name = p;
    if (auto* p = static_cast<const char*>(sym("gemflow_plugin_version"))) version = p;
    if (auto* p = static_cast<const char*>(sym("gemflow_plugin_fingerprint"))) fingerprint = p;
    const auto* api = static_cast<const int*>(sym("gemflow_plugin_api_version"));
    if (!api) {
      error =
          "not a Gemflow plugin: it does not export gemflow_plugin_api_version "
          "(build it with GEMFLOW_PLUGIN from gemflow/plugin.hpp)";
    } else if (*api != kPluginApiVersion) {
      error = fmt::format("plugin API version {}, this Gemflow expects {}: rebuild the plugin against this SDK", *api,
                          kPluginApiVersion);
    } else if (!sym("gemflow_plugin_fingerprint")) {
      error = "no build fingerprint (gemflow_plugin_fingerprint missing)";
    } else if (auto diff = fingerprint_mismatch(fingerprint, PluginHost::host_fingerprint()); !diff.empty()) {
      error = fmt::format("build fingerprint differs from the host: {}; rebuild the plugin against this SDK", diff);
    } else if (!sym("gemflow_plugin_register")) {
      error = "no register function (gemflow_plugin_register missing)";
    }
    if (!error.empty()) code = kProbeRefused;
  }
  std::string msg;
  for (const std::string* f : {&name, &version, &fingerprint, &error}) {
    msg += *f;
    msg += '\0';
  }
  for (std::size_t off = 0; off < msg.size();) {
    const ssize_t w = ::write(fd, msg.data() + off, msg.size() - off);
    if (w <= 0) break;
    off += static_cast<std::size_t>(w);
  }
  ::_exit(code);  // no atexit handlers, no static destructors of the host in the child
}

std::string signal_text(int sig) {
  const char* abbrev = ::sigabbrev_np(sig);
  return abbrev ? fmt::format("signal {}, SIG{}", sig, abbrev) : fmt::format("signal {}", sig);
}

// Last non-empty line of what the child wrote to stderr (assertion texts and the like).
std::string last_line(const std::string& text) {
  std::size_t end = text.find_last_not_of(" \t\r\n");
  if (end == std::string::npos) return "";
  const std::size_t begin = text.rfind('\n', end);
  std::string line =
      text.substr(begin == std::string::npos ? 0 : begin + 1, end + 1 - (begin == std::string::npos ? 0 : begin + 1));
  if (line.size() > 300) line = line.substr(0, 300) + "...";
  return line;
}

ProbeResult probe(const fs::path& file) {
  ProbeResult r;
  int report[2], err[2];
  if (::pipe2(report, O_CLOEXEC) != 0) return r;
  if (::pipe2(err, O_CLOEXEC) != 0) {
    ::close(report[0]);
    ::close(report[1]);
    return r;
  }
  std::fflush(nullptr);  // nothing buffered is written twice
  const pid_t pid = ::fork();
  if (pid < 0) {
    for (int fd : {report[0], report[1], err[0], err[1]}) ::close(fd);
    return r;  // cannot fork: load in the host as before
  }
  if (pid == 0) {
    ::dup2(err[1], STDERR_FILENO);
    probe_child(file, report[1]);
  }
  ::close(report[1]);
  ::close(err[1]);
  std::string out, errtext;
  pollfd fds[2] = {{report[0], POLLIN, 0}, {err[0], POLLIN, 0}};
  const auto timeout = probe_timeout();
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  bool timed_out = false;
  for (int open = 2; open > 0;) {
    if (std::chrono::steady_clock::now() > deadline) {
      ::kill(pid, SIGKILL);
      timed_out = true;
      break;
    }
    if (::poll(fds, 2, 100) < 0 && errno != EINTR) break;
    for (int i = 0; i < 2; ++i) {
      if (fds[i].fd < 0 || !(fds[i].revents & (POLLIN | POLLHUP | POLLERR))) continue;
      char buf[4096];
      const ssize_t n = ::read(fds[i].fd, buf, sizeof buf);
      if (n > 0) {
        std::string& dst = i == 0 ? out : errtext;
        if (dst.size() < (1 << 16)) dst.append(buf, static_cast<std::size_t>(n));
      } else if (n == 0 || errno != EINTR) {
        fds[i].fd = -1;
        --open;
      }
    }
  }
  ::close(report[0]);
  ::close(err[0]);
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  const std::string said = last_line(errtext);
  const std::string tail = said.empty() ? "" : fmt::format(": {}", said);
  if (timed_out) {
    r.kind = ProbeResult::Kind::TimedOut;
    r.error = fmt::format("did not finish loading within {} s (its load-time code hangs){}",
                          static_cast<double>(timeout.count()) / 1000.0, tail);
  } else if (WIFSIGNALED(status)) {
    r.kind = ProbeResult::Kind::Crashed;
    r.error = fmt::format("crashed while loading ({}){}", signal_text(WTERMSIG(status)), tail);
  } else if (WIFEXITED(status) && (WEXITSTATUS(status) == kProbeOk || WEXITSTATUS(status) == kProbeRefused)) {
    std::vector<std::string> fields;
    for (std::size_t a = 0; a < out.size();) {
      const std::size_t z = out.find('\0', a);
      if (z == std::string::npos) break;
      fields.push_back(out.substr(a, z - a));
      a = z + 1;
    }
    if (fields.size() != 4) {
      r.kind = ProbeResult::Kind::Exited;
      r.error = fmt::format("its load-time code ended the process while loading (exit status {}){}",
                            WEXITSTATUS(status), tail);
    } else {
      r.kind = WEXITSTATUS(status) == kProbeOk ? ProbeResult::Kind::Ok : ProbeResult::Kind::Refused;
      r.name = fields[0];
      r.version = fields[1];
      r.fingerprint = fields[2];
      r.error = fields[3];
    }
  } else {
    r.kind = ProbeResult::Kind::Exited;
    r.error = fmt::format("its load-time code ended the process while loading (exit status {}){}",
                          WIFEXITED(status) ? WEXITSTATUS(status) : -1, tail);
  }
  return r;
}

// ---- Remembered probe failures ----------------------------------------------------------------
//
// A file whose load-time code crashed, exited or hung in the probe is remembered as failed, so
// that a hanging plugin does not add the probe's timeout to every later command. The record is
// keyed by the file's path, size and modification time: a rebuilt or replaced file is probed
// again. One small file per plugin path in $XDG_CACHE_HOME/gemflow/plugin-probe (else
// ~/.cache/gemflow/plugin-probe); no cache folder, no memory (never an error).

fs::path probe_cache_dir() {
  if (const char* x = std::getenv("XDG_CACHE_HOME"); x && x[0] == '/') return fs::path(x) / "gemflow" / "plugin-probe";
  if (const char* h = std::getenv("HOME"); h && h[0] == '/') return fs::path(h) / ".cache" / "gemflow" / "plugin-probe";
  return {};
}

fs::path probe_cache_file(const fs::path& plugin) {
  const fs::path dir = probe_cache_dir();
  if (dir.empty()) return {};
  const std::string p = plugin.string();
  return dir / fmt::format("{:016x}.txt", static_cast<std::uint64_t>(XXH3_64bits(p.data(), p.size())));
}

// "size mtime" of the file, "" when it cannot be read.
std::string file_stamp(const fs::path& file) {
  struct stat st {};
  if (::stat(file.c_str(), &st) != 0) return "";
  return fmt::format("{} {}.{:09}", static_cast<long long>(st.st_size), static_cast<long long>(st.st_mtim.tv_sec),
                     st.st_mtim.tv_nsec);
}

struct RememberedFailure {
  std::string error, date;
  fs::path record;
};

std::optional<RememberedFailure> remembered_failure(const fs::path& plugin) {
  const fs::path record = probe_cache_file(plugin);
  if (record.empty()) return std::nullopt;
  std::ifstream in(record);
  if (!in) return std::nullopt;
  std::map<std::string, std::string> kv;
  for (std::string line; std::getline(in, line);)
    if (const auto eq = line.find('='); eq != std::string::npos) kv[line.substr(0, eq)] = line.substr(eq + 1);
  const std::string stamp = file_stamp(plugin);
  if (kv["file"] != plugin.string() || stamp.empty() || kv["stamp"] != stamp || kv["error"].empty())
    return std::nullopt;
  return RememberedFailure{kv["error"], kv["date"], record};
}

void remember_failure(const fs::path& plugin, const std::string& error) {
  const fs::path record = probe_cache_file(plugin);
  const std::string stamp = file_stamp(plugin);
  if (record.empty() || stamp.empty()) return;
  const std::time_t t = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char date[32];
  std::strftime(date, sizeof date, "%Y-%m-%dT%H:%M:%SZ", &tm);
  std::string one_line = error;
  for (char& c : one_line)
    if (c == '\n' || c == '\r') c = ' ';
  try {
    std::error_code ec;
    fs::create_directories(record.parent_path(), ec);
    write_file_atomically(
        record, fmt::format("file={}\nstamp={}\ndate={}\nerror={}\n", plugin.string(), stamp, date, one_line));
  } catch (const std::exception&) {  // a cache that cannot be written: probed again next time
  }
}

// ---- Remembered probe successes ---------------------------------------------------------------
//
// The probe's child costs about 0.1 s per plugin, most of a command's start. A file that passed
// is remembered in the same record with its content hash and the host's fingerprint, and is
// loaded directly while its path, size, modification time, contents and the host are unchanged.
// GEMFLOW_PLUGIN_PROBE=always (and `gemflow plugins --rescan`) probes every file regardless.

std::string content_hash(const fs::path& file) {
  std::ifstream in(file, std::ios::binary);
  if (!in) return "";
  XXH3_state_t* st = XXH3_createState();
  XXH3_64bits_reset(st);
  std::vector<char> buf(1 << 20);
  while (in) {
    in.read(buf.data(), static_cast<std::streamsize>(buf.size()));
    if (in.gcount() > 0) XXH3_64bits_update(st, buf.data(), static_cast<std::size_t>(in.gcount()));
  }
  const auto h = XXH3_64bits_digest(st);
  XXH3_freeState(st);
  return fmt::format("{:016x}", static_cast<std::uint64_t>(h));
}

bool probe_forced() {
  const char* v = std::getenv("GEMFLOW_PLUGIN_PROBE");
  return v && std::string(v) == "always";
}

bool remembered_success(const fs::path& plugin, const std::string& hash) {
  const fs::path record = probe_cache_file(plugin);
  if (record.empty() || hash.empty() || probe_forced()) return false;
  std::ifstream in(record);
  std::map<std::string, std::string> kv;
  for (std::string line; std::getline(in, line);)
    if (const auto eq = line.find('='); eq != std::string::npos) kv[line.substr(0, eq)] = line.substr(eq + 1);
  const std::string stamp = file_stamp(plugin);
  return kv["ok"] == "1" && kv["file"] == plugin.string() && !stamp.empty() && kv["stamp"] == stamp &&
         kv["hash"] == hash && kv["host"] == GEMFLOW_BUILD_FINGERPRINT;
}

void remember_success(const fs::path& plugin, const std::string& hash) {
  const fs::path record = probe_cache_file(plugin);
  const std::string stamp = file_stamp(plugin);
  if (record.empty() || stamp.empty() || hash.empty()) return;
  try {
    std::error_code ec;
    fs::create_directories(record.parent_path(), ec);
    write_file_atomically(record, fmt::format("file={}\nstamp={}\nhash={}\nhost={}\nok=1\n", plugin.string(), stamp,
                                              hash, GEMFLOW_BUILD_FINGERPRINT));
  } catch (const std::exception&) {  // a cache that cannot be written: probed again next time
  }
}

}  // namespace

std::string PluginHost::host_fingerprint() { return GEMFLOW_BUILD_FINGERPRINT; }

PluginRecord PluginHost::load(const fs::path& file_in) {
  PluginRecord rec;
  rec.file = normal(fs::absolute(file_in));
  auto fail = [&](std::string why) {
    rec.loaded = false;
    rec.error = std::move(why);
    records_.push_back(rec);
    return rec;
  };

  // The same file twice (e.g. listed twice in the search path): keep the first load.
  for (const auto& r : records_)
    if (r.loaded && r.file == rec.file) return r;

  std::error_code fec;
  if (!fs::is_regular_file(rec.file, fec)) return fail("no such file");

  // The probe (see above): files that crash, hang or fail a check are never opened here.
  if (probe_enabled()) {
    if (auto m = remembered_failure(rec.file)) {
      rec.remembered_in = m->record;
      return fail(fmt::format("{} (remembered from the probe of {}: not tried again until the file changes)", m->error,
                              m->date));
    }
    const std::string hash = content_hash(rec.file);
    ProbeResult p;
    if (!remembered_success(rec.file, hash)) {
      p = probe(rec.file);
      rec.probed = true;
      if (p.kind == ProbeResult::Kind::Ok) remember_success(rec.file, hash);
    }
    if (p.kind != ProbeResult::Kind::NotRun && p.kind != ProbeResult::Kind::Ok) {
      rec.name = std::move(p.name);
      rec.version = std::move(p.version);
      rec.fingerprint = std::move(p.fingerprint);
      if (p.kind == ProbeResult::Kind::Crashed || p.kind == ProbeResult::Kind::TimedOut ||
          p.kind == ProbeResult::Kind::Exited)
        remember_failure(rec.file, p.error);
      return fail(std::move(p.error));
    }
  }

  boost::dll::shared_library lib;
  std::error_code ec;
  ::dlerror();
  lib.load(rec.file, boost::dll::load_mode::rtld_now | boost::dll::load_mode::rtld_local, ec);
  if (ec || !lib.is_loaded()) {
    const char* err = ::dlerror();
    std::string why = err ? err : ec.message();
    if (const std::string prefix = rec.file.string() + ": "; why.starts_with(prefix)) why.erase(0, prefix.size());
    return fail(fmt::format("not a loadable shared library: {}", why));
  }

  if (lib.has("gemflow_plugin_name")) rec.name = &lib.get<const char>("gemflow_plugin_name");
  if (lib.has("gemflow_plugin_version")) rec.version = &lib.get<const char>("gemflow_plugin_version");
  if (lib.has("gemflow_plugin_fingerprint")) rec.fingerprint = &lib.get<const char>("gemflow_plugin_fingerprint");

  if (!lib.has("gemflow_plugin_api_version")) {
    keep_loaded(std::move(lib));
    return fail(
        "not a Gemflow plugin: it does not export gemflow_plugin_api_version "
        "(build it with GEMFLOW_PLUGIN from gemflow/plugin.hpp)");
  }
  const int api = lib.get<const int>("gemflow_plugin_api_version");
  if (api != kPluginApiVersion) {
    keep_loaded(std::move(lib));
    return fail(
        fmt::format("plugin API version {}, this Gemflow expects {}: rebuild the plugin "
                    "against this SDK",
                    api, kPluginApiVersion));
  }
  if (!lib.has("gemflow_plugin_fingerprint")) {
    keep_loaded(std::move(lib));
    return fail("no build fingerprint (gemflow_plugin_fingerprint missing)");
  }
  if (auto diff = fingerprint_mismatch(rec.fingerprint, host_fingerprint()); !diff.empty()) {
    keep_loaded(std::move(lib));
    return fail(
        fmt::format("build fingerprint differs from the host: {}; rebuild the plugin against "
                    "this SDK",
                    diff));
  }
  if (!lib.has("gemflow_plugin_register")) {
    keep_loaded(std::move(lib));
    return fail("no register function (gemflow_plugin_register missing)");
  }
  auto& reg = lib.get<void(PluginRegistrar&)>("gemflow_plugin_register");

  // Register into a scratch copy so that a failure midway leaves the host registry untouched.
  Registry scratch = registry_;
  PluginRegistrar registrar(scratch, rec.file.string());
  try {
    reg(registrar);
  } catch (const std::exception& e) {
    keep_loaded(std::move(lib));
    return fail(fmt::format("registration failed: {}", e.what()));
  } catch (...) {
    keep_loaded(std::move(lib));
    return fail("registration failed: unknown exception");
  }
  // Node ids carry their plugin's name ("io.read_structure" of plugin "io"), so that a plugin
  // that loads first cannot take another's ids and have the rightful owner refused.
  for (const NodeEntry* n : scratch.nodes()) {
    const std::string& id = n->spec.info.id;
    if (registry_.find_node(id)) continue;  // not this plugin's
    if (rec.name.empty() || !id.starts_with(rec.name + ".")) {
      keep_loaded(std::move(lib));
      return fail(rec.name.empty()
                      ? fmt::format("node id '{}' registered by a plugin without a name (gemflow_plugin_name)", id)
                      : fmt::format("node id '{}' is outside the plugin's namespace: plugin '{}' ({}) may "
                                    "register only ids '{}.*'",
                                    id, rec.name, rec.file.string(), rec.name));
    }
  }
  // Commit: types first, then nodes. These cannot clash: the scratch copy already checked.
  try {
    for (const TypeInfo* t : scratch.types())
      if (!registry_.find_type(t->name)) registry_.add_type(*t);
    for (const NodeEntry* n : scratch.nodes())
      if (!registry_.find_node(n->spec.info.id)) {
        rec.node_ids.push_back(n->spec.info.id);
        registry_.add_node(*n);
      }
  } catch (const std::exception& e) {  // not expected; reported rather than thrown
    keep_loaded(std::move(lib));
    return fail(fmt::format("registration failed: {}", e.what()));
  }
  keep_loaded(std::move(lib));
  rec.loaded = true;
  records_.push_back(rec);
  return rec;
}

void PluginHost::load_directory(const fs::path& dir) {
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) return;
  std::vector<fs::path> files;
  for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    const auto& p = it->path();
    if (p.extension() == ".so" && (it->is_regular_file(ec) || it->is_symlink(ec))) files.push_back(p);
  }
  std::sort(files.begin(), files.end());
  for (const auto& f : files) (void)load(f);
}

std::vector<fs::path> PluginHost::search_path(const std::vector<fs::path>& extra) {
  std::vector<fs::path> r;
  std::set<fs::path> seen;
  auto add = [&](const fs::path& p) {
    if (p.empty()) return;
    fs::path n = normal(fs::absolute(p));
    if (seen.insert(n).second) r.push_back(std::move(n));
  };
  std::error_code ec;
  const fs::path exe = fs::read_symlink("/proc/self/exe", ec);
  if (!ec) {
    const fs::path prefix = exe.parent_path().parent_path();
    add(prefix / GEMFLOW_PLUGIN_INSTALL_RELDIR);
    add(prefix / "lib" / "gemflow" / "plugins");  // the build tree's layout
  }
  if (const char* env = std::getenv("GEMFLOW_PLUGIN_PATH")) {
    std::string_view s(env);
    while (true) {
      const auto colon = s.find(':');
      add(fs::path(std::string(s.substr(0, colon))));
      if (colon == std::string_view::npos) break;
      s.remove_prefix(colon + 1);
    }
  }
  for (const auto& p : extra) add(p);
  return r;
}

void PluginHost::load_all(const std::vector<fs::path>& extra) {
  for (const auto& dir : search_path(extra)) load_directory(dir);
}

}  // namespace gemflow
