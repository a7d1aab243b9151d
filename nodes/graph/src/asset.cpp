// Assets: reading an asset file into a node type, expanding asset nodes into
// their contents for the cook engine, and the registry's asset files (load,
// reload, edit). Collapsing a selection into an asset: asset_collapse.cpp.
#include "eddy/graph/asset.h"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <set>
#include <sstream>

#include <nlohmann/json.hpp>

#include "eddy/core/error.h"
#include "eddy/graph/json.h"
#include "eddy/graph/node.h"
#include "eddy/graph/util.h"
#include "graph_io_detail.h"

namespace eddy {

namespace fs = std::filesystem;
using json = nlohmann::json;
using graph_io::split_endpoint;

namespace {

std::string text_of(const json& j, const char* key, const std::string& where, bool required) {
  if (!j.contains(key)) {
    if (required) throw Error(where + "." + key + ": missing");
    return {};
  }
  if (!j[key].is_string()) throw Error(where + "." + key + ": expected a string, got " + j[key].dump());
  return j[key].get<std::string>();
}

const json& array_of(const json& a, const char* key, const std::string& where) {
  static const json empty = json::array();
  if (!a.contains(key)) return empty;
  if (!a[key].is_array()) throw Error(where + "." + key + ": expected an array, got " + a[key].dump());
  return a[key];
}

// Calls f(entry, where) for each entry of the array a[key], each an object
// holding only the keys given.
template <class F>
void each_entry(const json& a, const char* key, const std::string& w, std::initializer_list<const char*> keys, F&& f) {
  const json& list = array_of(a, key, w);
  for (std::size_t i = 0; i < list.size(); ++i) {
    const std::string wi = w + "." + key + "[" + std::to_string(i) + "]";
    const json& j = list[i];
    if (!j.is_object()) throw Error(wi + ": expected an object, got " + j.dump());
    for (auto it = j.begin(); it != j.end(); ++it)
      if (std::none_of(keys.begin(), keys.end(), [&](const char* k) { return it.key() == k; }))
        throw Error(wi + "." + it.key() + ": unknown key");
    f(j, wi);
  }
}

// The inner node `id` of the asset's graph and its spec, or an error naming `where`.
std::pair<const GraphNode*, const NodeSpec*> inner(const Graph& g, const Registry& reg, const std::string& id,
                                                  const std::string& where) {
  const GraphNode* n = g.find(id);
  if (!n) throw Error(where + ": the asset has no node \"" + id + "\"");
  return {n, reg.find(n->type)};
}

std::shared_ptr<const Asset> read_asset(const Registry& reg, const std::string& path, json root, NodeSpec& spec) {
  // (root by value: the asset section is taken out before the rest is read as a graph)
  if (!root.is_object() || !root.contains("asset"))
    throw Error(path + ": no \"asset\" section (an asset is a graph file that declares one)");
  const json a = root["asset"];
  root.erase("asset");
  auto asset = std::make_shared<Asset>();
  asset->path = path;
  // The contents: a graph whose unlinked inputs the asset's inputs feed.
  ValidateOptions contents{false};
  contents.required_inputs = false;
  asset->graph = parse_graph(root.dump(), reg, path, contents);
  const Graph& g = asset->graph;

  const std::string w = path + ": asset";
  if (!a.is_object()) throw Error(w + ": expected an object, got " + a.dump());
  for (const auto& [k, v] : a.items())
    if (k != "type" && k != "category" && k != "doc" && k != "inputs" && k != "outputs" && k != "params")
      throw Error(w + "." + k + ": unknown key (an asset has type, category, doc, inputs, outputs, params)");
  spec.type = text_of(a, "type", w, true);
  spec.category = text_of(a, "category", w, false);
  if (spec.category.empty()) spec.category = "Assets";
  spec.doc = text_of(a, "doc", w, false);

  std::set<std::pair<std::string, std::string>> fed;
  each_entry(a, "inputs", w, {"name", "doc", "to", "optional"}, [&](const json& ji, const std::string& wi) {
    Asset::Input in{text_of(ji, "name", wi, true), {}};
    SocketSpec socket{in.name, "", text_of(ji, "doc", wi, false), true, true};
    const json& to = array_of(ji, "to", wi);
    if (to.empty()) throw Error(wi + ".to: expected the inner inputs it feeds, [\"node.input\", ...]");
    for (std::size_t k = 0; k < to.size(); ++k) {
      const std::string wk = wi + ".to[" + std::to_string(k) + "]";
      const auto [node, sock] = split_endpoint(to[k], wk);
      const auto [n, s] = inner(g, reg, node, wk);
      const SocketSpec* target = s->find_input(sock);
      if (!target) throw Error(wk + ": " + n->type + " \"" + node + "\" has no input \"" + sock + "\"");
      if (!g.links_into(node, sock).empty())
        throw Error(wk + ": \"" + node + "." + sock + "\" is linked inside the asset already");
      if (fed.count({node, sock}) && !target->multi)
        throw Error(wk + ": \"" + node + "." + sock + "\" is fed by another input already and takes only one");
      if (!socket.type.empty() && socket.type != target->type)
        throw Error(wk + ": \"" + node + "." + sock + "\" takes " + target->type + ", the input's other targets " +
                    socket.type);
      socket.type = target->type;
      socket.optional = socket.optional && target->optional;
      socket.multi = socket.multi && target->multi;  // many links only where every target takes many
      fed.insert({node, sock});
      in.to.emplace_back(node, sock);
    }
    if (ji.contains("optional")) {
      if (!ji["optional"].is_boolean()) throw Error(wi + ".optional: expected true or false");
      if (ji["optional"].get<bool>() && !socket.optional)
        throw Error(wi + ".optional: an inner input it feeds is required, so it cannot be optional");
      socket.optional = ji["optional"].get<bool>();
    }
    spec.inputs.push_back(socket);
    asset->inputs.push_back(std::move(in));
  });
  // Every required inner input is linked inside or fed by an input.
  for (const auto& n : g.nodes)
    for (const auto& s : reg.find(n.type)->inputs)
      if (!s.optional && g.links_into(n.id, s.name).empty() && !fed.count({n.id, s.name}))
        throw Error(w + ".inputs: nothing feeds the required input \"" + n.id + "." + s.name + "\" (" + s.type + ")");

  if (array_of(a, "outputs", w).empty()) throw Error(w + ".outputs: an asset has at least one output");
  each_entry(a, "outputs", w, {"name", "doc", "from"}, [&](const json& jo, const std::string& wi) {
    if (!jo.contains("from")) throw Error(wi + ".from: missing; expected \"node.output\"");
    const auto [node, sock] = split_endpoint(jo["from"], wi + ".from");
    const auto [n, s] = inner(g, reg, node, wi + ".from");
    const SocketSpec* source = s->find_output(sock);
    if (!source) throw Error(wi + ".from: " + n->type + " \"" + node + "\" has no output \"" + sock + "\"");
    Asset::Output out{text_of(jo, "name", wi, true), node, sock};
    spec.outputs.push_back(SocketSpec{out.name, source->type, text_of(jo, "doc", wi, false), false, false});
    asset->outputs.push_back(std::move(out));
  });

  each_entry(a, "params", w, {"name", "doc", "drives", "min", "max", "default"}, [&](const json& jp,
                                                                                     const std::string& wi) {
    Asset::Promoted pr{text_of(jp, "name", wi, true), {}};
    const json& drives = array_of(jp, "drives", wi);
    if (drives.empty()) throw Error(wi + ".drives: expected the inner parameters it sets, [\"node.param\", ...]");
    ParamSpec ps;
    for (std::size_t k = 0; k < drives.size(); ++k) {
      const std::string wk = wi + ".drives[" + std::to_string(k) + "]";
      const auto [node, param] = split_endpoint(drives[k], wk);
      const auto [n, s] = inner(g, reg, node, wk);
      const ParamSpec* p = s->find_param(param);
      if (!p) throw Error(wk + ": " + n->type + " \"" + node + "\" has no parameter \"" + param + "\"");
      if (n->anims.count(param))
        throw Error(wk + ": \"" + node + "." + param + "\" is animated in the asset; a promoted parameter replaces "
                    "it (animate the asset node's parameter instead)");
      for (const auto& other : asset->params)
        for (const auto& d : other.drives)
          if (d == std::make_pair(node, param))
            throw Error(wk + ": \"" + node + "." + param + "\" is driven by \"" + other.name + "\" already");
      if (k == 0) {
        ps = *p;
        ps.default_value = n->params.at(param);  // the asset's own setting
      } else if (p->type != ps.type || p->items != ps.items) {
        throw Error(wk + ": \"" + node + "." + param + "\" is a " + to_string(p->type) + ", the first it drives a " +
                    to_string(ps.type));
      } else {
        // The range every driven parameter accepts.
        if (p->min) ps.min = ps.min ? std::max(*ps.min, *p->min) : *p->min;
        if (p->max) ps.max = ps.max ? std::min(*ps.max, *p->max) : *p->max;
      }
      pr.drives.emplace_back(node, param);
    }
    ps.name = pr.name;
    if (jp.contains("doc")) ps.doc = text_of(jp, "doc", wi, false);
    // A narrower range may be given, never a wider one than the driven parameters take.
    for (const char* key : {"min", "max"}) {
      if (!jp.contains(key)) continue;
      if (!jp[key].is_number()) throw Error(wi + "." + key + ": expected a number, got " + jp[key].dump());
      const double v = jp[key].get<double>();
      std::optional<double>& bound = key[1] == 'i' ? ps.min : ps.max;
      const bool wider = bound && (key[1] == 'i' ? v < *bound : v > *bound);
      if (wider) throw Error(wi + "." + key + ": " + jp[key].dump() + " is outside what the driven parameters take");
      bound = v;
    }
    if (ps.min && ps.max && *ps.min > *ps.max) throw Error(wi + ": min is above max");
    if (jp.contains("default")) ps.default_value = parse_param_text(ps, jp["default"].dump(), wi + ".default");
    spec.params.push_back(std::move(ps));
    asset->params.push_back(std::move(pr));
  });
  return asset;
}

// The asset of a node when the expansion replaces it, else null.
const Asset* expanded(const GraphNode* n, const Registry& reg) {
  if (!n || n->bypass) return nullptr;
  const NodeSpec* s = reg.find(n->type);
  return s ? s->asset.get() : nullptr;
}
const Asset* expanded(const Graph& g, const Registry& reg, const std::string& node) {
  return expanded(g.find(node), reg);
}

// The inner inputs an asset node's input feeds, in the expanded graph.
void expanded_inputs(const Graph& g, const Registry& reg, const std::string& prefix, const std::string& node,
                     const std::string& socket, std::vector<std::pair<std::string, std::string>>& out) {
  const Asset* a = expanded(g, reg, node);
  if (!a) {
    out.emplace_back(prefix + node, socket);
    return;
  }
  for (const auto& in : a->inputs)
    if (in.name == socket)
      for (const auto& [n, s] : in.to) expanded_inputs(a->graph, reg, prefix + node + "/", n, s, out);
}

std::pair<std::string, std::string> expanded_output_at(const Graph& g, const Registry& reg, const std::string& prefix,
                                                       const std::string& node, const std::string& socket) {
  const Asset* a = expanded(g, reg, node);
  if (!a) return {prefix + node, socket};
  for (const auto& o : a->outputs)
    if (o.name == socket) return expanded_output_at(a->graph, reg, prefix + node + "/", o.node, o.socket);
  throw Error("asset node '" + prefix + node + "' has no output '" + socket + "'");
}

void expand_into(const Graph& g, const Registry& reg, const std::string& prefix, Graph& out) {
  for (const auto& n : g.nodes) {
    const Asset* a = expanded(&n, reg);
    if (!a) {
      GraphNode copy = n;
      copy.id = prefix + n.id;
      out.nodes.push_back(std::move(copy));
      continue;
    }
    // The contents with the node's promoted parameters (and animations) set.
    Graph contents = a->graph;
    for (const auto& pr : a->params)
      for (const auto& [node, param] : pr.drives) {
        GraphNode* target = contents.find(node);
        target->params[param] = n.params.at(pr.name);
        if (const auto it = n.anims.find(pr.name); it != n.anims.end()) target->anims[param] = it->second;
        else target->anims.erase(param);
      }
    expand_into(contents, reg, prefix + n.id + "/", out);
  }
  for (const auto& l : g.links) {
    const auto [from_node, from_socket] = expanded_output_at(g, reg, prefix, l.from_node, l.from_socket);
    std::vector<std::pair<std::string, std::string>> targets;
    expanded_inputs(g, reg, prefix, l.to_node, l.to_socket, targets);
    for (const auto& [to_node, to_socket] : targets) out.links.push_back(Link{from_node, from_socket, to_node, to_socket});
  }
}

}  // namespace

Graph expand_assets(const Graph& g, const Registry& reg) {
  bool any = false;
  for (const auto& n : g.nodes) any = any || expanded(&n, reg);
  if (!any) return g;
  // Everything of g's but its nodes and links, which expand_into fills.
  Graph out = g;
  out.nodes.clear();
  out.links.clear();
  expand_into(g, reg, "", out);
  return out;
}

std::pair<std::string, std::string> expanded_output(const Graph& g, const Registry& reg, const std::string& node,
                                                    const std::string& socket) {
  return expanded_output_at(g, reg, "", node, socket);
}

bool is_expanded_asset(const GraphNode& node, const Registry& reg) { return expanded(&node, reg) != nullptr; }

// ---------------------------------------------------------------------------
// Registry: asset files
// ---------------------------------------------------------------------------

namespace {
json read_json_file(const std::string& path, const char* what) {
  std::ifstream f(path, std::ios::binary);
  if (!f) throw Error(path + ": cannot open " + what + " (missing or unreadable)");
  std::stringstream ss;
  ss << f.rdbuf();
  return parse_json(ss.str(), path);
}
// Whether graph g uses node type `type`, itself or inside the assets it uses.
bool uses_type(const Graph& g, const Registry& reg, const std::string& type) {
  for (const auto& n : g.nodes) {
    if (n.type == type) return true;
    const NodeSpec* s = reg.find(n.type);
    if (s && s->asset && uses_type(s->asset->graph, reg, type)) return true;
  }
  return false;
}
// An asset file's new definition of a type loaded already: read as
// read_asset does, and refused when its contents would use the type itself.
std::shared_ptr<const Asset> read_replacement(const Registry& reg, const std::string& path, const json& root,
                                              NodeSpec& spec) {
  auto asset = read_asset(reg, path, root, spec);
  if (uses_type(asset->graph, reg, spec.type))
    throw Error(path + ": the asset's contents use \"" + spec.type + "\" itself, which would never end expanding");
  return asset;
}
std::string canonical(const std::string& path) {
  std::error_code ec;
  return fs::weakly_canonical(fs::path(path), ec).string();
}
}  // namespace

void Registry::load_asset(const std::string& path) {
  if (std::find(assets_.begin(), assets_.end(), canonical(path)) != assets_.end()) return;
  register_asset(path, read_json_file(path, "asset file"));
}

void Registry::register_asset(const std::string& path, const nlohmann::json& root, bool replacing) {
  const std::string key = canonical(path);
  if (!replacing && std::find(assets_.begin(), assets_.end(), key) != assets_.end()) return;
  NodeSpec spec;
  auto asset = replacing ? read_replacement(*this, path, root, spec) : read_asset(*this, path, root, spec);
  const NodeSpec* existing = find(spec.type);
  // The first definition of an asset type loaded wins (the graph's own
  // folder is read before EDDY_ASSET_PATH), as Houdini prefers one
  // definition of a digital asset.
  if (!replacing && existing && existing->asset) {
    assets_.push_back(key);
    return;
  }
  spec.asset = asset;
  const std::string type = spec.type;
  spec.factory = [type]() -> std::unique_ptr<Node> {
    throw Error("asset node type '" + type + "' is expanded into its contents, never cooked itself");
  };
  if (replacing) {
    swap_in(std::move(spec));
    return;
  }
  const std::string before = loading_;
  loading_ = "asset " + path;
  try {
    add(std::move(spec));
  } catch (const Error& e) {
    loading_ = before;
    throw Error(path + ": asset: " + e.what());
  }
  loading_ = before;
  assets_.push_back(key);
}

namespace {
// Asset type `type`'s file (its path in `path`), read again; refused when
// the type is not an asset or the file no longer declares it.
json declaring_file(const Registry& reg, const std::string& type, std::string& path) {
  const NodeSpec* spec = reg.find(type);
  if (!spec || !spec->asset) throw Error("\"" + type + "\" is not an asset node type");
  path = spec->asset->path;
  json root = read_json_file(path, "asset file");
  const json* declared = root.is_object() && root.contains("asset") && root["asset"].is_object() &&
                                 root["asset"].contains("type")
                             ? &root["asset"]["type"]
                             : nullptr;
  if (!declared || !declared->is_string() || declared->get<std::string>() != type)
    throw Error(path + ": asset.type: the file no longer declares \"" + type + "\" (" +
                (declared ? declared->dump() : std::string("none")) +
                "); a renamed asset is a new node type: load it as one");
  return root;
}
}  // namespace

void Registry::reload_asset(const std::string& type) {
  std::string path;
  const json root = declaring_file(*this, type, path);
  register_asset(path, root, true);
}

void Registry::edit_asset(const std::string& type, const nlohmann::json& contents) {
  if (!contents.is_object() || !contents.contains("nodes") || !contents.contains("links"))
    throw Error("the new contents of \"" + type + "\": expected a graph's \"nodes\" and \"links\"");
  std::string path;
  json root = declaring_file(*this, type, path);
  root["nodes"] = contents["nodes"];
  root["links"] = contents["links"];
  NodeSpec check;
  read_replacement(*this, path, root, check);  // throws, naming the place, before anything is written
  write_file_atomic(path, root.dump(2) + "\n");
  register_asset(path, root, true);
}

int Registry::load_assets_in(const std::string& folder) {
  std::error_code ec;
  if (!fs::is_directory(folder, ec)) return 0;
  std::map<std::string, json> files;  // by path: name order
  for (const auto& e : fs::directory_iterator(folder, ec)) {
    const std::string name = e.path().filename().string();
    if (!e.is_regular_file() || name.size() < 10 || name.compare(name.size() - 10, 10, ".eddy.json") != 0) continue;
    // An asset file says so at its top; other graphs in the folder are not assets.
    json root = read_json_file(e.path().string(), "graph file");  // a damaged file is reported, not passed over
    if (root.is_object() && root.contains("asset")) files.emplace(e.path().string(), std::move(root));
  }
  const std::size_t before = assets_.size();
  // An asset may use another of the folder: load what can be loaded, until nothing more can.
  std::vector<std::string> pending;
  for (const auto& [p, root] : files) pending.push_back(p);
  while (!pending.empty()) {
    std::vector<std::string> failed;
    std::vector<std::string> errors;
    for (const auto& p : pending) {
      try {
        register_asset(p, files.at(p));
      } catch (const Error& e) {
        failed.push_back(p);
        errors.push_back(e.what());
      }
    }
    if (failed.size() == pending.size()) {
      // Report the fault itself: an "unknown node type" may only be another asset that failed.
      const auto own = std::find_if(errors.begin(), errors.end(),
                                    [](const std::string& m) { return m.find("unknown node type") == std::string::npos; });
      throw Error(own != errors.end() ? *own : errors.front());
    }
    pending = std::move(failed);
  }
  return int(assets_.size() - before);
}

int Registry::load_default_assets(const std::string& graph_path) {
  int n = 0;
  if (!graph_path.empty()) n += load_assets_in((fs::absolute(fs::path(graph_path)).parent_path() / "assets").string());
  for (const auto& p : env_path_list("EDDY_ASSET_PATH")) {
    std::error_code ec;
    if (fs::is_regular_file(p, ec)) {
      load_asset(p);
      ++n;
    } else if (fs::is_directory(p, ec)) {
      n += load_assets_in(p);
    } else {
      throw Error("EDDY_ASSET_PATH: \"" + p + "\" is neither an asset file nor a folder");
    }
  }
  return n;
}

}  // namespace eddy
