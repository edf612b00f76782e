#include "editor/graph_scene.hpp"

#include <algorithm>
#include <cmath>
#include <set>
#include <tuple>

#include <QApplication>
#include <QCursor>
#include <QGraphicsPathItem>
#include <QGraphicsSceneContextMenuEvent>
#include <QGraphicsSceneMouseEvent>
#include <QGraphicsView>
#include <QKeyEvent>
#include <QMenu>
#include <QPen>
#include <QTimer>
#include <QToolTip>

#include "editor/style.hpp"

namespace gemflow::studio {

namespace {
QString q(const std::string& s) { return QString::fromStdString(s); }
std::string s(const QString& t) { return t.toStdString(); }
}  // namespace

GraphScene::GraphScene(GraphModel& model, QObject* parent) : QGraphicsScene(parent), model_(model) {
  setBackgroundBrush(QColor(0x26, 0x28, 0x2c));
  setItemIndexMethod(QGraphicsScene::NoIndex);  // items move a lot; fine for thousands of nodes
  connect(&model_, &GraphModel::model_reset, this, &GraphScene::rebuild);
  connect(&model_, &GraphModel::node_added, this, [this](const QString& id) { add_node_item(s(id)); });
  connect(&model_, &GraphModel::node_removed, this, [this](const QString& id) { remove_node_item(s(id)); });
  connect(&model_, &GraphModel::node_moved, this, [this](const QString& id) { sync_pos(s(id)); });
  connect(&model_, &GraphModel::link_added, this,
          [this](const QString& fn, const QString& fp, const QString& tn, const QString& tp) {
            Link l;
            l.from_node = s(fn);
            l.from_port = s(fp);
            l.to_node = s(tn);
            l.to_port = s(tp);
            add_wire(l);
          });
  connect(&model_, &GraphModel::link_removed, this, &GraphScene::remove_wire);
  connect(&model_, &GraphModel::node_renamed, this, [this](const QString& from, const QString& to) {
    auto it = nodes_.find(s(from));
    if (it == nodes_.end()) return;
    NodeItem* item = it->second;
    nodes_.erase(it);
    nodes_[s(to)] = item;
    item->set_id(s(to));
    for (auto* w : wires_)
      if (w->from()->node() == item || w->to()->node() == item) w->update_tooltip();
  });
  connect(this, &QGraphicsScene::selectionChanged, this, &GraphScene::on_selection_changed);
  connect(&model_, &GraphModel::node_changed, this, [this](const QString& id) {
    if (auto* item = node_item(s(id)))
      if (const NodeInstance* n = model_.workflow().find(s(id))) {
        item->set_bypass(n->bypass);
        if (n->type == kSubWorkflowType) refresh_ports(n->id);
      }
  });
  // Deferred: a note commits its text from inside its own event handler.
  connect(&model_, &GraphModel::annotations_changed, this, [this] {
    if (annotations_pending_) return;
    annotations_pending_ = true;
    QTimer::singleShot(0, this, [this] { rebuild_annotations(); });
  });
  connect(&model_, &GraphModel::changed, this, &GraphScene::schedule_problems);
  rebuild();
}

NodeItem* GraphScene::node_item(const std::string& id) const {
  auto it = nodes_.find(id);
  return it == nodes_.end() ? nullptr : it->second;
}

std::vector<NodeItem*> GraphScene::node_items() const {
  std::vector<NodeItem*> r;
  for (const auto& [id, n] : nodes_) r.push_back(n);
  return r;
}

std::vector<std::string> GraphScene::selected_node_ids() const {
  std::vector<std::string> ids;
  // Model order, so that copy/paste keeps the file order.
  for (const auto& n : model_.workflow().nodes)
    if (auto* item = node_item(n.id); item && item->isSelected()) ids.push_back(n.id);
  return ids;
}

void GraphScene::rebuild() {
  drag_from_ = nullptr;
  drag_wire_ = nullptr;  // deleted by clear() below
  picked_wire_ = nullptr;
  picked_.reset();
  drag_moved_ = false;
  wires_.clear();
  nodes_.clear();
  groups_.clear();
  notes_.clear();
  clear();
  auto_layout();
  for (const auto& n : model_.workflow().nodes) add_node_item(n.id);
  for (const auto& l : model_.workflow().links) add_wire(l);
  rebuild_annotations();
  refresh_problems();
}

void GraphScene::rebuild_annotations() {
  annotations_pending_ = false;
  for (auto* g : groups_) delete g;
  for (auto* n : notes_) delete n;
  groups_.clear();
  notes_.clear();
  const auto& wf = model_.workflow();
  for (std::size_t i = 0; i < wf.groups.size(); ++i) {
    auto* g = new GroupItem(*this, i);
    addItem(g);
    groups_.push_back(g);
  }
  for (std::size_t i = 0; i < wf.notes.size(); ++i) {
    auto* n = new NoteItem(*this, i);
    addItem(n);
    notes_.push_back(n);
  }
  update_group_frames();
}

QRectF GraphScene::node_rect(const std::string& id) const {
  NodeItem* n = node_item(id);
  return n ? n->mapRectToScene(n->boundingRect().adjusted(2, 2, -2, -2)) : QRectF();
}

void GraphScene::update_group_frames() {
  const auto& wf = model_.workflow();
  for (auto* g : groups_) {
    if (g->index() >= wf.groups.size()) continue;
    const EditorGroup& eg = wf.groups[g->index()];
    QRectF r;
    for (const auto& id : eg.nodes) r |= node_rect(id);
    g->setVisible(!r.isNull());
    const QColor c(q(eg.color.empty() ? group_colors().front().second.toStdString() : eg.color));
    g->set_frame(r, q(eg.title), c.isValid() ? c : QColor(group_colors().front().second));
  }
}

void GraphScene::move_group_items(std::size_t index, QPointF d) {
  const auto& wf = model_.workflow();
  if (index >= wf.groups.size()) return;
  for (const auto& id : wf.groups[index].nodes)
    if (auto* n = node_item(id)) n->moveBy(d.x(), d.y());
}

void GraphScene::rename_group(std::size_t index, const QString& title) {
  const auto& wf = model_.workflow();
  if (index >= wf.groups.size()) return;
  EditorGroup g = wf.groups[index];
  g.title = title.trimmed().toStdString();
  model_.set_group(index, g);
}

void GraphScene::schedule_problems() {
  if (problems_pending_) return;
  problems_pending_ = true;
  QTimer::singleShot(0, this, [this] { refresh_problems(); });
}

void GraphScene::refresh_problems() {
  problems_pending_ = false;
  problems_ = model_.problems();
  std::map<std::string, std::pair<QString, bool>> by_node;
  for (const auto& d : problems_) {
    if (d.node.empty()) continue;
    auto& [text, error] = by_node[d.node];
    if (!text.isEmpty()) text += QLatin1Char('\n');
    text += q(d.log_str());
    error |= d.severity == Diagnostic::Severity::Error;
  }
  for (const auto& [id, n] : nodes_) {
    auto it = by_node.find(id);
    if (it == by_node.end()) n->set_problem({}, false);
    else n->set_problem(it->second.first, it->second.second);
  }
  Q_EMIT problems_changed();
}

std::vector<Diagnostic> GraphScene::problems_of(const std::string& id) const {
  std::vector<Diagnostic> r;
  for (const auto& d : problems_)
    if (d.node == id) r.push_back(d);
  return r;
}

// ---- menus --------------------------------------------------------------------------------

QMenu* GraphScene::make_node_menu(const std::string& id) {
  auto* menu = new QMenu;
  menu->setObjectName(QStringLiteral("node_menu"));
  std::vector<std::string> ids = selected_node_ids();
  if (std::find(ids.begin(), ids.end(), id) == ids.end()) ids = {id};
  const NodeInstance* n = model_.workflow().find(id);
  const QString qid = q(id);
  auto add = [&](const QString& text, const char* name, auto fn) {
    QAction* a = menu->addAction(text, this, fn);
    a->setObjectName(QLatin1String(name));
    return a;
  };
  add(tr("Run to Here"), "run_to_here", [this, qid] { Q_EMIT run_to_requested(qid); });
  QAction* bypass = add(tr("Bypass"), "bypass", [this, ids, on = !(n && n->bypass)] { model_.set_bypass(ids, on); });
  bypass->setCheckable(true);
  bypass->setChecked(n && n->bypass);
  bypass->setToolTip(tr("Don't run it: its inputs pass through to its outputs of the same type"));
  menu->addSeparator();
  add(tr("Duplicate"), "duplicate", [this, ids] {
    auto fresh = model_.duplicate(ids);
    if (!fresh.empty()) select_nodes(fresh);
  });
  add(tr("Rename…"), "rename", [this, qid] { Q_EMIT rename_requested(qid); });
  add(tr("Group"), "group",
      [this, ids] { model_.add_group(ids, ids.size() == 1 ? ids.front() : tr("Group").toStdString()); });
  add(tr("Delete"), "delete", [this, ids] { model_.remove_nodes(ids); });
  menu->addSeparator();
  if (n && n->type == kSubWorkflowType) {
    add(tr("Open Sub-workflow"), "open_subworkflow", [this, qid] { Q_EMIT open_subworkflow_requested(qid); });
    add(tr("Expand Sub-workflow"), "expand_subworkflow", [this, id] {
      const auto r = model_.expand_subworkflow(id);
      if (!r.ok()) Q_EMIT message(q(r.error));
      else select_nodes(r.nodes);
    });
  }
  add(tr("Collapse into Sub-workflow…"), "collapse_subworkflow", [this, ids] {
    QStringList l;
    for (const auto& x : ids) l << q(x);
    Q_EMIT collapse_requested(l);
  });
  menu->addSeparator();
  add(tr("Open Documentation"), "open_docs", [this, qid] { Q_EMIT docs_requested(qid); });
  add(tr("Show Outputs Folder"), "show_outputs", [this, qid] { Q_EMIT outputs_folder_requested(qid); });
  return menu;
}

QMenu* GraphScene::make_wire_menu(const Link& link) {
  auto* menu = new QMenu;
  menu->setObjectName(QStringLiteral("wire_menu"));
  const QPoint screen = QCursor::pos();
  QPointF mid;
  for (auto* w : wires_)
    if (same_link(w->link(), link)) mid = w->path().pointAtPercent(0.5);
  menu->addAction(tr("Insert Node…"), this,
                  [this, link, mid, screen] { Q_EMIT insert_node_requested(mid, screen, link); })
      ->setObjectName(QStringLiteral("insert_node"));
  menu->addAction(tr("View Data"), this,
                  [this, link] { Q_EMIT view_data_requested(q(link.from_node), q(link.from_port)); })
      ->setObjectName(QStringLiteral("view_data"));
  menu->addSeparator();
  menu->addAction(tr("Delete Link"), this, [this, link] { model_.disconnect(link); })
      ->setObjectName(QStringLiteral("delete_link"));
  return menu;
}

QMenu* GraphScene::make_group_menu(std::size_t index) {
  auto* menu = new QMenu;
  menu->setObjectName(QStringLiteral("group_menu"));
  const auto& wf = model_.workflow();
  if (index >= wf.groups.size()) return menu;
  auto* colours = menu->addMenu(tr("Colour"));
  for (const auto& [name, hex] : group_colors())
    colours->addAction(name, this, [this, index, hex = hex.toStdString()] {
      if (index >= model_.workflow().groups.size()) return;
      EditorGroup g = model_.workflow().groups[index];
      g.color = hex;
      model_.set_group(index, g);
    });
  menu->addAction(tr("Select Its Nodes"), this, [this, index] {
    if (index < model_.workflow().groups.size()) select_nodes(model_.workflow().groups[index].nodes);
  });
  menu->addAction(tr("Ungroup"), this, [this, index] { model_.remove_group(index); })
      ->setObjectName(QStringLiteral("ungroup"));
  return menu;
}

void GraphScene::contextMenuEvent(QGraphicsSceneContextMenuEvent* e) {
  for (QGraphicsItem* it : items(e->scenePos())) {
    if (it->type() == WireItem::Type) {
      std::unique_ptr<QMenu> menu(make_wire_menu(static_cast<WireItem*>(it)->link()));
      menu->exec(e->screenPos());
      e->accept();
      return;
    }
    if (it->type() == GroupItem::Type &&
        !static_cast<GroupItem*>(it)->title_rect().contains(it->mapFromScene(e->scenePos())))
      continue;  // a group's body is canvas
    if (it->type() == NodeItem::Type || it->type() == PortItem::Type || it->type() == GroupItem::Type ||
        it->type() == NoteItem::Type) {
      QGraphicsScene::contextMenuEvent(e);
      return;
    }
  }
  // The canvas: the quick-add search, with the canvas commands.
  Q_EMIT quick_add_requested(e->scenePos(), e->screenPos(), {}, {}, false, true);
  e->accept();
}

// ---- gestures -----------------------------------------------------------------------------

bool GraphScene::insert_on_wire(const std::string& node) {
  if (!model_.links_of(node).empty()) return false;
  const QRectF r = node_rect(node);
  if (r.isNull()) return false;
  std::vector<Link> under;
  for (auto* w : wires_)
    if (w->from()->node()->id() != node && w->to()->node()->id() != node && w->shape().intersects(r))
      under.push_back(w->link());
  for (const auto& l : under)
    if (model_.insert_into_link(l, node).ok()) return true;
  return false;
}

void GraphScene::arrange() {
  const auto pos = layered_layout(
      model_.workflow(), [this](const std::string& id) { return node_rect(id).height(); }, NodeItem::kWidth);
  std::vector<std::pair<std::string, Pos>> moves(pos.begin(), pos.end());
  model_.move_nodes(moves);
}

void GraphScene::align_selection(Align how) {
  const auto ids = selected_node_ids();
  if (ids.size() < 2) return;
  std::vector<std::pair<std::string, QRectF>> rs;
  QRectF all;
  for (const auto& id : ids) {
    rs.emplace_back(id, node_rect(id));
    all |= rs.back().second;
  }
  std::vector<std::pair<std::string, Pos>> moves;
  auto put = [&](const std::string& id, double x, double y) {
    moves.emplace_back(id, Pos{std::round(x), std::round(y)});
  };
  if (how == Align::DistributeH || how == Align::DistributeV) {
    if (rs.size() < 3) return;
    const bool h = how == Align::DistributeH;
    std::sort(rs.begin(), rs.end(), [h](const auto& a, const auto& b) {
      return h ? a.second.left() < b.second.left() : a.second.top() < b.second.top();
    });
    double total = 0;
    for (const auto& [id, r] : rs) total += h ? r.width() : r.height();
    const double gap = ((h ? all.width() : all.height()) - total) / static_cast<double>(rs.size() - 1);
    double at = h ? all.left() : all.top();
    for (const auto& [id, r] : rs) {
      put(id, h ? at : r.left(), h ? r.top() : at);
      at += (h ? r.width() : r.height()) + gap;
    }
  } else {
    for (const auto& [id, r] : rs) {
      double x = r.left(), y = r.top();
      switch (how) {
        case Align::Left: x = all.left(); break;
        case Align::Right: x = all.right() - r.width(); break;
        case Align::Top: y = all.top(); break;
        case Align::Bottom: y = all.bottom() - r.height(); break;
        case Align::CentreH: y = all.center().y() - r.height() / 2; break;
        case Align::CentreV: x = all.center().x() - r.width() / 2; break;
        default: break;
      }
      put(id, x, y);
    }
  }
  model_.move_nodes(moves);
}

void GraphScene::auto_layout() {
  // Files written by hand or by tools may have no editor section: place those nodes in
  // columns by dependency depth. A long chain wraps into bands of at most kMaxColumns columns
  // stacked top to bottom (links back to the next band run along the gap between the bands),
  // so that a ten-stage pipeline stays readable at a zoom that fits a screen.
  // Layout only: not an edit (no undo step, not "modified").
  constexpr int kMaxColumns = 6;
  constexpr double kColumnGap = 110, kRowGap = 36, kBandGap = 90;
  const auto& wf = model_.workflow();
  std::vector<std::string> order;
  try {
    order = topological_order(wf);
  } catch (const std::exception&) {
    for (const auto& n : wf.nodes) order.push_back(n.id);  // a cycle: file order
  }
  std::map<std::string, int> depth;
  int max_depth = 0;
  for (const auto& id : order) {
    int d = 0;
    for (const auto& l : wf.links)
      if (l.to_node == id && depth.count(l.from_node)) d = std::max(d, depth[l.from_node] + 1);
    depth[id] = d;
    max_depth = std::max(max_depth, d);
  }
  const int columns = max_depth + 1;
  const int bands = (columns + kMaxColumns - 1) / kMaxColumns;
  const int per_band = (columns + bands - 1) / bands;  // even bands: 10 columns → 5 + 5
  auto height_of = [&](const NodeInstance& n) {
    if (const NodeSpec* spec = model_.spec_of(n.id))
      return NodeItem::height_for(spec->inputs.size(), spec->outputs.size());
    std::set<std::string> in, out;
    for (const auto& l : wf.links) {
      if (l.to_node == n.id) in.insert(l.to_port);
      if (l.from_node == n.id) out.insert(l.from_port);
    }
    return NodeItem::height_for(in.size(), out.size());
  };
  // Stack each column; a band is as tall as its tallest column.
  std::map<std::pair<int, int>, std::vector<const NodeInstance*>> cells;  // (band, column)
  for (const auto& id : order)
    if (const NodeInstance* n = wf.find(id); n && !n->pos)
      cells[{depth[id] / per_band, depth[id] % per_band}].push_back(n);
  if (cells.empty()) return;
  std::vector<double> band_height(static_cast<std::size_t>(bands), 0.0);
  for (const auto& [cell, nodes] : cells) {
    double h = 0;
    for (const auto* n : nodes) h += height_of(*n) + kRowGap;
    band_height[static_cast<std::size_t>(cell.first)] =
        std::max(band_height[static_cast<std::size_t>(cell.first)], h - kRowGap);
  }
  std::vector<double> band_top(static_cast<std::size_t>(bands), 0.0);
  for (std::size_t b = 1; b < band_top.size(); ++b) band_top[b] = band_top[b - 1] + band_height[b - 1] + kBandGap;
  for (const auto& [cell, nodes] : cells) {
    double y = band_top[static_cast<std::size_t>(cell.first)];
    for (const auto* n : nodes) {
      model_.raw_set_pos(n->id, Pos{cell.second * (NodeItem::kWidth + kColumnGap), y});
      y += height_of(*n) + kRowGap;
    }
  }
}

NodeItem* GraphScene::add_node_item(const std::string& id) {
  const NodeInstance* n = model_.workflow().find(id);
  if (!n) return nullptr;
  const NodeSpec* spec = model_.spec_of(id);
  std::vector<PortSpec> ins, outs;
  if (!spec) {  // unknown type: show the ports that links use, so the graph stays readable
    for (const auto& l : model_.workflow().links) {
      if (l.to_node == id && std::none_of(ins.begin(), ins.end(), [&](auto& p) { return p.name == l.to_port; }))
        ins.push_back({l.to_port, "?", false, ""});
      if (l.from_node == id && std::none_of(outs.begin(), outs.end(), [&](auto& p) { return p.name == l.from_port; }))
        outs.push_back({l.from_port, "?", false, ""});
    }
  }
  auto* item = new NodeItem(id, n->type, spec, ins, outs);
  item->set_bypass(n->bypass);
  if (n->pos) item->setPos((*n->pos)[0], (*n->pos)[1]);
  else item->setPos(free_position());
  addItem(item);
  nodes_[id] = item;
  connect(item, &NodeItem::geometry_changed, this, [this, item] {
    update_wires_of(item);
    if (!groups_.empty()) update_group_frames();
  });
  return item;
}

void GraphScene::refresh_ports(const std::string& id) {
  NodeItem* item = node_item(id);
  const NodeSpec* spec = model_.spec_of(id);
  if (!item || !spec) return;
  std::vector<std::tuple<bool, std::string, std::string>> have, want;
  for (const auto* p : item->ports()) have.emplace_back(p->is_output(), p->spec().name, p->spec().type);
  for (const auto& p : spec->inputs) want.emplace_back(false, p.name, p.type);
  for (const auto& p : spec->outputs) want.emplace_back(true, p.name, p.type);
  if (have == want) return;
  const bool selected = item->isSelected();
  remove_node_item(id);
  NodeItem* fresh = add_node_item(id);
  for (const auto& l : model_.links_of(id)) add_wire(l);
  if (fresh) fresh->setSelected(selected);
  schedule_problems();
}

void GraphScene::remove_node_item(const std::string& id) {
  auto it = nodes_.find(id);
  if (it == nodes_.end()) return;
  NodeItem* item = it->second;
  if ((drag_from_ && drag_from_->node() == item) ||
      (picked_wire_ && (picked_wire_->from()->node() == item || picked_wire_->to()->node() == item)))
    cancel_link_drag();
  // Wires are removed by link_removed before the node; drop any left (defensive).
  for (auto w = wires_.begin(); w != wires_.end();) {
    if ((*w)->from()->node() == item || (*w)->to()->node() == item) {
      delete *w;
      w = wires_.erase(w);
    } else {
      ++w;
    }
  }
  nodes_.erase(it);
  delete item;
}

void GraphScene::add_wire(const Link& l) {
  NodeItem* a = node_item(l.from_node);
  NodeItem* b = node_item(l.to_node);
  if (!a || !b) return;
  PortItem* pa = a->port(l.from_port, true);
  PortItem* pb = b->port(l.to_port, false);
  if (!pa || !pb) return;
  auto* w = new WireItem(pa, pb);
  addItem(w);
  wires_.push_back(w);
}

void GraphScene::remove_wire(const QString& fn, const QString& fp, const QString& tn, const QString& tp) {
  for (auto it = wires_.begin(); it != wires_.end(); ++it) {
    WireItem* w = *it;
    if (q(w->from()->node()->id()) == fn && q(w->from()->spec().name) == fp && q(w->to()->node()->id()) == tn &&
        q(w->to()->spec().name) == tp) {
      wires_.erase(it);
      if (w == picked_wire_) cancel_link_drag();
      delete w;
      return;
    }
  }
}

void GraphScene::update_wires_of(NodeItem* n) {
  for (auto* w : wires_)
    if (w->from()->node() == n || w->to()->node() == n) w->update_path();
}

void GraphScene::sync_pos(const std::string& id) {
  NodeItem* item = node_item(id);
  const NodeInstance* n = model_.workflow().find(id);
  if (!item || !n || !n->pos) return;
  const QPointF p((*n->pos)[0], (*n->pos)[1]);
  if (item->pos() != p) item->setPos(p);
}

QPointF GraphScene::free_position() const {
  double x = 0, y = 0;
  bool any = false;
  for (const auto& [id, n] : nodes_) {
    x = any ? std::max(x, n->pos().x()) : n->pos().x();
    y = any ? std::min(y, n->pos().y()) : n->pos().y();
    any = true;
  }
  return any ? QPointF(x + NodeItem::kWidth + 60, y) : QPointF(0, 0);
}

// ---- link dragging ----------------------------------------------------------------------

void GraphScene::begin_link_drag(PortItem* port, QPointF scene_pos) {
  cancel_link_drag();
  PortItem* picked_input = nullptr;
  if (!port->is_output()) {
    if (const Link* l = model_.link_into(port->node()->id(), port->spec().name)) {
      // Pick the link up: the drag continues from its source output. The model keeps the link
      // until the drop decides (a click without a drag changes nothing).
      NodeItem* src = node_item(l->from_node);
      if (PortItem* out = src ? src->port(l->from_port, true) : nullptr) {
        picked_ = *l;
        picked_input = port;
        for (auto* w : wires_)
          if (w->from() == out && w->to() == port) picked_wire_ = w;
        port = out;
      }
    }
  }
  drag_from_ = port;
  drag_moved_ = false;
  drag_wire_ = new QGraphicsPathItem;
  drag_wire_->setPen(QPen(type_color(port->spec().type), 2.5, Qt::DashLine));
  drag_wire_->setZValue(5);
  drag_wire_->setVisible(false);  // shown once the mouse moves
  addItem(drag_wire_);
  // Light up the ports this one may link to; dim the others. The picked link's own input
  // counts as free: dropping back there keeps the link.
  for (const auto& [id, n] : nodes_)
    for (PortItem* p : n->ports()) {
      if (p == port) continue;
      LinkCheck c = port->is_output()
                        ? model_.can_connect(port->node()->id(), port->spec().name, n->id(), p->spec().name)
                        : model_.can_connect(n->id(), p->spec().name, port->node()->id(), port->spec().name);
      p->set_highlight(c.ok() || p == picked_input ? 1 : -1);
    }
  const QPointF a = port->anchor();
  drag_wire_->setPath(port->is_output() ? WireItem::bezier(a, scene_pos) : WireItem::bezier(scene_pos, a));
}

void GraphScene::cancel_link_drag() {
  if (!drag_from_ && !drag_wire_ && !picked_) return;
  clear_highlights();
  delete drag_wire_;
  drag_wire_ = nullptr;
  drag_from_ = nullptr;
  if (picked_wire_) picked_wire_->setVisible(true);
  picked_wire_ = nullptr;
  picked_.reset();
  drag_moved_ = false;
}

void GraphScene::clear_highlights() {
  for (const auto& [id, n] : nodes_)
    for (PortItem* p : n->ports()) p->set_highlight(0);
}

LinkCheck GraphScene::link_ports(PortItem* a, PortItem* b, const QPoint* screen_pos) {
  LinkCheck c;
  if (a->is_output()) c = model_.connect(a->node()->id(), a->spec().name, b->node()->id(), b->spec().name);
  else c = model_.connect(b->node()->id(), b->spec().name, a->node()->id(), a->spec().name);
  if (!c.ok()) {
    last_refusal_ = tr("Cannot link: %1").arg(q(c.reason));
    if (screen_pos) QToolTip::showText(*screen_pos, last_refusal_);
    Q_EMIT message(last_refusal_);
  }
  return c;
}

void GraphScene::end_link_drag(QPointF scene_pos, QPoint screen_pos) {
  PortItem* from = drag_from_;
  const std::optional<Link> picked = picked_;
  const bool moved = drag_moved_;
  cancel_link_drag();
  if (!from || !moved) return;  // a click: nothing to do
  PortItem* target = nullptr;
  bool on_node = false;
  for (QGraphicsItem* it : items(scene_pos)) {
    if (it->type() == PortItem::Type) {
      target = static_cast<PortItem*>(it);
      break;
    }
    if (it->type() == NodeItem::Type) {
      on_node = true;
      // Dropped on a node body: the first port that accepts the link, else its first port of
      // the opposite direction (so that the refusal says why).
      auto* n = static_cast<NodeItem*>(it);
      if (picked && n->id() == picked->to_node) {  // back on the node it came from
        target = n->port(picked->to_port, false);
        break;
      }
      PortItem* fallback = nullptr;
      for (PortItem* p : n->ports()) {
        if (p->is_output() == from->is_output()) continue;
        if (!fallback) fallback = p;
        LinkCheck c = from->is_output()
                          ? model_.can_connect(from->node()->id(), from->spec().name, n->id(), p->spec().name)
                          : model_.can_connect(n->id(), p->spec().name, from->node()->id(), from->spec().name);
        if (c.ok()) {
          target = p;
          break;
        }
      }
      if (!target) target = fallback;
      if (!target && n != from->node()) {
        last_refusal_ =
            tr("Cannot link: %1 has no %2").arg(q(n->id()), from->is_output() ? tr("inputs") : tr("outputs"));
        QToolTip::showText(screen_pos, last_refusal_);
        Q_EMIT message(last_refusal_);
      }
      break;
    }
  }
  if (!picked) {
    if (target && target != from) link_ports(from, target, &screen_pos);
    // Dropped in empty space: offer the nodes that can take (or give) this port's data.
    else if (!target && !on_node)
      Q_EMIT quick_add_requested(scene_pos, screen_pos, q(from->node()->id()), q(from->spec().name), from->is_output(),
                                 false);
    return;
  }
  // A picked-up link: back on its own input it stays; elsewhere it moves (one undo step) when
  // the new link is allowed, else it stays and the refusal says why; in empty space it goes.
  if (!target) {
    if (!on_node) model_.disconnect(*picked);
    return;
  }
  if (!target->is_output() && target->node()->id() == picked->to_node && target->spec().name == picked->to_port) return;
  if (target == from) return;
  const LinkCheck c = target->is_output() ? LinkCheck{"links go from an output to an input"}
                                          : model_.can_connect(from->node()->id(), from->spec().name,
                                                               target->node()->id(), target->spec().name);
  if (!c.ok()) {
    last_refusal_ = tr("Cannot link: %1").arg(q(c.reason));
    QToolTip::showText(screen_pos, last_refusal_);
    Q_EMIT message(last_refusal_);
    return;
  }
  model_.undo_stack()->beginMacro(
      tr("Move link %1.%2 → %3.%4")
          .arg(q(picked->from_node), q(picked->from_port), q(target->node()->id()), q(target->spec().name)));
  model_.disconnect(*picked);
  link_ports(from, target, &screen_pos);
  model_.undo_stack()->endMacro();
}

void GraphScene::mouseMoveEvent(QGraphicsSceneMouseEvent* e) {
  if (drag_from_) {
    if (!drag_moved_) {
      const QPoint d = e->screenPos() - e->buttonDownScreenPos(Qt::LeftButton);
      if (d.manhattanLength() < QApplication::startDragDistance()) {
        e->accept();
        return;
      }
      drag_moved_ = true;
      drag_wire_->setVisible(true);
      if (picked_wire_) picked_wire_->setVisible(false);
    }
    const QPointF a = drag_from_->anchor();
    drag_wire_->setPath(drag_from_->is_output() ? WireItem::bezier(a, e->scenePos())
                                                : WireItem::bezier(e->scenePos(), a));
    e->accept();
    return;
  }
  QGraphicsScene::mouseMoveEvent(e);
}

void GraphScene::mouseReleaseEvent(QGraphicsSceneMouseEvent* e) {
  if (drag_from_) {
    // The port that started the drag grabbed the mouse; this release never reaches it.
    if (QGraphicsItem* g = mouseGrabberItem()) g->ungrabMouse();
    end_link_drag(e->scenePos(), e->screenPos());
    e->accept();
    return;
  }
  QGraphicsScene::mouseReleaseEvent(e);
  // One unlinked node dropped onto a wire goes into it (Blender's auto-offset insert).
  std::vector<std::string> moved;
  for (const auto& n : model_.workflow().nodes)
    if (NodeItem* item = node_item(n.id); item && (!n.pos || QPointF((*n.pos)[0], (*n.pos)[1]) != item->pos()))
      moved.push_back(n.id);
  if (moved.size() == 1 && model_.links_of(moved.front()).empty()) {
    model_.undo_stack()->beginMacro(tr("Move %1").arg(q(moved.front())));
    commit_moves();
    insert_on_wire(moved.front());
    model_.undo_stack()->endMacro();
    return;
  }
  commit_moves();
}

void GraphScene::commit_moves() {
  std::vector<std::pair<std::string, Pos>> moves;
  for (const auto& n : model_.workflow().nodes) {
    NodeItem* item = node_item(n.id);
    if (!item) continue;
    const Pos p{std::round(item->pos().x()), std::round(item->pos().y())};
    if (!n.pos || *n.pos != p) moves.emplace_back(n.id, p);
  }
  if (!moves.empty()) model_.move_nodes(moves);
}

void GraphScene::keyPressEvent(QKeyEvent* e) {
  if ((e->key() == Qt::Key_Delete || e->key() == Qt::Key_Backspace) && !focusItem()) {
    delete_selection();
    e->accept();
    return;
  }
  QGraphicsScene::keyPressEvent(e);
}

void GraphScene::delete_selection() {
  std::vector<Link> links;
  for (auto* w : wires_)
    if (w->isSelected()) {
      Link l;
      l.from_node = w->from()->node()->id();
      l.from_port = w->from()->spec().name;
      l.to_node = w->to()->node()->id();
      l.to_port = w->to()->spec().name;
      links.push_back(l);
    }
  const auto ids = selected_node_ids();
  if (links.empty() && ids.empty()) return;
  model_.undo_stack()->beginMacro(tr("Delete selection"));
  for (const auto& l : links) model_.disconnect(l);
  model_.remove_nodes(ids);
  model_.undo_stack()->endMacro();
}

void GraphScene::select_nodes(const std::vector<std::string>& ids) {
  clearSelection();
  for (const auto& id : ids)
    if (auto* n = node_item(id)) n->setSelected(true);
}

void GraphScene::on_selection_changed() {
  const auto sel = selectedItems();
  for (QGraphicsItem* it : sel)
    if (it->type() == NodeItem::Type) {
      Q_EMIT node_selected(q(static_cast<NodeItem*>(it)->id()));
      return;
    }
  for (QGraphicsItem* it : sel)
    if (it->type() == WireItem::Type) {
      auto* w = static_cast<WireItem*>(it);
      Q_EMIT wire_selected(q(w->from()->node()->id()), q(w->from()->spec().name), q(w->to()->node()->id()),
                           q(w->to()->spec().name));
      return;
    }
  Q_EMIT selection_cleared();
}

void GraphScene::set_node_state(const std::string& id, NodeState st, double progress, const QString& msg) {
  if (auto* n = node_item(id)) n->set_state(st, progress, msg);
}

void GraphScene::reset_states() {
  for (const auto& [id, n] : nodes_) n->set_state(NodeState::Idle, 0, {});
}

}  // namespace gemflow::studio
