#pragma once
// `eddy serve`: the editor's HTTP server. It serves the built front end and
// a JSON API over one graph at a time, on 127.0.0.1 unless told otherwise:
//
//   GET  /api/catalog                 node catalog from the node specs
//   GET  /api/graphs                  graph files (*.eddy.json) under the root
//   GET  /api/graphs/file?path=P      one graph file's text (validated)
//   GET  /api/asset?type=T            an asset type's contents, file and what its sockets are inside
//   POST /api/asset/collapse {nodes, type, doc, promote, file}
//                                     the nodes into a new asset type (its file written under the
//                                     root, by default assets/TYPE.eddy.json, never over a file),
//                                     one node of it in their place in the current graph
//   POST /api/asset/reload {type}     an asset's file read again; the current graph recooks what changed
//   PUT  /api/asset {type, graph}     new contents (nodes, links) written into an asset's file (one under
//                                     the root only), validated first; the current graph recooks what changed
//   POST /api/graph/open   {path}     loads a graph file as the current graph
//   GET  /api/graph                   the current graph
//   PUT  /api/graph        graph      replaces the current graph (validated)
//   POST /api/graph/save   {path}     writes the current graph under the root
//   POST /api/cook  {node, frames}    queues a cook of frames [a, b] (one cook at a time)
//   POST /api/cancel                  cancels the running cook and empties the queue
//   GET  /api/status                  running and queued cooks, cached frames per node
//   GET  /api/events                  server-sent events of every cook (see below)
//   GET  /api/geometry?node=N&output=O&frame=F[&attributes=a,b]
//                                     a node output (points, mesh, colliders) as binary geometry (geometry.h)
//   POST /api/export {node, output, frames, format, path}
//                                     writes .obj/.ply/.vdb files under the output folder
//
// Events (`data:` lines of JSON, each with "event"): connected (first, on
// each stream: every later event reaches it), job_queued, graph_changed,
// catalog_changed (an asset type made or reloaded), exported,
// job_started, node_started, node_progress, node_info, node_warning,
// node_finished (seconds, bytes), node_cached, frame_done, error (node,
// frame, message), job_finished (cancelled, failed).
//
// Safety: the Host and Origin checks and the per-run token of guard.h;
// paths in requests are relative, without "..", and must resolve
// (links followed) inside the root (graphs) or the output folder (exports);
// request bodies, JSON nesting, the cook queue and the event streams are
// bounded; a failing node is reported as an error event
// and never takes the server down; a client that goes away mid-stream only
// ends its own stream.
#include <cstddef>
#include <memory>
#include <string>

#include "eddy/graph/registry.h"

namespace eddy::app {

struct ServeOptions {
  std::string host = "127.0.0.1";
  int port = 8188;                // 0: any free port (see Server::port)
  std::string root = ".";         // graphs are read from and saved under here
  std::string out;                // exports and cooked files; empty: ROOT/out
  std::string graph;              // opened at start (relative to the root), optional
  std::string static_dir;         // the built front end; empty: none
  std::size_t max_body = 8 << 20;  // bytes
  int threads = 0;                // cook threads, 0: all
  bool token = true;              // ask for the per-run token (guard.h); off: --no-token
  std::size_t max_queued_jobs = 64;  // cook requests beyond it get 429
  std::size_t max_event_streams = 32;  // event streams beyond it get 503 (each holds a worker of 64)
};

class Server {
 public:
  Server(Registry& registry, ServeOptions options);  // collapsing adds asset types to the registry
  ~Server();
  // Binds and starts serving on background threads; returns the port.
  // Throws eddy::Error when the address cannot be bound.
  int start();
  int port() const;
  // The per-run token requests that change state must carry (empty with
  // ServeOptions::token off).
  const std::string& token() const;
  // Blocks until stop() (from another thread or a signal handler's thread).
  void wait();
  void stop();

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// `eddy serve`: runs until interrupted; returns the exit status.
int serve(Registry& registry, const ServeOptions& options);

}  // namespace eddy::app
