#pragma once
// The cooks of `eddy serve`: the open graph's engine, and the queue of cook
// jobs that one worker thread runs on it, one job at a time.
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <thread>
#include <utility>

#include "eddy/graph/cook.h"
#include "events.h"

namespace eddy::app {

// The open graph and its engine, shared by the requests and the cook worker.
// `mu` is held for one frame's cook at a time, so requests interleave with a
// long cook.
class OpenGraph {
 public:
  OpenGraph(const Registry& registry, CookOptions options, CookObserver& observer)
      : registry_(registry), options_(std::move(options)), observer_(observer) {}
  // Makes `g` the open graph (the engine keeps what still holds); takes mu.
  void set(Graph g);
  // The engine, with mu held; refuses (409) while no graph is open.
  CookEngine& need();

  std::timed_mutex mu;
  std::unique_ptr<CookEngine> engine;  // null until a graph is opened

 private:
  const Registry& registry_;
  CookOptions options_;
  CookObserver& observer_;
};

struct Job {
  uint64_t id;
  std::string node;  // empty: every terminal node
  int first, last;
};

// The cook queue and its worker; every job is announced on the hub
// (job_queued, job_started, frame_done, error, job_finished).
class CookQueue {
 public:
  CookQueue(OpenGraph& graph, EventHub& hub, std::size_t max_queued)
      : graph_(graph), hub_(hub), max_queued_(max_queued) {}
  void start();  // the worker thread
  // Queues a cook of node (empty: every terminal node) over frames; refuses
  // (HttpError 429) when max_queued jobs already wait.
  Job push(const std::string& node, std::pair<int, int> frames);
  // Drops the queued jobs and cancels the running one; returns how many were dropped.
  std::size_t cancel();
  // {"running": {job, node} or null, "queued": count}
  nlohmann::json status();
  // Drops the queue, cancels the running cook and tells the worker to end;
  // false when already told.
  bool quit();
  void join();  // after quit()

 private:
  void work();
  nlohmann::json run(const Job& job);  // returns its job_finished event

  OpenGraph& graph_;
  EventHub& hub_;
  std::size_t max_queued_;
  std::thread worker_;
  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<Job> queue_;
  std::optional<Job> running_;
  uint64_t next_job_ = 1;
  bool quitting_ = false;
};

}  // namespace eddy::app
