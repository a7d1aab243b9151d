#pragma once
// The cook engine: pull-based, memoised by (node, signature), where a
// node's signature at a frame hashes its type, parameters and the signatures
// of its inputs at that frame (plus the frame itself for time-dependent
// nodes, and the node's own previous frame for stateful ones). So a frame is
// cooked once; a static emitter is cooked once for all frames; and any change
// upstream of a solver, or to its parameters, invalidates its frames from
// the start on. Outputs are cached in memory up to a byte budget
// (least-recently used first out).
#include <atomic>
#include <chrono>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <vector>

#include "eddy/graph/graph.h"
#include "eddy/graph/node.h"

namespace eddy {

// A node failed to cook: the message names the node and the frame.
class NodeError : public Error {
 public:
  NodeError(std::string node_id, int frame, const std::string& message)
      : Error(message), node_id(std::move(node_id)), frame(frame) {}
  std::string node_id;
  int frame;
};

class CookObserver {
 public:
  virtual ~CookObserver() = default;
  virtual void node_started(const std::string& node, int frame) {}
  virtual void node_progress(const std::string& node, int frame, double fraction, const std::string& message) {}
  virtual void node_info(const std::string& node, int frame, const std::string& message) {}
  // Something the user should know: the node runs, but badly. Reported as
  // an info line unless the observer shows warnings on their own.
  virtual void node_warning(const std::string& node, int frame, const std::string& message) {
    node_info(node, frame, "warning: " + message);
  }
  virtual void node_finished(const std::string& node, int frame, double seconds, std::size_t bytes) {}
  virtual void node_cached(const std::string& node, int frame) {}
  // A stateful node's outputs read from its checkpoint (CookOptions::checkpoint_dir).
  virtual void node_restored(const std::string& node, int frame) { node_cached(node, frame); }
};

struct CookOptions {
  std::string output_dir = "out";  // where relative output paths resolve
  int threads = 0;                 // 0: all
  std::size_t cache_bytes = std::size_t(4) << 30;
  // Where stateful nodes keep a checkpoint of every frame they cook, and
  // where a cook looks for one before cooking (checkpoint.h); empty: none.
  std::string checkpoint_dir;
  // False: stateful nodes are only taken from their checkpoints, never
  // cooked (a farm's downstream tasks); a missing one is an error naming it.
  bool cook_stateful = true;
};

struct NodeCookStats {
  int cooks = 0;
  double seconds = 0;
  std::size_t peak_bytes = 0;
};

class CookEngine {
 public:
  CookEngine(const Registry& registry, Graph graph, CookOptions options = {});
  ~CookEngine();

  // The graph as given (asset nodes unexpanded).
  const Graph& graph() const { return user_; }
  // The graph that cooks: asset nodes expanded into their contents ("node/inner" ids).
  const Graph& expanded_graph() const { return graph_; }
  // Replaces the graph (validated); node instances of unchanged id and type
  // are kept, cached outputs stay valid where signatures still match. The
  // engine sets its graph again by itself when the registry's specs were
  // replaced (an asset reloaded or edited): the next cook expands the new
  // contents.
  void set_graph(Graph graph);

  void set_observer(CookObserver* o) { observer_ = o; }
  // Requests cancellation of the running cook (thread-safe).
  void cancel() { cancel_ = true; }
  // Clears a cancellation before the next request.
  void clear_cancel() { cancel_ = false; }
  bool cancel_requested() const { return cancel_.load(); }

  // Outputs of `node` at `frame`, cooking what is needed. Throws NodeError
  // (or eddy::Cancelled).
  std::shared_ptr<const Outputs> cook(const std::string& node, int frame);
  // Cooks every terminal node at `frame`.
  void cook_frame(int frame);

  // Whether node's outputs at frame are in the cache.
  bool is_cached(const std::string& node, int frame);
  // The hash of everything node's outputs at frame depend on (its type,
  // parameters, inputs and, stateful, the frames before): equal across
  // processes for the same graph. `node` names a node of the expanded graph.
  uint64_t output_signature(const std::string& node, int frame);
  const std::map<std::string, NodeCookStats>& stats() const { return stats_; }
  std::size_t cache_bytes() const { return cache_used_; }
  const CookOptions& options() const { return options_; }

  // For CookContext.
  CookObserver* observer() const { return observer_; }
  std::string graph_dir() const;

 private:
  struct Entry {
    std::shared_ptr<const Outputs> outputs;
    std::size_t bytes = 0;
    uint64_t last_use = 0;
  };
  uint64_t signature(const std::string& node, int frame);
  std::shared_ptr<const Outputs> cook_once(const GraphNode& gn, const NodeSpec& spec, int frame,
                                           const Outputs* previous, uint64_t sig);
  void store(const std::string& node, uint64_t sig, std::shared_ptr<const Outputs> out);
  std::shared_ptr<const Outputs> lookup(const std::string& node, uint64_t sig);
  // A stateful node's outputs at frame from its checkpoint (kept in the
  // cache), or null.
  std::shared_ptr<const Outputs> restore(const std::string& node, int frame);
  void evict();
  int clamp_frame(const NodeSpec& spec, int frame) const;
  void follow_registry();  // set_graph(user_) when the registry's revision moved on

  const Registry& registry_;
  Graph user_;   // as given
  Graph graph_;  // asset nodes expanded into their contents: what cooks
  std::set<std::string, std::less<>> asset_nodes_;  // the ids of user_'s expanded asset nodes
  uint64_t revision_seen_ = 0;  // the registry's revision the expansion was made at
  int depth_ = 0;               // public calls under way (nested ones: a cook cooking its inputs)
  struct Depth {
    int& d;
    explicit Depth(int& x) : d(x) { ++d; }
    ~Depth() { --d; }
  };
  CookOptions options_;
  CookObserver* observer_ = nullptr;
  std::atomic<bool> cancel_{false};
  std::map<std::string, std::unique_ptr<Node>> instances_;
  std::map<std::string, std::string> instance_type_;
  std::map<std::pair<std::string, uint64_t>, Entry> cache_;
  std::map<std::pair<std::string, int>, uint64_t> sig_memo_;
  std::map<std::string, NodeCookStats> stats_;
  std::size_t cache_used_ = 0;
  uint64_t clock_ = 0;
  std::recursive_mutex mutex_;
};

}  // namespace eddy
