#include "jobs.h"

#include "eddy/graph/asset.h"

#include <chrono>

#include "eddy/core/error.h"
#include "sandbox.h"

namespace eddy::app {

using json = nlohmann::json;

void OpenGraph::set(Graph g) {
  std::lock_guard<std::timed_mutex> lock(mu);
  if (engine) {
    engine->set_graph(std::move(g));
  } else {
    engine = std::make_unique<CookEngine>(registry_, std::move(g), options_);
    engine->set_observer(&observer_);
  }
}

CookEngine& OpenGraph::need() {
  if (!engine) throw HttpError(409, "no graph is open: open or PUT one first");
  return *engine;
}

namespace {

json job_event(const char* event, const Job& job) {
  return {{"event", event}, {"job", job.id}, {"node", job.node}, {"frames", {job.first, job.last}}};
}

json job_finished(const Job& job, bool cancelled, bool failed) {
  return {{"event", "job_finished"}, {"job", job.id}, {"cancelled", cancelled}, {"failed", failed}};
}

}  // namespace

void CookQueue::start() {
  worker_ = std::thread([this] { work(); });
}

Job CookQueue::push(const std::string& node, std::pair<int, int> frames) {
  Job job;
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (queue_.size() >= max_queued_)
      throw HttpError(429, "the cook queue is full (" + std::to_string(queue_.size()) +
                               " jobs waiting): wait for them, or cancel them with POST /api/cancel");
    job = {next_job_++, node, frames.first, frames.second};
    queue_.push_back(job);
  }
  cv_.notify_one();
  hub_.publish(job_event("job_queued", job));
  return job;
}

std::size_t CookQueue::cancel() {
  std::lock_guard<std::mutex> lock(mu_);
  const std::size_t dropped = queue_.size();
  for (const Job& j : queue_) hub_.publish(job_finished(j, true, false));
  queue_.clear();
  if (running_ && graph_.engine) graph_.engine->cancel();  // cancel() is thread-safe; no graph mu needed
  return dropped;
}

json CookQueue::status() {
  std::lock_guard<std::mutex> lock(mu_);
  return {{"running", running_ ? json{{"job", running_->id}, {"node", running_->node}} : json(nullptr)},
          {"queued", queue_.size()}};
}

bool CookQueue::quit() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (quitting_) return false;
    quitting_ = true;
    queue_.clear();
    if (graph_.engine) graph_.engine->cancel();
  }
  cv_.notify_all();
  return true;
}

void CookQueue::join() {
  if (worker_.joinable()) worker_.join();
}

void CookQueue::work() {
  for (;;) {
    Job job;
    {
      std::unique_lock<std::mutex> lock(mu_);
      cv_.wait(lock, [&] { return quitting_ || !queue_.empty(); });
      if (quitting_) return;
      job = queue_.front();
      queue_.pop_front();
      running_ = job;
    }
    const json finished = run(job);
    {
      std::lock_guard<std::mutex> lock(mu_);
      running_.reset();
    }
    // After the reset: a client that asks for the status on this event sees the cook over.
    hub_.publish(finished);
  }
}

json CookQueue::run(const Job& job) {
  hub_.publish(job_event("job_started", job));
  bool cancelled = false, failed = false;
  auto fail = [&](const std::string& node, int frame, const char* message) {
    failed = true;
    hub_.publish({{"event", "error"}, {"job", job.id}, {"node", node}, {"frame", frame}, {"message", message}});
  };
  for (int f = job.first; f <= job.last && !cancelled && !failed; ++f) {
    const auto t0 = std::chrono::steady_clock::now();
    try {
      std::lock_guard<std::timed_mutex> lock(graph_.mu);
      if (!graph_.engine) throw Error("no graph is open");
      if (graph_.engine->cancel_requested()) throw Cancelled();
      if (job.node.empty()) graph_.engine->cook_frame(f);
      else graph_.engine->cook(job.node, f);
    } catch (const Cancelled&) {
      cancelled = true;
      break;
    } catch (const NodeError& e) {
      fail(outer_node(e.node_id), e.frame, e.what());
      break;
    } catch (const std::exception& e) {
      fail(job.node, f, e.what());
      break;
    }
    const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    hub_.publish({{"event", "frame_done"}, {"job", job.id}, {"frame", f}, {"seconds", secs}});
  }
  {
    std::lock_guard<std::timed_mutex> lock(graph_.mu);
    if (graph_.engine) graph_.engine->clear_cancel();
  }
  return job_finished(job, cancelled, failed);
}

}  // namespace eddy::app
