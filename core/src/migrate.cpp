// Node migrations: the gemflow::migrate steps and migrate_workflow (gemflow/node.hpp,
// gemflow/workflow.hpp).
#include <algorithm>
#include <cstdlib>

#include <fmt/format.h>

#include "gemflow/workflow.hpp"

namespace gemflow {
namespace migrate {
namespace {

ParamValue* find(NodeInstance& n, const std::string& name) {
  for (auto& [k, v] : n.params)
    if (k == name) return &v;
  return nullptr;
}

void rename_port(MigrationTarget& t, const std::string& old_name, const std::string& new_name, bool input) {
  for (Link& l : t.links) {
    if (input && l.to_node == t.node.id && l.to_port == old_name) l.to_port = new_name;
    if (!input && l.from_node == t.node.id && l.from_port == old_name) l.from_port = new_name;
  }
}

}  // namespace

Migration rename_param(int from, std::string old_name, std::string new_name) {
  std::string note = fmt::format("parameter '{}' is now '{}'", old_name, new_name);
  return {from, std::move(note), [old_name, new_name](MigrationTarget& t) {
            for (auto& [k, v] : t.node.params)
              if (k == old_name) k = new_name;
            if (auto it = t.node.param_where.find(old_name); it != t.node.param_where.end()) {
              const SourceLocation at = it->second;
              t.node.param_where.erase(it);
              t.node.param_where[new_name] = at;
            }
          }};
}

Migration remove_param(int from, std::string name) {
  std::string note = fmt::format("parameter '{}' was removed", name);
  return {from, std::move(note), [name](MigrationTarget& t) {
            std::erase_if(t.node.params, [&](const auto& p) { return p.first == name; });
            t.node.param_where.erase(name);
          }};
}

Migration rename_choice(int from, std::string name, std::string old_value, std::string new_value) {
  std::string note = fmt::format("parameter '{}': '{}' is now '{}'", name, old_value, new_value);
  return {from, std::move(note), [name, old_value, new_value](MigrationTarget& t) {
            if (ParamValue* v = find(t.node, name))
              if (const auto* s = std::get_if<std::string>(v); s && *s == old_value) *v = new_value;
          }};
}

Migration scale_param(int from, std::string name, double factor, std::string why) {
  std::string note = fmt::format("parameter '{}' changed unit ({}): the saved value is multiplied by {}", name, why,
                                 format_param(factor));
  return {from, std::move(note), [name, factor](MigrationTarget& t) {
            ParamValue* v = find(t.node, name);
            if (!v) return;
            if (const auto* d = std::get_if<double>(v)) {
              *v = *d * factor;
            } else if (const auto* i = std::get_if<std::int64_t>(v)) {
              *v = static_cast<double>(*i) * factor;
            } else if (const auto* s = std::get_if<std::string>(v)) {  // still text (load_workflow)
              char* end = nullptr;
              const double x = std::strtod(s->c_str(), &end);
              if (end && end != s->c_str() && *end == '\0') *v = format_param(x * factor);
            }
          }};
}

Migration keep_old_default(int from, std::string name, ParamValue old_default) {
  std::string note =
      fmt::format("parameter '{}' has a new default; the node keeps the old one, {}", name, format_param(old_default));
  return {from, std::move(note), [name, old_default](MigrationTarget& t) {
            if (!find(t.node, name)) t.node.params.emplace_back(name, old_default);
          }};
}

Migration rename_input(int from, std::string old_name, std::string new_name) {
  std::string note = fmt::format("input '{}' is now '{}'", old_name, new_name);
  return {from, std::move(note),
          [old_name, new_name](MigrationTarget& t) { rename_port(t, old_name, new_name, true); }};
}

Migration rename_output(int from, std::string old_name, std::string new_name) {
  std::string note = fmt::format("output '{}' is now '{}'", old_name, new_name);
  return {from, std::move(note),
          [old_name, new_name](MigrationTarget& t) { rename_port(t, old_name, new_name, false); }};
}

}  // namespace migrate

std::vector<Diagnostic> migrate_workflow(Workflow& wf, const Registry& registry, std::size_t* nodes_migrated) {
  std::vector<Diagnostic> notes;
  if (nodes_migrated) *nodes_migrated = 0;
  for (NodeInstance& n : wf.nodes) {
    const NodeEntry* e = registry.find_node(n.type);
    if (!e || n.type_version <= 0 || n.type_version >= e->spec.info.version) continue;
    const auto& steps = e->spec.info.migrations;
    const int saved = n.type_version;
    while (n.type_version < e->spec.info.version) {
      const int v = n.type_version;
      const bool any =
          std::any_of(steps.begin(), steps.end(), [&](const Migration& m) { return m.from == v && m.apply; });
      if (!any) break;  // a gap: validation says the node is old
      for (const Migration& m : steps) {
        if (m.from != v || !m.apply) continue;
        // A note only for a step that changed something this node has (a renamed parameter it
        // never set is no news).
        const auto params_before = n.params;
        const auto links_before = wf.links;
        MigrationTarget target{n, wf.links};
        m.apply(target);
        const bool changed =
            n.params != params_before || !std::equal(wf.links.begin(), wf.links.end(), links_before.begin(),
                                                     links_before.end(), [](const Link& a, const Link& b) {
                                                       return a.from_port == b.from_port && a.to_port == b.to_port;
                                                     });
        if (!changed) continue;
        Diagnostic d;
        d.severity = Diagnostic::Severity::Warning;
        d.where = n.where.file.empty() ? SourceLocation{wf.file.string(), 0, 0} : n.where;
        d.node = n.id;
        d.message = fmt::format("migrated from version {} to {} of '{}': {}", v, v + 1, n.type, m.note);
        d.hint = "gemflow upgrade rewrites the file at the current versions";
        notes.push_back(std::move(d));
      }
      ++n.type_version;
    }
    if (nodes_migrated && n.type_version > saved) ++*nodes_migrated;
  }
  return notes;
}

}  // namespace gemflow
