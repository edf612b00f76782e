#include "gemflow/workflow.hpp"

#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <functional>
#include <set>
#include <sstream>

#include <fmt/format.h>
#include <yaml-cpp/yaml.h>

namespace gemflow {

namespace fs = std::filesystem;

// ---------------------------------------------------------------------------------------
// Small model helpers

std::string Diagnostic::str() const {
  std::string s;
  if (!where.file.empty() || where.line > 0) s += where.str() + ": ";
  s += severity == Severity::Error ? "error: " : "warning: ";
  if (!node.empty()) s += fmt::format("node '{}'", node);
  if (!param.empty()) s += fmt::format("{}{} '{}'", node.empty() ? "" : ", ", is_port ? "port" : "parameter", param);
  if (!node.empty() || !param.empty()) s += ": ";
  s += message;
  if (!hint.empty()) s += " (" + hint + ")";
  return s;
}

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
  for (const auto& x : v) s += (s.empty() ? "" : std::string(sep)) + x;
  return s;
}

// Node ids: letters, digits, '_' and '-', starting with a letter or '_' (links use '.').
bool valid_id(std::string_view id) {
  if (id.empty() || !(std::isalpha(static_cast<unsigned char>(id[0])) || id[0] == '_')) return false;
  return std::all_of(id.begin(), id.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-';
  });
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
  std::map<std::string, SourceLocation> type_where;           // node id → its `type:` value
  std::set<std::pair<std::string, std::string>> reported;     // (node, param) already reported
  std::map<std::pair<std::string, std::string>, SourceLocation> param_key_where;  // (node, param) → key
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

// Hint for a bad parameter value: the nearest choice of a Choice parameter.
std::string value_hint(const ParamSpec& spec, const ParamValue& v) {
  if (spec.kind == ParamKind::Choice && std::holds_alternative<std::string>(v))
    return did_you_mean(std::get<std::string>(v), spec.choices);
  if (spec.kind == ParamKind::Device && std::holds_alternative<std::string>(v))
    return did_you_mean(std::get<std::string>(v), {"auto", "cpu", "cuda", "cuda:0"});
  return {};
}

