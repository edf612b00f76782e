// `gemflow nodes` and `gemflow plugins`: generated from the node specs and the plugin records.
#include <sys/ioctl.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <initializer_list>
#include <map>
#include <set>

#include <fmt/format.h>
#include <spdlog/spdlog.h>
#include <nlohmann/json.hpp>

#include "commands.hpp"
#include "gemflow/atomic_file.hpp"
#include "gemflow/config.hpp"
#include "gemflow/device.hpp"
#include "reporter.hpp"

namespace gemflow::cli {
namespace fs = std::filesystem;

void load_plugins(PluginHost& host, const GlobalOptions& g, bool warn) {
  for (const auto& p : g.plugin_paths) {
    std::error_code ec;
    if (!fs::is_directory(p, ec)) spdlog::warn("--plugin-path {}: not a folder", p.string());
  }
  host.load_all(g.plugin_paths);
  if (!warn) return;
  for (const auto& r : host.records())
    if (!r.loaded) spdlog::warn("plugin {}: not loaded: {}", r.file.string(), r.error);
}

namespace {

// Abbreviations whose '.' never ends a sentence (lower case, without the final dot).
bool is_abbreviation(std::string word) {
  for (char& c : word) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  static const std::set<std::string> known = {"e.g",    "i.e", "eg",  "ie",   "cf", "ch",  "chap", "sec",  "incl", "al",
                                              "approx", "vs",  "fig", "figs", "eq", "eqs", "ref",  "refs", "resp", "no",
                                              "nos",    "vol", "pp",  "p",    "ca", "esp", "max",  "min",  "dept", "dr",
                                              "prof",   "st",  "mr",  "mrs",  "ms", "ed",  "eds",  "viz",  "sq"};
  return known.contains(word);
}

// True when the '.' at text[i] ends a sentence: followed by white space and then a capital,
// a digit, a quote or bracket (or nothing); not after an abbreviation ("e.g.", "ch.",
// "incl.", "et al.") or a single capital initial ("J. Mol. Biol." style).
bool ends_sentence(std::string_view t, std::size_t i) {
  if (i + 1 < t.size() && !std::isspace(static_cast<unsigned char>(t[i + 1]))) return false;
  std::size_t b = i;
  while (b > 0 && !std::isspace(static_cast<unsigned char>(t[b - 1])) && t[b - 1] != '(') --b;
  const std::string word(t.substr(b, i - b));
  if (word.empty() || is_abbreviation(word)) return false;
  if (word.size() == 1 && std::isupper(static_cast<unsigned char>(word[0]))) return false;
  std::size_t n = i + 1;
  while (n < t.size() && std::isspace(static_cast<unsigned char>(t[n]))) ++n;
  if (n == t.size()) return true;
  const auto c = static_cast<unsigned char>(t[n]);
  return std::isupper(c) || std::isdigit(c) || c == '`' || c == '"' || c == '\'' || c == '(' || c >= 0x80;
}

std::string first_sentence(const std::string& doc) {
  const std::string s = doc.substr(0, doc.find('\n'));
  for (std::size_t i = 0; i < s.size(); ++i)
    if (s[i] == '.' && ends_sentence(s, i)) return s.substr(0, i + 1);
  return s;
}

// Code points of UTF-8 text (what a terminal shows, close enough for our text).
std::size_t columns(std::string_view s) {
  std::size_t n = 0;
  for (char c : s) n += (static_cast<unsigned char>(c) & 0xC0) != 0x80;
  return n;
}

/// Width to wrap to: the terminal's when stdout is one, else 100 columns.
std::size_t output_width() {
  winsize ws{};
  if (isatty(STDOUT_FILENO) && ioctl(STDOUT_FILENO, TIOCGWINSZ, &ws) == 0 && ws.ws_col >= 40) return ws.ws_col;
  return 100;
}

/// `text` wrapped at spaces to `width` columns: `first` starts the first line (it counts in
/// the width), every further line starts with `indent` spaces. A newline in `text` starts a new
/// line; a run of spaces between two words on one line is kept (the "  " between a parameter's
/// fields); words longer than a line stay whole.
std::string wrap(std::string_view text, std::size_t width, std::string_view first, std::size_t indent) {
  indent = std::min(indent, width / 2);
  std::string out(first);
  std::size_t col = columns(first);
  bool line_empty = first.empty() || first.back() == ' ';
  const auto new_line = [&] {
    out += '\n';
    out.append(indent, ' ');
    col = indent;
    line_empty = true;
  };
  for (std::size_t i = 0; i < text.size();) {
    if (text[i] == '\n') {
      new_line();
      ++i;
      continue;
    }
    std::size_t gap = 0;
    while (i < text.size() && text[i] == ' ') ++i, ++gap;
    if (i == text.size() || text[i] == '\n') continue;
    std::size_t j = text.find_first_of(" \n", i);
    if (j == std::string_view::npos) j = text.size();
    const std::string_view word = text.substr(i, j - i);
    const std::size_t w = columns(word);
    std::size_t sep = line_empty ? 0 : std::max<std::size_t>(gap, 1);
    if (!line_empty && col + sep + w > width) {
      new_line();
      sep = 0;
    }
    out.append(sep, ' ');
    out += word;
    col += sep + w;
    line_empty = false;
    i = j;
  }
  return out;
}

/// A value as it would be written in a workflow file.
std::string yaml_scalar(const ParamSpec& p, const ParamValue& v) {
  std::string text = format_param(v);
  const bool is_text = std::holds_alternative<std::string>(v);
  if (is_text && (p.kind == ParamKind::String || p.kind == ParamKind::InputPath || p.kind == ParamKind::OutputPath)) {
    const bool plain =
        !text.empty() && text.find_first_of(":{}[],&*#?|<>=!%@`'\"\\ ") == std::string::npos && text.front() != '-';
    if (!plain) {
      std::string q = "\"";
      for (char c : text) {
        if (c == '"' || c == '\\') q += '\\';
        q += c;
      }
      return q + "\"";
    }
  }
  return text;
}

/// Absolute, lexically normal form of a folder, for comparing search-path entries.
std::string normal(const fs::path& p) {
  std::string s = fs::absolute(p).lexically_normal().string();
  while (s.size() > 1 && s.back() == '/') s.pop_back();
  return s;
}

std::string limits_text(const ParamSpec& p) {
  auto num = [](double x) { return fmt::format("{}", x); };
  if (p.min && p.max) return fmt::format("range [{}, {}]", num(*p.min), num(*p.max));
  if (p.min) return fmt::format("minimum {}", num(*p.min));
  if (p.max) return fmt::format("maximum {}", num(*p.max));
  return "";
}

nlohmann::json spec_json(const NodeEntry& e) {
  const NodeSpec& s = e.spec;
  auto ports = [](const std::vector<PortSpec>& ps) {
    nlohmann::json a = nlohmann::json::array();
    for (const auto& p : ps)
      a.push_back({{"name", p.name}, {"type", p.type}, {"optional", p.optional}, {"doc", p.doc}});
    return a;
  };
  nlohmann::json params = nlohmann::json::array();
  for (const auto& p : s.params) {
    nlohmann::json j{{"name", p.name},         {"kind", to_string(p.kind)},
                     {"required", p.required}, {"unit", p.unit},
                     {"doc", p.doc},           {"default", format_param(p.default_value)}};
    if (p.min) j["min"] = *p.min;
    if (p.max) j["max"] = *p.max;
    if (!p.choices.empty()) j["choices"] = p.choices;
    if (!p.extensions.empty()) j["extensions"] = p.extensions;
    params.push_back(j);
  }
  nlohmann::json rules = nlohmann::json::array();
  for (const auto& r : s.info.rules) {
    nlohmann::json when = nlohmann::json::array();
    for (const auto& v : r.when) when.push_back(format_param(v));
    nlohmann::json j{{"param", r.param}, {"when", when},
                     {"other", r.other}, {"other_value", format_param(r.other_value)},
                     {"must", r.must},   {"why", r.why}};
    if (r.holds) j["relation"] = true;
    if (r.compare != ParamCompare::None) {
      j["compare"] = r.compare == ParamCompare::Less        ? "<"
                     : r.compare == ParamCompare::LessEqual ? "<="
                     : r.compare == ParamCompare::Greater   ? ">"
                                                            : ">=";
      if (!r.if_param.empty()) j["if_param"] = r.if_param;
      if (r.unless_below) j["unless_below"] = *r.unless_below;
    }
    rules.push_back(std::move(j));
  }
  return {{"id", s.info.id},
          {"version", s.info.version},
          {"title", s.info.title},
          {"category", s.info.category},
          {"doc", s.info.doc},
          {"stochastic", s.info.stochastic},
          {"errors", s.info.errors},
          {"memory", s.info.memory},
          {"determinism", s.info.determinism},
          {"references", s.info.references},
          {"origin", e.origin},
          {"inputs", ports(s.inputs)},
          {"outputs", ports(s.outputs)},
          {"params", params},
          {"rules", rules}};
}

/// A rule in words: "tolerance must be below cutoff when unlisted_lower = cutoff (why)",
/// "rank other than 0 needs 'pivoted: true' (why)".
std::string rule_text(const NodeSpec& s, const ParamRule& r) {
  std::string when;
  for (const auto& v : r.when) when += (when.empty() ? "" : " or ") + format_param(v);
  if (r.holds) return r.why;  // a relation: its statement in words
  if (r.compare != ParamCompare::None) {
    const char* op = r.compare == ParamCompare::Less        ? "below"
                     : r.compare == ParamCompare::LessEqual ? "at most"
                     : r.compare == ParamCompare::Greater   ? "above"
                                                            : "at least";
    return fmt::format("{} must be {} {}{}{}{}", r.param, op, r.other.empty() ? format_param(r.other_value) : r.other,
                       r.if_param.empty() ? "" : fmt::format(" when {} = {}", r.if_param, when),
                       r.unless_below ? fmt::format(" (values below {} excepted)", *r.unless_below) : "",
                       r.why.empty() ? "" : " (" + r.why + ")");
  }
  const ParamSpec* p = s.param(r.param);
  return fmt::format("{} {}{} {} '{}: {}'{}", r.param, when.empty() ? "other than " : "= ",
                     when.empty() ? (p ? format_param(p->default_value) : std::string("its default")) : when,
                     r.must ? "needs" : "cannot be used with", r.other, format_param(r.other_value),
                     r.why.empty() ? "" : " (" + r.why + ")");
}

/// The facts of a parameter after its name and kind: default (or required), limits with the
/// unit, choices, device values, file types.
std::vector<std::string> param_facts(const ParamSpec& p) {
  std::vector<std::string> parts;
  if (p.required) parts.push_back("required");
  else parts.push_back("default " + yaml_scalar(p, p.default_value));
  if (auto l = limits_text(p); !l.empty()) parts.push_back(l + (p.unit.empty() ? "" : " " + p.unit));
  if (!p.choices.empty()) {
    std::string c;
    for (const auto& x : p.choices) c += (c.empty() ? "" : " | ") + x;
    parts.push_back("choices: " + c);
  }
  if (p.kind == ParamKind::Device) parts.push_back("auto | cpu | cuda | cuda:N");
  if (!p.extensions.empty()) {
    std::string x;
    for (const auto& ext : p.extensions) {
      if (!x.empty()) x += " | ";
      x += ext;
    }
    parts.push_back("files: " + x);
  }
  return parts;
}

/// The line to paste into a workflow: "smooth: {type: distgeom.triangle_smoothing, params: {...}}".
std::string workflow_snippet(const NodeSpec& s) {
  std::string params;
  for (const auto& p : s.params)  // the device too (--device still overrides it)
    params += fmt::format("{}{}: {}", params.empty() ? "" : ", ", p.name,
                          p.required ? "..." : yaml_scalar(p, p.default_value));
  const std::string short_name = s.info.id.substr(s.info.id.rfind('.') + 1);
  return fmt::format("{}: {{type: {}{}}}", short_name, s.info.id,
                     params.empty() ? std::string() : fmt::format(", params: {{{}}}", params));
}

void print_ports(const char* title, const std::vector<PortSpec>& ports, std::size_t width) {
  fmt::print("\n{}:\n", title);
  if (ports.empty()) fmt::print("  (none)\n");
  for (const auto& p : ports) {
    fmt::print("  {}: {}{}\n", p.name, p.type, p.optional ? " (optional)" : "");
    if (!p.doc.empty()) fmt::print("{}\n", wrap(p.doc, width, "      ", 6));
  }
}

void print_node_doc(const NodeEntry& e) {
  const NodeSpec& s = e.spec;
  const std::size_t width = output_width();
  fmt::print("{} — {} (version {})\n", s.info.id, s.info.title, s.info.version);
  // The plugin's file name only: its folder is in `gemflow plugins` (and `nodes --json`), and a
  // long install path must not break the wrapped layout.
  fmt::print("Category: {}    Plugin: {}\n", s.info.category.empty() ? "(none)" : s.info.category,
             e.origin.empty() ? std::string("core") : std::filesystem::path(e.origin).filename().string());
  if (s.info.stochastic)
    fmt::print("Stochastic: takes a seed; the same seed on the same device gives the same result\n");
  if (!s.info.doc.empty()) fmt::print("\n{}\n", wrap(s.info.doc, width, "", 0));
  print_ports("Inputs", s.inputs, width);
  print_ports("Outputs", s.outputs, width);
  fmt::print("\nParameters:\n");
  if (s.params.empty()) fmt::print("  (none)\n");
  for (const auto& p : s.params) {
    std::string head = fmt::format("  {} ({}{})", p.name, to_string(p.kind), p.unit.empty() ? "" : ", " + p.unit);
    const std::vector<std::string> parts = param_facts(p);
    std::string line;
    for (const auto& x : parts) {
      line += "  ";
      line += x;
    }
    fmt::print("{}\n", wrap(line, width, head, 6));
    if (!p.doc.empty()) fmt::print("{}\n", wrap(p.doc, width, "      ", 6));
  }
  if (!s.info.rules.empty()) {  // NodeInfo::rules, checked before a workflow runs
    fmt::print("\nRules (checked before a run):\n");
    for (const auto& r : s.info.rules) fmt::print("{}\n", wrap(rule_text(s, r), width, "  ", 6));
  }
  // The structured parts of the node's documentation (NodeInfo), each under its heading.
  for (const auto& [title, text] :
       std::initializer_list<std::pair<const char*, const std::string*>>{{"Errors", &s.info.errors},
                                                                         {"Memory", &s.info.memory},
                                                                         {"Determinism", &s.info.determinism},
                                                                         {"References", &s.info.references}})
    if (!text->empty()) fmt::print("\n{}:\n{}\n", title, wrap(*text, width, "  ", 2));
  fmt::print("\nIn a workflow:\n  {}\n", workflow_snippet(s));
}

void print_list(const std::vector<const NodeEntry*>& entries) {
  std::map<std::string, std::vector<const NodeEntry*>> by_cat;
  std::size_t w = 0;
  for (const auto* e : entries) {
    by_cat[e->spec.info.category.empty() ? "Uncategorised" : e->spec.info.category].push_back(e);
    w = std::max(w, e->spec.info.id.size());
  }
  const std::size_t width = output_width();
  bool first = true;
  for (const auto& [cat, list] : by_cat) {
    fmt::print("{}{}\n", first ? "" : "\n", cat);
    first = false;
    for (const auto* e : list) {
      const std::string brief = first_sentence(e->spec.info.doc);
      const std::string text = brief.empty() ? e->spec.info.title : fmt::format("{} — {}", e->spec.info.title, brief);
      fmt::print("{}\n", wrap(text, width, fmt::format("  {:<{}}  ", e->spec.info.id, w), w + 4));
    }
  }
}

// ---- `gemflow nodes --markdown DIR`: the node reference (docs/nodes/) ------------------------

constexpr std::string_view kMarkdownMark = "<!-- Generated by `gemflow nodes --markdown`";

/// Prose for Markdown: '<' and '&' as entities (a data type such as Matrix<f64> is not a tag).
std::string md_text(std::string_view t) {
  std::string out;
  for (char c : t) {
    if (c == '<') out += "&lt;";
    else if (c == '&') out += "&amp;";
    else out += c;
  }
  return out;
}

/// A section of prose: each line of the doc its own paragraph (Markdown joins single lines).
std::string md_block(std::string_view t) {
  std::string out;
  for (char c : md_text(t)) {
    if (c == '\n') out += "\n\n";
    else out += c;
  }
  return out;
}

/// A table cell: prose with '|' escaped and line breaks as <br>.
std::string md_cell(std::string_view t) {
  std::string out;
  for (char c : md_text(t)) {
    if (c == '|') out += "\\|";
    else if (c == '\n') out += "<br>";
    else out += c;
  }
  return out;
}

/// Code in a table cell: `x` (a '|' inside still needs its escape in GFM tables).
std::string md_code(std::string_view t) {
  std::string out = "`";
  for (char c : t) {
    if (c == '|') out += "\\|";
    else out += c;
  }
  return out + "`";
}

std::string plugin_file(const NodeEntry& e) {
  return e.origin.empty() ? std::string("core") : fs::path(e.origin).filename().string();
}

std::string md_ports(const std::vector<PortSpec>& ports) {
  if (ports.empty()) return "(none)\n";
  std::string out = "| Port | Type | Description |\n|---|---|---|\n";
  for (const auto& p : ports)
    out += fmt::format("| {} | {}{} | {} |\n", md_code(p.name), md_code(p.type), p.optional ? " (optional)" : "",
                       md_cell(p.doc));
  return out;
}

std::string node_markdown(const NodeEntry& e) {
  const NodeSpec& s = e.spec;
  std::string out = std::string(kMarkdownMark) + " from the node's spec; do not edit. -->\n\n";
  out += fmt::format("# {} — {}\n\n", s.info.id, md_text(s.info.title));
  out += fmt::format("Version {} · Category: {} · Plugin: `{}`\n", s.info.version,
                     s.info.category.empty() ? "(none)" : md_text(s.info.category), plugin_file(e));
  if (s.info.stochastic) out += "\nStochastic: takes a seed; the same seed on the same device gives the same result.\n";
  if (!s.info.doc.empty()) out += "\n" + md_block(s.info.doc) + "\n";
  out += "\n## Inputs\n\n" + md_ports(s.inputs);
  out += "\n## Outputs\n\n" + md_ports(s.outputs);
  out += "\n## Parameters\n\n";
  if (s.params.empty()) {
    out += "(none)\n";
  } else {
    out += "| Name | Kind | Unit | Default | Limits, choices | Description |\n|---|---|---|---|---|---|\n";
    for (const auto& p : s.params) {
      std::vector<std::string> facts = param_facts(p);
      const std::string dflt = p.required ? std::string("required") : md_code(yaml_scalar(p, p.default_value));
      facts.erase(facts.begin());  // the default has its own column
      std::string rest;
      for (const auto& f : facts) rest += (rest.empty() ? "" : "; ") + md_cell(f);
      out += fmt::format("| {} | {} | {} | {} | {} | {} |\n", md_code(p.name), to_string(p.kind), md_cell(p.unit), dflt,
                         rest, md_cell(p.doc));
    }
  }
  if (!s.info.rules.empty()) {
    out += "\n## Rules\n\nChecked before a workflow runs (`gemflow validate`, `gemflow run`, Studio):\n\n";
    for (const auto& r : s.info.rules) out += "- " + md_text(rule_text(s, r)) + "\n";
  }
  for (const auto& [title, text] :
       std::initializer_list<std::pair<const char*, const std::string*>>{{"Errors", &s.info.errors},
                                                                         {"Memory", &s.info.memory},
                                                                         {"Determinism", &s.info.determinism},
                                                                         {"References", &s.info.references}})
    if (!text->empty()) out += fmt::format("\n## {}\n\n{}\n", title, md_block(*text));
  out += fmt::format("\n## In a workflow\n\n```yaml\n{}\n```\n", workflow_snippet(s));
  return out;
}

std::string index_markdown(const std::vector<const NodeEntry*>& entries) {
  std::map<std::string, std::vector<const NodeEntry*>> by_cat;
  std::set<std::string> plugins;
  for (const auto* e : entries) {
    by_cat[e->spec.info.category.empty() ? "Uncategorised" : e->spec.info.category].push_back(e);
    plugins.insert(plugin_file(*e));
  }
  std::string out =
      std::string(kMarkdownMark) +
      " from the node specs; do not edit. Regenerate: build/ci/bin/gemflow nodes --markdown docs/nodes -->\n\n";
  out += "# Node reference\n\n";
  out += fmt::format(
      "{} node types from {} plugins, one page each: ports with their data types, parameters with "
      "defaults, limits, units and choices, rules, errors, memory, determinism and references. The "
      "same text as `gemflow nodes TYPE` and Studio's help.\n",
      entries.size(), plugins.size());
  for (const auto& [cat, list] : by_cat) {
    out += fmt::format("\n## {}\n\n| Node | Title | Summary |\n|---|---|---|\n", md_text(cat));
    for (const auto* e : list)
      out += fmt::format("| [{}]({}.md) | {} | {} |\n", e->spec.info.id, e->spec.info.id, md_cell(e->spec.info.title),
                         md_cell(first_sentence(e->spec.info.doc)));
  }
  return out;
}

/// Writes one page per node type and README.md (the index) into `dir`; removes pages of an
/// earlier generation whose node type is gone. Returns the exit code.
int write_markdown(const std::vector<const NodeEntry*>& entries, const fs::path& dir) {
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec) {
    spdlog::error("--markdown {}: cannot create the folder: {}", dir.string(), ec.message());
    return kExitInvalid;
  }
  std::set<std::string> written;
  auto put = [&](const std::string& name, const std::string& text) {
    const fs::path file = dir / name;
    write_file_atomically(file, text);
    written.insert(name);
  };
  for (const auto* e : entries) put(e->spec.info.id + ".md", node_markdown(*e));
  put("README.md", index_markdown(entries));
  for (const auto& f : fs::directory_iterator(dir, ec)) {
    const std::string name = f.path().filename().string();
    if (f.path().extension() != ".md" || written.contains(name)) continue;
    std::ifstream in(f.path());
    std::string first;
    std::getline(in, first);
    if (first.starts_with(kMarkdownMark)) {
      fs::remove(f.path(), ec);
      spdlog::info("removed {} (no such node type now)", f.path().string());
    }
  }
  fmt::print("{}: {} node pages and README.md\n", dir.string(), entries.size());
  return kExitOk;
}
}  // namespace

