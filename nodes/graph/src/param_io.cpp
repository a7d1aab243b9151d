// Parameter values in graph files (docs/graph-format.md): JSON to typed
// values with messages that name the place and the expected range,
// animated values (expressions and keyframes), and values back to JSON.
#include <algorithm>
#include <cmath>
#include <sstream>

#include "graph_io_detail.h"

#include "eddy/core/error.h"
#include "eddy/graph/json.h"
#include "eddy/graph/util.h"

namespace eddy {

using namespace graph_io;

namespace {

// "an integer >= 1", "a number in [0, 1] (m)"
std::string expectation(const ParamSpec& p, const char* what) {
  std::string s = what;
  if (p.min && p.max) s += " in [" + num(*p.min) + ", " + num(*p.max) + "]";
  else if (p.min) s += " >= " + num(*p.min);
  else if (p.max) s += " <= " + num(*p.max);
  if (!p.unit.empty()) s += " (" + p.unit + ")";
  return s;
}

bool in_range(const ParamSpec& p, double v) {
  return std::isfinite(v) && (!p.min || v >= *p.min) && (!p.max || v <= *p.max);
}

Channel channel_from_json(const json& j, const std::string& where) {
  const char* form = "{\"expr\": \"...\"} or {\"keys\": [[frame, value], ...], \"interpolation\": ...}";
  if (!j.is_object() || (j.contains("expr") == j.contains("keys")))
    throw Error(where + ": expected " + form + ", got " + shown(j));
  for (const auto& [k, v] : j.items())
    if (k != "expr" && k != "keys" && k != "interpolation")
      throw Error(where + "." + k + ": unknown key of an animated value (expr, keys, interpolation)");
  try {
    if (j.contains("expr")) {
      if (j.size() != 1) throw Error("an expression takes no interpolation");
      if (!j["expr"].is_string()) throw Error("expr: expected a string, got " + shown(j["expr"]));
      return Channel::expression(j["expr"].get<std::string>());
    }
    const json& jk = j["keys"];
    if (!jk.is_array()) throw Error("keys: expected [[frame, value], ...], got " + shown(jk));
    std::vector<std::array<double, 2>> keys;
    for (std::size_t k = 0; k < jk.size(); ++k) {
      const json& key = jk[k];
      if (!key.is_array() || key.size() != 2 || !key[0].is_number() || !key[1].is_number())
        throw Error("keys[" + std::to_string(k) + "]: expected [frame, value], got " + shown(key));
      keys.push_back({key[0].get<double>(), key[1].get<double>()});
    }
    Interpolation in = Interpolation::Linear;
    if (j.contains("interpolation")) {
      const json& ji = j["interpolation"];
      bool known = false;
      for (Interpolation i : {Interpolation::Linear, Interpolation::Smooth, Interpolation::Constant})
        if (ji.is_string() && ji.get<std::string>() == interpolation_name(i)) in = i, known = true;
      if (!known) throw Error("interpolation: expected linear, smooth or constant, got " + shown(ji));
    }
    return Channel::keys(std::move(keys), in);
  } catch (const Error& e) {
    throw Error(where + ": " + e.what());
  }
}

std::string list_names(const std::vector<SocketSpec>& s) {
  std::string out;
  for (const auto& x : s) out += (out.empty() ? "" : ", ") + x.name;
  return out.empty() ? "none" : out;
}

}  // namespace

namespace graph_io {

std::string shown(const json& j) {
  std::string s = json_text(j);
  if (s.size() > 40) s = s.substr(0, 37) + "...";
  return s;
}

std::string num(double d) {
  std::ostringstream s;
  s.precision(10);
  s << d;
  return s.str();
}

ParamValue param_from_json(const ParamSpec& p, const json& j, const std::string& where) {
  auto fail = [&](const std::string& expected) -> ParamValue {
    throw Error(where + ": expected " + expected + ", got " + shown(j));
  };
  switch (p.type) {
    case ParamType::Bool:
      if (!j.is_boolean()) return fail("true or false");
      return j.get<bool>();
    case ParamType::Int: {
      if (!j.is_number_integer()) {
        if (j.is_number_float() && std::floor(j.get<double>()) == j.get<double>() && std::isfinite(j.get<double>()))
          ; // 4.0 is an integer written as a float: accepted
        else
          return fail(expectation(p, "an integer"));
      }
      const double d = j.get<double>();
      if (!in_range(p, d)) return fail(expectation(p, "an integer"));
      return static_cast<int64_t>(std::llround(d));
    }
    case ParamType::Float: {
      if (!j.is_number()) return fail(expectation(p, "a number"));
      const double d = j.get<double>();
      if (!in_range(p, d)) return fail(expectation(p, "a number"));
      return d;
    }
    case ParamType::Vec3: {
      if (!j.is_array() || j.size() != 3 || !j[0].is_number() || !j[1].is_number() || !j[2].is_number())
        return fail(expectation(p, "a vector [x, y, z] of numbers"));
      Vec3Value v{j[0].get<double>(), j[1].get<double>(), j[2].get<double>()};
      for (double c : v)
        if (!in_range(p, c)) return fail(expectation(p, "a vector [x, y, z] with components"));
      return v;
    }
    case ParamType::String:
    case ParamType::Path:
      if (!j.is_string()) return fail("a string");
      return j.get<std::string>();
    case ParamType::Enum: {
      std::string items;
      for (const auto& it : p.items) items += (items.empty() ? "" : ", ") + it;
      if (!j.is_string()) return fail("one of " + items);
      const auto s = j.get<std::string>();
      if (std::find(p.items.begin(), p.items.end(), s) == p.items.end()) {
        const std::string near = closest_match(s, p.items);
        throw Error(where + ": expected one of " + items + ", got \"" + s + "\"" +
                    (near.empty() ? "" : "; did you mean \"" + near + "\"?"));
      }
      return s;
    }
  }
  return fail("?");
}

// ---- animated values (docs/graph-format.md, "Animated parameters")

bool animatable(ParamType t) {
  return t == ParamType::Bool || t == ParamType::Int || t == ParamType::Float || t == ParamType::Vec3;
}

bool is_animated_json(const ParamSpec& p, const json& j) {
  if (j.is_object()) return true;
  return p.type == ParamType::Vec3 && j.is_array() && j.size() == 3 &&
         std::any_of(j.begin(), j.end(), [](const json& c) { return c.is_object(); });
}

json channel_to_json(const Channel& c) {
  if (c.is_expression()) return {{"expr", c.expr()->text()}};
  json keys = json::array();
  for (const auto& k : c.key_list()) keys.push_back({k[0], k[1]});
  return {{"keys", keys}, {"interpolation", interpolation_name(c.interpolation())}};
}

TimeVars start_time(const Graph& g) {
  return {double(g.frame_start), g.fps, double(g.frame_start), double(g.frame_end)};
}

void assign_param(GraphNode& n, const ParamSpec& p, const json& j, const std::string& where, const TimeVars& t0) {
  n.anims.erase(p.name);
  if (!is_animated_json(p, j)) {
    n.params[p.name] = param_from_json(p, j, where);
    return;
  }
  if (!animatable(p.type))
    throw Error(where + ": a " + std::string(to_string(p.type)) +
                " parameter cannot be animated (float, int, bool and vec3 parameters can)");
  ParamAnimation a;
  if (p.type == ParamType::Vec3) {
    if (!j.is_array() || j.size() != 3)
      throw Error(where + ": expected [x, y, z] of numbers or animated values ({\"expr\": ...}, {\"keys\": ...}), got " +
                  shown(j));
    json at_start = json::array();
    for (std::size_t c = 0; c < 3; ++c) {
      const std::string wc = where + "[" + std::to_string(c) + "]";
      if (j[c].is_object()) {
        a.channels[c] = channel_from_json(j[c], wc);
        at_start.push_back(animated_value(p, *a.channels[c], t0, wc));
      } else {
        at_start.push_back(j[c]);
      }
    }
    n.params[p.name] = param_from_json(p, at_start, where);
  } else {
    a.channels[0] = channel_from_json(j, where);
    const double x = animated_value(p, *a.channels[0], t0, where);
    n.params[p.name] = p.type == ParamType::Bool  ? ParamValue(x != 0.0)
                       : p.type == ParamType::Int ? ParamValue(int64_t(x))
                                                  : ParamValue(x);
  }
  n.anims[p.name] = std::move(a);
}

json param_to_json(const ParamValue& v) {
  struct V {
    json operator()(bool b) const { return b; }
    json operator()(int64_t i) const { return i; }
    json operator()(double d) const { return d; }
    json operator()(const Vec3Value& a) const { return json::array({a[0], a[1], a[2]}); }
    json operator()(const std::string& s) const { return s; }
  };
  return std::visit(V{}, v);
}

std::string node_where(const Graph& g, std::size_t i) {
  return "nodes[" + std::to_string(i) + "] (\"" + g.nodes[i].id + "\")";
}

std::pair<std::string, std::string> split_dotted(const std::string& s, const std::string& where, const char* what) {
  const auto dot = s.rfind('.');
  if (dot == std::string::npos || dot == 0 || dot + 1 == s.size())
    throw Error(where + ": expected \"" + what + "\", got \"" + s + "\"");
  return {s.substr(0, dot), s.substr(dot + 1)};
}

std::pair<std::string, std::string> split_endpoint(const json& j, const std::string& where) {
  if (!j.is_string()) throw Error(where + ": expected \"node.socket\", got " + shown(j));
  return split_dotted(j.get<std::string>(), where);
}

std::string suggestion(const std::string& word, const std::vector<std::string>& candidates) {
  const std::string near = closest_match(word, candidates);
  return near.empty() ? "" : "; did you mean \"" + near + "\"?";
}

std::vector<std::string> param_names(const NodeSpec& spec) {
  std::vector<std::string> names;
  for (const auto& p : spec.params) names.push_back(p.name);
  return names;
}

const SocketSpec& socket_of(const GraphNode& n, const std::vector<SocketSpec>& sockets, const std::string& name,
                            const char* kind, const std::string& where) {
  std::vector<std::string> names;
  for (const auto& s : sockets) {
    if (s.name == name) return s;
    names.push_back(s.name);
  }
  throw Error(where + ": " + n.type + " \"" + n.id + "\" has no " + kind + " \"" + name + "\"" +
              suggestion(name, names) + " (" + kind + "s: " + list_names(sockets) + ")");
}

std::string unknown_type(const Registry& reg, const std::string& type, const std::string& where) {
  const std::string near = reg.closest(type);
  return where + ".type: unknown node type \"" + type + "\"" +
         (near.empty() ? "" : "; did you mean \"" + near + "\"?") + " (`eddy nodes` lists them)";
}

}  // namespace graph_io


bool valid_node_id(const std::string& id) {
  if (id.empty()) return false;
  for (char c : id)
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-')) return false;
  return true;
}

double animated_value(const ParamSpec& p, const Channel& c, const TimeVars& t, const std::string& where) {
  double v = c.eval(t);
  if (p.type == ParamType::Int) v = std::round(v);
  const std::string what = c.is_expression() ? "the expression \"" + c.expr()->text() + "\"" : "the keyframes";
  const std::string at = " at frame " + num(t.frame);
  if (!std::isfinite(v)) throw Error(where + ": " + what + " gives " + num(v) + at + ", expected a finite number");
  if (p.type != ParamType::Bool && !in_range(p, v))
    throw Error(where + ": " + what + " gives " + num(v) + at + ", expected " +
                expectation(p, p.type == ParamType::Int ? "an integer" : "a number"));
  return v;
}

namespace graph_io {

std::optional<json> parse_value_text(const std::string& text, const std::string& where) {
  check_json_depth(text, where);
  if (!is_valid_utf8(text)) throw Error(where + ": the value is not valid UTF-8 text");
  try {
    return json::parse(text);
  } catch (const json::exception&) {
    return std::nullopt;
  }
}

}  // namespace graph_io

ParamValue parse_param_text(const ParamSpec& spec, const std::string& text, const std::string& where) {
  json j;
  if (const auto parsed = parse_value_text(text, where)) {
    j = *parsed;
  } else if (spec.type == ParamType::Vec3 && std::count(text.begin(), text.end(), ',') == 2) {
    // Bare text: "x,y,z" for a vector, else a string.
    try {
      j = json::parse("[" + text + "]");
    } catch (const json::exception&) {
      j = text;
    }
  } else {
    j = text;
  }
  if ((spec.type == ParamType::String || spec.type == ParamType::Path || spec.type == ParamType::Enum) &&
      !j.is_string())
    j = text;
  return param_from_json(spec, j, where);
}

}  // namespace eddy
