#include "gemflow/plugin_loader.hpp"

#include <dlfcn.h>

#include <algorithm>
#include <cstdlib>
#include <mutex>
#include <set>
#include <string_view>
#include <system_error>

#include <boost/dll/shared_library.hpp>
#include <fmt/format.h>

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
  for (const auto& d : diffs) s += (s.empty() ? "" : ", ") + d;
  return s;
}

fs::path normal(const fs::path& p) {
  std::error_code ec;
  auto c = fs::weakly_canonical(p, ec);
  return ec ? p.lexically_normal() : c;
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
  if (lib.has("gemflow_plugin_fingerprint"))
    rec.fingerprint = &lib.get<const char>("gemflow_plugin_fingerprint");

  if (!lib.has("gemflow_plugin_api_version")) {
    keep_loaded(std::move(lib));
    return fail("not a Gemflow plugin: it does not export gemflow_plugin_api_version "
                "(build it with GEMFLOW_PLUGIN from gemflow/plugin.hpp)");
  }
  const int api = lib.get<const int>("gemflow_plugin_api_version");
  if (api != kPluginApiVersion) {
    keep_loaded(std::move(lib));
    return fail(fmt::format("plugin API version {}, this Gemflow expects {}: rebuild the plugin "
                            "against this SDK",
                            api, kPluginApiVersion));
  }
  if (!lib.has("gemflow_plugin_fingerprint")) {
    keep_loaded(std::move(lib));
    return fail("no build fingerprint (gemflow_plugin_fingerprint missing)");
  }
  if (auto diff = fingerprint_mismatch(rec.fingerprint, host_fingerprint()); !diff.empty()) {
    keep_loaded(std::move(lib));
    return fail(fmt::format("build fingerprint differs from the host: {}; rebuild the plugin against "
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
