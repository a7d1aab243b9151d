// The graph file format, version 1 (docs/graph-format.md): parsing,
// validation with messages that name the place, and writing.
#include <algorithm>
#include <cmath>
#include <fstream>
#include <functional>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>

#include "eddy/core/error.h"
#include "eddy/graph/graph.h"

#include "eddy/graph/asset.h"
#include "eddy/graph/json.h"
#include "eddy/graph/util.h"

namespace eddy {

using json = nlohmann::json;

// ---------------------------------------------------------------------------
// Graph queries
// ---------------------------------------------------------------------------

const GraphNode* Graph::find(std::string_view id) const {
  for (const auto& n : nodes)
    if (n.id == id) return &n;
  return nullptr;
}
GraphNode* Graph::find(std::string_view id) {
  for (auto& n : nodes)
    if (n.id == id) return &n;
  return nullptr;
}
int Graph::index_of(std::string_view id) const {
  for (std::size_t i = 0; i < nodes.size(); ++i)
    if (nodes[i].id == id) return static_cast<int>(i);
  return -1;
}
std::vector<const Link*> Graph::links_into(std::string_view node, std::string_view socket) const {
  std::vector<const Link*> out;
  for (const auto& l : links)
    if (l.to_node == node && l.to_socket == socket) out.push_back(&l);
  return out;
}
std::vector<std::string> Graph::terminal_nodes() const {
  std::set<std::string, std::less<>> feeds;
  for (const auto& l : links) feeds.insert(l.from_node);
  std::vector<std::string> out;
  for (const auto& n : nodes)
    if (!feeds.count(n.id)) out.push_back(n.id);
  return out;
}
std::vector<std::string> Graph::topological_order() const {
  std::map<std::string, int, std::less<>> state;  // 0 new, 1 visiting, 2 done
  std::vector<std::string> order;
  std::function<void(const std::string&)> visit = [&](const std::string& id) {
    int& s = state[id];
    if (s == 2) return;
    if (s == 1) throw Error("links: the graph has a cycle through node '" + id + "'");
    s = 1;
    for (const auto& l : links)
      if (l.to_node == id) visit(l.from_node);
    state[id] = 2;
    order.push_back(id);
  };
  for (const auto& n : nodes) visit(n.id);
  return order;
}

// ---------------------------------------------------------------------------
// Parameter values
// ---------------------------------------------------------------------------

namespace {

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

// An animated value: an object in place of the value, or in place of a
// vec3's component.
bool is_animated_json(const ParamSpec& p, const json& j) {
  if (j.is_object()) return true;
  return p.type == ParamType::Vec3 && j.is_array() && j.size() == 3 &&
         std::any_of(j.begin(), j.end(), [](const json& c) { return c.is_object(); });
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

json channel_to_json(const Channel& c) {
  if (c.is_expression()) return {{"expr", c.expr()->text()}};
  json keys = json::array();
  for (const auto& k : c.key_list()) keys.push_back({k[0], k[1]});
  return {{"keys", keys}, {"interpolation", interpolation_name(c.interpolation())}};
}

// The time of a graph's start frame.
TimeVars start_time(const Graph& g) {
  return {double(g.frame_start), g.fps, double(g.frame_start), double(g.frame_end)};
}

// Sets parameter p of node n from JSON j, a value or an animated value
// (which also sets the value to the animation's at the start frame, t0).
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

std::string list_names(const std::vector<SocketSpec>& s) {
  std::string out;
  for (const auto& x : s) out += (out.empty() ? "" : ", ") + x.name;
  return out.empty() ? "none" : out;
}

// "node.socket" -> (node, socket)
std::pair<std::string, std::string> split_endpoint(const json& j, const std::string& where) {
  if (!j.is_string()) throw Error(where + ": expected \"node.socket\", got " + shown(j));
  const auto s = j.get<std::string>();
  const auto dot = s.rfind('.');
  if (dot == std::string::npos || dot == 0 || dot + 1 == s.size())
    throw Error(where + ": expected \"node.socket\", got \"" + s + "\"");
  return {s.substr(0, dot), s.substr(dot + 1)};
}

// "; did you mean \"x\"?" when a candidate is close to `word`, else "".
std::string suggestion(const std::string& word, const std::vector<std::string>& candidates) {
  const std::string near = closest_match(word, candidates);
  return near.empty() ? "" : "; did you mean \"" + near + "\"?";
}

std::vector<std::string> param_names(const NodeSpec& spec) {
  std::vector<std::string> names;
  for (const auto& p : spec.params) names.push_back(p.name);
  return names;
}

// The socket `name` of a node (outputs or inputs), or an error at `where`
// listing the ones it has.
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

}  // namespace

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

ParamValue parse_param_text(const ParamSpec& spec, const std::string& text, const std::string& where) {
  check_json_depth(text, where);
  if (!is_valid_utf8(text)) throw Error(where + ": the value is not valid UTF-8 text");
  json j;
  try {
    j = json::parse(text);
  } catch (const json::exception&) {
    // Bare text: a string, or "x,y,z" for a vector.
    if (spec.type == ParamType::Vec3 && std::count(text.begin(), text.end(), ',') == 2) {
      try {
        j = json::parse("[" + text + "]");
      } catch (const json::exception&) {
        j = text;
      }
    } else {
      j = text;
    }
  }
  if ((spec.type == ParamType::String || spec.type == ParamType::Path || spec.type == ParamType::Enum) &&
      !j.is_string())
    j = text;
  return param_from_json(spec, j, where);
}

// ---------------------------------------------------------------------------
// Validation
// ---------------------------------------------------------------------------

namespace {

// A frame of frame_range, checked where the file is read (before it becomes
// an int) and where a graph built in code is validated; `text` as written.
void check_frame(int64_t frame, const std::string& text) {
  if (frame < -kMaxFrame || frame > kMaxFrame)
    throw Error("frame_range: frame " + text + " is outside [-" + std::to_string(kMaxFrame) + ", " +
                std::to_string(kMaxFrame) + "]");
}

// A node's animated parameters: animatable, and finite and within range at
// every frame of the graph's range (at 100,001 frames spread over a longer
// one), so that nothing is cooked or written before a bad value shows.
// A stateful node that reads its parameters only when it starts would
// ignore an animation silently: refused, naming it.
void check_animations(const Graph& g, const GraphNode& n, const NodeSpec& spec, const std::string& w) {
  for (const auto& [name, a] : n.anims) {
    const std::string wp = w + ".params." + name;
    const ParamSpec* p = spec.find_param(name);
    if (!p) throw Error(wp + ": unknown parameter of " + n.type);
    if (!animatable(p->type)) throw Error(wp + ": a " + std::string(to_string(p->type)) + " parameter cannot be animated");
    if (spec.input_frame)
      throw Error(wp + ": " + n.type + "'s parameters choose the frame its inputs are cooked at; they cannot be "
                  "animated");
    if (spec.stateful && !spec.steps_animations)
      throw Error(wp + ": " + n.type + " reads its parameters once, when it starts; animated parameters are not "
                  "supported on it yet");
    const int64_t span = int64_t(g.frame_end) - g.frame_start, samples = std::min<int64_t>(span, 100000);
    for (std::size_t c = 0; c < 3; ++c) {
      if (!a.channels[c]) continue;
      if (c > 0 && p->type != ParamType::Vec3) throw Error(wp + ": a scalar parameter has one channel");
      const std::string wc = p->type == ParamType::Vec3 ? wp + "[" + std::to_string(c) + "]" : wp;
      for (int64_t k = 0; k <= samples; ++k) {
        TimeVars t = start_time(g);
        t.frame = double(g.frame_start + (samples ? span * k / samples : 0));
        animated_value(*p, *a.channels[c], t, wc);
      }
    }
  }
}

}  // namespace

void validate_graph(const Graph& g, const Registry& reg, const ValidateOptions& opt) {
  if (!(g.fps >= kMinFps && g.fps <= kMaxFps))
    throw Error("fps: expected a number in [" + num(kMinFps) + ", " + num(kMaxFps) + "], got " + num(g.fps));
  for (const int f : {g.frame_start, g.frame_end}) check_frame(f, std::to_string(f));
  if (g.frame_end < g.frame_start)
    throw Error("frame_range: end " + std::to_string(g.frame_end) + " is before start " +
                std::to_string(g.frame_start) + " (the range holds no frame)");
  std::map<std::string, std::size_t, std::less<>> index;
  std::vector<std::string> ids;
  for (std::size_t i = 0; i < g.nodes.size(); ++i) {
    const auto& n = g.nodes[i];
    const std::string w = node_where(g, i);
    if (!opt.expanded && !valid_node_id(n.id))
      throw Error("nodes[" + std::to_string(i) + "].id: expected a name of letters, digits, '_' or '-', got \"" +
                  n.id + "\"");
    if (auto it = index.find(n.id); it != index.end())
      throw Error("nodes[" + std::to_string(i) + "].id: duplicate node id \"" + n.id + "\" (first used by nodes[" +
                  std::to_string(it->second) + "])");
    index.emplace(n.id, i);
    ids.push_back(n.id);
    const NodeSpec* spec = reg.find(n.type);
    if (!spec) throw Error(unknown_type(reg, n.type, w));
    for (const auto& [name, value] : n.params) {
      const ParamSpec* p = spec->find_param(name);
      if (!p) throw Error(w + ".params." + name + ": unknown parameter of " + n.type + suggestion(name, param_names(*spec)));
      // Re-validate values set in code (the file path validated them already).
      param_from_json(*p, param_to_json(value), w + ".params." + name);
    }
    check_animations(g, n, *spec, w);
    for (const auto& p : spec->params)
      if (!n.params.count(p.name)) throw Error(w + ".params." + p.name + ": missing (internal: defaults not filled)");
  }
  std::map<std::pair<std::string, std::string>, std::size_t> filled;
  for (std::size_t k = 0; k < g.links.size(); ++k) {
    const auto& l = g.links[k];
    const std::string w = "links[" + std::to_string(k) + "]";
    auto node_of = [&](const std::string& id, const char* end) -> const GraphNode& {
      auto it = index.find(id);
      if (it == index.end()) throw Error(w + "." + end + ": no node \"" + id + "\"" + suggestion(id, ids));
      return g.nodes[it->second];
    };
    const GraphNode& a = node_of(l.from_node, "from");
    const GraphNode& b = node_of(l.to_node, "to");
    const NodeSpec* sa = reg.find(a.type);
    const NodeSpec* sb = reg.find(b.type);
    const SocketSpec* out = &socket_of(a, sa->outputs, l.from_socket, "output", w + ".from");
    const SocketSpec* in = &socket_of(b, sb->inputs, l.to_socket, "input", w + ".to");
    if (out->type != in->type)
      throw Error(w + ": cannot connect \"" + a.id + "." + out->name + "\" (" + out->type + ") to \"" + b.id + "." +
                  in->name + "\" (" + in->type + ")");
    auto key = std::make_pair(b.id, in->name);
    if (auto it = filled.find(key); it != filled.end() && !in->multi)
      throw Error(w + ".to: input \"" + b.id + "." + in->name + "\" already has a link (links[" +
                  std::to_string(it->second) + "]) and takes only one");
    filled.emplace(key, k);
  }
  for (std::size_t i = 0; i < g.nodes.size() && opt.required_inputs; ++i) {
    const NodeSpec* spec = reg.find(g.nodes[i].type);
    for (const auto& s : spec->inputs)
      if (!s.optional && !filled.count({g.nodes[i].id, s.name}))
        throw Error(node_where(g, i) + ": required input \"" + s.name + "\" (" + s.type + ") is not connected");
  }
  // Cycles: name the nodes on it.
  {
    std::map<std::string, int, std::less<>> state;
    std::vector<std::string> stack;
    std::function<void(const std::string&)> visit = [&](const std::string& id) {
      state[id] = 1;
      stack.push_back(id);
      for (const auto& l : g.links) {
        if (l.from_node != id) continue;
        const int s = state[l.to_node];
        if (s == 1) {
          std::string path;
          auto it = std::find(stack.begin(), stack.end(), l.to_node);
          for (; it != stack.end(); ++it) path += *it + " -> ";
          throw Error("links: the graph has a cycle: " + path + l.to_node);
        }
        if (s == 0) visit(l.to_node);
      }
      stack.pop_back();
      state[id] = 2;
    };
    for (const auto& n : g.nodes)
      if (state[n.id] == 0) visit(n.id);
  }
  // Asset nodes: their contents, as they will cook (the inner nodes' values,
  // animations and checks, with the asset node's promoted values set).
  if (!opt.expanded && std::any_of(g.nodes.begin(), g.nodes.end(),
                                   [&](const GraphNode& n) { return is_expanded_asset(n, reg); })) {
    ValidateOptions inner = opt;
    inner.expanded = true;
    validate_graph(expand_assets(g, reg), reg, inner);
  }
  // Node-specific checks (memory, path patterns) last: everything they read is valid.
  if (!opt.node_checks) return;
  const int first = opt.first <= opt.last ? opt.first : g.frame_start;
  const int last = opt.first <= opt.last ? opt.last : g.frame_end;
  for (std::size_t i = 0; i < g.nodes.size(); ++i) {
    const NodeSpec* spec = reg.find(g.nodes[i].type);
    if (spec->check) spec->check(g.nodes[i].params, CheckContext{first, last, node_where(g, i)});
  }
}

// ---------------------------------------------------------------------------
// Parsing
// ---------------------------------------------------------------------------

Graph parse_graph(const std::string& text, const Registry& reg, const std::string& source,
                  const ValidateOptions& options) {
  const json root = parse_json(text, source);
  auto where = [&](const std::string& w) { return source + ": " + w; };
  try {
    if (!root.is_object()) throw Error("expected a JSON object at the top level, got " + shown(root));
    static const std::set<std::string> top_keys = {"format", "version", "frame_range", "fps", "nodes", "links",
                                                   "comment", "python_modules"};
    for (const auto& [k, v] : root.items())
      if (!top_keys.count(k)) {
        std::vector<std::string> names(top_keys.begin(), top_keys.end());
        const std::string near = closest_match(k, names);
        throw Error(k + ": unknown key" + (near.empty() ? "" : "; did you mean \"" + near + "\"?"));
      }
    if (!root.contains("format") || root["format"] != kGraphFormat)
      throw Error(std::string("format: expected \"") + kGraphFormat + "\", got " +
                  (root.contains("format") ? shown(root["format"]) : "nothing") + " (is this an eddy graph?)");
    if (!root.contains("version") || !root["version"].is_number_integer())
      throw Error("version: expected the integer 1");
    const int version = root["version"].get<int>();
    if (version < 1 || version > kGraphVersion)
      throw Error("version: this eddy reads graph format versions 1 to " + std::to_string(kGraphVersion) +
                  ", the file is " + std::to_string(version) +
                  (version > kGraphVersion ? " (written by a newer eddy)" : ""));
    Graph g;
    g.source = source;
    if (!root.contains("frame_range")) throw Error("frame_range: missing; expected [start, end]");
    const json& fr = root["frame_range"];
    if (!fr.is_array() || fr.size() != 2 || !fr[0].is_number_integer() || !fr[1].is_number_integer())
      throw Error("frame_range: expected [start, end] as two integers, got " + shown(fr));
    for (const json& f : fr) check_frame(f.is_number_unsigned() && f.get<uint64_t>() > uint64_t(kMaxFrame)
                                             ? int64_t(kMaxFrame) + 1
                                             : f.get<int64_t>(),
                                         f.dump());
    g.frame_start = fr[0].get<int>();
    g.frame_end = fr[1].get<int>();
    if (root.contains("fps")) {
      if (!root["fps"].is_number()) throw Error("fps: expected a number, got " + shown(root["fps"]));
      g.fps = root["fps"].get<double>();
    }
    if (root.contains("python_modules")) {
      const json& pm = root["python_modules"];
      if (!pm.is_array()) throw Error("python_modules: expected an array of module names, got " + shown(pm));
      for (const json& m : pm) {
        if (!m.is_string() || m.get<std::string>().empty())
          throw Error("python_modules: expected module names (strings), got " + shown(m));
        g.python_modules.push_back(m.get<std::string>());
      }
    }
    const json nodes = root.value("nodes", json::array());
    if (!nodes.is_array()) throw Error("nodes: expected an array, got " + shown(nodes));
    for (std::size_t i = 0; i < nodes.size(); ++i) {
      const json& jn = nodes[i];
      const std::string w = "nodes[" + std::to_string(i) + "]";
      if (!jn.is_object()) throw Error(w + ": expected an object, got " + shown(jn));
      for (const auto& [k, v] : jn.items())
        if (k != "id" && k != "type" && k != "params" && k != "position" && k != "comment" && k != "bypass")
          throw Error(w + "." + k + ": unknown key (a node has id, type, params, position, bypass, comment)");
      if (!jn.contains("id") || !jn["id"].is_string()) throw Error(w + ".id: expected a string");
      if (!jn.contains("type") || !jn["type"].is_string()) throw Error(w + ".type: expected a string");
      GraphNode n;
      n.id = jn["id"].get<std::string>();
      n.type = jn["type"].get<std::string>();
      const std::string wn = w + " (\"" + n.id + "\")";
      if (jn.contains("position")) {
        const json& p = jn["position"];
        if (!p.is_array() || p.size() != 2 || !p[0].is_number() || !p[1].is_number())
          throw Error(wn + ".position: expected [x, y], got " + shown(p));
        n.position = {p[0].get<double>(), p[1].get<double>()};
      }
      if (jn.contains("bypass")) {
        if (!jn["bypass"].is_boolean()) throw Error(wn + ".bypass: expected true or false, got " + shown(jn["bypass"]));
        n.bypass = jn["bypass"].get<bool>();
      }
      const NodeSpec* spec = reg.find(n.type);
      if (!spec && !g.python_modules.empty()) {
        std::string mods;
        for (const auto& m : g.python_modules) mods += (mods.empty() ? "" : ", ") + m;
        throw Error(unknown_type(reg, n.type, wn) + " (the graph uses Python nodes from " + mods +
                    ": load it from Python with eddy.load, which imports them)");
      }
      if (!spec) throw Error(unknown_type(reg, n.type, wn));
      n.params = default_params(*spec);
      if (jn.contains("params")) {
        const json& jp = jn["params"];
        if (!jp.is_object()) throw Error(wn + ".params: expected an object, got " + shown(jp));
        for (const auto& [k, v] : jp.items()) {
          const ParamSpec* p = spec->find_param(k);
          if (!p) throw Error(wn + ".params." + k + ": unknown parameter of " + n.type + suggestion(k, param_names(*spec)));
          if (version < 2 && is_animated_json(*p, v))
            throw Error(wn + ".params." + k + ": animated values need \"version\": 2");
          assign_param(n, *p, v, wn + ".params." + k, start_time(g));
        }
      }
      g.nodes.push_back(std::move(n));
    }
    const json links = root.value("links", json::array());
    if (!links.is_array()) throw Error("links: expected an array, got " + shown(links));
    for (std::size_t k = 0; k < links.size(); ++k) {
      const json& jl = links[k];
      const std::string w = "links[" + std::to_string(k) + "]";
      if (!jl.is_object() || !jl.contains("from") || !jl.contains("to"))
        throw Error(w + ": expected {\"from\": \"node.output\", \"to\": \"node.input\"}, got " + shown(jl));
      Link l;
      std::tie(l.from_node, l.from_socket) = split_endpoint(jl["from"], w + ".from");
      std::tie(l.to_node, l.to_socket) = split_endpoint(jl["to"], w + ".to");
      g.links.push_back(std::move(l));
    }
    validate_graph(g, reg, options);
    return g;
  } catch (const Error& e) {
    throw Error(where(e.what()));
  }
}

Graph load_graph(const std::string& path, const Registry& reg, const ValidateOptions& options) {
  std::ifstream f(path, std::ios::binary);
  if (!f) throw Error(path + ": cannot open graph file (missing or unreadable)");
  std::stringstream ss;
  ss << f.rdbuf();
  return parse_graph(ss.str(), reg, path, options);
}

std::string graph_to_json(const Graph& g, const Registry& reg) {
  json root;
  root["format"] = kGraphFormat;
  bool animated = false;
  for (const auto& n : g.nodes) animated |= !n.anims.empty();
  root["version"] = animated ? 2 : 1;
  root["frame_range"] = {g.frame_start, g.frame_end};
  root["fps"] = g.fps;
  if (!g.python_modules.empty()) root["python_modules"] = g.python_modules;
  json nodes = json::array();
  for (const auto& n : g.nodes) {
    json jn;
    jn["id"] = n.id;
    jn["type"] = n.type;
    json params = json::object();
    for (const auto& [k, v] : n.params) {
      params[k] = param_to_json(v);
      if (const auto a = n.anims.find(k); a != n.anims.end()) {
        if (params[k].is_array())
          for (std::size_t c = 0; c < 3; ++c) {
            if (a->second.channels[c]) params[k][c] = channel_to_json(*a->second.channels[c]);
          }
        else
          params[k] = channel_to_json(*a->second.channels[0]);
      }
    }
    jn["params"] = params;
    jn["position"] = {n.position[0], n.position[1]};
    if (n.bypass) jn["bypass"] = true;
    nodes.push_back(jn);
  }
  root["nodes"] = nodes;
  json links = json::array();
  for (const auto& l : g.links)
    links.push_back({{"from", l.from_node + "." + l.from_socket}, {"to", l.to_node + "." + l.to_socket}});
  root["links"] = links;
  return root.dump(2) + "\n";
}

void save_graph(const Graph& g, const Registry& reg, const std::string& path) {
  validate_graph(g, reg);
  write_file_atomic(path, graph_to_json(g, reg));
}

void apply_override(Graph& g, const Registry& reg, const std::string& a) {
  // The place in messages: the argument, cut short when it is long.
  const std::string w = "--set " + (a.size() > 80 ? a.substr(0, 77) + "..." : a);
  const auto eq = a.find('=');
  const auto dot = a.substr(0, eq).rfind('.');
  if (eq == std::string::npos || dot == std::string::npos || dot == 0 || dot + 1 == eq)
    throw Error(w + ": expected NODE.PARAM=VALUE");
  set_param(g, reg, a.substr(0, dot), a.substr(dot + 1, eq - dot - 1), a.substr(eq + 1), w);
}

void set_param(Graph& g, const Registry& reg, const std::string& node, const std::string& param,
               const std::string& value, const std::string& w) {
  GraphNode* n = g.find(node);
  if (!n) {
    std::vector<std::string> ids;
    for (const auto& x : g.nodes) ids.push_back(x.id);
    throw Error(w + ": no node \"" + node + "\"" + suggestion(node, ids));
  }
  const NodeSpec* spec = reg.find(n->type);
  if (!spec) throw Error(w + ": unknown node type \"" + n->type + "\"");
  const ParamSpec* p = spec->find_param(param);
  if (!p)
    throw Error(w + ": " + n->type + " \"" + node + "\" has no parameter \"" + param + "\"" +
                suggestion(param, param_names(*spec)));
  // An animated value ({"expr": ...}, {"keys": ...}, or a vector holding one).
  if (value.find('{') != std::string::npos) {
    check_json_depth(value, w);
    if (!is_valid_utf8(value)) throw Error(w + ": the value is not valid UTF-8 text");
    json j;
    try {
      j = json::parse(value);
    } catch (const json::exception&) {
      j = nullptr;
    }
    if (!j.is_null() && is_animated_json(*p, j)) return assign_param(*n, *p, j, w, start_time(g));
  }
  n->anims.erase(param);
  n->params[param] = parse_param_text(*p, value, w);
}

}  // namespace eddy

namespace eddy {

namespace {

// What an asset's contents make it: stateful when a node inside (nested
// assets included) is, time dependent when one is, or its parameters make
// it so, or it is animated. The asset's own spec keeps both false: its
// nodes are checked and cooked in the expansion, never the asset node.
struct ContentFlags {
  bool stateful = false, time_dependent = false;
};
ContentFlags content_flags(const Registry& reg, const NodeSpec& s) {
  ContentFlags f{s.stateful, s.time_dependent};
  if (!s.asset) return f;
  for (const GraphNode& n : s.asset->graph.nodes) {
    const NodeSpec* inner = reg.find(n.type);
    if (!inner) continue;
    const ContentFlags g = content_flags(reg, *inner);
    f.stateful |= g.stateful;
    f.time_dependent |= g.time_dependent || !n.anims.empty() || (inner->frame_dependent && inner->frame_dependent(n.params));
  }
  return f;
}

}  // namespace

std::string catalog_json(const Registry& reg) {
  json out = json::array();
  for (const NodeSpec* s : reg.all()) {
    json js;
    js["type"] = s->type;
    js["category"] = s->category;
    js["doc"] = s->doc;
    const ContentFlags flags = content_flags(reg, *s);
    js["stateful"] = flags.stateful;
    js["time_dependent"] = flags.time_dependent;
    if (s->asset) js["asset"] = true;  // its contents: GET /api/asset?type=
    auto sockets = [](const std::vector<SocketSpec>& v) {
      json a = json::array();
      for (const auto& x : v)
        a.push_back({{"name", x.name}, {"type", x.type}, {"doc", x.doc}, {"optional", x.optional}, {"multi", x.multi}});
      return a;
    };
    js["inputs"] = sockets(s->inputs);
    js["outputs"] = sockets(s->outputs);
    json params = json::array();
    for (const auto& p : s->params) {
      json jp{{"name", p.name}, {"type", to_string(p.type)}, {"default", param_to_json(p.default_value)},
              {"unit", p.unit}, {"doc", p.doc}};
      if (p.min) jp["min"] = *p.min;
      if (p.max) jp["max"] = *p.max;
      if (!p.items.empty()) jp["items"] = p.items;
      params.push_back(jp);
    }
    js["params"] = params;
    out.push_back(js);
  }
  return out.dump(2) + "\n";
}

}  // namespace eddy
