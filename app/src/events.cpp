#include "events.h"

#include "eddy/graph/asset.h"

#include <httplib.h>

#include <memory>

#include "eddy/graph/json.h"

namespace eddy::app {

using json = nlohmann::json;

namespace {

// One event as the stream sends it.
std::string sse_data(const json& e) { return "data: " + json_text(e) + "\n\n"; }

}  // namespace

void EventHub::publish(const json& e) {
  std::lock_guard<std::mutex> lock(mu_);
  log_.push_back(sse_data(e));
  if (log_.size() > kKeep) {
    log_.pop_front();
    ++first_;
  }
  cv_.notify_all();
}

uint64_t EventHub::end() {
  std::lock_guard<std::mutex> lock(mu_);
  return first_ + log_.size();
}

std::string EventHub::take(uint64_t& cursor, std::chrono::milliseconds wait) {
  std::unique_lock<std::mutex> lock(mu_);
  cv_.wait_for(lock, wait, [&] { return stopping_ || first_ + log_.size() > cursor; });
  std::string out;
  if (cursor < first_) cursor = first_;  // fell behind: the oldest are gone
  for (; cursor < first_ + log_.size(); ++cursor) out += log_[cursor - first_];
  return out;
}

void EventHub::stop() {
  std::lock_guard<std::mutex> lock(mu_);
  stopping_ = true;
  cv_.notify_all();
}

bool EventHub::stopping() {
  std::lock_guard<std::mutex> lock(mu_);
  return stopping_;
}

bool EventHub::open_stream(std::size_t max) {
  std::lock_guard<std::mutex> lock(mu_);
  if (streams_ >= max) return false;
  ++streams_;
  return true;
}

void EventHub::close_stream() {
  std::lock_guard<std::mutex> lock(mu_);
  --streams_;
}

namespace {

// One open stream's place in the count, given back when the stream's
// provider (which holds it) is destroyed.
struct StreamSlot {
  explicit StreamSlot(EventHub& h) : hub(h) {}
  ~StreamSlot() { hub.close_stream(); }
  EventHub& hub;
};

}  // namespace

void stream_events(EventHub& hub, httplib::Response& res, std::size_t max_streams) {
  if (!hub.open_stream(max_streams)) {
    res.status = 503;
    res.set_content(json{{"error", "too many event streams open (" + std::to_string(max_streams) +
                                       "): close an editor tab, or retry later"}}.dump(),
                    "application/json");
    return;
  }
  auto slot = std::make_shared<StreamSlot>(hub);
  auto cursor = std::make_shared<uint64_t>(hub.end());
  auto greeted = std::make_shared<bool>(false);
  res.set_header("Cache-Control", "no-cache");
  res.set_chunked_content_provider("text/event-stream", [&hub, slot, cursor, greeted](std::size_t,
                                                                                httplib::DataSink& sink) {
    if (hub.stopping()) return false;
    std::string chunk;
    if (!*greeted) {
      // First a "connected" event: a client knows from it that every later event reaches it.
      *greeted = true;
      chunk = sse_data({{"event", "connected"}});
    } else {
      chunk = hub.take(*cursor, std::chrono::milliseconds(1000));
    }
    if (chunk.empty()) chunk = ": keep-alive\n\n";  // finds out when the client has gone
    if (!sink.is_writable()) return false;
    return sink.write(chunk.data(), chunk.size());
  });
}

void HubObserver::publish(const char* event, const std::string& node, int frame, json more) {
  more["event"] = event;
  // The editor knows the graph's own nodes: a node inside an asset reports as the asset node.
  more["node"] = outer_node(node);
  if (node.find('/') != std::string::npos) more["inner"] = node;
  more["frame"] = frame;
  hub_.publish(more);
}

void HubObserver::node_started(const std::string& node, int frame) { publish("node_started", node, frame); }

void HubObserver::node_progress(const std::string& node, int frame, double fraction, const std::string& message) {
  // At most ten a second per node: substeps can be thousands.
  const auto now = std::chrono::steady_clock::now();
  if (now - last_progress_ < std::chrono::milliseconds(100)) return;
  last_progress_ = now;
  publish("node_progress", node, frame, {{"fraction", fraction}, {"message", message}});
}

void HubObserver::node_info(const std::string& node, int frame, const std::string& message) {
  publish("node_info", node, frame, {{"message", message}});
}

void HubObserver::node_warning(const std::string& node, int frame, const std::string& message) {
  publish("node_warning", node, frame, {{"message", message}});
}

void HubObserver::node_finished(const std::string& node, int frame, double seconds, std::size_t bytes) {
  publish("node_finished", node, frame, {{"seconds", seconds}, {"bytes", bytes}});
}

void HubObserver::node_cached(const std::string& node, int frame) { publish("node_cached", node, frame); }

}  // namespace eddy::app
