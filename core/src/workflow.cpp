#include "gemflow/workflow.hpp"

#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <fstream>
#include <functional>
#include <set>
#include <sstream>
#include <string_view>
#include <tuple>
#include <unordered_map>
#include <unordered_set>

#include <fmt/format.h>
#include <yaml-cpp/yaml.h>

#include "gemflow/atomic_file.hpp"
#include "gemflow/executor.hpp"
#include "gemflow/workflow_limits.hpp"

namespace gemflow {

namespace fs = std::filesystem;

// ---------------------------------------------------------------------------------------
// Small model helpers

namespace {

// Length of the valid UTF-8 sequence starting at s[i] (1-4), or 0 when s[i] starts none.
std::size_t utf8_sequence(std::string_view s, std::size_t i) {
  const auto b = [&](std::size_t k) { return static_cast<unsigned char>(s[k]); };
  const unsigned char c = b(i);
  if (c < 0x80) return 1;
  std::size_t n = 0;
  unsigned min = 0;
  unsigned cp = 0;
  if ((c & 0xE0) == 0xC0) n = 2, min = 0x80, cp = c & 0x1Fu;
  else if ((c & 0xF0) == 0xE0) n = 3, min = 0x800, cp = c & 0x0Fu;
  else if ((c & 0xF8) == 0xF0) n = 4, min = 0x10000, cp = c & 0x07u;
  else return 0;
  if (i + n > s.size()) return 0;
  for (std::size_t k = 1; k < n; ++k) {
    if ((b(i + k) & 0xC0) != 0x80) return 0;
    cp = (cp << 6) | (b(i + k) & 0x3Fu);
  }
  if (cp < min || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) return 0;  // overlong, surrogate
  return n;
}

/// Where a workflow's text passes kMaxSectionEntries or kMaxWorkflowEntries (workflow_limits.hpp),
/// counted on the raw text so that yaml-cpp never builds an oversized document.
struct SizeProblem {
  int line = 0;
  std::string message;
};
std::optional<SizeProblem> oversized(std::string_view text) {
  std::string section;  // the current top-level key
  int section_line = 0;
  int child_indent = -1;  // indentation of the section's entries (block style)
  int depth = 0;          // open flow collections ('{', '[') of the current section
  std::size_t entries = 0, total = 0;
  int line = 0;
  auto over = [&](int at) -> std::optional<SizeProblem> {
    if (total > kMaxWorkflowEntries)
      return SizeProblem{at, fmt::format("the file has more than {} YAML entries (lines and flow items): not read",
                                         kMaxWorkflowEntries)};
    if (entries > kMaxSectionEntries)
      return SizeProblem{at, fmt::format("the '{}:' section (line {}) has more than {} entries: not read", section,
                                         section_line, kMaxSectionEntries)};
    return std::nullopt;
  };
  for (std::size_t pos = 0; pos < text.size();) {
    const std::size_t nl = text.find('\n', pos);
    const std::string_view l = text.substr(pos, nl == std::string_view::npos ? std::string_view::npos : nl - pos);
    pos = nl == std::string_view::npos ? text.size() : nl + 1;
    ++line;
    const std::size_t first = l.find_first_not_of(" \t\r");
    if (first == std::string_view::npos || l[first] == '#') continue;
    const int indent = static_cast<int>(first);
    ++total;
    std::size_t scan = first;  // where flow characters are looked for
    if (depth == 0) {
      const bool item = l.substr(first, 2) == "- " || l.substr(first) == "-";
      if (indent == 0 && !item) {
        if (l.starts_with("---") || l.starts_with("...")) continue;
        const std::size_t colon = l.find(':');
        section = std::string(l.substr(0, std::min(colon, l.size())));
        section_line = line;
        child_indent = -1;
        entries = 0;
        scan = colon == std::string_view::npos ? l.size() : colon + 1;
      } else if (!section.empty()) {
        if (child_indent < 0) child_indent = indent;
        if (indent == child_indent) ++entries;
      }
    }
    // Flow collections: each ',' adds an entry to the file, and one at the section's own level
    // (a section written as one '{...}' or '[...]') an entry to the section.
    const int section_level = depth == 0 && scan > first ? 1 : 0;  // flow opened on the key's line
    char quote = 0;
    for (std::size_t i = scan; i < l.size(); ++i) {
      const char c = l[i];
      if (quote) {
        if (c == quote) quote = 0;
        continue;
      }
      if (c == '"' || c == '\'') quote = c;
      else if (c == '#' && i > 0 && (l[i - 1] == ' ' || l[i - 1] == '\t')) break;
      else if (c == '{' || c == '[') {
        if (++depth == 1 && section_level == 1) entries = 1;
      } else if ((c == '}' || c == ']') && depth > 0) {
        --depth;
      } else if (c == ',') {
        ++total;
        if (depth == 1 && child_indent < 0) ++entries;
      }
    }
    if (auto p = over(line)) return p;
  }
  return std::nullopt;
}

}  // namespace

std::string printable(std::string_view text) {
  std::string r;
  r.reserve(text.size());
  for (std::size_t i = 0; i < text.size();) {
    const auto c = static_cast<unsigned char>(text[i]);
    const std::size_t n = utf8_sequence(text, i);
    if (n == 0 || c < 0x20 || c == 0x7F) {
      r += fmt::format("\\x{:02x}", c);
      ++i;
    } else {
      r.append(text.substr(i, n));
      i += n;
    }
  }
  return r;
}

namespace {
std::string diagnostic_text(const Diagnostic& d, bool severity_and_node) {
  std::string s;
  if (!d.where.file.empty() || d.where.line > 0) {
    s += d.where.str();
    s += ": ";
  }
  const std::string_view node = severity_and_node ? std::string_view(d.node) : std::string_view();
  if (severity_and_node) s += d.severity == Diagnostic::Severity::Error ? "error: " : "warning: ";
  if (!node.empty()) s += fmt::format("node '{}'", node);
  if (!d.param.empty())
    s += fmt::format("{}{} '{}'", node.empty() ? "" : ", ", d.is_port ? "port" : "parameter", d.param);
  if (!node.empty() || !d.param.empty()) s += ": ";
  s += d.message;
  if (!d.hint.empty()) {
    s += " (";
    s += d.hint;
    s += ')';
  }
  return printable(s);
}
}  // namespace

std::string Diagnostic::str() const { return diagnostic_text(*this, true); }
std::string Diagnostic::log_str() const { return diagnostic_text(*this, false); }

const ParamValue* NodeInstance::param(std::string_view name) const {
  for (const auto& [k, v] : params)
    if (k == name) return &v;
  return nullptr;
}

void NodeInstance::set_param(const std::string& name, ParamValue v) {
  for (auto& [k, old] : params)
    if (k == name) {
      old = std::move(v);
      return;
    }
  params.emplace_back(name, std::move(v));
}

std::string Link::str() const { return fmt::format("{}.{} -> {}.{}", from_node, from_port, to_node, to_port); }

NodeInstance* Workflow::find(std::string_view id) {
  for (auto& n : nodes)
    if (n.id == id) return &n;
  return nullptr;
}
const NodeInstance* Workflow::find(std::string_view id) const {
  for (const auto& n : nodes)
    if (n.id == id) return &n;
  return nullptr;
}

fs::path Workflow::base_dir() const {
  if (file.empty()) return fs::current_path();
  return fs::absolute(file).parent_path();
}

bool LoadResult::ok() const {
  if (!workflow) return false;
  return std::none_of(diagnostics.begin(), diagnostics.end(),
                      [](const Diagnostic& d) { return d.severity == Diagnostic::Severity::Error; });
}

namespace {

std::string did_you_mean(std::string_view name, const std::vector<std::string>& candidates) {
  const std::string n = nearest_name(name, candidates);
  return n.empty() ? std::string() : fmt::format("did you mean '{}'?", n);
}

std::string join(const std::vector<std::string>& v, std::string_view sep = ", ") {
  std::string s;
  for (const auto& x : v) {
    if (!s.empty()) s += sep;
    s += x;
  }
  return s;
}

// Node ids: letters, digits, '_' and '-', starting with a letter or '_' (links use '.'), at
// most kMaxIdLength characters.
bool valid_id(std::string_view id) {
  if (id.empty() || id.size() > kMaxIdLength || !(std::isalpha(static_cast<unsigned char>(id[0])) || id[0] == '_'))
    return false;
  return std::all_of(id.begin(), id.end(),
                     [](char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-'; });
}

const std::string& invalid_id_message() {
  static const std::string m =
      fmt::format("invalid node id: use letters, digits, '_' and '-', starting with a letter or '_', at most {} "
                  "characters",
                  kMaxIdLength);
  return m;
}

// Ids of a flattened workflow: valid ids joined by '/' ("refine/dg").
bool valid_flat_id(std::string_view id) {
  std::size_t start = 0;
  while (true) {
    const auto slash = id.find('/', start);
    if (!valid_id(id.substr(start, slash == std::string_view::npos ? std::string_view::npos : slash - start)))
      return false;
    if (slash == std::string_view::npos) return true;
    start = slash + 1;
  }
}

std::vector<std::string> names_of(const std::vector<PortSpec>& ports) {
  std::vector<std::string> r;
  for (const auto& p : ports) r.push_back(p.name);
  return r;
}
std::vector<std::string> names_of(const std::vector<ParamSpec>& params) {
  std::vector<std::string> r;
  for (const auto& p : params) r.push_back(p.name);
  return r;
}

// What the parser knows beyond the model: exact locations and problems already reported.
struct ParseExtras {
  std::map<std::string, int> top_key_line;                                        // top-level key → its line
  std::map<std::string, SourceLocation> type_where;                               // node id → its `type:` value
  std::set<std::pair<std::string, std::string>> reported;                         // (node, param) already reported
  std::map<std::pair<std::string, std::string>, SourceLocation> param_key_where;  // (node, param) → key
  bool have_nodes = false;                                                        // the file has a `nodes:` key
  bool links_misspelled = false;  // no `links:`, but an unknown top-level key close to it
  // Nodes saved at an older version of a type with migrations: their parameters are kept as
  // text until the migration has renamed them, then parsed (reparse_migrated).
  std::set<std::string> deferred;
};

Diagnostic make_diag(SourceLocation where, std::string node, std::string param, std::string message,
                     std::string hint = {}, Diagnostic::Severity sev = Diagnostic::Severity::Error) {
  Diagnostic d;
  d.severity = sev;
  d.where = std::move(where);
  d.node = std::move(node);
  d.param = std::move(param);
  d.message = std::move(message);
  d.hint = std::move(hint);
  return d;
}

/// Parses the text parameters of the migrated nodes against their current specs.
void reparse_migrated(Workflow& wf, const Registry& registry, ParseExtras& extras, std::vector<Diagnostic>& out) {
  for (NodeInstance& n : wf.nodes) {
    if (!extras.deferred.count(n.id)) continue;
    const NodeEntry* e = registry.find_node(n.type);
    if (!e) continue;
    for (auto& [name, value] : n.params) {
      const auto* text = std::get_if<std::string>(&value);
      const ParamSpec* ps = e->spec.param(name);
      if (!text || !ps || extras.reported.count({n.id, name})) continue;
      auto parsed = ps->parse(*text);
      if (auto* why = std::get_if<std::string>(&parsed)) {
        const auto at = n.param_where.find(name);
        out.push_back(make_diag(at != n.param_where.end() ? at->second : n.where, n.id, name, *why));
        extras.reported.insert({n.id, name});
      } else {
        value = std::get<ParamValue>(parsed);
      }
    }
  }
}

// Diagnostics of one kind (the message with its quoted names and numbers left out) are listed
// kListedPerKind times; the others are counted and summed up in one line at the end, so that a
// file with millions of bad entries gives a readable report in bounded time and memory.
constexpr std::size_t kListedPerKind = 10;

class DiagnosticList {
 public:
  explicit DiagnosticList(std::vector<Diagnostic>& out) : out_(out) {}

  static std::string kind_of(Diagnostic::Severity severity, std::string_view message) {
    std::string k(1, severity == Diagnostic::Severity::Error ? 'E' : 'W');
    bool quoted = false;
    for (const char c : message) {
      if (c == '\'') quoted = !quoted;
      else if (!quoted && !std::isdigit(static_cast<unsigned char>(c))) k += c;
    }
    return k;
  }
  /// False when a diagnostic with this message would only be counted (its hint need not be
  /// computed).
  [[nodiscard]] bool listed(Diagnostic::Severity severity, std::string_view message) const {
    const auto it = kinds_.find(kind_of(severity, message));
    return it == kinds_.end() || it->second.count < kListedPerKind;
  }
  /// Adds `d`, or counts it when kListedPerKind of its kind were added; true when added.
  bool add(Diagnostic d) {
    Kind& k = kinds_[kind_of(d.severity, d.message)];
    if (++k.count > kListedPerKind) return false;
    if (k.count == kListedPerKind) k.last = d;
    out_.push_back(std::move(d));
    return true;
  }
  /// One diagnostic per kind that had more than kListedPerKind, at the last one listed.
  void summarise() {
    for (auto& [key, k] : kinds_) {
      if (k.count <= kListedPerKind) continue;
      const std::size_t more = k.count - kListedPerKind;
      k.last.message =
          fmt::format("{} more {} of this kind, not listed: {}", more,
                      k.last.severity == Diagnostic::Severity::Error ? "errors" : "warnings", k.last.message);
      k.last.hint.clear();
      k.last.node.clear();
      k.last.param.clear();
      out_.push_back(std::move(k.last));
    }
    kinds_.clear();
  }
  void clear() { kinds_.clear(); }

 private:
  struct Kind {
    std::size_t count = 0;
    Diagnostic last;  // the last one listed
  };
  std::vector<Diagnostic>& out_;
  std::map<std::string, Kind> kinds_;
};

// Hint for a bad parameter value: the nearest choice of a Choice parameter.
std::string value_hint(const ParamSpec& spec, const ParamValue& v) {
  if (spec.kind == ParamKind::Choice && std::holds_alternative<std::string>(v))
    return did_you_mean(std::get<std::string>(v), spec.choices);
  if (spec.kind == ParamKind::Device && std::holds_alternative<std::string>(v)) {
    std::string text = std::get<std::string>(v);
    std::transform(text.begin(), text.end(), text.begin(), [](unsigned char c) { return std::tolower(c); });
    if (text.rfind("gpu", 0) == 0) return "a GPU is 'cuda' or 'cuda:N'";  // nearest by spelling would be 'cpu'
    return did_you_mean(std::get<std::string>(v), {"auto", "cpu", "cuda", "cuda:0"});
  }
  return {};
}

// A cycle of the link graph as node indices in link direction, starting at the node that comes
// first in the file; empty when the graph is acyclic. `order` receives Kahn's order (file order
// breaks ties) of the nodes outside cycles.
std::vector<std::size_t> find_cycle(const Workflow& wf, std::vector<std::string>* order) {
  const std::size_t n = wf.nodes.size();
  std::map<std::string, std::size_t> index;
  for (std::size_t i = 0; i < n; ++i) index.emplace(wf.nodes[i].id, i);
  std::vector<std::set<std::size_t>> succ(n);
  std::vector<std::size_t> indeg(n, 0);
  for (const auto& l : wf.links) {
    auto a = index.find(l.from_node), b = index.find(l.to_node);
    if (a == index.end() || b == index.end()) continue;
    if (succ[a->second].insert(b->second).second) ++indeg[b->second];
  }
  std::set<std::size_t> ready;
  for (std::size_t i = 0; i < n; ++i)
    if (indeg[i] == 0) ready.insert(i);
  std::size_t done = 0;
  while (!ready.empty()) {
    const std::size_t i = *ready.begin();
    ready.erase(ready.begin());
    ++done;
    if (order) order->push_back(wf.nodes[i].id);
    for (std::size_t j : succ[i])
      if (--indeg[j] == 0) ready.insert(j);
  }
  if (done == n) return {};

  // A cycle remains among the nodes with indeg > 0: walk predecessors until one repeats.
  std::vector<std::vector<std::size_t>> pred(n);
  for (std::size_t i = 0; i < n; ++i)
    for (std::size_t j : succ[i])
      if (indeg[i] > 0 && indeg[j] > 0) pred[j].push_back(i);
  std::size_t start = 0;
  while (indeg[start] == 0) ++start;
  std::vector<std::size_t> path;
  std::map<std::size_t, std::size_t> pos;
  std::size_t cur = start;
  while (!pos.count(cur)) {
    pos[cur] = path.size();
    path.push_back(cur);
    cur = *std::min_element(pred[cur].begin(), pred[cur].end());
  }
  // path[pos[cur]..] walks backwards along the cycle; return it forwards, starting at the
  // node that comes first in the file.
  std::vector<std::size_t> cycle(path.begin() + static_cast<std::ptrdiff_t>(pos[cur]), path.end());
  std::reverse(cycle.begin(), cycle.end());
  std::rotate(cycle.begin(), std::min_element(cycle.begin(), cycle.end()), cycle.end());
  return cycle;
}

std::string cycle_text(const Workflow& wf, const std::vector<std::size_t>& cycle) {
  std::string text = "the workflow has a cycle: ";
  for (std::size_t i : cycle) {
    text += wf.nodes[i].id;
    text += " -> ";
  }
  text += wf.nodes[cycle.front()].id;
  return text;
}

// How early a diagnostic is listed: problems with the file's structure first (they explain
// the others), then unknown node types, then everything else; file order within each group.
int importance(const Diagnostic& d) {
  static const char* structural[] = {"not a text file",        "YAML syntax error", "unknown top-level key",
                                     "missing format version", "missing 'nodes:'",  "written by a newer",
                                     "'gemflow:' must be",     "format ",           "a workflow is a YAML map",
                                     "empty workflow file",    "'nodes:' must be",  "'links:' must be"};
  for (const char* p : structural)
    if (d.message.starts_with(p)) return 0;
  if (d.message.starts_with("unknown node type") || d.message.starts_with("no type given") ||
      d.message.starts_with("no 'type:' given"))
    return 1;
  return 2;
}

// At most this many "required input is not connected" errors are listed one by one.
constexpr std::size_t kMaxUnconnected = 8;

/// validate()'s checks of one workflow, in the order their diagnostics are listed: node ids, then
/// per node its type, version, parameters and the rules between them, then the links, the
/// required inputs, cycles and an empty workflow. `extras` (from the parser, or null) says what
/// the parser reported already and where the file wrote each key.
class Validator {
 public:
  Validator(const Workflow& wf, const Registry& registry, const ParseExtras* extras)
      : wf_(wf), registry_(registry), extras_(extras), list_(diags_) {}

  std::vector<Diagnostic> run() && {
    check_ids();
    for (const auto& n : wf_.nodes) check_node(n);
    check_links();
    check_exposed();
    check_required_inputs();
    check_cycles();
    // an empty workflow runs, but does nothing: say so
    if (wf_.nodes.empty() && (!extras_ || extras_->have_nodes))
      list_.add(make_diag(SourceLocation{wf_.file.string(), 0, 0}, "", "", "the workflow has no nodes", {},
                          Diagnostic::Severity::Warning));
    list_.summarise();
    return std::move(diags_);
  }

 private:
  SourceLocation node_loc(const NodeInstance& n) const {
    return n.where.file.empty() && n.where.line == 0 ? SourceLocation{wf_.file.string(), 0, 0} : n.where;
  }

  /// Duplicate and malformed node ids; fills the id index that the link checks use.
  void check_ids() {
    for (const auto& n : wf_.nodes) {
      ids_.push_back(n.id);
      if (!by_id_.emplace(n.id, &n).second) list_.add(make_diag(node_loc(n), n.id, "", "node id used twice"));
      if (!valid_flat_id(n.id))
        list_.add(make_diag(node_loc(n), n.id, "", invalid_id_message()));
    }
  }

  /// A node's type, version, parameters and parameter rules.
  void check_node(const NodeInstance& n) {
    if (n.type == kSubWorkflowType) {
      if (n.sub) check_params(n, n.sub->spec);
      else if (!extras_)  // the loader reports why it has none
        list_.add(make_diag(node_loc(n), n.id, "path",
                            "the sub-workflow is not loaded (set 'path' and call load_subworkflows)"));
      return;
    }
    const NodeEntry* e = registry_.find_node(n.type);
    if (!e && n.type.empty() && extras_) return;  // the parser said so already ("no 'type:' given")
    if (!e) {
      SourceLocation at = node_loc(n);
      if (extras_)
        if (auto it = extras_->type_where.find(n.id); it != extras_->type_where.end()) at = it->second;
      std::string message =
          n.type.empty() ? std::string("no type given") : fmt::format("unknown node type '{}'", n.type);
      std::string hint =
          list_.listed(Diagnostic::Severity::Error, message) ? did_you_mean(n.type, registry_.node_ids()) : "";
      list_.add(make_diag(at, n.id, "", std::move(message), std::move(hint)));
      return;
    }
    check_version(n, *e);
    // the rules are checked only when every value set is valid
    if (check_params(n, e->spec) && !e->spec.info.rules.empty()) check_rules(n, e->spec);
  }

  void check_version(const NodeInstance& n, const NodeEntry& e) {
    const NodeSpec& spec = e.spec;
    if (n.type_version > spec.info.version)
      list_.add(make_diag(node_loc(n), n.id, "",
                          fmt::format("saved with version {} of '{}', but the installed plugin has "
                                      "version {}: update the plugin ({})",
                                      n.type_version, n.type, spec.info.version, e.origin)));
    else if (n.type_version > 0 && n.type_version < spec.info.version)
      list_.add(make_diag(node_loc(n), n.id, "",
                          fmt::format("saved with version {} of '{}'; the installed version is {} and "
                                      "has no migration from version {}: check its parameters",
                                      n.type_version, n.type, spec.info.version, n.type_version),
                          {}, Diagnostic::Severity::Warning));
  }

  /// Unknown and invalid parameter values, required parameters not set; true when every value
  /// set is valid.
  bool check_params(const NodeInstance& n, const NodeSpec& spec) {
    bool params_ok = true;
    for (const auto& [name, value] : n.params) {
      auto wit = n.param_where.find(name);
      const SourceLocation at = wit != n.param_where.end() ? wit->second : node_loc(n);
      if (extras_ && extras_->reported.count({n.id, name})) {
        params_ok = false;
        continue;
      }
      const ParamSpec* ps = spec.param(name);
      if (!ps) {
        SourceLocation key_at = at;
        if (extras_)
          if (auto it = extras_->param_key_where.find({n.id, name}); it != extras_->param_key_where.end())
            key_at = it->second;
        list_.add(make_diag(key_at, n.id, name, fmt::format("'{}' has no parameter '{}'", n.type, name),
                            did_you_mean(name, names_of(spec.params))));
        params_ok = false;
        continue;
      }
      if (auto why = ps->check(value)) {
        list_.add(make_diag(at, n.id, name, *why, value_hint(*ps, value)));
        params_ok = false;
      }
    }
    for (const auto& ps : spec.params)
      if (ps.required && !n.param(ps.name))
        list_.add(make_diag(node_loc(n), n.id, ps.name,
                            fmt::format("required {} parameter is not set{}", to_string(ps.kind),
                                        ps.doc.empty() ? "" : " (" + ps.doc + ")")));
    return params_ok;
  }

  /// Rules between parameters (NodeInfo::rules), at the first of the two parameters that the
  /// workflow sets: a --set that took part (what changed), else the first of the two in the file.
  void check_rules(const NodeInstance& n, const NodeSpec& spec) {
    const auto value_of = [&](const std::string& pname) -> const ParamValue& {
      if (const ParamValue* v = n.param(pname)) return *v;
      return spec.param(pname)->default_value;
    };
    for (const ParamRule* rule : spec.broken_rules(value_of)) {
      SourceLocation at = node_loc(n);
      std::string pname = rule->param;
      bool found = false;
      for (const bool from_set : {true, false})
        for (const auto* name : {&rule->param, &rule->other, &rule->if_param}) {
          const auto it = n.param_where.find(*name);
          if (found || it == n.param_where.end() || it->second.file.starts_with("--set ") != from_set) continue;
          at = it->second;
          pname = *name;
          found = true;
        }
      Diagnostic d = make_diag(at, n.id, pname, rule_message(*rule, value_of));
      d.rule = true;
      list_.add(std::move(d));
    }
  }

  /// Links: endpoints, types, one link per input. A link that touches a node of unknown type is
  /// not checked (the type error is the one to fix), but still counts as feeding its input.
  void check_links() {
    for (const auto& l : wf_.links) targeted_.insert({l.to_node, l.to_port});
    std::map<std::pair<std::string, std::string>, const Link*> fed;
    for (const auto& l : wf_.links) {
      const SourceLocation at =
          l.where.file.empty() && l.where.line == 0 ? SourceLocation{wf_.file.string(), 0, 0} : l.where;
      const PortSpec* out = nullptr;
      const PortSpec* in = nullptr;
      const bool from_ok = link_end(l, at, true, out);  // both ends reported
      const bool to_ok = link_end(l, at, false, in);
      if (!from_ok || !to_ok) continue;
      if (out->type != in->type) {
        auto d = make_diag(
            at, l.to_node, l.to_port,
            fmt::format("link '{}': output type {} does not fit input type {}", l.str(), out->type, in->type));
        d.is_port = true;
        list_.add(std::move(d));
      }
      auto [it, fresh] = fed.emplace(std::pair{l.to_node, l.to_port}, &l);
      if (!fresh) {
        auto d = make_diag(at, l.to_node, l.to_port,
                           fmt::format("input already fed by '{}'{}; an input takes one link", it->second->str(),
                                       it->second->where.line > 0 ? fmt::format(" (line {})", it->second->where.line)
                                                                  : std::string()));
        d.is_port = true;
        list_.add(std::move(d));
      }
    }
  }

  /// One end of link l (`from`: its output, else its input): the port into `port` (null when the
  /// port is unknown); false when the end cannot be checked or is wrong (reported here, or the
  /// node's unknown type above).
  bool link_end(const Link& l, const SourceLocation& at, bool from, const PortSpec*& port_out) {
    const std::string& nid = from ? l.from_node : l.to_node;
    const std::string& port = from ? l.from_port : l.to_port;
    const auto found = by_id_.find(nid);
    const NodeInstance* n = found == by_id_.end() ? nullptr : found->second;
    if (!n) {
      std::string message = fmt::format("link '{}': no node '{}'", l.str(), nid);
      std::string hint = list_.listed(Diagnostic::Severity::Error, message) ? did_you_mean(nid, ids_) : "";
      list_.add(make_diag(at, "", "", std::move(message), std::move(hint)));
      return false;
    }
    const NodeSpec* spec = node_spec(*n, registry_);
    if (!spec) return false;  // unknown type: reported by check_node
    const auto& ports = from ? spec->outputs : spec->inputs;
    const PortSpec* p = from ? spec->output(port) : spec->input(port);
    port_out = p;
    if (p) return true;
    auto d = make_diag(
        at, nid, port,
        fmt::format("link '{}': '{}' has no {} port '{}' ({}: {})", l.str(), n->type, from ? "output" : "input", port,
                    from ? "outputs" : "inputs", ports.empty() ? std::string("none") : join(names_of(ports))),
        did_you_mean(port, names_of(ports)));
    d.is_port = true;
    list_.add(std::move(d));
    return false;
  }

  /// `inputs:`/`outputs:`: each names an existing port of the right direction; the ports of one
  /// exposed input share a type and are fed by no inner link. An exposed input counts as
  /// connecting its ports (the workflow that includes this one feeds them).
  void check_exposed() {
    std::set<std::string> names;
    for (const bool in : {true, false})
      for (const auto& x : in ? wf_.inputs : wf_.outputs) {
        const std::string what = in ? "input" : "output";
        if (!names.insert((in ? "in:" : "out:") + x.name).second) {
          list_.add(make_diag(x.where, "", "", fmt::format("exposed {} '{}' declared twice", what, x.name)));
          continue;
        }
        if (!in && x.targets.size() != 1) {
          list_.add(make_diag(x.where, "", "", fmt::format("exposed output '{}' must name one inner port", x.name)));
          continue;
        }
        std::string type;
        for (const auto& [nid, port] : x.targets) {
          const auto found = by_id_.find(nid);
          if (found == by_id_.end()) {
            const std::string message = fmt::format("exposed {} '{}': no node '{}'", what, x.name, nid);
            // the hint (edit distance to every node id) only for diagnostics that are listed
            std::string hint = list_.listed(Diagnostic::Severity::Error, message) ? did_you_mean(nid, ids_) : "";
            list_.add(make_diag(x.where, "", "", message, std::move(hint)));
            continue;
          }
          const NodeSpec* spec = node_spec(*found->second, registry_);
          if (!spec) continue;  // unknown type: reported by check_node
          const PortSpec* p = in ? spec->input(port) : spec->output(port);
          if (!p) {
            const auto& ports = in ? spec->inputs : spec->outputs;
            auto d = make_diag(
                x.where, nid, port,
                fmt::format("exposed {} '{}': '{}' has no {} port '{}'", what, x.name, found->second->type, what, port),
                did_you_mean(port, names_of(ports)));
            d.is_port = true;
            list_.add(std::move(d));
            continue;
          }
          if (!type.empty() && p->type != type)
            list_.add(make_diag(
                x.where, nid, port,
                fmt::format("exposed input '{}' feeds ports of different types ({} and {})", x.name, type, p->type)));
          type = p->type;
          if (in && !targeted_.insert({nid, port}).second)
            list_.add(make_diag(
                x.where, nid, port,
                fmt::format("exposed input '{}' feeds {}.{}, which a link feeds already", x.name, nid, port)));
        }
      }
  }

  /// Required inputs connected (the first kMaxUnconnected listed, then a count). Not checked when
  /// `links:` looks misspelled: that error says it.
  void check_required_inputs() {
    std::size_t unconnected = 0;
    const Diagnostic* last_unconnected = nullptr;
    for (const auto& n : wf_.nodes) {
      const NodeSpec* spec = node_spec(n, registry_);
      if (!spec || (extras_ && extras_->links_misspelled)) continue;
      for (const auto& p : spec->inputs)
        if (!p.optional && !targeted_.count({n.id, p.name})) {
          if (++unconnected > kMaxUnconnected) continue;
          auto d = make_diag(node_loc(n), n.id, p.name, fmt::format("required input ({}) is not connected", p.type));
          d.is_port = true;
          diags_.push_back(std::move(d));
          last_unconnected = &diags_.back();
        }
    }
    if (unconnected > kMaxUnconnected && last_unconnected) {
      const SourceLocation at = last_unconnected->where;
      diags_.push_back(make_diag(at, "", "",
                                 fmt::format("{} more required inputs are not connected (is 'links:' complete?)",
                                             unconnected - kMaxUnconnected)));
    }
  }

  /// Cycles: located at the link that closes the cycle (the last of its links in the file).
  void check_cycles() {
    const auto cycle = find_cycle(wf_, nullptr);
    if (cycle.empty()) return;
    std::set<std::pair<std::string_view, std::string_view>> edges;  // of the cycle
    for (std::size_t k = 0; k < cycle.size(); ++k)
      edges.emplace(wf_.nodes[cycle[k]].id, wf_.nodes[cycle[(k + 1) % cycle.size()]].id);
    const Link* closing = nullptr;
    for (const auto& l : wf_.links)
      if (edges.count({l.from_node, l.to_node}) &&
          (!closing || std::pair(l.where.line, l.where.column) > std::pair(closing->where.line, closing->where.column)))
        closing = &l;
    SourceLocation at{wf_.file.string(), 0, 0};
    std::string hint;
    if (closing) {
      if (closing->where.line > 0 || !closing->where.file.empty()) at = closing->where;
      hint = fmt::format("the link '{}' closes it", closing->str());
    }
    list_.add(make_diag(at, "", "", cycle_text(wf_, cycle), hint));
  }

  const Workflow& wf_;
  const Registry& registry_;
  const ParseExtras* extras_;
  std::vector<Diagnostic> diags_;
  DiagnosticList list_;  // adds to diags_
  std::vector<std::string> ids_;
  // node by id (the first of a duplicate id, as Workflow::find): one lookup per link end
  std::unordered_map<std::string_view, const NodeInstance*> by_id_;
  std::set<std::pair<std::string, std::string>> targeted_;  // (node, port) named by any link
};

std::vector<Diagnostic> validate_impl(const Workflow& wf, const Registry& registry, const ParseExtras* extras) {
  return Validator(wf, registry, extras).run();
}

// ---------------------------------------------------------------------------------------
// Parsing

class Parser {
 public:
  Parser(std::string file, const Registry& registry, std::vector<Diagnostic>& diags)
      : file_(std::move(file)), registry_(registry), diags_(diags), list_(diags) {}

  SourceLocation at(const YAML::Node& n) const {
    const YAML::Mark m = n.Mark();
    if (m.is_null()) return {file_, 0, 0};
    return {file_, m.line + 1, m.column + 1};
  }
  // Each returns true when the diagnostic was listed (see DiagnosticList).
  bool error(const YAML::Node& where, std::string node, std::string param, std::string msg, std::string hint = {},
             bool is_port = false) {
    auto d = make_diag(at(where), std::move(node), std::move(param), std::move(msg), std::move(hint));
    d.is_port = is_port;
    return list_.add(std::move(d));
  }
  bool warning(const YAML::Node& where, std::string node, std::string msg, std::string hint = {}) {
    return list_.add(
        make_diag(at(where), std::move(node), "", std::move(msg), std::move(hint), Diagnostic::Severity::Warning));
  }

  // Keys of a map in order; reports duplicates and keys outside `allowed` (with hints).
  std::vector<std::pair<YAML::Node, YAML::Node>> entries(const YAML::Node& map, const std::string& node,
                                                         const std::string& what,
                                                         const std::vector<std::string>* allowed) {
    std::vector<std::pair<YAML::Node, YAML::Node>> r;
    std::set<std::string> seen;
    for (auto it = map.begin(); it != map.end(); ++it) {
      // by value: `it->first` is a member of a temporary proxy (a reference to it dangles)
      const YAML::Node k = it->first;
      if (!k.IsScalar()) {
        error(k, node, "", fmt::format("{} must be a plain name", what));
        continue;
      }
      const std::string key = k.Scalar();
      if (!seen.insert(key).second) {
        error(k, node, "", fmt::format("{} '{}' given twice", what, key));
        continue;
      }
      if (allowed && std::find(allowed->begin(), allowed->end(), key) == allowed->end()) {
        const bool listed = error(k, node, "", fmt::format("unknown {} '{}' (expected: {})", what, key, join(*allowed)),
                                  did_you_mean(key, *allowed));
        if (listed && node.empty() && what == "top-level key") unknown_top_.emplace_back(key, diags_.size() - 1);
        continue;
      }
      r.emplace_back(k, it->second);
    }
    return r;
  }

  static std::string scalar_text(const YAML::Node& v) { return v.IsNull() ? std::string() : v.Scalar(); }

  std::optional<Workflow> parse(const std::string& text) {
    if (auto d = not_text(text)) {
      diags_.push_back(std::move(*d));
      return std::nullopt;
    }
    if (auto big = oversized(text)) {
      diags_.push_back(make_diag({file_, big->line, 1}, "", "", big->message,
                                 "split the workflow into sub-workflows (a 'workflow' node runs another file)"));
      return std::nullopt;
    }
    YAML::Node root;
    try {
      root = YAML::Load(text);
    } catch (const YAML::Exception& e) {
      diags_.push_back(syntax_error(text, e));
      return std::nullopt;
    }
    if (!root.IsMap()) {
      diags_.push_back(make_diag({file_, 1, 1}, "", "",
                                 root.IsNull() ? std::string("empty workflow file (expected 'gemflow: 1' and 'nodes:')")
                                               : std::string("a workflow is a YAML map with 'gemflow:' and 'nodes:'")));
      return std::nullopt;
    }
    Workflow wf;
    wf.file = file_;
    static const std::vector<std::string> top = {"gemflow", "name",    "description", "nodes",  "links",
                                                 "inputs",  "outputs", "sweep",       "editor", "annotations"};
    bool have_format = false, have_nodes = false, have_links = false;
    YAML::Node editor, annotations;
    for (auto& [k, v] : entries(root, "", "top-level key", &top)) {
      const std::string key = k.Scalar();
      extras.top_key_line[key] = at(k).line;
      if (key == "gemflow") {
        have_format = true;
        int fmt_version = 0;
        try {
          fmt_version = v.as<int>();
        } catch (const YAML::Exception&) {
          error(v, "", "",
                fmt::format("'gemflow:' must be the format version, an integer (this Gemflow reads "
                            "format {}), got '{}'",
                            kWorkflowFormat, v.IsScalar() ? v.Scalar() : std::string("a collection")));
          continue;
        }
        if (fmt_version > kWorkflowFormat) {
          diags_.clear();
          list_.clear();
          error(v, "", "",
                fmt::format("written by a newer Gemflow (format {}); this one reads format {}", fmt_version,
                            kWorkflowFormat));
          return std::nullopt;
        }
        if (fmt_version < 1) {
          error(v, "", "",
                fmt::format("format {} is not a workflow format version (this Gemflow reads format {})", fmt_version,
                            kWorkflowFormat));
          continue;
        }
        wf.format = fmt_version;
      } else if (key == "name" || key == "description") {
        if (!v.IsScalar() && !v.IsNull()) {
          error(v, "", "", fmt::format("'{}' must be text", key));
          continue;
        }
        (key == "name" ? wf.name : wf.description) = scalar_text(v);
      } else if (key == "nodes") {
        have_nodes = true;
        extras.have_nodes = true;
        parse_nodes(v, wf);
      } else if (key == "links") {
        have_links = true;
        parse_links(v, wf);
      } else if (key == "inputs" || key == "outputs") {
        parse_exposed(v, key == "inputs" ? wf.inputs : wf.outputs, key == "inputs");
      } else if (key == "editor") {
        editor = v;
      } else if (key == "annotations") {
        annotations = v;
      } else if (key == "sweep") {
        parse_sweep(k, v, wf);
      }
    }
    if (!have_format)
      diags_.push_back(
          make_diag({file_, 1, 1}, "", "",
                    fmt::format("missing format version: start the file with 'gemflow: {}'", kWorkflowFormat)));
    if (!have_nodes) diags_.push_back(make_diag({file_, 1, 1}, "", "", "missing 'nodes:' section"));
    // A misspelled `links:` would make every input look unconnected: say it once, here.
    if (!have_links)
      for (const auto& [key, index] : unknown_top_)
        if (nearest_name(key, top) == "links") {
          extras.links_misspelled = true;
          diags_[index].message += "; without 'links:' no input is connected (those errors are not listed)";
          break;
        }
    if (editor) parse_editor(editor, wf);
    if (annotations) parse_annotations(annotations, wf);
    list_.summarise();
    return wf;
  }

  // `sweep:` — only its form here; gemflow/sweep.hpp checks the targets and values.
  void parse_sweep(const YAML::Node& key, const YAML::Node& v, Workflow& wf) {
    wf.sweep.where = at(key);
    if (v.IsNull()) return;
    if (!v.IsMap()) {
      error(v, "", "", "'sweep:' must be a map of node.param → values (e.g. 'dg.seed: 1..100'), and 'zip: true'");
      return;
    }
    for (auto& [k, body] : entries(v, "", "sweep key", nullptr)) {
      const std::string target = k.Scalar();
      if (target == "zip") {
        const auto b = body.IsScalar() ? yaml_bool(body.Scalar()) : std::nullopt;
        if (!b) error(body, "", "", "'zip' must be true or false");
        else wf.sweep.zip = *b;
        continue;
      }
      SweepEntry e;
      e.target = target;
      e.where = at(k);
      const auto dot = target.find('.');
      if (dot == std::string::npos || dot == 0 || dot + 1 == target.size()) {
        error(k, "", "", fmt::format("sweep key '{}' is not node.param (or 'zip')", target));
        continue;
      }
      if (body.IsSequence()) {
        e.is_list = true;
        bool ok = true;
        for (const auto& item : body) {
          if (!item.IsScalar()) {
            error(item, "", "", fmt::format("the values of sweep '{}' must be plain values", target));
            ok = false;
            break;
          }
          e.list.push_back(item.Scalar());
        }
        if (!ok) continue;
      } else if (body.IsScalar()) {
        e.text = body.Scalar();
      } else {
        error(body.IsNull() ? k : body, "", "",
              fmt::format("sweep '{}' needs values: a list, 'a,b,c', a range 'A..B' or 'START:STOP:STEP', or "
                          "'@file.txt'",
                          target));
        continue;
      }
      wf.sweep.entries.push_back(std::move(e));
    }
  }

  void parse_nodes(const YAML::Node& v, Workflow& wf) {
    if (v.IsNull()) return;
    if (!v.IsMap()) {
      error(v, "", "", "'nodes:' must be a map of node id → {type: ..., params: {...}}");
      return;
    }
    static const std::vector<std::string> node_keys = {"type", "version", "params", "bypass"};
    for (auto& [k, body] : entries(v, "", "node id", nullptr)) {
      NodeInstance n;
      n.id = k.Scalar();
      n.where = at(k);
      if (!valid_id(n.id)) {
        error(k, n.id.size() > kMaxIdLength ? n.id.substr(0, kMaxIdLength) + "..." : n.id, "", invalid_id_message());
        continue;
      }
      if (!body.IsMap()) {
        error(body.IsNull() ? k : body, n.id, "", "a node is a map: {type: ..., params: {...}}");
        continue;
      }
      YAML::Node params;
      for (auto& [nk, nv] : entries(body, n.id, "node key", &node_keys)) {
        const std::string key = nk.Scalar();
        if (key == "type") {
          if (!nv.IsScalar()) {
            error(nv, n.id, "", "'type' must be a node type id such as 'distgeom.embed'");
            continue;
          }
          n.type = nv.Scalar();
          extras.type_where[n.id] = at(nv);
        } else if (key == "bypass") {
          try {
            n.bypass = nv.as<bool>();
          } catch (const YAML::Exception&) {
            error(nv, n.id, "", "'bypass' must be true or false");
          }
        } else if (key == "version") {
          try {
            n.type_version = nv.as<int>();
            if (n.type_version < 1) throw YAML::Exception(nv.Mark(), "");
          } catch (const YAML::Exception&) {
            error(nv, n.id, "", "'version' must be a positive integer");
          }
        } else {
          params = nv;
        }
      }
      if (n.type.empty() && !extras.type_where.count(n.id)) {
        error(k, n.id, "", "no 'type:' given");
        extras.type_where[n.id] = at(k);
      }
      const NodeEntry* e = registry_.find_node(n.type);
      if (e && n.type_version == 0) n.type_version = e->spec.info.version;
      if (params && !params.IsNull()) {
        if (!params.IsMap()) {
          error(params, n.id, "", "'params' must be a map of name: value");
        } else {
          for (auto& [pk, pv] : entries(params, n.id, "parameter", nullptr)) parse_param(n, e, pk, pv);
        }
      }
      wf.nodes.push_back(std::move(n));
    }
  }

  void parse_param(NodeInstance& n, const NodeEntry* e, const YAML::Node& key, const YAML::Node& value) {
    const std::string name = key.Scalar();
    n.param_where[name] = at(value.IsNull() ? key : value);
    extras.param_key_where[{n.id, name}] = at(key);
    if (name == "<<") {  // yaml-cpp has no merge keys: it would be a parameter named '<<'
      error(key, n.id, "", "YAML merge keys ('<<: *anchor') are not supported: write the parameters out");
      extras.reported.insert({n.id, name});
      return;
    }
    if (!value.IsScalar() && !value.IsNull()) {
      error(value, n.id, name, "expected a single value, not a list or map");
      extras.reported.insert({n.id, name});
      n.params.emplace_back(name, std::string());
      return;
    }
    const std::string text = scalar_text(value);
    if (e && n.type_version < e->spec.info.version && !e->spec.info.migrations.empty()) {
      n.params.emplace_back(name, text);  // parsed after the migration (reparse_migrated)
      extras.deferred.insert(n.id);
      return;
    }
    const ParamSpec* ps = e ? e->spec.param(name) : nullptr;
    if (!ps) {  // unknown type or parameter: kept as text, reported by validate
      n.params.emplace_back(name, text);
      return;
    }
    auto parsed = ps->parse(text);
    if (value.IsNull()) {  // QA: `algorithm: ~` said only "'' is not one of: ..." (validate's check)
      const auto* bad = std::get_if<std::string>(&parsed);
      if (const auto why = bad ? std::optional<std::string>(*bad) : ps->check(std::get<ParamValue>(parsed)))
        parsed = "no value (empty, ~ or null): " + *why;
    }
    if (auto* why = std::get_if<std::string>(&parsed)) {
      error(value.IsNull() ? key : value, n.id, name, *why);
      extras.reported.insert({n.id, name});
      n.params.emplace_back(name, text);
      return;
    }
    n.params.emplace_back(name, std::get<ParamValue>(parsed));
  }

  void parse_links(const YAML::Node& v, Workflow& wf) {
    if (v.IsNull()) return;
    if (!v.IsSequence()) {
      error(v, "", "", "'links:' must be a list of 'node.port -> node.port'");
      return;
    }
    for (const auto& item : v) {
      if (!item.IsScalar()) {
        error(item, "", "", "a link is written 'node.port -> node.port'");
        continue;
      }
      auto l = parse_link(item.Scalar());
      if (!l) {
        error(item, "", "", fmt::format("'{}' is not a link: write 'node.port -> node.port'", item.Scalar()));
        continue;
      }
      l->where = at(item);
      wf.links.push_back(std::move(*l));
    }
  }

  // `inputs:` / `outputs:`: name → "node.port" (inputs also a list of them).
  void parse_exposed(const YAML::Node& v, std::vector<ExposedPort>& out, bool inputs) {
    if (v.IsNull()) return;
    const std::string what = inputs ? "inputs" : "outputs";
    if (!v.IsMap()) {
      error(v, "", "",
            fmt::format("'{}:' must be a map of name → {}", what,
                        inputs ? "node.port or [node.port, ...]" : "node.port"));
      return;
    }
    for (auto& [k, body] : entries(v, "", inputs ? "input name" : "output name", nullptr)) {
      ExposedPort p;
      p.name = k.Scalar();
      p.where = at(k);
      if (!valid_id(p.name)) {
        error(k, "", "",
              fmt::format("invalid {} name '{}': use letters, digits, '_' and '-', at most {} characters",
                          inputs ? "input" : "output",
                          p.name.size() > kMaxIdLength ? p.name.substr(0, kMaxIdLength) + "..." : p.name,
                          kMaxIdLength));
        continue;
      }
      std::vector<YAML::Node> items;
      if (body.IsScalar()) {
        items.push_back(body);
      } else if (inputs && body.IsSequence() && body.size() > 0) {
        for (const auto& item : body) items.push_back(item);
      } else {
        error(body.IsNull() ? k : body, "", "",
              fmt::format("'{}' in '{}:' must be {}", p.name, what,
                          inputs ? "node.port or a list of them" : "node.port"));
        continue;
      }
      bool ok = true;
      for (const auto& item : items) {
        const auto dot = item.IsScalar() ? item.Scalar().find('.') : std::string::npos;
        if (dot == std::string::npos || dot == 0 || dot + 1 == item.Scalar().size()) {
          error(item, "", "", fmt::format("'{}' in '{}:' must name an inner port as node.port", p.name, what));
          ok = false;
          continue;
        }
        p.targets.emplace_back(item.Scalar().substr(0, dot), item.Scalar().substr(dot + 1));
      }
      if (ok) out.push_back(std::move(p));
    }
  }

  /// `annotations: {groups: [{title, color, nodes}], notes: [{text, pos, width}]}` (Studio only).
  void parse_annotations(const YAML::Node& v, Workflow& wf) {
    if (v.IsNull()) return;
    if (!v.IsMap()) {
      error(v, "", "", "'annotations:' must be a map with 'groups:' and 'notes:'");
      return;
    }
    static const std::vector<std::string> keys = {"groups", "notes"};
    static const std::vector<std::string> group_keys = {"title", "color", "nodes"};
    static const std::vector<std::string> note_keys = {"text", "pos", "width"};
    // the node ids, for the group members: a set, not Workflow::find (a scan) per member
    std::unordered_set<std::string_view> node_ids;
    for (const auto& node : wf.nodes) node_ids.insert(node.id);
    for (auto& [k, list] : entries(v, "", "annotations key", &keys)) {
      if (list.IsNull()) continue;
      if (!list.IsSequence()) {
        error(list, "", "", fmt::format("'{}' must be a list of maps", k.Scalar()));
        continue;
      }
      const bool groups = k.Scalar() == "groups";
      for (const auto& item : list) {
        if (!item.IsMap()) {
          error(item, "", "",
                groups ? "a group is {title: ..., color: ..., nodes: [...]}"
                       : "a note is {text: ..., pos: [x, y], width: ...}");
          continue;
        }
        try {
          if (groups) {
            EditorGroup g;
            for (auto& [gk, gv] : entries(item, "", "group key", &group_keys)) {
              if (gk.Scalar() == "nodes") {
                if (!gv.IsSequence()) throw YAML::Exception(gv.Mark(), "'nodes' must be a list of node ids");
                for (const auto& id : gv) {
                  if (!node_ids.contains(id.Scalar()))
                    warning(id, id.Scalar(), "group member that does not exist (ignored)");
                  else g.nodes.push_back(id.Scalar());
                }
              } else {
                (gk.Scalar() == "title" ? g.title : g.color) = scalar_text(gv);
              }
            }
            wf.groups.push_back(std::move(g));
          } else {
            EditorNote n;
            for (auto& [nk, nv] : entries(item, "", "note key", &note_keys)) {
              if (nk.Scalar() == "text") {
                n.text = scalar_text(nv);
              } else if (nk.Scalar() == "width") {
                n.width = nv.as<double>();
              } else {
                if (!nv.IsSequence() || nv.size() != 2) throw YAML::Exception(nv.Mark(), "'pos' must be [x, y]");
                n.pos = {nv[0].as<double>(), nv[1].as<double>()};
              }
            }
            wf.notes.push_back(std::move(n));
          }
        } catch (const YAML::Exception& e) {
          error(item, "", "",
                fmt::format("bad {} entry: {}", groups ? "group" : "note",
                            e.msg.empty() ? std::string("expected numbers") : e.msg));
        }
      }
    }
  }

  void parse_editor(const YAML::Node& v, Workflow& wf) {
    if (v.IsNull()) return;
    if (!v.IsMap()) {
      error(v, "", "", "'editor:' must be a map of node id → {pos: [x, y]}");
      return;
    }
    static const std::vector<std::string> editor_keys = {"pos"};
    std::vector<std::string> ids;
    std::unordered_map<std::string_view, NodeInstance*> by_id;  // the first of a duplicate id, as find()
    for (auto& n : wf.nodes) {
      ids.push_back(n.id);
      by_id.emplace(n.id, &n);
    }
    for (auto& [k, body] : entries(v, "", "node id", nullptr)) {
      const auto found = by_id.find(k.Scalar());
      NodeInstance* n = found == by_id.end() ? nullptr : found->second;
      if (!n) {
        static const std::string missing = "editor layout for a node that does not exist (ignored)";
        // the hint compares with every id: only for the diagnostics that are listed
        warning(k, k.Scalar(), missing,
                list_.listed(Diagnostic::Severity::Warning, missing) ? did_you_mean(k.Scalar(), ids) : "");
        continue;
      }
      if (!body.IsMap()) {
        error(body.IsNull() ? k : body, n->id, "", "editor entry must be {pos: [x, y]}");
        continue;
      }
      for (auto& [ek, ev] : entries(body, n->id, "editor key", &editor_keys)) {
        try {
          if (!ev.IsSequence() || ev.size() != 2) throw YAML::Exception(ev.Mark(), "");
          n->pos = std::array<double, 2>{ev[0].as<double>(), ev[1].as<double>()};
        } catch (const YAML::Exception&) {
          error(ev, n->id, "", "'pos' must be [x, y] with two numbers");
        }
      }
    }
  }

  static std::optional<Link> parse_link(const std::string& s) {
    const auto arrow = s.find("->");
    if (arrow == std::string::npos) return std::nullopt;
    auto trim = [](std::string x) {
      const auto b = x.find_first_not_of(" \t");
      const auto e = x.find_last_not_of(" \t");
      return b == std::string::npos ? std::string() : x.substr(b, e - b + 1);
    };
    auto end = [&](const std::string& side, std::string& node, std::string& port) {
      const std::string t = trim(side);
      const auto dot = t.find('.');
      if (dot == std::string::npos || dot == 0 || dot + 1 == t.size()) return false;
      node = t.substr(0, dot);
      port = t.substr(dot + 1);
      return port.find_first_of(" \t.") == std::string::npos && node.find_first_of(" \t") == std::string::npos;
    };
    Link l;
    if (!end(s.substr(0, arrow), l.from_node, l.from_port) || !end(s.substr(arrow + 2), l.to_node, l.to_port))
      return std::nullopt;
    return l;
  }

  ParseExtras extras;

 private:
  // Binary data (a NUL byte) or bytes that are not UTF-8: a diagnostic naming the first one.
  std::optional<Diagnostic> not_text(const std::string& text) const {
    std::size_t i = text.starts_with("\xEF\xBB\xBF") ? 3 : 0;  // UTF-8 byte order mark
    if (text.starts_with("\xFF\xFE") || text.starts_with("\xFE\xFF"))
      return make_diag({file_, 1, 1}, "", "",
                       "not a text file in UTF-8 (it starts with a UTF-16 byte order mark): "
                       "save it as UTF-8");
    for (; i < text.size();) {
      const auto c = static_cast<unsigned char>(text[i]);
      const std::size_t n = c == 0 ? 0 : utf8_sequence(text, i);
      if (n == 0) {
        const int line =
            1 + static_cast<int>(std::count(text.begin(), text.begin() + static_cast<std::ptrdiff_t>(i), '\n'));
        const auto nl = text.rfind('\n', i == 0 ? 0 : i - 1);
        const int col = static_cast<int>(nl == std::string::npos || i == 0 ? i + 1 : i - nl);
        return make_diag(
            {file_, line, col}, "", "",
            fmt::format("not a text file (byte 0x{:02x} at offset {}{})", c, i, c == 0 ? "" : ": not UTF-8"));
      }
      i += n;
    }
    return std::nullopt;
  }

  // yaml-cpp's message at its mark. For an unclosed '{' or '[' the mark is where the parser gave
  // up (often the next line): point at the bracket instead. When the mark is the first token of
  // its line, the mistake is usually at the end of the line before: say so.
  Diagnostic syntax_error(const std::string& text, const YAML::Exception& e) const {
    const std::string msg = printable(e.msg);
    if (e.mark.is_null()) return make_diag({file_, 0, 0}, "", "", "YAML syntax error: " + msg);
    const std::size_t pos = std::min<std::size_t>(static_cast<std::size_t>(std::max(e.mark.pos, 0)), text.size());
    SourceLocation at{file_, e.mark.line + 1, e.mark.column + 1};
    if (msg.find("flow not found") != std::string::npos) {
      // Innermost bracket still open at the mark (quotes and comments skipped).
      std::vector<std::pair<char, std::size_t>> open;
      char quote = 0;
      for (std::size_t i = 0; i < pos; ++i) {
        const char c = text[i];
        if (quote) {
          if (c == quote) quote = 0;
          continue;
        }
        if (c == '\'' || c == '"') quote = c;
        else if (c == '#' && (i == 0 || std::isspace(static_cast<unsigned char>(text[i - 1])))) {
          while (i < pos && text[i] != '\n') ++i;
        } else if (c == '{' || c == '[') open.emplace_back(c, i);
        else if ((c == '}' || c == ']') && !open.empty()) open.pop_back();
      }
      if (!open.empty()) {
        const std::size_t b = open.back().second;
        const int line =
            1 + static_cast<int>(std::count(text.begin(), text.begin() + static_cast<std::ptrdiff_t>(b), '\n'));
        const auto nl = b == 0 ? std::string::npos : text.rfind('\n', b - 1);
        const int col = static_cast<int>(nl == std::string::npos ? b + 1 : b - nl);
        return make_diag({file_, line, col}, "", "",
                         fmt::format("YAML syntax error: this '{}' is never closed (yaml-cpp: {} at line {}, "
                                     "column {})",
                                     open.back().first, msg, at.line, at.column));
      }
    }
    // First token of its line? Then the previous non-blank line is the likely culprit.
    const std::size_t line_start = pos == 0 ? 0 : text.rfind('\n', pos - 1) + 1;
    const bool first_token = pos > line_start && text.find_first_not_of(" \t", line_start) == pos;
    if (first_token && at.line > 1) {
      int prev = at.line - 1;  // previous line with content
      for (std::size_t p = line_start; prev > 1; --prev) {
        const std::size_t end = p - 1;  // its '\n'
        const std::size_t start = end == 0 ? 0 : text.rfind('\n', end - 1) + 1;
        if (text.find_first_not_of(" \t\r", start) < end) break;
        p = start;
      }
      return make_diag(at, "", "",
                       fmt::format("YAML syntax error near here: {} (noticed at the start of this "
                                   "line; the mistake is probably at the end of line {})",
                                   msg, prev));
    }
    return make_diag(at, "", "", "YAML syntax error: " + msg);
  }

  std::vector<std::pair<std::string, std::size_t>> unknown_top_;  // unknown top-level key, its diagnostic
  std::string file_;
  const Registry& registry_;
  std::vector<Diagnostic>& diags_;
  DiagnosticList list_;  // adds to diags_, a bounded number of each kind
};

// ---------------------------------------------------------------------------------------
// Writing

bool needs_quotes(const std::string& s) {
  if (s.empty()) return true;
  static const std::set<std::string> nulls = {"~", "null", "Null", "NULL"};
  if (nulls.count(s) || yaml_bool(s)) return true;
  const char c0 = s[0];
  if (!(std::isalnum(static_cast<unsigned char>(c0)) || c0 == '_' || c0 == '.' || c0 == '/' ||
        static_cast<unsigned char>(c0) >= 0x80 || ((c0 == '-' || c0 == '+') && s.size() > 1 && s[1] != ' ')))
    return true;
  if (s.back() == ' ') return true;
  for (char c : s) {
    const auto u = static_cast<unsigned char>(c);
    if (u >= 0x80) continue;  // UTF-8 text (Å, µ ...)
    if (!(std::isalnum(u) || c == '_' || c == '.' || c == '/' || c == '-' || c == '+' || c == ' ' || c == '(' ||
          c == ')' || c == '=' || c == '^' || c == '*' || c == '<' || c == '>'))
      return true;
  }
  return false;
}

std::string quote(const std::string& s) {
  if (!needs_quotes(s)) return s;
  std::string r = "\"";
  for (char c : s) {
    switch (c) {
      case '"': r += "\\\""; break;
      case '\\': r += "\\\\"; break;
      case '\n': r += "\\n"; break;
      case '\t': r += "\\t"; break;
      case '\r': r += "\\r"; break;
      default:
        if (static_cast<unsigned char>(c) < 0x20) r += fmt::format("\\x{:02x}", static_cast<unsigned char>(c));
        else r += c;
    }
  }
  return r + "\"";
}

std::string yaml_value(const ParamValue& v) {
  if (std::holds_alternative<std::string>(v)) return quote(std::get<std::string>(v));
  return format_param(v);
}

// The canonical one-line entry of a node (as to_yaml writes it), with `indent` spaces.
std::string node_line(const NodeInstance& n, std::size_t indent) {
  std::string s(indent, ' ');
  s += quote(n.id) + ": {type: " + quote(n.type);
  if (n.type_version > 0) s += fmt::format(", version: {}", n.type_version);
  if (n.bypass) s += ", bypass: true";
  if (!n.params.empty()) {
    s += ", params: {";
    bool first = true;
    for (const auto& [k, v] : n.params) {
      s += (first ? "" : ", ") + quote(k) + ": " + yaml_value(v);
      first = false;
    }
    s += "}";
  }
  return s + "}\n";
}

std::string coord(double x) {
  if (std::isfinite(x) && x == std::floor(x) && std::abs(x) < 1e15) return fmt::format("{}", static_cast<long long>(x));
  return format_param(x);
}

}  // namespace

// ---------------------------------------------------------------------------------------
// Public API

namespace {

// The files being loaded, outermost first (a sub-workflow already in it is a cycle; its size is
// the depth), and what the whole load has read of sub-workflow files so far
// (kMaxSubWorkflowLoads, kMaxSubWorkflowBytes).
struct LoadChain : std::vector<fs::path> {
  std::size_t loads = 0, bytes = 0;
};

LoadResult load_impl(const fs::path& file, const Registry& registry, LoadChain& chain);
std::vector<Diagnostic> load_subworkflows_impl(Workflow& wf, const Registry& registry, LoadChain& chain);

LoadResult parse_impl(const std::string& text, const fs::path& filename, const Registry& registry, LoadChain& chain) {
  LoadResult r;
  Parser p(filename.string(), registry, r.diagnostics);
  r.workflow = p.parse(text);
  if (r.workflow) {
    auto source = std::make_shared<WorkflowSource>();
    source->text = text;
    source->loaded = *r.workflow;
    source->top_key_line = p.extras.top_key_line;
    r.workflow->source = std::move(source);
    auto notes = migrate_workflow(*r.workflow, registry, &r.migrated);
    r.diagnostics.insert(r.diagnostics.end(), notes.begin(), notes.end());
    reparse_migrated(*r.workflow, registry, p.extras, r.diagnostics);
    auto subs = load_subworkflows_impl(*r.workflow, registry, chain);
    r.diagnostics.insert(r.diagnostics.end(), subs.begin(), subs.end());
    auto more = validate_impl(*r.workflow, registry, &p.extras);
    r.diagnostics.insert(r.diagnostics.end(), more.begin(), more.end());
  }
  std::stable_sort(r.diagnostics.begin(), r.diagnostics.end(), [](const Diagnostic& a, const Diagnostic& b) {
    return std::tuple(importance(a), a.where.line, a.where.column) <
           std::tuple(importance(b), b.where.line, b.where.column);
  });
  return r;
}

LoadResult load_impl(const fs::path& file, const Registry& registry, LoadChain& chain) {
  std::error_code dir_ec;
  if (fs::is_directory(file, dir_ec)) {  // opens like an empty file on Linux (QA: "empty workflow file")
    LoadResult r;
    r.diagnostics.push_back(make_diag({file.string(), 0, 0}, "", "", "is a folder, not a workflow file"));
    return r;
  }
  std::ifstream in(file, std::ios::binary);
  if (!in) {
    LoadResult r;
    std::error_code ec;
    r.diagnostics.push_back(
        make_diag({file.string(), 0, 0}, "", "", fs::exists(file, ec) ? "cannot read the file" : "no such file"));
    return r;
  }
  std::stringstream ss;
  ss << in.rdbuf();
  const std::string text = ss.str();
  chain.bytes += text.size();
  chain.push_back(fs::weakly_canonical(fs::absolute(file)));
  LoadResult r = parse_impl(text, file, registry, chain);
  chain.pop_back();
  return r;
}

}  // namespace

ParamSpec subworkflow_path_param() {
  ParamSpec path;
  path.name = "path";
  path.kind = ParamKind::InputPath;
  path.default_value = std::string();
  path.required = true;
  path.doc = "the inner workflow file (relative to this workflow's folder)";
  path.extensions = {".yaml", ".yml"};
  return path;
}

namespace {

// The spec a loaded sub-workflow presents: its exposed ports typed like the inner ports.
NodeSpec subworkflow_spec(const Workflow& inner, const Registry& registry) {
  NodeSpec spec;
  spec.info.id = std::string(kSubWorkflowType);
  spec.info.title = inner.name.empty() ? inner.file.stem().string() : inner.name;
  spec.info.category = "Workflow";
  spec.info.doc = inner.description.empty() ? fmt::format("Runs the workflow {} as one node.", inner.file.string())
                                            : inner.description;
  spec.info.version = 1;
  std::unordered_map<std::string_view, const NodeInstance*> by_id;  // not a scan per target
  for (const auto& node : inner.nodes) by_id.try_emplace(node.id, &node);
  for (const bool in : {true, false})
    for (const auto& x : in ? inner.inputs : inner.outputs) {
      PortSpec port;
      port.name = x.name;
      port.optional = in;  // an input is optional only when every inner port it feeds is
      for (const auto& [nid, pname] : x.targets) {
        const auto hit = by_id.find(nid);
        const NodeInstance* n = hit == by_id.end() ? nullptr : hit->second;
        const NodeSpec* ns = n ? node_spec(*n, registry) : nullptr;
        const PortSpec* p = ns ? (in ? ns->input(pname) : ns->output(pname)) : nullptr;
        if (!p) continue;
        if (port.type.empty()) port.type = p->type;
        if (in && !p->optional) port.optional = false;
        if (port.doc.empty()) port.doc = fmt::format("{}.{}{}", nid, pname, p->doc.empty() ? "" : ": " + p->doc);
      }
      if (port.type.empty()) continue;  // broken declaration: the inner file's diagnostics say why
      (in ? spec.inputs : spec.outputs).push_back(std::move(port));
    }
  spec.params.push_back(subworkflow_path_param());
  return spec;
}

std::vector<Diagnostic> load_subworkflows_impl(Workflow& wf, const Registry& registry, LoadChain& chain) {
  std::vector<Diagnostic> out;
  bool refused = false;  // past the load's limits: the rest of this file's sub-workflows are not read
  for (NodeInstance& n : wf.nodes) {
    if (n.type != kSubWorkflowType) continue;
    n.sub.reset();
    if (refused) continue;
    const auto* text = n.param("path") ? std::get_if<std::string>(n.param("path")) : nullptr;
    const auto where = n.param_where.count("path") ? n.param_where.at("path") : n.where;
    if (!text || text->empty()) {
      out.push_back(make_diag(n.where, n.id, "path", "a sub-workflow node needs 'path' (the inner workflow file)"));
      continue;
    }
    const fs::path file = fs::path(*text).is_relative() ? wf.base_dir() / *text : fs::path(*text);
    const fs::path canonical = fs::weakly_canonical(fs::absolute(file));
    const auto again = std::find(chain.begin(), chain.end(), canonical);
    if (again != chain.end() || static_cast<int>(chain.size()) >= kMaxSubWorkflowDepth) {
      std::string files;
      for (auto it = again != chain.end() ? again : chain.begin(); it != chain.end(); ++it)
        files += it->filename().string() + " → ";
      files += canonical.filename().string();
      out.push_back(make_diag(where, n.id, "path",
                              again != chain.end()
                                  ? fmt::format("sub-workflow cycle: {}", files)
                                  : fmt::format("sub-workflows nest deeper than {}: {}", kMaxSubWorkflowDepth, files)));
      continue;
    }
    if (chain.loads >= kMaxSubWorkflowLoads || chain.bytes >= kMaxSubWorkflowBytes) {
      out.push_back(make_diag(
          where, n.id, "path",
          fmt::format("not loaded, nor the sub-workflow nodes after it in this file: this load of the workflow has "
                      "read {} sub-workflow files ({} MiB) already, the most it reads (at most {} files and {} MiB: "
                      "each 'workflow' node loads its file again)",
                      chain.loads, chain.bytes >> 20, kMaxSubWorkflowLoads, kMaxSubWorkflowBytes >> 20)));
      refused = true;  // one diagnostic per file: the limit holds for the rest of the load
      continue;
    }
    ++chain.loads;
    LoadResult inner = load_impl(file, registry, chain);
    std::size_t errors = 0;
    for (auto& d : inner.diagnostics) {
      d.node = d.node.empty() ? n.id : n.id + "/" + d.node;
      if (d.severity == Diagnostic::Severity::Error) ++errors;
      out.push_back(std::move(d));
    }
    if (errors > 0)
      out.push_back(make_diag(where, n.id, "path",
                              fmt::format("the sub-workflow {} has {} error{} (listed with its file)", file.string(),
                                          errors, errors == 1 ? "" : "s")));
    if (!inner.workflow) continue;
    auto sub = std::make_shared<SubWorkflow>();
    sub->spec = subworkflow_spec(*inner.workflow, registry);
    sub->workflow = std::move(*inner.workflow);
    try {
      sub->xxh3 = hash_file(file);
    } catch (const Error&) {
    }
    n.sub = std::move(sub);
  }
  return out;
}

}  // namespace

LoadResult parse_workflow(const std::string& text, const fs::path& filename, const Registry& registry) {
  LoadChain chain;
  if (!filename.empty()) chain.push_back(fs::weakly_canonical(fs::absolute(filename)));
  return parse_impl(text, filename, registry, chain);
}

LoadResult load_workflow(const fs::path& file, const Registry& registry) {
  LoadChain chain;
  return load_impl(file, registry, chain);
}

std::vector<Diagnostic> load_subworkflows(Workflow& wf, const Registry& registry) {
  LoadChain chain;
  if (!wf.file.empty()) chain.push_back(fs::weakly_canonical(fs::absolute(wf.file)));
  return load_subworkflows_impl(wf, registry, chain);
}

const NodeSpec* node_spec(const NodeInstance& n, const Registry& registry) {
  if (n.sub) return &n.sub->spec;
  const NodeEntry* e = registry.find_node(n.type);
  return e ? &e->spec : nullptr;
}

bool has_subworkflows(const Workflow& wf) {
  return std::any_of(wf.nodes.begin(), wf.nodes.end(),
                     [](const NodeInstance& n) { return n.type == kSubWorkflowType; });
}

Workflow flatten(const Workflow& wf, const Registry& registry) {
  if (!has_subworkflows(wf)) return wf;
  Workflow out = wf;
  out.nodes.clear();
  out.links.clear();
  // exposed ports of each sub node, in flattened ids
  std::map<std::string, std::map<std::string, std::vector<std::pair<std::string, std::string>>>> ins, outs;
  for (const NodeInstance& n : wf.nodes) {
    if (n.type != kSubWorkflowType) {
      out.nodes.push_back(n);
      continue;
    }
    if (!n.sub) throw Error(fmt::format("node '{}': the sub-workflow is not loaded", n.id));
    const Workflow inner = flatten(n.sub->workflow, registry);
    const std::string prefix = n.id + "/";
    const fs::path inner_base = inner.base_dir();
    out.included.push_back({inner.file, n.sub->xxh3});
    out.included.insert(out.included.end(), inner.included.begin(), inner.included.end());
    for (NodeInstance m : inner.nodes) {
      m.id = prefix + m.id;
      if (const NodeEntry* e = registry.find_node(m.type))
        for (auto& [name, value] : m.params) {
          const ParamSpec* ps = e->spec.param(name);
          auto* path = std::get_if<std::string>(&value);
          if (!ps || !path || path->empty() || !fs::path(*path).is_relative()) continue;
          if (ps->kind == ParamKind::InputPath) *path = (inner_base / *path).lexically_normal().string();
          if (ps->kind == ParamKind::OutputPath) *path = (fs::path(n.id) / *path).lexically_normal().string();
        }
      out.nodes.push_back(std::move(m));
    }
    for (Link l : inner.links) {
      l.from_node = prefix + l.from_node;
      l.to_node = prefix + l.to_node;
      out.links.push_back(std::move(l));
    }
    for (const bool in : {true, false})
      for (const auto& x : in ? inner.inputs : inner.outputs)
        for (const auto& [nid, port] : x.targets) (in ? ins : outs)[n.id][x.name].emplace_back(prefix + nid, port);
  }
  const auto ends = [](auto& table, const std::string& node, const std::string& port) {
    std::vector<std::pair<std::string, std::string>> r;
    const auto n = table.find(node);
    if (n == table.end()) return std::vector<std::pair<std::string, std::string>>{{node, port}};
    if (const auto p = n->second.find(port); p != n->second.end()) r = p->second;
    return r;  // an unknown exposed port: the link disappears (validation of the outer file said so)
  };
  for (const Link& l : wf.links)
    for (const auto& [fn, fp] : ends(outs, l.from_node, l.from_port))
      for (const auto& [tn, tp] : ends(ins, l.to_node, l.to_port)) {
        Link x = l;
        x.from_node = fn;
        x.from_port = fp;
        x.to_node = tn;
        x.to_port = tp;
        out.links.push_back(std::move(x));
      }
  for (const bool in : {true, false})
    for (auto& x : in ? out.inputs : out.outputs) {
      std::vector<std::pair<std::string, std::string>> targets;
      for (const auto& [nid, port] : x.targets) {
        auto e = ends(in ? ins : outs, nid, port);
        targets.insert(targets.end(), e.begin(), e.end());
      }
      x.targets = std::move(targets);
    }
  return out;
}

std::vector<Diagnostic> validate(const Workflow& wf, const Registry& registry) {
  return validate_impl(wf, registry, nullptr);
}

std::string to_yaml(const Workflow& wf) {
  std::string s = fmt::format("gemflow: {}\n", wf.format);
  if (!wf.name.empty()) s += "name: " + quote(wf.name) + "\n";
  if (!wf.description.empty()) s += "description: " + quote(wf.description) + "\n";
  s += wf.nodes.empty() ? "nodes: {}\n" : "nodes:\n";
  for (const auto& n : wf.nodes) s += node_line(n, 2);
  if (!wf.links.empty()) {
    s += "links:\n";
    for (const auto& l : wf.links) s += "  - " + l.str() + "\n";
  }
  for (const bool in : {true, false}) {
    const auto& ports = in ? wf.inputs : wf.outputs;
    if (ports.empty()) continue;
    s += in ? "inputs:\n" : "outputs:\n";
    for (const auto& x : ports) {
      std::vector<std::string> t;
      for (const auto& [nid, port] : x.targets) t.push_back(nid + "." + port);
      s += "  " + quote(x.name) + ": " + (t.size() == 1 ? t[0] : "[" + join(t) + "]") + "\n";
    }
  }
  if (!wf.sweep.empty()) {
    s += "sweep:\n";
    for (const auto& e : wf.sweep.entries) {
      s += "  " + quote(e.target) + ": ";
      if (e.is_list) {
        s += "[";
        for (std::size_t k = 0; k < e.list.size(); ++k) s += (k ? ", " : "") + quote(e.list[k]);
        s += "]\n";
      } else {
        s += quote(e.text) + "\n";
      }
    }
    if (wf.sweep.zip) s += "  zip: true\n";
  }
  bool any_pos = std::any_of(wf.nodes.begin(), wf.nodes.end(), [](const NodeInstance& n) { return n.pos.has_value(); });
  if (any_pos) {
    s += "editor:\n";
    for (const auto& n : wf.nodes)
      if (n.pos) s += fmt::format("  {}: {{pos: [{}, {}]}}\n", quote(n.id), coord((*n.pos)[0]), coord((*n.pos)[1]));
  }
  if (!wf.groups.empty() || !wf.notes.empty()) {
    s += "annotations:\n";
    if (!wf.groups.empty()) s += "  groups:\n";
    for (const auto& g : wf.groups) {
      std::string ids;
      for (const auto& id : g.nodes) ids += (ids.empty() ? "" : ", ") + quote(id);
      s += fmt::format("    - {{title: {}, color: {}, nodes: [{}]}}\n", quote(g.title), quote(g.color), ids);
    }
    if (!wf.notes.empty()) s += "  notes:\n";
    for (const auto& n : wf.notes)
      s += fmt::format("    - {{text: {}, pos: [{}, {}], width: {}}}\n", quote(n.text), coord(n.pos[0]),
                       coord(n.pos[1]), coord(n.width));
  }
  return s;
}

namespace {

// Lines of a text, each with its '\n' (the last one may lack it).
std::vector<std::string> split_lines(const std::string& text) {
  std::vector<std::string> lines;
  std::size_t start = 0;
  while (start < text.size()) {
    const auto nl = text.find('\n', start);
    const auto end = nl == std::string::npos ? text.size() : nl + 1;
    lines.push_back(text.substr(start, end - start));
    start = end;
  }
  return lines;
}

bool blank_or_comment(const std::string& line) {
  const auto b = line.find_first_not_of(" \t\r\n");
  return b == std::string::npos || line[b] == '#';
}

// End (exclusive, 0-based column) of the YAML scalar that starts at `col` of `line`, or npos
// when it does not end on that line.
std::size_t scalar_end(const std::string& line, std::size_t col, bool flow) {
  if (col >= line.size()) return std::string::npos;
  const char q = line[col];
  if (q == '"' || q == '\'') {
    for (std::size_t i = col + 1; i < line.size(); ++i) {
      if (q == '"' && line[i] == '\\') {
        ++i;
      } else if (line[i] == q) {
        if (q == '\'' && i + 1 < line.size() && line[i + 1] == '\'') {
          ++i;
          continue;
        }
        return i + 1;
      }
    }
    return std::string::npos;
  }
  std::size_t i = col;
  for (; i < line.size(); ++i) {
    const char c = line[i];
    if (c == '\n' || c == '\r') break;
    if (flow && (c == ',' || c == '}' || c == ']')) break;
    if (c == '#' && i > col && (line[i - 1] == ' ' || line[i - 1] == '\t')) break;
  }
  while (i > col && (line[i - 1] == ' ' || line[i - 1] == '\t')) --i;
  return i;
}

bool same_exposed(const std::vector<ExposedPort>& a, const std::vector<ExposedPort>& b) {
  if (a.size() != b.size()) return false;
  for (std::size_t i = 0; i < a.size(); ++i)
    if (a[i].name != b[i].name || a[i].targets != b[i].targets) return false;
  return true;
}

bool same_annotations(const Workflow& a, const Workflow& b) {
  if (a.groups.size() != b.groups.size() || a.notes.size() != b.notes.size()) return false;
  for (std::size_t i = 0; i < a.groups.size(); ++i)
    if (a.groups[i].title != b.groups[i].title || a.groups[i].color != b.groups[i].color ||
        a.groups[i].nodes != b.groups[i].nodes)
      return false;
  for (std::size_t i = 0; i < a.notes.size(); ++i)
    if (a.notes[i].text != b.notes[i].text || a.notes[i].pos != b.notes[i].pos || a.notes[i].width != b.notes[i].width)
      return false;
  return true;
}

std::string editor_section(const Workflow& wf) {
  std::string s;
  for (const auto& n : wf.nodes)
    if (n.pos) s += fmt::format("  {}: {{pos: [{}, {}]}}\n", quote(n.id), coord((*n.pos)[0]), coord((*n.pos)[1]));
  return s.empty() ? s : "editor:\n" + s;
}

// Parameters whose value text must be checked after patching: (node, param) → expected text.
using Expected = std::map<std::pair<std::string, std::string>, std::string>;

// Text (without quotes) of every parameter, node and link of `text`, read without a registry.
struct Shape {
  std::vector<std::pair<std::string, std::string>> nodes;  // id, type
  std::map<std::pair<std::string, std::string>, std::string> params;
  std::vector<std::string> links;
  std::vector<std::pair<std::string, std::optional<std::array<double, 2>>>> pos;
  std::vector<bool> bypass;
};
std::optional<Shape> shape_of(const std::string& text) {
  static const Registry none;
  std::vector<Diagnostic> diags;
  Parser p("", none, diags);
  auto wf = p.parse(text);
  if (!wf) return std::nullopt;
  for (const auto& d : diags)  // what a registry-free parse reports about the file's own shape
    if (d.severity == Diagnostic::Severity::Error) return std::nullopt;
  Shape s;
  for (const auto& n : wf->nodes) {
    s.nodes.emplace_back(n.id, n.type);
    for (const auto& [k, v] : n.params) s.params[{n.id, k}] = format_param(v);
    s.pos.emplace_back(n.id, n.pos);
    s.bypass.push_back(n.bypass);
  }
  for (const auto& l : wf->links) s.links.push_back(l.str());
  return s;
}

bool same_sweep(const WorkflowSweep& a, const WorkflowSweep& b) {
  if (a.zip != b.zip || a.entries.size() != b.entries.size()) return false;
  for (std::size_t k = 0; k < a.entries.size(); ++k) {
    const SweepEntry &x = a.entries[k], &y = b.entries[k];
    if (x.target != y.target || x.text != y.text || x.list != y.list || x.is_list != y.is_list) return false;
  }
  return true;
}

std::optional<std::string> patch_source(const Workflow& wf) {
  const WorkflowSource& src = *wf.source;
  const Workflow& old = src.loaded;
  // a changed sweep: section is written whole (to_yaml)
  if (wf.format != old.format || wf.name != old.name || wf.description != old.description ||
      !same_exposed(wf.inputs, old.inputs) || !same_exposed(wf.outputs, old.outputs) || !same_annotations(wf, old) ||
      !same_sweep(wf.sweep, old.sweep))
    return std::nullopt;
  std::vector<std::string> lines = split_lines(src.text);
  if (!lines.empty() && !lines.back().ends_with('\n')) lines.back() += '\n';
  const int nlines = static_cast<int>(lines.size());
  // 0-based first line of each top-level section, and where it ends
  std::vector<int> starts;
  for (const auto& [key, line] : src.top_key_line) starts.push_back(line - 1);
  std::sort(starts.begin(), starts.end());
  const auto section_end = [&](int start) {
    for (int s : starts)
      if (s > start) return s;
    return nlines;
  };
  const auto key_line = [&](const char* key) {
    const auto it = src.top_key_line.find(key);
    return it == src.top_key_line.end() ? -1 : it->second - 1;
  };
  // Content lines [begin, end) of an entry that starts at `begin` and runs to `next`: the blank
  // and comment lines before the next entry stay with that one.
  const auto content_end = [&](int begin, int next) {
    int e = next;
    while (e > begin + 1 && blank_or_comment(lines[static_cast<std::size_t>(e - 1)])) --e;
    return e;
  };

  std::vector<std::string> out_lines;  // replacement of each old line ("" removes it)
  std::vector<std::string> insert_after(static_cast<std::size_t>(nlines) + 1);  // text added after line i-1
  out_lines = lines;
  Expected expected;

  // ---- nodes ----
  const int nodes_key = key_line("nodes");
  std::map<std::string, const NodeInstance*> now;
  for (const auto& n : wf.nodes) now[n.id] = &n;
  std::set<std::string> before;
  for (const auto& n : old.nodes) before.insert(n.id);
  {
    // surviving nodes keep their order; new ones come after all of them
    std::vector<std::string> kept_old, kept_new;
    for (const auto& n : old.nodes)
      if (now.count(n.id)) kept_old.push_back(n.id);
    bool new_seen = false;
    for (const auto& n : wf.nodes) {
      if (before.count(n.id)) {
        if (new_seen) return std::nullopt;
        kept_new.push_back(n.id);
      } else {
        new_seen = true;
      }
    }
    if (kept_old != kept_new) return std::nullopt;
    if (old.nodes.empty() && !wf.nodes.empty()) return std::nullopt;
  }
  if (!old.nodes.empty()) {
    if (nodes_key < 0) return std::nullopt;
    const int nodes_end = section_end(nodes_key);
    int prev = nodes_key;
    for (const auto& n : old.nodes) {  // block style: one node key per line, in order
      const int l = n.where.line - 1;
      if (l <= prev || l >= nodes_end) return std::nullopt;
      prev = l;
    }
    for (std::size_t i = 0; i < old.nodes.size(); ++i) {
      const NodeInstance& o = old.nodes[i];
      const int begin = o.where.line - 1;
      const int next = i + 1 < old.nodes.size() ? old.nodes[i + 1].where.line - 1 : nodes_end;
      const int end = content_end(begin, next);
      const std::size_t indent = static_cast<std::size_t>(std::max(o.where.column - 1, 0));
      const auto it = now.find(o.id);
      if (it == now.end()) {
        for (int l = begin; l < end; ++l) out_lines[static_cast<std::size_t>(l)].clear();
        continue;
      }
      const NodeInstance& n = *it->second;
      if (n.type == o.type && n.type_version == o.type_version && n.bypass == o.bypass && n.params == o.params)
        continue;
      bool patched = false;
      if (n.type == o.type && n.type_version == o.type_version && n.bypass == o.bypass &&
          n.params.size() == o.params.size()) {
        patched = true;
        std::vector<std::tuple<int, std::size_t, std::size_t, std::string>> edits;  // line, col, end, text
        for (std::size_t k = 0; k < n.params.size() && patched; ++k) {
          if (n.params[k].first != o.params[k].first) {
            patched = false;
            break;
          }
          if (n.params[k].second == o.params[k].second) continue;
          const auto w = o.param_where.find(o.params[k].first);
          if (w == o.param_where.end() || w->second.line - 1 < begin || w->second.line - 1 >= end) {
            patched = false;
            break;
          }
          const int l = w->second.line - 1;
          const std::size_t col = static_cast<std::size_t>(w->second.column - 1);
          const std::string& text = lines[static_cast<std::size_t>(l)];
          const bool flow = text.substr(0, col).find('{') != std::string::npos;
          const std::size_t e = scalar_end(text, col, flow);
          if (e == std::string::npos || e == col) {
            patched = false;
            break;
          }
          edits.emplace_back(l, col, e, yaml_value(n.params[k].second));
          expected[{n.id, n.params[k].first}] = format_param(n.params[k].second);
        }
        if (patched) {
          std::sort(edits.begin(), edits.end(), [](const auto& a, const auto& b) {
            return std::pair(std::get<0>(a), std::get<1>(a)) > std::pair(std::get<0>(b), std::get<1>(b));
          });
          for (const auto& [l, col, e, text] : edits) {
            auto& line = out_lines[static_cast<std::size_t>(l)];
            line = line.substr(0, col) + text + line.substr(e);
          }
        }
      }
      if (!patched) {
        out_lines[static_cast<std::size_t>(begin)] = node_line(n, indent);
        for (int l = begin + 1; l < end; ++l) out_lines[static_cast<std::size_t>(l)].clear();
        for (const auto& [k, v] : n.params) expected[{n.id, k}] = format_param(v);
      }
    }
    // new nodes after the last node's content
    std::string added;
    const std::size_t indent = static_cast<std::size_t>(std::max(old.nodes.front().where.column - 1, 0));
    for (const auto& n : wf.nodes)
      if (!before.count(n.id)) {
        added += node_line(n, indent);
        for (const auto& [k, v] : n.params) expected[{n.id, k}] = format_param(v);
      }
    const int last_begin = old.nodes.back().where.line - 1;
    insert_after[static_cast<std::size_t>(content_end(last_begin, nodes_end))] += added;
  }

  // ---- links ----
  std::vector<std::string> old_links, new_links;
  for (const auto& l : old.links) old_links.push_back(l.str());
  for (const auto& l : wf.links) new_links.push_back(l.str());
  if (old_links != new_links) {
    const int links_key = key_line("links");
    if (links_key < 0 || old.links.empty()) return std::nullopt;
    const int links_end = section_end(links_key);
    int prev = links_key;
    for (const auto& l : old.links) {
      const int line = l.where.line - 1;
      if (line <= prev || line >= links_end) return std::nullopt;
      prev = line;
    }
    const std::set<std::string> keep(new_links.begin(), new_links.end());
    std::set<std::string> kept;
    std::vector<std::string> kept_order;
    for (std::size_t i = 0; i < old.links.size(); ++i) {
      const std::string str = old_links[i];
      if (keep.count(str) && kept.insert(str).second) {
        kept_order.push_back(str);
        continue;
      }
      out_lines[static_cast<std::size_t>(old.links[i].where.line - 1)].clear();
    }
    // surviving links keep their order; new ones come after
    std::size_t k = 0;
    std::string added;
    for (const auto& str : new_links) {
      if (k < kept_order.size() && str == kept_order[k]) {
        ++k;
        continue;
      }
      if (kept.count(str)) return std::nullopt;  // reordered
      // the item's text starts two columns after its dash
      added += std::string(static_cast<std::size_t>(std::max(old.links.front().where.column - 3, 0)), ' ') + "- " +
               str + "\n";
    }
    if (k != kept_order.size()) return std::nullopt;
    const int last = old.links.back().where.line - 1;
    insert_after[static_cast<std::size_t>(last + 1)] += added;
  }

  // ---- editor ----
  const std::string editor_new = editor_section(wf);
  const std::string editor_old = editor_section(old);
  std::string tail;
  if (editor_new != editor_old) {
    const int editor_key = key_line("editor");
    if (editor_key >= 0) {
      const int end = content_end(editor_key, section_end(editor_key));
      out_lines[static_cast<std::size_t>(editor_key)] = editor_new;
      for (int l = editor_key + 1; l < end; ++l) out_lines[static_cast<std::size_t>(l)].clear();
    } else {
      tail = editor_new;
    }
  }

  std::string text;
  for (int l = 0; l < nlines; ++l) {
    text += insert_after[static_cast<std::size_t>(l)];
    text += out_lines[static_cast<std::size_t>(l)];
  }
  text += insert_after[static_cast<std::size_t>(nlines)];
  text += tail;

  // The check: the same nodes, links and positions as wf; every value rewritten reads back as
  // written, every other one as the original file had it.
  const auto got = shape_of(text);
  const auto orig = shape_of(src.text);
  if (!got || !orig) return std::nullopt;
  if (got->links != new_links || got->nodes.size() != wf.nodes.size()) return std::nullopt;
  for (std::size_t i = 0; i < wf.nodes.size(); ++i) {
    const NodeInstance& n = wf.nodes[i];
    if (got->nodes[i] != std::pair(n.id, n.type) || got->pos[i].second != n.pos || got->bypass[i] != n.bypass)
      return std::nullopt;
    for (const auto& [k, v] : n.params) {
      const auto g = got->params.find({n.id, k});
      if (g == got->params.end()) return std::nullopt;
      const auto e = expected.find({n.id, k});
      const auto o = orig->params.find({n.id, k});
      const std::string want = e != expected.end() ? e->second : o != orig->params.end() ? o->second : "";
      if (g->second != want) return std::nullopt;
    }
    std::size_t count = 0;
    for (const auto& [key, value] : got->params) count += key.first == n.id;
    if (count != n.params.size()) return std::nullopt;
  }
  return text;
}

}  // namespace

std::string to_yaml_preserving(const Workflow& wf) {
  if (wf.source)
    if (auto text = patch_source(wf)) return *text;
  return to_yaml(wf);
}

void save_workflow(const Workflow& wf, const fs::path& file) { write_file_atomically(file, to_yaml_preserving(wf)); }

std::optional<Diagnostic> apply_override(Workflow& wf, const std::string& assignment, const Registry& registry) {
  const SourceLocation where{"--set " + assignment, 0, 0};
  const auto eq = assignment.find('=');
  const auto dot = assignment.find('.');
  if (eq == std::string::npos || dot == std::string::npos || dot > eq || dot == 0 || dot + 1 == eq)
    return make_diag(where, "", "", "expected node.param=value");
  const std::string node = assignment.substr(0, dot);
  const std::string name = assignment.substr(dot + 1, eq - dot - 1);
  const std::string text = assignment.substr(eq + 1);
  NodeInstance* n = wf.find(node);
  if (const auto slash = node.find('/'); !n && slash != std::string::npos) {
    // "sub/inner.param=value": into a copy of the sub-workflow (copies of wf share the old one)
    NodeInstance* outer = wf.find(node.substr(0, slash));
    if (outer && outer->sub) {
      auto sub = std::make_shared<SubWorkflow>(*outer->sub);
      if (auto d = apply_override(sub->workflow, assignment.substr(slash + 1), registry)) {
        d->where = where;
        d->node = node.substr(0, slash) + "/" + d->node;
        return d;
      }
      outer->sub = std::move(sub);
      return std::nullopt;
    }
  }
  if (!n) {
    std::vector<std::string> ids;
    for (const auto& x : wf.nodes) ids.push_back(x.id);
    return make_diag(where, node, "", "no such node in the workflow", did_you_mean(node, ids));
  }
  const NodeSpec* spec = node_spec(*n, registry);
  if (!spec)
    return make_diag(where, node, "", fmt::format("unknown node type '{}'", n->type),
                     did_you_mean(n->type, registry.node_ids()));
  const ParamSpec* ps = spec->param(name);
  if (!ps)
    return make_diag(where, node, name, fmt::format("'{}' has no parameter '{}'", n->type, name),
                     did_you_mean(name, names_of(spec->params)));
  auto parsed = ps->parse(text);
  if (auto* why = std::get_if<std::string>(&parsed)) return make_diag(where, node, name, *why);
  ParamValue v = std::get<ParamValue>(parsed);
  if (auto why = ps->check(v)) return make_diag(where, node, name, *why, value_hint(*ps, v));
  if (ps->kind == ParamKind::InputPath && !std::get<std::string>(v).empty() &&
      fs::path(std::get<std::string>(v)).is_relative())
    v = fs::absolute(std::get<std::string>(v)).lexically_normal().string();
  if (n->type == kSubWorkflowType) {  // another inner file: load it before anything changes
    Workflow trial = wf;
    NodeInstance* t = trial.find(node);
    t->set_param(name, v);
    for (auto& d : load_subworkflows(trial, registry))
      if (d.severity == Diagnostic::Severity::Error) {
        if (d.where.file.empty() || d.node == node) d.where = where;
        return d;
      }
    n->sub = t->sub;
  }
  n->set_param(name, std::move(v));
  n->param_where[name] = where;
  return std::nullopt;
}

std::vector<std::string> topological_order(const Workflow& wf) {
  // Kahn's algorithm; ties broken by file order so that the order is stable.
  std::vector<std::string> order;
  const auto cycle = find_cycle(wf, &order);
  if (!cycle.empty()) throw Error(cycle_text(wf, cycle));
  return order;
}

bool valid_node_id(std::string_view id) { return valid_id(id); }

}  // namespace gemflow
