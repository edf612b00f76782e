#include "model/graph_model.hpp"

#include <algorithm>
#include <cctype>
#include <deque>
#include <map>
#include <set>

#include <gemflow/workflow_limits.hpp>

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
  return a.from_node == b.from_node && a.from_port == b.from_port && a.to_node == b.to_node && a.to_port == b.to_port;
}

GraphModel::GraphModel(const Registry& registry, QObject* parent) : QObject(parent), registry_(registry) {
  wf_.name = "untitled";
}

namespace {
/// The spec of a `workflow` node whose inner file is not loaded (no path yet, or a file that
/// cannot be read): no ports, its `path` parameter, so that the Inspector can set it.
const NodeSpec& unloaded_subworkflow_spec() {
  static const NodeSpec spec = [] {
    NodeSpec s;
    s.info.id = std::string(kSubWorkflowType);
    s.info.title = "Sub-workflow";
    s.info.category = "Workflow";
    s.info.doc =
        "Runs another workflow file as one node: its inputs: and outputs: sections are the node's ports. "
        "Choose the file with 'path'.";
    s.info.version = 1;
    s.params.push_back(subworkflow_path_param());
    return s;
  }();
  return spec;
}

/// A node id from a file name: the stem with other characters than [A-Za-z0-9_-] as '_'.
std::string id_from_stem(const std::filesystem::path& file) {
  std::string id = file.stem().string();
  for (char& c : id)
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-')) c = '_';
  if (id.empty() || !(std::isalpha(static_cast<unsigned char>(id[0])) || id[0] == '_')) id = "sub_" + id;
  return id;
}
}  // namespace

