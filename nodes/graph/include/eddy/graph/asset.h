#pragma once
// Assets (Houdini's digital assets, Eddy's subnetworks): a graph file with
// an "asset" section declaring its inputs (which inner inputs each feeds),
// outputs (which inner output each is) and promoted parameters (which inner
// parameters each drives). Loading one registers a node type of that name;
// the cook engine expands each node of it into the asset's nodes (ids
// "node/inner"), so a subnet cooks exactly as its expanded graph does.
// The format: docs/graph-format.md, "Assets".
#include <memory>
#include <nlohmann/json_fwd.hpp>
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

// Collapsing a selection of a graph's nodes into a new asset (Houdini's
// "collapse into subnet", then "create digital asset"):
//  - the selected nodes, their parameters (animations too), positions and
//    the links between them become the asset's contents;
//  - each inner input linked from outside becomes an asset input (named as
//    the inner input, or NODE_INPUT where two would share a name), fed by
//    the same links in the same order;
//  - each inner output linked to outside becomes an asset output (likewise
//    named); a selection that feeds nothing outside gives the outputs of its
//    last nodes (those no selected node takes from);
//  - the parameters in `promote` become the asset's parameters (named as
//    the parameter, or NODE_PARAM), their values in the graph the defaults;
//    an animated one's animation moves onto the asset node.
// The graph with the asset node in the selection's place cooks exactly as
// before (tests/unit/library/asset_test.cpp compares them).
struct CollapseRequest {
  std::vector<std::string> nodes;  // the selection (ids of the graph's nodes)
  std::string type;                // the new node type's name
  std::string category, doc;       // as an asset file gives them ("" : Assets, none)
  std::vector<std::string> promote;  // "node.parameter"
  std::string id;                  // the asset node's id; "": one made from the type's name
};
// The asset file (JSON) for the selection; throws eddy::Error naming what
// cannot be collapsed (an unknown or repeated node, a node outside that
// both takes from and feeds the selection, an inner input taking many links
// from both inside and outside, a taken or malformed type name).
nlohmann::json asset_from_selection(const Graph& g, const Registry& registry, const CollapseRequest& request);
// `g` with the selection replaced by one node of the asset type, which must
// be registered by now (from asset_from_selection's file), wired as the
// selection was.
Graph collapse_selection(const Graph& g, const Registry& registry, const CollapseRequest& request);
// Both, as the editor and Python do it: writes the asset file at `path`
// (never over an existing file), registers its type and collapses `g` in
// place; returns the asset node's id. On an error nothing is left behind
// (no file; `g` as it was).
std::string collapse_into_file(Graph& g, Registry& registry, const CollapseRequest& request, const std::string& path);

}  // namespace eddy
