// `eddy serve`: see server.h for the API.
#include "server.h"

#include <httplib.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <csignal>
#include <deque>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <nlohmann/json.hpp>
#include <optional>
#include <pthread.h>
#include <sstream>
#include <thread>

#include "eddy/core/error.h"
#include "eddy/core/io.h"
#include "eddy/core/mesh.h"
#include "eddy/core/ply.h"
#include "eddy/graph/cook.h"
#include "eddy/graph/graph.h"
#include "eddy/graph/util.h"
#include "eddy/graph/volumes_value.h"
#include "eddy/surfacing/surfacing.h"
#include "geometry.h"

namespace eddy::app {

namespace fs = std::filesystem;
using json = nlohmann::json;

namespace {

// A request the server refuses: HTTP status and message.
struct HttpError : Error {
  HttpError(int s, const std::string& m) : Error(m), status(s) {}
  int status;
};

// `rel` resolved under `base`, links followed; refuses absolute paths, ".."
// and anything that lands outside base.
fs::path inside(const fs::path& base, const std::string& rel, const char* what) {
  if (rel.empty()) throw HttpError(400, std::string(what) + ": a path is required");
  const fs::path p(rel);
  if (p.is_absolute() || rel.find('\\') != std::string::npos)
    throw HttpError(403, std::string(what) + ": '" + rel + "' must be relative to the served folder");
  for (const auto& part : p)
    if (part == "..") throw HttpError(403, std::string(what) + ": '" + rel + "' may not contain '..'");
  std::error_code ec;
  const fs::path b = fs::weakly_canonical(base, ec);
  const fs::path full = fs::weakly_canonical(base / p, ec);
  if (ec) throw HttpError(400, std::string(what) + ": '" + rel + "' cannot be resolved");
  auto [bi, fi] = std::mismatch(b.begin(), b.end(), full.begin(), full.end());
  if (bi != b.end()) throw HttpError(403, std::string(what) + ": '" + rel + "' leads outside the served folder");
  return full;
}

json parse_body(const httplib::Request& req) {
  try {
    return json::parse(req.body);
  } catch (const json::exception& e) {
    throw HttpError(400, std::string("the request body is not valid JSON: ") + e.what());
  }
}

template <class T>
T field(const json& j, const char* name, const T& fallback, bool required = false) {
  if (!j.is_object()) throw HttpError(400, "the request body must be a JSON object");
  const auto it = j.find(name);
  if (it == j.end()) {
    if (required) throw HttpError(400, std::string("the request body lacks '") + name + "'");
    return fallback;
  }
  try {
    return it->get<T>();
  } catch (const json::exception&) {
    throw HttpError(400, std::string("'") + name + "' has the wrong type");
  }
}

std::pair<int, int> frame_pair(const json& body, const Graph& g) {
  if (!body.contains("frames")) return {g.frame_start, g.frame_end};
  const json& f = body["frames"];
  if (f.is_number_integer()) return {f.get<int>(), f.get<int>()};
  if (!f.is_array() || f.size() != 2 || !f[0].is_number_integer() || !f[1].is_number_integer())
    throw HttpError(400, "'frames' must be a frame or [first, last]");
  const int a = f[0].get<int>(), b = f[1].get<int>();
  if (a > b) throw HttpError(400, "'frames': the first frame is after the last");
  if (b - a > 100000) throw HttpError(400, "'frames': more than 100000 frames");
  return {a, b};
}

// Events for server-sent events: a bounded log; each stream reads from its
// own cursor, so a slow or vanished client never blocks a cook.
class EventHub {
 public:
  void publish(json e) {
    std::lock_guard<std::mutex> lock(mu_);
    log_.push_back("data: " + e.dump() + "\n\n");
    if (log_.size() > kKeep) {
      log_.pop_front();
      ++first_;
    }
    cv_.notify_all();
  }
  uint64_t end() {
    std::lock_guard<std::mutex> lock(mu_);
    return first_ + log_.size();
  }
  // Events from *cursor on (advancing it); waits up to `wait` for one.
  std::string take(uint64_t& cursor, std::chrono::milliseconds wait) {
    std::unique_lock<std::mutex> lock(mu_);
    cv_.wait_for(lock, wait, [&] { return stopping_ || first_ + log_.size() > cursor; });
    std::string out;
    if (cursor < first_) cursor = first_;  // fell behind: the oldest are gone
    for (; cursor < first_ + log_.size(); ++cursor) out += log_[cursor - first_];
    return out;
  }
  void stop() {
    std::lock_guard<std::mutex> lock(mu_);
    stopping_ = true;
    cv_.notify_all();
  }
  bool stopping() {
    std::lock_guard<std::mutex> lock(mu_);
    return stopping_;
  }