namespace {
namespace fs = std::filesystem;

/// `n` with its inner workflow (re)loaded, as the workflow `file` (its folder resolves `path`)
/// would load it.
NodeInstance with_sub_loaded(NodeInstance n, const fs::path& file, const Registry& registry) {
  Workflow probe;
  probe.file = file;
  probe.nodes = {std::move(n)};
  (void)load_subworkflows(probe, registry);  // its problems show with the workflow's validation
  return std::move(probe.nodes.front());
}

/// Relative input paths of `n` (and a sub-workflow node's `path`) rewritten from folder `from`
/// to folder `to`, so that they name the same files.
void rebase_inputs(NodeInstance& n, const NodeSpec* spec, const fs::path& from, const fs::path& to) {
  if (!spec || fs::absolute(from).lexically_normal() == fs::absolute(to).lexically_normal()) return;
  for (auto& [name, v] : n.params) {
    const ParamSpec* p = spec->param(name);
    auto* text = std::get_if<std::string>(&v);
    if (!p || p->kind != ParamKind::InputPath || !text || text->empty() || fs::path(*text).is_absolute()) continue;
    const fs::path abs = (fs::absolute(from) / *text).lexically_normal();
    const fs::path rel = abs.lexically_relative(fs::absolute(to).lexically_normal());
    *text = (rel.empty() ? abs : rel).generic_string();
  }
}

/// `name` made unique among `taken` ("value", "value_2", ...); added to `taken`.
std::string unique_port(const std::string& name, std::vector<std::string>& taken) {
  std::string r = name;
  for (int i = 2; contains(taken, r); ++i) r = name + "_" + std::to_string(i);
  taken.push_back(r);
  return r;
}

/// Why collapsing `ids` would give a node that feeds itself ("" when it would not): a node
/// outside that the selection feeds and that feeds the selection again, named with the path.
std::string feedback_path(const Workflow& wf, const std::vector<std::string>& ids) {
  auto inside = [&](const std::string& id) { return contains(ids, id); };
  std::map<std::string, std::string> parent;  // outside node → the node it was reached from
  std::deque<std::string> todo;
  for (const auto& l : wf.links)
    if (inside(l.from_node) && !inside(l.to_node) && parent.emplace(l.to_node, l.from_node).second)
      todo.push_back(l.to_node);
  while (!todo.empty()) {
    const std::string cur = todo.front();
    todo.pop_front();
    for (const auto& l : wf.links) {
      if (l.from_node != cur) continue;
      if (inside(l.to_node)) {
        std::vector<std::string> path{l.to_node};
        for (std::string x = cur;; x = parent[x]) {
          path.push_back(x);
          if (inside(x)) break;
        }
        std::string text;
        for (auto it = path.rbegin(); it != path.rend(); ++it) text += (text.empty() ? "" : " -> ") + *it;
        return "the sub-workflow would feed itself: " + text + " leaves the selection and comes back (select " + cur +
               " too, or fewer nodes)";
      }
      if (parent.emplace(l.to_node, cur).second) todo.push_back(l.to_node);
    }
  }
  return {};
}

/// The outside outputs feeding a selection and its outputs read outside, in link order.
struct Boundary {
  std::vector<std::pair<std::string, std::string>> in_sources, out_sources;  // (node, port)
};

/// Fills `inner`'s links and its `inputs:`/`outputs:` from the links of `wf` around `ids`:
/// links inside stay inside; one exposed input per outside output that feeds the selection (it
/// may feed several inner ports), one exposed output per inner output read outside. Port names
/// come from the inner ports, made unique.
Boundary expose_boundary(const Workflow& wf, const std::vector<std::string>& ids, Workflow& inner) {
  auto inside = [&](const std::string& id) { return contains(ids, id); };
  Boundary b;
  std::vector<std::string> in_names, out_names;
  for (const auto& l : wf.links) {
    Link c = l;
    c.where = {};
    const bool from_in = inside(l.from_node), to_in = inside(l.to_node);
    if (from_in && to_in) {
      inner.links.push_back(std::move(c));
    } else if (to_in) {
      const std::pair src{l.from_node, l.from_port};
      auto it = std::find(b.in_sources.begin(), b.in_sources.end(), src);
      if (it == b.in_sources.end()) {
        b.in_sources.push_back(src);
        ExposedPort x;
        x.name = unique_port(l.to_port, in_names);
        inner.inputs.push_back(std::move(x));
        it = b.in_sources.end() - 1;
      }
      inner.inputs[static_cast<std::size_t>(it - b.in_sources.begin())].targets.emplace_back(l.to_node, l.to_port);
    } else if (from_in) {
      const std::pair src{l.from_node, l.from_port};
      if (std::find(b.out_sources.begin(), b.out_sources.end(), src) == b.out_sources.end()) {
        b.out_sources.push_back(src);
        ExposedPort x;
        x.name = unique_port(l.from_port, out_names);
        x.targets = {src};
        inner.outputs.push_back(std::move(x));
      }
    }
  }
  return b;
}
}  // namespace