int nodes_command(const NodesArgs& args, const GlobalOptions& g, Console&) {
  Registry registry;
  PluginHost host(registry);
  load_plugins(host, g, true);
  const auto all = registry.nodes();

  if (args.markdown) {
    if (!args.type.empty()) {
      spdlog::error("--markdown writes the pages of every node type: give no TYPE");
      return kExitInvalid;
    }
    if (all.empty()) {
      spdlog::error("--markdown: no node types: no plugin was loaded (see `gemflow plugins --doctor`)");
      return kExitInvalid;
    }
    return write_markdown(all, *args.markdown);
  }
  if (args.type.empty()) {
    if (args.json) {
      nlohmann::json a = nlohmann::json::array();
      for (const auto* e : all) a.push_back(spec_json(*e));
      fmt::print("{}\n", a.dump(2));
      return kExitOk;
    }
    if (all.empty()) {
      spdlog::warn("no node types: no plugin was loaded (see `gemflow plugins --doctor`)");
      return kExitOk;
    }
    print_list(all);
    std::set<std::string> origins;
    for (const auto* e : all) origins.insert(e->origin);
    fmt::print("\n{} node type{} from {} plugin{}. `gemflow nodes TYPE` shows ports and parameters.\n", all.size(),
               all.size() == 1 ? "" : "s", origins.size(), origins.size() == 1 ? "" : "s");
    return kExitOk;
  }

  if (const NodeEntry* e = registry.find_node(args.type)) {
    if (args.json) fmt::print("{}\n", spec_json(*e).dump(2));
    else print_node_doc(*e);
    return kExitOk;
  }
  // A plugin prefix ("test" or "test.") lists that plugin's nodes.
  std::string prefix = args.type;
  if (prefix.back() != '.') prefix += '.';
  std::vector<const NodeEntry*> matching;
  for (const auto* e : all)
    if (e->spec.info.id.starts_with(prefix)) matching.push_back(e);
  if (!matching.empty()) {
    if (args.json) {
      nlohmann::json a = nlohmann::json::array();
      for (const auto* e : matching) a.push_back(spec_json(*e));
      fmt::print("{}\n", a.dump(2));
    } else {
      print_list(matching);
    }
    return kExitOk;
  }
  const std::string near = nearest_name(args.type, registry.node_ids());
  spdlog::error("unknown node type '{}'{}", args.type,
                near.empty() ? " (`gemflow nodes` lists them)" : fmt::format(" (did you mean '{}'?)", near));
  return kExitInvalid;
}

