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
};

int run(Registry& registry, const RunOptions& options);
int nodes(const Registry& registry, const std::string& type, bool json);
int validate(const Registry& registry, const std::string& graph);

}  // namespace eddy::app
