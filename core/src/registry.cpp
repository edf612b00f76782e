#include "gemflow/registry.hpp"

#include <algorithm>
#include <cctype>
#include <set>

#include <fmt/format.h>

#include "gemflow/types.hpp"

namespace gemflow {

Registry::Registry() {
  add_type<Matrix<double>>("core");
  add_type<Matrix<float>>("core");
  add_type<DistanceBounds>("core");
  add_type<Structure>("core");
  add_type<RestraintSet>("core");
  add_type<Table>("core");
  add_type<MoleculeSet>("core");
  add_type<Image>("core");
  add_type<Signal>("core");
  add_type<Scores>("core");
  add_type<Segmentation>("core");
  add_type<TriMesh>("core");
  add_type<CirclePacking>("core");
}

void Registry::add_type(TypeInfo info) {
  auto it = types_.find(info.name);
  if (it != types_.end()) {
    if (it->second.layout == info.layout) return;
    throw Error(
        fmt::format("data type '{}' is defined differently by {} ({}) and by {} ({}): a value of one cannot be read as "
                    "the other; give one of them another name, or build both against the same header (bump "
                    "DataType<T>::version when a layout changes)",
                    info.name, it->second.origin, it->second.layout.str(), info.origin, info.layout.str()));
  }
  std::string key = info.name;
  types_.emplace(std::move(key), std::move(info));
}

namespace {

// [a-z_][a-z0-9_]*, in ASCII whatever the locale
bool is_identifier(std::string_view n) {
  const auto lower = [](char c) { return (c >= 'a' && c <= 'z') || c == '_'; };
  return !n.empty() && lower(n[0]) &&
         std::all_of(n.begin(), n.end(), [&](char c) { return lower(c) || (c >= '0' && c <= '9'); });
}

bool numeric(const ParamSpec& p) { return p.kind == ParamKind::Int || p.kind == ParamKind::Float; }

// A rule that names a missing parameter or an invalid value, or compares what is not a number.
void check_rule(const NodeSpec& spec, const ParamRule& rule) {
  const std::string& id = spec.info.id;
  const auto param = [&](const std::string& name) {
    const ParamSpec* p = spec.param(name);
    if (!p) throw Error(fmt::format("node '{}': a parameter rule names '{}', which is not a parameter", id, name));
    return p;
  };
  const auto valid = [&](const ParamSpec* p, const ParamValue& v) {
    if (auto why = p->check(v))
      throw Error(fmt::format("node '{}': a rule on parameter '{}' names an invalid value: {}", id, p->name, *why));
  };
  const ParamSpec* p = param(rule.param);
  if (rule.holds) {
    if (!rule.other.empty()) (void)param(rule.other);
    if (rule.why.empty())
      throw Error(
          fmt::format("node '{}': a relation rule on parameter '{}' must say what it requires (why)", id, rule.param));
    return;
  }
  if (rule.compare == ParamCompare::None) {
    const ParamSpec* o = param(rule.other);
    for (const auto& v : rule.when) valid(p, v);
    valid(o, rule.other_value);
    return;
  }
  const auto need_number = [&](const ParamSpec* q) {
    if (!numeric(*q))
      throw Error(fmt::format("node '{}': a comparison rule compares parameter '{}', which is not a number ({})", id,
                              q->name, to_string(q->kind)));
  };
  need_number(p);
  if (!rule.other.empty()) need_number(param(rule.other));
  else if (!param_number(rule.other_value))
    throw Error(fmt::format("node '{}': a comparison rule on parameter '{}' compares it with {}, which is not a number",
                            id, rule.param, format_param(rule.other_value)));
  if (!rule.if_param.empty()) {
    const ParamSpec* c = param(rule.if_param);
    if (rule.when.empty())
      throw Error(fmt::format("node '{}': a comparison rule on parameter '{}' has an if_param without values (when)",
                              id, rule.param));
    for (const auto& v : rule.when) valid(c, v);
  }
}

}  // namespace

void Registry::add_node(NodeEntry e) {
  const auto& id = e.spec.info.id;
  if (id.empty() || id.find('.') == std::string::npos)
    throw Error(fmt::format("node id '{}' from {} is not namespaced (plugin.name)", id, e.origin));
  if (auto it = nodes_.find(id); it != nodes_.end())
    throw Error(fmt::format("duplicate node id '{}': registered by {} and by {}", id, it->second.origin, e.origin));
  std::set<std::string> names;
  auto unique = [&](const std::string& what, const std::string& n) {
    // names are YAML keys, `node.port` link ends and `--set node.param=` targets: identifiers only
    if (!is_identifier(n))
      throw Error(
          fmt::format("node '{}': {} name '{}' is not an identifier: use lower-case letters, digits and '_', "
                      "not starting with a digit ([a-z_][a-z0-9_]*)",
                      id, what, n));
    if (!names.insert(n).second) throw Error(fmt::format("node '{}': {} name '{}' declared twice", id, what, n));
  };
  for (const auto* ports : {&e.spec.inputs, &e.spec.outputs}) {
    names.clear();
    for (const auto& p : *ports) {
      unique("port", p.name);
      if (!find_type(p.type))
        throw Error(
            fmt::format("node '{}': port '{}' has unregistered type '{}': register it before the node, "
                        "with `r.add_type<T>()` (T has a DataType<T> specialisation) in the plugin's "
                        "register function, or load the plugin that registers it first",
                        id, p.name, p.type));
    }
  }
  names.clear();
  const ParamSpec* seed = nullptr;
  for (const auto& p : e.spec.params) {
    unique("parameter", p.name);
    if (p.seed) seed = &p;
    if (!p.required)
      if (auto why = p.check(p.default_value))
        throw Error(fmt::format("node '{}': default of parameter '{}' is invalid: {}", id, p.name, *why));
  }
  // A seed makes the node stochastic (so `gemflow nodes` and Studio say so); a node declared
  // stochastic must take its seed from the workflow, where the provenance record finds it.
  if (seed) e.spec.info.stochastic = true;
  if (e.spec.info.stochastic && !seed)
    throw Error(
        fmt::format("node '{}' is declared stochastic but has no seed parameter: declare `SeedParam seed{{this}};`{}",
                    id, e.spec.param("seed") ? " in place of its parameter 'seed'" : ""));
  for (const auto& rule : e.spec.info.rules) check_rule(e.spec, rule);
  // the defaults must keep every rule, else every instance of the node would be an error
  const auto default_of = [&](const std::string& name) -> const ParamValue& {
    return e.spec.param(name)->default_value;
  };
  if (const auto broken = e.spec.broken_rules(default_of); !broken.empty())
    throw Error(fmt::format("node '{}': its parameter defaults break its own rule: {}", id,
                            rule_message(*broken.front(), default_of)));
  std::string key = id;
  nodes_.emplace(std::move(key), std::move(e));
}

const NodeEntry* Registry::find_node(std::string_view id) const {
  auto it = nodes_.find(id);
  return it == nodes_.end() ? nullptr : &it->second;
}
const TypeInfo* Registry::find_type(std::string_view name) const {
  auto it = types_.find(name);
  return it == types_.end() ? nullptr : &it->second;
}
std::vector<const NodeEntry*> Registry::nodes() const {
  std::vector<const NodeEntry*> r;
  for (const auto& [k, v] : nodes_) r.push_back(&v);
  return r;
}
std::vector<std::string> Registry::node_ids() const {
  std::vector<std::string> r;
  for (const auto& [k, v] : nodes_) r.push_back(k);
  return r;
}
std::vector<const TypeInfo*> Registry::types() const {
  std::vector<const TypeInfo*> r;
  for (const auto& [k, v] : types_) r.push_back(&v);
  return r;
}

std::string nearest_name(std::string_view name, const std::vector<std::string>& candidates) {
  auto lower = [](std::string_view s) {
    std::string r(s);
    for (auto& c : r) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    return r;
  };
  const auto gap = [&](const std::string& c) {
    return name.size() > c.size() ? name.size() - c.size() : c.size() - name.size();
  };
  // Close enough (the test at the end): at most a third of the longer name differs. The distance
  // is at least the difference of the lengths, so when no candidate could pass, none is computed.
  const auto limit = [&](std::size_t other) { return std::max<std::size_t>(2, std::max(name.size(), other) / 3); };
  if (std::none_of(candidates.begin(), candidates.end(),
                   [&](const std::string& c) { return gap(c) <= limit(c.size()); }))
    return {};
  const std::string a = lower(name);
  std::string best;
  std::size_t best_d = SIZE_MAX;
  std::vector<std::size_t> prev, cur;
  for (const auto& cand : candidates) {
    // The distance is at least the difference of the lengths, and at least the smallest entry of
    // any row: a candidate that cannot beat the best so far is left early (a long name against
    // many candidates was |name| × Σ|candidate| steps).
    if (gap(cand) >= best_d) continue;
    const std::string b = lower(cand);
    prev.resize(b.size() + 1);
    cur.resize(b.size() + 1);
    for (std::size_t j = 0; j <= b.size(); ++j) prev[j] = j;
    bool beaten = false;
    for (std::size_t i = 1; i <= a.size() && !beaten; ++i) {
      cur[0] = i;
      std::size_t row_min = cur[0];
      for (std::size_t j = 1; j <= b.size(); ++j) {
        cur[j] = std::min({prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1)});
        row_min = std::min(row_min, cur[j]);
      }
      std::swap(prev, cur);
      beaten = row_min >= best_d;
    }
    if (!beaten && prev[b.size()] < best_d) {
      best_d = prev[b.size()];
      best = cand;
    }
  }
  return best_d <= limit(best.size()) ? best : std::string();
}

}  // namespace gemflow
