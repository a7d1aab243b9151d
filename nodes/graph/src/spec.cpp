#include "eddy/graph/spec.h"

#include <cmath>
#include <sstream>

#include "eddy/core/error.h"

namespace eddy {

const char* to_string(ParamType t) {
  switch (t) {
    case ParamType::Bool: return "bool";
    case ParamType::Int: return "int";
    case ParamType::Float: return "float";
    case ParamType::Vec3: return "vec3";
    case ParamType::String: return "string";
    case ParamType::Enum: return "enum";
    case ParamType::Path: return "path";
  }
  return "?";
}

namespace {
std::string num(double d) {
  std::ostringstream s;
  s.precision(10);
  s << d;
  return s.str();
}
}  // namespace

std::string to_display(const ParamValue& v) {
  struct V {
    std::string operator()(bool b) const { return b ? "true" : "false"; }
    std::string operator()(int64_t i) const { return std::to_string(i); }
    std::string operator()(double d) const { return num(d); }
    std::string operator()(const Vec3Value& a) const { return "[" + num(a[0]) + ", " + num(a[1]) + ", " + num(a[2]) + "]"; }
    std::string operator()(const std::string& s) const { return "\"" + s + "\""; }
  };
  return std::visit(V{}, v);
}

const ParamSpec* NodeSpec::find_param(std::string_view n) const {
  for (const auto& p : params)
    if (p.name == n) return &p;
  return nullptr;
}
const SocketSpec* NodeSpec::find_input(std::string_view n) const {
  for (const auto& s : inputs)
    if (s.name == n) return &s;
  return nullptr;
}
const SocketSpec* NodeSpec::find_output(std::string_view n) const {
  for (const auto& s : outputs)
    if (s.name == n) return &s;
  return nullptr;
}

NodeSpec& NodeSpec::describe(std::string c, std::string d) {
  category = std::move(c);
  doc = std::move(d);
  return *this;
}
NodeSpec& NodeSpec::input(std::string n, std::string t, std::string d, bool opt, bool multi) {
  inputs.push_back({std::move(n), std::move(t), std::move(d), opt, multi});
  return *this;
}
NodeSpec& NodeSpec::output(std::string n, std::string t, std::string d) {
  outputs.push_back({std::move(n), std::move(t), std::move(d), false, false});
  return *this;
}
NodeSpec& NodeSpec::param_bool(std::string n, bool def, std::string d) {
  params.push_back({std::move(n), ParamType::Bool, def, {}, {}, "", std::move(d), {}});
  return *this;
}
NodeSpec& NodeSpec::param_int(std::string n, int64_t def, std::optional<double> lo, std::optional<double> hi,
                              std::string unit, std::string d) {
  params.push_back({std::move(n), ParamType::Int, def, lo, hi, std::move(unit), std::move(d), {}});
  return *this;
}
NodeSpec& NodeSpec::param_float(std::string n, double def, std::optional<double> lo, std::optional<double> hi,
                                std::string unit, std::string d) {
  params.push_back({std::move(n), ParamType::Float, def, lo, hi, std::move(unit), std::move(d), {}});
  return *this;
}
NodeSpec& NodeSpec::param_vec3(std::string n, Vec3Value def, std::optional<double> lo, std::optional<double> hi,
                               std::string unit, std::string d) {
  params.push_back({std::move(n), ParamType::Vec3, def, lo, hi, std::move(unit), std::move(d), {}});
  return *this;
}
NodeSpec& NodeSpec::param_string(std::string n, std::string def, std::string d) {
  params.push_back({std::move(n), ParamType::String, std::move(def), {}, {}, "", std::move(d), {}});
  return *this;
}
NodeSpec& NodeSpec::param_path(std::string n, std::string def, std::string d) {
  params.push_back({std::move(n), ParamType::Path, std::move(def), {}, {}, "", std::move(d), {}});
  return *this;
}
NodeSpec& NodeSpec::param_enum(std::string n, std::vector<std::string> items, std::string def, std::string d) {
  params.push_back({std::move(n), ParamType::Enum, std::move(def), {}, {}, "", std::move(d), std::move(items)});
  return *this;
}

ParamSet default_params(const NodeSpec& spec) {
  ParamSet s;
  for (const auto& p : spec.params) s.emplace(p.name, p.default_value);
  return s;
}

}  // namespace eddy