int plugins_command(const PluginsArgs& args, const GlobalOptions& g, Console&) {
  if (args.rescan) ::setenv("GEMFLOW_PLUGIN_PROBE", "always", 1);
  Registry registry;
  PluginHost host(registry);
  load_plugins(host, g, false);
  const auto& records = host.records();
  std::vector<std::string> hints;

  if (args.doctor) {
    fmt::print("Gemflow {}\n", GEMFLOW_SDK_VERSION);
    fmt::print("Host fingerprint: {}\n", PluginHost::host_fingerprint());
    const int n = cuda_device_count();
    if (!built_with_cuda()) {
      fmt::print("CUDA: not in this build (every node runs on the CPU)\n");
      hints.push_back(
          "this build has no CUDA support: rebuild with nvcc available (/usr/local/cuda) for the GPU paths");
    } else {
      fmt::print("CUDA: built with CUDA {}; {} device{} visible\n", GEMFLOW_SDK_CUDA, n, n == 1 ? "" : "s");
      for (int i = 0; i < n; ++i) fmt::print("  cuda:{}  {}\n", i, cuda_device_name(i));
      if (n == 0) {
        const char* vis = std::getenv("CUDA_VISIBLE_DEVICES");
        hints.push_back(fmt::format(
            "no CUDA device visible: `device: auto` runs on the CPU, `cuda` fails. Check the driver (nvidia-smi){}",
            vis ? fmt::format(" and CUDA_VISIBLE_DEVICES (= '{}')", vis) : ""));
      }
    }
    std::set<std::string> env_dirs, extra_dirs;
    if (const char* env = std::getenv("GEMFLOW_PLUGIN_PATH")) {
      std::string s = env;
      for (std::size_t a = 0; a <= s.size();) {
        std::size_t b = s.find(':', a);
        if (b == std::string::npos) b = s.size();
        if (b > a) env_dirs.insert(normal(s.substr(a, b - a)));
        a = b + 1;
      }
    }
    for (const auto& p : g.plugin_paths) extra_dirs.insert(normal(p));
    fmt::print("Plugin search path (GEMFLOW_PLUGIN_PATH={}):\n",
               std::getenv("GEMFLOW_PLUGIN_PATH") ? std::getenv("GEMFLOW_PLUGIN_PATH") : "(unset)");
    const auto path = PluginHost::search_path(g.plugin_paths);
    std::size_t files = 0;
    for (std::size_t i = 0; i < path.size(); ++i) {
      const auto& dir = path[i];
      const char* from = extra_dirs.contains(normal(dir)) ? "--plugin-path"
                         : env_dirs.contains(normal(dir)) ? "GEMFLOW_PLUGIN_PATH"
                                                          : "install folder";
      std::error_code ec;
      std::string state;
      if (!fs::is_directory(dir, ec)) {
        state = "missing";
        if (std::string(from) != "install folder")
          hints.push_back(fmt::format("{} {} does not exist", from, dir.string()));
      } else {
        std::size_t count = 0;
        for (const auto& f : fs::directory_iterator(dir, ec))
          if (f.path().extension() == ".so") ++count;
        files += count;
        state = fmt::format("{} .so file{}", count, count == 1 ? "" : "s");
      }
      fmt::print("  {}. {}  ({}; {})\n", i + 1, dir.string(), from, state);
    }
    if (files == 0)
      hints.push_back(
          "no plugin files found: build the project (make) or add a folder with --plugin-path or GEMFLOW_PLUGIN_PATH");
    fmt::print("\n");
  }

  if (records.empty()) fmt::print("No plugins found.\n");
  std::size_t loaded = 0;
  for (const auto& r : records) {
    if (r.loaded) {
      ++loaded;
      fmt::print("loaded   {} {}  {}  ({} node{})\n", r.name, r.version, r.file.string(), r.node_ids.size(),
                 r.node_ids.size() == 1 ? "" : "s");
    } else {
      fmt::print("FAILED   {}: {}\n", r.file.string(), r.error);
      if (args.doctor) {
        std::string lower = r.error;
        std::transform(lower.begin(), lower.end(), lower.begin(), [](unsigned char c) { return std::tolower(c); });
        const std::string file = r.file.filename().string();
        if (!r.remembered_in.empty() || lower.starts_with("crashed while loading") ||
            lower.starts_with("did not finish loading") || lower.starts_with("its load-time code"))
          hints.push_back(fmt::format(
              "{} fails in its own load-time code ({}), so Gemflow skipped it: remove it from the plugin folder, "
              "or fix or rebuild it. It is remembered as failed and not tried again until the file changes{}",
              file, r.error,
              r.remembered_in.empty()
                  ? std::string()
                  : fmt::format(" (to try it again as it is, delete {})", r.remembered_in.string())));
        else if (lower.find("outside the plugin's namespace") != std::string::npos)
          hints.push_back(
              fmt::format("{} registers a node id that is not its own ({}): it is refused so that "
                          "the plugin owning that id loads; fix or remove it",
                          file, r.error));
        else if (lower.starts_with("not a gemflow plugin"))
          hints.push_back(
              fmt::format("{} is not a Gemflow plugin (it exports no Gemflow entry points): remove it "
                          "from the plugin folder",
                          file));
        else if (lower.starts_with("not a loadable shared library") &&
                 lower.find("cannot open shared object") == std::string::npos &&
                 lower.find("undefined symbol") == std::string::npos)
          hints.push_back(
              fmt::format("{} is not a shared library for this system: remove it from the plugin folder", file));
        else if (lower.find("fingerprint") != std::string::npos)
          hints.push_back(
              fmt::format("{} was built with another SDK, C++ library or CUDA version (its fingerprint: {}): "
                          "rebuild it against this Gemflow",
                          file, r.fingerprint.empty() ? "unreadable" : r.fingerprint));
        else if (lower.starts_with("plugin api version"))
          hints.push_back(fmt::format("{} was built for another plugin API: rebuild it against this Gemflow", file));
        else if (lower.find("undefined symbol") != std::string::npos)
          hints.push_back(
              fmt::format("{} refers to code that is not there (undefined symbol): it is out of date or "
                          "half-built; rebuild it (make)",
                          file));
        else if (lower.find("cannot open shared object") != std::string::npos)
          hints.push_back(
              fmt::format("{} needs a library that is not installed: `ldd {}` names it", file, r.file.string()));
        else if (lower.find("duplicate") != std::string::npos || lower.find("already") != std::string::npos)
          hints.push_back(
              fmt::format("{} registers a node id that another plugin owns: remove one of the two files", file));
        else
          hints.push_back(
              fmt::format("{} cannot be used ({}): remove it from the plugin folder or rebuild it", file, r.error));
      }
    }
  }
  fmt::print("{} of {} plugin file{} loaded, {} node type{}.\n", loaded, records.size(), records.size() == 1 ? "" : "s",
             registry.nodes().size(), registry.nodes().size() == 1 ? "" : "s");
  if (args.doctor) {
    if (hints.empty()) fmt::print("\nNo problems found.\n");
    else {
      fmt::print("\nHints:\n");
      for (const auto& h : hints) fmt::print("  - {}\n", h);
    }
  }
  return kExitOk;
}

}  // namespace gemflow::cli