const NodeSpec* GraphModel::spec_of(std::string_view node_id) const {
  const NodeInstance* n = wf_.find(node_id);
  if (!n) return nullptr;
  if (n->type == kSubWorkflowType && !n->sub) return &unloaded_subworkflow_spec();
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
  const fs::path old_file = wf_.file;
  // The paths set below resolve against the new file (a sub-workflow node reads its inner file
  // when its `path` is set).
  wf_.file = target;
  // The first save: input paths chosen while the workflow had no file are absolute; they are
  // made relative to the file, as paths picked after a save are (a workflow moves with its
  // data). One undo step with the save's other rewrites.
  if (old_file.empty()) {
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
  if (!old_file.empty() && fs::absolute(old_base).lexically_normal() != new_base) {
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
  try {
    save_workflow(wf_, target);
  } catch (...) {
    wf_.file = old_file;
    throw;
  }
  undo_.setClean();
}

// ---- editing -----------------------------------------------------------------------------

std::string GraphModel::unique_id(const std::string& base_in, const std::vector<std::string>& taken) const {
  std::string base = base_in.empty() ? std::string("node") : base_in;
  if (base.size() > kMaxIdLength) base.resize(kMaxIdLength);  // ids the loader reads back
  auto used = [&](const std::string& id) { return wf_.find(id) != nullptr || contains(taken, id); };
  if (!used(base)) return base;
  // "add_3" → continue from "add".
  if (auto us = base.rfind('_');
      us != std::string::npos && us + 1 < base.size() &&
      std::all_of(base.begin() + static_cast<long>(us) + 1, base.end(), [](char c) { return c >= '0' && c <= '9'; }))
    base = base.substr(0, us);
  for (int i = 2;; ++i) {
    const std::string suffix = "_" + std::to_string(i);
    std::string id = base.substr(0, std::min(base.size(), kMaxIdLength - suffix.size())) + suffix;
    if (!used(id)) return id;
  }
}

std::string GraphModel::add_node(const std::string& type, Pos pos) {
  if (type == kSubWorkflowType) return add_subworkflow({}, pos);
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
  // Groups lose the removed members (and go when empty), in the same undo step.
  std::vector<EditorGroup> groups;
  bool grouped = false;
  for (auto g : wf_.groups) {
    const auto n = g.nodes.size();
    std::erase_if(g.nodes, [&](const std::string& id) { return contains(present, id); });
    grouped |= g.nodes.size() != n;
    if (!g.nodes.empty()) groups.push_back(std::move(g));
  }
  if (!grouped) {
    undo_.push(new RemoveNodesCommand(*this, present));
    return;
  }
  auto* cmd = new RemoveNodesCommand(*this, present);
  undo_.beginMacro(cmd->text());
  undo_.push(cmd);
  undo_.push(new AnnotationsCommand(*this, std::move(groups), wf_.notes, tr("Update groups")));
  undo_.endMacro();
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
    return {"types differ: " + from_node + "." + from_port + " gives " + out->type + ", " + to_node + "." + to_port +
            " takes " + in->type};
  if (const Link* l = link_into(to_node, to_port))
    return {"input " + to_node + "." + to_port + " is already connected to " + l->from_node + "." + l->from_port +
            " (delete that link first)"};
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

LinkCheck GraphModel::connect(const std::string& from_node, const std::string& from_port, const std::string& to_node,
                              const std::string& to_port) {
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
  undo_.push(new AddNodesCommand(
      *this, std::move(sub.nodes), std::move(links),
      fresh.size() == 1 ? tr("Paste %1").arg(q(fresh.front())) : tr("Paste %1 nodes").arg(fresh.size())));
  if (error) error->clear();
  return fresh;
}

std::vector<std::string> GraphModel::duplicate(const std::vector<std::string>& ids, Pos offset) {
  const std::string text = copy(ids);
  if (text.empty()) return {};
  return paste(text, offset);
}

void GraphModel::set_bypass(const std::vector<std::string>& ids, bool on) {
  std::vector<std::string> change;
  for (const auto& id : ids)
    if (const NodeInstance* n = wf_.find(id); n && n->bypass != on) change.push_back(id);
  if (change.empty()) return;
  const QString text =
      on ? tr("Bypass %1").arg(change.size() == 1 ? q(change.front()) : tr("%1 nodes").arg(change.size()))
         : tr("Enable %1").arg(change.size() == 1 ? q(change.front()) : tr("%1 nodes").arg(change.size()));
  undo_.beginMacro(text);
  for (const auto& id : change) {
    const NodeInstance* n = wf_.find(id);
    NodeInstance after = *n;
    after.bypass = on;
    // Not a parameter: the command's merge key is a name no parameter can have.
    undo_.push(new SetParamCommand(*this, *n, std::move(after), " bypass " + id));
  }
  undo_.endMacro();
}

std::vector<std::string> GraphModel::compatible_types(const std::string& type, bool want_input) const {
  std::vector<std::string> r;
  for (const auto& e : registry_.nodes()) {
    const auto& ports = want_input ? e->spec.inputs : e->spec.outputs;
    if (std::any_of(ports.begin(), ports.end(), [&](const PortSpec& p) { return p.type == type; }))
      r.push_back(e->spec.info.id);
  }
  return r;
}

LinkCheck GraphModel::insert_into_link(const Link& link, const std::string& node) {
  const auto i = link_index(link);
  if (!i) return {"no link " + link.str()};
  const NodeSpec* s = spec_of(node);
  const NodeSpec* from = spec_of(link.from_node);
  if (!s || !from) return {"unknown node type"};
  const PortSpec* out = from->output(link.from_port);
  if (!out) return {"no output " + link.from_node + "." + link.from_port};
  const auto in_it = std::find_if(s->inputs.begin(), s->inputs.end(),
                                  [&](const PortSpec& p) { return p.type == out->type && !link_into(node, p.name); });
  const auto out_it =
      std::find_if(s->outputs.begin(), s->outputs.end(), [&](const PortSpec& p) { return p.type == out->type; });
  if (in_it == s->inputs.end() || out_it == s->outputs.end())
    return {"node '" + node + "' has no free input and output of type " + out->type};
  if (node == link.from_node || node == link.to_node) return {"a node cannot be inserted into its own link"};
  // Checked on a copy: the model changes only when both new links are allowed.
  Workflow trial = wf_;
  trial.links.erase(trial.links.begin() + static_cast<long>(*i));
  std::swap(wf_, trial);
  LinkCheck a = can_connect(link.from_node, link.from_port, node, in_it->name);
  LinkCheck b = a.ok() ? can_connect(node, out_it->name, link.to_node, link.to_port) : LinkCheck{};
  std::swap(wf_, trial);
  if (!a.ok()) return a;
  if (!b.ok()) return b;
  undo_.beginMacro(tr("Insert %1 into %2").arg(q(node), q(link.str())));
  disconnect(link);
  connect(link.from_node, link.from_port, node, in_it->name);
  connect(node, out_it->name, link.to_node, link.to_port);
  undo_.endMacro();
  return {};
}

std::string GraphModel::add_node_linked(const std::string& type, Pos pos, const std::string& port_node,
                                        const std::string& port, bool port_is_output, const std::string& sub_path) {
  const NodeSpec* spec = nullptr;
  NodeInstance probe;
  if (type == kSubWorkflowType) {  // the ports come from the inner file
    probe.type = type;
    probe.set_param("path", sub_path);
    probe = with_sub_loaded(std::move(probe), wf_.file, registry_);
    if (probe.sub) spec = &probe.sub->spec;
  } else if (const NodeEntry* e = registry_.find_node(type)) {
    spec = &e->spec;
  }
  const NodeSpec* other = spec_of(port_node);
  if (!spec || !other) return {};
  const PortSpec* p = port_is_output ? other->output(port) : other->input(port);
  if (!p) return {};
  const auto& ports = port_is_output ? spec->inputs : spec->outputs;
  const auto match = std::find_if(ports.begin(), ports.end(), [&](const PortSpec& x) { return x.type == p->type; });
  if (match == ports.end()) return {};
  undo_.beginMacro(tr("Add %1 linked to %2.%3").arg(q(type), q(port_node), q(port)));
  const std::string id = type == kSubWorkflowType ? add_subworkflow(sub_path, pos) : add_node(type, pos);
  // An input holds one link: the new node takes the place of the old one.
  if (!port_is_output)
    if (const Link* old = link_into(port_node, port)) disconnect(Link(*old));
  if (port_is_output) connect(port_node, port, id, match->name);
  else connect(id, match->name, port_node, port);
  undo_.endMacro();
  return id;
}

std::size_t GraphModel::add_group(const std::vector<std::string>& ids, const std::string& title,
                                  const std::string& color) {
  EditorGroup g;
  g.title = title;
  g.color = color;
  for (const auto& id : ids)
    if (wf_.find(id) && !contains(g.nodes, id)) g.nodes.push_back(id);
  // A node belongs to one group: it leaves the others.
  std::vector<EditorGroup> groups;
  for (auto old : wf_.groups) {
    std::erase_if(old.nodes, [&](const std::string& id) { return contains(g.nodes, id); });
    if (!old.nodes.empty()) groups.push_back(std::move(old));
  }
  groups.push_back(std::move(g));
  const std::size_t index = groups.size() - 1;
  undo_.push(new AnnotationsCommand(*this, std::move(groups), wf_.notes, tr("Group %1").arg(q(title))));
  return index;
}

void GraphModel::set_group(std::size_t index, const EditorGroup& g) {
  if (index >= wf_.groups.size()) return;
  auto groups = wf_.groups;
  groups[index] = g;
  undo_.push(new AnnotationsCommand(*this, std::move(groups), wf_.notes, tr("Edit group %1").arg(q(g.title))));
}

void GraphModel::remove_group(std::size_t index) {
  if (index >= wf_.groups.size()) return;
  auto groups = wf_.groups;
  const std::string title = groups[index].title;
  groups.erase(groups.begin() + static_cast<long>(index));
  undo_.push(new AnnotationsCommand(*this, std::move(groups), wf_.notes, tr("Ungroup %1").arg(q(title))));
}

std::size_t GraphModel::add_note(const std::string& text, Pos pos, double width) {
  auto notes = wf_.notes;
  notes.push_back({text, pos, width});
  undo_.push(new AnnotationsCommand(*this, wf_.groups, std::move(notes), tr("Add note")));
  return wf_.notes.size() - 1;
}

void GraphModel::set_note(std::size_t index, const EditorNote& n) {
  if (index >= wf_.notes.size()) return;
  const EditorNote& cur = wf_.notes[index];
  if (cur.text == n.text && cur.pos == n.pos && cur.width == n.width) return;
  auto notes = wf_.notes;
  notes[index] = n;
  undo_.push(new AnnotationsCommand(*this, wf_.groups, std::move(notes), tr("Edit note")));
}

void GraphModel::remove_note(std::size_t index) {
  if (index >= wf_.notes.size()) return;
  auto notes = wf_.notes;
  notes.erase(notes.begin() + static_cast<long>(index));
  undo_.push(new AnnotationsCommand(*this, wf_.groups, std::move(notes), tr("Delete note")));
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
  if (id.empty()) return "a node id cannot be empty";
  if (!valid_node_id(id))  // the loader's rule
    return "invalid node id '" + (id.size() > kMaxIdLength ? id.substr(0, kMaxIdLength) + "..." : id) +
           "': use letters, digits, '_' and '-', starting with a letter or '_', at most " +
           std::to_string(kMaxIdLength) + " characters";
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

// ---- sub-workflows ----------------------------------------------------------------------

std::string GraphModel::add_subworkflow(const std::string& path, Pos pos) {
  NodeInstance n;
  n.id = unique_id(path.empty() ? std::string("subworkflow") : id_from_stem(path));
  n.type = std::string(kSubWorkflowType);
  n.type_version = 1;
  n.pos = pos;
  if (!path.empty()) {
    n.set_param("path", path);
    n = with_sub_loaded(std::move(n), wf_.file, registry_);
  }
  const std::string id = n.id;
  undo_.push(new AddNodesCommand(*this, {std::move(n)}, {}, tr("Add sub-workflow %1").arg(q(id))));
  return id;
}

fs::path GraphModel::subworkflow_file(std::string_view node) const {
  const NodeInstance* n = wf_.find(node);
  if (!n || n->type != kSubWorkflowType) return {};
  const auto* text = n->param("path") ? std::get_if<std::string>(n->param("path")) : nullptr;
  if (!text || text->empty()) return {};
  const fs::path p = *text;
  return (p.is_relative() ? fs::absolute(wf_.base_dir()) / p : p).lexically_normal();
}

std::vector<std::string> GraphModel::reload_subworkflows(const fs::path& file) {
  std::error_code ec;
  const fs::path target = fs::weakly_canonical(fs::absolute(file), ec);
  std::vector<std::string> ids;
  for (const auto& n : std::vector<NodeInstance>(wf_.nodes)) {
    const fs::path inner = subworkflow_file(n.id);
    if (inner.empty() || fs::weakly_canonical(inner, ec) != target) continue;
    raw_replace_node(with_sub_loaded(n, wf_.file, registry_));
    ids.push_back(n.id);
  }
  return ids;
}

GraphModel::SubgraphEdit GraphModel::collapse_to_subworkflow(const std::vector<std::string>& ids_in,
                                                             const fs::path& file_in) {
  std::vector<std::string> ids;
  for (const auto& n : wf_.nodes)  // file order
    if (contains(ids_in, n.id)) ids.push_back(n.id);
  if (ids.empty()) return {{}, "select the nodes to collapse first"};
  if (file_in.empty()) return {{}, "no file given for the sub-workflow"};
  const fs::path file = fs::absolute(file_in).lexically_normal();
  const fs::path outer_base = fs::absolute(wf_.base_dir()).lexically_normal();
  const fs::path inner_base = file.parent_path();
  std::error_code ec;
  if (!wf_.file.empty() && fs::weakly_canonical(file, ec) == fs::weakly_canonical(fs::absolute(wf_.file), ec))
    return {{}, "the sub-workflow cannot be the workflow's own file " + file.string()};
  auto inside = [&](const std::string& id) { return contains(ids, id); };
  if (std::string why = feedback_path(wf_, ids); !why.empty()) return {{}, why};

  // The inner workflow: the nodes, placed from (0, 0), with their input paths rebased.
  Workflow inner;
  inner.name = file.stem().string();
  double x0 = 1e300, y0 = 1e300;
  for (const auto& id : ids)
    if (const auto& p = wf_.find(id)->pos) {
      x0 = std::min(x0, (*p)[0]);
      y0 = std::min(y0, (*p)[1]);
    }
  if (x0 > 1e299) x0 = y0 = 0;  // no positions
  for (const auto& id : ids) {
    NodeInstance n = *wf_.find(id);
    n.where = {};
    n.param_where.clear();
    rebase_inputs(n, spec_of(id), outer_base, inner_base);
    if (n.pos) n.pos = Pos{(*n.pos)[0] - x0, (*n.pos)[1] - y0};
    inner.nodes.push_back(std::move(n));
  }
  const Boundary b = expose_boundary(wf_, ids, inner);
  const auto& in_sources = b.in_sources;
  const auto& out_sources = b.out_sources;
  std::vector<Link> outer_links;  // the new node's links
  inner.file = file;
  try {
    fs::create_directories(inner_base);
    save_workflow(inner, file);
  } catch (const std::exception& e) {
    return {{}, "cannot write the sub-workflow " + file.string() + ": " + e.what()};
  }

  // The node that replaces them, wired through the exposed ports.
  const fs::path rel = file.lexically_relative(outer_base);
  const std::string path = wf_.file.empty() || rel.empty() ? file.generic_string() : rel.generic_string();
  NodeInstance node;
  node.id = unique_id(id_from_stem(file));
  node.type = std::string(kSubWorkflowType);
  node.type_version = 1;
  node.pos = Pos{x0, y0};
  node.set_param("path", path);
  node = with_sub_loaded(std::move(node), wf_.file, registry_);
  if (!node.sub) return {{}, "the sub-workflow " + file.string() + " was written but cannot be read back"};
  for (std::size_t k = 0; k < in_sources.size(); ++k) {
    Link l;
    l.from_node = in_sources[k].first;
    l.from_port = in_sources[k].second;
    l.to_node = node.id;
    l.to_port = inner.inputs[k].name;
    outer_links.push_back(std::move(l));
  }
  for (const auto& l : wf_.links)
    if (inside(l.from_node) && !inside(l.to_node)) {
      const auto k = static_cast<std::size_t>(
          std::find(out_sources.begin(), out_sources.end(), std::pair{l.from_node, l.from_port}) - out_sources.begin());
      Link c;
      c.from_node = node.id;
      c.from_port = inner.outputs[k].name;
      c.to_node = l.to_node;
      c.to_port = l.to_port;
      outer_links.push_back(std::move(c));
    }
  const std::string id = node.id;
  undo_.beginMacro(tr("Collapse %1 nodes into %2").arg(ids.size()).arg(q(file.filename().string())));
  remove_nodes(ids);
  undo_.push(new AddNodesCommand(*this, {std::move(node)}, std::move(outer_links), tr("Add %1").arg(q(id))));
  undo_.endMacro();
  return {{id}, {}};
}

GraphModel::SubgraphEdit GraphModel::expand_subworkflow(const std::string& id) {
  const NodeInstance* n = wf_.find(id);
  if (!n || n->type != kSubWorkflowType) return {{}, "'" + id + "' is no sub-workflow node"};
  if (!n->sub) return {{}, "the sub-workflow of '" + id + "' is not loaded (set its path)"};
  const Workflow& inner = n->sub->workflow;
  const fs::path inner_base = fs::absolute(inner.base_dir()).lexically_normal();
  const fs::path outer_base = fs::absolute(wf_.base_dir()).lexically_normal();
  const Pos at = n->pos.value_or(Pos{0, 0});
  std::map<std::string, std::string> rename;
  std::vector<std::string> fresh;
  std::vector<NodeInstance> nodes;
  for (const auto& m : inner.nodes) {
    NodeInstance c = m;
    c.id = unique_id(id + "_" + m.id, fresh);
    fresh.push_back(c.id);
    rename[m.id] = c.id;
    c.where = {};
    c.param_where.clear();
    rebase_inputs(c, node_spec(m, registry_), inner_base, outer_base);
    const Pos p = m.pos.value_or(Pos{0, 0});
    c.pos = Pos{at[0] + p[0], at[1] + p[1]};
    nodes.push_back(std::move(c));
  }
  std::vector<Link> links;
  for (auto l : inner.links) {
    l.from_node = rename[l.from_node];
    l.to_node = rename[l.to_node];
    l.where = {};
    links.push_back(std::move(l));
  }
  for (const auto& l : wf_.links) {
    if (l.to_node == id) {
      for (const auto& x : inner.inputs)
        if (x.name == l.to_port)
          for (const auto& [tn, tp] : x.targets) {
            Link c;
            c.from_node = l.from_node;
            c.from_port = l.from_port;
            c.to_node = rename[tn];
            c.to_port = tp;
            links.push_back(std::move(c));
          }
    } else if (l.from_node == id) {
      for (const auto& x : inner.outputs)
        if (x.name == l.from_port && !x.targets.empty()) {
          Link c;
          c.from_node = rename[x.targets.front().first];
          c.from_port = x.targets.front().second;
          c.to_node = l.to_node;
          c.to_port = l.to_port;
          links.push_back(std::move(c));
        }
    }
  }
  undo_.beginMacro(tr("Expand %1").arg(q(id)));
  remove_nodes({id});
  undo_.push(new AddNodesCommand(*this, std::move(nodes), std::move(links), tr("Add the nodes of %1").arg(q(id))));
  undo_.endMacro();
  return {fresh, {}};
}

void GraphModel::set_sweep(const WorkflowSweep& sweep) {
  const auto same = [](const WorkflowSweep& a, const WorkflowSweep& b) {
    if (a.zip != b.zip || a.entries.size() != b.entries.size()) return false;
    for (std::size_t i = 0; i < a.entries.size(); ++i)
      if (a.entries[i].target != b.entries[i].target || a.entries[i].text != b.entries[i].text ||
          a.entries[i].list != b.entries[i].list || a.entries[i].is_list != b.entries[i].is_list)
        return false;
    return true;
  };
  if (same(sweep, wf_.sweep)) return;
  undo_.push(new SetSweepCommand(*this, wf_.sweep, sweep));
}

void GraphModel::raw_set_sweep(WorkflowSweep sweep) {
  wf_.sweep = std::move(sweep);
  Q_EMIT sweep_changed();
  Q_EMIT changed();
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
  for (auto& g : wf_.groups) std::replace(g.nodes.begin(), g.nodes.end(), from, to);
  // the ports this workflow exposes as a sub-workflow follow the node
  for (auto* ports : {&wf_.inputs, &wf_.outputs})
    for (auto& x : *ports)
      for (auto& t : x.targets)
        if (t.first == from) t.first = to;
  Q_EMIT node_renamed(q(from), q(to));
  Q_EMIT changed();
}

void GraphModel::raw_set_annotations(std::vector<EditorGroup> groups, std::vector<EditorNote> notes) {
  wf_.groups = std::move(groups);
  wf_.notes = std::move(notes);
  Q_EMIT annotations_changed();
  Q_EMIT changed();
}

// ---- layout -------------------------------------------------------------------------------

std::map<std::string, Pos> layered_layout(const Workflow& wf, const std::function<double(const std::string&)>& height,
                                          double width) {
  constexpr double kColumnGap = 110, kRowGap = 30;
  constexpr int kSweeps = 6;
  std::vector<std::string> order;
  try {
    order = topological_order(wf);
  } catch (const std::exception&) {
    for (const auto& n : wf.nodes) order.push_back(n.id);  // a cycle: file order
  }
  std::map<std::string, std::vector<std::string>> preds, succs;
  for (const auto& l : wf.links) {
    if (!wf.find(l.from_node) || !wf.find(l.to_node)) continue;
    preds[l.to_node].push_back(l.from_node);
    succs[l.from_node].push_back(l.to_node);
  }
  // Columns: longest path from a source.
  std::map<std::string, int> layer;
  int layers = 0;
  for (const auto& id : order) {
    int d = 0;
    for (const auto& p : preds[id])
      if (auto it = layer.find(p); it != layer.end()) d = std::max(d, it->second + 1);
    layer[id] = d;
    layers = std::max(layers, d + 1);
  }
  std::vector<std::vector<std::string>> cols(static_cast<std::size_t>(layers));
  for (const auto& id : order) cols[static_cast<std::size_t>(layer[id])].push_back(id);
  // Order within columns: barycentre of the neighbours' ranks, sweeping right then left.
  std::map<std::string, double> rank;
  auto set_ranks = [&](const std::vector<std::string>& col) {
    for (std::size_t i = 0; i < col.size(); ++i) rank[col[i]] = static_cast<double>(i);
  };
  for (const auto& c : cols) set_ranks(c);
  auto sweep = [&](std::vector<std::string>& col, const std::map<std::string, std::vector<std::string>>& nbrs) {
    std::vector<std::pair<double, std::string>> keyed;
    for (const auto& id : col) {
      double sum = 0;
      int n = 0;
      if (auto it = nbrs.find(id); it != nbrs.end())
        for (const auto& x : it->second) {
          sum += rank[x];
          ++n;
        }
      keyed.emplace_back(n ? sum / n : rank[id], id);
    }
    std::stable_sort(keyed.begin(), keyed.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
    for (std::size_t i = 0; i < col.size(); ++i) col[i] = keyed[i].second;
    set_ranks(col);
  };
  for (int s = 0; s < kSweeps; ++s) {
    if (s % 2 == 0)
      for (std::size_t c = 1; c < cols.size(); ++c) sweep(cols[c], preds);
    else
      for (std::size_t c = cols.size(); c-- > 1;) sweep(cols[c - 1], succs);
  }
  // Stack each column, centred on the tallest one.
  std::vector<double> col_height(cols.size(), 0);
  double tallest = 0;
  for (std::size_t c = 0; c < cols.size(); ++c) {
    for (const auto& id : cols[c]) col_height[c] += height(id) + kRowGap;
    tallest = std::max(tallest, col_height[c]);
  }
  std::map<std::string, Pos> pos;
  for (std::size_t c = 0; c < cols.size(); ++c) {
    double y = std::round((tallest - col_height[c]) / 2);
    for (const auto& id : cols[c]) {
      pos[id] = Pos{static_cast<double>(c) * (width + kColumnGap), y};
      y += std::round(height(id) + kRowGap);
    }
  }
  return pos;
}

std::size_t count_crossings(const Workflow& wf, const std::map<std::string, Pos>& pos) {
  struct Seg {
    double x0, y0, x1, y1;
  };
  std::vector<Seg> segs;
  for (const auto& l : wf.links) {
    auto a = pos.find(l.from_node), b = pos.find(l.to_node);
    if (a == pos.end() || b == pos.end()) continue;
    segs.push_back({a->second[0], a->second[1], b->second[0], b->second[1]});
  }
  std::size_t n = 0;
  for (std::size_t i = 0; i < segs.size(); ++i)
    for (std::size_t j = i + 1; j < segs.size(); ++j) {
      const Seg& a = segs[i];
      const Seg& b = segs[j];
      // Same pair of columns: they cross when their ends swap order.
      if (a.x0 != b.x0 || a.x1 != b.x1) continue;
      if ((a.y0 - b.y0) * (a.y1 - b.y1) < 0) ++n;
    }
  return n;
}

}  // namespace gemflow::studio
