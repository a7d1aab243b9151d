#pragma once
#include <string>
#include <vector>

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
int nodes(const Registry& registry, const std::string& type, bool json);
int validate(const Registry& registry, const std::string& graph);

}  // namespace eddy::app
