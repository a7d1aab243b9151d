// Assets: collapsing a selection of a graph's nodes into a new asset
// (Houdini's "collapse into subnet", then "create digital asset"), for the
// editor and Python. Reading and expanding assets: asset.cpp.
#include "eddy/graph/asset.h"

#include <algorithm>
#include <filesystem>
#include <map>
#include <set>

#include <nlohmann/json.hpp>

#include "eddy/core/error.h"
#include "eddy/core/io.h"
#include "eddy/graph/json.h"
#include "eddy/graph/node.h"
#include "eddy/graph/util.h"
#include "graph_io_detail.h"

namespace eddy {

namespace fs = std::filesystem;
using json = nlohmann::json;
using graph_io::split_dotted;

namespace {

using Socket = std::pair<std::string, std::string>;  // (node, socket or parameter)

// What a selection's edges become: the asset's inputs, outputs and
// parameters (each a name and the inner socket or parameter), and the
// asset node's id.
struct Boundary {
  std::set<std::string> inside;
  std::vector<std::pair<std::string, Socket>> inputs, outputs, params;
  std::map<Socket, std::string> input_of, output_of;  // inner socket -> asset socket
  std::string id;
};

// Names for sockets: each its own name, or NODE_NAME where two share one
// (then _2, _3 ... should even those meet).
std::vector<std::pair<std::string, Socket>> named(const std::vector<Socket>& sockets) {
  std::map<std::string, int> count;
  for (const auto& s : sockets) ++count[s.second];
  std::vector<std::pair<std::string, Socket>> out;
  std::set<std::string> taken;
  for (const auto& s : sockets) {
    std::string name = count[s.second] > 1 ? s.first + "_" + s.second : s.second;
    for (int k = 2; !taken.insert(name).second; ++k) name = s.first + "_" + s.second + "_" + std::to_string(k);
    out.emplace_back(name, s);
  }
  return out;
}

// The nodes outside `inside` reached from it along links (downstream, or upstream).
std::set<std::string> reached(const Graph& g, const std::set<std::string>& inside, bool downstream) {
  std::set<std::string> seen;
  std::vector<std::string> todo(inside.begin(), inside.end());
  while (!todo.empty()) {
    const std::string n = todo.back();
    todo.pop_back();
    for (const auto& l : g.links) {
      const std::string& from = downstream ? l.from_node : l.to_node;
      const std::string& to = downstream ? l.to_node : l.from_node;
      if (from == n && !inside.count(to) && seen.insert(to).second) todo.push_back(to);
    }
  }
  return seen;
}

Boundary boundary_of(const Graph& g, const Registry& reg, const CollapseRequest& rq, bool registered) {
  const std::string w = "collapse into \"" + rq.type + "\"";
  if (!valid_node_id(rq.type)) throw Error("collapse: \"" + rq.type + "\" is not a node type name (letters, digits, '_' or '-')");
  const NodeSpec* existing = reg.find(rq.type);
  if (!registered && existing) throw Error(w + ": the node type exists already; choose another name");
  if (registered && (!existing || !existing->asset)) throw Error(w + ": no asset of that type is registered");
  if (rq.nodes.empty()) throw Error(w + ": no nodes are selected");
  Boundary b;
  for (const auto& id : rq.nodes) {
    if (!g.find(id)) throw Error(w + ": the graph has no node \"" + id + "\"");
    if (!b.inside.insert(id).second) throw Error(w + ": node \"" + id + "\" is selected twice");
  }
  // An outside node between two selected ones would feed the asset node and take from it.
  const std::set<std::string> down = reached(g, b.inside, true), up = reached(g, b.inside, false);
  for (const auto& n : down)
    if (up.count(n))
      throw Error(w + ": node \"" + n + "\" takes from the selection and feeds it; select it too, or fewer nodes");

  std::vector<Socket> in, out;
  std::set<Socket> linked_inside;
  for (const auto& l : g.links) {
    const bool from_in = b.inside.count(l.from_node) > 0, to_in = b.inside.count(l.to_node) > 0;
    const Socket to{l.to_node, l.to_socket}, from{l.from_node, l.from_socket};
    if (from_in && to_in) linked_inside.insert(to);
    if (!from_in && to_in && std::find(in.begin(), in.end(), to) == in.end()) in.push_back(to);
    if (from_in && !to_in && std::find(out.begin(), out.end(), from) == out.end()) out.push_back(from);
  }
  for (const auto& s : in)
    if (linked_inside.count(s))
      throw Error(w + ": input \"" + s.first + "." + s.second +
                  "\" takes links from inside and outside the selection; select its other sources too, or leave it out");
  if (out.empty()) {
    // Nothing outside takes from the selection: its last nodes' outputs.
    for (const auto& n : g.nodes) {
      if (!b.inside.count(n.id)) continue;
      const bool feeds_inside = std::any_of(g.links.begin(), g.links.end(), [&](const Link& l) {
        return l.from_node == n.id && b.inside.count(l.to_node);
      });
      if (feeds_inside) continue;
      if (const NodeSpec* s = reg.find(n.type))
        for (const auto& o : s->outputs) out.emplace_back(n.id, o.name);
    }
    if (out.empty()) throw Error(w + ": the selection has no output to give the asset");
  }
  b.inputs = named(in);
  b.outputs = named(out);
  for (const auto& [name, s] : b.inputs) b.input_of[s] = name;
  for (const auto& [name, s] : b.outputs) b.output_of[s] = name;

  std::vector<Socket> params;
  for (const auto& text : rq.promote) {
    const Socket p = split_dotted(text, w + ": promote", "node.parameter");
    const GraphNode* n = g.find(p.first);
    if (!n || !b.inside.count(p.first))
      throw Error(w + ": promote \"" + p.first + "." + p.second + "\": \"" + p.first + "\" is not a selected node");
    const NodeSpec* s = reg.find(n->type);
    if (!s || !s->find_param(p.second))
      throw Error(w + ": promote \"" + p.first + "." + p.second + "\": " + n->type + " has no parameter \"" +
                  p.second + "\"");
    if (std::find(params.begin(), params.end(), p) != params.end())
      throw Error(w + ": promote \"" + p.first + "." + p.second + "\" is asked twice");
    params.push_back(p);
  }
  b.params = named(params);

  // The asset node's id: asked for, or from the type's name, free among the nodes that stay.
  std::string base = rq.id.empty() ? snake_case(rq.type) : rq.id;
  if (!valid_node_id(base)) throw Error(w + ": \"" + base + "\" is not a node id (letters, digits, '_' or '-')");
  b.id = base;
  for (int k = 2; g.find(b.id) && !b.inside.count(b.id); ++k) {
    if (!rq.id.empty()) throw Error(w + ": the graph has a node \"" + rq.id + "\" already");
    b.id = base + "_" + std::to_string(k);
  }
  return b;
}

std::string dotted(const Socket& s) { return s.first + "." + s.second; }

}  // namespace

namespace {
// The asset file for a selection whose boundary is `b`.
json asset_file(const Graph& g, const Registry& reg, const CollapseRequest& rq, const Boundary& b) {
  Graph contents;
  contents.frame_start = g.frame_start;
  contents.frame_end = g.frame_end;
  contents.fps = g.fps;
  contents.python_modules = g.python_modules;
  for (const auto& n : g.nodes)
    if (b.inside.count(n.id)) contents.nodes.push_back(n);
  for (const auto& l : g.links)
    if (b.inside.count(l.from_node) && b.inside.count(l.to_node)) contents.links.push_back(l);
  // A promoted parameter's animation moves onto the asset node: inside it
  // holds its value at the start frame, the asset's default.
  for (const auto& [name, p] : b.params) contents.find(p.first)->anims.erase(p.second);

  json root = json::parse(graph_to_json(contents, reg));
  json a = json::object();
  a["type"] = rq.type;
  if (!rq.category.empty()) a["category"] = rq.category;
  if (!rq.doc.empty()) a["doc"] = rq.doc;
  a["inputs"] = json::array();
  for (const auto& [name, s] : b.inputs) a["inputs"].push_back({{"name", name}, {"to", {dotted(s)}}});
  a["outputs"] = json::array();
  for (const auto& [name, s] : b.outputs) a["outputs"].push_back({{"name", name}, {"from", dotted(s)}});
  a["params"] = json::array();
  for (const auto& [name, s] : b.params) a["params"].push_back({{"name", name}, {"drives", {dotted(s)}}});
  root["asset"] = a;
  return root;
}
}  // namespace

nlohmann::json asset_from_selection(const Graph& g, const Registry& reg, const CollapseRequest& rq) {
  return asset_file(g, reg, rq, boundary_of(g, reg, rq, false));
}

Graph collapse_selection(const Graph& g, const Registry& reg, const CollapseRequest& rq) {
  const Boundary b = boundary_of(g, reg, rq, true);
  const NodeSpec& spec = *reg.find(rq.type);
  GraphNode node;
  node.id = b.id;
  node.type = rq.type;
  for (const auto& p : spec.params) node.params[p.name] = p.default_value;
  for (const auto& [name, p] : b.params) {
    const GraphNode& inner = *g.find(p.first);
    if (!spec.find_param(name)) throw Error("collapse: the asset \"" + rq.type + "\" has no parameter \"" + name + "\"");
    node.params[name] = inner.params.at(p.second);
    if (const auto it = inner.anims.find(p.second); it != inner.anims.end()) node.anims[name] = it->second;
  }
  Graph out = g;
  out.nodes.clear();
  out.links.clear();
  double n = 0;
  for (const auto& gn : g.nodes) {
    if (!b.inside.count(gn.id)) {
      out.nodes.push_back(gn);
      continue;
    }
    if (n == 0) out.nodes.push_back(GraphNode{});  // the asset node takes the first selected node's place
    node.position[0] += gn.position[0];
    node.position[1] += gn.position[1];
    ++n;
  }
  node.position[0] /= n;
  node.position[1] /= n;
  for (auto& gn : out.nodes)
    if (gn.id.empty()) gn = node;
  for (const auto& l : g.links) {
    const bool from_in = b.inside.count(l.from_node) > 0, to_in = b.inside.count(l.to_node) > 0;
    if (from_in && to_in) continue;
    Link nl = l;
    if (to_in) nl.to_node = b.id, nl.to_socket = b.input_of.at({l.to_node, l.to_socket});
    if (from_in) nl.from_node = b.id, nl.from_socket = b.output_of.at({l.from_node, l.from_socket});
    out.links.push_back(nl);
  }
  validate_graph(out, reg, ValidateOptions{false});
  return out;
}

std::string collapse_into_file(Graph& g, Registry& reg, const CollapseRequest& rq, const std::string& path) {
  const Boundary b = boundary_of(g, reg, rq, false);  // the selection checked before anything is written
  const json file = asset_file(g, reg, rq, b);
  std::error_code ec;
  if (fs::exists(path, ec)) throw Error("collapse: '" + path + "' exists already; choose another file");
  if (fs::path(path).has_parent_path()) fs::create_directories(fs::path(path).parent_path());
  write_file_atomic(path, file.dump(2) + "\n");
  try {
    reg.load_asset(path);
    Graph collapsed = collapse_selection(g, reg, rq);
    g = std::move(collapsed);
  } catch (...) {
    fs::remove(path, ec);  // (a type once registered stays, unused)
    throw;
  }
  return b.id;
}

}  // namespace eddy
