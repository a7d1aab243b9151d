#pragma once
// The server-sent events of `eddy serve` (GET /api/events; the events are
// listed in server.h): a hub every cook and request publishes to, the cook
// observer that feeds it, and the stream each client reads from.
#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <mutex>
#include <nlohmann/json.hpp>
#include <string>

#include "eddy/graph/cook.h"

namespace httplib {
struct Response;
}

namespace eddy::app {

// Events as a bounded log; each stream reads from its own cursor, so a slow
// or vanished client never blocks a cook.
class EventHub {
 public:
  void publish(const nlohmann::json& e);
  uint64_t end();
  // Events from *cursor on (advancing it); waits up to `wait` for one.
  std::string take(uint64_t& cursor, std::chrono::milliseconds wait);
  void stop();
  bool stopping();
  // Counts the open event streams: false (and no count taken) when `max`
  // are open already.
  bool open_stream(std::size_t max);
  void close_stream();

 private:
  static constexpr std::size_t kKeep = 4096;
  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<std::string> log_;
  uint64_t first_ = 0;
  std::size_t streams_ = 0;
  bool stopping_ = false;
};

// Answers GET /api/events: a "connected" event, then every event published
// from now on, with keep-alives between; ends when the client goes or the
// hub stops. Refuses (503) when max_streams are open already: each open
// stream holds one of the server's workers.
void stream_events(EventHub& hub, httplib::Response& res, std::size_t max_streams);

// A cook's node events, published to the hub.
class HubObserver final : public CookObserver {
 public:
  explicit HubObserver(EventHub& hub) : hub_(hub) {}
  void node_started(const std::string& node, int frame) override;
  void node_progress(const std::string& node, int frame, double fraction, const std::string& message) override;
  void node_info(const std::string& node, int frame, const std::string& message) override;
  void node_warning(const std::string& node, int frame, const std::string& message) override;
  void node_finished(const std::string& node, int frame, double seconds, std::size_t bytes) override;
  void node_cached(const std::string& node, int frame) override;

 private:
  // {"event", "node", "frame"} and the fields of `more`.
  void publish(const char* event, const std::string& node, int frame,
               nlohmann::json more = nlohmann::json::object());

  EventHub& hub_;
  std::chrono::steady_clock::time_point last_progress_{};
};

}  // namespace eddy::app
