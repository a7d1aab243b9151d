#pragma once
// The graph model and its JSON format (docs/graph-format.md). Loading
// validates everything and names the offending place, e.g.
//   nodes[3] ("solver").params.iterations: expected an integer >= 1, got -2
#include <array>
#include <string>
#include <vector>

#include "eddy/graph/animation.h"
#include "eddy/graph/registry.h"
#include "eddy/graph/spec.h"

namespace eddy {

constexpr const char* kGraphFormat = "eddy-graph";
// Version 2 adds animated parameters; a graph without any is written as
// version 1, which every reader of version 1 opens unchanged.
constexpr int kGraphVersion = 2;

struct GraphNode {
  std::string id;
  std::string type;
  ParamSet params;  // complete: defaults filled in; an animated one holds its value at the start frame
  AnimationSet anims;  // the animated parameters (and vec3 components)
  std::array<double, 2> position{0, 0};  // editor canvas position
  // Bypassed (Houdini's bypass flag): the node does not cook; each output
  // passes on its first linked input of the same type.
  bool bypass = false;
};

struct Link {
  std::string from_node, from_socket;  // an output
  std::string to_node, to_socket;      // an input
};

// What a graph's timeline may hold: frames within +-kMaxFrame (so that a
// range's length and the frame after its end stay inside int), and a frame
// rate in [kMinFps, kMaxFps] frames per second.
constexpr int kMaxFrame = 1000000000;
constexpr double kMinFps = 1.0, kMaxFps = 10000.0;

// A node id: a non-empty name of letters, digits, '_' or '-'.
bool valid_node_id(const std::string& id);

struct Graph {
  int frame_start = 1, frame_end = 1;
  double fps = 24.0;
  std::vector<GraphNode> nodes;
  std::vector<Link> links;
  std::string source;  // the file it came from, or "" (messages, relative input paths)
  // Python modules defining node types the graph uses (Python nodes, registered
  // when the module is imported): whoever loads the graph imports them first.
  std::vector<std::string> python_modules;

  const GraphNode* find(std::string_view id) const;
  GraphNode* find(std::string_view id);
  int index_of(std::string_view id) const;
  // Links into `node`.`socket`, in link order.
  std::vector<const Link*> links_into(std::string_view node, std::string_view socket) const;
  // Nodes no link starts from: what `eddy run` cooks.
  std::vector<std::string> terminal_nodes() const;
  // Node ids in an order where every node follows its inputs.
  std::vector<std::string> topological_order() const;
};

// What validation covers: the structure always (types, parameters, links,
// cycles, frame range); the node types' own checks (memory, path patterns)
// for the frames about to be cooked.
struct ValidateOptions {
  bool node_checks = true;
  int first = 0, last = -1;  // frames to be cooked; first > last: the graph's range
  // Every required input must be linked; off for a graph still being built
  // (the links made so far are checked, cycles included).
  bool required_inputs = true;
  // The graph is an asset expansion (eddy/graph/asset.h): its node ids hold
  // "/". A graph with asset nodes is validated as given, then expanded.
  bool expanded = false;
};

// Parses and validates graph JSON text; `source` names it in messages.
Graph parse_graph(const std::string& text, const Registry& registry, const std::string& source,
                  const ValidateOptions& options = {});
// Reads, parses and validates a graph file.
Graph load_graph(const std::string& path, const Registry& registry, const ValidateOptions& options = {});
// Validates a graph built in code.
void validate_graph(const Graph& g, const Registry& registry, const ValidateOptions& options = {});

std::string graph_to_json(const Graph& g, const Registry& registry);
// Writes the graph to a temporary name and renames it into place.
void save_graph(const Graph& g, const Registry& registry, const std::string& path);

// Applies "NODE.PARAM=VALUE" (VALUE as in JSON, or bare text for strings and
// "x,y,z" for vectors), validated like the file's own values.
void apply_override(Graph& g, const Registry& registry, const std::string& assignment);

// Sets parameter `param` of node `node` from VALUE text as apply_override
// takes it (an animated value as JSON); `where` starts the messages.
void set_param(Graph& g, const Registry& registry, const std::string& node, const std::string& param,
               const std::string& value, const std::string& where);

// Converts a JSON-text value to a parameter of `spec`; throws eddy::Error
// starting with `where`.
ParamValue parse_param_text(const ParamSpec& spec, const std::string& text, const std::string& where);

// An animated parameter's value (component `component` of a vec3) at time t,
// as the parameter's type holds it (an int rounded, a bool nonzero); throws
// eddy::Error starting with `where` when it is not finite or out of the
// parameter's range there.
double animated_value(const ParamSpec& spec, const Channel& channel, const TimeVars& t, const std::string& where);

}  // namespace eddy

namespace eddy {
// The node catalog (every spec: sockets, parameters with defaults, ranges,
// units, docs, enum items) as JSON, for the editor and `eddy nodes --json`.
std::string catalog_json(const Registry& registry);
}  // namespace eddy
