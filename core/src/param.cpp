#include "gemflow/param.hpp"

#include <cctype>
#include <charconv>
#include <cmath>
#include <cstdlib>

#include <fmt/format.h>

#include "gemflow/device.hpp"

namespace gemflow {

const char* to_string(ParamKind k) noexcept {
  switch (k) {
    case ParamKind::Bool: return "bool";
    case ParamKind::Int: return "int";
    case ParamKind::Float: return "float";
    case ParamKind::String: return "string";
    case ParamKind::Choice: return "choice";
    case ParamKind::InputPath: return "input path";
    case ParamKind::OutputPath: return "output path";
    case ParamKind::Device: return "device";
  }
  return "?";
}

std::string format_param(const ParamValue& v) {
  struct {
    std::string operator()(bool b) const { return b ? "true" : "false"; }
    std::string operator()(std::int64_t i) const { return std::to_string(i); }
    std::string operator()(double d) const {
      // Shortest text that reads back to the same double, always with a '.' or exponent.
      std::string s = fmt::format("{}", d);
      if (std::isfinite(d) && s.find_first_of(".eE") == std::string::npos) s += ".0";
      return s;
    }
    std::string operator()(const std::string& s) const { return s; }
  } f;
  return std::visit(f, v);
}

namespace {
bool parse_int(const std::string& t, std::int64_t& out) {
  auto [p, ec] = std::from_chars(t.data(), t.data() + t.size(), out);
  return ec == std::errc() && p == t.data() + t.size() && !t.empty();
}
// ".json", ".json or .csv", ".pdb, .cif or .vtp"
std::string join_or(const std::vector<std::string>& v) {
  std::string s;
  for (std::size_t i = 0; i < v.size(); ++i) {
    if (i > 0) s += i + 1 == v.size() ? " or " : ", ";
    s += v[i];
  }
  return s;
}
bool parse_double(const std::string& t, double& out) {
  if (t.empty()) return false;
  char* end = nullptr;
  out = std::strtod(t.c_str(), &end);
  return end == t.c_str() + t.size() && std::isfinite(out);
}
}  // namespace

std::optional<bool> yaml_bool(std::string_view text) {
  static constexpr std::string_view kTrue[] = {"true", "True", "TRUE", "yes", "Yes", "YES", "on", "On", "ON", "y", "Y"};
  static constexpr std::string_view kFalse[] = {"false", "False", "FALSE", "no", "No", "NO",
                                                "off",   "Off",   "OFF",   "n",  "N"};
  for (auto w : kTrue)
    if (text == w) return true;
  for (auto w : kFalse)
    if (text == w) return false;
  return std::nullopt;
}

std::variant<ParamValue, std::string> ParamSpec::parse(const std::string& text) const {
  switch (kind) {
    case ParamKind::Bool:
      if (const auto b = yaml_bool(text)) return ParamValue{*b};
      return fmt::format("expected true or false (or yes/no, on/off), got '{}'", text);
    case ParamKind::Int: {
      std::int64_t i = 0;
      if (parse_int(text, i)) return ParamValue{i};
      {  // an integer, but beyond 64 bits: say so (QA: a seed ≥ 2^63 read as "expected an integer")
        const auto [p, ec] = std::from_chars(text.data(), text.data() + text.size(), i);
        if (ec == std::errc::result_out_of_range && p == text.data() + text.size())
          return fmt::format("{} is outside the range of a 64-bit integer [-2^63, 2^63 - 1]", text);
      }
      return fmt::format("expected an integer, got '{}'", text);
    }
    case ParamKind::Float: {
      double d = 0;
      if (parse_double(text, d)) return ParamValue{d};
      return fmt::format("expected a number, got '{}'", text);
    }
    case ParamKind::String:
    case ParamKind::Choice:
    case ParamKind::InputPath:
    case ParamKind::OutputPath:
    case ParamKind::Device: return ParamValue{text};
  }
  return std::string("unknown parameter kind");
}

std::optional<std::string> ParamSpec::check(const ParamValue& v) const {
  const std::string u = unit.empty() ? "" : " " + unit;
  auto range = [&](double x) -> std::optional<std::string> {
    if (min && x < *min) return fmt::format("{} is below the minimum {}{}", format_param(v), *min, u);
    if (max && x > *max) return fmt::format("{} is above the maximum {}{}", format_param(v), *max, u);
    return std::nullopt;
  };
  switch (kind) {
    case ParamKind::Bool:
      if (!std::holds_alternative<bool>(v)) return "expected true or false";
      return std::nullopt;
    case ParamKind::Int:
      if (!std::holds_alternative<std::int64_t>(v)) return "expected an integer";
      return range(static_cast<double>(std::get<std::int64_t>(v)));
    case ParamKind::Float:
      if (std::holds_alternative<std::int64_t>(v)) return range(static_cast<double>(std::get<std::int64_t>(v)));
      if (!std::holds_alternative<double>(v)) return "expected a number";
      if (!std::isfinite(std::get<double>(v))) return "expected a finite number";
      return range(std::get<double>(v));
    case ParamKind::Choice: {
      if (!std::holds_alternative<std::string>(v)) return "expected one of the choices";
      const auto& s = std::get<std::string>(v);
      for (const auto& c : choices)
        if (c == s) return std::nullopt;
      std::string all;
      for (const auto& c : choices) {
        if (!all.empty()) all += ", ";
        all += c;
      }
      return fmt::format("'{}' is not one of: {}", s, all);
    }
    case ParamKind::Device:
      if (!std::holds_alternative<std::string>(v) || !DeviceRequest::parse(std::get<std::string>(v)))
        return fmt::format("'{}' is not a device (auto, cpu, cuda, cuda:N)", format_param(v));
      return std::nullopt;
    case ParamKind::InputPath:
    case ParamKind::OutputPath:
      if (!std::holds_alternative<std::string>(v)) return "expected a path";
      if (required && std::get<std::string>(v).empty()) return "a path is required";
      if (!extensions.empty() && !std::get<std::string>(v).empty()) {
        std::string name = std::get<std::string>(v);
        if (name.back() == '/')
          return fmt::format("'{}' names a folder (it ends in '/'); this node {} a file: {}", name,
                             kind == ParamKind::InputPath ? "reads" : "writes", join_or(extensions));
        name = name.substr(name.find_last_of('/') + 1);
        std::string lower = name;
        for (char& c : lower) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
        for (const auto& e : extensions) {
          std::string le = e;
          for (char& c : le) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
          if (lower.size() > le.size() && lower.ends_with(le)) return std::nullopt;
        }
        const auto dot = name.find_last_of('.');
        return fmt::format("'{}' {}; this node {} {}", name,
                           dot == std::string::npos || dot == 0
                               ? std::string("has no file extension")
                               : fmt::format("has the extension '{}'", name.substr(dot)),
                           kind == ParamKind::InputPath ? "reads" : "writes", join_or(extensions));
      }
      return std::nullopt;
    case ParamKind::String:
      if (!std::holds_alternative<std::string>(v)) return "expected text";
      return std::nullopt;
  }
  return "unknown parameter kind";
}

std::optional<double> param_number(const ParamValue& v) {
  if (const auto* i = std::get_if<std::int64_t>(&v)) return static_cast<double>(*i);
  if (const auto* d = std::get_if<double>(&v)) return *d;
  return std::nullopt;
}

std::string rule_message(const ParamRule& rule, const ParamValue& value) {
  std::string m = rule.param + " = " + format_param(value) + (rule.must ? " needs '" : " cannot be used with '") +
                  rule.other + ": " + format_param(rule.other_value) + "'";
  if (!rule.why.empty()) m += " (" + rule.why + ")";
  return m;
}

std::string rule_message(const ParamRule& rule, const std::function<const ParamValue&(const std::string&)>& value_of) {
  if (rule.holds) {
    std::string m = fmt::format("{} = {}", rule.param, format_param(value_of(rule.param)));
    if (!rule.other.empty()) m += fmt::format(" does not fit {} = {}", rule.other, format_param(value_of(rule.other)));
    else m += " breaks a rule";
    if (!rule.why.empty()) m += " (" + rule.why + ")";
    return m;
  }
  if (rule.compare == ParamCompare::None) return rule_message(rule, value_of(rule.param));
  const char* op = rule.compare == ParamCompare::Less        ? "below"
                   : rule.compare == ParamCompare::LessEqual ? "at most"
                   : rule.compare == ParamCompare::Greater   ? "above"
                                                             : "at least";
  std::string m = fmt::format("{} = {} must be {} ", rule.param, format_param(value_of(rule.param)), op);
  m += rule.other.empty() ? format_param(rule.other_value)
                          : fmt::format("{} = {}", rule.other, format_param(value_of(rule.other)));
  if (!rule.if_param.empty()) m += fmt::format(" when {} is {}", rule.if_param, format_param(value_of(rule.if_param)));
  if (!rule.why.empty()) m += " (" + rule.why + ")";
  return m;
}

}  // namespace gemflow
