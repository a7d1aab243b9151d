#pragma once
// Assets (Houdini's digital assets, Eddy's subnetworks): a graph file with
// an "asset" section declaring its inputs (which inner inputs each feeds),
// outputs (which inner output each is) and promoted parameters (which inner
// parameters each drives). Loading one registers a node type of that name;
// the cook engine expands each node of it into the asset's nodes (ids
// "node/inner"), so a subnet cooks exactly as its expanded graph does.
// The format: docs/graph-format.md, "Assets".
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "eddy/graph/graph.h"

namespace eddy {

struct Asset {
  struct Input {
    std::string name;
    std::vector<std::pair<std::string, std::string>> to;  // inner (node, input)
  };
  struct Output {
    std::string name;
    std::string node, socket;  // inner node's output
  };
  struct Promoted {
    std::string name;
    std::vector<std::pair<std::string, std::string>> drives;  // inner (node, parameter)
  };
  std::string path;  // the file, for messages
  Graph graph;       // the contents (validated, its inputs left for the asset's inputs)
  std::vector<Input> inputs;
  std::vector<Output> outputs;
  std::vector<Promoted> params;
};

// (Registry::load_asset and load_assets_in read asset files.)

// The graph with every asset node expanded into its contents (recursively):
// inner node ids are prefixed with "NODE/", links into and out of the asset
// node rewired to the inner sockets, promoted parameters (and their
// animations) set on the inner parameters they drive. A bypassed asset node
// stays as it is (the engine passes its inputs on).
Graph expand_assets(const Graph& g, const Registry& registry);
// Where output `socket` of node `node` of `g` comes from in the expanded
// graph: the node itself, or (for an expanded asset node) the inner node
// and output it names, recursively.
std::pair<std::string, std::string> expanded_output(const Graph& g, const Registry& registry, const std::string& node,
                                                    const std::string& socket);
// The node of the graph as given that an expanded node id belongs to: the
// asset node "surf" for "surf/liquid" (itself for a plain id).
inline std::string outer_node(const std::string& expanded_id) { return expanded_id.substr(0, expanded_id.find('/')); }
// Whether `node` is an asset node the expansion replaces (not bypassed).
bool is_expanded_asset(const GraphNode& node, const Registry& registry);

}  // namespace eddy