 private:
  static constexpr std::size_t kKeep = 4096;
  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<std::string> log_;
  uint64_t first_ = 0;
  bool stopping_ = false;
};

class HubObserver final : public CookObserver {
 public:
  explicit HubObserver(EventHub& hub) : hub_(hub) {}
  void node_started(const std::string& node, int frame) override {
    hub_.publish({{"event", "node_started"}, {"node", node}, {"frame", frame}});
  }
  void node_progress(const std::string& node, int frame, double fraction, const std::string& message) override {
    // At most ten a second per node: substeps can be thousands.
    const auto now = std::chrono::steady_clock::now();
    if (now - last_progress_ < std::chrono::milliseconds(100)) return;
    last_progress_ = now;
    hub_.publish(
        {{"event", "node_progress"}, {"node", node}, {"frame", frame}, {"fraction", fraction}, {"message", message}});
  }
  void node_info(const std::string& node, int frame, const std::string& message) override {
    hub_.publish({{"event", "node_info"}, {"node", node}, {"frame", frame}, {"message", message}});
  }
  void node_warning(const std::string& node, int frame, const std::string& message) override {
    hub_.publish({{"event", "node_warning"}, {"node", node}, {"frame", frame}, {"message", message}});
  }
  void node_finished(const std::string& node, int frame, double seconds, std::size_t bytes) override {
    hub_.publish({{"event", "node_finished"},
                  {"node", node},
                  {"frame", frame},
                  {"seconds", seconds},
                  {"bytes", bytes}});
  }
  void node_cached(const std::string& node, int frame) override {
    hub_.publish({{"event", "node_cached"}, {"node", node}, {"frame", frame}});
  }

 private:
  EventHub& hub_;
  std::chrono::steady_clock::time_point last_progress_{};
};

struct Job {
  uint64_t id;
  std::string node;  // empty: every terminal node
  int first, last;
};

}  // namespace

struct Server::Impl {
  Impl(const Registry& r, ServeOptions o) : registry(r), options(std::move(o)), observer(hub) {
    root = fs::weakly_canonical(options.root.empty() ? "." : options.root);
    out = options.out.empty() ? root / "out" : fs::weakly_canonical(options.out);
  }

  const Registry& registry;
  ServeOptions options;
  fs::path root, out;
  httplib::Server http;
  int bound_port = 0;
  std::thread listener, worker;
  std::mutex stop_mu;
  std::condition_variable stop_cv;
  bool stopped = false;

  EventHub hub;
  HubObserver observer;

  // The current graph and its engine; engine_mu is held for one frame's
  // cook at a time, so requests interleave with a long cook.
  std::timed_mutex engine_mu;
  std::unique_ptr<CookEngine> engine;

  // The cook queue.
  std::mutex queue_mu;
  std::condition_variable queue_cv;
  std::deque<Job> queue;
  std::optional<Job> running;
  uint64_t next_job = 1;
  bool quitting = false;

  void set_graph(Graph g) {
    std::lock_guard<std::timed_mutex> lock(engine_mu);
    if (engine) {
      engine->set_graph(std::move(g));
    } else {
      CookOptions opts;
      opts.output_dir = out.string();
      opts.threads = options.threads;
      engine = std::make_unique<CookEngine>(registry, std::move(g), opts);
      engine->set_observer(&observer);
    }
  }
  CookEngine& need_engine() {
    if (!engine) throw HttpError(409, "no graph is open: open or PUT one first");
    return *engine;
  }

  // ---- the cook worker
  void work() {
    for (;;) {
      Job job;
      {
        std::unique_lock<std::mutex> lock(queue_mu);
        queue_cv.wait(lock, [&] { return quitting || !queue.empty(); });
        if (quitting) return;
        job = queue.front();
        queue.pop_front();
        running = job;
      }
      const json finished = run(job);
      {
        std::lock_guard<std::mutex> lock(queue_mu);
        running.reset();
      }
      // After the reset: a client that asks for the status on this event sees the cook over.
      hub.publish(finished);
    }
  }

