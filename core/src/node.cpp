#include "gemflow/node.hpp"

#include <algorithm>
#include <cstdint>
#include <ostream>

#include <fmt/format.h>

#include "gemflow/atomic_file.hpp"

namespace gemflow {

namespace {
template <class V>
const auto* find_named(const V& v, std::string_view name) {
  for (const auto& x : v)
    if (x.name == name) return &x;
  return static_cast<const typename V::value_type*>(nullptr);
}
}  // namespace

const PortSpec* NodeSpec::input(std::string_view name) const { return find_named(inputs, name); }
const PortSpec* NodeSpec::output(std::string_view name) const { return find_named(outputs, name); }
const ParamSpec* NodeSpec::param(std::string_view name) const { return find_named(params, name); }

namespace {
/// An integer given for a Float parameter (ParamSpec::check accepts it) as the double it means.
ParamValue as_kind(const ParamSpec& p, const ParamValue& v) {
  if (p.kind == ParamKind::Float)
    if (const auto* i = std::get_if<std::int64_t>(&v)) return static_cast<double>(*i);
  return v;
}
}  // namespace

namespace {
/// Whether a comparison rule (ParamRule::compare) holds for the values of value_of.
bool comparison_holds(const NodeSpec& spec, const ParamRule& rule,
                      const std::function<const ParamValue&(const std::string&)>& value_of) {
  if (!rule.if_param.empty()) {
    const ParamSpec* c = spec.param(rule.if_param);
    const ParamValue v = as_kind(*c, value_of(rule.if_param));
    if (std::none_of(rule.when.begin(), rule.when.end(), [&](const ParamValue& w) { return as_kind(*c, w) == v; }))
      return true;  // the condition does not apply
  }
  const auto a = param_number(value_of(rule.param));
  const auto b = param_number(rule.other.empty() ? rule.other_value : value_of(rule.other));
  if (!a || !b) return true;  // the registry refuses rules on non-numeric parameters
  if (rule.unless_below && *a < *rule.unless_below) return true;
  switch (rule.compare) {
    case ParamCompare::Less: return *a < *b;
    case ParamCompare::LessEqual: return *a <= *b;
    case ParamCompare::Greater: return *a > *b;
    case ParamCompare::GreaterEqual: return *a >= *b;
    case ParamCompare::None: break;
  }
  return true;
}
}  // namespace

std::vector<const ParamRule*> NodeSpec::broken_rules(
    const std::function<const ParamValue&(const std::string&)>& value_of) const {
  std::vector<const ParamRule*> r;
  for (const auto& rule : info.rules) {
    if (rule.holds) {
      if (!rule.holds(value_of)) r.push_back(&rule);
      continue;
    }
    if (rule.compare != ParamCompare::None) {
      if (!comparison_holds(*this, rule, value_of)) r.push_back(&rule);
      continue;
    }
    const ParamSpec* p = param(rule.param);
    const ParamSpec* o = param(rule.other);
    if (!p || !o) continue;  // the registry refuses such rules
    const ParamValue v = as_kind(*p, value_of(rule.param));
    const auto is = [&](const ParamValue& w) { return as_kind(*p, w) == v; };
    const bool applies =
        rule.when.empty() ? !is(p->default_value) : std::any_of(rule.when.begin(), rule.when.end(), is);
    if (applies && (as_kind(*o, value_of(rule.other)) == as_kind(*o, rule.other_value)) != rule.must)
      r.push_back(&rule);
  }
  return r;
}

void NodeContext::write_file(const std::filesystem::path& file, const std::function<void(std::ostream& out)>& write) {
  const std::filesystem::path shown = file.is_relative() ? output_dir() / file : file;  // as write_file resolves it
  write_file(file, [&](const std::filesystem::path& tmp) { write_stream_to(tmp, write, shown.lexically_normal()); });
}

std::vector<PortSpec> Node::input_specs() const {
  std::vector<PortSpec> r;
  for (const auto& s : inputs_) r.push_back(s.spec);
  return r;
}
std::vector<PortSpec> Node::output_specs() const {
  std::vector<PortSpec> r;
  for (const auto& s : outputs_) r.push_back(s.spec);
  return r;
}
std::vector<ParamSpec> Node::param_specs() const {
  std::vector<ParamSpec> r;
  for (const auto& s : params_) r.push_back(s.spec);
  return r;
}

void Node::set_input(std::string_view port, Value v) {
  for (auto& s : inputs_)
    if (s.spec.name == port) {
      if (!v.empty() && v.type() != s.spec.type)
        throw Error(fmt::format("input '{}' expects {}, got {}", port, s.spec.type, v.type()));
      s.value = std::move(v);
      return;
    }
  throw Error(fmt::format("no input port '{}'", port));
}

void Node::set_param(std::string_view name, ParamValue v) {
  for (auto& s : params_)
    if (s.spec.name == name) {
      // Float params accept integers; store them as double so value() has one path.
      if (s.spec.kind == ParamKind::Float && std::holds_alternative<std::int64_t>(v))
        v = static_cast<double>(std::get<std::int64_t>(v));
      // the kind, so that a test's set_param("iterations", 1.5) fails here, naming the parameter,
      // and not in execute() as a bad variant access (break-test). Not ParamSpec::check: tests set
      // values the spec refuses (an extension, a device name) to reach a node's own checks.
      const bool kind_ok = s.spec.kind == ParamKind::Bool    ? std::holds_alternative<bool>(v)
                           : s.spec.kind == ParamKind::Int   ? std::holds_alternative<std::int64_t>(v)
                           : s.spec.kind == ParamKind::Float ? std::holds_alternative<double>(v)
                                                             : std::holds_alternative<std::string>(v);
      if (!kind_ok)
        throw Error(
            fmt::format("parameter '{}' takes {} values, not {}", name, to_string(s.spec.kind), format_param(v)));
      s.value = std::move(v);
      return;
    }
  throw Error(fmt::format("no parameter '{}'", name));
}

const Value& Node::output(std::string_view port) const {
  for (const auto& s : outputs_)
    if (s.spec.name == port) return s.value;
  throw Error(fmt::format("no output port '{}'", port));
}

std::size_t Node::add_input(PortSpec s) {
  inputs_.push_back({std::move(s), {}});
  return inputs_.size() - 1;
}
std::size_t Node::add_output(PortSpec s) {
  outputs_.push_back({std::move(s), {}});
  return outputs_.size() - 1;
}
std::size_t Node::add_param(ParamSpec s) {
  ParamValue v = s.default_value;
  params_.push_back({std::move(s), std::move(v)});
  return params_.size() - 1;
}

PathParam::PathParam(Node* owner, std::string name, Mode mode, std::string doc, std::string default_value)
    : PathParam(owner, std::move(name), mode, std::move(doc), std::move(default_value), {}) {}

PathParam::PathParam(Node* owner, std::string name, Mode mode, std::string doc, std::string default_value,
                     std::vector<std::string> extensions)
    : owner_(owner) {
  ParamSpec s;
  s.name = std::move(name);
  s.kind = mode == Mode::Read ? ParamKind::InputPath : ParamKind::OutputPath;
  s.required = default_value.empty();
  s.default_value = std::move(default_value);
  s.doc = std::move(doc);
  s.extensions = std::move(extensions);
  slot_ = owner->add_param(std::move(s));
}

PathParam::PathParam(Node* owner, std::string name, Mode mode, std::string doc, PortUse use,
                     std::vector<std::string> extensions)
    : PathParam(owner, std::move(name), mode, std::move(doc), std::string(), std::move(extensions)) {
  owner_->params_[slot_].spec.required = use == PortUse::Required;
}

bool PathParam::given() const { return !std::get<std::string>(owner_->params_[slot_].value).empty(); }

void PathParam::inspect(ParamSpec::Inspector check) { owner_->params_[slot_].spec.inspect = std::move(check); }

std::filesystem::path PathParam::value() const { return std::get<std::string>(owner_->params_[slot_].value); }

DeviceParam::DeviceParam(Node* owner, std::string default_value) : owner_(owner) {
  ParamSpec s;
  s.name = "device";
  s.kind = ParamKind::Device;
  s.default_value = std::move(default_value);
  s.doc =
      "Where to run: auto (CUDA when a device is present, else CPU), cpu, cuda or cuda:N. "
      "cuda fails when no device is present.";
  slot_ = owner->add_param(std::move(s));
}

SeedParam::SeedParam(Node* owner, std::string doc, std::uint64_t default_value) : owner_(owner) {
  if (default_value > static_cast<std::uint64_t>(INT64_MAX))
    throw Error(fmt::format("seed default {} is above the largest seed {}", default_value, INT64_MAX));
  ParamSpec s;
  s.name = "seed";
  s.kind = ParamKind::Int;
  s.default_value = static_cast<std::int64_t>(default_value);
  s.min = 0;
  s.doc = std::move(doc);
  s.seed = true;
  slot_ = owner->add_param(std::move(s));
}

std::uint64_t SeedParam::value() const {
  const std::int64_t v = std::get<std::int64_t>(owner_->params_[slot_].value);
  // set_param does not check limits (tests reach a node's own checks through it)
  if (v < 0) throw Error(fmt::format("parameter 'seed': {} is below the minimum 0", v));
  return static_cast<std::uint64_t>(v);
}

std::string DeviceParam::requested() const { return std::get<std::string>(owner_->params_[slot_].value); }

Device DeviceParam::resolve(NodeContext& ctx) const {
  const std::string text = ctx.device_override().empty() ? requested() : ctx.device_override();
  auto req = DeviceRequest::parse(text);
  if (!req) throw Error(fmt::format("parameter 'device': '{}' is not a device (auto, cpu, cuda, cuda:N)", text));
  Device d;
  try {
    d = resolve_device(*req);
  } catch (const DeviceError& e) {  // name the parameter (and a --device override) in the message
    throw DeviceError(fmt::format("parameter 'device' = {}{}: {}", text,
                                  ctx.device_override().empty() ? "" : " (from --device)", e.what()));
  }
  if (req->kind == DeviceRequest::Kind::Auto) {
    ctx.info(d.is_cuda() ? fmt::format("device auto: using {} ({})", d.str(), cuda_device_name(d.index))
                         : std::string("device auto: no CUDA device, using cpu"));
  }
  ctx.record("device_used", d.str());
  return d;
}

}  // namespace gemflow
