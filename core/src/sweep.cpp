#include "gemflow/sweep.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <fstream>
#include <set>
#include <sstream>
#include <unordered_map>
#include <unordered_set>

#include <fmt/format.h>
#include <xxhash.h>
#include <nlohmann/json.hpp>

#include "gemflow/executor.hpp"
#include "gemflow/types.hpp"

namespace gemflow {

namespace fs = std::filesystem;
using ojson = nlohmann::ordered_json;

namespace {

std::string trim(std::string_view s) {
  const auto b = s.find_first_not_of(" \t\r\n");
  if (b == std::string_view::npos) return {};
  const auto e = s.find_last_not_of(" \t\r\n");
  return std::string(s.substr(b, e - b + 1));
}

bool parse_i64(const std::string& t, std::int64_t& out) {
  const auto [p, ec] = std::from_chars(t.data(), t.data() + t.size(), out);
  return !t.empty() && ec == std::errc() && p == t.data() + t.size();
}

bool parse_f64(const std::string& t, double& out) {
  if (t.empty()) return false;
  char* end = nullptr;
  out = std::strtod(t.c_str(), &end);
  return end == t.c_str() + t.size() && std::isfinite(out);
}

// 12 significant digits: 0.1 * 3 is 0.3 here, so that a range's values read as written.
double round12(double x) {
  if (x == 0.0) return 0.0;  // and -0.0
  const std::string s = fmt::format("{:.12g}", x);
  const double r = std::strtod(s.c_str(), nullptr);
  return r == 0.0 ? 0.0 : r;
}

std::string hex8(std::string_view s) {
  return fmt::format("{:08x}", static_cast<std::uint32_t>(XXH3_64bits(s.data(), s.size())));
}

bool numeric(const ParamSpec& spec) { return spec.kind == ParamKind::Int || spec.kind == ParamKind::Float; }

using Values = std::variant<std::vector<ParamValue>, std::string>;

// The value of a number for the spec's kind; Int needs an integer.
std::variant<ParamValue, std::string> number_value(const ParamSpec& spec, double x) {
  if (spec.kind == ParamKind::Float) return ParamValue{round12(x)};
  const double r = std::round(x);
  if (std::abs(x - r) > 1e-9 * std::max(1.0, std::abs(x)) || std::abs(r) > 9.0e15)
    return fmt::format("{} is not an integer (parameter '{}' is an Int)", format_param(round12(x)), spec.name);
  return ParamValue{static_cast<std::int64_t>(r)};
}

std::string too_many(std::string_view what, double count, std::size_t max_values) {
  return fmt::format("{} has {:.0f} values; a sweep may have at most {}", what, count, max_values);
}

// A..B
Values int_range(const std::string& text, std::size_t dots, const ParamSpec& spec, std::size_t max_values) {
  const std::string a = trim(text.substr(0, dots)), b = trim(text.substr(dots + 2));
  std::int64_t lo = 0, hi = 0;
  if (!parse_i64(a, lo) || !parse_i64(b, hi))
    return fmt::format(
        "'{}' is not a range of integers A..B (for other numbers use START:STOP:STEP or "
        "START:STOP#COUNT)",
        text);
  if (hi < lo)
    return fmt::format("empty range {}: the first is above the last (counting down: {}:{}:-1)", text, lo, hi);
  const double count = static_cast<double>(hi) - static_cast<double>(lo) + 1.0;
  if (count > static_cast<double>(max_values)) return too_many("range " + text, count, max_values);
  std::vector<ParamValue> out;
  out.reserve(static_cast<std::size_t>(count));
  for (std::int64_t k = lo;; ++k) {
    if (spec.kind == ParamKind::Float) out.emplace_back(static_cast<double>(k));
    else out.emplace_back(k);
    if (k == hi) break;
  }
  return out;
}

// A:B:S and A:B#N
Values step_range(const std::string& text, const ParamSpec& spec, std::size_t max_values) {
  const auto c1 = text.find(':');
  const auto hash = text.find('#', c1);
  const auto c2 = text.find(':', c1 + 1);
  std::string a = trim(text.substr(0, c1)), b, third;
  const bool by_count = hash != std::string::npos && (c2 == std::string::npos || hash < c2);
  if (by_count) {
    b = trim(text.substr(c1 + 1, hash - c1 - 1));
    third = trim(text.substr(hash + 1));
  } else if (c2 != std::string::npos) {
    b = trim(text.substr(c1 + 1, c2 - c1 - 1));
    third = trim(text.substr(c2 + 1));
  } else {
    return fmt::format("'{}' is not a range: START:STOP:STEP or START:STOP#COUNT", text);
  }
  double lo = 0, hi = 0;
  if (!parse_f64(a, lo) || !parse_f64(b, hi)) return fmt::format("'{}': START and STOP must be finite numbers", text);
  std::vector<double> xs;
  if (by_count) {
    std::int64_t n = 0;
    if (!parse_i64(third, n) || n < 0) return fmt::format("'{}': COUNT after '#' must be an integer >= 0", text);
    if (n == 0) return fmt::format("empty range {}: a count of 0 values", text);
    if (static_cast<double>(n) > static_cast<double>(max_values))
      return too_many("range " + text, static_cast<double>(n), max_values);
    for (std::int64_t k = 0; k < n; ++k)
      xs.push_back(n == 1 ? lo : lo + (hi - lo) * static_cast<double>(k) / static_cast<double>(n - 1));
  } else {
    double step = 0;
    if (!parse_f64(third, step)) return fmt::format("'{}': STEP must be a finite number", text);
    if (step == 0) return fmt::format("'{}': a STEP of 0 never reaches STOP", text);
    const double span = (hi - lo) / step;
    if (span < -1e-9) return fmt::format("empty range {}: a step of {} never goes from {} to {}", text, third, a, b);
    const double count = std::floor(span + 1e-9) + 1.0;
    if (count > static_cast<double>(max_values)) return too_many("range " + text, count, max_values);
    for (std::int64_t k = 0; k < static_cast<std::int64_t>(count); ++k)
      xs.push_back(lo + static_cast<double>(k) * step);
  }
  std::vector<ParamValue> out;
  out.reserve(xs.size());
  for (double x : xs) {
    auto v = number_value(spec, x);
    if (auto* why = std::get_if<std::string>(&v)) return fmt::format("'{}': {}", text, *why);
    out.push_back(std::get<ParamValue>(v));
  }
  return out;
}

// "a,b\,c" → {"a", "b,c"}
std::vector<std::string> split_list(std::string_view text) {
  std::vector<std::string> items(1);
  for (std::size_t k = 0; k < text.size(); ++k) {
    if (text[k] == '\\' && k + 1 < text.size() && text[k + 1] == ',') {
      items.back() += ',';
      ++k;
    } else if (text[k] == ',') {
      items.emplace_back();
    } else {
      items.back() += text[k];
    }
  }
  for (auto& s : items) s = trim(s);
  return items;
}

// One value as written: parsed for the spec's kind (not checked).
std::variant<ParamValue, std::string> one_value(const std::string& text, const ParamSpec& spec) {
  auto parsed = spec.parse(text);
  if (auto* why = std::get_if<std::string>(&parsed)) return fmt::format("'{}': {}", text, *why);
  ParamValue v = std::get<ParamValue>(parsed);
  if (spec.kind == ParamKind::Float && std::holds_alternative<std::int64_t>(v))
    v = static_cast<double>(std::get<std::int64_t>(v));
  return v;
}

// Checks every value against the spec and against the others (a value twice would make two
// points of one name).
std::optional<std::string> check_values(const std::vector<ParamValue>& values, const ParamSpec& spec,
                                        const std::string& origin) {
  std::set<std::string> seen;
  for (std::size_t k = 0; k < values.size(); ++k) {
    if (auto why = spec.check(values[k])) return origin.empty() ? *why : fmt::format("{}: {}", origin, *why);
    if (!seen.insert(format_param(values[k])).second)
      return fmt::format("{}value {} is given twice", origin.empty() ? "" : origin + ": ", format_param(values[k]));
  }
  return std::nullopt;
}

Values values_from_file(const fs::path& file, const ParamSpec& spec, std::size_t max_values) {
  std::ifstream in(file);
  if (!in) return fmt::format("cannot read the value file {}: {}", file.string(), std::strerror(errno));
  std::vector<ParamValue> out;
  std::set<std::string> seen;
  int line_no = 0;
  for (std::string line; std::getline(in, line);) {
    ++line_no;
    const std::string t = trim(line);
    if (t.empty() || t[0] == '#') continue;
    if (out.size() >= max_values) return fmt::format("{} has more than {} values", file.string(), max_values);
    auto v = one_value(t, spec);
    if (auto* why = std::get_if<std::string>(&v)) return fmt::format("{}:{}: {}", file.string(), line_no, *why);
    ParamValue value = std::get<ParamValue>(v);
    // a relative path in a list file is relative to the list file
    if (spec.kind == ParamKind::InputPath && !t.empty() && fs::path(t).is_relative())
      value = (file.parent_path() / t).lexically_normal().string();
    if (auto why = spec.check(value)) return fmt::format("{}:{}: {}", file.string(), line_no, *why);
    if (!seen.insert(format_param(value)).second)
      return fmt::format("{}:{}: value {} is given twice", file.string(), line_no, format_param(value));
    out.push_back(std::move(value));
  }
  if (in.bad()) return fmt::format("error reading the value file {}", file.string());
  if (out.empty()) return fmt::format("the value file {} has no values (one a line)", file.string());
  return out;
}

Diagnostic diag(const SourceLocation& where, std::string node, std::string param, std::string message,
                std::string hint = {}) {
  Diagnostic d;
  d.where = where;
  d.node = std::move(node);
  d.param = std::move(param);
  d.message = std::move(message);
  d.hint = std::move(hint);
  return d;
}

std::string hint_of(const std::string& name, const std::vector<std::string>& names) {
  const std::string near = nearest_name(name, names);
  return near.empty() ? std::string() : fmt::format("did you mean '{}'?", near);
}

// The node and parameter spec of "node.param" in wf, or the diagnostic.
std::variant<std::pair<const NodeInstance*, const ParamSpec*>, Diagnostic> find_target(const std::string& target,
                                                                                       const Workflow& wf,
                                                                                       const Registry& registry,
                                                                                       const SourceLocation& where) {
  const auto dot = target.find('.');
  if (dot == std::string::npos || dot == 0 || dot + 1 == target.size())
    return diag(where, "", "", fmt::format("'{}' is not node.param", target));
  const std::string node = target.substr(0, dot), name = target.substr(dot + 1);
  const NodeInstance* n = wf.find(node);
  if (!n) {
    std::vector<std::string> ids;
    for (const auto& x : wf.nodes) ids.push_back(x.id);
    return diag(where, node, "", "no such node in the workflow", hint_of(node, ids));
  }
  const NodeEntry* e = registry.find_node(n->type);
  if (!e) return diag(where, node, "", fmt::format("unknown node type '{}'", n->type));
  const ParamSpec* ps = e->spec.param(name);
  if (!ps) {
    std::vector<std::string> names;
    for (const auto& p : e->spec.params) names.push_back(p.name);
    return diag(where, node, name, fmt::format("'{}' has no parameter '{}'", n->type, name), hint_of(name, names));
  }
  return std::pair{n, ps};
}

}  // namespace

std::variant<std::vector<ParamValue>, std::string> parse_sweep_values(std::string_view text_in, const ParamSpec& spec,
                                                                      const fs::path& base_dir,
                                                                      std::size_t max_values) {
  const std::string text = trim(text_in);
  if (text.empty()) return std::string("no values (expected a,b,c, A..B, START:STOP:STEP, START:STOP#COUNT or @file)");
  if (text[0] == '@') {
    fs::path file = text.substr(1);
    if (file.empty()) return std::string("'@' needs a file name (@values.txt)");
    if (file.is_relative()) file = base_dir / file;
    return values_from_file(file.lexically_normal(), spec, max_values);
  }
  Values got;
  const bool has_comma = text.find(',') != std::string::npos;
  if (numeric(spec) && !has_comma && text.find("..") != std::string::npos) {
    got = int_range(text, text.find(".."), spec, max_values);
  } else if (numeric(spec) && !has_comma && text.find(':') != std::string::npos) {
    got = step_range(text, spec, max_values);
  } else {
    const auto items = split_list(text);
    if (items.size() > max_values) return too_many("the list", static_cast<double>(items.size()), max_values);
    std::vector<ParamValue> out;
    for (const auto& item : items) {
      if (item.empty()) return fmt::format("'{}' has an empty value", text);
      auto v = one_value(item, spec);
      if (auto* why = std::get_if<std::string>(&v)) return *why;
      out.push_back(std::get<ParamValue>(v));
    }
    got = std::move(out);
  }
  if (auto* why = std::get_if<std::string>(&got)) return *why;
  if (auto why = check_values(std::get<std::vector<ParamValue>>(got), spec, "")) return *why;
  return got;
}

std::variant<SweepAxis, Diagnostic> parse_sweep_arg(const std::string& assignment, const Workflow& wf,
                                                    const Registry& registry) {
  const SourceLocation where{"--sweep " + assignment, 0, 0};
  const auto eq = assignment.find('=');
  if (eq == std::string::npos) return diag(where, "", "", "expected node.param=VALUES");
  auto found = find_target(assignment.substr(0, eq), wf, registry, where);
  if (auto* d = std::get_if<Diagnostic>(&found)) return *d;
  const auto [node, spec] = std::get<0>(found);
  std::error_code ec;
  auto values = parse_sweep_values(assignment.substr(eq + 1), *spec, fs::current_path(ec));
  if (auto* why = std::get_if<std::string>(&values)) return diag(where, node->id, spec->name, *why);
  SweepAxis axis{node->id, spec->name, std::move(std::get<0>(values)), where};
  // a relative input path typed on the command line is relative to the current folder (as --set)
  if (spec->kind == ParamKind::InputPath)
    for (auto& v : axis.values)
      if (const auto& p = std::get<std::string>(v); !p.empty() && fs::path(p).is_relative())
        v = fs::absolute(p).lexically_normal().string();
  return axis;
}

std::vector<Diagnostic> sweep_axes_of(const Workflow& wf, const Registry& registry, std::vector<SweepAxis>& axes) {
  std::vector<Diagnostic> diags;
  for (const auto& e : wf.sweep.entries) {
    auto found = find_target(e.target, wf, registry, e.where);
    if (auto* d = std::get_if<Diagnostic>(&found)) {
      diags.push_back(std::move(*d));
      continue;
    }
    const auto [node, spec] = std::get<0>(found);
    std::variant<std::vector<ParamValue>, std::string> values;
    if (e.is_list) {
      std::vector<ParamValue> vs;
      std::string why;
      for (const auto& item : e.list) {
        auto v = one_value(item, *spec);
        if (auto* w = std::get_if<std::string>(&v)) {
          why = *w;
          break;
        }
        vs.push_back(std::get<ParamValue>(v));
      }
      if (why.empty() && vs.empty()) why = "an empty list of values";
      if (why.empty())
        if (auto w = check_values(vs, *spec, "")) why = *w;
      if (!why.empty()) values = why;
      else values = std::move(vs);
    } else {
      values = parse_sweep_values(e.text, *spec, wf.base_dir());
    }
    if (auto* why = std::get_if<std::string>(&values)) {
      diags.push_back(diag(e.where, node->id, spec->name, *why));
      continue;
    }
    axes.push_back({node->id, spec->name, std::move(std::get<0>(values)), e.where});
  }
  return diags;
}

std::variant<Sweep, Diagnostic> expand_sweep(std::vector<SweepAxis> axes, bool zip, bool force) {
  if (axes.empty()) return diag({}, "", "", "a sweep needs at least one parameter (--sweep node.param=VALUES)");
  std::set<std::string> targets;
  for (const auto& a : axes) {
    if (!targets.insert(a.target()).second)
      return diag(a.where, a.node, a.param, fmt::format("'{}' is swept twice", a.target()));
    if (a.values.empty()) return diag(a.where, a.node, a.param, "no values");
  }
  double count = 1;
  if (zip) {
    for (const auto& a : axes)
      if (a.values.size() != axes.front().values.size())
        return diag(a.where, a.node, a.param,
                    fmt::format("--zip pairs the k-th values, but '{}' has {} values and '{}' has {}",
                                axes.front().target(), axes.front().values.size(), a.target(), a.values.size()),
                    "give every swept parameter as many values, or drop --zip for every combination");
    count = static_cast<double>(axes.front().values.size());
  } else {
    for (const auto& a : axes) count *= static_cast<double>(a.values.size());
  }
  const SourceLocation at = axes.front().where;
  if (count > static_cast<double>(kSweepPointCeiling))
    return diag(at, "", "",
                fmt::format("the sweep has {:.0f} points; no sweep may have more than {}", count, kSweepPointCeiling));
  if (count > static_cast<double>(kSweepPointLimit) && !force)
    return diag(at, "", "",
                fmt::format("the sweep has {:.0f} points, more than the limit of {} (a typo in a range?)", count,
                            kSweepPointLimit),
                "run them anyway with --force");
  Sweep s;
  s.zip = zip;
  const auto n = static_cast<std::size_t>(count);
  s.points.reserve(n);
  std::vector<std::size_t> digit(axes.size(), 0);
  std::unordered_map<std::string, std::size_t> names;
  for (std::size_t i = 0; i < n; ++i) {
    SweepPoint p;
    p.index = i;
    p.values.reserve(axes.size());
    for (std::size_t k = 0; k < axes.size(); ++k) p.values.push_back(axes[k].values[zip ? i : digit[k]]);
    p.name = sweep_point_name(axes, p.values);
    if (const auto [it, fresh] = names.emplace(p.name, i); !fresh)
      return diag(at, "", "", fmt::format("points {} and {} would share the folder name '{}'", it->second, i, p.name));
    s.points.push_back(std::move(p));
    // the last axis varies fastest
    for (std::size_t k = axes.size(); !zip && k-- > 0;) {
      if (++digit[k] < axes[k].values.size()) break;
      digit[k] = 0;
    }
  }
  s.axes = std::move(axes);
  return s;
}

std::string sweep_point_name(const std::vector<SweepAxis>& axes, const std::vector<ParamValue>& values) {
  std::unordered_map<std::string, int> uses;
  for (const auto& a : axes) ++uses[a.param];
  std::string name;
  const auto safe = [](unsigned char c) {
    return std::isalnum(c) || c == '.' || c == '_' || c == '+' || c == '-' || c == '=';
  };
  for (std::size_t k = 0; k < axes.size() && k < values.size(); ++k) {
    const std::string full = format_param(values[k]);
    std::string text = full;
    bool changed = false;
    if (std::holds_alternative<std::string>(values[k]) && text.find('/') != std::string::npos) {
      // a path: its file name, and the hash of the whole path
      text = fs::path(text).filename().string();
      changed = true;
    }
    for (char& c : text)
      if (!safe(static_cast<unsigned char>(c))) {
        c = '_';
        changed = true;
      }
    if (text.empty() || text[0] == '.') {  // no hidden folders, no "." or ".."
      text = "_" + text;
      changed = true;
    }
    if (text.size() > 40) {
      text.resize(24);
      changed = true;
    }
    if (changed) {
      text += '~';
      text += hex8(full);
    }
    if (!name.empty()) name += "__";
    name += (uses[axes[k].param] > 1 ? axes[k].target() : axes[k].param) + "=" + text;
  }
  if (name.size() > 200) {
    const std::string whole = hex8(name);
    name.resize(190);
    name += "~" + whole;
  }
  return name;
}

void apply_sweep_point(Workflow& wf, const Sweep& sweep, const SweepPoint& point) {
  for (std::size_t k = 0; k < sweep.axes.size() && k < point.values.size(); ++k) {
    NodeInstance* n = wf.find(sweep.axes[k].node);
    if (!n) throw Error(fmt::format("sweep: no node '{}' in the workflow", sweep.axes[k].node));
    n->set_param(sweep.axes[k].param, point.values[k]);
    n->param_where[sweep.axes[k].param] = sweep.axes[k].where;
  }
  wf.sweep = {};
}

std::string sweep_workflow_hash(const Workflow& wf, std::string_view extra) {
  const std::string text = to_yaml(wf) + "\n" + std::string(extra);
  return fmt::format("{:016x}", static_cast<std::uint64_t>(XXH3_64bits(text.data(), text.size())));
}

std::vector<std::string> swept_nodes(const Workflow& wf, const std::vector<SweepAxis>& axes) {
  std::unordered_map<std::string, std::vector<std::string>> succ;
  for (const auto& l : wf.links) succ[l.from_node].push_back(l.to_node);
  std::unordered_set<std::string> seen;
  std::vector<std::string> stack;
  for (const auto& a : axes) stack.push_back(a.node);
  while (!stack.empty()) {
    std::string id = std::move(stack.back());
    stack.pop_back();
    if (!seen.insert(id).second) continue;
    if (auto it = succ.find(id); it != succ.end()) stack.insert(stack.end(), it->second.begin(), it->second.end());
  }
  std::vector<std::string> out;
  for (const auto& n : wf.nodes)
    if (seen.count(n.id)) out.push_back(n.id);
  return out;
}

// ---- Shards ----

std::string Shard::str() const { return fmt::format("{}/{}", index, count); }

std::optional<Shard> parse_shard(std::string_view text, std::string* why) {
  const auto slash = text.find('/');
  std::int64_t i = -1, n = 0;
  if (slash == std::string_view::npos || !parse_i64(std::string(text.substr(0, slash)), i) ||
      !parse_i64(std::string(text.substr(slash + 1)), n) || i < 0 || n < 1) {
    if (why) *why = fmt::format("'{}' is not a shard: expected I/N with 0 <= I < N (e.g. 0/4)", text);
    return std::nullopt;
  }
  if (i >= n) {
    if (why)
      *why =
          fmt::format("shard {} of {} does not exist: shards are numbered from 0 (0/{} to {}/{})", i, n, n, n - 1, n);
    return std::nullopt;
  }
  return Shard{static_cast<std::size_t>(i), static_cast<std::size_t>(n), "--shard"};
}

std::optional<Shard> shard_from_environment(std::string* why, const std::function<const char*(const char*)>& env_in) {
  const auto env = [&](const char* name) -> const char* {
    const char* v = env_in ? env_in(name) : std::getenv(name);
    return v && *v ? v : nullptr;
  };
  const auto number = [&](const char* name, std::int64_t& out) {
    const char* v = env(name);
    return v && parse_i64(trim(v), out);
  };
  const auto fail = [&](std::string text) -> std::optional<Shard> {
    if (why) *why = std::move(text);
    return std::nullopt;
  };
  if (env("SLURM_ARRAY_TASK_ID")) {
    std::int64_t id = 0, count = 0, min = 0, step = 1;
    if (!number("SLURM_ARRAY_TASK_ID", id)) return fail("SLURM_ARRAY_TASK_ID is not a number");
    if (!number("SLURM_ARRAY_TASK_COUNT", count) || count < 1)
      return fail("SLURM_ARRAY_TASK_ID is set but SLURM_ARRAY_TASK_COUNT is not (Slurm 17.11 or newer sets both)");
    if (env("SLURM_ARRAY_TASK_MIN") && !number("SLURM_ARRAY_TASK_MIN", min))
      return fail("SLURM_ARRAY_TASK_MIN is not a number");
    if (env("SLURM_ARRAY_TASK_STEP") && (!number("SLURM_ARRAY_TASK_STEP", step) || step < 1))
      return fail("SLURM_ARRAY_TASK_STEP is not a positive number");
    const std::int64_t index = (id - min) / step;
    if (id < min || (id - min) % step != 0 || index >= count)
      return fail(
          fmt::format("Slurm array task {} (first {}, step {}, {} tasks) is not one of an evenly spaced "
                      "array: submit the sweep as --array=0-{} (gemflow sweep submit does)",
                      id, min, step, count, count - 1));
    return Shard{static_cast<std::size_t>(index), static_cast<std::size_t>(count), "SLURM_ARRAY_TASK_ID"};
  }
  for (const auto& [rank_var, size_var] :
       {std::pair{"OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE"}, std::pair{"PMI_RANK", "PMI_SIZE"}}) {
    if (!env(rank_var)) continue;
    std::int64_t rank = 0, size = 0;
    if (!number(rank_var, rank) || !number(size_var, size) || size < 1 || rank < 0 || rank >= size)
      return fail(fmt::format("{}={} and {}={} make no shard (a rank from 0 to the size - 1)", rank_var, env(rank_var),
                              size_var, env(size_var) ? env(size_var) : "(unset)"));
    return Shard{static_cast<std::size_t>(rank), static_cast<std::size_t>(size), rank_var};
  }
  if (why) why->clear();
  return std::nullopt;
}

// ---- Records ----

const char* to_string(PointState s) noexcept {
  switch (s) {
    case PointState::Pending: return "pending";
    case PointState::Running: return "running";
    case PointState::Done: return "done";
    case PointState::Failed: return "failed";
    case PointState::Interrupted: return "interrupted";
    case PointState::Cancelled: return "cancelled";
  }
  return "?";
}

std::optional<PointState> point_state_from(std::string_view text) {
  for (auto s : {PointState::Pending, PointState::Running, PointState::Done, PointState::Failed,
                 PointState::Interrupted, PointState::Cancelled})
    if (text == to_string(s)) return s;
  return std::nullopt;
}

namespace {

ojson values_json(const std::vector<std::pair<std::string, std::string>>& values) {
  ojson v = ojson::object();
  for (const auto& [k, x] : values) v[k] = x;
  return v;
}

ojson record_json(const PointRecord& r) {
  ojson j;
  j["point"] = r.name;
  j["index"] = r.index;
  j["values"] = values_json(r.values);
  j["state"] = to_string(r.state);
  j["seconds"] = r.seconds;
  ojson nums = ojson::object();
  for (const auto& [k, x] : r.numbers) nums[k] = x;
  j["numbers"] = nums;
  if (!r.error.empty()) j["error"] = r.error;
  if (!r.host.empty()) j["host"] = r.host;
  if (!r.shard.empty()) j["shard"] = r.shard;
  if (!r.finished.empty()) j["finished"] = r.finished;
  if (!r.workflow_hash.empty()) j["workflow_xxh3"] = r.workflow_hash;
  return j;
}

std::optional<PointRecord> record_from(const nlohmann::json& j) {
  if (!j.is_object() || !j.contains("point") || !j["point"].is_string() || !j.contains("state")) return std::nullopt;
  PointRecord r;
  r.name = j["point"].get<std::string>();
  r.index = j.value("index", std::size_t{0});
  const auto st = point_state_from(j.value("state", ""));
  if (!st) return std::nullopt;
  r.state = *st;
  r.seconds = j.value("seconds", 0.0);
  r.error = j.value("error", "");
  r.host = j.value("host", "");
  r.shard = j.value("shard", "");
  r.finished = j.value("finished", "");
  r.workflow_hash = j.value("workflow_xxh3", "");
  if (j.contains("values") && j["values"].is_object())
    for (const auto& [k, v] : j["values"].items())
      r.values.emplace_back(k, v.is_string() ? v.get<std::string>() : v.dump());
  if (j.contains("numbers") && j["numbers"].is_object())
    for (const auto& [k, v] : j["numbers"].items())
      if (v.is_number()) r.numbers[k] = v.get<double>();
  return r;
}

std::string csv_field(const std::string& s) {
  if (s.find_first_of(",\"\n\r") == std::string::npos) return s;
  std::string r = "\"";
  for (char c : s) r += c == '"' ? std::string("\"\"") : std::string(1, c);
  return r + "\"";
}

std::vector<std::string> number_columns(const std::vector<PointRecord>& records) {
  std::set<std::string> cols;
  for (const auto& r : records)
    for (const auto& [k, x] : r.numbers) cols.insert(k);
  return {cols.begin(), cols.end()};
}

void flatten_numbers(const nlohmann::json& j, const std::string& prefix, std::map<std::string, double>& out) {
  if (j.is_number()) {
    const double x = j.get<double>();
    if (std::isfinite(x) && !prefix.empty()) out[prefix] = x;
  } else if (j.is_object()) {
    for (const auto& [k, v] : j.items()) flatten_numbers(v, prefix.empty() ? k : prefix + "." + k, out);
  }
}

}  // namespace

std::string point_record_json(const PointRecord& r) { return record_json(r).dump(2) + "\n"; }

std::optional<PointRecord> parse_point_record(const std::string& text) {
  try {
    return record_from(nlohmann::json::parse(text));
  } catch (const std::exception&) {
    return std::nullopt;
  }
}

std::string sweep_table_json(const std::vector<std::string>& axes, const std::vector<PointRecord>& records) {
  ojson j;
  j["axes"] = axes;
  std::vector<std::string> columns{"point", "state"};
  columns.insert(columns.end(), axes.begin(), axes.end());
  columns.push_back("seconds");
  for (const auto& c : number_columns(records)) columns.push_back(c);
  columns.push_back("error");
  j["columns"] = columns;
  std::map<std::string, std::size_t> counts;
  for (const auto& r : records) ++counts[to_string(r.state)];
  j["counts"] = counts;
  ojson points = ojson::array();
  for (const auto& r : records) points.push_back(record_json(r));
  j["points"] = std::move(points);
  return j.dump(2) + "\n";
}

std::string sweep_table_csv(const std::vector<std::string>& axes, const std::vector<PointRecord>& records) {
  const auto nums = number_columns(records);
  std::string s = "point,state";
  const auto field = [&](const std::string& text) {
    s += ',';
    s += csv_field(text);
  };
  for (const auto& a : axes) field(a);
  s += ",seconds";
  for (const auto& c : nums) field(c);
  s += ",error\n";
  for (const auto& r : records) {
    s += csv_field(r.name);
    field(to_string(r.state));
    for (const auto& a : axes) {
      std::string v;
      for (const auto& [k, x] : r.values)
        if (k == a) v = x;
      field(v);
    }
    s += fmt::format(",{:.3f}", r.seconds);
    for (const auto& c : nums) {
      const auto it = r.numbers.find(c);
      field(it == r.numbers.end() ? std::string() : fmt::format("{}", it->second));
    }
    field(r.error);
    s += '\n';
  }
  return s;
}

std::optional<std::vector<PointRecord>> parse_sweep_table(const std::string& text) {
  try {
    const auto j = nlohmann::json::parse(text);
    if (!j.is_object() || !j.contains("points") || !j["points"].is_array()) return std::nullopt;
    std::vector<PointRecord> out;
    for (const auto& p : j["points"]) {
      auto r = record_from(p);
      if (!r) return std::nullopt;
      out.push_back(std::move(*r));
    }
    return out;
  } catch (const std::exception&) {
    return std::nullopt;
  }
}

std::map<std::string, double> sweep_report_numbers(
    const std::map<std::string, std::map<std::string, Value>>& outputs_by_node, const std::vector<fs::path>& files) {
  std::map<std::string, double> out;
  const auto put = [&](const std::string& key, double x) {
    if (std::isfinite(x)) out[key] = x;
  };
  const auto cell_number = [](const Table::Cell& c) -> std::optional<double> {
    if (const auto* d = std::get_if<double>(&c)) return *d;
    if (const auto* i = std::get_if<std::int64_t>(&c)) return static_cast<double>(*i);
    return std::nullopt;
  };
  for (const auto& [node, outputs] : outputs_by_node)
    for (const auto& [port, v] : outputs) {
      if (v.empty()) continue;
      if (v.type() == DataType<MatrixF64>::name) {  // a scalar result: a 1×1 matrix
        const auto m = v.as<MatrixF64>();
        if (m->rows() == 1 && m->cols() == 1) put(node + "." + port, m->data()[0]);
        continue;
      }
      if (port != "report" || v.type() != DataType<Table>::name) continue;
      const auto t = v.as<Table>();
      const int km = t->column("metric"), kv = t->column("value");
      if (km >= 0 && kv >= 0) {
        for (const auto& row : t->rows) {
          const auto* name = std::get_if<std::string>(&row[static_cast<std::size_t>(km)]);
          const auto x = cell_number(row[static_cast<std::size_t>(kv)]);
          if (name && x) put(node + "." + *name, *x);
        }
      } else if (!t->rows.empty()) {
        for (std::size_t c = 0; c < t->columns.size() && c < t->rows.front().size(); ++c)
          if (const auto x = cell_number(t->rows.front()[c])) put(node + "." + t->columns[c], *x);
      }
    }
  std::vector<fs::path> reports;
  for (const auto& f : files) {
    const std::string name = f.filename().string();
    if (name.starts_with("report") && name.ends_with(".json")) reports.push_back(f);
  }
  for (const auto& f : reports) {
    std::ifstream in(f);
    if (!in) continue;
    nlohmann::json j;
    try {
      j = nlohmann::json::parse(in);
    } catch (const std::exception&) {
      continue;  // not JSON: not a report of numbers
    }
    // io.write_table's form: {"columns": [...], "rows": [{...}, ...]}: the first row
    if (j.is_object() && j.contains("columns") && j.contains("rows") && j["rows"].is_array()) {
      j = j["rows"].empty() ? nlohmann::json::object() : j["rows"][0];
    }
    std::map<std::string, double> nums;
    flatten_numbers(j, reports.size() > 1 ? f.stem().string() : std::string(), nums);
    // a number named as one of the table's own columns takes its file's name before it (a
    // report's "seconds" made sweep.csv's second `seconds` column, which hid the point's own)
    for (auto& [k, x] : nums)
      out[k == "point" || k == "state" || k == "seconds" || k == "error" ? f.stem().string() + "." + k : k] = x;
  }
  return out;
}

std::string sweep_plan_json(const fs::path& workflow, const Sweep& sweep) {
  ojson j;
  j["gemflow_sweep"] = 1;
  j["workflow"] = fs::absolute(workflow).lexically_normal().string();
  std::vector<std::string> axes;
  for (const auto& a : sweep.axes) axes.push_back(a.target());
  j["axes"] = axes;
  j["zip"] = sweep.zip;
  j["created"] = utc_now();
  ojson points = ojson::array();
  for (const auto& p : sweep.points) {
    ojson v = ojson::object();
    for (std::size_t k = 0; k < sweep.axes.size(); ++k) v[sweep.axes[k].target()] = format_param(p.values[k]);
    points.push_back({{"point", p.name}, {"values", std::move(v)}});
  }
  j["points"] = std::move(points);
  return j.dump(1) + "\n";
}

std::optional<SweepPlan> parse_sweep_plan(const std::string& text) {
  try {
    const auto j = nlohmann::ordered_json::parse(text);
    if (!j.is_object() || j.value("gemflow_sweep", 0) != 1 || !j.contains("points")) return std::nullopt;
    SweepPlan p;
    p.workflow = j.value("workflow", "");
    p.axes = j.value("axes", std::vector<std::string>{});
    p.zip = j.value("zip", false);
    for (const auto& pt : j["points"]) {
      std::vector<std::pair<std::string, std::string>> values;
      for (const auto& [k, v] : pt["values"].items()) values.emplace_back(k, v.get<std::string>());
      p.points.emplace_back(pt["point"].get<std::string>(), std::move(values));
    }
    return p;
  } catch (const std::exception&) {
    return std::nullopt;
  }
}

}  // namespace gemflow