std::vector<Diagnostic> validate_impl(const Workflow& wf, const Registry& registry, const ParseExtras* extras) {
  std::vector<Diagnostic> diags;
  auto node_loc = [&](const NodeInstance& n) { return n.where.file.empty() && n.where.line == 0
                                                          ? SourceLocation{wf.file.string(), 0, 0}
                                                          : n.where; };
  std::vector<std::string> ids;
  std::set<std::string> seen;
  for (const auto& n : wf.nodes) {
    ids.push_back(n.id);
    if (!seen.insert(n.id).second)
      diags.push_back(make_diag(node_loc(n), n.id, "", "node id used twice"));
    if (!valid_id(n.id))
      diags.push_back(make_diag(node_loc(n), n.id, "",
                                "invalid node id: use letters, digits, '_' and '-', starting with a letter"));
  }

  // Nodes: type, version, parameters.
  for (const auto& n : wf.nodes) {
    const NodeEntry* e = registry.find_node(n.type);
    if (!e) {
      SourceLocation at = node_loc(n);
      if (extras)
        if (auto it = extras->type_where.find(n.id); it != extras->type_where.end()) at = it->second;
      diags.push_back(make_diag(at, n.id, "",
                                n.type.empty() ? std::string("no type given")
                                               : fmt::format("unknown node type '{}'", n.type),
                                did_you_mean(n.type, registry.node_ids())));
      continue;
    }
    const NodeSpec& spec = e->spec;
    if (n.type_version > spec.info.version)
      diags.push_back(make_diag(node_loc(n), n.id, "",
                                fmt::format("saved with version {} of '{}', but the installed plugin has "
                                            "version {}: update the plugin ({})",
                                            n.type_version, n.type, spec.info.version, e->origin)));
    else if (n.type_version > 0 && n.type_version < spec.info.version)
      diags.push_back(make_diag(node_loc(n), n.id, "",
                                fmt::format("saved with version {} of '{}'; the installed version is {} and "
                                            "has no migration: check its parameters",
                                            n.type_version, n.type, spec.info.version),
                                {}, Diagnostic::Severity::Warning));
    for (const auto& [name, value] : n.params) {
      auto wit = n.param_where.find(name);
      const SourceLocation at = wit != n.param_where.end() ? wit->second : node_loc(n);
      if (extras && extras->reported.count({n.id, name})) continue;
      const ParamSpec* ps = spec.param(name);
      if (!ps) {
        SourceLocation key_at = at;
        if (extras)
          if (auto it = extras->param_key_where.find({n.id, name}); it != extras->param_key_where.end())
            key_at = it->second;
        diags.push_back(make_diag(key_at, n.id, name, fmt::format("'{}' has no parameter '{}'", n.type, name),
                                  did_you_mean(name, names_of(spec.params))));
        continue;
      }
      if (auto why = ps->check(value)) diags.push_back(make_diag(at, n.id, name, *why, value_hint(*ps, value)));
    }
    for (const auto& ps : spec.params)
      if (ps.required && !n.param(ps.name))
        diags.push_back(make_diag(node_loc(n), n.id, ps.name,
                                  fmt::format("required {} parameter is not set{}", to_string(ps.kind),
                                              ps.doc.empty() ? "" : " (" + ps.doc + ")")));
  }

  // Links: endpoints, types, one link per input.
  std::map<std::pair<std::string, std::string>, const Link*> fed;
  for (const auto& l : wf.links) {
    const SourceLocation at = l.where.file.empty() && l.where.line == 0 ? SourceLocation{wf.file.string(), 0, 0}
                                                                        : l.where;
    const PortSpec* out = nullptr;
    const PortSpec* in = nullptr;
    bool ok = true;
    for (int side = 0; side < 2; ++side) {
      const std::string& nid = side == 0 ? l.from_node : l.to_node;
      const std::string& port = side == 0 ? l.from_port : l.to_port;
      const NodeInstance* n = wf.find(nid);
      if (!n) {
        diags.push_back(make_diag(at, "", "", fmt::format("link '{}': no node '{}'", l.str(), nid),
                                  did_you_mean(nid, ids)));
        ok = false;
        continue;
      }
      const NodeEntry* e = registry.find_node(n->type);
      if (!e) {
        ok = false;  // unknown type: reported above
        continue;
      }
      const auto& ports = side == 0 ? e->spec.outputs : e->spec.inputs;
      const PortSpec* p = side == 0 ? e->spec.output(port) : e->spec.input(port);
      if (!p) {
        auto d = make_diag(at, nid, port,
                           fmt::format("link '{}': '{}' has no {} port '{}' ({}: {})", l.str(), n->type,
                                       side == 0 ? "output" : "input", port, side == 0 ? "outputs" : "inputs",
                                       ports.empty() ? std::string("none") : join(names_of(ports))),
                           did_you_mean(port, names_of(ports)));
        d.is_port = true;
        diags.push_back(std::move(d));
        ok = false;
      }
      (side == 0 ? out : in) = p;
    }
    if (!ok) continue;
    if (out->type != in->type) {
      auto d = make_diag(at, l.to_node, l.to_port,
                         fmt::format("link '{}': output type {} does not fit input type {}", l.str(), out->type,
                                     in->type));
      d.is_port = true;
      diags.push_back(std::move(d));
    }
    auto [it, fresh] = fed.emplace(std::pair{l.to_node, l.to_port}, &l);
    if (!fresh) {
      auto d = make_diag(at, l.to_node, l.to_port,
                         fmt::format("input already fed by '{}'{}; an input takes one link", it->second->str(),
                                     it->second->where.line > 0
                                         ? fmt::format(" (line {})", it->second->where.line)
                                         : std::string()));
      d.is_port = true;
      diags.push_back(std::move(d));
    }
  }
  // Required inputs connected.
  for (const auto& n : wf.nodes) {
    const NodeEntry* e = registry.find_node(n.type);
    if (!e) continue;
    for (const auto& p : e->spec.inputs)
      if (!p.optional && !fed.count({n.id, p.name})) {
        auto d = make_diag(node_loc(n), n.id, p.name,
                           fmt::format("required input ({}) is not connected", p.type));
        d.is_port = true;
        diags.push_back(std::move(d));
      }
  }
  // Cycles.
  try {
    (void)topological_order(wf);
  } catch (const Error& e) {
    SourceLocation at{wf.file.string(), 0, 0};
    diags.push_back(make_diag(at, "", "", e.what()));
  }
  return diags;
}

