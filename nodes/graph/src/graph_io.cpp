// The graph file format (docs/graph-format.md): graph queries, parsing,
// writing, overrides and the node catalogue. Parameter values are read in
// param_io.cpp, graphs checked in graph_validate.cpp.
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
#include "graph_io_detail.h"

#include "eddy/graph/asset.h"
#include "eddy/graph/json.h"
#include "eddy/graph/util.h"

namespace eddy {

using namespace graph_io;

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
    const auto j = parse_value_text(value, w);
    if (j && is_animated_json(*p, *j)) return assign_param(*n, *p, *j, w, start_time(g));
  }
  n->anims.erase(param);
  n->params[param] = parse_param_text(*p, value, w);
}

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
