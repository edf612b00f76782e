#include "model/graph_model.hpp"

#include <algorithm>
#include <cctype>
#include <deque>
#include <map>
#include <set>

#include "model/commands.hpp"

namespace gemflow::studio {

namespace {
QString q(const std::string& s) { return QString::fromStdString(s); }

bool contains(const std::vector<std::string>& v, const std::string& s) {
  return std::find(v.begin(), v.end(), s) != v.end();
}

/// Float parameters keep a double in the model even when an integer was typed.
ParamValue normalise(const ParamSpec& spec, ParamValue v) {
  if (spec.kind == ParamKind::Float && std::holds_alternative<std::int64_t>(v))
    return static_cast<double>(std::get<std::int64_t>(v));
  return v;
}
}  // namespace

bool same_link(const Link& a, const Link& b) {
  return a.from_node == b.from_node && a.from_port == b.from_port && a.to_node == b.to_node &&
         a.to_port == b.to_port;
}

GraphModel::GraphModel(const Registry& registry, QObject* parent) : QObject(parent), registry_(registry) {
  wf_.name = "untitled";
}

const NodeSpec* GraphModel::spec_of(std::string_view node_id) const {
  const NodeInstance* n = wf_.find(node_id);
  if (!n) return nullptr;
  return node_spec(*n, registry_);  // a sub-workflow node's ports come from its inner file
}

std::optional<ParamValue> GraphModel::param_value(std::string_view node_id, std::string_view name) const {
  const NodeInstance* n = wf_.find(node_id);
  if (!n) return std::nullopt;
  if (const ParamValue* v = n->param(name)) return *v;
  if (const NodeSpec* s = spec_of(node_id))
    if (const ParamSpec* p = s->param(name)) return p->default_value;
  return std::nullopt;
}

std::vector<Link> GraphModel::links_of(std::string_view node_id) const {
  std::vector<Link> r;
  for (const auto& l : wf_.links)
    if (l.from_node == node_id || l.to_node == node_id) r.push_back(l);
  return r;
}

const Link* GraphModel::link_into(std::string_view node_id, std::string_view port) const {
  for (const auto& l : wf_.links)
    if (l.to_node == node_id && l.to_port == port) return &l;
  return nullptr;
}

std::optional<std::size_t> GraphModel::link_index(const Link& l) const {
  for (std::size_t i = 0; i < wf_.links.size(); ++i)
    if (same_link(wf_.links[i], l)) return i;
  return std::nullopt;
}

std::optional<std::size_t> GraphModel::node_index(std::string_view id) const {
  for (std::size_t i = 0; i < wf_.nodes.size(); ++i)
    if (wf_.nodes[i].id == id) return i;
  return std::nullopt;
}

// ---- documents --------------------------------------------------------------------------

void GraphModel::reset(Workflow wf) {
  wf_ = std::move(wf);
  undo_.clear();
  undo_.setClean();
  Q_EMIT model_reset();
  Q_EMIT changed();
}

std::vector<Diagnostic> GraphModel::load(const std::filesystem::path& file, bool* loaded) {
  LoadResult r = load_workflow(file, registry_);
  if (loaded) *loaded = r.workflow.has_value();
  if (r.workflow) {
    Workflow wf = std::move(*r.workflow);
    if (wf.file.empty()) wf.file = file;
    reset(std::move(wf));
  }
  return std::move(r.diagnostics);
}

void GraphModel::save(const std::filesystem::path& file) {
  namespace fs = std::filesystem;
  const fs::path target = fs::absolute(file).lexically_normal();
  const fs::path old_base = wf_.base_dir();
  const fs::path new_base = target.parent_path();
  // The first save: input paths chosen while the workflow had no file are absolute; they are
  // made relative to the file, as paths picked after a save are (a workflow moves with its
  // data). One undo step with the save's other rewrites.
  if (wf_.file.empty()) {
    bool open = false;
    for (const auto& n : std::vector<NodeInstance>(wf_.nodes)) {
      const NodeSpec* s = spec_of(n.id);
      if (!s) continue;
      for (const auto& [name, v] : n.params) {
        const ParamSpec* p = s->param(name);
        if (!p || p->kind != ParamKind::InputPath || !std::holds_alternative<std::string>(v)) continue;
        const fs::path abs = std::get<std::string>(v);
        if (abs.empty() || !abs.is_absolute()) continue;
        const fs::path rel = abs.lexically_normal().lexically_relative(new_base);
        if (rel.empty()) continue;
        if (!open) undo_.beginMacro(tr("Make input paths relative"));
        open = true;
        set_param(n.id, name, rel.generic_string());
      }
    }
    if (open) undo_.endMacro();
  }
  // Relative input paths resolve against the file: keep them pointing at the same files.
  if (!wf_.file.empty() && fs::absolute(old_base).lexically_normal() != new_base) {
    bool open = false;
    for (const auto& n : std::vector<NodeInstance>(wf_.nodes)) {
      const NodeSpec* s = spec_of(n.id);
      if (!s) continue;
      for (const auto& [name, v] : n.params) {
        const ParamSpec* p = s->param(name);
        if (!p || p->kind != ParamKind::InputPath || !std::holds_alternative<std::string>(v)) continue;
        const fs::path rel = std::get<std::string>(v);
        if (rel.empty() || rel.is_absolute()) continue;
        const fs::path moved = (fs::absolute(old_base) / rel).lexically_normal().lexically_relative(new_base);
        if (moved.empty() || moved == rel) continue;
        if (!open) undo_.beginMacro(tr("Rebase relative paths"));
        open = true;
        set_param(n.id, name, moved.generic_string());
      }
    }
    if (open) undo_.endMacro();
  }
  Workflow copy = wf_;
  copy.file = target;
  save_workflow(copy, target);
  wf_.file = target;
  undo_.setClean();
}

// ---- editing -----------------------------------------------------------------------------

std::string GraphModel::unique_id(const std::string& base_in, const std::vector<std::string>& taken) const {
  std::string base = base_in.empty() ? std::string("node") : base_in;
  auto used = [&](const std::string& id) { return wf_.find(id) != nullptr || contains(taken, id); };
  if (!used(base)) return base;
  // "add_3" → continue from "add".
  if (auto us = base.rfind('_'); us != std::string::npos && us + 1 < base.size() &&
                                 std::all_of(base.begin() + static_cast<long>(us) + 1, base.end(),
                                             [](char c) { return c >= '0' && c <= '9'; }))
    base = base.substr(0, us);
  for (int i = 2;; ++i) {
    std::string id = base + "_" + std::to_string(i);
    if (!used(id)) return id;
  }
}

std::string GraphModel::add_node(const std::string& type, Pos pos) {
  const NodeEntry* e = registry_.find_node(type);
  if (!e) return {};
  NodeInstance n;
  const auto dot = type.rfind('.');
  n.id = unique_id(dot == std::string::npos ? type : type.substr(dot + 1));
  n.type = type;
  n.type_version = e->spec.info.version;
  n.pos = pos;
  const std::string id = n.id;
  undo_.push(new AddNodesCommand(*this, {std::move(n)}, {}, tr("Add %1").arg(q(id))));
  return id;
}

void GraphModel::remove_nodes(const std::vector<std::string>& ids) {
  std::vector<std::string> present;
  for (const auto& id : ids)
    if (wf_.find(id)) present.push_back(id);
  if (present.empty()) return;
  undo_.push(new RemoveNodesCommand(*this, present));
}

void GraphModel::move_nodes(const std::vector<std::pair<std::string, Pos>>& moves) {
  std::vector<MoveNodesCommand::Move> mv;
  for (const auto& [id, to] : moves) {
    const NodeInstance* n = wf_.find(id);
    if (!n || (n->pos && *n->pos == to)) continue;
    mv.push_back({id, n->pos, to});
  }
  if (!mv.empty()) undo_.push(new MoveNodesCommand(*this, std::move(mv)));
}

ParamEdit GraphModel::set_param(const std::string& node, const std::string& name, const ParamValue& value) {
  const NodeInstance* n = wf_.find(node);
  if (!n) return {"no node '" + node + "'"};
  const NodeSpec* s = spec_of(node);
  if (!s) return {"node '" + node + "' has the unknown type '" + n->type + "' (is its plugin loaded?)"};
  const ParamSpec* p = s->param(name);
  if (!p) {
    std::vector<std::string> names;
    for (const auto& ps : s->params) names.push_back(ps.name);
    std::string hint = nearest_name(name, names);
    return {"node '" + node + "' (" + n->type + ") has no parameter '" + name + "'" +
            (hint.empty() ? "" : " (did you mean '" + hint + "'?)")};
  }
  if (auto why = p->check(value)) return {"parameter '" + name + "': " + *why};
  const ParamValue v = normalise(*p, value);
  if (const ParamValue* cur = n->param(name); cur && *cur == v) return {};
  NodeInstance after = *n;
  after.set_param(name, v);
  if (after.type == kSubWorkflowType) {  // another inner file: its ports change with it
    Workflow probe;
    probe.file = wf_.file;
    probe.nodes = {after};
    (void)load_subworkflows(probe, registry_);  // its problems show with the workflow's validation
    after.sub = probe.nodes.front().sub;
  }
  undo_.push(new SetParamCommand(*this, *n, std::move(after), name));
  return {};
}

ParamEdit GraphModel::set_param_text(const std::string& node, const std::string& name, const std::string& text) {
  const NodeSpec* s = spec_of(node);
  const ParamSpec* p = s ? s->param(name) : nullptr;
  if (!p) return set_param(node, name, text);  // reports the unknown node/type/parameter
  auto parsed = p->parse(text);
  if (auto* why = std::get_if<std::string>(&parsed)) return {"parameter '" + name + "': " + *why};
  return set_param(node, name, std::get<ParamValue>(parsed));
}

LinkCheck GraphModel::can_connect(const std::string& from_node, const std::string& from_port,
                                  const std::string& to_node, const std::string& to_port) const {
  const NodeInstance* a = wf_.find(from_node);
  const NodeInstance* b = wf_.find(to_node);
  if (!a) return {"no node '" + from_node + "'"};
  if (!b) return {"no node '" + to_node + "'"};
  const NodeSpec* sa = spec_of(from_node);
  const NodeSpec* sb = spec_of(to_node);
  if (!sa) return {"node '" + from_node + "' has the unknown type '" + a->type + "'"};
  if (!sb) return {"node '" + to_node + "' has the unknown type '" + b->type + "'"};
  const PortSpec* out = sa->output(from_port);
  if (!out) {
    if (sa->input(from_port))
      return {"'" + from_node + "." + from_port + "' is an input: links go from an output to an input"};
    return {"node '" + from_node + "' has no output '" + from_port + "'"};
  }
  const PortSpec* in = sb->input(to_port);
  if (!in) {
    if (sb->output(to_port))
      return {"'" + to_node + "." + to_port + "' is an output: links go from an output to an input"};
    return {"node '" + to_node + "' has no input '" + to_port + "'"};
  }
  if (out->type != in->type)
    return {"types differ: " + from_node + "." + from_port + " gives " + out->type + ", " + to_node + "." +
            to_port + " takes " + in->type};
  if (const Link* l = link_into(to_node, to_port))
    return {"input " + to_node + "." + to_port + " is already connected to " + l->from_node + "." +
            l->from_port + " (delete that link first)"};
  if (from_node == to_node) return {"a node cannot feed itself: " + from_node + " -> " + from_node};
  // Cycle: is from_node reachable from to_node? Breadth-first with parents to name the path.
  std::map<std::string, std::string> parent;
  std::deque<std::string> todo{to_node};
  parent[to_node] = "";
  while (!todo.empty()) {
    std::string cur = todo.front();
    todo.pop_front();
    if (cur == from_node) {
      std::vector<std::string> path;
      for (std::string x = cur; !x.empty(); x = parent[x]) path.push_back(x);
      std::reverse(path.begin(), path.end());  // to_node ... from_node
      std::string text = from_node;
      for (const auto& x : path) text += " -> " + x;
      return {"would close the cycle " + text};
    }
    for (const auto& l : wf_.links)
      if (l.from_node == cur && !parent.count(l.to_node)) {
        parent[l.to_node] = cur;
        todo.push_back(l.to_node);
      }
  }
  return {};
}

LinkCheck GraphModel::connect(const std::string& from_node, const std::string& from_port,
                              const std::string& to_node, const std::string& to_port) {
  LinkCheck c = can_connect(from_node, from_port, to_node, to_port);
  if (!c.ok()) return c;
  Link l;
  l.from_node = from_node;
  l.from_port = from_port;
  l.to_node = to_node;
  l.to_port = to_port;
  undo_.push(new LinkCommand(*this, std::move(l), wf_.links.size(), true));
  return c;
}

bool GraphModel::disconnect(const Link& link) {
  auto i = link_index(link);
  if (!i) return false;
  undo_.push(new LinkCommand(*this, wf_.links[*i], *i, false));
  return true;
}

std::string GraphModel::copy(const std::vector<std::string>& ids) const {
  Workflow sub;
  sub.name = "snippet";
  for (const auto& n : wf_.nodes)
    if (contains(ids, n.id)) sub.nodes.push_back(n);
  for (const auto& l : wf_.links)
    if (contains(ids, l.from_node) && contains(ids, l.to_node)) sub.links.push_back(l);
  if (sub.nodes.empty()) return {};
  return gemflow::to_yaml(sub);
}

std::vector<std::string> GraphModel::paste(const std::string& yaml, Pos offset, std::string* error) {
  auto fail = [&](const std::string& why) {
    if (error) *error = why;
    return std::vector<std::string>{};
  };
  LoadResult r = parse_workflow(yaml, "clipboard.yaml", registry_);
  if (!r.workflow) {
    for (const auto& d : r.diagnostics)
      if (d.severity == Diagnostic::Severity::Error) return fail("not a Gemflow snippet: " + d.str());
    return fail("not a Gemflow snippet");
  }
  Workflow& sub = *r.workflow;
  if (sub.nodes.empty()) return fail("the snippet has no nodes");
  std::map<std::string, std::string> rename;
  std::vector<std::string> fresh;
  for (auto& n : sub.nodes) {
    if (!registry_.find_node(n.type)) return fail("node '" + n.id + "' has the unknown type '" + n.type + "'");
    const std::string id = unique_id(n.id, fresh);
    rename[n.id] = id;
    fresh.push_back(id);
    n.id = id;
    const Pos p = n.pos.value_or(Pos{0, 0});
    n.pos = Pos{p[0] + offset[0], p[1] + offset[1]};
    n.where = {};
    n.param_where.clear();
  }
  std::vector<Link> links;
  for (auto l : sub.links) {
    if (!rename.count(l.from_node) || !rename.count(l.to_node)) continue;
    l.from_node = rename[l.from_node];
    l.to_node = rename[l.to_node];
    l.where = {};
    links.push_back(std::move(l));
  }
  undo_.push(new AddNodesCommand(*this, std::move(sub.nodes), std::move(links),
                                 fresh.size() == 1 ? tr("Paste %1").arg(q(fresh.front()))
                                                   : tr("Paste %1 nodes").arg(fresh.size())));
  if (error) error->clear();
  return fresh;
}

std::vector<std::string> GraphModel::duplicate(const std::vector<std::string>& ids, Pos offset) {
  const std::string text = copy(ids);
  if (text.empty()) return {};
  return paste(text, offset);
}

void GraphModel::set_name(const std::string& name) {
  if (name == wf_.name) return;
  undo_.push(new RenameWorkflowCommand(*this, wf_.name, name));
}

void GraphModel::set_description(const std::string& description) {
  if (description == wf_.description) return;
  undo_.push(new SetDescriptionCommand(*this, wf_.description, description));
}

std::string GraphModel::check_node_id(const std::string& node, const std::string& id) const {
  // Same rule as the workflow loader (core/src/workflow.cpp, valid_id): links use '.'.
  if (id.empty()) return "a node id cannot be empty";
  const auto ok_char = [](char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-'; };
  if (!(std::isalpha(static_cast<unsigned char>(id[0])) || id[0] == '_') || !std::all_of(id.begin(), id.end(), ok_char))
    return "invalid node id '" + id + "': use letters, digits, '_' and '-', starting with a letter";
  if (id != node && wf_.find(id)) return "a node '" + id + "' already exists";
  return {};
}

std::string GraphModel::rename_node(const std::string& node, const std::string& new_id) {
  if (!wf_.find(node)) return "no node '" + node + "'";
  if (new_id == node) return {};
  if (std::string why = check_node_id(node, new_id); !why.empty()) return why;
  undo_.push(new RenameNodeCommand(*this, node, new_id));
  return {};
}

// ---- raw mutators -------------------------------------------------------------------------

void GraphModel::raw_insert_node(const NodeInstance& n, std::size_t index) {
  index = std::min(index, wf_.nodes.size());
  wf_.nodes.insert(wf_.nodes.begin() + static_cast<long>(index), n);
  Q_EMIT node_added(q(n.id));
  Q_EMIT changed();
}

void GraphModel::raw_erase_node(const std::string& id) {
  auto i = node_index(id);
  if (!i) return;
  wf_.nodes.erase(wf_.nodes.begin() + static_cast<long>(*i));
  Q_EMIT node_removed(q(id));
  Q_EMIT changed();
}

void GraphModel::raw_replace_node(const NodeInstance& n) {
  NodeInstance* cur = wf_.find(n.id);
  if (!cur) return;
  *cur = n;
  Q_EMIT node_changed(q(n.id));
  Q_EMIT node_moved(q(n.id));
  Q_EMIT changed();
}

void GraphModel::raw_set_pos(const std::string& id, std::optional<Pos> pos) {
  NodeInstance* cur = wf_.find(id);
  if (!cur) return;
  cur->pos = pos;
  Q_EMIT node_moved(q(id));
  Q_EMIT changed();
}

void GraphModel::raw_insert_link(const Link& l, std::size_t index) {
  index = std::min(index, wf_.links.size());
  wf_.links.insert(wf_.links.begin() + static_cast<long>(index), l);
  Q_EMIT link_added(q(l.from_node), q(l.from_port), q(l.to_node), q(l.to_port));
  Q_EMIT changed();
}

void GraphModel::raw_erase_link(std::size_t index) {
  if (index >= wf_.links.size()) return;
  const Link l = wf_.links[index];
  wf_.links.erase(wf_.links.begin() + static_cast<long>(index));
  Q_EMIT link_removed(q(l.from_node), q(l.from_port), q(l.to_node), q(l.to_port));
  Q_EMIT changed();
}

void GraphModel::raw_set_name(const std::string& name) {
  wf_.name = name;
  Q_EMIT name_changed();
  Q_EMIT changed();
}

void GraphModel::raw_set_description(const std::string& description) {
  wf_.description = description;
  Q_EMIT name_changed();
  Q_EMIT changed();
}

void GraphModel::raw_rename_node(const std::string& from, const std::string& to) {
  NodeInstance* n = wf_.find(from);
  if (!n || wf_.find(to)) return;
  n->id = to;
  for (auto& l : wf_.links) {
    if (l.from_node == from) l.from_node = to;
    if (l.to_node == from) l.to_node = to;
  }
  Q_EMIT node_renamed(q(from), q(to));
  Q_EMIT changed();
}

}  // namespace gemflow::studio
