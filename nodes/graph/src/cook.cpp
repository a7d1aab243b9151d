#include "eddy/graph/cook.h"

#include <filesystem>

#include "eddy/graph/asset.h"
#include "eddy/graph/checkpoint.h"
#include "eddy/graph/util.h"

namespace eddy {

namespace fs = std::filesystem;

namespace {

// "WHERE, frame F: MESSAGE". A node's own message that already starts with
// WHERE (": ..." or ".param: ...") names the node once.
std::string with_frame(const std::string& where, int frame, const std::string& message) {
  std::string rest = message;
  if (rest.compare(0, where.size(), where) == 0 && rest.size() > where.size()) {
    if (rest.compare(where.size(), 2, ": ") == 0) rest = rest.substr(where.size() + 2);
    else if (rest[where.size()] == '.') rest = rest.substr(where.size() + 1);
  }
  return where + ", frame " + std::to_string(frame) + ": " + rest;
}

}  // namespace

CookEngine::CookEngine(const Registry& registry, Graph graph, CookOptions options)
    : registry_(registry), options_(std::move(options)) {
  set_graph(std::move(graph));
}

CookEngine::~CookEngine() = default;

void CookEngine::set_graph(Graph graph) {
  std::lock_guard<std::recursive_mutex> lock(mutex_);
  // Structure only: the node types' pre-flight checks belong to whoever
  // chooses the frames (eddy run, the editor's cook request).
  validate_graph(graph, registry_, ValidateOptions{false});
  revision_seen_ = registry_.revision();
  graph_ = expand_assets(graph, registry_);
  user_ = std::move(graph);
  asset_nodes_.clear();
  for (const auto& n : user_.nodes)
    if (is_expanded_asset(n, registry_)) asset_nodes_.insert(n.id);
  sig_memo_.clear();
  for (auto it = instances_.begin(); it != instances_.end();) {
    const GraphNode* n = graph_.find(it->first);
    if (!n || n->type != instance_type_[it->first]) {
      instance_type_.erase(it->first);
      it = instances_.erase(it);
    } else {
      ++it;
    }
  }
}

std::string CookEngine::graph_dir() const {
  if (graph_.source.empty()) return fs::current_path().string();
  return fs::absolute(fs::path(graph_.source)).parent_path().string();
}

int CookEngine::clamp_frame(const NodeSpec& spec, int frame) const {
  return spec.stateful ? std::max(frame, graph_.frame_start) : frame;
}

uint64_t CookEngine::signature(const std::string& node, int frame) {
  const GraphNode* gn = graph_.find(node);
  EDDY_DEMAND(gn != nullptr);
  const NodeSpec& spec = *registry_.find(gn->type);
  frame = clamp_frame(spec, frame);
  if (auto it = sig_memo_.find({node, frame}); it != sig_memo_.end()) return it->second;

  auto own = [&](int f, uint64_t previous) {
    Hasher h;
    h.str(gn->type).str(node).pod(gn->bypass);
    // The timeline a frame number means (checkpoints and farm markers are
    // compared across processes by these signatures).
    h.pod(graph_.fps).pod(graph_.frame_start);
    for (const auto& [name, value] : gn->params) h.str(name).str(to_display(value));
    // Animated parameters: their definitions, and the frame (they vary with it).
    for (const auto& [name, a] : gn->anims)
      for (const auto& c : a.channels) h.str(name).str(c ? c->describe() : "-");
    if (spec.time_dependent || spec.stateful || !gn->anims.empty() ||
        (spec.frame_dependent && spec.frame_dependent(gn->params)))
      h.pod(f);
    const int fi = spec.input_frame ? spec.input_frame(gn->params, f) : f;
    for (const auto& s : spec.inputs)
      for (const Link* l : graph_.links_into(node, s.name)) h.str(s.name).pod(signature(l->from_node, fi)).str(l->from_socket);
    if (spec.reads_previous_inputs && fi > graph_.frame_start)
      for (const auto& s : spec.inputs)
        for (const Link* l : graph_.links_into(node, s.name))
          h.str(s.name).str("before").pod(signature(l->from_node, fi - 1)).str(l->from_socket);
    if (spec.stateful && f > graph_.frame_start) h.pod(previous);
    return h.h;
  };
  if (!spec.stateful) return sig_memo_[{node, frame}] = own(frame, 0);
  // Stateful: the chain from the latest memoised frame up, without recursion.
  int k = frame;
  while (k > graph_.frame_start && !sig_memo_.count({node, k - 1})) --k;
  uint64_t prev = k > graph_.frame_start ? sig_memo_[{node, k - 1}] : 0;
  for (int f = k; f <= frame; ++f) prev = sig_memo_[{node, f}] = own(f, prev);
  return prev;
}

std::shared_ptr<const Outputs> CookEngine::lookup(const std::string& node, uint64_t sig) {
  auto it = cache_.find({node, sig});
  if (it == cache_.end()) return nullptr;
  it->second.last_use = ++clock_;
  return it->second.outputs;
}

void CookEngine::store(const std::string& node, uint64_t sig, std::shared_ptr<const Outputs> out) {
  std::size_t bytes = 0;
  for (const auto& [k, v] : *out) bytes += v.bytes();
  auto& e = cache_[{node, sig}];
  cache_used_ -= e.bytes;
  e = Entry{std::move(out), bytes, ++clock_};
  cache_used_ += bytes;
  evict();
}

void CookEngine::evict() {
  while (cache_used_ > options_.cache_bytes && cache_.size() > 1) {
    auto victim = cache_.begin();
    for (auto it = cache_.begin(); it != cache_.end(); ++it)
      if (it->second.last_use < victim->second.last_use) victim = it;
    cache_used_ -= victim->second.bytes;
    cache_.erase(victim);
  }
}

void CookEngine::follow_registry() {
  // Only between cooks: never under a cook already walking the graph (one
  // reloaded on another thread meanwhile is followed by the next request).
  if (depth_ == 0 && registry_.revision() != revision_seen_) set_graph(Graph(user_));
}

bool CookEngine::is_cached(const std::string& node, int frame) {
  std::lock_guard<std::recursive_mutex> lock(mutex_);
  follow_registry();
  const Depth in(depth_);
  if (asset_nodes_.count(node)) {
    for (const auto& o : registry_.find(user_.find(node)->type)->outputs)
      if (!is_cached(expanded_output(user_, registry_, node, o.name).first, frame)) return false;
    return true;
  }
  if (!graph_.find(node)) return false;
  return cache_.count({node, signature(node, frame)}) > 0;
}

std::shared_ptr<const Outputs> CookEngine::cook(const std::string& node, int frame) {
  std::lock_guard<std::recursive_mutex> lock(mutex_);
  follow_registry();
  const Depth in(depth_);
  if (asset_nodes_.count(node)) {
    // An asset node's outputs are its inner nodes' (the expansion cooks them).
    auto out = std::make_shared<Outputs>();
    for (const auto& o : registry_.find(user_.find(node)->type)->outputs) {
      const auto [inner, socket] = expanded_output(user_, registry_, node, o.name);
      (*out)[o.name] = cook(inner, frame)->at(socket);
    }
    return out;
  }
  const GraphNode* gn = graph_.find(node);
  if (!gn) throw Error("no node '" + node + "' in the graph");
  const NodeSpec& spec = *registry_.find(gn->type);
  frame = clamp_frame(spec, frame);
  const uint64_t sig = signature(node, frame);
  if (auto hit = lookup(node, sig)) {
    if (observer_) observer_->node_cached(node, frame);
    return hit;
  }
  if (!spec.stateful || gn->bypass) return cook_once(*gn, spec, frame, nullptr, sig);
  if (auto saved = restore(node, frame)) return saved;
  if (!options_.cook_stateful)
    throw NodeError(node, frame,
                    "node '" + node + "' (" + gn->type + "), frame " + std::to_string(frame) + ": no checkpoint in " +
                        (options_.checkpoint_dir.empty() ? std::string("(no checkpoint folder)") : options_.checkpoint_dir) +
                        " (the simulation has not reached this frame: cook it first)");
  // Resume from the latest cached (or checkpointed) frame of this node, or from the start.
  int k = frame;
  std::shared_ptr<const Outputs> prev;
  while (k > graph_.frame_start) {
    if ((prev = lookup(node, signature(node, k - 1))) || (prev = restore(node, k - 1))) break;
    --k;
  }
  for (int f = k; f <= frame; ++f) prev = cook_once(*gn, spec, f, prev.get(), signature(node, f));
  return prev;
}

uint64_t CookEngine::output_signature(const std::string& node, int frame) {
  std::lock_guard<std::recursive_mutex> lock(mutex_);
  follow_registry();
  const Depth in(depth_);
  if (!graph_.find(node)) throw Error("no node '" + node + "' in the graph");
  return signature(node, frame);
}

std::shared_ptr<const Outputs> CookEngine::restore(const std::string& node, int frame) {
  if (options_.checkpoint_dir.empty()) return nullptr;
  const uint64_t sig = signature(node, frame);
  std::shared_ptr<const Outputs> out;
  try {
    out = read_checkpoint(options_.checkpoint_dir, node, frame, sig);
  } catch (const Error& e) {
    // A damaged checkpoint (a disk that filled up, a copy cut short) is
    // as good as none: the frame is cooked again and the file replaced.
    if (observer_) observer_->node_warning(node, frame, std::string(e.what()) + "; cooking the frame again");
    return nullptr;
  }
  if (!out) return nullptr;
  store(node, sig, out);
  if (observer_) observer_->node_restored(node, frame);
  return out;
}

std::shared_ptr<const Outputs> CookEngine::cook_once(const GraphNode& gn, const NodeSpec& spec, int frame,
                                                     const Outputs* previous, uint64_t sig) {
  if (cancel_) throw Cancelled();
  CookContext ctx;
  ctx.node_id_ = gn.id;
  ctx.spec_ = &spec;
  ctx.params_ = &gn.params;
  ctx.anims_ = &gn.anims;
  ctx.frame_ = frame;
  ctx.start_ = graph_.frame_start;
  ctx.end_ = graph_.frame_end;
  ctx.fps_ = graph_.fps;
  ctx.threads_ = options_.threads;
  ctx.engine_ = this;
  ctx.previous_ = previous;
  // Inputs first: upstream failures surface as the upstream node's error.
  const int input_frame = spec.input_frame ? spec.input_frame(gn.params, frame) : frame;
  // The value a link carries at frame f (its upstream node cooked then).
  auto link_value = [this](const Link* l, int f) {
    auto up = cook(l->from_node, f);
    auto it = up->find(l->from_socket);
    if (it == up->end())
      throw NodeError(l->from_node, f, "node '" + l->from_node + "' produced no output '" + l->from_socket + "'");
    return it->second;
  };
  auto pull = [this, &gn, &ctx, input_frame, link_value](const std::string& socket) {
    auto& values = ctx.inputs_[socket];
    for (const Link* l : graph_.links_into(gn.id, socket)) values.push_back(link_value(l, input_frame));
  };
  if (spec.reads_previous_inputs)
    ctx.pull_before_ = [this, &gn, input_frame, link_value](const std::string& socket,
                                                          std::size_t index) -> std::optional<Value> {
      const auto links = graph_.links_into(gn.id, socket);
      if (input_frame <= graph_.frame_start || index >= links.size()) return std::nullopt;
      return link_value(links[index], input_frame - 1);
    };
  if (spec.lazy_inputs) ctx.pull_ = pull;
  else
    for (const auto& s : spec.inputs) pull(s.name);
  auto out = std::make_shared<Outputs>();
  ctx.outputs_ = out.get();
  if (gn.bypass) {
    // Each output passes on the first linked input value of its type.
    if (spec.lazy_inputs)
      for (const auto& s : spec.inputs) pull(s.name);
    for (const auto& o : spec.outputs) {
      for (const auto& in : spec.inputs) {
        const auto it = ctx.inputs_.find(in.name);
        if (in.type != o.type || it == ctx.inputs_.end() || it->second.empty()) continue;
        (*out)[o.name] = it->second.front();
        break;
      }
      if (!out->count(o.name))
        throw NodeError(gn.id, frame,
                        ctx.where() + ": bypassed, but no linked input of type " + o.type + " to pass on as '" +
                            o.name + "'");
    }
    std::shared_ptr<const Outputs> result = out;
    store(gn.id, sig, result);
    if (observer_) observer_->node_finished(gn.id, frame, 0.0, 0);
    return result;
  }
  auto& inst = instances_[gn.id];
  if (!inst || instance_type_[gn.id] != gn.type) {
    inst = spec.factory();
    instance_type_[gn.id] = gn.type;
  }
  if (observer_) observer_->node_started(gn.id, frame);
  const auto t0 = std::chrono::steady_clock::now();
  try {
    inst->cook(ctx);
  } catch (const Cancelled&) {
    throw;
  } catch (const NodeError&) {
    throw;
  } catch (const Error& e) {
    throw NodeError(gn.id, frame, with_frame(ctx.where(), frame, e.what()));
  } catch (const std::bad_alloc&) {
    throw NodeError(gn.id, frame, ctx.where() + ", frame " + std::to_string(frame) + ": out of memory");
  } catch (const std::exception& e) {
    throw NodeError(gn.id, frame,
                    ctx.where() + ", frame " + std::to_string(frame) + ": internal error: " + e.what());
  }
  const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  for (const auto& s : spec.outputs)
    if (!out->count(s.name))
      throw NodeError(gn.id, frame, ctx.where() + ", frame " + std::to_string(frame) + ": set no output '" + s.name + "'");
  std::size_t bytes = 0;
  for (const auto& [k, v] : *out) bytes += v.bytes();
  auto& st = stats_[gn.id];
  st.cooks += 1;
  st.seconds += secs;
  st.peak_bytes = std::max(st.peak_bytes, bytes);
  std::shared_ptr<const Outputs> result = out;
  store(gn.id, sig, result);
  if (spec.stateful && !options_.checkpoint_dir.empty()) {
    if (checkpointable(*result)) write_checkpoint(options_.checkpoint_dir, gn.id, frame, sig, *result);
    else if (observer_ && frame == graph_.frame_start)
      observer_->node_warning(gn.id, frame, "an output of a type no checkpoint holds: this node keeps none");
  }
  if (observer_) observer_->node_finished(gn.id, frame, secs, bytes);
  return result;
}

void CookEngine::cook_frame(int frame) {
  std::lock_guard<std::recursive_mutex> lock(mutex_);
  follow_registry();
  const Depth in(depth_);
  // The expanded graph's: an asset's side branches (a writer inside it) cook too.
  for (const auto& id : graph_.terminal_nodes()) cook(id, frame);
}

}  // namespace eddy
