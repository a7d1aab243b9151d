#pragma once
#include <string>
#include <vector>

#include "eddy/graph/cook.h"
#include "eddy/graph/graph.h"
#include "eddy/graph/registry.h"

namespace eddy::app {

struct RunOptions {
  std::string graph;
  std::string frames;
  std::string out_dir = "out";
  std::vector<std::string> overrides;
  int threads = 0;
  bool quiet = false;
  // Farm jobs (docs/farm.md): where stateful nodes keep and find a
  // checkpoint per frame; which part of the graph cooks ("all": the output
  // nodes; "sim": the stateful nodes only; "post": the output nodes, the
  // stateful ones taken from their checkpoints); skip frames a run of the
  // same part and graph already finished (a marker per frame).
  std::string checkpoints;
  std::string part = "all";
  bool skip_done = false;
};

int run(Registry& registry, const RunOptions& options);

// What `eddy run` and `eddy farm` share.

// A graph file loaded, its overrides (NODE.PARAM=VALUE) applied, validated
// for the frames (A-B, A, or "" for the graph's range). Throws eddy::Error
// naming the file.
struct PreparedGraph {
  Graph graph;
  int first = 0, last = 0;
};
PreparedGraph prepare_graph(const Registry& registry, const std::string& path, const std::vector<std::string>& overrides,
                            const std::string& frames);

// The nodes a part ("all", "sim", "post") cooks at each frame: the output
// nodes of the expanded graph, or (sim) its stateful nodes, upstream first.
std::vector<std::string> part_targets(const CookEngine& e, const Registry& r, const std::string& part);

// "shot" for ".../shot.eddy.json".
std::string graph_stem(const std::string& path);

// A frame's marker, OUT/.eddy/done/<graph>.<part>.<frame> (--skip-done):
// written once the part's nodes have cooked the frame, holding the hash of
// their output signatures, so that a marker of another graph or other
// parameters does not count.
class DoneMarker {
 public:
  DoneMarker(const std::string& out_dir, const std::string& graph, const std::string& part, CookEngine& e,
             const std::vector<std::string>& targets, int frame);
  bool done() const;
  void write() const;

 private:
  std::string path_, text_;
};
int nodes(const Registry& registry, const std::string& type, bool json);
int validate(const Registry& registry, const std::string& graph);

}  // namespace eddy::app