  // Runs a job; returns its job_finished event.
  json run(const Job& job) {
    hub.publish({{"event", "job_started"}, {"job", job.id}, {"node", job.node}, {"frames", {job.first, job.last}}});
    bool cancelled = false, failed = false;
    for (int f = job.first; f <= job.last && !cancelled && !failed; ++f) {
      const auto t0 = std::chrono::steady_clock::now();
      try {
        std::lock_guard<std::timed_mutex> lock(engine_mu);
        if (!engine) throw Error("no graph is open");
        if (engine->cancel_requested()) throw Cancelled();
        if (job.node.empty()) engine->cook_frame(f);
        else engine->cook(job.node, f);
      } catch (const Cancelled&) {
        cancelled = true;
        break;
      } catch (const NodeError& e) {
        failed = true;
        hub.publish({{"event", "error"}, {"job", job.id}, {"node", e.node_id}, {"frame", e.frame}, {"message", e.what()}});
        break;
      } catch (const std::exception& e) {
        failed = true;
        hub.publish({{"event", "error"}, {"job", job.id}, {"node", job.node}, {"frame", f}, {"message", e.what()}});
        break;
      }
      const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
      hub.publish({{"event", "frame_done"}, {"job", job.id}, {"frame", f}, {"seconds", secs}});
    }
    {
      std::lock_guard<std::timed_mutex> lock(engine_mu);
      if (engine) engine->clear_cancel();
    }
    return {{"event", "job_finished"}, {"job", job.id}, {"cancelled", cancelled}, {"failed", failed}};
  }