// ---------------------------------------------------------------------------------------
// Parsing

class Parser {
 public:
  Parser(std::string file, const Registry& registry, std::vector<Diagnostic>& diags)
      : file_(std::move(file)), registry_(registry), diags_(diags) {}

  SourceLocation at(const YAML::Node& n) const {
    const YAML::Mark m = n.Mark();
    if (m.is_null()) return {file_, 0, 0};
    return {file_, m.line + 1, m.column + 1};
  }
  void error(const YAML::Node& where, std::string node, std::string param, std::string msg, std::string hint = {},
             bool is_port = false) {
    auto d = make_diag(at(where), std::move(node), std::move(param), std::move(msg), std::move(hint));
    d.is_port = is_port;
    diags_.push_back(std::move(d));
  }
  void warning(const YAML::Node& where, std::string node, std::string msg) {
    diags_.push_back(make_diag(at(where), std::move(node), "", std::move(msg), {}, Diagnostic::Severity::Warning));
  }

  // Keys of a map in order; reports duplicates and keys outside `allowed` (with hints).
  std::vector<std::pair<YAML::Node, YAML::Node>> entries(const YAML::Node& map, const std::string& node,
                                                         const std::string& what,
                                                         const std::vector<std::string>* allowed) {
    std::vector<std::pair<YAML::Node, YAML::Node>> r;
    std::set<std::string> seen;
    for (auto it = map.begin(); it != map.end(); ++it) {
      const YAML::Node& k = it->first;
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
        error(k, node, "", fmt::format("unknown {} '{}' (expected: {})", what, key, join(*allowed)),
              did_you_mean(key, *allowed));
        continue;
      }
      r.emplace_back(it->first, it->second);
    }
    return r;
  }

  static std::string scalar_text(const YAML::Node& v) { return v.IsNull() ? std::string() : v.Scalar(); }

  std::optional<Workflow> parse(const std::string& text) {
    YAML::Node root;
    try {
      root = YAML::Load(text);
    } catch (const YAML::Exception& e) {
      diags_.push_back(make_diag(e.mark.is_null() ? SourceLocation{file_, 0, 0}
                                                  : SourceLocation{file_, e.mark.line + 1, e.mark.column + 1},
                                 "", "", fmt::format("YAML syntax error: {}", e.msg)));
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
    static const std::vector<std::string> top = {"gemflow", "name", "description", "nodes", "links", "editor"};
    bool have_format = false, have_nodes = false;
    YAML::Node editor;
    for (auto& [k, v] : entries(root, "", "top-level key", &top)) {
      const std::string key = k.Scalar();
      if (key == "gemflow") {
        have_format = true;
        int fmt_version = 0;
        try {
          fmt_version = v.as<int>();
        } catch (const YAML::Exception&) {
          error(v, "", "", fmt::format("'gemflow:' must be the format version, an integer (this Gemflow reads "
                                       "format {}), got '{}'",
                                       kWorkflowFormat, v.IsScalar() ? v.Scalar() : std::string("a collection")));
          continue;
        }
        if (fmt_version > kWorkflowFormat) {
          diags_.clear();
          error(v, "", "", fmt::format("written by a newer Gemflow (format {}); this one reads format {}",
                                       fmt_version, kWorkflowFormat));
          return std::nullopt;
        }
        if (fmt_version < 1) {
          error(v, "", "", fmt::format("format {} is not a workflow format version (this Gemflow reads format {})",
                                       fmt_version, kWorkflowFormat));
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
        parse_nodes(v, wf);
      } else if (key == "links") {
        parse_links(v, wf);
      } else if (key == "editor") {
        editor = v;
      }
    }
    if (!have_format)
      diags_.push_back(make_diag({file_, 1, 1}, "", "",
                                 fmt::format("missing format version: start the file with 'gemflow: {}'",
                                             kWorkflowFormat)));
    if (!have_nodes) diags_.push_back(make_diag({file_, 1, 1}, "", "", "missing 'nodes:' section"));
    if (editor) parse_editor(editor, wf);
    return wf;
  }

  void parse_nodes(const YAML::Node& v, Workflow& wf) {
    if (v.IsNull()) return;
    if (!v.IsMap()) {
      error(v, "", "", "'nodes:' must be a map of node id → {type: ..., params: {...}}");
      return;
    }
    static const std::vector<std::string> node_keys = {"type", "version", "params"};
    for (auto& [k, body] : entries(v, "", "node id", nullptr)) {
      NodeInstance n;
      n.id = k.Scalar();
      n.where = at(k);
      if (!valid_id(n.id)) {
        error(k, n.id, "", "invalid node id: use letters, digits, '_' and '-', starting with a letter");
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
    if (!value.IsScalar() && !value.IsNull()) {
      error(value, n.id, name, "expected a single value, not a list or map");
      extras.reported.insert({n.id, name});
      n.params.emplace_back(name, std::string());
      return;
    }
    const std::string text = scalar_text(value);
    const ParamSpec* ps = e ? e->spec.param(name) : nullptr;
    if (!ps) {  // unknown type or parameter: kept as text, reported by validate
      n.params.emplace_back(name, text);
      return;
    }
    auto parsed = ps->parse(text);
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

  void parse_editor(const YAML::Node& v, Workflow& wf) {
    if (v.IsNull()) return;
    if (!v.IsMap()) {
      error(v, "", "", "'editor:' must be a map of node id → {pos: [x, y]}");
      return;
    }
    static const std::vector<std::string> editor_keys = {"pos"};
    std::vector<std::string> ids;
    for (const auto& n : wf.nodes) ids.push_back(n.id);
    for (auto& [k, body] : entries(v, "", "node id", nullptr)) {
      NodeInstance* n = wf.find(k.Scalar());
      if (!n) {
        auto d = make_diag(at(k), k.Scalar(), "", "editor layout for a node that does not exist (ignored)",
                           did_you_mean(k.Scalar(), ids), Diagnostic::Severity::Warning);
        diags_.push_back(std::move(d));
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
  std::string file_;
  const Registry& registry_;
  std::vector<Diagnostic>& diags_;
};

// ---------------------------------------------------------------------------------------
// Writing

bool needs_quotes(const std::string& s) {
  if (s.empty()) return true;
  static const std::set<std::string> special = {"~", "null", "Null", "NULL", "true", "True", "TRUE", "false", "False",
                                                "FALSE", "yes", "Yes", "YES", "no", "No", "NO", "on", "On", "ON",
                                                "off", "Off", "OFF", "y", "Y", "n", "N"};
  if (special.count(s)) return true;
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

std::string coord(double x) {
  if (std::isfinite(x) && x == std::floor(x) && std::abs(x) < 1e15) return fmt::format("{}", static_cast<long long>(x));
  return format_param(x);
}

}  // namespace


// ---------------------------------------------------------------------------------------
// Public API

LoadResult parse_workflow(const std::string& text, const fs::path& filename, const Registry& registry) {
  LoadResult r;
  Parser p(filename.string(), registry, r.diagnostics);
  r.workflow = p.parse(text);
  if (r.workflow) {
    auto more = validate_impl(*r.workflow, registry, &p.extras);
    r.diagnostics.insert(r.diagnostics.end(), more.begin(), more.end());
  }
  std::stable_sort(r.diagnostics.begin(), r.diagnostics.end(), [](const Diagnostic& a, const Diagnostic& b) {
    return std::pair(a.where.line, a.where.column) < std::pair(b.where.line, b.where.column);
  });
  return r;
}

LoadResult load_workflow(const fs::path& file, const Registry& registry) {
  std::ifstream in(file, std::ios::binary);
  if (!in) {
    LoadResult r;
    std::error_code ec;
    r.diagnostics.push_back(make_diag({file.string(), 0, 0}, "", "",
                                      fs::exists(file, ec) ? "cannot read the file" : "no such file"));
    return r;
  }
  std::stringstream ss;
  ss << in.rdbuf();
  return parse_workflow(ss.str(), file, registry);
}

std::vector<Diagnostic> validate(const Workflow& wf, const Registry& registry) {
  return validate_impl(wf, registry, nullptr);
}

std::string to_yaml(const Workflow& wf) {
  std::string s = fmt::format("gemflow: {}\n", wf.format);
  if (!wf.name.empty()) s += "name: " + quote(wf.name) + "\n";
  if (!wf.description.empty()) s += "description: " + quote(wf.description) + "\n";
  s += wf.nodes.empty() ? "nodes: {}\n" : "nodes:\n";
  for (const auto& n : wf.nodes) {
    s += "  " + quote(n.id) + ": {type: " + quote(n.type);
    if (n.type_version > 0) s += fmt::format(", version: {}", n.type_version);
    if (!n.params.empty()) {
      s += ", params: {";
      bool first = true;
      for (const auto& [k, v] : n.params) {
        s += (first ? "" : ", ") + quote(k) + ": " + yaml_value(v);
        first = false;
      }
      s += "}";
    }
    s += "}\n";
  }
  if (!wf.links.empty()) {
    s += "links:\n";
    for (const auto& l : wf.links) s += "  - " + l.str() + "\n";
  }
  bool any_pos = std::any_of(wf.nodes.begin(), wf.nodes.end(), [](const NodeInstance& n) { return n.pos.has_value(); });
  if (any_pos) {
    s += "editor:\n";
    for (const auto& n : wf.nodes)
      if (n.pos) s += fmt::format("  {}: {{pos: [{}, {}]}}\n", quote(n.id), coord((*n.pos)[0]), coord((*n.pos)[1]));
  }
  return s;
}

void save_workflow(const Workflow& wf, const fs::path& file) {
  const std::string text = to_yaml(wf);
  const fs::path dir = fs::absolute(file).parent_path();
  const fs::path tmp = dir / fmt::format(".{}.tmp{}", file.filename().string(), ::getpid());
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    if (!out) throw Error(fmt::format("cannot write {}: cannot create {}", file.string(), tmp.string()));
    out << text;
    out.flush();
    if (!out) {
      std::error_code ec;
      fs::remove(tmp, ec);
      throw Error(fmt::format("cannot write {}", file.string()));
    }
  }
  std::error_code ec;
  fs::rename(tmp, file, ec);
  if (ec) {
    std::error_code ec2;
    fs::remove(tmp, ec2);
    throw Error(fmt::format("cannot write {}: {}", file.string(), ec.message()));
  }
}

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
  if (!n) {
    std::vector<std::string> ids;
    for (const auto& x : wf.nodes) ids.push_back(x.id);
    return make_diag(where, node, "", "no such node in the workflow", did_you_mean(node, ids));
  }
  const NodeEntry* e = registry.find_node(n->type);
  if (!e) return make_diag(where, node, "", fmt::format("unknown node type '{}'", n->type),
                           did_you_mean(n->type, registry.node_ids()));
  const ParamSpec* ps = e->spec.param(name);
  if (!ps)
    return make_diag(where, node, name, fmt::format("'{}' has no parameter '{}'", n->type, name),
                     did_you_mean(name, names_of(e->spec.params)));
  auto parsed = ps->parse(text);
  if (auto* why = std::get_if<std::string>(&parsed)) return make_diag(where, node, name, *why);
  ParamValue v = std::get<ParamValue>(parsed);
  if (auto why = ps->check(v)) return make_diag(where, node, name, *why, value_hint(*ps, v));
  if (ps->kind == ParamKind::InputPath && !std::get<std::string>(v).empty() &&
      fs::path(std::get<std::string>(v)).is_relative())
    v = fs::absolute(std::get<std::string>(v)).lexically_normal().string();
  n->set_param(name, std::move(v));
  n->param_where[name] = where;
  return std::nullopt;
}

std::vector<std::string> topological_order(const Workflow& wf) {
  // Kahn's algorithm; ties broken by file order so that the order is stable.
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
  std::vector<std::string> order;
  while (!ready.empty()) {
    const std::size_t i = *ready.begin();
    ready.erase(ready.begin());
    order.push_back(wf.nodes[i].id);
    for (std::size_t j : succ[i])
      if (--indeg[j] == 0) ready.insert(j);
  }
  if (order.size() == n) return order;

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
  // path[pos[cur]..] walks backwards along the cycle; print it forwards, starting at the
  // node that comes first in the file.
  std::vector<std::size_t> cycle(path.begin() + static_cast<std::ptrdiff_t>(pos[cur]), path.end());
  std::reverse(cycle.begin(), cycle.end());
  std::rotate(cycle.begin(), std::min_element(cycle.begin(), cycle.end()), cycle.end());
  std::string text;
  for (std::size_t i : cycle) text += wf.nodes[i].id + " -> ";
  text += wf.nodes[cycle.front()].id;
  throw Error("the workflow has a cycle: " + text);
}

}  // namespace gemflow
