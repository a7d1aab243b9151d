// Validation of a graph (docs/graph-format.md): the frame range and rate,
// node ids and types, parameters and their animations, links and their
// types, and cycles, each refused with a message that names the place.
#include <algorithm>
#include <functional>
#include <map>
#include <set>

#include "graph_io_detail.h"

#include "eddy/core/error.h"
#include "eddy/graph/asset.h"
#include "eddy/graph/util.h"

namespace eddy {

using namespace graph_io;

namespace graph_io {

void check_frame(int64_t frame, const std::string& text) {
  if (frame < -kMaxFrame || frame > kMaxFrame)
    throw Error("frame_range: frame " + text + " is outside [-" + std::to_string(kMaxFrame) + ", " +
                std::to_string(kMaxFrame) + "]");
}

}  // namespace graph_io

namespace {

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

}  // namespace eddy