  // ---- handlers
  void routes() {
    auto wrap = [this](auto fn) {
      return [this, fn](const httplib::Request& req, httplib::Response& res) {
        try {
          fn(req, res);
        } catch (const HttpError& e) {
          reply_error(res, e.status, e.what());
        } catch (const NodeError& e) {
          res.status = 422;
          res.set_content(json{{"error", e.what()}, {"node", e.node_id}, {"frame", e.frame}}.dump(),
                          "application/json");
        } catch (const Cancelled&) {
          reply_error(res, 409, "cancelled");
        } catch (const Error& e) {
          reply_error(res, 400, e.what());
        } catch (const std::exception& e) {
          reply_error(res, 500, std::string("internal error: ") + e.what());
        }
      };
    };
    http.Get("/api/catalog", wrap([this](const auto&, auto& res) {
      res.set_content(catalog_json(registry), "application/json");
    }));
    http.Get("/api/graphs", wrap([this](const auto&, auto& res) { res.set_content(list_graphs().dump(), "application/json"); }));
    http.Get("/api/graphs/file", wrap([this](const auto& req, auto& res) {
      const fs::path p = graph_path(req.get_param_value("path"));
      const std::string text = read_file(p.string());
      parse_graph(text, registry, req.get_param_value("path"), ValidateOptions{false});
      res.set_content(text, "application/json");
    }));
    http.Post("/api/graph/open", wrap([this](const auto& req, auto& res) {
      const std::string rel = field<std::string>(parse_body(req), "path", "", true);
      const fs::path p = graph_path(rel);
      Graph g = load_graph(p.string(), registry, ValidateOptions{false});
      set_graph(std::move(g));
      hub.publish({{"event", "graph_changed"}, {"path", rel}});
      reply_graph(res);
    }));
    http.Get("/api/graph", wrap([this](const auto&, auto& res) { reply_graph(res); }));
    http.Put("/api/graph", wrap([this](const auto& req, auto& res) {
      Graph g = parse_graph(req.body, registry, "the request body", ValidateOptions{false});
      {
        std::lock_guard<std::timed_mutex> lock(engine_mu);
        if (engine) g.source = engine->graph().source;  // relative input paths keep resolving
      }
      set_graph(std::move(g));
      hub.publish({{"event", "graph_changed"}});
      reply_graph(res);
    }));
    http.Post("/api/graph/save", wrap([this](const auto& req, auto& res) {
      const std::string rel = field<std::string>(parse_body(req), "path", "", true);
      const fs::path p = graph_path(rel);
      std::lock_guard<std::timed_mutex> lock(engine_mu);
      save_graph(need_engine().graph(), registry, p.string());
      res.set_content(json{{"saved", rel}}.dump(), "application/json");
    }));
    http.Post("/api/cook", wrap([this](const auto& req, auto& res) {
      const json body = parse_body(req);
      const std::string node = field<std::string>(body, "node", "");
      std::pair<int, int> frames;
      {
        std::lock_guard<std::timed_mutex> lock(engine_mu);
        const Graph& g = need_engine().graph();
        if (!node.empty() && !g.find(node)) throw HttpError(404, "no node '" + node + "' in the graph");
        frames = frame_pair(body, g);
      }
      Job job;
      {
        std::lock_guard<std::mutex> lock(queue_mu);
        job = {next_job++, node, frames.first, frames.second};
        queue.push_back(job);
      }
      queue_cv.notify_one();
      hub.publish({{"event", "job_queued"}, {"job", job.id}, {"node", node}, {"frames", {job.first, job.last}}});
      res.set_content(json{{"job", job.id}}.dump(), "application/json");
    }));
    http.Post("/api/cancel", wrap([this](const auto&, auto& res) {
      std::size_t dropped;
      {
        std::lock_guard<std::mutex> lock(queue_mu);
        dropped = queue.size();
        for (const Job& j : queue)
          hub.publish({{"event", "job_finished"}, {"job", j.id}, {"cancelled", true}, {"failed", false}});
        queue.clear();
        if (running && engine) engine->cancel();  // cancel() is thread-safe; no engine_mu needed
      }
      res.set_content(json{{"cancelled_queued", dropped}}.dump(), "application/json");
    }));
    http.Get("/api/status", wrap([this](const auto&, auto& res) { res.set_content(status().dump(), "application/json"); }));
    http.Get("/api/events", [this](const httplib::Request&, httplib::Response& res) {
      auto cursor = std::make_shared<uint64_t>(hub.end());
      auto greeted = std::make_shared<bool>(false);
      res.set_header("Cache-Control", "no-cache");
      res.set_chunked_content_provider("text/event-stream", [this, cursor, greeted](std::size_t,
                                                                                      httplib::DataSink& sink) {
        if (hub.stopping()) return false;
        std::string chunk;
        if (!*greeted) {
          // First a "connected" event: a client knows from it that every later event reaches it.
          *greeted = true;
          chunk = "data: " + json{{"event", "connected"}}.dump() + "\n\n";
        } else {
          chunk = hub.take(*cursor, std::chrono::milliseconds(1000));
        }
        if (chunk.empty()) chunk = ": keep-alive\n\n";  // finds out when the client has gone
        if (!sink.is_writable()) return false;
        return sink.write(chunk.data(), chunk.size());
      });
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

  static void reply_error(httplib::Response& res, int status, const std::string& message) {
    res.status = status;
    res.set_content(json{{"error", message}}.dump(), "application/json");
  }

  void reply_graph(httplib::Response& res) {
    std::lock_guard<std::timed_mutex> lock(engine_mu);
    res.set_content(graph_to_json(need_engine().graph(), registry), "application/json");
  }

  fs::path graph_path(const std::string& rel) {
    const fs::path p = inside(root, rel, "path");
    if (p.string().size() < 10 || p.string().substr(p.string().size() - 10) != ".eddy.json")
      throw HttpError(400, "path: '" + rel + "' is not a graph file (*.eddy.json)");
    return p;
  }

  json list_graphs() {
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
      const std::string name = it->path().filename().string();
      if (!it->is_regular_file() || name.size() < 10 || name.substr(name.size() - 10) != ".eddy.json") continue;
      json entry{{"path", fs::relative(it->path(), root).generic_string()}};
      try {
        const json g = json::parse(read_file(it->path().string()));
        if (g.contains("comment") && g["comment"].is_string()) entry["comment"] = g["comment"];
      } catch (const std::exception&) {
        entry["invalid"] = true;
      }
      list.push_back(entry);
    }
    std::sort(list.begin(), list.end(), [](const json& a, const json& b) { return a["path"] < b["path"]; });
    return list;
  }

  json status() {
    json s;
    {
      std::lock_guard<std::mutex> lock(queue_mu);
      s["running"] = running ? json{{"job", running->id}, {"node", running->node}} : json(nullptr);
      s["queued"] = queue.size();
    }
    // The cached frames per node, when the engine is free to answer soon
    // (not while a frame cooks: the client keeps what it knew).
    std::unique_lock<std::timed_mutex> lock(engine_mu, std::chrono::milliseconds(250));
    if (lock.owns_lock() && engine) {
      const Graph& g = engine->graph();
      // As ranges [first, last]: a static node is cached for the whole range.
      json cached = json::object();
      for (const auto& n : g.nodes) {
        json ranges = json::array();
        int open = 0;
        bool in = false;
        for (int f = g.frame_start; f <= g.frame_end + 1 && f - g.frame_start <= 100000; ++f) {
          const bool c = f <= g.frame_end && engine->is_cached(n.id, f);
          if (c && !in) open = f;
          if (!c && in) ranges.push_back({open, f - 1});
          in = c;
        }
        cached[n.id] = ranges;
      }
      s["cached"] = cached;
      s["frame_range"] = {g.frame_start, g.frame_end};
    }
    return s;
  }

  // The value of node.output at frame, cooked when not cached.
  Value value_of(const std::string& node, const std::string& output, int frame) {
    std::lock_guard<std::timed_mutex> lock(engine_mu);
    CookEngine& e = need_engine();
    const GraphNode* n = e.graph().find(node);
    if (!n) throw HttpError(404, "no node '" + node + "' in the graph");
    const auto outs = e.cook(node, frame);
    if (outs->empty()) throw HttpError(404, "node '" + node + "' has no outputs");
    if (output.empty()) return outs->begin()->second;
    const auto it = outs->find(output);
    if (it == outs->end()) throw HttpError(404, "node '" + node + "' has no output '" + output + "'");
    return it->second;
  }

  void geometry(const httplib::Request& req, httplib::Response& res) {
    const std::string node = req.get_param_value("node");
    if (node.empty()) throw HttpError(400, "'node' is required");
    int frame = 0;
    try {
      frame = std::stoi(req.get_param_value("frame"));
    } catch (const std::exception&) {
      throw HttpError(400, "'frame' must be an integer");
    }
    const Value v = value_of(node, req.get_param_value("output"), frame);
    std::vector<std::string> attrs;
    std::stringstream list(req.get_param_value("attributes"));
    for (std::string a; std::getline(list, a, ',');)
      if (!a.empty()) attrs.push_back(a);
    // The value's own arrays are streamed (kept alive by the provider), not copied.
    auto data = std::make_shared<Encoded>();
    if (v.type() == "points") *data = encode_points(*v.as<Points>(), attrs);
    else if (v.type() == "mesh") *data = encode_mesh(*v.as<Mesh>());
    else if (v.type() == "colliders") *data = encode_colliders(v.as<Colliders>()->shapes);
    else throw HttpError(415, "node '" + node + "' outputs " + v.type() + ", not points, a mesh or colliders");
    res.set_content_provider(
        data->size(), "application/octet-stream",
        [data, v](std::size_t offset, std::size_t length, httplib::DataSink& sink) {
          // Write [offset, offset + length) from the parts.
          std::size_t at = 0;
          for (const auto& [p, n] : data->parts()) {
            if (length == 0) break;
            if (offset < at + n) {
              const std::size_t from = offset - at, take = std::min(n - from, length);
              if (!sink.write(p + from, take)) return false;
              offset += take;
              length -= take;
            }
            at += n;
          }
          return true;
        });
  }

  void export_files(const httplib::Request& req, httplib::Response& res) {
    const json body = parse_body(req);
    const std::string node = field<std::string>(body, "node", "", true);
    const std::string output = field<std::string>(body, "output", "");
    const std::string pattern = field<std::string>(body, "path", "", true);
    std::pair<int, int> frames;
    {
      std::lock_guard<std::timed_mutex> lock(engine_mu);
      frames = frame_pair(body, need_engine().graph());
    }
    if (frames.first != frames.second && !has_frame_token(pattern))
      throw HttpError(400, "path: '" + pattern + "' has no frame token ($F4, $F) for a range of frames");
    const std::string ext = fs::path(pattern).extension().string();
    if (ext != ".obj" && ext != ".ply" && ext != ".vdb")
      throw HttpError(400, "path: '" + pattern + "' must end in .obj, .ply or .vdb");
    fs::create_directories(out);
    json written = json::array();
    for (int f = frames.first; f <= frames.second; ++f) {
      const std::string rel = expand_path_tokens(pattern, f, node);
      const fs::path p = inside(out, rel, "path");
      const Value v = value_of(node, output, f);
      fs::create_directories(p.parent_path());
      if (v.type() == "points" && ext == ".ply") {
        write_ply_points(p.string(), *v.as<Points>(), {});
      } else if (v.type() == "mesh" && ext != ".vdb") {
        write_mesh(p.string(), *v.as<Mesh>());
      } else if (v.type() == "volumes" && ext == ".vdb") {
        write_vdb(p.string(), *v.as<Volumes>());
      } else {
        throw HttpError(415, "node '" + node + "' outputs " + v.type() + ", which cannot be written as " + ext +
                                 " (points: .ply; meshes: .obj, .ply; volumes: .vdb)");
      }
      written.push_back(fs::relative(p, out).generic_string());
    }
    hub.publish({{"event", "exported"}, {"node", node}, {"files", written}});
    res.set_content(json{{"files", written}, {"folder", out.string()}}.dump(), "application/json");
  }
};

Server::Server(const Registry& registry, ServeOptions options)
    : impl_(std::make_unique<Impl>(registry, std::move(options))) {}

Server::~Server() { stop(); }

int Server::start() {
  Impl& s = *impl_;
  if (!fs::is_directory(s.root)) throw Error("--root: '" + s.options.root + "' is not a folder");
  if (!s.options.graph.empty()) {
    const fs::path p = inside(s.root, s.options.graph, "--graph");
    s.set_graph(load_graph(p.string(), s.registry, ValidateOptions{false}));
  }
  s.http.set_payload_max_length(s.options.max_body);
  // Every open event stream holds a worker: room for many editors at once.
  s.http.new_task_queue = [] { return new httplib::ThreadPool(64); };
  s.routes();
  if (s.options.port == 0) {
    s.bound_port = s.http.bind_to_any_port(s.options.host.c_str());
    if (s.bound_port <= 0) throw Error("cannot listen on " + s.options.host);
  } else {
    if (!s.http.bind_to_port(s.options.host.c_str(), s.options.port))
      throw Error("cannot listen on " + s.options.host + ":" + std::to_string(s.options.port) +
                  " (in use? pick another with --port)");
    s.bound_port = s.options.port;
  }
  s.worker = std::thread([&s] { s.work(); });
  s.listener = std::thread([&s] { s.http.listen_after_bind(); });
  return s.bound_port;
}

int Server::port() const { return impl_->bound_port; }

void Server::wait() {
  std::unique_lock<std::mutex> lock(impl_->stop_mu);
  impl_->stop_cv.wait(lock, [&] { return impl_->stopped; });
}

void Server::stop() {
  Impl& s = *impl_;
  {
    std::lock_guard<std::mutex> lock(s.queue_mu);
    if (s.quitting) return;
    s.quitting = true;
    s.queue.clear();
    if (s.engine) s.engine->cancel();
  }
  s.queue_cv.notify_all();
  s.hub.stop();
  s.http.stop();
  if (s.listener.joinable()) s.listener.join();
  if (s.worker.joinable()) s.worker.join();
  std::lock_guard<std::mutex> lock(s.stop_mu);
  s.stopped = true;
  s.stop_cv.notify_all();
}

int serve(const Registry& registry, const ServeOptions& options) {
  // SIGINT and SIGTERM are taken by a thread of their own (sigwait), which
  // stops the server: the threads started below inherit the blocked mask.
  sigset_t signals;
  sigemptyset(&signals);
  sigaddset(&signals, SIGINT);
  sigaddset(&signals, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);
  Server server(registry, options);
  const int port = server.start();
  std::printf("eddy serve: http://%s:%d/ (root %s)\n", options.host.c_str(), port,
              fs::weakly_canonical(options.root).c_str());
  std::fflush(stdout);
  std::thread([&server, signals] {
    int sig = 0;
    sigwait(&signals, &sig);
    server.stop();
  }).detach();
  server.wait();
  return 0;
}

}  // namespace eddy::app
