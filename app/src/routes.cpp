// The endpoints of `eddy serve` (listed in server.h), registered on the
// Impl's httplib server; node outputs are answered in outputs.cpp.
#include <algorithm>
#include <chrono>
#include <filesystem>
#include <optional>
#include <nlohmann/json.hpp>

#include "eddy/core/error.h"
#include "eddy/core/io.h"
#include "eddy/graph/asset.h"
#include "eddy/graph/cook.h"
#include "eddy/graph/graph.h"
#include "eddy/graph/json.h"
#include "eddy/graph/util.h"
#include "sandbox.h"
#include "server_impl.h"

namespace eddy::app {

namespace fs = std::filesystem;
using json = nlohmann::json;

namespace {

// A handler whose exceptions become error replies: an HttpError its own
// status, a failing node 422, a cancelled cook 409, eddy::Error 400, the rest 500.
template <class Fn>
httplib::Server::Handler wrap(Fn fn) {
  return [fn](const httplib::Request& req, httplib::Response& res) {
    try {
      fn(req, res);
    } catch (const HttpError& e) {
      reply_error(res, e.status, e.what());
    } catch (const NodeError& e) {
      res.status = 422;
      reply_json(res, json{{"error", e.what()}, {"node", outer_node(e.node_id)}, {"frame", e.frame}});
    } catch (const Cancelled&) {
      reply_error(res, 409, "cancelled");
    } catch (const Error& e) {
      reply_error(res, 400, e.what());
    } catch (const std::exception& e) {
      reply_error(res, 500, std::string("internal error: ") + e.what());
    }
  };
}

// A file's path relative to the served root, when it lies under it (links followed).
std::optional<std::string> served_path(const fs::path& root, const std::string& file) {
  std::error_code ec;
  const fs::path rel = fs::relative(fs::weakly_canonical(file, ec), fs::weakly_canonical(root, ec), ec);
  if (ec || rel.empty() || *rel.begin() == "..") return std::nullopt;
  return rel.generic_string();
}

// The graph files under root (not in the output folder, at most 4 folders
// down, at most 1000), with their comments, sorted by path. Asset files are
// node types (the node library lists them), not graphs to open.
json list_graphs(const fs::path& root, const fs::path& out) {
  json list = json::array();
  std::error_code ec;
  const fs::path outc = fs::weakly_canonical(out, ec);
  for (fs::recursive_directory_iterator it(root, fs::directory_options::skip_permission_denied, ec), end;
       it != end && list.size() < 1000; it.increment(ec)) {
    if (ec) break;
    if (it.depth() > 4 || (it->is_directory() && fs::weakly_canonical(it->path(), ec) == outc)) {
      it.disable_recursion_pending();
      continue;
    }
    if (!it->is_regular_file() || !is_graph_file(it->path().filename().string())) continue;
    json entry{{"path", fs::relative(it->path(), root).generic_string()}};
    try {
      const json g = parse_json(read_file(it->path().string()), it->path().string());
      if (g.is_object() && g.contains("asset")) continue;
      if (g.contains("comment") && g["comment"].is_string()) entry["comment"] = g["comment"];
    } catch (const std::exception&) {
      entry["invalid"] = true;
    }
    list.push_back(entry);
  }
  std::sort(list.begin(), list.end(), [](const json& a, const json& b) { return a["path"] < b["path"]; });
  return list;
}

// The frames of each node the engine has cached, as ranges [first, last]
// (a static node is cached for the whole range).
json cached_ranges(CookEngine& engine) {
  const Graph& g = engine.graph();
  json cached = json::object();
  for (const auto& n : g.nodes) {
    json ranges = json::array();
    int open = 0;
    bool in = false;
    for (int f = g.frame_start; f <= g.frame_end + 1 && f - g.frame_start <= 100000; ++f) {
      const bool c = f <= g.frame_end && engine.is_cached(n.id, f);
      if (c && !in) open = f;
      if (!c && in) ranges.push_back({open, f - 1});
      in = c;
    }
    cached[n.id] = ranges;
  }
  return cached;
}

json status(CookQueue& jobs, OpenGraph& graph) {
  json s = jobs.status();
  // The cached frames per node, when the engine is free to answer soon
  // (not while a frame cooks: the client keeps what it knew).
  std::unique_lock<std::timed_mutex> lock(graph.mu, std::chrono::milliseconds(250));
  if (lock.owns_lock() && graph.engine) {
    s["cached"] = cached_ranges(*graph.engine);
    s["frame_range"] = {graph.engine->graph().frame_start, graph.engine->graph().frame_end};
  }
  return s;
}

}  // namespace

void Server::Impl::routes() {
  auto reply_graph = [this](httplib::Response& res) {
    std::lock_guard<std::timed_mutex> lock(graph.mu);
    reply_json(res, graph_to_json(graph.need().graph(), registry));
  };
  http.Get("/api/catalog", wrap([this](const auto&, auto& res) { reply_json(res, catalog_json(registry)); }));
  http.Get("/api/graphs", wrap([this](const auto&, auto& res) { reply_json(res, list_graphs(root, out)); }));
  // An asset type's contents (read-only): its graph and what its inputs,
  // outputs and parameters are inside.
  http.Get("/api/asset", wrap([this](const auto& req, auto& res) {
    const std::string type = req.get_param_value("type");
    const NodeSpec* spec = registry.find(type);
    if (!spec || !spec->asset) throw HttpError(404, "\"" + type + "\" is not an asset node type");
    const Asset& a = *spec->asset;
    json j;
    j["type"] = type;
    j["file"] = served_path(root, a.path).value_or(a.path);
    j["graph"] = json::parse(graph_to_json(a.graph, registry));
    auto ends = [](const std::vector<std::pair<std::string, std::string>>& v) {
      json e = json::array();
      for (const auto& [n, s] : v) e.push_back(n + "." + s);
      return e;
    };
    for (const auto& i : a.inputs) j["inputs"].push_back({{"name", i.name}, {"to", ends(i.to)}});
    for (const auto& o : a.outputs) j["outputs"].push_back({{"name", o.name}, {"from", o.node + "." + o.socket}});
    j["params"] = json::array();
    for (const auto& p : a.params) j["params"].push_back({{"name", p.name}, {"drives", ends(p.drives)}});
    reply_json(res, j.dump());
  }));
  // Collapses nodes of the open graph into a new asset: writes the asset
  // file (never over an existing one), registers its type, and puts one node
  // of it in the nodes' place.
  http.Post("/api/asset/collapse", wrap([this, reply_graph](const auto& req, auto& res) {
    const json body = parse_body(req.body);
    CollapseRequest rq;
    rq.nodes = field<std::vector<std::string>>(body, "nodes", {}, true);
    rq.type = field<std::string>(body, "type", "", true);
    rq.doc = field<std::string>(body, "doc", "");
    rq.category = field<std::string>(body, "category", "");
    rq.id = field<std::string>(body, "id", "");
    rq.promote = field<std::vector<std::string>>(body, "promote", {});
    const std::string rel = field<std::string>(body, "file", "assets/" + snake_case(rq.type) + ".eddy.json");
    const fs::path path = graph_file(root, rel);
    Graph g;
    {
      std::lock_guard<std::timed_mutex> lock(graph.mu);
      g = graph.need().graph();
    }
    collapse_into_file(g, registry, rq, path.string());
    graph.set(std::move(g));
    hub.publish({{"event", "catalog_changed"}, {"type", rq.type}});
    hub.publish({{"event", "graph_changed"}});
    reply_graph(res);
  }));
  // Reads an asset type's file again (after it was edited), or writes new
  // contents into it (its nodes and links, from the editor's contents view),
  // and recooks what uses it: its nodes' cached outputs go where the
  // contents changed.
  auto asset_changed = [this, reply_graph](const std::string& type, httplib::Response& res, auto&& change) {
    const NodeSpec* spec = registry.find(type);
    if (!spec || !spec->asset) throw HttpError(404, "\"" + type + "\" is not an asset node type");
    {
      // Not while a frame cooks: the engine reads the spec as it cooks.
      std::lock_guard<std::timed_mutex> lock(graph.mu);
      change();
      if (graph.engine) graph.engine->set_graph(graph.engine->graph());
    }
    hub.publish({{"event", "catalog_changed"}, {"type", type}});
    hub.publish({{"event", "graph_changed"}});
    reply_graph(res);
  };
  http.Post("/api/asset/reload", wrap([this, asset_changed](const auto& req, auto& res) {
    const std::string type = field<std::string>(parse_body(req.body), "type", "", true);
    asset_changed(type, res, [&] { registry.reload_asset(type); });
  }));
  http.Put("/api/asset", wrap([this, asset_changed](const auto& req, auto& res) {
    const json body = parse_body(req.body);
    const std::string type = field<std::string>(body, "type", "", true);
    const json contents = field<json>(body, "graph", json(), true);
    // The server writes under its root only: an asset from EDDY_ASSET_PATH is edited where it lives.
    const NodeSpec* spec = registry.find(type);
    if (spec && spec->asset && !served_path(root, spec->asset->path))
      throw HttpError(403, "\"" + type + "\" comes from " + spec->asset->path +
                               ", outside the served folder: edit that file, then reload");
    asset_changed(type, res, [&] { registry.edit_asset(type, contents); });
  }));
  http.Get("/api/graphs/file", wrap([this](const auto& req, auto& res) {
    const fs::path p = graph_file(root, req.get_param_value("path"));
    const std::string text = read_file(p.string());
    parse_graph(text, registry, req.get_param_value("path"), ValidateOptions{false});
    reply_json(res, text);
  }));
  http.Post("/api/graph/open", wrap([this, reply_graph](const auto& req, auto& res) {
    const std::string rel = field<std::string>(parse_body(req.body), "path", "", true);
    const fs::path p = graph_file(root, rel);
    graph.set(load_graph(p.string(), registry, ValidateOptions{false}));
    hub.publish({{"event", "graph_changed"}, {"path", rel}});
    reply_graph(res);
  }));
  http.Get("/api/graph", wrap([reply_graph](const auto&, auto& res) { reply_graph(res); }));
  http.Put("/api/graph", wrap([this, reply_graph](const auto& req, auto& res) {
    Graph g = parse_graph(req.body, registry, "the request body", ValidateOptions{false});
    {
      std::lock_guard<std::timed_mutex> lock(graph.mu);
      if (graph.engine) g.source = graph.engine->graph().source;  // relative input paths keep resolving
    }
    graph.set(std::move(g));
    hub.publish({{"event", "graph_changed"}});
    reply_graph(res);
  }));
  http.Post("/api/graph/save", wrap([this](const auto& req, auto& res) {
    const std::string rel = field<std::string>(parse_body(req.body), "path", "", true);
    const fs::path p = graph_file(root, rel);
    std::lock_guard<std::timed_mutex> lock(graph.mu);
    save_graph(graph.need().graph(), registry, p.string());
    reply_json(res, json{{"saved", rel}});
  }));
  http.Post("/api/cook", wrap([this](const auto& req, auto& res) {
    const json body = parse_body(req.body);
    const std::string node = field<std::string>(body, "node", "");
    std::pair<int, int> frames;
    {
      std::lock_guard<std::timed_mutex> lock(graph.mu);
      const Graph& g = graph.need().graph();
      if (!node.empty()) need_node(g, node);
      frames = frame_pair(body, g);
    }
    reply_json(res, json{{"job", jobs.push(node, frames).id}});
  }));
  http.Post("/api/cancel", wrap([this](const auto&, auto& res) {
    reply_json(res, json{{"cancelled_queued", jobs.cancel()}});
  }));
  http.Get("/api/status", wrap([this](const auto&, auto& res) { reply_json(res, status(jobs, graph)); }));
  http.Get("/api/events", [this](const httplib::Request&, httplib::Response& res) {
    stream_events(hub, res, options.max_event_streams);
  });
  http.Get("/api/geometry", wrap([this](const auto& req, auto& res) { geometry(req, res); }));
  http.Post("/api/export", wrap([this](const auto& req, auto& res) { export_files(req, res); }));
  if (!options.static_dir.empty() && fs::is_directory(options.static_dir))
    http.set_mount_point("/", options.static_dir);
  else
    http.Get("/", [](const auto&, auto& res) {
      res.set_content("eddy serve: the API is under /api (the editor's files were not found)", "text/plain");
    });
}

}  // namespace eddy::app
