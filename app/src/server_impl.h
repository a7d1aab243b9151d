#pragma once
// Server::Impl: the parts of `eddy serve` and what wires them. Its methods
// live with their concern: the lifecycle in server.cpp, the endpoints in
// routes.cpp, node outputs (geometry, export) in outputs.cpp.
#include <httplib.h>

#include <condition_variable>
#include <filesystem>
#include <mutex>
#include <string>
#include <thread>

#include "eddy/graph/json.h"
#include "eddy/graph/value.h"
#include "events.h"
#include "guard.h"
#include "jobs.h"
#include "server.h"

namespace eddy::app {

struct Server::Impl {
  Impl(Registry& r, ServeOptions o);

  Registry& registry;  // asset types are added (collapse) and reloaded
  ServeOptions options;
  std::filesystem::path root, out;
  httplib::Server http;
  int bound_port = 0;
  std::thread listener;
  std::mutex stop_mu;
  std::condition_variable stop_cv;
  bool stopped = false;

  std::string token;                    // empty: none asked for
  std::unique_ptr<RequestGuard> guard;  // made once the port is known

  EventHub hub;
  HubObserver observer;
  OpenGraph graph;
  CookQueue jobs;

  // routes.cpp: registers every endpoint on http.
  void routes();

  // outputs.cpp
  // The value of node.output (empty: its first) at frame, cooked when not cached.
  Value value_of(const std::string& node, const std::string& output, int frame);
  void geometry(const httplib::Request& req, httplib::Response& res);      // GET /api/geometry
  void export_files(const httplib::Request& req, httplib::Response& res);  // POST /api/export
};

// Sets a JSON body: text already dumped, or a value (json_text: a file
// name or message that is not UTF-8 is shown with U+FFFD, not thrown on).
inline void reply_json(httplib::Response& res, const std::string& text) { res.set_content(text, "application/json"); }
inline void reply_json(httplib::Response& res, const nlohmann::json& j) { reply_json(res, json_text(j)); }
// An error reply: {"error": message} with `status`.
inline void reply_error(httplib::Response& res, int status, const std::string& message) {
  res.status = status;
  reply_json(res, nlohmann::json{{"error", message}});
}

}  // namespace eddy::app
